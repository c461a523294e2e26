//! Vectorised f32 math: slice kernels for the transcendental and rounding functions, with
//! a path per instruction set (AVX-512F, AVX2 + FMA, scalar) chosen at run time.
//!
//! The vector paths share one implementation of each function ([`math`]) written over the
//! [`vector::Vector`] trait; `avx2` and `avx512` implement that trait and provide the
//! `#[target_feature]` entry points. The scalar path (any CPU, any architecture) calls
//! `std`. Every path is within 2 ulp of the correctly rounded result.
//!
//! The path is the best the CPU supports, unless the environment variable
//! `LAZULITE_SIMD` (`scalar`, `avx2` or `avx512`, read once) asks for a lower one.

#[cfg(target_arch = "x86_64")]
mod amx;
mod attention;
#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
mod bf16_pairs;
mod bf16_tiles;
mod byte_dots;
#[cfg(target_arch = "x86_64")]
mod fold;
mod halves;
#[cfg(target_arch = "x86_64")]
mod math;
mod packed;
mod strided_rows;
mod tensor;
#[cfg(test)]
mod tests;
#[cfg(target_arch = "x86_64")]
mod vector;

pub use attention::AttentionProducts;
pub use bf16_pairs::{packed_bf16_dots, scaled_near, PackedBf16Dots, PLAIN_EXPONENT};
pub use bf16_tiles::{bf16_tiles, level_offset, Bf16Tiles, GroupedTile, TILE_COLUMNS};
pub use byte_dots::{bf16_rows_fit, byte_dots, AffineRows, BFloat16Vector, ByteDots};
pub use halves::{Half, HalfDots};
pub use packed::{LaidOut, PackedDots, PackedRows, MAX_VECTORS, SCALE_PADDING};
pub use strided_rows::{RowElements, StridedRows};
pub use tensor::map;

use super::math::Float;
use super::parallel;
use crate::backend::op::UnaryOp;
use std::sync::OnceLock;

/// Asks for the cache lines of `data` ahead of their use (a hint; nothing happens where
/// the CPU has no such instruction). For arrays read in short runs that the hardware's
/// stream prefetchers pick up too late, like a few rows' quantization scales.
#[inline]
pub fn prefetch<T>(data: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let (start, len) = (data.as_ptr().cast::<i8>(), std::mem::size_of_val(data));
        for offset in (0..len).step_by(64) {
            // SAFETY: a prefetch never faults; the address lies inside `data`.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(start.wrapping_add(offset)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = data;
}

/// How far ahead of its read position a kernel streaming weights from memory asks for
/// them, and into which cache.
#[cfg(target_arch = "x86_64")]
#[derive(Copy, Clone)]
enum Ahead {
    /// 4 KB ahead into L2: two cores streaming need that many lines in flight (two threads
    /// reading 200 MB of packed weights: 20-24 GB/s fetching 4 KB ahead into L2, 16-18 GB/s
    /// fetching 1 KB ahead into L1). Also the float32 kernels' 8-bit packed rows, which
    /// unpack fast enough to wait on memory: 8-bit 2816 x 1024 products streamed by two
    /// threads of a 2-core Zen 3 read 29-32 GB/s this way, 25-30 with [`Ahead::Near`].
    Far,
    /// 1 KB ahead into L1, for float32 kernels that widen or unpack the weights on AVX2: a
    /// load that waits for memory stalls the work queued behind it, and the hardware's
    /// prefetchers alone run short. Measured on a 2-core Zen 3: 4-bit rows of 4096 levels
    /// ran at a third of this speed fetching 4 KB ahead into L2 (5 GB/s against 16); two
    /// threads reading 256 MB of bfloat16 rows, 6-16% faster than with no prefetch.
    Near,
    /// 8 KB ahead into L2, for the byte-product kernel, whose rows go by faster than the
    /// float32 kernels' (2-core Zen 4, alternated runs against 4 KB: the 85 products of a
    /// 4-bit decode step, each alone, 3.05 against 3.36 ms, `bench/llm.py` 4-bit decode
    /// 242 against 223 tokens/s; 8-bit products 4.8-5.8 ms against 5.8-6.3 with 1 KB into
    /// L1 as well, decode equal).
    Farther,
}

/// The exponent `e` for which `2^e` times `largest` (a magnitude) lies in `[2^target,
/// 2^(target + 1))`, or 0 for zero, infinity or NaN, which no scaling changes: how the
/// decode layouts bring a vector into the range their kernels compute exactly.
fn exponent_towards(largest: f32, target: i32) -> i32 {
    match largest > 0.0 && largest.is_finite() {
        // As f64, whose exponent field also holds those of subnormal f32 values.
        true => target - ((f64::from(largest).to_bits() >> 52) as i32 - 1023),
        false => 0,
    }
}

/// Whether this thread treats subnormal float inputs as zero (the DAZ flag of MXCSR,
/// which code built for fast math may set).
fn denormals_are_zero() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        // Reading the control register has no effect; the intrinsic is deprecated only
        // in favour of inline assembly for setting it.
        #[allow(deprecated)]
        // SAFETY: SSE is part of x86_64.
        let csr = unsafe { std::arch::x86_64::_mm_getcsr() };
        csr & (1 << 6) != 0
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Asks for the line `ahead` of `at`, in data read forwards (a hint: the address may lie
/// past the data).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn prefetch_ahead<T>(at: *const T, ahead: Ahead) {
    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0, _MM_HINT_T1};
    let at = at.cast::<i8>();
    // SAFETY (both): a prefetch never faults, whatever the address.
    match ahead {
        Ahead::Far => unsafe { _mm_prefetch::<_MM_HINT_T1>(at.wrapping_add(4096)) },
        Ahead::Near => unsafe { _mm_prefetch::<_MM_HINT_T0>(at.wrapping_add(1024)) },
        Ahead::Farther => unsafe { _mm_prefetch::<_MM_HINT_T1>(at.wrapping_add(8192)) },
    }
}

