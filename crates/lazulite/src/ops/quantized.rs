//! Quantization with MLX's formats and arithmetic: [`quantize`], [`dequantize`],
//! [`quantized_matmul`] and [`gather_qmm`], in the four modes of [`QuantizationMode`].
//!
//! Affine: every `group_size` consecutive elements of a row share a scale `s` and a bias
//! `b`; an element is stored as a `bits`-bit level `q` with value `s * q + b`, packed
//! little-end first into uint32 words (see `backend/cpu/quantized.rs`). Quantizing
//! float16, bfloat16 and float32 gives MLX's words, scales and biases bit for bit;
//! float64, which MLX's CPU backend refuses, is quantized in float64.
//!
//! Floating-point modes (`mxfp4`, `mxfp8`, `nvfp4`): every group shares an 8-bit scale
//! (uint8) and its elements are small floats, E2M1 or E4M3, with no bias (see
//! `backend/cpu/quantized/fp.rs`). Words and scales are MLX's bit for bit for every float
//! dtype, float64 included.

use crate::array::Array;
use crate::backend::cpu::quantized as kernel;
pub use crate::backend::cpu::quantized::QuantizationMode;
use crate::backend::cpu::quantized::{Packing, Product};
use crate::backend::Tensor;
use crate::dtype::{promote_types, DType};
use crate::error::{Error, Result};
use crate::ops::batching::batch_to_front;
use crate::ops::binary::{add, multiply};
use crate::ops::cast::astype;
use crate::ops::creation::{ones_like, zeros, zeros_like};
use crate::ops::linalg::{indices_or_default, matmul, matrix_stack};
use crate::ops::reduce::sum;
use crate::ops::shape::{expand_dims, squeeze, swapaxes};
use crate::ops::view::{broadcast_to, reshape};
use crate::primitive::{Export, MlxNode, MlxState, OutputSpec, Primitive, Together};
use crate::shape::{broadcast_shapes, shape_text};
use std::any::Any;

/// A quantization mode with its group size and bits per element.
///
/// [`Quantization::new`] takes MLX's defaults for a mode (affine: groups of 64 at 4 bits;
/// mxfp4: 32 at 4; mxfp8: 32 at 8; nvfp4: 16 at 4); [`Quantization::affine`] names
/// both numbers. The numbers are checked by the functions that use them.
///
/// ```
/// use lazulite::{Quantization, QuantizationMode};
/// let q = Quantization::new(QuantizationMode::Mxfp8);
/// assert_eq!((q.group_size, q.bits), (32, 8));
/// assert_eq!(Quantization::default(), Quantization::affine(64, 4));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quantization {
    /// How groups and elements are encoded.
    pub mode: QuantizationMode,
    /// Consecutive elements of a row sharing a scale (and a bias, in affine mode).
    pub group_size: i32,
    /// Bits per stored element.
    pub bits: i32,
}

impl Quantization {
    /// `mode` with MLX's default group size and bits.
    ///
    /// ```
    /// use lazulite::{Quantization, QuantizationMode};
    /// let q = Quantization::new(QuantizationMode::Nvfp4);
    /// assert_eq!((q.group_size, q.bits), (16, 4));
    /// ```
    pub fn new(mode: QuantizationMode) -> Quantization {
        Quantization {
            mode,
            group_size: mode.default_group_size(),
            bits: mode.default_bits(),
        }
    }

    /// Affine quantization with `group_size` (32, 64 or 128) and `bits` (1, 2, 3, 4, 5, 6
    /// or 8).
    ///
    /// ```
    /// use lazulite::{quantize, Array, Quantization};
    /// let w = Array::from_slice(&[0.5f32; 64], &[1, 64])?;
    /// let (words, scales, biases) = quantize(&w, Quantization::affine(32, 8), None)?;
    /// assert_eq!(words.shape(), [1, 16]); // 64 levels of 8 bits in 32-bit words
    /// assert_eq!(scales.shape(), [1, 2]); // one per group of 32
    /// assert!(biases.is_some());
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn affine(group_size: i32, bits: i32) -> Quantization {
        Quantization {
            mode: QuantizationMode::Affine,
            group_size,
            bits,
        }
    }

    /// `mode` with the given group size and bits, MLX's defaults for those not given (as
    /// MLX's Python functions take them).
    ///
    /// ```
    /// use lazulite::{Quantization, QuantizationMode};
    /// let q = Quantization::with(QuantizationMode::Affine, None, Some(8));
    /// assert_eq!(q, Quantization::affine(64, 8));
    /// ```
    pub fn with(mode: QuantizationMode, group_size: Option<i32>, bits: Option<i32>) -> Self {
        Quantization {
            mode,
            group_size: group_size.unwrap_or(mode.default_group_size()),
            bits: bits.unwrap_or(mode.default_bits()),
        }
    }
}

impl Default for Quantization {
    /// MLX's default: affine, groups of 64, 4 bits.
    fn default() -> Quantization {
        Quantization::new(QuantizationMode::Affine)
    }
}

impl From<Packing> for Quantization {
    /// The quantization a checked packing stands for (the inverse of [`packing`]).
    fn from(p: Packing) -> Quantization {
        Quantization {
            mode: p.mode,
            group_size: p.group_size as i32,
            bits: p.bits as i32,
        }
    }
}

/// The error of a vmap over `op` whose global scale (always one value) would be batched.
pub(crate) fn unbatched_global_scale(op: &str, axis: Option<usize>) -> Result<()> {
    match axis {
        Some(_) => Err(Error::value(format!(
            "[{op}] The global scale cannot be batched: it is one value."
        ))),
        None => Ok(()),
    }
}

/// The group sizes MLX supports in affine mode.
const GROUP_SIZES: [i32; 3] = [32, 64, 128];
/// The bit widths MLX supports in affine mode.
const BITS: [i32; 7] = [1, 2, 3, 4, 5, 6, 8];

