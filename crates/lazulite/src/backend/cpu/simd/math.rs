//! The math kernels, written once over [`Vector`] and instantiated per instruction set.
//!
//! Cephes/SLEEF style: reduce the argument to a small interval with exact or
//! extra-precise steps, evaluate a polynomial, undo the reduction. The polynomials fit the
//! part of each function left after its exact leading terms; the coefficients come from
//! `tools/simd/fit_polynomials.py` (near-minimax relative error, rounded to f32). Signed
//! zeros, infinities, NaN and subnormals give what `std` gives; every path stays within
//! 2 ulp of the correctly rounded result (see the tests).

use super::vector::{Mask, Vector, Wide};
use super::Kernel;

/// The largest lane count of any instruction set (a stack buffer of this many lanes holds
/// one vector of any of them).
pub(super) const MAX_LANES: usize = 16;

/// `dst[i] = $f(src[i])` a vector at a time; the tail goes through a padded stack buffer.
/// A macro rather than a function taking `impl Fn`, so that `$f` is called directly and
/// inlined into the `#[target_feature]` caller (a function item passed as a value goes
/// through a call shim that is not).
macro_rules! each {
    ($V:ty, $src:expr, $dst:expr, $n:expr, $f:expr) => {{
        let (src, dst, n) = ($src, $dst, $n);
        let lanes = <$V>::LANES;
        let mut i = 0;
        while i + lanes <= n {
            $f(<$V>::load(src.add(i))).store(dst.add(i));
            i += lanes;
        }
        if i < n {
            let mut buf = [0.0f32; MAX_LANES];
            std::ptr::copy_nonoverlapping(src.add(i), buf.as_mut_ptr(), n - i);
            $f(<$V>::load(buf.as_ptr())).store(buf.as_mut_ptr());
            std::ptr::copy_nonoverlapping(buf.as_ptr(), dst.add(i), n - i);
        }
    }};
}

/// Applies `f` to `n` values from `src` into `dst` (which may be `src`). Inlined into each
/// instruction set's `#[target_feature]` entry point.
///
/// # Safety
/// `V`'s instruction set must be supported; `src` and `dst` must be valid for `n` values.
#[inline(always)]
pub(super) unsafe fn run<V: Vector>(f: Kernel, src: *const f32, dst: *mut f32, n: usize) {
    use crate::backend::op::UnaryOp::*;
    match f.op() {
        Exp => each!(V, src, dst, n, exp::<V>),
        Expm1 => each!(V, src, dst, n, expm1::<V>),
        Log => each!(V, src, dst, n, log::<V>),
        Log1p => each!(V, src, dst, n, log1p::<V>),
        Log2 => each!(V, src, dst, n, log2::<V>),
        Log10 => each!(V, src, dst, n, log10::<V>),
        Sin => each!(V, src, dst, n, sin::<V>),
        Cos => each!(V, src, dst, n, cos::<V>),
        Tan => each!(V, src, dst, n, tan::<V>),
        Tanh => each!(V, src, dst, n, tanh::<V>),
        Sinh => each!(V, src, dst, n, sinh::<V>),
        Cosh => each!(V, src, dst, n, cosh::<V>),
        Arctan => each!(V, src, dst, n, arctan::<V>),
        Arcsin => each!(V, src, dst, n, arcsin::<V>),
        Arccos => each!(V, src, dst, n, arccos::<V>),
        Arcsinh => each!(V, src, dst, n, arcsinh::<V>),
        Arccosh => each!(V, src, dst, n, arccosh::<V>),
        Arctanh => each!(V, src, dst, n, arctanh::<V>),
        Erf => each!(V, src, dst, n, erf::<V>),
        Erfinv => each!(V, src, dst, n, erfinv::<V>),
        Sigmoid => each!(V, src, dst, n, sigmoid::<V>),
        Sqrt => each!(V, src, dst, n, V::sqrt),
        Rsqrt => each!(V, src, dst, n, rsqrt::<V>),
        Floor => each!(V, src, dst, n, V::floor),
        Ceil => each!(V, src, dst, n, V::ceil),
        Round => each!(V, src, dst, n, V::round),
        Trunc => each!(V, src, dst, n, V::trunc),
        Abs => each!(V, src, dst, n, V::abs),
        Negative => each!(V, src, dst, n, V::neg),
        Square => each!(V, src, dst, n, square::<V>),
        Sign => each!(V, src, dst, n, sign::<V>),
        Reciprocal => each!(V, src, dst, n, reciprocal::<V>),
        _ => {
            let scalar = f.scalar();
            for i in 0..n {
                *dst.add(i) = scalar(*src.add(i));
            }
        }
    }
}

