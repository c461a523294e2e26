//! Transforms of Python callables: `grad`, `value_and_grad`, `vjp`, `jvp`, `vmap`.
//! Arguments and results are trees (see [`crate::trees`]): their array leaves go to the
//! flat Rust transforms and the trees are rebuilt around the results.

use crate::array::PyArray;
use crate::errors::{stash, to_py_err};
use crate::trees::{array_objects, leaves, rebuild, spread_axes, update_in_place};
use lazulite as lz;
use lazulite::shape::shape_text;
use lazulite::Array;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use std::cell::RefCell;

fn wrap(py: Python<'_>, a: Array) -> PyResult<Bound<'_, PyAny>> {
    Ok(Bound::new(py, PyArray::from(a))?.into_any())
}

fn arrays_to_list(py: Python<'_>, arrays: Vec<Array>) -> PyResult<Bound<'_, PyList>> {
    let items = arrays
        .into_iter()
        .map(|a| wrap(py, a))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "object".into(), |n| n.to_string())
}

/// Gives a pyclass that wraps a Python function (field `fun`) the function's `__name__`,
/// `__doc__` and other attributes, as MLX's transformed functions have them.
macro_rules! forwards_function_attributes {
    ($wrapper:ty) => {
        #[pyo3::pymethods]
        impl $wrapper {
            #[getter(__doc__)]
            fn doc(&self, py: pyo3::Python<'_>) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                Ok(self.fun.bind(py).getattr("__doc__")?.unbind())
            }

            fn __getattr__(
                &self,
                py: pyo3::Python<'_>,
                name: &str,
            ) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                Ok(self.fun.bind(py).getattr(name)?.unbind())
            }
        }
    };
}
pub(crate) use forwards_function_attributes;

/// Which arguments `grad` differentiates: positions (as an int or a sequence) and names.
struct Wrt {
    argnums: Vec<usize>,
    single: bool,
    argnames: Vec<String>,
}

fn parse_wrt(
    name: &str,
    argnums: Option<&Bound<'_, PyAny>>,
    argnames: Option<&Bound<'_, PyAny>>,
) -> PyResult<Wrt> {
    let argnames: Vec<String> = match argnames {
        None => Vec::new(),
        Some(n) if n.is_instance_of::<PyString>() => vec![n.extract()?],
        Some(n) => n.extract()?,
    };
    let (positions, single): (Vec<i64>, bool) = match argnums.filter(|a| !a.is_none()) {
        None if argnames.is_empty() => (vec![0], true),
        None => (Vec::new(), false),
        Some(a) if a.is_instance_of::<pyo3::types::PyInt>() => (vec![a.extract()?], true),
        Some(a) => (a.extract()?, false),
    };
    let mut seen = Vec::new();
    for &p in &positions {
        if p < 0 {
            return Err(PyValueError::new_err(format!(
                "[{name}] Can't compute the gradient of negative argument index {p}"
            )));
        }
        if seen.contains(&(p as usize)) {
            return Err(PyValueError::new_err(format!(
                "[{name}] Duplicate argument index {p} is not allowed."
            )));
        }
        seen.push(p as usize);
    }
    if seen.is_empty() && argnames.is_empty() {
        return Err(PyValueError::new_err(format!(
            "[{name}] Gradient wrt no argument requested"
        )));
    }
    Ok(Wrt {
        argnums: seen,
        single,
        argnames,
    })
}

// The function `grad` and `value_and_grad` return (its `__doc__` is the function's).
#[pyclass(name = "_GradientFunction", module = "lazulite.core", frozen)]
struct GradientFunction {
    fun: Py<PyAny>,
    wrt: Wrt,
    with_value: bool,
}

forwards_function_attributes!(GradientFunction);

