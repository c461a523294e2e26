//! Kernels of the one-input elementwise ops: for each op a function per kind of element
//! (float, complex, integer, bool) and, for float32-based inputs, a vectorised kernel.

use super::elementwise::map1;
use super::math::{complex, Float};
use super::simd;
use crate::backend::op::UnaryOp;
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::element::{dispatch, Complex, Element, F32Lane};
use crate::error::{Error, Result};
use half::{bf16, f16};

/// The kernel's complex function for `op`, if complex inputs have one.
fn complex_fn(op: UnaryOp) -> Option<fn(Complex) -> Complex> {
    use UnaryOp::*;
    Some(match op {
        Sqrt => complex::sqrt,
        Rsqrt => |z| complex::div(Complex::new(1.0, 0.0), complex::sqrt(z)),
        Reciprocal => |z| complex::div(Complex::new(1.0, 0.0), z),
        Exp => complex::exp,
        Expm1 => complex::expm1,
        Log => complex::log,
        Log1p => complex::log1p,
        Log2 => |z| {
            let l = complex::log(z);
            let k = std::f32::consts::LOG2_E;
            Complex::new(l.re * k, l.im * k)
        },
        Log10 => |z| {
            let l = complex::log(z);
            let k = std::f32::consts::LOG10_E;
            Complex::new(l.re * k, l.im * k)
        },
        Arcsin => complex::asin,
        Arccos => complex::acos,
        Arctan => complex::atan,
        Arcsinh => complex::asinh,
        Arccosh => complex::acosh,
        Arctanh => complex::atanh,
        Sin => complex::sin,
        Cos => complex::cos,
        Tan => complex::tan,
        Sinh => complex::sinh,
        Cosh => complex::cosh,
        Tanh => complex::tanh,
        Negative => complex::neg,
        Sign => complex::sign,
        Square => |z| complex::mul(z, z),
        Conjugate => complex::conj,
        Round => |z| Complex::new(z.re.round_ties_even(), z.im.round_ties_even()),
        Softplus => |z| complex::logaddexp(z, Complex::new(0.0, 0.0)),
        StopGradient => |z| z,
        _ => return None,
    })
}

/// The kernel's float function for `op`, if it maps floats to floats.
fn float_fn<T: Float>(op: UnaryOp) -> Option<fn(T) -> T> {
    use UnaryOp::*;
    Some(match op {
        Sqrt => T::sqrt,
        Rsqrt => T::rsqrt,
        Reciprocal => T::recip,
        Exp => T::exp,
        Expm1 => T::exp_m1,
        Log => T::ln,
        Log1p => T::ln_1p,
        Log2 => T::log2,
        Log10 => T::log10,
        Sin => T::sin,
        Cos => T::cos,
        Tan => T::tan,
        Arcsin => T::asin,
        Arccos => T::acos,
        Arctan => T::atan,
        Sinh => T::sinh,
        Cosh => T::cosh,
        Tanh => T::tanh,
        Arcsinh => T::asinh,
        Arccosh => T::acosh,
        Arctanh => T::atanh,
        Sigmoid => T::sigmoid,
        Softplus => T::softplus,
        Erf => T::erf,
        Erfinv => T::erfinv,
        Floor => T::floor,
        Ceil => T::ceil,
        Round => T::round_even,
        Trunc => T::trunc,
        Abs => T::abs,
        Negative => |x: T| -x,
        Sign => T::sign,
        Square => |x: T| x * x,
        Real | Conjugate | StopGradient => |x| x,
        IsNan | IsInf | IsPosInf | IsNegInf | IsFinite | LogicalNot | BitwiseInvert | Imag => {
            return None
        }
    })
}

/// The error for work no kernel here computes (the op's rules in `ops` refuse it first).
fn no_kernel(op: UnaryOp, dtype: DType) -> Error {
    Error::runtime(format!("[{op:?}] No CPU kernel for {dtype} inputs."))
}

/// Float math on a real float or (through float32) integer input.
fn float_unary(op: UnaryOp, x: Tensor) -> Result<Tensor> {
    let f32_based = matches!(x.dtype, DType::Float32 | DType::Float16 | DType::BFloat16);
    if let (true, Some(f)) = (f32_based, simd::Kernel::of(op)) {
        return simd::map(x, f);
    }
    let (Some(f32_fn), Some(f64_fn)) = (float_fn::<f32>(op), float_fn::<f64>(op)) else {
        return Err(no_kernel(op, x.dtype));
    };
    match x.dtype {
        DType::Float32 => map1::<f32, f32>(x, f32_fn),
        DType::Float64 => map1::<f64, f64>(x, f64_fn),
        DType::Float16 => map1::<f16, f16>(x, |v| f16::narrow(f32_fn(v.widen()))),
        DType::BFloat16 => map1::<bf16, bf16>(x, |v| bf16::narrow(f32_fn(v.widen()))),
        _ => dispatch!(x.dtype, T => map1::<T, f32>(x, |v| f32_fn(f32::from_elem(v)))),
    }
}

