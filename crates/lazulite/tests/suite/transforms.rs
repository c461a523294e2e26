//! Transforms beyond single rules: the guide's examples, specific values MLX gives (ties,
//! zeros), composition of transforms, custom functions and checkpointing, and errors. Each
//! primitive's rules are checked against finite differences and a loop in the rule table
//! (`rules.rs`).

use crate::common;
use common::{array, check_vmap, uniform, Fun};

use lazulite::{
    at, checkpoint, custom_function, grad, idx, jvp, value_and_grad, value_and_grad_argnums, vjp,
    vmap, Array, Axes, DType, Result,
};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Documented example: grad(sin) is cos, grad(grad(sin)) is -sin.
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

/// Documented example: "can even be used with gradient transformations" — a function that evaluates
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

#[test]
fn vjp_through_broadcasting_add() {
    let x = Array::from_slice(&[0.0f32, 0.0], &[2]).unwrap();
    let column = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3, 1]).unwrap();
    let ones = lazulite::ones(&[3, 2], lazulite::DType::Float32).unwrap();
    let (_, g) = vjp(|p| Ok(vec![lazulite::add(&p[0], &column)?]), &[x], &[ones]).unwrap();
    assert_eq!(g[0].to_vec::<f32>().unwrap(), vec![3.0, 3.0]);
}

#[test]
fn prod_and_cumprod_gradients_with_zeros_follow_mlx() {
    // MLX: grad(prod)([2, 0, 3]) == [0, 6, 0]; cumprod's vjp keeps the first zero's share.
    let g = grad(|x: &Array| lazulite::prod(x, Axes::All, false));
    let x = array(&[2.0, 0.0, 3.0], &[3]);
    assert_eq!(g(&x).unwrap().to_vec::<f64>().unwrap(), vec![0.0, 6.0, 0.0]);
    let x = array(&[2.0, 0.0, 3.0, 0.0, 4.0], &[5]);
    let w = array(&[1.0, 2.0, 3.0, 4.0, 5.0], &[5]);
    let (_, v) = vjp(
        |p| Ok(vec![lazulite::cumprod(&p[0], None, false, true, None)?]),
        &[x],
        &[w],
    )
    .unwrap();
    assert_eq!(
        v[0].to_vec::<f64>().unwrap(),
        vec![1.0, 22.0, 0.0, 0.0, 0.0]
    );
}

/// Values MLX 0.32.4 gives: ties share the cotangent of max equally; cummax sends each
/// output's cotangent to the latest element equal to it.
#[test]
fn extremum_ties_follow_mlx() {
    let x = array(&[1.0, 3.0, 3.0, 2.0, 3.0], &[5]);
    let g = grad(|x: &Array| lazulite::max(x, Axes::All, false))(&x).unwrap();
    let third = 1.0 / 3.0;
    assert_eq!(
        g.to_vec::<f64>().unwrap(),
        vec![0.0, third, third, 0.0, third]
    );
    let cummax_vjp = |inclusive: bool, w: &[f64]| {
        let (_, v) = vjp(
            |p| Ok(vec![lazulite::cummax(&p[0], None, false, inclusive)?]),
            std::slice::from_ref(&x),
            &[array(w, &[5])],
        )
        .unwrap();
        v[0].to_vec::<f64>().unwrap()
    };
    assert_eq!(cummax_vjp(true, &[1.0; 5]), vec![1.0, 1.0, 2.0, 0.0, 1.0]);
    assert_eq!(
        cummax_vjp(false, &[1.0, 2.0, 3.0, 4.0, 5.0]),
        vec![2.0, 3.0, 9.0, 0.0, 0.0]
    );
    let g = grad(|x: &Array| lazulite::min(&lazulite::negative(x)?, Axes::All, false))(&x).unwrap();
    assert_eq!(
        g.to_vec::<f64>().unwrap(),
        vec![0.0, -third, -third, 0.0, -third]
    );
}

