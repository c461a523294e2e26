//! Convolutions over channels-last arrays, as in MLX: `conv1d`, `conv2d`, `conv3d`,
//! `conv_general` and the transposed `conv_transpose1d/2d/3d`.
//!
//! Everything records one `Convolution` primitive: input `(N, spatial..., C_in)`,
//! weight `(C_out, kernel..., C_in / groups)`, output `(N, out..., C_out)`. Its CPU kernel
//! is im2col + gemm (`backend/cpu/conv.rs`). Its derivative and batching rules are
//! convolutions again: the input cotangent convolves the output cotangent (dilated by
//! the strides) with the flipped, group-transposed weight; the weight cotangent
//! convolves the input, channels and batch swapped, with the output cotangent; batching
//! folds the batch into N or into the channel groups. So gradients of any order and
//! vmap of gradients are convolutions too.
//!
//! A transposed convolution is a convolution of the input dilated by the stride with
//! the flipped kernel, as MLX defines it (the weight keeps the `(C_out, kernel...,
//! C_in / groups)` layout).

use crate::array::Array;
use crate::backend::cpu::conv::{convolution as conv_kernel, ConvGeometry};
use crate::backend::Tensor;
use crate::dtype::promote_types;
use crate::error::{Error, Result};
use crate::ops::batching::batch_to_front;
use crate::ops::binary::add;
use crate::ops::cast::astype;
use crate::ops::creation::zeros_like;
use crate::ops::shape::{flip, swapaxes};
use crate::ops::view::{reshape, slice, transpose};
use crate::primitive::{mlx_ints, Export, MlxNode, MlxState, OutputSpec, Primitive};
use crate::shape::checked_size;

/// A convolution with every parameter per spatial axis. Padding may be negative (a
/// crop) here: the derivative rules produce such convolutions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Convolution {
    stride: Vec<usize>,
    padding_lo: Vec<isize>,
    padding_hi: Vec<isize>,
    kernel_dilation: Vec<usize>,
    input_dilation: Vec<usize>,
    groups: usize,
    flip: bool,
}

/// The length of `len` positions with `dilation - 1` holes between neighbours.
fn dilated(len: usize, dilation: usize) -> isize {
    if len == 0 {
        0
    } else {
        ((len - 1) * dilation + 1) as isize
    }
}

impl Convolution {
    /// The output's spatial length along axis `d` for input length `len` and kernel
    /// length `taps` (zero when the padded input is shorter than the dilated kernel).
    fn out_len(&self, d: usize, len: usize, taps: usize) -> usize {
        let span = dilated(len, self.input_dilation[d]) + self.padding_lo[d] + self.padding_hi[d]
            - dilated(taps, self.kernel_dilation[d]);
        (span.div_euclid(self.stride[d] as isize) + 1).max(0) as usize
    }

    fn out_shape(&self, input: &[usize], weight: &[usize]) -> Vec<usize> {
        let nd = input.len() - 2;
        let mut shape = vec![input[0]];
        shape.extend((0..nd).map(|d| self.out_len(d, input[d + 1], weight[d + 1])));
        shape.push(weight[0]);
        shape
    }

    /// Records the convolution of `input` and `weight` (same dtype, shapes already
    /// consistent with `self`).
    fn record(self, input: &Array, weight: &Array) -> Result<Array> {
        let shape = self.out_shape(input.shape(), weight.shape());
        checked_size(&shape)?;
        let dtype = input.dtype();
        Ok(Array::from_op(
            self,
            vec![input.clone(), weight.clone()],
            shape,
            dtype,
        ))
    }

    fn spatial_dims(&self) -> usize {
        self.stride.len()
    }

