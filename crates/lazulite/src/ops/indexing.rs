//! NumPy-style indexing: the `Gather` and `Scatter` primitives, [`take`],
//! [`take_along_axis`], [`put_along_axis`], the [`Index`] expression (with the [`idx!`](crate::idx!)
//! macro), [`index`], [`index_put`] and [`at`], and the data-dependent ops on masks
//! ([`nonzero`], [`argwhere`], [`unique`]).
//!
//! Unlike MLX, indices are bounds-checked: a static integer out of range is an
//! `IndexError` when the op is recorded, an out-of-range value inside an index array is
//! an `IndexError` from `eval` (the gather/scatter kernel checks each index as it reads
//! it). Boolean masks are supported; since the shape of `a[mask]` depends on the mask's
//! values, the mask is evaluated when the index is recorded (so this cannot run inside
//! `vmap`, which reports it); `a[mask] = scalar` with a full-shape mask is a lazy `where`.

use super::binary::{add, divide, equal, less, maximum, minimum, multiply, subtract};
use super::cast::astype;
use super::creation::{arange, ones, zeros};
use super::operand::{to_arrays, Operand};
use super::scan::cumsum;
use super::ternary::where_;
use super::unary::{negative, reciprocal};
use super::view::{broadcast_to, reshape, slice, slice_update, transpose};
use crate::array::Array;
pub(crate) use crate::backend::cpu::indexing::ScatterMode;
use crate::backend::cpu::indexing::{gather as gather_kernel, scatter as scatter_kernel};
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::element::{dispatch, Complex, Element};
use crate::error::{Error, Result};
use crate::ops::batching::batch_to_front;
use crate::primitive::{mlx_ints, Export, MlxInput, MlxNode, MlxState, OutputSpec, Primitive};
use crate::shape::{broadcast_shapes, checked_size, normalize_axes, normalize_axis};

/// Reads the sub-arrays of input 0 at the integer index arrays (inputs 1..) along `axes`.
/// Output shape: the (common) index shape followed by input 0's other dimensions.
pub(crate) struct Gather {
    pub axes: Vec<usize>,
}

/// Input 0 with the sub-arrays at the index arrays (inputs 1..n-1) along `axes`
/// combined with the updates (last input) by `mode`.
pub(crate) struct Scatter {
    pub axes: Vec<usize>,
    pub mode: ScatterMode,
}

fn as_i64(shape: &[usize]) -> Vec<i64> {
    shape.iter().map(|&d| d as i64).collect()
}

/// Shape of a gather of `a` along `axes` with indices of shape `batch`.
fn gather_shape(a: &[usize], axes: &[usize], batch: &[usize]) -> Vec<usize> {
    let mut shape = batch.to_vec();
    shape.extend((0..a.len()).filter(|d| !axes.contains(d)).map(|d| a[d]));
    shape
}

/// MLX's slice sizes for gathering from `inputs[0]` at `inputs[1..]` along `axes` (1 on
/// each indexed axis), and `gathered` (index shape then the other axes) with those axes
/// kept, as MLX's Gather produces it.
fn mlx_gather_shapes(
    axes: &[usize],
    inputs: &[OutputSpec],
    gathered: &OutputSpec,
) -> (Vec<usize>, OutputSpec) {
    let slice: Vec<usize> = (0..inputs[0].shape.len())
        .map(|d| {
            if axes.contains(&d) {
                1
            } else {
                inputs[0].shape[d]
            }
        })
        .collect();
    let batch = inputs.get(1).map_or(&[][..], |i| &i.shape[..]);
    let shape = batch.iter().chain(&slice).copied().collect();
    let full = OutputSpec {
        shape,
        dtype: gathered.dtype,
    };
    (slice, full)
}

/// The index inputs (inputs `1..`) as MLX's Gather and Scatter read them: MLX reads every
/// index array as the dtype of the first, so indices of mixed dtypes are cast to int64
/// first. Returns the casts and the index inputs to use.
fn mlx_indices(indices: &[OutputSpec]) -> (Vec<MlxNode>, Vec<MlxInput>) {
    let same = indices.windows(2).all(|w| w[0].dtype == w[1].dtype);
    let mut casts = vec![];
    let mut refs = vec![];
    for (i, spec) in indices.iter().enumerate() {
        if same || spec.dtype == DType::Int64 {
            refs.push(MlxInput::Input(i + 1));
            continue;
        }
        let cast = OutputSpec {
            shape: spec.shape.clone(),
            dtype: DType::Int64,
        };
        let state = vec![MlxState::Dtype(DType::Int64)];
        casts.push(MlxNode::new(
            "AsType",
            state,
            vec![MlxInput::Input(i + 1)],
            cast,
        ));
        refs.push(MlxInput::Node(casts.len() - 1));
    }
    (casts, refs)
}

/// Index arrays checked (integer dtype) and broadcast to one shape, which is returned.
fn broadcast_indices(op: &str, indices: &[Array]) -> Result<(Vec<Array>, Vec<usize>)> {
    let mut batch: Vec<usize> = vec![];
    for idx in indices {
        if !idx.dtype().is_integer() {
            return Err(Error::value(format!(
                "[{op}] Got indices with invalid dtype {}. Indices must be integral.",
                idx.dtype()
            )));
        }
        batch = broadcast_shapes(&batch, idx.shape()).map_err(|_| {
            Error::index(format!(
                "[{op}] Shape mismatch: indexing arrays could not be broadcast together with \
                 shapes {:?}.",
                indices
                    .iter()
                    .map(|i| i.shape().to_vec())
                    .collect::<Vec<_>>()
            ))
        })?;
    }
    checked_size(&batch)?;
    let indices = indices
        .iter()
        .map(|i| broadcast_to(i, &batch))
        .collect::<Result<Vec<_>>>()?;
    Ok((indices, batch))
}

/// Records a gather of `a` along the distinct `axes` at `indices` (one per axis).
pub(crate) fn gather(a: &Array, indices: &[Array], axes: &[usize]) -> Result<Array> {
    let (indices, batch) = broadcast_indices("gather", indices)?;
    let shape = gather_shape(a.shape(), axes, &batch);
    checked_size(&shape)?;
    let mut inputs = vec![a.clone()];
    inputs.extend(indices);
    Ok(Array::from_op(
        Gather {
            axes: axes.to_vec(),
        },
        inputs,
        shape,
        a.dtype(),
    ))
}

/// Records a scatter into `a` along the distinct `axes` at `indices`; `updates` is cast to
/// `a`'s dtype and broadcast to the gathered shape.
pub(crate) fn scatter(
    a: &Array,
    indices: &[Array],
    updates: &Array,
    axes: &[usize],
    mode: ScatterMode,
) -> Result<Array> {
    let op = mode.name();
    let (indices, batch) = broadcast_indices(op, indices)?;
    let target = gather_shape(a.shape(), axes, &batch);
    let updates = broadcast_to(&astype(updates, a.dtype())?, &target).map_err(|_| {
        Error::value(format!(
            "[{op}] Cannot broadcast updates of shape {:?} to the indexed shape {target:?}.",
            updates.shape()
        ))
    })?;
    let mut inputs = vec![a.clone()];
    inputs.extend(indices);
    inputs.push(updates);
    Ok(Array::from_op(
        Scatter {
            axes: axes.to_vec(),
            mode,
        },
        inputs,
        a.shape().to_vec(),
        a.dtype(),
    ))
}

