//! Methods on [`Array`] for the common ops, delegating to the functions of each family.

use crate::array::Array;
use crate::dtype::DType;
use crate::error::Result;
// The methods mirror the public functions, so they take them from the list that the
// crate root re-exports rather than family by family.
use crate::ops::*;

impl Array {
    /// An array of zeros (see [`zeros`](crate::zeros)).
    ///
    /// ```
    /// let a = lazulite::Array::zeros(&[2, 2], lazulite::DType::Float32)?;
    /// assert_eq!(a.to_vec::<f32>()?, vec![0.0; 4]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn zeros(shape: &[usize], dtype: DType) -> Result<Array> {
        zeros(shape, dtype)
    }

    /// An array of ones (see [`ones`](crate::ones)).
    ///
    /// ```
    /// let a = lazulite::Array::ones(&[3], lazulite::DType::UInt8)?;
    /// assert_eq!(a.to_vec::<u8>()?, vec![1, 1, 1]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn ones(shape: &[usize], dtype: DType) -> Result<Array> {
        ones(shape, dtype)
    }

    /// Method form of [`astype`](crate::astype).
    ///
    /// ```
    /// use lazulite::{Array, DType};
    /// let a = Array::from_slice(&[1.7f32, -1.7], &[2])?;
    /// assert_eq!(a.astype(DType::Int32)?.to_vec::<i32>()?, vec![1, -1]); // truncates
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn astype(&self, dtype: DType) -> Result<Array> {
        astype(self, dtype)
    }

    /// Method form of [`reshape`](crate::reshape), taking a shape of sizes (no `-1`).
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1i32, 2, 3, 4, 5, 6], &[6])?;
    /// let b = a.reshape(&[2, 3])?;
    /// assert_eq!(b.shape(), &[2, 3]);
    /// assert!(a.reshape(&[4, 2]).is_err()); // 8 elements, not 6
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn reshape(&self, shape: &[usize]) -> Result<Array> {
        let shape: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
        reshape(self, &shape)
    }

    /// Method form of [`transpose`](crate::transpose).
    ///
    /// ```
    /// let a = lazulite::zeros(&[2, 3, 4], lazulite::DType::Float32)?;
    /// assert_eq!(a.transpose(&[2, 0, 1])?.shape(), &[4, 2, 3]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn transpose(&self, axes: &[i32]) -> Result<Array> {
        transpose(self, axes)
    }

    /// The axes reversed (`a.T` in Python).
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1i32, 2, 3, 4, 5, 6], &[2, 3])?;
    /// let t = a.t()?;
    /// assert_eq!(t.shape(), &[3, 2]);
    /// assert_eq!(t.to_vec::<i32>()?, vec![1, 4, 2, 5, 3, 6]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn t(&self) -> Result<Array> {
        let axes: Vec<i32> = (0..self.ndim() as i32).rev().collect();
        transpose(self, &axes)
    }

    /// Method form of [`broadcast_to`](crate::broadcast_to).
    ///
    /// ```
    /// let row = lazulite::Array::from_slice(&[1i32, 2], &[2])?;
    /// assert_eq!(row.broadcast_to(&[2, 2])?.to_vec::<i32>()?, vec![1, 2, 1, 2]);
    /// assert!(row.broadcast_to(&[3]).is_err());
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Array> {
        broadcast_to(self, shape)
    }
}

