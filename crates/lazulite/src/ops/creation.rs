//! Arrays made from a shape and values (full, zeros, ones, arange, linspace, eye, tri,
//! meshgrid) and the triangle and diagonal ops (tril, triu, diag, diagonal, trace).

use crate::array::Array;
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::element::{dispatch, Element, Scalar};
use crate::error::{Error, Result};
use crate::ops::batching::batch_to_front;
use crate::ops::binary::{equal, less_equal, subtract};
use crate::ops::cast::astype;
use crate::ops::exported::ExportedAs;
use crate::ops::operand::{scalar_array, to_arrays, Operand};
use crate::ops::shape::{broadcast_arrays, expand_dims, pad, sized};
use crate::ops::ternary::where_;
use crate::ops::unary::logical_not;
use crate::ops::view::{broadcast_to, reshape, transpose};
use crate::primitive::{no_rule, Export, MlxNode, MlxState, OutputSpec, Primitive};
use crate::shape::{axis_in_range, broadcast_shapes, checked_size};

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
    let value = value.into();
    let (values, value_dtype) = to_arrays("full", std::slice::from_ref(&value))?;
    let dtype = dtype.unwrap_or(value_dtype);
    if !crate::ops::trace::in_export_trace() {
        let v = astype(&values[0], dtype)?;
        return broadcast_to(&v, shape);
    }
    // As MLX records it: a scalar made in the dtype, broadcast, then a `Full` of it in
    // the dtype.
    let v = match value {
        Operand::Scalar(s) => scalar_array("full", s, dtype)?,
        Operand::Array(_) => values[0].clone(),
    };
    let filled = astype(&broadcast_to(&v, shape)?, dtype)?;
    let copy = |x: &[Array]| Ok(vec![x[0].clone()]);
    let out = ExportedAs::apply("full", "Full", || Ok(vec![]), vec![filled], copy)?;
    Ok(out.into_iter().next().expect("one output"))
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
///
/// ```
/// let a = lazulite::ones(&[2, 2], lazulite::DType::Int32)?;
/// assert_eq!(a.to_vec::<i32>()?, vec![1; 4]);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn ones(shape: &[usize], dtype: DType) -> Result<Array> {
    full(shape, Scalar::Int(1), Some(dtype))
}

/// Zeros with the shape and dtype of `a`.
///
/// ```
/// use lazulite::{zeros_like, Array, DType};
/// let z = zeros_like(&Array::from_slice(&[1u8, 2, 3], &[3])?)?;
/// assert_eq!((z.shape(), z.dtype()), (&[3][..], DType::UInt8));
/// assert_eq!(z.to_vec::<u8>()?, vec![0, 0, 0]);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn zeros_like(a: &Array) -> Result<Array> {
    full_like(a, Scalar::Int(0), None)
}

/// Ones with the shape and dtype of `a`.
///
/// ```
/// use lazulite::{ones_like, Array, DType};
/// let o = ones_like(&Array::from_slice(&[1.5f32, 2.5], &[1, 2])?)?;
/// assert_eq!((o.shape(), o.dtype()), (&[1, 2][..], DType::Float32));
/// assert_eq!(o.to_vec::<f32>()?, vec![1.0, 1.0]);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn ones_like(a: &Array) -> Result<Array> {
    full_like(a, Scalar::Int(1), None)
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

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        let n = outputs[0].shape[0] as f64;
        let state = vec![
            MlxState::Double(self.start),
            MlxState::Double(self.start + n * self.step),
            MlxState::Double(self.step),
        ];
        MlxNode::single("Arange", state, inputs, outputs)
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

    // A source (no inputs): no transform has anything to differentiate or batch through it.
    fn vjp(&self, _: &[Array], _: &[Array], _: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        Err(no_rule("vjp", self.name()))
    }

    fn jvp(&self, _: &[Array], _: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        Err(no_rule("jvp", self.name()))
    }

    fn vmap(&self, _: &[Array], _: &[Option<usize>]) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        Err(no_rule("vmap", self.name()))
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

/// An array of `shape` and `dtype`. As in MLX, its elements are zeros.
///
/// ```
/// let a = lazulite::empty(&[2], lazulite::DType::Int32).unwrap();
/// assert_eq!(a.to_vec::<i32>().unwrap(), vec![0, 0]);
/// ```
pub fn empty(shape: &[usize], dtype: DType) -> Result<Array> {
    zeros(shape, dtype)
}

