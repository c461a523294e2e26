//! Ops that only change how a buffer is seen: reshape, transpose, broadcast, strided
//! slicing. They share their input's buffer when evaluated (a copy is made only when
//! a reshape cannot be expressed as a view).

use crate::array::Array;
use crate::backend::cpu::elementwise::map1;
use crate::backend::{contiguous_strides, Tensor};
use crate::element::dispatch;
use crate::error::{Error, Result};
use crate::primitive::{OutputSpec, Primitive};
use crate::shape::{broadcast_shapes, checked_size, normalize_axis};

/// A contiguous version of `x`: `x` itself if it already is one.
pub(crate) fn make_contiguous(x: Tensor) -> Result<Tensor> {
    if x.is_contiguous() {
        return Ok(x);
    }
    dispatch!(x.dtype, T => map1::<T, T>(x, |v| v))
}

pub(crate) struct Reshape;

impl Primitive for Reshape {
    fn name(&self) -> &'static str {
        "reshape"
    }

    fn eval(&self, mut inputs: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let mut t = make_contiguous(inputs.pop().expect("one input"))?;
        t.shape = outputs[0].shape.clone();
        t.strides = contiguous_strides(&t.shape);
        Ok(vec![t])
    }
}

/// `a` with a new shape of the same size; one dimension may be `-1` (inferred).
///
/// ```
/// let a = lazulite::Array::from_slice(&[0i32, 1, 2, 3, 4, 5], &[6]).unwrap();
/// assert_eq!(lazulite::reshape(&a, &[2, -1]).unwrap().shape(), &[2, 3]);
/// assert!(lazulite::reshape(&a, &[4, -1]).is_err());
/// ```
pub fn reshape(a: &Array, shape: &[i64]) -> Result<Array> {
    let size = a.size();
    let mut inferred = None;
    let mut known = 1usize;
    for (i, &d) in shape.iter().enumerate() {
        if d == -1 {
            if inferred.replace(i).is_some() {
                return Err(Error::value(
                    "[reshape] Reshape can only infer one dimension.",
                ));
            }
        } else if d < 0 {
            return Err(Error::value(format!(
                "[reshape] Invalid dimension {d} in shape {shape:?}."
            )));
        } else {
            known = known.checked_mul(d as usize).ok_or_else(|| {
                Error::value(format!("[reshape] Shape {shape:?} has too many elements."))
            })?;
        }
    }
    let mut out: Vec<usize> = shape.iter().map(|&d| d.max(0) as usize).collect();
    if let Some(i) = inferred {
        if known == 0 || !size.is_multiple_of(known) {
            return Err(Error::value(format!(
                "[reshape] Cannot infer the shape of an array of size {size} into shape {shape:?}."
            )));
        }
        out[i] = size / known;
    }
    if checked_size(&out)? != size {
        return Err(Error::value(format!(
            "[reshape] Cannot reshape array of size {size} into shape {shape:?}."
        )));
    }
    if out == a.shape() {
        return Ok(a.clone());
    }
    Ok(Array::from_op(Reshape, vec![a.clone()], out, a.dtype()))
}

pub(crate) struct Transpose(pub Vec<usize>);

impl Primitive for Transpose {
    fn name(&self) -> &'static str {
        "transpose"
    }

    fn params(&self) -> String {
        format!("axes={:?}", self.0)
    }

    fn eval(&self, mut inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let mut t = inputs.pop().expect("one input");
        t.shape = self.0.iter().map(|&p| t.shape[p]).collect();
        t.strides = self.0.iter().map(|&p| t.strides[p]).collect();
        Ok(vec![t])
    }
}

/// `a` with its axes permuted: output axis `i` is input axis `axes[i]`.
///
/// ```
/// let a = lazulite::Array::from_slice(&[0i32, 1, 2, 3, 4, 5], &[2, 3]).unwrap();
/// let t = lazulite::transpose(&a, &[1, 0]).unwrap();
/// assert_eq!(t.to_vec::<i32>().unwrap(), vec![0, 3, 1, 4, 2, 5]);
/// ```
pub fn transpose(a: &Array, axes: &[i32]) -> Result<Array> {
    let ndim = a.ndim();
    if axes.len() != ndim {
        return Err(Error::value(format!(
            "[transpose] Received {} axes for array with {} dimensions.",
            axes.len(),
            ndim
        )));
    }
    let perm = axes
        .iter()
        .map(|&ax| normalize_axis("transpose", ax, ndim))
        .collect::<Result<Vec<_>>>()?;
    let mut seen = vec![false; ndim];
    for &p in &perm {
        if std::mem::replace(&mut seen[p], true) {
            return Err(Error::value(format!(
                "[transpose] Repeated axes in {axes:?}."
            )));
        }
    }
    if perm.iter().enumerate().all(|(i, &p)| i == p) {
        return Ok(a.clone());
    }
    let shape = perm.iter().map(|&p| a.shape()[p]).collect();
    Ok(Array::from_op(
        Transpose(perm),
        vec![a.clone()],
        shape,
        a.dtype(),
    ))
}

pub(crate) struct Broadcast;