impl Array {
    /// Method form of [`flatten`](crate::flatten).
    ///
    /// ```
    /// let a = lazulite::zeros(&[2, 3, 4], lazulite::DType::Float32)?;
    /// assert_eq!(a.flatten(0, -1)?.shape(), &[24]);
    /// assert_eq!(a.flatten(1, 2)?.shape(), &[2, 12]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn flatten(&self, start_axis: i32, end_axis: i32) -> Result<Array> {
        flatten(self, start_axis, end_axis)
    }

    /// Method form of [`squeeze`](crate::squeeze).
    ///
    /// ```
    /// let a = lazulite::zeros(&[1, 3, 1], lazulite::DType::Float32)?;
    /// assert_eq!(a.squeeze(lazulite::Axes::All)?.shape(), &[3]);
    /// assert_eq!(a.squeeze(0)?.shape(), &[3, 1]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn squeeze(&self, axes: impl Into<crate::shape::Axes>) -> Result<Array> {
        squeeze(self, axes)
    }

    /// Method form of [`swapaxes`](crate::swapaxes).
    ///
    /// ```
    /// let a = lazulite::zeros(&[2, 3, 4], lazulite::DType::Float32)?;
    /// assert_eq!(a.swapaxes(0, -1)?.shape(), &[4, 3, 2]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn swapaxes(&self, axis1: i32, axis2: i32) -> Result<Array> {
        swapaxes(self, axis1, axis2)
    }

    /// Method form of [`moveaxis`](crate::moveaxis).
    ///
    /// ```
    /// let a = lazulite::zeros(&[2, 3, 4], lazulite::DType::Float32)?;
    /// assert_eq!(a.moveaxis(0, -1)?.shape(), &[3, 4, 2]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn moveaxis(&self, source: i32, destination: i32) -> Result<Array> {
        moveaxis(self, source, destination)
    }

    /// Method form of [`split`](crate::split).
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1i32, 2, 3, 4, 5, 6], &[6])?;
    /// let halves = a.split(2, 0)?;
    /// assert_eq!(halves[1].to_vec::<i32>()?, vec![4, 5, 6]);
    /// let parts = a.split([1i64, 4], 0)?; // before positions 1 and 4
    /// assert_eq!(parts.iter().map(|p| p.size()).collect::<Vec<_>>(), vec![1, 3, 2]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn split(
        &self,
        indices_or_sections: impl Into<IndicesOrSections>,
        axis: i32,
    ) -> Result<Vec<Array>> {
        split(self, indices_or_sections, axis)
    }

    /// Method form of [`diagonal`](crate::diagonal).
    ///
    /// ```
    /// let m = lazulite::Array::from_slice(&[1i32, 2, 3, 4, 5, 6, 7, 8, 9], &[3, 3])?;
    /// assert_eq!(m.diagonal(0, 0, 1)?.to_vec::<i32>()?, vec![1, 5, 9]);
    /// assert_eq!(m.diagonal(-1, 0, 1)?.to_vec::<i32>()?, vec![4, 8]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn diagonal(&self, offset: i64, axis1: i32, axis2: i32) -> Result<Array> {
        diagonal(self, offset, axis1, axis2)
    }

    /// Method form of [`diag`](crate::diag).
    ///
    /// ```
    /// let v = lazulite::Array::from_slice(&[1i32, 2], &[2])?;
    /// assert_eq!(v.diag(0)?.to_vec::<i32>()?, vec![1, 0, 0, 2]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn diag(&self, k: i64) -> Result<Array> {
        diag(self, k)
    }

    /// Method form of [`view`](crate::view()).
    ///
    /// ```
    /// use lazulite::{Array, DType};
    /// let a = Array::from_slice(&[1.0f32], &[1])?;
    /// assert_eq!(a.view(DType::UInt32)?.to_vec::<u32>()?, vec![0x3f80_0000]); // the same bits
    /// assert_eq!(a.view(DType::UInt8)?.shape(), &[4]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
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
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1i32, 2, 3, 4], &[4])?;
    /// assert_eq!(a.cumprod(None, false, true)?.to_vec::<i32>()?, vec![1, 2, 6, 24]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn cumprod(&self, axis: Option<i32>, reverse: bool, inclusive: bool) -> Result<Array> {
        cumprod(self, axis, reverse, inclusive, None)
    }

    /// Method form of [`cummax`](crate::cummax).
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1i32, 3, 2, 5], &[4])?;
    /// assert_eq!(a.cummax(None, false, true)?.to_vec::<i32>()?, vec![1, 3, 3, 5]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn cummax(&self, axis: Option<i32>, reverse: bool, inclusive: bool) -> Result<Array> {
        cummax(self, axis, reverse, inclusive)
    }

    /// Method form of [`cummin`](crate::cummin).
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[4i32, 2, 3, 1], &[4])?;
    /// assert_eq!(a.cummin(None, false, true)?.to_vec::<i32>()?, vec![4, 2, 2, 1]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn cummin(&self, axis: Option<i32>, reverse: bool, inclusive: bool) -> Result<Array> {
        cummin(self, axis, reverse, inclusive)
    }

    /// Method form of [`logcumsumexp`](crate::logcumsumexp).
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[0.0f32, 0.0], &[2])?;
    /// let y = a.logcumsumexp(None, false, true)?.to_vec::<f32>()?; // log(1), log(1 + 1)
    /// assert!(y[0].abs() < 1e-6 && (y[1] - std::f32::consts::LN_2).abs() < 1e-6);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn logcumsumexp(&self, axis: Option<i32>, reverse: bool, inclusive: bool) -> Result<Array> {
        logcumsumexp(self, axis, reverse, inclusive)
    }
}

