//! The one error type of lazulite.

use std::fmt;

/// What kind of mistake an [`Error`] reports. The Python binding maps each kind to the
/// exception MLX raises for it.
///
/// ```
/// use lazulite::{Array, ErrorKind};
/// let a = Array::from_slice(&[1.0f32, 2.0], &[2])?;
/// assert_eq!(a.reshape(&[3]).unwrap_err().kind(), ErrorKind::Value);
/// assert_eq!(lazulite::sum(&a, 1, false).unwrap_err().kind(), ErrorKind::Axis);
/// # Ok::<(), lazulite::Error>(())
/// ```
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
    ///
    /// ```
    /// use lazulite::{Error, ErrorKind};
    /// let e = Error::new(ErrorKind::Index, "[take] Index 5 is out of bounds for axis 0 with size 3.");
    /// assert_eq!(e.kind(), ErrorKind::Index);
    /// ```
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
        }
    }
    /// A `ValueError`: a wrong shape, dtype or argument value.
    ///
    /// ```
    /// let e = lazulite::Error::value("[my_op] Expected a 2-d array.");
    /// assert_eq!(e.kind(), lazulite::ErrorKind::Value);
    /// ```
    pub fn value(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Value, message)
    }
    /// An `IndexError`: an index out of bounds or too many indices.
    ///
    /// ```
    /// let e = lazulite::Error::index("[my_op] Index 3 is out of bounds.");
    /// assert_eq!(e.kind(), lazulite::ErrorKind::Index);
    /// ```
    pub fn index(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Index, message)
    }
    /// An axis out of range for an array: both a `ValueError` and an `IndexError` in Python.
    ///
    /// ```
    /// let e = lazulite::Error::axis("[my_op] Axis 2 is out of bounds for array with 2 dimensions.");
    /// assert_eq!(e.kind(), lazulite::ErrorKind::Axis);
    /// ```
    pub fn axis(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Axis, message)
    }
    /// A `TypeError`: an argument of the wrong type.
    ///
    /// ```
    /// let e = lazulite::Error::type_error("[my_op] Expected an integer array.");
    /// assert_eq!(e.kind(), lazulite::ErrorKind::Type);
    /// ```
    pub fn type_error(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Type, message)
    }
    /// A failure found while evaluating that fits no other kind (Python: `RuntimeError`).
    ///
    /// ```
    /// let e = lazulite::Error::runtime("[my_op] The kernel failed.");
    /// assert_eq!(e.kind(), lazulite::ErrorKind::Runtime);
    /// ```
    pub fn runtime(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Runtime, message)
    }
    /// A transform rule or feature that does not exist for an operation.
    ///
    /// ```
    /// let e = lazulite::Error::not_implemented("[my_op] No vmap rule.");
    /// assert_eq!(e.kind(), lazulite::ErrorKind::NotImplemented);
    /// ```
    pub fn not_implemented(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::NotImplemented, message)
    }
    /// What kind of error this is (the exception type Python raises for it).
    ///
    /// ```
    /// use lazulite::{Array, ErrorKind};
    /// let err = Array::scalar(1.0f32).reshape(&[2]).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::Value);
    /// ```
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
    /// The message, which names the operation and the values involved.
    ///
    /// ```
    /// let err = lazulite::Array::scalar(1.0f32).reshape(&[2]).unwrap_err();
    /// assert!(err.message().starts_with("[reshape]"));
    /// assert_eq!(err.to_string(), err.message()); // Display prints the message
    /// ```
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
///
/// ```
/// fn double(a: &lazulite::Array) -> lazulite::Result<lazulite::Array> {
///     lazulite::multiply(a, 2)
/// }
/// assert_eq!(double(&lazulite::Array::scalar(4i32))?.item::<i32>()?, 8);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub type Result<T, E = Error> = std::result::Result<T, E>;
