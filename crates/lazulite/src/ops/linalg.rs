//! Linear algebra products: the `Matmul` and `AddMm` primitives, and the ops built on
//! them (`inner`, `outer`, `tensordot`, `vecdot`, `kron`; `einsum` and `einsum_path` in
//! `einsum.rs`); the `Cholesky` factorisation.
//!
//! Every product that contracts an axis goes through [`matmul`]: operands are permuted
//! (views) and reshaped so that the contracted axes form the inner dimension of a
//! batched matrix product. Like MLX, products that contract reject integer and boolean
//! dtypes; `outer`, `kron` and contraction-free `einsum` multiply elementwise instead
//! and accept them.

use crate::array::Array;
use crate::backend::cpu::cholesky::cholesky as cholesky_kernel;
use crate::backend::cpu::matmul::matmul as matmul_kernel;
use crate::backend::Tensor;
use crate::dtype::{promote_types, DType};
use crate::error::{Error, Result};
use crate::ops::batching::batch_to_front;
use crate::ops::binary::{add, multiply};
use crate::ops::cast::astype;
use crate::ops::creation::zeros_like;
use crate::ops::exported::ExportedAs;
use crate::ops::shape::swapaxes;
use crate::ops::unary::conjugate;
use crate::ops::view::{broadcast_to, broadcast_with, reshape_by, transpose, ReshapeRule};
use crate::primitive::{mlx_shape, Export, MlxInput, MlxNode, MlxState, OutputSpec, Primitive};
use crate::shape::{axis_in_range, broadcast_shapes, checked_size, shape_text};

/// Batched matrix product of `(batch..., M, K)` and `(batch..., K, N)` inputs of one
/// inexact dtype and the same batch shape.
pub(crate) struct Matmul;

impl Primitive for Matmul {
    fn name(&self) -> &'static str {
        "matmul"
    }

    fn output_shapes(&self, inputs: &[OutputSpec]) -> Result<Vec<Vec<usize>>> {
        product_shape("matmul", &inputs[0].shape, &inputs[1].shape)
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        MlxNode::single("Matmul", vec![], inputs, outputs)
    }

    fn eval(&self, mut inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let b = inputs.pop().expect("matmul has two inputs");
        let a = inputs.pop().expect("matmul has two inputs");
        Ok(vec![matmul_kernel(a, b, None)?])
    }

    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        cotangents: &[Array],
        argnums: &[usize],
    ) -> Result<Vec<Array>> {
        argnums
            .iter()
            .map(|&i| product_cotangent(inputs, &cotangents[0], i))
            .collect()
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], argnums: &[usize]) -> Result<Vec<Array>> {
        Ok(vec![product_tangent(inputs, tangents, argnums, 0)?])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        // matmul broadcasts the batch dimensions, so an unbatched input needs no copy.
        let a = batch_to_front(&inputs[0], axes[0])?;
        let b = batch_to_front(&inputs[1], axes[1])?;
        Ok((vec![matmul(&a, &b)?], vec![Some(0)]))
    }
}

/// The cotangent of factor `i` (0: `a`, 1: `b`) of `a @ b` for the output cotangent
/// `g`: `g @ bᵀ` or `aᵀ @ g` (batch dimensions are equal; inputs are matrices).
fn product_cotangent(factors: &[Array], g: &Array, i: usize) -> Result<Array> {
    if i == 0 {
        matmul(g, &swapaxes(&factors[1], -1, -2)?)
    } else {
        matmul(&swapaxes(&factors[0], -1, -2)?, g)
    }
}

/// The tangent of `a @ b` for `inputs[offset..offset + 2] == [a, b]`, from the tangents
/// of the inputs listed in `argnums`; `None` when neither factor has one.
fn product_tangent(
    inputs: &[Array],
    tangents: &[Array],
    argnums: &[usize],
    offset: usize,
) -> Result<Array> {
    let (a, b) = (&inputs[offset], &inputs[offset + 1]);
    let tangent = |i: usize| argnums.iter().position(|&k| k == i).map(|k| &tangents[k]);
    let terms = [
        tangent(offset).map(|ta| matmul(ta, b)),
        tangent(offset + 1).map(|tb| matmul(a, tb)),
    ];
    let mut total: Option<Array> = None;
    for term in terms.into_iter().flatten() {
        let term = term?;
        total = Some(match total {
            Some(acc) => add(&acc, &term)?,
            None => term,
        });
    }
    match total {
        Some(t) => Ok(t),
        None => zeros_like(&matmul(a, b)?),
    }
}