    /// The cotangent of the input: the output cotangent `g`, dilated by the strides,
    /// convolved with the flipped weight whose in and out channels are swapped per group.
    fn input_cotangent(&self, input: &Array, weight: &Array, g: &Array) -> Result<Array> {
        let nd = self.spatial_dims();
        let mut padding_lo = Vec::with_capacity(nd);
        let mut padding_hi = Vec::with_capacity(nd);
        for d in 0..nd {
            let reach = dilated(weight.shape()[d + 1], self.kernel_dilation[d]) - 1;
            padding_lo.push(reach - self.padding_lo[d]);
            let in_span = dilated(input.shape()[d + 1], self.input_dilation[d]);
            let out_span = dilated(g.shape()[d + 1], self.stride[d]);
            padding_hi.push(in_span - out_span + self.padding_lo[d]);
        }
        let transposed = Convolution {
            stride: self.input_dilation.clone(),
            padding_lo,
            padding_hi,
            kernel_dilation: self.kernel_dilation.clone(),
            input_dilation: self.stride.clone(),
            groups: self.groups,
            flip: !self.flip,
        };
        transposed.record(g, &self.swap_weight_channels(weight)?)
    }

    /// `(C_out, kernel..., C_in / groups)` to `(C_in, kernel..., C_out / groups)`,
    /// keeping the channels of each group together.
    fn swap_weight_channels(&self, weight: &Array) -> Result<Array> {
        let nd = self.spatial_dims();
        let s = weight.shape();
        let (c_out, cig) = (s[0], s[nd + 1]);
        let g = self.groups;
        let mut split = vec![g as i64, (c_out / g) as i64];
        split.extend(s[1..=nd].iter().map(|&k| k as i64));
        split.push(cig as i64);
        let split = reshape(weight, &split)?;
        // (G, C_out/G, kernel..., C_in/G) -> (G, C_in/G, kernel..., C_out/G)
        let last = (nd + 2) as i32;
        let mut perm = vec![0, last];
        perm.extend(2..last);
        perm.push(1);
        let swapped = transpose(&split, &perm)?;
        let mut shape = vec![(g * cig) as i64];
        shape.extend(s[1..=nd].iter().map(|&k| k as i64));
        shape.push((c_out / g) as i64);
        reshape(&swapped, &shape)
    }

    /// The cotangent of the weight: the input with batch and channels swapped
    /// (`(C_in / groups, spatial..., groups * N)`) convolved with the output cotangent
    /// seen as a `(C_out, out..., N)` weight; the kernel taps are the output positions.
    fn weight_cotangent(&self, input: &Array, weight: &Array, g: &Array) -> Result<Array> {
        let nd = self.spatial_dims();
        let s = input.shape();
        let (batch, c_in) = (s[0], s[nd + 1]);
        let groups = self.groups;
        let cig = c_in / groups;
        let mut split: Vec<i64> = s[..=nd].iter().map(|&d| d as i64).collect();
        split.extend([groups as i64, cig as i64]);
        let split = reshape(input, &split)?;
        // (N, spatial..., G, C_in/G) -> (C_in/G, spatial..., G, N)
        let mut perm = vec![(nd + 2) as i32];
        perm.extend(1..=(nd + 1) as i32);
        perm.push(0);
        let swapped = transpose(&split, &perm)?;
        let mut shape: Vec<i64> = vec![cig as i64];
        shape.extend(s[1..=nd].iter().map(|&d| d as i64));
        shape.push((groups * batch) as i64);
        let lhs = reshape(&swapped, &shape)?;
        let rhs = swapaxes(g, 0, -1)?;
        let mut padding_hi = Vec::with_capacity(nd);
        for d in 0..nd {
            let in_span = dilated(s[d + 1], self.input_dilation[d]);
            let out_span = dilated(g.shape()[d + 1], self.stride[d]);
            let taps_span = dilated(weight.shape()[d + 1], self.kernel_dilation[d]);
            padding_hi.push(out_span - in_span + taps_span - 1 - self.padding_lo[d]);
        }
        let correlation = Convolution {
            stride: self.kernel_dilation.clone(),
            padding_lo: self.padding_lo.clone(),
            padding_hi,
            kernel_dilation: self.stride.clone(),
            input_dilation: self.input_dilation.clone(),
            groups,
            flip: false,
        };
        let grad = swapaxes(&correlation.record(&lhs, &rhs)?, 0, -1)?;
        if self.flip {
            let spatial: Vec<i32> = (1..=nd as i32).collect();
            flip(&grad, spatial)
        } else {
            Ok(grad)
        }
    }
}

