//! Affine quantization in MLX's format: `quantize`, `dequantize` and the product of a
//! float matrix with a quantized one.
//!
//! A quantized matrix of logical shape `(R, C)` is stored as `(R, C * bits / 32)` uint32
//! words. Each row is a little-endian bit stream: element `j` occupies bits
//! `j * bits .. (j + 1) * bits`, so 4-bit values fill a word from its low nibble up and
//! 3-, 5- and 6-bit values straddle words exactly as MLX's byte packing does. Every
//! `group_size` consecutive elements of a row share a scale `s` and a bias `b`: the value
//! is `s * q + b`.
//!
//! Float16 and bfloat16 compute in float32 (as MLX does), float32 in float32 and float64
//! in float64: [`Real::Acc`].

pub(crate) mod fp;
mod paired;
mod rows;

use super::copy::contiguous;
use super::elementwise::{cast, map1};
use super::matmul::tiles::{self, Geometry};
use super::simd::{self, vectorised};
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::element::Element;
use crate::error::{Error, Result};
use half::{bf16, f16};
use rayon::prelude::*;
use std::ops::{Add, Div, Mul, Sub};

/// The float type quantization arithmetic runs in.
pub trait Acc:
    Element<Storage = Self>
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + PartialOrd
    + Default
    + From<f32>
{
    const ZERO: Self;
    /// MLX's lower bound on a scale (a constant group would otherwise divide by zero).
    const EPS: Self;
    const INFINITY: Self;
    /// A quantized level (at most 255) as a float.
    fn level(q: u32) -> Self;
    /// Rounds half to even (C's `rint`).
    fn rint(self) -> Self;
    fn abs(self) -> Self;
    /// A level computed in float back to an integer (NaN gives 0).
    fn to_level(self) -> u64;
    fn is_nan(self) -> bool;
    fn from_f32(v: f32) -> Self;
    fn to_f32(self) -> f32;
    fn log2(self) -> Self;
    fn powf(self, e: Self) -> Self;
}

impl Acc for f32 {
    const ZERO: f32 = 0.0;
    const EPS: f32 = 1e-7;
    const INFINITY: f32 = f32::INFINITY;
    #[inline(always)]
    fn level(q: u32) -> f32 {
        q as f32
    }
    #[inline(always)]
    fn rint(self) -> f32 {
        self.round_ties_even()
    }
    #[inline(always)]
    fn abs(self) -> f32 {
        f32::abs(self)
    }
    #[inline(always)]
    fn to_level(self) -> u64 {
        self as u64
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
    #[inline(always)]
    fn from_f32(v: f32) -> f32 {
        v
    }
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self
    }
    #[inline(always)]
    fn log2(self) -> f32 {
        f32::log2(self)
    }
    #[inline(always)]
    fn powf(self, e: f32) -> f32 {
        f32::powf(self, e)
    }
}

impl Acc for f64 {
    const ZERO: f64 = 0.0;
    const EPS: f64 = 1e-7;
    const INFINITY: f64 = f64::INFINITY;
    #[inline(always)]
    fn level(q: u32) -> f64 {
        q as f64
    }
    #[inline(always)]
    fn rint(self) -> f64 {
        self.round_ties_even()
    }
    #[inline(always)]
    fn abs(self) -> f64 {
        f64::abs(self)
    }
    #[inline(always)]
    fn to_level(self) -> u64 {
        self as u64
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
    #[inline(always)]
    fn from_f32(v: f32) -> f64 {
        v as f64
    }
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self as f32
    }
    #[inline(always)]
    fn log2(self) -> f64 {
        f64::log2(self)
    }
    #[inline(always)]
    fn powf(self, e: f64) -> f64 {
        f64::powf(self, e)
    }
}

/// A float element type that can be quantized, with the type it computes in.
pub trait Real: Element<Storage = Self> {
    type Acc: Acc;
    fn widen(self) -> Self::Acc;
    fn narrow(a: Self::Acc) -> Self;
    /// `dst[i] = src[i].widen()` over the shorter length.
    #[inline(always)]
    fn widen_slice(src: &[Self], dst: &mut [Self::Acc]) {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = s.widen();
        }
    }
}

macro_rules! real {
    ($t:ty, $acc:ty, $widen:expr, $narrow:expr) => {
        impl Real for $t {
            type Acc = $acc;
            #[inline(always)]
            fn widen(self) -> $acc {
                $widen(self)
            }
            #[inline(always)]
            fn narrow(a: $acc) -> $t {
                $narrow(a)
            }
        }
    };
}
real!(f32, f32, |v| v, |v| v);
real!(f64, f64, |v| v, |v| v);
real!(f16, f32, f16::to_f32, f16::from_f32);
impl Real for bf16 {
    type Acc = f32;
    #[inline(always)]
    fn widen(self) -> f32 {
        self.to_f32()
    }
    #[inline(always)]
    fn narrow(a: f32) -> bf16 {
        bf16::from_f32(a)
    }
    /// A shift, which vectorises (`to_f32` quiets NaNs one element at a time, which cost
    /// a tenth of a 4-bit decode step in widening scales and biases); NaNs stay NaNs.
    #[inline(always)]
    fn widen_slice(src: &[bf16], dst: &mut [f32]) {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = f32::from_bits(u32::from(s.to_bits()) << 16);
        }
    }
}