/// `alpha * (a @ b) + beta * c` for inputs `[c, a, b]` shaped as for [`Matmul`], with
/// `c` of the output's shape.
pub(crate) struct AddMm {
    pub alpha: f64,
    pub beta: f64,
}

impl Primitive for AddMm {
    fn name(&self) -> &'static str {
        "addmm"
    }

    fn output_shapes(&self, inputs: &[OutputSpec]) -> Result<Vec<Vec<usize>>> {
        let out = product_shape("addmm", &inputs[1].shape, &inputs[2].shape)?;
        if inputs[0].shape != out[0] {
            return Err(Error::value(format!(
                "[addmm] Input c with shape {} must broadcast to the output shape {}.",
                shape_text(&inputs[0].shape),
                shape_text(&out[0])
            )));
        }
        Ok(out)
    }

    fn params(&self) -> String {
        format!("alpha={}, beta={}", self.alpha, self.beta)
    }

    fn export(&self, _: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        // MLX's AddMM takes `(a, b, c)`; this node takes `(c, a, b)`.
        let inputs = [1, 2, 0].map(MlxInput::Input).to_vec();
        let state = vec![
            MlxState::Float(self.alpha as f32),
            MlxState::Float(self.beta as f32),
        ];
        Ok(Export::Nodes(vec![MlxNode::new(
            "AddMM",
            state,
            inputs,
            outputs[0].clone(),
        )]))
    }

    fn eval(&self, mut inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let b = inputs.pop().expect("addmm has three inputs");
        let a = inputs.pop().expect("addmm has three inputs");
        let c = inputs.pop().expect("addmm has three inputs");
        Ok(vec![matmul_kernel(a, b, Some((c, self.alpha, self.beta)))?])
    }

    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        cotangents: &[Array],
        argnums: &[usize],
    ) -> Result<Vec<Array>> {
        let g = &cotangents[0];
        argnums
            .iter()
            .map(|&i| {
                if i == 0 {
                    multiply(g, self.beta)
                } else {
                    multiply(&product_cotangent(&inputs[1..], g, i - 1)?, self.alpha)
                }
            })
            .collect()
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], argnums: &[usize]) -> Result<Vec<Array>> {
        let product = multiply(&product_tangent(inputs, tangents, argnums, 1)?, self.alpha)?;
        match argnums.iter().position(|&k| k == 0) {
            Some(k) => Ok(vec![add(&product, &multiply(&tangents[k], self.beta)?)?]),
            None => Ok(vec![product]),
        }
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let front = |i: usize| batch_to_front(&inputs[i], axes[i]);
        let (c, mut a, b) = (front(0)?, front(1)?, front(2)?);
        // addmm broadcasts c to the product's shape, not the other way: give the product
        // c's batch dimension when only c has one.
        if let (Some(ax), None, None) = (axes[0], axes[1], axes[2]) {
            let shape: Vec<usize> = std::iter::once(inputs[0].shape()[ax])
                .chain(a.shape().iter().copied())
                .collect();
            a = broadcast_to(&a, &shape)?;
        }
        Ok((
            vec![addmm(&c, &a, &b, self.alpha, self.beta)?],
            vec![Some(0)],
        ))
    }
}

fn reshaped(a: &Array, shape: &[usize]) -> Result<Array> {
    a.reshape(shape)
}

