//! Shape ops, creation and the ternary family, with MLX's signatures and array methods;
//! the variadic ones (`atleast_1d`, `broadcast_arrays`, `meshgrid`) by hand below.

use crate::bind;
use crate::bind::{Returned, Tuple};
use crate::convert::{paired, Arr, ArrList, AxesArg, Dt, Ints, Opd, PadWidth, Sections, Shape};
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

/// A number of samples, refused (ValueError, as MLX) when negative.
fn count(op: &str, n: i64) -> lz::Result<usize> {
    usize::try_from(n).map_err(|_| {
        lz::Error::value(format!(
            "[{op}] number of samples, {n}, must be non-negative."
        ))
    })
}

/// The rows and columns of `eye` and `identity`, refused (ValueError, as MLX) when negative.
fn eye_size(n: i64, m: Option<i64>) -> lz::Result<(usize, usize)> {
    let m = m.unwrap_or(n);
    match (usize::try_from(n), usize::try_from(m)) {
        (Ok(n), Ok(m)) => Ok((n, m)),
        _ => Err(lz::Error::value("[eye] N and M must be positive integers.")),
    }
}

fn operand(value: Option<Opd>) -> Option<Operand> {
    value.map(|v| v.0)
}

bind! {
    functions {
        /// Flatten the axes ``start_axis`` to ``end_axis`` (inclusive) into one.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     start_axis (int): First axis to flatten. Default: ``0``.
        ///     end_axis (int): Last axis to flatten. Default: ``-1``.
        ///
        /// Returns:
        ///     array: The flattened array.
        flatten(a: Arr, /, start_axis: i32 = 0, end_axis: i32 = -1, *, stream) => lz::flatten(&a.0, start_axis, end_axis);
        /// Split one axis into several with the given shape.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     axis (int): The axis to split.
        ///     shape (int or list(int)): The shape that replaces it; one entry may be ``-1``.
        ///
        /// Returns:
        ///     array: The reshaped array.
        unflatten(a: Arr, /, axis: i32, shape: Ints, *, stream) => lz::unflatten(&a.0, axis, &shape.0);
        /// Remove axes of size one.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     axis (int or list(int), optional): Axis or axes to remove; ``None`` removes every size-one axis.
        ///
        /// Returns:
        ///     array: A view without those axes.
        squeeze(a: Arr, /, axis: Option<AxesArg> = None, *, stream) => lz::squeeze(&a.0, axes(axis));
        /// Insert axes of size one.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     axis (int or list(int)): Position or positions of the new axes in the result.
        ///
        /// Returns:
        ///     array: A view with the new axes.
        expand_dims(a: Arr, /, axis: AxesArg, *, stream) => lz::expand_dims(&a.0, Axes::from(axis));
        /// Swap two axes of an array.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     axis1 (int): First axis.
        ///     axis2 (int): Second axis.
        ///
        /// Returns:
        ///     array: The view with the axes swapped.
        swapaxes(a: Arr, /, axis1: i32, axis2: i32, *, stream) => lz::swapaxes(&a.0, axis1, axis2);
        /// Move one axis to a new position.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     source (int): The axis to move.
        ///     destination (int): Its position in the result.
        ///
        /// Returns:
        ///     array: The view with the axis moved.
        moveaxis(a: Arr, /, source: i32, destination: i32, *, stream) => lz::moveaxis(&a.0, source, destination);
        /// Join arrays along an existing axis.
        ///
        /// Args:
        ///     arrays (list(array)): The arrays to join; shapes must agree except along ``axis``.
        ///     axis (int, optional): Axis to join along; ``None`` flattens the inputs first. Default: ``0``.
        ///
        /// Returns:
        ///     array: The joined array.
        concatenate(arrays: ArrList, axis: Option<i32> = Some(0), *, stream) => lz::concatenate(&arrays.0, axis);
        /// Join arrays along an existing axis (alias of ``concatenate``).
        ///
        /// Args:
        ///     arrays (list(array)): The arrays to join; shapes must agree except along ``axis``.
        ///     axis (int, optional): Axis to join along; ``None`` flattens the inputs first. Default: ``0``.
        ///
        /// Returns:
        ///     array: The joined array.
        concat(arrays: ArrList, axis: Option<i32> = Some(0), *, stream) => lz::concatenate(&arrays.0, axis);
        /// Join arrays of the same shape along a new axis.
        ///
        /// Args:
        ///     arrays (list(array)): The arrays to stack.
        ///     axis (int, optional): Position of the new axis in the result. Default: ``0``.
        ///
        /// Returns:
        ///     array: The stacked array.
        stack(arrays: ArrList, axis: Option<i32> = Some(0), *, stream) => lz::stack(&arrays.0, axis.unwrap_or(0));
        /// Split an array into parts along an axis.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     indices_or_sections (int or list(int)): A number of equal parts, or the indices at which to split.
        ///     axis (int): Axis to split along. Default: ``0``.
        ///
        /// Returns:
        ///     list(array): The parts.
        split(a: Arr, /, indices_or_sections: Sections, axis: i32 = 0, *, stream) => lz::split(&a.0, indices_or_sections.0, axis);
        /// Split an array into its slices along an axis, removing that axis.
        ///
        /// Args:
        ///     x (array): Input array.
        ///     axis (int): Axis to unstack along. Default: ``0``.
        ///
        /// Returns:
        ///     tuple(array): The slices.
        unstack(x: Arr, /, *, axis: i32 = 0, stream) => lz::unstack(&x.0, axis).map(Tuple);
        /// Pad an array along its axes.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     pad_width (int or tuple): Padding before and after each axis: an int, a ``(before, after)`` pair, or one pair per axis.
        ///     mode (str): ``"constant"``, ``"edge"``, ``"reflect"`` or ``"symmetric"``. Default: ``"constant"``.
        ///     constant_values (array or scalar, optional): Value used by ``"constant"`` mode. Default: ``0``.
        ///
        /// Returns:
        ///     array: The padded array.
        pad(a: Arr, pad_width: PadWidth, mode: &str = "constant", constant_values: Option<Opd> = None, *, stream) => lz::pad(&a.0, &pad_width.0, mode, operand(constant_values).unwrap_or(Operand::Scalar(Scalar::Int(0))));
        /// Repeat a whole array along each axis.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     reps (int or list(int)): Number of repetitions per axis.
        ///
        /// Returns:
        ///     array: The tiled array.
        tile(a: Arr, reps: Ints, /, *, stream) => lz::tile(&a.0, &reps.0);
        /// Repeat each element of an array.
        ///
        /// Args:
        ///     array (array): Input array.
        ///     repeats (int): How many times to repeat each element.
        ///     axis (int, optional): Axis along which to repeat; ``None`` uses the flattened array.
        ///
        /// Returns:
        ///     array: The array with repeated elements.
        repeat(array: Arr, repeats: i64, axis: Option<i32> = None, *, stream) => lz::repeat(&array.0, repeats, axis);
        /// Shift elements along axes, wrapping around at the end.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     shift (int or list(int)): Number of places to shift, one per axis or one for all.
        ///     axis (int or list(int), optional): Axis or axes to roll along; ``None`` rolls the flattened array.
        ///
        /// Returns:
        ///     array: The rolled array.
        roll(a: Arr, /, shift: Ints, axis: Option<AxesArg> = None, *, stream) => lz::roll(&a.0, shift.0, axes(axis));
        /// Reverse the order of elements along axes.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     axis (int or list(int), optional): Axis or axes to flip; ``None`` flips all.
        ///
        /// Returns:
        ///     array: The flipped view.
        flip(a: Arr, /, axis: Option<AxesArg> = None, *, stream) => lz::flip(&a.0, axes(axis));
        /// A view of ``a``'s elements with the given shape, strides and offset; every element it reaches must lie inside ``a``.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     shape (int or list(int), optional): Shape of the view; by default that of ``a``.
        ///     strides (int or list(int), optional): Strides in elements; by default row-major for ``shape``.
        ///     offset (int): Offset in elements of the first element. Default: ``0``.
        ///
        /// Returns:
        ///     array: The strided view.
        as_strided(a: Arr, /, shape: Option<Shape> = None, strides: Option<Ints> = None, offset: i64 = 0, *, stream) => lz::as_strided(&a.0, shape.as_ref().map(|s| s.0.as_slice()), strides.as_ref().map(|s| s.0.as_slice()), offset);
        /// Reinterpret the bytes of an array as another element type.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     dtype (Dtype): The element type to view as.
        ///
        /// Returns:
        ///     array: The view; the last axis is rescaled by the ratio of the item sizes.
        view(a: Arr, dtype: Dt, stream) => lz::view(&a.0, dtype.0);
        /// Make an array row-major (C-contiguous), copying only if needed.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     allow_col_major (bool): Also accept a column-major array as it is. Default: ``False``.
        ///
        /// Returns:
        ///     array: The contiguous array.
        contiguous(a: Arr, /, allow_col_major: bool = false, *, stream) => lz::contiguous(&a.0, allow_col_major);

        /// Make an array of the given shape whose values are unspecified (lazulite fills zeros).
        ///
        /// Args:
        ///     shape (int or list(int)): Shape of the output.
        ///     dtype (Dtype, optional): Element type. Default: ``float32``.
        ///
        /// Returns:
        ///     array: The array.
        empty(shape: Shape, dtype: Option<Dt> = None, *, stream) => lz::empty(&shape.0, float32_or(dtype));
        /// Make an array with the shape of ``a``, filled with ``vals``.
        ///
        /// Args:
        ///     a (array): Array whose shape to use.
        ///     vals (array or scalar): Fill value, a scalar or an array broadcastable to ``a``'s shape.
        ///     dtype (Dtype, optional): Element type; by default that of ``a``.
        ///
        /// Returns:
        ///     array: The filled array.
        full_like(a: Arr, vals: Opd, dtype: Option<Dt> = None, *, stream) => lz::full_like(&a.0, vals.0, dtype.map(|d| d.0));
        /// ``num`` evenly spaced numbers from ``start`` to ``stop``.
        ///
        /// Args:
        ///     start (float): First value.
        ///     stop (float): Last value (included if ``endpoint``).
        ///     num (int): How many values. Default: ``50``.
        ///     endpoint (bool): Whether ``stop`` is included. Default: ``True``.
        ///     dtype (Dtype, optional): Element type. Default: ``float32``.
        ///
        /// Returns:
        ///     array: The numbers.
        linspace(start: f64, stop: f64, num: i64 = 50, endpoint: bool = true, dtype: Option<Dt> = None, stream) =>
            count("linspace", num).and_then(|num| lz::linspace(start, stop, num, endpoint, float32_or(dtype)));
        /// A 2-D array with ones on a diagonal and zeros elsewhere.
        ///
        /// Args:
        ///     n (int): Number of rows.
        ///     m (int, optional): Number of columns; by default ``n``.
        ///     k (int): Index of the diagonal (positive: above the main one). Default: ``0``.
        ///     dtype (Dtype, optional): Element type. Default: ``float32``.
        ///
        /// Returns:
        ///     array: The ``n x m`` array.
        eye(n: i64, m: Option<i64> = None, k: i64 = 0, dtype: Option<Dt> = None, *, stream) =>
            eye_size(n, m).and_then(|(n, m)| lz::eye(n, Some(m), k, float32_or(dtype)));
        /// The ``n x n`` identity matrix.
        ///
        /// Args:
        ///     n (int): Number of rows and columns.
        ///     dtype (Dtype, optional): Element type. Default: ``float32``.
        ///
        /// Returns:
        ///     array: The identity matrix.
        identity(n: i64, dtype: Option<Dt> = None, *, stream) =>
            eye_size(n, None).and_then(|(n, _)| lz::identity(n, float32_or(dtype)));
        /// A 2-D array with ones at and below a diagonal, zeros above.
        ///
        /// Args:
        ///     n (int): Number of rows.
        ///     m (int, optional): Number of columns; by default ``n``.
        ///     k (int): Index of the diagonal (positive: above the main one). Default: ``0``.
        ///     dtype (Dtype, optional): Element type. Default: ``float32``.
        ///
        /// Returns:
        ///     array: The ``n x m`` array.
        tri(n: usize, m: Option<usize> = None, k: i64 = 0, dtype: Option<Dt> = None, *, stream) => lz::tri(n, m, k, float32_or(dtype));
        /// Zero the elements above a diagonal of the last two axes.
        ///
        /// Args:
        ///     x (array): Input array (at least 2-D).
        ///     k (int): Index of the diagonal. Default: ``0``.
        ///
        /// Returns:
        ///     array: The lower triangle.
        tril(x: Arr, k: i64 = 0, *, stream) => lz::tril(&x.0, k);
        /// Zero the elements below a diagonal of the last two axes.
        ///
        /// Args:
        ///     x (array): Input array (at least 2-D).
        ///     k (int): Index of the diagonal. Default: ``0``.
        ///
        /// Returns:
        ///     array: The upper triangle.
        triu(x: Arr, k: i64 = 0, *, stream) => lz::triu(&x.0, k);
        /// Extract a diagonal of a 2-D array, or build a 2-D array from a 1-D diagonal.
        ///
        /// Args:
        ///     a (array): A 1-D or 2-D array.
        ///     k (int): Index of the diagonal. Default: ``0``.
        ///
        /// Returns:
        ///     array: The diagonal, or the diagonal matrix.
        diag(a: Arr, /, k: i64 = 0, *, stream) => lz::diag(&a.0, k);
        /// A diagonal of the sub-arrays spanned by ``axis1`` and ``axis2``; it becomes the last axis.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     offset (int): Index of the diagonal. Default: ``0``.
        ///     axis1 (int): First axis of the planes. Default: ``0``.
        ///     axis2 (int): Second axis of the planes. Default: ``1``.
        ///
        /// Returns:
        ///     array: The diagonals.
        diagonal(a: Arr, offset: i64 = 0, axis1: i32 = 0, axis2: i32 = 1, stream) => lz::diagonal(&a.0, offset, axis1, axis2);
        /// Sum along a diagonal of the sub-arrays spanned by ``axis1`` and ``axis2``.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     offset (int): Index of the diagonal. Default: ``0``.
        ///     axis1 (int): First axis of the planes. Default: ``0``.
        ///     axis2 (int): Second axis of the planes. Default: ``1``.
        ///     dtype (Dtype, optional): Element type of the result.
        ///
        /// Returns:
        ///     array: The sums.
        trace(a: Arr, /, offset: i64 = 0, axis1: i32 = 0, axis2: i32 = 1, dtype: Option<Dt> = None, *, stream) => lz::trace(&a.0, offset, axis1, axis2, dtype.map(|d| d.0));

        /// Pick elements from ``x`` where ``condition`` is true and from ``y`` elsewhere.
        ///
        /// Args:
        ///     condition (array or scalar): Boolean array or scalar.
        ///     x (array or scalar): Values where ``condition`` is true.
        ///     y (array or scalar): Values where ``condition`` is false.
        ///
        /// Returns:
        ///     array: The selection, broadcast over the three inputs.
        r#where(condition: Opd, x: Opd, y: Opd, /, *, stream) => paired(x, y, |x, y| lz::where_(condition.0, x, y));
        /// Limit the values of an array to ``[a_min, a_max]``.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     a_min (array or scalar, optional): Lower bound, or ``None`` for none.
        ///     a_max (array or scalar, optional): Upper bound, or ``None`` for none.
        ///
        /// Returns:
        ///     array: The clipped array.
        clip(a: Arr, /, a_min: Option<Opd>, a_max: Option<Opd>, *, stream) => lz::clip(&a.0, operand(a_min), operand(a_max));
        /// Replace NaN and infinities with finite numbers.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     nan (float): Value for NaN. Default: ``0``.
        ///     posinf (float, optional): Value for plus infinity; by default the largest finite value of the type.
        ///     neginf (float, optional): Value for minus infinity; by default the lowest finite value of the type.
        ///
        /// Returns:
        ///     array: The array with the replacements.
        nan_to_num(a: Arr, nan: f64 = 0.0, posinf: Option<f64> = None, neginf: Option<f64> = None, *, stream) => lz::nan_to_num(&a.0, nan, posinf, neginf);
        /// Elementwise ``abs(a - b) <= atol + rtol * abs(b)``.
        ///
        /// Args:
        ///     a (array): First input.
        ///     b (array): Second input.
        ///     rtol (float): Relative tolerance. Default: ``1e-05``.
        ///     atol (float): Absolute tolerance. Default: ``1e-08``.
        ///     equal_nan (bool): Count two NaNs as equal. Default: ``False``.
        ///
        /// Returns:
        ///     array: A boolean array.
        isclose(a: Arr, b: Arr, /, rtol: f64 = 1e-05, atol: f64 = 1e-08, *, equal_nan: bool = false, stream) => lz::isclose(&a.0, &b.0, rtol, atol, equal_nan);
        /// Whether every element of ``a`` is close to the matching one of ``b`` (see ``isclose``).
        ///
        /// Args:
        ///     a (array): First input.
        ///     b (array): Second input.
        ///     rtol (float): Relative tolerance. Default: ``1e-05``.
        ///     atol (float): Absolute tolerance. Default: ``1e-08``.
        ///     equal_nan (bool): Count two NaNs as equal. Default: ``False``.
        ///
        /// Returns:
        ///     array: A boolean scalar.
        allclose(a: Arr, b: Arr, /, rtol: f64 = 1e-05, atol: f64 = 1e-08, *, equal_nan: bool = false, stream) => lz::allclose(&a.0, &b.0, rtol, atol, equal_nan);
        /// Whether two arrays have the same shape and equal elements (types may differ).
        ///
        /// Args:
        ///     a (array or scalar): First input.
        ///     b (array or scalar): Second input.
        ///     equal_nan (bool): Count two NaNs as equal. Default: ``False``.
        ///
        /// Returns:
        ///     array: A boolean scalar.
        array_equal(a: Opd, b: Opd, equal_nan: bool = false, stream) => lz::array_equal(a.0, b.0, equal_nan);
    }
    methods {
        /// See :func:`flatten`.
        flatten[a](start_axis: i32 = 0, end_axis: i32 = -1, *, stream) => lz::flatten(&a, start_axis, end_axis);
        /// See :func:`squeeze`.
        squeeze[a](axis: Option<AxesArg> = None, *, stream) => lz::squeeze(&a, axes(axis));
        /// See :func:`swapaxes`.
        swapaxes[a](axis1: i32, axis2: i32, *, stream) => lz::swapaxes(&a, axis1, axis2);
        /// See :func:`moveaxis`.
        moveaxis[a](source: i32, destination: i32, *, stream) => lz::moveaxis(&a, source, destination);
        /// See :func:`split`.
        split[a](indices_or_sections: Sections, axis: i32 = 0, *, stream) => lz::split(&a, indices_or_sections.0, axis);
        /// See :func:`diagonal`.
        diagonal[a](offset: i64 = 0, axis1: i32 = 0, axis2: i32 = 1, stream) => lz::diagonal(&a, offset, axis1, axis2);
        /// See :func:`diag`.
        diag[a](k: i64 = 0, *, stream) => lz::diag(&a, k);
        /// See :func:`view`.
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

/// Give arrays at least 1 dimension, adding axes of size one where needed.
///
/// Args:
///     *arys (array): Input arrays.
///
/// Returns:
///     array or list(array): The array, or a list of arrays if several were given.
#[pyfunction]
#[pyo3(signature = (*arys, stream = None))]
#[allow(unused_variables)]
fn atleast_1d(
    py: Python<'_>,
    arys: &Bound<'_, PyTuple>,
    stream: Option<crate::devices::StreamOrDevice>,
) -> Res<Py<PyAny>> {
    at_least(py, arys, lz::atleast_1d)
}

/// Give arrays at least 2 dimensions, adding axes of size one where needed.
///
/// Args:
///     *arys (array): Input arrays.
///
/// Returns:
///     array or list(array): The array, or a list of arrays if several were given.
#[pyfunction]
#[pyo3(signature = (*arys, stream = None))]
#[allow(unused_variables)]
fn atleast_2d(
    py: Python<'_>,
    arys: &Bound<'_, PyTuple>,
    stream: Option<crate::devices::StreamOrDevice>,
) -> Res<Py<PyAny>> {
    at_least(py, arys, lz::atleast_2d)
}

/// Give arrays at least 3 dimensions, adding axes of size one where needed.
///
/// Args:
///     *arys (array): Input arrays.
///
/// Returns:
///     array or list(array): The array, or a list of arrays if several were given.
#[pyfunction]
#[pyo3(signature = (*arys, stream = None))]
#[allow(unused_variables)]
fn atleast_3d(
    py: Python<'_>,
    arys: &Bound<'_, PyTuple>,
    stream: Option<crate::devices::StreamOrDevice>,
) -> Res<Py<PyAny>> {
    at_least(py, arys, lz::atleast_3d)
}

/// Broadcast arrays against each other to one common shape.
///
/// Args:
///     *arrays (array): Input arrays.
///
/// Returns:
///     tuple(array): Views of the inputs with the broadcast shape.
#[pyfunction]
#[pyo3(signature = (*arrays, stream = None))]
#[allow(unused_variables)]
fn broadcast_arrays(
    py: Python<'_>,
    arrays: &Bound<'_, PyTuple>,
    stream: Option<crate::devices::StreamOrDevice>,
) -> Res<Py<PyAny>> {
    Ok(lz::broadcast_arrays(&arrays_of(arrays)?)?.into_python(py)?)
}

/// Coordinate grids from 1-D coordinate arrays.
///
/// Args:
///     *arrays (array): One 1-D array of coordinates per dimension.
///     sparse (bool): Return arrays with size-one axes that broadcast to the grid instead of
///         full grids. Default: ``False``.
///     indexing (str): ``"xy"`` (Cartesian: the first two axes swapped) or ``"ij"`` (matrix).
///         Default: ``"xy"``.
///
/// Returns:
///     tuple(array): One grid per input.
#[pyfunction]
#[pyo3(signature = (*arrays, sparse = false, indexing = "xy", stream = None))]
#[allow(unused_variables)]
fn meshgrid(
    py: Python<'_>,
    arrays: &Bound<'_, PyTuple>,
    sparse: bool,
    indexing: &str,
    stream: Option<crate::devices::StreamOrDevice>,
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
