//! Elementwise ops, casts, views and creation ops against NumPy
//! (fixture: `tools/fixtures/elementwise.py` -> `fixtures/elementwise.json`).
//!
//! Every op runs on the same logical inputs in several memory layouts: contiguous,
//! transposed (a transposed view of a transposed copy), negatively strided (a `[::-1, ::-2]`
//! view of a reversed, spread-out copy), freshly computed (a buffer the kernel may reuse),
//! and broadcast. Elementwise results commute with views, so the expected value of a
//! layout is the fixture's value seen through the same view.

use crate::common;

use common::{array_from_json, json_dtype, json_f64, load_fixture};
use lazulite::{Array, Complex, DType, ErrorKind, Operand, Scalar};
use serde_json::{json, Value};
use std::sync::OnceLock;

fn fixture() -> &'static Value {
    static FIXTURE: OnceLock<Value> = OnceLock::new();
    FIXTURE.get_or_init(|| load_fixture("elementwise"))
}

// ----------------------------------------------------------------------------------------
// Comparing

/// Tolerance of one comparison: `|actual - expected| <= atol + rtol * |expected|`
/// (complex: per component, with `|expected|` the modulus); `zero_sign` also checks the
/// sign of zero results.
#[derive(Copy, Clone)]
struct Tol {
    rtol: f64,
    atol: f64,
    zero_sign: bool,
}

const EXACT: Tol = Tol {
    rtol: 0.0,
    atol: 0.0,
    zero_sign: true,
};

fn tol_of(case: &Value) -> Tol {
    Tol {
        rtol: case["rtol"].as_f64().unwrap_or(0.0),
        atol: case["atol"].as_f64().unwrap_or(0.0),
        zero_sign: case["zero_sign"].as_bool().unwrap_or(true),
    }
}

fn close(a: f64, e: f64, scale: f64, tol: Tol) -> bool {
    if a.is_nan() || e.is_nan() {
        return a.is_nan() && e.is_nan();
    }
    if a == e {
        return !(tol.zero_sign && a == 0.0 && a.is_sign_negative() != e.is_sign_negative());
    }
    e.is_finite() && (a - e).abs() <= tol.atol + tol.rtol * scale
}

fn assert_close(actual: &Array, expected: &Array, tol: Tol, context: &str) {
    assert_eq!(actual.dtype(), expected.dtype(), "{context}: dtype");
    assert_eq!(actual.shape(), expected.shape(), "{context}: shape");
    match expected.dtype() {
        DType::Complex64 => {
            let (got, want) = (
                actual.to_vec::<Complex>().unwrap(),
                expected.to_vec::<Complex>().unwrap(),
            );
            for (i, (g, e)) in got.iter().zip(&want).enumerate() {
                let scale = (e.re as f64).hypot(e.im as f64);
                let ok = close(g.re as f64, e.re as f64, scale, tol)
                    && close(g.im as f64, e.im as f64, scale, tol);
                assert!(ok, "{context}: element {i}: got {g:?}, expected {e:?}");
            }
        }
        DType::UInt64 => {
            let got = actual.to_vec::<u64>().unwrap();
            assert_eq!(got, expected.to_vec::<u64>().unwrap(), "{context}");
        }
        DType::Int64 => {
            let got = actual.to_vec::<i64>().unwrap();
            assert_eq!(got, expected.to_vec::<i64>().unwrap(), "{context}");
        }
        _ => {
            let (got, want) = (
                actual.to_vec::<f64>().unwrap(),
                expected.to_vec::<f64>().unwrap(),
            );
            for (i, (&g, &e)) in got.iter().zip(&want).enumerate() {
                assert!(
                    close(g, e, e.abs(), tol),
                    "{context}: element {i}: got {g:e}, expected {e:e}"
                );
            }
        }
    }
}

// ----------------------------------------------------------------------------------------
// Layouts of a 2-D fixture array with the same logical values

fn with_data(v: &Value, shape: &[usize], data: Vec<Value>) -> Value {
    json!({"dtype": v["dtype"], "shape": shape, "data": data})
}

fn dims(v: &Value) -> (usize, usize) {
    let s = common::json_shape(&v["shape"]);
    assert_eq!(s.len(), 2, "layouts are built for 2-D inputs");
    (s[0], s[1])
}

/// A transposed view (strides (1, rows)) of a transposed copy.
fn transposed(v: &Value) -> Array {
    let (r, c) = dims(v);
    let data = v["data"].as_array().unwrap();
    let t: Vec<Value> = (0..c * r)
        .map(|k| data[(k % r) * c + k / r].clone())
        .collect();
    let stored = array_from_json(&with_data(v, &[c, r], t));
    lazulite::transpose(&stored, &[1, 0]).unwrap()
}

