//! Python values to lazulite values, written once for every binding: array-likes,
//! weakly typed scalars, shapes, axes.

use crate::array::PyArray;
use crate::errors::Res;
use crate::signature::Hint;
use lazulite::{Array, Axes, Complex, DType, Operand, Scalar};
use numpy::{PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyComplex, PyFloat, PyInt, PyList, PyTuple, PyType};

/// The `numpy` module, imported once.
pub fn numpy(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    static NUMPY: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    Ok(NUMPY
        .get_or_try_init(py, || py.import("numpy").map(Bound::unbind))?
        .bind(py))
}

/// `numpy.generic`, the base class of NumPy's scalars, looked up once.
fn numpy_scalar_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    static GENERIC: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    Ok(GENERIC
        .get_or_try_init(py, || {
            numpy(py)?
                .getattr("generic")?
                .cast_into::<PyType>()
                .map(Bound::unbind)
                .map_err(PyErr::from)
        })?
        .bind(py))
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "object".into(), |n| n.to_string())
}

fn invalid_type(obj: &Bound<'_, PyAny>) -> PyErr {
    PyValueError::new_err(format!(
        "Invalid type {} received in array initialization.",
        type_name(obj)
    ))
}

/// An object standing for an array through its `__mlx_array__` method, as MLX's type of
/// that name: ops take it where they take the object itself.
///
/// ```python
/// class Wrapped:
///     def __mlx_array__(self):
///         return mx.array([1, 2])
///
/// mx.array([1, 2]) + mx.ArrayLike(Wrapped())  # array([2, 4], dtype=int32)
/// ```
#[pyclass(name = "ArrayLike", module = "lazulite.core", frozen)]
pub struct ArrayLike {
    inner: Py<PyAny>,
}

#[pymethods]
impl ArrayLike {
    #[new]
    #[pyo3(signature = (arg, /))]
    fn new(arg: Py<PyAny>) -> ArrayLike {
        ArrayLike { inner: arg }
    }
}

/// The array an object gives through MLX's `__mlx_array__` protocol (directly or wrapped
/// in [`ArrayLike`]), as it gives it: it keeps its own dtype next to another array, as a
/// lazulite array does. `None` for an object without the method.
pub fn protocol_array(obj: &Bound<'_, PyAny>) -> PyResult<Option<Array>> {
    let wrapped;
    let obj = match obj.cast::<ArrayLike>() {
        Ok(like) => {
            wrapped = like.get().inner.bind(obj.py()).clone();
            &wrapped
        }
        Err(_) => obj,
    };
    let Some(method) = obj.getattr_opt(pyo3::intern!(obj.py(), "__mlx_array__"))? else {
        return Ok(None);
    };
    let given = method.call0()?;
    match given.cast::<PyArray>() {
        Ok(a) => Ok(Some(a.get().array())),
        Err(_) => Err(PyTypeError::new_err(format!(
            "{}.__mlx_array__() returned {}, not an array.",
            type_name(obj),
            type_name(&given)
        ))),
    }
}

/// A Python or NumPy scalar as a weakly typed scalar; `None` for anything else.
pub fn scalar_of(obj: &Bound<'_, PyAny>) -> PyResult<Option<Scalar>> {
    if obj.is_instance_of::<PyBool>() {
        return Ok(Some(Scalar::Bool(obj.extract()?)));
    }
    if obj.is_instance_of::<PyInt>() {
        let v: i64 = obj.extract().map_err(|_| {
            PyOverflowError::new_err(format!(
                "Python int {obj} is too large to convert to an array element."
            ))
        })?;
        return Ok(Some(Scalar::Int(v)));
    }
    if obj.is_instance_of::<PyFloat>() {
        return Ok(Some(Scalar::Float(obj.extract()?)));
    }
    if let Ok(c) = obj.cast::<PyComplex>() {
        return Ok(Some(Scalar::Complex(c.real(), c.imag())));
    }
    // Arrays, the usual other operand, skip the attribute lookup on NumPy below.
    if obj.cast::<PyArray>().is_ok() {
        return Ok(None);
    }
    let generic = numpy_scalar_type(obj.py())?;
    if obj.is_instance(generic)? {
        let item = obj.call_method0("item")?;
        if !item.is_instance(generic)? {
            return scalar_of(&item);
        }
    }
    Ok(None)
}

