//! Kernels of the discrete Fourier transforms: one transform of length `n` along one
//! axis of a strided tensor, for every position of the other axes.
//!
//! Lengths whose prime factors are all at most [`MAX_RADIX`] run a mixed-radix Stockham
//! FFT (radix 4, 2, 3 and small odd primes), other lengths Bluestein's algorithm over a
//! power-of-two FFT. Values are complex `f32` held as separate real and imaginary lanes
//! (the butterflies of a pass then vectorise over contiguous runs); twiddle factors are
//! computed in `f64` from exactly reduced angles, so the error stays near `f32` epsilon
//! times `log n`.

use super::simd::vectorised;
use super::strided::Shared;
use super::transpose::transpose_into;
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::element::Complex;
use crate::error::Result;
use rayon::prelude::*;
use std::collections::HashMap;
use std::f64::consts::PI;
use std::sync::{Arc, Mutex, OnceLock};

/// The four transforms of one axis.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Transform {
    /// Complex to complex, `X_k = sum_j x_j exp(-2 pi i jk / n)`.
    Forward,
    /// Complex to complex, `x_j = sum_k X_k exp(+2 pi i jk / n)` (unnormalised).
    Inverse,
    /// `n` reals to the `n / 2 + 1` non-negative frequencies of [`Transform::Forward`].
    RealForward,
    /// `n / 2 + 1` non-negative frequencies of a Hermitian spectrum to its `n` real values
    /// (the imaginary parts of the zero and, for even `n`, Nyquist terms are ignored).
    RealInverse,
}

impl Transform {
    /// The length along the axis of the input of a transform of length `n`.
    pub fn input_len(self, n: usize) -> usize {
        match self {
            Transform::RealInverse => n / 2 + 1,
            _ => n,
        }
    }

    /// The length along the axis of the output of a transform of length `n`.
    pub fn output_len(self, n: usize) -> usize {
        match self {
            Transform::RealForward => n / 2 + 1,
            _ => n,
        }
    }

    /// The dtype of the input (and, swapped, of the output).
    pub fn input_dtype(self) -> DType {
        match self {
            Transform::RealForward => DType::Float32,
            _ => DType::Complex64,
        }
    }

    /// Whether the input or the output is real.
    pub fn is_real(self) -> bool {
        matches!(self, Transform::RealForward | Transform::RealInverse)
    }

    pub fn output_dtype(self) -> DType {
        match self {
            Transform::RealInverse => DType::Float32,
            _ => DType::Complex64,
        }
    }
}

/// The largest prime factor handled by a mixed-radix pass; lengths with a larger one use
/// Bluestein's algorithm (a naive radix-`p` pass costs `p` operations per element).
const MAX_RADIX: usize = 13;

/// Transforms with at least this many elements in all spread their rows over threads.
const PARALLEL_MIN: usize = 1 << 15;

/// Rows transformed together by one [`Plan::forward`] (a 16-lane vector's worth)...
const BATCH: usize = 16;
/// ... when their values, real and imaginary, take at most 512 KB.
const BATCH_VALUES: usize = 1 << 16;

/// One Stockham pass: `len = radix * m` points at stride `stride` (`stride * len = n`).
struct Pass {
    radix: usize,
    m: usize,
    stride: usize,
    /// `exp(-2 pi i p k / len)` for `p < m`, `1 <= k < radix`, at `p * (radix - 1) + k - 1`.
    twiddle_re: Vec<f32>,
    twiddle_im: Vec<f32>,
    /// `exp(-2 pi i k / radix)` for `k < radix` (for the naive odd-prime butterflies).
    root_re: Vec<f32>,
    root_im: Vec<f32>,
}

/// How a forward transform of one length is computed.
enum Plan {
    Stockham(Vec<Pass>),
    Bluestein(Bluestein),
}

/// Bluestein's algorithm: with `w_k = exp(-pi i k^2 / n)`, `X_k = w_k * (a * b)_k`, a
/// cyclic convolution of length `len >= 2n - 1` of `a_j = x_j w_j` with `b_j = conj(w_j)`.
struct Bluestein {
    len: usize,
    inner: Arc<Plan>,
    chirp_re: Vec<f32>,
    chirp_im: Vec<f32>,
    /// The forward transform of `b`, divided by `len` (the inverse transform's scale).
    kernel_re: Vec<f32>,
    kernel_im: Vec<f32>,
}

/// `exp(-2 pi i num / den)` with `num` reduced modulo `den` first, so that the angle is
/// exact before rounding.
fn root(num: u64, den: u64) -> (f64, f64) {
    let (s, c) = (-2.0 * PI * ((num % den) as f64) / den as f64).sin_cos();
    (c, s)
}

