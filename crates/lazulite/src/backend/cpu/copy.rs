//! Strided copies between tensors of the same dtype.

use super::strided::for_each_row;
use crate::backend::Tensor;
use crate::element::{dispatch, Element};

/// Where a strided view of an output buffer sits: shape, strides and offset in elements.
pub struct ViewLayout<'a> {
    pub shape: &'a [usize],
    pub strides: &'a [isize],
    pub offset: usize,
}

/// Copies `src` (any layout, same shape and dtype as the view) into the elements of
/// `dst`'s buffer addressed by `view`. `dst` must be contiguous and own its buffer.
pub fn copy_into(dst: &mut Tensor, view: ViewLayout<'_>, src: &Tensor) {
    assert_eq!(src.shape, view.shape, "copy_into shape mismatch");
    assert_eq!(src.dtype, dst.dtype, "copy_into dtype mismatch");
    let src_base = src.buf.as_ptr();
    dispatch!(dst.dtype, T => {
        let d = dst.data_ptr_mut::<T>();
        let s = src_base as *const <T as Element>::Storage;
        for_each_row(
            view.shape,
            [view.strides, &src.strides],
            [view.offset as isize, src.offset as isize],
            |[o0, o1], len, [t0, t1]| {
                for i in 0..len as isize {
                    // SAFETY: both layouts address elements inside their buffers.
                    unsafe {
                        d.offset(o0 + i * t0)
                            .write(std::ptr::read_unaligned(s.offset(o1 + i * t1)))
                    };
                }
            },
        );
    });
}
