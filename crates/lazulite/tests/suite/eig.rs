//! `linalg::eig` and `linalg::eigvals` on general square matrices. The order of the
//! eigenvalues and the phases of the eigenvectors are not unique, so the NumPy fixture
//! (tools/fixtures/eig.py) is compared as a multiset, and the vectors by their defining
//! properties: `a v = v diag(w)`, unit norms, the largest entry of a complex vector real.
//! For generic matrices the order is also checked against LAPACK's on the transpose,
//! which is the order MLX returns.

use crate::common;
use lazulite::{linalg, Array, Complex, DType, ErrorKind};
use serde_json::Value;

type C = (f64, f64);

fn complex_vec(a: &Array) -> Vec<C> {
    a.to_vec::<Complex>()
        .unwrap()
        .iter()
        .map(|c| (c.re as f64, c.im as f64))
        .collect()
}

fn mul(a: C, b: C) -> C {
    (a.0 * b.0 - a.1 * b.1, a.0 * b.1 + a.1 * b.0)
}

fn dist(a: C, b: C) -> f64 {
    (a.0 - b.0).hypot(a.1 - b.1)
}

/// Pairs (re, im) of a fixture `[..., n, 2]` array, flat.
fn fixture_pairs(v: &Value) -> Vec<C> {
    let data: Vec<f64> = v["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(common::json_f64)
        .collect();
    data.chunks(2).map(|p| (p[0], p[1])).collect()
}

/// Every expected eigenvalue matched to a distinct computed one within `tol`.
fn assert_same_multiset(got: &[C], expected: &[C], tol: f64, context: &str) {
    assert_eq!(got.len(), expected.len(), "{context}: count");
    let mut used = vec![false; got.len()];
    for e in expected {
        let best = (0..got.len())
            .filter(|&i| !used[i])
            .min_by(|&i, &j| dist(got[i], *e).total_cmp(&dist(got[j], *e)))
            .unwrap();
        assert!(
            dist(got[best], *e) <= tol,
            "{context}: expected eigenvalue {e:?}, nearest {:?} in {got:?}",
            got[best]
        );
        used[best] = true;
    }
}

/// Checks `a v = v diag(w)`, unit columns and the phase convention for each matrix of a
/// batch; `a` is row-major float64 data.
fn assert_eigenpairs(a: &[f64], n: usize, w: &[C], v: &[C], tol: f64, context: &str) {
    if n == 0 {
        return;
    }
    let scale = a.iter().fold(1.0f64, |m, x| m.max(x.abs()));
    for (m, ws) in w.chunks(n).enumerate() {
        let am = &a[m * n * n..(m + 1) * n * n];
        let vm = &v[m * n * n..(m + 1) * n * n];
        for j in 0..n {
            let norm: f64 = (0..n)
                .map(|i| vm[i * n + j].0.hypot(vm[i * n + j].1).powi(2))
                .sum();
            assert!(
                (norm.sqrt() - 1.0).abs() < 1e-5,
                "{context}: column {j} norm {norm}"
            );
            for i in 0..n {
                let av = (0..n).fold((0.0, 0.0), |acc, k| {
                    let x = vm[k * n + j];
                    (acc.0 + am[i * n + k] * x.0, acc.1 + am[i * n + k] * x.1)
                });
                let vw = mul(vm[i * n + j], ws[j]);
                assert!(
                    dist(av, vw) <= tol * scale,
                    "{context}: matrix {m}, (a v - v w)[{i}, {j}] = {}",
                    dist(av, vw)
                );
            }
            if ws[j].1 != 0.0 {
                let largest = (0..n)
                    .max_by(|&x, &y| {
                        let (p, q) = (vm[x * n + j], vm[y * n + j]);
                        (p.0.hypot(p.1)).total_cmp(&q.0.hypot(q.1))
                    })
                    .unwrap();
                let top = vm[largest * n + j];
                assert!(
                    top.1.abs() <= 1e-6 * top.0.abs(),
                    "{context}: complex eigenvector {j} has largest entry {top:?}"
                );
            }
        }
    }
}

#[test]
fn matches_numpy_on_the_fixture() {
    let fixture = common::load_fixture("eig");
    for case in fixture["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let a = common::array_from_json(&case["input"]);
        let n = a.shape()[a.ndim() - 1];
        let (w, v) = linalg::eig(&a).unwrap();
        assert_eq!(w.dtype(), DType::Complex64, "{name}");
        assert_eq!(v.dtype(), DType::Complex64, "{name}");
        assert_eq!(w.shape(), &a.shape()[..a.ndim() - 1], "{name}");
        assert_eq!(v.shape(), a.shape(), "{name}");
        let (wv, vv) = (complex_vec(&w), complex_vec(&v));
        let values_only = complex_vec(&linalg::eigvals(&a).unwrap());
        assert_eq!(values_only, wv, "{name}: eigvals equals eig's values");

        // The results are complex64 for float64 input too: float32 rounding either way.
        let tol = 2e-6 * n as f64;
        let expected = fixture_pairs(&case["values"]);
        let data = a.to_vec::<f64>().unwrap();
        for (m, (got, exp)) in wv
            .chunks(n.max(1))
            .zip(expected.chunks(n.max(1)))
            .enumerate()
        {
            let largest = data.iter().fold(1.0f64, |x, y| x.max(y.abs()));
            // Defective eigenvalues move by the square (or cube) root of the rounding.
            let tol = match name {
                "jordan block" => 1e-4,
                "nilpotent" => 1e-6,
                _ => tol * largest,
            };
            assert_same_multiset(got, exp, tol, &format!("{name} [{m}]"));
        }
        if let Some(order) = case.get("mlx_order") {
            for (got, exp) in wv.iter().zip(fixture_pairs(order)) {
                assert!(dist(*got, exp) <= 1e-4, "{name}: order {wv:?} vs {exp:?}");
            }
        }
        let tol = if name == "jordan block" { 1e-4 } else { 1e-5 };
        assert_eigenpairs(&data, n, &wv, &vv, tol, name);
    }
}

#[test]
fn known_decompositions_in_mlx_conventions() {
    // MLX: w = [1j, -1j], v = [[0.707107, 0.707107], [-0.707107j, 0.707107j]].
    let a = common::array(&[0.0, -1.0, 1.0, 0.0], &[2, 2])
        .astype(DType::Float32)
        .unwrap();
    let (w, v) = linalg::eig(&a).unwrap();
    assert_eq!(complex_vec(&w), vec![(0.0, 1.0), (0.0, -1.0)]);
    let h = 0.5f64.sqrt();
    let expected = [(h, 0.0), (h, 0.0), (0.0, -h), (0.0, h)];
    for (g, e) in complex_vec(&v).iter().zip(expected) {
        assert!(dist(*g, e) < 1e-7, "{g:?} vs {e:?}");
    }
    // MLX: w = [-0.372281, 5.37228], v = [[-0.824565, -0.415974], [0.565767, -0.909377]].
    let a = common::array(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
    let (w, v) = linalg::eig(&a).unwrap();
    let w = complex_vec(&w);
    assert!(dist(w[0], (-0.372281, 0.0)) < 1e-6 && dist(w[1], (5.37228, 0.0)) < 1e-5);
    let expected = [-0.824565, -0.415974, 0.565767, -0.909377];
    for (g, e) in complex_vec(&v).iter().zip(expected) {
        assert!(dist(*g, (e, 0.0)) < 1e-6, "{g:?} vs {e}");
    }
}

#[test]
fn float64_results_equal_mlx_geev() {
    // mx.linalg.eig(a, stream=mx.cpu) on float64 input (LAPACK dgeev), to 7 digits.
    let upper = common::array(&[1.0, 2.0, 3.0, 0.0, 4.0, 5.0, 0.0, 0.0, -1.0], &[3, 3]);
    let general = common::array(&[1.0, -2.0, 0.5, 3.0, 1.0, 2.0, -1.0, 0.5, 2.0], &[3, 3]);
    let cases: [(&Array, Vec<C>, Vec<C>); 2] = [
        (
            &upper,
            vec![(-1.0, 0.0), (4.0, 0.0), (1.0, 0.0)],
            vec![
                (-0.3333333, 0.0),
                (0.5547002, 0.0),
                (1.0, 0.0),
                (-0.6666667, 0.0),
                (0.8320503, 0.0),
                (0.0, 0.0),
                (0.6666667, 0.0),
                (0.0, 0.0),
                (0.0, 0.0),
            ],
        ),
        (
            &general,
            vec![
                (0.6795795, 2.5394585),
                (0.6795795, -2.5394585),
                (2.640841, 0.0),
            ],
            vec![
                (-0.0803628, -0.6212005),
                (-0.0803628, 0.6212005),
                (-0.3052053, 0.0),
                (-0.7417849, 0.0),
                (-0.7417849, 0.0),
                (0.4589899, 0.0),
                (0.2393858, -0.0100652),
                (0.2393858, 0.0100652),
                (0.8343728, 0.0),
            ],
        ),
    ];
    for (a, w_mlx, v_mlx) in cases {
        let (w, v) = linalg::eig(a).unwrap();
        for (g, e) in complex_vec(&w).iter().zip(&w_mlx) {
            assert!(dist(*g, *e) < 1e-6, "{g:?} vs {e:?}");
        }
        for (g, e) in complex_vec(&v).iter().zip(&v_mlx) {
            assert!(dist(*g, *e) < 1e-6, "{g:?} vs {e:?}");
        }
    }
}

#[test]
fn complex_results_equal_lapack_zgeev() {
    // LAPACK 3.10's zgeev (MLX's library, double precision) on the buffer as MLX hands it
    // over (the transpose), its left eigenvectors conjugated: right eigenvectors of `a`.
    // MLX's own cgeev gives these eigenvalues in this order and the conjugated vectors.
    let c = |re: f64, im: f64| Complex::new(re as f32, im as f32);
    let data = [
        c(1.0, 1.0),
        c(2.0, 0.0),
        c(0.0, -1.0),
        c(0.5, 0.0),
        c(-1.0, 2.0),
        c(1.0, 0.0),
        c(0.0, 3.0),
        c(1.0, -1.0),
        c(2.0, 0.0),
    ];
    let a = Array::from_slice(&data, &[3, 3]).unwrap();
    let (w, v) = linalg::eig(&a).unwrap();
    let w_lapack = [
        (-2.0423595, 2.0792914),
        (0.7080002, 0.3134807),
        (3.3343593, 0.6072279),
    ];
    let v_lapack = [
        (-0.4011070, -0.3067294),
        (0.0345769, 0.4995032),
        (0.2425719, -0.3104642),
        (0.6723432, 0.0),
        (0.1664111, 0.3105427),
        (0.2221542, 0.0355711),
        (-0.5002699, 0.2066757),
        (0.7906779, 0.0),
        (0.8911527, 0.0),
    ];
    for (g, e) in complex_vec(&w).iter().zip(w_lapack) {
        assert!(dist(*g, e) < 1e-6, "{g:?} vs {e:?}");
    }
    for (g, e) in complex_vec(&v).iter().zip(v_lapack) {
        assert!(dist(*g, e) < 1e-6, "{g:?} vs {e:?}");
    }
    let values_only = complex_vec(&linalg::eigvals(&a).unwrap());
    assert_eq!(values_only, complex_vec(&w));
    let b = Array::from_slice(&[c(0.0, 2.0)], &[1, 1]).unwrap();
    let (w, v) = linalg::eig(&b).unwrap();
    assert_eq!(
        (complex_vec(&w), complex_vec(&v)),
        (vec![(0.0, 2.0)], vec![(1.0, 0.0)])
    );
}

#[test]
fn one_by_one_and_empty() {
    let a = common::array(&[-2.5], &[1, 1]);
    let (w, v) = linalg::eig(&a).unwrap();
    assert_eq!(complex_vec(&w), vec![(-2.5, 0.0)]);
    assert_eq!(complex_vec(&v), vec![(1.0, 0.0)]);
    let e = Array::zeros(&[3, 0, 0], DType::Float32).unwrap();
    let (w, v) = linalg::eig(&e).unwrap();
    assert_eq!((w.shape(), v.shape()), (&[3, 0][..], &[3, 0, 0][..]));
    assert_eq!(w.to_vec::<Complex>().unwrap(), vec![]);
}

#[test]
fn strided_inputs_equal_their_contiguous_copies() {
    let base = common::array(&common::uniform(3, 2 * 5 * 5, -1.0, 1.0), &[2, 5, 5]);
    let contiguous = |x: &Array| common::array(&x.to_vec::<f64>().unwrap(), x.shape());
    let transposed = lazulite::swapaxes(&base, -1, -2).unwrap();
    let reversed = lazulite::slice(&base, &[1, 4, 0], &[-3, -6, 5], &[-1, -1, 1]).unwrap();
    let single = lazulite::slice(&base, &[0, 0, 0], &[1, 5, 5], &[1, 1, 1]).unwrap();
    let broadcast = lazulite::broadcast_to(&single, &[3, 5, 5]).unwrap();
    for (name, view) in [
        ("transposed", transposed),
        ("reversed", reversed),
        ("broadcast", broadcast),
    ] {
        let (w, v) = linalg::eig(&view).unwrap();
        let (cw, cv) = linalg::eig(&contiguous(&view)).unwrap();
        assert_eq!(complex_vec(&w), complex_vec(&cw), "{name}");
        assert_eq!(complex_vec(&v), complex_vec(&cv), "{name}");
    }
}

#[test]
fn float32_input_is_decomposed_in_float64() {
    // Eigenvalues 1 and 1 + 1e-6: float32 arithmetic could not separate them this well.
    let a = common::array(&[1.0, 1.0, 0.0, 1.0 + 1e-6], &[2, 2])
        .astype(DType::Float32)
        .unwrap();
    let w = complex_vec(&linalg::eigvals(&a).unwrap());
    let exact = a.to_vec::<f64>().unwrap()[3];
    assert!(
        w.contains(&(1.0, 0.0)) && w.contains(&(exact, 0.0)),
        "{w:?}"
    );
}

#[test]
fn vmap_equals_a_loop() {
    let x = common::array(&common::uniform(9, 4 * 4 * 3, -1.0, 1.0), &[4, 4, 3]);
    let batched = lazulite::vmap(
        |p| {
            let (w, v) = linalg::eig(&p[0])?;
            Ok(vec![w, v])
        },
        vec![Some(2)],
        vec![Some(0), Some(0)],
    )(std::slice::from_ref(&x))
    .unwrap();
    for i in 0..3i64 {
        let m = lazulite::slice(&x, &[0, 0, i], &[4, 4, i + 1], &[1, 1, 1]).unwrap();
        let m = lazulite::reshape(&m, &[4, 4]).unwrap();
        let (w, v) = linalg::eig(&m).unwrap();
        let row = |a: &Array| {
            let k = a.size() / 3;
            complex_vec(a)[i as usize * k..(i as usize + 1) * k].to_vec()
        };
        assert_eq!(row(&batched[0]), complex_vec(&w));
        assert_eq!(row(&batched[1]), complex_vec(&v));
    }
}

#[test]
fn rejects_what_mlx_rejects() {
    let check = |a: Array, kind: ErrorKind, text: &str| {
        for result in [linalg::eig(&a).map(|p| p.0), linalg::eigvals(&a)] {
            let err = result.unwrap_err();
            assert_eq!(err.kind(), kind, "{err}");
            assert!(err.to_string().contains(text), "{err}");
        }
        assert!(
            a.to_vec::<f64>().is_ok() || a.dtype() == DType::Complex64,
            "input intact"
        );
    };
    check(
        common::array(&[1.0, 2.0, 3.0], &[3]),
        ErrorKind::Value,
        ">= 2 dimensions",
    );
    check(
        Array::zeros(&[2, 3], DType::Float32).unwrap(),
        ErrorKind::Value,
        "square",
    );
    for dtype in [
        DType::Int32,
        DType::Bool,
        DType::Float16,
        DType::BFloat16,
        DType::UInt8,
    ] {
        check(
            Array::zeros(&[2, 2], dtype).unwrap(),
            ErrorKind::Value,
            "float32, float64 or complex64",
        );
    }
    check(
        Array::zeros(&[3, 2], DType::Complex64).unwrap(),
        ErrorKind::Value,
        "square",
    );
}

#[test]
fn non_finite_input_is_a_value_error_when_evaluated() {
    for bad in [f64::NAN, f64::INFINITY] {
        let a = common::array(&[1.0, bad, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0], &[2, 2, 2]);
        let (w, _) = linalg::eig(&a).unwrap();
        let err = w.to_vec::<Complex>().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Value);
        assert!(err.to_string().contains("[linalg::eig]"), "{err}");
        let err = linalg::eigvals(&a)
            .unwrap()
            .to_vec::<Complex>()
            .unwrap_err();
        assert!(err.to_string().contains("[linalg::eigvals]"), "{err}");
    }
}
