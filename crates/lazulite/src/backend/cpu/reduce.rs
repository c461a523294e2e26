//! Kernels of the reductions: sum, prod, max, min, all and any over any set of axes of
//! any strided tensor, argmax/argmin along one axis, and the median along one axis.
//!
//! Contiguous inputs whose reduced axes are adjacent (everything, the last axes, or a
//! block of middle or leading axes) are seen as `[outer, reduced, inner]`: rows are
//! folded with several independent accumulators (vectorised), and a reduced block
//! followed by kept axes adds whole input rows into a row of accumulators. float32 sum,
//! max and min (the hot cases) run both loops as explicit vector code
//! (`simd::fold`, through [`Reducer`]'s kernels) rather than relying on LLVM. Large inputs
//! are split across the rayon pool by output rows, column bands or fixed-size blocks of
//! a row, always combined in the same order, so results do not depend on the number of
//! threads. Other layouts walk the input once in the order of decreasing stride.
//! max/min and their arg forms compare with selects, not branches; argmax/argmin fold
//! the extreme value first, then find its first position.
//!
//! Sums and products of floating inputs accumulate in float64 and round once at the end
//! (float16 and bfloat16 too, where MLX accumulates in the input type); integer sums and
//! products wrap in 64 bits and are truncated to the output type, which gives the same
//! bits as wrapping in the output type.

use super::parallel;
use super::simd::{folds, vectorised, Folds};
use super::strided::for_each_row;
use crate::backend::{contiguous_strides, Tensor};
use crate::dtype::DType;
use crate::element::{dispatch, Complex, Element, F32Lane};
use crate::error::Result;
use half::{bf16, f16};
use rayon::prelude::*;
use std::cmp::Ordering;

/// The reductions over a set of axes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Sum,
    Prod,
    Max,
    Min,
    All,
    Any,
}

impl ReduceOp {
    /// The MLX function name.
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Prod => "prod",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
            ReduceOp::All => "all",
            ReduceOp::Any => "any",
        }
    }

    /// MLX's result dtype: sums and products of small integers widen to 32 bits
    /// (bool, int8, int16 to int32; uint8, uint16 to uint32); all/any give bool.
    pub fn output_dtype(self, dtype: DType) -> DType {
        use DType::*;
        match self {
            ReduceOp::Sum | ReduceOp::Prod => match dtype {
                Bool | Int8 | Int16 => Int32,
                UInt8 | UInt16 => UInt32,
                other => other,
            },
            ReduceOp::Max | ReduceOp::Min => dtype,
            ReduceOp::All | ReduceOp::Any => Bool,
        }
    }
}

/// The reductions along one axis that return positions.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ArgReduceOp {
    ArgMax,
    ArgMin,
}

impl ArgReduceOp {
    /// The MLX function name.
    pub fn name(self) -> &'static str {
        match self {
            ArgReduceOp::ArgMax => "argmax",
            ArgReduceOp::ArgMin => "argmin",
        }
    }
}

/// Independent accumulators per contiguous row: enough for the compiler to fill several
/// vector registers and hide the latency of each add.
const LANES: usize = 32;

/// Shape of the output with the reduced axes kept as size 1.
fn keepdims_shape(shape: &[usize], axes: &[usize]) -> Vec<usize> {
    shape
        .iter()
        .enumerate()
        .map(|(d, &n)| if axes.contains(&d) { 1 } else { n })
        .collect()
}

/// Visits every element of `x` once, as rows `row(in_start, out_index, len, in_step,
/// out_step)`, where `out_index` is the flat position in the row-major output (the input
/// shape with `axes` removed) and `out_step` is 0 along reduced axes. Dimensions are
/// ordered by decreasing input stride (broadcast dimensions outermost), so rows read
/// memory with the smallest step.
fn for_each_reduction_row(
    x: &Tensor,
    axes: &[usize],
    mut row: impl FnMut(isize, usize, usize, isize, isize),
) {
    let out_strides = contiguous_strides(&keepdims_shape(&x.shape, axes));
    let mut dims: Vec<usize> = (0..x.ndim()).collect();
    dims.sort_by_key(|&d| {
        let s = x.strides[d].unsigned_abs();
        (s != 0, std::cmp::Reverse(s))
    });
    let shape: Vec<usize> = dims.iter().map(|&d| x.shape[d]).collect();
    let in_strides: Vec<isize> = dims.iter().map(|&d| x.strides[d]).collect();
    let out_strides: Vec<isize> = dims
        .iter()
        .map(|&d| if axes.contains(&d) { 0 } else { out_strides[d] })
        .collect();
    for_each_row(
        &shape,
        [&in_strides, &out_strides],
        [x.offset as isize, 0],
        |[si, so], len, [ti, to]| row(si, so as usize, len, ti, to),
    );
}

/// Reads element `offset` of a buffer of `T`.
///
/// # Safety
/// `offset` must address an element inside the buffer starting at `base`.
#[inline(always)]
unsafe fn read<T: Element>(base: *const T::Storage, offset: isize) -> T {
    T::load(std::ptr::read_unaligned(base.offset(offset)))
}

/// A reduction: each element becomes an accumulator by `load`, and accumulators merge by
/// `combine`, an associative and commutative operation with identity `init`. `kernels`,
/// where a hand-vectorised pair exists (float32 sum, max, min), replace the generic loops.
struct Reducer<I: Element, A, L, C> {
    init: A,
    load: L,
    combine: C,
    kernels: Option<Kernels<I, A>>,
}

/// A kernel folding a contiguous run of elements into one accumulator.
type RunKernel<I, A> = fn(&[<I as Element>::Storage]) -> A;

