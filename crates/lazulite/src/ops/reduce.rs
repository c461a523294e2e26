//! Reductions: the `Reduce` (sum, prod, max, min, all, any over a set of axes),
//! `ArgReduce` (argmax, argmin along one axis) and `Median` primitives, and the
//! composites built on them (mean, var, std, count_nonzero). Softmax and logsumexp are in
//! `softmax.rs`.
//!
//! Result dtypes follow MLX: sums and products of bool/int8/int16 are int32, of
//! uint8/uint16 uint32; argmax/argmin give uint32; means, variances, medians and
//! softmax of integers are float32. Where lazulite is more accurate than MLX: sums of
//! float16/bfloat16 accumulate in float64 and round once (MLX accumulates in the half
//! type, so `mean(ones(70000, float16))` is `inf` there and 1 here), and mean, var and
//! std of half inputs are computed in float32 and rounded once; var subtracts the mean
//! before squaring (MLX uses `E[x²] - E[x]²`).

use crate::array::Array;
use crate::backend::cpu::reduce::{
    arg_reduce as arg_reduce_kernel, median as median_kernel, reduce as reduce_kernel, ArgReduceOp,
    ReduceOp,
};
use crate::backend::{contiguous_strides, Tensor};
use crate::dtype::DType;
use crate::element::Scalar;
use crate::error::{Error, Result};
use crate::ops::batching::batch_to_front;
use crate::ops::binary::{divide, equal, multiply, subtract};
use crate::ops::cast::astype;
use crate::ops::creation::{arange, zeros, zeros_like};
use crate::ops::operand::scalar_array;
use crate::ops::scan::cumprod;
use crate::ops::sort::argsort;
use crate::ops::unary::{abs, sqrt, square};
use crate::ops::view::{broadcast_to, broadcast_with, reshape, slice, transpose};
use crate::primitive::{
    kept_dims, mlx_chain, mlx_ints, with_shape, Export, MlxInput, MlxNode, MlxState, OutputSpec,
    Primitive,
};
use crate::shape::{axis_in_range, Axes};

/// Gives `t` (contiguous) the shape of the node's output.
pub(super) fn shaped_as(mut t: Tensor, spec: &OutputSpec) -> Tensor {
    t.shape = spec.shape.clone();
    t.strides = contiguous_strides(&t.shape);
    t
}

/// A reduction of the input over `axes` (sorted, distinct). The output dtype may be
/// wider than [`ReduceOp::output_dtype`] for sums that feed a mean.
pub(crate) struct Reduce {
    pub op: ReduceOp,
    pub axes: Vec<usize>,
    pub keepdims: bool,
    pub dtype: DType,
}

impl Reduce {
    /// `v` (of the input's shape) scaled by the partial derivative of the reduction with
    /// respect to each input element; `None` when the output does not depend smoothly on
    /// the input (all, any).
    fn scale_by_partials(&self, x: &Array, v: &Array) -> Result<Option<Array>> {
        let scaled = match self.op {
            ReduceOp::Sum => v.clone(),
            ReduceOp::Prod => multiply(v, &products_of_others(x, &self.axes)?)?,
            ReduceOp::Max | ReduceOp::Min => {
                // The extreme value's cotangent is shared equally among the elements equal
                // to it (as MLX and JAX do).
                let extreme = record(self.op, x, &self.axes, true, x.dtype());
                let hits = equal(x, &extreme)?;
                let count = record(ReduceOp::Sum, &hits, &self.axes, true, DType::Int32);
                divide(&multiply(v, &hits)?, &count)?
            }
            ReduceOp::All | ReduceOp::Any => return Ok(None),
        };
        Ok(Some(scaled))
    }
}