/// A slice kernel: a one-input op that has one, with its scalar implementation (the path
/// used where no vector one is available).
#[derive(Copy, Clone, Debug)]
pub struct Kernel {
    op: UnaryOp,
    scalar: fn(f32) -> f32,
}

impl Kernel {
    /// The exponential's kernel (softmax uses it directly).
    pub const EXP: Kernel = Kernel {
        op: UnaryOp::Exp,
        scalar: f32::exp,
    };

    /// The slice kernel computing `op`, if it has one.
    pub fn of(op: UnaryOp) -> Option<Kernel> {
        use UnaryOp::*;
        let scalar: fn(f32) -> f32 = match op {
            Exp => return Some(Kernel::EXP),
            Expm1 => f32::exp_m1,
            Log => f32::ln,
            Log1p => f32::ln_1p,
            Log2 => f32::log2,
            Log10 => f32::log10,
            Sin => f32::sin,
            Cos => f32::cos,
            Tan => f32::tan,
            Tanh => f32::tanh,
            Sinh => f32::sinh,
            Cosh => f32::cosh,
            Arctan => f32::atan,
            Arcsin => f32::asin,
            Arccos => f32::acos,
            // Through f64, where the intermediates neither overflow nor cancel.
            Arcsinh => |x| (x as f64).asinh() as f32,
            Arccosh => |x| (x as f64).acosh() as f32,
            Arctanh => |x| (x as f64).atanh() as f32,
            Erf => <f32 as Float>::erf,
            Erfinv => <f32 as Float>::erfinv,
            Sigmoid => <f32 as Float>::sigmoid,
            Sqrt => f32::sqrt,
            Rsqrt => <f32 as Float>::rsqrt,
            Floor => f32::floor,
            Ceil => f32::ceil,
            Round => f32::round_ties_even,
            Trunc => f32::trunc,
            Abs => f32::abs,
            Negative => |x| -x,
            Square => |x| x * x,
            // 1, -1, or 0 for ±0 (NumPy's sign); NaN stays NaN.
            Sign => <f32 as Float>::sign,
            Reciprocal => |x| 1.0 / x,
            _ => return None,
        };
        Some(Kernel { op, scalar })
    }

