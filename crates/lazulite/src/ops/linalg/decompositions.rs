//! Matrix inverses, linear solves and factorisations (MLX's `linalg` namespace): the
//! `Inverse`, `Solve`, `SolveTriangular`, `LuFactor`, `Qr`, `Svd`, `Eigh` and `Eig` primitives
//! with their derivative and batching rules, and the ops composed from them (`tri_inv`,
//! `cholesky_inv`, `lu`, `pinv`, `det`, `slogdet`). The `Cholesky` primitive's rules are
//! here too.
//!
//! Kernels compute in float64 (float32 is rounded once at the end), batched over the
//! leading axes. Like MLX, the factorisations take float32 or float64, and `svd`, `eigh`,
//! `eigvalsh`, `eig`, `eigvals` also complex64 (computed in complex float64, without
//! derivatives). Derivative
//! rules follow the standard matrix identities (Giles 2008; Seeger et al. 2017 for QR;
//! Townsend 2016 for the SVD; Murray 2016 for Cholesky). Where a factorisation reads one
//! triangle of a symmetric matrix (`cholesky`, `eigh`), its cotangent lies in that
//! triangle, consistent with finite differences of the function as computed.

use crate::array::Array;
use crate::backend::cpu::{
    eig as eig_kernel, eigh as eigh_kernel, lu as lu_kernel, qr as qr_kernel, svd as svd_kernel,
};
use crate::backend::Tensor;
use crate::dtype::{promote_types, DType};
use crate::error::{Error, Result};
use crate::ops::batching::batch_to_front;
use crate::ops::binary::{add, divide, greater, multiply, not_equal, subtract};
use crate::ops::cast::astype;
use crate::ops::creation::{arange, diagonal, eye, tril, triu, zeros_like};
use crate::ops::indexing::take_along_axis;
use crate::ops::linalg::{cholesky, matmul, Cholesky};
use crate::ops::reduce::{max, prod, sum};
use crate::ops::shape::{concatenate, expand_dims, squeeze, swapaxes};
use crate::ops::sort::argsort;
use crate::ops::ternary::where_;
use crate::ops::unary::{abs, log, negative, reciprocal, sign, square};
use crate::ops::view::{broadcast_to, slice};
use crate::primitive::{no_rule, Export, MlxInput, MlxNode, MlxState, OutputSpec, Primitive};
use crate::shape::{broadcast_shapes, shape_text};

/// Checks that `a` is a (batch of) matrix of float32 or float64, square if `square`
/// (with MLX's message `square_message`).
fn check_matrix(op: &str, a: &Array, square: Option<&str>) -> Result<()> {
    check_matrix_of(op, a, square, false)
}

/// [`check_matrix`], complex64 matrices also accepted if `complex` (as MLX's `svd`,
/// `eigh` and `eigvalsh` do).
fn check_matrix_of(op: &str, a: &Array, square: Option<&str>, complex: bool) -> Result<()> {
    if a.ndim() < 2 {
        return Err(Error::value(format!(
            "[linalg::{op}] Arrays must have >= 2 dimensions. Received array with {} dimensions.",
            a.ndim()
        )));
    }
    let (accepted, types) = match a.dtype() {
        DType::Float32 | DType::Float64 => (true, "float32 or float64"),
        DType::Complex64 if complex => (true, ""),
        _ if complex => (false, "float32, float64 or complex64"),
        _ => (false, "float32 or float64"),
    };
    if !accepted {
        return Err(Error::value(format!(
            "[linalg::{op}] Arrays must have type {types}. Received array with type {}.",
            a.dtype()
        )));
    }
    let n = a.ndim();
    if let Some(message) = square {
        if a.shape()[n - 1] != a.shape()[n - 2] {
            return Err(Error::value(format!("[linalg::{op}] {message}")));
        }
    }
    Ok(())
}

/// The dtype of a decomposition's real outputs (singular values, Hermitian eigenvalues).
fn real_dtype(dtype: DType) -> DType {
    if dtype.is_complex() {
        DType::Float32
    } else {
        dtype
    }
}

/// MLX's error for a derivative of a decomposition of complex matrices, which it does not
/// define.
fn no_complex_rule(transform: &str, primitive: &str, a: &Array) -> Result<()> {
    if a.dtype().is_complex() {
        return Err(Error::value(format!(
            "[Primitive::{transform}] Not implemented for {primitive}."
        )));
    }
    Ok(())
}

fn mt(a: &Array) -> Result<Array> {
    swapaxes(a, -1, -2)
}

/// The first `k` entries of axis `axis` (from the end if negative) of `a`, a view.
fn leading(a: &Array, axis: i32, k: usize) -> Result<Array> {
    let n = a.ndim();
    let axis = if axis < 0 { n as i32 + axis } else { axis } as usize;
    let stop: Vec<i64> = a
        .shape()
        .iter()
        .enumerate()
        .map(|(d, &s)| if d == axis { k as i64 } else { s as i64 })
        .collect();
    slice(a, &vec![0; n], &stop, &vec![1; n])
}

/// The entries of axis `axis` of `a` from `k` on, a view.
fn trailing(a: &Array, axis: i32, k: usize) -> Result<Array> {
    let n = a.ndim();
    let axis = if axis < 0 { n as i32 + axis } else { axis } as usize;
    let start: Vec<i64> = (0..n)
        .map(|d| if d == axis { k as i64 } else { 0 })
        .collect();
    let stop: Vec<i64> = a.shape().iter().map(|&s| s as i64).collect();
    slice(a, &start, &stop, &vec![1; n])
}

/// `a` and `b` with their batch axes (all but the last two) broadcast together, as views.
fn broadcast_batches(op: &str, a: &Array, b: &Array) -> Result<(Array, Array)> {
    let (na, nb) = (a.ndim(), b.ndim());
    let batch = broadcast_shapes(&a.shape()[..na - 2], &b.shape()[..nb - 2]).map_err(|_| {
        Error::value(format!(
            "[linalg::{op}] The batch dimensions of inputs with shapes {} and {} cannot be broadcast.",
            shape_text(a.shape()),
            shape_text(b.shape())
        ))
    })?;
    let with = |x: &Array| -> Vec<usize> {
        batch
            .iter()
            .copied()
            .chain(x.shape()[x.ndim() - 2..].iter().copied())
            .collect()
    };
    Ok((broadcast_to(a, &with(a))?, broadcast_to(b, &with(b))?))
}

/// The lower (or upper) triangle of the last two axes with the diagonal halved: the
/// projection that maps a symmetric cotangent onto the triangle a kernel reads.
fn half_diagonal_triangle(x: &Array, upper: bool) -> Result<Array> {
    let t = if upper { triu(x, 0)? } else { tril(x, 0)? };
    let n = x.shape()[x.ndim() - 1];
    let halves = subtract(1.0, &multiply(&eye(n, None, 0, x.dtype())?, 0.5)?)?;
    multiply(&t, &halves)
}

/// The cotangent of a symmetric function's input `g` (a full-matrix gradient) seen
/// through the triangle the kernel reads: `Φ(g + gᵀ)`.
fn triangle_cotangent(g: &Array, upper: bool) -> Result<Array> {
    half_diagonal_triangle(&add(g, &mt(g)?)?, upper)
}

/// The symmetric matrix whose lower (or upper) triangle is that of `t`.
fn symmetric_from_triangle(t: &Array, upper: bool) -> Result<Array> {
    let half = half_diagonal_triangle(t, upper)?;
    add(&half, &mt(&half)?)
}

