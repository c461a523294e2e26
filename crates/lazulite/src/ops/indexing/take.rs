//! Indexing along one axis by an array of positions: [`take`], [`take_along_axis`],
//! [`put_along_axis`].

use crate::array::Array;
use crate::backend::cpu::indexing::{gather as gather_kernel, ScatterMode};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::cast::astype;
use crate::ops::creation::{arange, full_like};
use crate::ops::exported::ExportedAs;
use crate::ops::indexing::expression::{index, Index};
use crate::ops::indexing::gather_scatter::{as_i64, gather, gather_along_axis, scatter};
use crate::ops::scan::cumsum;
use crate::ops::shape::squeeze;
use crate::ops::view::{broadcast_to, reshape};
use crate::primitive::{mlx_ints, mlx_shape, MlxInput, MlxNode, MlxState, OutputSpec};
use crate::shape::{broadcast_shapes, normalize_axis, shape_text};

/// The axis `take`-like ops work on: `None` flattens `a` first.
fn along(op: &str, a: &Array, axis: Option<i32>) -> Result<(Array, usize)> {
    match axis {
        None => Ok((reshape(a, &[-1])?, 0)),
        Some(ax) => Ok((a.clone(), normalize_axis(op, ax, a.ndim())?)),
    }
}

/// The elements of `a` at `indices` along `axis` (`None`: of the flattened `a`): NumPy's
/// `take`, the result has `a`'s shape with the axis replaced by the indices' shape.
/// Negative indices count from the end; out of range is an `IndexError` from eval.
///
/// ```
/// use lazulite::{take, Array};
/// let a = Array::from_slice(&[10i32, 20, 30, 40], &[2, 2]).unwrap();
/// let i = Array::from_slice(&[-1i32, 0], &[2]).unwrap();
/// assert_eq!(take(&a, &i, None).unwrap().to_vec::<i32>().unwrap(), vec![40, 10]);
/// assert_eq!(take(&a, &i, Some(1)).unwrap().to_vec::<i32>().unwrap(), vec![20, 10, 40, 30]);
/// ```
pub fn take(a: &Array, indices: &Array, axis: Option<i32>) -> Result<Array> {
    let (a, ax) = along("take", a, axis)?;
    if indices.dtype() == DType::Bool {
        return Err(Error::value(
            "[take] Got indices with invalid dtype bool. Indices must be integral.",
        ));
    }
    if ax == 0 || crate::ops::trace::in_shapeless_trace() {
        return take_along(&a, indices, ax);
    }
    // MLX's `take` along a later axis: a `Gather` keeping the axis (size 1) after the
    // indices' axes, a `Transpose` that moves the indices' axes to it, a `Squeeze` of it.
    let nodes = |x: &[Array], out: &[Array]| {
        let (a, indices) = (&x[0], &x[1]);
        let k = indices.ndim();
        let mut slice_sizes = a.shape().to_vec();
        slice_sizes[ax] = 1;
        let gathered: Vec<usize> = indices
            .shape()
            .iter()
            .chain(&slice_sizes)
            .copied()
            .collect();
        let order: Vec<usize> = (k..k + ax)
            .chain(0..k)
            .chain(k + ax..gathered.len())
            .collect();
        let moved: Vec<usize> = order.iter().map(|&d| gathered[d]).collect();
        let spec = |shape: Vec<usize>| OutputSpec {
            shape,
            dtype: a.dtype(),
        };
        let state = vec![mlx_ints("take", &[ax])?, mlx_shape("take", &slice_sizes)?];
        let gather = MlxNode::new(
            "Gather",
            state,
            vec![MlxInput::Input(0), MlxInput::Input(1)],
            spec(gathered),
        );
        let transpose = MlxNode::new(
            "Transpose",
            vec![mlx_ints("take", &order)?],
            vec![MlxInput::Node(0)],
            spec(moved),
        );
        let squeeze = MlxNode::new(
            "Squeeze",
            vec![mlx_ints("take", &[k + ax])?],
            vec![MlxInput::Node(1)],
            spec(out[0].shape().to_vec()),
        );
        Ok(vec![gather, transpose, squeeze])
    };
    let composed = move |x: &[Array]| Ok(vec![take_along(&x[0], &x[1], ax)?]);
    let taken = ExportedAs::apply_nodes("take", nodes, vec![a, indices.clone()], composed)?;
    Ok(taken.into_iter().next().expect("one output"))
}

/// [`take`] along the axis `ax` of `a`, as an index expression.
fn take_along(a: &Array, indices: &Array, ax: usize) -> Result<Array> {
    let mut entries = vec![Index::slice(None, None, None); ax];
    entries.push(Index::Array(indices.clone()));
    index(a, &entries)
}

