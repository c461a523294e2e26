//! [`Array`]: a cheap handle to a node of the lazy graph.
//!
//! A node holds its outputs' shapes and dtypes (fixed when recorded) and, behind a lock,
//! either the operation that will compute it (primitive + inputs) or its data. After
//! evaluation the operation is dropped, detaching the node from the graph.

use crate::backend::Tensor;
use crate::dtype::DType;
use crate::element::{dispatch, Element};
use crate::error::{Error, Result};
use crate::primitive::{OutputSpec, Primitive};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// An n-dimensional array. Operations on arrays record a graph; data is computed by
/// [`eval`](crate::eval) or implicitly when it is read. Cloning is cheap (a reference).
///
/// ```
/// use lazulite::Array;
/// let a = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
/// let b = (&a * 2.0).sin().unwrap(); // nothing computed yet
/// assert!(!b.is_evaluated());
/// let v: Vec<f32> = b.to_vec().unwrap(); // evaluates
/// assert!((v[0] - 2f32.sin()).abs() < 1e-6);
/// ```
#[derive(Clone)]
pub struct Array {
    pub(crate) node: Arc<Node>,
    pub(crate) index: usize,
}

pub(crate) struct Node {
    id: u64,
    outputs: Outputs,
    flags: Flags,
    /// A placeholder: a leaf whose value is assigned (and re-assigned) by the user.
    pub(crate) placeholder: bool,
    pub(crate) state: Mutex<NodeState>,
}

/// A node's output specs, or a computed node's tensors: one per output. Nearly every node
/// has one, kept inline: a list of its own would cost an allocation per recorded op and a
/// pointer to follow per read.
pub(crate) enum OneOrMany<T> {
    One(T),
    Many(Vec<T>),
}

/// A node's output specs.
type Outputs = OneOrMany<OutputSpec>;

/// A computed node's tensors.
pub(crate) type Data = OneOrMany<Tensor>;

impl<T> OneOrMany<T> {
    /// The items, in order.
    pub(crate) fn as_slice(&self) -> &[T] {
        match self {
            OneOrMany::One(item) => std::slice::from_ref(item),
            OneOrMany::Many(items) => items,
        }
    }

    /// The item of a single one, taken out (`None` for several).
    pub(crate) fn into_single(self) -> Option<T> {
        match self {
            OneOrMany::One(item) => Some(item),
            OneOrMany::Many(mut items) if items.len() == 1 => items.pop(),
            OneOrMany::Many(_) => None,
        }
    }
}

impl<T> From<Vec<T>> for OneOrMany<T> {
    fn from(mut items: Vec<T>) -> OneOrMany<T> {
        match items.pop() {
            Some(item) if items.is_empty() => OneOrMany::One(item),
            Some(item) => {
                items.push(item);
                OneOrMany::Many(items)
            }
            None => OneOrMany::Many(items),
        }
    }
}

impl<T> std::ops::Index<usize> for OneOrMany<T> {
    type Output = T;

    fn index(&self, i: usize) -> &T {
        &self.as_slice()[i]
    }
}

/// What a node depends on, fixed when it is recorded (inherited from its inputs).
#[derive(Copy, Clone, Default, Debug, PartialEq, Eq)]
pub(crate) struct Flags {
    /// Depends on the inputs of a running transform (grad, jvp): while any transform
    /// runs, evaluating such a node keeps its graph so the transform can still walk it.
    pub traced: bool,
    /// Depends on a placeholder: its graph is kept after evaluation so it can be
    /// evaluated again after the placeholder is re-assigned.
    pub dataflow: bool,
    /// Depends on a value-less stand-in for an input while `vmap` or `compile` traces a
    /// function: ops whose recording would evaluate it take a lazy form instead.
    pub stand_in: bool,
    /// Holds or depends on a node whose kernel must run on the thread that asks for its
    /// value (`Primitive::runs_on_caller`), evaluated or not: without it, `async_eval`
    /// knows without walking the graph that the whole graph may go to its thread.
    pub caller_only: bool,
}

impl Flags {
    fn union(self, other: Flags) -> Flags {
        Flags {
            traced: self.traced || other.traced,
            dataflow: self.dataflow || other.dataflow,
            stand_in: self.stand_in || other.stand_in,
            caller_only: self.caller_only || other.caller_only,
        }
    }
}