impl Primitive for Reduce {
    fn name(&self) -> &'static str {
        self.op.name()
    }

    fn output_shapes(&self, inputs: &[OutputSpec]) -> Result<Vec<Vec<usize>>> {
        Ok(vec![reduced_shape(
            &inputs[0].shape,
            &self.axes,
            self.keepdims,
        )])
    }

    fn params(&self) -> String {
        format!("axes={:?}", self.axes)
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        // MLX's `Reduce::ReduceType` is `{And, Or, Sum, Prod, Min, Max}`; its reductions keep
        // the reduced axes and reduce in the output dtype.
        let kind = match self.op {
            ReduceOp::All => 0,
            ReduceOp::Any => 1,
            ReduceOp::Sum => 2,
            ReduceOp::Prod => 3,
            ReduceOp::Min => 4,
            ReduceOp::Max => 5,
        };
        let out = &outputs[0];
        let kept = with_shape(out, kept_dims(&inputs[0].shape, &self.axes));
        let axes = mlx_ints(self.name(), &self.axes)?;
        let mut nodes = vec![];
        let mut x = MlxInput::Input(0);
        let logical = matches!(self.op, ReduceOp::All | ReduceOp::Any);
        if !logical && inputs[0].dtype != out.dtype {
            let cast = with_shape(out, inputs[0].shape.clone());
            nodes.push(MlxNode::new(
                "AsType",
                vec![MlxState::Dtype(out.dtype)],
                vec![x],
                cast,
            ));
            x = MlxInput::Node(0);
        }
        let reduce = MlxNode::new(
            "Reduce",
            vec![MlxState::Int(kind), axes.clone()],
            vec![x],
            kept.clone(),
        );
        nodes.push(reduce);
        if kept.shape != out.shape {
            let i = MlxInput::Node(nodes.len() - 1);
            nodes.push(MlxNode::new("Squeeze", vec![axes], vec![i], out.clone()));
        }
        Ok(Export::Nodes(nodes))
    }

    fn eval(&self, mut inputs: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let x = inputs.pop().expect("reductions have one input");
        let t = reduce_kernel(self.op, &x, &self.axes, outputs[0].dtype)?;
        Ok(vec![shaped_as(t, &outputs[0])])
    }

    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        cotangents: &[Array],
        _: &[usize],
    ) -> Result<Vec<Array>> {
        let x = &inputs[0];
        let spread = spread_over_reduced(&cotangents[0], x, &self.axes)?;
        let grad = match self.scale_by_partials(x, &spread)? {
            Some(g) => astype(&g, x.dtype())?,
            None => zeros_like(x)?,
        };
        Ok(vec![grad])
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        let x = &inputs[0];
        let shape = reduced_shape(x.shape(), &self.axes, self.keepdims);
        Ok(vec![match self.scale_by_partials(x, &tangents[0])? {
            Some(scaled) => record(
                ReduceOp::Sum,
                &scaled,
                &self.axes,
                self.keepdims,
                self.dtype,
            ),
            None => zeros(&shape, self.dtype)?,
        }])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let x = batch_to_front(&inputs[0], axes[0])?;
        let shifted: Vec<usize> = self.axes.iter().map(|&d| d + 1).collect();
        Ok((
            vec![record(self.op, &x, &shifted, self.keepdims, self.dtype)],
            vec![Some(0)],
        ))
    }
}

/// `v`, the result of a reduction of an array of `shape` over `axes`, broadcast back to
/// `shape` (each input element gets the value of the output it went into).
/// In a shapeless trace the reduced axes are inserted back and `v` broadcast against the
/// input (MLX's rule), so that a replay spreads it over the input's new shape.
fn spread_over_reduced(v: &Array, x: &Array, axes: &[usize]) -> Result<Array> {
    let shape = x.shape();
    if crate::ops::trace::in_shapeless_trace() {
        let kept = if v.ndim() == shape.len() {
            v.clone()
        } else {
            let axes: Vec<i32> = axes.iter().map(|&d| d as i32).collect();
            crate::ops::shape::expand_dims(v, axes)?
        };
        return broadcast_with(&kept, shape, &[x], 0);
    }
    let kept: Vec<i64> = reduced_shape(shape, axes, true)
        .iter()
        .map(|&d| d as i64)
        .collect();
    broadcast_to(&reshape(v, &kept)?, shape)
}