/// Checks `q`'s group size and bits against those its mode supports.
pub(crate) fn packing(op: &str, q: Quantization) -> Result<Packing> {
    let Quantization {
        mode,
        group_size,
        bits,
    } = q;
    if mode == QuantizationMode::Affine {
        if !GROUP_SIZES.contains(&group_size) {
            return Err(Error::value(format!(
                "[{op}] The requested group size {group_size} is not supported. The supported \
                 group sizes are 32, 64, and 128."
            )));
        }
        if !BITS.contains(&bits) {
            return Err(Error::value(format!(
                "[{op}] The requested number of bits {bits} is not supported. The supported \
                 bits are 1, 2, 3, 4, 5, 6 and 8."
            )));
        }
    } else {
        let (expected_gs, expected_bits) = (mode.default_group_size(), mode.default_bits());
        if group_size != expected_gs {
            return Err(Error::value(format!(
                "[{op}] {mode} quantization requires group size {expected_gs} but got \
                 {group_size}."
            )));
        }
        if bits != expected_bits {
            return Err(Error::value(format!(
                "[{op}] {mode} quantization requires bits to be {expected_bits} but got {bits}."
            )));
        }
    }
    Ok(Packing {
        group_size: group_size as usize,
        bits: bits as usize,
        mode,
    })
}

/// MLX's checks of a global scale: nvfp4 only, one float32 element.
pub(crate) fn check_global_scale(
    op: &str,
    mode: QuantizationMode,
    global: Option<&Array>,
) -> Result<()> {
    let Some(g) = global else { return Ok(()) };
    if mode != QuantizationMode::Nvfp4 {
        return Err(Error::value(format!(
            "[{op}] Global scale is only supported for 'nvfp4' quantization mode."
        )));
    }
    if g.size() != 1 {
        return Err(Error::value(format!(
            "[{op}] Global scale must be a scalar but got shape {}.",
            shape_text(g.shape())
        )));
    }
    if g.dtype() != DType::Float32 {
        return Err(Error::value(format!(
            "[{op}] Global scale must have dtype float32 but got {}.",
            g.dtype()
        )));
    }
    Ok(())
}

/// MLX's checks of the scales and biases for `mode`; returns the dtype they give the
/// result (affine: the promoted float dtype of scales and biases; otherwise bfloat16).
fn check_scales(
    op: &str,
    mode: QuantizationMode,
    scales: &Array,
    biases: Option<&Array>,
    dtype: Option<DType>,
) -> Result<DType> {
    if let Some(d) = dtype.filter(|d| !d.is_floating()) {
        return Err(Error::value(format!(
            "[{op}] Only real floating types are supported but output dtype == {d}."
        )));
    }
    if mode == QuantizationMode::Affine {
        let Some(biases) = biases else {
            return Err(Error::value(format!(
                "[{op}] Biases must be provided for affine quantization."
            )));
        };
        let promoted = promote_types(scales.dtype(), biases.dtype());
        if !promoted.is_floating() {
            return Err(Error::value(format!(
                "[{op}] Only real floating types are supported but scales.dtype() == {} and \
                 biases.dtype() == {}.",
                scales.dtype(),
                biases.dtype()
            )));
        }
        return Ok(dtype.unwrap_or(promoted));
    }
    if scales.dtype() != DType::UInt8 {
        return Err(Error::value(format!(
            "[{op}] Scale type must be uint8 but received type {}.",
            scales.dtype()
        )));
    }
    if biases.is_some() {
        return Err(Error::value(format!(
            "[{op}] Biases must be null for quantization mode '{mode}'."
        )));
    }
    Ok(dtype.unwrap_or(DType::BFloat16))
}

fn dims(a: &Array) -> Vec<i64> {
    a.shape().iter().map(|&d| d as i64).collect()
}

/// `a` with its last axis split into groups: `(..., G * gs)` -> `(..., G, gs)`.
fn grouped(a: &Array, group_size: usize) -> Result<Array> {
    let mut shape = dims(a);
    let last = shape.pop().unwrap_or(0);
    shape.extend([last / group_size as i64, group_size as i64]);
    reshape(a, &shape)
}

/// `a`'s groups joined back: `(..., G, gs)` -> `(..., G * gs)`.
fn ungrouped(a: &Array) -> Result<Array> {
    let mut shape = dims(a);
    let gs = shape.pop().unwrap_or(1);
    let g = shape.pop().unwrap_or(1);
    shape.push(g * gs);
    reshape(a, &shape)
}

/// Quantizes a float matrix along its last axis; in nvfp4 mode a second input may be the
/// global scale.
struct Quantize {
    packing: Packing,
}

impl Primitive for Quantize {
    fn name(&self) -> &'static str {
        "quantize"
    }

    fn params(&self) -> String {
        let p = self.packing;
        let mut text = format!("group_size={}, bits={}", p.group_size, p.bits);
        if p.mode != QuantizationMode::Affine {
            text += &format!(", mode={}", p.mode);
        }
        text
    }

    fn eval(&self, mut inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        match self.packing.mode.format() {
            None => {
                let w = inputs.pop().expect("quantize has one input");
                Ok(kernel::quantize(w, self.packing)?.into())
            }
            Some(format) => {
                let global = (inputs.len() == 2).then(|| inputs.pop()).flatten();
                let w = inputs.pop().expect("quantize has an input");
                Ok(kernel::fp::quantize(w, global, format, self.packing.group_size)?.into())
            }
        }
    }

    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        _: &[Array],
        argnums: &[usize],
    ) -> Result<Vec<Array>> {
        // Rounding is flat almost everywhere: as MLX, the gradient is zero.
        argnums.iter().map(|&i| zeros_like(&inputs[i])).collect()
    }

    fn jvp(&self, inputs: &[Array], _: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        output_specs(&inputs[0], self.packing)
            .into_iter()
            .map(|spec| zeros(&spec.shape, spec.dtype))
            .collect()
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        unbatched_global_scale("quantize", axes.get(1).copied().flatten())?;
        // Groups run along the last axis; a batch axis in front changes nothing.
        let w = batch_to_front(&inputs[0], axes[0])?;
        let out = quantize_with(&w, self.packing, inputs.get(1))?;
        let n = out.len();
        Ok((out, vec![Some(0); n]))
    }
}

