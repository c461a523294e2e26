//! Softmax and logsumexp: the `Softmax` and `LogSumExp` primitives (one axis, fused row
//! kernels) and the public functions, which compose max, exp, sum, divide and log for
//! several axes and for complex inputs.

use crate::array::Array;
use crate::backend::cpu::softmax::{logsumexp as logsumexp_kernel, softmax as softmax_kernel};
use crate::backend::Tensor;
use crate::dtype::{finfo, DType};
use crate::error::{Error, Result};
use crate::ops::batching::batch_to_front;
use crate::ops::binary::{divide, maximum, minimum, multiply, subtract};
use crate::ops::cast::astype;
use crate::ops::reduce::{max, resolve_axes, shaped_as, sum};
use crate::ops::unary::{exp, log, stop_gradient};
use crate::ops::view::reshape;
use crate::primitive::{
    mlx_chain, with_shape, Export, MlxInput, MlxNode, MlxState, OutputSpec, Primitive,
};
use crate::shape::Axes;

/// `exp(x) / sum(exp(x))` along `axis` of a floating, non-complex input; the output has
/// the input's shape and dtype. `precise`: half types compute in float32, rounding once.
pub(crate) struct Softmax {
    pub axis: usize,
    pub precise: bool,
}

impl Softmax {
    fn record(&self, x: &Array) -> Array {
        let primitive = Softmax {
            axis: self.axis,
            precise: self.precise,
        };
        Array::from_op(primitive, vec![x.clone()], x.shape().to_vec(), x.dtype())
    }

    /// `s * (v - sum(v * s))` along the axis: the derivative of softmax (output `s`)
    /// applied to `v`, which is symmetric, so it serves vjp and jvp alike.
    fn apply_derivative(&self, s: &Array, v: &Array) -> Result<Array> {
        let dot = sum(&multiply(v, s)?, self.axis as i32, true)?;
        let d = multiply(s, &subtract(v, &dot)?)?;
        astype(&d, s.dtype())
    }
}

impl Primitive for Softmax {
    fn name(&self) -> &'static str {
        "softmax"
    }

    fn output_shapes(&self, inputs: &[OutputSpec]) -> Result<Vec<Vec<usize>>> {
        crate::primitive::same_shape(inputs)
    }

    fn params(&self) -> String {
        format!("axis={}, precise={}", self.axis, self.precise)
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        // MLX's Softmax works along the last axis: move the axis there and back.
        let (first, moved) = to_last_axis(&inputs[0], self.axis);
        let softmax = ("Softmax", vec![MlxState::Bool(self.precise)], moved.clone());
        let Some(first) = first else {
            return MlxNode::single("Softmax", softmax.1, inputs, outputs);
        };
        let back = inverse_permutation(inputs[0].shape.len(), self.axis);
        let back = ("Transpose", vec![MlxState::Ints(back)], outputs[0].clone());
        mlx_chain(first, vec![softmax, back])
    }

    fn eval(&self, mut inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let x = inputs.pop().expect("softmax has one input");
        Ok(vec![softmax_kernel(&x, self.axis, self.precise)?])
    }

    fn vjp(
        &self,
        _: &[Array],
        outputs: &[Array],
        cotangents: &[Array],
        _: &[usize],
    ) -> Result<Vec<Array>> {
        Ok(vec![self.apply_derivative(&outputs[0], &cotangents[0])?])
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        let s = self.record(&inputs[0]);
        Ok(vec![self.apply_derivative(&s, &tangents[0])?])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let x = batch_to_front(&inputs[0], axes[0])?;
        let batched = Softmax {
            axis: self.axis + 1,
            precise: self.precise,
        };
        Ok((vec![batched.record(&x)], vec![Some(0)]))
    }
}

/// `exp(a) / sum(exp(a))` over `axes`, shifted by the maximum for stability. Integers
/// compute in float32; with `precise`, float16 and bfloat16 compute in float32 and round
/// once. A row of all `-inf` gives NaN (as in MLX and NumPy).
///
/// ```
/// use lazulite::{softmax, Array, Axes};
/// let a = Array::from_slice(&[0.0f32, 0.0, 1000.0, 1000.0], &[2, 2]).unwrap();
/// assert_eq!(softmax(&a, -1, false).unwrap().to_vec::<f32>().unwrap(), vec![0.5; 4]);
/// assert_eq!(softmax(&a, Axes::All, false).unwrap().to_vec::<f32>().unwrap(), vec![0.0, 0.0, 0.5, 0.5]);
/// ```
pub fn softmax(a: &Array, axes: impl Into<Axes>, precise: bool) -> Result<Array> {
    let axes = resolve_axes("softmax", &axes.into(), a.ndim())?;
    let out = a.dtype().to_inexact();
    if a.size() == 0 {
        return astype(a, out);
    }
    let x = astype(a, out)?;
    if let ([axis], false) = (axes.as_slice(), out.is_complex()) {
        let primitive = Softmax {
            axis: *axis,
            precise,
        };
        return Ok(primitive.record(&x));
    }
    let compute = match out {
        DType::Float16 | DType::BFloat16 if precise => DType::Float32,
        other => other,
    };
    let x = astype(&x, compute)?;
    let axes = Axes::List(axes.iter().map(|&d| d as i32).collect());
    let shift = stop_gradient(&max(&x, axes.clone(), true)?)?;
    let e = exp(&subtract(&x, &shift)?)?;
    let total = sum(&e, axes, true)?;
    astype(&divide(&e, &total)?, out)
}