#[test]
fn logcumsumexp_derivatives_stay_finite_for_large_values() {
    let big = array(&[1000.0, 999.0, -1000.0, 1001.0], &[4]);
    let (_, v) = vjp(
        |p| Ok(vec![lazulite::logcumsumexp(&p[0], None, false, true)?]),
        std::slice::from_ref(&big),
        &[array(&[1.0, -2.0, 0.5, 1.0], &[4])],
    )
    .unwrap();
    assert!(v[0].to_vec::<f64>().unwrap().iter().all(|g| g.is_finite()));
}

/// vmap composes with grad through the new rules.
#[test]
fn grad_of_vmapped_reduction() {
    let x = array(&uniform(95, 12, 0.5, 1.5), &[3, 4]);
    let per_row = vmap(
        |p| Ok(vec![lazulite::prod(&p[0], Axes::All, false)?]),
        vec![Some(0)],
        vec![Some(0)],
    );
    let g = grad(move |x: &Array| {
        lazulite::sum(&per_row(std::slice::from_ref(x))?[0], Axes::All, false)
    });
    let got = g(&x).unwrap().to_vec::<f64>().unwrap();
    let values = x.to_vec::<f64>().unwrap();
    for r in 0..3 {
        let row = &values[r * 4..r * 4 + 4];
        let total: f64 = row.iter().product();
        for c in 0..4 {
            assert!((got[r * 4 + c] - total / row[c]).abs() < 1e-12);
        }
    }
}

fn guide_loss(w: &Array, x: &Array, y: &Array) -> Result<Array> {
    let diff = lazulite::subtract(&lazulite::multiply(w, x)?, y)?;
    lazulite::mean(&diff.square()?, Axes::All, false)
}

fn guide_data() -> (Array, Array, Array) {
    (
        Array::scalar(1.0f32),
        Array::from_slice(&[0.5f32, -0.5], &[2]).unwrap(),
        Array::from_slice(&[1.5f32, -1.5], &[2]).unwrap(),
    )
}

#[test]
fn guide_loss_gradients() {
    let (w, x, y) = guide_data();
    let loss = |p: &[Array]| Ok(vec![guide_loss(&p[0], &p[1], &p[2])?]);
    let (_, dw) = value_and_grad_argnums(loss, &[w.clone(), x.clone(), y.clone()], &[0]).unwrap();
    assert_eq!(dw[0].to_string(), "array(-1, dtype=float32)");
    let (_, dx) = value_and_grad_argnums(loss, &[w.clone(), x.clone(), y.clone()], &[1]).unwrap();
    assert_eq!(dx[0].to_string(), "array([-1, 1], dtype=float32)");
    let (value, dw) =
        value_and_grad_argnums(loss, &[w.clone(), x.clone(), y.clone()], &[0]).unwrap();
    assert_eq!(
        format!("{} {}", value[0], dw[0]),
        "array(1, dtype=float32) array(-1, dtype=float32)"
    );
    let (xc, yc) = (x.clone(), y.clone());
    let by_w = value_and_grad(move |w: &Array| guide_loss(w, &xc, &yc));
    let (value, dw) = by_w(&w).unwrap();
    assert_eq!(
        (value.item::<f32>().unwrap(), dw.item::<f32>().unwrap()),
        (1.0, -1.0)
    );
    let dw = grad(move |w: &Array| guide_loss(w, &x, &y))(&w).unwrap();
    assert_eq!(dw.item::<f32>().unwrap(), -1.0);
}

#[test]
fn guide_params_dict_gradients() {
    let (_, x, y) = guide_data();
    let loss = |params: &BTreeMap<String, Array>| -> Result<Array> {
        let h = lazulite::add(&lazulite::multiply(&params["weight"], &x)?, &params["bias"])?;
        lazulite::mean(&lazulite::subtract(&h, &y)?.square()?, Axes::All, false)
    };
    let params = BTreeMap::from([
        ("weight".to_string(), Array::scalar(1.0f32)),
        ("bias".to_string(), Array::scalar(0.0f32)),
    ]);
    let grads = grad(loss)(&params).unwrap();
    assert_eq!(grads["weight"].to_string(), "array(-1, dtype=float32)");
    assert_eq!(grads["bias"].to_string(), "array(0, dtype=float32)");
    let hashed: HashMap<String, Array> = params.into_iter().collect();
    let (x2, y2) = (x.clone(), y.clone());
    let grads = grad(move |p: &HashMap<String, Array>| {
        let h = lazulite::add(&lazulite::multiply(&p["weight"], &x2)?, &p["bias"])?;
        lazulite::mean(&lazulite::subtract(&h, &y2)?.square()?, Axes::All, false)
    })(&hashed)
    .unwrap();
    assert_eq!(grads["weight"].item::<f32>().unwrap(), -1.0);
    assert_eq!(grads["bias"].item::<f32>().unwrap(), 0.0);
}