/// Hand-vectorised forms of a [`Reducer`]'s two inner loops.
struct Kernels<I: Element, A> {
    /// The fold of a contiguous run.
    run: RunKernel<I, A>,
    /// Merges a row of elements into a row of accumulators (the row at least as long).
    row: fn(&mut [A], &[I::Storage]),
}

impl<I: Element, A: Copy, L: Fn(I) -> A, C: Fn(A, A) -> A> Reducer<I, A, L, C> {
    fn new(init: A, load: L, combine: C) -> Self {
        Reducer {
            init,
            load,
            combine,
            kernels: None,
        }
    }

    fn with_kernels(self, kernels: Option<Kernels<I, A>>) -> Self {
        Reducer { kernels, ..self }
    }

    /// The fold of a contiguous run.
    fn run(&self, data: &[I::Storage]) -> A {
        match &self.kernels {
            Some(k) => (k.run)(data),
            None => fold_contiguous(data, self.init, &self.load, &self.combine),
        }
    }

    /// `acc[i] = combine(acc[i], load(row[i]))` for every accumulator.
    fn merge_row(&self, acc: &mut [A], row: &[I::Storage]) {
        match &self.kernels {
            Some(k) => (k.row)(acc, row),
            None => vectorised(
                #[inline(always)]
                || {
                    for (a, &v) in acc.iter_mut().zip(row) {
                        *a = (self.combine)(*a, (self.load)(I::load(v)));
                    }
                },
            ),
        }
    }
}

/// The float32 [`Kernels`] of the active SIMD path, picked from its [`Folds`] table.
fn f32_kernels<A>(
    pick: impl FnOnce(Folds) -> (fn(&[f32]) -> A, fn(&mut [A], &[f32])),
) -> Option<Kernels<f32, A>> {
    folds().map(|f| {
        let (run, row) = pick(f);
        Kernels { run, row }
    })
}

/// The float32 max or min [`Kernels`] of the active SIMD path.
fn f32_extreme_kernels(is_max: bool) -> Option<Kernels<f32, f32>> {
    f32_kernels(|f| {
        if is_max {
            (f.max, f.max_row)
        } else {
            (f.min, f.min_row)
        }
    })
}

/// Folds a contiguous run of elements with `LANES` independent accumulators, compiled
/// for the widest vectors the CPU has.
#[inline(always)]
fn fold_contiguous<I: Element, A: Copy>(
    data: &[I::Storage],
    init: A,
    load: &impl Fn(I) -> A,
    combine: &impl Fn(A, A) -> A,
) -> A {
    vectorised(
        #[inline(always)]
        || fold_lanes(data, init, load, combine),
    )
}

#[inline(always)]
fn fold_lanes<I: Element, A: Copy>(
    data: &[I::Storage],
    init: A,
    load: &impl Fn(I) -> A,
    combine: &impl Fn(A, A) -> A,
) -> A {
    let mut lanes = [init; LANES];
    let chunks = data.chunks_exact(LANES);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (lane, &v) in lanes.iter_mut().zip(chunk) {
            *lane = combine(*lane, load(I::load(v)));
        }
    }
    let mut acc = lanes.into_iter().fold(init, combine);
    for &v in rest {
        acc = combine(acc, load(I::load(v)));
    }
    acc
}

/// Elements per block of a long contiguous run: a run is folded block by block and the
/// block results combined in order, so the result does not depend on how many threads
/// fold the blocks.
const BLOCK: usize = 1 << 14;

/// Below this many input elements a reduction runs on the calling thread alone.
const PARALLEL_MIN: usize = 1 << 17;

/// Output columns per task when whole rows are accumulated into an output row.
const COLUMNS: usize = 1024;

/// Runs of rows a reduction over leading axes is cut into (see [`fold_blocks`]).
const PARTS: usize = 8;

/// Largest row of accumulators a part folds whole rows into: with an input row beside
/// it, it stays in L1 (a float32 `max` over 4096 columns: 2.3-3.1 ms where bands of 1024
/// columns took 4.7; float32 sums accumulate in float64 and, at 32 KB, ran slower cut so:
/// 6.6 ms against 3.9).
const PART_ROW_BYTES: usize = 16 << 10;

/// A contiguous input seen as `[outer, reduced, inner]`: the reduced axes form one block
/// of dimensions (after dropping size-1 ones), with `outer` kept elements before it and
/// `inner` after it. Output element `o * inner + i` combines `x[o, 0..reduced, i]`.
#[derive(Copy, Clone, Debug)]
struct Blocks {
    outer: usize,
    reduced: usize,
    inner: usize,
}

/// The [`Blocks`] view of `x` reduced over `axes`, if `x` is contiguous and the reduced
/// axes are adjacent once size-1 dimensions are ignored.
fn blocks(x: &Tensor, axes: &[usize]) -> Option<Blocks> {
    if !x.is_contiguous() {
        return None;
    }
    let mut groups: Vec<(bool, usize)> = Vec::new();
    for (d, &n) in x.shape.iter().enumerate() {
        if n == 1 {
            continue;
        }
        let reduced = axes.contains(&d);
        match groups.last_mut() {
            Some((r, size)) if *r == reduced => *size *= n,
            _ => groups.push((reduced, n)),
        }
    }
    let (outer, reduced, inner) = match groups.as_slice() {
        [] => (1, 1, 1),
        [(true, r)] => (1, *r, 1),
        [(false, k)] => (*k, 1, 1),
        [(false, o), (true, r)] => (*o, *r, 1),
        [(true, r), (false, i)] => (1, *r, *i),
        [(false, o), (true, r), (false, i)] => (*o, *r, *i),
        _ => return None,
    };
    Some(Blocks {
        outer,
        reduced,
        inner,
    })
}

