//! `einsum` and `einsum_path`: subscripts are parsed and checked once, a greedy search
//! (the one MLX and NumPy's `optimize="greedy"` use) orders the pairwise contractions,
//! and `einsum` contracts its operands in exactly the order `einsum_path` reports.
//!
//! Each pairwise contraction is a [`matmul`] over views of its operands: the labels both
//! share and still need form the batch, the labels only one has form the rows or the
//! columns, and the labels nobody needs any more are the inner dimension.

use crate::array::Array;
use crate::backend::Tensor;
use crate::dtype::{promote_types, DType};
use crate::error::{Error, Result};
use crate::ops::batching::batch_to_front;
use crate::ops::binary::{equal, logical_and, multiply};
use crate::ops::cast::astype;
use crate::ops::creation::{arange, ones, zeros_like};
use crate::ops::linalg::{matmul, reshaped};
use crate::ops::ternary::where_;
use crate::ops::view::{broadcast_to, transpose};
use crate::primitive::{OutputSpec, Primitive};
use crate::shape::shape_text;
use std::collections::BTreeMap;

/// Takes diagonals: output axis `i` walks all input axes in `groups[i]` at once (their
/// strides add up). A view, as NumPy's `diagonal`.
pub(crate) struct DiagonalView {
    pub groups: Vec<Vec<usize>>,
}

impl Primitive for DiagonalView {
    fn name(&self) -> &'static str {
        "diagonal_view"
    }

    fn params(&self) -> String {
        format!("groups={:?}", self.groups)
    }

    fn eval(&self, mut inputs: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let mut t = inputs.pop().expect("one input");
        t.strides = self
            .groups
            .iter()
            .map(|g| g.iter().map(|&i| t.strides[i]).sum())
            .collect();
        t.shape = outputs[0].shape.clone();
        Ok(vec![t])
    }

    /// The cotangent goes back onto the diagonals, zeros elsewhere.
    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        cotangents: &[Array],
        _: &[usize],
    ) -> Result<Vec<Array>> {
        let x = &inputs[0];
        // Output axis i sits at the first axis of its group (groups are in order of their
        // first axis), with size 1 on the group's other axes.
        let mut spread = vec![1usize; x.ndim()];
        for (g, &n) in self.groups.iter().zip(cotangents[0].shape()) {
            spread[g[0]] = n;
        }
        let spread = broadcast_to(&cotangents[0].reshape(&spread)?, x.shape())?;
        let mut on_diagonal: Option<Array> = None;
        for g in self.groups.iter().filter(|g| g.len() > 1) {
            let n = x.shape()[g[0]];
            let index_along = |axis: usize| -> Result<Array> {
                let mut shape = vec![1usize; x.ndim()];
                shape[axis] = n;
                arange(0.0, n as f64, 1.0, DType::Int32)?.reshape(&shape)
            };
            for &axis in &g[1..] {
                let same = equal(&index_along(g[0])?, &index_along(axis)?)?;
                on_diagonal = Some(match on_diagonal {
                    Some(m) => logical_and(&m, &same)?,
                    None => same,
                });
            }
        }
        Ok(vec![match on_diagonal {
            Some(mask) => where_(&mask, &spread, &zeros_like(&spread)?)?,
            None => spread,
        }])
    }

    /// A view is linear: the tangent takes the same diagonals.
    fn jvp(&self, _: &[Array], tangents: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        Ok(vec![diagonal_view(&tangents[0], self.groups.clone())])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let Some(axis) = axes[0] else {
            return Ok((
                vec![diagonal_view(&inputs[0], self.groups.clone())],
                vec![None],
            ));
        };
        let x = batch_to_front(&inputs[0], Some(axis))?;
        let groups = std::iter::once(vec![0])
            .chain(
                self.groups
                    .iter()
                    .map(|g| g.iter().map(|&a| a + 1).collect()),
            )
            .collect();
        Ok((vec![diagonal_view(&x, groups)], vec![Some(0)]))
    }
}

