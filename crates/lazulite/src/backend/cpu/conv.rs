//! Convolution of channels-last tensors by im2col and gemm.
//!
//! The input is `(N, spatial..., C_in)`, the weight `(C_out, kernel..., C_in / groups)`
//! and the output `(N, out..., C_out)`. Each block of output rows gathers its receptive
//! fields into a patch matrix `(rows, kernel... * C_in / groups)` (zeros where a field
//! reaches padding or the holes of a dilated input), which one gemm per group multiplies
//! by the weight seen as a `(kernel... * C_in / groups, C_out / groups)` matrix, writing
//! straight into the output. A 1x1 kernel with unit strides and no padding needs no
//! patches: the input rows are the patch matrix.

use super::copy::contiguous;
use super::elementwise::cast;
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::element::Element;
use crate::error::{Error, Result};
use gemm::{f16, Parallelism};
use half::bf16;
use rayon::prelude::*;

/// Products with at least this many multiply-adds are worth splitting across threads.
const PARALLEL_WORK: usize = 1 << 17;

/// Elements of one patch block: small enough to stay in cache while gemm reads it.
const PATCH_BLOCK_ELEMENTS: usize = 1 << 18;

/// Fewest rows per patch block, so that gemm's packing of the weight is amortised.
const MIN_BLOCK_ROWS: usize = 128;

/// How output positions map to input positions along each spatial axis. Output `o` and
/// kernel tap `k` read position `o * stride + k * kernel_dilation - padding_lo` of the
/// input dilated by `input_dilation` (holes and positions outside it read zero); with
/// `flip`, tap `k` uses weight tap `K - 1 - k`. Padding may be negative (a crop).
#[derive(Clone, Debug)]
pub struct ConvGeometry<'a> {
    pub stride: &'a [usize],
    pub padding_lo: &'a [isize],
    pub kernel_dilation: &'a [usize],
    pub input_dilation: &'a [usize],
    pub groups: usize,
    pub flip: bool,
}

/// The convolution of `input` with `weight` (same dtype: float16, bfloat16, float32 or
/// float64; any layout) into a new contiguous tensor of `out_shape`.
pub fn convolution(
    input: Tensor,
    weight: Tensor,
    geometry: &ConvGeometry,
    out_shape: &[usize],
) -> Result<Tensor> {
    match input.dtype {
        DType::Float32 => run::<f32>(input, weight, geometry, out_shape),
        DType::Float64 => run::<f64>(input, weight, geometry, out_shape),
        // Half precision accumulates in float32 and rounds once, as matmul does.
        DType::Float16 => {
            let out = run::<f32>(
                cast::<f16, f32>(input)?,
                cast::<f16, f32>(weight)?,
                geometry,
                out_shape,
            )?;
            cast::<f32, f16>(out)
        }
        DType::BFloat16 => {
            let out = run::<f32>(
                cast::<bf16, f32>(input)?,
                cast::<bf16, f32>(weight)?,
                geometry,
                out_shape,
            )?;
            cast::<f32, bf16>(out)
        }
        other => Err(Error::type_error(format!(
            "[conv] No convolution kernel for {other}."
        ))),
    }
}

/// Raw pointers shared by the worker threads; each writes its own output rows.
#[derive(Copy, Clone)]
struct SendPtr<T>(*mut T);
// SAFETY: the pointers address buffers that outlive the parallel loops, and threads
// write disjoint rows of the output.
unsafe impl<T> Send for SendPtr<T> {}
unsafe impl<T> Sync for SendPtr<T> {}

/// Multi-index of `flat` (row-major) over `dims`, written into `index`.
fn unravel(mut flat: usize, dims: &[usize], index: &mut [usize]) {
    for (i, &d) in index.iter_mut().zip(dims).rev() {
        *i = flat % d;
        flat /= d;
    }
}

/// Everything a worker needs to build the patches of a block of output rows.
struct Patches<'a> {
    /// Per spatial axis, the input index read by output `o` and tap `k` at
    /// `[o * K + k]`, or -1 where that reads zero.
    sources: Vec<Vec<isize>>,
    out_spatial: &'a [usize],
    kernel: &'a [usize],
    /// Input strides in elements: batch, spatial axes.
    in_strides: Vec<usize>,
    group_channels: usize,
}

impl Patches<'_> {
    /// Fills `patches` (`rows x taps * group_channels`, row-major) for output rows
    /// `first..first + rows` and channel group `group`.
    fn fill<G: Copy + Default>(
        &self,
        input: *const G,
        first: usize,
        rows: usize,
        group: usize,
        patches: &mut [G],
    ) {
        let nd = self.kernel.len();
        let taps: usize = self.kernel.iter().product();
        let cig = self.group_channels;
        let mut out_index = vec![0usize; nd + 1];
        let mut tap = vec![0usize; nd];
        let dims: Vec<usize> = std::iter::once(usize::MAX)
            .chain(self.out_spatial.iter().copied())
            .collect();
        for (r, row) in patches.chunks_exact_mut(taps * cig).take(rows).enumerate() {
            unravel(first + r, &dims, &mut out_index);
            let base = out_index[0] * self.in_strides[0] + group * cig;
            for (t, dst) in row.chunks_exact_mut(cig).enumerate() {
                unravel(t, self.kernel, &mut tap);
                let mut offset = base;
                let mut inside = true;
                for d in 0..nd {
                    let src = self.sources[d][out_index[d + 1] * self.kernel[d] + tap[d]];
                    if src < 0 {
                        inside = false;
                        break;
                    }
                    offset += src as usize * self.in_strides[d + 1];
                }
                if inside {
                    // SAFETY: `offset` addresses `cig` channels of one input pixel,
                    // inside the contiguous input (indices come from `sources`).
                    let src = unsafe { std::slice::from_raw_parts(input.add(offset), cig) };
                    dst.copy_from_slice(src);
                } else {
                    dst.fill(G::default());
                }
            }
        }
    }
}

