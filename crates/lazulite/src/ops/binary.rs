//! Two-input elementwise ops: one row per op (its name, dtype rule, partial derivatives,
//! how MLX exports it, its public function), the `Binary` primitive reading those rows,
//! and the promotion and broadcasting every op shares. The kernels are the backend's
//! (`backend/cpu/binary.rs`), chosen by the op's tag.

use crate::array::Array;
use crate::backend::cpu::binary::binary as binary_kernel;
use crate::backend::op::BinaryOp;
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::batching::batch_to_front;
use crate::ops::cast::astype;
use crate::ops::creation::zeros_like;
use crate::ops::eager::record_elementwise;
use crate::ops::operand::{broadcast_scalar, to_array_pair, Operand};
use crate::ops::trace::in_shapeless_trace;
use crate::ops::unary::{exp, log, negative, square};
use crate::ops::view::broadcast_with;
use crate::primitive::{Export, MlxNode, MlxState, OutputSpec, Primitive};
use crate::shape::{broadcast_shapes, same_shape};
use std::cell::RefCell;
use std::sync::Arc;

/// The dtype both inputs are cast to, from their promoted dtype, and the output's.
#[derive(Copy, Clone)]
enum Dtypes {
    /// The promoted dtype, in and out.
    Same,
    /// Float math: integers and bools compute in float32.
    Float { complex: bool },
    /// The promoted dtype in, bool out.
    Compare,
    /// Bool in and out.
    Logical,
    /// Integers and bools (shifts: bools as uint8, as MLX shifts them).
    Bitwise { shift: bool },
    /// Real numbers (the promoted dtype).
    Real,
}

/// `v * dy/d(input)` for `y = op(a, b)`, for the first input (`first`) or the second.
type Partial = fn(a: &Array, b: &Array, y: &Array, first: bool, v: &Array) -> Result<Array>;

