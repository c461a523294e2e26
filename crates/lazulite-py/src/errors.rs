//! Lazulite errors as Python exceptions, mapped once: the exception MLX raises for each
//! kind of mistake.

use lazulite::{Error, ErrorKind};
use pyo3::exceptions::{
    PyFileNotFoundError, PyIndexError, PyMemoryError, PyRuntimeError, PyTypeError, PyValueError,
};
use pyo3::PyErr;

/// The Python exception for a lazulite error (see `ErrorKind` for the table).
pub fn to_py_err(e: Error) -> PyErr {
    let message = e.message().to_string();
    match e.kind() {
        ErrorKind::Value | ErrorKind::NotImplemented => PyValueError::new_err(message),
        ErrorKind::Index => PyIndexError::new_err(message),
        ErrorKind::Type => PyTypeError::new_err(message),
        ErrorKind::NotFound => PyFileNotFoundError::new_err(message),
        ErrorKind::OutOfMemory => PyMemoryError::new_err(message),
        ErrorKind::Io | ErrorKind::Runtime => PyRuntimeError::new_err(message),
    }
}

/// An error from either side, so that `?` works on lazulite and Python results alike in
/// hand-written bindings.
pub struct Fail(PyErr);

impl From<Error> for Fail {
    fn from(e: Error) -> Fail {
        Fail(to_py_err(e))
    }
}

impl From<PyErr> for Fail {
    fn from(e: PyErr) -> Fail {
        Fail(e)
    }
}

impl From<Fail> for PyErr {
    fn from(f: Fail) -> PyErr {
        f.0
    }
}

/// `Result` of a hand-written binding.
pub type Res<T> = Result<T, Fail>;
