//! One-input elementwise ops: one row per op (its name, dtype rule, derivative, how MLX
//! exports it, its public function and `Array` method), the `Unary` primitive reading
//! those rows, and the public functions built on them. The kernels are the backend's
//! (`backend/cpu/unary.rs`), chosen by the op's tag.

use crate::array::Array;
use crate::backend::cpu::unary::unary as unary_kernel;
use crate::backend::op::UnaryOp;
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::binary::{
    add, divide, equal, less, logaddexp, logical_or, multiply, not_equal, subtract,
};
use crate::ops::cast::astype;
use crate::ops::creation::{ones_like, zeros_like};
use crate::ops::eager::{own, record_elementwise};
use crate::ops::ternary::where_;
use crate::primitive::{mlx_chain, Export, MlxInput, MlxNode, MlxState, OutputSpec, Primitive};
use std::f64::consts::{LN_10, LN_2, PI};
use std::sync::Arc;

/// Which input dtypes an op takes and the dtype it gives.
#[derive(Copy, Clone)]
enum Dtypes {
    /// Float math: integer and bool inputs compute in float32.
    Float { complex: bool },
    /// The input's dtype.
    Same { complex: bool },
    /// The input's dtype; not bool.
    Signed,
    /// Float32 for complex inputs (a magnitude or a part), the input's dtype otherwise.
    ToReal,
    /// Bool.
    Predicate,
    /// Integer and bool inputs only.
    Integer,
}

