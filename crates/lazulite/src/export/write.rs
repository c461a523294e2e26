//! Writing traced functions as MLX tapes.

use super::format::{write_header, Writer};
use crate::array::{Array, Node};
use crate::backend::Tensor;
use crate::error::{Error, Result};
use crate::io::{evaluated, le_bytes};
use crate::primitive::{no_rule, Export, MlxInput, OutputSpec, Primitive};
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

/// The ids and tape entries of the functions of one file.
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

/// One function's tape while it is being written.
struct Tape<'a> {
    file: &'a mut FileWriter,
    /// The addresses of the nodes computed from the function's inputs (the stand-ins
    /// first): everything else is written as a constant.
    dependent: HashSet<usize>,
    ids: HashMap<Key, u64>,
    /// Arrays whose ids are in `ids`, kept alive for the pointers to stay unique.
    held: Vec<Array>,
    out: Writer,
    entries: u64,
}

impl FileWriter {
    fn fresh_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Appends the function `f` traced at `args` then the values of `kwargs` (in key
    /// order). `shapeless`: ops record their shape-generic forms (also those that stand
    /// for a lazulite node written as a composition), for a replay at other shapes.
    pub fn add(
        &mut self,
        f: &super::ExportedFn,
        args: &[Array],
        kwargs: &super::Kwargs,
        shapeless: bool,
    ) -> Result<()> {
        crate::ops::shapeless::with_shapeless_trace(shapeless, || self.add_traced(f, args, kwargs))
    }

    fn add_traced(
        &mut self,
        f: &super::ExportedFn,
        args: &[Array],
        kwargs: &super::Kwargs,
    ) -> Result<()> {
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
        let constants = self.constants.len();
        let mut tape = Tape {
            file: self,
            dependent: stand_ins.iter().map(|a| key(a).0).collect(),
            ids: HashMap::new(),
            held: vec![],
            out: Writer::default(),
            entries: 0,
        };
        let result = (|| {
            let input_ids: Vec<u64> = stand_ins
                .iter()
                .map(|a| {
                    let id = tape.file.fresh_id();
                    tape.ids.insert(key(a), id);
                    tape.held.push(a.clone());
                    id
                })
                .collect();
            for &id in &input_ids {
                tape.out.u64(id);
                tape.out.bool(false);
                tape.out.bool(false);
                tape.entries += 1;
            }
            tape.assign(&outputs)?;
            let output_ids: Vec<u64> = outputs.iter().map(|a| tape.ids[&key(a)]).collect();
            let mut w = Writer::default();
            w.strs(&kwargs.keys().cloned().collect::<Vec<_>>());
            w.ids(&input_ids);
            w.u64(stand_ins.len() as u64);
            for a in &stand_ins {
                w.shape(a.shape());
                w.dtype(a.dtype());
            }
            w.ids(&output_ids);
            w.u64(tape.entries);
            w.bytes.extend(std::mem::take(&mut tape.out.bytes));
            Ok(w.bytes)
        })();
        match result {
            Ok(bytes) => {
                self.body.bytes.extend(bytes);
                self.count += 1;
                Ok(())
            }
            Err(e) => {
                // Nothing of a failed function stays in the file.
                self.next_id = next_id;
                if self.constants.len() != constants {
                    self.constants.retain(|_, (id, _)| *id <= next_id);
                }
                Err(e)
            }
        }
    }

    /// The whole file: the header then the functions.
    pub fn file_bytes(&self, shapeless: bool, metadata: &str) -> Vec<u8> {
        let mut w = Writer::default();
        write_header(&mut w, self.count, shapeless, metadata);
        w.bytes.extend(&self.body.bytes);
        w.bytes
    }
}

impl Tape<'_> {
    /// Gives ids to `outputs` and everything they depend on that has none yet, writing
    /// their tape entries in dependency order.
    fn assign(&mut self, outputs: &[Array]) -> Result<()> {
        let order = topological(outputs, &self.ids);
        // Whatever does not depend on the inputs is written as its value: the file is then
        // the same whether or not the captured arrays were evaluated before the export.
        for (a, inputs) in order {
            let depends = inputs.iter().any(|x| self.dependent.contains(&key(x).0));
            if depends && !self.ids.contains_key(&key(&a)) {
                let primitive = a.node.lock().op.as_ref().map(|op| op.primitive.clone());
                let primitive = primitive.expect("a node with inputs has an op");
                self.dependent.insert(key(&a).0);
                self.node(&a, primitive, &inputs)?;
            }
        }
        for a in outputs {
            if !self.ids.contains_key(&key(a)) {
                self.constant(a)?;
            }
        }
        Ok(())
    }

