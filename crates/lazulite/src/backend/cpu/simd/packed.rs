//! Dot products of a row of levels packed at 2, 4 or 8 bits into u32 words with a few f32
//! vectors: the inner loop of a quantized language model's decode step, which must keep
//! up with memory while it unpacks.
//!
//! A word holds `32 / BITS` consecutive levels, so level `j` of `LANES` adjacent words
//! belongs to `LANES` elements `32 / BITS` apart. Rather than unpack words into consecutive
//! floats (a shuffle per element), each vector is laid out once ([`lay_out`]) so that
//! element `j` of word `w` of a chunk of `LANES` words sits at position
//! `chunk * LANES * (32 / BITS) + j * LANES + w`: then one shift, mask and convert of a
//! vector of words gives `LANES` levels that multiply `LANES` consecutive values. The
//! levels of a chunk are unpacked once for all the vectors.

#[cfg(target_arch = "x86_64")]
use super::vector::Vector;

/// Most vectors one pass over a packed row serves.
pub const MAX_VECTORS: usize = 4;

/// Scales read past the last group's by the kernels (one vector's worth).
pub const SCALE_PADDING: usize = 16;

/// Independent accumulator chains per vector (hide the multiply-add latency).
const CHAINS: usize = 4;

/// Packed rows of one matrix with their group scales.
pub struct PackedRows<'a> {
    /// The rows' words, one row after another: each row whole chunks and whole groups.
    pub words: &'a [u32],
    /// Words per row.
    pub words_per_row: usize,
    /// One scale per group of `words_per_group` words, row after row, then at least
    /// [`SCALE_PADDING`] values of padding, which are read but do not count.
    pub scales: &'a [f32],
    /// Words per group of levels sharing a scale: a multiple or a divisor of `lanes`.
    pub words_per_group: usize,
}

/// The packed dot products of one instruction set.
#[derive(Copy, Clone)]
pub struct PackedDots {
    /// Words per chunk, the layout [`lay_out`] must prepare the vectors for.
    pub lanes: usize,
    /// `out[r * xs.len() + i] = row r . xs[i]`, the levels times their group's scale, for
    /// 1 to [`MAX_VECTORS`] laid-out vectors at `bits` 2, 4 or 8. One call serves many
    /// rows: what does not depend on the row is set up once. Panics on lengths that do
    /// not fit the rows (an engine bug).
    pub dots: fn(bits: usize, rows: &PackedRows<'_>, xs: &[&[f32]], out: &mut [f32]),
}

/// Writes `x` (whole chunks of `lanes` words of `32 / bits` values) into `out` in the
/// chunk layout of the module documentation.
pub fn lay_out(x: &[f32], bits: usize, lanes: usize, out: &mut [f32]) {
    let per = 32 / bits;
    let chunk = lanes * per;
    for (src, dst) in x.chunks_exact(chunk).zip(out.chunks_exact_mut(chunk)) {
        for w in 0..lanes {
            for j in 0..per {
                dst[j * lanes + w] = src[w * per + j];
            }
        }
    }
}

/// [`PackedDots::dots`] over the vector type `V`, for code compiled with its instruction set.
///
/// # Safety
/// The CPU must support `V`'s instruction set.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn dots<V: Vector>(
    bits: usize,
    rows: &PackedRows<'_>,
    xs: &[&[f32]],
    out: &mut [f32],
) {
    let (lanes, wpg, wpr) = (V::LANES, rows.words_per_group, rows.words_per_row);
    let count = rows.words.len() / wpr.max(1);
    assert!(
        matches!(bits, 2 | 4 | 8)
            && wpr > 0
            && rows.words.len() == count * wpr
            && wpr.is_multiple_of(lanes)
            && wpg > 0
            && wpr.is_multiple_of(wpg)
            && (wpg.is_multiple_of(lanes) || lanes.is_multiple_of(wpg))
            && rows.scales.len() >= count * (wpr / wpg) + SCALE_PADDING.max(lanes)
            && (1..=MAX_VECTORS).contains(&xs.len())
            && out.len() == count * xs.len()
            && xs.iter().all(|x| x.len() >= wpr * (32 / bits)),
        "packed rows and vectors do not fit"
    );
    macro_rules! with_vectors {
        ($bits:literal) => {
            match xs.len() {
                1 => rows_dots::<V, $bits, 1>(rows, xs, out),
                2 => rows_dots::<V, $bits, 2>(rows, xs, out),
                3 => rows_dots::<V, $bits, 3>(rows, xs, out),
                _ => rows_dots::<V, $bits, 4>(rows, xs, out),
            }
        };
    }
    match bits {
        2 => with_vectors!(2),
        4 => with_vectors!(4),
        _ => with_vectors!(8),
    }
}

