//! The [`Primitive`] trait: everything the engine knows about one kind of graph node.
//!
//! Each op family (unary, binary, reduce, ...) implements it in its own file under `ops/`,
//! next to the public functions that create its nodes.

use crate::array::Array;
use crate::backend::Tensor;
use crate::error::{Error, Result};
use std::any::Any;
use std::sync::Arc;

/// A node's operation: how to compute it and, for the transforms, how to differentiate
/// and batch it.
pub(crate) trait Primitive: Send + Sync + Any {
    /// The name printed in graphs and error messages (`"sin"`, `"add"`, `"sum"`).
    fn name(&self) -> &'static str;

    /// The Rust type implementing this primitive (`"lazulite::ops::unary::Unary"`): several
    /// types share printed names, so tests that check which primitives a function records
    /// read this instead (see [`crate::primitive_types`]).
    fn type_name(&self) -> &'static str {
        std::any::type_name::<Self>()
    }

    /// Parameters shown next to the name when printing graphs (e.g. `axes=[0]`).
    fn params(&self) -> String {
        String::new()
    }

    /// Whether output element `i` depends only on element `i` of each input, all of the
    /// output's shape (unary, binary, cast, select): `compile` fuses chains of these and
    /// evaluates them on blocks of rows.
    fn is_elementwise(&self) -> bool {
        false
    }

    /// The output shapes for inputs of shapes `inputs` (MLX's `output_shapes`): how a
    /// shapeless compiled or imported function replays this node at new input shapes.
    /// A node whose result shape is fixed at trace time (a slice, a pad) cannot say, and
    /// replaying it at any shape is an error, as in MLX.
    fn output_shapes(&self, _inputs: &[OutputSpec]) -> Result<Vec<Vec<usize>>> {
        Err(cannot_infer(self.name()))
    }

    /// The input that this node's one output equals at these input and output specs, if
    /// one does (a broadcast to the shape its input already has): a replay of a compiled
    /// or imported function then hands that input on and records no node. A shapeless
    /// trace broadcasts both operands of every binary op, which a replay at the traced
    /// shapes need not compute.
    fn passes_through(&self, _inputs: &[Array], _outputs: &[OutputSpec]) -> Option<usize> {
        None
    }

    /// Whether the kernel must run on the thread that asked for the value: it calls back
    /// into the host language (a custom function's forward) or talks to other processes
    /// (distributed ops). [`async_eval`](crate::async_eval) leaves graphs holding such a
    /// node to be evaluated when they are read.
    fn runs_on_caller(&self) -> bool {
        false
    }

    /// Computes the outputs from evaluated inputs. Inputs are owned so that a kernel can
    /// write into a buffer nobody else holds (donation).
    fn eval(&self, inputs: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>>;

    /// Whether nodes of this primitive whose inputs are ready at the same time may be
    /// computed in one call of [`Primitive::eval_together`]: the evaluation thread then
    /// gathers them (a decode step's products of one input, which share one parallel job
    /// instead of each paying for its start and end).
    fn runs_together(&self) -> bool {
        false
    }

    /// Computes several nodes of this primitive's type (`self` is the first's), one
    /// result per node, in order. By default, one after another.
    fn eval_together(&self, nodes: Vec<Together<'_>>) -> Vec<Result<Vec<Tensor>>> {
        nodes
            .into_iter()
            .map(|n| n.primitive.eval(n.inputs, n.outputs))
            .collect()
    }

    /// Cotangents of the inputs listed in `argnums`, from the cotangents of the outputs.
    /// Every primitive states its rule; one without says so with [`no_rule`].
    fn vjp(
        &self,
        inputs: &[Array],
        outputs: &[Array],
        cotangents: &[Array],
        argnums: &[usize],
    ) -> Result<Vec<Array>>;

    /// Tangents of the outputs from the tangents of the inputs listed in `argnums`.
    fn jvp(&self, inputs: &[Array], tangents: &[Array], argnums: &[usize]) -> Result<Vec<Array>>;

    /// How this node is written to an MLX function file (`.mlxfn`): as MLX primitives
    /// with their serialized state, or as the composition it stands for. `inputs` are
    /// the shapes and dtypes of the node's inputs.
    fn export(&self, _inputs: &[OutputSpec], _outputs: &[OutputSpec]) -> Result<Export> {
        Err(Error::value(format!(
            "[export_function] The operation {} has no MLX equivalent and cannot be exported.",
            self.name()
        )))
    }

    /// How many of the node's `inputs` (the first ones) an MLX file needs; the others only
    /// compute the node's value, and an export neither walks nor writes them.
    fn export_inputs(&self, inputs: usize) -> usize {
        inputs
    }

    /// The batched outputs and their batch axes, given inputs batched along `axes`
    /// (`None`: not batched).
    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)>;
}

