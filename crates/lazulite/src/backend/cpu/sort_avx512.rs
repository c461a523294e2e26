//! AVX-512 sorting of unsigned integers (u32 in 16 lanes, u64 in 8): a quicksort whose
//! partitions are out of place (register compresses and masked stores into a scratch
//! buffer, the two buffers swapping roles at each level), pieces of up to eight registers
//! sorted by a bitonic network in registers. The two halves of a long part sort on the
//! rayon pool. The order of elements that compare equal is not kept, so they must be
//! identical (the sort keys and (key, position) pairs of `sort.rs` are).

use std::arch::x86_64::*;

/// Whether the CPU runs these kernels (checked once).
pub(super) fn available() -> bool {
    use std::sync::OnceLock;
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE
        .get_or_init(|| is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("popcnt"))
}

/// The lanes of one element type in a 512-bit register.
pub(super) trait Lane: Copy + Ord + Send + Sync + 'static {
    const LANES: usize;
    const MAX: Self;
    unsafe fn splat(x: Self) -> __m512i;
    /// Lanes 0..LANES as a vector.
    unsafe fn iota() -> __m512i;
    /// The first `count` elements at `p`, the other lanes `MAX`.
    unsafe fn load(p: *const Self, count: usize) -> __m512i;
    unsafe fn store(p: *mut Self, count: usize, v: __m512i);
    /// Bit i set where lane i of `v` is below `pivot` (or equal, with `or_equal`).
    unsafe fn below(v: __m512i, pivot: __m512i, or_equal: bool) -> u16;
    /// The lanes of `v` where `mask` is set, packed into the low lanes.
    unsafe fn compress(mask: u16, v: __m512i) -> __m512i;
    unsafe fn lower(a: __m512i, b: __m512i) -> __m512i;
    unsafe fn upper(a: __m512i, b: __m512i) -> __m512i;
    /// Lane i of the result is lane `index[i]` of `v`.
    unsafe fn permute(index: __m512i, v: __m512i) -> __m512i;
    /// Lanes of `b` where `mask` is set, of `a` elsewhere.
    unsafe fn blend(mask: u16, a: __m512i, b: __m512i) -> __m512i;
    /// Bit i set where lane i of `a & b` is not zero.
    unsafe fn test(a: __m512i, b: __m512i) -> u16;
    unsafe fn xor(a: __m512i, b: __m512i) -> __m512i;
    unsafe fn add(a: __m512i, b: __m512i) -> __m512i;
    unsafe fn lane_constant(x: usize) -> __m512i;
}

macro_rules! lane {
    ($t:ty, $lanes:expr, $mask:ty, $set1:ident, $loadu:ident, $storeu:ident, $cmplt:ident,
     $cmple:ident, $compress:ident, $min:ident, $max:ident, $perm:ident, $blend:ident,
     $test:ident, $add:ident, $si:ty, $iota:expr) => {
        impl Lane for $t {
            const LANES: usize = $lanes;
            const MAX: $t = <$t>::MAX;
            #[inline]
            #[target_feature(enable = "avx512f,popcnt")]
            unsafe fn splat(x: $t) -> __m512i {
                $set1(x as _)
            }
            #[inline]
            #[target_feature(enable = "avx512f,popcnt")]
            unsafe fn iota() -> __m512i {
                $iota
            }
            #[inline]
            #[target_feature(enable = "avx512f,popcnt")]
            unsafe fn load(p: *const $t, count: usize) -> __m512i {
                let mask = ((1u32 << count) - 1) as $mask;
                $loadu($set1(<$t>::MAX as _), mask, p as *const $si)
            }
            #[inline]
            #[target_feature(enable = "avx512f,popcnt")]
            unsafe fn store(p: *mut $t, count: usize, v: __m512i) {
                $storeu(p as *mut $si, ((1u32 << count) - 1) as $mask, v)
            }
            #[inline]
            #[target_feature(enable = "avx512f,popcnt")]
            unsafe fn below(v: __m512i, pivot: __m512i, or_equal: bool) -> u16 {
                (if or_equal {
                    $cmple(v, pivot)
                } else {
                    $cmplt(v, pivot)
                }) as u16
            }
            #[inline]
            #[target_feature(enable = "avx512f,popcnt")]
            unsafe fn compress(mask: u16, v: __m512i) -> __m512i {
                $compress(mask as $mask, v)
            }
            #[inline]
            #[target_feature(enable = "avx512f,popcnt")]
            unsafe fn lower(a: __m512i, b: __m512i) -> __m512i {
                $min(a, b)
            }
            #[inline]
            #[target_feature(enable = "avx512f,popcnt")]
            unsafe fn upper(a: __m512i, b: __m512i) -> __m512i {
                $max(a, b)
            }
            #[inline]
            #[target_feature(enable = "avx512f,popcnt")]
            unsafe fn permute(index: __m512i, v: __m512i) -> __m512i {
                $perm(index, v)
            }
            #[inline]
            #[target_feature(enable = "avx512f,popcnt")]
            unsafe fn blend(mask: u16, a: __m512i, b: __m512i) -> __m512i {
                $blend(mask as $mask, a, b)
            }
            #[inline]
            #[target_feature(enable = "avx512f,popcnt")]
            unsafe fn test(a: __m512i, b: __m512i) -> u16 {
                $test(a, b) as u16
            }
            #[inline]
            #[target_feature(enable = "avx512f,popcnt")]
            unsafe fn xor(a: __m512i, b: __m512i) -> __m512i {
                _mm512_xor_si512(a, b)
            }
            #[inline]
            #[target_feature(enable = "avx512f,popcnt")]
            unsafe fn add(a: __m512i, b: __m512i) -> __m512i {
                $add(a, b)
            }
            #[inline]
            #[target_feature(enable = "avx512f,popcnt")]
            unsafe fn lane_constant(x: usize) -> __m512i {
                $set1(x as _)
            }
        }
    };
}
lane!(
    u32,
    16,
    u16,
    _mm512_set1_epi32,
    _mm512_mask_loadu_epi32,
    _mm512_mask_storeu_epi32,
    _mm512_cmplt_epu32_mask,
    _mm512_cmple_epu32_mask,
    _mm512_maskz_compress_epi32,
    _mm512_min_epu32,
    _mm512_max_epu32,
    _mm512_permutexvar_epi32,
    _mm512_mask_blend_epi32,
    _mm512_test_epi32_mask,
    _mm512_add_epi32,
    i32,
    _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
);
lane!(
    u64,
    8,
    u8,
    _mm512_set1_epi64,
    _mm512_mask_loadu_epi64,
    _mm512_mask_storeu_epi64,
    _mm512_cmplt_epu64_mask,
    _mm512_cmple_epu64_mask,
    _mm512_maskz_compress_epi64,
    _mm512_min_epu64,
    _mm512_max_epu64,
    _mm512_permutexvar_epi64,
    _mm512_mask_blend_epi64,
    _mm512_test_epi64_mask,
    _mm512_add_epi64,
    i64,
    _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7)
);

