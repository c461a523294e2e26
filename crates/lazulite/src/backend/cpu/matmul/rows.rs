//! Products with a few rows on the left (`(m, k) @ (k, n)`, `m` at most [`MAX_ROWS`]): the
//! decode step of a language model, one token against every weight matrix. Such a product
//! reads each element of the right operand once, so it runs at memory speed only if it
//! streams that operand in its own layout and dtype: float16 and bfloat16 elements are
//! widened in registers-sized pieces, never copied whole into float32, and both layouts
//! with a unit stride (`x @ W.T` with `W` row-major, and `x @ W`) are walked along it.

use super::super::elementwise::converted;
use super::super::parallel;
use super::super::simd::{self, vectorised};
use super::{add_scaled, Operand, Pairs, SendPtr};
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::element::{f16_to_f32, Element};
use crate::error::Result;
use gemm::f16;
use half::bf16;

/// The most rows of the left operand this path takes; gemm's packed kernels win above.
pub(super) const MAX_ROWS: usize = 8;

/// Elements of the right operand one parallel task reads.
const TASK_ELEMENTS: usize = 1 << 15;

/// Columns of the result one pass over the rows of a `(k, n)` right operand accumulates.
const COLUMN_BLOCK: usize = 512;

/// Float elements that widen to float32 a slice at a time.
pub(super) trait Widen: Element {
    /// Writes `src` as float32 into `dst` (of the same length).
    fn widen_into(src: &[Self], dst: &mut [f32]);

    /// The elements' bits and format, for the dot products that widen them in registers
    /// ([`simd::HalfDots`]); `None` for float32.
    #[inline(always)]
    fn halves(_: &[Self]) -> Option<(&[u16], simd::Half)> {
        None
    }

    /// `src` as float32: in `buf` (widened there), or `src` itself for float32.
    #[inline(always)]
    fn as_f32<'a>(src: &'a [Self], buf: &'a mut Vec<f32>) -> &'a [f32] {
        buf.resize(src.len(), 0.0);
        Self::widen_into(src, buf);
        buf
    }
}

impl Widen for f32 {
    #[inline(always)]
    fn widen_into(src: &[f32], dst: &mut [f32]) {
        dst.copy_from_slice(src);
    }

    #[inline(always)]
    fn as_f32<'a>(src: &'a [f32], _: &'a mut Vec<f32>) -> &'a [f32] {
        src
    }
}

impl Widen for bf16 {
    #[inline(always)]
    fn widen_into(src: &[bf16], dst: &mut [f32]) {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = f32::from_bits((s.to_bits() as u32) << 16);
        }
    }

    #[inline(always)]
    fn halves(src: &[bf16]) -> Option<(&[u16], simd::Half)> {
        Some((bytemuck::cast_slice(src), simd::Half::BFloat16))
    }
}

impl Widen for f16 {
    #[inline(always)]
    fn widen_into(src: &[f16], dst: &mut [f32]) {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = f16_to_f32(s.to_bits());
        }
    }

    #[inline(always)]
    fn halves(src: &[f16]) -> Option<(&[u16], simd::Half)> {
        Some((bytemuck::cast_slice(src), simd::Half::Float16))
    }
}

/// Whether [`product`] takes `a @ b`: float32, float16 or bfloat16, at most [`MAX_ROWS`]
/// rows on the left, a nonzero depth, and a unit stride in one of `b`'s matrix dimensions.
pub(super) fn applies(a: &Tensor, b: &Tensor, m: usize, k: usize) -> bool {
    let nd = b.ndim();
    let unit = |d: usize| b.shape[d] == 1 || b.strides[d] == 1;
    matches!(a.dtype, DType::Float32 | DType::Float16 | DType::BFloat16)
        && m <= MAX_ROWS
        && k > 0
        && (unit(nd - 1) || unit(nd - 2))
}

