//! Printing graphs: Owl's `to_trace` (one line per edge) and Graphviz DOT (`to_dot`,
//! MLX's `export_to_dot`). Nodes are numbered 1, 2, ... in topological order.

use crate::array::{Array, Node};
use crate::error::Result;
use std::collections::HashMap;
use std::fmt::Write;
use std::sync::Arc;

/// One node as printed: its number, op name, state, shape, dtype and input numbers.
struct Printed {
    number: usize,
    name: String,
    /// The primitive's Rust type; `None` for a leaf (a constant or a placeholder).
    primitive_type: Option<&'static str>,
    params: String,
    valid: bool,
    runs: u64,
    shape: Vec<usize>,
    dtype: crate::dtype::DType,
    inputs: Vec<usize>,
}

/// The graph behind `outputs` in topological order (inputs first), iteratively.
fn walk(outputs: &[&Array]) -> Vec<Printed> {
    let mut numbers: HashMap<*const Node, usize> = HashMap::new();
    let mut printed: Vec<Printed> = Vec::new();
    let mut stack: Vec<Arc<Node>> = outputs.iter().rev().map(|a| a.node.clone()).collect();
    while let Some(node) = stack.pop() {
        if numbers.contains_key(&Arc::as_ptr(&node)) {
            continue;
        }
        let state = node.lock();
        let inputs: Vec<Arc<Node>> = state
            .op
            .as_ref()
            .map(|op| op.inputs.iter().map(|a| a.node.clone()).collect())
            .unwrap_or_default();
        let pending: Vec<Arc<Node>> = inputs
            .iter()
            .filter(|i| !numbers.contains_key(&Arc::as_ptr(i)))
            .cloned()
            .collect();
        if !pending.is_empty() {
            drop(state);
            stack.push(node);
            stack.extend(pending.into_iter().rev());
            continue;
        }
        let params = state
            .op
            .as_ref()
            .map(|op| op.primitive.params())
            .unwrap_or_default();
        let name = match &state.op {
            Some(op) => op.primitive.name().to_string(),
            None if node.placeholder => "variable".to_string(),
            None => "const".to_string(),
        };
        let primitive_type = state.op.as_ref().map(|op| op.primitive.type_name());
        let spec = &node.outputs()[0];
        let number = printed.len() + 1;
        printed.push(Printed {
            number,
            name,
            primitive_type,
            params,
            valid: state.data.is_some(),
            runs: state.runs,
            shape: spec.shape.clone(),
            dtype: spec.dtype,
            inputs: inputs.iter().map(|i| numbers[&Arc::as_ptr(i)]).collect(),
        });
        drop(state);
        numbers.insert(Arc::as_ptr(&node), number);
    }
    printed
}

fn label(p: &Printed) -> String {
    format!(
        "#{} name:{} state:{} shape:{:?} dtype:{}",
        p.number,
        p.name,
        if p.valid { "valid" } else { "invalid" },
        p.shape,
        p.dtype
    )
}

/// One line per edge of the graph behind `outputs`, from the outputs back to the leaves
/// (Owl's `to_trace`): `[ #3 name:add state:invalid ... ] -> [ #4 name:sin ... ]`.
///
/// ```
/// use lazulite::{placeholder, to_trace, DType};
/// let x = placeholder(&[2], DType::Float32).unwrap();
/// let y = x.sin().unwrap();
/// let trace = to_trace(&[&y]);
/// assert!(trace.starts_with("[ #1 name:variable state:invalid"));
/// assert!(trace.contains("-> [ #2 name:sin"));
/// ```
pub fn to_trace(outputs: &[&Array]) -> String {
    let nodes = walk(outputs);
    let mut out = String::new();
    for p in nodes.iter().rev() {
        for &input in &p.inputs {
            let _ = writeln!(out, "[ {} ] -> [ {} ]", label(&nodes[input - 1]), label(p));
        }
    }
    out
}

/// The graph behind `outputs` in Graphviz DOT (render with `dot -Tsvg`); nodes holding a
/// value are filled.
///
/// ```
/// let a = lazulite::Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
/// let dot = lazulite::to_dot(&[&a.exp().unwrap()]);
/// assert!(dot.starts_with("digraph"));
/// assert!(dot.contains("n1 -> n2"));
/// ```
pub fn to_dot(outputs: &[&Array]) -> String {
    let nodes = walk(outputs);
    let mut out = String::from("digraph lazulite {\n  node [shape=box, fontname=\"monospace\"];\n");
    for p in &nodes {
        let style = if p.valid {
            ", style=filled, fillcolor=\"#dbe9f6\""
        } else {
            ""
        };
        let params = if p.params.is_empty() {
            String::new()
        } else {
            format!(" ({})", p.params.replace('"', "'"))
        };
        let _ = writeln!(
            out,
            "  n{} [label=\"#{} {}{}\\n{:?} {}\"{}];",
            p.number, p.number, p.name, params, p.shape, p.dtype, style
        );
    }
    for p in &nodes {
        for input in &p.inputs {
            let _ = writeln!(out, "  n{input} -> n{};", p.number);
        }
    }
    out.push_str("}\n");
    out
}

/// For each node of the graph behind `outputs`, in topological order: its op name and
/// how many times it has been computed. A diagnostic for incremental evaluation.
///
/// ```
/// use lazulite::{evaluation_counts, placeholder, DType};
/// let x = placeholder(&[], DType::Float32).unwrap();
/// let y = x.exp().unwrap().sin().unwrap();
/// x.assign(1.0).unwrap();
/// y.eval().unwrap();
/// assert_eq!(evaluation_counts(&[&y]), vec![("variable".to_string(), 0), ("exp".to_string(), 1), ("sin".to_string(), 1)]);
/// ```
pub fn evaluation_counts(outputs: &[&Array]) -> Vec<(String, u64)> {
    walk(outputs)
        .into_iter()
        .map(|p| (p.name, p.runs))
        .collect()
}

/// The Rust type of each primitive in the graph behind `outputs`, in topological order
/// (leaves, which have none, are left out). Printed names are shared by several types
/// (`fused` is both a compiled chain and a fast kernel); these are not, which is what a
/// test needs to check that a function records a given primitive.
///
/// ```
/// let a = lazulite::Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
/// let types = lazulite::primitive_types(&[&a.exp().unwrap()]);
/// assert_eq!(types, vec!["lazulite::ops::unary::Unary"]);
/// ```
pub fn primitive_types(outputs: &[&Array]) -> Vec<&'static str> {
    walk(outputs)
        .into_iter()
        .filter_map(|p| p.primitive_type)
        .collect()
}

/// Writes [`to_dot`] of `outputs` to `path` (MLX's `export_to_dot`).
///
/// ```
/// let x = lazulite::Array::from_slice(&[1.0f32, 2.0], &[2])?;
/// let y = lazulite::exp(&x)?;
/// let path = std::env::temp_dir().join("lazulite-export-to-dot-example.dot");
/// lazulite::export_to_dot(&path, &[&y])?;
/// assert!(std::fs::read_to_string(&path)?.starts_with("digraph"));
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn export_to_dot(path: impl AsRef<std::path::Path>, outputs: &[&Array]) -> Result<()> {
    std::fs::write(path, to_dot(outputs))?;
    Ok(())
}
