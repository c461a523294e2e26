//! Applying a slice kernel to a float32, float16 or bfloat16 tensor of any layout.

use super::{apply, apply_in_place, vectorised, Kernel};
use crate::backend::cpu::strided::{par_for_each_run, Shared, PARALLEL_MIN};
use crate::backend::cpu::transpose::reordered;
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::element::{Element, F32Lane};
use crate::error::Result;
use half::{bf16, f16};
use rayon::prelude::*;

/// Values gathered from strided rows or converted from 16-bit floats go through a stack
/// buffer of this many f32.
const CHUNK: usize = 1024;

/// `f` on every element of `x` (float32, float16 or bfloat16), into a new contiguous
/// tensor of the same dtype or, when `x` is donatable, into `x`'s buffer.
pub fn map(x: Tensor, f: Kernel) -> Result<Tensor> {
    let x = reordered(&x)?.unwrap_or(x);
    match x.dtype {
        DType::Float32 => map_f32(x, f),
        DType::Float16 => map_lanes::<f16>(x, f),
        DType::BFloat16 => map_lanes::<bf16>(x, f),
        other => unreachable!("no f32 slice kernels for {other:?}"),
    }
}

fn map_f32(x: Tensor, f: Kernel) -> Result<Tensor> {
    if x.is_donatable(DType::Float32) {
        let mut out = x;
        apply_in_place(f, out.slice_mut::<f32>());
        return Ok(out);
    }
    let mut out = Tensor::uninit(DType::Float32, &x.shape)?;
    if x.is_contiguous() {
        apply(f, x.slice::<f32>(), out.slice_mut::<f32>());
        return Ok(out);
    }
    map_strided::<f32>(&x, out.slice_mut::<f32>(), f);
    Ok(out)
}

fn map_lanes<T: F32Lane + Element<Storage = T>>(x: Tensor, f: Kernel) -> Result<Tensor> {
    if x.is_donatable(x.dtype) {
        let mut out = x;
        let convert = |chunk: &mut [T]| {
            let mut buf = [0.0f32; CHUNK];
            let buf = &mut buf[..chunk.len()];
            vectorised(
                #[inline(always)]
                || {
                    buf.iter_mut()
                        .zip(chunk.iter())
                        .for_each(|(b, v)| *b = v.widen())
                },
            );
            apply_in_place(f, buf);
            vectorised(
                #[inline(always)]
                || {
                    chunk
                        .iter_mut()
                        .zip(buf.iter())
                        .for_each(|(v, &b)| *v = T::narrow(b))
                },
            );
        };
        let values = out.slice_mut::<T>();
        if values.len() < PARALLEL_MIN {
            values.chunks_mut(CHUNK).for_each(convert);
        } else {
            values.par_chunks_mut(CHUNK).for_each(convert);
        }
        return Ok(out);
    }
    let mut out = Tensor::uninit(x.dtype, &x.shape)?;
    map_strided::<T>(&x, out.slice_mut::<T>(), f);
    Ok(out)
}

/// `dst = f(x)` for `x` of any layout: runs are gathered into a stack buffer as f32, the
/// kernel runs there, and the results are converted into `dst`.
fn map_strided<T: F32Lane + Element<Storage = T>>(x: &Tensor, dst: &mut [T], f: Kernel) {
    let src = Shared(x.buf.as_ptr() as *mut T);
    let out = Shared(dst.as_mut_ptr());
    par_for_each_run(
        &x.shape,
        [&x.strides],
        [x.offset as isize],
        &|pos, [start], len, [step]| {
            // SAFETY: runs cover disjoint positions of `dst`.
            let run_out = unsafe { std::slice::from_raw_parts_mut(out.get().add(pos), len) };
            if step == 0 {
                // The run repeats one element (a broadcast): its result is computed once, by
                // the same vector code as every other element's.
                // SAFETY: the run's element lies inside x's buffer.
                let v = unsafe { src.get().offset(start).read_unaligned() }.widen();
                let mut lanes = [v; 16];
                apply_in_place(f, &mut lanes);
                run_out.fill(T::narrow(lanes[0]));
                return;
            }
            let mut buf = [0.0f32; CHUNK];
            let mut done = 0;
            while done < len {
                let n = CHUNK.min(len - done);
                let first = start + done as isize * step;
                vectorised(
                    #[inline(always)]
                    || {
                        if step == 1 {
                            // SAFETY: the run addresses `n` elements inside x's buffer.
                            let run =
                                unsafe { std::slice::from_raw_parts(src.get().offset(first), n) };
                            buf.iter_mut().zip(run).for_each(|(b, v)| *b = v.widen());
                        } else {
                            for (i, b) in buf[..n].iter_mut().enumerate() {
                                // SAFETY: the layout addresses elements inside x's buffer.
                                let v = unsafe {
                                    src.get().offset(first + i as isize * step).read_unaligned()
                                };
                                *b = v.widen();
                            }
                        }
                    },
                );
                apply_in_place(f, &mut buf[..n]);
                let written = &mut run_out[done..done + n];
                vectorised(
                    #[inline(always)]
                    || {
                        written
                            .iter_mut()
                            .zip(&buf[..n])
                            .for_each(|(v, &b)| *v = T::narrow(b))
                    },
                );
                done += n;
            }
        },
    );
}
