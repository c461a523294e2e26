//! [`Operand`]: an array or a weakly typed Rust scalar, and the promotion rules that turn
//! a list of operands into arrays of one dtype.

use crate::array::Array;
use crate::dtype::{promote_types, DType};
use crate::element::Scalar;
use crate::error::{Error, Result};
use crate::ops::view::broadcast_to;
use crate::shape::same_shape;

/// An argument of a binary op: an array, or a scalar that adapts to the array's dtype
/// the way Python scalars do in MLX.
///
/// ```
/// use lazulite::{add, Array, DType};
/// let a = Array::from_slice(&[1u8, 2], &[2]).unwrap();
/// assert_eq!(add(&a, 3).unwrap().dtype(), DType::UInt8);
/// assert_eq!(add(&a, 0.5).unwrap().dtype(), DType::Float32);
/// assert!(add(&a, 300).is_err()); // would overflow uint8
/// ```
#[derive(Clone, Debug)]
pub enum Operand {
    /// An array.
    Array(Array),
    /// A scalar, typed as MLX types Python numbers next to an array.
    Scalar(Scalar),
}

impl From<Array> for Operand {
    fn from(a: Array) -> Operand {
        Operand::Array(a)
    }
}
impl From<&Array> for Operand {
    fn from(a: &Array) -> Operand {
        Operand::Array(a.clone())
    }
}
impl From<Scalar> for Operand {
    fn from(s: Scalar) -> Operand {
        Operand::Scalar(s)
    }
}
macro_rules! operand_from_scalar {
    ($($t:ty),*) => {$(
        impl From<$t> for Operand {
            fn from(v: $t) -> Operand {
                Operand::Scalar(Scalar::from(v))
            }
        }
    )*};
}
operand_from_scalar!(bool, i8, i16, i32, i64, u8, u16, u32, isize, f32, f64);

/// A 0-d array of `dtype` holding `value`, checking that integers fit.
pub(crate) fn scalar_array(op: &str, value: Scalar, dtype: DType) -> Result<Array> {
    check_fits(op, value, dtype)?;
    let new = || Array::from_scalar(value, dtype);
    // An exported function lists each trace's constants as MLX does: one per scalar.
    if crate::ops::trace::in_export_trace() {
        return Ok(new());
    }
    let key = ScalarKey::new(value, dtype);
    let cached = SCALARS.try_with(|cache| {
        let mut slots = cache.borrow_mut();
        match &mut slots[key.slot()] {
            Some(entry) if entry.key == key => entry.scalar.clone(),
            slot => {
                let scalar = new();
                *slot = Some(CachedScalar {
                    key,
                    scalar: scalar.clone(),
                    broadcast: None,
                });
                scalar
            }
        }
    });
    // While the thread's locals are being destroyed, a constant of its own.
    Ok(cached.unwrap_or_else(|_| new()))
}

/// An error unless integer `value` fits integer `dtype` (other values always convert).
pub(crate) fn check_fits(op: &str, value: Scalar, dtype: DType) -> Result<()> {
    if let (Scalar::Int(v), true) = (value, dtype.is_integer()) {
        let info = crate::dtype::iinfo(dtype).expect("integer dtype");
        if (v as i128) < info.min || (v as i128) > info.max {
            return Err(Error::value(format!(
                "[{op}] Converting {v} to {dtype} would result in overflow."
            )));
        }
    }
    Ok(())
}

/// `scalar`, a 0-d array [`scalar_array`] made for `value`, broadcast to `shape`. A cached
/// scalar keeps its latest broadcast, so a loop applying one scalar to arrays of one shape
/// (`x * 0.9` each step) records and evaluates a single view.
pub(crate) fn broadcast_scalar(value: Scalar, scalar: &Array, shape: &[usize]) -> Result<Array> {
    if shape.is_empty() {
        return Ok(scalar.clone());
    }
    let key = ScalarKey::new(value, scalar.dtype());
    let cached = SCALARS.try_with(|cache| {
        let mut slots = cache.borrow_mut();
        let entry = match &mut slots[key.slot()] {
            Some(entry) if entry.key == key && entry.scalar.id() == scalar.id() => entry,
            _ => return None,
        };
        if let Some(b) = entry
            .broadcast
            .as_ref()
            .filter(|b| same_shape(b.shape(), shape))
        {
            return Some(Ok(b.clone()));
        }
        let b = broadcast_to(scalar, shape);
        entry.broadcast = b.as_ref().ok().cloned();
        Some(b)
    });
    cached
        .ok()
        .flatten()
        .unwrap_or_else(|| broadcast_to(scalar, shape))
}

