//! `compile`: traced once per signature, replayed with fused elementwise blocks; results
//! equal the uncompiled function's, and the transforms see through it.

use crate::common;

use common::{array, uniform};
use lazulite::{compile, grad, Array, DType, Error, ErrorKind, Result};

fn values(a: &Array) -> Vec<f64> {
    a.astype(DType::Float64).unwrap().to_vec::<f64>().unwrap()
}

fn assert_close(actual: &Array, expected: &Array, what: &str) {
    assert_eq!(actual.shape(), expected.shape(), "{what}: shape");
    assert_eq!(actual.dtype(), expected.dtype(), "{what}: dtype");
    for (i, (a, e)) in values(actual).iter().zip(values(expected)).enumerate() {
        let same = (a.is_nan() && e.is_nan()) || a == &e || (a - e).abs() <= 1e-6 * e.abs();
        assert!(same, "{what}: element {i}: {a} vs {e}");
    }
}

/// The benchmark chain `atan(round(sinh(abs(cos(-sin(log(x+x)))))))`, plus a second
/// output that shares a prefix of it.
fn chain(x: &[Array]) -> Result<Vec<Array>> {
    let a = (&x[0] + &x[0]).log()?.sin()?.negative()?.cos()?.abs()?;
    let out = lazulite::round(&a.sinh()?, 0)?.arctan()?;
    let other = (&a * &x[1]).exp()?;
    Ok(vec![out, other, a])
}

fn random(seed: u64, shape: &[usize], lo: f64, hi: f64) -> Array {
    let n = shape.iter().product();
    array(&uniform(seed, n, lo, hi), shape)
        .astype(DType::Float32)
        .unwrap()
}

#[test]
fn compiled_chain_matches_eager_over_shapes_and_layouts() {
    let compiled = compile(chain);
    // 0-d, a small vector, blocks of one row each, many rows per block, and a
    // transposed and a broadcast operand.
    let cases: Vec<(Array, Array)> = vec![
        (Array::scalar(0.7f32), Array::scalar(2.0f32)),
        (random(1, &[5], 0.1, 3.0), random(2, &[5], -1.0, 1.0)),
        (
            random(3, &[3, 40_000], 0.1, 3.0),
            random(4, &[3, 40_000], -1.0, 1.0),
        ),
        (
            random(5, &[300_001], 0.1, 3.0),
            random(6, &[300_001], -1.0, 1.0),
        ),
        (
            random(7, &[700, 300], 0.1, 3.0).t().unwrap(),
            random(8, &[300], -1.0, 1.0)
                .reshape(&[300, 1])
                .unwrap()
                .broadcast_to(&[300, 700])
                .unwrap(),
        ),
    ];
    for (x, y) in cases {
        let expected = chain(&[x.clone(), y.clone()]).unwrap();
        let got = compiled.call(&[x.clone(), y.clone()]).unwrap();
        for (k, (g, e)) in got.iter().zip(&expected).enumerate() {
            assert_close(g, e, &format!("output {k} for shape {:?}", x.shape()));
        }
    }
    assert_eq!(compiled.traces(), 5);
}

#[test]
fn replays_without_tracing_again_and_fuses() {
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = calls.clone();
    let compiled = compile(move |x: &[Array]| {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(vec![x[0].exp()?.square()?.sqrt()?])
    });
    for seed in 0..3 {
        let x = random(seed, &[64, 64], -1.0, 1.0);
        let y = compiled.call(std::slice::from_ref(&x)).unwrap();
        let trace = lazulite::to_trace(&[&y[0]]);
        assert!(trace.contains("fused"), "no fused step in:\n{trace}");
        assert_close(&y[0], &x.exp().unwrap(), "exp, square, sqrt");
    }
    assert_eq!(calls.load(std::sync::atomic::Ordering::Relaxed), 1);
    compiled.call(&[random(9, &[65, 64], -1.0, 1.0)]).unwrap();
    compiled
        .call(&[random(9, &[64, 64], -1.0, 1.0)
            .astype(DType::Float64)
            .unwrap()])
        .unwrap();
    assert_eq!(calls.load(std::sync::atomic::Ordering::Relaxed), 3);
}

#[test]
fn captured_arrays_integers_and_select() {
    let offset = Array::from_slice(&[1i32, -2, 3], &[3]).unwrap();
    let captured = offset.clone();
    let compiled = compile(move |x: &[Array]| {
        let shifted = &x[0] + &captured;
        let doubled = &shifted * 2;
        let big = lazulite::greater(&doubled, Array::scalar(0i32))?;
        Ok(vec![lazulite::where_(
            &big,
            &doubled,
            &shifted.negative()?,
        )?])
    });
    let x = Array::from_slice(&[4i32, 0, -9], &[3]).unwrap();
    let got = compiled.call(&[x]).unwrap();
    assert_eq!(got[0].to_vec::<i32>().unwrap(), vec![10, 2, 6]);
}

#[test]
fn identity_and_constant_outputs() {
    let compiled =
        compile(|x: &[Array]| Ok(vec![x[0].clone(), lazulite::ones(&[2], DType::Int32)?]));
    let x = Array::from_slice(&[3.0f32, 4.0], &[2]).unwrap();
    let got = compiled.call(std::slice::from_ref(&x)).unwrap();
    assert_eq!(got[0].to_vec::<f32>().unwrap(), vec![3.0, 4.0]);
    assert_eq!(got[1].to_vec::<i32>().unwrap(), vec![1, 1]);
}

#[test]
fn evaluating_an_input_inside_is_an_error() {
    let compiled = compile(|x: &[Array]| {
        let s = x[0].sum(lazulite::Axes::All, false)?;
        if s.item::<f32>()? > 0.0 {
            Ok(vec![s])
        } else {
            Ok(vec![s.negative()?])
        }
    });
    let err: Error = compiled.call(&[Array::scalar(1.0f32)]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Value);
    assert!(err.to_string().contains("compile"), "{err}");
}

#[test]
fn second_derivative_through_a_compiled_function() {
    let compiled = compile(|x: &[Array]| Ok(vec![(&x[0].sin()?.exp()? * &x[1]).tanh()?]));
    let g = grad(grad(move |x: &Array| {
        compiled
            .call(&[x.clone(), Array::scalar(1.0f64)])?
            .remove(0)
            .sum(lazulite::Axes::All, false)
    }));
    let at = Array::scalar(0.3f64);
    let eager = grad(grad(|x: &Array| {
        x.sin()?.exp()?.tanh()?.sum(lazulite::Axes::All, false)
    }));
    assert_close(&g(&at).unwrap(), &eager(&at).unwrap(), "second derivative");
}
