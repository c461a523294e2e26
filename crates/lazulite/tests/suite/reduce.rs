//! Reductions against NumPy (fixtures written by `tools/fixtures/reduce.py`): every op
//! on every dtype, on contiguous, transposed, negatively sliced and broadcast inputs,
//! over no, one, negative, several and all axes, with and without keepdims; NaN,
//! infinities, integer wrapping, empty and 0-d arrays; and the errors.

use crate::common;

use common::{array_from_json, assert_matches, load_fixture};
use lazulite::{Array, Axes, DType, ErrorKind};
use serde_json::Value;

/// The logical (2, 3, 4) array a fixture layout makes of its base.
fn apply_layout(base: Array, layout: &str) -> Array {
    match layout {
        "contiguous" => base,
        "transposed" => base.transpose(&[2, 1, 0]).unwrap(),
        // base[::-2, :, 1::2] of a (4, 3, 8) base.
        "sliced" => lazulite::slice(&base, &[-1, 0, 1], &[-5, 3, 8], &[-2, 1, 2]).unwrap(),
        "broadcast" => base.broadcast_to(&[2, 3, 4]).unwrap(),
        other => panic!("unknown layout {other}"),
    }
}

fn axes_of(v: &Value) -> Axes {
    match v {
        Value::Null => Axes::All,
        Value::Number(n) => Axes::from(n.as_i64().unwrap() as i32),
        Value::Array(list) => Axes::List(list.iter().map(|a| a.as_i64().unwrap() as i32).collect()),
        other => panic!("bad axes {other}"),
    }
}

fn run(
    op: &str,
    x: &Array,
    axes: &Value,
    keepdims: bool,
    extra: &Value,
) -> lazulite::Result<Array> {
    let set = || axes_of(axes);
    let one = || axes.as_i64().map(|a| a as i32);
    let ddof = || extra.as_i64().unwrap() as i32;
    match op {
        "sum" => lazulite::sum(x, set(), keepdims),
        "prod" => lazulite::prod(x, set(), keepdims),
        "max" => lazulite::max(x, set(), keepdims),
        "min" => lazulite::min(x, set(), keepdims),
        "all" => lazulite::all(x, set(), keepdims),
        "any" => lazulite::any(x, set(), keepdims),
        "mean" => lazulite::mean(x, set(), keepdims),
        "var" => lazulite::var(x, set(), keepdims, ddof()),
        "std" => lazulite::std(x, set(), keepdims, ddof()),
        "median" => lazulite::median(x, set(), keepdims),
        "logsumexp" => lazulite::logsumexp(x, set(), keepdims),
        "count_nonzero" => lazulite::count_nonzero(x, set(), keepdims),
        "argmax" => lazulite::argmax(x, one(), keepdims),
        "argmin" => lazulite::argmin(x, one(), keepdims),
        "softmax" => lazulite::softmax(x, set(), extra.as_bool().unwrap()),
        other => panic!("unknown op {other}"),
    }
}

/// (rtol, atol) for results of `dtype`.
fn tolerance(dtype: &str) -> (f64, f64) {
    match dtype {
        "float16" => (5e-3, 1e-3),
        "bfloat16" => (2e-2, 1e-2),
        "float32" | "complex64" => (2e-5, 1e-5),
        "float64" => (1e-11, 1e-11),
        _ => (0.0, 0.0),
    }
}

fn check(case: &Value, x: &Array, context: &str) {
    let op = case["op"].as_str().unwrap();
    let keepdims = case["keepdims"].as_bool().unwrap();
    let expected = &case["expected"];
    let got = run(op, x, &case["axes"], keepdims, &case["extra"])
        .unwrap_or_else(|e| panic!("{context}: {e}"));
    let (rtol, atol) = tolerance(expected["dtype"].as_str().unwrap());
    assert_matches(&got, expected, rtol, atol, context);
}

#[test]
fn every_op_dtype_layout_and_axes() {
    let fixture = load_fixture("reduce");
    let cases = fixture["cases"].as_array().unwrap();
    assert!(cases.len() > 5000);
    for case in cases {
        let (dtype, layout) = (
            case["dtype"].as_str().unwrap(),
            case["layout"].as_str().unwrap(),
        );
        let x = apply_layout(
            array_from_json(&fixture["bases"][format!("{dtype}/{layout}")]),
            layout,
        );
        let context = format!(
            "{}({dtype} {layout}, axes={}, keepdims={}, extra={})",
            case["op"], case["axes"], case["keepdims"], case["extra"]
        );
        check(case, &x, &context);
    }
}

#[test]
fn nan_infinities_wrapping_empty_and_scalars() {
    let fixture = load_fixture("reduce");
    for case in fixture["special"].as_array().unwrap() {
        let x = array_from_json(&case["input"]);
        let context = format!(
            "{}({:?} {}, axes={}, keepdims={}): {}",
            case["op"],
            x.shape(),
            x.dtype(),
            case["axes"],
            case["keepdims"],
            case["note"]
        );
        check(case, &x, &context);
    }
}

