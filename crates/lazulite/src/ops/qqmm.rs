//! Products with quantized inputs, MLX's `qqmm` and `gather_qqmm`: both operands are
//! rounded through a floating-point quantization mode (`nvfp4`, `mxfp8`, `mxfp4`) before
//! they are multiplied, the way low-precision training runs its matrix products.
//!
//! The input `x` is always rounded on the fly; the weight `w` is rounded on the fly when
//! given as floats, or used as stored when given packed (with its scales). The rounding is
//! MLX's fused quantize-then-dequantize kernel ([`QuantizeDequantize`]), so a product with
//! a packed weight equals MLX's bit for bit up to the order of the sums.
//!
//! Gradients follow MLX's rule for `qqmm`: the derivative passes straight through the
//! rounding, and the backward products are quantized products themselves
//! (`dx = qqmm(g, w^T)`, `dw = qqmm(g^T, x^T)`), so they round the cotangent too.

use crate::array::Array;
use crate::backend::cpu::quantized::Packing;
use crate::backend::cpu::quantized::{fp, QuantizationMode};
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::batching::batch_to_front;
use crate::ops::linalg::{gather_mm, matmul};
use crate::ops::quantized::{
    check_global_scale, check_product, packing, unbatched_global_scale, Quantization,
};
use crate::ops::reduce::max;
use crate::ops::shape::{expand_dims, flatten, squeeze, swapaxes, unflatten};
use crate::ops::unary::abs;
use crate::ops::{astype, dequantize, zeros_like};
use crate::primitive::{OutputSpec, Primitive};
use crate::shape::{shape_text, Axes};
use crate::transforms::custom_function;

/// Rounds each group of the last axis through a floating-point quantization mode and
/// back (inputs: the array and, in nvfp4, maybe a global scale); the result keeps the
/// array's shape and dtype. Derivatives pass straight through the rounding.
#[derive(Clone, Copy)]
struct QuantizeDequantize {
    format: fp::Format,
    group_size: usize,
}

impl Primitive for QuantizeDequantize {
    fn name(&self) -> &'static str {
        "quantize_dequantize"
    }

    fn params(&self) -> String {
        format!("group_size={}, format={:?}", self.group_size, self.format)
    }

    fn eval(&self, mut inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let global = (inputs.len() == 2).then(|| inputs.pop()).flatten();
        let x = inputs.pop().expect("quantize_dequantize has an input");
        Ok(vec![fp::quantize_dequantize(
            x,
            global,
            self.format,
            self.group_size,
        )?])
    }

    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        cotangents: &[Array],
        argnums: &[usize],
    ) -> Result<Vec<Array>> {
        argnums
            .iter()
            .map(|&i| match i {
                0 => Ok(cotangents[0].clone()),
                _ => zeros_like(&inputs[i]),
            })
            .collect()
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], argnums: &[usize]) -> Result<Vec<Array>> {
        match argnums.iter().position(|&i| i == 0) {
            Some(at) => Ok(vec![tangents[at].clone()]),
            None => Ok(vec![zeros_like(&inputs[0])?]),
        }
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        unbatched_global_scale("qqmm", axes.get(1).copied().flatten())?;
        // Groups run along the last axis; a batch axis in front changes nothing.
        let x = batch_to_front(&inputs[0], axes[0])?;
        let out = self.record(&x, inputs.get(1));
        Ok((vec![out], vec![Some(0)]))
    }
}

impl QuantizeDequantize {
    fn new(packing: Packing) -> QuantizeDequantize {
        QuantizeDequantize {
            format: packing
                .mode
                .format()
                .expect("quantized inputs use a floating-point mode"),
            group_size: packing.group_size,
        }
    }

    fn record(&self, x: &Array, global: Option<&Array>) -> Array {
        let mut inputs = vec![x.clone()];
        inputs.extend(global.cloned());
        Array::from_op(*self, inputs, x.shape().to_vec(), x.dtype())
    }
}

/// Affine mode is refused: MLX's kernels cannot round activations in it.
fn check_mode(op: &str, q: Quantization) -> Result<()> {
    if q.mode == QuantizationMode::Affine {
        return Err(Error::value(format!(
            "[{op}] Quantized inputs are only supported in the floating-point modes 'nvfp4', \
             'mxfp8' and 'mxfp4', got 'affine'."
        )));
    }
    Ok(())
}