// ---------------------------------------------------------------------------------------
// Inverse

/// The inverse of each matrix in the last two axes of its input.
pub(crate) struct Inverse;

impl Primitive for Inverse {
    fn name(&self) -> &'static str {
        "inv"
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        MlxNode::single(
            "Inverse",
            vec![MlxState::Bool(false), MlxState::Bool(false)],
            inputs,
            outputs,
        )
    }

    fn eval(&self, inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        Ok(vec![lu_kernel::inverse(&inputs[0])?])
    }

    /// `ā = -yᵀ ḡ yᵀ` for `y = a⁻¹`.
    fn vjp(
        &self,
        _: &[Array],
        outputs: &[Array],
        cotangents: &[Array],
        _: &[usize],
    ) -> Result<Vec<Array>> {
        let yt = mt(&outputs[0])?;
        Ok(vec![negative(&matmul(
            &matmul(&yt, &cotangents[0])?,
            &yt,
        )?)?])
    }

    /// `ẏ = -y ȧ y`.
    fn jvp(&self, inputs: &[Array], tangents: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        let y = inv(&inputs[0])?;
        Ok(vec![negative(&matmul(&matmul(&y, &tangents[0])?, &y)?)?])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        Ok((
            vec![inv(&batch_to_front(&inputs[0], axes[0])?)?],
            vec![Some(0)],
        ))
    }
}

/// The inverse of a square matrix (batched over the leading axes), float32 or float64.
/// An exactly singular matrix is an error when evaluated (as MLX and NumPy).
///
/// ```
/// use lazulite::{linalg, Array};
/// let a = Array::from_slice(&[4.0f32, 1.0, 2.0, 3.0], &[2, 2])?;
/// let y = linalg::inv(&a)?;
/// assert_eq!(y.to_vec::<f32>()?, vec![0.3, -0.1, -0.2, 0.4]);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn inv(a: &Array) -> Result<Array> {
    check_matrix(
        "inv",
        a,
        Some("Inverses are only defined for square matrices."),
    )?;
    Ok(Array::from_op(
        Inverse,
        vec![a.clone()],
        a.shape().to_vec(),
        a.dtype(),
    ))
}

// ---------------------------------------------------------------------------------------
// Solve

/// `x` with `a x = b` for inputs `[a, b]`: `[..., n, n]` and `[..., n, k]` of one batch
/// shape and dtype.
pub(crate) struct Solve;

impl Primitive for Solve {
    fn name(&self) -> &'static str {
        "solve"
    }

    fn eval(&self, inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        Ok(vec![lu_kernel::solve(&inputs[0], &inputs[1])?])
    }

    /// `b̄ = a⁻ᵀ ḡ`, `ā = -b̄ xᵀ`.
    fn vjp(
        &self,
        inputs: &[Array],
        outputs: &[Array],
        cotangents: &[Array],
        argnums: &[usize],
    ) -> Result<Vec<Array>> {
        let gb = solve_matrices(&mt(&inputs[0])?, &cotangents[0])?;
        argnums
            .iter()
            .map(|&i| {
                if i == 0 {
                    negative(&matmul(&gb, &mt(&outputs[0])?)?)
                } else {
                    Ok(gb.clone())
                }
            })
            .collect()
    }

    /// `ẋ = a⁻¹ (ḃ - ȧ x)`.
    fn jvp(&self, inputs: &[Array], tangents: &[Array], argnums: &[usize]) -> Result<Vec<Array>> {
        let (a, b) = (&inputs[0], &inputs[1]);
        let x = solve_matrices(a, b)?;
        let mut rhs = zeros_like(&x)?;
        for (&i, t) in argnums.iter().zip(tangents) {
            rhs = if i == 0 {
                subtract(&rhs, &matmul(t, &x)?)?
            } else {
                add(&rhs, t)?
            };
        }
        Ok(vec![solve_matrices(a, &rhs)?])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let a = batch_to_front(&inputs[0], axes[0])?;
        let b = batch_to_front(&inputs[1], axes[1])?;
        Ok((vec![solve_matrices(&a, &b)?], vec![Some(0)]))
    }
}

/// Records `Solve` for matrices `a` and `b` of one dtype, broadcasting their batch axes.
fn solve_matrices(a: &Array, b: &Array) -> Result<Array> {
    let (a, b) = broadcast_batches("solve", a, b)?;
    let shape = b.shape().to_vec();
    let dtype = b.dtype();
    Ok(Array::from_op(Solve, vec![a, b], shape, dtype))
}

/// The right-hand side of a solve as matrices: float dtype checked, `b` as a column if
/// 1-D. Returns `(a, b, b_was_vector)`.
fn solve_operands(op: &str, a: &Array, b: &Array) -> Result<(Array, Array, bool)> {
    let dtype = promote_types(a.dtype(), b.dtype());
    if !matches!(dtype, DType::Float32 | DType::Float64) {
        return Err(Error::value(format!(
            "[linalg::{op}] Input arrays must promote to float32 or float64.  Received arrays \
             with type {} and {}.",
            a.dtype(),
            b.dtype()
        )));
    }
    if a.ndim() < 2 {
        return Err(Error::value(format!(
            "[linalg::{op}] First input must have >= 2 dimensions. Received array with {} dimensions.",
            a.ndim()
        )));
    }
    if b.ndim() < 1 {
        return Err(Error::value(format!(
            "[linalg::{op}] Second input must have >= 1 dimensions. Received array with 0 dimensions."
        )));
    }
    let n = a.shape()[a.ndim() - 1];
    if a.shape()[a.ndim() - 2] != n {
        return Err(Error::value(format!(
            "[linalg::{op}] First input must be a square matrix. Received array with shape {}.",
            shape_text(a.shape())
        )));
    }
    let vector = b.ndim() == 1;
    let rows = if vector {
        b.shape()[0]
    } else {
        b.shape()[b.ndim() - 2]
    };
    if rows != n {
        return Err(Error::value(format!(
            "[linalg::{op}] Last dimension of first input with shape {} must match second to \
             last dimension of second input with shape {}.",
            shape_text(a.shape()),
            shape_text(b.shape())
        )));
    }
    let b2 = if vector {
        b.reshape(&[n, 1])?
    } else {
        b.clone()
    };
    broadcast_batches(op, a, &b2)?;
    Ok((astype(a, dtype)?, astype(&b2, dtype)?, vector))
}

/// The solution `x` of `a @ x = b` (batched; `b` a vector if 1-D, else matrices), float32
/// or float64 after promotion. A singular `a` is an error when evaluated.
///
/// ```
/// use lazulite::{linalg, Array};
/// let a = Array::from_slice(&[4.0f32, 1.0, 2.0, 3.0], &[2, 2])?;
/// let b = Array::from_slice(&[1.0f32, 2.0], &[2])?;
/// let x = linalg::solve(&a, &b)?.to_vec::<f32>()?;
/// assert!((x[0] - 0.1).abs() < 1e-6 && (x[1] - 0.6).abs() < 1e-6);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn solve(a: &Array, b: &Array) -> Result<Array> {
    let (a, b, vector) = solve_operands("solve", a, b)?;
    let x = solve_matrices(&a, &b)?;
    if vector {
        squeeze(&x, -1)
    } else {
        Ok(x)
    }
}

// ---------------------------------------------------------------------------------------
// SolveTriangular

