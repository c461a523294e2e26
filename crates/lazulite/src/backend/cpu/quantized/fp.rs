//! MLX's floating-point quantization modes: `mxfp4`, `mxfp8` and `nvfp4`.
//!
//! Every group of 32 (mx) or 16 (nv) consecutive elements of a row shares one 8-bit scale,
//! and each element is stored as a small float: E2M1 (4 bits, eight to a uint32 word, low
//! nibble first) or E4M3 (8 bits, four to a word, low byte first). The mx modes store the
//! scale as a power of two (E8M0: `2^(s - 127)`), nvfp4 as an E4M3 float, optionally
//! divided by a global scale `g` as `s * g / 2688` (`2688 = 448 * 6`, the largest E4M3
//! value times the largest E2M1 one).
//!
//! MLX's CPU backend builds these from elementwise ops, each rounding to its dtype, so
//! the kernels here replay those ops one by one in the same dtypes: that makes the words
//! and scales bit for bit MLX's, ties and half-precision roundings included.

use super::{contiguous, Acc, Real};
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::element::Element;
use crate::error::{Error, Result};
use rayon::prelude::*;

/// The values of the E2M1 codes 0..16 (bit 3 is the sign).
pub(crate) const FP4_VALUES: [f32; 16] = [
    0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0,
];

/// `448 * 6`: the largest E4M3 value times the largest E2M1 value.
const NV_RANGE: f32 = 2688.0;

/// A floating-point quantization format: how elements and scales are encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    /// E2M1 elements, power-of-two (E8M0) scales, groups of 32.
    Mxfp4,
    /// E4M3 elements, power-of-two (E8M0) scales, groups of 32.
    Mxfp8,
    /// E2M1 elements, E4M3 scales, groups of 16.
    Nvfp4,
}

impl Format {
    fn bits(self) -> usize {
        match self {
            Format::Mxfp8 => 8,
            _ => 4,
        }
    }

    /// The largest element magnitude.
    fn max_value(self) -> f32 {
        match self {
            Format::Mxfp8 => 448.0,
            _ => 6.0,
        }
    }

    /// The value of element code `code` (a nibble or a byte).
    pub(crate) fn element(self, code: u8) -> f32 {
        match self {
            Format::Mxfp8 => from_e4m3(code),
            _ => FP4_VALUES[(code & 15) as usize],
        }
    }

    /// The scale a stored scale byte stands for (without a global scale).
    pub(crate) fn scale(self, byte: u8) -> f32 {
        match self {
            Format::Nvfp4 => from_e4m3(byte),
            // 2^(s - 127): exact in float32 (2^-127 is a subnormal), 2^128 is infinite.
            _ => (byte as f32 - 127.0).exp2(),
        }
    }
}

/// Encodes a float32 as E4M3 with MLX's rounding (to nearest even) and saturation
/// (magnitudes of 464 and above, infinities and NaN become ±448).
pub(crate) fn to_e4m3(f: f32) -> u8 {
    let bits = f.to_bits();
    let sign = bits & 0x8000_0000;
    let magnitude = bits ^ sign;
    let code = if magnitude >= 543 << 21 {
        0x7e
    } else if magnitude < 121 << 23 {
        // Below 2^-6: adding 2^-5 * 2^9 aligns the value's bits with the subnormal grid,
        // and the float addition rounds to nearest even.
        let aligned = (f32::from_bits(magnitude) + f32::from_bits(141 << 23)).to_bits();
        aligned.wrapping_sub(141 << 23) as u8
    } else {
        let odd = (magnitude >> 20) & 1;
        let rebiased = magnitude
            .wrapping_add(7u32.wrapping_sub(127) << 23)
            .wrapping_add(0x7ffff)
            .wrapping_add(odd);
        (rebiased >> 20) as u8
    };
    code | (sign >> 24) as u8
}

/// Decodes an E4M3 byte (`0x7f` and `0xff` are NaN).
pub(crate) fn from_e4m3(byte: u8) -> f32 {
    let exponent = (byte >> 3) & 15;
    let mantissa = (byte & 7) as f32;
    let magnitude = if byte & 0x7f == 0x7f {
        f32::NAN
    } else if exponent == 0 {
        mantissa / 512.0
    } else {
        (1.0 + mantissa / 8.0) * (exponent as f32 - 7.0).exp2()
    };
    if byte & 0x80 != 0 {
        -magnitude
    } else {
        magnitude
    }
}

/// C's conversion of a float to int32 as x86 performs it: truncation, and `i32::MIN` for
/// NaN and values out of range.
fn c_int32(v: f64) -> i32 {
    if !(-2147483648.0..2147483648.0).contains(&v) {
        i32::MIN
    } else {
        v as i32
    }
}