/// A 0-d array holding `s`: of `dtype` (C-cast semantics, as `mx.array(300, mx.uint8)`)
/// or of the scalar's own default dtype.
fn scalar_array(s: Scalar, dtype: Option<DType>) -> Res<Array> {
    Ok(Array::from_scalar(s, dtype.unwrap_or(s.default_dtype())))
}

/// The lazulite dtype NumPy's `descr` holds, if lazulite has it.
fn numpy_dtype(kind: u8, size: usize) -> Option<DType> {
    use DType::*;
    Some(match (kind, size) {
        (b'b', 1) => Bool,
        (b'u', 1) => UInt8,
        (b'u', 2) => UInt16,
        (b'u', 4) => UInt32,
        (b'u', 8) => UInt64,
        (b'i', 1) => Int8,
        (b'i', 2) => Int16,
        (b'i', 4) => Int32,
        (b'i', 8) => Int64,
        (b'f', 2) => Float16,
        (b'f', 4) => Float32,
        (b'f', 8) => Float64,
        (b'c', 8) => Complex64,
        _ => return None,
    })
}

/// A copy of a NumPy array. Without `dtype`, float64 becomes float32 and complex128
/// complex64, as in MLX.
fn from_numpy(arr: &Bound<'_, PyUntypedArray>, dtype: Option<DType>) -> Res<Array> {
    let descr = arr.dtype();
    let (kind, size) = (descr.kind(), descr.itemsize());
    // ml_dtypes' bfloat16 is a NumPy extension dtype: kind 'V', 2 bytes, named "bfloat16".
    let bfloat16 = kind == b'V'
        && size == 2
        && descr.getattr("name")?.extract::<String>().ok().as_deref() == Some("bfloat16");
    let source = if bfloat16 {
        Some(DType::BFloat16)
    } else {
        numpy_dtype(kind, size)
    };
    let ready = source.is_some()
        && arr.is_c_contiguous()
        && arr.is_aligned()
        && descr.is_native_byteorder() != Some(false);
    let Some(source) = source.filter(|_| ready) else {
        let np = numpy(arr.py())?;
        if bfloat16 {
            let copy = np.call_method1("ascontiguousarray", (arr,))?;
            return from_numpy(copy.cast::<PyUntypedArray>().map_err(PyErr::from)?, dtype);
        }
        let target = match (kind, size) {
            (b'c', _) => "complex64".to_string(),
            _ if source.is_some() => descr.getattr("name")?.extract::<String>()?,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "Invalid type numpy.ndarray of dtype {} received in array initialization.",
                    descr.str()?
                ))
                .into())
            }
        };
        let copy = np.call_method1("ascontiguousarray", (arr, target))?;
        return from_numpy(copy.cast::<PyUntypedArray>().map_err(PyErr::from)?, dtype);
    };
    let nbytes = arr.len() * size;
    let bytes = if nbytes == 0 {
        &[][..]
    } else {
        // SAFETY: a C-contiguous, aligned array has `len * itemsize` bytes at `data`,
        // alive while `arr` is borrowed.
        unsafe {
            std::slice::from_raw_parts((*arr.as_array_ptr()).fields.data as *const u8, nbytes)
        }
    };
    let a = Array::from_bytes(bytes, arr.shape(), source)?;
    let default = match source {
        DType::Float64 => DType::Float32,
        other => other,
    };
    materialized(a.astype(dtype.unwrap_or(default))?)
}

/// Whether `obj` exports the buffer protocol.
fn has_buffer(obj: &Bound<'_, PyAny>) -> bool {
    // SAFETY: a type check on a live object.
    unsafe { pyo3::ffi::PyObject_CheckBuffer(obj.as_ptr()) != 0 }
}

/// Arrays from anything MLX accepts except lists: lazulite arrays, objects that give one
/// (`__mlx_array__`, [`protocol_array`]), scalars, NumPy arrays (copied, as in MLX),
/// DLPack producers (JAX, PyTorch, ...: shared, see `dlpack`), buffer-protocol objects,
/// objects with `__array__`.
fn array_from_non_list(obj: &Bound<'_, PyAny>, dtype: Option<DType>) -> Res<Option<Array>> {
    let native = match obj.cast::<PyArray>() {
        Ok(a) => Some(a.get().array()),
        Err(_) => protocol_array(obj)?,
    };
    if let Some(a) = native {
        return Ok(Some(match dtype {
            Some(d) => a.astype(d)?,
            None => a,
        }));
    }
    foreign_array(obj, dtype)
}