#[inline(always)]
fn rsqrt<V: Vector>(x: V) -> V {
    V::splat(1.0) / x.sqrt()
}

#[inline(always)]
fn square<V: Vector>(x: V) -> V {
    x * x
}

/// Horner evaluation; `c` from the highest degree down.
#[inline(always)]
fn poly<V: Vector, const N: usize>(x: V, c: [f32; N]) -> V {
    let mut acc = V::splat(c[0]);
    for &k in &c[1..] {
        acc = acc.mul_add(x, V::splat(k));
    }
    acc
}

#[inline(always)]
fn splat<V: Vector>(v: f32) -> V {
    V::splat(v)
}

/// `mag` with the sign of `sign` flipped onto it (`mag` must be non-negative).
#[inline(always)]
fn with_sign_of<V: Vector>(mag: V, sign: V) -> V {
    mag.xor(sign.sign_bit())
}

const LOG2_E: f32 = std::f32::consts::LOG2_E;
/// ln 2 = LN2_HI + LN2_LO; with FMA, `x - n * LN2_HI` is exact for |n| <= 150.
const LN2_HI: f32 = std::f32::consts::LN_2;
const LN2_LO: f32 = -1.904_654_2e-9;

/// expm1(r) = r + r^2 P(r) for |r| <= ln2 / 2.
const EXPM1_P: [f32; 6] = [
    1.975_928e-4,
    1.393_233e-3,
    8.333_548e-3,
    4.166_649_3e-2,
    1.666_666_6e-1,
    5.0e-1,
];

/// `(n, r)` with x = n ln2 + r, |r| <= ln2 / 2 (for |x| <= 104).
#[inline(always)]
fn exp_reduce<V: Vector>(x: V) -> (V, V) {
    let n = (x * splat(LOG2_E)).round();
    let r = n.mul_add(splat(-LN2_HI), x);
    (n, n.mul_add(splat(-LN2_LO), r))
}

#[inline(always)]
fn expm1_poly<V: Vector>(r: V) -> V {
    (r * r).mul_add(poly(r, EXPM1_P), r)
}

/// exp(x) * 2^scale for x in [-104, 90] (beyond that the result is 0 or inf anyway).
#[inline(always)]
fn exp_scaled<V: Vector>(x: V, scale: f32) -> V {
    let (n, r) = exp_reduce(x);
    (expm1_poly(r) + splat(1.0)).ldexp(n + splat(scale))
}

/// `x` clamped to [-104, 90]; NaN stays NaN.
#[inline(always)]
fn exp_domain<V: Vector>(x: V) -> V {
    splat::<V>(-104.0).max(splat::<V>(90.0).min(x))
}

#[inline(always)]
fn exp<V: Vector>(x: V) -> V {
    exp_scaled(exp_domain(x), 0.0)
}

#[inline(always)]
fn expm1<V: Vector>(x: V) -> V {
    let (n, r) = exp_reduce(exp_domain(x));
    let p = expm1_poly(r);
    // expm1(x) = 2^n (p + 1) - 1 = 2^n p + (2^n - 1), rounded once. Past 2^64, 2^n - 1
    // is 2^n and 2^n itself may overflow, so that range scales p + 1 instead.
    let t = splat::<V>(1.0).ldexp(splat::<V>(64.0).min(n));
    let moderate = t.mul_add(p, t - splat(1.0));
    let huge = (p + splat(1.0)).ldexp(n);
    let y = V::select(n.gt(splat(64.0)), huge, moderate);
    V::select(x.eq(splat(0.0)), x, y)
}

const SQRT_2: f32 = std::f32::consts::SQRT_2;
/// log(1 + f) = f - f^2/2 + f^3 P(f) for sqrt(1/2) - 1 <= f <= sqrt(2) - 1.
const LOG_P: [f32; 8] = [
    -7.637_656_5e-2,
    1.276_276_9e-1,
    -1.315_944e-1,
    1.420_149_8e-1,
    -1.662_341_5e-1,
    2.000_124_5e-1,
    -2.500_082e-1,
    3.333_333e-1,
];
/// ln 2 = LOG_LN2_HI + LOG_LN2_LO, with `e * LOG_LN2_HI` exact for |e| <= 2^15.
const LOG_LN2_HI: f32 = 0.693_359_4;
const LOG_LN2_LO: f32 = -2.121_944_4e-4;

