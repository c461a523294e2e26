//! Reductions, scans and the sort family, with MLX's signatures and array methods.

use crate::array::PyArray;
use crate::bind;
use crate::convert::{Arr, AxesArg, Dt};
use crate::errors::Res;
use lazulite as lz;
use lazulite::Axes;
use pyo3::prelude::*;

/// `None` (every axis) or the axes given.
fn axes(axis: Option<AxesArg>) -> Axes {
    axis.map_or(Axes::All, Axes::from)
}

bind! {
    functions {
        sum(a: Arr, /, axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::sum(&a.0, axes(axis), keepdims);
        prod(a: Arr, /, axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::prod(&a.0, axes(axis), keepdims);
        max(a: Arr, /, axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::max(&a.0, axes(axis), keepdims);
        min(a: Arr, /, axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::min(&a.0, axes(axis), keepdims);
        mean(a: Arr, /, axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::mean(&a.0, axes(axis), keepdims);
        var(a: Arr, /, axis: Option<AxesArg> = None, keepdims: bool = false, ddof: i32 = 0, *, stream) => lz::var(&a.0, axes(axis), keepdims, ddof);
        logsumexp(a: Arr, /, axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::logsumexp(&a.0, axes(axis), keepdims);
        all(a: Arr, /, axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::all(&a.0, axes(axis), keepdims);
        any(a: Arr, /, axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::any(&a.0, axes(axis), keepdims);
        argmax(a: Arr, /, axis: Option<i32> = None, keepdims: bool = false, *, stream) => lz::argmax(&a.0, axis, keepdims);
        argmin(a: Arr, /, axis: Option<i32> = None, keepdims: bool = false, *, stream) => lz::argmin(&a.0, axis, keepdims);
        median(a: Arr, /, axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::median(&a.0, axes(axis), keepdims);
        count_nonzero(a: Arr, /, *, axis: Option<AxesArg> = None, keepdims: bool = false, stream) => lz::count_nonzero(&a.0, axes(axis), keepdims);
        softmax(a: Arr, /, axis: Option<AxesArg> = None, *, precise: bool = false, stream) => lz::softmax(&a.0, axes(axis), precise);

        cumsum(a: Arr, /, axis: Option<i32> = None, *, reverse: bool = false, inclusive: bool = true, dtype: Option<Dt> = None, stream) => lz::cumsum(&a.0, axis, reverse, inclusive, dtype.map(|d| d.0));
        cumprod(a: Arr, /, axis: Option<i32> = None, *, reverse: bool = false, inclusive: bool = true, dtype: Option<Dt> = None, stream) => lz::cumprod(&a.0, axis, reverse, inclusive, dtype.map(|d| d.0));
        cummax(a: Arr, /, axis: Option<i32> = None, *, reverse: bool = false, inclusive: bool = true, stream) => lz::cummax(&a.0, axis, reverse, inclusive);
        cummin(a: Arr, /, axis: Option<i32> = None, *, reverse: bool = false, inclusive: bool = true, stream) => lz::cummin(&a.0, axis, reverse, inclusive);
        logcumsumexp(a: Arr, /, axis: Option<i32> = None, *, reverse: bool = false, inclusive: bool = true, stream) => lz::logcumsumexp(&a.0, axis, reverse, inclusive);

        sort(a: Arr, /, axis: Option<i32> = Some(-1), *, stream) => lz::sort(&a.0, axis);
        argsort(a: Arr, /, axis: Option<i32> = Some(-1), *, stream) => lz::argsort(&a.0, axis);
        partition(a: Arr, /, kth: i64, axis: Option<i32> = Some(-1), *, stream) => lz::partition(&a.0, kth, axis);
        argpartition(a: Arr, /, kth: i64, axis: Option<i32> = Some(-1), *, stream) => lz::argpartition(&a.0, kth, axis);
        topk(a: Arr, /, k: i64, axis: Option<i32> = Some(-1), *, stream) => lz::topk(&a.0, k, axis);
        searchsorted(sorted_sequence: Arr, values: Arr, /, side: &str = "left", *, stream) => lz::searchsorted(&sorted_sequence.0, &values.0, side);
        diff(a: Arr, /, n: i64 = 1, axis: i32 = -1, *, stream) => lz::diff(&a.0, n, axis);
    }
    methods {
        sum[a](axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::sum(&a, axes(axis), keepdims);
        prod[a](axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::prod(&a, axes(axis), keepdims);
        max[a](axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::max(&a, axes(axis), keepdims);
        min[a](axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::min(&a, axes(axis), keepdims);
        mean[a](axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::mean(&a, axes(axis), keepdims);
        var[a](axis: Option<AxesArg> = None, keepdims: bool = false, ddof: i32 = 0, *, correction: Option<i32> = None, stream) => lz::var(&a, axes(axis), keepdims, correction.unwrap_or(ddof));
        std[a](axis: Option<AxesArg> = None, keepdims: bool = false, ddof: i32 = 0, *, correction: Option<i32> = None, stream) => lz::std(&a, axes(axis), keepdims, correction.unwrap_or(ddof));
        logsumexp[a](axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::logsumexp(&a, axes(axis), keepdims);
        all[a](axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::all(&a, axes(axis), keepdims);
        any[a](axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::any(&a, axes(axis), keepdims);
        argmax[a](axis: Option<i32> = None, keepdims: bool = false, *, stream) => lz::argmax(&a, axis, keepdims);
        argmin[a](axis: Option<i32> = None, keepdims: bool = false, *, stream) => lz::argmin(&a, axis, keepdims);
        cumsum[a](axis: Option<i32> = None, *, reverse: bool = false, inclusive: bool = true, stream) => lz::cumsum(&a, axis, reverse, inclusive, None);
        cumprod[a](axis: Option<i32> = None, *, reverse: bool = false, inclusive: bool = true, stream) => lz::cumprod(&a, axis, reverse, inclusive, None);
        cummax[a](axis: Option<i32> = None, *, reverse: bool = false, inclusive: bool = true, stream) => lz::cummax(&a, axis, reverse, inclusive);
        cummin[a](axis: Option<i32> = None, *, reverse: bool = false, inclusive: bool = true, stream) => lz::cummin(&a, axis, reverse, inclusive);
        logcumsumexp[a](axis: Option<i32> = None, *, reverse: bool = false, inclusive: bool = true, stream) => lz::logcumsumexp(&a, axis, reverse, inclusive);
    }
}

/// `std` by hand: a Rust function named `std` would shadow the `std` crate.
#[pyfunction]
#[pyo3(name = "std", signature = (a, /, axis = None, keepdims = false, ddof = 0, *, stream = None))]
#[allow(unused_variables)]
fn standard_deviation(
    a: Arr,
    axis: Option<AxesArg>,
    keepdims: bool,
    ddof: i32,
    stream: Option<Py<PyAny>>,
) -> Res<PyArray> {
    Ok(PyArray::from(lz::std(&a.0, axes(axis), keepdims, ddof)?))
}

/// Adds the table's functions and `std` to `module`.
pub fn register_all(module: &Bound<'_, PyModule>) -> PyResult<()> {
    register(module)?;
    module.add_function(wrap_pyfunction!(standard_deviation, module)?)?;
    Ok(())
}
