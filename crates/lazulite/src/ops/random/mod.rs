//! Random numbers with splittable keys, as in `mlx.core.random` (and JAX).
//!
//! A key is a uint32 array of shape `[2]`. The same key and the same call give the same
//! numbers, on any number of threads; [`split`] derives independent keys. Functions take
//! `key: Option<&Array>`: with `None` they draw the next key from the calling thread's
//! key, which [`seed`] resets (each thread has its own, as in MLX's Python binding). Bits come from Threefry-2x32 (20 rounds) laid out exactly as MLX lays
//! them out, and each distribution is composed from the same ops as in MLX, so keys,
//! [`split`], [`bits`], [`uniform`], [`randint`] and [`bernoulli`] give MLX's numbers bit
//! for bit. [`normal`], [`truncated_normal`], [`gumbel`] and [`laplace`] go through
//! `erfinv`, `erf` and `log`, which MLX approximates differently: they agree with MLX
//! within a few ulps (most elements exactly).
//!
//! [`categorical`] and [`permutation`] are MLX's compositions (the argmax of logits
//! plus Gumbel noise; the argsort of random bits) and give MLX's numbers for the same
//! key, as does [`multivariate_normal`] (the covariance's square root from its SVD).
//!
//! ```
//! use lazulite::{random, DType};
//! let key = random::key(0);
//! let x = random::uniform(0.0, 1.0, &[3], DType::Float32, Some(&key)).unwrap();
//! let y = random::uniform(0.0, 1.0, &[3], DType::Float32, Some(&key)).unwrap();
//! assert_eq!(x.to_vec::<f32>().unwrap(), y.to_vec::<f32>().unwrap());
//! ```

// The one primitive; every distribution below is made of its bits and ordinary ops.
mod random_bits;

use crate::array::Array;
use crate::backend::cpu::random::{fill_key_words, threefry2x32 as threefry};
use crate::dtype::DType;
use crate::element::Scalar;
use crate::error::{Error, Result};
use crate::ops::binary::{add, divide, less, maximum, minimum, multiply, subtract};
use crate::ops::cast::astype;
use crate::ops::indexing::take;
use crate::ops::linalg::matmul;
use crate::ops::operand::{scalar_array, to_arrays, Operand};
use crate::ops::random::random_bits::{bits_dtype, record_draw, Draw};
use crate::ops::reduce::{argmax, max};
use crate::ops::scan::cumsum;
use crate::ops::shape::{expand_dims, squeeze};
use crate::ops::sort::{argsort, searchsorted};
use crate::ops::unary::{abs, erf, erfinv, exp, floor, log, log1p, negative, sign, sqrt};
use crate::ops::view::{reshape, slice, slice_axis};
use crate::shape::{axis_in_range, broadcast_shapes, checked_size, shape_text};
use std::cell::RefCell;
use std::sync::OnceLock;

/// Threefry-2x32 with 20 rounds (Random123's `threefry2x32_20`): encrypts `counter`
/// under `key`. The generator behind every function here.
///
/// ```
/// let out = lazulite::random::threefry2x32([0, 0], [0, 0]);
/// assert_eq!(out, [0x6b20_0159, 0x99ba_4efe]);
/// ```
pub fn threefry2x32(key: [u32; 2], counter: [u32; 2]) -> [u32; 2] {
    threefry(key, counter)
}

/// A key from a seed: its high and low 32 bits, as in MLX.
///
/// ```
/// let k = lazulite::random::key((5u64 << 32) | 7);
/// assert_eq!(k.to_vec::<u32>().unwrap(), vec![5, 7]);
/// ```
pub fn key(seed: u64) -> Array {
    key_array([(seed >> 32) as u32, seed as u32])
}

fn key_array(words: [u32; 2]) -> Array {
    Array::from_slice(&words, &[2]).expect("two words make a key")
}

/// The calling thread's key: words, or, while a compiled function that takes the random
/// state as an input is traced, the array standing for that input (see [`set_state_lazy`]).
enum ThreadKey {
    Words([u32; 2]),
    Lazy(Array),
}