/// log(x) = e ln2 + f + t for positive finite `x`, with t = log(1 + f) - f.
/// Returns `(e, f, t)`; `f` is exact.
#[inline(always)]
fn log_parts<V: Vector>(x: V) -> (V, V, V) {
    let subnormal = x.lt(splat(f32::MIN_POSITIVE));
    let x = V::select(subnormal, x * splat(8_388_608.0), x);
    let (m, e) = x.frexp();
    let e = V::select(subnormal, e - splat(23.0), e);
    let big = m.gt(splat(SQRT_2));
    let m = V::select(big, m * splat(0.5), m);
    let e = V::select(big, e + splat(1.0), e);
    let f = m - splat(1.0);
    let z = f * f;
    let t = z.mul_add(splat(-0.5), (z * f) * poly(f, LOG_P));
    (e, f, t)
}

/// Fixes the lanes where `x` (the argument of a logarithm) is not positive and finite:
/// log(±0) = -inf, log(inf) = inf, log(< 0) = log(NaN) = NaN.
#[inline(always)]
fn log_specials<V: Vector>(x: V, y: V) -> V {
    let special = !(x.gt(splat(0.0)) & x.lt(splat(f32::INFINITY)));
    if !special.any() {
        return y;
    }
    let y = V::select(x.eq(splat(0.0)), splat(f32::NEG_INFINITY), y);
    let y = V::select(x.eq(splat(f32::INFINITY)), x, y);
    V::select(x.lt(splat(0.0)) | x.is_nan(), splat(f32::NAN), y)
}

#[inline(always)]
fn log<V: Vector>(x: V) -> V {
    let (e, f, t) = log_parts(x);
    let y = e.mul_add(splat(LOG_LN2_HI), f + e.mul_add(splat(LOG_LN2_LO), t));
    log_specials(x, y)
}

#[inline(always)]
fn log1p<V: Vector>(x: V) -> V {
    let u = x + splat(1.0);
    // u = 1 + x rounded; log(1 + x) = log(u) + c with c = (x - (u - 1)) / u to first order.
    let c = (x - (u - splat(1.0))) / u;
    let (e, f, t) = log_parts(u);
    let y = e.mul_add(splat(LOG_LN2_HI), f + (e.mul_add(splat(LOG_LN2_LO), t) + c));
    let y = log_specials(u, y);
    V::select(x.eq(splat(0.0)), x, y)
}

/// log2(e) = L2E_HI + L2E_LO.
const L2E_HI: f32 = LOG2_E;
const L2E_LO: f32 = 1.925_963e-8;

#[inline(always)]
fn log2<V: Vector>(x: V) -> V {
    let (e, f, t) = log_parts(x);
    // e + (f + t) log2(e), with f * log2(e) carried to double precision.
    let hi = f * splat(L2E_HI);
    let lo = f.mul_add(splat(L2E_HI), hi.neg());
    let lo = t.mul_add(splat(L2E_HI), f.mul_add(splat(L2E_LO), lo));
    log_specials(x, e + (hi + lo))
}

/// log10(e) = L10E_HI + L10E_LO; log10(2) = LG2_HI + LG2_LO with `e * LG2_HI` exact.
const L10E_HI: f32 = std::f32::consts::LOG10_E;
const L10E_LO: f32 = -1.010_305e-8;
const LG2_HI: f32 = 0.301_025_4;
const LG2_LO: f32 = 4.605_039e-6;

#[inline(always)]
fn log10<V: Vector>(x: V) -> V {
    let (e, f, t) = log_parts(x);
    let hi = f * splat(L10E_HI);
    let lo = f.mul_add(splat(L10E_HI), hi.neg());
    let lo = t.mul_add(
        splat(L10E_HI),
        f.mul_add(splat(L10E_LO), e.mul_add(splat(LG2_LO), lo)),
    );
    log_specials(x, e.mul_add(splat(LG2_HI), hi + lo))
}

/// pi/2 = P1 + P2 + P3 in f64; P1 and P2 have 33 significant bits so `q * P1` and
/// `q * P2` are exact for q < 2^20.
const PIO2_P1: f64 = 1.570_796_326_734_125_6;
const PIO2_P2: f64 = 6.077_100_506_303_966e-11;
const PIO2_P3: f64 = 2.022_266_248_795_950_6e-21;
/// Beyond this |x| (q >= 2^20) the lanes are computed by `std`.
const TRIG_LIMIT: f32 = 1_048_576.0;

