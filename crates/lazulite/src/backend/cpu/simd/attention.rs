//! The two products of attention over a cache of keys and values for a few query rows:
//! each key's dot product with each query (the scores), and the sum of the value rows
//! weighted by each query's weights. Keys and values are rows of float32, float16 or
//! bfloat16 at a stride (a cache's slice), widened in registers and read once for up to
//! [`MAX_VECTORS`](super::MAX_VECTORS) queries.
//!
//! A decode step's attention reads its whole cache: these loops keep the queries' sums in
//! registers instead of calling a dot product per key and adding each value row into
//! memory, which ran at a fifth of the memory's speed over a long cache.

use super::strided_rows::{RowElements, StridedRows};
#[cfg(target_arch = "x86_64")]
use super::vector::Vector;

/// `out[i * rows.count + j] = rows[j] . queries[i]`, accumulated in f32, for 1 to
/// [`MAX_VECTORS`](super::MAX_VECTORS) queries of at least `rows.width` values. Panics on operands that do not
/// fit (an engine bug).
pub type ScoresFn = fn(rows: &StridedRows<'_>, queries: &[&[f32]], out: &mut [f32]);

/// `out[i * rows.width + d] = sum over j of weights[i][j] * rows[j][d]`, accumulated in
/// f32, for 1 to [`MAX_VECTORS`](super::MAX_VECTORS) weight rows of `rows.count` values. Panics on operands
/// that do not fit (an engine bug).
pub type WeightedSumFn = fn(rows: &StridedRows<'_>, weights: &[&[f32]], out: &mut [f32]);

/// The attention products of one instruction set (see `simd::attention_products`).
#[derive(Copy, Clone)]
pub struct AttentionProducts {
    /// See [`ScoresFn`].
    pub scores: ScoresFn,
    /// See [`WeightedSumFn`].
    pub weighted_sum: WeightedSumFn,
}

/// Runs `$body` with `$value` a closure reading element `e` of the rows' data as f32.
macro_rules! with_values {
    ($data:expr, $value:ident => $body:expr) => {
        match $data {
            RowElements::Float32(d) => {
                let $value = |e: usize| d[e];
                $body
            }
            RowElements::Float16(d) => {
                let $value = |e: usize| half::f16::from_bits(d[e]).to_f32();
                $body
            }
            RowElements::BFloat16(d) => {
                let $value = |e: usize| half::bf16::from_bits(d[e]).to_f32();
                $body
            }
        }
    };
}

/// The portable [`ScoresFn`].
pub(super) fn scores_portable(rows: &StridedRows<'_>, queries: &[&[f32]], out: &mut [f32]) {
    rows.check(queries, rows.width, out, rows.count);
    with_values!(rows.data, value => scores_of(value, rows, queries, out));
}

/// [`scores_portable`] with element `e` of the rows' data read by `value`.
fn scores_of(
    value: impl Fn(usize) -> f32,
    rows: &StridedRows<'_>,
    queries: &[&[f32]],
    out: &mut [f32],
) {
    let count = rows.count;
    for j in 0..count {
        let start = j * rows.stride;
        for (i, query) in queries.iter().enumerate() {
            out[i * count + j] = (query[..rows.width].iter().enumerate())
                .fold(0.0f32, |s, (d, &q)| value(start + d).mul_add(q, s));
        }
    }
}

/// The portable [`WeightedSumFn`].
pub(super) fn weighted_sum_portable(rows: &StridedRows<'_>, weights: &[&[f32]], out: &mut [f32]) {
    rows.check(weights, rows.count, out, rows.width);
    with_values!(rows.data, value => weighted_sum_of(value, rows, weights, out));
}

/// [`weighted_sum_portable`] with element `e` of the rows' data read by `value`.
fn weighted_sum_of(
    value: impl Fn(usize) -> f32,
    rows: &StridedRows<'_>,
    weights: &[&[f32]],
    out: &mut [f32],
) {
    out.fill(0.0);
    for j in 0..rows.count {
        let start = j * rows.stride;
        for (w, sums) in weights.iter().zip(out.chunks_exact_mut(rows.width.max(1))) {
            for (d, sum) in sums.iter_mut().enumerate() {
                *sum = w[j].mul_add(value(start + d), *sum);
            }
        }
    }
}

/// How a vector path reads a row's elements as f32 lanes.
#[cfg(target_arch = "x86_64")]
trait Lanes: Copy {
    /// `V::LANES` elements from `ptr`, widened.
    ///
    /// # Safety
    /// `ptr` valid for reading `V::LANES` elements; the CPU supports the loads.
    unsafe fn load<V: Vector>(ptr: *const Self) -> V;
    fn widen(self) -> f32;
}

#[cfg(target_arch = "x86_64")]
impl Lanes for f32 {
    #[inline(always)]
    unsafe fn load<V: Vector>(ptr: *const f32) -> V {
        V::load(ptr)
    }
    #[inline(always)]
    fn widen(self) -> f32 {
        self
    }
}

/// float16 bits.
#[cfg(target_arch = "x86_64")]
#[derive(Copy, Clone)]
#[repr(transparent)]
struct F16Bits(u16);

/// bfloat16 bits.
#[cfg(target_arch = "x86_64")]
#[derive(Copy, Clone)]
#[repr(transparent)]
struct Bf16Bits(u16);

#[cfg(target_arch = "x86_64")]
impl Lanes for F16Bits {
    #[inline(always)]
    unsafe fn load<V: Vector>(ptr: *const F16Bits) -> V {
        V::load_f16(ptr.cast())
    }
    #[inline(always)]
    fn widen(self) -> f32 {
        half::f16::from_bits(self.0).to_f32()
    }
}

#[cfg(target_arch = "x86_64")]
impl Lanes for Bf16Bits {
    #[inline(always)]
    unsafe fn load<V: Vector>(ptr: *const Bf16Bits) -> V {
        V::load_bf16(ptr.cast())
    }
    #[inline(always)]
    fn widen(self) -> f32 {
        f32::from_bits(u32::from(self.0) << 16)
    }
}

/// Dispatches on the rows' element type and the number of vectors, to `$kernel::<V, E,
/// M, extra...>(rows pointer, rows, vectors, out)`.
#[cfg(target_arch = "x86_64")]
macro_rules! dispatch {
    ($kernel:ident::<$v:ty $(, $extra:ident)*>($rows:expr, $vectors:expr, $out:expr)) => {{
        let (rows, vectors, out) = ($rows, $vectors, $out);
        macro_rules! with_vectors {
            ($e:ty, $data:expr) => {{
                let data = $data.as_ptr().cast::<$e>();
                match vectors.len() {
                    1 => $kernel::<$v, $e, 1 $(, $extra)*>(data, rows, vectors, out),
                    2 => $kernel::<$v, $e, 2 $(, $extra)*>(data, rows, vectors, out),
                    3 => $kernel::<$v, $e, 3 $(, $extra)*>(data, rows, vectors, out),
                    _ => $kernel::<$v, $e, 4 $(, $extra)*>(data, rows, vectors, out),
                }
            }};
        }
        match rows.data {
            RowElements::Float32(d) => with_vectors!(f32, d),
            RowElements::Float16(d) => with_vectors!(F16Bits, d),
            RowElements::BFloat16(d) => with_vectors!(Bf16Bits, d),
        }
    }};
}

/// [`ScoresFn`] over the vector type `V`, for code compiled with its instruction set.
///
/// # Safety
/// The CPU supports `V`'s instruction set, and F16C on the AVX2 path.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn scores<V: Vector>(
    rows: &StridedRows<'_>,
    queries: &[&[f32]],
    out: &mut [f32],
) {
    rows.check(queries, rows.width, out, rows.count);
    dispatch!(row_scores::<V>(rows, queries, out))
}

/// # Safety
/// As [`scores`], whose checks make every read below in bounds; `data` is the rows' data.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn row_scores<V: Vector, E: Lanes, const M: usize>(
    data: *const E,
    rows: &StridedRows<'_>,
    queries: &[&[f32]],
    out: &mut [f32],
) {
    let StridedRows {
        count,
        width,
        stride,
        ..
    } = *rows;
    let lanes = V::LANES;
    let queries: [*const f32; M] = std::array::from_fn(|i| queries[i].as_ptr());
    // `LANES` keys at a time, their lanes summed together.
    let whole = count / lanes * lanes;
    let mut block = [[V::splat(0.0); MAX_LANES]; M];
    for first in (0..whole).step_by(lanes) {
        for k in 0..lanes {
            let sums = key_products::<V, E, M>(data.add((first + k) * stride), width, &queries);
            for (b, s) in block.iter_mut().zip(sums) {
                b[k] = s;
            }
        }
        for (i, b) in block.iter().enumerate() {
            V::lane_sums(&b[..lanes]).store(out[i * count + first..].as_mut_ptr());
        }
    }
    for j in whole..count {
        let sums = key_products::<V, E, M>(data.add(j * stride), width, &queries);
        for (i, s) in sums.iter().enumerate() {
            out[i * count + j] = s.sum_lanes();
        }
    }
    // The columns past the last whole vector.
    for j in 0..count {
        let row = data.add(j * stride);
        for (i, q) in queries.iter().enumerate() {
            for d in width / lanes * lanes..width {
                out[i * count + j] = (*row.add(d)).widen().mul_add(*q.add(d), out[i * count + j]);
            }
        }
    }
}