thread_local! {
    static TRACING_DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Marks the current thread as running a transform while the guard lives.
pub(crate) struct TracingGuard(());

impl TracingGuard {
    pub(crate) fn enter() -> TracingGuard {
        TRACING_DEPTH.with(|d| d.set(d.get() + 1));
        TracingGuard(())
    }
}

impl Drop for TracingGuard {
    fn drop(&mut self) {
        TRACING_DEPTH.with(|d| d.set(d.get() - 1));
    }
}

pub(crate) struct NodeState {
    /// How to compute the node; `None` once computed (or for constants).
    pub op: Option<Op>,
    /// One tensor per output once computed.
    pub data: Option<Data>,
    /// For dataflow graphs: the newest placeholder assignment the data reflects.
    pub stamp: u64,
    /// How many times the node's kernel ran (a diagnostic for incremental evaluation).
    pub runs: u64,
    /// The error of the kernel's failed run, given again by later evaluations: its inputs
    /// may have been handed to the kernel, so it cannot run again.
    pub failed: Option<crate::error::Error>,
}

impl NodeState {
    fn pending(op: Op) -> NodeState {
        NodeState {
            op: Some(op),
            data: None,
            stamp: 0,
            runs: 0,
            failed: None,
        }
    }

    fn ready(data: Data) -> NodeState {
        NodeState {
            op: None,
            data: Some(data),
            stamp: 0,
            runs: 0,
            failed: None,
        }
    }
}

pub(crate) struct Op {
    pub primitive: Arc<dyn Primitive>,
    pub inputs: Inputs,
}

/// A node's inputs, up to three inline: nearly every op has one to three, and a list of
/// its own cost each recorded op an allocation that the evaluating thread later freed
/// (which the recording thread's allocator must then collect from the other thread).
pub(crate) enum Inputs {
    One(Array),
    Two([Array; 2]),
    Three([Array; 3]),
    Many(Vec<Array>),
}

impl Inputs {
    /// Moves the inputs onto the end of `to`.
    fn move_into(self, to: &mut Vec<Array>) {
        match self {
            Inputs::One(a) => to.push(a),
            Inputs::Two(a) => to.extend(a),
            Inputs::Three(a) => to.extend(a),
            Inputs::Many(a) => to.extend(a),
        }
    }
}

impl From<Vec<Array>> for Inputs {
    fn from(inputs: Vec<Array>) -> Inputs {
        if !(1..=3).contains(&inputs.len()) {
            return Inputs::Many(inputs);
        }
        let count = inputs.len();
        let mut inputs = inputs.into_iter();
        let mut next = || inputs.next().expect("counted above");
        match count {
            1 => Inputs::One(next()),
            2 => Inputs::Two([next(), next()]),
            _ => Inputs::Three([next(), next(), next()]),
        }
    }
}

impl std::ops::Deref for Inputs {
    type Target = [Array];

    fn deref(&self) -> &[Array] {
        match self {
            Inputs::One(a) => std::slice::from_ref(a),
            Inputs::Two(a) => a,
            Inputs::Three(a) => a,
            Inputs::Many(a) => a,
        }
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl Node {
    pub(crate) fn lock(&self) -> MutexGuard<'_, NodeState> {
        // Kernels never panic while a node is locked on user input; a poisoned lock only
        // follows an engine bug, and the state is still consistent then.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The state, unless another thread holds it (`None`): for checks that must not wait
    /// for a kernel running elsewhere.
    pub(crate) fn try_lock(&self) -> Option<MutexGuard<'_, NodeState>> {
        match self.state.try_lock() {
            Ok(state) => Some(state),
            // As in `lock`: a poisoned lock only follows an engine bug.
            Err(std::sync::TryLockError::Poisoned(e)) => Some(e.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }

    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    pub(crate) fn outputs(&self) -> &[OutputSpec] {
        self.outputs.as_slice()
    }

    pub(crate) fn flags(&self) -> Flags {
        self.flags
    }

    /// Whether evaluation must keep this node's graph (see [`Flags`]).
    pub(crate) fn retains_graph(&self) -> bool {
        self.flags.dataflow || self.traced_now()
    }

    /// Whether this node depends on the inputs of a grad or jvp that is running.
    fn traced_now(&self) -> bool {
        self.flags.traced && TRACING_DEPTH.with(|d| d.get() > 0)
    }
}

impl Drop for Node {
    /// Frees a chain of any length without recursion: inputs whose last handle is ours are
    /// unlinked onto a stack instead of dropping each other in turn.
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        let Some(op) = state.op.take() else { return };
        let mut stack = Vec::new();
        op.inputs.move_into(&mut stack);
        while let Some(array) = stack.pop() {
            if let Some(mut node) = Arc::into_inner(array.node) {
                let state = node.state.get_mut().unwrap_or_else(|e| e.into_inner());
                if let Some(op) = state.op.take() {
                    op.inputs.move_into(&mut stack);
                }
            }
        }
    }
}

impl Array {
    fn from_node(outputs: Outputs, state: NodeState, mut flags: Flags) -> Arc<Node> {
        flags.caller_only |= state
            .op
            .as_ref()
            .is_some_and(|op| op.primitive.runs_on_caller());
        Arc::new(Node {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            outputs,
            flags,
            placeholder: false,
            state: Mutex::new(state),
        })
    }

    /// A placeholder node with no value yet.
    pub(crate) fn new_placeholder(shape: Vec<usize>, dtype: DType) -> Array {
        let node = Node {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            outputs: Outputs::One(OutputSpec { shape, dtype }),
            flags: Flags {
                dataflow: true,
                ..Flags::default()
            },
            placeholder: true,
            state: Mutex::new(NodeState {
                op: None,
                data: None,
                stamp: 0,
                runs: 0,
                failed: None,
            }),
        };
        Array {
            node: Arc::new(node),
            index: 0,
        }
    }

    /// Whether this array depends on a stand-in for an input of a `vmap` or `compile`
    /// being traced (and so has no value to evaluate).
    pub(crate) fn depends_on_stand_in(&self) -> bool {
        self.node.flags.stand_in
    }

    /// Whether this array depends on the inputs of a transform that is running (grad,
    /// jvp, vmap, compile).
    pub(crate) fn is_traced(&self) -> bool {
        self.node.flags.stand_in || self.node.traced_now()
    }

    pub(crate) fn inherited_flags(inputs: &[Array]) -> Flags {
        inputs
            .iter()
            .fold(Flags::default(), |f, a| f.union(a.node.flags))
    }

    /// Records a single-output node with explicit flags (tracers and placeholders).
    pub(crate) fn from_op_with_flags(
        primitive: impl Primitive,
        inputs: Vec<Array>,
        spec: OutputSpec,
        flags: Flags,
    ) -> Array {
        Array::from_shared_op_one(Arc::new(primitive), inputs, spec, flags)
    }

    /// Records a single-output node of a shared primitive.
    pub(crate) fn from_shared_op_one(
        primitive: Arc<dyn Primitive>,
        inputs: Vec<Array>,
        spec: OutputSpec,
        flags: Flags,
    ) -> Array {
        let flags = Array::inherited_flags(&inputs).union(flags);
        let op = Op {
            primitive,
            inputs: inputs.into(),
        };
        Array {
            node: Array::from_node(Outputs::One(spec), NodeState::pending(op), flags),
            index: 0,
        }
    }

    /// Records a single-output node.
    pub(crate) fn from_op(
        primitive: impl Primitive,
        inputs: Vec<Array>,
        shape: Vec<usize>,
        dtype: DType,
    ) -> Array {
        Array::from_op_with_flags(
            primitive,
            inputs,
            OutputSpec { shape, dtype },
            Flags::default(),
        )
    }

    /// Records a node with several outputs; returns one array per output.
    pub(crate) fn from_op_multi(
        primitive: impl Primitive,
        inputs: Vec<Array>,
        outputs: Vec<OutputSpec>,
    ) -> Vec<Array> {
        Array::from_shared_op(Arc::new(primitive), inputs, outputs)
    }

    /// Records a node of an already shared primitive (a replayed `compile` step).
    pub(crate) fn from_shared_op(
        primitive: Arc<dyn Primitive>,
        inputs: Vec<Array>,
        outputs: Vec<OutputSpec>,
    ) -> Vec<Array> {
        let n = outputs.len();
        let flags = Array::inherited_flags(&inputs);
        let op = Op {
            primitive,
            inputs: inputs.into(),
        };
        let node = Array::from_node(outputs.into(), NodeState::pending(op), flags);
        (0..n)
            .map(|index| Array {
                node: node.clone(),
                index,
            })
            .collect()
    }

    /// A node computed as soon as it was recorded, holding `tensor`: it keeps the flags of
    /// the inputs it was computed from.
    pub(crate) fn from_computed(spec: OutputSpec, tensor: Tensor, flags: Flags) -> Array {
        let mut state = NodeState::ready(Data::One(tensor));
        state.runs = 1;
        Array {
            node: Array::from_node(Outputs::One(spec), state, flags),
            index: 0,
        }
    }

    /// An evaluated array holding `tensor`.
    pub(crate) fn from_tensor(tensor: Tensor) -> Array {
        let spec = OutputSpec {
            shape: tensor.shape.clone(),
            dtype: tensor.dtype,
        };
        Array {
            node: Array::from_node(
                Outputs::One(spec),
                NodeState::ready(Data::One(tensor)),
                Flags::default(),
            ),
            index: 0,
        }
    }

    /// An array holding a copy of `data` with the given shape.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1i32, 2, 3, 4], &[2, 2]).unwrap();
    /// assert_eq!(a.shape(), &[2, 2]);
    /// assert!(lazulite::Array::from_slice(&[1i32, 2, 3], &[2, 2]).is_err());
    /// ```
    pub fn from_slice<T: Element>(data: &[T], shape: &[usize]) -> Result<Array> {
        let size = crate::shape::checked_size(shape)?;
        if size != data.len() {
            return Err(Error::value(format!(
                "[array] Data of length {} cannot be shaped as {:?}.",
                data.len(),
                shape
            )));
        }
        Ok(Array::from_tensor(Tensor::from_slice(data, shape)?))
    }

    /// A 0-d array holding `value` with the dtype of `T`.
    ///
    /// ```
    /// let a = lazulite::Array::scalar(2.5f32);
    /// assert_eq!(a.item::<f32>().unwrap(), 2.5);
    /// ```
    pub fn scalar<T: Element>(value: T) -> Array {
        Array::from_tensor(Tensor::from_slice(&[value], &[]).expect("a scalar always fits"))
    }

    /// A 0-d array of `dtype` holding `value` converted as [`Array::astype`] converts
    /// (C casts: integers wrap, floats round), with no node to evaluate.
    ///
    /// ```
    /// use lazulite::{Array, DType, Scalar};
    /// let a = Array::from_scalar(Scalar::Int(300), DType::UInt8);
    /// assert_eq!(a.item::<u8>().unwrap(), 44);
    /// assert!(a.is_evaluated());
    /// ```
    pub fn from_scalar(value: crate::element::Scalar, dtype: DType) -> Array {
        dispatch!(dtype, T => Array::scalar(value.to_elem::<T>()))
    }

    /// An array of `dtype` and `shape` holding `values` in row-major order, each converted
    /// as [`Array::from_scalar`] converts.
    ///
    /// ```
    /// use lazulite::{Array, DType, Scalar};
    /// let a = Array::from_scalars(&[Scalar::Float(1.5), Scalar::Int(-2)], &[2], DType::Int32)?;
    /// assert_eq!(a.to_vec::<i32>()?, [1, -2]);
    /// assert!(Array::from_scalars(&[Scalar::Int(1)], &[2], DType::Int32).is_err());
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn from_scalars(
        values: &[crate::element::Scalar],
        shape: &[usize],
        dtype: DType,
    ) -> Result<Array> {
        dispatch!(dtype, T => {
            let converted: Vec<T> = values.iter().map(|v| v.to_elem::<T>()).collect();
            Array::from_slice(&converted, shape)
        })
    }

    pub(crate) fn spec(&self) -> &OutputSpec {
        &self.node.outputs()[self.index]
    }

    /// The shapes and dtypes of `arrays`, as a node declares its outputs.
    pub(crate) fn specs(arrays: &[Array]) -> Vec<OutputSpec> {
        arrays.iter().map(|a| a.spec().clone()).collect()
    }

    /// The array's shape (dimensions, outermost first).
    ///
    /// ```
    /// let a = lazulite::zeros(&[2, 3], lazulite::DType::Float32)?;
    /// assert_eq!(a.shape(), &[2, 3]);
    /// assert_eq!(lazulite::Array::scalar(1i32).shape(), &[] as &[usize]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn shape(&self) -> &[usize] {
        &self.spec().shape
    }

    /// The array's element type.
    ///
    /// ```
    /// use lazulite::{Array, DType};
    /// let a = Array::from_slice(&[1u8, 2], &[2])?;
    /// assert_eq!(a.dtype(), DType::UInt8);
    /// assert_eq!(lazulite::divide(&a, 2)?.dtype(), DType::Float32);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn dtype(&self) -> DType {
        self.spec().dtype
    }

    /// Number of dimensions.
    ///
    /// ```
    /// assert_eq!(lazulite::zeros(&[2, 3, 4], lazulite::DType::Float32)?.ndim(), 3);
    /// assert_eq!(lazulite::Array::scalar(0.5f32).ndim(), 0);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn ndim(&self) -> usize {
        self.shape().len()
    }

    /// Number of elements.
    ///
    /// ```
    /// assert_eq!(lazulite::zeros(&[2, 3, 4], lazulite::DType::Float32)?.size(), 24);
    /// assert_eq!(lazulite::zeros(&[2, 0], lazulite::DType::Float32)?.size(), 0);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn size(&self) -> usize {
        self.shape().iter().product()
    }

    /// Bytes per element.
    ///
    /// ```
    /// use lazulite::{zeros, DType};
    /// assert_eq!(zeros(&[3], DType::Float16)?.itemsize(), 2);
    /// assert_eq!(zeros(&[3], DType::Complex64)?.itemsize(), 8);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn itemsize(&self) -> usize {
        self.dtype().size()
    }

    /// Bytes of all the elements (size times itemsize).
    ///
    /// ```
    /// assert_eq!(lazulite::zeros(&[2, 3], lazulite::DType::Float64)?.nbytes(), 48);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn nbytes(&self) -> usize {
        self.size() * self.itemsize()
    }

    /// A number identifying this array's node (stable while the array lives).
    ///
    /// ```
    /// let a = lazulite::Array::scalar(1.0f32);
    /// let b = a.clone(); // the same node
    /// assert_eq!(a.id(), b.id());
    /// assert_ne!(a.id(), lazulite::exp(&a)?.id());
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn id(&self) -> u64 {
        self.node.id
    }

    /// Whether the data has been computed.
    ///
    /// ```
    /// let y = lazulite::exp(&lazulite::Array::from_slice(&[1.0f32, 2.0], &[2])?)?;
    /// assert!(!y.is_evaluated()); // recorded only
    /// // One-element elementwise results of computed values are computed when recorded.
    /// assert!(lazulite::exp(&lazulite::Array::scalar(1.0f32))?.is_evaluated());
    /// y.eval()?;
    /// assert!(y.is_evaluated());
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn is_evaluated(&self) -> bool {
        self.node.lock().data.is_some()
    }

    /// Computes this array (and only what it depends on). A no-op if already evaluated.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1.0f32, 2.0], &[2])?;
    /// let y = lazulite::multiply(&a, 3)?;
    /// y.eval()?;
    /// assert!(y.is_evaluated());
    /// // Errors found while computing come out of eval: here, an index out of bounds.
    /// let i = lazulite::Array::from_slice(&[5i32], &[1])?;
    /// assert!(lazulite::take(&a, &i, Some(0))?.eval().is_err());
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn eval(&self) -> Result<()> {
        crate::eval::eval(&[self])
    }

    /// The evaluated data of this array.
    pub(crate) fn tensor(&self) -> Result<Tensor> {
        self.eval()?;
        let state = self.node.lock();
        state
            .data
            .as_ref()
            .map(|d| d[self.index].clone())
            .ok_or_else(|| crate::eval::missing_data(&self.node))
    }

    /// Evaluates and returns the elements in row-major order, converted to `T`
    /// (NumPy `astype` semantics).
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1.5f32, -2.5, 3.0, 4.0], &[2, 2])?;
    /// assert_eq!(a.to_vec::<f32>()?, vec![1.5, -2.5, 3.0, 4.0]);
    /// assert_eq!(a.to_vec::<i32>()?, vec![1, -2, 3, 4]); // converted like astype
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        let t = self.tensor()?;
        let n = t.size();
        Ok(dispatch!(t.dtype, S => (0..n).map(|i| T::from_elem(t.get::<S>(i))).collect()))
    }

    /// Evaluates a one-element array and returns its value converted to `T`.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[7i32], &[1]).unwrap();
    /// assert_eq!(a.item::<f64>().unwrap(), 7.0);
    /// ```
    pub fn item<T: Element>(&self) -> Result<T> {
        if self.size() != 1 {
            return Err(Error::value(format!(
                "[item] Only one-element arrays can be converted to scalars; shape is {:?}.",
                self.shape()
            )));
        }
        Ok(self.to_vec::<T>()?[0])
    }
}

impl std::fmt::Debug for Array {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}
