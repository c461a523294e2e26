//! Gather and scatter kernels: read or update the sub-arrays of a tensor addressed by
//! integer index tensors along some of its axes.
//!
//! Index values are data, so they are checked here: a negative index counts from the end
//! of its axis and anything outside `[-size, size)` is an `IndexError`. A gather with
//! one contiguous index tensor and one element per index (`take` of a vector, the
//! common large case) checks each index in its read loop, without a branch per index, and
//! splits large outputs across threads. Every other gather and every scatter checks all
//! indices before anything is read or written, by one vectorised min/max pass over them
//! (so a failed scatter leaves no partial update); the loops that then read through
//! them wrap negatives without a branch.

use super::binary::Arith;
use super::elementwise::map1;
use super::strided::for_each_row;
use crate::backend::Tensor;
use crate::element::{dispatch, Element};
use crate::error::{Error, Result};
use rayon::prelude::*;

/// How a scatter combines an update with the element already there. With duplicate
/// indices, `Assign` keeps the last update; the other modes combine all of them.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ScatterMode {
    Assign,
    Add,
    Multiply,
    Maximum,
    Minimum,
}

impl ScatterMode {
    /// The MLX function name.
    pub fn name(self) -> &'static str {
        match self {
            ScatterMode::Assign => "scatter",
            ScatterMode::Add => "scatter_add",
            ScatterMode::Multiply => "scatter_prod",
            ScatterMode::Maximum => "scatter_max",
            ScatterMode::Minimum => "scatter_min",
        }
    }
}

/// The axes of `t` that are indexed (`axes`) and the others, in order.
struct Split {
    dims: Vec<usize>,
    strides: Vec<isize>,
    rest_shape: Vec<usize>,
    rest_strides: Vec<isize>,
}

fn split(shape: &[usize], strides: &[isize], axes: &[usize]) -> Split {
    let (rest_shape, rest_strides) = (0..shape.len())
        .filter(|d| !axes.contains(d))
        .map(|d| (shape[d], strides[d]))
        .unzip();
    Split {
        dims: axes.iter().map(|&a| shape[a]).collect(),
        strides: axes.iter().map(|&a| strides[a]).collect(),
        rest_shape,
        rest_strides,
    }
}

/// Checks every index of `indices` (one per axis of `axes`, sizes `split.dims`) against
/// its axis: an index outside `[-size, size)` is an `IndexError` naming it.
fn check_indices(op: &str, indices: &[Tensor], axes: &[usize], split: &Split) -> Result<()> {
    for (k, idx) in indices.iter().enumerate() {
        let dim = split.dims[k];
        dispatch!(idx.dtype, I => out_of_range::<I>(idx, dim))
            .map_or(Ok(()), |bad| Err(out_of_bounds(op, bad, axes[k], dim)))?;
    }
    Ok(())
}

/// The `IndexError` of index `bad` on `axis` of size `dim`.
fn out_of_bounds(op: &str, bad: i128, axis: usize, dim: usize) -> Error {
    Error::index(format!(
        "[{op}] Index {bad} is out of bounds for axis {axis} with size {dim}."
    ))
}

/// An index of `idx` outside `[-dim, dim)`, if any (the smallest or the largest). One pass
/// of min/max without a data-dependent branch, which the compiler vectorises; then every
/// index is known to be in range and the gather/scatter loops need no check.
fn out_of_range<I: Element>(idx: &Tensor, dim: usize) -> Option<i128> {
    if idx.size() == 0 {
        return None;
    }
    let src = idx.buf.as_ptr() as *const I::Storage;
    // Unsigned values may exceed i64 (u64), and only their top matters.
    let unsigned = I::DTYPE.is_unsigned();
    let (mut lo, mut hi) = (i128::MAX, i128::MIN);
    for_each_row(
        &idx.shape,
        [&idx.strides],
        [idx.offset as isize],
        |[start], len, [step]| {
            // Row extremes in locals (folded), so the loop keeps them in registers.
            let (row_lo, row_hi) = if unsigned {
                let top =
                    fold_row::<I, u64>(src, start, len, step, 0, |t, v| Ord::max(t, v.to_u64()));
                (0, top as i128)
            } else {
                let (l, h) = fold_row::<I, (i64, i64)>(
                    src,
                    start,
                    len,
                    step,
                    (i64::MAX, i64::MIN),
                    |(l, h), v| {
                        let v = v.to_i64();
                        (Ord::min(l, v), Ord::max(h, v))
                    },
                );
                (l as i128, h as i128)
            };
            lo = Ord::min(lo, row_lo);
            hi = Ord::max(hi, row_hi);
        },
    );
    let dim = dim as i128;
    if lo < -dim {
        Some(lo)
    } else if hi >= dim {
        Some(hi)
    } else {
        None
    }
}

