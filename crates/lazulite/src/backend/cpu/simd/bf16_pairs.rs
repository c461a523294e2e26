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
use super::MAX_VECTORS;

/// The pair-product kernel, where the CPU has it.
#[derive(Copy, Clone)]
pub struct PackedBf16Dots {
    /// `out[i] = row . xs[i]` for a row of bfloat16 values and 1 to [`MAX_VECTORS`]
    /// bfloat16 vectors at least as long, summed in f32. Subnormal values count as zero,
    /// so callers scale the vectors ([`scaled_near`] at [`PLAIN_EXPONENT`]). Panics on
    /// lengths that do not fit (an engine bug).
    pub row_dots: fn(row: &[u16], xs: &[&[u16]], out: &mut [f32]),
}

/// The pair-product kernel if the CPU has AVX-512 BF16 and the active path is AVX-512.
pub fn packed_bf16_dots() -> Option<PackedBf16Dots> {
    #[cfg(target_arch = "x86_64")]
    {
        let supported = super::Isa::active() == super::Isa::Avx512
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512bf16");
        if supported {
            // SAFETY: the CPU has the instruction sets the kernel is compiled for.
            return Some(PackedBf16Dots {
                row_dots: |row, xs, out| unsafe { avx512::row_dots(row, xs, out) },
            });
        }
    }
    None
}

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

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::MAX_VECTORS;
    use std::arch::x86_64::*;

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
}