/// For each element of `x`, the product of the other elements of its reduction over
/// `axes`: exclusive products from both ends multiplied, so that zeros need no division.
fn products_of_others(x: &Array, axes: &[usize]) -> Result<Array> {
    let kept: Vec<usize> = (0..x.ndim()).filter(|d| !axes.contains(d)).collect();
    let order: Vec<usize> = kept.iter().chain(axes).copied().collect();
    let perm: Vec<i32> = order.iter().map(|&d| d as i32).collect();
    let moved = transpose(x, &perm)?;
    let mut rows: Vec<i64> = kept.iter().map(|&d| x.shape()[d] as i64).collect();
    rows.push(reduced_count(x.shape(), axes) as i64);
    let rows = reshape(&moved, &rows)?;
    let before = cumprod(&rows, Some(-1), false, false, None)?;
    let after = cumprod(&rows, Some(-1), true, false, None)?;
    let moved_shape: Vec<i64> = moved.shape().iter().map(|&d| d as i64).collect();
    let others = reshape(&multiply(&before, &after)?, &moved_shape)?;
    let mut inverse = vec![0i32; order.len()];
    for (i, &d) in order.iter().enumerate() {
        inverse[d] = i as i32;
    }
    transpose(&others, &inverse)
}

/// The position of the first maximum or minimum along `axis`.
pub(crate) struct ArgReduce {
    pub op: ArgReduceOp,
    pub axis: usize,
    pub keepdims: bool,
}

impl ArgReduce {
    fn record(self, x: &Array) -> Array {
        let shape = reduced_shape(x.shape(), &[self.axis], self.keepdims);
        Array::from_op(self, vec![x.clone()], shape, DType::UInt32)
    }
}

impl Primitive for ArgReduce {
    fn name(&self) -> &'static str {
        self.op.name()
    }

    fn output_shapes(&self, inputs: &[OutputSpec]) -> Result<Vec<Vec<usize>>> {
        Ok(vec![reduced_shape(
            &inputs[0].shape,
            &[self.axis],
            self.keepdims,
        )])
    }

    fn params(&self) -> String {
        format!("axis={}", self.axis)
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        // MLX's `ArgReduce::ReduceType` is `{ArgMin, ArgMax}`; it keeps the axis.
        let kind = match self.op {
            ArgReduceOp::ArgMin => 0,
            ArgReduceOp::ArgMax => 1,
        };
        let axis = self.axis as i32;
        let out = &outputs[0];
        let kept = with_shape(out, kept_dims(&inputs[0].shape, &[self.axis]));
        let first = MlxNode::new(
            "ArgReduce",
            vec![MlxState::Int(kind), MlxState::Int(axis)],
            vec![MlxInput::Input(0)],
            kept.clone(),
        );
        let squeeze = ("Squeeze", vec![MlxState::Ints(vec![axis])], out.clone());
        mlx_chain(first, if self.keepdims { vec![] } else { vec![squeeze] })
    }

    fn eval(&self, mut inputs: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let x = inputs.pop().expect("arg reductions have one input");
        let t = arg_reduce_kernel(self.op, &x, self.axis)?;
        Ok(vec![shaped_as(t, &outputs[0])])
    }

    fn vjp(&self, inputs: &[Array], _: &[Array], _: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        Ok(vec![zeros_like(&inputs[0])?])
    }

    fn jvp(&self, inputs: &[Array], _: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        let shape = reduced_shape(inputs[0].shape(), &[self.axis], self.keepdims);
        Ok(vec![zeros(&shape, DType::UInt32)?])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let x = batch_to_front(&inputs[0], axes[0])?;
        let batched = ArgReduce {
            op: self.op,
            axis: self.axis + 1,
            keepdims: self.keepdims,
        };
        Ok((vec![batched.record(&x)], vec![Some(0)]))
    }
}

/// The median along `axis` (the public `median` moves all its axes into one).
pub(crate) struct Median {
    pub axis: usize,
}

impl Primitive for Median {
    fn name(&self) -> &'static str {
        "median"
    }

    fn params(&self) -> String {
        format!("axis={}", self.axis)
    }

    fn eval(&self, mut inputs: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let x = inputs.pop().expect("median has one input");
        let t = median_kernel(&x, self.axis, outputs[0].dtype)?;
        Ok(vec![shaped_as(t, &outputs[0])])
    }

    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        cotangents: &[Array],
        _: &[usize],
    ) -> Result<Vec<Array>> {
        let x = &inputs[0];
        let spread = spread_over_reduced(&cotangents[0], x, &[self.axis])?;
        let grad = multiply(&spread, &self.middle_weights(x)?)?;
        Ok(vec![astype(&grad, x.dtype())?])
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        let x = &inputs[0];
        let weighted = multiply(&tangents[0], &self.middle_weights(x)?)?;
        let dtype = x.dtype().to_inexact();
        Ok(vec![record(
            ReduceOp::Sum,
            &astype(&weighted, dtype)?,
            &[self.axis],
            false,
            dtype,
        )])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let x = batch_to_front(&inputs[0], axes[0])?;
        Ok((vec![record_median(&x, self.axis + 1)], vec![Some(0)]))
    }
}

