//! Functions with user-supplied transform rules ([`CustomFunction`], MLX's
//! `mx.custom_function`) and gradient checkpointing ([`checkpoint`]) built on them.
//!
//! Design: calling a custom function records the wrapped function on its inputs as an
//! ordinary lazy graph (the "inner" graph), then records one `Custom` node whose inputs
//! are the function's inputs and whose outputs have the inner outputs' shapes and dtypes.
//! The node holds the inner outputs privately, not as graph inputs, so the transforms see
//! only the `Custom` node and use its rules instead of walking the inner graph. Evaluating
//! the node evaluates the inner outputs and hands their data over; the inner graph is then
//! dropped, so none of its intermediates outlive the call (what [`checkpoint`] needs).
//! When a node is evaluated again (dataflow graphs re-run after a placeholder changes),
//! the function is recorded afresh on the new input values.
//!
//! A rule the user did not supply falls back to the transform of the wrapped function:
//! `vjp`/`jvp`/`vmap` of `f` itself. Under `vmap`, the batched result is the vmap rule's
//! output, so a custom vjp applies to unbatched calls only (as in MLX).
//!
//! [`Fused`] is the same idea inside the library: an op computed by a fused kernel whose
//! transforms are those of the composition of ordinary ops it stands for.

use super::jvp::jvp;
use super::vjp::vjp_argnums;
use super::vmap::vmap;
use crate::array::Array;
use crate::backend::Tensor;
use crate::error::{Error, Result};
use crate::ops::{conjugate_if_complex, zeros_like};
use crate::primitive::{Export, OutputSpec, Primitive};
use std::sync::{Arc, Mutex};

pub(crate) type Forward = dyn Fn(&[Array]) -> Result<Vec<Array>> + Send + Sync;
type VjpRule = dyn Fn(&[Array], &[Array], &[Array]) -> Result<Vec<Array>> + Send + Sync;
type JvpRule = dyn Fn(&[Array], &[Array]) -> Result<Vec<Array>> + Send + Sync;
type VmapRule =
    dyn Fn(&[Array], &[Option<usize>]) -> Result<(Vec<Array>, Vec<Option<usize>>)> + Send + Sync;

#[derive(Clone)]
struct Rules {
    forward: Arc<Forward>,
    vjp: Option<Arc<VjpRule>>,
    jvp: Option<Arc<JvpRule>>,
    vmap: Option<Arc<VmapRule>>,
}

/// A function of arrays with optional custom `vjp`, `jvp` and `vmap` rules (MLX's
/// `mx.custom_function` with its `.vjp`, `.jvp` and `.vmap` decorators). Call it with
/// [`CustomFunction::call`]; the transforms use the custom rules where given and
/// differentiate or batch the function itself otherwise.
///
/// ```
/// use lazulite::{custom_function, grad, Array};
/// // sin, with a gradient deliberately scaled by 10 to show that the rule is used.
/// let f = custom_function(|x: &[Array]| Ok(vec![x[0].sin()?]))
///     .vjp(|primals, cotangents, _outputs| {
///         Ok(vec![(&(&cotangents[0] * &primals[0].cos()?) * 10.0)])
///     });
/// let g = grad(move |x: &Array| Ok(f.call(&[x.clone()])?.remove(0)));
/// assert_eq!(g(&Array::scalar(0.0f32)).unwrap().item::<f32>().unwrap(), 10.0);
/// ```
#[derive(Clone)]
pub struct CustomFunction {
    rules: Rules,
}

/// Wraps `f` as a [`CustomFunction`] (no custom rules yet: add them with its `vjp`,
/// `jvp` and `vmap` methods).
///
/// ```
/// use lazulite::{custom_function, Array};
/// let f = custom_function(|x: &[Array]| Ok(vec![x[0].square()?]));
/// let y = f.call(&[Array::scalar(3.0f32)]).unwrap();
/// assert_eq!(y[0].item::<f32>().unwrap(), 9.0);
/// ```
pub fn custom_function<F>(f: F) -> CustomFunction
where
    F: Fn(&[Array]) -> Result<Vec<Array>> + Send + Sync + 'static,
{
    CustomFunction {
        rules: Rules {
            forward: Arc::new(f),
            vjp: None,
            jvp: None,
            vmap: None,
        },
    }
}