#[test]
fn guide_stop_gradient() {
    // d/dx sum(stop_gradient(x) * x) = x: the stopped factor is a constant.
    let g = grad(|x: &Array| {
        lazulite::sum(
            &lazulite::multiply(&lazulite::stop_gradient(x)?, x)?,
            Axes::All,
            false,
        )
    });
    let x = Array::from_slice(&[1.0f32, -2.0, 3.0], &[3]).unwrap();
    assert_eq!(
        g(&x).unwrap().to_vec::<f32>().unwrap(),
        vec![1.0, -2.0, 3.0]
    );
    let only_stopped =
        grad(|x: &Array| lazulite::mean(&lazulite::stop_gradient(x)?, Axes::All, false));
    assert_eq!(
        only_stopped(&x).unwrap().to_vec::<f32>().unwrap(),
        vec![0.0; 3]
    );
}

#[test]
fn guide_vmap_add_matches_the_naive_loop() {
    let rows = if cfg!(debug_assertions) { 512 } else { 4096 };
    let xs = array(&uniform(97, rows * 100, 0.0, 1.0), &[rows, 100])
        .astype(DType::Float32)
        .unwrap();
    let ys = array(&uniform(98, 100 * rows, 0.0, 1.0), &[100, rows])
        .astype(DType::Float32)
        .unwrap();
    let vmap_add = vmap(
        |p| Ok(vec![lazulite::add(&p[0], &p[1])?]),
        vec![Some(0), Some(1)],
        vec![Some(0)],
    );
    let out = vmap_add(&[xs.clone(), ys.clone()]).unwrap();
    assert_eq!(out[0].shape(), &[rows, 100]);
    let got = out[0].to_vec::<f32>().unwrap();
    let (xv, yv) = (xs.to_vec::<f32>().unwrap(), ys.to_vec::<f32>().unwrap());
    for i in 0..rows {
        let naive = lazulite::add(
            lazulite::slice(&xs, &[i as i64, 0], &[i as i64 + 1, 100], &[1, 1])
                .unwrap()
                .reshape(&[100])
                .unwrap(),
            lazulite::slice(&ys, &[0, i as i64], &[100, i as i64 + 1], &[1, 1])
                .unwrap()
                .reshape(&[100])
                .unwrap(),
        )
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
        assert_eq!(&got[i * 100..(i + 1) * 100], &naive[..], "row {i}");
        assert_eq!(naive[7], xv[i * 100 + 7] + yv[7 * rows + i]);
    }
    // The brief's variant maps the other axes: (1, 0) pairs columns of xs with rows of ys.
    let swapped = vmap(
        |p| Ok(vec![lazulite::add(&p[0], &p[1])?]),
        vec![Some(1), Some(0)],
        vec![Some(0)],
    );
    let out = swapped(&[xs.clone(), ys.clone()]).unwrap();
    let expected = lazulite::add(xs.t().unwrap(), &ys).unwrap();
    assert_eq!(
        out[0].to_vec::<f32>().unwrap(),
        expected.to_vec::<f32>().unwrap()
    );
}