/// Runs `$body` with `$t` bound to the float element type of `$dtype`.
macro_rules! with_real {
    ($dtype:expr, $t:ident => $body:expr) => {
        match $dtype {
            DType::Float32 => {
                type $t = f32;
                $body
            }
            DType::Float64 => {
                type $t = f64;
                $body
            }
            DType::Float16 => {
                type $t = f16;
                $body
            }
            DType::BFloat16 => {
                type $t = bf16;
                $body
            }
            other => Err(Error::type_error(format!(
                "[quantize] No quantization kernel for {other}."
            ))),
        }
    };
}

/// MLX's quantization modes: how the elements of a group and its scale are encoded.
///
/// ```
/// use lazulite::QuantizationMode;
/// let mode: QuantizationMode = "nvfp4".parse()?;
/// assert_eq!(mode, QuantizationMode::Nvfp4);
/// assert_eq!((mode.default_group_size(), mode.default_bits()), (16, 4));
/// assert_eq!(mode.to_string(), "nvfp4");
/// # Ok::<(), lazulite::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum QuantizationMode {
    /// `bits`-bit integer levels with a scale and a bias per group (MLX's default).
    #[default]
    Affine,
    /// 4-bit E2M1 floats, groups of 32 sharing a power-of-two (E8M0) scale.
    Mxfp4,
    /// 8-bit E4M3 floats, groups of 32 sharing a power-of-two (E8M0) scale.
    Mxfp8,
    /// 4-bit E2M1 floats, groups of 16 sharing an E4M3 scale.
    Nvfp4,
}

impl QuantizationMode {
    /// MLX's group size when none is given: 64, 32, 32, 16.
    ///
    /// ```
    /// use lazulite::QuantizationMode;
    /// assert_eq!(QuantizationMode::Affine.default_group_size(), 64);
    /// assert_eq!(QuantizationMode::Nvfp4.default_group_size(), 16);
    /// ```
    pub fn default_group_size(self) -> i32 {
        match self {
            QuantizationMode::Affine => 64,
            QuantizationMode::Nvfp4 => 16,
            _ => 32,
        }
    }

    /// MLX's bits per element when none are given: 4, except 8 for mxfp8.
    ///
    /// ```
    /// use lazulite::QuantizationMode;
    /// assert_eq!(QuantizationMode::Mxfp8.default_bits(), 8);
    /// assert_eq!(QuantizationMode::Mxfp4.default_bits(), 4);
    /// ```
    pub fn default_bits(self) -> i32 {
        match self {
            QuantizationMode::Mxfp8 => 8,
            _ => 4,
        }
    }

    /// The mode's position in MLX's enumeration (its exported function files store it).
    ///
    /// ```
    /// assert_eq!(lazulite::QuantizationMode::Mxfp8.index(), 2);
    /// ```
    pub fn index(self) -> i32 {
        self as i32
    }

    /// The mode at position `index` of MLX's enumeration.
    ///
    /// ```
    /// use lazulite::QuantizationMode;
    /// assert_eq!(QuantizationMode::from_index(3), Some(QuantizationMode::Nvfp4));
    /// assert_eq!(QuantizationMode::from_index(4), None);
    /// ```
    pub fn from_index(index: i32) -> Option<QuantizationMode> {
        [
            QuantizationMode::Affine,
            QuantizationMode::Mxfp4,
            QuantizationMode::Mxfp8,
            QuantizationMode::Nvfp4,
        ]
        .get(usize::try_from(index).ok()?)
        .copied()
    }

    /// The floating-point format of a non-affine mode.
    pub(crate) fn format(self) -> Option<fp::Format> {
        match self {
            QuantizationMode::Affine => None,
            QuantizationMode::Mxfp4 => Some(fp::Format::Mxfp4),
            QuantizationMode::Mxfp8 => Some(fp::Format::Mxfp8),
            QuantizationMode::Nvfp4 => Some(fp::Format::Nvfp4),
        }
    }
}

impl std::fmt::Display for QuantizationMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            QuantizationMode::Affine => "affine",
            QuantizationMode::Mxfp4 => "mxfp4",
            QuantizationMode::Mxfp8 => "mxfp8",
            QuantizationMode::Nvfp4 => "nvfp4",
        })
    }
}

impl std::str::FromStr for QuantizationMode {
    type Err = Error;

