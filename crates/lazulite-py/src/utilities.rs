//! Small `mlx.core` functions outside the op families: window functions, `convolve`,
//! `hadamard_transform`, `logical_xor`, `matrix_transpose`, `minmax`, `broadcast_shapes`,
//! `isdtype`, `result_type`, `can_cast`, `asarray`/`from_dlpack`,
//! `get_array_buffer_size`, `depends`, and MLX's aliases (`empty_like`, `cumulative_sum`,
//! `cumulative_prod`).

use crate::array::PyArray;
use crate::bind;
use crate::bind::Tuple;
use crate::convert::{array_of, scalar_of, Arr, AxesArg, CInt, Dt, Opd};
use crate::dtype::PyDtype;
use crate::errors::Res;
use lazulite::{self as lz, Array, Axes, DType};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};

bind! {
    functions {
        /// Element-wise logical exclusive or.
        ///
        /// Args:
        ///     a (array): First input array or scalar.
        ///     b (array): Second input array or scalar.
        ///
        /// Returns:
        ///     array: The boolean array containing the logical xor of ``a`` and ``b``.
        logical_xor(a: Opd, b: Opd, /, *, stream) => lz::logical_xor(a.0, b.0);
        /// Transpose the last two dimensions of the array.
        matrix_transpose(a: Arr, /, *, stream) => lz::matrix_transpose(&a.0);
        /// Return the minimum and maximum over the given axes.
        ///
        /// Equivalent to calling :func:`min` and :func:`max` separately.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     axis (int or list(int), optional): Axis or axes to reduce over. If
        ///         unspecified, reduce over the entire array.
        ///     keepdims (bool, optional): Keep reduced axes as singleton dimensions.
        ///         Default: ``False``.
        ///
        /// Returns:
        ///     tuple(array, array): The minimum and maximum arrays, in that order.
        minmax(a: Arr, /, axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) =>
            lz::minmax(&a.0, axis.map_or(Axes::All, Axes::from), keepdims).map(|(lo, hi)| Tuple(vec![lo, hi]));
        /// The Walsh-Hadamard transform along the last axis.
        ///
        /// Args:
        ///     a (array): Input array; its last axis has length ``m * 2**k`` with ``m`` in
        ///         (1, 12, 20, 28). Non-floating inputs are computed in float32.
        ///     scale (float, optional): Factor applied to the result. Default:
        ///         ``1/sqrt(n)``, which makes the transform orthonormal.
        ///
        /// Returns:
        ///     array: The transformed array.
        hadamard_transform(a: Arr, scale: Option<f64> = None, stream) =>
            lz::hadamard_transform(&a.0, scale.map(|s| s as f32));
        /// Return the Bartlett window: ``w(n) = 1 - |2n / (M - 1) - 1|``.
        ///
        /// Args:
        ///     M (int): Number of points in the output window.
        ///
        /// Returns:
        ///     array: The float32 window, with the maximum value normalized to one (the value
        ///     one appears only if the number of samples is odd).
        bartlett(M: CInt, *, stream) => lz::bartlett(M.0.into());
        /// Return the Blackman window:
        /// ``w(n) = 0.42 - 0.5 cos(2πn / (M - 1)) + 0.08 cos(4πn / (M - 1))``.
        ///
        /// Args:
        ///     M (int): Number of points in the output window.
        ///
        /// Returns:
        ///     array: The float32 window, with the maximum value normalized to one (the value
        ///     one appears only if the number of samples is odd).
        blackman(M: CInt, *, stream) => lz::blackman(M.0.into());
        /// Return the Hamming window: ``w(n) = 0.54 - 0.46 cos(2πn / (M - 1))``.
        ///
        /// Args:
        ///     M (int): Number of points in the output window.
        ///
        /// Returns:
        ///     array: The float32 window, with the maximum value normalized to one (the value
        ///     one appears only if the number of samples is odd).
        hamming(M: CInt, *, stream) => lz::hamming(M.0.into());
        /// Return the Hanning window: ``w(n) = 0.5 - 0.5 cos(2πn / (M - 1))``.
        ///
        /// Args:
        ///     M (int): Number of points in the output window.
        ///
        /// Returns:
        ///     array: The float32 window, with the maximum value normalized to one (the value
        ///     one appears only if the number of samples is odd).
        hanning(M: CInt, *, stream) => lz::hanning(M.0.into());
        /// The discrete convolution of 1D arrays.
        ///
        /// If ``v`` is longer than ``a``, then they are swapped. The conv filter is flipped
        /// following signal processing convention.
        ///
        /// Args:
        ///     a (array): 1D Input array.
        ///     v (array): 1D Input array.
        ///     mode (str, optional): {'full', 'valid', 'same'}
        ///
        /// Returns:
        ///     array: The convolved array.
        convolve(a: Arr, v: Arr, /, mode: &str = "full", *, stream) => lz::convolve(&a.0, &v.0, mode);
    }
    methods {}
}

