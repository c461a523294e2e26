//! Transform rules of the shape, ternary and creation ops, custom functions and
//! checkpointing: derivatives against float64 central differences, batching against a loop.

use crate::common;
use common::{array, check_derivatives, check_vmap, uniform, Fun};

use lazulite::{grad, jvp, vjp, vmap, Array, DType, Result};

use lazulite::{checkpoint, custom_function, Axes};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn inputs() -> (Array, Array, Array, Array) {
    let x = array(&uniform(21, 12, 0.1, 0.9), &[3, 4]);
    // Transposed (strided) and broadcast (stride 0) inputs.
    let t = lazulite::transpose(&array(&uniform(22, 12, 0.1, 0.9), &[4, 3]), &[1, 0]).unwrap();
    let b = lazulite::broadcast_to(&array(&uniform(23, 4, 0.1, 0.9), &[4]), &[3, 4]).unwrap();
    let r = lazulite::slice(
        &array(&uniform(24, 24, 0.1, 0.9), &[6, 4]),
        &[5, 0],
        &[i64::MIN, 4],
        &[-2, 1],
    )
    .unwrap();
    (x, t, b, r)
}

type Case = (&'static str, Box<Fun<'static>>);

fn case(name: &'static str, f: impl Fn(&[Array]) -> Result<Array> + 'static) -> Case {
    (name, Box::new(f))
}

fn one_input_cases() -> Vec<Case> {
    vec![
        case("concatenate", |p| {
            lazulite::concatenate(&[p[0].clone(), p[0].sin()?], 1)
        }),
        case("concatenate -2", |p| {
            lazulite::concatenate(&[p[0].clone(), p[0].square()?, p[0].clone()], -2)
        }),
        case("diagonal", |p| lazulite::diagonal(&p[0], 0, 0, 1)),
        case("diagonal +1", |p| lazulite::diagonal(&p[0], 1, 0, 1)),
        case("diagonal -1 swapped", |p| {
            lazulite::diagonal(&p[0], -1, 1, 0)
        }),
        case("diagonal 3-d", |p| {
            lazulite::diagonal(&lazulite::reshape(&p[0], &[3, 2, 2])?, 1, 2, 0)
        }),
        case("as_strided windows", |p| {
            lazulite::as_strided(&p[0], Some(&[5, 4]), Some(&[2, 1]), 0)
        }),
        case("as_strided negative", |p| {
            lazulite::as_strided(&p[0], Some(&[3, 3]), Some(&[-4, 1]), 8)
        }),
        case("contiguous", |p| lazulite::contiguous(&p[0].t()?, false)),
        case("where", |p| {
            lazulite::where_(lazulite::greater(&p[0], 0.5)?, p[0].sin()?, p[0].square()?)
        }),
        case("clip", |p| {
            lazulite::clip(&p[0], Some(0.3.into()), Some(0.7.into()))
        }),
        case("nan_to_num", |p| {
            lazulite::nan_to_num(&p[0], 0.0, None, None)
        }),
        case("pad constant", |p| {
            lazulite::pad(&p[0], &[(1, 2), (0, 1)], "constant", 0.5)
        }),
        case("pad edge", |p| lazulite::pad(&p[0], &[(2, 1)], "edge", 0)),
        case("pad reflect", |p| {
            lazulite::pad(&p[0], &[(2, 3)], "reflect", 0)
        }),
        case("pad symmetric", |p| {
            lazulite::pad(&p[0], &[(1, 4)], "symmetric", 0)
        }),
        case("tile", |p| lazulite::tile(&p[0], &[2, 1, 2])),
        case("repeat", |p| lazulite::repeat(&p[0], 3, 1)),
        case("repeat flat", |p| lazulite::repeat(&p[0], 2, None)),
        case("roll", |p| lazulite::roll(&p[0], [1, -1], [0, 1])),
        case("roll flat", |p| lazulite::roll(&p[0], 5, Axes::All)),
        case("flip", |p| lazulite::flip(&p[0], Axes::All)),
        case("split", |p| {
            Ok(lazulite::split(&p[0], [1, 3], 1)?[1].clone())
        }),
        case("stack", |p| {
            lazulite::stack(&[p[0].clone(), p[0].exp()?], -1)
        }),
        case("unstack", |p| Ok(lazulite::unstack(&p[0], 1)?[2].clone())),
        case("meshgrid", |p| {
            let g = lazulite::meshgrid(
                &[lazulite::flatten(&p[0], 0, -1)?, p[0].sin()?],
                false,
                "xy",
            )?;
            lazulite::multiply(&g[0], &g[1])
        }),
        case("tril", |p| lazulite::tril(&p[0], 1)),
        case("triu", |p| lazulite::triu(&p[0], -1)),
        case("diag of matrix", |p| lazulite::diag(&p[0], -1)),
        case("diag of vector", |p| {
            lazulite::diag(&lazulite::flatten(&p[0], 0, -1)?, 2)
        }),
        case("trace", |p| lazulite::trace(&p[0], 1, 0, 1, None)),
        case("moveaxis squeeze expand", |p| {
            let e = lazulite::expand_dims(&lazulite::moveaxis(&p[0], 0, -1)?, [0])?;
            lazulite::squeeze(&lazulite::swapaxes(&e, 1, 2)?, 0)
        }),
        case("unflatten atleast_3d", |p| {
            lazulite::atleast_3d(&lazulite::unflatten(
                &lazulite::flatten(&p[0], 0, -1)?,
                0,
                &[2, -1],
            )?)
        }),
    ]
}

