//! `gather_mm`: matrix products of matrices picked by index from two stacks, the
//! building block of mixture-of-experts layers (each token's vector times its expert's
//! weight matrix) without gathering copies of the weights.

use crate::array::Array;
use crate::backend::cpu::elementwise::map1;
use crate::backend::cpu::matmul::gather_matmul;
use crate::backend::Tensor;
use crate::dtype::{promote_types, DType};
use crate::error::{Error, Result};
use crate::ops::batching::batch_to_front;
use crate::ops::binary::{add, multiply};
use crate::ops::cast::astype;
use crate::ops::creation::{arange, zeros};
use crate::ops::indexing::{scatter, ScatterMode};
use crate::ops::linalg::{matmul, reshaped};
use crate::ops::shape::{broadcast_arrays, expand_dims, squeeze, swapaxes};
use crate::primitive::{Export, MlxNode, MlxState, OutputSpec, Primitive};
use crate::shape::{checked_size, shape_text};

/// `out[i] = a[lhs[i]] @ b[rhs[i]]` over the positions `i` of the (equal-shaped) uint32
/// index inputs; an index addresses a matrix by its row-major position in its operand's
/// batch shape. Inputs: `[a, b, lhs, rhs]`.
pub(crate) struct GatherMm;

impl Primitive for GatherMm {
    fn name(&self) -> &'static str {
        "gather_mm"
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        // State: whether the left and right indices are sorted (a speed hint).
        let unsorted = vec![MlxState::Bool(false), MlxState::Bool(false)];
        MlxNode::single("GatherMM", unsorted, inputs, outputs)
    }

    fn eval(&self, mut inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let rhs = map1::<u32, u32>(inputs.pop().expect("four inputs"), |v| v)?;
        let lhs = map1::<u32, u32>(inputs.pop().expect("four inputs"), |v| v)?;
        let b = inputs.pop().expect("four inputs");
        let a = inputs.pop().expect("four inputs");
        let batch = lhs.shape.clone();
        Ok(vec![gather_matmul(
            a,
            b,
            lhs.slice::<u32>(),
            rhs.slice::<u32>(),
            &batch,
        )?])
    }

    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        cotangents: &[Array],
        argnums: &[usize],
    ) -> Result<Vec<Array>> {
        let [a, b, lhs, rhs] = inputs else {
            unreachable!("gather_mm has four inputs")
        };
        let g = &cotangents[0];
        argnums
            .iter()
            .map(|&i| match i {
                // d a[lhs[i]] += g[i] @ b[rhs[i]]ᵀ, summed over the i that share an lhs.
                0 => {
                    let per_index = record(g, &swapaxes(b, -1, -2)?, &positions(g)?, rhs)?;
                    scatter_into_stack(a, lhs, &per_index)
                }
                // d b[rhs[i]] += a[lhs[i]]ᵀ @ g[i].
                1 => {
                    let per_index = record(&swapaxes(a, -1, -2)?, g, lhs, &positions(g)?)?;
                    scatter_into_stack(b, rhs, &per_index)
                }
                _ => Err(Error::value(
                    "[gather_mm] Cannot calculate VJP with respect to indices. Use \
                     stop_gradient on indices to stop gradients from being computed.",
                )),
            })
            .collect()
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], argnums: &[usize]) -> Result<Vec<Array>> {
        let [a, b, lhs, rhs] = inputs else {
            unreachable!("gather_mm has four inputs")
        };
        let mut total: Option<Array> = None;
        for (&i, t) in argnums.iter().zip(tangents) {
            let term = match i {
                0 => record(t, b, lhs, rhs)?,
                1 => record(a, t, lhs, rhs)?,
                // Indices are integers: they have no tangent.
                _ => continue,
            };
            total = Some(match total {
                Some(sum) => add(&sum, &term)?,
                None => term,
            });
        }
        match total {
            Some(t) => Ok(vec![t]),
            None => Ok(vec![zeros(
                &gather_shape(a, b, lhs),
                promote_types(a.dtype(), b.dtype()),
            )?]),
        }
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        // The mapped axis becomes one more batch axis of each mapped operand, and the
        // indices move to address the copy for their position along it.
        let Some(width) = axes
            .iter()
            .zip(inputs)
            .find_map(|(ax, x)| ax.map(|ax| x.shape()[ax]))
        else {
            return Ok((
                vec![record(&inputs[0], &inputs[1], &inputs[2], &inputs[3])?],
                vec![None],
            ));
        };
        let mut stacks = Vec::with_capacity(2);
        let mut indices = Vec::with_capacity(2);
        for k in 0..2 {
            let (stack, index) = (&inputs[k], &inputs[k + 2]);
            let index = match axes[k + 2] {
                Some(ax) => batch_to_front(index, Some(ax))?,
                None => expand_dims(index, 0)?,
            };
            match axes[k] {
                Some(ax) => {
                    let stack = batch_to_front(stack, Some(ax))?;
                    let per_copy: usize = stack.shape()[1..stack.ndim() - 2].iter().product();
                    let stack = matrix_stack(&stack)?;
                    let shift = multiply(
                        &reshaped(
                            &arange(0.0, width as f64, 1.0, DType::UInt32)?,
                            &[width]
                                .into_iter()
                                .chain(std::iter::repeat_n(1, index.ndim() - 1))
                                .collect::<Vec<_>>(),
                        )?,
                        Array::scalar(per_copy as u32),
                    )?;
                    indices.push(add(&index, &shift)?);
                    stacks.push(stack);
                }
                None => {
                    indices.push(index);
                    stacks.push(stack.clone());
                }
            }
        }
        let out = record(&stacks[0], &stacks[1], &indices[0], &indices[1])?;
        Ok((vec![out], vec![Some(0)]))
    }
}

