//! Reading MLX function files into callable lazulite functions.

use super::format::{read_header, Reader};
use super::mlx_ops::{lookup, Interpret, State, SHAPE_FIXED};
use super::{Kwargs, Signature};
use crate::array::Array;
use crate::error::{Error, Result};
use crate::io::{lazy_array, Layout, Mapping, Storage};
use crate::primitive::{MlxState, OutputSpec};
use crate::shape::shape_text;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

/// One step of an imported tape.
struct Step {
    name: &'static str,
    interpret: Interpret,
    state: Vec<MlxState>,
    inputs: Vec<u64>,
    outputs: Vec<(u64, OutputSpec)>,
}

/// One traced function of a file.
struct Function {
    signature: Signature,
    input_ids: Vec<u64>,
    output_ids: Vec<u64>,
    steps: Vec<Step>,
    /// The constants its tape uses (lazily read from the file).
    constants: HashMap<u64, Array>,
}

/// The functions of an MLX function file, called like MLX's imported functions: the
/// trace whose signature matches the inputs runs. Made by [`import_function`].
///
/// ```
/// use lazulite::export::{export_function, import_function, Kwargs};
/// use lazulite::{add, Array};
/// let path = std::env::temp_dir().join("lazulite_doc_imported_function.mlxfn");
/// let f = |a: &[Array], _: &Kwargs| Ok(vec![add(&a[0], &a[1])?]);
/// export_function(&path, f, &[Array::scalar(1i32), Array::scalar(2i32)], &Kwargs::new())?;
/// let imported = import_function(&path)?;
/// let out = imported.call(&[Array::scalar(3i32), Array::scalar(4i32)], &Kwargs::new())?;
/// assert_eq!(out[0].item::<i32>()?, 7);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub struct ImportedFunction {
    functions: Vec<Function>,
    metadata: String,
    shapeless: bool,
}

/// Reads the function file `path` (written by MLX's or lazulite's `export_function`).
/// Constants are read from the file when first evaluated.
///
/// ```
/// use lazulite::export::{export_function, import_function, Kwargs};
/// use lazulite::{exp, Array};
/// let path = std::env::temp_dir().join("lazulite_doc_import.mlxfn");
/// export_function(&path, |a: &[Array], _: &Kwargs| Ok(vec![exp(&a[0])?]), &[Array::scalar(0.0f32)], &Kwargs::new()).unwrap();
/// let f = import_function(&path).unwrap();
/// assert_eq!(f.call(&[Array::scalar(0.0f32)], &Kwargs::new()).unwrap()[0].item::<f32>().unwrap(), 1.0);
/// assert!(import_function(std::env::temp_dir().join("no_such_file.mlxfn")).is_err());
/// ```
pub fn import_function(path: impl AsRef<Path>) -> Result<ImportedFunction> {
    parse(Mapping::open(path.as_ref())?)
}

/// [`import_function`] from the bytes of a file already in memory.
///
/// ```
/// let err = lazulite::export::import_function_bytes(vec![1, 2, 3]).err().unwrap();
/// assert!(err.message().contains("truncated"));
/// ```
pub fn import_function_bytes(bytes: Vec<u8>) -> Result<ImportedFunction> {
    parse(Mapping::owned(bytes))
}

fn parse(file: Arc<Mapping>) -> Result<ImportedFunction> {
    let mut r = Reader::new(file);
    let header = read_header(&mut r)?;
    let mut constants: HashMap<u64, Array> = HashMap::new();
    let mut functions = Vec::new();
    for _ in 0..header.count {
        functions.push(parse_function(&mut r, &mut constants)?);
    }
    Ok(ImportedFunction {
        functions,
        metadata: header.metadata,
        shapeless: header.shapeless,
    })
}

/// Checks that `id` names an array defined earlier in the tape.
fn known(r: &Reader, defined: &HashMap<u64, OutputSpec>, id: u64) -> Result<OutputSpec> {
    defined
        .get(&id)
        .cloned()
        .ok_or_else(|| r.error(format!("array {id} is used before it is defined")))
}