/// A `[::-1, ::-2]` view of a copy that holds the values reversed, with filler between.
fn reversed(v: &Value) -> Array {
    let (r, c) = dims(v);
    let data = v["data"].as_array().unwrap();
    let mut stored = vec![data[0].clone(); r * 2 * c];
    for i in 0..r {
        for j in 0..c {
            stored[(r - 1 - i) * 2 * c + (2 * c - 1 - 2 * j)] = data[i * c + j].clone();
        }
    }
    let stored = array_from_json(&with_data(v, &[r, 2 * c], stored));
    let (r, c2) = (r as i64, 2 * c as i64);
    lazulite::slice(&stored, &[r - 1, c2 - 1], &[i64::MIN, i64::MIN], &[-1, -2]).unwrap()
}

/// A contiguous copy computed by the graph (reshape of a transposed view), held only by
/// the op that consumes it, so its buffer may be donated to the output.
fn fresh(v: &Value) -> Array {
    let (r, c) = dims(v);
    lazulite::reshape(&transposed(v), &[r as i64, c as i64]).unwrap()
}

const LAYOUTS: [&str; 4] = ["contiguous", "transposed", "reversed", "fresh"];

fn layout(name: &str, v: &Value) -> Array {
    match name {
        "contiguous" => array_from_json(v),
        "transposed" => transposed(v),
        "reversed" => reversed(v),
        _ => fresh(v),
    }
}

fn rows(a: &Array, start: i64, stop: i64) -> Array {
    let cols = a.shape()[1] as i64;
    lazulite::slice(a, &[start, 0], &[stop, cols], &[1, 1]).unwrap()
}

// ----------------------------------------------------------------------------------------
// Ops by name

type UnaryFn = fn(&Array) -> lazulite::Result<Array>;

fn unary_fn(op: &str) -> UnaryFn {
    use lazulite::*;
    match op {
        "abs" => abs,
        "negative" => negative,
        "sign" => sign,
        "square" => square,
        "sqrt" => sqrt,
        "rsqrt" => rsqrt,
        "reciprocal" => reciprocal,
        "exp" => exp,
        "expm1" => expm1,
        "log" => log,
        "log1p" => log1p,
        "log2" => log2,
        "log10" => log10,
        "sin" => sin,
        "cos" => cos,
        "tan" => tan,
        "arcsin" => arcsin,
        "arccos" => arccos,
        "arctan" => arctan,
        "sinh" => sinh,
        "cosh" => cosh,
        "tanh" => tanh,
        "arcsinh" => arcsinh,
        "arccosh" => arccosh,
        "arctanh" => arctanh,
        "sigmoid" => sigmoid,
        "erf" => erf,
        "erfinv" => erfinv,
        "floor" => floor,
        "ceil" => ceil,
        "round" => |a| round(a, 0),
        "trunc" => trunc,
        "isnan" => isnan,
        "isinf" => isinf,
        "isposinf" => isposinf,
        "isneginf" => isneginf,
        "isfinite" => isfinite,
        "logical_not" => logical_not,
        "bitwise_invert" => bitwise_invert,
        "real" => real,
        "imag" => imag,
        "conjugate" => conjugate,
        "stop_gradient" => stop_gradient,
        "degrees" => degrees,
        "radians" => radians,
        other => panic!("unknown unary op {other}"),
    }
}

type BinaryFn = fn(Operand, Operand) -> lazulite::Result<Array>;

fn binary_fn(op: &str) -> BinaryFn {
    macro_rules! by_name {
        ($($name:ident),*) => {
            match op {
                $(stringify!($name) => |a, b| lazulite::$name(a, b),)*
                other => panic!("unknown binary op {other}"),
            }
        };
    }
    by_name!(
        add,
        subtract,
        multiply,
        divide,
        floor_divide,
        remainder,
        power,
        maximum,
        minimum,
        arctan2,
        logaddexp,
        equal,
        not_equal,
        less,
        less_equal,
        greater,
        greater_equal,
        logical_and,
        logical_or,
        bitwise_and,
        bitwise_or,
        bitwise_xor,
        left_shift,
        right_shift
    )
}

fn cases(section: &str) -> &'static [Value] {
    fixture()[section].as_array().expect("fixture section")
}

// ----------------------------------------------------------------------------------------
// Unary

