//! Dot products of bfloat16 rows with bfloat16 vectors by AVX-512 BF16's pair product
//! (`vdpbf16ps`), which multiplies 32 pairs of bfloat16 values and adds them into 16 f32
//! lanes: the decode step of a model with bfloat16 weights, used as stored. Rows quantized
//! at 2, 4 or 8 bits take the byte dot product instead ([`super::byte_dots`]).
//!
//! The pair product treats subnormal inputs as zero, and a row's sum of products of
//! values near the f32 limit overflows. So callers lay out each vector times `2^e`
//! ([`scaled_near`] at [`PLAIN_EXPONENT`]) and multiply each sum by `2^-e` in f64: a
//! result overflows only where the product does, and only values far below the largest,
//! too small to change an f32 sum, are lost.

use super::byte_dots::widen;
use super::strided_rows::{RowElements, StridedRows};

/// The pair-product kernel, where the CPU has it.
#[derive(Copy, Clone)]
pub struct PackedBf16Dots {
    /// `out[i * rows.count + j] = rows[j] . xs[i]` for bfloat16 rows
    /// ([`RowElements::BFloat16`]) and 1 to [`MAX_VECTORS`](super::MAX_VECTORS) bfloat16 vectors at least
    /// `rows.width` long, summed in f32. Subnormal values count as zero, so callers scale
    /// the vectors ([`scaled_near`] at [`PLAIN_EXPONENT`]). Panics on operands that do not
    /// fit (an engine bug).
    pub dots: fn(rows: &StridedRows<'_>, xs: &[&[u16]], out: &mut [f32]),
}

/// The pair-product kernel if the CPU has AVX-512 BF16 and the active path is AVX-512.
pub fn packed_bf16_dots() -> Option<PackedBf16Dots> {
    #[cfg(target_arch = "x86_64")]
    {
        let supported = super::Isa::active() == super::Isa::Avx512
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512bf16");
        if supported {
            return Some(PackedBf16Dots { dots });
        }
    }
    None
}

/// [`PackedBf16Dots::dots`], once the CPU is known to have AVX-512 BF16.
#[cfg(target_arch = "x86_64")]
fn dots(rows: &StridedRows<'_>, xs: &[&[u16]], out: &mut [f32]) {
    let RowElements::BFloat16(data) = rows.data else {
        panic!("the pair product takes bfloat16 rows");
    };
    rows.check(xs, rows.width, out, rows.count);
    // SAFETY: `packed_bf16_dots` hands this out only on a CPU with AVX-512 BF16; the
    // checks above keep every read and write in bounds.
    unsafe { avx512::dots(data, rows, xs, out) }
}

/// Where [`scaled_near`] should bring the rows of `x` that [`PackedBf16Dots::dots`]
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

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::super::avx512::F32x16;
    use super::super::vector::Vector;
    use super::StridedRows;
    use std::arch::x86_64::*;

    /// Rows one pass multiplies, so that each load of a vector serves several rows (a
    /// bfloat16 2816 x 1024 product with one vector, in cache, one thread: 95 cycles a row
    /// against 110 for a row at a time).
    const PASS: usize = 4;

    /// # Safety
    /// The CPU supports AVX-512F, BW and BF16; `data` is the rows' data and
    /// [`super::dots`]'s checks hold.
    #[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
    pub(super) unsafe fn dots(
        data: &[u16],
        rows: &StridedRows<'_>,
        xs: &[&[u16]],
        out: &mut [f32],
    ) {
        match xs.len() {
            1 => strided_dots::<1>(data.as_ptr(), rows, xs, out),
            2 => strided_dots::<2>(data.as_ptr(), rows, xs, out),
            3 => strided_dots::<3>(data.as_ptr(), rows, xs, out),
            _ => strided_dots::<4>(data.as_ptr(), rows, xs, out),
        }
    }

    /// Every row's products, [`PASS`] rows at a time; the sums of 16 rows are added up
    /// together, which spares each row a dependent horizontal sum.
    ///
    /// # Safety
    /// As [`dots`].
    #[inline(always)]
    unsafe fn strided_dots<const M: usize>(
        data: *const u16,
        rows: &StridedRows<'_>,
        xs: &[&[u16]],
        out: &mut [f32],
    ) {
        let count = rows.count;
        let xs: [*const u16; M] = std::array::from_fn(|i| xs[i].as_ptr());
        let mut pending = [[F32x16(_mm512_setzero_ps()); 16]; M];
        let mut j = 0;
        while j < count {
            let first = data.add(j * rows.stride);
            let pass = (count - j).min(PASS);
            let mut sums = [[_mm512_setzero_ps(); M]; PASS];
            match pass {
                PASS => pass_sums::<M, PASS>(first, rows, &xs, &mut sums),
                3 => pass_sums::<M, 3>(first, rows, &xs, &mut sums),
                2 => pass_sums::<M, 2>(first, rows, &xs, &mut sums),
                _ => pass_sums::<M, 1>(first, rows, &xs, &mut sums),
            }
            for (r, sums) in sums[..pass].iter().enumerate() {
                let row = j + r;
                let slot = row % 16;
                for (pending, &sum) in pending.iter_mut().zip(sums) {
                    pending[slot] = F32x16(sum);
                }
                if slot == 15 || row + 1 == count {
                    for (i, pending) in pending.iter().enumerate() {
                        let lanes: [f32; 16] = std::mem::transmute(F32x16::lane_sums(pending).0);
                        out[i * count + row - slot..][..=slot].copy_from_slice(&lanes[..=slot]);
                    }
                }
            }
            j += pass;
        }
    }

    /// The lane sums of `R` rows from `first` (`rows.stride` apart) with each vector, into
    /// `sums[r][i]`.
    ///
    /// # Safety
    /// As [`dots`]: `R` rows from `first` lie inside the rows' data.
    #[inline(always)]
    unsafe fn pass_sums<const M: usize, const R: usize>(
        first: *const u16,
        rows: &StridedRows<'_>,
        xs: &[*const u16; M],
        sums: &mut [[__m512; M]; PASS],
    ) {
        let (width, stride) = (rows.width, rows.stride);
        let whole = width / 32 * 32;
        let mut d = 0;
        while d < whole {
            let x: [__m512bh; M] = std::array::from_fn(|i| pairs(xs[i].add(d)));
            for (r, sums) in sums.iter_mut().take(R).enumerate() {
                let at = first.add(r * stride + d);
                // The same place of the next pass's row: every line of the next pass is
                // asked for during this one.
                _mm_prefetch::<_MM_HINT_T1>(at.wrapping_add(R * stride).cast());
                let v = pairs(at);
                for (s, &x) in sums.iter_mut().zip(&x) {
                    *s = _mm512_dpbf16_ps(*s, v, x);
                }
            }
            d += 32;
        }
        if whole < width {
            // The last values of each row, the lanes past the row zero in both operands.
            let mask = (1u32 << (width - whole)) - 1;
            let tail = |p: *const u16| -> __m512bh {
                std::mem::transmute(_mm512_maskz_loadu_epi16(mask, p.cast()))
            };
            let x: [__m512bh; M] = std::array::from_fn(|i| tail(xs[i].add(whole)));
            for (r, sums) in sums.iter_mut().take(R).enumerate() {
                let v = tail(first.add(r * stride + whole));
                for (s, &x) in sums.iter_mut().zip(&x) {
                    *s = _mm512_dpbf16_ps(*s, v, x);
                }
            }
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
}
