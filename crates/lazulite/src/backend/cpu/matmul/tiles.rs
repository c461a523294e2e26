//! Products `x @ W` and `x @ W^T` whose right operand is stored in another form than the
//! arithmetic's (bfloat16 or float16 weights multiplied in float32, quantized weights):
//! `W` is decoded a panel of result columns at a time, and gemm multiplies each panel, one
//! block of its columns per thread. A panel is a few megabytes, so the decoded copy never
//! costs a whole widened `W` in memory, and it is large enough for gemm's own blocking
//! (decoding small tiles for one gemm call each ran at half of gemm's speed).

use super::super::elementwise::converted;
use super::super::parallel;
use super::super::simd::vectorised;
use super::super::transpose::transpose_into;
use super::rows::Widen;
use super::{Operand, Pairs, SendPtr};
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::element::Element;
use crate::error::Result;
use std::ops::Range;

/// Decoded elements per panel (8 MB of float32).
const PANEL_ELEMENTS: usize = 1 << 21;
/// Panel widths are multiples of this, which is a multiple of every quantization group
/// size, so a panel of a `(k, n)` matrix holds whole groups.
const PANEL_STEP: usize = 128;
/// Rows of a panel one parallel decoding task writes.
const DECODE_ROWS: usize = 16;
/// Fewest panel columns worth a thread of their own in the product.
const PANEL_SPLIT: usize = 32;

/// The shape of one product: `x` is `(m, k)` and the result `(m, n)`. With `transpose`
/// the decoded matrix is `W` as `(n, k)` and the result `x @ W^T`; otherwise it is `(k, n)`
/// and the result `x @ W`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Geometry {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub transpose: bool,
}

/// Writes the product of `x` (row-major `(m, k)`) and the matrix `decode` describes into
/// `out` (row-major `(m, n)`). `decode(rows, cols, tile)` writes the elements of the stored
/// matrix in `rows` and `cols` (ranges of its own rows and columns, whole groups of a
/// quantized one) row-major into `tile`, in the arithmetic's type `A` (float32 or float64).
/// Fails only when a panel cannot be allocated.
pub(crate) fn product<A, D>(x: &[A], g: Geometry, out: &mut [A], decode: D) -> Result<()>
where
    A: Element<Storage = A> + Default + From<f32>,
    D: Fn(Range<usize>, Range<usize>, &mut [A]) + Sync,
{
    debug_assert!(x.len() == g.m * g.k && out.len() == g.m * g.n);
    if g.k == 0 {
        out.fill(A::default());
        return Ok(());
    }
    let one = A::from(1.0);
    let width = (PANEL_ELEMENTS / g.k / PANEL_STEP).max(1) * PANEL_STEP;
    let width = width.min(g.n);
    let mut panel = Tensor::uninit(A::DTYPE, &[width * g.k])?;
    // A transposed panel is multiplied into a column-major block of the result, the layout
    // gemm is twice as fast at when its right operand runs along the depth.
    let mut block = Tensor::uninit(A::DTYPE, &[if g.transpose { g.m * width } else { 0 }])?;
    let panel = panel.slice_mut::<A>();
    let block = block.slice_mut::<A>();
    // With the transposed panel, x goes to gemm column-major, which gemm reads without
    // packing it again for every panel (as the float32 product does).
    let mut column_major = Tensor::uninit(A::DTYPE, &[if g.transpose { g.m * g.k } else { 0 }])?;
    let column_major = column_major.slice_mut::<A>();
    let (lhs, lhs_cs, lhs_rs) = if g.transpose {
        transpose_into(x, g.m, g.k, column_major, g.m);
        (column_major.as_ptr(), g.m as isize, 1)
    } else {
        (x.as_ptr(), 1, g.k as isize)
    };
    let lhs = SendPtr(lhs as *mut A);
    let mut n0 = 0;
    while n0 < g.n {
        let nb = width.min(g.n - n0);
        let panel = &mut panel[..nb * g.k];
        // The panel holds W's columns n0..n0 + nb as (nb, k) with `transpose`, else (k, nb).
        let (row_len, cols) = if g.transpose {
            (g.k, 0..g.k)
        } else {
            (nb, n0..n0 + nb)
        };
        parallel::for_each_chunk_mut(panel, DECODE_ROWS * row_len, |c, rows| {
            let first = if g.transpose { n0 } else { 0 } + c * DECODE_ROWS;
            let range = first..first + rows.len() / row_len;
            vectorised(
                #[inline(always)]
                || decode(range, cols.clone(), rows),
            );
        });
        let (rhs_cs, rhs_rs) = if g.transpose {
            (g.k as isize, 1)
        } else {
            (1, nb as isize)
        };
        let (target, target_cs, target_rs) = if g.transpose {
            (SendPtr(block.as_mut_ptr()), g.m as isize, 1)
        } else {
            (SendPtr(out[n0..].as_mut_ptr()), 1, g.n as isize)
        };
        let rhs = SendPtr(panel.as_mut_ptr());
        // One block of the panel's columns per thread, each a single-threaded gemm call on
        // the kernels' fork-join (gemm's own rayon threads would compete with its helpers).
        let threads = parallel::threads().min(nb.div_ceil(PANEL_SPLIT)).max(1);
        parallel::for_each(threads, |t| {
            let (target, rhs, lhs) = (&target, &rhs, &lhs);
            let columns = t * nb / threads..(t + 1) * nb / threads;
            let first = columns.start as isize;
            // SAFETY: x is (m, k) (row-major, or its column-major copy) and the panel (nb, k) or
            // (k, nb), all contiguous; the
            // target is the (m, nb) column-major block or the result's columns
            // n0..n0 + nb, of which this task writes its own `columns`.
            unsafe {
                gemm::gemm(
                    g.m,
                    columns.len(),
                    g.k,
                    target.0.offset(first * target_cs),
                    target_cs,
                    target_rs,
                    false,
                    lhs.0,
                    lhs_cs,
                    lhs_rs,
                    rhs.0.offset(first * rhs_cs),
                    rhs_cs,
                    rhs_rs,
                    one,
                    one,
                    false,
                    false,
                    false,
                    gemm::Parallelism::None,
                )
            };
        });
        if g.transpose {
            // The block is (nb, m) row-major: its transpose is the result's columns.
            transpose_into(&block[..nb * g.m], nb, g.m, &mut out[n0..], g.n);
        }
        n0 += nb;
    }
    Ok(())
}