/// sin(r) = r + r^3 P(r^2), cos(r) = 1 - r^2/2 + r^4 Q(r^2), tan(r) = r + r^3 T(r^2) for
/// |r| <= pi/4.
const SIN_P: [f32; 4] = [
    2.832_775_4e-6,
    -1.985_307_8e-4,
    8.333_379e-3,
    -1.666_666_7e-1,
];
const COS_P: [f32; 4] = [
    -2.888_156_7e-7,
    2.482_202_4e-5,
    -1.388_898e-3,
    4.166_666_8e-2,
];
const TAN_P: [f32; 7] = [
    4.372_562e-3,
    9.847_93e-5,
    1.082_729_7e-2,
    2.128_624_7e-2,
    5.405_891e-2,
    1.333_267_5e-1,
    3.333_335e-1,
];

/// `(q, r)` with w = q pi/2 + r, |r| <= pi/4.
#[inline(always)]
fn reduce_quadrant<W: Wide>(w: W) -> (W, W) {
    let q = (w * W::splat(std::f64::consts::FRAC_2_PI)).round();
    let r = q.mul_add(W::splat(-PIO2_P1), w);
    let r = q.mul_add(W::splat(-PIO2_P2), r);
    (q, q.mul_add(W::splat(-PIO2_P3), r))
}

/// For `a` = |x| <= TRIG_LIMIT: `(q, r_hi, r_lo)` with a = q pi/2 + r, |r| <= pi/4,
/// r = r_hi + r_lo (the reduction runs in f64, so large arguments keep full accuracy).
#[inline(always)]
fn trig_reduce<V: Vector>(a: V) -> (V, V, V) {
    let (lo, hi) = a.widen();
    let (q_lo, r_lo) = reduce_quadrant(lo);
    let (q_hi, r_hi) = reduce_quadrant(hi);
    let r = V::narrow(r_lo, r_hi);
    let (r_back_lo, r_back_hi) = r.widen();
    let tail = V::narrow(r_lo - r_back_lo, r_hi - r_back_hi);
    (V::narrow(q_lo, q_hi), r, tail)
}

/// Lanes with |x| beyond [`TRIG_LIMIT`] (or not finite) recomputed by `scalar`.
#[inline(always)]
fn trig_fallback<V: Vector>(x: V, y: V, scalar: fn(f32) -> f32) -> V {
    let huge = !x.abs().le(splat(TRIG_LIMIT));
    if !huge.any() {
        return y;
    }
    let mut xs = [0.0f32; MAX_LANES];
    let mut ys = [0.0f32; MAX_LANES];
    // SAFETY: the buffers hold MAX_LANES >= V::LANES values.
    unsafe {
        x.store(xs.as_mut_ptr());
        y.store(ys.as_mut_ptr());
    }
    for (yv, &xv) in ys.iter_mut().zip(&xs).take(V::LANES) {
        if xv.abs() > TRIG_LIMIT || xv.is_nan() {
            *yv = scalar(xv);
        }
    }
    // SAFETY: as above.
    unsafe { V::load(ys.as_ptr()) }
}

/// Whether the integer lanes `q` are odd, and whether `q mod 4` is 2 or 3.
#[inline(always)]
fn quadrant<V: Vector>(q: V) -> (V::Mask, V::Mask) {
    let half = q * splat(0.5);
    let quarter = q * splat(0.25);
    (
        half.floor().lt(half),
        (quarter - quarter.floor()).ge(splat(0.5)),
    )
}

/// sin(a) for `a` >= 0 (`shift` 0) or cos(a) (`shift` 1, as cos(a) = sin(a + pi/2)).
#[inline(always)]
fn sin_cos<V: Vector>(a: V, shift: f32) -> V {
    let (q, r, tail) = trig_reduce(a);
    let z = r * r;
    let sin_r = r + (r * z).mul_add(poly(z, SIN_P), tail);
    let w = z.mul_add(poly(z, COS_P), splat(-0.5));
    let cos_r = splat::<V>(1.0) + z.mul_add(w, (r * tail).neg());
    let (odd, negative) = quadrant(q + splat(shift));
    let y = V::select(odd, cos_r, sin_r);
    V::select(negative, y.neg(), y)
}

#[inline(always)]
fn sin<V: Vector>(x: V) -> V {
    let y = sin_cos(x.abs(), 0.0).xor(x.sign_bit());
    trig_fallback(x, y, f32::sin)
}

#[inline(always)]
fn cos<V: Vector>(x: V) -> V {
    trig_fallback(x, sin_cos(x.abs(), 1.0), f32::cos)
}