/// The output shape of the matrix product primitive for operands of these shapes (same
/// batch dimensions, matching inner dimensions; MLX's message otherwise).
fn product_shape(op: &str, a: &[usize], b: &[usize]) -> Result<Vec<Vec<usize>>> {
    let (na, nb) = (a.len(), b.len());
    if na < 2 || na != nb || a[..na - 2] != b[..nb - 2] || a[na - 1] != b[nb - 2] {
        return Err(Error::value(format!(
            "[{op}] Last dimension of first input with shape {} must match second to last \
             dimension of second input with shape {}.",
            shape_text(a),
            shape_text(b)
        )));
    }
    let mut out = a.to_vec();
    out[na - 1] = b[nb - 1];
    Ok(vec![out])
}

/// The operands of a (batched) matrix product, ready for the primitives: 1-D inputs
/// promoted to matrices, batch dimensions broadcast (as views).
struct MatrixOperands {
    a: Array,
    b: Array,
    /// `(batch..., M, N)`: the shape the primitive produces.
    shape: Vec<usize>,
    /// The shape returned to the user: the promoted vector dimensions removed.
    result_shape: Vec<usize>,
    /// Those removed dimensions, as axes of `shape`.
    squeezed: Vec<usize>,
}

fn matrix_operands(op: &str, a: &Array, b: &Array, dtype: DType) -> Result<MatrixOperands> {
    if a.ndim() == 0 || b.ndim() == 0 {
        return Err(Error::value(format!(
            "[{op}] Got 0 dimension input. Inputs must have at least one dimension."
        )));
    }
    let (a, b) = (astype(a, dtype)?, astype(b, dtype)?);
    // Recorded as expand_dims, so that a shapeless replay promotes vectors of new sizes.
    let a2 = if a.ndim() == 1 {
        reshape_by(&a, &[1, a.size()], ReshapeRule::ExpandDims(vec![0]))?
    } else {
        a.clone()
    };
    let b2 = if b.ndim() == 1 {
        reshape_by(&b, &[b.size(), 1], ReshapeRule::ExpandDims(vec![1]))?
    } else {
        b.clone()
    };
    let (sa, sb) = (a2.shape(), b2.shape());
    let (na, nb) = (sa.len(), sb.len());
    if sa[na - 1] != sb[nb - 2] {
        return Err(Error::value(format!(
            "[{op}] Last dimension of first input with shape {} must match second to last \
             dimension of second input with shape {}.",
            shape_text(sa),
            shape_text(sb)
        )));
    }
    let batch = broadcast_shapes(&sa[..na - 2], &sb[..nb - 2]).map_err(|_| {
        Error::value(format!(
            "[{op}] The batch dimensions of inputs with shapes {} and {} cannot be broadcast.",
            shape_text(sa),
            shape_text(sb)
        ))
    })?;
    let (m, k, n) = (sa[na - 2], sa[na - 1], sb[nb - 1]);
    let with = |tail: [usize; 2]| -> Vec<usize> { batch.iter().copied().chain(tail).collect() };
    let shape = with([m, n]);
    checked_size(&shape)?;
    let mut result_shape = batch.clone();
    let mut squeezed = vec![];
    if a.ndim() > 1 {
        result_shape.push(m);
    } else {
        squeezed.push(batch.len());
    }
    if b.ndim() > 1 {
        result_shape.push(n);
    } else {
        squeezed.push(batch.len() + 1);
    }
    // Batch dimensions broadcast against the other operand's (MLX's BroadcastAxes in a
    // shapeless trace), the matrix dimensions stay each operand's own.
    let batched = na > 2 || nb > 2;
    let (pa, pb): (&[&Array], &[&Array]) = if batched {
        (&[&b2], &[&a2])
    } else {
        (&[], &[])
    };
    Ok(MatrixOperands {
        a: broadcast_with(&a2, &with([m, k]), pa, 2)?,
        b: broadcast_with(&b2, &with([k, n]), pb, 2)?,
        shape,
        result_shape,
        squeezed,
    })
}

