//! MLX's primitives read back as lazulite ops: for each name MLX writes, the layout of
//! its `state()` and a function that records the same computation with lazulite's op
//! functions, so an imported function is an ordinary lazy graph.

use super::format::Field;
use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::indexing::{gather, masked_scatter, scatter, ScatterMode};
use crate::ops::*;
use crate::primitive::{MlxState, OutputSpec};

/// A norm's weight or bias if it is a vector; MLX passes scalars for missing ones.
fn vector(a: &Array) -> Option<&Array> {
    (a.ndim() != 0).then_some(a)
}

/// `y` times `weight` if the weight is MLX's scalar stand-in, else `y`.
fn scaled_by_scalar(y: Array, weight: &Array) -> Result<Array> {
    if weight.ndim() == 0 {
        multiply(&y, weight)
    } else {
        Ok(y)
    }
}

/// MLX's `LayerNorm` of `x`: the weight and bias may be its scalar stand-ins.
fn layer_norm_of(x: &Array, weight: &Array, bias: Option<&Array>, eps: f32) -> Result<Array> {
    let y = fast::layer_norm(x, vector(weight), bias.and_then(vector), eps)?;
    let y = scaled_by_scalar(y, weight)?;
    match bias.filter(|b| b.ndim() == 0) {
        Some(b) => add(&y, b),
        None => Ok(y),
    }
}

/// The cotangents of a norm's `primals`, with zeros for the scalar stand-ins of a missing
/// weight or bias (MLX's), the input's always computed.
fn norm_cotangents(grads: Vec<Array>, primals: &[Array]) -> Result<Vec<Array>> {
    grads
        .into_iter()
        .zip(primals)
        .enumerate()
        .map(|(i, (g, p))| {
            if i > 0 && p.ndim() == 0 {
                zeros_like(p)
            } else {
                Ok(g)
            }
        })
        .collect()
}

/// Records one MLX primitive: its inputs, its decoded state and its recorded outputs.
pub(crate) type Interpret = fn(&[Array], &State, &[OutputSpec]) -> Result<Vec<Array>>;

/// A primitive's decoded state, read by position.
pub(crate) struct State<'a> {
    pub name: &'a str,
    pub fields: &'a [MlxState],
}

impl State<'_> {
    fn field(&self, i: usize) -> Result<&MlxState> {
        self.fields
            .get(i)
            .ok_or_else(|| Error::value(format!("[import_function] {}: missing state.", self.name)))
    }

    fn mismatch(&self) -> Error {
        Error::value(format!(
            "[import_function] {}: unexpected state.",
            self.name
        ))
    }

    fn int(&self, i: usize) -> Result<i32> {
        match self.field(i)? {
            MlxState::Int(v) => Ok(*v),
            _ => Err(self.mismatch()),
        }
    }

    fn bool(&self, i: usize) -> Result<bool> {
        match self.field(i)? {
            MlxState::Bool(v) => Ok(*v),
            _ => Err(self.mismatch()),
        }
    }

    fn float(&self, i: usize) -> Result<f32> {
        match self.field(i)? {
            MlxState::Float(v) => Ok(*v),
            _ => Err(self.mismatch()),
        }
    }

    fn double(&self, i: usize) -> Result<f64> {
        match self.field(i)? {
            MlxState::Double(v) => Ok(*v),
            _ => Err(self.mismatch()),
        }
    }

    fn ints(&self, i: usize) -> Result<Vec<i64>> {
        match self.field(i)? {
            MlxState::Ints(v) => Ok(v.iter().map(|&x| x as i64).collect()),
            _ => Err(self.mismatch()),
        }
    }

    fn axes(&self, i: usize) -> Result<Vec<i32>> {
        match self.field(i)? {
            MlxState::Ints(v) => Ok(v.clone()),
            _ => Err(self.mismatch()),
        }
    }

    fn sizes(&self, i: usize) -> Result<Vec<usize>> {
        self.ints(i)?
            .iter()
            .map(|&d| usize::try_from(d).ok())
            .collect::<Option<Vec<usize>>>()
            .ok_or_else(|| self.mismatch())
    }

    fn dtype(&self, i: usize) -> Result<DType> {
        match self.field(i)? {
            MlxState::Dtype(d) => Ok(*d),
            _ => Err(self.mismatch()),
        }
    }

    fn int64s(&self, i: usize) -> Result<Vec<i64>> {
        match self.field(i)? {
            MlxState::Int64s(v) => Ok(v.clone()),
            _ => Err(self.mismatch()),
        }
    }

    fn size(&self, i: usize) -> Result<u64> {
        match self.field(i)? {
            MlxState::Size(v) => Ok(*v),
            _ => Err(self.mismatch()),
        }
    }

    /// A `std::vector<size_t>` of axes, each checked against `ndim`.
    fn size_axes(&self, i: usize, ndim: usize) -> Result<Vec<usize>> {
        match self.field(i)? {
            MlxState::Sizes(v) => v
                .iter()
                .map(|&a| usize::try_from(a).ok().filter(|&a| a < ndim))
                .collect::<Option<Vec<usize>>>()
                .ok_or_else(|| self.mismatch()),
            _ => Err(self.mismatch()),
        }
    }

    fn string(&self, i: usize) -> Result<&str> {
        match self.field(i)? {
            MlxState::Str(v) => Ok(v),
            _ => Err(self.mismatch()),
        }
    }

    fn unsupported(&self, what: impl std::fmt::Display) -> Error {
        Error::value(format!(
            "[import_function] {} with {what} is not supported yet.",
            self.name
        ))
    }
}