#[inline(always)]
fn tan<V: Vector>(x: V) -> V {
    let (q, r, tail) = trig_reduce(x.abs());
    let z = r * r;
    // tan(r + tail) = tan(r) + tail (1 + tan(r)^2) to first order.
    let t = r + (r * z).mul_add(poly(z, TAN_P), tail.mul_add(z, tail));
    let (odd, _) = quadrant(q);
    let y = V::select(odd, splat::<V>(-1.0) / t, t).xor(x.sign_bit());
    trig_fallback(x, y, f32::tan)
}

/// tanh(x) = x + x^3 P(x^2) for |x| <= 0.625.
const TANH_P: [f32; 6] = [
    2.152_681_1e-3,
    -8.190_013e-3,
    2.170_689_4e-2,
    -5.394_818e-2,
    1.333_322_1e-1,
    -3.333_333e-1,
];

#[inline(always)]
fn tanh<V: Vector>(x: V) -> V {
    let a = x.abs();
    let z = a * a;
    let small = (a * z).mul_add(poly(z, TANH_P), a);
    // 1 - 2 / (e^2a + 1); past a = 10 that is 1 in f32.
    let e = exp_scaled(splat::<V>(10.0).min(a) * splat(2.0), 0.0);
    let large = splat::<V>(1.0) - splat::<V>(2.0) / (e + splat(1.0));
    with_sign_of(V::select(a.lt(splat(0.625)), small, large), x)
}

/// sinh(x) = x + x^3 P(x^2) for |x| <= 1.
const SINH_P: [f32; 5] = [
    9.891_718e-8,
    2.576_988e-6,
    1.985_618_4e-4,
    8.333_284e-3,
    1.666_666_7e-1,
];

#[inline(always)]
fn sinh<V: Vector>(x: V) -> V {
    let a = x.abs();
    let z = a * a;
    let small = (a * z).mul_add(poly(z, SINH_P), a);
    // e = e^a / 2 (scaled in the exponent so it does not overflow before sinh does).
    let e = exp_scaled(splat::<V>(90.0).min(a), -1.0);
    let large = e - splat::<V>(0.25) / e;
    with_sign_of(V::select(a.lt(splat(1.0)), small, large), x)
}

#[inline(always)]
fn cosh<V: Vector>(x: V) -> V {
    let e = exp_scaled(splat::<V>(90.0).min(x.abs()), -1.0);
    e + splat::<V>(0.25) / e
}

/// pi/2 and pi as a sum of two f32.
const PIO2_HI: f32 = std::f32::consts::FRAC_PI_2;
const PIO2_LO: f32 = -4.371_139e-8;
const PI_HI: f32 = std::f32::consts::PI;
const PI_LO: f32 = -8.742_278e-8;

/// atan(t) = t + t^3 P(t^2) for 0 <= t <= 1.
const ATAN_P: [f32; 10] = [
    1.134_522_1e-3,
    -7.425_363e-3,
    2.277_761_7e-2,
    -4.498_325_7e-2,
    6.763_649e-2,
    -8.821_462e-2,
    1.106_123_3e-1,
    -1.428_034_3e-1,
    1.999_971_6e-1,
    -3.333_332_8e-1,
];

#[inline(always)]
fn arctan<V: Vector>(x: V) -> V {
    let a = x.abs();
    // atan(a) = pi/2 - atan(1/a) for a > 1.
    let inverted = a.gt(splat(1.0));
    let t = V::select(inverted, splat::<V>(1.0) / a, a);
    let z = t * t;
    let p = (t * z).mul_add(poly(z, ATAN_P), t);
    let y = V::select(inverted, (splat::<V>(PIO2_LO) - p) + splat(PIO2_HI), p);
    with_sign_of(y, x)
}

/// asin(s) = s + s^3 P(s^2) for 0 <= s <= 1/2.
const ASIN_P: [f32; 5] = [
    4.215_669e-2,
    2.418_562_6e-2,
    4.546_901e-2,
    7.495_31e-2,
    1.666_675_2e-1,
];

/// For `a` = |x|: whether a > 1/2, and `(hi, lo)` with hi + lo = asin(a) for a <= 1/2 or
/// 2 asin(sqrt((1 - a) / 2)) = pi/2 - asin(a) otherwise; `hi` carries the exact leading
/// term so that callers subtracting from pi/2 or pi lose nothing to cancellation.
#[inline(always)]
fn asin_parts<V: Vector>(a: V) -> (V::Mask, V, V) {
    let large = a.gt(splat(0.5));
    let z = V::select(large, a.mul_add(splat(-0.5), splat(0.5)), a * a);
    let s = V::select(large, z.sqrt(), a);
    // sqrt's rounding error, from the exact residual z - s^2.
    let s_lo = s.neg().mul_add(s, z) / splat::<V>(f32::MIN_POSITIVE).max(s + s);
    let s_lo = V::select(large, s_lo, splat(0.0));
    let lo = (s * z).mul_add(poly(z, ASIN_P), s_lo);
    let twice = V::select(large, splat(2.0), splat(1.0));
    (large, s * twice, lo * twice)
}

