//! Shape, creation and ternary ops against NumPy (fixtures from `tools/fixtures/shape.py`),
//! over every dtype class and several input layouts, plus their errors.

use crate::common;

use common::{array_from_json, assert_matches, json_dtype, load_fixture};
use lazulite::*;
use serde_json::Value;

fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .expect("list")
        .iter()
        .map(|x| x.as_i64().expect("int"))
        .collect()
}

fn axes_i32(v: &Value) -> Vec<i32> {
    ints(v).into_iter().map(|x| x as i32).collect()
}

fn int(v: &Value) -> i64 {
    v.as_i64().expect("int")
}

fn optional_axis(v: &Value) -> Option<i32> {
    v.as_i64().map(|a| a as i32)
}

fn axes_or_all(v: &Value) -> Axes {
    if v.is_null() {
        Axes::All
    } else {
        Axes::List(axes_i32(v))
    }
}

fn scalar(v: &Value) -> Scalar {
    match v {
        Value::Number(n) if n.is_i64() => Scalar::Int(n.as_i64().unwrap()),
        Value::Number(n) => Scalar::Float(n.as_f64().unwrap()),
        Value::Bool(b) => Scalar::Bool(*b),
        other => panic!("not a scalar: {other}"),
    }
}

fn optional_scalar(v: &Value) -> Option<Operand> {
    (!v.is_null()).then(|| scalar(v).into())
}

/// Runs fixture op `op` on `x` with `args`; every op returns a list of arrays.
fn run(op: &str, x: &[Array], args: &Value) -> Result<Vec<Array>> {
    let one = |r: Result<Array>| r.map(|a| vec![a]);
    match op {
        "flatten" => one(flatten(
            &x[0],
            int(&args["start"]) as i32,
            int(&args["end"]) as i32,
        )),
        "unflatten" => one(unflatten(
            &x[0],
            int(&args["axis"]) as i32,
            &ints(&args["shape"]),
        )),
        "swapaxes" => one(x[0].swapaxes(int(&args["axis1"]) as i32, int(&args["axis2"]) as i32)),
        "moveaxis" => one(x[0].moveaxis(
            int(&args["source"]) as i32,
            int(&args["destination"]) as i32,
        )),
        "permute_dims" => one(permute_dims(&x[0], Some(&axes_i32(&args["axes"])))),
        "expand_dims" => one(expand_dims(&x[0], axes_i32(&args["axes"]))),
        "squeeze" => one(x[0].squeeze(axes_or_all(&args["axes"]))),
        "concatenate" => one(concatenate(x, optional_axis(&args["axis"]))),
        "stack" => one(stack(x, int(&args["axis"]) as i32)),
        "split" => {
            let axis = int(&args["axis"]) as i32;
            if args["sections"].is_null() {
                x[0].split(ints(&args["indices"]), axis)
            } else {
                x[0].split(int(&args["sections"]), axis)
            }
        }
        "unstack" => unstack(&x[0], int(&args["axis"]) as i32),
        "pad" => {
            let widths: Vec<(i64, i64)> = args["widths"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| (int(&w[0]), int(&w[1])))
                .collect();
            let value = if args["value"].is_null() {
                Scalar::Int(0)
            } else {
                scalar(&args["value"])
            };
            one(pad(&x[0], &widths, args["mode"].as_str().unwrap(), value))
        }
        "tile" => one(tile(&x[0], &ints(&args["reps"]))),
        "repeat" => one(repeat(
            &x[0],
            int(&args["repeats"]),
            optional_axis(&args["axis"]),
        )),
        "roll" => one(roll(
            &x[0],
            ints(&args["shift"]),
            axes_or_all(&args["axes"]),
        )),
        "flip" => one(flip(&x[0], axes_or_all(&args["axes"]))),
        "diagonal" => one(x[0].diagonal(
            int(&args["offset"]),
            int(&args["axis1"]) as i32,
            int(&args["axis2"]) as i32,
        )),
        "diag" => one(x[0].diag(int(&args["k"]))),
        "tril" => one(tril(&x[0], int(&args["k"]))),
        "triu" => one(triu(&x[0], int(&args["k"]))),
        "atleast_2d" => one(atleast_2d(&x[0])),
        "atleast_3d" => one(atleast_3d(&x[0])),
        "broadcast_arrays" => broadcast_arrays(x),
        "meshgrid" => meshgrid(
            x,
            args["sparse"].as_bool().unwrap(),
            args["indexing"].as_str().unwrap(),
        ),
        "contiguous" => one(contiguous(&x[0], false)),
        "where" => one(where_(&x[0], &x[1], &x[2])),
        "where_scalar_y" => one(where_(&x[0], &x[1], scalar(&args["y"]))),
        "clip" => one(clip(
            &x[0],
            optional_scalar(&args["min"]),
            optional_scalar(&args["max"]),
        )),
        "nan_to_num" => one(nan_to_num(
            &x[0],
            args["nan"].as_f64().unwrap(),
            args["posinf"].as_f64(),
            args["neginf"].as_f64(),
        )),
        "isclose" | "allclose" => {
            let f = if op == "isclose" { isclose } else { allclose };
            one(f(
                &x[0],
                &x[1],
                args["rtol"].as_f64().unwrap(),
                args["atol"].as_f64().unwrap(),
                args["equal_nan"].as_bool().unwrap(),
            ))
        }
        "array_equal" => one(array_equal(
            &x[0],
            &x[1],
            args["equal_nan"].as_bool().unwrap(),
        )),
        "divmod" => divmod(&x[0], &x[1]).map(|(q, r)| vec![q, r]),
        "linspace" => one(linspace(
            args["start"].as_f64().unwrap(),
            args["stop"].as_f64().unwrap(),
            int(&args["num"]) as usize,
            args["endpoint"].as_bool().unwrap(),
            json_dtype(&args["dtype"]),
        )),
        "eye" | "tri" => {
            let f = if op == "eye" { eye } else { tri };
            one(f(
                int(&args["n"]) as usize,
                args["m"].as_u64().map(|m| m as usize),
                int(&args["k"]),
                json_dtype(&args["dtype"]),
            ))
        }
        "trace" => one(trace(
            &x[0],
            int(&args["offset"]),
            int(&args["axis1"]) as i32,
            int(&args["axis2"]) as i32,
            (!args["dtype"].is_null()).then(|| json_dtype(&args["dtype"])),
        )),
        "view" => one(x[0].view(json_dtype(&args["dtype"]))),
        "view_transposed" => one(view(&x[0].t()?, json_dtype(&args["dtype"]))),
        "as_strided" => {
            let shape: Vec<usize> = ints(&args["shape"]).iter().map(|&d| d as usize).collect();
            one(as_strided(
                &x[0],
                Some(&shape),
                Some(&ints(&args["strides"])),
                int(&args["offset"]),
            ))
        }
        other => panic!("unknown fixture op {other}"),
    }
}

