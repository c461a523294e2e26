//! Sorting ops: the `Sort` and `SearchSorted` primitives, sort, argsort, partition,
//! argpartition, topk, searchsorted, and `diff` (composed of slices and a subtraction).
//!
//! Order (MLX's): NaN after everything, `-0.0` equal to `0.0`, complex numbers by real
//! part then imaginary part. Index results are uint32, as in MLX.

use crate::array::Array;
use crate::backend::cpu::sort::{
    searchsorted as searchsorted_kernel, sort as sort_kernel, SortKind,
};
use crate::backend::Tensor;
use crate::dtype::{promote_types, DType};
use crate::error::{Error, Result};
use crate::ops::batching::batch_to_front;
use crate::ops::binary::subtract;
use crate::ops::cast::astype;
use crate::ops::creation::{zeros, zeros_like};
use crate::ops::indexing::{scatter_add_along_axis, take_along_axis};
use crate::ops::scan::flatten_for_axis;
use crate::ops::view::slice_axis;
use crate::primitive::{Export, MlxNode, MlxState, OutputSpec, Primitive};
use crate::shape::{normalize_axis, shape_text};

/// Sorts, argsorts or partitions every line along `axis`.
pub(crate) struct Sort {
    pub kind: SortKind,
    pub axis: usize,
}

impl Primitive for Sort {
    fn name(&self) -> &'static str {
        match self.kind {
            SortKind::Sort => "sort",
            SortKind::ArgSort => "argsort",
            SortKind::Partition(_) => "partition",
            SortKind::ArgPartition(_) => "argpartition",
        }
    }

    fn output_shapes(&self, inputs: &[OutputSpec]) -> Result<Vec<Vec<usize>>> {
        crate::primitive::same_shape(inputs)
    }

    fn params(&self) -> String {
        match self.kind {
            SortKind::Partition(kth) | SortKind::ArgPartition(kth) => {
                format!("kth={kth}, axis={}", self.axis)
            }
            SortKind::Sort | SortKind::ArgSort => format!("axis={}", self.axis),
        }
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        let axis = MlxState::Int(self.axis as i32);
        let kth = |k: usize| MlxState::Int(k as i32);
        match self.kind {
            SortKind::Sort => MlxNode::single("Sort", vec![axis], inputs, outputs),
            SortKind::ArgSort => MlxNode::single("ArgSort", vec![axis], inputs, outputs),
            SortKind::Partition(k) => {
                MlxNode::single("Partition", vec![kth(k), axis], inputs, outputs)
            }
            SortKind::ArgPartition(k) => {
                MlxNode::single("ArgPartition", vec![kth(k), axis], inputs, outputs)
            }
        }
    }

    fn eval(&self, inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        Ok(vec![sort_kernel(self.kind, &inputs[0], self.axis)?])
    }

    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        cotangents: &[Array],
        _: &[usize],
    ) -> Result<Vec<Array>> {
        let x = &inputs[0];
        let g = &cotangents[0];
        match self.source_positions(x)? {
            Some(order) => Ok(vec![scatter_add_along_axis(
                &zeros_like(g)?,
                &order,
                g,
                self.axis,
            )?]),
            None => Ok(vec![zeros_like(x)?]),
        }
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        let x = &inputs[0];
        match self.source_positions(x)? {
            Some(order) => Ok(vec![take_along_axis(
                &tangents[0],
                &order,
                Some(self.axis as i32),
            )?]),
            None => Ok(vec![zeros(x.shape(), DType::UInt32)?]),
        }
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let x = batch_to_front(&inputs[0], axes[0])?;
        let batched = Sort {
            kind: self.kind,
            axis: self.axis + 1,
        };
        let dtype = if self.returns_indices() {
            DType::UInt32
        } else {
            x.dtype()
        };
        let shape = x.shape().to_vec();
        Ok((
            vec![Array::from_op(batched, vec![x], shape, dtype)],
            vec![Some(0)],
        ))
    }
}

impl Sort {
    fn returns_indices(&self) -> bool {
        matches!(self.kind, SortKind::ArgSort | SortKind::ArgPartition(_))
    }

    /// For the value-returning kinds, the index of the input element each output element
    /// is (the forward permutation: the output is `take_along_axis(x, order, axis)`, so
    /// derivatives gather tangents with it and scatter-add cotangents back through it,
    /// linear in the size); `None` for the index-returning kinds, whose outputs do not
    /// depend smoothly on the input.
    fn source_positions(&self, x: &Array) -> Result<Option<Array>> {
        let axis = Some(self.axis as i32);
        let order = match self.kind {
            SortKind::Sort => argsort(x, axis)?,
            // The kernel arranges values and indices identically for the same kth.
            SortKind::Partition(kth) => argpartition(x, kth as i64, axis)?,
            SortKind::ArgSort | SortKind::ArgPartition(_) => return Ok(None),
        };
        Ok(Some(order))
    }
}

