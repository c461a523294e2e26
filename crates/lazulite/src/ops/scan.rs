//! Cumulative ops: the `Scan` primitive and cumsum, cumprod, cummax, cummin,
//! logcumsumexp.

use crate::array::Array;
use crate::backend::cpu::scan::{scan as scan_kernel, ScanOp};
use crate::backend::Tensor;
use crate::dtype::{finfo, DType};
use crate::error::Result;
use crate::ops::batching::batch_to_front;
use crate::ops::binary::{add, divide, equal, greater, maximum, multiply, subtract};
use crate::ops::cast::astype;
use crate::ops::creation::{arange, zeros_like};
use crate::ops::indexing::{scatter_add_along_axis, take_along_axis};
use crate::ops::unary::{exp, log, negative};
use crate::ops::view::reshape;
use crate::primitive::{Export, MlxNode, MlxState, OutputSpec, Primitive};
use crate::shape::normalize_axis;

/// A cumulative `op` along `axis`, from the end when `reverse`, each output excluding
/// its own element unless `inclusive`. Input and output have the same shape and dtype.
#[derive(Clone, Copy)]
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

    fn output_shapes(&self, inputs: &[OutputSpec]) -> Result<Vec<Vec<usize>>> {
        crate::primitive::same_shape(inputs)
    }

    fn params(&self) -> String {
        format!(
            "axis={}, reverse={}, inclusive={}",
            self.axis, self.reverse, self.inclusive
        )
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        // MLX's `Scan::ReduceType` is `{Max, Min, Sum, Prod, LogAddExp}`.
        let kind = match self.op {
            ScanOp::Max => 0,
            ScanOp::Min => 1,
            ScanOp::Sum => 2,
            ScanOp::Prod => 3,
            ScanOp::LogAddExp => 4,
        };
        let state = vec![
            MlxState::Int(kind),
            MlxState::Int(self.axis as i32),
            MlxState::Bool(self.reverse),
            MlxState::Bool(self.inclusive),
        ];
        MlxNode::single("Scan", state, inputs, outputs)
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

    fn vjp(
        &self,
        inputs: &[Array],
        outputs: &[Array],
        cotangents: &[Array],
        _: &[usize],
    ) -> Result<Vec<Array>> {
        let (x, y, g) = (&inputs[0], &outputs[0], &cotangents[0]);
        let grad = match self.op {
            // Each output sums the elements before it: each input feeds those after it.
            ScanOp::Sum => self.backward(ScanOp::Sum, g)?,
            ScanOp::Prod => {
                let parts = ProductParts::new(self, x)?;
                // Before the first zero: d y_j / d x_i = y_j / x_i.
                let before = divide(&self.backward(ScanOp::Sum, &multiply(g, y)?)?, &parts.safe)?;
                // At the first zero: the products with that zero left out.
                let at = self.backward(ScanOp::Sum, &multiply(g, &parts.zero_left_out)?)?;
                add(
                    &multiply(&before, &parts.before_first_zero)?,
                    &multiply(&at, &parts.first_zero)?,
                )?
            }
            ScanOp::Max | ScanOp::Min => {
                let (index, found) = self.extremum_sources(x)?;
                let g = multiply(g, &found)?;
                scatter_add_along_axis(&zeros_like(&g)?, &index, &g, self.axis)?
            }
            ScanOp::LogAddExp => {
                // d y_j / d x_i = exp(x_i - y_j), summed in log space per sign of g.
                let neg_y = negative(&finite_floor(y)?)?;
                let (pos, neg) = signed_log_terms(g)?;
                let scan = |w: &Array| self.backward(ScanOp::LogAddExp, &add(w, &neg_y)?);
                subtract(&exp(&add(x, &scan(&pos)?)?)?, &exp(&add(x, &scan(&neg)?)?)?)?
            }
        };
        Ok(vec![astype(&grad, x.dtype())?])
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        let (x, t) = (&inputs[0], &tangents[0]);
        let tangent = match self.op {
            ScanOp::Sum => self.forward(ScanOp::Sum, t)?,
            ScanOp::Prod => {
                let y = self.forward(ScanOp::Prod, x)?;
                let parts = ProductParts::new(self, x)?;
                let before = multiply(t, &parts.before_first_zero)?;
                let before = self.forward(ScanOp::Sum, &divide(&before, &parts.safe)?)?;
                let at = self.forward(ScanOp::Sum, &multiply(t, &parts.first_zero)?)?;
                add(
                    &multiply(&y, &before)?,
                    &multiply(&parts.zero_left_out, &at)?,
                )?
            }
            ScanOp::Max | ScanOp::Min => {
                let (index, found) = self.extremum_sources(x)?;
                multiply(&take_along_axis(t, &index, Some(self.axis as i32))?, &found)?
            }
            ScanOp::LogAddExp => {
                let y = finite_floor(&self.forward(ScanOp::LogAddExp, x)?)?;
                let (pos, neg) = signed_log_terms(t)?;
                let scan = |w: &Array| self.forward(ScanOp::LogAddExp, &add(w, x)?);
                subtract(
                    &exp(&subtract(&scan(&pos)?, &y)?)?,
                    &exp(&subtract(&scan(&neg)?, &y)?)?,
                )?
            }
        };
        let dtype = self.output_dtype(x.dtype());
        Ok(vec![astype(&tangent, dtype)?])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let x = batch_to_front(&inputs[0], axes[0])?;
        let batched = Scan {
            axis: self.axis + 1,
            ..*self
        };
        Ok((vec![batched.record(&x)], vec![Some(0)]))
    }
}