/// Bytes ahead of the chunk being unpacked that are fetched into L1: the words stream
/// from memory, and a load that waits for one stalls the unpacking behind it. Not the
/// 4 KB into L2 of the other streaming kernels ([`super::prefetch_ahead`]): with that,
/// 4-bit rows of 4096 levels ran at a third of this speed (5 GB/s against 16).
const PREFETCH_BYTES: usize = 1024;

/// # Safety
/// As [`dots`], whose checks make every read below in bounds.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn rows_dots<V: Vector, const BITS: usize, const M: usize>(
    rows: &PackedRows<'_>,
    xs: &[&[f32]],
    out: &mut [f32],
) {
    let lanes = V::LANES;
    let (wpr, wpg) = (rows.words_per_row, rows.words_per_group);
    let (chunks, groups_per_row) = (wpr / lanes, wpr / wpg);
    let xs: [*const f32; M] = std::array::from_fn(|i| xs[i].as_ptr());
    let zero = V::splat(0.0);
    // When a chunk holds several groups, lane `l` takes the scale of group `l / wpg` of
    // the chunk's groups: the group of each lane, found once per call.
    let mut lane_group = [0u32; 16];
    if wpg < lanes {
        let (mut group, mut left) = (0, wpg);
        for g in lane_group.iter_mut() {
            if left == 0 {
                (group, left) = (group + 1, wpg);
            }
            *g = group;
            left -= 1;
        }
    }
    let lane_group = V::load_words(lane_group.as_ptr());
    for (r, out) in out.chunks_exact_mut(M).enumerate() {
        let words = rows.words.as_ptr().add(r * wpr);
        let scales = rows.scales.as_ptr().add(r * groups_per_row);
        let mut acc = [zero; M];
        if wpg >= lanes {
            // A group is whole chunks: one scale for all of their lanes.
            let chunks_per_group = wpg / lanes;
            for g in 0..chunks / chunks_per_group {
                let mut dots = [[zero; CHAINS]; M];
                for c in g * chunks_per_group..(g + 1) * chunks_per_group {
                    chunk::<V, BITS, M>(words, c, &xs, &mut dots);
                }
                let scale = V::splat(*scales.add(g));
                for (a, d) in acc.iter_mut().zip(&dots) {
                    *a = scale.mul_add(summed(d), *a);
                }
            }
        } else {
            let groups_per_chunk = lanes / wpg;
            for c in 0..chunks {
                let mut dots = [[zero; CHAINS]; M];
                chunk::<V, BITS, M>(words, c, &xs, &mut dots);
                let scales = V::load(scales.add(c * groups_per_chunk)).permute(lane_group);
                for (a, d) in acc.iter_mut().zip(&dots) {
                    *a = scales.mul_add(summed(d), *a);
                }
            }
        }
        for (o, a) in out.iter_mut().zip(acc) {
            *o = a.sum_lanes();
        }
    }
}

// The helpers below are functions, not closures: a closure does not inherit the target
// features of the function it is inlined into, and its intrinsics would become calls.

/// Adds the levels of chunk `c` of the row at `words` times the vectors' values to `dots`.
///
/// # Safety
/// As [`dots`]: chunk `c` and the vectors' matching values are in bounds.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn chunk<V: Vector, const BITS: usize, const M: usize>(
    words: *const u32,
    c: usize,
    xs: &[*const f32; M],
    dots: &mut [[V; CHAINS]; M],
) {
    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
    let (lanes, per) = (V::LANES, 32 / BITS);
    let at = words.add(c * lanes);
    // A prefetch never faults, so the address may lie past the matrix.
    _mm_prefetch::<_MM_HINT_T0>(at.cast::<i8>().wrapping_add(PREFETCH_BYTES));
    let words = V::load_words(at);
    for j in 0..per {
        let levels = V::levels(words, (j * BITS) as u32, BITS as u32);
        for (d, x) in dots.iter_mut().zip(xs) {
            let x = V::load(x.add((c * per + j) * lanes));
            d[j % CHAINS] = levels.mul_add(x, d[j % CHAINS]);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn summed<V: Vector>(d: &[V; CHAINS]) -> V {
    (d[0] + d[1]) + (d[2] + d[3])
}
