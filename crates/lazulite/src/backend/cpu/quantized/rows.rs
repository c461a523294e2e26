//! `x @ W^T` for a few rows of `x` and `W` packed at 2, 4 or 8 bits: the decode step of a
//! quantized language model, which must stream the packed weights once at memory speed.
//!
//! The rows of `x` are laid out once per call for the packed dot products of the SIMD
//! path, which unpack each chunk of words once for up to [`simd::MAX_VECTORS`] rows of
//! `x`. On the float32 path ([`simd::PackedDots`]) scales and biases are read in their own
//! dtype (float32, float16 or bfloat16) and widened for a parallel task's rows of `W` at
//! once, which one call of the kernel then serves; the byte product of a bfloat16 `x`
//! ([`simd::ByteDots`]) reads bfloat16 scales and biases as stored.

use super::super::parallel;
use super::super::simd::{
    self, vectorised, AffineRows, BFloat16Vector, ByteDots, LaidOut, PackedDots, PackedRows,
};
use super::{batch_offset, contiguous, Packing, Product, Quantized, Real, SendPtr, TASK_ELEMENTS};
use crate::backend::memory::Scratch;
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::element::F32Lane;
use crate::error::Result;
use half::bf16;
use std::sync::Arc;

/// The packed dot products a product runs on.
#[derive(Copy, Clone)]
pub(super) enum Kernel {
    /// float32 vectors: any float `x`.
    Float32(PackedDots),
    /// bfloat16 vectors in fixed point through the byte product: a bfloat16 `x`, whose
    /// scales and biases are bfloat16 too.
    BFloat16(ByteDots),
}

/// The packed dot products that compute this product, if they do: `W` stored transposed,
/// at most `max_rows` rows of `x`, a nonzero depth, 2, 4 or 8 bits, rows of whole chunks
/// of words and groups that are whole chunks or divide one (none on the scalar path).
/// A bfloat16 `x` takes the byte product where the CPU has it and its rows fit.
pub(super) fn kernel(packing: Packing, p: Product, max_rows: usize, x: DType) -> Option<Kernel> {
    if !(p.transpose && p.k > 0 && p.m <= max_rows && matches!(packing.bits, 2 | 4 | 8)) {
        return None;
    }
    if x == DType::BFloat16 && simd::bf16_rows_fit(packing.bits, p.k, packing.group_size) {
        if let Some(kernel) = simd::byte_dots() {
            return Some(Kernel::BFloat16(kernel));
        }
    }
    let kernel = simd::packed_dots()?;
    let words_per_row = p.k * packing.bits / 32;
    let words_per_group = packing.group_size * packing.bits / 32;
    let fits = words_per_row.is_multiple_of(kernel.lanes)
        && words_per_group > 0
        && (words_per_group.is_multiple_of(kernel.lanes)
            || kernel.lanes.is_multiple_of(words_per_group));
    fits.then_some(Kernel::Float32(kernel))
}

/// The tensors of an affine product: `x` of shape `(batch, m, k)` (contiguous: float32 for
/// [`Kernel::Float32`], bfloat16 for [`Kernel::BFloat16`]), `w` with contiguous last two
/// dimensions, `scales` and `biases` of the element type of the product.
pub(super) struct Operands {
    pub x: Tensor,
    pub w: Tensor,
    pub scales: Tensor,
    pub biases: Tensor,
}

