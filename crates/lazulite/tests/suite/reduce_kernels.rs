//! The blocked and threaded reduction kernels (contiguous inputs, reduced axes adjacent)
//! against the strided walk (the same values seen through a transposed view), against
//! float64 sums, and across rayon thread counts; NaN placement and ties as NumPy; the
//! integer-key float sort.

use lazulite::{astype, eval, Array, Axes, DType};

/// Input elements above which the kernels split work across threads (1 << 17), with a
/// margin.
const ABOVE_THREADING: usize = 200_000;

/// Deterministic values in [-3, 3] on a grid of quarters, so ties are common.
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 40) % 25) as f32 / 4.0 - 3.0
        })
        .collect()
}

/// `data` (row-major, `shape`) as a contiguous array of `dtype`.
fn contiguous(data: &[f32], shape: &[usize], dtype: DType) -> Array {
    astype(&Array::from_slice(data, shape).unwrap(), dtype).unwrap()
}

/// The same logical array as [`contiguous`], but a transposed view of an array stored
/// with the axes reversed, so kernels take the strided path.
fn strided(data: &[f32], shape: &[usize], dtype: DType) -> Array {
    let reversed: Vec<usize> = shape.iter().rev().copied().collect();
    let strides: Vec<usize> = (0..shape.len())
        .map(|d| shape[d + 1..].iter().product())
        .collect();
    let n = data.len();
    let mut stored = vec![0f32; n];
    for (i, v) in data.iter().enumerate() {
        // Position of element i in the reversed-axes layout.
        let mut rest = i;
        let mut index = vec![0usize; shape.len()];
        for d in 0..shape.len() {
            index[d] = rest / strides[d];
            rest %= strides[d];
        }
        let mut pos = 0;
        for d in (0..shape.len()).rev() {
            pos = pos * shape[d] + index[d];
        }
        stored[pos] = *v;
    }
    let base = contiguous(&stored, &reversed, dtype);
    eval(&[&base]).unwrap();
    let perm: Vec<i32> = (0..shape.len() as i32).rev().collect();
    lazulite::transpose(&base, &perm).unwrap()
}

/// Values of `a` as float64 (NaN kept).
fn as_f64(a: &Array) -> Vec<f64> {
    astype(a, DType::Float64).unwrap().to_vec::<f64>().unwrap()
}

fn assert_close(got: &Array, want: &Array, rtol: f64, context: &str) {
    assert_eq!(got.shape(), want.shape(), "{context}");
    assert_eq!(got.dtype(), want.dtype(), "{context}");
    for (i, (g, w)) in as_f64(got).iter().zip(as_f64(want)).enumerate() {
        let same =
            (g.is_nan() && w.is_nan()) || g == &w || (g - w).abs() <= rtol * g.abs().max(w.abs());
        assert!(same, "{context} at {i}: {g} vs {w}");
    }
}

type Reduction = fn(&Array, Axes) -> lazulite::Result<Array>;

const REDUCTIONS: [(&str, Reduction); 6] = [
    ("sum", |a, axes| lazulite::sum(a, axes, false)),
    ("prod", |a, axes| lazulite::prod(a, axes, false)),
    ("max", |a, axes| lazulite::max(a, axes, false)),
    ("min", |a, axes| lazulite::min(a, axes, false)),
    ("any", |a, axes| lazulite::any(a, axes, false)),
    ("all", |a, axes| lazulite::all(a, axes, false)),
];

const DTYPES: [DType; 8] = [
    DType::Float32,
    DType::Float64,
    DType::Float16,
    DType::BFloat16,
    DType::Int32,
    DType::UInt8,
    DType::Int64,
    DType::Bool,
];