impl GradientFunction {
    fn name(&self) -> &'static str {
        if self.with_value {
            "value_and_grad"
        } else {
            "grad"
        }
    }

    /// Checks the function's result; returns its scalar and the rest (for `value_and_grad`,
    /// a tuple whose first element is the scalar).
    fn split_result<'py>(
        &self,
        out: &Bound<'py, PyAny>,
    ) -> PyResult<(Array, Option<Bound<'py, PyAny>>)> {
        if let Ok(a) = out.cast::<PyArray>() {
            return Ok((a.get().array(), None));
        }
        if self.with_value {
            if let Ok(t) = out.cast::<PyTuple>() {
                if let Some(first) = t.iter().next() {
                    if let Ok(a) = first.cast::<PyArray>() {
                        let rest = t.get_slice(1, t.len());
                        return Ok((a.get().array(), Some(rest.into_any())));
                    }
                }
            }
            return Err(PyValueError::new_err(format!(
                "[value_and_grad] The return value of the function whose gradient we want to \
                 compute should be either a scalar array or a tuple with the first value being \
                 a scalar array (Union[array, tuple[array, Any, ...]]); but {} was returned.",
                type_name(out)
            )));
        }
        Err(PyValueError::new_err(format!(
            "[grad] The return value of the function whose gradient we want to compute should \
             be a scalar array; but {} was returned.",
            type_name(out)
        )))
    }
}

#[pymethods]
impl GradientFunction {
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let name = self.name();
        let kwargs = kwargs.cloned().unwrap_or_else(|| PyDict::new(py));
        for &i in &self.wrt.argnums {
            if i >= args.len() {
                return Err(PyValueError::new_err(format!(
                    "[{name}] Can't compute the gradient of argument index {i} because the \
                     function is called with only {} positional arguments.",
                    args.len()
                )));
            }
        }
        let mut named = Vec::new();
        for n in &self.wrt.argnames {
            let value = kwargs.get_item(n)?.ok_or_else(|| {
                let keys: Vec<String> = kwargs.keys().iter().map(|k| format!("'{k}'")).collect();
                PyValueError::new_err(format!(
                    "[{name}] Can't compute the gradient of keyword argument '{n}' because the \
                     function is called with the following keyword arguments {{{}}}",
                    keys.join(", ")
                ))
            })?;
            named.push(value);
        }
        let mut primals = Vec::new();
        let mut originals = Vec::new();
        let mut counts = Vec::new();
        for tree in self
            .wrt
            .argnums
            .iter()
            .map(|&i| args.get_item(i))
            .chain(named.iter().cloned().map(Ok))
        {
            let objects = array_objects(&tree?, true)?;
            primals.extend(objects.iter().map(|a| a.get().array()));
            counts.push(objects.len());
            originals.extend(objects);
        }

