//! bfloat16 products `x @ W^T` of many rows (a prefill) on the pair-product tile kernel,
//! where the CPU has it: neither operand is widened to float32. Each thread takes a run of
//! [`TILE_COLUMNS`]-column blocks of the result, packs each block of `W` once per pass over
//! a block of rows of `x`, and multiplies it with every row of that block
//! ([`ColumnBlocks`], shared with the quantized products).

use super::super::parallel;
use super::super::simd::{bf16_tiles, Bf16Tiles, TILE_COLUMNS};
use super::{Operand, Pairs, SendPtr};
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::error::Result;
use std::ops::Range;

/// Bytes of `x` rows one pass multiplies with each packed block: they stay in L2 while
/// the pass goes through the thread's blocks.
const ROWS_BYTES: usize = 256 << 10;

/// The same on matrix tiles, which read `x` by whole tiles and leave more time to fetch
/// it: fewer passes pack each block of `W` fewer times (CPUs with AMX have 2 MB of L2 a
/// core). A 128-row prefill product of depth 2816 took 0.47 ms in one pass, 1.6 in four.
const TILE_ROWS_BYTES: usize = 1 << 20;

/// How the threads of a pair-product share an `(m, n)` result of depth `k`: each takes a
/// contiguous run of [`TILE_COLUMNS`]-column blocks, and goes through its run once per
/// pass over a few rows of `x`.
pub(crate) struct ColumnBlocks {
    /// Threads taking part: slots `0..threads` of per-thread scratch.
    pub threads: usize,
    blocks: usize,
    m: usize,
    n: usize,
    rows_per_pass: usize,
}

impl ColumnBlocks {
    pub(crate) fn new(m: usize, n: usize, k: usize, tiles: &Bf16Tiles) -> ColumnBlocks {
        let blocks = n.div_ceil(TILE_COLUMNS);
        let rows_bytes = if tiles.matrix_tiles {
            TILE_ROWS_BYTES
        } else {
            ROWS_BYTES
        };
        ColumnBlocks {
            threads: parallel::threads().min(blocks).max(1),
            blocks,
            m,
            n,
            rows_per_pass: (rows_bytes / (2 * k).max(1)).max(8) / 8 * 8,
        }
    }

    /// Calls `visit(thread, rows, columns)` on the fork-join for every pass of `rows` and
    /// block of `columns` of the result, each thread (numbered `thread`) through its own
    /// run of blocks.
    pub(crate) fn for_each(&self, visit: impl Fn(usize, Range<usize>, Range<usize>) + Sync) {
        parallel::for_each(self.threads, |t| {
            let mine = t * self.blocks / self.threads..(t + 1) * self.blocks / self.threads;
            for first_row in (0..self.m).step_by(self.rows_per_pass) {
                let rows = first_row..(first_row + self.rows_per_pass).min(self.m);
                for block in mine.clone() {
                    let j0 = block * TILE_COLUMNS;
                    visit(t, rows.clone(), j0..(j0 + TILE_COLUMNS).min(self.n));
                }
            }
        });
    }
}

/// The tile kernels and how to pack `W` (the transpose of `b`) for them.
pub(super) struct PairKernel {
    tiles: Bf16Tiles,
    /// `W`'s rows are contiguous (`x @ W.T`): packed from them; else `b`'s rows are, and
    /// `W` is packed from `b`'s columns.
    from_rows: bool,
}

/// The kernel, if it applies to `a @ b`: bfloat16 operands, an even depth, rows of `a`
/// contiguous and `b` either the transpose of a matrix `W` whose rows are contiguous
/// (`x @ W.T`) or a matrix with contiguous rows, packed from its columns.
pub(super) fn applies(a: &Tensor, b: &Tensor) -> Option<PairKernel> {
    let (ra, rb) = (a.ndim(), b.ndim());
    let k = a.shape[ra - 1];
    let (rows, columns) = (b.strides[rb - 2], b.strides[rb - 1]);
    let from_rows = rows == 1 && columns > 0;
    let ok = a.dtype == DType::BFloat16
        && k.is_multiple_of(2)
        && k > 0
        && a.strides[ra - 1] == 1
        && (from_rows || (columns == 1 && rows > 0))
        && a.strides.iter().chain(&b.strides).all(|&s| s >= 0);
    let tiles = ok.then(bf16_tiles).flatten()?;
    Some(PairKernel { tiles, from_rows })
}

/// `a @ b` into a new float32 tensor of `shape` (matrices paired by `pairs`), for operands
/// [`applies`] accepts.
pub(super) fn product(
    a: Tensor,
    b: Tensor,
    shape: &[usize],
    pairs: Pairs,
    kernel: PairKernel,
) -> Result<Tensor> {
    let nd = shape.len();
    let (m, n, k) = (shape[nd - 2], shape[nd - 1], a.shape[a.ndim() - 1]);
    let batches: usize = shape[..nd - 2].iter().product();
    let depth_pairs = k / 2;
    let x_stride = a.strides[a.ndim() - 2] as usize;
    let PairKernel {
        tiles: kernel,
        from_rows,
    } = kernel;
    let w_stride = b.strides[b.ndim() - if from_rows { 1 } else { 2 }] as usize;
    let lhs = Operand::new(a)?;
    let rhs = Operand::new(b)?;
    let mut out = Tensor::uninit(DType::Float32, shape)?;
    if out.size() == 0 {
        return Ok(out);
    }
    let split = ColumnBlocks::new(m, n, k, &kernel);
    let block_len = depth_pairs * TILE_COLUMNS;
    let mut scratch = Tensor::uninit(DType::UInt32, &[split.threads * block_len])?;
    let scratch = SendPtr(scratch.slice_mut::<u32>().as_mut_ptr());
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
        let x = &x_all[lhs.batch_offset(batch_a) as usize..];
        let w = &w_all[rhs.batch_offset(batch_b) as usize..];
        split.for_each(|t, rows, columns| {
            let (scratch, dst) = (&scratch, &dst);
            // SAFETY: each thread has its own block of the scratch buffer.
            let packed =
                unsafe { std::slice::from_raw_parts_mut(scratch.0.add(t * block_len), block_len) };
            let j0 = columns.start;
            if from_rows {
                (kernel.pack)(
                    &w[j0 * w_stride..],
                    w_stride,
                    columns.len(),
                    depth_pairs,
                    packed,
                );
            } else {
                (kernel.pack_columns)(&w[j0..], w_stride, columns.len(), depth_pairs, packed);
            }
            // SAFETY: the block's rows and columns lie inside this batch's result, and no
            // other thread writes these columns.
            unsafe {
                (kernel.multiply)(
                    &x[rows.start * x_stride..],
                    x_stride,
                    rows.len(),
                    packed,
                    depth_pairs,
                    columns.len(),
                    dst.0.add(batch * m * n + rows.start * n + j0),
                    n,
                )
            };
        });
    }
    Ok(out)
}
