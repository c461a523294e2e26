//! `lazulite.core`: the Python module of lazulite, a drop-in for `mlx.core`.
//!
//! Ops are bound declaratively, one line each, in the tables of [`ops`] (see [`bind`]);
//! argument conversion lives in [`convert`], error mapping in [`errors`], stub hints in
//! [`signature`], the `array` class in [`array`] (its methods in [`array_methods`]),
//! dtypes in [`dtype`]. Each submodule of `mlx.core` has its own file: [`linalg`],
//! [`fft`], [`random`], [`fast`], [`distributed`].

mod array;
mod array_methods;
mod binary;
mod bind;
mod compile;
mod conv;
mod convert;
mod custom;
mod dataflow;
mod devices;
mod distributed;
mod dlpack;
mod dtype;
mod errors;
mod export;
mod fast;
mod fft;
mod indexing;
mod io;
mod linalg;
mod misc;
mod ops;
mod products;
mod profile;
mod quantized;
mod random;
mod reductions;
mod shapes;
mod signature;
mod transforms;
mod trees;
mod unary;
mod utilities;

/// Recording an op allocates its node and handles, and evaluating frees them: mimalloc's
/// per-thread free lists serve these small blocks faster than glibc, whose coalescing of
/// freed nodes showed in profiles. (Arrays' data has its own cache, `backend::memory`.)
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use pyo3::prelude::*;
use pyo3::types::PyList;

/// Every table-bound function and method as `(name, is_method, "name(params)")`, for the
/// stub generator (`tools/gen_stubs.py`).
#[pyfunction]
fn _signatures(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let rows = [
        unary::signatures(),
        binary::signatures(),
        ops::signatures(),
        reductions::signatures(),
        shapes::signatures(),
        products::signatures(),
        indexing::signatures(),
        conv::signatures(),
        utilities::signatures(),
        quantized::signatures(),
    ]
    .into_iter()
    .flatten()
    .map(|s| (s.name, s.is_method, s.python()));
    PyList::new(py, rows)
}

/// A submodule's functions (`"random"`, `"fast"`, `"linalg"`, `"fft"` or `"distributed"`) as `(name, "name(params)")`, for the
/// stubs.
#[pyfunction]
fn _submodule_signatures<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyList>> {
    let signatures = match name {
        "random" => random::signatures(),
        "fast" => fast::signatures(),
        "linalg" => linalg::signatures(),
        "fft" => fft::signatures(),
        "distributed" => distributed::signatures(),
        _ => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "no submodule {name}"
            )))
        }
    };
    PyList::new(py, signatures.into_iter().map(|s| (s.name, s.python())))
}

#[pymodule]
fn core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<array::PyArray>()?;
    m.add_class::<array_methods::ArrayIterator>()?;
    m.add_class::<convert::ArrayLike>()?;
    m.add_function(wrap_pyfunction!(array_methods::_array_from_bytes, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add(
        "AxisError",
        errors::axis_error_class(m.py())?.clone_ref(m.py()),
    )?;
    dtype::register(m)?;
    unary::register(m)?;
    binary::register(m)?;
    ops::register(m)?;
    misc::register(m)?;
    reductions::register_all(m)?;
    shapes::register_all(m)?;
    products::register_all(m)?;
    conv::register(m)?;
    indexing::register(m)?;
    m.add_class::<indexing::ArrayAt>()?;
    transforms::register(m)?;
    compile::register(m)?;
    custom::register(m)?;
    dataflow::register(m)?;
    profile::register(m)?;
    export::register(m)?;
    io::register(m)?;
    random::register_submodule(m)?;
    fast::register_submodule(m)?;
    m.add_function(wrap_pyfunction!(_submodule_signatures, m)?)?;
    m.add_function(wrap_pyfunction!(_signatures, m)?)?;
    linalg::register_submodule(m)?;
    utilities::register_all(m)?;
    devices::register(m)?;
    fft::register_submodule(m)?;
    distributed::register_submodule(m)?;
    quantized::register(m)?;
    Ok(())
}