impl Primitive for Convolution {
    fn name(&self) -> &'static str {
        "convolution"
    }

    fn params(&self) -> String {
        format!(
            "stride={:?}, padding=({:?}, {:?}), kernel_dilation={:?}, input_dilation={:?}, \
             groups={}, flip={}",
            self.stride,
            self.padding_lo,
            self.padding_hi,
            self.kernel_dilation,
            self.input_dilation,
            self.groups,
            self.flip
        )
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        let state = vec![
            mlx_ints("conv", &self.stride)?,
            mlx_ints("conv", &self.padding_lo)?,
            mlx_ints("conv", &self.padding_hi)?,
            mlx_ints("conv", &self.kernel_dilation)?,
            mlx_ints("conv", &self.input_dilation)?,
            MlxState::Int(self.groups as i32),
            MlxState::Bool(self.flip),
        ];
        MlxNode::single("Convolution", state, inputs, outputs)
    }

    fn eval(&self, mut inputs: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let weight = inputs.pop().expect("convolution has two inputs");
        let input = inputs.pop().expect("convolution has two inputs");
        let geometry = ConvGeometry {
            stride: &self.stride,
            padding_lo: &self.padding_lo,
            kernel_dilation: &self.kernel_dilation,
            input_dilation: &self.input_dilation,
            groups: self.groups,
            flip: self.flip,
        };
        Ok(vec![conv_kernel(
            input,
            weight,
            &geometry,
            &outputs[0].shape,
        )?])
    }

    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        cotangents: &[Array],
        argnums: &[usize],
    ) -> Result<Vec<Array>> {
        let (input, weight, g) = (&inputs[0], &inputs[1], &cotangents[0]);
        argnums
            .iter()
            .map(|&i| {
                if i == 0 {
                    self.input_cotangent(input, weight, g)
                } else {
                    self.weight_cotangent(input, weight, g)
                }
            })
            .collect()
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], argnums: &[usize]) -> Result<Vec<Array>> {
        // Bilinear: d(x * w) = dx * w + x * dw.
        let mut total: Option<Array> = None;
        for (&i, t) in argnums.iter().zip(tangents) {
            let term = if i == 0 {
                self.clone().record(t, &inputs[1])?
            } else {
                self.clone().record(&inputs[0], t)?
            };
            total = Some(match total {
                Some(acc) => add(&acc, &term)?,
                None => term,
            });
        }
        match total {
            Some(t) => Ok(vec![t]),
            None => Ok(vec![zeros_like(
                &self.clone().record(&inputs[0], &inputs[1])?,
            )?]),
        }
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let nd = self.spatial_dims();
        let x = batch_to_front(&inputs[0], axes[0])?;
        let w = batch_to_front(&inputs[1], axes[1])?;
        let dims = |a: &Array| -> Vec<i64> { a.shape().iter().map(|&d| d as i64).collect() };
        match (axes[0].is_some(), axes[1].is_some()) {
            (true, false) => {
                // The batch joins N.
                let s = dims(&x);
                let mut merged = vec![s[0] * s[1]];
                merged.extend(&s[2..]);
                let out = self.clone().record(&reshape(&x, &merged)?, &w)?;
                let mut shape = vec![s[0], s[1]];
                shape.extend(dims(&out)[1..].iter());
                Ok((vec![reshape(&out, &shape)?], vec![Some(0)]))
            }
            (false, true) => {
                // The batch joins the output channels, inside each group:
                // (B, C_out, ...) -> (G, B, C_out/G, ...) -> (G * B * C_out/G, ...).
                let s = dims(&w);
                let (b, g) = (s[0], self.groups as i64);
                let mut split = vec![b, g, s[1] / g];
                split.extend(&s[2..]);
                let grouped = swapaxes(&reshape(&w, &split)?, 0, 1)?;
                let mut merged = vec![s[0] * s[1]];
                merged.extend(&s[2..]);
                let out = self.clone().record(&x, &reshape(&grouped, &merged)?)?;
                let o = dims(&out);
                let mut shape = o[..=nd].to_vec();
                shape.extend([g, b, s[1] / g]);
                let unsplit = swapaxes(&reshape(&out, &shape)?, -3, -2)?;
                let mut shape = o[..=nd].to_vec();
                shape.extend([b, s[1]]);
                Ok((vec![reshape(&unsplit, &shape)?], vec![Some(nd + 1)]))
            }
            _ => {
                // Each batch entry becomes its own set of groups.
                let xs = dims(&x);
                let ws = dims(&w);
                let b = xs[0];
                let mut perm: Vec<i32> = (1..=(nd + 1) as i32).collect();
                perm.push(0);
                perm.push((nd + 2) as i32);
                let moved = transpose(&x, &perm)?;
                let mut x_shape = xs[1..=nd + 1].to_vec();
                x_shape.push(b * xs[nd + 2]);
                let mut w_shape = vec![b * ws[1]];
                w_shape.extend(&ws[2..]);
                let batched = Convolution {
                    groups: self.groups * b as usize,
                    ..self.clone()
                };
                let out = batched.record(&reshape(&moved, &x_shape)?, &reshape(&w, &w_shape)?)?;
                let mut shape = dims(&out)[..=nd].to_vec();
                shape.extend([b, ws[1]]);
                Ok((vec![reshape(&out, &shape)?], vec![Some(nd + 1)]))
            }
        }
    }
}

