//! The short-time Fourier transform and its inverse, as MLX's `fft.stft` and `fft.istft`.
//!
//! Both are compositions of existing ops, so gradients, vmap and compilation come from
//! those ops' rules: `stft` pads the signal, takes its overlapping frames as a strided
//! view, weights them by the window and transforms each one; `istft` inverts each frame,
//! weights it by the window again, sums the frames where they overlap and divides by the
//! sum of the squared window over the same overlaps.

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::binary::{add, divide, maximum, multiply};
use crate::ops::creation::ones;
use crate::ops::fft::{fft, ifft, irfft, rfft, FftNorm};
use crate::ops::shape::{as_strided, pad, swapaxes};
use crate::ops::unary::{real, square};
use crate::ops::view::{broadcast_to, reshape, slice_axis};

/// Settings of [`stft`] other than the transform length. The default is MLX's: a hop
/// of `n_fft / 4`, a rectangular window of `n_fft` points, frames centred on their
/// sample by reflect padding, the backward norm, and a one-sided spectrum for real input.
///
/// ```
/// use lazulite::fft::{stft, StftOptions};
/// let x = lazulite::zeros(&[16], lazulite::DType::Float32)?;
/// // The default: a hop of 8 / 4 = 2 over the signal padded by 4 at each end.
/// assert_eq!(stft(&x, 8, &StftOptions::default())?.shape(), [5, 9]);
/// let options = StftOptions { hop_length: Some(4), center: false, ..Default::default() };
/// assert_eq!(stft(&x, 8, &options)?.shape(), [5, 3]);
/// # Ok::<(), lazulite::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct StftOptions {
    /// Samples between the starts of consecutive frames (default `n_fft / 4`).
    pub hop_length: Option<i64>,
    /// Points of the default rectangular window (default `n_fft`); unused when `window`
    /// is given.
    pub win_length: Option<i64>,
    /// A 1-D window of at most `n_fft` points, zero-padded on both sides to `n_fft`
    /// (default: a rectangular window of `win_length` points).
    pub window: Option<Array>,
    /// Pad `n_fft / 2` samples at both ends so that frame `t` is centred on sample
    /// `t * hop_length`.
    pub center: bool,
    /// How the centring pad is filled: `"reflect"`, `"constant"`, `"edge"` or
    /// `"symmetric"`, as [`pad`](crate::pad).
    pub pad_mode: String,
    /// The scaling of each frame's transform.
    pub norm: FftNorm,
    /// Keep only the `n_fft / 2 + 1` non-negative frequencies (default: true for real
    /// input, false for complex64).
    pub onesided: Option<bool>,
}

impl Default for StftOptions {
    fn default() -> StftOptions {
        StftOptions {
            hop_length: None,
            win_length: None,
            window: None,
            center: true,
            pad_mode: "reflect".to_string(),
            norm: FftNorm::Backward,
            onesided: None,
        }
    }
}

/// Settings of [`istft`]. The default is MLX's: the transform length inferred from the
/// number of frequencies of a one-sided spectrum, a hop of `n_fft / 4`, a rectangular
/// window, centred frames, the backward norm, and the length the frames cover.
///
/// ```
/// use lazulite::fft::{istft, stft, IstftOptions, StftOptions};
/// let samples: Vec<f32> = (1..=10).map(|i| i as f32).collect();
/// let x = lazulite::Array::from_slice(&samples, &[10])?;
/// let spec = stft(&x, 4, &StftOptions::default())?;
/// let options = IstftOptions { length: Some(8), ..Default::default() };
/// let y = istft(&spec, &options)?.to_vec::<f32>()?;
/// assert_eq!(y.len(), 8); // the first 8 samples
/// assert!(y.iter().zip(&samples).all(|(a, b)| (a - b).abs() < 1e-4));
/// # Ok::<(), lazulite::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct IstftOptions {
    /// The transform length (default `2 (n_freq - 1)` one-sided, `n_freq` otherwise;
    /// give it for an odd length).
    pub n_fft: Option<i64>,
    /// Samples between the starts of consecutive frames (default `n_fft / 4`).
    pub hop_length: Option<i64>,
    /// Points of the default rectangular window (default `n_fft`); unused when `window`
    /// is given.
    pub win_length: Option<i64>,
    /// A 1-D window of at most `n_fft` points, zero-padded on both sides to `n_fft`
    /// (default: a rectangular window of `win_length` points).
    pub window: Option<Array>,
    /// The frames were centred: drop `n_fft / 2` samples at both ends.
    pub center: bool,
    /// The scaling the forward transform used.
    pub norm: FftNorm,
    /// The spectrum holds only the non-negative frequencies (default true).
    pub onesided: Option<bool>,
    /// Truncate or zero-pad the signal to this many samples (a negative length gives
    /// none).
    pub length: Option<i64>,
}

