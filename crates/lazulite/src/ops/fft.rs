//! Discrete Fourier transforms (`mx.fft`): the `Fft` primitive (one transform along one
//! axis) and MLX's fft, ifft, fft2, ifft2, fftn, ifftn, rfft, irfft, rfft2, irfft2,
//! rfftn, irfftn, fftshift, ifftshift, fftfreq and rfftfreq composed from it; the
//! short-time transforms `stft` and `istft` (in `fft/stft.rs`) composed from those.
//!
//! As MLX: complex results are complex64 and real ones float32 for every input dtype
//! (float64 included); a transform length differing from the input's truncates it or
//! pads it with zeros first.

use crate::array::Array;
use crate::backend::cpu::fft::{fft as fft_kernel, Transform};
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::batching::batch_to_front;
use crate::ops::binary::multiply;
use crate::ops::cast::astype;
use crate::ops::creation::arange;
use crate::ops::shape::{concatenate, pad, roll, sized};
use crate::ops::unary::{conjugate_if_complex, real};
use crate::ops::view::slice_axis;
use crate::primitive::{Export, MlxNode, MlxState, OutputSpec, Primitive};
use crate::shape::normalize_axis;
use std::sync::Arc;

/// How the transforms are scaled, as NumPy's and MLX's `norm` argument: by `1/n` on the
/// inverse (`Backward`, the default), by `1/sqrt(n)` both ways (`Ortho`), or by `1/n` on
/// the forward transform (`Forward`).
///
/// ```
/// use lazulite::fft::{fft, FftNorm};
/// use lazulite::{Array, Complex};
/// let x = Array::from_slice(&[1.0f32; 4], &[4])?;
/// // The zero-frequency term of four ones under each scaling: 4, 4 / sqrt(4), 4 / 4.
/// for (norm, dc) in [(FftNorm::Backward, 4.0), (FftNorm::Ortho, 2.0), (FftNorm::Forward, 1.0)] {
///     assert_eq!(fft(&x, None, -1, norm)?.to_vec::<Complex>()?[0], Complex::new(dc, 0.0));
/// }
/// # Ok::<(), lazulite::Error>(())
/// ```
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum FftNorm {
    #[default]
    /// No scaling forward, `1/n` on the inverse.
    Backward,
    /// `1/sqrt(n)` on both.
    Ortho,
    /// `1/n` forward, no scaling on the inverse.
    Forward,
}

impl FftNorm {
    /// The norm named `"backward"`, `"ortho"` or `"forward"`; a value error otherwise.
    ///
    /// ```
    /// use lazulite::fft::FftNorm;
    /// assert_eq!(FftNorm::from_name("ortho").unwrap(), FftNorm::Ortho);
    /// assert!(FftNorm::from_name("none").is_err());
    /// ```
    pub fn from_name(name: &str) -> Result<FftNorm> {
        match name {
            "backward" => Ok(FftNorm::Backward),
            "ortho" => Ok(FftNorm::Ortho),
            "forward" => Ok(FftNorm::Forward),
            _ => Err(Error::value(
                "[fft] Invalid norm. Expected one of {'backward', 'ortho', 'forward'}.",
            )),
        }
    }

    /// The factor of a transform of length `n`, the inverse one when `inverse`.
    fn scale(self, n: usize, inverse: bool) -> f64 {
        match (self, inverse) {
            (FftNorm::Ortho, _) => 1.0 / (n as f64).sqrt(),
            (FftNorm::Backward, true) | (FftNorm::Forward, false) => 1.0 / n as f64,
            _ => 1.0,
        }
    }
}

/// The transform `transform` of length `n` along `axis`, times `scale`. The input has
/// `transform.input_len(n)` elements along `axis` and `transform.input_dtype()`.
#[derive(Clone, Copy)]
pub(crate) struct Fft {
    pub axis: usize,
    pub n: usize,
    pub transform: Transform,
    pub scale: f64,
}

impl Fft {
    fn record(self, a: &Array) -> Array {
        let mut shape = a.shape().to_vec();
        shape[self.axis] = self.transform.output_len(self.n);
        Array::from_op(self, vec![a.clone()], shape, self.transform.output_dtype())
    }

    fn with(self, transform: Transform) -> Fft {
        Fft { transform, ..self }
    }
}

