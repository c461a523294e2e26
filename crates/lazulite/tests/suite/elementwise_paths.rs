//! The elementwise kernels' layout paths: each contiguous, broadcast, row-broadcast, tiled
//! (transposed) and strided path, on one thread and (above the parallel threshold) on
//! several, against values computed element by element from the logical inputs.

use lazulite::{Array, Complex, DType, Result};

/// The expected value at (row, column).
type Expected<'a> = Box<dyn Fn(usize, usize) -> f32 + 'a>;

/// Large enough that every map is split across threads (the threshold is 2^17 elements).
const BIG: [usize; 2] = [389, 517];
/// One thread, but still several tiles and rows.
const SMALL: [usize; 2] = [67, 45];

/// Deterministic values in [-8, 8) with a fractional part, distinct across `seed`s.
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ((state >> 40) % 4096) as f32 / 256.0 - 8.0
        })
        .collect()
}

fn matrix(shape: [usize; 2], seed: u64) -> (Array, Vec<f32>) {
    let data = values(shape[0] * shape[1], seed);
    (Array::from_slice(&data, &shape).unwrap(), data)
}

fn transpose(a: &Array) -> Array {
    lazulite::transpose(a, &[1, 0]).unwrap()
}

fn f32s(a: &Array) -> Vec<f32> {
    a.astype(DType::Float32).unwrap().to_vec::<f32>().unwrap()
}

/// `expected(i, j)` for every element of the 2-d result `a`.
fn check(a: &Array, shape: [usize; 2], expected: impl Fn(usize, usize) -> f32) {
    assert_eq!(a.shape(), &shape[..]);
    let got = f32s(a);
    for i in 0..shape[0] {
        for j in 0..shape[1] {
            let (g, e) = (got[i * shape[1] + j], expected(i, j));
            assert!(
                g == e || (g.is_nan() && e.is_nan()),
                "at ({i}, {j}) of {shape:?}: got {g}, expected {e}"
            );
        }
    }
}

/// Fresh (donatable) result of `x * 1`: the kernel may write its output into it.
fn fresh(a: &Array) -> Array {
    lazulite::multiply(a, 1.0).unwrap()
}

#[test]
fn contiguous_and_scalar_operands() {
    for shape in [BIG, SMALL] {
        let (a, x) = matrix(shape, 1);
        let (b, y) = matrix(shape, 2);
        let c = shape[1];
        check(&lazulite::add(&a, &b).unwrap(), shape, |i, j| {
            x[i * c + j] + y[i * c + j]
        });
        check(&lazulite::subtract(&a, 2.5).unwrap(), shape, |i, j| {
            x[i * c + j] - 2.5
        });
        check(&lazulite::subtract(2.5, &a).unwrap(), shape, |i, j| {
            2.5 - x[i * c + j]
        });
        let zero_d = Array::from_slice(&[3.0f32], &[]).unwrap();
        check(&lazulite::divide(&zero_d, &b).unwrap(), shape, |i, j| {
            3.0 / y[i * c + j]
        });
        check(&lazulite::maximum(&a, &b).unwrap(), shape, |i, j| {
            x[i * c + j].max(y[i * c + j])
        });
        check(&lazulite::less(&a, &b).unwrap(), shape, |i, j| {
            (x[i * c + j] < y[i * c + j]) as u8 as f32
        });
    }
}

#[test]
fn row_and_column_broadcast() {
    for shape in [BIG, SMALL] {
        let (a, x) = matrix(shape, 3);
        let (row, r) = matrix([1, shape[1]], 4);
        let (col, k) = matrix([shape[0], 1], 5);
        let c = shape[1];
        check(&lazulite::add(&a, &row).unwrap(), shape, |i, j| {
            x[i * c + j] + r[j]
        });
        check(&lazulite::subtract(&row, &a).unwrap(), shape, |i, j| {
            r[j] - x[i * c + j]
        });
        check(&lazulite::multiply(&a, &col).unwrap(), shape, |i, j| {
            x[i * c + j] * k[i]
        });
        check(&lazulite::multiply(&col, &row).unwrap(), shape, |i, j| {
            k[i] * r[j]
        });
    }
}