/// Folds the `len` values of a row starting at element `start` with step `step`;
/// contiguous rows go through a slice so the loop vectorises.
#[inline(always)]
fn fold_row<I: Element, A>(
    src: *const I::Storage,
    start: isize,
    len: usize,
    step: isize,
    init: A,
    f: impl Fn(A, I) -> A,
) -> A {
    if step == 1 {
        // SAFETY: the row's `len` elements from `start` lie inside the index buffer.
        let row = unsafe { std::slice::from_raw_parts(src.offset(start), len) };
        row.iter().fold(init, |acc, &v| f(acc, I::load(v)))
    } else {
        (0..len as isize).fold(init, |acc, i| {
            // SAFETY: the layout addresses elements inside the index buffer.
            f(
                acc,
                I::load(unsafe { std::ptr::read_unaligned(src.offset(start + i * step)) }),
            )
        })
    }
}

/// Calls `f` on the `len` values of a row starting at element `start` with step `step`,
/// with the position in the row; contiguous rows go through a slice.
#[inline(always)]
fn for_each_value<I: Element>(
    src: *const I::Storage,
    start: isize,
    len: usize,
    step: isize,
    mut f: impl FnMut(usize, I),
) {
    if step == 1 {
        // SAFETY: the row's `len` elements from `start` lie inside the index buffer.
        let row = unsafe { std::slice::from_raw_parts(src.offset(start), len) };
        for (k, &v) in row.iter().enumerate() {
            f(k, I::load(v));
        }
    } else {
        for k in 0..len {
            // SAFETY: the layout addresses elements inside the index buffer.
            let v = unsafe { std::ptr::read_unaligned(src.offset(start + k as isize * step)) };
            f(k, I::load(v));
        }
    }
}

/// An index known to be in `[-dim, dim)` wrapped into `[0, dim)` without a branch.
#[inline(always)]
fn wrap(v: isize, dim: isize) -> isize {
    v + ((v >> (isize::BITS - 1)) & dim)
}

/// Element offsets `base + Σ_k index_k * strides[k]`, one per position of the (equally
/// shaped, already checked) index tensors in row-major order.
fn offsets(indices: &[Tensor], split: &Split, base: isize) -> Vec<isize> {
    let count = indices.first().map_or(1, |t| t.size());
    let mut out = vec![base; count];
    for (k, idx) in indices.iter().enumerate() {
        let (dim, stride) = (split.dims[k] as isize, split.strides[k]);
        dispatch!(idx.dtype, I => {
            let src = idx.buf.as_ptr() as *const <I as Element>::Storage;
            let mut rest = &mut out[..];
            for_each_row(
                &idx.shape,
                [&idx.strides],
                [idx.offset as isize],
                |[start], len, [step]| {
                    let (row, tail) = std::mem::take(&mut rest).split_at_mut(len);
                    rest = tail;
                    for_each_value::<I>(src, start, len, step, |k, v| {
                        row[k] += wrap(v.to_i64() as isize, dim) * stride;
                    });
                },
            );
        });
    }
    out
}

/// The sub-arrays of `src` at the given indices along `axes`: an output of shape
/// `index shape ++ (src's shape without axes)`. The index tensors share one shape and
/// may have any integer dtype and layout.
pub fn gather(src: &Tensor, indices: &[Tensor], axes: &[usize]) -> Result<Tensor> {
    gather_checked(src, indices, axes, true)
}