/// Whether a kernel over `size` input elements should split its work across threads.
fn parallel(size: usize) -> bool {
    size >= PARALLEL_MIN && parallel::threads() > 1
}

/// Calls `work(k, chunk)` for the consecutive chunks of `len` elements of `out`, on the
/// rayon pool when `parallel`. Each chunk is written by exactly one call, so the result
/// does not depend on the number of threads.
fn for_each_chunk<T: Send>(
    out: &mut [T],
    len: usize,
    parallel: bool,
    work: impl Fn(usize, &mut [T]) + Sync + Send,
) {
    let len = len.max(1);
    if parallel {
        parallel::for_each_chunk_mut(out, len, work);
    } else {
        out.chunks_mut(len)
            .enumerate()
            .for_each(|(k, chunk)| work(k, chunk));
    }
}

/// Folds a contiguous run block by block (see [`BLOCK`]), the blocks on several threads
/// when `parallel`; the same value either way.
fn fold_run<I: Element, A: Copy + Send + Sync>(
    run: &[I::Storage],
    r: &Reducer<I, A, impl Fn(I) -> A + Sync, impl Fn(A, A) -> A + Sync>,
    parallel: bool,
) -> A {
    let fold_block = |block: &[I::Storage]| r.run(block);
    if parallel {
        // Each task folds a long stretch of consecutive blocks: one stream per thread is
        // what the hardware prefetches best.
        let mut partial = vec![r.init; run.len().div_ceil(BLOCK)];
        let per_task = partial.len().div_ceil(4 * parallel::threads());
        parallel::for_each_chunk_mut(&mut partial, per_task, |t, part| {
            let blocks = run[t * per_task * BLOCK..].chunks(BLOCK);
            for (slot, block) in part.iter_mut().zip(blocks) {
                *slot = fold_block(block);
            }
        });
        partial.into_iter().fold(r.init, &r.combine)
    } else {
        run.chunks(BLOCK).map(fold_block).fold(r.init, &r.combine)
    }
}

/// [`fold`] of a contiguous input laid out as `b`, into `acc` (`outer * inner` values
/// holding `init`).
fn fold_blocks<I: Element, A: Copy + Send + Sync>(
    data: &[I::Storage],
    b: Blocks,
    acc: &mut [A],
    r: &Reducer<I, A, impl Fn(I) -> A + Sync, impl Fn(A, A) -> A + Sync>,
) {
    let parallel = parallel(data.len());
    if b.inner == 1 {
        if b.outer >= 2 * parallel::threads() || !parallel {
            // Enough rows to share out: each task folds whole rows.
            let rows_per_task = (PARALLEL_MIN / 2).div_ceil(b.reduced.max(1));
            for_each_chunk(acc, rows_per_task, parallel, |k, outs| {
                for (j, out) in outs.iter_mut().enumerate() {
                    let o = k * rows_per_task + j;
                    let row = &data[o * b.reduced..][..b.reduced];
                    *out = fold_run(row, r, false);
                }
            });
        } else {
            for (o, out) in acc.iter_mut().enumerate() {
                let row = &data[o * b.reduced..][..b.reduced];
                *out = fold_run(row, r, true);
            }
        }
        return;
    }
    let row_bytes = b.inner * std::mem::size_of::<A>();
    if parallel && b.outer == 1 && row_bytes <= PART_ROW_BYTES && b.reduced >= 2 * PARTS {
        // A reduction over leading axes: each of a fixed number of parts folds a run of
        // whole rows into its own row of accumulators, so that a thread reads one long
        // stretch of memory (bands of columns read a page of each row, then jump); the
        // parts are merged in order, whatever the number of threads.
        let rows = b.reduced.div_ceil(PARTS);
        let mut parts = vec![r.init; PARTS * b.inner];
        for_each_chunk(&mut parts, b.inner, true, |p, part| {
            let run = &data
                [(p * rows).min(b.reduced) * b.inner..((p + 1) * rows).min(b.reduced) * b.inner];
            for row in run.chunks_exact(b.inner) {
                r.merge_row(part, row);
            }
        });
        for part in parts.chunks_exact(b.inner) {
            for (a, &v) in acc.iter_mut().zip(part) {
                *a = (r.combine)(*a, v);
            }
        }
        return;
    }
    // Reduced axes in the middle: add whole input rows into a row of accumulators, a
    // band of columns per task, so the inner loop runs over contiguous memory.
    for_each_chunk(acc, b.inner, parallel && b.outer > 1, |o, out_row| {
        let slab = &data[o * b.reduced * b.inner..][..b.reduced * b.inner];
        for_each_chunk(out_row, COLUMNS, parallel, |c, cols| {
            let start = c * COLUMNS;
            for row in slab.chunks_exact(b.inner) {
                r.merge_row(cols, &row[start..]);
            }
        });
    });
}

