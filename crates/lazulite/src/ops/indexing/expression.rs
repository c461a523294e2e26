//! NumPy-style index expressions: the [`Index`] entries (and the [`idx!`](crate::idx!)
//! macro), [`index`] to read, [`index_put`] and [`at`] to write.

use crate::array::Array;
use crate::backend::cpu::indexing::ScatterMode;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::binary::{add, maximum, minimum, multiply, subtract};
use crate::ops::cast::astype;
use crate::ops::creation::arange;
use crate::ops::indexing::data_dependent::nonzero;
use crate::ops::indexing::gather_scatter::{as_i64, broadcast_indices, gather, scatter};
use crate::ops::indexing::take::take_along_axis;
use crate::ops::operand::{to_arrays, Operand};
use crate::ops::scan::cumsum;
use crate::ops::ternary::where_;
use crate::ops::unary::{negative, reciprocal};
use crate::ops::view::{broadcast_to, reshape, slice, slice_update, transpose};
use crate::shape::checked_size;

/// One entry of a NumPy-style index expression (see [`index`]).
///
/// Build entries with `From` (`3`, `-1`, `..`, `1..5`, `..=4`, an integer [`Array`], a
/// bool [`Array`] as a mask), [`Index::slice`] for steps, or all at once with [`idx!`](crate::idx!).
///
/// ```
/// use lazulite::{Array, Index};
/// let e: Vec<Index> = vec![1.into(), (..).into(), Index::slice(None, None, Some(-1)), Index::NewAxis];
/// assert_eq!(e.len(), 4);
/// ```
#[derive(Clone, Debug)]
pub enum Index {
    /// One position; removes the axis. Negative counts from the end.
    Int(i64),
    /// `start:stop:step` with Python's defaults and clamping; keeps the axis (a view).
    Slice {
        /// First position (default: the start, or the end for a negative step).
        start: Option<i64>,
        /// Position to stop before (default: past the last position).
        stop: Option<i64>,
        /// Stride between positions (default 1; negative walks backwards).
        step: Option<i64>,
    },
    /// A new axis of length 1 (`None` / `np.newaxis`).
    NewAxis,
    /// As many full slices as the other entries leave (`...`).
    Ellipsis,
    /// An integer array: advanced indexing (a copy, by gather).
    Array(Array),
    /// A bool array over as many axes as it has dimensions: selects the true positions.
    Mask(Array),
}

impl Index {
    /// `start:stop:step`, each optional as in Python.
    ///
    /// ```
    /// use lazulite::{arange, index, DType, Index};
    /// let a = arange(0.0, 10.0, 1.0, DType::Int32).unwrap();
    /// let r = index(&a, &[Index::slice(Some(2), Some(8), Some(2))]).unwrap();
    /// assert_eq!(r.to_vec::<i32>().unwrap(), vec![2, 4, 6]);
    /// ```
    pub fn slice(start: Option<i64>, stop: Option<i64>, step: Option<i64>) -> Index {
        Index::Slice { start, stop, step }
    }

    /// This entry (a range or full slice) with a step; for [`idx!`](crate::idx!)'s `range;step`.
    ///
    /// ```
    /// use lazulite::Index;
    /// assert!(matches!(Index::from(1..).step(2), Index::Slice { step: Some(2), .. }));
    /// ```
    pub fn step(self, step: i64) -> Index {
        match self {
            Index::Slice { start, stop, .. } => Index::Slice {
                start,
                stop,
                step: Some(step),
            },
            other => other,
        }
    }
}

impl From<i64> for Index {
    fn from(i: i64) -> Index {
        Index::Int(i)
    }
}
impl From<std::ops::RangeFull> for Index {
    fn from(_: std::ops::RangeFull) -> Index {
        Index::slice(None, None, None)
    }
}
impl From<std::ops::Range<i64>> for Index {
    fn from(r: std::ops::Range<i64>) -> Index {
        Index::slice(Some(r.start), Some(r.end), None)
    }
}
impl From<std::ops::RangeFrom<i64>> for Index {
    fn from(r: std::ops::RangeFrom<i64>) -> Index {
        Index::slice(Some(r.start), None, None)
    }
}
impl From<std::ops::RangeTo<i64>> for Index {
    fn from(r: std::ops::RangeTo<i64>) -> Index {
        Index::slice(None, Some(r.end), None)
    }
}
impl From<std::ops::RangeInclusive<i64>> for Index {
    fn from(r: std::ops::RangeInclusive<i64>) -> Index {
        let end = *r.end();
        Index::slice(Some(*r.start()), (end != -1).then_some(end + 1), None)
    }
}
impl From<std::ops::RangeToInclusive<i64>> for Index {
    fn from(r: std::ops::RangeToInclusive<i64>) -> Index {
        Index::slice(None, (r.end != -1).then_some(r.end + 1), None)
    }
}
/// A bool array becomes a mask, any other an integer-array index.
impl From<Array> for Index {
    fn from(a: Array) -> Index {
        if a.dtype() == DType::Bool {
            Index::Mask(a)
        } else {
            Index::Array(a)
        }
    }
}
impl From<&Array> for Index {
    fn from(a: &Array) -> Index {
        Index::from(a.clone())
    }
}

