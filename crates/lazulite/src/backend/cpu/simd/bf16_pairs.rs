//! Dot products with bfloat16 vectors by AVX-512 BF16's pair product (`vdpbf16ps`), which
//! multiplies 32 pairs of bfloat16 values and adds them into 16 f32 lanes: the decode step
//! of a bfloat16 model, its weights bfloat16 or packed at 2 or 4 bits. The float32 paths
//! ([`super::packed`], [`super::halves`]) widen every weight and multiply it with a
//! separate instruction; here bfloat16 weights are used as stored, and packed levels
//! become bfloat16 by a table lookup, 32 at once.
//!
//! Nothing is rounded that the float32 paths keep: two bfloat16 values, or a level (at
//! most 15) and a bfloat16 value, have so few significant bits that their product is
//! exact in f32, as it is when the vector was bfloat16 to begin with. Only the order of
//! the f32 sums differs.
//!
//! Layout of packed rows: a row's words are read as bytes, 32 at a time (a chunk:
//! [`CHUNK_WORDS`] words, `32 * per` levels with `per = 8 / bits` levels per byte).
//! Widened to 16-bit lanes, sub-level `j` of every byte gives one vector whose lane `t` is
//! level `per * t + j` of the chunk; [`lay_out_bf16`] arranges the values of each vector
//! the same way, so that the pair product lines each level up with its value. A f32
//! accumulator lane `i` then sums the levels of bytes `2i` and `2i + 1`, that is of word
//! `i / 2`.

use super::packed::{PackedRows, MAX_VECTORS, SCALE_PADDING};

/// Words per chunk: 32 bytes, one 256-bit load.
pub const CHUNK_WORDS: usize = 8;

