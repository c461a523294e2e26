//! The `fast` family of MLX (`mx.fast`): RMS and layer normalisation, rotary positional
//! encoding, scaled dot-product attention and the gated delta rule recurrence, with MLX's
//! arguments, checks and dtypes.
//!
//! Each is a composite of primitives (so gradients, vmap and compile come from their
//! rules), computed in float32 for half-precision inputs as MLX does, and rounded once.
//! RMS normalisation and rotary encoding of float32, float16 and bfloat16 inputs record
//! one fused node instead (a language model calls them a few dozen times per token, and
//! their compositions are 7 and 25 ops long), and so does attention for a decode step's
//! few queries over a short cache (a dozen ops); its transforms are the composition's.

use crate::array::Array;
use crate::backend::cpu::elementwise::converted;
use crate::backend::cpu::fast::{self as kernels, AttentionShape, DeltaShape, Rotation, HIDDEN};
use crate::dtype::{promote_types, DType};
use crate::error::{Error, Result};
use crate::ops::binary::{add, greater_equal, multiply, subtract};
use crate::ops::cast::astype;
use crate::ops::creation::{arange, zeros};
use crate::ops::linalg::matmul;
use crate::ops::operand::{to_arrays, Operand};
use crate::ops::reduce::{mean, sum, var};
use crate::ops::shape::{concatenate, expand_dims, repeat, squeeze, stack, swapaxes};
use crate::ops::softmax::softmax;
use crate::ops::ternary::where_;
use crate::ops::unary::{cos, rsqrt, sin, square};
use crate::ops::view::{broadcast_to, reshape, slice_axis};
use crate::primitive::OutputSpec;
use crate::shape::shape_text;
use crate::transforms::Fused;
use std::sync::Arc;

/// The dtype a half-precision input computes in.
fn compute_dtype(dtype: DType) -> DType {
    match dtype {
        DType::Float16 | DType::BFloat16 => DType::Float32,
        d => d,
    }
}

/// Checks that an optional `weight`/`bias` of a normalisation is 1-D with the size of the
/// last axis of `x`, as MLX's messages word it.
fn check_affine(op: &str, what: &str, x: &Array, p: Option<&Array>) -> Result<()> {
    let Some(p) = p else { return Ok(()) };
    if p.ndim() != 1 {
        return Err(Error::value(format!(
            "[{op}] {what} must have 1 dimension but has {} dimensions.",
            p.ndim()
        )));
    }
    let last = x.shape().last().copied().unwrap_or(0);
    if p.shape()[0] != last {
        return Err(Error::value(format!(
            "[{op}] {what} must have the same size as the last dimension of x but has {} \
             elements.",
            p.shape()[0]
        )));
    }
    Ok(())
}

fn check_floating(op: &str, dtype: DType) -> Result<()> {
    if !dtype.is_floating() || dtype.is_complex() {
        return Err(Error::value(format!(
            "[{op}] Received unsupported type {dtype}."
        )));
    }
    Ok(())
}

fn at_least_1d(op: &str, x: &Array) -> Result<()> {
    if x.ndim() == 0 {
        return Err(Error::value(format!(
            "[{op}] Input must have at least 1 dimension but got input with 0 dimensions."
        )));
    }
    Ok(())
}

/// Root-mean-square normalisation over the last axis:
/// `x / sqrt(mean(x^2) + eps) * weight`. The result has the dtype `x` and `weight`
/// promote to.
///
/// ```
/// let x = lazulite::Array::from_slice(&[3.0f32, 4.0], &[1, 2]).unwrap();
/// let y = lazulite::fast::rms_norm(&x, None, 0.0).unwrap();
/// let rms = (12.5f32).sqrt();
/// assert_eq!(y.to_vec::<f32>().unwrap(), vec![3.0 / rms, 4.0 / rms]);
/// ```
pub fn rms_norm(x: &Array, weight: Option<&Array>, eps: f32) -> Result<Array> {
    at_least_1d("rms_norm", x)?;
    check_affine("rms_norm", "(*weight)", x, weight)?;
    let out = weight.map_or(x.dtype(), |w| promote_types(x.dtype(), w.dtype()));
    check_floating("rms_norm", out)?;
    if compute_dtype(out) != DType::Float32 {
        return rms_norm_composed(x, weight, eps);
    }
    let composed = Arc::new(move |inputs: &[Array]| {
        Ok(vec![rms_norm_composed(&inputs[0], inputs.get(1), eps)?])
    });
    let fused = Fused {
        name: "rms_norm",
        params: format!("eps={eps}"),
        kernel: Box::new(move |mut inputs| {
            let weight = (inputs.len() == 2).then(|| inputs.pop()).flatten();
            let x = inputs.pop().expect("rms_norm has an input");
            Ok(vec![kernels::rms_norm(x, weight, eps, out)?])
        }),
        composed,
    };
    let inputs = std::iter::once(x).chain(weight).cloned().collect();
    Ok(fused.record(inputs, x.shape().to_vec(), out))
}

