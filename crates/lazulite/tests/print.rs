//! Printing against the strings real MLX prints (docs/mlx-reference.md, section c).

use lazulite::{astype, set_printoptions, Array, Complex, DType};
use std::sync::{Mutex, MutexGuard};

/// The print precision is process-wide: every test here holds this lock.
fn lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    set_printoptions(-1);
    guard
}

fn f32s(v: &[f32], shape: &[usize]) -> Array {
    Array::from_slice(v, shape).unwrap()
}

fn i32s(v: &[i32], shape: &[usize]) -> Array {
    Array::from_slice(v, shape).unwrap()
}

fn range(n: i32, shape: &[usize]) -> Array {
    i32s(&(0..n).collect::<Vec<_>>(), shape)
}

fn check(a: &Array, expected: &str) {
    assert_eq!(a.to_string(), expected);
    assert_eq!(format!("{a:?}"), expected, "Debug prints the same");
}

#[test]
fn scalars_of_every_dtype() {
    let _g = lock();
    check(&Array::scalar(1f32), "array(1, dtype=float32)");
    check(&Array::scalar(1.5f32), "array(1.5, dtype=float32)");
    check(&Array::scalar(true), "array(True, dtype=bool)");
    check(&Array::scalar(false), "array(False, dtype=bool)");
    check(
        &Array::scalar(Complex::new(1.0, 2.0)),
        "array(1+2j, dtype=complex64)",
    );
    check(&Array::scalar(-0.0f32), "array(-0, dtype=float32)");
    for dtype in DType::ALL.into_iter().filter(|d| !d.is_bool()) {
        let one = astype(&Array::scalar(1i32), dtype).unwrap();
        let body = if dtype.is_complex() { "1+0j" } else { "1" };
        check(&one, &format!("array({body}, dtype={dtype})"));
    }
    let f = |v: f64, d| astype(&Array::scalar(v), d).unwrap();
    check(&f(1.5, DType::Float16), "array(1.5, dtype=float16)");
    check(&f(1.5, DType::BFloat16), "array(1.5, dtype=bfloat16)");
    check(&f(0.1, DType::Float64), "array(0.1, dtype=float64)");
    check(&f(0.1, DType::Float32), "array(0.1, dtype=float32)");
    check(
        &Array::scalar(1.0f32 / 3.0),
        "array(0.333333, dtype=float32)",
    );
    check(&Array::scalar(1e-5f32), "array(1e-05, dtype=float32)");
    check(&Array::scalar(1e20f32), "array(1e+20, dtype=float32)");
}

