//! The elementwise operations a backend computes, as tags. Names, dtype rules, errors and
//! derivatives belong to `ops/unary.rs` and `ops/binary.rs`: a backend receives a tag with
//! inputs already checked and cast, and implements one kernel per tag.

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
    /// `log(1 + exp(x))`.
    Softplus,
    Erf,
    Erfinv,
    Floor,
    Ceil,
    /// Round half to even.
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
    /// Identity in the forward pass (the transforms stop gradients there).
    StopGradient,
}

/// The two-input elementwise operations, one per function of the same name. A kernel
/// receives both inputs with the same shape and dtype; [`Value::binary`](crate::Value::binary)
/// computes one on single elements.
///
/// ```
/// use lazulite::{BinaryOp, Value};
/// let sum = Value::binary(BinaryOp::Add, Value::new(1.5f32), Value::new(2.0f32)).unwrap();
/// assert_eq!(sum.to_array().item::<f32>().unwrap(), 3.5);
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// [`add`](crate::add)
    Add,
    /// [`subtract`](crate::subtract)
    Subtract,
    /// [`multiply`](crate::multiply)
    Multiply,
    /// [`divide`](crate::divide)
    Divide,
    /// [`floor_divide`](crate::floor_divide)
    FloorDivide,
    /// [`remainder`](crate::remainder)
    Remainder,
    /// [`power`](crate::power)
    Power,
    /// [`maximum`](crate::maximum)
    Maximum,
    /// [`minimum`](crate::minimum)
    Minimum,
    /// [`arctan2`](crate::arctan2)
    Arctan2,
    /// [`logaddexp`](crate::logaddexp)
    LogAddExp,
    /// [`equal`](crate::equal)
    Equal,
    /// [`not_equal`](crate::not_equal)
    NotEqual,
    /// [`less`](crate::less)
    Less,
    /// [`less_equal`](crate::less_equal)
    LessEqual,
    /// [`greater`](crate::greater)
    Greater,
    /// [`greater_equal`](crate::greater_equal)
    GreaterEqual,
    /// [`logical_and`](crate::logical_and)
    LogicalAnd,
    /// [`logical_or`](crate::logical_or)
    LogicalOr,
    /// [`bitwise_and`](crate::bitwise_and)
    BitwiseAnd,
    /// [`bitwise_or`](crate::bitwise_or)
    BitwiseOr,
    /// [`bitwise_xor`](crate::bitwise_xor)
    BitwiseXor,
    /// [`left_shift`](crate::left_shift)
    LeftShift,
    /// [`right_shift`](crate::right_shift)
    RightShift,
}
