//! The `linalg` submodule (`mx.linalg`): norms, inverses, solves and factorisations with
//! MLX's signatures. MLX runs these on the CPU stream only (`stream=mx.cpu`); lazulite
//! has one device, so `stream` is accepted and ignored as everywhere else.

use crate::bind;
use crate::bind::{Returned, Tuple};
use crate::convert::{Arr, AxesArg};
use crate::signature::Hint;
use lazulite::linalg as la;
use lazulite::Array;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

/// `norm`'s `ord`: a number or a name (`"fro"`, `"nuc"`).
pub struct OrdArg(la::NormOrd);

impl<'a, 'py> FromPyObject<'a, 'py> for OrdArg {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<OrdArg> {
        if let Ok(name) = obj.extract::<String>() {
            return Ok(OrdArg(la::NormOrd::Name(name)));
        }
        if obj.is_instance_of::<pyo3::types::PyBool>() {
            return Err(PyTypeError::new_err(
                "[linalg::norm] ord must be a number or a string, got bool.",
            ));
        }
        match obj.extract::<f64>() {
            Ok(p) => Ok(OrdArg(la::NormOrd::Number(p))),
            Err(_) => Err(PyTypeError::new_err(format!(
                "[linalg::norm] ord must be a number or a string, got {}.",
                obj.get_type().name()?
            ))),
        }
    }
}

impl Hint for OrdArg {
    fn hint() -> String {
        "int | float | str".into()
    }
}

/// One array or a tuple of them (`svd` returns `s` alone without `compute_uv`).
pub enum Outputs {
    One(Array),
    Many(Vec<Array>),
}

impl Returned for Outputs {
    fn into_python(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match self {
            Outputs::One(a) => a.into_python(py),
            Outputs::Many(v) => Tuple(v).into_python(py),
        }
    }
}

fn svd_outputs(a: &Array, compute_uv: bool) -> lazulite::Result<Outputs> {
    let mut parts = la::svd(a, compute_uv)?;
    Ok(if compute_uv {
        Outputs::Many(parts)
    } else {
        Outputs::One(parts.remove(0))
    })
}

fn pair(r: lazulite::Result<(Array, Array)>) -> lazulite::Result<Tuple> {
    r.map(|(x, y)| Tuple(vec![x, y]))
}

/// `x` in the dtype of `a` when that is float16 or bfloat16: MLX's determinants keep
/// half precision (they are computed in float32).
fn half_as(a: &Array, x: Array) -> lazulite::Result<Array> {
    match a.dtype() {
        d @ (lazulite::DType::Float16 | lazulite::DType::BFloat16) => lazulite::astype(&x, d),
        _ => Ok(x),
    }
}

fn det_in_dtype(a: &Array) -> lazulite::Result<Array> {
    half_as(a, la::det(a)?)
}

fn slogdet_in_dtype(a: &Array) -> lazulite::Result<Tuple> {
    let (sign, logabsdet) = la::slogdet(a)?;
    Ok(Tuple(vec![half_as(a, sign)?, half_as(a, logabsdet)?]))
}

fn norm_of(
    a: &Array,
    ord: Option<OrdArg>,
    axis: Option<AxesArg>,
    keepdims: bool,
) -> lazulite::Result<Array> {
    la::norm(
        a,
        ord.map(|o| o.0),
        axis.as_ref().map(|x| x.0.as_slice()),
        keepdims,
    )
}

