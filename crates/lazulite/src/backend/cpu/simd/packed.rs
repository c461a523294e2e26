//! Dot products of a row of levels packed at 2, 4 or 8 bits into u32 words with a few f32
//! vectors: the inner loop of a quantized language model's decode step, which must keep
//! up with memory while it unpacks.
//!
//! A word holds `32 / BITS` consecutive levels, so level `j` of `LANES` adjacent words
//! belongs to `LANES` elements `32 / BITS` apart. Rather than unpack words into consecutive
//! floats (a shuffle per element), each vector is laid out once ([`PackedDots::lay_out`]) so that
//! element `j` of word `w` of a chunk of `LANES` words sits at position
//! `chunk * LANES * (32 / BITS) + j * LANES + w`: then one shift, mask and convert of a
//! vector of words gives `LANES` levels that multiply `LANES` consecutive values. The
//! levels of a chunk are unpacked once for all the vectors.
//!
//! Powers of two keep the unpacking short. Where the levels are masked in place
//! ([`Vector::LEVELS_IN_PLACE`]) position `j` comes times `2^p` (`p` its bit offset in
//! its half word), and as subnormal floats ([`Unpacking::Subnormal`]) times a further
//! `2^-149`. The layout multiplies position `j` by `2^(e - p)` instead, with `e` chosen
//! per vector to bring its largest magnitude near `2^100`, and the kernel divides each dot
//! product by the power of two left over. Every one of these scalings is exact, so the
//! products and sums round as those of the plain levels would. The products of subnormal
//! levels come at most near `2^-40`, so a group's scaled sum stays far below the f32 limit
//! unless the weights' own products with `x` pass it; converted levels come near `2^108`,
//! and their dot products are brought down by `2^-100` before their group's scale
//! ([`CONVERTED_DOWN`]). Only products below about `2^-77` times the largest, too small to
//! change a sum of f32, lose bits to gradual underflow (or to zero where the thread
//! flushes it).

#[cfg(target_arch = "x86_64")]
use super::vector::Vector;

/// Most vectors one pass over a packed row serves.
pub const MAX_VECTORS: usize = 4;

/// Scales read past the last group's by the kernels (one vector's worth).
pub const SCALE_PADDING: usize = 16;

/// Independent accumulator chains per vector, each scaled by its group's scale: with the
/// multiply-adds of the other vectors and groups in flight they hide its latency, and
/// scaling each costs fewer instructions than summing four first.
const CHAINS: usize = 2;

/// Packed rows of one matrix with their group scales and biases.
pub struct PackedRows<'a> {
    /// The rows' words, one row after another: each row whole chunks and whole groups.
    pub words: &'a [u32],
    /// Words per row.
    pub words_per_row: usize,
    /// One scale per group of `words_per_group` words, row after row, then at least
    /// [`SCALE_PADDING`] values of padding, which are read but do not count.
    pub scales: &'a [f32],
    /// One bias per group, row after row (no padding).
    pub biases: &'a [f32],
    /// Words per group of levels sharing a scale: a multiple or a divisor of `lanes`.
    pub words_per_group: usize,
}

/// The packed dot products of one instruction set.
#[derive(Copy, Clone)]
pub struct PackedDots {
    /// Words per chunk, the layout [`PackedDots::lay_out`] prepares the vectors for.
    pub lanes: usize,
    /// Whether the kernel reads levels in place ([`Vector::LEVELS_IN_PLACE`]).
    pub levels_in_place: bool,
    /// Whether the kernel can read levels as subnormal floats ([`Unpacking::Subnormal`]).
    pub subnormal_levels: bool,
    /// `out[r * xs.len() + i] = row r . xs[i]`, each level times its group's scale plus
    /// its group's bias, for 1 to [`MAX_VECTORS`] laid-out vectors at `bits` 2, 4 or 8.
    /// One call serves many rows: what does not depend on the row is set up once. Panics
    /// on lengths that do not fit the rows or an unpacking the kernel lacks (an engine bug).
    pub dots: fn(
        bits: usize,
        rows: &PackedRows<'_>,
        xs: &[&LaidOut],
        unpacking: Unpacking,
        out: &mut [f32],
    ),
}

