//! Ops that only change how a buffer is seen: reshape, transpose, broadcast, strided
//! slicing. They share their input's buffer when evaluated (a copy is made only when
//! a reshape cannot be expressed as a view).

use crate::array::Array;
use crate::backend::cpu::copy::{contiguous, copy_into, ViewLayout};
use crate::backend::cpu::elementwise::map1;
use crate::backend::{contiguous_strides, Tensor};
use crate::element::dispatch;
use crate::error::{Error, Result};
use crate::ops::batching::batch_to_front;
use crate::ops::cast::astype;
use crate::ops::creation::zeros;
use crate::ops::reduce::sum;
use crate::primitive::{mlx_ints, mlx_shape, Export, MlxNode, MlxState, OutputSpec, Primitive};
use crate::shape::{broadcast_shapes, checked_size, normalize_axis, same_shape, shape_text};

/// Reshape to the stored shape, which `.1` says how to infer at other input shapes.
pub(crate) struct Reshape(pub Vec<usize>, pub ReshapeRule);

/// How a reshape finds its shape for new input shapes in a shapeless replay (each is
/// one of MLX's primitives, which is how it is exported).
#[derive(Clone, Debug)]
pub(crate) enum ReshapeRule {
    /// The stored shape, whatever the input (MLX's `Reshape` without `-1`).
    Fixed,
    /// The requested shape, `-1` inferred from the input's size (`Reshape`).
    Infer(Vec<i64>),
    /// Size-1 axes inserted at these output positions (`ExpandDims`).
    ExpandDims(Vec<usize>),
    /// These size-1 input axes removed (`Squeeze`).
    Squeeze(Vec<usize>),
    /// Input axes `start..=end` merged (`Flatten`).
    Flatten(usize, usize),
}

impl Reshape {
    /// The output shape for an input of shape `input` (MLX's messages for misfits).
    fn shape_for(&self, input: &[usize]) -> Result<Vec<usize>> {
        let size: usize = input.iter().product();
        let misfit = |shape: &[i64]| {
            let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
            Error::value(format!(
                "[reshape] Cannot reshape array of size {size} into shape ({}).",
                dims.join(",")
            ))
        };
        match &self.1 {
            ReshapeRule::Fixed => {
                if checked_size(&self.0)? != size {
                    return Err(misfit(&as_i64(&self.0)));
                }
                Ok(self.0.clone())
            }
            ReshapeRule::Infer(requested) => {
                let known: usize = requested
                    .iter()
                    .filter(|&&d| d >= 0)
                    .map(|&d| d as usize)
                    .product();
                if known == 0 {
                    return Err(Error::value(
                        "[reshape] Cannot infer the shape of an empty array",
                    ));
                }
                let inferred = size / known;
                let out: Vec<usize> = requested
                    .iter()
                    .map(|&d| if d < 0 { inferred } else { d as usize })
                    .collect();
                if inferred * known != size {
                    let shown: Vec<i64> = out.iter().map(|&d| d as i64).collect();
                    return Err(misfit(&shown));
                }
                Ok(out)
            }
            ReshapeRule::ExpandDims(axes) => {
                let mut out = input.to_vec();
                for &a in axes {
                    if a > out.len() {
                        return Err(crate::primitive::cannot_infer("expand_dims"));
                    }
                    out.insert(a, 1);
                }
                Ok(out)
            }
            ReshapeRule::Squeeze(axes) => {
                for &a in axes {
                    match input.get(a) {
                        Some(1) => {}
                        Some(&d) => {
                            return Err(Error::value(format!(
                                "[squeeze] Cannot squeeze axis {a} with size {d} which is \
                                 not equal to 1."
                            )))
                        }
                        None => return Err(crate::primitive::cannot_infer("squeeze")),
                    }
                }
                Ok((0..input.len())
                    .filter(|d| !axes.contains(d))
                    .map(|d| input[d])
                    .collect())
            }
            ReshapeRule::Flatten(start, end) => {
                if *end >= input.len() {
                    return Err(crate::primitive::cannot_infer("flatten"));
                }
                let mut out = input[..*start].to_vec();
                out.push(input[*start..=*end].iter().product());
                out.extend_from_slice(&input[end + 1..]);
                Ok(out)
            }
        }
    }
}