#[test]
fn view_and_stop_gradient_have_zero_derivatives() {
    let x = array(&uniform(40, 4, 0.5, 1.5), &[4]);
    let ones = array(&[1.0; 4], &[4]);
    let (out, g) = vjp(
        |p| {
            Ok(vec![
                lazulite::view(&p[0], DType::Int64)?.astype(DType::Float64)?
            ])
        },
        std::slice::from_ref(&x),
        std::slice::from_ref(&ones),
    )
    .unwrap();
    assert_eq!(out[0].shape(), &[4]);
    assert_eq!(g[0].to_vec::<f64>().unwrap(), vec![0.0; 4]);
    let (_, t) = jvp(
        |p| Ok(vec![lazulite::view(&p[0], DType::Complex64)?]),
        std::slice::from_ref(&x),
        std::slice::from_ref(&ones),
    )
    .unwrap();
    assert_eq!(t[0].to_vec::<f64>().unwrap(), vec![0.0; 4]);
    // d/dx (x * stop_gradient(x)) = stop_gradient(x): the stopped factor counts as constant.
    let (_, g) = vjp(
        |p| {
            Ok(vec![lazulite::multiply(
                &p[0],
                &lazulite::stop_gradient(&p[0])?,
            )?])
        },
        std::slice::from_ref(&x),
        std::slice::from_ref(&ones),
    )
    .unwrap();
    assert_eq!(g[0].to_vec::<f64>().unwrap(), x.to_vec::<f64>().unwrap());
    let (_, t) = jvp(
        |p| Ok(vec![lazulite::stop_gradient(&p[0].square()?)?]),
        std::slice::from_ref(&x),
        &[ones],
    )
    .unwrap();
    assert_eq!(t[0].to_vec::<f64>().unwrap(), vec![0.0; 4]);
}

/// Per-example vjp of `f` stacked, for comparing with transforms of `vmap(f)`.
fn looped_vjp(f: &Fun, xs: &Array, cots: &Array) -> Vec<f64> {
    let n = xs.shape()[0];
    let mut out = vec![];
    for i in 0..n {
        let x = lazulite::unstack(xs, 0).unwrap()[i].clone();
        let c = lazulite::unstack(cots, 0).unwrap()[i].clone();
        let (_, g) = vjp(|p| Ok(vec![f(p)?]), &[x], &[c]).unwrap();
        out.extend(g[0].to_vec::<f64>().unwrap());
    }
    out
}

fn assert_close(name: &str, got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{name}: lengths");
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= 1e-9 * (1.0 + w.abs()),
            "{name}: {got:?} vs {want:?}"
        );
    }
}

fn mixed(p: &[Array]) -> Result<Array> {
    let x = &p[0];
    let d = lazulite::diagonal(&lazulite::concatenate(&[x.clone(), x.sin()?], 0)?, 1, 0, 1)?;
    let s = lazulite::where_(lazulite::greater(&d, 0.5)?, &d.square()?, &d)?;
    lazulite::trace(
        &lazulite::pad(
            &lazulite::stack(&[s.clone(), s.exp()?], 0)?,
            &[(0, 0), (1, 0)],
            "constant",
            0.0,
        )?,
        0,
        0,
        1,
        None,
    )
}