#[test]
fn shape_and_ternary_derivatives_match_finite_differences() {
    let (x, t, b, r) = inputs();
    for (name, f) in one_input_cases() {
        for (layout, input) in [
            ("contiguous", &x),
            ("transposed", &t),
            ("broadcast", &b),
            ("reversed", &r),
        ] {
            check_derivatives(
                &format!("{name} ({layout})"),
                f.as_ref(),
                std::slice::from_ref(input),
            );
        }
    }
}

#[test]
fn two_input_derivatives_match_finite_differences() {
    let (x, t, b, r) = inputs();
    let cond = lazulite::greater(array(&uniform(30, 12, 0.0, 1.0), &[3, 4]), 0.5).unwrap();
    let cases: Vec<Case> = vec![
        case("concatenate", |p| {
            lazulite::concatenate(&[p[0].clone(), p[1].clone()], 0)
        }),
        case("where", move |p| lazulite::where_(&cond, &p[0], &p[1])),
        case("where broadcast", |p| {
            lazulite::where_(
                lazulite::less(&p[0], &p[1])?,
                &p[0],
                &lazulite::slice(&p[1], &[0, 0], &[1, 4], &[1, 1])?,
            )
        }),
        case("stack", |p| {
            lazulite::stack(&[p[0].clone(), p[1].clone()], 1)
        }),
        case("meshgrid ij sparse", |p| {
            let g = lazulite::meshgrid(
                &[
                    lazulite::diagonal(&p[0], 0, 0, 1)?,
                    lazulite::flatten(&p[1], 0, -1)?,
                ],
                true,
                "ij",
            )?;
            lazulite::add(&g[0], &g[1])
        }),
    ];
    for (name, f) in cases {
        check_derivatives(name, f.as_ref(), &[x.clone(), t.clone()]);
        check_derivatives(name, f.as_ref(), &[b.clone(), r.clone()]);
    }
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

#[test]
fn batching_rules_match_a_loop() {
    let x = array(&uniform(50, 60, 0.1, 0.9), &[5, 3, 4]);
    let y = array(&uniform(51, 12, 0.1, 0.9), &[3, 4]);
    let w = array(&uniform(52, 60, 0.1, 0.9), &[3, 4, 5]);
    for (name, f) in one_input_cases() {
        check_vmap(name, f.as_ref(), std::slice::from_ref(&x), vec![Some(0)], 0);
        check_vmap(
            name,
            f.as_ref(),
            std::slice::from_ref(&w),
            vec![Some(-1)],
            -1,
        );
    }
    let cond = lazulite::greater(&y, 0.5).unwrap();
    let two: Vec<Case> = vec![
        case("concatenate", |p| {
            lazulite::concatenate(&[p[0].clone(), p[1].clone()], 1)
        }),
        case("where", move |p| lazulite::where_(&cond, &p[0], &p[1])),
        case("where batched condition", |p| {
            lazulite::where_(lazulite::less(&p[0], 0.5)?, &p[1], 0.0)
        }),
        case("stack", |p| {
            lazulite::stack(&[p[0].clone(), p[1].clone()], 0)
        }),
        case("arange inside", |p| {
            lazulite::add(
                &p[0],
                &lazulite::add(&p[1], &lazulite::arange(0.0, 4.0, 1.0, DType::Float64)?)?,
            )
        }),
        case("eye inside", |p| {
            lazulite::add(
                &lazulite::multiply(&p[0], &p[1])?,
                &lazulite::eye(3, Some(4), 1, DType::Float64)?,
            )
        }),
    ];
    let x2 = lazulite::swapaxes(&x, 0, 1).unwrap(); // (3, 5, 4), mapped along axis 1
    for (name, f) in two {
        check_vmap(
            name,
            f.as_ref(),
            &[x.clone(), y.clone()],
            vec![Some(0), None],
            1,
        );
        check_vmap(
            name,
            f.as_ref(),
            &[x2.clone(), x.clone()],
            vec![Some(1), Some(0)],
            -2,
        );
    }
    // View: bits of every example reinterpreted (the last axis changes size).
    check_vmap(
        "view",
        &|p: &[Array]| lazulite::view(&p[0], DType::UInt16),
        &[x.astype(DType::Float32).unwrap()],
        vec![Some(-1)],
        0,
    );
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
fn custom_function_vmap_rule_and_fallbacks() {
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
    // Without rules, every transform goes through the function itself.
    let plain = custom_function(|x: &[Array]| {
        Ok(vec![lazulite::diagonal(
            &lazulite::tile(&x[0].sin()?, &[2, 1])?,
            1,
            0,
            1,
        )?])
    });
    let p1 = plain.clone();
    check_derivatives(
        "fallback",
        &move |p: &[Array]| Ok(p1.call(p)?.remove(0)),
        std::slice::from_ref(&xs),
    );
    let p2 = plain.clone();
    check_vmap(
        "fallback vmap",
        &move |p: &[Array]| Ok(p2.call(p)?.remove(0)),
        &[array(&uniform(71, 24, 0.0, 1.0), &[4, 3, 2])],
        vec![Some(0)],
        1,
    );
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
    check_derivatives("checkpoint", &move |p: &[Array]| Ok(ck(p)?.remove(0)), &[x]);
}