impl Primitive for Reshape {
    fn name(&self) -> &'static str {
        "reshape"
    }

    fn output_shapes(&self, inputs: &[OutputSpec]) -> Result<Vec<Vec<usize>>> {
        Ok(vec![self.shape_for(&inputs[0].shape)?])
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        let ints = |v: &[usize]| mlx_ints("reshape", v);
        let (name, state) = match &self.1 {
            ReshapeRule::Fixed => ("Reshape", vec![mlx_shape("reshape", &self.0)?]),
            ReshapeRule::Infer(requested) => ("Reshape", vec![mlx_shape("reshape", requested)?]),
            ReshapeRule::ExpandDims(axes) => ("ExpandDims", vec![ints(axes)?]),
            ReshapeRule::Squeeze(axes) => ("Squeeze", vec![ints(axes)?]),
            ReshapeRule::Flatten(start, end) => (
                "Flatten",
                vec![MlxState::Int(*start as i32), MlxState::Int(*end as i32)],
            ),
        };
        MlxNode::single(name, state, inputs, outputs)
    }

    fn eval(&self, mut inputs: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let mut t = inputs.pop().expect("one input");
        let shape = outputs[0].shape.clone();
        if let Some(strides) = reshape_strides(&t.shape, &t.strides, &shape) {
            t.shape = shape;
            t.strides = strides;
            return Ok(vec![t]);
        }
        let mut t = contiguous(t)?;
        t.strides = contiguous_strides(&shape);
        t.shape = shape;
        Ok(vec![t])
    }

    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        cotangents: &[Array],
        _: &[usize],
    ) -> Result<Vec<Array>> {
        let (g, x) = (&cotangents[0], &inputs[0]);
        if !crate::ops::trace::in_shapeless_trace() {
            return Ok(vec![reshape(g, &as_i64(x.shape()))?]);
        }
        Ok(vec![match &self.1 {
            // The inverse rules, which a shapeless replay infers at new shapes too.
            ReshapeRule::ExpandDims(axes) => {
                let out: Vec<usize> = (0..g.ndim())
                    .filter(|d| !axes.contains(d))
                    .map(|d| g.shape()[d])
                    .collect();
                reshape_by(g, &out, ReshapeRule::Squeeze(axes.clone()))?
            }
            ReshapeRule::Squeeze(axes) => {
                reshape_by(g, x.shape(), ReshapeRule::ExpandDims(axes.clone()))?
            }
            // The input's shape: at a shapeless replay, its new one.
            ReshapeRule::Infer(_) | ReshapeRule::Flatten(..) => reshape_like(g, x)?,
            ReshapeRule::Fixed => reshape(g, &as_i64(x.shape()))?,
        }])
    }

    fn jvp(&self, _: &[Array], tangents: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        // The rule, not the stored shape: a shapeless replay may run at other shapes.
        let shape = self.shape_for(tangents[0].shape())?;
        if !crate::ops::trace::in_shapeless_trace() {
            return Ok(vec![reshape(&tangents[0], &as_i64(&shape))?]);
        }
        // Recorded with the same rule, which a replay infers again.
        Ok(vec![match &self.1 {
            ReshapeRule::Infer(requested) => reshape(&tangents[0], requested)?,
            rule => reshape_by(&tangents[0], &shape, rule.clone())?,
        }])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let x = batch_to_front(&inputs[0], axes[0])?;
        let example = self.shape_for(&x.shape()[1..])?;
        let mut shape = as_i64(&example);
        shape.insert(0, x.shape()[0] as i64);
        if !crate::ops::trace::in_shapeless_trace() {
            return Ok((vec![reshape(&x, &shape)?], vec![Some(0)]));
        }
        // In a shapeless trace the batch size stays free: the rule moved past the batch
        // axis, or the batch inferred (`-1`) before the example's shape.
        let shift = |axes: &[usize]| axes.iter().map(|&a| a + 1).collect::<Vec<_>>();
        let rule = match &self.1 {
            ReshapeRule::ExpandDims(axes) => ReshapeRule::ExpandDims(shift(axes)),
            ReshapeRule::Squeeze(axes) => ReshapeRule::Squeeze(shift(axes)),
            ReshapeRule::Flatten(start, end) => ReshapeRule::Flatten(start + 1, end + 1),
            ReshapeRule::Infer(_) | ReshapeRule::Fixed => {
                shape[0] = -1;
                return Ok((vec![reshape(&x, &shape)?], vec![Some(0)]));
            }
        };
        let out: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
        Ok((vec![reshape_by(&x, &out, rule)?], vec![Some(0)]))
    }
}

/// `a` reshaped to `shape` (same size), recorded with `rule`: a replay in a shapeless
/// trace infers its shape as MLX's primitive of that kind does, and an export writes
/// that primitive (`ExpandDims`, `Squeeze`, `Flatten`), as MLX does.
pub(crate) fn reshape_by(a: &Array, shape: &[usize], rule: ReshapeRule) -> Result<Array> {
    if checked_size(shape)? != a.size() {
        return Err(Error::value(format!(
            "[reshape] Cannot reshape array of size {} into shape {}.",
            a.size(),
            shape_text(shape)
        )));
    }
    if shape == a.shape() {
        return Ok(a.clone());
    }
    Ok(Array::from_op(
        Reshape(shape.to_vec(), rule),
        vec![a.clone()],
        shape.to_vec(),
        a.dtype(),
    ))
}

fn as_i64(shape: &[usize]) -> Vec<i64> {
    shape.iter().map(|&d| d as i64).collect()
}

