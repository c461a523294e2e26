//! `Dtype` objects (`mx.float32`, ...), dtype categories (`mx.floating`, ...) with
//! `issubdtype` over their hierarchy, and `finfo`, `iinfo`. The functions that read arrays
//! or scalars (`result_type`, `can_cast`, `isdtype`) are in `utilities.rs`, so that
//! arguments and arrays can name `Dtype` while this file needs neither.

use crate::signature::Hint;
use lazulite::{Category, DType};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// An element type: `mx.float32`, `mx.bool_`, ... Prints as MLX does (`mlx.core.float32`).
#[pyclass(
    name = "Dtype",
    module = "lazulite.core",
    frozen,
    eq,
    hash,
    from_py_object
)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PyDtype(pub DType);

#[pymethods]
impl PyDtype {
    /// Bytes per element.
    #[getter]
    fn size(&self) -> usize {
        self.0.size()
    }

    fn __repr__(&self) -> String {
        format!("mlx.core.{}", self.0.name())
    }
}

impl Hint for PyDtype {
    fn hint() -> String {
        "Dtype".into()
    }
}

/// An abstract kind of dtype, for `issubdtype`.
#[pyclass(
    name = "DtypeCategory",
    module = "lazulite.core",
    frozen,
    eq,
    hash,
    from_py_object
)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[allow(non_camel_case_types)]
pub enum PyCategory {
    complexfloating,
    floating,
    inexact,
    signedinteger,
    unsignedinteger,
    integer,
    number,
    generic,
}

impl PyCategory {
    pub const ALL: [PyCategory; 8] = [
        PyCategory::complexfloating,
        PyCategory::floating,
        PyCategory::inexact,
        PyCategory::signedinteger,
        PyCategory::unsignedinteger,
        PyCategory::integer,
        PyCategory::number,
        PyCategory::generic,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PyCategory::complexfloating => "complexfloating",
            PyCategory::floating => "floating",
            PyCategory::inexact => "inexact",
            PyCategory::signedinteger => "signedinteger",
            PyCategory::unsignedinteger => "unsignedinteger",
            PyCategory::integer => "integer",
            PyCategory::number => "number",
            PyCategory::generic => "generic",
        }
    }

    fn category(self) -> Category {
        match self {
            PyCategory::complexfloating => Category::ComplexFloating,
            PyCategory::floating => Category::Floating,
            PyCategory::inexact => Category::Inexact,
            PyCategory::signedinteger => Category::SignedInteger,
            PyCategory::unsignedinteger => Category::UnsignedInteger,
            PyCategory::integer => Category::Integer,
            PyCategory::number => Category::Number,
            PyCategory::generic => Category::Generic,
        }
    }

    /// The category directly above this one (NumPy's hierarchy).
    fn parent(self) -> Option<PyCategory> {
        use PyCategory::*;
        match self {
            complexfloating | floating => Some(inexact),
            signedinteger | unsignedinteger => Some(integer),
            inexact | integer => Some(number),
            number => Some(generic),
            generic => None,
        }
    }
}

/// A dtype or a category, as `issubdtype` takes.
#[derive(FromPyObject)]
pub enum DtypeOrCategory {
    Dtype(PyDtype),
    Category(PyCategory),
}

/// Whether `arg1` is `arg2` or lies below it in the hierarchy of categories.
#[pyfunction]
pub fn issubdtype(arg1: DtypeOrCategory, arg2: DtypeOrCategory) -> bool {
    use DtypeOrCategory::*;
    match (arg1, arg2) {
        (Dtype(a), Dtype(b)) => a == b,
        (Dtype(a), Category(c)) => a.0.is_in(c.category()),
        (Category(_), Dtype(_)) => false,
        (Category(a), Category(b)) => {
            std::iter::successors(Some(a), |c| c.parent()).any(|c| c == b)
        }
    }
}

/// Machine limits of a floating dtype: `min`, `max`, `eps`, `smallest_normal`, `bits`,
/// `dtype`.
#[pyclass(name = "finfo", module = "lazulite.core", frozen)]
pub struct PyFInfo {
    #[pyo3(get)]
    min: f64,
    #[pyo3(get)]
    max: f64,
    #[pyo3(get)]
    eps: f64,
    #[pyo3(get)]
    smallest_normal: f64,
    #[pyo3(get)]
    bits: usize,
    #[pyo3(get)]
    dtype: PyDtype,
}

#[pymethods]
impl PyFInfo {
    #[new]
    fn new(dtype: PyDtype) -> PyResult<PyFInfo> {
        let info = lazulite::finfo(dtype.0).ok_or_else(|| {
            PyValueError::new_err(format!("[finfo] dtype {} is not inexact.", dtype.0))
        })?;
        Ok(PyFInfo {
            min: info.min,
            max: info.max,
            eps: info.eps,
            smallest_normal: info.smallest_normal,
            bits: 8 * info.dtype.size(),
            dtype: PyDtype(info.dtype),
        })
    }

    fn __repr__(&self) -> String {
        let fmt = |v: f64| lazulite::Array::scalar(v).to_string();
        let number = |v: f64| {
            let s = fmt(v);
            s["array(".len()..s.len() - ", dtype=float64)".len()].to_string()
        };
        format!(
            "finfo(min={}, max={}, dtype={})",
            number(self.min),
            number(self.max),
            self.dtype.0
        )
    }
}

/// Limits of an integer dtype: `min`, `max`, `dtype`.
#[pyclass(name = "iinfo", module = "lazulite.core", frozen)]
pub struct PyIInfo {
    #[pyo3(get)]
    min: i128,
    #[pyo3(get)]
    max: i128,
    #[pyo3(get)]
    dtype: PyDtype,
}

#[pymethods]
impl PyIInfo {
    #[new]
    fn new(dtype: PyDtype) -> PyResult<PyIInfo> {
        let info = lazulite::iinfo(dtype.0).ok_or_else(|| {
            PyValueError::new_err(format!(
                "[iinfo] Only integer types supported but {} was provided",
                dtype.0
            ))
        })?;
        Ok(PyIInfo {
            min: info.min,
            max: info.max,
            dtype: PyDtype(info.dtype),
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "iinfo(min={}, max={}, dtype={})",
            self.min, self.max, self.dtype.0
        )
    }
}

/// Adds the dtype objects, categories and dtype functions to `module`.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<PyDtype>()?;
    module.add_class::<PyCategory>()?;
    module.add_class::<PyFInfo>()?;
    module.add_class::<PyIInfo>()?;
    for dtype in DType::ALL {
        let name = if dtype == DType::Bool {
            "bool_"
        } else {
            dtype.name()
        };
        module.add(name, PyDtype(dtype))?;
    }
    for category in PyCategory::ALL {
        module.add(category.name(), category)?;
    }
    module.add_function(wrap_pyfunction!(issubdtype, module)?)?;
    Ok(())
}