/// The parameters of [`conv_general`]. Each per-axis list may be empty (the default
/// value for every spatial axis), hold one value (used for every axis) or one value per
/// spatial axis.
///
/// ```
/// use lazulite::ConvGeneral;
/// let params = ConvGeneral { stride: vec![2], padding_lo: vec![1, 0], padding_hi: vec![0, 1],
///                            ..ConvGeneral::default() };
/// assert_eq!(params.groups, 1);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvGeneral {
    /// Step between output positions (default 1).
    pub stride: Vec<i64>,
    /// Zeros added before each spatial axis (default 0; negative crops).
    pub padding_lo: Vec<i64>,
    /// Zeros added after each spatial axis (default 0; negative crops).
    pub padding_hi: Vec<i64>,
    /// Spacing between kernel taps (default 1).
    pub kernel_dilation: Vec<i64>,
    /// Spacing between input elements: `d - 1` zeros are inserted between neighbours
    /// (default 1).
    pub input_dilation: Vec<i64>,
    /// Channel groups: input and output channels split into this many independent
    /// convolutions (default 1).
    pub groups: i64,
    /// Flip the kernel's spatial axes: a convolution rather than a cross-correlation.
    pub flip: bool,
}

impl Default for ConvGeneral {
    fn default() -> ConvGeneral {
        ConvGeneral {
            stride: Vec::new(),
            padding_lo: Vec::new(),
            padding_hi: Vec::new(),
            kernel_dilation: Vec::new(),
            input_dilation: Vec::new(),
            groups: 1,
            flip: false,
        }
    }
}

/// A list as MLX prints shapes and parameter vectors in messages: `(1,5,5,4)`.
fn tuple_text<T: ToString>(values: &[T]) -> String {
    let items: Vec<String> = values.iter().map(|v| v.to_string()).collect();
    format!("({})", items.join(","))
}

