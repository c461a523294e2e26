//! `x @ W^T` for a few rows of `x` and `W` packed at 2, 4 or 8 bits: the decode step of a
//! quantized language model, which must stream the packed weights once at memory speed.
//!
//! The rows of `x` are laid out once per call for the packed dot products of the SIMD
//! path ([`simd::PackedDots`]), which unpack each chunk of words once for up to
//! [`simd::MAX_VECTORS`] rows of `x`. Scales and biases are read in their own dtype
//! (float32, float16 or bfloat16) and widened for a parallel task's rows of `W` at once,
//! which one call of the kernel then serves.

use super::super::parallel;
use super::super::simd::{self, vectorised, PackedBf16Dots, PackedDots, PackedRows};
use super::{
    batch_offset, contiguous, dot, Packing, Product, Quantized, Real, SendPtr, TASK_ELEMENTS,
};
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::error::Result;

/// The packed dot products a product runs on.
#[derive(Copy, Clone)]
pub(super) enum Kernel {
    /// float32 vectors: any float `x`.
    Float32(PackedDots),
    /// bfloat16 vectors through the pair product: a bfloat16 `x` at 2 or 4 bits.
    BFloat16(PackedBf16Dots),
}

/// The packed dot products that compute this product, if they do: `W` stored transposed,
/// at most `max_rows` rows of `x`, a nonzero depth, 2, 4 or 8 bits, rows of whole chunks
/// of words and groups that are whole chunks or divide one (none on the scalar path).
/// A bfloat16 `x` at 2 or 4 bits takes the pair product where the CPU has it.
pub(super) fn kernel(packing: Packing, p: Product, max_rows: usize, x: DType) -> Option<Kernel> {
    let fits = |lanes: usize| {
        let words_per_row = p.k * packing.bits / 32;
        let words_per_group = packing.group_size * packing.bits / 32;
        p.transpose
            && p.k > 0
            && p.m <= max_rows
            && matches!(packing.bits, 2 | 4 | 8)
            && words_per_row.is_multiple_of(lanes)
            && words_per_group > 0
            && (words_per_group.is_multiple_of(lanes) || lanes.is_multiple_of(words_per_group))
    };
    if x == DType::BFloat16 && matches!(packing.bits, 2 | 4) && fits(simd::BF16_CHUNK_WORDS) {
        if let Some(kernel) = simd::packed_bf16_dots() {
            return Some(Kernel::BFloat16(kernel));
        }
    }
    let kernel = simd::packed_dots()?;
    fits(kernel.lanes).then_some(Kernel::Float32(kernel))
}

/// The tensors of a product: `x` contiguous float32 `(batch, m, k)`, `w` with contiguous
/// last two dimensions, `scales` and `biases` of the element type of the product.
pub(super) struct Operands {
    pub x: Tensor,
    pub w: Tensor,
    pub scales: Tensor,
    pub biases: Tensor,
}

/// The product with scales and biases of element type `T`; the result is float32.
pub(super) fn product<T: Real<Acc = f32>>(
    kernel: Kernel,
    operands: Operands,
    packing: Packing,
    p: Product,
    out_shape: &[usize],
) -> Result<Tensor> {
    let Operands {
        x,
        w,
        scales,
        biases,
    } = operands;
    let (scales, biases) = (contiguous::<T>(scales)?, contiguous::<T>(biases)?);
    let mut out = Tensor::uninit(DType::Float32, out_shape)?;
    let words_per_row = p.k * packing.bits / 32;
    let groups_per_row = p.k / packing.group_size;
    let words = w.buf.as_ptr() as *const u32;
    let (xs, ss, bs) = (x.slice::<f32>(), scales.slice::<T>(), biases.slice::<T>());
    let dst = out.slice_mut::<f32>();
    for b in 0..p.batch {
        // SAFETY: the offset addresses the first word of matrix `b` inside w's buffer, and
        // its last two dimensions are contiguous: n * words_per_row words follow.
        let wb = unsafe {
            std::slice::from_raw_parts(words.offset(batch_offset(&w, b)), p.n * words_per_row)
        };
        let g = p.n * groups_per_row;
        let matrix = Quantized {
            words: wb,
            scales: &ss[b * g..][..g],
            biases: &bs[b * g..][..g],
            words_per_row,
            groups_per_row,
            packing,
        };
        let x = &xs[b * p.m * p.k..][..p.m * p.k];
        let out = &mut dst[b * p.m * p.n..][..p.m * p.n];
        rows(kernel, x, &matrix, p, out);
    }
    Ok(out)
}

/// A row of `x` laid out for the kernel, with its group sums.
struct LaidOutRow {
    values: LaidOut,
    group_sums: Vec<f32>,
}

/// Values in the layout of a [`Kernel`].
enum LaidOut {
    Float32(Vec<f32>),
    BFloat16(Vec<u16>),
}