impl Median {
    /// How much each element of `x` counts in its line's median: 1 for the middle element
    /// of the sorted line, 1/2 for each of the two middle ones of an even count.
    fn middle_weights(&self, x: &Array) -> Result<Array> {
        let n = x.shape()[self.axis];
        let order = argsort(x, Some(self.axis as i32))?;
        let at = |k: usize| -> Result<Array> {
            let mut start = vec![0i64; x.ndim()];
            let mut stop: Vec<i64> = x.shape().iter().map(|&d| d as i64).collect();
            start[self.axis] = k as i64;
            stop[self.axis] = k as i64 + 1;
            slice(&order, &start, &stop, &vec![1; x.ndim()])
        };
        let mut line = vec![1i64; x.ndim()];
        line[self.axis] = n as i64;
        let positions = reshape(&arange(0.0, n as f64, 1.0, DType::UInt32)?, &line)?;
        let dtype = x.dtype().to_inexact();
        let lower = astype(&equal(&positions, &at((n - 1) / 2)?)?, dtype)?;
        let upper = astype(&equal(&positions, &at(n / 2)?)?, dtype)?;
        multiply(&crate::ops::binary::add(&lower, &upper)?, 0.5)
    }
}

/// Records the median of `rows` along `axis`, which is removed.
fn record_median(rows: &Array, axis: usize) -> Array {
    Array::from_op(
        Median { axis },
        vec![rows.clone()],
        reduced_shape(rows.shape(), &[axis], false),
        rows.dtype().to_inexact(),
    )
}

/// Normalises one axis; out of range is an axis error.
fn resolve_axis(op: &str, axis: i32, ndim: usize) -> Result<usize> {
    axis_in_range(axis, ndim).ok_or_else(|| {
        Error::axis(format!(
            "[{op}] Invalid axis {axis} for array with {ndim} dimensions."
        ))
    })
}

/// Normalised, sorted axes; duplicates (also after normalisation) are a `ValueError`.
pub(super) fn resolve_axes(op: &str, axes: &Axes, ndim: usize) -> Result<Vec<usize>> {
    let list = match axes {
        Axes::All => return Ok((0..ndim).collect()),
        Axes::List(list) => list,
    };
    let mut out = list
        .iter()
        .map(|&a| resolve_axis(op, a, ndim))
        .collect::<Result<Vec<_>>>()?;
    out.sort_unstable();
    if out.windows(2).any(|w| w[0] == w[1]) {
        return Err(Error::value(format!(
            "[{op}] Duplicate axes detected in reduction: {list:?}."
        )));
    }
    Ok(out)
}

