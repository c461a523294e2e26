//! The vectorised float kernels through the public API: every layout (contiguous, donated,
//! transposed, negative-step slice, broadcast, 0-d, empty) and float16/bfloat16, against
//! f64 math rounded to the array's dtype. Per-function accuracy over the whole float range
//! is tested in the kernel module itself (`backend::cpu::simd::tests`).

use half::{bf16, f16};
use lazulite::{Array, DType, Result};

type Op = fn(&Array) -> Result<Array>;
type Reference = fn(f64) -> f64;

const OPS: [(&str, Op, Reference); 14] = [
    ("exp", lazulite::exp, f64::exp),
    ("expm1", lazulite::expm1, f64::exp_m1),
    ("log", lazulite::log, f64::ln),
    ("log1p", lazulite::log1p, f64::ln_1p),
    ("log10", lazulite::log10, f64::log10),
    ("sin", lazulite::sin, f64::sin),
    ("cos", lazulite::cos, f64::cos),
    ("tanh", lazulite::tanh, f64::tanh),
    ("arcsin", lazulite::arcsin, f64::asin),
    ("erf", lazulite::erf, libm::erf),
    ("sigmoid", lazulite::sigmoid, |x| 1.0 / (1.0 + (-x).exp())),
    ("rsqrt", lazulite::rsqrt, |x| 1.0 / x.sqrt()),
    ("floor", lazulite::floor, f64::floor),
    ("square", lazulite::square, |x| x * x),
];

/// 3 x 40 values in (0, 1), where every op above is defined.
fn input() -> Vec<f32> {
    (0..120).map(|i| 0.004 + i as f32 * 0.0083).collect()
}

fn ulps(a: f32, b: f32) -> u32 {
    (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs() as u32
}

fn check_f32(name: &str, got: &Array, xs: &[f32], reference: Reference) {
    let got = got.to_vec::<f32>().unwrap();
    assert_eq!(got.len(), xs.len(), "{name}");
    for (&g, &x) in got.iter().zip(xs) {
        let expected = reference(x as f64) as f32;
        assert!(
            ulps(g, expected) <= 2,
            "{name}({x}) = {g}, expected {expected}"
        );
    }
}

#[test]
fn float32_in_every_layout() {
    let data = input();
    let a = Array::from_slice(&data, &[3, 40]).unwrap();
    let transposed = a.transpose(&[1, 0]).unwrap();
    let transposed_data: Vec<f32> = (0..40)
        .flat_map(|j| (0..3).map(move |i| i * 40 + j))
        .map(|k| data[k])
        .collect();
    let reversed = lazulite::slice(&a, &[0, 39], &[3, i64::MIN], &[1, -2]).unwrap();
    let reversed_data: Vec<f32> = (0..3)
        .flat_map(|i| (0..20).map(move |j| i * 40 + 39 - 2 * j))
        .map(|k| data[k])
        .collect();
    let row = Array::from_slice(&data[..40], &[1, 40]).unwrap();
    let broadcast = row.broadcast_to(&[3, 40]).unwrap();
    let broadcast_data: Vec<f32> = data[..40].repeat(3);
    for (name, op, reference) in OPS {
        check_f32(name, &op(&a).unwrap(), &data, reference);
        // The product is a temporary nobody else holds, so the op writes into its buffer.
        let donated = op(&(&a * 1.0)).unwrap();
        check_f32(name, &donated, &data, reference);
        check_f32(name, &op(&transposed).unwrap(), &transposed_data, reference);
        check_f32(name, &op(&reversed).unwrap(), &reversed_data, reference);
        check_f32(name, &op(&broadcast).unwrap(), &broadcast_data, reference);
        assert_eq!(a.to_vec::<f32>().unwrap(), data, "{name} changed its input");
    }
}

#[test]
fn scalars_and_empty_arrays() {
    for (name, op, reference) in OPS {
        let got = op(&Array::scalar(0.25f32)).unwrap();
        assert_eq!(got.shape(), &[] as &[usize]);
        check_f32(name, &got, &[0.25], reference);
        let empty = op(&Array::from_slice::<f32>(&[], &[0, 3]).unwrap()).unwrap();
        assert_eq!(
            (empty.shape(), empty.dtype()),
            (&[0usize, 3][..], DType::Float32)
        );
        assert!(empty.to_vec::<f32>().unwrap().is_empty());
    }
}

#[test]
fn half_precision_goes_through_the_f32_kernels() {
    let data = input();
    let halves: Vec<f16> = data.iter().map(|&v| f16::from_f32(v)).collect();
    let brains: Vec<bf16> = data.iter().map(|&v| bf16::from_f32(v)).collect();
    let a16 = Array::from_slice(&halves, &[3, 40]).unwrap();
    let b16 = Array::from_slice(&brains, &[3, 40]).unwrap();
    for (name, op, reference) in OPS {
        for (x, strided) in [
            (a16.clone(), false),
            (a16.transpose(&[1, 0]).unwrap(), true),
        ] {
            let got = op(&x).unwrap();
            assert_eq!(got.dtype(), DType::Float16, "{name}");
            let xs = x.to_vec::<f16>().unwrap();
            for (g, v) in got.to_vec::<f16>().unwrap().into_iter().zip(xs) {
                let expected = f16::from_f64(reference(v.to_f64()));
                let diff = (g.to_bits() as i32 - expected.to_bits() as i32).abs();
                assert!(
                    diff <= 1,
                    "{name}({v}) = {g}, expected {expected} (strided {strided})"
                );
            }
        }
        let got = op(&(&b16 * 1.0)).unwrap();
        assert_eq!(got.dtype(), DType::BFloat16, "{name}");
        for (g, v) in got.to_vec::<bf16>().unwrap().into_iter().zip(&brains) {
            let expected = bf16::from_f64(reference(v.to_f64()));
            let diff = (g.to_bits() as i32 - expected.to_bits() as i32).abs();
            assert!(diff <= 1, "{name}({v}) = {g}, expected {expected}");
        }
    }
}
