//! Signal-processing helpers MLX has: the window functions (`bartlett`, `blackman`,
//! `hamming`, `hanning`, float32 as in MLX, values as NumPy's) and 1-D `convolve`, a
//! `conv_general` with the kernel flipped (so its derivative rules are the convolution's).

use crate::array::Array;
use crate::dtype::promote_types;
use crate::error::{Error, Result};
use crate::ops::cast::astype;
use crate::ops::conv::{conv_general, ConvGeneral};
use crate::ops::view::reshape;
use std::f64::consts::PI;

/// A float32 window of `m` points whose value at point `n` is `value(n / (m - 1))`;
/// NumPy's conventions: no points for `m <= 0`, the single value 1 for `m == 1`.
fn window(m: i64, value: impl Fn(f64) -> f64) -> Result<Array> {
    let points: Vec<f32> = match m {
        m if m <= 0 => Vec::new(),
        1 => vec![1.0],
        m => (0..m)
            .map(|n| value(n as f64 / (m - 1) as f64) as f32)
            .collect(),
    };
    Array::from_slice(&points, &[points.len()])
}

/// The Bartlett (triangular) window of `m` points: `1 - |2n / (m - 1) - 1|`.
///
/// ```
/// let w = lazulite::bartlett(5).unwrap();
/// assert_eq!(w.to_vec::<f32>().unwrap(), vec![0.0, 0.5, 1.0, 0.5, 0.0]);
/// ```
pub fn bartlett(m: i64) -> Result<Array> {
    window(m, |x| 1.0 - (2.0 * x - 1.0).abs())
}

/// The Blackman window of `m` points:
/// `0.42 - 0.5 cos(2πn / (m - 1)) + 0.08 cos(4πn / (m - 1))`.
///
/// ```
/// let w = lazulite::blackman(3).unwrap().to_vec::<f32>().unwrap();
/// assert!(w[0].abs() < 1e-7 && (w[1] - 1.0).abs() < 1e-7);
/// ```
pub fn blackman(m: i64) -> Result<Array> {
    window(m, |x| {
        0.42 - 0.5 * (2.0 * PI * x).cos() + 0.08 * (4.0 * PI * x).cos()
    })
}

/// The Hamming window of `m` points: `0.54 - 0.46 cos(2πn / (m - 1))`.
///
/// ```
/// let w = lazulite::hamming(3).unwrap().to_vec::<f32>().unwrap();
/// assert!((w[0] - 0.08).abs() < 1e-7 && (w[1] - 1.0).abs() < 1e-7);
/// ```
pub fn hamming(m: i64) -> Result<Array> {
    window(m, |x| 0.54 - 0.46 * (2.0 * PI * x).cos())
}

/// The Hann window of `m` points: `0.5 - 0.5 cos(2πn / (m - 1))`.
///
/// ```
/// let w = lazulite::hanning(3).unwrap().to_vec::<f32>().unwrap();
/// assert_eq!(w, vec![0.0, 1.0, 0.0]);
/// ```
pub fn hanning(m: i64) -> Result<Array> {
    window(m, |x| 0.5 - 0.5 * (2.0 * PI * x).cos())
}

/// The discrete linear convolution of two 1-D arrays, as NumPy's `convolve`; `mode` is
/// `"full"` (every overlap, `n + m - 1` points), `"same"` (`max(n, m)` points, centred)
/// or `"valid"` (full overlaps only, `max(n, m) - min(n, m) + 1` points). The longer
/// array slides over the shorter one. Floating-point inputs only, as MLX's convolutions.
///
/// ```
/// use lazulite::{convolve, Array};
/// let a = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
/// let v = Array::from_slice(&[0.0f32, 1.0, 0.5], &[3]).unwrap();
/// let full = convolve(&a, &v, "full").unwrap();
/// assert_eq!(full.to_vec::<f32>().unwrap(), vec![0.0, 1.0, 2.5, 4.0, 1.5]);
/// assert_eq!(convolve(&a, &v, "valid").unwrap().to_vec::<f32>().unwrap(), vec![2.5]);
/// ```
pub fn convolve(a: &Array, v: &Array, mode: &str) -> Result<Array> {
    if a.ndim() != 1 || v.ndim() != 1 {
        return Err(Error::value("[convolve] Inputs must be 1D."));
    }
    if a.size() == 0 || v.size() == 0 {
        return Err(Error::value("[convolve] Inputs cannot be empty."));
    }
    let (signal, kernel) = if v.size() > a.size() { (v, a) } else { (a, v) };
    let taps = kernel.size() as i64 - 1;
    let (padding_lo, padding_hi) = match mode {
        "full" => (taps, taps),
        "valid" => (0, 0),
        "same" => (taps - taps / 2, taps / 2),
        _ => return Err(Error::value("[convolve] Invalid mode.")),
    };
    let dtype = promote_types(signal.dtype(), kernel.dtype());
    let signal = reshape(&astype(signal, dtype)?, &[1, -1, 1])?;
    let kernel = reshape(&astype(kernel, dtype)?, &[1, -1, 1])?;
    let out = conv_general(
        &signal,
        &kernel,
        &ConvGeneral {
            padding_lo: vec![padding_lo],
            padding_hi: vec![padding_hi],
            flip: true,
            ..ConvGeneral::default()
        },
    )?;
    reshape(&out, &[-1])
}
