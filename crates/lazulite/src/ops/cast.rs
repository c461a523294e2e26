//! Dtype conversion: the `AsType` primitive.

use crate::array::Array;
use crate::backend::cpu::elementwise::cast;
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::element::dispatch;
use crate::error::Result;
use crate::ops::creation::{full_like, zeros_like};
use crate::ops::eager::{own, record_elementwise};
use crate::primitive::{Export, MlxNode, MlxState, OutputSpec, Primitive};

pub(crate) struct AsType(pub DType);

impl Primitive for AsType {
    fn name(&self) -> &'static str {
        "astype"
    }

    fn is_elementwise(&self) -> bool {
        true
    }

    fn output_shapes(&self, inputs: &[OutputSpec]) -> Result<Vec<Vec<usize>>> {
        crate::primitive::same_shape(inputs)
    }

    fn params(&self) -> String {
        format!("dtype={}", self.0)
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        MlxNode::single("AsType", vec![MlxState::Dtype(self.0)], inputs, outputs)
    }

    fn eval(&self, mut inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let x = inputs.pop().expect("astype has one input");
        let out = dispatch!(x.dtype, I => dispatch!(self.0, O => cast::<I, O>(x)))?;
        Ok(vec![out])
    }

    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        cotangents: &[Array],
        _: &[usize],
    ) -> Result<Vec<Array>> {
        // A cast to an integer or bool dtype is piecewise constant: its derivative is zero
        // (casting the cotangent instead would truncate it, keeping its integer part).
        if !self.0.is_inexact() {
            return Ok(vec![zeros_like(&inputs[0])?]);
        }
        Ok(vec![astype(&cotangents[0], inputs[0].dtype())?])
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        if !self.0.is_inexact() {
            return Ok(vec![full_like(&inputs[0], 0, Some(self.0))?]);
        }
        Ok(vec![astype(&tangents[0], self.0)?])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        Ok((vec![astype(&inputs[0], self.0)?], axes.to_vec()))
    }
}

/// `a` converted to `dtype` (NumPy `astype` semantics: floats truncate toward zero into
/// integers, out-of-range values wrap as a C cast). Returns `a` itself when the dtype
/// already matches.
///
/// ```
/// use lazulite::{astype, Array, DType};
/// let a = Array::from_slice(&[1.7f32, -2.5], &[2]).unwrap();
/// assert_eq!(astype(&a, DType::Int32).unwrap().to_vec::<i32>().unwrap(), vec![1, -2]);
/// ```
pub fn astype(a: &Array, dtype: DType) -> Result<Array> {
    if a.dtype() == dtype {
        return Ok(a.clone());
    }
    let spec = OutputSpec {
        shape: a.shape().to_vec(),
        dtype,
    };
    Ok(record_elementwise(
        AsType(dtype),
        vec![a.clone()],
        spec,
        own,
    ))
}
