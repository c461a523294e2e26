//! Raw access to array memory for zero-copy exchange with other libraries (the Python
//! buffer protocol, NumPy): arrays from bytes, and the evaluated bytes of an array.

use crate::array::Array;
use crate::backend::cpu::copy::contiguous;
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::error::{Error, Result};

/// The evaluated memory of an array: where its first element is and how to step through
/// it. Holding a `RawData` keeps the memory alive (even if every [`Array`] using it is
/// dropped) and stops the engine from reusing it for in-place results.
///
/// The memory may be shared with other arrays (views). Writing through [`RawData::ptr`]
/// changes what those arrays read, as with MLX's NumPy views; it never changes an array's
/// shape or dtype.
///
/// ```
/// use lazulite::Array;
/// let a = Array::from_slice(&[1i32, 2, 3, 4, 5, 6], &[2, 3]).unwrap();
/// let raw = a.t().unwrap().raw_data().unwrap();          // a transposed view, no copy
/// assert_eq!(raw.shape(), &[3, 2]);
/// assert_eq!(raw.byte_strides(), &[4, 12]);
/// // SAFETY: element (1, 0) of the view lies inside the buffer.
/// let v = unsafe { *(raw.ptr().offset(raw.byte_strides()[0]) as *const i32) };
/// assert_eq!(v, 2);
/// ```
pub struct RawData {
    tensor: Tensor,
    byte_strides: Vec<isize>,
}

impl RawData {
    fn new(tensor: Tensor) -> RawData {
        let size = tensor.dtype.size() as isize;
        let byte_strides = tensor.strides.iter().map(|&s| s * size).collect();
        RawData {
            tensor,
            byte_strides,
        }
    }

    /// Address of the first element (dangling but aligned for an empty array). Elements
    /// are stored as MLX stores them: bool as one byte (0 or 1), complex64 as two f32.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[7u16, 8], &[2])?;
    /// let raw = a.raw_data()?;
    /// // SAFETY: the data holds two uint16 elements, contiguous from `ptr`.
    /// let second = unsafe { *(raw.ptr() as *const u16).add(1) };
    /// assert_eq!(second, 8);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn ptr(&self) -> *mut u8 {
        let offset = self.tensor.offset * self.tensor.dtype.size();
        // Shared memory is written only by external writers the user asked for, as in MLX.
        self.tensor.buf.as_ptr().wrapping_add(offset) as *mut u8
    }

    /// The element type of the data.
    ///
    /// ```
    /// use lazulite::{Array, DType};
    /// assert_eq!(Array::scalar(true).raw_data()?.dtype(), DType::Bool);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn dtype(&self) -> DType {
        self.tensor.dtype
    }

    /// The shape of the data.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1i32, 2, 3, 4, 5, 6], &[2, 3])?;
    /// assert_eq!(a.raw_data()?.shape(), &[2, 3]);
    /// assert_eq!(a.t()?.raw_data()?.shape(), &[3, 2]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn shape(&self) -> &[usize] {
        &self.tensor.shape
    }

    /// Bytes from one element to the next along each axis; may be zero (broadcast) or
    /// negative (reversed slices).
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1i32, 2, 3, 4, 5, 6], &[2, 3])?;
    /// assert_eq!(a.raw_data()?.byte_strides(), &[12, 4]);
    /// assert_eq!(a.t()?.raw_data()?.byte_strides(), &[4, 12]); // a view: strides swapped
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn byte_strides(&self) -> &[isize] {
        &self.byte_strides
    }

    /// Whether the elements sit in row-major order with no gaps.
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1i32, 2, 3, 4], &[2, 2])?;
    /// assert!(a.raw_data()?.is_contiguous());
    /// assert!(!a.t()?.raw_data()?.is_contiguous());
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn is_contiguous(&self) -> bool {
        self.tensor.is_contiguous()
    }
}

impl Array {
    /// Evaluates the array and returns its memory as laid out now (views keep their
    /// strides: no copy is made).
    ///
    /// ```
    /// let a = lazulite::Array::from_slice(&[1.0f32, 2.0], &[2])?;
    /// let raw = lazulite::exp(&a)?.raw_data()?; // evaluates
    /// assert_eq!((raw.shape(), raw.byte_strides()), (&[2][..], &[4][..]));
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn raw_data(&self) -> Result<RawData> {
        Ok(RawData::new(self.tensor()?))
    }

    /// Evaluates the array and returns its memory in row-major order with no gaps: the
    /// array's own memory when it is laid out so, otherwise a copy.
    ///
    /// ```
    /// use lazulite::Array;
    /// let a = Array::from_slice(&[1i32, 2, 3, 4], &[2, 2]).unwrap().t().unwrap();
    /// let raw = a.raw_data_contiguous().unwrap();
    /// assert!(raw.is_contiguous());
    /// assert_eq!(raw.byte_strides(), &[8, 4]);
    /// ```
    pub fn raw_data_contiguous(&self) -> Result<RawData> {
        Ok(RawData::new(contiguous(self.tensor()?)?))
    }