/// Prime factors of `n` in the order the passes use them: 4s first, then 2, then odd.
fn factors(mut n: usize) -> Vec<usize> {
    let mut out = Vec::new();
    while n.is_multiple_of(4) {
        out.push(4);
        n /= 4;
    }
    if n.is_multiple_of(2) {
        out.push(2);
        n /= 2;
    }
    let mut p = 3;
    while p * p <= n {
        while n.is_multiple_of(p) {
            out.push(p);
            n /= p;
        }
        p += 2;
    }
    if n > 1 {
        out.push(n);
    }
    out
}

impl Plan {
    fn new(n: usize) -> Plan {
        let radices = factors(n);
        if radices.iter().all(|&r| r <= MAX_RADIX) {
            return Plan::Stockham(Plan::passes(n, &radices));
        }
        let len = (2 * n - 1).next_power_of_two();
        let inner = plan(len);
        let two_n = 2 * n as u64;
        let (chirp_re, chirp_im): (Vec<f32>, Vec<f32>) = (0..n as u64)
            .map(|k| {
                // exp(-pi i k^2 / n) = exp(-2 pi i (k^2 mod 2n) / 2n).
                let (c, s) = root((k * k) % two_n, two_n);
                (c as f32, s as f32)
            })
            .unzip();
        let mut kernel_re = vec![0.0f32; len];
        let mut kernel_im = vec![0.0f32; len];
        for k in 0..n {
            let (re, im) = (chirp_re[k], -chirp_im[k]);
            kernel_re[k] = re;
            kernel_im[k] = im;
            if k > 0 {
                kernel_re[len - k] = re;
                kernel_im[len - k] = im;
            }
        }
        let mut scratch = Scratch::new(&inner, len);
        inner.forward(&mut kernel_re, &mut kernel_im, 1, &mut scratch);
        let scale = 1.0 / len as f32;
        kernel_re.iter_mut().for_each(|v| *v *= scale);
        kernel_im.iter_mut().for_each(|v| *v *= scale);
        Plan::Bluestein(Bluestein {
            len,
            inner,
            chirp_re,
            chirp_im,
            kernel_re,
            kernel_im,
        })
    }

    fn passes(n: usize, radices: &[usize]) -> Vec<Pass> {
        let mut stride = 1;
        let mut len = n;
        radices
            .iter()
            .map(|&radix| {
                let m = len / radix;
                let mut twiddle_re = Vec::with_capacity(m * (radix - 1));
                let mut twiddle_im = Vec::with_capacity(m * (radix - 1));
                for p in 0..m {
                    for k in 1..radix {
                        let (c, s) = root((p * k) as u64, len as u64);
                        twiddle_re.push(c as f32);
                        twiddle_im.push(s as f32);
                    }
                }
                let (root_re, root_im) = (0..radix)
                    .map(|k| {
                        let (c, s) = root(k as u64, radix as u64);
                        (c as f32, s as f32)
                    })
                    .unzip();
                let pass = Pass {
                    radix,
                    m,
                    stride,
                    twiddle_re,
                    twiddle_im,
                    root_re,
                    root_im,
                };
                stride *= radix;
                len = m;
                pass
            })
            .collect()
    }

    /// Scratch lanes this plan needs for one row.
    fn scratch_len(&self, n: usize) -> usize {
        match self {
            Plan::Stockham(_) => n,
            Plan::Bluestein(b) => b.len,
        }
    }

    /// Whether [`Plan::forward`] can transform several rows at once.
    fn batches(&self) -> bool {
        matches!(self, Plan::Stockham(_))
    }

    /// Replaces `(re, im)` by its forward transform: one row, or (for a plan that
    /// [`Plan::batches`]) `batch` rows interleaved, value `t` of row `b` at `t * batch + b`.
    /// Interleaved rows share every twiddle, so the short runs of the first passes become
    /// runs of `batch` times their length, which vectorise.
    fn forward(&self, re: &mut [f32], im: &mut [f32], batch: usize, scratch: &mut Scratch) {
        match self {
            Plan::Stockham(passes) => vectorised(
                #[inline(always)]
                || {
                    let n = re.len();
                    let (sre, sim) = (&mut scratch.re[..n], &mut scratch.im[..n]);
                    let mut in_scratch = false;
                    for pass in passes {
                        if in_scratch {
                            pass.run(sre, sim, re, im, batch);
                        } else {
                            pass.run(re, im, sre, sim, batch);
                        }
                        in_scratch = !in_scratch;
                    }
                    if in_scratch {
                        re.copy_from_slice(sre);
                        im.copy_from_slice(sim);
                    }
                },
            ),
            Plan::Bluestein(b) => {
                debug_assert_eq!(batch, 1, "Bluestein plans transform one row at a time");
                b.forward(re, im, scratch)
            }
        }
    }
}

