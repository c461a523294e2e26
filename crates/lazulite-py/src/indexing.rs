//! Indexing from Python: `a[key]`, `a[key] = value`, `a.at[key].add(value)` and the
//! indexing functions (`take`, `take_along_axis`, `put_along_axis`, `slice`,
//! `slice_update`, `unique`, and lazulite's `nonzero`, `argwhere`). A Python key becomes the Rust
//! index expression in one place, [`index_of`]; NumPy's rules then apply as implemented
//! by `lazulite::index`. Beyond MLX: bool masks (lists, arrays, NumPy arrays) select as in
//! NumPy, NumPy arrays index, and indices are bounds-checked (`IndexError`).

// `unique`'s binding takes MLX's six parameters plus `py` and `stream`.
#![allow(clippy::too_many_arguments)]

use crate::array::PyArray;
use crate::bind;
use crate::bind::{Returned, Tuple};
use crate::convert::{array_of, scalar_of, Arr, Ints, Shape};
use crate::errors::Res;
use crate::signature::Hint;
use lazulite as lz;
use lazulite::{Array, DType, Index, Operand, Scalar};
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyEllipsis, PyInt, PyList, PySlice, PyString, PyTuple};

const UNSUPPORTED: &str = "Cannot index mlx array using the given type.";

/// A Python int (or anything with `__index__`) as an i64, saturating: slice ends beyond
/// i64 behave as "to the end" as in Python.
fn saturating_i64(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    match obj.extract::<i64>() {
        Ok(v) => Ok(v),
        Err(_) if obj.gt(0)? => Ok(i64::MAX),
        Err(_) => Ok(i64::MIN),
    }
}

fn slice_of(s: &Bound<'_, PySlice>) -> PyResult<Index> {
    let field = |name: &Bound<'_, PyString>| -> PyResult<Option<i64>> {
        let v = s.getattr(name)?;
        if v.is_none() {
            return Ok(None);
        }
        // As MLX: ints and objects with `__index__`, but no bools (nor arrays).
        let refused = || PyValueError::new_err("Slice indices must be integers or None.");
        if v.is_instance_of::<PyBool>() || v.is_instance_of::<PyArray>() {
            return Err(refused());
        }
        if !v.is_instance_of::<PyInt>() {
            v.call_method0(intern!(s.py(), "__index__"))
                .map_err(|_| refused())?;
        }
        saturating_i64(&v).map(Some)
    };
    let py = s.py();
    let step = field(intern!(py, "step"))?;
    if step == Some(0) {
        return Err(PyValueError::new_err("slice step cannot be zero"));
    }
    Ok(Index::slice(
        field(intern!(py, "start"))?,
        field(intern!(py, "stop"))?,
        step,
    ))
}

/// An array used as an index: a bool array is a mask, an integer array gathers (other
/// dtypes are refused by `lazulite::index` with MLX's message).
fn array_index(a: Array) -> Index {
    if a.dtype() == DType::Bool {
        Index::Mask(a)
    } else {
        Index::Array(a)
    }
}

/// A list or NumPy array in a key as an evaluated array (its values are at hand, so
/// `a[key] = v` can check them at once).
fn constant(item: &Bound<'_, PyAny>) -> Res<Array> {
    let a = array_of(item, None)?;
    a.eval()?;
    Ok(a)
}

