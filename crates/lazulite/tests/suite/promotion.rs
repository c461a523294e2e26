//! Type promotion against MLX's measured tables: `promote_types` for every pair of dtypes
//! (`fixtures/promotion.json`) and weakly typed scalars next to arrays of every dtype
//! (`fixtures/weak_scalars.json`).

use crate::common;

use common::load_fixture;
use lazulite::{promote_types, Array, DType, ErrorKind, Operand, Scalar};

fn dtype(name: &str) -> DType {
    DType::from_name(name).unwrap_or_else(|| panic!("unknown dtype {name}"))
}

#[test]
fn promote_types_equals_mlx_table() {
    let table = load_fixture("promotion");
    let mut pairs = 0;
    for (a, row) in table.as_object().unwrap() {
        for (b, expected) in row.as_object().unwrap() {
            let got = promote_types(dtype(a), dtype(b));
            assert_eq!(
                got,
                dtype(expected.as_str().unwrap()),
                "promote_types({a}, {b})"
            );
            // A binary op on arrays of the two dtypes has the promoted dtype.
            let x = lazulite::zeros(&[2], dtype(a)).unwrap();
            let y = lazulite::zeros(&[2], dtype(b)).unwrap();
            assert_eq!(lazulite::add(&x, &y).unwrap().dtype(), got, "{a} + {b}");
            pairs += 1;
        }
    }
    assert_eq!(pairs, 14 * 14);
}

/// The result of one expression of the weak-scalar table, on an array of `a`'s dtype.
fn weak_expression(label: &str, a: &Array) -> lazulite::Result<Array> {
    let complex_i = Scalar::Complex(0.0, 1.0);
    match label {
        "a+True" => lazulite::add(a, true),
        "a+1" => lazulite::add(a, 1),
        "a+1.5" => lazulite::add(a, 1.5),
        "a+1j" => lazulite::add(a, complex_i),
        "1.5+a" => lazulite::add(1.5, a),
        "True+a" => lazulite::add(true, a),
        "1+a" => lazulite::add(1, a),
        "a*2.0" => lazulite::multiply(a, 2.0),
        "a/2" => lazulite::divide(a, 2),
        "a//2" => lazulite::floor_divide(a, 2),
        "a**2" => lazulite::power(a, 2),
        "a**0.5" => lazulite::power(a, 0.5),
        other => panic!("unknown expression {other}"),
    }
}

/// The scalar of an expression of the weak-scalar table.
fn weak_scalar(label: &str) -> Scalar {
    if label.contains("1j") {
        Scalar::Complex(0.0, 1.0)
    } else if label.contains("True") {
        Scalar::Bool(true)
    } else if label.contains('.') {
        Scalar::Float(1.5)
    } else {
        Scalar::Int(2)
    }
}