impl Bluestein {
    fn forward(&self, re: &mut [f32], im: &mut [f32], scratch: &mut Scratch) {
        let n = re.len();
        let inner = scratch
            .inner
            .as_mut()
            .expect("Bluestein scratch has an inner part");
        let (are, aim) = (&mut scratch.re[..self.len], &mut scratch.im[..self.len]);
        for k in 0..n {
            let (c, s) = (self.chirp_re[k], self.chirp_im[k]);
            are[k] = re[k] * c - im[k] * s;
            aim[k] = re[k] * s + im[k] * c;
        }
        are[n..].fill(0.0);
        aim[n..].fill(0.0);
        self.inner.forward(are, aim, 1, inner);
        // Pointwise product with the kernel, conjugated so that a forward transform
        // computes the inverse one: conj(F(conj(z))) = F^-1(z) * len.
        for k in 0..self.len {
            let (ar, ai) = (are[k], aim[k]);
            let (br, bi) = (self.kernel_re[k], self.kernel_im[k]);
            are[k] = ar * br - ai * bi;
            aim[k] = -(ar * bi + ai * br);
        }
        self.inner.forward(are, aim, 1, inner);
        for k in 0..n {
            let (cr, ci) = (are[k], -aim[k]);
            let (c, s) = (self.chirp_re[k], self.chirp_im[k]);
            re[k] = cr * c - ci * s;
            im[k] = cr * s + ci * c;
        }
    }
}

impl Pass {
    /// One decimation-in-frequency Stockham pass from `(xr, xi)` to `(yr, yi)`: for each
    /// `p < m`, the `radix`-point DFT of the inputs `p + j m`, twiddled, goes to outputs
    /// `radix p + k`; each "point" is a contiguous run of `stride * batch` values.
    /// Inlined into [`Plan::forward`]'s code for each instruction set.
    #[inline(always)]
    fn run(&self, xr: &[f32], xi: &[f32], yr: &mut [f32], yi: &mut [f32], batch: usize) {
        let (m, s, r) = (self.m, self.stride * batch, self.radix);
        for p in 0..m {
            let tw = p * (r - 1);
            let (twr, twi) = (
                &self.twiddle_re[tw..tw + r - 1],
                &self.twiddle_im[tw..tw + r - 1],
            );
            let input = |j: usize| {
                let at = s * (p + j * m);
                (&xr[at..at + s], &xi[at..at + s])
            };
            let out = s * r * p;
            let (yr, yi) = (&mut yr[out..out + s * r], &mut yi[out..out + s * r]);
            match r {
                2 => radix2(input(0), input(1), twr[0], twi[0], yr, yi, s),
                4 => radix4(
                    [input(0), input(1), input(2), input(3)],
                    twr,
                    twi,
                    yr,
                    yi,
                    s,
                ),
                3 => radix3([input(0), input(1), input(2)], twr, twi, yr, yi, s),
                _ => {
                    let inputs: Vec<(&[f32], &[f32])> = (0..r).map(input).collect();
                    self.radix_any(&inputs, twr, twi, yr, yi, s);
                }
            }
        }
    }

    /// A naive `radix`-point DFT per run position (odd primes up to [`MAX_RADIX`]): each
    /// output run accumulates the input runs times one root, so that the innermost loop
    /// walks contiguous runs.
    #[inline(always)]
    fn radix_any(
        &self,
        inputs: &[(&[f32], &[f32])],
        twr: &[f32],
        twi: &[f32],
        yr: &mut [f32],
        yi: &mut [f32],
        s: usize,
    ) {
        let r = self.radix;
        for k in 0..r {
            let (outr, outi) = (&mut yr[k * s..(k + 1) * s], &mut yi[k * s..(k + 1) * s]);
            outr.copy_from_slice(inputs[0].0);
            outi.copy_from_slice(inputs[0].1);
            for (j, (ir, ii)) in inputs.iter().enumerate().skip(1) {
                let w = (j * k) % r;
                let (wr, wi) = (self.root_re[w], self.root_im[w]);
                for q in 0..s {
                    outr[q] += ir[q] * wr - ii[q] * wi;
                    outi[q] += ir[q] * wi + ii[q] * wr;
                }
            }
            if k > 0 {
                let (tr, ti) = (twr[k - 1], twi[k - 1]);
                for q in 0..s {
                    let (ar, ai) = (outr[q], outi[q]);
                    outr[q] = ar * tr - ai * ti;
                    outi[q] = ar * ti + ai * tr;
                }
            }
        }
    }
}

