//! f32 reductions written over the lane types: the sum (accumulated in f64), the
//! NaN-propagating max and min, of a run and of rows added into a row of accumulators, and
//! the dot product of two runs.
//!
//! `backend::cpu::reduce` has generic folds for every dtype, written with independent
//! accumulators for LLVM to vectorise; whether it did depended on inlining choices that
//! differed between builds of the same code (measured: the Python extension ran max as
//! scalar `vmaxss` over lanes on the stack, 5.7 ms for 10M values against NumPy's 3.2).
//! These kernels are vector code whatever LLVM decides.

use super::vector::{Mask, Vector, Wide};

/// Vectors in flight per step: enough independent additions to cover their latency.
const UNROLL: usize = 4;

/// The sum of `data` in f64.
///
/// # Safety
/// The CPU must support `V`'s instructions.
#[inline(always)]
pub(super) unsafe fn sum<V: Vector>(data: &[f32]) -> f64 {
    let mut acc = [V::Wide::splat(0.0); 2 * UNROLL];
    let mut chunks = data.chunks_exact(V::LANES * UNROLL);
    for chunk in &mut chunks {
        for u in 0..UNROLL {
            let (lo, hi) = V::load(chunk.as_ptr().add(u * V::LANES)).widen();
            acc[2 * u] = acc[2 * u] + lo;
            acc[2 * u + 1] = acc[2 * u + 1] + hi;
        }
    }
    let vectors = acc.into_iter().fold(V::Wide::splat(0.0), |s, a| s + a);
    chunks
        .remainder()
        .iter()
        .fold(vectors.sum(), |s, &v| s + v as f64)
}

/// The dot product of `a` and `b` over the shorter length, accumulated in f32.
///
/// # Safety
/// The CPU must support `V`'s instructions.
#[inline(always)]
pub(super) unsafe fn dot<V: Vector>(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (a.as_ptr(), b.as_ptr());
    let mut acc = [V::splat(0.0); UNROLL];
    let mut i = 0;
    while i + V::LANES * UNROLL <= n {
        for (u, acc) in acc.iter_mut().enumerate() {
            let p = i + u * V::LANES;
            // `b` is the operand a product streams (a row of weights).
            super::prefetch_ahead(b.add(p), super::Ahead::Far);
            *acc = V::load(a.add(p)).mul_add(V::load(b.add(p)), *acc);
        }
        i += V::LANES * UNROLL;
    }
    let mut vectors = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    while i + V::LANES <= n {
        vectors = V::load(a.add(i)).mul_add(V::load(b.add(i)), vectors);
        i += V::LANES;
    }
    let mut total = vectors.sum_lanes();
    while i < n {
        total = (*a.add(i)).mul_add(*b.add(i), total);
        i += 1;
    }
    total
}

/// The largest (`MAX`) or smallest value of `data`: NaN if any value is NaN, -inf (+inf)
/// for an empty slice.
///
/// # Safety
/// The CPU must support `V`'s instructions.
#[inline(always)]
pub(super) unsafe fn extreme<V: Vector, const MAX: bool>(data: &[f32]) -> f32 {
    let identity = if MAX {
        f32::NEG_INFINITY
    } else {
        f32::INFINITY
    };
    let mut acc = [V::splat(identity); UNROLL];
    let mut nan = V::splat(0.0).is_nan();
    let mut chunks = data.chunks_exact(V::LANES * UNROLL);
    for chunk in &mut chunks {
        for (u, a) in acc.iter_mut().enumerate() {
            let v = V::load(chunk.as_ptr().add(u * V::LANES));
            // NaN lanes of `v` leave `a` as it is; `nan` remembers them.
            *a = if MAX { v.max(*a) } else { v.min(*a) };
            nan = nan | v.is_nan();
        }
    }
    if nan.any() {
        return f32::NAN;
    }
    let pick = |a: f32, b: f32| {
        if b.is_nan() | if MAX { b > a } else { b < a } {
            b
        } else {
            a
        }
    };
    const { assert!(V::LANES <= 16, "a vector wider than the lane buffer") };
    let mut lanes = [0.0f32; 16];
    let mut best = identity;
    for a in acc {
        a.store(lanes.as_mut_ptr());
        best = lanes[..V::LANES].iter().fold(best, |b, &v| pick(b, v));
    }
    chunks.remainder().iter().fold(best, |b, &v| pick(b, v))
}

/// `acc[i] += row[i]` in f64, for `acc.len()` values (`row` at least as long).
///
/// # Safety
/// The CPU must support `V`'s instructions.
#[inline(always)]
pub(super) unsafe fn add_row<V: Vector>(acc: &mut [f64], row: &[f32]) {
    let n = acc.len();
    assert!(row.len() >= n, "row shorter than its accumulators");
    let half = V::LANES / 2;
    let (a, r) = (acc.as_mut_ptr(), row.as_ptr());
    let mut i = 0;
    while i + V::LANES <= n {
        let (lo, hi) = V::load(r.add(i)).widen();
        (V::Wide::load(a.add(i)) + lo).store(a.add(i));
        (V::Wide::load(a.add(i + half)) + hi).store(a.add(i + half));
        i += V::LANES;
    }
    for j in i..n {
        *a.add(j) += *r.add(j) as f64;
    }
}

