//! Tiles of a bfloat16 matrix product `x @ W^T` by AVX-512 BF16's pair product
//! (`vdpbf16ps`): the prefill of a bfloat16 model. Each instruction multiplies 16 pairs of
//! bfloat16 values by another 16 pairs and adds the pair sums into 16 f32 lanes: twice
//! the multiply-adds of a float32 FMA, with no widening of either operand. Every product
//! of two bfloat16 values is exact in f32; only the f32 sums round, as in a float32
//! product of the widened operands.
//!
//! Consecutive values of a row of `x` or `W` form a pair (one u32). A block of
//! [`TILE_COLUMNS`] rows of `W` is packed as `pairs` lines of 32 u32, line `p` holding pair
//! `p` of each row (a transpose of u32s), so that a line is two vectors of one pair per
//! result column; each pair of a row of `x` is broadcast against them. The same lines are
//! the layout AMX's `tdpbf16ps` reads its right operand in: where the CPU has AMX,
//! `multiply` runs on its tiles (`amx.rs`), 16 lines and two 16-column halves at a time.

use super::AffineRows;

/// Result columns per packed block of `W`: two of AVX-512's 16 f32 lanes, or two AMX tiles.
pub const TILE_COLUMNS: usize = 32;

#[cfg(target_arch = "x86_64")]
const _: () = assert!(TILE_COLUMNS == super::amx::MAX_COLUMNS);