/// Arrays from the objects of [`array_from_non_list`] that are neither lazulite arrays
/// nor give one through `__mlx_array__`, for callers that have looked for those already.
pub fn foreign_array(obj: &Bound<'_, PyAny>, dtype: Option<DType>) -> Res<Option<Array>> {
    let np = numpy(obj.py())?;
    if obj.is_instance(numpy_scalar_type(obj.py())?)? {
        // A NumPy scalar keeps its dtype, as a 0-d NumPy array does.
        let arr = np.call_method1("asarray", (obj,))?;
        return Ok(Some(from_numpy(
            arr.cast::<PyUntypedArray>().map_err(PyErr::from)?,
            dtype,
        )?));
    }
    if let Some(s) = scalar_of(obj)? {
        return Ok(Some(scalar_array(s, dtype)?));
    }
    if let Ok(arr) = obj.cast::<PyUntypedArray>() {
        return Ok(Some(from_numpy(arr, dtype)?));
    }
    if obj.hasattr("__dlpack__")? {
        if let Some(a) = crate::dlpack::import(obj)? {
            let default = match a.dtype() {
                DType::Float64 => DType::Float32,
                other => other,
            };
            return Ok(Some(a.astype(dtype.unwrap_or(default))?));
        }
    }
    let converted = if has_buffer(obj) {
        let view = obj
            .py()
            .get_type::<pyo3::types::PyMemoryView>()
            .call1((obj,))?;
        np.call_method1("asarray", (view,))?
    } else if obj.hasattr("__array__")? || obj.hasattr("__array_interface__")? {
        np.call_method1("asarray", (obj,))?
    } else {
        return Ok(None);
    };
    Ok(Some(from_numpy(
        converted.cast::<PyUntypedArray>().map_err(PyErr::from)?,
        dtype,
    )?))
}

fn is_sequence(obj: &Bound<'_, PyAny>) -> bool {
    obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>()
}

/// One element of a nested list while it is walked: a list or tuple still to open, an
/// array (opened along its first axis where lists sit beside it), or a Python scalar.
enum Nested<'py> {
    List(Bound<'py, PyAny>),
    Array(Array),
    Value(Scalar),
}