/// Rounds an accumulator value to the element type `T` and back (one op's rounding).
#[inline(always)]
fn round_to<T: Real>(v: T::Acc) -> T::Acc {
    T::narrow(v).widen()
}

/// Quantizes `w` (its last axis a whole number of groups) in `format`. `global_scale`
/// (nvfp4 only) is a one-element float32 tensor. Returns the packed uint32 words and the
/// uint8 scales.
pub(crate) fn quantize(
    w: Tensor,
    global_scale: Option<Tensor>,
    format: Format,
    group_size: usize,
) -> Result<[Tensor; 2]> {
    let global = match global_scale {
        Some(g) => Some(contiguous(g)?.slice::<f32>()[0]),
        None => None,
    };
    match w.dtype {
        DType::Float32 => quantize_typed::<f32>(w, global, format, group_size),
        DType::Float64 => quantize_typed::<f64>(w, global, format, group_size),
        DType::Float16 => quantize_typed::<half::f16>(w, global, format, group_size),
        DType::BFloat16 => quantize_typed::<half::bf16>(w, global, format, group_size),
        other => Err(Error::type_error(format!(
            "[quantize] No quantization kernel for {other}."
        ))),
    }
}

fn quantize_typed<T: Real>(
    w: Tensor,
    global: Option<f32>,
    format: Format,
    group_size: usize,
) -> Result<[Tensor; 2]> {
    let w = contiguous(w)?;
    let nd = w.ndim();
    let cols = w.shape[nd - 1];
    let bits = format.bits();
    let mut words_shape = w.shape.clone();
    words_shape[nd - 1] = cols * bits / 32;
    let mut scales_shape = w.shape.clone();
    scales_shape[nd - 1] = cols / group_size;
    let mut words = Tensor::uninit(DType::UInt32, &words_shape)?;
    let mut scales = Tensor::uninit(DType::UInt8, &scales_shape)?;
    if w.size() == 0 {
        return Ok([words, scales]);
    }
    // nvfp4's scale encoding factor, a float32 as MLX computes it.
    let encode = global.map_or(1.0f32, |g| NV_RANGE / g);
    let words_per_group = group_size * bits / 32;
    let per_task = (super::TASK_ELEMENTS / group_size).max(1);
    w.slice::<T>()
        .par_chunks(group_size * per_task)
        .zip(
            words
                .slice_mut::<u32>()
                .par_chunks_mut(words_per_group * per_task),
        )
        .zip(scales.slice_mut::<u8>().par_chunks_mut(per_task))
        .for_each(|((src, words), scales)| {
            let mut codes = vec![0u8; group_size];
            for ((group, words), scale) in src
                .chunks_exact(group_size)
                .zip(words.chunks_exact_mut(words_per_group))
                .zip(scales.iter_mut())
            {
                *scale = quantize_group::<T>(group, format, encode, &mut codes);
                pack(&codes, bits, words);
            }
        });
    Ok([words, scales])
}

/// Packs element codes into words: nibbles or bytes, the first in the lowest bits.
fn pack(codes: &[u8], bits: usize, words: &mut [u32]) {
    let per_word = 32 / bits;
    for (word, codes) in words.iter_mut().zip(codes.chunks_exact(per_word)) {
        *word = codes
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &c)| acc | (c as u32) << (i * bits));
    }
}

/// One group's scale byte and element codes, replaying MLX's ops: the scale is the
/// largest magnitude over the format's largest value, rounded to a power of two (mx) or
/// to E4M3 (nv); each element divided by it is rounded to the nearest E2M1 value (ties
/// to the smaller magnitude, as MLX's `argmin` over the table picks the first) or
/// encoded as E4M3.
fn quantize_group<T: Real>(group: &[T], format: Format, encode: f32, codes: &mut [u8]) -> u8 {
    let r = round_to::<T>;
    // `max` propagates NaN.
    let mut amax = T::Acc::ZERO - T::Acc::INFINITY;
    for &v in group {
        let a = v.widen().abs();
        if a.is_nan() || amax.is_nan() {
            amax = a + amax;
        } else if amax < a {
            amax = a;
        }
    }
    let scale = r(amax / T::Acc::from_f32(format.max_value()));
    let (byte, divisor, factor) = match format {
        Format::Nvfp4 => {
            // The scale times the encoding factor is in float32 (or float64 for float64
            // input); the division by the decoded scale is in T, the product after it in
            // that wider type again.
            let encode = T::Acc::from_f32(encode);
            let byte = to_e4m3((scale * encode).to_f32());
            (byte, T::Acc::from_f32(from_e4m3(byte)), Some(encode))
        }
        _ => {
            // MLX takes the logarithm of the scale and rounds it up without rounding to T
            // in between (measured: a bfloat16 scale of 2^20 * 1.0104 gets 2^21).
            let exponent = if scale == T::Acc::ZERO {
                T::Acc::ZERO
            } else {
                let k = c_int32(scale.log2().to_f64().ceil());
                r(T::Acc::from_f64(k as f64))
            };
            let power = r(T::Acc::from_f32(2.0).powf(exponent));
            let biased = r(exponent + T::Acc::from_f32(127.0));
            (c_int32(biased.to_f64()) as u8, power, None)
        }
    };
    for (code, &v) in codes.iter_mut().zip(group) {
        let q = r(v.widen() / divisor);
        *code = match (format, factor) {
            (Format::Mxfp8, _) => to_e4m3(q.to_f32()),
            (_, Some(f)) => nearest_fp4(q * f, |d| d),
            (_, None) => nearest_fp4(q, r),
        };
    }
    byte
}

