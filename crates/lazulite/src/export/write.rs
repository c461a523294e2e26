//! Writing traced functions as MLX tapes.

use super::format::{write_header, Writer};
use crate::array::{Array, Node};
use crate::backend::Tensor;
use crate::error::{Error, Result};
use crate::io::{evaluated, le_bytes};
use crate::primitive::{no_rule, Export, MlxInput, MlxState, OutputSpec, Primitive};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// Stands for an input while a function is traced for export: it has no value.
pub(crate) struct ExportInput;

impl Primitive for ExportInput {
    fn name(&self) -> &'static str {
        "export_input"
    }

    fn eval(&self, _: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        Err(Error::value(
            "[export_function] Attempting to eval an array during function transformations \
             like compile or export is not allowed (the value depends on the exported \
             function's inputs).",
        ))
    }

    // A placeholder for an input while a function is exported: replaced before any transform.
    fn vjp(&self, _: &[Array], _: &[Array], _: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        Err(no_rule("vjp", self.name()))
    }

    fn jvp(&self, _: &[Array], _: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        Err(no_rule("jvp", self.name()))
    }

    fn vmap(&self, _: &[Array], _: &[Option<usize>]) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        Err(no_rule("vmap", self.name()))
    }
}

/// A node's address and an output index; the arrays behind the keys in use are held, so
/// that no address is reused meanwhile. (An address as `usize` keeps the writer `Send`.)
type Key = (usize, usize);

fn key(a: &Array) -> Key {
    (Arc::as_ptr(&a.node) as usize, a.index)
}

/// The ids and constants shared by the functions of one file (or of one export to a
/// callback).
#[derive(Default)]
pub(crate) struct FileWriter {
    /// The functions written so far, each as its bytes.
    pub body: Writer,
    pub count: usize,
    next_id: u64,
    /// Constants already in the file (written once, referenced after), kept alive so
    /// that their nodes are not reused.
    constants: HashMap<Key, (u64, Array)>,
}

/// A function being traced, borrowed for the trace.
type Traceable<'a> = dyn Fn(&[Array], &super::Kwargs) -> Result<Vec<Array>> + 'a;

/// One entry of a function's tape, in MLX's order: the nodes an entry uses come before it.
pub(crate) enum Entry {
    /// An input of the function.
    Input(u64),
    /// A value that does not come from the inputs; `first` when this function is the
    /// first of the file to use it (the file holds its data there).
    Constant { id: u64, array: Array, first: bool },
    /// One MLX primitive.
    Node {
        outputs: Vec<u64>,
        inputs: Vec<u64>,
        name: &'static str,
        state: Vec<MlxState>,
        specs: Vec<OutputSpec>,
    },
}

/// One traced function as MLX's tape: what a file stores and what a callback is told.
pub(crate) struct Traced {
    pub kwarg_keys: Vec<String>,
    pub inputs: Vec<(u64, OutputSpec)>,
    pub outputs: Vec<u64>,
    pub entries: Vec<Entry>,
}

/// One function's tape while it is being recorded.
struct Tape<'a> {
    file: &'a mut FileWriter,
    /// The addresses of the nodes computed from the function's inputs (the stand-ins
    /// first).
    dependent: HashSet<usize>,
    ids: HashMap<Key, u64>,
    /// Arrays whose ids are in `ids`, kept alive for the pointers to stay unique.
    held: Vec<Array>,
    entries: Vec<Entry>,
}

/// MLX primitives whose `is_equivalent` is false, so that MLX's simplification never
/// merges two of them.
const NEVER_EQUIVALENT: [&str; 13] = [
    "Cholesky",
    "Custom",
    "CustomKernel",
    "CustomTransforms",
    "Depends",
    "Expm1",
    "Inverse",
    "Load",
    "Log1p",
    "LUF",
    "QRF",
    "SegmentedMM",
    "SVD",
];