        let rest: RefCell<Option<Bound<'py, PyAny>>> = RefCell::new(None);
        let f = |inputs: &[Array]| -> lz::Result<Vec<Array>> {
            (|| -> PyResult<Vec<Array>> {
                // As MLX does, the traced arrays go into the caller's lists and dicts (an
                // `nn.Module` stays itself) and the caller's arrays come back afterwards.
                let mut inserted = Vec::new();
                let mut call_args: Vec<Bound<'py, PyAny>> = args.iter().collect();
                let call_kwargs = kwargs.copy()?;
                {
                    let mut new = inputs.iter().cloned();
                    let mut fill = |_: &Bound<'py, PyArray>| -> PyResult<Bound<'py, PyAny>> {
                        let traced = wrap(py, new.next().expect("one input per leaf"))?;
                        inserted.push(traced.clone());
                        Ok(traced)
                    };
                    for &i in &self.wrt.argnums {
                        call_args[i] = update_in_place(&call_args[i], &mut fill)?;
                    }
                    for n in &self.wrt.argnames {
                        let tree = kwargs.get_item(n)?.expect("checked above");
                        call_kwargs.set_item(n, update_in_place(&tree, &mut fill)?)?;
                    }
                }
                let out = self
                    .fun
                    .bind(py)
                    .call(PyTuple::new(py, call_args.clone())?, Some(&call_kwargs));
                // Leaves the function wrote itself are left as they are.
                let mut index = 0;
                let mut put_back = |leaf: &Bound<'py, PyArray>| -> PyResult<Bound<'py, PyAny>> {
                    let ours = inserted.get(index).is_some_and(|t| t.is(leaf));
                    let kept = match originals.get(index) {
                        Some(original) if ours => original.clone().into_any(),
                        _ => leaf.clone().into_any(),
                    };
                    index += 1;
                    Ok(kept)
                };
                for &i in &self.wrt.argnums {
                    update_in_place(&call_args[i], &mut put_back)?;
                }
                for n in &self.wrt.argnames {
                    let tree = call_kwargs.get_item(n)?.expect("set above");
                    update_in_place(&tree, &mut put_back)?;
                }
                let out = out?;
                let (value, others) = self.split_result(&out)?;
                let mut outputs = vec![value];
                if let Some(others) = &others {
                    leaves(others, false, &mut outputs)?;
                }
                *rest.borrow_mut() = others;
                Ok(outputs)
            })()
            .map_err(stash)
        };
        let all: Vec<usize> = (0..primals.len()).collect();
        let result = lz::value_and_grad_argnums(f, &primals, &all);
        let (values, grads) = result.map_err(|e| to_py_err(rename(e, name)))?;

        let mut grads = grads.into_iter();
        let mut trees = Vec::new();
        for (k, &i) in self.wrt.argnums.iter().enumerate() {
            let mut part = grads.by_ref().take(counts[k]);
            trees.push(rebuild(&args.get_item(i)?, &mut part)?);
        }
        let positional: Bound<'py, PyAny> = if self.wrt.single {
            trees.pop().expect("one argnum")
        } else if self.wrt.argnums.is_empty() {
            py.None().into_bound(py)
        } else {
            PyTuple::new(py, trees)?.into_any()
        };
        let gradient = if self.wrt.argnames.is_empty() {
            positional
        } else {
            let by_name = PyDict::new(py);
            for (k, n) in self.wrt.argnames.iter().enumerate() {
                let mut part = grads.by_ref().take(counts[self.wrt.argnums.len() + k]);
                by_name.set_item(n, rebuild(&named[k], &mut part)?)?;
            }
            PyTuple::new(py, [positional, by_name.into_any()])?.into_any()
        };
        if !self.with_value {
            return Ok(gradient);
        }
        let mut values = values.into_iter();
        let value = wrap(py, values.next().expect("the scalar output"))?;
        let value = match rest.into_inner() {
            None => value,
            Some(others) => {
                let others = rebuild(&others, &mut values)?;
                let mut items = vec![value];
                items.extend(others.cast::<PyTuple>()?.iter());
                PyTuple::new(py, items)?.into_any()
            }
        };
        Ok(PyTuple::new(py, [value, gradient])?.into_any())
    }
}

/// Rust transforms name themselves `value_and_grad`; `grad` reports as `grad`.
fn rename(e: lz::Error, name: &str) -> lz::Error {
    if name == "grad" {
        let message = e.message().replace("[value_and_grad]", "[grad]");
        return lz::Error::new(e.kind(), message);
    }
    e
}

/// `grad(fun, argnums=None, argnames=[])`: a function returning the gradient of `fun`'s
/// scalar output with respect to the chosen arguments (trees of arrays).
#[pyfunction]
#[pyo3(signature = (fun, argnums = None, argnames = None))]
fn grad(
    fun: Py<PyAny>,
    argnums: Option<&Bound<'_, PyAny>>,
    argnames: Option<&Bound<'_, PyAny>>,
) -> PyResult<GradientFunction> {
    Ok(GradientFunction {
        fun,
        wrt: parse_wrt("grad", argnums, argnames)?,
        with_value: false,
    })
}