thread_local! {
    /// Each thread has its own key, as in MLX's Python binding: draws on one thread
    /// never race with (or, while a compiled function is traced, leak into) another's.
    static KEY: RefCell<Option<ThreadKey>> = const { RefCell::new(None) };
}

/// The seed of every thread's first key: the clock when the first key of the process
/// was made (as MLX does), unless [`seed`] set the thread's key before.
fn clock_seed() -> u64 {
    static SEED: OnceLock<u64> = OnceLock::new();
    *SEED.get_or_init(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64)
    })
}

fn with_thread_key<R>(f: impl FnOnce(&mut ThreadKey) -> R) -> R {
    KEY.with_borrow_mut(|key| {
        let seed = clock_seed();
        f(key.get_or_insert(ThreadKey::Words([(seed >> 32) as u32, seed as u32])))
    })
}

/// Resets the calling thread's key to `key(seed)`.
///
/// ```
/// use lazulite::{random, DType};
/// random::seed(3);
/// let a = random::uniform(0.0, 1.0, &[2], DType::Float32, None).unwrap();
/// random::seed(3);
/// let b = random::uniform(0.0, 1.0, &[2], DType::Float32, None).unwrap();
/// assert_eq!(a.to_vec::<f32>().unwrap(), b.to_vec::<f32>().unwrap());
/// ```
pub fn seed(seed: u64) {
    with_thread_key(|k| *k = ThreadKey::Words([(seed >> 32) as u32, seed as u32]));
}

/// The calling thread's key as it is now (MLX: `mx.random.state[0]`).
///
/// ```
/// lazulite::random::seed(9);
/// assert_eq!(lazulite::random::state().to_vec::<u32>().unwrap(), vec![0, 9]);
/// ```
pub fn state() -> Array {
    with_thread_key(|k| match k {
        ThreadKey::Words(words) => key_array(*words),
        ThreadKey::Lazy(key) => key.clone(),
    })
}

/// Replaces the calling thread's key (evaluates `key`).
///
/// ```
/// use lazulite::random;
/// let saved = random::state();
/// let a = random::bits(&[2], 4, None).unwrap().to_vec::<u32>().unwrap();
/// random::set_state(&saved).unwrap();
/// assert_eq!(random::bits(&[2], 4, None).unwrap().to_vec::<u32>().unwrap(), a);
/// ```
pub fn set_state(key: &Array) -> Result<()> {
    check_key("set_state", key)?;
    let words = key.to_vec::<u32>()?;
    with_thread_key(|k| *k = ThreadKey::Words([words[0], words[1]]));
    Ok(())
}

/// Replaces the calling thread's key by `key` without evaluating it: later draws record the
/// splits of the key in the graph instead of computing them. A compiled function that
/// takes the random state as an input traces with its stand-in set this way and returns
/// [`state`] as an output, so each call draws fresh numbers; [`set_state`] afterwards
/// returns to a computed key.
///
/// ```
/// use lazulite::{compile, random, DType};
/// let draw = compile(|inputs: &[lazulite::Array]| {
///     random::set_state_lazy(&inputs[0])?;
///     let sample = random::uniform(0.0, 1.0, &[2], DType::Float32, None)?;
///     Ok(vec![sample, random::state()])
/// });
/// let first = draw.call(&[random::key(1)])?;
/// let second = draw.call(&[first[1].clone()])?;
/// assert_ne!(first[0].to_vec::<f32>()?, second[0].to_vec::<f32>()?);
/// random::seed(0);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn set_state_lazy(key: &Array) -> Result<()> {
    check_key("set_state", key)?;
    with_thread_key(|k| *k = ThreadKey::Lazy(key.clone()));
    Ok(())
}