/// The tile kernels, where the CPU has them.
#[derive(Copy, Clone)]
pub struct Bf16Tiles {
    /// Packs `rows` (at most [`TILE_COLUMNS`]) rows of `pairs` bfloat16 pairs, row `t`
    /// starting at `w[t * stride]`, into `out` (`pairs * TILE_COLUMNS` u32, missing rows
    /// zero). Panics on bounds that do not fit (an engine bug).
    pub pack: fn(w: &[u16], stride: usize, rows: usize, pairs: usize, out: &mut [u32]),
    /// Packs like `pack`, from a row-major `b` of which `W` is the transpose: row `t` of
    /// the block is column `t` of `b` (`columns` of them, at most [`TILE_COLUMNS`]), value
    /// `d` of it at `b[d * stride + t]`. Panics on bounds that do not fit (an engine bug).
    pub pack_columns: fn(b: &[u16], stride: usize, columns: usize, pairs: usize, out: &mut [u32]),
    /// Packs like `pack`, from rows of 4- or 8-bit levels: row `t` of `rows` starts at
    /// `words[t * words_per_row]`, level `d` in bits `bits * (d % (32 / bits))` of word
    /// `d / (32 / bits)` (MLX's packing). A 4-bit level `q` becomes `128 + q` (the offset
    /// [`level_offset`] reports), an 8-bit one `q`: both exact in bfloat16. `pairs` is a
    /// multiple of 16. Panics on bounds that do not fit (an engine bug).
    pub pack_levels: fn(
        words: &[u32],
        words_per_row: usize,
        bits: usize,
        rows: usize,
        pairs: usize,
        out: &mut [u32],
    ),
    /// Packs like `pack`, each weight `scale * level + bias` of its group rounded to
    /// bfloat16, from the first `rows` rows of `levels` (at most [`TILE_COLUMNS`]), whose
    /// 4- or 8-bit levels make `pairs` pairs a row (a multiple of 16) in groups of a
    /// multiple of 32. Panics on bounds that do not fit (an engine bug).
    pub pack_dequantized: fn(levels: &AffineRows<'_>, rows: usize, pairs: usize, out: &mut [u32]),
    /// `multiply` runs on matrix tiles (AMX) for depths of whole tiles (multiples of 16
    /// pairs): there, a product of weights dequantized once per block
    /// (`pack_dequantized`) beats `multiply_groups` on the levels.
    pub matrix_tiles: bool,
    /// An affine quantized product from packed levels: `c[i * c_stride + j]` is the sum
    /// over groups `g` of `scales[g][j] * (x_i . W_j over g) + offsets[g][j] *
    /// sums[i][g]`, groups of `group_pairs` pairs, `scales` and `offsets` holding
    /// [`TILE_COLUMNS`] values per group, `sums` one per group and row of `x`. Panics on
    /// operands that do not fit (an engine bug).
    ///
    /// # Safety
    /// As `multiply`.
    pub multiply_groups: unsafe fn(tile: GroupedTile<'_>, c: *mut f32, c_stride: usize),
    /// `c[i * c_stride + j] = x_i . W_j` for the `m` rows `x_i = x[i * x_stride..]` of
    /// `pairs` pairs and the first `columns` packed rows `W_j`. Panics on operands that do
    /// not fit (an engine bug).
    ///
    /// # Safety
    /// `c + i * c_stride + j` for `i < m`, `j < columns` must be valid for writes that
    /// nothing else reads or writes during the call (the rows of a result block that
    /// other threads write beside).
    #[allow(clippy::type_complexity)]
    pub multiply: unsafe fn(
        x: &[u16],
        x_stride: usize,
        m: usize,
        packed: &[u32],
        pairs: usize,
        columns: usize,
        c: *mut f32,
        c_stride: usize,
    ),
}

/// The operands of [`Bf16Tiles::multiply_groups`].
pub struct GroupedTile<'a> {
    /// bfloat16 rows of `x`.
    pub x: &'a [u16],
    /// Elements from one row of `x` to the next.
    pub x_stride: usize,
    /// Rows of `x` to multiply.
    pub m: usize,
    /// The packed levels of the block, `pairs` lines.
    pub packed: &'a [u32],
    /// Pairs of levels per row (half the depth).
    pub pairs: usize,
    /// Packed rows of `W` that are real (the rest of the block is padding).
    pub columns: usize,
    /// Pairs per quantization group.
    pub group_pairs: usize,
    /// Per group, one scale per column of the block.
    pub scales: &'a [f32],
    /// Per group, what each column adds per unit of the group's sum of `x`.
    pub offsets: &'a [f32],
    /// Per row of `x`, its sum over each group.
    pub sums: &'a [f32],
}

/// What [`Bf16Tiles::pack_levels`] adds to each level of `bits`.
pub fn level_offset(bits: usize) -> f32 {
    if bits == 4 {
        128.0
    } else {
        0.0
    }
}

/// The tile kernels if the CPU has AVX-512 BF16 and the active path is AVX-512; their
/// products run on AMX where the CPU and the system allow it.
pub fn bf16_tiles() -> Option<Bf16Tiles> {
    #[cfg(target_arch = "x86_64")]
    {
        use super::amx;
        let supported = super::Isa::active() == super::Isa::Avx512
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512bf16");
        if supported {
            return Some(Bf16Tiles {
                pack: |w, stride, rows, pairs, out| {
                    check_pack(w.len(), stride, rows, pairs, out.len());
                    // SAFETY: the CPU has the instruction sets; the check bounds every read.
                    unsafe { avx512::pack(w, stride, rows, pairs, out) }
                },
                pack_columns: |b, stride, columns, pairs, out| {
                    assert!(
                        columns <= TILE_COLUMNS
                            && out.len() >= pairs * TILE_COLUMNS
                            && (columns == 0
                                || pairs == 0
                                || b.len() >= (2 * pairs - 1) * stride + columns),
                        "columns to pack do not fit"
                    );
                    // SAFETY: as above.
                    unsafe { avx512::pack_columns(b, stride, columns, pairs, out) }
                },
                pack_levels: |words, words_per_row, bits, rows, pairs, out| {
                    assert!(
                        matches!(bits, 4 | 8) && pairs % 16 == 0,
                        "levels do not fit"
                    );
                    check_pack(
                        words.len() * 32 / bits,
                        words_per_row * 32 / bits,
                        rows,
                        pairs,
                        out.len(),
                    );
                    // SAFETY: as above.
                    unsafe { avx512::pack_levels(words, words_per_row, bits, rows, pairs, out) }
                },
                pack_dequantized: |levels, rows, pairs, out| {
                    let per_row = levels.words_per_row * 32 / levels.bits.max(1);
                    let groups = per_row / levels.group_size.max(1);
                    assert!(
                        matches!(levels.bits, 4 | 8)
                            && pairs % 16 == 0
                            && levels.group_size % 32 == 0
                            && per_row >= 2 * pairs
                            && levels.scales.len() >= rows * groups
                            && levels.biases.len() >= rows * groups,
                        "levels do not fit"
                    );
                    check_pack(
                        levels.words.len() * 32 / levels.bits,
                        per_row,
                        rows,
                        pairs,
                        out.len(),
                    );
                    // SAFETY: as above.
                    unsafe { avx512::pack_dequantized(levels, rows, pairs, out) }
                },
                matrix_tiles: amx::available(),
                multiply_groups: |tile, c, c_stride| {
                    check_multiply(
                        tile.x.len(),
                        tile.x_stride,
                        tile.m,
                        tile.packed.len(),
                        tile.pairs,
                        tile.columns,
                    );
                    let groups = tile.pairs / tile.group_pairs.max(1);
                    assert!(
                        tile.group_pairs > 0
                            && tile.pairs % tile.group_pairs == 0
                            && tile.scales.len() >= groups * TILE_COLUMNS
                            && tile.offsets.len() >= groups * TILE_COLUMNS
                            && tile.sums.len() >= tile.m * groups,
                        "grouped tile does not fit"
                    );
                    // SAFETY: the CPU has the instruction sets; the checks bound every
                    // read, the caller vouches for the result.
                    unsafe { avx512::multiply_groups(&tile, c, c_stride) }
                },
                multiply: |x, x_stride, m, packed, pairs, columns, c, c_stride| {
                    check_multiply(x.len(), x_stride, m, packed.len(), pairs, columns);
                    if amx::available()
                        && pairs.is_multiple_of(amx::TILE_PAIRS)
                        && m > 0
                        && columns > 0
                    {
                        let (x, packed) = (x.as_ptr(), packed.as_ptr());
                        // SAFETY: AMX is usable; the check bounds the operands.
                        unsafe {
                            amx::multiply(
                                x,
                                x_stride,
                                m,
                                packed,
                                TILE_COLUMNS,
                                pairs,
                                columns,
                                c,
                                c_stride,
                            )
                        }
                    } else {
                        // SAFETY: as above.
                        unsafe {
                            avx512::multiply(x, x_stride, m, packed, pairs, columns, c, c_stride)
                        }
                    }
                },
            });
        }
    }
    None
}

/// Bounds of a pack of `rows` rows of `pairs` pairs, `stride` elements apart, from `w`
/// elements into `out` u32s.
fn check_pack(w: usize, stride: usize, rows: usize, pairs: usize, out: usize) {
    assert!(
        rows <= TILE_COLUMNS
            && out >= pairs * TILE_COLUMNS
            && (rows == 0 || w >= (rows - 1) * stride + 2 * pairs),
        "rows to pack do not fit"
    );
}

fn check_multiply(x: usize, x_stride: usize, m: usize, packed: usize, pairs: usize, cols: usize) {
    assert!(
        cols <= TILE_COLUMNS
            && packed >= pairs * TILE_COLUMNS
            && (m == 0 || x >= (m - 1) * x_stride + 2 * pairs),
        "product tile does not fit"
    );
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{AffineRows, TILE_COLUMNS};
    use std::arch::x86_64::*;

    /// Rows of `x` per pass of [`rows`]: 8 rows by 32 columns keep 16 accumulators.
    const TILE_ROWS: usize = 8;

    /// # Safety
    /// The CPU supports AVX-512F, BW and BF16; bounds as checked by `check_pack`.
    #[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
    pub(super) unsafe fn pack(
        w: &[u16],
        stride: usize,
        rows: usize,
        pairs: usize,
        out: &mut [u32],
    ) {
        let out = out.as_mut_ptr();
        let whole = pairs / 16 * 16;
        for half in 0..2 {
            let first = half * 16;
            let present = rows.saturating_sub(first).min(16);
            for p in (0..whole).step_by(16) {
                let lines: [__m512i; 16] = std::array::from_fn(|t| {
                    if t < present {
                        _mm512_loadu_si512(w.as_ptr().add((first + t) * stride + 2 * p).cast())
                    } else {
                        _mm512_setzero_si512()
                    }
                });
                let columns = transpose(lines);
                for (c, v) in columns.iter().enumerate() {
                    _mm512_storeu_si512(out.add((p + c) * TILE_COLUMNS + first).cast(), *v);
                }
            }
        }
        for p in whole..pairs {
            for t in 0..TILE_COLUMNS {
                let pair = if t < rows {
                    let at = w.as_ptr().add(t * stride + 2 * p);
                    u32::from(*at) | u32::from(*at.add(1)) << 16
                } else {
                    0
                };
                *out.add(p * TILE_COLUMNS + t) = pair;
            }
        }
    }

    /// # Safety
    /// The CPU supports AVX-512F, BW and BF16; bounds as checked by the caller.
    #[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
    pub(super) unsafe fn pack_columns(
        b: &[u16],
        stride: usize,
        columns: usize,
        pairs: usize,
        out: &mut [u32],
    ) {
        let (b, out) = (b.as_ptr(), out.as_mut_ptr());
        // Masked loads read only the block's columns (and never fault past them).
        let keep = (1u64 << columns).wrapping_sub(1) as u32;
        // Interleaving two rows within 128-bit lanes leaves pairs of columns 8l..8l+3 in
        // lane l of `low`, 8l+4..8l+7 in lane l of `high`: these put them in order.
        let first: [u32; 16] = [0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23];
        let second: [u32; 16] = [8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31];
        let (first, second) = (
            _mm512_loadu_si512(first.as_ptr().cast()),
            _mm512_loadu_si512(second.as_ptr().cast()),
        );
        for p in 0..pairs {
            let even = _mm512_maskz_loadu_epi16(keep, b.add(2 * p * stride).cast());
            let odd = _mm512_maskz_loadu_epi16(keep, b.add((2 * p + 1) * stride).cast());
            let (low, high) = (
                _mm512_unpacklo_epi16(even, odd),
                _mm512_unpackhi_epi16(even, odd),
            );
            let line = out.add(p * TILE_COLUMNS);
            _mm512_storeu_si512(line.cast(), _mm512_permutex2var_epi32(low, first, high));
            _mm512_storeu_si512(
                line.add(16).cast(),
                _mm512_permutex2var_epi32(low, second, high),
            );
        }
    }

    /// # Safety
    /// The CPU supports AVX-512F, BW and BF16; bounds as checked by the caller.
    #[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
    pub(super) unsafe fn pack_levels(
        words: &[u32],
        words_per_row: usize,
        bits: usize,
        rows: usize,
        pairs: usize,
        out: &mut [u32],
    ) {
        let (words, out) = (words.as_ptr().cast::<u8>(), out.as_mut_ptr());
        // 16 pairs (32 levels) of a row from its bytes at `at`.
        let pairs_of = |at: *const u8| -> __m512i {
            if bits == 4 {
                // A byte holds levels 2i (low nibble) and 2i + 1: bfloat16 128 + q is
                // 0x4300 | q, the high level shifted to the upper half.
                let v = _mm512_cvtepu8_epi32(_mm_loadu_si128(at.cast()));
                let low = _mm512_ternarylogic_epi32::<0xEA>(
                    v,
                    _mm512_set1_epi32(0xF),
                    _mm512_set1_epi32(0x4300_4300),
                );
                _mm512_ternarylogic_epi32::<0xEA>(
                    _mm512_slli_epi32::<12>(v),
                    _mm512_set1_epi32(0xF_0000),
                    low,
                )
            } else {
                // Two bytes per pair; small integers are exact in bfloat16.
                let v = _mm512_cvtepu16_epi32(_mm256_loadu_si256(at.cast()));
                let low = _mm512_castps_si512(_mm512_cvtepi32_ps(_mm512_and_si512(
                    v,
                    _mm512_set1_epi32(0xFF),
                )));
                let high = _mm512_castps_si512(_mm512_cvtepi32_ps(_mm512_srli_epi32::<8>(v)));
                _mm512_ternarylogic_epi32::<0xEA>(
                    _mm512_set1_epi32(0xFFFF_0000u32 as i32),
                    high,
                    _mm512_srli_epi32::<16>(low),
                )
            }
        };
        let chunk_bytes = 32 * bits / 8;
        pack_chunks(rows, pairs, out, |t, chunk| {
            pairs_of(words.add(t * words_per_row * 4 + chunk * chunk_bytes))
        });
    }

    /// # Safety
    /// The CPU supports AVX-512F, BW and BF16; bounds as checked by the caller.
    #[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
    pub(super) unsafe fn pack_dequantized(
        levels: &AffineRows<'_>,
        rows: usize,
        pairs: usize,
        out: &mut [u32],
    ) {
        let bits = levels.bits;
        let words = levels.words.as_ptr().cast::<u8>();
        let groups = levels.words_per_row * 32 / bits / levels.group_size;
        let chunks_per_group = levels.group_size / 32;
        // A chunk's levels come out in two vectors, the even ones and the odd ones; the
        // rounding packs them one after the other, and this puts each pair together.
        let interleave: [u16; 32] = std::array::from_fn(|i| (i / 2 + 16 * (i % 2)) as u16);
        let interleave = _mm512_loadu_si512(interleave.as_ptr().cast());
        let chunk_bytes = 32 * bits / 8;
        pack_chunks(rows, pairs, out.as_mut_ptr(), |t, chunk| {
            let at = words.add(t * levels.words_per_row * 4 + chunk * chunk_bytes);
            let (even, odd) = if bits == 4 {
                let v = _mm512_cvtepu8_epi32(_mm_loadu_si128(at.cast()));
                let mask = _mm512_set1_epi32(0xF);
                (
                    _mm512_and_si512(v, mask),
                    _mm512_and_si512(_mm512_srli_epi32::<4>(v), mask),
                )
            } else {
                let v = _mm512_cvtepu16_epi32(_mm256_loadu_si256(at.cast()));
                (
                    _mm512_and_si512(v, _mm512_set1_epi32(0xFF)),
                    _mm512_srli_epi32::<8>(v),
                )
            };
            let g = t * groups + chunk / chunks_per_group;
            let scale = _mm512_set1_ps(f32::from_bits(u32::from(levels.scales[g]) << 16));
            let bias = _mm512_set1_ps(f32::from_bits(u32::from(levels.biases[g]) << 16));
            let (even, odd) = (
                _mm512_fmadd_ps(_mm512_cvtepi32_ps(even), scale, bias),
                _mm512_fmadd_ps(_mm512_cvtepi32_ps(odd), scale, bias),
            );
            let rounded: __m512i = std::mem::transmute(_mm512_cvtne2ps_pbh(odd, even));
            _mm512_permutexvar_epi16(interleave, rounded)
        });
    }

    /// Packs chunk `chunk` (pairs `16 chunk` to `16 chunk + 15`) of each row `t < rows`,
    /// as `chunk_of(t, chunk)` makes it, into the lines of `out`; rows from `rows` to
    /// [`TILE_COLUMNS`] are zero.
    ///
    /// # Safety
    /// `out` holds `pairs` lines (`pairs` a multiple of 16); `chunk_of` is safe to call
    /// for those rows and chunks.
    #[inline(always)]
    unsafe fn pack_chunks(
        rows: usize,
        pairs: usize,
        out: *mut u32,
        chunk_of: impl Fn(usize, usize) -> __m512i,
    ) {
        for half in 0..2 {
            let first = half * 16;
            let present = rows.saturating_sub(first).min(16);
            for (chunk, p) in (0..pairs).step_by(16).enumerate() {
                let lines: [__m512i; 16] = std::array::from_fn(|t| {
                    if t < present {
                        chunk_of(first + t, chunk)
                    } else {
                        _mm512_setzero_si512()
                    }
                });
                for (c, v) in transpose(lines).iter().enumerate() {
                    _mm512_storeu_si512(out.add((p + c) * TILE_COLUMNS + first).cast(), *v);
                }
            }
        }
    }

    /// The transpose of a 16 x 16 matrix of u32, one row per vector.
    #[inline(always)]
    unsafe fn transpose(r: [__m512i; 16]) -> [__m512i; 16] {
        // Pairs of rows interleaved, then pairs of those: vector `4 q + j` then holds, in
        // its 128-bit lane `l`, column `4 l + j` of rows `4 q` to `4 q + 3`.
        let t: [__m512i; 16] = std::array::from_fn(|i| {
            let (a, b) = (r[i / 2 * 2], r[i / 2 * 2 + 1]);
            if i % 2 == 0 {
                _mm512_unpacklo_epi32(a, b)
            } else {
                _mm512_unpackhi_epi32(a, b)
            }
        });
        let u: [__m512i; 16] = std::array::from_fn(|i| {
            let (q, j) = (i / 4, i % 4);
            let (a, b) = (t[4 * q + j % 2], t[4 * q + 2 + j % 2]);
            if j < 2 {
                _mm512_unpacklo_epi64(a, b)
            } else {
                _mm512_unpackhi_epi64(a, b)
            }
        });
        // `u[4 q + j]` with j = 0, 1, 2, 3 holds columns 4 l + {0, 2, 1, 3}: lanes are then
        // gathered across the four row blocks.
        let order = [0, 2, 1, 3];
        let mut out = [_mm512_setzero_si512(); 16];
        for (j, &column) in order.iter().enumerate() {
            let (u0, u1, u2, u3) = (u[j], u[4 + j], u[8 + j], u[12 + j]);
            let even01 = _mm512_shuffle_i32x4::<0x88>(u0, u1);
            let odd01 = _mm512_shuffle_i32x4::<0xDD>(u0, u1);
            let even23 = _mm512_shuffle_i32x4::<0x88>(u2, u3);
            let odd23 = _mm512_shuffle_i32x4::<0xDD>(u2, u3);
            out[column] = _mm512_shuffle_i32x4::<0x88>(even01, even23);
            out[8 + column] = _mm512_shuffle_i32x4::<0xDD>(even01, even23);
            out[4 + column] = _mm512_shuffle_i32x4::<0x88>(odd01, odd23);
            out[12 + column] = _mm512_shuffle_i32x4::<0xDD>(odd01, odd23);
        }
        out
    }

    /// # Safety
    /// The CPU supports AVX-512F, BW and BF16; bounds as checked by `check_multiply`, and
    /// the caller vouches for the result rows from `c`.
    #[allow(clippy::too_many_arguments)]
    #[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
    pub(super) unsafe fn multiply(
        x: &[u16],
        x_stride: usize,
        m: usize,
        packed: &[u32],
        pairs: usize,
        columns: usize,
        c: *mut f32,
        c_stride: usize,
    ) {
        let mask = ((1u64 << columns) - 1) as u32;
        let x = x.as_ptr();
        let mut i = 0;
        while i < m {
            let (xi, ci) = (x.add(i * x_stride), c.add(i * c_stride));
            let tile = (m - i).min(TILE_ROWS);
            macro_rules! with_rows {
                ($r:literal) => {
                    rows::<$r>(xi, x_stride, packed.as_ptr(), pairs, mask, ci, c_stride)
                };
            }
            match tile {
                8 => with_rows!(8),
                7 => with_rows!(7),
                6 => with_rows!(6),
                5 => with_rows!(5),
                4 => with_rows!(4),
                3 => with_rows!(3),
                2 => with_rows!(2),
                _ => with_rows!(1),
            }
            i += tile;
        }
    }

    /// Rows of `x` per pass of [`grouped_rows`]: each row keeps a group's sums and the
    /// running result, 4 accumulators.
    const GROUPED_ROWS: usize = 4;

    /// # Safety
    /// The CPU supports AVX-512F, BW and BF16; bounds as checked by the caller, which
    /// vouches for the result rows from `c`.
    #[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
    pub(super) unsafe fn multiply_groups(
        tile: &super::GroupedTile<'_>,
        c: *mut f32,
        c_stride: usize,
    ) {
        let mask = ((1u64 << tile.columns) - 1) as u32;
        let groups = tile.pairs / tile.group_pairs;
        let mut i = 0;
        while i < tile.m {
            let rows = (tile.m - i).min(GROUPED_ROWS);
            let at = Grouped {
                x: tile.x.as_ptr().add(i * tile.x_stride),
                x_stride: tile.x_stride,
                packed: tile.packed.as_ptr(),
                groups,
                group_pairs: tile.group_pairs,
                scales: tile.scales.as_ptr(),
                offsets: tile.offsets.as_ptr(),
                sums: tile.sums.as_ptr().add(i * groups),
            };
            let ci = c.add(i * c_stride);
            match rows {
                4 => grouped_rows::<4>(&at, mask, ci, c_stride),
                3 => grouped_rows::<3>(&at, mask, ci, c_stride),
                2 => grouped_rows::<2>(&at, mask, ci, c_stride),
                _ => grouped_rows::<1>(&at, mask, ci, c_stride),
            }
            i += rows;
        }
    }

    /// Where [`grouped_rows`] reads, from its first row.
    struct Grouped {
        x: *const u16,
        x_stride: usize,
        packed: *const u32,
        groups: usize,
        group_pairs: usize,
        scales: *const f32,
        offsets: *const f32,
        sums: *const f32,
    }

    /// `R` rows of `x` by the packed block of levels, group by group.
    ///
    /// # Safety
    /// As [`multiply_groups`], for `R` rows from `at` and result rows from `c`.
    #[inline(always)]
    unsafe fn grouped_rows<const R: usize>(at: &Grouped, mask: u32, c: *mut f32, c_stride: usize) {
        let zero = _mm512_setzero_ps();
        let mut result = [[zero; 2]; R];
        let xs: [*const u32; R] = std::array::from_fn(|r| at.x.add(r * at.x_stride).cast::<u32>());
        for g in 0..at.groups {
            let mut dots = [[zero; 2]; R];
            let group = g * at.group_pairs..(g + 1) * at.group_pairs;
            accumulate(&xs, at.packed, group, &mut dots);
            let (scales, offsets) = (
                at.scales.add(g * TILE_COLUMNS),
                at.offsets.add(g * TILE_COLUMNS),
            );
            for h in 0..2 {
                let scale = _mm512_loadu_ps(scales.add(16 * h));
                let offset = _mm512_loadu_ps(offsets.add(16 * h));
                for r in 0..R {
                    let sum = _mm512_set1_ps(*at.sums.add(r * at.groups + g));
                    result[r][h] = _mm512_fmadd_ps(scale, dots[r][h], result[r][h]);
                    result[r][h] = _mm512_fmadd_ps(offset, sum, result[r][h]);
                }
            }
        }
        store(&result, mask, c, c_stride);
    }

    /// `R` rows of `x` by the packed block: 2 R accumulators of 16 columns.
    ///
    /// # Safety
    /// As [`multiply`], for rows `x..x + R * x_stride` and result rows from `c`.
    #[inline(always)]
    unsafe fn rows<const R: usize>(
        x: *const u16,
        x_stride: usize,
        packed: *const u32,
        pairs: usize,
        mask: u32,
        c: *mut f32,
        c_stride: usize,
    ) {
        let mut acc = [[_mm512_setzero_ps(); 2]; R];
        let xs: [*const u32; R] = std::array::from_fn(|r| x.add(r * x_stride).cast::<u32>());
        accumulate(&xs, packed, 0..pairs, &mut acc);
        store(&acc, mask, c, c_stride);
    }

    /// Adds the products of `pairs` of the packed lines with the same pairs of each row
    /// `xs[r]` into `acc[r]` (16 columns per vector).
    ///
    /// # Safety
    /// The lines and the rows' pairs in `pairs` are in bounds.
    #[inline(always)]
    unsafe fn accumulate<const R: usize>(
        xs: &[*const u32; R],
        packed: *const u32,
        pairs: std::ops::Range<usize>,
        acc: &mut [[__m512; 2]; R],
    ) {
        for p in pairs {
            let line = packed.add(p * TILE_COLUMNS);
            let lo: __m512bh = std::mem::transmute(_mm512_loadu_si512(line.cast()));
            let hi: __m512bh = std::mem::transmute(_mm512_loadu_si512(line.add(16).cast()));
            for (a, x) in acc.iter_mut().zip(xs) {
                let pair = x.add(p).read_unaligned();
                let xv: __m512bh = std::mem::transmute(_mm512_set1_epi32(pair as i32));
                a[0] = _mm512_dpbf16_ps(a[0], lo, xv);
                a[1] = _mm512_dpbf16_ps(a[1], hi, xv);
            }
        }
    }

    /// Writes each row's two vectors of 16 columns to `c`, `c_stride` apart, the columns
    /// in `mask` only.
    ///
    /// # Safety
    /// Every masked-in column of every row is valid for writes.
    #[inline(always)]
    unsafe fn store<const R: usize>(
        rows: &[[__m512; 2]; R],
        mask: u32,
        c: *mut f32,
        c_stride: usize,
    ) {
        let (lo_mask, hi_mask) = (mask as u16, (mask >> 16) as u16);
        for (r, a) in rows.iter().enumerate() {
            let row = c.add(r * c_stride);
            _mm512_mask_storeu_ps(row, lo_mask, a[0]);
            // Only formed when a column past the 16th is written: otherwise the row may
            // end before it.
            if hi_mask != 0 {
                _mm512_mask_storeu_ps(row.add(16), hi_mask, a[1]);
            }
        }
    }
}
