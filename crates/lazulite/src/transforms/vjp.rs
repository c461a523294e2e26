//! Reverse mode: `vjp` and everything built on it (`grad`, `value_and_grad`).

use super::graph::{key, nodes_between};
use super::tracer::tracer;
use crate::array::{Array, Node, TracingGuard};
use crate::error::{Error, Result};
use crate::ops::{add, conjugate_if_complex, zeros_like};
use std::collections::{HashMap, HashSet};

/// Cotangents gathered per node output.
#[derive(Default)]
struct Cotangents(HashMap<*const Node, Vec<Option<Array>>>);

impl Cotangents {
    fn accumulate(&mut self, target: &Array, value: Array) -> Result<()> {
        let slots = self
            .0
            .entry(key(target))
            .or_insert_with(|| vec![None; target.node.outputs().len()]);
        let slot = &mut slots[target.index];
        *slot = Some(match slot.take() {
            Some(existing) => add(&existing, &value)?,
            None => value,
        });
        Ok(())
    }
}

/// Runs `f` on `primals` and returns its outputs and the vector-Jacobian products of
/// `cotangents` (one per output, of the output's shape) with respect to the primals
/// listed in `argnums` (the other primals are passed through untraced).
pub(crate) fn vjp_argnums(
    f: impl FnOnce(&[Array]) -> Result<Vec<Array>>,
    primals: &[Array],
    argnums: &[usize],
    cotangents: impl FnOnce(&[Array]) -> Result<Vec<Array>>,
) -> Result<(Vec<Array>, Vec<Array>)> {
    for &i in argnums {
        if i >= primals.len() {
            return Err(Error::value(format!(
                "[vjp] Can't compute the gradient of argument index {i} because the function \
                 is called with only {} positional arguments.",
                primals.len()
            )));
        }
    }
    let _tracing = TracingGuard::enter();
    let inputs: Vec<Array> = primals
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if argnums.contains(&i) {
                tracer(p)
            } else {
                p.clone()
            }
        })
        .collect();
    let outputs = f(&inputs)?;
    // Outputs past the cotangents given (value_and_grad's extra outputs) are not seeded.
    let cotangents = cotangents(&outputs)?;
    for (o, c) in outputs.iter().zip(&cotangents) {
        if o.shape() != c.shape() {
            return Err(Error::value(format!(
                "[vjp] Output shape {:?} does not match cotangent shape {:?}.",
                o.shape(),
                c.shape()
            )));
        }
    }
    let sources: HashSet<*const Node> = argnums.iter().map(|&i| key(&inputs[i])).collect();
    let mut cots = Cotangents::default();
    // The rules are written for holomorphic derivatives (JAX's convention: a cotangent
    // times f'(z)); MLX's gradients are their conjugates (a cotangent times conj(f'(z)),
    // the direction of steepest ascent of a real loss), so complex cotangents are
    // conjugated on the way in and complex gradients on the way out.
    for (o, c) in outputs.iter().zip(cotangents) {
        cots.accumulate(o, conjugate_if_complex(&c.astype(o.dtype())?)?)?;
    }
    let order = nodes_between(&outputs, &sources);
    let on_path: HashSet<*const Node> = order
        .iter()
        .map(|t| std::sync::Arc::as_ptr(&t.node))
        .chain(sources.iter().copied())
        .collect();
    for traced in order.iter().rev() {
        let Some(slots) = cots.0.remove(&std::sync::Arc::as_ptr(&traced.node)) else {
            continue;
        };
        let outs = traced.outputs();
        let slot_values = slots
            .into_iter()
            .zip(&outs)
            .map(|(c, o)| c.map_or_else(|| zeros_like(o), Ok))
            .collect::<Result<Vec<_>>>()?;
        let wanted: Vec<usize> = (0..traced.inputs.len())
            .filter(|&i| on_path.contains(&key(&traced.inputs[i])))
            .collect();
        if wanted.is_empty() {
            continue;
        }
        let grads = traced
            .primitive
            .vjp(&traced.inputs, &outs, &slot_values, &wanted)?;
        for (&i, g) in wanted.iter().zip(grads) {
            cots.accumulate(&traced.inputs[i], g)?;
        }
    }
    let grads = argnums
        .iter()
        .map(|&i| {
            let found = cots.0.get(&key(&inputs[i])).and_then(|s| s[0].clone());
            match found {
                Some(g) => conjugate_if_complex(&g)?.astype(primals[i].dtype()),
                None => zeros_like(&primals[i]),
            }
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((outputs, grads))
}

/// The outputs of `f(primals)` and the vector-Jacobian products of `cotangents` with
/// respect to every primal (MLX's `vjp`).
///
/// ```
/// use lazulite::{vjp, Array};
/// let x = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
/// let g = Array::from_slice(&[1.0f32, 1.0], &[2]).unwrap();
/// let (out, grads) = vjp(|p| Ok(vec![p[0].square()?]), &[x], &[g]).unwrap();
/// assert_eq!(grads[0].to_vec::<f32>().unwrap(), vec![2.0, 4.0]);
/// # let _ = out;
/// ```
pub fn vjp(
    f: impl FnOnce(&[Array]) -> Result<Vec<Array>>,
    primals: &[Array],
    cotangents: &[Array],
) -> Result<(Vec<Array>, Vec<Array>)> {
    let argnums: Vec<usize> = (0..primals.len()).collect();
    vjp_argnums(f, primals, &argnums, |outputs| {
        if cotangents.len() != outputs.len() {
            return Err(Error::value(format!(
                "[vjp] Number of outputs to compute gradients for ({}) does not match number \
                 of cotangents ({}).",
                outputs.len(),
                cotangents.len()
            )));
        }
        Ok(cotangents.to_vec())
    })
}

/// The value of a function whose first output is a scalar, and its gradient with respect
/// to the arguments in `argnums`. The other outputs are returned as they are (MLX's
/// `value_and_grad` on a function returning a tuple).
///
/// ```
/// use lazulite::{value_and_grad_argnums, Array};
/// // loss(w, x) = (w * x)^2 with respect to w
/// let (w, x) = (Array::scalar(2.0f32), Array::scalar(3.0f32));
/// let (outs, grads) = value_and_grad_argnums(
///     |a| Ok(vec![lazulite::multiply(&a[0], &a[1])?.square()?]),
///     &[w, x],
///     &[0],
/// ).unwrap();
/// assert_eq!(outs[0].item::<f32>().unwrap(), 36.0);
/// assert_eq!(grads[0].item::<f32>().unwrap(), 36.0); // 2 * w * x^2
/// ```
pub fn value_and_grad_argnums(
    f: impl FnOnce(&[Array]) -> Result<Vec<Array>>,
    primals: &[Array],
    argnums: &[usize],
) -> Result<(Vec<Array>, Vec<Array>)> {
    vjp_argnums(f, primals, argnums, |outputs| {
        let Some(first) = outputs.first() else {
            return Err(Error::value(
                "[value_and_grad] The function must return at least one array.",
            ));
        };
        if first.size() != 1 {
            return Err(Error::value(format!(
                "[value_and_grad] The function must return a scalar as its first output; got an \
                 array of shape {:?}.",
                first.shape()
            )));
        }
        Ok(vec![crate::ops::ones_like(first)?])
    })
}