impl LaidOutRow {
    fn new(row: &[f32], kernel: Kernel, bits: usize, group_size: usize) -> LaidOutRow {
        let values = match kernel {
            Kernel::Float32(k) => {
                let mut values = vec![0.0; row.len()];
                simd::lay_out(row, bits, k.lanes, &mut values);
                LaidOut::Float32(values)
            }
            Kernel::BFloat16(_) => {
                // The row was widened from bfloat16: dropping the low half is exact.
                let halves: Vec<u16> = row.iter().map(|v| (v.to_bits() >> 16) as u16).collect();
                let mut values = vec![0; row.len()];
                simd::lay_out_bf16(&halves, bits, &mut values);
                LaidOut::BFloat16(values)
            }
        };
        let group_sums = row
            .chunks_exact(group_size)
            .map(|g| g.iter().sum())
            .collect();
        LaidOutRow { values, group_sums }
    }
}

/// `out = scaled dots of the packed rows with up to [`simd::MAX_VECTORS`] laid-out rows of
/// `x` (see [`PackedDots::dots`]).
fn packed_dots(
    kernel: Kernel,
    bits: usize,
    rows: &PackedRows<'_>,
    xs: &[LaidOutRow],
    out: &mut [f32],
) {
    match kernel {
        Kernel::Float32(k) => {
            let values: [&[f32]; simd::MAX_VECTORS] = std::array::from_fn(|i| match xs.get(i) {
                Some(LaidOutRow {
                    values: LaidOut::Float32(v),
                    ..
                }) => &v[..],
                _ => &[][..],
            });
            (k.dots)(bits, rows, &values[..xs.len()], out)
        }
        Kernel::BFloat16(k) => {
            let values: [&[u16]; simd::MAX_VECTORS] = std::array::from_fn(|i| match xs.get(i) {
                Some(LaidOutRow {
                    values: LaidOut::BFloat16(v),
                    ..
                }) => &v[..],
                _ => &[][..],
            });
            (k.dots)(bits, rows, &values[..xs.len()], out)
        }
    }
}

fn rows<T: Real<Acc = f32>>(
    kernel: Kernel,
    x: &[f32],
    w: &Quantized<'_, T>,
    p: Product,
    out: &mut [f32],
) {
    let (bits, group_size) = (w.packing.bits, w.packing.group_size);
    let xs: Vec<LaidOutRow> = x
        .chunks_exact(p.k)
        .map(|row| LaidOutRow::new(row, kernel, bits, group_size))
        .collect();
    let words_per_group = group_size * bits / 32;
    let groups = w.groups_per_row;
    let dst = SendPtr(out.as_mut_ptr());
    let rows_per_task = (TASK_ELEMENTS * 4 / p.k).max(1);
    parallel::for_each(p.n.div_ceil(rows_per_task), |task| {
        let rows = task * rows_per_task..((task + 1) * rows_per_task).min(p.n);
        let count = rows.len();
        // Scales and biases come in short runs per task, which the hardware fetches late:
        // this task's are asked for at once, and the next task's while this one computes.
        let ahead = rows.start * groups..(rows.end + rows_per_task).min(p.n) * groups;
        simd::prefetch(&w.scales[ahead.clone()]);
        simd::prefetch(&w.biases[ahead]);
        // The task's scales and biases as float32, widened once; the scales padded as
        // the kernels read them.
        let mut scales = vec![0.0f32; count * groups + simd::SCALE_PADDING];
        let mut biases = vec![0.0f32; count * groups];
        let mut dots = vec![0.0f32; count * simd::MAX_VECTORS];
        vectorised(
            #[inline(always)]
            || {
                let at = rows.start * groups..rows.end * groups;
                T::widen_slice(&w.scales[at.clone()], &mut scales);
                T::widen_slice(&w.biases[at], &mut biases);
                let packed = PackedRows {
                    words: &w.words[rows.start * w.words_per_row..rows.end * w.words_per_row],
                    words_per_row: w.words_per_row,
                    scales: &scales,
                    words_per_group,
                };
                // The task's rows of W stay in cache while the rows of x pass over
                // them, a few at a time.
                for (block, first) in xs
                    .chunks(simd::MAX_VECTORS)
                    .zip((0..).step_by(simd::MAX_VECTORS))
                {
                    let dots = &mut dots[..count * block.len()];
                    packed_dots(kernel, bits, &packed, block, dots);
                    for ((n, dots), biases) in rows
                        .clone()
                        .zip(dots.chunks_exact(block.len()))
                        .zip(biases.chunks_exact(groups))
                    {
                        for (i, (x, d)) in block.iter().zip(dots).enumerate() {
                            let bias = dot(biases, &x.group_sums);
                            // SAFETY: (first + i, n) is inside the m x n result and
                            // this task alone writes column n.
                            unsafe { *dst.get().add((first + i) * p.n + n) = d + bias };
                        }
                    }
                }
            },
        )
    });
}
