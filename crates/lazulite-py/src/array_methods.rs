//! The `array` class's own methods: construction, properties, conversions to Python and
//! NumPy (the buffer protocol, zero-copy), operators, printing and pickling. Indexing is
//! in `indexing.rs`, DLPack in `dlpack.rs`; op methods (`a.abs()`, ...) are bound in the
//! tables of `ops.rs` and the other op families.

use crate::array::PyArray;
use crate::convert::{array_of, scalar_of, Dt, NewShape};
use crate::dtype::PyDtype;
use crate::errors::{to_py_err, Res};
use lazulite::{Array, BinaryOp, Complex, DType, Operand, RawData, Value};
use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyComplex, PyList, PyModule, PyTuple};
use pyo3::IntoPyObjectExt;
use std::ffi::{c_int, c_void, CString};

impl PyArray {
    /// The array, evaluated with the GIL released.
    fn evaluated(&self, py: Python<'_>) -> Res<Array> {
        let a = self.array();
        py.detach(|| a.eval())?;
        Ok(a)
    }
}

const SCALAR_ONLY: &str = "[convert] Only length-1 arrays can be converted to Python scalars.";

/// The elements of an evaluated array as Python objects, row-major.
fn python_values<'py>(py: Python<'py>, a: &Array) -> Res<Vec<Bound<'py, PyAny>>> {
    fn each<'py, T: lazulite::Element, P: IntoPyObject<'py>>(
        py: Python<'py>,
        a: &Array,
        f: impl Fn(T) -> P,
    ) -> Res<Vec<Bound<'py, PyAny>>> {
        a.to_vec::<T>()?
            .into_iter()
            .map(|v| Ok(f(v).into_bound_py_any(py)?))
            .collect()
    }
    let d = a.dtype();
    if d.is_bool() {
        each(py, a, |v: bool| v)
    } else if d.is_unsigned() {
        each(py, a, |v: u64| v)
    } else if d.is_integer() {
        each(py, a, |v: i64| v)
    } else if d.is_complex() {
        a.to_vec::<Complex>()?
            .into_iter()
            .map(|c| Ok(PyComplex::from_doubles(py, c.re as f64, c.im as f64).into_any()))
            .collect()
    } else {
        each(py, a, |v: f64| v)
    }
}

/// The single element of a one-element array as a Python scalar.
fn item<'py>(py: Python<'py>, a: &PyArray) -> Res<Bound<'py, PyAny>> {
    let arr = a.array();
    if arr.size() != 1 {
        return Err(PyValueError::new_err(SCALAR_ONLY).into());
    }
    let arr = a.evaluated(py)?;
    Ok(python_values(py, &arr)?.remove(0))
}

/// Operands of a binary operator; `None` when Python should try the other operand.
/// `other` as the operand of an operator on an array of `dtype`: an array-like from
/// outside lazulite (NumPy's, a buffer) is converted with that dtype, as MLX does; the
/// array an object gives through `__mlx_array__` keeps its own.
fn operand(other: &Bound<'_, PyAny>, op: &str, dtype: DType) -> PyResult<Option<Operand>> {
    if other.is_none() {
        return Ok(None);
    }
    if let Some(s) = scalar_of(other)? {
        return Ok(Some(Operand::Scalar(s)));
    }
    if other.is_instance_of::<PyList>() || other.is_instance_of::<PyTuple>() {
        return Err(not_operand(other, op));
    }
    if let Ok(a) = other.cast::<PyArray>() {
        return Ok(Some(Operand::Array(a.get().array())));
    }
    if let Some(a) = crate::convert::protocol_array(other)? {
        return Ok(Some(Operand::Array(a)));
    }
    match crate::convert::foreign_array(other, Some(dtype)) {
        Ok(Some(a)) => Ok(Some(Operand::Array(a))),
        _ => Err(not_operand(other, op)),
    }
}

fn not_operand(other: &Bound<'_, PyAny>, op: &str) -> PyErr {
    let name = other
        .get_type()
        .name()
        .map_or_else(|_| "object".into(), |n| n.to_string());
    PyValueError::new_err(format!(
        "Cannot perform {op} on an mlx.core.array and {name}"
    ))
}

