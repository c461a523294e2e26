//! Matrix and tensor products in `mlx.core` (`matmul`, `addmm`, `gather_mm`, `inner`,
//! `outer`, `tensordot`, `kron`, `vecdot`, ...) with MLX's signatures; `@` on arrays;
//! `einsum` and `einsum_path` (variadic) by hand. The `mx.linalg` submodule is `linalg.rs`.

use crate::array::PyArray;
use crate::bind;
use crate::convert::{Arr, ContractAxes};
use crate::errors::Res;
use lazulite as lz;
use lazulite::Array;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

bind! {
    functions {
        /// Matrix product, broadcasting over leading (batch) axes; 1-D inputs act as vectors.
        ///
        /// Args:
        ///     a (array): Left operand.
        ///     b (array): Right operand.
        ///
        /// Returns:
        ///     array: The product.
        matmul(a: Arr, b: Arr, /, *, stream) => lz::matmul(&a.0, &b.0);
        /// ``alpha * (a @ b) + beta * c`` in one op.
        ///
        /// Args:
        ///     c (array): Array added to the product (broadcast to its shape).
        ///     a (array): Left operand of the product.
        ///     b (array): Right operand of the product.
        ///     alpha (float): Factor of the product. Default: ``1.0``.
        ///     beta (float): Factor of ``c``. Default: ``1.0``.
        ///
        /// Returns:
        ///     array: The result.
        addmm(c: Arr, a: Arr, b: Arr, /, alpha: f64 = 1.0, beta: f64 = 1.0, *, stream) => lz::addmm(&c.0, &a.0, &b.0, alpha, beta);
        /// Matrix products of matrices picked by index: ``out[i] = a[lhs_indices[i]] @
        /// b[rhs_indices[i]]``, an index counting the matrices of an operand's leading axes
        /// in row-major order. Mixture-of-experts layers use it to multiply each token by
        /// its expert's weights without gathering copies of them.
        ///
        /// Args:
        ///     a (array): Input array (a 1-D input is a row vector).
        ///     b (array): Input array (a 1-D input is a column vector).
        ///     lhs_indices (array, optional): Integer indices of matrices of ``a``;
        ///         ``None``: each in turn. Default: ``None``.
        ///     rhs_indices (array, optional): Integer indices of matrices of ``b``;
        ///         ``None``: each in turn. Default: ``None``.
        ///     sorted_indices (bool, optional): Whether the indices are sorted, a hint
        ///         that does not change the result. Default: ``False``.
        ///
        /// Returns:
        ///     array: The products, shaped as the broadcast indices followed by the
        ///     matrix dimensions.
        gather_mm(a: Arr, b: Arr, /, lhs_indices: Option<Arr> = None, rhs_indices: Option<Arr> = None, *, sorted_indices: bool = false, stream) => {
            let _hint_only = sorted_indices;
            lz::gather_mm(&a.0, &b.0, lhs_indices.as_ref().map(|i| &i.0), rhs_indices.as_ref().map(|i| &i.0))
        };
        /// Matrix product with ``block_size x block_size`` tiles masked out: for ``a`` of
        /// shape ``(..., M, K)`` and ``b`` of ``(..., K, N)``, ``mask_lhs`` has shape
        /// ``(..., ceil(M / block_size), ceil(K / block_size))``, ``mask_rhs``
        /// ``(..., ceil(K / block_size), ceil(N / block_size))`` and ``mask_out``
        /// ``(..., ceil(M / block_size), ceil(N / block_size))``. A false entry of a bool
        /// mask zeroes its tile; a float mask scales it.
        ///
        /// Args:
        ///     a (array): Input array or scalar.
        ///     b (array): Input array or scalar.
        ///     block_size (int): Size of the masked tiles, ``32`` or ``64``. Default: ``64``.
        ///     mask_out (array, optional): Mask for the output. Default: ``None``.
        ///     mask_lhs (array, optional): Mask for ``a``. Default: ``None``.
        ///     mask_rhs (array, optional): Mask for ``b``. Default: ``None``.
        ///
        /// Returns:
        ///     array: The output array.
        block_masked_mm(a: Arr, b: Arr, /, block_size: i32 = 64, mask_out: Option<Arr> = None, mask_lhs: Option<Arr> = None, mask_rhs: Option<Arr> = None, *, stream) => {
            let mask = |m: &Option<Arr>| m.as_ref().map(|m| m.0.clone());
            let (out, lhs, rhs) = (mask(&mask_out), mask(&mask_lhs), mask(&mask_rhs));
            lz::block_masked_mm(&a.0, &b.0, block_size, out.as_ref(), lhs.as_ref(), rhs.as_ref())
        };
        /// Matrix product with the inner dimension split into segments, one result per
        /// segment: ``out[i] = a[:, s:e] @ b[s:e, :]`` for ``segments[i] = (s, e)``.
        ///
        /// Args:
        ///     a (array): Input array of shape ``MxK``.
        ///     b (array): Input array of shape ``KxN``.
        ///     segments (array): Integer pairs ``(start, end)`` into the inner dimension,
        ///         shape ``(..., 2)``.
        ///
        /// Returns:
        ///     array: The result per segment, of shape ``(..., M, N)``.
        segmented_mm(a: Arr, b: Arr, /, segments: Arr, *, stream) => lz::segmented_mm(&a.0, &b.0, &segments.0);
        /// Inner product: sum over the last axes of ``a`` and ``b``.
        ///
        /// Args:
        ///     a (array): First input.
        ///     b (array): Second input.
        ///
        /// Returns:
        ///     array: The inner product.
        inner(a: Arr, b: Arr, /, *, stream) => lz::inner(&a.0, &b.0);
        /// Outer product of two vectors (inputs are flattened).
        ///
        /// Args:
        ///     a (array): First input.
        ///     b (array): Second input.
        ///
        /// Returns:
        ///     array: The 2-D outer product.
        outer(a: Arr, b: Arr, /, *, stream) => lz::outer(&a.0, &b.0);
        /// Sum products over the given axes of ``a`` and ``b``.
        ///
        /// Args:
        ///     a (array): First input.
        ///     b (array): Second input.
        ///     axes (int or list(list(int)), optional): An int ``n`` (last ``n`` axes of ``a`` with first ``n`` of ``b``) or two lists of axes. Default: ``2``.
        ///
        /// Returns:
        ///     array: The contraction.
        tensordot(a: Arr, b: Arr, /, axes: Option<ContractAxes> = None, *, stream) => lz::tensordot(&a.0, &b.0, axes.map_or(lz::TensordotAxes::Count(2), |x| x.0));
        /// Kronecker product of two arrays.
        ///
        /// Args:
        ///     a (array): First input.
        ///     b (array): Second input.
        ///
        /// Returns:
        ///     array: The Kronecker product.
        kron(a: Arr, b: Arr, *, stream) => lz::kron(&a.0, &b.0);
        /// Dot product of vectors along an axis (conjugating ``a`` if complex).
        ///
        /// Args:
        ///     a (array): First input.
        ///     b (array): Second input.
        ///     axis (int): Axis of the vectors. Default: ``-1``.
        ///
        /// Returns:
        ///     array: The dot products.
        vecdot(a: Arr, b: Arr, /, *, axis: i32 = -1, stream) => lz::vecdot(&a.0, &b.0, axis);
    }
    methods {}
}