/// Reduces `x` over `axes` into one accumulator per output element: each element is
/// turned into an accumulator by `load` and merged by `combine`, an associative and
/// commutative operation with identity `init`. Contiguous inputs whose reduced axes are
/// adjacent take the blocked paths (threads for large inputs); the result depends only
/// on the input's layout, not on the number of threads.
///
/// Reduced axes along which `x` repeats one element (stride 0, as in `zeros`, `ones` and
/// broadcasts) are folded by repeated doubling of the accumulators of the other axes:
/// element by element, a sum of a broadcast 4096 x 4096 array took 16 ms where one of a
/// stored array takes 2.
fn fold<I: Element, A: Copy + Send + Sync>(
    x: &Tensor,
    axes: &[usize],
    r: Reducer<I, A, impl Fn(I) -> A + Sync, impl Fn(A, A) -> A + Sync>,
) -> Vec<A> {
    let out_size = keepdims_shape(&x.shape, axes).iter().product();
    let mut acc = vec![r.init; out_size];
    let (x, repeats) = without_repeats(x, axes);
    match blocks(&x, axes) {
        Some(b) => fold_blocks(x.slice::<I>(), b, &mut acc, &r),
        None => fold_strided(&x, axes, &mut acc, &r),
    }
    if repeats > 1 {
        for a in &mut acc {
            *a = repeated(*a, repeats, r.init, &r.combine);
        }
    }
    acc
}

/// `x` with each reduced axis of stride 0 cut to one element, and how many times each
/// remaining position stands for (the product of the cut axes' lengths).
fn without_repeats(x: &Tensor, axes: &[usize]) -> (Tensor, usize) {
    let mut view = x.clone();
    let mut repeats = 1;
    for &d in axes {
        if x.strides[d] == 0 {
            repeats *= x.shape[d];
            view.shape[d] = view.shape[d].min(1);
        }
    }
    (view, repeats)
}

/// `combine` over `n` copies of `a`, starting from `init`, in about 2 log2(n) steps: the
/// fold of a value repeated `n` times.
fn repeated<A: Copy>(a: A, mut n: usize, init: A, combine: impl Fn(A, A) -> A) -> A {
    let (mut result, mut power) = (init, a);
    while n > 0 {
        if n & 1 == 1 {
            result = combine(result, power);
        }
        n >>= 1;
        if n > 0 {
            power = combine(power, power);
        }
    }
    result
}

/// [`fold`] of any strided layout, walking rows in the order of decreasing stride.
fn fold_strided<I: Element, A: Copy>(
    x: &Tensor,
    axes: &[usize],
    acc: &mut [A],
    r: &Reducer<I, A, impl Fn(I) -> A, impl Fn(A, A) -> A>,
) {
    let (load, combine) = (&r.load, &r.combine);
    let base = x.buf.as_ptr() as *const I::Storage;
    for_each_reduction_row(x, axes, |si, so, len, ti, to| {
        if to == 0 {
            let folded = if ti == 1 {
                // SAFETY: the row's `len` elements are contiguous inside x's buffer, whose
                // allocation is aligned for the element type.
                let data = unsafe { std::slice::from_raw_parts(base.offset(si), len) };
                r.run(data)
            } else {
                (0..len as isize).fold(r.init, |a, k| {
                    // SAFETY: the layout addresses elements inside x's buffer.
                    combine(a, load(unsafe { read::<I>(base, si + k * ti) }))
                })
            };
            acc[so] = combine(acc[so], folded);
        } else if ti == 1 && to == 1 {
            // SAFETY: as above.
            let data = unsafe { std::slice::from_raw_parts(base.offset(si), len) };
            r.merge_row(&mut acc[so..so + len], data);
        } else {
            for k in 0..len {
                let o = so + k * to as usize;
                // SAFETY: the layout addresses elements inside x's buffer.
                acc[o] = combine(
                    acc[o],
                    load(unsafe { read::<I>(base, si + (k as isize) * ti) }),
                );
            }
        }
    });
}

/// A contiguous tensor of `shape` holding `finish(a)` for each accumulator.
fn write<A: Copy, O: Element>(
    acc: Vec<A>,
    shape: &[usize],
    finish: impl Fn(A) -> O,
) -> Result<Tensor> {
    let mut out = Tensor::uninit(O::DTYPE, shape)?;
    for (o, a) in out.slice_mut::<O>().iter_mut().zip(acc) {
        *o = finish(a).store();
    }
    Ok(out)
}

/// Values with the total order the max/min/arg reductions use. NaN (for complex: a NaN
/// in either part) is reported separately: it wins every comparison, as in NumPy, while
/// `greater` is false when either side is NaN.
trait Ordered: Copy + Send + Sync {
    const LOWEST: Self;
    const HIGHEST: Self;
    fn is_nan(self) -> bool;
    fn greater(self, other: Self) -> bool;
}

macro_rules! ordered_int {
    ($($t:ty),*) => {$(
        impl Ordered for $t {
            const LOWEST: $t = <$t>::MIN;
            const HIGHEST: $t = <$t>::MAX;
            #[inline(always)]
            fn is_nan(self) -> bool {
                false
            }
            #[inline(always)]
            fn greater(self, other: $t) -> bool {
                self > other
            }
        }
    )*};
}
ordered_int!(u8, u16, u32, u64, i8, i16, i32, i64);

impl Ordered for bool {
    const LOWEST: bool = false;
    const HIGHEST: bool = true;
    #[inline(always)]
    fn is_nan(self) -> bool {
        false
    }
    #[inline(always)]
    fn greater(self, other: bool) -> bool {
        self & !other
    }
}

macro_rules! ordered_float {
    ($($t:ty),*) => {$(
        impl Ordered for $t {
            const LOWEST: $t = <$t>::NEG_INFINITY;
            const HIGHEST: $t = <$t>::INFINITY;
            #[inline(always)]
            fn is_nan(self) -> bool {
                self.is_nan()
            }
            #[inline(always)]
            fn greater(self, other: $t) -> bool {
                self > other
            }
        }
    )*};
}
ordered_float!(f32, f64);