#[test]
fn unary_ops_in_every_layout() {
    let mut checked = 0;
    for case in cases("unary") {
        let op = case["op"].as_str().unwrap();
        let f = unary_fn(op);
        let x = &case["x"];
        let ctx = format!("{op}({})", x["dtype"]);
        if case["error"].as_bool() == Some(true) {
            let a = array_from_json(x);
            let err = f(&a).expect_err(&ctx);
            assert_eq!(err.kind(), ErrorKind::Value, "{ctx}: {err}");
            assert!(err.to_string().contains(&format!("[{op}]")), "{ctx}: {err}");
            assert_eq!(a.shape(), &[4, 6], "{ctx}: input intact");
            a.eval().unwrap();
            continue;
        }
        let expected = array_from_json(&case["expected"]);
        let tol = tol_of(case);
        for name in LAYOUTS {
            let got = f(&layout(name, x)).unwrap();
            assert_close(&got, &expected, tol, &format!("{ctx} {name}"));
        }
        // Broadcast input: row 1 repeated.
        let row = lazulite::broadcast_to(&rows(&array_from_json(x), 1, 2), &[3, 6]).unwrap();
        let want = lazulite::broadcast_to(&rows(&expected, 1, 2), &[3, 6]).unwrap();
        assert_close(&f(&row).unwrap(), &want, tol, &format!("{ctx} broadcast"));
        // Empty and 0-d inputs.
        let empty = f(&rows(&array_from_json(x), 2, 2)).unwrap();
        assert_eq!(
            (empty.shape(), empty.dtype()),
            (&[0, 6][..], expected.dtype())
        );
        assert!(empty.to_vec::<f64>().unwrap().is_empty());
        let scalar = lazulite::reshape(&rows(&transposed(x), 3, 4), &[6, 1]).unwrap();
        let scalar = lazulite::slice(&scalar, &[5, 0], &[6, 1], &[1, 1]).unwrap();
        let scalar = lazulite::reshape(&scalar, &[]).unwrap();
        let want = lazulite::reshape(
            &lazulite::slice(&expected, &[3, 5], &[4, 6], &[1, 1]).unwrap(),
            &[],
        )
        .unwrap();
        assert_close(&f(&scalar).unwrap(), &want, tol, &format!("{ctx} 0-d"));
        checked += 1;
    }
    assert!(checked > 500, "only {checked} unary cases");
}

/// Complex functions checked per component (relative to the component, not the modulus),
/// on inputs where naive formulas lose a component: sqrt(1 + 1e-8i), log near |z| = 1,
/// expm1/log1p near 0, tan/tanh with a large imaginary/real part, exp(800 + 0i).
#[test]
fn complex_functions_keep_small_components() {
    let tol = Tol {
        rtol: 4e-6,
        atol: 1e-37,
        zero_sign: false,
    };
    for case in cases("complex_precise") {
        let op = case["op"].as_str().unwrap();
        let got = unary_fn(op)(&array_from_json(&case["x"])).unwrap();
        let got = got.to_vec::<Complex>().unwrap();
        let want = array_from_json(&case["expected"])
            .to_vec::<Complex>()
            .unwrap();
        for (i, (g, e)) in got.iter().zip(&want).enumerate() {
            let ok = close(g.re as f64, e.re as f64, e.re.abs() as f64, tol)
                && close(g.im as f64, e.im as f64, e.im.abs() as f64, tol);
            assert!(ok, "{op}: element {i}: got {g:?}, expected {e:?}");
        }
    }
}

// ----------------------------------------------------------------------------------------
// Binary

