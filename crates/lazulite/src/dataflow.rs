//! Owl-style dataflow: placeholders whose values can be assigned and re-assigned, with
//! incremental re-evaluation of only what an assignment invalidates (see `eval.rs`).

use crate::array::{Array, Data};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::operand::scalar_array;
use crate::ops::{broadcast_to, Operand};
use crate::shape::checked_size;
use std::sync::atomic::{AtomicU64, Ordering};

/// Stamps of assignments: each assignment is newer than every earlier one.
static ASSIGNMENTS: AtomicU64 = AtomicU64::new(1);

/// An array with no value yet (Owl's `variable`). Arrays computed from placeholders keep
/// their graph after evaluation, so they can be evaluated again after [`Array::assign`].
///
/// ```
/// use lazulite::{placeholder, Array, DType};
/// let x = placeholder(&[2], DType::Float32).unwrap();
/// let y = &x * 2.0;
/// assert!(y.eval().is_err()); // x has no value yet
/// x.assign(&Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap()).unwrap();
/// assert_eq!(y.to_vec::<f32>().unwrap(), vec![2.0, 4.0]);
/// x.assign(&Array::from_slice(&[5.0f32, 6.0], &[2]).unwrap()).unwrap();
/// assert_eq!(y.to_vec::<f32>().unwrap(), vec![10.0, 12.0]);
/// ```
pub fn placeholder(shape: &[usize], dtype: DType) -> Result<Array> {
    checked_size(shape)?;
    Ok(Array::new_placeholder(shape.to_vec(), dtype))
}

impl Array {
    /// Sets or replaces the value of a placeholder (Owl's `assign_arr`/`assign_elt`).
    /// `value` must have the placeholder's shape and dtype; a scalar is accepted for any
    /// placeholder and filled in. Arrays that are not placeholders are constants and
    /// cannot be assigned.
    ///
    /// ```
    /// let b = lazulite::placeholder(&[], lazulite::DType::Float64).unwrap();
    /// b.assign(5.0).unwrap();
    /// assert_eq!(b.item::<f64>().unwrap(), 5.0);
    /// let c = lazulite::Array::scalar(1.0f64);
    /// assert!(c.assign(2.0).is_err());
    /// ```
    pub fn assign(&self, value: impl Into<Operand>) -> Result<()> {
        if !self.node.placeholder {
            return Err(Error::value(
                "[assign] Only placeholders can be assigned; this array is a constant.",
            ));
        }
        let value = match value.into() {
            Operand::Array(a) => {
                if a.shape() != self.shape() || a.dtype() != self.dtype() {
                    return Err(Error::value(format!(
                        "[assign] The placeholder has shape {:?} and dtype {}; the value has \
                         shape {:?} and dtype {}.",
                        self.shape(),
                        self.dtype(),
                        a.shape(),
                        a.dtype()
                    )));
                }
                a
            }
            Operand::Scalar(s) => {
                broadcast_to(&scalar_array("assign", s, self.dtype())?, self.shape())?
            }
        };
        let tensor = value.tensor()?;
        let mut state = self.node.lock();
        state.data = Some(Data::One(tensor));
        state.stamp = ASSIGNMENTS.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Whether this array is a placeholder.
    ///
    /// ```
    /// let x = lazulite::placeholder(&[2], lazulite::DType::Float32)?;
    /// assert!(x.is_placeholder());
    /// assert!(!lazulite::Array::scalar(1.0f32).is_placeholder());
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn is_placeholder(&self) -> bool {
        self.node.placeholder
    }

    /// How many times this array's node has been computed: 0 or 1 for ordinary arrays,
    /// more for dataflow nodes re-evaluated after assignments. A diagnostic.
    ///
    /// ```
    /// let x = lazulite::placeholder(&[], lazulite::DType::Float32).unwrap();
    /// let y = x.sin().unwrap();
    /// x.assign(1.0).unwrap();
    /// y.eval().unwrap();
    /// y.eval().unwrap();
    /// assert_eq!(y.evaluation_count(), 1);
    /// ```
    pub fn evaluation_count(&self) -> u64 {
        self.node.lock().runs
    }
}