/// Complex numbers order by real part, then imaginary part (as in NumPy and MLX).
impl Ordered for Complex {
    const LOWEST: Complex = Complex {
        re: f32::NEG_INFINITY,
        im: f32::NEG_INFINITY,
    };
    const HIGHEST: Complex = Complex {
        re: f32::INFINITY,
        im: f32::INFINITY,
    };
    #[inline(always)]
    fn is_nan(self) -> bool {
        self.re.is_nan() || self.im.is_nan()
    }
    /// False when either number has a NaN part, as float comparisons with NaN are.
    #[inline(always)]
    fn greater(self, other: Complex) -> bool {
        !self.is_nan()
            && !other.is_nan()
            && (self.re > other.re || (self.re == other.re && self.im > other.im))
    }
}

/// The larger of two values; a NaN wins. Written with non-short-circuit `|` so it
/// compiles to compares and selects (vectorised folds), not branches.
#[inline(always)]
fn max_nan<T: Ordered>(a: T, b: T) -> T {
    if b.greater(a) | b.is_nan() {
        b
    } else {
        a
    }
}

/// The smaller of two values; a NaN wins (branch-free as [`max_nan`]).
#[inline(always)]
fn min_nan<T: Ordered>(a: T, b: T) -> T {
    if a.greater(b) | b.is_nan() {
        b
    } else {
        a
    }
}

/// float16 / bfloat16 values widened at a time for the float32 sum kernels.
const WIDEN_CHUNK: usize = 512;

/// The sum [`Kernels`] of float16 or bfloat16 elements: chunks are widened to float32
/// (exactly) and summed by the float32 kernels, as vector code throughout, where a float64
/// chain fed one element at a time is not (a sum of 65,536 bfloat16 values: 7x faster).
fn widened_sum_kernels<T: Element<Storage = T> + F32Lane>() -> Option<Kernels<T, f64>> {
    folds().map(|_| Kernels {
        run: |run: &[T]| {
            let sum = float32_folds().sum;
            let mut chunk = [0.0f32; WIDEN_CHUNK];
            run.chunks(WIDEN_CHUNK)
                .map(|values| sum(widen_into(values, &mut chunk)))
                .sum()
        },
        row: |acc: &mut [f64], row: &[T]| {
            let add_row = float32_folds().add_row;
            let mut chunk = [0.0f32; WIDEN_CHUNK];
            for (acc, values) in acc.chunks_mut(WIDEN_CHUNK).zip(row.chunks(WIDEN_CHUNK)) {
                add_row(acc, widen_into(values, &mut chunk));
            }
        },
    })
}

/// The float32 [`Folds`] inside the kernels of [`widened_sum_kernels`], which exist only
/// where these do (the active instruction set is fixed for the process).
fn float32_folds() -> Folds {
    folds().expect("widened sum kernels are made only where the float32 folds exist")
}

/// `values` widened into the front of `chunk` (at least as long), as vector code.
fn widen_into<'a, T: F32Lane>(values: &[T], chunk: &'a mut [f32]) -> &'a [f32] {
    let chunk = &mut chunk[..values.len()];
    vectorised(
        #[inline(always)]
        || {
            for (c, &v) in chunk.iter_mut().zip(values) {
                *c = v.widen();
            }
        },
    );
    chunk
}

/// Max or min of elements loaded as `A` (half floats compare as float32, exactly), with
/// the hand-vectorised kernels of the one picked, if any.
fn extremum<I: Element, A: Ordered, O: Element>(
    x: &Tensor,
    axes: &[usize],
    is_max: bool,
    load: impl Fn(I) -> A + Sync,
    finish: impl Fn(A) -> O,
    kernels: Option<Kernels<I, A>>,
) -> Result<Tensor> {
    let shape = keepdims_shape(&x.shape, axes);
    let acc = if is_max {
        fold(
            x,
            axes,
            Reducer::new(A::LOWEST, load, max_nan).with_kernels(kernels),
        )
    } else {
        fold(
            x,
            axes,
            Reducer::new(A::HIGHEST, load, min_nan).with_kernels(kernels),
        )
    };
    write(acc, &shape, finish)
}

fn complex_mul(a: [f64; 2], b: [f64; 2]) -> [f64; 2] {
    [a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0]]
}

/// Sum or product of `x` over `axes` as `out`: an integer dtype (wrapping), a floating
/// dtype (accumulated in float64) or complex64 (accumulated in pairs of float64).
fn sum_prod(is_sum: bool, x: &Tensor, axes: &[usize], out: DType) -> Result<Tensor> {
    let shape = keepdims_shape(&x.shape, axes);
    if out.is_complex() {
        let load = |z: Complex| [z.re as f64, z.im as f64];
        let acc = if is_sum {
            fold(
                x,
                axes,
                Reducer::new([0.0; 2], load, |a, b| [a[0] + b[0], a[1] + b[1]]),
            )
        } else {
            fold(x, axes, Reducer::new([1.0, 0.0], load, complex_mul))
        };
        return write(acc, &shape, |a| Complex::new(a[0] as f32, a[1] as f32));
    }
    if out.is_floating() {
        let acc = match x.dtype {
            DType::Float32 if is_sum => {
                let r = Reducer::new(0.0, |v: f32| v as f64, |a, b| a + b);
                fold(x, axes, r.with_kernels(f32_kernels(|f| (f.sum, f.add_row))))
            }
            DType::Float16 if is_sum => {
                let r = Reducer::new(0.0, |v: f16| f64::from(v.widen()), |a, b| a + b);
                fold(x, axes, r.with_kernels(widened_sum_kernels()))
            }
            DType::BFloat16 if is_sum => {
                let r = Reducer::new(0.0, |v: bf16| f64::from(v.widen()), |a, b| a + b);
                fold(x, axes, r.with_kernels(widened_sum_kernels()))
            }
            _ => dispatch!(x.dtype, I => if is_sum {
                fold(x, axes, Reducer::new(0.0, |v: I| v.to_f64(), |a, b| a + b))
            } else {
                fold(x, axes, Reducer::new(1.0, |v: I| v.to_f64(), |a, b| a * b))
            }),
        };
        return dispatch!(out, O => write(acc, &shape, O::from_f64));
    }
    let acc = dispatch!(x.dtype, I => if is_sum {
        fold(x, axes, Reducer::new(0i64, |v: I| v.to_i64(), i64::wrapping_add))
    } else {
        fold(x, axes, Reducer::new(1i64, |v: I| v.to_i64(), i64::wrapping_mul))
    });
    // `as` truncates to the output width: wrapping in 64 bits then truncating gives the
    // bits wrapping in the output width would.
    dispatch!(out, O => write(acc, &shape, |a: i64| O::from_elem(a)))
}