/// `x` with `t x = b` for the lower (or upper) triangle of `t`; inputs as for [`Solve`].
pub(crate) struct SolveTriangular {
    pub upper: bool,
}

impl SolveTriangular {
    fn triangle(&self, x: &Array) -> Result<Array> {
        if self.upper {
            triu(x, 0)
        } else {
            tril(x, 0)
        }
    }
}

impl Primitive for SolveTriangular {
    fn name(&self) -> &'static str {
        "solve_triangular"
    }

    /// As MLX defines it: the triangular inverse (`Inverse` with `tri`) times `b`.
    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        let state = vec![MlxState::Bool(true), MlxState::Bool(self.upper)];
        let inverse = MlxNode::new(
            "Inverse",
            state,
            vec![MlxInput::Input(0)],
            inputs[0].clone(),
        );
        let product = MlxNode::new(
            "Matmul",
            vec![],
            vec![MlxInput::Node(0), MlxInput::Input(1)],
            outputs[0].clone(),
        );
        Ok(Export::Nodes(vec![inverse, product]))
    }

    fn params(&self) -> String {
        format!("upper={}", self.upper)
    }

    fn eval(&self, inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        Ok(vec![lu_kernel::solve_triangular(
            &inputs[0], &inputs[1], self.upper,
        )?])
    }

    /// `b̄ = t⁻ᵀ ḡ`, `t̄ = -triangle(b̄ xᵀ)`.
    fn vjp(
        &self,
        inputs: &[Array],
        outputs: &[Array],
        cotangents: &[Array],
        argnums: &[usize],
    ) -> Result<Vec<Array>> {
        let gb = solve_triangular_matrices(&mt(&inputs[0])?, &cotangents[0], !self.upper)?;
        argnums
            .iter()
            .map(|&i| {
                if i == 0 {
                    negative(&self.triangle(&matmul(&gb, &mt(&outputs[0])?)?)?)
                } else {
                    Ok(gb.clone())
                }
            })
            .collect()
    }

    /// `ẋ = t⁻¹ (ḃ - triangle(ṫ) x)`.
    fn jvp(&self, inputs: &[Array], tangents: &[Array], argnums: &[usize]) -> Result<Vec<Array>> {
        let (t, b) = (&inputs[0], &inputs[1]);
        let x = solve_triangular_matrices(t, b, self.upper)?;
        let mut rhs = zeros_like(&x)?;
        for (&i, d) in argnums.iter().zip(tangents) {
            rhs = if i == 0 {
                subtract(&rhs, &matmul(&self.triangle(d)?, &x)?)?
            } else {
                add(&rhs, d)?
            };
        }
        Ok(vec![solve_triangular_matrices(t, &rhs, self.upper)?])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let t = batch_to_front(&inputs[0], axes[0])?;
        let b = batch_to_front(&inputs[1], axes[1])?;
        Ok((
            vec![solve_triangular_matrices(&t, &b, self.upper)?],
            vec![Some(0)],
        ))
    }
}

fn solve_triangular_matrices(t: &Array, b: &Array, upper: bool) -> Result<Array> {
    let (t, b) = broadcast_batches("solve_triangular", t, b)?;
    let shape = b.shape().to_vec();
    let dtype = b.dtype();
    Ok(Array::from_op(
        SolveTriangular { upper },
        vec![t, b],
        shape,
        dtype,
    ))
}

/// The solution `x` of `a @ x = b` reading only the lower (or `upper`) triangle of `a`
/// (batched; `b` a vector if 1-D). A zero on the diagonal is an error when evaluated.
///
/// ```
/// use lazulite::{linalg, Array};
/// let a = Array::from_slice(&[2.0f32, 99.0, 1.0, 1.0], &[2, 2])?;
/// let b = Array::from_slice(&[2.0f32, 3.0], &[2])?;
/// assert_eq!(linalg::solve_triangular(&a, &b, false)?.to_vec::<f32>()?, vec![1.0, 2.0]);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn solve_triangular(a: &Array, b: &Array, upper: bool) -> Result<Array> {
    let (a, b, vector) = solve_operands("solve_triangular", a, b)?;
    let x = solve_triangular_matrices(&a, &b, upper)?;
    if vector {
        squeeze(&x, -1)
    } else {
        Ok(x)
    }
}

/// The inverse of the lower (or `upper`) triangle of a square matrix (batched), float32
/// or float64; the other triangle of the input is not read and is zero in the result.
///
/// ```
/// use lazulite::{linalg, Array};
/// let a = Array::from_slice(&[4.0f32, 99.0, 2.0, 2.0], &[2, 2])?;
/// assert_eq!(linalg::tri_inv(&a, false)?.to_vec::<f32>()?, vec![0.25, 0.0, -0.25, 0.5]);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn tri_inv(a: &Array, upper: bool) -> Result<Array> {
    check_matrix(
        "tri_inv",
        a,
        Some("Inverses are only defined for square matrices."),
    )?;
    let n = a.shape()[a.ndim() - 1];
    let identity = eye(n, None, 0, a.dtype())?;
    solve_triangular_matrices(a, &identity, upper)
}

/// The inverse of `a = L Lᵀ` (or `Uᵀ U` if `upper`) from its Cholesky factor (batched),
/// reading only the factor's triangle.
///
/// ```
/// use lazulite::{linalg, Array};
/// let l = Array::from_slice(&[2.0f32, 0.0, 1.0, 3.0], &[2, 2])?;
/// let y = linalg::cholesky_inv(&l, false)?.to_vec::<f32>()?;
/// let expected = [10.0f32 / 36.0, -2.0 / 36.0, -2.0 / 36.0, 4.0 / 36.0];
/// assert!(y.iter().zip(expected).all(|(a, b)| (a - b).abs() < 1e-6));
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn cholesky_inv(a: &Array, upper: bool) -> Result<Array> {
    check_matrix(
        "cholesky_inv",
        a,
        Some("Cholesky inverse is only defined for square matrices."),
    )?;
    let t = tri_inv(a, upper)?;
    if upper {
        matmul(&t, &mt(&t)?)
    } else {
        matmul(&mt(&t)?, &t)
    }
}

// ---------------------------------------------------------------------------------------
// LU

/// LU factorisation with partial pivoting: outputs the packed factors, LAPACK's pivots
/// and the row permutation they amount to.
pub(crate) struct LuFactor;