impl Default for IstftOptions {
    fn default() -> IstftOptions {
        IstftOptions {
            n_fft: None,
            hop_length: None,
            win_length: None,
            window: None,
            center: true,
            norm: FftNorm::Backward,
            onesided: None,
            length: None,
        }
    }
}

fn value_error(op: &str, what: &str) -> Error {
    Error::value(format!("[{op}] {what}"))
}

/// The hop, checked positive.
fn hop(op: &str, hop_length: Option<i64>, n_fft: i64) -> Result<i64> {
    let hop = hop_length.unwrap_or(n_fft / 4);
    if hop <= 0 {
        return Err(value_error(op, "hop_length must be positive."));
    }
    Ok(hop)
}

/// The window of a frame: `window` (default `win_length` ones, float32), checked 1-D and
/// no longer than `n_fft`, centred in `n_fft` points by zeros on both sides.
fn frame_window(op: &str, window: Option<&Array>, win_length: i64, n_fft: i64) -> Result<Array> {
    let window = match window {
        Some(w) => w.clone(),
        None if win_length < 0 => {
            // MLX builds the default window with `full`, which reports this.
            return Err(Error::value("[full] Negative dimensions not allowed."));
        }
        None => ones(&[win_length as usize], DType::Float32)?,
    };
    if window.ndim() != 1 {
        return Err(value_error(op, "window must be a one-dimensional array."));
    }
    let points = window.shape()[0] as i64;
    if points > n_fft {
        return Err(value_error(op, "window length must not exceed n_fft."));
    }
    if points == n_fft {
        return Ok(window);
    }
    let before = (n_fft - points) / 2;
    pad(&window, &[(before, n_fft - points - before)], "constant", 0)
}

