//! Strided copies between tensors of the same dtype.

use super::elementwise::map1;
use super::strided::{par_for_each_run, Shared};
use super::transpose::transposed_copy;
use crate::backend::Tensor;
use crate::element::{dispatch, Element};
use crate::error::Result;

/// `x` with its elements in row-major order and no gaps: `x` itself when it already is,
/// else a copy (a transposed layout is copied by blocks, see [`transposed_copy`]).
pub fn contiguous(x: Tensor) -> Result<Tensor> {
    if x.is_contiguous() {
        return Ok(x);
    }
    if let Some(copy) = transposed_copy(&x)? {
        return Ok(copy);
    }
    dispatch!(x.dtype, T => map1::<T, T>(x, |v| v))
}

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
    let src_base = Shared(src.buf.as_ptr() as *mut u8);
    dispatch!(dst.dtype, T => {
        let d = Shared(dst.data_ptr_mut::<T>());
        // Every element of the view is a distinct element of `dst`, so runs of the view
        // write disjoint memory, from whichever thread.
        par_for_each_run(
            view.shape,
            [view.strides, &src.strides],
            [view.offset as isize, src.offset as isize],
            &|_, [o0, o1], len, [t0, t1]| {
                let s = src_base.get() as *const <T as Element>::Storage;
                // SAFETY: both layouts address elements inside their buffers, which are
                // distinct (`dst` owns its buffer).
                unsafe {
                    let (d, s) = (d.get().offset(o0), s.offset(o1));
                    if (t0, t1) == (1, 1) {
                        std::ptr::copy_nonoverlapping(s, d, len);
                    } else {
                        for i in 0..len as isize {
                            d.offset(i * t0).write(s.offset(i * t1).read_unaligned());
                        }
                    }
                }
            },
        );
    });
}
