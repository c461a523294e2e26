//! The `random` submodule (`mx.random`): keys, the global seed and the distributions,
//! with MLX's signatures.

use crate::bind;
use crate::convert::{Arr, Dt, Opd, Shape};
use lazulite::random as rnd;
use lazulite::{Array, DType, Operand, Scalar};
use pyo3::prelude::*;

fn shape_or_scalar(shape: &Option<Shape>) -> &[usize] {
    shape.as_ref().map_or(&[], |s| s.0.as_slice())
}

fn dtype_or(dtype: Option<Dt>, default: DType) -> DType {
    dtype.map_or(default, |d| d.0)
}

fn key_of(key: &Option<Arr>) -> Option<&Array> {
    key.as_ref().map(|k| &k.0)
}

fn number(value: Option<Opd>, default: f64) -> Operand {
    value.map_or(Operand::Scalar(Scalar::Float(default)), |v| v.0)
}

bind! {
    functions {
        key(seed: u64) => rnd::key(seed);
        seed(seed: u64) => rnd::seed(seed);
        split(key: Arr, num: usize = 2, stream) => rnd::split(&key.0, num);
        uniform(low: Option<Opd> = None, high: Option<Opd> = None, shape: Option<Shape> = None, dtype: Option<Dt> = None, key: Option<Arr> = None, stream) => rnd::uniform(number(low, 0.0), number(high, 1.0), shape_or_scalar(&shape), dtype_or(dtype, DType::Float32), key_of(&key));
        normal(shape: Option<Shape> = None, dtype: Option<Dt> = None, loc: Option<Opd> = None, scale: Option<Opd> = None, key: Option<Arr> = None, stream) => rnd::normal(shape_or_scalar(&shape), dtype_or(dtype, DType::Float32), loc.map(|v| v.0), scale.map(|v| v.0), key_of(&key));
        randint(low: Opd, high: Opd, shape: Option<Shape> = None, dtype: Option<Dt> = None, key: Option<Arr> = None, stream) => rnd::randint(low.0, high.0, shape_or_scalar(&shape), dtype_or(dtype, DType::Int32), key_of(&key));
        bernoulli(p: Option<Opd> = None, shape: Option<Shape> = None, key: Option<Arr> = None, stream) => rnd::bernoulli(number(p, 0.5), shape.as_ref().map(|s| s.0.as_slice()), key_of(&key));
        truncated_normal(lower: Opd, upper: Opd, shape: Option<Shape> = None, dtype: Option<Dt> = None, key: Option<Arr> = None, stream) => rnd::truncated_normal(lower.0, upper.0, shape.as_ref().map(|s| s.0.as_slice()), dtype_or(dtype, DType::Float32), key_of(&key));
        gumbel(shape: Option<Shape> = None, dtype: Option<Dt> = None, key: Option<Arr> = None, stream) => rnd::gumbel(shape_or_scalar(&shape), dtype_or(dtype, DType::Float32), key_of(&key));
        laplace(shape: Option<Shape> = None, dtype: Option<Dt> = None, loc: f64 = 0.0, scale: f64 = 1.0, key: Option<Arr> = None, stream) => rnd::laplace(shape_or_scalar(&shape), dtype_or(dtype, DType::Float32), loc, scale, key_of(&key));
    }
    methods {}
}

/// Creates `lazulite.core.random`, adds it to `parent` and to `sys.modules` (so that
/// `import lazulite.core.random` works too).
pub fn register_submodule(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = parent.py();
    let module = PyModule::new(py, "random")?;
    register(&module)?;
    parent.add_submodule(&module)?;
    py.import("sys")?
        .getattr("modules")?
        .set_item("lazulite.core.random", &module)?;
    Ok(())
}