/// The short-time Fourier transform of the last axis of `x`: frames of `n_fft` samples
/// every `hop_length` samples, each multiplied by the window and transformed. The
/// result is complex64 with shape `(..., n_freq, n_frames)`, where `n_freq` is
/// `n_fft / 2 + 1` one-sided and `n_fft` otherwise, and `n_frames` is
/// `1 + (len - n_fft) / hop_length` for the (padded, when centred) length `len`.
///
/// ```
/// use lazulite::fft::{stft, StftOptions};
/// use lazulite::{Array, Complex};
/// let x = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[6]).unwrap();
/// let options = StftOptions { hop_length: Some(2), center: false, ..Default::default() };
/// let s = stft(&x, 4, &options).unwrap();
/// assert_eq!(s.shape(), [3, 2]); // 3 frequencies, frames [1, 2, 3, 4] and [3, 4, 5, 6]
/// let v = s.to_vec::<Complex>().unwrap();
/// assert_eq!((v[0], v[1]), (Complex::new(10.0, 0.0), Complex::new(18.0, 0.0)));
/// assert!(stft(&x, 0, &StftOptions::default()).is_err());
/// ```
pub fn stft(x: &Array, n_fft: i64, options: &StftOptions) -> Result<Array> {
    const OP: &str = "stft";
    if n_fft <= 0 {
        return Err(value_error(OP, "n_fft must be positive."));
    }
    if x.ndim() < 1 {
        return Err(value_error(OP, "Input must have at least one dimension."));
    }
    let hop = hop(OP, options.hop_length, n_fft)?;
    let onesided = options.onesided.unwrap_or(x.dtype() != DType::Complex64);
    let window = frame_window(
        OP,
        options.window.as_ref(),
        options.win_length.unwrap_or(n_fft),
        n_fft,
    )?;

    let (samples, lead) = x.shape().split_last().expect("at least one axis");
    let mut signal = reshape(x, &[-1, *samples as i64])?;
    if options.center {
        let half = n_fft / 2;
        signal = pad(&signal, &[(0, 0), (half, half)], &options.pad_mode, 0)?;
    }
    let (rows, len) = (signal.shape()[0], signal.shape()[1] as i64);
    if len < n_fft {
        return Err(value_error(OP, "Input is too short for the given n_fft."));
    }
    let n_frames = 1 + (len - n_fft) / hop;
    // Frame `t` of row `r` starts at element `r * len + t * hop` of the padded signal.
    let frames = as_strided(
        &signal,
        Some(&[rows, n_frames as usize, n_fft as usize]),
        Some(&[len, hop, 1]),
        0,
    )?;
    let frames = multiply(&frames, &window)?;
    let spectrum = if onesided {
        rfft(&frames, Some(n_fft), -1, options.norm)?
    } else {
        fft(&frames, Some(n_fft), -1, options.norm)?
    };
    let spectrum = swapaxes(&spectrum, -1, -2)?;
    let shape: Vec<i64> = lead
        .iter()
        .chain(&spectrum.shape()[1..])
        .map(|&d| d as i64)
        .collect();
    reshape(&spectrum, &shape)
}

/// Sums `frames` (shape `(rows, n_frames, hop * blocks)`), frame `t` starting at sample
/// `t * hop`: shape `(rows, (n_frames + blocks - 1) * hop)`. Block `k` of every frame
/// lands in output block `t + k`, so the sum takes `blocks` shifted copies, however many
/// frames there are.
fn overlap_add(frames: &Array, hop: usize, blocks: usize) -> Result<Array> {
    let (rows, n_frames) = (frames.shape()[0], frames.shape()[1]);
    let out_len = (n_frames + blocks - 1) * hop;
    let by_block = reshape(
        frames,
        &[rows as i64, n_frames as i64, blocks as i64, hop as i64],
    )?;
    let mut sum: Option<Array> = None;
    for k in 0..blocks {
        let block = slice_axis(&by_block, 2, k as i64, k as i64 + 1, 1)?;
        let block = reshape(&block, &[rows as i64, n_frames as i64, hop as i64])?;
        let shifted = pad(
            &block,
            &[(0, 0), (k as i64, (blocks - 1 - k) as i64), (0, 0)],
            "constant",
            0,
        )?;
        let shifted = reshape(&shifted, &[rows as i64, out_len as i64])?;
        sum = Some(match sum {
            Some(s) => add(&s, &shifted)?,
            None => shifted,
        });
    }
    Ok(sum.expect("at least one block"))
}

