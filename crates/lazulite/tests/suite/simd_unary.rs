//! The vectorised float kernels through the public API: every layout (contiguous, donated,
//! transposed, negative-step slice, broadcast, 0-d, empty) and float16/bfloat16, against
//! f64 math rounded to the array's dtype. Per-function accuracy over the whole float range
//! is tested in the kernel module itself (`backend::cpu::simd::tests`).

use half::{bf16, f16};
use lazulite::{Array, DType, Result};

type Op = fn(&Array) -> Result<Array>;
type Reference = fn(f64) -> f64;

const OPS: [(&str, Op, Reference); 19] = [
    ("exp", lazulite::exp, f64::exp),
    ("expm1", lazulite::expm1, f64::exp_m1),
    ("log", lazulite::log, f64::ln),
    ("log1p", lazulite::log1p, f64::ln_1p),
    ("log10", lazulite::log10, f64::log10),
    ("sin", lazulite::sin, f64::sin),
    ("cos", lazulite::cos, f64::cos),
    ("tanh", lazulite::tanh, f64::tanh),
    ("arcsin", lazulite::arcsin, f64::asin),
    ("arcsinh", lazulite::arcsinh, f64::asinh),
    ("arctanh", lazulite::arctanh, f64::atanh),
    ("erf", lazulite::erf, libm::erf),
    ("erfinv", lazulite::erfinv, erfinv),
    ("sigmoid", lazulite::sigmoid, |x| 1.0 / (1.0 + (-x).exp())),
    ("rsqrt", lazulite::rsqrt, |x| 1.0 / x.sqrt()),
    ("floor", lazulite::floor, f64::floor),
    ("square", lazulite::square, |x| x * x),
    ("sign", lazulite::sign, f64::signum),
    ("reciprocal", lazulite::reciprocal, |x| 1.0 / x),
];

/// The ops defined from 1 on, tested on 1 + the values of [`input`].
const FROM_ONE: [(&str, Op, Reference); 1] = [("arccosh", lazulite::arccosh, f64::acosh)];

/// Every op with the shift of the values it is tested on.
fn cases() -> impl Iterator<Item = (&'static str, Op, Reference, f32)> {
    let shifted = |shift| move |(name, op, reference)| (name, op, reference, shift);
    OPS.into_iter()
        .map(shifted(0.0))
        .chain(FROM_ONE.into_iter().map(shifted(1.0)))
}

/// 3 x 40 values in `shift` + (0, 1), where the ops of [`cases`] with that shift are defined.
fn input(shift: f32) -> Vec<f32> {
    (0..120)
        .map(|i| shift + 0.004 + i as f32 * 0.0083)
        .collect()
}

/// erfinv in f64 by Newton's method on erf (erf' = 2/sqrt(pi) e^(-x^2)), for |y| < 1.
fn erfinv(y: f64) -> f64 {
    let mut x = 0.0f64;
    for _ in 0..50 {
        let slope = std::f64::consts::FRAC_2_SQRT_PI * (-x * x).exp();
        x -= (libm::erf(x) - y) / slope;
    }
    x
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
    for (name, op, reference, shift) in cases() {
        let data = input(shift);
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
    for (name, op, reference, shift) in cases() {
        let x = 0.25 + shift;
        let got = op(&Array::scalar(x)).unwrap();
        assert_eq!(got.shape(), &[] as &[usize]);
        check_f32(name, &got, &[x], reference);
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
    for (name, op, reference, shift) in cases() {
        let data = input(shift);
        let halves: Vec<f16> = data.iter().map(|&v| f16::from_f32(v)).collect();
        let brains: Vec<bf16> = data.iter().map(|&v| bf16::from_f32(v)).collect();
        let a16 = Array::from_slice(&halves, &[3, 40]).unwrap();
        let b16 = Array::from_slice(&brains, &[3, 40]).unwrap();
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
