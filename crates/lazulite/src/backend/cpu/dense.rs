//! Batches of dense matrices for the factorisation kernels (`lu`, `qr`, `eigh`, `svd`,
//! `eig`): the last two axes of a float32, float64 or complex64 tensor read into
//! row-major float64 (or complex float64), so that input is factored in double precision
//! and rounded once; one task per matrix on the thread pool; results stored back in the
//! input's precision.

use super::cx::Cx;
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::element::Complex;
use crate::error::Result;
use rayon::prelude::*;
use std::iter::Sum;
use std::ops::{Add, Div, Mul, Sub};

/// The numbers the kernels compute in: `f64` for real input, [`Cx`] for complex. Written
/// once over both, a kernel for real matrices is the same code as for complex ones with
/// conjugation the identity.
pub(crate) trait Scalar:
    Copy
    + PartialEq
    + Send
    + Sync
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Sum
    + 'static
{
    const ZERO: Self;
    const ONE: Self;
    fn conj(self) -> Self;
    fn abs(self) -> f64;
    /// `|x|²`.
    fn abs2(self) -> f64;
    fn scale(self, s: f64) -> Self;
    fn real_part(self) -> f64;
    /// The real number `x` as this kind of number.
    fn from_real(x: f64) -> Self;
    /// This number as a complex one.
    fn to_cx(self) -> Cx;
    /// `self * z`, computed in the kind of arithmetic `self` needs (real times complex
    /// scales both parts).
    fn times(self, z: Cx) -> Cx;
    fn is_finite(self) -> bool;
    /// `x / |x|` for a nonzero complex `x`; `None` for a real one, whose rotations need
    /// no phase.
    fn phase(self) -> Option<Self>;
    /// Element `i` of `t` (in logical order), which holds this kind of number.
    fn get(t: &Tensor, i: usize) -> Self;
    /// A contiguous tensor of `shape` holding `values`, in the precision of `dtype`.
    fn store(dtype: DType, shape: &[usize], values: &[Self]) -> Result<Tensor>;
}

impl Scalar for f64 {
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
    fn conj(self) -> f64 {
        self
    }
    fn abs(self) -> f64 {
        f64::abs(self)
    }
    fn abs2(self) -> f64 {
        self * self
    }
    fn scale(self, s: f64) -> f64 {
        self * s
    }
    fn real_part(self) -> f64 {
        self
    }
    fn from_real(x: f64) -> f64 {
        x
    }
    fn to_cx(self) -> Cx {
        Cx::real(self)
    }
    fn times(self, z: Cx) -> Cx {
        z.scale(self)
    }
    fn is_finite(self) -> bool {
        f64::is_finite(self)
    }
    fn phase(self) -> Option<f64> {
        None
    }
    fn get(t: &Tensor, i: usize) -> f64 {
        match t.dtype {
            DType::Float32 => t.get::<f32>(i) as f64,
            _ => t.get::<f64>(i),
        }
    }
    fn store(dtype: DType, shape: &[usize], values: &[f64]) -> Result<Tensor> {
        store(dtype, shape, values)
    }
}

impl Scalar for Cx {
    const ZERO: Cx = Cx::ZERO;
    const ONE: Cx = Cx { re: 1.0, im: 0.0 };
    fn conj(self) -> Cx {
        Cx::conj(self)
    }
    fn abs(self) -> f64 {
        Cx::abs(self)
    }
    fn abs2(self) -> f64 {
        self.re * self.re + self.im * self.im
    }
    fn scale(self, s: f64) -> Cx {
        Cx::scale(self, s)
    }
    fn real_part(self) -> f64 {
        self.re
    }
    fn from_real(x: f64) -> Cx {
        Cx::real(x)
    }
    fn to_cx(self) -> Cx {
        self
    }
    fn times(self, z: Cx) -> Cx {
        self * z
    }
    fn is_finite(self) -> bool {
        self.re.is_finite() && self.im.is_finite()
    }
    fn phase(self) -> Option<Cx> {
        // Scaled to a largest part of 1 first: the modulus of a subnormal number is
        // inexact (and its reciprocal overflows), which would make the phase non-unit.
        let largest = self.re.abs().max(self.im.abs());
        if largest == 0.0 || !largest.is_finite() {
            return None;
        }
        let (re, im) = (self.re / largest, self.im / largest);
        let r = re.hypot(im);
        Some(Cx::new(re / r, im / r))
    }
    fn get(t: &Tensor, i: usize) -> Cx {
        let z = t.get::<Complex>(i);
        Cx::new(z.re as f64, z.im as f64)
    }
    fn store(_: DType, shape: &[usize], values: &[Cx]) -> Result<Tensor> {
        store_complex(shape, values)
    }
}

/// The matrices in the last two axes of a tensor, row-major, in double precision.
pub(crate) struct Batch<T = f64> {
    pub values: Vec<T>,
    pub count: usize,
    pub rows: usize,
    pub cols: usize,
}

impl<T: Scalar> Batch<T> {
    /// Reads the matrices of `t` (`[..., rows, cols]`, any layout): float32 or float64
    /// into `f64`, complex64 into [`Cx`].
    pub(crate) fn read(t: &Tensor) -> Batch<T> {
        let nd = t.ndim();
        let (rows, cols) = (t.shape[nd - 2], t.shape[nd - 1]);
        let values: Vec<T> = (0..t.size()).map(|i| T::get(t, i)).collect();
        let count = t.shape[..nd - 2].iter().product();
        Batch {
            values,
            count,
            rows,
            cols,
        }
    }

    /// Matrix `i`, row-major.
    pub(crate) fn matrix(&self, i: usize) -> &[T] {
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

/// A complex64 tensor of `shape` holding `values`.
pub(crate) fn store_complex(shape: &[usize], values: &[Cx]) -> Result<Tensor> {
    let mut out = Tensor::uninit(DType::Complex64, shape)?;
    for (o, v) in out.slice_mut::<Complex>().iter_mut().zip(values) {
        *o = Complex::new(v.re as f32, v.im as f32);
    }
    Ok(out)
}

/// The transpose of the `rows x cols` row-major matrix `a`.
pub(crate) fn transposed<T: Scalar>(a: &[T], rows: usize, cols: usize) -> Vec<T> {
    let mut t = vec![T::ZERO; a.len()];
    for i in 0..rows {
        for j in 0..cols {
            t[j * rows + i] = a[i * cols + j];
        }
    }
    t
}

/// The conjugate transpose of the `rows x cols` row-major matrix `a`.
pub(crate) fn adjoint<T: Scalar>(a: &[T], rows: usize, cols: usize) -> Vec<T> {
    let mut t = transposed(a, rows, cols);
    t.iter_mut().for_each(|x| *x = x.conj());
    t
}