/// Broadcast shapes.
///
/// Returns the shape that results from broadcasting the supplied array shapes against
/// each other.
///
/// Args:
///     *shapes (Sequence[int]): The shapes to broadcast.
///
/// Returns:
///     tuple: The broadcasted shape.
///
/// Raises:
///     ValueError: If the shapes cannot be broadcast.
#[pyfunction]
#[pyo3(signature = (*shapes))]
fn broadcast_shapes<'py>(
    py: Python<'py>,
    shapes: &Bound<'py, PyTuple>,
) -> PyResult<Bound<'py, PyTuple>> {
    let shapes = shapes
        .iter()
        .map(|s| {
            s.extract::<Vec<usize>>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "broadcast_shapes() takes sequences of non-negative ints, not {}",
                    s.repr().map_or_else(|_| "?".into(), |r| r.to_string())
                ))
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    let Some((first, rest)) = shapes.split_first() else {
        return Err(PyValueError::new_err(
            "[broadcast_shapes] Must provide at least one shape.",
        ));
    };
    let mut out = first.clone();
    for shape in rest {
        out = lz::broadcast_shapes(&out, shape).map_err(|_| {
            PyValueError::new_err(format!(
                "[broadcast_shapes] Shapes {} and {} cannot be broadcast.",
                shape_text(&out),
                shape_text(shape)
            ))
        })?;
    }
    PyTuple::new(py, out)
}

/// A shape as MLX writes it in messages: `(2,3)`, `(4)`.
fn shape_text(shape: &[usize]) -> String {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    format!("({})", dims.join(","))
}

/// Whether `dtype` is of the kind named `kind` (the array API's kind strings).
fn is_kind(dtype: DType, kind: &str) -> PyResult<bool> {
    Ok(match kind {
        "bool" => dtype.is_bool(),
        "signed integer" => dtype.is_signed_integer(),
        "unsigned integer" => dtype.is_unsigned(),
        "integral" => dtype.is_integer(),
        "real floating" => dtype.is_floating(),
        "complex floating" => dtype.is_complex(),
        "numeric" => !dtype.is_bool(),
        _ => {
            return Err(PyValueError::new_err(format!(
                "[isdtype] Unknown data type kind: '{kind}'."
            )))
        }
    })
}

/// Whether `dtype` matches `kind`: a dtype, a kind string or a tuple of those.
fn matches_kind(dtype: DType, kind: &Bound<'_, PyAny>, nested: bool) -> PyResult<bool> {
    if let Ok(other) = kind.extract::<PyDtype>() {
        return Ok(other.0 == dtype);
    }
    if let Ok(name) = kind.cast::<PyString>() {
        return is_kind(dtype, name.to_str()?);
    }
    if let (Ok(kinds), false) = (kind.cast::<PyTuple>(), nested) {
        for k in kinds.iter() {
            if matches_kind(dtype, &k, true)? {
                return Ok(true);
            }
        }
        return Ok(false);
    }
    Err(PyValueError::new_err(
        "[isdtype] `kind` must be a dtype, a string, or a tuple of dtypes and strings.",
    ))
}

/// Test whether a dtype belongs to one or more data type kinds.
///
/// Args:
///     dtype (Dtype): The dtype to test.
///     kind (Dtype, str, or tuple): A dtype, a kind string, or a tuple of dtypes and kind
///         strings. Supported kind strings are ``"bool"``, ``"signed integer"``,
///         ``"unsigned integer"``, ``"integral"``, ``"real floating"``,
///         ``"complex floating"``, and ``"numeric"``.
///
/// Returns:
///     bool: ``True`` if ``dtype`` matches any of the given kinds.
#[pyfunction]
fn isdtype(dtype: Dt, kind: &Bound<'_, PyAny>) -> PyResult<bool> {
    matches_kind(dtype.0, kind, false)
}

