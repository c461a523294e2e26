//! Fused kernels of the `fast` ops: RMS normalisation and rotary position encoding (a
//! row of the last axis in one pass), attention for a few queries (each key and value read
//! once for the heads that share it), and the gated delta recurrence (each head's state
//! updated in place, step after step). They compute in float32, what the ops compose for
//! float32, float16 and bfloat16 inputs, instead of a chain of whole-array operations.

use super::elementwise::{cast, converted};
use super::parallel;
use super::simd;
use super::softmax::softmax_row;
use crate::backend::memory::Scratch;
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::element::{Element, F32Lane};
use crate::error::{Error, Result};
use half::{bf16, f16};
use std::sync::Mutex;

/// Elements of the input one parallel task handles; smaller inputs run on the caller.
const TASK_ELEMENTS: usize = 1 << 15;

/// Applies `row(index, input_row, output_row)` to every row of the last axis of `x` in
/// float32, in parallel when large; the result has dtype `out`. A contiguous float16 or
/// bfloat16 `x` whose result keeps its dtype is widened and narrowed a row at a time: a
/// decode step normalises and rotates rows of a few thousand values, for which whole
/// float32 copies before and after cost more than the row's own work.
fn map_rows(
    x: Tensor,
    out: DType,
    row: impl Fn(usize, &[f32], &mut [f32]) + Sync,
) -> Result<Tensor> {
    match (x.dtype, out) {
        (DType::BFloat16, DType::BFloat16) if x.is_contiguous() => map_rows_as::<bf16>(x, row),
        (DType::Float16, DType::Float16) if x.is_contiguous() => map_rows_as::<f16>(x, row),
        _ => converted(map_rows_as::<f32>(converted(x, DType::Float32)?, row)?, out),
    }
}

/// [`map_rows`] for a contiguous `x` of `E`, the result of `E` too.
fn map_rows_as<E: Element<Storage = E> + F32Lane + bytemuck::Pod + Sync + Send>(
    x: Tensor,
    row: impl Fn(usize, &[f32], &mut [f32]) + Sync,
) -> Result<Tensor> {
    let width = x.shape.last().copied().unwrap_or(1);
    let mut y = Tensor::uninit(E::DTYPE, &x.shape)?;
    if y.size() == 0 || width == 0 {
        return Ok(y);
    }
    let (src, dst) = (x.slice::<E>(), y.slice_mut::<E>());
    let rows_per_task = (TASK_ELEMENTS / width).max(1);
    let chunk = rows_per_task * width;
    let rooms = TaskRooms::default();
    let task = |t: usize, dst: &mut [E]| {
        let src = &src[t * chunk..][..dst.len()];
        // float32 rows need no room of their own: they are read and written in place.
        let room_len = if E::DTYPE == DType::Float32 {
            0
        } else {
            2 * width
        };
        let Some(mut room) = rooms.take(room_len) else {
            return;
        };
        // SAFETY: the scratch holds `room_len` values, each row written before read.
        let room = unsafe { std::slice::from_raw_parts_mut(room.as_mut_ptr(), room_len) };
        simd::vectorised(
            #[inline(always)]
            || {
                for (i, (s, d)) in (src.chunks_exact(width))
                    .zip(dst.chunks_exact_mut(width))
                    .enumerate()
                {
                    let index = t * rows_per_task + i;
                    if E::DTYPE == DType::Float32 {
                        row(index, bytemuck::cast_slice(s), bytemuck::cast_slice_mut(d));
                    } else {
                        let (wide, result) = room.split_at_mut(width);
                        wide.iter_mut().zip(s).for_each(|(w, &v)| *w = v.widen());
                        row(index, wide, result);
                        d.iter_mut()
                            .zip(&*result)
                            .for_each(|(d, &v)| *d = E::narrow(v));
                    }
                }
            },
        )
    };
    if src.len() > chunk {
        parallel::for_each_chunk_mut(dst, chunk, task);
    } else {
        task(0, dst);
    }
    rooms.check()?;
    Ok(y)
}

/// Working room for parallel tasks, from the buffer cache; the first allocation that
/// fails is kept for the caller, since a task cannot return it.
#[derive(Default)]
struct TaskRooms {
    failed: Mutex<Option<Error>>,
}