/// `shape` with `axes` removed, or set to 1 with `keepdims`.
fn reduced_shape(shape: &[usize], axes: &[usize], keepdims: bool) -> Vec<usize> {
    shape
        .iter()
        .enumerate()
        .filter_map(|(d, &n)| match (axes.contains(&d), keepdims) {
            (false, _) => Some(n),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect()
}

/// Number of elements each output element of a reduction over `axes` combines.
fn reduced_count(shape: &[usize], axes: &[usize]) -> usize {
    axes.iter().map(|&d| shape[d]).product()
}

/// Records a `Reduce` node producing `dtype`.
fn record(op: ReduceOp, a: &Array, axes: &[usize], keepdims: bool, dtype: DType) -> Array {
    Array::from_op(
        Reduce {
            op,
            axes: axes.to_vec(),
            keepdims,
            dtype,
        },
        vec![a.clone()],
        reduced_shape(a.shape(), axes, keepdims),
        dtype,
    )
}

/// The dtype sums accumulate in for a floating result: float32 for half types.
fn accumulation_dtype(dtype: DType) -> DType {
    match dtype {
        DType::Float16 | DType::BFloat16 => DType::Float32,
        other => other,
    }
}

/// Checks and records `op`. An explicit empty axis list returns `a` unchanged for the
/// arithmetic reductions, as MLX does.
fn reduction(op: ReduceOp, a: &Array, axes: Axes, keepdims: bool) -> Result<Array> {
    let name = op.name();
    let axes_list = resolve_axes(name, &axes, a.ndim())?;
    if axes == Axes::List(vec![]) && !matches!(op, ReduceOp::All | ReduceOp::Any) {
        return Ok(a.clone());
    }
    if matches!(op, ReduceOp::Max | ReduceOp::Min) {
        if let Some(&axis) = axes_list.iter().find(|&&d| a.shape()[d] == 0) {
            return Err(Error::value(format!(
                "[{name}] Cannot {name} reduce over axis {axis} with size 0."
            )));
        }
    }
    let dtype = op.output_dtype(a.dtype());
    Ok(record(op, a, &axes_list, keepdims, dtype))
}

/// Sum over `axes` (`Axes::All` for every axis); bool, int8 and int16 sum to int32,
/// uint8 and uint16 to uint32 (integers wrap on overflow). Empty sums are 0.
///
/// ```
/// use lazulite::{sum, Array, Axes, DType};
/// let a = Array::from_slice(&[1i8, 2, 3, 4, 5, 6], &[2, 3]).unwrap();
/// let s = sum(&a, 1, false).unwrap();
/// assert_eq!((s.dtype(), s.to_vec::<i32>().unwrap()), (DType::Int32, vec![6, 15]));
/// assert_eq!(sum(&a, Axes::All, true).unwrap().shape(), &[1, 1]);
/// ```
pub fn sum(a: &Array, axes: impl Into<Axes>, keepdims: bool) -> Result<Array> {
    reduction(ReduceOp::Sum, a, axes.into(), keepdims)
}

/// Product over `axes`; result dtypes as for [`sum`]. Empty products are 1.
///
/// ```
/// let a = lazulite::Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
/// let p = lazulite::prod(&a, 0, false).unwrap();
/// assert_eq!(p.to_vec::<f32>().unwrap(), vec![3.0, 8.0]);
/// ```
pub fn prod(a: &Array, axes: impl Into<Axes>, keepdims: bool) -> Result<Array> {
    reduction(ReduceOp::Prod, a, axes.into(), keepdims)
}

/// Maximum over `axes` (NaN propagates; complex values order by real, then imaginary
/// part). Reducing an axis of size 0 is an error.
///
/// ```
/// use lazulite::{max, Array, Axes};
/// let a = Array::from_slice(&[1.0f32, 5.0, f32::NAN, 2.0], &[2, 2]).unwrap();
/// let m = max(&a, -1, false).unwrap().to_vec::<f32>().unwrap();
/// assert_eq!(m[0], 5.0);
/// assert!(m[1].is_nan());
/// assert!(max(&Array::from_slice::<f32>(&[], &[0]).unwrap(), Axes::All, false).is_err());
/// ```
pub fn max(a: &Array, axes: impl Into<Axes>, keepdims: bool) -> Result<Array> {
    reduction(ReduceOp::Max, a, axes.into(), keepdims)
}

/// Minimum over `axes` (NaN propagates). Reducing an axis of size 0 is an error.
///
/// ```
/// let a = lazulite::Array::from_slice(&[3i32, 1, 2], &[3]).unwrap();
/// assert_eq!(lazulite::min(&a, lazulite::Axes::All, false).unwrap().item::<i32>().unwrap(), 1);
/// ```
pub fn min(a: &Array, axes: impl Into<Axes>, keepdims: bool) -> Result<Array> {
    reduction(ReduceOp::Min, a, axes.into(), keepdims)
}

/// Whether every element over `axes` is nonzero (NaN counts as nonzero); bool result.
///
/// ```
/// let a = lazulite::Array::from_slice(&[1i32, 0, 2, 3], &[2, 2]).unwrap();
/// assert_eq!(lazulite::all(&a, 1, false).unwrap().to_vec::<bool>().unwrap(), vec![false, true]);
/// ```
pub fn all(a: &Array, axes: impl Into<Axes>, keepdims: bool) -> Result<Array> {
    reduction(ReduceOp::All, a, axes.into(), keepdims)
}

/// Whether any element over `axes` is nonzero; bool result.
///
/// ```
/// let a = lazulite::Array::from_slice(&[0.0f32, 0.0, 0.5, 0.0], &[2, 2]).unwrap();
/// assert_eq!(lazulite::any(&a, 1, false).unwrap().to_vec::<bool>().unwrap(), vec![false, true]);
/// ```
pub fn any(a: &Array, axes: impl Into<Axes>, keepdims: bool) -> Result<Array> {
    reduction(ReduceOp::Any, a, axes.into(), keepdims)
}

fn arg_reduction(op: ArgReduceOp, a: &Array, axis: Option<i32>, keepdims: bool) -> Result<Array> {
    let name = op.name();
    let (x, axis, flattened) = match axis {
        None => (reshape(a, &[a.size() as i64])?, 0, true),
        Some(axis) => (a.clone(), resolve_axis(name, axis, a.ndim())?, false),
    };
    if a.size() == 0 {
        return Err(Error::value(format!(
            "[{name}] Cannot {name} reduce zero size array."
        )));
    }
    if x.shape()[axis] > u32::MAX as usize {
        return Err(Error::value(format!(
            "[{name}] Axis {axis} has {} elements; positions past 2^32 do not fit the uint32 result.",
            x.shape()[axis]
        )));
    }
    let positions = ArgReduce {
        op,
        axis,
        keepdims: keepdims && !flattened,
    }
    .record(&x);
    if flattened && keepdims {
        return reshape(&positions, &vec![1; a.ndim()]);
    }
    Ok(positions)
}

/// Position (uint32) of the first maximum along `axis`, or in the flattened array for
/// `None`. A NaN counts as the maximum (the first NaN wins). Empty arrays are an error.
///
/// ```
/// let a = lazulite::Array::from_slice(&[1.0f32, 3.0, 3.0, 0.0], &[2, 2]).unwrap();
/// assert_eq!(lazulite::argmax(&a, Some(1), false).unwrap().to_vec::<u32>().unwrap(), vec![1, 0]);
/// assert_eq!(lazulite::argmax(&a, None, false).unwrap().item::<u32>().unwrap(), 1);
/// ```
pub fn argmax(a: &Array, axis: Option<i32>, keepdims: bool) -> Result<Array> {
    arg_reduction(ArgReduceOp::ArgMax, a, axis, keepdims)
}

/// Position (uint32) of the first minimum along `axis` (flattened for `None`); a NaN
/// counts as the minimum.
///
/// ```
/// let a = lazulite::Array::from_slice(&[2i32, 1, 1], &[3]).unwrap();
/// assert_eq!(lazulite::argmin(&a, Some(0), false).unwrap().item::<u32>().unwrap(), 1);
/// ```
pub fn argmin(a: &Array, axis: Option<i32>, keepdims: bool) -> Result<Array> {
    arg_reduction(ArgReduceOp::ArgMin, a, axis, keepdims)
}

/// Mean over `axes`: float32 for integer and bool inputs, the input dtype otherwise.
/// The mean of nothing is NaN. Half inputs are summed in float32 and rounded once.
///
/// ```
/// use lazulite::{mean, Array, DType};
/// let a = Array::from_slice(&[1i32, 2, 3, 4], &[2, 2]).unwrap();
/// let m = mean(&a, 0, false).unwrap();
/// assert_eq!((m.dtype(), m.to_vec::<f32>().unwrap()), (DType::Float32, vec![2.0, 3.0]));
/// let big = lazulite::ones(&[70000], DType::Float16).unwrap();
/// assert_eq!(mean(&big, lazulite::Axes::All, false).unwrap().item::<f32>().unwrap(), 1.0);
/// ```
pub fn mean(a: &Array, axes: impl Into<Axes>, keepdims: bool) -> Result<Array> {
    let axes = resolve_axes("mean", &axes.into(), a.ndim())?;
    let out = a.dtype().to_inexact();
    let total = record(ReduceOp::Sum, a, &axes, keepdims, accumulation_dtype(out));
    if crate::ops::trace::in_shapeless_trace() {
        let inverse = number_of_elements(a, &axes, true, total.dtype());
        return astype(&multiply(&total, &inverse)?, out);
    }
    let count = reduced_count(a.shape(), &axes) as f64;
    if crate::ops::trace::in_export_trace() {
        // As MLX records a mean: the sum times the inverse count.
        let inverse = scalar_array("mean", Scalar::Float(1.0 / count), total.dtype())?;
        return astype(&multiply(&total, &inverse)?, out);
    }
    astype(&divide(&total, count)?, out)
}

/// The count of elements of `a` over `axes` (or its inverse), as a 0-d array of `dtype`
/// computed from `a`'s shape when evaluated: how a shapeless trace records the divisor
/// of a mean, so that a replay at other shapes divides by the new count.
fn number_of_elements(a: &Array, axes: &[usize], inverted: bool, dtype: DType) -> Array {
    let primitive = NumberOfElements {
        axes: axes.to_vec(),
        inverted,
        dtype,
    };
    Array::from_op(primitive, vec![a.clone()], vec![], dtype)
}

/// MLX's `NumberOfElements`: see [`number_of_elements`].
struct NumberOfElements {
    axes: Vec<usize>,
    inverted: bool,
    dtype: DType,
}

impl Primitive for NumberOfElements {
    fn name(&self) -> &'static str {
        "number_of_elements"
    }

    fn params(&self) -> String {
        format!("axes={:?}, inverted={}", self.axes, self.inverted)
    }

    fn output_shapes(&self, _: &[OutputSpec]) -> Result<Vec<Vec<usize>>> {
        Ok(vec![vec![]])
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        let state = vec![
            mlx_ints("number_of_elements", &self.axes)?,
            MlxState::Bool(self.inverted),
            MlxState::Dtype(self.dtype),
        ];
        MlxNode::single("NumberOfElements", state, inputs, outputs)
    }

    fn eval(&self, inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let n = reduced_count(&inputs[0].shape, &self.axes) as f64;
        let value = if self.inverted { 1.0 / n } else { n };
        let scalar = Tensor::from_slice(&[value], &[])?;
        crate::ops::cast::AsType(self.dtype).eval(vec![scalar], &[])
    }

    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        _: &[Array],
        argnums: &[usize],
    ) -> Result<Vec<Array>> {
        argnums.iter().map(|&i| zeros_like(&inputs[i])).collect()
    }

    fn jvp(&self, _: &[Array], _: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        Ok(vec![zeros(&[], self.dtype)?])
    }

    /// Every example has the same count, so the result is not batched.
    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let Some(axis) = axes[0] else {
            return Ok((
                vec![number_of_elements(
                    &inputs[0],
                    &self.axes,
                    self.inverted,
                    self.dtype,
                )],
                vec![None],
            ));
        };
        let x = batch_to_front(&inputs[0], Some(axis))?;
        let shifted: Vec<usize> = self.axes.iter().map(|&a| a + 1).collect();
        Ok((
            vec![number_of_elements(&x, &shifted, self.inverted, self.dtype)],
            vec![None],
        ))
    }
}

