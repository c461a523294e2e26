//! Vector and matrix norms and the cross product, composed from existing ops (their
//! derivatives come from those ops' rules; the spectral norms go through the SVD).

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::binary::{multiply, not_equal, power, subtract};
use crate::ops::cast::astype;
use crate::ops::linalg::decompositions::svd;
use crate::ops::reduce::{max, min, sum};
use crate::ops::shape::{concatenate, expand_dims, moveaxis, squeeze};
use crate::ops::unary::{abs, sqrt};
use crate::ops::view::{broadcast_to, slice, transpose};
use crate::shape::{axis_in_range, broadcast_shapes};

/// The `ord` of [`norm`]: a number (`p` of a vector norm, or `±1`, `±2`, `±inf` of a
/// matrix norm) or a name (`"fro"`, `"nuc"`: matrix norms).
///
/// ```
/// use lazulite::linalg::NormOrd;
/// let p: NormOrd = 3.0.into();
/// let nuclear: NormOrd = "nuc".into();
/// # let _ = (p, nuclear);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum NormOrd {
    /// A numeric order (`2.0`, `f64::INFINITY`, `-1.0`, ...).
    Number(f64),
    /// A named matrix norm: `"fro"` or `"nuc"`.
    Name(String),
}

impl From<f64> for NormOrd {
    fn from(p: f64) -> NormOrd {
        NormOrd::Number(p)
    }
}

impl From<i32> for NormOrd {
    fn from(p: i32) -> NormOrd {
        NormOrd::Number(p as f64)
    }
}

impl From<&str> for NormOrd {
    fn from(name: &str) -> NormOrd {
        NormOrd::Name(name.to_string())
    }
}

/// A number as MLX prints `ord` in messages: `3`, `0.5`, `inf`.
fn number_text(p: f64) -> String {
    if p.fract() == 0.0 && p.is_finite() {
        format!("{}", p as i64)
    } else {
        format!("{p}")
    }
}

/// `|a|` in a floating dtype: integers and bool become float32, complex its magnitude.
fn magnitude(a: &Array) -> Result<Array> {
    let a = if a.dtype().is_inexact() {
        a.clone()
    } else {
        astype(a, DType::Float32)?
    };
    abs(&a)
}

/// The norm of `a` over `axis` (MLX's `linalg.norm`): with no `ord` and no `axis`, the
/// 2-norm of all elements; one axis gives a vector norm (`ord` a number `p`: `inf`,
/// `-inf`, `0` (count of nonzeros) or `(Σ|x|^p)^(1/p)`), two axes a matrix norm (`"fro"`,
/// `"nuc"`, `±1`, `±2`, `±inf`). With `ord` and no `axis`, `a` must be 1-D or 2-D.
/// Integer and bool input gives float32, complex input its real dtype.
///
/// ```
/// use lazulite::{linalg, Array};
/// let v = Array::from_slice(&[3.0f32, -4.0], &[2])?;
/// assert_eq!(linalg::norm(&v, None, None, false)?.item::<f32>()?, 5.0);
/// assert_eq!(linalg::norm(&v, Some(f64::INFINITY.into()), None, false)?.item::<f32>()?, 4.0);
/// let m = Array::from_slice(&[1.0f32, -2.0, 3.0, 4.0], &[2, 2])?;
/// assert_eq!(linalg::norm(&m, Some(1.into()), None, false)?.item::<f32>()?, 6.0);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn norm(
    a: &Array,
    ord: Option<NormOrd>,
    axis: Option<&[i32]>,
    keepdims: bool,
) -> Result<Array> {
    let axes: Vec<i32> = match axis {
        Some(ax) => ax.to_vec(),
        None => {
            if ord.is_none() {
                let all: Vec<i32> = (0..a.ndim() as i32).collect();
                return frobenius(a, &all, keepdims);
            }
            if a.ndim() == 0 || a.ndim() > 2 {
                return Err(Error::value(
                    "[linalg::norm] Received too many axes for norm.",
                ));
            }
            (0..a.ndim() as i32).collect()
        }
    };
    if axes.len() > 2 || axes.is_empty() {
        return Err(Error::value(
            "[linalg::norm] Received too many axes for norm.",
        ));
    }
    let axes = resolve_axes(&axes, a.ndim())?;
    match (axes.len(), ord) {
        (_, None) => frobenius(a, &axes, keepdims),
        (1, Some(NormOrd::Number(p))) => vector_norm(a, p, axes[0], keepdims),
        (1, Some(NormOrd::Name(name))) => Err(Error::value(format!(
            "[linalg::norm] Norm '{name}' only supported for matrices, but received 1 axis/axes."
        ))),
        (_, Some(NormOrd::Name(name))) => match name.as_str() {
            "fro" => frobenius(a, &axes, keepdims),
            "nuc" => spectral(a, &axes, keepdims, Spectral::Nuclear),
            _ => Err(Error::value(format!(
                "[linalg::norm] Invalid ord value '{name}' for matrix norm."
            ))),
        },
        (_, Some(NormOrd::Number(p))) => matrix_norm(a, p, &axes, keepdims),
    }
}