/// [`rms_norm`] as a composition of primitives (checked arguments).
fn rms_norm_composed(x: &Array, weight: Option<&Array>, eps: f32) -> Result<Array> {
    let out = weight.map_or(x.dtype(), |w| promote_types(x.dtype(), w.dtype()));
    let xf = astype(x, compute_dtype(out))?;
    let scale = rsqrt(&add(&mean(&square(&xf)?, -1, true)?, eps)?)?;
    let mut y = multiply(&xf, &scale)?;
    if let Some(w) = weight {
        y = multiply(&y, &astype(w, compute_dtype(out))?)?;
    }
    astype(&y, out)
}

/// Layer normalisation over the last axis:
/// `(x - mean(x)) / sqrt(var(x) + eps) * weight + bias`. The result has the dtype `x`,
/// `weight` and `bias` promote to.
///
/// ```
/// let x = lazulite::Array::from_slice(&[1.0f32, 3.0], &[2]).unwrap();
/// let y = lazulite::fast::layer_norm(&x, None, None, 0.0).unwrap();
/// assert_eq!(y.to_vec::<f32>().unwrap(), vec![-1.0, 1.0]);
/// ```
pub fn layer_norm(
    x: &Array,
    weight: Option<&Array>,
    bias: Option<&Array>,
    eps: f32,
) -> Result<Array> {
    at_least_1d("layer_norm", x)?;
    check_affine("layer_norm", "weight", x, weight)?;
    check_affine("layer_norm", "bias", x, bias)?;
    let out = [weight, bias]
        .into_iter()
        .flatten()
        .fold(x.dtype(), |d, p| promote_types(d, p.dtype()));
    check_floating("layer_norm", out)?;
    let compute = compute_dtype(out);
    let xf = astype(x, compute)?;
    let centred = subtract(&xf, &mean(&xf, -1, true)?)?;
    let mut y = multiply(&centred, &rsqrt(&add(&var(&xf, -1, true, 0)?, eps)?)?)?;
    if let Some(w) = weight {
        y = multiply(&y, &astype(w, compute)?)?;
    }
    if let Some(b) = bias {
        y = add(&y, &astype(b, compute)?)?;
    }
    astype(&y, out)
}

/// Where the rotation angles of [`rope`] come from.
///
/// ```
/// use lazulite::fast::{rope, RopeFrequencies};
/// use lazulite::{allclose, ones, Array, DType};
/// let a = ones(&[1, 3, 2], DType::Float32)?;
/// // With two features the one pair has frequency base^0 = 1 whatever the base.
/// let by_base = rope(&a, 2, false, RopeFrequencies::Base(10000.0), 1.0, 0)?;
/// let listed = RopeFrequencies::Freqs(Array::from_slice(&[1.0f32], &[1])?);
/// let by_list = rope(&a, 2, false, listed, 1.0, 0)?;
/// assert!(allclose(&by_base, &by_list, 1e-6, 1e-6, false)?.item::<bool>()?);
/// # Ok::<(), lazulite::Error>(())
/// ```
#[derive(Clone, Debug)]
pub enum RopeFrequencies {
    /// Angular frequency `base^(-2i/dims)` for pair `i`.
    Base(f32),
    /// One frequency per rotated pair (`dims / 2` values); the angle is position / freq.
    Freqs(Array),
}

