//! Singular value decomposition by one-sided Jacobi rotations (Hestenes), in double
//! precision, of real and complex matrices:
//! the columns of the matrix are rotated until orthogonal; their norms are the singular
//! values. Accurate for small singular values too. `u` and `vt` are the full square
//! factors (NumPy's `full_matrices=True`, MLX's only form), the columns past the rank
//! completed to an orthonormal basis.

use super::cx::Cx;
use super::dense::{adjoint, per_matrix, store, transposed, Batch, Scalar};
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::error::Result;

const MAX_SWEEPS: usize = 80;

/// `Σ conj(x_k) y_k`.
fn dot<T: Scalar>(x: &[T], y: &[T]) -> T {
    x.iter()
        .zip(y)
        .fold(T::ZERO, |acc, (&a, &b)| acc + a.conj() * b)
}

/// `Σ |x_k|²`.
fn norm2<T: Scalar>(x: &[T]) -> f64 {
    x.iter().map(|v| v.abs2()).sum()
}

/// `(u, s, vt)` of the `m x n` row-major `a` with `m >= n`: `u` `m x m`, `s` descending,
/// `vt` `n x n`. For a complex matrix each rotation is preceded by a phase on the second
/// column that makes the pair's inner product real.
fn tall<T: Scalar>(a: &[T], m: usize, n: usize) -> (Vec<T>, Vec<f64>, Vec<T>) {
    // Row j of `g` is column j of `a`; row j of `w` is column j of `v`.
    let mut g = transposed(a, m, n);
    let mut w = vec![T::ZERO; n * n];
    for i in 0..n {
        w[i * n + i] = T::ONE;
    }
    for _ in 0..MAX_SWEEPS {
        let mut rotated = false;
        for p in 0..n {
            for q in p + 1..n {
                let (gp, gq) = (&g[p * m..(p + 1) * m], &g[q * m..(q + 1) * m]);
                let (alpha, beta, mut gamma) = (norm2(gp), norm2(gq), dot(gp, gq));
                let size = gamma.abs();
                if size == 0.0 || size <= f64::EPSILON * (alpha * beta).sqrt() {
                    continue;
                }
                if !size.is_finite() {
                    continue;
                }
                rotated = true;
                if let Some(phase) = gamma.phase() {
                    let down = phase.conj();
                    g[q * m..(q + 1) * m]
                        .iter_mut()
                        .for_each(|x| *x = *x * down);
                    w[q * n..(q + 1) * n]
                        .iter_mut()
                        .for_each(|x| *x = *x * down);
                    gamma = T::ONE.scale(size);
                }
                let gamma = gamma.real_part();
                let zeta = (beta - alpha) / (2.0 * gamma);
                let t = if zeta == 0.0 {
                    1.0
                } else {
                    zeta.signum() / (zeta.abs() + zeta.hypot(1.0))
                };
                let c = 1.0 / t.hypot(1.0);
                let s = c * t;
                rotate(&mut g, m, p, q, c, s);
                rotate(&mut w, n, p, q, c, s);
            }
        }
        if !rotated {
            break;
        }
    }
    let norms: Vec<f64> = (0..n)
        .map(|j| norm2(&g[j * m..(j + 1) * m]).sqrt())
        .collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&x, &y| norms[y].total_cmp(&norms[x]));
    let s: Vec<f64> = order.iter().map(|&j| norms[j]).collect();
    let largest = s.first().copied().unwrap_or(0.0);
    let negligible = largest * f64::EPSILON * m as f64;
    let mut columns: Vec<Option<Vec<T>>> = order
        .iter()
        .map(|&j| {
            (norms[j] > negligible && norms[j] > 0.0).then(|| {
                g[j * m..(j + 1) * m]
                    .iter()
                    .map(|x| x.scale(1.0 / norms[j]))
                    .collect()
            })
        })
        .collect();
    columns.resize(m, None);
    let columns = complete_basis(columns, m);
    let mut u = vec![T::ZERO; m * m];
    for (j, col) in columns.iter().enumerate() {
        for i in 0..m {
            u[i * m + j] = col[i];
        }
    }
    // Row j of vt is the conjugate of column j of v.
    let vt: Vec<T> = order
        .iter()
        .flat_map(|&j| w[j * n..(j + 1) * n].iter().map(|x| x.conj()))
        .collect();
    (u, s, vt)
}

/// Rotates rows `p` and `q` (of length `len`) of `x`: `p <- c p - s q`, `q <- s p + c q`.
fn rotate<T: Scalar>(x: &mut [T], len: usize, p: usize, q: usize, c: f64, s: f64) {
    for k in 0..len {
        let (a, b) = (x[p * len + k], x[q * len + k]);
        x[p * len + k] = a.scale(c) - b.scale(s);
        x[q * len + k] = a.scale(s) + b.scale(c);
    }
}

