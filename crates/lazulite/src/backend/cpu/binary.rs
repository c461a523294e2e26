//! Kernels of the two-input elementwise ops. Both inputs arrive with the same shape
//! (broadcast views) and the same dtype (promoted when the op was recorded).

use super::elementwise::map2;
use super::math::complex;
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::element::{dispatch, Complex, Element};
use crate::error::{Error, Result};
use half::{bf16, f16};

/// The two-input elementwise operations.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Subtract,
    Multiply,
    Divide,
    FloorDivide,
    Remainder,
    Power,
    Maximum,
    Minimum,
    Arctan2,
    LogAddExp,
    Equal,
    NotEqual,
    Less,
    LessEqual,
    Greater,
    GreaterEqual,
    LogicalAnd,
    LogicalOr,
    BitwiseAnd,
    BitwiseOr,
    BitwiseXor,
    LeftShift,
    RightShift,
}

impl BinaryOp {
    /// The MLX function name.
    pub fn name(self) -> &'static str {
        use BinaryOp::*;
        match self {
            Add => "add",
            Subtract => "subtract",
            Multiply => "multiply",
            Divide => "divide",
            FloorDivide => "floor_divide",
            Remainder => "remainder",
            Power => "power",
            Maximum => "maximum",
            Minimum => "minimum",
            Arctan2 => "arctan2",
            LogAddExp => "logaddexp",
            Equal => "equal",
            NotEqual => "not_equal",
            Less => "less",
            LessEqual => "less_equal",
            Greater => "greater",
            GreaterEqual => "greater_equal",
            LogicalAnd => "logical_and",
            LogicalOr => "logical_or",
            BitwiseAnd => "bitwise_and",
            BitwiseOr => "bitwise_or",
            BitwiseXor => "bitwise_xor",
            LeftShift => "left_shift",
            RightShift => "right_shift",
        }
    }

    /// Whether the result is bool whatever the inputs.
    pub fn is_predicate(self) -> bool {
        use BinaryOp::*;
        matches!(
            self,
            Equal | NotEqual | Less | LessEqual | Greater | GreaterEqual | LogicalAnd | LogicalOr
        )
    }

    /// The dtype both inputs are converted to, given their promoted dtype `t`.
    pub fn input_dtype(self, t: DType) -> Result<DType> {
        use BinaryOp::*;
        let name = self.name();
        match self {
            Arctan2 if t.is_complex() => Err(Error::value(format!(
                "[{name}] Not supported for complex64 inputs."
            ))),
            Divide | Arctan2 | LogAddExp => Ok(t.to_inexact()),
            LogicalAnd | LogicalOr => Ok(DType::Bool),
            // MLX shifts bools as uint8: `True << True` is 2.
            LeftShift | RightShift if t.is_bool() => Ok(DType::UInt8),
            // MLX finds this in its kernel, so its users get a RuntimeError.
            BitwiseAnd | BitwiseOr | BitwiseXor | LeftShift | RightShift if t.is_inexact() => {
                Err(Error::runtime(format!(
                    "[{name}] Only allowed on integer or boolean types but got type {t}."
                )))
            }
            Remainder if t.is_complex() => Err(Error::value(format!(
                "[{name}] Complex type not supported."
            ))),
            _ => Ok(t),
        }
    }

    /// The output dtype for inputs of dtype `t` (as given by [`BinaryOp::input_dtype`]).
    pub fn output_dtype(self, t: DType) -> DType {
        if self.is_predicate() {
            DType::Bool
        } else {
            t
        }
    }
}

/// Floor division and remainder of floats together, as NumPy's `divmod`: the remainder
/// has the sign of the divisor (+0 or -0 likewise), the quotient is exact floor division
/// (so `1.0 // 0.1` is 9, as `1.0 == 9 * 0.1 + 0.1` up to rounding), and a zero divisor
/// gives `self / 0` and NaN.
trait FloatDivMod: Sized {
    fn divmod(self, o: Self) -> (Self, Self);
}