/// The packed words, scales and (affine) biases of quantizing `w`.
fn output_specs(w: &Array, packing: Packing) -> Vec<OutputSpec> {
    let nd = w.ndim();
    let mut words = w.shape().to_vec();
    words[nd - 1] = w.shape()[nd - 1] * packing.bits / 32;
    let mut groups = w.shape().to_vec();
    groups[nd - 1] = w.shape()[nd - 1] / packing.group_size;
    let spec = |shape: &[usize], dtype| OutputSpec {
        shape: shape.to_vec(),
        dtype,
    };
    if packing.mode == QuantizationMode::Affine {
        vec![
            spec(&words, DType::UInt32),
            spec(&groups, w.dtype()),
            spec(&groups, w.dtype()),
        ]
    } else {
        vec![spec(&words, DType::UInt32), spec(&groups, DType::UInt8)]
    }
}

fn quantize_with(w: &Array, packing: Packing, global: Option<&Array>) -> Result<Vec<Array>> {
    let mut inputs = vec![w.clone()];
    inputs.extend(global.cloned());
    Ok(Array::from_op_multi(
        Quantize { packing },
        inputs,
        output_specs(w, packing),
    ))
}

/// Quantizes `w` along its last axis as MLX's `quantize`: every `group_size` consecutive
/// elements of a row share a scale, and each element is stored in `bits` bits, packed
/// into uint32 words of shape `(..., n * bits / 32)`.
///
/// - Affine mode (groups of 32, 64 or 128; 1, 2, 3, 4, 5, 6 or 8 bits): returns the words,
///   and the scales and biases (`Some`), of shape `(..., n / group_size)` and `w`'s dtype.
/// - `mxfp4`, `mxfp8`, `nvfp4`: returns the words and the scales as uint8, and `None`.
///   `global_scale` (nvfp4 only: a one-element float32 array) stores every scale times
///   `2688 / global_scale` (`2688 = 448 * 6`), which spreads them over E4M3's range when
///   `global_scale` is near the largest magnitude in `w`; pass it to [`dequantize`] too.
///
/// Words and scales are MLX's bit for bit.
///
/// ```
/// use lazulite::{dequantize, quantize, Array, Quantization, QuantizationMode};
/// let w = Array::from_slice(&(0..64).map(|i| i as f32).collect::<Vec<_>>(), &[1, 64])?;
/// let (w_q, scales, biases) = quantize(&w, Quantization::affine(64, 4), None)?;
/// assert_eq!(w_q.shape(), &[1, 8]);
/// assert_eq!(scales.shape(), &[1, 1]);
/// let back = dequantize(&w_q, &scales, biases.as_ref(), Quantization::affine(64, 4), None, None)?;
/// let err = (&back - &w).abs()?.max(lazulite::Axes::All, false)?.item::<f32>()?;
/// assert!(err <= 63.0 / 15.0 / 2.0 + 1e-4);
///
/// // mxfp4: 4-bit floats, a power-of-two scale per 32 elements, no biases.
/// let mx = Quantization::new(QuantizationMode::Mxfp4);
/// let (w_q, scales, biases) = quantize(&w, mx, None)?;
/// assert!(biases.is_none());
/// assert_eq!(scales.dtype(), lazulite::DType::UInt8);
/// let back = dequantize(&w_q, &scales, None, mx, None, Some(lazulite::DType::Float32))?;
/// assert_eq!(back.to_vec::<f32>()?[63], 64.0);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn quantize(
    w: &Array,
    q: Quantization,
    global_scale: Option<&Array>,
) -> Result<(Array, Array, Option<Array>)> {
    if !w.dtype().is_floating() {
        return Err(Error::value(format!(
            "[quantize] Only real floating types can be quantized but w has type {}.",
            w.dtype()
        )));
    }
    if w.ndim() < 2 {
        return Err(Error::value(format!(
            "[quantize] The matrix to be quantized must have at least 2 dimension but it has \
             only {}.",
            w.ndim()
        )));
    }
    if q.group_size == 0 || w.shape()[w.ndim() - 1] as i64 % q.group_size as i64 != 0 {
        return Err(Error::value(format!(
            "[quantize] The last dimension of the matrix needs to be divisible by the \
             quantization group size {}. However the provided  matrix has shape {}",
            q.group_size,
            shape_text(w.shape())
        )));
    }
    check_global_scale("quantize", q.mode, global_scale)?;
    let packing = packing("quantize", q)?;
    let mut out = quantize_with(w, packing, global_scale)?.into_iter();
    let (words, scales) = (
        out.next().expect("quantize has outputs"),
        out.next().expect("quantize has outputs"),
    );
    Ok((words, scales, out.next()))
}

/// Dequantizes a packed matrix. Affine: `scale * level + bias` with scales and biases of
/// one dtype (inputs `w`, `scales`, `biases`). Floating-point modes: element times scale
/// (inputs `w`, `scales` and, in nvfp4, maybe the global scale).
struct Dequantize {
    packing: Packing,
    /// The result's dtype in a floating-point mode (affine: that of the scales).
    dtype: DType,
}

impl Dequantize {
    fn affine(packing: Packing) -> Dequantize {
        Dequantize {
            packing,
            dtype: DType::Float32,
        }
    }

    fn record(&self, w: &Array, scales: &Array, biases: &Array) -> Array {
        Array::from_op(
            Dequantize::affine(self.packing),
            vec![w.clone(), scales.clone(), biases.clone()],
            self.shape(w),
            scales.dtype(),
        )
    }

    /// A floating-point mode's dequantization into `self.dtype`.
    fn record_fp(&self, w: &Array, scales: &Array, global: Option<&Array>) -> Array {
        let mut inputs = vec![w.clone(), scales.clone()];
        inputs.extend(global.cloned());
        Array::from_op(
            Dequantize {
                packing: self.packing,
                dtype: self.dtype,
            },
            inputs,
            self.shape(w),
            self.dtype,
        )
    }

