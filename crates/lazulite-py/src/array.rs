//! The `array` class's Rust side: [`PyArray`], the Python object holding a lazulite
//! array. Its Python methods are elsewhere ([`array_methods`](crate::array_methods), the
//! `bind!` tables, indexing, DLPack), so every part of the glue can name the class
//! without depending on them.

use lazulite::{Array, Value};
use pyo3::prelude::*;
use std::sync::{RwLock, RwLockReadGuard};

/// An n-dimensional lazy array (`mlx.core.array`).
#[pyclass(name = "array", module = "lazulite.core", frozen, weakref)]
pub struct PyArray {
    /// Behind a lock because in-place operators (`a += 1`) rebind it, as in MLX.
    inner: RwLock<Held>,
}

/// What an `array` object holds: an array, or the one element of a 0-d result of scalar
/// arithmetic (`x + 1.0` where `x` is a computed 0-d array), which becomes an array the
/// first time one is asked for. A loop of such arithmetic then makes no array at all.
enum Held {
    Array(Array),
    Value(Value),
}

impl From<Array> for PyArray {
    fn from(a: Array) -> PyArray {
        PyArray {
            inner: RwLock::new(Held::Array(a)),
        }
    }
}

impl From<Value> for PyArray {
    fn from(v: Value) -> PyArray {
        PyArray {
            inner: RwLock::new(Held::Value(v)),
        }
    }
}

impl PyArray {
    fn held(&self) -> RwLockReadGuard<'_, Held> {
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The wrapped array (a cheap handle). A held value becomes its array here, once, so
    /// that every later call returns the same array.
    pub fn array(&self) -> Array {
        if let Held::Array(a) = &*self.held() {
            return a.clone();
        }
        let mut held = self.inner.write().unwrap_or_else(|e| e.into_inner());
        let a = match &*held {
            Held::Array(a) => a.clone(),
            Held::Value(v) => v.to_array(),
        };
        *held = Held::Array(a.clone());
        a
    }

    /// The one element, when this is a computed 0-d array nothing tracks (see
    /// [`Array::value`]).
    pub fn value(&self) -> Option<Value> {
        match &*self.held() {
            Held::Array(a) => a.value(),
            Held::Value(v) => Some(*v),
        }
    }

    pub fn rebind(&self, a: Array) {
        self.rebind_held(Held::Array(a));
    }

    /// Rebinds to a held value (an in-place operator's scalar result).
    pub fn rebind_value(&self, v: Value) {
        self.rebind_held(Held::Value(v));
    }

    fn rebind_held(&self, held: Held) {
        *self.inner.write().unwrap_or_else(|e| e.into_inner()) = held;
    }
}