/// The start and stop of a slice taking `shape` elements from `start` by `step`. A
/// file's stop is the one the slice was given, which MLX applies as recorded but which,
/// sliced anew, can wrap (an empty slice from a start left of the front, say), so the
/// elements taken are counted from the recorded shape.
fn taken(start: &[i64], step: &[i64], shape: &[usize]) -> (Vec<i64>, Vec<i64>) {
    start
        .iter()
        .zip(step)
        .zip(shape)
        .map(|((&b, &k), &n)| {
            if n == 0 {
                return (0, 0);
            }
            // One step past the last element; past the front must not wrap.
            let end = b.saturating_add((n as i64).saturating_mul(k));
            (b, if end < 0 { i64::MIN } else { end })
        })
        .unzip()
}

fn one(a: Array) -> Result<Vec<Array>> {
    Ok(vec![a])
}

/// The quantization of a state that starts with group size, bits and mode.
fn quantization(s: &State<'_>) -> Result<Quantization> {
    let index = s.int(2)?;
    let mode = QuantizationMode::from_index(index)
        .ok_or_else(|| s.unsupported(format!("quantization mode {index}")))?;
    Ok(Quantization {
        mode,
        group_size: s.int(0)?,
        bits: s.int(1)?,
    })
}

macro_rules! unary {
    ($f:expr) => {
        (|x: &[Array], _: &State, _: &[OutputSpec]| one($f(&x[0])?)) as Interpret
    };
}

macro_rules! binary {
    ($f:expr) => {
        (|x: &[Array], _: &State, _: &[OutputSpec]| one($f(&x[0], &x[1])?)) as Interpret
    };
}

use Field::{
    Bool as B, Double as D, Dtype as T, Float as F, Int as I, Int64s as L, Ints as V, Null as N,
    Size as Z, Sizes as ZV, Str as S,
};

