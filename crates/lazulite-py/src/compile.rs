//! `compile` of Python callables: the arguments' array leaves (and those of the captured
//! `inputs` state) go to a Rust [`lazulite::Compiled`], one per argument structure, and the
//! result tree is rebuilt around the replayed outputs. Arrays of the captured `outputs`
//! state are updated in place after each call, as MLX does; `mx.random.state` in them
//! stands for the global random key, so compiled functions that draw numbers advance it.

use crate::array::PyArray;
use crate::errors::{stash, to_py_err};
use crate::random::RandomState;
use crate::trees::{children, leaves, rebuild};
use lazulite as lz;
use lazulite::Array;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// What one trace left behind for later calls: the result's structure and how many of
/// the flat outputs belong to it (the rest update the `outputs` state).
struct Traced {
    structure: Py<PyAny>,
    results: usize,
}

/// A compiled function for one argument structure.
struct Entry {
    compiled: lz::Compiled,
    traced: Arc<Mutex<Option<Traced>>>,
}

// The function `compile` returns (its `__doc__` is the function's).
#[pyclass(name = "_CompiledFunction", module = "lazulite.core", frozen)]
struct CompiledFunction {
    fun: Py<PyAny>,
    inputs: Option<Py<PyAny>>,
    outputs: Option<Py<PyAny>>,
    entries: Mutex<HashMap<String, Arc<Entry>>>,
    shapeless: bool,
}

/// A key that tells argument structures apart: containers and their keys, array shapes
/// (only their dimension counts when `shapeless`) and dtypes, and the other leaves by
/// type and value (MLX treats them as constants).
fn describe(tree: &Bound<'_, PyAny>, shapeless: bool, out: &mut String) -> PyResult<()> {
    if let Ok(a) = tree.cast::<PyArray>() {
        let a = a.get().array();
        if shapeless {
            out.push_str(&format!("a{}d{};", a.ndim(), a.dtype()));
        } else {
            out.push_str(&format!("a{:?}{};", a.shape(), a.dtype()));
        }
    } else if let Ok(l) = tree.cast::<PyList>() {
        out.push('[');
        for item in l.iter() {
            describe(&item, shapeless, out)?;
        }
        out.push(']');
    } else if let Ok(t) = tree.cast::<PyTuple>() {
        out.push('(');
        for item in t.iter() {
            describe(&item, shapeless, out)?;
        }
        out.push(')');
    } else if let Ok(d) = tree.cast::<PyDict>() {
        out.push('{');
        for (k, v) in d.iter() {
            out.push_str(&k.repr()?.to_string());
            out.push(':');
            describe(&v, shapeless, out)?;
        }
        out.push('}');
    } else if tree.is_none()
        || tree.is_instance_of::<pyo3::types::PyInt>()
        || tree.is_instance_of::<pyo3::types::PyFloat>()
        || tree.is_instance_of::<pyo3::types::PyString>()
    {
        let type_name = tree.get_type().name()?;
        out.push_str(&format!("{type_name}={};", tree.repr()?));
    } else {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "[compile] Function arguments must be trees of arrays or constants (floats, ints, \
             strings, or None), but received type {}.",
            tree.get_type().name()?
        )));
    }
    Ok(())
}

/// One leaf of the `inputs`/`outputs` state: an array object, updated in place, or
/// `mx.random.state`, which stands for the global random key.
enum StateLeaf<'py> {
    Array(Bound<'py, PyArray>),
    RandomKey,
}

impl StateLeaf<'_> {
    fn get(&self) -> Array {
        match self {
            StateLeaf::Array(a) => a.get().array(),
            StateLeaf::RandomKey => lz::random::state(),
        }
    }

    /// Sets the leaf to a concrete value (after a call, or to restore it after a trace).
    fn set(&self, value: Array) -> PyResult<()> {
        match self {
            StateLeaf::Array(a) => a.get().rebind(value),
            StateLeaf::RandomKey => lz::random::set_state(&value).map_err(to_py_err)?,
        }
        Ok(())
    }

    /// Sets the leaf to the traced stand-in of its value.
    fn set_traced(&self, stand_in: &Array) -> PyResult<()> {
        match self {
            StateLeaf::Array(a) => a.get().rebind(stand_in.clone()),
            StateLeaf::RandomKey => lz::random::set_state_lazy(stand_in).map_err(to_py_err)?,
        }
        Ok(())
    }
}

/// The leaves of a state tree (lists, tuples, dicts of arrays and `mx.random.state`), in
/// tree order; other leaves are skipped.
fn state_leaves<'py>(state: Option<&Bound<'py, PyAny>>) -> PyResult<Vec<StateLeaf<'py>>> {
    let mut out = Vec::new();
    let Some(state) = state else {
        return Ok(out);
    };
    let mut stack = vec![state.clone()];
    while let Some(obj) = stack.pop() {
        if obj.cast::<RandomState>().is_ok() {
            out.push(StateLeaf::RandomKey);
        } else if let Ok(a) = obj.cast::<PyArray>() {
            out.push(StateLeaf::Array(a.clone()));
        } else if let Some(kids) = children(&obj)? {
            stack.extend(kids.into_iter().rev());
        }
    }
    Ok(out)
}

fn state_arrays(state: Option<&Py<PyAny>>, py: Python<'_>) -> PyResult<Vec<Array>> {
    Ok(state_leaves(state.map(|s| s.bind(py)))?
        .iter()
        .map(StateLeaf::get)
        .collect())
}

