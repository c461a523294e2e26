//! Methods on [`Array`] for the common ops, delegating to the functions of each family.

use super::*;
use crate::array::Array;
use crate::dtype::DType;
use crate::error::Result;

macro_rules! unary_methods {
    ($($name:ident),*) => {
        impl Array {$(
            #[doc = concat!("Method form of [`", stringify!($name), "`](crate::", stringify!($name), ").")]
            pub fn $name(&self) -> Result<Array> {
                $name(self)
            }
        )*}
    };
}

unary_methods!(
    abs,
    negative,
    sign,
    square,
    sqrt,
    rsqrt,
    reciprocal,
    exp,
    expm1,
    log,
    log1p,
    log2,
    log10,
    sin,
    cos,
    tan,
    arcsin,
    arccos,
    arctan,
    sinh,
    cosh,
    tanh,
    arcsinh,
    arccosh,
    arctanh,
    sigmoid,
    erf,
    erfinv,
    floor,
    ceil,
    trunc,
    isnan,
    isinf,
    isfinite,
    logical_not,
    real,
    imag,
    conjugate
);

impl Array {
    /// An array of zeros (see [`zeros`](crate::zeros)).
    pub fn zeros(shape: &[usize], dtype: DType) -> Result<Array> {
        zeros(shape, dtype)
    }

    /// An array of ones (see [`ones`](crate::ones)).
    pub fn ones(shape: &[usize], dtype: DType) -> Result<Array> {
        ones(shape, dtype)
    }

    /// Method form of [`astype`](crate::astype).
    pub fn astype(&self, dtype: DType) -> Result<Array> {
        astype(self, dtype)
    }

    /// Method form of [`reshape`](crate::reshape), taking a shape of sizes (no `-1`).
    pub fn reshape(&self, shape: &[usize]) -> Result<Array> {
        let shape: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
        reshape(self, &shape)
    }

    /// Method form of [`transpose`](crate::transpose).
    pub fn transpose(&self, axes: &[i32]) -> Result<Array> {
        transpose(self, axes)
    }

    /// The axes reversed (`a.T` in Python).
    pub fn t(&self) -> Result<Array> {
        let axes: Vec<i32> = (0..self.ndim() as i32).rev().collect();
        transpose(self, &axes)
    }

    /// Method form of [`broadcast_to`](crate::broadcast_to).
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Array> {
        broadcast_to(self, shape)
    }
}

impl Array {
    /// Method form of [`matmul`](crate::matmul) (`a @ b` in Python).
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    /// assert_eq!(a.matmul(&a).unwrap().to_vec::<f32>().unwrap(), vec![7.0, 10.0, 15.0, 22.0]);
    /// ```
    pub fn matmul(&self, other: &Array) -> Result<Array> {
        matmul(self, other)
    }
}
