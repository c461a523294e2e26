//! The `RandomBits` primitive: raw random bits from a key (or a batch of keys). The
//! distributions in [`crate::random`] are composed from it with ordinary ops.

use crate::array::Array;
use crate::backend::cpu::random::random_bits as bits_kernel;
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::{zeros, zeros_like};
use crate::primitive::{OutputSpec, Primitive};
use crate::shape::checked_size;
use crate::transforms::batch_to_front;

/// Random bits of `width` bytes per element, `shape` of them per key. The input holds
/// keys in its last axis (`[..., 2]`, uint32); the output has the key batch axes in
/// front of `shape`.
pub(crate) struct RandomBits {
    pub shape: Vec<usize>,
    pub width: usize,
}

impl Primitive for RandomBits {
    fn name(&self) -> &'static str {
        "random_bits"
    }

    fn params(&self) -> String {
        format!("shape={:?}, width={}", self.shape, self.width)
    }

    fn eval(&self, inputs: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let spec = &outputs[0];
        Ok(vec![bits_kernel(&inputs[0], spec.dtype, &spec.shape)?])
    }

    /// Bits do not change smoothly with the key: its cotangent is zero.
    fn vjp(&self, inputs: &[Array], _: &[Array], _: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        Ok(vec![zeros_like(&inputs[0])?])
    }

    fn jvp(&self, inputs: &[Array], _: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        let out = record_bits(&inputs[0], &self.shape, self.width)?;
        Ok(vec![zeros(out.shape(), out.dtype())?])
    }

    /// A batch of keys is just more keys: each one fills its own run of the output.
    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let keys = batch_to_front(&inputs[0], axes[0])?;
        Ok((
            vec![record_bits(&keys, &self.shape, self.width)?],
            vec![axes[0].map(|_| 0)],
        ))
    }
}

/// The unsigned dtype of `width`-byte random elements.
pub(crate) fn bits_dtype(width: usize) -> Result<DType> {
    match width {
        4 => Ok(DType::UInt32),
        2 => Ok(DType::UInt16),
        1 => Ok(DType::UInt8),
        _ => Err(Error::value(format!(
            "[bits] Bit width must be in {{1, 2, 4}} but got {width}."
        ))),
    }
}

/// Records random bits for keys of shape `[..., 2]`; the caller has checked the keys.
pub(crate) fn record_bits(keys: &Array, shape: &[usize], width: usize) -> Result<Array> {
    let dtype = bits_dtype(width)?;
    let mut out_shape = keys.shape()[..keys.ndim() - 1].to_vec();
    out_shape.extend_from_slice(shape);
    checked_size(&out_shape)?;
    Ok(Array::from_op(
        RandomBits {
            shape: shape.to_vec(),
            width,
        },
        vec![keys.clone()],
        out_shape,
        dtype,
    ))
}