macro_rules! reduce_methods {
    ($($name:ident),*) => {
        impl Array {$(
            #[doc = concat!("Method form of [`", stringify!($name), "`](crate::", stringify!($name), ").")]
            #[doc = ""]
            #[doc = "```"]
            #[doc = "let a = lazulite::Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;"]
            #[doc = concat!("let (method, function) = (a.", stringify!($name), "(0, false)?, lazulite::", stringify!($name), "(&a, 0, false)?);")]
            #[doc = "assert_eq!(method.shape(), &[2]);"]
            #[doc = "assert!(lazulite::array_equal(&method, &function, false)?.item::<bool>()?);"]
            #[doc = "# Ok::<(), lazulite::Error>(())"]
            #[doc = "```"]
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
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[4])?;
    /// assert_eq!(a.var(lazulite::Axes::All, false, 0)?.item::<f32>()?, 1.25);
    /// assert!((a.var(lazulite::Axes::All, false, 1)?.item::<f32>()? - 5.0 / 3.0).abs() < 1e-6);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn var(
        &self,
        axes: impl Into<crate::shape::Axes>,
        keepdims: bool,
        ddof: i32,
    ) -> Result<Array> {
        var(self, axes, keepdims, ddof)
    }

    /// Method form of [`std`](crate::std()).
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[2.0f32, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0], &[8])?;
    /// assert_eq!(a.std(lazulite::Axes::All, false, 0)?.item::<f32>()?, 2.0);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn std(
        &self,
        axes: impl Into<crate::shape::Axes>,
        keepdims: bool,
        ddof: i32,
    ) -> Result<Array> {
        std(self, axes, keepdims, ddof)
    }

    /// Method form of [`argmax`](crate::argmax).
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1i32, 9, 3, 7, 2, 8], &[2, 3])?;
    /// assert_eq!(a.argmax(Some(1), false)?.to_vec::<u32>()?, vec![1, 2]);
    /// assert_eq!(a.argmax(None, false)?.item::<u32>()?, 1); // over the flattened array
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn argmax(&self, axis: Option<i32>, keepdims: bool) -> Result<Array> {
        argmax(self, axis, keepdims)
    }

    /// Method form of [`argmin`](crate::argmin).
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1i32, 9, 3, 7, 2, 8], &[2, 3])?;
    /// assert_eq!(a.argmin(Some(0), false)?.to_vec::<u32>()?, vec![0, 1, 0]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn argmin(&self, axis: Option<i32>, keepdims: bool) -> Result<Array> {
        argmin(self, axis, keepdims)
    }

    /// Method form of [`softmax`](crate::softmax()).
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[0.0f32, 0.0, 0.0, 2.0f32.ln()], &[2, 2])?;
    /// let p = a.softmax(-1, false)?.to_vec::<f32>()?; // each row sums to 1
    /// assert!((p[0] - 0.5).abs() < 1e-6 && (p[3] - 2.0 / 3.0).abs() < 1e-6);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
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
