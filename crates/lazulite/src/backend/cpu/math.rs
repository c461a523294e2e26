//! Scalar math for real floats (f32, f64) and complex64: the reference the vectorised
//! kernels are measured against, and the fallback where no vector path exists.

use crate::element::Complex;

/// Real floating types with the functions elementwise ops need.
pub trait Float:
    Copy + PartialOrd + std::ops::Neg<Output = Self> + std::ops::Mul<Output = Self> + 'static
{
    fn sqrt(self) -> Self;
    fn rsqrt(self) -> Self;
    fn exp(self) -> Self;
    fn exp_m1(self) -> Self;
    fn ln(self) -> Self;
    fn ln_1p(self) -> Self;
    fn log2(self) -> Self;
    fn log10(self) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn tan(self) -> Self;
    fn asin(self) -> Self;
    fn acos(self) -> Self;
    fn atan(self) -> Self;
    fn sinh(self) -> Self;
    fn cosh(self) -> Self;
    fn tanh(self) -> Self;
    fn asinh(self) -> Self;
    fn acosh(self) -> Self;
    fn atanh(self) -> Self;
    fn sigmoid(self) -> Self;
    /// `log(1 + exp(x))`, without overflow for large `x`.
    fn softplus(self) -> Self;
    fn erf(self) -> Self;
    fn erfinv(self) -> Self;
    fn floor(self) -> Self;
    fn ceil(self) -> Self;
    /// Round half to even, as NumPy's `round`.
    fn round_even(self) -> Self;
    fn trunc(self) -> Self;
    fn abs(self) -> Self;
    /// -1, 0 or 1 by sign (+0 for both zeros, as NumPy and MLX); NaN stays NaN.
    fn sign(self) -> Self;
    fn recip(self) -> Self;
}

macro_rules! float_impl {
    ($t:ident, $erf:path) => {
        impl Float for $t {
            fn sqrt(self) -> $t {
                $t::sqrt(self)
            }
            fn rsqrt(self) -> $t {
                1.0 / $t::sqrt(self)
            }
            fn exp(self) -> $t {
                $t::exp(self)
            }
            fn exp_m1(self) -> $t {
                $t::exp_m1(self)
            }
            fn ln(self) -> $t {
                $t::ln(self)
            }
            fn ln_1p(self) -> $t {
                $t::ln_1p(self)
            }
            fn log2(self) -> $t {
                $t::log2(self)
            }
            fn log10(self) -> $t {
                $t::log10(self)
            }
            fn sin(self) -> $t {
                $t::sin(self)
            }
            fn cos(self) -> $t {
                $t::cos(self)
            }
            fn tan(self) -> $t {
                $t::tan(self)
            }
            fn asin(self) -> $t {
                $t::asin(self)
            }
            fn acos(self) -> $t {
                $t::acos(self)
            }
            fn atan(self) -> $t {
                $t::atan(self)
            }
            fn sinh(self) -> $t {
                $t::sinh(self)
            }
            fn cosh(self) -> $t {
                $t::cosh(self)
            }
            fn tanh(self) -> $t {
                $t::tanh(self)
            }
            fn asinh(self) -> $t {
                // std's asinh and acosh overflow in an intermediate near the type's maximum;
                // past 2^28 both equal ln(2|x|) to working precision.
                if self.abs() > LARGE as $t {
                    (self.abs().ln() + std::f64::consts::LN_2 as $t).copysign(self)
                } else {
                    $t::asinh(self)
                }
            }
            fn acosh(self) -> $t {
                // glibc's split: std's `ln(x + sqrt(x^2 - 1))` loses digits near x = 1.
                if self.is_nan() || self < 1.0 {
                    <$t>::NAN
                } else if self > LARGE as $t {
                    self.ln() + std::f64::consts::LN_2 as $t
                } else if self < 2.0 {
                    let t = self - 1.0;
                    (t + (2.0 * t + t * t).sqrt()).ln_1p()
                } else {
                    (2.0 * self - 1.0 / (self + (self * self - 1.0).sqrt())).ln()
                }
            }
            fn atanh(self) -> $t {
                // Computed on |x| (std uses x itself, where for x near -1 the ln_1p argument
                // nears -1 and the result loses digits).
                let a = self.abs();
                (0.5 * ((2.0 * a) / (1.0 - a)).ln_1p()).copysign(self)
            }
            fn sigmoid(self) -> $t {
                if self >= 0.0 {
                    1.0 / (1.0 + $t::exp(-self))
                } else {
                    let e = $t::exp(self);
                    e / (1.0 + e)
                }
            }
            fn softplus(self) -> $t {
                if self > 0.0 {
                    self + (-self).exp().ln_1p()
                } else {
                    self.exp().ln_1p()
                }
            }
            fn erf(self) -> $t {
                $erf(self)
            }
            fn erfinv(self) -> $t {
                erfinv_f64(self as f64) as $t
            }
            fn floor(self) -> $t {
                $t::floor(self)
            }
            fn ceil(self) -> $t {
                $t::ceil(self)
            }
            fn round_even(self) -> $t {
                $t::round_ties_even(self)
            }
            fn trunc(self) -> $t {
                $t::trunc(self)
            }
            fn abs(self) -> $t {
                $t::abs(self)
            }
            fn sign(self) -> $t {
                if self > 0.0 {
                    1.0
                } else if self < 0.0 {
                    -1.0
                } else {
                    // ±0 and, as in MLX, NaN.
                    0.0
                }
            }
            fn recip(self) -> $t {
                1.0 / self
            }
        }
    };
}

