//! The `fft` submodule (`mx.fft`): discrete Fourier transforms, shifts and sample
//! frequencies with MLX's signatures.
//!
//! One difference: MLX's two-dimensional transforms default to `axes=[-2, -1]` and read
//! an explicit `axes=None` as all axes; the tables here take only literal defaults, so
//! `None` (the default) means the last two axes.

use crate::bind;
use crate::convert::{Arr, AxesArg, NewShape};
use lazulite::fft::{self as lzf, FftNorm};
use lazulite::{Array, Result};
use pyo3::prelude::*;

type OneAxis = fn(&Array, Option<i64>, i32, FftNorm) -> Result<Array>;
type ManyAxes = fn(&Array, Option<&[i64]>, Option<&[i32]>, FftNorm) -> Result<Array>;

fn one(f: OneAxis, a: &Arr, n: Option<i64>, axis: i32, norm: &str) -> Result<Array> {
    f(&a.0, n, axis, FftNorm::from_name(norm)?)
}

fn many(
    f: ManyAxes,
    a: &Arr,
    s: Option<NewShape>,
    axes: Option<AxesArg>,
    norm: &str,
) -> Result<Array> {
    f(
        &a.0,
        s.as_ref().map(|s| s.0.as_slice()),
        axes.as_ref().map(|x| x.0.as_slice()),
        FftNorm::from_name(norm)?,
    )
}

