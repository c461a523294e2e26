//! Forward mode: `jvp`.

use super::graph::{key, nodes_between};
use super::tracer::tracer;
use crate::array::{Array, Node, TracingGuard};
use crate::error::{Error, Result};
use crate::ops::zeros_like;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// The outputs of `f(primals)` and the Jacobian-vector products of `tangents` (one per
/// primal, of its shape) through `f` (MLX's `jvp`).
///
/// ```
/// use lazulite::{jvp, Array};
/// let x = Array::scalar(0.0f32);
/// let (outs, tans) = jvp(|p| Ok(vec![p[0].sin()?]), &[x], &[Array::scalar(2.0f32)]).unwrap();
/// assert_eq!(tans[0].item::<f32>().unwrap(), 2.0); // cos(0) * 2
/// # let _ = outs;
/// ```
pub fn jvp(
    f: impl FnOnce(&[Array]) -> Result<Vec<Array>>,
    primals: &[Array],
    tangents: &[Array],
) -> Result<(Vec<Array>, Vec<Array>)> {
    if primals.len() != tangents.len() {
        return Err(Error::value(format!(
            "[jvp] Number of inputs ({}) does not match number of tangents ({}).",
            primals.len(),
            tangents.len()
        )));
    }
    for (p, t) in primals.iter().zip(tangents) {
        if p.shape() != t.shape() {
            return Err(Error::value(format!(
                "[jvp] Input shape {:?} does not match the tangent shape {:?}.",
                p.shape(),
                t.shape()
            )));
        }
    }
    let _tracing = TracingGuard::enter();
    let inputs: Vec<Array> = primals.iter().map(tracer).collect();
    let outputs = f(&inputs)?;
    let sources: HashSet<*const Node> = inputs.iter().map(key).collect();
    let mut tans: HashMap<*const Node, Vec<Array>> = HashMap::new();
    for (i, t) in inputs.iter().zip(tangents) {
        tans.insert(key(i), vec![t.astype(i.dtype())?]);
    }
    for traced in nodes_between(&outputs, &sources) {
        let (argnums, input_tans): (Vec<usize>, Vec<Array>) = traced
            .inputs
            .iter()
            .enumerate()
            .filter_map(|(i, a)| tans.get(&key(a)).map(|t| (i, t[a.index].clone())))
            .unzip();
        let out = traced
            .primitive
            .jvp(&traced.inputs, &input_tans, &argnums)?;
        tans.insert(Arc::as_ptr(&traced.node), out);
    }
    let out_tans = outputs
        .iter()
        .map(|o| match tans.get(&key(o)) {
            Some(t) => Ok(t[o.index].clone()),
            None => zeros_like(o),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((outputs, out_tans))
}
