//! Kernels of the one-input elementwise ops.

use super::elementwise::map1;
use super::math::{complex, Float};
use super::simd;
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::element::{dispatch, Complex, Element};
use crate::error::{Error, Result};
use half::{bf16, f16};

/// The one-input elementwise operations.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    Abs,
    Negative,
    Sign,
    Square,
    Sqrt,
    Rsqrt,
    Reciprocal,
    Exp,
    Expm1,
    Log,
    Log1p,
    Log2,
    Log10,
    Sin,
    Cos,
    Tan,
    Arcsin,
    Arccos,
    Arctan,
    Sinh,
    Cosh,
    Tanh,
    Arcsinh,
    Arccosh,
    Arctanh,
    Sigmoid,
    Erf,
    Erfinv,
    Floor,
    Ceil,
    Round,
    Trunc,
    IsNan,
    IsInf,
    IsPosInf,
    IsNegInf,
    IsFinite,
    LogicalNot,
    BitwiseInvert,
    Real,
    Imag,
    Conjugate,
    /// Identity in the forward pass (blocks gradients in the transforms).
    StopGradient,
}

impl UnaryOp {
    /// The MLX function name.
    pub fn name(self) -> &'static str {
        use UnaryOp::*;
        match self {
            Abs => "abs",
            Negative => "negative",
            Sign => "sign",
            Square => "square",
            Sqrt => "sqrt",
            Rsqrt => "rsqrt",
            Reciprocal => "reciprocal",
            Exp => "exp",
            Expm1 => "expm1",
            Log => "log",
            Log1p => "log1p",
            Log2 => "log2",
            Log10 => "log10",
            Sin => "sin",
            Cos => "cos",
            Tan => "tan",
            Arcsin => "arcsin",
            Arccos => "arccos",
            Arctan => "arctan",
            Sinh => "sinh",
            Cosh => "cosh",
            Tanh => "tanh",
            Arcsinh => "arcsinh",
            Arccosh => "arccosh",
            Arctanh => "arctanh",
            Sigmoid => "sigmoid",
            Erf => "erf",
            Erfinv => "erfinv",
            Floor => "floor",
            Ceil => "ceil",
            Round => "round",
            Trunc => "trunc",
            IsNan => "isnan",
            IsInf => "isinf",
            IsPosInf => "isposinf",
            IsNegInf => "isneginf",
            IsFinite => "isfinite",
            LogicalNot => "logical_not",
            BitwiseInvert => "bitwise_invert",
            Real => "real",
            Imag => "imag",
            Conjugate => "conjugate",
            StopGradient => "stop_gradient",
        }
    }

    /// Float math: integer and bool inputs compute in float32.
    fn is_transcendental(self) -> bool {
        use UnaryOp::*;
        matches!(
            self,
            Sqrt | Rsqrt
                | Reciprocal
                | Exp
                | Expm1
                | Log
                | Log1p
                | Log2
                | Log10
                | Sin
                | Cos
                | Tan
                | Arcsin
                | Arccos
                | Arctan
                | Sinh
                | Cosh
                | Tanh
                | Arcsinh
                | Arccosh
                | Arctanh
                | Sigmoid
                | Erf
                | Erfinv
        )
    }

    fn complex_fn(self) -> Option<fn(Complex) -> Complex> {
        use UnaryOp::*;
        Some(match self {
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
            StopGradient => |z| z,
            _ => return None,
        })
    }

    /// The output dtype for an input of `dtype`, or an error naming the op.
    pub fn output_dtype(self, dtype: DType) -> Result<DType> {
        use UnaryOp::*;
        let name = self.name();
        if dtype.is_complex() {
            return match self {
                Abs | Real | Imag => Ok(DType::Float32),
                IsNan | IsInf | IsPosInf | IsNegInf | IsFinite | LogicalNot => Ok(DType::Bool),
                _ if self.complex_fn().is_some() => Ok(dtype),
                _ => Err(Error::value(format!(
                    "[{name}] Not supported for complex64 inputs."
                ))),
            };
        }
        match self {
            _ if self.is_transcendental() => Ok(dtype.to_inexact()),
            Negative if dtype.is_bool() => Err(Error::value(format!(
                "[{name}] Not supported for bool, use logical_not instead."
            ))),
            IsNan | IsInf | IsPosInf | IsNegInf | IsFinite | LogicalNot => Ok(DType::Bool),
            BitwiseInvert if dtype.is_inexact() => Err(Error::value(format!(
                "[{name}] Bitwise inverse only allowed on integer types."
            ))),
            _ => Ok(dtype),
        }
    }
}