/// Above this, `asinh(x)` and `acosh(x)` are `ln(2x)` to f64 precision.
const LARGE: f64 = 268_435_456.0;

float_impl!(f32, libm::erff);
float_impl!(f64, libm::erf);

/// Inverse error function: a rational first guess refined by Newton steps on `erf`.
pub fn erfinv_f64(y: f64) -> f64 {
    if y.is_nan() || !(-1.0..=1.0).contains(&y) {
        return f64::NAN;
    }
    if y == 1.0 {
        return f64::INFINITY;
    }
    if y == -1.0 {
        return f64::NEG_INFINITY;
    }
    // Giles (2010), single-precision approximation as the starting point.
    let w = -((1.0 - y) * (1.0 + y)).ln();
    let mut x = if w < 5.0 {
        let w = w - 2.5;
        let mut p = 2.810_226_36e-08;
        for c in [
            3.432_739_39e-07,
            -3.523_387_7e-06,
            -4.391_506_54e-06,
            0.000_218_580_87,
            -0.001_253_725_03,
            -0.004_177_681_64,
            0.246_640_727,
            1.501_409_41,
        ] {
            p = c + p * w;
        }
        p * y
    } else {
        let w = w.sqrt() - 3.0;
        let mut p = -0.000_200_214_257;
        for c in [
            0.000_100_950_558,
            0.001_349_343_22,
            -0.003_673_428_44,
            0.005_739_507_73,
            -0.007_622_461_3,
            0.009_438_870_47,
            1.001_674_06,
            2.832_976_82,
        ] {
            p = c + p * w;
        }
        p * y
    };
    // Newton: f(x) = erf(x) - y, f'(x) = 2/sqrt(pi) exp(-x^2).
    for _ in 0..3 {
        let err = libm::erf(x) - y;
        let d = std::f64::consts::FRAC_2_SQRT_PI * (-x * x).exp();
        if d == 0.0 {
            break;
        }
        x -= err / d;
    }
    x
}

/// Complex arithmetic and the elementary functions complex64 arrays support, computed in
/// f64 and rounded once.
pub mod complex {
    use super::Complex;

    fn c(re: f64, im: f64) -> Complex {
        Complex::new(re as f32, im as f32)
    }
    fn parts(z: Complex) -> (f64, f64) {
        (z.re as f64, z.im as f64)
    }