/// Matrix product with NumPy's rules: a 1-D first input is a row vector and a 1-D second
/// input a column vector (their dimension is removed from the result), and the
/// dimensions before the last two are broadcast. The promoted dtype must be floating
/// point or complex.
///
/// ```
/// use lazulite::{matmul, Array};
/// let a = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
/// let v = Array::from_slice(&[1.0f32, 1.0], &[2]).unwrap();
/// assert_eq!(matmul(&a, &a).unwrap().to_vec::<f32>().unwrap(), vec![7.0, 10.0, 15.0, 22.0]);
/// assert_eq!(matmul(&a, &v).unwrap().to_vec::<f32>().unwrap(), vec![3.0, 7.0]);
/// assert_eq!(matmul(&v, &v).unwrap().shape(), &[] as &[usize]);
/// ```
pub fn matmul(a: &Array, b: &Array) -> Result<Array> {
    let dtype = promote_types(a.dtype(), b.dtype());
    if !dtype.is_inexact() {
        return Err(Error::value(format!(
            "[matmul] Only inexact types are supported but {} and {} were provided which \
             results in {dtype}, which is not a floating point type.",
            a.dtype(),
            b.dtype()
        )));
    }
    let in_trace = crate::ops::trace::in_export_trace();
    if in_trace && a.ndim() > 2 && b.ndim() == 2 && !crate::ops::trace::in_shapeless_trace() {
        return flattened_matmul(a, b, dtype);
    }
    let ops = matrix_operands("matmul", a, b, dtype)?;
    let out = Array::from_op(Matmul, vec![ops.a, ops.b], ops.shape, dtype);
    reshape_by(&out, &ops.result_shape, ReshapeRule::Squeeze(ops.squeezed))
}

/// `a @ b` for a batch of matrices `a` and one matrix `b`, as MLX records it at fixed
/// shapes: the batch flattened into the rows of one product, then unflattened.
fn flattened_matmul(a: &Array, b: &Array, dtype: DType) -> Result<Array> {
    let a = astype(a, dtype)?;
    let rows = crate::ops::shape::flatten(&a, 0, a.ndim() as i32 - 2)?;
    let product = matmul(&rows, b)?;
    let lead = a.shape()[..a.ndim() - 1].to_vec();
    let mut shape: Vec<i64> = lead.iter().map(|&d| d as i64).collect();
    shape.push(product.shape()[1] as i64);
    let state = || Ok(vec![MlxState::Int(0), mlx_shape("matmul", &lead)?]);
    let unflatten = move |x: &[Array]| Ok(vec![crate::ops::view::reshape(&x[0], &shape)?]);
    let out = ExportedAs::apply("unflatten", "Unflatten", state, vec![product], unflatten)?;
    Ok(out.into_iter().next().expect("one output"))
}

/// `alpha * (a @ b) + beta * c`, with `a @ b` as in [`matmul`] and `c` broadcast to its
/// shape. The promoted dtype must be real floating point. With `beta == 0`, `c` is not
/// read (NaNs in it do not propagate).
///
/// ```
/// use lazulite::{addmm, ones, DType};
/// let (c, a, b) = (ones(&[2], DType::Float32).unwrap(), ones(&[2, 3], DType::Float32).unwrap(),
///                  ones(&[3, 2], DType::Float32).unwrap());
/// let r = addmm(&c, &a, &b, 2.0, 0.5).unwrap();
/// assert_eq!(r.to_vec::<f32>().unwrap(), vec![6.5; 4]);
/// ```
pub fn addmm(c: &Array, a: &Array, b: &Array, alpha: f64, beta: f64) -> Result<Array> {
    let dtype = promote_types(promote_types(c.dtype(), a.dtype()), b.dtype());
    if !dtype.is_inexact() {
        return Err(Error::value(format!(
            "[addmm] Only real floating point types are supported but {}, {} and {} were \
             provided which results in {dtype}, which is not a real floating point type.",
            c.dtype(),
            a.dtype(),
            b.dtype()
        )));
    }
    let ops = matrix_operands("addmm", a, b, dtype)?;
    let fits = broadcast_shapes(c.shape(), &ops.result_shape).is_ok_and(|s| s == ops.result_shape);
    if !fits {
        return Err(Error::value(format!(
            "[addmm] Input c with shape {} must broadcast to the output shape {}.",
            shape_text(c.shape()),
            shape_text(&ops.result_shape)
        )));
    }
    let c = broadcast_to(&astype(c, dtype)?, &ops.result_shape)?;
    let c = reshaped(&c, &ops.shape)?;
    let out = Array::from_op(
        AddMm { alpha, beta },
        vec![c, ops.a, ops.b],
        ops.shape,
        dtype,
    );
    reshaped(&out, &ops.result_shape)
}

