//! The `fast` submodule (`mx.fast`): rms_norm, layer_norm, rope,
//! scaled_dot_product_attention and gated_delta_update with MLX's signatures.

use crate::bind;
use crate::convert::{Arr, Opd};
use crate::signature::Hint;
use lazulite::fast::{self as lzf, AttentionMask, RopeFrequencies};
use lazulite::{Array, Error};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;

/// The `mask` argument of attention: `None`, the string `"causal"` or an array.
pub struct Mask(pub AttentionMask);

impl<'a, 'py> FromPyObject<'a, 'py> for Mask {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Mask> {
        if let Ok(s) = obj.cast::<PyString>() {
            let s = s.to_str()?;
            if s == "causal" {
                return Ok(Mask(AttentionMask::Causal));
            }
            return Err(PyValueError::new_err(format!(
                "[scaled_dot_product_attention] invalid mask option '{s}'. Must be 'causal', \
                 or an array."
            )));
        }
        Ok(Mask(AttentionMask::Array(obj.extract::<Arr>()?.0)))
    }
}

impl Hint for Mask {
    fn hint() -> String {
        "None | str | array".into()
    }
}

fn rope_from_python(
    a: &Array,
    dims: i64,
    traditional: bool,
    base: Option<f32>,
    scale: f32,
    offset: Opd,
    freqs: Option<Arr>,
) -> lazulite::Result<Array> {
    let dims = usize::try_from(dims)
        .map_err(|_| Error::value(format!("[rope] dims must be non-negative but got {dims}.")))?;
    let frequencies = match (base, freqs) {
        (Some(b), None) => RopeFrequencies::Base(b),
        (None, Some(f)) => RopeFrequencies::Freqs(f.0),
        (None, None) => return Err(Error::value("[rope] Neither base nor freqs has a value.")),
        (Some(_), Some(_)) => {
            return Err(Error::value(
                "[rope] Only one of base or freqs can have a value.",
            ))
        }
    };
    lzf::rope(a, dims, traditional, frequencies, scale, offset.0)
}

/// `logsumexp(logits, -1) - logits[..., targets]` as a float32 array, checked as MLX
/// checks it.
fn fast_cross_entropy(logits: &Array, targets: &Array) -> lazulite::Result<Array> {
    if !logits.dtype().is_floating() {
        return Err(Error::value(format!(
            "[cross_entropy] Received unsupported logits type {}.",
            logits.dtype()
        )));
    }
    if !targets.dtype().is_integer() {
        return Err(Error::value(format!(
            "[cross_entropy] targets must be integer class indices but got {}.",
            targets.dtype()
        )));
    }
    let shape = logits.shape();
    if shape.is_empty() || targets.shape() != &shape[..shape.len() - 1] {
        return Err(Error::value(format!(
            "[cross_entropy] targets shape {:?} does not match logits shape {:?} with the last axis removed.",
            targets.shape(),
            shape
        )));
    }
    // As MLX's CPU version: reduced in the logits' dtype, the loss given in float32.
    let total = lazulite::logsumexp(logits, -1, false)?;
    let picked = lazulite::take_along_axis(logits, &lazulite::expand_dims(targets, -1)?, Some(-1))?;
    let loss = lazulite::subtract(&total, &lazulite::squeeze(&picked, -1)?)?;
    lazulite::astype(&loss, lazulite::DType::Float32)
}