/// `log(sum(exp(x)))` along `axis` of a floating, non-complex input, of the input's
/// dtype (half types compute in float32 and round once).
pub(crate) struct LogSumExp {
    pub axis: usize,
    pub keepdims: bool,
}

impl LogSumExp {
    fn record(&self, x: &Array) -> Array {
        let mut shape = x.shape().to_vec();
        if self.keepdims {
            shape[self.axis] = 1;
        } else {
            shape.remove(self.axis);
        }
        let primitive = LogSumExp {
            axis: self.axis,
            keepdims: self.keepdims,
        };
        Array::from_op(primitive, vec![x.clone()], shape, x.dtype())
    }

    /// The derivative of logsumexp with respect to `x`: softmax along the axis.
    fn weights(&self, x: &Array) -> Array {
        let softmax = Softmax {
            axis: self.axis,
            precise: true,
        };
        softmax.record(x)
    }
}

impl Primitive for LogSumExp {
    fn name(&self) -> &'static str {
        "logsumexp"
    }

    fn output_shapes(&self, inputs: &[OutputSpec]) -> Result<Vec<Vec<usize>>> {
        let mut shape = inputs[0].shape.clone();
        if self.keepdims {
            shape[self.axis] = 1;
        } else {
            shape.remove(self.axis);
        }
        Ok(vec![shape])
    }

    fn params(&self) -> String {
        format!("axis={}, keepdims={}", self.axis, self.keepdims)
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        // MLX's LogSumExp reduces the last axis and keeps it.
        let (first, moved) = to_last_axis(&inputs[0], self.axis);
        let mut kept = moved.shape.clone();
        *kept.last_mut().expect("logsumexp has an axis") = 1;
        let kept = with_shape(&outputs[0], kept);
        let (first, mut then) = match first {
            Some(t) => (t, vec![("LogSumExp", vec![], kept.clone())]),
            None => (
                MlxNode::new("LogSumExp", vec![], vec![MlxInput::Input(0)], kept.clone()),
                vec![],
            ),
        };
        if kept.shape != outputs[0].shape {
            // Squeeze and expand rather than reshape to fixed sizes, so that a shapeless
            // export runs at other shapes in MLX.
            let last = kept.shape.len() as i32 - 1;
            let mut squeezed = kept.clone();
            squeezed.shape.pop();
            if self.keepdims {
                then.push(("Squeeze", vec![MlxState::Ints(vec![last])], squeezed));
                let axis = vec![self.axis as i32];
                then.push(("ExpandDims", vec![MlxState::Ints(axis)], outputs[0].clone()));
            } else {
                then.push((
                    "Squeeze",
                    vec![MlxState::Ints(vec![last])],
                    outputs[0].clone(),
                ));
            }
        }
        mlx_chain(first, then)
    }

    fn eval(&self, mut inputs: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let x = inputs.pop().expect("logsumexp has one input");
        let t = logsumexp_kernel(&x, self.axis)?;
        Ok(vec![shaped_as(t, &outputs[0])])
    }

    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        cotangents: &[Array],
        _: &[usize],
    ) -> Result<Vec<Array>> {
        let x = &inputs[0];
        let g = if self.keepdims {
            cotangents[0].clone()
        } else if crate::ops::trace::in_shapeless_trace() {
            // The axis inserted back: a shapeless replay infers the new shape.
            crate::ops::shape::expand_dims(&cotangents[0], self.axis as i32)?
        } else {
            let mut kept: Vec<i64> = x.shape().iter().map(|&d| d as i64).collect();
            kept[self.axis] = 1;
            reshape(&cotangents[0], &kept)?
        };
        let grad = multiply(&g, self.weights(x))?;
        Ok(vec![astype(&grad, x.dtype())?])
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        let x = &inputs[0];
        let weighted = multiply(&tangents[0], self.weights(x))?;
        let total = sum(&weighted, self.axis as i32, self.keepdims)?;
        Ok(vec![astype(&total, x.dtype())?])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let x = batch_to_front(&inputs[0], axes[0])?;
        let batched = LogSumExp {
            axis: self.axis + 1,
            keepdims: self.keepdims,
        };
        Ok((vec![batched.record(&x)], vec![Some(0)]))
    }
}

