//! MLX's floating-point quantization modes against real MLX (tools/fixtures/quantize_fp.py):
//! packed words, uint8 scales and dequantized values bit for bit, products against
//! float64 and errors, and the rounding of the quantized-input product `qqmm`
//! (tools/fixtures/qqmm.py) bit for bit (the derivative and batching rules are in the rule
//! table, `rules.rs`).
use crate::common;

use common::{array_from_json, assert_matches, load_fixture};
use lazulite::{
    dequantize, eye, gather_qmm, matmul, matrix_transpose, multiply, qqmm, quantize,
    quantized_matmul, random, Array, DType, ErrorKind, Quantization, QuantizationMode,
};
use serde_json::Value;

const MODES: [QuantizationMode; 3] = [
    QuantizationMode::Mxfp4,
    QuantizationMode::Mxfp8,
    QuantizationMode::Nvfp4,
];

fn mode_of(case: &Value) -> Quantization {
    let mode: QuantizationMode = case["mode"].as_str().unwrap().parse().unwrap();
    Quantization::new(mode)
}

fn words(v: &Value) -> Vec<u64> {
    v["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

fn close(a: &Array, b: &Array, tol: f64) -> bool {
    lazulite::allclose(a, b, tol, tol, false)
        .unwrap()
        .item::<bool>()
        .unwrap()
}

#[test]
fn quantize_matches_mlx_bit_for_bit() {
    let fixture = load_fixture("quantize_fp");
    for case in fixture["quantize"].as_array().unwrap() {
        let q = mode_of(case);
        let w = array_from_json(&case["w"]);
        let global = case.get("global_scale").map(array_from_json);
        let context = format!("{} {:?} global={}", w.dtype(), q.mode, global.is_some());
        let (w_q, scales, biases) = quantize(&w, q, global.as_ref()).unwrap();
        assert!(biases.is_none(), "{context}");
        let got: Vec<u64> = w_q
            .to_vec::<u32>()
            .unwrap()
            .into_iter()
            .map(u64::from)
            .collect();
        assert_eq!(got, words(&case["w_q"]), "{context}: words");
        let got: Vec<u64> = scales
            .to_vec::<u8>()
            .unwrap()
            .into_iter()
            .map(u64::from)
            .collect();
        assert_eq!(got, words(&case["scales"]), "{context}: scales");
        let back = dequantize(&w_q, &scales, None, q, global.as_ref(), None).unwrap();
        assert_matches(&back, &case["dequantized_default"], 0.0, 0.0, &context);
        if global.is_some() {
            continue;
        }
        for (name, dtype) in [
            ("float32", DType::Float32),
            ("float16", DType::Float16),
            ("bfloat16", DType::BFloat16),
        ] {
            let back = dequantize(&w_q, &scales, None, q, None, Some(dtype)).unwrap();
            let key = format!("dequantized_{name}");
            assert_matches(&back, &case[key.as_str()], 0.0, 0.0, &context);
        }
    }
}

#[test]
fn quantized_products_match_float64() {
    let fixture = load_fixture("quantize_fp");
    for (i, case) in fixture["quantized_matmul"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let q = mode_of(case);
        let transpose = case["transpose"].as_bool().unwrap();
        let x = array_from_json(&case["x"]);
        let (w_q, s) = (
            array_from_json(&case["w_q"]),
            array_from_json(&case["scales"]),
        );
        let out = quantized_matmul(&x, &w_q, &s, None, transpose, q).unwrap();
        let context = format!("case {i}: {:?} transpose={transpose}", q.mode);
        // bfloat16 results round to 8 bits.
        let (rtol, atol) = match x.dtype() {
            DType::Float32 => (1e-5, 1e-3),
            _ => (1e-2, 8.0),
        };
        assert_matches(&out, &case["expected"], rtol, atol, &context);
    }
    for case in fixture["gather_qmm"].as_array().unwrap() {
        let q = mode_of(case);
        let rhs = array_from_json(&case["rhs"]);
        let out = gather_qmm(
            &array_from_json(&case["x"]),
            &array_from_json(&case["w_q"]),
            &array_from_json(&case["scales"]),
            None,
            None,
            Some(&rhs),
            true,
            q,
        )
        .unwrap();
        assert_matches(&out, &case["mlx"], 1e-5, 1e-3, "gather_qmm");
    }
}

#[test]
fn products_take_every_path() {
    // Few rows (fused), many rows (tiles), not transposed, batched and float64, each
    // against the dequantized matrix.
    let w = random::normal(&[72, 256], DType::Float32, None, None, None).unwrap();
    for q in MODES.map(Quantization::new) {
        let (w_q, s, _) = quantize(&w, q, None).unwrap();
        let dense = dequantize(&w_q, &s, None, q, None, Some(DType::Float32)).unwrap();
        for m in [1, 3, 8, 9, 130] {
            let x = random::normal(&[m, 256], DType::Float32, None, None, None).unwrap();
            let out = quantized_matmul(&x, &w_q, &s, None, true, q).unwrap();
            let expected = matmul(&x, &matrix_transpose(&dense).unwrap()).unwrap();
            assert!(close(&out, &expected, 1e-4), "{:?} m={m}", q.mode);
            let x2 = random::normal(&[m, 72], DType::Float32, None, None, None).unwrap();
            let out = quantized_matmul(&x2, &w_q, &s, None, false, q).unwrap();
            assert!(close(&out, &matmul(&x2, &dense).unwrap(), 1e-4));
            let x64 = x.astype(DType::Float64).unwrap();
            let out = quantized_matmul(&x64, &w_q, &s, None, true, q).unwrap();
            assert_eq!(out.dtype(), DType::Float64);
            assert!(close(&out.astype(DType::Float32).unwrap(), &expected, 1e-4));
        }
        let stack = random::normal(&[2, 16, 64], DType::Float32, None, None, None).unwrap();
        let (sq, ss, _) = quantize(&stack, q, None).unwrap();
        let dense = dequantize(&sq, &ss, None, q, None, Some(DType::Float32)).unwrap();
        let x = random::normal(&[3, 64], DType::Float32, None, None, None).unwrap();
        let out = quantized_matmul(&x, &sq, &ss, None, true, q).unwrap();
        assert_eq!(out.shape(), &[2, 3, 16]);
        let expected = matmul(&x, &lazulite::swapaxes(&dense, -1, -2).unwrap()).unwrap();
        assert!(close(&out, &expected, 1e-4));
    }
}

/// nvfp4's result is linear in the global scale. (The derivative and batching rules of
/// every mode are checked in the rule table, `rules.rs`.)
#[test]
fn nvfp4_gradient_of_the_global_scale() {
    let q = Quantization::new(QuantizationMode::Nvfp4);
    let w = random::normal(&[4, 32], DType::Float32, None, None, None).unwrap();
    let g = Array::scalar(2.5f32);
    let (w_q, s, _) = quantize(&w, q, Some(&g)).unwrap();
    let f = |a: &[Array]| {
        let out = dequantize(&w_q, &s, None, q, Some(&a[0]), Some(DType::Float64))?;
        lazulite::sum(&out, lazulite::Axes::All, false)
    };
    let grad = lazulite::grad(|a: &Array| f(std::slice::from_ref(a)))(&g).unwrap();
    let unit = f(&[Array::scalar(1.0f32)]).unwrap();
    assert!((grad.item::<f32>().unwrap() as f64 - unit.item::<f64>().unwrap()).abs() < 1e-3);
}

#[test]
fn errors_name_the_mode() {
    let w = random::normal(&[4, 64], DType::Float32, None, None, None).unwrap();
    let mx = Quantization::new(QuantizationMode::Mxfp4);
    let message = |e: lazulite::Error| (e.kind(), e.message().to_string());
    let (k, m) = message(
        quantize(
            &w,
            Quantization {
                group_size: 64,
                ..mx
            },
            None,
        )
        .unwrap_err(),
    );
    assert_eq!(k, ErrorKind::Value);
    assert_eq!(
        m,
        "[quantize] mxfp4 quantization requires group size 32 but got 64."
    );
    let (_, m) = message(quantize(&w, mx, Some(&Array::scalar(1.0f32))).unwrap_err());
    assert!(m.contains("only supported for 'nvfp4'"), "{m}");
    let nv = Quantization::new(QuantizationMode::Nvfp4);
    let half = Array::scalar(1.0f32).astype(DType::Float16).unwrap();
    let (_, m) = message(quantize(&w, nv, Some(&half)).unwrap_err());
    assert!(m.contains("must have dtype float32"), "{m}");
    let (w_q, s, _) = quantize(&w, mx, None).unwrap();
    let (_, m) = message(dequantize(&w_q, &s, Some(&s), mx, None, None).unwrap_err());
    assert_eq!(
        m,
        "[dequantize] Biases must be null for quantization mode 'mxfp4'."
    );
    let float_scales = s.astype(DType::Float32).unwrap();
    let (_, m) = message(dequantize(&w_q, &float_scales, None, mx, None, None).unwrap_err());
    assert!(m.contains("Scale type must be uint8"), "{m}");
    let x = random::normal(&[2, 64], DType::Float32, None, None, None).unwrap();
    let affine = Quantization::default();
    let (_, m) = message(quantized_matmul(&x, &w_q, &s, None, true, affine).unwrap_err());
    assert!(m.contains("Biases must be provided"), "{m}");
    let ints = x.astype(DType::Int32).unwrap();
    let (_, m) = message(quantized_matmul(&ints, &w_q, &s, None, true, mx).unwrap_err());
    assert!(m.contains("x.dtype() == int32"), "{m}");
    assert!("fp4".parse::<QuantizationMode>().is_err());
    assert_eq!(
        QuantizationMode::from_index(3),
        Some(QuantizationMode::Nvfp4)
    );
}

#[test]
fn qqmm_rounds_x_as_mlx_bit_for_bit() {
    // MLX multiplied one row by a packed `c * I`, which every mode stores exactly, so its
    // result is `c` times its rounding of the row.
    let fixture = load_fixture("qqmm");
    for case in fixture["rounding"].as_array().unwrap() {
        let q = mode_of(case);
        let x = array_from_json(&case["x"]);
        let k = x.shape()[1];
        let c = case["c"].as_f64().unwrap();
        let scaled = multiply(eye(k, None, 0, DType::Float32).unwrap(), c).unwrap();
        let (eye_q, eye_s, _) = quantize(&scaled.astype(x.dtype()).unwrap(), q, None).unwrap();
        let out = qqmm(&x, &eye_q, Some(&eye_s), q, None, None).unwrap();
        let context = format!("{:?} {}", q.mode, x.dtype());
        assert_eq!(out.dtype(), x.dtype(), "{context}");
        assert_matches(&out, &case["mlx"], 0.0, 0.0, &context);
    }
    for case in fixture["products"].as_array().unwrap() {
        let q = mode_of(case);
        let x = array_from_json(&case["x"]);
        if x.ndim() != 2 || x.dtype() != DType::Float32 {
            continue;
        }
        let (w_q, s) = (
            array_from_json(&case["w_q"]),
            array_from_json(&case["scales"]),
        );
        let out = qqmm(&x, &w_q, Some(&s), q, None, None).unwrap();
        assert_matches(&out, &case["mlx"], 1e-5, 1e-5, &format!("{:?}", q.mode));
    }
}
