//! The fft family against NumPy (tests/fixtures/fft.json, from tools/fixtures/fft.py),
//! plus its errors and the derivative and vmap rules of the `Fft` primitive.

use crate::common;

use common::{array_from_json, assert_matches, load_fixture, uniform};
use lazulite::fft::{self, FftNorm};
use lazulite::{
    broadcast_to, jvp, slice, transpose, vjp, vmap, Array, Complex, DType, ErrorKind, Result,
};
use serde_json::Value;

fn apply_view(base: &Array, view: &str) -> Array {
    let nd = base.ndim();
    let shape: Vec<i64> = base.shape().iter().map(|&d| d as i64).collect();
    match view {
        "none" => base.clone(),
        "transpose" => transpose(base, &(0..nd as i32).rev().collect::<Vec<_>>()).unwrap(),
        "flip" => {
            let start: Vec<i64> = shape.iter().map(|&d| d - 1).collect();
            let stop: Vec<i64> = shape.iter().map(|&d| -d - 1).collect();
            slice(base, &start, &stop, &vec![-1; nd]).unwrap()
        }
        "strided" => {
            let mut step = vec![1; nd];
            step[nd - 1] = 2;
            slice(base, &vec![0; nd], &shape, &step).unwrap()
        }
        "broadcast" => {
            let mut to = base.shape().to_vec();
            to[0] = 3;
            broadcast_to(base, &to).unwrap()
        }
        other => panic!("unknown view {other}"),
    }
}

fn ints<T: TryFrom<i64>>(v: &Value) -> Option<Vec<T>>
where
    T::Error: std::fmt::Debug,
{
    v.as_array().map(|l| {
        l.iter()
            .map(|x| T::try_from(x.as_i64().unwrap()).unwrap())
            .collect()
    })
}

fn run_case(c: &Value) -> Result<Array> {
    let op = c["op"].as_str().unwrap();
    let x = apply_view(&array_from_json(&c["base"]), c["view"].as_str().unwrap());
    let norm = FftNorm::from_name(c["norm"].as_str().unwrap_or("backward"))?;
    let n = c["n"].as_i64();
    let axis = c["axis"].as_i64().unwrap_or(-1) as i32;
    let s: Option<Vec<i64>> = ints(&c["s"]);
    let axes: Option<Vec<i32>> = ints(&c["axes"]);
    let (s, axes) = (s.as_deref(), axes.as_deref());
    match op {
        "fft" => fft::fft(&x, n, axis, norm),
        "ifft" => fft::ifft(&x, n, axis, norm),
        "rfft" => fft::rfft(&x, n, axis, norm),
        "irfft" => fft::irfft(&x, n, axis, norm),
        "fft2" => fft::fft2(&x, s, axes, norm),
        "ifft2" => fft::ifft2(&x, s, axes, norm),
        "rfft2" => fft::rfft2(&x, s, axes, norm),
        "irfft2" => fft::irfft2(&x, s, axes, norm),
        // NumPy's n-d transforms default to the last len(s) axes; MLX requires axes
        // with s, so the fixture's cases with s always give axes.
        "fftn" => fft::fftn(&x, s, axes, norm),
        "ifftn" => fft::ifftn(&x, s, axes, norm),
        "rfftn" => fft::rfftn(&x, s, axes, norm),
        "irfftn" => fft::irfftn(&x, s, axes, norm),
        "fftshift" => fft::fftshift(&x, axes),
        "ifftshift" => fft::ifftshift(&x, axes),
        other => panic!("unknown op {other}"),
    }
}

#[test]
fn transforms_match_numpy() {
    let fixture = load_fixture("fft");
    let cases = fixture["cases"].as_array().unwrap();
    for c in cases {
        let context = format!(
            "{} {} view={} n={} axis={} s={} axes={} norm={}",
            c["op"], c["base"]["dtype"], c["view"], c["n"], c["axis"], c["s"], c["axes"], c["norm"]
        );
        let y = run_case(c).unwrap_or_else(|e| panic!("{context}: {e}"));
        assert_matches(
            &y,
            &c["expected"],
            1e-5,
            c["atol"].as_f64().unwrap(),
            &context,
        );
    }
    assert!(cases.len() > 150);
}