/// The next key of the calling thread's sequence: the state is split in two, the first half kept
/// as the new state and the second returned (MLX's `KeySequence::next`). Computed here,
/// not recorded, so the key never grows a graph, unless it is lazy.
fn next_key() -> Result<Array> {
    with_thread_key(|k| match k {
        ThreadKey::Words(words) => {
            let mut out = [0u32; 4];
            fill_key_words(*words, &mut out, 1);
            *words = [out[0], out[1]];
            Ok(key_array([out[2], out[3]]))
        }
        ThreadKey::Lazy(key) => {
            let halves = split(key, 2)?;
            let row = |i: i64| slice_axis(&halves, 0, i, i + 1, 1)?.reshape(&[2]);
            let (kept, drawn) = (row(0)?, row(1)?);
            *key = kept;
            Ok(drawn)
        }
    })
}

fn check_key(op: &str, key: &Array) -> Result<()> {
    if key.dtype() != DType::UInt32 {
        return Err(Error::value(format!(
            "[{op}] Expected key type uint32 but received {}.",
            key.dtype()
        )));
    }
    if key.shape() != [2] {
        return Err(Error::value(format!(
            "[{op}] Expected key shape (2) but received {}.",
            shape_text(key.shape())
        )));
    }
    Ok(())
}

/// The given key (checked) or the thread's next one. Called after every other check, so
/// a call that fails leaves the thread's key alone.
fn resolve_key(key: Option<&Array>) -> Result<Array> {
    match key {
        Some(k) => {
            check_key("bits", k)?;
            Ok(k.clone())
        }
        None => next_key(),
    }
}

/// Random bits: `shape` elements of `width` bytes (4, 2 or 1: uint32, uint16, uint8).
///
/// ```
/// use lazulite::random;
/// let b = random::bits(&[2, 3], 4, Some(&random::key(0))).unwrap();
/// assert_eq!(b.dtype(), lazulite::DType::UInt32);
/// assert!(random::bits(&[2], 3, None).is_err());
/// ```
pub fn bits(shape: &[usize], width: usize, key: Option<&Array>) -> Result<Array> {
    bits_dtype(width)?;
    checked_size(shape)?;
    record_draw(&resolve_key(key)?, shape, Draw::Bits { width })
}

/// `num` new keys from `key`, stacked in an array of shape `[num, 2]`.
///
/// ```
/// use lazulite::random;
/// let keys = random::split(&random::key(0), 3).unwrap();
/// assert_eq!(keys.shape(), &[3, 2]);
/// ```
pub fn split(key: &Array, num: usize) -> Result<Array> {
    bits(&[num, 2], 4, Some(key))
}

/// An operand as an array of `dtype`: scalars first take their own dtype (as MLX's
/// Python binding makes arrays of them), then everything is cast.
fn operand_as(op: &str, value: Operand, dtype: DType) -> Result<Array> {
    let (arrays, _) = to_arrays(op, &[value])?;
    astype(&arrays[0], dtype)
}

fn is_scalar(value: &Operand, expected: f64) -> bool {
    matches!(value, Operand::Scalar(s) if !matches!(s, Scalar::Complex(..)) && s.to_f64() == expected)
}

/// Uniform numbers in `[0, 1)` of `dtype`: 32 random bits divided by `2^32 - 1` in
/// float32, kept below 1, then cast (MLX's recipe; float64 goes through float32 too).
fn unit_uniform(shape: &[usize], dtype: DType, key: Option<&Array>) -> Result<Array> {
    checked_size(shape)?;
    record_draw(&resolve_key(key)?, shape, Draw::Unit { dtype })
}

fn require_real_float(op: &str, dtype: DType, message: &str) -> Result<()> {
    if dtype.is_floating() {
        Ok(())
    } else {
        Err(Error::value(format!("[{op}] {message}")))
    }
}

