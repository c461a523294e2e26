//! Counter-based random bits: the Threefry-2x32 block cipher (20 rounds, Salmon et al.,
//! "Parallel random numbers: as easy as 1, 2, 3", SC 2011) and the layout MLX uses to
//! turn one key into a stream of words, so that a key gives the same numbers as in MLX.
//!
//! Every output word depends only on the key and its position, so the work can be split
//! between threads in any way without changing a single bit.

use crate::backend::Tensor;
use crate::dtype::DType;
use crate::error::Result;

const ROTATIONS: [[u32; 4]; 2] = [[13, 15, 26, 6], [17, 29, 16, 24]];
/// Skein's key-schedule parity constant.
const PARITY: u32 = 0x1BD1_1BDA;

/// Threefry-2x32 with 20 rounds: encrypts the counter `ctr` under `key` (checked against
/// Random123's known-answer vectors in `tests/random.rs`).
#[inline(always)]
pub fn threefry2x32(key: [u32; 2], ctr: [u32; 2]) -> [u32; 2] {
    let [a, b] = threefry_lanes::<1>(key, [ctr[0]], [ctr[1]]);
    [a[0], b[0]]
}

/// Threefry-2x32 on `L` independent counters at once; written lane by lane so that the
/// compiler turns each step into one vector instruction.
#[inline(always)]
fn threefry_lanes<const L: usize>(key: [u32; 2], c0: [u32; L], c1: [u32; L]) -> [[u32; L]; 2] {
    let ks = [key[0], key[1], key[0] ^ key[1] ^ PARITY];
    let mut x0 = c0.map(|c| c.wrapping_add(ks[0]));
    let mut x1 = c1.map(|c| c.wrapping_add(ks[1]));
    for (i, rotations) in ROTATIONS.iter().cycle().take(5).enumerate() {
        for &r in rotations {
            for l in 0..L {
                x0[l] = x0[l].wrapping_add(x1[l]);
                x1[l] = x1[l].rotate_left(r) ^ x0[l];
            }
        }
        let (k0, k1) = (ks[(i + 1) % 3], ks[(i + 2) % 3].wrapping_add(i as u32 + 1));
        for l in 0..L {
            x0[l] = x0[l].wrapping_add(k0);
            x1[l] = x1[l].wrapping_add(k1);
        }
    }
    [x0, x1]
}

/// Counters processed together in the inner loop.
const LANES: usize = 16;

/// `first[i], second[i] = threefry(key, (p0 + i, p0 + i + offset))`: the pairs of words
/// MLX's layout places `offset` apart.
fn fill_pairs(key: [u32; 2], p0: u32, offset: u32, first: &mut [u32], second: &mut [u32]) {
    debug_assert_eq!(first.len(), second.len());
    let mut p = p0;
    let mut blocks_a = first.chunks_exact_mut(LANES);
    let mut blocks_b = second.chunks_exact_mut(LANES);
    for (a, b) in (&mut blocks_a).zip(&mut blocks_b) {
        let c0: [u32; LANES] = std::array::from_fn(|l| p.wrapping_add(l as u32));
        let c1 = c0.map(|c| c.wrapping_add(offset));
        let [x0, x1] = threefry_lanes(key, c0, c1);
        a.copy_from_slice(&x0);
        b.copy_from_slice(&x1);
        p = p.wrapping_add(LANES as u32);
    }
    let (a, b) = (blocks_a.into_remainder(), blocks_b.into_remainder());
    for (i, (a, b)) in a.iter_mut().zip(b.iter_mut()).enumerate() {
        let c = p.wrapping_add(i as u32);
        [*a, *b] = threefry2x32(key, [c, c.wrapping_add(offset)]);
    }
}

/// The first `out.len()` words of `key`'s stream in MLX's layout: with `n` words,
/// `h = n / 2` and `o = n - h`, counter `(p, p + o)` gives words `p` and `p + o` for
/// `p < h`, and for odd `n` the middle word `h` is the first half of counter `(h, 0)`.
/// Counters are 32-bit and wrap, as in MLX.
pub fn fill_key_words(key: [u32; 2], out: &mut [u32], threads: usize) {
    let n = out.len();
    let half = n / 2;
    let (first, rest) = out.split_at_mut(half);
    let (middle, second) = rest.split_at_mut(n % 2);
    let offset = (half + n % 2) as u32;
    if let Some(word) = middle.first_mut() {
        *word = threefry2x32(key, [half as u32, 0])[0];
    }
    let chunk = half.div_ceil(threads.max(1)).max(MIN_WORDS_PER_THREAD);
    if half <= chunk {
        fill_pairs(key, 0, offset, first, second);
        return;
    }
    std::thread::scope(|scope| {
        for (i, (a, b)) in first
            .chunks_mut(chunk)
            .zip(second.chunks_mut(chunk))
            .enumerate()
        {
            scope.spawn(move || fill_pairs(key, (i * chunk) as u32, offset, a, b));
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
            fill_words_per_key(words, per_key, key_at);
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

/// Fills `per_key` words for each key, spreading keys over threads when there are many
/// small ones and the words of each key over threads when there are few large ones.
fn fill_words_per_key(
    words: &mut [u32],
    per_key: usize,
    key_at: impl Fn(usize) -> [u32; 2] + Sync,
) {
    let threads = thread_count();
    let num_keys = words.len() / per_key;
    if num_keys < threads || words.len() < 2 * MIN_WORDS_PER_THREAD {
        for (i, run) in words.chunks_exact_mut(per_key).enumerate() {
            fill_key_words(key_at(i), run, threads);
        }
        return;
    }
    let keys_per_thread = num_keys.div_ceil(threads);
    let key_at = &key_at;
    std::thread::scope(|scope| {
        for (t, block) in words.chunks_mut(keys_per_thread * per_key).enumerate() {
            scope.spawn(move || {
                for (i, run) in block.chunks_exact_mut(per_key).enumerate() {
                    fill_key_words(key_at(t * keys_per_thread + i), run, 1);
                }
            });
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_agree_with_single_counters() {
        let key = [0x1234_5678, 0x9abc_def0];
        let c0: [u32; LANES] = std::array::from_fn(|l| l as u32 * 77);
        let c1 = c0.map(|c| c ^ 0xdead_beef);
        let [x0, x1] = threefry_lanes(key, c0, c1);
        for l in 0..LANES {
            assert_eq!([x0[l], x1[l]], threefry2x32(key, [c0[l], c1[l]]));
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
