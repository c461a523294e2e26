//! Kernels of the two-input elementwise ops. Both inputs arrive with the same shape
//! (broadcast views) and the same dtype (promoted when the op was recorded). Each op is
//! computed for the element types it is defined on: arithmetic and comparisons for all,
//! the remainder for real numbers, `arctan2` and `logaddexp` for floats (and complex
//! numbers for `logaddexp`), bitwise ops for integers and bools, shifts for integers.

use super::elementwise::map2;
use super::math::complex;
use crate::backend::op::BinaryOp;
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::element::{dispatch, Complex, Element, F32Lane};
use crate::error::{Error, Result};
use half::{bf16, f16};

/// Floor division and remainder of floats together, as NumPy's `divmod`: the remainder
/// has the sign of the divisor (+0 or -0 likewise), the quotient is exact floor division
/// (so `1.0 // 0.1` is 9, as `1.0 == 9 * 0.1 + 0.1` up to rounding), and a zero divisor
/// gives `self / 0` and NaN.
trait FloatDivMod: Sized {
    fn divmod(self, o: Self) -> (Self, Self);
}

/// Arithmetic and order every element type has, with NumPy's semantics for its kind.
pub(crate) trait Arith: Element {
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div(self, o: Self) -> Self;
    fn floor_div(self, o: Self) -> Self;
    fn pow(self, o: Self) -> Self;
    fn max(self, o: Self) -> Self;
    fn min(self, o: Self) -> Self;
    fn lt(self, o: Self) -> bool;
    fn le(self, o: Self) -> bool;
}

/// The remainder with the sign of the divisor (real numbers).
trait Rem: Element {
    fn rem(self, o: Self) -> Self;
}

/// The two-argument float functions.
trait FloatPair: Element {
    fn atan2(self, o: Self) -> Self;
    fn logaddexp(self, o: Self) -> Self;
}

/// Bitwise and, or and xor (integers and bools).
trait Bits: Element {
    fn bitand(self, o: Self) -> Self;
    fn bitor(self, o: Self) -> Self;
    fn bitxor(self, o: Self) -> Self;
}

/// Shifts (integers).
trait Shift: Element {
    fn shl(self, o: Self) -> Self;
    fn shr(self, o: Self) -> Self;
}

macro_rules! int_arith {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            #[inline]
            fn add(self, o: $t) -> $t { self.wrapping_add(o) }
            #[inline]
            fn sub(self, o: $t) -> $t { self.wrapping_sub(o) }
            #[inline]
            fn mul(self, o: $t) -> $t { self.wrapping_mul(o) }
            #[inline]
            fn div(self, o: $t) -> $t { self.floor_div(o) }
            #[inline]
            fn floor_div(self, o: $t) -> $t {
                // Division by zero gives 0, as NumPy (which also warns).
                if o == 0 { return 0; }
                let q = self.wrapping_div(o);
                #[allow(unused_comparisons)]
                let adjust = (self.wrapping_rem(o) != 0) && ((self < 0) != (o < 0));
                if adjust { q.wrapping_sub(1) } else { q }
            }
            #[inline]
            fn pow(self, o: $t) -> $t {
                #[allow(unused_comparisons)]
                if o < 0 {
                    // Integer results of negative powers: only 1 and -1 are not 0.
                    return match self as i64 {
                        1 => 1,
                        -1 => if (o as i64) % 2 == 0 { 1 } else { self },
                        _ => 0,
                    };
                }
                let (mut base, mut exp, mut acc) = (self, o as u64, 1 as $t);
                while exp > 0 {
                    if exp & 1 == 1 { acc = acc.wrapping_mul(base); }
                    base = base.wrapping_mul(base);
                    exp >>= 1;
                }
                acc
            }
            #[inline]
            fn max(self, o: $t) -> $t { Ord::max(self, o) }
            #[inline]
            fn min(self, o: $t) -> $t { Ord::min(self, o) }
            #[inline]
            fn lt(self, o: $t) -> bool { self < o }
            #[inline]
            fn le(self, o: $t) -> bool { self <= o }
        }

        impl Rem for $t {
            #[inline]
            fn rem(self, o: $t) -> $t {
                if o == 0 { return 0; }
                let r = self.wrapping_rem(o);
                #[allow(unused_comparisons)]
                let adjust = r != 0 && ((r < 0) != (o < 0));
                if adjust { r.wrapping_add(o) } else { r }
            }
        }

        impl Bits for $t {
            #[inline]
            fn bitand(self, o: $t) -> $t { self & o }
            #[inline]
            fn bitor(self, o: $t) -> $t { self | o }
            #[inline]
            fn bitxor(self, o: $t) -> $t { self ^ o }
        }

        impl Shift for $t {
            #[inline]
            fn shl(self, o: $t) -> $t {
                let bits = 8 * std::mem::size_of::<$t>() as u64;
                if (o as u64) >= bits { 0 } else { self.wrapping_shl(o as u32) }
            }
            #[inline]
            fn shr(self, o: $t) -> $t {
                let bits = 8 * std::mem::size_of::<$t>() as u64;
                #[allow(unused_comparisons)]
                let fill = if self < 0 { !0 } else { 0 };
                if (o as u64) >= bits { fill } else { self.wrapping_shr(o as u32) }
            }
        }
    )*};
}
int_arith!(u8, u16, u32, u64, i8, i16, i32, i64);

