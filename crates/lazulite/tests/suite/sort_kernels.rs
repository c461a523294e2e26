//! The sort kernels' paths (short lines, radix and vectorised sorts, a long line split
//! across threads, many lines spread over threads) against a reference: a stable sort of
//! the positions by MLX's order (NaN last, `-0.0` equal to `0.0`, complex numbers by real
//! then imaginary part), which is NumPy's `argsort(kind="stable")`. Every dtype; lengths
//! around the kernels' thresholds; all-equal, sorted, reversed and special-value lines;
//! transposed, strided and reversed inputs; batches of rows along either axis.

use lazulite::{argpartition, argsort, astype, partition, slice, sort, transpose};
use lazulite::{Array, Complex, DType};
use std::cmp::Ordering;

fn is_float(dtype: DType) -> bool {
    matches!(
        dtype,
        DType::Float16 | DType::BFloat16 | DType::Float32 | DType::Float64
    )
}

/// Lines of these shapes: random (many repeats), all equal, sorted, reversed.
#[derive(Copy, Clone, Debug)]
enum Pattern {
    Random,
    Equal,
    Sorted,
    Reversed,
}

/// `n` values for `dtype` (exact in it) from a fixed-seed generator; floats include
/// NaN, infinities and both zeros.
fn values(n: usize, dtype: DType, pattern: Pattern, seed: u64) -> Vec<f64> {
    let mut state = seed;
    let specials = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.0];
    let mut v: Vec<f64> = (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let r = state >> 33;
            match dtype {
                DType::Bool => (r % 2) as f64,
                DType::UInt8 | DType::UInt16 | DType::UInt32 | DType::UInt64 => (r % 200) as f64,
                DType::Int8 => (r % 200) as f64 - 100.0,
                DType::Int16 | DType::Int32 | DType::Int64 => (r % 60_000) as f64 - 30_000.0,
                _ if r.is_multiple_of(10) => specials[(r / 10 % 5) as usize],
                _ => ((r % 4000) as f64 - 2000.0) / 8.0,
            }
        })
        .collect();
    let total = |a: &f64, b: &f64| order(*a, *b);
    match pattern {
        Pattern::Random => {}
        Pattern::Equal => v.iter_mut().for_each(|x| *x = 3.0),
        Pattern::Sorted => v.sort_by(total),
        Pattern::Reversed => {
            v.sort_by(total);
            v.reverse();
        }
    }
    v
}

fn order(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b)
        .unwrap_or_else(|| a.is_nan().cmp(&b.is_nan()))
}

fn complex_order(a: Complex, b: Complex) -> Ordering {
    let nan = |z: Complex| z.re.is_nan() || z.im.is_nan();
    match (nan(a), nan(b)) {
        (false, false) => order(a.re as f64, b.re as f64).then(order(a.im as f64, b.im as f64)),
        (x, y) => x.cmp(&y),
    }
}

/// The stable sorting permutation of every line along `axis` (as the argsort output).
fn reference_argsort<T: Copy>(
    data: &[T],
    shape: &[usize],
    axis: usize,
    cmp: impl Fn(T, T) -> Ordering,
) -> Vec<u32> {
    let n = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let outer: usize = shape[..axis].iter().product();
    let mut out = vec![0u32; data.len()];
    for o in 0..outer {
        for r in 0..inner {
            let at = |i: usize| (o * n + i) * inner + r;
            let mut positions: Vec<usize> = (0..n).collect();
            positions.sort_by(|&i, &j| cmp(data[at(i)], data[at(j)]));
            for (k, &p) in positions.iter().enumerate() {
                out[at(k)] = p as u32;
            }
        }
    }
    out
}

/// Checks sort, argsort, partition and argpartition of `x` along `axis`.
fn check(x: &Array, axis: usize, context: &str) {
    let shape = x.shape().to_vec();
    let dtype = x.dtype();
    let a = axis as i32;
    let indices = argsort(x, Some(a)).unwrap().to_vec::<u32>().unwrap();
    let n = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let source = |k: usize, index: u32| {
        let (line_start, r) = (k / (n * inner) * n * inner, k % inner);
        line_start + index as usize * inner + r
    };
    let sorted = sort(x, Some(a)).unwrap();
    if dtype == DType::Complex64 {
        let data = x.to_vec::<Complex>().unwrap();
        let expected = reference_argsort(&data, &shape, axis, complex_order);
        assert_eq!(indices, expected, "{context}: argsort");
        let got = sorted.to_vec::<Complex>().unwrap();
        for (k, (z, &i)) in got.iter().zip(&expected).enumerate() {
            let want = data[source(k, i)];
            assert_eq!(
                (z.re.to_bits(), z.im.to_bits()),
                (want.re.to_bits(), want.im.to_bits()),
                "{context}: sort at {k}"
            );
        }
        return;
    }
    let data = x.to_vec::<f64>().unwrap();
    let expected = reference_argsort(&data, &shape, axis, order);
    assert_eq!(indices, expected, "{context}: argsort");
    let got = sorted.to_vec::<f64>().unwrap();
    for (k, (&v, &i)) in got.iter().zip(&expected).enumerate() {
        let want = data[source(k, i)];
        assert!(
            order(v, want) == Ordering::Equal,
            "{context}: sort at {k}: {v} != {want}"
        );
        // Among equal zeros, -0.0 comes first.
        if is_float(dtype) && k % (n * inner) >= inner && v == 0.0 {
            let before = got[k - inner];
            assert!(
                !(before == 0.0 && before.is_sign_positive() && v.is_sign_negative()),
                "{context}: -0.0 after 0.0 at {k}"
            );
        }
    }
    let kth = n / 3;
    let parted = partition(x, kth as i64, Some(a))
        .unwrap()
        .to_vec::<f64>()
        .unwrap();
    let parted_indices = argpartition(x, kth as i64, Some(a))
        .unwrap()
        .to_vec::<u32>()
        .unwrap();
    for line_start in (0..data.len()).step_by(n * inner) {
        for r in 0..inner {
            let at = |i: usize| line_start + i * inner + r;
            let pivot = got[at(kth)];
            for i in 0..n {
                let expected_side = if i < kth {
                    Ordering::Greater
                } else {
                    Ordering::Less
                };
                assert_ne!(
                    order(parted[at(i)], pivot),
                    expected_side,
                    "{context}: partition"
                );
                let from = data[at(parted_indices[at(i)] as usize)];
                assert_eq!(
                    order(from, parted[at(i)]),
                    Ordering::Equal,
                    "{context}: argpartition"
                );
            }
            assert_eq!(
                order(parted[at(kth)], pivot),
                Ordering::Equal,
                "{context}: kth"
            );
        }
    }
}

