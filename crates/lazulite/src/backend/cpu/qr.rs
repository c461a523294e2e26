//! Householder QR factorisation (LAPACK's `geqrf` + `orgqr`, in float64): `a = q r` with
//! `q` `[..., m, k]` orthonormal columns and `r` `[..., k, n]` upper triangular,
//! `k = min(m, n)`. The reflectors follow LAPACK's sign convention (`r[j, j]` has the
//! opposite sign of the pivot column's leading entry), so results match NumPy and MLX.

use super::dense::{per_matrix, store, Batch};
use crate::backend::Tensor;
use crate::error::Result;

/// The reduced QR factors of the `m x n` row-major `a`.
fn factor(a: &[f64], m: usize, n: usize) -> (Vec<f64>, Vec<f64>) {
    let k = m.min(n);
    let mut r = a.to_vec();
    let mut reflectors: Vec<(Vec<f64>, f64)> = Vec::with_capacity(k);
    for j in 0..k {
        let alpha = r[j * n + j];
        let tail = (j + 1..m)
            .map(|i| r[i * n + j] * r[i * n + j])
            .sum::<f64>()
            .sqrt();
        let mut v = vec![0.0; m - j];
        v[0] = 1.0;
        if tail == 0.0 {
            reflectors.push((v, 0.0));
            continue;
        }
        let beta = -alpha.signum() * alpha.hypot(tail);
        let tau = (beta - alpha) / beta;
        for i in j + 1..m {
            v[i - j] = r[i * n + j] / (alpha - beta);
        }
        // r[j.., j..] -= tau v (vᵀ r[j.., j..])
        for c in j..n {
            let dot: f64 = (j..m).map(|i| v[i - j] * r[i * n + c]).sum();
            let f = tau * dot;
            for i in j..m {
                r[i * n + c] -= f * v[i - j];
            }
        }
        r[j * n + j] = beta;
        for i in j + 1..m {
            r[i * n + j] = 0.0;
        }
        reflectors.push((v, tau));
    }
    // q = H_0 H_1 ... H_{k-1} applied to the first k columns of the identity.
    let mut q = vec![0.0; m * k];
    for i in 0..k {
        q[i * k + i] = 1.0;
    }
    for (j, (v, tau)) in reflectors.iter().enumerate().rev() {
        if *tau == 0.0 {
            continue;
        }
        for c in 0..k {
            let dot: f64 = (j..m).map(|i| v[i - j] * q[i * k + c]).sum();
            let f = tau * dot;
            for i in j..m {
                q[i * k + c] -= f * v[i - j];
            }
        }
    }
    (q, r[..k * n].to_vec())
}

/// The reduced QR factors `(q, r)` of each matrix of `a` (`[..., m, n]`, float32 or
/// float64, any layout).
pub fn qr(a: &Tensor) -> Result<(Tensor, Tensor)> {
    let batch = Batch::read(a);
    let (m, n) = (batch.rows, batch.cols);
    let k = m.min(n);
    let parts = per_matrix(batch.count, |i| factor(batch.matrix(i), m, n));
    let (mut qs, mut rs) = (Vec::new(), Vec::new());
    for (q, r) in parts {
        qs.extend(q);
        rs.extend(r);
    }
    let lead = &a.shape[..a.ndim() - 2];
    let q_shape = [lead, &[m, k]].concat();
    let r_shape = [lead, &[k, n]].concat();
    Ok((
        store(a.dtype, &q_shape, &qs)?,
        store(a.dtype, &r_shape, &rs)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_lapack_signs() {
        let a = Tensor::from_slice(&[4.0f64, 1.0, 2.0, 3.0], &[2, 2]).unwrap();
        let (q, r) = qr(&a).unwrap();
        let s5 = 5f64.sqrt();
        let expect_q = [-2.0 / s5, -1.0 / s5, -1.0 / s5, 2.0 / s5];
        let expect_r = [-2.0 * s5, -s5, 0.0, s5];
        for (x, e) in q.slice::<f64>().iter().zip(expect_q) {
            assert!((x - e).abs() < 1e-12);
        }
        for (x, e) in r.slice::<f64>().iter().zip(expect_r) {
            assert!((x - e).abs() < 1e-12);
        }
    }
}
