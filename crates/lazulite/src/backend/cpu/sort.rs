//! Kernels of the sorting ops: sort, argsort, partition, argpartition along one axis, and
//! binary search in a sorted sequence.
//!
//! All of them use one total order per dtype (MLX's): NaN is greater than everything and
//! equal to NaN, `-0.0` equals `0.0`, complex numbers compare by real part then
//! imaginary part, with any NaN part making the number a NaN.
//!
//! Every element maps to an unsigned integer key ordered like the element, so lines sort
//! as integers. Index results sort (key, position) pairs, so equal elements keep their
//! order. Keys of 32 and 64 bits, and pairs packed in 64 bits, sort with AVX-512 where the
//! CPU has it (`sort_avx512.rs`: a vectorised quicksort, a long line's parts on several
//! threads); otherwise, and for the other items, an LSD radix sort on the key's bytes
//! (stable, linear) sorts long lines and a comparison sort short ones, and a long line on
//! a multi-core machine is cut into one piece per thread, the pieces radix-sorted at once
//! and merged, each merge split across the threads too. Many lines are spread over the
//! threads a line at a time.

#[cfg(target_arch = "x86_64")]
#[path = "sort_avx512.rs"]
mod avx512;

use super::elementwise::map1;
use super::simd::vectorised;
use super::strided::{for_each_row, PARALLEL_MIN};
use crate::backend::memory::Scratch;
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::element::{dispatch, Complex, Element};
use crate::error::Result;
use half::{bf16, f16};
use rayon::prelude::*;
use std::cmp::Ordering;

/// Lines shorter than this sort by comparisons: a radix sort's passes over 256 buckets
/// cost more than they save on them.
const RADIX_MIN: usize = 256;

/// Lines at least this long are sorted by several threads when they are too few to
/// spread over the threads.
const SPLIT_LINE_MIN: usize = 1 << 16;

/// Items a thread hands to the output at a time when a line's output is split across
/// threads.
const EMIT_CHUNK: usize = 1 << 14;

/// Unsigned integers used as sort keys, sorted a byte at a time.
trait RadixKey: bytemuck::Pod + Ord + Default + Send + Sync {
    const BYTES: usize;
    fn byte(self, pass: usize) -> usize;
}

/// A sort of `len` items at `data` in place, with room for `len` more at `scratch`; the
/// flag lets it use the rayon pool.
type VectorSort<I> = unsafe fn(data: *mut I, scratch: *mut I, len: usize, parallel: bool);

/// What a sort moves around: a key alone or a key with the element's position.
trait RadixItem: Copy + Ord + Default + Send + Sync {
    type Key: RadixKey;
    fn key(self) -> Self::Key;

    /// The vectorised sort of these items, if the CPU has one.
    fn vector_sort() -> Option<VectorSort<Self>> {
        None
    }
}

macro_rules! radix_key {
    ($($u:ty => $vector:expr),*) => {$(
        impl RadixKey for $u {
            const BYTES: usize = std::mem::size_of::<$u>();
            #[inline(always)]
            fn byte(self, pass: usize) -> usize {
                (self as u64 >> (8 * pass)) as u8 as usize
            }
        }

        impl RadixItem for $u {
            type Key = $u;
            #[inline(always)]
            fn key(self) -> $u {
                self
            }

            fn vector_sort() -> Option<VectorSort<$u>> {
                $vector
            }
        }
    )*};
}
radix_key!(u8 => None, u16 => None, u32 => avx512_sort::<u32>(), u64 => avx512_sort::<u64>());

/// The AVX-512 sort of `L` where the CPU has AVX-512.
#[cfg(target_arch = "x86_64")]
fn avx512_sort<L: avx512::Lane>() -> Option<VectorSort<L>> {
    avx512::available().then_some(avx512::sort::<L> as VectorSort<L>)
}

#[cfg(not(target_arch = "x86_64"))]
fn avx512_sort<L>() -> Option<VectorSort<L>> {
    None
}