/// MLX's checks of the input and weight before any parameter is looked at.
fn check_operands(input: &Array, weight: &Array, nd: usize, groups: i64) -> Result<()> {
    if !input.dtype().is_floating() {
        return Err(Error::value(format!(
            "[conv] Invalid input array with type {}. Convolution currently only supports \
             floating point types",
            input.dtype()
        )));
    }
    if weight.ndim() != nd + 2 {
        return Err(Error::value(format!(
            "[conv] Invalid weight array with {} dimensions for {nd}D convolution. Expected an \
             array with {} dimensions following the format [C_out, ..., C_in].",
            weight.ndim(),
            nd + 2
        )));
    }
    // MLX divides by the number of groups here (a crash for 0): refuse it instead.
    if groups < 1 {
        return Err(Error::value(format!(
            "[conv] The number of groups must be positive. Got {groups} groups."
        )));
    }
    let c_in = input.shape()[nd + 1] as i64;
    let c_out = weight.shape()[0] as i64;
    if c_in % groups != 0 {
        return Err(Error::value(format!(
            "[conv] The input channels must be divisible by the number of groups. Got input \
             with shape {} and {groups} groups.",
            tuple_text(input.shape())
        )));
    }
    if groups > 1 && c_out % groups != 0 {
        return Err(Error::value(format!(
            "[conv] If groups > 1, the output channels must be divisible by the number of \
             groups. Got {c_out} output channels and {groups} groups."
        )));
    }
    let per_group = weight.shape()[nd + 1] as i64;
    if c_in != groups * per_group {
        return Err(Error::value(if groups == 1 {
            format!(
                "[conv] Expect the input channels in the input and weight array to match but \
                 got shapes - input: {} and weight: {}",
                tuple_text(input.shape()),
                tuple_text(weight.shape())
            )
        } else {
            format!(
                "Given groups={groups} and weights of shape {}, expected to have {} input \
                 channels but got {c_in} input channels instead.",
                tuple_text(weight.shape()),
                groups * per_group
            )
        }));
    }
    if let Some(d) = weight.shape()[1..=nd].iter().position(|&k| k == 0) {
        // MLX runs an invalid gemm on an empty kernel; refuse it.
        return Err(Error::value(format!(
            "[conv] Weight spatial dimensions must be positive. Got error at axis {} for \
             weight of shape {}.",
            d + 1,
            tuple_text(weight.shape())
        )));
    }
    Ok(())
}

/// A per-axis list with MLX's broadcasting: empty gives `default`, one value is repeated.
fn per_axis(values: &[i64], nd: usize, default: i64) -> Vec<i64> {
    match values {
        [] => vec![default; nd],
        [v] => vec![*v; nd],
        _ => values.to_vec(),
    }
}

/// Checks a positive per-axis parameter, as MLX's messages phrase it.
fn positive(values: &[i64], what: &str, title: &str) -> Result<Vec<usize>> {
    if values.iter().any(|&v| v <= 0) {
        return Err(Error::value(format!(
            "[conv] {title} sizes must be positive. Got {what} {}.",
            tuple_text(values)
        )));
    }
    Ok(values.iter().map(|&v| v as usize).collect())
}

