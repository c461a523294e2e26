//! One-input elementwise ops: the `Unary` primitive and the public functions.

use crate::array::Array;
use crate::backend::cpu::unary::{unary as unary_kernel, UnaryOp};
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::{add, astype, divide, multiply, ones_like, subtract, zeros_like};
use crate::primitive::{Export, MlxNode, MlxState, OutputSpec, Primitive};
use std::f64::consts::{LN_10, LN_2, PI};
use std::sync::Arc;

pub(crate) struct Unary(pub UnaryOp);

impl Primitive for Unary {
    fn name(&self) -> &'static str {
        self.0.name()
    }

    fn is_elementwise(&self) -> bool {
        true
    }

    fn output_shapes(&self, inputs: &[OutputSpec]) -> Result<Vec<Vec<usize>>> {
        crate::primitive::same_shape(inputs)
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        use UnaryOp::*;
        let plain = |name| MlxNode::single(name, vec![], inputs, outputs);
        match self.0 {
            Abs => plain("Abs"),
            Negative => plain("Negative"),
            Sign => plain("Sign"),
            Square => plain("Square"),
            Sqrt => MlxNode::single("Sqrt", vec![MlxState::Bool(false)], inputs, outputs),
            Rsqrt => MlxNode::single("Sqrt", vec![MlxState::Bool(true)], inputs, outputs),
            Exp => plain("Exp"),
            Expm1 => plain("Expm1"),
            // MLX's `Log::Base` is `{two, ten, e}`.
            Log => MlxNode::single("Log", vec![MlxState::Int(2)], inputs, outputs),
            Log2 => MlxNode::single("Log", vec![MlxState::Int(0)], inputs, outputs),
            Log10 => MlxNode::single("Log", vec![MlxState::Int(1)], inputs, outputs),
            Log1p => plain("Log1p"),
            Sin => plain("Sin"),
            Cos => plain("Cos"),
            Tan => plain("Tan"),
            Arcsin => plain("ArcSin"),
            Arccos => plain("ArcCos"),
            Arctan => plain("ArcTan"),
            Sinh => plain("Sinh"),
            Cosh => plain("Cosh"),
            Tanh => plain("Tanh"),
            Arcsinh => plain("ArcSinh"),
            Arccosh => plain("ArcCosh"),
            Arctanh => plain("ArcTanh"),
            Sigmoid => plain("Sigmoid"),
            Erf => plain("Erf"),
            Erfinv => plain("ErfInv"),
            Floor => plain("Floor"),
            Ceil => plain("Ceil"),
            Round => plain("Round"),
            LogicalNot => plain("LogicalNot"),
            Real => plain("Real"),
            Imag => plain("Imag"),
            Conjugate => plain("Conjugate"),
            StopGradient => plain("StopGradient"),
            // MLX computes these from other primitives.
            Reciprocal | Trunc | IsNan | IsInf | IsPosInf | IsNegInf | IsFinite => {
                let op = self.0;
                Ok(Export::Composed(Arc::new(move |x: &[Array]| {
                    Ok(vec![as_mlx_composes(op, &x[0])?])
                })))
            }
            // Missing from MLX's table of serializable primitives.
            BitwiseInvert => Err(Error::value(
                "[export_function] MLX cannot export bitwise_invert (its BitwiseInvert \
                 primitive is not serializable).",
            )),
        }
    }

    fn eval(&self, mut inputs: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let x = inputs.pop().expect("unary ops have one input");
        Ok(vec![unary_kernel(self.0, x, outputs[0].dtype)?])
    }

    fn vjp(
        &self,
        inputs: &[Array],
        outputs: &[Array],
        cotangents: &[Array],
        _: &[usize],
    ) -> Result<Vec<Array>> {
        Ok(vec![scale_by_derivative(
            self.0,
            &inputs[0],
            &outputs[0],
            &cotangents[0],
        )?])
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        let y = unary(self.0, &inputs[0])?;
        let t = scale_by_derivative(self.0, &inputs[0], &y, &tangents[0])?;
        // abs, real and imag of a complex z change by the real part of the product.
        if inputs[0].dtype().is_complex() && !y.dtype().is_complex() {
            return Ok(vec![real(&t)?]);
        }
        Ok(vec![t])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        Ok((vec![unary(self.0, &inputs[0])?], axes.to_vec()))
    }
}

