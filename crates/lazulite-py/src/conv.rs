//! Convolutions with MLX's signatures: `conv1d/2d/3d`, `conv_general`,
//! `conv_transpose1d/2d/3d`. Spatial parameters are an int (every axis) or a tuple.

use crate::bind;
use crate::convert::{Arr, Ints};
use crate::errors::to_py_err;
use crate::signature::Hint;
use lazulite as lz;
use lazulite::Array;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

/// A per-axis parameter of an `N`-D convolution: `None` (the default), an int for every
/// axis, or `N` ints.
fn spatial<const N: usize>(
    value: Option<Ints>,
    default: i64,
    op: &str,
    name: &str,
) -> PyResult<[i64; N]> {
    match value.map(|v| v.0).as_deref() {
        None => Ok([default; N]),
        Some([v]) => Ok([*v; N]),
        Some(values) if values.len() == N => Ok(std::array::from_fn(|i| values[i])),
        Some(values) => Err(PyTypeError::new_err(format!(
            "{op}(): {name} must be an int or a tuple of {N} ints, got {} values.",
            values.len()
        ))),
    }
}

/// `conv_general`'s padding: an int, a sequence of ints (both sides), or a pair of
/// sequences `(low, high)`.
pub struct ConvPadding(Vec<i64>, Vec<i64>);

impl<'a, 'py> FromPyObject<'a, 'py> for ConvPadding {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<ConvPadding> {
        let obj = obj.to_owned();
        if let Ok(both) = obj.extract::<Ints>() {
            return Ok(ConvPadding(both.0.clone(), both.0));
        }
        let sides: Vec<Ints> = obj
            .try_iter()
            .and_then(|items| items.map(|item| item?.extract::<Ints>()).collect())
            .map_err(|_| {
                PyTypeError::new_err(
                    "conv_general(): padding must be an int, a sequence of ints or a pair of \
                     sequences of ints.",
                )
            })?;
        match <[Ints; 2]>::try_from(sides) {
            Ok([low, high]) => Ok(ConvPadding(low.0, high.0)),
            Err(_) => Err(PyTypeError::new_err(
                "conv_general(): padding must be an int, a sequence of ints or a pair of \
                 sequences of ints.",
            )),
        }
    }
}

impl Hint for ConvPadding {
    fn hint() -> String {
        "int | Sequence[int] | tuple[Sequence[int], Sequence[int]]".into()
    }
}

fn conv2d_with(
    input: &Array,
    weight: &Array,
    params: [Option<Ints>; 3],
    groups: i64,
) -> PyResult<Array> {
    let [stride, padding, dilation] = params;
    let op = "conv2d";
    lz::conv2d(
        input,
        weight,
        spatial(stride, 1, op, "stride")?,
        spatial(padding, 0, op, "padding")?,
        spatial(dilation, 1, op, "dilation")?,
        groups,
    )
    .map_err(to_py_err)
}

fn conv3d_with(
    input: &Array,
    weight: &Array,
    params: [Option<Ints>; 3],
    groups: i64,
) -> PyResult<Array> {
    let [stride, padding, dilation] = params;
    let op = "conv3d";
    lz::conv3d(
        input,
        weight,
        spatial(stride, 1, op, "stride")?,
        spatial(padding, 0, op, "padding")?,
        spatial(dilation, 1, op, "dilation")?,
        groups,
    )
    .map_err(to_py_err)
}

fn conv_transpose2d_with(
    input: &Array,
    weight: &Array,
    params: [Option<Ints>; 4],
    groups: i64,
) -> PyResult<Array> {
    let [stride, padding, dilation, output_padding] = params;
    let op = "conv_transpose2d";
    lz::conv_transpose2d(
        input,
        weight,
        spatial(stride, 1, op, "stride")?,
        spatial(padding, 0, op, "padding")?,
        spatial(dilation, 1, op, "dilation")?,
        spatial(output_padding, 0, op, "output_padding")?,
        groups,
    )
    .map_err(to_py_err)
}

