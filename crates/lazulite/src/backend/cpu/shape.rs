//! Kernels of the shape ops that move data: copying strided inputs into slabs of a new
//! contiguous output (concatenate). Elements are copied as raw bits, so one routine per
//! element size serves every dtype.

use super::strided::for_each_row;
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::element::Element;
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
