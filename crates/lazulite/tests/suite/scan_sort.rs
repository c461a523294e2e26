//! The scan and sort families against NumPy fixtures (tools/fixtures/scan_sort.py):
//! every dtype, contiguous / transposed / sliced / broadcast inputs, every axis form, both
//! directions, inclusive and exclusive; MLX's behaviour where it differs; errors.

use crate::common;

use common::{array_from_json, assert_matches, json_dtype, load_fixture};
use lazulite::{
    argpartition, argsort, cummax, cummin, cumprod, cumsum, diff, logcumsumexp, partition,
    searchsorted, sort, topk, Array, Complex, DType, ErrorKind,
};
use serde_json::Value;
use std::sync::OnceLock;

fn fixture() -> &'static Value {
    static FIXTURE: OnceLock<Value> = OnceLock::new();
    FIXTURE.get_or_init(|| load_fixture("scan_sort"))
}

fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}

/// Applies a fixture's view description to its base array.
fn view(base: &Array, view: &Value) -> Array {
    match view["kind"].as_str().unwrap() {
        "none" => base.clone(),
        "transpose" => base.t().unwrap(),
        "slice" => lazulite::slice(
            base,
            &ints(&view["start"]),
            &ints(&view["stop"]),
            &ints(&view["step"]),
        )
        .unwrap(),
        "broadcast" => {
            let shape: Vec<usize> = ints(&view["shape"]).iter().map(|&d| d as usize).collect();
            base.broadcast_to(&shape).unwrap()
        }
        other => panic!("unknown view {other}"),
    }
}

fn axis_of(v: &Value) -> Option<i32> {
    v.as_i64().map(|a| a as i32)
}

/// Tolerances by result dtype: exact for integers, rounding-level for floats.
fn tolerance(expected: &Value) -> (f64, f64) {
    match json_dtype(&expected["dtype"]) {
        DType::Float16 => (2e-3, 1e-3),
        DType::BFloat16 => (1e-2, 1e-2),
        DType::Float32 | DType::Complex64 => (1e-5, 1e-6),
        _ => (1e-12, 0.0),
    }
}

#[test]
fn scans_match_numpy() {
    let mut checked = 0;
    for case in fixture()["scan"].as_array().unwrap() {
        let base = array_from_json(&case["base"]);
        let x = view(&base, &case["view"]);
        for run in case["runs"].as_array().unwrap() {
            let op = run[0].as_str().unwrap();
            let axis = axis_of(&run[1]);
            let (reverse, inclusive) = (run[2].as_bool().unwrap(), run[3].as_bool().unwrap());
            let out = match op {
                "cumsum" => cumsum(&x, axis, reverse, inclusive, None),
                "cumprod" => cumprod(&x, axis, reverse, inclusive, None),
                "cummax" => cummax(&x, axis, reverse, inclusive),
                "cummin" => cummin(&x, axis, reverse, inclusive),
                _ => logcumsumexp(&x, axis, reverse, inclusive),
            }
            .unwrap();
            let context = format!(
                "{op} {} {} axis={axis:?} reverse={reverse} inclusive={inclusive}",
                case["base"]["dtype"], case["layout"]
            );
            let (rtol, atol) = tolerance(&run[4]);
            assert_matches(&out, &run[4], rtol, atol, &context);
            checked += 1;
        }
    }
    assert!(checked > 3000, "only {checked} scan cases");
}

