//! LU factorisation with partial pivoting and what is built on it: inverses, linear
//! solves, triangular solves (LAPACK's `getrf`, `getri`, `gesv`, `trtrs`, in float64).
//!
//! A zero pivot (an exactly singular matrix) is an error, as in LAPACK and NumPy
//! (MLX raises the same at eval time); `lu_factor` alone factors singular matrices.

use super::dense::{per_matrix, store, Batch};
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::error::{Error, Result};

/// Factors the `m x n` row-major `a` in place into `P a = L U` (unit `L` below the
/// diagonal, `U` on and above it); `pivots[j]` is the row swapped with row `j` at step
/// `j` (LAPACK's `ipiv`, from zero). Returns whether a pivot was exactly zero.
fn factor(a: &mut [f64], m: usize, n: usize, pivots: &mut [usize]) -> bool {
    let mut singular = false;
    for j in 0..m.min(n) {
        let p = (j..m)
            .max_by(|&x, &y| a[x * n + j].abs().total_cmp(&a[y * n + j].abs()))
            .unwrap_or(j);
        pivots[j] = p;
        if p != j {
            for c in 0..n {
                a.swap(j * n + c, p * n + c);
            }
        }
        let d = a[j * n + j];
        if d == 0.0 {
            singular = true;
            continue;
        }
        for i in j + 1..m {
            let l = a[i * n + j] / d;
            a[i * n + j] = l;
            if l != 0.0 {
                for c in j + 1..n {
                    a[i * n + c] -= l * a[j * n + c];
                }
            }
        }
    }
    singular
}

/// Solves `t x = b` in place of the `n x k` row-major `b` for the triangle of the
/// `n x n` row-major `t` (its diagonal taken as ones if `unit`).
fn triangular_solve(t: &[f64], n: usize, upper: bool, unit: bool, b: &mut [f64], k: usize) {
    let rows: Box<dyn Iterator<Item = usize>> = if upper {
        Box::new((0..n).rev())
    } else {
        Box::new(0..n)
    };
    for i in rows {
        let others: std::ops::Range<usize> = if upper { i + 1..n } else { 0..i };
        for j in others {
            let f = t[i * n + j];
            if f != 0.0 {
                for c in 0..k {
                    b[i * k + c] -= f * b[j * k + c];
                }
            }
        }
        if !unit {
            let d = t[i * n + i];
            for c in 0..k {
                b[i * k + c] /= d;
            }
        }
    }
}

/// Solves `a x = b` for the `n x n` `a` and `n x k` `b` (row-major); `None` if `a` is
/// singular.
fn solve_one(a: &[f64], b: &[f64], n: usize, k: usize) -> Option<Vec<f64>> {
    let mut lu = a.to_vec();
    let mut pivots = vec![0; n];
    if factor(&mut lu, n, n, &mut pivots) {
        return None;
    }
    let mut x = b.to_vec();
    for (j, &p) in pivots.iter().enumerate() {
        if p != j {
            for c in 0..k {
                x.swap(j * k + c, p * k + c);
            }
        }
    }
    triangular_solve(&lu, n, false, true, &mut x, k);
    triangular_solve(&lu, n, true, false, &mut x, k);
    Some(x)
}

fn singular_error(op: &str) -> Error {
    Error::runtime(format!(
        "[linalg::{op}] The matrix is singular: its LU factorization has a zero pivot."
    ))
}

/// Joins per-matrix results, the first failure an error of `op`.
fn collect(parts: Vec<Option<Vec<f64>>>, op: &str) -> Result<Vec<f64>> {
    let mut out = Vec::new();
    for p in parts {
        out.extend(p.ok_or_else(|| singular_error(op))?);
    }
    Ok(out)
}

/// The inverse of each matrix in the last two axes of `a` (`[..., n, n]`).
pub fn inverse(a: &Tensor) -> Result<Tensor> {
    let batch = Batch::read(a);
    let n = batch.rows;
    let mut identity = vec![0.0; n * n];
    for i in 0..n {
        identity[i * n + i] = 1.0;
    }
    let parts = per_matrix(batch.count, |i| solve_one(batch.matrix(i), &identity, n, n));
    store(a.dtype, &a.shape, &collect(parts, "inv")?)
}

/// `x` with `a x = b` for `a` `[..., n, n]` and `b` `[..., n, k]` of the same batch
/// shape and dtype.
pub fn solve(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let (ma, mb) = (Batch::read(a), Batch::read(b));
    let (n, k) = (mb.rows, mb.cols);
    let parts = per_matrix(ma.count, |i| solve_one(ma.matrix(i), mb.matrix(i), n, k));
    store(b.dtype, &b.shape, &collect(parts, "solve")?)
}

