//! Fused kernels of the `fast` ops: RMS normalisation and rotary position encoding (a
//! row of the last axis in one pass) and the gated delta recurrence (each head's state
//! updated in place, step after step). They compute in float32, what the ops compose for
//! float32, float16 and bfloat16 inputs, instead of a chain of whole-array operations.

use super::elementwise::{cast, converted};
use super::parallel;
use super::simd;
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::error::Result;

/// Elements of the input one parallel task handles; smaller inputs run on the caller.
const TASK_ELEMENTS: usize = 1 << 15;

/// Applies `row(index, input_row, output_row)` to every row of the last axis of the
/// float32 copy of `x`, in parallel when large; the result is converted to `out`.
fn map_rows(
    x: Tensor,
    out: DType,
    row: impl Fn(usize, &[f32], &mut [f32]) + Sync,
) -> Result<Tensor> {
    let x = converted(x, DType::Float32)?;
    let width = x.shape.last().copied().unwrap_or(1);
    let mut y = Tensor::uninit(DType::Float32, &x.shape)?;
    if y.size() == 0 || width == 0 {
        return converted(y, out);
    }
    let (src, dst) = (x.slice::<f32>(), y.slice_mut::<f32>());
    let rows_per_task = (TASK_ELEMENTS / width).max(1);
    let task = |(t, (src, dst)): (usize, (&[f32], &mut [f32]))| {
        for (i, (s, d)) in src
            .chunks_exact(width)
            .zip(dst.chunks_exact_mut(width))
            .enumerate()
        {
            row(t * rows_per_task + i, s, d);
        }
    };
    let chunk = rows_per_task * width;
    if src.len() > chunk {
        parallel::for_each_chunk_mut(dst, chunk, |t, d| {
            task((t, (&src[t * chunk..][..d.len()], d)))
        });
    } else {
        task((0, (src, dst)));
    }
    converted(y, out)
}

/// `x / sqrt(mean(x^2) + eps) * weight` over the last axis of `x` (any float dtype,
/// computed in float32), with `weight` one value per element of that axis; the result
/// has dtype `out`.
pub fn rms_norm(x: Tensor, weight: Option<Tensor>, eps: f32, out: DType) -> Result<Tensor> {
    let weight = weight.map(|w| converted(w, DType::Float32)).transpose()?;
    let weight = weight.as_ref().map(|w| w.slice::<f32>());
    map_rows(x, out, |_, x, y| {
        let mean_square = x.iter().map(|v| v * v).sum::<f32>() / x.len() as f32;
        let scale = 1.0 / (mean_square + eps).sqrt();
        match weight {
            Some(w) => {
                for ((y, &x), &w) in y.iter_mut().zip(x).zip(w) {
                    *y = x * scale * w;
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
    map_rows(x, out, |index, x, y| {
        let batch = index / rotation.rows_per_batch;
        let offset = rotation.offsets[batch.min(rotation.offsets.len() - 1)];
        let position = (offset + (index % rotation.steps) as f32) * rotation.scale;
        for (i, &frequency) in rotation.frequencies.iter().enumerate() {
            let (s, c) = (position * frequency).sin_cos();
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