/// Every reduction, every dtype, every axis set of a 3-d array: the blocked paths give
/// what the strided walk gives (exactly, except float sums and products).
fn check_against_strided(shape: &[usize], axis_sets: &[Axes], seed: u64) {
    let n: usize = shape.iter().product();
    let data = values(n, seed);
    for dtype in DTYPES {
        let fast = contiguous(&data, shape, dtype);
        let slow = strided(&data, shape, dtype);
        eval(&[&fast, &slow]).unwrap();
        for axes in axis_sets {
            for (name, op) in REDUCTIONS {
                if name == "prod" && n > 1000 && dtype.is_floating() {
                    continue;
                }
                let context = format!("{name} {dtype} {shape:?} {axes:?}");
                let rtol = if dtype.is_floating() { 1e-6 } else { 0.0 };
                assert_close(
                    &op(&fast, axes.clone()).unwrap(),
                    &op(&slow, axes.clone()).unwrap(),
                    rtol,
                    &context,
                );
            }
            if let Axes::List(list) = axes {
                if let [axis] = list.as_slice() {
                    for (name, arg) in [
                        ("argmax", lazulite::argmax as fn(_, _, _) -> _),
                        ("argmin", lazulite::argmin),
                    ] {
                        let got = arg(&fast, Some(*axis), false).unwrap();
                        let want = arg(&slow, Some(*axis), false).unwrap();
                        let context = format!("{name} {dtype} {shape:?} axis {axis}");
                        assert_close(&got, &want, 0.0, &context);
                    }
                }
            }
        }
    }
}

#[test]
fn each_axis_of_3d_arrays_matches_the_strided_walk() {
    let axis_sets = [
        Axes::from(0),
        Axes::from(1),
        Axes::from(2),
        Axes::from(-1),
        Axes::from([0, 1]),
        Axes::from([1, 2]),
        Axes::from([0, 2]),
        Axes::All,
    ];
    check_against_strided(&[3, 4, 5], &axis_sets, 1);
    check_against_strided(&[2, 1, 7], &axis_sets, 2);
}

#[test]
fn large_arrays_above_the_thread_threshold_match_the_strided_walk() {
    let axis_sets = [
        Axes::from(0),
        Axes::from(1),
        Axes::from(2),
        Axes::from([1, 2]),
        Axes::All,
    ];
    check_against_strided(&[50, 80, 52], &axis_sets, 3);
    // Few long rows: the blocks of each row are split across threads.
    check_against_strided(&[1, 2, ABOVE_THREADING], &[Axes::from(2), Axes::All], 4);
}

#[test]
fn float_sums_match_float64_sums() {
    let n = 1 << 20;
    let data: Vec<f32> = (0..n).map(|i| 1.0 + (i % 1000) as f32 * 1e-3).collect();
    let exact: f64 = data.iter().map(|&v| v as f64).sum();
    let a = Array::from_slice(&data, &[n]).unwrap();
    let got = lazulite::sum(&a, Axes::All, false).unwrap();
    assert_eq!(got.item::<f32>().unwrap(), exact as f32);
    let rows = lazulite::reshape(&a, &[1024, 1024]).unwrap();
    for axis in [0, 1] {
        let got = as_f64(&lazulite::sum(&rows, axis, false).unwrap());
        for (k, g) in got.iter().enumerate() {
            let want: f64 = (0..1024)
                .map(|j| {
                    let i = if axis == 0 {
                        j * 1024 + k
                    } else {
                        k * 1024 + j
                    };
                    data[i] as f64
                })
                .sum();
            assert_eq!(*g, want as f32 as f64, "axis {axis} at {k}");
        }
    }
    let half = lazulite::full(&[ABOVE_THREADING], 0.5, Some(DType::BFloat16)).unwrap();
    let total = lazulite::sum(&half, Axes::All, false).unwrap();
    assert_eq!(total.dtype(), DType::BFloat16);
    let rounded = half::bf16::from_f32((ABOVE_THREADING / 2) as f32);
    assert_eq!(total.item::<f32>().unwrap(), rounded.to_f32());
}