impl Primitive for LuFactor {
    fn name(&self) -> &'static str {
        "lu_factor"
    }

    fn eval(&self, inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let (lu, pivots) = lu_kernel::lu_factor(&inputs[0])?;
        let permutation =
            lu_kernel::permutation_of(&pivots, inputs[0].shape[inputs[0].ndim() - 2])?;
        Ok(vec![lu, pivots, permutation])
    }

    /// For square matrices (PyTorch's `linalg_lu_backward`): with the packed cotangent
    /// split into `L̄` (strictly lower) and `Ū` (upper),
    /// `ā = P L⁻ᵀ (tril(Lᵀ L̄, -1) + triu(Ū Uᵀ)) U⁻ᵀ`. The pivots have no cotangent.
    fn vjp(
        &self,
        inputs: &[Array],
        outputs: &[Array],
        cotangents: &[Array],
        _: &[usize],
    ) -> Result<Vec<Array>> {
        let a = &inputs[0];
        let nd = a.ndim();
        let n = a.shape()[nd - 1];
        if a.shape()[nd - 2] != n {
            return Err(Error::not_implemented(
                "[linalg::lu_factor] The vjp of the LU factorisation of a non-square matrix is \
                 not implemented.",
            ));
        }
        let packed = &outputs[0];
        let l = add(&tril(packed, -1)?, &eye(n, None, 0, a.dtype())?)?;
        let u = triu(packed, 0)?;
        let g = &cotangents[0];
        let middle = add(
            &tril(&matmul(&mt(&l)?, &tril(g, -1)?)?, -1)?,
            &triu(&matmul(&triu(g, 0)?, &mt(&u)?)?, 0)?,
        )?;
        let left = solve_triangular_matrices(&mt(&l)?, &middle, true)?;
        let x = mt(&solve_triangular_matrices(&u, &mt(&left)?, true)?)?;
        // a[i] = (l u)[p[i]]: row i of ā is row p[i] of x.
        let rows = broadcast_to(&expand_dims(&outputs[2], -1)?, a.shape())?;
        Ok(vec![take_along_axis(&x, &rows, Some(-2))?])
    }

    /// For square matrices (JAX's `lu_jvp`): with `X = L⁻¹ Pᵀ ȧ U⁻¹`,
    /// `L̇ = L tril(X, -1)` and `U̇ = triu(X) U`, packed like the factors.
    fn jvp(&self, inputs: &[Array], tangents: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        let a = &inputs[0];
        let nd = a.ndim();
        let n = a.shape()[nd - 1];
        if a.shape()[nd - 2] != n {
            return Err(Error::not_implemented(
                "[linalg::lu_factor] The jvp of the LU factorisation of a non-square matrix is \
                 not implemented.",
            ));
        }
        let outs = lu_outputs(a)?;
        let packed = &outs[0];
        let l = add(&tril(packed, -1)?, &eye(n, None, 0, a.dtype())?)?;
        let u = triu(packed, 0)?;
        // Row j of l u is row order[j] of a, with order the inverse permutation of p.
        let order = argsort(&outs[2], Some(-1))?;
        let rows = broadcast_to(&expand_dims(&order, -1)?, a.shape())?;
        let permuted = take_along_axis(&tangents[0], &rows, Some(-2))?;
        let left = solve_triangular_matrices(&l, &permuted, false)?;
        let x = mt(&solve_triangular_matrices(&mt(&u)?, &mt(&left)?, false)?)?;
        let packed_tangent = add(&matmul(&l, &tril(&x, -1)?)?, &matmul(&triu(&x, 0)?, &u)?)?;
        Ok(vec![
            packed_tangent,
            zeros_like(&outs[1])?,
            zeros_like(&outs[2])?,
        ])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let a = batch_to_front(&inputs[0], axes[0])?;
        Ok((lu_outputs(&a)?, vec![Some(0); 3]))
    }
}

fn lu_outputs(a: &Array) -> Result<Vec<Array>> {
    let n = a.ndim();
    let (m, cols) = (a.shape()[n - 2], a.shape()[n - 1]);
    let lead = &a.shape()[..n - 2];
    let with = |tail: usize| -> Vec<usize> { lead.iter().copied().chain([tail]).collect() };
    Ok(Array::from_op_multi(
        LuFactor,
        vec![a.clone()],
        vec![
            OutputSpec {
                shape: a.shape().to_vec(),
                dtype: a.dtype(),
            },
            OutputSpec {
                shape: with(m.min(cols)),
                dtype: DType::UInt32,
            },
            OutputSpec {
                shape: with(m),
                dtype: DType::UInt32,
            },
        ],
    ))
}

/// The packed LU factorisation of each matrix (`[..., m, n]`, float32 or float64) and its
/// pivots: `L` (unit diagonal, not stored) strictly below the diagonal and `U` on and
/// above it, and `pivots[j]` (uint32) the row swapped with row `j` at step `j`.
///
/// ```
/// use lazulite::{linalg, Array};
/// let a = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
/// let (lu, pivots) = linalg::lu_factor(&a)?;
/// assert_eq!(pivots.to_vec::<u32>()?, vec![1, 1]);
/// assert_eq!(lu.to_vec::<f32>()?[..2], [3.0, 4.0]);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn lu_factor(a: &Array) -> Result<(Array, Array)> {
    check_matrix("lu_factor", a, None)?;
    let mut outs = lu_outputs(a)?;
    outs.truncate(2);
    let pivots = outs.pop().expect("pivots");
    Ok((outs.pop().expect("factors"), pivots))
}

/// The LU factorisation of each matrix (`[..., m, n]`, float32 or float64): the row
/// permutation `p` (uint32) and `l` (`[..., m, k]`, unit lower) and `u` (`[..., k, n]`,
/// upper), `k = min(m, n)`, with `a == l[p] @ u` (MLX's convention).
///
/// ```
/// use lazulite::{linalg, Array};
/// let a = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
/// let (p, l, u) = linalg::lu(&a)?;
/// assert_eq!(p.to_vec::<u32>()?, vec![1, 0]); // a[0] is row 1 of l @ u
/// assert_eq!(l.to_vec::<f32>()?, vec![1.0, 0.0, 1.0 / 3.0, 1.0]);
/// assert_eq!(u.to_vec::<f32>()?[..2], [3.0, 4.0]);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn lu(a: &Array) -> Result<(Array, Array, Array)> {
    check_matrix("lu", a, None)?;
    let outs = lu_outputs(a)?;
    let n = a.ndim();
    let (m, cols) = (a.shape()[n - 2], a.shape()[n - 1]);
    let k = m.min(cols);
    let packed = &outs[0];
    let l = add(
        &tril(&leading(packed, -1, k)?, -1)?,
        &eye(m, Some(k), 0, a.dtype())?,
    )?;
    let u = triu(&leading(packed, -2, k)?, 0)?;
    Ok((outs[2].clone(), l, u))
}

// ---------------------------------------------------------------------------------------
// QR

/// Reduced QR factorisation: outputs `q` `[..., m, k]` and `r` `[..., k, n]`.
pub(crate) struct Qr;