    fn shape(&self, w: &Array) -> Vec<usize> {
        let mut shape = w.shape().to_vec();
        let nd = shape.len();
        shape[nd - 1] = shape[nd - 1] * 32 / self.packing.bits;
        shape
    }

    /// The unscaled values of `w` as floats of `scales`' dtype (affine: the levels).
    fn levels(&self, w: &Array, scales: &Array) -> Result<Array> {
        let ones = ones_like(scales)?;
        Ok(self.record(w, &ones, &zeros_like(scales)?))
    }

    fn is_affine(&self) -> bool {
        self.packing.mode == QuantizationMode::Affine
    }
}

impl Primitive for Dequantize {
    fn name(&self) -> &'static str {
        "dequantize"
    }

    fn params(&self) -> String {
        let p = self.packing;
        let mut text = format!("group_size={}, bits={}", p.group_size, p.bits);
        if p.mode != QuantizationMode::Affine {
            text += &format!(", mode={}", p.mode);
        }
        text
    }

    fn eval(&self, mut inputs: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>> {
        if let Some(format) = self.packing.mode.format() {
            let global = (inputs.len() == 3).then(|| inputs.pop()).flatten();
            let scales = inputs.pop().expect("dequantize has scales");
            let w = inputs.pop().expect("dequantize has words");
            let dtype = outputs[0].dtype;
            let group_size = self.packing.group_size;
            return Ok(vec![kernel::fp::dequantize(
                w, scales, global, format, group_size, dtype,
            )?]);
        }
        let biases = inputs.pop().expect("dequantize has three inputs");
        let scales = inputs.pop().expect("dequantize has three inputs");
        let w = inputs.pop().expect("dequantize has three inputs");
        Ok(vec![kernel::dequantize(w, scales, biases, self.packing)?])
    }

    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        cotangents: &[Array],
        argnums: &[usize],
    ) -> Result<Vec<Array>> {
        let (w, scales) = (&inputs[0], &inputs[1]);
        if !self.is_affine() {
            // Words and scale bytes are integers; the result is linear in the global scale.
            return argnums
                .iter()
                .map(|&i| {
                    if i < 2 {
                        return zeros_like(&inputs[i]);
                    }
                    let global = &inputs[2];
                    let unit = self.record_fp(w, scales, Some(&ones_like(global)?));
                    let total = sum(
                        &multiply(&cotangents[0], &unit)?,
                        crate::shape::Axes::All,
                        false,
                    )?;
                    reshape(&astype(&total, global.dtype())?, &dims(global))
                })
                .collect();
        }
        let g = grouped(&cotangents[0], self.packing.group_size)?;
        argnums
            .iter()
            .map(|&i| match i {
                0 => zeros_like(w),
                1 => {
                    let q = grouped(&self.levels(w, scales)?, self.packing.group_size)?;
                    sum(&multiply(&g, &q)?, -1, false)
                }
                _ => sum(&g, -1, false),
            })
            .collect()
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], argnums: &[usize]) -> Result<Vec<Array>> {
        let (w, scales) = (&inputs[0], &inputs[1]);
        if !self.is_affine() {
            for (&i, t) in argnums.iter().zip(tangents) {
                if i == 2 {
                    return Ok(vec![self.record_fp(w, scales, Some(t))]);
                }
            }
            return Ok(vec![zeros(&self.shape(w), self.dtype)?]);
        }
        let mut total: Option<Array> = None;
        for (&i, t) in argnums.iter().zip(tangents) {
            let term = match i {
                0 => continue,
                1 => self.record(w, t, &zeros_like(t)?),
                _ => self.record(w, &zeros_like(t)?, t),
            };
            total = Some(match total {
                Some(acc) => add(&acc, &term)?,
                None => term,
            });
        }
        match total {
            Some(t) => Ok(vec![t]),
            None => Ok(vec![zeros_like(&self.record(w, scales, &inputs[2]))?]),
        }
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        if !self.is_affine() {
            unbatched_global_scale("dequantize", axes.get(2).copied().flatten())?;
        }
        let size = inputs
            .iter()
            .zip(axes)
            .find_map(|(a, ax)| ax.map(|ax| a.shape()[ax]))
            .unwrap_or(1);
        let front = |a: &Array, ax: Option<usize>| -> Result<Array> {
            match ax {
                Some(_) => batch_to_front(a, ax),
                None => {
                    let mut shape = vec![size];
                    shape.extend_from_slice(a.shape());
                    broadcast_to(&expand_dims(a, 0)?, &shape)
                }
            }
        };
        let (w, s) = (front(&inputs[0], axes[0])?, front(&inputs[1], axes[1])?);
        let out = if self.is_affine() {
            self.record(&w, &s, &front(&inputs[2], axes[2])?)
        } else {
            self.record_fp(&w, &s, inputs.get(2))
        };
        Ok((vec![out], vec![Some(0)]))
    }
}