impl TaskRooms {
    /// Room for `len` values, or `None` if it cannot be allocated (the task then stops).
    fn take(&self, len: usize) -> Option<Scratch<f32>> {
        match Scratch::new(len) {
            Ok(room) => Some(room),
            Err(e) => {
                *self.failed.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                None
            }
        }
    }

    /// Once every task has run: the error of an allocation that failed, if one did.
    fn check(self) -> Result<()> {
        match self.failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// `x / sqrt(mean(x^2) + eps) * weight` over the last axis of `x` (any float dtype,
/// computed in float32), with `weight` one value per element of that axis; the result
/// has dtype `out`.
pub fn rms_norm(x: Tensor, weight: Option<Tensor>, eps: f32, out: DType) -> Result<Tensor> {
    // A contiguous float16 or bfloat16 weight is widened as each row reads it: a decode
    // step normalises one row, for which a float32 copy of the weight cost more.
    match weight {
        Some(w) if w.is_contiguous() && w.dtype == DType::BFloat16 => {
            rms_norm_with(x, Some(w.slice::<bf16>()), eps, out)
        }
        Some(w) if w.is_contiguous() && w.dtype == DType::Float16 => {
            rms_norm_with(x, Some(w.slice::<f16>()), eps, out)
        }
        Some(w) => {
            let w = converted(w, DType::Float32)?;
            rms_norm_with(x, Some(w.slice::<f32>()), eps, out)
        }
        None => rms_norm_with::<f32>(x, None, eps, out),
    }
}

/// [`rms_norm`] with the weight's values, if any, as stored.
fn rms_norm_with<W: F32Lane + Sync>(
    x: Tensor,
    weight: Option<&[W]>,
    eps: f32,
    out: DType,
) -> Result<Tensor> {
    map_rows(x, out, |_, x, y| {
        let mean_square = x.iter().map(|v| v * v).sum::<f32>() / x.len() as f32;
        let scale = 1.0 / (mean_square + eps).sqrt();
        match weight {
            Some(w) => {
                for ((y, &x), &w) in y.iter_mut().zip(x).zip(w) {
                    *y = x * scale * w.widen();
                }
            }
            None => {
                for (y, &x) in y.iter_mut().zip(x) {
                    *y = x * scale;
                }
            }
        }
    })
}

/// How [`rope`] rotates one row.
#[derive(Clone, Debug)]
pub struct Rotation<'a> {
    /// Features rotated (even); the rest of the row is copied.
    pub dims: usize,
    /// Pairs of consecutive features instead of features `dims / 2` apart.
    pub traditional: bool,
    /// Angular frequency of each pair (`dims / 2` values).
    pub frequencies: &'a [f32],
    /// Factor on the positions.
    pub scale: f32,
    /// Position of the first row of each batch element (one value, or one per element).
    pub offsets: &'a [f32],
    /// Rows per batch element, and rows per position step (the length of the time axis).
    pub rows_per_batch: usize,
    pub steps: usize,
}

/// Rotary position encoding of `x` shaped `(B, ..., T, D)`: row `(b, ..., t)` is rotated
/// in pairs by angles `(offset[b] + t) * scale * frequency[i]`; the result has dtype `out`.
pub fn rope(x: Tensor, rotation: &Rotation, out: DType) -> Result<Tensor> {
    let half = rotation.dims / 2;
    // The rows at one position (every head of a decode step's token) turn by the same
    // angles: their sines and cosines are taken once per position, not once per row.
    let (positions, pairs) = (
        rotation.offsets.len() * rotation.steps,
        rotation.frequencies.len(),
    );
    let mut turns = Vec::with_capacity(positions * pairs);
    for p in 0..positions {
        let (offset, step) = (rotation.offsets[p / rotation.steps], p % rotation.steps);
        let position = (offset + step as f32) * rotation.scale;
        turns.extend(
            rotation
                .frequencies
                .iter()
                .map(|&f| (position * f).sin_cos()),
        );
    }
    map_rows(x, out, |index, x, y| {
        let batch = (index / rotation.rows_per_batch).min(rotation.offsets.len() - 1);
        let at = batch * rotation.steps + index % rotation.steps;
        for (i, &(s, c)) in turns[at * pairs..][..pairs].iter().enumerate() {
            let (a, b) = if rotation.traditional {
                (2 * i, 2 * i + 1)
            } else {
                (i, i + half)
            };
            y[a] = x[a] * c - x[b] * s;
            y[b] = x[a] * s + x[b] * c;
        }
        y[rotation.dims..].copy_from_slice(&x[rotation.dims..]);
    })
}

/// The sizes of an attention (see [`attention`]).
#[derive(Clone, Copy, Debug)]
pub struct AttentionShape {
    pub batch: usize,
    /// Query heads; each `heads / kv_heads` of them share a key/value head.
    pub heads: usize,
    pub kv_heads: usize,
    pub queries: usize,
    pub keys: usize,
    pub key_dim: usize,
    pub value_dim: usize,
}

/// The score given to a hidden key: the lowest finite value, not minus infinity, so that a
/// query that sees no key (a left-padded row) averages all values instead of producing
/// NaN, which the padded rows' products would carry into every row (MLX does the same).
pub const HIDDEN: f32 = f32::MIN;

/// `softmax(scale * q k^T) v` for `q` `(B, H, Tq, Dk)`, `k` `(B, Hk, Tk, Dk)` and `v` `(B,
/// Hk, Tk, Dv)` of any layout, `dtype` being float32, float16 or bfloat16 (the dtype the
/// inputs promote to). With `causal`, query `t` sees the keys up to `Tk - Tq + t`. One
/// task per (batch, key/value head) reads that head's keys and values once for all the
/// query heads that share it.
///
/// It rounds where the composition of ops computing in `dtype` does (the scaled queries,
/// the scores, the weights and the result), so the two agree but for the order of sums;
/// the scores' softmax is in float32. The result is contiguous `(B, H, Tq, Dv)` of `dtype`.
#[allow(clippy::too_many_arguments)]
pub fn attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    shape: AttentionShape,
    scale: f32,
    causal: bool,
    dtype: DType,
) -> Result<Tensor> {
    match dtype {
        DType::Float16 => attention_as::<f16>(q, k, v, shape, scale, causal),
        DType::BFloat16 => attention_as::<bf16>(q, k, v, shape, scale, causal),
        _ => attention_as::<f32>(q, k, v, shape, scale, causal),
    }
}

