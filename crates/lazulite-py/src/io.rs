//! Saving and loading: `save`, `savez`, `savez_compressed`, `save_safetensors`,
//! `save_gguf` and `load`, with MLX's signatures and errors. A file is a `str` or
//! path-like, or (except for GGUF, as in MLX) an open binary file object: saves write
//! its bytes with `file.write`, loads read them with `file.read()`. File work runs with
//! the GIL released.

use crate::array::PyArray;
use crate::errors::{to_py_err, Res};
use lazulite::{Array, Loaded, MetadataValue};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// Where a save goes or a load comes from.
enum File<'py> {
    Path(PathBuf),
    Object(Bound<'py, PyAny>),
}

/// A `str` or `os.PathLike` as a path; an object with `method` (`"write"`/`"read"`) as a
/// file object when `objects` allows them; else MLX's ValueError.
fn file_of<'py>(
    file: &Bound<'py, PyAny>,
    method: &str,
    objects: bool,
    refusal: &str,
) -> PyResult<File<'py>> {
    if file.is_instance_of::<PyString>() || file.hasattr("__fspath__")? {
        let os = file.py().import("os")?;
        let path = os.call_method1("fspath", (file,))?;
        if let Ok(s) = path.extract::<String>() {
            return Ok(File::Path(PathBuf::from(s)));
        }
        let bytes: Vec<u8> = path.extract()?;
        return Ok(File::Path(PathBuf::from(
            String::from_utf8_lossy(&bytes).into_owned(),
        )));
    }
    if objects && file.hasattr(method)? {
        return Ok(File::Object(file.clone()));
    }
    Err(PyValueError::new_err(refusal.to_string()))
}

/// Saves through `save` (which takes a path) to `file`: directly for a path, through a
/// temporary file for a file object, whose bytes are then written to it.
fn save_to(
    py: Python<'_>,
    file: &Bound<'_, PyAny>,
    op: &str,
    extension: &str,
    save: impl FnOnce(PathBuf) -> lazulite::Result<()> + Send,
) -> Res<()> {
    let refusal = format!("[{op}] Input must be a file-like object, or string");
    match file_of(file, "write", true, &refusal)? {
        File::Path(path) => py.detach(|| save(path))?,
        File::Object(object) => {
            static COUNTER: AtomicU64 = AtomicU64::new(0);
            let temp = std::env::temp_dir().join(format!(
                "lazulite-{op}-{}-{}.{extension}",
                std::process::id(),
                COUNTER.fetch_add(1, Ordering::Relaxed)
            ));
            let bytes = py.detach(|| {
                let written = save(temp.clone()).and_then(|()| Ok(std::fs::read(&temp)?));
                // Best effort: a failed save may have left nothing behind.
                let _ = std::fs::remove_file(&temp);
                written
            })?;
            object.call_method1("write", (PyBytes::new(py, &bytes),))?;
        }
    }
    Ok(())
}

/// The lazulite array of a value to save; MLX raises RuntimeError for other values.
fn array_to_save(op: &str, value: &Bound<'_, PyAny>) -> PyResult<Array> {
    value
        .cast::<PyArray>()
        .map(|a| a.get().array())
        .map_err(|_| {
            let name = value
                .get_type()
                .name()
                .map_or_else(|_| "object".into(), |n| n.to_string());
            PyRuntimeError::new_err(format!("[{op}] Expected arrays to save but got {name}."))
        })
}

/// `{name: array}` of a dict argument.
fn named_arrays(op: &str, arrays: &Bound<'_, PyDict>) -> PyResult<Named> {
    arrays
        .iter()
        .map(|(k, v)| Ok((k.extract::<String>()?, array_to_save(op, &v)?)))
        .collect()
}

/// save(file: file | str | pathlib.Path, arr: array) -> None
///
/// Saves the array to a binary file in ``.npy`` format (``.npy`` is added to a path
/// that lacks it).
#[pyfunction]
fn save(py: Python<'_>, file: &Bound<'_, PyAny>, arr: PyRef<'_, PyArray>) -> Res<()> {
    let a = arr.array();
    save_to(py, file, "save", "npy", move |p| lazulite::save(p, &a))
}

/// Arrays with their names.
type Named = Vec<(String, Array)>;