/// One entry of a key.
fn entry_of(item: &Bound<'_, PyAny>) -> Res<Index> {
    if item.is_none() {
        return Ok(Index::NewAxis);
    }
    if item.is(PyEllipsis::get(item.py())) {
        return Ok(Index::Ellipsis);
    }
    if let Ok(s) = item.cast::<PySlice>() {
        return Ok(slice_of(s)?);
    }
    if let Ok(a) = item.cast::<PyArray>() {
        return Ok(array_index(a.get().array()));
    }
    if item.is_instance_of::<PyList>() {
        if item.len()? == 0 {
            return Ok(Index::Array(Array::from_slice::<i32>(&[], &[0])?));
        }
        return Ok(array_index(constant(item)?));
    }
    if item.is_instance_of::<PyBool>() {
        return Err(PyValueError::new_err(UNSUPPORTED).into());
    }
    if item.is_instance_of::<PyInt>() {
        return Ok(Index::Int(saturating_i64(item)?));
    }
    if let Some(scalar) = scalar_of(item)? {
        // NumPy scalars: integers index, others do not.
        return match scalar {
            Scalar::Int(i) => Ok(Index::Int(i)),
            _ => Err(PyValueError::new_err(UNSUPPORTED).into()),
        };
    }
    let ndarray = crate::convert::numpy(item.py())?.getattr("ndarray")?;
    if item.is_instance(&ndarray)? {
        return Ok(array_index(constant(item)?));
    }
    Err(PyValueError::new_err(UNSUPPORTED).into())
}

/// How many axes of the indexed array an entry uses.
fn axes_used(entry: &Index) -> usize {
    match entry {
        Index::NewAxis | Index::Ellipsis => 0,
        Index::Mask(m) => m.ndim(),
        _ => 1,
    }
}

/// A Python key (one entry or a tuple of them) as a lazulite index expression for `a`;
/// too many indices or ellipses are a ValueError, as in MLX.
pub fn index_of(a: &Array, key: &Bound<'_, PyAny>) -> Res<Vec<Index>> {
    let indices = match key.cast::<PyTuple>() {
        Ok(t) => t
            .iter()
            .map(|item| entry_of(&item))
            .collect::<Res<Vec<_>>>()?,
        Err(_) => vec![entry_of(key)?],
    };
    if indices.iter().map(axes_used).sum::<usize>() > a.ndim() {
        let message = match a.ndim() {
            0 => "too many indices for array: array is 0-dimensional".to_string(),
            n => format!("Too many indices for array with {n} dimensions."),
        };
        return Err(PyValueError::new_err(message).into());
    }
    if indices
        .iter()
        .filter(|i| matches!(i, Index::Ellipsis))
        .count()
        > 1
    {
        return Err(PyValueError::new_err("An index can only have a single ellipsis (...)").into());
    }
    Ok(indices)
}

/// The value of `a[key] = value` or `a.at[key].add(value)`: scalars stay weakly typed,
/// lists and NumPy arrays become arrays (all are cast to `a`'s dtype).
fn value_of(value: &Bound<'_, PyAny>) -> Res<Operand> {
    if let Some(s) = scalar_of(value)? {
        return Ok(Operand::Scalar(s));
    }
    Ok(Operand::Array(array_of(value, None)?))
}

/// The axis of `a` each index-array entry of `indices` addresses (after the ellipsis is
/// expanded), with the array.
fn indexed_axes<'i>(a: &Array, indices: &'i [Index]) -> Vec<(usize, &'i Array)> {
    let consumed: usize = indices.iter().map(axes_used).sum();
    let mut axis = 0;
    let mut out = vec![];
    for i in indices {
        match i {
            Index::NewAxis => {}
            Index::Ellipsis => axis += a.ndim().saturating_sub(consumed),
            Index::Mask(m) => axis += m.ndim(),
            Index::Array(idx) => {
                out.push((axis, idx));
                axis += 1;
            }
            _ => axis += 1,
        }
    }
    out
}

/// Checks the values of the already evaluated index arrays of `indices` against `a`'s
/// axes, so that `a[key] = value` raises now and leaves `a` intact instead of binding it
/// to a result whose evaluation fails. (Index arrays still to be computed are checked by
/// the scatter when it runs.)
fn check_evaluated_indices(a: &Array, indices: &[Index]) -> Res<()> {
    for (axis, idx) in indexed_axes(a, indices) {
        let Some(&n) = a.shape().get(axis) else {
            continue;
        };
        if !idx.is_evaluated() || !idx.dtype().is_integer() || idx.size() == 0 {
            continue;
        }
        let (lo, hi) = (
            lz::min(idx, lz::Axes::All, false)?,
            lz::max(idx, lz::Axes::All, false)?,
        );
        let bad = |v: i128| v < -(n as i128) || v >= n as i128;
        let wide = |x: &Array| -> Res<i128> {
            Ok(if x.dtype() == DType::UInt64 {
                x.item::<u64>()? as i128
            } else {
                x.item::<i64>()? as i128
            })
        };
        for v in [wide(&lo)?, wide(&hi)?] {
            if bad(v) {
                return Err(PyIndexError::new_err(format!(
                    "[index_put] Index {v} is out of bounds for axis {axis} with size {n}."
                ))
                .into());
            }
        }
    }
    Ok(())
}

