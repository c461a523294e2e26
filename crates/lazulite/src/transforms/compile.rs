//! `compile`: trace a function once per input signature into a [`Tape`] of primitives,
//! fuse runs of elementwise steps into one [`Fused`] step, and replay the tape on later
//! calls without running the function again.
//!
//! Why fusion pays: an eager chain of elementwise ops streams every intermediate through
//! main memory; a fused step runs the whole chain on one cache-sized block of rows at a
//! time (blocks in parallel), so intermediates stay in cache and are reused in place.

use super::graph::{key, nodes_between};
use super::tracer::stand_in;
use crate::array::{Array, Node};
use crate::backend::cpu::copy::contiguous;
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::trace::{in_export_trace, in_shapeless_trace, with_shapeless_trace};
use crate::primitive::{no_rule, Export, OutputSpec, Primitive};
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Where a step's input comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Ref {
    /// The i-th input of the traced function.
    Input(usize),
    /// A captured array that does not depend on the inputs.
    Constant(usize),
    /// Output `output` of step `step`.
    Step { step: usize, output: usize },
}

struct Step {
    primitive: Arc<dyn Primitive>,
    inputs: Vec<Ref>,
    outputs: Vec<OutputSpec>,
}

/// A traced function: its steps in topological order, the arrays it captured, and where
/// its outputs come from.
struct Tape {
    steps: Vec<Step>,
    constants: Vec<Array>,
    outputs: Vec<Ref>,
}

impl Tape {
    /// Records the tape's steps on `inputs`, returning the outputs (lazy arrays). With
    /// `shapeless`, each step's output shapes are inferred anew from its inputs' shapes by
    /// its primitive's rule (the inputs may have other shapes than at trace time), and a
    /// step that cannot infer them is an error.
    fn replay_with(&self, inputs: &[Array], shapeless: bool) -> Result<Vec<Array>> {
        let mut values: Vec<Vec<Array>> = Vec::with_capacity(self.steps.len());
        let resolve = |r: &Ref, values: &Vec<Vec<Array>>| match *r {
            Ref::Input(i) => inputs[i].clone(),
            Ref::Constant(i) => self.constants[i].clone(),
            Ref::Step { step, output } => values[step][output].clone(),
        };
        for step in &self.steps {
            let args: Vec<Array> = step.inputs.iter().map(|r| resolve(r, &values)).collect();
            let outputs = if shapeless {
                infer_outputs(&*step.primitive, &args, &step.outputs)?
            } else {
                step.outputs.clone()
            };
            match step.primitive.passes_through(&args, &outputs) {
                Some(i) => values.push(vec![args[i].clone()]),
                None => values.push(Array::from_shared_op(step.primitive.clone(), args, outputs)),
            }
        }
        Ok(self.outputs.iter().map(|r| resolve(r, &values)).collect())
    }

    /// The output shapes of the tape for inputs of shapes `inputs`, step by step.
    fn infer_shapes(&self, inputs: &[OutputSpec]) -> Result<Vec<Vec<usize>>> {
        let mut values: Vec<Vec<OutputSpec>> = Vec::with_capacity(self.steps.len());
        let resolve = |r: &Ref, values: &Vec<Vec<OutputSpec>>| match *r {
            Ref::Input(i) => inputs[i].clone(),
            Ref::Constant(i) => spec_of(&self.constants[i]),
            Ref::Step { step, output } => values[step][output].clone(),
        };
        for step in &self.steps {
            let args: Vec<OutputSpec> = step.inputs.iter().map(|r| resolve(r, &values)).collect();
            let shapes = step.primitive.output_shapes(&args)?;
            values.push(with_shapes(&step.outputs, shapes)?);
        }
        Ok(self
            .outputs
            .iter()
            .map(|r| resolve(r, &values).shape)
            .collect())
    }
}

fn spec_of(a: &Array) -> OutputSpec {
    OutputSpec {
        shape: a.shape().to_vec(),
        dtype: a.dtype(),
    }
}

/// The traced output specs of a step with `shapes` in place of the traced shapes.
fn with_shapes(traced: &[OutputSpec], shapes: Vec<Vec<usize>>) -> Result<Vec<OutputSpec>> {
    if shapes.len() != traced.len() {
        return Err(Error::value(
            "[compile] A shape rule gave the wrong number of outputs.",
        ));
    }
    shapes
        .into_iter()
        .zip(traced)
        .map(|(shape, t)| {
            crate::shape::checked_size(&shape)?;
            Ok(OutputSpec {
                shape,
                dtype: t.dtype,
            })
        })
        .collect()
}

