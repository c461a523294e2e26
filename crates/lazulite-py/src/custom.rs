//! `custom_function` (with `.vjp`, `.jvp` and `.vmap` decorators) and `checkpoint` for
//! Python callables, over the Rust [`lazulite::custom_function`] and
//! [`lazulite::checkpoint`]. As in MLX, a function of one positional argument sees its
//! primals (and axes) as that argument; otherwise as the tuple of arguments; cotangents
//! and outputs keep the structure the function returned.

use crate::errors::{stash, to_py_err};
use crate::trees::{leaves, rebuild};
use lazulite as lz;
use lazulite::Array;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use std::sync::{Arc, Mutex, RwLock};

/// One call's argument structure and the structure the function returned.
struct Call {
    args: Py<PyTuple>,
    kwargs: Py<PyDict>,
    returned: Mutex<Option<Py<PyAny>>>,
}

impl Call {
    /// The call's structure, and the array leaves of its positional arguments.
    fn new(
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<(Arc<Call>, Vec<Array>)> {
        let call = Arc::new(Call {
            args: args.clone().unbind(),
            kwargs: kwargs.cloned().unwrap_or_else(|| PyDict::new(py)).unbind(),
            returned: Mutex::new(None),
        });
        let mut inputs = Vec::new();
        leaves(args.as_any(), false, &mut inputs)?;
        Ok((call, inputs))
    }

    /// The arguments with new array leaves, as a rule sees them: the argument itself for
    /// a function of one positional argument, else the tuple of arguments.
    fn primals<'py>(&self, py: Python<'py>, arrays: &[Array]) -> PyResult<Bound<'py, PyAny>> {
        let rebuilt = rebuild(self.args.bind(py).as_any(), &mut arrays.iter().cloned())?;
        let rebuilt = rebuilt.cast_into::<PyTuple>()?;
        Ok(if rebuilt.len() == 1 {
            rebuilt.get_item(0)?
        } else {
            rebuilt.into_any()
        })
    }

    /// The function's returned structure with new array leaves.
    fn like_outputs<'py>(&self, py: Python<'py>, arrays: &[Array]) -> PyResult<Bound<'py, PyAny>> {
        let returned = self.returned.lock().unwrap_or_else(|e| e.into_inner());
        let returned = returned
            .as_ref()
            .ok_or_else(|| PyValueError::new_err("[custom_function] The function did not run."))?;
        rebuild(returned.bind(py), &mut arrays.iter().cloned())
    }

    /// Runs the function on `arrays` in place of the arguments' array leaves.
    fn forward(&self, py: Python<'_>, fun: &Py<PyAny>, arrays: &[Array]) -> PyResult<Vec<Array>> {
        let args = rebuild(self.args.bind(py).as_any(), &mut arrays.iter().cloned())?;
        let out = fun
            .bind(py)
            .call(args.cast::<PyTuple>()?, Some(self.kwargs.bind(py)))?;
        let mut flat = Vec::new();
        leaves(&out, false, &mut flat)?;
        *self.returned.lock().unwrap_or_else(|e| e.into_inner()) = Some(out.unbind());
        Ok(flat)
    }
}

/// The array leaves of a rule's result, which must be `expected` many.
fn rule_arrays(result: &Bound<'_, PyAny>, expected: usize, rule: &str) -> PyResult<Vec<Array>> {
    let mut flat = Vec::new();
    leaves(result, false, &mut flat)?;
    if flat.len() != expected {
        return Err(PyValueError::new_err(format!(
            "[custom_function] The custom {rule} returned {} arrays but {expected} were expected.",
            flat.len()
        )));
    }
    Ok(flat)
}

/// A batch axis as Python sees it: an int or `None`.
fn axis_object(py: Python<'_>, axis: Option<usize>) -> PyResult<Bound<'_, PyAny>> {
    Ok(match axis {
        Some(a) => a.into_pyobject(py)?.into_any(),
        None => py.None().into_bound(py),
    })
}

/// `custom_function(fun)`: `fun` with optional custom `vjp`, `jvp` and `vmap` rules,
/// set with the decorators of the same names.
#[pyclass(name = "custom_function", module = "lazulite.core", frozen)]
struct CustomFunction {
    fun: Py<PyAny>,
    vjp: RwLock<Option<Py<PyAny>>>,
    jvp: RwLock<Option<Py<PyAny>>>,
    vmap: RwLock<Option<Py<PyAny>>>,
}

fn rule(slot: &RwLock<Option<Py<PyAny>>>, py: Python<'_>) -> Option<Py<PyAny>> {
    slot.read()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .map(|f| f.clone_ref(py))
}

fn set_rule<'py>(
    slf: Bound<'py, CustomFunction>,
    slot: fn(&CustomFunction) -> &RwLock<Option<Py<PyAny>>>,
    f: Py<PyAny>,
) -> Bound<'py, CustomFunction> {
    *slot(slf.get()).write().unwrap_or_else(|e| e.into_inner()) = Some(f);
    slf
}

