//! Random numbers with splittable keys, as in `mlx.core.random` (and JAX).
//!
//! A key is a uint32 array of shape `[2]`. The same key and the same call give the same
//! numbers, on any number of threads; [`split`] derives independent keys. Functions take
//! `key: Option<&Array>`: with `None` they draw the next key from a global state, which
//! [`seed`] resets. Bits come from Threefry-2x32 (20 rounds) laid out exactly as MLX lays
//! them out, and each distribution is composed from the same ops as in MLX, so keys,
//! [`split`], [`bits`], [`uniform`], [`randint`] and [`bernoulli`] give MLX's numbers bit
//! for bit. [`normal`], [`truncated_normal`], [`gumbel`] and [`laplace`] go through
//! `erfinv`, `erf` and `log`, which MLX approximates differently: they agree with MLX
//! within a few ulps (most elements exactly).
//!
//! Not here yet: `categorical` (needs `argmax`), `permutation` (needs `argsort` and
//! `take`) and `multivariate_normal` (needs `svd` and `matmul`).
//!
//! ```
//! use lazulite::{random, DType};
//! let key = random::key(0);
//! let x = random::uniform(0.0, 1.0, &[3], DType::Float32, Some(&key)).unwrap();
//! let y = random::uniform(0.0, 1.0, &[3], DType::Float32, Some(&key)).unwrap();
//! assert_eq!(x.to_vec::<f32>().unwrap(), y.to_vec::<f32>().unwrap());
//! ```

use crate::array::Array;
use crate::backend::cpu::random::{fill_key_words, threefry2x32 as threefry};
use crate::dtype::DType;
use crate::element::Scalar;
use crate::error::{Error, Result};
use crate::ops::operand::{scalar_array, to_arrays};
use crate::ops::random::{bits_dtype, record_draw, Draw};
use crate::ops::{
    abs, add, astype, divide, erf, erfinv, floor, less, log, log1p, maximum, minimum, multiply,
    negative, reshape, sign, slice, subtract, Operand,
};
use crate::shape::{broadcast_shapes, checked_size};
use std::sync::Mutex;

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

/// The global key, seeded from the clock on first use (as MLX does) unless [`seed`] set
/// it. One state for the whole process, so a seed set in one thread holds in all.
static GLOBAL_KEY: Mutex<Option<[u32; 2]>> = Mutex::new(None);

fn with_global_key<R>(f: impl FnOnce(&mut [u32; 2]) -> R) -> R {
    let mut guard = GLOBAL_KEY.lock().unwrap_or_else(|e| e.into_inner());
    let state = guard.get_or_insert_with(|| {
        let millis = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        [(millis >> 32) as u32, millis as u32]
    });
    f(state)
}

/// Resets the global key to `key(seed)`.
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
    with_global_key(|k| *k = [(seed >> 32) as u32, seed as u32]);
}

/// The global key as it is now (MLX: `mx.random.state[0]`).
///
/// ```
/// lazulite::random::seed(9);
/// assert_eq!(lazulite::random::state().to_vec::<u32>().unwrap(), vec![0, 9]);
/// ```
pub fn state() -> Array {
    key_array(with_global_key(|k| *k))
}

/// Replaces the global key (evaluates `key`).
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
    with_global_key(|k| *k = [words[0], words[1]]);
    Ok(())
}

/// The next key of the global sequence: the state is split in two, the first half kept
/// as the new state and the second returned (MLX's `KeySequence::next`). Computed here,
/// not recorded, so the global state never grows a graph.
fn next_key() -> Array {
    with_global_key(|k| {
        let mut words = [0u32; 4];
        fill_key_words(*k, &mut words, 1);
        *k = [words[0], words[1]];
        key_array([words[2], words[3]])
    })
}

/// MLX's way of printing a shape in messages: `(2,3)`.
fn shape_str(shape: &[usize]) -> String {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    format!("({})", dims.join(","))
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
            shape_str(key.shape())
        )));
    }
    Ok(())
}

/// The given key (checked) or the next global one. Called after every other check, so
/// a call that fails leaves the global state alone.
fn resolve_key(key: Option<&Array>) -> Result<Array> {
    match key {
        Some(k) => {
            check_key("bits", k)?;
            Ok(k.clone())
        }
        None => Ok(next_key()),
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
            shape_str(shape),
            shape_str(&out_shape)
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
/// Scalar bounds with `low >= high` are an error (NumPy); array bounds are not checked
/// and give `low` where the interval is empty (MLX).
///
/// ```
/// use lazulite::{random, DType};
/// let r = random::randint(0, 10, &[100], DType::Int32, Some(&random::key(0))).unwrap();
/// assert!(r.to_vec::<i32>().unwrap().iter().all(|&v| (0..10).contains(&v)));
/// assert!(random::randint(5, 5, &[1], DType::Int32, None).is_err());
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
    if let (Operand::Scalar(l), Operand::Scalar(h)) = (&low, &high) {
        if l.to_f64() >= h.to_f64() {
            return Err(Error::value(format!(
                "[randint] low >= high: the interval [{}, {}) is empty.",
                l.to_f64(),
                h.to_f64()
            )));
        }
    }
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