impl CustomFunction {
    /// Sets the vector-Jacobian product: `rule(primals, cotangents, outputs)` returns one
    /// cotangent per primal (of its shape).
    ///
    /// ```
    /// use lazulite::{custom_function, vjp, Array};
    /// let f = custom_function(|x: &[Array]| Ok(vec![x[0].exp()?]))
    ///     .vjp(|_, cotangents, outputs| Ok(vec![&cotangents[0] * &outputs[0]]));
    /// let (_, g) = vjp(|x| f.call(x), &[Array::scalar(0.0f32)], &[Array::scalar(2.0f32)]).unwrap();
    /// assert_eq!(g[0].item::<f32>().unwrap(), 2.0);
    /// ```
    pub fn vjp<R>(mut self, rule: R) -> CustomFunction
    where
        R: Fn(&[Array], &[Array], &[Array]) -> Result<Vec<Array>> + Send + Sync + 'static,
    {
        self.rules.vjp = Some(Arc::new(rule));
        self
    }

    /// Sets the Jacobian-vector product: `rule(primals, tangents)` returns one tangent per
    /// output (of its shape).
    ///
    /// ```
    /// use lazulite::{custom_function, jvp, Array};
    /// let f = custom_function(|x: &[Array]| Ok(vec![x[0].sin()?]))
    ///     .jvp(|primals, tangents| Ok(vec![&tangents[0] * &primals[0].cos()?]));
    /// let (_, t) = jvp(|x| f.call(x), &[Array::scalar(0.0f32)], &[Array::scalar(3.0f32)]).unwrap();
    /// assert_eq!(t[0].item::<f32>().unwrap(), 3.0);
    /// ```
    pub fn jvp<R>(mut self, rule: R) -> CustomFunction
    where
        R: Fn(&[Array], &[Array]) -> Result<Vec<Array>> + Send + Sync + 'static,
    {
        self.rules.jvp = Some(Arc::new(rule));
        self
    }

    /// Sets the batching rule: `rule(inputs, axes)` gets the inputs batched along `axes`
    /// (`None`: not batched) and returns the batched outputs and their batch axes.
    ///
    /// ```
    /// use lazulite::{custom_function, vmap, Array};
    /// let f = custom_function(|x: &[Array]| Ok(vec![x[0].square()?]))
    ///     .vmap(|inputs, axes| Ok((vec![inputs[0].square()?], axes.to_vec())));
    /// let xs = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    /// let ys = vmap(move |x| f.call(x), vec![Some(0)], vec![Some(0)])(&[xs]).unwrap();
    /// assert_eq!(ys[0].to_vec::<f32>().unwrap(), vec![1.0, 4.0]);
    /// ```
    pub fn vmap<R>(mut self, rule: R) -> CustomFunction
    where
        R: Fn(&[Array], &[Option<usize>]) -> Result<(Vec<Array>, Vec<Option<usize>>)>
            + Send
            + Sync
            + 'static,
    {
        self.rules.vmap = Some(Arc::new(rule));
        self
    }

    /// Applies the function to `inputs`.
    ///
    /// ```
    /// use lazulite::{custom_function, multiply, Array};
    /// let f = custom_function(|x: &[Array]| Ok(vec![multiply(&x[0], &x[1])?]));
    /// let y = f.call(&[Array::scalar(3.0f32), Array::scalar(4.0f32)])?;
    /// assert_eq!(y[0].item::<f32>()?, 12.0);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn call(&self, inputs: &[Array]) -> Result<Vec<Array>> {
        let outputs = (self.rules.forward)(inputs)?;
        let output_specs = Array::specs(&outputs);
        let node = Custom {
            rules: self.rules.clone(),
            outputs: output_specs.clone(),
            pending: Mutex::new(Some(outputs)),
        };
        Ok(Array::from_op_multi(node, inputs.to_vec(), output_specs))
    }
}

/// The node a [`CustomFunction`] call records (see the module documentation).
struct Custom {
    rules: Rules,
    /// Shapes and dtypes of the outputs.
    outputs: Vec<OutputSpec>,
    /// The inner outputs recorded by the call, until the node is first evaluated.
    pending: Mutex<Option<Vec<Array>>>,
}

impl Custom {
    fn check(what: &str, got: &[Array], expected: &[OutputSpec]) -> Result<()> {
        if got.len() != expected.len() {
            return Err(Error::value(format!(
                "[custom_function] The custom {what} returned {} arrays, expected {}.",
                got.len(),
                expected.len()
            )));
        }
        for (g, e) in got.iter().zip(expected) {
            if g.shape() != e.shape {
                return Err(Error::value(format!(
                    "[custom_function] The custom {what} returned an array of shape {:?}, \
                     expected {:?}.",
                    g.shape(),
                    e.shape
                )));
            }
        }
        Ok(())
    }
}