    /// MLX's mode names; another name is a ValueError with MLX's message.
    fn from_str(s: &str) -> Result<QuantizationMode> {
        match s {
            "affine" => Ok(QuantizationMode::Affine),
            "mxfp4" => Ok(QuantizationMode::Mxfp4),
            "mxfp8" => Ok(QuantizationMode::Mxfp8),
            "nvfp4" => Ok(QuantizationMode::Nvfp4),
            _ => Err(Error::value(format!("Invalid quantization mode '{s}'."))),
        }
    }
}

/// How a quantized matrix is packed: elements per scale, bits per element, and the mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packing {
    pub group_size: usize,
    pub bits: usize,
    pub mode: QuantizationMode,
}

impl Packing {
    /// uint32 words holding one group.
    fn words_per_group(self) -> usize {
        self.group_size * self.bits / 32
    }
}

/// A contiguous tensor of `A` holding `t`'s values (`t` itself when it already is one).
fn widened<A: Acc>(t: Tensor) -> Result<Tensor> {
    if t.dtype == A::DTYPE && t.is_contiguous() {
        return Ok(t);
    }
    with_real!(t.dtype, T => cast::<T, A>(t))
}

/// Unpacks the levels of `words` (a whole number of groups) into `out`, one per element.
#[inline(always)]
fn unpack<const BITS: usize, A: Acc>(words: &[u32], out: &mut [A]) {
    let mask = (1u64 << BITS) - 1;
    if 32 % BITS == 0 {
        for (&w, o) in words.iter().zip(out.chunks_exact_mut(32 / BITS)) {
            for (k, v) in o.iter_mut().enumerate() {
                *v = A::level(((w as u64 >> (k * BITS)) & mask) as u32);
            }
        }
    } else {
        // BITS words hold exactly 32 elements; read them as one bit stream.
        for (ws, o) in words.chunks_exact(BITS).zip(out.chunks_exact_mut(32)) {
            let (mut acc, mut held, mut next) = (0u64, 0usize, 0usize);
            for v in o.iter_mut() {
                if held < BITS {
                    acc |= (ws[next] as u64) << held;
                    next += 1;
                    held += 32;
                }
                *v = A::level((acc & mask) as u32);
                acc >>= BITS;
                held -= BITS;
            }
        }
    }
}

/// Runs `$body` with the const `$b` bound to `$bits` (one of 1, 2, 3, 4, 5, 6, 8; checked
/// when recorded), so that unpacking is specialised and inlined.
macro_rules! with_bits {
    ($bits:expr, $b:ident => $body:expr) => {
        match $bits {
            1 => {
                const $b: usize = 1;
                $body
            }
            2 => {
                const $b: usize = 2;
                $body
            }
            3 => {
                const $b: usize = 3;
                $body
            }
            4 => {
                const $b: usize = 4;
                $body
            }
            5 => {
                const $b: usize = 5;
                $body
            }
            6 => {
                const $b: usize = 6;
                $body
            }
            _ => {
                const $b: usize = 8;
                $body
            }
        }
    };
}

/// Packs `levels` (a whole number of groups, each below `2^bits`) into `out`.
fn pack(levels: &[u64], bits: usize, out: &mut [u32]) {
    let (mut acc, mut held, mut next) = (0u64, 0usize, 0usize);
    for &q in levels {
        acc |= q << held;
        held += bits;
        if held >= 32 {
            out[next] = acc as u32;
            next += 1;
            acc >>= 32;
            held -= 32;
        }
    }
}

/// Rows handed to one parallel task: at least this many elements.
const TASK_ELEMENTS: usize = 1 << 15;

/// Quantizes each group of `packing.group_size` elements along the last axis of `w`
/// (float16, bfloat16, float32 or float64) exactly as MLX's CPU kernel does. Returns the
/// packed uint32 words and the scales and biases in `w`'s dtype.
pub fn quantize(w: Tensor, packing: Packing) -> Result<[Tensor; 3]> {
    with_real!(w.dtype, T => quantize_typed::<T>(w, packing))
}

fn quantize_typed<T: Real>(w: Tensor, packing: Packing) -> Result<[Tensor; 3]> {
    let w = contiguous(w)?;
    let nd = w.ndim();
    let cols = w.shape[nd - 1];
    let Packing {
        group_size, bits, ..
    } = packing;
    let mut words_shape = w.shape.clone();
    words_shape[nd - 1] = cols * bits / 32;
    let mut group_shape = w.shape.clone();
    group_shape[nd - 1] = cols / group_size;
    let mut words = Tensor::uninit(DType::UInt32, &words_shape)?;
    let mut scales = Tensor::uninit(T::DTYPE, &group_shape)?;
    let mut biases = Tensor::uninit(T::DTYPE, &group_shape)?;
    let groups = w.size() / group_size.max(1);
    if groups == 0 {
        return Ok([words, scales, biases]);
    }
    let src = w.slice::<T>();
    let per_task = (TASK_ELEMENTS / group_size).max(1);
    let wpg = packing.words_per_group();
    src.par_chunks(group_size * per_task)
        .zip(words.slice_mut::<u32>().par_chunks_mut(wpg * per_task))
        .zip(scales.slice_mut::<T>().par_chunks_mut(per_task))
        .zip(biases.slice_mut::<T>().par_chunks_mut(per_task))
        .for_each(|(((src, words), scales), biases)| {
            let mut levels = vec![0u64; group_size];
            for (((group, words), scale), bias) in src
                .chunks_exact(group_size)
                .zip(words.chunks_exact_mut(wpg))
                .zip(scales.iter_mut())
                .zip(biases.iter_mut())
            {
                let (s, b) = quantize_group(group, bits, &mut levels);
                pack(&levels, bits, words);
                *scale = T::narrow(s);
                *bias = T::narrow(b);
            }
        });
    Ok([words, scales, biases])
}