#[test]
fn scan_methods_and_dtype_argument() {
    let a = Array::from_slice(&[1i32, 2, 3, 4], &[2, 2]).unwrap();
    let m = a.cumsum(Some(1), false, true).unwrap();
    assert_eq!(m.to_vec::<i32>().unwrap(), [1, 3, 3, 7]);
    assert_eq!(
        a.cumprod(None, true, true)
            .unwrap()
            .to_vec::<i32>()
            .unwrap(),
        [24, 24, 12, 4]
    );
    assert_eq!(
        a.cummax(Some(0), false, false)
            .unwrap()
            .to_vec::<i32>()
            .unwrap(),
        [i32::MIN, i32::MIN, 1, 2]
    );
    assert_eq!(
        a.cummin(Some(-1), true, true)
            .unwrap()
            .to_vec::<i32>()
            .unwrap(),
        [1, 2, 3, 4]
    );
    assert_eq!(
        a.logcumsumexp(None, false, true).unwrap().dtype(),
        DType::Float32
    );
    // MLX: the dtype argument casts first; bool still sums to int32.
    let small = Array::from_slice(&[100i8, 100], &[2]).unwrap();
    let wide = cumsum(&small, None, false, true, Some(DType::Int32)).unwrap();
    assert_eq!(wide.to_vec::<i32>().unwrap(), [100, 200]);
    assert_eq!(
        cumsum(&small, None, false, true, None)
            .unwrap()
            .to_vec::<i8>()
            .unwrap(),
        [100, -56]
    );
    let b = Array::from_slice(&[1.5f32, 2.5], &[2]).unwrap();
    let as_bool = cumsum(&b, None, false, true, Some(DType::Bool)).unwrap();
    assert_eq!(as_bool.dtype(), DType::Int32);
    assert_eq!(as_bool.to_vec::<i32>().unwrap(), [1, 2]);
    let p = cumprod(&b, None, false, true, Some(DType::Int32)).unwrap();
    assert_eq!(p.to_vec::<i32>().unwrap(), [1, 2]);
}

#[test]
fn complex_scans_follow_mlx() {
    let z = |re, im| Complex::new(re, im);
    let a = Array::from_slice(&[z(1.0, 1.0), z(2.0, 0.0), z(1.0, 5.0)], &[3]).unwrap();
    let max = cummax(&a, None, false, true).unwrap();
    assert_eq!(
        max.to_vec::<Complex>().unwrap(),
        [z(1.0, 1.0), z(2.0, 0.0), z(2.0, 0.0)]
    );
    let excl = cummax(&a, None, false, false)
        .unwrap()
        .to_vec::<Complex>()
        .unwrap();
    assert_eq!(excl[0], z(f32::NEG_INFINITY, f32::NEG_INFINITY));
    let excl = cummin(&a, None, false, false)
        .unwrap()
        .to_vec::<Complex>()
        .unwrap();
    assert_eq!(excl[0], z(f32::INFINITY, f32::INFINITY));
    // MLX: logcumsumexp([1+1j, 2]) = [1+1j, 2.21357+0.252711j].
    let two = Array::from_slice(&[z(1.0, 1.0), z(2.0, 0.0)], &[2]).unwrap();
    let l = logcumsumexp(&two, None, false, true)
        .unwrap()
        .to_vec::<Complex>()
        .unwrap();
    assert!((l[1].re - 2.21357).abs() < 1e-5 && (l[1].im - 0.252711).abs() < 1e-5);
    let l = logcumsumexp(&two, None, false, false)
        .unwrap()
        .to_vec::<Complex>()
        .unwrap();
    assert_eq!(l[0], z(f32::NEG_INFINITY, 0.0));
}

#[test]
fn scan_errors_leave_inputs_intact() {
    let a = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
    for axis in [2, -3, i32::MIN, i32::MAX] {
        let err = cumsum(&a, Some(axis), false, true, None).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Axis);
        assert!(
            err.message().starts_with("[cumsum] Axis"),
            "{}",
            err.message()
        );
        assert_eq!(
            cummax(&a, Some(axis), true, false).unwrap_err().kind(),
            ErrorKind::Axis
        );
    }
    let scalar = Array::scalar(5i32);
    let err = logcumsumexp(&scalar, Some(0), false, true).unwrap_err();
    assert_eq!(
        err.message(),
        "[logcumsumexp] Axis 0 is out of bounds for array with 0 dimensions."
    );
    // axis None flattens a 0-d array to one element.
    let flat = cumsum(&scalar, None, false, true, None).unwrap();
    assert_eq!(flat.shape(), &[1]);
    assert_eq!(a.to_vec::<f32>().unwrap(), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
}

/// The elements of line `line` along `axis` of a row-major array of `shape`.
fn line_positions(shape: &[usize], axis: usize, line: usize) -> Vec<usize> {
    let inner: usize = shape[axis + 1..].iter().product();
    let n = shape[axis];
    let (outer, rest) = (line / inner, line % inner);
    (0..n).map(|i| (outer * n + i) * inner + rest).collect()
}