macro_rules! float_arith {
    ($t:ty) => {
        impl FloatDivMod for $t {
            #[inline]
            fn divmod(self, o: $t) -> ($t, $t) {
                let m = self % o;
                if o == 0.0 {
                    return (self / o, m);
                }
                // `self - m` is very nearly a multiple of `o`; the quotient is snapped to
                // the nearest integer below.
                let mut div = (self - m) / o;
                let mut m = m;
                if m != 0.0 {
                    if (o < 0.0) != (m < 0.0) {
                        m += o;
                        div -= 1.0;
                    }
                } else {
                    m = (0.0 as $t).copysign(o);
                }
                let q = if div != 0.0 {
                    let f = div.floor();
                    if div - f > 0.5 {
                        f + 1.0
                    } else {
                        f
                    }
                } else {
                    (0.0 as $t).copysign(self / o)
                };
                (q, m)
            }
        }

        impl Arith for $t {
            #[inline]
            fn add(self, o: $t) -> $t {
                self + o
            }
            #[inline]
            fn sub(self, o: $t) -> $t {
                self - o
            }
            #[inline]
            fn mul(self, o: $t) -> $t {
                self * o
            }
            #[inline]
            fn div(self, o: $t) -> $t {
                self / o
            }
            #[inline]
            fn floor_div(self, o: $t) -> $t {
                self.divmod(o).0
            }
            #[inline]
            fn pow(self, o: $t) -> $t {
                self.powf(o)
            }
            #[inline]
            fn max(self, o: $t) -> $t {
                if self.is_nan() || o.is_nan() {
                    <$t>::NAN
                } else {
                    self.max(o)
                }
            }
            #[inline]
            fn min(self, o: $t) -> $t {
                if self.is_nan() || o.is_nan() {
                    <$t>::NAN
                } else {
                    self.min(o)
                }
            }
            #[inline]
            fn lt(self, o: $t) -> bool {
                self < o
            }
            #[inline]
            fn le(self, o: $t) -> bool {
                self <= o
            }
        }

        impl Rem for $t {
            #[inline]
            fn rem(self, o: $t) -> $t {
                self.divmod(o).1
            }
        }

        impl FloatPair for $t {
            #[inline]
            fn atan2(self, o: $t) -> $t {
                self.atan2(o)
            }
            #[inline]
            fn logaddexp(self, o: $t) -> $t {
                if self == o {
                    // Also for two infinities of the same sign, where self - o is NaN.
                    return self + std::f64::consts::LN_2 as $t;
                }
                let d = self - o;
                if d > 0.0 {
                    self + (-d).exp().ln_1p()
                } else if d <= 0.0 {
                    o + d.exp().ln_1p()
                } else {
                    d
                }
            }
        }
    };
}
float_arith!(f32);
float_arith!(f64);