/// The outputs of `primitive` applied to `args`, their shapes inferred by its rule.
fn infer_outputs(
    primitive: &dyn Primitive,
    args: &[Array],
    traced: &[OutputSpec],
) -> Result<Vec<OutputSpec>> {
    let specs: Vec<OutputSpec> = args.iter().map(spec_of).collect();
    with_shapes(traced, primitive.output_shapes(&specs)?)
}

/// Stands for an input while `compile` traces a function: it has no value.
struct CompileInput;

impl Primitive for CompileInput {
    fn name(&self) -> &'static str {
        "compile_input"
    }

    fn eval(&self, _: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        Err(Error::value(
            "[compile] Attempting to eval an array during function transformations like \
             compile is not allowed (the value depends on the compiled function's inputs).",
        ))
    }

    // A placeholder for an input of a compiled function: replaced before any transform.
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

/// Runs `f` on value-less stand-ins for `inputs` and records what it computed.
fn trace(f: &dyn Fn(&[Array]) -> Result<Vec<Array>>, inputs: &[Array]) -> Result<Tape> {
    let sources: Vec<Array> = inputs
        .iter()
        .map(|a| {
            let spec = OutputSpec {
                shape: a.shape().to_vec(),
                dtype: a.dtype(),
            };
            Array::from_op_with_flags(CompileInput, vec![], spec, stand_in())
        })
        .collect();
    let outputs = f(&sources)?;
    let source_index: HashMap<*const Node, usize> = sources
        .iter()
        .enumerate()
        .map(|(i, a)| (key(a), i))
        .collect();
    let source_set: HashSet<*const Node> = source_index.keys().copied().collect();
    let traced = nodes_between(&outputs, &source_set);
    let mut step_index: HashMap<*const Node, usize> = HashMap::new();
    let mut constants: Vec<Array> = Vec::new();
    let mut reference = |a: &Array, step_index: &HashMap<*const Node, usize>| {
        if let Some(&i) = source_index.get(&key(a)) {
            Ref::Input(i)
        } else if let Some(&step) = step_index.get(&key(a)) {
            Ref::Step {
                step,
                output: a.index,
            }
        } else {
            constants.push(a.clone());
            Ref::Constant(constants.len() - 1)
        }
    };
    let mut steps = Vec::with_capacity(traced.len());
    for node in traced {
        let inputs = node
            .inputs
            .iter()
            .map(|a| reference(a, &step_index))
            .collect();
        step_index.insert(Arc::as_ptr(&node.node), steps.len());
        steps.push(Step {
            primitive: node.primitive,
            inputs,
            outputs: node.node.outputs().to_vec(),
        });
    }
    let outputs = outputs.iter().map(|a| reference(a, &step_index)).collect();
    Ok(Tape {
        steps,
        constants,
        outputs,
    })
}