/// [`gather`] without its bounds check, so that a bench can measure what the check
/// costs.
///
/// # Safety
/// Every index must lie in `[-size, size)` of its axis.
pub unsafe fn gather_unchecked(src: &Tensor, indices: &[Tensor], axes: &[usize]) -> Result<Tensor> {
    gather_checked(src, indices, axes, false)
}

fn gather_checked(src: &Tensor, indices: &[Tensor], axes: &[usize], check: bool) -> Result<Tensor> {
    let split = split(&src.shape, &src.strides, axes);
    let mut out_shape = indices.first().map_or(vec![], |t| t.shape.clone());
    out_shape.extend(&split.rest_shape);
    let mut out = Tensor::uninit(src.dtype, &out_shape)?;
    if let ([idx], 1) = (indices, split.rest_shape.iter().product::<usize>()) {
        if idx.is_contiguous() {
            // One index per element, read in order (`take` of a vector, ...): the
            // check is fused into the gather loop.
            let (dim, stride, base) = (split.dims[0], split.strides[0], src.offset as isize);
            let bad = dispatch!(idx.dtype, I => match src.dtype.size() {
                1 => pick_contiguous::<I, u8>(src, idx, dim, stride, base, &mut out, check),
                2 => pick_contiguous::<I, u16>(src, idx, dim, stride, base, &mut out, check),
                4 => pick_contiguous::<I, u32>(src, idx, dim, stride, base, &mut out, check),
                _ => pick_contiguous::<I, u64>(src, idx, dim, stride, base, &mut out, check),
            });
            return match bad {
                Some(bad) => Err(out_of_bounds("gather", bad, axes[0], dim)),
                None => Ok(out),
            };
        }
    }
    if check {
        check_indices("gather", indices, axes, &split)?;
    }
    if out.size() == 0 {
        return Ok(out);
    }
    if let ([idx], true) = (indices, split.rest_shape.iter().product::<usize>() == 1) {
        // One index per element in any layout: read straight through the index,
        // without an offsets table.
        let (dim, stride, base) = (split.dims[0], split.strides[0], src.offset as isize);
        dispatch!(idx.dtype, I => match src.dtype.size() {
            1 => pick::<I, u8>(src, idx, dim, stride, base, &mut out),
            2 => pick::<I, u16>(src, idx, dim, stride, base, &mut out),
            4 => pick::<I, u32>(src, idx, dim, stride, base, &mut out),
            _ => pick::<I, u64>(src, idx, dim, stride, base, &mut out),
        });
        return Ok(out);
    }
    let offsets = offsets(indices, &split, src.offset as isize);
    match src.dtype.size() {
        1 => copy_rows::<u8>(src, &mut out, &offsets, &split),
        2 => copy_rows::<u16>(src, &mut out, &offsets, &split),
        4 => copy_rows::<u32>(src, &mut out, &offsets, &split),
        _ => copy_rows::<u64>(src, &mut out, &offsets, &split),
    }
    Ok(out)
}

/// Outputs from which [`pick_contiguous`] splits its work across the rayon pool.
const PARALLEL_MIN: usize = 1 << 15;
/// Outputs per task of a parallel [`pick_contiguous`].
const CHUNK: usize = 1 << 14;

/// `out[i] = src[base + wrap(idx[i]) * stride]` over a contiguous index tensor, moving
/// elements as `W` (an unsigned integer of the element's width), each index checked
/// (when `check`) in the read loop itself, without a branch per index. Large outputs are
/// split across the rayon pool. Returns an out-of-range index if there is one (`out` is then partly
/// written).
fn pick_contiguous<I: Element, W: Element>(
    src: &Tensor,
    idx: &Tensor,
    dim: usize,
    stride: isize,
    base: isize,
    out: &mut Tensor,
    check: bool,
) -> Option<i128> {
    let indices = idx.slice::<I>();
    let out = out.slice_mut::<W>();
    // An address, so that the closures below are Send + Sync.
    let src = src.buf.as_ptr() as usize;
    let run = move |out: &mut [W::Storage], indices: &[I::Storage]| {
        if check {
            pick_run::<I, W, true>(src, out, indices, dim, stride, base)
        } else {
            pick_run::<I, W, false>(src, out, indices, dim, stride, base)
        }
    };
    if out.len() >= PARALLEL_MIN && rayon::current_num_threads() > 1 {
        out.par_chunks_mut(CHUNK)
            .zip(indices.par_chunks(CHUNK))
            .find_map_any(|(o, i)| run(o, i))
    } else {
        run(out, indices)
    }
}

