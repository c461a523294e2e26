//! `lazulite::linalg` against NumPy (fixtures from tools/fixtures/linalg_factor.py):
//! inverses, solves, determinants, QR, singular values, eigenvalues, pseudo-inverses,
//! norms and cross products; reconstructions (`q r`, `u diag(s) vt`, `v diag(w) vᵀ`,
//! `l[p] u`), strided inputs and argument errors. The derivative and batching rules are
//! checked in the rule table (`rules.rs`).

use crate::common;

use common::{array, array_from_json, assert_matches, load_fixture, uniform};
use lazulite::linalg::{self, NormOrd};
use lazulite::{matmul, swapaxes, transpose, Array, DType, ErrorKind};
use serde_json::Value;

fn tolerance(dtype: DType) -> f64 {
    if dtype == DType::Float32 {
        2e-4
    } else {
        1e-10
    }
}

fn ord_of(v: &Value) -> Option<NormOrd> {
    match v {
        Value::Null => None,
        Value::String(s) if s == "inf" => Some(f64::INFINITY.into()),
        Value::String(s) if s == "-inf" => Some(f64::NEG_INFINITY.into()),
        Value::String(s) => Some(NormOrd::Name(s.clone())),
        other => Some(other.as_f64().unwrap().into()),
    }
}

fn run_case(op: &str, inputs: &[Array], params: &Value) -> Vec<Array> {
    let flag = |k: &str| params[k].as_bool().unwrap_or(false);
    match op {
        "inv" => vec![linalg::inv(&inputs[0]).unwrap()],
        "solve" => vec![linalg::solve(&inputs[0], &inputs[1]).unwrap()],
        "solve_triangular" => {
            vec![linalg::solve_triangular(&inputs[0], &inputs[1], flag("upper")).unwrap()]
        }
        "tri_inv" => vec![linalg::tri_inv(&inputs[0], flag("upper")).unwrap()],
        "det" => vec![linalg::det(&inputs[0]).unwrap()],
        "slogdet" => {
            let (s, l) = linalg::slogdet(&inputs[0]).unwrap();
            vec![s, l]
        }
        "eigvalsh" => vec![linalg::eigvalsh(&inputs[0], "L").unwrap()],
        "qr" => {
            let (q, r) = linalg::qr(&inputs[0]).unwrap();
            vec![q, r]
        }
        "svdvals" => linalg::svd(&inputs[0], false).unwrap(),
        "pinv" => vec![linalg::pinv(&inputs[0]).unwrap()],
        "norm" => {
            let axes: Option<Vec<i32>> = params["axis"]
                .as_array()
                .map(|v| v.iter().map(|x| x.as_i64().unwrap() as i32).collect());
            vec![linalg::norm(
                &inputs[0],
                ord_of(&params["ord"]),
                axes.as_deref(),
                flag("keepdims"),
            )
            .unwrap()]
        }
        "cross" => vec![linalg::cross(
            &inputs[0],
            &inputs[1],
            params["axis"].as_i64().unwrap() as i32,
        )
        .unwrap()],
        other => panic!("unknown op {other}"),
    }
}

