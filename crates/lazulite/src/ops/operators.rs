//! Rust operators on arrays (`+ - * / % & | ^ << >>`, unary `-` and `!`).
//!
//! Operators cannot return a `Result`, so they panic with the op's error message when the
//! operands do not fit (shapes that do not broadcast, an integer scalar that overflows the
//! array's dtype, bitwise ops on floats). Use the functions ([`add`](crate::add), ...)
//! to get the error as a value instead.

use crate::array::Array;
use crate::error::Result;
use crate::ops::binary::*;
use crate::ops::operand::Operand;
use crate::ops::unary::{bitwise_invert, negative};
use std::ops;

fn unwrap_op(r: Result<Array>) -> Array {
    r.unwrap_or_else(|e| panic!("{e}"))
}

macro_rules! binary_operator {
    ($trait:ident, $method:ident, $func:ident) => {
        impl<B: Into<Operand>> ops::$trait<B> for &Array {
            type Output = Array;
            fn $method(self, rhs: B) -> Array {
                unwrap_op($func(self, rhs))
            }
        }
        impl<B: Into<Operand>> ops::$trait<B> for Array {
            type Output = Array;
            fn $method(self, rhs: B) -> Array {
                unwrap_op($func(&self, rhs))
            }
        }
        binary_operator!(@scalar_lhs $trait, $method, $func: bool, i8, i16, i32, i64, u8, u16, u32, f32, f64);
    };
    (@scalar_lhs $trait:ident, $method:ident, $func:ident: $($t:ty),*) => {$(
        impl ops::$trait<&Array> for $t {
            type Output = Array;
            fn $method(self, rhs: &Array) -> Array {
                unwrap_op($func(self, rhs))
            }
        }
        impl ops::$trait<Array> for $t {
            type Output = Array;
            fn $method(self, rhs: Array) -> Array {
                unwrap_op($func(self, &rhs))
            }
        }
    )*};
}

binary_operator!(Add, add, add);
binary_operator!(Sub, sub, subtract);
binary_operator!(Mul, mul, multiply);
binary_operator!(Div, div, divide);
binary_operator!(Rem, rem, remainder);
binary_operator!(BitAnd, bitand, bitwise_and);
binary_operator!(BitOr, bitor, bitwise_or);
binary_operator!(BitXor, bitxor, bitwise_xor);
binary_operator!(Shl, shl, left_shift);
binary_operator!(Shr, shr, right_shift);

impl ops::Neg for &Array {
    type Output = Array;
    fn neg(self) -> Array {
        unwrap_op(negative(self))
    }
}
impl ops::Neg for Array {
    type Output = Array;
    fn neg(self) -> Array {
        unwrap_op(negative(&self))
    }
}

/// `!a`: bitwise not for integers, logical not for bool (panics for floats).
impl ops::Not for &Array {
    type Output = Array;
    fn not(self) -> Array {
        unwrap_op(bitwise_invert(self))
    }
}
impl ops::Not for Array {
    type Output = Array;
    fn not(self) -> Array {
        unwrap_op(bitwise_invert(&self))
    }
}
