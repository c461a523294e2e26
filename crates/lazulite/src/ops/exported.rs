//! The node an op records while a function is traced for export where MLX writes the op
//! otherwise than as lazulite's composition (`pad` as one `Pad`, `take` along a later
//! axis as MLX orders it, ...): [`ExportedAs`].

use crate::array::Array;
use crate::backend::Tensor;
use crate::error::Result;
use crate::ops::{passed_through_jvp, passed_through_vjp};
use crate::primitive::{Export, MlxInput, MlxNode, MlxState, OutputSpec, Primitive};

/// Stands for the outputs of an op's composition, written to MLX's files as the MLX
/// primitives `nodes` of the op's own inputs. Its inputs are the op's `given` inputs
/// followed by the composition's outputs, which it passes through: evaluating it and its
/// transforms follow the composition, while an export writes `nodes` (whose
/// `MlxInput::Input`s are the given inputs, the last node giving the outputs) and not the
/// composition.
pub(crate) struct ExportedAs {
    name: &'static str,
    nodes: Vec<MlxNode>,
    given: usize,
}

impl ExportedAs {
    /// `composed(inputs)`; while a function is traced for export, passed through one node
    /// that the file holds as the MLX primitive `mlx` with `state` (`name` is the op's).
    pub fn apply(
        name: &'static str,
        mlx: &'static str,
        state: impl FnOnce() -> Result<Vec<MlxState>>,
        inputs: Vec<Array>,
        composed: impl FnOnce(&[Array]) -> Result<Vec<Array>>,
    ) -> Result<Vec<Array>> {
        let nodes = |inputs: &[Array], outputs: &[Array]| {
            Ok(vec![MlxNode {
                name: mlx,
                state: state()?,
                inputs: (0..inputs.len()).map(MlxInput::Input).collect(),
                outputs: Array::specs(outputs),
            }])
        };
        ExportedAs::apply_nodes(name, nodes, inputs, composed)
    }

    /// `composed(inputs)`; while a function is traced for export, passed through one node
    /// that the file holds as the MLX primitives `nodes(inputs, outputs)`.
    pub fn apply_nodes(
        name: &'static str,
        nodes: impl FnOnce(&[Array], &[Array]) -> Result<Vec<MlxNode>>,
        inputs: Vec<Array>,
        composed: impl FnOnce(&[Array]) -> Result<Vec<Array>>,
    ) -> Result<Vec<Array>> {
        let outputs = composed(&inputs)?;
        if !crate::ops::trace::in_export_trace() {
            return Ok(outputs);
        }
        let node = ExportedAs {
            name,
            nodes: nodes(&inputs, &outputs)?,
            given: inputs.len(),
        };
        let out_specs = Array::specs(&outputs);
        let mut all = inputs;
        all.extend(outputs);
        Ok(Array::from_op_multi(node, all, out_specs))
    }
}

impl Primitive for ExportedAs {
    fn name(&self) -> &'static str {
        self.name
    }

    fn params(&self) -> String {
        let names: Vec<&str> = self.nodes.iter().map(|n| n.name).collect();
        format!("mlx={}", names.join("+"))
    }

    fn output_shapes(&self, inputs: &[OutputSpec]) -> Result<Vec<Vec<usize>>> {
        Ok(inputs[self.given..]
            .iter()
            .map(|s| s.shape.clone())
            .collect())
    }

    fn export(&self, _: &[OutputSpec], _: &[OutputSpec]) -> Result<Export> {
        Ok(Export::Nodes(self.nodes.clone()))
    }

    fn export_inputs(&self, _: usize) -> usize {
        self.given
    }

    fn eval(&self, mut inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        Ok(inputs.split_off(self.given))
    }

    /// The cotangents flow into the composition's outputs, and through them to the op's
    /// inputs.
    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        cotangents: &[Array],
        argnums: &[usize],
    ) -> Result<Vec<Array>> {
        passed_through_vjp(inputs, self.given..inputs.len(), cotangents, argnums)
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], argnums: &[usize]) -> Result<Vec<Array>> {
        passed_through_jvp(inputs, self.given..inputs.len(), tangents, argnums)
    }

    /// The composition's outputs, batched as they come (their MLX form is for the
    /// unbatched shapes).
    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        Ok((inputs[self.given..].to_vec(), axes[self.given..].to_vec()))
    }
}