bind! {
    functions {
        /// One dimensional discrete Fourier Transform.
        ///
        /// Args:
        ///     a (array): The input array.
        ///     n (int, optional): Size of the transformed axis. The corresponding axis in the input is truncated or padded with zeros to match ``n``. The default value is ``a.shape[axis]``.
        ///     axis (int, optional): Axis along which to perform the FFT. The default is ``-1``.
        ///     norm (str, optional): ``'backward'``, ``'ortho'`` or ``'forward'``. Default: ``'backward'``.
        ///
        /// Returns:
        ///     array: The DFT of the input along the given axis (complex64).
        fft(a: Arr, n: Option<i64> = None, axis: i32 = -1, norm: &str = "backward", *, stream) => one(lzf::fft, &a, n, axis, norm);
        /// One dimensional inverse discrete Fourier Transform.
        ///
        /// Args:
        ///     a (array): The input array.
        ///     n (int, optional): Size of the transformed axis (the input is truncated or zero-padded). Default: ``a.shape[axis]``.
        ///     axis (int, optional): Axis along which to perform the FFT. The default is ``-1``.
        ///     norm (str, optional): ``'backward'``, ``'ortho'`` or ``'forward'``. Default: ``'backward'``.
        ///
        /// Returns:
        ///     array: The inverse DFT of the input along the given axis (complex64).
        ifft(a: Arr, n: Option<i64> = None, axis: i32 = -1, norm: &str = "backward", *, stream) => one(lzf::ifft, &a, n, axis, norm);
        /// One dimensional discrete Fourier Transform on a real input.
        ///
        /// The output has the same shape as the input except along ``axis`` where it has size ``n // 2 + 1``.
        ///
        /// Args:
        ///     a (array): The input array. If the array is complex it will be silently cast to a real type.
        ///     n (int, optional): Size of the transformed axis (the input is truncated or zero-padded). Default: ``a.shape[axis]``.
        ///     axis (int, optional): Axis along which to perform the FFT. The default is ``-1``.
        ///     norm (str, optional): ``'backward'``, ``'ortho'`` or ``'forward'``. Default: ``'backward'``.
        ///
        /// Returns:
        ///     array: The DFT of the input along the given axis (complex64).
        rfft(a: Arr, n: Option<i64> = None, axis: i32 = -1, norm: &str = "backward", *, stream) => one(lzf::rfft, &a, n, axis, norm);
        /// The inverse of :func:`rfft`.
        ///
        /// The output has the same shape as the input except along ``axis`` where it has size ``n``.
        ///
        /// Args:
        ///     a (array): The input array.
        ///     n (int, optional): Size of the transformed axis; the input is truncated or zero-padded to ``n // 2 + 1``. Default: ``2 * (a.shape[axis] - 1)``.
        ///     axis (int, optional): Axis along which to perform the FFT. The default is ``-1``.
        ///     norm (str, optional): ``'backward'``, ``'ortho'`` or ``'forward'``. Default: ``'backward'``.
        ///
        /// Returns:
        ///     array: The real array containing the inverse of :func:`rfft` (float32).
        irfft(a: Arr, n: Option<i64> = None, axis: i32 = -1, norm: &str = "backward", *, stream) => one(lzf::irfft, &a, n, axis, norm);
        /// Two dimensional discrete Fourier Transform.
        ///
        /// Args:
        ///     a (array): The input array.
        ///     s (list(int), optional): Sizes of the transformed axes (the input is truncated or zero-padded). Default: the sizes of ``a`` along ``axes``.
        ///     axes (list(int), optional): Axes along which to perform the FFT. Default: ``[-2, -1]``.
        ///     norm (str, optional): ``'backward'``, ``'ortho'`` or ``'forward'``. Default: ``'backward'``.
        ///
        /// Returns:
        ///     array: The DFT of the input along the given axes.
        fft2(a: Arr, s: Option<NewShape> = None, axes: Option<AxesArg> = None, norm: &str = "backward", *, stream) => many(lzf::fft2, &a, s, axes, norm);
        /// Two dimensional inverse discrete Fourier Transform.
        ///
        /// Args:
        ///     a (array): The input array.
        ///     s (list(int), optional): Sizes of the transformed axes (the input is truncated or zero-padded). Default: the sizes of ``a`` along ``axes``.
        ///     axes (list(int), optional): Axes along which to perform the FFT. Default: ``[-2, -1]``.
        ///     norm (str, optional): ``'backward'``, ``'ortho'`` or ``'forward'``. Default: ``'backward'``.
        ///
        /// Returns:
        ///     array: The inverse DFT of the input along the given axes.
        ifft2(a: Arr, s: Option<NewShape> = None, axes: Option<AxesArg> = None, norm: &str = "backward", *, stream) => many(lzf::ifft2, &a, s, axes, norm);
        /// n-dimensional discrete Fourier Transform.
        ///
        /// Args:
        ///     a (array): The input array.
        ///     s (list(int), optional): Sizes of the transformed axes (the input is truncated or zero-padded). Requires ``axes``. Default: the sizes of ``a`` along ``axes``.
        ///     axes (list(int), optional): Axes along which to perform the FFT. Default: ``None``, all axes.
        ///     norm (str, optional): ``'backward'``, ``'ortho'`` or ``'forward'``. Default: ``'backward'``.
        ///
        /// Returns:
        ///     array: The DFT of the input along the given axes.
        fftn(a: Arr, s: Option<NewShape> = None, axes: Option<AxesArg> = None, norm: &str = "backward", *, stream) => many(lzf::fftn, &a, s, axes, norm);
        /// n-dimensional inverse discrete Fourier Transform.
        ///
        /// Args:
        ///     a (array): The input array.
        ///     s (list(int), optional): Sizes of the transformed axes (the input is truncated or zero-padded). Requires ``axes``. Default: the sizes of ``a`` along ``axes``.
        ///     axes (list(int), optional): Axes along which to perform the FFT. Default: ``None``, all axes.
        ///     norm (str, optional): ``'backward'``, ``'ortho'`` or ``'forward'``. Default: ``'backward'``.
        ///
        /// Returns:
        ///     array: The inverse DFT of the input along the given axes.
        ifftn(a: Arr, s: Option<NewShape> = None, axes: Option<AxesArg> = None, norm: &str = "backward", *, stream) => many(lzf::ifftn, &a, s, axes, norm);
        /// Two dimensional real discrete Fourier Transform.
        ///
        /// The output has the same shape as the input except along the last of ``axes``, where it has size ``s[-1] // 2 + 1``.
        ///
        /// Args:
        ///     a (array): The input array. If the array is complex it will be silently cast to a real type.
        ///     s (list(int), optional): Sizes of the transformed axes (the input is truncated or zero-padded). Default: the sizes of ``a`` along ``axes``.
        ///     axes (list(int), optional): Axes along which to perform the FFT. Default: ``[-2, -1]``.
        ///     norm (str, optional): ``'backward'``, ``'ortho'`` or ``'forward'``. Default: ``'backward'``.
        ///
        /// Returns:
        ///     array: The real DFT of the input along the given axes.
        rfft2(a: Arr, s: Option<NewShape> = None, axes: Option<AxesArg> = None, norm: &str = "backward", *, stream) => many(lzf::rfft2, &a, s, axes, norm);
        /// The inverse of :func:`rfft2`.
        ///
        /// Args:
        ///     a (array): The input array.
        ///     s (list(int), optional): Sizes of the transformed axes; the last axis of the input is truncated or zero-padded to ``s[-1] // 2 + 1``. Default: the sizes of ``a`` along ``axes``, ``2 * (a.shape[axes[-1]] - 1)`` for the last.
        ///     axes (list(int), optional): Axes along which to perform the FFT. Default: ``[-2, -1]``.
        ///     norm (str, optional): ``'backward'``, ``'ortho'`` or ``'forward'``. Default: ``'backward'``.
        ///
        /// Returns:
        ///     array: The real array containing the inverse of :func:`rfft2` (float32).
        irfft2(a: Arr, s: Option<NewShape> = None, axes: Option<AxesArg> = None, norm: &str = "backward", *, stream) => many(lzf::irfft2, &a, s, axes, norm);
        /// n-dimensional real discrete Fourier Transform.
        ///
        /// The output has the same shape as the input except along the last of ``axes``, where it has size ``s[-1] // 2 + 1``.
        ///
        /// Args:
        ///     a (array): The input array. If the array is complex it will be silently cast to a real type.
        ///     s (list(int), optional): Sizes of the transformed axes (the input is truncated or zero-padded). Requires ``axes``. Default: the sizes of ``a`` along ``axes``.
        ///     axes (list(int), optional): Axes along which to perform the FFT. Default: ``None``, all axes.
        ///     norm (str, optional): ``'backward'``, ``'ortho'`` or ``'forward'``. Default: ``'backward'``.
        ///
        /// Returns:
        ///     array: The real DFT of the input along the given axes.
        rfftn(a: Arr, s: Option<NewShape> = None, axes: Option<AxesArg> = None, norm: &str = "backward", *, stream) => many(lzf::rfftn, &a, s, axes, norm);
        /// The inverse of :func:`rfftn`.
        ///
        /// Args:
        ///     a (array): The input array.
        ///     s (list(int), optional): Sizes of the transformed axes; the last axis of the input is truncated or zero-padded to ``s[-1] // 2 + 1``. Requires ``axes``. Default: the sizes of ``a`` along ``axes``, ``2 * (a.shape[axes[-1]] - 1)`` for the last.
        ///     axes (list(int), optional): Axes along which to perform the FFT. Default: ``None``, all axes.
        ///     norm (str, optional): ``'backward'``, ``'ortho'`` or ``'forward'``. Default: ``'backward'``.
        ///
        /// Returns:
        ///     array: The real array containing the inverse of :func:`rfftn` (float32).
        irfftn(a: Arr, s: Option<NewShape> = None, axes: Option<AxesArg> = None, norm: &str = "backward", *, stream) => many(lzf::irfftn, &a, s, axes, norm);
        /// Shift the zero-frequency component to the center of the spectrum.
        ///
        /// Args:
        ///     a (array): The input array.
        ///     axes (int or list(int), optional): Axes over which to perform the shift. If ``None``, shift all axes.
        ///
        /// Returns:
        ///     array: The shifted array with the same shape as the input.
        fftshift(a: Arr, axes: Option<AxesArg> = None, *, stream) => lzf::fftshift(&a.0, axes.as_ref().map(|x| x.0.as_slice()));
        /// The inverse of :func:`fftshift`.
        ///
        /// Args:
        ///     a (array): The input array.
        ///     axes (int or list(int), optional): Axes over which to perform the inverse shift. If ``None``, shift all axes.
        ///
        /// Returns:
        ///     array: The inverse-shifted array with the same shape as the input.
        ifftshift(a: Arr, axes: Option<AxesArg> = None, *, stream) => lzf::ifftshift(&a.0, axes.as_ref().map(|x| x.0.as_slice()));
        /// Return the Discrete Fourier Transform sample frequencies.
        ///
        /// Args:
        ///     n (int): Window length.
        ///     d (float, optional): Sample spacing. Default: ``1.0``.
        ///
        /// Returns:
        ///     array: Sample frequencies of length ``n`` (float32).
        fftfreq(n: i64, d: f64 = 1.0, *, stream) => lzf::fftfreq(n, d);
        /// Return the Discrete Fourier Transform sample frequencies for :func:`rfft`.
        ///
        /// Args:
        ///     n (int): Window length.
        ///     d (float, optional): Sample spacing. Default: ``1.0``.
        ///
        /// Returns:
        ///     array: Sample frequencies of length ``n // 2 + 1`` (float32).
        rfftfreq(n: i64, d: f64 = 1.0, *, stream) => lzf::rfftfreq(n, d);
    }
    methods {}
}

/// Adds `lazulite.core.fft` to `parent`.
pub fn register_submodule(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = parent.py();
    let module = PyModule::new(py, "fft")?;
    register(&module)?;
    parent.add_submodule(&module)?;
    py.import("sys")?
        .getattr("modules")?
        .set_item("lazulite.core.fft", &module)?;
    Ok(())
}
