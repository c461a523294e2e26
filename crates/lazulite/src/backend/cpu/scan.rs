//! Kernels of the cumulative ops: cumsum, cumprod, cummax, cummin and logcumsumexp along
//! one axis, forward or reversed, inclusive or exclusive.

use super::copy::contiguous;
use super::math::complex;
use super::parallel;
use super::strided::{Shared, PARALLEL_MIN};
use crate::backend::Tensor;
use crate::element::{dispatch, Complex, Element};
use crate::error::Result;
use half::{bf16, f16};

/// The associative operations a scan accumulates with.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ScanOp {
    Sum,
    Prod,
    Max,
    Min,
    LogAddExp,
}

impl ScanOp {
    /// The MLX function name.
    pub fn name(self) -> &'static str {
        match self {
            ScanOp::Sum => "cumsum",
            ScanOp::Prod => "cumprod",
            ScanOp::Max => "cummax",
            ScanOp::Min => "cummin",
            ScanOp::LogAddExp => "logcumsumexp",
        }
    }
}

/// Elements a scan can combine, with NumPy's semantics for their kind: integers wrap,
/// NaN propagates through max and min, half floats round after every step.
trait Accumulate: Element {
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn max(self, o: Self) -> Self;
    fn min(self, o: Self) -> Self;
    fn logaddexp(self, o: Self) -> Self;
    /// The identity of `max`: the first output of an exclusive cummax.
    fn lowest() -> Self;
    /// The identity of `min`.
    fn highest() -> Self;
}

macro_rules! int_accumulate {
    ($($t:ty),*) => {$(
        impl Accumulate for $t {
            fn add(self, o: $t) -> $t { self.wrapping_add(o) }
            fn mul(self, o: $t) -> $t { self.wrapping_mul(o) }
            fn max(self, o: $t) -> $t { Ord::max(self, o) }
            fn min(self, o: $t) -> $t { Ord::min(self, o) }
            fn logaddexp(self, o: $t) -> $t {
                (self as f64).logaddexp(o as f64) as $t
            }
            fn lowest() -> $t { <$t>::MIN }
            fn highest() -> $t { <$t>::MAX }
        }
    )*};
}
int_accumulate!(u8, u16, u32, u64, i8, i16, i32, i64);

macro_rules! float_accumulate {
    ($($t:ty),*) => {$(
        impl Accumulate for $t {
            fn add(self, o: $t) -> $t { self + o }
            fn mul(self, o: $t) -> $t { self * o }
            fn max(self, o: $t) -> $t {
                if self.is_nan() || o.is_nan() { <$t>::NAN } else { <$t>::max(self, o) }
            }
            fn min(self, o: $t) -> $t {
                if self.is_nan() || o.is_nan() { <$t>::NAN } else { <$t>::min(self, o) }
            }
            fn logaddexp(self, o: $t) -> $t {
                if self.is_nan() || o.is_nan() {
                    return <$t>::NAN;
                }
                let hi = <$t>::max(self, o);
                if hi.is_infinite() {
                    // -inf with -inf (no mass) or +inf with anything: the largest wins.
                    return hi;
                }
                hi + (-(self - o).abs()).exp().ln_1p()
            }
            fn lowest() -> $t { <$t>::NEG_INFINITY }
            fn highest() -> $t { <$t>::INFINITY }
        }
    )*};
}
float_accumulate!(f32, f64);

macro_rules! half_accumulate {
    ($($t:ty),*) => {$(
        impl Accumulate for $t {
            fn add(self, o: $t) -> $t { <$t>::from_f32(self.to_f32() + o.to_f32()) }
            fn mul(self, o: $t) -> $t { <$t>::from_f32(self.to_f32() * o.to_f32()) }
            fn max(self, o: $t) -> $t {
                <$t>::from_f32(Accumulate::max(self.to_f32(), o.to_f32()))
            }
            fn min(self, o: $t) -> $t {
                <$t>::from_f32(Accumulate::min(self.to_f32(), o.to_f32()))
            }
            fn logaddexp(self, o: $t) -> $t {
                <$t>::from_f32(self.to_f32().logaddexp(o.to_f32()))
            }
            fn lowest() -> $t { <$t>::NEG_INFINITY }
            fn highest() -> $t { <$t>::INFINITY }
        }
    )*};
}
half_accumulate!(f16, bf16);

/// Bool scans stay bool (cumsum casts to int32 before it gets here): `+` is or, `*` is and.
impl Accumulate for bool {
    fn add(self, o: bool) -> bool {
        self | o
    }
    fn mul(self, o: bool) -> bool {
        self & o
    }
    fn max(self, o: bool) -> bool {
        self | o
    }
    fn min(self, o: bool) -> bool {
        self & o
    }
    fn logaddexp(self, o: bool) -> bool {
        self | o
    }
    fn lowest() -> bool {
        false
    }
    fn highest() -> bool {
        true
    }
}