/// Ordinary inner product over the last axes: `a.shape[..-1] + b.shape[..-1]` result.
/// A 0-d input multiplies elementwise.
///
/// ```
/// use lazulite::{inner, Array};
/// let a = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
/// assert_eq!(inner(&a, &a).unwrap().item::<f32>().unwrap(), 14.0);
/// ```
pub fn inner(a: &Array, b: &Array) -> Result<Array> {
    if a.ndim() == 0 || b.ndim() == 0 {
        return multiply(a, b);
    }
    if a.shape()[a.ndim() - 1] != b.shape()[b.ndim() - 1] {
        return Err(Error::value(format!(
            "[inner] a and b must have the same last dimension, got shapes {} and {}.",
            shape_text(a.shape()),
            shape_text(b.shape())
        )));
    }
    tensordot(a, b, (vec![-1], vec![-1]))
}

/// Outer product of the flattened inputs: a `(a.size, b.size)` array. Any dtype.
///
/// ```
/// use lazulite::{outer, Array};
/// let a = Array::from_slice(&[1i32, 2], &[2]).unwrap();
/// let b = Array::from_slice(&[3i32, 4], &[2]).unwrap();
/// assert_eq!(outer(&a, &b).unwrap().to_vec::<i32>().unwrap(), vec![3, 4, 6, 8]);
/// ```
pub fn outer(a: &Array, b: &Array) -> Result<Array> {
    multiply(&reshaped(a, &[a.size(), 1])?, &reshaped(b, &[b.size()])?)
}

/// Which axes [`tensordot`] contracts: the last `n` of `a` with the first `n` of `b`, or
/// two lists of axes paired in order.
///
/// ```
/// use lazulite::TensordotAxes;
/// let two: TensordotAxes = 2.into();
/// let pairs: TensordotAxes = ([1, 0], [0, 1]).into();
/// # let _ = (two, pairs);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TensordotAxes {
    /// Contract the last `n` axes of `a` with the first `n` of `b`.
    Count(i64),
    /// Contract these axes of `a` with these axes of `b`, pairwise.
    Pairs(Vec<i32>, Vec<i32>),
}

impl From<i64> for TensordotAxes {
    fn from(n: i64) -> TensordotAxes {
        TensordotAxes::Count(n)
    }
}
impl From<i32> for TensordotAxes {
    fn from(n: i32) -> TensordotAxes {
        TensordotAxes::Count(n as i64)
    }
}
impl From<(Vec<i32>, Vec<i32>)> for TensordotAxes {
    fn from((a, b): (Vec<i32>, Vec<i32>)) -> TensordotAxes {
        TensordotAxes::Pairs(a, b)
    }
}
impl<const N: usize> From<([i32; N], [i32; N])> for TensordotAxes {
    fn from((a, b): ([i32; N], [i32; N])) -> TensordotAxes {
        TensordotAxes::Pairs(a.to_vec(), b.to_vec())
    }
}

/// Normalises tensordot axes of an array with `ndim` dimensions (IndexError when out of
/// range, as MLX's axis errors), rejecting repeats.
fn contraction_axes(axes: &[i32], ndim: usize) -> Result<Vec<usize>> {
    let mut out = Vec::with_capacity(axes.len());
    for &ax in axes {
        let a = axis_in_range(ax, ndim).ok_or_else(|| {
            Error::axis(format!(
                "[tensordot] Invalid axis {ax} for array with {ndim} dimensions."
            ))
        })?;
        if out.contains(&a) {
            return Err(Error::value(format!(
                "[tensordot] Repeated axes in {axes:?}."
            )));
        }
        out.push(a);
    }
    Ok(out)
}