/// Reduces `x` over `axes` (sorted, distinct) with `op`, producing `out` (the dtype
/// [`ReduceOp::output_dtype`] gives, or for sums a floating dtype to accumulate a mean
/// in). The result is contiguous, with the reduced axes kept as size 1.
pub fn reduce(op: ReduceOp, x: &Tensor, axes: &[usize], out: DType) -> Result<Tensor> {
    match op {
        ReduceOp::Sum | ReduceOp::Prod => sum_prod(op == ReduceOp::Sum, x, axes, out),
        ReduceOp::All | ReduceOp::Any => {
            let shape = keepdims_shape(&x.shape, axes);
            let acc = dispatch!(x.dtype, I => if op == ReduceOp::All {
                fold(x, axes, Reducer::new(true, |v: I| v.to_bool(), |a, b| a & b))
            } else {
                fold(x, axes, Reducer::new(false, |v: I| v.to_bool(), |a, b| a | b))
            });
            write(acc, &shape, |a| a)
        }
        ReduceOp::Max | ReduceOp::Min => {
            let is_max = op == ReduceOp::Max;
            match x.dtype {
                DType::Float16 => extremum(x, axes, is_max, f16::widen, f16::narrow, None),
                DType::BFloat16 => extremum(x, axes, is_max, bf16::widen, bf16::narrow, None),
                DType::Bool => extremum(x, axes, is_max, |v: bool| v, |v| v, None),
                DType::UInt8 => extremum(x, axes, is_max, |v: u8| v, |v| v, None),
                DType::UInt16 => extremum(x, axes, is_max, |v: u16| v, |v| v, None),
                DType::UInt32 => extremum(x, axes, is_max, |v: u32| v, |v| v, None),
                DType::UInt64 => extremum(x, axes, is_max, |v: u64| v, |v| v, None),
                DType::Int8 => extremum(x, axes, is_max, |v: i8| v, |v| v, None),
                DType::Int16 => extremum(x, axes, is_max, |v: i16| v, |v| v, None),
                DType::Int32 => extremum(x, axes, is_max, |v: i32| v, |v| v, None),
                DType::Int64 => extremum(x, axes, is_max, |v: i64| v, |v| v, None),
                DType::Float32 => extremum(
                    x,
                    axes,
                    is_max,
                    |v: f32| v,
                    |v| v,
                    f32_extreme_kernels(is_max),
                ),
                DType::Float64 => extremum(x, axes, is_max, |v: f64| v, |v| v, None),
                DType::Complex64 => extremum(x, axes, is_max, |v: Complex| v, |v| v, None),
            }
        }
    }
}

/// Calls `visit(in_start, out_index, len, in_step)` for rows of the positions of `x` with
/// `axis` removed (row-major output order).
fn for_each_kept_row(x: &Tensor, axis: usize, visit: impl FnMut(isize, usize, usize, isize)) {
    let mut shape = x.shape.clone();
    let mut strides = x.strides.clone();
    shape.remove(axis);
    strides.remove(axis);
    let out_strides = contiguous_strides(&shape);
    let mut visit = visit;
    for_each_row(
        &shape,
        [&strides, &out_strides],
        [x.offset as isize, 0],
        |[si, so], len, [ti, _]| visit(si, so as usize, len, ti),
    );
}

/// Whether `candidate` replaces `best` (met earlier): a NaN is never replaced and always
/// replaces, so the first NaN wins; otherwise only a strictly better value replaces,
/// so the first occurrence wins.
#[inline(always)]
fn better<A: Ordered>(candidate: A, best: A, is_max: bool) -> bool {
    let strictly = if is_max {
        candidate.greater(best)
    } else {
        best.greater(candidate)
    };
    !best.is_nan() & (candidate.is_nan() | strictly)
}

/// Position of the first element of `run` for which `hit` holds, if any. Looks at
/// short chunks with a branch-free test before searching one, so the test vectorises.
fn first_position<S: Copy>(run: &[S], hit: &impl Fn(S) -> bool) -> Option<usize> {
    const CHUNK: usize = 256;
    vectorised(
        #[inline(always)]
        || {
            run.chunks(CHUNK).enumerate().find_map(|(c, chunk)| {
                if chunk.iter().fold(false, |found, &v| found | hit(v)) {
                    chunk.iter().position(|&v| hit(v)).map(|p| c * CHUNK + p)
                } else {
                    None
                }
            })
        },
    )
}