/// The same logical array stored transposed: a contiguous copy of its transpose, seen
/// through a transpose.
fn transposed_layout(a: &Array) -> Array {
    let reversed: Vec<i32> = (0..a.ndim() as i32).rev().collect();
    let stored = contiguous(&transpose(a, &reversed).unwrap(), false).unwrap();
    transpose(&stored, &reversed).unwrap()
}

/// The same logical array stored backwards on every axis, seen with negative strides.
fn reversed_layout(a: &Array) -> Array {
    let n = a.ndim();
    let (start, stop, step) = (vec![-1; n], vec![i64::MIN; n], vec![-1; n]);
    let stored = contiguous(&slice(a, &start, &stop, &step).unwrap(), false).unwrap();
    slice(&stored, &start, &stop, &step).unwrap()
}

/// A named way of storing an input: the function rebuilds the same values in that layout.
type Layout = (&'static str, fn(&Array) -> Array);

fn check_case(case: &Value, layouts: &[Layout], rtol: f64, atol: f64) {
    let op = case["op"].as_str().unwrap();
    let raw: Vec<Array> = case["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let a = array_from_json(v);
            match v.get("broadcast_to") {
                Some(shape) => {
                    let shape: Vec<usize> = ints(shape).iter().map(|&d| d as usize).collect();
                    broadcast_to(&a, &shape).unwrap()
                }
                None => a,
            }
        })
        .collect();
    let expected = case["expected"].as_array().unwrap();
    for (layout, make) in layouts {
        let inputs: Vec<Array> = raw.iter().map(make).collect();
        let context = format!("{op} {} {layout}", case["args"]);
        let outputs = run(op, &inputs, &case["args"]).unwrap_or_else(|e| panic!("{context}: {e}"));
        assert_eq!(
            outputs.len(),
            expected.len(),
            "{context}: number of outputs"
        );
        for (i, (out, exp)) in outputs.iter().zip(expected).enumerate() {
            assert_matches(
                out,
                exp,
                rtol,
                atol,
                &format!("{context} output {i} of {:?}", exp["dtype"]),
            );
        }
    }
}