impl Primitive for Custom {
    fn name(&self) -> &'static str {
        "custom_function"
    }

    fn runs_on_caller(&self) -> bool {
        true
    }

    fn export(&self, _: &[OutputSpec], _: &[OutputSpec]) -> Result<Export> {
        Ok(Export::Composed(self.rules.forward.clone()))
    }

    fn eval(&self, inputs: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let recorded = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            // Outputs recorded while `compile` traced depend on its stand-ins: a replay of
            // the trace runs the forward on the values instead.
            .filter(|inner| !inner.iter().any(|a| a.node.flags().stand_in));
        let inner = match recorded {
            Some(inner) => inner,
            None => {
                let args: Vec<Array> = inputs.into_iter().map(Array::from_tensor).collect();
                (self.rules.forward)(&args)?
            }
        };
        Custom::check("function", &inner, outputs)?;
        crate::eval::eval(&inner.iter().collect::<Vec<_>>())?;
        inner
            .iter()
            .zip(outputs)
            .map(|(a, spec)| {
                if a.dtype() != spec.dtype {
                    return Err(Error::value(format!(
                        "[custom_function] The function returned {} where {} was recorded.",
                        a.dtype(),
                        spec.dtype
                    )));
                }
                a.tensor()
            })
            .collect()
    }

    fn vjp(
        &self,
        inputs: &[Array],
        outputs: &[Array],
        cotangents: &[Array],
        argnums: &[usize],
    ) -> Result<Vec<Array>> {
        if let Some(rule) = &self.rules.vjp {
            // A user's rule speaks MLX's gradient convention; the engine's rules the
            // holomorphic one (see vjp.rs): complex cotangents are conjugated across it.
            let cotangents = cotangents
                .iter()
                .map(conjugate_if_complex)
                .collect::<Result<Vec<_>>>()?;
            let grads = rule(inputs, &cotangents, outputs)?;
            Custom::check("vjp", &grads, &Array::specs(inputs))?;
            return argnums
                .iter()
                .map(|&i| conjugate_if_complex(&grads[i].astype(inputs[i].dtype())?))
                .collect();
        }
        composed_vjp(&self.rules.forward, inputs, cotangents, argnums)
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], argnums: &[usize]) -> Result<Vec<Array>> {
        match &self.rules.jvp {
            Some(rule) => {
                let out = rule(inputs, &all_tangents(inputs, tangents, argnums)?)?;
                Custom::check("jvp", &out, &self.outputs)?;
                Ok(out)
            }
            None => composed_jvp(&self.rules.forward, inputs, tangents, argnums),
        }
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        if let Some(rule) = &self.rules.vmap {
            let (outs, out_axes) = rule(inputs, axes)?;
            if out_axes.len() != outs.len() {
                return Err(Error::value(format!(
                    "[custom_function] The custom vmap returned {} arrays and {} axes.",
                    outs.len(),
                    out_axes.len()
                )));
            }
            return Ok((outs, out_axes));
        }
        composed_vmap(&self.rules.forward, inputs, axes)
    }
}

/// A tangent for every input: those listed in `argnums`, zeros for the others.
fn all_tangents(inputs: &[Array], tangents: &[Array], argnums: &[usize]) -> Result<Vec<Array>> {
    (0..inputs.len())
        .map(|i| match argnums.iter().position(|&a| a == i) {
            Some(k) => Ok(tangents[k].clone()),
            None => zeros_like(&inputs[i]),
        })
        .collect()
}

/// The vjp rule of a node that stands for `forward`: the vjp of `forward` itself.
fn composed_vjp(
    forward: &Arc<Forward>,
    inputs: &[Array],
    cotangents: &[Array],
    argnums: &[usize],
) -> Result<Vec<Array>> {
    let (_, grads) = vjp_argnums(|x| forward(x), inputs, argnums, |_| Ok(cotangents.to_vec()))?;
    Ok(grads)
}

/// The jvp rule of a node that stands for `forward`: the jvp of `forward` itself.
fn composed_jvp(
    forward: &Arc<Forward>,
    inputs: &[Array],
    tangents: &[Array],
    argnums: &[usize],
) -> Result<Vec<Array>> {
    let full = all_tangents(inputs, tangents, argnums)?;
    Ok(jvp(|x| forward(x), inputs, &full)?.1)
}

