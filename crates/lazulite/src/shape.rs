//! Shape arithmetic shared by the ops: sizes, broadcasting and axis normalisation.

use crate::error::{Error, Result};

/// A shape as MLX prints it in error messages: `(2,3)`, `()` for a scalar.
///
/// ```
/// assert_eq!(lazulite::shape::shape_text(&[2, 3]), "(2,3)");
/// assert_eq!(lazulite::shape::shape_text(&[-1i64, 4]), "(-1,4)");
/// ```
pub fn shape_text<T: std::fmt::Display>(shape: &[T]) -> String {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    format!("({})", dims.join(","))
}

/// Number of elements of `shape`, or an error if it overflows.
///
/// ```
/// use lazulite::shape::checked_size;
/// assert_eq!(checked_size(&[2, 3, 4])?, 24);
/// assert_eq!(checked_size(&[])?, 1); // a scalar
/// assert!(checked_size(&[usize::MAX, 2]).is_err());
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn checked_size(shape: &[usize]) -> Result<usize> {
    shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .filter(|&n| n.checked_mul(16).is_some())
        .ok_or_else(|| Error::value(format!("Shape {shape:?} has too many elements.")))
}

/// Whether two shapes are equal. Empty ones are settled by their lengths: comparing the
/// zero bytes at an empty `Vec`'s placeholder address makes glibc's memcmp issue a masked
/// load of an unmapped page, which costs a microcode assist (about a tenth of recording a
/// scalar op).
pub(crate) fn same_shape(a: &[usize], b: &[usize]) -> bool {
    if a.is_empty() || b.is_empty() {
        return a.len() == b.len();
    }
    a == b
}

/// The shape NumPy broadcasting gives `a` and `b`.
///
/// ```
/// assert_eq!(lazulite::broadcast_shapes(&[3, 1], &[4]).unwrap(), vec![3, 4]);
/// assert!(lazulite::broadcast_shapes(&[3], &[4]).is_err());
/// ```
pub fn broadcast_shapes(a: &[usize], b: &[usize]) -> Result<Vec<usize>> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for i in 0..n {
        let da = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            1
        };
        let db = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            1
        };
        out[i] = if da == db || db == 1 {
            da
        } else if da == 1 {
            db
        } else {
            return Err(Error::value(format!(
                "[broadcast_shapes] Shapes {} and {} cannot be broadcast.",
                shape_text(a),
                shape_text(b)
            )));
        };
    }
    Ok(out)
}

/// `axis` (negative counts from the end) as an index below `ndim`, or `None` when it is
/// out of range. Operations report `None` as an [`ErrorKind::Axis`](crate::ErrorKind)
/// error in their own words.
///
/// ```
/// use lazulite::shape::axis_in_range;
/// assert_eq!(axis_in_range(-1, 3), Some(2));
/// assert_eq!(axis_in_range(3, 3), None);
/// ```
pub fn axis_in_range(axis: i32, ndim: usize) -> Option<usize> {
    let n = ndim as i64;
    let a = axis as i64;
    if a < -n || a >= n {
        return None;
    }
    Some(if a < 0 { (a + n) as usize } else { a as usize })
}

/// Turns a possibly negative `axis` into an index below `ndim`; an axis error otherwise.
///
/// ```
/// use lazulite::{shape::normalize_axis, ErrorKind};
/// assert_eq!(normalize_axis("sum", -2, 3)?, 1);
/// assert_eq!(normalize_axis("sum", 5, 3).unwrap_err().kind(), ErrorKind::Axis);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn normalize_axis(op: &str, axis: i32, ndim: usize) -> Result<usize> {
    axis_in_range(axis, ndim).ok_or_else(|| {
        Error::axis(format!(
            "[{op}] Axis {axis} is out of bounds for array with {ndim} dimensions."
        ))
    })
}

/// Normalises `axes`, rejecting duplicates; the result is sorted.
///
/// ```
/// use lazulite::shape::normalize_axes;
/// assert_eq!(normalize_axes("sum", &[-1, 0], 3)?, vec![0, 2]);
/// assert!(normalize_axes("sum", &[1, -2], 3).is_err()); // the same axis twice
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn normalize_axes(op: &str, axes: &[i32], ndim: usize) -> Result<Vec<usize>> {
    let mut out = axes
        .iter()
        .map(|&a| normalize_axis(op, a, ndim))
        .collect::<Result<Vec<_>>>()?;
    out.sort_unstable();
    if out.windows(2).any(|w| w[0] == w[1]) {
        return Err(Error::value(format!(
            "[{op}] Received duplicate axes {axes:?}."
        )));
    }
    Ok(out)
}

/// Which axes to work over: all of them, or a list (negative values count from the end).
///
/// ```
/// use lazulite::Axes;
/// let all = Axes::All;
/// let one: Axes = 1.into();
/// let two: Axes = [0, -1].into();
/// # let _ = (all, one, two);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Axes {
    /// Every axis.
    All,
    /// These axes; negative ones count from the end.
    List(Vec<i32>),
}

impl Axes {
    /// The normalised, sorted axes for an array of `ndim` dimensions.
    ///
    /// ```
    /// use lazulite::Axes;
    /// assert_eq!(Axes::All.resolve("sum", 3)?, vec![0, 1, 2]);
    /// assert_eq!(Axes::from([-1, 0]).resolve("sum", 3)?, vec![0, 2]);
    /// assert!(Axes::from(3).resolve("sum", 3).is_err());
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn resolve(&self, op: &str, ndim: usize) -> Result<Vec<usize>> {
        match self {
            Axes::All => Ok((0..ndim).collect()),
            Axes::List(v) => normalize_axes(op, v, ndim),
        }
    }
}

impl From<i32> for Axes {
    fn from(a: i32) -> Axes {
        Axes::List(vec![a])
    }
}
impl From<Vec<i32>> for Axes {
    fn from(v: Vec<i32>) -> Axes {
        Axes::List(v)
    }
}
impl From<&[i32]> for Axes {
    fn from(v: &[i32]) -> Axes {
        Axes::List(v.to_vec())
    }
}
impl<const N: usize> From<[i32; N]> for Axes {
    fn from(v: [i32; N]) -> Axes {
        Axes::List(v.to_vec())
    }
}
impl From<Option<i32>> for Axes {
    fn from(v: Option<i32>) -> Axes {
        v.map_or(Axes::All, |a| Axes::List(vec![a]))
    }
}