/// An array with the shape of `a` filled with `value`, of `dtype` if given, else of
/// `a`'s dtype.
///
/// ```
/// use lazulite::{full_like, Array, DType};
/// let a = Array::from_slice(&[1i32, 2], &[2]).unwrap();
/// assert_eq!(full_like(&a, 2.7, None).unwrap().to_vec::<i32>().unwrap(), vec![2, 2]);
/// assert_eq!(full_like(&a, 2.5, Some(DType::Float32)).unwrap().dtype(), DType::Float32);
/// ```
pub fn full_like(a: &Array, value: impl Into<Operand>, dtype: Option<DType>) -> Result<Array> {
    let dtype = dtype.unwrap_or(a.dtype());
    if crate::ops::trace::in_shapeless_trace() {
        // Shaped like `a` at whatever size a shapeless replay gives it (MLX's Full): the
        // value broadcast against `a`.
        let (values, _) = to_arrays("full", &[value.into()])?;
        let v = astype(&values[0], dtype)?;
        if broadcast_shapes(v.shape(), a.shape()).ok().as_deref() != Some(a.shape()) {
            return full(a.shape(), v, Some(dtype));
        }
        return crate::ops::view::broadcast_with(&v, a.shape(), &[a], 0);
    }
    full(a.shape(), value, Some(dtype))
}

pub(crate) struct Linspace {
    start: f64,
    step: f64,
    last: Option<f64>,
}

impl Primitive for Linspace {
    fn name(&self) -> &'static str {
        "linspace"
    }

    fn params(&self) -> String {
        format!("start={}, step={}", self.start, self.step)
    }

    fn eval(&self, _: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let spec = &outputs[0];
        let mut t = Tensor::uninit(spec.dtype, &spec.shape)?;
        dispatch!(spec.dtype, T => {
            let values = t.slice_mut::<T>();
            for (i, v) in values.iter_mut().enumerate() {
                *v = T::from_f64(self.start + i as f64 * self.step).store();
            }
            // NumPy sets the endpoint exactly, so integer results do not truncate below it.
            if let (Some(last), Some(v)) = (self.last, values.last_mut()) {
                *v = T::from_f64(last).store();
            }
        });
        Ok(vec![t])
    }

    // A source (no inputs): no transform has anything to differentiate or batch through it.
    fn vjp(&self, _: &[Array], _: &[Array], _: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        Err(no_rule("vjp", self.name()))
    }

    fn jvp(&self, _: &[Array], _: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        Err(no_rule("jvp", self.name()))
    }

    fn vmap(&self, _: &[Array], _: &[Option<usize>]) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        Err(no_rule("vmap", self.name()))
    }
}

/// `num` evenly spaced values from `start` to `stop` (included if `endpoint`), computed
/// in float64 and converted to `dtype` (MLX's default is float32).
///
/// ```
/// use lazulite::{linspace, DType};
/// let a = linspace(0.0, 1.0, 5, true, DType::Float32).unwrap();
/// assert_eq!(a.to_vec::<f32>().unwrap(), vec![0.0, 0.25, 0.5, 0.75, 1.0]);
/// let b = linspace(0.0, 1.0, 5, false, DType::Float32).unwrap();
/// assert_eq!(b.to_vec::<f32>().unwrap()[1], 0.2);
/// ```
pub fn linspace(start: f64, stop: f64, num: usize, endpoint: bool, dtype: DType) -> Result<Array> {
    sized("linspace", &[num])?;
    let div = if endpoint { num.saturating_sub(1) } else { num };
    let step = if div > 0 {
        (stop - start) / div as f64
    } else {
        0.0
    };
    let last = (endpoint && num > 1).then_some(stop);
    Ok(Array::from_op(
        Linspace { start, step, last },
        vec![],
        vec![num],
        dtype,
    ))
}

/// Row and column indices of an `n x m` grid as int64 `(n, 1)` and `(1, m)` arrays.
fn grid_indices(n: usize, m: usize) -> Result<(Array, Array)> {
    let rows = arange(0.0, n as f64, 1.0, DType::Int64)?;
    let cols = arange(0.0, m as f64, 1.0, DType::Int64)?;
    Ok((
        reshape(&rows, &[n as i64, 1])?,
        reshape(&cols, &[1, m as i64])?,
    ))
}