#[test]
fn binary_ops_in_every_layout_pair() {
    let pairs = [
        ("contiguous", "contiguous"),
        ("transposed", "reversed"),
        ("reversed", "transposed"),
        ("fresh", "contiguous"),
        ("contiguous", "fresh"),
        ("fresh", "fresh"),
    ];
    let mut checked = 0;
    for case in cases("binary") {
        let op = case["op"].as_str().unwrap();
        let f = binary_fn(op);
        let (a, b) = (&case["a"], &case["b"]);
        let ctx = format!("{op}({})", a["dtype"]);
        if case["error"].as_bool() == Some(true) {
            let (x, y) = (array_from_json(a), array_from_json(b));
            let err = f((&x).into(), (&y).into()).expect_err(&ctx);
            // Bitwise ops of floats: MLX's kernel finds them, so its error is a RuntimeError.
            let bitwise = matches!(
                op,
                "bitwise_and" | "bitwise_or" | "bitwise_xor" | "left_shift" | "right_shift"
            );
            let kind = if bitwise {
                ErrorKind::Runtime
            } else {
                ErrorKind::Value
            };
            assert_eq!(err.kind(), kind, "{ctx}: {err}");
            assert!(err.to_string().contains(&format!("[{op}]")), "{ctx}: {err}");
            x.eval().unwrap();
            y.eval().unwrap();
            continue;
        }
        let expected = array_from_json(&case["expected"]);
        let tol = tol_of(case);
        for (la, lb) in pairs {
            let got = f(layout(la, a).into(), layout(lb, b).into()).unwrap();
            assert_close(&got, &expected, tol, &format!("{ctx} {la}/{lb}"));
        }
        let bc = &case["broadcast"];
        let want = array_from_json(&bc["expected"]);
        for (la, lb) in [("contiguous", "contiguous"), ("transposed", "reversed")] {
            let got = f(layout(la, &bc["a"]).into(), layout(lb, &bc["b"]).into()).unwrap();
            assert_close(&got, &want, tol, &format!("{ctx} broadcast {la}/{lb}"));
        }
        // The same op with one side 0-d (element (2, 3) of b) and one side empty.
        let b0 = lazulite::slice(&array_from_json(b), &[2, 3], &[3, 4], &[1, 1]).unwrap();
        let b0 = lazulite::reshape(&b0, &[]).unwrap();
        let col = lazulite::slice(&expected, &[0, 0], &[4, 6], &[1, 1]).unwrap();
        let got = f(array_from_json(a).into(), b0.into()).unwrap();
        assert_eq!(
            (got.shape(), got.dtype()),
            (col.shape(), col.dtype()),
            "{ctx}"
        );
        let empty = f(
            rows(&array_from_json(a), 1, 1).into(),
            array_from_json(b).into(),
        );
        assert!(
            empty.is_err(),
            "{ctx}: (0, 6) with (4, 6) does not broadcast"
        );
        let empty = f(
            rows(&array_from_json(a), 1, 1).into(),
            rows(&array_from_json(b), 0, 1).into(),
        )
        .unwrap();
        assert_eq!(empty.shape(), &[0, 6], "{ctx}");
        assert!(empty.to_vec::<f64>().unwrap().is_empty());
        checked += 1;
    }
    assert!(checked > 250, "only {checked} binary cases");
}

#[test]
fn binary_ops_promote_mixed_dtypes() {
    for case in cases("mixed") {
        let op = case["op"].as_str().unwrap();
        let f = binary_fn(op);
        let (a, b) = (&case["a"], &case["b"]);
        let ctx = format!("{op}({}, {})", a["dtype"], b["dtype"]);
        let expected = array_from_json(&case["expected"]);
        for (la, lb) in [("contiguous", "contiguous"), ("reversed", "transposed")] {
            let got = f(layout(la, a).into(), layout(lb, b).into()).unwrap();
            assert_close(&got, &expected, tol_of(case), &format!("{ctx} {la}/{lb}"));
        }
    }
}

fn scalar_of(v: &Value) -> Scalar {
    let value = &v["value"];
    match v["kind"].as_str().unwrap() {
        "int" => Scalar::Int(value.as_i64().unwrap()),
        "float" => Scalar::Float(json_f64(value)),
        _ => Scalar::Bool(value.as_bool().unwrap()),
    }
}

#[test]
fn weak_scalars_on_either_side() {
    for case in cases("scalar") {
        let op = case["op"].as_str().unwrap();
        let f = binary_fn(op);
        let s = scalar_of(&case["scalar"]);
        let a = &case["a"];
        let side = case["side"].as_str().unwrap();
        let ctx = format!("{op}({}, {s:?}) {side}", a["dtype"]);
        let expected = array_from_json(&case["expected"]);
        for name in ["contiguous", "reversed"] {
            let x = layout(name, a);
            let got = if side == "right" {
                f(x.into(), s.into())
            } else {
                f(s.into(), x.into())
            }
            .unwrap();
            assert_close(&got, &expected, tol_of(case), &format!("{ctx} {name}"));
        }
    }
}

// ----------------------------------------------------------------------------------------
// astype and round

#[test]
fn astype_between_all_dtypes() {
    let all = cases("astype");
    assert_eq!(all.len(), 14 * 14);
    for case in all {
        let x = &case["x"];
        let dtype = json_dtype(&case["dtype"]);
        let ctx = format!("astype({} -> {dtype})", x["dtype"]);
        let expected = array_from_json(&case["expected"]);
        let got = lazulite::astype(&array_from_json(x), dtype).unwrap();
        assert_close(&got, &expected, EXACT, &ctx);
        // Negatively strided input.
        let n = x["data"].as_array().unwrap().len() as i64;
        let rev = lazulite::slice(&array_from_json(x), &[n - 1], &[i64::MIN], &[-1]).unwrap();
        let want = lazulite::slice(&expected, &[n - 1], &[i64::MIN], &[-1]).unwrap();
        assert_close(
            &lazulite::astype(&rev, dtype).unwrap(),
            &want,
            EXACT,
            &format!("{ctx} reversed"),
        );
    }
}