/// Sum of products over the given axes of `a` and `b`; the result has the remaining axes
/// of `a` then those of `b`. The promoted dtype must be floating point or complex.
///
/// ```
/// use lazulite::{ones, tensordot, DType};
/// let a = ones(&[2, 3, 4], DType::Float32).unwrap();
/// let b = ones(&[4, 3, 5], DType::Float32).unwrap();
/// let r = tensordot(&a, &b, ([1, 2], [1, 0])).unwrap();
/// assert_eq!((r.shape(), r.to_vec::<f32>().unwrap()[0]), (&[2, 5][..], 12.0));
/// assert_eq!(tensordot(&a, &ones(&[4, 5], DType::Float32).unwrap(), 1).unwrap().shape(), &[2, 3, 5]);
/// ```
pub fn tensordot(a: &Array, b: &Array, axes: impl Into<TensordotAxes>) -> Result<Array> {
    let (axes_a, axes_b) = match axes.into() {
        TensordotAxes::Count(n) => {
            if n < 0 {
                return Err(Error::value(
                    "[tensordot] axis must be greater or equal to 0.",
                ));
            }
            if n as usize > a.ndim().min(b.ndim()) {
                return Err(Error::value(format!(
                    "[tensordot] axis must be less than the number of dimensions of a and b \
                     (got {n} for shapes {} and {}).",
                    shape_text(a.shape()),
                    shape_text(b.shape())
                )));
            }
            let n = n as usize;
            ((a.ndim() - n..a.ndim()).collect(), (0..n).collect())
        }
        TensordotAxes::Pairs(x, y) => {
            if x.len() != y.len() {
                return Err(Error::value(format!(
                    "[tensordot] axes must have the same size, got {x:?} and {y:?}."
                )));
            }
            (
                contraction_axes(&x, a.ndim())?,
                contraction_axes(&y, b.ndim())?,
            )
        }
    };
    let (sa, sb) = (a.shape(), b.shape());
    if axes_a.iter().zip(&axes_b).any(|(&i, &j)| sa[i] != sb[j]) {
        return Err(Error::value(format!(
            "[tensordot] a and b must have the same shape on the contracted axes, got shapes \
             {} and {} with axes {axes_a:?} and {axes_b:?}.",
            shape_text(sa),
            shape_text(sb)
        )));
    }
    let free_a: Vec<usize> = (0..a.ndim()).filter(|i| !axes_a.contains(i)).collect();
    let free_b: Vec<usize> = (0..b.ndim()).filter(|i| !axes_b.contains(i)).collect();
    let size = |shape: &[usize], axes: &[usize]| axes.iter().map(|&i| shape[i]).product();
    let k: usize = size(sa, &axes_a);
    let (m, n): (usize, usize) = (size(sa, &free_a), size(sb, &free_b));
    let perm = |first: &[usize], second: &[usize]| -> Vec<i32> {
        first.iter().chain(second).map(|&i| i as i32).collect()
    };
    let at = reshaped(&transpose(a, &perm(&free_a, &axes_a))?, &[m, k])?;
    let bt = reshaped(&transpose(b, &perm(&axes_b, &free_b))?, &[k, n])?;
    let shape: Vec<usize> = free_a
        .iter()
        .map(|&i| sa[i])
        .chain(free_b.iter().map(|&i| sb[i]))
        .collect();
    reshaped(&matmul(&at, &bt)?, &shape)
}