impl<'py> Nested<'py> {
    fn of(obj: Bound<'py, PyAny>) -> Res<Nested<'py>> {
        if is_sequence(&obj) {
            return Ok(Nested::List(obj));
        }
        if let Some(s) = scalar_of(&obj)? {
            return Ok(Nested::Value(s));
        }
        match array_from_non_list(&obj, None)? {
            Some(a) => Ok(Nested::Array(a)),
            None => Err(invalid_type(&obj).into()),
        }
    }

    /// The length of the next level down, if this element has one.
    fn len(&self) -> PyResult<Option<usize>> {
        Ok(match self {
            Nested::List(l) => Some(l.len()?),
            Nested::Array(a) if a.ndim() > 0 => Some(a.shape()[0]),
            _ => None,
        })
    }
}

/// An array from nested lists/tuples of scalars and arrays, walked level by level (no
/// recursion, whatever the nesting depth). An array beside lists counts as the nested
/// list of its rows, as in MLX (`mx.array([mx.array([1, 2]), [3, 4]])`).
fn array_from_nested(obj: &Bound<'_, PyAny>, dtype: Option<DType>) -> Res<Array> {
    let mut shape = Vec::new();
    let mut level = vec![Nested::List(obj.clone())];
    while level.iter().any(|n| matches!(n, Nested::List(_))) {
        let lens = level
            .iter()
            .map(Nested::len)
            .collect::<PyResult<Vec<_>>>()?;
        let len = match lens[0] {
            Some(len) if lens.iter().all(|&l| l == Some(len)) => len,
            first => {
                let message = if first.is_some() {
                    "Initialization encountered non-uniform length."
                } else {
                    "Initialization encountered extra dimension."
                };
                return Err(PyValueError::new_err(message).into());
            }
        };
        let mut next = Vec::with_capacity(len * level.len());
        for item in level {
            match item {
                Nested::List(l) => {
                    for child in l.try_iter()? {
                        next.push(Nested::of(child?)?);
                    }
                }
                Nested::Array(a) => {
                    next.extend(lazulite::unstack(&a, 0)?.into_iter().map(Nested::Array))
                }
                Nested::Value(_) => unreachable!("every element has a next level"),
            }
        }
        shape.push(len);
        level = next;
    }
    let scalars: Vec<Scalar> = level
        .iter()
        .filter_map(|n| match n {
            Nested::Value(s) => Some(*s),
            _ => None,
        })
        .collect();
    if scalars.len() == level.len() {
        return array_from_scalars(&scalars, &shape, dtype);
    }
    // Python scalars beside (0-d) arrays take the dtype they would take alone.
    let natural = match scalars.is_empty() {
        true => None,
        false => Some(array_from_scalars(&scalars, &[scalars.len()], None)?.dtype()),
    };
    let leaves = level
        .into_iter()
        .map(|n| match n {
            Nested::Array(a) => Ok(a),
            Nested::Value(s) => scalar_array(s, natural),
            Nested::List(_) => unreachable!("lists are all opened"),
        })
        .collect::<Res<Vec<Array>>>()?;
    array_from_leaves(&leaves, shape, dtype)
}

/// An array of `shape` from flat scalars: complex if any is complex, else float if any is
/// float, else int (int64 if a value needs it), else bool.
fn array_from_scalars(scalars: &[Scalar], shape: &[usize], dtype: Option<DType>) -> Res<Array> {
    let kind = |s: &Scalar| match s {
        Scalar::Bool(_) => 0,
        Scalar::Int(_) => 1,
        Scalar::Float(_) => 2,
        Scalar::Complex(..) => 3,
    };
    // Each value is first made the widest kind present, then converted to the dtype.
    let (values, default): (Vec<Scalar>, DType) = match scalars.iter().map(kind).max() {
        Some(0) => (
            scalars
                .iter()
                .map(|s| Scalar::Bool(s.to_f64() != 0.0))
                .collect(),
            DType::Bool,
        ),
        Some(1) => {
            let values: Vec<i64> = scalars.iter().map(|s| s.to_elem::<i64>()).collect();
            let wide = values.iter().any(|&v| i32::try_from(v).is_err());
            let default = if wide { DType::Int64 } else { DType::Int32 };
            (values.into_iter().map(Scalar::Int).collect(), default)
        }
        Some(3) => (
            scalars
                .iter()
                .map(|s| {
                    let c = s.to_elem::<Complex>();
                    Scalar::Complex(f64::from(c.re), f64::from(c.im))
                })
                .collect(),
            DType::Complex64,
        ),
        _ => (
            scalars.iter().map(|s| Scalar::Float(s.to_f64())).collect(),
            DType::Float32,
        ),
    };
    Ok(Array::from_scalars(
        &values,
        shape,
        dtype.unwrap_or(default),
    )?)
}

/// `a` computed now: an array made from Python data holds its values (as in MLX), so an
/// index array made from a list is checked when used, and a cast is not redone per use.
fn materialized(a: Array) -> Res<Array> {
    a.eval()?;
    Ok(a)
}

/// An array from the arrays at the leaves of a (nested) list: all must have one shape,
/// which is appended to the list's.
fn array_from_leaves(arrays: &[Array], mut shape: Vec<usize>, dtype: Option<DType>) -> Res<Array> {
    let leaf_shape = arrays[0].shape().to_vec();
    if arrays.iter().any(|a| a.shape() != leaf_shape) {
        return Err(PyValueError::new_err("Initialization encountered non-uniform length.").into());
    }
    let dtype = dtype.unwrap_or_else(|| {
        arrays
            .iter()
            .map(Array::dtype)
            .reduce(lazulite::promote_types)
            .expect("at least one leaf")
    });
    let mut bytes = Vec::new();
    for a in arrays {
        let raw = a.astype(dtype)?.raw_data_contiguous()?;
        let n = a.size() * dtype.size();
        if n > 0 {
            // SAFETY: contiguous data of `n` bytes, kept alive by `raw`.
            bytes.extend_from_slice(unsafe { std::slice::from_raw_parts(raw.ptr(), n) });
        }
    }
    shape.extend(leaf_shape);
    Ok(Array::from_bytes(&bytes, &shape, dtype)?)
}

/// `mx.array(val, dtype)`: everything an array can be made from, nested lists included.
pub fn array_of(obj: &Bound<'_, PyAny>, dtype: Option<DType>) -> Res<Array> {
    if is_sequence(obj) {
        return array_from_nested(obj, dtype);
    }
    array_from_non_list(obj, dtype)?.ok_or_else(|| invalid_type(obj).into())
}

/// An array argument of an op: an array, a scalar, or anything with array data
/// (NumPy, buffer protocol); lists are refused as in MLX.
pub struct Arr(pub Array);

impl<'a, 'py> FromPyObject<'a, 'py> for Arr {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Arr> {
        let obj = obj.to_owned();
        if is_sequence(&obj) {
            return Err(invalid_type(&obj));
        }
        Ok(Arr(
            array_from_non_list(&obj, None)?.ok_or_else(|| invalid_type(&obj))?
        ))
    }
}

impl Hint for Arr {
    fn hint() -> String {
        "array".into()
    }
}

/// An operand of a binary op: Python scalars stay weakly typed (they adapt to the
/// other operand's dtype), anything else becomes an array as [`Arr`]. An array from
/// outside lazulite (NumPy's, a buffer) keeps its Python object in `.1`, to be converted
/// again next to a lazulite array (see [`mlx_pair`]).
pub struct Opd(pub Operand, pub Option<Py<PyAny>>);

impl<'a, 'py> FromPyObject<'a, 'py> for Opd {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Opd> {
        if let Some(s) = scalar_of(&obj)? {
            return Ok(Opd(Operand::Scalar(s), None));
        }
        if let Ok(a) = obj.cast::<PyArray>() {
            return Ok(Opd(Operand::Array(a.get().array()), None));
        }
        if let Some(a) = protocol_array(&obj)? {
            return Ok(Opd(Operand::Array(a), None));
        }
        let obj = obj.to_owned();
        let array = match is_sequence(&obj) {
            true => None,
            false => foreign_array(&obj, None)?,
        };
        let array = array.ok_or_else(|| invalid_type(&obj))?;
        Ok(Opd(Operand::Array(array), Some(obj.unbind())))
    }
}

/// `op` of two operands paired as MLX pairs them (see [`mlx_pair`]).
pub fn paired<T>(
    a: Opd,
    b: Opd,
    op: impl FnOnce(Operand, Operand) -> lazulite::Result<T>,
) -> PyResult<T> {
    let (a, b) = mlx_pair(a, b)?;
    op(a, b).map_err(crate::errors::to_py_err)
}

/// The two operands of an op as MLX pairs them: an array from outside lazulite next to a
/// lazulite array is converted with that array's dtype, as MLX builds it (`mx.array([1, 2])
/// + np.array([1.5, 2.5])` is int32 `[2, 4]`); scalars and other pairs stay as they are.
fn mlx_pair(a: Opd, b: Opd) -> PyResult<(Operand, Operand)> {
    // The dtype of a lazulite array operand, and an operand converted to a dtype.
    let native = |o: &Opd| match (&o.0, &o.1) {
        (Operand::Array(a), None) => Some(a.dtype()),
        _ => None,
    };
    let like = |o: Opd, dtype: DType| -> PyResult<Operand> {
        match o.1 {
            // Converted already with that dtype (its default one): the same values.
            Some(_) if matches!(&o.0, Operand::Array(a) if a.dtype() == dtype) => Ok(o.0),
            Some(obj) => Python::attach(|py| {
                let obj = obj.bind(py);
                let array = foreign_array(obj, Some(dtype))?.ok_or_else(|| invalid_type(obj))?;
                Ok(Operand::Array(array))
            }),
            None => Ok(o.0),
        }
    };
    match (native(&a), native(&b)) {
        (Some(dtype), _) => Ok((a.0, like(b, dtype)?)),
        (None, Some(dtype)) => Ok((like(a, dtype)?, b.0)),
        (None, None) => Ok((a.0, b.0)),
    }
}

impl Hint for Opd {
    fn hint() -> String {
        "scalar | array".into()
    }
}

/// A dtype argument: only `Dtype` objects are accepted (no strings or Python types).
pub struct Dt(pub DType);

impl<'a, 'py> FromPyObject<'a, 'py> for Dt {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Dt> {
        let d: crate::dtype::PyDtype = obj.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "Expected a Dtype (such as float32) but got {}.",
                type_name(&obj)
            ))
        })?;
        Ok(Dt(d.0))
    }
}