/// The right operand of an in-place operator: `None` is refused with a TypeError (as
/// for the other operators), anything else that is no array-like with a ValueError.
fn inplace_operand(other: &Bound<'_, PyAny>, op: &str, dtype: DType) -> PyResult<Operand> {
    if other.is_none() {
        return Err(PyTypeError::new_err(format!(
            "Cannot perform inplace {op} on an mlx.core.array and NoneType"
        )));
    }
    let inplace = format!("inplace {op}");
    operand(other, &inplace, dtype)?.ok_or_else(|| not_operand(other, &inplace))
}

/// `/=` keeps the array's dtype class: MLX refuses it on integer and bool arrays, whose
/// quotient would be a float.
fn inexact_only(a: &Array) -> PyResult<()> {
    if a.dtype().is_inexact() {
        return Ok(());
    }
    Err(PyValueError::new_err(
        "In place division cannot cast to non-floating point type.",
    ))
}

type BinaryFn = fn(Operand, Operand) -> lazulite::Result<Array>;

/// Defines `array` operators from lazulite's binary functions and their op tags (the tag
/// computes single values, see [`PyArray::value_result`]): `__op__` and `__iop__`, and
/// `__rop__` when named. `__iop__` rebinds the wrapped array (the Python object stays the
/// same, its dtype may change), after the row's check if any.
macro_rules! operators {
    ($($fun:path, $tag:ident, $what:literal => $op:ident, $iop:ident $(if $check:ident)? $(, $rop:ident)?;)*) => {
        #[pymethods]
        impl PyArray {$(
            fn $op(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
                self.binary(py, other, ($fun, BinaryOp::$tag), $what, false)
            }
            $(
                fn $rop(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
                    self.binary(py, other, ($fun, BinaryOp::$tag), $what, true)
                }
            )?
            fn $iop(&self, other: &Bound<'_, PyAny>) -> PyResult<()> {
                // A value result implies the row's check passes (its dtype is the op's).
                if let Some(v) = self.value_result(other, BinaryOp::$tag, false) {
                    self.rebind_value(v);
                    return Ok(());
                }
                let b = inplace_operand(other, $what, self.array().dtype())?;
                $($check(&self.array())?;)?
                let result = $fun(Operand::Array(self.array()), b).map_err(to_py_err)?;
                self.rebind(result);
                Ok(())
            }
        )*}
    };
}

/// The bitwise operators: MLX's operators refuse floats themselves (a ValueError), where
/// its functions find them in the kernel (a RuntimeError, as lazulite's functions raise).
macro_rules! bitwise_operators {
    ($($name:ident = $fun:path, $what:literal;)*) => {$(
        fn $name(a: Operand, b: Operand) -> lazulite::Result<Array> {
            $fun(a, b).map_err(|e| match e.kind() {
                lazulite::ErrorKind::Runtime => lazulite::Error::value(concat!(
                    "Floating point types not allowed with ",
                    $what,
                    "."
                )),
                _ => e,
            })
        }
    )*};
}

bitwise_operators! {
    and_operator = lazulite::bitwise_and, "bitwise and";
    or_operator = lazulite::bitwise_or, "bitwise or";
    xor_operator = lazulite::bitwise_xor, "bitwise xor";
    left_shift_operator = lazulite::left_shift, "left shift";
    right_shift_operator = lazulite::right_shift, "right shift";
}

operators! {
    lazulite::add, Add, "addition" => __add__, __iadd__, __radd__;
    lazulite::subtract, Subtract, "subtraction" => __sub__, __isub__, __rsub__;
    lazulite::multiply, Multiply, "multiplication" => __mul__, __imul__, __rmul__;
    lazulite::divide, Divide, "division" => __truediv__, __itruediv__ if inexact_only, __rtruediv__;
    lazulite::floor_divide, FloorDivide, "floor division" => __floordiv__, __ifloordiv__, __rfloordiv__;
    lazulite::remainder, Remainder, "modulus" => __mod__, __imod__, __rmod__;
    and_operator, BitwiseAnd, "bitwise and" => __and__, __iand__;
    or_operator, BitwiseOr, "bitwise or" => __or__, __ior__;
    xor_operator, BitwiseXor, "bitwise xor" => __xor__, __ixor__;
    left_shift_operator, LeftShift, "left shift" => __lshift__, __ilshift__;
    right_shift_operator, RightShift, "right shift" => __rshift__, __irshift__;
}