/// Builds an array of [`Index`] (pass it as `&idx![...]`) that reads like a NumPy index: entries separated by commas,
/// `...` for the ellipsis, `range;step` for a stepped slice (`..;-1` reverses), anything
/// else converted with `Index::from` (integers, ranges, arrays, `Index::NewAxis`).
///
/// ```
/// use lazulite::{arange, idx, index, reshape, DType, Index};
/// let a = reshape(&arange(0.0, 24.0, 1.0, DType::Int32).unwrap(), &[2, 3, 4]).unwrap();
/// // NumPy: a[1, ::-1, 1:4:2]
/// let r = index(&a, &idx![1, ..;-1, 1..4;2]).unwrap();
/// assert_eq!(r.to_vec::<i32>().unwrap(), vec![21, 23, 17, 19, 13, 15]);
/// // NumPy: a[..., None, 0]
/// let r = index(&a, &idx![..., Index::NewAxis, 0]).unwrap();
/// assert_eq!(r.shape(), &[2, 3, 1]);
/// ```
#[macro_export]
macro_rules! idx {
    (@acc [$($out:expr),*]) => { [$($out),*] };
    (@acc [$($out:expr),*] ... $(, $($rest:tt)*)?) => {
        $crate::idx!(@acc [$($out,)* $crate::Index::Ellipsis] $($($rest)*)?)
    };
    (@acc [$($out:expr),*] $e:expr ; $step:expr $(, $($rest:tt)*)?) => {
        $crate::idx!(@acc [$($out,)* $crate::Index::from($e).step($step)] $($($rest)*)?)
    };
    (@acc [$($out:expr),*] $e:expr $(, $($rest:tt)*)?) => {
        $crate::idx!(@acc [$($out,)* $crate::Index::from($e)] $($($rest)*)?)
    };
    ($($all:tt)*) => { $crate::idx!(@acc [] $($all)*) };
}

/// An index entry with the array's axes resolved.
enum Entry {
    /// A position, already wrapped and checked.
    Int(usize),
    /// First index, length and step along the axis, and the start and stop given (what
    /// MLX records).
    Slice(usize, usize, i64, [i64; 2]),
    NewAxis,
    Array(Array),
}

impl Entry {
    fn consumes_axis(&self) -> bool {
        !matches!(self, Entry::NewAxis)
    }
}

/// The entries of an index expression for an array, and whether its advanced entries
/// (arrays, masks, and integers among them) are separated by an ellipsis that expands
/// to no axis: NumPy then counts them as not adjacent, though no entry lies between.
struct Resolved {
    entries: Vec<Entry>,
    split_by_ellipsis: bool,
}

/// Whether an ellipsis expanding to no axis sits between advanced entries of `indices`.
fn empty_ellipsis_splits(indices: &[Index], ellipsis_len: usize) -> bool {
    let arrays = indices
        .iter()
        .any(|i| matches!(i, Index::Array(_) | Index::Mask(_)));
    let advanced = |i: &Index| {
        matches!(i, Index::Array(_) | Index::Mask(_)) || (arrays && matches!(i, Index::Int(_)))
    };
    let Some(e) = indices.iter().position(|i| matches!(i, Index::Ellipsis)) else {
        return false;
    };
    ellipsis_len == 0 && indices[..e].iter().any(advanced) && indices[e..].iter().any(advanced)
}