/// A key of up to 32 bits and the position of its element in the line, as
/// `key << 32 | position`: ordered by key, then position (the stable order), and sorted
/// by the vector kernels as a u64.
#[derive(Copy, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
#[repr(transparent)]
struct Packed(u64);

impl RadixItem for Packed {
    type Key = u32;
    #[inline(always)]
    fn key(self) -> u32 {
        (self.0 >> 32) as u32
    }

    fn vector_sort() -> Option<VectorSort<Packed>> {
        #[cfg(target_arch = "x86_64")]
        if avx512::available() {
            return Some(sort_packed);
        }
        None
    }
}

/// The AVX-512 sort of the u64s inside the items (same layout, same order).
#[cfg(target_arch = "x86_64")]
unsafe fn sort_packed(data: *mut Packed, scratch: *mut Packed, len: usize, parallel: bool) {
    avx512::sort::<u64>(data.cast(), scratch.cast(), len, parallel)
}

/// A key and the position of its element in the line. Ordered by key, then position, so
/// sorting these orders equal keys by position: the stable order. (Keys of up to 32 bits
/// use [`Packed`].)
#[derive(Copy, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
struct Indexed<K> {
    key: K,
    index: u32,
}

impl<K: RadixKey> RadixItem for Indexed<K> {
    type Key = K;
    #[inline(always)]
    fn key(self) -> K {
        self.key
    }
}

/// Keys and their (key, position) items.
trait RankKey: RadixKey + RadixItem {
    type Ranked: RadixItem;
    fn ranked(self, position: usize) -> Self::Ranked;
    fn position(item: Self::Ranked) -> usize;
}

macro_rules! packed_rank_key {
    ($($u:ty),*) => {$(
        impl RankKey for $u {
            type Ranked = Packed;
            #[inline(always)]
            fn ranked(self, position: usize) -> Packed {
                Packed((self as u64) << 32 | position as u64)
            }
            #[inline(always)]
            fn position(item: Packed) -> usize {
                item.0 as u32 as usize
            }
        }
    )*};
}
packed_rank_key!(u8, u16, u32);

impl RankKey for u64 {
    type Ranked = Indexed<u64>;
    #[inline(always)]
    fn ranked(self, position: usize) -> Indexed<u64> {
        Indexed {
            key: self,
            index: position as u32,
        }
    }
    #[inline(always)]
    fn position(item: Indexed<u64>) -> usize {
        item.index as usize
    }
}

/// Elements with the sorting ops' total order, given by an integer key.
trait SortKey: Element {
    type Key: RankKey;

    /// A key ordered as the element: equal exactly when the elements compare equal.
    fn rank_key(self) -> Self::Key;

    /// Writes the sorted values of every line of `lines`. By default, sorts the
    /// elements' positions and gathers the elements: stable, and exact for elements that
    /// compare equal without being identical (complex numbers with a NaN part).
    fn sort_values(lines: &Lines) -> Result<()> {
        lines.run(
            Arrange::Sort,
            |line, i| line.read::<Self>(i).rank_key().ranked(i),
            |line, k, item| line.write::<Self>(k, line.read::<Self>(Self::Key::position(item))),
        );
        Ok(())
    }
}

/// Sorts the values themselves as keys that can be turned back into values: half the
/// data of (key, position) pairs. Equal values are interchangeable, except for the two
/// zeros, which get distinct keys (`-0.0` first) and for NaNs, which all become the same
/// NaN.
trait ValueKey: SortKey {
    fn value_key(self) -> Self::Key;
    fn from_value_key(key: Self::Key) -> Self;
}

fn sort_by_value_keys<T: ValueKey>(lines: &Lines) -> Result<()> {
    let same_size = std::mem::size_of::<T::Storage>() == std::mem::size_of::<T::Key>();
    match <T::Key as RadixItem>::vector_sort() {
        Some(vector_sort) if same_size && lines.step == 1 && lines.inner == 1 => {
            sort_contiguous_values::<T>(lines, vector_sort)
        }
        _ => {
            lines.run(
                Arrange::Sort,
                |line, i| line.read::<T>(i).value_key(),
                |line, k, key| line.write::<T>(k, T::from_value_key(key)),
            );
            Ok(())
        }
    }
}

