//! Kernels of the cumulative ops: cumsum, cumprod, cummax, cummin and logcumsumexp along
//! one axis, forward or reversed, inclusive or exclusive.

use super::elementwise::map1;
use super::math::complex;
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
pub fn scan(op: ScanOp, x: Tensor, axis: usize, reverse: bool, inclusive: bool) -> Result<Tensor> {
    dispatch!(x.dtype, T => scan_typed::<T>(op, x, axis, reverse, inclusive))
}

fn scan_typed<T: Accumulate>(
    op: ScanOp,
    x: Tensor,
    axis: usize,
    reverse: bool,
    inclusive: bool,
) -> Result<Tensor> {
    let (combine, identity): (fn(T, T) -> T, T) = match op {
        ScanOp::Sum => (T::add, T::default()),
        ScanOp::Prod => (T::mul, T::from_f64(1.0)),
        ScanOp::Max => (T::max, T::lowest()),
        ScanOp::Min => (T::min, T::highest()),
        ScanOp::LogAddExp => (T::logaddexp, T::from_f64(f64::NEG_INFINITY)),
    };
    let n = x.shape[axis];
    let inner: usize = x.shape[axis + 1..].iter().product();
    // Scan in place over a contiguous copy: rows along the axis are `inner` apart, and a
    // whole row is combined at once, which reads memory in order for any axis.
    let mut out = map1::<T, T>(x, |v| v)?;
    let data = out.slice_mut::<T>();
    if data.is_empty() {
        return Ok(out);
    }
    let line = n * inner;
    for block in data.chunks_exact_mut(line) {
        if reverse {
            for i in (0..n - 1).rev() {
                let (head, tail) = block.split_at_mut((i + 1) * inner);
                for (acc, v) in head[i * inner..].iter_mut().zip(&tail[..inner]) {
                    *acc = combine(T::load(*v), T::load(*acc)).store();
                }
            }
            if !inclusive {
                block.copy_within(inner.., 0);
                block[line - inner..].fill(identity.store());
            }
        } else {
            for i in 1..n {
                let (head, tail) = block.split_at_mut(i * inner);
                for (acc, v) in tail[..inner].iter_mut().zip(&head[(i - 1) * inner..]) {
                    *acc = combine(T::load(*v), T::load(*acc)).store();
                }
            }
            if !inclusive {
                block.copy_within(..line - inner, inner);
                block[..inner].fill(identity.store());
            }
        }
    }
    Ok(out)
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
