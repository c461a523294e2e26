//! Dot products with bfloat16 vectors by AVX-512 BF16's pair product (`vdpbf16ps`), which
//! multiplies 32 pairs of bfloat16 values and adds them into 16 f32 lanes: the decode step
//! of a bfloat16 model, its weights bfloat16 or quantized at 2, 4 or 8 bits with bfloat16
//! scales and biases. The float32 paths ([`super::packed`], [`super::halves`]) widen every
//! weight and multiply it with a separate instruction; here bfloat16 weights are used as
//! stored, and packed levels become bfloat16 with one bitwise instruction per 32 levels.
//!
//! A level `q` (at most 15) becomes the bfloat16 number `128 + q`: its bits are those of
//! 128.0 with `q` in the low mantissa bits. The sum of `(128 + q) x` over a group, less
//! `128` times the sum of `x`, is the sum of `q x`; every product is exact in f32 (8
//! significant bits times 8), only the order and cancellation of f32 sums round. An 8-bit
//! level is two 4-bit ones, `lo + 16 hi`: an 8-bit row is read as a 4-bit row twice as
//! long against the vector with each value followed by 16 times it.
//!
//! The pair product treats subnormal inputs as zero, and `128` or `16` times a value near
//! the f32 limit overflows. So each vector is laid out times `2^e` ([`scaled_near`]), with
//! `e` chosen to bring its largest magnitude near `2^-50` (exact), and the kernel multiplies
//! each row's sum by `2^-e` in f64: a result overflows only where the product does, and
//! only values below about `2^-76` times the largest, too small to change an f32 sum, are
//! lost. Callers of the plain row products scale their vectors the same way.
//!
//! Layout of packed rows: a row's bytes are read 64 at a time (a step), as 32 lanes of 16
//! bits, each holding `per = 16 / bits` levels. Sub-level `j` of every lane gives one
//! vector whose lane `t` is level `per * t + j` of the step; [`BFloat16Vector`] arranges
//! the values the same way, so that the pair product lines each level up with its value.
//! A f32 accumulator lane `i` then sums levels `2 per i` to `2 per (i + 1) - 1` of the
//! step, which is how the lanes of a step map to groups of levels.

use super::MAX_VECTORS;

/// Bytes per step: one 512-bit load.
const STEP_BYTES: usize = 64;

/// The pair-product kernels, where the CPU has them.
#[derive(Copy, Clone)]
pub struct PackedBf16Dots {
    /// `out[r * xs.len() + i] = row r . xs[i]`, each level times its group's scale plus
    /// the group's bias, for 1 to [`MAX_VECTORS`] vectors laid out for these rows. Panics
    /// on rows or vectors that do not fit (an engine bug).
    pub dots: fn(rows: &AffineRows<'_>, xs: &[&BFloat16Vector], out: &mut [f32]),
    /// `out[i] = row . xs[i]` for a row of bfloat16 values and 1 to [`MAX_VECTORS`]
    /// bfloat16 vectors at least as long, summed in f32. Subnormal values count as zero,
    /// so callers scale the vectors ([`scaled_near`] at [`PLAIN_EXPONENT`]). Panics on
    /// lengths that do not fit (an engine bug).
    pub row_dots: fn(row: &[u16], xs: &[&[u16]], out: &mut [f32]),
}

/// The pair-product kernels if the CPU has AVX-512 BF16 and the active path is AVX-512.
pub fn packed_bf16_dots() -> Option<PackedBf16Dots> {
    #[cfg(target_arch = "x86_64")]
    {
        let supported = super::Isa::active() == super::Isa::Avx512
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512vl")
            && is_x86_feature_detected!("avx512bf16");
        if supported {
            // SAFETY (both): the CPU has the instruction sets the kernels are compiled for.
            return Some(PackedBf16Dots {
                dots: |rows, xs, out| unsafe { avx512::dots(rows, xs, out) },
                row_dots: |row, xs, out| unsafe { avx512::row_dots(row, xs, out) },
            });
        }
    }
    None
}

/// Rows of levels packed at `bits` (2, 4 or 8) into u32 words, `group_size` consecutive
/// levels sharing a bfloat16 scale and bias (MLX's affine quantization).
pub struct AffineRows<'a> {
    /// The rows' words, one row after another.
    pub words: &'a [u32],
    /// Words per row.
    pub words_per_row: usize,
    /// bfloat16 bits of one scale per group, row after row.
    pub scales: &'a [u16],
    /// bfloat16 bits of one bias per group, row after row.
    pub biases: &'a [u16],
    pub bits: usize,
    pub group_size: usize,
}