/// The value sort of lines contiguous in the input and in the output (the common case):
/// a line's keys are made in its output, sorted there with scratch room from the block
/// cache, and turned back into values in place; both conversions are vectorised loops.
fn sort_contiguous_values<T: ValueKey>(
    lines: &Lines,
    vector_sort: VectorSort<T::Key>,
) -> Result<()> {
    let len = lines.len;
    let sort_line = |&(first, base): &(isize, usize), scratch: &mut Scratch<T::Key>, split| {
        // SAFETY: the line's `len` input elements start at `first`; output positions
        // base..base + len belong to this line alone (see `Lines`' Sync), and the output's
        // values have the keys' size (checked by the caller).
        let (src, keys) = unsafe {
            (
                std::slice::from_raw_parts((lines.src as *const T::Storage).offset(first), len),
                std::slice::from_raw_parts_mut((lines.dst as *mut T::Key).add(base), len),
            )
        };
        in_chunks(
            keys,
            split,
            #[inline(always)]
            |start, part| {
                for (k, &v) in part.iter_mut().zip(&src[start..]) {
                    *k = T::load(v).value_key();
                }
            },
        );
        // SAFETY: `keys` holds `len` keys and the scratch has room for `len`.
        unsafe { vector_sort(keys.as_mut_ptr(), scratch.as_mut_ptr(), len, split) };
        in_chunks(
            keys,
            split,
            #[inline(always)]
            |_, part| {
                for k in part {
                    *k = bytemuck::cast(T::from_value_key(*k).store());
                }
            },
        );
    };
    match lines.spread() {
        Spread::ByLine => lines.starts.par_iter().try_for_each_init(
            || Scratch::new(len),
            |scratch, start| {
                sort_line(start, scratch.as_mut().map_err(|e| e.clone())?, false);
                Ok(())
            },
        ),
        Spread::InTurn { split } => {
            let mut scratch = Scratch::new(len)?;
            for start in &lines.starts {
                sort_line(start, &mut scratch, split);
            }
            Ok(())
        }
    }
}

/// `body(start, part)` over the consecutive parts of `keys` (`start`: the part's first
/// position), on the rayon pool when `parallel`, compiled for the widest vectors the CPU
/// has.
fn in_chunks<K: Send>(keys: &mut [K], parallel: bool, body: impl Fn(usize, &mut [K]) + Sync) {
    let run = |start: usize, part: &mut [K]| {
        vectorised(
            #[inline(always)]
            || body(start, part),
        )
    };
    if parallel {
        keys.par_chunks_mut(EMIT_CHUNK)
            .enumerate()
            .for_each(|(c, part)| run(c * EMIT_CHUNK, part));
    } else {
        run(0, keys);
    }
}

macro_rules! int_key {
    ($($t:ty => $u:ty, $flip:expr);*) => {$(
        impl SortKey for $t {
            type Key = $u;
            #[inline(always)]
            fn rank_key(self) -> $u {
                // Flipping the sign bit orders two's complement integers as unsigned.
                (self as $u) ^ $flip
            }
            fn sort_values(lines: &Lines) -> Result<()> {
                sort_by_value_keys::<$t>(lines)
            }
        }

        impl ValueKey for $t {
            #[inline(always)]
            fn value_key(self) -> $u {
                self.rank_key()
            }
            #[inline(always)]
            fn from_value_key(key: $u) -> $t {
                (key ^ $flip) as $t
            }
        }
    )*};
}
int_key!(u8 => u8, 0; u16 => u16, 0; u32 => u32, 0; u64 => u64, 0;
    i8 => u8, 1 << 7; i16 => u16, 1 << 15; i32 => u32, 1 << 31; i64 => u64, 1 << 63);