impl FileWriter {
    fn fresh_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Traces `f` at `args` then the values of `kwargs` (in key order) and returns its
    /// tape. `shapeless`: ops record their shape-generic forms (also those that stand for
    /// a lazulite node written as a composition), for a replay at other shapes. The
    /// function counts as one of the file's only when [`FileWriter::commit`] takes it.
    pub fn trace(
        &mut self,
        f: &Traceable<'_>,
        args: &[Array],
        kwargs: &super::Kwargs,
        shapeless: bool,
    ) -> Result<Traced> {
        let next_id = self.next_id;
        let constants = self.constants.len();
        let traced = crate::ops::trace::with_shapeless_trace(shapeless, || {
            crate::ops::trace::with_export_trace(|| self.trace_unchecked(f, args, kwargs))
        });
        if traced.is_err() {
            // Nothing of a failed function stays in the file.
            self.next_id = next_id;
            if self.constants.len() != constants {
                self.constants.retain(|_, (id, _)| *id <= next_id);
            }
        }
        traced
    }

    /// Appends a traced function to the file's bytes.
    pub fn commit(&mut self, traced: &Traced) -> Result<()> {
        let bytes = traced.bytes()?;
        self.body.bytes.extend(bytes);
        self.count += 1;
        Ok(())
    }

    fn trace_unchecked(
        &mut self,
        f: &Traceable<'_>,
        args: &[Array],
        kwargs: &super::Kwargs,
    ) -> Result<Traced> {
        let examples: Vec<&Array> = args.iter().chain(kwargs.values()).collect();
        for a in &examples {
            check_shape(a.shape())?;
        }
        let stand_ins: Vec<Array> = examples
            .iter()
            .map(|a| Array::from_op(ExportInput, vec![], a.shape().to_vec(), a.dtype()))
            .collect();
        let (pos, kw) = stand_ins.split_at(args.len());
        let kw_map: BTreeMap<String, Array> =
            kwargs.keys().cloned().zip(kw.iter().cloned()).collect();
        let outputs = f(pos, &kw_map)?;

        let next_id = self.next_id;
        let mut tape = Tape {
            file: self,
            dependent: stand_ins.iter().map(|a| key(a).0).collect(),
            ids: HashMap::new(),
            held: vec![],
            entries: vec![],
        };
        let inputs: Vec<(u64, OutputSpec)> = stand_ins
            .iter()
            .map(|a| {
                let id = tape.file.fresh_id();
                tape.ids.insert(key(a), id);
                tape.held.push(a.clone());
                tape.entries.push(Entry::Input(id));
                let spec = OutputSpec {
                    shape: a.shape().to_vec(),
                    dtype: a.dtype(),
                };
                (id, spec)
            })
            .collect();
        tape.assign(&outputs)?;
        let outputs: Vec<u64> = outputs.iter().map(|a| tape.ids[&key(a)]).collect();
        let mut traced = Traced {
            kwarg_keys: kwargs.keys().cloned().collect(),
            inputs,
            outputs,
            entries: std::mem::take(&mut tape.entries),
        };
        traced.simplify(&mut self.constants)?;
        self.next_id = traced.renumber(next_id, &mut self.constants);
        Ok(traced)
    }

    /// The whole file: the header then the functions.
    pub fn file_bytes(&self, shapeless: bool, metadata: &str) -> Vec<u8> {
        let mut w = Writer::default();
        write_header(&mut w, self.count, shapeless, metadata);
        w.bytes.extend(&self.body.bytes);
        w.bytes
    }
}