/// Values as (real, imag) pairs, in the sorting order used for comparisons.
fn keys(a: &Array) -> Vec<(f64, f64)> {
    if a.dtype() == DType::Complex64 {
        let c = a.to_vec::<Complex>().unwrap();
        c.iter().map(|z| (z.re as f64, z.im as f64)).collect()
    } else {
        a.to_vec::<f64>()
            .unwrap()
            .iter()
            .map(|&v| (v, 0.0))
            .collect()
    }
}

fn key_order(a: (f64, f64), b: (f64, f64)) -> std::cmp::Ordering {
    let nan = |k: (f64, f64)| k.0.is_nan() || k.1.is_nan();
    match (nan(a), nan(b)) {
        (false, false) => a.partial_cmp(&b).unwrap(),
        (x, y) => x.cmp(&y),
    }
}

/// Checks that `values` (the partitioned line) is a valid partition at `kth` of the
/// line whose sorted form is `sorted`.
fn check_partition(values: &[(f64, f64)], sorted: &[(f64, f64)], kth: usize, context: &str) {
    use std::cmp::Ordering::*;
    let pivot = values[kth];
    assert_eq!(key_order(pivot, sorted[kth]), Equal, "{context}: pivot");
    assert!(
        values[..kth]
            .iter()
            .all(|&v| key_order(v, pivot) != Greater),
        "{context}: left"
    );
    assert!(
        values[kth..].iter().all(|&v| key_order(v, pivot) != Less),
        "{context}: right"
    );
    let mut again = values.to_vec();
    again.sort_by(|&a, &b| key_order(a, b));
    for (a, b) in again.iter().zip(sorted) {
        assert_eq!(key_order(*a, *b), Equal, "{context}: same elements");
    }
}