/// Indices per block of [`pick_run`]: small enough to stay in L1 between the block's
/// check and its reads.
const CHECK_BLOCK: usize = 256;

/// The loop of [`pick_contiguous`] over one run of indices; every parameter is a value
/// (not a capture), so that the loop keeps them in registers.
///
/// Each block of indices is checked before it is read through, by its minimum and
/// maximum (a vectorised pass over data already in L1), so the read loop itself has no
/// check; a block out of range is scanned for its first bad index.
#[inline(never)]
fn pick_run<I: Element, W: Element, const CHECK: bool>(
    src: usize,
    out: &mut [W::Storage],
    indices: &[I::Storage],
    dim: usize,
    stride: isize,
    base: isize,
) -> Option<i128> {
    let s = src as *const W::Storage;
    // An unsigned index is never negative (and a u64 may not fit i64).
    let value = |v: I::Storage| -> i128 {
        let v = I::load(v);
        if I::DTYPE.is_unsigned() {
            v.to_u64() as i128
        } else {
            v.to_i64() as i128
        }
    };
    let inside = |v: i128| v >= -(dim as i128) && v < dim as i128;
    for (out, indices) in out.chunks_mut(CHECK_BLOCK).zip(indices.chunks(CHECK_BLOCK)) {
        if CHECK && !block_inside::<I>(indices, dim) {
            return indices.iter().map(|&v| value(v)).find(|&v| !inside(v));
        }
        for (o, &v) in out.iter_mut().zip(indices) {
            let v = I::load(v);
            let at = if I::DTYPE.is_unsigned() {
                v.to_u64() as isize
            } else {
                let v = v.to_i64();
                (v + ((v >> 63) & dim as i64)) as isize
            };
            // SAFETY: `at` is in [0, dim) (the block was checked above, or the caller of
            // gather_unchecked promised it), so it addresses an element of src.
            *o = unsafe { std::ptr::read_unaligned(s.offset(base + at * stride)) };
        }
    }
    None
}

/// Whether every index of `indices` is in `[-dim, dim)` (`[0, dim)` when unsigned).
fn block_inside<I: Element>(indices: &[I::Storage], dim: usize) -> bool {
    super::simd::vectorised(
        #[inline(always)]
        || {
            if I::DTYPE.is_unsigned() {
                let high = indices
                    .iter()
                    .fold(0u64, |m, &v| Ord::max(m, I::load(v).to_u64()));
                high < dim as u64
            } else {
                let (low, high) = indices.iter().fold((i64::MAX, i64::MIN), |(lo, hi), &v| {
                    let v = I::load(v).to_i64();
                    (Ord::min(lo, v), Ord::max(hi, v))
                });
                // dim <= isize::MAX, so -dim does not overflow.
                indices.is_empty() || (low >= -(dim as i64) && high < dim as i64)
            }
        },
    )
}

/// `out[i] = src[base + wrap(idx[i]) * stride]` over the (checked) index tensor, moving
/// elements as `W` (an unsigned integer of the element's width).
fn pick<I: Element, W: Element>(
    src: &Tensor,
    idx: &Tensor,
    dim: usize,
    stride: isize,
    base: isize,
    out: &mut Tensor,
) {
    let s = src.buf.as_ptr() as *const W::Storage;
    let ip = idx.buf.as_ptr() as *const I::Storage;
    let n = out.size();
    // SAFETY: the output is contiguous with one element per index.
    let mut rest = unsafe { std::slice::from_raw_parts_mut(out.data_ptr_mut::<W>(), n) };
    let dim = dim as isize;
    for_each_row(
        &idx.shape,
        [&idx.strides],
        [idx.offset as isize],
        |[start], len, [step]| {
            // The row's outputs as a slice of their own, so the loop keeps no counter
            // in memory.
            let (row, tail) = std::mem::take(&mut rest).split_at_mut(len);
            rest = tail;
            for_each_value::<I>(ip, start, len, step, |k, v| {
                let at = base + wrap(v.to_i64() as isize, dim) * stride;
                // SAFETY: every index was checked against its axis, so `at` addresses an
                // element of src.
                row[k] = unsafe { std::ptr::read_unaligned(s.offset(at)) };
            });
        },
    );
}

