//! [`Value`]: one element and its dtype, held without a graph node or a buffer, and the
//! two-input ops computed on such values. A language binding keeps scalar arithmetic in
//! this form (`x = x + 1.0` in a Python loop): each step then costs the element function
//! of the op's kernel, where a 0-d array costs a node, a buffer and their release.

use crate::array::Array;
use crate::backend::cpu::binary::{binary_one, store_one};
use crate::backend::op::BinaryOp;
use crate::backend::Tensor;
use crate::dtype::{promote_types, DType};
use crate::element::{dispatch, Element, Scalar};
use crate::ops::eager::computed_tensor;
use crate::ops::operand::check_fits;
use crate::ops::trace::in_export_trace;
use std::sync::Arc;

/// One element of an array with its dtype, held by value: what a computed 0-d array
/// holds, without the array.
///
/// ```
/// use lazulite::{Array, DType, Value};
/// let v = Value::new(2.5f32);
/// assert_eq!(v.dtype(), DType::Float32);
/// assert_eq!(v.to_array().item::<f32>()?, 2.5);
/// assert_eq!(Array::scalar(7i16).value(), Some(Value::new(7i16)));
/// # Ok::<(), lazulite::Error>(())
/// ```
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Value {
    dtype: DType,
    /// The element's storage, little end first; bytes past the dtype's size are zero.
    bytes: [u8; 8],
}

impl Value {
    /// The value `v`, of `T`'s dtype.
    ///
    /// ```
    /// assert_eq!(lazulite::Value::new(true).dtype(), lazulite::DType::Bool);
    /// ```
    pub fn new<T: Element>(v: T) -> Value {
        Value {
            dtype: T::DTYPE,
            bytes: store_one(v),
        }
    }

    /// `s` as an operand next to an array of dtype `other` takes it (MLX's weak typing of
    /// Python scalars: [`Scalar::dtype_next_to`]); `None` for an integer that does not fit
    /// that dtype (the op on arrays raises the error).
    ///
    /// ```
    /// use lazulite::{DType, Scalar, Value};
    /// assert_eq!(Value::next_to(Scalar::Float(0.5), DType::Float16).unwrap().dtype(), DType::Float16);
    /// assert_eq!(Value::next_to(Scalar::Int(3), DType::UInt8), Some(Value::new(3u8)));
    /// assert_eq!(Value::next_to(Scalar::Int(300), DType::UInt8), None);
    /// ```
    pub fn next_to(s: Scalar, other: DType) -> Option<Value> {
        let dtype = s.dtype_next_to(other);
        check_fits("", s, dtype).ok()?;
        Some(dispatch!(dtype, T => Value::new(s.to_elem::<T>())))
    }

    /// The dtype.
    ///
    /// ```
    /// assert_eq!(lazulite::Value::new(1u64).dtype(), lazulite::DType::UInt64);
    /// ```
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// A computed 0-d array holding this value.
    ///
    /// ```
    /// let a = lazulite::Value::new(-3i32).to_array();
    /// assert_eq!((a.shape(), a.item::<i32>().unwrap()), (&[] as &[usize], -3));
    /// ```
    pub fn to_array(&self) -> Array {
        let mut tensor = Tensor::uninit(self.dtype, &[]).expect("one element always fits");
        let size = self.dtype.size();
        Arc::get_mut(&mut tensor.buf)
            .expect("a new buffer")
            .bytes_mut()[..size]
            .copy_from_slice(&self.bytes[..size]);
        Array::from_tensor(tensor)
    }

    /// `op` on two values, computed as its kernel computes it on arrays of one element;
    /// `None` where the op on arrays would record a node, cast an input or raise: when
    /// an input's dtype is not the one the op computes in (after promotion), when the op
    /// refuses the dtype, and while a function is being exported (whose constants stay
    /// nodes, as MLX writes them).
    ///
    /// ```
    /// use lazulite::{BinaryOp, DType, Value};
    /// let (a, b) = (Value::new(7i32), Value::new(2i32));
    /// assert_eq!(Value::binary(BinaryOp::FloorDivide, a, b), Some(Value::new(3i32)));
    /// assert_eq!(Value::binary(BinaryOp::Less, a, b), Some(Value::new(false)));
    /// assert_eq!(Value::binary(BinaryOp::Divide, a, b), None); // computes in float32
    /// assert_eq!(Value::binary(BinaryOp::Add, a, Value::new(1i64)), None); // casts `a`
    /// ```
    pub fn binary(op: BinaryOp, a: Value, b: Value) -> Option<Value> {
        let dtype = op.input_dtype(promote_types(a.dtype, b.dtype)).ok()?;
        if a.dtype != dtype || b.dtype != dtype || in_export_trace() {
            return None;
        }
        let bytes = binary_one(op, dtype, a.bytes, b.bytes)?;
        Some(Value {
            dtype: op.output_dtype(dtype),
            bytes,
        })
    }
}

impl Array {
    /// The element of a computed 0-d array that nothing tracks (no running transform,
    /// placeholder or stand-in of `vmap` or `compile` depends on it); `None` otherwise.
    /// Never evaluates or waits.
    ///
    /// ```
    /// use lazulite::{Array, Value};
    /// let x = Array::scalar(2.0f32);
    /// assert_eq!(x.value(), Some(Value::new(2.0f32)));
    /// assert_eq!(Array::from_slice(&[2.0f32], &[1]).unwrap().value(), None); // not 0-d
    /// ```
    pub fn value(&self) -> Option<Value> {
        if !self.shape().is_empty() || self.node.flags() != Default::default() {
            return None;
        }
        let tensor = computed_tensor(self)?;
        let size = tensor.dtype.size();
        let start = tensor.offset * size;
        let mut bytes = [0u8; 8];
        bytes[..size].copy_from_slice(&tensor.buf.bytes()[start..start + size]);
        Some(Value {
            dtype: tensor.dtype,
            bytes,
        })
    }
}
