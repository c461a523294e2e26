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
        ErrorKind::Axis => axis_error(message),
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
        let class = CLASS.get_or_try_init(py, || {
            two_base_class(
                py,
                "FileNotFoundError",
                &py.get_type::<PyFileNotFoundError>(),
                &py.get_type::<PyRuntimeError>(),
                None,
            )
        });
        match class {
            Ok(class) => PyErr::from_type(class.bind(py).clone(), message),
            Err(e) => e,
        }
    })
}

const AXIS_ERROR_DOC: &str = "An axis outside an array's dimensions.\n\n\
A subclass of both ``ValueError`` and ``IndexError`` (as NumPy's ``AxisError``): MLX raises\n\
one or the other depending on the operation, and code written for either catches this.";

/// `lazulite.core.AxisError`, the exception of every axis out of range: a subclass of
/// both `ValueError` and `IndexError`, since MLX raises one or the other depending on
/// the operation.
pub fn axis_error_class(py: Python<'_>) -> PyResult<&Py<PyType>> {
    static CLASS: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    CLASS.get_or_try_init(py, || {
        two_base_class(
            py,
            "AxisError",
            &py.get_type::<PyValueError>(),
            &py.get_type::<PyIndexError>(),
            Some(AXIS_ERROR_DOC),
        )
    })
}

/// An axis error with `message`, for checks made in the binding itself.
pub fn axis_error(message: String) -> PyErr {
    Python::attach(|py| match axis_error_class(py) {
        Ok(class) => PyErr::from_type(class.bind(py).clone(), message),
        Err(e) => e,
    })
}

/// A new exception class `lazulite.core.<name>` deriving from both `first` and `second`.
fn two_base_class(
    py: Python<'_>,
    name: &str,
    first: &Bound<'_, PyType>,
    second: &Bound<'_, PyType>,
    doc: Option<&str>,
) -> PyResult<Py<PyType>> {
    let bases = PyTuple::new(py, [first, second])?;
    let namespace = PyDict::new(py);
    namespace.set_item("__module__", "lazulite.core")?;
    if let Some(doc) = doc {
        namespace.set_item("__doc__", doc)?;
    }
    let class = py.get_type::<PyType>().call1((name, bases, namespace))?;
    Ok(class.cast_into::<PyType>()?.unbind())
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
