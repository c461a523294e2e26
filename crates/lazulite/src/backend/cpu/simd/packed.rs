//! Dot products of a row of levels packed at 2, 4 or 8 bits into u32 words with a few f32
//! vectors: the inner loop of a quantized language model's decode step, which must keep
//! up with memory while it unpacks.
//!
//! A word holds `32 / BITS` consecutive levels, so level `j` of `LANES` adjacent words
//! belongs to `LANES` elements `32 / BITS` apart. Rather than unpack words into consecutive
//! floats (a shuffle per element), each vector is laid out once ([`PackedDots::lay_out`]) so that
//! element `j` of word `w` of a chunk of `LANES` words sits at position
//! `chunk * LANES * (32 / BITS) + j * LANES + w`: then one shift, mask and convert of a
//! vector of words gives `LANES` levels that multiply `LANES` consecutive values. Where
//! the levels are masked in place (times `2^(j * BITS)`, [`Vector::LEVELS_IN_PLACE`]),
//! the layout also divides position `j` by that power of two, which is exact for values
//! of magnitude at least 2^-98 (smaller ones lose bits to gradual underflow). The levels
//! of a chunk are unpacked once for all the vectors.

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
    /// `out[r * xs.len() + i] = row r . xs[i]`, each level times its group's scale plus
    /// its group's bias, for 1 to [`MAX_VECTORS`] laid-out vectors at `bits` 2, 4 or 8.
    /// One call serves many rows: what does not depend on the row is set up once. Panics
    /// on lengths that do not fit the rows (an engine bug).
    pub dots: fn(bits: usize, rows: &PackedRows<'_>, xs: &[&LaidOut], out: &mut [f32]),
}

/// A vector laid out for [`PackedDots::dots`], with the sums of its groups' values (which
/// the groups' biases multiply).
pub struct LaidOut {
    values: Vec<f32>,
    group_sums: Vec<f32>,
}

impl PackedDots {
    /// `x` (whole chunks of `lanes` words of `32 / bits` values) in the chunk layout of
    /// the module documentation, with the sums of its groups of `group_size` values.
    pub fn lay_out(&self, x: &[f32], bits: usize, group_size: usize) -> LaidOut {
        let (lanes, per) = (self.lanes, 32 / bits);
        let chunk = lanes * per;
        // 2^-(j * bits) for the positions the kernel reads in place, 1 for the others.
        let factors: Vec<f32> = (0..per)
            .map(|j| match self.levels_in_place && j + 1 < per {
                true => f32::from_bits((127 - (j * bits) as u32) << 23),
                false => 1.0,
            })
            .collect();
        let mut values = vec![0.0; x.len()];
        for (src, dst) in x.chunks_exact(chunk).zip(values.chunks_exact_mut(chunk)) {
            for w in 0..lanes {
                for (j, factor) in factors.iter().enumerate() {
                    dst[j * lanes + w] = src[w * per + j] * factor;
                }
            }
        }
        let group_sums = x.chunks_exact(group_size).map(|g| g.iter().sum()).collect();
        LaidOut { values, group_sums }
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
            && out.len() == count * xs.len()
            && xs.iter().all(|x| {
                x.values.len() >= wpr * (32 / bits) && x.group_sums.len() == wpr / wpg
            }),
        "packed rows and vectors do not fit"
    );
    macro_rules! with_vectors {
        ($bits:literal) => {
            match xs.len() {
                1 => rows_dots::<V, $bits, 1>(rows, xs, out),
                2 => rows_dots::<V, $bits, 2>(rows, xs, out),
                3 => rows_dots::<V, $bits, 3>(rows, xs, out),
                _ => rows_dots::<V, $bits, 4>(rows, xs, out),
            }
        };
    }
    match bits {
        2 => with_vectors!(2),
        4 => with_vectors!(4),
        _ => with_vectors!(8),
    }
}

/// # Safety
/// As [`dots`], whose checks make every read below in bounds.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn rows_dots<V: Vector, const BITS: usize, const M: usize>(
    rows: &PackedRows<'_>,
    xs: &[&LaidOut],
    out: &mut [f32],
) {
    let lanes = V::LANES;
    let (wpr, wpg) = (rows.words_per_row, rows.words_per_group);
    let (chunks, groups_per_row) = (wpr / lanes, wpr / wpg);
    let sums: [&[f32]; M] = std::array::from_fn(|i| &xs[i].group_sums[..]);
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
                chunk::<V, BITS, M>(words, c, &xs, &mut dots);
                left -= 1;
                if left == 0 {
                    scaled(V::splat(*scales.add(g)), &dots, &mut acc);
                    (dots, left, g) = ([[zero; CHAINS]; M], chunks_per_group, g + 1);
                }
            }
        } else {
            let groups_per_chunk = lanes / wpg;
            for c in 0..chunks {
                let mut dots = [[zero; CHAINS]; M];
                chunk::<V, BITS, M>(words, c, &xs, &mut dots);
                let scales = V::load(scales.add(c * groups_per_chunk)).permute(lane_group);
                scaled(scales, &dots, &mut acc);
            }
        }
        let biases = &rows.biases[r * groups_per_row..][..groups_per_row];
        for ((o, a), sums) in out.iter_mut().zip(acc).zip(sums) {
            *o = (a[0] + a[1]).sum_lanes() + super::fold::dot::<V>(biases, sums);
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
unsafe fn chunk<V: Vector, const BITS: usize, const M: usize>(
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
        let levels = V::levels(words, (j * BITS) as u32, BITS as u32);
        for (d, x) in dots.iter_mut().zip(xs) {
            let x = V::load(x.add((c * per + j) * lanes));
            d[j % CHAINS] = levels.mul_add(x, d[j % CHAINS]);
        }
    }
}

/// Adds each vector's chains of dot products times `scales` to its accumulators.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn scaled<V: Vector, const M: usize>(
    scales: V,
    dots: &[[V; CHAINS]; M],
    acc: &mut [[V; CHAINS]; M],
) {
    // Indexed loops over constant bounds: the iterator form kept the accumulators on the
    // stack.
    for i in 0..M {
        for c in 0..CHAINS {
            acc[i][c] = scales.mul_add(dots[i][c], acc[i][c]);
        }
    }
}