/// The output shape for operands `a`, `b` and (broadcast) indices `lhs`.
fn gather_shape(a: &Array, b: &Array, lhs: &Array) -> Vec<usize> {
    let (sa, sb) = (a.shape(), b.shape());
    let mut shape = lhs.shape().to_vec();
    shape.extend([sa[sa.len() - 2], sb[sb.len() - 1]]);
    shape
}

/// Records the primitive on prepared operands: matrices of one dtype (at least 2-D),
/// uint32 indices broadcast against each other.
fn record(a: &Array, b: &Array, lhs: &Array, rhs: &Array) -> Result<Array> {
    let dtype = promote_types(a.dtype(), b.dtype());
    let (a, b) = (astype(a, dtype)?, astype(b, dtype)?);
    let pair = broadcast_arrays(&[lhs.clone(), rhs.clone()])?;
    let shape = gather_shape(&a, &b, &pair[0]);
    checked_size(&shape)?;
    let [lhs, rhs] = <[Array; 2]>::try_from(pair).expect("two arrays");
    Ok(Array::from_op(GatherMm, vec![a, b, lhs, rhs], shape, dtype))
}

/// `0, 1, ...` over the batch positions of `g` (all but its last two axes), shaped like
/// them: the indices that pick each of `g`'s own matrices.
fn positions(g: &Array) -> Result<Array> {
    let batch = &g.shape()[..g.ndim() - 2];
    let count: usize = batch.iter().product();
    reshaped(&arange(0.0, count as f64, 1.0, DType::UInt32)?, batch)
}

/// `a` (at least 2-D) as a stack of its matrices, `(count, rows, cols)`: the matrices of
/// its leading axes in the row-major order the indices count them in.
pub(crate) fn matrix_stack(a: &Array) -> Result<Array> {
    let s = a.shape();
    let (lead, matrix) = s.split_at(s.len() - 2);
    reshaped(a, &[lead.iter().product(), matrix[0], matrix[1]])
}

/// Sums `per_index[i]` into matrix `index[i]` of a zero stack shaped like `stack`.
fn scatter_into_stack(stack: &Array, index: &Array, per_index: &Array) -> Result<Array> {
    let s = stack.shape();
    let count: usize = s[..s.len() - 2].iter().product();
    let flat = zeros(&[count, s[s.len() - 2], s[s.len() - 1]], per_index.dtype())?;
    let summed = scatter(
        &flat,
        std::slice::from_ref(index),
        per_index,
        &[0],
        ScatterMode::Add,
    )?;
    reshaped(&summed, s)
}