/// An `n x m` (`m` defaults to `n`) array with ones on diagonal `k` (above the main one
/// for `k > 0`) and zeros elsewhere.
///
/// ```
/// use lazulite::{eye, DType};
/// let a = eye(2, Some(3), 1, DType::Int32).unwrap();
/// assert_eq!(a.to_vec::<i32>().unwrap(), vec![0, 1, 0, 0, 0, 1]);
/// ```
pub fn eye(n: usize, m: Option<usize>, k: i64, dtype: DType) -> Result<Array> {
    let m = m.unwrap_or(n);
    sized("eye", &[n, m])?;
    let (rows, cols) = grid_indices(n, m)?;
    astype(&equal(subtract(&cols, &rows)?, k)?, dtype)
}

/// The `n x n` identity matrix.
///
/// ```
/// let a = lazulite::identity(2, lazulite::DType::Float32).unwrap();
/// assert_eq!(a.to_vec::<f32>().unwrap(), vec![1.0, 0.0, 0.0, 1.0]);
/// ```
pub fn identity(n: usize, dtype: DType) -> Result<Array> {
    eye(n, None, 0, dtype)
}

/// An `n x m` (`m` defaults to `n`) array with ones at and below diagonal `k`.
///
/// ```
/// use lazulite::{tri, DType};
/// let a = tri(2, Some(3), 1, DType::Int32).unwrap();
/// assert_eq!(a.to_vec::<i32>().unwrap(), vec![1, 1, 0, 1, 1, 1]);
/// ```
pub fn tri(n: usize, m: Option<usize>, k: i64, dtype: DType) -> Result<Array> {
    let m = m.unwrap_or(n);
    sized("tri", &[n, m])?;
    let (rows, cols) = grid_indices(n, m)?;
    astype(&less_equal(subtract(&cols, &rows)?, k)?, dtype)
}

fn triangle(op: &str, x: &Array, keep: &Array) -> Result<Array> {
    let zero = Array::zeros(&[], x.dtype())?;
    where_(keep, x, &zero).map_err(|e| Error::new(e.kind(), format!("[{op}] {}", e.message())))
}

fn last_two(op: &str, x: &Array) -> Result<(usize, usize)> {
    match x.shape() {
        [.., n, m] => Ok((*n, *m)),
        _ => Err(Error::value(format!("[{op}] array must be at least 2-D"))),
    }
}

/// `x` with the elements above diagonal `k` of its last two axes set to zero.
///
/// ```
/// use lazulite::{tril, Array};
/// let a = Array::from_slice(&[1i32, 2, 3, 4], &[2, 2]).unwrap();
/// assert_eq!(tril(&a, 0).unwrap().to_vec::<i32>().unwrap(), vec![1, 0, 3, 4]);
/// ```
pub fn tril(x: &Array, k: i64) -> Result<Array> {
    let (n, m) = last_two("tril", x)?;
    triangle("tril", x, &tri(n, Some(m), k, DType::Bool)?)
}

/// `x` with the elements below diagonal `k` of its last two axes set to zero.
///
/// ```
/// use lazulite::{triu, Array};
/// let a = Array::from_slice(&[1i32, 2, 3, 4], &[2, 2]).unwrap();
/// assert_eq!(triu(&a, 0).unwrap().to_vec::<i32>().unwrap(), vec![1, 2, 0, 4]);
/// ```
pub fn triu(x: &Array, k: i64) -> Result<Array> {
    let (n, m) = last_two("triu", x)?;
    let below = tri(n, Some(m), k.saturating_sub(1), DType::Bool)?;
    triangle("triu", x, &logical_not(&below)?)
}

/// Coordinate grids from 1-D coordinate vectors (other inputs are flattened).
/// `indexing` is `"xy"` (Cartesian: the first two axes swapped) or `"ij"` (matrix);
/// with `sparse` the outputs keep size 1 on every axis but their own.
///
/// ```
/// use lazulite::{meshgrid, zeros, DType};
/// let (x, y) = (zeros(&[2], DType::Float32).unwrap(), zeros(&[3], DType::Float32).unwrap());
/// let g = meshgrid(&[x.clone(), y.clone()], false, "xy").unwrap();
/// assert_eq!(g[0].shape(), &[3, 2]);
/// let g = meshgrid(&[x, y], true, "ij").unwrap();
/// assert_eq!((g[0].shape(), g[1].shape()), (&[2, 1][..], &[1, 3][..]));
/// ```
pub fn meshgrid(arrays: &[Array], sparse: bool, indexing: &str) -> Result<Vec<Array>> {
    if indexing != "xy" && indexing != "ij" {
        return Err(Error::value(
            "[meshgrid] Invalid indexing value. Valid values are 'xy' and 'ij'.",
        ));
    }
    let n = arrays.len();
    let grids = arrays
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let position = match (indexing, i) {
                ("xy", 0) if n > 1 => 1,
                ("xy", 1) => 0,
                _ => i,
            };
            let mut shape = vec![1i64; n];
            shape[position] = -1;
            reshape(a, &shape)
        })
        .collect::<Result<Vec<_>>>()?;
    if sparse {
        return Ok(grids);
    }
    broadcast_arrays(&grids)
}