/// The error of a transform (`"vjp"`, `"jvp"`, `"vmap"`) reaching a primitive that has
/// no rule for it: what a primitive's rule returns when it has none.
/// One node handed to [`Primitive::eval_together`]: its primitive, its evaluated inputs
/// and its outputs' specs, as [`Primitive::eval`] takes them.
pub(crate) struct Together<'a> {
    pub primitive: &'a dyn Primitive,
    pub inputs: Vec<Tensor>,
    pub outputs: &'a [OutputSpec],
}

pub(crate) fn no_rule(transform: &str, primitive: &str) -> Error {
    Error::not_implemented(format!(
        "Primitive's {transform} not implemented: {primitive}."
    ))
}

/// MLX's error for a node replayed shapelessly that cannot infer its output shapes;
/// `name` is lazulite's (`"slice"`), shown as MLX spells its primitives (`Slice`).
pub(crate) fn cannot_infer(name: &str) -> Error {
    let camel: String = name
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect();
    Error::value(format!(
        "[Primitive::output_shapes] {camel} cannot infer output shapes."
    ))
}

/// The shape of the first input (elementwise nodes, whose inputs share one shape).
pub(crate) fn same_shape(inputs: &[OutputSpec]) -> Result<Vec<Vec<usize>>> {
    Ok(vec![inputs
        .first()
        .map(|s| s.shape.clone())
        .unwrap_or_default()])
}

/// Shape and dtype of one output, fixed when the node is recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct OutputSpec {
    pub shape: Vec<usize>,
    pub dtype: crate::dtype::DType,
}

/// A function of arrays to arrays, such as the composition a fused node stands for.
pub(crate) type Composition = dyn Fn(&[Array]) -> Result<Vec<Array>> + Send + Sync;

/// What a node is written as in an MLX function file.
pub(crate) enum Export {
    /// MLX primitives in order; the node's outputs are the outputs of the last one.
    Nodes(Vec<MlxNode>),
    /// Ordinary ops with the node's inputs and outputs, exported in its place.
    Composed(Arc<Composition>),
}

/// One MLX primitive: its name as MLX's function files spell it (`"Add"`, `"Reduce"`), its
/// `state()` tuple, its inputs and outputs.
#[derive(Clone)]
pub(crate) struct MlxNode {
    pub name: &'static str,
    pub state: Vec<MlxState>,
    pub inputs: Vec<MlxInput>,
    pub outputs: Vec<OutputSpec>,
}

impl MlxNode {
    /// A primitive with one output.
    pub fn new(
        name: &'static str,
        state: Vec<MlxState>,
        inputs: Vec<MlxInput>,
        output: OutputSpec,
    ) -> MlxNode {
        MlxNode {
            name,
            state,
            inputs,
            outputs: vec![output],
        }
    }

    /// The primitives of a node that maps to one MLX primitive of the same inputs and
    /// outputs.
    pub fn single(
        name: &'static str,
        state: Vec<MlxState>,
        inputs: &[OutputSpec],
        outputs: &[OutputSpec],
    ) -> Result<Export> {
        Ok(Export::Nodes(vec![MlxNode {
            name,
            state,
            inputs: (0..inputs.len()).map(MlxInput::Input).collect(),
            outputs: outputs.to_vec(),
        }]))
    }
}

