//! Affine quantization against real MLX (tools/fixtures/quantize.py): packed words,
//! scales, biases and dequantized values bit for bit; quantized products against float64.
use crate::common;

use common::{array_from_json, assert_matches, load_fixture};
use lazulite::{astype, matmul, matrix_transpose, Array, DType, ErrorKind, Quantization};
use serde_json::Value;

/// `lazulite::quantize` in affine mode, whose biases are always there.
fn quantize(w: &Array, gs: i32, bits: i32) -> lazulite::Result<(Array, Array, Array)> {
    let (w_q, scales, biases) = lazulite::quantize(w, Quantization::affine(gs, bits), None)?;
    Ok((
        w_q,
        scales,
        biases.expect("affine quantization returns biases"),
    ))
}

/// `lazulite::dequantize` in affine mode.
fn dequantize(
    w: &Array,
    scales: &Array,
    biases: &Array,
    gs: i32,
    bits: i32,
    dtype: Option<DType>,
) -> lazulite::Result<Array> {
    let q = Quantization::affine(gs, bits);
    lazulite::dequantize(w, scales, Some(biases), q, None, dtype)
}

/// `lazulite::quantized_matmul` in affine mode.
fn quantized_matmul(
    x: &Array,
    w: &Array,
    scales: &Array,
    biases: &Array,
    transpose: bool,
    gs: i32,
    bits: i32,
) -> lazulite::Result<Array> {
    let q = Quantization::affine(gs, bits);
    lazulite::quantized_matmul(x, w, scales, Some(biases), transpose, q)
}

fn int(v: &Value) -> i32 {
    v.as_i64().expect("integer") as i32
}