/// `v * f'(x)` for `y = f(x)`: the vjp of a cotangent or the jvp of a tangent `v`.
/// Ops that are piecewise constant (or give bool/int results) have zero derivative.
fn scale_by_derivative(op: UnaryOp, x: &Array, y: &Array, v: &Array) -> Result<Array> {
    use UnaryOp::*;
    let one_minus_x2 = || subtract(1.0, &square(x)?);
    match op {
        // For complex x the rules give holomorphic-convention cotangents (see vjp.rs):
        // |z| has conj(sign(z)), Im(z) has -i.
        Abs if x.dtype().is_complex() => multiply(v, &conjugate(&sign(x)?)?),
        Abs => multiply(v, &sign(x)?),
        Negative => negative(v),
        Square => multiply(v, &multiply(x, 2.0)?),
        Sqrt => divide(v, &multiply(y, 2.0)?),
        Rsqrt => multiply(v, &multiply(&multiply(y, &square(y)?)?, -0.5)?),
        Reciprocal => negative(&multiply(v, &square(y)?)?),
        Exp => multiply(v, y),
        Expm1 => multiply(v, &add(y, 1.0)?),
        Log => divide(v, x),
        Log1p => divide(v, &add(x, 1.0)?),
        Log2 => divide(v, &multiply(x, LN_2)?),
        Log10 => divide(v, &multiply(x, LN_10)?),
        Sin => multiply(v, &cos(x)?),
        Cos => negative(&multiply(v, &sin(x)?)?),
        Tan => multiply(v, &add(&square(y)?, 1.0)?),
        Arcsin => multiply(v, &rsqrt(&one_minus_x2()?)?),
        Arccos => negative(&multiply(v, &rsqrt(&one_minus_x2()?)?)?),
        Arctan => divide(v, &add(&square(x)?, 1.0)?),
        Sinh => multiply(v, &cosh(x)?),
        Cosh => multiply(v, &sinh(x)?),
        Tanh => multiply(v, &subtract(1.0, &square(y)?)?),
        Arcsinh => multiply(v, &rsqrt(&add(&square(x)?, 1.0)?)?),
        // 1 / (sqrt(x - 1) sqrt(x + 1)): equal to 1 / sqrt(x^2 - 1) for real x > 1, and the
        // derivative of the principal branch for complex x, where the latter is not.
        Arccosh => multiply(
            v,
            &multiply(&rsqrt(&subtract(x, 1.0)?)?, &rsqrt(&add(x, 1.0)?)?)?,
        ),
        Arctanh => divide(v, &one_minus_x2()?),
        Sigmoid => multiply(v, &multiply(y, &subtract(1.0, y)?)?),
        Erf => multiply(
            v,
            &multiply(&exp(&negative(&square(x)?)?)?, 2.0 / PI.sqrt())?,
        ),
        Erfinv => multiply(v, &multiply(&exp(&square(y)?)?, PI.sqrt() / 2.0)?),
        Real => Ok(v.clone()),
        Imag => multiply(v, Array::scalar(crate::element::Complex::new(0.0, -1.0))),
        Conjugate => conjugate(v),
        Sign | Floor | Ceil | Round | Trunc | IsNan | IsInf | IsPosInf | IsNegInf | IsFinite
        | LogicalNot | BitwiseInvert | StopGradient => zeros_like(v),
    }
}

/// `a` conjugated if it is complex, else `a` itself: converts cotangents between MLX's
/// gradient convention and the holomorphic one the rules are written in.
pub(crate) fn conjugate_if_complex(a: &Array) -> Result<Array> {
    if a.dtype().is_complex() {
        conjugate(a)
    } else {
        Ok(a.clone())
    }
}