#[test]
fn transforms_compose_through_these_ops() {
    let xs = array(&uniform(60, 36, 0.1, 0.9), &[3, 3, 4]);
    let x = lazulite::unstack(&xs, 0).unwrap()[0].clone();
    // vjp(vmap(f)) against a loop of vjp(f).
    let cots = array(&uniform(61, 3, -1.0, 1.0), &[3]);
    let (_, g) = vjp(
        |p| vmap(|q| Ok(vec![mixed(q)?]), vec![Some(0)], vec![Some(0)])(p),
        std::slice::from_ref(&xs),
        std::slice::from_ref(&cots),
    )
    .unwrap();
    assert_close(
        "vjp(vmap)",
        &g[0].to_vec::<f64>().unwrap(),
        &looped_vjp(&mixed, &xs, &cots),
    );
    // vmap(grad(f)) against the same loop with unit cotangents.
    let gm = vmap(
        |q| {
            Ok(vec![grad(|x: &Array| mixed(std::slice::from_ref(x)))(
                &q[0],
            )?])
        },
        vec![Some(0)],
        vec![Some(0)],
    )(std::slice::from_ref(&xs))
    .unwrap();
    let ones = array(&[1.0; 3], &[3]);
    assert_close(
        "vmap(grad)",
        &gm[0].to_vec::<f64>().unwrap(),
        &looped_vjp(&mixed, &xs, &ones),
    );
    // jvp(grad(f)): a Hessian-vector product, against central differences of grad.
    let v = array(&uniform(62, 12, -1.0, 1.0), &[3, 4]);
    let g_of = |x: &Array| {
        grad(|x: &Array| mixed(std::slice::from_ref(x)))(x)
            .unwrap()
            .to_vec::<f64>()
            .unwrap()
    };
    let (_, hv) = jvp(
        |p| {
            Ok(vec![grad(|x: &Array| mixed(std::slice::from_ref(x)))(
                &p[0],
            )?])
        },
        std::slice::from_ref(&x),
        std::slice::from_ref(&v),
    )
    .unwrap();
    let eps = 1e-6;
    let (gp, gn) = (
        g_of(&lazulite::add(&x, lazulite::multiply(&v, eps).unwrap()).unwrap()),
        g_of(&lazulite::subtract(&x, lazulite::multiply(&v, eps).unwrap()).unwrap()),
    );
    let fd: Vec<f64> = gp
        .iter()
        .zip(&gn)
        .map(|(a, b)| (a - b) / (2.0 * eps))
        .collect();
    for (a, b) in hv[0].to_vec::<f64>().unwrap().iter().zip(&fd) {
        assert!(
            (a - b).abs() < 1e-5 * (1.0 + b.abs()),
            "jvp(grad): {a} vs {b}"
        );
    }
    // vmap(vmap(f)) against a double loop.
    let inner = |q: &[Array]| {
        Ok(vec![lazulite::diagonal(
            &lazulite::pad(&q[0], &[(1, 1)], "edge", 0)?,
            0,
            0,
            -1,
        )?])
    };
    let xss = array(&uniform(63, 2 * 3 * 12, 0.0, 1.0), &[2, 3, 3, 4]);
    let vv = vmap(
        vmap(inner, vec![Some(0)], vec![Some(0)]),
        vec![Some(1)],
        vec![Some(-1)],
    )(std::slice::from_ref(&xss))
    .unwrap();
    assert_eq!(vv[0].shape(), &[2, 5, 3]);
    for i in 0..2 {
        for j in 0..3 {
            let xi =
                lazulite::unstack(&lazulite::unstack(&xss, 1).unwrap()[j], 0).unwrap()[i].clone();
            let want = inner(&[xi]).unwrap()[0].to_vec::<f64>().unwrap();
            let got = lazulite::unstack(&lazulite::unstack(&vv[0], -1).unwrap()[j], 0).unwrap()[i]
                .to_vec::<f64>()
                .unwrap();
            assert_close("vmap(vmap)", &got, &want);
        }
    }
}