    /// The op computed.
    pub fn op(self) -> UnaryOp {
        self.op
    }

    /// The scalar implementation.
    pub fn scalar(self) -> fn(f32) -> f32 {
        self.scalar
    }
}

/// The kernel paths, in increasing order of capability.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Isa {
    Scalar,
    Avx2,
    Avx512,
}

impl Isa {
    /// The best path this CPU supports.
    pub fn detected() -> Isa {
        #[cfg(target_arch = "x86_64")]
        {
            if is_x86_feature_detected!("avx512f") {
                return Isa::Avx512;
            }
            if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
                return Isa::Avx2;
            }
        }
        Isa::Scalar
    }

    /// The path in use: [`Isa::detected`], lowered by `LAZULITE_SIMD` (unknown values are
    /// ignored). Read once.
    pub fn active() -> Isa {
        static ACTIVE: OnceLock<Isa> = OnceLock::new();
        *ACTIVE.get_or_init(|| {
            let requested = match std::env::var("LAZULITE_SIMD").as_deref() {
                Ok("scalar") => Isa::Scalar,
                Ok("avx2") => Isa::Avx2,
                _ => Isa::Avx512,
            };
            requested.min(Isa::detected())
        })
    }
}

/// The f32 reductions written over the lane types ([`fold`]): whole runs, rows added
/// into a row of accumulators, dot products. Sums accumulate in f64; max and min propagate NaN.
#[derive(Copy, Clone)]
pub struct Folds {
    /// The sum of a run.
    pub sum: fn(&[f32]) -> f64,
    /// The dot product of two runs (over the shorter length), accumulated in f32.
    pub dot: fn(&[f32], &[f32]) -> f32,
    /// The largest value of a run (-inf if empty).
    pub max: fn(&[f32]) -> f32,
    /// The smallest value of a run (+inf if empty).
    pub min: fn(&[f32]) -> f32,
    /// `acc[i] += row[i]` for every accumulator (`row` at least as long).
    pub add_row: fn(&mut [f64], &[f32]),
    /// `acc[i] = max(acc[i], row[i])`, a NaN on either side winning.
    pub max_row: fn(&mut [f32], &[f32]),
    /// `acc[i] = min(acc[i], row[i])`, a NaN on either side winning.
    pub min_row: fn(&mut [f32], &[f32]),
}

/// The [`Folds`] of the active path, or `None` on the scalar path (where the generic
/// folds of `backend::cpu::reduce` serve).
pub fn folds() -> Option<Folds> {
    folds_of(Isa::active())
}

