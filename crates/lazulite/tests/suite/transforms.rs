//! Transforms: derivative rules against float64 central differences, batching rules
//! against a loop over the mapped axis, the guide's examples, and composition.

use crate::common;
use common::{array, check_derivatives, check_vmap, uniform, Fun};

type UnaryFn = fn(&Array) -> Result<Array>;
type BinaryFn = fn(&Array, &Array) -> Result<Array>;

use lazulite::{grad, jvp, value_and_grad, vmap, Array, DType, Result};

#[test]
fn unary_derivatives_match_finite_differences() {
    let x = array(&uniform(1, 6, 0.2, 0.8), &[2, 3]);
    let big = array(&uniform(2, 6, 1.2, 3.0), &[2, 3]);
    let cases: Vec<(&str, UnaryFn, &Array)> = vec![
        ("abs", lazulite::abs, &x),
        ("negative", lazulite::negative, &x),
        ("square", lazulite::square, &x),
        ("sqrt", lazulite::sqrt, &x),
        ("rsqrt", lazulite::rsqrt, &x),
        ("reciprocal", lazulite::reciprocal, &x),
        ("exp", lazulite::exp, &x),
        ("expm1", lazulite::expm1, &x),
        ("log", lazulite::log, &x),
        ("log1p", lazulite::log1p, &x),
        ("log2", lazulite::log2, &x),
        ("log10", lazulite::log10, &x),
        ("sin", lazulite::sin, &x),
        ("cos", lazulite::cos, &x),
        ("tan", lazulite::tan, &x),
        ("arcsin", lazulite::arcsin, &x),
        ("arccos", lazulite::arccos, &x),
        ("arctan", lazulite::arctan, &x),
        ("sinh", lazulite::sinh, &x),
        ("cosh", lazulite::cosh, &x),
        ("tanh", lazulite::tanh, &x),
        ("arcsinh", lazulite::arcsinh, &x),
        ("arccosh", lazulite::arccosh, &big),
        ("arctanh", lazulite::arctanh, &x),
        ("sigmoid", lazulite::sigmoid, &x),
        ("erf", lazulite::erf, &x),
        ("erfinv", lazulite::erfinv, &x),
        ("degrees", lazulite::degrees, &x),
    ];
    for (name, op, input) in cases {
        check_derivatives(
            name,
            &move |p: &[Array]| op(&p[0]),
            std::slice::from_ref(input),
        );
    }
}

#[test]
fn binary_derivatives_match_finite_differences() {
    let a = array(&uniform(3, 6, 0.5, 2.0), &[2, 3]);
    let b = array(&uniform(4, 6, -2.0, -0.5), &[2, 3]);
    let cases: Vec<(&str, BinaryFn)> = vec![
        ("add", |a, b| lazulite::add(a, b)),
        ("subtract", |a, b| lazulite::subtract(a, b)),
        ("multiply", |a, b| lazulite::multiply(a, b)),
        ("divide", |a, b| lazulite::divide(a, b)),
        ("power", |a, b| lazulite::power(a, b)),
        ("maximum", |a, b| lazulite::maximum(a, b)),
        ("minimum", |a, b| lazulite::minimum(a, b)),
        ("arctan2", |a, b| lazulite::arctan2(a, b)),
        ("logaddexp", |a, b| lazulite::logaddexp(a, b)),
        ("remainder", |a, b| lazulite::remainder(a, b)),
    ];
    for (name, op) in cases {
        check_derivatives(
            name,
            &move |p: &[Array]| op(&p[0], &p[1]),
            &[a.clone(), b.clone()],
        );
    }
}

#[test]
fn view_derivatives_match_finite_differences() {
    let x = array(&uniform(5, 24, -1.0, 1.0), &[2, 3, 4]);
    let cases: Vec<(&str, Box<Fun<'static>>)> = vec![
        (
            "reshape",
            Box::new(|p: &[Array]| lazulite::reshape(&p[0], &[4, -1])?.sin()),
        ),
        (
            "transpose",
            Box::new(|p: &[Array]| lazulite::transpose(&p[0], &[2, 0, 1])?.exp()),
        ),
        (
            "slice",
            Box::new(|p: &[Array]| {
                lazulite::slice(&p[0], &[1, 2, 3], &[2, -4, 0], &[1, -1, -2])?.square()
            }),
        ),
        (
            "slice_update",
            Box::new(|p: &[Array]| {
                let u = lazulite::slice(&p[0], &[0, 0, 0], &[1, 3, 2], &[1, 1, 1])?.sin()?;
                lazulite::slice_update(&p[0], &u, &[1, 0, 1], &[2, 3, 4], &[1, 1, 2])
            }),
        ),
    ];
    for (name, f) in cases {
        check_derivatives(name, f.as_ref(), std::slice::from_ref(&x));
    }
}

