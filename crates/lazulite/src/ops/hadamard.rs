//! The Walsh–Hadamard transform along the last axis, built from other ops (so every
//! transform applies to it): butterfly stages for the power-of-two factor of the length,
//! and a product with one of MLX's 12x12, 20x20 or 28x28 Hadamard matrices for the rest.

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::binary::{add, multiply, subtract};
use crate::ops::cast::astype;
use crate::ops::exported::ExportedAs;
use crate::ops::linalg::matmul;
use crate::ops::shape::stack;
use crate::ops::view::slice_axis;
use crate::primitive::MlxState;

/// The matrices for lengths `m * 2^k`, `m` in (12, 20, 28), as MLX uses them (read off
/// real MLX by `tools/mlx_reference/hadamard.py`): rows of `+` and `-`.
const MATRICES: &str = include_str!("hadamard_matrices.txt");

/// The `m x m` matrix of `MATRICES` for `m` in (12, 20, 28).
fn small_matrix(m: usize) -> Option<Array> {
    let block = MATRICES.split("\n\n").find(|b| b.lines().count() == m)?;
    let values: Vec<f32> = block
        .lines()
        .flat_map(|row| row.chars().map(|c| if c == '+' { 1.0 } else { -1.0 }))
        .collect();
    Array::from_slice(&values, &[m, m]).ok()
}

/// Splits a length into `(m, 2^k)`, `m` in (1, 12, 20, 28), as MLX does.
fn factor_length(n: usize) -> Result<(usize, usize)> {
    let m = if n.is_power_of_two() {
        1
    } else {
        [12, 20, 28]
            .into_iter()
            .find(|&m| n.is_multiple_of(m) && (n / m).is_power_of_two())
            .ok_or_else(|| {
                Error::value(
                    "[hadamard] Only supports n = m*2^k where m in (1, 12, 20, 28).".to_string(),
                )
            })?
    };
    if n / m > 1 << 26 {
        return Err(Error::value(
            "[hadamard] Only supports n = m*2^k where k <= 26",
        ));
    }
    Ok((m, n / m))
}

/// Applies the Sylvester Hadamard matrix of size `2^k` (the last axis) by butterflies:
/// at each stage, pairs `h` apart become their sum and difference.
fn butterflies(x: &Array) -> Result<Array> {
    let shape = x.shape().to_vec();
    let n = *shape.last().expect("at least one axis");
    let lead = &shape[..shape.len() - 1];
    let mut x = x.clone();
    let mut h = 1;
    while h < n {
        let mut split: Vec<usize> = lead.to_vec();
        split.extend([n / (2 * h), 2, h]);
        let pairs = x.reshape(&split)?;
        let axis = split.len() - 2;
        let half = |i: i64| slice_axis(&pairs, axis, i, i + 1, 1)?.squeeze(axis as i32);
        let (first, second) = (half(0)?, half(1)?);
        let merged = stack(
            &[add(&first, &second)?, subtract(&first, &second)?],
            axis as i32,
        )?;
        x = merged.reshape(&shape)?;
        h *= 2;
    }
    Ok(x)
}

/// The Walsh–Hadamard transform of `a` along its last axis, times `scale` (default
/// `1/sqrt(n)`, which makes it orthonormal). The length `n` must be `m * 2^k` with `m` in
/// (1, 12, 20, 28), as in MLX, whose matrices are used for `m > 1`. Integer, boolean and
/// complex inputs give float32 (a complex input's real part), as in MLX.
///
/// ```
/// use lazulite::{hadamard_transform, Array};
/// let x = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[4])?;
/// let y = hadamard_transform(&x, Some(1.0))?;
/// assert_eq!(y.to_vec::<f32>()?, vec![10.0, -2.0, -4.0, 0.0]);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn hadamard_transform(a: &Array, scale: Option<f32>) -> Result<Array> {
    if a.size() == 0 {
        return Err(Error::value(
            "[hadamard_transform] Does not support empty arrays.",
        ));
    }
    let n = a.shape().last().copied().unwrap_or(1);
    let scale = scale.unwrap_or(1.0 / (n as f32).sqrt());
    let dtype = if a.dtype().is_floating() {
        a.dtype()
    } else {
        DType::Float32
    };
    let x = astype(a, dtype)?;
    if n == 1 {
        return scaled_by(x, scale);
    }
    // MLX's `Hadamard` of the input in its float dtype: the scale.
    let state = || Ok(vec![MlxState::Float(scale)]);
    let composed = move |x: &[Array]| Ok(vec![transform(&x[0], scale)?]);
    let y = ExportedAs::apply("hadamard_transform", "Hadamard", state, vec![x], composed)?;
    Ok(y.into_iter().next().expect("one output"))
}

/// `y` times `scale` (in `y`'s dtype) unless the scale is 1.
fn scaled_by(y: Array, scale: f32) -> Result<Array> {
    if scale == 1.0 {
        Ok(y)
    } else {
        let dtype = y.dtype();
        multiply(&y, &astype(&Array::scalar(scale), dtype)?)
    }
}

/// The transform of `x` (floating, last axis longer than 1 and of a supported length)
/// times `scale`.
fn transform(x: &Array, scale: f32) -> Result<Array> {
    let n = x.shape().last().copied().unwrap_or(1);
    let dtype = x.dtype();
    let scaled = |y: Array| scaled_by(y, scale);
    let (m, pow2) = factor_length(n)?;
    if m == 1 {
        return scaled(butterflies(x)?);
    }
    // x as (..., m, 2^k): Hadamard(m) ⊗ Hadamard(2^k) is the butterflies along the last
    // axis and the small matrix along the one before.
    let lead = &x.shape()[..x.ndim() - 1];
    let mut split = lead.to_vec();
    split.extend([m, pow2]);
    let z = butterflies(&x.reshape(&split)?)?;
    let small = small_matrix(m).expect("the matrices of 12, 20 and 28 are present");
    let y = matmul(&astype(&small, dtype)?, &z)?;
    scaled(y.reshape(x.shape())?)
}
