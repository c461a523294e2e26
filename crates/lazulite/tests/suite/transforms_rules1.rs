//! Derivative and batching rules of broadcast, the reductions, the scans, the sorts and
//! the matrix products: vjp and jvp against float64 central differences along random
//! directions, vmap against a loop over the mapped axis; and the guide's function
//! transform examples that use `mean`.

use crate::common;
use common::{array, check_derivatives, check_vmap, uniform, Fun};

use lazulite::{
    grad, value_and_grad, value_and_grad_argnums, vjp, vmap, Array, Axes, DType, Result,
};
use std::collections::{BTreeMap, HashMap};

/// A transposed view of a fresh `[rows, cols]` array: shape `[cols, rows]`, strided.
fn transposed(seed: u64, rows: usize, cols: usize) -> Array {
    array(&uniform(seed, rows * cols, -1.0, 1.0), &[rows, cols])
        .t()
        .unwrap()
}

#[test]
fn broadcast_derivatives_match_finite_differences() {
    let row = array(&uniform(1, 4, -1.0, 1.0), &[4]);
    let column = array(&uniform(2, 3, -1.0, 1.0), &[3, 1]);
    let middle = array(&uniform(3, 6, -1.0, 1.0), &[2, 1, 3]);
    let scalar = array(&[0.7], &[]);
    let cases: Vec<(&str, Vec<usize>, Array)> = vec![
        ("leading", vec![2, 3, 4], row.clone()),
        ("stretched", vec![3, 5], column.clone()),
        ("leading and stretched", vec![2, 3, 5], column),
        ("middle", vec![4, 2, 5, 3], middle),
        ("scalar", vec![2, 2], scalar),
        ("identity", vec![4], row),
        ("strided", vec![2, 3, 4], transposed(4, 4, 3)),
    ];
    for (name, shape, x) in cases {
        check_derivatives(
            name,
            &move |p: &[Array]| lazulite::broadcast_to(&p[0], &shape)?.sin(),
            &[x],
        );
    }
    // Broadcasting binary ops: the gradient of the smaller operand sums.
    let a = array(&uniform(5, 12, -1.0, 1.0), &[3, 4]);
    let b = array(&uniform(6, 4, 0.5, 1.0), &[4]);
    check_derivatives(
        "multiply broadcast",
        &|p: &[Array]| lazulite::multiply(&p[0], &p[1]),
        &[a.clone(), b.clone()],
    );
    check_derivatives(
        "divide broadcast",
        &|p: &[Array]| lazulite::divide(&p[0], &p[1]),
        &[a, b],
    );
}

#[test]
fn vjp_through_broadcasting_add() {
    let x = Array::from_slice(&[0.0f32, 0.0], &[2]).unwrap();
    let column = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3, 1]).unwrap();
    let ones = lazulite::ones(&[3, 2], lazulite::DType::Float32).unwrap();
    let (_, g) = vjp(|p| Ok(vec![lazulite::add(&p[0], &column)?]), &[x], &[ones]).unwrap();
    assert_eq!(g[0].to_vec::<f32>().unwrap(), vec![3.0, 3.0]);
}

/// `f(x) + g(x)` where `g` has an integer or bool result: its derivative must be zero.
fn plus_constant(x: &Array, constant: impl Fn(&Array) -> Result<Array>) -> Result<Array> {
    lazulite::add(x, &constant(x)?.astype(DType::Float64)?)
}

fn inputs_2x4() -> Vec<(&'static str, Array)> {
    let x = array(&uniform(31, 12, 0.5, 1.5), &[3, 4]);
    vec![
        ("contiguous", x.clone()),
        ("transposed", transposed(32, 4, 3)),
        (
            "sliced",
            lazulite::slice(
                &array(&uniform(33, 30, 0.5, 1.5), &[5, 6]),
                &[4, 5],
                &[-6, 0],
                &[-2, -1],
            )
            .unwrap()
            .exp()
            .unwrap(),
        ),
        (
            "broadcast",
            lazulite::broadcast_to(&array(&uniform(34, 4, 0.5, 1.5), &[4]), &[3, 4]).unwrap(),
        ),
    ]
}