    /// Writes the node of `a` (all its outputs).
    fn node(&mut self, a: &Array, primitive: Arc<dyn Primitive>, inputs: &[Array]) -> Result<()> {
        let in_specs: Vec<OutputSpec> = inputs
            .iter()
            .map(|x| OutputSpec {
                shape: x.shape().to_vec(),
                dtype: x.dtype(),
            })
            .collect();
        let out_specs = a.node.outputs().to_vec();
        let siblings: Vec<Array> = (0..out_specs.len())
            .map(|index| Array {
                node: a.node.clone(),
                index,
            })
            .collect();
        for x in inputs {
            if !self.ids.contains_key(&key(x)) {
                self.constant(x)?;
            }
        }
        match primitive.export(&in_specs, &out_specs)? {
            Export::Composed(f) => {
                let results = f(inputs)?;
                self.assign(&results)?;
                for (s, r) in siblings.iter().zip(&results) {
                    let id = self.ids[&key(r)];
                    self.ids.insert(key(s), id);
                    self.held.push(s.clone());
                }
                self.held.extend(results);
                Ok(())
            }
            Export::Nodes(nodes) => {
                let mut node_ids: Vec<Vec<u64>> = Vec::with_capacity(nodes.len());
                let last = nodes.len().saturating_sub(1);
                for (n, node) in nodes.into_iter().enumerate() {
                    let mut ids = Vec::with_capacity(node.inputs.len());
                    for input in &node.inputs {
                        ids.push(match input {
                            MlxInput::Input(i) => self.ids[&key(&inputs[*i])],
                            MlxInput::Node(j) => node_ids[*j][0],
                        });
                    }
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
                    self.out.u64(outs[0]);
                    self.out.bool(true);
                    self.out.ids(&ids);
                    self.out.stream();
                    self.out.str(node.name);
                    self.out.state(&node.state);
                    if node.outputs.len() == 1 {
                        self.out.u64(0);
                        self.out.shape(&node.outputs[0].shape);
                        self.out.dtype(node.outputs[0].dtype);
                    } else {
                        // MLX counts the siblings: the outputs besides this one.
                        self.out.u64(node.outputs.len() as u64 - 1);
                        self.out.ids(&outs);
                        self.out.u64(node.outputs.len() as u64);
                        node.outputs.iter().for_each(|s| self.out.shape(&s.shape));
                        self.out.u64(node.outputs.len() as u64);
                        node.outputs.iter().for_each(|s| self.out.dtype(s.dtype));
                    }
                    self.entries += 1;
                    node_ids.push(outs);
                }
                Ok(())
            }
        }
    }

    /// Writes `a`'s value as a constant (its data the first time in the file).
    fn constant(&mut self, a: &Array) -> Result<()> {
        check_shape(a.shape())?;
        if let Some((id, _)) = self.file.constants.get(&key(a)) {
            let id = *id;
            self.ids.insert(key(a), id);
            self.out.u64(id);
            self.out.bool(false);
            self.out.bool(true);
            self.entries += 1;
            return Ok(());
        }
        let tensor = evaluated(&[a])?.remove(0);
        let id = self.file.fresh_id();
        self.file.constants.insert(key(a), (id, a.clone()));
        self.ids.insert(key(a), id);
        self.out.u64(id);
        self.out.bool(false);
        self.out.bool(true);
        self.out.shape(a.shape());
        self.out.dtype(a.dtype());
        self.out.bytes.extend(le_bytes(&tensor).iter());
        self.entries += 1;
        Ok(())
    }
}

/// The nodes `outputs` depend on that have no id in `known`, each as one of its arrays
/// with its inputs, inputs before the nodes that use them (an iterative depth-first
/// walk that stops at evaluated arrays).
fn topological(outputs: &[Array], known: &HashMap<Key, u64>) -> Vec<(Array, Vec<Array>)> {
    let mut order = Vec::new();
    let mut seen: HashSet<*const Node> = HashSet::new();
    let mut stack: Vec<(Array, Option<Vec<Array>>)> =
        outputs.iter().rev().map(|a| (a.clone(), None)).collect();
    while let Some((a, expanded)) = stack.pop() {
        if let Some(inputs) = expanded {
            order.push((a, inputs));
            continue;
        }
        if known.contains_key(&key(&a)) || !seen.insert(Arc::as_ptr(&a.node)) {
            continue;
        }
        let Some(inputs) = a.node.lock().op.as_ref().map(|op| op.inputs.clone()) else {
            continue;
        };
        let pending: Vec<Array> = inputs
            .iter()
            .rev()
            .filter(|x| !known.contains_key(&key(x)) && !seen.contains(&Arc::as_ptr(&x.node)))
            .cloned()
            .collect();
        stack.push((a, Some(inputs)));
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
