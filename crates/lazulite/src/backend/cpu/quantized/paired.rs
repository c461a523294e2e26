//! Many bfloat16 rows of `x` (a prefill) by `W^T` for `W` quantized at 4 or 8 bits with
//! bfloat16 scales and biases, on the pair-product tile kernel where the CPU has it: the
//! levels themselves are multiplied (exact small integers in bfloat16), and each group's
//! sums are scaled and offset by the group's bias times the group's sum of `x`. Nothing is
//! dequantized to float32. Threads split the result's columns as in the dense bfloat16
//! product (`ColumnBlocks`).

use super::super::matmul::paired::ColumnBlocks;
use super::super::simd::{
    bf16_tiles, level_offset, AffineRows, Bf16Tiles, GroupedTile, TILE_COLUMNS,
};
use super::rows::Operands;
use super::{batch_offset, contiguous, Packing, Product, QuantizationMode, SendPtr};
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::error::Result;
use half::bf16;

/// The kernel, if it applies: `x @ W^T` with bfloat16 `x`, scales and biases, and affine
/// levels of 4 or 8 bits in groups of a multiple of 32.
pub(super) fn applies(x: DType, scales: DType, packing: Packing, p: Product) -> Option<Bf16Tiles> {
    let ok = x == DType::BFloat16
        && scales == DType::BFloat16
        && packing.mode == QuantizationMode::Affine
        && matches!(packing.bits, 4 | 8)
        && packing.group_size.is_multiple_of(32)
        && p.transpose
        && p.k > 0;
    ok.then(bf16_tiles).flatten()
}

/// What both products derive from the operands' sizes: the threads' split of the result
/// and each thread's block of packed `W`.
struct Geometry {
    m: usize,
    n: usize,
    k: usize,
    groups: usize,
    words_per_row: usize,
    pairs: usize,
    split: ColumnBlocks,
    packed_len: usize,
}

impl Geometry {
    fn new(p: Product, packing: Packing, kernel: &Bf16Tiles) -> Geometry {
        let (m, n, k) = (p.m, p.n, p.k);
        let pairs = k / 2;
        Geometry {
            m,
            n,
            k,
            groups: k / packing.group_size,
            words_per_row: k * packing.bits / 32,
            pairs,
            split: ColumnBlocks::new(m, n, k, kernel),
            packed_len: pairs * TILE_COLUMNS,
        }
    }
}

/// `x @ W^T` into a new float32 tensor of `out_shape`, for operands [`applies`] accepts.
pub(super) fn product(
    operands: Operands,
    packing: Packing,
    p: Product,
    out_shape: &[usize],
    kernel: Bf16Tiles,
) -> Result<Tensor> {
    let Operands {
        x,
        w,
        scales,
        biases,
    } = operands;
    let operands = Operands {
        x: contiguous(x)?,
        w,
        scales: contiguous(scales)?,
        biases: contiguous(biases)?,
    };
    let mut out = Tensor::uninit(DType::Float32, out_shape)?;
    if out.size() == 0 {
        return Ok(out);
    }
    let geometry = Geometry::new(p, packing, &kernel);
    if kernel.matrix_tiles {
        dequantized_product(operands, packing, p.batch, &geometry, &mut out, kernel)?;
    } else {
        level_product(operands, packing, p.batch, &geometry, &mut out, kernel)?;
    }
    Ok(out)
}