/// The batch size of a vmap call from its batched inputs.
fn batch_size(inputs: &[Array], axes: &[Option<usize>]) -> usize {
    inputs
        .iter()
        .zip(axes)
        .find_map(|(x, ax)| ax.map(|ax| x.shape()[ax]))
        .expect("vmap calls this rule with a batched input")
}

/// `x` with its batch axis first and of size `n` (broadcast when `x` is not batched).
fn batched_front(x: &Array, axis: Option<usize>, n: usize) -> Result<Array> {
    if axis.is_some() {
        return batch_to_front(x, axis);
    }
    let mut shape = vec![n];
    shape.extend(x.shape());
    broadcast_to(&reshape(x, &as_i64(&[&[1], x.shape()].concat()))?, &shape)
}

/// The index arrays of a batched gather/scatter: each with the batch first, plus an
/// index for the batch axis of the (batched) data, all of shape `[n] ++ index shape`,
/// and the axes they address in the batched data.
fn batched_indices(
    indices: &[Array],
    axes: &[Option<usize>],
    prim_axes: &[usize],
    n: usize,
) -> Result<(Vec<Array>, Vec<usize>)> {
    // The per-example index shape (all indices share it when recorded).
    let batch = indices.first().map_or(vec![], |i| {
        let mut shape = i.shape().to_vec();
        if let Some(ax) = axes[0] {
            shape.remove(ax);
        }
        shape
    });
    let mut out = vec![reshape(
        &arange(0.0, n as f64, 1.0, DType::Int32)?,
        &as_i64(&[&[n], &vec![1; batch.len()][..]].concat()),
    )?];
    for (i, ax) in indices.iter().zip(axes) {
        out.push(batched_front(i, *ax, n)?);
    }
    let mut shape = vec![n];
    shape.extend(&batch);
    let out = out
        .iter()
        .map(|i| broadcast_to(i, &shape))
        .collect::<Result<Vec<_>>>()?;
    let axes = std::iter::once(0)
        .chain(prim_axes.iter().map(|a| a + 1))
        .collect();
    Ok((out, axes))
}

/// Zero cotangents for integer index inputs.
fn zero_like(x: &Array) -> Result<Array> {
    zeros(x.shape(), x.dtype())
}

impl Primitive for Gather {
    fn name(&self) -> &'static str {
        "gather"
    }

    fn output_shapes(&self, inputs: &[OutputSpec]) -> Result<Vec<Vec<usize>>> {
        // The index arrays were broadcast together when recorded; whole slices of the
        // other axes are read, so their sizes follow input 0.
        let batch = &inputs[1].shape;
        if inputs[1..].iter().any(|i| &i.shape != batch) {
            return Err(crate::primitive::cannot_infer("gather"));
        }
        Ok(vec![gather_shape(&inputs[0].shape, &self.axes, batch)])
    }

    fn params(&self) -> String {
        format!("axes={:?}", self.axes)
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        // MLX's Gather keeps a size-1 axis for each indexed axis.
        let (slice, full) = mlx_gather_shapes(&self.axes, inputs, &outputs[0]);
        let batch = inputs[1].shape.len();
        let squeezed: Vec<usize> = self.axes.iter().map(|a| batch + a).collect();
        let (mut nodes, indices) = mlx_indices(&inputs[1..]);
        let mut args = vec![MlxInput::Input(0)];
        args.extend(indices);
        let state = vec![mlx_ints("gather", &self.axes)?, mlx_ints("gather", &slice)?];
        nodes.push(MlxNode::new("Gather", state, args, full));
        let squeeze = vec![mlx_ints("gather", &squeezed)?];
        let last = MlxInput::Node(nodes.len() - 1);
        nodes.push(MlxNode::new(
            "Squeeze",
            squeeze,
            vec![last],
            outputs[0].clone(),
        ));
        Ok(Export::Nodes(nodes))
    }

    fn eval(&self, inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        Ok(vec![gather_kernel(&inputs[0], &inputs[1..], &self.axes)?])
    }

    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        cotangents: &[Array],
        argnums: &[usize],
    ) -> Result<Vec<Array>> {
        let g = &cotangents[0];
        argnums
            .iter()
            .map(|&i| {
                if i == 0 {
                    let base = zeros(inputs[0].shape(), g.dtype())?;
                    scatter(&base, &inputs[1..], g, &self.axes, ScatterMode::Add)
                } else {
                    zero_like(&inputs[i])
                }
            })
            .collect()
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], argnums: &[usize]) -> Result<Vec<Array>> {
        match argnums.iter().position(|&a| a == 0) {
            Some(k) => Ok(vec![gather(&tangents[k], &inputs[1..], &self.axes)?]),
            None => {
                let shape = gather_shape(inputs[0].shape(), &self.axes, inputs[1].shape());
                Ok(vec![zeros(&shape, inputs[0].dtype())?])
            }
        }
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let n = batch_size(inputs, axes);
        let (mut indices, mut prim_axes) =
            batched_indices(&inputs[1..], &axes[1..], &self.axes, n)?;
        let a = if axes[0].is_some() {
            batch_to_front(&inputs[0], axes[0])?
        } else {
            // Unbatched data: drop the batch-axis index, keep the batched ones.
            indices.remove(0);
            prim_axes = self.axes.clone();
            inputs[0].clone()
        };
        Ok((vec![gather(&a, &indices, &prim_axes)?], vec![Some(0)]))
    }
}