    pub fn add(a: Complex, b: Complex) -> Complex {
        Complex::new(a.re + b.re, a.im + b.im)
    }
    pub fn sub(a: Complex, b: Complex) -> Complex {
        Complex::new(a.re - b.re, a.im - b.im)
    }
    pub fn mul(a: Complex, b: Complex) -> Complex {
        let ((ar, ai), (br, bi)) = (parts(a), parts(b));
        c(ar * br - ai * bi, ar * bi + ai * br)
    }
    pub fn div(a: Complex, b: Complex) -> Complex {
        let ((ar, ai), (br, bi)) = (parts(a), parts(b));
        let d = br * br + bi * bi;
        if d == 0.0 {
            // Division by zero gives infinities (or NaN for 0/0) per part, as NumPy.
            return c(ar / br.abs(), ai / br.abs());
        }
        c((ar * br + ai * bi) / d, (ai * br - ar * bi) / d)
    }
    pub fn neg(a: Complex) -> Complex {
        Complex::new(-a.re, -a.im)
    }
    pub fn conj(a: Complex) -> Complex {
        Complex::new(a.re, -a.im)
    }
    pub fn abs(a: Complex) -> f32 {
        let (r, i) = parts(a);
        r.hypot(i) as f32
    }
    pub fn exp(a: Complex) -> Complex {
        let (r, i) = parts(a);
        if i == 0.0 {
            // exp(x + 0i) = exp(x) + 0i, also where exp(x) overflows (inf * 0 is NaN).
            return c(r.exp(), i);
        }
        let m = r.exp();
        c(m * i.cos(), m * i.sin())
    }
    /// `exp(z) - 1` without the cancellation of subtracting 1 near z = 0:
    /// the real part is `expm1(x) cos(y) - 2 sin^2(y / 2)`.
    pub fn expm1(a: Complex) -> Complex {
        let (r, i) = parts(a);
        let half = (i / 2.0).sin();
        c(r.exp_m1() * i.cos() - 2.0 * half * half, r.exp() * i.sin())
    }
    pub fn log(a: Complex) -> Complex {
        let (r, i) = parts(a);
        let m = r.hypot(i);
        let re = if (0.5..2.0).contains(&m) {
            // Near |z| = 1, ln|z| = ln1p(|z|^2 - 1) / 2 with |z|^2 - 1 = (a - 1)(a + 1) + b^2
            // for a the larger of |r|, |i| (so a > 0.35): both terms are exact in f64 for
            // f32 parts, and the sum rounds once.
            let (a, b) = if r.abs() >= i.abs() {
                (r.abs(), i)
            } else {
                (i.abs(), r)
            };
            0.5 * ((a - 1.0) * (a + 1.0) + b * b).ln_1p()
        } else {
            m.ln()
        };
        c(re, i.atan2(r))
    }
    /// `log(1 + z)` accurate near z = 0: `ln|1 + z| = ln1p(2x + x^2 + y^2) / 2`.
    pub fn log1p(a: Complex) -> Complex {
        let (r, i) = parts(a);
        let m = (1.0 + r).hypot(i);
        let re = if (0.5..2.0).contains(&m) {
            0.5 * (2.0 * r + r * r + i * i).ln_1p()
        } else {
            m.ln()
        };
        c(re, i.atan2(1.0 + r))
    }
    pub fn sqrt(a: Complex) -> Complex {
        let (r, i) = sqrt_f64(parts(a));
        c(r, i)
    }
    fn div_f64((ar, ai): (f64, f64), (br, bi): (f64, f64)) -> (f64, f64) {
        let d = br * br + bi * bi;
        ((ar * br + ai * bi) / d, (ai * br - ar * bi) / d)
    }
    /// The principal square root of `r + i·i`, in f64.
    fn sqrt_f64((r, i): (f64, f64)) -> (f64, f64) {
        if r == 0.0 && i == 0.0 {
            return (0.0, i);
        }
        // The larger part of the root from sqrt((|z| + |x|) / 2), the other by division:
        // computing both from |z| +- x loses the small one to cancellation.
        let t = ((r.hypot(i) + r.abs()) / 2.0).sqrt();
        if r >= 0.0 {
            (t, i / (2.0 * t))
        } else {
            (i.abs() / (2.0 * t), t.copysign(i))
        }
    }
    pub fn sin(a: Complex) -> Complex {
        let (r, i) = parts(a);
        c(r.sin() * i.cosh(), r.cos() * i.sinh())
    }
    pub fn cos(a: Complex) -> Complex {
        let (r, i) = parts(a);
        c(r.cos() * i.cosh(), -r.sin() * i.sinh())
    }
    pub fn sinh(a: Complex) -> Complex {
        let (r, i) = parts(a);
        if i == 0.0 {
            return c(r.sinh(), i);
        }
        c(r.sinh() * i.cos(), r.cosh() * i.sin())
    }
    pub fn cosh(a: Complex) -> Complex {
        let (r, i) = parts(a);
        if i == 0.0 {
            return c(r.cosh(), r.signum() * i);
        }
        c(r.cosh() * i.cos(), r.sinh() * i.sin())
    }
    /// Beyond this |imaginary part| (|real part| for tanh), tan (tanh) is +-i (+-1) to f64
    /// precision plus an exponentially small other part; sin/cos would overflow to inf/inf.
    const SATURATED: f64 = 20.0;
    pub fn tan(a: Complex) -> Complex {
        let (r, i) = parts(a);
        if i.abs() > SATURATED {
            let e = (-2.0 * i.abs()).exp();
            return c(2.0 * (2.0 * r).sin() * e, 1f64.copysign(i));
        }
        div(sin(a), cos(a))
    }
    pub fn tanh(a: Complex) -> Complex {
        let (r, i) = parts(a);
        if r.abs() > SATURATED {
            let e = (-2.0 * r.abs()).exp();
            return c(1f64.copysign(r), 2.0 * (2.0 * i).sin() * e);
        }
        div(sinh(a), cosh(a))
    }
    /// Multiplication by i, and by -i: the inverse trigonometric functions are the
    /// hyperbolic ones turned a quarter (signed zeros kept, so branch cuts match C's).
    fn times_i(a: Complex) -> Complex {
        Complex::new(-a.im, a.re)
    }
    fn times_minus_i(a: Complex) -> Complex {
        Complex::new(a.im, -a.re)
    }
    /// `asinh(z) = log1p(z + z^2 / (1 + sqrt(z^2 + 1)))`, the argument of `log(z + sqrt(z^2
    /// + 1))` less 1 without cancellation, for z in the right half plane; the left half uses
    /// `asinh(-z) = -asinh(z)`.
    pub fn asinh(a: Complex) -> Complex {
        if a.re < 0.0 || (a.re == 0.0 && a.re.is_sign_negative()) {
            return neg(asinh(neg(a)));
        }
        let (r, i) = parts(a);
        let (zr, zi) = (r * r - i * i, 2.0 * r * i);
        let (sr, si) = sqrt_f64((zr + 1.0, zi));
        let (qr, qi) = div_f64((zr, zi), (1.0 + sr, si));
        log1p(c(r + qr, i + qi))
    }
    pub fn asin(a: Complex) -> Complex {
        times_minus_i(asinh(times_i(a)))
    }
    /// `acosh(z) = log1p((z - 1) + sqrt(z + 1) sqrt(z - 1))`: near z = 1 the logarithm's
    /// argument less 1 is small and computed without cancellation.
    pub fn acosh(a: Complex) -> Complex {
        let (r, i) = parts(a);
        let (pr, pi) = sqrt_f64((r + 1.0, i));
        let (mr, mi) = sqrt_f64((r - 1.0, i));
        log1p(c(r - 1.0 + pr * mr - pi * mi, i + pr * mi + pi * mr))
    }
    /// Kahan's form, `2 atan(Re sqrt(1 - z) / Re sqrt(1 + z))
    /// - i asinh(Im(conj(sqrt(1 + z)) sqrt(1 - z)))`: `pi / 2 - asin(z)` would cancel
    /// near z = 1. `1 - z` negates the imaginary part so a zero keeps its sign.
    pub fn acos(a: Complex) -> Complex {
        let (r, i) = parts(a);
        let (mr, mi) = sqrt_f64((1.0 - r, -i));
        let (pr, pi) = sqrt_f64((1.0 + r, i));
        c(2.0 * mr.atan2(pr), (pr * mi - pi * mr).asinh())
    }
    /// `atanh(z) = (log(1 + z) - log(1 - z)) / 2`; `1 - z` negates the imaginary part
    /// rather than subtracting it, so a zero keeps its sign.
    pub fn atanh(a: Complex) -> Complex {
        let (pr, pi) = parts(log1p(a));
        let (mr, mi) = parts(log1p(neg(a)));
        c((pr - mr) / 2.0, (pi - mi) / 2.0)
    }
    pub fn atan(a: Complex) -> Complex {
        times_minus_i(atanh(times_i(a)))
    }
    /// `log(exp(a) + exp(b))` as the larger (by real part) plus `log1p(exp(smaller - larger))`.
    pub fn logaddexp(a: Complex, b: Complex) -> Complex {
        let (hi, lo) = if a.re >= b.re { (a, b) } else { (b, a) };
        if hi.re == f32::INFINITY || lo.re == f32::NEG_INFINITY {
            return hi;
        }
        add(hi, log1p(exp(sub(lo, hi))))
    }
    /// Sign of a complex number: z / |z| (0 for 0), as NumPy 2.
    pub fn sign(a: Complex) -> Complex {
        let m = abs(a);
        if m == 0.0 {
            Complex::default()
        } else {
            Complex::new(a.re / m, a.im / m)
        }
    }
}