/// The integer function of `op`, for signed (`SIGNED`) or unsigned `T`: the ops that keep
/// integers integers (the rounding ones are the identity there).
fn int_fn<T: Element + IntBits, const SIGNED: bool>(op: UnaryOp) -> Option<fn(T) -> T> {
    use UnaryOp::*;
    Some(match op {
        Abs if SIGNED => T::wrapping_abs,
        Sign if SIGNED => |v| T::from_i64(v.gt_zero() as i64 - v.lt_zero() as i64),
        // Not through a signed value: uint64 values from 2^63 would look negative.
        Sign => |v| T::from_i64(v.gt_zero() as i64),
        Negative => T::wrapping_neg,
        Square => |v| v.wrapping_mul(v),
        BitwiseInvert => T::not,
        Abs | Floor | Ceil | Round | Trunc | Real | Conjugate | StopGradient => |v| v,
        _ => return None,
    })
}

/// The integer arithmetic the integer kernels use.
trait IntBits: Copy {
    fn wrapping_abs(self) -> Self;
    fn wrapping_neg(self) -> Self;
    fn wrapping_mul(self, o: Self) -> Self;
    fn not(self) -> Self;
    fn gt_zero(self) -> bool;
    fn lt_zero(self) -> bool;
    fn from_i64(v: i64) -> Self;
}

macro_rules! int_bits {
    ($($t:ty),*) => {$(
        impl IntBits for $t {
            fn wrapping_abs(self) -> $t { (self as i64).wrapping_abs() as $t }
            fn wrapping_neg(self) -> $t { <$t>::wrapping_neg(self) }
            fn wrapping_mul(self, o: $t) -> $t { <$t>::wrapping_mul(self, o) }
            fn not(self) -> $t { !self }
            fn gt_zero(self) -> bool { self > 0 }
            #[allow(unused_comparisons)]
            fn lt_zero(self) -> bool { self < 0 }
            fn from_i64(v: i64) -> $t { v as $t }
        }
    )*};
}
int_bits!(u8, u16, u32, u64, i8, i16, i32, i64);

fn int_unary<T: Element + IntBits, const SIGNED: bool>(op: UnaryOp, x: Tensor) -> Result<Tensor> {
    let f = int_fn::<T, SIGNED>(op).ok_or_else(|| no_kernel(op, x.dtype))?;
    map1::<T, T>(x, f)
}

/// Computes `op` on `x`, giving dtype `out` (float for float math on integers, bool for
/// the predicates, float32 for the magnitude and parts of complex numbers).
pub fn unary(op: UnaryOp, x: Tensor, out: DType) -> Result<Tensor> {
    use UnaryOp::*;
    let dtype = x.dtype;
    if dtype.is_complex() {
        return match op {
            Abs => map1::<Complex, f32>(x, complex::abs),
            Real => map1::<Complex, f32>(x, |z| z.re),
            Imag => map1::<Complex, f32>(x, |z| z.im),
            IsNan => map1::<Complex, bool>(x, |z| z.re.is_nan() || z.im.is_nan()),
            IsInf => map1::<Complex, bool>(x, |z| z.re.is_infinite() || z.im.is_infinite()),
            IsFinite => map1::<Complex, bool>(x, |z| z.re.is_finite() && z.im.is_finite()),
            // Equal to +-inf as a complex number: an infinite real part and no imaginary one.
            IsPosInf => map1::<Complex, bool>(x, |z| z.re == f32::INFINITY && z.im == 0.0),
            IsNegInf => map1::<Complex, bool>(x, |z| z.re == f32::NEG_INFINITY && z.im == 0.0),
            LogicalNot => map1::<Complex, bool>(x, |z| !z.to_bool()),
            _ => map1::<Complex, Complex>(x, complex_fn(op).ok_or_else(|| no_kernel(op, dtype))?),
        };
    }
    match op {
        IsNan | IsInf | IsPosInf | IsNegInf | IsFinite if !dtype.is_floating() => {
            let value = op == IsFinite;
            dispatch!(dtype, T => map1::<T, bool>(x, |_| value))
        }
        IsNan | IsInf | IsPosInf | IsNegInf | IsFinite => {
            let f: fn(f64) -> bool = match op {
                IsNan => f64::is_nan,
                IsInf => f64::is_infinite,
                IsPosInf => |v| v == f64::INFINITY,
                IsNegInf => |v| v == f64::NEG_INFINITY,
                _ => f64::is_finite,
            };
            dispatch!(dtype, T => map1::<T, bool>(x, |v| f(v.to_f64())))
        }
        LogicalNot => dispatch!(dtype, T => map1::<T, bool>(x, |v| !v.to_bool())),
        Real | Conjugate | StopGradient => Ok(x),
        Imag => dispatch!(dtype, T => map1::<T, T>(x, |_| T::default())),
        _ if out.is_floating() => float_unary(op, x),
        BitwiseInvert if dtype.is_bool() => map1::<bool, bool>(x, |v| !v),
        Abs | Sign | Square | Floor | Ceil | Round | Trunc if dtype.is_bool() => Ok(x),
        _ => match dtype {
            DType::UInt8 => int_unary::<u8, false>(op, x),
            DType::UInt16 => int_unary::<u16, false>(op, x),
            DType::UInt32 => int_unary::<u32, false>(op, x),
            DType::UInt64 => int_unary::<u64, false>(op, x),
            DType::Int8 => int_unary::<i8, true>(op, x),
            DType::Int16 => int_unary::<i16, true>(op, x),
            DType::Int32 => int_unary::<i32, true>(op, x),
            DType::Int64 => int_unary::<i64, true>(op, x),
            _ => Err(no_kernel(op, dtype)),
        },
    }
}