/// How the kernels read rows of `levels` levels at `bits` in groups of `group_size`: as
/// rows of 2 or 4 bits (an 8-bit row as a 4-bit row twice as long).
#[derive(Copy, Clone, Debug, PartialEq)]
struct View {
    bits: usize,
    levels: usize,
    group_size: usize,
}

impl View {
    /// The view, if the kernels take such rows: whole steps, groups of whole accumulator
    /// lanes that are whole steps or divide one.
    fn of(bits: usize, levels: usize, group_size: usize) -> Option<View> {
        let view = match bits {
            2 | 4 => View {
                bits,
                levels,
                group_size,
            },
            8 => View {
                bits: 4,
                levels: 2 * levels,
                group_size: 2 * group_size,
            },
            _ => return None,
        };
        let (step, lane) = (view.step_levels(), 2 * view.per_lane());
        let fits = view.levels > 0
            && view.levels.is_multiple_of(step)
            && view.group_size.is_multiple_of(lane)
            && (view.group_size.is_multiple_of(step) || step.is_multiple_of(view.group_size));
        fits.then_some(view)
    }

    /// Levels per 16-bit lane.
    fn per_lane(&self) -> usize {
        16 / self.bits
    }

    fn step_levels(&self) -> usize {
        STEP_BYTES * 8 / self.bits
    }
}

/// Whether [`PackedBf16Dots::dots`] computes rows of `levels` levels packed at `bits` in
/// groups of `group_size`.
pub fn bf16_rows_fit(bits: usize, levels: usize, group_size: usize) -> bool {
    View::of(bits, levels, group_size).is_some()
}

/// The sum of bfloat16 values in f32, in 16 lanes that the compiler can vectorise.
#[inline(always)]
fn sum(values: &[u16]) -> f32 {
    let mut lanes = [0.0f32; 16];
    let chunks = values.chunks_exact(16);
    let rest: f32 = chunks.remainder().iter().map(|&b| widen(b)).sum();
    for chunk in chunks {
        for (lane, &b) in lanes.iter_mut().zip(chunk) {
            *lane += widen(b);
        }
    }
    lanes.iter().sum::<f32>() + rest
}

/// Where [`BFloat16Vector::new`] brings a vector's largest magnitude: far enough below 1
/// that its products with the levels (`128 + q`, against 16 times it for 8-bit rows),
/// summed over a row and times a scale near the f32 limit, stay below the limit; far
/// enough above the f32 normal range that its products with scales down to about `2^-76`
/// stay normal.
const PACKED_EXPONENT: i32 = -50;

/// Where [`scaled_near`] should bring the rows of `x` that [`PackedBf16Dots::row_dots`]
/// multiplies with bfloat16 weights: products with weights from about `2^-106` to the
/// limit stay normal, and a row's sum of them (up to `2^19` values) stays below the limit.
pub const PLAIN_EXPONENT: i32 = -20;

/// `x` (bfloat16 bits) times the power of two that brings its largest magnitude near
/// `2^target` (one if `x` is all zeros or holds an infinity or NaN, which no scaling
/// changes), and that power. The pair product reads subnormal inputs as zero and its sums
/// overflow where values near the limit meet large weights; scaled values keep their
/// products normal and finite. Exact, except for values below about `2^(-126 - target)`
/// times the largest, which become subnormal: too small to change an f32 sum.
#[inline(always)]
pub fn scaled_near(x: &[u16], target: i32) -> (Vec<u16>, f64) {
    // Magnitude bits order finite values as their magnitudes do, and put infinities and
    // NaN above them.
    let largest = x.iter().map(|&b| b & 0x7FFF).max().unwrap_or(0);
    // As f64: the power may lie past the f32 range, the scaled values do not.
    let scale = 2f64.powi(super::exponent_towards(widen(largest), target));
    let scaled = x
        .iter()
        .map(|&b| (((f64::from(widen(b)) * scale) as f32).to_bits() >> 16) as u16)
        .collect();
    (scaled, scale)
}