/// Strides that show a layout of `shape`/`strides` as `new_shape` (same size) without
/// moving data, if they exist: each group of old dimensions merged or split into new ones
/// must be contiguous within itself (NumPy's no-copy reshape rule).
pub(crate) fn reshape_strides(
    shape: &[usize],
    strides: &[isize],
    new_shape: &[usize],
) -> Option<Vec<isize>> {
    if shape.contains(&0) {
        return Some(contiguous_strides(new_shape));
    }
    let (old, old_strides): (Vec<usize>, Vec<isize>) = shape
        .iter()
        .zip(strides)
        .filter(|(&d, _)| d != 1)
        .map(|(&d, &s)| (d, s))
        .unzip();
    let mut out = vec![0isize; new_shape.len()];
    let (mut oi, mut ni) = (0, 0);
    while ni < new_shape.len() && oi < old.len() {
        let (mut oj, mut nj) = (oi + 1, ni + 1);
        let (mut op, mut np) = (old[oi], new_shape[ni]);
        while np != op {
            if np < op {
                np *= new_shape[nj];
                nj += 1;
            } else {
                op *= old[oj];
                oj += 1;
            }
        }
        if (oi..oj - 1).any(|k| old_strides[k] != old[k + 1] as isize * old_strides[k + 1]) {
            return None;
        }
        out[nj - 1] = old_strides[oj - 1];
        for k in (ni + 1..nj).rev() {
            out[k - 1] = out[k] * new_shape[k] as isize;
        }
        (oi, ni) = (oj, nj);
    }
    // Trailing new dimensions have size 1: any stride shows them.
    let last = if ni > 0 { out[ni - 1] } else { 1 };
    for s in &mut out[ni..] {
        *s = last;
    }
    Some(out)
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
                "[reshape] Cannot reshape array of size {size} into shape {}.",
                shape_text(shape)
            )));
        } else {
            known = known.checked_mul(d as usize).ok_or_else(|| {
                Error::value(format!(
                    "[reshape] Shape {} has too many elements.",
                    shape_text(shape)
                ))
            })?;
        }
    }
    let mut out: Vec<usize> = shape.iter().map(|&d| d.max(0) as usize).collect();
    if let Some(i) = inferred {
        if known == 0 {
            return Err(Error::value(
                "[reshape] Cannot infer the shape of an empty array",
            ));
        }
        // A size the others do not divide fails below, with the quotient in its place,
        // as MLX reports it.
        out[i] = size / known;
    }
    if checked_size(&out)? != size {
        return Err(Error::value(format!(
            "[reshape] Cannot reshape array of size {size} into shape {}.",
            shape_text(&out)
        )));
    }
    // In a shapeless trace an inferred dimension stays inferred at other input sizes
    // (then even a reshape to the same shape is recorded: it may not be one at others).
    let rule = if inferred.is_some() && crate::ops::trace::in_shapeless_trace() {
        ReshapeRule::Infer(shape.to_vec())
    } else {
        ReshapeRule::Fixed
    };
    if out == a.shape() && matches!(rule, ReshapeRule::Fixed) {
        return Ok(a.clone());
    }
    Ok(Array::from_op(
        Reshape(out.clone(), rule),
        vec![a.clone()],
        out,
        a.dtype(),
    ))
}

pub(crate) struct Transpose(pub Vec<usize>);

