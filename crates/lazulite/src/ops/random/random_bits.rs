//! The `RandomBits` primitive: raw random bits from a key (or a batch of keys). The
//! distributions of the parent module are composed from it with ordinary ops.

use crate::array::Array;
use crate::backend::cpu::random::{random_bits, random_unit};
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::batching::batch_to_front;
use crate::ops::creation::{zeros, zeros_like};
use crate::primitive::{mlx_shape, Export, MlxNode, MlxState, OutputSpec, Primitive};
use crate::shape::checked_size;

/// What a [`RandomBits`] node makes of each key's stream of 32-bit words.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Draw {
    /// The bits themselves, `width` bytes per element (uint32, uint16 or uint8).
    Bits { width: usize },
    /// Uniform floats in `[0, 1)` of a real float dtype, one word each (MLX's `uniform`
    /// recipe fused into the generating pass).
    Unit { dtype: DType },
}

impl Draw {
    fn dtype(self) -> Result<DType> {
        match self {
            Draw::Bits { width } => bits_dtype(width),
            Draw::Unit { dtype } => Ok(dtype),
        }
    }
}

/// Random draws from a key, `shape` of them per key. The input holds keys in its last
/// axis (`[..., 2]`, uint32); the output has the key batch axes in front of `shape`.
pub(crate) struct RandomBits {
    pub shape: Vec<usize>,
    pub draw: Draw,
}

impl Primitive for RandomBits {
    fn name(&self) -> &'static str {
        "random_bits"
    }

    fn params(&self) -> String {
        format!("shape={:?}, draw={:?}", self.shape, self.draw)
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        match self.draw {
            Draw::Bits { width } => {
                let state = vec![
                    mlx_shape("random_bits", &self.shape)?,
                    MlxState::Int(width as i32),
                ];
                MlxNode::single("RandomBits", state, inputs, outputs)
            }
            Draw::Unit { .. } => Err(Error::value(
                "[export_function] Uniform draws fused with their bits cannot be exported yet.",
            )),
        }
    }

    fn eval(&self, inputs: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let spec = &outputs[0];
        let out = match self.draw {
            Draw::Bits { .. } => random_bits(&inputs[0], spec.dtype, &spec.shape)?,
            Draw::Unit { dtype } => random_unit(&inputs[0], dtype, &spec.shape)?,
        };
        Ok(vec![out])
    }

    /// Bits do not change smoothly with the key: its cotangent is zero.
    fn vjp(&self, inputs: &[Array], _: &[Array], _: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        Ok(vec![zeros_like(&inputs[0])?])
    }

    fn jvp(&self, inputs: &[Array], _: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        let out = record_draw(&inputs[0], &self.shape, self.draw)?;
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
            vec![record_draw(&keys, &self.shape, self.draw)?],
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

/// Records random draws for keys of shape `[..., 2]`; the caller has checked the keys
/// (and, for [`Draw::Unit`], that the dtype is a real float).
pub(crate) fn record_draw(keys: &Array, shape: &[usize], draw: Draw) -> Result<Array> {
    let dtype = draw.dtype()?;
    let mut out_shape = keys.shape()[..keys.ndim() - 1].to_vec();
    out_shape.extend_from_slice(shape);
    checked_size(&out_shape)?;
    Ok(Array::from_op(
        RandomBits {
            shape: shape.to_vec(),
            draw,
        },
        vec![keys.clone()],
        out_shape,
        dtype,
    ))
}