/// Everything `ops` knows about one op.
struct Rule {
    name: &'static str,
    dtypes: Dtypes,
    /// MLX's primitive and its state, for export.
    mlx: (&'static str, Option<MlxState>),
    partial: Partial,
}

use Dtypes::*;

/// The table. A row: its doc (the first line is the summary language bindings show), the
/// public function, the tag, the MLX name, the dtype rule, MLX's primitive (with its
/// state), the partial derivative as `|a, b, y, first, v|`. Ops with integer or bool
/// results have zero derivative. Like the unary table, it gives an exported macro,
/// [`binary_functions!`](crate::binary_functions), for language bindings.
macro_rules! binary_ops {
    ($(
        #[doc = $summary:literal] $(#[doc = $doc:literal])*
        [$fname:ident] $op:ident, $name:literal, $dtypes:expr, $mlx:expr,
            |$a:tt, $b:tt, $y:tt, $first:tt, $v:tt| $partial:expr;
    )*) => {
        fn rule(op: BinaryOp) -> Rule {
            match op {$(
                BinaryOp::$op => Rule {
                    name: $name,
                    dtypes: $dtypes,
                    mlx: $mlx,
                    partial: |$a, $b, $y, $first, $v| $partial,
                },
            )*}
        }
        $(
            #[doc = $summary] $(#[doc = $doc])*
            pub fn $fname(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Array> {
                binary(BinaryOp::$op, a.into(), b.into())
            }
        )*
        function_list! {
            /// Invokes `callback!` with every two-input elementwise function of the crate
            /// root, as `name "summary",` pairs (the summary is the first line of its doc).
            ///
            /// ```
            /// macro_rules! names {
            ///     ($($name:ident $summary:literal,)*) => { vec![$(stringify!($name)),*] };
            /// }
            /// let names: Vec<&str> = lazulite::binary_functions!(names);
            /// assert!(names.contains(&"add") && names.contains(&"right_shift"));
            /// ```
            binary_functions ($) $($fname $summary)*
        }
    };
}

fn plain(name: &'static str) -> (&'static str, Option<MlxState>) {
    (name, None)
}

/// MLX's `BitwiseBinary::Op` is `{And, Or, Xor, LeftShift, RightShift}`.
fn bitwise(op: i32) -> (&'static str, Option<MlxState>) {
    ("BitwiseBinary", Some(MlxState::Int(op)))
}

binary_ops! {
    /// Elementwise `a + b` with broadcasting and promotion.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1i32, 2], &[2]).unwrap();
    /// let c = lazulite::add(&a, 1.5).unwrap();
    /// assert_eq!(c.dtype(), lazulite::DType::Float32);
    /// assert_eq!(c.to_vec::<f32>().unwrap(), vec![2.5, 3.5]);
    /// ```
    [add] Add, "add", Same, plain("Add"), |_, _, _, _, v| Ok(v.clone());
    /// Elementwise `a - b`.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[5i32, 7], &[2])?;
    /// assert_eq!(lazulite::subtract(&a, 2)?.to_vec::<i32>()?, vec![3, 5]);
    /// assert_eq!(lazulite::subtract(10, &a)?.to_vec::<i32>()?, vec![5, 3]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [subtract] Subtract, "subtract", Same, plain("Subtract"),
        |_, _, _, first, v| if first { Ok(v.clone()) } else { negative(v) };
    /// Elementwise `a * b`.
    ///
    /// ```
    /// use lazulite::{multiply, Array};
    /// let a = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
    /// let row = Array::from_slice(&[10.0f32, 100.0], &[2])?; // broadcast over the rows
    /// assert_eq!(multiply(&a, &row)?.to_vec::<f32>()?, vec![10.0, 200.0, 30.0, 400.0]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [multiply] Multiply, "multiply", Same, plain("Multiply"),
        |a, b, _, first, v| multiply(v, if first { b } else { a });
    /// Elementwise true division; integers give float32.
    ///
    /// ```
    /// use lazulite::{divide, Array, DType};
    /// let q = divide(&Array::from_slice(&[1i32, 3], &[2])?, 2)?;
    /// assert_eq!(q.dtype(), DType::Float32);
    /// assert_eq!(q.to_vec::<f32>()?, vec![0.5, 1.5]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [divide] Divide, "divide", Float { complex: true }, plain("Divide"),
        |_, b, y, first, v| if first {
            divide(v, b)
        } else {
            negative(&divide(&multiply(v, y)?, b)?)
        };
    /// Elementwise division rounded toward negative infinity.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[7i32, -7], &[2])?;
    /// assert_eq!(lazulite::floor_divide(&a, 2)?.to_vec::<i32>()?, vec![3, -4]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [floor_divide] FloorDivide, "floor_divide", Same, plain("FloorDivide"),
        |_, _, _, _, v| zeros_like(v);
    /// Elementwise remainder with the sign of the divisor (Python's `%`).
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[7i32, -7], &[2])?;
    /// assert_eq!(lazulite::remainder(&a, 3)?.to_vec::<i32>()?, vec![1, 2]);
    /// assert_eq!(lazulite::remainder(&a, -3)?.to_vec::<i32>()?, vec![-2, -1]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [remainder] Remainder, "remainder", Real, plain("Remainder"),
        |a, b, _, first, v| if first {
            Ok(v.clone())
        } else {
            negative(&multiply(v, &floor_divide(a, b)?)?)
        };
    /// Elementwise `a ** b`.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[2i32, 3], &[2])?;
    /// assert_eq!(lazulite::power(&a, 3)?.to_vec::<i32>()?, vec![8, 27]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    // d/db a^b = a^b log(a), taken as 0 where a == 0 (as JAX does).
    [power] Power, "power", Same, plain("Power"),
        |a, b, y, first, v| if first {
            multiply(v, &multiply(b, &power(a, &subtract(b, 1.0)?)?)?)
        } else {
            multiply(v, &multiply(y, &log(&add(a, &equal(a, 0.0)?)?)?)?)
        };
    /// Elementwise maximum (NaN propagates).
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1.0f32, 5.0, f32::NAN], &[3])?;
    /// let m = lazulite::maximum(&a, 2.0)?.to_vec::<f32>()?;
    /// assert_eq!(&m[..2], &[2.0, 5.0]);
    /// assert!(m[2].is_nan());
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [maximum] Maximum, "maximum", Same, plain("Maximum"),
        |a, b, _, first, v| if first {
            multiply(v, &greater_equal(a, b)?)
        } else {
            multiply(v, &less(a, b)?)
        };
    /// Elementwise minimum (NaN propagates).
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1.0f32, 5.0, f32::NAN], &[3])?;
    /// let m = lazulite::minimum(&a, 2.0)?.to_vec::<f32>()?;
    /// assert_eq!(&m[..2], &[1.0, 2.0]);
    /// assert!(m[2].is_nan());
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [minimum] Minimum, "minimum", Same, plain("Minimum"),
        |a, b, _, first, v| if first {
            multiply(v, &less_equal(a, b)?)
        } else {
            multiply(v, &greater(a, b)?)
        };
    /// Elementwise `arctan(a / b)` using the signs of both to pick the quadrant.
    ///
    /// ```
    /// use lazulite::{arctan2, Array};
    /// // (y, x) = (1, -1) lies in the second quadrant: 3π/4, where atan(y / x) gives -π/4.
    /// let angle = arctan2(&Array::scalar(1.0f32), &Array::scalar(-1.0f32))?.item::<f32>()?;
    /// assert!((angle - 3.0 * std::f32::consts::FRAC_PI_4).abs() < 1e-6);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [arctan2] Arctan2, "arctan2", Float { complex: false }, plain("ArcTan2"),
        |a, b, _, first, v| {
            let r2 = add(&square(a)?, &square(b)?)?;
            if first {
                multiply(v, &divide(b, &r2)?)
            } else {
                negative(&multiply(v, &divide(a, &r2)?)?)
            }
        };
    /// Elementwise `log(exp(a) + exp(b))`, computed stably.
    ///
    /// ```
    /// // exp(1000) overflows float32; the sum of exponentials in log space does not.
    /// let a = lazulite::Array::scalar(1000.0f32);
    /// let y = lazulite::logaddexp(&a, &a)?.item::<f32>()?;
    /// assert!((y - (1000.0 + std::f32::consts::LN_2)).abs() < 1e-3);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [logaddexp] LogAddExp, "logaddexp", Float { complex: true }, plain("LogAddExp"),
        |a, b, y, first, v| multiply(v, &exp(&subtract(if first { a } else { b }, y)?)?);
    /// Elementwise `a == b`.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1i32, 2, 3], &[3])?;
    /// assert_eq!(lazulite::equal(&a, 2)?.to_vec::<bool>()?, vec![false, true, false]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [equal] Equal, "equal", Compare, ("Equal", Some(MlxState::Bool(false))),
        |_, _, _, _, v| zeros_like(v);
    /// Elementwise `a != b`.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1i32, 2, 3], &[3])?;
    /// assert_eq!(lazulite::not_equal(&a, 2)?.to_vec::<bool>()?, vec![true, false, true]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [not_equal] NotEqual, "not_equal", Compare, plain("NotEqual"), |_, _, _, _, v| zeros_like(v);
    /// Elementwise `a < b`; complex numbers compare lexicographically (real part first).
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1i32, 2, 3], &[3])?;
    /// assert_eq!(lazulite::less(&a, 2)?.to_vec::<bool>()?, vec![true, false, false]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [less] Less, "less", Compare, plain("Less"), |_, _, _, _, v| zeros_like(v);
    /// Elementwise `a <= b`.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1i32, 2, 3], &[3])?;
    /// assert_eq!(lazulite::less_equal(&a, 2)?.to_vec::<bool>()?, vec![true, true, false]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [less_equal] LessEqual, "less_equal", Compare, plain("LessEqual"),
        |_, _, _, _, v| zeros_like(v);
    /// Elementwise `a > b`.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1i32, 2, 3], &[3])?;
    /// assert_eq!(lazulite::greater(&a, 2)?.to_vec::<bool>()?, vec![false, false, true]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [greater] Greater, "greater", Compare, plain("Greater"), |_, _, _, _, v| zeros_like(v);
    /// Elementwise `a >= b`.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1i32, 2, 3], &[3])?;
    /// assert_eq!(lazulite::greater_equal(&a, 2)?.to_vec::<bool>()?, vec![false, true, true]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [greater_equal] GreaterEqual, "greater_equal", Compare, plain("GreaterEqual"),
        |_, _, _, _, v| zeros_like(v);
    /// Elementwise boolean and (nonzero is true).
    ///
    /// ```
    /// use lazulite::{logical_and, Array};
    /// let a = Array::from_slice(&[true, true, false], &[3])?;
    /// let b = Array::from_slice(&[2i32, 0, 1], &[3])?; // nonzero is true
    /// assert_eq!(logical_and(&a, &b)?.to_vec::<bool>()?, vec![true, false, false]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [logical_and] LogicalAnd, "logical_and", Logical, plain("LogicalAnd"),
        |_, _, _, _, v| zeros_like(v);
    /// Elementwise boolean or (nonzero is true).
    ///
    /// ```
    /// use lazulite::{logical_or, Array};
    /// let a = Array::from_slice(&[true, false, false], &[3])?;
    /// let b = Array::from_slice(&[0i32, 3, 0], &[3])?;
    /// assert_eq!(logical_or(&a, &b)?.to_vec::<bool>()?, vec![true, true, false]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [logical_or] LogicalOr, "logical_or", Logical, plain("LogicalOr"),
        |_, _, _, _, v| zeros_like(v);
    /// Elementwise bitwise and of integer or bool arrays.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[0b1100u8, 0b1010], &[2])?;
    /// assert_eq!(lazulite::bitwise_and(&a, 0b0110)?.to_vec::<u8>()?, vec![0b0100, 0b0010]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [bitwise_and] BitwiseAnd, "bitwise_and", Bitwise { shift: false }, bitwise(0),
        |_, _, _, _, v| zeros_like(v);
    /// Elementwise bitwise or of integer or bool arrays.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[0b1100u8, 0b1010], &[2])?;
    /// assert_eq!(lazulite::bitwise_or(&a, 0b0110)?.to_vec::<u8>()?, vec![0b1110, 0b1110]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [bitwise_or] BitwiseOr, "bitwise_or", Bitwise { shift: false }, bitwise(1),
        |_, _, _, _, v| zeros_like(v);
    /// Elementwise bitwise xor of integer or bool arrays.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[0b1100u8, 0b1010], &[2])?;
    /// assert_eq!(lazulite::bitwise_xor(&a, 0b0110)?.to_vec::<u8>()?, vec![0b1010, 0b1100]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [bitwise_xor] BitwiseXor, "bitwise_xor", Bitwise { shift: false }, bitwise(2),
        |_, _, _, _, v| zeros_like(v);
    /// Elementwise `a << b`.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1i32, 3], &[2])?;
    /// assert_eq!(lazulite::left_shift(&a, 2)?.to_vec::<i32>()?, vec![4, 12]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [left_shift] LeftShift, "left_shift", Bitwise { shift: true }, bitwise(3),
        |_, _, _, _, v| zeros_like(v);
    /// Elementwise `a >> b` (arithmetic for signed integers).
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[16i32, -16], &[2])?;
    /// assert_eq!(lazulite::right_shift(&a, 2)?.to_vec::<i32>()?, vec![4, -4]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    [right_shift] RightShift, "right_shift", Bitwise { shift: true }, bitwise(4),
        |_, _, _, _, v| zeros_like(v);
}