impl Primitive for Transpose {
    fn name(&self) -> &'static str {
        "transpose"
    }

    fn params(&self) -> String {
        format!("axes={:?}", self.0)
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        MlxNode::single(
            "Transpose",
            vec![mlx_ints("transpose", &self.0)?],
            inputs,
            outputs,
        )
    }

    fn output_shapes(&self, inputs: &[OutputSpec]) -> Result<Vec<Vec<usize>>> {
        Ok(vec![self.0.iter().map(|&p| inputs[0].shape[p]).collect()])
    }

    fn eval(&self, mut inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let mut t = inputs.pop().expect("one input");
        t.shape = self.0.iter().map(|&p| t.shape[p]).collect();
        t.strides = self.0.iter().map(|&p| t.strides[p]).collect();
        Ok(vec![t])
    }

    fn vjp(
        &self,
        _: &[Array],
        _: &[Array],
        cotangents: &[Array],
        _: &[usize],
    ) -> Result<Vec<Array>> {
        let mut inverse = vec![0i32; self.0.len()];
        for (i, &p) in self.0.iter().enumerate() {
            inverse[p] = i as i32;
        }
        Ok(vec![transpose(&cotangents[0], &inverse)?])
    }

    fn jvp(&self, _: &[Array], tangents: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        let perm: Vec<i32> = self.0.iter().map(|&p| p as i32).collect();
        Ok(vec![transpose(&tangents[0], &perm)?])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let x = batch_to_front(&inputs[0], axes[0])?;
        let perm: Vec<i32> = std::iter::once(0)
            .chain(self.0.iter().map(|&p| p as i32 + 1))
            .collect();
        Ok((vec![transpose(&x, &perm)?], vec![Some(0)]))
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

/// Broadcast to the stored shape.
pub(crate) struct Broadcast(pub Vec<usize>);

impl Primitive for Broadcast {
    fn name(&self) -> &'static str {
        "broadcast"
    }

    fn output_shapes(&self, inputs: &[OutputSpec]) -> Result<Vec<Vec<usize>>> {
        // A broadcast to a fixed shape stays valid only for inputs that broadcast to it.
        let fits = broadcast_shapes(&inputs[0].shape, &self.0).is_ok_and(|s| s == self.0);
        if !fits {
            return Err(Error::value(format!(
                "[broadcast_shapes] Shapes {} and {} cannot be broadcast.",
                shape_text(&inputs[0].shape),
                shape_text(&self.0)
            )));
        }
        Ok(vec![self.0.clone()])
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        MlxNode::single(
            "Broadcast",
            vec![mlx_shape("broadcast_to", &self.0)?],
            inputs,
            outputs,
        )
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

    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        cotangents: &[Array],
        _: &[usize],
    ) -> Result<Vec<Array>> {
        // Every output element reading an input element adds its cotangent to it: sum
        // over the added leading dimensions and over the dimensions stretched from 1.
        let shape = inputs[0].shape();
        let lead = self.0.len() - shape.len();
        let axes: Vec<i32> = (0..self.0.len())
            .filter(|&d| d < lead || (shape[d - lead] == 1 && self.0[d] != 1))
            .map(|d| d as i32)
            .collect();
        if crate::ops::trace::in_shapeless_trace() {
            // Summed keeping the axes and the leading ones squeezed (MLX's rule): a replay
            // infers the input's new shape, where a reshape would keep this one.
            let summed = sum(&cotangents[0], axes, true)?;
            let leading: Vec<usize> = (0..lead).collect();
            let out = shape.to_vec();
            return Ok(vec![reshape_by(
                &summed,
                &out,
                ReshapeRule::Squeeze(leading),
            )?]);
        }
        let summed = sum(&cotangents[0], axes, false)?;
        Ok(vec![reshape(&summed, &as_i64(shape))?])
    }

    fn jvp(&self, _: &[Array], tangents: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        Ok(vec![broadcast_to(&tangents[0], &self.0)?])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        if let (true, Some(ax)) = (crate::ops::trace::in_shapeless_trace(), axes[0]) {
            let out = shapeless_batched_broadcast(&inputs[0], ax, &self.0)?;
            return Ok((vec![out], vec![Some(0)]));
        }
        let x = batch_to_front(&inputs[0], axes[0])?;
        let batch = x.shape()[0];
        // Line the example's dimensions up with the right end of the target shape.
        let mut shape = vec![batch as i64];
        shape.extend(std::iter::repeat_n(1, self.0.len() + 1 - x.ndim()));
        shape.extend(x.shape()[1..].iter().map(|&d| d as i64));
        let mut target = vec![batch];
        target.extend(&self.0);
        Ok((
            vec![broadcast_to(&reshape(&x, &shape)?, &target)?],
            vec![Some(0)],
        ))
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
    if same_shape(a.shape(), shape) {
        return Ok(a.clone());
    }
    // As in MLX: shapes that do not broadcast fail in `broadcast_shapes`, and a
    // broadcast that is not `shape` with its own message.
    if broadcast_shapes(a.shape(), shape)? != shape {
        return Err(Error::value(format!(
            "Cannot broadcast array of shape {} into shape {}.",
            shape_text(a.shape()),
            shape_text(shape)
        )));
    }
    checked_size(shape)?;
    Ok(Array::from_op(
        Broadcast(shape.to_vec()),
        vec![a.clone()],
        shape.to_vec(),
        a.dtype(),
    ))
}

/// Broadcasts its first input against the shapes of the others (MLX's `BroadcastAxes`):
/// what a shapeless trace records where an op broadcasts its operands together, so a
/// replay broadcasts them at their new shapes. The last `keep` axes are the first
/// input's own (the matrix axes of a batched matrix product).
pub(crate) struct BroadcastLike {
    pub keep: usize,
}

impl BroadcastLike {
    fn target(&self, inputs: &[&[usize]]) -> Result<Vec<usize>> {
        let keep = self.keep;
        let mut lead: Vec<usize> = vec![];
        for shape in inputs {
            let Some(cut) = shape.len().checked_sub(keep) else {
                return Err(crate::primitive::cannot_infer("broadcast_axes"));
            };
            lead = broadcast_shapes(&lead, &shape[..cut]).map_err(|_| {
                Error::value(format!(
                    "[broadcast_shapes] Shapes {} and {} cannot be broadcast.",
                    shape_text(&lead),
                    shape_text(&shape[..cut])
                ))
            })?;
        }
        let own = inputs[0];
        lead.extend_from_slice(&own[own.len() - keep..]);
        Ok(lead)
    }
}

impl Primitive for BroadcastLike {
    fn name(&self) -> &'static str {
        "broadcast_axes"
    }

    fn params(&self) -> String {
        format!("keep={}", self.keep)
    }

    fn output_shapes(&self, inputs: &[OutputSpec]) -> Result<Vec<Vec<usize>>> {
        let shapes: Vec<&[usize]> = inputs.iter().map(|s| s.shape.as_slice()).collect();
        Ok(vec![self.target(&shapes)?])
    }

    fn passes_through(&self, inputs: &[Array], outputs: &[OutputSpec]) -> Option<usize> {
        (inputs[0].shape() == outputs[0].shape.as_slice()).then_some(0)
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        if self.keep == 0 {
            // MLX's `Broadcast` of several inputs broadcasts them together.
            let state = vec![mlx_shape("broadcast", &outputs[0].shape)?];
            return MlxNode::single("Broadcast", state, inputs, outputs);
        }
        let ignore: Vec<i32> = (1..=self.keep as i32).rev().map(|k| -k).collect();
        MlxNode::single(
            "BroadcastAxes",
            vec![MlxState::Ints(ignore)],
            inputs,
            outputs,
        )
    }

    fn eval(&self, inputs: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>> {
        // Only the first input's data is read; the others gave their shapes.
        let first = inputs.into_iter().next().expect("at least one input");
        Broadcast(outputs[0].shape.clone()).eval(vec![first], outputs)
    }

    fn vjp(
        &self,
        inputs: &[Array],
        outputs: &[Array],
        cotangents: &[Array],
        argnums: &[usize],
    ) -> Result<Vec<Array>> {
        argnums
            .iter()
            .map(|&i| {
                if i == 0 {
                    let fixed = Broadcast(cotangents[0].shape().to_vec());
                    Ok(fixed
                        .vjp(&inputs[..1], outputs, cotangents, &[0])?
                        .remove(0))
                } else {
                    // The other inputs give only their shapes (MLX stops their gradient).
                    crate::ops::creation::zeros_like(&inputs[i])
                }
            })
            .collect()
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], argnums: &[usize]) -> Result<Vec<Array>> {
        let shapes: Vec<&[usize]> = inputs.iter().map(|a| a.shape()).collect();
        let target = self.target(&shapes)?;
        // Against the same peers, so that a shapeless replay broadcasts at their shapes.
        let peers: Vec<&Array> = inputs[1..].iter().collect();
        let t = match argnums.iter().position(|&a| a == 0) {
            Some(k) => tangents[k].clone(),
            None => crate::ops::creation::zeros_like(&inputs[0])?,
        };
        Ok(vec![broadcast_with(&t, &target, &peers, self.keep)?])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        // The per-example target, then the fixed broadcast's batching rule.
        let examples: Vec<Vec<usize>> = inputs
            .iter()
            .zip(axes)
            .map(|(a, ax)| {
                let mut s = a.shape().to_vec();
                if let Some(ax) = *ax {
                    s.remove(ax);
                }
                s
            })
            .collect();
        let shapes: Vec<&[usize]> = examples.iter().map(|s| s.as_slice()).collect();
        let target = self.target(&shapes)?;
        if axes[0].is_none() {
            // Only a peer is batched: every example broadcasts the same data.
            return Ok((vec![broadcast_to(&inputs[0], &target)?], vec![None]));
        }
        if let (true, Some(ax)) = (crate::ops::trace::in_shapeless_trace(), axes[0]) {
            let out = shapeless_batched_broadcast(&inputs[0], ax, &target)?;
            return Ok((vec![out], vec![Some(0)]));
        }
        Broadcast(target).vmap(&inputs[..1], &axes[..1])
    }
}