/// An array, a dtype or a scalar, as `result_type` takes.
#[derive(FromPyObject)]
pub enum DtypeSource<'py> {
    Array(PyRef<'py, PyArray>),
    Dtype(PyDtype),
    Other(Bound<'py, PyAny>),
}

/// The dtype a binary op would give its inputs: arrays and dtypes promote, Python scalars
/// adapt to them (weak typing).
#[pyfunction]
#[pyo3(signature = (*arrays_and_dtypes))]
pub fn result_type(arrays_and_dtypes: Vec<DtypeSource<'_>>) -> Res<PyDtype> {
    if arrays_and_dtypes.is_empty() {
        return Err(PyValueError::new_err(
            "[result_type] At least one array or dtype is required.",
        )
        .into());
    }
    let mut strong = None;
    let mut scalars = Vec::new();
    for source in &arrays_and_dtypes {
        let dtype = match source {
            DtypeSource::Array(a) => a.array().dtype(),
            DtypeSource::Dtype(d) => d.0,
            DtypeSource::Other(obj) => {
                scalars.push(scalar_of(obj)?.ok_or_else(|| {
                    PyValueError::new_err("[result_type] Inputs must be arrays or dtypes.")
                })?);
                continue;
            }
        };
        strong = Some(strong.map_or(dtype, |s| lazulite::promote_types(s, dtype)));
    }
    let Some(strong) = strong else {
        return Err(PyValueError::new_err("[result_type] Inputs must be arrays or dtypes.").into());
    };
    let dtype = scalars.into_iter().fold(strong, |acc, s| {
        lazulite::promote_types(acc, s.dtype_next_to(strong))
    });
    Ok(PyDtype(dtype))
}

/// An array or a dtype, as `can_cast` takes.
#[derive(FromPyObject)]
pub enum ArrayOrDtype<'py> {
    Array(PyRef<'py, PyArray>),
    Dtype(PyDtype),
}

/// Whether values of `from_` convert to `to` without loss in general (NumPy's "safe").
#[pyfunction]
pub fn can_cast(from_: ArrayOrDtype<'_>, to: PyDtype) -> bool {
    let from = match from_ {
        ArrayOrDtype::Array(a) => a.array().dtype(),
        ArrayOrDtype::Dtype(d) => d.0,
    };
    lazulite::can_cast(from, to.0)
}

/// Get the size of the buffers backing arrays in bytes.
///
/// Each unique buffer is counted once. Arrays must be evaluated before calling this
/// function. The result does not include graph objects, cached buffers, or other
/// non-buffer memory.
///
/// Args:
///     *args (arrays or trees of arrays): Each argument can be a single array or a tree of
///         arrays. Leaves which are not arrays are ignored.
///
/// Returns:
///     int: The size of the unique buffers in bytes.
#[pyfunction]
#[pyo3(signature = (*args))]
fn get_array_buffer_size(args: &Bound<'_, PyTuple>) -> Res<usize> {
    let mut arrays: Vec<Array> = Vec::new();
    crate::trees::leaves(args.as_any(), false, &mut arrays)?;
    Ok(lz::get_array_buffer_size(
        &arrays.iter().collect::<Vec<_>>(),
    )?)
}

/// The error of a `copy=False` conversion: lazulite copies what it converts, as MLX does
/// on the CPU.
fn copy_needed(obj: &Bound<'_, PyAny>) -> PyErr {
    let message = if obj.hasattr("__dlpack__").unwrap_or(false) && !obj.is_instance_of::<PyArray>()
    {
        "[convert] Cannot import a CPU array without a copy."
    } else {
        "Unable to avoid copy while creating an array as requested."
    };
    PyValueError::new_err(message)
}

/// Convert the input to an array.
///
/// Args:
///     a: Input data.
///     dtype (Dtype, optional): The desired data-type for the array.
///     copy (bool, optional): Whether to copy the input. If ``True`` or ``None``, the
///         data is copied (as MLX does on the CPU); ``False`` raises, as a copy is required.
///
/// Returns:
///     array: An array interpretation of the input.
///
/// Raises:
///     ValueError: If ``copy`` is ``False``.
#[pyfunction]
#[pyo3(signature = (a, dtype = None, *, copy = None))]
fn asarray(a: &Bound<'_, PyAny>, dtype: Option<Dt>, copy: Option<bool>) -> Res<PyArray> {
    if copy == Some(false) {
        return Err(copy_needed(a).into());
    }
    Ok(array_of(a, dtype.map(|d| d.0))?.into())
}

/// Create an array from an object that supports DLPack.
///
/// Args:
///     x: Input object implementing ``__dlpack__`` and ``__dlpack_device__``.
///     copy (bool, optional): Whether to copy the input. If ``True`` or ``None``, the data
///         is copied (as MLX does on the CPU); ``False`` raises, as a copy is required.
///
/// Returns:
///     array: An array containing the input data.
#[pyfunction]
#[pyo3(signature = (x, /, *, copy = None))]
fn from_dlpack(x: &Bound<'_, PyAny>, copy: Option<bool>) -> Res<PyArray> {
    if !x.hasattr("__dlpack__")? {
        return Err(PyTypeError::new_err(format!(
            "from_dlpack() takes an object implementing __dlpack__, not {}",
            x.get_type().name()?
        ))
        .into());
    }
    asarray(x, None, copy)
}

/// The arrays of a `depends` argument: one array or a sequence of arrays; whether it was
/// one array.
fn arrays_of(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<(Vec<Array>, bool)> {
    if let Ok(a) = obj.cast::<PyArray>() {
        return Ok((vec![a.borrow().array()], true));
    }
    let items = obj.try_iter().map_err(|_| {
        PyTypeError::new_err(format!(
            "[depends] {what} must be an array or a sequence of arrays."
        ))
    })?;
    let arrays = items
        .map(|item| {
            item?
                .cast::<PyArray>()
                .map(|a| a.borrow().array())
                .map_err(|_| {
                    PyTypeError::new_err(format!(
                        "[depends] {what} must be an array or a sequence of arrays."
                    ))
                })
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok((arrays, false))
}

/// Insert dependencies between arrays in the graph. The outputs are identical to
/// ``inputs`` but with dependencies on ``dependencies``: evaluating them evaluates
/// ``dependencies`` first. Gradients flow to ``inputs`` only.
///
/// Args:
///     inputs (array or Sequence[array]): The input array or arrays.
///     dependencies (array or Sequence[array]): The array or arrays to insert
///         dependencies on.
///
/// Returns:
///     array or Sequence[array]: The outputs which depend on dependencies.
#[pyfunction]
fn depends(
    py: Python<'_>,
    inputs: &Bound<'_, PyAny>,
    dependencies: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    let (inputs, single) = arrays_of(inputs, "inputs")?;
    let (dependencies, _) = arrays_of(dependencies, "dependencies")?;
    let mut outputs = lz::depends(&inputs, &dependencies).map_err(crate::errors::to_py_err)?;
    if single {
        return bind::Returned::into_python(outputs.remove(0), py);
    }
    bind::Returned::into_python(outputs, py)
}

/// Adds this file's functions to `module`, and MLX's aliases of existing functions (call
/// after `zeros_like`, `cumsum` and `cumprod` are registered).
pub fn register_all(module: &Bound<'_, PyModule>) -> PyResult<()> {
    register(module)?;
    module.add_function(wrap_pyfunction!(broadcast_shapes, module)?)?;
    module.add_function(wrap_pyfunction!(isdtype, module)?)?;
    module.add_function(wrap_pyfunction!(result_type, module)?)?;
    module.add_function(wrap_pyfunction!(can_cast, module)?)?;
    module.add_function(wrap_pyfunction!(get_array_buffer_size, module)?)?;
    module.add_function(wrap_pyfunction!(asarray, module)?)?;
    module.add_function(wrap_pyfunction!(from_dlpack, module)?)?;
    module.add_function(wrap_pyfunction!(depends, module)?)?;
    for (alias, name) in [
        ("empty_like", "zeros_like"),
        ("cumulative_sum", "cumsum"),
        ("cumulative_prod", "cumprod"),
    ] {
        module.add(alias, module.getattr(name)?)?;
    }
    Ok(())
}
