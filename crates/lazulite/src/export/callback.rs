//! Exports to a callback: a traced function told as MLX's `ExportCallbackInput` events.

use super::write::{Entry, Traced};
use crate::array::Array;
use crate::dtype::DType;
use crate::error::Result;
use crate::primitive::{MlxState, OutputSpec};
use std::collections::HashMap;

/// An array of a traced function as an export callback describes it: its name in the
/// trace (`"A"`, `"B"`, ..., `"Z"`, `"AA"`, ... in the order MLX's export first mentions
/// the arrays), its shape and its dtype.
///
/// ```
/// use lazulite::export::{export_to_callback, ExportEvent, Kwargs};
/// use lazulite::{Array, DType};
/// let mut inputs = vec![];
/// let record = |event: ExportEvent| {
///     if let ExportEvent::Inputs(arrays) = event {
///         inputs = arrays;
///     }
///     Ok(())
/// };
/// let f = |a: &[Array], _: &Kwargs| Ok(vec![a[0].clone()]);
/// export_to_callback(record, f, &[Array::zeros(&[2, 3], DType::Float32)?], &Kwargs::new(), false)?;
/// assert_eq!((inputs[0].name.as_str(), inputs[0].shape.as_slice()), ("A", &[2, 3][..]));
/// # Ok::<(), lazulite::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct TracedArray {
    /// Its name in the trace.
    pub name: String,
    /// Its shape.
    pub shape: Vec<usize>,
    /// Its dtype.
    pub dtype: DType,
}

/// What an export to a callback tells the callback, in MLX's order for each traced
/// function: its inputs, its keyword inputs, its outputs, the constants it uses that
/// earlier traces of the same export did not, then each primitive of its tape in
/// dependency order.
///
/// ```
/// use lazulite::export::{export_to_callback, ExportEvent, Kwargs, MlxState};
/// use lazulite::{transpose, Array, DType};
/// let mut names = vec![];
/// let record = |event: ExportEvent| {
///     if let ExportEvent::Primitive { name, arguments, .. } = event {
///         names.push((name, arguments));
///     }
///     Ok(())
/// };
/// let f = |a: &[Array], _: &Kwargs| Ok(vec![transpose(&a[0], &[1, 0])?]);
/// export_to_callback(record, f, &[Array::zeros(&[2, 3], DType::Float32)?], &Kwargs::new(), false)?;
/// assert_eq!(names, vec![("Transpose".to_string(), vec![MlxState::Ints(vec![1, 0])])]);
/// # Ok::<(), lazulite::Error>(())
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum ExportEvent {
    /// The positional then keyword inputs.
    Inputs(Vec<TracedArray>),
    /// Each keyword with the name of its input.
    KeywordInputs(Vec<(String, String)>),
    /// The outputs.
    Outputs(Vec<TracedArray>),
    /// Arrays the function uses that do not come from its inputs, with their values.
    Constants(Vec<(String, Array)>),
    /// One primitive of the tape: MLX's name for it, its inputs and outputs, and its
    /// state (the fields of MLX's `state()` tuple).
    Primitive {
        /// MLX's name of the primitive (`"Add"`, `"Reshape"`).
        name: String,
        /// Its inputs.
        inputs: Vec<TracedArray>,
        /// Its outputs.
        outputs: Vec<TracedArray>,
        /// Its state.
        arguments: Vec<MlxState>,
    },
}

/// A receiver of export events; an error it returns stops the export and is the
/// export's error.
///
/// ```
/// use lazulite::export::{exporter_to_callback, ExportCallback, ExportEvent, Kwargs};
/// use lazulite::{exp, Array};
/// use std::sync::{Arc, Mutex};
/// let names = Arc::new(Mutex::new(Vec::new()));
/// let seen = names.clone();
/// let callback: Box<ExportCallback> = Box::new(move |event: ExportEvent| -> lazulite::Result<()> {
///     if let ExportEvent::Primitive { name, .. } = event {
///         seen.lock().unwrap().push(name);
///     }
///     Ok(())
/// });
/// let f = |a: &[Array], _: &Kwargs| Ok(vec![exp(&a[0])?]);
/// exporter_to_callback(callback, f, false).call(&[Array::scalar(1.0f32)], &Kwargs::new())?;
/// assert_eq!(*names.lock().unwrap(), ["Exp"]);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub type ExportCallback = dyn FnMut(ExportEvent) -> Result<()> + Send;

/// MLX's `NodeNamer`: `A`, ..., `Z`, `AA`, `AB`, ... in the order of first mention.
#[derive(Default)]
struct Namer {
    names: HashMap<u64, String>,
}

impl Namer {
    fn name(&mut self, id: u64) -> String {
        let next = self.names.len() + 1;
        self.names
            .entry(id)
            .or_insert_with(|| {
                let mut letters = vec![];
                let mut n = next;
                while n > 0 {
                    letters.push(b'A' + ((n - 1) % 26) as u8);
                    n = (n - 1) / 26;
                }
                letters.iter().rev().map(|&c| c as char).collect()
            })
            .clone()
    }
}

/// The events of one traced function, in the order MLX sends them.
pub(crate) fn events(traced: &Traced) -> Vec<ExportEvent> {
    let mut specs: HashMap<u64, OutputSpec> = traced.inputs.iter().cloned().collect();
    for entry in &traced.entries {
        match entry {
            Entry::Input(_) => {}
            Entry::Constant { id, array, .. } => {
                let spec = OutputSpec {
                    shape: array.shape().to_vec(),
                    dtype: array.dtype(),
                };
                specs.insert(*id, spec);
            }
            Entry::Node {
                outputs, specs: s, ..
            } => {
                specs.extend(outputs.iter().copied().zip(s.iter().cloned()));
            }
        }
    }
    let mut namer = Namer::default();
    let mut described = |ids: &[u64]| -> Vec<TracedArray> {
        ids.iter()
            .map(|id| TracedArray {
                name: namer.name(*id),
                shape: specs[id].shape.clone(),
                dtype: specs[id].dtype,
            })
            .collect()
    };
    let input_ids: Vec<u64> = traced.inputs.iter().map(|(id, _)| *id).collect();
    let mut events = vec![ExportEvent::Inputs(described(&input_ids))];
    let keyword_ids = &input_ids[input_ids.len() - traced.kwarg_keys.len()..];
    let keywords = traced
        .kwarg_keys
        .iter()
        .zip(described(keyword_ids))
        .map(|(k, a)| (k.clone(), a.name))
        .collect();
    events.push(ExportEvent::KeywordInputs(keywords));
    events.push(ExportEvent::Outputs(described(&traced.outputs)));
    let constants: Vec<(u64, Array)> = traced
        .entries
        .iter()
        .filter_map(|e| match e {
            Entry::Constant {
                id,
                array,
                first: true,
            } => Some((*id, array.clone())),
            _ => None,
        })
        .collect();
    let constants = constants
        .into_iter()
        .map(|(id, array)| (described(&[id]).remove(0).name, array))
        .collect();
    events.push(ExportEvent::Constants(constants));
    for entry in &traced.entries {
        if let Entry::Node {
            outputs,
            inputs,
            name,
            state,
            ..
        } = entry
        {
            events.push(ExportEvent::Primitive {
                name: name.to_string(),
                inputs: described(inputs),
                outputs: described(outputs),
                arguments: state.clone(),
            });
        }
    }
    events
}