#[test]
fn vectors_and_number_formats() {
    let _g = lock();
    check(&i32s(&[1, 2, 3], &[3]), "array([1, 2, 3], dtype=int32)");
    check(
        &f32s(&[1.0, 2.0, 3.0], &[3]),
        "array([1, 2, 3], dtype=float32)",
    );
    check(
        &f32s(&[1.0, 1.5, 2.0], &[3]),
        "array([1, 1.5, 2], dtype=float32)",
    );
    let special = [
        0.1,
        1e-8,
        1e10,
        1.0,
        2.0,
        f32::NAN,
        f32::INFINITY,
        -f32::INFINITY,
    ];
    check(
        &f32s(&special, &[8]),
        "array([0.1, 1e-08, 1e+10, ..., nan, inf, -inf], dtype=float32)",
    );
    check(
        &f32s(&[0.1, 1e-8], &[2]),
        "array([0.1, 1e-08], dtype=float32)",
    );
    check(
        &f32s(&[1e10, 1.0], &[2]),
        "array([1e+10, 1], dtype=float32)",
    );
    check(
        &f32s(&[123_456.79, 1.0], &[2]),
        "array([123457, 1], dtype=float32)",
    );
    let nan_inf = [f32::NAN, f32::INFINITY, -f32::INFINITY];
    check(
        &f32s(&nan_inf, &[3]),
        "array([nan, inf, -inf], dtype=float32)",
    );
    check(
        &i32s(&[-1, 10, -100, 5], &[4]),
        "array([-1, 10, -100, 5], dtype=int32)",
    );
    let half = |d| astype(&f32s(&[0.1, 1.5, -2.0, 65504.0], &[4]), d).unwrap();
    check(
        &half(DType::Float16),
        "array([0.0999756, 1.5, -2, 65504], dtype=float16)",
    );
    let b = astype(&f32s(&[0.1, 1.5, -2.0, 3e38], &[4]), DType::BFloat16).unwrap();
    check(
        &b,
        "array([0.100098, 1.5, -2, 3.00406e+38], dtype=bfloat16)",
    );
    let third = Array::from_slice(&[0.1f64, 1.0 / 3.0, 2.0], &[3]).unwrap();
    check(&third, "array([0.1, 0.333333, 2], dtype=float64)");
    check(
        &f32s(&[1.0 / 3.0, 2.0 / 3.0], &[2]),
        "array([0.333333, 0.666667], dtype=float32)",
    );
    let u8s = Array::from_slice(&[0u8, 128, 255], &[3]).unwrap();
    check(&u8s, "array([0, 128, 255], dtype=uint8)");
    let bools = Array::from_slice(&[true, false, true], &[3]).unwrap();
    check(&bools, "array([True, False, True], dtype=bool)");
    let c = [
        Complex::new(1.0, 2.0),
        Complex::new(-3.5, -1.0),
        Complex::default(),
    ];
    check(
        &Array::from_slice(&c, &[3]).unwrap(),
        "array([1+2j, -3.5-1j, 0+0j], dtype=complex64)",
    );
    let big = Array::from_slice(&[1i64 << 40, -1], &[2]).unwrap();
    check(&big, "array([1099511627776, -1], dtype=int64)");
    let huge = Array::from_slice(&[1u64 << 63], &[1]).unwrap();
    check(&huge, "array([9223372036854775808], dtype=uint64)");
    let linspace = f32s(&[0.0, 0.25, 0.5, 0.75, 1.0], &[5]);
    check(&linspace, "array([0, 0.25, 0.5, 0.75, 1], dtype=float32)");
    check(
        &f32s(&[1e-5, 1e-4, 1.0], &[3]),
        "array([1e-05, 0.0001, 1], dtype=float32)",
    );
    check(
        &f32s(&[1e16, 1.0], &[2]),
        "array([1e+16, 1], dtype=float32)",
    );
    check(
        &f32s(&[1e7, 1.5], &[2]),
        "array([1e+07, 1.5], dtype=float32)",
    );
    check(
        &f32s(&[1e-4, 2e-4], &[2]),
        "array([0.0001, 0.0002], dtype=float32)",
    );
    check(
        &f32s(&[0.0001234], &[1]),
        "array([0.0001234], dtype=float32)",
    );
    check(
        &f32s(&[1.123_456_8, 2.0], &[2]),
        "array([1.12346, 2], dtype=float32)",
    );
    let mut row = vec![0.5f32; 30];
    row[..3].copy_from_slice(&[0.388316, 0.825573, 0.157447]);
    row[27..].copy_from_slice(&[0.438109, 0.35078, 0.132543]);
    check(
        &f32s(&row, &[30]),
        "array([0.388316, 0.825573, 0.157447, ..., 0.438109, 0.35078, 0.132543], dtype=float32)",
    );
    let more = Array::from_slice(&[1e6f32, 999999.0, 1234567.0, 100000.0], &[4]).unwrap();
    check(
        &more,
        "array([1e+06, 999999, 1.23457e+06, 100000], dtype=float32)",
    );
    let f64s = Array::from_slice(&[1.0f64 / 3.0, 2f64.powi(53)], &[2]).unwrap();
    check(&f64s, "array([0.333333, 9.0072e+15], dtype=float64)");
    // A complex with a negative-zero real part and a NaN/inf pair (MLX: `-0-1j`, `nan+infj`).
    let c = [
        Complex::new(-0.0, -1.0),
        Complex::new(f32::NAN, f32::INFINITY),
    ];
    check(
        &Array::from_slice(&c, &[2]).unwrap(),
        "array([-0-1j, nan+infj], dtype=complex64)",
    );
}