bind! {
    functions {
        /// Cross entropy loss with class indices as targets: ``logsumexp(logits, axis=-1)
        /// - logits[..., target]``, computed in the dtype of ``logits`` (as MLX's CPU
        /// version).
        ///
        /// Args:
        ///     logits (array): The unnormalized logits; the loss is over the last axis.
        ///     targets (array): Class indices, shaped as ``logits`` without its last axis.
        ///
        /// Returns:
        ///     array: The loss per element of ``targets``, as float32.
        cross_entropy(logits: Arr, targets: Arr, *, stream) => fast_cross_entropy(&logits.0, &targets.0);
        /// Root Mean Square normalization (RMS norm) over the last axis of ``x``.
        ///
        /// Args:
        ///     x (array): Input array.
        ///     weight (array, optional): A one-dimensional weight, the size of the last axis
        ///         of ``x``, to scale the result by; ``None``: no scaling.
        ///     eps (float): A small additive constant for numerical stability.
        ///
        /// Returns:
        ///     array: The output array.
        rms_norm(x: Arr, weight: Option<Arr>, eps: f64, *, stream) =>
            lzf::rms_norm(&x.0, weight.as_ref().map(|w| &w.0), eps as f32);
        /// Layer normalization over the last axis of ``x``.
        ///
        /// Args:
        ///     x (array): Input array.
        ///     weight (array, optional): A one-dimensional weight to scale the result by;
        ///         ``None``: no scaling.
        ///     bias (array, optional): A one-dimensional offset to add; ``None``: none.
        ///     eps (float): A small additive constant for numerical stability.
        ///
        /// Returns:
        ///     array: The output array.
        layer_norm(x: Arr, weight: Option<Arr>, bias: Option<Arr>, eps: f64, *, stream) =>
            lzf::layer_norm(&x.0, weight.as_ref().map(|w| &w.0), bias.as_ref().map(|b| &b.0), eps as f32);
        /// Apply rotary positional encoding to the input, shaped ``(B, *, T, D)``.
        ///
        /// Args:
        ///     a (array): The input array.
        ///     dims (int): The feature dimensions to rotate; the rest are left unchanged.
        ///     traditional (bool): Rotate consecutive dimensions (pairs ``2i``, ``2i+1``)
        ///         instead of the two halves.
        ///     base (float, optional): The base of the angular frequencies. Exactly one of
        ///         ``base`` and ``freqs`` must be ``None``.
        ///     scale (float): The scale of the positions.
        ///     offset (int or array): The position offset to start at: a scalar, or a vector
        ///         of ``B`` offsets, one per example.
        ///     freqs (array, optional): The frequencies to use instead of ``base``.
        ///
        /// Returns:
        ///     array: The output array.
        rope(a: Arr, dims: i64, *, traditional: bool, base: Option<f64>, scale: f64, offset: Opd, freqs: Option<Arr> = None, stream) =>
            rope_from_python(&a.0, dims, traditional, base.map(|b| b as f32), scale as f32, offset, freqs);
        /// Multi-head attention ``O = softmax(Q @ K.T * scale + mask) @ V`` with
        /// grouped-query attention (``k`` and ``v`` need not be tiled to ``q``'s heads).
        /// The softmax runs in ``float32`` regardless of the input precision.
        ///
        /// Args:
        ///     q (array): Queries with shape ``[B, N_q, T_q, D]``.
        ///     k (array): Keys with shape ``[B, N_kv, T_kv, D]``.
        ///     v (array): Values with shape ``[B, N_kv, T_kv, D]``.
        ///     scale (float): Scale for queries (typically ``1.0 / sqrt(q.shape(-1))``).
        ///     mask (str or array, optional): ``"causal"`` (the last query aligns with the
        ///         last key) or a boolean or additive mask broadcastable to
        ///         ``[B, N, T_q, T_kv]``.
        ///     sinks (array, optional): One attention-sink logit per query head.
        ///     force_fused (bool, optional): Accepted for compatibility; there is one
        ///         implementation on the CPU.
        ///
        /// Returns:
        ///     array: The output array.
        scaled_dot_product_attention(q: Arr, k: Arr, v: Arr, *, scale: f64, mask: Option<Mask> = None, sinks: Option<Arr> = None, force_fused: bool = false, stream) =>
            lzf::scaled_dot_product_attention(&q.0, &k.0, &v.0, scale as f32, mask.as_ref().map(|m| &m.0), sinks.as_ref().map(|s| &s.0));
        /// The gated delta rule recurrence of gated delta networks, run over the time
        /// axis: each step decays the state ``S`` by ``gamma``, updates it by the delta
        /// rule ``S += beta * (v - S k) k^T`` and reads out ``o = S q``. The steps are
        /// ordinary ops, so the result can be differentiated and vmapped.
        ///
        /// Args:
        ///     q (array): Queries ``[B, T, Hk, Dk]``.
        ///     k (array): Keys ``[B, T, Hk, Dk]``.
        ///     v (array): Values ``[B, T, Hv, Dv]``; ``Hv`` is a multiple of ``Hk``.
        ///     gamma (array): Decay rates in linear space, ``[B, T, Hv]`` or
        ///         ``[B, T, Hv, Dk]``.
        ///     beta (array): Delta update rates ``[B, T, Hv]``.
        ///     initial_state (array, optional): The initial state ``[B, Hv, Dv, Dk]``;
        ///         zeros if ``None``.
        ///     mask (array, optional): ``[B, T]``; a false entry skips that step (the
        ///         state is kept and the output is zero).
        ///
        /// Returns:
        ///     list(array): The output ``[B, T, Hv, Dv]`` in the dtype of ``q`` and ``k``
        ///     and the final state ``[B, Hv, Dv, Dk]`` (float32 for half-precision
        ///     inputs).
        gated_delta_update(q: Arr, k: Arr, v: Arr, gamma: Arr, beta: Arr, initial_state: Option<Arr> = None, mask: Option<Arr> = None, stream) =>
            lzf::gated_delta_update(&q.0, &k.0, &v.0, &gamma.0, &beta.0, initial_state.as_ref().map(|s| &s.0), mask.as_ref().map(|m| &m.0)).map(|(o, s)| vec![o, s]);
    }
    methods {}
}

