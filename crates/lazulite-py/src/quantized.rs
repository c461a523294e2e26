//! Quantization with MLX's signatures: `quantize`, `dequantize`, `quantized_matmul`,
//! `gather_qmm` in the modes `"affine"`, `"mxfp4"`, `"mxfp8"` and `"nvfp4"`, the products
//! with quantized inputs `qqmm`/`gather_qqmm`, and the 8-bit float conversions
//! `to_fp8`/`from_fp8`.

use crate::bind;
use crate::convert::{Arr, Dt};
use lazulite as lz;
use lazulite::shape::shape_text;
use lazulite::{Array, DType, Quantization, QuantizationMode};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The mode named `mode` with MLX's defaults for the group size and bits not given.
fn quantization(
    op: &str,
    mode: &str,
    group_size: Option<i32>,
    bits: Option<i32>,
) -> PyResult<Quantization> {
    let mode: QuantizationMode = mode
        .parse()
        .map_err(|e: lz::Error| PyValueError::new_err(format!("[{op}] {}", e.message())))?;
    Ok(Quantization::with(mode, group_size, bits))
}

/// The array of an optional argument.
fn inner(a: &Option<Arr>) -> Option<&Array> {
    a.as_ref().map(|a| &a.0)
}

fn py(e: lz::Error) -> PyErr {
    crate::errors::to_py_err(e)
}

/// A list, as MLX returns (its documentation says a tuple): `[w_q, scales, biases]` in
/// affine mode, `[w_q, scales]` in the others.
fn quantize_with(
    w: &Array,
    group_size: Option<i32>,
    bits: Option<i32>,
    mode: &str,
    global_scale: Option<&Array>,
) -> PyResult<Vec<Array>> {
    let q = quantization("quantize", mode, group_size, bits)?;
    let (w_q, scales, biases) = lz::quantize(w, q, global_scale).map_err(py)?;
    Ok([Some(w_q), Some(scales), biases]
        .into_iter()
        .flatten()
        .collect())
}

#[allow(clippy::too_many_arguments)]
fn dequantize_with(
    w: &Array,
    scales: &Array,
    biases: Option<&Array>,
    group_size: Option<i32>,
    bits: Option<i32>,
    mode: &str,
    global_scale: Option<&Array>,
    dtype: Option<Dt>,
) -> PyResult<Array> {
    let q = quantization("dequantize", mode, group_size, bits)?;
    lz::dequantize(w, scales, biases, q, global_scale, dtype.map(|d| d.0)).map_err(py)
}

#[allow(clippy::too_many_arguments)]
fn quantized_matmul_with(
    x: &Array,
    w: &Array,
    scales: &Array,
    biases: Option<&Array>,
    transpose: bool,
    group_size: Option<i32>,
    bits: Option<i32>,
    mode: &str,
) -> PyResult<Array> {
    let q = quantization("quantized_matmul", mode, group_size, bits)?;
    lz::quantized_matmul(x, w, scales, biases, transpose, q).map_err(py)
}

#[allow(clippy::too_many_arguments)]
fn gather_qmm_with(
    x: &Array,
    w: &Array,
    scales: &Array,
    biases: Option<&Array>,
    lhs_indices: Option<&Array>,
    rhs_indices: Option<&Array>,
    transpose: bool,
    group_size: Option<i32>,
    bits: Option<i32>,
    mode: &str,
    global_scale: Option<&Array>,
) -> PyResult<Array> {
    const OP: &str = "gather_qmm";
    let indexed = lhs_indices.is_some() || rhs_indices.is_some();
    if global_scale.is_some() && !indexed {
        return Err(PyValueError::new_err(format!(
            "[{OP}] Global scale is not supported without indices."
        )));
    }
    let q = quantization(OP, mode, group_size, bits)?;
    let out =
        lz::gather_qmm(x, w, scales, biases, lhs_indices, rhs_indices, transpose, q).map_err(py)?;
    let Some(global) = global_scale else {
        return Ok(out);
    };
    // MLX's checks of a per-expert global scale, after those of the product; its CPU
    // backend then refuses it, and so does lazulite.
    if q.mode != QuantizationMode::Nvfp4 {
        return Err(PyValueError::new_err(format!(
            "[{OP}] Global scale is only supported for 'nvfp4' quantization mode."
        )));
    }
    if global.dtype() != DType::Float32 {
        return Err(PyValueError::new_err(format!(
            "[{OP}] Global scale must have dtype float32 but got {}.",
            global.dtype()
        )));
    }
    let experts = &w.shape()[..w.ndim().saturating_sub(2)];
    if global.shape() != experts {
        return Err(PyValueError::new_err(format!(
            "[{OP}] Global scale must have one entry per expert with shape {} but got {}.",
            shape_text(experts),
            shape_text(global.shape())
        )));
    }
    Err(PyValueError::new_err(format!(
        "[{OP}] Global scale is only supported on the GPU."
    )))
}

