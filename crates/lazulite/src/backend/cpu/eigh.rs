//! Eigen-decomposition of symmetric matrices by cyclic Jacobi rotations, in float64:
//! slower than LAPACK's tridiagonal `syevd` for large matrices but accurate to the last
//! bits for small ones, which is what linear algebra on batches of small matrices needs.

use super::dense::{per_matrix, store, Batch};
use crate::backend::Tensor;
use crate::error::Result;

/// The rotations stop when the off-diagonal mass is this small relative to the matrix.
const TOLERANCE: f64 = f64::EPSILON * f64::EPSILON * 1e-2;
const MAX_SWEEPS: usize = 100;

/// Eigenvalues (ascending) and eigenvectors (columns of the row-major `n x n` result) of
/// the symmetric matrix whose lower (or `upper`) triangle is that of `a`.
pub(crate) fn symmetric_eigen(a: &[f64], n: usize, upper: bool) -> (Vec<f64>, Vec<f64>) {
    let mut m = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..=i {
            let v = if upper { a[j * n + i] } else { a[i * n + j] };
            m[i * n + j] = v;
            m[j * n + i] = v;
        }
    }
    let mut v = vec![0.0; n * n];
    for i in 0..n {
        v[i * n + i] = 1.0;
    }
    let total: f64 = m.iter().map(|x| x * x).sum();
    for _ in 0..MAX_SWEEPS {
        let off: f64 = (0..n)
            .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| m[i * n + j] * m[i * n + j])
            .sum();
        if off <= TOLERANCE * total || !off.is_finite() {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                let apq = m[p * n + q];
                if apq == 0.0 {
                    continue;
                }
                let theta = (m[q * n + q] - m[p * n + p]) / (2.0 * apq);
                let t = if theta == 0.0 {
                    1.0
                } else {
                    theta.signum() / (theta.abs() + theta.hypot(1.0))
                };
                let c = 1.0 / t.hypot(1.0);
                let s = t * c;
                for k in 0..n {
                    let (kp, kq) = (m[k * n + p], m[k * n + q]);
                    m[k * n + p] = c * kp - s * kq;
                    m[k * n + q] = s * kp + c * kq;
                }
                for k in 0..n {
                    let (pk, qk) = (m[p * n + k], m[q * n + k]);
                    m[p * n + k] = c * pk - s * qk;
                    m[q * n + k] = s * pk + c * qk;
                }
                for k in 0..n {
                    let (kp, kq) = (v[k * n + p], v[k * n + q]);
                    v[k * n + p] = c * kp - s * kq;
                    v[k * n + q] = s * kp + c * kq;
                }
            }
        }
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&x, &y| m[x * n + x].total_cmp(&m[y * n + y]));
    let values = order.iter().map(|&j| m[j * n + j]).collect();
    let mut vectors = vec![0.0; n * n];
    for (dst, &src) in order.iter().enumerate() {
        for k in 0..n {
            vectors[k * n + dst] = v[k * n + src];
        }
    }
    (values, vectors)
}

/// Eigenvalues (`[..., n]`, ascending) and, if `vectors`, eigenvectors (`[..., n, n]`,
/// as columns) of each symmetric matrix of `a` (`[..., n, n]`, float32 or float64),
/// reading its lower (or `upper`) triangle.
pub fn eigh(a: &Tensor, upper: bool, vectors: bool) -> Result<Vec<Tensor>> {
    let batch = Batch::read(a);
    let n = batch.rows;
    let parts = per_matrix(batch.count, |i| symmetric_eigen(batch.matrix(i), n, upper));
    let (mut ws, mut vs) = (Vec::new(), Vec::new());
    for (w, v) in parts {
        ws.extend(w);
        vs.extend(v);
    }
    let w_shape = a.shape[..a.ndim() - 1].to_vec();
    let mut out = vec![store(a.dtype, &w_shape, &ws)?];
    if vectors {
        out.push(store(a.dtype, &a.shape, &vs)?);
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