/// Einstein summation: contract the operands as the subscripts say, e.g.
/// ``einsum("ij,jk->ik", a, b)`` is a matrix product.
///
/// Args:
///     subscripts (str): Comma-separated subscripts of the operands, optionally ``->`` and
///         those of the output.
///     *operands (array): The arrays.
///
/// Returns:
///     array: The result.
#[pyfunction]
#[pyo3(signature = (subscripts, *operands, stream = None))]
#[allow(unused_variables)]
fn einsum(
    subscripts: &str,
    operands: &Bound<'_, PyTuple>,
    stream: Option<crate::devices::StreamOrDevice>,
) -> Res<PyArray> {
    let arrays: Vec<Array> = operands
        .iter()
        .map(|o| Ok(o.extract::<Arr>()?.0))
        .collect::<PyResult<_>>()?;
    let refs: Vec<&Array> = arrays.iter().collect();
    Ok(PyArray::from(lz::einsum(subscripts, &refs)?))
}

/// The order in which ``einsum`` contracts the operands, and a report on its cost.
/// Only the shapes of the operands are read.
///
/// Args:
///     subscripts (str): Comma-separated subscripts of the operands, optionally ``->``
///         and those of the output (as for ``einsum``).
///     *operands (array): The arrays.
///
/// Returns:
///     tuple(list(tuple(int, int)), str): For each step, the positions of the terms it
///     contracts in the current list of terms (its result goes to the end of the list);
///     and a report with the naive and optimized scaling and FLOP counts.
#[pyfunction]
#[pyo3(signature = (subscripts, *operands))]
fn einsum_path(
    py: Python<'_>,
    subscripts: &str,
    operands: &Bound<'_, PyTuple>,
) -> Res<(Vec<Py<PyTuple>>, String)> {
    let arrays: Vec<Array> = operands
        .iter()
        .map(|o| Ok(o.extract::<Arr>()?.0))
        .collect::<PyResult<_>>()?;
    let refs: Vec<&Array> = arrays.iter().collect();
    let (path, report) = lz::einsum_path(subscripts, &refs)?;
    let path = path
        .into_iter()
        .map(|step| Ok(PyTuple::new(py, step)?.unbind()))
        .collect::<PyResult<_>>()?;
    Ok((path, report))
}

