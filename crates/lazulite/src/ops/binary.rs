//! Two-input elementwise ops: the `Binary` primitive and the public functions.

use super::cast::astype;
use super::operand::{to_arrays, Operand};
use super::view::broadcast_with;
use crate::array::Array;
use crate::backend::cpu::binary::{binary as binary_kernel, BinaryOp};
use crate::backend::Tensor;
use crate::error::{Error, Result};
use crate::ops::{exp, log, negative, square, zeros_like};
use crate::primitive::{Export, MlxNode, MlxState, OutputSpec, Primitive};
use crate::shape::broadcast_shapes;
use crate::transforms::batch_to_front;

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
        use BinaryOp::*;
        let plain = |name| MlxNode::single(name, vec![], inputs, outputs);
        // MLX's `BitwiseBinary::Op` is `{And, Or, Xor, LeftShift, RightShift}`.
        let bitwise =
            |op| MlxNode::single("BitwiseBinary", vec![MlxState::Int(op)], inputs, outputs);
        match self.0 {
            Add => plain("Add"),
            Subtract => plain("Subtract"),
            Multiply => plain("Multiply"),
            Divide => plain("Divide"),
            FloorDivide => plain("FloorDivide"),
            Remainder => plain("Remainder"),
            Power => plain("Power"),
            Maximum => plain("Maximum"),
            Minimum => plain("Minimum"),
            Arctan2 => plain("ArcTan2"),
            LogAddExp => plain("LogAddExp"),
            Equal => MlxNode::single("Equal", vec![MlxState::Bool(false)], inputs, outputs),
            NotEqual => plain("NotEqual"),
            Less => plain("Less"),
            LessEqual => plain("LessEqual"),
            Greater => plain("Greater"),
            GreaterEqual => plain("GreaterEqual"),
            LogicalAnd => plain("LogicalAnd"),
            LogicalOr => plain("LogicalOr"),
            BitwiseAnd => bitwise(0),
            BitwiseOr => bitwise(1),
            BitwiseXor => bitwise(2),
            LeftShift => bitwise(3),
            RightShift => bitwise(4),
        }
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
    use BinaryOp::*;
    let (a, b) = (&inputs[0], &inputs[1]);
    let first = i == 0;
    match op {
        Add => Ok(v.clone()),
        Subtract if first => Ok(v.clone()),
        Subtract => negative(v),
        Multiply => multiply(v, if first { b } else { a }),
        Divide if first => divide(v, b),
        Divide => negative(&divide(&multiply(v, y)?, b)?),
        Power if first => multiply(v, &multiply(b, &power(a, &subtract(b, 1.0)?)?)?),
        // d/db a^b = a^b log(a), taken as 0 where a == 0 (as JAX does).
        Power => multiply(v, &multiply(y, &log(&add(a, &equal(a, 0.0)?)?)?)?),
        Maximum if first => multiply(v, &greater_equal(a, b)?),
        Maximum => multiply(v, &less(a, b)?),
        Minimum if first => multiply(v, &less_equal(a, b)?),
        Minimum => multiply(v, &greater(a, b)?),
        Arctan2 => {
            let r2 = add(&square(a)?, &square(b)?)?;
            if first {
                multiply(v, &divide(b, &r2)?)
            } else {
                negative(&multiply(v, &divide(a, &r2)?)?)
            }
        }
        LogAddExp => multiply(v, &exp(&subtract(if first { a } else { b }, y)?)?),
        Remainder if first => Ok(v.clone()),
        Remainder => negative(&multiply(v, &floor_divide(a, b)?)?),
        FloorDivide | Equal | NotEqual | Less | LessEqual | Greater | GreaterEqual | LogicalAnd
        | LogicalOr | BitwiseAnd | BitwiseOr | BitwiseXor | LeftShift | RightShift => zeros_like(v),
    }
}

/// Promotes, casts and broadcasts the operands of `op`.
pub(crate) fn binary(op: BinaryOp, a: Operand, b: Operand) -> Result<Array> {
    let name = op.name();
    let (arrays, dtype) = to_arrays(name, &[a, b])?;
    let in_dtype = op.input_dtype(dtype)?;
    let (a, b) = (&arrays[0], &arrays[1]);
    let shape = broadcast_shapes(a.shape(), b.shape()).map_err(|_| {
        Error::value(format!(
            "[{name}] Shapes {:?} and {:?} cannot be broadcast.",
            a.shape(),
            b.shape()
        ))
    })?;
    let a2 = broadcast_with(&astype(a, in_dtype)?, &shape, &[b], 0)?;
    let b = broadcast_with(&astype(b, in_dtype)?, &shape, &[a], 0)?;
    let a = a2;
    Ok(Array::from_op(
        Binary(op),
        vec![a, b],
        shape,
        op.output_dtype(in_dtype),
    ))
}

macro_rules! binary_fns {
    ($($(#[$doc:meta])* $name:ident => $op:ident;)*) => {$(
        $(#[$doc])*
        pub fn $name(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Array> {
            binary(BinaryOp::$op, a.into(), b.into())
        }
    )*};
}

binary_fns! {
    /// Elementwise `a + b` with broadcasting and promotion.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1i32, 2], &[2]).unwrap();
    /// let c = lazulite::add(&a, 1.5).unwrap();
    /// assert_eq!(c.dtype(), lazulite::DType::Float32);
    /// assert_eq!(c.to_vec::<f32>().unwrap(), vec![2.5, 3.5]);
    /// ```
    add => Add;
    /// Elementwise `a - b`.
    subtract => Subtract;
    /// Elementwise `a * b`.
    multiply => Multiply;
    /// Elementwise true division; integers give float32.
    divide => Divide;
    /// Elementwise division rounded toward negative infinity.
    floor_divide => FloorDivide;
    /// Elementwise remainder with the sign of the divisor (Python's `%`).
    remainder => Remainder;
    /// Elementwise `a ** b`.
    power => Power;
    /// Elementwise maximum (NaN propagates).
    maximum => Maximum;
    /// Elementwise minimum (NaN propagates).
    minimum => Minimum;
    /// Elementwise `arctan(a / b)` using the signs of both to pick the quadrant.
    arctan2 => Arctan2;
    /// Elementwise `log(exp(a) + exp(b))`, computed stably.
    logaddexp => LogAddExp;
    /// Elementwise `a == b`.
    equal => Equal;
    /// Elementwise `a != b`.
    not_equal => NotEqual;
    /// Elementwise `a < b`; complex numbers compare lexicographically (real part first).
    less => Less;
    /// Elementwise `a <= b`.
    less_equal => LessEqual;
    /// Elementwise `a > b`.
    greater => Greater;
    /// Elementwise `a >= b`.
    greater_equal => GreaterEqual;
    /// Elementwise boolean and (nonzero is true).
    logical_and => LogicalAnd;
    /// Elementwise boolean or (nonzero is true).
    logical_or => LogicalOr;
    /// Elementwise bitwise and of integer or bool arrays.
    bitwise_and => BitwiseAnd;
    /// Elementwise bitwise or of integer or bool arrays.
    bitwise_or => BitwiseOr;
    /// Elementwise bitwise xor of integer or bool arrays.
    bitwise_xor => BitwiseXor;
    /// Elementwise `a << b`.
    left_shift => LeftShift;
    /// Elementwise `a >> b` (arithmetic for signed integers).
    right_shift => RightShift;
}