#[test]
fn nan_wins_max_min_and_the_first_nan_wins_argmax_argmin() {
    for n in [7usize, 1000, ABOVE_THREADING] {
        let mut data = values(n, 5);
        let (first, second) = (n / 2, n - 1);
        data[first] = f32::NAN;
        data[second] = f32::NAN;
        for dtype in [DType::Float32, DType::Float64, DType::Float16] {
            let a = contiguous(&data, &[n], dtype);
            for m in [
                lazulite::max(&a, Axes::All, false).unwrap(),
                lazulite::min(&a, Axes::All, false).unwrap(),
            ] {
                assert!(m.item::<f64>().unwrap().is_nan(), "{dtype} n={n}");
            }
            for arg in [lazulite::argmax, lazulite::argmin] {
                let at = arg(&a, None, false).unwrap().item::<u32>().unwrap();
                assert_eq!(at as usize, first, "{dtype} n={n}");
            }
        }
    }
    // Along a non-last axis: column 1 holds NaNs at rows 2 and 3, column 0 none.
    let data = [1.0, 0.0, 5.0, 1.0, 2.0, f32::NAN, 5.0, f32::NAN, -1.0, 3.0];
    let a = Array::from_slice(&data, &[5, 2]).unwrap();
    assert_eq!(
        a.argmax(Some(0), false).unwrap().to_vec::<u32>().unwrap(),
        vec![1, 2]
    );
    assert_eq!(
        a.argmin(Some(0), false).unwrap().to_vec::<u32>().unwrap(),
        vec![4, 2]
    );
    let m = as_f64(&lazulite::max(&a, 0, false).unwrap());
    assert_eq!(m[0], 5.0);
    assert!(m[1].is_nan());
    // NaN first in a row, then larger values: NaN still wins.
    let a = Array::from_slice(&[f32::NAN, 1.0, 2.0, 3.0], &[1, 4]).unwrap();
    assert!(a.max(1, false).unwrap().item::<f32>().unwrap().is_nan());
    assert_eq!(a.argmax(Some(1), false).unwrap().item::<u32>().unwrap(), 0);
}

#[test]
fn ties_give_the_first_position_and_infinities_count() {
    let a = Array::from_slice(&[2.0f32, 7.0, 7.0, -1.0, -1.0, 7.0], &[6]).unwrap();
    assert_eq!(a.argmax(Some(0), false).unwrap().item::<u32>().unwrap(), 1);
    assert_eq!(a.argmin(Some(0), false).unwrap().item::<u32>().unwrap(), 3);
    let low = Array::from_slice(&[f32::NEG_INFINITY; 5], &[5]).unwrap();
    assert_eq!(
        low.argmax(Some(0), false).unwrap().item::<u32>().unwrap(),
        0
    );
    let high = Array::from_slice(&[f32::INFINITY; 5], &[5]).unwrap();
    assert_eq!(
        high.argmin(Some(0), false).unwrap().item::<u32>().unwrap(),
        0
    );
    let ints = Array::from_slice(&[i64::MIN, i64::MIN, 0], &[3]).unwrap();
    assert_eq!(
        ints.argmin(Some(0), false).unwrap().item::<u32>().unwrap(),
        0
    );
    assert_eq!(
        lazulite::max(&ints, Axes::All, false)
            .unwrap()
            .item::<i64>()
            .unwrap(),
        0
    );
    let flags = Array::from_slice(&[false, false, true, true], &[4]).unwrap();
    assert_eq!(
        flags.argmax(Some(0), false).unwrap().item::<u32>().unwrap(),
        2
    );
}

#[test]
fn broadcast_sliced_and_negative_step_inputs() {
    let row = Array::from_slice(&values(5, 6), &[1, 5]).unwrap();
    let wide = lazulite::broadcast_to(&row, &[ABOVE_THREADING / 5, 5]).unwrap();
    let sums = as_f64(&lazulite::sum(&wide, 0, false).unwrap());
    for (s, v) in sums.iter().zip(as_f64(&row)) {
        assert_eq!(*s, v * (ABOVE_THREADING / 5) as f64);
    }
    let data = values(6 * 40_000, 7);
    let a = Array::from_slice(&data, &[6, 40_000]).unwrap();
    let reversed = lazulite::slice(&a, &[-1, -1], &[-7, -40_001], &[-1, -2]).unwrap();
    for axis in [0, 1] {
        let got = lazulite::max(&reversed, axis, false).unwrap();
        let copy = Array::from_slice(&reversed.to_vec::<f32>().unwrap(), reversed.shape()).unwrap();
        assert_close(
            &got,
            &lazulite::max(&copy, axis, false).unwrap(),
            0.0,
            "max",
        );
        let got = lazulite::argmin(&reversed, Some(axis), false).unwrap();
        let want = lazulite::argmin(&copy, Some(axis), false).unwrap();
        assert_close(&got, &want, 0.0, "argmin");
    }
}