/// `op` on `x` built from the primitives MLX builds it from (for export).
fn as_mlx_composes(op: UnaryOp, x: &Array) -> Result<Array> {
    use crate::ops::{equal, less, logical_not, logical_or, not_equal, where_};
    let inf = |sign: f64| Array::scalar(sign * f64::INFINITY);
    let real = x.dtype().is_inexact();
    match op {
        // Integers are never NaN or infinite.
        UnaryOp::IsNan | UnaryOp::IsInf | UnaryOp::IsPosInf | UnaryOp::IsNegInf if !real => {
            not_equal(x, x)
        }
        UnaryOp::IsFinite if !real => equal(x, x),
        UnaryOp::Reciprocal => divide(&ones_like(x)?, x),
        UnaryOp::Trunc => where_(&less(x, 0)?, &ceil(x)?, &floor(x)?),
        UnaryOp::IsNan => not_equal(x, x),
        UnaryOp::IsPosInf => equal(x, &astype(&inf(1.0), x.dtype())?),
        UnaryOp::IsNegInf => equal(x, &astype(&inf(-1.0), x.dtype())?),
        UnaryOp::IsInf => logical_or(&isposinf(x)?, &isneginf(x)?),
        UnaryOp::IsFinite => logical_not(&logical_or(&isinf(x)?, &isnan(x)?)?),
        other => unary(other, x),
    }
}

/// Records `op` on `a` after checking the dtype.
pub(crate) fn unary(op: UnaryOp, a: &Array) -> Result<Array> {
    let dtype = op.output_dtype(a.dtype())?;
    Ok(Array::from_op(
        Unary(op),
        vec![a.clone()],
        a.shape().to_vec(),
        dtype,
    ))
}