/// The entries of `indices` for `a`: the ellipsis (or the missing tail) expanded into
/// full slices, masks turned into integer arrays (evaluating them), integers checked.
fn resolve(op: &str, a: &Array, indices: &[Index]) -> Result<Resolved> {
    let consumed: usize = indices
        .iter()
        .map(|i| match i {
            Index::NewAxis | Index::Ellipsis => 0,
            Index::Mask(m) => m.ndim(),
            _ => 1,
        })
        .sum();
    let ndim = a.ndim();
    if consumed > ndim {
        return Err(Error::index(format!(
            "[{op}] Too many indices for array with {ndim} dimensions."
        )));
    }
    if indices
        .iter()
        .filter(|i| matches!(i, Index::Ellipsis))
        .count()
        > 1
    {
        return Err(Error::index(format!(
            "[{op}] An index can only have a single ellipsis (...)."
        )));
    }
    let full = |n: usize| Entry::Slice(0, n, 1, [0, n as i64]);
    let mut out = Vec::with_capacity(ndim + indices.len());
    let mut axis = 0;
    for entry in indices {
        match entry {
            Index::Int(i) => {
                let n = a.shape()[axis] as i64;
                if *i < -n || *i >= n {
                    return Err(Error::index(format!(
                        "[{op}] Index {i} is out of bounds for axis {axis} with size {n}."
                    )));
                }
                out.push(Entry::Int(if *i < 0 { i + n } else { *i } as usize));
                axis += 1;
            }
            Index::Slice { start, stop, step } => {
                let n = a.shape()[axis];
                let step = step.unwrap_or(1);
                if step == 0 {
                    return Err(Error::value(format!("[{op}] Slice step cannot be zero.")));
                }
                let (start, stop) = slice_ends(n, *start, *stop, step);
                let (first, len) = crate::ops::view::slice_bounds(n, start, stop, step)?;
                out.push(Entry::Slice(first, len, step, [start, stop]));
                axis += 1;
            }
            Index::NewAxis => out.push(Entry::NewAxis),
            Index::Ellipsis => {
                for _ in 0..ndim - consumed {
                    out.push(full(a.shape()[axis]));
                    axis += 1;
                }
            }
            Index::Array(i) => {
                if !i.dtype().is_integer() {
                    return Err(Error::value(format!(
                        "[{op}] Got indices with invalid dtype {}. Indices must be integral.",
                        i.dtype()
                    )));
                }
                out.push(Entry::Array(i.clone()));
                axis += 1;
            }
            Index::Mask(m) => {
                if m.dtype() != DType::Bool {
                    return Err(Error::value(format!(
                        "[{op}] A mask must be a bool array, not {}.",
                        m.dtype()
                    )));
                }
                if m.ndim() == 0 {
                    return Err(Error::value(format!(
                        "[{op}] A 0-d boolean index is not supported; use Index::NewAxis."
                    )));
                }
                for (k, &d) in m.shape().iter().enumerate() {
                    let n = a.shape()[axis + k];
                    if d != n {
                        return Err(Error::index(format!(
                            "[{op}] Boolean index did not match indexed array along axis {}; \
                             size of axis is {n} but size of corresponding boolean axis is {d}.",
                            axis + k
                        )));
                    }
                }
                out.extend(nonzero(m)?.into_iter().map(Entry::Array));
                axis += m.ndim();
            }
        }
    }
    while axis < ndim {
        out.push(full(a.shape()[axis]));
        axis += 1;
    }
    // With array indices present, integers are advanced indices too (NumPy), which
    // matters for where the broadcast dimensions go.
    if out.iter().any(|e| matches!(e, Entry::Array(_))) {
        for e in &mut out {
            if let Entry::Int(i) = e {
                *e = Entry::Array(Array::scalar(*i as i64));
            }
        }
    }
    Ok(Resolved {
        entries: out,
        split_by_ellipsis: empty_ellipsis_splits(indices, ndim - consumed),
    })
}

/// The start and stop of a slice with `step` over an axis of `n` elements, Python's
/// defaults written as MLX writes them (`n - 1` and `-n - 1` backwards).
fn slice_ends(n: usize, start: Option<i64>, stop: Option<i64>, step: i64) -> (i64, i64) {
    let (n, forward) = (n as i64, step > 0);
    (
        start.unwrap_or(if forward { 0 } else { n - 1 }),
        stop.unwrap_or(if forward { n } else { -n - 1 }),
    )
}

