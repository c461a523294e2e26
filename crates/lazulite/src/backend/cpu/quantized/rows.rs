//! `x @ W^T` for a few rows of `x` and `W` packed at 2, 4 or 8 bits: the decode step of a
//! quantized language model, which must stream the packed weights once at memory speed.
//!
//! A word holds `32 / BITS` consecutive elements, so the `j`-th level of eight adjacent
//! words belongs to eight elements `32 / BITS` apart. Instead of unpacking each word into
//! consecutive floats (a shuffle per element), `x` is permuted once per call so that
//! element `j` of word `w` of each 8-word chunk sits at `chunk * 8 * PER + j * 8 + w`:
//! then one shift, mask and convert of a vector of eight words gives eight levels that
//! multiply eight consecutive values of the permuted `x`. Scales and biases are read in
//! their own dtype (float32, float16 or bfloat16), never widened into a copy.

use super::super::simd::vectorised;
use super::{batch_offset, Packing, Product, Quantized, Real, SendPtr, TASK_ELEMENTS};
use crate::backend::Tensor;
use crate::error::Result;
use rayon::prelude::*;

/// Words per chunk: one vector of eight u32 lanes.
const LANES: usize = 8;

/// Whether [`product`] computes this product: `W` stored transposed, at most `max_rows`
/// rows of `x`, a nonzero depth, 2, 4 or 8 bits, and rows of whole 8-word chunks.
pub(super) fn applies(packing: Packing, p: Product, max_rows: usize) -> bool {
    let words_per_row = p.k * packing.bits / 32;
    p.transpose
        && p.k > 0
        && p.m <= max_rows
        && matches!(packing.bits, 2 | 4 | 8)
        && words_per_row.is_multiple_of(LANES)
}

/// The product for `x` contiguous float32 `(batch, m, k)`, `w` with contiguous last two
/// dimensions, `scales`/`biases` contiguous of element type `T`; the result is float32.
pub(super) fn product<T: Real<Acc = f32>>(
    x: &Tensor,
    w: &Tensor,
    scales: &Tensor,
    biases: &Tensor,
    packing: Packing,
    p: Product,
    out_shape: &[usize],
) -> Result<Tensor> {
    let mut out = Tensor::uninit(crate::dtype::DType::Float32, out_shape)?;
    let words_per_row = p.k * packing.bits / 32;
    let groups_per_row = p.k / packing.group_size;
    let words = w.buf.as_ptr() as *const u32;
    let (xs, ss, bs) = (x.slice::<f32>(), scales.slice::<T>(), biases.slice::<T>());
    let dst = out.slice_mut::<f32>();
    for b in 0..p.batch {
        // SAFETY: the offset addresses the first word of matrix `b` inside w's buffer, and
        // its last two dimensions are contiguous: n * words_per_row words follow.
        let wb = unsafe {
            std::slice::from_raw_parts(words.offset(batch_offset(w, b)), p.n * words_per_row)
        };
        let g = p.n * groups_per_row;
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
        match packing.bits {
            2 => rows::<T, 2>(x, &matrix, p, out),
            4 => rows::<T, 4>(x, &matrix, p, out),
            _ => rows::<T, 8>(x, &matrix, p, out),
        }
    }
    Ok(out)
}

/// A row of `x` in chunk order (see the module documentation), with its group sums.
struct PermutedRow {
    values: Vec<f32>,
    group_sums: Vec<f32>,
}

fn permute<const BITS: usize>(x: &[f32], group_size: usize) -> PermutedRow {
    let per = 32 / BITS;
    let chunk = LANES * per;
    let mut values = vec![0.0; x.len()];
    for (src, dst) in x.chunks_exact(chunk).zip(values.chunks_exact_mut(chunk)) {
        for w in 0..LANES {
            for j in 0..per {
                dst[j * LANES + w] = src[w * per + j];
            }
        }
    }
    let group_sums = x.chunks_exact(group_size).map(|g| g.iter().sum()).collect();
    PermutedRow { values, group_sums }
}