/// One group's scale, bias and levels, with MLX's arithmetic: the scale is nudged so that
/// the extreme of larger magnitude is represented exactly, and it is negative when that
/// extreme is the maximum. C++'s `std::max`/`std::min` semantics skip NaNs in the extremes.
fn quantize_group<T: Real>(group: &[T], bits: usize, levels: &mut [u64]) -> (T::Acc, T::Acc) {
    let top = T::Acc::level((1u32 << bits) - 1);
    let (mut lo, mut hi) = (T::Acc::INFINITY, T::Acc::ZERO - T::Acc::INFINITY);
    for &v in group {
        let v = v.widen();
        if hi < v {
            hi = v;
        }
        if v < lo {
            lo = v;
        }
    }
    let at_least_eps = |s: T::Acc| if s < T::Acc::EPS { T::Acc::EPS } else { s };
    let (scale, bias) = if bits == 1 {
        (at_least_eps(hi - lo), lo)
    } else {
        let low_dominates = lo.abs() > hi.abs();
        let magnitude = at_least_eps((hi - lo) / top);
        let scale = if low_dominates {
            magnitude
        } else {
            T::Acc::ZERO - magnitude
        };
        let edge = if low_dominates { lo } else { hi };
        let q0 = (edge / scale).rint();
        if q0 != T::Acc::ZERO {
            (edge / q0, edge)
        } else {
            (scale, T::Acc::ZERO)
        }
    };
    for (q, &v) in levels.iter_mut().zip(group) {
        let level = ((v.widen() - bias) / scale).rint();
        let level = if level < T::Acc::ZERO {
            T::Acc::ZERO
        } else if top < level {
            top
        } else {
            level
        };
        *q = level.to_level();
    }
    (scale, bias)
}

/// `scale * level + bias` for every element of the packed `w` (uint32, last axis packed),
/// with `scales` and `biases` of one float dtype, which is the result's. As MLX composes
/// it from ops, the product and the sum are each rounded to that dtype.
pub fn dequantize(w: Tensor, scales: Tensor, biases: Tensor, packing: Packing) -> Result<Tensor> {
    with_real!(scales.dtype, T => dequantize_typed::<T>(w, scales, biases, packing))
}

fn dequantize_typed<T: Real>(
    w: Tensor,
    scales: Tensor,
    biases: Tensor,
    packing: Packing,
) -> Result<Tensor> {
    let w = contiguous(w)?;
    let scales = contiguous(scales)?;
    let biases = contiguous(biases)?;
    let nd = w.ndim();
    let Packing {
        group_size, bits, ..
    } = packing;
    let mut shape = w.shape.clone();
    shape[nd - 1] = w.shape[nd - 1] * 32 / bits;
    let mut out = Tensor::uninit(T::DTYPE, &shape)?;
    if out.size() == 0 {
        return Ok(out);
    }
    with_bits!(bits, B => dequantize_rows::<T, B>(
        out.slice_mut::<T>(),
        w.slice::<u32>(),
        scales.slice::<T>(),
        biases.slice::<T>(),
        group_size,
    ));
    Ok(out)
}

fn dequantize_rows<T: Real, const BITS: usize>(
    out: &mut [T],
    words: &[u32],
    scales: &[T],
    biases: &[T],
    group_size: usize,
) {
    let per_task = (TASK_ELEMENTS / group_size).max(1);
    let wpg = group_size * BITS / 32;
    out.par_chunks_mut(group_size * per_task)
        .zip(words.par_chunks(wpg * per_task))
        .zip(scales.par_chunks(per_task))
        .zip(biases.par_chunks(per_task))
        .for_each(|(((out, words), scales), biases)| {
            vectorised(
                #[inline(always)]
                || {
                    let mut levels = vec![T::Acc::ZERO; group_size];
                    for (((out, words), &s), &b) in out
                        .chunks_exact_mut(group_size)
                        .zip(words.chunks_exact(wpg))
                        .zip(scales)
                        .zip(biases)
                    {
                        unpack::<BITS, T::Acc>(words, &mut levels);
                        let (s, b) = (s.widen(), b.widen());
                        for (o, &q) in out.iter_mut().zip(&levels) {
                            *o = T::narrow(T::narrow(q * s).widen() + b);
                        }
                    }
                },
            )
        });
}

