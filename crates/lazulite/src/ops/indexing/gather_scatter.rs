//! The `Gather` and `Scatter` primitives, every indexing op's building blocks, with
//! their shape rules, MLX export and derivative and batching rules.

use crate::array::Array;
pub(crate) use crate::backend::cpu::indexing::ScatterMode;
use crate::backend::cpu::indexing::{gather as gather_kernel, scatter as scatter_kernel};
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::batching::batch_to_front;
use crate::ops::binary::{divide, equal, multiply, subtract};
use crate::ops::cast::astype;
use crate::ops::creation::{arange, full_like, ones, zeros, zeros_like};
use crate::ops::exported::ExportedAs;
use crate::ops::ternary::where_;
use crate::ops::view::{broadcast_to, broadcast_with, reshape};
use crate::primitive::{
    mlx_ints, mlx_shape, Export, MlxInput, MlxNode, MlxState, OutputSpec, Primitive,
};
use crate::shape::{broadcast_shapes, checked_size, shape_text};

/// Reads the sub-arrays of input 0 at the integer index arrays (inputs 1..) along `axes`.
/// Output shape: the (common) index shape followed by input 0's other dimensions.
pub(crate) struct Gather {
    pub axes: Vec<usize>,
    /// `Some(axis)` for [`take_along_axis`](crate::take_along_axis) as a shapeless trace
    /// records it: the first index array holds the positions along `axis` and the others
    /// count along the other axes. Written as MLX's `GatherAxis` (which MLX replays at
    /// new shapes), its derivative as `ScatterAxis` (MLX cannot replay a `Scatter`).
    pub along: Option<usize>,
}

/// Input 0 with the sub-arrays at the index arrays (inputs 1..n-1) along `axes`
/// combined with the updates (last input) by `mode`.
pub(crate) struct Scatter {
    pub axes: Vec<usize>,
    pub mode: ScatterMode,
}

