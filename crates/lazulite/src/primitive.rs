//! The [`Primitive`] trait: everything the engine knows about one kind of graph node.
//!
//! Each op family (unary, binary, reduce, ...) implements it in its own file under `ops/`,
//! next to the public functions that create its nodes.

use crate::array::Array;
use crate::backend::Tensor;
use crate::error::{Error, Result};
use std::any::Any;

/// A node's operation: how to compute it and, for the transforms, how to differentiate
/// and batch it.
pub(crate) trait Primitive: Send + Sync + Any {
    /// The name printed in graphs and error messages (`"sin"`, `"add"`, `"sum"`).
    fn name(&self) -> &'static str;

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

    /// Computes the outputs from evaluated inputs. Inputs are owned so that a kernel can
    /// write into a buffer nobody else holds (donation).
    fn eval(&self, inputs: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>>;

    /// Cotangents of the inputs listed in `argnums`, from the cotangents of the outputs.
    fn vjp(
        &self,
        _inputs: &[Array],
        _outputs: &[Array],
        _cotangents: &[Array],
        _argnums: &[usize],
    ) -> Result<Vec<Array>> {
        Err(Error::not_implemented(format!(
            "Primitive's vjp not implemented: {}.",
            self.name()
        )))
    }

    /// Tangents of the outputs from the tangents of the inputs listed in `argnums`.
    fn jvp(
        &self,
        _inputs: &[Array],
        _tangents: &[Array],
        _argnums: &[usize],
    ) -> Result<Vec<Array>> {
        Err(Error::not_implemented(format!(
            "Primitive's jvp not implemented: {}.",
            self.name()
        )))
    }

    /// The batched outputs and their batch axes, given inputs batched along `axes`
    /// (`None`: not batched).
    fn vmap(
        &self,
        _inputs: &[Array],
        _axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        Err(Error::not_implemented(format!(
            "Primitive's vmap not implemented: {}.",
            self.name()
        )))
    }
}

/// Shape and dtype of one output, fixed when the node is recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct OutputSpec {
    pub shape: Vec<usize>,
    pub dtype: crate::dtype::DType,
}