/// Runs the gather kernel under `take(a, indices, Some(0))` once on `a` and `indices`
/// (evaluating them first), with its bounds check or, when `check` is false, without:
/// for `examples/bench_gather.rs`, which measures what the check costs. Not part of the
/// API.
///
/// # Safety
/// With `check` false, every index must lie in `[-n, n)` for `a`'s first axis of size
/// `n`.
#[doc(hidden)]
pub unsafe fn take_kernel_for_bench(a: &Array, indices: &Array, check: bool) -> Result<()> {
    let (a, indices) = (a.tensor()?, indices.tensor()?);
    if check {
        gather_kernel(&a, &[indices], &[0])?;
    } else {
        // SAFETY: promised by the caller.
        unsafe { crate::backend::cpu::indexing::gather_unchecked(&a, &[indices], &[0])? };
    }
    Ok(())
}

/// Coordinates for `*_along_axis`: `indices` on `axis`, an arange on every other axis,
/// all broadcast to `shape`.
///
/// In a shapeless trace, indices of that shape already have positions counted along them
/// (an exclusive cumulative sum of ones like them) instead of an arange of fixed length,
/// so that a replay counts along their new sizes.
fn along_coordinates(indices: &Array, axis: usize, shape: &[usize]) -> Result<Vec<Array>> {
    if crate::ops::trace::in_shapeless_trace() && indices.shape() == shape {
        let ones = full_like(indices, 1, Some(DType::Int32))?;
        return (0..shape.len())
            .map(|d| {
                if d == axis {
                    Ok(indices.clone())
                } else {
                    cumsum(&ones, Some(d as i32), false, false, None)
                }
            })
            .collect();
    }
    (0..shape.len())
        .map(|d| {
            let c = if d == axis {
                indices.clone()
            } else {
                let mut s = vec![1i64; shape.len()];
                s[d] = shape[d] as i64;
                reshape(&arange(0.0, shape[d] as f64, 1.0, DType::Int32)?, &s)?
            };
            broadcast_to(&c, shape)
        })
        .collect()
}

/// The shape `*_along_axis` works on: `a` and `indices` broadcast together except along
/// `axis`, where the indices' length counts; also returns `a` broadcast to match.
fn along_shapes(op: &str, a: &Array, indices: &Array, axis: usize) -> Result<(Array, Vec<usize>)> {
    if indices.ndim() != a.ndim() {
        return Err(Error::value(format!(
            "[{op}] Indices of dimension {} does not match array of dimension {}.",
            indices.ndim(),
            a.ndim()
        )));
    }
    if !indices.dtype().is_integer() {
        return Err(Error::value(format!(
            "[{op}] Got indices with invalid dtype {}. Indices must be integral.",
            indices.dtype()
        )));
    }
    let mut a_shape = a.shape().to_vec();
    a_shape[axis] = 1;
    let mut i_shape = indices.shape().to_vec();
    i_shape[axis] = 1;
    let mut shape = broadcast_shapes(&a_shape, &i_shape).map_err(|_| {
        Error::value(format!(
            "[{op}] Cannot broadcast indices of shape {} with an array of shape {}.",
            shape_text(indices.shape()),
            shape_text(a.shape())
        ))
    })?;
    let mut a_target = shape.clone();
    a_target[axis] = a.shape()[axis];
    shape[axis] = indices.shape()[axis];
    Ok((broadcast_to(a, &a_target)?, shape))
}