/// `value_and_grad(fun, argnums=None, argnames=[])`: a function returning `(value, grad)`;
/// `fun` may return a tuple whose first element is the scalar to differentiate.
#[pyfunction]
#[pyo3(signature = (fun, argnums = None, argnames = None))]
fn value_and_grad(
    fun: Py<PyAny>,
    argnums: Option<&Bound<'_, PyAny>>,
    argnames: Option<&Bound<'_, PyAny>>,
) -> PyResult<GradientFunction> {
    Ok(GradientFunction {
        fun,
        wrt: parse_wrt("value_and_grad", argnums, argnames)?,
        with_value: true,
    })
}

/// The arrays of a `primals`/`tangents` argument (a list or tuple of array-likes).
fn array_list(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<Array>> {
    if !(obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>()) {
        return Err(PyTypeError::new_err(format!(
            "{what} must be a list of arrays, not {}.",
            type_name(obj)
        )));
    }
    obj.try_iter()?
        .map(|o| Ok(o?.extract::<crate::convert::Arr>()?.0))
        .collect()
}

/// Calls `fun(*inputs)` and returns its array outputs (an array, or a list/tuple of them).
fn call_flat(py: Python<'_>, fun: &Py<PyAny>, inputs: &[Array]) -> PyResult<Vec<Array>> {
    let args = inputs
        .iter()
        .map(|a| wrap(py, a.clone()))
        .collect::<PyResult<Vec<_>>>()?;
    let out = fun.bind(py).call1(PyTuple::new(py, args)?)?;
    let mut arrays = Vec::new();
    leaves(&out, true, &mut arrays)?;
    Ok(arrays)
}

type Pair<'py> = (Bound<'py, PyList>, Bound<'py, PyList>);

/// `vjp(fun, primals, cotangents)`: `fun`'s outputs and the vector-Jacobian products.
#[pyfunction]
fn vjp<'py>(
    py: Python<'py>,
    fun: Py<PyAny>,
    primals: &Bound<'py, PyAny>,
    cotangents: &Bound<'py, PyAny>,
) -> PyResult<Pair<'py>> {
    let primals = array_list(primals, "primals")?;
    let cotangents = array_list(cotangents, "cotangents")?;
    let result = lz::vjp(
        |inputs| call_flat(py, &fun, inputs).map_err(stash),
        &primals,
        &cotangents,
    );
    let (outputs, vjps) = result.map_err(to_py_err)?;
    Ok((arrays_to_list(py, outputs)?, arrays_to_list(py, vjps)?))
}

/// `jvp(fun, primals, tangents)`: `fun`'s outputs and the Jacobian-vector products.
#[pyfunction]
fn jvp<'py>(
    py: Python<'py>,
    fun: Py<PyAny>,
    primals: &Bound<'py, PyAny>,
    tangents: &Bound<'py, PyAny>,
) -> PyResult<Pair<'py>> {
    let primals = array_list(primals, "primals")?;
    let tangents = array_list(tangents, "tangents")?;
    let result = lz::jvp(
        |inputs| call_flat(py, &fun, inputs).map_err(stash),
        &primals,
        &tangents,
    );
    let (outputs, jvps) = result.map_err(to_py_err)?;
    Ok((arrays_to_list(py, outputs)?, arrays_to_list(py, jvps)?))
}

// The function `vmap` returns (its `__doc__` is the function's).
#[pyclass(name = "_VmapFunction", module = "lazulite.core", frozen)]
struct VmapFunction {
    fun: Py<PyAny>,
    in_axes: Py<PyAny>,
    out_axes: Py<PyAny>,
}

forwards_function_attributes!(VmapFunction);

