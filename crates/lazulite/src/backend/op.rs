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

/// The two-input elementwise operations. Both inputs arrive with the same shape and dtype.
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