/// Uniform numbers in `[low, high)` of shape `shape` (the bounds broadcast to it).
/// `dtype` must be a real float type.
///
/// ```
/// use lazulite::{random, DType};
/// let k = random::key(0);
/// let u = random::uniform(-1.0, 1.0, &[1000], DType::Float32, Some(&k)).unwrap();
/// assert!(u.to_vec::<f32>().unwrap().iter().all(|&v| (-1.0..1.0).contains(&v)));
/// assert!(random::uniform(0, 1, &[2], DType::Int32, Some(&k)).is_err());
/// ```
pub fn uniform(
    low: impl Into<Operand>,
    high: impl Into<Operand>,
    shape: &[usize],
    dtype: DType,
    key: Option<&Array>,
) -> Result<Array> {
    require_real_float(
        "uniform",
        dtype,
        "Can only generate uniform numbers with real floating point type.",
    )?;
    let (low, high) = (low.into(), high.into());
    let unit_bounds = is_scalar(&low, 0.0) && is_scalar(&high, 1.0);
    let lo = operand_as("uniform", low, dtype)?;
    let hi = operand_as("uniform", high, dtype)?;
    let range = subtract(&hi, &lo)?;
    let out_shape = broadcast_shapes(shape, range.shape())?;
    if out_shape != shape {
        return Err(Error::value(format!(
            "[uniform] Cannot generate random values of shape {} from broadcasted shape {}.",
            shape_text(shape),
            shape_text(&out_shape)
        )));
    }
    let unit = unit_uniform(shape, dtype, key)?;
    if unit_bounds {
        // `1 * u + 0` is `u` exactly: skip two passes.
        return Ok(unit);
    }
    add(&multiply(&range, &unit)?, &lo)
}

/// `nextafter(-1, 0)` in float32: the low end MLX draws normals from, so that `erfinv`
/// never sees -1.
fn above_minus_one() -> f64 {
    f32::from_bits((-1f32).to_bits() - 1) as f64
}

/// Normally distributed numbers with mean `loc` and standard deviation `scale`
/// (defaults 0 and 1). Real float dtypes, or complex64 (real and imaginary parts each
/// of variance 1/2).
///
/// ```
/// use lazulite::{random, DType, Operand};
/// let k = random::key(1);
/// let x = random::normal(&[4], DType::Float32, None, None, Some(&k)).unwrap();
/// let y = random::normal(&[4], DType::Float32, Some(Operand::from(3.0)), None, Some(&k)).unwrap();
/// let (x, y) = (x.to_vec::<f32>().unwrap(), y.to_vec::<f32>().unwrap());
/// assert!((y[0] - x[0] - 3.0).abs() < 1e-6);
/// ```
pub fn normal(
    shape: &[usize],
    dtype: DType,
    loc: Option<Operand>,
    scale: Option<Operand>,
    key: Option<&Array>,
) -> Result<Array> {
    if dtype == DType::Complex64 {
        return complex_normal(shape, loc, scale, key);
    }
    require_real_float(
        "normal",
        dtype,
        "Only floating point and complex64 types are supported.",
    )?;
    let loc = loc.map(|l| operand_as("normal", l, dtype)).transpose()?;
    let mut applied_scale = scalar_array("normal", Scalar::Float(std::f64::consts::SQRT_2), dtype)?;
    if let Some(s) = scale {
        applied_scale = multiply(&applied_scale, &operand_as("normal", s, dtype)?)?;
    }
    let shape = shape.to_vec();
    let out_shape = match &loc {
        Some(l) => broadcast_shapes(&broadcast_shapes(&shape, applied_scale.shape())?, l.shape())?,
        None => broadcast_shapes(&shape, applied_scale.shape())?,
    };
    checked_size(&out_shape)?;
    let u = uniform(above_minus_one(), 1.0, &shape, DType::Float32, key)?;
    let samples = multiply(&applied_scale, &astype(&erfinv(&u)?, dtype)?)?;
    match loc {
        Some(l) => add(&l, &samples),
        None => Ok(samples),
    }
}