/// The other operand of `@`: an array or array data (NumPy, buffer, DLPack); `None`
/// for Python scalars and lists, which MLX refuses with a TypeError, and for anything
/// else, so that Python tries the other side.
fn matmul_operand(other: &Bound<'_, PyAny>) -> PyResult<Option<Array>> {
    if other.is_instance_of::<PyList>()
        || other.is_instance_of::<PyTuple>()
        || crate::convert::scalar_of(other)?.is_some()
    {
        return Ok(None);
    }
    Ok(other.extract::<Arr>().ok().map(|a| a.0))
}

#[pymethods]
impl PyArray {
    fn __matmul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> Res<Py<PyAny>> {
        let Some(b) = matmul_operand(other)? else {
            return Ok(py.NotImplemented());
        };
        Ok(Py::new(py, PyArray::from(lz::matmul(&self.array(), &b)?))?.into_any())
    }

    fn __rmatmul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> Res<Py<PyAny>> {
        let Some(a) = matmul_operand(other)? else {
            return Ok(py.NotImplemented());
        };
        Ok(Py::new(py, PyArray::from(lz::matmul(&a, &self.array())?))?.into_any())
    }

    fn __imatmul__(&self, other: &Bound<'_, PyAny>) -> Res<()> {
        let Some(b) = matmul_operand(other)? else {
            let name = other.get_type().name()?.to_string();
            return Err(PyTypeError::new_err(format!(
                "unsupported operand type(s) for @=: 'array' and '{name}'"
            ))
            .into());
        };
        self.rebind(lz::matmul(&self.array(), &b)?);
        Ok(())
    }
}

/// Adds the table's functions, `einsum` and `einsum_path` to `module`.
pub fn register_all(module: &Bound<'_, PyModule>) -> PyResult<()> {
    register(module)?;
    module.add_function(wrap_pyfunction!(einsum, module)?)?;
    module.add_function(wrap_pyfunction!(einsum_path, module)?)?;
    Ok(())
}
