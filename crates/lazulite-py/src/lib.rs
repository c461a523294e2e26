//! `lazulite.core`: the Python module of lazulite, a drop-in for `mlx.core`.
//!
//! Ops are bound declaratively, one line each, in the tables of [`ops`] (see [`bind`]);
//! argument conversion lives in [`convert`], error mapping in [`errors`], the `array`
//! class in [`array`], dtypes in [`dtype`].

mod array;
mod bind;
mod convert;
mod dtype;
mod errors;
mod misc;
mod ops;

use pyo3::prelude::*;
use pyo3::types::PyList;

/// Every table-bound function and method as `(name, is_method, "name(params)")`, for the
/// stub generator (`tools/gen_stubs.py`).
#[pyfunction]
fn _signatures(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let rows = ops::signatures()
        .into_iter()
        .map(|s| (s.name, s.is_method, s.python()));
    PyList::new(py, rows)
}

#[pymodule]
fn core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<array::PyArray>()?;
    m.add_class::<array::ArrayIterator>()?;
    dtype::register(m)?;
    ops::register(m)?;
    misc::register(m)?;
    m.add_function(wrap_pyfunction!(_signatures, m)?)?;
    Ok(())
}
