//! Affine quantization with MLX's format and arithmetic: [`quantize`], [`dequantize`] and
//! [`quantized_matmul`].
//!
//! Every `group_size` consecutive elements of a row share a scale `s` and a bias `b`; an
//! element is stored as a `bits`-bit level `q` with value `s * q + b`, packed little-end
//! first into uint32 words (see `backend/cpu/quantized.rs`). Quantizing float16, bfloat16
//! and float32 gives MLX's words, scales and biases bit for bit; float64, which MLX's CPU
//! backend refuses, is quantized in float64.

use crate::array::Array;
use crate::backend::cpu::quantized as kernel;
use crate::backend::cpu::quantized::{Packing, Product};
use crate::backend::Tensor;
use crate::dtype::{promote_types, DType};
use crate::error::{Error, Result};
use crate::ops::linalg::{indices_or_default, matrix_stack};
use crate::primitive::{Export, MlxNode, MlxState, OutputSpec, Primitive};
use crate::shape::{broadcast_shapes, shape_text};
use crate::transforms::batch_to_front;
use crate::{
    add, astype, broadcast_to, expand_dims, matmul, multiply, ones_like, reshape, squeeze, sum,
    swapaxes, zeros, zeros_like,
};

/// The group sizes MLX supports.
const GROUP_SIZES: [i32; 3] = [32, 64, 128];
/// The bit widths MLX supports.
const BITS: [i32; 7] = [1, 2, 3, 4, 5, 6, 8];

/// Checks `group_size` and `bits` against MLX's supported values.
fn packing(op: &str, group_size: i32, bits: i32) -> Result<Packing> {
    if !GROUP_SIZES.contains(&group_size) {
        return Err(Error::value(format!(
            "[{op}] The requested group size {group_size} is not supported. The supported \
             group sizes are 32, 64, and 128."
        )));
    }
    if !BITS.contains(&bits) {
        return Err(Error::value(format!(
            "[{op}] The requested number of bits {bits} is not supported. The supported bits \
             are 1, 2, 3, 4, 5, 6 and 8."
        )));
    }
    Ok(Packing {
        group_size: group_size as usize,
        bits: bits as usize,
    })
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

/// Quantizes a float matrix along its last axis.
struct Quantize {
    packing: Packing,
}

impl Primitive for Quantize {
    fn name(&self) -> &'static str {
        "quantize"
    }

    fn params(&self) -> String {
        format!(
            "group_size={}, bits={}",
            self.packing.group_size, self.packing.bits
        )
    }

    fn eval(&self, mut inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let w = inputs.pop().expect("quantize has one input");
        Ok(kernel::quantize(w, self.packing)?.into())
    }

    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        _: &[Array],
        argnums: &[usize],
    ) -> Result<Vec<Array>> {
        // Rounding is flat almost everywhere: as MLX, the gradient is zero.
        argnums.iter().map(|_| zeros_like(&inputs[0])).collect()
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
        // Groups run along the last axis; a batch axis in front changes nothing.
        let w = batch_to_front(&inputs[0], axes[0])?;
        let (words, scales, biases) = quantize_with(&w, self.packing)?;
        Ok((vec![words, scales, biases], vec![Some(0); 3]))
    }
}

/// The packed words, scales and biases of quantizing `w`.
fn output_specs(w: &Array, packing: Packing) -> Vec<OutputSpec> {
    let nd = w.ndim();
    let mut words = w.shape().to_vec();
    words[nd - 1] = w.shape()[nd - 1] * packing.bits / 32;
    let mut groups = w.shape().to_vec();
    groups[nd - 1] = w.shape()[nd - 1] / packing.group_size;
    vec![
        OutputSpec {
            shape: words,
            dtype: DType::UInt32,
        },
        OutputSpec {
            shape: groups.clone(),
            dtype: w.dtype(),
        },
        OutputSpec {
            shape: groups,
            dtype: w.dtype(),
        },
    ]
}

fn quantize_with(w: &Array, packing: Packing) -> Result<(Array, Array, Array)> {
    let mut out = Array::from_op_multi(
        Quantize { packing },
        vec![w.clone()],
        output_specs(w, packing),
    );
    let biases = out.pop().expect("three outputs");
    let scales = out.pop().expect("three outputs");
    let words = out.pop().expect("three outputs");
    Ok((words, scales, biases))
}

