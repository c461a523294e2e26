//! Evaluation: order the unevaluated ancestors of the requested arrays, run each node's
//! kernel, store its data and detach it from the graph. No recursion anywhere.

use crate::array::{Array, Node};
use crate::backend::Tensor;
use crate::error::{Error, Result};
use std::collections::HashSet;
use std::sync::Arc;

/// Computes `arrays` and everything they depend on that is not computed yet.
/// Evaluating an evaluated array is a no-op.
///
/// ```
/// use lazulite::{eval, Array};
/// let a = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
/// let (b, c) = (&a + 1.0, &a * 3.0);
/// eval(&[&b, &c]).unwrap();
/// assert!(b.is_evaluated() && c.is_evaluated());
/// ```
pub fn eval(arrays: &[&Array]) -> Result<()> {
    for node in schedule(arrays) {
        run(&node)?;
    }
    Ok(())
}

/// Unevaluated nodes reachable from `arrays`, each after all of its inputs.
fn schedule(arrays: &[&Array]) -> Vec<Arc<Node>> {
    let mut order = Vec::new();
    let mut seen: HashSet<*const Node> = HashSet::new();
    // (node, inputs already pushed)
    let mut stack: Vec<(Arc<Node>, bool)> = arrays
        .iter()
        .rev()
        .map(|a| (a.node.clone(), false))
        .collect();
    while let Some((node, expanded)) = stack.pop() {
        if expanded {
            order.push(node);
            continue;
        }
        if !seen.insert(Arc::as_ptr(&node)) {
            continue;
        }
        let inputs: Vec<Arc<Node>> = {
            let state = node.lock();
            match (&state.data, &state.op) {
                (None, Some(op)) => op.inputs.iter().map(|a| a.node.clone()).collect(),
                // Evaluated, or consumed by a failed evaluation (reported by `run`).
                _ => continue,
            }
        };
        stack.push((node, true));
        for input in inputs.into_iter().rev() {
            if !seen.contains(&Arc::as_ptr(&input)) {
                stack.push((input, false));
            }
        }
    }
    order
}

/// Computes one node from its (computed) inputs.
fn run(node: &Arc<Node>) -> Result<()> {
    let mut state = node.lock();
    if state.data.is_some() {
        return Ok(());
    }
    let op = state.op.take().ok_or_else(consumed)?;
    let mut inputs = Vec::with_capacity(op.inputs.len());
    for input in &op.inputs {
        match input_tensor(input) {
            Ok(t) => inputs.push(t),
            Err(e) => {
                state.op = Some(op);
                return Err(e);
            }
        }
    }
    match op.primitive.eval(inputs, node.outputs()) {
        Ok(outputs) => {
            debug_assert!(outputs
                .iter()
                .zip(node.outputs())
                .all(|(t, s)| t.shape == s.shape && t.dtype == s.dtype));
            state.data = Some(outputs);
            if node.retains_graph() {
                state.op = Some(op);
                return Ok(());
            }
            drop(state);
            // Dropping the op detaches the node; inputs nobody else holds are freed here.
            drop(op);
            Ok(())
        }
        Err(e) => {
            state.op = Some(op);
            Err(e)
        }
    }
}

/// The data of an evaluated input. When the op being run holds the only handle to the
/// input (and the input's graph is not kept for re-evaluation), its tensor is moved out
/// rather than shared, so the kernel may reuse its buffer.
fn input_tensor(input: &Array) -> Result<Tensor> {
    let sole_owner = Arc::strong_count(&input.node) == 1
        && input.node.outputs().len() == 1
        && !input.node.retains_graph();
    let mut state = input.node.lock();
    let data = state.data.as_mut().ok_or_else(consumed)?;
    if sole_owner {
        let t = data.pop().ok_or_else(consumed)?;
        state.data = None;
        Ok(t)
    } else {
        Ok(data[input.index].clone())
    }
}

fn consumed() -> Error {
    Error::runtime("[eval] An input of this array was consumed by an earlier failed evaluation.")
}