/// Registers a piece sorted by the network may fill.
const REGISTERS: usize = 8;

/// Parts at least this long are sorted on two threads of the rayon pool.
const PARALLEL_PART: usize = 1 << 16;

/// A pointer that may cross threads: the two halves of a split write disjoint ranges.
#[derive(Copy, Clone)]
struct Ptr<L>(*mut L);

impl<L> Ptr<L> {
    fn get(self) -> *mut L {
        self.0
    }
}
// SAFETY: see the type's doc; the ranges handed to each thread do not overlap.
unsafe impl<L: Send> Send for Ptr<L> {}
unsafe impl<L: Send> Sync for Ptr<L> {}

/// Sorts `data[..len]`; `scratch` has room for `len` elements. With `parallel`, parts
/// of the quicksort run on the rayon pool.
///
/// # Safety
/// The CPU has AVX-512F ([`available`]); `data` holds `len` initialized elements and
/// `scratch` `len` writable ones, not overlapping.
#[target_feature(enable = "avx512f,popcnt")]
pub(super) unsafe fn sort<L: Lane>(data: *mut L, scratch: *mut L, len: usize, parallel: bool) {
    let depth = 2 * (usize::BITS - len.leading_zeros()) + 8;
    quicksort(Ptr(data), Ptr(scratch), len, false, depth, parallel);
}

/// Sorts the `len` elements at `data` into `data` (`into_scratch == false`) or into
/// `scratch`, using the other buffer for the partitions.
#[target_feature(enable = "avx512f,popcnt")]
unsafe fn quicksort<L: Lane>(
    data: Ptr<L>,
    scratch: Ptr<L>,
    len: usize,
    into_scratch: bool,
    depth: u32,
    parallel: bool,
) {
    let (data_ptr, scratch_ptr) = (data.get(), scratch.get());
    let out = if into_scratch { scratch_ptr } else { data_ptr };
    if len <= REGISTERS * L::LANES {
        network_sort(data_ptr, out, len);
        return;
    }
    if depth == 0 {
        // Too many poor pivots: finish this part with a comparison sort.
        std::ptr::copy(data_ptr, out, len);
        std::slice::from_raw_parts_mut(out, len).sort_unstable();
        return;
    }
    let pivot = pivot(data_ptr, len);
    let mut left = partition(data_ptr, scratch_ptr, len, pivot, false);
    // All-equal parts are sorted already (the partitions keep the order).
    let mut left_done = false;
    let mut right_done = false;
    if left == 0 {
        // The pivot is the minimum: split off the elements equal to it.
        left = partition(data_ptr, scratch_ptr, len, pivot, true);
        left_done = true;
        right_done = left == len;
    }
    // Both parts are now in `scratch`; each ends in the buffer asked for.
    let part = |start: usize, count: usize, done: bool| {
        let (d, s) = (Ptr(scratch.get().add(start)), Ptr(data.get().add(start)));
        if done {
            if !into_scratch {
                std::ptr::copy_nonoverlapping(d.get(), s.get(), count);
            }
        } else {
            quicksort(d, s, count, !into_scratch, depth - 1, parallel);
        }
    };
    if parallel && len >= PARALLEL_PART {
        rayon::join(
            || part(0, left, left_done),
            || part(left, len - left, right_done),
        );
    } else {
        part(0, left, left_done);
        part(left, len - left, right_done);
    }
}