fn matrix() -> Array {
    Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap()
}

/// Checks `err` and that the input still evaluates to its values.
fn assert_error(result: lazulite::Result<Array>, kind: ErrorKind, needle: &str, input: &Array) {
    let err = result.expect_err(needle);
    assert_eq!(err.kind(), kind, "{err}");
    assert!(err.message().contains(needle), "{err}");
    assert_eq!(
        input.to_vec::<f32>().unwrap(),
        vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    );
}

#[test]
fn axes_out_of_range_are_axis_errors() {
    let a = matrix();
    assert_error(
        lazulite::sum(&a, 2, false),
        ErrorKind::Axis,
        "[sum] Invalid axis 2",
        &a,
    );
    assert_error(
        lazulite::max(&a, -3, false),
        ErrorKind::Axis,
        "[max] Invalid axis -3",
        &a,
    );
    assert_error(
        lazulite::mean(&a, [0, 5], false),
        ErrorKind::Axis,
        "[mean]",
        &a,
    );
    assert_error(lazulite::var(&a, 9, false, 0), ErrorKind::Axis, "[var]", &a);
    assert_error(lazulite::std(&a, 9, false, 0), ErrorKind::Axis, "[std]", &a);
    assert_error(
        lazulite::argmax(&a, Some(2), false),
        ErrorKind::Axis,
        "[argmax]",
        &a,
    );
    assert_error(
        lazulite::argmin(&a, Some(-3), false),
        ErrorKind::Axis,
        "[argmin]",
        &a,
    );
    assert_error(
        lazulite::logsumexp(&a, 2, false),
        ErrorKind::Axis,
        "[logsumexp]",
        &a,
    );
    assert_error(
        lazulite::softmax(&a, 2, false),
        ErrorKind::Axis,
        "[softmax]",
        &a,
    );
    assert_error(
        lazulite::median(&a, 2, false),
        ErrorKind::Axis,
        "[median]",
        &a,
    );
    assert_error(
        lazulite::count_nonzero(&a, 2, false),
        ErrorKind::Axis,
        "[count_nonzero]",
        &a,
    );
    let scalar = Array::scalar(1.0f32);
    let err = lazulite::sum(&scalar, 0, false).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Axis);
    let err = lazulite::argmax(&scalar, Some(0), false).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Axis);
}

#[test]
fn duplicate_axes_are_value_errors() {
    let a = matrix();
    // Literal duplicates, and duplicates only after normalising negative axes.
    for axes in [vec![0, 0], vec![0, -2]] {
        for result in [
            lazulite::sum(&a, axes.clone(), false),
            lazulite::all(&a, axes.clone(), false),
            lazulite::mean(&a, axes.clone(), false),
            lazulite::var(&a, axes.clone(), false, 0),
            lazulite::logsumexp(&a, axes.clone(), false),
            lazulite::softmax(&a, axes.clone(), false),
            lazulite::median(&a, axes.clone(), false),
            lazulite::count_nonzero(&a, axes.clone(), false),
        ] {
            assert_error(result, ErrorKind::Value, "Duplicate axes", &a);
        }
    }
}

#[test]
fn empty_reductions_without_identity_are_value_errors() {
    let a = matrix();
    let empty = lazulite::zeros(&[2, 0], DType::Float32).unwrap();
    let err = lazulite::max(&empty, 1, false).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Value);
    assert!(
        err.message()
            .contains("Cannot max reduce over axis 1 with size 0"),
        "{err}"
    );
    let err = lazulite::min(&empty, Axes::All, false).unwrap_err();
    assert!(
        err.message()
            .contains("[min] Cannot min reduce over axis 1"),
        "{err}"
    );
    for result in [
        lazulite::argmax(&empty, None, false),
        lazulite::argmin(&empty, Some(0), false),
    ] {
        let err = result.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Value);
        assert!(err.message().contains("Cannot arg"), "{err}");
    }
    let err = lazulite::logsumexp(&empty, 0, false).unwrap_err();
    assert_eq!(err.message(), "[logsumexp] Received empty array.");
    let err = lazulite::median(&empty, 1, false).unwrap_err();
    assert_eq!(
        err.message(),
        "[median] Cannot take median along empty axis."
    );
    // Reducing the non-empty axis of an empty array is fine (an empty result).
    assert_eq!(lazulite::max(&empty, 0, false).unwrap().shape(), &[0]);
    assert_eq!(a.to_vec::<f32>().unwrap().len(), 6);
}