/// Defines the comparison operators; `==`/`!=` with a value that is no array-like give
/// `False`/`True`, and with `None` a `TypeError`, as in MLX.
macro_rules! comparisons {
    ($($fun:path, $tag:ident, $what:literal => $op:ident $(, $unequal:literal)?;)*) => {
        #[pymethods]
        impl PyArray {$(
            fn $op(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
                $(
                    if other.is_none() {
                        return Err(PyTypeError::new_err(format!(
                            "{}(): incompatible function arguments: an array cannot be compared with None.",
                            stringify!($op)
                        )));
                    }
                    if operand(other, $what, self.array().dtype()).is_err() {
                        return Ok(pyo3::types::PyBool::new(py, $unequal).to_owned().into_any().unbind());
                    }
                )?
                self.binary(py, other, ($fun, BinaryOp::$tag), $what, false)
            }
        )*}
    };
}

comparisons! {
    lazulite::equal, Equal, "equal" => __eq__, false;
    lazulite::not_equal, NotEqual, "not equal" => __ne__, true;
    lazulite::less, Less, "less than" => __lt__;
    lazulite::less_equal, LessEqual, "less than or equal" => __le__;
    lazulite::greater, Greater, "greater than" => __gt__;
    lazulite::greater_equal, GreaterEqual, "greater than or equal" => __ge__;
}

/// `**` (Python passes a third, modulo argument, which arrays do not support).
#[pymethods]
impl PyArray {
    fn __pow__(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        refuse_modulo(modulo)?;
        self.binary(
            py,
            other,
            (lazulite::power, BinaryOp::Power),
            "power",
            false,
        )
    }

    fn __rpow__(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        refuse_modulo(modulo)?;
        self.binary(py, other, (lazulite::power, BinaryOp::Power), "power", true)
    }

    fn __ipow__(
        &self,
        other: &Bound<'_, PyAny>,
        modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        refuse_modulo(modulo)?;
        if let Some(v) = self.value_result(other, BinaryOp::Power, false) {
            self.rebind_value(v);
            return Ok(());
        }
        let b = inplace_operand(other, "power", self.array().dtype())?;
        self.rebind(lazulite::power(Operand::Array(self.array()), b).map_err(to_py_err)?);
        Ok(())
    }
}

fn refuse_modulo(modulo: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    match modulo {
        Some(m) if !m.is_none() => Err(PyTypeError::new_err(
            "pow() with a modulo is not supported for arrays",
        )),
        _ => Ok(()),
    }
}

impl PyArray {
    fn binary(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        (fun, op): (BinaryFn, BinaryOp),
        what: &str,
        reflected: bool,
    ) -> PyResult<Py<PyAny>> {
        if let Some(v) = self.value_result(other, op, reflected) {
            return Ok(Py::new(py, PyArray::from(v))?.into_any());
        }
        let a = self.array();
        let Some(b) = operand(other, what, a.dtype())? else {
            return Ok(py.NotImplemented());
        };
        let a = Operand::Array(a);
        let (a, b) = if reflected { (b, a) } else { (a, b) };
        let result = fun(a, b).map_err(to_py_err)?;
        Ok(Py::new(py, PyArray::from(result))?.into_any())
    }
}

impl PyArray {
    /// `self op other` (`other op self` when `reflected`) computed on single values, when
    /// both are one (a computed 0-d array or a Python scalar) of the dtype the op computes
    /// in; `None` sends the operator down the path of arrays, which raises any error.
    fn value_result(
        &self,
        other: &Bound<'_, PyAny>,
        op: BinaryOp,
        reflected: bool,
    ) -> Option<Value> {
        let a = self.value()?;
        let b = match other.cast::<PyArray>() {
            Ok(b) => b.get().value()?,
            Err(_) => Value::next_to(scalar_of(other).ok()??, a.dtype())?,
        };
        let (a, b) = if reflected { (b, a) } else { (a, b) };
        Value::binary(op, a, b)
    }
}

/// The elements of `a` as bytes in row-major order (evaluates).
fn row_major_bytes(a: &Array) -> lazulite::Result<Vec<u8>> {
    lazulite::view(&a.reshape(&[a.size()])?, DType::UInt8)?.to_vec::<u8>()
}