type Rule = (&'static str, Box<Fun<'static>>);

type UnaryOp = fn(&Array) -> Result<Array>;

fn unary_cases(cases: Vec<(&'static str, UnaryOp)>) -> Vec<Rule> {
    cases
        .into_iter()
        .map(|(name, op)| {
            let f: Box<Fun<'static>> = Box::new(move |p: &[Array]| op(&p[0]));
            (name, f)
        })
        .collect()
}

fn reduction_cases() -> Vec<Rule> {
    unary_cases(vec![
        ("sum axis 0", |x| lazulite::sum(x, 0, false)),
        ("sum all keepdims", |x| lazulite::sum(x, Axes::All, true)),
        ("sum axes [-1, 0]", |x| lazulite::sum(x, [-1, 0], false)),
        ("sum no axes", |x| {
            lazulite::sum(x, Vec::<i32>::new(), false)
        }),
        ("prod axis -1", |x| lazulite::prod(x, -1, false)),
        ("prod all", |x| lazulite::prod(x, Axes::All, false)),
        ("prod axis 0 keepdims", |x| lazulite::prod(x, 0, true)),
        ("max axis 1", |x| lazulite::max(x, 1, false)),
        ("max all keepdims", |x| lazulite::max(x, Axes::All, true)),
        ("min axis 0", |x| lazulite::min(x, 0, true)),
        ("mean", |x| lazulite::mean(x, -1, false)),
        ("var", |x| lazulite::var(x, 0, false, 1)),
        ("logsumexp", |x| lazulite::logsumexp(x, 1, false)),
        ("softmax", |x| lazulite::softmax(x, -1, false)),
        ("median axis 1 (even)", |x| lazulite::median(x, 1, false)),
        ("median axis 0 (odd)", |x| lazulite::median(x, 0, true)),
        ("median all", |x| lazulite::median(x, Axes::All, false)),
        ("argmax", |x| {
            plus_constant(x, |x| lazulite::argmax(x, Some(1), true))
        }),
        ("argmin", |x| {
            plus_constant(x, |x| lazulite::argmin(x, None, true))
        }),
        ("all", |x| plus_constant(x, |x| lazulite::all(x, 0, true))),
        ("any", |x| {
            plus_constant(x, |x| lazulite::any(x, Axes::All, false))
        }),
    ])
}

#[test]
fn reduction_derivatives_match_finite_differences() {
    for (layout, x) in inputs_2x4() {
        for (name, f) in reduction_cases() {
            let ties_matter = ["max", "min", "median", "argm"];
            if layout == "broadcast" && ties_matter.iter().any(|t| name.starts_with(t)) {
                // Repeated values tie: the derivatives (or positions) jump there.
                continue;
            }
            check_derivatives(
                &format!("{name} ({layout})"),
                f.as_ref(),
                std::slice::from_ref(&x),
            );
        }
    }
}

#[test]
fn prod_derivatives_with_zeros() {
    let one_zero = array(&[2.0, 0.0, 3.0, 0.5, 1.5, -1.0], &[2, 3]);
    let two_zeros = array(&[0.0, 0.0, 3.0, 0.5, 0.0, -1.0], &[2, 3]);
    for x in [one_zero, two_zeros] {
        for (name, f) in unary_cases(vec![
            ("prod axis 1", |x| lazulite::prod(x, 1, false)),
            ("prod all", |x| lazulite::prod(x, Axes::All, false)),
            ("cumprod", |x| {
                lazulite::cumprod(x, Some(1), false, true, None)
            }),
            ("cumprod reverse", |x| {
                lazulite::cumprod(x, Some(1), true, true, None)
            }),
            ("cumprod exclusive", |x| {
                lazulite::cumprod(x, None, false, false, None)
            }),
            ("cumprod reverse exclusive", |x| {
                lazulite::cumprod(x, Some(0), true, false, None)
            }),
        ]) {
            check_derivatives(name, f.as_ref(), std::slice::from_ref(&x));
        }
    }
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

fn scan_cases() -> Vec<Rule> {
    let mut cases: Vec<Rule> = Vec::new();
    type ScanFn = fn(&Array, Option<i32>, bool, bool) -> Result<Array>;
    let ops: Vec<(&str, ScanFn)> = vec![
        ("cumsum", |x, a, r, i| lazulite::cumsum(x, a, r, i, None)),
        ("cumprod", |x, a, r, i| lazulite::cumprod(x, a, r, i, None)),
        ("cummax", lazulite::cummax),
        ("cummin", lazulite::cummin),
        ("logcumsumexp", lazulite::logcumsumexp),
    ];
    for (name, op) in ops {
        for axis in [Some(0), Some(-1), None] {
            for reverse in [false, true] {
                for inclusive in [true, false] {
                    let label =
                        format!("{name} axis={axis:?} reverse={reverse} inclusive={inclusive}");
                    let f: Box<Fun<'static>> = Box::new(move |p: &[Array]| {
                        let y = op(&p[0], axis, reverse, inclusive)?;
                        // Exclusive cummax/cummin start at -inf/inf: keep the output finite.
                        lazulite::clip(&y, Some((-10.0f64).into()), Some(10.0f64.into()))
                    });
                    cases.push((Box::leak(label.into_boxed_str()), f));
                }
            }
        }
    }
    cases
}

