//! Shape manipulation: flatten, squeeze, swapaxes, concatenate, split, pad, tile, roll,
//! flip, as_strided, view, ... Most are compositions of the view ops (reshape, transpose,
//! broadcast, slice) and share their input's buffer where NumPy gives a view; the
//! primitives here are the ones no view op can express: `Concatenate` (a copy),
//! `AsStrided` and `Diagonal` (views with new strides), `View` (a new dtype for the same
//! bytes) and `Contiguous`.

use crate::array::Array;
use crate::backend::cpu::copy;
use crate::backend::cpu::shape::{concatenate as concatenate_kernel, scatter_add_strided};
use crate::backend::{contiguous_strides, Tensor};
use crate::dtype::{promote_types, DType};
use crate::element::dispatch;
use crate::error::{vec_with_room, Error, Result};
use crate::ops::batching::batch_to_front;
use crate::ops::cast::astype;
use crate::ops::creation::zeros_like;
use crate::ops::exported::ExportedAs;
use crate::ops::operand::{to_arrays, Operand};
use crate::ops::view::{
    broadcast_to, reshape, reshape_by, slice, slice_axis, transpose, ReshapeRule,
};
use crate::primitive::{
    mlx_chain, mlx_ints, mlx_shape, Export, MlxInput, MlxNode, MlxState, OutputSpec, Primitive,
};
use crate::shape::{
    axis_in_range, broadcast_shapes, checked_size, normalize_axis, shape_text, Axes,
};

/// The number of elements of `shape`; an error naming `op` if it is too large.
pub(crate) fn sized(op: &str, shape: &[usize]) -> Result<usize> {
    checked_size(shape).map_err(|e| Error::value(format!("[{op}] {}", e.message())))
}

/// Sorted, normalised `axes`; index error when out of bounds, value error on duplicates.
fn distinct_axes(op: &str, axes: &[i32], ndim: usize) -> Result<Vec<usize>> {
    let mut out = axes
        .iter()
        .map(|&a| normalize_axis(op, a, ndim))
        .collect::<Result<Vec<_>>>()?;
    out.sort_unstable();
    if out.windows(2).any(|w| w[0] == w[1]) {
        return Err(Error::value(format!("[{op}] Received duplicate axes.")));
    }
    Ok(out)
}

fn as_i64(shape: &[usize]) -> Vec<i64> {
    shape.iter().map(|&d| d as i64).collect()
}

/// `a` seen with `shape` (same size): a view whenever the layout allows.
fn reshaped(a: &Array, shape: &[usize]) -> Result<Array> {
    reshape(a, &as_i64(shape))
}

/// `a` with axes `start_axis..=end_axis` merged into one (a view when the layout allows).
/// A 0-d array becomes 1-d.
///
/// ```
/// let a = lazulite::zeros(&[2, 3, 4], lazulite::DType::Float32).unwrap();
/// assert_eq!(lazulite::flatten(&a, 0, -1).unwrap().shape(), &[24]);
/// assert_eq!(lazulite::flatten(&a, -2, -1).unwrap().shape(), &[2, 12]);
/// assert!(lazulite::flatten(&a, 2, 1).is_err());
/// ```
pub fn flatten(a: &Array, start_axis: i32, end_axis: i32) -> Result<Array> {
    if a.ndim() == 0 {
        return reshape(a, &[1]);
    }
    let start = normalize_axis("flatten", start_axis, a.ndim())?;
    let end = normalize_axis("flatten", end_axis, a.ndim())?;
    if start > end {
        return Err(Error::value(
            "[flatten] start_axis must be less than or equal to end_axis",
        ));
    }
    let shape = a.shape();
    let mut out = shape[..start].to_vec();
    out.push(shape[start..=end].iter().product());
    out.extend_from_slice(&shape[end + 1..]);
    reshape_by(a, &out, ReshapeRule::Flatten(start, end))
}

/// `a` with `axis` split into `shape` (one entry may be `-1`, inferred).
///
/// ```
/// let a = lazulite::zeros(&[6, 4], lazulite::DType::Float32).unwrap();
/// assert_eq!(lazulite::unflatten(&a, 0, &[2, -1]).unwrap().shape(), &[2, 3, 4]);
/// assert!(lazulite::unflatten(&a, 0, &[4, -1]).is_err());
/// ```
pub fn unflatten(a: &Array, axis: i32, shape: &[i64]) -> Result<Array> {
    let ax = normalize_axis("unflatten", axis, a.ndim())?;
    if shape.is_empty() {
        return Err(Error::value(
            "[unflatten] Shape to unflatten to cannot be empty.",
        ));
    }
    let dim = a.shape()[ax];
    let mut inferred = None;
    let mut known = 1usize;
    for (i, &d) in shape.iter().enumerate() {
        if d == -1 {
            if inferred.replace(i).is_some() {
                return Err(Error::value("[Unflatten] Can only infer one dimension."));
            }
        } else if d < 0 {
            return Err(Error::value(format!(
                "[Unflatten] Cannot unflatten axis {axis} with size {dim} into shape {}.",
                shape_text(shape)
            )));
        } else {
            known = known.checked_mul(d as usize).ok_or_else(|| {
                Error::value(format!(
                    "[Unflatten] Shape {} has too many elements.",
                    shape_text(shape)
                ))
            })?;
        }
    }
    let mut sizes: Vec<usize> = shape.iter().map(|&d| d.max(0) as usize).collect();
    let fits = match inferred {
        Some(i) if known != 0 => {
            sizes[i] = dim / known;
            dim.is_multiple_of(known)
        }
        Some(_) => false,
        None => known == dim,
    };
    if !fits {
        // As MLX prints it: an inferred dimension as the quotient, where there is one.
        let text = match (inferred, known) {
            (Some(_), 0) => shape_text(shape),
            _ => shape_text(&sizes),
        };
        return Err(Error::value(format!(
            "[Unflatten] Cannot unflatten axis {axis} with size {dim} into shape {text}."
        )));
    }
    let mut out = a.shape()[..ax].to_vec();
    out.extend_from_slice(&sizes);
    out.extend_from_slice(&a.shape()[ax + 1..]);
    reshaped(a, &out)
}

/// `a` with its axes permuted (`None`: reversed). The same as [`transpose`](crate::transpose).
///
/// ```
/// let a = lazulite::zeros(&[2, 3, 4], lazulite::DType::Float32).unwrap();
/// assert_eq!(lazulite::permute_dims(&a, None).unwrap().shape(), &[4, 3, 2]);
/// assert_eq!(lazulite::permute_dims(&a, Some(&[1, 0, 2])).unwrap().shape(), &[3, 2, 4]);
/// ```
pub fn permute_dims(a: &Array, axes: Option<&[i32]>) -> Result<Array> {
    match axes {
        Some(axes) => transpose(a, axes),
        None => {
            let axes: Vec<i32> = (0..a.ndim() as i32).rev().collect();
            transpose(a, &axes)
        }
    }
}