/// The geometry of a quantized product: `x` is `(batch, m, k)`, the result `(batch, m, n)`;
/// with `transpose` the packed matrix holds `W` as `(n, k)` and the result is `x @ W^T`,
/// otherwise it holds `W` as `(k, n)` and the result is `x @ W`.
#[derive(Clone, Copy, Debug)]
pub struct Product {
    pub batch: usize,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub transpose: bool,
}

/// At most this many rows of `x` use the fused kernel (each packed row is unpacked once
/// and dotted with every row of `x`); more go through the bfloat16 pair-product tiles or
/// dequantized tiles and gemm.
const FUSED_MAX_ROWS: usize = 8;

/// One product's operands: `x`, the packed matrix and how it is packed, and the shape
/// of the result.
pub struct QuantizedOperands {
    pub x: Tensor,
    pub w: Tensor,
    pub scales: Tensor,
    pub biases: Option<Tensor>,
    pub packing: Packing,
    pub product: Product,
    pub out_shape: Vec<usize>,
}

/// `x @ W^T` or `x @ W` for `W` quantized as `w`, `scales` and, in affine mode, `biases`
/// (see [`Product`]). `x` has a float dtype, the result's; affine scales and biases have
/// it too, floating-point modes' scales are uint8. `w` and the scales may have batch
/// dimensions broadcast (stride 0), their last two dimensions of any layout.
pub fn quantized_matmul(operands: QuantizedOperands) -> Result<Tensor> {
    let QuantizedOperands {
        x,
        w,
        scales,
        biases,
        packing,
        product,
        out_shape,
    } = operands;
    let out_shape = &out_shape[..];
    let dtype = x.dtype;
    let w = with_matrices_contiguous(w)?;
    let Some(biases) = biases else {
        let out = match dtype {
            DType::Float64 => qmm_typed::<f64>(x, w, scales, None, packing, product, out_shape)?,
            _ => qmm_typed::<f32>(x, w, scales, None, packing, product, out_shape)?,
        };
        return narrowed(out, dtype);
    };
    if product.m > FUSED_MAX_ROWS {
        if let Some(tiles) = paired::applies(dtype, scales.dtype, packing, product) {
            let operands = rows::Operands {
                x,
                w,
                scales,
                biases,
            };
            let out = paired::product(operands, packing, product, out_shape, tiles)?;
            return narrowed(out, dtype);
        }
    }
    let kernel = match dtype {
        DType::Float64 => None,
        _ => rows::kernel(packing, product, FUSED_MAX_ROWS, dtype),
    };
    let out = match (dtype, kernel) {
        (DType::Float64, _) => {
            qmm_typed::<f64>(x, w, scales, Some(biases), packing, product, out_shape)?
        }
        (_, Some(kernel)) => {
            // The byte product reads a bfloat16 `x` as stored; the float32 path widens it.
            let x = match kernel {
                rows::Kernel::BFloat16(_) => contiguous(x)?,
                rows::Kernel::Float32(_) => widened::<f32>(x)?,
            };
            let few_rows = rows::Operands {
                x,
                w,
                scales,
                biases,
            };
            match dtype {
                DType::Float16 => {
                    rows::product::<f16>(kernel, few_rows, packing, product, out_shape)?
                }
                DType::BFloat16 => {
                    rows::product::<bf16>(kernel, few_rows, packing, product, out_shape)?
                }
                _ => rows::product::<f32>(kernel, few_rows, packing, product, out_shape)?,
            }
        }
        _ => qmm_typed::<f32>(x, w, scales, Some(biases), packing, product, out_shape)?,
    };
    narrowed(out, dtype)
}

/// Independent products, one result each, as [`quantized_matmul`] gives them. Those of
/// one bfloat16 row on the byte product (a decode step's queries, keys and values, or its
/// gate and up projections) run as one parallel job and lay out an `x` they share once:
/// the start and end of a job cost the threads a few microseconds, a tenth of such a
/// product. The others run one after another.
pub fn quantized_matmuls(products: Vec<QuantizedOperands>) -> Vec<Result<Tensor>> {
    let mut results: Vec<Option<Result<Tensor>>> = products.iter().map(|_| None).collect();
    // The products that share the job, with their places in `results`.
    let mut joint: Vec<(usize, rows::RowProduct)> = Vec::new();
    let mut joint_kernel = None;
    for (i, p) in products.into_iter().enumerate() {
        let Some(kernel) = one_row_byte_product(&p) else {
            results[i] = Some(quantized_matmul(p));
            continue;
        };
        let biases = p.biases.expect("the byte product has biases");
        joint_kernel = Some(kernel);
        match with_matrices_contiguous(p.w) {
            Ok(w) => joint.push((
                i,
                rows::RowProduct {
                    x: p.x,
                    w,
                    scales: p.scales,
                    biases,
                    packing: p.packing,
                    product: p.product,
                    out_shape: p.out_shape,
                },
            )),
            Err(e) => results[i] = Some(Err(e)),
        }
    }
    if let Some(kernel) = joint_kernel {
        let (places, parts): (Vec<usize>, Vec<rows::RowProduct>) = joint.into_iter().unzip();
        match rows::row_products(kernel, parts) {
            Ok(outs) => {
                for (i, out) in places.into_iter().zip(outs) {
                    results[i] = Some(Ok(out));
                }
            }
            Err(e) => {
                for i in places {
                    results[i] = Some(Err(e.clone()));
                }
            }
        }
    }
    results
        .into_iter()
        .map(|r| r.expect("every product has its result"))
        .collect()
}