/// Casts NumPy leaves undefined (out-of-range floats into integers) follow the C-cast
/// rule the code documents: truncate toward zero, then wrap modulo 2^bits; NaN gives 0.
#[test]
fn astype_out_of_range_floats_wrap() {
    let x = Array::from_slice(
        &[-1.0f64, -1.5, 300.7, -129.0, 65536.0 + 7.0, f64::NAN],
        &[6],
    );
    let x = x.unwrap();
    assert_eq!(
        lazulite::astype(&x, DType::UInt8)
            .unwrap()
            .to_vec::<u8>()
            .unwrap(),
        vec![255, 255, 44, 127, 7, 0]
    );
    assert_eq!(
        lazulite::astype(&x, DType::Int16)
            .unwrap()
            .to_vec::<i16>()
            .unwrap(),
        vec![-1, -1, 300, -129, 7, 0]
    );
    assert_eq!(
        lazulite::astype(&x, DType::UInt64)
            .unwrap()
            .to_vec::<u64>()
            .unwrap(),
        vec![u64::MAX, u64::MAX, 300, (-129i64) as u64, 65543, 0]
    );
}

#[test]
fn round_with_decimals() {
    for case in cases("round") {
        let x = array_from_json(&case["x"]);
        let d = case["decimals"].as_i64().unwrap() as i32;
        let ctx = format!("round({}, {d})", case["x"]["dtype"]);
        let expected = array_from_json(&case["expected"]);
        // NumPy rounds complex parts as separate floats; lazulite scales by a complex
        // product, whose zero parts may carry the other sign.
        let tol = Tol {
            zero_sign: x.dtype() != DType::Complex64,
            ..EXACT
        };
        assert_close(&lazulite::round(&x, d).unwrap(), &expected, tol, &ctx);
    }
}

// ----------------------------------------------------------------------------------------
// Views

