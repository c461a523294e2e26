//! Dot products of rows packed at 2, 4 or 8 bits with bfloat16 vectors, by AVX-512 VNNI's
//! byte dot product (`vpdpbusd`), which multiplies 64 unsigned bytes by 64 signed ones
//! and adds each four products into one of 16 i32 lanes: the decode step of a bfloat16
//! model quantized with MLX's affine scheme.
//!
//! A level is one unsigned byte as packed (8 bits) or after a shift and a mask (2 and 4
//! bits). A vector is written in 16-bit fixed point, group by group: `v = x / u` rounded,
//! with `u` the power of two that puts the group's largest magnitude in `[2^13, 2^14)`,
//! and `v = 256 h + l` split into two signed bytes. A group's products with `h` and `l`
//! are exact in i32; their sum times `u` times the group's scale is the levels' part of
//! the dot product, and the group's bias times the sum of its values the rest. Each value
//! is off by at most `2^-14` of its group's largest, where a bfloat16 value itself keeps
//! 8 significant bits.
//!
//! Why bytes: the pair product of bfloat16 levels (`vdpbf16ps`) multiplies 32 levels an
//! instruction and needs a shift and a mask to make each 32 of them; this multiplies 64
//! bytes an instruction, and 8-bit levels need no unpacking. On a 2-core Zen 4, which
//! runs 512-bit instructions in two halves, a 2816 x 1024 product with one row of `x`,
//! in cache, took 73 µs at 8 bits and 42.5 at 4 bits with pair products, 44 and 34 this
//! way.
//!
//! Magnitudes: each vector is first multiplied by the power of two that brings its largest
//! finite magnitude near `2^-36`, and each row's sum by its inverse in f64, so that a sum
//! overflows only where the product does and a scale times its group's unit stays a
//! normal f32 for scales down to about `2^-77`. Infinities and NaN, which fixed point
//! cannot hold, are left out of the layout and their products added to each row's sum
//! afterwards, as MLX's product would.
//!
//! Layout: a row's bytes are read 64 at a time (a step of `64 * per` levels, `per = 8 /
//! bits`). Sub-level `j` of every byte gives one vector of 64 levels whose byte `t` is
//! level `per * t + j` of the step, so i32 lane `i` of a step's sums covers levels `4 per
//! i` to `4 per (i + 1) - 1`; groups are whole lanes. [`BFloat16Vector`] stores, per step,
//! the `h` bytes of each sub-level then the `l` bytes, in the same order.

use super::MAX_VECTORS;

/// Bytes per step: one 512-bit load.
const STEP_BYTES: usize = 64;

/// Where a vector's largest finite magnitude is brought before its fixed-point layout.
const VECTOR_EXPONENT: i32 = -36;

/// Bits below a group's largest magnitude that a fixed-point value keeps: `|v| <= 2^14`,
/// whose high byte `(v + 128) >> 8` fits a signed byte.
const FIXED_BITS: i32 = 14;

/// The smallest group unit, as a power of two: groups more than `2^-40` below a vector's
/// largest keep fewer bits, which changes no f32 sum of the row.
const MIN_UNIT_EXPONENT: i32 = VECTOR_EXPONENT - FIXED_BITS - 40;

/// The byte-product kernel, where the CPU has it.
#[derive(Copy, Clone)]
pub struct ByteDots {
    /// `out[r * xs.len() + i] = row r . xs[i]`, each level times its group's scale plus
    /// the group's bias, for 1 to [`MAX_VECTORS`] vectors laid out for these rows. Panics
    /// on rows or vectors that do not fit (an engine bug).
    pub dots: fn(rows: &AffineRows<'_>, xs: &[&BFloat16Vector], out: &mut [f32]),
}

/// The byte-product kernel if the CPU has AVX-512 VNNI (with BW and VL) and the active
/// path is AVX-512.
pub fn byte_dots() -> Option<ByteDots> {
    #[cfg(target_arch = "x86_64")]
    {
        let supported = super::Isa::active() == super::Isa::Avx512
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512vl")
            && is_x86_feature_detected!("avx512vnni");
        if supported {
            // SAFETY: the CPU has the instruction sets the kernel is compiled for.
            return Some(ByteDots {
                dots: |rows, xs, out| unsafe { dots(rows, xs, out) },
            });
        }
    }
    None
}

/// Rows of levels packed at `bits` (2, 4 or 8) into u32 words, `group_size` consecutive
/// levels sharing a bfloat16 scale and bias (MLX's affine quantization).
pub struct AffineRows<'a> {
    /// The rows' words, one row after another.
    pub words: &'a [u32],
    /// Words per row.
    pub words_per_row: usize,
    /// bfloat16 bits of one scale per group, row after row.
    pub scales: &'a [u16],
    /// bfloat16 bits of one bias per group, row after row.
    pub biases: &'a [u16],
    pub bits: usize,
    pub group_size: usize,
}