impl BinaryOp {
    /// The MLX function name.
    pub(crate) fn name(self) -> &'static str {
        rule(self).name
    }

    /// The dtype both inputs are converted to, given their promoted dtype `t`, or MLX's
    /// error for the op.
    pub(crate) fn input_dtype(self, t: DType) -> Result<DType> {
        let Rule { name, dtypes, .. } = rule(self);
        match dtypes {
            Float { complex: false } if t.is_complex() => Err(Error::value(format!(
                "[{name}] Not supported for complex64 inputs."
            ))),
            Float { .. } => Ok(t.to_inexact()),
            Logical => Ok(DType::Bool),
            // MLX shifts bools as uint8: `True << True` is 2.
            Bitwise { shift: true } if t.is_bool() => Ok(DType::UInt8),
            // MLX finds this in its kernel, so its users get a RuntimeError.
            Bitwise { .. } if t.is_inexact() => Err(Error::runtime(format!(
                "[{name}] Only allowed on integer or boolean types but got type {t}."
            ))),
            Real if t.is_complex() => Err(Error::value(format!(
                "[{name}] Complex type not supported."
            ))),
            _ => Ok(t),
        }
    }

    /// The output dtype for inputs of dtype `t` (as given by [`BinaryOp::input_dtype`]).
    pub(crate) fn output_dtype(self, t: DType) -> DType {
        match rule(self).dtypes {
            Compare | Logical => DType::Bool,
            _ => t,
        }
    }
}