/// Rewrites `tape` so that every group of two or more elementwise steps of one output
/// shape, whose intermediate results are used only inside the group, runs as one
/// [`Fused`] step.
fn fuse(tape: Tape) -> Tape {
    let n = tape.steps.len();
    let mut consumers: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, step) in tape.steps.iter().enumerate() {
        for r in &step.inputs {
            if let Ref::Step { step: j, .. } = *r {
                if !consumers[j].contains(&i) {
                    consumers[j].push(i);
                }
            }
        }
    }
    let is_output: HashSet<usize> = tape
        .outputs
        .iter()
        .filter_map(|r| match *r {
            Ref::Step { step, .. } => Some(step),
            _ => None,
        })
        .collect();
    let fusible = |s: &Step| s.outputs.len() == 1 && s.primitive.is_elementwise();
    // group[i] = the root (last step) of the group step i belongs to.
    let mut group: Vec<Option<usize>> = vec![None; n];
    for root in (0..n).rev() {
        if group[root].is_some() || !fusible(&tape.steps[root]) {
            continue;
        }
        group[root] = Some(root);
        let shape = &tape.steps[root].outputs[0].shape;
        let mut frontier = vec![root];
        while let Some(member) = frontier.pop() {
            for r in &tape.steps[member].inputs {
                let Ref::Step { step: j, .. } = *r else {
                    continue;
                };
                let joins = group[j].is_none()
                    && fusible(&tape.steps[j])
                    && &tape.steps[j].outputs[0].shape == shape
                    && !is_output.contains(&j)
                    && consumers[j].iter().all(|&c| group[c] == Some(root));
                if joins {
                    group[j] = Some(root);
                    frontier.push(j);
                }
            }
        }
    }
    let mut members: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, g) in group.iter().enumerate() {
        if let Some(root) = *g {
            members.entry(root).or_default().push(i);
        }
    }
    members.retain(|_, m| m.len() >= 2);

    let Tape {
        steps,
        constants,
        outputs,
    } = tape;
    let mut steps: Vec<Option<Step>> = steps.into_iter().map(Some).collect();
    let mut new_index: Vec<Option<usize>> = vec![None; n];
    let mut new_steps: Vec<Step> = Vec::new();
    let remap = |r: Ref, new_index: &[Option<usize>]| match r {
        Ref::Step { step, output } => Ref::Step {
            step: new_index[step].expect("producers precede their consumers"),
            output,
        },
        other => other,
    };
    for i in 0..n {
        let in_fused_group = group[i].is_some_and(|root| members.contains_key(&root));
        if !in_fused_group {
            let step = steps[i].take().expect("each step is moved once");
            let inputs = step.inputs.iter().map(|&r| remap(r, &new_index)).collect();
            new_index[i] = Some(new_steps.len());
            new_steps.push(Step { inputs, ..step });
            continue;
        }
        let Some(group_members) = members.get(&i) else {
            continue; // a member before its root: the root emits the group
        };
        let position: HashMap<usize, usize> = group_members
            .iter()
            .enumerate()
            .map(|(k, &m)| (m, k))
            .collect();
        let mut external: Vec<Ref> = Vec::new();
        let mut sub_steps = Vec::with_capacity(group_members.len());
        for &m in group_members {
            let step = steps[m].take().expect("each step is moved once");
            let inputs = step
                .inputs
                .iter()
                .map(|&r| match r {
                    Ref::Step { step, output } if position.contains_key(&step) => Ref::Step {
                        step: position[&step],
                        output,
                    },
                    outside => {
                        let outside = remap(outside, &new_index);
                        let k = external
                            .iter()
                            .position(|&e| e == outside)
                            .unwrap_or_else(|| {
                                external.push(outside);
                                external.len() - 1
                            });
                        Ref::Input(k)
                    }
                })
                .collect();
            sub_steps.push(Step { inputs, ..step });
        }
        let outputs = sub_steps
            .last()
            .expect("groups are not empty")
            .outputs
            .clone();
        let fused = Fused {
            tape: Arc::new(Tape {
                steps: sub_steps,
                constants: Vec::new(),
                outputs: vec![Ref::Step {
                    step: group_members.len() - 1,
                    output: 0,
                }],
            }),
        };
        new_index[i] = Some(new_steps.len());
        new_steps.push(Step {
            primitive: Arc::new(fused),
            inputs: external,
            outputs,
        });
    }
    let outputs = outputs.into_iter().map(|r| remap(r, &new_index)).collect();
    Tape {
        steps: new_steps,
        constants,
        outputs,
    }
}

/// Elements per block of a fused step: small enough that a few intermediates stay in
/// the L2 cache, large enough that per-block overhead is negligible.
const BLOCK_ELEMENTS: usize = 64 * 1024;

/// Several elementwise steps of one output shape, run together block by block.
/// Its derivative and batching rules expand it back into its steps.
struct Fused {
    tape: Arc<Tape>,
}

impl Fused {
    /// Runs the steps on one block of the inputs (all of the same shape).
    fn run_block(&self, inputs: &[Tensor]) -> Result<Tensor> {
        let steps = &self.tape.steps;
        let mut remaining = vec![0usize; steps.len()];
        for step in steps {
            for r in &step.inputs {
                if let Ref::Step { step, .. } = *r {
                    remaining[step] += 1;
                }
            }
        }
        let mut values: Vec<Option<Tensor>> = vec![None; steps.len()];
        for (i, step) in steps.iter().enumerate() {
            let mut args = Vec::with_capacity(step.inputs.len());
            for r in &step.inputs {
                args.push(match *r {
                    Ref::Input(k) => inputs[k].clone(),
                    Ref::Step { step: j, .. } => {
                        remaining[j] -= 1;
                        // The last use takes the tensor, so the kernel may write in place.
                        if remaining[j] == 0 {
                            values[j].take().expect("an intermediate is used once more")
                        } else {
                            values[j].clone().expect("an intermediate is still held")
                        }
                    }
                    Ref::Constant(_) => unreachable!("fused steps take constants as inputs"),
                });
            }
            let spec = OutputSpec {
                shape: args
                    .first()
                    .map_or_else(Vec::new, |t: &Tensor| t.shape.clone()),
                dtype: step.outputs[0].dtype,
            };
            let mut out = step.primitive.eval(args, std::slice::from_ref(&spec))?;
            values[i] = Some(out.swap_remove(0));
        }
        Ok(values
            .pop()
            .flatten()
            .expect("the last step is the fused output"))
    }
}