/// `a @ b` (matrices paired by `pairs`) into a new contiguous tensor of `shape` and `a`'s
/// dtype, accumulated in float32; `alpha * (a @ b) + beta * c` with `addend`.
pub(super) fn product(
    a: Tensor,
    b: Tensor,
    addend: Option<(Tensor, f64, f64)>,
    shape: &[usize],
    pairs: Pairs,
) -> Result<Tensor> {
    let dtype = a.dtype;
    // A few rows: converting them costs little next to reading the right operand.
    let a = converted(a, DType::Float32)?;
    let mut out = match dtype {
        DType::Float16 => typed::<f16>(&a, b, shape, pairs)?,
        DType::BFloat16 => typed::<bf16>(&a, b, shape, pairs)?,
        _ => typed::<f32>(&a, b, shape, pairs)?,
    };
    add_scaled(&mut out, addend)?;
    converted(out, dtype)
}

/// The product with the right operand read as `E`; `a` is contiguous float32.
fn typed<E: Widen>(a: &Tensor, b: Tensor, shape: &[usize], pairs: Pairs) -> Result<Tensor> {
    let nd = shape.len();
    let (m, n, k) = (shape[nd - 2], shape[nd - 1], a.shape[a.ndim() - 1]);
    let batches: usize = shape[..nd - 2].iter().product();
    let mut out = Tensor::uninit(DType::Float32, shape)?;
    if out.size() == 0 {
        return Ok(out);
    }
    let rhs = Operand::new(b)?;
    // `b` is (k, n): along the depth its stride is `row_stride`, along the columns `col_stride`.
    let depth_contiguous = rhs.row_stride == 1 || k == 1;
    let base = SendPtr(rhs.tensor.buf.as_ptr() as *mut E);
    let xs = a.slice::<f32>();
    let dst = SendPtr(out.slice_mut::<f32>().as_mut_ptr());
    let columns_per_task = if depth_contiguous {
        (TASK_ELEMENTS / k).max(1)
    } else {
        COLUMN_BLOCK
    };
    let blocks = n.div_ceil(columns_per_task);
    // bfloat16 columns meet x, bfloat16 too (a product's operands share their dtype), in
    // the pair product without widening; x is narrowed back once here for every task
    // (exactly: it was widened from bfloat16), each row scaled by a power of two.
    let pair_kernel = simd::packed_bf16_dots().filter(|_| {
        depth_contiguous
            && rhs.col_stride >= 0
            && E::halves(&[]).is_some_and(|(_, f)| f == simd::Half::BFloat16)
    });
    let (mut narrowed, mut unscales) = (Vec::new(), Vec::new());
    if pair_kernel.is_some() {
        for row in xs.chunks_exact(k) {
            let halves: Vec<u16> = row.iter().map(|v| (v.to_bits() >> 16) as u16).collect();
            let (scaled, scale) = simd::scaled_near(&halves, simd::PLAIN_EXPONENT);
            narrowed.extend(scaled);
            unscales.push(1.0 / scale);
        }
    }
    let task = |t: usize| {
        // Whole wrappers captured (not their pointer fields), so the closure is Sync.
        let (base, dst) = (base, dst);
        let (batch, block) = (t / blocks, t % blocks);
        let (batch_a, batch_b) = pairs.get(batch);
        let x = &xs[batch_a * m * k..][..m * k];
        let columns = block * columns_per_task..((block + 1) * columns_per_task).min(n);
        // SAFETY: the offset addresses matrix `batch_b` inside b's buffer.
        let b = unsafe { base.0.offset(rhs.batch_offset(batch_b)) } as *const E;
        let out = dst.0.wrapping_add(batch * m * n);
        vectorised(
            #[inline(always)]
            || {
                if depth_contiguous {
                    let pairs = pair_kernel.map(|kernel| PairRows {
                        kernel,
                        rows: &narrowed[batch_a * m * k..][..m * k],
                        unscales: &unscales[batch_a * m..][..m],
                    });
                    dots::<E>(x, pairs, b, rhs.col_stride, k, n, columns, out)
                } else {
                    axpys::<E>(x, b, rhs.row_stride, k, n, columns, out)
                }
            },
        )
    };
    let tasks = batches * blocks;
    let work = batches.saturating_mul(m * n).saturating_mul(k);
    if tasks > 1 && work >= TASK_ELEMENTS {
        parallel::for_each(tasks, task);
    } else {
        (0..tasks).for_each(task);
    }
    Ok(out)
}