fn swap_or_move_axis(op: &str, axis: i32, ndim: usize) -> Result<usize> {
    axis_in_range(axis, ndim).ok_or_else(|| {
        Error::axis(format!(
            "[{op}] Invalid axis {axis} for array with {ndim} dimensions."
        ))
    })
}

/// `a` with `axis1` and `axis2` exchanged (a view).
///
/// ```
/// let a = lazulite::zeros(&[2, 3, 4], lazulite::DType::Float32).unwrap();
/// assert_eq!(lazulite::swapaxes(&a, -1, 0).unwrap().shape(), &[4, 3, 2]);
/// ```
pub fn swapaxes(a: &Array, axis1: i32, axis2: i32) -> Result<Array> {
    let i = swap_or_move_axis("swapaxes", axis1, a.ndim())?;
    let j = swap_or_move_axis("swapaxes", axis2, a.ndim())?;
    let mut perm: Vec<i32> = (0..a.ndim() as i32).collect();
    perm.swap(i, j);
    transpose(a, &perm)
}

/// `a` with axis `source` moved to position `destination` (a view).
///
/// ```
/// let a = lazulite::zeros(&[2, 3, 4], lazulite::DType::Float32).unwrap();
/// assert_eq!(lazulite::moveaxis(&a, 0, -1).unwrap().shape(), &[3, 4, 2]);
/// ```
pub fn moveaxis(a: &Array, source: i32, destination: i32) -> Result<Array> {
    let s = swap_or_move_axis("moveaxis", source, a.ndim())?;
    let d = swap_or_move_axis("moveaxis", destination, a.ndim())?;
    let mut perm: Vec<i32> = (0..a.ndim() as i32).filter(|&k| k != s as i32).collect();
    perm.insert(d, s as i32);
    transpose(a, &perm)
}

/// `a` with size-1 axes inserted at `axes` (positions in the result; a view).
///
/// ```
/// let a = lazulite::zeros(&[2, 3], lazulite::DType::Float32).unwrap();
/// assert_eq!(lazulite::expand_dims(&a, [0, -1]).unwrap().shape(), &[1, 2, 3, 1]);
/// ```
pub fn expand_dims(a: &Array, axes: impl Into<Axes>) -> Result<Array> {
    let Axes::List(axes) = axes.into() else {
        return Err(Error::value(
            "[expand_dims] An axis or list of axes is required.",
        ));
    };
    let ndim = a.ndim() + axes.len();
    let positions = distinct_axes("expand_dims", &axes, ndim)?;
    let mut source = a.shape().iter();
    let shape: Vec<usize> = (0..ndim)
        .map(|d| {
            if positions.contains(&d) {
                1
            } else {
                *source
                    .next()
                    .expect("one source axis per remaining position")
            }
        })
        .collect();
    let mut inserted = positions.to_vec();
    inserted.sort_unstable();
    reshape_by(a, &shape, ReshapeRule::ExpandDims(inserted))
}

/// `a` without the size-1 axes in `axes` (`Axes::All`: every size-1 axis; a view).
///
/// ```
/// use lazulite::{squeeze, zeros, Axes, DType};
/// let a = zeros(&[1, 2, 1], DType::Float32).unwrap();
/// assert_eq!(squeeze(&a, Axes::All).unwrap().shape(), &[2]);
/// assert_eq!(squeeze(&a, -1).unwrap().shape(), &[1, 2]);
/// assert!(squeeze(&a, 1).is_err());
/// ```
pub fn squeeze(a: &Array, axes: impl Into<Axes>) -> Result<Array> {
    let shape = a.shape();
    let drop: Vec<usize> = match axes.into() {
        Axes::All => (0..a.ndim()).filter(|&d| shape[d] == 1).collect(),
        Axes::List(axes) => {
            let drop = distinct_axes("squeeze", &axes, a.ndim())?;
            if let Some(&d) = drop.iter().find(|&&d| shape[d] != 1) {
                return Err(Error::value(format!(
                    "[squeeze] Cannot squeeze axis {d} with size {} which is not equal to 1.",
                    shape[d]
                )));
            }
            drop
        }
    };
    let out: Vec<usize> = (0..a.ndim())
        .filter(|d| !drop.contains(d))
        .map(|d| shape[d])
        .collect();
    reshape_by(a, &out, ReshapeRule::Squeeze(drop))
}

/// The arrays broadcast against each other (views; dtypes unchanged).
///
/// ```
/// use lazulite::{broadcast_arrays, zeros, DType};
/// let (a, b) = (zeros(&[2, 1], DType::Int8).unwrap(), zeros(&[3], DType::Float32).unwrap());
/// let out = broadcast_arrays(&[a, b]).unwrap();
/// assert_eq!((out[0].shape(), out[1].shape()), (&[2, 3][..], &[2, 3][..]));
/// ```
pub fn broadcast_arrays(arrays: &[Array]) -> Result<Vec<Array>> {
    let mut shape: Vec<usize> = vec![];
    for a in arrays {
        shape = broadcast_shapes(&shape, a.shape())?;
    }
    arrays.iter().map(|a| broadcast_to(a, &shape)).collect()
}

/// `a` with at least one dimension.
///
/// ```
/// let a = lazulite::Array::scalar(1i32);
/// assert_eq!(lazulite::atleast_1d(&a).unwrap().shape(), &[1]);
/// ```
pub fn atleast_1d(a: &Array) -> Result<Array> {
    match a.ndim() {
        0 => reshaped(a, &[1]),
        _ => Ok(a.clone()),
    }
}

/// `a` with at least two dimensions: `(n,)` becomes `(1, n)`.
///
/// ```
/// let a = lazulite::zeros(&[3], lazulite::DType::Float32).unwrap();
/// assert_eq!(lazulite::atleast_2d(&a).unwrap().shape(), &[1, 3]);
/// ```
pub fn atleast_2d(a: &Array) -> Result<Array> {
    match a.ndim() {
        0 => reshaped(a, &[1, 1]),
        1 => reshaped(a, &[1, a.shape()[0]]),
        _ => Ok(a.clone()),
    }
}

/// `a` with at least three dimensions: `(n,)` becomes `(1, n, 1)`, `(m, n)` becomes
/// `(m, n, 1)`.
///
/// ```
/// let a = lazulite::zeros(&[2, 3], lazulite::DType::Float32).unwrap();
/// assert_eq!(lazulite::atleast_3d(&a).unwrap().shape(), &[2, 3, 1]);
/// ```
pub fn atleast_3d(a: &Array) -> Result<Array> {
    match a.ndim() {
        0 => reshaped(a, &[1, 1, 1]),
        1 => reshaped(a, &[1, a.shape()[0], 1]),
        2 => reshaped(a, &[a.shape()[0], a.shape()[1], 1]),
        _ => Ok(a.clone()),
    }
}