/// The positional and keyword arrays of `savez`.
fn npz_arrays(
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<(Vec<Array>, Named)> {
    let positional = args
        .iter()
        .map(|a| array_to_save("savez", &a))
        .collect::<PyResult<Vec<_>>>()?;
    let named = match kwargs {
        Some(k) => named_arrays("savez", k)?,
        None => Vec::new(),
    };
    Ok((positional, named))
}

fn save_npz(
    py: Python<'_>,
    file: &Bound<'_, PyAny>,
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
    compressed: bool,
) -> Res<()> {
    let (positional, named) = npz_arrays(args, kwargs)?;
    let op = if compressed {
        "savez_compressed"
    } else {
        "savez"
    };
    save_to(py, file, op, "npz", move |p| {
        let refs: Vec<&Array> = positional.iter().collect();
        let named = named.iter().map(|(k, v)| (k.as_str(), v));
        if compressed {
            lazulite::savez_compressed(p, &refs, named)
        } else {
            lazulite::savez(p, &refs, named)
        }
    })
}

/// savez(file: file | str | pathlib.Path, *args, **kwargs)
///
/// Saves several arrays to an uncompressed ``.npz`` file: positional arrays as
/// ``arr_0``, ``arr_1``, ..., keyword arrays under their keywords.
#[pyfunction]
#[pyo3(signature = (file, *args, **kwargs))]
fn savez(
    py: Python<'_>,
    file: &Bound<'_, PyAny>,
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> Res<()> {
    save_npz(py, file, args, kwargs, false)
}

/// savez_compressed(file: file | str | pathlib.Path, *args, **kwargs)
///
/// As ``savez``, with every array deflate-compressed.
#[pyfunction]
#[pyo3(signature = (file, *args, **kwargs))]
fn savez_compressed(
    py: Python<'_>,
    file: &Bound<'_, PyAny>,
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> Res<()> {
    save_npz(py, file, args, kwargs, true)
}

/// save_safetensors(file: file | str | pathlib.Path, arrays: dict[str, array], metadata: dict[str, str] | None = None)
///
/// Saves arrays (and string metadata) to a ``.safetensors`` file.
#[pyfunction]
#[pyo3(signature = (file, arrays, metadata = None))]
fn save_safetensors(
    py: Python<'_>,
    file: &Bound<'_, PyAny>,
    arrays: &Bound<'_, PyDict>,
    metadata: Option<&Bound<'_, PyDict>>,
) -> Res<()> {
    let named = named_arrays("save_safetensors", arrays)?;
    let metadata = metadata
        .map(|m| {
            m.extract::<BTreeMap<String, String>>().map_err(|_| {
                PyValueError::new_err(
                    "[save_safetensors] Metadata must be a dictionary with string keys and values",
                )
            })
        })
        .transpose()?;
    save_to(py, file, "save_safetensors", "safetensors", move |p| {
        lazulite::save_safetensors(p, named.iter().map(|(k, v)| (k, v)), metadata.as_ref())
    })
}

/// A GGUF metadata value: a string, a list of strings, or a 0-d / 1-d array.
fn gguf_value(key: &str, value: &Bound<'_, PyAny>) -> PyResult<MetadataValue> {
    if let Ok(s) = value.extract::<String>() {
        return Ok(MetadataValue::String(s));
    }
    if let Ok(a) = value.cast::<PyArray>() {
        return Ok(MetadataValue::Array(a.get().array()));
    }
    if value.is_instance_of::<PyList>() {
        if let Ok(items) = value.extract::<Vec<String>>() {
            return Ok(MetadataValue::Strings(items));
        }
    }
    let name = value
        .get_type()
        .name()
        .map_or_else(|_| "object".into(), |n| n.to_string());
    Err(PyRuntimeError::new_err(format!(
        "[save_gguf] Metadata '{key}' must be an array, a string or a list of strings; got {name}."
    )))
}

/// save_gguf(file: file | str | pathlib.Path, arrays: dict[str, array], metadata: dict[str, array | str | list[str]])
///
/// Saves arrays and metadata to a ``.gguf`` file (a path only, as in MLX).
#[pyfunction]
#[pyo3(signature = (file, arrays, metadata = None))]
fn save_gguf(
    py: Python<'_>,
    file: &Bound<'_, PyAny>,
    arrays: &Bound<'_, PyDict>,
    metadata: Option<&Bound<'_, PyDict>>,
) -> Res<()> {
    let File::Path(path) = file_of(file, "write", false, "[save_gguf] Input must be a string")?
    else {
        unreachable!("file objects are refused for GGUF")
    };
    let named = named_arrays("save_gguf", arrays)?;
    let mut meta = BTreeMap::new();
    if let Some(m) = metadata {
        for (k, v) in m.iter() {
            let key: String = k.extract()?;
            let value = gguf_value(&key, &v)?;
            meta.insert(key, value);
        }
    }
    // MLX raises RuntimeError for every GGUF content problem (dtype, dimensions).
    py.detach(|| lazulite::save_gguf(path, named.iter().map(|(k, v)| (k, v)), &meta))
        .map_err(|e| match e.kind() {
            lazulite::ErrorKind::Value => PyRuntimeError::new_err(e.message().to_string()),
            _ => to_py_err(e),
        })?;
    Ok(())
}

/// The format named by a file name's extension.
fn extension_of(name: &str) -> PyResult<String> {
    PathBuf::from(name)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_string)
        .ok_or_else(|| PyValueError::new_err("[load] Could not infer file format from extension"))
}

fn metadata_value(py: Python<'_>, value: MetadataValue) -> PyResult<Py<PyAny>> {
    Ok(match value {
        MetadataValue::String(s) => s.into_pyobject(py)?.into_any().unbind(),
        MetadataValue::Strings(items) => PyList::new(py, items)?.into_any().unbind(),
        MetadataValue::Array(a) => Py::new(py, PyArray::from(a))?.into_any(),
    })
}

fn arrays_dict<'py>(
    py: Python<'py>,
    arrays: BTreeMap<String, Array>,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (k, v) in arrays {
        dict.set_item(k, Py::new(py, PyArray::from(v))?)?;
    }
    Ok(dict)
}

/// load(file: file | str | pathlib.Path, /, format: str | None = None, return_metadata: bool = False, *, stream: StreamOrDevice = None) -> array | dict[str, array] | tuple[dict[str, array], dict[str, Any]]
///
/// Loads array(s) from a ``.npy``, ``.npz``, ``.safetensors`` or ``.gguf`` file, lazily:
/// a file is memory-mapped and each array reads its bytes when first evaluated. The
/// format comes from the extension unless ``format`` names it. ``return_metadata`` also
/// returns the metadata of ``.safetensors`` and ``.gguf`` files.
#[pyfunction]
#[pyo3(signature = (file, /, format = None, return_metadata = false, *, stream = None))]
#[allow(unused_variables)]
fn load(
    py: Python<'_>,
    file: &Bound<'_, PyAny>,
    format: Option<String>,
    return_metadata: bool,
    stream: Option<crate::devices::StreamOrDevice>,
) -> Res<Py<PyAny>> {
    let refusal = "[load] Input must be a file-like object opened in binary mode, or string";
    let loaded = match file_of(file, "read", true, refusal)? {
        File::Path(path) => {
            py.detach(|| lazulite::load(&path, format.as_deref(), return_metadata))?
        }
        File::Object(object) => {
            let format = match format {
                Some(f) => f,
                None => match object.getattr("name").ok() {
                    Some(name) if name.is_instance_of::<PyString>() => {
                        extension_of(&name.extract::<String>()?)?
                    }
                    _ => {
                        return Err(PyValueError::new_err(
                            "[load] Could not infer file format from extension",
                        )
                        .into())
                    }
                },
            };
            if format == "gguf" {
                return Err(PyValueError::new_err("[load_gguf] Input must be a string").into());
            }
            let data = object.call_method0("read")?;
            let bytes = data
                .cast::<PyBytes>()
                .map_err(|_| PyValueError::new_err(refusal))?
                .as_bytes()
                .to_vec();
            py.detach(|| lazulite::load_bytes(bytes, &format, return_metadata))?
        }
    };
    Ok(match loaded {
        Loaded::Array(a) => Py::new(py, PyArray::from(a))?.into_any(),
        Loaded::Arrays(arrays) => arrays_dict(py, arrays)?.into_any().unbind(),
        Loaded::WithMetadata(arrays, metadata) => {
            let meta = PyDict::new(py);
            for (k, v) in metadata {
                meta.set_item(k, metadata_value(py, v)?)?;
            }
            PyTuple::new(py, [arrays_dict(py, arrays)?.into_any(), meta.into_any()])?
                .into_any()
                .unbind()
        }
    })
}

/// Adds the saving and loading functions to `module`.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(save, module)?)?;
    module.add_function(wrap_pyfunction!(savez, module)?)?;
    module.add_function(wrap_pyfunction!(savez_compressed, module)?)?;
    module.add_function(wrap_pyfunction!(save_safetensors, module)?)?;
    module.add_function(wrap_pyfunction!(save_gguf, module)?)?;
    module.add_function(wrap_pyfunction!(load, module)?)?;
    Ok(())
}
