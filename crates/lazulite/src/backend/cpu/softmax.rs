//! Softmax and logsumexp along one axis: per row a max pass, then `exp(x - max)` summed
//! (softmax writes it to the output and scales by `1 / sum`). float32 uses the SIMD exp;
//! float16 and bfloat16 compute in float32; float64 computes in float64.

use super::copy::{copy_into, ViewLayout};
use super::parallel;
use super::simd::{apply_in_place_with, vectorised, Isa, Kernel};
use super::strided::PARALLEL_MIN;
use crate::backend::{contiguous_strides, Tensor};
use crate::dtype::DType;
use crate::element::F32Lane;
use crate::error::Result;
use half::{bf16, f16};

/// A row is shifted by its maximum and exponentiated this many values at a time, which
/// stay in cache between the two passes.
const CHUNK: usize = 1024;

/// Softmax of `x` (float32, float16, bfloat16 or float64) along `axis`, as a new
/// contiguous tensor of `x`'s dtype and shape. With `precise`, half types round once at
/// the end; without it, the exponentials and their sum are rounded to the half type
/// before dividing (as when computing in that type).
pub fn softmax(x: &Tensor, axis: usize, precise: bool) -> Result<Tensor> {
    let rows = rows_last(x, axis)?;
    let mut out = Tensor::uninit(x.dtype, &rows.shape)?;
    let n = rows.shape.last().copied().unwrap_or(1);
    if rows.size() > 0 && n > 0 {
        match x.dtype {
            DType::Float32 => each_row(
                rows.slice::<f32>(),
                n,
                out.slice_mut::<f32>(),
                n,
                softmax_row,
            ),
            DType::Float64 => each_row(rows.slice::<f64>(), n, out.slice_mut::<f64>(), n, f64_row),
            DType::Float16 => {
                each_row(rows.slice::<f16>(), n, out.slice_mut::<f16>(), n, |s, d| {
                    half_row::<f16>(s, d, precise)
                })
            }
            DType::BFloat16 => each_row(
                rows.slice::<bf16>(),
                n,
                out.slice_mut::<bf16>(),
                n,
                |s, d| half_row::<bf16>(s, d, precise),
            ),
            other => unreachable!("no softmax kernel for {other:?}"),
        }
    }
    put_axis_back(out, x, axis)
}

/// The order of dimensions with `axis` moved last.
fn axis_last_order(ndim: usize, axis: usize) -> Vec<usize> {
    (0..ndim).filter(|&d| d != axis).chain([axis]).collect()
}

/// `x` with `axis` moved last, contiguous: `x` itself when it already is.
fn rows_last(x: &Tensor, axis: usize) -> Result<Tensor> {
    if axis + 1 == x.ndim() && x.is_contiguous() {
        return Ok(x.clone());
    }
    let order = axis_last_order(x.ndim(), axis);
    let mut moved = x.clone();
    moved.shape = order.iter().map(|&d| x.shape[d]).collect();
    moved.strides = order.iter().map(|&d| x.strides[d]).collect();
    let mut rows = Tensor::uninit(x.dtype, &moved.shape)?;
    let strides = contiguous_strides(&moved.shape);
    let layout = ViewLayout {
        shape: &moved.shape,
        strides: &strides,
        offset: 0,
    };
    copy_into(&mut rows, layout, &moved);
    Ok(rows)
}

/// `out` (rows along the last dimension) in `x`'s shape, contiguous.
fn put_axis_back(out: Tensor, x: &Tensor, axis: usize) -> Result<Tensor> {
    if axis + 1 == x.ndim() {
        return Ok(out);
    }
    let order = axis_last_order(x.ndim(), axis);
    let mut back = Tensor::uninit(x.dtype, &x.shape)?;
    let strides: Vec<isize> = order.iter().map(|&d| back.strides[d]).collect();
    let layout = ViewLayout {
        shape: &out.shape,
        strides: &strides,
        offset: 0,
    };
    copy_into(&mut back, layout, &out);
    Ok(back)
}

/// Logsumexp of `x` (float32, float16, bfloat16 or float64) along `axis`, as a new
/// contiguous tensor of `x`'s dtype holding one value per row, in the row-major order of
/// the other dimensions. Half types compute in float32 and round once.
pub fn logsumexp(x: &Tensor, axis: usize) -> Result<Tensor> {
    let rows = rows_last(x, axis)?;
    let n = x.shape[axis];
    let kept: Vec<usize> = rows.shape[..rows.ndim() - 1].to_vec();
    let mut out = Tensor::uninit(x.dtype, &kept)?;
    if out.size() > 0 {
        match x.dtype {
            DType::Float32 => {
                each_row(rows.slice::<f32>(), n, out.slice_mut::<f32>(), 1, |s, d| {
                    d[0] = lane_logsumexp(s)
                })
            }
            DType::Float64 => {
                each_row(rows.slice::<f64>(), n, out.slice_mut::<f64>(), 1, |s, d| {
                    d[0] = f64_logsumexp(s)
                })
            }
            DType::Float16 => {
                each_row(rows.slice::<f16>(), n, out.slice_mut::<f16>(), 1, |s, d| {
                    d[0] = f16::narrow(lane_logsumexp(s))
                })
            }
            DType::BFloat16 => each_row(
                rows.slice::<bf16>(),
                n,
                out.slice_mut::<bf16>(),
                1,
                |s, d| d[0] = bf16::narrow(lane_logsumexp(s)),
            ),
            other => unreachable!("no logsumexp kernel for {other:?}"),
        }
    }
    Ok(out)
}