/// The basic part of an index as a view of `a`: slices applied, integer axes removed,
/// new axes inserted; array-indexed axes kept whole. Also returns, per array entry, its
/// axis in the view.
fn basic_view(a: &Array, entries: &[Entry]) -> Result<(Array, Vec<usize>)> {
    let (mut start, mut stop, mut step) = (vec![], vec![], vec![]);
    let mut shape = vec![];
    let mut array_axes = vec![];
    for (e, n) in entries.iter().filter(|e| e.consumes_axis()).zip(a.shape()) {
        let ([b, end], s) = match e {
            Entry::Int(i) => ([*i as i64, *i as i64 + 1], 1),
            Entry::Slice(_, _, s, given) => (*given, *s),
            _ => ([0, *n as i64], 1),
        };
        start.push(b);
        stop.push(end);
        step.push(s);
    }
    let mut axis = 0;
    for e in entries {
        match e {
            Entry::Int(_) => {}
            Entry::Slice(_, len, ..) => shape.push(*len as i64),
            Entry::NewAxis => shape.push(1),
            Entry::Array(_) => {
                array_axes.push(shape.len());
                shape.push(a.shape()[axis] as i64);
            }
        }
        axis += e.consumes_axis() as usize;
    }
    let whole = entries
        .iter()
        .filter(|e| e.consumes_axis())
        .zip(a.shape())
        .all(|(e, &n)| matches!(e, Entry::Slice(0, len, 1, _) if *len == n));
    if whole && crate::ops::trace::in_shapeless_trace() {
        // Only new axes: recorded as expand_dims, so that a shapeless replay keeps the
        // other axes' new sizes (as MLX does).
        let new_axes: Vec<usize> = entries
            .iter()
            .enumerate()
            .filter(|(_, e)| matches!(e, Entry::NewAxis))
            .map(|(i, _)| i)
            .collect();
        let dims: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
        let view = crate::ops::view::reshape_by(
            a,
            &dims,
            crate::ops::view::ReshapeRule::ExpandDims(new_axes),
        )?;
        return Ok((view, array_axes));
    }
    // Whole axes need no slice: `a[None]` and `a[:, None]` are one reshape.
    let sliced = match whole {
        true => a.clone(),
        false => slice(a, &start, &stop, &step)?,
    };
    Ok((reshape(&sliced, &shape)?, array_axes))
}

/// Where the broadcast index dimensions go: in place of the indexed axes when those are
/// adjacent, else first (NumPy's rule).
fn adjacent(array_axes: &[usize]) -> bool {
    array_axes.windows(2).all(|w| w[1] == w[0] + 1)
}

/// `a` indexed by a NumPy-style index expression (`a[i, j:k, None, ..., idx, mask]`).
///
/// Integers, slices, new axes and the ellipsis ("basic" indexing) give a view of `a`
/// without copying. Integer arrays broadcast together; their dimensions replace the
/// indexed axes when the arrays are adjacent in the expression, otherwise they come
/// first (NumPy's rule); integers count as arrays when any array is present. Negative
/// indices count from the end. A bool mask selects its true positions (C order) over as
/// many axes as it has dimensions; it is evaluated here since the result's shape depends
/// on it.
///
/// Errors: an integer out of range or too many indices is an `IndexError` now; an
/// out-of-range value in an index array is an `IndexError` from evaluation.
///
/// ```
/// use lazulite::{arange, idx, index, reshape, Array, DType, Index};
/// let arr = arange(0.0, 10.0, 1.0, DType::Int32).unwrap();
/// assert_eq!(index(&arr, &idx![3]).unwrap().item::<i32>().unwrap(), 3);
/// assert_eq!(index(&arr, &idx![-2]).unwrap().item::<i32>().unwrap(), 8);
/// let picks = Array::from_slice(&[5i32, 7], &[2]).unwrap();
/// assert_eq!(index(&arr, &idx![&picks]).unwrap().to_vec::<i32>().unwrap(), vec![5, 7]);
/// let cube = reshape(&arr.index(&idx![..8]).unwrap(), &[2, 2, 2]).unwrap();
/// assert_eq!(cube.index(&idx![.., .., 0]).unwrap().to_vec::<i32>().unwrap(), vec![0, 2, 4, 6]);
/// assert_eq!(cube.index(&idx![Index::NewAxis]).unwrap().shape(), &[1, 2, 2, 2]);
/// assert!(index(&arr, &idx![10]).is_err());
/// ```
pub fn index(a: &Array, indices: &[Index]) -> Result<Array> {
    let Resolved {
        entries,
        split_by_ellipsis,
    } = resolve("index", a, indices)?;
    let (view, array_axes) = basic_view(a, &entries)?;
    let arrays: Vec<Array> = entries
        .into_iter()
        .filter_map(|e| match e {
            Entry::Array(i) => Some(i),
            _ => None,
        })
        .collect();
    if arrays.is_empty() {
        return Ok(view);
    }
    let out = gather(&view, &arrays, &array_axes)?;
    let first = array_axes[0];
    if !adjacent(&array_axes) || split_by_ellipsis || first == 0 {
        return Ok(out);
    }
    // Move the broadcast dimensions (leading in the gather) to where the arrays were.
    let batch = out.ndim() + array_axes.len() - view.ndim();
    let perm: Vec<i32> = (batch..batch + first)
        .chain(0..batch)
        .chain(batch + first..out.ndim())
        .map(|d| d as i32)
        .collect();
    transpose(&out, &perm)
}