type Lanes<'a> = (&'a [f32], &'a [f32]);

#[inline(always)]
fn radix2(a: Lanes, b: Lanes, wr: f32, wi: f32, yr: &mut [f32], yi: &mut [f32], s: usize) {
    let (y0r, y1r) = yr.split_at_mut(s);
    let (y0i, y1i) = yi.split_at_mut(s);
    for q in 0..s {
        let (ar, ai, br, bi) = (a.0[q], a.1[q], b.0[q], b.1[q]);
        y0r[q] = ar + br;
        y0i[q] = ai + bi;
        let (dr, di) = (ar - br, ai - bi);
        y1r[q] = dr * wr - di * wi;
        y1i[q] = dr * wi + di * wr;
    }
}

#[inline(always)]
fn radix3(x: [Lanes; 3], twr: &[f32], twi: &[f32], yr: &mut [f32], yi: &mut [f32], s: usize) {
    const H: f32 = 0.866_025_4; // sqrt(3) / 2
    let (y0r, rest) = yr.split_at_mut(s);
    let (y1r, y2r) = rest.split_at_mut(s);
    let (y0i, rest) = yi.split_at_mut(s);
    let (y1i, y2i) = rest.split_at_mut(s);
    let (w1r, w1i, w2r, w2i) = (twr[0], twi[0], twr[1], twi[1]);
    for q in 0..s {
        let (a0r, a0i) = (x[0].0[q], x[0].1[q]);
        let (sr, si) = (x[1].0[q] + x[2].0[q], x[1].1[q] + x[2].1[q]);
        let (dr, di) = (x[1].0[q] - x[2].0[q], x[1].1[q] - x[2].1[q]);
        y0r[q] = a0r + sr;
        y0i[q] = a0i + si;
        let (mr, mi) = (a0r - 0.5 * sr, a0i - 0.5 * si);
        // b1 = m - i H d, b2 = m + i H d.
        let (b1r, b1i) = (mr + H * di, mi - H * dr);
        let (b2r, b2i) = (mr - H * di, mi + H * dr);
        y1r[q] = b1r * w1r - b1i * w1i;
        y1i[q] = b1r * w1i + b1i * w1r;
        y2r[q] = b2r * w2r - b2i * w2i;
        y2i[q] = b2r * w2i + b2i * w2r;
    }
}

#[inline(always)]
fn radix4(x: [Lanes; 4], twr: &[f32], twi: &[f32], yr: &mut [f32], yi: &mut [f32], s: usize) {
    let (y0r, rest) = yr.split_at_mut(s);
    let (y1r, rest) = rest.split_at_mut(s);
    let (y2r, y3r) = rest.split_at_mut(s);
    let (y0i, rest) = yi.split_at_mut(s);
    let (y1i, rest) = rest.split_at_mut(s);
    let (y2i, y3i) = rest.split_at_mut(s);
    let (w1r, w1i, w2r, w2i, w3r, w3i) = (twr[0], twi[0], twr[1], twi[1], twr[2], twi[2]);
    let (x0, x1, x2, x3) = (x[0], x[1], x[2], x[3]);
    for q in 0..s {
        let (t0r, t0i) = (x0.0[q] + x2.0[q], x0.1[q] + x2.1[q]);
        let (t1r, t1i) = (x0.0[q] - x2.0[q], x0.1[q] - x2.1[q]);
        let (t2r, t2i) = (x1.0[q] + x3.0[q], x1.1[q] + x3.1[q]);
        // -i (a1 - a3)
        let (t3r, t3i) = (x1.1[q] - x3.1[q], x3.0[q] - x1.0[q]);
        y0r[q] = t0r + t2r;
        y0i[q] = t0i + t2i;
        let (b1r, b1i) = (t1r + t3r, t1i + t3i);
        let (b2r, b2i) = (t0r - t2r, t0i - t2i);
        let (b3r, b3i) = (t1r - t3r, t1i - t3i);
        y1r[q] = b1r * w1r - b1i * w1i;
        y1i[q] = b1r * w1i + b1i * w1r;
        y2r[q] = b2r * w2r - b2i * w2i;
        y2i[q] = b2r * w2i + b2i * w2r;
        y3r[q] = b3r * w3r - b3i * w3i;
        y3i[q] = b3r * w3i + b3i * w3r;
    }
}

/// Working lanes of one thread for one plan.
struct Scratch {
    re: Vec<f32>,
    im: Vec<f32>,
    /// For Bluestein: the inner power-of-two transform's own scratch.
    inner: Option<Box<Scratch>>,
}

