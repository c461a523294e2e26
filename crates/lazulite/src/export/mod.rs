//! Functions exported to and imported from MLX's function files (`.mlxfn`), in both
//! directions: files written by MLX load here, and files written here load in MLX.
//!
//! Export traces the function on example inputs and writes each recorded operation as
//! the MLX primitive(s) it corresponds to (each primitive knows its own encoding, see
//! `Primitive::export`). Import reads the tape back and records the same computation
//! with lazulite's op functions, so an imported function returns ordinary lazy arrays
//! that `grad`, `vmap` and `compile` transform like any other.
//!
//! ```
//! use lazulite::export::{export_function, import_function, Kwargs};
//! use lazulite::{add, Array};
//! let path = std::env::temp_dir().join("lazulite_doc_module.mlxfn");
//! let f = |args: &[Array], _: &Kwargs| Ok(vec![add(&args[0], &args[0])?]);
//! let x = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
//! export_function(&path, f, &[x.clone()], &Kwargs::new()).unwrap();
//! let g = import_function(&path).unwrap();
//! let y = g.call(&[x], &Kwargs::new()).unwrap();
//! assert_eq!(y[0].to_vec::<f32>().unwrap(), vec![2.0, 4.0]);
//! ```

mod callback;
mod format;
mod mlx_ops;
mod read;
mod write;

pub use crate::primitive::MlxState;
pub use callback::{ExportCallback, ExportEvent, TracedArray};
pub use read::{import_function, import_function_bytes, ImportedFunction};

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use write::FileWriter;

/// Keyword inputs of an exported or imported function, by name (kept in key order,
/// which is the order MLX appends them after the positional inputs).
///
/// ```
/// use lazulite::{export::Kwargs, Array};
/// let mut kwargs = Kwargs::new();
/// kwargs.insert("scale".into(), Array::scalar(2.0f32));
/// kwargs.insert("bias".into(), Array::scalar(1.0f32));
/// assert_eq!(kwargs.keys().collect::<Vec<_>>(), ["bias", "scale"]); // sorted by name
/// ```
pub type Kwargs = BTreeMap<String, Array>;

/// A function that can be exported: positional and keyword arrays to arrays.
///
/// ```
/// use lazulite::export::{ExportedFn, Kwargs};
/// use lazulite::{add, Array};
/// let f: Box<ExportedFn> = Box::new(|a: &[Array], _: &Kwargs| -> lazulite::Result<Vec<Array>> {
///     Ok(vec![add(&a[0], 1.0)?])
/// });
/// assert_eq!(f(&[Array::scalar(1.0f32)], &Kwargs::new())?[0].item::<f32>()?, 2.0);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub type ExportedFn = dyn Fn(&[Array], &Kwargs) -> Result<Vec<Array>> + Send + Sync;

/// Exports `fun` traced at `args` and `kwargs` to the file `path` (MLX's
/// `mx.export_function`), without metadata and with fixed shapes.
///
/// ```
/// use lazulite::export::{export_function, import_function, Kwargs};
/// use lazulite::{multiply, Array};
/// let path = std::env::temp_dir().join("lazulite_doc_export.mlxfn");
/// let mut kwargs = Kwargs::new();
/// kwargs.insert("scale".into(), Array::scalar(3.0f32));
/// let f = |a: &[Array], k: &Kwargs| Ok(vec![multiply(&a[0], &k["scale"])?]);
/// export_function(&path, f, &[Array::scalar(2.0f32)], &kwargs).unwrap();
/// let y = import_function(&path).unwrap().call(&[Array::scalar(5.0f32)], &kwargs).unwrap();
/// assert_eq!(y[0].item::<f32>().unwrap(), 15.0);
/// ```
pub fn export_function<F>(
    path: impl AsRef<Path>,
    fun: F,
    args: &[Array],
    kwargs: &Kwargs,
) -> Result<()>
where
    F: Fn(&[Array], &Kwargs) -> Result<Vec<Array>> + Send + Sync + 'static,
{
    let mut e = exporter(path, fun, false, "")?;
    e.call(args, kwargs)
}

