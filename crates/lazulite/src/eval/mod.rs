//! Evaluation: order the ancestors of the requested arrays that need computing, run each
//! node's kernel, store its data and detach it from the graph. No recursion anywhere.
//!
//! Dataflow graphs (those depending on placeholders) keep their operations after
//! evaluation. Each of their nodes records the newest placeholder assignment its data
//! reflects (its stamp); a node is recomputed only when that is out of date or its data
//! was given away to a later node's output (Owl-style buffer reuse).

use crate::array::{Array, Data, Node, NodeState};
use crate::backend::Tensor;
use crate::error::{Error, Result};
use crate::primitive::{OutputSpec, Primitive, Together};
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, MutexGuard};

mod background;
mod profile;

pub use profile::{start_profile, stop_profile, KernelTime};

/// Computes `arrays` and everything they depend on that is not computed yet.
/// Evaluating an evaluated array is a no-op. An array queued by [`async_eval`] is waited
/// for rather than computed twice.
///
/// ```
/// use lazulite::{eval, Array};
/// let a = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
/// let (b, c) = (&a + 1.0, &a * 3.0);
/// eval(&[&b, &c]).unwrap();
/// assert!(b.is_evaluated() && c.is_evaluated());
/// ```
pub fn eval(arrays: &[&Array]) -> Result<()> {
    background::wait_for(arrays);
    // Flags are inherited from inputs: no requested array depending on a placeholder
    // means no node to compute does, and each runs as soon as the walk has its inputs.
    if !arrays.iter().any(|a| a.node.flags().dataflow) {
        return walk(arrays, |node| run(&node, 0));
    }
    let (order, stamps) = schedule(arrays);
    for (i, node) in order.into_iter().enumerate() {
        run(&node, stamps.as_ref().map_or(0, |s| s[i]))?;
    }
    Ok(())
}

/// MLX's `async_eval`: queues `arrays` to be computed on a background thread and returns
/// at once, so the caller can record the next graph meanwhile (a decode loop records
/// token `n + 1` while token `n` is computed). Reading the arrays, or [`eval`], waits for
/// them; an error surfaces there. Graphs with custom functions or distributed ops, and
/// dataflow graphs, are computed before it returns, on the calling thread. Like MLX, it
/// refuses arrays that depend on the inputs of a running transform (grad, vmap, compile).
///
/// ```
/// use lazulite::{async_eval, grad, Array};
/// let x = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
/// let y = &x * 2.0;
/// async_eval(&[&y]).unwrap();
/// assert_eq!(y.to_vec::<f32>().unwrap(), [2.0, 4.0]);
/// let inside = grad(|x: &Array| {
///     async_eval(&[x])?;
///     x.sum(lazulite::Axes::All, false)
/// });
/// assert!(inside(&x).is_err());
/// ```
pub fn async_eval(arrays: &[&Array]) -> Result<()> {
    if arrays.iter().any(|a| a.is_traced()) {
        return Err(Error::value(
            "[async_eval] Not allowed inside a graph transformation.",
        ));
    }
    if !stays_on_caller(arrays) && background::submit(arrays) {
        return Ok(());
    }
    eval(arrays)
}

/// MLX's `synchronize`: waits until everything queued by [`async_eval`] so far is
/// computed (or has failed; the error surfaces when the array is read).
///
/// ```
/// use lazulite::{async_eval, synchronize, Array};
/// let x = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
/// let y = &x * 2.0;
/// async_eval(&[&y]).unwrap();
/// synchronize();
/// assert!(y.is_evaluated());
/// ```
pub fn synchronize() {
    background::wait_all();
}

/// Whether computing `arrays` would run a node that must stay on the calling thread
/// (`Primitive::runs_on_caller`) or depends on placeholders. A node another thread holds
/// locked is being computed or walked there and is passed over, so that this check never
/// waits for a kernel.
fn stays_on_caller(arrays: &[&Array]) -> bool {
    if !arrays.iter().any(|a| {
        let flags = a.node.flags();
        flags.caller_only || flags.dataflow
    }) {
        return false;
    }
    let mut seen = NodeSet::default();
    let mut stack: Vec<Arc<Node>> = arrays.iter().map(|a| a.node.clone()).collect();
    while let Some(node) = stack.pop() {
        if !seen.insert(Arc::as_ptr(&node)) {
            continue;
        }
        let Some(state) = node.try_lock() else {
            continue;
        };
        if !expands(&node, &state) {
            continue;
        }
        if node.flags().dataflow {
            return true;
        }
        if let Some(op) = &state.op {
            if op.primitive.runs_on_caller() {
                return true;
            }
            stack.extend(op.inputs.iter().map(|input| input.node.clone()));
        }
    }
    false
}