/// Rotary positional encoding of `a`, shaped `(B, ..., T, D)`: the first `dims` features
/// of each position `t` are rotated in pairs by angle `(offset + t) * scale * f_i`. With
/// `traditional`, pairs are consecutive features (`2i`, `2i + 1`); otherwise feature `i`
/// pairs with `i + dims / 2`. `offset` is an integer or an array of one offset or of `B`
/// offsets. The result has `a`'s dtype.
///
/// ```
/// use lazulite::fast::{rope, RopeFrequencies};
/// let a = lazulite::ones(&[1, 2, 2], lazulite::DType::Float32).unwrap();
/// let r = rope(&a, 2, false, RopeFrequencies::Base(10000.0), 1.0, 0).unwrap();
/// let v = r.to_vec::<f32>().unwrap();
/// // position 0 is not rotated; position 1 is rotated by 1 radian
/// assert_eq!(&v[..2], &[1.0, 1.0]);
/// assert!((v[2] - (1f32.cos() - 1f32.sin())).abs() < 1e-6);
/// ```
pub fn rope(
    a: &Array,
    dims: usize,
    traditional: bool,
    frequencies: RopeFrequencies,
    scale: f32,
    offset: impl Into<Operand>,
) -> Result<Array> {
    let ndim = a.ndim();
    if ndim < 3 {
        return Err(Error::value(format!(
            "[rope] Input must have at least 3 dimensions but got input with {ndim} dimensions."
        )));
    }
    if !dims.is_multiple_of(2) {
        return Err(Error::value(format!(
            "[rope] dims must be even but got {dims}."
        )));
    }
    let features = a.shape()[ndim - 1];
    if dims > features {
        return Err(Error::value(format!(
            "[rope] dims ({dims}) must be at most the size of the last dimension \
             ({features})."
        )));
    }
    check_floating("rope", a.dtype())?;
    let half = dims / 2;
    if let RopeFrequencies::Freqs(f) = &frequencies {
        if f.shape() != [half] {
            return Err(Error::value(format!(
                "[rope] freqs must be one dimensional with size {half} but got shape {}.",
                crate::shape::shape_text(f.shape())
            )));
        }
    }
    let (offset, _) = to_arrays("rope", &[offset.into()])?;
    let offset = &offset[0];
    if !offset.dtype().is_integer() || offset.ndim() > 1 {
        return Err(Error::value(format!(
            "[rope] offset must be an integer scalar or a vector of integers but got shape \
             {:?} and dtype {}.",
            offset.shape(),
            offset.dtype()
        )));
    }
    let batch = a.shape()[0];
    if offset.ndim() == 1 && offset.shape()[0] != batch && offset.shape()[0] != 1 {
        return Err(Error::value(format!(
            "[rope] offset must have one value or one per batch element ({batch}) but has {}.",
            offset.shape()[0]
        )));
    }
    let base = match &frequencies {
        RopeFrequencies::Base(base) => Some(*base),
        RopeFrequencies::Freqs(_) => None,
    };
    // The inputs of the node: a, offset, and the frequencies when given as an array.
    let mut inputs = vec![a.clone(), offset.clone()];
    if let RopeFrequencies::Freqs(f) = frequencies {
        inputs.push(f);
    }
    let composed = move |inputs: &[Array]| {
        let frequencies = match base {
            Some(base) => RopeFrequencies::Base(base),
            None => RopeFrequencies::Freqs(inputs[2].clone()),
        };
        rope_composed(
            &inputs[0],
            dims,
            traditional,
            frequencies,
            scale,
            &inputs[1],
        )
    };
    if compute_dtype(a.dtype()) != DType::Float32 {
        return composed(&inputs);
    }
    let (shape, dtype) = (a.shape().to_vec(), a.dtype());
    let rows_per_batch = shape[1..ndim - 1].iter().product();
    let steps = shape[ndim - 2];
    let fused = Fused {
        name: "rope",
        params: format!("dims={dims}, traditional={traditional}, scale={scale}"),
        kernel: Box::new(move |mut inputs| {
            let frequencies: Vec<f32> = match base {
                Some(base) => (0..half)
                    .map(|i| base.powf(i as f32 * (-2.0 / dims as f32)))
                    .collect(),
                None => {
                    let f = converted(inputs.pop().expect("rope frequencies"), DType::Float32)?;
                    f.slice::<f32>().iter().map(|f| 1.0 / f).collect()
                }
            };
            let offsets = converted(inputs.pop().expect("rope offset"), DType::Float32)?;
            let rotation = Rotation {
                dims,
                traditional,
                frequencies: &frequencies,
                scale,
                offsets: offsets.slice::<f32>(),
                rows_per_batch,
                steps,
            };
            Ok(vec![kernels::rope(
                inputs.pop().expect("rope input"),
                &rotation,
                dtype,
            )?])
        }),
        composed: Arc::new(move |inputs: &[Array]| Ok(vec![composed(inputs)?])),
    };
    Ok(fused.record(inputs, shape, dtype))
}