/// The median of three elements spread over a short part, of medians of three for a
/// long one.
unsafe fn pivot<L: Lane>(data: *const L, len: usize) -> L {
    let sample = |i: usize| *data.add(i * (len - 1) / 8);
    let median3 = |a: L, b: L, c: L| a.max(b).min(a.min(b).max(c));
    if len < 1024 {
        return median3(sample(1), sample(4), sample(7));
    }
    median3(
        median3(sample(0), sample(1), sample(2)),
        median3(sample(3), sample(4), sample(5)),
        median3(sample(6), sample(7), sample(8)),
    )
}

/// Writes the `len` elements at `src` to `dst`, those below `pivot` (or equal, with
/// `or_equal`) first, filled from the front, the others from the back. Returns the
/// first group's size. (The order within each group changes, which only matters for
/// elements that compare equal without being identical: there are none.)
#[target_feature(enable = "avx512f,popcnt")]
#[inline(never)]
unsafe fn partition<L: Lane>(
    src: *const L,
    dst: *mut L,
    len: usize,
    pivot: L,
    or_equal: bool,
) -> usize {
    let pivot = L::splat(pivot);
    let full = len / L::LANES * L::LANES;
    let all = ((1u32 << L::LANES) - 1) as u16;
    let (mut low, mut high) = (0, len);
    let mut split = |v: __m512i, valid: u16, lanes: usize| {
        let mask = L::below(v, pivot, or_equal) & valid;
        let count = mask.count_ones() as usize;
        // Register compresses and masked stores: compress-stores to memory are slow.
        L::store(dst.add(low), count, L::compress(mask, v));
        high -= lanes - count;
        L::store(dst.add(high), lanes - count, L::compress(!mask & valid, v));
        low += count;
    };
    let mut i = 0;
    while i < full {
        split(L::load(src.add(i), L::LANES), all, L::LANES);
        i += L::LANES;
    }
    let rest = len - full;
    split(
        L::load(src.add(full), rest),
        ((1u32 << rest) - 1) as u16,
        rest,
    );
    low
}

/// Writes the `len <= REGISTERS * LANES` elements at `src` to `dst` sorted (the two
/// may be the same), with a bitonic network over as many registers as they need (a
/// power of two), padded with `MAX`.
#[target_feature(enable = "avx512f,popcnt")]
#[inline(never)]
unsafe fn network_sort<L: Lane>(src: *const L, dst: *mut L, len: usize) {
    match len.div_ceil(L::LANES) {
        0 => {}
        1 => network::<L, 1>(src, dst, len),
        2 => network::<L, 2>(src, dst, len),
        3 | 4 => network::<L, 4>(src, dst, len),
        _ => network::<L, 8>(src, dst, len),
    }
}

/// The network on `R` registers (unrolled: every stage's masks are constants).
#[target_feature(enable = "avx512f,popcnt")]
#[inline]
unsafe fn network<L: Lane, const R: usize>(src: *const L, dst: *mut L, len: usize) {
    let mut r = [L::splat(L::MAX); R];
    for (k, reg) in r.iter_mut().enumerate() {
        let start = k * L::LANES;
        *reg = L::load(src.add(start), len.saturating_sub(start).min(L::LANES));
    }
    let iota = L::iota();
    let size = R * L::LANES;
    let mut k = 2;
    while k <= size {
        let mut j = k / 2;
        while j > 0 {
            if j >= L::LANES {
                // Compare-exchange whole registers.
                let step = j / L::LANES;
                for a in 0..R {
                    let b = a ^ step;
                    if b > a {
                        let (lo, hi) = (L::lower(r[a], r[b]), L::upper(r[a], r[b]));
                        let ascending = (a * L::LANES) & k == 0;
                        (r[a], r[b]) = if ascending { (lo, hi) } else { (hi, lo) };
                    }
                }
            } else {
                let partner = L::xor(iota, L::lane_constant(j));
                let upper = L::test(iota, L::lane_constant(j));
                for (a, reg) in r.iter_mut().enumerate() {
                    let index = L::add(iota, L::lane_constant(a * L::LANES));
                    let descending = L::test(index, L::lane_constant(k));
                    let other = L::permute(partner, *reg);
                    let (lo, hi) = (L::lower(*reg, other), L::upper(*reg, other));
                    *reg = L::blend(upper ^ descending, lo, hi);
                }
            }
            j /= 2;
        }
        k *= 2;
    }
    for (k, reg) in r.iter().enumerate() {
        let start = k * L::LANES;
        if start < len {
            L::store(dst.add(start), (len - start).min(L::LANES), *reg);
        }
    }
}
