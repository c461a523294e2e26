//! Trees of arrays in Python values (nested lists, tuples and dicts, MLX's trees): their
//! array leaves in order, the same structure rebuilt with new leaves, and axis prefixes
//! (`vmap`'s `in_axes`) spread over the leaves they cover.

use crate::array::PyArray;
use lazulite::Array;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

/// The children of a container, in tree order; `None` for a leaf.
pub fn children<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Option<Vec<Bound<'py, PyAny>>>> {
    if let Ok(l) = obj.cast::<PyList>() {
        return Ok(Some(l.iter().collect()));
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        return Ok(Some(t.iter().collect()));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        return Ok(Some(d.values().iter().collect()));
    }
    Ok(None)
}

/// Appends the arrays at the leaves of `tree`. With `strict`, any other leaf is a
/// `ValueError` (as MLX's `tree_flatten` in transforms); otherwise it is skipped.
pub fn leaves(tree: &Bound<'_, PyAny>, strict: bool, out: &mut Vec<Array>) -> PyResult<()> {
    out.extend(array_objects(tree, strict)?.iter().map(|a| a.get().array()));
    Ok(())
}

/// The array objects at the leaves of `tree`, in tree order (for updating them in place).
/// With `strict`, any other leaf is a `ValueError`; otherwise it is skipped.
pub fn array_objects<'py>(
    tree: &Bound<'py, PyAny>,
    strict: bool,
) -> PyResult<Vec<Bound<'py, PyArray>>> {
    let mut out = Vec::new();
    let mut stack = vec![tree.clone()];
    while let Some(obj) = stack.pop() {
        if let Ok(a) = obj.cast::<PyArray>() {
            out.push(a.clone());
        } else if let Some(kids) = children(&obj)? {
            stack.extend(kids.into_iter().rev());
        } else if strict {
            return Err(PyValueError::new_err(
                "[tree_flatten] The argument should contain only arrays",
            ));
        }
    }
    Ok(out)
}

/// `tree` with each array leaf replaced, in order, by the next of `new`; other leaves
/// are kept.
pub fn rebuild<'py>(
    tree: &Bound<'py, PyAny>,
    new: &mut dyn Iterator<Item = Array>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = tree.py();
    if tree.cast::<PyArray>().is_ok() {
        let a = new
            .next()
            .ok_or_else(|| PyValueError::new_err("[tree_unflatten] Too few leaves."))?;
        return Ok(Bound::new(py, PyArray::from(a))?.into_any());
    }
    if let Ok(l) = tree.cast::<PyList>() {
        let items = l
            .iter()
            .map(|c| rebuild(&c, new))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(PyList::new(py, items)?.into_any());
    }
    if let Ok(t) = tree.cast::<PyTuple>() {
        let items = t
            .iter()
            .map(|c| rebuild(&c, new))
            .collect::<PyResult<Vec<_>>>()?;
        return same_kind_of_tuple(t, items);
    }
    if let Ok(d) = tree.cast::<PyDict>() {
        let out = PyDict::new(py);
        for (k, v) in d.iter() {
            out.set_item(k, rebuild(&v, new)?)?;
        }
        return Ok(out.into_any());
    }
    Ok(tree.clone())
}

/// A tuple of `items` of the same type as `like`: a named tuple is rebuilt from its
/// fields, another tuple subclass from the sequence, as MLX's trees do.
fn same_kind_of_tuple<'py>(
    like: &Bound<'py, PyTuple>,
    items: Vec<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = like.py();
    let items = PyTuple::new(py, items)?;
    if like.is_exact_instance_of::<PyTuple>() {
        return Ok(items.into_any());
    }
    let kind = like.get_type();
    if kind.hasattr("_fields")? {
        kind.call1(items)
    } else {
        kind.call1((items,))
    }
}

/// `tree` with each array leaf replaced by `replace(leaf)`, updating lists and dicts in
/// place (so that an `nn.Module`, a dict, stays the object the caller holds) and
/// rebuilding tuples; returns the updated tree (a new object only for tuples and leaves).
pub fn update_in_place<'py>(
    tree: &Bound<'py, PyAny>,
    replace: &mut dyn FnMut(&Bound<'py, PyArray>) -> PyResult<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    if let Ok(a) = tree.cast::<PyArray>() {
        return replace(a);
    }
    if let Ok(l) = tree.cast::<PyList>() {
        for i in 0..l.len() {
            l.set_item(i, update_in_place(&l.get_item(i)?, replace)?)?;
        }
        return Ok(tree.clone());
    }
    if let Ok(t) = tree.cast::<PyTuple>() {
        let items = t
            .iter()
            .map(|c| update_in_place(&c, replace))
            .collect::<PyResult<Vec<_>>>()?;
        return same_kind_of_tuple(t, items);
    }
    if let Ok(d) = tree.cast::<PyDict>() {
        // Collected first: the dict is written while its entries are visited.
        let entries: Vec<_> = d.iter().collect();
        for (k, v) in entries {
            d.set_item(k, update_in_place(&v, replace)?)?;
        }
        return Ok(tree.clone());
    }
    Ok(tree.clone())
}

/// An axis spec: an int or `None`.
fn axis_of(spec: &Bound<'_, PyAny>) -> PyResult<Option<Option<i32>>> {
    if spec.is_none() {
        return Ok(Some(None));
    }
    if spec.is_instance_of::<pyo3::types::PyInt>() && !spec.is_instance_of::<pyo3::types::PyBool>()
    {
        return Ok(Some(Some(spec.extract()?)));
    }
    Ok(None)
}

fn not_a_prefix() -> PyErr {
    PyValueError::new_err(
        "[tree_map] Additional input tree is not a valid prefix of the first tree.",
    )
}

/// One axis per array leaf of `tree`, from `spec`: an int or `None` covers a whole
/// subtree; a list, tuple or dict must match a container of the same type in the tree.
pub fn spread_axes(
    spec: &Bound<'_, PyAny>,
    tree: &Bound<'_, PyAny>,
    out: &mut Vec<Option<i32>>,
) -> PyResult<()> {
    if let Some(axis) = axis_of(spec)? {
        let mut arrays = Vec::new();
        leaves(tree, true, &mut arrays)?;
        out.extend(std::iter::repeat_n(axis, arrays.len()));
        return Ok(());
    }
    if let (Ok(s), Ok(t)) = (spec.cast::<PyDict>(), tree.cast::<PyDict>()) {
        if s.len() != t.len() {
            return Err(not_a_prefix());
        }
        for (k, v) in t.iter() {
            let sub = s.get_item(&k)?.ok_or_else(not_a_prefix)?;
            spread_axes(&sub, &v, out)?;
        }
        return Ok(());
    }
    let both_lists = spec.is_instance_of::<PyList>() && tree.is_instance_of::<PyList>();
    let both_tuples = spec.is_instance_of::<PyTuple>() && tree.is_instance_of::<PyTuple>();
    if both_lists || both_tuples {
        let (s, t) = (
            children(spec)?.unwrap_or_default(),
            children(tree)?.unwrap_or_default(),
        );
        if s.len() != t.len() {
            return Err(not_a_prefix());
        }
        for (s, t) in s.iter().zip(&t) {
            spread_axes(s, t, out)?;
        }
        return Ok(());
    }
    if spec.is_instance_of::<PyList>()
        || spec.is_instance_of::<PyTuple>()
        || spec.is_instance_of::<PyDict>()
    {
        return Err(not_a_prefix());
    }
    Err(PyTypeError::new_err("[vmap] axis must be int or None."))
}