fn widen(b: u16) -> f32 {
    f32::from_bits(u32::from(b) << 16)
}

/// A bfloat16 vector laid out for the rows it meets: its values in step order (for 8-bit
/// rows each followed by 16 times itself), with each group's sums.
pub struct BFloat16Vector {
    /// The rows the layout is for.
    view: View,
    /// The laid-out values from `start` on; `start` puts them on a 64-byte boundary, so
    /// that no load of 32 of them spans two cache lines (about 5% of the kernel's time).
    values: Vec<u16>,
    start: usize,
    /// Per group, `128` times the sum of the laid-out values: what the levels' offset
    /// adds. Zero-padded to whole vectors of 16.
    offsets: Vec<f32>,
    /// Per group, the sum of the vector's values: what multiplies the bias. Zero-padded
    /// to whole vectors of 16.
    sums: Vec<f32>,
    /// What the kernel's sums are multiplied by: the inverse of the power of two the
    /// values, offsets and sums above were multiplied by.
    unscale: f64,
}

impl BFloat16Vector {
    /// `x` (bfloat16 bits) laid out for rows of `x.len()` levels packed at `bits` in
    /// groups of `group_size`; `None` if [`bf16_rows_fit`] refuses such rows.
    pub fn new(x: &[u16], bits: usize, group_size: usize) -> Option<BFloat16Vector> {
        let view = View::of(bits, x.len(), group_size)?;
        // A decode step lays out a vector for every product, so its loops are compiled for
        // wide registers. With the shuffle below, a 4-bit product of 16 rows of `W` with
        // one row of `x` went from 3.35 µs a call from Python to 2.54.
        Some(super::vectorised(
            #[inline(always)]
            || Self::laid_out(x, bits, group_size, view),
        ))
    }

    /// [`BFloat16Vector::new`] once `view` is known to fit.
    #[inline(always)]
    fn laid_out(x: &[u16], bits: usize, group_size: usize, view: View) -> BFloat16Vector {
        let (scaled, scale) = scaled_near(x, PACKED_EXPONENT);
        let groups = view.levels / view.group_size;
        // Sums of the scaled values: the same roundings as those of `x`, none past the limit.
        let mut sums = vec![0.0f32; groups.next_multiple_of(16)];
        for (s, g) in sums.iter_mut().zip(scaled.chunks_exact(group_size)) {
            *s = sum(g);
        }
        // The values the view's levels meet: 16 x is exact (a change of exponent).
        let values: Vec<u16> = if bits == 8 {
            scaled
                .iter()
                .flat_map(|&b| [b, ((widen(b) * 16.0).to_bits() >> 16) as u16])
                .collect()
        } else {
            scaled
        };
        // The laid-out values of a group sum to its sum, or 17 times it for 8 bits.
        let factor = if bits == 8 { 128.0 * 17.0 } else { 128.0 };
        let offsets = sums.iter().map(|s| factor * s).collect();
        let mut laid_out = vec![0u16; values.len() + STEP_BYTES / 2];
        let start = laid_out
            .as_ptr()
            .align_offset(STEP_BYTES)
            .min(STEP_BYTES / 2);
        let dst = &mut laid_out[start..][..values.len()];
        match view.per_lane() {
            4 => lay_out_steps::<4>(&values, dst),
            _ => lay_out_steps::<8>(&values, dst),
        }
        BFloat16Vector {
            view,
            values: laid_out,
            start,
            offsets,
            sums,
            unscale: 1.0 / scale,
        }
    }
}