/// The [`Folds`] of `isa`, or `None` for the scalar path or a path this CPU lacks.
pub fn folds_of(isa: Isa) -> Option<Folds> {
    if isa > Isa::detected() {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    {
        macro_rules! table {
            ($path:ident) => {
                // SAFETY (every call): the table of a path is only handed out when the CPU
                // supports that path (checked above).
                Some(Folds {
                    sum: |d| unsafe { $path::folds::sum(d) },
                    dot: |a, b| unsafe { $path::folds::dot(a, b) },
                    max: |d| unsafe { $path::folds::max(d) },
                    min: |d| unsafe { $path::folds::min(d) },
                    add_row: |a, r| unsafe { $path::folds::add_row(a, r) },
                    max_row: |a, r| unsafe { $path::folds::max_row(a, r) },
                    min_row: |a, r| unsafe { $path::folds::min_row(a, r) },
                })
            };
        }
        match isa {
            Isa::Avx512 => return table!(avx512),
            Isa::Avx2 => return table!(avx2),
            Isa::Scalar => {}
        }
    }
    None
}

/// The packed dot products ([`PackedDots`]) of the active path, or `None` on the scalar
/// path.
pub fn packed_dots() -> Option<PackedDots> {
    packed_dots_of(Isa::active())
}

/// The [`PackedDots`] of `isa`, or `None` for the scalar path or a path this CPU lacks.
pub fn packed_dots_of(isa: Isa) -> Option<PackedDots> {
    if isa > Isa::detected() {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY (both): the CPU supports the path (checked above).
        match isa {
            Isa::Avx512 => {
                return Some(PackedDots {
                    lanes: 16,
                    levels_in_place: <avx512::F32x16 as vector::Vector>::LEVELS_IN_PLACE,
                    subnormal_levels: <avx512::F32x16 as vector::Vector>::SUBNORMAL_LEVELS,
                    dots: |bits, rows, xs, unpacking, out| unsafe {
                        avx512::packed_dots(bits, rows, xs, unpacking, out)
                    },
                })
            }
            Isa::Avx2 => {
                return Some(PackedDots {
                    lanes: 8,
                    levels_in_place: <avx2::F32x8 as vector::Vector>::LEVELS_IN_PLACE,
                    subnormal_levels: <avx2::F32x8 as vector::Vector>::SUBNORMAL_LEVELS,
                    dots: |bits, rows, xs, unpacking, out| unsafe {
                        avx2::packed_dots(bits, rows, xs, unpacking, out)
                    },
                })
            }
            Isa::Scalar => {}
        }
    }
    None
}

/// The widening dot products ([`HalfDots`]) of the active path, or `None` on the scalar
/// path.
pub fn half_dots() -> Option<HalfDots> {
    half_dots_of(Isa::active())
}

/// The [`HalfDots`] of `isa`, or `None` for the scalar path, a path this CPU lacks, or
/// AVX2 without F16C.
pub fn half_dots_of(isa: Isa) -> Option<HalfDots> {
    if isa > Isa::detected() {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY (both): the CPU supports the path (checked above), and F16C on AVX2.
        match isa {
            Isa::Avx512 => {
                return Some(HalfDots {
                    dots: |format, row, xs, out| unsafe { avx512::half_dots(format, row, xs, out) },
                })
            }
            Isa::Avx2 if is_x86_feature_detected!("f16c") => {
                return Some(HalfDots {
                    dots: |format, row, xs, out| unsafe { avx2::half_dots(format, row, xs, out) },
                })
            }
            _ => {}
        }
    }
    None
}

/// The attention products ([`AttentionProducts`]) of the active path: the portable loops
/// on the scalar path and on AVX2 without F16C.
pub fn attention_products() -> AttentionProducts {
    attention_products_of(Isa::active()).unwrap_or(AttentionProducts {
        scores: attention::scores_portable,
        weighted_sum: attention::weighted_sum_portable,
    })
}

/// The [`AttentionProducts`] of `isa`, or `None` for the scalar path, a path this CPU
/// lacks, or AVX2 without F16C.
pub fn attention_products_of(isa: Isa) -> Option<AttentionProducts> {
    if isa > Isa::detected() {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY (both): the CPU supports the path (checked above), and F16C on AVX2.
        match isa {
            Isa::Avx512 => {
                return Some(AttentionProducts {
                    scores: |rows, queries, out| unsafe {
                        avx512::attention_scores(rows, queries, out)
                    },
                    weighted_sum: |rows, weights, out| unsafe {
                        avx512::attention_weighted_sum(rows, weights, out)
                    },
                })
            }
            Isa::Avx2 if is_x86_feature_detected!("f16c") => {
                return Some(AttentionProducts {
                    scores: |rows, queries, out| unsafe {
                        avx2::attention_scores(rows, queries, out)
                    },
                    weighted_sum: |rows, weights, out| unsafe {
                        avx2::attention_weighted_sum(rows, weights, out)
                    },
                })
            }
            _ => {}
        }
    }
    None
}

/// Runs `body` compiled for the active path's instruction set, so that plain Rust loops
/// inside it (inlined into it) are auto-vectorised with 256- or 512-bit registers instead of
/// the baseline target's 128-bit SSE2. For loops written with independent lanes (the
/// reduction folds) this is the difference between compute-bound and memory-bound.
///
/// Pass the closure as `vectorised(#[inline(always)] || ...)`: it is called from one
/// function per instruction set, and without the attribute LLVM keeps a large body as one
/// separate function compiled for the baseline target (measured: max of 10M f32 ran as
/// SSE2 code, 7 ms instead of 3).
#[inline(always)]
pub fn vectorised<R>(body: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,fma,f16c")]
        unsafe fn avx512<R>(body: impl FnOnce() -> R) -> R {
            body()
        }
        #[target_feature(enable = "avx2,fma,f16c")]
        unsafe fn avx2<R>(body: impl FnOnce() -> R) -> R {
            body()
        }
        match Isa::active() {
            // SAFETY: the active path is one the CPU supports (AVX-512 detection is of
            // avx512f; the CPUs with it also have BW, VL and F16C, checked below).
            Isa::Avx512 if wide_features() => return unsafe { avx512(body) },
            // SAFETY: as above (Isa::Avx2 is only active with AVX2 and FMA present).
            Isa::Avx512 | Isa::Avx2 if is_x86_feature_detected!("f16c") => {
                return unsafe { avx2(body) }
            }
            _ => {}
        }
    }
    body()
}