/// Half-precision arithmetic computes in f32 and rounds the result once.
macro_rules! half_arith {
    ($t:ty) => {
        impl Arith for $t {
            #[inline]
            fn add(self, o: $t) -> $t {
                <$t>::narrow(self.widen() + o.widen())
            }
            #[inline]
            fn sub(self, o: $t) -> $t {
                <$t>::narrow(self.widen() - o.widen())
            }
            #[inline]
            fn mul(self, o: $t) -> $t {
                <$t>::narrow(self.widen() * o.widen())
            }
            #[inline]
            fn div(self, o: $t) -> $t {
                <$t>::narrow(self.widen() / o.widen())
            }
            #[inline]
            fn floor_div(self, o: $t) -> $t {
                <$t>::narrow(self.widen().floor_div(o.widen()))
            }
            #[inline]
            fn pow(self, o: $t) -> $t {
                <$t>::narrow(self.widen().powf(o.widen()))
            }
            #[inline]
            fn max(self, o: $t) -> $t {
                <$t>::narrow(Arith::max(self.widen(), o.widen()))
            }
            #[inline]
            fn min(self, o: $t) -> $t {
                <$t>::narrow(Arith::min(self.widen(), o.widen()))
            }
            #[inline]
            fn lt(self, o: $t) -> bool {
                self < o
            }
            #[inline]
            fn le(self, o: $t) -> bool {
                self <= o
            }
        }

        impl Rem for $t {
            #[inline]
            fn rem(self, o: $t) -> $t {
                <$t>::narrow(self.widen().rem(o.widen()))
            }
        }

        impl FloatPair for $t {
            #[inline]
            fn atan2(self, o: $t) -> $t {
                <$t>::narrow(self.widen().atan2(o.widen()))
            }
            #[inline]
            fn logaddexp(self, o: $t) -> $t {
                <$t>::narrow(self.widen().logaddexp(o.widen()))
            }
        }
    };
}
half_arith!(f16);
half_arith!(bf16);

/// Bool arithmetic stays bool, as in MLX: `+` is or, `*` is and, `-` is xor.
impl Arith for bool {
    #[inline]
    fn add(self, o: bool) -> bool {
        self | o
    }
    #[inline]
    fn sub(self, o: bool) -> bool {
        self ^ o
    }
    #[inline]
    fn mul(self, o: bool) -> bool {
        self & o
    }
    #[inline]
    fn div(self, o: bool) -> bool {
        self & o
    }
    #[inline]
    fn floor_div(self, o: bool) -> bool {
        self & o
    }
    #[inline]
    fn pow(self, o: bool) -> bool {
        self | !o
    }
    #[inline]
    fn max(self, o: bool) -> bool {
        self | o
    }
    #[inline]
    fn min(self, o: bool) -> bool {
        self & o
    }
    #[inline]
    fn lt(self, o: bool) -> bool {
        !self & o
    }
    #[inline]
    fn le(self, o: bool) -> bool {
        !self | o
    }
}

impl Rem for bool {
    #[inline]
    fn rem(self, _: bool) -> bool {
        false
    }
}

impl Bits for bool {
    #[inline]
    fn bitand(self, o: bool) -> bool {
        self & o
    }
    #[inline]
    fn bitor(self, o: bool) -> bool {
        self | o
    }
    #[inline]
    fn bitxor(self, o: bool) -> bool {
        self ^ o
    }
}

impl Arith for Complex {
    #[inline]
    fn add(self, o: Complex) -> Complex {
        complex::add(self, o)
    }
    #[inline]
    fn sub(self, o: Complex) -> Complex {
        complex::sub(self, o)
    }
    #[inline]
    fn mul(self, o: Complex) -> Complex {
        complex::mul(self, o)
    }
    #[inline]
    fn div(self, o: Complex) -> Complex {
        complex::div(self, o)
    }
    #[inline]
    fn floor_div(self, o: Complex) -> Complex {
        // MLX's floor division of complex numbers is plain division (nothing is floored).
        complex::div(self, o)
    }
    #[inline]
    fn pow(self, o: Complex) -> Complex {
        if o == Complex::default() {
            return Complex::new(1.0, 0.0);
        }
        if self == Complex::default() {
            // As NumPy: 0 to a positive real power is 0; to any other power, NaN.
            return if o.re > 0.0 && o.im == 0.0 {
                Complex::default()
            } else {
                Complex::new(f32::NAN, f32::NAN)
            };
        }
        complex::exp(complex::mul(o, complex::log(self)))
    }
    /// As NumPy: the lexicographic maximum; NaN in either part of either input wins.
    #[inline]
    fn max(self, o: Complex) -> Complex {
        if o.le(self) || self.re.is_nan() || self.im.is_nan() {
            self
        } else {
            o
        }
    }
    #[inline]
    fn min(self, o: Complex) -> Complex {
        if self.le(o) || self.re.is_nan() || self.im.is_nan() {
            self
        } else {
            o
        }
    }
    /// Lexicographic order (real part first), false whenever a NaN is involved, as NumPy
    /// (MLX orders the same way).
    #[inline]
    fn lt(self, o: Complex) -> bool {
        let no_nan_im = !self.im.is_nan() && !o.im.is_nan();
        (self.re < o.re && no_nan_im) || (self.re == o.re && self.im < o.im)
    }
    #[inline]
    fn le(self, o: Complex) -> bool {
        let no_nan_im = !self.im.is_nan() && !o.im.is_nan();
        (self.re < o.re && no_nan_im) || (self.re == o.re && self.im <= o.im)
    }
}