/// [`rope`] as a composition of primitives (checked arguments; `offset` an integer scalar
/// or vector).
fn rope_composed(
    a: &Array,
    dims: usize,
    traditional: bool,
    frequencies: RopeFrequencies,
    scale: f32,
    offset: &Array,
) -> Result<Array> {
    let ndim = a.ndim();
    let features = a.shape()[ndim - 1];
    let half = dims / 2;
    let inv_freq = match frequencies {
        RopeFrequencies::Base(base) => {
            let exponents = arange(0.0, half as f64, 1.0, DType::Float32)?;
            crate::ops::binary::power(base, &multiply(&exponents, -2.0 / dims as f64)?)?
        }
        RopeFrequencies::Freqs(f) => crate::ops::unary::reciprocal(&astype(&f, DType::Float32)?)?,
    };
    // Positions shaped to broadcast against (B, ..., T, 1): one row per batch element
    // when offsets are per element.
    let steps = a.shape()[ndim - 2];
    let mut offset_shape = vec![1i64; ndim - 1];
    offset_shape[0] = offset.size() as i64;
    let start = reshape(&astype(offset, DType::Float32)?, &offset_shape)?;
    let positions = add(&start, &arange(0.0, steps as f64, 1.0, DType::Float32)?)?;
    let theta = multiply(&expand_dims(&multiply(&positions, scale)?, -1)?, &inv_freq)?;
    let (c, s) = (cos(&theta)?, sin(&theta)?);

    let last = ndim - 1;
    let af = astype(a, compute_dtype(a.dtype()))?;
    let (x1, x2) = if traditional {
        (
            slice_axis(&af, last, 0, dims as i64, 2)?,
            slice_axis(&af, last, 1, dims as i64, 2)?,
        )
    } else {
        (
            slice_axis(&af, last, 0, half as i64, 1)?,
            slice_axis(&af, last, half as i64, dims as i64, 1)?,
        )
    };
    let r1 = subtract(&multiply(&x1, &c)?, &multiply(&x2, &s)?)?;
    let r2 = add(&multiply(&x1, &s)?, &multiply(&x2, &c)?)?;
    let mut parts = if traditional {
        let mut shape: Vec<i64> = r1.shape().iter().map(|&d| d as i64).collect();
        shape[last] = dims as i64;
        vec![reshape(&stack(&[r1, r2], -1)?, &shape)?]
    } else {
        vec![r1, r2]
    };
    if dims < features {
        parts.push(slice_axis(&af, last, dims as i64, features as i64, 1)?);
    }
    astype(&concatenate(&parts, -1)?, a.dtype())
}

/// The mask of [`scaled_dot_product_attention`].
///
/// ```
/// use lazulite::fast::{scaled_dot_product_attention as attention, AttentionMask};
/// use lazulite::{ones, Array, DType};
/// let (q, k) = (ones(&[1, 1, 2, 4], DType::Float32)?, ones(&[1, 1, 2, 4], DType::Float32)?);
/// let v = Array::from_slice(&[1.0f32, 3.0], &[1, 1, 2, 1])?;
/// // Equal scores: query 0 sees key 0 only, query 1 averages both keys.
/// let causal = attention(&q, &k, &v, 1.0, Some(&AttentionMask::Causal), None)?;
/// assert_eq!(causal.to_vec::<f32>()?, vec![1.0, 2.0]);
/// let first_key_only = AttentionMask::Array(Array::from_slice(&[true, false], &[2])?);
/// let masked = attention(&q, &k, &v, 1.0, Some(&first_key_only), None)?;
/// assert_eq!(masked.to_vec::<f32>()?, vec![1.0, 1.0]);
/// # Ok::<(), lazulite::Error>(())
/// ```
#[derive(Clone, Debug)]
pub enum AttentionMask {
    /// Query `i` sees keys up to `i + T_kv - T_q` (the last query aligns with the last key).
    Causal,
    /// A boolean mask (true: attend) or an additive one, broadcastable to
    /// `(B, N_q, T_q, T_kv)`.
    Array(Array),
}

