//! The `fft` submodule (`mx.fft`): discrete Fourier transforms, shifts and sample
//! frequencies with MLX's signatures.
//!
//! One difference: MLX's two-dimensional transforms default to `axes=[-2, -1]` and read
//! an explicit `axes=None` as all axes; the tables here take only literal defaults, so
//! `None` (the default) means the last two axes.

use crate::bind;
use crate::convert::{Arr, AxesArg, CInt, NewShape};
use lazulite::fft::{self as lzf, FftNorm, IstftOptions, StftOptions};
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

#[allow(clippy::too_many_arguments)]
fn stft_with(
    x: &Arr,
    n_fft: i64,
    hop_length: Option<CInt>,
    win_length: Option<CInt>,
    window: Option<Arr>,
    center: bool,
    pad_mode: &str,
    norm: &str,
    onesided: Option<bool>,
) -> Result<Array> {
    // MLX reads n_fft as a C int (a TypeError outside its range), as the other ints here.
    if i32::try_from(n_fft).is_err() {
        return Err(lazulite::Error::type_error(format!(
            "[stft] n_fft must be an int in a C int's range, got {n_fft}."
        )));
    }
    let norm = FftNorm::from_name(norm).map_err(|_| invalid_norm("stft"))?;
    let options = StftOptions {
        hop_length: hop_length.map(|h| h.0.into()),
        win_length: win_length.map(|w| w.0.into()),
        window: window.map(|w| w.0),
        center,
        pad_mode: pad_mode.to_string(),
        norm,
        onesided,
    };
    lzf::stft(&x.0, n_fft, &options)
}

#[allow(clippy::too_many_arguments)]
fn istft_with(
    stft_matrix: &Arr,
    n_fft: Option<CInt>,
    hop_length: Option<CInt>,
    win_length: Option<CInt>,
    window: Option<Arr>,
    center: bool,
    norm: &str,
    onesided: Option<bool>,
    length: Option<CInt>,
) -> Result<Array> {
    let norm = FftNorm::from_name(norm).map_err(|_| invalid_norm("istft"))?;
    let options = IstftOptions {
        n_fft: n_fft.map(|n| n.0.into()),
        hop_length: hop_length.map(|h| h.0.into()),
        win_length: win_length.map(|w| w.0.into()),
        window: window.map(|w| w.0),
        center,
        norm,
        onesided,
        length: length.map(|l| l.0.into()),
    };
    lzf::istft(&stft_matrix.0, &options)
}

/// MLX's message for an unknown norm, naming the operation.
fn invalid_norm(op: &str) -> lazulite::Error {
    lazulite::Error::value(format!(
        "[{op}] Invalid norm. Expected one of {{'backward', 'ortho', 'forward'}}."
    ))
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
        /// Short-Time Fourier Transform.
        ///
        /// Splits the last axis of ``x`` into overlapping frames of ``n_fft`` samples, multiplies each by ``window`` and takes its discrete Fourier transform. The result is complex64 with shape ``(..., n_freq, n_frames)``.
        ///
        /// Args:
        ///     x (array): The input array.
        ///     n_fft (int, optional): Size of the transform of each frame. Default: ``2048``.
        ///     hop_length (int, optional): Samples between the starts of consecutive frames. Default: ``n_fft // 4``.
        ///     win_length (int, optional): Size of the default rectangular window. Default: ``n_fft``.
        ///     window (array, optional): A one-dimensional window of at most ``n_fft`` points, zero-padded on both sides to ``n_fft``. Default: a rectangular window.
        ///     center (bool, optional): Pad ``n_fft // 2`` samples at both ends so that frames are centered on their sample. Default: ``True``.
        ///     pad_mode (str, optional): ``'reflect'``, ``'constant'`` or ``'edge'`` (as :func:`pad`), used when ``center`` is ``True``. Default: ``'reflect'``.
        ///     norm (str, optional): ``'backward'``, ``'ortho'`` or ``'forward'``. Default: ``'backward'``.
        ///     onesided (bool, optional): Keep only the non-negative frequencies. Default: ``True`` for real input, ``False`` for complex input.
        ///
        /// Returns:
        ///     array: The STFT of ``x``.
        stft(x: Arr, n_fft: i64 = 2048, hop_length: Option<CInt> = None, win_length: Option<CInt> = None, window: Option<Arr> = None, center: bool = true, pad_mode: &str = "reflect", norm: &str = "backward", onesided: Option<bool> = None, *, stream) => stft_with(&x, n_fft, hop_length, win_length, window, center, pad_mode, norm, onesided);
        /// Inverse Short-Time Fourier Transform.
        ///
        /// Inverts :func:`stft`: the inverse transform of each frame, multiplied by the window, is summed where frames overlap and divided by the sum of the squared window there.
        ///
        /// Args:
        ///     stft_matrix (array): The STFT, of shape ``(..., n_freq, n_frames)``.
        ///     n_fft (int, optional): Size of the transform of each frame. Default: ``2 * (n_freq - 1)`` when ``onesided``, else ``n_freq`` (pass it for an odd size).
        ///     hop_length (int, optional): Samples between the starts of consecutive frames. Default: ``n_fft // 4``.
        ///     win_length (int, optional): Size of the default rectangular window. Default: ``n_fft``.
        ///     window (array, optional): A one-dimensional window of at most ``n_fft`` points. Default: a rectangular window.
        ///     center (bool, optional): Whether the STFT was centered. Default: ``True``.
        ///     norm (str, optional): ``'backward'``, ``'ortho'`` or ``'forward'``. Default: ``'backward'``.
        ///     onesided (bool, optional): Whether the STFT holds only the non-negative frequencies. Default: ``True``.
        ///     length (int, optional): Truncate or zero-pad the signal to this length.
        ///
        /// Returns:
        ///     array: The reconstructed signal.
        istft(stft_matrix: Arr, n_fft: Option<CInt> = None, hop_length: Option<CInt> = None, win_length: Option<CInt> = None, window: Option<Arr> = None, center: bool = true, norm: &str = "backward", onesided: Option<bool> = None, length: Option<CInt> = None, *, stream) => istft_with(&stft_matrix, n_fft, hop_length, win_length, window, center, norm, onesided, length);
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