#[test]
fn half_sums_accumulate_wide() {
    // MLX accumulates in float16 and gives inf here; the sum itself does overflow float16.
    let ones = lazulite::ones(&[70000], DType::Float16).unwrap();
    assert_eq!(
        lazulite::mean(&ones, Axes::All, false)
            .unwrap()
            .item::<f32>()
            .unwrap(),
        1.0
    );
    let s = lazulite::sum(&ones, Axes::All, false).unwrap();
    assert_eq!(s.dtype(), DType::Float16);
    assert_eq!(s.item::<f32>().unwrap(), f32::INFINITY);
    let small = lazulite::full(&[4096], 0.1, Some(DType::Float16)).unwrap();
    let total = lazulite::sum(&small, Axes::All, false)
        .unwrap()
        .item::<f32>()
        .unwrap();
    let exact = 4096.0 * f32::from(half::f16::from_f32(0.1));
    assert!((total - exact).abs() <= exact * 1e-3, "{total} vs {exact}");
}

#[test]
fn large_reductions_over_each_axis_agree() {
    // A 300 x 257 float32 array reduced over rows, columns and everything, against f64.
    let (rows, cols) = (300usize, 257usize);
    let data: Vec<f32> = (0..rows * cols)
        .map(|i| ((i * 7919) % 1000) as f32 / 100.0 - 5.0)
        .collect();
    let a = Array::from_slice(&data, &[rows, cols]).unwrap();
    let by_col: Vec<f64> = (0..cols)
        .map(|j| (0..rows).map(|i| data[i * cols + j] as f64).sum())
        .collect();
    let by_row: Vec<f64> = (0..rows)
        .map(|i| {
            data[i * cols..(i + 1) * cols]
                .iter()
                .map(|&v| v as f64)
                .sum()
        })
        .collect();
    for (got, want) in [
        (a.sum(0, false).unwrap(), &by_col),
        (a.sum(1, false).unwrap(), &by_row),
        (a.t().unwrap().sum(0, false).unwrap(), &by_row),
        (a.t().unwrap().sum(1, false).unwrap(), &by_col),
    ] {
        for (g, w) in got.to_vec::<f64>().unwrap().iter().zip(want) {
            assert!((g - w).abs() <= 1e-3 + 1e-6 * w.abs(), "{g} vs {w}");
        }
    }
    let total: f64 = by_row.iter().sum();
    let got = a.sum(Axes::All, false).unwrap().item::<f64>().unwrap();
    assert!((got - total).abs() <= 1e-6 * total.abs().max(1.0));
    let idx = a.argmax(Some(0), false).unwrap().to_vec::<u32>().unwrap();
    let idx_t = a
        .t()
        .unwrap()
        .argmax(Some(1), false)
        .unwrap()
        .to_vec::<u32>()
        .unwrap();
    assert_eq!(idx, idx_t);
    for (j, &i) in idx.iter().enumerate() {
        let col: Vec<f32> = (0..rows).map(|r| data[r * cols + j]).collect();
        let best = col.iter().cloned().fold(f32::MIN, f32::max);
        assert_eq!(col.iter().position(|&v| v == best).unwrap(), i as usize);
    }
}

#[test]
fn method_forms_match_functions() {
    let a = matrix();
    let same =
        |x: Array, y: Array| assert_eq!(x.to_vec::<f64>().unwrap(), y.to_vec::<f64>().unwrap());
    same(a.sum(1, true).unwrap(), lazulite::sum(&a, 1, true).unwrap());
    same(
        a.prod(Axes::All, false).unwrap(),
        lazulite::prod(&a, Axes::All, false).unwrap(),
    );
    same(
        a.max(0, false).unwrap(),
        lazulite::max(&a, 0, false).unwrap(),
    );
    same(
        a.min(0, false).unwrap(),
        lazulite::min(&a, 0, false).unwrap(),
    );
    same(
        a.all(0, false).unwrap(),
        lazulite::all(&a, 0, false).unwrap(),
    );
    same(
        a.any(0, false).unwrap(),
        lazulite::any(&a, 0, false).unwrap(),
    );
    same(
        a.mean([0, 1], false).unwrap(),
        lazulite::mean(&a, [0, 1], false).unwrap(),
    );
    same(
        a.var(1, false, 1).unwrap(),
        lazulite::var(&a, 1, false, 1).unwrap(),
    );
    same(
        a.std(1, false, 1).unwrap(),
        lazulite::std(&a, 1, false, 1).unwrap(),
    );
    same(
        a.logsumexp(1, false).unwrap(),
        lazulite::logsumexp(&a, 1, false).unwrap(),
    );
    same(
        a.count_nonzero(1, false).unwrap(),
        lazulite::count_nonzero(&a, 1, false).unwrap(),
    );
    same(
        a.median(1, false).unwrap(),
        lazulite::median(&a, 1, false).unwrap(),
    );
    same(
        a.argmax(None, false).unwrap(),
        lazulite::argmax(&a, None, false).unwrap(),
    );
    same(
        a.argmin(Some(1), true).unwrap(),
        lazulite::argmin(&a, Some(1), true).unwrap(),
    );
    same(
        a.softmax(1, true).unwrap(),
        lazulite::softmax(&a, 1, true).unwrap(),
    );
    assert_eq!(a.argmax(Some(1), true).unwrap().shape(), &[2, 1]);
    assert_eq!(a.argmax(None, true).unwrap().shape(), &[1, 1]);
}