/// Opens `path` to export several signatures of `fun` into it (MLX's `mx.exporter`):
/// each [`Exporter::call`] traces `fun` on new example inputs and adds it to the file.
/// `metadata` is a string stored with the functions, read back with
/// [`ImportedFunction::metadata`]. With `shapeless`, the file is marked shapeless and
/// its traces are recorded in their shape-generic forms (as by [`crate::compile_shapeless`]):
/// the imported function, in lazulite or MLX, runs at inputs of other sizes with the same
/// dimension counts and dtypes, gradients the function takes included, except the
/// derivative of a reshape with `-1` or of a flatten, which MLX's format holds at the
/// traced sizes only.
///
/// ```
/// use lazulite::export::{exporter, import_function, Kwargs};
/// use lazulite::{sum, Array};
/// let path = std::env::temp_dir().join("lazulite_doc_exporter.mlxfn");
/// let f = |a: &[Array], _: &Kwargs| Ok(vec![sum(&a[0], None::<i32>, false)?]);
/// let mut e = exporter(&path, f, false, "{\"model\": \"tiny\"}").unwrap();
/// e.call(&[Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap()], &Kwargs::new()).unwrap();
/// e.call(&[Array::from_slice(&[1i32, 2, 3], &[3]).unwrap()], &Kwargs::new()).unwrap();
/// e.close();
/// let g = import_function(&path).unwrap();
/// assert_eq!(g.metadata(), "{\"model\": \"tiny\"}");
/// let y = g.call(&[Array::from_slice(&[4i32, 5, 6], &[3]).unwrap()], &Kwargs::new()).unwrap();
/// assert_eq!(y[0].item::<i32>().unwrap(), 15);
/// ```
pub fn exporter<F>(
    path: impl AsRef<Path>,
    fun: F,
    shapeless: bool,
    metadata: &str,
) -> Result<Exporter>
where
    F: Fn(&[Array], &Kwargs) -> Result<Vec<Array>> + Send + Sync + 'static,
{
    let sink = Sink::File {
        path: path.as_ref().to_path_buf(),
        metadata: metadata.to_string(),
    };
    let e = Exporter::new(sink, Box::new(fun), shapeless);
    // The file exists (with no function) from the start, as with MLX.
    e.write()?;
    Ok(e)
}

/// Exports `fun` traced at `args` and `kwargs` to `callback` (MLX's
/// `mx.export_function` given a callable in place of a file): the callback receives the
/// trace as [`ExportEvent`]s, the same sequence MLX sends for the same program.
///
/// ```
/// use lazulite::export::{export_to_callback, ExportEvent, Kwargs};
/// use lazulite::{add, Array};
/// let mut primitives = vec![];
/// let record = |event: ExportEvent| {
///     if let ExportEvent::Primitive { name, .. } = event {
///         primitives.push(name);
///     }
///     Ok(())
/// };
/// let f = |a: &[Array], _: &Kwargs| Ok(vec![add(&a[0], &a[0])?]);
/// export_to_callback(record, f, &[Array::scalar(1.0f32)], &Kwargs::new(), false)?;
/// assert_eq!(primitives, vec!["Add"]);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn export_to_callback<C, F>(
    callback: C,
    fun: F,
    args: &[Array],
    kwargs: &Kwargs,
    shapeless: bool,
) -> Result<()>
where
    C: FnMut(ExportEvent) -> Result<()>,
    F: Fn(&[Array], &Kwargs) -> Result<Vec<Array>> + Send + Sync,
{
    let traced = FileWriter::default().trace(&fun, args, kwargs, shapeless)?;
    callback::events(&traced).into_iter().try_for_each(callback)
}

/// Exports several signatures of `fun` to `callback` (MLX's C++ `exporter` given a
/// callback): each [`Exporter::call`] sends the events of one trace; a constant is
/// listed only by the first trace that uses it.
///
/// ```
/// use lazulite::export::{exporter_to_callback, ExportEvent, Kwargs};
/// use lazulite::{multiply, Array};
/// use std::sync::{Arc, Mutex};
/// let constants = Arc::new(Mutex::new(vec![]));
/// let seen = constants.clone();
/// let record = move |event: ExportEvent| {
///     if let ExportEvent::Constants(c) = event {
///         seen.lock().unwrap().push(c.len());
///     }
///     Ok(())
/// };
/// let w = Array::from_slice(&[1.0f32, 2.0], &[2])?;
/// let mut e = exporter_to_callback(record, move |a: &[Array], _: &Kwargs| Ok(vec![multiply(&a[0], &w)?]), false);
/// e.call(&[Array::from_slice(&[1.0f32, 1.0], &[2])?], &Kwargs::new())?;
/// e.call(&[Array::scalar(1.0f32)], &Kwargs::new())?;
/// assert_eq!(*constants.lock().unwrap(), vec![1, 0]);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn exporter_to_callback<C, F>(callback: C, fun: F, shapeless: bool) -> Exporter
where
    C: FnMut(ExportEvent) -> Result<()> + Send + 'static,
    F: Fn(&[Array], &Kwargs) -> Result<Vec<Array>> + Send + Sync + 'static,
{
    Exporter::new(Sink::Callback(Box::new(callback)), Box::new(fun), shapeless)
}

