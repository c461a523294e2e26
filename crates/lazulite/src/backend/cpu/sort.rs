//! Kernels of the sorting ops: sort, argsort, partition, argpartition along one axis, and
//! binary search in a sorted sequence.
//!
//! All of them use one total order per dtype (MLX's): NaN is greater than everything and
//! equal to NaN, `-0.0` equals `0.0`, complex numbers compare by real part then
//! imaginary part, with any NaN part making the number a NaN.

use super::elementwise::map1;
use super::strided::for_each_row;
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::element::{dispatch, Complex, Element};
use crate::error::Result;
use half::{bf16, f16};
use std::cmp::Ordering;

/// Elements with the sorting ops' total order.
trait SortKey: Element {
    fn order(a: Self, b: Self) -> Ordering;

    /// Sorts `values` by [`SortKey::order`]; equal values may be reordered.
    fn sort_values(values: &mut [Self]) {
        values.sort_unstable_by(|a, b| Self::order(*a, *b));
    }
}

macro_rules! ord_key {
    ($($t:ty),*) => {$(
        impl SortKey for $t {
            fn order(a: $t, b: $t) -> Ordering {
                a.cmp(&b)
            }
        }
    )*};
}
ord_key!(bool, u8, u16, u32, u64, i8, i16, i32, i64);

fn float_order(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b)
        .unwrap_or_else(|| a.is_nan().cmp(&b.is_nan()))
}

macro_rules! float_key {
    ($($t:ty),*) => {$(
        impl SortKey for $t {
            fn order(a: $t, b: $t) -> Ordering {
                // Every value of these types is exact in f64.
                float_order(a.to_f64(), b.to_f64())
            }
        }
    )*};
}
float_key!(f16, bf16);

/// Sorts floats as integer keys that order like the floats (pdqsort on integers is
/// several times faster than on float comparisons): flipping every bit of a negative
/// float and the sign bit of a positive one gives an unsigned integer in the float's
/// order, and every NaN maps to the largest key so NaNs go last. The mapping is undone
/// afterwards; only the payloads of NaNs are not kept (they all become the same NaN).
/// `-0.0` and `0.0` keep distinct keys, which is a valid order for values that compare
/// equal.
macro_rules! bits_key {
    ($($t:ty => $u:ty),*) => {$(
        impl SortKey for $t {
            fn order(a: $t, b: $t) -> Ordering {
                float_order(a as f64, b as f64)
            }

            fn sort_values(values: &mut [$t]) {
                const SIGN: $u = 1 << (<$u>::BITS - 1);
                let to_key = |v: $t| -> $u {
                    let bits = v.to_bits();
                    if v.is_nan() {
                        <$u>::MAX
                    } else if bits & SIGN != 0 {
                        !bits
                    } else {
                        bits | SIGN
                    }
                };
                let from_key = |k: $u| -> $t {
                    if k == <$u>::MAX {
                        <$t>::NAN
                    } else if k & SIGN != 0 {
                        <$t>::from_bits(k & !SIGN)
                    } else {
                        <$t>::from_bits(!k)
                    }
                };
                let mut keys: Vec<$u> = values.iter().map(|&v| to_key(v)).collect();
                keys.sort_unstable();
                for (v, &k) in values.iter_mut().zip(&keys) {
                    *v = from_key(k);
                }
            }
        }
    )*};
}
bits_key!(f32 => u32, f64 => u64);

impl SortKey for Complex {
    fn order(a: Complex, b: Complex) -> Ordering {
        let nan = |z: Complex| z.re.is_nan() || z.im.is_nan();
        match (nan(a), nan(b)) {
            (false, false) => {
                float_order(a.re as f64, b.re as f64).then(float_order(a.im as f64, b.im as f64))
            }
            (na, nb) => na.cmp(&nb),
        }
    }
}

/// What to do with each line along the axis.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SortKind {
    /// Sorted values (stable).
    Sort,
    /// Indices that sort the line (stable: equal elements keep their order), as uint32.
    ArgSort,
    /// Values rearranged so that position `kth` holds the element a sort would put there,
    /// with no greater element before it and no smaller one after it.
    Partition(usize),
    /// The indices of that arrangement, as uint32.
    ArgPartition(usize),
}

/// Applies `kind` to every line of `x` along `axis`. The output is contiguous with `x`'s
/// shape; its dtype is `x`'s for values and uint32 for indices. Lines must be shorter
/// than 2^32 elements (checked when recorded).
pub fn sort(kind: SortKind, x: &Tensor, axis: usize) -> Result<Tensor> {
    dispatch!(x.dtype, T => sort_typed::<T>(kind, x, axis))
}

#[inline(always)]
unsafe fn read<T: Element>(base: *const u8, offset: isize) -> T {
    T::load(std::ptr::read_unaligned(
        (base as *const T::Storage).offset(offset),
    ))
}

