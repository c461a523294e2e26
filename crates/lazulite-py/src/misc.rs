//! Bindings that do not fit one table line: `arange` (MLX's two overloads), `eval` (any
//! tree of arrays), print options and the module's constants.

use crate::array::PyArray;
use crate::convert::{scalar_of, Dt};
use crate::errors::Res;
use lazulite::{Array, DType, Scalar};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// `arange(stop)`, `arange(start, stop[, step])`, with keywords too; ints give int32,
/// any float gives float32.
#[pyfunction]
#[pyo3(signature = (*args, start = None, stop = None, step = None, dtype = None, stream = None))]
#[allow(unused_variables)]
fn arange(
    args: &Bound<'_, PyTuple>,
    start: Option<Bound<'_, PyAny>>,
    stop: Option<Bound<'_, PyAny>>,
    step: Option<Bound<'_, PyAny>>,
    dtype: Option<Dt>,
    stream: Option<crate::devices::StreamOrDevice>,
) -> Res<PyArray> {
    let mut positional: Vec<Bound<'_, PyAny>> = args.iter().collect();
    if let Some(last) = positional.last() {
        // A dtype given last by position (`arange(5, mx.int8)`); a plain cast test, as a
        // failed extraction would build a message.
        if let Ok(d) = last.cast::<crate::dtype::PyDtype>() {
            let d = Dt(d.get().0);
            if dtype.is_some() {
                return Err(PyTypeError::new_err("arange() got dtype twice").into());
            }
            positional.pop();
            return arange(
                &PyTuple::new(args.py(), positional)?,
                start,
                stop,
                step,
                Some(d),
                None,
            );
        }
    }
    let (start, stop, step) = match (positional.as_slice(), start, stop, step) {
        ([], Some(b), Some(e), s) => (Some(b), e, s),
        ([], None, Some(e), s) => (None, e, s),
        ([e], None, None, s) => (None, e.clone(), s),
        ([b, e], None, None, s) => (Some(b.clone()), e.clone(), s),
        ([b, e, s], None, None, None) => (Some(b.clone()), e.clone(), Some(s.clone())),
        _ => {
            return Err(PyTypeError::new_err(
                "arange() takes (stop), or (start, stop[, step]), and dtype",
            )
            .into())
        }
    };
    let number = |obj: Option<Bound<'_, PyAny>>, default: f64| -> Res<(f64, bool)> {
        let Some(obj) = obj.filter(|o| !o.is_none()) else {
            return Ok((default, false));
        };
        match scalar_of(&obj)? {
            Some(Scalar::Bool(_)) => {
                Err(PyValueError::new_err("bool not supported for arange.").into())
            }
            Some(Scalar::Int(v)) => Ok((v as f64, false)),
            Some(Scalar::Float(v)) => Ok((v, true)),
            _ => Err(PyTypeError::new_err("arange() takes int or float arguments").into()),
        }
    };
    let (b, b_float) = number(start, 0.0)?;
    let (e, e_float) = number(Some(stop), 0.0)?;
    let (s, s_float) = number(step, 1.0)?;
    let natural = if b_float || e_float || s_float {
        DType::Float32
    } else {
        DType::Int32
    };
    let dtype = dtype.map_or(natural, |d| d.0);
    if dtype.is_bool() {
        return Err(PyValueError::new_err("bool not supported for arange.").into());
    }
    Ok(PyArray::from(lazulite::arange(b, e, s, dtype)?))
}

/// Evaluates every array in `args`, which may nest arrays in lists, tuples and dicts;
/// other values are ignored. The GIL is released while computing.
#[pyfunction]
#[pyo3(signature = (*args))]
fn eval(py: Python<'_>, args: &Bound<'_, PyTuple>) -> Res<()> {
    let mut arrays: Vec<Array> = Vec::new();
    crate::trees::leaves(args.as_any(), false, &mut arrays)?;
    crate::dlpack::release_deferred(py);
    py.detach(|| lazulite::eval(&arrays.iter().collect::<Vec<_>>()))?;
    Ok(())
}

/// MLX's `async_eval`: queues the arrays for lazulite's evaluation thread and returns, so
/// Python can record the next step meanwhile; reading them (or `eval`) waits for them.
/// Arrays that depend on the inputs of a running transform are refused, as in MLX.
#[pyfunction]
#[pyo3(signature = (*args))]
fn async_eval(py: Python<'_>, args: &Bound<'_, PyTuple>) -> Res<()> {
    let mut arrays: Vec<Array> = Vec::new();
    crate::trees::leaves(args.as_any(), false, &mut arrays)?;
    crate::dlpack::release_deferred(py);
    py.detach(|| lazulite::async_eval(&arrays.iter().collect::<Vec<_>>()))?;
    Ok(())
}

/// The current print options (only `precision` exists, as in MLX).
#[pyclass(name = "PrintOptions", module = "lazulite.core", frozen)]
struct PrintOptions {
    #[pyo3(get)]
    precision: i32,
}

/// Set how many decimals floats print with.
///
/// Args:
///     precision (int): Number of decimals; -1 prints 6 significant digits. Default: ``-1``.
#[pyfunction]
#[pyo3(signature = (precision = -1))]
fn set_printoptions(precision: i32) {
    lazulite::set_printoptions(precision);
}

/// The current print options.
///
/// Returns:
///     PrintOptions: An object whose ``precision`` is the number of decimals floats print with.
#[pyfunction]
fn get_printoptions() -> PrintOptions {
    PrintOptions {
        precision: lazulite::get_printoptions(),
    }
}

/// `with printoptions(precision=2): ...` sets the precision and restores it on exit.
#[pyclass(name = "_PrintOptionsContext", module = "lazulite.core")]
struct PrintOptionsContext {
    precision: i32,
    saved: Option<i32>,
}

#[pymethods]
impl PrintOptionsContext {
    fn __enter__(mut slf: PyRefMut<'_, Self>) -> PyRefMut<'_, Self> {
        slf.saved = Some(lazulite::get_printoptions());
        lazulite::set_printoptions(slf.precision);
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&mut self, _exc: &Bound<'_, PyTuple>) -> bool {
        if let Some(saved) = self.saved.take() {
            lazulite::set_printoptions(saved);
        }
        false
    }
}

/// A context manager that sets the print options inside a ``with`` block and restores them
/// on exit.
///
/// Args:
///     precision (int): Number of decimals floats print with; -1 prints 6 significant digits.
///         Default: ``-1``.
///
/// Returns:
///     A context manager.
#[pyfunction]
#[pyo3(signature = (precision = -1))]
fn printoptions(precision: i32) -> PrintOptionsContext {
    PrintOptionsContext {
        precision,
        saved: None,
    }
}

/// Adds `arange`, `eval`, the print options and the constants to `module`.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(arange, module)?)?;
    module.add_function(wrap_pyfunction!(eval, module)?)?;
    module.add_function(wrap_pyfunction!(async_eval, module)?)?;
    module.add_function(wrap_pyfunction!(set_printoptions, module)?)?;
    module.add_function(wrap_pyfunction!(get_printoptions, module)?)?;
    module.add_function(wrap_pyfunction!(printoptions, module)?)?;
    module.add_class::<PrintOptions>()?;
    module.add_class::<PrintOptionsContext>()?;
    module.add("pi", std::f64::consts::PI)?;
    module.add("e", std::f64::consts::E)?;
    module.add("inf", f64::INFINITY)?;
    module.add("nan", f64::NAN)?;
    module.add("euler_gamma", 0.577_215_664_901_532_9_f64)?;
    module.add("newaxis", module.py().None())?;
    Ok(())
}