/// [`attention`] computing in `E`.
fn attention_as<E: Element<Storage = E> + F32Lane + bytemuck::Pod + Sync>(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    shape: AttentionShape,
    scale: f32,
    causal: bool,
) -> Result<Tensor> {
    let AttentionShape {
        batch,
        heads,
        kv_heads,
        queries,
        keys,
        key_dim,
        value_dim,
    } = shape;
    if kv_heads == 0 || heads % kv_heads != 0 {
        return Err(Error::value(format!(
            "[scaled_dot_product_attention] n_heads must be a multiple of n_kv_heads, found \
             n_heads {heads} for n_kv_heads {kv_heads}."
        )));
    }
    let round = |x: f32| E::narrow(x).widen();
    let q = converted(q, DType::Float32)?;
    // Keys and values are read where they lie (a cache's slice) as long as their rows
    // are contiguous, go forwards and are aligned for their elements.
    let rows_of = |t: Tensor| {
        let aligned = (t.buf.bytes().as_ptr() as usize).is_multiple_of(std::mem::align_of::<E>());
        match t.dtype == E::DTYPE
            && (t.shape[3] == 1 || t.strides[3] == 1)
            && t.strides[2] >= 0
            && aligned
        {
            true => Ok(t),
            false => converted(t, E::DTYPE),
        }
    };
    let (k, v) = (rows_of(k)?, rows_of(v)?);
    let mut out = Tensor::uninit(DType::Float32, &[batch, heads, queries, value_dim])?;
    let rows = heads / kv_heads * queries;
    if out.size() == 0 {
        return converted(out, E::DTYPE);
    }
    let heads_of = HeadAttention::<E> {
        queries: q.slice::<f32>(),
        keys: &k,
        values: &v,
        shape,
        scale: round(scale),
        causal,
        products: simd::attention_products(),
        element: std::marker::PhantomData,
    };
    // A task computes a block of up to MAX_VECTORS rows of one key/value head (a decode
    // step's query heads that share it), which read each key and value row once; its
    // room for the rows' scores and weights comes from the buffer cache.
    let blocks_per_head = rows.div_ceil(simd::MAX_VECTORS);
    let tasks = batch * kv_heads * blocks_per_head;
    let room_len = simd::MAX_VECTORS * (key_dim + 2 * keys);
    let rooms = TaskRooms::default();
    let dst = SendPtr(out.slice_mut::<f32>().as_mut_ptr());
    let run = |task: usize| {
        let (head, block) = (task / blocks_per_head, task % blocks_per_head);
        let first = block * simd::MAX_VECTORS;
        let count = simd::MAX_VECTORS.min(rows - first);
        let Some(mut room) = rooms.take(room_len) else {
            return;
        };
        // SAFETY: the scratch holds `room_len` values, all written below before read;
        // rows `first..first + count` of this head are this task's alone.
        let (room, out) = unsafe {
            (
                std::slice::from_raw_parts_mut(room.as_mut_ptr(), room_len),
                std::slice::from_raw_parts_mut(
                    dst.at((head * rows + first) * value_dim),
                    count * value_dim,
                ),
            )
        };
        let block = RowBlock { first, count };
        simd::vectorised(
            #[inline(always)]
            || heads_of.run(head / kv_heads, head % kv_heads, block, room, out),
        )
    };
    let work = batch * heads * queries * keys * (key_dim + value_dim);
    if work >= TASK_ELEMENTS && tasks > 1 {
        parallel::for_each(tasks, run);
    } else {
        (0..tasks).for_each(run);
    }
    rooms.check()?;
    converted(out, E::DTYPE)
}