fn complex_normal(
    shape: &[usize],
    loc: Option<Operand>,
    scale: Option<Operand>,
    key: Option<&Array>,
) -> Result<Array> {
    let dtype = DType::Complex64;
    let loc = loc.map(|l| operand_as("normal", l, dtype)).transpose()?;
    let scale = scale.map(|s| operand_as("normal", s, dtype)).transpose()?;
    let mut pairs_shape = shape.to_vec();
    pairs_shape.push(2);
    checked_size(&pairs_shape)?;
    let pairs = erfinv(&uniform(
        above_minus_one(),
        1.0,
        &pairs_shape,
        DType::Float32,
        key,
    )?)?;
    let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    let part = |i: i64| -> Result<Array> {
        let mut start = vec![0; shape.len()];
        let mut stop = dims.clone();
        start.push(i);
        stop.push(i + 1);
        reshape(
            &slice(&pairs, &start, &stop, &vec![1; shape.len() + 1])?,
            &dims,
        )
    };
    let imaginary = multiply(&part(1)?, Scalar::Complex(0.0, 1.0))?;
    let mut samples = add(&part(0)?, &imaginary)?;
    if let Some(s) = scale {
        samples = multiply(&s, &samples)?;
    }
    match loc {
        Some(l) => add(&l, &samples),
        None => Ok(samples),
    }
}

/// Random integers in `[low, high)` of an integer (or bool) `dtype`. As in MLX they are
/// drawn from a float32 uniform, so bounds beyond `2^24` are not resolved exactly.
/// Where the interval is empty (`low >= high`) the result is `low`, as in MLX.
///
/// ```
/// use lazulite::{random, DType};
/// let r = random::randint(0, 10, &[100], DType::Int32, Some(&random::key(0))).unwrap();
/// assert!(r.to_vec::<i32>().unwrap().iter().all(|&v| (0..10).contains(&v)));
/// let empty = random::randint(5, 2, &[3], DType::Int32, None).unwrap();
/// assert_eq!(empty.to_vec::<i32>().unwrap(), [5, 5, 5]);
/// ```
pub fn randint(
    low: impl Into<Operand>,
    high: impl Into<Operand>,
    shape: &[usize],
    dtype: DType,
    key: Option<&Array>,
) -> Result<Array> {
    if dtype.is_inexact() {
        return Err(Error::value(
            "[randint] randint only accepts integer dtypes and bool.",
        ));
    }
    let (low, high) = (low.into(), high.into());
    let lo = operand_as("randint", low, DType::Float32)?;
    let hi = operand_as("randint", high, DType::Float32)?;
    let u = uniform(&lo, &hi, shape, DType::Float32, key)?;
    let top = subtract(&hi, 1.0)?;
    astype(&maximum(&minimum(&floor(&u)?, &top)?, &lo)?, dtype)
}

/// Booleans that are true with probability `p` (a float, broadcast to `shape`; the
/// shape defaults to `p`'s).
///
/// ```
/// use lazulite::random;
/// let b = random::bernoulli(0.5, Some(&[8]), Some(&random::key(0))).unwrap();
/// assert_eq!(b.dtype(), lazulite::DType::Bool);
/// assert!(random::bernoulli(1, None, None).is_err());
/// ```
pub fn bernoulli(
    p: impl Into<Operand>,
    shape: Option<&[usize]>,
    key: Option<&Array>,
) -> Result<Array> {
    let (p, _) = to_arrays("bernoulli", &[p.into()])?;
    let p = &p[0];
    if !p.dtype().is_floating() {
        return Err(Error::value(
            "[bernoulli] bernoulli probability `p` must be a float type.",
        ));
    }
    let shape = shape.unwrap_or(p.shape()).to_vec();
    if broadcast_shapes(&shape, p.shape())? != shape {
        return Err(Error::value(
            "[bernoulli] shape of `p` is incompatible with argument `shape`.",
        ));
    }
    // p scaled to [0, just above 2^32 - 1]: p >= 1 gives all true, p <= 0 all false.
    let upper = Array::scalar((u32::MAX as f32).next_up());
    less(&bits(&shape, 4, key)?, &multiply(p, &upper)?)
}