/// The product with scales and biases of element type `T`; the result is float32 on the
/// float32 path and bfloat16 (the dtype of `x`) on the byte product.
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
    let (scales, biases) = (contiguous(scales)?, contiguous(biases)?);
    let out_dtype = match kernel {
        Kernel::Float32(_) => DType::Float32,
        Kernel::BFloat16(_) => DType::BFloat16,
    };
    let mut out = Tensor::uninit(out_dtype, out_shape)?;
    let words_per_row = p.k * packing.bits / 32;
    let groups_per_row = p.k / packing.group_size;
    let words = w.buf.as_ptr() as *const u32;
    for b in 0..p.batch {
        // SAFETY: the offset addresses the first word of matrix `b` inside w's buffer, and
        // its last two dimensions are contiguous: n * words_per_row words follow.
        let wb = unsafe {
            std::slice::from_raw_parts(words.offset(batch_offset(&w, b)), p.n * words_per_row)
        };
        let g = b * p.n * groups_per_row..(b + 1) * p.n * groups_per_row;
        let x_rows = b * p.m * p.k..(b + 1) * p.m * p.k;
        let out_rows = b * p.m * p.n..(b + 1) * p.m * p.n;
        match kernel {
            Kernel::Float32(kernel) => {
                let matrix = Quantized {
                    words: wb,
                    scales: &scales.slice::<T>()[g.clone()],
                    biases: &biases.slice::<T>()[g],
                    words_per_row,
                    groups_per_row,
                    packing,
                };
                let out = &mut out.slice_mut::<f32>()[out_rows];
                float32_rows(kernel, &x.slice::<f32>()[x_rows], &matrix, p, out)?;
            }
            Kernel::BFloat16(kernel) => {
                // bfloat16 scales and biases, read as their bits.
                let matrix = AffineRows {
                    words: wb,
                    words_per_row,
                    scales: &scales.slice::<u16>()[g.clone()],
                    biases: &biases.slice::<u16>()[g],
                    bits: packing.bits,
                    group_size: packing.group_size,
                };
                let out = &mut out.slice_mut::<bf16>()[out_rows];
                bfloat16_rows(kernel, &x.slice::<u16>()[x_rows], &matrix, p, out);
            }
        }
    }
    Ok(out)
}

/// Rows of `W` handed to one parallel task of a product of depth `k`.
fn rows_per_task(k: usize) -> usize {
    (TASK_ELEMENTS * 4 / k).max(1)
}

/// The float32 path of [`product`]. Fails only when its scratch room cannot be allocated.
fn float32_rows<T: Real<Acc = f32>>(
    kernel: PackedDots,
    x: &[f32],
    w: &Quantized<'_, T>,
    p: Product,
    out: &mut [f32],
) -> Result<()> {
    let (bits, group_size) = (w.packing.bits, w.packing.group_size);
    let xs: Vec<LaidOut> = x
        .chunks_exact(p.k)
        .map(|row| kernel.lay_out(row, bits, group_size))
        .collect();
    // The vectors a pass over the rows serves, a few at a time; set up once for all tasks.
    let blocks: Vec<Vec<&LaidOut>> = xs
        .chunks(simd::MAX_VECTORS)
        .map(|block| block.iter().collect())
        .collect();
    let words_per_group = group_size * bits / 32;
    let groups = w.groups_per_row;
    let dst = SendPtr(out.as_mut_ptr());
    let rows_per_task = rows_per_task(p.k);
    let tasks = p.n.div_ceil(rows_per_task);
    // Each task's room for its scales and biases widened to float32 (the scales padded
    // as the kernels read them) and its dot products, all in one block from the buffer
    // cache: per-task allocations, zeroed, cost a 4-bit product about 5% of its time.
    let scales_len = rows_per_task * groups + simd::SCALE_PADDING;
    let room_len = scales_len + rows_per_task * (groups + simd::MAX_VECTORS);
    let mut room = Scratch::<f32>::new(tasks * room_len)?;
    let room = SendPtr(room.as_mut_ptr());
    parallel::for_each(tasks, |task| {
        let rows = task * rows_per_task..((task + 1) * rows_per_task).min(p.n);
        let count = rows.len();
        // Scales and biases come in short runs per task, which the hardware fetches late:
        // this task's are asked for at once, and the next task's while this one computes.
        let ahead = rows.start * groups..(rows.end + rows_per_task).min(p.n) * groups;
        simd::prefetch(&w.scales[ahead.clone()]);
        simd::prefetch(&w.biases[ahead]);
        // SAFETY: the task's own `room_len` values of the scratch block; every value is
        // written below before it is read, the scales' padding included.
        let room =
            unsafe { std::slice::from_raw_parts_mut(room.get().add(task * room_len), room_len) };
        let (scales, rest) = room.split_at_mut(scales_len);
        let (biases, dots) = rest.split_at_mut(rows_per_task * groups);
        let (scales, biases) = (
            &mut scales[..count * groups + simd::SCALE_PADDING],
            &mut biases[..count * groups],
        );
        scales[count * groups..].fill(0.0);
        vectorised(
            #[inline(always)]
            || {
                let at = rows.start * groups..rows.end * groups;
                T::widen_slice(&w.scales[at.clone()], scales);
                T::widen_slice(&w.biases[at], biases);
                let packed = PackedRows {
                    words: &w.words[rows.start * w.words_per_row..rows.end * w.words_per_row],
                    words_per_row: w.words_per_row,
                    scales,
                    biases,
                    words_per_group,
                };
                // Asked on the thread that runs the task, whose floating-point flags
                // decide it.
                let unpacking = kernel.unpacking();
                // The task's rows of W stay in cache while the rows of x pass over
                // them, a few at a time.
                for (block, first) in blocks.iter().zip((0..).step_by(simd::MAX_VECTORS)) {
                    let dots = &mut dots[..count * block.len()];
                    (kernel.dots)(bits, &packed, block, unpacking, dots);
                    for (n, dots) in rows.clone().zip(dots.chunks_exact(block.len())) {
                        for (i, &d) in dots.iter().enumerate() {
                            // SAFETY: (first + i, n) is inside the m x n result and
                            // this task alone writes column n.
                            unsafe { *dst.get().add((first + i) * p.n + n) = d };
                        }
                    }
                }
            },
        )
    });
    Ok(())
}

