//! Cumulative ops: the `Scan` primitive and cumsum, cumprod, cummax, cummin,
//! logcumsumexp.

use super::cast::astype;
use super::view::reshape;
use crate::array::Array;
use crate::backend::cpu::scan::{scan as scan_kernel, ScanOp};
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::primitive::{OutputSpec, Primitive};
use crate::shape::normalize_axis;

/// A cumulative `op` along `axis`, from the end when `reverse`, each output excluding
/// its own element unless `inclusive`. Input and output have the same shape and dtype.
pub(crate) struct Scan {
    pub op: ScanOp,
    pub axis: usize,
    pub reverse: bool,
    pub inclusive: bool,
}

impl Primitive for Scan {
    fn name(&self) -> &'static str {
        self.op.name()
    }

    fn params(&self) -> String {
        format!(
            "axis={}, reverse={}, inclusive={}",
            self.axis, self.reverse, self.inclusive
        )
    }

    fn eval(&self, mut inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let x = inputs.pop().expect("scans have one input");
        Ok(vec![scan_kernel(
            self.op,
            x,
            self.axis,
            self.reverse,
            self.inclusive,
        )?])
    }
}

/// `axis` as an index below `ndim`; out of range is an index error, as in MLX.
pub(crate) fn checked_axis(op: &str, axis: i32, ndim: usize) -> Result<usize> {
    normalize_axis(op, axis, ndim).map_err(|e| Error::index(e.message()))
}

/// The array and axis an op along `axis` works on: `None` flattens the array first.
pub(crate) fn flatten_for_axis(op: &str, a: &Array, axis: Option<i32>) -> Result<(Array, usize)> {
    match axis {
        None => Ok((reshape(a, &[-1])?, 0)),
        Some(ax) => Ok((a.clone(), checked_axis(op, ax, a.ndim())?)),
    }
}

fn scan(op: ScanOp, a: &Array, axis: Option<i32>, reverse: bool, inclusive: bool) -> Result<Array> {
    let name = op.name();
    let (a, axis) = flatten_for_axis(name, a, axis)?;
    let dtype = match (op, a.dtype()) {
        (ScanOp::Sum, DType::Bool) => DType::Int32,
        (ScanOp::LogAddExp, d) => d.to_inexact(),
        (_, d) => d,
    };
    let a = astype(&a, dtype)?;
    let shape = a.shape().to_vec();
    let prim = Scan {
        op,
        axis,
        reverse,
        inclusive,
    };
    Ok(Array::from_op(prim, vec![a], shape, dtype))
}

/// Cumulative sum along `axis` (`None`: over the flattened array). `reverse` sums from
/// the end; `inclusive == false` leaves each element out of its own sum. `dtype` casts
/// the input first. Integers keep their dtype and wrap (as MLX); bool sums are int32.
///
/// ```
/// use lazulite::{cumsum, Array};
/// let a = Array::from_slice(&[1i32, 2, 3, 4], &[4]).unwrap();
/// assert_eq!(cumsum(&a, None, false, true, None).unwrap().to_vec::<i32>().unwrap(), [1, 3, 6, 10]);
/// assert_eq!(cumsum(&a, Some(0), true, false, None).unwrap().to_vec::<i32>().unwrap(), [9, 7, 4, 0]);
/// ```
pub fn cumsum(
    a: &Array,
    axis: Option<i32>,
    reverse: bool,
    inclusive: bool,
    dtype: Option<DType>,
) -> Result<Array> {
    let a = astype(a, dtype.unwrap_or(a.dtype()))?;
    scan(ScanOp::Sum, &a, axis, reverse, inclusive)
}

/// Cumulative product along `axis` (`None`: flattened); arguments as [`cumsum`].
/// Integers wrap; bool products stay bool.
///
/// ```
/// use lazulite::{cumprod, Array};
/// let a = Array::from_slice(&[2.0f32, 2.0, 3.0], &[3]).unwrap();
/// let p = cumprod(&a, Some(-1), false, false, None).unwrap();
/// assert_eq!(p.to_vec::<f32>().unwrap(), [1.0, 2.0, 4.0]);
/// ```
pub fn cumprod(
    a: &Array,
    axis: Option<i32>,
    reverse: bool,
    inclusive: bool,
    dtype: Option<DType>,
) -> Result<Array> {
    let a = astype(a, dtype.unwrap_or(a.dtype()))?;
    scan(ScanOp::Prod, &a, axis, reverse, inclusive)
}

/// Cumulative maximum along `axis` (`None`: flattened). NaN propagates; complex numbers
/// compare by real part, then imaginary part. An exclusive scan starts at the dtype's
/// lowest value (`-inf` for floats).
///
/// ```
/// use lazulite::{cummax, Array};
/// let a = Array::from_slice(&[1i32, 3, 2, 5], &[4]).unwrap();
/// assert_eq!(cummax(&a, None, false, true).unwrap().to_vec::<i32>().unwrap(), [1, 3, 3, 5]);
/// ```
pub fn cummax(a: &Array, axis: Option<i32>, reverse: bool, inclusive: bool) -> Result<Array> {
    scan(ScanOp::Max, a, axis, reverse, inclusive)
}

/// Cumulative minimum along `axis` (`None`: flattened); see [`cummax`].
///
/// ```
/// use lazulite::{cummin, Array};
/// let a = Array::from_slice(&[3u8, 1, 2], &[3]).unwrap();
/// assert_eq!(cummin(&a, None, false, false).unwrap().to_vec::<u8>().unwrap(), [255, 3, 1]);
/// ```
pub fn cummin(a: &Array, axis: Option<i32>, reverse: bool, inclusive: bool) -> Result<Array> {
    scan(ScanOp::Min, a, axis, reverse, inclusive)
}

/// Cumulative `log(sum(exp(a)))` along `axis` (`None`: flattened), computed stably.
/// Integer and bool inputs give float32.
///
/// ```
/// use lazulite::{logcumsumexp, Array};
/// let a = Array::from_slice(&[0i32, 0], &[2]).unwrap();
/// let l = logcumsumexp(&a, None, false, true).unwrap().to_vec::<f32>().unwrap();
/// assert_eq!(l, [0.0, 2f32.ln()]);
/// ```
pub fn logcumsumexp(a: &Array, axis: Option<i32>, reverse: bool, inclusive: bool) -> Result<Array> {
    scan(ScanOp::LogAddExp, a, axis, reverse, inclusive)
}
