//! `export_function`, `import_function` and `exporter` as MLX's: functions traced to
//! MLX's `.mlxfn` files and read back (see `lazulite::export`).

use crate::array::PyArray;
use crate::dtype::PyDtype;
use crate::errors::{stash, to_py_err, Res};
use lazulite::export::{self as ex, ExportEvent, Kwargs, MlxState, TracedArray};
use lazulite::Array;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use std::path::PathBuf;
use std::sync::Mutex;

fn bad_inputs(prefix: &str) -> PyErr {
    PyValueError::new_err(format!(
        "{prefix} Inputs can either be a variable number of positional and keyword arrays \
         or a single tuple and/or dictionary of arrays."
    ))
}

fn array_seq(obj: &Bound<'_, PyAny>) -> Option<Vec<Array>> {
    if !(obj.is_instance_of::<PyTuple>() || obj.is_instance_of::<PyList>()) {
        return None;
    }
    obj.try_iter()
        .ok()?
        .map(|x| x.ok()?.cast::<PyArray>().ok().map(|a| a.get().array()))
        .collect()
}

fn array_dict(obj: &Bound<'_, PyAny>) -> Option<Kwargs> {
    let dict = obj.cast::<PyDict>().ok()?;
    dict.iter()
        .map(|(k, v)| {
            Some((
                k.extract::<String>().ok()?,
                v.cast::<PyArray>().ok()?.get().array(),
            ))
        })
        .collect()
}

/// MLX's accepted call forms: arrays as `*args` and `**kwargs`, or one tuple/list of
/// arrays and/or one dict of arrays.
fn inputs(
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
    prefix: &str,
) -> PyResult<(Vec<Array>, Kwargs)> {
    let empty = PyDict::new(args.py());
    let kwargs = kwargs.unwrap_or(&empty);
    let fail = || bad_inputs(prefix);
    if args.is_empty() {
        return Ok((vec![], array_dict(kwargs.as_any()).ok_or_else(fail)?));
    }
    let first = args.get_item(0)?;
    if first.cast::<PyArray>().is_ok() {
        let positional = array_seq(args.as_any()).ok_or_else(fail)?;
        return Ok((positional, array_dict(kwargs.as_any()).ok_or_else(fail)?));
    }
    if !kwargs.is_empty() {
        return Err(fail());
    }
    match args.len() {
        1 => match array_seq(&first) {
            Some(positional) => Ok((positional, Kwargs::new())),
            None => Ok((vec![], array_dict(&first).ok_or_else(fail)?)),
        },
        2 => Ok((
            array_seq(&first).ok_or_else(fail)?,
            array_dict(&args.get_item(1)?).ok_or_else(fail)?,
        )),
        _ => Err(fail()),
    }
}

/// `fun` as a function of arrays: called with `*args, **kwargs`, returning one array or
/// a tuple or list of them.
fn wrap(
    fun: Py<PyAny>,
) -> impl Fn(&[Array], &Kwargs) -> lazulite::Result<Vec<Array>> + Send + Sync {
    move |args: &[Array], kwargs: &Kwargs| {
        Python::attach(|py| {
            let call = || -> PyResult<Vec<Array>> {
                let args = PyTuple::new(py, args.iter().map(|a| PyArray::from(a.clone())))?;
                let kw = PyDict::new(py);
                for (k, v) in kwargs {
                    kw.set_item(k, PyArray::from(v.clone()))?;
                }
                let out = fun.bind(py).call(args, Some(&kw))?;
                if let Ok(a) = out.cast::<PyArray>() {
                    return Ok(vec![a.get().array()]);
                }
                array_seq(&out).ok_or_else(|| {
                    PyValueError::new_err(
                        "[export_function] Outputs can be either a single array, a tuple, or \
                         a list of arrays.",
                    )
                })
            };
            call().map_err(stash)
        })
    }
}

fn is_path(file: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(file.is_instance_of::<PyString>() || file.hasattr("__fspath__")?)
}

/// `(name, shape, dtype)`, as MLX describes an array of a trace.
fn traced<'py>(py: Python<'py>, a: TracedArray) -> PyResult<Bound<'py, PyTuple>> {
    let shape = PyTuple::new(py, a.shape)?;
    (a.name, shape, PyDtype(a.dtype)).into_pyobject(py)
}