#[test]
fn custom_function_uses_the_given_rules() {
    let vjp_calls = Arc::new(AtomicUsize::new(0));
    let counter = vjp_calls.clone();
    let f = custom_function(|x: &[Array]| Ok(vec![x[0].sin()?, lazulite::multiply(&x[0], &x[1])?]))
        .vjp(move |p, c, _| {
            counter.fetch_add(1, Ordering::Relaxed);
            // A deliberately scaled gradient proves the rule is used.
            Ok(vec![
                lazulite::multiply(
                    &lazulite::add(
                        &lazulite::multiply(&c[0], &p[0].cos()?)?,
                        &lazulite::multiply(&c[1], &p[1])?,
                    )?,
                    3.0,
                )?,
                lazulite::multiply(&c[1], &p[0])?,
            ])
        })
        .jvp(|p, t| {
            Ok(vec![
                lazulite::multiply(&t[0], 5.0)?,
                lazulite::add(
                    &lazulite::multiply(&t[0], &p[1])?,
                    &lazulite::multiply(&t[1], &p[0])?,
                )?,
            ])
        });
    let (a, b) = (array(&[0.5, 1.0], &[2]), array(&[2.0, 3.0], &[2]));
    let out = f.call(&[a.clone(), b.clone()]).unwrap();
    assert_close(
        "forward",
        &out[0].to_vec::<f64>().unwrap(),
        &[0.5f64.sin(), 1.0f64.sin()],
    );
    let ones = array(&[1.0, 1.0], &[2]);
    let (_, g) = vjp(
        |p| f.call(p),
        &[a.clone(), b.clone()],
        &[ones.clone(), ones.clone()],
    )
    .unwrap();
    let want: Vec<f64> = [(0.5f64, 2.0), (1.0, 3.0)]
        .iter()
        .map(|(x, y)| 3.0 * (x.cos() + y))
        .collect();
    assert_close("custom vjp", &g[0].to_vec::<f64>().unwrap(), &want);
    assert_close("custom vjp b", &g[1].to_vec::<f64>().unwrap(), &[0.5, 1.0]);
    assert_eq!(vjp_calls.load(Ordering::Relaxed), 1);
    let (_, t) = jvp(
        |p| f.call(p),
        &[a.clone(), b.clone()],
        &[ones.clone(), ones.clone()],
    )
    .unwrap();
    assert_close("custom jvp", &t[0].to_vec::<f64>().unwrap(), &[5.0, 5.0]);
    assert_close("custom jvp 2", &t[1].to_vec::<f64>().unwrap(), &[2.5, 4.0]);
    // Only the first argument differentiated: the rule's other cotangent is dropped.
    let (_, g) = lazulite::value_and_grad_argnums(
        |p| {
            Ok(vec![lazulite::trace(
                &lazulite::diag(&f.call(p)?[0], 0)?,
                0,
                0,
                1,
                None,
            )?])
        },
        &[a.clone(), b.clone()],
        &[0],
    )
    .unwrap();
    assert_close(
        "argnums",
        &g[0].to_vec::<f64>().unwrap(),
        &[3.0 * 0.5f64.cos(), 3.0 * 1.0f64.cos()],
    );
}

#[test]
fn custom_function_vmap_rule_is_used_and_a_bad_rule_is_an_error() {
    let vmap_calls = Arc::new(AtomicUsize::new(0));
    let counter = vmap_calls.clone();
    let f = custom_function(|x: &[Array]| {
        Ok(vec![lazulite::concatenate(
            &[x[0].clone(), x[0].square()?],
            0,
        )?])
    })
    .vmap(move |x, axes| {
        counter.fetch_add(1, Ordering::Relaxed);
        let ax = axes[0].unwrap() as i32;
        Ok((
            vec![lazulite::concatenate(
                &[x[0].clone(), x[0].square()?],
                1 - ax,
            )?],
            vec![axes[0]],
        ))
    });
    let xs = array(&uniform(70, 6, 0.0, 1.0), &[3, 2]);
    let g = f.clone();
    check_vmap(
        "custom vmap",
        &move |p: &[Array]| Ok(g.call(p)?.remove(0)),
        std::slice::from_ref(&xs),
        vec![Some(-1)],
        0,
    );
    assert!(vmap_calls.load(Ordering::Relaxed) >= 1);
    // A rule returning the wrong number of cotangents is an error, not a panic.
    let bad = custom_function(|x: &[Array]| Ok(vec![x[0].sin()?])).vjp(|_, _, _| Ok(vec![]));
    let err = vjp(
        |p| bad.call(p),
        std::slice::from_ref(&xs),
        std::slice::from_ref(&xs),
    )
    .unwrap_err();
    assert_eq!(err.kind(), lazulite::ErrorKind::Value);
}