/// The integer index operand as MLX takes it: any integer dtype, cast to uint32 (so a
/// negative index is out of range), or `0, 1, ...` over `x`'s batch when absent.
pub(crate) fn indices_or_default(op: &str, indices: Option<&Array>, x: &Array) -> Result<Array> {
    if x.ndim() < 2 {
        return Err(Error::value(format!(
            "[{op}] Input must have at least two dimensions but got input with shape {}.",
            shape_text(x.shape())
        )));
    }
    match indices {
        Some(i) if !i.dtype().is_integer() => Err(Error::value(format!(
            "[{op}] Got indices with invalid dtype. Indices must be integral."
        ))),
        Some(i) => astype(i, DType::UInt32),
        None => positions(x),
    }
}

/// Matrix products of matrices picked from two stacks: `out[i] = a[lhs[i]] @ b[rhs[i]]`,
/// where an index addresses a matrix of `a` (or `b`) by its row-major position among the
/// matrices of that operand's leading (batch) axes, and the two index arrays broadcast
/// together to give the result's leading shape. A missing index array means each matrix
/// in turn; with neither, this is [`matmul`]. As there, a 1-D `a` is a row vector and a
/// 1-D `b` a column vector, whose dimension is removed from the result. Indices are cast
/// to uint32 as MLX does, and one outside the stack is an `IndexError` when evaluated.
///
/// ```
/// use lazulite::{gather_mm, Array};
/// // Two experts (2x2 matrices); three tokens (1x2 rows) routed to experts 1, 0, 1.
/// let experts = Array::from_slice(&[1.0f32, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0], &[2, 2, 2])?;
/// let tokens = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 1, 2])?;
/// let route = Array::from_slice(&[1u32, 0, 1], &[3])?;
/// let out = gather_mm(&tokens, &experts, None, Some(&route))?;
/// assert_eq!(out.shape(), &[3, 1, 2]);
/// assert_eq!(out.to_vec::<f32>()?, vec![2.0, 1.0, 3.0, 4.0, 6.0, 5.0]);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn gather_mm(
    a: &Array,
    b: &Array,
    lhs_indices: Option<&Array>,
    rhs_indices: Option<&Array>,
) -> Result<Array> {
    const OP: &str = "gather_mm";
    if lhs_indices.is_none() && rhs_indices.is_none() {
        return matmul(a, b);
    }
    if a.ndim() == 0 || b.ndim() == 0 {
        return Err(Error::value(format!(
            "[{OP}] Got 0 dimension input. Inputs must have at least one dimension."
        )));
    }
    let a2 = if a.ndim() == 1 {
        expand_dims(a, 0)?
    } else {
        a.clone()
    };
    let b2 = if b.ndim() == 1 {
        expand_dims(b, 1)?
    } else {
        b.clone()
    };
    let (sa, sb) = (a2.shape(), b2.shape());
    if sa[sa.len() - 1] != sb[sb.len() - 2] {
        return Err(Error::value(format!(
            "[{OP}] Last dimension of first input with shape {} must match second to last \
             dimension of second input with shape {}.",
            shape_text(sa),
            shape_text(sb)
        )));
    }
    let dtype = promote_types(a.dtype(), b.dtype());
    if !dtype.is_floating() {
        return Err(Error::value(format!(
            "[{OP}] Only real floating point types are supported but {} and {} were provided \
             which results in {dtype}, which is not a real floating point type.",
            a.dtype(),
            b.dtype()
        )));
    }
    let lhs = indices_or_default(OP, lhs_indices, &a2)?;
    let rhs = indices_or_default(OP, rhs_indices, &b2)?;
    let out = record(&a2, &b2, &lhs, &rhs)?;
    let mut removed = Vec::new();
    if a.ndim() == 1 {
        removed.push(out.ndim() as i32 - 2);
    }
    if b.ndim() == 1 {
        removed.push(out.ndim() as i32 - 1);
    }
    if removed.is_empty() {
        Ok(out)
    } else {
        squeeze(&out, removed)
    }
}