impl<'a> AffineRows<'a> {
    /// The rows numbered `rows` of these.
    pub fn part(&self, rows: std::ops::Range<usize>) -> AffineRows<'a> {
        let groups = self.words_per_row * (32 / self.bits) / self.group_size;
        let at = rows.start * groups..rows.end * groups;
        AffineRows {
            words: &self.words[rows.start * self.words_per_row..rows.end * self.words_per_row],
            scales: &self.scales[at.clone()],
            biases: &self.biases[at],
            ..*self
        }
    }
}

impl AffineRows<'_> {
    /// Row `r`'s weight at level `e`: its scale times its level plus its bias, in f32.
    fn weight(&self, r: usize, e: usize) -> f32 {
        let per_word = 32 / self.bits;
        let word = self.words[r * self.words_per_row + e / per_word];
        let level = (word >> (e % per_word * self.bits)) & ((1 << self.bits) - 1);
        let groups_per_row = self.words_per_row * per_word / self.group_size;
        let g = r * groups_per_row + e / self.group_size;
        widen(self.scales[g]) * level as f32 + widen(self.biases[g])
    }
}

/// How the kernel reads rows of `levels` levels at `bits` in groups of `group_size`.
#[derive(Copy, Clone, Debug, PartialEq)]
struct View {
    bits: usize,
    levels: usize,
    group_size: usize,
}

impl View {
    /// The view, if the kernel takes such rows: whole steps and whole groups of MLX's
    /// sizes, each a whole number of i32 lanes that is whole steps or divides one.
    fn of(bits: usize, levels: usize, group_size: usize) -> Option<View> {
        let view = View {
            bits,
            levels,
            group_size,
        };
        let fits = matches!(bits, 2 | 4 | 8)
            && matches!(group_size, 32 | 64 | 128)
            && levels > 0
            && levels.is_multiple_of(view.step_levels())
            && levels.is_multiple_of(group_size);
        fits.then_some(view)
    }

    /// Levels per byte.
    fn per_byte(&self) -> usize {
        8 / self.bits
    }

    fn step_levels(&self) -> usize {
        STEP_BYTES * self.per_byte()
    }

    fn groups(&self) -> usize {
        self.levels / self.group_size
    }
}

/// Whether [`ByteDots::dots`] computes rows of `levels` levels packed at
/// `bits` in groups of `group_size`.
pub fn bf16_rows_fit(bits: usize, levels: usize, group_size: usize) -> bool {
    View::of(bits, levels, group_size).is_some()
}

/// bfloat16 bits as the f32 they stand for.
pub(super) fn widen(b: u16) -> f32 {
    f32::from_bits(u32::from(b) << 16)
}

/// A bfloat16 vector laid out for the rows it meets: per group a power-of-two unit and
/// the sum of its values, per step the high and low bytes of its fixed-point values.
pub struct BFloat16Vector {
    /// The rows the layout is for.
    view: View,
    /// The laid-out bytes from `start` on; `start` puts them on a 64-byte boundary, so
    /// that no load spans two cache lines.
    bytes: Vec<i8>,
    start: usize,
    /// Per group, the unit of its fixed-point values. Padded with 16 zeros, so that the
    /// kernel may read 16 from any group.
    units: Vec<f32>,
    /// Per group, the sum of its values: what multiplies the bias. Zero-padded to whole
    /// vectors of 16.
    sums: Vec<f32>,
    /// What the kernel's sums are multiplied by: the inverse of the power of two the
    /// values were multiplied by.
    unscale: f64,
    /// The infinities and NaN of the vector and where they are: left out of the layout,
    /// their products are added to each row's sum.
    specials: Vec<(usize, f32)>,
}