impl Primitive for Fft {
    fn name(&self) -> &'static str {
        match self.transform {
            Transform::Forward => "fft",
            Transform::Inverse => "ifft",
            Transform::RealForward => "rfft",
            Transform::RealInverse => "irfft",
        }
    }

    fn params(&self) -> String {
        format!("axis={}, n={}, scale={}", self.axis, self.n, self.scale)
    }

    /// MLX's `FFT` scales its inverse transforms by `1 / n` and nothing else: another
    /// scale is written as that transform times a constant.
    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        let inverse = matches!(self.transform, Transform::Inverse | Transform::RealInverse);
        let real = matches!(
            self.transform,
            Transform::RealForward | Transform::RealInverse
        );
        let mlx_scale = if inverse { 1.0 / self.n as f64 } else { 1.0 };
        if self.scale == mlx_scale {
            let state = vec![
                MlxState::Sizes(vec![self.axis as u64]),
                MlxState::Bool(inverse),
                MlxState::Bool(real),
                // Whether a real inverse transform's output length is odd.
                MlxState::Bool(real && inverse && self.n % 2 == 1),
            ];
            return MlxNode::single("FFT", state, inputs, outputs);
        }
        let plain = Fft {
            scale: mlx_scale,
            ..*self
        };
        let factor = (self.scale / mlx_scale) as f32;
        Ok(Export::Composed(Arc::new(move |x: &[Array]| {
            Ok(vec![multiply(plain.record(&x[0]), factor)?])
        })))
    }

    fn eval(&self, mut inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let x = inputs.pop().expect("fft has one input");
        Ok(vec![fft_kernel(
            x,
            self.axis,
            self.n,
            self.transform,
            self.scale,
        )?])
    }

    /// The adjoint (conjugate transpose) of each transform: `s F` and `s F^-1` (both
    /// unnormalised) are each other's adjoints. A real forward transform keeps the real
    /// part of the adjoint of its half spectrum (zeros for the dropped frequencies); a
    /// real inverse one counts the frequencies it mirrors twice.
    fn vjp(
        &self,
        _: &[Array],
        _: &[Array],
        cotangents: &[Array],
        _: &[usize],
    ) -> Result<Vec<Array>> {
        // Written as conjugate-transposes (the adjoint transform), then conjugated on
        // both sides into the holomorphic convention of the other rules: a transpose.
        let g = &conjugate_if_complex(&cotangents[0])?;
        let grad = match self.transform {
            Transform::Forward => self.with(Transform::Inverse).record(g),
            Transform::Inverse => self.with(Transform::Forward).record(g),
            Transform::RealForward => {
                let g = resize(&astype(g, DType::Complex64)?, self.axis, self.n)?;
                real(&self.with(Transform::Inverse).record(&g))?
            }
            Transform::RealInverse => {
                let spectrum = self
                    .with(Transform::RealForward)
                    .record(&astype(g, DType::Float32)?);
                let n = self.n;
                let weights: Vec<f32> = (0..n / 2 + 1)
                    .map(|k| if k == 0 || 2 * k == n { 1.0 } else { 2.0 })
                    .collect();
                let mut shape = vec![1; g.ndim()];
                shape[self.axis] = weights.len();
                multiply(&spectrum, &Array::from_slice(&weights, &shape)?)?
            }
        };
        Ok(vec![conjugate_if_complex(&grad)?])
    }

    fn jvp(&self, _: &[Array], tangents: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        let t = astype(&tangents[0], self.transform.input_dtype())?;
        Ok(vec![self.record(&t)])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let x = batch_to_front(&inputs[0], axes[0])?;
        let batched = Fft {
            axis: self.axis + 1,
            ..*self
        };
        Ok((vec![batched.record(&x)], vec![Some(0)]))
    }
}

/// `a` truncated or padded with zeros at the end to `len` elements along `axis`.
fn resize(a: &Array, axis: usize, len: usize) -> Result<Array> {
    let have = a.shape()[axis];
    if have > len {
        slice_axis(a, axis, 0, len as i64, 1)
    } else if have < len {
        let mut widths = vec![(0i64, 0i64); a.ndim()];
        widths[axis] = (0, (len - have) as i64);
        pad(a, &widths, "constant", 0)
    } else {
        Ok(a.clone())
    }
}