/// MLX's global-scale rules for a quantized-input product, then its mode checks; returns
/// the packing.
fn input_packing(
    op: &str,
    q: Quantization,
    global_scale_x: Option<&Array>,
    global_scale_w: Option<&Array>,
) -> Result<Packing> {
    check_global_scale(op, q.mode, global_scale_x)?;
    check_global_scale(op, q.mode, global_scale_w)?;
    if q.mode == QuantizationMode::Nvfp4 && global_scale_x.is_some() != global_scale_w.is_some() {
        return Err(Error::value(format!(
            "[{op}] For nvfp4 mode, either both global_scale_x and global_scale_w must be \
             provided, or neither."
        )));
    }
    packing(op, q)
}

/// MLX's dtype rule for a float operand of a quantized-input product.
fn check_float(op: &str, which: &str, a: &Array) -> Result<()> {
    if !a.dtype().is_floating() || a.dtype() == DType::Float64 {
        return Err(Error::value(format!(
            "[{op}] Only real floating types except float64 are supported but {which} \
             argument dtype == {}.",
            a.dtype()
        )));
    }
    Ok(())
}

/// A float operand's rounding needs whole groups along its last axis.
fn check_groups(op: &str, a: &Array, packing: Packing) -> Result<()> {
    let depth = a.shape().last().copied().unwrap_or(0);
    if depth % packing.group_size != 0 {
        return Err(Error::value(format!(
            "[{op}] The last dimension of an operand with shape {} must be divisible by the \
             quantization group size {}.",
            shape_text(a.shape()),
            packing.group_size
        )));
    }
    Ok(())
}

/// The weight of a quantized-input product as floats of `dtype`: rounded on the fly, or
/// dequantized from its packed form.
fn weight(
    w: &Array,
    scales: Option<&Array>,
    packing: Packing,
    global: Option<&Array>,
    dtype: DType,
) -> Result<Array> {
    match scales {
        None => Ok(QuantizeDequantize::new(packing).record(w, global)),
        Some(scales) => {
            let dense = dequantize(w, scales, None, packing.into(), global, Some(dtype))?;
            if dense.dtype() == dtype {
                Ok(dense)
            } else {
                astype(&dense, dtype)
            }
        }
    }
}

/// The two-dimensional product `round(x) @ round(w)^T`, with MLX's gradient rule.
/// `inputs`: `x` `(M, K)`, `w` `(N, K)` (floats) or packed with its scales, then the two
/// global scales when given.
fn product_2d(inputs: Vec<Array>, packing: Packing, packed: bool) -> Result<Array> {
    let forward = move |inputs: &[Array]| -> Result<Vec<Array>> {
        let x = &inputs[0];
        let scales = packed.then(|| &inputs[2]);
        let globals = &inputs[2 + usize::from(packed)..];
        let (gx, gw) = (globals.first(), globals.get(1));
        let x_hat = QuantizeDequantize::new(packing).record(x, gx);
        let w_hat = weight(&inputs[1], scales, packing, gw, x.dtype())?;
        Ok(vec![matmul(&x_hat, &swapaxes(&w_hat, -1, -2)?)?])
    };
    let backward = move |primals: &[Array], cotangents: &[Array], _: &[Array]| {
        let (x, g) = (&primals[0], &cotangents[0]);
        let q = Quantization::from(packing);
        let globals = &primals[2 + usize::from(packed)..];
        // With global scales, the cotangent's is its largest magnitude (MLX's choice).
        let g_scale = match globals.is_empty() {
            true => None,
            false => Some(astype(&max(&abs(g)?, Axes::All, false)?, DType::Float32)?),
        };
        let w = match packed {
            true => weight(
                &primals[1],
                Some(&primals[2]),
                packing,
                globals.get(1),
                x.dtype(),
            )?,
            false => primals[1].clone(),
        };
        let dx = qqmm(
            g,
            &swapaxes(&w, -1, -2)?,
            None,
            q,
            g_scale.as_ref(),
            globals.get(1),
        )?;
        let mut grads = vec![dx];
        grads.push(match packed {
            true => zeros_like(&primals[1])?,
            false => qqmm(
                &swapaxes(g, -1, -2)?,
                &swapaxes(x, -1, -2)?,
                None,
                q,
                g_scale.as_ref(),
                globals.first(),
            )?,
        });
        for p in &primals[2..] {
            grads.push(zeros_like(p)?);
        }
        Ok(grads)
    };
    let mut out = custom_function(forward).vjp(backward).call(&inputs)?;
    Ok(out.remove(0))
}