impl Scan {
    fn output_dtype(&self, dtype: DType) -> DType {
        match (self.op, dtype) {
            (ScanOp::Sum, DType::Bool) => DType::Int32,
            (ScanOp::LogAddExp, d) => d.to_inexact(),
            (_, d) => d,
        }
    }

    fn record(self, a: &Array) -> Array {
        let dtype = self.output_dtype(a.dtype());
        let shape = a.shape().to_vec();
        Array::from_op(self, vec![a.clone()], shape, dtype)
    }

    /// `op` scanned in this scan's direction and inclusivity.
    fn forward(&self, op: ScanOp, a: &Array) -> Result<Array> {
        let scan = Scan { op, ..*self };
        Ok(scan.record(&astype(a, scan.output_dtype(a.dtype()))?))
    }

    /// `op` scanned the other way: output `j` combines the elements whose outputs
    /// input `j` feeds.
    fn backward(&self, op: ScanOp, a: &Array) -> Result<Array> {
        let scan = Scan {
            op,
            reverse: !self.reverse,
            ..*self
        };
        Ok(scan.record(a))
    }

    /// For cummax/cummin: the index of the input each output is (MLX's choice: among
    /// equal candidates, the latest in scan order), and whether there is one (the first
    /// output of an exclusive scan is none; its index is a valid placeholder).
    fn extremum_sources(&self, x: &Array) -> Result<(Array, Array)> {
        let n = x.shape()[self.axis];
        let running = Scan {
            inclusive: true,
            ..*self
        }
        .record(x);
        let reaches = equal(x, &running)?;
        // Positions ranked 1.. in scan order, so that a running max of the ranks of the
        // elements that reached the running extremum finds the latest; 0 means none.
        let mut line = vec![1i64; x.ndim()];
        line[self.axis] = n as i64;
        let (start, stop, step) = if self.reverse {
            (n as f64, 0.0, -1.0)
        } else {
            (1.0, n as f64 + 1.0, 1.0)
        };
        let rank = reshape(&arange(start, stop, step, DType::Int32)?, &line)?;
        let candidates = multiply(&reaches, &rank)?;
        let latest = Scan {
            op: ScanOp::Max,
            ..*self
        }
        .record(&candidates);
        let found = greater(&latest, 0)?;
        let rank = maximum(&latest, 1)?;
        let index = if self.reverse {
            subtract(n as f64, &rank)?
        } else {
            subtract(&rank, 1.0)?
        };
        Ok((astype(&index, DType::Int32)?, found))
    }
}

/// For the derivatives of a cumulative product: the position of each line's first zero
/// (in scan order) splits it into elements before it, whose derivative is `y / x`, the
/// zero itself, whose derivative is the product with it left out, and elements after
/// it, whose derivatives are zero.
struct ProductParts {
    /// `x` with every zero replaced by 1.
    safe: Array,
    /// 1 where no zero comes at or before the element, else 0.
    before_first_zero: Array,
    /// 1 at the first zero, else 0.
    first_zero: Array,
    /// The cumulative product with the first zero replaced by 1.
    zero_left_out: Array,
}

impl ProductParts {
    fn new(scan: &Scan, x: &Array) -> Result<ProductParts> {
        let dtype = x.dtype();
        let is_zero = astype(&equal(x, 0.0)?, dtype)?;
        let zeros_so_far = Scan {
            op: ScanOp::Sum,
            inclusive: true,
            ..*scan
        }
        .record(&is_zero);
        let none_so_far = astype(&equal(&zeros_so_far, 0.0)?, dtype)?;
        let first = astype(&equal(&zeros_so_far, 1.0)?, dtype)?;
        let first_zero = multiply(&first, &is_zero)?;
        let zero_left_out = scan.forward(ScanOp::Prod, &add(x, &first_zero)?)?;
        Ok(ProductParts {
            safe: add(x, &is_zero)?,
            before_first_zero: none_so_far,
            first_zero,
            zero_left_out,
        })
    }
}

/// `y` with `-inf` raised to the lowest finite value, so that `-y` stays finite.
fn finite_floor(y: &Array) -> Result<Array> {
    match finfo(y.dtype()) {
        Some(info) => maximum(y, info.min),
        None => Ok(y.clone()),
    }
}

/// `log(max(w, 0))` and `log(max(-w, 0))`: `w = exp(pos) - exp(neg)` in log space.
fn signed_log_terms(w: &Array) -> Result<(Array, Array)> {
    Ok((log(&maximum(w, 0.0)?)?, log(&maximum(&negative(w)?, 0.0)?)?))
}

/// The array and axis an op along `axis` works on: `None` flattens the array first.
pub(crate) fn flatten_for_axis(op: &str, a: &Array, axis: Option<i32>) -> Result<(Array, usize)> {
    match axis {
        None => Ok((reshape(a, &[-1])?, 0)),
        Some(ax) => Ok((a.clone(), normalize_axis(op, ax, a.ndim())?)),
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
    let prim = Scan {
        op,
        axis,
        reverse,
        inclusive,
    };
    Ok(prim.record(&a))
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