/// The most lanes of a vector type.
#[cfg(target_arch = "x86_64")]
const MAX_LANES: usize = 16;

/// The products of `row` with each query over the columns of whole vectors, lane by lane.
///
/// # Safety
/// As [`row_scores`]: `row` and the queries valid for reading `width` values.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn key_products<V: Vector, E: Lanes, const M: usize>(
    row: *const E,
    width: usize,
    queries: &[*const f32; M],
) -> [V; M] {
    super::prefetch_ahead(row, super::Ahead::Far);
    let mut sums = [V::splat(0.0); M];
    let mut d = 0;
    while d + V::LANES <= width {
        let k = E::load::<V>(row.add(d));
        for (s, q) in sums.iter_mut().zip(queries) {
            *s = k.mul_add(V::load(q.add(d)), *s);
        }
        d += V::LANES;
    }
    sums
}

/// [`WeightedSumFn`] over the vector type `V`, for code compiled with its instruction set;
/// `TILE` vectors of each weight row's sums stay in registers while the rows pass.
///
/// # Safety
/// The CPU supports `V`'s instruction set, and F16C on the AVX2 path.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn weighted_sum<V: Vector, const TILE: usize>(
    rows: &StridedRows<'_>,
    weights: &[&[f32]],
    out: &mut [f32],
) {
    rows.check(weights, rows.count, out, rows.width);
    dispatch!(weighted_rows::<V, TILE>(rows, weights, out))
}