impl BFloat16Vector {
    /// `x` (bfloat16 bits) laid out for rows of `x.len()` levels packed at `bits` in
    /// groups of `group_size`; `None` if [`bf16_rows_fit`] refuses such rows.
    pub fn new(x: &[u16], bits: usize, group_size: usize) -> Option<BFloat16Vector> {
        let view = View::of(bits, x.len(), group_size)?;
        // A decode step lays out a vector for every product: its loops are compiled for
        // wide registers.
        Some(super::vectorised(
            #[inline(always)]
            || Self::laid_out(x, view),
        ))
    }

    /// [`BFloat16Vector::new`] once `view` is known to fit. Written as loops the
    /// compiler vectorises: a decode step lays out every vector it multiplies.
    #[inline(always)]
    fn laid_out(x: &[u16], view: View) -> BFloat16Vector {
        // Magnitude bits order finite values as their magnitudes do, and put infinities
        // and NaN above them. A fold vectorises where `max` does not.
        let special = |b: u16| b & 0x7FFF >= 0x7F80;
        let largest = x.iter().fold(0, |m, &b| (b & 0x7FFF).max(m));
        let (largest, specials) = match special(largest) {
            false => (largest, Vec::new()),
            true => (
                (x.iter().filter(|&&b| !special(b))).fold(0, |m, &b| (b & 0x7FFF).max(m)),
                (x.iter().enumerate())
                    .filter(|&(_, &b)| special(b))
                    .map(|(i, &b)| (i, widen(b)))
                    .collect(),
            ),
        };
        let magnitude = |b: u16| if special(b) { 0 } else { b & 0x7FFF };
        let scale = 2f64.powi(super::exponent_towards(widen(largest), VECTOR_EXPONENT));
        let scaled: Vec<f32> = x
            .iter()
            .map(|&b| (f64::from(widen(magnitude(b) | (b & 0x8000))) * scale) as f32)
            .collect();
        let groups = view.groups();
        let mut units = vec![0.0f32; groups + 16];
        let mut sums = vec![0.0f32; groups.next_multiple_of(16)];
        let mut fixed = vec![0i16; scaled.len()];
        for (((group, fixed), unit), sum) in scaled
            .chunks_exact(view.group_size)
            .zip(fixed.chunks_exact_mut(view.group_size))
            .zip(&mut units)
            .zip(&mut sums)
        {
            let largest = (group.iter()).fold(0, |m, v| (v.to_bits() & 0x7FFF_FFFF).max(m));
            let exponent = match largest {
                0 => MIN_UNIT_EXPONENT,
                bits => ((bits >> 23) as i32 - 127 - (FIXED_BITS - 1)).max(MIN_UNIT_EXPONENT),
            };
            *unit = power_of_two(exponent);
            let inverse = power_of_two(-exponent);
            // Adding 1.5 * 2^23 rounds to an integer (ties to even) in the low bits,
            // which a vector loop reads; a float-to-integer conversion would not
            // vectorise.
            const ROUNDER: f32 = 12_582_912.0;
            for (f, &v) in fixed.iter_mut().zip(group) {
                *f = ((v * inverse + ROUNDER).to_bits() as i32 - ROUNDER.to_bits() as i32) as i16;
            }
            *sum = lane_sum(group);
        }
        let mut laid_out = vec![0i8; 2 * x.len() + STEP_BYTES];
        let start = laid_out.as_ptr().align_offset(STEP_BYTES).min(STEP_BYTES);
        let dst = &mut laid_out[start..][..2 * x.len()];
        match view.per_byte() {
            1 => lay_out_steps::<1>(&fixed, dst),
            2 => lay_out_steps::<2>(&fixed, dst),
            _ => lay_out_steps::<4>(&fixed, dst),
        }
        BFloat16Vector {
            view,
            bytes: laid_out,
            start,
            units,
            sums,
            unscale: 1.0 / scale,
            specials,
        }
    }
}

/// The sum of `values` in 16 lanes, which the compiler vectorises (a sum in order does
/// not).
#[inline(always)]
fn lane_sum(values: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 16];
    let chunks = values.chunks_exact(16);
    let rest: f32 = chunks.remainder().iter().sum();
    for chunk in chunks {
        for (lane, &v) in lanes.iter_mut().zip(chunk) {
            *lane += v;
        }
    }
    // Halving with constant bounds, which the compiler unrolls into vector additions.
    let (low, high) = lanes.split_at_mut(8);
    low.iter_mut().zip(&*high).for_each(|(l, h)| *l += h);
    let (low, high) = low.split_at_mut(4);
    low.iter_mut().zip(&*high).for_each(|(l, h)| *l += h);
    (low[0] + low[2]) + (low[1] + low[3]) + rest
}

