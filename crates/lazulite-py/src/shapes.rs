//! Shape ops, creation and the ternary family, with MLX's signatures and array methods;
//! the variadic ones (`atleast_1d`, `broadcast_arrays`, `meshgrid`) by hand below.

use crate::bind;
use crate::bind::{Returned, Tuple};
use crate::convert::{Arr, ArrList, AxesArg, Dt, Ints, Opd, PadWidth, Sections, Shape};
use crate::errors::Res;
use lazulite as lz;
use lazulite::{Array, Axes, DType, Operand, Scalar};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// `None` (every axis) or the axes given.
fn axes(axis: Option<AxesArg>) -> Axes {
    axis.map_or(Axes::All, Axes::from)
}

fn float32_or(dtype: Option<Dt>) -> DType {
    dtype.map_or(DType::Float32, |d| d.0)
}

fn operand(value: Option<Opd>) -> Option<Operand> {
    value.map(|v| v.0)
}

bind! {
    functions {
        flatten(a: Arr, /, start_axis: i32 = 0, end_axis: i32 = -1, *, stream) => lz::flatten(&a.0, start_axis, end_axis);
        unflatten(a: Arr, /, axis: i32, shape: Ints, *, stream) => lz::unflatten(&a.0, axis, &shape.0);
        squeeze(a: Arr, /, axis: Option<AxesArg> = None, *, stream) => lz::squeeze(&a.0, axes(axis));
        expand_dims(a: Arr, /, axis: AxesArg, *, stream) => lz::expand_dims(&a.0, Axes::from(axis));
        swapaxes(a: Arr, /, axis1: i32, axis2: i32, *, stream) => lz::swapaxes(&a.0, axis1, axis2);
        moveaxis(a: Arr, /, source: i32, destination: i32, *, stream) => lz::moveaxis(&a.0, source, destination);
        concatenate(arrays: ArrList, axis: Option<i32> = Some(0), *, stream) => lz::concatenate(&arrays.0, axis);
        concat(arrays: ArrList, axis: Option<i32> = Some(0), *, stream) => lz::concatenate(&arrays.0, axis);
        stack(arrays: ArrList, axis: Option<i32> = Some(0), *, stream) => lz::stack(&arrays.0, axis.unwrap_or(0));
        split(a: Arr, /, indices_or_sections: Sections, axis: i32 = 0, *, stream) => lz::split(&a.0, indices_or_sections.0, axis);
        unstack(x: Arr, /, *, axis: i32 = 0, stream) => lz::unstack(&x.0, axis).map(Tuple);
        pad(a: Arr, pad_width: PadWidth, mode: &str = "constant", constant_values: Option<Opd> = None, *, stream) => lz::pad(&a.0, &pad_width.0, mode, operand(constant_values).unwrap_or(Operand::Scalar(Scalar::Int(0))));
        tile(a: Arr, reps: Ints, /, *, stream) => lz::tile(&a.0, &reps.0);
        repeat(array: Arr, repeats: i64, axis: Option<i32> = None, *, stream) => lz::repeat(&array.0, repeats, axis);
        roll(a: Arr, shift: Ints, axis: Option<AxesArg> = None, /, *, stream) => lz::roll(&a.0, shift.0, axes(axis));
        flip(a: Arr, /, axis: Option<AxesArg> = None, *, stream) => lz::flip(&a.0, axes(axis));
        as_strided(a: Arr, /, shape: Option<Shape> = None, strides: Option<Ints> = None, offset: i64 = 0, *, stream) => lz::as_strided(&a.0, shape.as_ref().map(|s| s.0.as_slice()), strides.as_ref().map(|s| s.0.as_slice()), offset);
        view(a: Arr, dtype: Dt, stream) => lz::view(&a.0, dtype.0);
        contiguous(a: Arr, /, allow_col_major: bool = false, *, stream) => lz::contiguous(&a.0, allow_col_major);

        empty(shape: Shape, dtype: Option<Dt> = None, *, stream) => lz::empty(&shape.0, float32_or(dtype));
        full_like(a: Arr, vals: Opd, dtype: Option<Dt> = None, *, stream) => lz::full_like(&a.0, vals.0, dtype.map(|d| d.0));
        linspace(start: f64, stop: f64, num: usize = 50, endpoint: bool = true, dtype: Option<Dt> = None, stream) => lz::linspace(start, stop, num, endpoint, float32_or(dtype));
        eye(n: usize, m: Option<usize> = None, k: i64 = 0, dtype: Option<Dt> = None, *, stream) => lz::eye(n, m, k, float32_or(dtype));
        identity(n: usize, dtype: Option<Dt> = None, *, stream) => lz::identity(n, float32_or(dtype));
        tri(n: usize, m: Option<usize> = None, k: i64 = 0, dtype: Option<Dt> = None, *, stream) => lz::tri(n, m, k, float32_or(dtype));
        tril(x: Arr, k: i64 = 0, *, stream) => lz::tril(&x.0, k);
        triu(x: Arr, k: i64 = 0, *, stream) => lz::triu(&x.0, k);
        diag(a: Arr, /, k: i64 = 0, *, stream) => lz::diag(&a.0, k);
        diagonal(a: Arr, offset: i64 = 0, axis1: i32 = 0, axis2: i32 = 1, stream) => lz::diagonal(&a.0, offset, axis1, axis2);
        trace(a: Arr, /, offset: i64 = 0, axis1: i32 = 0, axis2: i32 = 1, dtype: Option<Dt> = None, *, stream) => lz::trace(&a.0, offset, axis1, axis2, dtype.map(|d| d.0));

        r#where(condition: Opd, x: Opd, y: Opd, /, *, stream) => lz::where_(condition.0, x.0, y.0);
        clip(a: Arr, /, a_min: Option<Opd>, a_max: Option<Opd>, *, stream) => lz::clip(&a.0, operand(a_min), operand(a_max));
        nan_to_num(a: Arr, nan: f64 = 0.0, posinf: Option<f64> = None, neginf: Option<f64> = None, *, stream) => lz::nan_to_num(&a.0, nan, posinf, neginf);
        isclose(a: Arr, b: Arr, /, rtol: f64 = 1e-05, atol: f64 = 1e-08, *, equal_nan: bool = false, stream) => lz::isclose(&a.0, &b.0, rtol, atol, equal_nan);
        allclose(a: Arr, b: Arr, /, rtol: f64 = 1e-05, atol: f64 = 1e-08, *, equal_nan: bool = false, stream) => lz::allclose(&a.0, &b.0, rtol, atol, equal_nan);
        array_equal(a: Opd, b: Opd, equal_nan: bool = false, stream) => lz::array_equal(a.0, b.0, equal_nan);
    }
    methods {
        flatten[a](start_axis: i32 = 0, end_axis: i32 = -1, *, stream) => lz::flatten(&a, start_axis, end_axis);
        squeeze[a](axis: Option<AxesArg> = None, *, stream) => lz::squeeze(&a, axes(axis));
        swapaxes[a](axis1: i32, axis2: i32, *, stream) => lz::swapaxes(&a, axis1, axis2);
        moveaxis[a](source: i32, destination: i32, *, stream) => lz::moveaxis(&a, source, destination);
        split[a](indices_or_sections: Sections, axis: i32 = 0, *, stream) => lz::split(&a, indices_or_sections.0, axis);
        diagonal[a](offset: i64 = 0, axis1: i32 = 0, axis2: i32 = 1, stream) => lz::diagonal(&a, offset, axis1, axis2);
        diag[a](k: i64 = 0, *, stream) => lz::diag(&a, k);
        view[a](dtype: Dt, *, stream) => lz::view(&a, dtype.0);
    }
}