#[test]
fn checkpoint_gives_the_same_gradient_and_keeps_no_intermediates() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let body = move |x: &[Array]| {
        counter.fetch_add(1, Ordering::Relaxed);
        let h = lazulite::concatenate(&[x[0].sin()?, x[0].exp()?], 1)?;
        Ok(vec![lazulite::trace(
            &lazulite::where_(lazulite::greater(&h, 1.0)?, &h.square()?, &h)?,
            0,
            0,
            1,
            None,
        )?])
    };
    let plain = body.clone();
    let ck = checkpoint(body);
    let x = array(&uniform(80, 12, 0.0, 1.0), &[3, 4]);
    let (v1, g1) =
        lazulite::value_and_grad(|x: &Array| Ok(plain(std::slice::from_ref(x))?.remove(0)))(&x)
            .unwrap();
    calls.store(0, Ordering::Relaxed);
    let (v2, g2) =
        lazulite::value_and_grad(|x: &Array| Ok(ck(std::slice::from_ref(x))?.remove(0)))(&x)
            .unwrap();
    assert_close(
        "value",
        &v2.to_vec::<f64>().unwrap(),
        &v1.to_vec::<f64>().unwrap(),
    );
    assert_close(
        "grad",
        &g2.to_vec::<f64>().unwrap(),
        &g1.to_vec::<f64>().unwrap(),
    );
    // Once for the forward, once more when the backward pass recomputes it.
    assert_eq!(calls.load(Ordering::Relaxed), 2);
}

#[test]
fn sort_vjp_sends_each_cotangent_to_its_source() {
    // sort([3, 1, 2]) = [1, 2, 3]: cotangent [10, 20, 30] goes back to [30, 10, 20].
    let x = array(&[3.0, 1.0, 2.0], &[3]);
    let g = array(&[10.0, 20.0, 30.0], &[3]);
    let (_, grads) = vjp(|p| Ok(vec![lazulite::sort(&p[0], Some(0))?]), &[x], &[g]).unwrap();
    assert_eq!(grads[0].to_vec::<f64>().unwrap(), vec![30.0, 10.0, 20.0]);
}

#[test]
fn extremum_scatter_ties_send_the_whole_cotangent_to_every_winner_as_mlx() {
    // MLX 0.32.4: a = [1, 2, 3], at[[0, 0, 1]] with u = [1, 0.5, 5], cotangent [1, 10, 100]:
    // maximum -> da = [1, 0, 100], du = [1, 0, 10]; minimum -> da = [0, 10, 100], du = [0, 1, 0].
    let a = array(&[1.0, 2.0, 3.0], &[3]);
    let u = array(&[1.0, 0.5, 5.0], &[3]);
    let i = Array::from_slice(&[0i32, 0, 1], &[3]).unwrap();
    let g = array(&[1.0, 10.0, 100.0], &[3]);
    let grads = |maximum: bool| {
        let (_, d) = vjp(
            |p| {
                let target = at(&p[0], &idx![&i]);
                Ok(vec![if maximum {
                    target.maximum(&p[1])?
                } else {
                    target.minimum(&p[1])?
                }])
            },
            &[a.clone(), u.clone()],
            std::slice::from_ref(&g),
        )
        .unwrap();
        (d[0].to_vec::<f64>().unwrap(), d[1].to_vec::<f64>().unwrap())
    };
    assert_eq!(grads(true), (vec![1.0, 0.0, 100.0], vec![1.0, 0.0, 10.0]));
    assert_eq!(grads(false), (vec![0.0, 10.0, 100.0], vec![0.0, 1.0, 0.0]));
}

#[test]
fn product_scatter_gradient_of_a_is_the_product_of_its_updates() {
    // a = [2, 3], at[[0, 0, 0]] *= [4, 0.5, 3]: d/da = [6, 1], d/du = 2 * [1.5, 12, 2].
    let a = array(&[2.0, 3.0], &[2]);
    let u = array(&[4.0, 0.5, 3.0], &[3]);
    let i = Array::from_slice(&[0i32, 0, 0], &[3]).unwrap();
    let (_, d) = vjp(
        |p| Ok(vec![at(&p[0], &idx![&i]).multiply(&p[1])?]),
        &[a, u],
        &[array(&[1.0, 1.0], &[2])],
    )
    .unwrap();
    assert_eq!(d[0].to_vec::<f64>().unwrap(), vec![6.0, 1.0]);
    assert_eq!(d[1].to_vec::<f64>().unwrap(), vec![3.0, 24.0, 4.0]);
}
