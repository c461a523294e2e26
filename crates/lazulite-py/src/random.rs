//! The `random` submodule (`mx.random`): keys, the global seed and the distributions,
//! with MLX's signatures.

use crate::array::PyArray;
use crate::bind;
use crate::convert::{Arr, Dt, Opd, Shape};
use crate::signature::Hint;
use lazulite::random as rnd;
use lazulite::{Array, DType, Error, Operand, Scalar};
use pyo3::exceptions::PyIndexError;
use pyo3::prelude::*;
use pyo3::types::PyList;

fn shape_or_scalar(shape: &Option<Shape>) -> &[usize] {
    shape.as_ref().map_or(&[], |s| s.0.as_slice())
}

fn dtype_or(dtype: Option<Dt>, default: DType) -> DType {
    dtype.map_or(default, |d| d.0)
}

/// MLX takes a seed that fits 64 bits unsigned; another int does not match its signature,
/// a TypeError.
fn key_from(seed: i128) -> PyResult<Array> {
    let seed = u64::try_from(seed).map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(format!(
            "key(): incompatible function arguments: the seed {seed} is not a 64-bit unsigned integer."
        ))
    })?;
    Ok(rnd::key(seed))
}

fn key_of(key: &Option<Arr>) -> Option<&Array> {
    key.as_ref().map(|k| &k.0)
}

fn number(value: Option<Opd>, default: f64) -> Operand {
    value.map_or(Operand::Scalar(Scalar::Float(default)), |v| v.0)
}

/// A count from Python: negative counts are MLX's `bits` error.
fn count(n: i64) -> lazulite::Result<usize> {
    usize::try_from(n).map_err(|_| Error::value("[bits] Negative dimensions not allowed."))
}

fn draw_categorical(
    logits: &Array,
    axis: i32,
    shape: Option<Shape>,
    num_samples: Option<i64>,
    key: Option<&Array>,
) -> lazulite::Result<Array> {
    let num_samples = num_samples.map(count).transpose()?;
    rnd::categorical(
        logits,
        axis,
        shape.as_ref().map(|s| s.0.as_slice()),
        num_samples,
        key,
    )
}

/// `permutation`'s first argument: a length or an array to permute.
pub enum IntOrArr {
    Int(i64),
    Arr(Array),
}

impl<'a, 'py> FromPyObject<'a, 'py> for IntOrArr {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<IntOrArr> {
        if obj.is_instance_of::<pyo3::types::PyInt>()
            && !obj.is_instance_of::<pyo3::types::PyBool>()
        {
            return Ok(IntOrArr::Int(obj.extract()?));
        }
        if obj.is_instance_of::<pyo3::types::PyFloat>()
            || obj.is_instance_of::<pyo3::types::PyBool>()
            || obj.is_instance_of::<pyo3::types::PyComplex>()
        {
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "permutation(): expected an int or an array but got {}.",
                obj.get_type().name()?
            )));
        }
        Ok(IntOrArr::Arr(obj.extract::<Arr>()?.0))
    }
}

impl Hint for IntOrArr {
    fn hint() -> String {
        "int | array".into()
    }
}

fn draw_permutation(x: IntOrArr, axis: i32, key: Option<&Array>) -> lazulite::Result<Array> {
    match x {
        IntOrArr::Int(n) => rnd::permutation(count(n)?, key),
        IntOrArr::Arr(a) => rnd::permutation_along(&a, axis, key),
    }
}

/// `split`'s `num` is a C int in MLX: past its range a TypeError (as MLX's binding
/// raises), and a negative count MLX's ValueError.
fn split_keys(key: &Array, num: i64) -> lazulite::Result<Array> {
    let num = i32::try_from(num).map_err(|_| {
        Error::type_error(format!(
            "Expected an int in a C int's range (-2147483648 to 2147483647) but got {num}."
        ))
    })?;
    let num = usize::try_from(num)
        .map_err(|_| Error::value("[bits] Negative dimensions not allowed."))?;
    rnd::split(key, num)
}