/// Multi-head attention `softmax(scale * q @ k^T + mask) @ v` for `q` shaped
/// `(B, N_q, T_q, D)` and `k`, `v` shaped `(B, N_kv, T_kv, D)`, where `N_q` is a multiple of
/// `N_kv` (grouped-query attention: each key/value head serves `N_q / N_kv` query heads,
/// without copying). `sinks`: one logit per query head that joins every softmax and
/// attends to nothing. The softmax runs in float32; the result has the inputs' dtype. A
/// query whose keys are all hidden by a boolean or causal mask averages all values.
///
/// ```
/// use lazulite::fast::scaled_dot_product_attention;
/// let q = lazulite::ones(&[1, 1, 2, 4], lazulite::DType::Float32).unwrap();
/// let k = lazulite::ones(&[1, 1, 3, 4], lazulite::DType::Float32).unwrap();
/// let v = lazulite::Array::from_slice(&[1.0f32, 2.0, 3.0], &[1, 1, 3, 1]).unwrap();
/// let o = scaled_dot_product_attention(&q, &k, &v, 0.5, None, None).unwrap();
/// // equal scores: the mean of the values
/// assert_eq!(o.to_vec::<f32>().unwrap(), vec![2.0, 2.0]);
/// ```
pub fn scaled_dot_product_attention(
    q: &Array,
    k: &Array,
    v: &Array,
    scale: f32,
    mask: Option<&AttentionMask>,
    sinks: Option<&Array>,
) -> Result<Array> {
    const OP: &str = "scaled_dot_product_attention";
    for x in [q, k, v] {
        if x.ndim() != 4 {
            return Err(Error::value(format!(
                "[{OP}] input with shape {} expected to be rank 4",
                shape_text(x.shape())
            )));
        }
    }
    let (qs, ks, vs) = (q.shape(), k.shape(), v.shape());
    if qs[3] != ks[3] {
        return Err(Error::value(format!(
            "[{OP}] query, keys expected to have matching last dimension; found query shape \
             {} for keys shape {}.",
            shape_text(qs),
            shape_text(ks)
        )));
    }
    if ks[..3] != vs[..3] || qs[0] != ks[0] {
        return Err(Error::value(format!(
            "[{OP}] keys and values must have the same batch, heads and length, and queries \
             the same batch; found query shape {}, keys shape {}, values shape {}.",
            shape_text(qs),
            shape_text(ks),
            shape_text(vs)
        )));
    }
    let (batch, heads, kv_heads, t_q) = (qs[0], qs[1], ks[1], qs[2]);
    if kv_heads == 0 || heads % kv_heads != 0 {
        return Err(Error::value(format!(
            "[{OP}] n_heads must be a multiple of n_kv_heads, found n_heads {heads} for \
             n_kv_heads {kv_heads}."
        )));
    }
    let dtype = promote_types(promote_types(q.dtype(), k.dtype()), v.dtype());
    check_floating(OP, dtype)?;
    if let Some(s) = sinks {
        if s.shape() != [heads] {
            return Err(Error::value(format!(
                "[{OP}] sinks must have shape ({heads},) but got {}.",
                shape_text(s.shape())
            )));
        }
    }
    let fits_kernel = compute_dtype(dtype) == DType::Float32
        && sinks.is_none()
        && matches!(mask, None | Some(AttentionMask::Causal))
        && t_q <= FUSED_QUERIES
        && (heads / kv_heads * t_q <= FUSED_ROWS || ks[2] <= FUSED_KEYS);
    if !fits_kernel {
        return attention_composed(q, k, v, scale, mask, sinks);
    }
    let causal = mask.is_some();
    let composed = Arc::new(move |inputs: &[Array]| {
        let mask = causal.then_some(AttentionMask::Causal);
        let out = attention_composed(
            &inputs[0],
            &inputs[1],
            &inputs[2],
            scale,
            mask.as_ref(),
            None,
        );
        Ok(vec![out?])
    });
    let fused = Fused {
        name: "scaled_dot_product_attention",
        params: format!("scale={scale}, causal={causal}"),
        kernel: Box::new(move |mut inputs| {
            let v = inputs.pop().expect("attention has three inputs");
            let k = inputs.pop().expect("attention has three inputs");
            let q = inputs.pop().expect("attention has three inputs");
            // Sizes from the tensors themselves: a shapeless compiled function calls the
            // kernel with other lengths than those it was recorded with.
            let shape = AttentionShape {
                batch: q.shape[0],
                heads: q.shape[1],
                kv_heads: k.shape[1],
                queries: q.shape[2],
                keys: k.shape[2],
                key_dim: k.shape[3],
                value_dim: v.shape[3],
            };
            Ok(vec![kernels::attention(
                q, k, v, shape, scale, causal, dtype,
            )?])
        }),
        composed,
    };
    let shape = vec![batch, heads, t_q, vs[3]];
    Ok(fused.record(vec![q.clone(), k.clone(), v.clone()], shape, dtype))
}

/// Queries per head up to which [`scaled_dot_product_attention`] records one fused node
/// (a decode step's few tokens); longer prompts multiply as matrices.
const FUSED_QUERIES: usize = 8;

/// Query rows per key/value head up to which the fused node takes a cache of any length:
/// it reads the cache once per four rows, the matrix products once. 16 query heads over 4
/// of 64 features, bfloat16, from Python, fused against composed: one query 145 against
/// 363 µs over 4096 keys and 603 against 1381 over 16384; two queries (8 rows) 290
/// against 693 over 4096; three queries 428 against 276.
const FUSED_ROWS: usize = 8;

/// Keys up to which the fused node is recorded for more rows: over a short cache it
/// beats the matrix products' calls and conversions (the same heads, three queries over
/// 512 keys: 61 against 65 µs; four queries 78 against 77).
const FUSED_KEYS: usize = 512;

