//! Methods on [`Array`] for the common ops, delegating to the functions of each family.

use crate::array::Array;
use crate::dtype::DType;
use crate::error::Result;
// The methods mirror the public functions, so they take them from the list that the
// crate root re-exports rather than family by family.
use crate::ops::*;

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
    /// Method form of [`flatten`](crate::flatten).
    pub fn flatten(&self, start_axis: i32, end_axis: i32) -> Result<Array> {
        flatten(self, start_axis, end_axis)
    }

    /// Method form of [`squeeze`](crate::squeeze).
    pub fn squeeze(&self, axes: impl Into<crate::shape::Axes>) -> Result<Array> {
        squeeze(self, axes)
    }

    /// Method form of [`swapaxes`](crate::swapaxes).
    pub fn swapaxes(&self, axis1: i32, axis2: i32) -> Result<Array> {
        swapaxes(self, axis1, axis2)
    }

    /// Method form of [`moveaxis`](crate::moveaxis).
    pub fn moveaxis(&self, source: i32, destination: i32) -> Result<Array> {
        moveaxis(self, source, destination)
    }

    /// Method form of [`split`](crate::split).
    pub fn split(
        &self,
        indices_or_sections: impl Into<IndicesOrSections>,
        axis: i32,
    ) -> Result<Vec<Array>> {
        split(self, indices_or_sections, axis)
    }

    /// Method form of [`diagonal`](crate::diagonal).
    pub fn diagonal(&self, offset: i64, axis1: i32, axis2: i32) -> Result<Array> {
        diagonal(self, offset, axis1, axis2)
    }

    /// Method form of [`diag`](crate::diag).
    pub fn diag(&self, k: i64) -> Result<Array> {
        diag(self, k)
    }

    /// Method form of [`view`](crate::view()).
    pub fn view(&self, dtype: DType) -> Result<Array> {
        view(self, dtype)
    }

    /// Method form of [`cumsum`](crate::cumsum) (`a.cumsum(axis, reverse=, inclusive=)`
    /// in MLX, which has no `dtype` here).
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1u8, 2, 3], &[3]).unwrap();
    /// assert_eq!(a.cumsum(None, true, false).unwrap().to_vec::<u8>().unwrap(), [5, 3, 0]);
    /// ```
    pub fn cumsum(&self, axis: Option<i32>, reverse: bool, inclusive: bool) -> Result<Array> {
        cumsum(self, axis, reverse, inclusive, None)
    }

    /// Method form of [`cumprod`](crate::cumprod).
    pub fn cumprod(&self, axis: Option<i32>, reverse: bool, inclusive: bool) -> Result<Array> {
        cumprod(self, axis, reverse, inclusive, None)
    }

    /// Method form of [`cummax`](crate::cummax).
    pub fn cummax(&self, axis: Option<i32>, reverse: bool, inclusive: bool) -> Result<Array> {
        cummax(self, axis, reverse, inclusive)
    }

    /// Method form of [`cummin`](crate::cummin).
    pub fn cummin(&self, axis: Option<i32>, reverse: bool, inclusive: bool) -> Result<Array> {
        cummin(self, axis, reverse, inclusive)
    }

    /// Method form of [`logcumsumexp`](crate::logcumsumexp).
    pub fn logcumsumexp(&self, axis: Option<i32>, reverse: bool, inclusive: bool) -> Result<Array> {
        logcumsumexp(self, axis, reverse, inclusive)
    }
}

macro_rules! reduce_methods {
    ($($name:ident),*) => {
        impl Array {$(
            #[doc = concat!("Method form of [`", stringify!($name), "`](crate::", stringify!($name), ").")]
            pub fn $name(&self, axes: impl Into<crate::shape::Axes>, keepdims: bool) -> Result<Array> {
                $name(self, axes, keepdims)
            }
        )*}
    };
}

reduce_methods!(
    sum,
    prod,
    max,
    min,
    all,
    any,
    mean,
    logsumexp,
    count_nonzero,
    median
);

impl Array {
    /// Method form of [`var`](crate::var).
    pub fn var(
        &self,
        axes: impl Into<crate::shape::Axes>,
        keepdims: bool,
        ddof: i32,
    ) -> Result<Array> {
        var(self, axes, keepdims, ddof)
    }

    /// Method form of [`std`](crate::std()).
    pub fn std(
        &self,
        axes: impl Into<crate::shape::Axes>,
        keepdims: bool,
        ddof: i32,
    ) -> Result<Array> {
        std(self, axes, keepdims, ddof)
    }

    /// Method form of [`argmax`](crate::argmax).
    pub fn argmax(&self, axis: Option<i32>, keepdims: bool) -> Result<Array> {
        argmax(self, axis, keepdims)
    }

    /// Method form of [`argmin`](crate::argmin).
    pub fn argmin(&self, axis: Option<i32>, keepdims: bool) -> Result<Array> {
        argmin(self, axis, keepdims)
    }

    /// Method form of [`softmax`](crate::softmax()).
    pub fn softmax(&self, axes: impl Into<crate::shape::Axes>, precise: bool) -> Result<Array> {
        softmax(self, axes, precise)
    }

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
