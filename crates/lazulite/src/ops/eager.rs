//! Eager evaluation of one-element elementwise ops. A Python loop of scalar arithmetic
//! (`x = x + 1.0`, ten thousand times) would otherwise record a node per op and walk the
//! whole chain at `eval`, paying for the node twice; computed at once, each op costs one
//! tiny kernel and the chain never exists. Values do not change (the kernel is the one
//! evaluation would run); a printed graph shows a computed constant where the ops were.

use crate::array::{Array, Flags};
use crate::backend::Tensor;
use crate::ops::trace::in_export_trace;
use crate::primitive::{OutputSpec, Primitive};
use std::sync::Arc;

/// Outputs of at most this many elements are computed when recorded.
const EAGER_SIZE: usize = 1;

/// Records `primitive` (elementwise, one output) applied to `inputs`, or computes it now
/// when the output is one element and every input is computed and needed by nothing that
/// walks graphs: no running transform (grad, jvp) traces it, no placeholder feeds it
/// (dataflow graphs are re-evaluated), no stand-in of `vmap` or `compile` does. A kernel
/// that fails leaves the node recorded, so the error comes out of `eval` as before.
/// `share` gives the primitive a recorded node holds.
pub(crate) fn record_elementwise<P: Primitive>(
    primitive: P,
    inputs: Vec<Array>,
    spec: OutputSpec,
    share: impl FnOnce(P) -> Arc<dyn Primitive>,
) -> Array {
    debug_assert!(primitive.is_elementwise());
    // An exported function keeps its constant arithmetic as nodes, as MLX writes it.
    if spec.shape.iter().product::<usize>() <= EAGER_SIZE && !in_export_trace() {
        if let Some(tensors) = computed_tensors(&inputs) {
            let outputs = std::slice::from_ref(&spec);
            if let Ok(mut out) = crate::eval::run_kernel(&primitive, tensors, outputs) {
                if let Some(tensor) = out.pop().filter(|_| out.is_empty()) {
                    let flags = Array::inherited_flags(&inputs);
                    return Array::from_computed(spec, tensor, flags);
                }
            }
        }
    }
    Array::from_shared_op_one(share(primitive), inputs, spec, Flags::default())
}

/// An `Arc` of `primitive`, for [`record_elementwise`] (a primitive not shared between
/// nodes).
pub(crate) fn own<P: Primitive>(primitive: P) -> Arc<dyn Primitive> {
    Arc::new(primitive)
}

/// The inputs' tensors, if each input is computed and free to be read now.
fn computed_tensors(inputs: &[Array]) -> Option<Vec<Tensor>> {
    inputs.iter().map(computed_tensor).collect()
}

/// The tensor of `input` if it is computed and free to be read now: nothing that walks
/// graphs needs its node (see [`record_elementwise`]). A node another thread holds (an
/// `async_eval` computing it) counts as not computed: this never waits.
pub(crate) fn computed_tensor(input: &Array) -> Option<Tensor> {
    let node = &input.node;
    if node.retains_graph() || node.flags().stand_in {
        return None;
    }
    let state = node.try_lock()?;
    match (&state.data, &state.failed) {
        (Some(data), None) => Some(data[input.index].clone()),
        _ => None,
    }
}