/// The diagonals of `a` along `groups` (see [`DiagonalView`]).
fn diagonal_view(a: &Array, groups: Vec<Vec<usize>>) -> Array {
    let shape = groups.iter().map(|g| a.shape()[g[0]]).collect();
    Array::from_op(DiagonalView { groups }, vec![a.clone()], shape, a.dtype())
}

/// An einsum index: a letter (its ASCII code) or one dimension covered by `...`
/// (`ELLIPSIS_BASE` + its position among the broadcast ellipsis dimensions).
type Label = u32;
const ELLIPSIS_BASE: Label = 256;

/// One term of an einsum expression as written: its letters, and where `...` stands
/// among them.
struct Term {
    letters: Vec<u8>,
    ellipsis_at: Option<usize>,
}

/// Reads one term, with MLX's messages for characters that are not letters and for a
/// second ellipsis.
fn parse_term(name: &str, text: &str) -> Result<Term> {
    let mut letters = Vec::new();
    let mut ellipsis_at = None;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c.is_ascii_alphabetic() {
            letters.push(c as u8);
            rest = &rest[1..];
            continue;
        }
        if !rest.starts_with("...") {
            return Err(Error::value(format!(
                "[{name}] Subscripts must be letters, but got '{c}'."
            )));
        }
        if ellipsis_at.replace(letters.len()).is_some() {
            return Err(Error::value(format!(
                "[{name}] Only one ellipsis per subscript is allowed but found more in \
                 '{text}'."
            )));
        }
        rest = &rest[3..];
    }
    Ok(Term {
        letters,
        ellipsis_at,
    })
}

impl Term {
    /// The labels of this term for an operand of `ellipsis_dims` dimensions under `...`,
    /// out of `ellipsis_rank` in total (aligned to the right, as in broadcasting).
    fn labels(&self, ellipsis_dims: usize, ellipsis_rank: usize) -> Vec<Label> {
        let ellipsis =
            (ellipsis_rank - ellipsis_dims..ellipsis_rank).map(|i| ELLIPSIS_BASE + i as Label);
        let letter = |c: &u8| *c as Label;
        match self.ellipsis_at {
            None => self.letters.iter().map(letter).collect(),
            Some(at) => self.letters[..at]
                .iter()
                .map(letter)
                .chain(ellipsis)
                .chain(self.letters[at..].iter().map(letter))
                .collect(),
        }
    }
}

fn label_text(label: Label) -> String {
    if label < ELLIPSIS_BASE {
        (label as u8 as char).to_string()
    } else {
        "...".to_string()
    }
}

/// A checked einsum expression: the labels of each operand's axes (repeats kept), those
/// of the output, and the size of every label (1 broadcast against any size).
struct Expression {
    inputs: Vec<Vec<Label>>,
    output: Vec<Label>,
    sizes: BTreeMap<Label, usize>,
}