impl PyArray {
    /// `__div__` and `__rdiv__`: true division, called by name only (Python 3's `/` calls
    /// `__truediv__`); like MLX, a call with `None` is a TypeError.
    fn division(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        name: &str,
        reflected: bool,
    ) -> PyResult<Py<PyAny>> {
        if other.is_none() {
            return Err(PyTypeError::new_err(format!(
                "{name}(): incompatible function arguments: an array cannot be divided by None."
            )));
        }
        self.binary(
            py,
            other,
            (lazulite::divide, BinaryOp::Divide),
            "division",
            reflected,
        )
    }
}

/// Everything the buffer protocol hands out, kept until the consumer releases it.
struct Exported {
    raw: RawData,
    format: CString,
    shape: Vec<isize>,
    strides: Vec<isize>,
}

/// PEP 3118 format of each dtype (MLX's; NumPy refuses bfloat16's, as it does for MLX).
fn buffer_format(dtype: DType) -> &'static str {
    use DType::*;
    match dtype {
        Bool => "?",
        UInt8 => "B",
        UInt16 => "H",
        UInt32 => "I",
        UInt64 => "Q",
        Int8 => "b",
        Int16 => "h",
        Int32 => "i",
        Int64 => "q",
        Float16 => "e",
        BFloat16 => "bfloat16",
        Float32 => "f",
        Float64 => "d",
        Complex64 => "Zf",
    }
}

/// Iterates over the first axis of an array.
#[pyclass(name = "ArrayIterator", module = "lazulite.core")]
pub struct ArrayIterator {
    array: Array,
    next: usize,
}

#[pymethods]
impl ArrayIterator {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        if self.next >= self.array.shape()[0] {
            return Ok(None);
        }
        let row = lazulite::index(&self.array, &[lazulite::Index::Int(self.next as i64)])
            .map_err(to_py_err)?;
        self.next += 1;
        Ok(Some(Py::new(py, PyArray::from(row))?.into_any()))
    }
}