/// Quantizes `w` along its last axis as MLX's `quantize` in `"affine"` mode: every
/// `group_size` (32, 64 or 128) consecutive elements share a scale and a bias, and each
/// element becomes a `bits`-bit level (1, 2, 3, 4, 5, 6 or 8). Returns the packed uint32
/// words, of shape `(..., n * bits / 32)`, and the scales and biases, of shape
/// `(..., n / group_size)` and `w`'s dtype.
///
/// ```
/// use lazulite::{dequantize, quantize, Array};
/// let w = Array::from_slice(&(0..64).map(|i| i as f32).collect::<Vec<_>>(), &[1, 64])?;
/// let (w_q, scales, biases) = quantize(&w, 64, 4)?;
/// assert_eq!(w_q.shape(), &[1, 8]);
/// assert_eq!(scales.shape(), &[1, 1]);
/// let back = dequantize(&w_q, &scales, &biases, 64, 4, None)?;
/// let err = (&back - &w).abs()?.max(lazulite::Axes::All, false)?.item::<f32>()?;
/// assert!(err <= 63.0 / 15.0 / 2.0 + 1e-4);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn quantize(w: &Array, group_size: i32, bits: i32) -> Result<(Array, Array, Array)> {
    let packing = packing("quantize", group_size, bits)?;
    if w.ndim() < 2 {
        return Err(Error::value(format!(
            "[quantize] The matrix to be quantized must have at least 2 dimension but it has \
             only {}.",
            w.ndim()
        )));
    }
    if !w.dtype().is_floating() {
        return Err(Error::value(format!(
            "[quantize] Only real floating types can be quantized but w has type {}.",
            w.dtype()
        )));
    }
    if !w.shape()[w.ndim() - 1].is_multiple_of(packing.group_size) {
        return Err(Error::value(format!(
            "[quantize] The last dimension of the matrix needs to be divisible by the \
             quantization group size {group_size}. However the provided  matrix has shape {}",
            shape_text(w.shape())
        )));
    }
    quantize_with(w, packing)
}

/// `scale * level + bias` for a packed matrix, with scales and biases of one dtype.
struct Dequantize {
    packing: Packing,
}

impl Dequantize {
    fn record(&self, w: &Array, scales: &Array, biases: &Array) -> Array {
        let mut shape = w.shape().to_vec();
        let nd = shape.len();
        shape[nd - 1] = shape[nd - 1] * 32 / self.packing.bits;
        Array::from_op(
            Dequantize {
                packing: self.packing,
            },
            vec![w.clone(), scales.clone(), biases.clone()],
            shape,
            scales.dtype(),
        )
    }

    /// The levels of `w` as floats of `dtype`.
    fn levels(&self, w: &Array, scales: &Array) -> Result<Array> {
        let ones = ones_like(scales)?;
        Ok(self.record(w, &ones, &zeros_like(scales)?))
    }
}

impl Primitive for Dequantize {
    fn name(&self) -> &'static str {
        "dequantize"
    }

    fn params(&self) -> String {
        format!(
            "group_size={}, bits={}",
            self.packing.group_size, self.packing.bits
        )
    }

    fn eval(&self, mut inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
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
        let (w, s, b) = (
            front(&inputs[0], axes[0])?,
            front(&inputs[1], axes[1])?,
            front(&inputs[2], axes[2])?,
        );
        Ok((vec![self.record(&w, &s, &b)], vec![Some(0)]))
    }
}

/// The checks `dequantize` and `quantized_matmul` share on scales and biases.
fn check_scales(op: &str, scales: &Array, biases: &Array) -> Result<()> {
    if !scales.dtype().is_floating() || !biases.dtype().is_floating() {
        return Err(Error::value(format!(
            "[{op}] Only real floating types are supported but scales.dtype() == {} and \
             biases.dtype() == {}.",
            scales.dtype(),
            biases.dtype()
        )));
    }
    Ok(())
}