/// Recovers a float matrix from [`quantize`]'s output, as MLX's `dequantize`.
///
/// - Affine: `scale * level + bias` for every element. The result has the dtype of
///   `scales` and `biases` (promoted), or `dtype` when given (a floating dtype); the
///   product and the sum are each rounded to that dtype, as MLX does. `biases` is
///   required.
/// - `mxfp4`, `mxfp8`, `nvfp4`: element value times its group's scale, in `dtype`
///   (default bfloat16, as MLX); `biases` must be `None`, `scales` uint8. With nvfp4's
///   `global_scale` the scales are multiplied by `global_scale / 2688` and the result is
///   at least float32 (MLX's promotion with the float32 global scale).
///
/// ```
/// use lazulite::{dequantize, Array, DType, Quantization, QuantizationMode};
/// // One group of 32 two-bit levels 0, 1, 2, 3, 0, 1, ... with scale 0.5 and bias -1.
/// let word = 0b11_10_01_00u32 * 0x01010101;
/// let w = Array::from_slice(&[word, word], &[1, 2])?;
/// let s = Array::from_slice(&[0.5f32], &[1, 1])?;
/// let b = Array::from_slice(&[-1.0f32], &[1, 1])?;
/// let x = dequantize(&w, &s, Some(&b), Quantization::affine(32, 2), None, None)?;
/// assert_eq!(x.to_vec::<f32>()?[..4], [-1.0, -0.5, 0.0, 0.5]);
///
/// // mxfp4: E2M1 codes 1, 2, 3, ... (0.5, 1, 1.5, ...) with scale byte 128 (2^1).
/// let w = Array::from_slice(&[0x87654321u32; 4], &[1, 4])?;
/// let s = Array::from_slice(&[128u8], &[1, 1])?;
/// let mx = Quantization::new(QuantizationMode::Mxfp4);
/// let x = dequantize(&w, &s, None, mx, None, Some(DType::Float32))?;
/// assert_eq!(x.to_vec::<f32>()?[..8], [1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, -0.0]);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn dequantize(
    w: &Array,
    scales: &Array,
    biases: Option<&Array>,
    q: Quantization,
    global_scale: Option<&Array>,
    dtype: Option<DType>,
) -> Result<Array> {
    let out_dtype = check_scales("dequantize", q.mode, scales, biases, dtype)?;
    let Quantization {
        group_size, bits, ..
    } = q;
    if bits <= 0 {
        return Err(Error::value(format!(
            "[dequantize] Invalid value for bits: {bits}"
        )));
    }
    if group_size <= 0 {
        return Err(Error::value(format!(
            "[dequantize] Invalid value for group_size: {group_size}"
        )));
    }
    if w.dtype() != DType::UInt32 {
        return Err(Error::value(
            "[dequantize] The matrix should be given as a uint32",
        ));
    }
    if w.ndim() < 2 {
        return Err(Error::value(format!(
            "[dequantize] The matrix to be dequantized must have at least 2 dimension but it \
             has only {}.",
            w.ndim()
        )));
    }
    check_global_scale("dequantize", q.mode, global_scale)?;
    let nd = w.ndim();
    let outer = &w.shape()[..nd - 1];
    let same_rows = |a: &Array| a.ndim() == nd && &a.shape()[..nd - 1] == outer;
    let cols = w.shape()[nd - 1] as i64 * 32 / bits as i64;
    let groups = scales
        .ndim()
        .checked_sub(1)
        .map_or(0, |i| scales.shape()[i]) as i64;
    let Some(biases) = biases else {
        let packing = packing("dequantize", q)?;
        if !same_rows(scales) {
            return Err(Error::value(
                "[dequantize] Shape of scales does not match the matrix",
            ));
        }
        if cols != groups * group_size as i64 {
            return Err(Error::value(format!(
                "[dequantize] Shape of scales does not match the matrix given the quantization \
                 parameters. Provided matrix of shape {} and scales of shape {}.",
                shape_text(w.shape()),
                shape_text(scales.shape())
            )));
        }
        // The global scale is float32: MLX's ops promote the result with it.
        let out_dtype = match global_scale {
            Some(_) => promote_types(out_dtype, DType::Float32),
            None => out_dtype,
        };
        let op = Dequantize {
            packing,
            dtype: out_dtype,
        };
        return Ok(op.record_fp(w, scales, global_scale));
    };
    if !same_rows(scales) || !same_rows(biases) || scales.shape() != biases.shape() {
        return Err(Error::value(
            "[dequantize] Shape of scales and biases does not match the matrix",
        ));
    }
    if cols != groups * group_size as i64 {
        return Err(Error::value(format!(
            "[dequantize] Shape of scales and biases does not match the matrix given the \
             quantization parameters. Provided matrix of shape {} and scales/biases of shape \
             {} with group_size={group_size} and bits={bits}.",
            shape_text(w.shape()),
            shape_text(scales.shape())
        )));
    }
    let packing = packing("dequantize", q)?;
    let op = Dequantize::affine(packing);
    let out = if scales.dtype() == biases.dtype() {
        op.record(w, scales, biases)
    } else {
        // The product rounds to the scales' dtype, the sum to the promoted one.
        let products = grouped(
            &op.record(w, scales, &zeros_like(scales)?),
            packing.group_size,
        )?;
        ungrouped(&add(&products, &expand_dims(biases, -1)?)?)?
    };
    if out.dtype() != out_dtype {
        astype(&out, out_dtype)
    } else {
        Ok(out)
    }
}

/// `x @ W^T` (or `x @ W`) for `W` given quantized; the batch shape of `x` and of the
/// packed matrix are equal when the matrix has one. Inputs: `x`, `w`, `scales` and, in
/// affine mode, `biases` (`x`, scales and biases of one float dtype).
#[derive(Clone, Copy)]
struct QuantizedMatmul {
    packing: Packing,
    transpose: bool,
}

impl QuantizedMatmul {
    /// The kernel's operands from the evaluated inputs `x, w, scales[, biases]`.
    fn operands(&self, inputs: Vec<Tensor>, outputs: &[OutputSpec]) -> kernel::QuantizedOperands {
        let mut inputs = inputs.into_iter();
        let mut next = || {
            inputs
                .next()
                .expect("quantized_matmul has three or four inputs")
        };
        let (x, w, scales) = (next(), next(), next());
        let biases = inputs.next();
        let shape = &outputs[0].shape;
        let nd = w.ndim();
        let k = *x.shape.last().expect("x has an axis");
        let n = *shape.last().expect("the result has an axis");
        let (batch, m) = if nd == 2 {
            // From the result, not x: with k == 0, x is empty but the result is not.
            (1, shape.iter().product::<usize>() / n.max(1))
        } else {
            (w.shape[..nd - 2].iter().product(), x.shape[x.ndim() - 2])
        };
        let product = Product {
            batch,
            m,
            n,
            k,
            transpose: self.transpose,
        };
        kernel::QuantizedOperands {
            x,
            w,
            scales,
            biases,
            packing: self.packing,
            product,
            out_shape: shape.clone(),
        }
    }

