//! Matrix products over part of their operands: `block_masked_mm` (blocks of the operands
//! and of the result masked out or scaled) and `segmented_mm` (one product per range of
//! the inner dimension). Both are compositions: a masked operand is the operand with its
//! masked elements replaced, then an ordinary product, so gradients and vmap come from
//! the ops they are made of.

use crate::array::Array;
use crate::dtype::{promote_types, Category, DType};
use crate::error::{Error, Result};
use crate::ops::binary::{greater_equal, less, logical_and, multiply};
use crate::ops::cast::astype;
use crate::ops::creation::{arange, zeros_like};
use crate::ops::linalg::matmul;
use crate::ops::shape::{expand_dims, squeeze};
use crate::ops::ternary::where_;
use crate::ops::view::{broadcast_to, slice_axis};
use crate::shape::{broadcast_shapes, shape_text};

/// The promoted dtype of `a` and `b` if it is a real float (MLX's rule for these
/// products), else MLX's error naming `op`.
fn float_result(op: &str, a: &Array, b: &Array) -> Result<DType> {
    let out = promote_types(a.dtype(), b.dtype());
    if !crate::dtype::issubdtype(out, Category::Floating) {
        return Err(Error::value(format!(
            "[{op}] Only real floating point types are supported but {} and {} were \
             provided which results in {out}, which is not a real floating point type.",
            a.dtype(),
            b.dtype()
        )));
    }
    Ok(out)
}

/// Per-segment products of the inner dimension: `out[..., :, :] = a[:, s:e] @ b[s:e, :]`
/// for each pair `[s, e)` of `segments` (shape `[..., 2]`, integers), so the result has
/// shape `[..., M, N]` for `a` of shape `[M, K]` and `b` of `[K, N]` (MLX:
/// `segmented_mm`). An empty segment gives zeros.
///
/// ```
/// use lazulite::{segmented_mm, Array};
/// let a = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[1, 4])?;
/// let b = Array::from_slice(&[1.0f32; 4], &[4, 1])?;
/// let segments = Array::from_slice(&[0u32, 1, 1, 4, 2, 2], &[3, 2])?;
/// let out = segmented_mm(&a, &b, &segments)?;
/// assert_eq!(out.shape(), &[3, 1, 1]);
/// assert_eq!(out.to_vec::<f32>()?, vec![1.0, 9.0, 0.0]);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn segmented_mm(a: &Array, b: &Array, segments: &Array) -> Result<Array> {
    let op = "segmented_mm";
    if a.ndim() != 2 || b.ndim() != 2 {
        return Err(Error::value(format!("[{op}] Batched matmul not supported")));
    }
    if segments.ndim() < 1 || segments.shape()[segments.ndim() - 1] != 2 {
        return Err(Error::value(format!(
            "[{op}] The segments should have shape (..., 2) but {} was provided.",
            shape_text(segments.shape())
        )));
    }
    let out = float_result(op, a, b)?;
    if !crate::dtype::issubdtype(segments.dtype(), Category::Integer) {
        return Err(Error::value(format!(
            "[{op}] Got segments with invalid dtype. Segments must be integral."
        )));
    }
    let k = a.shape()[1];
    if b.shape()[0] != k {
        return Err(Error::value(format!(
            "[{op}] Last dimension of first input with shape {} must match first \
             dimension of second input with shape {}.",
            shape_text(a.shape()),
            shape_text(b.shape())
        )));
    }
    let (a, b) = (astype(a, out)?, astype(b, out)?);
    // MLX reads the segment bounds as uint32.
    let segments = astype(segments, DType::UInt32)?;
    let last = segments.ndim() - 1;
    let bound = |i: i64| slice_axis(&segments, last, i, i + 1, 1);
    // Position k of the inner dimension belongs to a segment when start <= k < end.
    let inner = arange(0.0, k as f64, 1.0, DType::UInt32)?;
    let inside = logical_and(
        &greater_equal(&inner, &bound(0)?)?,
        &less(&inner, &bound(1)?)?,
    )?;
    let masked = where_(&expand_dims(&inside, -2)?, &a, &zeros_like(&a)?)?;
    matmul(&masked, &b)
}

/// `x` with each `block x block` tile scaled by (float `mask`) or kept where (bool
/// `mask`) its entry of `mask` says; `mask` has the tile counts as its last two sizes.
fn mask_blocks(x: &Array, mask: &Array, block: usize) -> Result<Array> {
    let nd = mask.ndim();
    let (rows, cols) = (mask.shape()[nd - 2], mask.shape()[nd - 1]);
    let mut spread = mask.shape()[..nd - 2].to_vec();
    spread.extend([rows, block, cols, block]);
    let wide = expand_dims(&expand_dims(mask, -1)?, -3)?;
    let mut full = mask.shape()[..nd - 2].to_vec();
    full.extend([rows * block, cols * block]);
    let elementwise = broadcast_to(&wide, &spread)?.reshape(&full)?;
    let (r, c) = (x.shape()[x.ndim() - 2], x.shape()[x.ndim() - 1]);
    let elementwise = slice_axis(&elementwise, nd - 2, 0, r as i64, 1)?;
    let elementwise = slice_axis(&elementwise, nd - 1, 0, c as i64, 1)?;
    if mask.dtype() == DType::Bool {
        // MLX zeroes a masked tile (a NaN or infinity there does not leak through).
        where_(&elementwise, x, &zeros_like(x)?)
    } else {
        multiply(x, &elementwise)
    }
}