/// For each axis of `a` indexed by `entries` (advanced), its coordinate at every position
/// of the index result, broadcast to the result's shape, which is also returned.
fn coordinates(
    a: &Array,
    entries: &[Entry],
    split_by_ellipsis: bool,
) -> Result<(Vec<Array>, Vec<usize>)> {
    let arrays: Vec<&Array> = entries
        .iter()
        .filter_map(|e| match e {
            Entry::Array(i) => Some(i),
            _ => None,
        })
        .collect();
    let owned: Vec<Array> = arrays.iter().map(|&a| a.clone()).collect();
    let (_, batch) = broadcast_indices("index_put", &owned)?;
    let array_pos: Vec<usize> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e, Entry::Array(_)))
        .map(|(i, _)| i)
        .collect();
    let together = adjacent(&array_pos) && !split_by_ellipsis;
    // Result layout: per entry, the result dimension of a slice/new axis; the batch
    // dimensions start at `batch_at`.
    let mut result: Vec<usize> = vec![];
    let mut batch_at = if together { None } else { Some(0) };
    if !together {
        result.extend(&batch);
    }
    let mut dim_of = vec![usize::MAX; entries.len()];
    for (k, e) in entries.iter().enumerate() {
        match e {
            Entry::Slice(_, len, ..) => {
                dim_of[k] = result.len();
                result.push(*len);
            }
            Entry::NewAxis => {
                dim_of[k] = result.len();
                result.push(1);
            }
            Entry::Array(_) if batch_at.is_none() => {
                batch_at = Some(result.len());
                result.extend(&batch);
            }
            _ => {}
        }
    }
    let batch_at = batch_at.unwrap_or(0);
    checked_size(&result)?;
    let rank = result.len();
    let mut coords = vec![];
    for (k, e) in entries.iter().enumerate() {
        let c = match e {
            Entry::Slice(first, len, step, _) => {
                let first = *first as f64;
                let r = arange(
                    first,
                    first + (*len as f64) * (*step as f64),
                    *step as f64,
                    DType::Int64,
                )?;
                let mut shape = vec![1i64; rank];
                shape[dim_of[k]] = *len as i64;
                reshape(&r, &shape)?
            }
            Entry::Array(i) => {
                let i = broadcast_to(i, &batch)?;
                let mut shape = vec![1i64; rank];
                for (j, &d) in batch.iter().enumerate() {
                    shape[batch_at + j] = d as i64;
                }
                reshape(&i, &shape)?
            }
            _ => continue,
        };
        coords.push(broadcast_to(&c, &result)?);
    }
    debug_assert_eq!(coords.len(), a.ndim());
    Ok((coords, result))
}

/// `a` with its positions where the full-shape `mask` is true taking the values of
/// `values` in order, as lazy ops: the form a mask takes under `vmap` and `compile`, where
/// it has no value to count. With `rows > 1` (MLX's `MaskedScatter`), `a`, `mask` and
/// `values` are split into that many rows along their first axis and each row of `a` takes
/// its own row of values. Too few values is an index error when evaluated.
pub(crate) fn masked_scatter(
    a: &Array,
    mask: &Array,
    values: &Array,
    rows: usize,
) -> Result<Array> {
    let rows = rows as i64;
    let flat = reshape(mask, &[rows, -1])?;
    let ordinal = subtract(
        &cumsum(&flat, Some(1), false, true, Some(DType::Int32))?,
        Array::scalar(1i32),
    )?;
    // False positions read the row's first value (always there), then are masked out.
    let ordinal = where_(&flat, &ordinal, Array::scalar(0i32))?;
    let flat_values = reshape(values, &[rows, -1])?;
    let taken = take_along_axis(&flat_values, &ordinal, Some(1))?;
    where_(mask, &reshape(&taken, &as_i64(a.shape()))?, a)
}

