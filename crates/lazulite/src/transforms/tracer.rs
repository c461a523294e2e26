//! The leaf nodes transforms put in front of a function's inputs.

use crate::array::{Array, Flags};
use crate::backend::Tensor;
use crate::error::{Error, Result};
use crate::ops::{passed_through_export, passed_through_jvp, passed_through_vjp};
use crate::primitive::{no_rule, Export, OutputSpec, Primitive};

/// Identity node marking an input of a running grad/jvp: ops on it are flagged `traced`,
/// so evaluation inside the function keeps their graph for the transform to walk. MLX
/// has no such node, so an exported function that differentiates is written without it.
pub(crate) struct Tracer;

impl Primitive for Tracer {
    fn name(&self) -> &'static str {
        "tracer"
    }

    /// Its input's shape: a shapeless compiled function that differentiates replays it.
    fn output_shapes(&self, inputs: &[OutputSpec]) -> Result<Vec<Vec<usize>>> {
        crate::primitive::same_shape(inputs)
    }

    fn eval(&self, inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        Ok(inputs)
    }

    fn export(&self, inputs: &[OutputSpec], _: &[OutputSpec]) -> Result<Export> {
        Ok(passed_through_export(0..inputs.len()))
    }

    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        cotangents: &[Array],
        argnums: &[usize],
    ) -> Result<Vec<Array>> {
        passed_through_vjp(inputs, 0..inputs.len(), cotangents, argnums)
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], argnums: &[usize]) -> Result<Vec<Array>> {
        passed_through_jvp(inputs, 0..inputs.len(), tangents, argnums)
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        Ok((inputs.to_vec(), axes.to_vec()))
    }
}

/// A traced copy of `a`.
pub(crate) fn tracer(a: &Array) -> Array {
    let spec = OutputSpec {
        shape: a.shape().to_vec(),
        dtype: a.dtype(),
    };
    let flags = Flags {
        traced: true,
        ..Flags::default()
    };
    Array::from_op_with_flags(Tracer, vec![a.clone()], spec, flags)
}

/// Stands for one example of a batched input while `vmap` traces a function; it has no
/// value, so evaluating anything that depends on it is an error.
pub(crate) struct VmapInput;

impl Primitive for VmapInput {
    fn name(&self) -> &'static str {
        "vmap_input"
    }

    fn eval(&self, _: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        Err(Error::value(
            "[vmap] Cannot evaluate an array inside a vmapped function (its value depends on \
             the batched inputs; data-dependent operations are not supported under vmap).",
        ))
    }

    // A placeholder for a batched input inside vmap: replaced before any rule runs.
    fn vjp(&self, _: &[Array], _: &[Array], _: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        Err(no_rule("vjp", self.name()))
    }

    fn jvp(&self, _: &[Array], _: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        Err(no_rule("jvp", self.name()))
    }

    fn vmap(&self, _: &[Array], _: &[Option<usize>]) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        Err(no_rule("vmap", self.name()))
    }
}

/// The flags of a value-less stand-in for an input of a function being traced.
pub(crate) fn stand_in() -> Flags {
    Flags {
        stand_in: true,
        ..Flags::default()
    }
}

pub(crate) fn vmap_input(shape: Vec<usize>, dtype: crate::dtype::DType) -> Array {
    Array::from_op_with_flags(VmapInput, vec![], OutputSpec { shape, dtype }, stand_in())
}