/// [`arg_extremum`] of a contiguous input laid out as `b` (reducing the middle block),
/// into `index`.
fn arg_blocks<I: Element, A: Ordered>(
    data: &[I::Storage],
    b: Blocks,
    is_max: bool,
    load: &(impl Fn(I) -> A + Sync),
    extreme_run: Option<RunKernel<I, A>>,
    index: &mut [u32],
) {
    let parallel = parallel(data.len());
    // Along contiguous rows: block by block, the extreme value from the vectorised fold,
    // and its first position only for a block that beats the best so far (searched while
    // the block is still in cache), so a row is read from memory once.
    let arg_row = |row: &[I::Storage], parallel: bool| -> u32 {
        let extreme = |block: &[I::Storage]| {
            if let Some(run) = extreme_run {
                run(block)
            } else if is_max {
                fold_contiguous(block, A::LOWEST, load, &max_nan::<A>)
            } else {
                fold_contiguous(block, A::HIGHEST, load, &min_nan::<A>)
            }
        };
        let position = |block: &[I::Storage], best: A| {
            let hit = |v: I::Storage| {
                let v = load(I::load(v));
                if best.is_nan() {
                    v.is_nan()
                } else {
                    !v.greater(best) & !best.greater(v)
                }
            };
            first_position(block, &hit).unwrap_or(0)
        };
        // The best (value, position) of the blocks seen so far, extended by block `k`.
        let step = |acc: Option<(A, usize)>, (k, block): (usize, &[I::Storage])| {
            let candidate = extreme(block);
            match acc {
                Some((best, _)) if !better(candidate, best, is_max) => acc,
                _ => Some((candidate, k * BLOCK + position(block, candidate))),
            }
        };
        // Earlier blocks first: a later one wins only when strictly better.
        let combine = |a: Option<(A, usize)>, b: Option<(A, usize)>| match (a, b) {
            (Some((x, _)), Some((y, _))) if !better(y, x, is_max) => a,
            (None, _) => b,
            _ => b.or(a),
        };
        let found = if parallel {
            row.par_chunks(BLOCK)
                .enumerate()
                .fold(|| None, step)
                .reduce(|| None, combine)
        } else {
            row.chunks(BLOCK).enumerate().fold(None, step)
        };
        found.map_or(0, |(_, at)| at as u32)
    };
    if b.inner == 1 {
        if b.outer >= 2 * parallel::threads() || !parallel {
            let rows_per_task = (PARALLEL_MIN / 2).div_ceil(b.reduced);
            for_each_chunk(index, rows_per_task, parallel, |k, outs| {
                for (j, out) in outs.iter_mut().enumerate() {
                    let o = k * rows_per_task + j;
                    *out = arg_row(&data[o * b.reduced..][..b.reduced], false);
                }
            });
        } else {
            for (o, out) in index.iter_mut().enumerate() {
                *out = arg_row(&data[o * b.reduced..][..b.reduced], true);
            }
        }
        return;
    }
    // Reduced axes in the middle: sweep whole rows, keeping the best value so far and
    // its position for a band of output columns (selects, no branches).
    for_each_chunk(index, b.inner, parallel && b.outer > 1, |o, out_row| {
        let slab = &data[o * b.reduced * b.inner..][..b.reduced * b.inner];
        for_each_chunk(out_row, COLUMNS, parallel, |c, cols| {
            let band = c * COLUMNS..c * COLUMNS + cols.len();
            let mut rows = slab.chunks_exact(b.inner);
            let Some(row) = rows.next() else { return };
            let mut best: Vec<A> = row[band.clone()]
                .iter()
                .map(|&v| load(I::load(v)))
                .collect();
            cols.fill(0);
            vectorised(
                #[inline(always)]
                || {
                    for (r, row) in rows.enumerate() {
                        let r = r as u32 + 1;
                        let values = &row[band.clone()];
                        for ((v, bv), at) in values.iter().zip(best.iter_mut()).zip(cols.iter_mut())
                        {
                            let v = load(I::load(*v));
                            let take = better(v, *bv, is_max);
                            *bv = if take { v } else { *bv };
                            *at = if take { r } else { *at };
                        }
                    }
                },
            )
        });
    });
}

fn arg_extremum<I: Element, A: Ordered>(
    x: &Tensor,
    axis: usize,
    is_max: bool,
    load: impl Fn(I) -> A + Sync,
    extreme_run: Option<RunKernel<I, A>>,
) -> Result<Tensor> {
    let shape = keepdims_shape(&x.shape, &[axis]);
    let out_size: usize = shape.iter().product();
    let n = x.shape[axis];
    let step = x.strides[axis];
    let base = x.buf.as_ptr() as *const I::Storage;
    let mut out = Tensor::uninit(DType::UInt32, &shape)?;
    let index = out.slice_mut::<u32>();
    if let Some(b) = blocks(x, &[axis]) {
        arg_blocks(x.slice::<I>(), b, is_max, &load, extreme_run, index);
        return Ok(out);
    }
    let smallest_other = (0..x.ndim())
        .filter(|&d| d != axis && x.shape[d] > 1 && x.strides[d] != 0)
        .map(|d| x.strides[d].unsigned_abs())
        .min();
    if smallest_other.is_none_or(|s| step.unsigned_abs() <= s) {
        // The axis is the innermost in memory: scan each slice along it.
        for_each_kept_row(x, axis, |si, so, len, ti| {
            for k in 0..len {
                let start = si + k as isize * ti;
                // SAFETY: the layout addresses elements inside x's buffer.
                let mut best = load(unsafe { read::<I>(base, start) });
                let mut best_at = 0;
                for j in 1..n {
                    // SAFETY: as above.
                    let v = load(unsafe { read::<I>(base, start + j as isize * step) });
                    if better(v, best, is_max) {
                        best = v;
                        best_at = j;
                    }
                }
                index[so + k] = best_at as u32;
            }
        });
    } else {
        // Other axes are denser: sweep whole slices across the axis, keeping the best
        // value so far for every output position.
        let mut best = vec![if is_max { A::LOWEST } else { A::HIGHEST }; out_size];
        index.fill(0);
        for j in 0..n {
            let shifted = Tensor {
                offset: (x.offset as isize + j as isize * step) as usize,
                ..x.clone()
            };
            for_each_kept_row(&shifted, axis, |si, so, len, ti| {
                for k in 0..len {
                    // SAFETY: the layout addresses elements inside x's buffer.
                    let v = load(unsafe { read::<I>(base, si + k as isize * ti) });
                    if j == 0 || better(v, best[so + k], is_max) {
                        best[so + k] = v;
                        index[so + k] = j as u32;
                    }
                }
            });
        }
    }
    Ok(out)
}

