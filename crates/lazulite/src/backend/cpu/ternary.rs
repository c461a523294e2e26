//! Kernels of the three-input elementwise ops.

use super::elementwise::map3;
use crate::backend::Tensor;
use crate::element::dispatch;
use crate::error::Result;

/// `cond ? x : y` elementwise. `cond` is bool; `x` and `y` share a dtype; all three have
/// the same shape (broadcast views).
pub fn select(cond: &Tensor, x: &Tensor, y: &Tensor) -> Result<Tensor> {
    dispatch!(x.dtype, T => map3::<bool, T, T, T>(cond, x, y, |c, a, b| if c { a } else { b }))
}