/// `log(sum(exp(a)))` over `axes`, computed stably by shifting by the maximum. Rows of
/// all `-inf` give `-inf`, a `+inf` gives `+inf`. Integers compute in float32. An empty
/// array is an error.
///
/// ```
/// let a = lazulite::Array::from_slice(&[1000.0f32, 1000.0, f32::NEG_INFINITY, f32::NEG_INFINITY], &[2, 2]).unwrap();
/// let l = lazulite::logsumexp(&a, 1, false).unwrap().to_vec::<f32>().unwrap();
/// assert!((l[0] - (1000.0 + 2f32.ln())).abs() < 1e-3);
/// assert_eq!(l[1], f32::NEG_INFINITY);
/// ```
pub fn logsumexp(a: &Array, axes: impl Into<Axes>, keepdims: bool) -> Result<Array> {
    let axes = resolve_axes("logsumexp", &axes.into(), a.ndim())?;
    if a.size() == 0 {
        return Err(Error::value("[logsumexp] Received empty array."));
    }
    let dtype = a.dtype().to_inexact();
    let x = astype(a, dtype)?;
    if let ([axis], false) = (axes.as_slice(), dtype.is_complex()) {
        let primitive = LogSumExp {
            axis: *axis,
            keepdims,
        };
        return Ok(primitive.record(&x));
    }
    // Axes of size 1 add nothing to the sum: with at most one longer axis among them,
    // one pass of the kernel reduces it (a sampler's `logsumexp(logits)` over a (1, V)
    // row). Not in a shapeless trace, whose replay may meet other sizes.
    let long_axes: Vec<usize> = axes
        .iter()
        .copied()
        .filter(|&d| a.shape()[d] != 1)
        .collect();
    let shapeless = crate::ops::trace::in_shapeless_trace();
    if !axes.is_empty() && long_axes.len() <= 1 && !dtype.is_complex() && !shapeless {
        let primitive = LogSumExp {
            axis: long_axes.first().copied().unwrap_or(axes[0]),
            keepdims: true,
        };
        let kept = primitive.record(&x);
        let shape: Vec<i64> = (0..a.ndim())
            .filter(|d| keepdims || !axes.contains(d))
            .map(|d| kept.shape()[d] as i64)
            .collect();
        return reshape(&kept, &shape);
    }
    let axes_list = Axes::List(axes.iter().map(|&d| d as i32).collect());
    let mut shift = max(&x, axes_list.clone(), true)?;
    if let (false, Some(info)) = (dtype.is_complex(), finfo(dtype)) {
        // A shift clamped to the finite range keeps rows of -inf (exp gives 0, log -inf)
        // and of +inf (inf - finite) free of inf - inf.
        shift = minimum(&maximum(&shift, info.min)?, info.max)?;
    }
    let shift = stop_gradient(&shift)?;
    let summed = sum(&exp(&subtract(&x, &shift)?)?, axes_list, true)?;
    let out = crate::ops::binary::add(&log(&summed)?, &shift)?;
    if keepdims {
        return Ok(out);
    }
    if crate::ops::trace::in_shapeless_trace() {
        // A squeeze, which a shapeless replay infers at new shapes.
        let axes: Vec<i32> = axes.iter().map(|&d| d as i32).collect();
        return crate::ops::shape::squeeze(&out, axes);
    }
    let shape: Vec<i64> = (0..a.ndim())
        .filter(|d| !axes.contains(d))
        .map(|d| a.shape()[d] as i64)
        .collect();
    reshape(&out, &shape)
}

/// A Transpose moving `axis` of `x` last (`None` when it is last already) and the
/// shape it produces.
fn to_last_axis(x: &OutputSpec, axis: usize) -> (Option<MlxNode>, OutputSpec) {
    let n = x.shape.len();
    if axis + 1 == n {
        return (None, x.clone());
    }
    let perm: Vec<usize> = (0..n).filter(|&a| a != axis).chain([axis]).collect();
    let moved = with_shape(x, perm.iter().map(|&a| x.shape[a]).collect());
    let axes = perm.iter().map(|&a| a as i32).collect();
    let node = MlxNode::new(
        "Transpose",
        vec![MlxState::Ints(axes)],
        vec![MlxInput::Input(0)],
        moved.clone(),
    );
    (Some(node), moved)
}

/// The axes that undo moving `axis` of an `n`-dimensional array last.
fn inverse_permutation(n: usize, axis: usize) -> Vec<i32> {
    (0..n as i32)
        .map(|a| match (a as usize).cmp(&axis) {
            std::cmp::Ordering::Less => a,
            std::cmp::Ordering::Equal => n as i32 - 1,
            std::cmp::Ordering::Greater => a - 1,
        })
        .collect()
}