/// Rows `start..end` (along axis 0) of `t`, as a view.
fn rows(t: &Tensor, start: usize, end: usize) -> Tensor {
    let offset = t.offset as isize + start as isize * t.strides[0];
    let mut shape = t.shape.clone();
    shape[0] = end - start;
    Tensor {
        buf: t.buf.clone(),
        dtype: t.dtype,
        shape,
        strides: t.strides.clone(),
        offset: offset as usize,
    }
}

/// A raw output pointer that blocks write through, each to its own disjoint rows.
#[derive(Clone, Copy)]
struct OutPtr(*mut u8);
// SAFETY: blocks write disjoint byte ranges of one buffer that outlives the loop.
unsafe impl Send for OutPtr {}
unsafe impl Sync for OutPtr {}

impl OutPtr {
    /// # Safety
    /// `offset` bytes past the start must stay inside the buffer.
    unsafe fn add(self, offset: usize) -> *mut u8 {
        self.0.add(offset)
    }
}

impl Primitive for Fused {
    fn name(&self) -> &'static str {
        "fused"
    }

    fn params(&self) -> String {
        let names: Vec<&str> = self.tape.steps.iter().map(|s| s.primitive.name()).collect();
        names.join(",")
    }

    fn output_shapes(&self, inputs: &[OutputSpec]) -> Result<Vec<Vec<usize>>> {
        self.tape.infer_shapes(inputs)
    }

    /// Written as its steps: MLX records a compiled function traced inside an export as
    /// the primitives it runs.
    fn export(&self, _: &[OutputSpec], _: &[OutputSpec]) -> Result<Export> {
        let tape = self.tape.clone();
        Ok(Export::Composed(Arc::new(move |xs: &[Array]| {
            tape.replay_with(xs, true)
        })))
    }

    fn eval(&self, inputs: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let spec = &outputs[0];
        let total: usize = spec.shape.iter().product();
        let row: usize = spec.shape.iter().skip(1).product();
        if spec.shape.is_empty() || total < 2 * BLOCK_ELEMENTS || row == 0 {
            return Ok(vec![self.run_block(&inputs)?]);
        }
        let rows_per_block = (BLOCK_ELEMENTS / row).max(1);
        let n_rows = spec.shape[0];
        let mut inputs = inputs;
        // An input nobody else holds, of the output's shape and item size, is donated: its
        // buffer becomes the output's. Each block reads all of its rows before it writes
        // them, and blocks own disjoint rows, so the results land where their inputs were.
        let donor = inputs
            .iter()
            .position(|t| t.shape == spec.shape && t.is_donatable(spec.dtype));
        let (base, out) = match donor {
            Some(k) => {
                let base = OutPtr(
                    Arc::get_mut(&mut inputs[k].buf)
                        .expect("a donatable buffer is ours alone")
                        .as_mut_ptr(),
                );
                let out = Tensor {
                    dtype: spec.dtype,
                    ..inputs[k].clone()
                };
                (base, out)
            }
            None => {
                let mut out = Tensor::uninit(spec.dtype, &spec.shape)?;
                let base = OutPtr(
                    Arc::get_mut(&mut out.buf)
                        .expect("a new buffer is ours alone")
                        .as_mut_ptr(),
                );
                (base, out)
            }
        };
        let width = spec.dtype.size();
        (0..n_rows.div_ceil(rows_per_block))
            .into_par_iter()
            .try_for_each(|b| -> Result<()> {
                let (start, end) = (b * rows_per_block, ((b + 1) * rows_per_block).min(n_rows));
                let block: Vec<Tensor> = inputs.iter().map(|t| rows(t, start, end)).collect();
                let result = contiguous(self.run_block(&block)?)?;
                let bytes = &result.buf.bytes()[result.offset * width..][..result.size() * width];
                // SAFETY: rows start..end of the contiguous output are this block's own; no
                // other block reads or writes them. A donated buffer may hand back this
                // block's own rows as the result (an identity step), hence `copy`, which
                // allows the overlap.
                unsafe {
                    std::ptr::copy(bytes.as_ptr(), base.add(start * row * width), bytes.len())
                };
                Ok(())
            })?;
        Ok(vec![out])
    }

    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        cotangents: &[Array],
        argnums: &[usize],
    ) -> Result<Vec<Array>> {
        // Shapes inferred: a shapeless function may have replayed this node at new sizes.
        let (_, grads) = super::vjp(|xs| self.tape.replay_with(xs, true), inputs, cotangents)?;
        Ok(argnums.iter().map(|&i| grads[i].clone()).collect())
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], argnums: &[usize]) -> Result<Vec<Array>> {
        let mut all_tangents: Vec<Array> = inputs
            .iter()
            .map(crate::ops::zeros_like)
            .collect::<Result<_>>()?;
        for (t, &i) in tangents.iter().zip(argnums) {
            all_tangents[i] = t.clone();
        }
        let (_, out) = super::jvp(|xs| self.tape.replay_with(xs, true), inputs, &all_tangents)?;
        Ok(out)
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let in_axes = axes.iter().map(|a| a.map(|a| a as i32)).collect();
        let batched = super::vmap(|xs| self.tape.replay_with(xs, true), in_axes, vec![Some(0)]);
        Ok((batched(inputs)?, vec![Some(0)]))
    }
}