/// `a @ b` for float16 or bfloat16 operands (matrices paired by `pairs`) into a new
/// float32 tensor of `shape`: `a` is widened whole, `b` a tile at a time.
pub(super) fn widened_product<E: Widen>(
    a: Tensor,
    b: Tensor,
    shape: &[usize],
    pairs: Pairs,
) -> Result<Tensor> {
    let nd = shape.len();
    let (m, n, k) = (shape[nd - 2], shape[nd - 1], a.shape[a.ndim() - 1]);
    let batches: usize = shape[..nd - 2].iter().product();
    let a = converted(a, DType::Float32)?;
    let rhs = Operand::new(b)?;
    let mut out = Tensor::uninit(DType::Float32, shape)?;
    if out.size() == 0 {
        return Ok(out);
    }
    // `b` is (k, n). With a unit stride along the depth it is `W^T` for W = (n, k) with
    // rows `col_stride` apart; otherwise W = b with rows `row_stride` apart.
    let transpose = rhs.row_stride == 1 && rhs.col_stride != 1;
    let row_stride = if transpose {
        rhs.col_stride
    } else {
        rhs.row_stride
    };
    let geometry = Geometry { m, n, k, transpose };
    let base = SendPtr(rhs.tensor.buf.as_ptr() as *mut E);
    let xs = a.slice::<f32>();
    let dst = out.slice_mut::<f32>();
    for batch in 0..batches {
        let (batch_a, batch_b) = pairs.get(batch);
        // SAFETY: the offset addresses matrix `batch_b` inside b's buffer.
        let w = SendPtr(unsafe { base.0.offset(rhs.batch_offset(batch_b)) });
        let decode = |rows: Range<usize>, cols: Range<usize>, tile: &mut [f32]| {
            // The whole wrapper, borrowed (not its pointer field), so the closure is Sync.
            let w = &w;
            let width = cols.len();
            for (r, tile_row) in rows.zip(tile.chunks_exact_mut(width)) {
                // SAFETY: row r of the stored matrix holds its columns contiguously from
                // here, inside b's buffer.
                let row = unsafe {
                    let start = w.0.offset(r as isize * row_stride).add(cols.start);
                    std::slice::from_raw_parts(start as *const E, width)
                };
                E::widen_into(row, tile_row);
            }
        };
        let x = &xs[batch_a * m * k..][..m * k];
        product(x, geometry, &mut dst[batch * m * n..][..m * n], decode)?;
    }
    Ok(out)
}