/// Rows `first..first + count` of the query rows that share one key/value head.
#[derive(Clone, Copy)]
struct RowBlock {
    first: usize,
    count: usize,
}

/// The attention of the query heads that share one key/value head (see [`attention`]).
struct HeadAttention<'a, E> {
    /// All queries, contiguous float32.
    queries: &'a [f32],
    keys: &'a Tensor,
    values: &'a Tensor,
    shape: AttentionShape,
    /// The scale as the inputs' dtype holds it.
    scale: f32,
    causal: bool,
    products: simd::AttentionProducts,
    element: std::marker::PhantomData<E>,
}

impl<E: Element<Storage = E> + F32Lane + bytemuck::Pod> HeadAttention<'_, E> {
    /// Writes into `out` the results of `block` of the query rows of batch element `b`
    /// that share key/value head `kh` (its heads' rows one after another), using `room`
    /// (at least `MAX_VECTORS * (key_dim + 2 * keys)` values) for its work.
    #[inline(always)]
    fn run(&self, b: usize, kh: usize, block: RowBlock, room: &mut [f32], out: &mut [f32]) {
        let AttentionShape {
            heads,
            kv_heads,
            queries,
            keys,
            key_dim,
            value_dim,
            ..
        } = self.shape;
        let round = |x: f32| E::narrow(x).widen();
        let RowBlock { first, count } = block;
        if keys == 0 {
            // No key: an empty sum of values.
            out.fill(0.0);
            return;
        }
        let (scaled, rest) = room.split_at_mut(count * key_dim);
        let (scores, rest) = rest.split_at_mut(count * keys);
        let weights = &mut rest[..count * keys];
        // The block's queries, scaled and rounded as the composition's product with the
        // scale is.
        let start = ((b * heads + kh * (heads / kv_heads)) * queries + first) * key_dim;
        for (s, &x) in scaled
            .iter_mut()
            .zip(&self.queries[start..][..count * key_dim])
        {
            *s = round(x * self.scale);
        }
        // (Queries without features score 0 against every key.)
        let query_rows = block_rows(scaled, key_dim);
        let key_rows = cache_rows::<E>(self.keys, b, kh, keys, key_dim);
        (self.products.scores)(&key_rows, &query_rows[..count], scores);
        // Rounded as the composition's product in the inputs' dtype is; a causal query
        // hides the keys past its own position.
        for (r, scores) in scores.chunks_exact_mut(keys).enumerate() {
            scores.iter_mut().for_each(|s| *s = round(*s));
            if self.causal {
                let position = (first + r) % queries;
                let visible = (keys + position + 1).saturating_sub(queries).min(keys);
                scores[visible..].fill(HIDDEN);
            }
        }
        for (scores, weights) in scores
            .chunks_exact(keys)
            .zip(weights.chunks_exact_mut(keys))
        {
            softmax_row(scores, weights);
            weights.iter_mut().for_each(|w| *w = round(*w));
        }
        if value_dim == 0 {
            return;
        }
        let value_rows = cache_rows::<E>(self.values, b, kh, keys, value_dim);
        let weight_rows = block_rows(weights, keys);
        (self.products.weighted_sum)(&value_rows, &weight_rows[..count], out);
    }
}