pub(crate) struct Concatenate {
    pub axis: usize,
}

impl Primitive for Concatenate {
    fn name(&self) -> &'static str {
        "concatenate"
    }

    fn output_shapes(&self, inputs: &[OutputSpec]) -> Result<Vec<Vec<usize>>> {
        let mut out = inputs[0].shape.clone();
        out[self.axis] = 0;
        for spec in inputs {
            let same_rest = spec.shape.len() == out.len()
                && (0..out.len()).all(|d| d == self.axis || spec.shape[d] == out[d]);
            if !same_rest {
                return Err(Error::value(
                    "[concatenate] All the input array dimensions must match exactly except \
                     for the concatenation axis.",
                ));
            }
            out[self.axis] += spec.shape[self.axis];
        }
        Ok(vec![out])
    }

    fn params(&self) -> String {
        format!("axis={}", self.axis)
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        MlxNode::single(
            "Concatenate",
            vec![MlxState::Int(self.axis as i32)],
            inputs,
            outputs,
        )
    }

    fn eval(&self, inputs: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let spec = &outputs[0];
        Ok(vec![concatenate_kernel(
            &inputs,
            self.axis,
            spec.dtype,
            &spec.shape,
        )?])
    }

    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        cotangents: &[Array],
        argnums: &[usize],
    ) -> Result<Vec<Array>> {
        let mut starts = vec![0i64];
        for x in inputs {
            starts.push(starts[starts.len() - 1] + x.shape()[self.axis] as i64);
        }
        argnums
            .iter()
            .map(|&i| slice_axis(&cotangents[0], self.axis, starts[i], starts[i + 1], 1))
            .collect()
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], argnums: &[usize]) -> Result<Vec<Array>> {
        let parts = (0..inputs.len())
            .map(|i| match argnums.iter().position(|&a| a == i) {
                Some(k) => Ok(tangents[k].clone()),
                None => zeros_like(&inputs[i]),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(vec![concatenate(&parts, self.axis as i32)?])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let parts = batched_in_front(inputs, axes)?;
        Ok((
            vec![concatenate(&parts, self.axis as i32 + 1)?],
            vec![Some(0)],
        ))
    }
}

/// For batching rules: every input with its batch axis in front, the unbatched ones
/// broadcast along a new leading axis of the batch size.
fn batched_in_front(inputs: &[Array], axes: &[Option<usize>]) -> Result<Vec<Array>> {
    let batch = inputs
        .iter()
        .zip(axes)
        .find_map(|(x, ax)| ax.map(|ax| x.shape()[ax]))
        .expect("vmap calls a rule with at least one batched input");
    inputs
        .iter()
        .zip(axes)
        .map(|(x, &ax)| match ax {
            Some(_) => batch_to_front(x, ax),
            None => {
                let mut shape = vec![batch];
                shape.extend(x.shape());
                broadcast_to(x, &shape)
            }
        })
        .collect()
}

/// The arrays joined along `axis` (`None`: flattened first), promoted to a common dtype.
///
/// ```
/// use lazulite::{concatenate, Array};
/// let a = Array::from_slice(&[1i32, 2], &[1, 2]).unwrap();
/// let b = Array::from_slice(&[3i32, 4, 5, 6], &[2, 2]).unwrap();
/// let c = concatenate(&[a.clone(), b.clone()], 0).unwrap();
/// assert_eq!(c.to_vec::<i32>().unwrap(), vec![1, 2, 3, 4, 5, 6]);
/// assert_eq!(concatenate(&[a, b], None).unwrap().shape(), &[6]);
/// ```
pub fn concatenate(arrays: &[Array], axis: impl Into<Option<i32>>) -> Result<Array> {
    let Some(axis) = axis.into() else {
        let flat = arrays
            .iter()
            .map(|a| reshape(a, &[-1]))
            .collect::<Result<Vec<_>>>()?;
        return concatenate(&flat, 0);
    };
    let first = arrays
        .first()
        .ok_or_else(|| Error::value("[concatenate] No arrays provided for concatenation"))?;
    let ndim = first.ndim();
    if let Some(other) = arrays.iter().find(|a| a.ndim() != ndim) {
        return Err(Error::value(format!(
            "[concatenate] All the input arrays must have the same number of dimensions. \
             However, got arrays with dimensions {ndim} and {}.",
            other.ndim()
        )));
    }
    let ax = normalize_axis("concatenate", axis, ndim)?;
    let mut shape = first.shape().to_vec();
    shape[ax] = 0;
    for a in arrays {
        let matches = a
            .shape()
            .iter()
            .zip(first.shape())
            .enumerate()
            .all(|(d, (x, y))| d == ax || x == y);
        if !matches {
            let shapes: Vec<_> = arrays.iter().map(|a| shape_text(a.shape())).collect();
            return Err(Error::value(format!(
                "[concatenate] All the input array dimensions must match exactly except for \
                 the concatenation axis. However, the provided shapes are {}, and the \
                 concatenation axis is {axis}.",
                shapes.join(", ")
            )));
        }
        shape[ax] = shape[ax]
            .checked_add(a.shape()[ax])
            .ok_or_else(|| Error::value("[concatenate] The result has too many elements."))?;
    }
    sized("concatenate", &shape)?;
    let dtype = arrays
        .iter()
        .map(|a| a.dtype())
        .reduce(promote_types)
        .expect("at least one array");
    let inputs = arrays
        .iter()
        .map(|a| astype(a, dtype))
        .collect::<Result<Vec<_>>>()?;
    if inputs.len() == 1 {
        return Ok(inputs[0].clone());
    }
    Ok(Array::from_op(
        Concatenate { axis: ax },
        inputs,
        shape,
        dtype,
    ))
}

/// The arrays (all of one shape) stacked along a new axis `axis` of the result.
///
/// ```
/// use lazulite::{stack, zeros, DType};
/// let a = zeros(&[2], DType::Float32).unwrap();
/// assert_eq!(stack(&[a.clone(), a.clone(), a], -1).unwrap().shape(), &[2, 3]);
/// ```
pub fn stack(arrays: &[Array], axis: i32) -> Result<Array> {
    let first = arrays
        .first()
        .ok_or_else(|| Error::value("[stack] No arrays provided for stacking"))?;
    if arrays.iter().any(|a| a.shape() != first.shape()) {
        return Err(Error::value("[stack] All arrays must have the same shape"));
    }
    let ax = normalize_axis("stack", axis, first.ndim() + 1)? as i32;
    let expanded = arrays
        .iter()
        .map(|a| expand_dims(a, ax))
        .collect::<Result<Vec<_>>>()?;
    concatenate(&expanded, ax)
}

/// How [`split`] cuts an axis: into this many equal sections, or at these indices.
///
/// ```
/// use lazulite::IndicesOrSections;
/// let n: IndicesOrSections = 3.into();
/// let at: IndicesOrSections = [2, 5].into();
/// # let _ = (n, at);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndicesOrSections {
    /// Split into this many equal parts.
    Sections(i64),
    /// Split before each of these positions.
    Indices(Vec<i64>),
}

