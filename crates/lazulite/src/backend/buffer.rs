//! A block of bytes that array data lives in, owned by the pool or by someone else
//! (a NumPy array, a memory-mapped file).

use super::memory;
use crate::error::Result;
use std::any::Any;
use std::ptr::NonNull;

enum Owner {
    Pool {
        capacity: usize,
    },
    External {
        _keep_alive: Box<dyn Any + Send + Sync>,
        /// Whether lazulite may write results into it (false for memory another library
        /// shares, such as a DLPack producer's).
        writable: bool,
    },
}

/// Raw bytes with a fixed length. Kernels view it as typed slices.
pub struct Buffer {
    ptr: NonNull<u8>,
    len: usize,
    owner: Owner,
}

// SAFETY: a Buffer is plain memory; shared access is read-only except through `&mut`,
// or through external writers the user asked for (NumPy views), as in MLX.
unsafe impl Send for Buffer {}
unsafe impl Sync for Buffer {}

impl Buffer {
    /// Uninitialised-content block of `len` bytes from the pool (content is whatever the
    /// cache held; every kernel writes all of its output).
    pub fn alloc(len: usize) -> Result<Buffer> {
        let (ptr, capacity) = memory::allocate(len)?;
        Ok(Buffer {
            ptr,
            len,
            owner: Owner::Pool { capacity },
        })
    }

    /// Wraps memory owned by `owner`, which is kept alive as long as the buffer.
    ///
    /// # Safety
    /// `ptr` must be valid for reads (and for writes if the buffer is ever written) of
    /// `len` bytes for as long as `owner` lives, and suitably aligned for the dtype used.
    pub unsafe fn external(
        ptr: NonNull<u8>,
        len: usize,
        owner: Box<dyn Any + Send + Sync>,
    ) -> Buffer {
        Buffer {
            ptr,
            len,
            owner: Owner::External {
                _keep_alive: owner,
                writable: true,
            },
        }
    }

    /// As [`Buffer::external`], for memory lazulite must never write (no in-place
    /// results land in it).
    ///
    /// # Safety
    /// As [`Buffer::external`], for reads only.
    pub unsafe fn external_read_only(
        ptr: NonNull<u8>,
        len: usize,
        owner: Box<dyn Any + Send + Sync>,
    ) -> Buffer {
        Buffer {
            ptr,
            len,
            owner: Owner::External {
                _keep_alive: owner,
                writable: false,
            },
        }
    }

    /// Whether results may be computed in place in this memory.
    pub fn is_writable(&self) -> bool {
        !matches!(
            self.owner,
            Owner::External {
                writable: false,
                ..
            }
        )
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn as_ptr(&self) -> *const u8 {
        self.ptr.as_ptr()
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    pub fn bytes(&self) -> &[u8] {
        // SAFETY: ptr is valid for len bytes while self lives.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self gives exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if let Owner::Pool { capacity } = self.owner {
            memory::release(self.ptr, capacity);
        }
    }
}