/// Which family of transforms an n-dimensional call applies.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Kind {
    Complex { inverse: bool },
    Real,
    RealInverse,
}

/// The transform of `a` over `axes` (default: all of them) with lengths `s` (default:
/// the input's, or `2 (m - 1)` for the last axis of a real inverse), checked as MLX does.
fn transform_axes(
    op: &str,
    a: &Array,
    s: Option<&[i64]>,
    axes: Option<&[i32]>,
    norm: FftNorm,
    kind: Kind,
) -> Result<Array> {
    let axes: Vec<i32> = match axes {
        Some(axes) => axes.to_vec(),
        None if s.is_some() => {
            return Err(Error::value(format!(
                "[{op}] `axes` should not be `None` if `s` is not `None`."
            )))
        }
        None => (0..a.ndim() as i32).collect(),
    };
    if axes.is_empty() {
        return Ok(a.clone());
    }
    if s.is_some_and(|s| s.len() != axes.len()) {
        return Err(Error::value(format!(
            "[{op}] Shape and axes have different sizes."
        )));
    }
    let resolved = axes
        .iter()
        .map(|&ax| normalize_axis(op, ax, a.ndim()))
        .collect::<Result<Vec<usize>>>()?;
    let mut seen = vec![false; a.ndim()];
    for &ax in &resolved {
        if std::mem::replace(&mut seen[ax], true) {
            let list: Vec<String> = axes.iter().map(|a| a.to_string()).collect();
            return Err(Error::value(format!(
                "[{op}] Duplicated axis received ({})",
                list.join(",")
            )));
        }
    }
    let last = resolved.len() - 1;
    let lengths: Vec<i64> = match s {
        Some(s) => s.to_vec(),
        None => resolved
            .iter()
            .enumerate()
            .map(|(i, &ax)| {
                let len = a.shape()[ax] as i64;
                if kind == Kind::RealInverse && i == last {
                    2 * (len - 1)
                } else {
                    len
                }
            })
            .collect(),
    };
    if lengths.iter().any(|&n| n <= 0) {
        let list: Vec<String> = lengths.iter().map(|n| n.to_string()).collect();
        return Err(Error::value(format!(
            "[{op}] Invalid FFT output size requested ({})",
            list.join(",")
        )));
    }
    let lengths: Vec<usize> = lengths.iter().map(|&n| n as usize).collect();
    let mut out_shape = a.shape().to_vec();
    for (&ax, &n) in resolved.iter().zip(&lengths) {
        out_shape[ax] = n;
    }
    sized(op, &out_shape)?;

    let step = |x: &Array, ax: usize, n: usize, transform: Transform| -> Result<Array> {
        let inverse = matches!(transform, Transform::Inverse | Transform::RealInverse);
        let x = astype(x, transform.input_dtype())?;
        let x = resize(&x, ax, transform.input_len(n))?;
        let prim = Fft {
            axis: ax,
            n,
            transform,
            scale: norm.scale(n, inverse),
        };
        Ok(prim.record(&x))
    };
    let mut x = a.clone();
    match kind {
        Kind::Complex { inverse } => {
            let transform = if inverse {
                Transform::Inverse
            } else {
                Transform::Forward
            };
            for (&ax, &n) in resolved.iter().zip(&lengths) {
                x = step(&x, ax, n, transform)?;
            }
        }
        Kind::Real => {
            x = step(&x, resolved[last], lengths[last], Transform::RealForward)?;
            for (&ax, &n) in resolved[..last].iter().zip(&lengths) {
                x = step(&x, ax, n, Transform::Forward)?;
            }
        }
        Kind::RealInverse => {
            for (&ax, &n) in resolved[..last].iter().zip(&lengths) {
                x = step(&x, ax, n, Transform::Inverse)?;
            }
            x = step(&x, resolved[last], lengths[last], Transform::RealInverse)?;
        }
    }
    Ok(x)
}

fn one_axis(
    op: &str,
    a: &Array,
    n: Option<i64>,
    axis: i32,
    norm: FftNorm,
    kind: Kind,
) -> Result<Array> {
    let s = n.map(|n| [n]);
    transform_axes(op, a, s.as_ref().map(|s| &s[..]), Some(&[axis]), norm, kind)
}

/// The last two axes, the default of the two-dimensional transforms.
const LAST_TWO: [i32; 2] = [-2, -1];