/// The pair-product kernels, where the CPU has them.
#[derive(Copy, Clone)]
pub struct PackedBf16Dots {
    /// `out[r * xs.len() + i] = row r . xs[i]`, the levels times their group's scale, for
    /// 1 to [`MAX_VECTORS`] vectors of bfloat16 bits laid out by [`lay_out_bf16`], at `bits`
    /// 2 or 4. The rows are whole chunks and whole groups, a group whole chunks or a
    /// divisor of one. Panics on lengths that do not
    /// fit (an engine bug).
    pub dots: fn(bits: usize, rows: &PackedRows<'_>, xs: &[&[u16]], out: &mut [f32]),
    /// `out[i] = row . xs[i]` for a row of bfloat16 values and 1 to [`MAX_VECTORS`]
    /// bfloat16 vectors at least as long, summed in f32. Panics on lengths that do not
    /// fit (an engine bug).
    pub row_dots: fn(row: &[u16], xs: &[&[u16]], out: &mut [f32]),
}

/// The pair-product kernels if the CPU has AVX-512 BF16 and the active path is AVX-512.
pub fn packed_bf16_dots() -> Option<PackedBf16Dots> {
    #[cfg(target_arch = "x86_64")]
    {
        let supported = super::Isa::active() == super::Isa::Avx512
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512bf16");
        if supported {
            // SAFETY (both): the CPU has the instruction sets the kernels are compiled for.
            return Some(PackedBf16Dots {
                dots: |bits, rows, xs, out| unsafe { avx512::dots(bits, rows, xs, out) },
                row_dots: |row, xs, out| unsafe { avx512::row_dots(row, xs, out) },
            });
        }
    }
    None
}

/// Writes the bfloat16 values `x` (whole chunks of `32 * 8 / bits` values) into `out` in
/// the chunk layout of the module documentation.
pub fn lay_out_bf16(x: &[u16], bits: usize, out: &mut [u16]) {
    let per = 8 / bits;
    for (src, dst) in x.chunks_exact(32 * per).zip(out.chunks_exact_mut(32 * per)) {
        for t in 0..32 {
            for j in 0..per {
                dst[j * 32 + t] = src[per * t + j];
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{PackedRows, CHUNK_WORDS, MAX_VECTORS, SCALE_PADDING};
    use std::arch::x86_64::*;

    /// bfloat16 bits of the integers 0 to 31: the lookup table of levels.
    const LEVELS: [u16; 32] = {
        let mut table = [0u16; 32];
        let mut n = 0;
        while n < 32 {
            table[n] = ((n as f32).to_bits() >> 16) as u16;
            n += 1;
        }
        table
    };

    /// Bytes ahead of the chunk being unpacked that are fetched into L1.
    const PREFETCH_BYTES: usize = 1024;

    /// # Safety
    /// The CPU must support AVX-512F, BW and BF16.
    #[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
    pub(super) unsafe fn dots(bits: usize, rows: &PackedRows<'_>, xs: &[&[u16]], out: &mut [f32]) {
        let (wpg, wpr) = (rows.words_per_group, rows.words_per_row);
        let count = rows.words.len() / wpr.max(1);
        assert!(
            matches!(bits, 2 | 4)
                && wpr > 0
                && rows.words.len() == count * wpr
                && wpr.is_multiple_of(CHUNK_WORDS)
                && wpg > 0
                && wpr.is_multiple_of(wpg)
                && (wpg.is_multiple_of(CHUNK_WORDS) || CHUNK_WORDS.is_multiple_of(wpg))
                && rows.scales.len() >= count * (wpr / wpg) + SCALE_PADDING
                && (1..=MAX_VECTORS).contains(&xs.len())
                && out.len() == count * xs.len()
                && xs.iter().all(|x| x.len() >= wpr * (32 / bits)),
            "packed rows and bfloat16 vectors do not fit"
        );
        macro_rules! with_vectors {
            ($bits:literal) => {
                match xs.len() {
                    1 => rows_dots::<$bits, 1>(rows, xs, out),
                    2 => rows_dots::<$bits, 2>(rows, xs, out),
                    3 => rows_dots::<$bits, 3>(rows, xs, out),
                    _ => rows_dots::<$bits, 4>(rows, xs, out),
                }
            };
        }
        match bits {
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

    /// # Safety
    /// As [`dots`], whose checks make every read below in bounds.
    #[inline(always)]
    unsafe fn rows_dots<const BITS: usize, const M: usize>(
        rows: &PackedRows<'_>,
        xs: &[&[u16]],
        out: &mut [f32],
    ) {
        let (wpr, wpg) = (rows.words_per_row, rows.words_per_group);
        let (chunks, groups_per_row) = (wpr / CHUNK_WORDS, wpr / wpg);
        let xs: [*const u16; M] = std::array::from_fn(|i| xs[i].as_ptr());
        let table = _mm512_loadu_si512(LEVELS.as_ptr().cast());
        let zero = _mm512_setzero_ps();
        // When a chunk holds several groups, accumulator lane `i` (word `i / 2` of the
        // chunk) takes the scale of group `i / 2 / wpg` of the chunk's groups.
        let mut lane_group = [0u32; 16];
        if wpg < CHUNK_WORDS {
            for (i, g) in lane_group.iter_mut().enumerate() {
                *g = (i / 2 / wpg) as u32;
            }
        }
        let lane_group = _mm512_loadu_si512(lane_group.as_ptr().cast());
        // A step is one group of whole chunks, or one chunk of several groups.
        let chunks_per_step = (wpg / CHUNK_WORDS).max(1);
        let steps = chunks / chunks_per_step;
        let geometry = Geometry {
            chunks_per_step,
            groups_per_chunk: (wpg < CHUNK_WORDS).then_some(CHUNK_WORDS / wpg),
            table,
            lane_group,
        };
        for (r, out) in out.chunks_exact_mut(M).enumerate() {
            let bytes = rows.words.as_ptr().add(r * wpr).cast::<u8>();
            let scales = rows.scales.as_ptr().add(r * groups_per_row);
            // Two sums per vector, steps alternating between them in registers, so that
            // one step's addition need not wait for the previous one's.
            let (mut even, mut odd) = ([zero; M], [zero; M]);
            let mut s = 0;
            while s + 1 < steps {
                let a = step::<BITS, M>(bytes, scales, s, &geometry, &xs);
                let b = step::<BITS, M>(bytes, scales, s + 1, &geometry, &xs);
                for m in 0..M {
                    even[m] = _mm512_add_ps(even[m], a[m]);
                    odd[m] = _mm512_add_ps(odd[m], b[m]);
                }
                s += 2;
            }
            if s < steps {
                let a = step::<BITS, M>(bytes, scales, s, &geometry, &xs);
                for m in 0..M {
                    even[m] = _mm512_add_ps(even[m], a[m]);
                }
            }
            for (m, o) in out.iter_mut().enumerate() {
                *o = _mm512_reduce_add_ps(_mm512_add_ps(even[m], odd[m]));
            }
        }
    }

    /// What every step of a call shares.
    struct Geometry {
        chunks_per_step: usize,
        /// Groups per chunk when a group is smaller than a chunk.
        groups_per_chunk: Option<usize>,
        /// [`LEVELS`], loaded.
        table: __m512i,
        /// The group of each accumulator lane within a chunk (all 0 for whole chunks).
        lane_group: __m512i,
    }

    /// The scaled dot products of step `s` of the row at `bytes` with each vector.
    ///
    /// # Safety
    /// As [`dots`]: the step and the vectors' matching values are in bounds.
    #[inline(always)]
    unsafe fn step<const BITS: usize, const M: usize>(
        bytes: *const u8,
        scales: *const f32,
        s: usize,
        geometry: &Geometry,
        xs: &[*const u16; M],
    ) -> [__m512; M] {
        let zero = _mm512_setzero_ps();
        let mut dots = [[zero; 2]; M];
        let first = s * geometry.chunks_per_step;
        for c in first..first + geometry.chunks_per_step {
            chunk::<BITS, M>(bytes, c, geometry.table, xs, &mut dots);
        }
        let scale = match geometry.groups_per_chunk {
            None => _mm512_set1_ps(*scales.add(s)),
            Some(per_chunk) => _mm512_permutexvar_ps(
                geometry.lane_group,
                _mm512_loadu_ps(scales.add(s * per_chunk)),
            ),
        };
        let mut scaled = [zero; M];
        for (out, d) in scaled.iter_mut().zip(&dots) {
            *out = _mm512_mul_ps(scale, _mm512_add_ps(d[0], d[1]));
        }
        scaled
    }

    // A function, not a closure: a closure does not inherit the target features of the
    // function it is inlined into, and its intrinsics would become calls.

    /// Adds the levels of chunk `c` of the row at `bytes` times the vectors' values to
    /// `dots` (sub-level `j` into chain `j % 2`).
    ///
    /// # Safety
    /// As [`dots`]: chunk `c` and the vectors' matching values are in bounds.
    #[inline(always)]
    unsafe fn chunk<const BITS: usize, const M: usize>(
        bytes: *const u8,
        c: usize,
        table: __m512i,
        xs: &[*const u16; M],
        dots: &mut [[__m512; 2]; M],
    ) {
        let per = 8 / BITS;
        let at = bytes.add(c * CHUNK_WORDS * 4);
        // A prefetch never faults, so the address may lie past the matrix.
        _mm_prefetch::<_MM_HINT_T0>(at.cast::<i8>().wrapping_add(PREFETCH_BYTES));
        let widened = _mm512_cvtepu8_epi16(_mm256_loadu_si256(at.cast()));
        let mask = _mm512_set1_epi16(((1 << BITS) - 1) as i16);
        for j in 0..per {
            // The top sub-level of a byte needs no mask.
            let shifted = match j * BITS {
                0 => widened,
                2 => _mm512_srli_epi16::<2>(widened),
                4 => _mm512_srli_epi16::<4>(widened),
                _ => _mm512_srli_epi16::<6>(widened),
            };
            let levels = if j + 1 < per {
                _mm512_and_si512(shifted, mask)
            } else {
                shifted
            };
            let levels: __m512bh = std::mem::transmute(_mm512_permutexvar_epi16(levels, table));
            for (d, x) in dots.iter_mut().zip(xs) {
                d[j % 2] = _mm512_dpbf16_ps(d[j % 2], levels, pairs(x.add((c * per + j) * 32)));
            }
        }
    }
}
