//! Helpers shared by the integration tests: loading NumPy-generated fixtures and
//! comparing arrays with them.
//!
//! A fixture array is a JSON object `{"dtype": "float32", "shape": [2, 3], "data": [...]}`
//! with the elements flat in row-major order. Non-finite floats are the strings
//! `"nan"`, `"inf"`, `"-inf"`; complex elements are `[re, im]` pairs. Fixtures are written
//! by the scripts in `tools/fixtures/` (run with NumPy) and committed.
#![allow(dead_code)]

use lazulite::{Array, Complex, DType};
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