fn float_fn<T: Float>(op: UnaryOp) -> fn(T) -> T {
    use UnaryOp::*;
    match op {
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
            unreachable!("{} is not a float-to-float map", op.name())
        }
    }
}

/// The vectorised kernel computing `op`, if there is one.
fn simd_function(op: UnaryOp) -> Option<simd::Function> {
    use simd::Function as F;
    use UnaryOp::*;
    Some(match op {
        Exp => F::Exp,
        Expm1 => F::Expm1,
        Log => F::Log,
        Log1p => F::Log1p,
        Log2 => F::Log2,
        Log10 => F::Log10,
        Sin => F::Sin,
        Cos => F::Cos,
        Tan => F::Tan,
        Tanh => F::Tanh,
        Sinh => F::Sinh,
        Cosh => F::Cosh,
        Arctan => F::Arctan,
        Arcsin => F::Arcsin,
        Arccos => F::Arccos,
        Arcsinh => F::Arcsinh,
        Arccosh => F::Arccosh,
        Arctanh => F::Arctanh,
        Erf => F::Erf,
        Erfinv => F::Erfinv,
        Sigmoid => F::Sigmoid,
        Sqrt => F::Sqrt,
        Rsqrt => F::Rsqrt,
        Floor => F::Floor,
        Ceil => F::Ceil,
        Round => F::Round,
        Trunc => F::Trunc,
        Abs => F::Abs,
        Negative => F::Negative,
        Square => F::Square,
        Sign => F::Sign,
        Reciprocal => F::Reciprocal,
        _ => return None,
    })
}

/// Float math on a real float or (through float32) integer input.
fn float_unary(op: UnaryOp, x: Tensor) -> Result<Tensor> {
    let f32_based = matches!(x.dtype, DType::Float32 | DType::Float16 | DType::BFloat16);
    if let (true, Some(f)) = (f32_based, simd_function(op)) {
        return simd::map(x, f);
    }
    match x.dtype {
        DType::Float32 => map1::<f32, f32>(x, float_fn::<f32>(op)),
        DType::Float64 => map1::<f64, f64>(x, float_fn::<f64>(op)),
        DType::Float16 => {
            let f = float_fn::<f32>(op);
            map1::<f16, f16>(x, |v| f16::from_f32(f(v.to_f32())))
        }
        DType::BFloat16 => {
            let f = float_fn::<f32>(op);
            map1::<bf16, bf16>(x, |v| bf16::from_f32(f(v.to_f32())))
        }
        _ => {
            let f = float_fn::<f32>(op);
            dispatch!(x.dtype, T => map1::<T, f32>(x, |v| f(f32::from_elem(v))))
        }
    }
}

macro_rules! int_unary {
    ($x:expr, $op:expr, $($t:ty, $signed:expr);*) => {
        match $x.dtype {
            $(<$t as Element>::DTYPE => {
                let f: fn($t) -> $t = match $op {
                    UnaryOp::Abs => if $signed { |v: $t| (v as i64).wrapping_abs() as $t } else { |v| v },
                    UnaryOp::Negative => |v: $t| v.wrapping_neg(),
                    UnaryOp::Sign => if $signed {
                        |v: $t| (v > 0) as $t - ((v as i64) < 0) as $t
                    } else {
                        // Not through i64: uint64 values from 2^63 would look negative.
                        |v: $t| (v > 0) as $t
                    },
                    UnaryOp::Square => |v: $t| v.wrapping_mul(v),
                    UnaryOp::BitwiseInvert => |v: $t| !v,
                    _ => |v| v,
                };
                map1::<$t, $t>($x, f)
            })*
            _ => unreachable!(),
        }
    };
}

/// Computes `op` on `x`; `out` is the dtype [`UnaryOp::output_dtype`] gave.
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
            _ => map1::<Complex, Complex>(x, op.complex_fn().expect("checked by output_dtype")),
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
        _ if op.is_transcendental() || dtype.is_floating() => {
            debug_assert_eq!(out, dtype.to_inexact());
            float_unary(op, x)
        }
        _ if dtype.is_bool() => {
            let f: fn(bool) -> bool = match op {
                BitwiseInvert => |v| !v,
                _ => |v| v,
            };
            map1::<bool, bool>(x, f)
        }
        _ => int_unary!(x, op,
            u8, false; u16, false; u32, false; u64, false;
            i8, true; i16, true; i32, true; i64, true),
    }
}