/// How many scalar operands [`scalar_array`] keeps per thread.
const CACHED_SCALARS: usize = 32;

thread_local! {
    /// Recently used scalar operands. A loop like `x = x + 1.0` would otherwise create a
    /// constant array per op, and its evaluation would visit and free each one; a shared
    /// constant stays in cache. Sharing is invisible: constants are never written, and a
    /// kernel reuses an input's buffer only when nothing else holds it.
    static SCALARS: std::cell::RefCell<[Option<CachedScalar>; CACHED_SCALARS]> =
        const { std::cell::RefCell::new([const { None }; CACHED_SCALARS]) };
}

/// A cached scalar operand and its latest broadcast.
struct CachedScalar {
    key: ScalarKey,
    scalar: Array,
    broadcast: Option<Array>,
}

/// A scalar operand's identity: its dtype, kind and the bits of its value.
#[derive(Clone, Copy, PartialEq, Eq)]
struct ScalarKey {
    dtype: DType,
    kind: u8,
    bits: [u64; 2],
}

impl ScalarKey {
    fn new(value: Scalar, dtype: DType) -> ScalarKey {
        let (kind, bits) = match value {
            Scalar::Bool(b) => (0, [u64::from(b), 0]),
            Scalar::Int(v) => (1, [v as u64, 0]),
            Scalar::Float(v) => (2, [v.to_bits(), 0]),
            Scalar::Complex(re, im) => (3, [re.to_bits(), im.to_bits()]),
        };
        ScalarKey { dtype, kind, bits }
    }

    /// The cache slot: the key's bits mixed by one multiplication, high bits kept.
    fn slot(&self) -> usize {
        let tag = (self.dtype as u64) << 8 | u64::from(self.kind);
        let mixed =
            (self.bits[0] ^ self.bits[1].rotate_left(32) ^ tag).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (mixed >> 59) as usize % CACHED_SCALARS
    }
}

/// The array of one operand: a scalar takes the dtype of the arrays next to it when its
/// kind allows (`array_dtype`, their promoted dtype; MLX's weak typing of Python scalars).
fn operand_array(op: &str, operand: &Operand, array_dtype: Option<DType>) -> Result<Array> {
    match operand {
        Operand::Array(a) => Ok(a.clone()),
        Operand::Scalar(s) => {
            let dtype = array_dtype.map_or(s.default_dtype(), |d| s.dtype_next_to(d));
            scalar_array(op, *s, dtype)
        }
    }
}

/// Converts operands to arrays: scalars take the dtype of the arrays next to them when
/// their kind allows (MLX's weak typing of Python scalars). Returns the arrays, not yet
/// cast, and their common promoted dtype.
pub(crate) fn to_arrays(op: &str, operands: &[Operand]) -> Result<(Vec<Array>, DType)> {
    let array_dtype = operands
        .iter()
        .filter_map(|o| match o {
            Operand::Array(a) => Some(a.dtype()),
            Operand::Scalar(_) => None,
        })
        .reduce(promote_types);
    let arrays = operands
        .iter()
        .map(|o| operand_array(op, o, array_dtype))
        .collect::<Result<Vec<_>>>()?;
    let dtype = arrays
        .iter()
        .map(|a| a.dtype())
        .reduce(promote_types)
        .ok_or_else(|| Error::value(format!("[{op}] Needs at least one operand.")))?;
    Ok((arrays, dtype))
}

/// [`to_arrays`] of two operands, without a list: the path of every binary op.
pub(crate) fn to_array_pair(op: &str, a: &Operand, b: &Operand) -> Result<(Array, Array, DType)> {
    let array_dtype = match (a, b) {
        (Operand::Array(x), Operand::Array(y)) => Some(promote_types(x.dtype(), y.dtype())),
        (Operand::Array(x), _) | (_, Operand::Array(x)) => Some(x.dtype()),
        _ => None,
    };
    let a = operand_array(op, a, array_dtype)?;
    let b = operand_array(op, b, array_dtype)?;
    let dtype = promote_types(a.dtype(), b.dtype());
    Ok((a, b, dtype))
}