/// [`scaled_dot_product_attention`] as a composition of ops (checked arguments).
fn attention_composed(
    q: &Array,
    k: &Array,
    v: &Array,
    scale: f32,
    mask: Option<&AttentionMask>,
    sinks: Option<&Array>,
) -> Result<Array> {
    const OP: &str = "scaled_dot_product_attention";
    let (qs, ks, vs) = (q.shape(), k.shape(), v.shape());
    let (batch, heads, kv_heads, t_q, t_kv) = (qs[0], qs[1], ks[1], qs[2], ks[2]);
    let dtype = promote_types(promote_types(q.dtype(), k.dtype()), v.dtype());
    let group = (heads / kv_heads) as i64;
    let (b, kh, tq, tk) = (batch as i64, kv_heads as i64, t_q as i64, t_kv as i64);
    // The queries of the heads that share a key/value head are rows of one product,
    // (B, N_kv, group * T_q, D) against (B, N_kv, D, T_kv): each key and value is read once
    // for all of them (a decode step's few-row products stream the cache once), and never
    // repeated. Without grouping no reshape is needed, and none is made: in a shapeless
    // trace the sequence lengths may then change.
    let grouped = group > 1;
    let scaled_q = multiply(&astype(q, dtype)?, scale)?;
    let (k, v) = (astype(k, dtype)?, astype(v, dtype)?);
    let grouped_q = if grouped {
        reshape(&scaled_q, &[b, kh, group * tq, qs[3] as i64])?
    } else {
        scaled_q
    };
    let scores = matmul(&grouped_q, &swapaxes(&k, -1, -2)?)?;
    let scores = if grouped {
        reshape(&scores, &[b, heads as i64, tq, tk])?
    } else {
        scores
    };
    let mut scores = astype(&scores, DType::Float32)?;
    match mask {
        None => {}
        Some(AttentionMask::Causal) => {
            let rows = expand_dims(&arange(0.0, t_q as f64, 1.0, DType::Int32)?, -1)?;
            let cols = arange(0.0, t_kv as f64, 1.0, DType::Int32)?;
            let visible = greater_equal(&add(&rows, tk - tq)?, &cols)?;
            scores = where_(&visible, &scores, HIDDEN)?;
        }
        Some(AttentionMask::Array(m)) => {
            if m.ndim() > 4 {
                return Err(Error::value(format!(
                    "[{OP}] the mask can have at most 4 dimensions but has {}.",
                    m.ndim()
                )));
            }
            broadcast_to(m, scores.shape()).map_err(|_| {
                Error::value(format!(
                    "[{OP}] mask with shape {} does not broadcast to the scores' shape {}.",
                    shape_text(m.shape()),
                    shape_text(scores.shape())
                ))
            })?;
            scores = if m.dtype() == DType::Bool {
                where_(m, &scores, HIDDEN)?
            } else {
                if promote_types(m.dtype(), dtype) != dtype {
                    return Err(Error::value(format!(
                        "[{OP}] the additive mask's type {} does not promote to the inputs' \
                         type {dtype}.",
                        m.dtype()
                    )));
                }
                add(&scores, &astype(m, DType::Float32)?)?
            };
        }
    }
    let weights = match sinks {
        None => softmax(&scores, -1, false)?,
        Some(s) => {
            let column = broadcast_to(
                &reshape(&astype(s, DType::Float32)?, &[1, heads as i64, 1, 1])?,
                &[batch, heads, t_q, 1],
            )?;
            let with_sink = softmax(&concatenate(&[column, scores], -1)?, -1, false)?;
            slice_axis(&with_sink, 3, 1, tk + 1, 1)?
        }
    };
    if !grouped {
        return matmul(&astype(&weights, dtype)?, &v);
    }
    let weights = reshape(&astype(&weights, dtype)?, &[b, kh, group * tq, tk])?;
    let out = matmul(&weights, &v)?;
    reshape(&out, &[b, heads as i64, tq, vs[3] as i64])
}