#[test]
fn transposed_operands_and_copies() {
    for shape in [BIG, SMALL] {
        let t = [shape[1], shape[0]];
        let (a, x) = matrix(t, 6);
        let (b, y) = matrix(shape, 7);
        let (at, c) = (transpose(&a), shape[1]);
        let r = shape[0];
        check(&lazulite::add(&at, &b).unwrap(), shape, |i, j| {
            x[j * r + i] + y[i * c + j]
        });
        check(&lazulite::subtract(&b, &at).unwrap(), shape, |i, j| {
            y[i * c + j] - x[j * r + i]
        });
        // Both transposed: the output's rows are read with a step in both operands.
        let (a2, x2) = matrix(t, 8);
        check(
            &lazulite::multiply(&at, transpose(&a2)).unwrap(),
            shape,
            |i, j| x[j * r + i] * x2[j * r + i],
        );
        check(&lazulite::contiguous(&at, false).unwrap(), shape, |i, j| {
            x[j * r + i]
        });
        check(&lazulite::negative(&at).unwrap(), shape, |i, j| {
            -x[j * r + i]
        });
        // Transposed plus a row broadcast.
        let (row, w) = matrix([1, c], 9);
        check(&lazulite::add(&at, &row).unwrap(), shape, |i, j| {
            x[j * r + i] + w[j]
        });
    }
}

#[test]
fn three_dimensional_permutations() {
    let (d0, d1, d2) = (23, 41, 157);
    let data = values(d0 * d1 * d2, 10);
    let a = Array::from_slice(&data, &[d0, d1, d2]).unwrap();
    let at = |i: usize, j: usize, k: usize| data[(i * d1 + j) * d2 + k];
    for axes in [[2, 0, 1], [0, 2, 1], [1, 2, 0], [2, 1, 0]] {
        let p = lazulite::transpose(&a, &axes).unwrap();
        let shape: Vec<usize> = p.shape().to_vec();
        let (ys, y) = {
            let n = shape.iter().product();
            let v = values(n, 11);
            (Array::from_slice(&v, &shape).unwrap(), v)
        };
        let got = f32s(&lazulite::add(&p, &ys).unwrap());
        let copy = f32s(&lazulite::contiguous(&p, false).unwrap());
        for (n, (g, c)) in got.iter().zip(&copy).enumerate() {
            let idx = [
                n / (shape[1] * shape[2]),
                n / shape[2] % shape[1],
                n % shape[2],
            ];
            let mut src = [0; 3];
            for (d, &ax) in axes.iter().enumerate() {
                src[ax as usize] = idx[d];
            }
            let v = at(src[0], src[1], src[2]);
            assert_eq!((*g, *c), (v + y[n], v), "axes {axes:?} at {idx:?}");
        }
    }
}

#[test]
fn negative_strides() {
    for shape in [BIG, SMALL] {
        let (a, x) = matrix(shape, 12);
        let (b, y) = matrix(shape, 13);
        let (r, c) = (shape[0] as i64, shape[1] as i64);
        let rev = lazulite::slice(&a, &[-1, 0], &[-r - 1, c], &[-1, 1]).unwrap();
        let flip = lazulite::slice(&b, &[0, -1], &[r, -c - 1], &[1, -1]).unwrap();
        let (ru, cu) = (shape[0], shape[1]);
        check(&lazulite::add(&rev, &flip).unwrap(), shape, |i, j| {
            x[(ru - 1 - i) * cu + j] + y[i * cu + (cu - 1 - j)]
        });
        check(
            &lazulite::contiguous(&flip, false).unwrap(),
            shape,
            |i, j| y[i * cu + (cu - 1 - j)],
        );
        let flat = a.reshape(&[ru * cu]).unwrap();
        let back = lazulite::slice(&flat, &[-1], &[-(r * c) - 1], &[-2]).unwrap();
        let got = f32s(&lazulite::multiply(&back, 2.0).unwrap());
        for (n, g) in got.iter().enumerate() {
            assert_eq!(*g, 2.0 * x[ru * cu - 1 - 2 * n]);
        }
    }
}