/// General convolution over 1 to 3 spatial axes: input `(N, spatial..., C_in)`, weight
/// `(C_out, kernel..., C_in / groups)`, result `(N, out..., C_out)` in the promoted
/// dtype. The input must be floating point. Negative padding crops the input. Like MLX,
/// groups other than 1 are accepted for 1-D and 2-D convolutions only.
///
/// ```
/// use lazulite::{conv_general, ones, ConvGeneral, DType};
/// let x = ones(&[1, 5, 5, 2], DType::Float32).unwrap();
/// let w = ones(&[3, 3, 3, 2], DType::Float32).unwrap();
/// let params = ConvGeneral { padding_lo: vec![1, 0], padding_hi: vec![2, 1],
///                            input_dilation: vec![2], ..ConvGeneral::default() };
/// let y = conv_general(&x, &w, &params).unwrap();
/// assert_eq!(y.shape(), &[1, 10, 8, 3]);
/// ```
pub fn conv_general(input: &Array, weight: &Array, params: &ConvGeneral) -> Result<Array> {
    let groups = params.groups;
    if groups != 1 && input.ndim() != 3 && input.ndim() != 4 {
        return Err(Error::value(
            "[conv] Can only handle groups != 1 in 1D or 2D convolutions.",
        ));
    }
    if !(3..=5).contains(&input.ndim()) {
        return Err(Error::value(
            "[conv] Only works for inputs with 1-3 spatial dimensions. The inputs must be in \
             the format [N, ..., C_in]",
        ));
    }
    let nd = input.ndim() - 2;
    check_operands(input, weight, nd, groups)?;
    let dtype = promote_types(input.dtype(), weight.dtype());
    let (mut input, weight) = (astype(input, dtype)?, astype(weight, dtype)?);

    let stride = per_axis(&params.stride, nd, 1);
    let mut padding_lo = per_axis(&params.padding_lo, nd, 0);
    let mut padding_hi = per_axis(&params.padding_hi, nd, 0);
    let kernel_dilation = per_axis(&params.kernel_dilation, nd, 1);
    let input_dilation = per_axis(&params.input_dilation, nd, 1);

    // Negative padding crops the input, as in MLX (messages then show the cropped shape).
    if padding_lo.iter().chain(&padding_hi).any(|&p| p < 0) {
        let mut start = vec![0i64; input.ndim()];
        let mut stop: Vec<i64> = input.shape().iter().map(|&d| d as i64).collect();
        for d in 0..nd.min(padding_lo.len()).min(padding_hi.len()) {
            if padding_lo[d] < 0 {
                start[d + 1] = -padding_lo[d];
                padding_lo[d] = 0;
            }
            if padding_hi[d] < 0 {
                stop[d + 1] = (stop[d + 1] + padding_hi[d]).max(start[d + 1]);
                padding_hi[d] = 0;
            }
        }
        input = slice(&input, &start, &stop, &vec![1; input.ndim()])?;
    }

    if stride.len() != nd {
        return Err(Error::value(format!(
            "[conv] Invalid strides {} for {nd}D convolution.",
            tuple_text(&stride)
        )));
    }
    if padding_lo.len() != nd || padding_hi.len() != nd {
        return Err(Error::value(format!(
            "[conv] Invalid padding {} | {} for {nd}D convolution.",
            tuple_text(&padding_lo),
            tuple_text(&padding_hi)
        )));
    }
    if kernel_dilation.len() != nd {
        return Err(Error::value(format!(
            "[conv] Invalid kernel dilation {} for {nd}D convolution.",
            tuple_text(&kernel_dilation)
        )));
    }
    if input_dilation.len() != nd {
        return Err(Error::value(format!(
            "[conv] Invalid input dilation {} for {nd}D convolution.",
            tuple_text(&input_dilation)
        )));
    }
    let kernel_dilation = positive(&kernel_dilation, "kernel dilation", "Kernel dilation")?;
    let input_dilation = positive(&input_dilation, "input dilation", "Input dilation")?;
    let stride = positive(&stride, "strides", "Stride")?;
    let conv = Convolution {
        stride,
        padding_lo: padding_lo.iter().map(|&p| p as isize).collect(),
        padding_hi: padding_hi.iter().map(|&p| p as isize).collect(),
        kernel_dilation,
        input_dilation,
        groups: groups as usize,
        flip: params.flip,
    };
    for d in 0..nd {
        let span = dilated(input.shape()[d + 1], conv.input_dilation[d])
            + conv.padding_lo[d]
            + conv.padding_hi[d];
        // MLX truncates a negative span towards zero and then reads past the input;
        // a kernel that does not fit is an error here.
        if span < dilated(weight.shape()[d + 1], conv.kernel_dilation[d]) {
            return Err(Error::value(format!(
                "[conv] Spatial dimensions of input after padding cannot be smaller than \
                 weight spatial dimensions. Got error at axis {} for input with shape {}, \
                 padding low {}, padding high {}, and weight of shape {}.",
                d + 1,
                tuple_text(input.shape()),
                tuple_text(&padding_lo),
                tuple_text(&padding_hi),
                tuple_text(weight.shape())
            )));
        }
    }
    conv.record(&input, &weight)
}