/// The byte product, if `p` is one row of a bfloat16 `x` with bfloat16 scales and biases
/// that [`quantized_matmul`] would run on it.
fn one_row_byte_product(p: &QuantizedOperands) -> Option<simd::ByteDots> {
    let fits = p.x.dtype == DType::BFloat16
        && p.scales.dtype == DType::BFloat16
        && p.biases
            .as_ref()
            .is_some_and(|b| b.dtype == DType::BFloat16)
        && p.product.m == 1
        && p.product.batch == 1;
    match rows::kernel(p.packing, p.product, FUSED_MAX_ROWS, p.x.dtype) {
        Some(rows::Kernel::BFloat16(kernel)) if fits => Some(kernel),
        _ => None,
    }
}

/// `out` (float32 or float64, or already of `dtype`) as `dtype`.
fn narrowed(out: Tensor, dtype: DType) -> Result<Tensor> {
    if out.dtype == dtype {
        Ok(out)
    } else {
        with_real!(dtype, T => cast::<f32, T>(out))
    }
}

/// `w` with its last two dimensions contiguous (batch dimensions may stay broadcast).
fn with_matrices_contiguous(w: Tensor) -> Result<Tensor> {
    let nd = w.ndim();
    let inner_contiguous = (w.shape[nd - 1] <= 1 || w.strides[nd - 1] == 1)
        && (w.shape[nd - 2] <= 1 || w.strides[nd - 2] == w.shape[nd - 1] as isize);
    if inner_contiguous {
        Ok(w)
    } else {
        map1::<u32, u32>(w, |v| v)
    }
}

/// Raw pointers handed to worker threads, which write disjoint parts of the result.
#[derive(Copy, Clone)]
struct SendPtr<T>(*mut T);
// SAFETY: the pointers address buffers that outlive the parallel loops, and threads write
// disjoint elements.
unsafe impl<T> Send for SendPtr<T> {}
unsafe impl<T> Sync for SendPtr<T> {}

impl<T> SendPtr<T> {
    /// The pointer (a method, so that closures capture the whole `Send` wrapper).
    fn get(self) -> *mut T {
        self.0
    }
}

fn qmm_typed<A: Acc>(
    x: Tensor,
    w: Tensor,
    scales: Tensor,
    biases: Option<Tensor>,
    packing: Packing,
    p: Product,
    out_shape: &[usize],
) -> Result<Tensor> {
    let x = widened::<A>(x)?;
    let mut out = Tensor::uninit(A::DTYPE, out_shape)?;
    if out.size() == 0 {
        return Ok(out);
    }
    let (rows, cols) = if p.transpose { (p.n, p.k) } else { (p.k, p.n) };
    let words_per_row = cols * packing.bits / 32;
    let groups_per_row = cols / packing.group_size;
    let words = w.buf.as_ptr() as *const u32;
    let xs = x.slice::<A>();
    let dst = out.slice_mut::<A>();
    let g = rows * groups_per_row;
    // The floating-point modes read their scale bytes and element codes through tables.
    let fp = match packing.mode.format() {
        Some(format) => Some((contiguous(scales.clone())?, FpTables::new(format))),
        None => None,
    };
    let affine = match (&fp, biases) {
        (None, Some(biases)) => Some((widened::<A>(scales)?, widened::<A>(biases)?)),
        _ => None,
    };
    for b in 0..p.batch {
        // SAFETY: the offset addresses the first word of matrix `b` inside w's buffer, and
        // its last two dimensions are contiguous: rows * words_per_row words follow.
        let wb = unsafe {
            std::slice::from_raw_parts(words.offset(batch_offset(&w, b)), rows * words_per_row)
        };
        let x = &xs[b * p.m * p.k..][..p.m * p.k];
        let out = &mut dst[b * p.m * p.n..][..p.m * p.n];
        if p.k == 0 {
            out.fill(A::ZERO);
            continue;
        }
        if let Some((scales, tables)) = &fp {
            let matrix = FpMatrix {
                bytes: bytemuck::cast_slice(wb),
                scales: &scales.slice::<u8>()[b * g..][..g],
                bytes_per_row: words_per_row * 4,
                groups_per_row,
                group_size: packing.group_size,
                tables,
            };
            product_with(x, &matrix, p, out)?;
        } else if let Some((scales, biases)) = &affine {
            let matrix = Quantized {
                words: wb,
                scales: &scales.slice::<A>()[b * g..][..g],
                biases: &biases.slice::<A>()[b * g..][..g],
                words_per_row,
                groups_per_row,
                packing,
            };
            with_bits!(packing.bits, B => product_with(x, &Levels::<A, B>(&matrix), p, out))?;
        }
    }
    Ok(out)
}