bind! {
    functions {
        /// Make a PRNG key from a seed.
        ///
        /// Args:
        ///     seed (int): The seed.
        ///
        /// Returns:
        ///     array: The key (two ``uint32``).
        key(seed: i128) => key_from(seed);
        /// Seed the global PRNG.
        ///
        /// Args:
        ///     seed (int): The seed.
        seed(seed: u64) => rnd::seed(seed);
        /// Split a PRNG key into new keys.
        ///
        /// Args:
        ///     key (array): The key to split.
        ///     num (int): How many keys. Default: ``2``.
        ///
        /// Returns:
        ///     array: The keys, one per row.
        split(key: Arr, num: i64 = 2, stream) => split_keys(&key.0, num);
        /// Draw samples uniformly from ``[low, high)``.
        ///
        /// Args:
        ///     low (array or scalar, optional): Lower bound. Default: ``0``.
        ///     high (array or scalar, optional): Upper bound. Default: ``1``.
        ///     shape (int or list(int), optional): Shape of the output. Default: ``()``.
        ///     dtype (Dtype, optional): Element type. Default: ``float32``.
        ///     key (array, optional): PRNG key; by default the global one.
        ///
        /// Returns:
        ///     array: The samples.
        uniform(low: Option<Opd> = None, high: Option<Opd> = None, shape: Option<Shape> = None, dtype: Option<Dt> = None, key: Option<Arr> = None, stream) => rnd::uniform(number(low, 0.0), number(high, 1.0), shape_or_scalar(&shape), dtype_or(dtype, DType::Float32), key_of(&key));
        /// Draw samples from a normal distribution.
        ///
        /// Args:
        ///     shape (int or list(int), optional): Shape of the output. Default: ``()``.
        ///     dtype (Dtype, optional): Element type. Default: ``float32``.
        ///     loc (array or scalar, optional): Mean. Default: ``0``.
        ///     scale (array or scalar, optional): Standard deviation. Default: ``1``.
        ///     key (array, optional): PRNG key; by default the global one.
        ///
        /// Returns:
        ///     array: The samples.
        normal(shape: Option<Shape> = None, dtype: Option<Dt> = None, loc: Option<Opd> = None, scale: Option<Opd> = None, key: Option<Arr> = None, stream) => rnd::normal(shape_or_scalar(&shape), dtype_or(dtype, DType::Float32), loc.map(|v| v.0), scale.map(|v| v.0), key_of(&key));
        /// Draw integers uniformly from ``[low, high)``.
        ///
        /// Args:
        ///     low (array or scalar): Lower bound (included).
        ///     high (array or scalar): Upper bound (excluded).
        ///     shape (int or list(int), optional): Shape of the output. Default: ``()``.
        ///     dtype (Dtype, optional): Element type. Default: ``int32``.
        ///     key (array, optional): PRNG key; by default the global one.
        ///
        /// Returns:
        ///     array: The samples.
        randint(low: Opd, high: Opd, shape: Option<Shape> = None, dtype: Option<Dt> = None, key: Option<Arr> = None, stream) => rnd::randint(low.0, high.0, shape_or_scalar(&shape), dtype_or(dtype, DType::Int32), key_of(&key));
        /// Draw booleans that are true with probability ``p``.
        ///
        /// Args:
        ///     p (array or scalar, optional): Probability of true (scalar or array). Default: ``0.5``.
        ///     shape (int or list(int), optional): Shape of the output; by default that of ``p``.
        ///     key (array, optional): PRNG key; by default the global one.
        ///
        /// Returns:
        ///     array: The samples.
        bernoulli(p: Option<Opd> = None, shape: Option<Shape> = None, key: Option<Arr> = None, stream) => rnd::bernoulli(number(p, 0.5), shape.as_ref().map(|s| s.0.as_slice()), key_of(&key));
        /// Draw samples from a standard normal distribution truncated to ``[lower, upper]``.
        ///
        /// Args:
        ///     lower (array or scalar): Lower bound.
        ///     upper (array or scalar): Upper bound.
        ///     shape (int or list(int), optional): Shape of the output; by default the broadcast shape of the bounds.
        ///     dtype (Dtype, optional): Element type. Default: ``float32``.
        ///     key (array, optional): PRNG key; by default the global one.
        ///
        /// Returns:
        ///     array: The samples.
        truncated_normal(lower: Opd, upper: Opd, shape: Option<Shape> = None, dtype: Option<Dt> = None, key: Option<Arr> = None, stream) => rnd::truncated_normal(lower.0, upper.0, shape.as_ref().map(|s| s.0.as_slice()), dtype_or(dtype, DType::Float32), key_of(&key));
        /// Draw samples from the standard Gumbel distribution.
        ///
        /// Args:
        ///     shape (int or list(int), optional): Shape of the output. Default: ``()``.
        ///     dtype (Dtype, optional): Element type. Default: ``float32``.
        ///     key (array, optional): PRNG key; by default the global one.
        ///
        /// Returns:
        ///     array: The samples.
        gumbel(shape: Option<Shape> = None, dtype: Option<Dt> = None, key: Option<Arr> = None, stream) => rnd::gumbel(shape_or_scalar(&shape), dtype_or(dtype, DType::Float32), key_of(&key));
        /// Draw indices from categorical distributions given by unnormalized log probabilities.
        ///
        /// Args:
        ///     logits (array): Log probabilities (up to a constant).
        ///     axis (int): Axis of the categories. Default: ``-1``.
        ///     shape (int or list(int), optional): Shape of the output; exclusive with ``num_samples``.
        ///     num_samples (int, optional): Number of draws per distribution; exclusive with ``shape``.
        ///     key (array, optional): PRNG key; by default the global one.
        ///
        /// Returns:
        ///     array: The sampled indices.
        categorical(logits: Arr, axis: i32 = -1, shape: Option<Shape> = None, num_samples: Option<i64> = None, key: Option<Arr> = None, stream) => draw_categorical(&logits.0, axis, shape, num_samples, key_of(&key));
        /// A random permutation of ``range(x)``, or of an array along an axis.
        ///
        /// Args:
        ///     x (int or array): An int ``n`` or an array.
        ///     axis (int): Axis to shuffle an array along. Default: ``0``.
        ///     key (array, optional): PRNG key; by default the global one.
        ///
        /// Returns:
        ///     array: The permuted values.
        permutation(x: IntOrArr, axis: i32 = 0, key: Option<Arr> = None, stream) => draw_permutation(x, axis, key_of(&key));
        /// Draw samples from a multivariate normal distribution.
        ///
        /// Args:
        ///     mean (array): Mean vector(s).
        ///     cov (array): Covariance matrix (or matrices).
        ///     shape (int or list(int), optional): Batch shape of the output. Default: ``()``.
        ///     dtype (Dtype, optional): Element type. Default: ``float32``.
        ///     key (array, optional): PRNG key; by default the global one.
        ///
        /// Returns:
        ///     array: The samples; the last axis has the size of ``mean``'s.
        multivariate_normal(mean: Arr, cov: Arr, shape: Option<Shape> = None, dtype: Option<Dt> = None, key: Option<Arr> = None, stream) => rnd::multivariate_normal(&mean.0, &cov.0, shape_or_scalar(&shape), dtype_or(dtype, DType::Float32), key_of(&key));
        /// Draw samples from a Laplace distribution.
        ///
        /// Args:
        ///     shape (int or list(int), optional): Shape of the output. Default: ``()``.
        ///     dtype (Dtype, optional): Element type. Default: ``float32``.
        ///     loc (float): Mean. Default: ``0.0``.
        ///     scale (float): Scale. Default: ``1.0``.
        ///     key (array, optional): PRNG key; by default the global one.
        ///
        /// Returns:
        ///     array: The samples.
        laplace(shape: Option<Shape> = None, dtype: Option<Dt> = None, loc: f64 = 0.0, scale: f64 = 1.0, key: Option<Arr> = None, stream) => rnd::laplace(shape_or_scalar(&shape), dtype_or(dtype, DType::Float32), loc, scale, key_of(&key));
    }
    methods {}
}

/// `mx.random.state`: a live view of the global key as a one-element sequence (MLX's
/// `_RandomState`): `state[0]` is the key now, after every draw and `seed`.
#[pyclass(name = "_RandomState", module = "lazulite.core.random")]
pub struct RandomState;

#[pymethods]
impl RandomState {
    fn __len__(&self) -> usize {
        1
    }

    fn __getitem__(&self, index: isize) -> PyResult<PyArray> {
        if index == 0 || index == -1 {
            Ok(PyArray::from(rnd::state()))
        } else {
            Err(PyIndexError::new_err("random state index out of range"))
        }
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let items = PyList::new(py, [Py::new(py, PyArray::from(rnd::state()))?])?;
        Ok(items.try_iter()?.into_any())
    }
}

/// Creates `lazulite.core.random`, adds it to `parent` and to `sys.modules` (so that
/// `import lazulite.core.random` works too).
pub fn register_submodule(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = parent.py();
    let module = PyModule::new(py, "random")?;
    register(&module)?;
    module.add_class::<RandomState>()?;
    module.add("state", RandomState)?;
    parent.add_submodule(&module)?;
    py.import("sys")?
        .getattr("modules")?
        .set_item("lazulite.core.random", &module)?;
    Ok(())
}