/// How MLX's export records an op.
enum Mlx {
    /// A primitive of that name, with that state.
    Node(&'static str, Vec<MlxState>),
    /// Built from other primitives, as MLX's own function builds it.
    Composed(fn(&Array) -> Result<Array>),
    /// Not exportable, with MLX's reason.
    Refused(&'static str),
}

/// `v * f'(x)` for `y = f(x)`: the vjp of a cotangent or the jvp of a tangent `v`.
type Derivative = fn(x: &Array, y: &Array, v: &Array) -> Result<Array>;

/// Everything `ops` knows about one op.
struct Rule {
    name: &'static str,
    dtypes: Dtypes,
    mlx: Mlx,
    derivative: Derivative,
}

use Dtypes::*;

/// The table. A row: its doc (the first line is the summary language bindings show), the
/// public function (in brackets; none for `round`, which takes decimals), the tag, the MLX
/// name, the dtype rule, the MLX export, the derivative as `|x, y, v| v * f'(x)`. Ops that
/// are piecewise constant (or give bool or integer results) have zero derivative. For
/// complex `x` the derivatives follow the holomorphic convention (see `transforms/vjp.rs`).
///
/// Besides the rule lookup and the public functions with their `Array` methods, the table
/// gives the exported macro [`unary_functions!`](crate::unary_functions), through which
/// the Python package binds every function without a list of its own.
macro_rules! unary_ops {
    ($(
        #[doc = $summary:literal] $(#[doc = $doc:literal])*
        [$($fname:ident)?] $op:ident, $name:literal, $dtypes:expr, $mlx:expr,
            |$x:tt, $y:tt, $v:tt| $derivative:expr;
    )*) => {
        fn rule(op: UnaryOp) -> Rule {
            match op {$(
                UnaryOp::$op => Rule {
                    name: $name,
                    dtypes: $dtypes,
                    mlx: $mlx,
                    derivative: |$x, $y, $v| $derivative,
                },
            )*}
        }
        $(unary_ops!(@public [$($fname)?], $op, #[doc = $summary] $(#[doc = $doc])*);)*
        function_list! {
            /// Invokes `callback!` with every one-input elementwise function of the crate
            /// root, as `name "summary",` pairs (the summary is the first line of its doc).
            ///
            /// ```
            /// macro_rules! names {
            ///     ($($name:ident $summary:literal,)*) => { vec![$(stringify!($name)),*] };
            /// }
            /// let names: Vec<&str> = lazulite::unary_functions!(names);
            /// assert!(names.contains(&"exp") && names.contains(&"erfinv"));
            /// ```
            unary_functions ($) $($($fname $summary)?)*
        }
    };
    (@public [], $op:ident, $(#[$doc:meta])*) => {};
    (@public [$fname:ident], $op:ident, $(#[$doc:meta])*) => {
        $(#[$doc])*
        pub fn $fname(a: &Array) -> Result<Array> {
            unary(UnaryOp::$op, a)
        }

        impl Array {
            #[doc = concat!("Method form of [`", stringify!($fname), "`](crate::", stringify!($fname), ").")]
            #[doc = ""]
            #[doc = "```"]
            #[doc = "let a = lazulite::Array::from_slice(&[1i32, 2], &[2])?;"]
            #[doc = concat!("let (method, function) = (a.", stringify!($fname), "()?, lazulite::", stringify!($fname), "(&a)?);")]
            #[doc = "assert!(lazulite::array_equal(&method, &function, true)?.item::<bool>()?);"]
            #[doc = "# Ok::<(), lazulite::Error>(())"]
            #[doc = "```"]
            pub fn $fname(&self) -> Result<Array> {
                $fname(self)
            }
        }
    };
}

fn plain(name: &'static str) -> Mlx {
    Mlx::Node(name, vec![])
}

/// MLX's `Log::Base` is `{two, ten, e}`.
fn log_base(base: i32) -> Mlx {
    Mlx::Node("Log", vec![MlxState::Int(base)])
}

unary_ops! {
    /// Absolute value; complex inputs give float32 magnitudes.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[-1.5f32, 2.0], &[2]).unwrap();
    /// assert_eq!(lazulite::abs(&a).unwrap().to_vec::<f32>().unwrap(), vec![1.5, 2.0]);
    /// ```
    [abs] Abs, "abs", ToReal, plain("Abs"), |x, _, v| if x.dtype().is_complex() {
        multiply(v, &conjugate(&sign(x)?)?)
    } else {
        multiply(v, &sign(x)?)
    };
    /// `-a`; an error for bool arrays.
    ///
    /// ```
    /// use lazulite::{negative, Array};
    /// let a = Array::from_slice(&[1i32, -2], &[2])?;
    /// assert_eq!(negative(&a)?.to_vec::<i32>()?, vec![-1, 2]);
    /// assert!(negative(&Array::scalar(true)).is_err());
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [negative] Negative, "negative", Signed, plain("Negative"), |_, _, v| negative(v);
    /// -1, 0 or 1 by sign (NaN stays NaN; complex: `z / |z|`).
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[-3.0f32, 0.0, 2.5], &[3])?;
    /// assert_eq!(lazulite::sign(&a)?.to_vec::<f32>()?, vec![-1.0, 0.0, 1.0]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [sign] Sign, "sign", Same { complex: true }, plain("Sign"), |_, _, v| zeros_like(v);
    /// `a * a`.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[3i32, -4], &[2])?;
    /// assert_eq!(lazulite::square(&a)?.to_vec::<i32>()?, vec![9, 16]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [square] Square, "square", Same { complex: true }, plain("Square"),
        |x, _, v| multiply(v, &multiply(x, 2.0)?);
    /// Square root; integers compute in float32.
    ///
    /// ```
    /// use lazulite::{sqrt, Array, DType};
    /// let r = sqrt(&Array::from_slice(&[4i32, 9], &[2])?)?;
    /// assert_eq!(r.dtype(), DType::Float32);
    /// assert_eq!(r.to_vec::<f32>()?, vec![2.0, 3.0]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [sqrt] Sqrt, "sqrt", Float { complex: true }, Mlx::Node("Sqrt", vec![MlxState::Bool(false)]),
        |_, y, v| divide(v, &multiply(y, 2.0)?);
    /// `1 / sqrt(a)`.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[4.0f32, 16.0], &[2])?;
    /// let r = lazulite::rsqrt(&a)?.to_vec::<f32>()?;
    /// assert!((r[0] - 0.5).abs() < 1e-6 && (r[1] - 0.25).abs() < 1e-6);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [rsqrt] Rsqrt, "rsqrt", Float { complex: true }, Mlx::Node("Sqrt", vec![MlxState::Bool(true)]),
        |_, y, v| multiply(v, &multiply(&multiply(y, &square(y)?)?, -0.5)?);
    /// `1 / a`.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[2.0f32, -4.0], &[2])?;
    /// assert_eq!(lazulite::reciprocal(&a)?.to_vec::<f32>()?, vec![0.5, -0.25]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [reciprocal] Reciprocal, "reciprocal", Float { complex: true },
        Mlx::Composed(|x| divide(&ones_like(x)?, x)),
        |_, y, v| negative(&multiply(v, &square(y)?)?);
    /// Exponential.
    ///
    /// ```
    /// let e = lazulite::exp(&lazulite::Array::scalar(1.0f32))?.item::<f32>()?;
    /// assert!((e - std::f32::consts::E).abs() < 1e-6);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [exp] Exp, "exp", Float { complex: true }, plain("Exp"), |_, y, v| multiply(v, y);
    /// `exp(a) - 1`, accurate near 0.
    ///
    /// ```
    /// // exp(1e-10) rounds to 1 in float32; expm1 keeps the small difference.
    /// let y = lazulite::expm1(&lazulite::Array::scalar(1e-10f32))?.item::<f32>()?;
    /// assert!((y - 1e-10).abs() < 1e-16);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [expm1] Expm1, "expm1", Float { complex: true }, plain("Expm1"),
        |_, y, v| multiply(v, &add(y, 1.0)?);
    /// Natural logarithm.
    ///
    /// ```
    /// let y = lazulite::log(&lazulite::Array::scalar(std::f32::consts::E))?.item::<f32>()?;
    /// assert!((y - 1.0).abs() < 1e-6);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [log] Log, "log", Float { complex: true }, log_base(2), |x, _, v| divide(v, x);
    /// `log(1 + a)`, accurate near 0.
    ///
    /// ```
    /// let y = lazulite::log1p(&lazulite::Array::scalar(1e-10f32))?.item::<f32>()?;
    /// assert!((y - 1e-10).abs() < 1e-16);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [log1p] Log1p, "log1p", Float { complex: true }, plain("Log1p"),
        |x, _, v| divide(v, &add(x, 1.0)?);
    /// Base-2 logarithm.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1.0f32, 8.0], &[2])?;
    /// let y = lazulite::log2(&a)?.to_vec::<f32>()?;
    /// assert!(y[0].abs() < 1e-6 && (y[1] - 3.0).abs() < 1e-6);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [log2] Log2, "log2", Float { complex: true }, log_base(0),
        |x, _, v| divide(v, &multiply(x, LN_2)?);
    /// Base-10 logarithm.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1.0f32, 1000.0], &[2])?;
    /// let y = lazulite::log10(&a)?.to_vec::<f32>()?;
    /// assert!(y[0].abs() < 1e-6 && (y[1] - 3.0).abs() < 1e-6);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [log10] Log10, "log10", Float { complex: true }, log_base(1),
        |x, _, v| divide(v, &multiply(x, LN_10)?);
    /// Sine.
    ///
    /// ```
    /// let a = lazulite::Array::scalar(0.5f32);
    /// assert!((lazulite::sin(&a).unwrap().item::<f32>().unwrap() - 0.5f32.sin()).abs() < 1e-7);
    /// ```
    [sin] Sin, "sin", Float { complex: true }, plain("Sin"), |x, _, v| multiply(v, &cos(x)?);
    /// Cosine.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[0.0f32, std::f32::consts::PI], &[2])?;
    /// let y = lazulite::cos(&a)?.to_vec::<f32>()?;
    /// assert!((y[0] - 1.0).abs() < 1e-6 && (y[1] + 1.0).abs() < 1e-6);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [cos] Cos, "cos", Float { complex: true }, plain("Cos"),
        |x, _, v| negative(&multiply(v, &sin(x)?)?);
    /// Tangent.
    ///
    /// ```
    /// let y = lazulite::tan(&lazulite::Array::scalar(std::f32::consts::FRAC_PI_4))?.item::<f32>()?;
    /// assert!((y - 1.0).abs() < 1e-6);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [tan] Tan, "tan", Float { complex: true }, plain("Tan"),
        |_, y, v| multiply(v, &add(&square(y)?, 1.0)?);
    /// Inverse sine.
    ///
    /// ```
    /// let y = lazulite::arcsin(&lazulite::Array::scalar(1.0f32))?.item::<f32>()?;
    /// assert!((y - std::f32::consts::FRAC_PI_2).abs() < 1e-6);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [arcsin] Arcsin, "arcsin", Float { complex: true }, plain("ArcSin"),
        |x, _, v| multiply(v, &rsqrt(&one_minus_square(x)?)?);
    /// Inverse cosine.
    ///
    /// ```
    /// let y = lazulite::arccos(&lazulite::Array::scalar(-1.0f32))?.item::<f32>()?;
    /// assert!((y - std::f32::consts::PI).abs() < 1e-6);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [arccos] Arccos, "arccos", Float { complex: true }, plain("ArcCos"),
        |x, _, v| negative(&multiply(v, &rsqrt(&one_minus_square(x)?)?)?);
    /// Inverse tangent.
    ///
    /// ```
    /// let y = lazulite::arctan(&lazulite::Array::scalar(1.0f32))?.item::<f32>()?;
    /// assert!((y - std::f32::consts::FRAC_PI_4).abs() < 1e-6);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [arctan] Arctan, "arctan", Float { complex: true }, plain("ArcTan"),
        |x, _, v| divide(v, &add(&square(x)?, 1.0)?);
    /// Hyperbolic sine.
    ///
    /// ```
    /// let y = lazulite::sinh(&lazulite::Array::scalar(1.0f32))?.item::<f32>()?;
    /// assert!((y - 1.0f32.sinh()).abs() < 1e-6);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [sinh] Sinh, "sinh", Float { complex: true }, plain("Sinh"), |x, _, v| multiply(v, &cosh(x)?);
    /// Hyperbolic cosine.
    ///
    /// ```
    /// let y = lazulite::cosh(&lazulite::Array::scalar(1.0f32))?.item::<f32>()?;
    /// assert!((y - 1.0f32.cosh()).abs() < 1e-6);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [cosh] Cosh, "cosh", Float { complex: true }, plain("Cosh"), |x, _, v| multiply(v, &sinh(x)?);
    /// Hyperbolic tangent.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[0.0f32, 20.0], &[2])?;
    /// let y = lazulite::tanh(&a)?.to_vec::<f32>()?;
    /// assert!(y[0].abs() < 1e-6 && (y[1] - 1.0).abs() < 1e-6);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [tanh] Tanh, "tanh", Float { complex: true }, plain("Tanh"),
        |_, y, v| multiply(v, &subtract(1.0, &square(y)?)?);
    /// Inverse hyperbolic sine.
    ///
    /// ```
    /// let y = lazulite::arcsinh(&lazulite::Array::scalar(1.0f32.sinh()))?.item::<f32>()?;
    /// assert!((y - 1.0).abs() < 1e-6);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [arcsinh] Arcsinh, "arcsinh", Float { complex: true }, plain("ArcSinh"),
        |x, _, v| multiply(v, &rsqrt(&add(&square(x)?, 1.0)?)?);
    /// Inverse hyperbolic cosine.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1.0f32, 0.5], &[2])?;
    /// let y = lazulite::arccosh(&a)?.to_vec::<f32>()?;
    /// assert!(y[0].abs() < 1e-6 && y[1].is_nan()); // defined from 1 up
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    // 1 / (sqrt(x - 1) sqrt(x + 1)): equal to 1 / sqrt(x^2 - 1) for real x > 1, and the
    // derivative of the principal branch for complex x, where the latter is not.
    [arccosh] Arccosh, "arccosh", Float { complex: true }, plain("ArcCosh"),
        |x, _, v| multiply(v, &multiply(&rsqrt(&subtract(x, 1.0)?)?, &rsqrt(&add(x, 1.0)?)?)?);
    /// Inverse hyperbolic tangent.
    ///
    /// ```
    /// let y = lazulite::arctanh(&lazulite::Array::scalar(0.5f32))?.item::<f32>()?;
    /// assert!((y - 0.5f32.atanh()).abs() < 1e-6);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [arctanh] Arctanh, "arctanh", Float { complex: true }, plain("ArcTanh"),
        |x, _, v| divide(v, &one_minus_square(x)?);
    /// Logistic function `1 / (1 + exp(-a))`.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[0.0f32, 100.0], &[2])?;
    /// let y = lazulite::sigmoid(&a)?.to_vec::<f32>()?;
    /// assert!((y[0] - 0.5).abs() < 1e-6 && (y[1] - 1.0).abs() < 1e-6);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [sigmoid] Sigmoid, "sigmoid", Float { complex: false }, plain("Sigmoid"),
        |_, y, v| multiply(v, &multiply(y, &subtract(1.0, y)?)?);
    /// `log(1 + exp(a))`, the smooth ReLU, without overflow for large `a`.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[-200.0f32, 0.0, 200.0], &[3]).unwrap();
    /// let s = lazulite::softplus(&a).unwrap().to_vec::<f32>().unwrap();
    /// assert_eq!(s, vec![0.0, std::f32::consts::LN_2, 200.0]);
    /// ```
    [softplus] Softplus, "softplus", Float { complex: true }, Mlx::Composed(|x| logaddexp(x, 0.0)),
        |x, _, v| divide(v, &add(&exp(&negative(x)?)?, 1.0)?);
    /// Error function.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[0.0f32, 1.0], &[2])?;
    /// let y = lazulite::erf(&a)?.to_vec::<f32>()?;
    /// assert!(y[0].abs() < 1e-6 && (y[1] - 0.842_700_8).abs() < 1e-6);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [erf] Erf, "erf", Float { complex: false }, plain("Erf"),
        |x, _, v| multiply(v, &multiply(&exp(&negative(&square(x)?)?)?, 2.0 / PI.sqrt())?);
    /// Inverse error function.
    ///
    /// ```
    /// use lazulite::{erf, erfinv, Array};
    /// let x = Array::from_slice(&[-0.5f32, 0.25], &[2])?;
    /// let y = erfinv(&erf(&x)?)?.to_vec::<f32>()?;
    /// assert!((y[0] + 0.5).abs() < 1e-5 && (y[1] - 0.25).abs() < 1e-5);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [erfinv] Erfinv, "erfinv", Float { complex: false }, plain("ErfInv"),
        |_, y, v| multiply(v, &multiply(&exp(&square(y)?)?, PI.sqrt() / 2.0)?);
    /// Largest integer not above `a` (integers unchanged).
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[-1.5f32, 2.7], &[2])?;
    /// assert_eq!(lazulite::floor(&a)?.to_vec::<f32>()?, vec![-2.0, 2.0]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [floor] Floor, "floor", Same { complex: false }, plain("Floor"), |_, _, v| zeros_like(v);
    /// Smallest integer not below `a` (integers unchanged).
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[-1.5f32, 2.2], &[2])?;
    /// assert_eq!(lazulite::ceil(&a)?.to_vec::<f32>()?, vec![-1.0, 3.0]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [ceil] Ceil, "ceil", Same { complex: false }, plain("Ceil"), |_, _, v| zeros_like(v);
    /// Rounds half to even (public as [`round`], which takes a number of decimals).
    [] Round, "round", Same { complex: true }, plain("Round"), |_, _, v| zeros_like(v);
    /// Integer part, rounding toward zero.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[-1.7f32, 1.7], &[2])?;
    /// assert_eq!(lazulite::trunc(&a)?.to_vec::<f32>()?, vec![-1.0, 1.0]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [trunc] Trunc, "trunc", Same { complex: false },
        Mlx::Composed(|x| where_(&less(x, 0)?, &ceil(x)?, &floor(x)?)), |_, _, v| zeros_like(v);
    /// Whether each element is NaN.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1.0f32, f32::NAN], &[2])?;
    /// assert_eq!(lazulite::isnan(&a)?.to_vec::<bool>()?, vec![false, true]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [isnan] IsNan, "isnan", Predicate, Mlx::Composed(|x| not_equal(x, x)), |_, _, v| zeros_like(v);
    /// Whether each element is +inf or -inf.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[f32::INFINITY, f32::NEG_INFINITY, 1.0, f32::NAN], &[4])?;
    /// assert_eq!(lazulite::isinf(&a)?.to_vec::<bool>()?, vec![true, true, false, false]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [isinf] IsInf, "isinf", Predicate,
        Mlx::Composed(|x| for_floats(x, |x| logical_or(&isposinf(x)?, &isneginf(x)?), false)),
        |_, _, v| zeros_like(v);
    /// Whether each element is +inf (a complex element: `+inf + 0j`, as MLX compares).
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[f32::INFINITY, f32::NEG_INFINITY], &[2])?;
    /// assert_eq!(lazulite::isposinf(&a)?.to_vec::<bool>()?, vec![true, false]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [isposinf] IsPosInf, "isposinf", Predicate,
        Mlx::Composed(|x| for_floats(x, |x| equal(x, &infinity(x, 1.0)?), false)),
        |_, _, v| zeros_like(v);
    /// Whether each element is -inf (a complex element: `-inf + 0j`, as MLX compares).
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[f32::INFINITY, f32::NEG_INFINITY], &[2])?;
    /// assert_eq!(lazulite::isneginf(&a)?.to_vec::<bool>()?, vec![false, true]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [isneginf] IsNegInf, "isneginf", Predicate,
        Mlx::Composed(|x| for_floats(x, |x| equal(x, &infinity(x, -1.0)?), false)),
        |_, _, v| zeros_like(v);
    /// Whether each element is neither infinite nor NaN.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1.0f32, f32::INFINITY, f32::NAN], &[3])?;
    /// assert_eq!(lazulite::isfinite(&a)?.to_vec::<bool>()?, vec![true, false, false]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [isfinite] IsFinite, "isfinite", Predicate,
        Mlx::Composed(|x| for_floats(x, |x| logical_not(&logical_or(&isinf(x)?, &isnan(x)?)?), true)),
        |_, _, v| zeros_like(v);
    /// Boolean not (any dtype; nonzero is true).
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[0i32, 3], &[2])?;
    /// assert_eq!(lazulite::logical_not(&a)?.to_vec::<bool>()?, vec![true, false]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [logical_not] LogicalNot, "logical_not", Predicate, plain("LogicalNot"), |_, _, v| zeros_like(v);
    /// Bitwise not of integer or bool arrays.
    ///
    /// ```
    /// use lazulite::{bitwise_invert, Array};
    /// let a = Array::from_slice(&[0u8, 5], &[2])?;
    /// assert_eq!(bitwise_invert(&a)?.to_vec::<u8>()?, vec![255, 250]);
    /// assert!(bitwise_invert(&Array::scalar(1.0f32)).is_err());
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [bitwise_invert] BitwiseInvert, "bitwise_invert", Integer,
        Mlx::Refused("[export_function] MLX cannot export bitwise_invert (its BitwiseInvert \
                      primitive is not serializable)."),
        |_, _, v| zeros_like(v);
    /// Real part (float32 for complex input; the array itself otherwise).
    ///
    /// ```
    /// use lazulite::{real, Array, Complex, DType};
    /// let z = Array::from_slice(&[Complex::new(1.0, 2.0)], &[1])?;
    /// assert_eq!(real(&z)?.dtype(), DType::Float32);
    /// assert_eq!(real(&z)?.to_vec::<f32>()?, vec![1.0]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [real] Real, "real", ToReal, plain("Real"), |_, _, v| Ok(v.clone());
    /// Imaginary part (zeros for real input).
    ///
    /// ```
    /// use lazulite::{imag, Array, Complex};
    /// let z = Array::from_slice(&[Complex::new(1.0, 2.0)], &[1])?;
    /// assert_eq!(imag(&z)?.to_vec::<f32>()?, vec![2.0]);
    /// assert_eq!(imag(&Array::scalar(3.0f32))?.item::<f32>()?, 0.0);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [imag] Imag, "imag", ToReal, plain("Imag"),
        |_, _, v| multiply(v, Array::scalar(crate::element::Complex::new(0.0, -1.0)));
    /// Complex conjugate.
    ///
    /// ```
    /// use lazulite::{conjugate, Array, Complex};
    /// let z = Array::from_slice(&[Complex::new(1.0, 2.0)], &[1])?;
    /// assert_eq!(conjugate(&z)?.to_vec::<Complex>()?, vec![Complex::new(1.0, -2.0)]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [conjugate] Conjugate, "conjugate", Same { complex: true }, plain("Conjugate"),
        |_, _, v| conjugate(v);
    /// The same values, with gradients stopped in the transforms.
    ///
    /// ```
    /// use lazulite::{grad, multiply, stop_gradient, Array};
    /// // d/dx (x * stop_gradient(x)) sees the second factor as a constant.
    /// let d = grad(|x: &Array| multiply(x, &stop_gradient(x)?));
    /// assert_eq!(d(&Array::scalar(3.0f32))?.item::<f32>()?, 3.0);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [stop_gradient] StopGradient, "stop_gradient", Same { complex: true }, plain("StopGradient"),
        |_, _, v| zeros_like(v);
}

fn one_minus_square(x: &Array) -> Result<Array> {
    subtract(1.0, &square(x)?)
}

impl UnaryOp {
    /// The MLX function name.
    pub(crate) fn name(self) -> &'static str {
        rule(self).name
    }

    /// The output dtype for an input of `dtype`, or MLX's error for the op.
    pub(crate) fn output_dtype(self, dtype: DType) -> Result<DType> {
        let Rule { name, dtypes, .. } = rule(self);
        let complex_ok = match dtypes {
            Float { complex } | Same { complex } => complex,
            Signed | ToReal | Predicate => true,
            Integer => false,
        };
        if dtype.is_complex() && !complex_ok {
            return Err(Error::value(format!(
                "[{name}] Not supported for complex64 inputs."
            )));
        }
        match dtypes {
            Float { .. } => Ok(dtype.to_inexact()),
            Signed if dtype.is_bool() => Err(Error::value(format!(
                "[{name}] Not supported for bool, use logical_not instead."
            ))),
            ToReal if dtype.is_complex() => Ok(DType::Float32),
            Predicate => Ok(DType::Bool),
            Integer if dtype.is_inexact() => Err(Error::value(format!(
                "[{name}] Bitwise inverse only allowed on integer types."
            ))),
            _ => Ok(dtype),
        }
    }
}

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
        match rule(self.0).mlx {
            // MLX's Abs keeps a complex input's dtype and casts the magnitudes after.
            Mlx::Node(name, state) if self.0 == UnaryOp::Abs && inputs[0].dtype.is_complex() => {
                let magnitude = OutputSpec {
                    shape: outputs[0].shape.clone(),
                    dtype: inputs[0].dtype,
                };
                let abs = MlxNode::new(name, state, vec![MlxInput::Input(0)], magnitude);
                let cast = vec![MlxState::Dtype(outputs[0].dtype)];
                mlx_chain(abs, vec![("AsType", cast, outputs[0].clone())])
            }
            Mlx::Node(name, state) => MlxNode::single(name, state, inputs, outputs),
            Mlx::Composed(compose) => Ok(Export::Composed(Arc::new(move |x: &[Array]| {
                Ok(vec![compose(&x[0])?])
            }))),
            Mlx::Refused(reason) => Err(Error::value(reason)),
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
        let derivative = rule(self.0).derivative;
        Ok(vec![derivative(&inputs[0], &outputs[0], &cotangents[0])?])
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        let y = unary(self.0, &inputs[0])?;
        let t = (rule(self.0).derivative)(&inputs[0], &y, &tangents[0])?;
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

/// `a` conjugated if it is complex, else `a` itself: converts cotangents between MLX's
/// gradient convention and the holomorphic one the rules are written in.
pub(crate) fn conjugate_if_complex(a: &Array) -> Result<Array> {
    if a.dtype().is_complex() {
        conjugate(a)
    } else {
        Ok(a.clone())
    }
}

/// MLX's composition of a predicate: `float(x)` for float inputs; integers are never NaN
/// or infinite, which MLX writes as `x != x` (or `x == x` when that is `true`).
fn for_floats(
    x: &Array,
    float: impl FnOnce(&Array) -> Result<Array>,
    integer_result: bool,
) -> Result<Array> {
    match (x.dtype().is_inexact(), integer_result) {
        (true, _) => float(x),
        (false, true) => equal(x, x),
        (false, false) => not_equal(x, x),
    }
}

/// `sign * inf` in `x`'s dtype.
fn infinity(x: &Array, sign: f64) -> Result<Array> {
    astype(&Array::scalar(sign * f64::INFINITY), x.dtype())
}

/// Records `op` on `a` after checking the dtype.
pub(crate) fn unary(op: UnaryOp, a: &Array) -> Result<Array> {
    let dtype = op.output_dtype(a.dtype())?;
    let spec = OutputSpec {
        shape: a.shape().to_vec(),
        dtype,
    };
    Ok(record_elementwise(Unary(op), vec![a.clone()], spec, own))
}

/// `a` itself (NumPy's `positive`).
///
/// ```
/// let a = lazulite::Array::from_slice(&[-1i32, 2], &[2])?;
/// assert_eq!(lazulite::positive(&a)?.to_vec::<i32>()?, vec![-1, 2]);
/// # Ok::<(), lazulite::Error>(())
/// ```
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
        let rounded = round(&astype(a, DType::Float64)?, decimals)?;
        return astype(&rounded, a.dtype());
    }
    if decimals == 0 {
        return unary(UnaryOp::Round, a);
    }
    let scale = 10f64.powf(decimals.unsigned_abs() as f64);
    if decimals > 0 {
        let scaled = multiply(a, scale)?;
        divide(&unary(UnaryOp::Round, &scaled)?, scale)
    } else {
        let scaled = divide(a, scale)?;
        multiply(&unary(UnaryOp::Round, &scaled)?, scale)
    }
}

/// Radians to degrees.
///
/// ```
/// let d = lazulite::degrees(&lazulite::Array::scalar(std::f32::consts::PI))?.item::<f32>()?;
/// assert!((d - 180.0).abs() < 1e-4);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn degrees(a: &Array) -> Result<Array> {
    multiply(a, 180.0 / std::f64::consts::PI)
}

/// Degrees to radians.
///
/// ```
/// let r = lazulite::radians(&lazulite::Array::scalar(90.0f32))?.item::<f32>()?;
/// assert!((r - std::f32::consts::FRAC_PI_2).abs() < 1e-6);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn radians(a: &Array) -> Result<Array> {
    multiply(a, std::f64::consts::PI / 180.0)
}