impl Primitive for Qr {
    fn name(&self) -> &'static str {
        "qr"
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        MlxNode::single("QRF", vec![], inputs, outputs)
    }

    fn eval(&self, inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let (q, r) = qr_kernel::qr(&inputs[0])?;
        Ok(vec![q, r])
    }

    fn vjp(
        &self,
        inputs: &[Array],
        outputs: &[Array],
        cotangents: &[Array],
        _: &[usize],
    ) -> Result<Vec<Array>> {
        let a = &inputs[0];
        let (q, r) = (&outputs[0], &outputs[1]);
        let (gq, gr) = (&cotangents[0], &cotangents[1]);
        let n = a.ndim();
        let (m, cols) = (a.shape()[n - 2], a.shape()[n - 1]);
        if m >= cols {
            return Ok(vec![qr_cotangent_tall(q, r, gq, gr)?]);
        }
        // a = [x | y] with x square: x = q u and y = q v, where r = [u | v].
        let u = leading(r, -1, m)?;
        let (gu, gv) = (leading(gr, -1, m)?, trailing(gr, -1, m)?);
        let y = trailing(a, -1, m)?;
        let gy = matmul(q, &gv)?;
        let gx = qr_cotangent_tall(q, &u, &add(gq, &matmul(&y, &mt(&gv)?)?)?, &gu)?;
        Ok(vec![concatenate(&[gx, gy], -1)?])
    }

    /// For `m >= n` (JAX's rule): with `X = Qᵀ ȧ R⁻¹` and `Ω` the skew matrix of its
    /// strictly lower part, `Q̇ = Q (Ω - X) + ȧ R⁻¹`, `Ṙ = (X - Ω) R`.
    fn jvp(&self, inputs: &[Array], tangents: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        let a = &inputs[0];
        let nd = a.ndim();
        if a.shape()[nd - 2] < a.shape()[nd - 1] {
            return Err(Error::not_implemented(
                "[linalg::qr] The jvp of the QR factorisation of a wide matrix (M < N) is not \
                 implemented; its vjp is.",
            ));
        }
        let (q, r) = qr(a)?;
        let da_rinv = mt(&solve_triangular_matrices(
            &mt(&r)?,
            &mt(&tangents[0])?,
            false,
        )?)?;
        let x = matmul(&mt(&q)?, &da_rinv)?;
        let lower = tril(&x, -1)?;
        let omega = subtract(&lower, &mt(&lower)?)?;
        let dq = add(&matmul(&q, &subtract(&omega, &x)?)?, &da_rinv)?;
        let dr = matmul(&subtract(&x, &omega)?, &r)?;
        Ok(vec![dq, dr])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let a = batch_to_front(&inputs[0], axes[0])?;
        let (q, r) = qr(&a)?;
        Ok((vec![q, r], vec![Some(0), Some(0)]))
    }
}

/// `x r⁻ᵀ` for upper triangular `r`.
fn times_inverse_transpose(x: &Array, r: &Array) -> Result<Array> {
    mt(&solve_triangular_matrices(r, &mt(x)?, true)?)
}

/// The cotangent of `a` (`m >= n`) from those of its QR factors (TensorFlow's `QrGrad`,
/// Seeger et al. 2017).
fn qr_cotangent_tall(q: &Array, r: &Array, gq: &Array, gr: &Array) -> Result<Array> {
    let qdq = matmul(&mt(q)?, gq)?;
    let rdr = matmul(r, &mt(gr)?)?;
    let skew = add(&subtract(&qdq, &mt(&qdq)?)?, &subtract(&rdr, &mt(&rdr)?)?)?;
    let lower = tril(&skew, 0)?;
    let grad_a = matmul(q, &add(gr, &times_inverse_transpose(&lower, r)?)?)?;
    let grad_b = times_inverse_transpose(&subtract(gq, &matmul(q, &qdq)?)?, r)?;
    add(&grad_a, &grad_b)
}

/// The reduced QR factorisation `a = q @ r` of each matrix (`[..., m, n]`, float32 or
/// float64): `q` `[..., m, k]` with orthonormal columns, `r` `[..., k, n]` upper
/// triangular, `k = min(m, n)`; signs as LAPACK's (NumPy's and MLX's).
///
/// ```
/// use lazulite::{linalg, matmul, Array};
/// let a = Array::from_slice(&[4.0f32, 1.0, 2.0, 3.0], &[2, 2])?;
/// let (q, r) = linalg::qr(&a)?;
/// assert!(r.to_vec::<f32>()?[0] < 0.0);
/// let back = matmul(&q, &r)?.to_vec::<f32>()?;
/// assert!(back.iter().zip([4.0, 1.0, 2.0, 3.0]).all(|(x, y)| (x - y).abs() < 1e-5));
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn qr(a: &Array) -> Result<(Array, Array)> {
    check_matrix("qr", a, None)?;
    let n = a.ndim();
    let (m, cols) = (a.shape()[n - 2], a.shape()[n - 1]);
    let k = m.min(cols);
    let lead = &a.shape()[..n - 2];
    let with = |r: usize, c: usize| -> Vec<usize> { lead.iter().copied().chain([r, c]).collect() };
    let mut outs = Array::from_op_multi(
        Qr,
        vec![a.clone()],
        vec![
            OutputSpec {
                shape: with(m, k),
                dtype: a.dtype(),
            },
            OutputSpec {
                shape: with(k, cols),
                dtype: a.dtype(),
            },
        ],
    );
    let r = outs.pop().expect("r");
    Ok((outs.pop().expect("q"), r))
}

// ---------------------------------------------------------------------------------------
// SVD

/// Singular value decomposition: outputs `[u, s, vt]` (full `u`, `vt`) or `[s]`.
pub(crate) struct Svd {
    pub compute_uv: bool,
}

