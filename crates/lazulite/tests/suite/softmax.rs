//! The `Softmax` and `LogSumExp` primitives: values against NumPy (tests/fixtures/softmax.json, written by
//! tools/fixtures/softmax.py) and against a float64 loop for strided layouts and sizes
//! above the thread threshold. Their derivative and batching rules are checked in the
//! rule table (`rules.rs`).

use crate::common;

use common::{array, array_from_json, assert_matches, uniform};
use lazulite::{Array, DType, ErrorKind};

/// Softmax along `axis` of row-major `values` of `shape`, in float64.
fn reference(values: &[f64], shape: &[usize], axis: usize) -> Vec<f64> {
    let n = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let outer: usize = shape[..axis].iter().product();
    let mut out = vec![0.0; values.len()];
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| o * n * inner + k * inner + i;
            let max = (0..n)
                .map(|k| values[at(k)])
                .fold(f64::NEG_INFINITY, f64::max);
            let total: f64 = (0..n).map(|k| (values[at(k)] - max).exp()).sum();
            for k in 0..n {
                out[at(k)] = (values[at(k)] - max).exp() / total;
            }
        }
    }
    out
}

/// Asserts softmax of `x` along `axis` matches [`reference`] within `rtol` (plus a small
/// absolute tolerance for values near 0).
fn assert_close_to_reference(x: &Array, axis: i32, precise: bool, rtol: f64, context: &str) {
    let got = lazulite::softmax(x, axis, precise).unwrap();
    assert_eq!(got.shape(), x.shape(), "{context}: shape");
    assert_eq!(got.dtype(), x.dtype().to_inexact(), "{context}: dtype");
    let axis = axis.rem_euclid(x.ndim() as i32) as usize;
    let want = reference(&x.to_vec::<f64>().unwrap(), x.shape(), axis);
    let got = got.to_vec::<f64>().unwrap();
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-7 + rtol * w.abs() || (g.is_nan() && w.is_nan()),
            "{context}: element {i}: got {g}, expected {w}"
        );
    }
}

fn tolerance(dtype: DType) -> f64 {
    match dtype {
        DType::Float64 => 1e-13,
        DType::Float32 => 2e-6,
        DType::Float16 => 4e-3,
        _ => 3e-2,
    }
}

#[test]
fn matches_numpy_fixture() {
    let fixture = common::load_fixture("softmax");
    for case in fixture["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let x = array_from_json(&case["input"]);
        let axis = case["axis"].as_i64().unwrap() as i32;
        let rtol = tolerance(x.dtype());
        for precise in [false, true] {
            let got = lazulite::softmax(&x, axis, precise).unwrap();
            let context = format!("{name} precise={precise}");
            assert_matches(&got, &case["expected"], rtol, 1e-7, &context);
        }
    }
}

fn cube(dtype: DType) -> Array {
    let values = uniform(3, 4 * 5 * 6, -5.0, 5.0);
    array(&values, &[4, 5, 6]).astype(dtype).unwrap()
}

#[test]
fn every_axis_of_3d_arrays_in_every_float_dtype() {
    for dtype in [
        DType::Float32,
        DType::Float64,
        DType::Float16,
        DType::BFloat16,
    ] {
        let x = cube(dtype);
        for axis in [-3, -2, -1, 0, 1, 2] {
            for precise in [false, true] {
                let context = format!("{dtype:?} axis {axis} precise={precise}");
                assert_close_to_reference(&x, axis, precise, tolerance(dtype), &context);
            }
        }
    }
}

#[test]
fn precise_half_rounds_once() {
    let x = cube(DType::Float16);
    let precise = lazulite::softmax(&x, -1, true).unwrap();
    let wide = lazulite::softmax(&x.astype(DType::Float32).unwrap(), -1, false).unwrap();
    let rounded = wide.astype(DType::Float16).unwrap();
    assert_eq!(precise.dtype(), DType::Float16);
    assert_eq!(
        precise.to_vec::<f32>().unwrap(),
        rounded.to_vec::<f32>().unwrap()
    );
}