/// The batching rule of a broadcast of `x` (batched along `axis`) to the per-example shape
/// `target`, in a shapeless trace: the batch axis in front and size-1 axes after it line
/// the example up with the target, which comes from an unbatched stand-in of its shape, so
/// that a replay takes the batch size from `x` (a broadcast to `[batch, ...]` would keep
/// the traced one).
fn shapeless_batched_broadcast(x: &Array, axis: usize, target: &[usize]) -> Result<Array> {
    let x = batch_to_front(x, Some(axis))?;
    let extra = (target.len() + 1).saturating_sub(x.ndim());
    let x = if extra > 0 {
        let axes: Vec<usize> = (1..=extra).collect();
        let mut shape = x.shape().to_vec();
        for _ in 0..extra {
            shape.insert(1, 1);
        }
        reshape_by(&x, &shape, ReshapeRule::ExpandDims(axes))?
    } else {
        x
    };
    let mut full = vec![x.shape()[0]];
    full.extend_from_slice(target);
    let stand_in = zeros(target, x.dtype())?;
    broadcast_with(&x, &full, &[&stand_in], 0)
}

/// `a` broadcast to `shape`, the broadcast of its shape with its `peers'` (all but the
/// last `keep` axes): in a shapeless trace it is recorded against the peers, so that a
/// replay broadcasts at their new shapes; otherwise it is [`broadcast_to`].
pub(crate) fn broadcast_with(
    a: &Array,
    shape: &[usize],
    peers: &[&Array],
    keep: usize,
) -> Result<Array> {
    if !crate::ops::trace::in_shapeless_trace() || peers.is_empty() {
        return broadcast_to(a, shape);
    }
    let mut inputs = vec![a.clone()];
    inputs.extend(peers.iter().map(|p| (*p).clone()));
    Ok(Array::from_op(
        BroadcastLike { keep },
        inputs,
        shape.to_vec(),
        a.dtype(),
    ))
}

