//! Ops whose result's size depends on the values of their input, so they evaluate it
//! when recorded: [`nonzero`], [`argwhere`], [`unique`], [`unique_all`].

use crate::array::Array;
use crate::backend::cpu::indexing::ScatterMode;
use crate::dtype::DType;
use crate::element::{dispatch, Complex, Element};
use crate::error::{Error, Result};
use crate::ops::binary::{minimum, subtract};
use crate::ops::cast::astype;
use crate::ops::creation::{arange, ones, zeros};
use crate::ops::indexing::gather_scatter::{as_i64, scatter};
use crate::ops::indexing::take::take;
use crate::ops::ternary::where_;
use crate::ops::view::{broadcast_to, reshape, slice};
use crate::shape::checked_size;

/// The positions of the nonzero elements of `a`, one int64 array per axis (NumPy's
/// `nonzero`; MLX has none). Evaluates `a`: the result's length depends on its values.
///
/// ```
/// use lazulite::{nonzero, Array};
/// let a = Array::from_slice(&[0, 3, 0, 4], &[2, 2]).unwrap();
/// let nz = nonzero(&a).unwrap();
/// assert_eq!(nz[0].to_vec::<i64>().unwrap(), vec![0, 1]);
/// assert_eq!(nz[1].to_vec::<i64>().unwrap(), vec![1, 1]);
/// ```
pub fn nonzero(a: &Array) -> Result<Vec<Array>> {
    let flat = astype(&reshape(a, &[-1])?, DType::Bool)?.to_vec::<bool>()?;
    let count = flat.iter().filter(|&&b| b).count();
    let ndim = a.ndim().max(1);
    let shape = if a.ndim() == 0 {
        vec![1]
    } else {
        a.shape().to_vec()
    };
    let mut coords = vec![Vec::with_capacity(count); ndim];
    for (pos, _) in flat.iter().enumerate().filter(|(_, &b)| b) {
        let mut rem = pos;
        for d in (0..ndim).rev() {
            coords[d].push((rem % shape[d]) as i64);
            rem /= shape[d];
        }
    }
    coords
        .iter()
        .map(|c| Array::from_slice(c, &[count]))
        .collect()
}

/// The positions of the nonzero elements of `a` as rows of an `(n, ndim)` int64 array
/// (NumPy's `argwhere`, the one-argument `where` in matrix form). Evaluates `a`.
///
/// ```
/// use lazulite::{argwhere, Array};
/// let a = Array::from_slice(&[0, 3, 5, 0], &[2, 2]).unwrap();
/// assert_eq!(argwhere(&a).unwrap().to_vec::<i64>().unwrap(), vec![0, 1, 1, 0]);
/// ```
pub fn argwhere(a: &Array) -> Result<Array> {
    let nz = nonzero(a)?;
    let count = nz[0].size();
    let mut rows = vec![0i64; count * a.ndim()];
    for (d, c) in nz.iter().enumerate().take(a.ndim()) {
        for (i, v) in c.to_vec::<i64>()?.into_iter().enumerate() {
            rows[i * a.ndim() + d] = v;
        }
    }
    Array::from_slice(&rows, &[count, a.ndim()])
}

/// The sorted distinct values of `a` (flattened), as NumPy's `unique`: NaNs count as one
/// value and sort last. Evaluates `a`.
///
/// ```
/// use lazulite::{unique, Array};
/// let a = Array::from_slice(&[3, 1, 3, 2, 1], &[5]).unwrap();
/// assert_eq!(unique(&a).unwrap().to_vec::<i32>().unwrap(), vec![1, 2, 3]);
/// ```
pub fn unique(a: &Array) -> Result<Array> {
    let sorted = crate::ops::sort::sort(&reshape(a, &[-1])?, Some(0))?;
    dispatch!(a.dtype(), T => {
        let mut values = sorted.to_vec::<T>()?;
        values.dedup_by(|x, y| same_value(*x, *y));
        let n = values.len();
        Array::from_slice(&values, &[n])
    })
}

/// The results of [`unique_all`]: the sorted distinct values, the index of each one's
/// first occurrence in the flattened input (uint32), the position in `values` of every
/// input element (uint32, the input's shape) and how often each value occurs (int32).
///
/// ```
/// use lazulite::{take, unique_all, Array};
/// let a = Array::from_slice(&[5i32, 7, 5], &[3])?;
/// let u = unique_all(&a, None, None)?;
/// assert_eq!(u.counts.to_vec::<i32>()?, vec![2, 1]);
/// // The values taken at the inverse give the input back.
/// assert_eq!(take(&u.values, &u.inverse, None)?.to_vec::<i32>()?, vec![5, 7, 5]);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub struct Unique {
    /// The sorted distinct values.
    pub values: Array,
    /// For each value, the flat index of its first occurrence in the input.
    pub index: Array,
    /// For each input element, the position of its value in `values`.
    pub inverse: Array,
    /// How many times each value occurs.
    pub counts: Array,
}