fn rows<T: Real<Acc = f32>, const BITS: usize>(
    x: &[f32],
    w: &Quantized<'_, T>,
    p: Product,
    out: &mut [f32],
) {
    let xs: Vec<PermutedRow> = x
        .chunks_exact(p.k)
        .map(|row| permute::<BITS>(row, w.packing.group_size))
        .collect();
    let dst = SendPtr(out.as_mut_ptr());
    let rows_per_task = (TASK_ELEMENTS * 4 / p.k).max(1);
    (0..p.n.div_ceil(rows_per_task))
        .into_par_iter()
        .for_each(|task| {
            vectorised(
                #[inline(always)]
                || {
                    let end = ((task + 1) * rows_per_task).min(p.n);
                    for n in task * rows_per_task..end {
                        // Row n of W stays in L1 while every row of x passes over it.
                        for (m, x) in xs.iter().enumerate() {
                            let s = row_dot::<T, BITS>(w, n, x);
                            // SAFETY: (m, n) is inside the m x n result and this task
                            // alone writes column n.
                            unsafe { *dst.get().add(m * p.n + n) = s };
                        }
                    }
                },
            )
        });
}

/// Independent accumulator chains (hide the latency of the multiply-adds).
const CHAINS: usize = 4;

/// `x . W[n]` for the permuted row `x`.
#[inline(always)]
fn row_dot<T: Real<Acc = f32>, const BITS: usize>(
    w: &Quantized<'_, T>,
    n: usize,
    x: &PermutedRow,
) -> f32 {
    let chunk_len = LANES * 32 / BITS;
    let words = &w.words[n * w.words_per_row..][..w.words_per_row];
    let scales = &w.scales[n * w.groups_per_row..][..w.groups_per_row];
    let biases = &w.biases[n * w.groups_per_row..][..w.groups_per_row];
    let words_per_group = w.packing.group_size * BITS / 32;
    let chunk_of_x = |c: usize| &x.values[c * chunk_len..][..chunk_len];
    let mut acc = [0.0f32; LANES];
    if words_per_group >= LANES {
        // A group is one or more whole chunks: one scale for all their lanes.
        let chunks_per_group = words_per_group / LANES;
        for (g, group) in words.chunks_exact(words_per_group).enumerate() {
            let mut dots = [[0.0f32; LANES]; CHAINS];
            for (i, chunk) in group.chunks_exact(LANES).enumerate() {
                let chunk = chunk.try_into().expect("LANES words");
                chunk_dot::<BITS>(chunk, chunk_of_x(g * chunks_per_group + i), &mut dots);
            }
            let s = scales[g].widen();
            for l in 0..LANES {
                let d = (dots[0][l] + dots[1][l]) + (dots[2][l] + dots[3][l]);
                acc[l] = s.mul_add(d, acc[l]);
            }
        }
    } else {
        // A chunk holds several groups: each lane takes its word's group's scale.
        let groups_per_chunk = LANES / words_per_group;
        let lane_group: [usize; LANES] = std::array::from_fn(|l| l / words_per_group);
        for (c, chunk) in words.chunks_exact(LANES).enumerate() {
            let mut dots = [[0.0f32; LANES]; CHAINS];
            let chunk = chunk.try_into().expect("LANES words");
            chunk_dot::<BITS>(chunk, chunk_of_x(c), &mut dots);
            let chunk_scales = &scales[c * groups_per_chunk..][..groups_per_chunk];
            for l in 0..LANES {
                let d = (dots[0][l] + dots[1][l]) + (dots[2][l] + dots[3][l]);
                acc[l] = chunk_scales[lane_group[l]].widen().mul_add(d, acc[l]);
            }
        }
    }
    let bias: f32 = biases
        .iter()
        .zip(&x.group_sums)
        .map(|(b, &s)| b.widen() * s)
        .sum();
    acc.iter().sum::<f32>() + bias
}

/// Adds `levels . x` of one chunk (eight words and the matching permuted `x`) to `dots`,
/// spreading the levels of each word over the accumulator chains.
#[inline(always)]
fn chunk_dot<const BITS: usize>(
    words: &[u32; LANES],
    x: &[f32],
    dots: &mut [[f32; LANES]; CHAINS],
) {
    let mask = (1u32 << BITS) - 1;
    for j in 0..32 / BITS {
        let levels: [f32; LANES] =
            std::array::from_fn(|l| ((words[l] >> (j * BITS)) & mask) as f32);
        let x: &[f32; LANES] = x[j * LANES..][..LANES].try_into().expect("LANES values");
        let d = &mut dots[j % CHAINS];
        for l in 0..LANES {
            d[l] = levels[l].mul_add(x[l], d[l]);
        }
    }
}