/// Every column of the sums: tiles of `TILE` vectors, then single vectors, then the
/// columns past the last whole vector one at a time.
///
/// # Safety
/// As [`weighted_sum`], whose checks make every read below in bounds; `data` is the rows'
/// data.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn weighted_rows<V: Vector, E: Lanes, const M: usize, const TILE: usize>(
    data: *const E,
    rows: &StridedRows<'_>,
    weights: &[&[f32]],
    out: &mut [f32],
) {
    let (lanes, width) = (V::LANES, rows.width);
    let weights: [*const f32; M] = std::array::from_fn(|i| weights[i].as_ptr());
    let mut column = 0;
    while column + TILE * lanes <= width {
        weighted_tile::<V, E, M, TILE>(data, rows, &weights, column, out);
        column += TILE * lanes;
    }
    while column + lanes <= width {
        weighted_tile::<V, E, M, 1>(data, rows, &weights, column, out);
        column += lanes;
    }
    for d in column..width {
        for (i, w) in weights.iter().enumerate() {
            let sum = (0..rows.count).fold(0.0f32, |s, j| {
                (*w.add(j)).mul_add((*data.add(j * rows.stride + d)).widen(), s)
            });
            out[i * width + d] = sum;
        }
    }
}

/// Columns `column ..` (`T` vectors) of the sums, over every row.
///
/// # Safety
/// As [`weighted_rows`]; the tile's columns lie inside the rows.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn weighted_tile<V: Vector, E: Lanes, const M: usize, const T: usize>(
    data: *const E,
    rows: &StridedRows<'_>,
    weights: &[*const f32; M],
    column: usize,
    out: &mut [f32],
) {
    let lanes = V::LANES;
    let mut sums = [[V::splat(0.0); T]; M];
    for j in 0..rows.count {
        let row = data.add(j * rows.stride + column);
        super::prefetch_ahead(row, super::Ahead::Far);
        for t in 0..T {
            let v = E::load::<V>(row.add(t * lanes));
            for (s, w) in sums.iter_mut().zip(weights) {
                s[t] = v.mul_add(V::splat(*w.add(j)), s[t]);
            }
        }
    }
    for (i, s) in sums.iter().enumerate() {
        for (t, v) in s.iter().enumerate() {
            v.store(out[i * rows.width + column + t * lanes..].as_mut_ptr());
        }
    }
}