impl Expression {
    /// Parses `subscripts` for operands of these shapes, raising MLX's errors in MLX's
    /// order; `name` is the operation named in the messages. An output letter that no
    /// input has is an error too (MLX lets it through to a confusing failure later).
    fn parse(name: &str, subscripts: &str, shapes: &[&[usize]]) -> Result<Expression> {
        if shapes.is_empty() {
            return Err(Error::value(format!(
                "[{name}] At least one operand is required."
            )));
        }
        // Only spaces are dropped, as in MLX; any other character must be a letter.
        let text: String = subscripts.chars().filter(|&c| c != ' ').collect();
        let (lhs, rhs) = match text.split_once("->") {
            Some((l, r)) => (l, Some(r)),
            None => (text.as_str(), None),
        };
        let written: Vec<&str> = lhs.split(',').collect();
        if written.len() != shapes.len() {
            return Err(Error::value(format!(
                "[{name}] Number of operands, {}, does not match number of input subscripts, \
                 {}",
                shapes.len(),
                written.len()
            )));
        }
        let mut terms = Vec::with_capacity(written.len());
        let mut ellipsis_dims = Vec::with_capacity(written.len());
        for (i, (&w, shape)) in written.iter().zip(shapes).enumerate() {
            let term = parse_term(name, w)?;
            let n = term.letters.len();
            let dims = match term.ellipsis_at {
                Some(_) if shape.len() < n => {
                    return Err(Error::value(format!(
                        "[{name}] Operand {i} with shape {} has insufficient dimensions for \
                         subscript '{w}'. The ellipsis requires at least {n} dimensions but \
                         the operand has {} dimensions.",
                        shape_text(shape),
                        shape.len()
                    )));
                }
                Some(_) => shape.len() - n,
                None => 0,
            };
            terms.push(term);
            ellipsis_dims.push(dims);
        }
        let rank = ellipsis_dims.iter().copied().max().unwrap_or(0);
        let inputs: Vec<Vec<Label>> = terms
            .iter()
            .zip(&ellipsis_dims)
            .map(|(t, &e)| t.labels(e, rank))
            .collect();
        let output = match rhs {
            Some(r) => {
                let term = parse_term(name, r)?;
                let e = if term.ellipsis_at.is_some() { rank } else { 0 };
                let labels = term.labels(e, rank);
                if labels
                    .iter()
                    .enumerate()
                    .any(|(i, l)| labels[..i].contains(l))
                {
                    return Err(Error::value(format!(
                        "[{name}] Repeat indices not allowed in output."
                    )));
                }
                Some(labels)
            }
            None => None,
        };

        let mut sizes: BTreeMap<Label, usize> = BTreeMap::new();
        for (i, (labels, shape)) in inputs.iter().zip(shapes).enumerate() {
            if labels.len() != shape.len() {
                return Err(Error::value(format!(
                    "[{name}] Invalid number of subscripts {} for input {i} with {} \
                     dimensions.",
                    labels.len(),
                    shape.len()
                )));
            }
            for (&l, &d) in labels.iter().zip(*shape) {
                let first = labels.iter().position(|&o| o == l).expect("own label");
                if shape[first] != d {
                    return Err(Error::value(format!(
                        "[{name}] Dimensions of repeated subscripts do not have the same size \
                         ({} != {d}).",
                        shape[first]
                    )));
                }
            }
            for (axis, (&l, &d)) in labels.iter().zip(*shape).enumerate() {
                let known = sizes.entry(l).or_insert(d);
                if d != 1 && *known != 1 && *known != d {
                    return Err(Error::value(format!(
                        "[{name}] Cannot broadcast dimension {axis} of input {i} with shape {} \
                         to size {known}.",
                        shape_text(shape)
                    )));
                }
                *known = (*known).max(d);
            }
        }

        let output = match output {
            Some(labels) => {
                if let Some(&l) = labels.iter().find(|l| !sizes.contains_key(l)) {
                    return Err(Error::value(format!(
                        "[{name}] Output subscript '{}' does not appear in the input \
                         subscripts.",
                        label_text(l)
                    )));
                }
                labels
            }
            // Implicit output: the `...` axes, then the letters written once, in ASCII
            // order (upper case first).
            None => {
                let once = |l: &Label| inputs.iter().flatten().filter(|x| *x == l).count() == 1;
                let letters = sizes.keys().copied().filter(|&l| l < ELLIPSIS_BASE);
                let ellipsis = (0..rank).map(|i| ELLIPSIS_BASE + i as Label);
                ellipsis.chain(letters.filter(once)).collect()
            }
        };
        Ok(Expression {
            inputs,
            output,
            sizes,
        })
    }

    /// The number of elements of a term over these labels (each counted as often as it
    /// appears). Exact up to 2^128, saturating beyond.
    fn size(&self, labels: &[Label]) -> u128 {
        labels
            .iter()
            .fold(1u128, |n, l| n.saturating_mul(self.sizes[l] as u128))
    }

    /// The FLOP count and scaling of contracting `terms` at once into `output`, as MLX
    /// counts them: the size of all their labels, times one less than the number of
    /// terms (at least one), plus one if some label is summed.
    fn cost(&self, terms: &[Vec<Label>], output: &[Label]) -> (u128, usize) {
        let all = union(terms.iter().map(|t| &t[..]));
        let inner = all.iter().any(|l| !output.contains(l));
        (flops(self.size(&all), inner, terms.len()), all.len())
    }