/// Reshapes its first input to the shape of its second, which gives only its shape: what a
/// shapeless trace records for the derivative of a reshape whose input shape it cannot
/// infer from its output's (`-1`, flatten), so that a replay gives the cotangent the
/// input's new shape. MLX has no such primitive: a file holds MLX's `Reshape` to the shape
/// seen while tracing, as MLX's own derivative of a reshape does.
pub(crate) struct ReshapeLike;

impl Primitive for ReshapeLike {
    fn name(&self) -> &'static str {
        "reshape_like"
    }

    fn output_shapes(&self, inputs: &[OutputSpec]) -> Result<Vec<Vec<usize>>> {
        let size: usize = inputs[0].shape.iter().product();
        let target = &inputs[1].shape;
        if checked_size(target)? != size {
            return Err(Error::value(format!(
                "[reshape] Cannot reshape array of size {size} into shape {}.",
                shape_text(target)
            )));
        }
        Ok(vec![target.clone()])
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        let state = vec![mlx_shape("reshape", &outputs[0].shape)?];
        MlxNode::single("Reshape", state, &inputs[..1], outputs)
    }

    fn export_inputs(&self, _: usize) -> usize {
        1
    }

    fn eval(&self, mut inputs: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>> {
        inputs.truncate(1);
        Reshape(outputs[0].shape.clone(), ReshapeRule::Fixed).eval(inputs, outputs)
    }

    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        cotangents: &[Array],
        argnums: &[usize],
    ) -> Result<Vec<Array>> {
        argnums
            .iter()
            .map(|&i| match i {
                0 => reshape_like(&cotangents[0], &inputs[0]),
                // The peer gives only its shape (as the peers of a `BroadcastLike`).
                _ => crate::ops::creation::zeros_like(&inputs[i]),
            })
            .collect()
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], argnums: &[usize]) -> Result<Vec<Array>> {
        Ok(vec![match argnums.iter().position(|&a| a == 0) {
            Some(k) => reshape_like(&tangents[k], &inputs[1])?,
            None => crate::ops::creation::full_like(&inputs[1], 0, Some(inputs[0].dtype()))?,
        }])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let x = batch_to_front(&inputs[0], axes[0])?;
        let peer = batch_to_front(&inputs[1], axes[1])?;
        match (axes[0], axes[1]) {
            (Some(_), Some(_)) => Ok((vec![reshape_like(&x, &peer)?], vec![Some(0)])),
            (Some(_), None) => {
                let mut shape = vec![-1];
                shape.extend(as_i64(peer.shape()));
                Ok((vec![reshape(&x, &shape)?], vec![Some(0)]))
            }
            _ => {
                let example = as_i64(&peer.shape()[1..]);
                Ok((vec![reshape(&x, &example)?], vec![None]))
            }
        }
    }
}

/// `a` reshaped to the shape of `peer`: in a shapeless trace recorded against `peer`
/// ([`ReshapeLike`]), so that a replay takes its new shape; otherwise [`reshape`].
pub(crate) fn reshape_like(a: &Array, peer: &Array) -> Result<Array> {
    if !crate::ops::trace::in_shapeless_trace() {
        return reshape(a, &as_i64(peer.shape()));
    }
    let size = a.size();
    if checked_size(peer.shape())? != size {
        return Err(Error::value(format!(
            "[reshape] Cannot reshape array of size {size} into shape {}.",
            shape_text(peer.shape())
        )));
    }
    Ok(Array::from_op(
        ReshapeLike,
        vec![a.clone(), peer.clone()],
        peer.shape().to_vec(),
        a.dtype(),
    ))
}

/// Strided slicing of every axis: `start` and `step` per axis (steps may be negative),
/// producing `shape`. A view of the input.
#[derive(Clone)]
pub(crate) struct Slice {
    pub start: Vec<usize>,
    pub step: Vec<isize>,
    pub shape: Vec<usize>,
    /// The slice as MLX records it (`start_indices`, `end_indices`, `strides`): the
    /// files hold these, with the stop the slice was given.
    mlx: [Vec<i64>; 3],
}

impl Slice {
    /// MLX's `(start_indices, end_indices, strides)` for this slice.
    fn mlx_state(&self) -> Result<Vec<MlxState>> {
        self.mlx.iter().map(|v| mlx_shape("slice", v)).collect()
    }

    fn record(self, a: &Array) -> Array {
        let shape = self.shape.clone();
        Array::from_op(self, vec![a.clone()], shape, a.dtype())
    }