/// Dot product of vectors along `axis` (negative counts from the end): `sum(conj(a) * b)`,
/// the other axes broadcast. Floating point and complex dtypes.
///
/// ```
/// use lazulite::{vecdot, Array};
/// let a = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
/// assert_eq!(vecdot(&a, &a, -1).unwrap().to_vec::<f32>().unwrap(), vec![5.0, 25.0]);
/// assert_eq!(vecdot(&a, &a, 0).unwrap().to_vec::<f32>().unwrap(), vec![10.0, 20.0]);
/// ```
pub fn vecdot(a: &Array, b: &Array, axis: i32) -> Result<Array> {
    if a.ndim() == 0 || b.ndim() == 0 {
        return Err(Error::value("[vecdot] inputs must be at least 1D."));
    }
    let axis_in = |x: &Array| -> Result<usize> {
        axis_in_range(axis, x.ndim()).ok_or_else(|| {
            Error::axis(format!(
                "[vecdot] axis {axis} is out of bounds for array with {} dimensions.",
                x.ndim()
            ))
        })
    };
    let (ia, ib) = (axis_in(a)?, axis_in(b)?);
    let k = a.shape()[ia];
    if k != b.shape()[ib] {
        return Err(Error::value(format!(
            "[vecdot] a and b must have the same size along axis {axis}, got shapes {} and {}.",
            shape_text(a.shape()),
            shape_text(b.shape())
        )));
    }
    let dtype = promote_types(a.dtype(), b.dtype());
    // Move the axis last, then multiply (..., 1, K) by (..., K, 1).
    let to_end = |x: &Array, ax: usize| -> Result<Array> {
        let perm: Vec<i32> = (0..x.ndim())
            .filter(|&i| i != ax)
            .chain([ax])
            .map(|i| i as i32)
            .collect();
        transpose(x, &perm)
    };
    if !dtype.is_inexact() {
        // Integers and bools: the sum of the products, with `sum`'s dtype rules (as MLX).
        let product = multiply(&to_end(a, ia)?, &to_end(b, ib)?)?;
        return crate::ops::reduce::sum(&product, -1, false);
    }
    let a = astype(a, dtype)?;
    let a = if dtype.is_complex() {
        conjugate(&a)?
    } else {
        a
    };
    let (a, b) = (to_end(&a, ia)?, to_end(b, ib)?);
    let lead = |x: &Array| x.shape()[..x.ndim() - 1].to_vec();
    let batch = broadcast_shapes(&lead(&a), &lead(&b)).map_err(|_| {
        Error::value(format!(
            "[vecdot] Shapes {} and {} cannot be broadcast.",
            shape_text(&lead(&a)),
            shape_text(&lead(&b))
        ))
    })?;
    let with = |tail: [usize; 2]| -> Vec<usize> { batch.iter().copied().chain(tail).collect() };
    let a = reshaped(&a, &[lead(&a), vec![1, k]].concat())?;
    let b = reshaped(&b, &[lead(&b), vec![k, 1]].concat())?;
    let a = broadcast_to(&a, &with([1, k]))?;
    let b = broadcast_to(&astype(&b, dtype)?, &with([k, 1]))?;
    let out = Array::from_op(Matmul, vec![a, b], with([1, 1]), dtype);
    reshaped(&out, &batch)
}

/// Kronecker product: blocks `a[i] * b`, after padding the shorter shape with leading
/// ones. Any dtype; empty inputs are an error (as in MLX).
///
/// ```
/// use lazulite::{kron, Array};
/// let a = Array::from_slice(&[1i32, 2], &[2]).unwrap();
/// let b = Array::from_slice(&[10i32, 20], &[2]).unwrap();
/// assert_eq!(kron(&a, &b).unwrap().to_vec::<i32>().unwrap(), vec![10, 20, 20, 40]);
/// ```
pub fn kron(a: &Array, b: &Array) -> Result<Array> {
    if a.size() == 0 || b.size() == 0 {
        return Err(Error::value(format!(
            "[kron] Input arrays cannot be empty, got shapes {} and {}.",
            shape_text(a.shape()),
            shape_text(b.shape())
        )));
    }
    let nd = a.ndim().max(b.ndim());
    let padded = |s: &[usize]| -> Vec<usize> {
        std::iter::repeat_n(1, nd - s.len())
            .chain(s.iter().copied())
            .collect()
    };
    let (pa, pb) = (padded(a.shape()), padded(b.shape()));
    let interleave = |first: &[usize], second: &[usize]| -> Vec<usize> {
        first
            .iter()
            .zip(second)
            .flat_map(|(&x, &y)| [x, y])
            .collect()
    };
    let ones_nd = vec![1; nd];
    let a = reshaped(a, &interleave(&pa, &ones_nd))?;
    let b = reshaped(b, &interleave(&ones_nd, &pb))?;
    let shape: Vec<usize> = pa.iter().zip(&pb).map(|(&x, &y)| x * y).collect();
    checked_size(&shape)?;
    reshaped(&multiply(&a, &b)?, &shape)
}