/// The bfloat16 path of [`product`], for rows of `x` given as bfloat16 bits: the kernel
/// adds the biases itself. Results are rounded to bfloat16 as each task's rows finish,
/// which spares a decode step's products a float32 result and a conversion pass each.
fn bfloat16_rows(kernel: ByteDots, x: &[u16], w: &AffineRows<'_>, p: Product, out: &mut [bf16]) {
    let xs: Vec<BFloat16Vector> = x
        .chunks_exact(p.k)
        .map(|row| {
            BFloat16Vector::new(row, w.bits, w.group_size)
                .expect("the kernel was chosen for rows of this shape")
        })
        .collect();
    // The vectors a pass over the rows serves, a few at a time; set up once for all tasks.
    let blocks: Vec<Vec<&BFloat16Vector>> = xs
        .chunks(simd::MAX_VECTORS)
        .map(|block| block.iter().collect())
        .collect();
    let dst = SendPtr(out.as_mut_ptr());
    let rows_per_task = rows_per_task(p.k);
    parallel::for_each(p.n.div_ceil(rows_per_task), |task| {
        let rows = task * rows_per_task..((task + 1) * rows_per_task).min(p.n);
        let task_rows = w.part(rows.clone());
        if xs.len() == 1 {
            // SAFETY: rows `rows` of the one-row result, which this task alone writes.
            unsafe { one_row_task(kernel, &task_rows, blocks[0][0], dst.get().add(rows.start)) };
            return;
        }
        let mut dots = vec![0.0f32; rows.len() * simd::MAX_VECTORS];
        for (block, first) in blocks.iter().zip((0..).step_by(simd::MAX_VECTORS)) {
            let dots = &mut dots[..rows.len() * block.len()];
            (kernel.dots)(&task_rows, block, dots);
            for (n, dots) in rows.clone().zip(dots.chunks_exact(block.len())) {
                for (i, &d) in dots.iter().enumerate() {
                    let d = <bf16 as F32Lane>::narrow(d);
                    // SAFETY: (first + i, n) is inside the m x n result and this task
                    // alone writes column n.
                    unsafe { *dst.get().add((first + i) * p.n + n) = d };
                }
            }
        }
    });
}

/// Rows of a task whose float32 sums are held at once before they are rounded.
const ROUNDED_AT_ONCE: usize = 256;

/// One vector (a decode step) times a task's rows, rounded to bfloat16 in place at `out`.
/// The scales and biases are not prefetched here: the hardware follows their streams, and
/// a burst of prefetches at each task's start stalled it (the 85 products of a 4-bit
/// decode step, each alone: 2.55-2.99 ms against 2.80-3.26 with both).
///
/// # Safety
/// `out` addresses as many writable values as `rows` has rows, which no one else touches.
unsafe fn one_row_task(
    kernel: ByteDots,
    rows: &AffineRows<'_>,
    x: &BFloat16Vector,
    out: *mut bf16,
) {
    let count = rows.words.len() / rows.words_per_row;
    // SAFETY: as the caller promises.
    let out = unsafe { std::slice::from_raw_parts_mut(out, count) };
    let mut sums = [0.0f32; ROUNDED_AT_ONCE];
    for (first, out) in (0..count)
        .step_by(ROUNDED_AT_ONCE)
        .zip(out.chunks_mut(ROUNDED_AT_ONCE))
    {
        let sums = &mut sums[..out.len()];
        (kernel.dots)(&rows.part(first..first + out.len()), &[x], sums);
        vectorised(
            #[inline(always)]
            || {
                out.iter_mut()
                    .zip(&*sums)
                    .for_each(|(o, &s)| *o = <bf16 as F32Lane>::narrow(s))
            },
        );
    }
}