/// The inverse of [`stft`]: each frame's inverse transform, multiplied by the window,
/// summed where frames overlap and divided by the sum of the squared window there (at
/// least `1e-8`). `stft_matrix` has shape `(..., n_freq, n_frames)`; the result has
/// shape `(..., len)`, float32 (float64 with a float64 window), where `len` is `length`
/// when given and otherwise `n_fft + (n_frames - 1) * hop_length`, less `n_fft / 2` at
/// each end when centred.
///
/// ```
/// use lazulite::fft::{istft, stft, IstftOptions, StftOptions};
/// use lazulite::{hanning, Array};
/// let x: Vec<f32> = (0..32).map(|i| (i as f32 * 0.3).sin()).collect();
/// let signal = Array::from_slice(&x, &[32]).unwrap();
/// let window = hanning(8).unwrap();
/// let spec = stft(&signal, 8, &StftOptions { window: Some(window.clone()), ..Default::default() }).unwrap();
/// let back = istft(&spec, &IstftOptions { window: Some(window), ..Default::default() }).unwrap();
/// let y = back.to_vec::<f32>().unwrap();
/// assert_eq!(y.len(), 32);
/// assert!(x.iter().zip(&y).all(|(a, b)| (a - b).abs() < 1e-5));
/// ```
pub fn istft(stft_matrix: &Array, options: &IstftOptions) -> Result<Array> {
    const OP: &str = "istft";
    let ndim = stft_matrix.ndim();
    if ndim < 2 {
        return Err(value_error(
            OP,
            "Input must have at least two dimensions (freq, frames).",
        ));
    }
    let onesided = options.onesided.unwrap_or(true);
    let n_freq = stft_matrix.shape()[ndim - 2] as i64;
    let n_frames = stft_matrix.shape()[ndim - 1] as i64;
    let n_fft = options
        .n_fft
        .unwrap_or(if onesided { (n_freq - 1) * 2 } else { n_freq });
    if n_fft <= 0 {
        return Err(value_error(OP, "n_fft must be positive."));
    }
    let hop = hop(OP, options.hop_length, n_fft)?;
    let window = frame_window(
        OP,
        options.window.as_ref(),
        options.win_length.unwrap_or(n_fft),
        n_fft,
    )?;

    let lead = &stft_matrix.shape()[..ndim - 2];
    let spectra = reshape(stft_matrix, &[-1, n_freq, n_frames])?;
    let spectra = swapaxes(&spectra, -1, -2)?;
    let frames = if onesided {
        irfft(&spectra, Some(n_fft), -1, options.norm)?
    } else {
        real(&ifft(&spectra, Some(n_fft), -1, options.norm)?)?
    };
    let frames = multiply(&frames, &window)?;

    // Frames are cut into `blocks` blocks of `hop` samples, the last one zero-padded.
    let blocks = (n_fft - 1) / hop + 1;
    let padded = blocks
        .checked_mul(hop)
        .filter(|&p| p.checked_add(n_frames.saturating_mul(hop)).is_some())
        .ok_or_else(|| value_error(OP, "The output has too many elements."))?;
    let frames = pad(
        &frames,
        &[(0, 0), (0, 0), (0, padded - n_fft)],
        "constant",
        0,
    )?;
    let signal = overlap_add(&frames, hop as usize, blocks as usize)?;

    let window_sq = pad(&square(&window)?, &[(0, padded - n_fft)], "constant", 0)?;
    let window_sq = broadcast_to(
        &reshape(&window_sq, &[1, 1, padded])?,
        &[1, n_frames as usize, padded as usize],
    )?;
    let envelope = overlap_add(&window_sq, hop as usize, blocks as usize)?;
    let envelope = maximum(&envelope, 1e-8)?;
    let signal = divide(&signal, &envelope)?;

    let full = n_fft + (n_frames - 1) * hop;
    let start = if options.center { n_fft / 2 } else { 0 };
    let signal = match options.length {
        Some(length) => {
            let stop = full.min(start.saturating_add(length)).max(start);
            let kept = slice_axis(&signal, 1, start, stop, 1)?;
            let short = length - (stop - start);
            if short > 0 {
                pad(&kept, &[(0, 0), (0, short)], "constant", 0)?
            } else {
                kept
            }
        }
        None => {
            let stop = if options.center {
                full - n_fft / 2
            } else {
                full
            };
            slice_axis(&signal, 1, start, stop, 1)?
        }
    };
    let shape: Vec<i64> = lead
        .iter()
        .chain(&signal.shape()[1..])
        .map(|&d| d as i64)
        .collect();
    reshape(&signal, &shape)
}
