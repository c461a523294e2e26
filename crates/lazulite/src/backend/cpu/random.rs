//! Counter-based random bits: the Threefry-2x32 block cipher (20 rounds, Salmon et al.,
//! "Parallel random numbers: as easy as 1, 2, 3", SC 2011) and the layout MLX uses to
//! turn one key into a stream of words, so that a key gives the same numbers as in MLX.
//!
//! Every output word depends only on the key and its position, so the work can be split
//! between threads in any way without changing a single bit.

use super::elementwise::cast;
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::error::Result;
use half::{bf16, f16};

/// Skein's key-schedule parity constant.
const PARITY: u32 = 0x1BD1_1BDA;

/// A vector of `u32` lanes with the three operations Threefry needs.
trait Lanes: Copy {
    fn splat(v: u32) -> Self;
    fn add(self, other: Self) -> Self;
    fn xor(self, other: Self) -> Self;
    fn rotl<const R: u32>(self) -> Self;
}

impl Lanes for u32 {
    #[inline(always)]
    fn splat(v: u32) -> u32 {
        v
    }
    #[inline(always)]
    fn add(self, other: u32) -> u32 {
        self.wrapping_add(other)
    }
    #[inline(always)]
    fn xor(self, other: u32) -> u32 {
        self ^ other
    }
    #[inline(always)]
    fn rotl<const R: u32>(self) -> u32 {
        self.rotate_left(R)
    }
}

/// Threefry-2x32, 20 rounds, on the counters `(x0, x1)` of every lane.
#[inline(always)]
fn threefry<V: Lanes>(key: [u32; 2], mut x0: V, mut x1: V) -> (V, V) {
    let ks = [key[0], key[1], key[0] ^ key[1] ^ PARITY];
    macro_rules! rounds {
        ($($r:literal)*) => {$(
            x0 = x0.add(x1);
            x1 = x1.rotl::<$r>().xor(x0);
        )*};
    }
    // After each group of four rounds, key word (i + 1) % 3 and (i + 2) % 3 + i + 1.
    let inject = |x0: V, x1: V, i: usize| {
        let k1 = ks[(i + 2) % 3].wrapping_add(i as u32 + 1);
        (x0.add(V::splat(ks[(i + 1) % 3])), x1.add(V::splat(k1)))
    };
    x0 = x0.add(V::splat(ks[0]));
    x1 = x1.add(V::splat(ks[1]));
    rounds!(13 15 26 6);
    (x0, x1) = inject(x0, x1, 0);
    rounds!(17 29 16 24);
    (x0, x1) = inject(x0, x1, 1);
    rounds!(13 15 26 6);
    (x0, x1) = inject(x0, x1, 2);
    rounds!(17 29 16 24);
    (x0, x1) = inject(x0, x1, 3);
    rounds!(13 15 26 6);
    inject(x0, x1, 4)
}

/// Threefry-2x32 with 20 rounds: encrypts the counter `ctr` under `key` (checked against
/// Random123's known-answer vectors in `tests/suite/random.rs`).
pub fn threefry2x32(key: [u32; 2], ctr: [u32; 2]) -> [u32; 2] {
    let (a, b) = threefry(key, ctr[0], ctr[1]);
    [a, b]
}

/// `first[i], second[i] = threefry(key, (p0 + i, p0 + i + offset))`: the pairs of words
/// MLX's layout places `offset` apart.
fn fill_pairs(key: [u32; 2], p0: u32, offset: u32, first: &mut [u32], second: &mut [u32]) {
    debug_assert_eq!(first.len(), second.len());
    #[cfg(target_arch = "x86_64")]
    let done = simd::fill_pairs(key, p0, offset, first, second);
    #[cfg(not(target_arch = "x86_64"))]
    let done = 0;
    for (i, (a, b)) in first
        .iter_mut()
        .zip(second.iter_mut())
        .enumerate()
        .skip(done)
    {
        let c = p0.wrapping_add(i as u32);
        [*a, *b] = threefry2x32(key, [c, c.wrapping_add(offset)]);
    }
}

/// AVX-512 and AVX2 versions of the pair loop, chosen at run time.
#[cfg(target_arch = "x86_64")]
mod simd {
    use super::{threefry, Lanes};
    use std::arch::x86_64::*;