fn variance(op: &str, a: &Array, axes: Axes, keepdims: bool, ddof: i32) -> Result<Array> {
    let axes = resolve_axes(op, &axes, a.ndim())?;
    let is_complex = a.dtype().is_complex();
    let out = if is_complex {
        DType::Float32
    } else {
        a.dtype().to_inexact()
    };
    let compute = if is_complex {
        DType::Complex64
    } else {
        accumulation_dtype(out)
    };
    let x = astype(a, compute)?;
    let count = reduced_count(a.shape(), &axes);
    let shapeless = crate::ops::trace::in_shapeless_trace();
    let summed = record(ReduceOp::Sum, &x, &axes, true, compute);
    let mu = if shapeless {
        multiply(&summed, number_of_elements(a, &axes, true, compute))?
    } else {
        divide(summed, count as f64)?
    };
    let deviation = subtract(&x, &mu)?;
    let squared = if is_complex {
        square(&abs(&deviation)?)?
    } else {
        square(&deviation)?
    };
    let total = record(ReduceOp::Sum, &squared, &axes, keepdims, squared.dtype());
    // NumPy divides by max(n - ddof, 0): inf (or NaN for a zero sum) when ddof >= n.
    if shapeless {
        let n = number_of_elements(a, &axes, false, total.dtype());
        let divisor = crate::ops::binary::maximum(&subtract(&n, ddof as f64)?, 0.0)?;
        return astype(&divide(&total, &divisor)?, out);
    }
    let divisor = (count as i64 - ddof as i64).max(0) as f64;
    astype(&divide(&total, divisor)?, out)
}