fn traced_list<'py>(py: Python<'py>, arrays: Vec<TracedArray>) -> PyResult<Bound<'py, PyList>> {
    let items = arrays
        .into_iter()
        .map(|a| traced(py, a))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

/// A state field as MLX's Python conversion gives it: a `Shape` or `Strides` as a tuple,
/// a `std::vector` as a list.
fn state_field<'py>(py: Python<'py>, field: MlxState) -> PyResult<Bound<'py, PyAny>> {
    Ok(match field {
        MlxState::Int(v) => v.into_pyobject(py)?.into_any(),
        MlxState::Bool(v) => v.into_pyobject(py)?.to_owned().into_any(),
        MlxState::Float(v) => v.into_pyobject(py)?.into_any(),
        MlxState::Double(v) => v.into_pyobject(py)?.into_any(),
        MlxState::Ints(v) => PyList::new(py, v)?.into_any(),
        MlxState::Shape(v) => PyTuple::new(py, v)?.into_any(),
        MlxState::Dtype(d) => PyDtype(d).into_pyobject(py)?.into_any(),
        MlxState::Int64s(v) => PyTuple::new(py, v)?.into_any(),
        MlxState::Size(v) => v.into_pyobject(py)?.into_any(),
        MlxState::Sizes(v) => PyList::new(py, v)?.into_any(),
        MlxState::Str(v) => PyString::new(py, &v).into_any(),
        other => {
            return Err(PyRuntimeError::new_err(format!(
                "[export_function] No Python form for the state field {other:?}."
            )))
        }
    })
}

/// The dict MLX hands an export callback for `event`, with its keys in MLX's order.
fn event_dict(py: Python<'_>, event: ExportEvent) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    let kind = match event {
        ExportEvent::Inputs(arrays) => {
            d.set_item("inputs", traced_list(py, arrays)?)?;
            "inputs"
        }
        ExportEvent::KeywordInputs(keywords) => {
            d.set_item("keywords", PyList::new(py, keywords)?)?;
            "keyword_inputs"
        }
        ExportEvent::Outputs(arrays) => {
            d.set_item("outputs", traced_list(py, arrays)?)?;
            "outputs"
        }
        ExportEvent::Constants(constants) => {
            let items = constants
                .into_iter()
                .map(|(name, a)| (name, PyArray::from(a)).into_pyobject(py))
                .collect::<PyResult<Vec<_>>>()?;
            d.set_item("constants", PyList::new(py, items)?)?;
            "constants"
        }
        ExportEvent::Primitive {
            name,
            inputs,
            outputs,
            arguments,
        } => {
            let arguments = arguments
                .into_iter()
                .map(|f| state_field(py, f))
                .collect::<PyResult<Vec<_>>>()?;
            d.set_item("arguments", PyList::new(py, arguments)?)?;
            d.set_item("outputs", traced_list(py, outputs)?)?;
            d.set_item("inputs", traced_list(py, inputs)?)?;
            d.set_item("name", name)?;
            "primitive"
        }
        other => {
            return Err(PyRuntimeError::new_err(format!(
                "[export_function] No Python form for the event {other:?}."
            )))
        }
    };
    d.set_item("type", kind)?;
    Ok(d)
}

/// `callback` as an export callback: called with one dict per event; what it raises
/// stops the export and reaches the caller unchanged.
fn event_sink(
    callback: Py<PyAny>,
) -> impl FnMut(ExportEvent) -> lazulite::Result<()> + Send + 'static {
    move |event| {
        Python::attach(|py| {
            let d = event_dict(py, event)?;
            callback.bind(py).call1((d,)).map(|_| ())
        })
        .map_err(stash)
    }
}