/// `$body` with `$t` the element type of `$dtype` if it is one of the listed types, as
/// `Some`; `None` for the other types.
macro_rules! for_types {
    ($dtype:expr, $t:ident in [$($ty:ty),*] => $body:expr) => {{
        let dtype = $dtype;
        $(if dtype == <$ty as Element>::DTYPE {
            type $t = $ty;
            Some($body)
        } else)* {
            None
        }
    }};
}

/// What an op's element function is applied to: two whole tensors (the kernel), or one
/// pair of elements (a one-element computation that needs no tensor). One table of ops
/// below serves both, so a value computed either way is the same.
trait Pairs {
    type Output;
    /// `f` applied to every pair, the inputs read as `T`.
    fn apply<T: Element, O: Element>(self, f: impl Fn(T, T) -> O + Sync) -> Self::Output;
    /// The one value every second input holds, read as `T`, if it holds one value.
    fn second_value<T: Element>(&self) -> Option<T>;
}

/// Both inputs of a kernel.
struct Tensors(Tensor, Tensor);

impl Pairs for Tensors {
    type Output = Result<Tensor>;
    fn apply<T: Element, O: Element>(self, f: impl Fn(T, T) -> O + Sync) -> Result<Tensor> {
        map2(self.0, self.1, f)
    }
    fn second_value<T: Element>(&self) -> Option<T> {
        let t = &self.1;
        let one_value = t
            .shape
            .iter()
            .zip(&t.strides)
            .all(|(&n, &s)| n == 1 || s == 0);
        (one_value && t.size() > 0).then(|| t.get::<T>(0))
    }
}

/// One element of each input, as the bytes of its storage (little end first, the rest
/// zero).
struct OnePair {
    a: [u8; 8],
    b: [u8; 8],
}

impl Pairs for OnePair {
    type Output = [u8; 8];
    fn apply<T: Element, O: Element>(self, f: impl Fn(T, T) -> O + Sync) -> [u8; 8] {
        store_one(f(load_one::<T>(&self.a), load_one::<T>(&self.b)))
    }
    fn second_value<T: Element>(&self) -> Option<T> {
        Some(load_one(&self.b))
    }
}

/// The element of type `T` whose storage starts `bytes`.
fn load_one<T: Element>(bytes: &[u8; 8]) -> T {
    T::load(bytemuck::pod_read_unaligned(
        &bytes[..std::mem::size_of::<T::Storage>()],
    ))
}

/// The storage of `v` as [`binary_one`] takes and gives it: little end first, the rest
/// zero.
pub(crate) fn store_one<T: Element>(v: T) -> [u8; 8] {
    let mut bytes = [0u8; 8];
    bytes[..std::mem::size_of::<T::Storage>()].copy_from_slice(bytemuck::bytes_of(&v.store()));
    bytes
}

