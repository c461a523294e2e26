//! Elementwise maps over one, two or three same-shaped tensors of any layout, writing a
//! new contiguous tensor or, when an input's buffer is donated, overwriting that input.

use super::strided::for_each_row;
use crate::backend::Tensor;
use crate::element::Element;
use crate::error::Result;

#[inline(always)]
unsafe fn read<T: Element>(base: *const u8, offset: isize) -> T {
    T::load(std::ptr::read_unaligned(
        (base as *const T::Storage).offset(offset),
    ))
}

/// `out[i] = f(x[i])`. Reuses `x`'s buffer when `I` and `O` are the same dtype and `x`
/// is donatable.
pub fn map1<I: Element, O: Element>(x: Tensor, f: impl Fn(I) -> O) -> Result<Tensor> {
    if I::DTYPE == O::DTYPE && x.is_donatable(O::DTYPE) {
        let mut out = x;
        for v in out.slice_mut::<O>() {
            // SAFETY: I and O are the same type here (same dtype).
            let input: I = I::load(unsafe { std::mem::transmute_copy(v) });
            *v = f(input).store();
        }
        return Ok(out);
    }
    let mut out = Tensor::uninit(O::DTYPE, &x.shape)?;
    if x.is_contiguous() {
        for (o, &v) in out.slice_mut::<O>().iter_mut().zip(x.slice::<I>()) {
            *o = f(I::load(v)).store();
        }
        return Ok(out);
    }
    let dst = out.slice_mut::<O>();
    let src = x.buf.as_ptr();
    let mut pos = 0;
    for_each_row(
        &x.shape,
        [&x.strides],
        [x.offset as isize],
        |[start], len, [step]| {
            for i in 0..len as isize {
                // SAFETY: the layout addresses elements inside x's buffer.
                dst[pos] = f(unsafe { read::<I>(src, start + i * step) }).store();
                pos += 1;
            }
        },
    );
    Ok(out)
}

/// `out[i] = f(a[i], b[i])` for tensors of equal shape. Reuses a donatable input buffer
/// of the output dtype.
pub fn map2<A: Element, B: Element, O: Element>(
    a: Tensor,
    b: Tensor,
    f: impl Fn(A, B) -> O,
) -> Result<Tensor> {
    debug_assert_eq!(a.shape, b.shape);
    let (pa, pb) = (a.buf.as_ptr(), b.buf.as_ptr());
    let shape = a.shape.clone();
    let (sa, sb) = (a.strides.clone(), b.strides.clone());
    let offsets = [a.offset as isize, b.offset as isize];
    let distinct = !std::sync::Arc::ptr_eq(&a.buf, &b.buf);
    // `keep` holds the operands that are not donated, so their buffers outlive the loop.
    let (mut out, keep) = if A::DTYPE == O::DTYPE && distinct && a.is_donatable(O::DTYPE) {
        (a, vec![b])
    } else if B::DTYPE == O::DTYPE && distinct && b.is_donatable(O::DTYPE) {
        (b, vec![a])
    } else {
        (Tensor::uninit(O::DTYPE, &shape)?, vec![a, b])
    };
    let dst = out.data_ptr_mut::<O>();
    let mut pos = 0;
    for_each_row(&shape, [&sa, &sb], offsets, |[s0, s1], len, [t0, t1]| {
        for i in 0..len as isize {
            // SAFETY: layouts address elements inside their buffers; a donated buffer is
            // contiguous, so position `pos` is read before it is written.
            unsafe {
                let v = f(read::<A>(pa, s0 + i * t0), read::<B>(pb, s1 + i * t1));
                dst.add(pos).write(v.store());
            }
            pos += 1;
        }
    });
    drop(keep);
    Ok(out)
}

/// `out[i] = f(a[i], b[i], c[i])` for tensors of equal shape, into a new tensor.
pub fn map3<A: Element, B: Element, C: Element, O: Element>(
    a: &Tensor,
    b: &Tensor,
    c: &Tensor,
    f: impl Fn(A, B, C) -> O,
) -> Result<Tensor> {
    let mut out = Tensor::uninit(O::DTYPE, &a.shape)?;
    let dst = out.slice_mut::<O>();
    let (pa, pb, pc) = (a.buf.as_ptr(), b.buf.as_ptr(), c.buf.as_ptr());
    let mut pos = 0;
    for_each_row(
        &a.shape,
        [&a.strides, &b.strides, &c.strides],
        [a.offset as isize, b.offset as isize, c.offset as isize],
        |[s0, s1, s2], len, [t0, t1, t2]| {
            for i in 0..len as isize {
                // SAFETY: layouts address elements inside their buffers.
                dst[pos] = unsafe {
                    f(
                        read::<A>(pa, s0 + i * t0),
                        read::<B>(pb, s1 + i * t1),
                        read::<C>(pc, s2 + i * t2),
                    )
                }
                .store();
                pos += 1;
            }
        },
    );
    Ok(out)
}

/// A contiguous copy of `x` converted to element type `O` (NumPy `astype` semantics).
pub fn cast<I: Element, O: Element>(x: Tensor) -> Result<Tensor> {
    map1::<I, O>(x, O::from_elem)
}