impl Scratch {
    fn new(plan: &Plan, n: usize) -> Scratch {
        let len = plan.scratch_len(n);
        let inner = match plan {
            Plan::Bluestein(b) => Some(Box::new(Scratch::new(&b.inner, b.len))),
            Plan::Stockham(_) => None,
        };
        Scratch {
            re: vec![0.0; len],
            im: vec![0.0; len],
            inner,
        }
    }
}

/// Plans by length, kept because computing the twiddles of a long transform costs as much
/// as the transform. Bounded: cleared when it holds more than [`CACHE_LEN`] lengths.
type Cache<T> = OnceLock<Mutex<HashMap<usize, Arc<T>>>>;
static PLANS: Cache<Plan> = OnceLock::new();
static HALF_TWIDDLES: Cache<HalfTwiddles> = OnceLock::new();
const CACHE_LEN: usize = 64;

fn cached<T>(cache: &'static Cache<T>, n: usize, make: impl FnOnce() -> T) -> Arc<T> {
    let cache = cache.get_or_init(Default::default);
    if let Some(p) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&n) {
        return p.clone();
    }
    // Made without the lock held: a Bluestein plan asks for its inner plan.
    let p = Arc::new(make());
    let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
    if cache.len() >= CACHE_LEN {
        cache.clear();
    }
    cache.insert(n, p.clone());
    p
}

fn plan(n: usize) -> Arc<Plan> {
    cached(&PLANS, n, || Plan::new(n))
}

/// `exp(-2 pi i k / n)` for `k <= n / 2`: they join the two halves of a real transform
/// of even length `n` computed as a complex transform of length `n / 2` (even samples
/// as real parts, odd ones as imaginary parts).
struct HalfTwiddles {
    re: Vec<f32>,
    im: Vec<f32>,
}

fn half_twiddles(n: usize) -> Arc<HalfTwiddles> {
    cached(&HALF_TWIDDLES, n, || {
        let (re, im) = (0..=n / 2)
            .map(|k| {
                let (c, s) = root(k as u64, n as u64);
                (c as f32, s as f32)
            })
            .unzip();
        HalfTwiddles { re, im }
    })
}

