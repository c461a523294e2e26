//! `lazulite::linalg` against NumPy (fixtures from tools/fixtures/linalg_factor.py):
//! inverses, solves, determinants, QR, singular values, eigenvalues, pseudo-inverses,
//! norms and cross products; reconstructions (`q r`, `u diag(s) vt`, `v diag(w) vᵀ`,
//! `l[p] u`), strided inputs, derivatives against float64 finite differences, vmap
//! against a loop, and argument errors.

use crate::common;

use common::{
    array, array_from_json, assert_matches, check_derivatives, check_vmap, load_fixture, uniform,
};
use lazulite::linalg::{self, NormOrd};
use lazulite::{cholesky, matmul, swapaxes, transpose, vjp, Array, DType, ErrorKind};
use serde_json::Value;

/// A function of arrays to one array, as the vmap checks take it.
type ArrayFn = dyn Fn(&[Array]) -> lazulite::Result<Array>;

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

type Unary = fn(&Array) -> lazulite::Result<Array>;

fn sum_weighted(outputs: &[Array]) -> lazulite::Result<Array> {
    // A fixed linear functional of every output, so each output's cotangent is used.
    let mut total: Option<Array> = None;
    for (i, o) in outputs.iter().enumerate() {
        let w = array(&uniform(40 + i as u64, o.size(), -1.0, 1.0), o.shape()).astype(o.dtype())?;
        let term = lazulite::sum(&lazulite::multiply(o, &w)?, lazulite::Axes::All, false)?;
        total = Some(match total {
            Some(t) => lazulite::add(&t, &term)?,
            None => term,
        });
    }
    Ok(total.expect("an output"))
}

/// The gradient of the scalar `f` at `x` against float64 central differences along a
/// random direction (for rules that have a vjp but no jvp).
fn check_vjp(name: &str, f: &dyn Fn(&[Array]) -> lazulite::Result<Array>, x: &Array) {
    let eps = 1e-6;
    let d = uniform(77, x.size(), -1.0, 1.0);
    let moved = |sign: f64| -> f64 {
        let v: Vec<f64> = values(x)
            .iter()
            .zip(&d)
            .map(|(a, b)| a + sign * eps * b)
            .collect();
        f(&[array(&v, x.shape())]).unwrap().item::<f64>().unwrap()
    };
    let fd = (moved(1.0) - moved(-1.0)) / (2.0 * eps);
    let (_, g) = vjp(
        |p| Ok(vec![f(p)?]),
        std::slice::from_ref(x),
        &[Array::scalar(1.0f64)],
    )
    .unwrap();
    let via_vjp: f64 = values(&g[0]).iter().zip(&d).map(|(a, b)| a * b).sum();
    assert!(
        (via_vjp - fd).abs() < 1e-5 * (1.0 + fd.abs()),
        "{name}: vjp {via_vjp} vs finite differences {fd}"
    );
}

#[test]
fn derivatives_match_finite_differences() {
    let well = |seed: u64, shape: &[usize]| -> Array {
        let n = shape[shape.len() - 1];
        let e = lazulite::multiply(lazulite::eye(n, None, 0, DType::Float64).unwrap(), n as f64)
            .unwrap();
        lazulite::add(random(seed, shape), &e).unwrap()
    };
    let spd = |seed: u64, n: usize| -> Array {
        let a = random(seed, &[n, n]);
        let e = lazulite::multiply(lazulite::eye(n, None, 0, DType::Float64).unwrap(), n as f64)
            .unwrap();
        lazulite::add(matmul(&a, &swapaxes(&a, -1, -2).unwrap()).unwrap(), &e).unwrap()
    };
    let unary: [(&str, Unary, Array); 4] = [
        ("inv", linalg::inv, well(1, &[2, 3, 3])),
        ("pinv", linalg::pinv, random(2, &[4, 3])),
        ("det", linalg::det, well(3, &[3, 3])),
        (
            "eigvalsh",
            |a| linalg::eigvalsh(a, "U"),
            symmetric(4, &[4, 4]),
        ),
    ];
    for (name, f, x) in unary {
        check_derivatives(name, &|p: &[Array]| f(&p[0]), &[x]);
    }
    let a = well(5, &[3, 3]);
    let b = random(6, &[2, 3, 2]);
    check_derivatives(
        "solve",
        &|p: &[Array]| linalg::solve(&p[0], &p[1]),
        &[a.clone(), b.clone()],
    );
    check_derivatives(
        "solve vector",
        &|p: &[Array]| linalg::solve(&p[0], &p[1]),
        &[a.clone(), random(7, &[3])],
    );
    for upper in [false, true] {
        check_derivatives(
            "solve_triangular",
            &|p: &[Array]| linalg::solve_triangular(&p[0], &p[1], upper),
            &[a.clone(), b.clone()],
        );
        check_derivatives(
            "tri_inv",
            &|p: &[Array]| linalg::tri_inv(&p[0], upper),
            std::slice::from_ref(&a),
        );
        check_derivatives(
            "cholesky",
            &|p: &[Array]| cholesky(&p[0], upper),
            &[spd(8, 4)],
        );
        check_derivatives(
            "cholesky_inv",
            &|p: &[Array]| linalg::cholesky_inv(&p[0], upper),
            std::slice::from_ref(&a),
        );
    }
    check_derivatives(
        "eigh",
        &|p: &[Array]| {
            let (w, v) = linalg::eigh(&p[0], "L")?;
            // Eigenvectors are defined up to sign: use sign-invariant products.
            let outer = matmul(
                &lazulite::multiply(&v, &lazulite::expand_dims(&w, -2)?)?,
                &swapaxes(&v, -1, -2)?,
            )?;
            sum_weighted(&[w, lazulite::square(&v)?, outer])
        },
        &[symmetric(9, &[4, 4])],
    );
    for shape in [[4usize, 4], [5, 3], [3, 5]] {
        check_derivatives(
            "svd values",
            &|p: &[Array]| Ok(linalg::svd(&p[0], false)?.remove(0)),
            &[random(10, &shape)],
        );
        let qr_loss = |p: &[Array]| {
            let (q, r) = linalg::qr(&p[0])?;
            sum_weighted(&[q, r])
        };
        if shape[0] >= shape[1] {
            check_derivatives("qr", &qr_loss, &[random(11, &shape)]);
        } else {
            check_vjp("qr wide", &qr_loss, &random(11, &shape));
        }
        check_derivatives(
            "norm nuc",
            &|p: &[Array]| linalg::norm(&p[0], Some("nuc".into()), None, false),
            &[random(12, &shape)],
        );
    }
    check_derivatives(
        "svd",
        &|p: &[Array]| {
            let parts = linalg::svd(&p[0], true)?;
            // Singular vectors are defined up to a shared sign per pair: use u_i v_iᵀ products.
            let (u, s, vt) = (&parts[0], &parts[1], &parts[2]);
            let first = matmul(
                &lazulite::slice(u, &[0, 0], &[4, 1], &[1, 1])?,
                &lazulite::slice(vt, &[0, 0], &[1, 4], &[1, 1])?,
            )?;
            sum_weighted(&[
                s.clone(),
                first,
                lazulite::square(u)?,
                lazulite::square(vt)?,
            ])
        },
        &[random(13, &[4, 4])],
    );
    let v = random(14, &[2, 5]);
    for ord in [
        None,
        Some(NormOrd::from(1)),
        Some(3.0.into()),
        Some(f64::INFINITY.into()),
    ] {
        check_derivatives(
            "vector norm",
            &|p: &[Array]| linalg::norm(&p[0], ord.clone(), Some(&[-1]), false),
            std::slice::from_ref(&v),
        );
    }
    check_derivatives(
        "cross",
        &|p: &[Array]| linalg::cross(&p[0], &p[1], 0),
        &[random(15, &[3, 2]), random(16, &[3, 2])],
    );
}