#[test]
fn weak_scalars_equal_mlx_table() {
    let table = load_fixture("weak_scalars");
    let mut checked = 0;
    for (name, row) in table["per_dtype"].as_object().unwrap() {
        let a = lazulite::ones(&[2], dtype(name)).unwrap();
        for (label, expected) in row.as_object().unwrap() {
            let expected = dtype(expected.as_str().unwrap());
            let got = weak_expression(label, &a).unwrap();
            assert_eq!(got.dtype(), expected, "{name}: {label}");
            got.eval().unwrap();
            // The scalar's own dtype next to the array promotes to the same result,
            // except for true division and float powers, which make integers inexact.
            let s = weak_scalar(label);
            let promoted = promote_types(a.dtype(), s.dtype_next_to(a.dtype()));
            if label != "a/2" {
                assert_eq!(promoted, expected, "{name}: {label} via dtype_next_to");
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 14 * 12);
}

/// The "extra" entries of the table that Rust can express: the MLX repr, or the error.
#[test]
fn weak_scalar_extras_equal_mlx() {
    let table = load_fixture("weak_scalars");
    let u8s = || Array::from_slice(&[1u8], &[1]).unwrap();
    let i8s = || Array::from_slice(&[1i8], &[1]).unwrap();
    let i32s = || Array::from_slice(&[1i32], &[1]).unwrap();
    let f16s = || lazulite::ones(&[1], DType::Float16).unwrap();
    let cases: Vec<(&str, lazulite::Result<Array>)> = vec![
        ("mx.array(True)+2", lazulite::add(Array::scalar(true), 2)),
        (
            "mx.array(True)+True",
            lazulite::add(Array::scalar(true), true),
        ),
        (
            "mx.array(True)+2.5",
            lazulite::add(Array::scalar(true), 2.5),
        ),
        ("mx.array([1],mx.uint8)+300", lazulite::add(u8s(), 300)),
        ("mx.array([1],mx.uint8)+255", lazulite::add(u8s(), 255)),
        ("mx.array([1],mx.uint8)+256", lazulite::add(u8s(), 256)),
        ("mx.array([1],mx.uint8)+(-1)", lazulite::add(u8s(), -1)),
        ("mx.array([1],mx.uint8)-2", lazulite::subtract(u8s(), 2)),
        ("mx.array([1],mx.int8)+200", lazulite::add(i8s(), 200)),
        ("mx.array([1],mx.int8)+(-200)", lazulite::add(i8s(), -200)),
        (
            "mx.array([1],mx.uint8)+2**40",
            lazulite::add(u8s(), 1i64 << 40),
        ),
        (
            "mx.array([1],mx.int32)+2**40",
            lazulite::add(i32s(), 1i64 << 40),
        ),
        (
            "mx.array([1],mx.int32)+2**31",
            lazulite::add(i32s(), 1i64 << 31),
        ),
        ("mx.array([1],mx.float16)+1e6", lazulite::add(f16s(), 1e6)),
        (
            "mx.array([1],mx.float32)+1e300",
            lazulite::add(Array::from_slice(&[1.0f32], &[1]).unwrap(), 1e300),
        ),
        ("mx.array([1],mx.int32)+1e300", lazulite::add(i32s(), 1e300)),
        ("mx.array([1],mx.uint8)+1.5", lazulite::add(u8s(), 1.5)),
        ("mx.array([1],mx.uint8)*-1", lazulite::multiply(u8s(), -1)),
        (
            "mx.add(mx.array([1],mx.uint8),300)",
            lazulite::add(u8s(), 300),
        ),
        (
            "mx.array([1],mx.uint8)+mx.array(300)",
            lazulite::add(u8s(), Array::scalar(300i32)),
        ),
        ("mx.array([1],mx.int8)==1000", lazulite::equal(i8s(), 1000)),
        (
            "mx.maximum(mx.array([1],mx.uint8),300)",
            lazulite::maximum(u8s(), 300),
        ),
        ("mx.add(1,2)", lazulite::add(1, 2)),
        ("mx.add(1,2.0)", lazulite::add(1, 2.0)),
        ("mx.add(True,True)", lazulite::add(true, true)),
        (
            "mx.add(1j,1)",
            lazulite::add(Operand::Scalar(Scalar::Complex(0.0, 1.0)), 1),
        ),
        (
            "mx.array([1],mx.float16)+mx.array(1.0)",
            lazulite::add(f16s(), Array::scalar(1.0f32)),
        ),
        (
            "mx.array([1],mx.int8)+mx.array(1)",
            lazulite::add(i8s(), Array::scalar(1i32)),
        ),
    ];
    let extra = &table["extra"];
    for (label, result) in cases {
        let expected = extra[label]
            .as_str()
            .unwrap_or_else(|| panic!("{label} not in table"));
        match expected.strip_prefix("ValueError: ") {
            Some(message) => {
                let e = result.expect_err(label);
                assert_eq!(e.kind(), ErrorKind::Value, "{label}");
                assert!(e.to_string().contains(message), "{label}: {e}");
            }
            None => assert_eq!(result.unwrap().to_string(), expected, "{label}"),
        }
    }
}

#[test]
fn scalar_default_and_adopted_dtypes() {
    use DType::*;
    assert_eq!(Scalar::Int(1 << 31).default_dtype(), Int64);
    assert_eq!(Scalar::Int(-(1 << 31)).default_dtype(), Int32);
    assert_eq!(Scalar::Int(1).dtype_next_to(Bool), Int32);
    assert_eq!(Scalar::Int(1 << 40).dtype_next_to(Bool), Int64);
    assert_eq!(Scalar::Bool(true).dtype_next_to(UInt16), UInt16);
    assert_eq!(Scalar::Float(0.5).dtype_next_to(Int64), Float32);
    assert_eq!(Scalar::Float(0.5).dtype_next_to(BFloat16), BFloat16);
    assert_eq!(Scalar::Float(0.5).dtype_next_to(Complex64), Complex64);
    assert_eq!(Scalar::Complex(0.0, 1.0).dtype_next_to(Float64), Complex64);
    // A scalar next to scalars only: each takes its default dtype, then they promote.
    assert_eq!(lazulite::add(1i64 << 40, 1.5).unwrap().dtype(), Float32);
    assert_eq!(lazulite::add(true, 1).unwrap().dtype(), Int32);
}

/// Scalars converted straight to a dtype (`Array::from_scalar(s)`, what `mx.array(v,
/// dtype)` builds) hold what casting an array of their own kind holds, for every dtype:
/// wrapped integers, rounded and saturated floats, NaN, infinities and complex parts.
#[test]
fn scalars_convert_as_the_cast_kernel_does() {
    let floats = [
        0.0,
        -0.0,
        0.5,
        2.5,
        -2.5,
        300.7,
        -300.7,
        65520.0,
        1e-40,
        1e10,
        -1e300,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ];
    let ints = [
        0i64,
        1,
        -1,
        300,
        -300,
        1 << 31,
        -(1 << 31) - 1,
        1 << 40,
        i64::MAX,
        i64::MIN,
    ];
    let complexes = [(1.0f64, 2.0f64), (-3.5, 0.0), (0.0, 0.1), (f64::NAN, 1.0)];
    for dtype in DType::ALL {
        let cases: [(Vec<Scalar>, Array); 4] = [
            (
                floats.iter().map(|&v| Scalar::Float(v)).collect(),
                Array::from_slice(&floats, &[floats.len()]).unwrap(),
            ),
            (
                ints.iter().map(|&v| Scalar::Int(v)).collect(),
                Array::from_slice(&ints, &[ints.len()]).unwrap(),
            ),
            (
                [true, false].map(Scalar::Bool).to_vec(),
                Array::from_slice(&[true, false], &[2]).unwrap(),
            ),
            (
                complexes
                    .iter()
                    .map(|&(re, im)| Scalar::Complex(re, im))
                    .collect(),
                Array::from_slice(
                    &complexes.map(|(re, im)| lazulite::Complex::new(re as f32, im as f32)),
                    &[complexes.len()],
                )
                .unwrap(),
            ),
        ];
        for (scalars, natural) in cases {
            let cast = natural.astype(dtype).unwrap();
            let direct = Array::from_scalars(&scalars, &[scalars.len()], dtype).unwrap();
            assert_eq!(direct.dtype(), dtype);
            let bytes = |a: &Array| lazulite::view(a, DType::UInt8).unwrap().to_vec::<u8>();
            assert_eq!(
                bytes(&direct).unwrap(),
                bytes(&cast).unwrap(),
                "{scalars:?} as {dtype}"
            );
            let one = Array::from_scalar(scalars[0], dtype).reshape(&[1]).unwrap();
            let first = lazulite::slice(&cast, &[0], &[1], &[1]).unwrap();
            let first_bytes = bytes(&first).unwrap();
            assert_eq!(
                bytes(&one).unwrap(),
                first_bytes,
                "{:?} as {dtype}",
                scalars[0]
            );
        }
    }
}