impl Primitive for Scatter {
    fn name(&self) -> &'static str {
        self.mode.name()
    }

    fn params(&self) -> String {
        format!("axes={:?}", self.axes)
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        // MLX's `Scatter::ReduceType` is `{Max, Min, Sum, Prod, None}`; its updates keep a
        // size-1 axis for each indexed axis.
        let kind = match self.mode {
            ScatterMode::Maximum => 0,
            ScatterMode::Minimum => 1,
            ScatterMode::Add => 2,
            ScatterMode::Multiply => 3,
            ScatterMode::Assign => 4,
        };
        let n = inputs.len();
        let (_, full) = mlx_gather_shapes(&self.axes, &inputs[..n - 1], &inputs[n - 1]);
        let (mut nodes, indices) = mlx_indices(&inputs[1..n - 1]);
        let mut args = vec![MlxInput::Input(0)];
        args.extend(indices);
        let shape = vec![mlx_ints("scatter", &full.shape)?];
        nodes.push(MlxNode::new(
            "Reshape",
            shape,
            vec![MlxInput::Input(n - 1)],
            full,
        ));
        args.push(MlxInput::Node(nodes.len() - 1));
        let state = vec![MlxState::Int(kind), mlx_ints("scatter", &self.axes)?];
        nodes.push(MlxNode::new("Scatter", state, args, outputs[0].clone()));
        Ok(Export::Nodes(nodes))
    }

    fn eval(&self, mut inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let updates = inputs.pop().expect("updates");
        let dst = inputs.remove(0);
        Ok(vec![scatter_kernel(
            dst, &inputs, &updates, &self.axes, self.mode,
        )?])
    }

    fn vjp(
        &self,
        inputs: &[Array],
        outputs: &[Array],
        cotangents: &[Array],
        argnums: &[usize],
    ) -> Result<Vec<Array>> {
        let g = &cotangents[0];
        let last = inputs.len() - 1;
        let (a, indices, updates) = (&inputs[0], &inputs[1..last], &inputs[last]);
        let gather_g = || gather(g, indices, &self.axes);
        let product = match self.mode {
            ScatterMode::Multiply => Some(ScatterProduct::new(self, a, indices, updates)?),
            _ => None,
        };
        argnums
            .iter()
            .map(|&i| {
                match (i == 0, i == last, self.mode) {
                    (true, _, ScatterMode::Assign) => {
                        let hole = zeros(&[], g.dtype())?;
                        scatter(g, indices, &hole, &self.axes, ScatterMode::Assign)
                    }
                    (true, _, ScatterMode::Add) => Ok(g.clone()),
                    (true, _, ScatterMode::Multiply) => {
                        multiply(g, &product.as_ref().expect("multiply").updates_product)
                    }
                    // As MLX: every value equal to the result (the original and any tied
                    // updates) receives the whole cotangent.
                    (true, _, ScatterMode::Maximum | ScatterMode::Minimum) => {
                        multiply(g, &equal(&outputs[0], a)?)
                    }
                    (_, true, ScatterMode::Assign | ScatterMode::Add) => gather_g(),
                    (_, true, ScatterMode::Multiply) => {
                        let p = product.as_ref().expect("multiply");
                        let scaled = gather(&multiply(g, a)?, indices, &self.axes)?;
                        multiply(&scaled, &p.others)
                    }
                    (_, true, ScatterMode::Maximum | ScatterMode::Minimum) => {
                        let won = equal(&gather(&outputs[0], indices, &self.axes)?, updates)?;
                        multiply(&gather_g()?, &won)
                    }
                    _ => return zero_like(&inputs[i]),
                }
                .and_then(|d| astype(&d, g.dtype()))
            })
            .collect()
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], argnums: &[usize]) -> Result<Vec<Array>> {
        let last = inputs.len() - 1;
        let (a, indices, updates) = (&inputs[0], &inputs[1..last], &inputs[last]);
        let tangent = |i: usize| match argnums.iter().position(|&a| a == i) {
            Some(k) => Ok(tangents[k].clone()),
            None => zeros(inputs[i].shape(), inputs[i].dtype()),
        };
        let (ta, tu) = (tangent(0)?, tangent(last)?);
        let out = match self.mode {
            ScatterMode::Assign | ScatterMode::Add => {
                scatter(&ta, indices, &tu, &self.axes, self.mode)?
            }
            ScatterMode::Multiply => {
                let p = ScatterProduct::new(self, a, indices, updates)?;
                let scale = multiply(&gather(a, indices, &self.axes)?, &p.others)?;
                let from_updates = multiply(&tu, &scale)?;
                let from_a = multiply(&ta, &p.updates_product)?;
                scatter(
                    &from_a,
                    indices,
                    &from_updates,
                    &self.axes,
                    ScatterMode::Add,
                )?
            }
            ScatterMode::Maximum | ScatterMode::Minimum => {
                // The transpose of the vjp: every winner contributes its tangent.
                let result = scatter(a, indices, updates, &self.axes, self.mode)?;
                let won = equal(&gather(&result, indices, &self.axes)?, updates)?;
                let from_a = multiply(&ta, &equal(&result, a)?)?;
                let from_updates = multiply(&tu, &won)?;
                scatter(
                    &from_a,
                    indices,
                    &from_updates,
                    &self.axes,
                    ScatterMode::Add,
                )?
            }
        };
        Ok(vec![astype(&out, a.dtype())?])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let n = batch_size(inputs, axes);
        let last = inputs.len() - 1;
        let a = batched_front(&inputs[0], axes[0], n)?;
        let (indices, prim_axes) =
            batched_indices(&inputs[1..last], &axes[1..last], &self.axes, n)?;
        let updates = batched_front(&inputs[last], axes[last], n)?;
        Ok((
            vec![scatter(&a, &indices, &updates, &prim_axes, self.mode)?],
            vec![Some(0)],
        ))
    }
}

/// For the derivatives of a multiplying scatter, `r[p] = a[p] * (product of the updates
/// landing on p)`; zeros among the updates are handled exactly (no division by them).
struct ScatterProduct {
    /// The product of the updates landing on each position of `a` (1 where none does):
    /// `d r[p] / d a[p]`.
    updates_product: Array,
    /// For each update, the product of the other updates landing on its position:
    /// `d r[p] / d u_k` divided by `a[p]`.
    others: Array,
}

impl ScatterProduct {
    fn new(s: &Scatter, a: &Array, indices: &[Array], updates: &Array) -> Result<Self> {
        let dtype = a.dtype();
        let ones = ones(a.shape(), dtype)?;
        let is_zero = equal(updates, 0.0)?;
        let safe = where_(&is_zero, 1.0, updates)?;
        let on_each = |values: &Array, mode| scatter(&ones, indices, values, &s.axes, mode);
        let updates_product = on_each(updates, ScatterMode::Multiply)?;
        let nonzero_product = on_each(&safe, ScatterMode::Multiply)?;
        // Zeros landing on each position (a scatter-add onto ones, minus that one).
        let zero_count = subtract(&on_each(&is_zero, ScatterMode::Add)?, 1.0)?;
        let at_update = |x: &Array| gather(x, indices, &s.axes);
        // A nonzero update's partners multiply to nonzero_product / u when no zero lands
        // there, else 0; a zero update's partners multiply to nonzero_product when it is
        // the only zero there, else 0.
        let lone_zero = at_update(&equal(&zero_count, 1.0)?)?;
        let no_zero = at_update(&equal(&zero_count, 0.0)?)?;
        let factor = where_(&is_zero, &lone_zero, &divide(&no_zero, &safe)?)?;
        let others = multiply(&at_update(&nonzero_product)?, &factor)?;
        Ok(ScatterProduct {
            updates_product,
            others,
        })
    }
}

/// One entry of a NumPy-style index expression (see [`index`]).
///
/// Build entries with `From` (`3`, `-1`, `..`, `1..5`, `..=4`, an integer [`Array`], a
/// bool [`Array`] as a mask), [`Index::slice`] for steps, or all at once with [`idx!`](crate::idx!).
///
/// ```
/// use lazulite::{Array, Index};
/// let e: Vec<Index> = vec![1.into(), (..).into(), Index::slice(None, None, Some(-1)), Index::NewAxis];
/// assert_eq!(e.len(), 4);
/// ```
#[derive(Clone, Debug)]
pub enum Index {
    /// One position; removes the axis. Negative counts from the end.
    Int(i64),
    /// `start:stop:step` with Python's defaults and clamping; keeps the axis (a view).
    Slice {
        /// First position (default: the start, or the end for a negative step).
        start: Option<i64>,
        /// Position to stop before (default: past the last position).
        stop: Option<i64>,
        /// Stride between positions (default 1; negative walks backwards).
        step: Option<i64>,
    },
    /// A new axis of length 1 (`None` / `np.newaxis`).
    NewAxis,
    /// As many full slices as the other entries leave (`...`).
    Ellipsis,
    /// An integer array: advanced indexing (a copy, by gather).
    Array(Array),
    /// A bool array over as many axes as it has dimensions: selects the true positions.
    Mask(Array),
}

impl Index {
    /// `start:stop:step`, each optional as in Python.
    ///
    /// ```
    /// use lazulite::{arange, index, DType, Index};
    /// let a = arange(0.0, 10.0, 1.0, DType::Int32).unwrap();
    /// let r = index(&a, &[Index::slice(Some(2), Some(8), Some(2))]).unwrap();
    /// assert_eq!(r.to_vec::<i32>().unwrap(), vec![2, 4, 6]);
    /// ```
    pub fn slice(start: Option<i64>, stop: Option<i64>, step: Option<i64>) -> Index {
        Index::Slice { start, stop, step }
    }