/// Multiplies `x` by the transpose of `w` after rounding both through a floating-point
/// quantization mode, as MLX's `qqmm`: `x` `(..., K)` is quantized on the fly along `K`;
/// `w` is a float matrix `(N, K)` quantized on the fly, or a packed one with its `scales`
/// (from [`quantize`](crate::quantize) in the same mode). The result `(..., N)` has `x`'s
/// dtype (float32, float16 or bfloat16).
///
/// `q` is `nvfp4` (groups of 16, MLX's default for this function), `mxfp8` or `mxfp4`;
/// nvfp4 also takes the global scales of `x` and `w` (both or neither; the one of a
/// packed `w` is the one it was quantized with). Gradients pass straight through the
/// rounding, with quantized backward products as in MLX; a packed `w` gets none.
///
/// ```
/// use lazulite::{allclose, dequantize, matmul, qqmm, quantize, random, swapaxes};
/// use lazulite::{DType, Quantization, QuantizationMode};
/// let q = Quantization::new(QuantizationMode::Mxfp8);
/// let w = random::normal(&[8, 64], DType::Float32, None, None, None)?;
/// let x = random::normal(&[2, 64], DType::Float32, None, None, None)?;
/// let y = qqmm(&x, &w, None, q, None, None)?;
/// // The same as multiplying the operands after quantizing and dequantizing them.
/// let round = |a| -> lazulite::Result<_> {
///     let (a_q, s, _) = quantize(a, q, None)?;
///     dequantize(&a_q, &s, None, q, None, Some(DType::Float32))
/// };
/// let expected = matmul(&round(&x)?, &swapaxes(&round(&w)?, 0, 1)?)?;
/// assert!(allclose(&y, &expected, 1e-5, 1e-5, false)?.item::<bool>()?);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn qqmm(
    x: &Array,
    w: &Array,
    scales: Option<&Array>,
    q: Quantization,
    global_scale_x: Option<&Array>,
    global_scale_w: Option<&Array>,
) -> Result<Array> {
    const OP: &str = "qqmm";
    check_mode(OP, q)?;
    let original = x.shape().to_vec();
    let x2 = match x.ndim() {
        1 => expand_dims(x, 0)?,
        n if n > 2 && w.ndim() == 2 => flatten(x, 0, -2)?,
        _ => x.clone(),
    };
    if x2.ndim() == 0 {
        return Err(Error::value(format!(
            "[{OP}] The first input must have at least 1 dimension but it is a scalar."
        )));
    }
    if x2.ndim() > 2 || w.ndim() > 2 {
        return Err(Error::value(format!(
            "[{OP}] Only 2D inputs are supported but x.ndim() == {} and w.ndim() == {}.",
            x2.ndim(),
            w.ndim()
        )));
    }
    let packed = w.dtype() == DType::UInt32;
    if packed {
        let Some(scales) = scales else {
            return Err(Error::value(format!(
                "[{OP}] Scales must be provided if second argument is quantized."
            )));
        };
        check_product(OP, &x2, w, scales, None, true, q)?;
        check_float(OP, "first", &x2)?;
    }
    let packing = input_packing(OP, q, global_scale_x, global_scale_w)?;
    if !packed {
        check_float(OP, "second", w)?;
        check_float(OP, "first", &x2)?;
        if w.ndim() < 2 || x2.shape()[1] != w.shape()[w.ndim() - 1] {
            return Err(Error::value(format!(
                "[{OP}] Last dimension of first input with shape {} must match last \
                 dimension of second input with shape {}.",
                shape_text(x2.shape()),
                shape_text(w.shape())
            )));
        }
        check_groups(OP, w, packing)?;
    }
    let mut inputs = vec![x2, w.clone()];
    if packed {
        inputs.extend(scales.cloned());
    }
    if let (Some(gx), Some(gw)) = (global_scale_x, global_scale_w) {
        inputs.extend([gx.clone(), gw.clone()]);
    }
    let out = product_2d(inputs, packing, packed)?;
    match original.len() {
        1 => squeeze(&out, 0),
        n if n > 2 => {
            let rows: Vec<i64> = original[..n - 1].iter().map(|&d| d as i64).collect();
            unflatten(&out, 0, &rows)
        }
        _ => Ok(out),
    }
}