#[test]
fn scan_derivatives_match_finite_differences() {
    for (layout, x) in inputs_2x4() {
        if layout == "broadcast" {
            continue;
        }
        for (name, f) in scan_cases() {
            check_derivatives(
                &format!("{name} ({layout})"),
                f.as_ref(),
                std::slice::from_ref(&x),
            );
        }
    }
    // Large values: logcumsumexp's derivatives stay finite.
    let big = array(&[1000.0, 999.0, -1000.0, 1001.0], &[4]);
    let (_, v) = vjp(
        |p| Ok(vec![lazulite::logcumsumexp(&p[0], None, false, true)?]),
        std::slice::from_ref(&big),
        &[array(&[1.0, -2.0, 0.5, 1.0], &[4])],
    )
    .unwrap();
    assert!(v[0].to_vec::<f64>().unwrap().iter().all(|g| g.is_finite()));
}

fn sort_cases() -> Vec<Rule> {
    unary_cases(vec![
        ("sort last", |x| lazulite::sort(x, Some(-1))),
        ("sort axis 0", |x| lazulite::sort(x, Some(0))),
        ("sort flat", |x| lazulite::sort(x, None)),
        ("partition", |x| lazulite::partition(x, 1, Some(-1))),
        ("partition flat", |x| lazulite::partition(x, -3, None)),
        ("topk", |x| lazulite::topk(x, 2, Some(0))),
        ("argsort", |x| {
            plus_constant(x, |x| lazulite::argsort(x, Some(0)))
        }),
        ("argpartition", |x| {
            plus_constant(x, |x| lazulite::argpartition(x, -1, Some(1)))
        }),
    ])
}

#[test]
fn sort_derivatives_match_finite_differences() {
    for (layout, x) in inputs_2x4() {
        if layout == "broadcast" {
            continue;
        }
        for (name, f) in sort_cases() {
            check_derivatives(
                &format!("{name} ({layout})"),
                f.as_ref(),
                std::slice::from_ref(&x),
            );
        }
    }
}