#[test]
fn results_equal_numpy() {
    let fixture = load_fixture("linalg_factor");
    let cases = fixture["cases"].as_array().unwrap();
    assert!(cases.len() > 100);
    for (i, case) in cases.iter().enumerate() {
        let op = case["op"].as_str().unwrap();
        let inputs: Vec<Array> = case["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(array_from_json)
            .collect();
        let got = run_case(op, &inputs, &case["params"]);
        let expected = case["expected"].as_array().unwrap();
        assert_eq!(got.len(), expected.len(), "case {i} {op}");
        let tol = tolerance(inputs[0].dtype());
        for (g, e) in got.iter().zip(expected) {
            let context = format!("case {i} {op} {}", case["params"]);
            assert_eq!(g.dtype(), array_from_json(e).dtype(), "{context}: dtype");
            assert_matches(g, e, tol, tol, &context);
        }
    }
}

fn values(a: &Array) -> Vec<f64> {
    a.to_vec::<f64>().unwrap()
}

fn assert_close(a: &Array, b: &Array, tol: f64, what: &str) {
    assert_eq!(a.shape(), b.shape(), "{what}: shape");
    for (x, y) in values(a).iter().zip(values(b)) {
        assert!((x - y).abs() <= tol * (1.0 + y.abs()), "{what}: {x} vs {y}");
    }
}

fn random(seed: u64, shape: &[usize]) -> Array {
    let n = shape.iter().product();
    array(&uniform(seed, n, -1.0, 1.0), shape)
}

fn symmetric(seed: u64, shape: &[usize]) -> Array {
    let a = random(seed, shape);
    lazulite::add(&a, swapaxes(&a, -1, -2).unwrap()).unwrap()
}

#[test]
fn factorisations_reconstruct_their_input() {
    for (m, n) in [(4, 4), (5, 3), (3, 5), (1, 1), (6, 1)] {
        let a = random(m as u64 * 10 + n as u64, &[2, m, n]);
        let (q, r) = linalg::qr(&a).unwrap();
        assert_close(&matmul(&q, &r).unwrap(), &a, 1e-12, "q r");
        let parts = linalg::svd(&a, true).unwrap();
        let (u, s, vt) = (&parts[0], &parts[1], &parts[2]);
        let k = m.min(n);
        let mut sigma = vec![0.0; 2 * m * n];
        let sv = values(s);
        for b in 0..2 {
            for i in 0..k {
                sigma[b * m * n + i * n + i] = sv[b * k + i];
            }
        }
        let back = matmul(&matmul(u, &array(&sigma, &[2, m, n])).unwrap(), vt).unwrap();
        assert_close(&back, &a, 1e-12, "u s vt");
        let eye_m = lazulite::eye(m, None, 0, DType::Float64).unwrap();
        assert_close(
            &matmul(&swapaxes(u, -1, -2).unwrap(), u).unwrap(),
            &lazulite::broadcast_to(&eye_m, &[2, m, m]).unwrap(),
            1e-12,
            "uᵀu",
        );
        let (p, l, uu) = linalg::lu(&a).unwrap();
        assert_eq!(p.dtype(), DType::UInt32);
        let lu = matmul(&l, &uu).unwrap();
        let perm: Vec<u32> = p.to_vec().unwrap();
        let lu_v = values(&lu);
        let a_v = values(&a);
        for b in 0..2 {
            for i in 0..m {
                let src = perm[b * m + i] as usize;
                for j in 0..n {
                    let x = lu_v[b * m * n + src * n + j];
                    assert!((x - a_v[b * m * n + i * n + j]).abs() < 1e-12, "l[p] u");
                }
            }
        }
    }
    let s = symmetric(3, &[3, 5, 5]);
    for uplo in ["L", "U"] {
        let (w, v) = linalg::eigh(&s, uplo).unwrap();
        let wv = lazulite::multiply(&v, lazulite::expand_dims(&w, -2).unwrap()).unwrap();
        let back = matmul(&wv, &swapaxes(&v, -1, -2).unwrap()).unwrap();
        assert_close(&back, &s, 1e-12, "v diag(w) vᵀ");
    }
}

#[test]
fn strided_and_rank_deficient_inputs() {
    let a = random(5, &[4, 4]);
    let t = transpose(&a, &[1, 0]).unwrap();
    let expected = swapaxes(&linalg::inv(&a).unwrap(), -1, -2).unwrap();
    assert_close(
        &linalg::inv(&t).unwrap(),
        &expected,
        1e-10,
        "inv of a transposed view",
    );
    let reversed = lazulite::slice(&a, &[3, 0], &[-5, 4], &[-1, 1]).unwrap();
    let x = linalg::solve(&reversed, &lazulite::ones(&[4], DType::Float64).unwrap()).unwrap();
    assert_close(
        &matmul(&reversed, &x).unwrap(),
        &lazulite::ones(&[4], DType::Float64).unwrap(),
        1e-10,
        "solve reversed rows",
    );
    let rank_one = array(&[1.0, 2.0, 2.0, 4.0, 3.0, 6.0], &[3, 2]);
    let s = values(&linalg::svd(&rank_one, false).unwrap()[0]);
    assert!((s[0] - 70f64.sqrt()).abs() < 1e-12 && s[1].abs() < 1e-12);
    let p = linalg::pinv(&rank_one).unwrap();
    let back = matmul(&matmul(&rank_one, &p).unwrap(), &rank_one).unwrap();
    assert_close(&back, &rank_one, 1e-12, "a pinv(a) a");
    let zero = lazulite::zeros(&[2, 3], DType::Float32).unwrap();
    assert_eq!(
        linalg::pinv(&zero).unwrap().to_vec::<f32>().unwrap(),
        vec![0.0; 6]
    );
}

#[test]
fn singular_matrices_fail_when_evaluated() {
    let singular = array(&[1.0, 2.0, 2.0, 4.0], &[2, 2]);
    let y = linalg::inv(&singular).unwrap();
    assert_eq!(y.eval().unwrap_err().kind(), ErrorKind::Runtime);
    let x = linalg::solve(&singular, &array(&[1.0, 1.0], &[2])).unwrap();
    assert_eq!(x.eval().unwrap_err().kind(), ErrorKind::Runtime);
    assert_eq!(linalg::det(&singular).unwrap().item::<f64>().unwrap(), 0.0);
    let (sign, logabs) = linalg::slogdet(&singular).unwrap();
    assert_eq!(
        (sign.item::<f64>().unwrap(), logabs.item::<f64>().unwrap()),
        (0.0, f64::NEG_INFINITY)
    );
    assert_eq!(singular.to_vec::<f64>().unwrap(), vec![1.0, 2.0, 2.0, 4.0]);
}

#[test]
fn argument_errors_are_typed() {
    let ints = Array::from_slice(&[1i32, 0, 0, 1], &[2, 2]).unwrap();
    let wide = lazulite::ones(&[2, 3], DType::Float32).unwrap();
    let vector = lazulite::ones(&[3], DType::Float32).unwrap();
    let half = lazulite::ones(&[2, 2], DType::Float16).unwrap();
    let value_errors = [
        linalg::inv(&ints).unwrap_err(),
        linalg::inv(&wide).unwrap_err(),
        linalg::inv(&vector).unwrap_err(),
        linalg::inv(&half).unwrap_err(),
        linalg::qr(&ints).unwrap_err(),
        linalg::svd(&vector, true).unwrap_err(),
        linalg::eigh(&wide, "L").unwrap_err(),
        linalg::eigh(&lazulite::eye(2, None, 0, DType::Float32).unwrap(), "X").unwrap_err(),
        linalg::solve(&wide, &vector).unwrap_err(),
        linalg::solve(&half, &half).unwrap_err(),
        linalg::solve(&lazulite::eye(2, None, 0, DType::Float32).unwrap(), &vector).unwrap_err(),
        linalg::tri_inv(&wide, false).unwrap_err(),
        linalg::cross(&vector, &lazulite::ones(&[4], DType::Float32).unwrap(), -1).unwrap_err(),
        linalg::norm(&vector, Some("fro".into()), None, false).unwrap_err(),
        linalg::norm(&wide, Some("foo".into()), None, false).unwrap_err(),
        linalg::norm(&wide, Some(3.into()), None, false).unwrap_err(),
        linalg::norm(
            &lazulite::ones(&[2, 2, 2], DType::Float32).unwrap(),
            Some(2.into()),
            None,
            false,
        )
        .unwrap_err(),
        linalg::norm(&wide, None, Some(&[0, 0]), false).unwrap_err(),
    ];
    for e in value_errors {
        assert_eq!(e.kind(), ErrorKind::Value, "{e}");
    }
    assert!(linalg::inv(&ints)
        .unwrap_err()
        .to_string()
        .contains("[linalg::inv] Arrays must have type float32 or float64"));
    assert_eq!(
        linalg::norm(&wide, None, Some(&[5]), false)
            .unwrap_err()
            .kind(),
        ErrorKind::Axis
    );
    assert_eq!(
        linalg::norm(&ints, None, None, false).unwrap().dtype(),
        DType::Float32
    );
    assert_eq!(linalg::det(&ints).unwrap().item::<f32>().unwrap(), 1.0);
    assert_eq!(linalg::cross(&ints, &ints, 0).unwrap().shape(), &[3, 2]);
}