#[test]
fn empty_reductions_give_identities() {
    let a = lazulite::zeros(&[0, 5], DType::Float32).unwrap();
    assert_eq!(
        a.sum(0, false).unwrap().to_vec::<f32>().unwrap(),
        vec![0.0; 5]
    );
    assert_eq!(
        lazulite::prod(&a, 0, false)
            .unwrap()
            .to_vec::<f32>()
            .unwrap(),
        vec![1.0; 5]
    );
    assert_eq!(
        lazulite::all(&a, 0, false)
            .unwrap()
            .to_vec::<bool>()
            .unwrap(),
        vec![true; 5]
    );
    assert_eq!(
        lazulite::any(&a, 0, false)
            .unwrap()
            .to_vec::<bool>()
            .unwrap(),
        vec![false; 5]
    );
    assert_eq!(a.sum(1, false).unwrap().shape(), &[0]);
    let b = lazulite::zeros(&[5, 0], DType::Int32).unwrap();
    assert_eq!(
        b.sum(1, false).unwrap().to_vec::<i32>().unwrap(),
        vec![0; 5]
    );
    assert!(lazulite::max(&b, 1, false).is_err());
    assert!(lazulite::argmax(&b, Some(1), false).is_err());
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let data = values(600 * 500, 8);
    let run = |threads: usize| -> Vec<Vec<u8>> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut outs = Vec::new();
            for dtype in [DType::Float32, DType::Int32, DType::Float16] {
                let a = contiguous(&data, &[600, 500], dtype);
                let flat = contiguous(&data, &[600 * 500], dtype);
                for axes in [Axes::from(0), Axes::from(1), Axes::All] {
                    outs.push(lazulite::sum(&a, axes.clone(), false).unwrap());
                    outs.push(lazulite::max(&a, axes.clone(), false).unwrap());
                    outs.push(lazulite::mean(&a, axes, false).unwrap());
                }
                outs.push(lazulite::sum(&flat, Axes::All, false).unwrap());
                for axis in [0, 1] {
                    outs.push(lazulite::argmax(&a, Some(axis), false).unwrap());
                }
                outs.push(lazulite::argmin(&flat, None, false).unwrap());
            }
            outs.iter()
                .map(|o| {
                    let bits = astype(o, DType::Float64).unwrap().to_vec::<f64>().unwrap();
                    bits.iter()
                        .flat_map(|v| v.to_bits().to_le_bytes())
                        .collect()
                })
                .collect()
        })
    };
    assert_eq!(run(1), run(2));
}

#[test]
fn float_sort_puts_nan_last_and_keeps_values() {
    let mut data = values(ABOVE_THREADING, 9);
    data[3] = f32::NAN;
    data[10] = f32::INFINITY;
    data[11] = f32::NEG_INFINITY;
    data[12] = -0.0;
    data[13] = f32::NAN;
    for dtype in [DType::Float32, DType::Float64] {
        let a = contiguous(&data, &[data.len()], dtype);
        let sorted = as_f64(&lazulite::sort(&a, Some(0)).unwrap());
        let mut want: Vec<f64> = data.iter().map(|&v| v as f64).collect();
        want.sort_by(|a, b| {
            a.partial_cmp(b)
                .unwrap_or_else(|| a.is_nan().cmp(&b.is_nan()))
        });
        assert_eq!(sorted.len(), want.len());
        for (g, w) in sorted.iter().zip(&want) {
            assert!(g == w || (g.is_nan() && w.is_nan()), "{dtype}: {g} vs {w}");
        }
    }
    // Along a strided axis of a 2-d array.
    let a = Array::from_slice(&[3.0f64, f64::NAN, -1.0, 2.0, 0.5, -7.0], &[3, 2]).unwrap();
    let s = as_f64(&lazulite::sort(&a, Some(0)).unwrap());
    assert_eq!(&s[..4], &[-1.0, -7.0, 0.5, 2.0]);
    assert_eq!(s[4], 3.0);
    assert!(s[5].is_nan());
}