    /// This entry (a range or full slice) with a step; for [`idx!`](crate::idx!)'s `range;step`.
    ///
    /// ```
    /// use lazulite::Index;
    /// assert!(matches!(Index::from(1..).step(2), Index::Slice { step: Some(2), .. }));
    /// ```
    pub fn step(self, step: i64) -> Index {
        match self {
            Index::Slice { start, stop, .. } => Index::Slice {
                start,
                stop,
                step: Some(step),
            },
            other => other,
        }
    }
}

impl From<i64> for Index {
    fn from(i: i64) -> Index {
        Index::Int(i)
    }
}
impl From<std::ops::RangeFull> for Index {
    fn from(_: std::ops::RangeFull) -> Index {
        Index::slice(None, None, None)
    }
}
impl From<std::ops::Range<i64>> for Index {
    fn from(r: std::ops::Range<i64>) -> Index {
        Index::slice(Some(r.start), Some(r.end), None)
    }
}
impl From<std::ops::RangeFrom<i64>> for Index {
    fn from(r: std::ops::RangeFrom<i64>) -> Index {
        Index::slice(Some(r.start), None, None)
    }
}
impl From<std::ops::RangeTo<i64>> for Index {
    fn from(r: std::ops::RangeTo<i64>) -> Index {
        Index::slice(None, Some(r.end), None)
    }
}
impl From<std::ops::RangeInclusive<i64>> for Index {
    fn from(r: std::ops::RangeInclusive<i64>) -> Index {
        let end = *r.end();
        Index::slice(Some(*r.start()), (end != -1).then_some(end + 1), None)
    }
}
impl From<std::ops::RangeToInclusive<i64>> for Index {
    fn from(r: std::ops::RangeToInclusive<i64>) -> Index {
        Index::slice(None, (r.end != -1).then_some(r.end + 1), None)
    }
}
/// A bool array becomes a mask, any other an integer-array index.
impl From<Array> for Index {
    fn from(a: Array) -> Index {
        if a.dtype() == DType::Bool {
            Index::Mask(a)
        } else {
            Index::Array(a)
        }
    }
}
impl From<&Array> for Index {
    fn from(a: &Array) -> Index {
        Index::from(a.clone())
    }
}

/// Builds an array of [`Index`] (pass it as `&idx![...]`) that reads like a NumPy index: entries separated by commas,
/// `...` for the ellipsis, `range;step` for a stepped slice (`..;-1` reverses), anything
/// else converted with `Index::from` (integers, ranges, arrays, `Index::NewAxis`).
///
/// ```
/// use lazulite::{arange, idx, index, reshape, DType, Index};
/// let a = reshape(&arange(0.0, 24.0, 1.0, DType::Int32).unwrap(), &[2, 3, 4]).unwrap();
/// // NumPy: a[1, ::-1, 1:4:2]
/// let r = index(&a, &idx![1, ..;-1, 1..4;2]).unwrap();
/// assert_eq!(r.to_vec::<i32>().unwrap(), vec![21, 23, 17, 19, 13, 15]);
/// // NumPy: a[..., None, 0]
/// let r = index(&a, &idx![..., Index::NewAxis, 0]).unwrap();
/// assert_eq!(r.shape(), &[2, 3, 1]);
/// ```
#[macro_export]
macro_rules! idx {
    (@acc [$($out:expr),*]) => { [$($out),*] };
    (@acc [$($out:expr),*] ... $(, $($rest:tt)*)?) => {
        $crate::idx!(@acc [$($out,)* $crate::Index::Ellipsis] $($($rest)*)?)
    };
    (@acc [$($out:expr),*] $e:expr ; $step:expr $(, $($rest:tt)*)?) => {
        $crate::idx!(@acc [$($out,)* $crate::Index::from($e).step($step)] $($($rest)*)?)
    };
    (@acc [$($out:expr),*] $e:expr $(, $($rest:tt)*)?) => {
        $crate::idx!(@acc [$($out,)* $crate::Index::from($e)] $($($rest)*)?)
    };
    ($($all:tt)*) => { $crate::idx!(@acc [] $($all)*) };
}

/// An index entry with the array's axes resolved.
enum Entry {
    /// A position, already wrapped and checked.
    Int(usize),
    /// First index, length and step along the axis.
    Slice(usize, usize, i64),
    NewAxis,
    Array(Array),
}

impl Entry {
    fn consumes_axis(&self) -> bool {
        !matches!(self, Entry::NewAxis)
    }
}

/// The entries of an index expression for an array, and whether its advanced entries
/// (arrays, masks, and integers among them) are separated by an ellipsis that expands
/// to no axis: NumPy then counts them as not adjacent, though no entry lies between.
struct Resolved {
    entries: Vec<Entry>,
    split_by_ellipsis: bool,
}

/// Whether an ellipsis expanding to no axis sits between advanced entries of `indices`.
fn empty_ellipsis_splits(indices: &[Index], ellipsis_len: usize) -> bool {
    let arrays = indices
        .iter()
        .any(|i| matches!(i, Index::Array(_) | Index::Mask(_)));
    let advanced = |i: &Index| {
        matches!(i, Index::Array(_) | Index::Mask(_)) || (arrays && matches!(i, Index::Int(_)))
    };
    let Some(e) = indices.iter().position(|i| matches!(i, Index::Ellipsis)) else {
        return false;
    };
    ellipsis_len == 0 && indices[..e].iter().any(advanced) && indices[e..].iter().any(advanced)
}

/// The entries of `indices` for `a`: the ellipsis (or the missing tail) expanded into
/// full slices, masks turned into integer arrays (evaluating them), integers checked.
fn resolve(op: &str, a: &Array, indices: &[Index]) -> Result<Resolved> {
    let consumed: usize = indices
        .iter()
        .map(|i| match i {
            Index::NewAxis | Index::Ellipsis => 0,
            Index::Mask(m) => m.ndim(),
            _ => 1,
        })
        .sum();
    let ndim = a.ndim();
    if consumed > ndim {
        return Err(Error::index(format!(
            "[{op}] Too many indices for array with {ndim} dimensions."
        )));
    }
    if indices
        .iter()
        .filter(|i| matches!(i, Index::Ellipsis))
        .count()
        > 1
    {
        return Err(Error::index(format!(
            "[{op}] An index can only have a single ellipsis (...)."
        )));
    }
    let full = |n: usize| Entry::Slice(0, n, 1);
    let mut out = Vec::with_capacity(ndim + indices.len());
    let mut axis = 0;
    for entry in indices {
        match entry {
            Index::Int(i) => {
                let n = a.shape()[axis] as i64;
                if *i < -n || *i >= n {
                    return Err(Error::index(format!(
                        "[{op}] Index {i} is out of bounds for axis {axis} with size {n}."
                    )));
                }
                out.push(Entry::Int(if *i < 0 { i + n } else { *i } as usize));
                axis += 1;
            }
            Index::Slice { start, stop, step } => {
                let n = a.shape()[axis];
                let step = step.unwrap_or(1);
                if step == 0 {
                    return Err(Error::value(format!("[{op}] Slice step cannot be zero.")));
                }
                let (start, stop) = slice_ends(*start, *stop, step);
                let (first, len) = super::view::slice_bounds(n, start, stop, step)?;
                out.push(Entry::Slice(first, len, step));
                axis += 1;
            }
            Index::NewAxis => out.push(Entry::NewAxis),
            Index::Ellipsis => {
                for _ in 0..ndim - consumed {
                    out.push(full(a.shape()[axis]));
                    axis += 1;
                }
            }
            Index::Array(i) => {
                if !i.dtype().is_integer() {
                    return Err(Error::value(format!(
                        "[{op}] Got indices with invalid dtype {}. Indices must be integral.",
                        i.dtype()
                    )));
                }
                out.push(Entry::Array(i.clone()));
                axis += 1;
            }
            Index::Mask(m) => {
                if m.dtype() != DType::Bool {
                    return Err(Error::value(format!(
                        "[{op}] A mask must be a bool array, not {}.",
                        m.dtype()
                    )));
                }
                if m.ndim() == 0 {
                    return Err(Error::value(format!(
                        "[{op}] A 0-d boolean index is not supported; use Index::NewAxis."
                    )));
                }
                for (k, &d) in m.shape().iter().enumerate() {
                    let n = a.shape()[axis + k];
                    if d != n {
                        return Err(Error::index(format!(
                            "[{op}] Boolean index did not match indexed array along axis {}; \
                             size of axis is {n} but size of corresponding boolean axis is {d}.",
                            axis + k
                        )));
                    }
                }
                out.extend(nonzero(m)?.into_iter().map(Entry::Array));
                axis += m.ndim();
            }
        }
    }
    while axis < ndim {
        out.push(full(a.shape()[axis]));
        axis += 1;
    }
    // With array indices present, integers are advanced indices too (NumPy), which
    // matters for where the broadcast dimensions go.
    if out.iter().any(|e| matches!(e, Entry::Array(_))) {
        for e in &mut out {
            if let Entry::Int(i) = e {
                *e = Entry::Array(Array::scalar(*i as i64));
            }
        }
    }
    Ok(Resolved {
        entries: out,
        split_by_ellipsis: empty_ellipsis_splits(indices, ndim - consumed),
    })
}