#[pymethods]
impl VmapFunction {
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if kwargs.is_some_and(|k| !k.is_empty()) {
            return Err(PyTypeError::new_err(
                "[vmap] Keyword arguments are not supported.",
            ));
        }
        // A tuple of axes pairs up with the arguments; anything else applies to each.
        let in_axes = self.in_axes.bind(py);
        let mut axes = Vec::new();
        if in_axes.is_instance_of::<PyTuple>() {
            spread_axes(in_axes, args.as_any(), &mut axes)?;
        } else {
            for arg in args.iter() {
                spread_axes(in_axes, &arg, &mut axes)?;
            }
        }
        let mut inputs = Vec::new();
        leaves(args.as_any(), true, &mut inputs)?;
        for (x, ax) in inputs.iter().zip(&axes) {
            if let Some(ax) = *ax {
                let n = x.ndim() as i32;
                if ax < -n || ax >= n {
                    return Err(crate::errors::axis_error(format!(
                        "[vmap] Invalid vectorization axis {ax} for array with shape {}",
                        shape_text(x.shape())
                    )));
                }
            }
        }

        let structure: RefCell<Option<Bound<'py, PyAny>>> = RefCell::new(None);
        let f = |traced: &[Array]| -> lz::Result<Vec<Array>> {
            (|| -> PyResult<Vec<Array>> {
                let call_args = rebuild(args.as_any(), &mut traced.iter().cloned())?;
                let out = self.fun.bind(py).call1(call_args.cast::<PyTuple>()?)?;
                let mut arrays = Vec::new();
                leaves(&out, true, &mut arrays)?;
                *structure.borrow_mut() = Some(out);
                Ok(arrays)
            })()
            .map_err(stash)
        };
        let outputs = lz::vmap(f, axes, vec![Some(0)])(&inputs);
        let outputs = outputs.map_err(to_py_err)?;
        let structure = structure.into_inner().expect("the function ran");

        let mut out_axes = Vec::new();
        spread_axes(self.out_axes.bind(py), &structure, &mut out_axes)?;
        let placed = outputs
            .iter()
            .zip(&out_axes)
            .map(|(o, ax)| match ax {
                Some(ax) => lz::moveaxis(o, 0, *ax),
                None => first_along_batch(o),
            })
            .collect::<lz::Result<Vec<_>>>()
            .map_err(to_py_err)?;
        rebuild(&structure, &mut placed.into_iter())
    }
}

/// Element 0 along the batch axis (in front), for outputs with `out_axes` `None`.
fn first_along_batch(a: &Array) -> lz::Result<Array> {
    let mut stop: Vec<i64> = a.shape().iter().map(|&d| d as i64).collect();
    stop[0] = 1;
    let (start, step) = (vec![0; a.ndim()], vec![1; a.ndim()]);
    let first = lz::slice(a, &start, &stop, &step)?;
    lz::squeeze(&first, 0)
}

/// `vmap(fun, in_axes=0, out_axes=0)`: `fun` vectorised over the given axes (ints, `None`
/// or trees of them matching the arguments / outputs).
#[pyfunction]
#[pyo3(signature = (fun, in_axes = None, out_axes = None))]
fn vmap(
    py: Python<'_>,
    fun: Py<PyAny>,
    in_axes: Option<Py<PyAny>>,
    out_axes: Option<Py<PyAny>>,
) -> PyResult<VmapFunction> {
    let zero = || 0i32.into_pyobject(py).map(|z| z.into_any().unbind());
    Ok(VmapFunction {
        fun,
        in_axes: in_axes.map_or_else(zero, Ok)?,
        out_axes: out_axes.map_or_else(zero, Ok)?,
    })
}

/// Adds the transforms to `module`.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(grad, module)?)?;
    module.add_function(wrap_pyfunction!(value_and_grad, module)?)?;
    module.add_function(wrap_pyfunction!(vjp, module)?)?;
    module.add_function(wrap_pyfunction!(jvp, module)?)?;
    module.add_function(wrap_pyfunction!(vmap, module)?)?;
    module.add_class::<GradientFunction>()?;
    module.add_class::<VmapFunction>()?;
    Ok(())
}