#[test]
fn matmul_derivatives_match_finite_differences() {
    let m = |seed, shape: &[usize]| array(&uniform(seed, shape.iter().product(), -1.0, 1.0), shape);
    let cases: Vec<(&str, Array, Array)> = vec![
        ("matrix", m(41, &[3, 4]), m(42, &[4, 2])),
        ("vector @ matrix", m(43, &[4]), m(44, &[4, 2])),
        ("matrix @ vector", m(45, &[3, 4]), m(46, &[4])),
        ("vector @ vector", m(47, &[4]), m(48, &[4])),
        ("batched", m(49, &[2, 3, 4]), m(50, &[2, 4, 5])),
        ("broadcast batch", m(51, &[2, 1, 3, 4]), m(52, &[5, 4, 2])),
        ("matrix @ batch", m(53, &[3, 4]), m(54, &[2, 4, 2])),
        ("transposed", transposed(55, 4, 3), transposed(56, 2, 4)),
        (
            "sliced",
            lazulite::slice(&m(57, &[6, 4]), &[5, 0], &[0, 4], &[-2, 1]).unwrap(),
            lazulite::broadcast_to(&m(58, &[1, 2]), &[4, 2]).unwrap(),
        ),
    ];
    for (name, a, b) in cases {
        check_derivatives(
            name,
            &|p: &[Array]| lazulite::matmul(&p[0], &p[1]),
            &[a.clone(), b.clone()],
        );
        let out_shape = lazulite::matmul(&a, &b).unwrap().shape().to_vec();
        // c broadcasts along the rows of the product.
        let c = m(60, &out_shape[out_shape.len().saturating_sub(1)..]);
        check_derivatives(
            &format!("addmm {name}"),
            &|p: &[Array]| lazulite::addmm(&p[0], &p[1], &p[2], 1.5, -0.5),
            &[c, a, b],
        );
    }
    // Composite products differentiate through matmul.
    check_derivatives(
        "einsum",
        &|p: &[Array]| lazulite::einsum("ij,jk->ik", &[&p[0], &p[1]]),
        &[m(61, &[2, 3]), m(62, &[3, 2])],
    );
}

#[test]
fn vmap_of_reductions_scans_and_sorts_matches_a_loop() {
    let x = array(&uniform(71, 24, -1.0, 1.0), &[2, 3, 4]);
    let strided = lazulite::transpose(&x, &[2, 0, 1]).unwrap();
    let mut cases = reduction_cases();
    cases.extend(scan_cases().into_iter().step_by(3));
    cases.extend(sort_cases());
    for (name, f) in cases {
        for (in_axis, out_axis) in [(0, 0), (-1, -1), (1, 0)] {
            check_vmap(
                &format!("{name} in={in_axis} out={out_axis}"),
                f.as_ref(),
                std::slice::from_ref(&x),
                vec![Some(in_axis)],
                out_axis,
            );
        }
        check_vmap(
            &format!("{name} strided"),
            f.as_ref(),
            std::slice::from_ref(&strided),
            vec![Some(2)],
            -1,
        );
    }
}

#[test]
fn vmap_of_matmul_matches_a_loop() {
    let m = |seed, shape: &[usize]| array(&uniform(seed, shape.iter().product(), -1.0, 1.0), shape);
    let matmul: &Fun = &|p: &[Array]| lazulite::matmul(&p[0], &p[1]);
    let (a, b) = (m(81, &[5, 3, 4]), m(82, &[4, 5, 2]));
    check_vmap(
        "both",
        matmul,
        &[a.clone(), b.clone()],
        vec![Some(0), Some(1)],
        0,
    );
    check_vmap(
        "a only",
        matmul,
        &[a.clone(), m(83, &[4, 2])],
        vec![Some(0), None],
        -1,
    );
    check_vmap(
        "b only",
        matmul,
        &[m(84, &[3, 4]), b.clone()],
        vec![None, Some(-2)],
        1,
    );
    check_vmap(
        "vector",
        matmul,
        &[m(85, &[4, 5]), m(86, &[4])],
        vec![Some(-1), None],
        0,
    );
    check_vmap(
        "batched examples",
        matmul,
        &[m(87, &[2, 3, 4, 5]), m(88, &[4, 2])],
        vec![Some(3), None],
        0,
    );
    let addmm: &Fun = &|p: &[Array]| lazulite::addmm(&p[0], &p[1], &p[2], 2.0, 0.5);
    let c = m(89, &[3, 2]);
    check_vmap(
        "addmm c only",
        addmm,
        &[m(90, &[5, 3, 2]), m(91, &[3, 4]), m(92, &[4, 2])],
        vec![Some(0), None, None],
        0,
    );
    check_vmap(
        "addmm all",
        addmm,
        &[c.clone(), a.clone(), b.clone()],
        vec![None, Some(0), Some(1)],
        2,
    );
    check_vmap(
        "addmm b",
        addmm,
        &[c, m(93, &[3, 4]), b],
        vec![None, None, Some(1)],
        0,
    );
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

/// `gather_mm` with index arrays captured as constants: the operands are differentiated.
fn gathered_product(
    lhs: Option<Vec<u32>>,
    rhs: Option<Vec<u32>>,
    shape: &[usize],
) -> Box<Fun<'static>> {
    let index = move |v: Option<Vec<u32>>| v.map(|v| Array::from_slice(&v, shape).unwrap());
    let (lhs, rhs) = (index(lhs), index(rhs));
    Box::new(move |p: &[Array]| lazulite::gather_mm(&p[0], &p[1], lhs.as_ref(), rhs.as_ref()))
}