/// The primitives this reader knows: MLX's name, its state layout, its interpretation.
fn table() -> &'static [(&'static str, &'static [Field], Interpret)] {
    &[
        ("Abs", &[], unary!(abs)),
        ("ArcCos", &[], unary!(arccos)),
        ("ArcCosh", &[], unary!(arccosh)),
        ("ArcSin", &[], unary!(arcsin)),
        ("ArcSinh", &[], unary!(arcsinh)),
        ("ArcTan", &[], unary!(arctan)),
        ("ArcTanh", &[], unary!(arctanh)),
        ("Ceil", &[], unary!(ceil)),
        ("Conjugate", &[], unary!(conjugate)),
        ("Cos", &[], unary!(cos)),
        ("Cosh", &[], unary!(cosh)),
        ("Erf", &[], unary!(erf)),
        ("ErfInv", &[], unary!(erfinv)),
        ("Exp", &[], unary!(exp)),
        ("Expm1", &[], unary!(expm1)),
        ("Floor", &[], unary!(floor)),
        ("Imag", &[], unary!(imag)),
        ("Log1p", &[], unary!(log1p)),
        ("LogicalNot", &[], unary!(logical_not)),
        ("Negative", &[], unary!(negative)),
        ("Real", &[], unary!(real)),
        ("Round", &[], unary!(|a| round(a, 0))),
        ("Sigmoid", &[], unary!(sigmoid)),
        ("Sign", &[], unary!(sign)),
        ("Sin", &[], unary!(sin)),
        ("Sinh", &[], unary!(sinh)),
        ("Square", &[], unary!(square)),
        ("StopGradient", &[], unary!(stop_gradient)),
        ("Tan", &[], unary!(tan)),
        ("Tanh", &[], unary!(tanh)),
        ("Copy", &[], |x, _, _| one(x[0].clone())),
        ("Sqrt", &[B], |x, s, _| {
            one(if s.bool(0)? {
                rsqrt(&x[0])?
            } else {
                sqrt(&x[0])?
            })
        }),
        ("Log", &[I], |x, s, _| {
            // `Log::Base` is `{two, ten, e}`.
            one(match s.int(0)? {
                0 => log2(&x[0])?,
                1 => log10(&x[0])?,
                2 => log(&x[0])?,
                b => return Err(s.unsupported(format!("base {b}"))),
            })
        }),
        ("Add", &[], binary!(add)),
        ("Subtract", &[], binary!(subtract)),
        ("Multiply", &[], binary!(multiply)),
        ("FloorDivide", &[], binary!(floor_divide)),
        // Older MLX wrote floor_divide of integers as Divide.
        ("Divide", &[], |x, _, _| {
            one(if x[0].dtype().is_inexact() {
                divide(&x[0], &x[1])?
            } else {
                floor_divide(&x[0], &x[1])?
            })
        }),
        ("Remainder", &[], binary!(remainder)),
        ("Power", &[], binary!(power)),
        ("Maximum", &[], binary!(maximum)),
        ("Minimum", &[], binary!(minimum)),
        ("ArcTan2", &[], binary!(arctan2)),
        ("LogAddExp", &[], binary!(logaddexp)),
        ("Equal", &[B], |x, s, _| {
            let eq = equal(&x[0], &x[1])?;
            if !s.bool(0)? {
                return one(eq);
            }
            let both_nan = logical_and(&isnan(&x[0])?, &isnan(&x[1])?)?;
            one(logical_or(&eq, &both_nan)?)
        }),
        ("NotEqual", &[], binary!(not_equal)),
        ("Less", &[], binary!(less)),
        ("LessEqual", &[], binary!(less_equal)),
        ("Greater", &[], binary!(greater)),
        ("GreaterEqual", &[], binary!(greater_equal)),
        ("LogicalAnd", &[], binary!(logical_and)),
        ("LogicalOr", &[], binary!(logical_or)),
        ("BitwiseBinary", &[I], |x, s, _| {
            let (a, b) = (&x[0], &x[1]);
            one(match s.int(0)? {
                0 => bitwise_and(a, b)?,
                1 => bitwise_or(a, b)?,
                2 => bitwise_xor(a, b)?,
                3 => left_shift(a, b)?,
                4 => right_shift(a, b)?,
                op => return Err(s.unsupported(format!("operation {op}"))),
            })
        }),
        ("Select", &[], |x, _, _| one(where_(&x[0], &x[1], &x[2])?)),
        ("AsType", &[T], |x, s, _| one(astype(&x[0], s.dtype(0)?)?)),
        ("View", &[T], |x, s, _| one(view(&x[0], s.dtype(0)?)?)),
        ("Broadcast", &[V], |x, s, _| {
            if x.len() == 1 {
                return one(broadcast_to(&x[0], &s.sizes(0)?)?);
            }
            // Several inputs (a shapeless trace): the first broadcast against the others.
            one(broadcast_to(&x[0], &broadcast_all(x, 0)?)?)
        }),
        ("BroadcastAxes", &[V], |x, s, _| {
            let ignore = s.ints(0)?;
            let keep = ignore.len();
            // MLX writes the trailing axes a batched matrix product keeps: -k..=-1.
            let trailing = ignore
                .iter()
                .enumerate()
                .all(|(i, &a)| a == i as i64 - keep as i64);
            if !trailing || x.iter().any(|a| a.ndim() < keep) {
                return Err(s.unsupported(format!("ignored axes {ignore:?}")));
            }
            one(broadcast_to(&x[0], &broadcast_all(x, keep)?)?)
        }),
        ("Reshape", &[V], |x, s, _| one(reshape(&x[0], &s.ints(0)?)?)),
        ("Transpose", &[V], |x, s, _| {
            one(transpose(&x[0], &s.axes(0)?)?)
        }),
        ("ExpandDims", &[V], |x, s, _| {
            one(expand_dims(&x[0], s.axes(0)?)?)
        }),
        ("Squeeze", &[V], |x, s, _| one(squeeze(&x[0], s.axes(0)?)?)),
        ("Flatten", &[I, I], |x, s, _| {
            one(flatten(&x[0], s.int(0)?, s.int(1)?)?)
        }),
        ("Unflatten", &[I, V], |x, s, _| {
            one(unflatten(&x[0], s.int(0)?, &s.ints(1)?)?)
        }),
        ("Slice", &[V, V, V], |x, s, out| {
            let (start, stop) = taken(&s.ints(0)?, &s.ints(2)?, &out[0].shape);
            one(slice(&x[0], &start, &stop, &s.ints(2)?)?)
        }),
        ("SliceUpdate", &[I, V, V, V], |x, s, _| {
            let step = s.ints(3)?;
            let (start, stop) = taken(&s.ints(1)?, &step, x[1].shape());
            // `SliceUpdate::ReduceType` is `{Max, Min, Sum, Prod, None}`.
            let combine: fn(&Array, &Array) -> Result<Array> = match s.int(0)? {
                0 => |a, b| maximum(a, b),
                1 => |a, b| minimum(a, b),
                2 => |a, b| add(a, b),
                3 => |a, b| multiply(a, b),
                4 => return one(slice_update(&x[0], &x[1], &start, &stop, &step)?),
                r => return Err(s.unsupported(format!("reduction {r}"))),
            };
            let current = slice(&x[0], &start, &stop, &step)?;
            let update = combine(&current, &x[1])?;
            one(slice_update(&x[0], &update, &start, &stop, &step)?)
        }),
        ("Concatenate", &[I], |x, s, _| {
            one(concatenate(x, s.int(0)?)?)
        }),
        ("Split", &[V, I], |x, s, _| {
            split(&x[0], IndicesOrSections::Indices(s.ints(0)?), s.int(1)?)
        }),
        ("Full", &[], |x, _, out| {
            // MLX's Full copies its input, which `full` has broadcast to the shape: the
            // input's shape is the output's (at a shapeless call, its new one). A
            // lower-dimensional input (never written by MLX) is broadcast as recorded.
            let value = astype(&x[0], out[0].dtype)?;
            if value.ndim() == out[0].shape.len() {
                return one(value);
            }
            one(broadcast_to(&value, &out[0].shape)?)
        }),
        ("Arange", &[D, D, D], |_, s, out| {
            one(arange(
                s.double(0)?,
                s.double(1)?,
                s.double(2)?,
                out[0].dtype,
            )?)
        }),
        ("Reduce", &[I, V], |x, s, _| {
            let axes = s.axes(1)?;
            // `Reduce::ReduceType` is `{And, Or, Sum, Prod, Min, Max}`; axes are kept.
            one(match s.int(0)? {
                0 => all(&x[0], axes, true)?,
                1 => any(&x[0], axes, true)?,
                2 => sum(&x[0], axes, true)?,
                3 => prod(&x[0], axes, true)?,
                4 => min(&x[0], axes, true)?,
                5 => max(&x[0], axes, true)?,
                r => return Err(s.unsupported(format!("reduction {r}"))),
            })
        }),
        ("ArgReduce", &[I, I], |x, s, _| {
            let axis = Some(s.int(1)?);
            one(match s.int(0)? {
                0 => argmin(&x[0], axis, true)?,
                1 => argmax(&x[0], axis, true)?,
                r => return Err(s.unsupported(format!("reduction {r}"))),
            })
        }),
        ("Softmax", &[B], |x, s, _| {
            one(softmax(&x[0], -1, s.bool(0)?)?)
        }),
        ("LogSumExp", &[], |x, _, _| one(logsumexp(&x[0], -1, true)?)),
        ("Scan", &[I, I, B, B], |x, s, _| {
            let (a, axis) = (&x[0], Some(s.int(1)?));
            let (reverse, inclusive) = (s.bool(2)?, s.bool(3)?);
            // `Scan::ReduceType` is `{Max, Min, Sum, Prod, LogAddExp}`.
            one(match s.int(0)? {
                0 => cummax(a, axis, reverse, inclusive)?,
                1 => cummin(a, axis, reverse, inclusive)?,
                2 => cumsum(a, axis, reverse, inclusive, None)?,
                3 => cumprod(a, axis, reverse, inclusive, None)?,
                4 => logcumsumexp(a, axis, reverse, inclusive)?,
                r => return Err(s.unsupported(format!("reduction {r}"))),
            })
        }),
        ("Matmul", &[], binary!(matmul)),
        ("AddMM", &[F, F], |x, s, _| {
            let (alpha, beta) = (s.float(0)? as f64, s.float(1)? as f64);
            one(addmm(&x[2], &x[0], &x[1], alpha, beta)?)
        }),
        ("Gather", &[V, V], |x, s, out| {
            let axes = axes_of(s, 0, x[0].ndim())?;
            let sizes = s.sizes(1)?;
            check_slice_sizes(s, &x[0], &sizes)?;
            let gathered = if whole_slices(&x[0], &axes, &sizes) {
                // MLX keeps a size-1 axis for each indexed one: inserted after the index
                // axes (not a reshape to the recorded shape, which a shapeless call at
                // other sizes would not fit).
                let gathered = gather(&x[0], &x[1..], &axes)?;
                let batch = gathered.ndim() + axes.len() - x[0].ndim();
                let kept: Vec<i32> = axes.iter().map(|&a| (batch + a) as i32).collect();
                if kept.is_empty() {
                    return one(gathered);
                }
                return one(expand_dims(&gathered, kept)?);
            } else {
                let coords = window_coordinates(x[0].shape(), &x[1..], &axes, &sizes)?;
                let all: Vec<usize> = (0..x[0].ndim()).collect();
                gather(&x[0], &coords, &all)?
            };
            one(reshape(&gathered, &dims(&out[0].shape))?)
        }),
        ("GatherAxis", &[I], |x, s, _| {
            one(take_along_axis(&x[0], &x[1], Some(s.int(0)?))?)
        }),
        ("Scatter", &[I, V], |x, s, _| {
            let n = x.len();
            let axes = axes_of(s, 1, x[0].ndim())?;
            let updates = &x[n - 1];
            let batch = if n > 2 { x[1].ndim() } else { 0 };
            let slice_sizes = updates.shape().get(batch..).unwrap_or(&[]).to_vec();
            check_slice_sizes(s, &x[0], &slice_sizes)?;
            // `Scatter::ReduceType` is `{Max, Min, Sum, Prod, None}`.
            let mode = match s.int(0)? {
                0 => ScatterMode::Maximum,
                1 => ScatterMode::Minimum,
                2 => ScatterMode::Add,
                3 => ScatterMode::Multiply,
                4 => ScatterMode::Assign,
                r => return Err(s.unsupported(format!("reduction {r}"))),
            };
            if !whole_slices(&x[0], &axes, &slice_sizes) {
                let indices = &x[1..n - 1];
                let coords = window_coordinates(x[0].shape(), indices, &axes, &slice_sizes)?;
                let all: Vec<usize> = (0..x[0].ndim()).collect();
                return one(scatter(&x[0], &coords, updates, &all, mode)?);
            }
            // Drop the indexed axes' size-1 slice dimensions, as lazulite's scatter takes them.
            let kept: Vec<i64> = updates.shape()[..batch]
                .iter()
                .chain(
                    (0..x[0].ndim())
                        .filter(|d| !axes.contains(d))
                        .map(|d| &x[0].shape()[d]),
                )
                .map(|&d| d as i64)
                .collect();
            let updates = reshape(updates, &kept)?;
            one(scatter(&x[0], &x[1..n - 1], &updates, &axes, mode)?)
        }),
        ("Sort", &[I], |x, s, _| one(sort(&x[0], Some(s.int(0)?))?)),
        ("ArgSort", &[I], |x, s, _| {
            one(argsort(&x[0], Some(s.int(0)?))?)
        }),
        ("Partition", &[I, I], |x, s, _| {
            one(partition(&x[0], s.int(0)? as i64, Some(s.int(1)?))?)
        }),
        ("ArgPartition", &[I, I], |x, s, _| {
            one(argpartition(&x[0], s.int(0)? as i64, Some(s.int(1)?))?)
        }),
        ("RandomBits", &[V, I], |x, s, _| {
            let width = usize::try_from(s.int(1)?).map_err(|_| s.mismatch())?;
            one(crate::ops::random::bits(&s.sizes(0)?, width, Some(&x[0]))?)
        }),
        ("QuantizedMatmul", &[I, I, I, B], |x, s, _| {
            let q = quantization(s)?;
            let biases = match (q.mode, x.len()) {
                (QuantizationMode::Affine, 4) => Some(&x[3]),
                (QuantizationMode::Affine, _) => return Err(s.unsupported("no biases")),
                _ => None,
            };
            one(quantized_matmul(
                &x[0],
                &x[1],
                &x[2],
                biases,
                s.bool(3)?,
                q,
            )?)
        }),
        // State: the two "indices are sorted" hints. Inputs: a, b and both index arrays
        // (MLX fills a missing one with an arange).
        ("GatherMM", &[B, B], |x, s, _| {
            let [a, b, lhs, rhs] = x else {
                return Err(s.mismatch());
            };
            one(gather_mm(a, b, Some(lhs), Some(rhs))?)
        }),
        // State: group size, bits, mode, transpose and the two sorted hints. Inputs: x, the
        // packed w, scales, biases (affine mode only), then both index arrays.
        ("GatherQMM", &[I, I, I, B, B, B], |x, s, _| {
            let q = quantization(s)?;
            let affine = q.mode == QuantizationMode::Affine;
            let (biases, lhs, rhs) = match x {
                [_, _, _, b, l, r] if affine => (Some(b), l, r),
                [_, _, _, l, r] if !affine => (None, l, r),
                _ => return Err(s.mismatch()),
            };
            let (w, scales) = (&x[1], &x[2]);
            let transpose = s.bool(3)?;
            one(gather_qmm(
                &x[0],
                w,
                scales,
                biases,
                Some(lhs),
                Some(rhs),
                transpose,
                q,
            )?)
        }),
        // State: the block size. Inputs: a, b, then the output mask if any, then the two
        // operand masks if any.
        ("BlockMaskedMM", &[I], |x, s, _| {
            let (out_mask, lhs_mask, rhs_mask) = match x.len() {
                3 => (Some(&x[2]), None, None),
                4 => (None, Some(&x[2]), Some(&x[3])),
                5 => (Some(&x[2]), Some(&x[3]), Some(&x[4])),
                _ => return Err(s.mismatch()),
            };
            one(block_masked_mm(
                &x[0],
                &x[1],
                s.int(0)?,
                out_mask,
                lhs_mask,
                rhs_mask,
            )?)
        }),
        // Inputs: the target, a mask of its shape and the values, all with a leading batch
        // axis; each batch row's true positions take that row's values in order.
        ("MaskedScatter", &[], |x, s, _| {
            let [target, mask, values] = x else {
                return Err(s.mismatch());
            };
            if values.size() == 0 {
                return one(target.clone());
            }
            let rows = target.shape().first().copied().unwrap_or(1);
            let values = astype(values, target.dtype())?;
            one(masked_scatter(target, mask, &values, rows)?)
        }),
        // Inputs: the arrays passed through, then those they wait for.
        ("Depends", &[], |x, _, out| {
            let (passed, waited) = x.split_at(out.len().min(x.len()));
            depends(passed, waited)
        }),
        ("Quantize", &[N, I, I, I, B], |x, s, out| {
            // State: group size, bits, mode, whether it dequantizes.
            let q = quantization(s)?;
            let affine = q.mode == QuantizationMode::Affine;
            if s.bool(3)? {
                if affine && x.len() != 3 {
                    return Err(s.unsupported("no biases"));
                }
                let (biases, global) = if affine {
                    (Some(&x[2]), None)
                } else {
                    (None, x.get(2))
                };
                let dtype = Some(out[0].dtype);
                return one(dequantize(&x[0], &x[1], biases, q, global, dtype)?);
            }
            let (w, scales, biases) = quantize(&x[0], q, x.get(1))?;
            Ok([Some(w), Some(scales), biases]
                .into_iter()
                .flatten()
                .collect())
        }),
        ("Convolution", &[V, V, V, V, V, I, B], |x, s, _| {
            let params = ConvGeneral {
                stride: s.ints(0)?,
                padding_lo: s.ints(1)?,
                padding_hi: s.ints(2)?,
                kernel_dilation: s.ints(3)?,
                input_dilation: s.ints(4)?,
                groups: s.int(5)? as i64,
                flip: s.bool(6)?,
            };
            one(conv_general(&x[0], &x[1], &params)?)
        }),
        ("NumberOfElements", &[V, B, T], |x, s, _| {
            let axes = axes_of(s, 0, x[0].ndim())?;
            let n: usize = axes.iter().map(|&a| x[0].shape()[a]).product();
            let n = n as f64;
            let value = if s.bool(1)? { 1.0 / n } else { n };
            one(astype(&Array::scalar(value), s.dtype(2)?)?)
        }),
        // MLX passes a scalar 1 for a missing weight and a scalar 0 for a missing bias.
        ("RMSNorm", &[N, F], |x, s, _| {
            let weight = x.get(1).ok_or_else(|| s.mismatch())?;
            let y = fast::rms_norm(&x[0], vector(weight), s.float(0)?)?;
            one(scaled_by_scalar(y, weight)?)
        }),
        ("LayerNorm", &[N, F], |x, s, _| {
            let (weight, bias) = (x.get(1).ok_or_else(|| s.mismatch())?, x.get(2));
            one(layer_norm_of(&x[0], weight, bias, s.float(0)?)?)
        }),
        // The gradients MLX records for the fused norms on a GPU. Inputs: the norm's inputs
        // (scalar stand-ins included), then the cotangent; outputs: one cotangent per
        // input but the last, zeros for a stand-in (as MLX gives them).
        ("RMSNormVJP", &[N, F], |x, s, _| {
            let [input, weight, cotangent] = x else {
                return Err(s.mismatch());
            };
            let eps = s.float(0)?;
            let norm = |p: &[Array]| {
                let y = fast::rms_norm(&p[0], vector(&p[1]), eps)?;
                Ok(vec![scaled_by_scalar(y, &p[1])?])
            };
            let primals = [input.clone(), weight.clone()];
            let (_, grads) =
                crate::transforms::vjp(norm, &primals, std::slice::from_ref(cotangent))?;
            norm_cotangents(grads, &primals)
        }),
        ("LayerNormVJP", &[N, F], |x, s, _| {
            let [input, weight, bias, cotangent] = x else {
                return Err(s.mismatch());
            };
            let eps = s.float(0)?;
            let norm = |p: &[Array]| Ok(vec![layer_norm_of(&p[0], &p[1], Some(&p[2]), eps)?]);
            let primals = [input.clone(), weight.clone(), bias.clone()];
            let (_, grads) =
                crate::transforms::vjp(norm, &primals, std::slice::from_ref(cotangent))?;
            norm_cotangents(grads, &primals)
        }),
        // State: dims, traditional, base, scale, forward (false: the inverse rotation of
        // the vjp). Inputs: the array, its offset and, optionally, the frequencies.
        ("RoPE", &[N, I, B, F, F, B], |x, s, _| {
            let dims = usize::try_from(s.int(0)?).map_err(|_| s.mismatch())?;
            let (offset, freqs) = (x.get(1).ok_or_else(|| s.mismatch())?, x.get(2));
            let frequencies = match freqs {
                Some(f) => fast::RopeFrequencies::Freqs(f.clone()),
                None => fast::RopeFrequencies::Base(s.float(2)?),
            };
            // Rotating by minus each angle undoes the rotation.
            let scale = if s.bool(4)? {
                s.float(3)?
            } else {
                -s.float(3)?
            };
            one(fast::rope(
                &x[0],
                dims,
                s.bool(1)?,
                frequencies,
                scale,
                offset.clone(),
            )?)
        }),
        // State: scale, causal, sinks, logsumexp output, forced fusion. Inputs: queries,
        // keys, values, then the mask (broadcast by MLX) and the sinks if present.
        (
            "ScaledDotProductAttention",
            &[N, F, B, B, B, B],
            |x, s, _| {
                if s.bool(3)? {
                    return Err(Error::value(
                        "[import_function] ScaledDotProductAttention with its logsumexp output \
                     (recorded in gradients on a GPU) is not supported by lazulite yet.",
                    ));
                }
                let has_sinks = s.bool(2)?;
                let masks = x.len().checked_sub(3 + has_sinks as usize);
                let mask = match (masks, s.bool(1)?) {
                    (Some(0), false) => None,
                    (Some(0), true) => Some(fast::AttentionMask::Causal),
                    (Some(1), false) => Some(fast::AttentionMask::Array(x[3].clone())),
                    _ => return Err(s.mismatch()),
                };
                let sinks = if has_sinks { x.last() } else { None };
                let (q, k, v) = (&x[0], &x[1], &x[2]);
                one(fast::scaled_dot_product_attention(
                    q,
                    k,
                    v,
                    s.float(0)?,
                    mask.as_ref(),
                    sinks,
                )?)
            },
        ),
        ("Pad", &[V, V, V], |x, s, _| {
            // Inputs: the array and its fill value; state: axes, low and high widths.
            let (axes, lo, hi) = (axes_of(s, 0, x[0].ndim())?, s.ints(1)?, s.ints(2)?);
            if lo.len() != axes.len() || hi.len() != axes.len() {
                return Err(s.mismatch());
            }
            let mut widths = vec![(0i64, 0i64); x[0].ndim()];
            for (k, &a) in axes.iter().enumerate() {
                widths[a] = (lo[k], hi[k]);
            }
            one(pad(&x[0], &widths, "constant", x[1].clone())?)
        }),
        ("AsStrided", &[V, L, Z], |x, s, _| {
            let offset = i64::try_from(s.size(2)?).map_err(|_| s.mismatch())?;
            let (shape, strides) = (s.sizes(0)?, s.int64s(1)?);
            one(as_strided(&x[0], Some(&shape), Some(&strides), offset)?)
        }),
        ("ScatterAxis", &[I, I], |x, s, _| {
            let axis = usize::try_from(s.int(1)?)
                .ok()
                .filter(|&a| a < x[0].ndim())
                .ok_or_else(|| s.mismatch())?;
            // `ScatterAxis::ReduceType` is `{Sum, None}`; MLX has broadcast the inputs.
            one(match s.int(0)? {
                0 => crate::ops::indexing::scatter_add_along_axis(&x[0], &x[1], &x[2], axis)?,
                1 => put_along_axis(&x[0], &x[1], &x[2], Some(axis as i32))?,
                r => return Err(s.unsupported(format!("reduction {r}"))),
            })
        }),
        ("DynamicSlice", &[V, V], |x, s, _| {
            one(dynamic_slice(&x[0], &x[1], &s.axes(0)?, &s.sizes(1)?)?)
        }),
        ("DynamicSliceUpdate", &[V], |x, s, _| {
            one(dynamic_slice_update(&x[0], &x[1], &x[2], &s.axes(0)?)?)
        }),
        ("FFT", &[ZV, B, B, B], |x, s, out| {
            // State: axes, inverse, real, and whether a real inverse transform's output
            // has an odd length (read here from the recorded output shape).
            use crate::ops::fft::{fftn, ifftn, irfftn, rfftn, FftNorm};
            let axes = s.size_axes(0, x[0].ndim())?;
            let (inverse, real) = (s.bool(1)?, s.bool(2)?);
            // The transform sizes: the output's for a real inverse transform (its input
            // holds half a spectrum), the input's otherwise. MLX scales only the inverse
            // transforms, by one over their size, as the "backward" norm does.
            let sized_by = if real && inverse {
                &out[0].shape
            } else {
                x[0].shape()
            };
            if axes.iter().any(|&a| a >= sized_by.len()) {
                return Err(s.mismatch());
            }
            let n: Vec<i64> = axes.iter().map(|&a| sized_by[a] as i64).collect();
            let axes: Vec<i32> = axes.iter().map(|&a| a as i32).collect();
            let f = match (inverse, real) {
                (false, false) => fftn,
                (true, false) => ifftn,
                (false, true) => rfftn,
                (true, true) => irfftn,
            };
            one(f(&x[0], Some(&n), Some(&axes), FftNorm::Backward)?)
        }),
        ("Inverse", &[B, B], |x, s, _| {
            one(if s.bool(0)? {
                linalg::tri_inv(&x[0], s.bool(1)?)?
            } else {
                linalg::inv(&x[0])?
            })
        }),
        ("Cholesky", &[B], |x, s, _| {
            one(cholesky(&x[0], s.bool(0)?)?)
        }),
        ("QRF", &[], |x, _, _| {
            let (q, r) = linalg::qr(&x[0])?;
            Ok(vec![q, r])
        }),
        ("SVD", &[B], |x, s, _| linalg::svd(&x[0], s.bool(0)?)),
        ("Eigh", &[S, B], |x, s, _| {
            let uplo = s.string(0)?;
            if s.bool(1)? {
                let (w, v) = linalg::eigh(&x[0], uplo)?;
                Ok(vec![w, v])
            } else {
                one(linalg::eigvalsh(&x[0], uplo)?)
            }
        }),
        ("Eig", &[B], |x, s, _| {
            if s.bool(0)? {
                let (w, v) = linalg::eig(&x[0])?;
                Ok(vec![w, v])
            } else {
                one(linalg::eigvals(&x[0])?)
            }
        }),
        ("SearchSorted", &[B], |x, s, _| {
            let side = if s.bool(0)? { "right" } else { "left" };
            one(searchsorted(&x[0], &x[1], side)?)
        }),
        ("Hadamard", &[F], |x, s, _| {
            one(hadamard_transform(&x[0], Some(s.float(0)?))?)
        }),
        ("DivMod", &[], |x, _, _| {
            let (q, r) = divmod(&x[0], &x[1])?;
            Ok(vec![q, r])
        }),
    ]
}