    /// The greedy contraction order, with the report's numbers.
    fn plan(&self) -> Plan {
        let sets: Vec<Vec<Label>> = self.inputs.iter().map(|t| unique(t)).collect();
        let output = unique(&self.output);
        let (naive_cost, naive_scaling) = self.cost(&sets, &output);
        let mut plan = Plan {
            path: vec![(0..sets.len()).collect()],
            naive_cost,
            naive_scaling,
            optimized_cost: naive_cost,
            optimized_scaling: naive_scaling,
        };
        if sets.len() > 2 {
            let limit = self
                .inputs
                .iter()
                .map(|t| self.size(t))
                .fold(self.size(&self.output), u128::max);
            self.greedy(sets, &output, limit, &mut plan);
        }
        plan
    }

    /// Contracts, at each step, the pair that removes the most elements (the cheaper on
    /// a tie, the first found on a second tie), among pairs sharing a label if any do;
    /// a pair whose result exceeds `memory_limit` elements or whose cost takes the total
    /// past the naive cost is never chosen, and when no pair is left the remaining terms
    /// are contracted at once. This keeps MLX's candidate list and its order exactly, so
    /// that ties go the same way.
    fn greedy(
        &self,
        mut terms: Vec<Vec<Label>>,
        output: &[Label],
        memory_limit: u128,
        plan: &mut Plan,
    ) {
        struct Candidate {
            removed: i128,
            cost: u128,
            result: Vec<Label>,
            dims: usize,
            x: usize,
            y: usize,
        }
        let cost_limit = plan.naive_cost;
        plan.path.clear();
        let (mut total, mut scaling) = (0u128, 0usize);
        let mut pairs: Vec<(usize, usize)> = (0..terms.len())
            .flat_map(|i| (i + 1..terms.len()).map(move |j| (i, j)))
            .collect();
        let mut candidates: Vec<Candidate> = Vec::new();
        for _ in 1..terms.len() {
            let consider = |x: usize, y: usize, total: u128, out: &mut Vec<Candidate>| {
                let both = union([&terms[x][..], &terms[y][..]]);
                let result: Vec<Label> = both
                    .iter()
                    .copied()
                    .filter(|l| {
                        output.contains(l)
                            || terms
                                .iter()
                                .enumerate()
                                .any(|(k, t)| k != x && k != y && t.contains(l))
                    })
                    .collect();
                let new_size = self.size(&result);
                if new_size > memory_limit {
                    return;
                }
                let freed = self.size(&terms[x]).saturating_add(self.size(&terms[y]));
                let removed = if freed >= new_size {
                    i128::try_from(freed - new_size).unwrap_or(i128::MAX)
                } else {
                    i128::try_from(new_size - freed).map_or(i128::MIN, |d| -d)
                };
                let cost = flops(self.size(&both), both.len() > result.len(), 2);
                if total.saturating_add(cost) > cost_limit {
                    return;
                }
                out.push(Candidate {
                    removed,
                    cost,
                    result,
                    dims: both.len(),
                    x,
                    y,
                });
            };
            for &(x, y) in &pairs {
                if terms[x].iter().any(|l| terms[y].contains(l)) {
                    consider(x, y, total, &mut candidates);
                }
            }
            if candidates.is_empty() {
                for &(x, y) in &pairs {
                    consider(x, y, total, &mut candidates);
                }
            }
            let Some(best) = candidates
                .iter()
                .enumerate()
                .reduce(|b, c| {
                    let better = c.1.removed > b.1.removed
                        || (c.1.removed == b.1.removed && c.1.cost < b.1.cost);
                    if better {
                        c
                    } else {
                        b
                    }
                })
                .map(|(i, _)| i)
            else {
                let (cost, dims) = self.cost(&terms, output);
                plan.path.push((0..terms.len()).collect());
                total = total.saturating_add(cost);
                scaling = scaling.max(dims);
                break;
            };
            let best = candidates.remove(best);
            let (x, y) = (best.x, best.y);
            scaling = scaling.max(best.dims);
            plan.path.push(vec![x, y]);
            terms.remove(y);
            terms.remove(x);
            terms.push(best.result);
            total = total.saturating_add(best.cost);
            let shift = |p: usize| p - usize::from(p > x) - usize::from(p > y);
            candidates = std::mem::take(&mut candidates)
                .into_iter()
                .filter(|c| c.x != x && c.x != y && c.y != x && c.y != y)
                .map(|c| Candidate {
                    x: shift(c.x),
                    y: shift(c.y),
                    ..c
                })
                .collect();
            let last = terms.len() - 1;
            pairs = (0..last).map(|i| (i, last)).collect();
        }
        plan.optimized_cost = total;
        plan.optimized_scaling = scaling;
    }
}