/// Python's default start and stop for a slice with `step`, as values `slice_bounds`
/// clamps to the ends.
fn slice_ends(start: Option<i64>, stop: Option<i64>, step: i64) -> (i64, i64) {
    let forward = step > 0;
    (
        start.unwrap_or(if forward { 0 } else { i64::MAX }),
        stop.unwrap_or(if forward { i64::MAX } else { i64::MIN }),
    )
}

/// The basic part of an index as a view of `a`: slices applied, integer axes removed,
/// new axes inserted; array-indexed axes kept whole. Also returns, per array entry, its
/// axis in the view.
fn basic_view(a: &Array, entries: &[Entry]) -> Result<(Array, Vec<usize>)> {
    let (mut start, mut stop, mut step) = (vec![], vec![], vec![]);
    let mut shape = vec![];
    let mut array_axes = vec![];
    for (e, n) in entries.iter().filter(|e| e.consumes_axis()).zip(a.shape()) {
        let (b, len, s) = match e {
            Entry::Int(i) => (*i, 1, 1),
            Entry::Slice(b, len, s) => (*b, *len, *s),
            _ => (0, *n, 1),
        };
        start.push(b as i64);
        // A stop one step past the last element (-1 past the front for negative steps
        // must not wrap, hence i64::MIN).
        let end = b as i64 + len as i64 * s;
        stop.push(if end < 0 { i64::MIN } else { end });
        step.push(s);
    }
    let mut axis = 0;
    for e in entries {
        match e {
            Entry::Int(_) => {}
            Entry::Slice(_, len, _) => shape.push(*len as i64),
            Entry::NewAxis => shape.push(1),
            Entry::Array(_) => {
                array_axes.push(shape.len());
                shape.push(a.shape()[axis] as i64);
            }
        }
        axis += e.consumes_axis() as usize;
    }
    let whole = entries
        .iter()
        .filter(|e| e.consumes_axis())
        .zip(a.shape())
        .all(|(e, &n)| matches!(e, Entry::Slice(0, len, 1) if *len == n));
    if whole && crate::ops::shapeless::in_shapeless_trace() {
        // Only new axes: recorded as expand_dims, so that a shapeless replay keeps the
        // other axes' new sizes (as MLX does).
        let new_axes: Vec<usize> = entries
            .iter()
            .enumerate()
            .filter(|(_, e)| matches!(e, Entry::NewAxis))
            .map(|(i, _)| i)
            .collect();
        let dims: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
        let view =
            super::view::reshape_by(a, &dims, super::view::ReshapeRule::ExpandDims(new_axes))?;
        return Ok((view, array_axes));
    }
    let view = reshape(&slice(a, &start, &stop, &step)?, &shape)?;
    Ok((view, array_axes))
}

/// Where the broadcast index dimensions go: in place of the indexed axes when those are
/// adjacent, else first (NumPy's rule).
fn adjacent(array_axes: &[usize]) -> bool {
    array_axes.windows(2).all(|w| w[1] == w[0] + 1)
}

/// `a` indexed by a NumPy-style index expression (`a[i, j:k, None, ..., idx, mask]`).
///
/// Integers, slices, new axes and the ellipsis ("basic" indexing) give a view of `a`
/// without copying. Integer arrays broadcast together; their dimensions replace the
/// indexed axes when the arrays are adjacent in the expression, otherwise they come
/// first (NumPy's rule); integers count as arrays when any array is present. Negative
/// indices count from the end. A bool mask selects its true positions (C order) over as
/// many axes as it has dimensions; it is evaluated here since the result's shape depends
/// on it.
///
/// Errors: an integer out of range or too many indices is an `IndexError` now; an
/// out-of-range value in an index array is an `IndexError` from evaluation.
///
/// ```
/// use lazulite::{arange, idx, index, reshape, Array, DType, Index};
/// let arr = arange(0.0, 10.0, 1.0, DType::Int32).unwrap();
/// assert_eq!(index(&arr, &idx![3]).unwrap().item::<i32>().unwrap(), 3);
/// assert_eq!(index(&arr, &idx![-2]).unwrap().item::<i32>().unwrap(), 8);
/// let picks = Array::from_slice(&[5i32, 7], &[2]).unwrap();
/// assert_eq!(index(&arr, &idx![&picks]).unwrap().to_vec::<i32>().unwrap(), vec![5, 7]);
/// let cube = reshape(&arr.index(&idx![..8]).unwrap(), &[2, 2, 2]).unwrap();
/// assert_eq!(cube.index(&idx![.., .., 0]).unwrap().to_vec::<i32>().unwrap(), vec![0, 2, 4, 6]);
/// assert_eq!(cube.index(&idx![Index::NewAxis]).unwrap().shape(), &[1, 2, 2, 2]);
/// assert!(index(&arr, &idx![10]).is_err());
/// ```
pub fn index(a: &Array, indices: &[Index]) -> Result<Array> {
    let Resolved {
        entries,
        split_by_ellipsis,
    } = resolve("index", a, indices)?;
    let (view, array_axes) = basic_view(a, &entries)?;
    let arrays: Vec<Array> = entries
        .into_iter()
        .filter_map(|e| match e {
            Entry::Array(i) => Some(i),
            _ => None,
        })
        .collect();
    if arrays.is_empty() {
        return Ok(view);
    }
    let out = gather(&view, &arrays, &array_axes)?;
    let first = array_axes[0];
    if !adjacent(&array_axes) || split_by_ellipsis || first == 0 {
        return Ok(out);
    }
    // Move the broadcast dimensions (leading in the gather) to where the arrays were.
    let batch = out.ndim() + array_axes.len() - view.ndim();
    let perm: Vec<i32> = (batch..batch + first)
        .chain(0..batch)
        .chain(batch + first..out.ndim())
        .map(|d| d as i32)
        .collect();
    transpose(&out, &perm)
}