/// How a kernel turns masked levels into floats.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Unpacking {
    /// An integer-to-float conversion.
    Converted,
    /// None: the masked bits read as a subnormal float, which the multiply-add takes as it
    /// is. Wrong where the CPU treats subnormal inputs as zero.
    Subnormal,
}

/// A vector laid out for [`PackedDots::dots`], with the sums of its groups' values (which
/// the groups' biases multiply).
pub struct LaidOut {
    values: Vec<f32>,
    /// The sums of the groups' values divided by [`unscale`] for converted and for
    /// subnormal levels, so that a row's bias terms join its accumulators at their
    /// scale: a row's sum then passes the f32 range only where its result does, even
    /// where a group's plain sum would (weights whose biases and levels nearly cancel).
    group_sums: [Vec<f32>; 2],
    /// The power of two the layout multiplies the values by, besides each position's own.
    exponent: i32,
}

impl PackedDots {
    /// The unpacking this kernel takes on the calling thread: [`Unpacking::Subnormal`]
    /// where it has it, unless the thread treats subnormal inputs as zero (a library
    /// built for fast math may have asked for that).
    pub fn unpacking(&self) -> Unpacking {
        match self.subnormal_levels && !super::denormals_are_zero() {
            true => Unpacking::Subnormal,
            false => Unpacking::Converted,
        }
    }

    /// `x` (whole chunks of `lanes` words of `32 / bits` values) in the chunk layout of
    /// the module documentation, with the sums of its groups of `group_size` values.
    pub fn lay_out(&self, x: &[f32], bits: usize, group_size: usize) -> LaidOut {
        let (lanes, per) = (self.lanes, 32 / bits);
        let chunk = lanes * per;
        let largest = x.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        let exponent = super::exponent_towards(largest, 100);
        // 2^(exponent - p) for the position at bit offset p in its half word where the
        // kernel reads levels in place (at offset 0 where it does not), as f64: the
        // exponent may lie past the f32 range, the scaled values do not.
        let factors: Vec<f64> = (0..per)
            .map(|j| {
                let offset = match self.levels_in_place {
                    true => (j * bits % 16) as i32,
                    false => 0,
                };
                2f64.powi(exponent - offset)
            })
            .collect();
        let mut values = vec![0.0; x.len()];
        for (src, dst) in x.chunks_exact(chunk).zip(values.chunks_exact_mut(chunk)) {
            for w in 0..lanes {
                for (j, factor) in factors.iter().enumerate() {
                    dst[j * lanes + w] = (f64::from(src[w * per + j]) * factor) as f32;
                }
            }
        }
        let sums: Vec<f64> = x
            .chunks_exact(group_size)
            .map(|g| g.iter().map(|&v| f64::from(v)).sum())
            .collect();
        let scaled = |unscale: f64| sums.iter().map(|s| (s / unscale) as f32).collect();
        LaidOut {
            values,
            group_sums: [
                scaled(unscale(Unpacking::Converted, exponent)),
                scaled(unscale(Unpacking::Subnormal, exponent)),
            ],
            exponent,
        }
    }
}

/// What converted levels' dot products of a group are multiplied by before their scale:
/// they come near `2^108` at most, and their scaled sums could otherwise overflow where
/// those of large weights do not. A normal number, which threads that treat subnormal
/// numbers as zero (the reason to convert) multiply as it is.
const CONVERTED_DOWN: f32 = 1.0 / (1u128 << 100) as f32;

/// What turns a kernel's scaled sums into the sum of levels times the values, for a vector
/// laid out with `exponent`.
fn unscale(unpacking: Unpacking, exponent: i32) -> f64 {
    match unpacking {
        Unpacking::Converted => 2f64.powi(100 - exponent),
        Unpacking::Subnormal => 2f64.powi(149 - exponent),
    }
}

impl LaidOut {
    /// The groups' sums at the scale of `unpacking`'s dot products.
    fn group_sums(&self, unpacking: Unpacking) -> &[f32] {
        match unpacking {
            Unpacking::Converted => &self.group_sums[0],
            Unpacking::Subnormal => &self.group_sums[1],
        }
    }
}