#[test]
fn sorts_match_numpy() {
    let mut checked = 0;
    for case in fixture()["sort"].as_array().unwrap() {
        let base = array_from_json(&case["base"]);
        let x = view(&base, &case["view"]);
        let axis = axis_of(&case["axis"]);
        let context = format!("{} {} axis={axis:?}", case["base"]["dtype"], case["layout"]);
        let s = sort(&x, axis).unwrap();
        assert_matches(&s, &case["sorted"], 0.0, 0.0, &format!("sort {context}"));
        let a = argsort(&x, axis).unwrap();
        assert_matches(
            &a,
            &case["argsorted"],
            0.0,
            0.0,
            &format!("argsort {context}"),
        );
        for t in case["topk"].as_array().unwrap() {
            let k = t["k"].as_i64().unwrap();
            let top = topk(&x, k, axis).unwrap();
            assert_matches(
                &top,
                &t["expected"],
                0.0,
                0.0,
                &format!("topk {k} {context}"),
            );
        }
        // Partitions: check the defining property line by line.
        let flat = match axis {
            None => x.reshape(&[x.size()]).unwrap(),
            Some(_) => x.clone(),
        };
        let ax = axis.map_or(0, |a| a.rem_euclid(flat.ndim() as i32) as usize);
        let shape = flat.shape().to_vec();
        let n = shape[ax];
        let lines = flat.size() / n;
        let input_keys = keys(&flat);
        let sorted_keys = keys(&array_from_json(&case["sorted"]));
        for kth in ints(&case["kth"]) {
            let p = partition(&x, kth, axis).unwrap();
            assert_eq!((p.dtype(), p.shape()), (x.dtype(), &shape[..]));
            let ap = argpartition(&x, kth, axis).unwrap();
            assert_eq!((ap.dtype(), ap.shape()), (DType::UInt32, &shape[..]));
            let (p_keys, ap_idx) = (keys(&p), ap.to_vec::<u32>().unwrap());
            let k = if kth < 0 { kth + n as i64 } else { kth } as usize;
            for line in 0..lines {
                let pos = line_positions(&shape, ax, line);
                let sorted: Vec<_> = pos.iter().map(|&i| sorted_keys[i]).collect();
                let got: Vec<_> = pos.iter().map(|&i| p_keys[i]).collect();
                check_partition(&got, &sorted, k, &format!("partition {kth} {context}"));
                let picked: Vec<_> = pos
                    .iter()
                    .map(|&i| input_keys[pos[ap_idx[i] as usize]])
                    .collect();
                check_partition(
                    &picked,
                    &sorted,
                    k,
                    &format!("argpartition {kth} {context}"),
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 1000, "only {checked} partition cases");
}

#[test]
fn sort_order_follows_mlx() {
    let nan = f32::NAN;
    let a = Array::from_slice(&[3.0f32, nan, 1.0, f32::NEG_INFINITY, nan, 2.0], &[6]).unwrap();
    let s = sort(&a, Some(-1)).unwrap().to_vec::<f32>().unwrap();
    assert_eq!(&s[..4], [f32::NEG_INFINITY, 1.0, 2.0, 3.0]);
    assert!(s[4].is_nan() && s[5].is_nan());
    let a = Array::from_slice(&[3.0f32, nan, 1.0, 2.0], &[4]).unwrap();
    assert_eq!(
        argsort(&a, Some(0)).unwrap().to_vec::<u32>().unwrap(),
        [2, 3, 0, 1]
    );
    // Stable: ties keep their order, -0.0 ties with 0.0.
    let ties = Array::from_slice(&[1i32, 0, 1, 0, 1, 0, 0], &[7]).unwrap();
    assert_eq!(
        argsort(&ties, None).unwrap().to_vec::<u32>().unwrap(),
        [1, 3, 5, 6, 0, 2, 4]
    );
    // Long lines too (short ones are sorted by insertion, stable either way).
    let pattern: Vec<f32> = (0..600).map(|i| ((i * 7) % 3) as f32).collect();
    let long = Array::from_slice(&pattern, &[2, 300]).unwrap().t().unwrap();
    let idx = argsort(&long, Some(0))
        .unwrap()
        .t()
        .unwrap()
        .to_vec::<u32>()
        .unwrap();
    for (row, line) in idx.chunks(300).enumerate() {
        let keyed: Vec<(f32, u32)> = line
            .iter()
            .map(|&i| (pattern[row * 300 + i as usize], i))
            .collect();
        assert!(keyed.windows(2).all(|w| w[0] < w[1]), "argsort not stable");
    }
    let zeros = Array::from_slice(&[-0.0f32, 0.0, -0.0, 0.0], &[4]).unwrap();
    assert_eq!(
        argsort(&zeros, None).unwrap().to_vec::<u32>().unwrap(),
        [0, 1, 2, 3]
    );
    // Complex: by real part then imaginary part; any NaN part sorts last, stably.
    let z = |re, im| Complex::new(re, im);
    let c = Array::from_slice(
        &[
            z(nan, nan),
            z(nan, 0.0),
            z(1.0, 2.0),
            z(0.0, 5.0),
            z(1.0, 1.0),
        ],
        &[5],
    )
    .unwrap();
    assert_eq!(
        argsort(&c, Some(0)).unwrap().to_vec::<u32>().unwrap(),
        [3, 4, 2, 0, 1]
    );
    // MLX examples: topk and 2-D sorts.
    let a = Array::from_slice(&[5i32, 1, 4, 2, 3, 9, 0], &[7]).unwrap();
    assert_eq!(
        topk(&a, 3, Some(-1)).unwrap().to_vec::<i32>().unwrap(),
        [4, 5, 9]
    );
    let m = Array::from_slice(&[5i32, 1, 4, 2, 3, 9], &[2, 3]).unwrap();
    assert_eq!(topk(&m, 2, None).unwrap().to_vec::<i32>().unwrap(), [5, 9]);
    assert_eq!(
        topk(&m, 2, Some(-1)).unwrap().to_vec::<i32>().unwrap(),
        [4, 5, 3, 9]
    );
    let f = Array::from_slice(&[1.0f32, nan, 3.0, 2.0], &[4]).unwrap();
    let t = topk(&f, 2, Some(0)).unwrap().to_vec::<f32>().unwrap();
    assert!(t[0] == 3.0 && t[1].is_nan());
    let s = sort(&Array::scalar(5i32), None).unwrap();
    assert_eq!(
        (s.shape(), s.to_vec::<i32>().unwrap()),
        (&[1usize][..], vec![5])
    );
}

#[test]
fn sorts_of_empty_arrays() {
    let e = Array::zeros(&[0, 3], DType::Float32).unwrap();
    for axis in [Some(0), Some(1), None] {
        assert_eq!(sort(&e, axis).unwrap().size(), 0);
        assert_eq!(argsort(&e, axis).unwrap().dtype(), DType::UInt32);
        assert_eq!(topk(&e, 0, axis).unwrap().size(), 0);
    }
    assert_eq!(partition(&e, 1, Some(1)).unwrap().shape(), &[0, 3]);
    assert_eq!(diff(&e, 3, 0).unwrap().shape(), &[0, 3]);
    let t = Array::zeros(&[3, 0], DType::Int32).unwrap();
    assert_eq!(argpartition(&t, 2, Some(0)).unwrap().shape(), &[3, 0]);
    assert_eq!(
        cumsum(&t, Some(1), true, false, None).unwrap().shape(),
        &[3, 0]
    );
}

#[test]
fn sort_errors_leave_inputs_intact() {
    let a = Array::from_slice(&[5i32, 1, 4, 2, 3, 9, 0], &[7]).unwrap();
    let err = sort(&Array::scalar(1.0f32), Some(-1)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Axis);
    assert_eq!(
        err.message(),
        "[sort] Axis -1 is out of bounds for array with 0 dimensions."
    );
    assert_eq!(argsort(&a, Some(1)).unwrap_err().kind(), ErrorKind::Axis);
    assert_eq!(
        partition(&a, 0, Some(-2)).unwrap_err().kind(),
        ErrorKind::Axis
    );
    assert_eq!(topk(&a, 1, Some(3)).unwrap_err().kind(), ErrorKind::Axis);
    for kth in [7, -8, i64::MAX, i64::MIN] {
        let err = partition(&a, kth, Some(-1)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Value);
        assert!(err
            .message()
            .starts_with("[partition] Received invalid kth"));
        assert_eq!(
            argpartition(&a, kth, None).unwrap_err().kind(),
            ErrorKind::Value
        );
    }
    let err = partition(&Array::zeros(&[0], DType::Float32).unwrap(), 0, Some(0)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Value);
    let err = argpartition(&Array::zeros(&[2, 3], DType::Float32).unwrap(), 5, Some(0));
    assert_eq!(
        err.unwrap_err().message(),
        "[argpartition] Received invalid kth 5 along axis 0 for array with shape: (2,3)"
    );
    for k in [8, -1, i64::MIN] {
        let err = topk(&a, k, Some(-1)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Value);
    }
    assert_eq!(
        topk(&a, 8, Some(-1)).unwrap_err().message(),
        "[topk] Received invalid k=8 along axis -1 for array with shape: (7)"
    );
    assert_eq!(
        topk(&a, 7, Some(-1)).unwrap().to_vec::<i32>().unwrap(),
        [0, 1, 2, 3, 4, 5, 9]
    );
    assert_eq!(a.to_vec::<i32>().unwrap(), [5, 1, 4, 2, 3, 9, 0]);
}

#[test]
fn searchsorted_matches_numpy() {
    for case in fixture()["searchsorted"].as_array().unwrap() {
        let seq = view(&array_from_json(&case["sequence"]), &case["sequence_view"]);
        let values = view(&array_from_json(&case["values"]), &case["values_view"]);
        let side = case["side"].as_str().unwrap();
        let out = searchsorted(&seq, &values, side).unwrap();
        let context = format!("searchsorted {} {side}", case["sequence"]["dtype"]);
        assert_matches(&out, &case["expected"], 0.0, 0.0, &context);
    }
}

#[test]
fn searchsorted_follows_mlx() {
    let nan = f32::NAN;
    let seq = Array::from_slice(&[1.0f32, 2.0, nan], &[3]).unwrap();
    let v = Array::from_slice(&[nan, 3.0, f32::INFINITY], &[3]).unwrap();
    assert_eq!(
        searchsorted(&seq, &v, "left")
            .unwrap()
            .to_vec::<u32>()
            .unwrap(),
        [2, 2, 2]
    );
    assert_eq!(
        searchsorted(&seq, &v, "right")
            .unwrap()
            .to_vec::<u32>()
            .unwrap(),
        [3, 2, 2]
    );
    let bytes = Array::from_slice(&[1u8, 2], &[2]).unwrap();
    let neg = Array::from_slice(&[-1i32, 2], &[2]).unwrap();
    assert_eq!(
        searchsorted(&bytes, &neg, "left")
            .unwrap()
            .to_vec::<u32>()
            .unwrap(),
        [0, 1]
    );
    let scalar = searchsorted(&bytes, &Array::scalar(2u8), "right").unwrap();
    assert_eq!(
        (scalar.shape(), scalar.item::<u32>().unwrap()),
        (&[][..], 2)
    );
    let empty = Array::zeros(&[0], DType::Float32).unwrap();
    assert_eq!(
        searchsorted(&empty, &v, "left")
            .unwrap()
            .to_vec::<u32>()
            .unwrap(),
        [0, 0, 0]
    );
    assert_eq!(searchsorted(&seq, &empty, "left").unwrap().shape(), &[0]);
    // Errors.
    let err = searchsorted(&seq, &v, "middle").unwrap_err();
    assert_eq!(
        (err.kind(), err.message()),
        (
            ErrorKind::Value,
            "[searchsorted] Invalid side 'middle'. Expected 'left' or 'right'."
        )
    );
    let grid = Array::zeros(&[2, 2], DType::Int32).unwrap();
    let err = searchsorted(&grid, &v, "left").unwrap_err();
    assert_eq!(
        err.message(),
        "[searchsorted] The sorted sequence must be 1-D but has 2 dimensions."
    );
    assert_eq!(
        searchsorted(&Array::scalar(1i32), &v, "left")
            .unwrap_err()
            .kind(),
        ErrorKind::Value
    );
}

#[test]
fn diff_matches_numpy() {
    let mut checked = 0;
    for case in fixture()["diff"].as_array().unwrap() {
        let x = view(&array_from_json(&case["base"]), &case["view"]);
        for run in case["runs"].as_array().unwrap() {
            let (axis, n) = (run[0].as_i64().unwrap() as i32, run[1].as_i64().unwrap());
            let out = diff(&x, n, axis).unwrap();
            let context = format!(
                "diff n={n} axis={axis} {} {}",
                case["base"]["dtype"], case["layout"]
            );
            let (rtol, atol) = tolerance(&run[2]);
            assert_matches(&out, &run[2], rtol, atol, &context);
            checked += 1;
        }
    }
    assert!(checked > 800, "only {checked} diff cases");
}

#[test]
fn diff_follows_mlx() {
    let b = Array::from_slice(&[true, false, false, true], &[4]).unwrap();
    assert_eq!(
        diff(&b, 1, -1).unwrap().to_vec::<bool>().unwrap(),
        [true, false, true]
    );
    assert_eq!(
        diff(&b, 2, 0).unwrap().to_vec::<bool>().unwrap(),
        [true, true]
    );
    let u = Array::from_slice(&[200u8, 1], &[2]).unwrap();
    assert_eq!(diff(&u, 1, 0).unwrap().to_vec::<u8>().unwrap(), [57]);
    // A huge n stops once the axis is empty.
    let a = Array::from_slice(&[1i32, 4, 9, 16], &[4]).unwrap();
    assert_eq!(diff(&a, i64::MAX, 0).unwrap().shape(), &[0]);
    assert_eq!(
        diff(&a, 0, 0).unwrap().to_vec::<i32>().unwrap(),
        [1, 4, 9, 16]
    );
    let err = diff(&a, -1, 0).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Value);
    assert!(err
        .message()
        .starts_with("[diff] Order `n` must be non-negative"));
    for axis in [1, -2] {
        assert_eq!(diff(&a, 1, axis).unwrap_err().kind(), ErrorKind::Axis);
    }
    assert_eq!(
        diff(&Array::scalar(5i32), 0, -1).unwrap_err().kind(),
        ErrorKind::Axis
    );
    assert_eq!(a.to_vec::<i32>().unwrap(), [1, 4, 9, 16]);
}
