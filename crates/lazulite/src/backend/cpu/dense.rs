//! Batches of dense matrices for the factorisation kernels (`lu`, `qr`, `eigh`, `svd`):
//! the last two axes of a float32 or float64 tensor read into row-major float64 (so
//! float32 input is factored in float64 and rounded once), one task per matrix on the
//! thread pool, results stored back in the input's dtype.

use crate::backend::Tensor;
use crate::dtype::DType;
use crate::error::Result;
use rayon::prelude::*;

/// The matrices in the last two axes of a tensor, row-major, in float64.
pub(crate) struct Batch {
    pub values: Vec<f64>,
    pub count: usize,
    pub rows: usize,
    pub cols: usize,
}

impl Batch {
    /// Reads the matrices of `t` (`[..., rows, cols]`, float32 or float64, any layout).
    pub(crate) fn read(t: &Tensor) -> Batch {
        let nd = t.ndim();
        let (rows, cols) = (t.shape[nd - 2], t.shape[nd - 1]);
        let values: Vec<f64> = if t.is_contiguous() {
            match t.dtype {
                DType::Float32 => t.slice::<f32>().iter().map(|&v| v as f64).collect(),
                _ => t.slice::<f64>().to_vec(),
            }
        } else {
            (0..t.size())
                .map(|i| match t.dtype {
                    DType::Float32 => t.get::<f32>(i) as f64,
                    _ => t.get::<f64>(i),
                })
                .collect()
        };
        let count = t.shape[..nd - 2].iter().product();
        Batch {
            values,
            count,
            rows,
            cols,
        }
    }

    /// Matrix `i`, row-major.
    pub(crate) fn matrix(&self, i: usize) -> &[f64] {
        let n = self.rows * self.cols;
        &self.values[i * n..(i + 1) * n]
    }
}

/// `f(i)` for every matrix `i < count`, in parallel, in order.
pub(crate) fn per_matrix<R: Send>(count: usize, f: impl Fn(usize) -> R + Sync + Send) -> Vec<R> {
    (0..count).into_par_iter().map(f).collect()
}

/// A contiguous tensor of `dtype` (float32 or float64) and `shape` holding `values`.
pub(crate) fn store(dtype: DType, shape: &[usize], values: &[f64]) -> Result<Tensor> {
    let mut out = Tensor::uninit(dtype, shape)?;
    match dtype {
        DType::Float32 => {
            for (o, v) in out.slice_mut::<f32>().iter_mut().zip(values) {
                *o = *v as f32;
            }
        }
        _ => out.slice_mut::<f64>().copy_from_slice(values),
    }
    Ok(out)
}

/// The transpose of the `rows x cols` row-major matrix `a`.
pub(crate) fn transposed(a: &[f64], rows: usize, cols: usize) -> Vec<f64> {
    let mut t = vec![0.0; a.len()];
    for i in 0..rows {
        for j in 0..cols {
            t[j * rows + i] = a[i * cols + j];
        }
    }
    t
}
