//! bfloat16 products `x @ W^T` of many rows (a prefill) on the pair-product tile kernel,
//! where the CPU has it: neither operand is widened to float32. Each thread takes a run of
//! [`TILE_COLUMNS`]-column blocks of the result, packs each block of `W` once per pass over
//! a block of rows of `x`, and multiplies it with every row of that block.

use super::super::parallel;
use super::super::simd::{bf16_tiles, Bf16Tiles, TILE_COLUMNS};
use super::{Operand, Pairs, SendPtr};
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::error::Result;
use half::bf16;

/// Bytes of `x` rows one pass multiplies with each packed block: they stay in L2 while
/// the pass goes through the thread's blocks.
const ROWS_BYTES: usize = 256 << 10;

/// The kernel, if it applies to `a @ b`: bfloat16 operands, an even depth, rows of `a`
/// contiguous and `b` the transpose of a matrix `W` whose rows are contiguous.
pub(super) fn applies(a: &Tensor, b: &Tensor) -> Option<Bf16Tiles> {
    let nd = a.ndim();
    let k = a.shape[nd - 1];
    let ok = a.dtype == DType::BFloat16
        && k.is_multiple_of(2)
        && k > 0
        && a.strides[nd - 1] == 1
        && b.strides[nd - 2] == 1
        && b.strides[nd - 1] > 0
        && a.strides.iter().chain(&b.strides).all(|&s| s >= 0);
    ok.then(bf16_tiles).flatten()
}

/// `a @ b` into a new float32 tensor of `shape` (matrices paired by `pairs`), for operands
/// [`applies`] accepts.
pub(super) fn product(
    a: Tensor,
    b: Tensor,
    shape: &[usize],
    pairs: Pairs,
    kernel: Bf16Tiles,
) -> Result<Tensor> {
    let nd = shape.len();
    let (m, n, k) = (shape[nd - 2], shape[nd - 1], a.shape[a.ndim() - 1]);
    let batches: usize = shape[..nd - 2].iter().product();
    let depth_pairs = k / 2;
    let x_stride = a.strides[a.ndim() - 2] as usize;
    let w_stride = b.strides[b.ndim() - 1] as usize;
    let lhs = Operand::new::<bf16>(a)?;
    let rhs = Operand::new::<bf16>(b)?;
    let mut out = Tensor::uninit(DType::Float32, shape)?;
    if out.size() == 0 {
        return Ok(out);
    }
    let blocks = n.div_ceil(TILE_COLUMNS);
    let threads = parallel::threads().min(blocks);
    let block_len = depth_pairs * TILE_COLUMNS;
    let mut scratch = Tensor::uninit(DType::UInt32, &[threads * block_len])?;
    let scratch = SendPtr(scratch.slice_mut::<u32>().as_mut_ptr());
    let rows_per_pass = (ROWS_BYTES / (2 * k)).max(8) / 8 * 8;
    let dst = SendPtr(out.slice_mut::<f32>().as_mut_ptr());
    // SAFETY: the buffers hold bfloat16 elements (aligned, whole) and outlive the loop.
    let (x_all, w_all): (&[u16], &[u16]) = unsafe {
        (
            std::slice::from_raw_parts(lhs.tensor.buf.as_ptr().cast(), lhs.tensor.buf.len() / 2),
            std::slice::from_raw_parts(rhs.tensor.buf.as_ptr().cast(), rhs.tensor.buf.len() / 2),
        )
    };
    for batch in 0..batches {
        let (batch_a, batch_b) = pairs.get(batch);
        let (x_at, w_at) = (
            lhs.batch_offset(batch_a) as usize,
            rhs.batch_offset(batch_b) as usize,
        );
        parallel::for_each(threads, |t| {
            let (scratch, dst) = (&scratch, &dst);
            // SAFETY: each thread has its own block of the scratch buffer.
            let packed =
                unsafe { std::slice::from_raw_parts_mut(scratch.0.add(t * block_len), block_len) };
            let (x, w) = (&x_all[x_at..], &w_all[w_at..]);
            let mine = t * blocks / threads..(t + 1) * blocks / threads;
            for first_row in (0..m).step_by(rows_per_pass) {
                let rows = rows_per_pass.min(m - first_row);
                for block in mine.clone() {
                    let j0 = block * TILE_COLUMNS;
                    let columns = TILE_COLUMNS.min(n - j0);
                    (kernel.pack)(&w[j0 * w_stride..], w_stride, columns, depth_pairs, packed);
                    let at = batch * m * n + first_row * n + j0;
                    // SAFETY: rows first_row.. of the batch's result, columns j0.., all
                    // inside `out`; no other thread writes these columns.
                    let c = unsafe {
                        std::slice::from_raw_parts_mut(dst.0.add(at), (rows - 1) * n + columns)
                    };
                    (kernel.multiply)(
                        &x[first_row * x_stride..],
                        x_stride,
                        rows,
                        packed,
                        depth_pairs,
                        columns,
                        c,
                        n,
                    );
                }
            }
        });
    }
    Ok(out)
}