fn parse_function(r: &mut Reader, file_constants: &mut HashMap<u64, Array>) -> Result<Function> {
    let kwarg_keys = r.strs("keyword names")?;
    let input_ids = r.ids("input ids")?;
    let n = r.len(13, "inputs")?;
    let mut inputs = Vec::with_capacity(n);
    for _ in 0..n {
        let shape = r.shape("input shape")?;
        inputs.push((shape, r.dtype("input dtype")?));
    }
    if n != input_ids.len() || kwarg_keys.len() > n {
        return Err(r.error("the counts of inputs, input ids and keyword names disagree"));
    }
    let output_ids = r.ids("output ids")?;
    // Each tape entry takes at least 10 bytes.
    let entries = r.len(10, "tape")?;
    let mut defined: HashMap<u64, OutputSpec> = input_ids
        .iter()
        .zip(&inputs)
        .map(|(&id, (shape, dtype))| {
            let spec = OutputSpec {
                shape: shape.clone(),
                dtype: *dtype,
            };
            (id, spec)
        })
        .collect();
    let mut steps = Vec::new();
    let mut constants = HashMap::new();
    for _ in 0..entries {
        let id = r.u64("tape id")?;
        if r.bool("has primitive")? {
            let step_inputs = r.ids("primitive inputs")?;
            for &i in &step_inputs {
                known(r, &defined, i)?;
            }
            r.stream()?;
            let name = r.str("primitive name")?;
            let Some((name, fields, interpret)) = lookup(&name) else {
                return Err(Error::value(format!(
                    "[import_function] Unable to deserialize primitive {name} (not supported \
                     by lazulite yet)."
                )));
            };
            let state = r.state(fields)?;
            let siblings = r.u64("sibling count")?;
            let outputs = if siblings == 0 {
                let shape = r.shape("output shape")?;
                let dtype = r.dtype("output dtype")?;
                vec![(id, OutputSpec { shape, dtype })]
            } else {
                let ids = r.ids("output ids")?;
                let n = r.len(12, "output shapes")?;
                let shapes = (0..n)
                    .map(|_| r.shape("output shape"))
                    .collect::<Result<Vec<_>>>()?;
                let n = r.len(5, "output dtypes")?;
                let dtypes = (0..n)
                    .map(|_| r.dtype("output dtype"))
                    .collect::<Result<Vec<_>>>()?;
                // `siblings` counts the other outputs.
                if ids.len() as u64 != siblings.saturating_add(1)
                    || shapes.len() != ids.len()
                    || dtypes.len() != ids.len()
                {
                    return Err(r.error("the outputs of a primitive disagree in number"));
                }
                ids.into_iter()
                    .zip(shapes.into_iter().zip(dtypes))
                    .map(|(i, (shape, dtype))| (i, OutputSpec { shape, dtype }))
                    .collect()
            };
            for (i, spec) in &outputs {
                // Checked now so that a recorded output never asks for an impossible size.
                crate::shape::checked_size(&spec.shape)?;
                defined.insert(*i, spec.clone());
            }
            steps.push(Step {
                name,
                interpret,
                state,
                inputs: step_inputs,
                outputs,
            });
        } else if r.bool("is constant")? {
            let array = match file_constants.get(&id) {
                Some(a) => a.clone(),
                None => {
                    let shape = r.shape("constant shape")?;
                    let dtype = r.dtype("constant dtype")?;
                    let bytes = crate::io::byte_size(r.file(), "import_function", &shape, dtype)?;
                    let range = r.take(bytes, "constant data")?;
                    let file = r.file().clone();
                    let name = format!("constant {id}");
                    let a = lazy_array(
                        &file,
                        &name,
                        Storage::Raw(range),
                        Layout::little_endian(),
                        shape,
                        dtype,
                    );
                    file_constants.insert(id, a.clone());
                    a
                }
            };
            let spec = OutputSpec {
                shape: array.shape().to_vec(),
                dtype: array.dtype(),
            };
            defined.insert(id, spec);
            constants.insert(id, array);
        } else if !input_ids.contains(&id) {
            return Err(r.error(format!(
                "tape entry {id} is neither computed, constant nor an input"
            )));
        }
    }
    for &id in &output_ids {
        known(r, &defined, id)?;
    }
    Ok(Function {
        signature: Signature { kwarg_keys, inputs },
        input_ids,
        output_ids,
        steps,
        constants,
    })
}