impl Primitive for Svd {
    fn name(&self) -> &'static str {
        "svd"
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        MlxNode::single(
            "SVD",
            vec![MlxState::Bool(self.compute_uv)],
            inputs,
            outputs,
        )
    }

    fn params(&self) -> String {
        format!("compute_uv={}", self.compute_uv)
    }

    fn eval(&self, inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        svd_kernel::svd(&inputs[0], self.compute_uv)
    }

    /// Townsend (2016), on the thin factors: with `F[i, j] = 1 / (s_j² - s_i²)`,
    /// `ā = u [(F∘(uᵀū - ūᵀu)) s + diag(s̄) + s (F∘(vᵀv̄ - v̄ᵀv))] vᵀ
    ///      + (I - u uᵀ) ū s⁻¹ vᵀ + u s⁻¹ v̄ᵀ (I - v vᵀ)`.
    fn vjp(
        &self,
        inputs: &[Array],
        outputs: &[Array],
        cotangents: &[Array],
        _: &[usize],
    ) -> Result<Vec<Array>> {
        let a = &inputs[0];
        no_complex_rule("vjp", "SVD", a)?;
        let nd = a.ndim();
        let (m, n) = (a.shape()[nd - 2], a.shape()[nd - 1]);
        let k = m.min(n);
        let full = if self.compute_uv {
            outputs.to_vec()
        } else {
            svd(a, true)?
        };
        let u = leading(&full[0], -1, k)?;
        let s = &full[1];
        let v = mt(&leading(&full[2], -2, k)?)?;
        let gs = if self.compute_uv {
            &cotangents[1]
        } else {
            &cotangents[0]
        };
        let s_row = expand_dims(s, -2)?;
        let core_s = multiply(&eye(k, None, 0, a.dtype())?, &expand_dims(gs, -1)?)?;
        if !self.compute_uv {
            return Ok(vec![matmul(&matmul(&u, &core_s)?, &mt(&v)?)?]);
        }
        let gu = leading(&cotangents[0], -1, k)?;
        let gv = mt(&leading(&cotangents[2], -2, k)?)?;
        let s2 = square(&s_row)?;
        let diff = subtract(&s2, &mt(&s2)?)?; // s_j² - s_i²
        let off = subtract(1.0, &eye(k, None, 0, a.dtype())?)?;
        let f = where_(
            &greater(&off, 0.5)?,
            &reciprocal(&where_(&greater(&off, 0.5)?, &diff, 1.0)?)?,
            0.0,
        )?;
        let utgu = matmul(&mt(&u)?, &gu)?;
        let vtgv = matmul(&mt(&v)?, &gv)?;
        let j = multiply(&f, &subtract(&utgu, &mt(&utgu)?)?)?;
        let kk = multiply(&f, &subtract(&vtgv, &mt(&vtgv)?)?)?;
        let core = add(
            &add(&multiply(&j, &s_row)?, &core_s)?,
            &multiply(&mt(&s_row)?, &kk)?,
        )?;
        let mut grad = matmul(&matmul(&u, &core)?, &mt(&v)?)?;
        let s_inv = reciprocal(&s_row)?;
        if m > k {
            let proj = subtract(&gu, &matmul(&u, &utgu)?)?;
            grad = add(&grad, &matmul(&multiply(&proj, &s_inv)?, &mt(&v)?)?)?;
        }
        if n > k {
            let proj = subtract(&gv, &matmul(&v, &vtgv)?)?;
            grad = add(&grad, &matmul(&multiply(&u, &s_inv)?, &mt(&proj)?)?)?;
        }
        Ok(vec![grad])
    }

    /// JAX's rule on the thin factors: `dS = uᵀ ȧ v`, `ṡ = diag(dS)`,
    /// `u̇ = u (F∘(dS s + s dSᵀ)) + (I - u uᵀ) ȧ v / s`, `v̇` likewise; the columns of `u`
    /// and rows of `vt` past `min(m, n)` (a basis completion) get zero tangents.
    fn jvp(&self, inputs: &[Array], tangents: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        let a = &inputs[0];
        no_complex_rule("jvp", "SVD", a)?;
        let da = &tangents[0];
        let nd = a.ndim();
        let (m, n) = (a.shape()[nd - 2], a.shape()[nd - 1]);
        let k = m.min(n);
        let full = svd(a, true)?;
        let u = leading(&full[0], -1, k)?;
        let s = &full[1];
        let v = mt(&leading(&full[2], -2, k)?)?;
        let ds_full = matmul(&matmul(&mt(&u)?, da)?, &v)?;
        let ds = diagonal(&ds_full, 0, -2, -1)?;
        if !self.compute_uv {
            return Ok(vec![ds]);
        }
        let s_row = expand_dims(s, -2)?;
        let s2 = square(&s_row)?;
        let diff = subtract(&s2, &mt(&s2)?)?;
        let off = greater(&subtract(1.0, &eye(k, None, 0, a.dtype())?)?, 0.5)?;
        let f = where_(&off, &reciprocal(&where_(&off, &diff, 1.0)?)?, 0.0)?;
        let dss = multiply(&ds_full, &s_row)?;
        let sds = multiply(&mt(&s_row)?, &ds_full)?;
        let mut du = matmul(&u, &multiply(&f, &add(&dss, &mt(&dss)?)?)?)?;
        let mut dv = matmul(&v, &multiply(&f, &add(&sds, &mt(&sds)?)?)?)?;
        if m > n {
            let dav = matmul(da, &v)?;
            let proj = subtract(&dav, &matmul(&u, &matmul(&mt(&u)?, &dav)?)?)?;
            du = add(&du, &divide(&proj, &s_row)?)?;
        }
        if n > m {
            let dau = matmul(&mt(da)?, &u)?;
            let proj = subtract(&dau, &matmul(&v, &matmul(&mt(&v)?, &dau)?)?)?;
            dv = add(&dv, &divide(&proj, &s_row)?)?;
        }
        let pad = |t: &Array, full: &Array, axis: i32| -> Result<Array> {
            let extra = full.shape()[full.ndim() - 1] - k;
            if extra == 0 {
                return Ok(t.clone());
            }
            let zeros = zeros_like(&trailing(full, axis, k)?)?;
            concatenate(&[t.clone(), zeros], axis)
        };
        let du = pad(&du, &full[0], -1)?;
        let dvt = pad(&mt(&dv)?, &full[2], -2)?;
        Ok(vec![du, ds, dvt])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let a = batch_to_front(&inputs[0], axes[0])?;
        let outs = svd(&a, self.compute_uv)?;
        let n = outs.len();
        Ok((outs, vec![Some(0); n]))
    }
}

/// The singular value decomposition `a = u @ diag(s) @ vt` of each matrix (`[..., m, n]`,
/// float32, float64 or complex64): `[u, s, vt]` with `u` `[..., m, m]`, `s` `[..., min(m, n)]`
/// descending and `vt` `[..., n, n]`, or `[s]` without `compute_uv`. The singular values
/// are real (float32 for complex64 input); complex input has no derivatives (as in MLX).
///
/// ```
/// use lazulite::{linalg, Array};
/// let a = Array::from_slice(&[3.0f32, 0.0, 0.0, -4.0], &[2, 2])?;
/// let s = linalg::svd(&a, false)?;
/// assert_eq!(s[0].to_vec::<f32>()?, vec![4.0, 3.0]);
/// assert_eq!(linalg::svd(&a, true)?.len(), 3);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn svd(a: &Array, compute_uv: bool) -> Result<Vec<Array>> {
    if a.ndim() < 2 {
        return Err(Error::value(format!(
            "[linalg::svd] Input array must have >= 2 dimensions. Received array with {} dimensions.",
            a.ndim()
        )));
    }
    check_matrix_of("svd", a, None, true)?;
    let nd = a.ndim();
    let (m, n) = (a.shape()[nd - 2], a.shape()[nd - 1]);
    let lead = &a.shape()[..nd - 2];
    let with = |tail: &[usize]| -> Vec<usize> { lead.iter().chain(tail).copied().collect() };
    let s = OutputSpec {
        shape: with(&[m.min(n)]),
        dtype: real_dtype(a.dtype()),
    };
    let specs = if compute_uv {
        vec![
            OutputSpec {
                shape: with(&[m, m]),
                dtype: a.dtype(),
            },
            s,
            OutputSpec {
                shape: with(&[n, n]),
                dtype: a.dtype(),
            },
        ]
    } else {
        vec![s]
    };
    Ok(Array::from_op_multi(
        Svd { compute_uv },
        vec![a.clone()],
        specs,
    ))
}

/// The Moore–Penrose pseudo-inverse of each matrix (`[..., m, n]` gives `[..., n, m]`),
/// from its SVD; singular values below `max(m, n) * eps * s_max` count as zero.
///
/// ```
/// use lazulite::{linalg, Array};
/// let a = Array::from_slice(&[2.0f32, 0.0, 0.0, 0.0], &[2, 2])?;
/// assert_eq!(linalg::pinv(&a)?.to_vec::<f32>()?, vec![0.5, 0.0, 0.0, 0.0]);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn pinv(a: &Array) -> Result<Array> {
    check_matrix("pinv", a, None)?;
    let nd = a.ndim();
    let (m, n) = (a.shape()[nd - 2], a.shape()[nd - 1]);
    let k = m.min(n);
    let parts = svd(a, true)?;
    let u = leading(&parts[0], -1, k)?;
    let vt = leading(&parts[2], -2, k)?;
    let s = &parts[1];
    let eps = if a.dtype() == DType::Float32 {
        f32::EPSILON as f64
    } else {
        f64::EPSILON
    };
    let largest = if k == 0 { s.clone() } else { max(s, -1, true)? };
    let cutoff = multiply(&largest, m.max(n) as f64 * eps)?;
    let kept = greater(s, &cutoff)?;
    let s_inv = where_(&kept, &reciprocal(&where_(&kept, s, 1.0)?)?, 0.0)?;
    matmul(&multiply(&mt(&vt)?, &expand_dims(&s_inv, -2)?)?, &mt(&u)?)
}

// ---------------------------------------------------------------------------------------
// Eigh

/// Eigen-decomposition of symmetric matrices: outputs `[w]` or `[w, v]`.
pub(crate) struct Eigh {
    pub upper: bool,
    pub vectors: bool,
}