macro_rules! unary_fns {
    ($($(#[$doc:meta])* $name:ident => $op:ident;)*) => {$(
        $(#[$doc])*
        pub fn $name(a: &Array) -> Result<Array> {
            unary(UnaryOp::$op, a)
        }
    )*};
}

unary_fns! {
    /// Absolute value; complex inputs give float32 magnitudes.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[-1.5f32, 2.0], &[2]).unwrap();
    /// assert_eq!(lazulite::abs(&a).unwrap().to_vec::<f32>().unwrap(), vec![1.5, 2.0]);
    /// ```
    abs => Abs;
    /// `-a`; an error for bool arrays.
    negative => Negative;
    /// -1, 0 or 1 by sign (NaN stays NaN; complex: `z / |z|`).
    sign => Sign;
    /// `a * a`.
    square => Square;
    /// Square root; integers compute in float32.
    sqrt => Sqrt;
    /// `1 / sqrt(a)`.
    rsqrt => Rsqrt;
    /// `1 / a`.
    reciprocal => Reciprocal;
    /// Exponential.
    exp => Exp;
    /// `exp(a) - 1`, accurate near 0.
    expm1 => Expm1;
    /// Natural logarithm.
    log => Log;
    /// `log(1 + a)`, accurate near 0.
    log1p => Log1p;
    /// Base-2 logarithm.
    log2 => Log2;
    /// Base-10 logarithm.
    log10 => Log10;
    /// Sine.
    ///
    /// ```
    /// let a = lazulite::Array::scalar(0.5f32);
    /// assert!((lazulite::sin(&a).unwrap().item::<f32>().unwrap() - 0.5f32.sin()).abs() < 1e-7);
    /// ```
    sin => Sin;
    /// Cosine.
    cos => Cos;
    /// Tangent.
    tan => Tan;
    /// Inverse sine.
    arcsin => Arcsin;
    /// Inverse cosine.
    arccos => Arccos;
    /// Inverse tangent.
    arctan => Arctan;
    /// Hyperbolic sine.
    sinh => Sinh;
    /// Hyperbolic cosine.
    cosh => Cosh;
    /// Hyperbolic tangent.
    tanh => Tanh;
    /// Inverse hyperbolic sine.
    arcsinh => Arcsinh;
    /// Inverse hyperbolic cosine.
    arccosh => Arccosh;
    /// Inverse hyperbolic tangent.
    arctanh => Arctanh;
    /// Logistic function `1 / (1 + exp(-a))`.
    sigmoid => Sigmoid;
    /// Error function.
    erf => Erf;
    /// Inverse error function.
    erfinv => Erfinv;
    /// Largest integer not above `a` (integers unchanged).
    floor => Floor;
    /// Smallest integer not below `a` (integers unchanged).
    ceil => Ceil;
    /// Integer part, rounding toward zero.
    trunc => Trunc;
    /// Whether each element is NaN.
    isnan => IsNan;
    /// Whether each element is +inf or -inf.
    isinf => IsInf;
    /// Whether each element is +inf (a complex element: `+inf + 0j`, as MLX compares).
    isposinf => IsPosInf;
    /// Whether each element is -inf (a complex element: `-inf + 0j`, as MLX compares).
    isneginf => IsNegInf;
    /// Whether each element is neither infinite nor NaN.
    isfinite => IsFinite;
    /// Boolean not (any dtype; nonzero is true).
    logical_not => LogicalNot;
    /// Bitwise not of integer or bool arrays.
    bitwise_invert => BitwiseInvert;
    /// Real part (float32 for complex input; the array itself otherwise).
    real => Real;
    /// Imaginary part (zeros for real input).
    imag => Imag;
    /// Complex conjugate.
    conjugate => Conjugate;
    /// The same values, with gradients stopped in the transforms.
    stop_gradient => StopGradient;
}

/// `a` itself (NumPy's `positive`).
pub fn positive(a: &Array) -> Result<Array> {
    Ok(a.clone())
}

/// Rounds to `decimals` decimal places, halves to even (NumPy's `round`): `a * 10^d` is
/// rounded and divided back (for `decimals < 0`, `a / 10^-d` rounded and multiplied back,
/// so the scale is exact). Integer arrays are returned unchanged for `decimals >= 0` and
/// otherwise rounded through float64, keeping their dtype.
///
/// ```
/// let a = lazulite::Array::from_slice(&[0.5f32, 1.5, 2.5, 1.234], &[4]).unwrap();
/// let r = lazulite::round(&a, 0).unwrap().to_vec::<f32>().unwrap();
/// assert_eq!(r, vec![0.0, 2.0, 2.0, 1.0]);
/// let r = lazulite::round(&a, 2).unwrap().to_vec::<f32>().unwrap();
/// assert_eq!(r[3], 1.23);
/// let i = lazulite::Array::from_slice(&[15i32, 25, -15], &[3]).unwrap();
/// let r = lazulite::round(&i, -1).unwrap();
/// assert_eq!(r.to_vec::<i32>().unwrap(), vec![20, 20, -20]);
/// ```
pub fn round(a: &Array, decimals: i32) -> Result<Array> {
    if !a.dtype().is_inexact() {
        if decimals >= 0 {
            return Ok(a.clone());
        }
        let rounded = round(&crate::astype(a, DType::Float64)?, decimals)?;
        return crate::astype(&rounded, a.dtype());
    }
    if decimals == 0 {
        return unary(UnaryOp::Round, a);
    }
    let scale = 10f64.powf(decimals.unsigned_abs() as f64);
    if decimals > 0 {
        let scaled = crate::multiply(a, scale)?;
        crate::divide(&unary(UnaryOp::Round, &scaled)?, scale)
    } else {
        let scaled = crate::divide(a, scale)?;
        crate::multiply(&unary(UnaryOp::Round, &scaled)?, scale)
    }
}

/// Radians to degrees.
pub fn degrees(a: &Array) -> Result<Array> {
    crate::multiply(a, 180.0 / std::f64::consts::PI)
}

/// Degrees to radians.
pub fn radians(a: &Array) -> Result<Array> {
    crate::multiply(a, std::f64::consts::PI / 180.0)
}