/// `axes` from zero, as MLX checks them for reductions (IndexError out of range).
fn resolve_axes(axes: &[i32], ndim: usize) -> Result<Vec<i32>> {
    let mut out = Vec::with_capacity(axes.len());
    for &axis in axes {
        let a = axis_in_range(axis, ndim).ok_or_else(|| {
            Error::axis(format!(
                "Invalid axis {axis} for array with {ndim} dimensions."
            ))
        })? as i32;
        if out.contains(&a) {
            return Err(Error::value("Duplicate axes detected in reduction."));
        }
        out.push(a);
    }
    Ok(out)
}

fn frobenius(a: &Array, axes: &[i32], keepdims: bool) -> Result<Array> {
    let x = magnitude(a)?;
    sqrt(&sum(&multiply(&x, &x)?, axes.to_vec(), keepdims)?)
}

fn vector_norm(a: &Array, p: f64, axis: i32, keepdims: bool) -> Result<Array> {
    let x = magnitude(a)?;
    if p == f64::INFINITY {
        max(&x, axis, keepdims)
    } else if p == f64::NEG_INFINITY {
        min(&x, axis, keepdims)
    } else if p == 0.0 {
        let nonzero = not_equal(&x, 0.0)?;
        sum(&astype(&nonzero, x.dtype())?, axis, keepdims)
    } else if p == 1.0 {
        sum(&x, axis, keepdims)
    } else if p == 2.0 {
        sqrt(&sum(&multiply(&x, &x)?, axis, keepdims)?)
    } else {
        power(&sum(&power(&x, p)?, axis, keepdims)?, 1.0 / p)
    }
}

fn matrix_norm(a: &Array, p: f64, axes: &[i32], keepdims: bool) -> Result<Array> {
    let (rows, cols) = (axes[0], axes[1]);
    let absolute_sums = |summed: i32, other: i32, largest: bool| -> Result<Array> {
        let x = magnitude(a)?;
        let sums = sum(&x, summed, true)?;
        let r = if largest {
            max(&sums, other, true)?
        } else {
            min(&sums, other, true)?
        };
        if keepdims {
            Ok(r)
        } else {
            squeeze(&r, vec![rows, cols])
        }
    };
    if p == 1.0 || p == -1.0 {
        absolute_sums(rows, cols, p > 0.0)
    } else if p.is_infinite() {
        absolute_sums(cols, rows, p > 0.0)
    } else if p == 2.0 {
        spectral(a, axes, keepdims, Spectral::Largest)
    } else if p == -2.0 {
        spectral(a, axes, keepdims, Spectral::Smallest)
    } else {
        Err(Error::value(format!(
            "[linalg::norm] Invalid ord {} for matrix norm.",
            number_text(p)
        )))
    }
}

enum Spectral {
    Largest,
    Smallest,
    Nuclear,
}