#[test]
fn strided_inputs() {
    let x = cube(DType::Float32);
    let transposed = lazulite::transpose(&x, &[2, 0, 1]).unwrap();
    let reversed = lazulite::slice(&x, &[3, 0, 5], &[-5, 5, -7], &[-1, 2, -2]).unwrap();
    let row = array(&uniform(4, 7, -3.0, 3.0), &[1, 7])
        .astype(DType::Float32)
        .unwrap();
    let broadcast = lazulite::broadcast_to(&row, &[3, 7]).unwrap();
    let column = array(&uniform(5, 3, -3.0, 3.0), &[3, 1])
        .astype(DType::Float32)
        .unwrap();
    let broadcast_rows = lazulite::broadcast_to(&column, &[3, 7]).unwrap();
    let cases = [
        ("transposed", transposed),
        ("negative steps", reversed),
        ("broadcast", broadcast),
        ("broadcast along the axis", broadcast_rows),
    ];
    for (layout, x) in cases {
        for axis in 0..x.ndim() as i32 {
            let context = format!("{layout} axis {axis}");
            assert_close_to_reference(&x, axis, false, 2e-6, &context);
        }
    }
}

#[test]
fn above_the_thread_threshold() {
    let values = uniform(6, 600 * 300, -20.0, 20.0);
    for dtype in [DType::Float32, DType::Float64, DType::BFloat16] {
        let x = array(&values, &[600, 300]).astype(dtype).unwrap();
        for axis in [-1, 0] {
            let context = format!("{dtype:?} 600x300 axis {axis}");
            assert_close_to_reference(&x, axis, false, tolerance(dtype), &context);
        }
    }
    // One long row (longer than the kernel's stack buffer) and many short ones.
    let long = array(&values, &[2, 90000]).astype(DType::Float32).unwrap();
    assert_close_to_reference(&long, -1, false, 1e-5, "2x90000");
    let short = array(&values, &[60000, 3]).astype(DType::Float32).unwrap();
    assert_close_to_reference(&short, -1, false, 2e-6, "60000x3");
}

#[test]
fn integers_compute_in_float32_and_empty_arrays_keep_their_shape() {
    let a = Array::from_slice(&[1i32, 2, 3, 3], &[2, 2]).unwrap();
    let s = lazulite::softmax(&a, -1, false).unwrap();
    assert_eq!(s.dtype(), DType::Float32);
    let e = 1.0 / (1.0 + 1f32.exp());
    let got = s.to_vec::<f32>().unwrap();
    for (g, w) in got.iter().zip([e, 1.0 - e, 0.5, 0.5]) {
        assert!((g - w).abs() < 1e-6, "{got:?}");
    }
    for shape in [[0usize, 3], [3, 0]] {
        let empty = lazulite::zeros(&shape, DType::Float32).unwrap();
        for axis in [0, 1] {
            let s = lazulite::softmax(&empty, axis, false).unwrap();
            assert_eq!(s.shape(), &shape);
            assert_eq!(s.to_vec::<f32>().unwrap(), Vec::<f32>::new());
        }
    }
    let scalar = Array::from_slice(&[2.5f32], &[]).unwrap();
    let s = lazulite::softmax(&scalar, lazulite::Axes::All, false).unwrap();
    assert_eq!(s.to_vec::<f32>().unwrap(), vec![1.0]);
}

#[test]
fn invalid_axis_is_an_axis_error() {
    let a = cube(DType::Float32);
    let before = a.to_vec::<f32>().unwrap();
    for axis in [3, -4] {
        let err = lazulite::softmax(&a, axis, false).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Axis);
        assert!(err.to_string().contains("[softmax]"), "{err}");
    }
    assert_eq!(a.to_vec::<f32>().unwrap(), before);
}