/// The shared path of [`index_put`] and the [`At`] updates: combine the elements of `a`
/// at `indices` with `value` by `mode`.
fn update(a: &Array, indices: &[Index], value: Operand, mode: ScatterMode) -> Result<Array> {
    let op = if mode == ScatterMode::Assign {
        "index_put"
    } else {
        mode.name()
    };
    let value = match value {
        Operand::Array(v) => astype(&v, a.dtype())?,
        scalar => to_arrays(op, &[Operand::Array(a.clone()), scalar])?.0[1].astype(a.dtype())?,
    };
    // A mask alone: lazy forms that need no evaluation of the mask where they exist.
    if let [Index::Mask(m)] = indices {
        // A 0-d mask selects all of `a` or nothing.
        if m.ndim() == 0 && m.dtype() == DType::Bool {
            let new = combine(a, &value_for(&value, a.shape())?, mode)?;
            return where_(m, &new, a);
        }
        // A full-shape mask with one value: a select.
        if m.shape() == a.shape() && value.size() == 1 && m.dtype() == DType::Bool {
            let value = reshape(&value, &[])?;
            let new = combine(a, &value, mode)?;
            return where_(m, &new, a);
        }
        if m.shape() == a.shape() && m.depends_on_stand_in() && mode == ScatterMode::Assign {
            return masked_scatter(a, m, &value, 1);
        }
    }
    let Resolved {
        entries,
        split_by_ellipsis,
    } = resolve(op, a, indices)?;
    if !entries.iter().any(|e| matches!(e, Entry::Array(_))) {
        let (view, _) = basic_view(a, &entries)?;
        let value = value_for(&value, view.shape())?;
        let new = combine(&view, &value, mode)?;
        let (mut start, mut stop, mut step, mut shape) = (vec![], vec![], vec![], vec![]);
        for e in entries.iter().filter(|e| e.consumes_axis()) {
            let ([b, end], len, s) = match e {
                Entry::Int(i) => ([*i as i64, *i as i64 + 1], 1, 1),
                Entry::Slice(_, len, s, given) => (*given, *len, *s),
                _ => unreachable!("no arrays here"),
            };
            start.push(b);
            stop.push(end);
            step.push(s);
            shape.push(len as i64);
        }
        return slice_update(a, &reshape(&new, &shape)?, &start, &stop, &step);
    }
    let (coords, result) = coordinates(a, &entries, split_by_ellipsis)?;
    let value = value_for(&value, &result)?;
    let axes: Vec<usize> = (0..a.ndim()).collect();
    scatter(a, &coords, &value, &axes, mode)
}

/// `value` broadcast to the indexed `shape`; extra leading dimensions of size 1 are
/// dropped first, as NumPy and MLX allow (`a[0] = ones((1, 1, 3))`). Shapes that do not
/// broadcast fail as in MLX, in `broadcast_shapes`.
fn value_for(value: &Array, shape: &[usize]) -> Result<Array> {
    let extra = value.ndim().saturating_sub(shape.len());
    let value = if extra > 0 && value.shape()[..extra].iter().all(|&d| d == 1) {
        reshape(value, &as_i64(&value.shape()[extra..]))?
    } else {
        value.clone()
    };
    broadcast_to(&value, shape)
}

/// `old` combined with `new` as a scatter of `mode` would (for the lazy paths).
fn combine(old: &Array, new: &Array, mode: ScatterMode) -> Result<Array> {
    match mode {
        ScatterMode::Assign => broadcast_to(new, old.shape()),
        ScatterMode::Add => add(old, new)?.astype(old.dtype()),
        ScatterMode::Multiply => multiply(old, new)?.astype(old.dtype()),
        ScatterMode::Maximum => maximum(old, new),
        ScatterMode::Minimum => minimum(old, new),
    }
}

