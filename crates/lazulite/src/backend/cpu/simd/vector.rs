//! The lane abstraction the math kernels are written against: a vector of f32 lanes, its
//! comparison masks, a vector of f64 lanes holding half of it and one of as many u32 lanes. Each instruction set
//! implements these traits with `#[inline(always)]` methods over its intrinsics, so a
//! kernel written once compiles to that set's instructions when it is inlined into a
//! function with the matching `#[target_feature]`.

use std::ops::{Add, BitAnd, BitOr, Div, Mul, Not, Sub};

/// Lane-wise comparison results.
pub(super) trait Mask:
    Copy + BitAnd<Output = Self> + BitOr<Output = Self> + Not<Output = Self>
{
    /// Whether any lane is set.
    fn any(self) -> bool;
}

/// A vector of f32 lanes.
pub(super) trait Vector:
    Copy + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self>
{
    const LANES: usize;
    type Mask: Mask;
    /// Half of the lanes, widened to f64.
    type Wide: Wide;
    /// As many u32 lanes.
    type Words: Copy;

    fn splat(v: f32) -> Self;
    /// Reads `LANES` values; `ptr` needs no alignment.
    ///
    /// # Safety
    /// `ptr` must be valid for reading `LANES` f32 values.
    unsafe fn load(ptr: *const f32) -> Self;
    /// Writes `LANES` values; `ptr` needs no alignment.
    ///
    /// # Safety
    /// `ptr` must be valid for writing `LANES` f32 values.
    unsafe fn store(self, ptr: *mut f32);

    /// `self * b + c` with one rounding.
    fn mul_add(self, b: Self, c: Self) -> Self;
    fn sqrt(self) -> Self;
    /// The smaller lane; where either lane is NaN, `b`'s lane (so `splat(c).min(x)`
    /// propagates NaN from `x`).
    fn min(self, b: Self) -> Self;
    /// The larger lane; where either lane is NaN, `b`'s lane.
    fn max(self, b: Self) -> Self;
    fn floor(self) -> Self;
    fn ceil(self) -> Self;
    /// Round half to even.
    fn round(self) -> Self;
    fn trunc(self) -> Self;
    /// Clears the sign bit.
    fn abs(self) -> Self;
    /// Flips the sign bit.
    fn neg(self) -> Self;
    /// Only the sign bit of each lane (±0).
    fn sign_bit(self) -> Self;
    /// Bitwise exclusive or (with [`Vector::sign_bit`]: applies a sign).
    fn xor(self, b: Self) -> Self;

    fn lt(self, b: Self) -> Self::Mask;
    fn le(self, b: Self) -> Self::Mask;
    fn gt(self, b: Self) -> Self::Mask;
    fn ge(self, b: Self) -> Self::Mask;
    fn eq(self, b: Self) -> Self::Mask;
    fn is_nan(self) -> Self::Mask;
    /// `a` where `m` is set, else `b`.
    fn select(m: Self::Mask, a: Self, b: Self) -> Self;

    /// `self * 2^n` for lanes of `n` holding integers in [-252, 254], rounded once (so
    /// correctly into the subnormal range and to infinity on overflow).
    fn ldexp(self, n: Self) -> Self;
    /// For positive normal finite lanes: `(m, e)` with `self = m * 2^e`, `m` in [1, 2).
    fn frexp(self) -> (Self, Self);

    /// The sum of the lanes.
    fn sum_lanes(self) -> f32;
    /// Lane `i` is the sum of the lanes of `v[i]`, for `LANES` vectors: many vectors'
    /// sums in a few shuffles and additions each, where [`Vector::sum_lanes`] of each
    /// makes a chain of dependent instructions per vector.
    fn lane_sums(v: &[Self]) -> Self;
    /// Lane `l` is lane `index[l]` of `self` (each index below `LANES`).
    fn permute(self, index: Self::Words) -> Self;

    /// Reads `LANES` words; `ptr` needs no alignment.
    ///
    /// # Safety
    /// `ptr` must be valid for reading `LANES` u32 values.
    unsafe fn load_words(ptr: *const u32) -> Self::Words;
    /// Reads `LANES` bfloat16 values (their bits) as f32; `ptr` needs no alignment.
    ///
    /// # Safety
    /// `ptr` must be valid for reading `LANES` u16 values.
    unsafe fn load_bf16(ptr: *const u16) -> Self;
    /// Reads `LANES` float16 values (their bits) as f32; `ptr` needs no alignment.
    ///
    /// # Safety
    /// `ptr` must be valid for reading `LANES` u16 values, and on the AVX2 path the code
    /// must be compiled with F16C.
    unsafe fn load_f16(ptr: *const u16) -> Self;
    /// Whether [`Vector::levels`] leaves levels in place in half words: the level at bit
    /// `shift` then comes times `2^(shift % 16)`.
    const LEVELS_IN_PLACE: bool;
    /// Whether [`Vector::levels`] can give levels as subnormal floats (see there).
    const SUBNORMAL_LEVELS: bool;
    /// Lane by lane, the levels at one position of packed words (`(words >> shift) &
    /// (2^bits - 1)`, `bits` 2, 4 or 8, `shift + bits` at most 32) as f32. Where
    /// [`Vector::LEVELS_IN_PLACE`], a position of the low half word is masked where it lies
    /// and one of the high half is masked where it lies in the words shifted down 16 (a
    /// shift shared by all of them), so that the level comes times `2^(shift % 16)`: one
    /// instruction fewer than shift and mask. With `subnormal` (only where
    /// [`Vector::SUBNORMAL_LEVELS`]) the masked bits are read as a float, not converted:
    /// a subnormal number `level * 2^(shift % 16 - 149)`, exact as long as the CPU does
    /// not treat subnormal inputs as zero. Called with constant arguments, so that the
    /// steps a position does not need fold away.
    fn levels(words: Self::Words, shift: u32, bits: u32, subnormal: bool) -> Self;

    /// The low and the high half of the lanes as f64.
    fn widen(self) -> (Self::Wide, Self::Wide);
    /// The inverse of [`Vector::widen`], rounding to f32.
    fn narrow(lo: Self::Wide, hi: Self::Wide) -> Self;
}

/// A vector of f64 lanes (half as many as its [`Vector`]).
pub(super) trait Wide:
    Copy + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self>
{
    fn splat(v: f64) -> Self;
    /// Reads half a [`Vector`]'s lane count of values; `ptr` needs no alignment.
    ///
    /// # Safety
    /// `ptr` must be valid for reading that many f64 values.
    unsafe fn load(ptr: *const f64) -> Self;
    /// Writes the lanes; `ptr` needs no alignment.
    ///
    /// # Safety
    /// `ptr` must be valid for writing that many f64 values.
    unsafe fn store(self, ptr: *mut f64);
    /// `self * b + c` with one rounding.
    fn mul_add(self, b: Self, c: Self) -> Self;
    fn sqrt(self) -> Self;
    /// Round half to even.
    fn round(self) -> Self;
    /// The sum of the lanes.
    fn sum(self) -> f64;
}