#[test]
fn moves_match_numpy_in_every_layout_and_dtype() {
    let fixture = load_fixture("shape");
    let layouts: [Layout; 3] = [
        ("contiguous", Array::clone),
        ("transposed", transposed_layout),
        ("reversed", reversed_layout),
    ];
    let cases = fixture["moves"].as_array().unwrap();
    for case in cases {
        if case["inputs"][0].get("broadcast_to").is_some() {
            check_case(case, &layouts[..1], 0.0, 0.0);
        } else {
            check_case(case, &layouts, 0.0, 0.0);
        }
    }
    assert!(cases.len() > 600);
}

#[test]
fn computing_ops_match_numpy() {
    let fixture = load_fixture("shape");
    let layouts: [Layout; 2] = [("contiguous", Array::clone), ("reversed", reversed_layout)];
    for case in fixture["values"].as_array().unwrap() {
        let op = case["op"].as_str().unwrap();
        // float16 linspace/trace round differently from NumPy's float64-then-cast by at
        // most one unit in the last place.
        let rtol = if case["expected"][0]["dtype"] == "float16" {
            1e-3
        } else {
            1e-6
        };
        let layouts = if matches!(op, "view" | "view_transposed" | "as_strided") {
            &layouts[..1]
        } else {
            &layouts[..]
        };
        check_case(case, layouts, rtol, 0.0);
    }
}

fn vector(values: &[i32]) -> Array {
    Array::from_slice(values, &[values.len()]).unwrap()
}

fn matrix(rows: usize, cols: usize) -> Array {
    let data: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
    Array::from_slice(&data, &[rows, cols]).unwrap()
}

/// Asserts `result` is an error of `kind` and `input` still evaluates to its values.
fn assert_error<T: std::fmt::Debug>(result: Result<T>, kind: ErrorKind, input: &Array) {
    let before: Vec<f64> = input.to_vec().unwrap();
    let err = result.expect_err("an error");
    assert_eq!(err.kind(), kind, "{err}");
    assert!(
        err.message().starts_with('['),
        "message names the op: {err}"
    );
    assert_eq!(input.to_vec::<f64>().unwrap(), before);
}

#[test]
fn axis_errors_are_axis_errors() {
    let a = matrix(2, 3);
    assert_error(flatten(&a, 0, 5), ErrorKind::Axis, &a);
    assert_error(unflatten(&a, 2, &[1, 3]), ErrorKind::Axis, &a);
    assert_error(swapaxes(&a, 0, -3), ErrorKind::Axis, &a);
    assert_error(moveaxis(&a, 5, 0), ErrorKind::Axis, &a);
    assert_error(expand_dims(&a, -4), ErrorKind::Axis, &a);
    assert_error(squeeze(&a, 2), ErrorKind::Axis, &a);
    assert_error(concatenate(&[a.clone(), a.clone()], 2), ErrorKind::Axis, &a);
    assert_error(stack(std::slice::from_ref(&a), 3), ErrorKind::Axis, &a);
    assert_error(split(&a, 1, -3), ErrorKind::Axis, &a);
    assert_error(unstack(&a, 2), ErrorKind::Axis, &a);
    assert_error(repeat(&a, 2, 2), ErrorKind::Axis, &a);
    assert_error(roll(&a, 1, 2), ErrorKind::Axis, &a);
    assert_error(flip(&a, [0, 2]), ErrorKind::Axis, &a);
    assert_error(diagonal(&a, 0, 0, 2), ErrorKind::Axis, &a);
    let s = Array::scalar(1.0f32);
    assert_error(concatenate(&[s.clone(), s.clone()], 0), ErrorKind::Axis, &s);
    assert_error(split(&s, 1, 0), ErrorKind::Axis, &s);
}