pub(crate) struct Binary(pub BinaryOp);

impl Primitive for Binary {
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
        let (name, state) = rule(self.0).mlx;
        MlxNode::single(name, state.into_iter().collect(), inputs, outputs)
    }

    fn eval(&self, mut inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let b = inputs.pop().expect("binary ops have two inputs");
        let a = inputs.pop().expect("binary ops have two inputs");
        Ok(vec![binary_kernel(self.0, a, b)?])
    }

    fn vjp(
        &self,
        inputs: &[Array],
        outputs: &[Array],
        cotangents: &[Array],
        argnums: &[usize],
    ) -> Result<Vec<Array>> {
        argnums
            .iter()
            .map(|&i| scale_by_partial(self.0, inputs, &outputs[0], i, &cotangents[0]))
            .collect()
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], argnums: &[usize]) -> Result<Vec<Array>> {
        let y = binary(self.0, inputs[0].clone().into(), inputs[1].clone().into())?;
        let mut total: Option<Array> = None;
        for (&i, t) in argnums.iter().zip(tangents) {
            let term = scale_by_partial(self.0, inputs, &y, i, t)?;
            total = Some(match total {
                Some(acc) => add(&acc, &term)?,
                None => term,
            });
        }
        Ok(vec![total.map_or_else(|| zeros_like(&y), Ok)?])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let a = batch_to_front(&inputs[0], axes[0])?;
        let b = batch_to_front(&inputs[1], axes[1])?;
        Ok((vec![binary(self.0, a.into(), b.into())?], vec![Some(0)]))
    }
}