/// `values` in step order: within each step of `32 * PER` values, sub-level `j` of lane
/// `t` (value `PER * t + j`) goes to `32 * j + t`. A constant `PER` lets the compiler read
/// the values as interleaved vectors: with `PER` known only at run time the loop moved
/// one value at a time, which took most of the layout's time.
#[inline(always)]
fn lay_out_steps<const PER: usize>(values: &[u16], laid_out: &mut [u16]) {
    let (lanes, _) = values.as_chunks::<PER>();
    for (src, dst) in lanes
        .chunks_exact(32)
        .zip(laid_out.chunks_exact_mut(32 * PER))
    {
        let dst: &mut [[u16; 32]] = dst.as_chunks_mut::<32>().0;
        for (t, lane) in src.iter().enumerate() {
            for (j, &value) in lane.iter().enumerate() {
                dst[j][t] = value;
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{AffineRows, BFloat16Vector, View, MAX_VECTORS, STEP_BYTES};
    use std::arch::x86_64::*;

    /// bfloat16 bits of 128.0, whose low mantissa bits a level fills.
    const OFFSET_BITS: i16 = 0x4300;

    /// # Safety
    /// The CPU must support AVX-512F, BW, VL and BF16.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512bf16")]
    pub(super) unsafe fn dots(rows: &AffineRows<'_>, xs: &[&BFloat16Vector], out: &mut [f32]) {
        let view = xs.first().map(|x| x.view);
        let count = rows.words.len() / rows.words_per_row.max(1);
        let groups_per_row = rows.words_per_row * 32 / rows.bits.max(1) / rows.group_size.max(1);
        assert!(
            view.is_some()
                && view
                    == View::of(
                        rows.bits,
                        rows.words_per_row * 32 / rows.bits,
                        rows.group_size
                    )
                && xs.iter().all(|x| Some(x.view) == view)
                && rows.words.len() == count * rows.words_per_row
                && rows.scales.len() == count * groups_per_row
                && rows.biases.len() == count * groups_per_row
                && xs.len() <= MAX_VECTORS
                && out.len() == count * xs.len(),
            "packed rows and bfloat16 vectors do not fit"
        );
        macro_rules! with_vectors {
            ($bits:literal) => {
                match xs.len() {
                    1 => affine_rows::<$bits, 1>(rows, xs, out),
                    2 => affine_rows::<$bits, 2>(rows, xs, out),
                    3 => affine_rows::<$bits, 3>(rows, xs, out),
                    _ => affine_rows::<$bits, 4>(rows, xs, out),
                }
            };
        }
        match xs[0].view.bits {
            2 => with_vectors!(2),
            _ => with_vectors!(4),
        }
    }

    /// # Safety
    /// The CPU must support AVX-512F, BW and BF16.
    #[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
    pub(super) unsafe fn row_dots(row: &[u16], xs: &[&[u16]], out: &mut [f32]) {
        assert!(
            (1..=MAX_VECTORS).contains(&xs.len())
                && out.len() == xs.len()
                && xs.iter().all(|x| x.len() >= row.len()),
            "row and bfloat16 vectors do not fit"
        );
        match xs.len() {
            1 => plain_row_dots::<1>(row, xs, out),
            2 => plain_row_dots::<2>(row, xs, out),
            3 => plain_row_dots::<3>(row, xs, out),
            _ => plain_row_dots::<4>(row, xs, out),
        }
    }

    /// 32 bfloat16 values from `p` (no alignment needed).
    ///
    /// # Safety
    /// `p` valid for reading 32 values; the CPU supports AVX-512F.
    #[inline(always)]
    unsafe fn pairs(p: *const u16) -> __m512bh {
        std::mem::transmute(_mm512_loadu_si512(p.cast()))
    }

    /// Independent accumulator chains per vector in [`plain_row_dots`].
    const CHAINS: usize = 4;

    /// # Safety
    /// As [`row_dots`], whose checks make every read below in bounds.
    #[inline(always)]
    unsafe fn plain_row_dots<const M: usize>(row: &[u16], xs: &[&[u16]], out: &mut [f32]) {
        let (n, w) = (row.len(), row.as_ptr());
        let xs: [*const u16; M] = std::array::from_fn(|i| xs[i].as_ptr());
        let mut acc = [[_mm512_setzero_ps(); CHAINS]; M];
        let mut i = 0;
        while i + CHAINS * 32 <= n {
            for c in 0..CHAINS {
                let at = i + c * 32;
                super::super::prefetch_ahead(w.add(at), super::super::Ahead::Far);
                let v = pairs(w.add(at));
                for (a, x) in acc.iter_mut().zip(&xs) {
                    a[c] = _mm512_dpbf16_ps(a[c], v, pairs(x.add(at)));
                }
            }
            i += CHAINS * 32;
        }
        while i + 32 <= n {
            let v = pairs(w.add(i));
            for (a, x) in acc.iter_mut().zip(&xs) {
                a[0] = _mm512_dpbf16_ps(a[0], v, pairs(x.add(i)));
            }
            i += 32;
        }
        let widen = |b: u16| f32::from_bits(u32::from(b) << 16);
        for ((o, a), x) in out.iter_mut().zip(acc).zip(&xs) {
            let sum = _mm512_add_ps(_mm512_add_ps(a[0], a[1]), _mm512_add_ps(a[2], a[3]));
            let mut total = _mm512_reduce_add_ps(sum);
            for t in i..n {
                total += widen(*w.add(t)) * widen(*x.add(t));
            }
            *o = total;
        }
    }

    /// 16 bfloat16 values from `p` as f32, those past `count` zero.
    ///
    /// # Safety
    /// `p` valid for reading `count` (at most 16) values; the CPU supports AVX-512F, BW
    /// and VL.
    #[inline(always)]
    unsafe fn widened(p: *const u16, count: usize) -> __m512 {
        let mask = (1u32 << count).wrapping_sub(1) as u16;
        let halves = _mm256_maskz_loadu_epi16(mask, p.cast());
        _mm512_castsi512_ps(_mm512_slli_epi32::<16>(_mm512_cvtepu16_epi32(halves)))
    }

    /// # Safety
    /// As [`dots`], whose checks make every read below in bounds.
    #[inline(always)]
    unsafe fn affine_rows<const BITS: usize, const M: usize>(
        rows: &AffineRows<'_>,
        xs: &[&BFloat16Vector],
        out: &mut [f32],
    ) {
        let view = xs[0].view;
        let step_levels = view.step_levels();
        let steps = view.levels / step_levels;
        let groups_per_row = view.levels / view.group_size;
        let xs: [&BFloat16Vector; M] = std::array::from_fn(|i| xs[i]);
        let values: [*const u16; M] = std::array::from_fn(|i| xs[i].values[xs[i].start..].as_ptr());
        let zero = _mm512_setzero_ps();
        // Groups smaller than a step: accumulator lane `i` takes the scale of the step's
        // group `i / lanes_per_group`. Larger groups: one scale for whole steps.
        let groups_per_step = step_levels / view.group_size;
        let lane_group = match groups_per_step {
            0 => _mm512_setzero_si512(),
            g => {
                let per_group = 16 / g;
                let indices: [u32; 16] = std::array::from_fn(|i| (i / per_group) as u32);
                _mm512_loadu_si512(indices.as_ptr().cast())
            }
        };
        let steps_per_group = (view.group_size / step_levels).max(1);
        // Where half a step lies in one group, two steps' sums fold into one vector, a
        // quarter per half step, which one permutation of a chunk of 16 groups' scales
        // multiplies: fewer instructions a step than a scale vector per step (a 4-bit
        // kernel-only loop: about 7% faster). Pair `p` of a chunk meets the scales of
        // groups `pair_groups[p]`.
        let chunk_steps = 16 * view.group_size / step_levels;
        let folded = 2 * view.group_size >= step_levels && chunk_steps <= 32;
        let pair_groups: [__m512i; 16] = std::array::from_fn(|p| {
            let lanes: [u32; 16] = std::array::from_fn(|lane| {
                ((4 * p + lane / 4) * step_levels / 2 / view.group_size) as u32
            });
            _mm512_loadu_si512(lanes.as_ptr().cast())
        });
        let count = out.len() / M;
        let mut pending = [[zero; 16]; M];
        for r in 0..count {
            let bytes = rows.words.as_ptr().add(r * rows.words_per_row).cast::<u8>();
            let scales = rows.scales.as_ptr().add(r * groups_per_row);
            let biases = rows.biases.as_ptr().add(r * groups_per_row);
            let scales_of = Scales {
                scales,
                groups_per_step,
                steps_per_group,
                lane_group,
            };
            // Two sums per vector, steps alternating between them, so that one step's
            // addition need not wait for the previous one's.
            let (mut even, mut odd) = ([zero; M], [zero; M]);
            let mut s = 0;
            if folded {
                // Pairs alternate between `even` and `odd` by swapping them: an array
                // indexed by the pair's parity would keep them in memory.
                for first in (0..groups_per_row).step_by(16) {
                    let groups = (groups_per_row - first).min(16);
                    let chunk_scales = widened(scales.add(first), groups);
                    let end = s + groups * view.group_size / step_levels;
                    let mut pair = 0;
                    while s < end {
                        let dots =
                            step::<BITS, M>(bytes.add(s * STEP_BYTES), s * step_levels, &values);
                        let next = if s + 1 < end {
                            let at = (s + 1) * step_levels;
                            step::<BITS, M>(bytes.add((s + 1) * STEP_BYTES), at, &values)
                        } else {
                            [zero; M]
                        };
                        let scale = _mm512_permutexvar_ps(pair_groups[pair], chunk_scales);
                        for m in 0..M {
                            even[m] = _mm512_fmadd_ps(scale, halves(dots[m], next[m]), even[m]);
                        }
                        std::mem::swap(&mut even, &mut odd);
                        s += 2;
                        pair += 1;
                    }
                }
            }
            while s < steps {
                let dots = step::<BITS, M>(bytes.add(s * STEP_BYTES), s * step_levels, &values);
                let scale = scales_of.step(s);
                for m in 0..M {
                    even[m] = _mm512_fmadd_ps(scale, dots[m], even[m]);
                }
                if s + 1 < steps {
                    let next = s + 1;
                    let dots =
                        step::<BITS, M>(bytes.add(next * STEP_BYTES), next * step_levels, &values);
                    let scale = scales_of.step(next);
                    for m in 0..M {
                        odd[m] = _mm512_fmadd_ps(scale, dots[m], odd[m]);
                    }
                }
                s += 2;
            }
            // Per group: the bias times the vector's sum, less the scale times the
            // levels' offset.
            for first in (0..groups_per_row).step_by(16) {
                let count = (groups_per_row - first).min(16);
                let (scale, bias) = (
                    widened(scales.add(first), count),
                    widened(biases.add(first), count),
                );
                for m in 0..M {
                    let offsets = _mm512_loadu_ps(xs[m].offsets.as_ptr().add(first));
                    let group_sums = _mm512_loadu_ps(xs[m].sums.as_ptr().add(first));
                    even[m] = _mm512_fmadd_ps(bias, group_sums, even[m]);
                    odd[m] = _mm512_fnmadd_ps(scale, offsets, odd[m]);
                }
            }
            // Each row's lanes are summed 16 rows at a time: summed one row at a time, the
            // reduction and the conversions to f64 and back make a chain of dependent
            // instructions per row, which cost the kernel about a fifth of its time.
            let slot = r % 16;
            for m in 0..M {
                pending[m][slot] = _mm512_add_ps(even[m], odd[m]);
            }
            if slot == 15 || r + 1 == count {
                let first = r - slot;
                for m in 0..M {
                    let sums: [f32; 16] = std::mem::transmute(row_sums(&pending[m]));
                    for (i, &sum) in sums[..=slot].iter().enumerate() {
                        out[(first + i) * M + m] = (f64::from(sum) * xs[m].unscale) as f32;
                    }
                }
            }
        }
    }

    /// The sums of `a`'s and `b`'s halves (lanes 0-7 and 8-15), four lanes each: quarter
    /// `q` of the result sums half `q` of `a` then of `b`.
    ///
    /// # Safety
    /// The CPU supports AVX-512F.
    #[inline(always)]
    unsafe fn halves(a: __m512, b: __m512) -> __m512 {
        _mm512_add_ps(
            _mm512_shuffle_f32x4::<0x88>(a, b),
            _mm512_shuffle_f32x4::<0xDD>(a, b),
        )
    }

    /// Lane `i` of the result is the sum of the lanes of `v[i]`: halving the lanes per row
    /// while doubling the rows per vector, which leaves lane `4 a + b` holding row
    /// `4 b + a`, put back in order by one permutation.
    ///
    /// # Safety
    /// The CPU supports AVX-512F.
    #[inline(always)]
    unsafe fn row_sums(v: &[__m512; 16]) -> __m512 {
        let two_rows: [__m512; 8] = std::array::from_fn(|i| {
            let (a, b) = (v[2 * i], v[2 * i + 1]);
            _mm512_add_ps(
                _mm512_shuffle_f32x4::<0x44>(a, b),
                _mm512_shuffle_f32x4::<0xEE>(a, b),
            )
        });
        let four_rows: [__m512; 4] =
            std::array::from_fn(|i| halves(two_rows[2 * i], two_rows[2 * i + 1]));
        let eight_rows: [__m512; 2] = std::array::from_fn(|i| {
            let (a, b) = (four_rows[2 * i], four_rows[2 * i + 1]);
            _mm512_add_ps(
                _mm512_shuffle_ps::<0x44>(a, b),
                _mm512_shuffle_ps::<0xEE>(a, b),
            )
        });
        let (a, b) = (eight_rows[0], eight_rows[1]);
        let sums = _mm512_add_ps(
            _mm512_shuffle_ps::<0x88>(a, b),
            _mm512_shuffle_ps::<0xDD>(a, b),
        );
        let order: [u32; 16] = std::array::from_fn(|i| (i % 4 * 4 + i / 4) as u32);
        _mm512_permutexvar_ps(_mm512_loadu_si512(order.as_ptr().cast()), sums)
    }

    // Functions, not closures: a closure does not inherit the target features of the
    // function it is inlined into, and its intrinsics would become calls.

    /// The dot products of one step's levels (plus their offset) at `bytes` with the
    /// vectors' values from `first`, one f32 lane per `2 * 16 / BITS` levels.
    ///
    /// # Safety
    /// As [`dots`]: the step and the vectors' matching values are in bounds.
    #[inline(always)]
    unsafe fn step<const BITS: usize, const M: usize>(
        bytes: *const u8,
        first: usize,
        values: &[*const u16; M],
    ) -> [__m512; M] {
        super::super::prefetch_ahead(bytes, super::super::Ahead::Far);
        let packed = _mm512_loadu_si512(bytes.cast());
        let (mask, offset) = (
            _mm512_set1_epi16((1 << BITS) - 1),
            _mm512_set1_epi16(OFFSET_BITS),
        );
        let zero = _mm512_setzero_ps();
        let per = 16 / BITS;
        let mut dots = [[zero; 2]; M];
        for j in 0..per {
            let shifted = match j * BITS {
                0 => packed,
                2 => _mm512_srli_epi16::<2>(packed),
                4 => _mm512_srli_epi16::<4>(packed),
                6 => _mm512_srli_epi16::<6>(packed),
                8 => _mm512_srli_epi16::<8>(packed),
                10 => _mm512_srli_epi16::<10>(packed),
                12 => _mm512_srli_epi16::<12>(packed),
                _ => _mm512_srli_epi16::<14>(packed),
            };
            // (shifted & mask) | offset; the top sub-level needs no mask.
            let levels = if j + 1 < per {
                _mm512_ternarylogic_epi32::<0xEA>(shifted, mask, offset)
            } else {
                _mm512_or_si512(shifted, offset)
            };
            let levels: __m512bh = std::mem::transmute(levels);
            for (d, x) in dots.iter_mut().zip(values) {
                d[j % 2] = _mm512_dpbf16_ps(d[j % 2], levels, pairs(x.add(first + j * 32)));
            }
        }
        let mut sums = [zero; M];
        for m in 0..M {
            sums[m] = _mm512_add_ps(dots[m][0], dots[m][1]);
        }
        sums
    }

    /// Where a row's steps find their scales.
    struct Scales {
        /// bfloat16 bits of the row's scales.
        scales: *const u16,
        /// Groups per step when a group is smaller than a step, else 0.
        groups_per_step: usize,
        /// Steps per group when a group is at least a step, else 1.
        steps_per_group: usize,
        /// The group of each accumulator lane within a step.
        lane_group: __m512i,
    }

    impl Scales {
        /// The scale of each accumulator lane of step `s`.
        ///
        /// # Safety
        /// As [`dots`]: step `s` is in the row; the CPU supports AVX-512F, BW and VL.
        #[inline(always)]
        unsafe fn step(&self, s: usize) -> __m512 {
            match self.groups_per_step {
                0 => {
                    let bits = *self.scales.add(s / self.steps_per_group);
                    _mm512_set1_ps(f32::from_bits(u32::from(bits) << 16))
                }
                g => _mm512_permutexvar_ps(self.lane_group, widened(self.scales.add(s * g), g)),
            }
        }
    }
}