/// `2^exponent` for an exponent of the normal f32 range.
fn power_of_two(exponent: i32) -> f32 {
    f32::from_bits(((exponent + 127) as u32) << 23)
}

/// `fixed` in step order, each value as its high byte `h = (v + 128) >> 8` and low byte
/// `l = v - 256 h`: within each step of `64 * PER` values, value `PER * t + j` puts `h` at
/// `64 * j + t` and `l` at `64 * (PER + j) + t`. A constant `PER` lets the compiler read
/// the values as interleaved vectors.
#[inline(always)]
fn lay_out_steps<const PER: usize>(fixed: &[i16], laid_out: &mut [i8]) {
    let (lanes, _) = fixed.as_chunks::<PER>();
    for (src, dst) in lanes
        .chunks_exact(STEP_BYTES)
        .zip(laid_out.chunks_exact_mut(2 * STEP_BYTES * PER))
    {
        let dst: &mut [[i8; STEP_BYTES]] = dst.as_chunks_mut::<STEP_BYTES>().0;
        for (t, lane) in src.iter().enumerate() {
            for (j, &v) in lane.iter().enumerate() {
                let high = (v + 128) >> 8;
                dst[j][t] = high as i8;
                dst[PER + j][t] = (v - 256 * high) as i8;
            }
        }
    }
}