impl Primitive for Eigh {
    fn name(&self) -> &'static str {
        "eigh"
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        let uplo = if self.upper { "U" } else { "L" };
        let state = vec![MlxState::Str(uplo.into()), MlxState::Bool(self.vectors)];
        MlxNode::single("Eigh", state, inputs, outputs)
    }

    fn params(&self) -> String {
        format!("upper={}, vectors={}", self.upper, self.vectors)
    }

    fn eval(&self, inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        eigh_kernel::eigh(&inputs[0], self.upper, self.vectors)
    }

    /// `g = v (diag(w̄) + F∘(vᵀv̄)) vᵀ` with `F[i, j] = 1 / (w_j - w_i)`, then projected
    /// onto the triangle read.
    fn vjp(
        &self,
        inputs: &[Array],
        outputs: &[Array],
        cotangents: &[Array],
        _: &[usize],
    ) -> Result<Vec<Array>> {
        let a = &inputs[0];
        no_complex_rule("vjp", "Eigh", a)?;
        let n = a.shape()[a.ndim() - 1];
        let full = if self.vectors {
            outputs.to_vec()
        } else {
            eigh_outputs(a, self.upper, true)?
        };
        let (w, v) = (&full[0], &full[1]);
        let identity = eye(n, None, 0, a.dtype())?;
        let mut core = multiply(&identity, &expand_dims(&cotangents[0], -1)?)?;
        if self.vectors {
            let w_row = expand_dims(w, -2)?;
            let diff = subtract(&w_row, &mt(&w_row)?)?;
            let off = greater(&subtract(1.0, &identity)?, 0.5)?;
            let f = where_(&off, &reciprocal(&where_(&off, &diff, 1.0)?)?, 0.0)?;
            core = add(&core, &multiply(&f, &matmul(&mt(v)?, &cotangents[1])?)?)?;
        }
        let g = matmul(&matmul(v, &core)?, &mt(v)?)?;
        Ok(vec![triangle_cotangent(&g, self.upper)?])
    }

    /// `ẇ = diag(vᵀ ȧ v)`, `v̇ = v (F∘(vᵀ ȧ v))` for the symmetric `ȧ` of the read triangle.
    fn jvp(&self, inputs: &[Array], tangents: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        let a = &inputs[0];
        no_complex_rule("jvp", "Eigh", a)?;
        let n = a.shape()[a.ndim() - 1];
        let full = eigh_outputs(a, self.upper, true)?;
        let (w, v) = (&full[0], &full[1]);
        let da = symmetric_from_triangle(&tangents[0], self.upper)?;
        let inner = matmul(&matmul(&mt(v)?, &da)?, v)?;
        let dw = diagonal(&inner, 0, -2, -1)?;
        if !self.vectors {
            return Ok(vec![dw]);
        }
        let identity = eye(n, None, 0, a.dtype())?;
        let w_row = expand_dims(w, -2)?;
        let diff = subtract(&w_row, &mt(&w_row)?)?;
        let off = greater(&subtract(1.0, &identity)?, 0.5)?;
        let f = where_(&off, &reciprocal(&where_(&off, &diff, 1.0)?)?, 0.0)?;
        Ok(vec![dw, matmul(v, &multiply(&f, &inner)?)?])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let a = batch_to_front(&inputs[0], axes[0])?;
        let outs = eigh_outputs(&a, self.upper, self.vectors)?;
        let n = outs.len();
        Ok((outs, vec![Some(0); n]))
    }
}

fn eigh_outputs(a: &Array, upper: bool, vectors: bool) -> Result<Vec<Array>> {
    let w = OutputSpec {
        shape: a.shape()[..a.ndim() - 1].to_vec(),
        dtype: real_dtype(a.dtype()),
    };
    let specs = if vectors {
        vec![
            w,
            OutputSpec {
                shape: a.shape().to_vec(),
                dtype: a.dtype(),
            },
        ]
    } else {
        vec![w]
    };
    Ok(Array::from_op_multi(
        Eigh { upper, vectors },
        vec![a.clone()],
        specs,
    ))
}

fn check_eigh(op: &str, a: &Array, uplo: &str) -> Result<bool> {
    check_matrix_of(op, a, Some("Only defined for square matrices."), true)?;
    match uplo {
        "L" => Ok(false),
        "U" => Ok(true),
        other => Err(Error::value(format!(
            "[linalg::{op}] UPLO must be 'L' or 'U', got '{other}'."
        ))),
    }
}

/// The eigenvalues (ascending) and eigenvectors (columns) of each symmetric matrix
/// (`[..., n, n]`, float32 or float64) or Hermitian one (complex64, whose eigenvalues are
/// float32), reading its lower (`uplo = "L"`) or upper (`"U"`) triangle. Complex input
/// has no derivatives (as in MLX).
///
/// ```
/// use lazulite::{linalg, Array};
/// let a = Array::from_slice(&[2.0f32, 1.0, 1.0, 2.0], &[2, 2])?;
/// let (w, v) = linalg::eigh(&a, "L")?;
/// assert_eq!(w.to_vec::<f32>()?, vec![1.0, 3.0]);
/// assert_eq!(v.shape(), &[2, 2]);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn eigh(a: &Array, uplo: &str) -> Result<(Array, Array)> {
    let upper = check_eigh("eigh", a, uplo)?;
    let mut outs = eigh_outputs(a, upper, true)?;
    let v = outs.pop().expect("vectors");
    Ok((outs.pop().expect("values"), v))
}

/// The eigenvalues (ascending) of each symmetric matrix, as [`eigh`].
///
/// ```
/// use lazulite::{linalg, Array};
/// let a = Array::from_slice(&[2.0f32, 1.0, 1.0, 2.0], &[2, 2])?;
/// assert_eq!(linalg::eigvalsh(&a, "U")?.to_vec::<f32>()?, vec![1.0, 3.0]);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn eigvalsh(a: &Array, uplo: &str) -> Result<Array> {
    let upper = check_eigh("eigvalsh", a, uplo)?;
    Ok(eigh_outputs(a, upper, false)?.remove(0))
}

// ---------------------------------------------------------------------------------------
// Eig

/// Eigen-decomposition of general square matrices: outputs `[w]` or `[w, v]`, complex64.
/// Like MLX, it has no derivative rules (its vjp and jvp report "not implemented").
pub(crate) struct Eig {
    pub vectors: bool,
}

impl Eig {
    fn op(&self) -> &'static str {
        if self.vectors {
            "eig"
        } else {
            "eigvals"
        }
    }
}

impl Primitive for Eig {
    fn name(&self) -> &'static str {
        "eig"
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        MlxNode::single("Eig", vec![MlxState::Bool(self.vectors)], inputs, outputs)
    }

    fn params(&self) -> String {
        format!("vectors={}", self.vectors)
    }

    fn eval(&self, inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        eig_kernel::eig(&inputs[0], self.vectors, self.op())
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let a = batch_to_front(&inputs[0], axes[0])?;
        let outs = eig_outputs(&a, self.vectors);
        let n = outs.len();
        Ok((outs, vec![Some(0); n]))
    }

    // MLX has no derivative of the general eigendecomposition either.
    fn vjp(&self, _: &[Array], _: &[Array], _: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        Err(no_rule("vjp", self.name()))
    }

    fn jvp(&self, _: &[Array], _: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        Err(no_rule("jvp", self.name()))
    }
}