/// The arrays of a variadic call.
fn arrays_of(args: &Bound<'_, PyTuple>) -> PyResult<Vec<Array>> {
    args.iter().map(|a| Ok(a.extract::<Arr>()?.0)).collect()
}

/// `atleast_Nd(*arys)`: one array for one argument, else a list.
fn at_least(
    py: Python<'_>,
    args: &Bound<'_, PyTuple>,
    f: fn(&Array) -> lz::Result<Array>,
) -> Res<Py<PyAny>> {
    let out = arrays_of(args)?
        .iter()
        .map(f)
        .collect::<lz::Result<Vec<_>>>()?;
    if out.len() == 1 {
        return Ok(out.into_iter().next().expect("one array").into_python(py)?);
    }
    Ok(out.into_python(py)?)
}

#[pyfunction]
#[pyo3(signature = (*arys, stream = None))]
#[allow(unused_variables)]
fn atleast_1d(
    py: Python<'_>,
    arys: &Bound<'_, PyTuple>,
    stream: Option<Py<PyAny>>,
) -> Res<Py<PyAny>> {
    at_least(py, arys, lz::atleast_1d)
}

#[pyfunction]
#[pyo3(signature = (*arys, stream = None))]
#[allow(unused_variables)]
fn atleast_2d(
    py: Python<'_>,
    arys: &Bound<'_, PyTuple>,
    stream: Option<Py<PyAny>>,
) -> Res<Py<PyAny>> {
    at_least(py, arys, lz::atleast_2d)
}

#[pyfunction]
#[pyo3(signature = (*arys, stream = None))]
#[allow(unused_variables)]
fn atleast_3d(
    py: Python<'_>,
    arys: &Bound<'_, PyTuple>,
    stream: Option<Py<PyAny>>,
) -> Res<Py<PyAny>> {
    at_least(py, arys, lz::atleast_3d)
}

#[pyfunction]
#[pyo3(signature = (*arrays, stream = None))]
#[allow(unused_variables)]
fn broadcast_arrays(
    py: Python<'_>,
    arrays: &Bound<'_, PyTuple>,
    stream: Option<Py<PyAny>>,
) -> Res<Py<PyAny>> {
    Ok(lz::broadcast_arrays(&arrays_of(arrays)?)?.into_python(py)?)
}

#[pyfunction]
#[pyo3(signature = (*arrays, sparse = false, indexing = "xy", stream = None))]
#[allow(unused_variables)]
fn meshgrid(
    py: Python<'_>,
    arrays: &Bound<'_, PyTuple>,
    sparse: bool,
    indexing: &str,
    stream: Option<Py<PyAny>>,
) -> Res<Py<PyAny>> {
    Ok(Tuple(lz::meshgrid(&arrays_of(arrays)?, sparse, indexing)?).into_python(py)?)
}

/// Adds the table's functions and the variadic ones to `module`.
pub fn register_all(module: &Bound<'_, PyModule>) -> PyResult<()> {
    register(module)?;
    module.add_function(wrap_pyfunction!(atleast_1d, module)?)?;
    module.add_function(wrap_pyfunction!(atleast_2d, module)?)?;
    module.add_function(wrap_pyfunction!(atleast_3d, module)?)?;
    module.add_function(wrap_pyfunction!(broadcast_arrays, module)?)?;
    module.add_function(wrap_pyfunction!(meshgrid, module)?)?;
    Ok(())
}