#[test]
fn shape_mistakes_are_value_errors() {
    let a = matrix(2, 3);
    assert_error(flatten(&a, 1, 0), ErrorKind::Value, &a);
    assert_error(unflatten(&a, 1, &[2, -1]), ErrorKind::Value, &a);
    assert_error(unflatten(&a, 1, &[-1, -1]), ErrorKind::Value, &a);
    assert_error(unflatten(&a, 1, &[]), ErrorKind::Value, &a);
    assert_error(expand_dims(&a, [0, 0]), ErrorKind::Value, &a);
    assert_error(squeeze(&a, 0), ErrorKind::Value, &a);
    assert_error(
        squeeze(&expand_dims(&a, 0).unwrap(), [0, 0]),
        ErrorKind::Value,
        &a,
    );
    assert_error(concatenate(&[], 0), ErrorKind::Value, &a);
    assert_error(
        concatenate(&[a.clone(), matrix(3, 2)], 0),
        ErrorKind::Value,
        &a,
    );
    assert_error(
        concatenate(&[a.clone(), vector(&[1])], 0),
        ErrorKind::Value,
        &a,
    );
    assert_error(stack(&[], 0), ErrorKind::Value, &a);
    assert_error(stack(&[a.clone(), matrix(3, 2)], 0), ErrorKind::Value, &a);
    assert_error(
        broadcast_arrays(&[a.clone(), matrix(3, 3)]),
        ErrorKind::Value,
        &a,
    );
    assert_error(transpose(&a, &[0]), ErrorKind::Value, &a);
    assert_error(diagonal(&a, 0, 1, -1), ErrorKind::Value, &a);
    assert_error(diagonal(&vector(&[1]), 0, 0, 1), ErrorKind::Value, &a);
    assert_error(diag(&Array::scalar(1i32), 0), ErrorKind::Value, &a);
    assert_error(trace(&vector(&[1]), 0, 0, 1, None), ErrorKind::Value, &a);
    assert_error(tril(&vector(&[1, 2]), 0), ErrorKind::Value, &a);
    assert_error(triu(&vector(&[1, 2]), 0), ErrorKind::Value, &a);
    assert_error(
        meshgrid(std::slice::from_ref(&a), false, "yx"),
        ErrorKind::Value,
        &a,
    );
    assert_error(clip(&a, None, None), ErrorKind::Value, &a);
    assert_error(where_(&a, matrix(3, 2), 0), ErrorKind::Value, &a);
    assert_error(
        isclose(&a, &matrix(3, 2), 1e-5, 1e-8, false),
        ErrorKind::Value,
        &a,
    );
    let u = Array::from_slice(&[1u8, 2], &[2]).unwrap();
    assert_error(where_(true, &u, 300), ErrorKind::Value, &u);
    assert_error(clip(&u, Some((-1).into()), None), ErrorKind::Value, &u);
    let c = Array::from_slice(&[Complex::new(1.0, 1.0)], &[1]).unwrap();
    assert!(divmod(&c, 2).is_err());
}

#[test]
fn split_sections_must_divide_evenly() {
    let a = vector(&[0, 1, 2, 3, 4]);
    // MLX's message, which names the op in its words rather than in brackets.
    let err = split(&a, 2, 0).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Value);
    assert_eq!(
        err.message(),
        "Array split does not result in sub arrays with equal size: attempting 2 splits \
         along axis 0 for shape (5)."
    );
    assert_error(split(&a, 0, 0), ErrorKind::Value, &a);
    assert_error(split(&a, -1, 0), ErrorKind::Value, &a);
    let parts = split(&a, [1, 10], 0).unwrap();
    let lens: Vec<usize> = parts.iter().map(|p| p.size()).collect();
    assert_eq!(lens, vec![1, 4, 0]);
    assert_eq!(split(&a, Vec::<i64>::new(), 0).unwrap().len(), 1);
}