#[test]
fn donated_operands() {
    for shape in [BIG, SMALL] {
        let (a, x) = matrix(shape, 14);
        let (b, y) = matrix(shape, 15);
        let (row, w) = matrix([1, shape[1]], 16);
        let (at_src, z) = matrix([shape[1], shape[0]], 17);
        let (c, r) = (shape[1], shape[0]);
        let xy = |i: usize, j: usize| x[i * c + j] * y[i * c + j];
        let cases: Vec<(Array, Expected<'_>)> = vec![
            (
                lazulite::add(fresh(&a), &b).unwrap(),
                Box::new(|i, j| x[i * c + j] + y[i * c + j]),
            ),
            (
                lazulite::subtract(&b, fresh(&a)).unwrap(),
                Box::new(|i, j| y[i * c + j] - x[i * c + j]),
            ),
            (
                lazulite::add(fresh(&a), 1.5).unwrap(),
                Box::new(|i, j| x[i * c + j] + 1.5),
            ),
            (
                lazulite::subtract(1.5, fresh(&a)).unwrap(),
                Box::new(|i, j| 1.5 - x[i * c + j]),
            ),
            (
                lazulite::add(fresh(&a), &row).unwrap(),
                Box::new(|i, j| x[i * c + j] + w[j]),
            ),
            (
                lazulite::add(fresh(&a), transpose(&at_src)).unwrap(),
                Box::new(|i, j| x[i * c + j] + z[j * r + i]),
            ),
            (
                lazulite::add(lazulite::multiply(&a, &b).unwrap(), &b).unwrap(),
                Box::new(|i, j| xy(i, j) + y[i * c + j]),
            ),
            (
                lazulite::exp(&fresh(&a)).unwrap(),
                Box::new(|i, j| x[i * c + j].exp()),
            ),
            (
                lazulite::floor(&fresh(&a)).unwrap(),
                Box::new(|i, j| x[i * c + j].floor()),
            ),
        ];
        for (n, (got, expected)) in cases.into_iter().enumerate() {
            if n == 7 {
                // exp goes through the vectorised math, within 2 ulp of std.
                let g = f32s(&got);
                for (k, v) in g.iter().enumerate() {
                    let e = expected(k / c, k % c);
                    assert!((v - e).abs() <= 4.0 * f32::EPSILON * e.abs(), "{v} vs {e}");
                }
                continue;
            }
            check(&got, shape, expected);
        }
        // The same buffer on both sides is not donated (it is read twice per element).
        let f = fresh(&a);
        check(&lazulite::add(&f, &f).unwrap(), shape, |i, j| {
            2.0 * x[i * c + j]
        });
    }
}

/// `op` on `a` and `b` in dtype `dtype` and in float64, compared after casting the float64
/// result to `dtype`, for contiguous, transposed, scalar and row-broadcast layouts.
fn check_dtype(dtype: DType, op: fn(&Array, &Array) -> Result<Array>) {
    for shape in [BIG, SMALL] {
        let t = [shape[1], shape[0]];
        let (a, _) = matrix(shape, 18);
        let (b, _) = matrix(t, 19);
        let (row, _) = matrix([1, shape[1]], 20);
        let scalar = Array::from_slice(&[2.0f32], &[]).unwrap();
        let pairs = [
            (a.clone(), transpose(&b)),
            (transpose(&b), a.clone()),
            (a.clone(), scalar.clone()),
            (scalar, a.clone()),
            (a.clone(), row),
            (
                lazulite::contiguous(&transpose(&b), false).unwrap(),
                a.clone(),
            ),
        ];
        for (n, (x, y)) in pairs.iter().enumerate() {
            let (xd, yd) = (x.astype(dtype).unwrap(), y.astype(dtype).unwrap());
            let got = op(&xd, &yd).unwrap();
            // The reference: the same values computed in bands of rows, each on one
            // thread (and a band of one row, or of a transposed operand, strided).
            let xs = lazulite::broadcast_to(&xd, &shape).unwrap();
            let ys = lazulite::broadcast_to(&yd, &shape).unwrap();
            let bands: Vec<Array> = (0..shape[0] as i64)
                .step_by(64)
                .map(|i| {
                    let end = (i + 64).min(shape[0] as i64);
                    let pick = |v: &Array| {
                        lazulite::slice(v, &[i, 0], &[end, shape[1] as i64], &[1, 1]).unwrap()
                    };
                    op(&pick(&xs), &pick(&ys)).unwrap()
                })
                .collect();
            let expected = lazulite::concatenate(&bands, 0).unwrap();
            assert_eq!(got.dtype(), expected.dtype());
            let (g, e) = (
                got.astype(DType::Complex64)
                    .unwrap()
                    .to_vec::<Complex>()
                    .unwrap(),
                expected
                    .astype(DType::Complex64)
                    .unwrap()
                    .to_vec::<Complex>()
                    .unwrap(),
            );
            assert!(
                g.iter()
                    .zip(&e)
                    .all(|(p, q)| p == q || (p.re.is_nan() && q.re.is_nan())),
                "{dtype} pair {n} of {shape:?}"
            );
        }
    }
}