impl SortKey for bool {
    type Key = u8;
    #[inline(always)]
    fn rank_key(self) -> u8 {
        self as u8
    }
    fn sort_values(lines: &Lines) -> Result<()> {
        sort_by_value_keys::<bool>(lines)
    }
}

impl ValueKey for bool {
    #[inline(always)]
    fn value_key(self) -> u8 {
        self as u8
    }
    #[inline(always)]
    fn from_value_key(key: u8) -> bool {
        key != 0
    }
}

/// Float keys: flipping every bit of a negative float and the sign bit of a positive one
/// gives an unsigned integer in the float's order; every NaN maps to the largest key so
/// NaNs go last. The rank key also maps `-0.0` to `0.0`'s key.
macro_rules! float_key {
    ($($t:ty => $u:ty, $nan:expr);*) => {$(
        impl SortKey for $t {
            type Key = $u;
            #[inline(always)]
            fn rank_key(self) -> $u {
                let zero: $t = <$t>::from_bits(0);
                if self == zero {
                    zero.value_key()
                } else {
                    self.value_key()
                }
            }
            fn sort_values(lines: &Lines) -> Result<()> {
                sort_by_value_keys::<$t>(lines)
            }
        }

        impl ValueKey for $t {
            #[inline(always)]
            fn value_key(self) -> $u {
                const SIGN: $u = 1 << (<$u>::BITS - 1);
                let bits = self.to_bits();
                // All ones for a negative float: branch-free, as signs come in random order.
                let negative = (bits >> (<$u>::BITS - 1)).wrapping_neg();
                if self.is_nan() {
                    <$u>::MAX
                } else {
                    bits ^ (negative | SIGN)
                }
            }
            #[inline(always)]
            fn from_value_key(key: $u) -> $t {
                const SIGN: $u = 1 << (<$u>::BITS - 1);
                // All ones for the key of a negative float.
                let negative = (key >> (<$u>::BITS - 1) ^ 1).wrapping_neg();
                if key == <$u>::MAX {
                    $nan
                } else {
                    <$t>::from_bits(key ^ (negative | SIGN))
                }
            }
        }
    )*};
}
float_key!(f32 => u32, f32::NAN; f64 => u64, f64::NAN; f16 => u16, f16::NAN;
    bf16 => u16, bf16::NAN);

impl SortKey for Complex {
    type Key = u64;
    /// The real part's key, then the imaginary part's; any NaN part makes the largest key.
    #[inline(always)]
    fn rank_key(self) -> u64 {
        if self.re.is_nan() || self.im.is_nan() {
            u64::MAX
        } else {
            (self.re.rank_key() as u64) << 32 | self.im.rank_key() as u64
        }
    }
}

/// What to do with each line along the axis.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SortKind {
    /// Sorted values (stable).
    Sort,
    /// Indices that sort the line (stable: equal elements keep their order), as uint32.
    ArgSort,
    /// Values rearranged so that position `kth` holds the element a sort would put there,
    /// with no greater element before it and no smaller one after it.
    Partition(usize),
    /// The indices of that arrangement, as uint32.
    ArgPartition(usize),
}

/// Applies `kind` to every line of `x` along `axis`. The output is contiguous with `x`'s
/// shape; its dtype is `x`'s for values and uint32 for indices. Lines must be shorter
/// than 2^32 elements (checked when recorded).
pub fn sort(kind: SortKind, x: &Tensor, axis: usize) -> Result<Tensor> {
    dispatch!(x.dtype, T => sort_typed::<T>(kind, x, axis))
}

#[inline(always)]
unsafe fn read<T: Element>(base: *const u8, offset: isize) -> T {
    T::load(std::ptr::read_unaligned(
        (base as *const T::Storage).offset(offset),
    ))
}