fn run<G: Element<Storage = G>>(
    input: Tensor,
    weight: Tensor,
    geometry: &ConvGeometry,
    out_shape: &[usize],
) -> Result<Tensor> {
    let input = contiguous(input)?;
    let weight = contiguous(weight)?;
    let mut out = Tensor::uninit(input.dtype, out_shape)?;
    let nd = out_shape.len() - 2;
    let (batch, c_in, c_out) = (input.shape[0], input.shape[nd + 1], out_shape[nd + 1]);
    let groups = geometry.groups;
    let (cig, cog) = (c_in / groups, c_out / groups);
    let kernel = &weight.shape[1..=nd];
    let out_spatial = &out_shape[1..=nd];
    let taps: usize = kernel.iter().product();
    let depth = taps * cig;
    let rows = batch * out_spatial.iter().product::<usize>();
    if out.size() == 0 {
        return Ok(out);
    }
    if depth == 0 {
        out.slice_mut::<G>().fill(G::default());
        return Ok(out);
    }
    let dst = SendPtr(out.data_ptr_mut::<G>());
    // SAFETY: both tensors are contiguous; their offsets address their first element.
    let in_ptr = SendPtr(unsafe { (input.buf.as_ptr() as *mut G).add(input.offset) });
    let w_ptr = SendPtr(unsafe { (weight.buf.as_ptr() as *mut G).add(weight.offset) });

    // One gemm of `m` output rows starting at row `first` for `group`, reading patches
    // with row stride `lhs_rs` from `lhs`.
    let product =
        |lhs: SendPtr<G>, lhs_rs: usize, first: usize, m: usize, group: usize, parallelism| {
            let (dst, w_ptr) = (dst, w_ptr);
            // SAFETY: the output block is rows `first..first + m`, columns of `group`, inside
            // `out`; the weight matrix of `group` is `cog` contiguous runs of `depth`.
            unsafe {
                gemm::gemm(
                    m,
                    cog,
                    depth,
                    dst.0.add(first * c_out + group * cog),
                    1,
                    c_out as isize,
                    false,
                    lhs.0,
                    1,
                    lhs_rs as isize,
                    w_ptr.0.add(group * cog * depth),
                    depth as isize,
                    1,
                    G::default(),
                    G::from_f64(1.0),
                    false,
                    false,
                    false,
                    parallelism,
                )
            }
        };
    let work = rows.saturating_mul(depth).saturating_mul(c_out);
    let unit = |v: &[usize]| v.iter().all(|&x| x == 1);
    let pointwise = taps == 1
        && unit(geometry.stride)
        && unit(geometry.input_dilation)
        && geometry.padding_lo.iter().all(|&p| p == 0)
        && out_spatial == &input.shape[1..=nd];
    if pointwise {
        let parallelism = if work >= PARALLEL_WORK {
            Parallelism::Rayon(0)
        } else {
            Parallelism::None
        };
        for group in 0..groups {
            // SAFETY: the group's first channel of the first pixel.
            let lhs = SendPtr(unsafe { in_ptr.0.add(group * cig) });
            product(lhs, c_in, 0, rows, group, parallelism);
        }
        return Ok(out);
    }

    let sources = (0..nd)
        .map(|d| {
            let (len, taps_d) = (input.shape[d + 1] as isize, kernel[d]);
            let dilation = geometry.input_dilation[d] as isize;
            let dilated = if len == 0 {
                0
            } else {
                (len - 1) * dilation + 1
            };
            let mut table = Vec::with_capacity(out_spatial[d] * taps_d);
            for o in 0..out_spatial[d] {
                for k in 0..taps_d {
                    let k = if geometry.flip { taps_d - 1 - k } else { k };
                    let q = (o * geometry.stride[d] + k * geometry.kernel_dilation[d]) as isize
                        - geometry.padding_lo[d];
                    let hit = q >= 0 && q < dilated && q % dilation == 0;
                    table.push(if hit { q / dilation } else { -1 });
                }
            }
            table
        })
        .collect();
    let in_strides: Vec<usize> = input.strides[..=nd].iter().map(|&s| s as usize).collect();
    let patches = Patches {
        sources,
        out_spatial,
        kernel,
        in_strides,
        group_channels: cig,
    };
    let block_rows = (PATCH_BLOCK_ELEMENTS / depth).max(MIN_BLOCK_ROWS).min(rows);
    let blocks = rows.div_ceil(block_rows);
    let block = |buffer: &mut Vec<G>, b: usize, parallelism: Parallelism| {
        let input = in_ptr;
        let first = b * block_rows;
        let m = block_rows.min(rows - first);
        for group in 0..groups {
            patches.fill(input.0, first, m, group, buffer);
            product(
                SendPtr(buffer.as_mut_ptr()),
                depth,
                first,
                m,
                group,
                parallelism,
            );
        }
    };
    let new_buffer = || vec![G::default(); block_rows * depth];
    if blocks > 1 && work >= PARALLEL_WORK {
        (0..blocks)
            .into_par_iter()
            .for_each_init(new_buffer, |buffer, b| block(buffer, b, Parallelism::None));
    } else {
        let parallelism = if work >= PARALLEL_WORK {
            Parallelism::Rayon(0)
        } else {
            Parallelism::None
        };
        let mut buffer = new_buffer();
        (0..blocks).for_each(|b| block(&mut buffer, b, parallelism));
    }
    Ok(out)
}
