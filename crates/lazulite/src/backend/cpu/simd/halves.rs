//! Dot products of a row of float16 or bfloat16 values with a few f32 vectors, the row
//! widened in registers: the decode step of a half-precision model, which must stream its
//! weights once at memory speed. Widening a row into a buffer and reading the buffer back
//! cost a third of the time of such a product.

use super::packed::MAX_VECTORS;
#[cfg(target_arch = "x86_64")]
use super::vector::Vector;

/// The 16-bit float formats a row may hold.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Half {
    BFloat16,
    Float16,
}

/// `out[i] = row . xs[i]` for 1 to [`MAX_VECTORS`] vectors at least as long as `row` (its
/// elements' bits, in the given format), accumulated in f32. Panics on lengths that do
/// not fit (an engine bug).
pub type HalfDotsFn = fn(format: Half, row: &[u16], xs: &[&[f32]], out: &mut [f32]);

/// The widening dot products of one instruction set.
#[derive(Copy, Clone)]
pub struct HalfDots {
    /// See [`HalfDotsFn`].
    pub dots: HalfDotsFn,
}

/// [`HalfDots::dots`] over the vector type `V`, for code compiled with its instruction set.
///
/// # Safety
/// The CPU must support `V`'s instruction set, and F16C on the AVX2 path.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn dots<V: Vector>(format: Half, row: &[u16], xs: &[&[f32]], out: &mut [f32]) {
    assert!(
        (1..=MAX_VECTORS).contains(&xs.len())
            && out.len() == xs.len()
            && xs.iter().all(|x| x.len() >= row.len()),
        "row and vectors do not fit"
    );
    macro_rules! with_vectors {
        ($bf16:literal) => {
            match xs.len() {
                1 => row_dots::<V, $bf16, 1>(row, xs, out),
                2 => row_dots::<V, $bf16, 2>(row, xs, out),
                3 => row_dots::<V, $bf16, 3>(row, xs, out),
                _ => row_dots::<V, $bf16, 4>(row, xs, out),
            }
        };
    }
    match format {
        Half::BFloat16 => with_vectors!(true),
        Half::Float16 => with_vectors!(false),
    }
}

/// Independent accumulator chains per vector (hide the multiply-add latency).
const CHAINS: usize = 2;

/// # Safety
/// As [`dots`], whose checks make every read below in bounds.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn row_dots<V: Vector, const BF16: bool, const M: usize>(
    row: &[u16],
    xs: &[&[f32]],
    out: &mut [f32],
) {
    let (n, lanes, w) = (row.len(), V::LANES, row.as_ptr());
    let xs: [*const f32; M] = std::array::from_fn(|i| xs[i].as_ptr());
    let mut acc = [[V::splat(0.0); CHAINS]; M];
    let mut i = 0;
    while i + CHAINS * lanes <= n {
        super::prefetch_ahead(w.add(i), super::Ahead::Near);
        for c in 0..CHAINS {
            let at = i + c * lanes;
            let v = widened::<V, BF16>(w.add(at));
            for (a, x) in acc.iter_mut().zip(&xs) {
                a[c] = v.mul_add(V::load(x.add(at)), a[c]);
            }
        }
        i += CHAINS * lanes;
    }
    let mut sums = acc.map(|a| a[0] + a[1]);
    while i + lanes <= n {
        let v = widened::<V, BF16>(w.add(i));
        for (s, x) in sums.iter_mut().zip(&xs) {
            *s = v.mul_add(V::load(x.add(i)), *s);
        }
        i += lanes;
    }
    for ((o, s), x) in out.iter_mut().zip(sums).zip(&xs) {
        let mut total = s.sum_lanes();
        for t in i..n {
            total += widened_one::<BF16>(*w.add(t)) * *x.add(t);
        }
        *o = total;
    }
}

// Functions, not closures: a closure does not inherit the target features of the
// function it is inlined into.

/// # Safety
/// `ptr` valid for reading `V::LANES` values; the CPU supports the loads (see [`dots`]).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn widened<V: Vector, const BF16: bool>(ptr: *const u16) -> V {
    if BF16 {
        V::load_bf16(ptr)
    } else {
        V::load_f16(ptr)
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn widened_one<const BF16: bool>(bits: u16) -> f32 {
    if BF16 {
        f32::from_bits(u32::from(bits) << 16)
    } else {
        half::f16::from_bits(bits).to_f32()
    }
}