/// The lines of one sort: where each starts in the input and in the output.
struct Lines {
    src: *const u8,
    /// Elements between consecutive elements of a line in the input.
    step: isize,
    /// The contiguous output, of the input's dtype or uint32.
    dst: *mut u8,
    /// Elements between consecutive elements of a line in the output.
    inner: usize,
    len: usize,
    /// Each line's first element: an offset in the input, a position in the output.
    starts: Vec<(isize, usize)>,
}

// SAFETY: the lines are read from a buffer nobody writes during the sort, and every
// output position belongs to one line and is written once, by whichever thread holds
// that line (or that part of the line's merge).
unsafe impl Sync for Lines {}

/// One line of [`Lines`].
#[derive(Copy, Clone)]
struct Line<'a> {
    lines: &'a Lines,
    first: isize,
    base: usize,
}

impl Line<'_> {
    /// Element `i` of the line, `i < len`.
    #[inline(always)]
    fn read<T: Element>(self, i: usize) -> T {
        debug_assert!(i < self.lines.len);
        // SAFETY: the input's layout addresses the line's elements inside its buffer.
        unsafe { read::<T>(self.lines.src, self.first + i as isize * self.lines.step) }
    }

    /// Writes output position `k < len` of the line; the caller writes each one once.
    #[inline(always)]
    fn write<T: Element>(self, k: usize, value: T) {
        debug_assert!(k < self.lines.len);
        // SAFETY: a position of the contiguous output, which has the dtype the kind
        // writes (T for values, u32 for indices); see `Lines`' Sync.
        unsafe {
            (self.lines.dst as *mut T::Storage)
                .add(self.base + k * self.lines.inner)
                .write(value.store())
        }
    }
}

/// How a line is arranged.
#[derive(Copy, Clone)]
enum Arrange {
    Sort,
    /// Partition around position `kth`.
    Select(usize),
}

impl Lines {
    /// Makes the items of every line with `load(line, i)`, arranges them and hands output
    /// position `k`'s item to `emit(line, k, item)`.
    fn run<I: RadixItem>(
        &self,
        arrange: Arrange,
        load: impl Fn(Line, usize) -> I + Sync,
        emit: impl Fn(Line, usize, I) + Sync,
    ) {
        let line_at = |&(first, base): &(isize, usize)| Line {
            lines: self,
            first,
            base,
        };
        match self.spread() {
            Spread::ByLine => self.starts.par_iter().for_each_init(
                || (Vec::new(), Vec::new()),
                |(items, tmp), start| {
                    arrange_line(arrange, line_at(start), 0, items, tmp, &load, &emit)
                },
            ),
            Spread::InTurn { split } => {
                let height = if split {
                    rayon::current_num_threads()
                        .next_power_of_two()
                        .trailing_zeros()
                } else {
                    0
                };
                let (mut items, mut tmp) = (Vec::new(), Vec::new());
                for start in &self.starts {
                    arrange_line(
                        arrange,
                        line_at(start),
                        height,
                        &mut items,
                        &mut tmp,
                        &load,
                        &emit,
                    );
                }
            }
        }
    }

    /// How the lines share the threads: enough lines of enough work go to the rayon
    /// pool a line at a time; otherwise they run in turn, each long one split across the
    /// threads.
    fn spread(&self) -> Spread {
        let threads = rayon::current_num_threads();
        let parallel = self.starts.len() * self.len >= PARALLEL_MIN && threads > 1;
        if parallel && self.starts.len() >= threads {
            Spread::ByLine
        } else {
            Spread::InTurn {
                split: parallel && self.len >= SPLIT_LINE_MIN,
            }
        }
    }
}

/// See [`Lines::spread`].
#[derive(Copy, Clone)]
enum Spread {
    ByLine,
    InTurn { split: bool },
}

