//! Derivative rules written with gather/scatter: the sort family and cumulative extrema
//! (linear in the size, checked on 100k elements where a one-hot formulation would need
//! 10^10 elements) and the multiplying / maximum / minimum scatters (`at[].multiply`,
//! `.maximum`, `.minimum`), against float64 finite differences and MLX's tie rule.

use crate::common;
use common::{array, check_derivatives, check_vmap, uniform, Fun};
use lazulite::{at, idx, vjp, Array, Result};

const LARGE: usize = 100_000;

/// `n` distinct values `0.01 * k` in a scrambled order: gaps far above the finite
/// difference step, so no perturbation reorders them.
fn scrambled(n: usize) -> Array {
    let values: Vec<f64> = (0..n).map(|k| 0.01 * ((k * 7919) % n) as f64).collect();
    array(&values, &[n])
}

fn large_case(name: &str, f: fn(&Array) -> Result<Array>) {
    check_derivatives(name, &|p: &[Array]| f(&p[0]), &[scrambled(LARGE)]);
}

#[test]
fn sort_family_derivatives_on_100k_elements() {
    large_case("sort 100k", |x| lazulite::sort(x, Some(0)));
    large_case("partition 100k", |x| {
        lazulite::partition(x, 50_000, Some(0))
    });
    large_case("topk 100k", |x| lazulite::topk(x, 1000, Some(0)));
    large_case("cummax 100k", |x| lazulite::cummax(x, Some(0), false, true));
    // Inclusive: an exclusive scan's first output is the infinite identity.
    large_case("cummin reverse 100k", |x| {
        lazulite::cummin(x, Some(0), true, true)
    });
}

#[test]
fn sort_vjp_sends_each_cotangent_to_its_source() {
    // sort([3, 1, 2]) = [1, 2, 3]: cotangent [10, 20, 30] goes back to [30, 10, 20].
    let x = array(&[3.0, 1.0, 2.0], &[3]);
    let g = array(&[10.0, 20.0, 30.0], &[3]);
    let (_, grads) = vjp(|p| Ok(vec![lazulite::sort(&p[0], Some(0))?]), &[x], &[g]).unwrap();
    assert_eq!(grads[0].to_vec::<f64>().unwrap(), vec![30.0, 10.0, 20.0]);
}

/// Data 3x4, row indices with duplicates, updates for each picked row.
fn scatter_inputs(seed: u64, lo: f64, hi: f64) -> (Array, Array) {
    (
        array(&uniform(seed, 12, lo, hi), &[3, 4]),
        array(&uniform(seed + 1, 20, lo, hi), &[5, 4]),
    )
}

