//! The kernel profile from Python: `start_profile` and `stop_profile` (lazulite's own;
//! MLX has no counterpart).

use crate::dtype::PyDtype;
use lazulite as lz;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

/// Starts timing every kernel that evaluation runs, on every thread, from an empty table.
///
/// ``stop_profile()`` ends it and returns the table. While no profile runs, evaluation
/// pays one atomic load per array computed.
#[pyfunction]
fn start_profile() {
    lz::start_profile();
}

/// Stops the profile ``start_profile()`` began and returns its rows, the most time first.
///
/// Returns:
///     list[dict]: One row per primitive and set of output shapes and dtypes:
///     ``primitive`` (its name, as ``to_trace`` prints it), ``outputs`` (a list of
///     ``(shape, dtype)``), ``calls`` and ``seconds`` (the total time in its kernel).
///     Empty if no profile ran.
#[pyfunction]
fn stop_profile(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let rows = PyList::empty(py);
    for row in lz::stop_profile() {
        let outputs = PyList::empty(py);
        for (shape, dtype) in row.outputs {
            let shape = PyTuple::new(py, shape)?;
            outputs.append((shape, PyDtype(dtype)))?;
        }
        let dict = PyDict::new(py);
        dict.set_item("primitive", row.primitive)?;
        dict.set_item("outputs", outputs)?;
        dict.set_item("calls", row.calls)?;
        dict.set_item("seconds", row.time.as_secs_f64())?;
        rows.append(dict)?;
    }
    Ok(rows)
}

/// Adds `start_profile` and `stop_profile` to `lazulite.core`.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(start_profile, module)?)?;
    module.add_function(wrap_pyfunction!(stop_profile, module)?)?;
    Ok(())
}