fn eig_outputs(a: &Array, vectors: bool) -> Vec<Array> {
    let mut specs = vec![OutputSpec {
        shape: a.shape()[..a.ndim() - 1].to_vec(),
        dtype: DType::Complex64,
    }];
    if vectors {
        specs.push(OutputSpec {
            shape: a.shape().to_vec(),
            dtype: DType::Complex64,
        });
    }
    Array::from_op_multi(Eig { vectors }, vec![a.clone()], specs)
}

/// MLX's checks for `eig`/`eigvals`: a (batch of) square float32, float64 or complex64
/// matrix.
fn check_eig(op: &str, a: &Array) -> Result<()> {
    check_matrix_of(op, a, Some("Only defined for square matrices."), true)
}

/// The eigenvalues and right eigenvectors (columns, unit 2-norm) of each square matrix
/// (`[..., n, n]`, float32, float64 or complex64), both complex64 as in MLX. Computed as
/// LAPACK's `geev` on the matrix MLX passes it, so the (unspecified) order of the
/// eigenvalues and the phases of the eigenvectors are MLX's. For real input a complex
/// eigenvector's largest entry is real and conjugate pairs are adjacent with the positive
/// imaginary part first; float32 input is decomposed in float64 (MLX uses float32
/// `sgeev`), so its eigenvector signs can differ from MLX's, while float64 input gives
/// MLX's results. For complex64 input (decomposed in complex float64 by single-shift
/// complex QR, as `zgeev`) every eigenvector's largest entry is real and positive; the
/// vectors are those of `a`, where MLX 0.32.4 returns their complex conjugates (which
/// are eigenvectors of `conj(a)`, not of `a`). Evaluating a matrix with infinities or
/// NaNs is a value error, as in NumPy (MLX aborts).
///
/// ```
/// use lazulite::{linalg, Array, Complex};
/// let a = Array::from_slice(&[2.0f32, 0.0, 0.0, 3.0], &[2, 2])?;
/// let (w, v) = linalg::eig(&a)?;
/// assert_eq!(w.to_vec::<Complex>()?, vec![Complex::new(2.0, 0.0), Complex::new(3.0, 0.0)]);
/// assert_eq!(v.shape(), &[2, 2]);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn eig(a: &Array) -> Result<(Array, Array)> {
    check_eig("eig", a)?;
    let mut outs = eig_outputs(a, true);
    let v = outs.pop().expect("vectors");
    Ok((outs.pop().expect("values"), v))
}

/// The eigenvalues of each square matrix (float32, float64 or complex64; the result is
/// complex64, in no particular order), as [`eig`].
///
/// ```
/// use lazulite::{linalg, Array, Complex};
/// let a = Array::from_slice(&[0.0f32, -1.0, 1.0, 0.0], &[2, 2])?;
/// let w = linalg::eigvals(&a)?.to_vec::<Complex>()?;
/// assert_eq!(w, vec![Complex::new(0.0, 1.0), Complex::new(0.0, -1.0)]);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn eigvals(a: &Array) -> Result<Array> {
    check_eig("eigvals", a)?;
    Ok(eig_outputs(a, false).remove(0))
}

// ---------------------------------------------------------------------------------------
// Determinants

/// The determinant of each square matrix (batched), from its LU factorisation. Integer
/// input is computed in float32 (as MLX).
///
/// ```
/// use lazulite::{linalg, Array};
/// let a = Array::from_slice(&[4.0f32, 1.0, 2.0, 3.0], &[2, 2])?;
/// assert_eq!(linalg::det(&a)?.item::<f32>()?, 10.0);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn det(a: &Array) -> Result<Array> {
    let (parity, diag) = determinant_parts("det", a)?;
    multiply(&prod(&diag, -1, false)?, &parity)
}

/// The sign and the log of the absolute value of the determinant of each square matrix
/// (batched): `det = sign * exp(logabsdet)`; a singular matrix gives `(0, -inf)`.
///
/// ```
/// use lazulite::{linalg, Array};
/// let a = Array::from_slice(&[0.0f32, 1.0, 1.0, 0.0], &[2, 2])?;
/// let (sign, logabs) = linalg::slogdet(&a)?;
/// assert_eq!((sign.item::<f32>()?, logabs.item::<f32>()?), (-1.0, 0.0));
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn slogdet(a: &Array) -> Result<(Array, Array)> {
    let (parity, diag) = determinant_parts("slogdet", a)?;
    let sign = multiply(&prod(&sign(&diag)?, -1, false)?, &parity)?;
    let logabs = sum(&log(&abs(&diag)?)?, -1, false)?;
    Ok((sign, logabs))
}

/// The sign of the row permutation (`±1`) and the diagonal of `U` of `a`'s LU factors.
fn determinant_parts(op: &str, a: &Array) -> Result<(Array, Array)> {
    let a =
        if a.dtype().is_floating() && a.dtype() != DType::Float16 && a.dtype() != DType::BFloat16 {
            a.clone()
        } else {
            astype(a, DType::Float32)?
        };
    check_matrix(
        op,
        &a,
        Some("Determinants are only defined for square matrices."),
    )?;
    let n = a.shape()[a.ndim() - 1];
    let outs = lu_outputs(&a)?;
    let moved = not_equal(&outs[1], &arange(0.0, n as f64, 1.0, DType::UInt32)?)?;
    let swaps = sum(&astype(&moved, DType::Int32)?, -1, false)?;
    let odd = astype(&crate::ops::binary::remainder(&swaps, 2)?, a.dtype())?;
    let parity = subtract(1.0, &multiply(&odd, 2.0)?)?;
    let diag = diagonal(&outs[0], 0, -2, -1)?;
    Ok((parity, diag))
}

// ---------------------------------------------------------------------------------------
// Cholesky rules

impl Cholesky {
    /// The lower factor's cotangent from the output's.
    fn lower_cotangent(&self, g: &Array) -> Result<Array> {
        if self.upper {
            mt(g)
        } else {
            Ok(g.clone())
        }
    }
}

/// `ā = Φ(S + Sᵀ)` with `S = L⁻ᵀ Φ(Lᵀ L̄) L⁻¹` (Murray 2016), `Φ` the lower triangle
/// with halved diagonal: the cotangent of the lower triangle the kernel reads.
pub(crate) fn cholesky_vjp(c: &Cholesky, output: &Array, g: &Array) -> Result<Array> {
    let l = if c.upper { mt(output)? } else { output.clone() };
    let gl = c.lower_cotangent(g)?;
    let p = half_diagonal_triangle(&matmul(&mt(&l)?, &gl)?, false)?;
    let lt = mt(&l)?;
    let left = solve_triangular_matrices(&lt, &p, true)?;
    let s = mt(&solve_triangular_matrices(&lt, &mt(&left)?, true)?)?;
    triangle_cotangent(&s, false)
}

/// `L̇ = L Φ(L⁻¹ ȧ L⁻ᵀ)` for the symmetric `ȧ` of the tangent's lower triangle.
pub(crate) fn cholesky_jvp(c: &Cholesky, a: &Array, t: &Array) -> Result<Array> {
    let l = cholesky(a, false)?;
    let da = symmetric_from_triangle(t, false)?;
    let left = solve_triangular_matrices(&l, &da, false)?;
    let inner = mt(&solve_triangular_matrices(&l, &mt(&left)?, false)?)?;
    let dl = matmul(&l, &half_diagonal_triangle(&inner, false)?)?;
    if c.upper {
        mt(&dl)
    } else {
        Ok(dl)
    }
}