/// MLX's FLOP count of a contraction over `size` elements of `terms` terms.
fn flops(size: u128, inner: bool, terms: usize) -> u128 {
    let factor = terms.saturating_sub(1).max(1) as u128 + u128::from(inner);
    size.saturating_mul(factor)
}

/// The distinct labels of `terms`, in order of first appearance.
fn union<'a>(terms: impl IntoIterator<Item = &'a [Label]>) -> Vec<Label> {
    let mut all: Vec<Label> = Vec::new();
    for l in terms.into_iter().flatten() {
        if !all.contains(l) {
            all.push(*l);
        }
    }
    all
}

fn unique(term: &[Label]) -> Vec<Label> {
    union([term])
}

/// The contraction order and its costs.
struct Plan {
    /// Each step: the positions, in the current list of terms, of the terms it
    /// contracts; its result goes to the end of the list.
    path: Vec<Vec<usize>>,
    naive_cost: u128,
    naive_scaling: usize,
    optimized_cost: u128,
    optimized_scaling: usize,
}

/// An operand during the contraction: an array and the label of each of its axes.
struct Labelled {
    array: Array,
    labels: Vec<Label>,
}

impl Labelled {
    fn size_of(&self, label: Label) -> usize {
        let i = self.labels.iter().position(|&l| l == label);
        self.array.shape()[i.expect("label of this operand")]
    }

    /// The array with its axes in the order of `labels` (a view).
    fn arranged(&self, labels: &[Label]) -> Result<Array> {
        let perm: Vec<i32> = labels
            .iter()
            .map(|l| self.labels.iter().position(|x| x == l).expect("label") as i32)
            .collect();
        transpose(&self.array, &perm)
    }

    /// Collapses repeated labels into one axis walking their diagonal.
    fn take_diagonals(self) -> Labelled {
        let mut unique: Vec<Label> = Vec::new();
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (axis, &l) in self.labels.iter().enumerate() {
            match unique.iter().position(|&u| u == l) {
                Some(g) => {
                    groups[g].push(axis);
                }
                None => {
                    unique.push(l);
                    groups.push(vec![axis]);
                }
            }
        }
        if unique.len() == self.labels.len() {
            return self;
        }
        let array = diagonal_view(&self.array, groups);
        Labelled {
            array,
            labels: unique,
        }
    }

    /// Sums over the axes whose labels are not in `keep`, as a product with a vector of
    /// ones (floating point and complex dtypes only).
    fn sum_except(self, keep: &[Label]) -> Result<Labelled> {
        let (kept, summed): (Vec<Label>, Vec<Label>) =
            self.labels.iter().partition(|l| keep.contains(l));
        if summed.is_empty() {
            return Ok(self);
        }
        let dtype = self.array.dtype();
        if !dtype.is_inexact() {
            let names: Vec<String> = summed.iter().map(|&l| label_text(l)).collect();
            return Err(Error::not_implemented(format!(
                "[einsum] Summing over subscripts {names:?} that no other operand has needs \
                 the sum reduction; only floating point and complex operands are supported, \
                 got {dtype}."
            )));
        }
        let kept_shape: Vec<usize> = kept.iter().map(|&l| self.size_of(l)).collect();
        let p: usize = summed.iter().map(|&l| self.size_of(l)).product();
        let order: Vec<Label> = kept.iter().chain(&summed).copied().collect();
        let rows = reshaped(&self.arranged(&order)?, &[kept_shape.iter().product(), p])?;
        let total = matmul(&rows, &ones(&[p], dtype)?)?;
        Ok(Labelled {
            array: reshaped(&total, &kept_shape)?,
            labels: kept,
        })
    }
}