/// A chain of one-input MLX primitives after `first`: each takes the output of the one
/// before. Steps are `(name, state, output)`.
pub(crate) fn mlx_chain(
    first: MlxNode,
    then: Vec<(&'static str, Vec<MlxState>, OutputSpec)>,
) -> Result<Export> {
    let mut nodes = vec![first];
    for (name, state, output) in then {
        let input = MlxInput::Node(nodes.len() - 1);
        nodes.push(MlxNode::new(name, state, vec![input], output));
    }
    Ok(Export::Nodes(nodes))
}

/// `spec` with another shape.
pub(crate) fn with_shape(spec: &OutputSpec, shape: Vec<usize>) -> OutputSpec {
    OutputSpec {
        shape,
        dtype: spec.dtype,
    }
}

/// `shape` with `axes` set to 1.
pub(crate) fn kept_dims(shape: &[usize], axes: &[usize]) -> Vec<usize> {
    let mut kept = shape.to_vec();
    for &a in axes {
        kept[a] = 1;
    }
    kept
}

/// An input of an [`MlxNode`].
#[derive(Clone)]
pub(crate) enum MlxInput {
    /// Input `i` of the lazulite node.
    Input(usize),
    /// The first output of an earlier MLX primitive of the same node.
    Node(usize),
}

/// One field of an MLX primitive's `state()` tuple, in MLX's C++ types. An export to a
/// callback hands these to the callback as a primitive's arguments; the variants keep
/// the distinctions MLX's Python conversion makes (a `Shape` becomes a tuple, a
/// `std::vector<int>` a list).
///
/// ```
/// use lazulite::export::MlxState;
/// // A `Reshape` to (2, 3) records its shape; a `Transpose` records its axes.
/// assert_ne!(MlxState::Shape(vec![2, 3]), MlxState::Ints(vec![2, 3]));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum MlxState {
    /// `int`, and enums.
    Int(i32),
    /// `bool`.
    Bool(bool),
    /// `float`.
    Float(f32),
    /// `double`.
    Double(f64),
    /// `std::vector<int>` (axes, paddings, strides of convolutions).
    Ints(Vec<i32>),
    /// `Shape` (sizes and positions: of a reshape, a broadcast, a slice).
    Shape(Vec<i32>),
    /// `Dtype`.
    Dtype(crate::dtype::DType),
    /// `Strides` (`std::vector<int64_t>`).
    Int64s(Vec<i64>),
    /// `size_t`.
    Size(u64),
    /// `std::vector<size_t>`.
    Sizes(Vec<u64>),
    /// `std::string`.
    Str(String),
}

/// `values` as MLX's 32-bit `int`s (shapes and axes of exported arrays fit; a value that
/// does not is an error naming the operation).
fn mlx_i32s<T: Copy + TryInto<i32>>(op: &str, values: &[T]) -> Result<Vec<i32>> {
    values
        .iter()
        .map(|&v| v.try_into().ok())
        .collect::<Option<Vec<i32>>>()
        .ok_or_else(|| {
            Error::value(format!(
                "[export_function] A size or axis of {op} does not fit in MLX's 32-bit integers."
            ))
        })
}

/// `values` as an MLX `std::vector<int>` field (axes).
pub(crate) fn mlx_ints<T: Copy + TryInto<i32>>(op: &str, values: &[T]) -> Result<MlxState> {
    mlx_i32s(op, values).map(MlxState::Ints)
}

/// `values` as an MLX `Shape` field (sizes, slice bounds).
pub(crate) fn mlx_shape<T: Copy + TryInto<i32>>(op: &str, values: &[T]) -> Result<MlxState> {
    mlx_i32s(op, values).map(MlxState::Shape)
}