/// Whether the CPU has every AVX-512 extension [`vectorised`] compiles for.
#[cfg(target_arch = "x86_64")]
fn wide_features() -> bool {
    static WIDE: OnceLock<bool> = OnceLock::new();
    *WIDE.get_or_init(|| {
        is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512vl")
            && is_x86_feature_detected!("f16c")
    })
}

/// Below this many values a kernel runs on the calling thread alone.
const PARALLEL_MIN: usize = crate::backend::cpu::strided::PARALLEL_MIN;

/// Values per parallel task: whole vectors and cache lines.
const TASK_LEN: usize = 1 << 14;

/// `dst[i] = f(src[i])` on the active path, split across threads for large slices.
/// Panics if the lengths differ (an engine bug).
pub fn apply(f: Kernel, src: &[f32], dst: &mut [f32]) {
    let isa = Isa::active();
    if src.len() < PARALLEL_MIN {
        return apply_with(isa, f, src, dst);
    }
    assert_eq!(src.len(), dst.len(), "slice kernel lengths differ");
    parallel::for_each_chunk_mut(dst, TASK_LEN, |i, d| {
        apply_with(isa, f, &src[i * TASK_LEN..][..d.len()], d)
    });
}

/// `buf[i] = f(buf[i])` on the active path, split across threads for large slices.
pub fn apply_in_place(f: Kernel, buf: &mut [f32]) {
    let isa = Isa::active();
    if buf.len() < PARALLEL_MIN {
        return apply_in_place_with(isa, f, buf);
    }
    parallel::for_each_chunk_mut(buf, TASK_LEN, |_, part| apply_in_place_with(isa, f, part));
}

/// `buf[i] = f(buf[i])` with the kernels of `isa`, on the calling thread. Panics if the
/// CPU lacks `isa`.
pub fn apply_in_place_with(isa: Isa, f: Kernel, buf: &mut [f32]) {
    assert!(
        isa <= Isa::detected(),
        "{isa:?} is not supported by this CPU"
    );
    // SAFETY: the kernels read each vector before writing it, so src may equal dst; `isa`
    // is supported.
    unsafe { run(isa, f, buf.as_ptr(), buf.as_mut_ptr(), buf.len()) }
}

/// [`apply`] on a given path. Panics if the lengths differ or the CPU lacks `isa`.
pub fn apply_with(isa: Isa, f: Kernel, src: &[f32], dst: &mut [f32]) {
    assert_eq!(src.len(), dst.len(), "slice kernel lengths differ");
    assert!(
        isa <= Isa::detected(),
        "{isa:?} is not supported by this CPU"
    );
    // SAFETY: lengths checked; `isa` is supported.
    unsafe { run(isa, f, src.as_ptr(), dst.as_mut_ptr(), src.len()) }
}

/// # Safety
/// `src` and `dst` valid for `n` values (they may be equal); the CPU supports `isa`.
unsafe fn run(isa: Isa, f: Kernel, src: *const f32, dst: *mut f32, n: usize) {
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => avx512::run(f, src, dst, n),
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => avx2::run(f, src, dst, n),
        _ => {
            let scalar = f.scalar;
            for i in 0..n {
                *dst.add(i) = scalar(*src.add(i));
            }
        }
    }
}