/// One-dimensional discrete Fourier transform of `a` along `axis`, of length `n`
/// (default: the axis length; the input is truncated or zero-padded to it). Complex64.
///
/// ```
/// use lazulite::{fft::{fft, FftNorm}, Array, Complex};
/// let a = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
/// let f = fft(&a, None, -1, FftNorm::Backward).unwrap();
/// let c = |re, im| Complex::new(re, im);
/// assert_eq!(f.to_vec::<Complex>().unwrap(), [c(10.0, 0.0), c(-2.0, 2.0), c(-2.0, 0.0), c(-2.0, -2.0)]);
/// ```
pub fn fft(a: &Array, n: Option<i64>, axis: i32, norm: FftNorm) -> Result<Array> {
    one_axis("fft", a, n, axis, norm, Kind::Complex { inverse: false })
}

/// Inverse of [`fft`] (scaled by `1/n` with the default norm).
///
/// ```
/// use lazulite::{fft::{fft, ifft, FftNorm}, Array, Complex};
/// let a = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
/// let back = ifft(&fft(&a, None, -1, FftNorm::Backward).unwrap(), None, -1, FftNorm::Backward).unwrap();
/// assert_eq!(back.to_vec::<Complex>().unwrap()[1], Complex::new(2.0, 0.0));
/// ```
pub fn ifft(a: &Array, n: Option<i64>, axis: i32, norm: FftNorm) -> Result<Array> {
    one_axis("ifft", a, n, axis, norm, Kind::Complex { inverse: true })
}

/// The non-negative frequencies (`n / 2 + 1` of them) of the transform of real input
/// (a complex input gives up its imaginary part).
///
/// ```
/// use lazulite::{fft::{rfft, FftNorm}, Array, Complex};
/// let a = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
/// let f = rfft(&a, None, 0, FftNorm::Backward).unwrap();
/// assert_eq!(f.shape(), [3]);
/// assert_eq!(f.to_vec::<Complex>().unwrap()[1], Complex::new(-2.0, 2.0));
/// ```
pub fn rfft(a: &Array, n: Option<i64>, axis: i32, norm: FftNorm) -> Result<Array> {
    one_axis("rfft", a, n, axis, norm, Kind::Real)
}

/// Inverse of [`rfft`]: `n` real values (default `2 (m - 1)` for `m` input frequencies)
/// from the non-negative half of a Hermitian spectrum. Float32.
///
/// ```
/// use lazulite::{fft::{irfft, rfft, FftNorm}, Array};
/// let a = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
/// let back = irfft(&rfft(&a, None, -1, FftNorm::Backward).unwrap(), Some(3), -1, FftNorm::Backward).unwrap();
/// let v = back.to_vec::<f32>().unwrap();
/// assert!((v[2] - 3.0).abs() < 1e-6);
/// ```
pub fn irfft(a: &Array, n: Option<i64>, axis: i32, norm: FftNorm) -> Result<Array> {
    one_axis("irfft", a, n, axis, norm, Kind::RealInverse)
}

/// Two-dimensional [`fftn`] over `axes` (default: the last two).
///
/// ```
/// use lazulite::{fft::{fft2, FftNorm}, Array, Complex};
/// let a = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
/// let f = fft2(&a, None, None, FftNorm::Backward).unwrap();
/// assert_eq!(f.to_vec::<Complex>().unwrap()[0], Complex::new(10.0, 0.0));
/// ```
pub fn fft2(a: &Array, s: Option<&[i64]>, axes: Option<&[i32]>, norm: FftNorm) -> Result<Array> {
    let axes = axes.unwrap_or(&LAST_TWO);
    transform_axes(
        "fft2",
        a,
        s,
        Some(axes),
        norm,
        Kind::Complex { inverse: false },
    )
}

/// Two-dimensional [`ifftn`] over `axes` (default: the last two).
///
/// ```
/// use lazulite::{fft::{ifft2, FftNorm}, Array, Complex};
/// let a = Array::from_slice(&[4.0f32, 0.0, 0.0, 0.0], &[2, 2]).unwrap();
/// let f = ifft2(&a, None, None, FftNorm::Backward).unwrap();
/// assert_eq!(f.to_vec::<Complex>().unwrap(), vec![Complex::new(1.0, 0.0); 4]);
/// ```
pub fn ifft2(a: &Array, s: Option<&[i64]>, axes: Option<&[i32]>, norm: FftNorm) -> Result<Array> {
    let axes = axes.unwrap_or(&LAST_TWO);
    transform_axes(
        "ifft2",
        a,
        s,
        Some(axes),
        norm,
        Kind::Complex { inverse: true },
    )
}