/// Fills the missing vectors of `columns` (length `m` each) with unit vectors orthogonal
/// to all the others: of the coordinate vectors, the one least in the span so far,
/// orthogonalised twice (Gram–Schmidt with reorthogonalisation).
fn complete_basis<T: Scalar>(columns: Vec<Option<Vec<T>>>, m: usize) -> Vec<Vec<T>> {
    let mut basis: Vec<Vec<T>> = columns.iter().flatten().cloned().collect();
    let mut out = Vec::with_capacity(columns.len());
    for col in columns {
        if let Some(c) = col {
            out.push(c);
            continue;
        }
        let residual = |e: usize, basis: &[Vec<T>]| {
            let mut x = vec![T::ZERO; m];
            x[e] = T::ONE;
            for _ in 0..2 {
                for b in basis {
                    let d = dot(b, &x);
                    for (xi, &bi) in x.iter_mut().zip(b) {
                        *xi = *xi - d * bi;
                    }
                }
            }
            x
        };
        let best = (0..m)
            .map(|e| residual(e, &basis))
            .max_by(|x, y| norm2(x).total_cmp(&norm2(y)))
            .unwrap_or_default();
        let size = norm2(&best).sqrt();
        let unit: Vec<T> = best.iter().map(|v| v.scale(1.0 / size)).collect();
        basis.push(unit.clone());
        out.push(unit);
    }
    out
}

/// `(u, s, vt)` of the `m x n` row-major `a`: `u` `m x m`, `s` (`min(m, n)`) descending,
/// `vt` `n x n`.
pub(crate) fn decompose<T: Scalar>(a: &[T], m: usize, n: usize) -> (Vec<T>, Vec<f64>, Vec<T>) {
    if m >= n {
        tall(a, m, n)
    } else {
        // aᴴ = u' s v'ᴴ gives a = v' s u'ᴴ.
        let (u2, s, vt2) = tall(&adjoint(a, m, n), n, m);
        (adjoint(&vt2, m, m), s, adjoint(&u2, n, n))
    }
}

/// The singular values (`[..., min(m, n)]`, descending, real) and, if `compute_uv`, first
/// `u` (`[..., m, m]`) and last `vt` (`[..., n, n]`) of each matrix of `a` (`[..., m, n]`,
/// float32, float64 or complex64): `[u, s, vt]` or `[s]`.
pub fn svd(a: &Tensor, compute_uv: bool) -> Result<Vec<Tensor>> {
    if a.dtype.is_complex() {
        factor::<Cx>(a, compute_uv, DType::Float32)
    } else {
        factor::<f64>(a, compute_uv, a.dtype)
    }
}

fn factor<T: Scalar>(a: &Tensor, compute_uv: bool, s_dtype: DType) -> Result<Vec<Tensor>> {
    let batch = Batch::<T>::read(a);
    let (m, n) = (batch.rows, batch.cols);
    let parts = per_matrix(batch.count, |i| decompose(batch.matrix(i), m, n));
    let (mut us, mut ss, mut vts) = (Vec::new(), Vec::new(), Vec::new());
    for (u, s, vt) in parts {
        us.extend(u);
        ss.extend(s);
        vts.extend(vt);
    }
    let lead = &a.shape[..a.ndim() - 2];
    let s = store(s_dtype, &[lead, &[m.min(n)]].concat(), &ss)?;
    if !compute_uv {
        return Ok(vec![s]);
    }
    let u = T::store(a.dtype, &[lead, &[m, m]].concat(), &us)?;
    let vt = T::store(a.dtype, &[lead, &[n, n]].concat(), &vts)?;
    Ok(vec![u, s, vt])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reconstructs(a: &[f64], m: usize, n: usize) {
        let (u, s, vt) = decompose(a, m, n);
        for i in 0..m {
            for j in 0..n {
                let x: f64 = (0..m.min(n))
                    .map(|k| u[i * m + k] * s[k] * vt[k * n + j])
                    .sum();
                assert!((x - a[i * n + j]).abs() < 1e-12, "{m}x{n} at {i},{j}");
            }
        }
        for i in 0..m {
            for j in 0..m {
                let d: f64 = (0..m).map(|k| u[k * m + i] * u[k * m + j]).sum();
                assert!((d - f64::from(u8::from(i == j))).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn reconstructs_tall_wide_and_rank_deficient_matrices() {
        reconstructs(&[1.0, 2.0, 3.0, 4.0, 5.0, 7.0], 3, 2);
        reconstructs(&[1.0, 2.0, 3.0, 4.0, 5.0, 7.0], 2, 3);
        reconstructs(&[1.0, 1.0, 1.0, 1.0, 1.0, 1.0], 3, 2);
        reconstructs(&[0.0; 4], 2, 2);
    }
}