/// Hashes node addresses with one multiplication: the scheduling sets are keyed by
/// pointers, for which SipHash's resistance to chosen keys buys nothing and costs a
/// large share of evaluating a small op.
#[derive(Default)]
struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    fn finish(&self) -> u64 {
        // The product's well-mixed high bits become the low bits the table indexes by
        // (aligned addresses leave the low bits of the product zero).
        self.0.rotate_left(26)
    }
}

type NodeSet = HashSet<*const Node, BuildHasherDefault<AddressHasher>>;
type NodeMap<V> = HashMap<*const Node, V, BuildHasherDefault<AddressHasher>>;

/// Nodes reachable from `arrays` that may need computing, each after its inputs: those
/// without data and, in dataflow graphs, every node with an operation. Also tells whether
/// any of them belongs to a dataflow graph.
fn candidates(arrays: &[&Array]) -> (Vec<Arc<Node>>, bool) {
    let mut order = Vec::new();
    let mut dataflow = false;
    let collected = walk(arrays, |node| {
        dataflow |= node.flags().dataflow;
        order.push(node);
        Ok(())
    });
    debug_assert!(collected.is_ok());
    (order, dataflow)
}

/// Calls `visit` on each node reachable from `arrays` that may need computing (see
/// [`expands`]), after visiting its inputs; stops at the first error `visit` returns.
fn walk(arrays: &[&Array], mut visit: impl FnMut(Arc<Node>) -> Result<()>) -> Result<()> {
    let mut seen = NodeSet::default();
    // (node, inputs already pushed)
    let mut stack: Vec<(Arc<Node>, bool)> = arrays
        .iter()
        .rev()
        .map(|a| (a.node.clone(), false))
        .collect();
    while let Some((node, expanded)) = stack.pop() {
        if expanded {
            visit(node)?;
            continue;
        }
        // A node held only by this entry and one other handle (its single consumer's
        // input list, or the caller's array) is reached once: a chain records no set
        // entries. Other threads only add handles, which sends the node to the set.
        if Arc::strong_count(&node) > 2 && !seen.insert(Arc::as_ptr(&node)) {
            continue;
        }
        // The inputs are pushed while the node is locked, above the slot where the node
        // itself goes once unlocked.
        let slot = stack.len();
        {
            let state = node.lock();
            if !expands(&node, &state) {
                continue;
            }
            // A failed node gives its error again without touching its inputs.
            if let (Some(op), None) = (&state.op, &state.failed) {
                for input in op.inputs.iter().rev() {
                    // Inputs that would not be expanded (constants, computed values) are
                    // left out here, sparing them a handle and a set entry; one seen
                    // already is skipped when popped.
                    if expands(&input.node, &input.node.lock()) {
                        stack.push((input.node.clone(), false));
                    }
                }
            }
        }
        stack.insert(slot, (node, true));
    }
    Ok(())
}

/// Whether the walk of [`candidates`] goes through `node` (locked as `state`): nodes
/// without data, and, in dataflow graphs, every node with an operation. Constants and
/// placeholders are not (missing data is reported by `run`).
fn expands(node: &Node, state: &NodeState) -> bool {
    match (&state.data, &state.op) {
        (Some(_), _) if !node.flags().dataflow => false,
        (_, op) => op.is_some(),
    }
}

/// The nodes to run, in order, and the stamp each will hold once run (all 0 when the list
/// is `None`).
fn schedule(arrays: &[&Array]) -> (Vec<Arc<Node>>, Option<Vec<u64>>) {
    let (order, dataflow) = candidates(arrays);
    if !dataflow {
        // Ordinary graphs: every candidate lacks data and is needed.
        return (order, None);
    }
    // Current stamps, forward: a node reflects the newest assignment among its inputs.
    let mut current: NodeMap<u64> = NodeMap::default();
    let mut stale = NodeSet::default();
    let mut inputs_of: Vec<Vec<*const Node>> = Vec::with_capacity(order.len());
    for node in &order {
        let state = node.lock();
        let inputs = state.op.as_ref().map_or(&[][..], |op| &op.inputs[..]);
        let mut stamp = 0;
        for input in inputs {
            let key = Arc::as_ptr(&input.node);
            let s = match current.get(&key) {
                Some(&s) => s,
                None => input.node.lock().stamp,
            };
            stamp = stamp.max(s);
        }
        inputs_of.push(inputs.iter().map(|a| Arc::as_ptr(&a.node)).collect());
        let key = Arc::as_ptr(node);
        current.insert(key, stamp);
        if state.data.is_none() || state.stamp != stamp {
            stale.insert(key);
        }
    }
    // Needed, backward: a stale requested array, and the stale inputs of needed nodes.
    let mut needed: NodeSet = arrays
        .iter()
        .map(|a| Arc::as_ptr(&a.node))
        .filter(|k| stale.contains(k))
        .collect();
    for (node, inputs) in order.iter().zip(&inputs_of).rev() {
        if needed.contains(&Arc::as_ptr(node)) {
            needed.extend(inputs.iter().filter(|k| stale.contains(*k)));
        }
    }
    let order: Vec<Arc<Node>> = order
        .into_iter()
        .filter(|n| needed.contains(&Arc::as_ptr(n)))
        .collect();
    let stamps = order.iter().map(|n| current[&Arc::as_ptr(n)]).collect();
    (order, Some(stamps))
}