impl ImportedFunction {
    /// Runs the trace whose signature matches `args` and `kwargs` (same count, keyword
    /// names, shapes and dtypes; for a shapeless file the same dimension counts in place
    /// of the shapes), returning its outputs as lazy arrays.
    ///
    /// ```
    /// use lazulite::export::{export_function, import_function, Kwargs};
    /// use lazulite::{sin, Array};
    /// let path = std::env::temp_dir().join("lazulite_doc_call.mlxfn");
    /// export_function(&path, |a: &[Array], _: &Kwargs| Ok(vec![sin(&a[0])?]), &[Array::scalar(0.0f32)], &Kwargs::new()).unwrap();
    /// let f = import_function(&path).unwrap();
    /// let err = f.call(&[Array::scalar(0i32)], &Kwargs::new()).unwrap_err();
    /// assert!(err.message().contains("No imported function found"));
    /// ```
    pub fn call(&self, args: &[Array], kwargs: &Kwargs) -> Result<Vec<Array>> {
        let shapeless = self.shapeless;
        let Some(f) = self
            .functions
            .iter()
            .find(|f| f.signature.accepts(args, kwargs, shapeless))
        else {
            return Err(self.no_match(args, kwargs));
        };
        let mut values: HashMap<u64, Array> = f.constants.clone();
        for (&id, a) in f.input_ids.iter().zip(args.iter().chain(kwargs.values())) {
            values.insert(id, a.clone());
        }
        for step in &f.steps {
            if shapeless && SHAPE_FIXED.contains(&step.name) {
                // MLX replays a shapeless file by inferring every shape, and these cannot.
                return Err(Error::value(format!(
                    "[Primitive::output_shapes] {} cannot infer output shapes.",
                    step.name
                )));
            }
            let inputs: Vec<Array> = step.inputs.iter().map(|i| values[i].clone()).collect();
            let specs: Vec<OutputSpec> = step.outputs.iter().map(|(_, s)| s.clone()).collect();
            let state = State {
                name: step.name,
                fields: &step.state,
            };
            let results = (step.interpret)(&inputs, &state, &specs)?;
            if results.len() != specs.len() {
                return Err(Error::value(format!(
                    "[import_function] {} gave {} outputs where the file records {}.",
                    step.name,
                    results.len(),
                    specs.len()
                )));
            }
            for (a, (id, spec)) in results.into_iter().zip(&step.outputs) {
                // A shapeless function's shapes follow its inputs; the file's are examples.
                if !shapeless && a.shape() != spec.shape.as_slice() {
                    return Err(Error::value(format!(
                        "[import_function] {} gave shape {:?} where the file records {:?}.",
                        step.name,
                        a.shape(),
                        spec.shape
                    )));
                }
                // Where MLX's type rules differ from lazulite's, the file's dtype wins.
                let a = crate::ops::astype(&a, spec.dtype)?;
                values.insert(*id, a);
            }
        }
        Ok(f.output_ids.iter().map(|i| values[i].clone()).collect())
    }

    /// The signatures of the traces in the file, in file order.
    ///
    /// ```
    /// use lazulite::export::{exporter, import_function, Kwargs};
    /// use lazulite::Array;
    /// let path = std::env::temp_dir().join("lazulite_doc_signatures.mlxfn");
    /// let mut e = exporter(&path, |a: &[Array], _: &Kwargs| Ok(a.to_vec()), false, "").unwrap();
    /// e.call(&[Array::scalar(1.0f32)], &Kwargs::new()).unwrap();
    /// e.call(&[Array::scalar(1i32), Array::scalar(2i32)], &Kwargs::new()).unwrap();
    /// assert_eq!(import_function(&path).unwrap().signatures()[1].inputs.len(), 2);
    /// ```
    pub fn signatures(&self) -> Vec<Signature> {
        self.functions.iter().map(|f| f.signature.clone()).collect()
    }

    /// The metadata string stored with the functions (empty if none).
    ///
    /// ```
    /// use lazulite::export::{exporter, import_function, Kwargs};
    /// use lazulite::Array;
    /// let path = std::env::temp_dir().join("lazulite_doc_metadata.mlxfn");
    /// exporter(&path, |a: &[Array], _: &Kwargs| Ok(a.to_vec()), false, "v1").unwrap();
    /// assert_eq!(import_function(&path).unwrap().metadata(), "v1");
    /// ```
    pub fn metadata(&self) -> &str {
        &self.metadata
    }

    fn no_match(&self, args: &[Array], kwargs: &Kwargs) -> Error {
        let mut msg = String::from(
            "[import_function::call] No imported function found which matches the given \
             positional and keyword arguments. Possible functions include:\n",
        );
        for (n, f) in self.functions.iter().enumerate() {
            let keys = &f.signature.kwarg_keys;
            let npos = f.signature.inputs.len() - keys.len();
            let _ = writeln!(
                msg,
                " {}. Function with {npos} positional inputs and {} keyword inputs:",
                n + 1,
                keys.len()
            );
            for (j, (shape, dtype)) in f.signature.inputs.iter().enumerate() {
                let _ = if j < npos {
                    writeln!(msg, "   {}: {} {dtype}", j + 1, shape_text(shape))
                } else {
                    writeln!(
                        msg,
                        "   \"{}\": {} {dtype}",
                        keys[j - npos],
                        shape_text(shape)
                    )
                };
            }
        }
        let _ = writeln!(
            msg,
            "\nCalled with {} positional inputs and {} keyword inputs:",
            args.len(),
            kwargs.len()
        );
        for (i, a) in args.iter().enumerate() {
            let _ = writeln!(msg, "  {}: {} {}", i + 1, shape_text(a.shape()), a.dtype());
        }
        for (k, a) in kwargs {
            let _ = writeln!(msg, "  \"{k}\": {} {}", shape_text(a.shape()), a.dtype());
        }
        Error::value(msg)
    }
}