/// Contracts `a` and `b` over their common labels not in `needed` (which holds the
/// labels of the output and of the operands still to come).
fn contract(a: Labelled, b: Labelled, needed: &[Label]) -> Result<Labelled> {
    let keep_a: Vec<Label> = a
        .labels
        .iter()
        .copied()
        .filter(|l| needed.contains(l) || b.labels.contains(l))
        .collect();
    let keep_b: Vec<Label> = b
        .labels
        .iter()
        .copied()
        .filter(|l| needed.contains(l) || a.labels.contains(l))
        .collect();
    let (a, b) = (a.sum_except(&keep_a)?, b.sum_except(&keep_b)?);
    let common = |wanted: bool| -> Vec<Label> {
        a.labels
            .iter()
            .copied()
            .filter(|l| b.labels.contains(l) && needed.contains(l) == wanted)
            .collect()
    };
    let (batch, summed) = (common(true), common(false));
    let only_a: Vec<Label> = a
        .labels
        .iter()
        .copied()
        .filter(|l| !b.labels.contains(l))
        .collect();
    let only_b: Vec<Label> = b
        .labels
        .iter()
        .copied()
        .filter(|l| !a.labels.contains(l))
        .collect();
    let sizes =
        |x: &Labelled, ls: &[Label]| -> Vec<usize> { ls.iter().map(|&l| x.size_of(l)).collect() };
    let labels: Vec<Label> = [&batch[..], &only_a, &only_b].concat();
    if summed.is_empty() {
        // No contraction: an elementwise product, broadcasting `a` over `b`'s own axes
        // and `b` over `a`'s.
        let ones_for = |ls: &[Label]| vec![1; ls.len()];
        let xa = reshaped(
            &a.arranged(&[&batch[..], &only_a].concat())?,
            &[sizes(&a, &batch), sizes(&a, &only_a), ones_for(&only_b)].concat(),
        )?;
        let xb = reshaped(
            &b.arranged(&[&batch[..], &only_b].concat())?,
            &[sizes(&b, &batch), ones_for(&only_a), sizes(&b, &only_b)].concat(),
        )?;
        return Ok(Labelled {
            array: multiply(&xa, &xb)?,
            labels,
        });
    }
    // A contracted axis of size 1 in one operand is broadcast against the other's.
    let k_sizes: Vec<usize> = summed
        .iter()
        .map(|&l| a.size_of(l).max(b.size_of(l)))
        .collect();
    let k: usize = k_sizes.iter().product();
    let m: usize = sizes(&a, &only_a).iter().product();
    let n: usize = sizes(&b, &only_b).iter().product();
    let xa = a.arranged(&[&batch[..], &only_a, &summed].concat())?;
    let xa = broadcast_to(
        &xa,
        &[sizes(&a, &batch), sizes(&a, &only_a), k_sizes.clone()].concat(),
    )?;
    let xa = reshaped(&xa, &[sizes(&a, &batch), vec![m, k]].concat())?;
    let xb = b.arranged(&[&batch[..], &summed, &only_b].concat())?;
    let xb = broadcast_to(
        &xb,
        &[sizes(&b, &batch), k_sizes, sizes(&b, &only_b)].concat(),
    )?;
    let xb = reshaped(&xb, &[sizes(&b, &batch), vec![k, n]].concat())?;
    let product = matmul(&xa, &xb)?;
    let batch_shape = product.shape()[..batch.len()].to_vec();
    let shape = [batch_shape, sizes(&a, &only_a), sizes(&b, &only_b)].concat();
    Ok(Labelled {
        array: reshaped(&product, &shape)?,
        labels,
    })
}