/// For each axis of `a` indexed by `entries` (advanced), its coordinate at every position
/// of the index result, broadcast to the result's shape, which is also returned.
fn coordinates(
    a: &Array,
    entries: &[Entry],
    split_by_ellipsis: bool,
) -> Result<(Vec<Array>, Vec<usize>)> {
    let arrays: Vec<&Array> = entries
        .iter()
        .filter_map(|e| match e {
            Entry::Array(i) => Some(i),
            _ => None,
        })
        .collect();
    let owned: Vec<Array> = arrays.iter().map(|&a| a.clone()).collect();
    let (_, batch) = broadcast_indices("index_put", &owned)?;
    let array_pos: Vec<usize> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e, Entry::Array(_)))
        .map(|(i, _)| i)
        .collect();
    let together = adjacent(&array_pos) && !split_by_ellipsis;
    // Result layout: per entry, the result dimension of a slice/new axis; the batch
    // dimensions start at `batch_at`.
    let mut result: Vec<usize> = vec![];
    let mut batch_at = if together { None } else { Some(0) };
    if !together {
        result.extend(&batch);
    }
    let mut dim_of = vec![usize::MAX; entries.len()];
    for (k, e) in entries.iter().enumerate() {
        match e {
            Entry::Slice(_, len, _) => {
                dim_of[k] = result.len();
                result.push(*len);
            }
            Entry::NewAxis => {
                dim_of[k] = result.len();
                result.push(1);
            }
            Entry::Array(_) if batch_at.is_none() => {
                batch_at = Some(result.len());
                result.extend(&batch);
            }
            _ => {}
        }
    }
    let batch_at = batch_at.unwrap_or(0);
    checked_size(&result)?;
    let rank = result.len();
    let mut coords = vec![];
    for (k, e) in entries.iter().enumerate() {
        let c = match e {
            Entry::Slice(first, len, step) => {
                let first = *first as f64;
                let r = arange(
                    first,
                    first + (*len as f64) * (*step as f64),
                    *step as f64,
                    DType::Int64,
                )?;
                let mut shape = vec![1i64; rank];
                shape[dim_of[k]] = *len as i64;
                reshape(&r, &shape)?
            }
            Entry::Array(i) => {
                let i = broadcast_to(i, &batch)?;
                let mut shape = vec![1i64; rank];
                for (j, &d) in batch.iter().enumerate() {
                    shape[batch_at + j] = d as i64;
                }
                reshape(&i, &shape)?
            }
            _ => continue,
        };
        coords.push(broadcast_to(&c, &result)?);
    }
    debug_assert_eq!(coords.len(), a.ndim());
    Ok((coords, result))
}

/// `a` with its positions where the full-shape `mask` is true taking the values of
/// `values` (flattened) in order, as lazy ops: the form a mask takes under `vmap` and
/// `compile`, where it has no value to count. Too few values is an index error when evaluated.
fn masked_scatter(a: &Array, mask: &Array, values: &Array) -> Result<Array> {
    let flat = reshape(mask, &[mask.size() as i64])?;
    let ordinal = subtract(
        &cumsum(&flat, Some(0), false, true, Some(DType::Int32))?,
        Array::scalar(1i32),
    )?;
    // False positions read the first value (always there), then are masked out.
    let ordinal = where_(&flat, &ordinal, Array::scalar(0i32))?;
    let flat_values = reshape(values, &[values.size() as i64])?;
    let taken = take(&flat_values, &ordinal, Some(0))?;
    where_(mask, &reshape(&taken, &as_i64(a.shape()))?, a)
}

/// The shared path of [`index_put`] and the [`At`] updates: combine the elements of `a`
/// at `indices` with `value` by `mode`.
fn update(a: &Array, indices: &[Index], value: Operand, mode: ScatterMode) -> Result<Array> {
    let op = if mode == ScatterMode::Assign {
        "index_put"
    } else {
        mode.name()
    };
    let value = match value {
        Operand::Array(v) => astype(&v, a.dtype())?,
        scalar => to_arrays(op, &[Operand::Array(a.clone()), scalar])?.0[1].astype(a.dtype())?,
    };
    // A mask alone: lazy forms that need no evaluation of the mask where they exist.
    if let [Index::Mask(m)] = indices {
        // A 0-d mask selects all of `a` or nothing.
        if m.ndim() == 0 && m.dtype() == DType::Bool {
            let new = combine(a, &value_for(op, &value, a.shape())?, mode)?;
            return where_(m, &new, a);
        }
        // A full-shape mask with one value: a select.
        if m.shape() == a.shape() && value.size() == 1 && m.dtype() == DType::Bool {
            let value = reshape(&value, &[])?;
            let new = combine(a, &value, mode)?;
            return where_(m, &new, a);
        }
        if m.shape() == a.shape() && m.depends_on_stand_in() && mode == ScatterMode::Assign {
            return masked_scatter(a, m, &value);
        }
    }
    let Resolved {
        entries,
        split_by_ellipsis,
    } = resolve(op, a, indices)?;
    if !entries.iter().any(|e| matches!(e, Entry::Array(_))) {
        let (view, _) = basic_view(a, &entries)?;
        let value = value_for(op, &value, view.shape())?;
        let new = combine(&view, &value, mode)?;
        let (mut start, mut stop, mut step, mut shape) = (vec![], vec![], vec![], vec![]);
        for e in entries.iter().filter(|e| e.consumes_axis()) {
            let (b, len, s) = match e {
                Entry::Int(i) => (*i, 1, 1),
                Entry::Slice(b, len, s) => (*b, *len, *s),
                _ => unreachable!("no arrays here"),
            };
            let end = b as i64 + len as i64 * s;
            start.push(b as i64);
            stop.push(if end < 0 { i64::MIN } else { end });
            step.push(s);
            shape.push(len as i64);
        }
        return slice_update(a, &reshape(&new, &shape)?, &start, &stop, &step);
    }
    let (coords, result) = coordinates(a, &entries, split_by_ellipsis)?;
    let value = value_for(op, &value, &result)?;
    let axes: Vec<usize> = (0..a.ndim()).collect();
    scatter(a, &coords, &value, &axes, mode)
}

/// `value` broadcast to the indexed `shape`; extra leading dimensions of size 1 are
/// dropped first, as NumPy and MLX allow (`a[0] = ones((1, 1, 3))`).
fn value_for(op: &str, value: &Array, shape: &[usize]) -> Result<Array> {
    let extra = value.ndim().saturating_sub(shape.len());
    let value = if extra > 0 && value.shape()[..extra].iter().all(|&d| d == 1) {
        reshape(value, &as_i64(&value.shape()[extra..]))?
    } else {
        value.clone()
    };
    broadcast_to(&value, shape).map_err(|_| {
        Error::value(format!(
            "[{op}] Cannot broadcast a value of shape {:?} to the indexed shape {shape:?}.",
            value.shape()
        ))
    })
}

/// `old` combined with `new` as a scatter of `mode` would (for the lazy paths).
fn combine(old: &Array, new: &Array, mode: ScatterMode) -> Result<Array> {
    match mode {
        ScatterMode::Assign => broadcast_to(new, old.shape()),
        ScatterMode::Add => add(old, new)?.astype(old.dtype()),
        ScatterMode::Multiply => multiply(old, new)?.astype(old.dtype()),
        ScatterMode::Maximum => maximum(old, new),
        ScatterMode::Minimum => minimum(old, new),
    }
}