impl From<i32> for IndicesOrSections {
    fn from(n: i32) -> Self {
        IndicesOrSections::Sections(n as i64)
    }
}
impl From<i64> for IndicesOrSections {
    fn from(n: i64) -> Self {
        IndicesOrSections::Sections(n)
    }
}
impl From<usize> for IndicesOrSections {
    fn from(n: usize) -> Self {
        IndicesOrSections::Sections(n as i64)
    }
}
impl From<Vec<i64>> for IndicesOrSections {
    fn from(v: Vec<i64>) -> Self {
        IndicesOrSections::Indices(v)
    }
}
impl From<&[i64]> for IndicesOrSections {
    fn from(v: &[i64]) -> Self {
        IndicesOrSections::Indices(v.to_vec())
    }
}
impl<const N: usize> From<[i64; N]> for IndicesOrSections {
    fn from(v: [i64; N]) -> Self {
        IndicesOrSections::Indices(v.to_vec())
    }
}

/// Views of `a` cut along `axis`: into equal sections (an error if the axis does not
/// divide evenly, as in MLX) or before each of the given indices (Python slice rules:
/// negative indices count from the end, out-of-range ones clamp).
///
/// ```
/// use lazulite::{arange, split, DType};
/// let a = arange(0.0, 10.0, 1.0, DType::Int32).unwrap();
/// let parts = split(&a, [2, 5], 0).unwrap();
/// assert_eq!(parts[1].to_vec::<i32>().unwrap(), vec![2, 3, 4]);
/// assert_eq!(split(&a, 5, 0).unwrap().len(), 5);
/// assert!(split(&a, 3, 0).is_err());
/// ```
pub fn split(
    a: &Array,
    indices_or_sections: impl Into<IndicesOrSections>,
    axis: i32,
) -> Result<Vec<Array>> {
    let ax = normalize_axis("split", axis, a.ndim())?;
    let dim = a.shape()[ax] as i64;
    let indices = match indices_or_sections.into() {
        IndicesOrSections::Indices(v) => v,
        IndicesOrSections::Sections(n) => {
            if n <= 0 {
                return Err(Error::value(format!(
                    "[split] num_splits must be positive and non-zero but got {n}."
                )));
            }
            if dim % n != 0 {
                return Err(Error::value(format!(
                    "Array split does not result in sub arrays with equal size: attempting \
                     {n} splits along axis {axis} for shape {}.",
                    shape_text(a.shape())
                )));
            }
            if dim == 0 {
                // Every part is the same empty slice: share it rather than record n nodes.
                let empty = slice_axis(a, ax, 0, 0, 1)?;
                let mut parts = vec_with_room(n as usize, "split")?;
                parts.resize(n as usize, empty);
                return Ok(parts);
            }
            (1..n).map(|k| k * (dim / n)).collect()
        }
    };
    let mut parts = vec_with_room(indices.len() + 1, "split")?;
    let mut start = 0i64;
    for &stop in &indices {
        parts.push(slice_axis(a, ax, start, stop, 1)?);
        start = stop;
    }
    parts.push(slice_axis(a, ax, start, dim, 1)?);
    Ok(parts)
}

/// The slices of `a` along `axis`, each without that axis (views).
///
/// ```
/// use lazulite::{unstack, Array};
/// let a = Array::from_slice(&[0i32, 1, 2, 3, 4, 5], &[2, 3]).unwrap();
/// let cols = unstack(&a, -1).unwrap();
/// assert_eq!(cols[2].to_vec::<i32>().unwrap(), vec![2, 5]);
/// ```
pub fn unstack(a: &Array, axis: i32) -> Result<Vec<Array>> {
    let ax = normalize_axis("unstack", axis, a.ndim())?;
    (0..a.shape()[ax] as i64)
        .map(|i| squeeze(&slice_axis(a, ax, i, i + 1, 1)?, ax as i32))
        .collect()
}

/// `a` padded by `pad_width[axis] = (before, after)` elements on each axis (one pair is
/// used for every axis). `mode` is `"constant"` (filled with `constant_values`, cast to
/// `a`'s dtype), `"edge"` (the edge values repeated), `"reflect"` (mirrored without the
/// edge) or `"symmetric"` (mirrored with the edge), with NumPy's values.
///
/// ```
/// use lazulite::{pad, Array};
/// let a = Array::from_slice(&[1i32, 2, 3], &[3]).unwrap();
/// let p = pad(&a, &[(2, 1)], "constant", 9).unwrap();
/// assert_eq!(p.to_vec::<i32>().unwrap(), vec![9, 9, 1, 2, 3, 9]);
/// let r = pad(&a, &[(2, 2)], "reflect", 0).unwrap();
/// assert_eq!(r.to_vec::<i32>().unwrap(), vec![3, 2, 1, 2, 3, 2, 1]);
/// assert!(pad(&a, &[(1, -1)], "edge", 0).is_err());
/// ```
pub fn pad(
    a: &Array,
    pad_width: &[(i64, i64)],
    mode: &str,
    constant_values: impl Into<Operand>,
) -> Result<Array> {
    let ndim = a.ndim();
    if !matches!(mode, "constant" | "edge" | "reflect" | "symmetric") {
        return Err(Error::value(format!(
            "[pad] Invalid padding mode ({mode}) passed to pad"
        )));
    }
    if pad_width.len() != 1 && pad_width.len() != ndim {
        return Err(Error::value(format!(
            "[pad] Invalid number of padding sizes passed to pad with axes of size {ndim}"
        )));
    }
    let widths: Vec<(i64, i64)> = (0..ndim)
        .map(|d| pad_width[if pad_width.len() == 1 { 0 } else { d }])
        .collect();
    for (axis, &(lo, hi)) in widths.iter().enumerate() {
        for (side, w) in [("low", lo), ("high", hi)] {
            if w < 0 {
                return Err(Error::value(format!(
                    "[pad] Invalid {side} padding size ({w}) passed to pad for axis {axis}. \
                     Padding sizes must be non-negative"
                )));
            }
        }
    }
    let mut out_shape = a.shape().to_vec();
    for (d, &(lo, hi)) in widths.iter().enumerate() {
        out_shape[d] = (out_shape[d] as u64)
            .checked_add(lo as u64)
            .and_then(|n| n.checked_add(hi as u64))
            .filter(|&n| n <= isize::MAX as u64)
            .ok_or_else(|| Error::value("[pad] The padded array has too many elements."))?
            as usize;
    }
    sized("pad", &out_shape)?;
    if crate::ops::trace::in_shapeless_trace() && widths.iter().any(|&(lo, hi)| lo + hi > 0) {
        // MLX's Pad has no shape rule: a shapeless replay of it fails on every call.
        return Err(crate::primitive::cannot_infer("pad"));
    }
    let value = {
        // A scalar is made in `a`'s dtype where its kind allows, as MLX makes it.
        let operands = [Operand::Array(a.clone()), constant_values.into()];
        let (values, _) = to_arrays("pad", &operands)?;
        if values[1].size() != 1 {
            return Err(Error::value(format!(
                "[pad] constant_values must hold one value, got shape {}.",
                shape_text(values[1].shape())
            )));
        }
        reshape(&astype(&values[1], a.dtype())?, &[])?
    };
    if mode != "constant" {
        if let Some((axis, _)) = widths
            .iter()
            .enumerate()
            .find(|&(d, &(lo, hi))| a.shape()[d] == 0 && lo + hi > 0)
        {
            return Err(Error::value(format!(
                "[pad] Cannot extend empty axis {axis} using mode '{mode}'."
            )));
        }
    }
    if mode == "constant" {
        // MLX's `Pad`: every axis with its low and high widths, and the fill value.
        let state = || {
            let axes: Vec<i32> = (0..ndim as i32).collect();
            let (lo, hi): (Vec<i64>, Vec<i64>) = widths.iter().copied().unzip();
            Ok(vec![
                mlx_ints("pad", &axes)?,
                mlx_shape("pad", &lo)?,
                mlx_shape("pad", &hi)?,
            ])
        };
        let padding = widths.clone();
        let composed = move |x: &[Array]| Ok(vec![constant_pad(&x[0], &padding, &x[1])?]);
        let padded = ExportedAs::apply("pad", "Pad", state, vec![a.clone(), value], composed)?;
        return Ok(padded.into_iter().next().expect("one output"));
    }
    let mut x = a.clone();
    for (axis, &(lo, hi)) in widths.iter().enumerate() {
        if lo == 0 && hi == 0 {
            continue;
        }
        x = match mode {
            "edge" => {
                let n = x.shape()[axis] as i64;
                let block = |w: i64, at: i64| {
                    let mut shape = x.shape().to_vec();
                    shape[axis] = w as usize;
                    broadcast_to(&slice_axis(&x, axis, at, at + 1, 1)?, &shape)
                };
                concatenate(&[block(lo, 0)?, x.clone(), block(hi, n - 1)?], axis as i32)?
            }
            _ => mirror_pad(&x, axis, lo, hi, mode == "symmetric")?,
        };
    }
    Ok(x)
}