/// N-dimensional discrete Fourier transform over `axes` (default: all) with lengths `s`
/// (default: the axis lengths; `s` requires `axes`). Empty `axes` return `a` itself.
///
/// ```
/// use lazulite::{fft::{fftn, FftNorm}, Array, Complex};
/// let a = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
/// let f = fftn(&a, Some(&[2, 2]), Some(&[0, 1]), FftNorm::Backward).unwrap();
/// assert_eq!(f.shape(), [2, 2]);
/// assert_eq!(f.to_vec::<Complex>().unwrap()[0], Complex::new(12.0, 0.0));
/// ```
pub fn fftn(a: &Array, s: Option<&[i64]>, axes: Option<&[i32]>, norm: FftNorm) -> Result<Array> {
    transform_axes("fftn", a, s, axes, norm, Kind::Complex { inverse: false })
}

/// Inverse of [`fftn`].
///
/// ```
/// use lazulite::{fft::{ifftn, FftNorm}, Array, Complex};
/// let a = Array::from_slice(&[8.0f32, 0.0], &[2]).unwrap();
/// let f = ifftn(&a, None, None, FftNorm::Backward).unwrap();
/// assert_eq!(f.to_vec::<Complex>().unwrap(), vec![Complex::new(4.0, 0.0); 2]);
/// ```
pub fn ifftn(a: &Array, s: Option<&[i64]>, axes: Option<&[i32]>, norm: FftNorm) -> Result<Array> {
    transform_axes("ifftn", a, s, axes, norm, Kind::Complex { inverse: true })
}

/// Two-dimensional [`rfftn`] over `axes` (default: the last two).
///
/// ```
/// use lazulite::{fft::{rfft2, FftNorm}, Array};
/// let a = Array::from_slice(&[1.0f32; 12], &[3, 4]).unwrap();
/// assert_eq!(rfft2(&a, None, None, FftNorm::Backward).unwrap().shape(), [3, 3]);
/// ```
pub fn rfft2(a: &Array, s: Option<&[i64]>, axes: Option<&[i32]>, norm: FftNorm) -> Result<Array> {
    let axes = axes.unwrap_or(&LAST_TWO);
    transform_axes("rfft2", a, s, Some(axes), norm, Kind::Real)
}

/// Two-dimensional [`irfftn`] over `axes` (default: the last two).
///
/// ```
/// use lazulite::{fft::{irfft2, FftNorm}, Array};
/// let a = Array::from_slice(&[1.0f32; 12], &[3, 4]).unwrap();
/// assert_eq!(irfft2(&a, None, None, FftNorm::Backward).unwrap().shape(), [3, 6]);
/// ```
pub fn irfft2(a: &Array, s: Option<&[i64]>, axes: Option<&[i32]>, norm: FftNorm) -> Result<Array> {
    let axes = axes.unwrap_or(&LAST_TWO);
    transform_axes("irfft2", a, s, Some(axes), norm, Kind::RealInverse)
}

/// N-dimensional transform of real input: [`rfft`] along the last of `axes`, then
/// [`fft`] along the others.
///
/// ```
/// use lazulite::{fft::{rfftn, FftNorm}, Array};
/// let a = Array::from_slice(&[1.0f32; 24], &[2, 3, 4]).unwrap();
/// assert_eq!(rfftn(&a, None, None, FftNorm::Backward).unwrap().shape(), [2, 3, 3]);
/// ```
pub fn rfftn(a: &Array, s: Option<&[i64]>, axes: Option<&[i32]>, norm: FftNorm) -> Result<Array> {
    transform_axes("rfftn", a, s, axes, norm, Kind::Real)
}

/// Inverse of [`rfftn`]: [`ifft`] along all of `axes` but the last, then [`irfft`].
///
/// ```
/// use lazulite::{fft::{irfftn, FftNorm}, Array};
/// let a = Array::from_slice(&[1.0f32; 12], &[3, 4]).unwrap();
/// let r = irfftn(&a, Some(&[3, 5]), Some(&[0, 1]), FftNorm::Backward).unwrap();
/// assert_eq!(r.shape(), [3, 5]);
/// ```
pub fn irfftn(a: &Array, s: Option<&[i64]>, axes: Option<&[i32]>, norm: FftNorm) -> Result<Array> {
    transform_axes("irfftn", a, s, axes, norm, Kind::RealInverse)
}