/// Records a sort (`kth: None`) or partition of `a` along `axis`, of values or of
/// their indices.
fn record_sort(
    op: &str,
    a: &Array,
    axis: Option<i32>,
    kth: Option<i64>,
    indices: bool,
) -> Result<Array> {
    let (a, ax) = flatten_for_axis(op, a, axis)?;
    let n = a.shape()[ax];
    let kind = match kth {
        None if indices => SortKind::ArgSort,
        None => SortKind::Sort,
        Some(k) => {
            let len = n as i64;
            if k < -len || k >= len {
                let axis_text = axis.map_or("None".to_string(), |x| x.to_string());
                return Err(Error::value(format!(
                    "[{op}] Received invalid kth {k} along axis {axis_text} for array with shape: {}",
                    shape_text(a.shape())
                )));
            }
            let kth = if k < 0 { k + len } else { k } as usize;
            if indices {
                SortKind::ArgPartition(kth)
            } else {
                SortKind::Partition(kth)
            }
        }
    };
    if indices && n > u32::MAX as usize {
        return Err(Error::value(format!(
            "[{op}] Axis of length {n} is too long for uint32 indices."
        )));
    }
    let dtype = if indices { DType::UInt32 } else { a.dtype() };
    let shape = a.shape().to_vec();
    Ok(Array::from_op(
        Sort { kind, axis: ax },
        vec![a],
        shape,
        dtype,
    ))
}

/// The elements of `a` sorted along `axis` (MLX's default is `Some(-1)`; `None` sorts the
/// flattened array). NaN sorts last.
///
/// ```
/// use lazulite::{sort, Array};
/// let a = Array::from_slice(&[3.0f32, f32::NAN, 1.0, 2.0], &[4]).unwrap();
/// let s = sort(&a, Some(-1)).unwrap().to_vec::<f32>().unwrap();
/// assert_eq!(&s[..3], [1.0, 2.0, 3.0]);
/// assert!(s[3].is_nan());
/// ```
pub fn sort(a: &Array, axis: Option<i32>) -> Result<Array> {
    record_sort("sort", a, axis, None, false)
}

/// The uint32 indices that sort `a` along `axis` (`None`: the flattened array). The sort
/// is stable: equal elements keep their order.
///
/// ```
/// use lazulite::{argsort, Array};
/// let a = Array::from_slice(&[1i32, 0, 1, 0], &[4]).unwrap();
/// assert_eq!(argsort(&a, Some(0)).unwrap().to_vec::<u32>().unwrap(), [1, 3, 0, 2]);
/// ```
pub fn argsort(a: &Array, axis: Option<i32>) -> Result<Array> {
    record_sort("argsort", a, axis, None, true)
}

/// `a` rearranged along `axis` (`None`: flattened) so that position `kth` (negative counts
/// from the end) holds the element a sort would put there, no greater element comes
/// before it and no smaller one after it. The order within each side is unspecified.
///
/// ```
/// use lazulite::{partition, Array};
/// let a = Array::from_slice(&[5i32, 1, 4, 2, 3], &[5]).unwrap();
/// let p = partition(&a, 2, Some(-1)).unwrap().to_vec::<i32>().unwrap();
/// assert_eq!(p[2], 3);
/// assert!(p[..2].iter().all(|&v| v <= 3) && p[3..].iter().all(|&v| v >= 3));
/// ```
pub fn partition(a: &Array, kth: i64, axis: Option<i32>) -> Result<Array> {
    record_sort("partition", a, axis, Some(kth), false)
}

/// The uint32 indices of the arrangement [`partition`] makes.
///
/// ```
/// use lazulite::{argpartition, Array};
/// let a = Array::from_slice(&[5i32, 1, 4, 2, 3], &[5]).unwrap();
/// let i = argpartition(&a, -1, Some(0)).unwrap().to_vec::<u32>().unwrap();
/// assert_eq!(i[4], 0);
/// ```
pub fn argpartition(a: &Array, kth: i64, axis: Option<i32>) -> Result<Array> {
    record_sort("argpartition", a, axis, Some(kth), true)
}

/// The `k` largest elements of `a` along `axis` (`None`: flattened), in ascending order.
/// (MLX documents its order as unspecified; for small inputs it is ascending too.)
///
/// ```
/// use lazulite::{topk, Array};
/// let a = Array::from_slice(&[5i32, 1, 4, 2, 3, 9, 0], &[7]).unwrap();
/// assert_eq!(topk(&a, 3, Some(-1)).unwrap().to_vec::<i32>().unwrap(), [4, 5, 9]);
/// assert!(topk(&a, 8, Some(-1)).is_err());
/// ```
pub fn topk(a: &Array, k: i64, axis: Option<i32>) -> Result<Array> {
    let (a, ax) = flatten_for_axis("topk", a, axis)?;
    let n = a.shape()[ax] as i64;
    if k < 0 || k > n {
        let axis_text = axis.map_or("None".to_string(), |x| x.to_string());
        return Err(Error::value(format!(
            "[topk] Received invalid k={k} along axis {axis_text} for array with shape: {}",
            shape_text(a.shape())
        )));
    }
    let axis = Some(ax as i32);
    // Select the k largest in linear time, then sort only those (MLX does not sort them,
    // nor does its export).
    let largest = if k == 0 {
        return slice_axis(&a, ax, 0, 0, 1);
    } else if k == n {
        a
    } else {
        slice_axis(&partition(&a, n - k, axis)?, ax, n - k, n, 1)?
    };
    if crate::ops::trace::in_export_trace() {
        return Ok(largest);
    }
    sort(&largest, axis)
}