#[test]
fn extremum_and_product_scatter_derivatives_match_finite_differences() {
    let rows = Array::from_slice(&[2i32, 0, 2, -1, 1], &[5]).unwrap();
    let pairs_i = Array::from_slice(&[0i32, 0, 1, 0], &[4]).unwrap();
    let pairs_j = Array::from_slice(&[3i32, 3, 1, 3], &[4]).unwrap();
    let (x, u) = scatter_inputs(11, -2.0, 2.0);
    // Zeros among the updates: row 0 gets one zero (and a nonzero), row 1 two zeros.
    let mut with_zeros = uniform(13, 20, 0.5, 1.5);
    with_zeros[4..8].copy_from_slice(&[0.0, 1.2, 0.0, 0.7]);
    with_zeros[16..20].copy_from_slice(&[0.0, 0.0, 0.9, 0.0]);
    let rows_with_zero = Array::from_slice(&[2i32, 0, 0, 1, 1], &[5]).unwrap();
    let u_zero = array(&with_zeros, &[5, 4]);
    let transposed =
        lazulite::transpose(&array(&uniform(15, 12, -2.0, 2.0), &[4, 3]), &[1, 0]).unwrap();
    let reversed = lazulite::slice(&u, &[4, 0], &[-6, 4], &[-1, 1]).unwrap();
    let cases: Vec<(&str, Box<Fun<'_>>, Vec<Array>)> = vec![
        (
            "multiply rows",
            Box::new(|p: &[Array]| at(&p[0], &idx![&rows]).multiply(&p[1])),
            vec![x.clone(), u.clone()],
        ),
        (
            "multiply with zero updates",
            Box::new(|p: &[Array]| at(&p[0], &idx![&rows_with_zero]).multiply(&p[1])),
            vec![x.clone(), u_zero.clone()],
        ),
        (
            "multiply pairs, scalar-broadcast update",
            Box::new(|p: &[Array]| at(&p[0], &idx![&pairs_i, &pairs_j]).multiply(&p[1])),
            vec![transposed.clone(), array(&[1.5], &[1])],
        ),
        (
            "divide rows",
            Box::new(|p: &[Array]| at(&p[0], &idx![&rows]).divide(&p[1])),
            vec![x.clone(), u_zero.clone()],
        ),
        (
            "maximum rows",
            Box::new(|p: &[Array]| at(&p[0], &idx![&rows]).maximum(&p[1])),
            vec![x.clone(), u.clone()],
        ),
        (
            "maximum strided",
            Box::new(|p: &[Array]| at(&p[0], &idx![&rows]).maximum(&p[1])),
            vec![transposed.clone(), reversed.clone()],
        ),
        (
            "minimum pairs",
            Box::new(|p: &[Array]| at(&p[0], &idx![&pairs_i, &pairs_j]).minimum(&p[1])),
            vec![x.clone(), array(&uniform(17, 4, -2.0, 2.0), &[4])],
        ),
        (
            "minimum rows",
            Box::new(|p: &[Array]| at(&p[0], &idx![&rows]).minimum(&p[1])),
            vec![transposed.clone(), u.clone()],
        ),
    ];
    for (name, f, inputs) in &cases {
        if *name == "divide rows" {
            // Reciprocals of zeros are infinite: divide by the nonzero updates only.
            let safe = lazulite::add(&inputs[1], 0.25).unwrap();
            check_derivatives(name, f.as_ref(), &[inputs[0].clone(), safe]);
            continue;
        }
        check_derivatives(name, f.as_ref(), inputs);
    }
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

#[test]
fn vmap_of_the_new_rules_matches_a_loop() {
    let xs = array(&uniform(21, 24, -1.0, 1.0), &[2, 3, 4]);
    let us = array(&uniform(22, 16, -1.0, 1.0), &[2, 2, 4]);
    let rows = Array::from_slice(&[2i32, 2], &[2]).unwrap();
    let grad_of = |mode: usize| -> Box<Fun<'_>> {
        let rows = rows.clone();
        Box::new(move |p: &[Array]| {
            let (_, d) = vjp(
                |q| {
                    let target = at(&q[0], &idx![&rows]);
                    Ok(vec![match mode {
                        0 => target.multiply(&q[1])?,
                        1 => target.maximum(&q[1])?,
                        _ => target.minimum(&q[1])?,
                    }
                    .sum(lazulite::Axes::All, false)?])
                },
                p,
                &[array(&[1.0], &[])],
            )?;
            lazulite::concatenate(
                &[
                    lazulite::reshape(&d[0], &[-1])?,
                    lazulite::reshape(&d[1], &[-1])?,
                ],
                0,
            )
        })
    };
    for mode in 0..3 {
        check_vmap(
            &format!("grad of scatter mode {mode}"),
            grad_of(mode).as_ref(),
            &[xs.clone(), us.clone()],
            vec![Some(0), Some(0)],
            0,
        );
    }
    let sort_grad: Box<Fun<'_>> = Box::new(|p: &[Array]| {
        let (_, d) = vjp(
            |q| Ok(vec![lazulite::sort(&q[0], Some(-1))?]),
            p,
            &[array(&[1.0, 2.0, 3.0, 4.0], &[4])],
        )?;
        Ok(d[0].clone())
    });
    check_vmap(
        "grad of sort",
        sort_grad.as_ref(),
        &[array(&uniform(23, 12, -1.0, 1.0), &[3, 4])],
        vec![Some(0)],
        0,
    );
}