/// Variance over `axes` with `ddof` delta degrees of freedom (divides by `n - ddof`;
/// `ddof >= n` gives inf, or NaN for a zero sum). Float32 for integer, bool and complex
/// inputs (complex: mean squared magnitude of the deviations).
///
/// ```
/// let a = lazulite::Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
/// let v = lazulite::var(&a, lazulite::Axes::All, false, 0).unwrap();
/// assert_eq!(v.item::<f32>().unwrap(), 1.25);
/// ```
pub fn var(a: &Array, axes: impl Into<Axes>, keepdims: bool, ddof: i32) -> Result<Array> {
    variance("var", a, axes.into(), keepdims, ddof)
}

/// Standard deviation: the square root of [`var`].
///
/// ```
/// let a = lazulite::Array::from_slice(&[1.0f64, 3.0], &[2]).unwrap();
/// let s = lazulite::std(&a, 0, false, 1).unwrap();
/// assert!((s.item::<f64>().unwrap() - 2f64.sqrt()).abs() < 1e-15);
/// ```
pub fn std(a: &Array, axes: impl Into<Axes>, keepdims: bool, ddof: i32) -> Result<Array> {
    sqrt(&variance("std", a, axes.into(), keepdims, ddof)?)
}

/// Number of nonzero elements over `axes` (NaN counts as nonzero), as int32.
///
/// ```
/// let a = lazulite::Array::from_slice(&[0i32, 3, 0, 1, 2, 0], &[2, 3]).unwrap();
/// let c = lazulite::count_nonzero(&a, 1, false).unwrap();
/// assert_eq!(c.to_vec::<i32>().unwrap(), vec![1, 2]);
/// ```
pub fn count_nonzero(a: &Array, axes: impl Into<Axes>, keepdims: bool) -> Result<Array> {
    let axes = resolve_axes("count_nonzero", &axes.into(), a.ndim())?;
    let nonzero = astype(a, DType::Bool)?;
    Ok(record(
        ReduceOp::Sum,
        &nonzero,
        &axes,
        keepdims,
        DType::Int32,
    ))
}

