//! `depends`: arrays equal to some inputs that, when evaluated, first evaluate other
//! arrays (MLX's way of ordering side effects in a lazy graph).

use crate::array::Array;
use crate::backend::Tensor;
use crate::error::{Error, Result};
use crate::ops::creation::zeros_like;
use crate::primitive::{Export, MlxNode, OutputSpec, Primitive};
use std::ops::Range;
use std::sync::Arc;

/// Passes its first `passed` inputs through; the remaining inputs are the dependencies,
/// evaluated before it but not read.
struct Depends {
    passed: usize,
}

impl Primitive for Depends {
    fn name(&self) -> &'static str {
        "depends"
    }

    fn eval(&self, inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        Ok(inputs.into_iter().take(self.passed).collect())
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        MlxNode::single("Depends", vec![], inputs, outputs)
    }

    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        cotangents: &[Array],
        argnums: &[usize],
    ) -> Result<Vec<Array>> {
        passed_through_vjp(inputs, 0..self.passed, cotangents, argnums)
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], argnums: &[usize]) -> Result<Vec<Array>> {
        passed_through_jvp(inputs, 0..self.passed, tangents, argnums)
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let (passed, dependencies) = inputs.split_at(self.passed);
        Ok((depends(passed, dependencies)?, axes[..self.passed].to_vec()))
    }
}

/// Arrays equal to `inputs` whose evaluation first evaluates `dependencies` (their values
/// are not used). Gradients flow to `inputs` only.
///
/// ```
/// use lazulite::{depends, Array};
/// let a = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
/// let side = lazulite::multiply(&a, 3.0).unwrap();
/// let out = depends(&[a.clone()], &[side.clone()]).unwrap();
/// assert_eq!(out[0].to_vec::<f32>().unwrap(), vec![1.0, 2.0]);
/// assert!(side.is_evaluated());
/// ```
pub fn depends(inputs: &[Array], dependencies: &[Array]) -> Result<Vec<Array>> {
    if inputs.is_empty() {
        return Err(Error::value("[depends] At least one input is required."));
    }
    let outputs = Array::specs(inputs);
    let all = inputs.iter().chain(dependencies).cloned().collect();
    Ok(Array::from_op_multi(
        Depends {
            passed: inputs.len(),
        },
        all,
        outputs,
    ))
}

/// The vjp of a node whose outputs are its inputs `passed`, unchanged: their cotangents
/// flow to those inputs, and the other inputs get zeros.
pub(crate) fn passed_through_vjp(
    inputs: &[Array],
    passed: Range<usize>,
    cotangents: &[Array],
    argnums: &[usize],
) -> Result<Vec<Array>> {
    argnums
        .iter()
        .map(|&i| match i.checked_sub(passed.start) {
            Some(j) if passed.contains(&i) => Ok(cotangents[j].clone()),
            _ => zeros_like(&inputs[i]),
        })
        .collect()
}

/// The jvp of a node whose outputs are its inputs `passed`, unchanged: their tangents
/// (zeros for inputs not in `argnums`).
pub(crate) fn passed_through_jvp(
    inputs: &[Array],
    passed: Range<usize>,
    tangents: &[Array],
    argnums: &[usize],
) -> Result<Vec<Array>> {
    passed
        .map(|i| match argnums.iter().position(|&a| a == i) {
            Some(k) => Ok(tangents[k].clone()),
            None => zeros_like(&inputs[i]),
        })
        .collect()
}

/// The export of a node whose outputs are its inputs `passed`, unchanged: the node
/// vanishes from the file, its outputs being those inputs (a node MLX does not record,
/// such as a transform's tracer).
pub(crate) fn passed_through_export(passed: Range<usize>) -> Export {
    Export::Composed(Arc::new(move |inputs: &[Array]| {
        Ok(inputs[passed.clone()].to_vec())
    }))
}