impl Traced {
    /// MLX's simplification of a traced tape (`compile_simplify`, which its export runs):
    /// equal scalar constants become one, `Copy` and `StopGradient` are dropped, and a
    /// primitive equal to an earlier one (same name, state, inputs and output types) is
    /// replaced by it unless it is an output. One pass suffices: the tape is in
    /// dependency order.
    fn simplify(&mut self, file_constants: &mut HashMap<Key, (u64, Array)>) -> Result<()> {
        let outputs: HashSet<u64> = self.outputs.iter().copied().collect();
        let mut replaced: HashMap<u64, u64> = HashMap::new();
        let mut scalars: HashMap<(Vec<u8>, crate::dtype::DType), u64> = HashMap::new();
        let mut nodes: HashMap<String, Vec<u64>> = HashMap::new();
        let mut kept = Vec::with_capacity(self.entries.len());
        for mut entry in std::mem::take(&mut self.entries) {
            match &mut entry {
                Entry::Input(_) => {}
                Entry::Constant { id, array, first } if array.ndim() == 0 => {
                    let tensor = evaluated(&[array])?.remove(0);
                    let value = (le_bytes(&tensor).into_owned(), array.dtype());
                    if let Some(&same) = scalars.get(&value) {
                        replaced.insert(*id, same);
                        if *first {
                            // Later functions of the file refer to the value kept.
                            file_constants.insert(key(array), (same, array.clone()));
                        }
                        continue;
                    }
                    scalars.insert(value, *id);
                }
                Entry::Constant { .. } => {}
                Entry::Node {
                    outputs: outs,
                    inputs,
                    name,
                    state,
                    specs,
                } => {
                    for i in inputs.iter_mut() {
                        *i = replaced.get(i).copied().unwrap_or(*i);
                    }
                    if matches!(*name, "Copy" | "StopGradient") {
                        replaced.insert(outs[0], inputs[0]);
                        continue;
                    }
                    if !NEVER_EQUIVALENT.contains(name) {
                        // With the outputs' shapes and dtypes: MLX's `Arange` compares
                        // only its range, and an int and a float `arange` are not one.
                        let signature = format!("{name} {state:?} {inputs:?} {specs:?}");
                        match nodes.get(&signature) {
                            Some(same) if !outs.iter().any(|o| outputs.contains(o)) => {
                                for (o, s) in outs.iter().zip(same) {
                                    replaced.insert(*o, *s);
                                }
                                continue;
                            }
                            Some(_) => {}
                            None => {
                                nodes.insert(signature, outs.clone());
                            }
                        }
                    }
                }
            }
            kept.push(entry);
        }
        for o in &mut self.outputs {
            *o = replaced.get(o).copied().unwrap_or(*o);
        }
        // A value read while walking towards a node then recorded as a value itself (an
        // operation MLX has no primitive for) is used by nothing: it stays out.
        let mut used: HashSet<u64> = self.outputs.iter().copied().collect();
        for entry in &kept {
            if let Entry::Node { inputs, .. } = entry {
                used.extend(inputs.iter().copied());
            }
        }
        kept.retain(|entry| match entry {
            Entry::Constant { id, array, first } if !used.contains(id) => {
                if *first {
                    file_constants.remove(&key(array));
                }
                false
            }
            _ => true,
        });
        self.entries = kept;
        Ok(())
    }

    /// Numbers the ids this function introduced `after + 1`, `after + 2`, ... in tape
    /// order (ids of earlier functions' constants stay), so that a file does not depend
    /// on which ids simplification freed. Returns the last id given.
    fn renumber(&mut self, after: u64, file_constants: &mut HashMap<Key, (u64, Array)>) -> u64 {
        let mut new_ids: HashMap<u64, u64> = HashMap::new();
        let mut last = after;
        let mut number = |id: &mut u64| {
            if *id > after {
                *id = *new_ids.entry(*id).or_insert_with(|| {
                    last += 1;
                    last
                });
            }
        };
        for (id, _) in &mut self.inputs {
            number(id);
        }
        for entry in &mut self.entries {
            match entry {
                Entry::Input(id) | Entry::Constant { id, .. } => number(id),
                Entry::Node {
                    outputs, inputs, ..
                } => {
                    inputs.iter_mut().for_each(&mut number);
                    outputs.iter_mut().for_each(&mut number);
                }
            }
        }
        self.outputs.iter_mut().for_each(&mut number);
        for (id, _) in file_constants.values_mut() {
            if let Some(&new) = new_ids.get(id) {
                *id = new;
            }
        }
        last
    }