/// `x` padded by `widths` with the 0-d `value` of its dtype.
fn constant_pad(x: &Array, widths: &[(i64, i64)], value: &Array) -> Result<Array> {
    let mut x = x.clone();
    for (axis, &(lo, hi)) in widths.iter().enumerate() {
        if lo == 0 && hi == 0 {
            continue;
        }
        let block = |w: i64| {
            let mut shape = x.shape().to_vec();
            shape[axis] = w as usize;
            broadcast_to(value, &shape)
        };
        x = concatenate(&[block(lo)?, x.clone(), block(hi)?], axis as i32)?;
    }
    Ok(x)
}

/// Reflect/symmetric padding of one axis: the padded axis reads a periodic extension of
/// `x` (`x` then `x` reversed, without the edges for reflect), so it is a window of that
/// period repeated enough times.
fn mirror_pad(x: &Array, axis: usize, lo: i64, hi: i64, symmetric: bool) -> Result<Array> {
    let n = x.shape()[axis] as i64;
    let reversed = flip(x, axis as i32)?;
    let period = if symmetric {
        concatenate(&[x.clone(), reversed], axis as i32)?
    } else if n == 1 {
        x.clone()
    } else {
        concatenate(
            &[x.clone(), slice_axis(&reversed, axis, 1, n - 1, 1)?],
            axis as i32,
        )?
    };
    let p = period.shape()[axis] as i64;
    let start = (-lo).rem_euclid(p);
    let end = start + lo + n + hi;
    // Tiled (a broadcast view), not concatenated: a wide pad of a short axis records
    // one node, not one per copy of the period.
    let mut reps = vec![1; x.ndim()];
    reps[axis] = (end + p - 1) / p;
    slice_axis(&tile(&period, &reps)?, axis, start, end, 1)
}

fn check_counts(op: &str, what: &str, values: &[i64]) -> Result<()> {
    if let Some(v) = values.iter().find(|&&v| v < 0) {
        return Err(Error::value(format!(
            "[{op}] {what} cannot be negative, got {v}."
        )));
    }
    Ok(())
}

/// `a` repeated `reps[i]` times along each axis (NumPy's `tile`; shorter `reps` apply to
/// the last axes, longer ones add leading axes).
///
/// ```
/// use lazulite::{tile, Array};
/// let a = Array::from_slice(&[1i32, 2], &[2]).unwrap();
/// let t = tile(&a, &[2, 2]).unwrap();
/// assert_eq!(t.to_vec::<i32>().unwrap(), vec![1, 2, 1, 2, 1, 2, 1, 2]);
/// ```
pub fn tile(a: &Array, reps: &[i64]) -> Result<Array> {
    check_counts("tile", "Repetitions", reps)?;
    let ndim = a.ndim().max(reps.len());
    let pad_front = |v: &[usize]| -> Vec<usize> {
        let mut out = vec![1; ndim - v.len()];
        out.extend_from_slice(v);
        out
    };
    let shape = pad_front(a.shape());
    let reps = pad_front(&reps.iter().map(|&r| r as usize).collect::<Vec<_>>());
    let interleaved: Vec<usize> = shape.iter().flat_map(|&d| [1, d]).collect();
    let target: Vec<usize> = reps
        .iter()
        .zip(&shape)
        .flat_map(|(&r, &d)| [r, d])
        .collect();
    sized("tile", &target)?;
    let out: Vec<usize> = reps.iter().zip(&shape).map(|(&r, &d)| r * d).collect();
    let expanded = broadcast_to(&reshaped(a, &interleaved)?, &target)?;
    reshaped(&expanded, &out)
}

/// Each element of `a` repeated `repeats` times along `axis` (`None`: of `a` flattened).
///
/// ```
/// use lazulite::{repeat, Array};
/// let a = Array::from_slice(&[1i32, 2, 3, 4], &[2, 2]).unwrap();
/// assert_eq!(repeat(&a, 2, None).unwrap().to_vec::<i32>().unwrap(), vec![1, 1, 2, 2, 3, 3, 4, 4]);
/// assert_eq!(repeat(&a, 2, 0).unwrap().shape(), &[4, 2]);
/// ```
pub fn repeat(a: &Array, repeats: i64, axis: impl Into<Option<i32>>) -> Result<Array> {
    if repeats < 0 {
        return Err(Error::value(
            "[repeat] Number of repeats cannot be negative",
        ));
    }
    let Some(axis) = axis.into() else {
        return repeat(&reshape(a, &[-1])?, repeats, 0);
    };
    let ax = normalize_axis("repeat", axis, a.ndim())?;
    let mut target = a.shape().to_vec();
    target.insert(ax + 1, repeats as usize);
    sized("repeat", &target)?;
    let mut out = a.shape().to_vec();
    out[ax] *= repeats as usize;
    let expanded = broadcast_to(&expand_dims(a, ax as i32 + 1)?, &target)?;
    reshaped(&expanded, &out)
}