/// `export_function(file_or_callback, fun, *args, shapeless=False, metadata=None,
/// **kwargs)`: to a file, or as events to a callable (MLX's callback export).
#[pyfunction]
#[pyo3(signature = (file_or_callback, fun, *args, shapeless = false, metadata = None, **kwargs))]
fn export_function(
    file_or_callback: &Bound<'_, PyAny>,
    fun: Py<PyAny>,
    args: &Bound<'_, PyTuple>,
    shapeless: bool,
    metadata: Option<String>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> Res<()> {
    let (args, kwargs) = inputs(args, kwargs, "[export_function]")?;
    if !is_path(file_or_callback)? {
        if metadata.as_deref().is_some_and(|m| !m.is_empty()) {
            return Err(PyValueError::new_err(
                "[export_function] The metadata argument is only supported when exporting \
                 to a file, not when using a callback.",
            )
            .into());
        }
        if !file_or_callback.is_callable() {
            // MLX's conversion to a callable fails with this RuntimeError.
            return Err(PyRuntimeError::new_err(format!(
                "[export_function] Expected a file path or a callable, got {}.",
                file_or_callback.get_type().name()?
            ))
            .into());
        }
        let sink = event_sink(file_or_callback.clone().unbind());
        ex::export_to_callback(sink, wrap(fun), &args, &kwargs, shapeless).map_err(to_py_err)?;
        return Ok(());
    }
    let path: PathBuf = file_or_callback.extract()?;
    let mut e = ex::exporter(
        &path,
        wrap(fun),
        shapeless,
        metadata.as_deref().unwrap_or(""),
    )?;
    e.call(&args, &kwargs).map_err(to_py_err)?;
    Ok(())
}

/// A function read from a file by `import_function`: call it with arrays as `*args` and
/// `**kwargs` (or a tuple and/or dict of arrays); it returns a tuple of arrays.
#[pyclass(name = "ImportedFunction", module = "lazulite.core", frozen)]
struct PyImportedFunction(ex::ImportedFunction);

#[pymethods]
impl PyImportedFunction {
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__<'py>(
        &self,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> Res<Bound<'py, PyTuple>> {
        let (positional, kw) = inputs(args, kwargs, "[import_function::call]")?;
        let outputs = self.0.call(&positional, &kw)?;
        Ok(PyTuple::new(
            args.py(),
            outputs.into_iter().map(PyArray::from),
        )?)
    }
}

/// `import_function(file, return_metadata=False)`.
#[pyfunction]
#[pyo3(signature = (file, return_metadata = false))]
fn import_function(py: Python<'_>, file: PathBuf, return_metadata: bool) -> Res<Py<PyAny>> {
    let imported = ex::import_function(&file)?;
    let metadata = imported.metadata().to_string();
    let f = Py::new(py, PyImportedFunction(imported))?.into_any();
    if return_metadata {
        return Ok(
            PyTuple::new(py, [f, PyString::new(py, &metadata).into_any().unbind()])?
                .into_any()
                .unbind(),
        );
    }
    Ok(f)
}

/// Exports several traces of one function to one file; made by `exporter`, used as a
/// context manager.
#[pyclass(name = "FunctionExporter", module = "lazulite.core", frozen)]
struct PyFunctionExporter(Mutex<ex::Exporter>);

#[pymethods]
impl PyFunctionExporter {
    fn close(&self) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).close();
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (exc_type = None, exc_value = None, traceback = None))]
    fn __exit__(
        &self,
        exc_type: Option<Py<PyAny>>,
        exc_value: Option<Py<PyAny>>,
        traceback: Option<Py<PyAny>>,
    ) {
        let _ = (exc_type, exc_value, traceback);
        self.close();
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn __call__(&self, args: &Bound<'_, PyTuple>, kwargs: Option<&Bound<'_, PyDict>>) -> Res<()> {
        let (positional, kw) = inputs(args, kwargs, "[export_function]")?;
        let mut e = self.0.lock().unwrap_or_else(|e| e.into_inner());
        e.call(&positional, &kw).map_err(to_py_err)?;
        Ok(())
    }
}

/// `exporter(file, fun, *, shapeless=False, metadata=None)`.
#[pyfunction]
#[pyo3(signature = (file, fun, *, shapeless = false, metadata = None))]
fn exporter(
    file: PathBuf,
    fun: Py<PyAny>,
    shapeless: bool,
    metadata: Option<String>,
) -> Res<PyFunctionExporter> {
    let path = file;
    let e = ex::exporter(
        &path,
        wrap(fun),
        shapeless,
        metadata.as_deref().unwrap_or(""),
    )?;
    Ok(PyFunctionExporter(Mutex::new(e)))
}

/// Adds the export functions to `module`.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<PyImportedFunction>()?;
    module.add_class::<PyFunctionExporter>()?;
    module.add_function(wrap_pyfunction!(export_function, module)?)?;
    module.add_function(wrap_pyfunction!(import_function, module)?)?;
    module.add_function(wrap_pyfunction!(exporter, module)?)?;
    Ok(())
}