/// Einstein summation over `operands` described by `subscripts`, as NumPy's and MLX's
/// `einsum`: letters name axes, `...` stands for broadcast leading axes, `->` gives the
/// output (implicit: the `...` axes, then the letters that appear once, in ASCII
/// order). Repeated letters in one operand take its diagonal; an axis of size 1 is
/// broadcast against the other operands' size of its letter. Operands are contracted
/// pairwise with [`matmul`] in the order [`einsum_path`] reports; contractions reject
/// integer dtypes (as in MLX).
///
/// ```
/// use lazulite::{einsum, Array};
/// let a = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
/// let p = einsum("ij,jk->ik", &[&a, &a]).unwrap();
/// assert_eq!(p.to_vec::<f32>().unwrap(), vec![7.0, 10.0, 15.0, 22.0]);
/// assert_eq!(einsum("ii", &[&a]).unwrap().item::<f32>().unwrap(), 5.0);
/// assert_eq!(einsum("ji", &[&a]).unwrap().to_vec::<f32>().unwrap(), vec![1.0, 3.0, 2.0, 4.0]);
/// ```
pub fn einsum(subscripts: &str, operands: &[&Array]) -> Result<Array> {
    let shapes: Vec<&[usize]> = operands.iter().map(|x| x.shape()).collect();
    let expr = Expression::parse("einsum", subscripts, &shapes)?;
    let plan = expr.plan();
    let dtype = operands
        .iter()
        .map(|x| x.dtype())
        .reduce(promote_types)
        .expect("at least one operand");
    let mut terms = operands
        .iter()
        .zip(&expr.inputs)
        .map(|(x, labels)| {
            Ok(Labelled {
                array: astype(x, dtype)?,
                labels: labels.clone(),
            }
            .take_diagonals())
        })
        .collect::<Result<Vec<_>>>()?;
    for step in &plan.path {
        let mut taken: Vec<Labelled> = step.iter().rev().map(|&p| terms.remove(p)).collect();
        taken.reverse();
        // Labels the step must keep: the output's and those of the terms it leaves.
        let mut needed: Vec<Label> = terms.iter().flat_map(|t| t.labels.clone()).collect();
        needed.extend(&expr.output);
        let later: Vec<Vec<Label>> = taken.iter().map(|t| t.labels.clone()).collect();
        let mut taken = taken.into_iter().enumerate();
        let (_, mut acc) = taken.next().expect("a step takes at least one term");
        for (k, term) in taken {
            let needed_now: Vec<Label> = needed
                .iter()
                .chain(later[k + 1..].iter().flatten())
                .copied()
                .collect();
            acc = contract(acc, term, &needed_now)?;
        }
        terms.push(acc);
    }
    let result = terms.pop().expect("the path leaves one term");
    result.sum_except(&expr.output)?.arranged(&expr.output)
}

/// The order in which [`einsum`] contracts its operands, and a report on its cost, as
/// MLX's `einsum_path`: the path lists, for each step, the positions of the terms it
/// contracts in the current list of terms (whose result is appended to that list); the
/// report gives the subscripts, the naive and optimized scaling (the number of distinct
/// letters in the largest contraction) and FLOP counts. Only shapes are read; nothing is
/// computed. The order is MLX's greedy one, with its costs; where MLX's 64-bit counts
/// would wrap around, these stay exact up to 2^128 and saturate beyond.
///
/// ```
/// use lazulite::{einsum_path, zeros, DType};
/// let a = zeros(&[2, 3], DType::Float32)?;
/// let b = zeros(&[3, 4], DType::Float32)?;
/// let c = zeros(&[4, 5], DType::Float32)?;
/// let (path, report) = einsum_path("ij,jk,kl->il", &[&a, &b, &c])?;
/// assert_eq!(path, vec![vec![1, 2], vec![0, 1]]);
/// assert!(report.contains("  Optimized FLOP count:  180\n"));
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn einsum_path(subscripts: &str, operands: &[&Array]) -> Result<(Vec<Vec<usize>>, String)> {
    let shapes: Vec<&[usize]> = operands.iter().map(|x| x.shape()).collect();
    let plan = Expression::parse("einsum_path", subscripts, &shapes)?.plan();
    let report = format!(
        "  Complete contraction:  {subscripts}\n         Naive scaling:  {}\n     \
         Optimized scaling:  {}\n      Naive FLOP count:  {}\n  Optimized FLOP count:  {}\n",
        plan.naive_scaling, plan.optimized_scaling, plan.naive_cost, plan.optimized_cost
    );
    Ok((plan.path, report))
}
