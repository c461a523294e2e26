//! Helpers of the batching (vmap) rules, kept below the transforms so that ops'
//! rules need nothing from `transforms/`.

use crate::array::Array;
use crate::error::Result;
use crate::ops::view::transpose;

/// For batching rules: `a` with its batch axis (if any) moved to the front.
pub(crate) fn batch_to_front(a: &Array, axis: Option<usize>) -> Result<Array> {
    match axis {
        Some(ax) => move_axis(a, ax, 0),
        None => Ok(a.clone()),
    }
}

/// `a` with axis `from` moved to position `to`.
pub(crate) fn move_axis(a: &Array, from: usize, to: usize) -> Result<Array> {
    if from == to {
        return Ok(a.clone());
    }
    let mut perm: Vec<i32> = (0..a.ndim() as i32).filter(|&d| d != from as i32).collect();
    perm.insert(to, from as i32);
    transpose(a, &perm)
}