/// Seed: grad(sin) is cos, grad(grad(sin)) is -sin.
#[test]
fn guide_grad_of_sin_and_second_derivative() {
    let dfdx = grad(|x: &Array| x.sin());
    let pi = Array::scalar(std::f32::consts::PI);
    assert_eq!(
        dfdx(&pi).unwrap().item::<f32>().unwrap(),
        pi.cos().unwrap().item::<f32>().unwrap()
    );
    assert_eq!(dfdx(&pi).unwrap().to_string(), "array(-1, dtype=float32)");
    let d2fdx2 = grad(grad(|x: &Array| x.sin()));
    let half_pi = Array::scalar(std::f32::consts::FRAC_PI_2);
    assert_eq!(
        d2fdx2(&half_pi).unwrap().to_string(),
        "array(-1, dtype=float32)"
    );
}

#[test]
fn third_derivative_and_jvp_of_grad() {
    // d3/dx3 sin = -cos
    let d3 = grad(grad(grad(|x: &Array| x.sin())));
    let x = Array::scalar(0.3f64);
    assert!((d3(&x).unwrap().item::<f64>().unwrap() + 0.3f64.cos()).abs() < 1e-12);
    // jvp of grad(x^3) = 6x * t
    let g = grad(|x: &Array| lazulite::power(x, 3.0));
    let (_, t) = jvp(
        |p| Ok(vec![g(&p[0])?]),
        std::slice::from_ref(&x),
        &[Array::scalar(2.0f64)],
    )
    .unwrap();
    assert!((t[0].item::<f64>().unwrap() - 6.0 * 0.3 * 2.0).abs() < 1e-12);
}

#[test]
fn value_and_grad_and_integer_inputs() {
    let f = value_and_grad(|p: &(Array, Array)| lazulite::multiply(&p.0, &p.0.sin()?));
    let x = Array::scalar(0.5f32);
    let n = Array::scalar(3i32);
    let (v, (gx, gn)) = f(&(x, n)).unwrap();
    assert!((v.item::<f32>().unwrap() - 0.5 * 0.5f32.sin()).abs() < 1e-7);
    assert!((gx.item::<f32>().unwrap() - (0.5f32.sin() + 0.5 * 0.5f32.cos())).abs() < 1e-6);
    assert_eq!((gn.dtype(), gn.item::<i32>().unwrap()), (DType::Int32, 0));
    // Gradients come back in the dtype of their input, through casts.
    let through_cast = grad(|x: &Array| x.astype(DType::Float32)?.square());
    let g = through_cast(&Array::scalar(1.5f64)).unwrap();
    assert_eq!((g.dtype(), g.item::<f64>().unwrap()), (DType::Float64, 3.0));
}

/// Seed: "can even be used with gradient transformations" — a function that evaluates
/// an array for control flow can still be differentiated.
#[test]
fn grad_through_control_flow_with_eval() {
    let f = |x: &Array| -> Result<Array> {
        let y = x.sin()?;
        if y.item::<f32>()? > 0.0 {
            y.square()
        } else {
            y.exp()
        }
    };
    let g = grad(f);
    let x = Array::scalar(1.0f32);
    let expected = 2.0 * 1f32.sin() * 1f32.cos();
    assert!((g(&x).unwrap().item::<f32>().unwrap() - expected).abs() < 1e-6);
    let x = Array::scalar(-1.0f32);
    let expected = (-1f32).sin().exp() * (-1f32).cos();
    assert!((g(&x).unwrap().item::<f32>().unwrap() - expected).abs() < 1e-6);
}

#[test]
fn grad_through_a_million_op_chain() {
    let n = 1_000_000;
    let f = |x: &Array| -> Result<Array> {
        let mut y = x.clone();
        for _ in 0..n {
            y = &y * 1.000001;
        }
        Ok(y)
    };
    let g = grad(f)(&Array::scalar(1.0f64)).unwrap();
    assert!((g.item::<f64>().unwrap() - 1.000001f64.powi(n)).abs() < 1e-6);
}