/// Normal numbers truncated to `[lower, upper]`, by inverting the CDF of a uniform
/// draw between the CDF values of the bounds (as JAX and MLX). The shape defaults to
/// the bounds' broadcast shape.
///
/// ```
/// use lazulite::{random, DType};
/// let x = random::truncated_normal(-1.0, 1.0, Some(&[100]), DType::Float32, Some(&random::key(0))).unwrap();
/// assert!(x.to_vec::<f32>().unwrap().iter().all(|&v| (-1.0..=1.0).contains(&v)));
/// ```
pub fn truncated_normal(
    lower: impl Into<Operand>,
    upper: impl Into<Operand>,
    shape: Option<&[usize]>,
    dtype: DType,
    key: Option<&Array>,
) -> Result<Array> {
    require_real_float(
        "trunc_normal",
        dtype,
        "trunc_normal only accepts floating point dtypes.",
    )?;
    let sqrt2 = scalar_array(
        "trunc_normal",
        Scalar::Float(std::f64::consts::SQRT_2),
        dtype,
    )?;
    let lower = operand_as("trunc_normal", lower.into(), dtype)?;
    let upper = operand_as("trunc_normal", upper.into(), dtype)?;
    let shape = match shape {
        Some(s) => s.to_vec(),
        None => broadcast_shapes(lower.shape(), upper.shape())?,
    };
    let a = erf(&divide(&lower, &sqrt2)?)?;
    let b = erf(&divide(&upper, &sqrt2)?)?;
    let u = uniform(&a, &b, &shape, dtype, key)?;
    let out = multiply(&sqrt2, &erfinv(&u)?)?;
    maximum(&minimum(&upper, &out)?, &lower)
}

/// Standard Gumbel numbers, `-log(-log(u))` for uniform `u`.
///
/// ```
/// use lazulite::{random, DType};
/// let g = random::gumbel(&[3], DType::Float32, Some(&random::key(0))).unwrap();
/// assert_eq!(g.shape(), &[3]);
/// ```
pub fn gumbel(shape: &[usize], dtype: DType, key: Option<&Array>) -> Result<Array> {
    let u = uniform(0, 1, shape, dtype, key)?;
    negative(&log(&negative(&log(&u)?)?)?)
}

/// Laplace numbers with location `loc` and scale `scale`, by inverting the CDF.
///
/// ```
/// use lazulite::{random, DType};
/// let x = random::laplace(&[3], DType::Float32, 0.0, 1.0, Some(&random::key(0))).unwrap();
/// assert_eq!(x.dtype(), DType::Float32);
/// ```
pub fn laplace(
    shape: &[usize],
    dtype: DType,
    loc: f64,
    scale: f64,
    key: Option<&Array>,
) -> Result<Array> {
    require_real_float(
        "laplace",
        dtype,
        "Only real floating point types are supported.",
    )?;
    let minus_one = scalar_array("laplace", Scalar::Float(-1.0), dtype)?;
    let u = uniform(above_minus_one(), 1.0, shape, DType::Float32, key)?;
    let magnitude = log1p(&multiply(&minus_one, &abs(&u)?)?)?;
    let mut samples = astype(&multiply(&sign(&u)?, &magnitude)?, dtype)?;
    // MLX takes loc and scale as float32.
    let (loc, scale) = (loc as f32 as f64, scale as f32 as f64);
    if scale != 1.0 {
        samples = multiply(
            &scalar_array("laplace", Scalar::Float(scale), dtype)?,
            &samples,
        )?;
    }
    if loc != 0.0 {
        samples = add(
            &scalar_array("laplace", Scalar::Float(loc), dtype)?,
            &samples,
        )?;
    }
    Ok(samples)
}

/// `axis` of an array with `ndim` dimensions as an index, or MLX's error for `op`.
fn axis_index(op: &str, what: &str, axis: i32, ndim: usize) -> Result<usize> {
    axis_in_range(axis, ndim).ok_or_else(|| {
        Error::axis(format!(
            "[{op}] Invalid axis {axis} for {what} with {ndim} dimensions."
        ))
    })
}