#[test]
fn every_dtype_class() {
    for dtype in [
        DType::Bool,
        DType::UInt8,
        DType::Int32,
        DType::Int64,
        DType::Float16,
        DType::BFloat16,
        DType::Float32,
        DType::Float64,
        DType::Complex64,
    ] {
        check_dtype(dtype, |a, b| lazulite::add(a, b));
        check_dtype(dtype, |a, b| lazulite::multiply(a, b));
        check_dtype(dtype, |a, b| lazulite::greater(a, b));
        if dtype != DType::Complex64 {
            check_dtype(dtype, |a, b| lazulite::maximum(a, b));
        }
    }
}

#[test]
fn select_layouts() {
    for shape in [BIG, SMALL] {
        let (a, x) = matrix(shape, 21);
        let (b, y) = matrix([shape[1], shape[0]], 22);
        let (c, r) = (shape[1], shape[0]);
        let cond = lazulite::greater(&a, 0.0).unwrap();
        check(&lazulite::where_(&cond, &a, 0.0).unwrap(), shape, |i, j| {
            x[i * c + j].max(0.0)
        });
        check(
            &lazulite::where_(&cond, -1.0, &a).unwrap(),
            shape,
            |i, j| {
                if x[i * c + j] > 0.0 {
                    -1.0
                } else {
                    x[i * c + j]
                }
            },
        );
        check(
            &lazulite::where_(&cond, &a, transpose(&b)).unwrap(),
            shape,
            |i, j| {
                if x[i * c + j] > 0.0 {
                    x[i * c + j]
                } else {
                    y[j * r + i]
                }
            },
        );
    }
}

#[test]
fn casts_in_every_layout() {
    for shape in [BIG, SMALL] {
        let (a, x) = matrix(shape, 23);
        let (c, r) = (shape[1], shape[0]);
        let (b, y) = matrix([c, r], 24);
        let bt = transpose(&b);
        // Values in [-8, 8) with 8 fractional bits are exact in float16 and float64.
        for dtype in [DType::Float16, DType::Float64] {
            check(&a.astype(dtype).unwrap(), shape, |i, j| x[i * c + j]);
            check(&bt.astype(dtype).unwrap(), shape, |i, j| y[j * r + i]);
            let back = bt.astype(dtype).unwrap().astype(DType::Float32).unwrap();
            check(&back, shape, |i, j| y[j * r + i]);
            let back_t = transpose(&a.astype(dtype).unwrap())
                .astype(DType::Float32)
                .unwrap();
            check(&back_t, [c, r], |i, j| x[j * c + i]);
        }
        check(&a.astype(DType::Int32).unwrap(), shape, |i, j| {
            x[i * c + j].trunc()
        });
        check(&bt.astype(DType::Int8).unwrap(), shape, |i, j| {
            y[j * r + i].trunc()
        });
        check(&bt.astype(DType::Bool).unwrap(), shape, |i, j| {
            (y[j * r + i] != 0.0) as u8 as f32
        });
        // Rounding float32 to float16 (one rounding, to nearest even).
        let fine = lazulite::multiply(&a, 1.0 / 1024.0 + 1.0 / 3.0).unwrap();
        let want = f32s(
            &fine
                .astype(DType::Float64)
                .unwrap()
                .astype(DType::Float16)
                .unwrap(),
        );
        assert_eq!(f32s(&fine.astype(DType::Float16).unwrap()), want);
        assert_eq!(f32s(&transpose(&fine).astype(DType::Float16).unwrap()), {
            let t = lazulite::contiguous(&transpose(&fine), false).unwrap();
            f32s(
                &t.astype(DType::Float64)
                    .unwrap()
                    .astype(DType::Float16)
                    .unwrap(),
            )
        });
    }
}