/// `a` with the elements at `indices` replaced by `value` (cast to `a`'s dtype and
/// broadcast to the indexed shape): the functional form of NumPy's `a[indices] = value`
/// (MLX's `__setitem__`, which rebinds `a` to this result). With duplicate indices the
/// last value wins. Errors as [`index`]; the input is never modified.
///
/// ```
/// use lazulite::{idx, index_put, Array};
/// // Seed: a = [1, 2, 3]; a[2] = 0
/// let a = Array::from_slice(&[1i32, 2, 3], &[3]).unwrap();
/// let b = index_put(&a, &idx![2], 0).unwrap();
/// assert_eq!(b.to_vec::<i32>().unwrap(), vec![1, 2, 0]);
/// let mask = Array::from_slice(&[true, false, true], &[3]).unwrap();
/// let c = index_put(&a, &idx![&mask], -1).unwrap();
/// assert_eq!(c.to_vec::<i32>().unwrap(), vec![-1, 2, -1]);
/// assert!(index_put(&a, &idx![3], 0).is_err());
/// ```
pub fn index_put(a: &Array, indices: &[Index], value: impl Into<Operand>) -> Result<Array> {
    update(a, indices, value.into(), ScatterMode::Assign)
}

/// Accumulating updates at an index (MLX's `a.at[idx]`): see [`at`].
pub struct At {
    array: Array,
    indices: Vec<Index>,
}

impl At {
    /// `a[idx] += value`, with duplicate indices adding up.
    pub fn add(&self, value: impl Into<Operand>) -> Result<Array> {
        update(&self.array, &self.indices, value.into(), ScatterMode::Add)
    }

    /// `a[idx] -= value` (an add of the negated value), duplicates accumulating.
    pub fn subtract(&self, value: impl Into<Operand>) -> Result<Array> {
        let v = self.value(value.into())?;
        update(
            &self.array,
            &self.indices,
            negative(&v)?.into(),
            ScatterMode::Add,
        )
    }

    /// `a[idx] *= value`, duplicates accumulating.
    pub fn multiply(&self, value: impl Into<Operand>) -> Result<Array> {
        update(
            &self.array,
            &self.indices,
            value.into(),
            ScatterMode::Multiply,
        )
    }

    /// `a[idx] /= value`: a multiply by the reciprocal (as MLX), duplicates accumulating.
    pub fn divide(&self, value: impl Into<Operand>) -> Result<Array> {
        let v = self.value(value.into())?;
        update(
            &self.array,
            &self.indices,
            reciprocal(&v)?.into(),
            ScatterMode::Multiply,
        )
    }

    /// `a[idx] = maximum(a[idx], value)`, over all duplicates.
    pub fn maximum(&self, value: impl Into<Operand>) -> Result<Array> {
        update(
            &self.array,
            &self.indices,
            value.into(),
            ScatterMode::Maximum,
        )
    }

    /// `a[idx] = minimum(a[idx], value)`, over all duplicates.
    pub fn minimum(&self, value: impl Into<Operand>) -> Result<Array> {
        update(
            &self.array,
            &self.indices,
            value.into(),
            ScatterMode::Minimum,
        )
    }

    /// The value as an array of the updated array's dtype.
    fn value(&self, value: Operand) -> Result<Array> {
        let (arrays, _) = to_arrays("at", &[Operand::Array(self.array.clone()), value])?;
        arrays[1].astype(self.array.dtype())
    }
}

/// Accumulating updates of `a` at a NumPy-style index (MLX's `a.at[idx].add(v)` etc.):
/// unlike [`index_put`], duplicate indices combine all their values.
///
/// ```
/// use lazulite::{at, idx, Array};
/// let a = Array::from_slice(&[0.0f32, 0.0, 0.0], &[3]).unwrap();
/// let i = Array::from_slice(&[0i32, 0, 2], &[3]).unwrap();
/// let b = at(&a, &idx![&i]).add(1.0).unwrap();
/// assert_eq!(b.to_vec::<f32>().unwrap(), vec![2.0, 0.0, 1.0]);
/// ```
pub fn at(a: &Array, indices: &[Index]) -> At {
    At {
        array: a.clone(),
        indices: indices.to_vec(),
    }
}

impl Array {
    /// Method form of [`index`](crate::index).
    pub fn index(&self, indices: &[Index]) -> Result<Array> {
        index(self, indices)
    }

    /// Method form of [`index_put`](crate::index_put).
    pub fn index_put(&self, indices: &[Index], value: impl Into<Operand>) -> Result<Array> {
        index_put(self, indices, value)
    }

    /// Method form of [`at`](crate::at).
    pub fn at(&self, indices: &[Index]) -> At {
        at(self, indices)
    }
}

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
    let mut entries = vec![Index::slice(None, None, None); ax];
    entries.push(Index::Array(indices.clone()));
    index(&a, &entries)
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
fn along_coordinates(indices: &Array, axis: usize, shape: &[usize]) -> Result<Vec<Array>> {
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
            "[{op}] Cannot broadcast indices of shape {:?} with an array of shape {:?}.",
            indices.shape(),
            a.shape()
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
    let (_, shape) = along_shapes("put_along_axis", &flat, &indices, ax)?;
    if shape
        .iter()
        .zip(flat.shape())
        .enumerate()
        .any(|(d, (s, n))| d != ax && s != n)
    {
        return Err(Error::value(format!(
            "[put_along_axis] Indices of shape {:?} do not match the array of shape {:?} \
             outside the axis.",
            indices.shape(),
            a.shape()
        )));
    }
    let coords = along_coordinates(&indices, ax, &shape)?;
    let axes: Vec<usize> = (0..shape.len()).collect();
    let out = scatter(&flat, &coords, values, &axes, ScatterMode::Assign)?;
    reshape(&out, &as_i64(a.shape()))
}

/// The positions of the nonzero elements of `a`, one int64 array per axis (NumPy's
/// `nonzero`; MLX has none). Evaluates `a`: the result's length depends on its values.
///
/// ```
/// use lazulite::{nonzero, Array};
/// let a = Array::from_slice(&[0, 3, 0, 4], &[2, 2]).unwrap();
/// let nz = nonzero(&a).unwrap();
/// assert_eq!(nz[0].to_vec::<i64>().unwrap(), vec![0, 1]);
/// assert_eq!(nz[1].to_vec::<i64>().unwrap(), vec![1, 1]);
/// ```
pub fn nonzero(a: &Array) -> Result<Vec<Array>> {
    let flat = astype(&reshape(a, &[-1])?, DType::Bool)?.to_vec::<bool>()?;
    let count = flat.iter().filter(|&&b| b).count();
    let ndim = a.ndim().max(1);
    let shape = if a.ndim() == 0 {
        vec![1]
    } else {
        a.shape().to_vec()
    };
    let mut coords = vec![Vec::with_capacity(count); ndim];
    for (pos, _) in flat.iter().enumerate().filter(|(_, &b)| b) {
        let mut rem = pos;
        for d in (0..ndim).rev() {
            coords[d].push((rem % shape[d]) as i64);
            rem /= shape[d];
        }
    }
    coords
        .iter()
        .map(|c| Array::from_slice(c, &[count]))
        .collect()
}

/// The positions of the nonzero elements of `a` as rows of an `(n, ndim)` int64 array
/// (NumPy's `argwhere`, the one-argument `where` in matrix form). Evaluates `a`.
///
/// ```
/// use lazulite::{argwhere, Array};
/// let a = Array::from_slice(&[0, 3, 5, 0], &[2, 2]).unwrap();
/// assert_eq!(argwhere(&a).unwrap().to_vec::<i64>().unwrap(), vec![0, 1, 1, 0]);
/// ```
pub fn argwhere(a: &Array) -> Result<Array> {
    let nz = nonzero(a)?;
    let count = nz[0].size();
    let mut rows = vec![0i64; count * a.ndim()];
    for (d, c) in nz.iter().enumerate().take(a.ndim()) {
        for (i, v) in c.to_vec::<i64>()?.into_iter().enumerate() {
            rows[i * a.ndim() + d] = v;
        }
    }
    Array::from_slice(&rows, &[count, a.ndim()])
}