/// Samples from the categorical distributions given by unnormalised log-probabilities
/// `logits` along `axis`, as positions (uint32). MLX's recipes, so the same key gives
/// MLX's samples: the position of the largest `logits + gumbel` noise, or, when `logits`
/// holds a single distribution, inverse-CDF sampling (one uniform number per sample
/// against the running sum of `exp(logits - max)`). By default one sample per distribution
/// (the shape of `logits` without `axis`); `shape` asks for a shape that this reduced
/// shape broadcasts to, `num_samples` for that many samples per distribution in a new
/// last axis. At most one of the two may be given.
///
/// ```
/// use lazulite::{random, Array};
/// let logits = Array::from_slice(&[0.0f32, 1.0, -1e9, 2.0, 0.0, 1.0], &[2, 3])?;
/// let k = random::key(0);
/// let s = random::categorical(&logits, -1, None, Some(4), Some(&k))?;
/// assert_eq!(s.shape(), &[2, 4]);
/// assert!(s.to_vec::<u32>()?[..4].iter().all(|&i| i < 2));
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn categorical(
    logits: &Array,
    axis: i32,
    shape: Option<&[usize]>,
    num_samples: Option<usize>,
    key: Option<&Array>,
) -> Result<Array> {
    let axis = axis_index("categorical", "logits", axis, logits.ndim())?;
    let mut reduced = logits.shape().to_vec();
    reduced.remove(axis);
    match (shape, num_samples) {
        (Some(_), Some(_)) => Err(Error::value(
            "[categorical] At most one of shape or num_samples can be specified.",
        )),
        (Some(shape), None) => {
            if broadcast_shapes(shape, &reduced)? != shape {
                return Err(Error::value(format!(
                    "[categorical] Requested shape {} is not broadcast compatible with reduced logits shape{}.",
                    shape_text(shape),
                    shape_text(&reduced)
                )));
            }
            gumbel_argmax(logits, axis, shape, key)
        }
        (None, Some(n)) => {
            reduced.push(n);
            gumbel_argmax(&expand_dims(logits, -1)?, axis, &reduced, key)
        }
        (None, None) => gumbel_argmax(logits, axis, &reduced, key),
    }
}

/// Draws for one distribution (`logits.size()` equals the length of its axis), of
/// `shape`: the position of `u * total` among the running sums of `exp(logits - max)`,
/// counting sums equal to it (MLX's single-distribution recipe).
fn inverse_cdf(logits: &Array, shape: &[usize], key: Option<&Array>) -> Result<Array> {
    let n = logits.size();
    let flat = reshape(&astype(logits, DType::Float32)?, &[n as i64])?;
    let weights = exp(&subtract(&flat, &max(&flat, 0, false)?)?)?;
    let running = cumsum(&weights, Some(0), false, true, None)?;
    let last = n as i64 - 1;
    let total = slice(&running, &[last], &[last + 1], &[1])?;
    let u = uniform(0, 1, shape, DType::Float32, key)?;
    let position = searchsorted(&running, &multiply(&u, &total)?, "right")?;
    // A target at (or rounded past) the total would land one past the end.
    let position = minimum(&position, Array::scalar(last as u32))?;
    let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    reshape(&position, &dims)
}

/// `argmax(logits + g)` over `axis` for Gumbel noise `g` of `shape` with the axis put
/// back; `logits` (axis removed) broadcasts to `shape`.
fn gumbel_argmax(
    logits: &Array,
    axis: usize,
    shape: &[usize],
    key: Option<&Array>,
) -> Result<Array> {
    let position = axis + shape.len() + 1 - logits.ndim();
    let mut noise_shape = shape.to_vec();
    noise_shape.insert(position, logits.shape()[axis]);
    checked_size(&noise_shape)?;
    if noise_shape.contains(&0) {
        // Checked before the key is drawn: argmax refuses empty arrays, as in MLX.
        return Err(Error::value(
            "[argmax] Cannot argmax reduce zero size array.",
        ));
    }
    if logits.size() == logits.shape()[axis] {
        return inverse_cdf(logits, shape, key);
    }
    let noise = gumbel(&noise_shape, DType::Float32, key)?;
    argmax(&add(&noise, logits)?, Some(position as i32), false)
}

/// A random permutation of `0..n` (uint32): the argsort of `n` random words, as in MLX.
///
/// ```
/// use lazulite::random;
/// let p = random::permutation(5, Some(&random::key(0)))?;
/// let mut v = p.to_vec::<u32>()?;
/// v.sort();
/// assert_eq!(v, vec![0, 1, 2, 3, 4]);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn permutation(n: usize, key: Option<&Array>) -> Result<Array> {
    argsort(&bits(&[n], 4, key)?, Some(0))
}

