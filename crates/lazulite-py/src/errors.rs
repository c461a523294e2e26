//! Lazulite errors as Python exceptions, mapped once: the exception MLX raises for each
//! kind of mistake.

use lazulite::{Error, ErrorKind};
use pyo3::exceptions::{
    PyFileNotFoundError, PyIndexError, PyMemoryError, PyRuntimeError, PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

/// What a Rust transform sees when a Python callback it called raised; the Python
/// exception itself waits in [`RAISED`] and is what the caller finally gets.
const CALLBACK_RAISED: &str =
    "[callback] A Python function called by a transform raised an exception.";

thread_local! {
    static RAISED: std::cell::RefCell<Option<PyErr>> = const { std::cell::RefCell::new(None) };
}

/// Keeps `e` (raised by a Python callback inside a Rust transform or rule) and returns
/// the error to unwind the Rust side with; [`to_py_err`] gives `e` back as it was.
pub fn stash(e: PyErr) -> Error {
    RAISED.with(|r| *r.borrow_mut() = Some(e));
    Error::value(CALLBACK_RAISED)
}

/// The Python exception for a lazulite error (see `ErrorKind` for the table); for the
/// error of a Python callback, the exception it raised.
pub fn to_py_err(e: Error) -> PyErr {
    if e.message() == CALLBACK_RAISED {
        if let Some(raised) = RAISED.with(|r| r.borrow_mut().take()) {
            return raised;
        }
    }
    let message = e.message().to_string();
    match e.kind() {
        ErrorKind::Value | ErrorKind::NotImplemented => PyValueError::new_err(message),
        ErrorKind::Index => PyIndexError::new_err(message),
        ErrorKind::Type => PyTypeError::new_err(message),
        ErrorKind::NotFound => not_found(message),
        ErrorKind::OutOfMemory => PyMemoryError::new_err(message),
        ErrorKind::Io | ErrorKind::Runtime => PyRuntimeError::new_err(message),
    }
}

/// A missing file: MLX raises RuntimeError, Python code expects FileNotFoundError; the
/// exception is both (a `FileNotFoundError` subclass that is also a `RuntimeError`).
fn not_found(message: String) -> PyErr {
    static CLASS: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    Python::attach(|py| {
        let class = CLASS.get_or_try_init(py, || -> PyResult<Py<PyType>> {
            let bases = PyTuple::new(
                py,
                [
                    py.get_type::<PyFileNotFoundError>(),
                    py.get_type::<PyRuntimeError>(),
                ],
            )?;
            let namespace = PyDict::new(py);
            namespace.set_item("__module__", "lazulite.core")?;
            let class = py
                .get_type::<PyType>()
                .call1(("FileNotFoundError", bases, namespace))?;
            Ok(class.cast_into::<PyType>()?.unbind())
        });
        match class {
            Ok(class) => PyErr::from_type(class.bind(py).clone(), message),
            Err(e) => e,
        }
    })
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