/// Recovers a float matrix from [`quantize`]'s output: `scale * level + bias` for every
/// element, as MLX's `dequantize` in `"affine"` mode. The result has the dtype of
/// `scales` and `biases` (promoted), or `dtype` when given (a floating dtype); the product
/// and the sum are each rounded to that dtype, as MLX does.
///
/// ```
/// use lazulite::{dequantize, Array};
/// // One group of 32 two-bit levels 0, 1, 2, 3, 0, 1, ... with scale 0.5 and bias -1.
/// let word = 0b11_10_01_00u32 * 0x01010101;
/// let w = Array::from_slice(&[word, word], &[1, 2])?;
/// let s = Array::from_slice(&[0.5f32], &[1, 1])?;
/// let b = Array::from_slice(&[-1.0f32], &[1, 1])?;
/// let x = dequantize(&w, &s, &b, 32, 2, None)?;
/// assert_eq!(x.to_vec::<f32>()?[..4], [-1.0, -0.5, 0.0, 0.5]);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn dequantize(
    w: &Array,
    scales: &Array,
    biases: &Array,
    group_size: i32,
    bits: i32,
    dtype: Option<DType>,
) -> Result<Array> {
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
    let nd = w.ndim();
    let outer = &w.shape()[..nd - 1];
    let same_rows = |a: &Array| a.ndim() == nd && &a.shape()[..nd - 1] == outer;
    if !same_rows(scales) || !same_rows(biases) || scales.shape() != biases.shape() {
        return Err(Error::value(
            "[dequantize] Shape of scales and biases does not match the matrix",
        ));
    }
    let cols = w.shape()[nd - 1] as i64 * 32 / bits.max(1) as i64;
    let groups = scales.shape()[nd - 1] as i64;
    if bits <= 0 || group_size <= 0 || cols != groups * group_size as i64 {
        return Err(Error::value(format!(
            "[dequantize] Shape of scales and biases does not match the matrix given the \
             quantization parameters. Provided matrix of shape {} and scales/biases of shape \
             {} with group_size={group_size} and bits={bits}.",
            shape_text(w.shape()),
            shape_text(scales.shape())
        )));
    }
    let packing = packing("dequantize", group_size, bits)?;
    check_scales("dequantize", scales, biases)?;
    if let Some(d) = dtype.filter(|d| !d.is_floating()) {
        return Err(Error::value(format!(
            "[dequantize] Only real floating types are supported but output dtype == {d}."
        )));
    }
    let op = Dequantize { packing };
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
    match dtype {
        Some(d) if d != out.dtype() => astype(&out, d),
        _ => Ok(out),
    }
}

/// `x @ W^T` (or `x @ W`) for `W` given quantized; inputs share one float dtype and the
/// batch shape of `x` and of the packed matrix are equal when the matrix has one.
#[derive(Clone, Copy)]
struct QuantizedMatmul {
    packing: Packing,
    transpose: bool,
}

impl QuantizedMatmul {
    /// Records the product of `x` (`(..., K)`, or `(batch..., M, K)` for a batched matrix)
    /// with the packed `w`, whose batch shape equals that of `x`.
    fn record(&self, x: &Array, w: &Array, scales: &Array, biases: &Array) -> Array {
        let nd = w.ndim();
        let (rows, cols) = (
            w.shape()[nd - 2],
            w.shape()[nd - 1] * 32 / self.packing.bits,
        );
        let n = if self.transpose { rows } else { cols };
        let mut shape = x.shape().to_vec();
        *shape.last_mut().expect("x has an axis") = n;
        Array::from_op(
            *self,
            vec![x.clone(), w.clone(), scales.clone(), biases.clone()],
            shape,
            x.dtype(),
        )
    }

    /// The dense matrix `W` as stored: `(n, k)` with `transpose`, else `(k, n)`.
    fn dense(&self, w: &Array, scales: &Array, biases: &Array) -> Result<Array> {
        let op = Dequantize {
            packing: self.packing,
        };
        Ok(op.record(w, scales, biases))
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
}

impl Primitive for QuantizedMatmul {
    fn name(&self) -> &'static str {
        "quantized_matmul"
    }

    fn params(&self) -> String {
        format!(
            "group_size={}, bits={}, transpose={}",
            self.packing.group_size, self.packing.bits, self.transpose
        )
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        // `(group_size, bits, mode, transpose)`, mode 0 being MLX's affine quantization.
        let state = vec![
            MlxState::Int(self.packing.group_size as i32),
            MlxState::Int(self.packing.bits as i32),
            MlxState::Int(0),
            MlxState::Bool(self.transpose),
        ];
        MlxNode::single("QuantizedMatmul", state, inputs, outputs)
    }

