//! The one error type of lazulite.

use std::fmt;

/// What kind of mistake an [`Error`] reports. The Python binding maps each kind to the
/// exception MLX raises for it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// A bad value: shapes that do not broadcast, repeated axes, a bad size.
    /// Python: `ValueError`.
    Value,
    /// An index out of bounds. Python: `IndexError`.
    Index,
    /// An axis outside the array's dimensions (or any axis for an array that has none).
    /// Python: `lazulite.core.AxisError`, a subclass of both `ValueError` and
    /// `IndexError` (NumPy's design), since MLX raises one or the other depending on the
    /// operation.
    Axis,
    /// An argument of the wrong type or dtype. Python: `TypeError`.
    Type,
    /// A file that does not exist. Python: `FileNotFoundError`.
    NotFound,
    /// Other I/O failures and malformed files. Python: `RuntimeError` / `OSError`.
    Io,
    /// An allocation that could not be made. Python: `MemoryError`.
    OutOfMemory,
    /// A transform rule or feature that does not exist for this operation.
    /// Python: `ValueError` (as MLX's "Primitive's vmap not implemented.").
    NotImplemented,
    /// Anything else found while evaluating. Python: `RuntimeError`.
    Runtime,
}

/// An error from any lazulite operation: a kind and a message naming the operation and
/// the offending values.
///
/// ```
/// use lazulite::{Array, ErrorKind};
/// let a = Array::zeros(&[2, 3], lazulite::DType::Float32).unwrap();
/// let err = a.reshape(&[4]).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::Value);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

/// An empty vector with room for `len` items, or an `OutOfMemory` error when the room
/// cannot be had: for lists whose length comes from a user's number.
pub(crate) fn vec_with_room<T>(len: usize, what: &str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| {
        Error::new(
            ErrorKind::OutOfMemory,
            format!("[{what}] Unable to allocate room for {len} items."),
        )
    })?;
    Ok(v)
}

impl Error {
    /// An error of the given kind with its message.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
        }
    }
    /// A `ValueError`: a wrong shape, dtype or argument value.
    pub fn value(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Value, message)
    }
    /// An `IndexError`: an index out of bounds or too many indices.
    pub fn index(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Index, message)
    }
    /// An axis out of range for an array: both a `ValueError` and an `IndexError` in Python.
    pub fn axis(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Axis, message)
    }
    /// A `TypeError`: an argument of the wrong type.
    pub fn type_error(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Type, message)
    }
    /// A failure found while evaluating that fits no other kind (Python: `RuntimeError`).
    pub fn runtime(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Runtime, message)
    }
    /// A transform rule or feature that does not exist for an operation.
    pub fn not_implemented(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::NotImplemented, message)
    }
    /// What kind of error this is (the exception type Python raises for it).
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
    /// The message, which names the operation and the values involved.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        let kind = if e.kind() == std::io::ErrorKind::NotFound {
            ErrorKind::NotFound
        } else {
            ErrorKind::Io
        };
        Error::new(kind, e.to_string())
    }
}

/// `Result` with lazulite's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
