//! Window functions and `convolve` against NumPy (fixtures from tools/fixtures/signal.py),
//! on strided inputs, every floating dtype, and their errors (`convolve`'s transform rules
//! are checked in the rule table, `rules.rs`).

use crate::common;

use common::{array_from_json, assert_matches, load_fixture};
use lazulite::{
    bartlett, blackman, convolve, hamming, hanning, slice, Array, DType, ErrorKind, Result,
};

#[test]
fn windows_match_numpy() {
    let fixture = load_fixture("signal");
    for (case, c) in fixture["windows"].as_object().unwrap() {
        let m = c["m"].as_i64().unwrap();
        let w = match c["name"].as_str().unwrap() {
            "bartlett" => bartlett(m),
            "blackman" => blackman(m),
            "hamming" => hamming(m),
            _ => hanning(m),
        }
        .unwrap();
        assert_matches(&w, &c["expected"], 0.0, 1e-6, case);
    }
}

#[test]
fn convolve_matches_numpy() {
    let fixture = load_fixture("signal");
    for (case, c) in fixture["convolve"].as_object().unwrap() {
        let a = array_from_json(&c["a"]);
        let v = array_from_json(&c["v"]);
        let out = convolve(&a, &v, c["mode"].as_str().unwrap()).unwrap();
        assert_matches(&out, &c["expected"], 1e-5, 1e-5, case);
    }
}

fn numbers(n: usize) -> Array {
    let values: Vec<f32> = (0..n)
        .map(|i| (i as f32 * 0.7).sin() + 0.1 * i as f32)
        .collect();
    Array::from_slice(&values, &[n]).unwrap()
}

#[test]
fn convolve_reads_strided_and_broadcast_inputs() {
    let a = numbers(12);
    let v = numbers(3);
    let reversed = slice(&a, &[11], &[-13], &[-2]).unwrap();
    let copy = Array::from_slice(&reversed.to_vec::<f32>().unwrap(), &[6]).unwrap();
    for mode in ["full", "same", "valid"] {
        assert_eq!(
            convolve(&reversed, &v, mode)
                .unwrap()
                .to_vec::<f32>()
                .unwrap(),
            convolve(&copy, &v, mode).unwrap().to_vec::<f32>().unwrap(),
            "{mode}"
        );
    }
    let ones = lazulite::broadcast_to(&Array::scalar(1.0f32), &[4]).unwrap();
    assert_eq!(
        convolve(&numbers(5), &ones, "valid")
            .unwrap()
            .to_vec::<f32>()
            .unwrap(),
        convolve(
            &numbers(5),
            &lazulite::ones(&[4], DType::Float32).unwrap(),
            "valid"
        )
        .unwrap()
        .to_vec::<f32>()
        .unwrap()
    );
}

#[test]
fn convolve_keeps_each_floating_dtype_and_promotes_mixed_ones() {
    for dtype in [
        DType::Float16,
        DType::BFloat16,
        DType::Float32,
        DType::Float64,
    ] {
        let a = numbers(4).astype(dtype).unwrap();
        let out = convolve(&a, &a, "full").unwrap();
        assert_eq!(out.dtype(), dtype);
        assert_eq!(out.shape(), &[7]);
    }
    let half = numbers(4).astype(DType::Float16).unwrap();
    assert_eq!(
        convolve(&half, &numbers(2), "same").unwrap().dtype(),
        DType::Float32
    );
}

#[test]
fn convolve_errors() {
    let v = numbers(2);
    let cases: Vec<(Result<Array>, &str)> = vec![
        (convolve(&v, &v, "foo"), "[convolve] Invalid mode."),
        (
            convolve(
                &lazulite::zeros(&[2, 2], DType::Float32).unwrap(),
                &v,
                "full",
            ),
            "[convolve] Inputs must be 1D.",
        ),
        (
            convolve(&v, &Array::scalar(1.0f32), "full"),
            "[convolve] Inputs must be 1D.",
        ),
        (
            convolve(&lazulite::zeros(&[0], DType::Float32).unwrap(), &v, "full"),
            "[convolve] Inputs cannot be empty.",
        ),
        (
            convolve(
                &Array::from_slice(&[1i32, 2], &[2]).unwrap(),
                &v.astype(DType::Int32).unwrap(),
                "full",
            ),
            "[conv] Invalid input array with type int32.",
        ),
    ];
    for (result, message) in cases {
        let err = result.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Value);
        assert!(err.message().starts_with(message), "{}", err.message());
    }
    assert_eq!(
        v.to_vec::<f32>().unwrap(),
        numbers(2).to_vec::<f32>().unwrap()
    );
}