/// `row(src_row, dst_row)` on rows of `n` values in and `m` out, in parallel for large
/// inputs.
fn each_row<S: Sync, D: Send>(
    src: &[S],
    n: usize,
    dst: &mut [D],
    m: usize,
    row: impl Fn(&[S], &mut [D]) + Sync,
) {
    let one_row = |(s, d): (&[S], &mut [D])| row(s, d);
    if src.len() < PARALLEL_MIN || parallel::threads() < 2 {
        src.chunks(n).zip(dst.chunks_mut(m)).for_each(one_row);
    } else {
        // Whole rows per task, enough of them to amortise scheduling.
        let rows_per_task = (1usize << 14).div_ceil(n).max(1);
        parallel::for_each_chunk_mut(dst, m * rows_per_task, |i, d| {
            let s = &src[i * n * rows_per_task..][..d.len() / m.max(1) * n];
            s.chunks(n).zip(d.chunks_mut(m)).for_each(one_row)
        });
    }
}

fn widened<T: F32Lane>(src: &[T]) -> Vec<f32> {
    vectorised(
        #[inline(always)]
        || src.iter().map(|&v| v.widen()).collect(),
    )
}

/// The maximum clamped to the finite range: rows of `-inf` then give `exp` of `-inf`
/// (0, so `log` gives `-inf`) and rows holding `+inf` give `inf - finite`, never
/// `inf - inf`.
fn finite_shift32(max: f32) -> f32 {
    max.clamp(f32::MIN, f32::MAX)
}

/// Logsumexp of a row of float32 or a half type, computed in float32 and compiled for
/// the wide registers (a sampler's row over a vocabulary of tens of thousands).
fn lane_logsumexp<T: F32Lane>(src: &[T]) -> f32 {
    vectorised(
        #[inline(always)]
        || {
            let shift = finite_shift32(row_max(src));
            let isa = Isa::active();
            let mut buf = [0.0f32; CHUNK];
            let mut total = 0.0f32;
            for s in src.chunks(CHUNK) {
                let exps = &mut buf[..s.len()];
                for (b, &v) in exps.iter_mut().zip(s) {
                    *b = v.widen() - shift;
                }
                apply_in_place_with(isa, Kernel::EXP, exps);
                total += row_sum(exps);
            }
            total.ln() + shift
        },
    )
}

fn f64_logsumexp(src: &[f64]) -> f64 {
    let max = src.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v));
    let shift = max.clamp(f64::MIN, f64::MAX);
    let total: f64 = src.iter().map(|&v| (v - shift).exp()).sum();
    total.ln() + shift
}

/// Maximum of a row, widened to float32; NaNs are skipped here and propagate through
/// `exp(x - max)`.
#[inline(always)]
fn row_max<T: F32Lane>(src: &[T]) -> f32 {
    let mut lanes = [f32::NEG_INFINITY; 16];
    let mut parts = src.chunks_exact(16);
    for part in &mut parts {
        for (m, &v) in lanes.iter_mut().zip(part) {
            let v = v.widen();
            *m = if v > *m { v } else { *m };
        }
    }
    let tail = (parts.remainder().iter()).fold(f32::NEG_INFINITY, |m, &v| m.max(v.widen()));
    lanes.iter().fold(tail, |m, &v| m.max(v))
}

/// Sum of a slice with 16 independent partial sums (vectorisable).
#[inline(always)]
fn row_sum(values: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 16];
    let mut parts = values.chunks_exact(16);
    for part in &mut parts {
        for (s, &v) in lanes.iter_mut().zip(part) {
            *s += v;
        }
    }
    parts.remainder().iter().sum::<f32>() + lanes.iter().sum::<f32>()
}

/// `dst = exp(src - max)` through the SIMD exp, returning the sum of `dst`. The shifted
/// values go to `dst` first, in pieces that stay in cache, rather than through a buffer
/// that a short row (attention over a few hundred keys) would clear in full.
fn shifted_exp(isa: Isa, src: &[f32], max: f32, dst: &mut [f32]) -> f32 {
    let mut total = 0.0f32;
    for (s, d) in src.chunks(CHUNK).zip(dst.chunks_mut(CHUNK)) {
        for (b, &v) in d.iter_mut().zip(s) {
            *b = v - max;
        }
        apply_in_place_with(isa, Kernel::EXP, d);
        total += row_sum(d);
    }
    total
}

/// The softmax of a float32 row (`dst` as long as `src`).
pub fn softmax_row(src: &[f32], dst: &mut [f32]) {
    let max = row_max(src);
    let total = shifted_exp(Isa::active(), src, max, dst);
    let scale = 1.0 / total;
    for v in dst.iter_mut() {
        *v *= scale;
    }
}

fn f64_row(src: &[f64], dst: &mut [f64]) {
    let max = src.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v));
    let mut total = 0.0;
    for (d, &v) in dst.iter_mut().zip(src) {
        *d = (v - max).exp();
        total += *d;
    }
    let scale = 1.0 / total;
    for v in dst.iter_mut() {
        *v *= scale;
    }
}

fn half_row<T: F32Lane>(src: &[T], dst: &mut [T], precise: bool) {
    let wide = widened(src);
    let mut e = vec![0.0f32; wide.len()];
    let max = row_max(&wide);
    let mut total = shifted_exp(Isa::active(), &wide, max, &mut e);
    if !precise {
        let round = |v: f32| T::narrow(v).widen();
        vectorised(
            #[inline(always)]
            || e.iter_mut().for_each(|v| *v = round(*v)),
        );
        total = round(row_sum(&e));
    }
    vectorised(
        #[inline(always)]
        || {
            for (d, &v) in dst.iter_mut().zip(&e) {
                *d = T::narrow(v / total);
            }
        },
    );
}