/// The sorted distinct values of `a` (flattened) with the index of their first
/// occurrence, the inverse that rebuilds `a` from them and their counts: MLX's
/// `unique` (NumPy's `unique_all`). NaNs are distinct from each other, as in MLX.
///
/// With a `size`, the results have that many entries whatever `a` holds, so nothing is
/// evaluated (this works under `vmap`, `compile` and `grad`): entries past the last
/// distinct value hold `fill_value` (default: the smallest value), index 0's first
/// occurrence and a count of 0; a `size` below the number of distinct values keeps the
/// smallest ones, their inverse entries clamped to the last. Without a `size` (beyond
/// MLX) the number of distinct values is the size, which evaluates `a` (the shape
/// depends on its values) and so cannot run inside `vmap` or `compile`.
///
/// ```
/// use lazulite::{unique_all, Array};
/// let a = Array::from_slice(&[2i32, 1, 2, 3, 1], &[5]).unwrap();
/// let u = unique_all(&a, None, None).unwrap();
/// assert_eq!(u.values.to_vec::<i32>().unwrap(), [1, 2, 3]);
/// assert_eq!(u.index.to_vec::<u32>().unwrap(), [1, 0, 3]);
/// assert_eq!(u.inverse.to_vec::<u32>().unwrap(), [1, 0, 1, 2, 0]);
/// assert_eq!(u.counts.to_vec::<i32>().unwrap(), [2, 2, 1]);
/// let padded = unique_all(&a, Some(4), Some(&Array::scalar(0i32))).unwrap();
/// assert_eq!(padded.values.to_vec::<i32>().unwrap(), [1, 2, 3, 0]);
/// assert_eq!(padded.counts.to_vec::<i32>().unwrap(), [2, 2, 1, 0]);
/// ```
pub fn unique_all(a: &Array, size: Option<usize>, fill_value: Option<&Array>) -> Result<Unique> {
    let flat = reshape(a, &[-1])?;
    let n = flat.size();
    let perm = crate::ops::sort::argsort(&flat, Some(0))?;
    let sorted = take(&flat, &perm, Some(0))?;
    // starts[p]: sorted position p holds a value its predecessor does not.
    let starts = if n == 0 {
        zeros(&[0], DType::Bool)?
    } else {
        let later = slice(&sorted, &[1], &[n as i64], &[1])?;
        let earlier = slice(&sorted, &[0], &[n as i64 - 1], &[1])?;
        crate::ops::shape::concatenate(
            &[
                ones(&[1], DType::Bool)?,
                crate::ops::binary::not_equal(&later, &earlier)?,
            ],
            0,
        )?
    };
    let size = match size {
        Some(size) => size,
        None => crate::ops::reduce::sum(
            &astype(&starts, DType::Int64)?,
            crate::shape::Axes::All,
            false,
        )?
        .item::<i64>()? as usize,
    };
    checked_size(&[size])?;
    let fill = match fill_value {
        Some(f) if f.size() != 1 => {
            return Err(Error::value(format!(
                "[unique] Fill value must have one element, but got shape {}.",
                crate::shape::shape_text(f.shape())
            )))
        }
        Some(f) => Some(reshape(&astype(f, a.dtype())?, &[])?),
        None if n == 0 && size > 0 => {
            return Err(Error::value(
                "[unique] A fill value is required for an empty input with a non-zero size.",
            ))
        }
        None => None,
    };
    if n == 0 || size == 0 {
        let values = match &fill {
            Some(f) => broadcast_to(f, &[size])?,
            None => zeros(&[size], a.dtype())?,
        };
        return Ok(Unique {
            values,
            index: zeros(&[size], DType::UInt32)?,
            inverse: zeros(a.shape(), DType::UInt32)?,
            counts: zeros(&[size], DType::Int32)?,
        });
    }
    let group = subtract(
        &crate::ops::scan::cumsum(&starts, Some(0), false, true, Some(DType::Int64))?,
        1,
    )?;
    // Groups that do not fit land in a spare last slot, dropped afterwards.
    let slot = minimum(&group, size as i64)?;
    let head = |x: &Array| slice(x, &[0], &[size as i64], &[1]);
    let positions = arange(0.0, n as f64, 1.0, DType::Int64)?;
    let first = head(&scatter(
        &crate::ops::creation::full(&[size + 1], n as i64, Some(DType::Int64))?,
        std::slice::from_ref(&slot),
        &positions,
        &[0],
        ScatterMode::Minimum,
    )?)?;
    let present = crate::ops::binary::less(&first, n as i64)?;
    let first = where_(&present, &first, Array::scalar(0i64))?;
    let values = take(&sorted, &first, Some(0))?;
    let values = match fill {
        Some(f) => where_(&present, &values, &f)?,
        None => values,
    };
    let counts = head(&scatter(
        &zeros(&[size + 1], DType::Int32)?,
        std::slice::from_ref(&slot),
        &ones(&[n], DType::Int32)?,
        &[0],
        ScatterMode::Add,
    )?)?;
    let inverse = scatter(
        &zeros(&[n], DType::UInt32)?,
        std::slice::from_ref(&perm),
        &astype(&minimum(&group, size as i64 - 1)?, DType::UInt32)?,
        &[0],
        ScatterMode::Assign,
    )?;
    Ok(Unique {
        values,
        index: take(&perm, &first, Some(0))?,
        inverse: reshape(&inverse, &as_i64(a.shape()))?,
        counts,
    })
}

/// Equal, with every NaN equal to every other (NumPy's `unique(equal_nan=True)`).
fn same_value<T: Element>(x: T, y: T) -> bool {
    if T::DTYPE == DType::Complex64 {
        let (x, y): (Complex, Complex) = (x.to_complex(), y.to_complex());
        let nan = |c: Complex| c.re.is_nan() || c.im.is_nan();
        return x == y || (nan(x) && nan(y));
    }
    x == y || (T::DTYPE.is_inexact() && x.to_f64().is_nan() && y.to_f64().is_nan())
}