/// The gated delta rule (the linear-attention recurrence of gated delta networks such as
/// Qwen3-Next), run over the time axis: for each step `t`, with `S` the state,
///
/// ```text
/// S  = gamma_t * S                               (decay)
/// S += beta_t * (v_t - S k_t) k_t^T              (delta rule update)
/// o_t = S q_t                                    (read-out)
/// ```
///
/// Shapes: `q` and `k` are `(B, T, Hk, Dk)`, `v` is `(B, T, Hv, Dv)`, `gamma` is
/// `(B, T, Hv)` (one decay per head) or `(B, T, Hv, Dk)` (one per key feature), `beta`
/// is `(B, T, Hv)`, and the state is `(B, Hv, Dv, Dk)`; when `Hv` is a multiple of `Hk`
/// each query/key head serves `Hv / Hk` value heads. `initial_state` defaults to zeros.
/// `mask`, shaped `(B, T)`, marks the steps to run: at a masked-out step the state is
/// kept and the output is zero.
///
/// Returns `(output, state)`: the output `(B, T, Hv, Dv)` in the dtype `q` and `k` promote
/// to (float32 when that is not floating point), and the final state, which is float32
/// unless the inputs are wider (float64, complex64). As MLX does, every input except the
/// state is first cast to the output dtype, the state to float32. For float32, float16
/// and bfloat16 inputs of exactly these shapes one fused kernel runs the recurrence, each
/// head's state updated in place; its gradients and `vmap` are those of the composition
/// of ops (one step after another) that it stands for, which also computes every other
/// case, so arguments that do not fit raise the errors of the ops they reach.
/// Queries and keys without heads next to values with some (a division by zero that
/// crashes MLX) are a value error here.
///
/// ```
/// use lazulite::{fast::gated_delta_update, ones, Array, DType};
/// let q = ones(&[1, 2, 1, 2], DType::Float32).unwrap();
/// let k = Array::from_slice(&[1.0f32, 0.0, 0.0, 1.0], &[1, 2, 1, 2]).unwrap();
/// let v = Array::from_slice(&[2.0f32, 3.0], &[1, 2, 1, 1]).unwrap();
/// let gamma = Array::from_slice(&[1.0f32, 0.5], &[1, 2, 1]).unwrap();
/// let beta = ones(&[1, 2, 1], DType::Float32).unwrap();
/// let (out, state) = gated_delta_update(&q, &k, &v, &gamma, &beta, None, None).unwrap();
/// // step 0 writes 2 under key e0; step 1 halves it and writes 3 under key e1
/// assert_eq!(out.to_vec::<f32>().unwrap(), vec![2.0, 4.0]);
/// assert_eq!(state.shape(), &[1, 1, 1, 2]);
/// assert_eq!(state.to_vec::<f32>().unwrap(), vec![1.0, 3.0]);
/// ```
pub fn gated_delta_update(
    q: &Array,
    k: &Array,
    v: &Array,
    gamma: &Array,
    beta: &Array,
    initial_state: Option<&Array>,
    mask: Option<&Array>,
) -> Result<(Array, Array)> {
    let promoted = promote_types(q.dtype(), k.dtype());
    let dtype = if promoted.is_floating() {
        promoted
    } else {
        promote_types(promoted, DType::Float32)
    };
    let Some(shape) = delta_shape(q, k, v, gamma, beta, initial_state, mask, dtype) else {
        return gated_delta_composed(q, k, v, gamma, beta, initial_state, mask);
    };
    // The kernel reads the inputs cast as the composition casts them, so both round alike.
    let state = match initial_state {
        Some(h) => astype(h, DType::Float32)?,
        None => zeros(
            &[
                shape.batch,
                shape.value_heads,
                shape.value_dim,
                shape.key_dim,
            ],
            DType::Float32,
        )?,
    };
    let mut inputs = [q, k, v, gamma, beta]
        .into_iter()
        .map(|x| astype(x, dtype))
        .collect::<Result<Vec<_>>>()?;
    inputs.push(state.clone());
    inputs.extend(mask.cloned());
    let composed = Arc::new(|x: &[Array]| {
        let (out, state) =
            gated_delta_composed(&x[0], &x[1], &x[2], &x[3], &x[4], Some(&x[5]), x.get(6))?;
        Ok(vec![out, state])
    });
    let fused = Fused {
        name: "gated_delta_update",
        params: String::new(),
        kernel: Box::new(move |inputs| {
            let mut inputs = inputs.into_iter();
            let mut next = || inputs.next().expect("gated_delta_update has six inputs");
            let (q, k, v, gamma, beta, state) = (next(), next(), next(), next(), next(), next());
            let mask = inputs.next();
            Ok(kernels::gated_delta(q, k, v, gamma, beta, state, mask, shape, dtype)?.into())
        }),
        composed,
    };
    let specs = vec![
        OutputSpec {
            shape: vec![shape.batch, shape.steps, shape.value_heads, shape.value_dim],
            dtype,
        },
        OutputSpec {
            shape: state.shape().to_vec(),
            dtype: DType::Float32,
        },
    ];
    let mut outputs = fused.record_multi(inputs, specs).into_iter();
    let out = outputs.next().expect("gated_delta_update has two outputs");
    let state = outputs.next().expect("gated_delta_update has two outputs");
    Ok((out, state))
}

/// The sizes of a gated delta recurrence the fused kernel runs: real float inputs of
/// exactly the documented shapes (anything else takes the composition, which broadcasts
/// what its ops broadcast and raises their errors).
#[allow(clippy::too_many_arguments)]
fn delta_shape(
    q: &Array,
    k: &Array,
    v: &Array,
    gamma: &Array,
    beta: &Array,
    initial_state: Option<&Array>,
    mask: Option<&Array>,
    dtype: DType,
) -> Option<DeltaShape> {
    if compute_dtype(dtype) != DType::Float32 {
        return None;
    }
    let (&[batch, steps, key_heads, key_dim], &[vb, vt, value_heads, value_dim]) =
        (q.shape(), v.shape())
    else {
        return None;
    };
    let heads = [batch, steps, value_heads];
    let decay_per_key = gamma.shape() == [batch, steps, value_heads, key_dim];
    let fits = k.shape() == q.shape()
        && (vb, vt) == (batch, steps)
        && steps > 0
        && key_heads > 0
        && key_dim > 0
        && value_dim > 0
        && value_heads % key_heads == 0
        && (decay_per_key || gamma.shape() == heads)
        && beta.shape() == heads
        && initial_state.is_none_or(|h| h.shape() == [batch, value_heads, value_dim, key_dim])
        && mask.is_none_or(|m| m.shape() == [batch, steps])
        && [
            Some(q),
            Some(k),
            Some(v),
            Some(gamma),
            Some(beta),
            initial_state,
            mask,
        ]
        .into_iter()
        .flatten()
        .all(|x| !x.dtype().is_complex());
    fits.then_some(DeltaShape {
        batch,
        steps,
        key_heads,
        value_heads,
        key_dim,
        value_dim,
        decay_per_key,
    })
}