#[test]
fn frequencies_match_numpy() {
    for c in load_fixture("fft")["freqs"].as_array().unwrap() {
        let (n, d) = (c["n"].as_i64().unwrap(), c["d"].as_f64().unwrap());
        let y = match c["op"].as_str().unwrap() {
            "fftfreq" => fft::fftfreq(n, d),
            _ => fft::rfftfreq(n, d),
        }
        .unwrap();
        assert_matches(
            &y,
            &c["expected"],
            1e-7,
            0.0,
            &format!("{} n={n} d={d}", c["op"]),
        );
    }
}

/// `values` as a complex64 array.
fn complex(values: &[(f32, f32)], shape: &[usize]) -> Array {
    let data: Vec<Complex> = values
        .iter()
        .map(|&(re, im)| Complex::new(re, im))
        .collect();
    Array::from_slice(&data, shape).unwrap()
}

pub(crate) fn random_complex(seed: u64, shape: &[usize]) -> Array {
    let n: usize = shape.iter().product();
    let re = uniform(seed, n, -1.0, 1.0);
    let im = uniform(seed + 1, n, -1.0, 1.0);
    let v: Vec<(f32, f32)> = re
        .iter()
        .zip(&im)
        .map(|(&a, &b)| (a as f32, b as f32))
        .collect();
    complex(&v, shape)
}

pub(crate) fn random_real(seed: u64, shape: &[usize]) -> Array {
    let n: usize = shape.iter().product();
    let v: Vec<f32> = uniform(seed, n, -1.0, 1.0)
        .iter()
        .map(|&x| x as f32)
        .collect();
    Array::from_slice(&v, shape).unwrap()
}

/// The elements as reals: complex values as (re, im) pairs.
pub(crate) fn parts(a: &Array) -> Vec<f64> {
    if a.dtype() == DType::Complex64 {
        a.to_vec::<Complex>()
            .unwrap()
            .iter()
            .flat_map(|z| [z.re as f64, z.im as f64])
            .collect()
    } else {
        a.astype(DType::Float64).unwrap().to_vec::<f64>().unwrap()
    }
}