/// The fused kernel for few rows of `x` with `W` transposed, else gemm over decoded panels.
fn product_with<A: Acc, M: Matrix<A>>(x: &[A], w: &M, p: Product, out: &mut [A]) -> Result<()> {
    if p.transpose && p.m <= FUSED_MAX_ROWS {
        fused_rows(x, w, p, out);
    } else {
        let geometry = Geometry {
            m: p.m,
            n: p.n,
            k: p.k,
            transpose: p.transpose,
        };
        tiles::product(x, geometry, out, |rows, cols, tile| {
            dequantize_block(w, rows, cols, tile)
        })?;
    }
    Ok(())
}

/// Element offset of matrix `batch` (row-major over the batch dimensions) of `t`.
fn batch_offset(t: &Tensor, batch: usize) -> isize {
    let nd = t.ndim();
    let mut rem = batch;
    let mut off = t.offset as isize;
    for (&d, &s) in t.shape[..nd - 2].iter().zip(&t.strides[..nd - 2]).rev() {
        off += (rem % d) as isize * s;
        rem /= d;
    }
    off
}

/// One packed matrix of logical shape `(rows, cols)` with its per-group scales and biases.
struct Quantized<'a, A> {
    words: &'a [u32],
    scales: &'a [A],
    biases: &'a [A],
    words_per_row: usize,
    groups_per_row: usize,
    packing: Packing,
}

/// A packed matrix as the generic product kernels read it: a group at a time, as values
/// before scaling with the group's scale and bias.
trait Matrix<A: Acc>: Sync {
    /// Whether groups have biases (affine) or not (the floating-point modes).
    const BIASED: bool;
    fn group_size(&self) -> usize;
    fn groups_per_row(&self) -> usize;
    /// Writes the unscaled values of group `g` of row `r` into `out`; returns the group's
    /// scale and bias (zero when unbiased).
    fn group(&self, r: usize, g: usize, out: &mut [A]) -> (A, A);
}

/// An affine matrix of `BITS`-bit levels.
struct Levels<'q, 'a, A, const BITS: usize>(&'q Quantized<'a, A>);

impl<A: Acc, const BITS: usize> Matrix<A> for Levels<'_, '_, A, BITS> {
    const BIASED: bool = true;
    fn group_size(&self) -> usize {
        self.0.packing.group_size
    }
    fn groups_per_row(&self) -> usize {
        self.0.groups_per_row
    }
    #[inline(always)]
    fn group(&self, r: usize, g: usize, out: &mut [A]) -> (A, A) {
        let w = self.0;
        let wpg = w.packing.group_size * BITS / 32;
        unpack::<BITS, A>(&w.words[r * w.words_per_row + g * wpg..][..wpg], out);
        let at = r * w.groups_per_row + g;
        (w.scales[at], w.biases[at])
    }
}

/// Decoding tables of a floating-point format in the accumulator type: the two E2M1
/// values of every byte (or the E4M3 value of every byte), and every scale byte's scale.
/// Fixed-size arrays, so that indexing with a byte needs no bounds check.
struct FpTables<A> {
    format: fp::Format,
    pairs: [[A; 2]; 256],
    bytes: [A; 256],
    scales: [A; 256],
}

impl<A: Acc> FpTables<A> {
    fn new(format: fp::Format) -> FpTables<A> {
        let element = |c: u8| A::from_f32(format.element(c));
        FpTables {
            format,
            pairs: std::array::from_fn(|b| [element(b as u8 & 15), element(b as u8 >> 4)]),
            bytes: std::array::from_fn(|b| element(b as u8)),
            scales: std::array::from_fn(|b| A::from_f32(format.scale(b as u8))),
        }
    }
}

/// A matrix in a floating-point mode: element codes and a scale byte per group.
struct FpMatrix<'a, A> {
    bytes: &'a [u8],
    scales: &'a [u8],
    bytes_per_row: usize,
    groups_per_row: usize,
    group_size: usize,
    tables: &'a FpTables<A>,
}