#[test]
fn reshape_transpose_broadcast_slice() {
    let v = &fixture()["views"];
    let base = array_from_json(&v["base"]);
    let shape_of = |c: &Value| -> Vec<i64> {
        c["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_i64().unwrap())
            .collect()
    };
    for c in v["reshape"].as_array().unwrap() {
        let got = lazulite::reshape(&base, &shape_of(c)).unwrap();
        assert_close(&got, &array_from_json(&c["expected"]), EXACT, "reshape");
    }
    let t = lazulite::transpose(&base, &[2, 0, 1]).unwrap();
    for c in v["reshape_transposed"].as_array().unwrap() {
        let got = lazulite::reshape(&t, &shape_of(c)).unwrap();
        assert_close(&got, &array_from_json(&c["expected"]), EXACT, "reshape(T)");
    }
    for c in v["transpose"].as_array().unwrap() {
        let axes: Vec<i32> = c["axes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_i64().unwrap() as i32)
            .collect();
        let got = lazulite::transpose(&base, &axes).unwrap();
        assert_close(&got, &array_from_json(&c["expected"]), EXACT, "transpose");
    }
    let small = array_from_json(&v["broadcast_small"]);
    for c in v["broadcast_to"].as_array().unwrap() {
        let shape: Vec<usize> = shape_of(c).iter().map(|&d| d as usize).collect();
        let got = lazulite::broadcast_to(&small, &shape).unwrap();
        assert_close(
            &got,
            &array_from_json(&c["expected"]),
            EXACT,
            "broadcast_to",
        );
    }
    let ints = |c: &Value, key: &str| -> Vec<i64> {
        c[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_i64().unwrap())
            .collect()
    };
    for c in v["slice"].as_array().unwrap() {
        let (start, stop, step) = (ints(c, "start"), ints(c, "stop"), ints(c, "step"));
        let got = lazulite::slice(&base, &start, &stop, &step).unwrap();
        let ctx = format!("slice {start:?} {stop:?} {step:?}");
        assert_close(&got, &array_from_json(&c["expected"]), EXACT, &ctx);
        // The view also works as the input of a kernel and of another view.
        let doubled = lazulite::multiply(&got, 2)
            .unwrap()
            .to_vec::<i32>()
            .unwrap();
        let values = got.to_vec::<i32>().unwrap();
        assert_eq!(doubled, values.iter().map(|v| v * 2).collect::<Vec<_>>());
    }
    let r1 = lazulite::slice(&base, &[1, 0, 3], &[i64::MIN, 3, i64::MIN], &[-1, 2, -1]).unwrap();
    let r2 = lazulite::slice(&r1, &[0, 1, 1], &[2, i64::MIN, 3], &[1, -1, 1]).unwrap();
    let want = array_from_json(&v["slice_of_slice"]["expected"]);
    assert_close(&r2, &want, EXACT, "slice of slice");
}

#[test]
fn slice_bounds_match_python() {
    let all = fixture()["views"]["slice1d"].as_array().unwrap();
    for c in all {
        let c: Vec<&Value> = c.as_array().unwrap().iter().collect();
        let n = c[0].as_u64().unwrap() as usize;
        let (start, stop, step) = (
            c[1].as_i64().unwrap(),
            c[2].as_i64().unwrap(),
            c[3].as_i64().unwrap(),
        );
        let want: Vec<i32> = c[4]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap() as i32)
            .collect();
        let a = Array::from_slice(&(0..n as i32).collect::<Vec<_>>(), &[n]).unwrap();
        let got = lazulite::slice(&a, &[start], &[stop], &[step]).unwrap();
        assert_eq!(
            got.to_vec::<i32>().unwrap(),
            want,
            "n={n} {start}:{stop}:{step}"
        );
    }
}

#[test]
fn view_errors() {
    let a = Array::from_slice(&[0.0f32; 6], &[2, 3]).unwrap();
    let value_err = |r: lazulite::Result<Array>, needle: &str| {
        let e = r.expect_err(needle);
        assert_eq!(e.kind(), ErrorKind::Value, "{e}");
        assert!(e.to_string().contains(needle), "{e} lacks {needle}");
    };
    value_err(lazulite::reshape(&a, &[4, 2]), "[reshape]");
    value_err(lazulite::reshape(&a, &[-1, -1]), "infer one dimension");
    // As MLX prints them: the inferred size as the quotient, a negative size as given.
    value_err(
        lazulite::reshape(&a, &[4, -1]),
        "[reshape] Cannot reshape array of size 6 into shape (4,1).",
    );
    value_err(
        lazulite::reshape(&a, &[-2, 3]),
        "[reshape] Cannot reshape array of size 6 into shape (-2,3).",
    );
    value_err(lazulite::reshape(&a, &[i64::MAX, 3]), "[reshape]");
    value_err(lazulite::transpose(&a, &[0]), "[transpose]");
    value_err(lazulite::transpose(&a, &[0, 0]), "[transpose]");
    assert_eq!(
        lazulite::transpose(&a, &[0, 2]).unwrap_err().kind(),
        ErrorKind::Axis
    );
    // MLX's messages: the shapes' own broadcast fails, or gives another shape.
    value_err(
        lazulite::broadcast_to(&a, &[3, 3]),
        "[broadcast_shapes] Shapes (2,3) and (3,3) cannot be broadcast.",
    );
    value_err(
        lazulite::broadcast_to(&a, &[3]),
        "Cannot broadcast array of shape (2,3) into shape (3).",
    );
    value_err(lazulite::slice(&a, &[0, 0], &[1, 1], &[1, 0]), "[slice]");
    value_err(lazulite::slice(&a, &[0], &[1], &[1]), "[slice]");
    assert_eq!(a.to_vec::<f32>().unwrap(), vec![0.0; 6], "input intact");
    // Zero-size reshapes: -1 is ambiguous next to a 0.
    let z = Array::from_slice::<f32>(&[], &[0, 3]).unwrap();
    assert_eq!(lazulite::reshape(&z, &[3, -1]).unwrap().shape(), &[3, 0]);
    value_err(lazulite::reshape(&z, &[0, -1]), "[reshape]");
}

// ----------------------------------------------------------------------------------------
// Creation

#[test]
fn arange_and_full() {
    let c = &fixture()["creation"];
    for case in c["arange"].as_array().unwrap() {
        let (start, stop, step) = (
            json_f64(&case["start"]),
            json_f64(&case["stop"]),
            json_f64(&case["step"]),
        );
        let dtype = json_dtype(&case["dtype"]);
        let got = lazulite::arange(start, stop, step, dtype).unwrap();
        let ctx = format!("arange({start}, {stop}, {step}, {dtype})");
        assert_close(&got, &array_from_json(&case["expected"]), EXACT, &ctx);
    }
    for case in c["full"].as_array().unwrap() {
        let value: Operand = match case["kind"].as_str().unwrap() {
            "int" => case["value"].as_i64().unwrap().into(),
            "float" => case["value"].as_f64().unwrap().into(),
            _ => case["value"].as_bool().unwrap().into(),
        };
        let dtype = case["dtype"].as_str().map(|d| DType::from_name(d).unwrap());
        let got = lazulite::full(&[2, 3], value, dtype).unwrap();
        let ctx = format!("full({}, {dtype:?})", case["value"]);
        assert_close(&got, &array_from_json(&case["expected"]), EXACT, &ctx);
    }
    for dtype in DType::ALL {
        let z = lazulite::zeros(&[2, 0, 3], dtype).unwrap();
        assert_eq!((z.shape(), z.dtype()), (&[2, 0, 3][..], dtype));
        let o = lazulite::ones(&[3], dtype).unwrap();
        assert_eq!(o.to_vec::<f64>().unwrap(), vec![1.0; 3], "{dtype}");
        assert_eq!(
            lazulite::zeros(&[], dtype).unwrap().item::<f64>().unwrap(),
            0.0
        );
    }
    // full broadcasts an array value; the dtype defaults to the value's.
    let row = Array::from_slice(&[1u8, 2], &[2]).unwrap();
    let f = lazulite::full(&[2, 2], &row, None).unwrap();
    assert_eq!(
        (f.dtype(), f.to_vec::<u8>().unwrap()),
        (DType::UInt8, vec![1, 2, 1, 2])
    );
    let e = lazulite::full(&[3], &row, None).expect_err("does not broadcast");
    assert_eq!(e.kind(), ErrorKind::Value);
    for (start, stop, step) in [
        (0.0, 1.0, 0.0),
        (0.0, f64::INFINITY, 1.0),
        (f64::NAN, 1.0, 1.0),
    ] {
        let e = lazulite::arange(start, stop, step, DType::Float32).expect_err("bad arange");
        assert_eq!(e.kind(), ErrorKind::Value);
    }
    let e = lazulite::arange(0.0, 3.0, 1.0, DType::Bool).expect_err("bool arange");
    assert_eq!(e.kind(), ErrorKind::Value);
    let e = lazulite::arange(0.0, 1e300, 1.0, DType::Float32).expect_err("too long");
    assert_eq!(e.kind(), ErrorKind::Value);
}

// ----------------------------------------------------------------------------------------
// Semantics where lazulite follows MLX or documents its own choice (hand-derived)

#[test]
fn power_of_two_is_the_exactly_rounded_square() {
    // A scalar exponent 2 squares; each result must be the float64 square of the input
    // rounded once to the dtype (exact in float64 for float32 inputs), specials included.
    let values = [
        0.0f32,
        -0.0,
        1.5,
        -3.25,
        1e-30,
        3e20,
        1e30,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        0.1,
        -7.77e-5,
        12345.678,
    ];
    let x = Array::from_slice(&values, &[values.len()]).unwrap();
    let got = lazulite::power(&x, 2.0).unwrap().to_vec::<f32>().unwrap();
    for (&v, &g) in values.iter().zip(&got) {
        let want = (f64::from(v) * f64::from(v)) as f32;
        assert!(
            g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan()),
            "{v}: {g} vs {want}"
        );
    }
    // float64 squares: against the product, and an exponent array of twos takes the
    // general power (same values where it is exact).
    let x64 = x.astype(DType::Float64).unwrap();
    let squared = lazulite::power(&x64, 2.0).unwrap().to_vec::<f64>().unwrap();
    let twos = lazulite::full(&[values.len()], 2.0, Some(DType::Float64)).unwrap();
    let general = lazulite::power(&x64, &twos)
        .unwrap()
        .to_vec::<f64>()
        .unwrap();
    for ((&v, &s), &g) in values.iter().zip(&squared).zip(&general) {
        let v = f64::from(v);
        assert!(
            s.to_bits() == (v * v).to_bits() || (s.is_nan() && v.is_nan()),
            "{v}"
        );
        assert!(
            s == g || (s.is_nan() && g.is_nan()) || ((s - g) / s).abs() < 1e-15,
            "{v}"
        );
    }
    // Half precision rounds the float32 square once more, as its general power does.
    for dtype in [DType::Float16, DType::BFloat16] {
        let h = x.astype(dtype).unwrap();
        let got = lazulite::power(&h, 2.0)
            .unwrap()
            .astype(DType::Float32)
            .unwrap();
        let wide = h.astype(DType::Float32).unwrap();
        let want = lazulite::multiply(&wide, &wide)
            .unwrap()
            .astype(dtype)
            .unwrap()
            .astype(DType::Float32)
            .unwrap();
        assert!(
            lazulite::array_equal(&got, &want, true)
                .unwrap()
                .item::<bool>()
                .unwrap(),
            "{dtype}"
        );
    }
}

