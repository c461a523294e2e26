//! The AVX-512F path: 16 f32 lanes in a `__m512`, masks in a `__mmask16`.
//!
//! The vector types are only created inside [`run`] and [`folds`], whose callers have checked that the CPU
//! supports AVX-512F; that is what makes the intrinsic calls below sound.

use super::attention;
use super::halves::{self, Half};
use super::packed::{self, PackedRows};
use super::strided_rows::StridedRows;
use super::vector::{Mask, Vector, Wide};
use super::Kernel;
use super::{fold, math};
use std::arch::x86_64::*;
use std::ops::{Add, BitAnd, BitOr, Div, Mul, Not, Sub};

/// Applies `f` to `n` values from `src` into `dst` (which may be `src`).
///
/// # Safety
/// The CPU must support AVX-512F; `src` and `dst` must be valid for `n` values.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn run(f: Kernel, src: *const f32, dst: *mut f32, n: usize) {
    math::run::<F32x16>(f, src, dst, n)
}

/// The f32 reductions of [`fold`] on this path.
///
/// # Safety (of each function)
/// The CPU must support AVX512F.
pub(super) mod folds {
    use super::{fold, F32x16};

    #[target_feature(enable = "avx512f")]
    pub unsafe fn sum(data: &[f32]) -> f64 {
        fold::sum::<F32x16>(data)
    }
    #[target_feature(enable = "avx512f")]
    pub unsafe fn dot(a: &[f32], b: &[f32]) -> f32 {
        fold::dot::<F32x16>(a, b)
    }
    #[target_feature(enable = "avx512f")]
    pub unsafe fn max(data: &[f32]) -> f32 {
        fold::extreme::<F32x16, true>(data)
    }
    #[target_feature(enable = "avx512f")]
    pub unsafe fn min(data: &[f32]) -> f32 {
        fold::extreme::<F32x16, false>(data)
    }
    #[target_feature(enable = "avx512f")]
    pub unsafe fn add_row(acc: &mut [f64], row: &[f32]) {
        fold::add_row::<F32x16>(acc, row)
    }
    #[target_feature(enable = "avx512f")]
    pub unsafe fn max_row(acc: &mut [f32], row: &[f32]) {
        fold::extreme_row::<F32x16, true>(acc, row)
    }
    #[target_feature(enable = "avx512f")]
    pub unsafe fn min_row(acc: &mut [f32], row: &[f32]) {
        fold::extreme_row::<F32x16, false>(acc, row)
    }
}

/// [`halves::dots`] on this path.
///
/// # Safety
/// The CPU must support AVX-512F.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn half_dots(format: Half, row: &[u16], xs: &[&[f32]], out: &mut [f32]) {
    halves::dots::<F32x16>(format, row, xs, out)
}

/// [`attention::scores`] on this path.
///
/// # Safety
/// The CPU must support AVX-512F.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn attention_scores(rows: &StridedRows<'_>, queries: &[&[f32]], out: &mut [f32]) {
    attention::scores::<F32x16>(rows, queries, out)
}

/// [`attention::weighted_sum`] on this path, 4 vectors of sums (64 columns) in registers per weight row.
///
/// # Safety
/// The CPU must support AVX-512F.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn attention_weighted_sum(
    rows: &StridedRows<'_>,
    weights: &[&[f32]],
    out: &mut [f32],
) {
    attention::weighted_sum::<F32x16, 4>(rows, weights, out)
}

/// [`packed::dots`] on this path.
///
/// # Safety
/// The CPU must support AVX-512F.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn packed_dots(
    bits: usize,
    rows: &PackedRows<'_>,
    xs: &[&packed::LaidOut],
    unpacking: packed::Unpacking,
    out: &mut [f32],
) {
    packed::dots::<F32x16>(bits, rows, xs, unpacking, out)
}

#[derive(Copy, Clone)]
pub(super) struct F32x16(pub(super) __m512);

#[derive(Copy, Clone)]
pub(super) struct Mask16(__mmask16);

#[derive(Copy, Clone)]
pub(super) struct F64x8(__m512d);

macro_rules! binary_ops {
    ($t:ident: $($trait:ident $method:ident $intrinsic:ident),*) => {$(
        impl $trait for $t {
            type Output = $t;
            #[inline(always)]
            fn $method(self, b: $t) -> $t {
                // SAFETY: see the module documentation.
                $t(unsafe { $intrinsic(self.0, b.0) })
            }
        }
    )*};
}