    fn eval(&self, inputs: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let [x, w, scales, biases]: [Tensor; 4] = inputs.try_into().ok().expect("four inputs");
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
        Ok(vec![kernel::quantized_matmul(
            x,
            w,
            scales,
            biases,
            self.packing,
            product,
            shape,
        )?])
    }

    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        cotangents: &[Array],
        argnums: &[usize],
    ) -> Result<Vec<Array>> {
        let [x, w, scales, biases] = inputs else {
            unreachable!("quantized_matmul has four inputs")
        };
        let g = &cotangents[0];
        let flipped = QuantizedMatmul {
            transpose: !self.transpose,
            ..*self
        };
        argnums
            .iter()
            .map(|&i| match i {
                0 => Ok(flipped.record(g, w, scales, biases)),
                1 => Err(Error::runtime(
                    "[QuantizedMatmul::vjp] no gradient wrt the quantized weights.",
                )),
                _ => {
                    let dense = Dequantize {
                        packing: self.packing,
                    };
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
        let [x, w, scales, biases] = inputs else {
            unreachable!("quantized_matmul has four inputs")
        };
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
                2 => ts = Some(t.clone()),
                3 => tb = Some(t.clone()),
                _ => {}
            }
        }
        if ts.is_some() || tb.is_some() {
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
        let [x, w, scales, biases] = inputs else {
            unreachable!("quantized_matmul has four inputs")
        };
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
        let (mut w, mut s, mut b) = (
            front(w, axes[1])?,
            front(scales, axes[2])?,
            front(biases, axes[3])?,
        );
        // Line the batch axes up behind the vmapped one before broadcasting them.
        let rank = x.ndim().max(w.ndim());
        while x.ndim() < rank {
            x = expand_dims(&x, 1)?;
        }
        while w.ndim() < rank {
            w = expand_dims(&w, 1)?;
            s = expand_dims(&s, 1)?;
            b = expand_dims(&b, 1)?;
        }
        let out = quantized_matmul_with(&x, &w, &s, &b, *self)?;
        let out = if vector { squeeze(&out, -2)? } else { out };
        Ok((vec![out], vec![Some(0)]))
    }
}

/// Multiplies `x` by a quantized matrix, as MLX's `quantized_matmul` in `"affine"` mode.
/// With `transpose` (MLX's default) `w` packs `W` as `(N, K)` and the result is
/// `x @ W^T`; otherwise `w` packs `W` as `(K, N)` and the result is `x @ W`. `x` is
/// `(..., K)`; a batched `w` (`(batch..., rows, words)`, with scales and biases of the
/// same batch shape) broadcasts its batch dimensions with those of `x`. The result has the
/// promoted dtype of `x`, `scales` and `biases`, which must be floating.
///
/// ```
/// use lazulite::{allclose, dequantize, matmul, matrix_transpose, quantize, quantized_matmul};
/// use lazulite::{random, DType};
/// let w = random::normal(&[16, 64], DType::Float32, None, None, None)?;
/// let (w_q, scales, biases) = quantize(&w, 64, 4)?;
/// let x = random::normal(&[2, 64], DType::Float32, None, None, None)?;
/// let y = quantized_matmul(&x, &w_q, &scales, &biases, true, 64, 4)?;
/// let dense = dequantize(&w_q, &scales, &biases, 64, 4, None)?;
/// let expected = matmul(&x, &matrix_transpose(&dense)?)?;
/// assert!(allclose(&y, &expected, 1e-4, 1e-4, false)?.item::<bool>()?);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn quantized_matmul(
    x: &Array,
    w: &Array,
    scales: &Array,
    biases: &Array,
    transpose: bool,
    group_size: i32,
    bits: i32,
) -> Result<Array> {
    const OP: &str = "quantized_matmul";
    if w.dtype() != DType::UInt32 {
        return Err(Error::value(format!(
            "[{OP}] The weight matrix should be uint32 but received {}",
            w.dtype()
        )));
    }
    check_scales(OP, scales, biases)?;
    if scales.shape() != biases.shape() {
        return Err(Error::value(format!(
            "[{OP}] Scales and biases should have the same shape. Received scales with shape \
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
            "[{OP}] Weight and scales should have the same batch shape. Received weight with \
             shape {}, scales with {}.",
            shape_text(w.shape()),
            shape_text(scales.shape())
        )));
    }
    if nd < 2 {
        return Err(Error::value(format!(
            "[{OP}] The weight matrix must have at least 2 dimensions but it has {nd}."
        )));
    }
    let cols = w.shape()[nd - 1] as i64 * 32 / bits.max(1) as i64;
    if bits <= 0 || group_size <= 0 || cols != scales.shape()[nd - 1] as i64 * group_size as i64 {
        return Err(Error::value(format!(
            "[{OP}] The shapes of the weight and scales are incompatible based on bits and \
             group_size. w.shape() == {} and scales.shape() == {} with group_size={group_size} \
             and bits={bits}",
            shape_text(w.shape()),
            shape_text(scales.shape())
        )));
    }
    let packing = packing(OP, group_size, bits)?;
    if x.ndim() == 0 {
        return Err(Error::value(format!(
            "[{OP}] The first input must have at least 1 dimension but it is a scalar."
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
            "[{OP}] Last dimension of first input with shape (..., {}) does not match the \
             expanded quantized matrix ({k}, {n}) computed from shape {} with \
             group_size={group_size}, bits={bits} and transpose={transpose}",
            x.shape()[x.ndim() - 1],
            shape_text(w.shape())
        )));
    }
    let dtype = promote_types(promote_types(x.dtype(), scales.dtype()), biases.dtype());
    if !dtype.is_floating() {
        return Err(Error::value(format!(
            "[{OP}] only floating types are supported, not {dtype}."
        )));
    }
    let cast = |a: &Array| {
        if a.dtype() == dtype {
            Ok(a.clone())
        } else {
            astype(a, dtype)
        }
    };
    let op = QuantizedMatmul { packing, transpose };
    quantized_matmul_with(&cast(x)?, w, &cast(scales)?, &cast(biases)?, op)
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
/// let experts = random::normal(&[3, 16, 64], DType::Float32, None, None, None)?;
/// let (w, scales, biases) = quantize(&experts, 64, 4)?;
/// let tokens = random::normal(&[5, 1, 64], DType::Float32, None, None, None)?;
/// let route = Array::from_slice(&[2u32, 0, 0, 1, 2], &[5])?;
/// let out = gather_qmm(&tokens, &w, &scales, &biases, None, Some(&route), true, 64, 4)?;
/// let dense = swapaxes(&dequantize(&w, &scales, &biases, 64, 4, None)?, -1, -2)?;
/// let expected = gather_mm(&tokens, &dense, None, Some(&route))?;
/// assert!(lazulite::allclose(&out, &expected, 1e-4, 1e-4, false)?.item::<bool>()?);
/// # Ok::<(), lazulite::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn gather_qmm(
    x: &Array,
    w: &Array,
    scales: &Array,
    biases: &Array,
    lhs_indices: Option<&Array>,
    rhs_indices: Option<&Array>,
    transpose: bool,
    group_size: i32,
    bits: i32,
) -> Result<Array> {
    const OP: &str = "gather_qmm";
    if lhs_indices.is_none() && rhs_indices.is_none() {
        return quantized_matmul(x, w, scales, biases, transpose, group_size, bits);
    }
    let lhs = indices_or_default(OP, lhs_indices, x)?;
    let rhs = indices_or_default(OP, rhs_indices, w)?;
    let pair = crate::broadcast_arrays(&[lhs, rhs])?;
    let batch = pair[0].shape().to_vec();
    let picked = |a: &Array, index: &Array| -> Result<Array> {
        crate::take(&matrix_stack(a)?, &reshape(index, &[-1])?, Some(0))
    };
    let out = quantized_matmul(
        &picked(x, &pair[0])?,
        &picked(w, &pair[1])?,
        &picked(scales, &pair[1])?,
        &picked(biases, &pair[1])?,
        transpose,
        group_size,
        bits,
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
    biases: &Array,
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
    let out = op.record(
        &with_batch(&x)?,
        &with_batch(w)?,
        &with_batch(scales)?,
        &with_batch(biases)?,
    );
    if vector {
        squeeze(&out, -2)
    } else {
        Ok(out)
    }
}