/// A 1-D `a` placed on diagonal `k` of a square 2-D array, or diagonal `k` of a 2-D `a`.
///
/// ```
/// use lazulite::{diag, Array};
/// let v = Array::from_slice(&[1i32, 2], &[2]).unwrap();
/// assert_eq!(diag(&v, 1).unwrap().to_vec::<i32>().unwrap(), vec![0, 1, 0, 0, 0, 2, 0, 0, 0]);
/// let m = Array::from_slice(&[0i32, 1, 2, 3, 4, 5], &[2, 3]).unwrap();
/// assert_eq!(diag(&m, 1).unwrap().to_vec::<i32>().unwrap(), vec![1, 5]);
/// ```
pub fn diag(a: &Array, k: i64) -> Result<Array> {
    match a.ndim() {
        1 => {
            let shift = k.unsigned_abs();
            let n = (a.shape()[0] as u64)
                .checked_add(shift)
                .filter(|&n| n <= isize::MAX as u64)
                .ok_or_else(|| Error::value(format!("[diag] Offset {k} is too large.")))?
                as i64;
            sized("diag", &[n as usize, n as usize])?;
            let padded = pad(a, &[(0, shift as i64)], "constant", 0)?;
            let placed = if k >= 0 {
                reshape(&padded, &[n, 1])?
            } else {
                reshape(&padded, &[1, n])?
            };
            let mask = eye(n as usize, None, k, DType::Bool)?;
            where_(&mask, &placed, &Array::zeros(&[], a.dtype())?)
        }
        2 => diagonal(a, k, 0, 1),
        d => Err(Error::value(format!(
            "[diag] array must be 1-D or 2-D, got array with {d} dimensions."
        ))),
    }
}

pub(crate) struct Diagonal {
    pub offset: i64,
    pub axis1: usize,
    pub axis2: usize,
}

impl Primitive for Diagonal {
    fn name(&self) -> &'static str {
        "diagonal"
    }

    fn params(&self) -> String {
        format!(
            "offset={}, axis1={}, axis2={}",
            self.offset, self.axis1, self.axis2
        )
    }

    fn eval(&self, mut inputs: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let mut t = inputs.pop().expect("one input");
        let (s1, s2) = (t.strides[self.axis1], t.strides[self.axis2]);
        let shape = outputs[0].shape.clone();
        if shape.contains(&0) {
            t.offset = 0;
        } else {
            let shift = if self.offset >= 0 {
                self.offset as isize * s2
            } else {
                -self.offset as isize * s1
            };
            t.offset = (t.offset as isize + shift) as usize;
        }
        let mut strides: Vec<isize> = (0..t.ndim())
            .filter(|&d| d != self.axis1 && d != self.axis2)
            .map(|d| t.strides[d])
            .collect();
        strides.push(s1 + s2);
        t.shape = shape;
        t.strides = strides;
        Ok(vec![t])
    }

    /// The cotangent placed on the diagonal of zero planes: `eye` selects the diagonal,
    /// and diagonal element `k` sits in row `k` (offset >= 0) or column `k` (below).
    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        cotangents: &[Array],
        _: &[usize],
    ) -> Result<Vec<Array>> {
        let g = &cotangents[0];
        let shape = inputs[0].shape();
        let (n1, n2) = (shape[self.axis1], shape[self.axis2]);
        let len = g.shape()[g.ndim() - 1];
        let along_rows = self.offset >= 0;
        let mut widths = vec![(0i64, 0i64); g.ndim()];
        widths[g.ndim() - 1].1 = (if along_rows { n1 } else { n2 } - len) as i64;
        let line = pad(g, &widths, "constant", 0)?;
        let plane = expand_dims(&line, if along_rows { -1 } else { -2 })?;
        let mask = eye(n1, Some(n2), self.offset, DType::Bool)?;
        let placed = where_(&mask, &plane, 0.0)?;
        // `placed` has the other axes in order, then axis1 and axis2: put those back.
        let mut source: Vec<usize> = (0..shape.len())
            .filter(|&d| d != self.axis1 && d != self.axis2)
            .collect();
        source.extend([self.axis1, self.axis2]);
        let mut perm = vec![0i32; shape.len()];
        for (position, &d) in source.iter().enumerate() {
            perm[d] = position as i32;
        }
        Ok(vec![transpose(&placed, &perm)?])
    }

    fn jvp(&self, _: &[Array], tangents: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        Ok(vec![diagonal(
            &tangents[0],
            self.offset,
            self.axis1 as i32,
            self.axis2 as i32,
        )?])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let x = batch_to_front(&inputs[0], axes[0])?;
        let out = diagonal(
            &x,
            self.offset,
            self.axis1 as i32 + 1,
            self.axis2 as i32 + 1,
        )?;
        Ok((vec![out], vec![Some(0)]))
    }
}