/// The shift amounts of [`roll`]: one for every axis, or one per listed axis.
///
/// ```
/// use lazulite::Shifts;
/// let one: Shifts = 2.into();
/// let two: Shifts = [1, -1].into();
/// # let _ = (one, two);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shifts(pub Vec<i64>);

impl From<i32> for Shifts {
    fn from(s: i32) -> Self {
        Shifts(vec![s as i64])
    }
}
impl From<i64> for Shifts {
    fn from(s: i64) -> Self {
        Shifts(vec![s])
    }
}
impl From<Vec<i64>> for Shifts {
    fn from(v: Vec<i64>) -> Self {
        Shifts(v)
    }
}
impl From<&[i64]> for Shifts {
    fn from(v: &[i64]) -> Self {
        Shifts(v.to_vec())
    }
}
impl<const N: usize> From<[i64; N]> for Shifts {
    fn from(v: [i64; N]) -> Self {
        Shifts(v.to_vec())
    }
}

/// `a` with elements shifted along `axis`, wrapping around (`Axes::All`/`None`: over `a`
/// flattened). Shifts and axes pair up as in NumPy: a single value applies to every
/// entry of the other list, and shifts of a repeated axis add up.
///
/// ```
/// use lazulite::{arange, roll, DType};
/// let a = arange(0.0, 5.0, 1.0, DType::Int32).unwrap();
/// assert_eq!(roll(&a, 2, None).unwrap().to_vec::<i32>().unwrap(), vec![3, 4, 0, 1, 2]);
/// assert_eq!(roll(&a, -7, 0).unwrap().to_vec::<i32>().unwrap(), vec![2, 3, 4, 0, 1]);
/// ```
pub fn roll(a: &Array, shift: impl Into<Shifts>, axis: impl Into<Axes>) -> Result<Array> {
    let shifts = shift.into().0;
    if shifts.is_empty() {
        return Err(Error::value("[roll] At least one shift is required."));
    }
    let axes = match axis.into() {
        Axes::All => {
            let n = a.size().max(1) as i128;
            let total = shifts
                .iter()
                .map(|&s| s as i128)
                .sum::<i128>()
                .rem_euclid(n);
            let flat = roll(&reshape(a, &[-1])?, total as i64, 0)?;
            return reshaped(&flat, a.shape());
        }
        Axes::List(axes) => axes,
    };
    let pairs: Vec<(i64, i32)> = match (shifts.len(), axes.len()) {
        (s, x) if s == x => shifts.into_iter().zip(axes).collect(),
        (1, _) => axes.into_iter().map(|x| (shifts[0], x)).collect(),
        (_, 1) => shifts.into_iter().map(|s| (s, axes[0])).collect(),
        (s, x) => {
            return Err(Error::value(format!(
                "[roll] Got {s} shifts for {x} axes; they must match or one must be a single value."
            )))
        }
    };
    let mut per_axis = vec![0i64; a.ndim()];
    for (s, axis) in pairs {
        let ax = axis_in_range(axis, a.ndim()).ok_or_else(|| {
            Error::axis(format!(
                "[roll] Invalid axis {axis} for array with {} dimensions.",
                a.ndim()
            ))
        })?;
        let n = a.shape()[ax].max(1) as i64;
        per_axis[ax] = (per_axis[ax] + s.rem_euclid(n)) % n;
    }
    let mut x = a.clone();
    for (ax, &s) in per_axis.iter().enumerate() {
        if s == 0 {
            continue;
        }
        let n = x.shape()[ax] as i64;
        let parts = [
            slice_axis(&x, ax, n - s, n, 1)?,
            slice_axis(&x, ax, 0, n - s, 1)?,
        ];
        x = concatenate(&parts, ax as i32)?;
    }
    Ok(x)
}

/// `a` reversed along `axes` (`Axes::All`: every axis): a view with negative strides.
///
/// ```
/// use lazulite::{flip, Array, Axes};
/// let a = Array::from_slice(&[1i32, 2, 3, 4], &[2, 2]).unwrap();
/// assert_eq!(flip(&a, Axes::All).unwrap().to_vec::<i32>().unwrap(), vec![4, 3, 2, 1]);
/// assert_eq!(flip(&a, 0).unwrap().to_vec::<i32>().unwrap(), vec![3, 4, 1, 2]);
/// ```
pub fn flip(a: &Array, axes: impl Into<Axes>) -> Result<Array> {
    let ndim = a.ndim();
    let flipped: Vec<usize> = match axes.into() {
        Axes::All => (0..ndim).collect(),
        Axes::List(axes) => axes
            .iter()
            .map(|&x| normalize_axis("flip", x, ndim))
            .collect::<Result<_>>()?,
    };
    if flipped.is_empty() {
        return Ok(a.clone());
    }
    let mut start = vec![0i64; ndim];
    let mut stop = as_i64(a.shape());
    let mut step = vec![1i64; ndim];
    for &d in &flipped {
        (start[d], stop[d], step[d]) = (-1, i64::MIN, -1);
    }
    slice(a, &start, &stop, &step)
}

#[derive(Clone)]
pub(crate) struct AsStrided {
    pub shape: Vec<usize>,
    pub strides: Vec<isize>,
    pub offset: usize,
}

impl AsStrided {
    fn record(&self, a: &Array) -> Array {
        Array::from_op(self.clone(), vec![a.clone()], self.shape.clone(), a.dtype())
    }

    /// The same view of every example of a batch stacked on a new leading axis, whose
    /// examples each hold `example_size` elements.
    fn batched(&self, batch: usize, example_size: usize) -> AsStrided {
        AsStrided {
            shape: std::iter::once(batch).chain(self.shape.clone()).collect(),
            strides: std::iter::once(example_size as isize)
                .chain(self.strides.clone())
                .collect(),
            offset: self.offset,
        }
    }
}