#[test]
fn nested_layout() {
    let _g = lock();
    check(
        &range(6, &[2, 3]),
        "array([[0, 1, 2],\n       [3, 4, 5]], dtype=int32)",
    );
    check(
        &range(24, &[2, 3, 4]),
        "array([[[0, 1, 2, 3],\n        [4, 5, 6, 7],\n        [8, 9, 10, 11]],\n       \
         [[12, 13, 14, 15],\n        [16, 17, 18, 19],\n        [20, 21, 22, 23]]], dtype=int32)",
    );
    check(
        &range(16, &[2, 2, 2, 2]),
        "array([[[[0, 1],\n         [2, 3]],\n        [[4, 5],\n         [6, 7]]],\n       \
         [[[8, 9],\n         [10, 11]],\n        [[12, 13],\n         [14, 15]]]], dtype=int32)",
    );
    check(
        &f32s(&[-1.5, 2.25, 100.0, -0.001], &[2, 2]),
        "array([[-1.5, 2.25],\n       [100, -0.001]], dtype=float32)",
    );
    check(
        &i32s(&[1, -200, 33333, 4], &[2, 2]),
        "array([[1, -200],\n       [33333, 4]], dtype=int32)",
    );
    let bools = Array::from_slice(&[true, false, false, true], &[2, 2]).unwrap();
    check(
        &bools,
        "array([[True, False],\n       [False, True]], dtype=bool)",
    );
    let c = [
        Complex::new(1.0, 2.0),
        Complex::new(3.0, 0.0),
        Complex::new(0.0, 0.5),
        Complex::new(-1.0, 0.0),
    ];
    check(
        &Array::from_slice(&c, &[2, 2]).unwrap(),
        "array([[1+2j, 3+0j],\n       [0+0.5j, -1+0j]], dtype=complex64)",
    );
    check(
        &range(6, &[2, 3]).t().unwrap(),
        "array([[0, 3],\n       [1, 4],\n       [2, 5]], dtype=int32)",
    );
    check(&i32s(&[5], &[1, 1]), "array([[5]], dtype=int32)");
    check(
        &i32s(&[1, 2, 3], &[3, 1]),
        "array([[1],\n       [2],\n       [3]], dtype=int32)",
    );
    // Views print through their strides: reversed, broadcast.
    let rev = lazulite::slice(&range(5, &[5]), &[-1], &[i64::MIN], &[-1]).unwrap();
    check(&rev, "array([4, 3, 2, 1, 0], dtype=int32)");
    let b = lazulite::broadcast_to(&range(2, &[2]), &[2, 2]).unwrap();
    check(&b, "array([[0, 1],\n       [0, 1]], dtype=int32)");
}

#[test]
fn empty_arrays() {
    let _g = lock();
    let empty = |shape: &[usize], d| lazulite::zeros(shape, d).unwrap();
    check(&empty(&[0], DType::Float32), "array([], dtype=float32)");
    check(&empty(&[0, 3], DType::Int32), "array([], dtype=int32)");
    check(&empty(&[0, 0], DType::Float32), "array([], dtype=float32)");
    check(
        &empty(&[2, 0], DType::Float32),
        "array([[],\n       []], dtype=float32)",
    );
    check(
        &empty(&[2, 1, 0], DType::Float32),
        "array([[[]],\n       [[]]], dtype=float32)",
    );
    check(
        &empty(&[7, 0], DType::Float32),
        "array([[],\n       [],\n       [],\n       ...,\n       [],\n       [],\n       []], dtype=float32)",
    );
}

#[test]
fn summarisation() {
    let _g = lock();
    check(&range(6, &[6]), "array([0, 1, 2, 3, 4, 5], dtype=int32)");
    check(
        &range(7, &[7]),
        "array([0, 1, 2, ..., 4, 5, 6], dtype=int32)",
    );
    check(
        &range(14, &[2, 7]),
        "array([[0, 1, 2, ..., 4, 5, 6],\n       [7, 8, 9, ..., 11, 12, 13]], dtype=int32)",
    );
    check(
        &range(14, &[7, 2]),
        "array([[0, 1],\n       [2, 3],\n       [4, 5],\n       ...,\n       [8, 9],\n       \
         [10, 11],\n       [12, 13]], dtype=int32)",
    );
    for (n, tail) in [
        (10000, "9997, 9998, 9999"),
        (1001, "998, 999, 1000"),
        (1000, "997, 998, 999"),
    ] {
        check(
            &lazulite::arange(0.0, n as f64, 1.0, DType::Int32).unwrap(),
            &format!("array([0, 1, 2, ..., {tail}], dtype=int32)"),
        );
    }
    check(
        &lazulite::arange(0.0, 20.0, 1.0, DType::Float32).unwrap(),
        "array([0, 1, 2, ..., 17, 18, 19], dtype=float32)",
    );
    let sevenths = lazulite::divide(
        lazulite::arange(0.0, 10000.0, 1.0, DType::Float32).unwrap(),
        7.0,
    )
    .unwrap();
    check(
        &lazulite::reshape(&sevenths, &[100, 100]).unwrap(),
        "array([[0, 0.142857, 0.285714, ..., 13.8571, 14, 14.1429],\n       \
         [14.2857, 14.4286, 14.5714, ..., 28.1429, 28.2857, 28.4286],\n       \
         [28.5714, 28.7143, 28.8571, ..., 42.4286, 42.5714, 42.7143],\n       \
         ...,\n       \
         [1385.71, 1385.86, 1386, ..., 1399.57, 1399.71, 1399.86],\n       \
         [1400, 1400.14, 1400.29, ..., 1413.86, 1414, 1414.14],\n       \
         [1414.29, 1414.43, 1414.57, ..., 1428.14, 1428.29, 1428.43]], dtype=float32)",
    );
    let cube = range(1000, &[10, 10, 10]).to_string();
    let block = |b: i32| {
        let row = |r: i32| {
            let s = b * 100 + r * 10;
            format!(
                "[{}, {}, {}, ..., {}, {}, {}]",
                s,
                s + 1,
                s + 2,
                s + 7,
                s + 8,
                s + 9
            )
        };
        let rows: Vec<String> = [0, 1, 2]
            .iter()
            .map(|&r| row(r))
            .chain(std::iter::once("...".to_string()))
            .chain([7, 8, 9].iter().map(|&r| row(r)))
            .collect();
        format!("[{}]", rows.join(",\n        "))
    };
    let blocks: Vec<String> = [0, 1, 2]
        .iter()
        .map(|&b| block(b))
        .chain(std::iter::once("...".to_string()))
        .chain([7, 8, 9].iter().map(|&b| block(b)))
        .collect();
    let expected = format!("array([{}], dtype=int32)", blocks.join(",\n       "));
    assert_eq!(cube, expected);
    assert!(cube.starts_with("array([[[0, 1, 2, ..., 7, 8, 9],\n        [10, 11, 12"));
}