    impl Lanes for __m512i {
        #[inline(always)]
        fn splat(v: u32) -> Self {
            // SAFETY: only reached from functions compiled with AVX-512F enabled.
            unsafe { _mm512_set1_epi32(v as i32) }
        }
        #[inline(always)]
        fn add(self, other: Self) -> Self {
            // SAFETY: as above.
            unsafe { _mm512_add_epi32(self, other) }
        }
        #[inline(always)]
        fn xor(self, other: Self) -> Self {
            // SAFETY: as above.
            unsafe { _mm512_xor_si512(self, other) }
        }
        #[inline(always)]
        fn rotl<const R: u32>(self) -> Self {
            // SAFETY: as above.
            unsafe { _mm512_rolv_epi32(self, _mm512_set1_epi32(R as i32)) }
        }
    }

    impl Lanes for __m256i {
        #[inline(always)]
        fn splat(v: u32) -> Self {
            // SAFETY: only reached from functions compiled with AVX2 enabled.
            unsafe { _mm256_set1_epi32(v as i32) }
        }
        #[inline(always)]
        fn add(self, other: Self) -> Self {
            // SAFETY: as above.
            unsafe { _mm256_add_epi32(self, other) }
        }
        #[inline(always)]
        fn xor(self, other: Self) -> Self {
            // SAFETY: as above.
            unsafe { _mm256_xor_si256(self, other) }
        }
        #[inline(always)]
        fn rotl<const R: u32>(self) -> Self {
            // SAFETY: as above.
            unsafe {
                let left = _mm256_sll_epi32(self, _mm_cvtsi32_si128(R as i32));
                let right = _mm256_srl_epi32(self, _mm_cvtsi32_si128(32 - R as i32));
                _mm256_or_si256(left, right)
            }
        }
    }

    /// Fills whole blocks of lanes; returns how many pairs it filled (0 without AVX2).
    pub(super) fn fill_pairs(
        key: [u32; 2],
        p0: u32,
        offset: u32,
        first: &mut [u32],
        second: &mut [u32],
    ) -> usize {
        if is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F.
            unsafe { fill_avx512(key, p0, offset, first, second) }
        } else if is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2.
            unsafe { fill_avx2(key, p0, offset, first, second) }
        } else {
            0
        }
    }

    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn fill_avx512(
        key: [u32; 2],
        p0: u32,
        offset: u32,
        first: &mut [u32],
        second: &mut [u32],
    ) -> usize {
        let iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        let shift = _mm512_set1_epi32(offset as i32);
        let blocks = first.len() / 16;
        for b in 0..blocks {
            let c0 = _mm512_add_epi32(
                _mm512_set1_epi32(p0.wrapping_add(16 * b as u32) as i32),
                iota,
            );
            let (x0, x1) = threefry(key, c0, _mm512_add_epi32(c0, shift));
            // SAFETY: block b lies inside both slices (b < len / 16).
            _mm512_storeu_si512(first.as_mut_ptr().add(16 * b).cast(), x0);
            _mm512_storeu_si512(second.as_mut_ptr().add(16 * b).cast(), x1);
        }
        blocks * 16
    }

    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn unit_f32_avx512(words: &mut [u32], upper: f32) {
        super::unit_f32_loop(words, upper)
    }

    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn fill_avx2(
        key: [u32; 2],
        p0: u32,
        offset: u32,
        first: &mut [u32],
        second: &mut [u32],
    ) -> usize {
        let iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        let shift = _mm256_set1_epi32(offset as i32);
        let blocks = first.len() / 8;
        for b in 0..blocks {
            let c0 = _mm256_add_epi32(
                _mm256_set1_epi32(p0.wrapping_add(8 * b as u32) as i32),
                iota,
            );
            let (x0, x1) = threefry(key, c0, _mm256_add_epi32(c0, shift));
            // SAFETY: block b lies inside both slices (b < len / 8).
            _mm256_storeu_si256(first.as_mut_ptr().add(8 * b).cast(), x0);
            _mm256_storeu_si256(second.as_mut_ptr().add(8 * b).cast(), x1);
        }
        blocks * 8
    }
}

/// The first `out.len()` words of `key`'s stream in MLX's layout: with `n` words,
/// `h = n / 2` and `o = n - h`, counter `(p, p + o)` gives words `p` and `p + o` for
/// `p < h`, and for odd `n` the middle word `h` is the first half of counter `(h, 0)`.
/// Counters are 32-bit and wrap, as in MLX.
pub fn fill_key_words(key: [u32; 2], out: &mut [u32], threads: usize) {
    fill_key_words_then(key, out, threads, &|_| {});
}

