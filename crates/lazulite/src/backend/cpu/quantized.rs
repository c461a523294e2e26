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

mod rows;

use super::elementwise::{cast, map1};
use super::simd::vectorised;
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
{
    const ZERO: Self;
    const ONE: Self;
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
}

impl Acc for f32 {
    const ZERO: f32 = 0.0;
    const ONE: f32 = 1.0;
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
}

impl Acc for f64 {
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
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
}

/// A float element type that can be quantized, with the type it computes in.
pub trait Real: Element<Storage = Self> {
    type Acc: Acc;
    fn widen(self) -> Self::Acc;
    fn narrow(a: Self::Acc) -> Self;
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
real!(bf16, f32, bf16::to_f32, bf16::from_f32);

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

/// How a quantized matrix is packed: elements per scale and bits per element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packing {
    pub group_size: usize,
    pub bits: usize,
}

impl Packing {
    /// uint32 words holding one group.
    fn words_per_group(self) -> usize {
        self.group_size * self.bits / 32
    }
}

/// A contiguous tensor: `t` itself when it already is one.
fn contiguous<T: Element>(t: Tensor) -> Result<Tensor> {
    if t.is_contiguous() {
        Ok(t)
    } else {
        map1::<T, T>(t, |v| v)
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
    let w = contiguous::<T>(w)?;
    let nd = w.ndim();
    let cols = w.shape[nd - 1];
    let Packing { group_size, bits } = packing;
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
    let w = contiguous::<u32>(w)?;
    let scales = contiguous::<T>(scales)?;
    let biases = contiguous::<T>(biases)?;
    let nd = w.ndim();
    let Packing { group_size, bits } = packing;
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
/// and dotted with every row of `x`); more go through dequantized tiles and gemm.
const FUSED_MAX_ROWS: usize = 8;

/// Columns of the result (a multiple of every group size) and depth per dequantized tile.
const TILE_N: usize = 128;
const TILE_K: usize = 512;

/// `x @ W^T` or `x @ W` for `W` quantized as `w`, `scales`, `biases` (see [`Product`]).
/// `x`, `scales` and `biases` have one float dtype, the result's; `w` and the scales may
/// have batch dimensions broadcast (stride 0), their last two dimensions of any layout.
pub fn quantized_matmul(
    x: Tensor,
    w: Tensor,
    scales: Tensor,
    biases: Tensor,
    packing: Packing,
    product: Product,
    out_shape: &[usize],
) -> Result<Tensor> {
    let dtype = x.dtype;
    let w = with_matrices_contiguous(w)?;
    let kernel = match dtype {
        DType::Float64 => None,
        _ => rows::kernel(packing, product, FUSED_MAX_ROWS),
    };
    let out = match (dtype, kernel) {
        (DType::Float64, _) => qmm_typed::<f64>(x, w, scales, biases, packing, product, out_shape)?,
        (_, Some(kernel)) => {
            let x = widened::<f32>(x)?;
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
        _ => qmm_typed::<f32>(x, w, scales, biases, packing, product, out_shape)?,
    };
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
    biases: Tensor,
    packing: Packing,
    p: Product,
    out_shape: &[usize],
) -> Result<Tensor> {
    let x = widened::<A>(x)?;
    let scales = widened::<A>(scales)?;
    let biases = widened::<A>(biases)?;
    let mut out = Tensor::uninit(A::DTYPE, out_shape)?;
    if out.size() == 0 {
        return Ok(out);
    }
    let (rows, cols) = if p.transpose { (p.n, p.k) } else { (p.k, p.n) };
    let words_per_row = cols * packing.bits / 32;
    let groups_per_row = cols / packing.group_size;
    let words = w.buf.as_ptr() as *const u32;
    let (xs, ss, bs) = (x.slice::<A>(), scales.slice::<A>(), biases.slice::<A>());
    let dst = out.slice_mut::<A>();
    for b in 0..p.batch {
        // SAFETY: the offset addresses the first word of matrix `b` inside w's buffer, and
        // its last two dimensions are contiguous: rows * words_per_row words follow.
        let wb = unsafe {
            std::slice::from_raw_parts(words.offset(batch_offset(&w, b)), rows * words_per_row)
        };
        let g = rows * groups_per_row;
        let matrix = Quantized {
            words: wb,
            scales: &ss[b * g..][..g],
            biases: &bs[b * g..][..g],
            words_per_row,
            groups_per_row,
            packing,
        };
        let x = &xs[b * p.m * p.k..][..p.m * p.k];
        let out = &mut dst[b * p.m * p.n..][..p.m * p.n];
        if p.k == 0 {
            out.fill(A::ZERO);
        } else if p.transpose && p.m <= FUSED_MAX_ROWS {
            with_bits!(packing.bits, B => fused_rows::<A, B>(x, &matrix, p, out));
        } else {
            with_bits!(packing.bits, B => tiled::<A, B>(x, &matrix, p, out));
        }
    }
    Ok(out)
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

impl<A: Acc> Quantized<'_, A> {
    /// Writes `W[r, c]` for rows `rows` and columns `cols` (whole groups) into `tile`,
    /// row-major.
    #[inline(always)]
    fn dequantize_block<const BITS: usize>(
        &self,
        rows: std::ops::Range<usize>,
        cols: std::ops::Range<usize>,
        tile: &mut [A],
    ) {
        let group_size = self.packing.group_size;
        let wpg = group_size * BITS / 32;
        let width = cols.len();
        let first = cols.start / group_size;
        for (r, out_row) in rows.zip(tile.chunks_exact_mut(width)) {
            let words = &self.words[r * self.words_per_row..];
            let at = r * self.groups_per_row + first;
            for (i, out) in out_row.chunks_exact_mut(group_size).enumerate() {
                unpack::<BITS, A>(&words[(first + i) * wpg..][..wpg], out);
                let (s, b) = (self.scales[at + i], self.biases[at + i]);
                for v in out.iter_mut() {
                    *v = *v * s + b;
                }
            }
        }
    }
}

/// `x @ W^T` for few rows of `x`: each packed row of `W` is unpacked once per group and
/// used for every row of `x`, as `s * (x_g . q_g) + b * sum(x_g)`.
fn fused_rows<A: Acc, const BITS: usize>(x: &[A], w: &Quantized<'_, A>, p: Product, out: &mut [A]) {
    let group_size = w.packing.group_size;
    let wpg = group_size * BITS / 32;
    let groups = w.groups_per_row;
    // Sum of each group of each row of x.
    let x_sums: Vec<A> = x
        .chunks_exact(group_size)
        .map(|g| g.iter().fold(A::ZERO, |acc, &v| acc + v))
        .collect();
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
                    for n in task * rows_per_task..end {
                        acc.fill(A::ZERO);
                        let words = &w.words[n * w.words_per_row..][..w.words_per_row];
                        for g in 0..groups {
                            unpack::<BITS, A>(&words[g * wpg..][..wpg], &mut levels);
                            let (s, b) = (w.scales[n * groups + g], w.biases[n * groups + g]);
                            for (m, a) in acc.iter_mut().enumerate() {
                                let xg = &x[m * p.k + g * group_size..][..group_size];
                                *a = *a + s * dot(xg, &levels) + b * x_sums[m * groups + g];
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

/// The product through dequantized tiles: blocks of result columns in parallel, each
/// accumulating gemm products over tiles of `TILE_K` depth.
fn tiled<A: Acc, const BITS: usize>(x: &[A], w: &Quantized<'_, A>, p: Product, out: &mut [A]) {
    let dst = SendPtr(out.as_mut_ptr());
    let src = SendPtr(x.as_ptr() as *mut A);
    let blocks = p.n.div_ceil(TILE_N);
    (0..blocks).into_par_iter().for_each_init(
        || vec![A::ZERO; TILE_N * TILE_K],
        |tile, block| {
            let n0 = block * TILE_N;
            let nb = TILE_N.min(p.n - n0);
            let mut k0 = 0;
            while k0 < p.k {
                let kc = TILE_K.min(p.k - k0);
                let tile = &mut tile[..nb * kc];
                // The tile holds W's block as (nb, kc) with `transpose`, else (kc, nb).
                let (rhs_cs, rhs_rs) = if p.transpose {
                    vectorised(
                        #[inline(always)]
                        || w.dequantize_block::<BITS>(n0..n0 + nb, k0..k0 + kc, tile),
                    );
                    (kc as isize, 1)
                } else {
                    vectorised(
                        #[inline(always)]
                        || w.dequantize_block::<BITS>(k0..k0 + kc, n0..n0 + nb, tile),
                    );
                    (1, nb as isize)
                };
                // SAFETY: x is m x k, the result m x n, the tile nb x kc (or kc x nb), all
                // contiguous; this task alone writes result columns n0..n0 + nb.
                unsafe {
                    gemm::gemm(
                        p.m,
                        nb,
                        kc,
                        dst.get().add(n0),
                        1,
                        p.n as isize,
                        k0 > 0,
                        src.get().add(k0),
                        1,
                        p.k as isize,
                        tile.as_ptr(),
                        rhs_cs,
                        rhs_rs,
                        A::ONE,
                        A::ONE,
                        false,
                        false,
                        false,
                        gemm::Parallelism::None,
                    )
                };
                k0 += kc;
            }
        },
    );
}