/// Positions (uint32) of the first maximum or minimum of `x` along `axis`, NaN counting
/// as the extreme value. `x` has at least one element along `axis` and fewer than 2^32.
/// The result is contiguous, with `axis` kept as size 1.
pub fn arg_reduce(op: ArgReduceOp, x: &Tensor, axis: usize) -> Result<Tensor> {
    let is_max = op == ArgReduceOp::ArgMax;
    match x.dtype {
        DType::Float16 => arg_extremum(x, axis, is_max, f16::to_f32, None),
        DType::BFloat16 => arg_extremum(x, axis, is_max, bf16::to_f32, None),
        DType::Bool => arg_extremum(x, axis, is_max, |v: bool| v, None),
        DType::UInt8 => arg_extremum(x, axis, is_max, |v: u8| v, None),
        DType::UInt16 => arg_extremum(x, axis, is_max, |v: u16| v, None),
        DType::UInt32 => arg_extremum(x, axis, is_max, |v: u32| v, None),
        DType::UInt64 => arg_extremum(x, axis, is_max, |v: u64| v, None),
        DType::Int8 => arg_extremum(x, axis, is_max, |v: i8| v, None),
        DType::Int16 => arg_extremum(x, axis, is_max, |v: i16| v, None),
        DType::Int32 => arg_extremum(x, axis, is_max, |v: i32| v, None),
        DType::Int64 => arg_extremum(x, axis, is_max, |v: i64| v, None),
        DType::Float32 => arg_extremum(
            x,
            axis,
            is_max,
            |v: f32| v,
            f32_extreme_kernels(is_max).map(|k| k.run),
        ),
        DType::Float64 => arg_extremum(x, axis, is_max, |v: f64| v, None),
        DType::Complex64 => arg_extremum(x, axis, is_max, |v: Complex| v, None),
    }
}

/// The middle value of `values` (the mean of the two middle ones for an even count),
/// NaN if any value is NaN. `values` is reordered.
fn middle<A: Ordered>(values: &mut [A], mean: impl Fn(A, A) -> A) -> A {
    if let Some(&nan) = values.iter().find(|v| v.is_nan()) {
        return nan;
    }
    let order = |a: &A, b: &A| {
        if a.greater(*b) {
            Ordering::Greater
        } else if b.greater(*a) {
            Ordering::Less
        } else {
            Ordering::Equal
        }
    };
    let (half, odd) = (values.len() / 2, values.len() % 2 == 1);
    let (lower, &mut upper, _) = values.select_nth_unstable_by(half, order);
    if odd {
        return upper;
    }
    let below = lower
        .iter()
        .copied()
        .fold(A::LOWEST, |a, b| if b.greater(a) { b } else { a });
    mean(below, upper)
}

/// The median along `axis` of `x`, one value per output position (row-major).
fn median_rows<I: Element, A: Ordered>(
    x: &Tensor,
    axis: usize,
    load: impl Fn(I) -> A,
    mean: impl Fn(A, A) -> A,
) -> Vec<A> {
    let (n, step) = (x.shape[axis], x.strides[axis]);
    let base = x.buf.as_ptr() as *const I::Storage;
    let out_size = keepdims_shape(&x.shape, &[axis]).iter().product();
    let mut out = vec![A::LOWEST; out_size];
    let mut values: Vec<A> = Vec::with_capacity(n);
    for_each_kept_row(x, axis, |si, so, len, ti| {
        for k in 0..len {
            let start = si + k as isize * ti;
            values.clear();
            // SAFETY: the layout addresses elements inside x's buffer.
            values.extend(
                (0..n).map(|j| load(unsafe { read::<I>(base, start + j as isize * step) })),
            );
            out[so + k] = middle(&mut values, &mean);
        }
    });
    out
}

/// The median of `x` along `axis` (non-empty) as `out`: float32 for integer and bool
/// inputs, the input dtype otherwise. Complex values order by real, then imaginary part.
/// The result is contiguous, with `axis` kept as size 1.
pub fn median(x: &Tensor, axis: usize, out: DType) -> Result<Tensor> {
    let shape = keepdims_shape(&x.shape, &[axis]);
    if x.dtype.is_complex() {
        let mean = |a: Complex, b: Complex| Complex::new((a.re + b.re) / 2.0, (a.im + b.im) / 2.0);
        return write(median_rows(x, axis, |v: Complex| v, mean), &shape, |v| v);
    }
    let mean = |a: f64, b: f64| (a + b) / 2.0;
    let values = dispatch!(x.dtype, I => median_rows(x, axis, |v: I| v.to_f64(), mean));
    dispatch!(out, O => write(values, &shape, O::from_f64))
}