    /// The function as MLX's file stores it.
    fn bytes(&self) -> Result<Vec<u8>> {
        let mut w = Writer::default();
        w.strs(&self.kwarg_keys);
        let input_ids: Vec<u64> = self.inputs.iter().map(|(id, _)| *id).collect();
        w.ids(&input_ids);
        w.u64(self.inputs.len() as u64);
        for (_, spec) in &self.inputs {
            w.shape(&spec.shape);
            w.dtype(spec.dtype);
        }
        w.ids(&self.outputs);
        w.u64(self.entries.len() as u64);
        for entry in &self.entries {
            match entry {
                Entry::Input(id) => {
                    w.u64(*id);
                    w.bool(false);
                    w.bool(false);
                }
                Entry::Constant { id, array, first } => {
                    w.u64(*id);
                    w.bool(false);
                    w.bool(true);
                    if *first {
                        let tensor = evaluated(&[array])?.remove(0);
                        w.shape(array.shape());
                        w.dtype(array.dtype());
                        w.bytes.extend(le_bytes(&tensor).iter());
                    }
                }
                Entry::Node {
                    outputs,
                    inputs,
                    name,
                    state,
                    specs,
                } => {
                    w.u64(outputs[0]);
                    w.bool(true);
                    w.ids(inputs);
                    w.stream();
                    w.str(name);
                    w.state(state);
                    if specs.len() == 1 {
                        w.u64(0);
                        w.shape(&specs[0].shape);
                        w.dtype(specs[0].dtype);
                    } else {
                        // MLX counts the siblings: the outputs besides this one.
                        w.u64(specs.len() as u64 - 1);
                        w.ids(outputs);
                        w.u64(specs.len() as u64);
                        specs.iter().for_each(|s| w.shape(&s.shape));
                        w.u64(specs.len() as u64);
                        specs.iter().for_each(|s| w.dtype(s.dtype));
                    }
                }
            }
        }
        Ok(w.bytes)
    }
}

impl Tape<'_> {
    /// Gives ids to `outputs` and everything they depend on that has none yet, recording
    /// their tape entries in dependency order. As in MLX, an array that does not depend
    /// on the inputs is recorded as the operations that compute it down to the values
    /// already computed (constants); only an operation MLX has no primitive for is
    /// recorded as its value.
    fn assign(&mut self, outputs: &[Array]) -> Result<()> {
        for (a, inputs) in topological(outputs, &self.ids) {
            if self.ids.contains_key(&key(&a)) {
                continue;
            }
            let Some(inputs) = inputs else {
                self.constant(&a)?;
                continue;
            };
            let primitive = a.node.lock().op.as_ref().map(|op| op.primitive.clone());
            let primitive = primitive.expect("a node with inputs has an op");
            let depends = inputs.iter().any(|x| self.dependent.contains(&key(x).0));
            if depends {
                self.dependent.insert(key(&a).0);
                self.node(&a, primitive, &inputs)?;
            } else if !self.node(&a, primitive, &inputs)? {
                self.constant(&a)?;
            }
        }
        // An output that is another output of a node recorded as a value.
        for a in outputs {
            if !self.ids.contains_key(&key(a)) {
                self.constant(a)?;
            }
        }
        Ok(())
    }

    /// Records the node of `a` (all its outputs). False, with nothing recorded, when the
    /// node has no MLX form and does not depend on the inputs (it is then a constant).
    fn node(&mut self, a: &Array, primitive: Arc<dyn Primitive>, inputs: &[Array]) -> Result<bool> {
        let in_specs: Vec<OutputSpec> = inputs
            .iter()
            .map(|x| OutputSpec {
                shape: x.shape().to_vec(),
                dtype: x.dtype(),
            })
            .collect();
        let out_specs = a.node.outputs().to_vec();
        let depends = self.dependent.contains(&key(a).0);
        let export = match primitive.export(&in_specs, &out_specs) {
            Ok(export) => export,
            Err(_) if !depends => return Ok(false),
            Err(e) => return Err(e),
        };
        // An input that is another output of a node recorded as a value.
        for x in inputs {
            if !self.ids.contains_key(&key(x)) {
                self.constant(x)?;
            }
        }
        let siblings: Vec<Array> = (0..out_specs.len())
            .map(|index| Array {
                node: a.node.clone(),
                index,
            })
            .collect();
        match export {
            Export::Composed(f) => {
                let results = f(inputs)?;
                self.assign(&results)?;
                for (s, r) in siblings.iter().zip(&results) {
                    let id = self.ids[&key(r)];
                    self.ids.insert(key(s), id);
                    self.held.push(s.clone());
                }
                self.held.extend(results);
            }
            Export::Nodes(nodes) => {
                let mut node_ids: Vec<Vec<u64>> = Vec::with_capacity(nodes.len());
                let last = nodes.len().saturating_sub(1);
                for (n, node) in nodes.into_iter().enumerate() {
                    let ids = node
                        .inputs
                        .iter()
                        .map(|input| match input {
                            MlxInput::Input(i) => self.ids[&key(&inputs[*i])],
                            MlxInput::Node(j) => node_ids[*j][0],
                        })
                        .collect();
                    let outs: Vec<u64> = if n == last {
                        siblings
                            .iter()
                            .map(|s| {
                                let id = self.file.fresh_id();
                                self.ids.insert(key(s), id);
                                self.held.push(s.clone());
                                id
                            })
                            .collect()
                    } else {
                        node.outputs.iter().map(|_| self.file.fresh_id()).collect()
                    };
                    for spec in &node.outputs {
                        check_shape(&spec.shape)?;
                    }
                    node_ids.push(outs.clone());
                    self.entries.push(Entry::Node {
                        outputs: outs,
                        inputs: ids,
                        name: node.name,
                        state: node.state,
                        specs: node.outputs,
                    });
                }
            }
        }
        Ok(true)
    }

    /// Records `a`'s value as a constant (its data the first time in the file).
    fn constant(&mut self, a: &Array) -> Result<()> {
        check_shape(a.shape())?;
        if let Some((id, _)) = self.file.constants.get(&key(a)) {
            let id = *id;
            self.ids.insert(key(a), id);
            self.entries.push(Entry::Constant {
                id,
                array: a.clone(),
                first: false,
            });
            return Ok(());
        }
        // Computed now, so that an error in it is the export's.
        evaluated(&[a])?;
        let id = self.file.fresh_id();
        self.file.constants.insert(key(a), (id, a.clone()));
        self.ids.insert(key(a), id);
        self.entries.push(Entry::Constant {
            id,
            array: a.clone(),
            first: true,
        });
        Ok(())
    }
}