/// Work applied to each run of words right after it is generated, while it is in cache.
type Finish<'a> = &'a (dyn Fn(&mut [u32]) + Sync);

/// [`fill_key_words`], then `finish` on every generated run.
fn fill_key_words_then(key: [u32; 2], out: &mut [u32], threads: usize, finish: Finish) {
    let n = out.len();
    let half = n / 2;
    let (first, rest) = out.split_at_mut(half);
    let (middle, second) = rest.split_at_mut(n % 2);
    let offset = (half + n % 2) as u32;
    if let Some(word) = middle.first_mut() {
        *word = threefry2x32(key, [half as u32, 0])[0];
        finish(middle);
    }
    let chunk = half.div_ceil(threads.max(1)).max(MIN_WORDS_PER_THREAD);
    let fill = move |p0: usize, a: &mut [u32], b: &mut [u32]| {
        fill_pairs(key, p0 as u32, offset, a, b);
        finish(a);
        finish(b);
    };
    if half <= chunk {
        fill(0, first, second);
        return;
    }
    std::thread::scope(|scope| {
        for (i, (a, b)) in first
            .chunks_mut(chunk)
            .zip(second.chunks_mut(chunk))
            .enumerate()
        {
            scope.spawn(move || fill(i * chunk, a, b));
        }
    });
}

/// Below this many words a thread costs more than it saves.
const MIN_WORDS_PER_THREAD: usize = 1 << 15;

fn thread_count() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Random bits for a batch of keys: `keys` has shape `[..., 2]` (uint32, any layout) and
/// the output, of `dtype` uint8/uint16/uint32, has shape `[..., per_key...]`. Each key
/// fills its own consecutive run of bytes, whatever the width, as in MLX.
pub fn random_bits(keys: &Tensor, dtype: DType, shape: &[usize]) -> Result<Tensor> {
    let mut out = Tensor::uninit(dtype, shape)?;
    let num_keys = keys.size() / 2;
    if num_keys == 0 || out.size() == 0 {
        return Ok(out);
    }
    let key_at = |i: usize| [keys.get::<u32>(2 * i), keys.get::<u32>(2 * i + 1)];
    let bytes: &mut [u8] = match dtype {
        DType::UInt32 => {
            let words = out.slice_mut::<u32>();
            let per_key = words.len() / num_keys;
            fill_words_per_key(words, per_key, key_at, &|_| {});
            return Ok(out);
        }
        DType::UInt16 => bytemuck::cast_slice_mut(out.slice_mut::<u16>()),
        _ => out.slice_mut::<u8>(),
    };
    let per_key = bytes.len() / num_keys;
    let mut words = vec![0u32; per_key.div_ceil(4)];
    for (i, run) in bytes.chunks_exact_mut(per_key).enumerate() {
        fill_key_words(key_at(i), &mut words, thread_count());
        for (dst, w) in run.chunks_mut(4).zip(&words) {
            dst.copy_from_slice(&w.to_le_bytes()[..dst.len()]);
        }
    }
    Ok(out)
}

/// Uniform floats in `[0, 1)` for a batch of keys (shapes as in [`random_bits`]), of a
/// real float `dtype`: each 32-bit word `w` becomes `min(f32(w) / 2^32, upper)` with
/// `upper` the largest `dtype` value below 1, rounded to `dtype` — MLX's `uniform`,
/// bit for bit, in one pass.
pub fn random_unit(keys: &Tensor, dtype: DType, shape: &[usize]) -> Result<Tensor> {
    let upper = below_one(dtype);
    let mut out = Tensor::uninit(DType::Float32, shape)?;
    let num_keys = keys.size() / 2;
    if num_keys > 0 && out.size() > 0 {
        let words: &mut [u32] = bytemuck::cast_slice_mut(out.slice_mut::<f32>());
        let per_key = words.len() / num_keys;
        let key_at = |i: usize| [keys.get::<u32>(2 * i), keys.get::<u32>(2 * i + 1)];
        fill_words_per_key(words, per_key, key_at, &|run| words_to_unit_f32(run, upper));
    }
    match dtype {
        DType::Float32 => Ok(out),
        DType::Float16 => cast::<f32, f16>(out),
        DType::BFloat16 => cast::<f32, bf16>(out),
        _ => cast::<f32, f64>(out),
    }
}