impl Primitive for Broadcast {
    fn name(&self) -> &'static str {
        "broadcast"
    }

    fn eval(&self, mut inputs: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let mut t = inputs.pop().expect("one input");
        let shape = &outputs[0].shape;
        let lead = shape.len() - t.ndim();
        let mut strides = vec![0isize; shape.len()];
        for (i, (&d, &s)) in t.shape.iter().zip(&t.strides).enumerate() {
            strides[lead + i] = if d == 1 { 0 } else { s };
        }
        t.shape = shape.clone();
        t.strides = strides;
        Ok(vec![t])
    }
}

/// `a` broadcast to `shape` (a view: no data is copied).
///
/// ```
/// let a = lazulite::Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
/// let b = lazulite::broadcast_to(&a, &[3, 2]).unwrap();
/// assert_eq!(b.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 1.0, 2.0, 1.0, 2.0]);
/// ```
pub fn broadcast_to(a: &Array, shape: &[usize]) -> Result<Array> {
    if a.shape() == shape {
        return Ok(a.clone());
    }
    let target = broadcast_shapes(a.shape(), shape)
        .ok()
        .filter(|s| s == shape);
    if target.is_none() {
        return Err(Error::value(format!(
            "[broadcast_to] Cannot broadcast array of shape {:?} into shape {:?}.",
            a.shape(),
            shape
        )));
    }
    checked_size(shape)?;
    Ok(Array::from_op(
        Broadcast,
        vec![a.clone()],
        shape.to_vec(),
        a.dtype(),
    ))
}

/// Strided slicing of every axis: `start`, `step` per axis (step may be negative),
/// producing the given output shape. Built by the indexing ops.
pub(crate) struct Slice {
    pub start: Vec<usize>,
    pub step: Vec<isize>,
}

impl Primitive for Slice {
    fn name(&self) -> &'static str {
        "slice"
    }

    fn params(&self) -> String {
        format!("start={:?}, step={:?}", self.start, self.step)
    }

    fn eval(&self, mut inputs: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let mut t = inputs.pop().expect("one input");
        let shape = outputs[0].shape.clone();
        if shape.contains(&0) {
            t.offset = 0;
        } else {
            let shift: isize = self
                .start
                .iter()
                .zip(&t.strides)
                .map(|(&s, &st)| s as isize * st)
                .sum();
            t.offset = (t.offset as isize + shift) as usize;
        }
        t.strides = t
            .strides
            .iter()
            .zip(&self.step)
            .map(|(&s, &k)| s * k)
            .collect();
        t.shape = shape;
        Ok(vec![t])
    }
}

/// Elements `start[i]`, `start[i] + step[i]`, ... below `stop[i]` (above, for negative
/// steps) along each axis, with NumPy's rules for negative and out-of-range bounds.
///
/// ```
/// let a = lazulite::Array::from_slice(&[0i32, 1, 2, 3, 4, 5, 6, 7, 8, 9], &[10]).unwrap();
/// let s = lazulite::slice(&a, &[2], &[8], &[2]).unwrap();
/// assert_eq!(s.to_vec::<i32>().unwrap(), vec![2, 4, 6]);
/// let r = lazulite::slice(&a, &[-1], &[-11], &[-3]).unwrap();
/// assert_eq!(r.to_vec::<i32>().unwrap(), vec![9, 6, 3, 0]);
/// ```
pub fn slice(a: &Array, start: &[i64], stop: &[i64], step: &[i64]) -> Result<Array> {
    let ndim = a.ndim();
    if start.len() != ndim || stop.len() != ndim || step.len() != ndim {
        return Err(Error::value(format!(
            "[slice] Expected {ndim} start, stop and step values for an array with {ndim} dimensions."
        )));
    }
    let mut starts = Vec::with_capacity(ndim);
    let mut shape = Vec::with_capacity(ndim);
    for (i, &n) in a.shape().iter().enumerate() {
        let (first, len) = slice_bounds(n, start[i], stop[i], step[i])?;
        starts.push(first);
        shape.push(len);
    }
    if shape == a.shape() && step.iter().all(|&s| s == 1) {
        return Ok(a.clone());
    }
    let prim = Slice {
        start: starts,
        step: step.iter().map(|&s| s as isize).collect(),
    };
    Ok(Array::from_op(prim, vec![a.clone()], shape, a.dtype()))
}

/// First index and length of `start:stop:step` over an axis of length `n` (Python rules).
pub(crate) fn slice_bounds(n: usize, start: i64, stop: i64, step: i64) -> Result<(usize, usize)> {
    if step == 0 {
        return Err(Error::value("[slice] Slice step cannot be zero."));
    }
    let n = n as i64;
    let clamp = |v: i64, lo: i64, hi: i64| {
        let v = if v < 0 { v.saturating_add(n) } else { v };
        v.clamp(lo, hi)
    };
    let (first, len) = if step > 0 {
        let (b, e) = (clamp(start, 0, n), clamp(stop, 0, n));
        (b, if e > b { (e - b + step - 1) / step } else { 0 })
    } else {
        let (b, e) = (clamp(start, -1, n - 1), clamp(stop, -1, n - 1));
        (
            b,
            if b > e {
                (b - e + (-step) - 1) / (-step)
            } else {
                0
            },
        )
    };
    Ok((if len == 0 { 0 } else { first as usize }, len as usize))
}