/// One row of a bfloat16 `x` times `W` (stored transposed, its matrix contiguous), with
/// bfloat16 scales and biases, for [`row_products`].
pub(super) struct RowProduct {
    pub x: Tensor,
    pub w: Tensor,
    pub scales: Tensor,
    pub biases: Tensor,
    pub packing: Packing,
    pub product: Product,
    pub out_shape: Vec<usize>,
}

/// Several one-row products in one parallel job, each task some rows of one of them; a
/// vector shared by several (the same `x`) is laid out once. bfloat16 results, in order.
pub(super) fn row_products(kernel: ByteDots, parts: Vec<RowProduct>) -> Result<Vec<Tensor>> {
    let parts = parts
        .into_iter()
        .map(|p| {
            Ok(RowProduct {
                x: contiguous(p.x)?,
                scales: contiguous(p.scales)?,
                biases: contiguous(p.biases)?,
                ..p
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let mut vectors: Vec<BFloat16Vector> = Vec::new();
    let mut vector_of = Vec::with_capacity(parts.len());
    for (i, p) in parts.iter().enumerate() {
        let same_as = (0..i).find(|&j| {
            let (a, b) = (&parts[j], p);
            Arc::ptr_eq(&a.x.buf, &b.x.buf)
                && a.x.offset == b.x.offset
                && a.product.k == b.product.k
                && a.packing == b.packing
        });
        match same_as {
            Some(j) => vector_of.push(vector_of[j]),
            None => {
                let vector =
                    BFloat16Vector::new(p.x.slice::<u16>(), p.packing.bits, p.packing.group_size)
                        .expect("the kernel was chosen for rows of this shape");
                vector_of.push(vectors.len());
                vectors.push(vector);
            }
        }
    }
    let mut outs = parts
        .iter()
        .map(|p| Tensor::uninit(DType::BFloat16, &p.out_shape))
        .collect::<Result<Vec<_>>>()?;
    let dsts: Vec<SendPtr<bf16>> = outs
        .iter_mut()
        .map(|o| SendPtr(o.slice_mut::<bf16>().as_mut_ptr()))
        .collect();
    let matrices: Vec<AffineRows<'_>> = parts
        .iter()
        .map(|p| {
            let words_per_row = p.product.k * p.packing.bits / 32;
            // SAFETY: w's matrix is contiguous: n rows of `words_per_row` words from its
            // offset.
            let words = unsafe {
                std::slice::from_raw_parts(
                    (p.w.buf.as_ptr() as *const u32).offset(batch_offset(&p.w, 0)),
                    p.product.n * words_per_row,
                )
            };
            AffineRows {
                words,
                words_per_row,
                scales: p.scales.slice::<u16>(),
                biases: p.biases.slice::<u16>(),
                bits: p.packing.bits,
                group_size: p.packing.group_size,
            }
        })
        .collect();
    // Task `t` belongs to the part whose range of task numbers holds it.
    let mut first_task = Vec::with_capacity(parts.len() + 1);
    first_task.push(0);
    for p in &parts {
        let tasks = p.product.n.div_ceil(rows_per_task(p.product.k));
        first_task.push(first_task.last().copied().unwrap_or(0) + tasks);
    }
    let total = first_task.last().copied().unwrap_or(0);
    parallel::for_each(total, |task| {
        let part = first_task.partition_point(|&f| f <= task) - 1;
        let (w, p) = (&matrices[part], &parts[part]);
        let rows_per_task = rows_per_task(p.product.k);
        let local = task - first_task[part];
        let rows = local * rows_per_task..((local + 1) * rows_per_task).min(p.product.n);
        let task_rows = w.part(rows.clone());
        // SAFETY: rows `rows` of part `part`'s result, which this task alone writes.
        unsafe {
            one_row_task(
                kernel,
                &task_rows,
                &vectors[vector_of[part]],
                dsts[part].get().add(rows.start),
            )
        };
    });
    Ok(outs)
}