/// `v * dy/d(input i)` for `y = op(a, b)`.
fn scale_by_partial(
    op: BinaryOp,
    inputs: &[Array],
    y: &Array,
    i: usize,
    v: &Array,
) -> Result<Array> {
    (rule(op).partial)(&inputs[0], &inputs[1], y, i == 0, v)
}

/// Promotes, casts and broadcasts the operands of `op`.
pub(crate) fn binary(op: BinaryOp, a: Operand, b: Operand) -> Result<Array> {
    let name = op.name();
    let (x, y, dtype) = to_array_pair(name, &a, &b)?;
    let in_dtype = op.input_dtype(dtype)?;
    // MLX's message, from the shared broadcast.
    let shape = broadcast_shapes(x.shape(), y.shape())?;
    let shapeless = in_shapeless_trace();
    // An operand of the input dtype and the output shape is used as it is (the usual case,
    // worth sparing the handles that casting and broadcasting to itself would take).
    let ready = |array: &Array| {
        !shapeless && array.dtype() == in_dtype && same_shape(array.shape(), &shape)
    };
    let prepare = |operand: &Operand, array: &Array, peer: &Array| match operand {
        // A scalar already of the input dtype shares its cached broadcast.
        Operand::Scalar(s) if array.dtype() == in_dtype && !shapeless => {
            broadcast_scalar(*s, array, &shape)
        }
        _ => broadcast_with(&astype(array, in_dtype)?, &shape, &[peer], 0),
    };
    let a = (!ready(&x)).then(|| prepare(&a, &x, &y)).transpose()?;
    let b = (!ready(&y)).then(|| prepare(&b, &y, &x)).transpose()?;
    let (a, b) = (a.unwrap_or(x), b.unwrap_or(y));
    let spec = OutputSpec {
        shape,
        dtype: op.output_dtype(in_dtype),
    };
    Ok(record_elementwise(
        Binary(op),
        vec![a, b],
        spec,
        |Binary(op)| shared_primitive(op),
    ))
}

thread_local! {
    /// One primitive per op, shared by the nodes that record it, so that a node costs no
    /// allocation of its own for it.
    static PRIMITIVES: RefCell<Vec<Option<Arc<dyn Primitive>>>> = const { RefCell::new(Vec::new()) };
}

fn shared_primitive(op: BinaryOp) -> Arc<dyn Primitive> {
    PRIMITIVES
        .try_with(|p| {
            let mut p = p.borrow_mut();
            let i = op as usize;
            if p.len() <= i {
                p.resize(i + 1, None);
            }
            p[i].get_or_insert_with(|| Arc::new(Binary(op))).clone()
        })
        // While the thread's locals are being destroyed, a primitive of its own.
        .unwrap_or_else(|_| Arc::new(Binary(op)))
}