/// The vmap rule of a node that stands for `forward`: `forward` batched, outputs along 0.
fn composed_vmap(
    forward: &Arc<Forward>,
    inputs: &[Array],
    axes: &[Option<usize>],
) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
    let forward = forward.clone();
    let in_axes = axes.iter().map(|a| a.map(|a| a as i32)).collect();
    let outs = vmap(move |x| forward(x), in_axes, vec![Some(0)])(inputs)?;
    let out_axes = vec![Some(0); outs.len()];
    Ok((outs, out_axes))
}

/// The kernel of a [`Fused`] node: its evaluated inputs to its outputs.
pub(crate) type FusedKernel = dyn Fn(Vec<Tensor>) -> Result<Vec<Tensor>> + Send + Sync;

/// A node computed by one fused kernel that stands for `composed`, a function of ordinary
/// ops with the same inputs and output: evaluation runs the kernel, and the transforms
/// differentiate and batch `composed`, so a fused op needs no rules of its own and cannot
/// disagree with its composition about them.
pub(crate) struct Fused {
    pub name: &'static str,
    pub params: String,
    pub kernel: Box<FusedKernel>,
    pub composed: Arc<Forward>,
}

impl Fused {
    /// Records the node on `inputs` with the output of `composed`'s shape and dtype.
    pub fn record(self, inputs: Vec<Array>, shape: Vec<usize>, dtype: crate::DType) -> Array {
        Array::from_op(self, inputs, shape, dtype)
    }

    /// Records the node on `inputs` with the outputs of `composed`'s shapes and dtypes.
    pub fn record_multi(self, inputs: Vec<Array>, outputs: Vec<OutputSpec>) -> Vec<Array> {
        Array::from_op_multi(self, inputs, outputs)
    }
}

impl Primitive for Fused {
    fn name(&self) -> &'static str {
        self.name
    }

    fn params(&self) -> String {
        self.params.clone()
    }

    fn export(&self, _: &[OutputSpec], _: &[OutputSpec]) -> Result<Export> {
        Ok(Export::Composed(self.composed.clone()))
    }

    fn output_shapes(&self, inputs: &[OutputSpec]) -> Result<Vec<Vec<usize>>> {
        composed_output_shapes(self.composed.as_ref(), inputs)
    }

    fn eval(&self, inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        (self.kernel)(inputs)
    }

    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        cotangents: &[Array],
        argnums: &[usize],
    ) -> Result<Vec<Array>> {
        composed_vjp(&self.composed, inputs, cotangents, argnums)
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], argnums: &[usize]) -> Result<Vec<Array>> {
        composed_jvp(&self.composed, inputs, tangents, argnums)
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        composed_vmap(&self.composed, inputs, axes)
    }
}

/// The output shapes of `composed` at inputs of shapes `inputs`: the composition's own
/// shape rules decide, recorded on value-less stand-ins.
fn composed_output_shapes(composed: &Forward, inputs: &[OutputSpec]) -> Result<Vec<Vec<usize>>> {
    let stand_ins = inputs
        .iter()
        .map(|s| crate::ops::zeros(&s.shape, s.dtype))
        .collect::<Result<Vec<_>>>()?;
    let outputs = crate::ops::trace::with_shapeless_trace(true, || composed(&stand_ins))?;
    Ok(outputs.iter().map(|a| a.shape().to_vec()).collect())
}

/// `f` with gradient checkpointing (MLX's `mx.checkpoint`): the forward pass computes
/// the outputs without keeping `f`'s intermediates, and the backward pass recomputes them
/// from the inputs, trading compute for memory.
///
/// ```
/// use lazulite::{checkpoint, grad, Array};
/// let f = checkpoint(|x: &[Array]| Ok(vec![x[0].sin()?.exp()?]));
/// let g = grad(move |x: &Array| Ok(f(&[x.clone()])?.remove(0)));
/// let expected = 1.0f32.cos() * 1.0f32.sin().exp();
/// assert!((g(&Array::scalar(1.0f32)).unwrap().item::<f32>().unwrap() - expected).abs() < 1e-6);
/// ```
pub fn checkpoint<F>(f: F) -> impl Fn(&[Array]) -> Result<Vec<Array>> + Clone
where
    F: Fn(&[Array]) -> Result<Vec<Array>> + Send + Sync + 'static,
{
    let f = Arc::new(f);
    let recompute = f.clone();
    let wrapped = custom_function(move |x| f(x)).vjp(move |primals, cotangents, _| {
        let argnums: Vec<usize> = (0..primals.len()).collect();
        let (_, grads) = vjp_argnums(
            |x| recompute(x),
            primals,
            &argnums,
            |_| Ok(cotangents.to_vec()),
        )?;
        Ok(grads)
    });
    move |inputs: &[Array]| wrapped.call(inputs)
}