fn conv_transpose3d_with(
    input: &Array,
    weight: &Array,
    params: [Option<Ints>; 4],
    groups: i64,
) -> PyResult<Array> {
    let [stride, padding, dilation, output_padding] = params;
    let op = "conv_transpose3d";
    lz::conv_transpose3d(
        input,
        weight,
        spatial(stride, 1, op, "stride")?,
        spatial(padding, 0, op, "padding")?,
        spatial(dilation, 1, op, "dilation")?,
        spatial(output_padding, 0, op, "output_padding")?,
        groups,
    )
    .map_err(to_py_err)
}

fn conv_general_with(
    input: &Array,
    weight: &Array,
    stride: Option<Ints>,
    padding: Option<ConvPadding>,
    dilations: [Option<Ints>; 2],
    groups: i64,
    flip: bool,
) -> lz::Result<Array> {
    let list = |v: Option<Ints>| v.map(|v| v.0).unwrap_or_default();
    let [kernel_dilation, input_dilation] = dilations;
    let (padding_lo, padding_hi) = padding.map(|p| (p.0, p.1)).unwrap_or_default();
    lz::conv_general(
        input,
        weight,
        &lz::ConvGeneral {
            stride: list(stride),
            padding_lo,
            padding_hi,
            kernel_dilation: list(kernel_dilation),
            input_dilation: list(input_dilation),
            groups,
            flip,
        },
    )
}