#[test]
fn pad_errors() {
    let a = matrix(2, 3);
    assert_error(pad(&a, &[(-1, 0)], "constant", 0), ErrorKind::Value, &a);
    assert_error(pad(&a, &[(0, 0), (0, -2)], "edge", 0), ErrorKind::Value, &a);
    assert_error(
        pad(&a, &[(1, 1), (1, 1), (1, 1)], "constant", 0),
        ErrorKind::Value,
        &a,
    );
    assert_error(pad(&a, &[(1, 1)], "wrap", 0), ErrorKind::Value, &a);
    assert_error(
        pad(&a, &[(1, 1)], "constant", matrix(1, 2)),
        ErrorKind::Value,
        &a,
    );
    assert_error(
        pad(&a, &[(i64::MAX, 1)], "constant", 0),
        ErrorKind::Value,
        &a,
    );
    let empty = Array::zeros(&[0], DType::Float32).unwrap();
    assert_error(pad(&empty, &[(1, 0)], "edge", 0), ErrorKind::Value, &empty);
    assert_error(
        pad(&empty, &[(0, 1)], "reflect", 0),
        ErrorKind::Value,
        &empty,
    );
    // Constant padding of an empty axis is fine; a 0-d array is returned as it is.
    let p = pad(&empty, &[(1, 2)], "constant", 4.5).unwrap();
    assert_eq!(p.to_vec::<f32>().unwrap(), vec![4.5; 3]);
    let s = Array::scalar(3i32);
    assert_eq!(
        pad(&s, &[(1, 1)], "constant", 0).unwrap().shape(),
        &[] as &[usize]
    );
    // The value takes the array's dtype (MLX: int array padded with 2.5 gets 2).
    let v = pad(&vector(&[1]), &[(1, 0)], "constant", 2.5).unwrap();
    assert_eq!(
        (v.dtype(), v.to_vec::<i32>().unwrap()),
        (DType::Int32, vec![2, 1])
    );
}

#[test]
fn wide_mirror_pads_record_a_few_nodes() {
    // Many periods of a short axis: values as NumPy's, and a width of 2^30 records
    // lazily instead of one array per period.
    let a = vector(&[1, 2, 3]);
    let r = pad(&a, &[(7, 5)], "reflect", 0).unwrap();
    assert_eq!(
        r.to_vec::<i32>().unwrap(),
        vec![2, 3, 2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3, 2]
    );
    let s = pad(&a, &[(4, 4)], "symmetric", 0).unwrap();
    assert_eq!(
        s.to_vec::<i32>().unwrap(),
        vec![3, 3, 2, 1, 1, 2, 3, 3, 2, 1, 1]
    );
    let wide = pad(&vector(&[1, 2]), &[(1 << 30, 1 << 30)], "reflect", 0).unwrap();
    assert_eq!(wide.shape(), [(1 << 31) + 2]);
}

#[test]
fn counts_and_sizes_are_checked() {
    let a = matrix(2, 3);
    assert_error(tile(&a, &[2, -1]), ErrorKind::Value, &a);
    assert_error(tile(&a, &[1 << 40, 1 << 40]), ErrorKind::Value, &a);
    assert_error(repeat(&a, -1, None), ErrorKind::Value, &a);
    assert_error(repeat(&a, 1 << 62, 0), ErrorKind::Value, &a);
    assert_error(roll(&a, Vec::<i64>::new(), 0), ErrorKind::Value, &a);
    assert_error(roll(&a, [1, 2, 3], [0, 1]), ErrorKind::Value, &a);
    assert!(linspace(0.0, 1.0, usize::MAX, true, DType::Float32).is_err());
    assert!(eye(1 << 40, None, 0, DType::Float32).is_err());
    assert!(diag(&vector(&[1]), i64::MAX).is_err());
    // Huge shifts and offsets are fine.
    let r = roll(&vector(&[1, 2, 3]), i64::MIN, 0).unwrap();
    assert_eq!(r.to_vec::<i32>().unwrap(), vec![3, 1, 2]); // -2**63 % 3 == 1
    assert_eq!(
        roll(&vector(&[1, 2, 3]), [i64::MAX, i64::MAX], None)
            .unwrap()
            .size(),
        3
    );
    assert_eq!(diagonal(&a, i64::MIN, 0, 1).unwrap().shape(), &[0]);
    assert_eq!(diagonal(&a, i64::MAX, 0, 1).unwrap().shape(), &[0]);
}