/// Copies the sub-array at each offset into consecutive places of `out`, moving elements
/// as `W` (an unsigned integer of the element's width).
fn copy_rows<W: Element>(src: &Tensor, out: &mut Tensor, offsets: &[isize], split: &Split) {
    let s = src.buf.as_ptr() as *const W::Storage;
    let d = out.data_ptr_mut::<W>();
    let inner: usize = split.rest_shape.iter().product();
    // SAFETY (both branches): offsets were bounds-checked against src's layout, and the
    // output holds offsets.len() * inner elements written in order.
    if inner == 1 {
        for (i, &o) in offsets.iter().enumerate() {
            unsafe { d.add(i).write(std::ptr::read_unaligned(s.offset(o))) };
        }
        return;
    }
    let mut pos = 0;
    for &o in offsets {
        for_each_row(
            &split.rest_shape,
            [&split.rest_strides],
            [o],
            |[start], len, [step]| {
                for i in 0..len as isize {
                    unsafe {
                        d.add(pos)
                            .write(std::ptr::read_unaligned(s.offset(start + i * step)))
                    };
                    pos += 1;
                }
            },
        );
    }
}

/// `dst` with the sub-arrays at the given indices along `axes` combined with `updates`
/// (shape `index shape ++ (dst's shape without axes)`, dst's dtype, any layout) by `mode`.
/// Writes into `dst`'s buffer when nobody else holds it; all indices are checked first,
/// so an error leaves no partial update behind.
pub fn scatter(
    dst: Tensor,
    indices: &[Tensor],
    updates: &Tensor,
    axes: &[usize],
    mode: ScatterMode,
) -> Result<Tensor> {
    let mut out = if dst.is_donatable(dst.dtype) {
        dst
    } else {
        // Not donatable, so map1 writes a new buffer.
        dispatch!(dst.dtype, T => map1::<T, T>(dst, |v| v))?
    };
    let split = split(&out.shape, &out.strides.clone(), axes);
    check_indices(mode.name(), indices, axes, &split)?;
    let offsets = offsets(indices, &split, 0);
    let batch_ndim = updates.ndim() - split.rest_shape.len();
    let mut update_offsets = Vec::with_capacity(offsets.len());
    for_each_row(
        &updates.shape[..batch_ndim],
        [&updates.strides[..batch_ndim]],
        [updates.offset as isize],
        |[start], len, [step]| {
            update_offsets.extend((0..len as isize).map(|i| start + i * step));
        },
    );
    let rest_update_strides = &updates.strides[batch_ndim..];
    dispatch!(out.dtype, T => {
        let combine: fn(T, T) -> T = match mode {
            ScatterMode::Assign => |_, u| u,
            ScatterMode::Add => <T as Arith>::add,
            ScatterMode::Multiply => <T as Arith>::mul,
            ScatterMode::Maximum => <T as Arith>::max,
            ScatterMode::Minimum => <T as Arith>::min,
        };
        let d = out.data_ptr_mut::<T>();
        let u = updates.buf.as_ptr() as *const <T as Element>::Storage;
        for (&o, &uo) in offsets.iter().zip(&update_offsets) {
            for_each_row(
                &split.rest_shape,
                [&split.rest_strides, rest_update_strides],
                [o, uo],
                |[s0, s1], len, [t0, t1]| {
                    for i in 0..len as isize {
                        // SAFETY: offsets were checked against out's layout; the update
                        // layout addresses elements inside its buffer.
                        unsafe {
                            let p = d.offset(s0 + i * t0);
                            let old = T::load(p.read());
                            let new = T::load(std::ptr::read_unaligned(u.offset(s1 + i * t1)));
                            p.write(combine(old, new).store());
                        }
                    }
                },
            );
        }
    });
    Ok(out)
}