/// The transform `transform` of length `n` along `axis` of `x`, times `scale`. `x` has
/// `transform.input_len(n)` elements along `axis` and dtype `transform.input_dtype()`
/// (any layout); the output is contiguous with `transform.output_len(n)` there.
pub fn fft(x: Tensor, axis: usize, n: usize, transform: Transform, scale: f64) -> Result<Tensor> {
    debug_assert_eq!(x.shape[axis], transform.input_len(n));
    debug_assert_eq!(x.dtype, transform.input_dtype());
    let out_len = transform.output_len(n);
    let mut shape = x.shape.clone();
    shape[axis] = out_len;
    let mut out = Tensor::uninit(transform.output_dtype(), &shape)?;
    let rows = out.size() / out_len.max(1);
    if out.size() == 0 {
        return Ok(out);
    }
    // Input row `r` (row-major over the other axes) starts at `bases[r]`; output row `r`
    // at `(r / inner) * out_len * inner + r % inner`, with stride `inner`.
    let inner: usize = shape[axis + 1..].iter().product();
    let mut bases = vec![x.offset as isize];
    for (d, (&len, &stride)) in x.shape.iter().zip(&x.strides).enumerate() {
        if d != axis {
            bases = bases
                .iter()
                .flat_map(|&b| (0..len as isize).map(move |i| b + i * stride))
                .collect();
        }
    }
    let in_stride = x.strides[axis];
    // Real transforms of even length run as complex ones of half the length.
    let half = transform.is_real() && n.is_multiple_of(2);
    let len = if half { n / 2 } else { n };
    let plan = plan(len);
    let twiddles = half.then(|| half_twiddles(n));
    let out_ptr = Shared(match transform {
        Transform::RealInverse => out.data_ptr_mut::<f32>() as *mut u8,
        _ => out.data_ptr_mut::<Complex>() as *mut u8,
    });
    let bytes = x.buf.bytes();
    // Fills `(re, im)` with the complex row the transform of row `r` starts from.
    let load = |base: isize, re: &mut [f32], im: &mut [f32]| match (&twiddles, transform) {
        (None, _) => load_row(bytes, transform, base, in_stride, n, re, im),
        (Some(_), Transform::RealForward) => {
            let data: &[f32] = bytemuck::cast_slice(bytes);
            if in_stride == 1 {
                let pairs = data[base as usize..][..2 * len].chunks_exact(2);
                for ((pair, re), im) in pairs.zip(re.iter_mut()).zip(im.iter_mut()) {
                    (*re, *im) = (pair[0], pair[1]);
                }
            } else {
                for j in 0..len {
                    re[j] = data[(base + 2 * j as isize * in_stride) as usize];
                    im[j] = data[(base + (2 * j + 1) as isize * in_stride) as usize];
                }
            }
        }
        (Some(tw), _) => join_halves(bytes, base, in_stride, tw, re, im),
    };
    // Rows of a batch are transformed together (see `Plan::forward`); the batch's lanes
    // stay in the L2 cache.
    let batch_of = |rows: usize| {
        if plan.batches() && len * BATCH <= BATCH_VALUES {
            BATCH.min(rows)
        } else {
            1
        }
    };
    // Compiled for the machine's vector instructions: the loads, the joins of real
    // transforms and the stores are plain loops over each row.
    let run_rows = |lo: usize, hi: usize| {
        vectorised(
            #[inline(always)]
            || {
                let batch = batch_of(hi - lo);
                // The batch's rows one after another, and the same values interleaved.
                let (mut rows_re, mut rows_im) =
                    (vec![0.0f32; len * batch], vec![0.0f32; len * batch]);
                let (mut batch_re, mut batch_im) =
                    (vec![0.0f32; len * batch], vec![0.0f32; len * batch]);
                let mut scratch = Scratch::new(&plan, len * batch);
                // The joined spectrum (or signal) of a half-length real transform.
                let joined = if half { n } else { 0 };
                let (mut joined_re, mut joined_im) = (vec![0.0f32; joined], vec![0.0f32; joined]);
                for first in (lo..hi).step_by(batch) {
                    let group = first..(first + batch).min(hi);
                    let b = group.len();
                    let (rre, rim) = (&mut rows_re[..len * b], &mut rows_im[..len * b]);
                    for ((r, re), im) in group
                        .clone()
                        .zip(rre.chunks_mut(len))
                        .zip(rim.chunks_mut(len))
                    {
                        load(bases[r], re, im);
                    }
                    if b == 1 {
                        plan.forward(rre, rim, 1, &mut scratch);
                    } else {
                        let (bre, bim) = (&mut batch_re[..len * b], &mut batch_im[..len * b]);
                        transpose_into(rre, b, len, bre, b);
                        transpose_into(rim, b, len, bim, b);
                        plan.forward(bre, bim, b, &mut scratch);
                        transpose_into(bre, len, b, rre, len);
                        transpose_into(bim, len, b, rim, len);
                    }
                    for ((r, re), im) in group.zip(rre.chunks(len)).zip(rim.chunks(len)) {
                        let start = (r / inner) * out_len * inner + r % inner;
                        let row = |re: &[f32], im: &[f32]| {
                            // SAFETY: rows write disjoint output positions `start + k * inner`,
                            // `k < out_len`.
                            unsafe {
                                store_row(out_ptr.get(), transform, start, inner, re, im, scale)
                            };
                        };
                        match (&twiddles, transform) {
                            (None, _) => row(&re[..out_len], &im[..out_len]),
                            (Some(tw), Transform::RealForward) => {
                                let (xr, xi) =
                                    (&mut joined_re[..out_len], &mut joined_im[..out_len]);
                                split_halves(re, im, tw, xr, xi);
                                row(xr, xi);
                            }
                            (Some(_), _) => {
                                for j in 0..len {
                                    joined_re[2 * j] = re[j];
                                    joined_re[2 * j + 1] = -im[j];
                                }
                                row(&joined_re, &[]);
                            }
                        }
                    }
                }
            },
        )
    };
    let work = rows.saturating_mul(n);
    if work >= PARALLEL_MIN && rows > 1 && rayon::current_num_threads() > 1 {
        let per_task = (PARALLEL_MIN / n.max(1)).max(1);
        (0..rows.div_ceil(per_task))
            .into_par_iter()
            .for_each(|t| run_rows(t * per_task, ((t + 1) * per_task).min(rows)));
    } else {
        run_rows(0, rows);
    }
    Ok(out)
}