/// The Cholesky factor of each matrix in the last two axes of its input.
pub(crate) struct Cholesky {
    pub upper: bool,
}

impl Primitive for Cholesky {
    fn name(&self) -> &'static str {
        "cholesky"
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        MlxNode::single(
            "Cholesky",
            vec![MlxState::Bool(self.upper)],
            inputs,
            outputs,
        )
    }

    fn params(&self) -> String {
        format!("upper={}", self.upper)
    }

    fn eval(&self, inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        Ok(vec![cholesky_kernel(&inputs[0], self.upper)?])
    }

    fn vjp(
        &self,
        _: &[Array],
        outputs: &[Array],
        cotangents: &[Array],
        _: &[usize],
    ) -> Result<Vec<Array>> {
        Ok(vec![decompositions::cholesky_vjp(
            self,
            &outputs[0],
            &cotangents[0],
        )?])
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        Ok(vec![decompositions::cholesky_jvp(
            self,
            &inputs[0],
            &tangents[0],
        )?])
    }

    /// Each matrix is factored on its own: a batch axis is one more batch dimension.
    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let a = batch_to_front(&inputs[0], axes[0])?;
        Ok((vec![cholesky(&a, self.upper)?], vec![axes[0].map(|_| 0)]))
    }
}

/// The Cholesky factor of a symmetric positive semi-definite matrix (batched over the
/// leading axes): lower triangular `L` with `L @ Lᵀ = a`, or, if `upper`, `U = Lᵀ` with
/// `Uᵀ @ U = a`. Only the lower triangle of `a` is read. float32 or float64 (MLX's
/// `linalg.cholesky`). Where MLX leaves a matrix that is not positive semi-definite
/// undefined, its factor here is all NaN; a singular semi-definite matrix gets zero
/// columns for its zero pivots.
///
/// ```
/// use lazulite::{cholesky, Array};
/// let a = Array::from_slice(&[4.0f32, 2.0, 2.0, 3.0], &[2, 2])?;
/// let l = cholesky(&a, false)?;
/// assert_eq!(l.to_vec::<f32>()?, vec![2.0, 0.0, 1.0, 2f32.sqrt()]);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn cholesky(a: &Array, upper: bool) -> Result<Array> {
    if a.ndim() < 2 {
        return Err(Error::value(format!(
            "[linalg::cholesky] Arrays must have >= 2 dimensions. Received array with {} dimensions.",
            a.ndim()
        )));
    }
    if a.shape()[a.ndim() - 1] != a.shape()[a.ndim() - 2] {
        return Err(Error::value(
            "[linalg::cholesky] Cholesky decomposition is only defined for square matrices.",
        ));
    }
    if !matches!(a.dtype(), DType::Float32 | DType::Float64) {
        return Err(Error::value(format!(
            "[linalg::cholesky] Arrays must have type float32 or float64. Received array with type {}.",
            a.dtype()
        )));
    }
    Ok(Array::from_op(
        Cholesky { upper },
        vec![a.clone()],
        a.shape().to_vec(),
        a.dtype(),
    ))
}

mod decompositions;
mod einsum;
mod gather_mm;
mod masked_mm;
mod norm;
pub use decompositions::{
    cholesky_inv, det, eig, eigh, eigvals, eigvalsh, inv, lu, lu_factor, pinv, qr, slogdet, solve,
    solve_triangular, svd, tri_inv,
};
pub use einsum::{einsum, einsum_path};
pub use gather_mm::gather_mm;
pub(crate) use gather_mm::{indices_or_default, matrix_stack};
pub use masked_mm::{block_masked_mm, segmented_mm};
pub use norm::{cross, norm, NormOrd};