impl Primitive for AsStrided {
    fn name(&self) -> &'static str {
        "as_strided"
    }

    /// MLX's `AsStrided` reads its input flattened: a `Reshape` to one axis, then the view.
    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        let shape = mlx_shape("as_strided", &self.shape)?;
        let strides = MlxState::Int64s(self.strides.iter().map(|&s| s as i64).collect());
        let state = vec![shape, strides, MlxState::Size(self.offset as u64)];
        let input = &inputs[0];
        if input.shape.len() == 1 {
            return MlxNode::single("AsStrided", state, inputs, outputs);
        }
        let size: usize = input.shape.iter().product();
        let flat = crate::primitive::with_shape(input, vec![size]);
        let reshape = MlxNode::new(
            "Reshape",
            vec![mlx_shape("as_strided", &[size])?],
            vec![MlxInput::Input(0)],
            flat,
        );
        mlx_chain(reshape, vec![("AsStrided", state, outputs[0].clone())])
    }

    fn params(&self) -> String {
        format!("strides={:?}, offset={}", self.strides, self.offset)
    }

    fn eval(&self, mut inputs: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let mut t = copy::contiguous(inputs.pop().expect("one input"))?;
        t.shape = outputs[0].shape.clone();
        t.strides = self.strides.clone();
        t.offset += self.offset;
        Ok(vec![t])
    }

    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        cotangents: &[Array],
        _: &[usize],
    ) -> Result<Vec<Array>> {
        let scatter = AsStridedTranspose {
            view: self.clone(),
            input_shape: inputs[0].shape().to_vec(),
        };
        Ok(vec![scatter.record(&cotangents[0])])
    }

    fn jvp(&self, _: &[Array], tangents: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        Ok(vec![self.record(&tangents[0])])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let x = batch_to_front(&inputs[0], axes[0])?;
        let example_size = x.shape()[1..].iter().product();
        let view = self.batched(x.shape()[0], example_size);
        Ok((vec![view.record(&x)], vec![Some(0)]))
    }
}

/// The transpose of an [`AsStrided`] view (its vjp): an array of the view's input shape
/// where each element is the sum of the view elements that read it (zero if none).
struct AsStridedTranspose {
    view: AsStrided,
    input_shape: Vec<usize>,
}

impl AsStridedTranspose {
    fn record(&self, g: &Array) -> Array {
        let prim = AsStridedTranspose {
            view: self.view.clone(),
            input_shape: self.input_shape.clone(),
        };
        Array::from_op(prim, vec![g.clone()], self.input_shape.clone(), g.dtype())
    }
}

impl Primitive for AsStridedTranspose {
    fn name(&self) -> &'static str {
        "as_strided_transpose"
    }

    fn params(&self) -> String {
        self.view.params()
    }

    fn eval(&self, inputs: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>> {
        Ok(vec![scatter_add_strided(
            &inputs[0],
            &outputs[0].shape,
            &self.view.strides,
            self.view.offset,
        )?])
    }

    fn vjp(
        &self,
        _: &[Array],
        _: &[Array],
        cotangents: &[Array],
        _: &[usize],
    ) -> Result<Vec<Array>> {
        Ok(vec![self.view.record(&cotangents[0])])
    }

    fn jvp(&self, _: &[Array], tangents: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        Ok(vec![self.record(&tangents[0])])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let g = batch_to_front(&inputs[0], axes[0])?;
        let batch = g.shape()[0];
        let prim = AsStridedTranspose {
            view: self.view.batched(batch, self.input_shape.iter().product()),
            input_shape: std::iter::once(batch)
                .chain(self.input_shape.clone())
                .collect(),
        };
        Ok((vec![prim.record(&g)], vec![Some(0)]))
    }
}

/// A view of the elements of `a` (in row-major order) with the given `shape`, `strides`
/// (in elements; may be zero or negative) and starting `offset`. `None` keeps `a`'s
/// shape / uses row-major strides. Unlike MLX, every element the view can reach must
/// lie inside `a`: anything else is an error, never an out-of-bounds read.
///
/// ```
/// use lazulite::{arange, as_strided, DType};
/// let a = arange(0.0, 6.0, 1.0, DType::Int32).unwrap();
/// let w = as_strided(&a, Some(&[3, 2]), Some(&[1, 1]), 0).unwrap();
/// assert_eq!(w.to_vec::<i32>().unwrap(), vec![0, 1, 1, 2, 2, 3]);
/// assert!(as_strided(&a, Some(&[3, 2]), Some(&[3, 1]), 0).is_err());
/// ```
pub fn as_strided(
    a: &Array,
    shape: Option<&[usize]>,
    strides: Option<&[i64]>,
    offset: i64,
) -> Result<Array> {
    let shape = shape.unwrap_or(a.shape()).to_vec();
    let size = sized("as_strided", &shape)?;
    let strides: Vec<i64> = match strides {
        Some(s) => s.to_vec(),
        None => contiguous_strides(&shape)
            .iter()
            .map(|&s| s as i64)
            .collect(),
    };
    if strides.len() != shape.len() {
        return Err(Error::value(format!(
            "[as_strided] Got {} strides for a shape of {} dimensions.",
            strides.len(),
            shape.len()
        )));
    }
    if size == 0 {
        let prim = AsStrided {
            strides: contiguous_strides(&shape),
            offset: 0,
            shape: shape.clone(),
        };
        return Ok(Array::from_op(prim, vec![a.clone()], shape, a.dtype()));
    }
    let (mut lowest, mut highest) = (offset as i128, offset as i128);
    for (&d, &s) in shape.iter().zip(&strides) {
        let reach = (d as i128 - 1) * s as i128;
        if reach < 0 {
            lowest += reach;
        } else {
            highest += reach;
        }
    }
    if lowest < 0 || highest >= a.size() as i128 {
        return Err(Error::value(format!(
            "[as_strided] shape {shape:?}, strides {strides:?} and offset {offset} reach \
             elements {lowest}..={highest}, outside the {} elements of the input.",
            a.size()
        )));
    }
    let prim = AsStrided {
        strides: strides.iter().map(|&s| s as isize).collect(),
        offset: offset as usize,
        shape: shape.clone(),
    };
    Ok(Array::from_op(prim, vec![a.clone()], shape, a.dtype()))
}

pub(crate) struct View(pub DType);

impl Primitive for View {
    fn name(&self) -> &'static str {
        "view"
    }

    fn params(&self) -> String {
        format!("dtype={}", self.0)
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        MlxNode::single("View", vec![MlxState::Dtype(self.0)], inputs, outputs)
    }

    fn eval(&self, mut inputs: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let mut t = copy::contiguous(inputs.pop().expect("one input"))?;
        let (from, to) = (t.dtype.size(), self.0.size());
        if (t.offset * from) % to != 0 {
            // The first byte is not aligned to the new element size: move the data.
            t = dispatch!(t.dtype, T => crate::backend::cpu::elementwise::map1::<T, T>(t, |v| v))?;
        }
        t.offset = t.offset * from / to;
        t.dtype = self.0;
        t.shape = outputs[0].shape.clone();
        t.strides = contiguous_strides(&t.shape);
        Ok(vec![t])
    }

    /// A reinterpretation of bits is not differentiable: no gradient flows through it.
    fn vjp(&self, inputs: &[Array], _: &[Array], _: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        Ok(vec![zeros_like(&inputs[0])?])
    }

    fn jvp(&self, inputs: &[Array], _: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        Ok(vec![zeros_like(&view(&inputs[0], self.0)?)?])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        // With the batch axis in front, only the example's last axis changes size.
        let x = batch_to_front(&inputs[0], axes[0])?;
        Ok((vec![view(&x, self.0)?], vec![Some(0)]))
    }
}

