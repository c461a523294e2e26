//! Windows at a start computed lazily, as an array: [`dynamic_slice`] and
//! [`dynamic_slice_update`].

use crate::array::Array;
use crate::backend::cpu::indexing::ScatterMode;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::binary::{add, less, subtract};
use crate::ops::cast::astype;
use crate::ops::creation::arange;
use crate::ops::indexing::expression::{index, Index};
use crate::ops::indexing::gather_scatter::{gather, scatter};
use crate::ops::ternary::where_;
use crate::ops::view::{broadcast_to, reshape};
use crate::shape::normalize_axes;

/// Coordinates of a `slice_size` window of an array of `shape` whose corner is `start`
/// (an integer array, one value per entry of `axes`; 0 on the other axes): one int64
/// array per axis, broadcasting together to `slice_size`.
fn window(
    op: &str,
    shape: &[usize],
    start: &Array,
    axes: &[i32],
    slice_size: &[usize],
) -> Result<Vec<Array>> {
    if !start.dtype().is_integer() {
        return Err(Error::value(format!(
            "[{op}] Start indices must be integers, got {}.",
            start.dtype()
        )));
    }
    if start.size() != axes.len() {
        return Err(Error::value(format!(
            "[{op}] Got {} start indices for {} axes.",
            start.size(),
            axes.len()
        )));
    }
    if slice_size.len() != shape.len() {
        return Err(Error::value(format!(
            "[{op}] Slice sizes {slice_size:?} must have one entry per axis of the array of \
             shape {shape:?}."
        )));
    }
    if let Some(d) = (0..shape.len()).find(|&d| slice_size[d] > shape[d]) {
        return Err(Error::value(format!(
            "[{op}] Slice size {} is larger than axis {d} of size {}.",
            slice_size[d], shape[d]
        )));
    }
    let axes = normalize_axes(op, axes, shape.len())?;
    let start = astype(&reshape(start, &[-1])?, DType::Int64)?;
    let rank = shape.len();
    (0..rank)
        .map(|d| {
            let mut c = arange(0.0, slice_size[d] as f64, 1.0, DType::Int64)?;
            if let Some(k) = axes.iter().position(|&a| a == d) {
                // A negative start counts from the end; a window still reaching below 0
                // is moved below -size, so that the gather's check rejects it (reporting
                // the start) instead of wrapping it to the other end.
                let size = Array::scalar(shape[d] as i64);
                let first = index(&start, &[Index::Int(k as i64)])?;
                let below = less(&first, Array::scalar(0i64))?;
                let first = add(&first, &where_(&below, &size, Array::scalar(0i64))?)?;
                c = add(&c, &first)?;
                let wrapped = less(&c, Array::scalar(0i64))?;
                c = where_(&wrapped, &subtract(&c, &size)?, &c)?;
            }
            let mut s = vec![1i64; rank];
            s[d] = slice_size[d] as i64;
            broadcast_to(&reshape(&c, &s)?, slice_size)
        })
        .collect()
}

/// The `slice_size` window of `a` starting at the positions in the array `start` along
/// `axes` (at 0 along the others): MLX's `slice` with array start indices, so the start
/// can be computed lazily. A negative start counts from the end of its axis; a window
/// reaching outside the array is an `IndexError` from eval.
///
/// ```
/// use lazulite::{dynamic_slice, Array};
/// let a = Array::from_slice(&[1i32, 2, 3, 4, 5, 6], &[2, 3]).unwrap();
/// let r = dynamic_slice(&a, &Array::scalar(1i32), &[0], &[1, 2]).unwrap();
/// assert_eq!(r.to_vec::<i32>().unwrap(), vec![4, 5]);
/// let r = dynamic_slice(&a, &Array::scalar(1i32), &[1], &[2, 1]).unwrap();
/// assert_eq!(r.to_vec::<i32>().unwrap(), vec![2, 5]);
/// ```
pub fn dynamic_slice(
    a: &Array,
    start: &Array,
    axes: &[i32],
    slice_size: &[usize],
) -> Result<Array> {
    let coords = window("slice", a.shape(), start, axes, slice_size)?;
    let all: Vec<usize> = (0..a.ndim()).collect();
    gather(a, &coords, &all)
}

/// `a` with the window of `update`'s shape starting at the positions in `start` along
/// `axes` (at 0 along the others) replaced by `update`: MLX's `slice_update` with array
/// start indices. A negative start counts from the end of its axis; a window reaching
/// outside the array is an `IndexError` from eval.
///
/// ```
/// use lazulite::{dynamic_slice_update, ones, zeros, Array, DType};
/// let a = zeros(&[3, 3], DType::Float32).unwrap();
/// let start = Array::from_slice(&[1i32, 1], &[2]).unwrap();
/// let r = dynamic_slice_update(&a, &ones(&[1, 2], DType::Float32).unwrap(), &start, &[0, 1]).unwrap();
/// assert_eq!(r.to_vec::<f32>().unwrap(), vec![0., 0., 0., 0., 1., 1., 0., 0., 0.]);
/// ```
pub fn dynamic_slice_update(
    a: &Array,
    update: &Array,
    start: &Array,
    axes: &[i32],
) -> Result<Array> {
    if update.ndim() != a.ndim() {
        return Err(Error::value(format!(
            "[slice_update] The update of shape {:?} must have as many dimensions as the \
             array of shape {:?}.",
            update.shape(),
            a.shape()
        )));
    }
    let coords = window("slice_update", a.shape(), start, axes, update.shape())?;
    let all: Vec<usize> = (0..a.ndim()).collect();
    scatter(a, &coords, update, &all, ScatterMode::Assign)
}