/// The E2M1 code whose value is nearest `q`, with distances rounded by `round` (MLX
/// subtracts in the element dtype): the first of equal distances wins, and a NaN distance
/// counts as the smallest, as in MLX's `argmin`.
#[inline(always)]
fn nearest_fp4<A: Acc>(q: A, round: impl Fn(A) -> A) -> u8 {
    let mut best = 0u8;
    let mut best_d = A::INFINITY;
    for (code, &value) in FP4_VALUES.iter().enumerate() {
        let d = round(q - A::from_f32(value)).abs();
        if d.is_nan() {
            return code as u8;
        }
        if d < best_d || code == 0 {
            best = code as u8;
            best_d = d;
        }
    }
    best
}

/// Dequantizes the packed `w` with uint8 `scales` in `format` into `out_dtype` (a float
/// type). `global_scale` (nvfp4 only) is a one-element float32 tensor.
pub(crate) fn dequantize(
    w: Tensor,
    scales: Tensor,
    global_scale: Option<Tensor>,
    format: Format,
    group_size: usize,
    out_dtype: DType,
) -> Result<Tensor> {
    let global = match global_scale {
        Some(g) => Some(contiguous(g)?.slice::<f32>()[0]),
        None => None,
    };
    match out_dtype {
        DType::Float32 => dequantize_typed::<f32>(w, scales, global, format, group_size),
        DType::Float64 => dequantize_typed::<f64>(w, scales, global, format, group_size),
        DType::Float16 => dequantize_typed::<half::f16>(w, scales, global, format, group_size),
        DType::BFloat16 => dequantize_typed::<half::bf16>(w, scales, global, format, group_size),
        other => Err(Error::type_error(format!(
            "[dequantize] No quantization kernel for {other}."
        ))),
    }
}

fn dequantize_typed<T: Real>(
    w: Tensor,
    scales: Tensor,
    global: Option<f32>,
    format: Format,
    group_size: usize,
) -> Result<Tensor> {
    let w = contiguous(w)?;
    let scales = contiguous(scales)?;
    let nd = w.ndim();
    let mut shape = w.shape.clone();
    shape[nd - 1] = w.shape[nd - 1] * 32 / format.bits();
    let mut out = Tensor::uninit(T::DTYPE, &shape)?;
    if out.size() == 0 {
        return Ok(out);
    }
    let r = round_to::<T>;
    // The scale of every byte, rounded as MLX's ops round it: the power of two in the
    // output dtype (mx), the E4M3 value times `g / 2688` (nv, the quotient rounded first).
    let inverse = global.map(|g| r(T::Acc::from_f32(g) / T::Acc::from_f32(NV_RANGE)));
    let scale_of: Vec<T::Acc> = (0..=255u8)
        .map(|b| {
            let s = match format {
                Format::Nvfp4 => T::Acc::from_f32(from_e4m3(b)),
                // MLX's `power(2, s - 127)` in the output dtype: 2^128 is finite in
                // float64.
                _ => r(T::Acc::from_f32(2.0).powf(T::Acc::from_f64(b as f64 - 127.0))),
            };
            match inverse {
                Some(inv) => r(s * inv),
                None => s,
            }
        })
        .collect();
    let value_of: Vec<T::Acc> = (0..=255u8)
        .map(|c| T::Acc::from_f32(format.element(c)))
        .collect();
    let bytes: &[u8] = bytemuck::cast_slice(w.slice::<u32>());
    let bytes_per_group = group_size * format.bits() / 8;
    let per_task = (super::TASK_ELEMENTS / group_size).max(1);
    out.slice_mut::<T>()
        .par_chunks_mut(group_size * per_task)
        .zip(bytes.par_chunks(bytes_per_group * per_task))
        .zip(scales.slice::<u8>().par_chunks(per_task))
        .for_each(|((out, bytes), scales)| {
            for ((out, bytes), &s) in out
                .chunks_exact_mut(group_size)
                .zip(bytes.chunks_exact(bytes_per_group))
                .zip(scales)
            {
                let s = scale_of[s as usize];
                if format.bits() == 8 {
                    for (o, &b) in out.iter_mut().zip(bytes) {
                        *o = T::narrow(value_of[b as usize] * s);
                    }
                } else {
                    for (o, &b) in out.chunks_exact_mut(2).zip(bytes) {
                        o[0] = T::narrow(value_of[(b & 15) as usize] * s);
                        o[1] = T::narrow(value_of[(b >> 4) as usize] * s);
                    }
                }
            }
        });
    Ok(out)
}