/// `x` as bfloat16 for the pair-product kernel.
#[derive(Clone, Copy)]
struct PairRows<'a> {
    kernel: simd::PackedBf16Dots,
    /// The bfloat16 bits of `x`, row after row, each row scaled by a power of two.
    rows: &'a [u16],
    /// Per row, what undoes its scaling.
    unscales: &'a [f64],
}

/// `out[r, j] = x[r] . b[:, j]` for `j` in `columns`, where column `j` of `b` is the `k`
/// contiguous elements at `b + j * column_stride`; bfloat16 columns by the pair product
/// when `pairs` has `x` narrowed for it.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn dots<E: Widen>(
    x: &[f32],
    pairs: Option<PairRows<'_>>,
    b: *const E,
    column_stride: isize,
    k: usize,
    n: usize,
    columns: std::ops::Range<usize>,
    out: *mut f32,
) {
    if let Some(pairs) = pairs {
        pair_dots(pairs, b, column_stride as usize, k, n, columns, out);
        return;
    }
    // Filled only by columns widened to float32.
    let mut buf = Vec::new();
    // Explicit vector code where there is some: LLVM sums the lanes of its own
    // vectorisation in order, which costs more than the products at short depths
    // (attention over 64-wide heads).
    let dot = simd::folds().map_or(dot as fn(&[f32], &[f32]) -> f32, |folds| folds.dot);
    let half_dots = simd::half_dots();
    let rows: Vec<&[f32]> = x.chunks_exact(k).collect();
    for j in columns {
        // SAFETY: column j of the matrix holds k elements from here, inside b's buffer.
        let column = unsafe { std::slice::from_raw_parts(b.offset(j as isize * column_stride), k) };
        // Half-precision columns meet a few rows of x per pass, widened in registers.
        if let (Some(kernel), Some((bits, format))) = (half_dots, E::halves(column)) {
            let mut dots = [0.0f32; simd::MAX_VECTORS];
            for (block, first) in rows
                .chunks(simd::MAX_VECTORS)
                .zip((0..).step_by(simd::MAX_VECTORS))
            {
                let dots = &mut dots[..block.len()];
                (kernel.dots)(format, bits, block, dots);
                for (r, &d) in dots.iter().enumerate() {
                    // SAFETY: (first + r, j) is inside this m x n result matrix; this task
                    // alone writes j.
                    unsafe { *out.add((first + r) * n + j) = d };
                }
            }
            continue;
        }
        let column = E::as_f32(column, &mut buf);
        for (r, x) in x.chunks_exact(k).enumerate() {
            // SAFETY: (r, j) is inside this m x n result matrix; this task alone writes j.
            unsafe { *out.add(r * n + j) = dot(x, column) };
        }
    }
}