/// Arithmetic every element type supports, with NumPy's semantics for its kind.
pub(crate) trait Arith: Element {
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div(self, o: Self) -> Self;
    fn floor_div(self, o: Self) -> Self;
    fn rem(self, o: Self) -> Self;
    fn pow(self, o: Self) -> Self;
    fn max(self, o: Self) -> Self;
    fn min(self, o: Self) -> Self;
    fn atan2(self, o: Self) -> Self;
    fn logaddexp(self, o: Self) -> Self;
    fn lt(self, o: Self) -> bool;
    fn le(self, o: Self) -> bool;
    fn bitand(self, o: Self) -> Self;
    fn bitor(self, o: Self) -> Self;
    fn bitxor(self, o: Self) -> Self;
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
            fn rem(self, o: $t) -> $t {
                if o == 0 { return 0; }
                let r = self.wrapping_rem(o);
                #[allow(unused_comparisons)]
                let adjust = r != 0 && ((r < 0) != (o < 0));
                if adjust { r.wrapping_add(o) } else { r }
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
            fn atan2(self, o: $t) -> $t { (self as f64).atan2(o as f64) as $t }
            #[inline]
            fn logaddexp(self, o: $t) -> $t { Arith::logaddexp(self as f64, o as f64) as $t }
            #[inline]
            fn lt(self, o: $t) -> bool { self < o }
            #[inline]
            fn le(self, o: $t) -> bool { self <= o }
            #[inline]
            fn bitand(self, o: $t) -> $t { self & o }
            #[inline]
            fn bitor(self, o: $t) -> $t { self | o }
            #[inline]
            fn bitxor(self, o: $t) -> $t { self ^ o }
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
            fn rem(self, o: $t) -> $t {
                self.divmod(o).1
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
            #[inline]
            fn lt(self, o: $t) -> bool {
                self < o
            }
            #[inline]
            fn le(self, o: $t) -> bool {
                self <= o
            }
            #[inline]
            fn bitand(self, _: $t) -> $t {
                unreachable!("rejected when recorded")
            }
            #[inline]
            fn bitor(self, _: $t) -> $t {
                unreachable!("rejected when recorded")
            }
            #[inline]
            fn bitxor(self, _: $t) -> $t {
                unreachable!("rejected when recorded")
            }
            #[inline]
            fn shl(self, _: $t) -> $t {
                unreachable!("rejected when recorded")
            }
            #[inline]
            fn shr(self, _: $t) -> $t {
                unreachable!("rejected when recorded")
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
                <$t>::from_f32(self.to_f32() + o.to_f32())
            }
            #[inline]
            fn sub(self, o: $t) -> $t {
                <$t>::from_f32(self.to_f32() - o.to_f32())
            }
            #[inline]
            fn mul(self, o: $t) -> $t {
                <$t>::from_f32(self.to_f32() * o.to_f32())
            }
            #[inline]
            fn div(self, o: $t) -> $t {
                <$t>::from_f32(self.to_f32() / o.to_f32())
            }
            #[inline]
            fn floor_div(self, o: $t) -> $t {
                <$t>::from_f32(self.to_f32().floor_div(o.to_f32()))
            }
            #[inline]
            fn rem(self, o: $t) -> $t {
                <$t>::from_f32(self.to_f32().rem(o.to_f32()))
            }
            #[inline]
            fn pow(self, o: $t) -> $t {
                <$t>::from_f32(self.to_f32().powf(o.to_f32()))
            }
            #[inline]
            fn max(self, o: $t) -> $t {
                <$t>::from_f32(Arith::max(self.to_f32(), o.to_f32()))
            }
            #[inline]
            fn min(self, o: $t) -> $t {
                <$t>::from_f32(Arith::min(self.to_f32(), o.to_f32()))
            }
            #[inline]
            fn atan2(self, o: $t) -> $t {
                <$t>::from_f32(self.to_f32().atan2(o.to_f32()))
            }
            #[inline]
            fn logaddexp(self, o: $t) -> $t {
                <$t>::from_f32(self.to_f32().logaddexp(o.to_f32()))
            }
            #[inline]
            fn lt(self, o: $t) -> bool {
                self < o
            }
            #[inline]
            fn le(self, o: $t) -> bool {
                self <= o
            }
            #[inline]
            fn bitand(self, _: $t) -> $t {
                unreachable!("rejected when recorded")
            }
            #[inline]
            fn bitor(self, _: $t) -> $t {
                unreachable!("rejected when recorded")
            }
            #[inline]
            fn bitxor(self, _: $t) -> $t {
                unreachable!("rejected when recorded")
            }
            #[inline]
            fn shl(self, _: $t) -> $t {
                unreachable!("rejected when recorded")
            }
            #[inline]
            fn shr(self, _: $t) -> $t {
                unreachable!("rejected when recorded")
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
    fn rem(self, _: bool) -> bool {
        false
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
    fn atan2(self, _: bool) -> bool {
        unreachable!("computed in float")
    }
    #[inline]
    fn logaddexp(self, _: bool) -> bool {
        unreachable!("computed in float")
    }
    #[inline]
    fn lt(self, o: bool) -> bool {
        !self & o
    }
    #[inline]
    fn le(self, o: bool) -> bool {
        !self | o
    }
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
    #[inline]
    fn shl(self, _: bool) -> bool {
        unreachable!("computed in uint8")
    }
    #[inline]
    fn shr(self, _: bool) -> bool {
        unreachable!("computed in uint8")
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
    fn rem(self, _: Complex) -> Complex {
        unreachable!("rejected when recorded")
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
    #[inline]
    fn atan2(self, _: Complex) -> Complex {
        unreachable!("rejected when recorded")
    }
    #[inline]
    fn logaddexp(self, o: Complex) -> Complex {
        complex::logaddexp(self, o)
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
    #[inline]
    fn bitand(self, _: Complex) -> Complex {
        unreachable!("rejected when recorded")
    }
    #[inline]
    fn bitor(self, _: Complex) -> Complex {
        unreachable!("rejected when recorded")
    }
    #[inline]
    fn bitxor(self, _: Complex) -> Complex {
        unreachable!("rejected when recorded")
    }
    #[inline]
    fn shl(self, _: Complex) -> Complex {
        unreachable!("rejected when recorded")
    }
    #[inline]
    fn shr(self, _: Complex) -> Complex {
        unreachable!("rejected when recorded")
    }
}

fn arith<T: Arith>(op: BinaryOp, a: Tensor, b: Tensor) -> Result<Tensor> {
    use BinaryOp::*;
    // Each cheap op gets its own instance of `map2` (the function inlined and vectorised);
    // the costly ones share one through a function pointer.
    match op {
        Add => map2(a, b, T::add),
        Subtract => map2(a, b, T::sub),
        Multiply => map2(a, b, T::mul),
        Divide => map2(a, b, T::div),
        Maximum => map2(a, b, T::max),
        Minimum => map2(a, b, T::min),
        BitwiseAnd => map2(a, b, T::bitand),
        BitwiseOr => map2(a, b, T::bitor),
        BitwiseXor => map2(a, b, T::bitxor),
        Equal => map2(a, b, |x: T, y: T| x == y),
        NotEqual => map2(a, b, |x: T, y: T| x != y),
        Less => map2(a, b, T::lt),
        LessEqual => map2(a, b, T::le),
        Greater => map2(a, b, |x: T, y: T| y.lt(x)),
        GreaterEqual => map2(a, b, |x: T, y: T| y.le(x)),
        LogicalAnd => map2(a, b, |x: T, y: T| x.to_bool() && y.to_bool()),
        LogicalOr => map2(a, b, |x: T, y: T| x.to_bool() || y.to_bool()),
        FloorDivide | Remainder | Power | Arctan2 | LogAddExp | LeftShift | RightShift => {
            let f: fn(T, T) -> T = match op {
                FloorDivide => T::floor_div,
                Remainder => T::rem,
                Power => T::pow,
                Arctan2 => T::atan2,
                LogAddExp => T::logaddexp,
                LeftShift => T::shl,
                _ => T::shr,
            };
            map2(a, b, f)
        }
    }
}

/// Computes `op` on two tensors of equal shape and dtype.
pub fn binary(op: BinaryOp, a: Tensor, b: Tensor) -> Result<Tensor> {
    dispatch!(a.dtype, T => arith::<T>(op, a, b))
}