/// Diagonal `offset` of the 2-D planes of `a` spanned by `axis1` and `axis2`, as a view:
/// those axes are removed and the diagonal becomes the last axis.
///
/// ```
/// use lazulite::{diagonal, Array};
/// let m = Array::from_slice(&[0i32, 1, 2, 3, 4, 5], &[2, 3]).unwrap();
/// assert_eq!(diagonal(&m, 0, 0, 1).unwrap().to_vec::<i32>().unwrap(), vec![0, 4]);
/// assert_eq!(diagonal(&m, -1, 0, 1).unwrap().to_vec::<i32>().unwrap(), vec![3]);
/// ```
pub fn diagonal(a: &Array, offset: i64, axis1: i32, axis2: i32) -> Result<Array> {
    let ndim = a.ndim();
    if ndim < 2 {
        return Err(Error::value(format!(
            "[diagonal] Array must have at least two dimensions, but got {ndim} dimensions."
        )));
    }
    let normalize = |name: &str, axis: i32| {
        axis_in_range(axis, ndim).ok_or_else(|| {
            Error::axis(format!(
                "[diagonal] Invalid {name} {axis} for array with {ndim} dimensions."
            ))
        })
    };
    let (ax1, ax2) = (normalize("axis1", axis1)?, normalize("axis2", axis2)?);
    if ax1 == ax2 {
        return Err(Error::value(
            "[diagonal] axis1 and axis2 cannot be the same axis",
        ));
    }
    let (n1, n2) = (a.shape()[ax1] as i128, a.shape()[ax2] as i128);
    let off = offset as i128;
    let len = if off >= 0 {
        n1.min(n2 - off)
    } else {
        (n1 + off).min(n2)
    }
    .max(0) as usize;
    let mut shape: Vec<usize> = (0..ndim)
        .filter(|&d| d != ax1 && d != ax2)
        .map(|d| a.shape()[d])
        .collect();
    shape.push(len);
    let prim = Diagonal {
        offset: if len == 0 { 0 } else { offset },
        axis1: ax1,
        axis2: ax2,
    };
    Ok(Array::from_op(prim, vec![a.clone()], shape, a.dtype()))
}

/// The sum along diagonal `offset` of the planes spanned by `axis1` and `axis2`, in
/// `dtype` if given, else with MLX's sum dtype (bool/int8/int16 -> int32,
/// uint8/uint16 -> uint32).
///
/// ```
/// use lazulite::{eye, trace, DType};
/// let a = eye(3, None, 0, DType::Int8).unwrap();
/// let t = trace(&a, 0, 0, 1, None).unwrap();
/// assert_eq!((t.dtype(), t.item::<i32>().unwrap()), (DType::Int32, 3));
/// ```
pub fn trace(
    a: &Array,
    offset: i64,
    axis1: i32,
    axis2: i32,
    dtype: Option<DType>,
) -> Result<Array> {
    if a.ndim() < 2 {
        return Err(Error::value(format!(
            "[trace] Array must have at least two dimensions, but got {} dimensions.",
            a.ndim()
        )));
    }
    let dtype = dtype.unwrap_or(match a.dtype() {
        DType::Bool | DType::Int8 | DType::Int16 => DType::Int32,
        DType::UInt8 | DType::UInt16 => DType::UInt32,
        other => other,
    });
    let d = astype(&diagonal(a, offset, axis1, axis2)?, dtype)?;
    astype(&crate::ops::reduce::sum(&d, -1, false)?, dtype)
}
