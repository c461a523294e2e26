//! Fused row kernels of the `fast` ops: RMS normalisation and rotary position encoding.
//! Each computes a row of the last axis in one pass in float32 (what the ops compose for
//! float32, float16 and bfloat16 inputs), instead of a chain of whole-array operations.

use super::elementwise::converted;
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::error::Result;
use rayon::prelude::*;

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
        src.par_chunks(chunk)
            .zip(dst.par_chunks_mut(chunk))
            .enumerate()
            .for_each(task);
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
