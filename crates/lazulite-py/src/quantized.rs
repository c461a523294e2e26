//! Quantization with MLX's signatures: `quantize`, `dequantize`, `quantized_matmul`,
//! `gather_qmm`, and
//! the 8-bit float conversions `to_fp8`/`from_fp8`.
//! Only the `"affine"` mode exists in lazulite; MLX's floating-point modes (`"mxfp4"`,
//! `"mxfp8"`, `"nvfp4"`) raise a ValueError that names them.

use crate::bind;
use crate::convert::{Arr, Dt};
use lazulite as lz;
use lazulite::{Array, DType};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Checks `mode` (only `"affine"`) and `global_scale` (an nvfp4 parameter) and returns
/// the group size and bits, MLX's defaults filled in.
fn affine(
    op: &str,
    mode: &str,
    group_size: Option<i32>,
    bits: Option<i32>,
    global_scale: bool,
) -> PyResult<(i32, i32)> {
    match mode {
        "affine" => {}
        "mxfp4" | "mxfp8" | "nvfp4" => {
            return Err(PyValueError::new_err(format!(
                "[{op}] The quantization mode '{mode}' is not supported by lazulite; only \
                 'affine' is."
            )))
        }
        _ => {
            return Err(PyValueError::new_err(format!(
                "[{op}] Invalid quantization mode '{mode}'."
            )))
        }
    }
    if global_scale {
        return Err(PyValueError::new_err(format!(
            "[{op}] Global scale is only supported for 'nvfp4' quantization."
        )));
    }
    Ok((group_size.unwrap_or(64), bits.unwrap_or(4)))
}

/// The biases `affine` quantization needs.
fn required<'a>(op: &str, biases: &'a Option<Arr>) -> PyResult<&'a Array> {
    biases.as_ref().map(|b| &b.0).ok_or_else(|| {
        PyValueError::new_err(format!(
            "[{op}] Biases must be provided for affine quantization."
        ))
    })
}

/// A list, as MLX returns (its documentation says a tuple).
fn quantize_with(
    w: &Array,
    group_size: Option<i32>,
    bits: Option<i32>,
    mode: &str,
    global_scale: bool,
) -> PyResult<Vec<Array>> {
    let (gs, bits) = affine("quantize", mode, group_size, bits, global_scale)?;
    let (w_q, scales, biases) = lz::quantize(w, gs, bits).map_err(crate::errors::to_py_err)?;
    Ok(vec![w_q, scales, biases])
}

#[allow(clippy::too_many_arguments)]
fn dequantize_with(
    w: &Array,
    scales: &Array,
    biases: &Option<Arr>,
    group_size: Option<i32>,
    bits: Option<i32>,
    mode: &str,
    global_scale: bool,
    dtype: Option<Dt>,
) -> PyResult<Array> {
    let (gs, bits) = affine("dequantize", mode, group_size, bits, global_scale)?;
    let biases = required("dequantize", biases)?;
    lz::dequantize(w, scales, biases, gs, bits, dtype.map(|d| d.0))
        .map_err(crate::errors::to_py_err)
}

#[allow(clippy::too_many_arguments)]
fn quantized_matmul_with(
    x: &Array,
    w: &Array,
    scales: &Array,
    biases: &Option<Arr>,
    transpose: bool,
    group_size: Option<i32>,
    bits: Option<i32>,
    mode: &str,
) -> PyResult<Array> {
    let (gs, bits) = affine("quantized_matmul", mode, group_size, bits, false)?;
    let biases = required("quantized_matmul", biases)?;
    lz::quantized_matmul(x, w, scales, biases, transpose, gs, bits)
        .map_err(crate::errors::to_py_err)
}

#[allow(clippy::too_many_arguments)]
fn gather_qmm_with(
    x: &Array,
    w: &Array,
    scales: &Array,
    biases: &Option<Arr>,
    lhs_indices: &Option<Arr>,
    rhs_indices: &Option<Arr>,
    transpose: bool,
    group_size: Option<i32>,
    bits: Option<i32>,
    mode: &str,
    global_scale: bool,
) -> PyResult<Array> {
    let (gs, bits) = affine("gather_qmm", mode, group_size, bits, global_scale)?;
    let biases = required("gather_qmm", biases)?;
    lz::gather_qmm(
        x,
        w,
        scales,
        biases,
        lhs_indices.as_ref().map(|i| &i.0),
        rhs_indices.as_ref().map(|i| &i.0),
        transpose,
        gs,
        bits,
    )
    .map_err(crate::errors::to_py_err)
}

