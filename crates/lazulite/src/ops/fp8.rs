//! Conversions between floating-point arrays and 8-bit floats in the E4M3 format (one
//! sign bit, four exponent bits with bias 7, three mantissa bits; no infinities; `0x7f`
//! and `0xff` are NaN), stored as uint8, as MLX's `to_fp8`/`from_fp8`. Built from bit
//! operations on float32 so they run wherever the other ops do.

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::binary::{
    add, bitwise_and, bitwise_or, equal, left_shift, less, multiply, right_shift, subtract,
};
use crate::ops::cast::astype;
use crate::ops::shape::view;
use crate::ops::ternary::{clip, where_};
use crate::ops::unary::{abs, isnan, negative, round};

/// The largest E4M3 value; larger magnitudes, infinities and NaN saturate to it, as in MLX.
const MAX: f32 = 448.0;
/// The smallest normal E4M3 value, `2^-6`; below it values are multiples of `2^-9`.
const MIN_NORMAL: f32 = 0.015625;

/// Encodes a real floating-point array as E4M3 bytes (uint8), rounding to nearest even.
/// Magnitudes above 448, infinities and NaN become ±448 (by their sign bit) as in MLX.
///
/// ```
/// use lazulite::{from_fp8, to_fp8, Array, DType};
/// let x = Array::from_slice(&[1.0f32, -0.5, 1.0625, 1000.0], &[4])?;
/// let bytes = to_fp8(&x)?;
/// assert_eq!(bytes.to_vec::<u8>()?, vec![56, 176, 56, 126]);
/// assert_eq!(from_fp8(&bytes, DType::Float32)?.to_vec::<f32>()?, vec![1.0, -0.5, 1.0, 448.0]);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn to_fp8(x: &Array) -> Result<Array> {
    if !x.dtype().is_floating() {
        return Err(Error::value(format!(
            "[to_fp8] Only real floating types are supported but x.dtype() == {}.",
            x.dtype()
        )));
    }
    let x = astype(x, DType::Float32)?;
    // The sign bit is kept, NaN's too.
    let sign = right_shift(&view(&x, DType::UInt32)?, 31u32)?;
    let magnitude = abs(&x)?;
    let magnitude = where_(
        &isnan(&magnitude)?,
        MAX,
        &clip(&magnitude, None, Some(MAX.into()))?,
    )?;
    let bits = view(&magnitude, DType::UInt32)?;
    // Normal range: round the 23-bit mantissa to 3 bits (ties to even) by adding just
    // under half a unit plus the kept lowest bit, then move the exponent to bias 7.
    let lowest_kept = bitwise_and(&right_shift(&bits, 20u32)?, 1u32)?;
    let rounded = right_shift(&add(&add(&bits, 0x7ffffu32)?, &lowest_kept)?, 20u32)?;
    let normal = subtract(&rounded, (127u32 - 7) << 3)?;
    // Below 2^-6: a multiple of 2^-9, rounded to nearest even.
    let subnormal = astype(&round(&multiply(&magnitude, 512.0f32)?, 0)?, DType::UInt32)?;
    let code = where_(&less(&magnitude, MIN_NORMAL)?, &subnormal, &normal)?;
    astype(&bitwise_or(&left_shift(&sign, 7u32)?, &code)?, DType::UInt8)
}

/// Decodes E4M3 bytes (a uint8 array) to `dtype`, a real floating-point type (MLX's
/// default is bfloat16).
///
/// ```
/// use lazulite::{from_fp8, Array, DType};
/// let bytes = Array::from_slice(&[56u8, 1, 127, 254], &[4])?;
/// let x = from_fp8(&bytes, DType::Float32)?.to_vec::<f32>()?;
/// assert_eq!(&x[..2], &[1.0, 0.001953125]);
/// assert!(x[2].is_nan());
/// assert_eq!(x[3], -448.0);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn from_fp8(x: &Array, dtype: DType) -> Result<Array> {
    if x.dtype() != DType::UInt8 {
        return Err(Error::value(format!(
            "[from_fp8] Input must have type uint8 but x.dtype() == {}.",
            x.dtype()
        )));
    }
    if !dtype.is_floating() {
        return Err(Error::value(format!(
            "[from_fp8] Only real floating types are supported but dtype == {dtype}."
        )));
    }
    let bytes = astype(x, DType::UInt32)?;
    let exponent = bitwise_and(&right_shift(&bytes, 3u32)?, 0xfu32)?;
    let mantissa = bitwise_and(&bytes, 7u32)?;
    // A normal value as float32 bits: the exponent moved to bias 127, the mantissa to
    // the top of float32's.
    let normal_bits = bitwise_or(
        &left_shift(&add(&exponent, 127u32 - 7)?, 23u32)?,
        &left_shift(&mantissa, 20u32)?,
    )?;
    let normal = view(&normal_bits, DType::Float32)?;
    let subnormal = multiply(&astype(&mantissa, DType::Float32)?, 1.0f32 / 512.0)?;
    let magnitude = where_(&equal(&exponent, 0u32)?, &subnormal, &normal)?;
    let signed = where_(
        &equal(&right_shift(&bytes, 7u32)?, 1u32)?,
        &negative(&magnitude)?,
        &magnitude,
    )?;
    let nan = equal(&bitwise_and(&bytes, 0x7fu32)?, 0x7fu32)?;
    astype(&where_(&nan, f32::NAN, &signed)?, dtype)
}