#[inline(always)]
fn arcsin<V: Vector>(x: V) -> V {
    let (large, hi, lo) = asin_parts(x.abs());
    let from_pio2 = (splat::<V>(PIO2_HI) - hi) + (splat::<V>(PIO2_LO) - lo);
    with_sign_of(V::select(large, from_pio2, hi + lo), x)
}

#[inline(always)]
fn arccos<V: Vector>(x: V) -> V {
    let (large, hi, lo) = asin_parts(x.abs());
    let negative = x.lt(splat(0.0));
    // |x| <= 1/2: pi/2 - asin(x); x > 1/2: hi + lo; x < -1/2: pi - (hi + lo).
    let (base_hi, base_lo) = (
        V::select(
            large,
            V::select(negative, splat(PI_HI), splat(0.0)),
            splat(PIO2_HI),
        ),
        V::select(
            large,
            V::select(negative, splat(PI_LO), splat(0.0)),
            splat(PIO2_LO),
        ),
    );
    let sign = x.sign_bit();
    let flip = V::select(large, sign, sign.xor(splat(-0.0)));
    (base_hi + hi.xor(flip)) + (base_lo + lo.xor(flip))
}

/// erf(a) = a + a P(a^2) for 0 <= a <= 1.
const ERF_P: [f32; 7] = [
    7.806_903e-5,
    -7.997_853e-4,
    5.187_162e-3,
    -2.685_334_7e-2,
    1.128_357_9e-1,
    -3.761_262_6e-1,
    1.283_791_7e-1,
];
/// erf(a) = 1 - exp(-a^2) P(1/a) for 1 <= a <= 4.
const ERFC_P: [f32; 9] = [
    7.047_426_4e-3,
    -5.995_143e-2,
    2.280_323_7e-1,
    -5.066_742_3e-1,
    7.075_738e-1,
    -5.768_723e-1,
    7.424_162e-2,
    5.535_079e-1,
    6.784_167e-4,
];

#[inline(always)]
fn erf<V: Vector>(x: V) -> V {
    let a = x.abs();
    let small = a.mul_add(poly(a * a, ERF_P), a);
    // Past a = 4, erf is 1 in f32.
    let b = splat::<V>(4.0).min(a);
    let z = b * b;
    let z_lo = b.mul_add(b, z.neg());
    // exp(-b^2) with b^2 = z + z_lo exactly.
    let e = exp_scaled(z.neg(), 0.0);
    let e = e.mul_add(z_lo.neg(), e);
    let large = e
        .neg()
        .mul_add(poly(splat::<V>(1.0) / b, ERFC_P), splat(1.0));
    with_sign_of(V::select(a.lt(splat(1.0)), small, large), x)
}

/// erfinv(y) = y P(w - 2.5) for w = -log(1 - y^2) <= 5 (f64 coefficients; relative error
/// 4e-9, from `tools/simd/fit_polynomials.py`).
const ERFINV_CENTRAL: [f64; 11] = [
    4.949_375_213_453_087e-10,
    -8.645_368_828_856_764e-9,
    1.564_249_033_652_257_3e-8,
    4.641_702_770_956_623e-7,
    -3.422_141_341_776_415_6e-6,
    -4.954_254_585_262_458e-6,
    2.182_564_615_828_581e-4,
    -1.252_757_063_634_339_5e-3,
    -4.177_320_513_229_029e-3,
    2.466_402_929_346_079_6e-1,
    1.501_409_351_384_779_7,
];

/// erfinv(y) = y Q(sqrt(w) - 3) for 5 <= w <= 16 (|y| up to 1 - 2^-24; relative error
/// 5e-9).
const ERFINV_TAIL: [f64; 11] = [
    -2.846_932_112_651_782_4e-5,
    1.585_271_328_563_411e-4,
    -2.776_204_475_941_248e-4,
    -1.178_301_173_268_107_2e-4,
    1.474_361_074_611_72e-3,
    -3.567_849_694_737_762_7e-3,
    5.688_058_584_473_386_5e-3,
    -7.642_677_125_778_805e-3,
    9.445_257_901_381_355e-3,
    1.001_675_234_335_913_7,
    2.832_976_802_291_715,
];