fn sort_typed<T: SortKey>(kind: SortKind, x: &Tensor, axis: usize) -> Result<Tensor> {
    let returns_indices = matches!(kind, SortKind::ArgSort | SortKind::ArgPartition(_));
    let out_dtype = if returns_indices {
        DType::UInt32
    } else {
        x.dtype
    };
    let mut out = Tensor::uninit(out_dtype, &x.shape)?;
    let n = x.shape[axis];
    if out.size() == 0 {
        return Ok(out);
    }
    let step = x.strides[axis];
    let inner: usize = x.shape[axis + 1..].iter().product();
    // Visit every line: iterate over all axes but `axis`, in the input and the output.
    let mut rest_shape = x.shape.clone();
    rest_shape.remove(axis);
    let mut rest_strides = x.strides.clone();
    rest_strides.remove(axis);
    let mut out_strides = out.strides.clone();
    out_strides.remove(axis);
    let src = x.buf.as_ptr();
    let by_value = |a: &(T, u32), b: &(T, u32)| T::order(a.0, b.0);
    let by_value_then_index = |a: &(T, u32), b: &(T, u32)| by_value(a, b).then(a.1.cmp(&b.1));
    let mut line: Vec<(T, u32)> = Vec::with_capacity(n);
    let mut values: Vec<T> = Vec::new();
    let dst = if returns_indices {
        out.data_ptr_mut::<u32>() as *mut u8
    } else {
        out.data_ptr_mut::<T>() as *mut u8
    };
    for_each_row(
        &rest_shape,
        [&rest_strides, &out_strides],
        [x.offset as isize, 0],
        |[start, out_start], len, [in_step, out_step]| {
            for r in 0..len as isize {
                let first = start + r * in_step;
                let base = (out_start + r * out_step) as usize;
                if kind == SortKind::Sort {
                    // Values alone: no positions to carry, and values that compare equal
                    // differ at most in the sign of zero, so an unstable sort will do.
                    values.clear();
                    // SAFETY: the layout addresses elements inside x's buffer.
                    values.extend(
                        (0..n).map(|i| unsafe { read::<T>(src, first + i as isize * step) }),
                    );
                    T::sort_values(&mut values);
                    for (i, &v) in values.iter().enumerate() {
                        // SAFETY: a position of the contiguous output of x's dtype.
                        unsafe {
                            (dst as *mut T::Storage)
                                .add(base + i * inner)
                                .write(v.store())
                        };
                    }
                    continue;
                }
                line.clear();
                // SAFETY: the layout addresses elements inside x's buffer.
                line.extend((0..n).map(|i| {
                    (
                        unsafe { read::<T>(src, first + i as isize * step) },
                        i as u32,
                    )
                }));
                match kind {
                    SortKind::Sort | SortKind::ArgSort => line.sort_by(by_value),
                    // Ties broken by index make the result depend only on the input.
                    SortKind::Partition(kth) | SortKind::ArgPartition(kth) => {
                        line.select_nth_unstable_by(kth, by_value_then_index);
                    }
                }
                for (i, &(v, index)) in line.iter().enumerate() {
                    let pos = base + i * inner;
                    // SAFETY: `pos` is a position of the contiguous output of `out_dtype`.
                    unsafe {
                        if returns_indices {
                            (dst as *mut u32).add(pos).write(index);
                        } else {
                            (dst as *mut T::Storage).add(pos).write(v.store());
                        }
                    }
                }
            }
        },
    );
    Ok(out)
}

/// For each element of `values`, the number of elements of the sorted 1-D `sequence`
/// that are smaller (`right == false`) or not greater (`right == true`), as uint32.
/// Both tensors have the same dtype.
pub fn searchsorted(sequence: &Tensor, values: Tensor, right: bool) -> Result<Tensor> {
    dispatch!(sequence.dtype, T => searchsorted_typed::<T>(sequence, values, right))
}

fn searchsorted_typed<T: SortKey>(
    sequence: &Tensor,
    values: Tensor,
    right: bool,
) -> Result<Tensor> {
    let n = sequence.shape[0];
    let sorted: Vec<T> = (0..n).map(|i| sequence.get::<T>(i)).collect();
    map1::<T, u32>(values, |v| {
        let before = |s: &T| match T::order(*s, v) {
            Ordering::Less => true,
            Ordering::Equal => right,
            Ordering::Greater => false,
        };
        sorted.partition_point(before) as u32
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_last_and_stable() {
        let nan = f32::NAN;
        let x = Tensor::from_slice(&[3.0f32, nan, 1.0, -0.0, nan, 0.0], &[6]).unwrap();
        let i = sort(SortKind::ArgSort, &x, 0).unwrap();
        assert_eq!(i.slice::<u32>(), [3, 5, 2, 0, 1, 4]);
        let p = sort(SortKind::Partition(1), &x, 0).unwrap();
        assert_eq!(p.slice::<f32>()[1], 0.0);
    }

    #[test]
    fn lines_along_a_strided_axis() {
        // Column-major 2x3: rows are [5, 1, 3] and [0, 4, 2].
        let mut x = Tensor::from_slice(&[5i32, 0, 1, 4, 3, 2], &[2, 3]).unwrap();
        x.strides = vec![1, 2];
        let s = sort(SortKind::Sort, &x, 1).unwrap();
        assert_eq!(s.slice::<i32>(), [1, 3, 5, 0, 2, 4]);
        let a = sort(SortKind::ArgSort, &x, 0).unwrap();
        assert_eq!(a.slice::<u32>(), [1, 0, 1, 0, 1, 0]);
    }

    #[test]
    fn binary_search_sides() {
        let seq = Tensor::from_slice(&[1i32, 2, 2, 3], &[4]).unwrap();
        let v = Tensor::from_slice(&[2i32, 0, 5], &[3]).unwrap();
        let left = searchsorted(&seq, v.clone(), false).unwrap();
        assert_eq!(left.slice::<u32>(), [1, 0, 4]);
        let right = searchsorted(&seq, v, true).unwrap();
        assert_eq!(right.slice::<u32>(), [3, 0, 4]);
    }
}