/// Arranges one line; a sort is cut into 2^`height` pieces sorted on the rayon pool and
/// merged. `items` and `tmp` are scratch.
fn arrange_line<I: RadixItem>(
    arrange: Arrange,
    line: Line,
    height: u32,
    items: &mut Vec<I>,
    tmp: &mut Vec<I>,
    load: &(impl Fn(Line, usize) -> I + Sync),
    emit: &(impl Fn(Line, usize, I) + Sync),
) {
    let n = line.lines.len;
    let parallel = height > 0;
    match arrange {
        Arrange::Select(kth) => {
            items.clear();
            items.extend((0..n).map(|i| load(line, i)));
            items.select_nth_unstable(kth);
        }
        Arrange::Sort => match I::vector_sort() {
            Some(vector_sort) => {
                items.clear();
                if parallel {
                    items.par_extend((0..n).into_par_iter().map(|i| load(line, i)));
                } else {
                    items.extend((0..n).map(|i| load(line, i)));
                }
                tmp.clear();
                tmp.reserve(n);
                // SAFETY: `items` holds n items and `tmp` has room for n more.
                unsafe { vector_sort(items.as_mut_ptr(), tmp.as_mut_ptr(), n, parallel) };
            }
            None if parallel => {
                let half = n / 2;
                let (a, b) = rayon::join(
                    || sort_tree(0, half, height - 1, &|i| load(line, i)),
                    || sort_tree(half, n - half, height - 1, &|i| load(line, i)),
                );
                parallel_merge(&a, &b, &|k, item| emit(line, k, item));
                return;
            }
            None => sort_piece(n, |i| load(line, i), items, tmp),
        },
    }
    if parallel {
        items
            .par_chunks(EMIT_CHUNK)
            .enumerate()
            .for_each(|(chunk, part)| {
                for (k, &item) in part.iter().enumerate() {
                    emit(line, chunk * EMIT_CHUNK + k, item);
                }
            });
    } else {
        for (k, &item) in items.iter().enumerate() {
            emit(line, k, item);
        }
    }
}

/// The items `load(start..start + n)`, sorted by 2^`height` threads.
fn sort_tree<I: RadixItem>(
    start: usize,
    n: usize,
    height: u32,
    load: &(impl Fn(usize) -> I + Sync),
) -> Vec<I> {
    if height == 0 {
        let (mut items, mut tmp) = (Vec::new(), Vec::new());
        sort_piece(n, |i| load(start + i), &mut items, &mut tmp);
        return items;
    }
    let half = n / 2;
    let (a, b) = rayon::join(
        || sort_tree(start, half, height - 1, load),
        || sort_tree(start + half, n - half, height - 1, load),
    );
    let mut merged: Vec<I> = Vec::with_capacity(n);
    let out = SharedSlots(merged.as_mut_ptr());
    // SAFETY: `k < n`, within the capacity, and the merge writes each position once.
    parallel_merge(&a, &b, &|k, item| unsafe { out.get().add(k).write(item) });
    // SAFETY: the merge wrote all n positions.
    unsafe { merged.set_len(n) };
    merged
}

/// A vector's unused capacity, written from several threads at disjoint positions.
struct SharedSlots<I>(*mut I);

impl<I> SharedSlots<I> {
    fn get(&self) -> *mut I {
        self.0
    }
}

// SAFETY: the threads write disjoint positions (see the users).
unsafe impl<I: Send> Sync for SharedSlots<I> {}