/// Horner evaluation in f64 lanes; `c` from the highest degree down.
#[inline(always)]
fn poly_wide<W: Wide, const N: usize>(x: W, c: [f64; N]) -> W {
    let mut acc = W::splat(c[0]);
    for &k in &c[1..] {
        acc = acc.mul_add(x, W::splat(k));
    }
    acc
}

/// log(w) for the f64 lanes `lo` and `hi` (the halves of one vector; each positive and
/// finite once rounded to f32): the exact parts of the f32
/// logarithm of the rounded value t, assembled in f64, plus (w - t) / t for the rounding.
/// The only errors left are the small tail of the f32 logarithm's polynomial and f64
/// roundings, so narrowing the result to f32 rounds it once.
#[inline(always)]
fn log_wide<V: Vector>(lo: V::Wide, hi: V::Wide) -> (V::Wide, V::Wide) {
    let t = V::narrow(lo, hi);
    let (e, f, r) = log_parts(t);
    let inv_t = splat::<V>(1.0) / t;
    let assemble = |w: V::Wide, e: V::Wide, f: V::Wide, r: V::Wide, t: V::Wide, inv: V::Wide| {
        let log = e.mul_add(V::Wide::splat(std::f64::consts::LN_2), f) + r;
        (w - t).mul_add(inv, log)
    };
    let (e, f, r, t, inv_t) = (e.widen(), f.widen(), r.widen(), t.widen(), inv_t.widen());
    (
        assemble(lo, e.0, f.0, r.0, t.0, inv_t.0),
        assemble(hi, e.1, f.1, r.1, t.1, inv_t.1),
    )
}

/// Inverse error function. The f32 steps are exact or feed only small corrections; the
/// logarithm is assembled and the polynomials evaluated in f64, so the result is the
/// approximation rounded once.
#[inline(always)]
fn erfinv<V: Vector>(y: V) -> V {
    let a = y.abs();
    let (a_lo, a_hi) = a.widen();
    // 1 - a^2 in f64: a^2 is exact there, so this is rounded once.
    let one_minus_sq = |a: V::Wide| (V::Wide::splat(0.0) - a).mul_add(a, V::Wide::splat(1.0));
    let (log_lo, log_hi) = log_wide::<V>(one_minus_sq(a_lo), one_minus_sq(a_hi));
    let (w_lo, w_hi) = (V::Wide::splat(0.0) - log_lo, V::Wide::splat(0.0) - log_hi);
    let central = |w: V::Wide, a: V::Wide| a * poly_wide(w - V::Wide::splat(2.5), ERFINV_CENTRAL);
    let mut x = V::narrow(central(w_lo, a_lo), central(w_hi, a_hi));
    let w32 = V::narrow(w_lo, w_hi);
    let tail = w32.ge(splat(5.0));
    if tail.any() {
        // sqrt(w) to f64 precision: the f32 root plus one Newton correction.
        let s = w32.sqrt();
        let half_inv = splat::<V>(0.5) / s;
        let (s, half_inv) = (s.widen(), half_inv.widen());
        let tail_x = |w: V::Wide, s: V::Wide, h: V::Wide, a: V::Wide| {
            let root = (w - s * s).mul_add(h, s);
            a * poly_wide(root - V::Wide::splat(3.0), ERFINV_TAIL)
        };
        let far = V::narrow(
            tail_x(w_lo, s.0, half_inv.0, a_lo),
            tail_x(w_hi, s.1, half_inv.1, a_hi),
        );
        x = V::select(tail, far, x);
    }
    let x = V::select(a.eq(splat(1.0)), splat(f32::INFINITY), x);
    let x = V::select(a.gt(splat(1.0)) | a.is_nan(), splat(f32::NAN), x);
    with_sign_of(x, y)
}

/// Below this magnitude asinh(x) = x (1 - x^2/6 + ...) and atanh(x) = x (1 + x^2/3 + ...)
/// are within an ulp of x; above it, the f64 arguments of their logarithms keep ample
/// digits of the difference from 1.
const HYPERBOLIC_TINY: f32 = 1.0 / 4096.0;

/// (a + sqrt(a^2 + 1)) / 2, asinh's logarithm argument halved. (This and the other
/// argument functions are named functions, not closures: a closure is not inlined into the
/// `#[target_feature]` caller, and its intrinsics become calls.)
#[inline(always)]
fn asinh_half_arg<W: Wide>(a: W) -> W {
    (a + a.mul_add(a, W::splat(1.0)).sqrt()) * W::splat(0.5)
}