/// The (batched) product `a @ b` with `block x block` tiles masked: a tile of `a` where
/// `mask_lhs` (shape `[..., ceil(M/block), ceil(K/block)]`) is false is taken as zeros, the
/// same for `b` and `mask_rhs` (`[..., ceil(K/block), ceil(N/block)]`) and for the result
/// and `mask_out` (`[..., ceil(M/block), ceil(N/block)]`); float masks scale their tiles
/// instead. `block` is 32 or 64, as in MLX (`block_masked_mm`).
///
/// ```
/// use lazulite::{block_masked_mm, Array};
/// let a = Array::from_slice(&[1.0f32; 64 * 64], &[64, 64])?;
/// let out_mask = Array::from_slice(&[true, false, false, true], &[2, 2])?;
/// let out = block_masked_mm(&a, &a, 32, Some(&out_mask), None, None)?;
/// let values = out.to_vec::<f32>()?;
/// assert_eq!((values[0], values[40]), (64.0, 0.0));
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn block_masked_mm(
    a: &Array,
    b: &Array,
    block: i32,
    mask_out: Option<&Array>,
    mask_lhs: Option<&Array>,
    mask_rhs: Option<&Array>,
) -> Result<Array> {
    let op = "block_masked_mm";
    if mask_out.is_none() && mask_lhs.is_none() && mask_rhs.is_none() {
        return matmul(a, b);
    }
    if block != 32 && block != 64 {
        return Err(Error::value(format!(
            "[{op}] Only block_sizes 32, 64 are supported.Got block size {block}."
        )));
    }
    let block = block as usize;
    if a.ndim() == 0 || b.ndim() == 0 {
        return Err(Error::value(format!(
            "[{op}] Got 0 dimension input. Inputs must have at least one dimension."
        )));
    }
    let (vector_a, vector_b) = (a.ndim() == 1, b.ndim() == 1);
    let a = if vector_a {
        expand_dims(a, 0)?
    } else {
        a.clone()
    };
    let b = if vector_b {
        expand_dims(b, 1)?
    } else {
        b.clone()
    };
    let (m, k, n) = (
        a.shape()[a.ndim() - 2],
        a.shape()[a.ndim() - 1],
        b.shape()[b.ndim() - 1],
    );
    if b.shape()[b.ndim() - 2] != k {
        return Err(Error::value(format!(
            "[{op}] Last dimension of first input with shape {} must match second to last \
             dimension of second input with shape {}.",
            shape_text(a.shape()),
            shape_text(b.shape())
        )));
    }
    let out = float_result(op, &a, &b)?;
    let batch = broadcast_shapes(&a.shape()[..a.ndim() - 2], &b.shape()[..b.ndim() - 2])?;
    let with_batch = |rows: usize, cols: usize| {
        let mut shape = batch.clone();
        shape.extend([rows, cols]);
        shape
    };
    let tiles = |size: usize| size.div_ceil(block);
    let (tm, tk, tn) = (tiles(m), tiles(k), tiles(n));
    // A mask in the tile layout of its product, in the dtype MLX casts it to.
    let prepare = |mask: &Array, extra: &[i32], rows: usize, cols: usize, dtype: DType| {
        let mask = if extra.is_empty() {
            mask.clone()
        } else {
            expand_dims(mask, extra)?
        };
        broadcast_to(&astype(&mask, dtype)?, &with_batch(rows, cols))
    };
    let mut a = broadcast_to(&astype(&a, out)?, &with_batch(m, k))?;
    let mut b = broadcast_to(&astype(&b, out)?, &with_batch(k, n))?;
    if mask_lhs.is_some() || mask_rhs.is_some() {
        let all_bool = mask_lhs.is_none_or(|m| m.dtype() == DType::Bool)
            && mask_rhs.is_none_or(|m| m.dtype() == DType::Bool);
        let dtype = if all_bool { DType::Bool } else { out };
        if let Some(mask) = mask_lhs {
            let extra: &[i32] = if vector_a { &[-2] } else { &[] };
            a = mask_blocks(&a, &prepare(mask, extra, tm, tk, dtype)?, block)?;
        }
        if let Some(mask) = mask_rhs {
            let extra: &[i32] = if vector_b { &[-1] } else { &[] };
            b = mask_blocks(&b, &prepare(mask, extra, tk, tn, dtype)?, block)?;
        }
    }
    let mut product = matmul(&a, &b)?;
    if let Some(mask) = mask_out {
        let mut extra = Vec::new();
        if vector_a {
            extra.push(-2);
        }
        if vector_b {
            extra.push(-1);
        }
        let dtype = if mask.dtype() == DType::Bool {
            DType::Bool
        } else {
            out
        };
        product = mask_blocks(&product, &prepare(mask, &extra, tm, tn, dtype)?, block)?;
    }
    let mut drop = Vec::new();
    if vector_a {
        drop.push(product.ndim() as i32 - 2);
    }
    if vector_b {
        drop.push(product.ndim() as i32 - 1);
    }
    if drop.is_empty() {
        Ok(product)
    } else {
        squeeze(&product, drop)
    }
}