/// Binary search for each element of `values` in the sorted 1-D `sorted_sequence`.
pub(crate) struct SearchSorted {
    pub right: bool,
}

impl Primitive for SearchSorted {
    fn name(&self) -> &'static str {
        "searchsorted"
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        MlxNode::single(
            "SearchSorted",
            vec![MlxState::Bool(self.right)],
            inputs,
            outputs,
        )
    }

    fn params(&self) -> String {
        format!("side={}", if self.right { "right" } else { "left" })
    }

    fn eval(&self, mut inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let values = inputs.pop().expect("searchsorted has two inputs");
        let sequence = inputs.pop().expect("searchsorted has two inputs");
        Ok(vec![searchsorted_kernel(&sequence, values, self.right)?])
    }

    /// Positions are integers: no derivative flows to either input.
    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        _: &[Array],
        argnums: &[usize],
    ) -> Result<Vec<Array>> {
        argnums.iter().map(|&i| zeros_like(&inputs[i])).collect()
    }

    fn jvp(&self, inputs: &[Array], _: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        Ok(vec![zeros(inputs[1].shape(), DType::UInt32)?])
    }

    /// Each value is searched for on its own, so batched values keep their batch axis; a
    /// batched sequence would need one search table per example, which MLX refuses too.
    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        if axes[0].is_some() {
            return Err(Error::value(
                "[searchsorted] Cannot vmap over the sorted sequence, only over the values \
                 being searched for.",
            ));
        }
        let side = if self.right { "right" } else { "left" };
        Ok((
            vec![searchsorted(&inputs[0], &inputs[1], side)?],
            vec![axes[1]],
        ))
    }
}

/// For each element of `values`, the uint32 position in the sorted 1-D `sorted_sequence`
/// where it would be inserted to keep it sorted: before equal elements for
/// `side == "left"`, after them for `"right"`. Both are compared in their promoted dtype.
///
/// ```
/// use lazulite::{searchsorted, Array};
/// let s = Array::from_slice(&[1i32, 2, 2, 3], &[4]).unwrap();
/// let v = Array::from_slice(&[2i32, 0, 5], &[3]).unwrap();
/// assert_eq!(searchsorted(&s, &v, "left").unwrap().to_vec::<u32>().unwrap(), [1, 0, 4]);
/// assert_eq!(searchsorted(&s, &v, "right").unwrap().to_vec::<u32>().unwrap(), [3, 0, 4]);
/// ```
pub fn searchsorted(sorted_sequence: &Array, values: &Array, side: &str) -> Result<Array> {
    let right = match side {
        "left" => false,
        "right" => true,
        _ => {
            return Err(Error::value(format!(
                "[searchsorted] Invalid side '{side}'. Expected 'left' or 'right'."
            )))
        }
    };
    if sorted_sequence.ndim() != 1 {
        return Err(Error::value(format!(
            "[searchsorted] The sorted sequence must be 1-D but has {} dimensions.",
            sorted_sequence.ndim()
        )));
    }
    if sorted_sequence.size() > u32::MAX as usize {
        return Err(Error::value(format!(
            "[searchsorted] A sequence of length {} is too long for uint32 indices.",
            sorted_sequence.size()
        )));
    }
    let dtype = promote_types(sorted_sequence.dtype(), values.dtype());
    let inputs = vec![astype(sorted_sequence, dtype)?, astype(values, dtype)?];
    Ok(Array::from_op(
        SearchSorted { right },
        inputs,
        values.shape().to_vec(),
        DType::UInt32,
    ))
}

/// The `n`-th discrete difference along `axis`: `a[1:] - a[:-1]`, `n` times. Bool arrays
/// give bool (`!=`); integers wrap. `n` at least the axis length gives an empty axis.
///
/// ```
/// use lazulite::{diff, Array};
/// let a = Array::from_slice(&[1i32, 4, 9, 16], &[4]).unwrap();
/// assert_eq!(diff(&a, 1, -1).unwrap().to_vec::<i32>().unwrap(), [3, 5, 7]);
/// assert_eq!(diff(&a, 2, 0).unwrap().to_vec::<i32>().unwrap(), [2, 2]);
/// ```
pub fn diff(a: &Array, n: i64, axis: i32) -> Result<Array> {
    let ax = normalize_axis("diff", axis, a.ndim())?;
    if n < 0 {
        return Err(Error::value(format!(
            "[diff] Order `n` must be non-negative but got {n}."
        )));
    }
    let mut out = a.clone();
    for _ in 0..n {
        let len = out.shape()[ax] as i64;
        if len == 0 {
            break;
        }
        out = subtract(
            &slice_axis(&out, ax, 1, len, 1)?,
            &slice_axis(&out, ax, 0, len - 1, 1)?,
        )?;
    }
    Ok(out)
}