/// Replaces `items` with `load(0..n)` sorted: an LSD radix sort on the key's bytes, the
/// counts of every byte taken in one read, a pass skipped when all keys share its byte;
/// a comparison sort for short lines. `tmp` is scratch.
fn sort_piece<I: RadixItem>(
    n: usize,
    load: impl Fn(usize) -> I,
    items: &mut Vec<I>,
    tmp: &mut Vec<I>,
) {
    items.clear();
    if n < RADIX_MIN {
        items.extend((0..n).map(load));
        items.sort_unstable();
        return;
    }
    let bytes = <I::Key as RadixKey>::BYTES;
    items.extend((0..n).map(load));
    // Counted in a loop of its own: counting inside the loading closure measured several
    // times slower.
    let mut counts = [[0u32; 256]; 8];
    for item in items.iter() {
        let key = item.key();
        for (pass, count) in counts[..bytes].iter_mut().enumerate() {
            count[key.byte(pass)] += 1;
        }
    }
    for (pass, count) in counts[..bytes].iter().enumerate() {
        if count[items[0].key().byte(pass)] as usize == n {
            continue;
        }
        let mut offsets = [0usize; 256];
        let mut next = 0;
        for (offset, &c) in offsets.iter_mut().zip(count) {
            *offset = next;
            next += c as usize;
        }
        tmp.clear();
        tmp.reserve(n);
        let dst = tmp.as_mut_ptr();
        for &item in items.iter() {
            let bucket = &mut offsets[item.key().byte(pass)];
            // SAFETY: bucket b's offsets run over [start_b, start_b + count_b), and these
            // ranges tile 0..n, within tmp's capacity.
            unsafe { dst.add(*bucket).write(item) };
            *bucket += 1;
        }
        // SAFETY: the pass wrote every position of 0..n once (the ranges tile it).
        unsafe { tmp.set_len(n) };
        std::mem::swap(items, tmp);
    }
}

/// Merges the sorted `a` and `b` (ties: `a` first), handing output position `k`'s item
/// to `emit(k, item)`; the output is cut into pieces merged on the rayon pool, each
/// piece's inputs found by a binary search.
fn parallel_merge<I: RadixItem>(a: &[I], b: &[I], emit: &(impl Fn(usize, I) + Sync)) {
    let n = a.len() + b.len();
    let pieces = (rayon::current_num_threads() * 2).clamp(1, n.div_ceil(RADIX_MIN));
    (0..pieces).into_par_iter().for_each(|piece| {
        let (start, end) = (n * piece / pieces, n * (piece + 1) / pieces);
        let (a_start, a_end) = (taken_from_a(a, b, start), taken_from_a(a, b, end));
        merge(
            &a[a_start..a_end],
            &b[start - a_start..end - a_end],
            start,
            emit,
        );
    });
}