binary_ops!(F32x16: Add add _mm512_add_ps, Sub sub _mm512_sub_ps, Mul mul _mm512_mul_ps,
    Div div _mm512_div_ps);
binary_ops!(F64x8: Add add _mm512_add_pd, Sub sub _mm512_sub_pd, Mul mul _mm512_mul_pd,
    Div div _mm512_div_pd);

impl BitAnd for Mask16 {
    type Output = Mask16;
    #[inline(always)]
    fn bitand(self, b: Mask16) -> Mask16 {
        Mask16(self.0 & b.0)
    }
}

impl BitOr for Mask16 {
    type Output = Mask16;
    #[inline(always)]
    fn bitor(self, b: Mask16) -> Mask16 {
        Mask16(self.0 | b.0)
    }
}

impl Not for Mask16 {
    type Output = Mask16;
    #[inline(always)]
    fn not(self) -> Mask16 {
        Mask16(!self.0)
    }
}

impl Mask for Mask16 {
    #[inline(always)]
    fn any(self) -> bool {
        self.0 != 0
    }
}

/// Bitwise `op` on the lanes' bit patterns (the float forms need AVX-512DQ).
#[inline(always)]
unsafe fn bits(a: __m512, b: __m512, op: unsafe fn(__m512i, __m512i) -> __m512i) -> __m512 {
    _mm512_castsi512_ps(op(_mm512_castps_si512(a), _mm512_castps_si512(b)))
}

const SIGN: __m512i = unsafe { std::mem::transmute([i32::MIN; 16]) };

impl Vector for F32x16 {
    const LANES: usize = 16;
    type Mask = Mask16;
    type Wide = F64x8;
    type Words = __m512i;
    /// Levels of up to 4 bits are looked up by a lane permutation, which needs them shifted.
    const LEVELS_IN_PLACE: bool = false;
    const SUBNORMAL_LEVELS: bool = false;