/// The largest value of the real float `dtype` below 1, as a float32 (float64 uses
/// float32's, since its draws are float32 numbers).
pub fn below_one(dtype: DType) -> f32 {
    match dtype {
        DType::Float16 => f16::from_bits(f16::ONE.to_bits() - 1).to_f32(),
        DType::BFloat16 => bf16::from_bits(bf16::ONE.to_bits() - 1).to_f32(),
        _ => f32::from_bits(1f32.to_bits() - 1),
    }
}

/// Replaces each word by the bits of the float32 `min(f32(w) / 2^32, upper)`.
fn words_to_unit_f32(words: &mut [u32], upper: f32) {
    #[cfg(target_arch = "x86_64")]
    if is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F.
        unsafe { simd::unit_f32_avx512(words, upper) };
        return;
    }
    unit_f32_loop(words, upper);
}

#[inline(always)]
fn unit_f32_loop(words: &mut [u32], upper: f32) {
    for w in words {
        // `u32::MAX as f32` is 2^32: the division is an exact scaling, as in MLX.
        let u = *w as f32 / u32::MAX as f32;
        *w = if u < upper { u } else { upper }.to_bits();
    }
}

/// Fills `per_key` words for each key, spreading keys over threads when there are many
/// small ones and the words of each key over threads when there are few large ones.
fn fill_words_per_key(
    words: &mut [u32],
    per_key: usize,
    key_at: impl Fn(usize) -> [u32; 2] + Sync,
    finish: Finish,
) {
    let threads = thread_count();
    let num_keys = words.len() / per_key;
    if num_keys < threads || words.len() < 2 * MIN_WORDS_PER_THREAD {
        for (i, run) in words.chunks_exact_mut(per_key).enumerate() {
            fill_key_words_then(key_at(i), run, threads, finish);
        }
        return;
    }
    let keys_per_thread = num_keys.div_ceil(threads);
    let key_at = &key_at;
    std::thread::scope(|scope| {
        for (t, block) in words.chunks_mut(keys_per_thread * per_key).enumerate() {
            scope.spawn(move || {
                for (i, run) in block.chunks_exact_mut(per_key).enumerate() {
                    fill_key_words_then(key_at(t * keys_per_thread + i), run, 1, finish);
                }
            });
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vector_pairs_agree_with_single_counters() {
        let key = [0x1234_5678, 0x9abc_def0];
        for n in [1, 7, 8, 15, 16, 17, 33, 100] {
            let (mut a, mut b) = (vec![0; n], vec![0; n]);
            let p0 = u32::MAX - 20; // counters wrap around
            fill_pairs(key, p0, 1000, &mut a, &mut b);
            for i in 0..n {
                let c = p0.wrapping_add(i as u32);
                assert_eq!([a[i], b[i]], threefry2x32(key, [c, c.wrapping_add(1000)]));
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn every_instruction_set_gives_the_same_words() {
        let key = [7, 0xffff_fff0];
        let n = 77;
        let (mut a, mut b) = (vec![0; n], vec![0; n]);
        let reference: Vec<[u32; 2]> = (0..n as u32)
            .map(|c| threefry2x32(key, [c + 5, c + 5 + 300]))
            .collect();
        let check = |done: usize, a: &[u32], b: &[u32]| {
            for i in 0..done {
                assert_eq!([a[i], b[i]], reference[i]);
            }
        };
        if is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F.
            let done = unsafe { simd::fill_avx512(key, 5, 300, &mut a, &mut b) };
            assert_eq!(done, 64);
            check(done, &a, &b);
        }
        if is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2.
            let done = unsafe { simd::fill_avx2(key, 5, 300, &mut a, &mut b) };
            assert_eq!(done, 72);
            check(done, &a, &b);
        }
    }

    #[test]
    fn threaded_fill_equals_sequential() {
        let key = [3, 4];
        for n in [0, 1, 2, 3, 17, 100_001] {
            let mut a = vec![0; n];
            let mut b = vec![0; n];
            fill_key_words(key, &mut a, 1);
            fill_key_words(key, &mut b, 7);
            assert_eq!(a, b);
        }
    }
}