/// `x` with `t x = b` for the lower (or `upper`) triangle of `t` `[..., n, n]` and `b`
/// `[..., n, k]` of the same batch shape and dtype; the other triangle is not read.
pub fn solve_triangular(t: &Tensor, b: &Tensor, upper: bool) -> Result<Tensor> {
    let (mt, mb) = (Batch::read(t), Batch::read(b));
    let (n, k) = (mb.rows, mb.cols);
    let parts = per_matrix(mt.count, |i| {
        let m = mt.matrix(i);
        if (0..n).any(|d| m[d * n + d] == 0.0) {
            return None;
        }
        let mut x = mb.matrix(i).to_vec();
        triangular_solve(m, n, upper, false, &mut x, k);
        Some(x)
    });
    store(b.dtype, &b.shape, &collect(parts, "solve_triangular")?)
}

/// The packed LU factors (`[..., m, n]`, `L` strictly below the diagonal with implicit
/// unit diagonal, `U` on and above) and the pivots (`[..., min(m, n)]`, uint32, LAPACK's
/// `ipiv` from zero) of each matrix of `a`. Singular matrices are factored too.
pub fn lu_factor(a: &Tensor) -> Result<(Tensor, Tensor)> {
    let batch = Batch::read(a);
    let (m, n) = (batch.rows, batch.cols);
    let k = m.min(n);
    let parts = per_matrix(batch.count, |i| {
        let mut lu = batch.matrix(i).to_vec();
        let mut pivots = vec![0; k];
        factor(&mut lu, m, n, &mut pivots);
        (lu, pivots)
    });
    let mut values = Vec::with_capacity(batch.values.len());
    let mut pivots = Tensor::uninit(DType::UInt32, &pivot_shape(&a.shape, k))?;
    let slots = pivots.slice_mut::<u32>();
    for (i, (lu, p)) in parts.into_iter().enumerate() {
        values.extend(lu);
        for (slot, v) in slots[i * k..(i + 1) * k].iter_mut().zip(p) {
            *slot = v as u32;
        }
    }
    Ok((store(a.dtype, &a.shape, &values)?, pivots))
}

fn pivot_shape(shape: &[usize], k: usize) -> Vec<usize> {
    let mut s = shape[..shape.len() - 2].to_vec();
    s.push(k);
    s
}

/// MLX's row permutation of LU factors from LAPACK pivots (`[..., k]`, uint32) of
/// matrices with `m` rows: `p` (`[..., m]`, uint32) with `a[i] == (l @ u)[p[i]]`.
pub fn permutation_of(pivots: &Tensor, m: usize) -> Result<Tensor> {
    let k = pivots.shape[pivots.ndim() - 1];
    let count = pivots.size() / k.max(1);
    let count = if k == 0 {
        pivots.shape[..pivots.ndim() - 1].iter().product()
    } else {
        count
    };
    let mut shape = pivots.shape.clone();
    *shape.last_mut().expect("pivots have an axis") = m;
    let mut out = Tensor::uninit(DType::UInt32, &shape)?;
    let slots = out.slice_mut::<u32>();
    for b in 0..count {
        // order[j]: the input row that ends up in row j of l @ u.
        let mut order: Vec<usize> = (0..m).collect();
        for j in 0..k {
            order.swap(j, pivots.get::<u32>(b * k + j) as usize);
        }
        for (j, &row) in order.iter().enumerate() {
            slots[b * m + row] = j as u32;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverts_solves_and_flags_singular_matrices() {
        let a = Tensor::from_slice(&[0.0f64, 2.0, 1.0, 1.0], &[2, 2]).unwrap();
        assert_eq!(inverse(&a).unwrap().slice::<f64>(), &[-0.5, 1.0, 0.5, 0.0]);
        let b = Tensor::from_slice(&[2.0f64, 3.0], &[2, 1]).unwrap();
        assert_eq!(solve(&a, &b).unwrap().slice::<f64>(), &[2.0, 1.0]);
        let lower = solve_triangular(&a, &b, false);
        assert!(lower.is_err());
        let upper = solve_triangular(&a, &b, true);
        assert!(upper.is_err());
        let t = Tensor::from_slice(&[2.0f64, 9.0, 1.0, 1.0], &[2, 2]).unwrap();
        assert_eq!(
            solve_triangular(&t, &b, false).unwrap().slice::<f64>(),
            &[1.0, 2.0]
        );
        let singular = Tensor::from_slice(&[1.0f32, 2.0, 2.0, 4.0], &[2, 2]).unwrap();
        assert!(inverse(&singular).is_err());
        let (lu, pivots) = lu_factor(&singular).unwrap();
        assert_eq!(lu.slice::<f32>(), &[2.0, 4.0, 0.5, 0.0]);
        assert_eq!(pivots.slice::<u32>(), &[1, 1]);
    }
}