/// `x` with its entries along `axis` in a random order ([`permutation`] of that axis'
/// length, then `take`).
///
/// ```
/// use lazulite::{random, Array};
/// let x = Array::from_slice(&[0i32, 1, 2, 3, 4, 5], &[2, 3])?;
/// let y = random::permutation_along(&x, 1, Some(&random::key(0)))?;
/// assert_eq!(y.shape(), &[2, 3]);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn permutation_along(x: &Array, axis: i32, key: Option<&Array>) -> Result<Array> {
    let ax = axis_index("permutation", "array", axis, x.ndim())?;
    take(x, &permutation(x.shape()[ax], key)?, Some(ax as i32))
}

/// Jointly normal samples with mean `mean` (`[..., n]`) and covariance `cov`
/// (`[..., n, n]`, symmetric positive semi-definite). The output has shape `shape`
/// (default: the broadcast batch shapes of `mean` and `cov`) followed by `n`; `dtype`
/// must be float32, as in MLX, and the result takes the promoted dtype of the draws and
/// `mean`. Each sample is `mean + z R` for a standard normal row `z` and the square root
/// `R = U sqrt(S) Vᵀ` of `cov` from its SVD: MLX's numbers for the same key.
///
/// ```
/// use lazulite::{random, Array, DType};
/// let mean = Array::from_slice(&[0.0f32, 10.0], &[2])?;
/// let cov = Array::from_slice(&[1.0f32, 0.0, 0.0, 1e-8], &[2, 2])?;
/// let x = random::multivariate_normal(&mean, &cov, &[3], DType::Float32, Some(&random::key(0)))?;
/// assert_eq!(x.shape(), &[3, 2]);
/// assert!(x.to_vec::<f32>()?.chunks(2).all(|s| (s[1] - 10.0).abs() < 1e-3));
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn multivariate_normal(
    mean: &Array,
    cov: &Array,
    shape: &[usize],
    dtype: DType,
    key: Option<&Array>,
) -> Result<Array> {
    let op = "multivariate_normal";
    if dtype != DType::Float32 {
        return Err(Error::value(format!("[{op}] dtype must be float32.")));
    }
    if mean.ndim() < 1 {
        return Err(Error::value(format!(
            "[{op}] mean must have at least one dimension."
        )));
    }
    if cov.ndim() < 2 {
        return Err(Error::value(format!(
            "[{op}] cov must have at least two dimensions."
        )));
    }
    let n = cov.shape()[cov.ndim() - 1];
    if cov.shape()[cov.ndim() - 2] != n {
        return Err(Error::value(format!(
            "[{op}] last two dimensions of cov must be equal."
        )));
    }
    if mean.shape()[mean.ndim() - 1] != n {
        return Err(Error::value(format!(
            "[{op}] mean and cov must have compatible shapes."
        )));
    }
    let batch = broadcast_shapes(
        &mean.shape()[..mean.ndim() - 1],
        &cov.shape()[..cov.ndim() - 2],
    )?;
    let mut out_shape = broadcast_shapes(shape, &batch)?;
    out_shape.push(n);
    checked_size(&out_shape)?;
    // The symmetric square root U sqrt(S) Vᵀ from the SVD, as MLX takes it, so that the
    // same key gives MLX's draws (a Cholesky factor would give other, equally valid ones).
    let usv = crate::ops::linalg::svd(&astype(cov, DType::Float32)?, true)?;
    let root = matmul(
        &multiply(&usv[0], &expand_dims(&sqrt(&usv[1])?, -2)?)?,
        &usv[2],
    )?;
    let z = normal(&out_shape, dtype, None, None, key)?;
    let correlated = matmul(&expand_dims(&z, -2)?, &root)?;
    // The mean keeps its dtype, as in MLX (a float64 mean gives float64 draws).
    add(mean, &squeeze(&correlated, -2)?)
}