/// The sorted distinct values of `a` (flattened), as NumPy's `unique`: NaNs count as one
/// value and sort last. Evaluates `a`.
///
/// ```
/// use lazulite::{unique, Array};
/// let a = Array::from_slice(&[3, 1, 3, 2, 1], &[5]).unwrap();
/// assert_eq!(unique(&a).unwrap().to_vec::<i32>().unwrap(), vec![1, 2, 3]);
/// ```
pub fn unique(a: &Array) -> Result<Array> {
    let sorted = super::sort::sort(&reshape(a, &[-1])?, Some(0))?;
    dispatch!(a.dtype(), T => {
        let mut values = sorted.to_vec::<T>()?;
        values.dedup_by(|x, y| same_value(*x, *y));
        let n = values.len();
        Array::from_slice(&values, &[n])
    })
}

/// The results of [`unique_all`]: the sorted distinct values, the index of each one's
/// first occurrence in the flattened input (uint32), the position in `values` of every
/// input element (uint32, the input's shape) and how often each value occurs (int32).
pub struct Unique {
    /// The sorted distinct values.
    pub values: Array,
    /// For each value, the flat index of its first occurrence in the input.
    pub index: Array,
    /// For each input element, the position of its value in `values`.
    pub inverse: Array,
    /// How many times each value occurs.
    pub counts: Array,
}

/// The sorted distinct values of `a` (flattened) with the index of their first
/// occurrence, the inverse that rebuilds `a` from them and their counts: MLX's
/// `unique` (NumPy's `unique_all`). NaNs are distinct from each other, as in MLX.
///
/// With a `size`, the results have that many entries whatever `a` holds, so nothing is
/// evaluated (this works under `vmap`, `compile` and `grad`): entries past the last
/// distinct value hold `fill_value` (default: the smallest value), index 0's first
/// occurrence and a count of 0; a `size` below the number of distinct values keeps the
/// smallest ones, their inverse entries clamped to the last. Without a `size` (beyond
/// MLX) the number of distinct values is the size, which evaluates `a` (the shape
/// depends on its values) and so cannot run inside `vmap` or `compile`.
///
/// ```
/// use lazulite::{unique_all, Array};
/// let a = Array::from_slice(&[2i32, 1, 2, 3, 1], &[5]).unwrap();
/// let u = unique_all(&a, None, None).unwrap();
/// assert_eq!(u.values.to_vec::<i32>().unwrap(), [1, 2, 3]);
/// assert_eq!(u.index.to_vec::<u32>().unwrap(), [1, 0, 3]);
/// assert_eq!(u.inverse.to_vec::<u32>().unwrap(), [1, 0, 1, 2, 0]);
/// assert_eq!(u.counts.to_vec::<i32>().unwrap(), [2, 2, 1]);
/// let padded = unique_all(&a, Some(4), Some(&Array::scalar(0i32))).unwrap();
/// assert_eq!(padded.values.to_vec::<i32>().unwrap(), [1, 2, 3, 0]);
/// assert_eq!(padded.counts.to_vec::<i32>().unwrap(), [2, 2, 1, 0]);
/// ```
pub fn unique_all(a: &Array, size: Option<usize>, fill_value: Option<&Array>) -> Result<Unique> {
    let flat = reshape(a, &[-1])?;
    let n = flat.size();
    let perm = super::sort::argsort(&flat, Some(0))?;
    let sorted = take(&flat, &perm, Some(0))?;
    // starts[p]: sorted position p holds a value its predecessor does not.
    let starts = if n == 0 {
        zeros(&[0], DType::Bool)?
    } else {
        let later = slice(&sorted, &[1], &[n as i64], &[1])?;
        let earlier = slice(&sorted, &[0], &[n as i64 - 1], &[1])?;
        super::shape::concatenate(
            &[
                ones(&[1], DType::Bool)?,
                super::binary::not_equal(&later, &earlier)?,
            ],
            0,
        )?
    };
    let size = match size {
        Some(size) => size,
        None => super::reduce::sum(&astype(&starts, DType::Int64)?, crate::Axes::All, false)?
            .item::<i64>()? as usize,
    };
    checked_size(&[size])?;
    let fill = match fill_value {
        Some(f) if f.size() != 1 => {
            return Err(Error::value(format!(
                "[unique] Fill value must have one element, but got shape {:?}.",
                f.shape()
            )))
        }
        Some(f) => Some(reshape(&astype(f, a.dtype())?, &[])?),
        None if n == 0 && size > 0 => {
            return Err(Error::value(
                "[unique] A fill value is required for an empty input with a non-zero size.",
            ))
        }
        None => None,
    };
    if n == 0 || size == 0 {
        let values = match &fill {
            Some(f) => broadcast_to(f, &[size])?,
            None => zeros(&[size], a.dtype())?,
        };
        return Ok(Unique {
            values,
            index: zeros(&[size], DType::UInt32)?,
            inverse: zeros(a.shape(), DType::UInt32)?,
            counts: zeros(&[size], DType::Int32)?,
        });
    }
    let group = subtract(
        &super::scan::cumsum(&starts, Some(0), false, true, Some(DType::Int64))?,
        1,
    )?;
    // Groups that do not fit land in a spare last slot, dropped afterwards.
    let slot = minimum(&group, size as i64)?;
    let head = |x: &Array| slice(x, &[0], &[size as i64], &[1]);
    let positions = arange(0.0, n as f64, 1.0, DType::Int64)?;
    let first = head(&scatter(
        &super::creation::full(&[size + 1], n as i64, Some(DType::Int64))?,
        std::slice::from_ref(&slot),
        &positions,
        &[0],
        ScatterMode::Minimum,
    )?)?;
    let present = super::binary::less(&first, n as i64)?;
    let first = where_(&present, &first, Array::scalar(0i64))?;
    let values = take(&sorted, &first, Some(0))?;
    let values = match fill {
        Some(f) => where_(&present, &values, &f)?,
        None => values,
    };
    let counts = head(&scatter(
        &zeros(&[size + 1], DType::Int32)?,
        std::slice::from_ref(&slot),
        &ones(&[n], DType::Int32)?,
        &[0],
        ScatterMode::Add,
    )?)?;
    let inverse = scatter(
        &zeros(&[n], DType::UInt32)?,
        std::slice::from_ref(&perm),
        &astype(&minimum(&group, size as i64 - 1)?, DType::UInt32)?,
        &[0],
        ScatterMode::Assign,
    )?;
    Ok(Unique {
        values,
        index: take(&perm, &first, Some(0))?,
        inverse: reshape(&inverse, &as_i64(a.shape()))?,
        counts,
    })
}

/// Equal, with every NaN equal to every other (NumPy's `unique(equal_nan=True)`).
fn same_value<T: Element>(x: T, y: T) -> bool {
    if T::DTYPE == DType::Complex64 {
        let (x, y): (Complex, Complex) = (x.to_complex(), y.to_complex());
        let nan = |c: Complex| c.re.is_nan() || c.im.is_nan();
        return x == y || (nan(x) && nan(y));
    }
    x == y || (T::DTYPE.is_inexact() && x.to_f64().is_nan() && y.to_f64().is_nan())
}

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
