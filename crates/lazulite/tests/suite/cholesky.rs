//! `cholesky` against NumPy's factors (fixtures from tools/fixtures/cholesky.py), the upper
//! form, strided inputs, matrices that are not positive definite, and argument errors.

use crate::common;

use common::{array_from_json, assert_matches, load_fixture};
use lazulite::{cholesky, matmul, swapaxes, transpose, Array, DType, ErrorKind};

#[test]
fn factors_equal_numpy() {
    let fixture = load_fixture("cholesky");
    let cases = fixture["cases"].as_object().unwrap();
    assert_eq!(cases.len(), 10);
    for (name, case) in cases {
        let a = array_from_json(&case["input"]);
        let tol = if a.dtype() == DType::Float32 {
            1e-5
        } else {
            1e-12
        };
        let lower = cholesky(&a, false).unwrap();
        assert_matches(&lower, &case["lower"], tol, tol, name);
        let upper = cholesky(&a, true).unwrap();
        let expected_upper = swapaxes(&array_from_json(&case["lower"]), -1, -2).unwrap();
        let got = upper.to_vec::<f64>().unwrap();
        let want = expected_upper.to_vec::<f64>().unwrap();
        for (g, w) in got.iter().zip(&want) {
            assert!(
                (g - w).abs() <= tol * (1.0 + w.abs()),
                "{name} upper: {g} vs {w}"
            );
        }
        // A transposed view of a symmetric matrix is the same matrix.
        if a.ndim() == 2 && a.size() > 0 {
            let t = transpose(&a, &[1, 0]).unwrap();
            assert_matches(
                &cholesky(&t, false).unwrap(),
                &case["lower"],
                tol,
                tol,
                name,
            );
        }
    }
}

#[test]
fn reads_the_lower_triangle_and_marks_indefinite_matrices() {
    let a = Array::from_slice(&[1.0f32, 5.0, 0.0, 4.0], &[2, 2]).unwrap();
    assert_eq!(
        cholesky(&a, false).unwrap().to_vec::<f32>().unwrap(),
        [1.0, 0.0, 0.0, 2.0]
    );
    let indefinite = Array::from_slice(&[1.0f64, 2.0, 2.0, 1.0], &[2, 2]).unwrap();
    let l = cholesky(&indefinite, false)
        .unwrap()
        .to_vec::<f64>()
        .unwrap();
    assert!(l.iter().all(|v| v.is_nan()));
    // A singular semi-definite matrix still factors: L Lᵀ gives it back.
    let singular = Array::from_slice(&[4.0f64, 2.0, 2.0, 1.0], &[2, 2]).unwrap();
    let l = cholesky(&singular, false).unwrap();
    let back = matmul(&l, &swapaxes(&l, -1, -2).unwrap()).unwrap();
    assert_eq!(back.to_vec::<f64>().unwrap(), [4.0, 2.0, 2.0, 1.0]);
    let zeros = Array::from_slice(&[0.0f32; 4], &[2, 2]).unwrap();
    assert_eq!(
        cholesky(&zeros, false).unwrap().to_vec::<f32>().unwrap(),
        [0.0; 4]
    );
}

#[test]
fn argument_errors() {
    let cases = [
        (Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap(), "[linalg::cholesky] Arrays must have >= 2 dimensions. Received array with 1 dimensions."),
        (Array::from_slice(&[1.0f32; 6], &[2, 3]).unwrap(), "[linalg::cholesky] Cholesky decomposition is only defined for square matrices."),
        (Array::from_slice(&[1i32; 4], &[2, 2]).unwrap(), "[linalg::cholesky] Arrays must have type float32 or float64. Received array with type int32."),
    ];
    for (a, message) in cases {
        let e = cholesky(&a, false).unwrap_err();
        assert_eq!((e.kind(), e.message()), (ErrorKind::Value, message));
    }
}