/// The shape of `inputs` broadcast together, but for their last `keep` axes, which are
/// the first input's.
fn broadcast_all(inputs: &[Array], keep: usize) -> Result<Vec<usize>> {
    let mut lead: Vec<usize> = vec![];
    for a in inputs {
        lead = crate::shape::broadcast_shapes(&lead, &a.shape()[..a.ndim() - keep])?;
    }
    let own = inputs[0].shape();
    lead.extend_from_slice(&own[own.len() - keep..]);
    Ok(lead)
}

/// MLX primitives without an output shape rule: a shapeless function using one cannot
/// be replayed, in MLX or here.
pub(crate) const SHAPE_FIXED: &[&str] = &[
    "AsStrided",
    "FFT",
    "Pad",
    "RandomBits",
    "Slice",
    "Split",
    "View",
];

/// The state layout and interpretation of the MLX primitive `name`.
pub(crate) fn lookup(name: &str) -> Option<(&'static str, &'static [Field], Interpret)> {
    table().iter().find(|(n, _, _)| *n == name).copied()
}

/// The axes in field `i`, each checked against `ndim`.
fn axes_of(s: &State, i: usize, ndim: usize) -> Result<Vec<usize>> {
    s.axes(i)?
        .iter()
        .map(|&a| usize::try_from(a).ok().filter(|&a| a < ndim))
        .collect::<Option<Vec<usize>>>()
        .ok_or_else(|| s.mismatch())
}