/// [`PackedDots::dots`] over the vector type `V`, for code compiled with its instruction set.
///
/// # Safety
/// The CPU must support `V`'s instruction set.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn dots<V: Vector>(
    bits: usize,
    rows: &PackedRows<'_>,
    xs: &[&LaidOut],
    unpacking: Unpacking,
    out: &mut [f32],
) {
    let (lanes, wpg, wpr) = (V::LANES, rows.words_per_group, rows.words_per_row);
    let count = rows.words.len() / wpr.max(1);
    assert!(
        matches!(bits, 2 | 4 | 8)
            && wpr > 0
            && rows.words.len() == count * wpr
            && wpr.is_multiple_of(lanes)
            && wpg > 0
            && wpr.is_multiple_of(wpg)
            && (wpg.is_multiple_of(lanes) || lanes.is_multiple_of(wpg))
            && rows.scales.len() >= count * (wpr / wpg) + SCALE_PADDING.max(lanes)
            && rows.biases.len() == count * (wpr / wpg)
            && (1..=MAX_VECTORS).contains(&xs.len())
            && (V::SUBNORMAL_LEVELS || unpacking == Unpacking::Converted)
            && out.len() == count * xs.len()
            && xs.iter().all(|x| {
                x.values.len() >= wpr * (32 / bits) && x.group_sums[0].len() == wpr / wpg
            }),
        "packed rows and vectors do not fit"
    );
    macro_rules! with_vectors {
        ($bits:literal, $subnormal:literal) => {
            match xs.len() {
                1 => rows_dots::<V, $bits, 1, $subnormal>(rows, xs, out),
                2 => rows_dots::<V, $bits, 2, $subnormal>(rows, xs, out),
                3 => rows_dots::<V, $bits, 3, $subnormal>(rows, xs, out),
                _ => rows_dots::<V, $bits, 4, $subnormal>(rows, xs, out),
            }
        };
    }
    match (bits, unpacking) {
        (2, Unpacking::Converted) => with_vectors!(2, false),
        (4, Unpacking::Converted) => with_vectors!(4, false),
        (_, Unpacking::Converted) => with_vectors!(8, false),
        (2, Unpacking::Subnormal) => with_vectors!(2, true),
        (4, Unpacking::Subnormal) => with_vectors!(4, true),
        (_, Unpacking::Subnormal) => with_vectors!(8, true),
    }
}