/// A norm from the singular values of the matrices in `axes` of `a`.
fn spectral(a: &Array, axes: &[i32], keepdims: bool, which: Spectral) -> Result<Array> {
    // The other axes first, then the matrix axes in the order given.
    let perm: Vec<i32> = (0..a.ndim() as i32)
        .filter(|d| !axes.contains(d))
        .chain(axes.iter().copied())
        .collect();
    let x = transpose(a, &perm)?;
    let s = svd(&x, false)?.remove(0);
    let r = match which {
        Spectral::Largest => max(&s, -1, false)?,
        Spectral::Smallest => min(&s, -1, false)?,
        Spectral::Nuclear => sum(&s, -1, false)?,
    };
    if keepdims {
        let mut sorted = axes.to_vec();
        sorted.sort_unstable();
        expand_dims(&r, sorted)
    } else {
        Ok(r)
    }
}

/// The entries `from..from + 1` of the last axis of `a`, a view.
fn component(a: &Array, from: usize) -> Result<Array> {
    let n = a.ndim();
    let mut start = vec![0i64; n];
    let mut stop: Vec<i64> = a.shape().iter().map(|&d| d as i64).collect();
    start[n - 1] = from as i64;
    stop[n - 1] = from as i64 + 1;
    slice(a, &start, &stop, &vec![1; n])
}

/// The three components of the vectors along the last axis of `a` (2 or 3 long; a
/// missing third is zero).
fn components(a: &Array) -> Result<[Array; 3]> {
    let x = component(a, 0)?;
    let y = component(a, 1)?;
    let z = if a.shape()[a.ndim() - 1] == 3 {
        component(a, 2)?
    } else {
        subtract(&x, &x)?
    };
    Ok([x, y, z])
}

/// The cross product of the vectors along `axis` of `a` and `b` (length 2 or 3; a 2-D
/// vector has a zero third component), broadcasting the other axes; the result has
/// length 3 along `axis`. Any numeric dtype.
///
/// ```
/// use lazulite::{linalg, Array};
/// let a = Array::from_slice(&[1i32, 2, 3], &[3])?;
/// let b = Array::from_slice(&[4i32, 5, 6], &[3])?;
/// assert_eq!(linalg::cross(&a, &b, -1)?.to_vec::<i32>()?, vec![-3, 6, -3]);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn cross(a: &Array, b: &Array, axis: i32) -> Result<Array> {
    // Leading axes broadcast: give both inputs the larger rank first.
    let nd = a.ndim().max(b.ndim());
    let lifted = |x: &Array| -> Result<Array> {
        let missing: Vec<i32> = (0..(nd - x.ndim()) as i32).collect();
        if missing.is_empty() {
            Ok(x.clone())
        } else {
            expand_dims(x, missing)
        }
    };
    let (a, b) = (&lifted(a)?, &lifted(b)?);
    let ax = resolve_axes(&[axis], nd)?[0];
    let (am, bm) = (moveaxis(a, ax, -1)?, moveaxis(b, ax, -1)?);
    let (la, lb) = (am.shape()[am.ndim() - 1], bm.shape()[bm.ndim() - 1]);
    if !matches!(la, 2 | 3) || !matches!(lb, 2 | 3) {
        return Err(Error::value(
            "[linalg::cross] The specified axis must have size 2 or 3.",
        ));
    }
    let lead = broadcast_shapes(&am.shape()[..am.ndim() - 1], &bm.shape()[..bm.ndim() - 1])?;
    let with = |n: usize| -> Vec<usize> { lead.iter().copied().chain([n]).collect() };
    let (am, bm) = (broadcast_to(&am, &with(la))?, broadcast_to(&bm, &with(lb))?);
    let [ax_, ay, az] = components(&am)?;
    let [bx, by, bz] = components(&bm)?;
    let term = |p: &Array, q: &Array, r: &Array, s: &Array| -> Result<Array> {
        subtract(&multiply(p, q)?, &multiply(r, s)?)
    };
    let parts = [
        term(&ay, &bz, &az, &by)?,
        term(&az, &bx, &ax_, &bz)?,
        term(&ax_, &by, &ay, &bx)?,
    ];
    let out = concatenate(&parts, -1)?;
    moveaxis(&out, -1, ax)
}