    /// An array holding a copy of `bytes`: elements of `dtype` in row-major order, stored
    /// as [`RawData::ptr`] describes (bool: any nonzero byte is true).
    ///
    /// ```
    /// use lazulite::{Array, DType};
    /// let bytes: Vec<u8> = [1.5f32, -2.0].iter().flat_map(|v| v.to_ne_bytes()).collect();
    /// let a = Array::from_bytes(&bytes, &[2], DType::Float32).unwrap();
    /// assert_eq!(a.to_vec::<f32>().unwrap(), vec![1.5, -2.0]);
    /// assert!(Array::from_bytes(&bytes, &[3], DType::Float32).is_err());
    /// ```
    pub fn from_bytes(bytes: &[u8], shape: &[usize], dtype: DType) -> Result<Array> {
        let size = crate::shape::checked_size(shape)?;
        if size * dtype.size() != bytes.len() {
            return Err(Error::value(format!(
                "[array] {} bytes cannot hold an array of shape {shape:?} and dtype {dtype}.",
                bytes.len()
            )));
        }
        let mut t = Tensor::uninit(dtype, shape)?;
        if !bytes.is_empty() {
            let buf = std::sync::Arc::get_mut(&mut t.buf).expect("a new buffer is not shared");
            buf.bytes_mut()[..bytes.len()].copy_from_slice(bytes);
        }
        Ok(Array::from_tensor(t))
    }

    /// An array over memory owned by another library, without copying (DLPack imports):
    /// element `(i_0, i_1, ...)` is `sum(i_k * strides[k])` elements after `ptr` (strides
    /// may be zero or negative). The memory is kept alive by `owner` until the
    /// last array using it is gone, and is never written by lazulite.
    ///
    /// # Safety
    /// Every element the shape and strides reach from `ptr` must be readable, aligned for
    /// `dtype`, and stay unchanged while `owner` lives (valid bools are 0 or 1).
    ///
    /// ```
    /// use lazulite::{Array, DType};
    /// let data: Box<[f32]> = vec![1.0, 2.0, 3.0, 4.0].into_boxed_slice();
    /// let ptr = std::ptr::NonNull::new(data.as_ptr() as *mut u8).unwrap();
    /// // SAFETY: the 4 floats live in `data`, which the array keeps alive.
    /// let a = unsafe { Array::from_external(ptr, &[2, 2], &[1, 2], DType::Float32, Box::new(data)) }.unwrap();
    /// assert_eq!(a.to_vec::<f32>().unwrap(), vec![1.0, 3.0, 2.0, 4.0]);
    /// ```
    pub unsafe fn from_external(
        ptr: std::ptr::NonNull<u8>,
        shape: &[usize],
        strides: &[isize],
        dtype: DType,
        owner: Box<dyn std::any::Any + Send + Sync>,
    ) -> Result<Array> {
        let size = crate::shape::checked_size(shape)?;
        if strides.len() != shape.len() {
            return Err(Error::value(format!(
                "[array] {} strides for a shape of {} dimensions.",
                strides.len(),
                shape.len()
            )));
        }
        if size == 0 {
            return Array::from_bytes(&[], shape, dtype);
        }
        let (mut low, mut high) = (0isize, 0isize);
        for (&d, &s) in shape.iter().zip(strides) {
            let reach = s
                .checked_mul(d as isize - 1)
                .ok_or_else(|| Error::value("[array] strides too large."))?;
            if reach < 0 {
                low += reach;
            } else {
                high += reach;
            }
        }
        let item = dtype.size() as isize;
        let len = ((high - low + 1) * item) as usize;
        // SAFETY: the caller guarantees the reachable elements are readable; `low` is the
        // lowest of them.
        let base = unsafe { ptr.as_ptr().offset(low * item) };
        let base = std::ptr::NonNull::new(base).expect("inside the caller's memory");
        // SAFETY: as above; lazulite never writes a read-only buffer.
        let buf = unsafe { crate::backend::buffer::Buffer::external_read_only(base, len, owner) };
        Ok(Array::from_tensor(Tensor {
            buf: std::sync::Arc::new(buf),
            dtype,
            shape: shape.to_vec(),
            strides: strides.to_vec(),
            offset: (-low) as usize,
        }))
    }
}

/// Bytes of the distinct buffers behind `arrays` (MLX's `get_array_buffer_size`): a buffer
/// several arrays view is counted once, whole. Every array must already be evaluated, so
/// that asking does not compute anything.
///
/// ```
/// use lazulite::{get_array_buffer_size, Array};
/// let a = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
/// let view = a.reshape(&[2, 2]).unwrap();
/// view.eval().unwrap();
/// assert_eq!(get_array_buffer_size(&[&a, &view]).unwrap(), 16);
/// ```
pub fn get_array_buffer_size(arrays: &[&Array]) -> Result<usize> {
    let mut seen = std::collections::HashSet::new();
    let mut bytes = 0;
    for a in arrays {
        if !a.is_evaluated() {
            return Err(Error::value(
                "[get_array_buffer_size] Arrays must be evaluated before querying buffer size.",
            ));
        }
        let tensor = a.tensor()?;
        if seen.insert(std::sync::Arc::as_ptr(&tensor.buf)) {
            bytes += tensor.buf.len();
        }
    }
    Ok(bytes)
}