pub(super) fn as_i64(shape: &[usize]) -> Vec<i64> {
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
pub(super) fn broadcast_indices(op: &str, indices: &[Array]) -> Result<(Vec<Array>, Vec<usize>)> {
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
                 shapes {}.",
                indices
                    .iter()
                    .map(|i| shape_text(i.shape()))
                    .collect::<Vec<_>>()
                    .join(" ")
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
    record_gather(a, indices, axes, None)
}

/// [`gather`] of every axis of `a`, the positions along `axis` first: see
/// [`Gather::along`].
pub(crate) fn gather_along_axis(
    a: &Array,
    indices: &[Array],
    axes: &[usize],
    axis: usize,
) -> Result<Array> {
    record_gather(a, indices, axes, Some(axis))
}

fn record_gather(
    a: &Array,
    indices: &[Array],
    axes: &[usize],
    along: Option<usize>,
) -> Result<Array> {
    let (indices, batch) = broadcast_indices("gather", indices)?;
    let shape = gather_shape(a.shape(), axes, &batch);
    checked_size(&shape)?;
    let mut inputs = vec![a.clone()];
    inputs.extend(indices);
    let gather = Gather {
        axes: axes.to_vec(),
        along,
    };
    Ok(Array::from_op(gather, inputs, shape, a.dtype()))
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
            "[{op}] Cannot broadcast updates of shape {} to the indexed shape {}.",
            shape_text(updates.shape()),
            shape_text(&target)
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
/// In a shapeless trace an unbatched `x` is broadcast against `positions` (see
/// [`batch_positions`]), so that a replay takes the batch size from the batched inputs.
fn batched_front(
    x: &Array,
    axis: Option<usize>,
    n: usize,
    positions: Option<&Array>,
) -> Result<Array> {
    if axis.is_some() {
        return batch_to_front(x, axis);
    }
    let mut shape = vec![n];
    shape.extend(x.shape());
    match positions {
        Some(p) if crate::ops::trace::in_shapeless_trace() => {
            let expanded = crate::ops::shape::expand_dims(x, 0)?;
            // Against the positions as a column of x's number of dimensions plus one.
            let ones: Vec<i32> = (1..p.ndim() as i32).collect();
            let column = crate::ops::shape::squeeze(p, ones)?;
            let ones: Vec<i32> = (1..=x.ndim() as i32).collect();
            let column = if ones.is_empty() {
                column
            } else {
                crate::ops::shape::expand_dims(&column, ones)?
            };
            broadcast_with(&expanded, &shape, &[&column], 0)
        }
        _ => broadcast_to(&reshape(x, &as_i64(&[&[1], x.shape()].concat()))?, &shape),
    }
}

/// The number of dimensions of one example's index arrays in a vmap call.
fn example_index_ndim(indices: &[Array], axes: &[Option<usize>]) -> usize {
    indices
        .first()
        .map_or(0, |i| i.ndim() - axes[0].is_some() as usize)
}

/// `0..n` along the batch axis of a vmap call, shaped `[n, 1, ...]` with `ones` size-1
/// axes: an arange, or in a shapeless trace positions counted along a batched input
/// (an exclusive cumulative sum of ones), so that a replay counts to its new batch size.
fn batch_positions(inputs: &[Array], axes: &[Option<usize>], ones: usize) -> Result<Array> {
    let n = batch_size(inputs, axes);
    let mut line = vec![n as i64];
    line.extend(std::iter::repeat_n(1, ones));
    if !crate::ops::trace::in_shapeless_trace() {
        return reshape(&arange(0.0, n as f64, 1.0, DType::Int32)?, &line);
    }
    // The smallest batched input gives the batch size: counting along it is cheapest.
    let (x, ax) = inputs
        .iter()
        .zip(axes)
        .filter_map(|(x, ax)| ax.map(|ax| (x, ax)))
        .min_by_key(|(x, _)| x.size())
        .expect("vmap calls this rule with a batched input");
    let x = batch_to_front(&full_like(x, 1, Some(DType::Int32))?, Some(ax))?;
    let column = if x.ndim() > 1 {
        let rest: Vec<i32> = (1..x.ndim() as i32).collect();
        crate::ops::reduce::sum(&x, rest, false)?
    } else {
        x
    };
    let ones_column = full_like(&column, 1, Some(DType::Int32))?;
    let counted = crate::ops::scan::cumsum(&ones_column, Some(0), false, false, None)?;
    let axes: Vec<i32> = (1..=ones as i32).collect();
    if axes.is_empty() {
        return Ok(counted);
    }
    crate::ops::shape::expand_dims(&counted, axes)
}

/// The index arrays of a batched gather/scatter: each with the batch first, plus an
/// index for the batch axis of the (batched) data, all of shape `[n] ++ index shape`,
/// and the axes they address in the batched data.
fn batched_indices(
    indices: &[Array],
    axes: &[Option<usize>],
    prim_axes: &[usize],
    positions: &Array,
) -> Result<(Vec<Array>, Vec<usize>)> {
    let n = positions.shape()[0];
    // The per-example index shape (all indices share it when recorded).
    let batch = indices.first().map_or(vec![], |i| {
        let mut shape = i.shape().to_vec();
        if let Some(ax) = axes[0] {
            shape.remove(ax);
        }
        shape
    });
    let mut out = vec![positions.clone()];
    for (i, ax) in indices.iter().zip(axes) {
        out.push(batched_front(i, *ax, n, Some(positions))?);
    }
    let mut shape = vec![n];
    shape.extend(&batch);
    let out = out
        .iter()
        .enumerate()
        .map(|(k, i)| {
            // Against the others: a shapeless replay broadcasts at their new sizes.
            let peers: Vec<&Array> = (0..out.len())
                .filter(|&j| j != k)
                .map(|j| &out[j])
                .collect();
            broadcast_with(i, &shape, &peers, 0)
        })
        .collect::<Result<Vec<_>>>()?;
    let axes = std::iter::once(0)
        .chain(prim_axes.iter().map(|a| a + 1))
        .collect();
    Ok((out, axes))
}

/// Zero cotangents for integer index inputs.
fn zero_like(x: &Array) -> Result<Array> {
    zeros_like(x)
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

    fn export_inputs(&self, inputs: usize) -> usize {
        // GatherAxis reads the array and the positions along its axis only.
        if self.along.is_some() {
            2
        } else {
            inputs
        }
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        if let Some(axis) = self.along {
            let state = vec![MlxState::Int(axis as i32)];
            return MlxNode::single("GatherAxis", state, &inputs[..2], outputs);
        }
        // MLX's Gather keeps a size-1 axis for each indexed axis.
        let (slice, full) = mlx_gather_shapes(&self.axes, inputs, &outputs[0]);
        let batch = inputs[1].shape.len();
        let squeezed: Vec<usize> = self.axes.iter().map(|a| batch + a).collect();
        let (mut nodes, indices) = mlx_indices(&inputs[1..]);
        let mut args = vec![MlxInput::Input(0)];
        args.extend(indices);
        let state = vec![
            mlx_ints("gather", &self.axes)?,
            mlx_shape("gather", &slice)?,
        ];
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
                    let base = full_like(&inputs[0], 0, Some(g.dtype()))?;
                    let indices = inputs[1..].to_vec();
                    let axes = self.axes.clone();
                    let add = move |x: &[Array]| {
                        Ok(vec![scatter(
                            &x[0],
                            &indices,
                            &x[2],
                            &axes,
                            ScatterMode::Add,
                        )?])
                    };
                    let Some(axis) = self.along else {
                        return add(&[base, inputs[0].clone(), g.clone()]).map(|mut v| v.remove(0));
                    };
                    // MLX's `ScatterAxis` (reduction `Sum`, 0) of the zeros, the positions
                    // and the cotangent, when exported.
                    let state = move || Ok(vec![MlxState::Int(0), MlxState::Int(axis as i32)]);
                    let given = vec![base, inputs[1].clone(), g.clone()];
                    let out = ExportedAs::apply(
                        "scatter_add_along_axis",
                        "ScatterAxis",
                        state,
                        given,
                        add,
                    )?;
                    Ok(out.into_iter().next().expect("one output"))
                } else {
                    zero_like(&inputs[i])
                }
            })
            .collect()
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], argnums: &[usize]) -> Result<Vec<Array>> {
        match argnums.iter().position(|&a| a == 0) {
            Some(k) => Ok(vec![record_gather(
                &tangents[k],
                &inputs[1..],
                &self.axes,
                self.along,
            )?]),
            None if crate::ops::trace::in_shapeless_trace() => {
                // Shaped at replay by the same gather.
                Ok(vec![gather(
                    &zeros_like(&inputs[0])?,
                    &inputs[1..],
                    &self.axes,
                )?])
            }
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
        let ndim = example_index_ndim(&inputs[1..], &axes[1..]);
        let positions = batch_positions(inputs, axes, ndim)?;
        let (mut indices, mut prim_axes) =
            batched_indices(&inputs[1..], &axes[1..], &self.axes, &positions)?;
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

    fn output_shapes(&self, inputs: &[OutputSpec]) -> Result<Vec<Vec<usize>>> {
        // The destination's shape; the index arrays were broadcast together and the
        // updates to the indexed shape when recorded, and must still be.
        let last = inputs.len() - 1;
        let indices = &inputs[1..last];
        let batch = indices.first().map_or(&[][..], |i| &i.shape[..]);
        if indices.iter().any(|i| i.shape != batch) {
            return Err(crate::primitive::cannot_infer(self.name()));
        }
        let target = gather_shape(&inputs[0].shape, &self.axes, batch);
        if inputs[last].shape != target {
            return Err(Error::value(format!(
                "[{}] Updates of shape {} do not match the indexed shape {}.",
                self.name(),
                crate::shape::shape_text(&inputs[last].shape),
                crate::shape::shape_text(&target)
            )));
        }
        Ok(vec![inputs[0].shape.clone()])
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
        let (name, state) = if crate::ops::trace::in_shapeless_trace() {
            // The size-1 axes inserted after the index axes: MLX infers them at new sizes,
            // where a reshape would keep the traced ones.
            let batch = if n > 2 { inputs[1].shape.len() } else { 0 };
            let mut axes = self.axes.clone();
            axes.sort_unstable();
            let at: Vec<usize> = axes.iter().map(|&a| batch + a).collect();
            ("ExpandDims", mlx_ints("scatter", &at)?)
        } else {
            ("Reshape", mlx_shape("scatter", &full.shape)?)
        };
        nodes.push(MlxNode::new(
            name,
            vec![state],
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
            None => zeros_like(&inputs[i]),
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
        let last = inputs.len() - 1;
        let ndim = example_index_ndim(&inputs[1..last], &axes[1..last]);
        let positions = batch_positions(inputs, axes, ndim)?;
        let n = positions.shape()[0];
        let a = batched_front(&inputs[0], axes[0], n, Some(&positions))?;
        let (indices, prim_axes) =
            batched_indices(&inputs[1..last], &axes[1..last], &self.axes, &positions)?;
        let updates = batched_front(&inputs[last], axes[last], n, Some(&positions))?;
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