#[test]
fn as_strided_never_reads_outside_the_input() {
    let a = matrix(3, 4);
    let cases: [(&[usize], &[i64], i64); 6] = [
        (&[3, 2], &[4, 1], 4), // last element 4 + 8 + 1 = 13 > 11
        (&[2], &[-1], 0),      // reaches -1
        (&[1], &[1], 12),      // offset past the end
        (&[1], &[1], -1),      // negative offset
        (&[2, 2], &[i64::MAX, 1], 0),
        (&[2], &[1, 1], 0), // strides do not match the shape
    ];
    for (shape, strides, offset) in cases {
        assert_error(
            as_strided(&a, Some(shape), Some(strides), offset),
            ErrorKind::Value,
            &a,
        );
    }
    // The reachable range is exact: the last element and the first, backwards.
    let w = as_strided(&a, Some(&[2, 2]), Some(&[-6, -5]), 11).unwrap();
    assert_eq!(w.to_vec::<f32>().unwrap(), vec![11.0, 6.0, 5.0, 0.0]);
    let whole = as_strided(&a, None, None, 0).unwrap();
    assert_eq!(whole.to_vec::<f32>().unwrap(), a.to_vec::<f32>().unwrap());
    // A sliced input is read from its own first element.
    let tail = slice(&a, &[1, 0], &[3, 4], &[1, 1]).unwrap();
    let t = as_strided(&tail, Some(&[2]), Some(&[1]), 0).unwrap();
    assert_eq!(t.to_vec::<f32>().unwrap(), vec![4.0, 5.0]);
    assert_error(
        as_strided(&tail, Some(&[9]), Some(&[1]), 0),
        ErrorKind::Value,
        &a,
    );
}

#[test]
fn view_dtype_rules() {
    let a = matrix(2, 3);
    assert_error(view(&a, DType::Float64), ErrorKind::Value, &a);
    let s = Array::scalar(1.0f32);
    assert_error(view(&s, DType::Int8), ErrorKind::Value, &s);
    assert_eq!(
        view(&s, DType::UInt32).unwrap().item::<u32>().unwrap(),
        0x3f80_0000
    );
    // A sliced input whose first byte is not aligned to the new element size.
    let bytes = Array::from_slice(&[0u8, 1, 0, 2, 0], &[5]).unwrap();
    let tail = slice(&bytes, &[1], &[5], &[1]).unwrap();
    let halves = view(&tail, DType::UInt16).unwrap().to_vec::<u16>().unwrap();
    assert_eq!(
        halves,
        vec![u16::from_ne_bytes([1, 0]), u16::from_ne_bytes([2, 0])]
    );
    // bool views of arbitrary bytes read nonzero as true.
    let b = view(&Array::from_slice(&[0u8, 7], &[2]).unwrap(), DType::Bool).unwrap();
    assert_eq!(b.to_vec::<bool>().unwrap(), vec![false, true]);
}

#[test]
fn empty_and_zero_size_inputs() {
    let e = Array::zeros(&[0, 3], DType::Int32).unwrap();
    assert_eq!(flatten(&e, 0, -1).unwrap().shape(), &[0]);
    assert_eq!(
        concatenate(&[e.clone(), e.clone()], 1).unwrap().shape(),
        &[0, 6]
    );
    assert_eq!(
        stack(&[e.clone(), e.clone()], 1).unwrap().shape(),
        &[0, 2, 3]
    );
    assert_eq!(split(&e, 3, 1).unwrap()[2].shape(), &[0, 1]);
    assert_eq!(unstack(&e, 0).unwrap().len(), 0);
    assert_eq!(tile(&e, &[2, 2]).unwrap().shape(), &[0, 6]);
    assert_eq!(repeat(&e, 3, 1).unwrap().shape(), &[0, 9]);
    assert_eq!(roll(&e, 5, Axes::All).unwrap().shape(), &[0, 3]);
    assert_eq!(
        flip(&e, Axes::All).unwrap().to_vec::<i32>().unwrap(),
        Vec::<i32>::new()
    );
    assert_eq!(diagonal(&e, 0, 0, 1).unwrap().shape(), &[0]);
    assert_eq!(trace(&e, 0, 0, 1, None).unwrap().item::<i32>().unwrap(), 0);
    assert_eq!(pad(&e, &[(1, 1)], "constant", 7).unwrap().shape(), &[2, 5]);
    assert_eq!(view(&e, DType::UInt8).unwrap().shape(), &[0, 12]);
    assert_eq!(diag(&vector(&[]), -2).unwrap().shape(), &[2, 2]);
    assert_eq!(
        linspace(0.0, 1.0, 0, true, DType::Float32).unwrap().size(),
        0
    );
    assert_eq!(meshgrid(&[], false, "xy").unwrap().len(), 0);
    assert!(allclose(&e, &e, 1e-5, 1e-8, false)
        .unwrap()
        .item::<bool>()
        .unwrap());
}