/// Logsumexp along `axis` of row-major `values` of `shape`, in float64, one value per row
/// in the row-major order of the other dimensions.
fn logsumexp_reference(values: &[f64], shape: &[usize], axis: usize) -> Vec<f64> {
    let n = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let outer: usize = shape[..axis].iter().product();
    let mut out = Vec::with_capacity(outer * inner);
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| o * n * inner + k * inner + i;
            let max = (0..n)
                .map(|k| values[at(k)])
                .fold(f64::NEG_INFINITY, f64::max);
            let shift = max.clamp(f64::MIN, f64::MAX);
            let total: f64 = (0..n).map(|k| (values[at(k)] - shift).exp()).sum();
            out.push(total.ln() + shift);
        }
    }
    out
}

fn assert_logsumexp_close(x: &Array, axis: i32, rtol: f64, context: &str) {
    let resolved = axis.rem_euclid(x.ndim() as i32) as usize;
    let want = logsumexp_reference(&x.to_vec::<f64>().unwrap(), x.shape(), resolved);
    for keepdims in [false, true] {
        let got = lazulite::logsumexp(x, axis, keepdims).unwrap();
        let mut shape = x.shape().to_vec();
        if keepdims {
            shape[resolved] = 1;
        } else {
            shape.remove(resolved);
        }
        assert_eq!(got.shape(), &shape[..], "{context}: shape");
        assert_eq!(got.dtype(), x.dtype().to_inexact(), "{context}: dtype");
        let got = got.to_vec::<f64>().unwrap();
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(
                g == w || (g - w).abs() <= rtol * (1.0 + w.abs()) || (g.is_nan() && w.is_nan()),
                "{context}: element {i}: got {g}, expected {w}"
            );
        }
    }
}

#[test]
fn logsumexp_every_axis_layout_and_dtype() {
    for dtype in [
        DType::Float32,
        DType::Float64,
        DType::Float16,
        DType::BFloat16,
    ] {
        let x = cube(dtype);
        for axis in [-3, -2, -1, 0, 1, 2] {
            let context = format!("logsumexp {dtype:?} axis {axis}");
            assert_logsumexp_close(&x, axis, tolerance(dtype), &context);
        }
    }
    let x = cube(DType::Float32);
    let transposed = lazulite::transpose(&x, &[2, 0, 1]).unwrap();
    let reversed = lazulite::slice(&x, &[3, 0, 5], &[-5, 5, -7], &[-1, 2, -2]).unwrap();
    let row = array(&uniform(4, 7, -3.0, 3.0), &[1, 7])
        .astype(DType::Float32)
        .unwrap();
    let broadcast = lazulite::broadcast_to(&row, &[3, 7]).unwrap();
    for (layout, x) in [
        ("transposed", transposed),
        ("negative steps", reversed),
        ("broadcast", broadcast),
    ] {
        for axis in 0..x.ndim() as i32 {
            assert_logsumexp_close(&x, axis, 2e-6, &format!("logsumexp {layout} axis {axis}"));
        }
    }
    let big = array(&uniform(6, 600 * 300, -20.0, 20.0), &[600, 300]);
    for dtype in [DType::Float32, DType::Float64] {
        let x = big.astype(dtype).unwrap();
        for axis in [0, -1] {
            let context = format!("logsumexp {dtype:?} 600x300 axis {axis}");
            assert_logsumexp_close(&x, axis, tolerance(dtype), &context);
        }
    }
}

#[test]
fn logsumexp_special_rows() {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let rows = [
        [-inf, 0.0, 1.0, -inf],
        [-inf, -inf, -inf, -inf],
        [1000.0, 1001.0, 999.0, 1000.5],
        [-1000.0, -1001.0, -999.0, -1000.5],
        [0.0, nan, 1.0, 2.0],
        [0.0, inf, 1.0, 2.0],
        [3e38, 3e38, 0.0, -3e38],
    ];
    let x = array(&rows.concat(), &[7, 4]);
    for dtype in [DType::Float32, DType::Float64] {
        let x = x.astype(dtype).unwrap();
        assert_logsumexp_close(&x, -1, tolerance(dtype), &format!("{dtype:?} special rows"));
        let got = lazulite::logsumexp(&x, -1, false)
            .unwrap()
            .to_vec::<f64>()
            .unwrap();
        assert_eq!(got[1], -inf);
        assert!(got[4].is_nan());
        assert_eq!(got[5], inf);
    }
}