/// (x + sqrt(x^2 - 1)) / 2, acosh's logarithm argument halved.
#[inline(always)]
fn acosh_half_arg<W: Wide>(x: W) -> W {
    (x + x.mul_add(x, W::splat(-1.0)).sqrt()) * W::splat(0.5)
}

/// (1 + a) / (1 - a), atanh's logarithm argument doubled.
#[inline(always)]
fn atanh_twice_arg<W: Wide>(a: W) -> W {
    (W::splat(1.0) + a) / (W::splat(1.0) - a)
}

/// log(w 2^scale) in f32 for the f64 lanes `lo` and `hi` (the halves of one vector; each
/// positive and finite once rounded to f32), as [`log1p`] does: the logarithm of the f32
/// rounding t of w plus (w - t) / t for that rounding.
#[inline(always)]
fn log_of_wide<V: Vector>((lo, hi): (V::Wide, V::Wide), scale: f32) -> V {
    let t = V::narrow(lo, hi);
    let (t_lo, t_hi) = t.widen();
    let c = V::narrow(lo - t_lo, hi - t_hi) / t;
    let (e, f, r) = log_parts(t);
    let e = e + splat(scale);
    e.mul_add(splat(LOG_LN2_HI), f + (e.mul_add(splat(LOG_LN2_LO), r) + c))
}

#[inline(always)]
fn arcsinh<V: Vector>(x: V) -> V {
    let a = x.abs();
    // asinh(a) = log(a + sqrt(a^2 + 1)), the argument formed in f64 lanes, where a^2 does
    // not overflow and 1 + a^2 keeps a^2's digits, and halved to stay within f32's range.
    let (lo, hi) = a.widen();
    let y = log_of_wide((asinh_half_arg(lo), asinh_half_arg(hi)), 1.0);
    // Tiny lanes (signed zeros, subnormals) are a itself, as are infinities and NaN.
    let y = V::select(
        a.ge(splat(HYPERBOLIC_TINY)) & a.lt(splat(f32::INFINITY)),
        y,
        a,
    );
    with_sign_of(y, x)
}

#[inline(always)]
fn arccosh<V: Vector>(x: V) -> V {
    // acosh(x) = log(x + sqrt(x^2 - 1)); in f64 lanes x^2 - 1 is exact for x < 2, where the
    // subtraction cancels. The argument is halved as for asinh.
    let (lo, hi) = x.widen();
    let y = log_of_wide((acosh_half_arg(lo), acosh_half_arg(hi)), 1.0);
    let y = V::select(x.eq(splat(f32::INFINITY)), x, y);
    V::select(x.lt(splat(1.0)) | x.is_nan(), splat(f32::NAN), y)
}

#[inline(always)]
fn arctanh<V: Vector>(x: V) -> V {
    let a = x.abs();
    // atanh(a) = log((1 + a) / (1 - a)) / 2; in f64 lanes 1 + a and 1 - a are exact and the
    // quotient is rounded once.
    let (lo, hi) = a.widen();
    let y = log_of_wide::<V>((atanh_twice_arg(lo), atanh_twice_arg(hi)), 0.0) * splat(0.5);
    let y = V::select(a.lt(splat(HYPERBOLIC_TINY)), a, y);
    let y = V::select(a.eq(splat(1.0)), splat(f32::INFINITY), y);
    let y = V::select(a.gt(splat(1.0)) | a.is_nan(), splat(f32::NAN), y);
    with_sign_of(y, x)
}

/// 1 for positive lanes, -1 for negative ones, 0 for ±0 (unsigned, as NumPy), NaN for NaN.
#[inline(always)]
fn sign<V: Vector>(x: V) -> V {
    // NaN compares false both ways, so it gets 0 (MLX's sign of NaN).
    let y = V::select(x.gt(splat(0.0)), splat(1.0), splat(0.0));
    V::select(x.lt(splat(0.0)), splat(-1.0), y)
}

#[inline(always)]
fn reciprocal<V: Vector>(x: V) -> V {
    V::splat(1.0) / x
}

#[inline(always)]
fn sigmoid<V: Vector>(x: V) -> V {
    // 1 / (1 + e^-x) for x >= 0 and e^x / (1 + e^x) below, with e^-|x| <= 1 both times.
    let e = exp(x.abs().neg());
    let numerator = V::select(x.ge(splat(0.0)), splat(1.0), e);
    numerator / (splat::<V>(1.0) + e)
}
