//! Gather and scatter kernels: read or update the sub-arrays of a tensor addressed by
//! integer index tensors along some of its axes.
//!
//! Index values are data, so they are checked here: a negative index counts from the end
//! of its axis and anything outside `[-size, size)` is an `IndexError`. The check sits in
//! the loop that reads the index (one compare per index), and every index is checked
//! before anything is written.

use super::binary::Arith;
use super::elementwise::map1;
use super::strided::for_each_row;
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::element::{dispatch, Element};
use crate::error::{Error, Result};

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

/// Element offsets `base + Σ_k index_k * strides[k]`, one per position of the (equally
/// shaped) index tensors in row-major order, with every index wrapped and bounds-checked.
fn offsets(
    op: &str,
    indices: &[Tensor],
    axes: &[usize],
    split: &Split,
    base: isize,
) -> Result<Vec<isize>> {
    let count = indices.first().map_or(1, |t| t.size());
    let mut out = vec![base; count];
    for (k, idx) in indices.iter().enumerate() {
        let (dim, stride) = (split.dims[k], split.strides[k]);
        dispatch!(idx.dtype, I => add_offsets::<I>(idx, dim, stride, &mut out)).map_err(|bad| {
            Error::index(format!(
                "[{op}] Index {bad} is out of bounds for axis {} with size {dim}.",
                axes[k]
            ))
        })?;
    }
    Ok(out)
}

/// Adds `index * stride` to each offset; on an index outside `[-dim, dim)` stops and
/// returns it.
fn add_offsets<I: Element>(
    idx: &Tensor,
    dim: usize,
    stride: isize,
    out: &mut [isize],
) -> std::result::Result<(), i128> {
    let src = idx.buf.as_ptr() as *const I::Storage;
    let mut slots = out.iter_mut();
    let mut bad = None;
    for_each_row(
        &idx.shape,
        [&idx.strides],
        [idx.offset as isize],
        |[start], len, [step]| {
            if bad.is_some() {
                return;
            }
            for (i, slot) in (0..len as isize).zip(&mut slots) {
                // SAFETY: the layout addresses elements inside the index buffer.
                let v = I::load(unsafe { std::ptr::read_unaligned(src.offset(start + i * step)) });
                let v = if I::DTYPE == DType::UInt64 {
                    v.to_u64() as i128
                } else {
                    v.to_i64() as i128
                };
                let wrapped = if v < 0 { v + dim as i128 } else { v };
                if !(0..dim as i128).contains(&wrapped) {
                    bad = Some(v);
                    return;
                }
                *slot += wrapped as isize * stride;
            }
        },
    );
    bad.map_or(Ok(()), Err)
}

/// The sub-arrays of `src` at the given indices along `axes`: an output of shape
/// `index shape ++ (src's shape without axes)`. The index tensors share one shape and
/// may have any integer dtype and layout.
pub fn gather(src: &Tensor, indices: &[Tensor], axes: &[usize]) -> Result<Tensor> {
    let split = split(&src.shape, &src.strides, axes);
    let offsets = offsets("gather", indices, axes, &split, src.offset as isize)?;
    let mut out_shape = indices.first().map_or(vec![], |t| t.shape.clone());
    out_shape.extend(&split.rest_shape);
    let mut out = Tensor::uninit(src.dtype, &out_shape)?;
    match src.dtype.size() {
        1 => copy_rows::<u8>(src, &mut out, &offsets, &split),
        2 => copy_rows::<u16>(src, &mut out, &offsets, &split),
        4 => copy_rows::<u32>(src, &mut out, &offsets, &split),
        _ => copy_rows::<u64>(src, &mut out, &offsets, &split),
    }
    Ok(out)
}

/// Copies the sub-array at each offset into consecutive places of `out`, moving elements
/// as `W` (an unsigned integer of the element's width).
fn copy_rows<W: Element>(src: &Tensor, out: &mut Tensor, offsets: &[isize], split: &Split) {
    if out.size() == 0 {
        return;
    }
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
    let offsets = offsets(mode.name(), indices, axes, &split, 0)?;
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