fn has_nan(z: Complex) -> bool {
    z.re.is_nan() || z.im.is_nan()
}

/// Complex max/min order lexicographically (real part, then imaginary part), as MLX;
/// a NaN in either part propagates, as NumPy's `maximum.accumulate`.
impl Accumulate for Complex {
    fn add(self, o: Complex) -> Complex {
        complex::add(self, o)
    }
    fn mul(self, o: Complex) -> Complex {
        complex::mul(self, o)
    }
    fn max(self, o: Complex) -> Complex {
        if has_nan(self) {
            self
        } else if has_nan(o) || (o.re, o.im) > (self.re, self.im) {
            o
        } else {
            self
        }
    }
    fn min(self, o: Complex) -> Complex {
        if has_nan(self) {
            self
        } else if has_nan(o) || (o.re, o.im) < (self.re, self.im) {
            o
        } else {
            self
        }
    }
    /// `log(exp(a) + exp(b))` as `hi + log(1 + exp(lo - hi))`, `hi` the operand with the
    /// larger real part, so that large real parts do not overflow.
    fn logaddexp(self, o: Complex) -> Complex {
        let (hi, lo) = if o.re > self.re { (o, self) } else { (self, o) };
        if hi.re.is_infinite() && (lo.re == hi.re || hi.re < 0.0) {
            return hi;
        }
        let one = Complex::new(1.0, 0.0);
        let tail = complex::log(complex::add(one, complex::exp(complex::sub(lo, hi))));
        complex::add(hi, tail)
    }
    fn lowest() -> Complex {
        Complex::new(f32::NEG_INFINITY, f32::NEG_INFINITY)
    }
    fn highest() -> Complex {
        Complex::new(f32::INFINITY, f32::INFINITY)
    }
}

/// Scans `x` along `axis` with `op`. The output has `x`'s shape and dtype and is
/// contiguous; `x`'s buffer is reused when it is donated. `reverse` scans from the end,
/// and an exclusive scan shifts the result by one, starting from `op`'s identity.
///
/// Each line along the axis is combined element after element, in NumPy's order, so
/// floating-point results equal NumPy's bit for bit; lines (and runs of columns, when
/// the axis is not the last) are spread over threads.
pub fn scan(op: ScanOp, x: Tensor, axis: usize, reverse: bool, inclusive: bool) -> Result<Tensor> {
    let lines = Lines {
        axis: x.shape[axis],
        inner: x.shape[axis + 1..].iter().product(),
        reverse,
        inclusive,
    };
    dispatch!(x.dtype, T => match op {
        // One instance per operation: a combine passed by pointer is a call per element.
        ScanOp::Sum => scan_with(x, lines, T::default(), <T as Accumulate>::add),
        ScanOp::Prod => scan_with(x, lines, T::from_f64(1.0), <T as Accumulate>::mul),
        ScanOp::Max => scan_with(x, lines, <T as Accumulate>::lowest(), <T as Accumulate>::max),
        ScanOp::Min => scan_with(x, lines, <T as Accumulate>::highest(), <T as Accumulate>::min),
        ScanOp::LogAddExp => scan_with(x, lines, T::from_f64(f64::NEG_INFINITY), <T as Accumulate>::logaddexp),
    })
}

/// The shape of a scan: lines of `axis` elements, `inner` apart, in blocks of
/// `axis * inner` elements.
#[derive(Copy, Clone)]
struct Lines {
    axis: usize,
    inner: usize,
    reverse: bool,
    inclusive: bool,
}

/// Elements per parallel task.
const TASK_ELEMENTS: usize = 1 << 15;

/// Fewest columns a task of a scan along a leading axis takes: a few cache lines of each
/// row it walks.
const MIN_TASK_COLUMNS: usize = 256;