/// [`dots`] by the pair product: the columns `columns` of `b` (bfloat16, `k` contiguous
/// elements each, `column_stride` apart) meet the rows of `x` narrowed for it, a few at a
/// time, in one call each.
#[inline(always)]
fn pair_dots<E: Widen>(
    pairs: PairRows<'_>,
    b: *const E,
    column_stride: usize,
    k: usize,
    n: usize,
    columns: std::ops::Range<usize>,
    out: *mut f32,
) {
    let count = columns.len();
    if count == 0 {
        return;
    }
    // SAFETY: columns `columns` of the matrix, `k` elements each, lie inside b's buffer.
    let data = unsafe {
        std::slice::from_raw_parts(
            b.add(columns.start * column_stride),
            (count - 1) * column_stride + k,
        )
    };
    let (bits, _) = E::halves(data).expect("the pair product is chosen for bfloat16 columns");
    let rows = simd::StridedRows {
        data: simd::RowElements::BFloat16(bits),
        count,
        width: k,
        stride: column_stride,
    };
    let x_rows: Vec<&[u16]> = pairs.rows.chunks_exact(k).collect();
    let mut dots = vec![0.0f32; count * x_rows.len().min(simd::MAX_VECTORS)];
    for first in (0..x_rows.len()).step_by(simd::MAX_VECTORS) {
        let block = first..(first + simd::MAX_VECTORS).min(x_rows.len());
        let dots = &mut dots[..count * block.len()];
        (pairs.kernel.dots)(&rows, &x_rows[block.clone()], dots);
        for (r, (dots, unscale)) in dots
            .chunks_exact(count)
            .zip(&pairs.unscales[block])
            .enumerate()
        {
            // SAFETY: row first + r, columns `columns` lie inside this m x n result, written
            // by this task alone.
            let dst = unsafe {
                std::slice::from_raw_parts_mut(out.add((first + r) * n + columns.start), count)
            };
            for (o, &d) in dst.iter_mut().zip(dots) {
                *o = (f64::from(d) * unscale) as f32;
            }
        }
    }
}

/// Rows of `b` one pass over the accumulators adds (fewer loads and stores of them).
const DEPTH_BLOCK: usize = 4;

/// `out[r, columns] = sum_i x[r, i] * b[i, columns]`, where row `i` of `b` starts at
/// `b + i * row_stride` and is contiguous.
#[inline(always)]
fn axpys<E: Widen>(
    x: &[f32],
    b: *const E,
    row_stride: isize,
    k: usize,
    n: usize,
    columns: std::ops::Range<usize>,
    out: *mut f32,
) {
    let width = columns.len();
    let rows = x.len() / k;
    let mut buf = vec![0.0f32; DEPTH_BLOCK * width];
    let mut acc = vec![0.0f32; rows * width];
    for i0 in (0..k).step_by(DEPTH_BLOCK) {
        let depth = DEPTH_BLOCK.min(k - i0);
        for (d, buf) in buf.chunks_exact_mut(width).take(depth).enumerate() {
            // SAFETY: row i0 + d of the matrix holds n elements from its start, inside
            // b's buffer.
            let row = unsafe {
                let start = b.offset((i0 + d) as isize * row_stride).add(columns.start);
                std::slice::from_raw_parts(start, width)
            };
            E::widen_into(row, buf);
        }
        for (r, acc) in acc.chunks_exact_mut(width).enumerate() {
            let scales = &x[r * k + i0..][..depth];
            if depth == DEPTH_BLOCK {
                let (b0, rest) = buf.split_at(width);
                let (b1, rest) = rest.split_at(width);
                let (b2, b3) = rest.split_at(width);
                for c in 0..width {
                    let s = scales[0].mul_add(b0[c], scales[1] * b1[c]);
                    let t = scales[2].mul_add(b2[c], scales[3] * b3[c]);
                    acc[c] += s + t;
                }
            } else {
                for (&scale, row) in scales.iter().zip(buf.chunks_exact(width)) {
                    for (a, &v) in acc.iter_mut().zip(row) {
                        *a = scale.mul_add(v, *a);
                    }
                }
            }
        }
    }
    for (r, acc) in acc.chunks_exact(width).enumerate() {
        // SAFETY: row r, columns `columns` lie inside this m x n result matrix, written by
        // this task alone.
        let dst = unsafe { std::slice::from_raw_parts_mut(out.add(r * n + columns.start), width) };
        dst.copy_from_slice(acc);
    }
}

/// A dot product over 32 independent lanes, so that it vectorises with several chains.
#[inline(always)]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    const LANES: usize = 32;
    let mut lanes = [0.0f32; LANES];
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for l in 0..LANES {
            lanes[l] = x[l].mul_add(y[l], lanes[l]);
        }
    }
    lanes.iter().sum::<f32>() + tail
}