/// Where an [`Exporter`] sends its traces.
enum Sink {
    /// A function file, rewritten after each trace.
    File { path: PathBuf, metadata: String },
    /// A callback, told each trace as events.
    Callback(Box<ExportCallback>),
}

/// Exports the traces of one function to one file or one callback; made by [`exporter`]
/// or [`exporter_to_callback`].
///
/// ```
/// use lazulite::export::{exporter, import_function, Kwargs};
/// use lazulite::{square, Array};
/// let path = std::env::temp_dir().join("lazulite_doc_exporter.mlxfn");
/// let mut e = exporter(&path, |a: &[Array], _: &Kwargs| Ok(vec![square(&a[0])?]), false, "")?;
/// e.call(&[Array::scalar(3.0f32)], &Kwargs::new())?; // a trace for 0-d inputs
/// e.call(&[Array::from_slice(&[1.0f32, 2.0], &[2])?], &Kwargs::new())?; // and one for [2]
/// let f = import_function(&path)?;
/// let y = f.call(&[Array::from_slice(&[3.0f32, 4.0], &[2])?], &Kwargs::new())?;
/// assert_eq!(y[0].to_vec::<f32>()?, vec![9.0, 16.0]);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub struct Exporter {
    shapeless: bool,
    sink: Sink,
    fun: Box<ExportedFn>,
    signatures: Vec<Signature>,
    file: FileWriter,
    closed: bool,
}

impl Exporter {
    /// Traces the function at `args` and `kwargs` and adds it to the file. The same
    /// signature (the count of inputs, keyword names, shapes and dtypes) twice is an
    /// error, as is a call after [`Exporter::close`].
    ///
    /// ```
    /// use lazulite::export::{exporter, Kwargs};
    /// use lazulite::{negative, Array};
    /// let path = std::env::temp_dir().join("lazulite_doc_exporter_call.mlxfn");
    /// let mut e = exporter(&path, |a: &[Array], _: &Kwargs| Ok(vec![negative(&a[0])?]), false, "").unwrap();
    /// e.call(&[Array::scalar(1.0f32)], &Kwargs::new()).unwrap();
    /// assert!(e.call(&[Array::scalar(2.0f32)], &Kwargs::new()).is_err());
    /// ```
    pub fn call(&mut self, args: &[Array], kwargs: &Kwargs) -> Result<()> {
        if self.closed {
            return Err(Error::runtime(
                "[export_function] Attempting to write after exporting is closed.",
            ));
        }
        let signature = Signature::of(args, kwargs);
        let shapeless = self.shapeless;
        if self
            .signatures
            .iter()
            .any(|s| s.accepts(args, kwargs, shapeless))
        {
            return Err(Error::runtime(
                "[export_function] Attempting to export a function twice with the same \
                 signature is not allowed.",
            ));
        }
        let traced = self.file.trace(&*self.fun, args, kwargs, shapeless)?;
        self.signatures.push(signature);
        match &mut self.sink {
            Sink::File { .. } => {
                self.file.commit(&traced)?;
                self.write()
            }
            Sink::Callback(callback) => {
                callback::events(&traced).into_iter().try_for_each(callback)
            }
        }
    }

    /// Stops exporting: later calls are errors. The file is complete after every call,
    /// so closing writes nothing.
    ///
    /// ```
    /// use lazulite::export::{exporter, Kwargs};
    /// use lazulite::Array;
    /// let path = std::env::temp_dir().join("lazulite_doc_exporter_close.mlxfn");
    /// let mut e = exporter(&path, |a: &[Array], _: &Kwargs| Ok(a.to_vec()), false, "").unwrap();
    /// e.close();
    /// assert!(e.call(&[Array::scalar(1.0f32)], &Kwargs::new()).is_err());
    /// ```
    pub fn close(&mut self) {
        self.closed = true;
    }