/// Checks that MLX's slice sizes of a gather or scatter name one size per axis of `a`,
/// none larger than the axis.
fn check_slice_sizes(s: &State, a: &Array, sizes: &[usize]) -> Result<()> {
    if sizes.len() == a.ndim() && sizes.iter().zip(a.shape()).all(|(s, n)| s <= n) {
        Ok(())
    } else {
        Err(s.unsupported(format!("slice sizes {sizes:?}")))
    }
}

/// Whether a gather or scatter reads or writes whole slices of the axes it does not
/// index (and one element of those it does), as lazulite's own gather and scatter do.
fn whole_slices(a: &Array, axes: &[usize], sizes: &[usize]) -> bool {
    (0..a.ndim()).all(|d| sizes[d] == if axes.contains(&d) { 1 } else { a.shape()[d] })
}

/// The coordinates of every element a gather or scatter of MLX with partial slices
/// touches, one int64 array per axis of an array of `shape`, each of the shape of the
/// indices followed by `sizes`: at batch position `b` and window position `w`, axis `d`
/// is at `indices[k][b] + w[d]` if it is the `k`-th indexed axis (a negative index
/// counting from the end), at `w[d]` otherwise.
fn window_coordinates(
    shape: &[usize],
    indices: &[Array],
    axes: &[usize],
    sizes: &[usize],
) -> Result<Vec<Array>> {
    let mut batch: Vec<usize> = vec![];
    for i in indices {
        batch = crate::shape::broadcast_shapes(&batch, i.shape())?;
    }
    let (nb, nd) = (batch.len(), shape.len());
    let full: Vec<usize> = batch.iter().chain(sizes).copied().collect();
    (0..nd)
        .map(|d| {
            let mut along = vec![1i64; nb + nd];
            along[nb + d] = sizes[d] as i64;
            let mut c = reshape(&arange(0.0, sizes[d] as f64, 1.0, DType::Int64)?, &along)?;
            if let Some(k) = axes.iter().position(|&a| a == d) {
                let i = astype(&indices[k], DType::Int64)?;
                let from_end = add(&i, Array::scalar(shape[d] as i64))?;
                let i = where_(&less(&i, Array::scalar(0i64))?, &from_end, &i)?;
                let i = broadcast_to(&i, &batch)?;
                let lead: Vec<i64> = batch.iter().map(|&n| n as i64).chain(vec![1; nd]).collect();
                c = add(&reshape(&i, &lead)?, &c)?;
            }
            broadcast_to(&c, &full)
        })
        .collect()
}

fn dims(shape: &[usize]) -> Vec<i64> {
    shape.iter().map(|&d| d as i64).collect()
}