#[pymethods]
impl PyArray {
    #[new]
    #[pyo3(signature = (val, dtype = None))]
    fn new(val: &Bound<'_, PyAny>, dtype: Option<Dt>) -> Res<PyArray> {
        Ok(PyArray::from(array_of(val, dtype.map(|d| d.0))?))
    }

    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.array().shape())
    }

    #[getter]
    fn dtype(&self) -> PyDtype {
        PyDtype(self.array().dtype())
    }

    #[getter]
    fn ndim(&self) -> usize {
        self.array().ndim()
    }

    #[getter]
    fn size(&self) -> usize {
        self.array().size()
    }

    #[getter]
    fn itemsize(&self) -> usize {
        self.array().itemsize()
    }

    #[getter]
    fn nbytes(&self) -> usize {
        self.array().nbytes()
    }

    /// The array with its axes reversed.
    #[getter(T)]
    fn transposed(&self) -> Res<PyArray> {
        Ok(PyArray::from(self.array().t()?))
    }

    /// The real part (the array itself for real dtypes).
    #[getter]
    fn real(&self) -> Res<PyArray> {
        Ok(PyArray::from(lazulite::real(&self.array())?))
    }

    /// The imaginary part (zeros for real dtypes).
    #[getter]
    fn imag(&self) -> Res<PyArray> {
        Ok(PyArray::from(lazulite::imag(&self.array())?))
    }

    /// The value of a one-element array as a Python scalar.
    fn item<'py>(&self, py: Python<'py>) -> Res<Bound<'py, PyAny>> {
        item(py, self)
    }

    /// The array as nested Python lists (a scalar for 0-d arrays).
    fn tolist<'py>(&self, py: Python<'py>) -> Res<Bound<'py, PyAny>> {
        let a = self.evaluated(py)?;
        let mut items = python_values(py, &a)?;
        if a.ndim() == 0 {
            return Ok(items.remove(0));
        }
        let shape = a.shape();
        for k in (0..shape.len()).rev() {
            let (d, outer) = (shape[k], shape[..k].iter().product::<usize>());
            let mut rest = items.into_iter();
            items = (0..outer)
                .map(|_| Ok(PyList::new(py, rest.by_ref().take(d))?.into_any()))
                .collect::<PyResult<Vec<_>>>()?;
        }
        Ok(items.remove(0))
    }

    /// See :func:`astype`.
    #[pyo3(signature = (dtype, stream = None))]
    #[allow(unused_variables)]
    fn astype(&self, dtype: Dt, stream: Option<crate::devices::StreamOrDevice>) -> Res<PyArray> {
        Ok(PyArray::from(self.array().astype(dtype.0)?))
    }

    /// `a.reshape(2, 3)` or `a.reshape((2, 3))`.
    #[pyo3(signature = (*shape, stream = None))]
    #[allow(unused_variables)]
    fn reshape(
        &self,
        shape: &Bound<'_, PyTuple>,
        stream: Option<crate::devices::StreamOrDevice>,
    ) -> Res<PyArray> {
        let shape: NewShape = if shape.len() == 1 {
            shape.get_item(0)?.extract()?
        } else {
            shape.extract()?
        };
        Ok(PyArray::from(lazulite::reshape(&self.array(), &shape.0)?))
    }

    /// `a.transpose()`, `a.transpose(1, 0)` or `a.transpose((1, 0))`.
    #[pyo3(signature = (*axes, stream = None))]
    #[allow(unused_variables)]
    fn transpose(
        &self,
        axes: &Bound<'_, PyTuple>,
        stream: Option<crate::devices::StreamOrDevice>,
    ) -> Res<PyArray> {
        let a = self.array();
        let axes: Vec<i32> = match axes.len() {
            0 => (0..a.ndim() as i32).rev().collect(),
            1 if !axes.get_item(0)?.is_instance_of::<pyo3::types::PyInt>() => {
                axes.get_item(0)?.extract()?
            }
            _ => axes.extract()?,
        };
        Ok(PyArray::from(lazulite::transpose(&a, &axes)?))
    }

    fn __len__(&self) -> PyResult<usize> {
        self.array()
            .shape()
            .first()
            .copied()
            .ok_or_else(|| PyTypeError::new_err("len() 0-dimensional array."))
    }

    fn __iter__(&self) -> PyResult<ArrayIterator> {
        let array = self.array();
        if array.ndim() == 0 {
            return Err(PyTypeError::new_err("iter() 0-dimensional array."));
        }
        Ok(ArrayIterator { array, next: 0 })
    }

    fn __neg__(&self) -> Res<PyArray> {
        Ok(PyArray::from(lazulite::negative(&self.array())?))
    }

    fn __pos__(&self) -> Res<PyArray> {
        Ok(PyArray::from(self.array()))
    }

    fn __abs__(&self) -> Res<PyArray> {
        Ok(PyArray::from(lazulite::abs(&self.array())?))
    }

    fn __invert__(&self) -> Res<PyArray> {
        let a = self.array();
        if a.dtype().is_inexact() {
            return Err(PyValueError::new_err(
                "Floating point types not allowed with bitwise inversion.",
            )
            .into());
        }
        Ok(PyArray::from(lazulite::bitwise_invert(&a)?))
    }

    fn __bool__(&self, py: Python<'_>) -> Res<bool> {
        Ok(item(py, self)?.is_truthy()?)
    }

    fn __int__<'py>(&self, py: Python<'py>) -> Res<Bound<'py, PyAny>> {
        let builtins = py.import("builtins")?;
        Ok(builtins.getattr("int")?.call1((item(py, self)?,))?)
    }

    fn __float__(&self, py: Python<'_>) -> Res<f64> {
        Ok(item(py, self)?.extract()?)
    }

    fn __complex__<'py>(&self, py: Python<'py>) -> Res<Bound<'py, PyAny>> {
        let builtins = py.import("builtins")?;
        Ok(builtins.getattr("complex")?.call1((item(py, self)?,))?)
    }

    fn __index__<'py>(&self, py: Python<'py>) -> Res<Bound<'py, PyAny>> {
        let a = self.array();
        if a.ndim() != 0 || !a.dtype().is_integer() {
            return Err(PyTypeError::new_err(
                "Only 0-dimensional integer arrays can be converted to an index.",
            )
            .into());
        }
        item(py, self)
    }

    fn __repr__(&self, py: Python<'_>) -> Res<String> {
        let a = self.evaluated(py)?;
        Ok(py.detach(|| a.to_string()))
    }

    fn __str__(&self, py: Python<'_>) -> Res<String> {
        self.__repr__(py)
    }

    /// 0-d arrays format as their Python scalar (`f"{a:.2f}"`); others as `repr`.
    fn __format__(&self, py: Python<'_>, spec: &str) -> Res<String> {
        if self.array().ndim() == 0 {
            let value = item(py, self)?;
            return Ok(value.call_method1("__format__", (spec,))?.extract()?);
        }
        if !spec.is_empty() {
            return Err(PyTypeError::new_err(
                "unsupported format string passed to array.__format__",
            )
            .into());
        }
        self.__repr__(py)
    }

    /// Arrays hash by identity (they compare elementwise), as in MLX.
    fn __hash__(slf: &Bound<'_, Self>) -> isize {
        (slf.as_ptr() as isize) >> 4
    }

    fn __copy__(&self) -> PyArray {
        PyArray::from(self.array())
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> PyArray {
        PyArray::from(self.array())
    }

    /// The array with its last two axes swapped.
    #[getter(mT)]
    fn matrix_transposed(&self) -> Res<PyArray> {
        let a = self.array();
        if a.ndim() < 2 {
            return Err(PyValueError::new_err(
                "[matrix_transpose] Input array must have at least 2 dimensions.",
            )
            .into());
        }
        Ok(PyArray::from(lazulite::swapaxes(&a, -1, -2)?))
    }

    /// The elements' bytes in row-major order, whatever the layout (evaluates).
    fn __bytes__<'py>(&self, py: Python<'py>) -> Res<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &row_major_bytes(&self.array())?))
    }

    /// MLX's pickle state: the values as a NumPy array (bfloat16 as its `uint16` bits,
    /// which NumPy lacks) and MLX's number for the dtype.
    fn __getstate__<'py>(&self, py: Python<'py>) -> Res<(Bound<'py, PyAny>, u8)> {
        let a = self.array();
        let val = a.dtype().mlx_val().ok_or_else(|| {
            PyTypeError::new_err(format!("MLX has no dtype {}.", a.dtype().name()))
        })?;
        let values = if a.dtype() == DType::BFloat16 {
            lazulite::view(&a, DType::UInt16)?
        } else {
            a
        };
        let numpy = py.import("numpy")?;
        Ok((
            numpy.call_method1("asarray", (PyArray::from(values),))?,
            val,
        ))
    }

    /// Becomes the array a state of `__getstate__` describes (as MLX: the dtype is the
    /// NumPy array's, except for bfloat16's bits).
    fn __setstate__(&self, state: &Bound<'_, PyTuple>) -> Res<()> {
        if state.len() != 2 {
            return Err(PyValueError::new_err(
                "Invalid pickle state: expected (ndarray, Dtype::Val)",
            )
            .into());
        }
        let values = array_of(&state.get_item(0)?, None)?;
        let val: u8 = state.get_item(1)?.extract()?;
        let a = if DType::from_mlx_val(val) == Some(DType::BFloat16) {
            lazulite::view(&values, DType::BFloat16)?
        } else {
            values
        };
        self.rebind(a);
        Ok(())
    }

    /// `self / other` (Python 2's name, which MLX keeps).
    fn __div__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.division(py, other, "__div__", false)
    }

    /// `other / self` (Python 2's name, which MLX keeps).
    fn __rdiv__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.division(py, other, "__rdiv__", true)
    }

    /// Pickling: the bytes, shape and dtype name, rebuilt by `_array_from_bytes` (every
    /// dtype, bfloat16 included; evaluates).
    #[allow(clippy::type_complexity)]
    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> Res<(
        Bound<'py, PyAny>,
        (Bound<'py, PyBytes>, Vec<usize>, &'static str),
    )> {
        let a = self.array();
        let bytes = row_major_bytes(&a)?;
        let rebuild = py.import("lazulite.core")?.getattr("_array_from_bytes")?;
        Ok((
            rebuild,
            (
                PyBytes::new(py, &bytes),
                a.shape().to_vec(),
                a.dtype().name(),
            ),
        ))
    }

    /// The array API namespace of these arrays: `lazulite.core`, for any published version
    /// of the standard (MLX refuses every explicit version; an unknown one is an error in
    /// both).
    #[pyo3(signature = (api_version = None))]
    fn __array_namespace__<'py>(
        &self,
        py: Python<'py>,
        api_version: Option<&str>,
    ) -> PyResult<Bound<'py, PyModule>> {
        const VERSIONS: [&str; 4] = ["2021.12", "2022.12", "2023.12", "2024.12"];
        if let Some(v) = api_version.filter(|v| !VERSIONS.contains(v)) {
            return Err(PyValueError::new_err(format!(
                "Unsupported array API version {v:?}; supported: {}.",
                VERSIONS.join(", ")
            )));
        }
        py.import("lazulite.core")
    }

    /// A NumPy array holding a copy of the data (evaluates).
    #[pyo3(signature = (dtype = None, copy = None))]
    #[allow(unused_variables)]
    fn __array__<'py>(
        slf: &Bound<'py, Self>,
        dtype: Option<&Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let np = crate::convert::numpy(slf.py())?;
        let view = slf
            .py()
            .get_type::<pyo3::types::PyMemoryView>()
            .call1((slf,))?;
        np.call_method1("array", (view, dtype))
    }

    /// Exports the evaluated memory without copying: NumPy views of an array read and
    /// write the array's own memory, strides included (a copy only for consumers that
    /// ask for contiguous memory).
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut pyo3::ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        use pyo3::ffi;
        if view.is_null() {
            return Err(PyBufferError::new_err("View is null"));
        }
        let py = slf.py();
        let a = slf.get().array();
        let wants_strides = flags & ffi::PyBUF_STRIDES == ffi::PyBUF_STRIDES;
        let contiguity =
            ffi::PyBUF_C_CONTIGUOUS | ffi::PyBUF_F_CONTIGUOUS | ffi::PyBUF_ANY_CONTIGUOUS;
        let wants_contiguous = !wants_strides || flags & contiguity & !ffi::PyBUF_STRIDES != 0;
        if flags & ffi::PyBUF_F_CONTIGUOUS == ffi::PyBUF_F_CONTIGUOUS
            && a.shape().iter().filter(|&&d| d > 1).count() > 1
        {
            return Err(PyBufferError::new_err(
                "Arrays export row-major (C-contiguous) buffers only.",
            ));
        }
        let raw = py
            .detach(|| {
                if wants_contiguous {
                    a.raw_data_contiguous()
                } else {
                    a.raw_data()
                }
            })
            .map_err(to_py_err)?;
        let exported = Box::new(Exported {
            format: CString::new(buffer_format(raw.dtype())).expect("no NUL in formats"),
            shape: raw.shape().iter().map(|&d| d as isize).collect(),
            strides: raw.byte_strides().to_vec(),
            raw,
        });
        let itemsize = exported.raw.dtype().size() as isize;
        // SAFETY: `view` is a valid Py_buffer the caller gave us to fill; every pointer
        // stored in it points into `exported`, which lives until `__releasebuffer__`.
        unsafe {
            (*view).buf = exported.raw.ptr() as *mut c_void;
            (*view).len = exported.shape.iter().product::<isize>() * itemsize;
            (*view).readonly = 0;
            (*view).itemsize = itemsize;
            (*view).format = if flags & ffi::PyBUF_FORMAT == ffi::PyBUF_FORMAT {
                exported.format.as_ptr() as *mut _
            } else {
                std::ptr::null_mut()
            };
            (*view).ndim = exported.shape.len() as c_int;
            (*view).shape = if flags & ffi::PyBUF_ND == ffi::PyBUF_ND {
                exported.shape.as_ptr() as *mut _
            } else {
                std::ptr::null_mut()
            };
            (*view).strides = if wants_strides {
                exported.strides.as_ptr() as *mut _
            } else {
                std::ptr::null_mut()
            };
            (*view).suboffsets = std::ptr::null_mut();
            (*view).internal = Box::into_raw(exported) as *mut c_void;
            (*view).obj = slf.into_any().into_ptr();
        }
        Ok(())
    }

    unsafe fn __releasebuffer__(&self, view: *mut pyo3::ffi::Py_buffer) {
        // SAFETY: `internal` was set by `__getbuffer__` from `Box::into_raw` and is
        // released exactly once.
        unsafe { drop(Box::from_raw((*view).internal as *mut Exported)) };
    }
}

/// Rebuilds a pickled array from its bytes, shape and dtype name.
#[pyfunction]
pub fn _array_from_bytes(data: &[u8], shape: Vec<usize>, dtype: &str) -> Res<PyArray> {
    let dtype = DType::from_name(dtype)
        .ok_or_else(|| PyValueError::new_err(format!("[array] Unknown dtype '{dtype}'.")))?;
    let bytes = Array::from_slice(data, &[data.len()])?;
    Ok(PyArray::from(
        lazulite::view(&bytes, dtype)?.reshape(&shape)?,
    ))
}