fn inner(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The transforms are linear, so central differences in float64 of `f` along `u` (real
/// and imaginary parts perturbed alike) are exact up to rounding: checks that
/// `<w, J u>` from them, from jvp and from vjp (conjugate convention, as MLX) agree.
pub(crate) fn check_linear_derivatives(name: &str, f: &dyn Fn(&Array) -> Result<Array>, x: &Array) {
    let u = if x.dtype() == DType::Complex64 {
        random_complex(11, x.shape())
    } else {
        random_real(11, x.shape())
    };
    let plus = parts(&f(&(x + &u)).unwrap());
    let minus = parts(&f(&(x - &u)).unwrap());
    let y = f(x).unwrap();
    let w = if y.dtype() == DType::Complex64 {
        random_complex(23, y.shape())
    } else {
        random_real(23, y.shape())
    };
    let fd: Vec<f64> = plus
        .iter()
        .zip(&minus)
        .map(|(p, m)| (p - m) / 2.0)
        .collect();
    let expected = inner(&parts(&w), &fd);
    let (_, jv) = jvp(
        |p| Ok(vec![f(&p[0])?]),
        std::slice::from_ref(x),
        std::slice::from_ref(&u),
    )
    .unwrap();
    let (_, vj) = vjp(
        |p| Ok(vec![f(&p[0])?]),
        std::slice::from_ref(x),
        std::slice::from_ref(&w),
    )
    .unwrap();
    assert_eq!(vj[0].shape(), x.shape(), "{name}: vjp shape");
    assert_eq!(vj[0].dtype(), x.dtype(), "{name}: vjp dtype");
    let via_jvp = inner(&parts(&w), &parts(&jv[0]));
    let via_vjp = inner(&parts(&vj[0]), &parts(&u));
    let tol = 1e-4 * (1.0 + expected.abs());
    assert!(
        (via_jvp - expected).abs() < tol,
        "{name}: jvp {via_jvp} vs {expected}"
    );
    assert!(
        (via_vjp - expected).abs() < tol,
        "{name}: vjp {via_vjp} vs {expected}"
    );
}

#[test]
fn derivatives_of_every_transform() {
    let c = random_complex(1, &[3, 8]);
    let r = random_real(2, &[3, 8]);
    let odd = random_complex(3, &[2, 7]);
    let norms = [FftNorm::Backward, FftNorm::Ortho, FftNorm::Forward];
    for norm in norms {
        let tag = format!("{norm:?}");
        check_linear_derivatives(&format!("fft {tag}"), &|x| fft::fft(x, None, -1, norm), &c);
        check_linear_derivatives(
            &format!("ifft {tag}"),
            &|x| fft::ifft(x, Some(5), 0, norm),
            &c,
        );
        check_linear_derivatives(
            &format!("rfft {tag}"),
            &|x| fft::rfft(x, None, -1, norm),
            &r,
        );
        check_linear_derivatives(
            &format!("rfft odd {tag}"),
            &|x| fft::rfft(x, Some(7), -1, norm),
            &r,
        );
        check_linear_derivatives(
            &format!("irfft {tag}"),
            &|x| fft::irfft(x, None, -1, norm),
            &c,
        );
        check_linear_derivatives(
            &format!("irfft odd {tag}"),
            &|x| fft::irfft(x, Some(13), -1, norm),
            &odd,
        );
    }
    check_linear_derivatives(
        "fft of real",
        &|x| fft::fft(x, None, 0, FftNorm::Backward),
        &r,
    );
    check_linear_derivatives(
        "rfft2",
        &|x| fft::rfft2(x, Some(&[4, 6]), None, FftNorm::Ortho),
        &r,
    );
    check_linear_derivatives(
        "irfftn",
        &|x| fft::irfftn(x, None, None, FftNorm::Backward),
        &c,
    );
    let strided = slice(&random_complex(5, &[6, 10]), &[5, 9], &[-7, -11], &[-2, -3]).unwrap();
    check_linear_derivatives(
        "fftn strided",
        &|x| fft::fftn(x, None, None, FftNorm::Backward),
        &strided,
    );
}

/// vmap of `f` over axis `in_axis` equals stacking `f` applied to each slice.
pub(crate) fn check_vmap(name: &str, f: &dyn Fn(&Array) -> Result<Array>, x: &Array, in_axis: i32) {
    let batched =
        vmap(|p| Ok(vec![f(&p[0])?]), vec![Some(in_axis)], vec![Some(0)])(std::slice::from_ref(x))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    let axis = if in_axis < 0 {
        in_axis + x.ndim() as i32
    } else {
        in_axis
    } as usize;
    let mut expected = Vec::new();
    for i in 0..x.shape()[axis] {
        let row = lazulite::take(x, &Array::scalar(i as i32), Some(axis as i32)).unwrap();
        expected.extend(parts(&f(&row).unwrap()));
    }
    let got = parts(&batched[0]);
    assert_eq!(got.len(), expected.len(), "{name}: size");
    for (g, e) in got.iter().zip(&expected) {
        assert!(
            (g - e).abs() <= 1e-5 * (1.0 + e.abs()),
            "{name}: {g} vs {e}"
        );
    }
}

#[test]
fn vmap_matches_a_loop() {
    let c = random_complex(7, &[3, 4, 6]);
    let r = random_real(8, &[3, 4, 6]);
    check_vmap("fft", &|x| fft::fft(x, None, -1, FftNorm::Backward), &c, 0);
    check_vmap(
        "ifft axis 0",
        &|x| fft::ifft(x, Some(3), 0, FftNorm::Ortho),
        &c,
        2,
    );
    check_vmap("rfft", &|x| fft::rfft(x, None, 0, FftNorm::Backward), &r, 1);
    check_vmap(
        "irfft",
        &|x| fft::irfft(x, None, -1, FftNorm::Backward),
        &c,
        -2,
    );
    check_vmap(
        "fft2",
        &|x| fft::fft2(x, None, None, FftNorm::Backward),
        &c,
        1,
    );
    check_vmap("fftshift", &|x| fft::fftshift(x, None), &r, 0);
}

#[test]
fn long_transforms_round_trip() {
    // A power of two, a smooth length and a large prime (Bluestein), with batch rows
    // spread over threads.
    for n in [1 << 14, 3 * 5 * 7 * 64, 4099] {
        let x = random_complex(9, &[4, n]);
        let back = fft::ifft(
            &fft::fft(&x, None, -1, FftNorm::Backward).unwrap(),
            None,
            -1,
            FftNorm::Backward,
        )
        .unwrap();
        let (a, b) = (parts(&x), parts(&back));
        let err = a
            .iter()
            .zip(&b)
            .map(|(p, q)| (p - q).abs())
            .fold(0.0, f64::max);
        assert!(err < 2e-5, "n={n}: round trip error {err}");
        let r = random_real(10, &[3, n]);
        let back = fft::irfft(
            &fft::rfft(&r, None, -1, FftNorm::Ortho).unwrap(),
            Some(n as i64),
            -1,
            FftNorm::Ortho,
        )
        .unwrap();
        let err = parts(&r)
            .iter()
            .zip(&parts(&back))
            .map(|(p, q)| (p - q).abs())
            .fold(0.0, f64::max);
        assert!(err < 2e-5, "n={n}: real round trip error {err}");
    }
}

pub(crate) fn assert_error<T: std::fmt::Debug>(r: Result<T>, kind: ErrorKind, text: &str) {
    let e = r.expect_err(text);
    assert_eq!(e.kind(), kind, "{e}");
    assert!(e.to_string().contains(text), "{e} lacks {text}");
}

#[test]
fn errors() {
    let a = random_real(1, &[3, 4]);
    let b = FftNorm::Backward;
    assert_error(
        fft::fft(&a, Some(0), -1, b),
        ErrorKind::Value,
        "Invalid FFT output size requested (0)",
    );
    assert_error(fft::rfft(&a, Some(-3), -1, b), ErrorKind::Value, "(-3)");
    assert_error(fft::fft(&a, None, 2, b), ErrorKind::Axis, "[fft] Axis 2");
    assert_error(fft::irfft(&a, None, -3, b), ErrorKind::Axis, "[irfft]");
    assert_error(
        fft::fft(&Array::scalar(1.0f32), None, -1, b),
        ErrorKind::Axis,
        "[fft]",
    );
    assert_error(
        fft::fft(&random_real(2, &[0]), None, -1, b),
        ErrorKind::Value,
        "(0)",
    );
    assert_error(
        fft::irfft(&random_real(2, &[1]), None, -1, b),
        ErrorKind::Value,
        "(0)",
    );
    assert_error(
        fft::fft2(&a, Some(&[2]), None, b),
        ErrorKind::Value,
        "Shape and axes have different sizes",
    );
    assert_error(
        fft::fftn(&a, None, Some(&[0, -2]), b),
        ErrorKind::Value,
        "Duplicated axis received (0,-2)",
    );
    assert_error(
        fft::fftn(&a, Some(&[2]), None, b),
        ErrorKind::Value,
        "`axes` should not be `None`",
    );
    assert_error(
        fft::fft2(&random_real(3, &[4]), None, None, b),
        ErrorKind::Axis,
        "[fft2]",
    );
    assert_error(
        fft::fftn(&a, Some(&[0, 4]), Some(&[0, 1]), b),
        ErrorKind::Value,
        "(0,4)",
    );
    assert_error(
        fft::fftn(&a, Some(&[1 << 40, 1 << 40]), Some(&[0, 1]), b),
        ErrorKind::Value,
        "[fftn]",
    );
    assert_error(fft::fftshift(&a, Some(&[2])), ErrorKind::Axis, "[fftshift]");
    assert_error(FftNorm::from_name("bad"), ErrorKind::Value, "Invalid norm");
    assert_error(
        fft::fftfreq(0, 1.0),
        ErrorKind::Value,
        "`n` must be greater than 0",
    );
    assert_error(
        fft::rfftfreq(4, 0.0),
        ErrorKind::Value,
        "`d` must be non-zero",
    );
    // The inputs are intact and usable after the errors.
    assert_eq!(a.shape(), [3, 4]);
    assert_eq!(fft::fft(&a, None, -1, b).unwrap().shape(), [3, 4]);
}

#[test]
fn empty_axes_return_the_input_and_dtypes_follow_mlx() {
    let a = random_real(1, &[3, 4]);
    let same = fft::rfftn(&a, None, Some(&[]), FftNorm::Backward).unwrap();
    assert_eq!(same.dtype(), DType::Float32);
    assert_eq!(parts(&same), parts(&a));
    let d = a.astype(DType::Float64).unwrap();
    assert_eq!(
        fft::fft(&d, None, -1, FftNorm::Backward).unwrap().dtype(),
        DType::Complex64
    );
    assert_eq!(
        fft::irfft(&d, None, -1, FftNorm::Backward).unwrap().dtype(),
        DType::Float32
    );
    let i = a.astype(DType::Int32).unwrap();
    assert_eq!(fft::fftshift(&i, None).unwrap().dtype(), DType::Int32);
    assert_eq!(
        fft::fftshift(&Array::scalar(2.0f32), None).unwrap().shape(),
        [0usize; 0]
    );
}