/// The rows of `width` values that `values` holds, for a block of at most
/// [`simd::MAX_VECTORS`] rows (empty rows past them, or all rows empty for width 0).
fn block_rows(values: &[f32], width: usize) -> [&[f32]; simd::MAX_VECTORS] {
    let mut rows: [&[f32]; simd::MAX_VECTORS] = [&[]; simd::MAX_VECTORS];
    for (slot, row) in rows.iter_mut().zip(values.chunks_exact(width.max(1))) {
        *slot = row;
    }
    rows
}

/// Rows `0..count` (`width` contiguous elements each) of head `h` of batch element `b` of
/// a `(B, H, T, D)` tensor of `E`, whose rows go forwards and whose buffer is aligned for
/// `E`.
fn cache_rows<E: Element<Storage = E> + bytemuck::Pod>(
    t: &Tensor,
    b: usize,
    h: usize,
    count: usize,
    width: usize,
) -> simd::StridedRows<'_> {
    let start = t.offset as isize + b as isize * t.strides[0] + h as isize * t.strides[1];
    let stride = t.strides[2] as usize;
    let len = match count {
        0 => 0,
        _ => (count - 1) * stride + width,
    };
    let size = std::mem::size_of::<E>();
    let bytes = &t.buf.bytes()[start as usize * size..][..len * size];
    let data = match E::DTYPE {
        DType::Float16 => simd::RowElements::Float16(bytemuck::cast_slice(bytes)),
        DType::BFloat16 => simd::RowElements::BFloat16(bytemuck::cast_slice(bytes)),
        _ => simd::RowElements::Float32(bytemuck::cast_slice(bytes)),
    };
    simd::StridedRows {
        data,
        count,
        width,
        stride,
    }
}

/// The sizes of a gated delta recurrence (see [`gated_delta`]).
#[derive(Clone, Copy, Debug)]
pub struct DeltaShape {
    pub batch: usize,
    pub steps: usize,
    /// Query/key heads; each serves `value_heads / key_heads` value heads.
    pub key_heads: usize,
    pub value_heads: usize,
    pub key_dim: usize,
    pub value_dim: usize,
    /// One decay per key feature (`gamma` is `(B, T, Hv, Dk)`) rather than per head.
    pub decay_per_key: bool,
}