/// 1-D convolution: input `(N, L, C_in)`, weight `(C_out, K, C_in / groups)`.
///
/// ```
/// use lazulite::{conv1d, Array};
/// let x = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[1, 4, 1]).unwrap();
/// let w = Array::from_slice(&[1.0f32, -1.0], &[1, 2, 1]).unwrap();
/// let y = conv1d(&x, &w, 1, 0, 1, 1).unwrap();
/// assert_eq!(y.to_vec::<f32>().unwrap(), vec![-1.0, -1.0, -1.0]);
/// ```
pub fn conv1d(
    input: &Array,
    weight: &Array,
    stride: i64,
    padding: i64,
    dilation: i64,
    groups: i64,
) -> Result<Array> {
    conv_general(
        input,
        weight,
        &ConvGeneral {
            stride: vec![stride],
            padding_lo: vec![padding],
            padding_hi: vec![padding],
            kernel_dilation: vec![dilation],
            input_dilation: vec![1],
            groups,
            flip: false,
        },
    )
}

/// 2-D convolution: input `(N, H, W, C_in)`, weight `(C_out, KH, KW, C_in / groups)`;
/// stride, (symmetric) padding and dilation per spatial axis.
///
/// ```
/// use lazulite::{conv2d, ones, DType};
/// let x = ones(&[2, 8, 8, 3], DType::Float32).unwrap();
/// let w = ones(&[4, 3, 3, 3], DType::Float32).unwrap();
/// let y = conv2d(&x, &w, [2, 2], [1, 1], [1, 1], 1).unwrap();
/// assert_eq!(y.shape(), &[2, 4, 4, 4]);
/// ```
pub fn conv2d(
    input: &Array,
    weight: &Array,
    stride: [i64; 2],
    padding: [i64; 2],
    dilation: [i64; 2],
    groups: i64,
) -> Result<Array> {
    conv_general(
        input,
        weight,
        &ConvGeneral {
            stride: stride.to_vec(),
            padding_lo: padding.to_vec(),
            padding_hi: padding.to_vec(),
            kernel_dilation: dilation.to_vec(),
            input_dilation: vec![1; 2],
            groups,
            flip: false,
        },
    )
}

/// 3-D convolution: input `(N, D, H, W, C_in)`, weight `(C_out, KD, KH, KW, C_in)`
/// (like MLX, only `groups == 1`).
///
/// ```
/// use lazulite::{conv3d, ones, DType};
/// let x = ones(&[1, 4, 4, 4, 2], DType::Float32).unwrap();
/// let w = ones(&[5, 2, 2, 2, 2], DType::Float32).unwrap();
/// let y = conv3d(&x, &w, [1, 1, 1], [0, 0, 0], [1, 1, 1], 1).unwrap();
/// assert_eq!(y.shape(), &[1, 3, 3, 3, 5]);
/// assert_eq!(y.to_vec::<f32>().unwrap()[0], 16.0);
/// ```
pub fn conv3d(
    input: &Array,
    weight: &Array,
    stride: [i64; 3],
    padding: [i64; 3],
    dilation: [i64; 3],
    groups: i64,
) -> Result<Array> {
    conv_general(
        input,
        weight,
        &ConvGeneral {
            stride: stride.to_vec(),
            padding_lo: padding.to_vec(),
            padding_hi: padding.to_vec(),
            kernel_dilation: dilation.to_vec(),
            input_dilation: vec![1; 3],
            groups,
            flip: false,
        },
    )
}

