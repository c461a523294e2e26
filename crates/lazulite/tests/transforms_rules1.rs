//! Derivative and batching rules of broadcast, the reductions, the scans, the sorts and
//! the matrix products: vjp and jvp against float64 central differences along random
//! directions, vmap against a loop over the mapped axis; and the seed's function
//! transform examples that use `mean`.

use lazulite::{jvp, vjp, vmap, Array, Result};

/// Deterministic pseudo-random values in [lo, hi).
fn uniform(seed: u64, n: usize, lo: f64, hi: f64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9E3779B97F4A7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            lo + (hi - lo) * ((s >> 11) as f64 / (1u64 << 53) as f64)
        })
        .collect()
}

fn array(values: &[f64], shape: &[usize]) -> Array {
    Array::from_slice(values, shape).unwrap()
}

fn dot(a: &Array, b: &[f64]) -> f64 {
    a.to_vec::<f64>()
        .unwrap()
        .iter()
        .zip(b)
        .map(|(x, y)| x * y)
        .sum()
}

type Fun = dyn Fn(&[Array]) -> Result<Array>;

/// Checks vjp and jvp of `f` at `inputs` along a random direction against central
/// differences: <w, J u> from finite differences, from jvp, and from vjp must agree.
/// The inputs may be any views (strided, broadcast): the directions are contiguous.
fn check_derivatives(name: &str, f: &Fun, inputs: &[Array]) {
    let eps = 1e-6;
    let dirs: Vec<Vec<f64>> = inputs
        .iter()
        .enumerate()
        .map(|(i, x)| uniform(100 + i as u64, x.size(), -1.0, 1.0))
        .collect();
    let shifted = |sign: f64| -> Array {
        let moved: Vec<Array> = inputs
            .iter()
            .zip(&dirs)
            .map(|(x, d)| {
                let v: Vec<f64> = x
                    .to_vec::<f64>()
                    .unwrap()
                    .iter()
                    .zip(d)
                    .map(|(a, b)| a + sign * eps * b)
                    .collect();
                array(&v, x.shape())
            })
            .collect();
        f(&moved).unwrap()
    };
    let (plus, minus) = (
        shifted(1.0).to_vec::<f64>().unwrap(),
        shifted(-1.0).to_vec::<f64>().unwrap(),
    );
    let out = f(inputs).unwrap();
    let w = uniform(7, out.size(), -1.0, 1.0);
    let fd: f64 = plus
        .iter()
        .zip(&minus)
        .zip(&w)
        .map(|((p, m), w)| (p - m) / (2.0 * eps) * w)
        .sum();

    let tangents: Vec<Array> = inputs
        .iter()
        .zip(&dirs)
        .map(|(x, d)| array(d, x.shape()))
        .collect();
    let (_, jv) = jvp(|p| Ok(vec![f(p)?]), inputs, &tangents).unwrap();
    assert_eq!(jv[0].shape(), out.shape(), "{name}: jvp shape");
    let via_jvp = dot(&jv[0], &w);

    let (_, vj) = vjp(|p| Ok(vec![f(p)?]), inputs, &[array(&w, out.shape())]).unwrap();
    for (g, x) in vj.iter().zip(inputs) {
        assert_eq!(g.shape(), x.shape(), "{name}: vjp shape");
    }
    let via_vjp: f64 = vj.iter().zip(&dirs).map(|(g, d)| dot(g, d)).sum();

    let tol = 1e-5 * (1.0 + fd.abs());
    assert!(
        (via_jvp - fd).abs() < tol,
        "{name}: jvp {via_jvp} vs finite differences {fd}"
    );
    assert!(
        (via_vjp - fd).abs() < tol,
        "{name}: vjp {via_vjp} vs finite differences {fd}"
    );
}

/// vmap of `f` equals stacking `f` applied to each example, moved to `out_axis`.
fn check_vmap(name: &str, f: &Fun, inputs: &[Array], in_axes: Vec<Option<i32>>, out_axis: i32) {
    let batched = vmap(|p| Ok(vec![f(p)?]), in_axes.clone(), vec![Some(out_axis)])(inputs)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let (axis, x) = inputs
        .iter()
        .zip(&in_axes)
        .find_map(|(x, a)| a.map(|a| (a, x)))
        .unwrap();
    let axis = if axis < 0 {
        axis + x.ndim() as i32
    } else {
        axis
    } as usize;
    let n = x.shape()[axis];
    let mut rows: Vec<Vec<f64>> = Vec::new();
    let mut row_shape = vec![];
    for i in 0..n {
        let example: Vec<Array> = inputs
            .iter()
            .zip(&in_axes)
            .map(|(x, a)| match a {
                None => x.clone(),
                Some(a) => {
                    let a = if *a < 0 { *a + x.ndim() as i32 } else { *a } as usize;
                    let mut start = vec![0i64; x.ndim()];
                    let mut stop: Vec<i64> = x.shape().iter().map(|&d| d as i64).collect();
                    start[a] = i as i64;
                    stop[a] = i as i64 + 1;
                    let s = lazulite::slice(x, &start, &stop, &vec![1; x.ndim()]).unwrap();
                    let mut shape: Vec<i64> = x.shape().iter().map(|&d| d as i64).collect();
                    shape.remove(a);
                    lazulite::reshape(&s, &shape).unwrap()
                }
            })
            .collect();
        let y = f(&example).unwrap();
        row_shape = y.shape().to_vec();
        rows.push(
            y.astype(lazulite::DType::Float64)
                .unwrap()
                .to_vec::<f64>()
                .unwrap(),
        );
    }
    let mut stacked_shape = vec![n];
    stacked_shape.extend(&row_shape);
    let stacked = array(&rows.concat(), &stacked_shape);
    let out_axis = if out_axis < 0 {
        out_axis + stacked_shape.len() as i32
    } else {
        out_axis
    } as usize;
    let mut perm: Vec<i32> = (1..stacked_shape.len() as i32).collect();
    perm.insert(out_axis, 0);
    let expected = lazulite::transpose(&stacked, &perm).unwrap();
    assert_eq!(batched[0].shape(), expected.shape(), "{name}: shape");
    let (got, want) = (
        batched[0]
            .astype(lazulite::DType::Float64)
            .unwrap()
            .to_vec::<f64>()
            .unwrap(),
        expected.to_vec::<f64>().unwrap(),
    );
    for (g, w) in got.iter().zip(&want) {
        assert!(
            (g - w).abs() <= 1e-12 * (1.0 + w.abs()) || (g.is_nan() && w.is_nan()),
            "{name}: {got:?} vs {want:?}"
        );
    }
}

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