/// `acc[i] = max(acc[i], row[i])` (`MAX`) or the min, a NaN on either side winning, for
/// `acc.len()` values (`row` at least as long).
///
/// # Safety
/// The CPU must support `V`'s instructions.
#[inline(always)]
pub(super) unsafe fn extreme_row<V: Vector, const MAX: bool>(acc: &mut [f32], row: &[f32]) {
    let n = acc.len();
    assert!(row.len() >= n, "row shorter than its accumulators");
    let (a, r) = (acc.as_mut_ptr(), row.as_ptr());
    let mut i = 0;
    while i + V::LANES <= n {
        let (best, v) = (V::load(a.add(i)), V::load(r.add(i)));
        // `max`/`min` keep `best` on a tie or a NaN on either side, so a NaN in `best`
        // stays; a NaN in `v` is put back after. Not a select between `v` and `best`:
        // LLVM stores that as a masked store, which AMD's cores run about 4x slower (a
        // float32 max over the rows of 4096 x 4096 read 8 GB/s so, against 14 for its sum).
        let better = if MAX { v.max(best) } else { v.min(best) };
        V::select(v.is_nan(), v, better).store(a.add(i));
        i += V::LANES;
    }
    for j in i..n {
        let (best, v) = (*a.add(j), *r.add(j));
        if v.is_nan() | if MAX { v > best } else { v < best } {
            *a.add(j) = v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{folds_of, Isa};

    /// Deterministic values in [-1000, 1000) with fractional parts.
    fn values(n: usize, seed: u64) -> Vec<f32> {
        let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..n)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state % 2_000_000) as f32 / 1000.0 - 1000.0
            })
            .collect()
    }

    /// The rule of `backend::cpu::reduce`: a NaN wins, otherwise the strictly better value.
    fn pick(max: bool) -> impl Fn(f32, f32) -> f32 {
        move |a, b| {
            if b.is_nan() || (!a.is_nan() && if max { b > a } else { b < a }) {
                b
            } else {
                a
            }
        }
    }

    fn vector_paths() -> Vec<Isa> {
        [Isa::Avx2, Isa::Avx512]
            .into_iter()
            .filter(|&isa| folds_of(isa).is_some())
            .collect()
    }

    #[test]
    fn runs_match_a_scalar_loop() {
        let lengths = (0..150).chain([1000, 16_384, 16_391]);
        for isa in vector_paths() {
            let f = folds_of(isa).unwrap();
            for n in lengths.clone() {
                let data = values(n, n as u64);
                let exact: f64 = data.iter().map(|&v| v as f64).sum();
                let scale: f64 = data.iter().map(|&v| (v as f64).abs()).sum();
                let sum = (f.sum)(&data);
                assert!((sum - exact).abs() <= 1e-12 * scale, "{isa:?} sum of {n}");
                let max = data.iter().copied().fold(f32::NEG_INFINITY, pick(true));
                let min = data.iter().copied().fold(f32::INFINITY, pick(false));
                assert_eq!((f.max)(&data), max, "{isa:?} max of {n}");
                assert_eq!((f.min)(&data), min, "{isa:?} min of {n}");
                let other = values(n + 3, 7 * n as u64 + 1);
                let exact: f64 = data
                    .iter()
                    .zip(&other)
                    .map(|(&a, &b)| a as f64 * b as f64)
                    .sum();
                let scale: f64 = data
                    .iter()
                    .zip(&other)
                    .map(|(&a, &b)| (a * b).abs() as f64)
                    .sum();
                let dot = (f.dot)(&data, &other) as f64;
                assert!((dot - exact).abs() <= 1e-5 * scale, "{isa:?} dot of {n}");
            }
        }
    }

    #[test]
    fn a_nan_anywhere_wins_and_infinities_count() {
        for isa in vector_paths() {
            let f = folds_of(isa).unwrap();
            for at in 0..75 {
                let mut data = values(75, 3);
                data[at] = f32::NAN;
                assert!((f.max)(&data).is_nan(), "{isa:?} NaN at {at}");
                assert!((f.min)(&data).is_nan(), "{isa:?} NaN at {at}");
                assert!((f.sum)(&data).is_nan(), "{isa:?} NaN at {at}");
            }
            let mut data = vec![f32::NEG_INFINITY; 70];
            assert_eq!((f.max)(&data), f32::NEG_INFINITY);
            data[69] = f32::INFINITY;
            assert_eq!((f.max)(&data), f32::INFINITY);
            assert_eq!((f.min)(&data), f32::NEG_INFINITY);
            assert_eq!((f.max)(&[]), f32::NEG_INFINITY);
            assert_eq!((f.min)(&[]), f32::INFINITY);
            assert_eq!((f.sum)(&[]), 0.0);
        }
    }

    #[test]
    fn rows_merge_into_accumulators() {
        for isa in vector_paths() {
            let f = folds_of(isa).unwrap();
            for n in [0, 1, 7, 8, 15, 16, 17, 33, 100] {
                // The row is longer than the accumulators: only the first n are read.
                let mut row = values(n + 3, 11);
                let start: Vec<f64> = values(n, 12).iter().map(|&v| v as f64 / 3.0).collect();
                let mut acc = start.clone();
                (f.add_row)(&mut acc, &row);
                for i in 0..n {
                    assert_eq!(
                        acc[i],
                        start[i] + row[i] as f64,
                        "{isa:?} add_row {n} at {i}"
                    );
                }

                if n > 2 {
                    row[1] = f32::NAN;
                }
                let mut best = values(n, 13);
                if n > 2 {
                    best[2] = f32::NAN;
                }
                for (max, merge) in [(true, f.max_row), (false, f.min_row)] {
                    let mut acc = best.clone();
                    merge(&mut acc, &row);
                    for i in 0..n {
                        let expected = pick(max)(best[i], row[i]);
                        assert_eq!(
                            acc[i].to_bits(),
                            expected.to_bits(),
                            "{isa:?} max={max} row of {n} at {i}"
                        );
                    }
                }
            }
        }
    }
}