/// Shapes and dtypes of the inputs: a traced tape is valid for calls that match them.
type Signature = Vec<(Vec<usize>, DType)>;

/// What a traced tape is kept under: whether it was traced in shape-generic forms, whether
/// for an export, and its inputs' signature.
type TapeKey = (bool, bool, Signature);

static COMPILE_ENABLED: AtomicBool = AtomicBool::new(true);

/// Turns compilation off (compiled functions then run their Python/Rust body directly) or
/// back on, process-wide. MLX's `disable_compile` / `enable_compile`.
///
/// ```
/// lazulite::set_compile_enabled(false);
/// lazulite::set_compile_enabled(true);
/// ```
pub fn set_compile_enabled(enabled: bool) {
    COMPILE_ENABLED.store(enabled, Ordering::Relaxed);
}

/// The function a [`Compiled`] traces.
type Traced = Box<dyn Fn(&[Array]) -> Result<Vec<Array>> + Send + Sync>;

/// A compiled function: see [`compile`] and [`compile_shapeless`].
///
/// ```
/// use lazulite::{compile, multiply, Array, Compiled};
/// let double: Compiled = compile(|x: &[Array]| Ok(vec![multiply(&x[0], 2)?]));
/// let y = double.call(&[Array::from_slice(&[1i32, 2], &[2])?])?;
/// assert_eq!(y[0].to_vec::<i32>()?, vec![2, 4]);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub struct Compiled {
    f: Traced,
    tapes: Mutex<HashMap<TapeKey, Arc<Tape>>>,
    shapeless: bool,
}

