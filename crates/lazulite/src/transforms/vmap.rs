//! Vectorising map: trace the function on one example, then rewrite every node with its
//! primitive's batched rule.

use super::graph::{key, nodes_between};
use super::tracer::vmap_input;
use crate::array::{Array, Node};
use crate::error::{Error, Result};
use crate::ops::batching::move_axis;
use crate::ops::{broadcast_to, reshape};
use crate::shape::{axis_in_range, normalize_axis};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// `f` vectorised over axis `in_axes[i]` of input `i` (`None`: the input is shared by
/// every example), with the mapped axis of output `k` placed at `out_axes[k]`. A
/// one-element axis list applies to every input (output). MLX's `vmap`.
///
/// ```
/// use lazulite::{vmap, Array};
/// // The guide example: add the columns of xs to the rows of ys.
/// let xs = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
/// let ys = Array::from_slice(&[10.0f32, 20.0, 30.0, 40.0, 50.0, 60.0], &[3, 2]).unwrap();
/// let add = vmap(|a| Ok(vec![&a[0] + &a[1]]), vec![Some(1), Some(0)], vec![Some(0)]);
/// let out = add(&[xs.clone(), ys.clone()]).unwrap();
/// let expected = (&xs.t().unwrap() + &ys).to_vec::<f32>().unwrap();
/// assert_eq!(out[0].to_vec::<f32>().unwrap(), expected);
/// ```
pub fn vmap<F>(
    f: F,
    in_axes: Vec<Option<i32>>,
    out_axes: Vec<Option<i32>>,
) -> impl Fn(&[Array]) -> Result<Vec<Array>>
where
    F: Fn(&[Array]) -> Result<Vec<Array>>,
{
    move |inputs: &[Array]| vmap_call(&f, inputs, &in_axes, &out_axes)
}

fn per_item<T: Copy>(what: &str, axes: &[T], n: usize) -> Result<Vec<T>> {
    match axes.len() {
        1 => Ok(vec![axes[0]; n]),
        len if len == n => Ok(axes.to_vec()),
        len => Err(Error::value(format!(
            "[vmap] {what} has {len} entries but there are {n} {}.",
            if what == "in_axes" {
                "inputs"
            } else {
                "outputs"
            }
        ))),
    }
}

fn vmap_call(
    f: &dyn Fn(&[Array]) -> Result<Vec<Array>>,
    inputs: &[Array],
    in_axes: &[Option<i32>],
    out_axes: &[Option<i32>],
) -> Result<Vec<Array>> {
    let in_axes = per_item("in_axes", in_axes, inputs.len())?;
    let mut size: Option<usize> = None;
    let mut axes = Vec::with_capacity(inputs.len());
    for (x, ax) in inputs.iter().zip(&in_axes) {
        let ax = match ax {
            None => None,
            Some(ax) => {
                let ax = axis_in_range(*ax, x.ndim()).ok_or_else(|| {
                    Error::axis(format!(
                        "[vmap] Axis {ax} is out of bounds for an input with {} dimensions.",
                        x.ndim()
                    ))
                })?;
                let n = x.shape()[ax];
                if *size.get_or_insert(n) != n {
                    return Err(Error::value(format!(
                        "[vmap] Inconsistent axis sizes: {} and {n}.",
                        size.unwrap_or(n)
                    )));
                }
                Some(ax)
            }
        };
        axes.push(ax);
    }
    let size = size.ok_or_else(|| Error::value("[vmap] At least one input must be mapped."))?;
    let traced_inputs: Vec<Array> = inputs
        .iter()
        .zip(&axes)
        .map(|(x, ax)| match ax {
            None => x.clone(),
            Some(ax) => {
                let mut shape = x.shape().to_vec();
                shape.remove(*ax);
                vmap_input(shape, x.dtype())
            }
        })
        .collect();
    let outputs = f(&traced_inputs)?;
    let out_axes = per_item("out_axes", out_axes, outputs.len())?;

    let mut batched: HashMap<*const Node, Vec<(Array, Option<usize>)>> = HashMap::new();
    let mut sources: HashSet<*const Node> = HashSet::new();
    for ((traced, x), ax) in traced_inputs.iter().zip(inputs).zip(&axes) {
        if ax.is_some() {
            sources.insert(key(traced));
            batched.insert(key(traced), vec![(x.clone(), *ax)]);
        }
    }
    for node in nodes_between(&outputs, &sources) {
        let (args, arg_axes): (Vec<Array>, Vec<Option<usize>>) = node
            .inputs
            .iter()
            .map(|a| match batched.get(&key(a)) {
                Some(b) => b[a.index].clone(),
                None => (a.clone(), None),
            })
            .unzip();
        // A node can depend on the batched inputs through inputs that a rule returned
        // unbatched (a broadcast batched only in its peers' shapes): it is then the same
        // node on those inputs, and the rules need not handle an unbatched call.
        let (outs, out_ax) = if arg_axes.iter().all(Option::is_none) {
            let specs = node.node.outputs().to_vec();
            let n = specs.len();
            (
                Array::from_shared_op(node.primitive.clone(), args, specs),
                vec![None; n],
            )
        } else {
            node.primitive.vmap(&args, &arg_axes)?
        };
        batched.insert(
            Arc::as_ptr(&node.node),
            outs.into_iter().zip(out_ax).collect(),
        );
    }

    outputs
        .iter()
        .zip(out_axes)
        .map(|(o, out_ax)| {
            let (value, ax) = match batched.get(&key(o)) {
                Some(b) => b[o.index].clone(),
                None => (o.clone(), None),
            };
            match (ax, out_ax) {
                (None, None) => Ok(value),
                (Some(_), None) => Err(Error::value(
                    "[vmap] An output that depends on the mapped inputs cannot have out_axes None.",
                )),
                (ax, Some(out_ax)) => {
                    let out_ax =
                        normalize_axis("vmap", out_ax, value.ndim() + ax.is_none() as usize)?;
                    match ax {
                        Some(ax) => move_axis(&value, ax, out_ax),
                        None => {
                            let mut shape: Vec<i64> =
                                value.shape().iter().map(|&d| d as i64).collect();
                            shape.insert(out_ax, 1);
                            let expanded = reshape(&value, &shape)?;
                            let mut target = value.shape().to_vec();
                            target.insert(out_ax, size);
                            broadcast_to(&expanded, &target)
                        }
                    }
                }
            }
        })
        .collect()
}