#[pymethods]
impl PyArray {
    /// `a[key]`: NumPy indexing (ints, slices, `None`, `...`, integer or bool arrays and
    /// lists, NumPy arrays, tuples of these). Basic indexing gives a view.
    fn __getitem__(&self, key: &Bound<'_, PyAny>) -> Res<PyArray> {
        let a = self.array();
        let indices = index_of(&a, key)?;
        Ok(PyArray::from(lz::index(&a, &indices)?))
    }

    /// `del a[key]`: arrays have no item deletion; the AttributeError MLX raises.
    fn __delitem__(&self, _key: &Bound<'_, PyAny>) -> PyResult<()> {
        Err(pyo3::exceptions::PyAttributeError::new_err("__delitem__"))
    }

    /// `a[key] = value`: rebinds this array object (every Python reference to it sees
    /// the update) to a copy with the indexed elements replaced; with duplicate indices
    /// one of the values wins, as in MLX. The value is cast to the array's dtype.
    fn __setitem__(&self, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> Res<()> {
        let a = self.array();
        let indices = index_of(&a, key)?;
        let value = value_of(value)?;
        check_evaluated_indices(&a, &indices)?;
        self.rebind(lz::index_put(&a, &indices, value)?);
        Ok(())
    }

    /// `a.at[key].add(value)` etc.: updates where duplicate indices accumulate.
    #[getter]
    fn at(&self) -> ArrayAt {
        ArrayAt {
            array: self.array(),
            indices: None,
        }
    }
}

/// The object `a.at` returns; `a.at[key]` holds the key and has the update methods, each
/// returning a new array (the original is not changed).
#[pyclass(name = "ArrayAt", module = "lazulite.core", frozen)]
pub struct ArrayAt {
    array: Array,
    indices: Option<Vec<Index>>,
}

impl ArrayAt {
    fn update(
        &self,
        value: &Bound<'_, PyAny>,
        op: fn(&lz::At, Operand) -> lz::Result<Array>,
    ) -> Res<PyArray> {
        let Some(indices) = &self.indices else {
            return Err(PyValueError::new_err(
                "Cannot update an array without an index; use a.at[index].",
            )
            .into());
        };
        let at = lz::at(&self.array, indices);
        Ok(PyArray::from(op(&at, value_of(value)?)?))
    }
}

#[pymethods]
impl ArrayAt {
    fn __getitem__(&self, key: &Bound<'_, PyAny>) -> Res<ArrayAt> {
        Ok(ArrayAt {
            array: self.array.clone(),
            indices: Some(index_of(&self.array, key)?),
        })
    }

    /// `a[key] += value`, every duplicate index adding.
    fn add(&self, value: &Bound<'_, PyAny>) -> Res<PyArray> {
        self.update(value, |at, v| at.add(v))
    }

    /// `a[key] -= value`, every duplicate index subtracting.
    fn subtract(&self, value: &Bound<'_, PyAny>) -> Res<PyArray> {
        self.update(value, |at, v| at.subtract(v))
    }

    /// `a[key] *= value`, every duplicate index multiplying.
    fn multiply(&self, value: &Bound<'_, PyAny>) -> Res<PyArray> {
        self.update(value, |at, v| at.multiply(v))
    }

    /// `a[key] /= value`, every duplicate index dividing.
    fn divide(&self, value: &Bound<'_, PyAny>) -> Res<PyArray> {
        self.update(value, |at, v| at.divide(v))
    }