/// Median over `axes` (several axes are taken together): float32 for integer and bool
/// inputs, the input dtype otherwise; the mean of the two middle values for an even
/// count; NaN if the slice holds a NaN. Reducing an axis of size 0 is an error.
///
/// ```
/// let a = lazulite::Array::from_slice(&[3i32, 1, 2, 4, 8, 6], &[2, 3]).unwrap();
/// let m = lazulite::median(&a, 1, false).unwrap();
/// assert_eq!(m.to_vec::<f32>().unwrap(), vec![2.0, 6.0]);
/// let all = lazulite::median(&a, lazulite::Axes::All, false).unwrap();
/// assert_eq!(all.item::<f32>().unwrap(), 3.5);
/// ```
pub fn median(a: &Array, axes: impl Into<Axes>, keepdims: bool) -> Result<Array> {
    let axes = resolve_axes("median", &axes.into(), a.ndim())?;
    if axes.iter().any(|&d| a.shape()[d] == 0) {
        return Err(Error::value(
            "[median] Cannot take median along empty axis.",
        ));
    }
    let kept: Vec<usize> = (0..a.ndim()).filter(|d| !axes.contains(d)).collect();
    let order: Vec<i32> = kept.iter().chain(&axes).map(|&d| d as i32).collect();
    let mut rows_shape: Vec<i64> = kept.iter().map(|&d| a.shape()[d] as i64).collect();
    rows_shape.push(reduced_count(a.shape(), &axes) as i64);
    let rows = reshape(&transpose(a, &order)?, &rows_shape)?;
    let out = record_median(&rows, kept.len());
    let shape: Vec<i64> = reduced_shape(a.shape(), &axes, keepdims)
        .iter()
        .map(|&d| d as i64)
        .collect();
    reshape(&out, &shape)
}