impl<A: Acc> Matrix<A> for FpMatrix<'_, A> {
    const BIASED: bool = false;
    fn group_size(&self) -> usize {
        self.group_size
    }
    fn groups_per_row(&self) -> usize {
        self.groups_per_row
    }
    #[inline(always)]
    fn group(&self, r: usize, g: usize, out: &mut [A]) -> (A, A) {
        let t = self.tables;
        let scale = t.scales[self.scales[r * self.groups_per_row + g] as usize];
        let row = &self.bytes[r * self.bytes_per_row..];
        if t.format == fp::Format::Mxfp8 {
            let codes = &row[g * self.group_size..][..self.group_size];
            for (o, &c) in out.iter_mut().zip(codes) {
                *o = t.bytes[c as usize];
            }
        } else {
            let codes = &row[g * self.group_size / 2..][..self.group_size / 2];
            for (o, &c) in out.chunks_exact_mut(2).zip(codes) {
                let [lo, hi] = t.pairs[c as usize];
                o[0] = lo;
                o[1] = hi;
            }
        }
        (scale, A::ZERO)
    }
}

/// Writes `W[r, c]` for rows `rows` and columns `cols` (whole groups) into `tile`,
/// row-major.
#[inline(always)]
fn dequantize_block<A: Acc, M: Matrix<A>>(
    w: &M,
    rows: std::ops::Range<usize>,
    cols: std::ops::Range<usize>,
    tile: &mut [A],
) {
    let group_size = w.group_size();
    let width = cols.len();
    let first = cols.start / group_size;
    for (r, out_row) in rows.zip(tile.chunks_exact_mut(width)) {
        for (i, out) in out_row.chunks_exact_mut(group_size).enumerate() {
            let (s, b) = w.group(r, first + i, out);
            if M::BIASED {
                for v in out.iter_mut() {
                    *v = *v * s + b;
                }
            } else {
                for v in out.iter_mut() {
                    *v = *v * s;
                }
            }
        }
    }
}

/// `x @ W^T` for few rows of `x`: each packed row of `W` is decoded once per group and
/// used for every row of `x`, as `s * (x_g . q_g) + b * sum(x_g)`.
fn fused_rows<A: Acc, M: Matrix<A>>(x: &[A], w: &M, p: Product, out: &mut [A]) {
    let group_size = w.group_size();
    let groups = w.groups_per_row();
    // Sum of each group of each row of x (for the biases).
    let x_sums: Vec<A> = if M::BIASED {
        x.chunks_exact(group_size)
            .map(|g| g.iter().fold(A::ZERO, |acc, &v| acc + v))
            .collect()
    } else {
        Vec::new()
    };
    let dst = SendPtr(out.as_mut_ptr());
    let rows_per_task = (TASK_ELEMENTS / p.k).max(1);
    (0..p.n.div_ceil(rows_per_task))
        .into_par_iter()
        .for_each(|task| {
            vectorised(
                #[inline(always)]
                || {
                    let mut levels = vec![A::ZERO; group_size];
                    let mut acc = vec![A::ZERO; p.m];
                    let end = ((task + 1) * rows_per_task).min(p.n);
                    if !M::BIASED {
                        // Without biases a whole row of W is decoded and scaled once, then
                        // dotted with each row of x: one horizontal sum per result rather
                        // than one per group (nvfp4's groups are a single 16-lane vector).
                        let mut row = vec![A::ZERO; p.k];
                        for n in task * rows_per_task..end {
                            for (g, values) in row.chunks_exact_mut(group_size).enumerate() {
                                let (s, _) = w.group(n, g, values);
                                for v in values.iter_mut() {
                                    *v = *v * s;
                                }
                            }
                            for (m, xm) in x.chunks_exact(p.k).enumerate() {
                                // SAFETY: (m, n) is inside the m x n result and this task
                                // alone writes column n.
                                unsafe { *dst.get().add(m * p.n + n) = dot(xm, &row) };
                            }
                        }
                        return;
                    }
                    for n in task * rows_per_task..end {
                        acc.fill(A::ZERO);
                        for g in 0..groups {
                            let (s, b) = w.group(n, g, &mut levels);
                            for (m, a) in acc.iter_mut().enumerate() {
                                let xg = &x[m * p.k + g * group_size..][..group_size];
                                *a = *a + s * dot(xg, &levels);
                                if M::BIASED {
                                    *a = *a + b * x_sums[m * groups + g];
                                }
                            }
                        }
                        for (m, &a) in acc.iter().enumerate() {
                            // SAFETY: (m, n) is inside the m x n result and this task alone
                            // writes column n.
                            unsafe { *dst.get().add(m * p.n + n) = a };
                        }
                    }
                },
            )
        });
}

/// A dot product with 16 independent lanes, so that it vectorises.
#[inline(always)]
fn dot<A: Acc>(a: &[A], b: &[A]) -> A {
    let mut lanes = [A::ZERO; 16];
    let (ca, cb) = (a.chunks_exact(16), b.chunks_exact(16));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..16 {
            lanes[i] = lanes[i] + x[i] * y[i];
        }
    }
    let mut total = lanes.iter().fold(A::ZERO, |acc, &v| acc + v);
    for (&x, &y) in ra.iter().zip(rb) {
        total = total + x * y;
    }
    total
}