    #[inline(always)]
    fn splat(v: f32) -> Self {
        // SAFETY: see the module documentation.
        F32x16(unsafe { _mm512_set1_ps(v) })
    }
    #[inline(always)]
    unsafe fn load(ptr: *const f32) -> Self {
        F32x16(_mm512_loadu_ps(ptr))
    }
    #[inline(always)]
    unsafe fn store(self, ptr: *mut f32) {
        _mm512_storeu_ps(ptr, self.0)
    }
    #[inline(always)]
    fn mul_add(self, b: Self, c: Self) -> Self {
        // SAFETY: see the module documentation.
        F32x16(unsafe { _mm512_fmadd_ps(self.0, b.0, c.0) })
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        // SAFETY: see the module documentation.
        F32x16(unsafe { _mm512_sqrt_ps(self.0) })
    }
    #[inline(always)]
    fn min(self, b: Self) -> Self {
        // SAFETY: see the module documentation.
        F32x16(unsafe { _mm512_min_ps(self.0, b.0) })
    }
    #[inline(always)]
    fn max(self, b: Self) -> Self {
        // SAFETY: see the module documentation.
        F32x16(unsafe { _mm512_max_ps(self.0, b.0) })
    }
    #[inline(always)]
    fn floor(self) -> Self {
        // SAFETY: see the module documentation.
        F32x16(unsafe {
            _mm512_roundscale_ps::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(self.0)
        })
    }
    #[inline(always)]
    fn ceil(self) -> Self {
        // SAFETY: see the module documentation.
        F32x16(unsafe {
            _mm512_roundscale_ps::<{ _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC }>(self.0)
        })
    }
    #[inline(always)]
    fn round(self) -> Self {
        // SAFETY: see the module documentation.
        F32x16(unsafe {
            _mm512_roundscale_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(self.0)
        })
    }
    #[inline(always)]
    fn trunc(self) -> Self {
        // SAFETY: see the module documentation.
        F32x16(unsafe {
            _mm512_roundscale_ps::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(self.0)
        })
    }
    #[inline(always)]
    fn abs(self) -> Self {
        // SAFETY: see the module documentation.
        F32x16(unsafe { _mm512_abs_ps(self.0) })
    }
    #[inline(always)]
    fn neg(self) -> Self {
        // SAFETY: see the module documentation.
        F32x16(unsafe { bits(self.0, _mm512_castsi512_ps(SIGN), _mm512_xor_si512) })
    }
    #[inline(always)]
    fn sign_bit(self) -> Self {
        // SAFETY: see the module documentation.
        F32x16(unsafe { bits(self.0, _mm512_castsi512_ps(SIGN), _mm512_and_si512) })
    }
    #[inline(always)]
    fn xor(self, b: Self) -> Self {
        // SAFETY: see the module documentation.
        F32x16(unsafe { bits(self.0, b.0, _mm512_xor_si512) })
    }
    #[inline(always)]
    fn lt(self, b: Self) -> Mask16 {
        // SAFETY: see the module documentation.
        Mask16(unsafe { _mm512_cmp_ps_mask::<_CMP_LT_OQ>(self.0, b.0) })
    }
    #[inline(always)]
    fn le(self, b: Self) -> Mask16 {
        // SAFETY: see the module documentation.
        Mask16(unsafe { _mm512_cmp_ps_mask::<_CMP_LE_OQ>(self.0, b.0) })
    }
    #[inline(always)]
    fn gt(self, b: Self) -> Mask16 {
        // SAFETY: see the module documentation.
        Mask16(unsafe { _mm512_cmp_ps_mask::<_CMP_GT_OQ>(self.0, b.0) })
    }
    #[inline(always)]
    fn ge(self, b: Self) -> Mask16 {
        // SAFETY: see the module documentation.
        Mask16(unsafe { _mm512_cmp_ps_mask::<_CMP_GE_OQ>(self.0, b.0) })
    }
    #[inline(always)]
    fn eq(self, b: Self) -> Mask16 {
        // SAFETY: see the module documentation.
        Mask16(unsafe { _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(self.0, b.0) })
    }
    #[inline(always)]
    fn is_nan(self) -> Mask16 {
        // SAFETY: see the module documentation.
        Mask16(unsafe { _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(self.0, self.0) })
    }
    #[inline(always)]
    fn select(m: Mask16, a: Self, b: Self) -> Self {
        // SAFETY: see the module documentation.
        F32x16(unsafe { _mm512_mask_blend_ps(m.0, b.0, a.0) })
    }
    #[inline(always)]
    fn ldexp(self, n: Self) -> Self {
        // SAFETY: see the module documentation.
        F32x16(unsafe { _mm512_scalef_ps(self.0, n.0) })
    }
    #[inline(always)]
    fn frexp(self) -> (Self, Self) {
        // SAFETY: see the module documentation.
        unsafe {
            (
                F32x16(_mm512_getmant_ps::<_MM_MANT_NORM_1_2, _MM_MANT_SIGN_SRC>(
                    self.0,
                )),
                F32x16(_mm512_getexp_ps(self.0)),
            )
        }
    }
    #[inline(always)]
    fn sum_lanes(self) -> f32 {
        // SAFETY: see the module documentation.
        unsafe { _mm512_reduce_add_ps(self.0) }
    }
    #[inline(always)]
    fn lane_sums(v: &[Self]) -> Self {
        assert_eq!(v.len(), 16, "sums of 16 vectors");
        // Halving the lanes per vector while doubling the vectors per register leaves
        // lane `4 a + b` holding vector `4 b + a`, put back in order by one permutation.
        // SAFETY: see the module documentation.
        unsafe {
            let two: [__m512; 8] = std::array::from_fn(|i| {
                let (a, b) = (v[2 * i].0, v[2 * i + 1].0);
                _mm512_add_ps(
                    _mm512_shuffle_f32x4::<0x44>(a, b),
                    _mm512_shuffle_f32x4::<0xEE>(a, b),
                )
            });
            let four: [__m512; 4] = std::array::from_fn(|i| {
                let (a, b) = (two[2 * i], two[2 * i + 1]);
                _mm512_add_ps(
                    _mm512_shuffle_f32x4::<0x88>(a, b),
                    _mm512_shuffle_f32x4::<0xDD>(a, b),
                )
            });
            let eight: [__m512; 2] = std::array::from_fn(|i| {
                let (a, b) = (four[2 * i], four[2 * i + 1]);
                _mm512_add_ps(
                    _mm512_shuffle_ps::<0x44>(a, b),
                    _mm512_shuffle_ps::<0xEE>(a, b),
                )
            });
            let (a, b) = (eight[0], eight[1]);
            let sums = _mm512_add_ps(
                _mm512_shuffle_ps::<0x88>(a, b),
                _mm512_shuffle_ps::<0xDD>(a, b),
            );
            let order: [u32; 16] = std::array::from_fn(|i| (i % 4 * 4 + i / 4) as u32);
            F32x16(_mm512_permutexvar_ps(
                _mm512_loadu_si512(order.as_ptr().cast()),
                sums,
            ))
        }
    }
    #[inline(always)]
    fn permute(self, index: __m512i) -> Self {
        // SAFETY: see the module documentation.
        F32x16(unsafe { _mm512_permutexvar_ps(index, self.0) })
    }
    #[inline(always)]
    unsafe fn load_bf16(ptr: *const u16) -> Self {
        let bits = _mm512_cvtepu16_epi32(_mm256_loadu_si256(ptr as *const __m256i));
        F32x16(_mm512_castsi512_ps(_mm512_slli_epi32::<16>(bits)))
    }
    #[inline(always)]
    unsafe fn load_f16(ptr: *const u16) -> Self {
        F32x16(_mm512_cvtph_ps(_mm256_loadu_si256(ptr as *const __m256i)))
    }
    #[inline(always)]
    unsafe fn load_words(ptr: *const u32) -> __m512i {
        _mm512_loadu_si512(ptr as *const __m512i)
    }
    #[inline(always)]
    fn levels(words: __m512i, shift: u32, bits: u32, _subnormal: bool) -> Self {
        // SAFETY: see the module documentation.
        unsafe {
            let shifted = if shift == 0 {
                words
            } else {
                _mm512_srl_epi32(words, _mm_cvtsi32_si128(shift as i32))
            };
            if bits <= 4 {
                // A lane permutation reads only the low 4 bits of each index: looking the
                // level up in a table of the 16 values those bits can hold replaces the
                // mask and the conversion (the 4-bit decode is bound by these steps).
                let mask = (1 << bits) - 1;
                let table: [f32; 16] = std::array::from_fn(|i| (i & mask) as f32);
                let table = _mm512_loadu_ps(table.as_ptr());
                return F32x16(_mm512_permutexvar_ps(shifted, table));
            }
            let level = if shift + bits == 32 {
                shifted
            } else {
                _mm512_and_si512(shifted, _mm512_set1_epi32(((1u32 << bits) - 1) as i32))
            };
            F32x16(_mm512_cvtepi32_ps(level))
        }
    }
    #[inline(always)]
    fn widen(self) -> (F64x8, F64x8) {
        // SAFETY: see the module documentation.
        unsafe {
            let high = _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(self.0)));
            (
                F64x8(_mm512_cvtps_pd(_mm512_castps512_ps256(self.0))),
                F64x8(_mm512_cvtps_pd(high)),
            )
        }
    }
    #[inline(always)]
    fn narrow(lo: F64x8, hi: F64x8) -> Self {
        // SAFETY: see the module documentation.
        unsafe {
            let lo = _mm256_castps_pd(_mm512_cvtpd_ps(lo.0));
            let hi = _mm256_castps_pd(_mm512_cvtpd_ps(hi.0));
            F32x16(_mm512_castpd_ps(_mm512_insertf64x4::<1>(
                _mm512_castpd256_pd512(lo),
                hi,
            )))
        }
    }
}

impl Wide for F64x8 {
    #[inline(always)]
    fn splat(v: f64) -> Self {
        // SAFETY: see the module documentation.
        F64x8(unsafe { _mm512_set1_pd(v) })
    }
    #[inline(always)]
    unsafe fn load(ptr: *const f64) -> Self {
        F64x8(_mm512_loadu_pd(ptr))
    }
    #[inline(always)]
    unsafe fn store(self, ptr: *mut f64) {
        _mm512_storeu_pd(ptr, self.0)
    }
    #[inline(always)]
    fn sum(self) -> f64 {
        // SAFETY: see the module documentation.
        unsafe { _mm512_reduce_add_pd(self.0) }
    }
    #[inline(always)]
    fn mul_add(self, b: Self, c: Self) -> Self {
        // SAFETY: see the module documentation.
        F64x8(unsafe { _mm512_fmadd_pd(self.0, b.0, c.0) })
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        // SAFETY: see the module documentation.
        F64x8(unsafe { _mm512_sqrt_pd(self.0) })
    }
    #[inline(always)]
    fn round(self) -> Self {
        // SAFETY: see the module documentation.
        F64x8(unsafe {
            _mm512_roundscale_pd::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(self.0)
        })
    }
}