#[test]
fn promotion_follows_mlx() {
    let i8a = Array::from_slice(&[1i8, 2], &[2]).unwrap();
    let u8a = Array::from_slice(&[1u8, 2], &[2]).unwrap();
    let f16 = Array::from_slice(&[half::f16::ONE; 2], &[2]).unwrap();
    assert_eq!(
        concatenate(&[i8a.clone(), f16.clone()], 0).unwrap().dtype(),
        DType::Float16
    );
    assert_eq!(
        stack(&[i8a.clone(), u8a.clone()], 0).unwrap().dtype(),
        DType::Int16
    );
    let out = broadcast_arrays(&[i8a.clone(), f16.clone()]).unwrap();
    assert_eq!(
        (out[0].dtype(), out[1].dtype()),
        (DType::Int8, DType::Float16)
    );
    let cond = Array::from_slice(&[true, false], &[2]).unwrap();
    assert_eq!(where_(&cond, true, false).unwrap().dtype(), DType::Bool);
    assert_eq!(where_(&cond, true, 2).unwrap().dtype(), DType::Int32);
    assert_eq!(where_(&cond, &f16, 2.5).unwrap().dtype(), DType::Float16);
    assert_eq!(where_(true, 1.5, 2).unwrap().shape(), &[] as &[usize]);
    let b = Array::from_slice(&[true, false], &[2]).unwrap();
    assert_eq!(
        clip(&b, Some(0.into()), Some(1.into())).unwrap().dtype(),
        DType::Int32
    );
    assert_eq!(
        empty(&[2], DType::Int8).unwrap().to_vec::<i8>().unwrap(),
        vec![0, 0]
    );
    let like = full_like(&i8a, 3, None).unwrap();
    assert_eq!(
        (like.dtype(), like.to_vec::<i8>().unwrap()),
        (DType::Int8, vec![3, 3])
    );
    assert_eq!(
        identity(2, DType::Float32)
            .unwrap()
            .to_vec::<f32>()
            .unwrap(),
        vec![1.0, 0.0, 0.0, 1.0]
    );
}

#[test]
fn reshape_views_keep_strided_inputs() {
    // flatten/expand_dims/squeeze of transposed and reversed inputs give NumPy's values
    // whether or not the layout allows a view.
    let a = matrix(3, 4);
    let t = a.t().unwrap();
    let expected: Vec<f32> = (0..4)
        .flat_map(|j| (0..3).map(move |i| (i * 4 + j) as f32))
        .collect();
    assert_eq!(
        flatten(&t, 0, -1).unwrap().to_vec::<f32>().unwrap(),
        expected
    );
    let e = expand_dims(&t, [0, 2]).unwrap();
    assert_eq!(e.shape(), &[1, 4, 1, 3]);
    assert_eq!(e.to_vec::<f32>().unwrap(), expected);
    assert_eq!(
        squeeze(&e, Axes::All).unwrap().to_vec::<f32>().unwrap(),
        expected
    );
    let r = flip(&a, Axes::All).unwrap();
    let u = unflatten(&flatten(&r, 0, 1).unwrap(), 0, &[2, 6]).unwrap();
    let mut backwards: Vec<f32> = (0..12).map(|i| i as f32).collect();
    backwards.reverse();
    assert_eq!(u.to_vec::<f32>().unwrap(), backwards);
}