/// Fills `(re, im)` with the `n` complex values a forward transform of the row at `base`
/// takes: conjugated for an inverse (`F^-1(z) = conj(F(conj z))`), zero imaginary parts
/// for real input, and the Hermitian completion of the half spectrum for a real inverse.
#[inline(always)]
fn load_row(
    bytes: &[u8],
    transform: Transform,
    base: isize,
    stride: isize,
    n: usize,
    re: &mut [f32],
    im: &mut [f32],
) {
    let at = |k: usize| (base + k as isize * stride) as usize;
    match transform {
        Transform::RealForward => {
            let data: &[f32] = bytemuck::cast_slice(bytes);
            for k in 0..n {
                re[k] = data[at(k)];
            }
            im.fill(0.0);
        }
        Transform::Forward | Transform::Inverse => {
            let data: &[Complex] = bytemuck::cast_slice(bytes);
            let sign = if transform == Transform::Inverse {
                -1.0
            } else {
                1.0
            };
            if stride == 1 {
                let row = &data[base as usize..][..n];
                for ((z, re), im) in row.iter().zip(re.iter_mut()).zip(im.iter_mut()) {
                    (*re, *im) = (z.re, sign * z.im);
                }
            } else {
                for k in 0..n {
                    let z = data[at(k)];
                    re[k] = z.re;
                    im[k] = sign * z.im;
                }
            }
        }
        Transform::RealInverse => {
            let data: &[Complex] = bytemuck::cast_slice(bytes);
            re[0] = data[at(0)].re;
            im[0] = 0.0;
            for k in 1..n / 2 + 1 {
                let z = data[at(k)];
                if 2 * k == n {
                    re[k] = z.re;
                    im[k] = 0.0;
                } else {
                    // Conjugated for the inverse: X_k -> conj X_k, X_{n-k} = conj X_k -> X_k.
                    re[k] = z.re;
                    im[k] = -z.im;
                    re[n - k] = z.re;
                    im[n - k] = z.im;
                }
            }
        }
    }
}

/// The spectrum `X_0..=X_h` of `n = 2h` reals from `Z`, the transform of length `h` of
/// `z_j = x_2j + i x_2j+1`: with `E_k = (Z_k + conj Z_h-k) / 2` (the even samples'
/// transform) and `O_k = (Z_k - conj Z_h-k) / 2i` (the odd ones'), `X_k = E_k + w^k O_k`.
#[inline(always)]
fn split_halves(zr: &[f32], zi: &[f32], tw: &HalfTwiddles, xr: &mut [f32], xi: &mut [f32]) {
    let h = zr.len();
    let one = |(ar, ai): (f32, f32), (br, bi): (f32, f32), (wr, wi): (f32, f32)| {
        let (er, ei) = (0.5 * (ar + br), 0.5 * (ai - bi));
        let (dr, di) = (0.5 * (ar - br), 0.5 * (ai + bi));
        // O = -i D.
        let (or, oi) = (di, -dr);
        (er + or * wr - oi * wi, ei + or * wi + oi * wr)
    };
    // Indices k and h - k, both taken modulo h: 0 pairs with itself for k = 0 and k = h.
    let z0 = (zr[0], zi[0]);
    (xr[0], xi[0]) = one(z0, z0, (tw.re[0], tw.im[0]));
    (xr[h], xi[h]) = one(z0, z0, (tw.re[h], tw.im[h]));
    // The others as zipped runs, one of them reversed, which vectorise.
    let (ar, ai) = (&zr[1..], &zi[1..]);
    let forward = ar.iter().zip(ai);
    let backward = ar.iter().rev().zip(ai.iter().rev());
    let twiddles = tw.re[1..h].iter().zip(&tw.im[1..h]);
    let out = xr[1..h].iter_mut().zip(&mut xi[1..h]);
    for (((a, b), w), (or, oi)) in forward.zip(backward).zip(twiddles).zip(out) {
        (*or, *oi) = one((*a.0, *a.1), (*b.0, *b.1), (*w.0, *w.1));
    }
}

/// The inverse of [`split_halves`]: from the half spectrum at `base` (imaginary parts of
/// `X_0` and `X_h` ignored), `conj(Z)` with `Z_k = (X_k + conj X_h-k) + i w^-k (X_k -
/// conj X_h-k)`, whose forward transform, conjugated, is `n (x_2j + i x_2j+1)`.
#[inline(always)]
fn join_halves(
    bytes: &[u8],
    base: isize,
    stride: isize,
    tw: &HalfTwiddles,
    re: &mut [f32],
    im: &mut [f32],
) {
    let data: &[Complex] = bytemuck::cast_slice(bytes);
    let h = re.len();
    let at = |k: usize| {
        let z = data[(base + k as isize * stride) as usize];
        if k == 0 || k == h {
            Complex::new(z.re, 0.0)
        } else {
            z
        }
    };
    for k in 0..h {
        let (a, b) = (at(k), at(h - k));
        let (er, ei) = (a.re + b.re, a.im - b.im);
        let (dr, di) = (a.re - b.re, a.im + b.im);
        let (wr, wi) = (tw.re[k], tw.im[k]);
        // O = D conj(w^k).
        let (or, oi) = (dr * wr + di * wi, di * wr - dr * wi);
        re[k] = er - oi;
        im[k] = -(ei + or);
    }
}