/// `a` with the elements at `indices` replaced by `value` (cast to `a`'s dtype and
/// broadcast to the indexed shape): the functional form of NumPy's `a[indices] = value`
/// (MLX's `__setitem__`, which rebinds `a` to this result). With duplicate indices the
/// last value wins. Errors as [`index`]; the input is never modified.
///
/// ```
/// use lazulite::{idx, index_put, Array};
/// // As Python's a = [1, 2, 3]; a[2] = 0
/// let a = Array::from_slice(&[1i32, 2, 3], &[3]).unwrap();
/// let b = index_put(&a, &idx![2], 0).unwrap();
/// assert_eq!(b.to_vec::<i32>().unwrap(), vec![1, 2, 0]);
/// let mask = Array::from_slice(&[true, false, true], &[3]).unwrap();
/// let c = index_put(&a, &idx![&mask], -1).unwrap();
/// assert_eq!(c.to_vec::<i32>().unwrap(), vec![-1, 2, -1]);
/// assert!(index_put(&a, &idx![3], 0).is_err());
/// ```
pub fn index_put(a: &Array, indices: &[Index], value: impl Into<Operand>) -> Result<Array> {
    update(a, indices, value.into(), ScatterMode::Assign)
}

/// Accumulating updates at an index (MLX's `a.at[idx]`): see [`at`].
///
/// ```
/// use lazulite::{idx, Array};
/// let a = Array::from_slice(&[1.0f32, 1.0, 1.0], &[3])?;
/// let i = Array::from_slice(&[0i32, 0, 2], &[3])?;
/// let updates = a.at(&idx![&i]);
/// assert_eq!(updates.add(1.0)?.to_vec::<f32>()?, vec![3.0, 1.0, 2.0]);
/// assert_eq!(updates.multiply(2.0)?.to_vec::<f32>()?, vec![4.0, 1.0, 2.0]);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub struct At {
    array: Array,
    indices: Vec<Index>,
}

impl At {
    /// `a[idx] += value`, with duplicate indices adding up.
    ///
    /// ```
    /// use lazulite::{at, idx, index_put, Array};
    /// let a = Array::from_slice(&[0i32, 0, 0], &[3])?;
    /// let i = Array::from_slice(&[0i32, 0, 2], &[3])?;
    /// assert_eq!(at(&a, &idx![&i]).add(1)?.to_vec::<i32>()?, vec![2, 0, 1]);
    /// assert_eq!(index_put(&a, &idx![&i], 1)?.to_vec::<i32>()?, vec![1, 0, 1]); // no sum
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn add(&self, value: impl Into<Operand>) -> Result<Array> {
        update(&self.array, &self.indices, value.into(), ScatterMode::Add)
    }