#[allow(clippy::too_many_arguments)]
fn qqmm_with(
    x: &Array,
    w: &Array,
    scales: Option<&Array>,
    group_size: Option<i32>,
    bits: Option<i32>,
    mode: &str,
    global_scale_x: Option<&Array>,
    global_scale_w: Option<&Array>,
) -> PyResult<Array> {
    let q = quantization("qqmm", mode, group_size, bits)?;
    lz::qqmm(x, w, scales, q, global_scale_x, global_scale_w).map_err(py)
}

#[allow(clippy::too_many_arguments)]
fn gather_qqmm_with(
    x: &Array,
    w: &Array,
    scales: Option<&Array>,
    lhs_indices: Option<&Array>,
    rhs_indices: Option<&Array>,
    group_size: Option<i32>,
    bits: Option<i32>,
    mode: &str,
    global_scale_x: Option<&Array>,
    global_scale_w: Option<&Array>,
) -> PyResult<Array> {
    let q = quantization("gather_qqmm", mode, group_size, bits)?;
    lz::gather_qqmm(
        x,
        w,
        scales,
        lhs_indices,
        rhs_indices,
        q,
        global_scale_x,
        global_scale_w,
    )
    .map_err(py)
}

bind! {
    functions {
        /// Quantize the array ``w``: every ``group_size`` elements of a row share a scale
        /// (and, in ``"affine"`` mode, a bias), and each element is stored in ``bits`` bits,
        /// packed into unsigned 32-bit integers from the lower to the upper bits.
        ///
        /// Modes (group sizes and bits, defaults first):
        ///
        /// * ``"affine"``: groups of 64, 32 or 128; 4, 1, 2, 3, 5, 6 or 8 bits; scales and
        ///   biases in ``w``'s dtype.
        /// * ``"mxfp4"``: groups of 32, 4-bit E2M1 floats, a uint8 power-of-two (E8M0) scale.
        /// * ``"mxfp8"``: groups of 32, 8-bit E4M3 floats, a uint8 power-of-two scale.
        /// * ``"nvfp4"``: groups of 16, 4-bit E2M1 floats, a uint8 E4M3 scale.
        ///
        /// Args:
        ///     w (array): Array to be quantized, with at least two dimensions and the last
        ///         divisible by ``group_size``.
        ///     group_size (int, optional): Elements sharing a scale. Default: the mode's.
        ///     bits (int, optional): Bits per element. Default: the mode's.
        ///     mode (str, optional): The quantization mode. Default: ``"affine"``.
        ///     global_scale (array, optional): ``"nvfp4"`` only: a float32 scalar; the
        ///         scales are stored times ``2688 / global_scale``. Default: ``None``.
        ///
        /// Returns:
        ///     list: ``[w_q, scales, biases]`` in ``"affine"`` mode, ``[w_q, scales]`` in
        ///     the others: the packed uint32 array, the scales (``w``'s dtype, or uint8)
        ///     and the biases.
        quantize(w: Arr, /, group_size: Option<i32> = None, bits: Option<i32> = None, mode: &str = "affine", *, global_scale: Option<Arr> = None, stream) =>
            quantize_with(&w.0, group_size, bits, mode, global_scale.as_ref().map(|g| &g.0));
        /// Dequantize the matrix ``w``: ``scale * w_hat + bias`` per element in
        /// ``"affine"`` mode, ``scale * w_hat`` in the floating-point modes.
        ///
        /// Args:
        ///     w (array): The packed matrix (uint32).
        ///     scales (array): The scales, one per ``group_size`` elements of ``w``.
        ///     biases (array, optional): The biases (``"affine"`` mode only). Default:
        ///         ``None``.
        ///     group_size (int, optional): Default: the mode's.
        ///     bits (int, optional): Default: the mode's.
        ///     mode (str, optional): The quantization mode. Default: ``"affine"``.
        ///     global_scale (array, optional): The float32 scalar given to ``quantize``
        ///         (``"nvfp4"`` only). Default: ``None``.
        ///     dtype (Dtype, optional): The result's dtype. Default: that of the scales and
        ///         biases (``"affine"``), else ``bfloat16``.
        ///
        /// Returns:
        ///     array: The dequantized version of ``w``.
        dequantize(w: Arr, /, scales: Arr, biases: Option<Arr> = None, group_size: Option<i32> = None, bits: Option<i32> = None, mode: &str = "affine", global_scale: Option<Arr> = None, dtype: Option<Dt> = None, *, stream) =>
            dequantize_with(&w.0, &scales.0, biases.as_ref().map(|b| &b.0), group_size, bits, mode, global_scale.as_ref().map(|g| &g.0), dtype);
        /// Perform the matrix multiplication with the quantized matrix ``w``.
        ///
        /// Args:
        ///     x (array): Input array.
        ///     w (array): Quantized matrix packed in unsigned integers.
        ///     scales (array): The scales to use per ``group_size`` elements of ``w``.
        ///     biases (array, optional): The biases (``"affine"`` mode only). Default:
        ///         ``None``.
        ///     transpose (bool, optional): Multiply with ``w`` transposed (``x @ w.T``).
        ///         Default: ``True``.
        ///     group_size (int, optional): Default: the mode's.
        ///     bits (int, optional): Default: the mode's.
        ///     mode (str, optional): The quantization mode. Default: ``"affine"``.
        ///
        /// Returns:
        ///     array: The result of the multiplication of ``x`` with ``w``.
        quantized_matmul(x: Arr, w: Arr, /, scales: Arr, biases: Option<Arr> = None, transpose: bool = true, group_size: Option<i32> = None, bits: Option<i32> = None, mode: &str = "affine", *, stream) =>
            quantized_matmul_with(&x.0, &w.0, &scales.0, biases.as_ref().map(|b| &b.0), transpose, group_size, bits, mode);
        /// Quantized matrix products of matrices picked by index, as ``gather_mm`` picks
        /// them, with ``w`` quantized as in ``quantized_matmul``.
        ///
        /// Args:
        ///     x (array): Input array.
        ///     w (array): Quantized matrices packed in unsigned integers.
        ///     scales (array): The scales of ``w``.
        ///     biases (array, optional): The biases of ``w`` (``"affine"`` mode).
        ///     lhs_indices (array, optional): Integer indices of matrices of ``x``.
        ///     rhs_indices (array, optional): Integer indices of matrices of ``w``.
        ///     transpose (bool, optional): Multiply by the transpose of ``w``. Default:
        ///         ``True``.
        ///     group_size (int, optional): The quantization group size. Default: the mode's.
        ///     bits (int, optional): The bits per element of ``w``. Default: the mode's.
        ///     mode (str, optional): The quantization mode. Default: ``"affine"``.
        ///     global_scale (array, optional): Per-expert scales of ``"nvfp4"`` weights;
        ///         checked as MLX checks them, then refused as MLX's CPU build refuses them.
        ///     sorted_indices (bool, optional): Whether the indices are sorted, a hint
        ///         that does not change the result. Default: ``False``.
        ///
        /// Returns:
        ///     array: The products, shaped as the broadcast indices followed by the
        ///     matrix dimensions.
        gather_qmm(x: Arr, w: Arr, /, scales: Arr, biases: Option<Arr> = None, lhs_indices: Option<Arr> = None, rhs_indices: Option<Arr> = None, transpose: bool = true, group_size: Option<i32> = None, bits: Option<i32> = None, mode: &str = "affine", global_scale: Option<Arr> = None, *, sorted_indices: bool = false, stream) => {
            let _hint_only = sorted_indices;
            gather_qmm_with(&x.0, &w.0, &scales.0, inner(&biases), inner(&lhs_indices), inner(&rhs_indices), transpose, group_size, bits, mode, inner(&global_scale))
        };
        /// Multiply ``x`` by the transpose of ``w`` after rounding both through a
        /// floating-point quantization mode: ``x`` is quantized on the fly along its last
        /// axis; ``w`` is quantized on the fly when given as floats, or used as stored when
        /// packed (with its ``scales``).
        ///
        /// Gradients pass straight through the rounding; the backward products are
        /// quantized products too. A packed ``w`` gets no gradient: give it as floats to
        /// train it.
        ///
        /// Args:
        ///     x (array): Input array ``(..., K)`` of float32, float16 or bfloat16.
        ///     w (array): Weight matrix ``(N, K)``, floats or packed in uint32.
        ///     scales (array, optional): The scales of a packed ``w``. Default: ``None``.
        ///     group_size (int, optional): Elements of ``x`` and ``w`` sharing a scale.
        ///         Default: the mode's.
        ///     bits (int, optional): Bits per element. Default: the mode's.
        ///     mode (str, optional): ``"nvfp4"``, ``"mxfp8"`` or ``"mxfp4"``. Default:
        ///         ``"nvfp4"``.
        ///     global_scale_x (array, optional): ``"nvfp4"`` only: the float32 global scale
        ///         of ``x``. Default: ``None``.
        ///     global_scale_w (array, optional): ``"nvfp4"`` only: the float32 global scale
        ///         of ``w`` (both or neither). Default: ``None``.
        ///
        /// Returns:
        ///     array: ``(..., N)`` in ``x``'s dtype.
        qqmm(x: Arr, w: Arr, scales: Option<Arr> = None, group_size: Option<i32> = None, bits: Option<i32> = None, mode: &str = "nvfp4", global_scale_x: Option<Arr> = None, global_scale_w: Option<Arr> = None, *, stream) =>
            qqmm_with(&x.0, &w.0, inner(&scales), group_size, bits, mode, inner(&global_scale_x), inner(&global_scale_w));
        /// ``qqmm`` of matrices picked by index, as ``gather_mm`` picks them.
        ///
        /// Args:
        ///     x (array): Input matrices ``(..., M, K)``.
        ///     w (array): Weight matrices ``(..., N, K)``, floats or packed in uint32.
        ///     scales (array, optional): The scales of a packed ``w``. Default: ``None``.
        ///     lhs_indices (array, optional): Integer indices of matrices of ``x``.
        ///     rhs_indices (array, optional): Integer indices of matrices of ``w``.
        ///     group_size (int, optional): Default: the mode's.
        ///     bits (int, optional): Default: the mode's.
        ///     mode (str, optional): ``"nvfp4"``, ``"mxfp8"`` or ``"mxfp4"``. Default:
        ///         ``"nvfp4"``.
        ///     global_scale_x (array, optional): ``"nvfp4"`` only. Default: ``None``.
        ///     global_scale_w (array, optional): ``"nvfp4"`` only. Default: ``None``.
        ///     sorted_indices (bool, optional): Whether the indices are sorted, a hint
        ///         that does not change the result. Default: ``False``.
        ///
        /// Returns:
        ///     array: The products, shaped as the broadcast indices followed by
        ///     ``(M, N)``.
        gather_qqmm(x: Arr, w: Arr, /, scales: Option<Arr> = None, lhs_indices: Option<Arr> = None, rhs_indices: Option<Arr> = None, group_size: Option<i32> = None, bits: Option<i32> = None, mode: &str = "nvfp4", global_scale_x: Option<Arr> = None, global_scale_w: Option<Arr> = None, *, sorted_indices: bool = false, stream) => {
            let _hint_only = sorted_indices;
            gather_qqmm_with(&x.0, &w.0, inner(&scales), inner(&lhs_indices), inner(&rhs_indices), group_size, bits, mode, inner(&global_scale_x), inner(&global_scale_w))
        };
        /// Encode a floating-point array as 8-bit E4M3 floats stored in uint8 (rounded to
        /// nearest even; magnitudes above 448 saturate).
        ///
        /// Args:
        ///     x (array): Input array of a real floating-point type.
        ///
        /// Returns:
        ///     array: The encoded uint8 array.
        to_fp8(x: Arr, *, stream) => lz::to_fp8(&x.0);
        /// Decode 8-bit E4M3 floats stored in uint8.
        ///
        /// Args:
        ///     x (array): The uint8 array.
        ///     dtype (Dtype, optional): Real floating-point type of the result; ``None``:
        ///         ``bfloat16``. Default: ``None``.
        ///
        /// Returns:
        ///     array: The decoded array.
        from_fp8(x: Arr, dtype: Option<Dt> = None, *, stream) =>
            lz::from_fp8(&x.0, dtype.map_or(DType::BFloat16, |d| d.0));
    }
    methods {}
}