/// The bytes of `a` (in row-major order) read as `dtype`. With a different element size
/// the last axis shrinks or grows accordingly (its byte size must divide evenly); a 0-d
/// array can only change to a dtype of the same size.
///
/// ```
/// use lazulite::{view, Array, DType};
/// let a = Array::from_slice(&[1.0f32], &[1]).unwrap();
/// assert_eq!(view(&a, DType::Int32).unwrap().to_vec::<i32>().unwrap(), vec![0x3f80_0000]);
/// assert_eq!(view(&a, DType::UInt8).unwrap().shape(), &[4]);
/// ```
pub fn view(a: &Array, dtype: DType) -> Result<Array> {
    let (from, to) = (a.dtype().size(), dtype.size());
    let mut shape = a.shape().to_vec();
    if from != to {
        let Some(last) = shape.last_mut() else {
            return Err(Error::value(
                "[view] Changing the type of a scalar is only allowed for types with the same size.",
            ));
        };
        if (*last * from) % to != 0 {
            return Err(Error::value(
                "[view] When viewing as a larger dtype, the size in bytes of the last axis must \
                 be a multiple of the requested type size.",
            ));
        }
        *last = *last * from / to;
    }
    if dtype == a.dtype() {
        return Ok(a.clone());
    }
    Ok(Array::from_op(View(dtype), vec![a.clone()], shape, dtype))
}

pub(crate) struct Contiguous {
    pub allow_col_major: bool,
}

impl Primitive for Contiguous {
    fn name(&self) -> &'static str {
        "contiguous"
    }

    fn output_shapes(&self, inputs: &[OutputSpec]) -> Result<Vec<Vec<usize>>> {
        crate::primitive::same_shape(inputs)
    }

    fn params(&self) -> String {
        format!("allow_col_major={}", self.allow_col_major)
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        MlxNode::single("Copy", vec![], inputs, outputs)
    }

    fn eval(&self, mut inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let t = inputs.pop().expect("one input");
        if self.allow_col_major && is_col_major(&t) {
            return Ok(vec![t]);
        }
        Ok(vec![copy::contiguous(t)?])
    }

    fn vjp(
        &self,
        _: &[Array],
        _: &[Array],
        cotangents: &[Array],
        _: &[usize],
    ) -> Result<Vec<Array>> {
        Ok(vec![cotangents[0].clone()])
    }

    fn jvp(&self, _: &[Array], tangents: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        Ok(vec![contiguous(&tangents[0], self.allow_col_major)?])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        Ok((
            vec![contiguous(&inputs[0], self.allow_col_major)?],
            axes.to_vec(),
        ))
    }
}

fn is_col_major(t: &Tensor) -> bool {
    let mut expected = 1isize;
    for (&d, &s) in t.shape.iter().zip(&t.strides) {
        if d != 1 && s != expected {
            return false;
        }
        expected *= d as isize;
    }
    true
}

/// `a` with its elements in row-major order without gaps (copied only if they are not
/// already; with `allow_col_major`, a column-major layout is kept too).
///
/// ```
/// use lazulite::{contiguous, Array};
/// let a = Array::from_slice(&[0i32, 1, 2, 3], &[2, 2]).unwrap();
/// let c = contiguous(&a.t().unwrap(), false).unwrap();
/// assert_eq!(c.to_vec::<i32>().unwrap(), vec![0, 2, 1, 3]);
/// ```
pub fn contiguous(a: &Array, allow_col_major: bool) -> Result<Array> {
    Ok(Array::from_op(
        Contiguous { allow_col_major },
        vec![a.clone()],
        a.shape().to_vec(),
        a.dtype(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::creation::diagonal;
    use std::sync::Arc;

    fn shares_buffer(a: &Array, b: &Array) -> bool {
        Arc::ptr_eq(&a.tensor().unwrap().buf, &b.tensor().unwrap().buf)
    }

    #[test]
    fn views_share_the_input_buffer() {
        let data: Vec<f32> = (0..24).map(|i| i as f32).collect();
        let x = Array::from_slice(&data, &[2, 3, 4]).unwrap();
        let t = swapaxes(&x, 0, 2).unwrap();
        let views = [
            flip(&x, Axes::All).unwrap(),
            flip(&t, 1).unwrap(),
            diagonal(&x, 1, 2, 0).unwrap(),
            diagonal(&t, -1, 0, 1).unwrap(),
            t.clone(),
            moveaxis(&x, 0, -1).unwrap(),
            expand_dims(&t, [0, -1]).unwrap(),
            squeeze(&expand_dims(&t, 1).unwrap(), Axes::All).unwrap(),
            flatten(&x, 0, 1).unwrap(),
            flatten(&flip(&x, 2).unwrap(), 0, 1).unwrap(),
            unflatten(&t, 0, &[2, 2]).unwrap(),
            split(&x, 3, 1).unwrap()[2].clone(),
            unstack(&t, 0).unwrap()[3].clone(),
            atleast_3d(&flatten(&x, 0, -1).unwrap()).unwrap(),
            as_strided(&x, Some(&[3, 3]), Some(&[5, -2]), 6).unwrap(),
            view(&x, DType::UInt8).unwrap(),
            broadcast_arrays(&[x.clone(), Array::zeros(&[5, 1, 1, 1], DType::Int8).unwrap()])
                .unwrap()[0]
                .clone(),
            contiguous(&x, false).unwrap(),
            contiguous(&permute_dims(&x, None).unwrap(), true).unwrap(),
        ];
        for (i, v) in views.iter().enumerate() {
            assert!(shares_buffer(&x, v), "view {i} copied its input");
        }
        // Merging axes that are not contiguous with each other needs a copy.
        assert!(!shares_buffer(&x, &flatten(&t, 0, 1).unwrap()));
        assert!(!shares_buffer(&x, &contiguous(&t, false).unwrap()));
    }

    #[test]
    fn reshape_strides_follow_numpy() {
        use crate::ops::view::reshape_strides;
        // A transposed (3, 4) array: splitting an axis keeps a view, merging does not.
        assert_eq!(
            reshape_strides(&[4, 3], &[1, 4], &[2, 2, 3]),
            Some(vec![2, 1, 4])
        );
        assert_eq!(reshape_strides(&[4, 3], &[1, 4], &[12]), None);
        assert_eq!(
            reshape_strides(&[4, 1, 3], &[-3, 7, -1], &[12, 1]),
            Some(vec![-1, -1])
        );
        assert_eq!(reshape_strides(&[1, 1], &[5, 9], &[1]), Some(vec![1]));
        assert_eq!(reshape_strides(&[0, 3], &[3, 1], &[3, 0]), Some(vec![1, 1]));
    }
}