/// Summarising a large array formats only the elements it shows.
#[test]
fn summarising_a_large_array_is_fast() {
    let _g = lock();
    let big = lazulite::zeros(&[4000, 4000], DType::Float64).unwrap();
    big.eval().unwrap();
    let start = std::time::Instant::now();
    let text = big.to_string();
    assert!(text.starts_with("array([[0, 0, 0, ..., 0, 0, 0],"));
    assert!(start.elapsed().as_secs_f64() < 0.5, "{:?}", start.elapsed());
}

#[test]
fn precision_option() {
    let _g = lock();
    let v = f32s(&[1.0 / 3.0, 2.0, 123_456.79, 1e-8], &[4]);
    let third = Array::scalar(1.0f64 / 3.0);
    let z = Array::from_slice(&[Complex::new(1.5, -1.0 / 3.0)], &[1]).unwrap();
    let rows = [
        (0, "[0, 2, 123457, 0]", "0", "2-0j"),
        (1, "[0.3, 2.0, 123456.8, 0.0]", "0.3", "1.5-0.3j"),
        (2, "[0.33, 2.00, 123456.79, 0.00]", "0.33", "1.50-0.33j"),
        (
            3,
            "[0.333, 2.000, 123456.789, 0.000]",
            "0.333",
            "1.500-0.333j",
        ),
        (
            4,
            "[0.3333, 2.0000, 123456.7891, 0.0000]",
            "0.3333",
            "1.5000-0.3333j",
        ),
        (
            8,
            "[0.33333334, 2.00000000, 123456.78906250, 0.00000001]",
            "0.33333333",
            "1.50000000-0.33333334j",
        ),
        (
            10,
            "[0.3333333433, 2.0000000000, 123456.7890625000, 0.0000000100]",
            "0.3333333333",
            "1.5000000000-0.3333333433j",
        ),
        (
            12,
            "[0.333333343267, 2.000000000000, 123456.789062500000, 0.000000010000]",
            "0.333333333333",
            "1.500000000000-0.333333343267j",
        ),
        (
            -1,
            "[0.333333, 2, 123457, 1e-08]",
            "0.333333",
            "1.5-0.333333j",
        ),
    ];
    for (p, vector, scalar, complex) in rows {
        set_printoptions(p);
        assert_eq!(lazulite::get_printoptions(), p);
        check(&v, &format!("array({vector}, dtype=float32)"));
        check(&third, &format!("array({scalar}, dtype=float64)"));
        check(&z, &format!("array([{complex}], dtype=complex64)"));
    }
    set_printoptions(3);
    check(&i32s(&[1, 2], &[2]), "array([1, 2], dtype=int32)");
    check(
        &Array::from_slice(&[true], &[1]).unwrap(),
        "array([True], dtype=bool)",
    );
    let h = astype(&f32s(&[1.5], &[1]), DType::Float16).unwrap();
    check(&h, "array([1.500], dtype=float16)");
    check(&Array::scalar(1.0f32), "array(1.000, dtype=float32)");
    check(
        &f32s(&[0.0, 1e10], &[2]),
        "array([0.000, 10000000000.000], dtype=float32)",
    );
    check(
        &f32s(&[f32::NAN, -f32::INFINITY], &[2]),
        "array([nan, -inf], dtype=float32)",
    );
    set_printoptions(-7);
    assert_eq!(
        lazulite::get_printoptions(),
        -1,
        "negative means the default"
    );
    set_printoptions(-1);
}