    /// Records the product of `x` (`(..., K)`, or `(batch..., M, K)` for a batched matrix)
    /// with the packed `w`, whose batch shape equals that of `x`.
    fn record(&self, x: &Array, w: &Array, scales: &Array, biases: Option<&Array>) -> Array {
        let nd = w.ndim();
        let (rows, cols) = (
            w.shape()[nd - 2],
            w.shape()[nd - 1] * 32 / self.packing.bits,
        );
        let n = if self.transpose { rows } else { cols };
        let mut shape = x.shape().to_vec();
        *shape.last_mut().expect("x has an axis") = n;
        let mut inputs = vec![x.clone(), w.clone(), scales.clone()];
        inputs.extend(biases.cloned());
        Array::from_op(*self, inputs, shape, x.dtype())
    }

    /// The dense matrix `W` as stored: `(n, k)` with `transpose`, else `(k, n)`.
    fn dense(&self, w: &Array, scales: &Array, biases: &Array) -> Result<Array> {
        Ok(Dequantize::affine(self.packing).record(w, scales, biases))
    }

    /// The cotangent of `W` as stored, summed over the rows that share it.
    fn dense_cotangent(&self, x: &Array, w: &Array, g: &Array) -> Result<Array> {
        let (x, g) = if w.ndim() == 2 {
            let k = x.shape()[x.ndim() - 1] as i64;
            let n = g.shape()[g.ndim() - 1] as i64;
            (reshape(x, &[-1, k])?, reshape(g, &[-1, n])?)
        } else {
            (x.clone(), g.clone())
        };
        if self.transpose {
            matmul(&swapaxes(&g, -1, -2)?, &x)
        } else {
            matmul(&swapaxes(&x, -1, -2)?, &g)
        }
    }

    /// MLX's error for a derivative with respect to a floating-point mode's scales.
    fn no_scale_derivative(&self) -> Error {
        Error::value(format!(
            "[QuantizedMatmul::vjp] no gradient wrt scales in {} quantization.",
            self.packing.mode
        ))
    }
}

impl Primitive for QuantizedMatmul {
    fn name(&self) -> &'static str {
        "quantized_matmul"
    }

    fn params(&self) -> String {
        let p = self.packing;
        let mut text = format!("group_size={}, bits={}", p.group_size, p.bits);
        if p.mode != QuantizationMode::Affine {
            text += &format!(", mode={}", p.mode);
        }
        text + &format!(", transpose={}", self.transpose)
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        // MLX's state: `(group_size, bits, mode, transpose)`.
        let state = vec![
            MlxState::Int(self.packing.group_size as i32),
            MlxState::Int(self.packing.bits as i32),
            MlxState::Int(self.packing.mode.index()),
            MlxState::Bool(self.transpose),
        ];
        MlxNode::single("QuantizedMatmul", state, inputs, outputs)
    }

    fn eval(&self, inputs: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>> {
        Ok(vec![kernel::quantized_matmul(
            self.operands(inputs, outputs),
        )?])
    }

    fn runs_together(&self) -> bool {
        true
    }

    fn eval_together(&self, nodes: Vec<Together<'_>>) -> Vec<Result<Vec<Tensor>>> {
        let products = nodes
            .into_iter()
            .map(|n| {
                let any: &dyn Any = n.primitive;
                any.downcast_ref::<QuantizedMatmul>()
                    .expect("nodes evaluated together share their primitive's type")
                    .operands(n.inputs, n.outputs)
            })
            .collect();
        kernel::quantized_matmuls(products)
            .into_iter()
            .map(|r| r.map(|out| vec![out]))
            .collect()
    }

    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        cotangents: &[Array],
        argnums: &[usize],
    ) -> Result<Vec<Array>> {
        let (x, w, scales, biases) = (&inputs[0], &inputs[1], &inputs[2], inputs.get(3));
        let g = &cotangents[0];
        let flipped = QuantizedMatmul {
            transpose: !self.transpose,
            ..*self
        };
        argnums
            .iter()
            .map(|&i| match (i, biases) {
                (0, _) => Ok(flipped.record(g, w, scales, biases)),
                // The packed words and a floating-point mode's scale bytes are integer
                // codes: zero, where MLX raises.
                (1, _) | (_, None) => zeros_like(&inputs[i]),
                (_, Some(biases)) => {
                    let dense = Dequantize::affine(self.packing);
                    let dw = self.dense_cotangent(x, w, g)?;
                    Ok(dense
                        .vjp(
                            &[w.clone(), scales.clone(), biases.clone()],
                            &[],
                            &[dw],
                            &[i - 1],
                        )?
                        .remove(0))
                }
            })
            .collect()
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], argnums: &[usize]) -> Result<Vec<Array>> {
        let (x, w, scales, biases) = (&inputs[0], &inputs[1], &inputs[2], inputs.get(3));
        let mut total: Option<Array> = None;
        let (mut ts, mut tb) = (None, None);
        for (&i, t) in argnums.iter().zip(tangents) {
            match i {
                0 => {
                    let term = self.record(t, w, scales, biases);
                    total = Some(match total {
                        Some(acc) => add(&acc, &term)?,
                        None => term,
                    });
                }
                2 if biases.is_none() => return Err(self.no_scale_derivative()),
                2 => ts = Some(t.clone()),
                3 => tb = Some(t.clone()),
                _ => {}
            }
        }
        if let (Some(biases), true) = (biases, ts.is_some() || tb.is_some()) {
            let ts = ts.map_or_else(|| zeros_like(scales), Ok)?;
            let tb = tb.map_or_else(|| zeros_like(biases), Ok)?;
            let dw = self.dense(w, &ts, &tb)?;
            let dw = if self.transpose {
                swapaxes(&dw, -1, -2)?
            } else {
                dw
            };
            let term = matmul(x, &dw)?;
            total = Some(match total {
                Some(acc) => add(&acc, &term)?,
                None => term,
            });
        }
        match total {
            Some(t) => Ok(vec![t]),
            None => Ok(vec![zeros_like(&self.record(x, w, scales, biases))?]),
        }
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let (x, w, scales, biases) = (&inputs[0], &inputs[1], &inputs[2], inputs.get(3));
        let matrix_batched = axes[1..].iter().any(Option::is_some);
        if !matrix_batched && w.ndim() == 2 {
            // The batch joins the rows of x.
            let x = batch_to_front(x, axes[0])?;
            return Ok((vec![self.record(&x, w, scales, biases)], vec![Some(0)]));
        }
        let size = inputs
            .iter()
            .zip(axes)
            .find_map(|(a, ax)| ax.map(|ax| a.shape()[ax]))
            .unwrap_or(1);
        let front = |a: &Array, ax: Option<usize>| -> Result<Array> {
            match ax {
                Some(_) => batch_to_front(a, ax),
                None => {
                    let mut shape = vec![size];
                    shape.extend_from_slice(a.shape());
                    broadcast_to(&expand_dims(a, 0)?, &shape)
                }
            }
        };
        let vector = x.ndim() - usize::from(axes[0].is_some()) == 1;
        let mut x = front(x, axes[0])?;
        if vector {
            x = expand_dims(&x, -2)?;
        }
        let (mut w, mut s) = (front(w, axes[1])?, front(scales, axes[2])?);
        let mut b = match biases {
            Some(b) => Some(front(b, axes[3])?),
            None => None,
        };
        // Line the batch axes up behind the vmapped one before broadcasting them.
        let rank = x.ndim().max(w.ndim());
        while x.ndim() < rank {
            x = expand_dims(&x, 1)?;
        }
        while w.ndim() < rank {
            w = expand_dims(&w, 1)?;
            s = expand_dims(&s, 1)?;
            b = b.map(|b| expand_dims(&b, 1)).transpose()?;
        }
        let out = quantized_matmul_with(&x, &w, &s, b.as_ref(), *self)?;
        let out = if vector { squeeze(&out, -2)? } else { out };
        Ok((vec![out], vec![Some(0)]))
    }
}