/// Computes one node from its (computed) inputs.
fn run(node: &Arc<Node>, stamp: u64) -> Result<()> {
    run_locked(node, node.lock(), stamp)
}

/// [`run`] with the node's state already locked.
fn run_locked(node: &Arc<Node>, mut state: MutexGuard<'_, NodeState>, stamp: u64) -> Result<()> {
    if let Some(e) = &state.failed {
        return Err(e.clone());
    }
    let Some(op) = state.op.take() else {
        return match state.data {
            Some(_) => Ok(()),
            None => Err(consumed()),
        };
    };
    let mut inputs = Vec::with_capacity(op.inputs.len());
    // A node that keeps its graph keeps its inputs' values unless one can be reused.
    let retains_graph = node.retains_graph();
    let reuse_only_for = retains_graph.then(|| node.outputs());
    // In a dataflow graph, an input whose buffer is reused must rerun whenever this node
    // does. That is free only if no other input can change without it (else a new value
    // of, say, `b` in `a * s + b` would recompute `a * s` too): then nothing is reused.
    // Counted only where it matters, to leave the inputs' flags unread otherwise.
    let dataflow = retains_graph && node.flags().dataflow;
    let varying = if dataflow {
        op.inputs.iter().filter(|i| i.node.flags().dataflow).count()
    } else {
        0
    };
    for input in op.inputs.iter() {
        let reuse_only_for = match reuse_only_for {
            Some(_) if dataflow && varying > usize::from(input.node.flags().dataflow) => {
                Some(&[][..])
            }
            r => r,
        };
        match input_tensor(input, reuse_only_for) {
            Ok(t) => inputs.push(t),
            Err(e) => {
                state.op = Some(op);
                return Err(e);
            }
        }
    }
    match run_kernel(op.primitive.as_ref(), inputs, node.outputs()) {
        Ok(outputs) => {
            debug_assert!(outputs
                .iter()
                .zip(node.outputs())
                .all(|(t, s)| t.shape == s.shape && t.dtype == s.dtype));
            state.data = Some(outputs.into());
            state.stamp = stamp;
            state.runs += 1;
            if retains_graph {
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
            // Inputs handed to the kernel are gone; a graph that keeps its inputs'
            // values (dataflow) may run again once a placeholder changes.
            if !retains_graph {
                state.failed = Some(e.clone());
            }
            Err(e)
        }
    }
}

/// How far past a node whose primitive [`runs_together`](Primitive::runs_together) the
/// evaluation thread looks for others to compute with it, and how many it gathers: a
/// decode layer's queries, keys and values lie within a dozen nodes of each other.
const TOGETHER_WINDOW: usize = 32;
const TOGETHER_MOST: usize = 8;

/// Computes `node` and, if its primitive runs together with others, the nodes of `later`
/// (those after it in the evaluation order) of the same primitive whose inputs are all
/// computed, in one call. A node another thread holds is left for later. Only a node that
/// drops its graph once computed joins others; the rest run as [`run`] runs them.
fn run_with_ready_others(node: &Arc<Node>, later: &[Arc<Node>]) -> Result<()> {
    let kind = |op: &crate::array::Op| {
        let any: &dyn std::any::Any = &*op.primitive;
        any.type_id()
    };
    let first = node.lock();
    let joins = |node: &Node, state: &NodeState| {
        state.failed.is_none()
            && state.data.is_none()
            && !node.retains_graph()
            && state
                .op
                .as_ref()
                .is_some_and(|op| op.primitive.runs_together())
    };
    if !joins(node, &first) {
        return run_locked(node, first, 0);
    }
    let first_kind = first.op.as_ref().map(kind);
    let mut members = vec![(node, first)];
    for other in later.iter().take(TOGETHER_WINDOW) {
        if members.len() == TOGETHER_MOST {
            break;
        }
        let Some(state) = other.try_lock() else {
            continue;
        };
        // Inputs held by another thread, or by this one (a member), are not ready.
        let ready = joins(other, &state)
            && state.op.as_ref().map(kind) == first_kind
            && state.op.as_ref().is_some_and(|op| {
                op.inputs
                    .iter()
                    .all(|i| i.node.try_lock().is_some_and(|s| s.data.is_some()))
            });
        if ready {
            members.push((other, state));
        }
    }
    if members.len() == 1 {
        let (_, first) = members.pop().expect("the first member");
        return run_locked(node, first, 0);
    }
    // Inputs are shared, never given away: a failure leaves every member as it was.
    let mut inputs = Vec::with_capacity(members.len());
    for (_, state) in &members {
        let op = state.op.as_ref().expect("members have operations");
        inputs.push(
            op.inputs
                .iter()
                .map(|input| input_tensor(input, Some(&[])))
                .collect::<Result<Vec<_>>>()?,
        );
    }
    let ops: Vec<crate::array::Op> = members
        .iter_mut()
        .map(|(_, state)| state.op.take().expect("members have operations"))
        .collect();
    let together = ops
        .iter()
        .zip(inputs)
        .zip(&members)
        .map(|((op, inputs), (node, _))| Together {
            primitive: op.primitive.as_ref(),
            inputs,
            outputs: node.outputs(),
        })
        .collect();
    let started = profile::timer();
    let results = ops[0].primitive.eval_together(together);
    if let Some(started) = started {
        let share = started.elapsed() / members.len() as u32;
        for (op, (node, _)) in ops.iter().zip(&members) {
            profile::record(op.primitive.name(), node.outputs(), share);
        }
    }
    let mut first_result = Ok(());
    for (i, ((op, (_, mut state)), result)) in ops.into_iter().zip(members).zip(results).enumerate()
    {
        match result {
            Ok(outputs) => {
                state.data = Some(outputs.into());
                state.runs += 1;
                drop(state);
                // Dropping the op detaches the node.
                drop(op);
            }
            Err(e) => {
                state.op = Some(op);
                state.failed = Some(e.clone());
                if i == 0 {
                    first_result = Err(e);
                }
            }
        }
    }
    first_result
}

/// Runs `primitive`'s kernel, timed when a profile is on.
pub(crate) fn run_kernel(
    primitive: &dyn Primitive,
    inputs: Vec<Tensor>,
    outputs: &[OutputSpec],
) -> Result<Vec<Tensor>> {
    let started = profile::timer();
    let result = primitive.eval(inputs, outputs);
    if let Some(started) = started {
        profile::record(primitive.name(), outputs, started.elapsed());
    }
    result
}

/// The data of an evaluated input. When the op being run holds the only handle to the
/// input, its tensor is moved out rather than shared, so the kernel may reuse its buffer.
/// If the op keeps its graph, `reuse_only_for` lists its outputs: an input then gives its
/// data away only if it can be recomputed and its buffer fits one of those outputs (it
/// becomes invalid until needed again); other values, like a reduced scalar that cuts off
/// recomputation, are kept. Placeholders never give their values away.
fn input_tensor(input: &Array, reuse_only_for: Option<&[OutputSpec]>) -> Result<Tensor> {
    let mut state = input.node.lock();
    let recomputable = state.op.is_some();
    let Some(data) = state.data.as_ref() else {
        return Err(missing_data(&input.node));
    };
    let reusable = match reuse_only_for {
        None => true,
        Some(outputs) => {
            recomputable
                && outputs.iter().any(|o| {
                    data[0].is_donatable(o.dtype)
                        && data[0].buf.len() == o.shape.iter().product::<usize>() * o.dtype.size()
                })
        }
    };
    let sole_owner = Arc::strong_count(&input.node) == 1
        && input.node.outputs().len() == 1
        && !input.node.placeholder
        && reusable;
    if sole_owner {
        state
            .data
            .take()
            .and_then(Data::into_single)
            .ok_or_else(consumed)
    } else {
        Ok(data[input.index].clone())
    }
}

/// The error for reading a node that has no data after evaluation: an unassigned
/// placeholder, or a node consumed by a failed evaluation.
pub(crate) fn missing_data(node: &Node) -> Error {
    if node.placeholder {
        let spec = &node.outputs()[0];
        Error::value(format!(
            "[eval] Placeholder #{} of shape {:?} and dtype {} has no value: assign one before \
             evaluating what depends on it.",
            node.id(),
            spec.shape,
            spec.dtype
        ))
    } else {
        consumed()
    }
}

fn consumed() -> Error {
    Error::runtime("[eval] An input of this array was consumed by an earlier failed evaluation.")
}