#[test]
fn qr_jvp_of_wide_matrices_is_not_implemented_but_vjp_is() {
    let a = random(20, &[2, 4]);
    let f = |p: &[Array]| -> lazulite::Result<Vec<Array>> { Ok(vec![linalg::qr(&p[0])?.1]) };
    let err = lazulite::jvp(f, std::slice::from_ref(&a), std::slice::from_ref(&a)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotImplemented);
    let (_, g) = vjp(
        f,
        std::slice::from_ref(&a),
        &[lazulite::ones(&[2, 4], DType::Float64).unwrap()],
    )
    .unwrap();
    assert_eq!(g[0].shape(), &[2, 4]);
}

#[test]
fn vmap_matches_a_loop() {
    let batch = symmetric(30, &[3, 4, 4]);
    let eye = lazulite::multiply(lazulite::eye(4, None, 0, DType::Float64).unwrap(), 8.0).unwrap();
    let well = lazulite::add(&batch, &eye).unwrap();
    let moved = lazulite::moveaxis(&well, 0, 2).unwrap();
    let b = random(31, &[4, 3]);
    let cases: Vec<(&str, Box<ArrayFn>)> = vec![
        ("inv", Box::new(|p| linalg::inv(&p[0]))),
        ("tri_inv", Box::new(|p| linalg::tri_inv(&p[0], true))),
        ("eigvalsh", Box::new(|p| linalg::eigvalsh(&p[0], "L"))),
        (
            "eigh vectors squared",
            Box::new(|p| lazulite::square(&linalg::eigh(&p[0], "L")?.1)),
        ),
        (
            "svd values",
            Box::new(|p| Ok(linalg::svd(&p[0], false)?.remove(0))),
        ),
        ("qr r", Box::new(|p| Ok(linalg::qr(&p[0])?.1))),
        ("lu u", Box::new(|p| Ok(linalg::lu(&p[0])?.2))),
        ("lu_factor", Box::new(|p| Ok(linalg::lu_factor(&p[0])?.0))),
        ("det", Box::new(|p| linalg::det(&p[0]))),
        ("pinv", Box::new(|p| linalg::pinv(&p[0]))),
        (
            "norm 2",
            Box::new(|p| linalg::norm(&p[0], Some(2.into()), None, false)),
        ),
    ];
    for (name, f) in &cases {
        check_vmap(
            name,
            f.as_ref(),
            std::slice::from_ref(&moved),
            vec![Some(2)],
            0,
        );
    }
    check_vmap(
        "solve",
        &|p: &[Array]| linalg::solve(&p[0], &p[1]),
        &[well.clone(), b.clone()],
        vec![Some(0), Some(1)],
        1,
    );
    check_vmap(
        "solve shared a",
        &|p: &[Array]| linalg::solve(&p[0], &p[1]),
        &[well.clone(), b.clone()],
        vec![None, Some(1)],
        0,
    );
    check_vmap(
        "solve_triangular",
        &|p: &[Array]| linalg::solve_triangular(&p[0], &p[1], false),
        &[well.clone(), b.clone()],
        vec![Some(0), None],
        0,
    );
    check_vmap(
        "cholesky",
        &|p: &[Array]| cholesky(&p[0], false),
        std::slice::from_ref(&well),
        vec![Some(0)],
        0,
    );
}