#[test]
fn quantize_matches_mlx_bit_for_bit() {
    let fixture = load_fixture("quantize");
    for case in fixture["quantize"].as_array().unwrap() {
        let (gs, bits) = (int(&case["group_size"]), int(&case["bits"]));
        let w = array_from_json(&case["w"]);
        let context = format!("{} gs={gs} bits={bits}", w.dtype());
        let (w_q, scales, biases) = quantize(&w, gs, bits).unwrap();
        let expected: Vec<u32> = case["w_q"]["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as u32)
            .collect();
        assert_eq!(w_q.dtype(), DType::UInt32, "{context}");
        assert_eq!(w_q.to_vec::<u32>().unwrap(), expected, "{context}: words");
        assert_matches(&scales, &case["scales"], 0.0, 0.0, &context);
        assert_matches(&biases, &case["biases"], 0.0, 0.0, &context);
        let back = dequantize(&w_q, &scales, &biases, gs, bits, None).unwrap();
        assert_matches(&back, &case["dequantized"], 0.0, 0.0, &context);
    }
}

#[test]
fn quantize_strided_inputs() {
    let fixture = load_fixture("quantize");
    let case = &fixture["quantize"][10];
    let w = array_from_json(&case["w"]);
    let (gs, bits) = (int(&case["group_size"]), int(&case["bits"]));
    // The same matrix reached through a transposed copy, and reversed twice.
    let t = matrix_transpose(&lazulite::contiguous(&matrix_transpose(&w).unwrap(), false).unwrap())
        .unwrap();
    let reversed = lazulite::index(&w, &lazulite::idx![.., ..;-1]).unwrap();
    let twice = lazulite::index(&reversed, &lazulite::idx![.., ..;-1]).unwrap();
    for view in [t, twice] {
        let (w_q, scales, _) = quantize(&view, gs, bits).unwrap();
        assert_matches(&scales, &case["scales"], 0.0, 0.0, "strided scales");
        assert_eq!(
            w_q.to_vec::<u32>().unwrap(),
            quantize(&w, gs, bits).unwrap().0.to_vec::<u32>().unwrap()
        );
    }
}

#[test]
fn dequantize_with_dtype_casts_after_computing() {
    let fixture = load_fixture("quantize");
    let case = &fixture["dequantize_dtype"];
    let (w_q, s, b) = (
        array_from_json(&case["w_q"]),
        array_from_json(&case["scales"]),
        array_from_json(&case["biases"]),
    );
    for (name, dtype) in [("float16", DType::Float16), ("bfloat16", DType::BFloat16)] {
        let out = dequantize(&w_q, &s, &b, 64, 4, Some(dtype)).unwrap();
        assert_matches(&out, &case[name], 0.0, 0.0, name);
    }
    // Mixed scale and bias dtypes promote.
    let half = astype(&s, DType::Float16).unwrap();
    let out = dequantize(&w_q, &half, &b, 64, 4, None).unwrap();
    assert_eq!(out.dtype(), DType::Float32);
}

#[test]
fn quantized_matmul_matches_float64_product() {
    let fixture = load_fixture("quantize");
    for (i, case) in fixture["quantized_matmul"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let (gs, bits) = (int(&case["group_size"]), int(&case["bits"]));
        let transpose = case["transpose"].as_bool().unwrap();
        let x = array_from_json(&case["x"]);
        let w_q = array_from_json(&case["w_q"]);
        let (s, b) = (
            array_from_json(&case["scales"]),
            array_from_json(&case["biases"]),
        );
        let out = quantized_matmul(&x, &w_q, &s, &b, transpose, gs, bits).unwrap();
        // The float64 reference multiplies MLX's dequantized matrix, rounded to the dtype;
        // the kernel uses the unrounded float32 values, so half types differ by their
        // rounding of W, accumulated over K = 256.
        let (rtol, atol) = match x.dtype() {
            DType::Float32 => (1e-5, 1e-4),
            DType::Float16 => (1e-2, 0.1),
            _ => (3e-2, 0.8),
        };
        let context = format!("case {i}: gs={gs} bits={bits} transpose={transpose}");
        assert_matches(&out, &case["expected"], rtol, atol, &context);
        // MLX's own result differs only by its summation order.
        assert_matches(&out, &case["mlx"], rtol * 10.0, atol * 10.0, &context);
    }
}

#[test]
fn quantized_matmul_many_rows_and_views() {
    // Enough rows for the tiled gemm path, x transposed, and a 1x4096 vector.
    let w = lazulite::random::normal(&[200, 384], DType::Float32, None, None, None).unwrap();
    let (w_q, s, b) = quantize(&w, 128, 4).unwrap();
    let dense = dequantize(&w_q, &s, &b, 128, 4, None).unwrap();
    let xt = lazulite::random::normal(&[384, 40], DType::Float32, None, None, None).unwrap();
    let x = matrix_transpose(&xt).unwrap();
    let out = quantized_matmul(&x, &w_q, &s, &b, true, 128, 4).unwrap();
    let expected = matmul(&x, &matrix_transpose(&dense).unwrap()).unwrap();
    assert!(lazulite::allclose(&out, &expected, 1e-4, 1e-4, false)
        .unwrap()
        .item::<bool>()
        .unwrap());
    // Not transposed: W is (200, 384) as stored, x has 200 columns.
    let x2 = lazulite::random::normal(&[30, 200], DType::Float32, None, None, None).unwrap();
    let out = quantized_matmul(&x2, &w_q, &s, &b, false, 128, 4).unwrap();
    let expected = matmul(&x2, &dense).unwrap();
    assert!(lazulite::allclose(&out, &expected, 1e-4, 1e-4, false)
        .unwrap()
        .item::<bool>()
        .unwrap());
}

#[test]
fn quantized_matmul_broadcasts_batches() {
    let w = lazulite::random::normal(&[2, 8, 64], DType::Float32, None, None, None).unwrap();
    let (w_q, s, b) = quantize(&w, 64, 8).unwrap();
    let dense = dequantize(&w_q, &s, &b, 64, 8, None).unwrap();
    // A 2-D x broadcasts against the batch of matrices (MLX computes only the first).
    let x = lazulite::random::normal(&[3, 64], DType::Float32, None, None, None).unwrap();
    let out = quantized_matmul(&x, &w_q, &s, &b, true, 64, 8).unwrap();
    assert_eq!(out.shape(), &[2, 3, 8]);
    let expected = matmul(&x, &matrix_transpose(&dense).unwrap()).unwrap();
    assert!(lazulite::allclose(&out, &expected, 1e-4, 1e-4, false)
        .unwrap()
        .item::<bool>()
        .unwrap());
    let v = lazulite::random::normal(&[64], DType::Float32, None, None, None).unwrap();
    assert_eq!(
        quantized_matmul(&v, &w_q, &s, &b, true, 64, 8)
            .unwrap()
            .shape(),
        &[2, 8]
    );
}

#[test]
fn quantized_matmul_dtypes_and_empty() {
    let w = lazulite::random::normal(&[4, 64], DType::Float32, None, None, None).unwrap();
    let (w_q, s, b) = quantize(&w, 64, 4).unwrap();
    let ints = lazulite::ones(&[2, 64], DType::Int32).unwrap();
    assert_eq!(
        quantized_matmul(&ints, &w_q, &s, &b, true, 64, 4)
            .unwrap()
            .dtype(),
        DType::Float32
    );
    let half = lazulite::ones(&[2, 64], DType::Float16).unwrap();
    let s16 = astype(&s, DType::Float16).unwrap();
    let b16 = astype(&b, DType::Float16).unwrap();
    let out = quantized_matmul(&half, &w_q, &s16, &b16, true, 64, 4).unwrap();
    assert_eq!(out.dtype(), DType::Float16);
    let out = quantized_matmul(&half, &w_q, &s, &b, true, 64, 4).unwrap();
    assert_eq!(out.dtype(), DType::Float32);
    let empty = lazulite::zeros(&[0, 64], DType::Float32).unwrap();
    let out = quantized_matmul(&empty, &w_q, &s, &b, true, 64, 4).unwrap();
    assert_eq!(out.shape(), &[0, 4]);
    out.eval().unwrap();
    let none = lazulite::zeros(&[0, 64], DType::Float32).unwrap();
    let (q0, s0, b0) = quantize(&none, 64, 4).unwrap();
    assert_eq!(q0.shape(), &[0, 8]);
    assert_eq!(
        dequantize(&q0, &s0, &b0, 64, 4, None).unwrap().shape(),
        &[0, 64]
    );
    // No columns: the product over an empty inner dimension is zeros.
    let thin = lazulite::zeros(&[4, 0], DType::Float32).unwrap();
    let (q, s, b) = quantize(&thin, 64, 4).unwrap();
    let x = lazulite::ones(&[3, 0], DType::Float32).unwrap();
    let out = quantized_matmul(&x, &q, &s, &b, true, 64, 4).unwrap();
    assert_eq!(out.to_vec::<f32>().unwrap(), vec![0.0; 12]);
}

fn message(e: lazulite::Error) -> (ErrorKind, String) {
    (e.kind(), e.message().to_string())
}

#[test]
fn errors_name_the_op_and_values() {
    let w = lazulite::zeros(&[4, 64], DType::Float32).unwrap();
    let (k, m) = message(quantize(&w, 16, 4).unwrap_err());
    assert_eq!(k, ErrorKind::Value);
    assert_eq!(
        m,
        "[quantize] The requested group size 16 is not supported. The supported group sizes \
         are 32, 64, and 128."
    );
    let (_, m) = message(quantize(&w, 64, 7).unwrap_err());
    assert!(m.contains("number of bits 7 is not supported"), "{m}");
    let odd = lazulite::zeros(&[4, 60], DType::Float32).unwrap();
    let (_, m) = message(quantize(&odd, 64, 4).unwrap_err());
    assert_eq!(
        m,
        "[quantize] The last dimension of the matrix needs to be divisible by the \
         quantization group size 64. However the provided  matrix has shape (4,60)"
    );
    let vector = lazulite::zeros(&[64], DType::Float32).unwrap();
    assert!(message(quantize(&vector, 64, 4).unwrap_err())
        .1
        .contains("at least 2 dimension but it has only 1"));
    let ints = lazulite::zeros(&[4, 64], DType::Int32).unwrap();
    assert!(message(quantize(&ints, 64, 4).unwrap_err())
        .1
        .contains("but w has type int32"));

    let (w_q, s, b) = quantize(&w, 64, 4).unwrap();
    let (_, m) = message(dequantize(&w_q, &s, &b, 32, 4, None).unwrap_err());
    assert_eq!(
        m,
        "[dequantize] Shape of scales and biases does not match the matrix given the \
         quantization parameters. Provided matrix of shape (4,8) and scales/biases of shape \
         (4,1) with group_size=32 and bits=4."
    );
    let (_, m) = message(dequantize(&s, &s, &b, 64, 4, None).unwrap_err());
    assert_eq!(m, "[dequantize] The matrix should be given as a uint32");
    let ints = astype(&s, DType::Int32).unwrap();
    assert!(
        message(dequantize(&w_q, &ints, &ints, 64, 4, None).unwrap_err())
            .1
            .contains("scales.dtype() == int32")
    );
    assert!(
        message(dequantize(&w_q, &s, &b, 64, 4, Some(DType::Int32)).unwrap_err())
            .1
            .contains("output dtype == int32")
    );

    let x = lazulite::ones(&[3, 32], DType::Float32).unwrap();
    let (_, m) = message(quantized_matmul(&x, &w_q, &s, &b, true, 64, 4).unwrap_err());
    assert_eq!(
        m,
        "[quantized_matmul] Last dimension of first input with shape (..., 32) does not match \
         the expanded quantized matrix (64, 4) computed from shape (4,8) with group_size=64, \
         bits=4 and transpose=true"
    );
    let (_, m) = message(quantized_matmul(&x, &s, &s, &b, true, 64, 4).unwrap_err());
    assert_eq!(
        m,
        "[quantized_matmul] The weight matrix should be uint32 but received float32"
    );
    let (_, m) = message(quantized_matmul(&x, &w_q, &s, &b, true, 64, 8).unwrap_err());
    assert!(
        m.contains("incompatible based on bits and group_size"),
        "{m}"
    );
    let short = lazulite::zeros(&[2, 1], DType::Float32).unwrap();
    let (_, m) = message(quantized_matmul(&x, &w_q, &s, &short, true, 64, 4).unwrap_err());
    assert!(
        m.contains("Scales and biases should have the same shape"),
        "{m}"
    );
    let scalar = Array::scalar(1.0f32);
    assert_eq!(
        quantized_matmul(&scalar, &w_q, &s, &b, true, 64, 4)
            .unwrap_err()
            .kind(),
        ErrorKind::Value
    );
    // Inputs are intact after the errors.
    assert_eq!(w_q.shape(), &[4, 8]);
}

#[test]
fn quantized_matmul_few_rows_every_packing() {
    // The decode-step kernel: every bit width and group size it takes, 1 to 8 rows of x,
    // scales in each float dtype, depths with and without whole 8-word chunks, against
    // the dequantized product.
    for (bits, gs) in [2i32, 4, 8]
        .into_iter()
        .flat_map(|b| [(b, 32i32), (b, 64), (b, 128)])
    {
        for k in [128usize, 96, 384] {
            if k % gs as usize != 0 {
                continue;
            }
            let w = lazulite::random::normal(&[24, k], DType::Float32, None, None, None).unwrap();
            for dtype in [DType::Float32, DType::BFloat16, DType::Float16] {
                let w = astype(&w, dtype).unwrap();
                let (w_q, s, b) = quantize(&w, gs, bits).unwrap();
                // W as the kernel sees it: levels times float32 scales plus biases.
                let (s32, b32) = (
                    astype(&s, DType::Float32).unwrap(),
                    astype(&b, DType::Float32).unwrap(),
                );
                let dense = dequantize(&w_q, &s32, &b32, gs, bits, None).unwrap();
                for m in [1, 2, 3, 5, 8] {
                    let x = lazulite::random::normal(&[m, k], DType::Float32, None, None, None)
                        .unwrap();
                    let x = astype(&x, dtype).unwrap();
                    let out = quantized_matmul(&x, &w_q, &s, &b, true, gs, bits).unwrap();
                    assert_eq!(out.dtype(), dtype);
                    let x64 = astype(&x, DType::Float64).unwrap();
                    let dense64 = astype(&dense, DType::Float64).unwrap();
                    let expected = matmul(&x64, &matrix_transpose(&dense64).unwrap()).unwrap();
                    let out = astype(&out, DType::Float64).unwrap();
                    let tol = if dtype == DType::Float32 { 1e-4 } else { 2e-2 };
                    let close = lazulite::allclose(&out, &expected, tol, tol, false).unwrap();
                    assert!(
                        close.item::<bool>().unwrap(),
                        "bits={bits} gs={gs} k={k} m={m} {dtype}"
                    );
                }
            }
        }
    }
}

/// The packed words are integers: their cotangent is zero. (The derivatives of the scales,
/// biases and inputs are checked in the rule table, `rules.rs`.)
#[test]
fn packed_words_have_a_zero_cotangent() {
    let w = lazulite::random::normal(&[6, 64], DType::Float32, None, None, None).unwrap();
    let (w_q, s, b) = quantize(&w, 32, 4).unwrap();
    let s = astype(&s, DType::Float64).unwrap();
    let b = astype(&b, DType::Float64).unwrap();
    let x = lazulite::random::normal(&[3, 64], DType::Float64, None, None, None).unwrap();
    let (_, grads) = lazulite::vjp(
        |p| Ok(vec![quantized_matmul(&x, &p[0], &s, &b, true, 32, 4)?]),
        std::slice::from_ref(&w_q),
        &[lazulite::ones(&[3, 6], DType::Float64).unwrap()],
    )
    .unwrap();
    assert!(grads[0].to_vec::<u32>().unwrap().iter().all(|&v| v == 0));
}