/// Writes the transformed row, times `scale`, to `out` at `start + k * stride`.
///
/// # Safety
/// `out` must point to a buffer of the transform's output dtype with room for every
/// written position, none of which another thread writes.
#[inline(always)]
unsafe fn store_row(
    out: *mut u8,
    transform: Transform,
    start: usize,
    stride: usize,
    re: &[f32],
    im: &[f32],
    scale: f64,
) {
    let scale = scale as f32;
    match transform {
        Transform::Forward | Transform::RealForward if stride == 1 => {
            // A contiguous row: a loop over slices, which vectorises.
            let out = std::slice::from_raw_parts_mut((out as *mut Complex).add(start), re.len());
            for ((z, &re), &im) in out.iter_mut().zip(re).zip(im) {
                *z = Complex::new(re * scale, im * scale);
            }
        }
        Transform::Forward | Transform::RealForward => {
            let out = out as *mut Complex;
            for k in 0..re.len() {
                *out.add(start + k * stride) = Complex::new(re[k] * scale, im[k] * scale);
            }
        }
        Transform::Inverse => {
            let out = out as *mut Complex;
            for k in 0..re.len() {
                *out.add(start + k * stride) = Complex::new(re[k] * scale, -im[k] * scale);
            }
        }
        Transform::RealInverse => {
            let out = out as *mut f32;
            for (k, &v) in re.iter().enumerate() {
                *out.add(start + k * stride) = v * scale;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The DFT of `x` in f64, term by term.
    fn naive(x: &[(f64, f64)]) -> Vec<(f64, f64)> {
        let n = x.len() as u64;
        (0..n)
            .map(|k| {
                x.iter()
                    .enumerate()
                    .fold((0.0, 0.0), |(ar, ai), (j, &(xr, xi))| {
                        let (c, s) = root(j as u64 * k, n);
                        (ar + xr * c - xi * s, ai + xr * s + xi * c)
                    })
            })
            .collect()
    }

    #[test]
    fn matches_the_naive_dft_for_every_kind_of_length() {
        for n in [
            1usize, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 30, 31, 64, 97, 100, 121, 169, 243,
        ] {
            let x: Vec<(f64, f64)> = (0..n)
                .map(|j| {
                    (
                        ((j * 7 + 3) % 11) as f64 - 5.0,
                        ((j * 5 + 1) % 13) as f64 - 6.0,
                    )
                })
                .collect();
            let expected = naive(&x);
            let plan = Plan::new(n);
            let mut re: Vec<f32> = x.iter().map(|v| v.0 as f32).collect();
            let mut im: Vec<f32> = x.iter().map(|v| v.1 as f32).collect();
            let mut scratch = Scratch::new(&plan, n);
            plan.forward(&mut re, &mut im, 1, &mut scratch);
            let norm = expected.iter().map(|v| v.0.hypot(v.1)).fold(0.0, f64::max);
            for k in 0..n {
                let err = (re[k] as f64 - expected[k].0).hypot(im[k] as f64 - expected[k].1);
                assert!(err <= 1e-5 * norm.max(1.0), "n={n} k={k} err={err}");
            }
            if !plan.batches() {
                continue;
            }
            // Three interleaved rows: the row above, its negation and its conjugate.
            type Map = fn((f64, f64)) -> (f64, f64);
            let rows: [Map; 3] = [|v| v, |v| (-v.0, -v.1), |v| (v.0, -v.1)];
            let mut re = vec![0.0f32; 3 * n];
            let mut im = vec![0.0f32; 3 * n];
            for (b, f) in rows.iter().enumerate() {
                for (t, &v) in x.iter().enumerate() {
                    (re[t * 3 + b], im[t * 3 + b]) = (f(v).0 as f32, f(v).1 as f32);
                }
            }
            let mut scratch = Scratch::new(&plan, 3 * n);
            plan.forward(&mut re, &mut im, 3, &mut scratch);
            for (b, f) in rows.iter().enumerate() {
                let expected = naive(&x.iter().map(|&v| f(v)).collect::<Vec<_>>());
                for k in 0..n {
                    let (r, i) = (re[k * 3 + b] as f64, im[k * 3 + b] as f64);
                    let err = (r - expected[k].0).hypot(i - expected[k].1);
                    assert!(err <= 1e-5 * norm.max(1.0), "n={n} row {b} k={k} err={err}");
                }
            }
        }
    }
}
