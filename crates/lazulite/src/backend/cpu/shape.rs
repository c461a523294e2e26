//! Kernels of the shape ops that move data: copying strided inputs into slabs of a new
//! contiguous output (concatenate). Elements are copied as raw bits, so one routine per
//! element size serves every dtype.

use super::strided::for_each_row;
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::element::{dispatch, Complex, Element};
use crate::error::Result;

/// Copies the elements of `src` into `dst`, which must be contiguous and held by nobody
/// else, at element positions `start + sum(index[d] * dst_strides[d])`.
/// The caller guarantees those positions lie inside `dst`.
fn copy_into<T: Element>(dst: &mut Tensor, start: usize, dst_strides: &[isize], src: &Tensor) {
    let out = dst.data_ptr_mut::<T>();
    let input = src.buf.as_ptr() as *const T::Storage;
    for_each_row(
        &src.shape,
        [dst_strides, &src.strides],
        [start as isize, src.offset as isize],
        |[d, s], len, [dstep, sstep]| {
            for i in 0..len as isize {
                // SAFETY: the source layout addresses elements inside its buffer and the
                // caller guarantees the destination positions lie inside `dst`.
                unsafe {
                    let v = std::ptr::read_unaligned(input.offset(s + i * sstep));
                    std::ptr::write_unaligned(out.offset(d + i * dstep), v);
                }
            }
        },
    );
}

/// `inputs` (same dtype, equal shapes except along `axis`) joined along `axis` into a new
/// contiguous tensor of `shape`.
pub fn concatenate(
    inputs: &[Tensor],
    axis: usize,
    dtype: DType,
    shape: &[usize],
) -> Result<Tensor> {
    let mut out = Tensor::uninit(dtype, shape)?;
    let strides = out.strides.clone();
    let mut position = 0usize;
    for t in inputs {
        let start = position * strides[axis] as usize;
        match dtype.size() {
            1 => copy_into::<u8>(&mut out, start, &strides, t),
            2 => copy_into::<u16>(&mut out, start, &strides, t),
            4 => copy_into::<u32>(&mut out, start, &strides, t),
            _ => copy_into::<u64>(&mut out, start, &strides, t),
        }
        position += t.shape[axis];
    }
    Ok(out)
}

/// The transpose of a strided view (the vjp of `as_strided`): a contiguous tensor of
/// `shape` whose element at row-major position `p` is the sum of the elements of `src`
/// that the view with `strides` and `offset` reads from `p`. The caller guarantees those
/// positions lie inside `shape`. Sums are taken in float64 (per part for complex).
pub fn scatter_add_strided(
    src: &Tensor,
    shape: &[usize],
    strides: &[isize],
    offset: usize,
) -> Result<Tensor> {
    let mut out = Tensor::uninit(src.dtype, shape)?;
    let n = out.size();
    let complex = src.dtype.is_complex();
    let mut re = vec![0f64; n];
    let mut im = vec![0f64; if complex { n } else { 0 }];
    let size = src.dtype.size();
    let bytes = src.buf.bytes();
    dispatch!(src.dtype, T => {
        for_each_row(
            &src.shape,
            [strides, &src.strides],
            [offset as isize, src.offset as isize],
            |[d, s], len, [dstep, sstep]| {
                for i in 0..len as isize {
                    let at = (s + i * sstep) as usize * size;
                    let v = T::load(bytemuck::pod_read_unaligned(&bytes[at..at + size]));
                    let p = (d + i * dstep) as usize;
                    re[p] += v.to_f64();
                    if complex {
                        im[p] += v.to_complex().im as f64;
                    }
                }
            },
        );
        for (p, o) in out.slice_mut::<T>().iter_mut().enumerate() {
            let v = if complex {
                T::from_elem(Complex::new(re[p] as f32, im[p] as f32))
            } else {
                T::from_f64(re[p])
            };
            *o = v.store();
        }
    });
    Ok(out)
}