/// The gated delta rule over the time axis, in float32, one task per (batch, value head):
/// the state `(Dv, Dk)` of the head is decayed by `gamma`, corrected towards `v` along `k`
/// by `beta`, and read out along `q`, step after step, in one buffer.
///
/// Inputs (any float dtype, any layout): `q`, `k` `(B, T, Hk, Dk)`, `v` `(B, T, Hv, Dv)`,
/// `gamma` `(B, T, Hv)` or `(B, T, Hv, Dk)`, `beta` `(B, T, Hv)`, `state` `(B, Hv, Dv, Dk)`,
/// and `mask` `(B, T)` (a zero skips the step: the state is kept, the output is zero).
/// Returns the outputs `(B, T, Hv, Dv)` converted to `out` and the float32 final state.
#[allow(clippy::too_many_arguments)]
pub fn gated_delta(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    gamma: Tensor,
    beta: Tensor,
    state: Tensor,
    mask: Option<Tensor>,
    shape: DeltaShape,
    out: DType,
) -> Result<[Tensor; 2]> {
    let f32s = |t: Tensor| converted(t, DType::Float32);
    let (q, k, v) = (f32s(q)?, f32s(k)?, f32s(v)?);
    let (gamma, beta, mask) = (f32s(gamma)?, f32s(beta)?, mask.map(f32s).transpose()?);
    let DeltaShape {
        batch,
        steps,
        key_heads: hk,
        value_heads: hv,
        key_dim: dk,
        value_dim: dv,
        decay_per_key,
    } = shape;
    // The state is updated in place: in its own buffer if nobody else holds it.
    let mut final_state = f32s(state)?;
    if !final_state.is_donatable(DType::Float32) {
        final_state = cast::<f32, f32>(final_state)?;
    }
    let mut outputs = Tensor::uninit(DType::Float32, &[batch, steps, hv, dv])?;
    let group = hv / hk.max(1);
    let (q, k, v) = (q.slice::<f32>(), k.slice::<f32>(), v.slice::<f32>());
    let (gamma, beta) = (gamma.slice::<f32>(), beta.slice::<f32>());
    let mask = mask.as_ref().map(|m| m.slice::<f32>());
    let gamma_width = if decay_per_key { dk } else { 1 };
    let out_ptr = SendPtr(outputs.slice_mut::<f32>().as_mut_ptr());
    let dot = simd::folds().map_or(scalar_dot as fn(&[f32], &[f32]) -> f32, |f| f.dot);
    parallel::for_each_chunk_mut(
        final_state.slice_mut::<f32>(),
        (dv * dk).max(1),
        |task, s| {
            let (b, h) = (task / hv.max(1), task % hv.max(1));
            let kh = h / group.max(1);
            let mut delta = vec![0.0f32; dv];
            for t in 0..steps {
                let row = (b * steps + t) * hv + h;
                // SAFETY: output rows (b, t, h) belong to task (b, h) alone.
                let o = unsafe { std::slice::from_raw_parts_mut(out_ptr.at(row * dv), dv) };
                if mask.is_some_and(|m| m[b * steps + t] == 0.0) {
                    o.fill(0.0);
                    continue;
                }
                let at = ((b * steps + t) * hk + kh) * dk;
                let step = DeltaStep {
                    q: &q[at..at + dk],
                    k: &k[at..at + dk],
                    v: &v[row * dv..row * dv + dv],
                    gamma: &gamma[row * gamma_width..row * gamma_width + gamma_width],
                    beta: beta[row],
                };
                simd::vectorised(
                    #[inline(always)]
                    || step.run(s, &mut delta, o, dot),
                );
            }
        },
    );
    Ok([converted(outputs, out)?, final_state])
}

/// One time step of one head of [`gated_delta`].
struct DeltaStep<'a> {
    q: &'a [f32],
    k: &'a [f32],
    v: &'a [f32],
    /// One decay, or one per key feature.
    gamma: &'a [f32],
    beta: f32,
}

impl DeltaStep<'_> {
    /// Decays the state `s` (rows of `Dk`), moves each row towards its value along the
    /// key, and reads the rows out along the query into `out`.
    #[inline(always)]
    fn run(
        &self,
        s: &mut [f32],
        delta: &mut [f32],
        out: &mut [f32],
        dot: fn(&[f32], &[f32]) -> f32,
    ) {
        let dk = self.k.len();
        for ((row, d), &v) in s.chunks_exact_mut(dk).zip(delta.iter_mut()).zip(self.v) {
            if let [g] = self.gamma {
                row.iter_mut().for_each(|x| *x *= g);
            } else {
                row.iter_mut().zip(self.gamma).for_each(|(x, g)| *x *= g);
            }
            *d = (v - dot(row, self.k)) * self.beta;
        }
        for ((row, &d), o) in s.chunks_exact_mut(dk).zip(delta.iter()).zip(out) {
            row.iter_mut().zip(self.k).for_each(|(x, k)| *x += d * k);
            *o = dot(row, self.q);
        }
    }
}

fn scalar_dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(a, b)| a * b).sum()
}

/// A raw pointer into the outputs, shared by tasks that write disjoint rows.
#[derive(Clone, Copy)]
struct SendPtr(*mut f32);
// SAFETY: each task writes only its own rows of a buffer that outlives the loop.
unsafe impl Send for SendPtr {}
unsafe impl Sync for SendPtr {}

impl SendPtr {
    /// # Safety
    /// `offset` elements past the start must stay inside the buffer.
    unsafe fn at(self, offset: usize) -> *mut f32 {
        self.0.add(offset)
    }
}