bind! {
    functions {
        /// Matrix or vector norm.
        ///
        /// Args:
        ///     a (array): Input array. If ``axis`` is ``None`` and ``ord`` is given, ``a`` must be 1-D or 2-D.
        ///     ord (int, float or str, optional): Order of the norm: a number ``p`` (vectors), or ``'fro'``, ``'nuc'``, ``±1``, ``±2``, ``±inf`` (matrices). Default: ``None`` (2-norm of all elements).
        ///     axis (int or list(int), optional): One axis (vector norm) or two (matrix norm). Default: ``None``.
        ///     keepdims (bool, optional): Keep the reduced axes as size one. Default: ``False``.
        ///
        /// Returns:
        ///     array: The norm.
        norm(a: Arr, /, ord: Option<OrdArg> = None, axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => norm_of(&a.0, ord, axis, keepdims);
        /// Compute the inverse of a square matrix (batched over leading axes).
        ///
        /// Args:
        ///     a (array): Input array, float32 or float64.
        ///
        /// Returns:
        ///     array: ``ainv`` with ``a @ ainv = I``.
        inv(a: Arr, *, stream) => la::inv(&a.0);
        /// Compute the inverse of a triangular square matrix.
        ///
        /// Args:
        ///     a (array): Input array; only its lower (or upper) triangle is read.
        ///     upper (bool, optional): Whether ``a`` is upper triangular. Default: ``False``.
        ///
        /// Returns:
        ///     array: The triangular inverse.
        tri_inv(a: Arr, upper: bool = false, *, stream) => la::tri_inv(&a.0, upper);
        /// Compute the Cholesky factor of a symmetric positive definite matrix.
        ///
        /// Args:
        ///     a (array): Input array (its lower triangle is read).
        ///     upper (bool, optional): Return the upper factor ``U = L.T``. Default: ``False``.
        ///
        /// Returns:
        ///     array: The Cholesky factor.
        cholesky(a: Arr, upper: bool = false, *, stream) => lazulite::cholesky(&a.0, upper);
        /// Compute the inverse of a symmetric positive definite matrix from its Cholesky factor.
        ///
        /// Args:
        ///     a (array): The Cholesky factor ``L`` (or ``U`` if ``upper``).
        ///     upper (bool, optional): Whether the factor is upper triangular. Default: ``False``.
        ///
        /// Returns:
        ///     array: The inverse of ``L @ L.T`` (or ``U.T @ U``).
        cholesky_inv(a: Arr, upper: bool = false, *, stream) => la::cholesky_inv(&a.0, upper);
        /// Compute the Moore-Penrose pseudo-inverse (via the SVD).
        ///
        /// Args:
        ///     a (array): Input array of shape ``(..., M, N)``.
        ///
        /// Returns:
        ///     array: The pseudo-inverse, shape ``(..., N, M)``.
        pinv(a: Arr, *, stream) => la::pinv(&a.0);
        /// Solve the linear system ``a @ x = b``.
        ///
        /// Args:
        ///     a (array): Square matrices.
        ///     b (array): Right-hand side: a vector if 1-D, else matrices.
        ///
        /// Returns:
        ///     array: The solution ``x``.
        solve(a: Arr, b: Arr, *, stream) => la::solve(&a.0, &b.0);
        /// Solve ``a @ x = b`` for triangular ``a``.
        ///
        /// Args:
        ///     a (array): Triangular matrices (only the lower or upper triangle is read).
        ///     b (array): Right-hand side: a vector if 1-D, else matrices.
        ///     upper (bool, optional): Whether ``a`` is upper triangular. Default: ``False``.
        ///
        /// Returns:
        ///     array: The solution ``x``.
        solve_triangular(a: Arr, b: Arr, *, upper: bool = false, stream) => la::solve_triangular(&a.0, &b.0, upper);
        /// The QR factorization of the input matrix (reduced).
        ///
        /// Args:
        ///     a (array): Input array of shape ``(..., M, N)``.
        ///
        /// Returns:
        ///     tuple(array, array): ``Q`` ``(..., M, K)`` and ``R`` ``(..., K, N)``, ``K = min(M, N)``.
        qr(a: Arr, *, stream) => pair(la::qr(&a.0));
        /// The singular value decomposition ``a = U @ diag(S) @ Vt``.
        ///
        /// Args:
        ///     a (array): Input array of shape ``(..., M, N)``.
        ///     compute_uv (bool, optional): Return ``U`` and ``Vt`` too. Default: ``True``.
        ///
        /// Returns:
        ///     Union[tuple(array, array, array), array]: ``(U, S, Vt)`` or ``S`` (descending).
        svd(a: Arr, compute_uv: bool = true, *, stream) => svd_outputs(&a.0, compute_uv);
        /// Eigenvalues and eigenvectors of a symmetric (Hermitian) matrix.
        ///
        /// Args:
        ///     a (array): Square matrices.
        ///     UPLO (str, optional): Read the lower (``'L'``) or upper (``'U'``) triangle. Default: ``'L'``.
        ///
        /// Returns:
        ///     tuple(array, array): Eigenvalues (ascending) and eigenvectors (columns).
        eigh(a: Arr, UPLO: &str = "L", *, stream) => pair(la::eigh(&a.0, UPLO));
        /// Eigenvalues of a symmetric (Hermitian) matrix.
        ///
        /// Args:
        ///     a (array): Square matrices.
        ///     UPLO (str, optional): Read the lower (``'L'``) or upper (``'U'``) triangle. Default: ``'L'``.
        ///
        /// Returns:
        ///     array: Eigenvalues in ascending order.
        eigvalsh(a: Arr, UPLO: &str = "L", *, stream) => la::eigvalsh(&a.0, UPLO);
        /// Eigenvalues and right eigenvectors of a general square matrix.
        ///
        /// The result is always complex (``complex64``), even when the eigenvalues are
        /// real. For a real matrix, conjugate pairs are adjacent, positive imaginary part
        /// first; for a complex one, each eigenvector's largest entry is real and positive.
        ///
        /// Args:
        ///     a (array): Square matrices ``(..., N, N)``, float32, float64 or complex64.
        ///
        /// Returns:
        ///     tuple(array, array): Eigenvalues ``(..., N)`` and unit-norm eigenvectors
        ///     ``(..., N, N)``; ``v[..., :, i]`` belongs to ``w[..., i]``.
        eig(a: Arr, *, stream) => pair(la::eig(&a.0));
        /// Eigenvalues of a general square matrix (``complex64``, not necessarily in order).
        ///
        /// Args:
        ///     a (array): Square matrices ``(..., N, N)``, float32, float64 or complex64.
        ///
        /// Returns:
        ///     array: The eigenvalues, shape ``(..., N)``.
        eigvals(a: Arr, *, stream) => la::eigvals(&a.0);
        /// LU factorization with partial pivoting.
        ///
        /// Args:
        ///     a (array): Input array of shape ``(..., M, N)``.
        ///
        /// Returns:
        ///     tuple(array, array, array): Row permutation ``p`` (uint32), ``L`` and ``U`` with ``a == L[p] @ U``.
        lu(a: Arr, *, stream) => la::lu(&a.0).map(|(p, l, u)| Tuple(vec![p, l, u]));
        /// Packed LU factorization with partial pivoting (LAPACK's ``getrf``).
        ///
        /// Args:
        ///     a (array): Input array of shape ``(..., M, N)``.
        ///
        /// Returns:
        ///     tuple(array, array): The packed ``L`` and ``U`` factors and the pivots (uint32).
        lu_factor(a: Arr, *, stream) => pair(la::lu_factor(&a.0));
        /// The cross product of two arrays along an axis.
        ///
        /// Args:
        ///     a (array): First input (2 or 3 long along ``axis``).
        ///     b (array): Second input (2 or 3 long along ``axis``).
        ///     axis (int, optional): The axis of the vectors. Default: ``-1``.
        ///
        /// Returns:
        ///     array: The cross product.
        cross(a: Arr, b: Arr, axis: i32 = -1, *, stream) => la::cross(&a.0, &b.0, axis);
        /// Compute the determinant of a square matrix.
        ///
        /// Args:
        ///     a (array): Square matrices.
        ///
        /// Returns:
        ///     array: The determinants.
        det(a: Arr, *, stream) => det_in_dtype(&a.0);
        /// Sign and log absolute value of the determinant.
        ///
        /// Args:
        ///     a (array): Square matrices.
        ///
        /// Returns:
        ///     tuple(array, array): ``sign`` and ``logabsdet``.
        slogdet(a: Arr, *, stream) => slogdet_in_dtype(&a.0);
    }
    methods {}
}

/// Adds `lazulite.core.linalg` to `parent`.
pub fn register_submodule(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = parent.py();
    let module = PyModule::new(py, "linalg")?;
    register(&module)?;
    // MLX's `mx.matrix_norm` is its `mx.linalg.norm` under another name.
    parent.add("matrix_norm", module.getattr("norm")?)?;
    parent.add_submodule(&module)?;
    py.import("sys")?
        .getattr("modules")?
        .set_item("lazulite.core.linalg", &module)?;
    Ok(())
}