/// The ops every element type has.
fn arith<T: Arith, P: Pairs>(op: BinaryOp, p: P) -> Option<P::Output> {
    use BinaryOp::*;
    // Each cheap op gets its own instance of `map2` (the function inlined and vectorised);
    // the costly ones share one through a function pointer.
    Some(match op {
        Add => p.apply(T::add),
        Subtract => p.apply(T::sub),
        Multiply => p.apply(T::mul),
        Divide => p.apply(T::div),
        Maximum => p.apply(T::max),
        Minimum => p.apply(T::min),
        Equal => p.apply(|x: T, y: T| x == y),
        NotEqual => p.apply(|x: T, y: T| x != y),
        Less => p.apply(T::lt),
        LessEqual => p.apply(T::le),
        Greater => p.apply(|x: T, y: T| y.lt(x)),
        GreaterEqual => p.apply(|x: T, y: T| y.le(x)),
        LogicalAnd => p.apply(|x: T, y: T| x.to_bool() && y.to_bool()),
        LogicalOr => p.apply(|x: T, y: T| x.to_bool() || y.to_bool()),
        FloorDivide => p.apply(T::floor_div as fn(T, T) -> T),
        Power => p.apply(T::pow as fn(T, T) -> T),
        _ => return None,
    })
}

fn bits<T: Bits, P: Pairs>(op: BinaryOp, p: P) -> P::Output {
    match op {
        BinaryOp::BitwiseAnd => p.apply(T::bitand),
        BinaryOp::BitwiseOr => p.apply(T::bitor),
        _ => p.apply(T::bitxor),
    }
}

fn shift<T: Shift, P: Pairs>(op: BinaryOp, p: P) -> P::Output {
    let f: fn(T, T) -> T = if op == BinaryOp::LeftShift {
        T::shl
    } else {
        T::shr
    };
    p.apply(f)
}

fn float_pair<T: FloatPair, P: Pairs>(op: BinaryOp, p: P) -> P::Output {
    let f: fn(T, T) -> T = if op == BinaryOp::Arctan2 {
        T::atan2
    } else {
        T::logaddexp
    };
    p.apply(f)
}

/// `op` applied to `p`, inputs of `dtype`; `None` when the op has no kernel for it.
fn apply<P: Pairs>(op: BinaryOp, dtype: DType, p: P) -> Option<P::Output> {
    use BinaryOp::*;
    match op {
        Remainder => {
            for_types!(dtype, T in [bool, u8, u16, u32, u64, i8, i16, i32, i64, f16, bf16, f32, f64]
            => p.apply(T::rem as fn(T, T) -> T))
        }
        LogAddExp if dtype == DType::Complex64 => {
            Some(p.apply(complex::logaddexp as fn(Complex, Complex) -> Complex))
        }
        Arctan2 | LogAddExp => {
            for_types!(dtype, T in [f16, bf16, f32, f64] => float_pair::<T, P>(op, p))
        }
        BitwiseAnd | BitwiseOr | BitwiseXor => {
            for_types!(dtype, T in [bool, u8, u16, u32, u64, i8, i16, i32, i64] => bits::<T, P>(op, p))
        }
        LeftShift | RightShift => {
            for_types!(dtype, T in [u8, u16, u32, u64, i8, i16, i32, i64] => shift::<T, P>(op, p))
        }
        // `x ** 2` (a loss, a variance) as `x * x`, the exactly rounded square, where libm's
        // `powf` per element took 8% of a convolution's gradient.
        Power
            if for_types!(dtype, T in [f16, bf16, f32, f64]
                => p.second_value::<T>().is_some_and(|v| v.to_f64() == 2.0))
                == Some(true) =>
        {
            for_types!(dtype, T in [f16, bf16, f32, f64] => p.apply(|x: T, _: T| x.mul(x)))
        }
        _ => dispatch!(dtype, T => arith::<T, P>(op, p)),
    }
}

/// Computes `op` on two tensors of equal shape and dtype.
pub fn binary(op: BinaryOp, a: Tensor, b: Tensor) -> Result<Tensor> {
    let dtype = a.dtype;
    apply(op, dtype, Tensors(a, b)).unwrap_or_else(|| {
        Err(Error::runtime(format!(
            "[{op:?}] No CPU kernel for {dtype} inputs."
        )))
    })
}

/// Computes `op` on one element of each input, both of `dtype`, given and returned as the
/// bytes of their storage (little end first, the rest zero); `None` when the op has no
/// kernel for `dtype`. The result is the one [`binary`] computes for the same elements.
pub fn binary_one(op: BinaryOp, dtype: DType, a: [u8; 8], b: [u8; 8]) -> Option<[u8; 8]> {
    apply(op, dtype, OnePair { a, b })
}
