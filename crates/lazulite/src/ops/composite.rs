//! Small ops MLX defines by composing others: `logical_xor`, `matrix_transpose`, `minmax`.

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::binary::not_equal;
use crate::ops::cast::astype;
use crate::ops::operand::{to_arrays, Operand};
use crate::ops::reduce::{max, min};
use crate::ops::shape::swapaxes;
use crate::shape::Axes;

/// Elementwise boolean exclusive or (nonzero is true); the result is bool.
///
/// ```
/// use lazulite::{logical_xor, Array};
/// let a = Array::from_slice(&[1i32, 0, 2, 0], &[4]).unwrap();
/// let b = Array::from_slice(&[true, true, false, false], &[4]).unwrap();
/// let x = logical_xor(&a, &b).unwrap();
/// assert_eq!(x.to_vec::<bool>().unwrap(), vec![false, true, true, false]);
/// ```
pub fn logical_xor(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Array> {
    // A Python scalar is only true or false here: as a bool it fits any array's dtype
    // (a negative int next to an unsigned array included).
    let truth = |o: Operand| match o {
        Operand::Scalar(s) => Operand::Scalar(crate::element::Scalar::Bool(match s {
            crate::element::Scalar::Bool(v) => v,
            crate::element::Scalar::Int(v) => v != 0,
            crate::element::Scalar::Float(v) => v != 0.0,
            crate::element::Scalar::Complex(re, im) => re != 0.0 || im != 0.0,
        })),
        array => array,
    };
    let (arrays, _) = to_arrays("logical_xor", &[truth(a.into()), truth(b.into())])?;
    not_equal(
        &astype(&arrays[0], DType::Bool)?,
        &astype(&arrays[1], DType::Bool)?,
    )
}

/// Swaps the last two axes (a view), as NumPy's `matrix_transpose`.
///
/// ```
/// let a = lazulite::zeros(&[2, 3, 4], lazulite::DType::Float32).unwrap();
/// assert_eq!(lazulite::matrix_transpose(&a).unwrap().shape(), &[2, 4, 3]);
/// ```
pub fn matrix_transpose(a: &Array) -> Result<Array> {
    if a.ndim() < 2 {
        return Err(Error::value(
            "[matrix_transpose] Input array must have at least 2 dimensions.",
        ));
    }
    swapaxes(a, -1, -2)
}

/// The minimum and the maximum over `axes`, as [`min`] and [`max`] give them.
///
/// ```
/// let a = lazulite::Array::from_slice(&[3.0f32, 1.0, 2.0, 5.0], &[2, 2]).unwrap();
/// let (lo, hi) = lazulite::minmax(&a, 0, false).unwrap();
/// assert_eq!(lo.to_vec::<f32>().unwrap(), vec![2.0, 1.0]);
/// assert_eq!(hi.to_vec::<f32>().unwrap(), vec![3.0, 5.0]);
/// ```
pub fn minmax(a: &Array, axes: impl Into<Axes>, keepdims: bool) -> Result<(Array, Array)> {
    let axes = axes.into();
    Ok((min(a, axes.clone(), keepdims)?, max(a, axes, keepdims)?))
}