impl Compiled {
    /// Calls the function: traces it on the first call with these input shapes and dtypes,
    /// replays the recorded (fused) steps afterwards. Outputs are lazy, as usual.
    ///
    /// ```
    /// use lazulite::{add, compile, Array};
    /// let f = compile(|x: &[Array]| Ok(vec![add(&x[0], &x[1])?]));
    /// let out = f.call(&[Array::scalar(1.0f32), Array::scalar(2.0f32)])?;
    /// assert_eq!(out[0].item::<f32>()?, 3.0);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn call(&self, inputs: &[Array]) -> Result<Vec<Array>> {
        if !COMPILE_ENABLED.load(Ordering::Relaxed) {
            return (self.f)(inputs);
        }
        // A shapeless function is traced once per number of dimensions and dtype of each
        // input (MLX's rule): the sizes are left out of the key.
        let signature: Signature = inputs
            .iter()
            .map(|a| {
                let shape = if self.shapeless {
                    vec![0; a.ndim()]
                } else {
                    a.shape().to_vec()
                };
                (shape, a.dtype())
            })
            .collect();
        // Inside another function's shapeless trace the generic forms are needed too (this
        // trace becomes part of that one), and inside an export MLX's forms: such traces
        // are kept apart from plain ones.
        let generic = self.shapeless || in_shapeless_trace();
        let key = (generic, in_export_trace(), signature);
        let cached = self.lock().get(&key).cloned();
        let tape = match cached {
            Some(tape) => tape,
            None => {
                let traced = with_shapeless_trace(generic, || trace(&*self.f, inputs))?;
                let tape = Arc::new(fuse(traced));
                self.lock().insert(key, tape.clone());
                tape
            }
        };
        tape.replay_with(inputs, self.shapeless)
    }

    /// Whether the function replays its trace at new input shapes (see
    /// [`compile_shapeless`]).
    ///
    /// ```
    /// use lazulite::{compile_shapeless, Array};
    /// assert!(compile_shapeless(|x: &[Array]| Ok(x.to_vec())).is_shapeless());
    /// ```
    pub fn is_shapeless(&self) -> bool {
        self.shapeless
    }

    /// How many input signatures have been traced (each traces the function once; a
    /// shapeless function's signatures are its inputs' dimension counts and dtypes).
    ///
    /// ```
    /// use lazulite::{compile, Array};
    /// let f = compile(|x: &[Array]| Ok(vec![x[0].exp()?]));
    /// f.call(&[Array::scalar(1.0f32)])?;
    /// f.call(&[Array::scalar(2.0f32)])?; // same shape and dtype: replayed
    /// f.call(&[Array::from_slice(&[1.0f32, 2.0], &[2])?])?; // a new shape: traced
    /// assert_eq!(f.traces(), 2);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    pub fn traces(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<TapeKey, Arc<Tape>>> {
        self.tapes.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Compiles `f` (MLX's `compile`): the function runs once per new combination of input
/// shapes and dtypes to record its graph, whose elementwise chains are fused; later calls
/// replay that graph on the new inputs without running `f`. `f` must be pure: side
/// effects and the values of captured arrays are fixed at trace time, and it may not
/// evaluate arrays that depend on its inputs. Compiled functions compose with the
/// transforms (`grad(compile(f))`, `vmap`, ...).
///
/// ```
/// use lazulite::{compile, Array};
/// let f = compile(|x: &[Array]| Ok(vec![x[0].sin()?.exp()?.square()?]));
/// let x = Array::from_slice(&[0.0f32, 1.0], &[2]).unwrap();
/// let y = f.call(&[x.clone()]).unwrap();
/// let expected = x.sin().unwrap().exp().unwrap().square().unwrap();
/// assert_eq!(y[0].to_vec::<f32>().unwrap(), expected.to_vec::<f32>().unwrap());
/// f.call(&[Array::from_slice(&[2.0f32, 3.0], &[2]).unwrap()]).unwrap();
/// assert_eq!(f.traces(), 1); // same shape and dtype: replayed, not traced again
/// ```
pub fn compile<F>(f: F) -> Compiled
where
    F: Fn(&[Array]) -> Result<Vec<Array>> + Send + Sync + 'static,
{
    Compiled {
        f: Box::new(f),
        tapes: Mutex::new(HashMap::new()),
        shapeless: false,
    }
}

/// Compiles `f` once for inputs of any shapes (MLX's `compile(f, shapeless=True)`): `f`
/// is traced once per combination of input dimension counts and dtypes, and a call with
/// new sizes replays that trace, each node's output shape inferred from its inputs'
/// shapes. Operations whose result depends on sizes seen while tracing follow MLX: a
/// reshape to fixed sizes, a slice, a broadcast to a fixed shape keep those sizes and
/// give an error (or MLX's fixed-size result) at others; reshapes with `-1`, reductions,
/// means, broadcasting between inputs and matrix products adapt. So do the derivatives
/// that `f` takes (`grad`, `value_and_grad`, `vjp`, `jvp`, `vmap` of `grad`): their rules
/// record cotangents, seeds and zeros against the arrays they belong to, so a training
/// step traced at one batch size runs at any; derivatives through slices, splits and
/// concatenations keep their traced sizes.
///
/// ```
/// use lazulite::{compile_shapeless, reshape, sum, Array};
/// let f = compile_shapeless(|x: &[Array]| {
///     let rows = sum(&x[0], -1, false)?;
///     Ok(vec![reshape(&(&rows * 2.0), &[-1])?])
/// });
/// let a = f.call(&[Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?])?;
/// let b = f.call(&[Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2])?])?;
/// assert_eq!(a[0].to_vec::<f32>()?, vec![6.0, 14.0]);
/// assert_eq!(b[0].to_vec::<f32>()?, vec![6.0, 14.0, 22.0]);
/// assert_eq!(f.traces(), 1); // one trace serves both shapes
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn compile_shapeless<F>(f: F) -> Compiled
where
    F: Fn(&[Array]) -> Result<Vec<Array>> + Send + Sync + 'static,
{
    Compiled {
        shapeless: true,
        ..compile(f)
    }
}