/// A custom Metal kernel, as `mx.fast.metal_kernel` returns on a machine without Metal:
/// it can be built (so modules that define kernels import) and raises when called.
#[pyclass(name = "MetalKernel", module = "lazulite.core.fast", frozen)]
pub struct MetalKernel;

#[pymethods]
impl MetalKernel {
    #[pyo3(signature = (*, inputs, output_shapes, output_dtypes, grid, threadgroup, template = None, init_value = None, verbose = false, stream = None))]
    #[allow(clippy::too_many_arguments, unused_variables)]
    fn __call__(
        &self,
        inputs: Bound<'_, PyAny>,
        output_shapes: Bound<'_, PyAny>,
        output_dtypes: Bound<'_, PyAny>,
        grid: Bound<'_, PyAny>,
        threadgroup: Bound<'_, PyAny>,
        template: Option<Bound<'_, PyAny>>,
        init_value: Option<f64>,
        verbose: bool,
        stream: Option<Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        Err(PyRuntimeError::new_err("[metal_kernel] No Metal back-end."))
    }
}

/// A jit-compiled custom Metal kernel defined from a source string. lazulite runs on
/// the CPU: as MLX without Metal, the kernel object is made and raises a RuntimeError
/// when called.
#[pyfunction]
#[pyo3(signature = (name, input_names, output_names, source, header = "", ensure_row_contiguous = true, atomic_outputs = false, compile_options = None))]
#[allow(clippy::too_many_arguments, unused_variables)]
fn metal_kernel(
    name: &str,
    input_names: Vec<String>,
    output_names: Vec<String>,
    source: &str,
    header: &str,
    ensure_row_contiguous: bool,
    atomic_outputs: bool,
    compile_options: Option<Bound<'_, PyAny>>,
) -> MetalKernel {
    MetalKernel
}

/// A jit-compiled custom CUDA kernel defined from a source string. As MLX without CUDA,
/// lazulite raises a RuntimeError.
#[pyfunction]
#[pyo3(signature = (name, input_names, output_names, source, header = "", ensure_row_contiguous = true, shared_memory = 0))]
#[allow(clippy::too_many_arguments, unused_variables)]
fn cuda_kernel(
    name: &str,
    input_names: Vec<String>,
    output_names: Vec<String>,
    source: &str,
    header: &str,
    ensure_row_contiguous: bool,
    shared_memory: i64,
) -> PyResult<()> {
    Err(PyRuntimeError::new_err("[cuda_kernel] No CUDA back-end."))
}

/// Run a precompiled CUDA kernel defined from PTX or cubin. As MLX without CUDA,
/// lazulite raises a RuntimeError.
#[pyfunction]
#[pyo3(signature = (*, name, compiled_source, inputs, output_shapes, output_dtypes, scalars, grid, threadgroup, shared_memory = 0, init_value = None, ensure_row_contiguous = false, stream = None))]
#[allow(clippy::too_many_arguments, unused_variables)]
fn precompiled_cuda_kernel(
    name: &str,
    compiled_source: Bound<'_, PyAny>,
    inputs: Bound<'_, PyAny>,
    output_shapes: Bound<'_, PyAny>,
    output_dtypes: Bound<'_, PyAny>,
    scalars: Bound<'_, PyAny>,
    grid: Bound<'_, PyAny>,
    threadgroup: Bound<'_, PyAny>,
    shared_memory: i64,
    init_value: Option<f64>,
    ensure_row_contiguous: bool,
    stream: Option<Bound<'_, PyAny>>,
) -> PyResult<()> {
    Err(PyRuntimeError::new_err("[cuda_kernel] No CUDA back-end."))
}

/// Adds `lazulite.core.fast` to `parent`.
pub fn register_submodule(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = parent.py();
    let module = PyModule::new(py, "fast")?;
    register(&module)?;
    module.add_class::<MetalKernel>()?;
    module.add_function(wrap_pyfunction!(metal_kernel, &module)?)?;
    module.add_function(wrap_pyfunction!(cuda_kernel, &module)?)?;
    module.add_function(wrap_pyfunction!(precompiled_cuda_kernel, &module)?)?;
    parent.add_submodule(&module)?;
    py.import("sys")?
        .getattr("modules")?
        .set_item("lazulite.core.fast", &module)?;
    Ok(())
}