fn array(v: &[f64], shape: &[usize], dtype: DType) -> Array {
    astype(&Array::from_slice(v, shape).unwrap(), dtype).unwrap()
}

#[test]
fn lines_of_every_length_dtype_and_pattern() {
    let lengths = [
        1, 2, 15, 16, 17, 64, 65, 127, 128, 129, 255, 256, 257, 1000, 4097,
    ];
    for dtype in DType::ALL.into_iter().filter(|d| !d.is_complex()) {
        for n in lengths {
            for pattern in [
                Pattern::Random,
                Pattern::Equal,
                Pattern::Sorted,
                Pattern::Reversed,
            ] {
                let x = array(&values(n, dtype, pattern, n as u64), &[n], dtype);
                check(&x, 0, &format!("{dtype:?} n={n} {pattern:?}"));
            }
        }
    }
}

#[test]
fn long_lines_split_across_threads() {
    let n = 140_000;
    for dtype in [
        DType::UInt8,
        DType::Int16,
        DType::Int32,
        DType::UInt64,
        DType::Float16,
        DType::Float32,
        DType::Float64,
    ] {
        for pattern in [Pattern::Random, Pattern::Sorted, Pattern::Equal] {
            let x = array(&values(n, dtype, pattern, 7), &[n], dtype);
            check(&x, 0, &format!("{dtype:?} n={n} {pattern:?}"));
        }
    }
}

#[test]
fn complex_lines() {
    for n in [1, 17, 300, 140_000] {
        let re = values(n, DType::Float32, Pattern::Random, 3);
        let im = values(n, DType::Float32, Pattern::Random, 4);
        let z: Vec<Complex> = re
            .iter()
            .zip(&im)
            .map(|(&r, &i)| Complex {
                re: (r / 100.0).round() as f32,
                im: i as f32,
            })
            .collect();
        let x = Array::from_slice(&z, &[n]).unwrap();
        check(&x, 0, &format!("complex n={n}"));
    }
}

#[test]
fn batches_along_either_axis() {
    for dtype in [DType::Float32, DType::Int64, DType::BFloat16, DType::UInt8] {
        for shape in [[300usize, 7], [3, 50_000], [20_000, 10]] {
            let size = shape[0] * shape[1];
            let x = array(&values(size, dtype, Pattern::Random, 11), &shape, dtype);
            for axis in [0, 1] {
                check(&x, axis, &format!("{dtype:?} {shape:?} axis {axis}"));
            }
        }
    }
}

#[test]
fn strided_transposed_and_reversed_inputs() {
    for dtype in [DType::Float32, DType::Float64, DType::Int32, DType::Float16] {
        let v = values(2 * 3000, dtype, Pattern::Random, 5);
        let base = array(&v, &[3000, 2], dtype);
        let transposed = transpose(&base, &[1, 0]).unwrap();
        check(&transposed, 1, &format!("{dtype:?} transposed"));
        let flat = array(&v, &[6000], dtype);
        let every_other = slice(&flat, &[1], &[6000], &[2]).unwrap();
        check(&every_other, 0, &format!("{dtype:?} step 2"));
        let reversed = slice(&flat, &[-1], &[-6001], &[-1]).unwrap();
        check(&reversed, 0, &format!("{dtype:?} reversed"));
    }
}

#[test]
fn float_sorts_keep_negative_zero_first_and_nan_last() {
    let x = Array::from_slice(
        &[0.0f32, f32::NAN, -0.0, 1.0, -0.0, 0.0, -f32::INFINITY],
        &[7],
    )
    .unwrap();
    let s = sort(&x, Some(0)).unwrap().to_vec::<f32>().unwrap();
    let bits: Vec<u32> = s.iter().map(|v| v.to_bits()).collect();
    let want = [f32::NEG_INFINITY, -0.0, -0.0, 0.0, 0.0, 1.0];
    let want_bits: Vec<u32> = want.iter().map(|v| v.to_bits()).collect();
    assert_eq!(bits[..6], want_bits);
    assert!(s[6].is_nan());
    let i = argsort(&x, Some(0)).unwrap().to_vec::<u32>().unwrap();
    assert_eq!(i, [6, 0, 2, 4, 5, 3, 1]);
}