#[pymethods]
impl CustomFunction {
    #[new]
    fn new(f: Py<PyAny>) -> CustomFunction {
        CustomFunction {
            fun: f,
            vjp: RwLock::new(None),
            jvp: RwLock::new(None),
            vmap: RwLock::new(None),
        }
    }

    /// Sets the vjp rule `f(primals, cotangents, outputs)`; returns this function.
    fn vjp<'py>(slf: Bound<'py, Self>, f: Py<PyAny>) -> Bound<'py, Self> {
        set_rule(slf, |c| &c.vjp, f)
    }

    /// Sets the jvp rule `f(primals, tangents)`; returns this function.
    fn jvp<'py>(slf: Bound<'py, Self>, f: Py<PyAny>) -> Bound<'py, Self> {
        set_rule(slf, |c| &c.jvp, f)
    }

    /// Sets the vmap rule `f(inputs, axes) -> (outputs, out_axes)`; returns this function.
    fn vmap<'py>(slf: Bound<'py, Self>, f: Py<PyAny>) -> Bound<'py, Self> {
        set_rule(slf, |c| &c.vmap, f)
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (call, inputs) = Call::new(py, args, kwargs)?;

        let (forward_call, fun) = (call.clone(), self.fun.clone_ref(py));
        let mut custom = lz::custom_function(move |x: &[Array]| {
            Python::attach(|py| forward_call.forward(py, &fun, x)).map_err(stash)
        });
        if let Some(f) = rule(&self.vjp, py) {
            let call = call.clone();
            let n = inputs.len();
            custom = custom.vjp(move |primals, cotangents, outputs| {
                Python::attach(|py| {
                    let result = f.bind(py).call1((
                        call.primals(py, primals)?,
                        call.like_outputs(py, cotangents)?,
                        call.like_outputs(py, outputs)?,
                    ))?;
                    rule_arrays(&result, n, "vjp")
                })
                .map_err(stash)
            });
        }
        if let Some(f) = rule(&self.jvp, py) {
            let call = call.clone();
            custom = custom.jvp(move |primals, tangents| {
                Python::attach(|py| {
                    let result = f
                        .bind(py)
                        .call1((call.primals(py, primals)?, call.primals(py, tangents)?))?;
                    let mut flat = Vec::new();
                    leaves(&result, false, &mut flat)?;
                    Ok(flat)
                })
                .map_err(stash)
            });
        }
        if let Some(f) = rule(&self.vmap, py) {
            let call = call.clone();
            custom = custom.vmap(move |batched, axes| {
                Python::attach(|py| {
                    let axes_list = axes
                        .iter()
                        .map(|&a| axis_object(py, a))
                        .collect::<PyResult<Vec<_>>>()?;
                    let axes_arg = if axes_list.len() == 1 {
                        axes_list[0].clone()
                    } else {
                        PyTuple::new(py, axes_list)?.into_any()
                    };
                    let result = f.bind(py).call1((call.primals(py, batched)?, axes_arg))?;
                    let pair = result.cast::<PyTuple>().map_err(|_| {
                        PyValueError::new_err(
                            "[custom_function] The vmap rule must return (outputs, axes).",
                        )
                    })?;
                    let mut outputs = Vec::new();
                    leaves(&pair.get_item(0)?, false, &mut outputs)?;
                    let out_axes = pair.get_item(1)?;
                    let out_axes: Vec<Option<usize>> = if out_axes.is_instance_of::<PyTuple>()
                        || out_axes.is_instance_of::<PyList>()
                    {
                        out_axes.extract()?
                    } else {
                        vec![out_axes.extract()?; outputs.len()]
                    };
                    Ok((outputs, out_axes))
                })
                .map_err(stash)
            });
        }
        let outputs = custom.call(&inputs).map_err(to_py_err)?;
        call.like_outputs(py, &outputs)
    }
}

/// The function `checkpoint` returns.
#[pyclass(name = "_CheckpointFunction", module = "lazulite.core", frozen)]
struct CheckpointFunction {
    fun: Py<PyAny>,
}

#[pymethods]
impl CheckpointFunction {
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (call, inputs) = Call::new(py, args, kwargs)?;
        let (forward_call, fun) = (call.clone(), self.fun.clone_ref(py));
        let checkpointed = lz::checkpoint(move |x: &[Array]| {
            Python::attach(|py| forward_call.forward(py, &fun, x)).map_err(stash)
        });
        let outputs = checkpointed(&inputs).map_err(to_py_err)?;
        call.like_outputs(py, &outputs)
    }
}

/// `checkpoint(fun)`: `fun`, whose intermediates are recomputed in the backward pass
/// instead of kept (less memory, more compute).
#[pyfunction]
fn checkpoint(fun: Py<PyAny>) -> CheckpointFunction {
    CheckpointFunction { fun }
}

/// Adds `custom_function` and `checkpoint` to `module`.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<CustomFunction>()?;
    module.add_class::<CheckpointFunction>()?;
    module.add_function(wrap_pyfunction!(checkpoint, module)?)?;
    Ok(())
}