/// The transposed convolution of MLX: the input dilated by `stride`, padded by
/// `dilation * (K - 1) - padding` before and that plus `output_padding` after, convolved
/// (kernel flipped) with `weight` `(C_out, kernel..., C_in / groups)`.
fn conv_transpose_general(
    input: &Array,
    weight: &Array,
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    output_padding: &[i64],
    groups: i64,
) -> Result<Array> {
    let nd = stride.len();
    let (mut padding_lo, mut padding_hi) = (vec![0; nd], vec![0; nd]);
    // With mismatched ranks conv_general reports the error; the padding does not matter.
    if weight.ndim() == nd + 2 {
        for d in 0..nd {
            let reach = dilation[d] * (weight.shape()[d + 1] as i64 - 1);
            padding_lo[d] = reach - padding[d];
            padding_hi[d] = reach - padding[d] + output_padding[d];
        }
    }
    conv_general(
        input,
        weight,
        &ConvGeneral {
            stride: vec![1; nd],
            padding_lo,
            padding_hi,
            kernel_dilation: dilation.to_vec(),
            input_dilation: stride.to_vec(),
            groups,
            flip: true,
        },
    )
}

/// 1-D transposed convolution (the gradient of [`conv1d`] with respect to its input):
/// input `(N, L, C_in)`, weight `(C_out, K, C_in / groups)`, output length
/// `(L - 1) * stride - 2 * padding + dilation * (K - 1) + 1 + output_padding`.
///
/// ```
/// use lazulite::{conv_transpose1d, ones, DType};
/// let x = ones(&[1, 3, 1], DType::Float32).unwrap();
/// let w = ones(&[1, 2, 1], DType::Float32).unwrap();
/// let y = conv_transpose1d(&x, &w, 2, 0, 1, 1, 1).unwrap();
/// assert_eq!(y.to_vec::<f32>().unwrap(), vec![1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0]);
/// ```
pub fn conv_transpose1d(
    input: &Array,
    weight: &Array,
    stride: i64,
    padding: i64,
    dilation: i64,
    output_padding: i64,
    groups: i64,
) -> Result<Array> {
    conv_transpose_general(
        input,
        weight,
        &[stride],
        &[padding],
        &[dilation],
        &[output_padding],
        groups,
    )
}

/// 2-D transposed convolution: input `(N, H, W, C_in)`, weight
/// `(C_out, KH, KW, C_in / groups)`.
///
/// ```
/// use lazulite::{conv_transpose2d, ones, DType};
/// let x = ones(&[1, 4, 4, 2], DType::Float32).unwrap();
/// let w = ones(&[3, 3, 3, 2], DType::Float32).unwrap();
/// let y = conv_transpose2d(&x, &w, [2, 2], [1, 1], [1, 1], [1, 1], 1).unwrap();
/// assert_eq!(y.shape(), &[1, 8, 8, 3]);
/// ```
pub fn conv_transpose2d(
    input: &Array,
    weight: &Array,
    stride: [i64; 2],
    padding: [i64; 2],
    dilation: [i64; 2],
    output_padding: [i64; 2],
    groups: i64,
) -> Result<Array> {
    conv_transpose_general(
        input,
        weight,
        &stride,
        &padding,
        &dilation,
        &output_padding,
        groups,
    )
}

/// 3-D transposed convolution: input `(N, D, H, W, C_in)`, weight
/// `(C_out, KD, KH, KW, C_in)` (like MLX, only `groups == 1`).
///
/// ```
/// use lazulite::{conv_transpose3d, ones, DType};
/// let x = ones(&[1, 2, 2, 2, 1], DType::Float32).unwrap();
/// let w = ones(&[1, 2, 2, 2, 1], DType::Float32).unwrap();
/// let y = conv_transpose3d(&x, &w, [1, 1, 1], [0, 0, 0], [1, 1, 1], [0, 0, 0], 1).unwrap();
/// assert_eq!(y.shape(), &[1, 3, 3, 3, 1]);
/// ```
pub fn conv_transpose3d(
    input: &Array,
    weight: &Array,
    stride: [i64; 3],
    padding: [i64; 3],
    dilation: [i64; 3],
    output_padding: [i64; 3],
    groups: i64,
) -> Result<Array> {
    conv_transpose_general(
        input,
        weight,
        &stride,
        &padding,
        &dilation,
        &output_padding,
        groups,
    )
}