bind! {
    functions {
        /// 1D convolution over an input with several channels.
        ///
        /// Args:
        ///     input (array): Input array of shape ``(N, L, C_in)``.
        ///     weight (array): Weight array of shape ``(C_out, K, C_in)``.
        ///     stride (int, optional): Kernel stride. Default: ``1``.
        ///     padding (int, optional): Input padding. Default: ``0``.
        ///     dilation (int, optional): Kernel dilation. Default: ``1``.
        ///     groups (int, optional): Input feature groups. Default: ``1``.
        ///
        /// Returns:
        ///     array: The convolved array.
        conv1d(input: Arr, weight: Arr, /, stride: i64 = 1, padding: i64 = 0, dilation: i64 = 1, groups: i64 = 1, *, stream) => lz::conv1d(&input.0, &weight.0, stride, padding, dilation, groups);
        /// 2D convolution over an input with several channels.
        ///
        /// Args:
        ///     input (array): Input array of shape ``(N, H, W, C_in)``.
        ///     weight (array): Weight array of shape ``(C_out, KH, KW, C_in)``.
        ///     stride (int or tuple(int), optional): Kernel strides. Default: ``1``.
        ///     padding (int or tuple(int), optional): Symmetric input padding. Default: ``0``.
        ///     dilation (int or tuple(int), optional): Kernel dilation. Default: ``1``.
        ///     groups (int, optional): Input feature groups. Default: ``1``.
        ///
        /// Returns:
        ///     array: The convolved array.
        conv2d(input: Arr, weight: Arr, /, stride: Option<Ints> = None, padding: Option<Ints> = None, dilation: Option<Ints> = None, groups: i64 = 1, *, stream) => conv2d_with(&input.0, &weight.0, [stride, padding, dilation], groups);
        /// 3D convolution over an input with several channels.
        ///
        /// Args:
        ///     input (array): Input array of shape ``(N, D, H, W, C_in)``.
        ///     weight (array): Weight array of shape ``(C_out, KD, KH, KW, C_in)``.
        ///     stride (int or tuple(int), optional): Kernel strides. Default: ``1``.
        ///     padding (int or tuple(int), optional): Symmetric input padding. Default: ``0``.
        ///     dilation (int or tuple(int), optional): Kernel dilation. Default: ``1``.
        ///     groups (int, optional): Input feature groups (only ``1``). Default: ``1``.
        ///
        /// Returns:
        ///     array: The convolved array.
        conv3d(input: Arr, weight: Arr, /, stride: Option<Ints> = None, padding: Option<Ints> = None, dilation: Option<Ints> = None, groups: i64 = 1, *, stream) => conv3d_with(&input.0, &weight.0, [stride, padding, dilation], groups);
        /// General convolution over an input with several channels.
        ///
        /// Args:
        ///     input (array): Input array of shape ``(N, ..., C_in)``.
        ///     weight (array): Weight array of shape ``(C_out, ..., C_in)``.
        ///     stride (int or list(int), optional): Kernel strides. Default: ``1``.
        ///     padding (int, list(int), or tuple(list(int), list(int)), optional): Input padding, the same on both sides or ``(low, high)``. Default: ``0``.
        ///     kernel_dilation (int or list(int), optional): Kernel dilation. Default: ``1``.
        ///     input_dilation (int or list(int), optional): Input dilation. Default: ``1``.
        ///     groups (int, optional): Input feature groups. Default: ``1``.
        ///     flip (bool, optional): Flip the kernel's spatial axes (convolution rather than cross-correlation). Default: ``False``.
        ///
        /// Returns:
        ///     array: The convolved array.
        conv_general(input: Arr, weight: Arr, /, stride: Option<Ints> = None, padding: Option<ConvPadding> = None, kernel_dilation: Option<Ints> = None, input_dilation: Option<Ints> = None, groups: i64 = 1, flip: bool = false, *, stream) => conv_general_with(&input.0, &weight.0, stride, padding, [kernel_dilation, input_dilation], groups, flip);
        /// 1D transposed convolution over an input with several channels.
        ///
        /// Args:
        ///     input (array): Input array of shape ``(N, L, C_in)``.
        ///     weight (array): Weight array of shape ``(C_out, K, C_in)``.
        ///     stride (int, optional): Kernel stride. Default: ``1``.
        ///     padding (int, optional): Input padding. Default: ``0``.
        ///     dilation (int, optional): Kernel dilation. Default: ``1``.
        ///     output_padding (int, optional): Output padding. Default: ``0``.
        ///     groups (int, optional): Input feature groups. Default: ``1``.
        ///
        /// Returns:
        ///     array: The convolved array.
        conv_transpose1d(input: Arr, weight: Arr, /, stride: i64 = 1, padding: i64 = 0, dilation: i64 = 1, output_padding: i64 = 0, groups: i64 = 1, *, stream) => lz::conv_transpose1d(&input.0, &weight.0, stride, padding, dilation, output_padding, groups);
        /// 2D transposed convolution over an input with several channels.
        ///
        /// Args:
        ///     input (array): Input array of shape ``(N, H, W, C_in)``.
        ///     weight (array): Weight array of shape ``(C_out, KH, KW, C_in)``.
        ///     stride (int or tuple(int), optional): Kernel strides. Default: ``1``.
        ///     padding (int or tuple(int), optional): Symmetric input padding. Default: ``0``.
        ///     dilation (int or tuple(int), optional): Kernel dilation. Default: ``1``.
        ///     output_padding (int or tuple(int), optional): Output padding. Default: ``0``.
        ///     groups (int, optional): Input feature groups. Default: ``1``.
        ///
        /// Returns:
        ///     array: The convolved array.
        conv_transpose2d(input: Arr, weight: Arr, /, stride: Option<Ints> = None, padding: Option<Ints> = None, dilation: Option<Ints> = None, output_padding: Option<Ints> = None, groups: i64 = 1, *, stream) => conv_transpose2d_with(&input.0, &weight.0, [stride, padding, dilation, output_padding], groups);
        /// 3D transposed convolution over an input with several channels.
        ///
        /// Args:
        ///     input (array): Input array of shape ``(N, D, H, W, C_in)``.
        ///     weight (array): Weight array of shape ``(C_out, KD, KH, KW, C_in)``.
        ///     stride (int or tuple(int), optional): Kernel strides. Default: ``1``.
        ///     padding (int or tuple(int), optional): Symmetric input padding. Default: ``0``.
        ///     dilation (int or tuple(int), optional): Kernel dilation. Default: ``1``.
        ///     output_padding (int or tuple(int), optional): Output padding. Default: ``0``.
        ///     groups (int, optional): Input feature groups (only ``1``). Default: ``1``.
        ///
        /// Returns:
        ///     array: The convolved array.
        conv_transpose3d(input: Arr, weight: Arr, /, stride: Option<Ints> = None, padding: Option<Ints> = None, dilation: Option<Ints> = None, output_padding: Option<Ints> = None, groups: i64 = 1, *, stream) => conv_transpose3d_with(&input.0, &weight.0, [stride, padding, dilation, output_padding], groups);
    }
    methods {}
}