/// How many of the first `p` merged items come from `a`.
fn taken_from_a<I: Ord>(a: &[I], b: &[I], p: usize) -> usize {
    let (mut lo, mut hi) = (p.saturating_sub(b.len()), p.min(a.len()));
    while lo < hi {
        let mid = (lo + hi) / 2;
        if a[mid] <= b[p - 1 - mid] {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Merges `a` and `b` (ties: `a` first) into output positions from `start` on.
fn merge<I: Ord + Copy>(a: &[I], b: &[I], start: usize, emit: &impl Fn(usize, I)) {
    let (mut i, mut j, mut k) = (0, 0, start);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        let take_b = y < x;
        emit(k, if take_b { y } else { x });
        k += 1;
        i += usize::from(!take_b);
        j += usize::from(take_b);
    }
    for &item in a[i..].iter().chain(&b[j..]) {
        emit(k, item);
        k += 1;
    }
}

fn sort_typed<T: SortKey>(kind: SortKind, x: &Tensor, axis: usize) -> Result<Tensor> {
    let returns_indices = matches!(kind, SortKind::ArgSort | SortKind::ArgPartition(_));
    let out_dtype = if returns_indices {
        DType::UInt32
    } else {
        x.dtype
    };
    let mut out = Tensor::uninit(out_dtype, &x.shape)?;
    if out.size() == 0 {
        return Ok(out);
    }
    // Visit every line: iterate over all axes but `axis`, in the input and the output.
    let mut rest_shape = x.shape.clone();
    rest_shape.remove(axis);
    let mut rest_strides = x.strides.clone();
    rest_strides.remove(axis);
    let mut out_strides = out.strides.clone();
    out_strides.remove(axis);
    let mut starts = Vec::new();
    for_each_row(
        &rest_shape,
        [&rest_strides, &out_strides],
        [x.offset as isize, 0],
        |[start, out_start], len, [in_step, out_step]| {
            starts.extend(
                (0..len as isize)
                    .map(|r| (start + r * in_step, (out_start + r * out_step) as usize)),
            );
        },
    );
    let lines = Lines {
        src: x.buf.as_ptr(),
        step: x.strides[axis],
        dst: if returns_indices {
            out.data_ptr_mut::<u32>() as *mut u8
        } else {
            out.data_ptr_mut::<T>() as *mut u8
        },
        inner: x.shape[axis + 1..].iter().product(),
        len: x.shape[axis],
        starts,
    };
    let ranked = |line: Line, i: usize| line.read::<T>(i).rank_key().ranked(i);
    let source = |line: Line, k: usize, item: <T::Key as RankKey>::Ranked| {
        line.write::<T>(k, line.read::<T>(T::Key::position(item)))
    };
    let index = |line: Line, k: usize, item: <T::Key as RankKey>::Ranked| {
        line.write::<u32>(k, T::Key::position(item) as u32)
    };
    match kind {
        SortKind::Sort => T::sort_values(&lines)?,
        SortKind::ArgSort => lines.run(Arrange::Sort, ranked, index),
        // Ties broken by index make the result depend only on the input.
        SortKind::Partition(kth) => lines.run(Arrange::Select(kth), ranked, source),
        SortKind::ArgPartition(kth) => lines.run(Arrange::Select(kth), ranked, index),
    }
    Ok(out)
}

/// For each element of `values`, the number of elements of the sorted 1-D `sequence`
/// that are smaller (`right == false`) or not greater (`right == true`), as uint32.
/// Both tensors have the same dtype.
pub fn searchsorted(sequence: &Tensor, values: Tensor, right: bool) -> Result<Tensor> {
    dispatch!(sequence.dtype, T => searchsorted_typed::<T>(sequence, values, right))
}

fn searchsorted_typed<T: SortKey>(
    sequence: &Tensor,
    values: Tensor,
    right: bool,
) -> Result<Tensor> {
    let n = sequence.shape[0];
    let sorted: Vec<T::Key> = (0..n).map(|i| sequence.get::<T>(i).rank_key()).collect();
    map1::<T, u32>(values, |v| {
        let v = v.rank_key();
        let before = |s: &T::Key| match s.cmp(&v) {
            Ordering::Less => true,
            Ordering::Equal => right,
            Ordering::Greater => false,
        };
        sorted.partition_point(before) as u32
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_last_and_stable() {
        let nan = f32::NAN;
        let x = Tensor::from_slice(&[3.0f32, nan, 1.0, -0.0, nan, 0.0], &[6]).unwrap();
        let i = sort(SortKind::ArgSort, &x, 0).unwrap();
        assert_eq!(i.slice::<u32>(), [3, 5, 2, 0, 1, 4]);
        let p = sort(SortKind::Partition(1), &x, 0).unwrap();
        assert_eq!(p.slice::<f32>()[1], 0.0);
    }

    #[test]
    fn lines_along_a_strided_axis() {
        // Column-major 2x3: rows are [5, 1, 3] and [0, 4, 2].
        let mut x = Tensor::from_slice(&[5i32, 0, 1, 4, 3, 2], &[2, 3]).unwrap();
        x.strides = vec![1, 2];
        let s = sort(SortKind::Sort, &x, 1).unwrap();
        assert_eq!(s.slice::<i32>(), [1, 3, 5, 0, 2, 4]);
        let a = sort(SortKind::ArgSort, &x, 0).unwrap();
        assert_eq!(a.slice::<u32>(), [1, 0, 1, 0, 1, 0]);
    }

    #[test]
    fn binary_search_sides() {
        let seq = Tensor::from_slice(&[1i32, 2, 2, 3], &[4]).unwrap();
        let v = Tensor::from_slice(&[2i32, 0, 5], &[3]).unwrap();
        let left = searchsorted(&seq, v.clone(), false).unwrap();
        assert_eq!(left.slice::<u32>(), [1, 0, 4]);
        let right = searchsorted(&seq, v, true).unwrap();
        assert_eq!(right.slice::<u32>(), [3, 0, 4]);
    }
}
