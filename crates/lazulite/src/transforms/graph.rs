//! Walking the recorded graph for the transforms, iteratively.

use crate::array::{Array, Node};
use crate::primitive::Primitive;
use std::collections::HashSet;
use std::sync::Arc;

/// A node's operation, copied out of its lock.
pub(crate) struct TracedNode {
    pub node: Arc<Node>,
    pub primitive: Arc<dyn Primitive>,
    pub inputs: Vec<Array>,
}

impl TracedNode {
    /// Handles to every output of the node.
    pub fn outputs(&self) -> Vec<Array> {
        (0..self.node.outputs().len())
            .map(|index| Array {
                node: self.node.clone(),
                index,
            })
            .collect()
    }
}

pub(crate) fn key(a: &Array) -> *const Node {
    Arc::as_ptr(&a.node)
}

/// The nodes between `sources` and `outputs`: those reachable from `outputs` that depend
/// on a source, in topological order (inputs first). Sources themselves are not listed.
pub(crate) fn nodes_between(outputs: &[Array], sources: &HashSet<*const Node>) -> Vec<TracedNode> {
    let mut order: Vec<TracedNode> = Vec::new();
    let mut seen: HashSet<*const Node> = HashSet::new();
    let mut stack: Vec<(Arc<Node>, Option<TracedNode>)> = outputs
        .iter()
        .rev()
        .map(|a| (a.node.clone(), None))
        .collect();
    while let Some((node, expanded)) = stack.pop() {
        if let Some(traced) = expanded {
            order.push(traced);
            continue;
        }
        let ptr = Arc::as_ptr(&node);
        if sources.contains(&ptr) || !seen.insert(ptr) {
            continue;
        }
        let traced = {
            let state = node.lock();
            let Some(op) = &state.op else { continue };
            TracedNode {
                node: node.clone(),
                primitive: op.primitive.clone(),
                inputs: op.inputs.to_vec(),
            }
        };
        let inputs: Vec<Arc<Node>> = traced.inputs.iter().map(|a| a.node.clone()).collect();
        stack.push((node, Some(traced)));
        for input in inputs.into_iter().rev() {
            if !seen.contains(&Arc::as_ptr(&input)) {
                stack.push((input, None));
            }
        }
    }
    let mut depends: HashSet<*const Node> = sources.clone();
    order.retain(|t| {
        let hit = t.inputs.iter().any(|a| depends.contains(&key(a)));
        if hit {
            depends.insert(Arc::as_ptr(&t.node));
        }
        hit
    });
    order
}