/// [`gated_delta_update`] as a composition of ops, one step after another.
fn gated_delta_composed(
    q: &Array,
    k: &Array,
    v: &Array,
    gamma: &Array,
    beta: &Array,
    initial_state: Option<&Array>,
    mask: Option<&Array>,
) -> Result<(Array, Array)> {
    const OP: &str = "gated_delta_update";
    let promoted = promote_types(q.dtype(), k.dtype());
    let dtype = if promoted.is_floating() {
        promoted
    } else {
        promote_types(promoted, DType::Float32)
    };
    let dims = |name: &str, x: &Array| -> Result<[usize; 4]> {
        match *x.shape() {
            [a, b, c, d, ..] => Ok([a, b, c, d]),
            _ => Err(Error::index(format!(
                "[{OP}] {name} must have at least 4 dimensions (batch, time, heads, features) \
                 but has shape {}.",
                shape_text(x.shape())
            ))),
        }
    };
    let [batch, steps, hk, dk] = dims("q", q)?;
    let [_, _, hv, dv] = dims("v", v)?;
    let mut q = astype(q, dtype)?;
    let mut k = astype(k, dtype)?;
    let v = astype(v, dtype)?;
    let gamma = astype(gamma, dtype)?;
    let beta = astype(beta, dtype)?;
    let mut state = match initial_state {
        Some(h) => astype(h, DType::Float32)?,
        None => zeros(&[batch, hv, dv, dk], DType::Float32)?,
    };
    let mask = mask.map(|m| astype(m, DType::Bool)).transpose()?;
    if hv != hk {
        if hk == 0 {
            return Err(Error::value(format!(
                "[{OP}] q and k have no heads but v has {hv}."
            )));
        }
        let group = (hv / hk) as i64;
        q = repeat(&q, group, 2)?;
        k = repeat(&k, group, 2)?;
    }
    // Step `t` of `x` along the time axis, without that axis.
    let at = |name: &str, x: &Array, t: usize| -> Result<Array> {
        if x.ndim() < 2 {
            return Err(Error::index(format!(
                "[{OP}] {name} needs a time axis (axis 1) but has {} dimensions.",
                x.ndim()
            )));
        }
        if x.shape()[1] <= t {
            return Err(Error::value(format!(
                "[{OP}] {name} has {} time steps (axis 1) but q has {steps}.",
                x.shape()[1]
            )));
        }
        squeeze(&slice_axis(x, 1, t as i64, t as i64 + 1, 1)?, 1)
    };
    let mut outputs = Vec::with_capacity(steps);
    for t in 0..steps {
        let q_t = at("q", &q, t)?;
        let k_t = at("k", &k, t)?;
        let v_t = at("v", &v, t)?;
        let gamma_t = at("gamma", &gamma, t)?;
        let beta_t = at("beta", &beta, t)?;
        let mask_t = mask.as_ref().map(|m| at("mask", m, t)).transpose()?;
        // One decay per head broadcasts over the state's (Dv, Dk); one per key feature
        // over its value rows.
        let decay = if gamma_t.ndim() == 2 {
            expand_dims(&gamma_t, [-1, -2])?
        } else {
            expand_dims(&gamma_t, -2)?
        };
        let decayed = multiply(&state, &decay)?;
        let k_row = expand_dims(&k_t, -2)?;
        let recalled = sum(&multiply(&decayed, &k_row)?, -1, false)?;
        let delta = multiply(&subtract(&v_t, &recalled)?, &expand_dims(&beta_t, -1)?)?;
        let updated = add(&decayed, &multiply(&expand_dims(&delta, -1)?, &k_row)?)?;
        state = match &mask_t {
            Some(m) => where_(&expand_dims(m, [-1, -2, -3])?, &updated, &state)?,
            None => updated,
        };
        let out = sum(&multiply(&state, &expand_dims(&q_t, -2)?)?, -1, false)?;
        outputs.push(match &mask_t {
            Some(m) => where_(&expand_dims(m, [-1, -2])?, &out, 0.0f32)?,
            None => out,
        });
    }
    let out = astype(&stack(&outputs, 1)?, dtype)?;
    Ok((out, state))
}