/// `x @ W^T` into `out` on the pair product of levels: each group's sums are scaled and
/// offset by the group's bias times the group's sum of `x`.
fn level_product(
    operands: Operands,
    packing: Packing,
    batches: usize,
    geometry: &Geometry,
    out: &mut Tensor,
    kernel: Bf16Tiles,
) -> Result<()> {
    let Operands {
        x,
        w,
        scales,
        biases,
    } = operands;
    let &Geometry {
        m,
        n,
        k,
        groups,
        words_per_row,
        pairs,
        ref split,
        packed_len,
    } = geometry;
    let factors_len = 2 * groups * TILE_COLUMNS;
    let mut packed = Tensor::uninit(DType::UInt32, &[split.threads * packed_len])?;
    let mut factors = Tensor::uninit(DType::Float32, &[split.threads * factors_len])?;
    // Columns past a short last block are never stored; zero keeps their lanes ordinary.
    factors.slice_mut::<f32>().fill(0.0);
    let mut sums = Tensor::uninit(DType::Float32, &[m * groups])?;
    let (packed, factors) = (
        SendPtr(packed.slice_mut::<u32>().as_mut_ptr()),
        SendPtr(factors.slice_mut::<f32>().as_mut_ptr()),
    );
    let sums = sums.slice_mut::<f32>();
    let offset = level_offset(packing.bits);
    let dst = SendPtr(out.slice_mut::<f32>().as_mut_ptr());
    let xs = x.slice::<bf16>();
    let (all_scales, all_biases) = (scales.slice::<bf16>(), biases.slice::<bf16>());
    let words = |b: usize| matrix_words(&w, b, n * words_per_row);
    for batch in 0..batches {
        let x = &xs[batch * m * k..][..m * k];
        for (row, sums) in x.chunks_exact(k).zip(sums.chunks_exact_mut(groups)) {
            for (group, sum) in row.chunks_exact(packing.group_size).zip(sums.iter_mut()) {
                *sum = group.iter().map(|v| v.to_f32()).sum();
            }
        }
        let (x, sums): (&[u16], &[f32]) = (bytemuck::cast_slice(x), sums);
        let w = words(batch);
        let at = batch * n * groups;
        let (batch_scales, batch_biases) = (&all_scales[at..], &all_biases[at..]);
        split.for_each(|t, rows, columns| {
            let (packed, factors, dst) = (&packed, &factors, &dst);
            // SAFETY: each thread has its own part of both scratch buffers.
            let (packed, factors) = unsafe {
                (
                    std::slice::from_raw_parts_mut(packed.get().add(t * packed_len), packed_len),
                    std::slice::from_raw_parts_mut(factors.get().add(t * factors_len), factors_len),
                )
            };
            let (block_scales, block_offsets) = factors.split_at_mut(groups * TILE_COLUMNS);
            let j0 = columns.start;
            let w = &w[j0 * words_per_row..];
            (kernel.pack_levels)(w, words_per_row, packing.bits, columns.len(), pairs, packed);
            for g in 0..groups {
                for (j, column) in columns.clone().enumerate() {
                    let s = batch_scales[column * groups + g].to_f32();
                    let b = batch_biases[column * groups + g].to_f32();
                    block_scales[g * TILE_COLUMNS + j] = s;
                    block_offsets[g * TILE_COLUMNS + j] = b - offset * s;
                }
            }
            let tile = GroupedTile {
                x: &x[rows.start * k..],
                x_stride: k,
                m: rows.len(),
                packed,
                pairs,
                columns: columns.len(),
                group_pairs: packing.group_size / 2,
                scales: block_scales,
                offsets: block_offsets,
                sums: &sums[rows.start * groups..],
            };
            // SAFETY: the block's rows and columns lie inside this batch's result, and no
            // other thread writes these columns.
            unsafe {
                (kernel.multiply_groups)(
                    tile,
                    dst.get().add(batch * m * n + rows.start * n + j0),
                    n,
                )
            };
        });
    }
    Ok(())
}

/// `x @ W^T` into `out` on matrix tiles: each thread dequantizes a block of `W` to
/// bfloat16 once per pass (`pack_dequantized`) and multiplies it with every row of the
/// pass. The weights round to bfloat16 where the level products keep them exact; the
/// tiles' rate far outweighs the level products' saving of the dequantization.
fn dequantized_product(
    operands: Operands,
    packing: Packing,
    batches: usize,
    g: &Geometry,
    out: &mut Tensor,
    kernel: Bf16Tiles,
) -> Result<()> {
    let mut packed = Tensor::uninit(DType::UInt32, &[g.split.threads * g.packed_len])?;
    let packed = SendPtr(packed.slice_mut::<u32>().as_mut_ptr());
    let dst = SendPtr(out.slice_mut::<f32>().as_mut_ptr());
    let xs: &[u16] = bytemuck::cast_slice(operands.x.slice::<bf16>());
    let (all_scales, all_biases): (&[u16], &[u16]) = (
        bytemuck::cast_slice(operands.scales.slice::<bf16>()),
        bytemuck::cast_slice(operands.biases.slice::<bf16>()),
    );
    let (m, n, k) = (g.m, g.n, g.k);
    let per_matrix = n * g.groups;
    for batch in 0..batches {
        let x = &xs[batch * m * k..][..m * k];
        let at = batch * per_matrix;
        let levels = AffineRows {
            words: matrix_words(&operands.w, batch, n * g.words_per_row),
            words_per_row: g.words_per_row,
            scales: &all_scales[at..at + per_matrix],
            biases: &all_biases[at..at + per_matrix],
            bits: packing.bits,
            group_size: packing.group_size,
        };
        g.split.for_each(|t, rows, columns| {
            let (packed, dst) = (&packed, &dst);
            // SAFETY: each thread has its own part of the scratch buffer.
            let packed = unsafe {
                std::slice::from_raw_parts_mut(packed.get().add(t * g.packed_len), g.packed_len)
            };
            let j0 = columns.start;
            let block = levels.part(columns.clone());
            (kernel.pack_dequantized)(&block, columns.len(), g.pairs, packed);
            // SAFETY: the block's rows and columns lie inside this batch's result, and no
            // other thread writes these columns.
            unsafe {
                (kernel.multiply)(
                    &x[rows.start * k..],
                    k,
                    rows.len(),
                    packed,
                    g.pairs,
                    columns.len(),
                    dst.get().add(batch * m * n + rows.start * n + j0),
                    n,
                )
            };
        });
    }
    Ok(())
}

/// The `len` words of packed matrix `batch` of `w`, whose matrices are contiguous.
fn matrix_words(w: &Tensor, batch: usize, len: usize) -> &[u32] {
    // SAFETY: matrix `batch` starts at its batch offset and holds `len` words.
    unsafe {
        std::slice::from_raw_parts(
            (w.buf.as_ptr() as *const u32).offset(batch_offset(w, batch)),
            len,
        )
    }
}
