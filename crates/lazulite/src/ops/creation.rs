//! Arrays made from nothing but a shape and values: full, zeros, ones, arange.

use super::cast::astype;
use super::operand::{to_arrays, Operand};
use super::view::broadcast_to;
use crate::array::Array;
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::element::{dispatch, Element, Scalar};
use crate::error::{Error, Result};
use crate::primitive::{OutputSpec, Primitive};
use crate::shape::checked_size;

/// An array of `shape` filled with `value` (an array is broadcast). The dtype is `dtype`
/// if given, else the value's.
///
/// ```
/// use lazulite::{full, DType};
/// let a = full(&[2, 2], 7, None).unwrap();
/// assert_eq!((a.dtype(), a.to_vec::<i32>().unwrap()), (DType::Int32, vec![7; 4]));
/// let b = full(&[3], 0.5, Some(DType::Float16)).unwrap();
/// assert_eq!(b.dtype(), DType::Float16);
/// ```
pub fn full(shape: &[usize], value: impl Into<Operand>, dtype: Option<DType>) -> Result<Array> {
    checked_size(shape)?;
    let (values, value_dtype) = to_arrays("full", &[value.into()])?;
    let v = astype(&values[0], dtype.unwrap_or(value_dtype))?;
    broadcast_to(&v, shape).map_err(|_| {
        Error::value(format!(
            "[full] Cannot broadcast value of shape {:?} to shape {shape:?}.",
            v.shape()
        ))
    })
}

/// An array of `shape` filled with zeros.
///
/// ```
/// let a = lazulite::zeros(&[2, 3], lazulite::DType::Float32).unwrap();
/// assert_eq!(a.to_vec::<f32>().unwrap(), vec![0.0; 6]);
/// ```
pub fn zeros(shape: &[usize], dtype: DType) -> Result<Array> {
    full(shape, Scalar::Int(0), Some(dtype))
}

/// An array of `shape` filled with ones.
pub fn ones(shape: &[usize], dtype: DType) -> Result<Array> {
    full(shape, Scalar::Int(1), Some(dtype))
}

/// Zeros with the shape and dtype of `a`.
pub fn zeros_like(a: &Array) -> Result<Array> {
    zeros(a.shape(), a.dtype())
}

/// Ones with the shape and dtype of `a`.
pub fn ones_like(a: &Array) -> Result<Array> {
    ones(a.shape(), a.dtype())
}

pub(crate) struct Arange {
    start: f64,
    step: f64,
}

impl Primitive for Arange {
    fn name(&self) -> &'static str {
        "arange"
    }

    fn params(&self) -> String {
        format!("start={}, step={}", self.start, self.step)
    }

    fn eval(&self, _: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let spec = &outputs[0];
        let mut t = Tensor::uninit(spec.dtype, &spec.shape)?;
        dispatch!(spec.dtype, T => {
            for (i, v) in t.slice_mut::<T>().iter_mut().enumerate() {
                *v = T::from_f64(self.start + i as f64 * self.step).store();
            }
        });
        Ok(vec![t])
    }
}

/// Values from `start` up to (not including) `stop` in increments of `step`.
///
/// ```
/// use lazulite::{arange, DType};
/// let a = arange(0.0, 1.0, 0.25, DType::Float32).unwrap();
/// assert_eq!(a.to_vec::<f32>().unwrap(), vec![0.0, 0.25, 0.5, 0.75]);
/// ```
pub fn arange(start: f64, stop: f64, step: f64, dtype: DType) -> Result<Array> {
    if step == 0.0 || !step.is_finite() || !start.is_finite() || !stop.is_finite() {
        return Err(Error::value(format!(
            "[arange] Cannot compute length of arange({start}, {stop}, {step})."
        )));
    }
    if dtype.is_bool() {
        return Err(Error::value("[arange] Bool is not supported for arange."));
    }
    let len = ((stop - start) / step).ceil().max(0.0);
    if len > (isize::MAX as f64) / 16.0 {
        return Err(Error::value(format!(
            "[arange] Maximum size exceeded: {len} elements."
        )));
    }
    Ok(Array::from_op(
        Arange { start, step },
        vec![],
        vec![len as usize],
        dtype,
    ))
}