    /// The same slice of every example of a batch stacked on a new leading axis.
    fn batched(&self, batch: usize) -> Slice {
        let front = |v: i64, rest: &[i64]| std::iter::once(v).chain(rest.iter().copied()).collect();
        let [start, stop, step] = &self.mlx;
        Slice {
            start: std::iter::once(0)
                .chain(self.start.iter().copied())
                .collect(),
            step: std::iter::once(1)
                .chain(self.step.iter().copied())
                .collect(),
            shape: std::iter::once(batch)
                .chain(self.shape.iter().copied())
                .collect(),
            mlx: [front(0, start), front(batch as i64, stop), front(1, step)],
        }
    }

    /// Where the slice sits in a contiguous array of `shape`.
    fn layout_in(&self, shape: &[usize]) -> (Vec<isize>, usize) {
        let base = contiguous_strides(shape);
        let offset = if self.shape.contains(&0) {
            0
        } else {
            self.start
                .iter()
                .zip(&base)
                .map(|(&s, &st)| s as isize * st)
                .sum::<isize>() as usize
        };
        let strides = base.iter().zip(&self.step).map(|(&s, &k)| s * k).collect();
        (strides, offset)
    }
}

impl Primitive for Slice {
    fn name(&self) -> &'static str {
        "slice"
    }

    fn params(&self) -> String {
        format!("start={:?}, step={:?}", self.start, self.step)
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        MlxNode::single("Slice", self.mlx_state()?, inputs, outputs)
    }

    fn eval(&self, mut inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let mut t = inputs.pop().expect("one input");
        if self.shape.contains(&0) {
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
        t.shape = self.shape.clone();
        Ok(vec![t])
    }

    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        cotangents: &[Array],
        _: &[usize],
    ) -> Result<Vec<Array>> {
        let base = zeros(inputs[0].shape(), cotangents[0].dtype())?;
        Ok(vec![self.clone().record_update(&base, &cotangents[0])])
    }

    fn jvp(&self, _: &[Array], tangents: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        Ok(vec![self.clone().record(&tangents[0])])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let x = batch_to_front(&inputs[0], axes[0])?;
        Ok((vec![self.batched(x.shape()[0]).record(&x)], vec![Some(0)]))
    }
}

/// `dst` with the elements a [`Slice`] addresses replaced by `src`.
pub(crate) struct SliceUpdate(Slice);

impl Slice {
    /// Records `dst` with this slice's elements replaced by `src` (same dtype as `dst`,
    /// shape of the slice).
    fn record_update(self, dst: &Array, src: &Array) -> Array {
        Array::from_op(
            SliceUpdate(self),
            vec![dst.clone(), src.clone()],
            dst.shape().to_vec(),
            dst.dtype(),
        )
    }
}

impl Primitive for SliceUpdate {
    fn name(&self) -> &'static str {
        "slice_update"
    }

    fn output_shapes(&self, inputs: &[OutputSpec]) -> Result<Vec<Vec<usize>>> {
        // As in MLX the update's own shape says how many elements are written from the
        // fixed starts and steps; they must stay inside the destination.
        let (dst, src) = (&inputs[0].shape, &inputs[1].shape);
        let fits = src.len() == dst.len()
            && (0..dst.len()).all(|d| {
                let (start, step, n) = (self.0.start[d] as i64, self.0.step[d] as i64, src[d]);
                let last = start + (n as i64 - 1) * step;
                n == 0 || (start < dst[d] as i64 && last >= 0 && last < dst[d] as i64)
            });
        if !fits {
            return Err(Error::value(format!(
                "[slice_update] An update of shape {} does not fit the slice of an array of \
                 shape {} recorded while tracing.",
                shape_text(src),
                shape_text(dst)
            )));
        }
        Ok(vec![dst.clone()])
    }

    fn params(&self) -> String {
        self.0.params()
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        // MLX's `SliceUpdate::ReduceType` None (4): plain assignment.
        let mut state = vec![MlxState::Int(4)];
        state.extend(self.0.mlx_state()?);
        MlxNode::single("SliceUpdate", state, inputs, outputs)
    }

    fn eval(&self, mut inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let src = inputs.pop().expect("two inputs");
        let dst = inputs.pop().expect("two inputs");
        // Write into dst's buffer when nobody else holds it, else into a fresh copy.
        let mut out = if dst.is_donatable(dst.dtype) {
            dst
        } else {
            dispatch!(dst.dtype, T => map1::<T, T>(dst, |v| v))?
        };
        let (strides, offset) = self.0.layout_in(&out.shape);
        // The update's shape is the slice's, also when a shapeless replay changed it.
        let layout = ViewLayout {
            shape: &src.shape,
            strides: &strides,
            offset,
        };
        copy_into(&mut out, layout, &src);
        Ok(vec![out])
    }

    fn vjp(
        &self,
        _: &[Array],
        _: &[Array],
        cotangents: &[Array],
        argnums: &[usize],
    ) -> Result<Vec<Array>> {
        let g = &cotangents[0];
        argnums
            .iter()
            .map(|&i| {
                if i == 0 {
                    let hole = zeros(&self.0.shape, g.dtype())?;
                    Ok(self.0.clone().record_update(g, &hole))
                } else {
                    Ok(self.0.clone().record(g))
                }
            })
            .collect()
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], argnums: &[usize]) -> Result<Vec<Array>> {
        let tangent = |i: usize| match argnums.iter().position(|&a| a == i) {
            Some(k) => Ok(tangents[k].clone()),
            None => zeros(inputs[i].shape(), inputs[i].dtype()),
        };
        Ok(vec![self
            .0
            .clone()
            .record_update(&tangent(0)?, &tangent(1)?)])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let batch = inputs
            .iter()
            .zip(axes)
            .find_map(|(x, ax)| ax.map(|ax| x.shape()[ax]))
            .expect("vmap calls this rule with a batched input");
        let front = |i: usize| -> Result<Array> {
            let x = batch_to_front(&inputs[i], axes[i])?;
            if axes[i].is_some() {
                return Ok(x);
            }
            let mut shape = vec![batch];
            shape.extend(x.shape());
            broadcast_to(&x, &shape)
        };
        Ok((
            vec![self.0.batched(batch).record_update(&front(0)?, &front(1)?)],
            vec![Some(0)],
        ))
    }
}

