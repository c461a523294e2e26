//! Singular value decomposition by one-sided Jacobi rotations (Hestenes), in float64:
//! the columns of the matrix are rotated until orthogonal; their norms are the singular
//! values. Accurate for small singular values too. `u` and `vt` are the full square
//! factors (NumPy's `full_matrices=True`, MLX's only form), the columns past the rank
//! completed to an orthonormal basis.

use super::dense::{per_matrix, store, transposed, Batch};
use crate::backend::Tensor;
use crate::error::Result;

const MAX_SWEEPS: usize = 80;

/// `(u, s, vt)` of the `m x n` row-major `a` with `m >= n`: `u` `m x m`, `s` descending,
/// `vt` `n x n`.
fn tall(a: &[f64], m: usize, n: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    // Row j of `g` is column j of `a`; row j of `w` is column j of `v`.
    let mut g = transposed(a, m, n);
    let mut w = vec![0.0; n * n];
    for i in 0..n {
        w[i * n + i] = 1.0;
    }
    let dot = |x: &[f64], y: &[f64]| x.iter().zip(y).map(|(a, b)| a * b).sum::<f64>();
    for _ in 0..MAX_SWEEPS {
        let mut rotated = false;
        for p in 0..n {
            for q in p + 1..n {
                let (gp, gq) = (&g[p * m..(p + 1) * m], &g[q * m..(q + 1) * m]);
                let (alpha, beta, gamma) = (dot(gp, gp), dot(gq, gq), dot(gp, gq));
                if gamma == 0.0 || gamma.abs() <= f64::EPSILON * (alpha * beta).sqrt() {
                    continue;
                }
                if !gamma.is_finite() {
                    continue;
                }
                rotated = true;
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
        .map(|j| dot(&g[j * m..(j + 1) * m], &g[j * m..(j + 1) * m]).sqrt())
        .collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&x, &y| norms[y].total_cmp(&norms[x]));
    let s: Vec<f64> = order.iter().map(|&j| norms[j]).collect();
    let largest = s.first().copied().unwrap_or(0.0);
    let negligible = largest * f64::EPSILON * m as f64;
    let mut columns: Vec<Option<Vec<f64>>> = order
        .iter()
        .map(|&j| {
            (norms[j] > negligible && norms[j] > 0.0)
                .then(|| g[j * m..(j + 1) * m].iter().map(|x| x / norms[j]).collect())
        })
        .collect();
    columns.resize(m, None);
    let columns = complete_basis(columns, m);
    let mut u = vec![0.0; m * m];
    for (j, col) in columns.iter().enumerate() {
        for i in 0..m {
            u[i * m + j] = col[i];
        }
    }
    let vt: Vec<f64> = order
        .iter()
        .flat_map(|&j| w[j * n..(j + 1) * n].to_vec())
        .collect();
    (u, s, vt)
}

/// Rotates rows `p` and `q` (of length `len`) of `x`: `p <- c p - s q`, `q <- s p + c q`.
fn rotate(x: &mut [f64], len: usize, p: usize, q: usize, c: f64, s: f64) {
    for k in 0..len {
        let (a, b) = (x[p * len + k], x[q * len + k]);
        x[p * len + k] = c * a - s * b;
        x[q * len + k] = s * a + c * b;
    }
}

/// Fills the missing vectors of `columns` (length `m` each) with unit vectors orthogonal
/// to all the others: of the coordinate vectors, the one least in the span so far,
/// orthogonalised twice (Gram–Schmidt with reorthogonalisation).
fn complete_basis(columns: Vec<Option<Vec<f64>>>, m: usize) -> Vec<Vec<f64>> {
    let mut basis: Vec<Vec<f64>> = columns.iter().flatten().cloned().collect();
    let mut out = Vec::with_capacity(columns.len());
    for col in columns {
        if let Some(c) = col {
            out.push(c);
            continue;
        }
        let residual = |e: usize, basis: &[Vec<f64>]| {
            let mut x = vec![0.0; m];
            x[e] = 1.0;
            for _ in 0..2 {
                for b in basis {
                    let d: f64 = x.iter().zip(b).map(|(p, q)| p * q).sum();
                    for (xi, bi) in x.iter_mut().zip(b) {
                        *xi -= d * bi;
                    }
                }
            }
            x
        };
        let norm = |x: &[f64]| x.iter().map(|v| v * v).sum::<f64>().sqrt();
        let best = (0..m)
            .map(|e| residual(e, &basis))
            .max_by(|x, y| norm(x).total_cmp(&norm(y)))
            .unwrap_or_default();
        let size = norm(&best);
        let unit: Vec<f64> = best.iter().map(|v| v / size).collect();
        basis.push(unit.clone());
        out.push(unit);
    }
    out
}

/// `(u, s, vt)` of the `m x n` row-major `a`: `u` `m x m`, `s` (`min(m, n)`) descending,
/// `vt` `n x n`.
pub(crate) fn decompose(a: &[f64], m: usize, n: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    if m >= n {
        tall(a, m, n)
    } else {
        // aᵀ = u' s v'ᵀ gives a = v' s u'ᵀ.
        let (u2, s, vt2) = tall(&transposed(a, m, n), n, m);
        (transposed(&vt2, m, m), s, transposed(&u2, n, n))
    }
}

/// The singular values (`[..., min(m, n)]`, descending) and, if `compute_uv`, first `u`
/// (`[..., m, m]`) and last `vt` (`[..., n, n]`) of each matrix of `a` (`[..., m, n]`,
/// float32 or float64): `[u, s, vt]` or `[s]`.
pub fn svd(a: &Tensor, compute_uv: bool) -> Result<Vec<Tensor>> {
    let batch = Batch::read(a);
    let (m, n) = (batch.rows, batch.cols);
    let parts = per_matrix(batch.count, |i| decompose(batch.matrix(i), m, n));
    let (mut us, mut ss, mut vts) = (Vec::new(), Vec::new(), Vec::new());
    for (u, s, vt) in parts {
        us.extend(u);
        ss.extend(s);
        vts.extend(vt);
    }
    let lead = &a.shape[..a.ndim() - 2];
    let s = store(a.dtype, &[lead, &[m.min(n)]].concat(), &ss)?;
    if !compute_uv {
        return Ok(vec![s]);
    }
    let u = store(a.dtype, &[lead, &[m, m]].concat(), &us)?;
    let vt = store(a.dtype, &[lead, &[n, n]].concat(), &vts)?;
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