bind! {
    functions {
        /// Quantize the array ``w``: every ``group_size`` elements of a row share a scale and
        /// a bias, and each element is stored in ``bits`` bits, packed into unsigned 32-bit
        /// integers from the lower to the upper bits.
        ///
        /// Args:
        ///     w (array): Array to be quantized, with at least two dimensions and the last
        ///         divisible by ``group_size``.
        ///     group_size (int, optional): Elements sharing a scale and bias: 32, 64 or 128.
        ///         Default: ``64``.
        ///     bits (int, optional): Bits per element: 1, 2, 3, 4, 5, 6 or 8. Default: ``4``.
        ///     mode (str, optional): The quantization mode; only ``"affine"``.
        ///         Default: ``"affine"``.
        ///     global_scale (array, optional): Only for ``"nvfp4"`` (unsupported).
        ///
        /// Returns:
        ///     list: ``[w_q, scales, biases]``: the packed uint32 array and the scales and
        ///     biases in ``w``'s dtype.
        quantize(w: Arr, /, group_size: Option<i32> = None, bits: Option<i32> = None, mode: &str = "affine", *, global_scale: Option<Arr> = None, stream) =>
            quantize_with(&w.0, group_size, bits, mode, global_scale.is_some());
        /// Dequantize the matrix ``w``: ``scale * w_hat + bias`` per element.
        ///
        /// Args:
        ///     w (array): The packed matrix (uint32).
        ///     scales (array): The scales, one per ``group_size`` elements of ``w``.
        ///     biases (array): The biases, one per ``group_size`` elements of ``w``.
        ///     group_size (int, optional): Default: ``64``.
        ///     bits (int, optional): Default: ``4``.
        ///     mode (str, optional): Only ``"affine"``. Default: ``"affine"``.
        ///     global_scale (array, optional): Only for ``"nvfp4"`` (unsupported).
        ///     dtype (Dtype, optional): The result's dtype. Default: that of the scales and
        ///         biases.
        ///
        /// Returns:
        ///     array: The dequantized version of ``w``.
        dequantize(w: Arr, /, scales: Arr, biases: Option<Arr> = None, group_size: Option<i32> = None, bits: Option<i32> = None, mode: &str = "affine", global_scale: Option<Arr> = None, dtype: Option<Dt> = None, *, stream) =>
            dequantize_with(&w.0, &scales.0, &biases, group_size, bits, mode, global_scale.is_some(), dtype);
        /// Perform the matrix multiplication with the quantized matrix ``w``.
        ///
        /// Args:
        ///     x (array): Input array.
        ///     w (array): Quantized matrix packed in unsigned integers.
        ///     scales (array): The scales to use per ``group_size`` elements of ``w``.
        ///     biases (array): The biases to use per ``group_size`` elements of ``w``.
        ///     transpose (bool, optional): Multiply with ``w`` transposed (``x @ w.T``).
        ///         Default: ``True``.
        ///     group_size (int, optional): Default: ``64``.
        ///     bits (int, optional): Default: ``4``.
        ///     mode (str, optional): Only ``"affine"``. Default: ``"affine"``.
        ///
        /// Returns:
        ///     array: The result of the multiplication of ``x`` with ``w``.
        quantized_matmul(x: Arr, w: Arr, /, scales: Arr, biases: Option<Arr> = None, transpose: bool = true, group_size: Option<i32> = None, bits: Option<i32> = None, mode: &str = "affine", *, stream) =>
            quantized_matmul_with(&x.0, &w.0, &scales.0, &biases, transpose, group_size, bits, mode);
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
        ///     group_size (int, optional): The quantization group size. Default: ``64``.
        ///     bits (int, optional): The bits per element of ``w``. Default: ``4``.
        ///     mode (str, optional): The quantization mode. Default: ``"affine"``.
        ///     global_scale (array, optional): Only with the ``"nvfp4"`` mode.
        ///     sorted_indices (bool, optional): Whether the indices are sorted, a hint
        ///         that does not change the result. Default: ``False``.
        ///
        /// Returns:
        ///     array: The products, shaped as the broadcast indices followed by the
        ///     matrix dimensions.
        gather_qmm(x: Arr, w: Arr, /, scales: Arr, biases: Option<Arr> = None, lhs_indices: Option<Arr> = None, rhs_indices: Option<Arr> = None, transpose: bool = true, group_size: Option<i32> = None, bits: Option<i32> = None, mode: &str = "affine", global_scale: Option<Arr> = None, *, sorted_indices: bool = false, stream) => {
            let _hint_only = sorted_indices;
            gather_qmm_with(&x.0, &w.0, &scales.0, &biases, &lhs_indices, &rhs_indices, transpose, group_size, bits, mode, global_scale.is_some())
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