#[test]
fn vmap_matches_a_loop() {
    let x = array(&uniform(11, 24, 0.1, 0.9), &[2, 3, 4]);
    let y = array(&uniform(12, 12, 0.1, 0.9), &[3, 4]);
    let z = array(&uniform(13, 12, 0.1, 0.9), &[4, 3]);
    check_vmap(
        "sin",
        &|p: &[Array]| p[0].sin(),
        std::slice::from_ref(&x),
        vec![Some(1)],
        0,
    );
    check_vmap(
        "sin last axis out",
        &|p: &[Array]| p[0].sin(),
        std::slice::from_ref(&x),
        vec![Some(-1)],
        -1,
    );
    check_vmap(
        "add broadcast",
        &|p: &[Array]| lazulite::add(&p[0], &p[1]),
        &[x.clone(), y.clone()],
        vec![Some(0), None],
        1,
    );
    check_vmap(
        "add both",
        &|p: &[Array]| lazulite::multiply(&p[0], &p[1]),
        &[x.clone(), z.clone()],
        vec![Some(2), Some(0)],
        0,
    );
    check_vmap(
        "reshape",
        &|p: &[Array]| lazulite::reshape(&p[0], &[-1]),
        std::slice::from_ref(&x),
        vec![Some(1)],
        0,
    );
    check_vmap(
        "transpose",
        &|p: &[Array]| p[0].t(),
        std::slice::from_ref(&x),
        vec![Some(2)],
        1,
    );
    check_vmap(
        "slice",
        &|p: &[Array]| lazulite::slice(&p[0], &[2, 0], &[0, 4], &[-1, 2]),
        std::slice::from_ref(&x),
        vec![Some(0)],
        0,
    );
    check_vmap(
        "broadcast_to",
        &|p: &[Array]| lazulite::broadcast_to(&p[0], &[5, 4]),
        std::slice::from_ref(&y),
        vec![Some(0)],
        0,
    );
    check_vmap(
        "slice_update",
        &|p: &[Array]| lazulite::slice_update(&p[0], &p[1].sin()?, &[0], &[4], &[2]),
        &[
            y.clone(),
            lazulite::slice(&z, &[0, 0], &[2, 3], &[1, 1]).unwrap(),
        ],
        vec![Some(0), Some(1)],
        0,
    );
    check_vmap(
        "astype",
        &|p: &[Array]| p[0].astype(DType::Float32),
        std::slice::from_ref(&x),
        vec![Some(1)],
        0,
    );
}

#[test]
fn vmap_composes_with_vmap_and_grad() {
    let x = array(&uniform(21, 12, 0.1, 0.9), &[3, 4]);
    // vmap(vmap(sin)) over both axes == sin
    let inner = vmap(|p| Ok(vec![p[0].sin()?]), vec![Some(0)], vec![Some(0)]);
    let outer = vmap(move |p| inner(p), vec![Some(1)], vec![Some(1)]);
    assert_eq!(
        outer(std::slice::from_ref(&x)).unwrap()[0]
            .to_vec::<f64>()
            .unwrap(),
        x.sin().unwrap().to_vec::<f64>().unwrap()
    );
    // vmap(grad(sin)) == cos
    let g = grad(|x: &Array| x.sin());
    let vg = vmap(move |p| Ok(vec![g(&p[0])?]), vec![Some(0)], vec![Some(0)]);
    let got = vg(&[lazulite::reshape(&x, &[-1]).unwrap()]).unwrap()[0]
        .to_vec::<f64>()
        .unwrap();
    let want = lazulite::reshape(&x.cos().unwrap(), &[-1])
        .unwrap()
        .to_vec::<f64>()
        .unwrap();
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() < 1e-12);
    }
}

#[test]
fn transform_errors_are_clear() {
    let bad = vmap(|p| Ok(vec![p[0].clone()]), vec![Some(3)], vec![Some(0)]);
    assert!(bad(&[array(&[1.0, 2.0], &[2])]).is_err());
    let mismatched = vmap(
        |p| Ok(vec![lazulite::add(&p[0], &p[1])?]),
        vec![Some(0)],
        vec![Some(0)],
    );
    let err = mismatched(&[array(&[1.0, 2.0], &[2]), array(&[1.0, 2.0, 3.0], &[3])]).unwrap_err();
    assert!(err.message().contains("Inconsistent"), "{err}");
    let vector_loss = grad(|x: &Array| x.sin());
    assert!(vector_loss(&array(&[1.0, 2.0], &[2])).is_err());
    let evaluating = vmap(
        |p| {
            p[0].item::<f32>()?;
            Ok(vec![p[0].clone()])
        },
        vec![Some(0)],
        vec![Some(0)],
    );
    assert!(evaluating(&[array(&[1.0, 2.0], &[2])]).is_err());
}