/// `a` with the elements of a slice replaced by `update` (cast to `a`'s dtype and
/// broadcast to the slice's shape); MLX's `slice_update` with explicit strides.
///
/// ```
/// let a = lazulite::zeros(&[5], lazulite::DType::Int32).unwrap();
/// let u = lazulite::Array::from_slice(&[7i32, 8], &[2]).unwrap();
/// let b = lazulite::slice_update(&a, &u, &[1], &[5], &[2]).unwrap();
/// assert_eq!(b.to_vec::<i32>().unwrap(), vec![0, 7, 0, 8, 0]);
/// ```
pub fn slice_update(
    a: &Array,
    update: &Array,
    start: &[i64],
    stop: &[i64],
    step: &[i64],
) -> Result<Array> {
    let prim = slice_params(a, start, stop, step)?;
    let update = broadcast_to(&astype(update, a.dtype())?, &prim.shape)?;
    Ok(prim.record_update(a, &update))
}

fn slice_params(a: &Array, start: &[i64], stop: &[i64], step: &[i64]) -> Result<Slice> {
    let ndim = a.ndim();
    if start.len() != ndim || stop.len() != ndim || step.len() != ndim {
        return Err(Error::value(format!(
            "[slice] Expected {ndim} start, stop and step values for an array with {ndim} dimensions."
        )));
    }
    let mut prim = Slice {
        start: Vec::with_capacity(ndim),
        step: step.iter().map(|&s| s as isize).collect(),
        shape: Vec::with_capacity(ndim),
        mlx: std::array::from_fn(|_| Vec::with_capacity(ndim)),
    };
    for (i, &n) in a.shape().iter().enumerate() {
        let (first, len) = slice_bounds(n, start[i], stop[i], step[i])?;
        prim.start.push(first);
        prim.shape.push(len);
        for (v, m) in mlx_bounds(n, start[i], stop[i], step[i], len)
            .into_iter()
            .zip(&mut prim.mlx)
        {
            m.push(v);
        }
    }
    Ok(prim)
}

/// `start:stop:step` over an axis of `n` elements that takes `len` of them, as MLX 0.32.4
/// records it: the start wrapped and clamped, the stop and step as given, except that a
/// single element is written as a step of one (backwards when it can). Values are kept
/// within MLX's 32-bit sizes, which changes no slice of an axis that fits them.
fn mlx_bounds(n: usize, start: i64, stop: i64, step: i64, len: usize) -> [i64; 3] {
    let n = n as i64;
    let wrapped = if start < 0 {
        start.saturating_add(n)
    } else {
        start
    };
    let first = if step < 0 {
        wrapped.min(n - 1)
    } else {
        wrapped.clamp(0, n)
    };
    let int32 = |v: i64| v.clamp(i32::MIN.into(), i32::MAX.into());
    match len {
        1 if step < 0 && first > 0 => [first, first - 1, -1],
        1 => [first, first + 1, 1],
        _ => [int32(first), int32(stop), int32(step)],
    }
}

/// Elements `start`, `start + step`, ... below `stop` of `a` along `axis` (a view), all of
/// the other axes.
pub(crate) fn slice_axis(
    a: &Array,
    axis: usize,
    start: i64,
    stop: i64,
    step: i64,
) -> Result<Array> {
    let ndim = a.ndim();
    let mut starts = vec![0; ndim];
    let mut stops: Vec<i64> = a.shape().iter().map(|&d| d as i64).collect();
    let mut steps = vec![1; ndim];
    starts[axis] = start;
    stops[axis] = stop;
    steps[axis] = step;
    slice(a, &starts, &stops, &steps)
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
    let prim = slice_params(a, start, stop, step)?;
    if prim.shape == a.shape() && step.iter().all(|&s| s == 1) {
        return Ok(a.clone());
    }
    Ok(prim.record(a))
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