/// `a` rolled by `shift(len)` along each of `axes` (default: all).
fn shift(op: &str, a: &Array, axes: Option<&[i32]>, shift: fn(i64) -> i64) -> Result<Array> {
    let axes: Vec<i32> = match axes {
        Some(axes) => axes.to_vec(),
        None => (0..a.ndim() as i32).collect(),
    };
    let mut out = a.clone();
    for &ax in &axes {
        let axis = normalize_axis(op, ax, a.ndim())?;
        let len = a.shape()[axis] as i64;
        if len > 0 {
            out = roll(&out, shift(len), axis as i32)?;
        }
    }
    Ok(out)
}

/// `a` with the zero frequency moved to the middle of each of `axes` (default: all):
/// a roll by `len / 2`.
///
/// ```
/// use lazulite::{arange, fft::fftshift, DType};
/// let a = arange(0.0, 5.0, 1.0, DType::Int32).unwrap();
/// assert_eq!(fftshift(&a, None).unwrap().to_vec::<i32>().unwrap(), [3, 4, 0, 1, 2]);
/// ```
pub fn fftshift(a: &Array, axes: Option<&[i32]>) -> Result<Array> {
    shift("fftshift", a, axes, |len| len / 2)
}

/// Inverse of [`fftshift`]: a roll by `-(len / 2)`.
///
/// ```
/// use lazulite::{arange, fft::ifftshift, DType};
/// let a = arange(0.0, 5.0, 1.0, DType::Int32).unwrap();
/// assert_eq!(ifftshift(&a, None).unwrap().to_vec::<i32>().unwrap(), [2, 3, 4, 0, 1]);
/// ```
pub fn ifftshift(a: &Array, axes: Option<&[i32]>) -> Result<Array> {
    shift("ifftshift", a, axes, |len| -(len / 2))
}

fn check_freq_args(op: &str, n: i64, d: f64) -> Result<()> {
    if n <= 0 {
        return Err(Error::value(format!("[{op}] `n` must be greater than 0.")));
    }
    if d == 0.0 {
        return Err(Error::value(format!("[{op}] `d` must be non-zero.")));
    }
    Ok(())
}

/// The sample frequencies of [`fft`] of length `n` with sample spacing `d`:
/// `[0, 1, ..., (n - 1) / 2, -(n / 2), ..., -1] / (d n)`. Float32.
///
/// ```
/// use lazulite::fft::fftfreq;
/// assert_eq!(fftfreq(4, 1.0).unwrap().to_vec::<f32>().unwrap(), [0.0, 0.25, -0.5, -0.25]);
/// ```
pub fn fftfreq(n: i64, d: f64) -> Result<Array> {
    check_freq_args("fftfreq", n, d)?;
    let positive = arange(0.0, ((n + 1) / 2) as f64, 1.0, DType::Float64)?;
    let negative = arange(-(n / 2) as f64, 0.0, 1.0, DType::Float64)?;
    frequencies(&concatenate(&[positive, negative], 0)?, n, d)
}

/// `k / (d n)` in float64, rounded once to float32.
fn frequencies(k: &Array, n: i64, d: f64) -> Result<Array> {
    astype(&multiply(k, 1.0 / (d * n as f64))?, DType::Float32)
}

/// The sample frequencies of [`rfft`] of length `n` with spacing `d`:
/// `[0, 1, ..., n / 2] / (d n)`. Float32.
///
/// ```
/// use lazulite::fft::rfftfreq;
/// assert_eq!(rfftfreq(4, 1.0).unwrap().to_vec::<f32>().unwrap(), [0.0, 0.25, 0.5]);
/// ```
pub fn rfftfreq(n: i64, d: f64) -> Result<Array> {
    check_freq_args("rfftfreq", n, d)?;
    frequencies(&arange(0.0, (n / 2 + 1) as f64, 1.0, DType::Float64)?, n, d)
}

mod stft;
pub use stft::{istft, stft, IstftOptions, StftOptions};