/// MLX's checks of a quantized product's operands (`op` names the function); returns
/// the packing, the depth `k` and the result's dtype.
pub(crate) fn check_product(
    op: &str,
    x: &Array,
    w: &Array,
    scales: &Array,
    biases: Option<&Array>,
    transpose: bool,
    q: Quantization,
) -> Result<(Packing, usize, DType)> {
    check_scales(op, q.mode, scales, biases, None)?;
    let Quantization {
        group_size, bits, ..
    } = q;
    if w.dtype() != DType::UInt32 {
        return Err(Error::value(format!(
            "[{op}] The weight matrix should be uint32 but received {}",
            w.dtype()
        )));
    }
    if let Some(biases) = biases.filter(|b| b.shape() != scales.shape()) {
        return Err(Error::value(format!(
            "[{op}] Scales and biases should have the same shape. Received scales with shape \
             {} and biases with {}",
            shape_text(scales.shape()),
            shape_text(biases.shape())
        )));
    }
    let nd = w.ndim();
    if nd == 0
        || scales.ndim() != nd
        || w.shape()[..nd - 1] != scales.shape()[..scales.ndim().max(1) - 1]
    {
        return Err(Error::value(format!(
            "[{op}] Weight and scales should have the same batch shape. Received weight with \
             shape {}, scales with {}.",
            shape_text(w.shape()),
            shape_text(scales.shape())
        )));
    }
    if nd < 2 {
        return Err(Error::value(format!(
            "[{op}] The weight matrix must have at least 2 dimensions but it has {nd}."
        )));
    }
    let cols = w.shape()[nd - 1] as i64 * 32 / bits.max(1) as i64;
    if bits <= 0 || group_size <= 0 || cols != scales.shape()[nd - 1] as i64 * group_size as i64 {
        return Err(Error::value(format!(
            "[{op}] The shapes of the weight and scales are incompatible based on bits and \
             group_size. w.shape() == {} and scales.shape() == {} with group_size={group_size} \
             and bits={bits}",
            shape_text(w.shape()),
            shape_text(scales.shape())
        )));
    }
    let packing = packing(op, q)?;
    if x.ndim() == 0 {
        return Err(Error::value(format!(
            "[{op}] The first input must have at least 1 dimension but it is a scalar."
        )));
    }
    let rows = w.shape()[nd - 2];
    let cols = cols as usize;
    let (k, n) = if transpose {
        (cols, rows)
    } else {
        (rows, cols)
    };
    if x.shape()[x.ndim() - 1] != k {
        return Err(Error::value(format!(
            "[{op}] Last dimension of first input with shape (..., {}) does not match the \
             expanded quantized matrix ({k}, {n}) computed from shape {} with \
             group_size={group_size}, bits={bits} and transpose={transpose}",
            x.shape()[x.ndim() - 1],
            shape_text(w.shape())
        )));
    }
    // Affine promotes x with the scales and biases; the floating-point modes keep x's.
    let dtype = match biases {
        Some(b) => promote_types(promote_types(x.dtype(), scales.dtype()), b.dtype()),
        None => x.dtype(),
    };
    if !dtype.is_floating() {
        return Err(Error::value(format!(
            "[{op}] Only real floating types are supported but x.dtype() == {}.",
            x.dtype()
        )));
    }
    Ok((packing, k, dtype))
}

