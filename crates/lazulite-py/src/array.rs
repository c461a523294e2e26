//! The `array` class's Rust side: [`PyArray`], the Python object holding a lazulite
//! array. Its Python methods are elsewhere ([`array_methods`](crate::array_methods), the
//! `bind!` tables, indexing, DLPack), so every part of the glue can name the class
//! without depending on them.

use lazulite::Array;
use pyo3::prelude::*;
use std::sync::RwLock;

/// An n-dimensional lazy array (`mlx.core.array`).
#[pyclass(name = "array", module = "lazulite.core", frozen, weakref)]
pub struct PyArray {
    /// Behind a lock because in-place operators (`a += 1`) rebind it, as in MLX.
    inner: RwLock<Array>,
}

impl From<Array> for PyArray {
    fn from(a: Array) -> PyArray {
        PyArray {
            inner: RwLock::new(a),
        }
    }
}

impl PyArray {
    /// The wrapped array (a cheap handle).
    pub fn array(&self) -> Array {
        self.inner.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn rebind(&self, a: Array) {
        *self.inner.write().unwrap_or_else(|e| e.into_inner()) = a;
    }
}
