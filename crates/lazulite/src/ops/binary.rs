//! Two-input elementwise ops: the `Binary` primitive and the public functions.

use super::cast::astype;
use super::operand::{to_arrays, Operand};
use super::view::broadcast_to;
use crate::array::Array;
use crate::backend::cpu::binary::{binary as binary_kernel, BinaryOp};
use crate::backend::Tensor;
use crate::error::{Error, Result};
use crate::primitive::{OutputSpec, Primitive};
use crate::shape::broadcast_shapes;

pub(crate) struct Binary(pub BinaryOp);

impl Primitive for Binary {
    fn name(&self) -> &'static str {
        self.0.name()
    }

    fn eval(&self, mut inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let b = inputs.pop().expect("binary ops have two inputs");
        let a = inputs.pop().expect("binary ops have two inputs");
        Ok(vec![binary_kernel(self.0, a, b)?])
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
    let a = broadcast_to(&astype(a, in_dtype)?, &shape)?;
    let b = broadcast_to(&astype(b, in_dtype)?, &shape)?;
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
