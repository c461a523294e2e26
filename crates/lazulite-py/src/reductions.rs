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
        /// Sum of the elements over the given axes.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     axis (int or list(int), optional): Axis or axes to reduce over; ``None`` reduces over all axes.
        ///     keepdims (bool): Keep the reduced axes as dimensions of size one. Default: ``False``.
        ///
        /// Returns:
        ///     array: The reduced array.
        sum(a: Arr, /, axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::sum(&a.0, axes(axis), keepdims);
        /// Product of the elements over the given axes.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     axis (int or list(int), optional): Axis or axes to reduce over; ``None`` reduces over all axes.
        ///     keepdims (bool): Keep the reduced axes as dimensions of size one. Default: ``False``.
        ///
        /// Returns:
        ///     array: The reduced array.
        prod(a: Arr, /, axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::prod(&a.0, axes(axis), keepdims);
        /// Maximum of the elements over the given axes.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     axis (int or list(int), optional): Axis or axes to reduce over; ``None`` reduces over all axes.
        ///     keepdims (bool): Keep the reduced axes as dimensions of size one. Default: ``False``.
        ///
        /// Returns:
        ///     array: The reduced array.
        max(a: Arr, /, axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::max(&a.0, axes(axis), keepdims);
        /// Minimum of the elements over the given axes.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     axis (int or list(int), optional): Axis or axes to reduce over; ``None`` reduces over all axes.
        ///     keepdims (bool): Keep the reduced axes as dimensions of size one. Default: ``False``.
        ///
        /// Returns:
        ///     array: The reduced array.
        min(a: Arr, /, axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::min(&a.0, axes(axis), keepdims);
        /// Mean of the elements over the given axes.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     axis (int or list(int), optional): Axis or axes to reduce over; ``None`` reduces over all axes.
        ///     keepdims (bool): Keep the reduced axes as dimensions of size one. Default: ``False``.
        ///
        /// Returns:
        ///     array: The reduced array.
        mean(a: Arr, /, axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::mean(&a.0, axes(axis), keepdims);
        /// Variance of the elements over the given axes.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     axis (int or list(int), optional): Axis or axes to reduce over; ``None`` reduces over all axes.
        ///     keepdims (bool): Keep the reduced axes as dimensions of size one. Default: ``False``.
        ///     ddof (int): Delta degrees of freedom: the divisor is ``N - ddof``. Default: ``0``.
        ///
        /// Returns:
        ///     array: The reduced array.
        var(a: Arr, /, axis: Option<AxesArg> = None, keepdims: bool = false, ddof: i32 = 0, *, stream) => lz::var(&a.0, axes(axis), keepdims, ddof);
        /// Log of the sum of exponentials (``log(sum(exp(a)))``), computed stably, over the given axes.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     axis (int or list(int), optional): Axis or axes to reduce over; ``None`` reduces over all axes.
        ///     keepdims (bool): Keep the reduced axes as dimensions of size one. Default: ``False``.
        ///
        /// Returns:
        ///     array: The reduced array.
        logsumexp(a: Arr, /, axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::logsumexp(&a.0, axes(axis), keepdims);
        /// Logical and (every element true) of the elements over the given axes.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     axis (int or list(int), optional): Axis or axes to reduce over; ``None`` reduces over all axes.
        ///     keepdims (bool): Keep the reduced axes as dimensions of size one. Default: ``False``.
        ///
        /// Returns:
        ///     array: The reduced array.
        all(a: Arr, /, axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::all(&a.0, axes(axis), keepdims);
        /// Logical or (some element true) of the elements over the given axes.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     axis (int or list(int), optional): Axis or axes to reduce over; ``None`` reduces over all axes.
        ///     keepdims (bool): Keep the reduced axes as dimensions of size one. Default: ``False``.
        ///
        /// Returns:
        ///     array: The reduced array.
        any(a: Arr, /, axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::any(&a.0, axes(axis), keepdims);
        /// Indices of the maximum values along an axis.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     axis (int, optional): Axis to reduce; ``None`` looks at the flattened array.
        ///     keepdims (bool): Keep the reduced axes as dimensions of size one. Default: ``False``.
        ///
        /// Returns:
        ///     array: The indices (``uint32``).
        argmax(a: Arr, /, axis: Option<i32> = None, keepdims: bool = false, *, stream) => lz::argmax(&a.0, axis, keepdims);
        /// Indices of the minimum values along an axis.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     axis (int, optional): Axis to reduce; ``None`` looks at the flattened array.
        ///     keepdims (bool): Keep the reduced axes as dimensions of size one. Default: ``False``.
        ///
        /// Returns:
        ///     array: The indices (``uint32``).
        argmin(a: Arr, /, axis: Option<i32> = None, keepdims: bool = false, *, stream) => lz::argmin(&a.0, axis, keepdims);
        /// Median of the elements over the given axes.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     axis (int or list(int), optional): Axis or axes to reduce over; ``None`` reduces over all axes.
        ///     keepdims (bool): Keep the reduced axes as dimensions of size one. Default: ``False``.
        ///
        /// Returns:
        ///     array: The reduced array.
        median(a: Arr, /, axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::median(&a.0, axes(axis), keepdims);
        /// Number of non-zero elements of the elements over the given axes.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     axis (int or list(int), optional): Axis or axes to reduce over; ``None`` reduces over all axes.
        ///     keepdims (bool): Keep the reduced axes as dimensions of size one. Default: ``False``.
        ///
        /// Returns:
        ///     array: The reduced array.
        count_nonzero(a: Arr, /, *, axis: Option<AxesArg> = None, keepdims: bool = false, stream) => lz::count_nonzero(&a.0, axes(axis), keepdims);
        /// Softmax along the given axes: ``exp(a) / sum(exp(a))``, computed stably.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     axis (int or list(int), optional): Axis or axes to normalize over; ``None`` uses all axes.
        ///     precise (bool): Compute in float32 for half-precision inputs. Default: ``False``.
        ///
        /// Returns:
        ///     array: The softmax of ``a``.
        softmax(a: Arr, /, axis: Option<AxesArg> = None, *, precise: bool = false, stream) => lz::softmax(&a.0, axes(axis), precise);

        /// Cumulative sum along an axis.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     axis (int, optional): Axis to scan; ``None`` scans the flattened array.
        ///     reverse (bool): Scan from the end. Default: ``False``.
        ///     inclusive (bool): Include each element in its own result. Default: ``True``.
        ///     dtype (Dtype, optional): Element type of the result.
        ///
        /// Returns:
        ///     array: The running sums, with the shape of ``a``.
        cumsum(a: Arr, /, axis: Option<i32> = None, *, reverse: bool = false, inclusive: bool = true, dtype: Option<Dt> = None, stream) => lz::cumsum(&a.0, axis, reverse, inclusive, dtype.map(|d| d.0));
        /// Cumulative product along an axis.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     axis (int, optional): Axis to scan; ``None`` scans the flattened array.
        ///     reverse (bool): Scan from the end. Default: ``False``.
        ///     inclusive (bool): Include each element in its own result. Default: ``True``.
        ///     dtype (Dtype, optional): Element type of the result.
        ///
        /// Returns:
        ///     array: The running products, with the shape of ``a``.
        cumprod(a: Arr, /, axis: Option<i32> = None, *, reverse: bool = false, inclusive: bool = true, dtype: Option<Dt> = None, stream) => lz::cumprod(&a.0, axis, reverse, inclusive, dtype.map(|d| d.0));
        /// Cumulative maximum along an axis.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     axis (int, optional): Axis to scan; ``None`` scans the flattened array.
        ///     reverse (bool): Scan from the end. Default: ``False``.
        ///     inclusive (bool): Include each element in its own result. Default: ``True``.
        ///
        /// Returns:
        ///     array: The running maximums, with the shape of ``a``.
        cummax(a: Arr, /, axis: Option<i32> = None, *, reverse: bool = false, inclusive: bool = true, stream) => lz::cummax(&a.0, axis, reverse, inclusive);
        /// Cumulative minimum along an axis.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     axis (int, optional): Axis to scan; ``None`` scans the flattened array.
        ///     reverse (bool): Scan from the end. Default: ``False``.
        ///     inclusive (bool): Include each element in its own result. Default: ``True``.
        ///
        /// Returns:
        ///     array: The running minimums, with the shape of ``a``.
        cummin(a: Arr, /, axis: Option<i32> = None, *, reverse: bool = false, inclusive: bool = true, stream) => lz::cummin(&a.0, axis, reverse, inclusive);
        /// Cumulative log-sum-exp along an axis.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     axis (int, optional): Axis to scan; ``None`` scans the flattened array.
        ///     reverse (bool): Scan from the end. Default: ``False``.
        ///     inclusive (bool): Include each element in its own result. Default: ``True``.
        ///
        /// Returns:
        ///     array: The running log-sum-exps, with the shape of ``a``.
        logcumsumexp(a: Arr, /, axis: Option<i32> = None, *, reverse: bool = false, inclusive: bool = true, stream) => lz::logcumsumexp(&a.0, axis, reverse, inclusive);

        /// Sort an array along an axis.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     axis (int, optional): Axis to sort along; ``None`` sorts the flattened array. Default: ``-1``.
        ///
        /// Returns:
        ///     array: The sorted array.
        sort(a: Arr, /, axis: Option<i32> = Some(-1), *, stream) => lz::sort(&a.0, axis);
        /// Indices that sort an array along an axis.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     axis (int, optional): Axis to sort along; ``None`` uses the flattened array. Default: ``-1``.
        ///
        /// Returns:
        ///     array: The indices (``uint32``).
        argsort(a: Arr, /, axis: Option<i32> = Some(-1), *, stream) => lz::argsort(&a.0, axis);
        /// Partially sort an array: the ``kth`` element lands at its sorted position, smaller ones before it, larger ones after.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     kth (int): Index of the element to place.
        ///     axis (int, optional): Axis to partition along; ``None`` uses the flattened array. Default: ``-1``.
        ///
        /// Returns:
        ///     array: The partitioned array.
        partition(a: Arr, /, kth: i64, axis: Option<i32> = Some(-1), *, stream) => lz::partition(&a.0, kth, axis);
        /// Indices that partition an array around its ``kth`` element (see ``partition``).
        ///
        /// Args:
        ///     a (array): Input array.
        ///     kth (int): Index of the element to place.
        ///     axis (int, optional): Axis to partition along; ``None`` uses the flattened array. Default: ``-1``.
        ///
        /// Returns:
        ///     array: The indices (``uint32``).
        argpartition(a: Arr, /, kth: i64, axis: Option<i32> = Some(-1), *, stream) => lz::argpartition(&a.0, kth, axis);
        /// The ``k`` largest elements along an axis, not necessarily sorted.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     k (int): How many elements to keep.
        ///     axis (int, optional): Axis to select along; ``None`` uses the flattened array. Default: ``-1``.
        ///
        /// Returns:
        ///     array: The ``k`` largest values.
        topk(a: Arr, /, k: i64, axis: Option<i32> = Some(-1), *, stream) => lz::topk(&a.0, k, axis);
        /// Indices at which ``values`` would be inserted into ``sorted_sequence`` to keep it sorted.
        ///
        /// Args:
        ///     sorted_sequence (array): A 1-D array in ascending order.
        ///     values (array): Values to locate.
        ///     side (str): ``"left"`` gives the first suitable index, ``"right"`` the last. Default: ``"left"``.
        ///
        /// Returns:
        ///     array: The insertion indices.
        searchsorted(sorted_sequence: Arr, values: Arr, /, side: &str = "left", *, stream) => lz::searchsorted(&sorted_sequence.0, &values.0, side);
        /// The ``n``-th discrete difference along an axis (``a[1:] - a[:-1]``, repeated).
        ///
        /// Args:
        ///     a (array): Input array.
        ///     n (int): How many times to take the difference. Default: ``1``.
        ///     axis (int): Axis along which to take it. Default: ``-1``.
        ///
        /// Returns:
        ///     array: The differences; ``axis`` is ``n`` shorter.
        diff(a: Arr, /, n: i64 = 1, axis: i32 = -1, *, stream) => lz::diff(&a.0, n, axis);
    }
    methods {
        /// See :func:`sum`.
        sum[a](axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::sum(&a, axes(axis), keepdims);
        /// See :func:`prod`.
        prod[a](axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::prod(&a, axes(axis), keepdims);
        /// See :func:`max`.
        max[a](axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::max(&a, axes(axis), keepdims);
        /// See :func:`min`.
        min[a](axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::min(&a, axes(axis), keepdims);
        /// See :func:`mean`.
        mean[a](axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::mean(&a, axes(axis), keepdims);
        /// See :func:`var`.
        var[a](axis: Option<AxesArg> = None, keepdims: bool = false, ddof: i32 = 0, *, correction: Option<i32> = None, stream) => lz::var(&a, axes(axis), keepdims, correction.unwrap_or(ddof));
        /// See :func:`std`.
        std[a](axis: Option<AxesArg> = None, keepdims: bool = false, ddof: i32 = 0, *, correction: Option<i32> = None, stream) => lz::std(&a, axes(axis), keepdims, correction.unwrap_or(ddof));
        /// See :func:`logsumexp`.
        logsumexp[a](axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::logsumexp(&a, axes(axis), keepdims);
        /// See :func:`all`.
        all[a](axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::all(&a, axes(axis), keepdims);
        /// See :func:`any`.
        any[a](axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::any(&a, axes(axis), keepdims);
        /// See :func:`argmax`.
        argmax[a](axis: Option<i32> = None, keepdims: bool = false, *, stream) => lz::argmax(&a, axis, keepdims);
        /// See :func:`argmin`.
        argmin[a](axis: Option<i32> = None, keepdims: bool = false, *, stream) => lz::argmin(&a, axis, keepdims);
        /// See :func:`cumsum`.
        cumsum[a](axis: Option<i32> = None, *, reverse: bool = false, inclusive: bool = true, stream) => lz::cumsum(&a, axis, reverse, inclusive, None);
        /// See :func:`cumprod`.
        cumprod[a](axis: Option<i32> = None, *, reverse: bool = false, inclusive: bool = true, stream) => lz::cumprod(&a, axis, reverse, inclusive, None);
        /// See :func:`cummax`.
        cummax[a](axis: Option<i32> = None, *, reverse: bool = false, inclusive: bool = true, stream) => lz::cummax(&a, axis, reverse, inclusive);
        /// See :func:`cummin`.
        cummin[a](axis: Option<i32> = None, *, reverse: bool = false, inclusive: bool = true, stream) => lz::cummin(&a, axis, reverse, inclusive);
        /// See :func:`logcumsumexp`.
        logcumsumexp[a](axis: Option<i32> = None, *, reverse: bool = false, inclusive: bool = true, stream) => lz::logcumsumexp(&a, axis, reverse, inclusive);
    }
}

// `std` by hand: a Rust function named `std` would shadow the `std` crate.
/// Standard deviation of the elements over the given axes.
///
/// Args:
///     a (array): Input array.
///     axis (int or list(int), optional): Axis or axes to reduce over; ``None`` reduces over all axes.
///     keepdims (bool): Keep the reduced axes as dimensions of size one. Default: ``False``.
///     ddof (int): Delta degrees of freedom: the variance divisor is ``N - ddof``. Default: ``0``.
///
/// Returns:
///     array: The reduced array.
#[pyfunction]
#[pyo3(name = "std", signature = (a, /, axis = None, keepdims = false, ddof = 0, *, stream = None))]
#[allow(unused_variables)]
fn standard_deviation(
    a: Arr,
    axis: Option<AxesArg>,
    keepdims: bool,
    ddof: i32,
    stream: Option<crate::devices::StreamOrDevice>,
) -> Res<PyArray> {
    Ok(PyArray::from(lz::std(&a.0, axes(axis), keepdims, ddof)?))
}

/// Adds the table's functions and `std` to `module`.
pub fn register_all(module: &Bound<'_, PyModule>) -> PyResult<()> {
    register(module)?;
    module.add_function(wrap_pyfunction!(standard_deviation, module)?)?;
    Ok(())
}