/// The arrays `outputs` depend on that have no id in `known`, each with its node's
/// inputs (`None` for a computed value), inputs before the nodes that use them: MLX's
/// depth-first order, inputs in order (an iterative walk that stops at computed arrays).
type Walk = Vec<(Array, Option<Vec<Array>>)>;

fn topological(outputs: &[Array], known: &HashMap<Key, u64>) -> Walk {
    let mut order = Vec::new();
    let mut seen: HashSet<*const Node> = HashSet::new();
    let mut stack: Vec<(Array, Option<Option<Vec<Array>>>)> =
        outputs.iter().rev().map(|a| (a.clone(), None)).collect();
    while let Some((a, expanded)) = stack.pop() {
        if let Some(inputs) = expanded {
            order.push((a, inputs));
            continue;
        }
        if known.contains_key(&key(&a)) || !seen.insert(Arc::as_ptr(&a.node)) {
            continue;
        }
        let op_inputs = a.node.lock().op.as_ref().map(|op| {
            let used = op.primitive.export_inputs(op.inputs.len());
            op.inputs[..used.min(op.inputs.len())].to_vec()
        });
        let Some(inputs) = op_inputs else {
            order.push((a, None));
            continue;
        };
        let pending: Vec<Array> = inputs
            .iter()
            .rev()
            .filter(|x| !known.contains_key(&key(x)) && !seen.contains(&Arc::as_ptr(&x.node)))
            .cloned()
            .collect();
        stack.push((a, Some(Some(inputs))));
        stack.extend(pending.into_iter().map(|x| (x, None)));
    }
    order
}

/// MLX stores sizes as 32-bit `int`s.
fn check_shape(shape: &[usize]) -> Result<()> {
    if shape.iter().all(|&d| i32::try_from(d).is_ok()) {
        Ok(())
    } else {
        Err(Error::value(format!(
            "[export_function] The shape {shape:?} has a size too large for MLX's files."
        )))
    }
}