#[test]
fn documented_integer_semantics() {
    let i = |v: &[i32]| Array::from_slice(v, &[v.len()]).unwrap();
    // Negative integer powers: the integer part of the exact result.
    let p = lazulite::power(i(&[2, 1, -1, -1, 0, -3]), i(&[-1, -5, -1, -2, -1, -2])).unwrap();
    assert_eq!(p.to_vec::<i32>().unwrap(), vec![0, 1, -1, 1, 0, 0]);
    // Division by zero gives 0 for // and % (NumPy; MLX's % gives the dividend).
    let a = i(&[7, -7, 0, i32::MIN]);
    let z = lazulite::floor_divide(&a, 0)
        .unwrap()
        .to_vec::<i32>()
        .unwrap();
    assert_eq!(z, vec![0, 0, 0, 0]);
    let z = lazulite::remainder(&a, 0).unwrap().to_vec::<i32>().unwrap();
    assert_eq!(z, vec![0, 0, 0, 0]);
    // INT_MIN // -1 wraps (NumPy) instead of trapping (MLX).
    let m = lazulite::floor_divide(&a, -1)
        .unwrap()
        .to_vec::<i32>()
        .unwrap();
    assert_eq!(m, vec![-7, 7, 0, i32::MIN]);
    let r = lazulite::remainder(&a, -1)
        .unwrap()
        .to_vec::<i32>()
        .unwrap();
    assert_eq!(r, vec![0, 0, 0, 0]);
    // Bool arithmetic stays bool; negating a bool is an error; shifts go through uint8.
    let t = Array::from_slice(&[true, true, false, false], &[4]).unwrap();
    let u = Array::from_slice(&[false, true, false, true], &[4]).unwrap();
    assert_eq!(lazulite::add(&t, &u).unwrap().dtype(), DType::Bool);
    let s = lazulite::left_shift(&t, &u).unwrap();
    assert_eq!(
        (s.dtype(), s.to_vec::<u8>().unwrap()),
        (DType::UInt8, vec![1, 2, 0, 0])
    );
    let e = lazulite::negative(&t).expect_err("negative bool");
    assert_eq!(e.kind(), ErrorKind::Value);
    // sign(NaN) is 0 (MLX; NumPy gives NaN) and sign(-0.0) is +0.0 (both), in every
    // float dtype and on the vector and scalar paths alike.
    for dtype in [
        DType::Float32,
        DType::Float64,
        DType::Float16,
        DType::BFloat16,
    ] {
        let f = Array::from_slice(&[f32::NAN, -0.0, 0.0, -2.0], &[4]).unwrap();
        let f = lazulite::astype(&f, dtype).unwrap();
        let s = lazulite::astype(&lazulite::sign(&f).unwrap(), DType::Float32).unwrap();
        let s = s.to_vec::<f32>().unwrap();
        assert_eq!(s, vec![0.0, 0.0, 0.0, -1.0], "{dtype:?}");
        assert!(s[1].is_sign_positive(), "{dtype:?}");
    }
}

