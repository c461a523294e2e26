//! Helpers shared by the integration tests: loading NumPy-generated fixtures and
//! comparing arrays with them.
//!
//! A fixture array is a JSON object `{"dtype": "float32", "shape": [2, 3], "data": [...]}`
//! with the elements flat in row-major order. Non-finite floats are the strings
//! `"nan"`, `"inf"`, `"-inf"`; complex elements are `[re, im]` pairs. Fixtures are written
//! by the scripts in `tools/fixtures/` (run with NumPy) and committed.
#![allow(dead_code)]

use lazulite::{jvp, vjp, vmap, Array, Complex, DType, Result};
use serde_json::Value;

/// Parses `crates/lazulite/tests/fixtures/<name>.json`.
pub fn load_fixture(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/{name}.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A float from a fixture number or one of the strings "nan", "inf", "-inf".
pub fn json_f64(v: &Value) -> f64 {
    match v {
        Value::Number(n) => n.as_f64().expect("number"),
        Value::String(s) => match s.as_str() {
            "nan" => f64::NAN,
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            other => panic!("bad float string {other}"),
        },
        Value::Bool(b) => *b as u8 as f64,
        other => panic!("not a float: {other}"),
    }
}

pub fn json_dtype(v: &Value) -> DType {
    DType::from_name(v.as_str().expect("dtype string")).expect("known dtype")
}

pub fn json_shape(v: &Value) -> Vec<usize> {
    v.as_array()
        .expect("shape list")
        .iter()
        .map(|d| d.as_u64().expect("dim") as usize)
        .collect()
}

/// Builds the array a fixture object describes.
pub fn array_from_json(v: &Value) -> Array {
    let dtype = json_dtype(&v["dtype"]);
    let shape = json_shape(&v["shape"]);
    let data = v["data"].as_array().expect("data list");
    let a = match dtype {
        DType::Complex64 => {
            let c: Vec<Complex> = data
                .iter()
                .map(|p| Complex::new(json_f64(&p[0]) as f32, json_f64(&p[1]) as f32))
                .collect();
            Array::from_slice(&c, &shape)
        }
        DType::Bool => {
            let b: Vec<bool> = data.iter().map(|x| json_f64(x) != 0.0).collect();
            Array::from_slice(&b, &shape)
        }
        DType::Int64 => {
            let i: Vec<i64> = data.iter().map(|x| x.as_i64().expect("int64")).collect();
            Array::from_slice(&i, &shape)
        }
        DType::UInt64 => {
            let u: Vec<u64> = data.iter().map(|x| x.as_u64().expect("uint64")).collect();
            Array::from_slice(&u, &shape)
        }
        _ => {
            let f: Vec<f64> = data.iter().map(json_f64).collect();
            Array::from_slice(&f, &shape).and_then(|a| a.astype(dtype))
        }
    };
    a.expect("fixture array")
}

/// Asserts `actual` has `expected`'s shape and, element by element in float64, values
/// within `|a - e| <= atol + rtol * |e|`.
pub fn assert_arrays_close(actual: &Array, expected: &Array, rtol: f64, atol: f64, context: &str) {
    assert_eq!(actual.shape(), expected.shape(), "{context}: shape");
    let as_f64 = |a: &Array| {
        lazulite::astype(a, DType::Float64)
            .unwrap()
            .to_vec::<f64>()
            .unwrap()
    };
    for (i, (x, y)) in as_f64(actual).iter().zip(&as_f64(expected)).enumerate() {
        assert!(
            (x - y).abs() <= atol + rtol * y.abs(),
            "{context}: element {i} is {x}, expected {y}"
        );
    }
}

/// Asserts `actual` has the fixture's dtype and shape and values within
/// `|a - e| <= atol + rtol * |e|` (NaN matches NaN, infinities match exactly).
pub fn assert_matches(actual: &Array, expected: &Value, rtol: f64, atol: f64, context: &str) {
    let dtype = json_dtype(&expected["dtype"]);
    let shape = json_shape(&expected["shape"]);
    assert_eq!(actual.dtype(), dtype, "{context}: dtype");
    assert_eq!(actual.shape(), &shape[..], "{context}: shape");
    let data = expected["data"].as_array().expect("data list");
    let close = |a: f64, e: f64| {
        (a.is_nan() && e.is_nan()) || a == e || (a - e).abs() <= atol + rtol * e.abs()
    };
    if dtype == DType::Complex64 {
        let got = actual.to_vec::<Complex>().expect("evaluates");
        for (i, (g, e)) in got.iter().zip(data).enumerate() {
            let (er, ei) = (json_f64(&e[0]), json_f64(&e[1]));
            assert!(
                close(g.re as f64, er) && close(g.im as f64, ei),
                "{context}: element {i}: got {g:?}, expected ({er}, {ei})"
            );
        }
        return;
    }
    if matches!(dtype, DType::Int64 | DType::UInt64) {
        let got = actual.to_vec::<i64>().expect("evaluates");
        for (i, (g, e)) in got.iter().zip(data).enumerate() {
            let e = e
                .as_i64()
                .or_else(|| e.as_u64().map(|u| u as i64))
                .expect("integer");
            assert_eq!(*g, e, "{context}: element {i}");
        }
        return;
    }
    let got = actual.to_vec::<f64>().expect("evaluates");
    for (i, (g, e)) in got.iter().zip(data).enumerate() {
        let e = json_f64(e);
        assert!(
            close(*g, e),
            "{context}: element {i}: got {g}, expected {e}"
        );
    }
}

// Transform oracles: float64 central differences for derivatives, a loop for vmap.

/// Deterministic pseudo-random values in [lo, hi).
pub fn uniform(seed: u64, n: usize, lo: f64, hi: f64) -> Vec<f64> {
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

pub fn array(values: &[f64], shape: &[usize]) -> Array {
    Array::from_slice(values, shape).unwrap()
}

pub fn dot(a: &Array, b: &[f64]) -> f64 {
    a.to_vec::<f64>()
        .unwrap()
        .iter()
        .zip(b)
        .map(|(x, y)| x * y)
        .sum()
}

pub type Fun<'a> = dyn Fn(&[Array]) -> Result<Array> + 'a;

/// Checks vjp and jvp of `f` at `inputs` along a random direction against central
/// differences: <w, J u> from finite differences, from jvp, and from vjp must agree.
/// The inputs may be any views (strided, broadcast): the directions are contiguous.
pub fn check_derivatives(name: &str, f: &Fun<'_>, inputs: &[Array]) {
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
pub fn check_vmap(
    name: &str,
    f: &Fun<'_>,
    inputs: &[Array],
    in_axes: Vec<Option<i32>>,
    out_axis: i32,
) {
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