/// # Safety
/// As [`dots`], whose checks make every read below in bounds.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn rows_dots<V: Vector, const BITS: usize, const M: usize, const SUBNORMAL: bool>(
    rows: &PackedRows<'_>,
    xs: &[&LaidOut],
    out: &mut [f32],
) {
    let lanes = V::LANES;
    let unpacking = match SUBNORMAL {
        true => Unpacking::Subnormal,
        false => Unpacking::Converted,
    };
    let unscales: [f64; M] = std::array::from_fn(|i| unscale(unpacking, xs[i].exponent));
    let (wpr, wpg) = (rows.words_per_row, rows.words_per_group);
    let (chunks, groups_per_row) = (wpr / lanes, wpr / wpg);
    let sums: [&[f32]; M] = std::array::from_fn(|i| xs[i].group_sums(unpacking));
    let xs: [*const f32; M] = std::array::from_fn(|i| xs[i].values.as_ptr());
    let zero = V::splat(0.0);
    // When a chunk holds several groups, lane `l` takes the scale of group `l / wpg` of
    // the chunk's groups: the group of each lane, found once per call.
    let mut lane_group = [0u32; 16];
    if wpg < lanes {
        let (mut group, mut left) = (0, wpg);
        for g in lane_group.iter_mut() {
            if left == 0 {
                (group, left) = (group + 1, wpg);
            }
            *g = group;
            left -= 1;
        }
    }
    let lane_group = V::load_words(lane_group.as_ptr());
    for (r, out) in out.chunks_exact_mut(M).enumerate() {
        let words = rows.words.as_ptr().add(r * wpr);
        let scales = rows.scales.as_ptr().add(r * groups_per_row);
        let mut acc = [[zero; CHAINS]; M];
        if wpg >= lanes {
            // A group is whole chunks: one scale for all of their lanes. One loop over the
            // chunks, not one per group: a group is often a single chunk, and the inner
            // loop's bookkeeping then cost as much as a multiply-add.
            let chunks_per_group = wpg / lanes;
            let (mut dots, mut left, mut g) = ([[zero; CHAINS]; M], chunks_per_group, 0);
            for c in 0..chunks {
                chunk::<V, BITS, M, SUBNORMAL>(words, c, &xs, &mut dots);
                left -= 1;
                if left == 0 {
                    scaled::<V, M, SUBNORMAL>(V::splat(*scales.add(g)), &dots, &mut acc);
                    (dots, left, g) = ([[zero; CHAINS]; M], chunks_per_group, g + 1);
                }
            }
        } else {
            let groups_per_chunk = lanes / wpg;
            for c in 0..chunks {
                let mut dots = [[zero; CHAINS]; M];
                chunk::<V, BITS, M, SUBNORMAL>(words, c, &xs, &mut dots);
                let scales = V::load(scales.add(c * groups_per_chunk)).permute(lane_group);
                scaled::<V, M, SUBNORMAL>(scales, &dots, &mut acc);
            }
        }
        let biases = &rows.biases[r * groups_per_row..][..groups_per_row];
        let whole = groups_per_row - groups_per_row % lanes;
        for ((o, a), sums) in out.iter_mut().zip(acc).zip(sums) {
            // The biases times the groups' sums join the lanes before their one horizontal
            // sum: a second reduction per row lengthened the row's chain of dependent
            // instructions.
            let mut sum = a[0] + a[1];
            for g in (0..whole).step_by(lanes) {
                sum = V::load(biases.as_ptr().add(g)).mul_add(V::load(sums.as_ptr().add(g)), sum);
            }
            let rest: f32 = biases[whole..]
                .iter()
                .zip(&sums[whole..])
                .map(|(b, s)| b * s)
                .sum();
            *o = sum.sum_lanes() + rest;
        }
    }
    // Multiplied back after the rows' loop, for the same reason.
    for row in out.chunks_exact_mut(M) {
        for (o, unscale) in row.iter_mut().zip(unscales) {
            *o = (f64::from(*o) * unscale) as f32;
        }
    }
}

// The helpers below are functions, not closures: a closure does not inherit the target
// features of the function it is inlined into, and its intrinsics would become calls.

/// Adds the levels of chunk `c` of the row at `words` times the vectors' values to `dots`.
///
/// # Safety
/// As [`dots`]: chunk `c` and the vectors' matching values are in bounds.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn chunk<V: Vector, const BITS: usize, const M: usize, const SUBNORMAL: bool>(
    words: *const u32,
    c: usize,
    xs: &[*const f32; M],
    dots: &mut [[V; CHAINS]; M],
) {
    let (lanes, per) = (V::LANES, 32 / BITS);
    let at = words.add(c * lanes);
    // 2- and 4-bit rows, which take longer to unpack per byte, ask 1 KB ahead into L1;
    // 8-bit rows stream like the other kernels, 4 KB ahead into L2 (see `Ahead`).
    let ahead = if BITS == 8 {
        super::Ahead::Far
    } else {
        super::Ahead::Near
    };
    super::prefetch_ahead(at, ahead);
    let words = V::load_words(at);
    for j in 0..per {
        let levels = V::levels(words, (j * BITS) as u32, BITS as u32, SUBNORMAL);
        for (d, x) in dots.iter_mut().zip(xs) {
            let x = V::load(x.add((c * per + j) * lanes));
            d[j % CHAINS] = levels.mul_add(x, d[j % CHAINS]);
        }
    }
}

/// Adds each vector's chains of dot products times `scales` to its accumulators; converted
/// levels' dot products first times [`CONVERTED_DOWN`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn scaled<V: Vector, const M: usize, const SUBNORMAL: bool>(
    scales: V,
    dots: &[[V; CHAINS]; M],
    acc: &mut [[V; CHAINS]; M],
) {
    let down = V::splat(CONVERTED_DOWN);
    // Indexed loops over constant bounds: the iterator form kept the accumulators on the
    // stack.
    for i in 0..M {
        for c in 0..CHAINS {
            let dots = match SUBNORMAL {
                true => dots[i][c],
                false => dots[i][c] * down,
            };
            acc[i][c] = scales.mul_add(dots, acc[i][c]);
        }
    }
}
