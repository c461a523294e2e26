//! Cholesky factorisation of a batch of symmetric positive semi-definite matrices.
//!
//! Only the lower triangle of each input matrix is read (as LAPACK's `potrf` with
//! `uplo = 'L'`, NumPy and MLX). Sums run in float64 for float32 input, so the factor is
//! the exact one rounded once. A zero pivot of a semi-definite matrix gives a zero
//! column; a matrix that is not positive semi-definite (a clearly negative pivot) or
//! holds NaN gives a factor of NaN, where LAPACK would report an error code.

use crate::backend::Tensor;
use crate::dtype::DType;
use crate::error::Result;

/// The Cholesky factor of each matrix in the last two axes of `a` (`[..., n, n]`,
/// float32 or float64, any layout): lower triangular, or its transpose if `upper`.
pub fn cholesky(a: &Tensor, upper: bool) -> Result<Tensor> {
    let mut out = Tensor::uninit(a.dtype, &a.shape)?;
    let n = a.shape[a.ndim() - 1];
    let matrix = n * n;
    let mut work = vec![0f64; matrix];
    let values: Vec<f64> = (0..a.size())
        .map(|i| match a.dtype {
            DType::Float32 => a.get::<f32>(i) as f64,
            _ => a.get::<f64>(i),
        })
        .collect();
    let mut factors = vec![0f64; a.size()];
    for (src, dst) in values
        .chunks_exact(matrix.max(1))
        .zip(factors.chunks_exact_mut(matrix.max(1)))
    {
        if matrix == 0 {
            break;
        }
        factor_lower(src, n, &mut work);
        for i in 0..n {
            for j in 0..n {
                dst[i * n + j] = if upper {
                    work[j * n + i]
                } else {
                    work[i * n + j]
                };
            }
        }
    }
    match a.dtype {
        DType::Float32 => {
            for (o, v) in out.slice_mut::<f32>().iter_mut().zip(&factors) {
                *o = *v as f32;
            }
        }
        _ => out.slice_mut::<f64>().copy_from_slice(&factors),
    }
    Ok(out)
}

/// Writes the lower factor `l` of the `n x n` row-major matrix `a` (lower triangle read)
/// into `l`, Cholesky–Banachiewicz order.
fn factor_lower(a: &[f64], n: usize, l: &mut [f64]) {
    l.fill(0.0);
    let largest_diagonal = (0..n).map(|i| a[i * n + i].abs()).fold(0.0, f64::max);
    // Pivots this close to zero are rounding noise of a singular semi-definite matrix.
    let tolerance = n as f64 * f64::EPSILON * largest_diagonal * 16.0;
    for j in 0..n {
        let pivot = a[j * n + j] - (0..j).map(|k| l[j * n + k] * l[j * n + k]).sum::<f64>();
        if pivot.is_nan() || pivot < -tolerance {
            l.fill(f64::NAN);
            return;
        }
        if pivot <= tolerance {
            // Zero pivot: the column below is zero too for a semi-definite matrix.
            continue;
        }
        let d = pivot.sqrt();
        l[j * n + j] = d;
        for i in j + 1..n {
            let dot = (0..j).map(|k| l[i * n + k] * l[j * n + k]).sum::<f64>();
            l[i * n + j] = (a[i * n + j] - dot) / d;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factors_a_small_matrix_and_flags_indefinite_ones() {
        let a = Tensor::from_slice(&[4.0f64, 99.0, 2.0, 3.0], &[2, 2]).unwrap();
        let l = cholesky(&a, false).unwrap();
        let s = 2f64.sqrt();
        assert_eq!(l.slice::<f64>(), &[2.0, 0.0, 1.0, s]);
        let u = cholesky(&a, true).unwrap();
        assert_eq!(u.slice::<f64>(), &[2.0, 1.0, 0.0, s]);
        let bad = Tensor::from_slice(&[1.0f32, 2.0, 2.0, 1.0], &[2, 2]).unwrap();
        assert!(cholesky(&bad, false)
            .unwrap()
            .slice::<f32>()
            .iter()
            .all(|v| v.is_nan()));
        let singular = Tensor::from_slice(&[1.0f64, 1.0, 1.0, 1.0], &[2, 2]).unwrap();
        assert_eq!(
            cholesky(&singular, false).unwrap().slice::<f64>(),
            &[1.0, 0.0, 1.0, 0.0]
        );
    }
}