impl CompiledFunction {
    /// A Rust compiled function that calls the Python function on stand-in arrays when it
    /// traces: the arguments are rebuilt around them and the `inputs` state arrays are
    /// swapped for them during the call.
    fn entry(
        &self,
        py: Python<'_>,
        template: &Bound<'_, PyTuple>,
        n_args: usize,
    ) -> PyResult<Entry> {
        let traced = Arc::new(Mutex::new(None));
        let fun = self.fun.clone_ref(py);
        let inputs = self.inputs.as_ref().map(|s| s.clone_ref(py));
        let outputs = self.outputs.as_ref().map(|s| s.clone_ref(py));
        // The argument structure, without the first call's arrays: holding those would keep
        // them alive as long as the function, and stop later calls from donating them.
        let blank = Array::scalar(0.0f32);
        let template = rebuild(template.as_any(), &mut std::iter::repeat(blank))
            .and_then(|t| Ok(t.cast_into::<PyTuple>()?.unbind()))?;
        let traced_in = traced.clone();
        let run = move |flat: &[Array]| {
            Python::attach(|py| {
                let run = || -> PyResult<Vec<Array>> {
                    let state = state_leaves(inputs.as_ref().map(|s| s.bind(py)))?;
                    let saved: Vec<Array> = state.iter().map(StateLeaf::get).collect();
                    for (leaf, stand_in) in state.iter().zip(&flat[n_args..]) {
                        leaf.set_traced(stand_in)?;
                    }
                    let called = (|| {
                        let rebuilt =
                            rebuild(template.bind(py).as_any(), &mut flat.iter().cloned())?;
                        let rebuilt = rebuilt.cast::<PyTuple>()?;
                        let args = rebuilt.get_item(0)?;
                        let kwargs = rebuilt.get_item(1)?;
                        let result = fun
                            .bind(py)
                            .call(args.cast::<PyTuple>()?, Some(kwargs.cast::<PyDict>()?))?;
                        let mut arrays = Vec::new();
                        leaves(&result, false, &mut arrays)?;
                        let results = arrays.len();
                        arrays.extend(state_arrays(outputs.as_ref(), py)?);
                        *traced_in.lock().unwrap_or_else(|e| e.into_inner()) = Some(Traced {
                            structure: result.unbind(),
                            results,
                        });
                        Ok(arrays)
                    })();
                    for (leaf, original) in state.iter().zip(saved) {
                        leaf.set(original)?;
                    }
                    called
                };
                run().map_err(stash)
            })
        };
        let compiled = if self.shapeless {
            lz::compile_shapeless(run)
        } else {
            lz::compile(run)
        };
        Ok(Entry { compiled, traced })
    }
}

crate::transforms::forwards_function_attributes!(CompiledFunction);

#[pymethods]
impl CompiledFunction {
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let kwargs = kwargs.cloned().unwrap_or_else(|| PyDict::new(py));
        let template = PyTuple::new(py, [args.as_any(), kwargs.as_any()])?;
        let mut flat = Vec::new();
        leaves(template.as_any(), false, &mut flat)?;
        let n_args = flat.len();
        flat.extend(state_arrays(self.inputs.as_ref(), py)?);

        let mut key = String::new();
        describe(template.as_any(), self.shapeless, &mut key)?;
        key.push_str(&format!("|{}", flat.len() - n_args));
        let entry = {
            let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            match entries.get(&key) {
                Some(entry) => entry.clone(),
                None => {
                    let entry = Arc::new(self.entry(py, &template, n_args)?);
                    entries.insert(key, entry.clone());
                    entry
                }
            }
        };
        let outputs = entry.compiled.call(&flat).map_err(to_py_err)?;
        let traced = entry.traced.lock().unwrap_or_else(|e| e.into_inner());
        let traced = traced.as_ref().ok_or_else(|| {
            pyo3::exceptions::PyRuntimeError::new_err("[compile] The function was not traced.")
        })?;
        for (leaf, value) in state_leaves(self.outputs.as_ref().map(|s| s.bind(py)))?
            .iter()
            .zip(&outputs[traced.results..])
        {
            leaf.set(value.clone())?;
        }
        rebuild(
            traced.structure.bind(py),
            &mut outputs[..traced.results].iter().cloned(),
        )
    }
}

/// `compile(fun, inputs=None, outputs=None, shapeless=False)`: `fun` traced once per
/// argument structure (array shapes and dtypes, other values as constants) and replayed
/// with fused elementwise kernels afterwards. With `shapeless=True` arrays of new sizes
/// (same dimension counts and dtypes) replay the trace, each node's shape inferred anew.
#[pyfunction]
#[pyo3(signature = (fun, inputs = None, outputs = None, shapeless = false))]
fn compile(
    fun: Py<PyAny>,
    inputs: Option<Py<PyAny>>,
    outputs: Option<Py<PyAny>>,
    shapeless: bool,
) -> CompiledFunction {
    CompiledFunction {
        fun,
        inputs,
        outputs,
        entries: Mutex::new(HashMap::new()),
        shapeless,
    }
}

/// `disable_compile()`: compiled functions run their Python body on every call.
#[pyfunction]
fn disable_compile() {
    lz::set_compile_enabled(false);
}

/// `enable_compile()`: undoes `disable_compile`.
#[pyfunction]
fn enable_compile() {
    lz::set_compile_enabled(true);
}

/// Adds `compile`, `disable_compile` and `enable_compile` to `module`.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(compile, module)?)?;
    module.add_function(wrap_pyfunction!(disable_compile, module)?)?;
    module.add_function(wrap_pyfunction!(enable_compile, module)?)?;
    module.add_class::<CompiledFunction>()?;
    Ok(())
}