/// Multiplies `x` by a quantized matrix, as MLX's `quantized_matmul`. With `transpose`
/// (MLX's default) `w` packs `W` as `(N, K)` and the result is `x @ W^T`; otherwise `w`
/// packs `W` as `(K, N)` and the result is `x @ W`. `x` is `(..., K)`; a batched `w`
/// (`(batch..., rows, words)`, with scales and biases of the same batch shape) broadcasts
/// its batch dimensions with those of `x`.
///
/// Affine mode needs `biases`; the result has the promoted dtype of `x`, `scales` and
/// `biases`, which must be floating. The floating-point modes take uint8 `scales`, no
/// biases, and keep `x`'s dtype (lazulite also multiplies float64, which MLX's CPU
/// backend refuses).
///
/// ```
/// use lazulite::{allclose, dequantize, matmul, matrix_transpose, quantize, quantized_matmul};
/// use lazulite::{random, DType, Quantization, QuantizationMode};
/// let w = random::normal(&[16, 64], DType::Float32, None, None, None)?;
/// let x = random::normal(&[2, 64], DType::Float32, None, None, None)?;
/// for q in [Quantization::affine(64, 4), Quantization::new(QuantizationMode::Nvfp4)] {
///     let (w_q, scales, biases) = quantize(&w, q, None)?;
///     let y = quantized_matmul(&x, &w_q, &scales, biases.as_ref(), true, q)?;
///     let dense = dequantize(&w_q, &scales, biases.as_ref(), q, None, Some(DType::Float32))?;
///     let expected = matmul(&x, &matrix_transpose(&dense)?)?;
///     assert!(allclose(&y, &expected, 1e-4, 1e-4, false)?.item::<bool>()?);
/// }
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn quantized_matmul(
    x: &Array,
    w: &Array,
    scales: &Array,
    biases: Option<&Array>,
    transpose: bool,
    q: Quantization,
) -> Result<Array> {
    let (packing, _, dtype) =
        check_product("quantized_matmul", x, w, scales, biases, transpose, q)?;
    let cast = |a: &Array| {
        if a.dtype() == dtype {
            Ok(a.clone())
        } else {
            astype(a, dtype)
        }
    };
    let op = QuantizedMatmul { packing, transpose };
    match biases {
        Some(b) => quantized_matmul_with(&cast(x)?, w, &cast(scales)?, Some(&cast(b)?), op),
        None => quantized_matmul_with(x, w, scales, None, op),
    }
}

/// [`quantized_matmul`] of matrices picked by index, as [`gather_mm`](crate::gather_mm)
/// picks them: `out[i] = x[lhs[i]] @ W[rhs[i]]` (or `W[rhs[i]]^T` with `transpose`), where
/// an index addresses a matrix of `x`, or a quantized matrix of `w` (with its scales and
/// biases), by its row-major position among the matrices of that operand's leading axes.
/// Mixture-of-experts layers with quantized experts use it. The picked packed matrices
/// are gathered, then multiplied.
///
/// ```
/// use lazulite::{dequantize, gather_mm, gather_qmm, quantize, random, swapaxes, Array, DType};
/// use lazulite::{Quantization, QuantizationMode};
/// let experts = random::normal(&[3, 16, 64], DType::Float32, None, None, None)?;
/// let tokens = random::normal(&[5, 1, 64], DType::Float32, None, None, None)?;
/// let route = Array::from_slice(&[2u32, 0, 0, 1, 2], &[5])?;
/// for q in [Quantization::affine(64, 4), Quantization::new(QuantizationMode::Mxfp4)] {
///     let (w, scales, biases) = quantize(&experts, q, None)?;
///     let b = biases.as_ref();
///     let out = gather_qmm(&tokens, &w, &scales, b, None, Some(&route), true, q)?;
///     let dense = dequantize(&w, &scales, b, q, None, Some(DType::Float32))?;
///     let expected = gather_mm(&tokens, &swapaxes(&dense, -1, -2)?, None, Some(&route))?;
///     assert!(lazulite::allclose(&out, &expected, 1e-4, 1e-4, false)?.item::<bool>()?);
/// }
/// # Ok::<(), lazulite::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn gather_qmm(
    x: &Array,
    w: &Array,
    scales: &Array,
    biases: Option<&Array>,
    lhs_indices: Option<&Array>,
    rhs_indices: Option<&Array>,
    transpose: bool,
    q: Quantization,
) -> Result<Array> {
    const OP: &str = "gather_qmm";
    if lhs_indices.is_none() && rhs_indices.is_none() {
        return quantized_matmul(x, w, scales, biases, transpose, q);
    }
    check_product(OP, x, w, scales, biases, transpose, q)?;
    let lhs = indices_or_default(OP, lhs_indices, x)?;
    let rhs = indices_or_default(OP, rhs_indices, w)?;
    let pair = crate::ops::shape::broadcast_arrays(&[lhs, rhs])?;
    let batch = pair[0].shape().to_vec();
    let picked = |a: &Array, index: &Array| -> Result<Array> {
        crate::ops::indexing::take(&matrix_stack(a)?, &reshape(index, &[-1])?, Some(0))
    };
    let biases = match biases {
        Some(b) => Some(picked(b, &pair[1])?),
        None => None,
    };
    let out = quantized_matmul(
        &picked(x, &pair[0])?,
        &picked(w, &pair[1])?,
        &picked(scales, &pair[1])?,
        biases.as_ref(),
        transpose,
        q,
    )?;
    let s = out.shape();
    let shape: Vec<i64> = batch
        .iter()
        .chain(&s[s.len() - 2..])
        .map(|&d| d as i64)
        .collect();
    reshape(&out, &shape)
}

/// Broadcasts the batch dimensions of `x` and a batched `w` and records the product.
fn quantized_matmul_with(
    x: &Array,
    w: &Array,
    scales: &Array,
    biases: Option<&Array>,
    op: QuantizedMatmul,
) -> Result<Array> {
    let nd = w.ndim();
    if nd == 2 {
        return Ok(op.record(x, w, scales, biases));
    }
    let vector = x.ndim() == 1;
    let x = if vector {
        expand_dims(x, 0)?
    } else {
        x.clone()
    };
    let xd = x.ndim();
    let batch = broadcast_shapes(&x.shape()[..xd - 2], &w.shape()[..nd - 2])?;
    let with_batch = |a: &Array| -> Result<Array> {
        let mut shape = batch.clone();
        shape.extend_from_slice(&a.shape()[a.ndim() - 2..]);
        if shape == a.shape() {
            Ok(a.clone())
        } else {
            broadcast_to(a, &shape)
        }
    };
    let biases = match biases {
        Some(b) => Some(with_batch(b)?),
        None => None,
    };
    let out = op.record(
        &with_batch(&x)?,
        &with_batch(w)?,
        &with_batch(scales)?,
        biases.as_ref(),
    );
    if vector {
        squeeze(&out, -2)
    } else {
        Ok(out)
    }
}