/// Rounds every group of `x` (along its last axis) through `format` and back, in place of
/// a quantize then dequantize: the operand rounding of MLX's quantized-input product
/// (`qqmm`). Unlike [`quantize`], which replays MLX's elementwise ops in `x`'s dtype, this
/// is MLX's fused CPU kernel: the arithmetic is float32 whatever the dtype, E2M1 ties go
/// to the even code (3.5 becomes 4, 2.5 becomes 2), and only the result is rounded to
/// `x`'s dtype. `global_scale` (nvfp4 only) is a one-element float32 tensor dividing the
/// scales as in [`quantize`].
pub(crate) fn quantize_dequantize(
    x: Tensor,
    global_scale: Option<Tensor>,
    format: Format,
    group_size: usize,
) -> Result<Tensor> {
    let global = match global_scale {
        Some(g) => Some(contiguous(g)?.slice::<f32>()[0]),
        None => None,
    };
    match x.dtype {
        DType::Float32 => round_trip_typed::<f32>(x, global, format, group_size),
        DType::Float16 => round_trip_typed::<half::f16>(x, global, format, group_size),
        DType::BFloat16 => round_trip_typed::<half::bf16>(x, global, format, group_size),
        other => Err(Error::type_error(format!(
            "[qqmm] No quantization kernel for {other}."
        ))),
    }
}

fn round_trip_typed<T: Real>(
    x: Tensor,
    global: Option<f32>,
    format: Format,
    group_size: usize,
) -> Result<Tensor> {
    let x = contiguous(x)?;
    let mut out = Tensor::uninit(T::DTYPE, &x.shape)?;
    if x.size() == 0 {
        return Ok(out);
    }
    let per_task = (super::TASK_ELEMENTS / group_size).max(1);
    x.slice::<T>()
        .par_chunks(group_size * per_task)
        .zip(out.slice_mut::<T>().par_chunks_mut(group_size * per_task))
        .for_each(|(src, dst)| {
            for (group, out) in src
                .chunks_exact(group_size)
                .zip(dst.chunks_exact_mut(group_size))
            {
                round_trip_group(group, out, format, global);
            }
        });
    Ok(out)
}

/// One group of [`quantize_dequantize`].
fn round_trip_group<T: Real>(group: &[T], out: &mut [T], format: Format, global: Option<f32>) {
    let value = |v: &T| v.widen().to_f32();
    // C++'s `std::max(m, |v|)`: a NaN element leaves the running maximum as it is.
    let amax =
        group.iter().map(value).fold(
            f32::NEG_INFINITY,
            |m, v| {
                if m < v.abs() {
                    v.abs()
                } else {
                    m
                }
            },
        );
    let raw = amax / format.max_value();
    let scale = match format {
        Format::Nvfp4 => {
            let (encode, decode) = global.map_or((1.0, 1.0), |g| (NV_RANGE / g, g / NV_RANGE));
            from_e4m3(to_e4m3(raw * encode)) * decode
        }
        // The power of two at or above the raw scale, as `quantize` picks it.
        _ if raw > 0.0 => raw.log2().ceil().exp2(),
        _ => 0.0,
    };
    for (o, v) in out.iter_mut().zip(group) {
        let q = if scale == 0.0 { 0.0 } else { value(v) / scale };
        let rounded = match format {
            Format::Mxfp8 => from_e4m3(to_e4m3(q)),
            _ => FP4_VALUES[nearest_fp4_even(q) as usize],
        };
        *o = T::narrow(T::Acc::from_f32(scale * rounded));
    }
}

/// The E2M1 code nearest `q`, ties to the even code (NaN becomes 6, as in MLX's kernel).
fn nearest_fp4_even(q: f32) -> u8 {
    if q.is_nan() {
        return 7;
    }
    let sign = if q.is_sign_negative() { 8 } else { 0 };
    let a = q.abs();
    let code = match a {
        a if a > 5.0 => 7,
        a if a >= 3.5 => 6,
        a if a > 2.5 => 5,
        a if a >= 1.75 => 4,
        a if a > 1.25 => 3,
        a if a >= 0.75 => 2,
        a if a > 0.25 => 1,
        _ => 0,
    };
    code | sign
}