impl Hint for Dt {
    fn hint() -> String {
        "Dtype".into()
    }
}

/// An int MLX reads as a C `int` (window lengths, key counts, section counts): a value
/// outside its range is a `TypeError`, as MLX's binding raises, instead of being taken
/// at its word and computing billions of values.
pub struct CInt(pub i32);

impl<'a, 'py> FromPyObject<'a, 'py> for CInt {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<CInt> {
        let wrong = || {
            PyTypeError::new_err(format!(
                "Expected an int in a C int's range (-2147483648 to 2147483647) but got {}.",
                obj.repr()
                    .map_or_else(|_| type_name(&obj), |r| r.to_string())
            ))
        };
        if obj.is_instance_of::<PyFloat>() {
            return Err(wrong());
        }
        let v: i64 = obj.extract().map_err(|_| wrong())?;
        i32::try_from(v).map(CInt).map_err(|_| wrong())
    }
}

impl Hint for CInt {
    fn hint() -> String {
        "int".into()
    }
}

/// An int or a sequence of ints. Python's `True` and `False` count as 1 and 0, as in
/// MLX's binding (`mx.zeros((True, 2))` has shape `(1, 2)`).
fn ints(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<i64>> {
    if obj.is_instance_of::<PyFloat>() {
        return Err(PyTypeError::new_err(format!(
            "Expected an int or a sequence of ints for {what} but got {}.",
            type_name(obj)
        )));
    }
    // Sequences first: trying one as an int would build and drop a Python error.
    if is_sequence(obj) {
        return obj
            .try_iter()?
            .map(|item| {
                let item = item?;
                if item.is_instance_of::<PyFloat>() {
                    return Err(PyTypeError::new_err(format!(
                        "Expected ints in {what} but got {}.",
                        type_name(&item)
                    )));
                }
                item.extract::<i64>()
            })
            .collect();
    }
    if let Ok(v) = obj.extract::<i64>() {
        return Ok(vec![v]);
    }
    Err(PyTypeError::new_err(format!(
        "Expected an int or a sequence of ints for {what} but got {}.",
        type_name(obj)
    )))
}

/// A shape: an int or a sequence of non-negative ints.
pub struct Shape(pub Vec<usize>);

impl<'a, 'py> FromPyObject<'a, 'py> for Shape {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Shape> {
        let dims = ints(&obj, "shape")?;
        dims.iter()
            .map(|&d| {
                usize::try_from(d)
                    .map_err(|_| PyValueError::new_err("Negative dimensions not allowed."))
            })
            .collect::<PyResult<Vec<_>>>()
            .map(Shape)
    }
}

impl Hint for Shape {
    fn hint() -> String {
        "int | Sequence[int]".into()
    }
}

/// A shape for `reshape`: ints, one of which may be -1.
pub struct NewShape(pub Vec<i64>);

impl<'a, 'py> FromPyObject<'a, 'py> for NewShape {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<NewShape> {
        ints(&obj, "shape").map(NewShape)
    }
}

impl Hint for NewShape {
    fn hint() -> String {
        "Sequence[int]".into()
    }
}

/// An axis or several: an int or a sequence of ints (`None`, meaning all, is `Option`).
pub struct AxesArg(pub Vec<i32>);

impl<'a, 'py> FromPyObject<'a, 'py> for AxesArg {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<AxesArg> {
        ints(&obj, "axis")?
            .into_iter()
            .map(|a| {
                i32::try_from(a)
                    .map_err(|_| crate::errors::axis_error(format!("Invalid axis {a}.")))
            })
            .collect::<PyResult<Vec<_>>>()
            .map(AxesArg)
    }
}

impl Hint for AxesArg {
    fn hint() -> String {
        "int | Sequence[int]".into()
    }
}

/// Axes for an op: `Option<AxesArg>` with `None` meaning all of them becomes lazulite's
/// `Axes` with `axis.map_or(Axes::All, Axes::from)`.
impl From<AxesArg> for Axes {
    fn from(a: AxesArg) -> Axes {
        Axes::List(a.0)
    }
}

/// A list (or tuple) of array-likes, as `concatenate` and `stack` take.
pub struct ArrList(pub Vec<Array>);

impl<'a, 'py> FromPyObject<'a, 'py> for ArrList {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<ArrList> {
        let obj = obj.to_owned();
        if !is_sequence(&obj) {
            return Err(PyTypeError::new_err(format!(
                "Expected a list of arrays but got {}.",
                type_name(&obj)
            )));
        }
        obj.try_iter()?
            .map(|item| Ok(item?.extract::<Arr>()?.0))
            .collect::<PyResult<Vec<_>>>()
            .map(ArrList)
    }
}

impl Hint for ArrList {
    fn hint() -> String {
        "list[array]".into()
    }
}

/// A number of sections or a sequence of split indices (`split`).
pub struct Sections(pub lazulite::IndicesOrSections);

impl<'a, 'py> FromPyObject<'a, 'py> for Sections {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Sections> {
        let obj = obj.to_owned();
        if is_sequence(&obj) {
            let values = ints(&obj, "indices_or_sections")?;
            return Ok(Sections(lazulite::IndicesOrSections::Indices(values)));
        }
        let count = obj.extract::<CInt>()?.0;
        Ok(Sections(lazulite::IndicesOrSections::Sections(
            count.into(),
        )))
    }
}

impl Hint for Sections {
    fn hint() -> String {
        "int | Sequence[int]".into()
    }
}

/// Ints: one or a sequence (`roll`'s shifts, `tile`'s reps, `unflatten`'s shape).
pub struct Ints(pub Vec<i64>);

impl<'a, 'py> FromPyObject<'a, 'py> for Ints {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Ints> {
        ints(&obj, "the argument").map(Ints)
    }
}

impl Hint for Ints {
    fn hint() -> String {
        "int | Sequence[int]".into()
    }
}

/// `pad`'s widths: `n`, `(n,)`, `(before, after)` or one such pair per axis.
pub struct PadWidth(pub Vec<(i64, i64)>);

impl<'a, 'py> FromPyObject<'a, 'py> for PadWidth {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<PadWidth> {
        let obj = obj.to_owned();
        if !is_sequence(&obj) {
            let n = ints(&obj, "pad_width")?[0];
            return Ok(PadWidth(vec![(n, n)]));
        }
        let items: Vec<Bound<'_, PyAny>> = obj.try_iter()?.collect::<PyResult<_>>()?;
        if items.iter().all(|i| !is_sequence(i)) {
            let flat = ints(&obj, "pad_width")?;
            return match flat.as_slice() {
                [n] => Ok(PadWidth(vec![(*n, *n)])),
                [b, e] => Ok(PadWidth(vec![(*b, *e)])),
                _ => Err(PyValueError::new_err(
                    "[pad] pad_width must be an int, a pair, or a list of pairs.",
                )),
            };
        }
        items
            .iter()
            .map(|item| match ints(item, "pad_width")?.as_slice() {
                [n] => Ok((*n, *n)),
                [b, e] => Ok((*b, *e)),
                _ => Err(PyValueError::new_err(
                    "[pad] Each pad_width entry must be one int or a pair of ints.",
                )),
            })
            .collect::<PyResult<Vec<_>>>()
            .map(PadWidth)
    }
}

impl Hint for PadWidth {
    fn hint() -> String {
        "int | tuple[int] | tuple[int, int] | list[tuple[int, int]]".into()
    }
}

/// `tensordot`'s axes: a count, or two sequences of axes.
pub struct ContractAxes(pub lazulite::TensordotAxes);

impl<'a, 'py> FromPyObject<'a, 'py> for ContractAxes {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<ContractAxes> {
        let obj = obj.to_owned();
        if !is_sequence(&obj) {
            return Ok(ContractAxes(lazulite::TensordotAxes::Count(
                ints(&obj, "axes")?[0],
            )));
        }
        let pair: Vec<Bound<'_, PyAny>> = obj.try_iter()?.collect::<PyResult<_>>()?;
        let [a, b] = pair.as_slice() else {
            return Err(PyValueError::new_err(
                "[tensordot] axes must be an int or a list of two lists of axes.",
            ));
        };
        let axes = |o: &Bound<'_, PyAny>| -> PyResult<Vec<i32>> { Ok(o.extract::<AxesArg>()?.0) };
        Ok(ContractAxes(lazulite::TensordotAxes::Pairs(
            axes(a)?,
            axes(b)?,
        )))
    }
}

impl Hint for ContractAxes {
    fn hint() -> String {
        "int | list[Sequence[int]]".into()
    }
}
