//! [`Tensor`]: what kernels see — a buffer, a dtype and a strided layout. No graph here.

use super::buffer::Buffer;
use crate::dtype::DType;
use crate::element::Element;
use crate::error::{Error, Result};
use std::sync::Arc;

/// Whether `strides` lay `shape` out in row-major order with no gaps (axes of length 1
/// may have any stride).
pub(crate) fn is_row_major(shape: &[usize], strides: &[isize]) -> bool {
    let mut expected = 1isize;
    for (&d, &s) in shape.iter().zip(strides).rev() {
        if d != 1 && s != expected {
            return false;
        }
        expected = expected.wrapping_mul(d as isize);
    }
    true
}

/// Row-major strides (in elements) of a contiguous array of `shape`.
pub fn contiguous_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![0isize; shape.len()];
    let mut acc = 1isize;
    for (s, &d) in strides.iter_mut().zip(shape).rev() {
        *s = acc;
        acc = acc.wrapping_mul(d.max(1) as isize);
    }
    strides
}

/// Evaluated array data: a shared buffer seen through shape, strides and offset
/// (both in elements). Several tensors may share one buffer (views).
#[derive(Clone)]
pub struct Tensor {
    pub buf: Arc<Buffer>,
    pub dtype: DType,
    pub shape: Vec<usize>,
    pub strides: Vec<isize>,
    pub offset: usize,
}

impl Tensor {
    /// A contiguous tensor over a new buffer whose content the caller must fill.
    pub fn uninit(dtype: DType, shape: &[usize]) -> Result<Tensor> {
        let n = shape.iter().product::<usize>();
        let bytes = n
            .checked_mul(dtype.size())
            .ok_or_else(|| Error::value(format!("[alloc] Shape {shape:?} is too large.")))?;
        Ok(Tensor {
            buf: Arc::new(Buffer::alloc(bytes)?),
            dtype,
            shape: shape.to_vec(),
            strides: contiguous_strides(shape),
            offset: 0,
        })
    }

    /// A contiguous tensor holding `data`.
    pub fn from_slice<T: Element>(data: &[T], shape: &[usize]) -> Result<Tensor> {
        let mut t = Tensor::uninit(T::DTYPE, shape)?;
        for (o, &v) in t.slice_mut::<T>().iter_mut().zip(data) {
            *o = v.store();
        }
        Ok(t)
    }

    pub fn size(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// Whether the elements sit in row-major order with no gaps (always, when there are
    /// no elements).
    pub fn is_contiguous(&self) -> bool {
        // An empty tensor has no elements out of order (its strides are arbitrary).
        self.shape.contains(&0) || is_row_major(&self.shape, &self.strides)
    }

    /// The elements of a contiguous tensor. Panics if not contiguous (an engine bug).
    pub fn slice<T: Element>(&self) -> &[T::Storage] {
        assert!(self.is_contiguous() && T::DTYPE.size() == self.dtype.size());
        let n = self.size();
        if n == 0 {
            return &[];
        }
        let bytes = &self.buf.bytes()[self.offset * self.dtype.size()..][..n * self.dtype.size()];
        bytemuck::cast_slice(bytes)
    }

    /// Mutable elements of a contiguous tensor whose buffer nobody else holds.
    /// Panics if shared or not contiguous (an engine bug).
    pub fn slice_mut<T: Element>(&mut self) -> &mut [T::Storage] {
        assert!(self.is_contiguous() && T::DTYPE.size() == self.dtype.size());
        let n = self.size();
        let (offset, size) = (self.offset, self.dtype.size());
        let buf = Arc::get_mut(&mut self.buf).expect("writing to a shared buffer");
        if n == 0 {
            return &mut [];
        }
        bytemuck::cast_slice_mut(&mut buf.bytes_mut()[offset * size..][..n * size])
    }

    /// Pointer to the first element of a contiguous tensor whose buffer nobody else holds,
    /// for kernels that write while reading other views of the same memory.
    /// Panics if shared or not contiguous (an engine bug).
    pub fn data_ptr_mut<T: Element>(&mut self) -> *mut T::Storage {
        assert!(self.is_contiguous() && T::DTYPE.size() == self.dtype.size());
        let offset = self.offset;
        let buf = Arc::get_mut(&mut self.buf).expect("writing to a shared buffer");
        // SAFETY: offset is within the buffer for a non-empty tensor; for an empty one the
        // pointer is never dereferenced.
        unsafe { (buf.as_mut_ptr() as *mut T::Storage).add(offset) }
    }

    /// Whether this tensor's buffer can be written in place to produce an output of the
    /// same number of elements of `dtype`: nobody else holds it and it is contiguous.
    pub fn is_donatable(&self, dtype: DType) -> bool {
        Arc::strong_count(&self.buf) == 1
            && self.buf.is_writable()
            && self.dtype.size() == dtype.size()
            && self.is_contiguous()
            && self.offset == 0
            && self.buf.len() == self.size() * self.dtype.size()
    }

    /// Reads element at flat row-major position `i` (any layout). For tests and printing.
    pub fn get<T: Element>(&self, i: usize) -> T {
        let mut rem = i;
        let mut off = self.offset as isize;
        for (&d, &s) in self.shape.iter().zip(&self.strides).rev() {
            off += (rem % d) as isize * s;
            rem /= d;
        }
        let size = self.dtype.size();
        let bytes = &self.buf.bytes()[off as usize * size..][..size];
        T::load(bytemuck::pod_read_unaligned(bytes))
    }
}