/// `a`'s elements picked along `axis` by `indices` (same number of dimensions as `a`,
/// broadcasting with it on the other axes): NumPy's `take_along_axis`, e.g. with the
/// result of `argsort`. `None` works on the flattened `a`.
///
/// ```
/// use lazulite::{take_along_axis, Array};
/// let a = Array::from_slice(&[10i32, 30, 20, 60, 50, 40], &[2, 3]).unwrap();
/// let i = Array::from_slice(&[0i32, 2, 2, 0], &[2, 2]).unwrap();
/// let r = take_along_axis(&a, &i, Some(1)).unwrap();
/// assert_eq!(r.to_vec::<i32>().unwrap(), vec![10, 20, 40, 60]);
/// ```
pub fn take_along_axis(a: &Array, indices: &Array, axis: Option<i32>) -> Result<Array> {
    if !indices.dtype().is_integer() {
        // Checked now, but with the kind of MLX's error, which comes from its kernel.
        return Err(Error::runtime(format!(
            "[take_along_axis] Got indices with invalid dtype {}. Indices must be integral.",
            indices.dtype()
        )));
    }
    let (a, ax) = along("take_along_axis", a, axis)?;
    let indices = if axis.is_none() {
        reshape(indices, &[-1])?
    } else {
        indices.clone()
    };
    let (a, shape) = along_shapes("take_along_axis", &a, &indices, ax)?;
    let coords = along_coordinates(&indices, ax, &shape)?;
    if crate::ops::trace::in_shapeless_trace() && indices.shape() == shape.as_slice() {
        // The positions along the axis first: recorded (and exported) as MLX's GatherAxis.
        let order: Vec<usize> = std::iter::once(ax)
            .chain((0..shape.len()).filter(|&d| d != ax))
            .collect();
        let coords: Vec<Array> = order.iter().map(|&d| coords[d].clone()).collect();
        return gather_along_axis(&a, &coords, &order, ax);
    }
    let axes: Vec<usize> = (0..shape.len()).collect();
    gather(&a, &coords, &axes)
}

/// `a` (shape of `indices` except along `axis`) with `values` (shape of `indices`) added
/// at `indices` along `axis`, duplicates accumulating: the transpose of
/// [`take_along_axis`], for derivative rules (sorts, cumulative extrema).
pub(crate) fn scatter_add_along_axis(
    a: &Array,
    indices: &Array,
    values: &Array,
    axis: usize,
) -> Result<Array> {
    let coords = along_coordinates(indices, axis, indices.shape())?;
    let axes: Vec<usize> = (0..a.ndim()).collect();
    scatter(a, &coords, values, &axes, ScatterMode::Add)
}

/// `a` with `values` written at `indices` along `axis` (NumPy's `put_along_axis`; the
/// last value wins for duplicates). `values` broadcasts to the indices' shape.
///
/// ```
/// use lazulite::{put_along_axis, zeros, Array, DType};
/// let a = zeros(&[2, 3], DType::Int32).unwrap();
/// let i = Array::from_slice(&[2i32, 0], &[2, 1]).unwrap();
/// let r = put_along_axis(&a, &i, &Array::scalar(7i32), Some(1)).unwrap();
/// assert_eq!(r.to_vec::<i32>().unwrap(), vec![0, 0, 7, 7, 0, 0]);
/// ```
pub fn put_along_axis(
    a: &Array,
    indices: &Array,
    values: &Array,
    axis: Option<i32>,
) -> Result<Array> {
    let (flat, ax) = along("put_along_axis", a, axis)?;
    let indices = if axis.is_none() {
        reshape(indices, &[-1])?
    } else {
        indices.clone()
    };
    // As in MLX, the indices and the values (in the array's dtype) broadcast together
    // first, then with the array outside the axis.
    let mut values = astype(values, a.dtype())?;
    if values.ndim() > indices.ndim() {
        let leading: Vec<i32> = (0..(values.ndim() - indices.ndim()) as i32).collect();
        values = squeeze(&values, leading)?;
    }
    let together = broadcast_shapes(indices.shape(), values.shape())?;
    let indices = broadcast_to(&indices, &together)?;
    let (_, shape) = along_shapes("put_along_axis", &flat, &indices, ax)?;
    if shape
        .iter()
        .zip(flat.shape())
        .enumerate()
        .any(|(d, (s, n))| d != ax && s != n)
    {
        return Err(Error::value(format!(
            "[put_along_axis] Indices of shape {} do not match the array of shape {} \
             outside the axis.",
            shape_text(indices.shape()),
            shape_text(a.shape())
        )));
    }
    if flat.size() == 0 {
        return Ok(a.clone());
    }
    // MLX's `ScatterAxis` (reduction `None`, 1) of the array, the indices and the values
    // in the array's dtype, both broadcast to the shape written.
    let indices = broadcast_to(&indices, &shape)?;
    let values = broadcast_to(&values, &shape)?;
    let state = || Ok(vec![MlxState::Int(1), MlxState::Int(ax as i32)]);
    let composed = move |x: &[Array]| {
        let coords = along_coordinates(&x[1], ax, x[1].shape())?;
        let axes: Vec<usize> = (0..x[0].ndim()).collect();
        Ok(vec![scatter(
            &x[0],
            &coords,
            &x[2],
            &axes,
            ScatterMode::Assign,
        )?])
    };
    let inputs = vec![flat, indices, values];
    let out = ExportedAs::apply("put_along_axis", "ScatterAxis", state, inputs, composed)?;
    reshape(&out[0], &as_i64(a.shape()))
}