#[test]
fn gather_mm_derivatives_match_finite_differences() {
    let m = |seed, shape: &[usize]| array(&uniform(seed, shape.iter().product(), -1.0, 1.0), shape);
    // Repeated indices: the cotangents of a shared matrix add up.
    let both = gathered_product(Some(vec![0, 2, 2, 1]), Some(vec![3, 0, 3, 3]), &[2, 2]);
    check_derivatives(
        "both indexed",
        both.as_ref(),
        &[m(1, &[3, 2, 4]), m(2, &[4, 4, 3])],
    );
    let experts = gathered_product(None, Some(vec![1, 0, 1]), &[3]);
    check_derivatives(
        "rhs only",
        experts.as_ref(),
        &[m(3, &[3, 1, 4]), m(4, &[2, 4, 5])],
    );
    let stacked = gathered_product(Some(vec![1, 1, 0]), None, &[3]);
    check_derivatives(
        "lhs only",
        stacked.as_ref(),
        &[m(5, &[2, 2, 3]), m(6, &[3, 3, 2])],
    );
    check_derivatives(
        "transposed",
        experts.as_ref(),
        &[
            transposed(7, 4, 3).reshape(&[3, 1, 4]).unwrap(),
            lazulite::swapaxes(&m(8, &[2, 5, 4]), -1, -2).unwrap(),
        ],
    );
}

#[test]
fn vmap_of_gather_mm_matches_a_loop() {
    let m = |seed, shape: &[usize]| array(&uniform(seed, shape.iter().product(), -1.0, 1.0), shape);
    let idx = |v: &[u32], shape: &[usize]| Array::from_slice(v, shape).unwrap();
    let f: &Fun = &|p: &[Array]| lazulite::gather_mm(&p[0], &p[1], Some(&p[2]), Some(&p[3]));
    let (a, b) = (m(11, &[3, 2, 4]), m(12, &[4, 4, 3]));
    let (lhs, rhs) = (idx(&[0, 2, 1], &[3]), idx(&[3, 3, 0], &[3]));
    let (a_batch, b_batch) = (m(13, &[3, 2, 4, 2]), m(14, &[4, 4, 3, 2]));
    let lhs_batch = idx(&[0, 2, 1, 1, 1, 0], &[3, 2]);
    check_vmap(
        "a",
        f,
        &[a_batch.clone(), b.clone(), lhs.clone(), rhs.clone()],
        vec![Some(3), None, None, None],
        0,
    );
    check_vmap(
        "b",
        f,
        &[a.clone(), b_batch.clone(), lhs.clone(), rhs.clone()],
        vec![None, Some(3), None, None],
        1,
    );
    check_vmap(
        "indices",
        f,
        &[a.clone(), b.clone(), lhs_batch.clone(), rhs.clone()],
        vec![None, None, Some(1), None],
        0,
    );
    check_vmap(
        "everything",
        f,
        &[a_batch, b_batch.clone(), lhs_batch, rhs],
        vec![Some(3), Some(3), Some(1), None],
        0,
    );
    let only_b = gathered_product(None, Some(vec![2, 0]), &[2]);
    check_vmap(
        "default lhs",
        only_b.as_ref(),
        &[m(15, &[2, 1, 4]), b_batch],
        vec![None, Some(3)],
        0,
    );
}