/// [`ByteDots::dots`].
///
/// # Safety
/// The CPU supports AVX-512F, BW, VL and VNNI.
#[cfg(target_arch = "x86_64")]
unsafe fn dots(rows: &AffineRows<'_>, xs: &[&BFloat16Vector], out: &mut [f32]) {
    let view = xs.first().map(|x| x.view);
    let count = rows.words.len() / rows.words_per_row.max(1);
    let levels = rows.words_per_row * 32 / rows.bits.max(1);
    let groups_per_row = levels / rows.group_size.max(1);
    assert!(
        view.is_some()
            && view == View::of(rows.bits, levels, rows.group_size)
            && xs.iter().all(|x| Some(x.view) == view)
            && rows.words.len() == count * rows.words_per_row
            && rows.scales.len() == count * groups_per_row
            && rows.biases.len() == count * groups_per_row
            && xs.len() <= MAX_VECTORS
            && out.len() == count * xs.len(),
        "packed rows and bfloat16 vectors do not fit"
    );
    // SAFETY: the caller's CPU support; the checks above make every access in bounds.
    unsafe { avx512::dots(rows, xs, out) };
    for (i, x) in xs.iter().enumerate() {
        // A NaN makes every product NaN: the vector's first one, as the additions below
        // would leave it, without a pass over the rows per special value (an all-NaN
        // vector of a diverged run took 50 times as long as a finite one).
        if let Some(&(_, nan)) = x.specials.iter().find(|(_, v)| v.is_nan()) {
            (0..count).for_each(|r| out[r * xs.len() + i] = nan);
            continue;
        }
        for &(e, value) in &x.specials {
            for r in 0..count {
                out[r * xs.len() + i] += rows.weight(r, e) * value;
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::super::avx512::F32x16;
    use super::super::vector::Vector;
    use super::{AffineRows, BFloat16Vector, STEP_BYTES};
    use std::arch::x86_64::*;

    /// # Safety
    /// The CPU must support AVX-512F, BW, VL and VNNI; [`super::dots`]'s checks hold.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vnni")]
    pub(super) unsafe fn dots(rows: &AffineRows<'_>, xs: &[&BFloat16Vector], out: &mut [f32]) {
        macro_rules! with_vectors {
            ($bits:literal, $group:literal) => {
                match xs.len() {
                    1 => affine_rows::<$bits, $group, 1>(rows, xs, out),
                    2 => affine_rows::<$bits, $group, 2>(rows, xs, out),
                    3 => affine_rows::<$bits, $group, 3>(rows, xs, out),
                    _ => affine_rows::<$bits, $group, 4>(rows, xs, out),
                }
            };
        }
        // A group size known when compiling lets the step loop keep its lanes' groups in
        // registers and unroll (2816 x 1024 rows, one thread, L3: 4-bit 2.9 to 2.5 ns a
        // step, 8-bit 2.0 to 1.8).
        macro_rules! with_groups {
            ($bits:literal) => {
                match rows.group_size {
                    32 => with_vectors!($bits, 32),
                    64 => with_vectors!($bits, 64),
                    _ => with_vectors!($bits, 128),
                }
            };
        }
        match rows.bits {
            2 => with_groups!(2),
            4 => with_groups!(4),
            _ => with_groups!(8),
        }
    }

    /// 16 bfloat16 values from `p` as f32, those past `count` zero.
    ///
    /// # Safety
    /// `p` valid for reading `count` (at most 16) values; the CPU supports AVX-512F, BW
    /// and VL.
    #[inline(always)]
    unsafe fn widened(p: *const u16, count: usize) -> __m512 {
        let mask = (1u32 << count).wrapping_sub(1) as u16;
        let halves = _mm256_maskz_loadu_epi16(mask, p.cast());
        _mm512_castsi512_ps(_mm512_slli_epi32::<16>(_mm512_cvtepu16_epi32(halves)))
    }

    /// # Safety
    /// As [`dots`]: every read below is in bounds, and `GROUP` is the rows' group size.
    #[inline(always)]
    unsafe fn affine_rows<const BITS: usize, const GROUP: usize, const M: usize>(
        rows: &AffineRows<'_>,
        xs: &[&BFloat16Vector],
        out: &mut [f32],
    ) {
        let view = xs[0].view;
        let step_levels = STEP_BYTES * 8 / BITS;
        let groups_per_row = view.groups();
        let xs: [&BFloat16Vector; M] = std::array::from_fn(|i| xs[i]);
        let bytes_of: [*const i8; M] = std::array::from_fn(|i| xs[i].bytes[xs[i].start..].as_ptr());
        let zero = _mm512_setzero_ps();
        // Rows go 16 groups at a time, whose scales times the vectors' units make one
        // vector each. Where a step's lanes meet one group, a broadcast of its lane
        // scales them; otherwise lane `i` of a chunk's step `j` meets the chunk's group
        // `lane_groups[j][i]`, which one permutation gives it.
        let one_group_a_step = GROUP >= step_levels;
        let chunk_steps = 16 * GROUP / step_levels;
        let row_steps = view.levels / step_levels;
        let lane_groups: [__m512i; 16] = std::array::from_fn(|j| {
            let groups: [u32; 16] =
                std::array::from_fn(|i| ((j * step_levels + 4 * (8 / BITS) * i) / GROUP) as u32);
            _mm512_loadu_si512(groups.as_ptr().cast())
        });
        let count = out.len() / M;
        let mut pending = [[F32x16(zero); 16]; M];
        for r in 0..count {
            let bytes = rows.words.as_ptr().add(r * rows.words_per_row).cast::<u8>();
            let scales = rows.scales.as_ptr().add(r * groups_per_row);
            let biases = rows.biases.as_ptr().add(r * groups_per_row);
            // Two sums per vector, steps alternating between them, so that one step's
            // addition need not wait for the previous one's.
            let (mut even, mut odd) = ([zero; M], [zero; M]);
            for first in (0..groups_per_row).step_by(16) {
                let groups = (groups_per_row - first).min(16);
                let (scale, bias) = (
                    widened(scales.add(first), groups),
                    widened(biases.add(first), groups),
                );
                let mut chunk = [zero; M];
                let mut chunk_lanes = [[0.0f32; 16]; M];
                for m in 0..M {
                    let units = _mm512_loadu_ps(xs[m].units.as_ptr().add(first));
                    chunk[m] = _mm512_mul_ps(scale, units);
                    if one_group_a_step {
                        _mm512_storeu_ps(chunk_lanes[m].as_mut_ptr(), chunk[m]);
                    }
                    // The bias times the vector's sum, per group.
                    let group_sums = _mm512_loadu_ps(xs[m].sums.as_ptr().add(first));
                    even[m] = _mm512_fmadd_ps(bias, group_sums, even[m]);
                }
                // No division here: one per chunk cost a 4-bit row of 1024 levels a
                // fifth of its time.
                let start = first / 16 * chunk_steps;
                let steps = (row_steps - start).min(chunk_steps);
                let mut j = 0;
                let scaling = Scaling {
                    chunk: &chunk,
                    lanes: &chunk_lanes,
                    lane_groups: &lane_groups,
                };
                while j + 2 <= steps {
                    let s = start + j;
                    let sums = step::<BITS, M>(bytes, s, &bytes_of);
                    scaling.add::<BITS, GROUP>(&mut even, j, sums);
                    let sums = step::<BITS, M>(bytes, s + 1, &bytes_of);
                    scaling.add::<BITS, GROUP>(&mut odd, j + 1, sums);
                    j += 2;
                }
                if j < steps {
                    let sums = step::<BITS, M>(bytes, start + j, &bytes_of);
                    scaling.add::<BITS, GROUP>(&mut even, j, sums);
                }
            }
            // Each row's lanes are summed 16 rows at a time: summed one row at a time, the
            // reduction and the conversions to f64 and back make a chain of dependent
            // instructions per row.
            let slot = r % 16;
            for m in 0..M {
                pending[m][slot] = F32x16(_mm512_add_ps(even[m], odd[m]));
            }
            if slot == 15 || r + 1 == count {
                let first = r - slot;
                for m in 0..M {
                    let sums: [f32; 16] = std::mem::transmute(F32x16::lane_sums(&pending[m]).0);
                    for (i, &sum) in sums[..=slot].iter().enumerate() {
                        out[(first + i) * M + m] = (f64::from(sum) * xs[m].unscale) as f32;
                    }
                }
            }
        }
    }

    /// A chunk's scales times the vectors' units, as one vector and as lanes, and the
    /// groups its steps' lanes meet.
    struct Scaling<'a, const M: usize> {
        chunk: &'a [__m512; M],
        lanes: &'a [[f32; 16]; M],
        lane_groups: &'a [__m512i; 16],
    }

    impl<const M: usize> Scaling<'_, M> {
        /// Adds step `j` of the chunk, its i32 sums `sums` scaled, to `to`.
        ///
        /// # Safety
        /// The CPU supports AVX-512F; `j` is a step of the chunk.
        #[inline(always)]
        unsafe fn add<const BITS: usize, const GROUP: usize>(
            &self,
            to: &mut [__m512; M],
            j: usize,
            sums: [__m512i; M],
        ) {
            let step_levels = STEP_BYTES * 8 / BITS;
            for m in 0..M {
                let scale = match GROUP >= step_levels {
                    true => _mm512_set1_ps(self.lanes[m][j * step_levels / GROUP]),
                    false => _mm512_permutexvar_ps(self.lane_groups[j], self.chunk[m]),
                };
                to[m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sums[m]), scale, to[m]);
            }
        }
    }

    /// Sub-level `j` of each byte of `packed`, as bytes.
    ///
    /// # Safety
    /// The CPU supports AVX-512F and BW.
    #[inline(always)]
    unsafe fn sub_level<const BITS: usize>(packed: __m512i, j: usize) -> __m512i {
        if BITS == 8 {
            return packed;
        }
        // Shifts of 16-bit lanes bring the next byte's low bits into this byte's top;
        // the mask clears them.
        let shifted = match j * BITS {
            0 => packed,
            2 => _mm512_srli_epi16::<2>(packed),
            4 => _mm512_srli_epi16::<4>(packed),
            _ => _mm512_srli_epi16::<6>(packed),
        };
        _mm512_and_si512(shifted, _mm512_set1_epi8((1 << BITS) - 1))
    }

    /// The i32 sums of step `s` of the row at `row` times the vectors' fixed-point values
    /// of that step, one lane per `4 * 8 / BITS` levels.
    ///
    /// # Safety
    /// As [`dots`]: the step and the vectors' matching bytes are in bounds.
    #[inline(always)]
    unsafe fn step<const BITS: usize, const M: usize>(
        row: *const u8,
        s: usize,
        vectors: &[*const i8; M],
    ) -> [__m512i; M] {
        let bytes = row.add(s * STEP_BYTES);
        super::super::prefetch_ahead(bytes, super::super::Ahead::Farther);
        let packed = _mm512_loadu_si512(bytes.cast());
        let per = 8 / BITS;
        // The high bytes' products, shifted by 8 bits, then the low bytes' added to the
        // same sums: `256 h + l` without a separate addition.
        let mut sums = [_mm512_setzero_si512(); M];
        for half in 0..2 {
            if half == 1 {
                for sum in &mut sums {
                    *sum = _mm512_slli_epi32::<8>(*sum);
                }
            }
            for j in 0..per {
                let levels = sub_level::<BITS>(packed, j);
                for m in 0..M {
                    let at = vectors[m].add((s * 2 * per + half * per + j) * STEP_BYTES);
                    sums[m] = _mm512_dpbusd_epi32(sums[m], levels, _mm512_load_si512(at.cast()));
                }
            }
        }
        sums
    }
}