    fn new(sink: Sink, fun: Box<ExportedFn>, shapeless: bool) -> Exporter {
        Exporter {
            shapeless,
            sink,
            fun,
            signatures: vec![],
            file: FileWriter::default(),
            closed: false,
        }
    }

    fn write(&self) -> Result<()> {
        let Sink::File { path, metadata } = &self.sink else {
            return Ok(());
        };
        let bytes = self.file.file_bytes(self.shapeless, metadata);
        crate::io::write_atomic(path, |w| crate::io::put(w, path, &bytes)).map_err(|e| {
            Error::new(
                e.kind(),
                format!(
                    "[export_function] Failed to write {}: {}",
                    path.display(),
                    e.message()
                ),
            )
        })
    }
}

/// The keyword names and the input shapes and dtypes a function was traced at.
///
/// ```
/// use lazulite::export::{export_function, import_function, Kwargs};
/// use lazulite::Array;
/// let path = std::env::temp_dir().join("lazulite_doc_signature.mlxfn");
/// let mut kwargs = Kwargs::new();
/// kwargs.insert("y".into(), Array::scalar(1i32));
/// export_function(&path, |a: &[Array], k: &Kwargs| Ok(vec![a[0].clone(), k["y"].clone()]), &[Array::scalar(1.0f32)], &kwargs).unwrap();
/// let s = &import_function(&path).unwrap().signatures()[0];
/// assert_eq!(s.kwarg_keys, vec!["y".to_string()]);
/// assert_eq!(s.inputs, vec![(vec![], lazulite::DType::Float32), (vec![], lazulite::DType::Int32)]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    /// The keyword inputs' names, in order.
    pub kwarg_keys: Vec<String>,
    /// Shape and dtype of the positional inputs then of the keyword inputs.
    pub inputs: Vec<(Vec<usize>, DType)>,
}

impl Signature {
    fn of(args: &[Array], kwargs: &Kwargs) -> Signature {
        Signature {
            kwarg_keys: kwargs.keys().cloned().collect(),
            inputs: args
                .iter()
                .chain(kwargs.values())
                .map(|a| (a.shape().to_vec(), a.dtype()))
                .collect(),
        }
    }

    /// Whether a call with `args` and `kwargs` runs this function: the same keyword
    /// names and, input by input, the same dtype and shape.
    ///
    /// ```
    /// use lazulite::export::{Kwargs, Signature};
    /// use lazulite::{Array, DType};
    /// let s = Signature { kwarg_keys: vec![], inputs: vec![(vec![2], DType::Float32)] };
    /// assert!(s.matches(&[Array::from_slice(&[1.0f32, 2.0], &[2])?], &Kwargs::new()));
    /// assert!(!s.matches(&[Array::from_slice(&[1i32, 2], &[2])?], &Kwargs::new()));
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn matches(&self, args: &[Array], kwargs: &Kwargs) -> bool {
        self.accepts(args, kwargs, false)
    }

    /// [`Signature::matches`], or with `shapeless` the same dimension counts in place of
    /// the same shapes (how a shapeless function picks its trace, as in MLX).
    ///
    /// ```
    /// use lazulite::export::{Kwargs, Signature};
    /// use lazulite::{Array, DType};
    /// let s = Signature { kwarg_keys: vec![], inputs: vec![(vec![2], DType::Float32)] };
    /// let x = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
    /// assert!(!s.accepts(&[x.clone()], &Kwargs::new(), false));
    /// assert!(s.accepts(&[x], &Kwargs::new(), true));
    /// ```
    pub fn accepts(&self, args: &[Array], kwargs: &Kwargs, shapeless: bool) -> bool {
        self.inputs.len() == args.len() + kwargs.len()
            && kwargs.keys().eq(self.kwarg_keys.iter())
            && args
                .iter()
                .chain(kwargs.values())
                .zip(&self.inputs)
                .all(|(a, (shape, dtype))| {
                    a.dtype() == *dtype
                        && if shapeless {
                            a.ndim() == shape.len()
                        } else {
                            a.shape() == shape.as_slice()
                        }
                })
    }
}