    /// `a[key] = maximum(a[key], value)` over every duplicate index.
    fn maximum(&self, value: &Bound<'_, PyAny>) -> Res<PyArray> {
        self.update(value, |at, v| at.maximum(v))
    }

    /// `a[key] = minimum(a[key], value)` over every duplicate index.
    fn minimum(&self, value: &Bound<'_, PyAny>) -> Res<PyArray> {
        self.update(value, |at, v| at.minimum(v))
    }
}

/// `take`'s indices: an int or an array.
pub struct TakeIndices(Array);

impl<'a, 'py> FromPyObject<'a, 'py> for TakeIndices {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<TakeIndices> {
        // A Python bool is an int here, as in MLX's binding (`take(a, True)` is `a[1]`).
        if obj.is_instance_of::<PyInt>() {
            return Ok(TakeIndices(Array::scalar(obj.extract::<i64>()?)));
        }
        Ok(TakeIndices(obj.extract::<Arr>()?.0))
    }
}

impl Hint for TakeIndices {
    fn hint() -> String {
        "int | array".into()
    }
}

fn axes_i32(axes: &Ints) -> Vec<i32> {
    axes.0
        .iter()
        .map(|&a| a.clamp(i32::MIN as i64, i32::MAX as i64) as i32)
        .collect()
}

/// What an op whose number of results depends on its flags returns: one array, or a
/// tuple of them.
enum OneOrTuple {
    One(Array),
    Tuple(Vec<Array>),
}

impl Returned for OneOrTuple {
    fn into_python(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match self {
            OneOrTuple::One(a) => a.into_python(py),
            OneOrTuple::Tuple(arrays) => Tuple(arrays).into_python(py),
        }
    }
}

/// `mx.unique`: the values, then the index, inverse and counts that `extra` asks for.
fn unique_results(
    a: &Array,
    size: Option<i64>,
    extra: [bool; 3],
    fill_value: Option<Array>,
) -> lz::Result<OneOrTuple> {
    let size = match size {
        Some(s) if s < 0 => {
            return Err(lz::Error::value(format!(
                "[unique] Received negative size {s}."
            )))
        }
        s => s.map(|s| s as usize),
    };
    let u = lz::unique_all(a, size, fill_value.as_ref())?;
    if extra == [false; 3] {
        return Ok(OneOrTuple::One(u.values));
    }
    let mut out = vec![u.values];
    for (wanted, array) in extra.into_iter().zip([u.index, u.inverse, u.counts]) {
        if wanted {
            out.push(array);
        }
    }
    Ok(OneOrTuple::Tuple(out))
}

bind! {
    functions {
        /// Take elements of ``a`` at ``indices`` along an axis.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     indices (array or int): Integer indices (an array or an int).
        ///     axis (int, optional): Axis to index; ``None`` indexes the flattened array.
        ///
        /// Returns:
        ///     array: The gathered elements.
        take(a: Arr, /, indices: TakeIndices, axis: Option<i32> = None, *, stream) => lz::take(&a.0, &indices.0, axis);
        /// Take values at matching positions of ``indices`` along an axis.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     indices (array): Integer indices with as many axes as ``a``.
        ///     axis (int, optional): Axis to index; ``None`` uses the flattened array. Default: ``-1``.
        ///
        /// Returns:
        ///     array: The gathered values, shaped like ``indices`` broadcast with ``a``.
        take_along_axis(a: Arr, /, indices: Arr, axis: Option<i32> = Some(-1), *, stream) => lz::take_along_axis(&a.0, &indices.0, axis);
        /// Write ``values`` at matching positions of ``indices`` along an axis.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     indices (array): Integer indices with as many axes as ``a``.
        ///     values (array): Values to write (broadcast to ``indices``).
        ///     axis (int, optional): Axis to index; ``None`` uses the flattened array.
        ///
        /// Returns:
        ///     array: A copy of ``a`` with the values written.
        put_along_axis(a: Arr, /, indices: Arr, values: Arr, axis: Option<i32> = None, *, stream) => lz::put_along_axis(&a.0, &indices.0, &values.0, axis);
        /// Slice an array with start positions given as an array.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     start_indices (array): Start of the slice on each of ``axes``.
        ///     axes (int or list(int)): Axes the starts refer to.
        ///     slice_size (int or list(int)): Shape of the slice (every axis).
        ///
        /// Returns:
        ///     array: The slice.
        slice(a: Arr, start_indices: Arr, axes: Ints, slice_size: Shape, *, stream) => lz::dynamic_slice(&a.0, &start_indices.0, &axes_i32(&axes), &slice_size.0);
        /// Write ``update`` into ``a`` at start positions given as an array.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     update (array): Values to write.
        ///     start_indices (array): Start position on each of ``axes``.
        ///     axes (int or list(int)): Axes the starts refer to.
        ///
        /// Returns:
        ///     array: A copy of ``a`` with ``update`` written.
        slice_update(a: Arr, update: Arr, start_indices: Arr, axes: Ints, *, stream) => lz::dynamic_slice_update(&a.0, &update.0, &start_indices.0, &axes_i32(&axes));
        /// Indices of the non-zero elements, one index array per axis.
        ///
        /// Args:
        ///     a (array): Input array.
        ///
        /// Returns:
        ///     tuple(array): The indices along each axis.
        nonzero(a: Arr, /, *, stream) => lz::nonzero(&a.0).map(Tuple);
        /// Indices of the non-zero elements, one row per element.
        ///
        /// Args:
        ///     a (array): Input array.
        ///
        /// Returns:
        ///     array: An ``(n, ndim)`` array of indices.
        argwhere(a: Arr, /, *, stream) => lz::argwhere(&a.0);
        /// Returns the sorted unique elements of the flattened array.
        ///
        /// With a ``size`` (as MLX, where it is required), the outputs have ``size``
        /// entries whatever ``a`` holds, so ``a`` is not evaluated and this works under
        /// ``vmap``, ``compile`` and ``grad``. Entries past the last unique element hold
        /// ``fill_value``, index the first unique element's first occurrence and count
        /// ``0``. A ``size`` smaller than the number of unique elements keeps the
        /// smallest ones; ``inverse`` then clamps the dropped elements to the last entry.
        ///
        /// Beyond MLX: ``size=None`` makes the output exactly as long as the number of
        /// unique elements. That shape depends on the values, so ``a`` is evaluated
        /// (inside ``vmap`` or ``compile`` this is an error: pass a ``size`` there).
        ///
        /// NaNs are all distinct, as in MLX (NumPy's ``equal_nan=False``).
        ///
        /// Args:
        ///     a (array): Input array.
        ///     size (int, optional): The size of the output; ``None`` uses the number of
        ///         unique elements (evaluating ``a``). Default: ``None``.
        ///     return_index (bool, optional): Also return the index in the flattened ``a``
        ///         of the first occurrence of each unique element. Default: ``False``.
        ///     return_inverse (bool, optional): Also return the indices of the unique
        ///         array that rebuild ``a`` (``a``'s shape). Default: ``False``.
        ///     return_counts (bool, optional): Also return how often each unique element
        ///         occurs. Default: ``False``.
        ///     fill_value (scalar or array, optional): The value of the entries past the
        ///         last unique element; ``None`` uses the smallest element. Default: ``None``.
        ///
        /// Returns:
        ///     array or tuple(array, ...): The sorted unique elements; if any ``return_*``
        ///     flag is set, a tuple of values, index (``uint32``), inverse (``uint32``) and
        ///     counts (``int32``), those requested, in that order.
        unique(a: Arr, /, size: Option<i64> = None, return_index: bool = false, return_inverse: bool = false, return_counts: bool = false, fill_value: Option<Arr> = None, *, stream) => unique_results(&a.0, size, [return_index, return_inverse, return_counts], fill_value.map(|f| f.0));
    }
    methods {
    }
}