    /// `a[idx] -= value` (an add of the negated value), duplicates accumulating.
    ///
    /// ```
    /// use lazulite::{at, idx, Array};
    /// let a = Array::from_slice(&[10i32, 10, 10], &[3])?;
    /// let i = Array::from_slice(&[0i32, 0, 2], &[3])?;
    /// assert_eq!(at(&a, &idx![&i]).subtract(1)?.to_vec::<i32>()?, vec![8, 10, 9]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn subtract(&self, value: impl Into<Operand>) -> Result<Array> {
        let v = self.value(value.into())?;
        update(
            &self.array,
            &self.indices,
            negative(&v)?.into(),
            ScatterMode::Add,
        )
    }

    /// `a[idx] *= value`, duplicates accumulating.
    ///
    /// ```
    /// use lazulite::{at, idx, Array};
    /// let a = Array::from_slice(&[1.0f32, 1.0, 1.0], &[3])?;
    /// let i = Array::from_slice(&[0i32, 0, 2], &[3])?;
    /// assert_eq!(at(&a, &idx![&i]).multiply(3.0)?.to_vec::<f32>()?, vec![9.0, 1.0, 3.0]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn multiply(&self, value: impl Into<Operand>) -> Result<Array> {
        update(
            &self.array,
            &self.indices,
            value.into(),
            ScatterMode::Multiply,
        )
    }

    /// `a[idx] /= value`: a multiply by the reciprocal (as MLX), duplicates accumulating.
    ///
    /// ```
    /// use lazulite::{at, idx, Array};
    /// let a = Array::from_slice(&[8.0f32, 8.0, 8.0], &[3])?;
    /// let i = Array::from_slice(&[0i32, 0, 2], &[3])?;
    /// assert_eq!(at(&a, &idx![&i]).divide(2.0)?.to_vec::<f32>()?, vec![2.0, 8.0, 4.0]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn divide(&self, value: impl Into<Operand>) -> Result<Array> {
        let v = self.value(value.into())?;
        update(
            &self.array,
            &self.indices,
            reciprocal(&v)?.into(),
            ScatterMode::Multiply,
        )
    }

    /// `a[idx] = maximum(a[idx], value)`, over all duplicates.
    ///
    /// ```
    /// use lazulite::{at, idx, Array};
    /// let a = Array::from_slice(&[1i32, 5, 1], &[3])?;
    /// let i = Array::from_slice(&[0i32, 1], &[2])?;
    /// assert_eq!(at(&a, &idx![&i]).maximum(3)?.to_vec::<i32>()?, vec![3, 5, 1]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn maximum(&self, value: impl Into<Operand>) -> Result<Array> {
        update(
            &self.array,
            &self.indices,
            value.into(),
            ScatterMode::Maximum,
        )
    }

    /// `a[idx] = minimum(a[idx], value)`, over all duplicates.
    ///
    /// ```
    /// use lazulite::{at, idx, Array};
    /// let a = Array::from_slice(&[1i32, 5, 1], &[3])?;
    /// let i = Array::from_slice(&[0i32, 1], &[2])?;
    /// assert_eq!(at(&a, &idx![&i]).minimum(3)?.to_vec::<i32>()?, vec![1, 3, 1]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn minimum(&self, value: impl Into<Operand>) -> Result<Array> {
        update(
            &self.array,
            &self.indices,
            value.into(),
            ScatterMode::Minimum,
        )
    }

    /// The value as an array of the updated array's dtype.
    fn value(&self, value: Operand) -> Result<Array> {
        let (arrays, _) = to_arrays("at", &[Operand::Array(self.array.clone()), value])?;
        arrays[1].astype(self.array.dtype())
    }
}

/// Accumulating updates of `a` at a NumPy-style index (MLX's `a.at[idx].add(v)` etc.):
/// unlike [`index_put`], duplicate indices combine all their values.
///
/// ```
/// use lazulite::{at, idx, Array};
/// let a = Array::from_slice(&[0.0f32, 0.0, 0.0], &[3]).unwrap();
/// let i = Array::from_slice(&[0i32, 0, 2], &[3]).unwrap();
/// let b = at(&a, &idx![&i]).add(1.0).unwrap();
/// assert_eq!(b.to_vec::<f32>().unwrap(), vec![2.0, 0.0, 1.0]);
/// ```
pub fn at(a: &Array, indices: &[Index]) -> At {
    At {
        array: a.clone(),
        indices: indices.to_vec(),
    }
}

impl Array {
    /// Method form of [`index`](crate::index).
    ///
    /// ```
    /// use lazulite::{idx, Array};
    /// let a = Array::from_slice(&[0i32, 1, 2, 3, 4, 5], &[2, 3])?;
    /// assert_eq!(a.index(&idx![1])?.to_vec::<i32>()?, vec![3, 4, 5]);
    /// assert_eq!(a.index(&idx![.., 2])?.to_vec::<i32>()?, vec![2, 5]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn index(&self, indices: &[Index]) -> Result<Array> {
        index(self, indices)
    }

    /// Method form of [`index_put`](crate::index_put).
    ///
    /// ```
    /// use lazulite::{idx, Array};
    /// let a = Array::from_slice(&[0i32, 1, 2, 3], &[4])?;
    /// assert_eq!(a.index_put(&idx![1..3], 9)?.to_vec::<i32>()?, vec![0, 9, 9, 3]);
    /// assert_eq!(a.to_vec::<i32>()?, vec![0, 1, 2, 3]); // a is unchanged
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn index_put(&self, indices: &[Index], value: impl Into<Operand>) -> Result<Array> {
        index_put(self, indices, value)
    }

    /// Method form of [`at`](crate::at).
    ///
    /// ```
    /// use lazulite::{idx, Array};
    /// let counts = lazulite::zeros(&[3], lazulite::DType::Int32)?;
    /// let seen = Array::from_slice(&[2i32, 0, 2, 2], &[4])?;
    /// assert_eq!(counts.at(&idx![&seen]).add(1)?.to_vec::<i32>()?, vec![1, 0, 3]);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn at(&self, indices: &[Index]) -> At {
        at(self, indices)
    }
}