fn scan_with<T: Accumulate>(
    x: Tensor,
    lines: Lines,
    identity: T,
    combine: impl Fn(T, T) -> T + Copy + Sync,
) -> Result<Tensor> {
    let x = contiguous(x)?;
    // A donated input is scanned in place (each element is read before it is written).
    let (src, mut out) = if x.is_donatable(x.dtype) {
        (None, x)
    } else {
        let out = Tensor::uninit(x.dtype, &x.shape)?;
        (Some(x), out)
    };
    let block = lines.axis * lines.inner;
    if block == 0 {
        return Ok(out);
    }
    let blocks = out.size() / block;
    let dst = Shared(out.data_ptr_mut::<T>());
    let src = Shared(match &src {
        Some(s) => s.slice::<T>().as_ptr() as *mut T::Storage,
        None => dst.get(),
    });
    // Tasks: runs of whole blocks, or runs of columns of the single block.
    let (blocks_per_task, columns_per_task) = if blocks > 1 || lines.inner == 1 {
        ((TASK_ELEMENTS / block).max(1), lines.inner)
    } else {
        let columns = (TASK_ELEMENTS / lines.axis).max(MIN_TASK_COLUMNS);
        (1, columns.min(lines.inner))
    };
    let column_tasks = lines.inner.div_ceil(columns_per_task);
    let tasks = blocks.div_ceil(blocks_per_task) * column_tasks;
    let task = |t: usize| {
        let (run, c) = (t / column_tasks, t % column_tasks);
        let columns = c * columns_per_task..((c + 1) * columns_per_task).min(lines.inner);
        for b in run * blocks_per_task..((run + 1) * blocks_per_task).min(blocks) {
            // SAFETY: block `b` lies inside both buffers (same shape), and tasks touch
            // disjoint blocks or columns.
            unsafe {
                scan_block(
                    src.get().add(b * block),
                    dst.get().add(b * block),
                    lines,
                    columns.clone(),
                    identity,
                    combine,
                )
            }
        }
    };
    if out.size() >= PARALLEL_MIN && tasks > 1 {
        parallel::for_each(tasks, task);
    } else {
        (0..tasks).for_each(task);
    }
    Ok(out)
}

/// Scans `columns` of one block from `src` into `dst`, which may be the same buffer.
///
/// # Safety
/// `src` and `dst` address `lines.axis * lines.inner` elements each.
#[inline(always)]
unsafe fn scan_block<T: Accumulate>(
    src: *const T::Storage,
    dst: *mut T::Storage,
    lines: Lines,
    columns: std::ops::Range<usize>,
    identity: T,
    combine: impl Fn(T, T) -> T,
) {
    let Lines {
        axis,
        inner,
        reverse,
        inclusive,
    } = lines;
    let row = |i: usize| if reverse { axis - 1 - i } else { i };
    if inner == 1 {
        // One line: the running value stays in a register.
        let mut carry = T::load(*src.add(row(0)));
        *dst.add(row(0)) = if inclusive { carry } else { identity }.store();
        for i in 1..axis {
            let at = row(i);
            let value = T::load(*src.add(at));
            *dst.add(at) = if inclusive {
                carry = combine(value, carry);
                carry
            } else {
                let before = carry;
                carry = combine(value, carry);
                before
            }
            .store();
        }
        return;
    }
    // Rows of the columns at once, which reads memory in order and vectorises.
    let first = row(0) * inner;
    let mut carry: Vec<T> = columns
        .clone()
        .map(|j| T::load(*src.add(first + j)))
        .collect();
    for (k, j) in columns.clone().enumerate() {
        *dst.add(first + j) = if inclusive { carry[k] } else { identity }.store();
    }
    for i in 1..axis {
        let at = row(i) * inner;
        for (c, j) in carry.iter_mut().zip(columns.clone()) {
            let value = T::load(*src.add(at + j));
            let before = *c;
            *c = combine(value, before);
            *dst.add(at + j) = if inclusive { *c } else { before }.store();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;

    fn run(
        op: ScanOp,
        data: &[f32],
        shape: &[usize],
        axis: usize,
        rev: bool,
        incl: bool,
    ) -> Vec<f32> {
        let x = Tensor::from_slice(data, shape).unwrap();
        let out = scan(op, x, axis, rev, incl).unwrap();
        (0..out.size()).map(|i| out.get::<f32>(i)).collect()
    }

    #[test]
    fn directions_and_exclusive() {
        let x = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(
            run(ScanOp::Sum, &x, &[4], 0, false, true),
            [1.0, 3.0, 6.0, 10.0]
        );
        assert_eq!(
            run(ScanOp::Sum, &x, &[4], 0, true, true),
            [10.0, 9.0, 7.0, 4.0]
        );
        assert_eq!(
            run(ScanOp::Sum, &x, &[4], 0, false, false),
            [0.0, 1.0, 3.0, 6.0]
        );
        assert_eq!(
            run(ScanOp::Sum, &x, &[4], 0, true, false),
            [9.0, 7.0, 4.0, 0.0]
        );
        assert_eq!(
            run(ScanOp::Prod, &x, &[2, 2], 0, false, true),
            [1.0, 2.0, 3.0, 8.0]
        );
        assert_eq!(
            run(ScanOp::Max, &x, &[2, 2], 1, true, false),
            [2.0, f32::NEG_INFINITY, 4.0, f32::NEG_INFINITY]
        );
    }

    #[test]
    fn single_element_and_empty_axes() {
        assert_eq!(
            run(ScanOp::Min, &[5.0], &[1], 0, false, false),
            [f32::INFINITY]
        );
        for shape in [[0, 3], [3, 0]] {
            for axis in 0..2 {
                let x = Tensor::uninit(DType::Float32, &shape).unwrap();
                let out = scan(ScanOp::Sum, x, axis, true, false).unwrap();
                assert_eq!(out.shape, shape);
            }
        }
    }
}
