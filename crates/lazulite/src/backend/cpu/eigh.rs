//! Eigen-decomposition of symmetric and Hermitian matrices by cyclic Jacobi rotations, in
//! double precision:
//! slower than LAPACK's tridiagonal `syevd` for large matrices but accurate to the last
//! bits for small ones, which is what linear algebra on batches of small matrices needs.

use super::cx::Cx;
use super::dense::{per_matrix, store, Batch, Scalar};
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::error::Result;

/// The rotations stop when the off-diagonal mass is this small relative to the matrix.
const TOLERANCE: f64 = f64::EPSILON * f64::EPSILON * 1e-2;
const MAX_SWEEPS: usize = 100;

/// Eigenvalues (ascending) and eigenvectors (columns of the row-major `n x n` result) of
/// the symmetric (or Hermitian) matrix whose lower (or `upper`) triangle is that of `a`.
/// For a complex matrix each rotation is preceded by a phase that makes its pivot real.
pub(crate) fn symmetric_eigen<T: Scalar>(a: &[T], n: usize, upper: bool) -> (Vec<f64>, Vec<T>) {
    let mut m = vec![T::ZERO; n * n];
    for i in 0..n {
        for j in 0..i {
            let v = if upper {
                a[j * n + i].conj()
            } else {
                a[i * n + j]
            };
            m[i * n + j] = v;
            m[j * n + i] = v.conj();
        }
        // A Hermitian matrix's diagonal is real; its imaginary parts are not read.
        m[i * n + i] = T::ONE.scale(a[i * n + i].real_part());
    }
    let mut v = vec![T::ZERO; n * n];
    for i in 0..n {
        v[i * n + i] = T::ONE;
    }
    let total: f64 = m.iter().map(|x| x.abs2()).sum();
    for _ in 0..MAX_SWEEPS {
        // The rotations drive the upper triangle to zero; the lower one mirrors it up to
        // rounding, which they cannot remove.
        let off: f64 = 2.0
            * (0..n)
                .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
                .map(|(i, j)| m[i * n + j].abs2())
                .sum::<f64>();
        if off <= TOLERANCE * total || !off.is_finite() {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                let mut apq = m[p * n + q];
                if apq == T::ZERO {
                    continue;
                }
                if let Some(phase) = apq.phase() {
                    // Column q times conj(phase), row q times phase: the pivot becomes |apq|.
                    let (down, up) = (phase.conj(), phase);
                    for k in 0..n {
                        m[k * n + q] = m[k * n + q] * down;
                        v[k * n + q] = v[k * n + q] * down;
                    }
                    for k in 0..n {
                        m[q * n + k] = m[q * n + k] * up;
                    }
                    apq = m[p * n + q];
                }
                let apq = apq.real_part();
                let (app, aqq) = (m[p * n + p].real_part(), m[q * n + q].real_part());
                let theta = (aqq - app) / (2.0 * apq);
                let t = if theta == 0.0 {
                    1.0
                } else {
                    theta.signum() / (theta.abs() + theta.hypot(1.0))
                };
                let c = 1.0 / t.hypot(1.0);
                let s = t * c;
                for k in 0..n {
                    let (kp, kq) = (m[k * n + p], m[k * n + q]);
                    m[k * n + p] = kp.scale(c) - kq.scale(s);
                    m[k * n + q] = kp.scale(s) + kq.scale(c);
                }
                for k in 0..n {
                    let (pk, qk) = (m[p * n + k], m[q * n + k]);
                    m[p * n + k] = pk.scale(c) - qk.scale(s);
                    m[q * n + k] = pk.scale(s) + qk.scale(c);
                }
                for k in 0..n {
                    let (kp, kq) = (v[k * n + p], v[k * n + q]);
                    v[k * n + p] = kp.scale(c) - kq.scale(s);
                    v[k * n + q] = kp.scale(s) + kq.scale(c);
                }
            }
        }
    }
    let diagonal: Vec<f64> = (0..n).map(|j| m[j * n + j].real_part()).collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&x, &y| diagonal[x].total_cmp(&diagonal[y]));
    let values = order.iter().map(|&j| diagonal[j]).collect();
    let mut vectors = vec![T::ZERO; n * n];
    for (dst, &src) in order.iter().enumerate() {
        for k in 0..n {
            vectors[k * n + dst] = v[k * n + src];
        }
    }
    (values, vectors)
}

/// Eigenvalues (`[..., n]`, ascending, real) and, if `vectors`, eigenvectors (`[..., n, n]`,
/// as columns) of each symmetric or Hermitian matrix of `a` (`[..., n, n]`, float32,
/// float64 or complex64), reading its lower (or `upper`) triangle.
pub fn eigh(a: &Tensor, upper: bool, vectors: bool) -> Result<Vec<Tensor>> {
    if a.dtype.is_complex() {
        decompose::<Cx>(a, upper, vectors, DType::Float32)
    } else {
        decompose::<f64>(a, upper, vectors, a.dtype)
    }
}

fn decompose<T: Scalar>(
    a: &Tensor,
    upper: bool,
    vectors: bool,
    values_dtype: DType,
) -> Result<Vec<Tensor>> {
    let batch = Batch::<T>::read(a);
    let n = batch.rows;
    let parts = per_matrix(batch.count, |i| symmetric_eigen(batch.matrix(i), n, upper));
    let (mut ws, mut vs) = (Vec::new(), Vec::new());
    for (w, v) in parts {
        ws.extend(w);
        vs.extend(v);
    }
    let w_shape = a.shape[..a.ndim() - 1].to_vec();
    let mut out = vec![store(values_dtype, &w_shape, &ws)?];
    if vectors {
        out.push(T::store(a.dtype, &a.shape, &vs)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diagonalises_a_symmetric_matrix() {
        let (w, v) = symmetric_eigen(&[2.0, 1.0, 1.0, 2.0], 2, false);
        assert!((w[0] - 1.0).abs() < 1e-15 && (w[1] - 3.0).abs() < 1e-15);
        let h = 0.5f64.sqrt();
        assert!((v[1].abs() - h).abs() < 1e-15 && (v[0] * v[1] + v[2] * v[3]).abs() < 1e-15);
        let (upper, _) = symmetric_eigen(&[1.0, 0.0, 9.0, 1.0], 2, true);
        assert_eq!(upper, vec![1.0, 1.0]);
    }
}
