//! Windows at a start computed lazily, as an array: [`dynamic_slice`] and
//! [`dynamic_slice_update`].

use crate::array::Array;
use crate::backend::cpu::indexing::ScatterMode;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::binary::{add, less, subtract};
use crate::ops::cast::astype;
use crate::ops::creation::arange;
use crate::ops::exported::ExportedAs;
use crate::ops::indexing::expression::{index, Index};
use crate::ops::indexing::gather_scatter::{gather, scatter};
use crate::ops::ternary::where_;
use crate::ops::view::{broadcast_to, reshape};
use crate::primitive::{mlx_ints, mlx_shape};
use crate::shape::{normalize_axes, normalize_axis, shape_text};

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
            "[{op}] Slice sizes {} must have one entry per axis of the array of shape {}.",
            shape_text(slice_size),
            shape_text(shape)
        )));
    }
    if let Some(d) = (0..shape.len()).find(|&d| slice_size[d] > shape[d]) {
        return Err(Error::value(format!(
            "[{op}] Slice size {} is larger than axis {d} of size {}.",
            slice_size[d], shape[d]
        )));
    }
    let axes = ordered_axes(op, axes, shape.len())?;
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
    window("slice", a.shape(), start, axes, slice_size)?;
    // MLX's `DynamicSlice`: the axes (from 0) and the slice sizes.
    let axes = ordered_axes("slice", axes, a.ndim())?;
    let state = || {
        Ok(vec![
            mlx_ints("slice", &axes)?,
            mlx_shape("slice", slice_size)?,
        ])
    };
    let (at, size) = (axes.clone(), slice_size.to_vec());
    let composed = move |x: &[Array]| {
        let coords = window("slice", x[0].shape(), &x[1], &as_i32(&at), &size)?;
        let all: Vec<usize> = (0..x[0].ndim()).collect();
        Ok(vec![gather(&x[0], &coords, &all)?])
    };
    let inputs = vec![a.clone(), start.clone()];
    let sliced = ExportedAs::apply("dynamic_slice", "DynamicSlice", state, inputs, composed)?;
    Ok(sliced.into_iter().next().expect("one output"))
}

/// `a` with the window of `update`'s shape starting at the positions in `start` along
/// `axes` (at 0 along the others) replaced by `update`: MLX's `slice_update` with array
/// start indices. An update with fewer dimensions than `a` spans its leading axes (one
/// element along those in `axes`), as in MLX. A negative start counts from the end of its axis; a window reaching
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
    if update.ndim() > a.ndim() {
        return Err(Error::value(format!(
            "[slice_update] The update of shape {} has more dimensions than the array of \
             shape {}.",
            shape_text(update.shape()),
            shape_text(a.shape())
        )));
    }
    let axes = ordered_axes("slice_update", axes, a.ndim())?;
    // As in MLX, an update with fewer dimensions spans the array's leading axes (one
    // element along those given a start), and the update is in the array's dtype.
    let missing = a.ndim() - update.ndim();
    let mut shape: Vec<usize> = a.shape()[..missing].to_vec();
    shape.extend(
        update
            .shape()
            .iter()
            .zip(&a.shape()[missing..])
            .map(|(&u, &n)| u.min(n)),
    );
    for &ax in &axes {
        if ax < missing {
            shape[ax] = 1;
        }
    }
    let update = broadcast_to(&astype(update, a.dtype())?, &shape)?;
    window(
        "slice_update",
        a.shape(),
        start,
        &as_i32(&axes),
        update.shape(),
    )?;
    // MLX's `DynamicSliceUpdate` of the array, the update and the start: the axes.
    let state = || Ok(vec![mlx_ints("slice_update", &axes)?]);
    let at = axes.clone();
    let composed = move |x: &[Array]| {
        let coords = window(
            "slice_update",
            x[0].shape(),
            &x[2],
            &as_i32(&at),
            x[1].shape(),
        )?;
        let all: Vec<usize> = (0..x[0].ndim()).collect();
        Ok(vec![scatter(
            &x[0],
            &coords,
            &x[1],
            &all,
            ScatterMode::Assign,
        )?])
    };
    let inputs = vec![a.clone(), update, start.clone()];
    let op = "dynamic_slice_update";
    let written = ExportedAs::apply(op, "DynamicSliceUpdate", state, inputs, composed)?;
    Ok(written.into_iter().next().expect("one output"))
}

/// `axes` counted from 0, in their order (the start positions follow it), without
/// duplicates.
fn ordered_axes(op: &str, axes: &[i32], ndim: usize) -> Result<Vec<usize>> {
    normalize_axes(op, axes, ndim)?;
    axes.iter().map(|&a| normalize_axis(op, a, ndim)).collect()
}

fn as_i32(axes: &[usize]) -> Vec<i32> {
    axes.iter().map(|&a| a as i32).collect()
}