/// [`qqmm`] of matrices picked by index, as [`gather_mm`] picks them (MLX's
/// `gather_qqmm`): `out[i] = round(x[lhs[i]]) @ round(W[rhs[i]])^T`, where `x` is
/// `(..., M, K)` and `w` a stack of float matrices `(..., N, K)` or of packed ones with
/// their `scales`. The result has shape `batch + (M, N)` for the broadcast index shape
/// `batch`, and `x`'s dtype. Gradients pass straight through the rounding.
///
/// ```
/// use lazulite::{allclose, gather_qqmm, idx, index, qqmm, random, take, Array, DType};
/// use lazulite::{Quantization, QuantizationMode};
/// let q = Quantization::new(QuantizationMode::Nvfp4);
/// let experts = random::normal(&[3, 8, 32], DType::Float32, None, None, None)?;
/// let x = random::normal(&[1, 32], DType::Float32, None, None, None)?;
/// let pick = Array::from_slice(&[2u32, 0], &[2])?;
/// let out = gather_qqmm(&x, &experts, None, None, Some(&pick), q, None, None)?;
/// assert_eq!(out.shape(), &[2, 1, 8]);
/// let first = qqmm(&x, &take(&experts, &Array::scalar(2u32), Some(0))?, None, q, None, None)?;
/// assert!(allclose(&index(&out, &idx![0])?, &first, 1e-6, 1e-6, false)?.item::<bool>()?);
/// # Ok::<(), lazulite::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn gather_qqmm(
    x: &Array,
    w: &Array,
    scales: Option<&Array>,
    lhs_indices: Option<&Array>,
    rhs_indices: Option<&Array>,
    q: Quantization,
    global_scale_x: Option<&Array>,
    global_scale_w: Option<&Array>,
) -> Result<Array> {
    const OP: &str = "gather_qqmm";
    check_mode(OP, q)?;
    let packing = input_packing(OP, q, global_scale_x, global_scale_w)?;
    check_float(OP, "first", x)?;
    if x.ndim() < 2 || w.ndim() < 2 {
        return Err(Error::value(format!(
            "[{OP}] Inputs must have at least two dimensions but got x with shape {} and w \
             with shape {}.",
            shape_text(x.shape()),
            shape_text(w.shape())
        )));
    }
    let packed = w.dtype() == DType::UInt32;
    match (packed, scales) {
        (true, None) => {
            return Err(Error::value(format!(
                "[{OP}] Scales must be provided if second argument is quantized."
            )))
        }
        (true, Some(scales)) => {
            check_product(OP, x, w, scales, None, true, q)?;
        }
        (false, _) => {
            check_float(OP, "second", w)?;
            if x.shape()[x.ndim() - 1] != w.shape()[w.ndim() - 1] {
                return Err(Error::value(format!(
                    "[{OP}] Last dimension of first input with shape {} must match last \
                     dimension of second input with shape {}.",
                    shape_text(x.shape()),
                    shape_text(w.shape())
                )));
            }
            check_groups(OP, w, packing)?;
        }
    }
    let x_hat = QuantizeDequantize::new(packing).record(x, global_scale_x);
    let w_hat = weight(
        w,
        scales.filter(|_| packed),
        packing,
        global_scale_w,
        x.dtype(),
    )?;
    let unbatched = lhs_indices.is_none() && rhs_indices.is_none();
    if unbatched && w.ndim() == 2 && x.ndim() == 2 {
        return matmul(&x_hat, &swapaxes(&w_hat, -1, -2)?);
    }
    let pick = |indices: Option<&Array>, a: &Array| -> Result<Array> {
        match indices {
            Some(i) => Ok(i.clone()),
            None => crate::ops::linalg::indices_or_default(OP, None, a),
        }
    };
    let (lhs, rhs) = (pick(lhs_indices, x)?, pick(rhs_indices, w)?);
    gather_mm(&x_hat, &swapaxes(&w_hat, -1, -2)?, Some(&lhs), Some(&rhs))
}
