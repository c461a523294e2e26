//! Owl-style dataflow from Python: `placeholder`, `array.assign`, and the graph printers
//! `to_trace`, `to_dot`, `export_to_dot`.

use crate::array::PyArray;
use crate::convert::{Dt, Opd, Shape};
use crate::errors::Res;
use crate::trees::leaves;
use lazulite as lz;
use lazulite::{Array, DType};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

/// `placeholder(shape, dtype=float32)`: an array without a value; `assign` gives it one,
/// and every array computed from it is recomputed on the next evaluation.
#[pyfunction]
#[pyo3(signature = (shape, dtype = None))]
fn placeholder(shape: Shape, dtype: Option<Dt>) -> Res<PyArray> {
    Ok(PyArray::from(lz::placeholder(
        &shape.0,
        dtype.map_or(DType::Float32, |d| d.0),
    )?))
}

/// The arrays in `args` (trees of arrays) and the values of `kwargs`.
fn outputs(args: &Bound<'_, PyTuple>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<Array>> {
    let mut out = Vec::new();
    leaves(args.as_any(), false, &mut out)?;
    if let Some(k) = kwargs {
        leaves(k.as_any(), false, &mut out)?;
    }
    Ok(out)
}

/// The graph behind the arrays given, one `[ producer ] -> [ consumer ]` line per edge.
#[pyfunction]
#[pyo3(signature = (*args))]
fn to_trace(args: &Bound<'_, PyTuple>) -> PyResult<String> {
    let arrays = outputs(args, None)?;
    Ok(lz::to_trace(&arrays.iter().collect::<Vec<_>>()))
}

/// The graph behind the arrays given, in Graphviz DOT.
#[pyfunction]
#[pyo3(signature = (*args))]
fn to_dot(args: &Bound<'_, PyTuple>) -> PyResult<String> {
    let arrays = outputs(args, None)?;
    Ok(lz::to_dot(&arrays.iter().collect::<Vec<_>>()))
}

/// `export_to_dot(file, *args, **kwargs)` as MLX: writes the graph of the arrays in
/// `args` and `kwargs` (trees of arrays) in DOT to `file`, a path or an object with
/// `write`.
#[pyfunction]
#[pyo3(signature = (file, *args, **kwargs))]
fn export_to_dot(
    file: &Bound<'_, PyAny>,
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> Res<()> {
    let arrays = outputs(args, kwargs)?;
    let dot = lz::to_dot(&arrays.iter().collect::<Vec<_>>());
    if file.hasattr("write")? {
        file.call_method1("write", (dot,))?;
        return Ok(());
    }
    let path: std::path::PathBuf = file.extract()?;
    std::fs::write(&path, dot).map_err(|e| {
        pyo3::exceptions::PyOSError::new_err(format!("[export_to_dot] {}: {e}", path.display()))
    })?;
    Ok(())
}

#[pymethods]
impl PyArray {
    /// Gives this placeholder a value (an array of its shape and dtype, or a scalar).
    fn assign(&self, value: Opd) -> Res<()> {
        Ok(self.array().assign(value.0)?)
    }
}

/// Adds the dataflow functions to `module`.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(placeholder, module)?)?;
    module.add_function(wrap_pyfunction!(to_trace, module)?)?;
    module.add_function(wrap_pyfunction!(to_dot, module)?)?;
    module.add_function(wrap_pyfunction!(export_to_dot, module)?)?;
    Ok(())
}