#[test]
fn operand_errors_leave_inputs_intact() {
    let u8s = Array::from_slice(&[1u8, 2], &[2]).unwrap();
    for v in [300i64, 256, -1] {
        let e = lazulite::add(&u8s, v).expect_err("overflow");
        assert_eq!(e.kind(), ErrorKind::Value);
        assert!(e.to_string().contains("would result in overflow"), "{e}");
    }
    let e = lazulite::equal(Array::from_slice(&[1i8], &[1]).unwrap(), 1000).expect_err("eq");
    assert!(e.to_string().contains("Converting 1000 to int8"), "{e}");
    let f = Array::from_slice(&[1.0f32], &[1]).unwrap();
    for (r, kind) in [
        (lazulite::bitwise_and(&f, 1), ErrorKind::Runtime),
        (lazulite::left_shift(&f, 1), ErrorKind::Runtime),
        (
            lazulite::add(
                Array::from_slice(&[1.0f32; 2], &[2]).unwrap(),
                Array::from_slice(&[1.0f32; 3], &[3]).unwrap(),
            ),
            ErrorKind::Value,
        ),
    ] {
        assert_eq!(r.expect_err("rejected").kind(), kind);
    }
    assert_eq!(u8s.to_vec::<u8>().unwrap(), vec![1, 2]);
    assert_eq!(f.to_vec::<f32>().unwrap(), vec![1.0]);
}
