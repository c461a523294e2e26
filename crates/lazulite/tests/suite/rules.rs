//! The transform rules of every primitive, as one table (after JAX's
//! `lax_autodiff_test.py`). Each row names the primitive it exercises, builds its inputs,
//! gives a function of them and the checks that apply: vjp and jvp against float64
//! central differences, vmap against a loop over the mapped axis, lazulite's typed error
//! where a primitive has no rule, and for the stand-ins of `compile` and export, the
//! compiled or exported function against the eager one.
//!
//! `every_row_matches_its_oracle` walks the whole table, reports every failing row by
//! name, and checks that each row's function records the primitive the row names (read
//! from the traced graphs with `primitive_types`). `the_rows_name_every_primitive` scans
//! the crate's sources for `impl Primitive for` and requires the rows to name exactly
//! those types: a new primitive cannot land without a row.

use crate::common;
use common::{array, uniform};

use lazulite::distributed::{self, Group};
use lazulite::export::{export_function, import_function, Kwargs};
use lazulite::fft::{self, FftNorm};
use lazulite::{
    at, idx, index, index_put, jvp, linalg, primitive_types, vjp, Array, Axes, DType, ErrorKind,
    Quantization, Result,
};
use std::collections::BTreeSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

type RowFn = Arc<dyn Fn(&[Array]) -> Result<Array> + Send + Sync>;

#[derive(Clone, Copy, Debug)]
enum Transform {
    Vjp,
    Jvp,
}

enum Check {
    /// vjp and jvp against float64 central differences at the row's inputs.
    Derivatives,
    /// vjp alone against float64 central differences, for a rule with no jvp.
    Vjp,
    /// vmap against a loop over the mapped axes of these inputs.
    Vmap {
        inputs: Vec<Array>,
        in_axes: Vec<Option<i32>>,
        out_axis: i32,
    },
    /// The transform fails with lazulite's `NotImplemented` error, without panicking.
    NoRule(Transform),
    /// `compile` of the function gives the eager function's values.
    Compiled,
    /// The function exported to an `.mlxfn` file and imported again gives its values.
    Exported,
}

struct Row {
    /// The primitive's type as `std::any::type_name` spells it, without the crate name:
    /// `"ops::unary::Unary"`.
    primitive: &'static str,
    name: String,
    inputs: Vec<Array>,
    f: RowFn,
    checks: Vec<Check>,
    /// Collectives record a node only in a group of several processes (under `mpirun`);
    /// in a group of one they are the identity, and their rows are skipped.
    needs_peers: bool,
}

fn row(
    primitive: &'static str,
    name: impl Into<String>,
    inputs: Vec<Array>,
    f: impl Fn(&[Array]) -> Result<Array> + Send + Sync + 'static,
) -> Row {
    Row {
        primitive,
        name: name.into(),
        inputs,
        f: Arc::new(f),
        checks: vec![],
        needs_peers: false,
    }
}

impl Row {
    fn derivatives(mut self) -> Row {
        self.checks.push(Check::Derivatives);
        self
    }

    fn vjp_only(mut self) -> Row {
        self.checks.push(Check::Vjp);
        self
    }

    /// vmap over `inputs` (batched versions of the row's inputs).
    fn vmap(mut self, inputs: Vec<Array>, in_axes: Vec<Option<i32>>, out_axis: i32) -> Row {
        self.checks.push(Check::Vmap {
            inputs,
            in_axes,
            out_axis,
        });
        self
    }

    /// vmap over the row's own inputs.
    fn vmap_own(self, in_axes: Vec<Option<i32>>, out_axis: i32) -> Row {
        let inputs = self.inputs.clone();
        self.vmap(inputs, in_axes, out_axis)
    }

    fn no_rule(mut self, transform: Transform) -> Row {
        self.checks.push(Check::NoRule(transform));
        self
    }

    fn compiled(mut self) -> Row {
        self.checks.push(Check::Compiled);
        self
    }

    fn exported(mut self) -> Row {
        self.checks.push(Check::Exported);
        self
    }

    fn needs_peers(mut self) -> Row {
        self.needs_peers = true;
        self
    }
}

// Inputs.

fn uniform_array(seed: u64, shape: &[usize], lo: f64, hi: f64) -> Array {
    array(&uniform(seed, shape.iter().product(), lo, hi), shape)
}

/// Seeded values in [-1, 1).
fn seeded(seed: u64, shape: &[usize]) -> Array {
    uniform_array(seed, shape, -1.0, 1.0)
}

/// A transposed view of a fresh `[rows, cols]` array: shape `[cols, rows]`, strided.
fn transposed(seed: u64, rows: usize, cols: usize) -> Array {
    seeded(seed, &[rows, cols]).t().unwrap()
}

fn ints(values: &[i32], shape: &[usize]) -> Array {
    Array::from_slice(values, shape).unwrap()
}

/// `x` plus `constant(x)` cast to float64: `constant` has an integer or bool result, whose
/// derivative must be zero, so the derivatives are those of `x` alone.
fn plus_constant(x: &Array, constant: impl Fn(&Array) -> Result<Array>) -> Result<Array> {
    lazulite::add(x, &constant(x)?.astype(DType::Float64)?)
}

/// `x * 4` truncated to int32: integer operands for the bitwise rows.
fn integers(x: &Array) -> Result<Array> {
    (x * 4.0).astype(DType::Int32)
}

/// `[3, 4]` inputs in four layouts: contiguous, transposed, reversed by a negative-step
/// slice, and broadcast (repeated rows).
fn layouts_3x4(seed: u64, lo: f64, hi: f64) -> Vec<(&'static str, Array)> {
    vec![
        ("contiguous", uniform_array(seed, &[3, 4], lo, hi)),
        (
            "transposed",
            uniform_array(seed + 1, &[4, 3], lo, hi).t().unwrap(),
        ),
        (
            "reversed",
            lazulite::slice(
                &uniform_array(seed + 2, &[6, 4], lo, hi),
                &[5, 0],
                &[i64::MIN, 4],
                &[-2, 1],
            )
            .unwrap(),
        ),
        (
            "broadcast",
            lazulite::broadcast_to(&uniform_array(seed + 3, &[4], lo, hi), &[3, 4]).unwrap(),
        ),
    ]
}

// The table, by family.

fn unary_rows() -> Vec<Row> {
    const UNARY: &str = "ops::unary::Unary";
    let x = uniform_array(1, &[2, 3], 0.2, 0.8);
    let big = uniform_array(2, &[2, 3], 1.2, 3.0);
    type UnaryFn = fn(&Array) -> Result<Array>;
    let ops: Vec<(&str, UnaryFn, &Array)> = vec![
        ("abs", lazulite::abs, &x),
        ("negative", lazulite::negative, &x),
        ("square", lazulite::square, &x),
        ("sqrt", lazulite::sqrt, &x),
        ("rsqrt", lazulite::rsqrt, &x),
        ("reciprocal", lazulite::reciprocal, &x),
        ("exp", lazulite::exp, &x),
        ("expm1", lazulite::expm1, &x),
        ("log", lazulite::log, &x),
        ("log1p", lazulite::log1p, &x),
        ("log2", lazulite::log2, &x),
        ("log10", lazulite::log10, &x),
        ("sin", lazulite::sin, &x),
        ("cos", lazulite::cos, &x),
        ("tan", lazulite::tan, &x),
        ("arcsin", lazulite::arcsin, &x),
        ("arccos", lazulite::arccos, &x),
        ("arctan", lazulite::arctan, &x),
        ("sinh", lazulite::sinh, &x),
        ("cosh", lazulite::cosh, &x),
        ("tanh", lazulite::tanh, &x),
        ("arcsinh", lazulite::arcsinh, &x),
        ("arccosh", lazulite::arccosh, &big),
        ("arctanh", lazulite::arctanh, &x),
        ("sigmoid", lazulite::sigmoid, &x),
        ("softplus", lazulite::softplus, &x),
        ("erf", lazulite::erf, &x),
        ("erfinv", lazulite::erfinv, &x),
        ("real (real input)", lazulite::real, &x),
        ("imag (real input)", lazulite::imag, &x),
        ("conjugate (real input)", lazulite::conjugate, &x),
        (
            "floor (zero derivative)",
            |x| plus_constant(x, |x| lazulite::floor(&(x * 3.0))),
            &x,
        ),
        (
            "ceil (zero derivative)",
            |x| plus_constant(x, |x| lazulite::ceil(&(x * 3.0))),
            &x,
        ),
        (
            "trunc (zero derivative)",
            |x| plus_constant(x, |x| lazulite::trunc(&(x * 3.0 - 1.0))),
            &x,
        ),
        (
            "sign (zero derivative)",
            |x| lazulite::add(x, lazulite::sign(&(x - 0.5))?),
            &x,
        ),
        (
            "isnan (zero derivative)",
            |x| plus_constant(x, lazulite::isnan),
            &x,
        ),
        (
            "isinf (zero derivative)",
            |x| plus_constant(x, lazulite::isinf),
            &x,
        ),
        (
            "isposinf (zero derivative)",
            |x| plus_constant(x, lazulite::isposinf),
            &x,
        ),
        (
            "isneginf (zero derivative)",
            |x| plus_constant(x, lazulite::isneginf),
            &x,
        ),
        (
            "isfinite (zero derivative)",
            |x| plus_constant(x, lazulite::isfinite),
            &x,
        ),
        (
            "logical_not (zero derivative)",
            |x| plus_constant(x, |x| lazulite::logical_not(&(x - 0.5))),
            &x,
        ),
        (
            "bitwise_invert (zero derivative)",
            |x| {
                plus_constant(x, |x| {
                    lazulite::bitwise_invert(&(x * 3.0).astype(DType::Int32)?)
                })
            },
            &x,
        ),
    ];
    let batch = uniform_array(11, &[2, 3, 4], 0.1, 0.9);
    let mut rows: Vec<Row> = ops
        .into_iter()
        .map(|(name, op, input)| {
            row(UNARY, name, vec![input.clone()], move |p| op(&p[0]))
                .derivatives()
                .vmap_own(vec![Some(1)], 0)
        })
        .collect();
    // Finite differences see the identity; the gradient is zero by design (tested in
    // transforms.rs).
    rows.push(
        row(UNARY, "stop_gradient", vec![x.clone()], |p| {
            p[0].stop_gradient()
        })
        .vmap_own(vec![Some(1)], 0),
    );
    rows.push(
        row(UNARY, "sin batched", vec![], |p| p[0].sin())
            .vmap(vec![batch.clone()], vec![Some(1)], 0)
            .vmap(vec![batch], vec![Some(-1)], -1),
    );
    rows
}

fn binary_rows() -> Vec<Row> {
    const BINARY: &str = "ops::binary::Binary";
    let a = uniform_array(3, &[2, 3], 0.5, 2.0);
    let b = uniform_array(4, &[2, 3], -2.0, -0.5);
    type BinaryFn = fn(&Array, &Array) -> Result<Array>;
    let ops: Vec<(&str, BinaryFn)> = vec![
        ("add", |a, b| lazulite::add(a, b)),
        ("subtract", |a, b| lazulite::subtract(a, b)),
        ("multiply", |a, b| lazulite::multiply(a, b)),
        ("divide", |a, b| lazulite::divide(a, b)),
        ("power", |a, b| lazulite::power(a, b)),
        ("maximum", |a, b| lazulite::maximum(a, b)),
        ("minimum", |a, b| lazulite::minimum(a, b)),
        ("arctan2", |a, b| lazulite::arctan2(a, b)),
        ("logaddexp", |a, b| lazulite::logaddexp(a, b)),
        ("remainder", |a, b| lazulite::remainder(a, b)),
        // A composite: the product with a constant.
        ("degrees", |a, _| lazulite::degrees(a)),
        ("greater (bool result)", |a, b| {
            plus_constant(a, |a| lazulite::greater(a, b))
        }),
        ("equal (bool result)", |a, b| {
            lazulite::add(&plus_constant(a, |a| lazulite::equal(a, a))?, b)
        }),
        ("not_equal (bool result)", |a, b| {
            plus_constant(a, |a| lazulite::not_equal(a, b))
        }),
        ("less (bool result)", |a, b| {
            plus_constant(a, |a| lazulite::less(a, b))
        }),
        ("less_equal (bool result)", |a, b| {
            plus_constant(a, |a| lazulite::less_equal(a, b))
        }),
        ("greater_equal (bool result)", |a, b| {
            plus_constant(a, |a| lazulite::greater_equal(a, b))
        }),
        ("logical_and (bool result)", |a, b| {
            plus_constant(a, |a| lazulite::logical_and(a, b))
        }),
        ("logical_or (bool result)", |a, b| {
            plus_constant(a, |a| lazulite::logical_or(a, b))
        }),
        ("floor_divide (zero derivative)", |a, b| {
            plus_constant(a, |a| lazulite::floor_divide(a, b))
        }),
        ("bitwise_and (integer result)", |a, b| {
            plus_constant(a, |a| lazulite::bitwise_and(integers(a)?, integers(b)?))
        }),
        ("bitwise_or (integer result)", |a, b| {
            plus_constant(a, |a| lazulite::bitwise_or(integers(a)?, integers(b)?))
        }),
        ("bitwise_xor (integer result)", |a, b| {
            plus_constant(a, |a| lazulite::bitwise_xor(integers(a)?, integers(b)?))
        }),
        ("left_shift (integer result)", |a, b| {
            plus_constant(a, |a| lazulite::left_shift(integers(a)?, integers(&-b)?))
        }),
        ("right_shift (integer result)", |a, b| {
            plus_constant(a, |a| lazulite::right_shift(integers(a)?, integers(&-b)?))
        }),
    ];
    let mut rows: Vec<Row> = ops
        .into_iter()
        .map(|(name, op)| {
            row(BINARY, name, vec![a.clone(), b.clone()], move |p| {
                op(&p[0], &p[1])
            })
            .derivatives()
            .vmap_own(vec![Some(0), Some(0)], 1)
        })
        .collect();
    // Broadcasting: the gradient of the smaller operand sums over the broadcast axes.
    let wide = seeded(5, &[3, 4]);
    let narrow = uniform_array(6, &[4], 0.5, 1.0);
    rows.push(
        row(
            BINARY,
            "multiply broadcast",
            vec![wide.clone(), narrow.clone()],
            |p| lazulite::multiply(&p[0], &p[1]),
        )
        .derivatives(),
    );
    rows.push(
        row(BINARY, "divide broadcast", vec![wide, narrow], |p| {
            lazulite::divide(&p[0], &p[1])
        })
        .derivatives(),
    );
    let x = uniform_array(11, &[2, 3, 4], 0.1, 0.9);
    let y = uniform_array(12, &[3, 4], 0.1, 0.9);
    let z = uniform_array(13, &[4, 3], 0.1, 0.9);
    rows.push(
        row(BINARY, "add, one input batched", vec![], |p| {
            lazulite::add(&p[0], &p[1])
        })
        .vmap(vec![x.clone(), y], vec![Some(0), None], 1),
    );
    rows.push(
        row(BINARY, "multiply, both batched", vec![], |p| {
            lazulite::multiply(&p[0], &p[1])
        })
        .vmap(vec![x, z], vec![Some(2), Some(0)], 0),
    );
    rows
}

fn cast_and_select_rows() -> Vec<Row> {
    let x = uniform_array(11, &[2, 3, 4], 0.1, 0.9);
    let mut rows = vec![
        // A float-to-int cast has a zero derivative; vmap batches any cast.
        row(
            "ops::cast::AsType",
            "astype to int (zero derivative)",
            vec![seeded(14, &[3, 4])],
            |p| plus_constant(&p[0], |x| lazulite::multiply(x, 4.0)?.astype(DType::Int32)),
        )
        .derivatives(),
        row("ops::cast::AsType", "astype to float32", vec![], |p| {
            p[0].astype(DType::Float32)
        })
        .vmap(vec![x], vec![Some(1)], 0),
    ];
    let (a, t, b, r) = (
        uniform_array(21, &[3, 4], 0.1, 0.9),
        uniform_array(22, &[4, 3], 0.1, 0.9).t().unwrap(),
        lazulite::broadcast_to(&uniform_array(23, &[4], 0.1, 0.9), &[3, 4]).unwrap(),
        lazulite::slice(
            &uniform_array(24, &[6, 4], 0.1, 0.9),
            &[5, 0],
            &[i64::MIN, 4],
            &[-2, 1],
        )
        .unwrap(),
    );
    let cond = lazulite::greater(seeded(30, &[3, 4]), 0.0).unwrap();
    for (layout, inputs) in [("", vec![a, t]), (" (broadcast, reversed)", vec![b, r])] {
        let c = cond.clone();
        rows.push(
            row(
                "ops::ternary::Select",
                format!("where of two inputs{layout}"),
                inputs.clone(),
                move |p| lazulite::where_(&c, &p[0], &p[1]),
            )
            .derivatives(),
        );
        rows.push(
            row(
                "ops::ternary::Select",
                format!("where broadcast{layout}"),
                inputs,
                |p| {
                    lazulite::where_(
                        lazulite::less(&p[0], &p[1])?,
                        &p[0],
                        &lazulite::slice(&p[1], &[0, 0], &[1, 4], &[1, 1])?,
                    )
                },
            )
            .derivatives(),
        );
    }
    let xb = uniform_array(50, &[5, 3, 4], 0.1, 0.9);
    let y = uniform_array(51, &[3, 4], 0.1, 0.9);
    let cond = lazulite::greater(&y, 0.5).unwrap();
    rows.push(
        row(
            "ops::ternary::Select",
            "where, condition fixed",
            vec![],
            move |p| lazulite::where_(&cond, &p[0], &p[1]),
        )
        .vmap(vec![xb.clone(), y.clone()], vec![Some(0), None], 1)
        .vmap(
            vec![lazulite::swapaxes(&xb, 0, 1).unwrap(), xb.clone()],
            vec![Some(1), Some(0)],
            -2,
        ),
    );
    rows.push(
        row(
            "ops::ternary::Select",
            "where, condition batched",
            vec![],
            |p| lazulite::where_(lazulite::less(&p[0], 0.5)?, &p[1], 0.0),
        )
        .vmap(vec![xb.clone(), y], vec![Some(0), None], 1)
        .vmap(
            vec![lazulite::swapaxes(&xb, 0, 1).unwrap(), xb],
            vec![Some(1), Some(0)],
            -2,
        ),
    );
    rows
}

/// The one-input shape and ternary cases, each checked on four layouts and batched.
fn shape_rows() -> Vec<Row> {
    type Case = (&'static str, &'static str, fn(&[Array]) -> Result<Array>);
    let cases: Vec<Case> = vec![
        ("ops::shape::Concatenate", "concatenate", |p| {
            lazulite::concatenate(&[p[0].clone(), p[0].sin()?], 1)
        }),
        ("ops::shape::Concatenate", "concatenate -2", |p| {
            lazulite::concatenate(&[p[0].clone(), p[0].square()?, p[0].clone()], -2)
        }),
        ("ops::creation::Diagonal", "diagonal", |p| {
            lazulite::diagonal(&p[0], 0, 0, 1)
        }),
        ("ops::creation::Diagonal", "diagonal +1", |p| {
            lazulite::diagonal(&p[0], 1, 0, 1)
        }),
        ("ops::creation::Diagonal", "diagonal -1 swapped", |p| {
            lazulite::diagonal(&p[0], -1, 1, 0)
        }),
        ("ops::creation::Diagonal", "diagonal 3-d", |p| {
            lazulite::diagonal(&lazulite::reshape(&p[0], &[3, 2, 2])?, 1, 2, 0)
        }),
        ("ops::shape::AsStrided", "as_strided windows", |p| {
            lazulite::as_strided(&p[0], Some(&[5, 4]), Some(&[2, 1]), 0)
        }),
        ("ops::shape::AsStrided", "as_strided negative", |p| {
            lazulite::as_strided(&p[0], Some(&[3, 3]), Some(&[-4, 1]), 8)
        }),
        ("ops::shape::Contiguous", "contiguous", |p| {
            lazulite::contiguous(&p[0].t()?, false)
        }),
        ("ops::ternary::Select", "where", |p| {
            lazulite::where_(lazulite::greater(&p[0], 0.5)?, p[0].sin()?, p[0].square()?)
        }),
        ("ops::binary::Binary", "clip", |p| {
            lazulite::clip(&p[0], Some(0.3.into()), Some(0.7.into()))
        }),
        ("ops::ternary::Select", "nan_to_num", |p| {
            lazulite::nan_to_num(&p[0], 0.0, None, None)
        }),
        ("ops::shape::Concatenate", "pad constant", |p| {
            lazulite::pad(&p[0], &[(1, 2), (0, 1)], "constant", 0.5)
        }),
        ("ops::shape::Concatenate", "pad edge", |p| {
            lazulite::pad(&p[0], &[(2, 1)], "edge", 0)
        }),
        ("ops::shape::Concatenate", "pad reflect", |p| {
            lazulite::pad(&p[0], &[(2, 3)], "reflect", 0)
        }),
        ("ops::shape::Concatenate", "pad symmetric", |p| {
            lazulite::pad(&p[0], &[(1, 4)], "symmetric", 0)
        }),
        ("ops::view::Broadcast", "tile", |p| {
            lazulite::tile(&p[0], &[2, 1, 2])
        }),
        ("ops::view::Broadcast", "repeat", |p| {
            lazulite::repeat(&p[0], 3, 1)
        }),
        ("ops::view::Broadcast", "repeat flat", |p| {
            lazulite::repeat(&p[0], 2, None)
        }),
        ("ops::shape::Concatenate", "roll", |p| {
            lazulite::roll(&p[0], [1, -1], [0, 1])
        }),
        ("ops::shape::Concatenate", "roll flat", |p| {
            lazulite::roll(&p[0], 5, Axes::All)
        }),
        ("ops::view::Slice", "flip", |p| {
            lazulite::flip(&p[0], Axes::All)
        }),
        ("ops::view::Slice", "split", |p| {
            Ok(lazulite::split(&p[0], [1, 3], 1)?[1].clone())
        }),
        ("ops::shape::Concatenate", "stack", |p| {
            lazulite::stack(&[p[0].clone(), p[0].exp()?], -1)
        }),
        ("ops::view::Slice", "unstack", |p| {
            Ok(lazulite::unstack(&p[0], 1)?[2].clone())
        }),
        ("ops::view::Broadcast", "meshgrid", |p| {
            let g = lazulite::meshgrid(
                &[lazulite::flatten(&p[0], 0, -1)?, p[0].sin()?],
                false,
                "xy",
            )?;
            lazulite::multiply(&g[0], &g[1])
        }),
        ("ops::ternary::Select", "tril", |p| lazulite::tril(&p[0], 1)),
        ("ops::ternary::Select", "triu", |p| {
            lazulite::triu(&p[0], -1)
        }),
        ("ops::creation::Diagonal", "diag of matrix", |p| {
            lazulite::diag(&p[0], -1)
        }),
        ("ops::ternary::Select", "diag of vector", |p| {
            lazulite::diag(&lazulite::flatten(&p[0], 0, -1)?, 2)
        }),
        ("ops::creation::Diagonal", "trace", |p| {
            lazulite::trace(&p[0], 1, 0, 1, None)
        }),
        ("ops::view::Transpose", "moveaxis squeeze expand", |p| {
            let e = lazulite::expand_dims(&lazulite::moveaxis(&p[0], 0, -1)?, [0])?;
            lazulite::squeeze(&lazulite::swapaxes(&e, 1, 2)?, 0)
        }),
        ("ops::view::Reshape", "unflatten atleast_3d", |p| {
            lazulite::atleast_3d(&lazulite::unflatten(
                &lazulite::flatten(&p[0], 0, -1)?,
                0,
                &[2, -1],
            )?)
        }),
    ];
    let layouts = layouts_3x4(21, 0.1, 0.9);
    let batch_front = uniform_array(50, &[5, 3, 4], 0.1, 0.9);
    let batch_back = uniform_array(52, &[3, 4, 5], 0.1, 0.9);
    let mut rows = vec![];
    for (primitive, name, f) in cases {
        for (layout, x) in &layouts {
            rows.push(
                row(primitive, format!("{name} ({layout})"), vec![x.clone()], f).derivatives(),
            );
        }
        rows.push(
            row(primitive, format!("{name} batched"), vec![], f)
                .vmap(vec![batch_front.clone()], vec![Some(0)], 0)
                .vmap(vec![batch_back.clone()], vec![Some(-1)], -1),
        );
    }
    rows
}

fn two_input_shape_rows() -> Vec<Row> {
    let (x, t, b, r) = {
        let l = layouts_3x4(21, 0.1, 0.9);
        (
            l[0].1.clone(),
            l[1].1.clone(),
            l[3].1.clone(),
            l[2].1.clone(),
        )
    };
    type Case = (&'static str, &'static str, fn(&[Array]) -> Result<Array>);
    let cases: Vec<Case> = vec![
        ("ops::shape::Concatenate", "concatenate two", |p| {
            lazulite::concatenate(&[p[0].clone(), p[1].clone()], 0)
        }),
        ("ops::shape::Concatenate", "stack two", |p| {
            lazulite::stack(&[p[0].clone(), p[1].clone()], 1)
        }),
        ("ops::view::Broadcast", "meshgrid ij sparse", |p| {
            let g = lazulite::meshgrid(
                &[
                    lazulite::diagonal(&p[0], 0, 0, 1)?,
                    lazulite::flatten(&p[1], 0, -1)?,
                ],
                true,
                "ij",
            )?;
            lazulite::add(&g[0], &g[1])
        }),
    ];
    let mut rows = vec![];
    for (primitive, name, f) in cases {
        rows.push(row(primitive, name, vec![x.clone(), t.clone()], f).derivatives());
        rows.push(
            row(
                primitive,
                format!("{name} (broadcast, reversed)"),
                vec![b.clone(), r.clone()],
                f,
            )
            .derivatives(),
        );
    }
    let xb = uniform_array(50, &[5, 3, 4], 0.1, 0.9);
    let y = uniform_array(51, &[3, 4], 0.1, 0.9);
    let swapped = lazulite::swapaxes(&xb, 0, 1).unwrap();
    let batched: Vec<Case> = vec![
        ("ops::shape::Concatenate", "concatenate two batched", |p| {
            lazulite::concatenate(&[p[0].clone(), p[1].clone()], 1)
        }),
        ("ops::shape::Concatenate", "stack two batched", |p| {
            lazulite::stack(&[p[0].clone(), p[1].clone()], 0)
        }),
    ];
    for (primitive, name, f) in batched {
        rows.push(
            row(primitive, name, vec![], f)
                .vmap(vec![xb.clone(), y.clone()], vec![Some(0), None], 1)
                .vmap(
                    vec![swapped.clone(), xb.clone()],
                    vec![Some(1), Some(0)],
                    -2,
                ),
        );
    }
    rows
}

fn view_rows() -> Vec<Row> {
    let x = seeded(5, &[2, 3, 4]);
    let batch = uniform_array(11, &[2, 3, 4], 0.1, 0.9);
    let y = uniform_array(12, &[3, 4], 0.1, 0.9);
    let z = uniform_array(13, &[4, 3], 0.1, 0.9);
    let broadcast_inputs: Vec<(&str, Vec<usize>, Array)> = vec![
        ("leading", vec![2, 3, 4], seeded(1, &[4])),
        ("stretched", vec![3, 5], seeded(2, &[3, 1])),
        ("leading and stretched", vec![2, 3, 5], seeded(2, &[3, 1])),
        ("middle", vec![4, 2, 5, 3], seeded(3, &[2, 1, 3])),
        ("scalar", vec![2, 2], array(&[0.7], &[])),
        ("strided", vec![2, 3, 4], transposed(4, 4, 3)),
    ];
    let mut rows: Vec<Row> = broadcast_inputs
        .into_iter()
        .map(|(name, shape, input)| {
            row(
                "ops::view::Broadcast",
                format!("broadcast_to {name}"),
                vec![input],
                move |p| lazulite::broadcast_to(&p[0], &shape)?.sin(),
            )
            .derivatives()
        })
        .collect();
    // Broadcasting to its own shape records nothing: only the sine is left.
    rows.push(
        row(
            "ops::unary::Unary",
            "broadcast_to its own shape",
            vec![seeded(1, &[4])],
            |p| lazulite::broadcast_to(&p[0], &[4])?.sin(),
        )
        .derivatives(),
    );
    rows.extend([
        row(
            "ops::view::Broadcast",
            "broadcast_to batched",
            vec![],
            |p| lazulite::broadcast_to(&p[0], &[5, 4]),
        )
        .vmap(vec![y.clone()], vec![Some(0)], 0),
        row("ops::view::Reshape", "reshape", vec![x.clone()], |p| {
            lazulite::reshape(&p[0], &[4, -1])?.sin()
        })
        .derivatives()
        .vmap(vec![batch.clone()], vec![Some(1)], 0),
        row("ops::view::Transpose", "transpose", vec![x.clone()], |p| {
            lazulite::transpose(&p[0], &[2, 0, 1])?.exp()
        })
        .derivatives(),
        row("ops::view::Transpose", "transpose batched", vec![], |p| {
            p[0].t()
        })
        .vmap(vec![batch.clone()], vec![Some(2)], 1),
        row("ops::view::Slice", "slice", vec![x.clone()], |p| {
            lazulite::slice(&p[0], &[1, 2, 3], &[2, -4, 0], &[1, -1, -2])?.square()
        })
        .derivatives(),
        row("ops::view::Slice", "slice batched", vec![], |p| {
            lazulite::slice(&p[0], &[2, 0], &[0, 4], &[-1, 2])
        })
        .vmap(vec![batch], vec![Some(0)], 0),
        row("ops::view::SliceUpdate", "slice_update", vec![x], |p| {
            let u = lazulite::slice(&p[0], &[0, 0, 0], &[1, 3, 2], &[1, 1, 1])?.sin()?;
            lazulite::slice_update(&p[0], &u, &[1, 0, 1], &[2, 3, 4], &[1, 1, 2])
        })
        .derivatives(),
        row(
            "ops::view::SliceUpdate",
            "slice_update batched",
            vec![],
            |p| lazulite::slice_update(&p[0], &p[1].sin()?, &[0], &[4], &[2]),
        )
        .vmap(
            vec![y, lazulite::slice(&z, &[0, 0], &[2, 3], &[1, 1]).unwrap()],
            vec![Some(0), Some(1)],
            0,
        ),
        // as_strided's cotangent is scattered back by its transpose, a primitive of its
        // own: differentiating the gradient exercises that one's rules.
        row(
            "ops::shape::AsStridedTranspose",
            "gradient of as_strided windows",
            vec![seeded(41, &[3, 4])],
            |p| {
                lazulite::grad(|x: &Array| {
                    let windows = lazulite::as_strided(x, Some(&[5, 4]), Some(&[2, 1]), 0)?;
                    lazulite::sum(
                        &lazulite::multiply(&windows.square()?, &windows.sin()?)?,
                        Axes::All,
                        false,
                    )
                })(&p[0])
            },
        )
        .derivatives()
        .vmap(vec![seeded(42, &[2, 3, 4])], vec![Some(0)], 0),
        // Reinterpreted bits are not a smooth function of the values: zero derivatives.
        // The sign and exponent bits stay put under the finite-difference steps.
        row(
            "ops::shape::View",
            "view as int64 (zero derivative)",
            vec![seeded(40, &[4])],
            |p| {
                plus_constant(&p[0], |x| {
                    lazulite::right_shift(&lazulite::view(x, DType::Int64)?, 52)
                })
            },
        )
        .derivatives(),
        row("ops::shape::View", "view as uint16", vec![], |p| {
            lazulite::view(&p[0], DType::UInt16)
        })
        .vmap(
            vec![uniform_array(50, &[5, 3, 4], 0.1, 0.9)
                .astype(DType::Float32)
                .unwrap()],
            vec![Some(-1)],
            0,
        ),
    ]);
    rows
}

fn reduction_rows() -> Vec<Row> {
    type Case = (&'static str, &'static str, fn(&[Array]) -> Result<Array>);
    const REDUCE: &str = "ops::reduce::Reduce";
    const ARG_REDUCE: &str = "ops::reduce::ArgReduce";
    let cases: Vec<Case> = vec![
        (REDUCE, "sum axis 0", |p| lazulite::sum(&p[0], 0, false)),
        (REDUCE, "sum all keepdims", |p| {
            lazulite::sum(&p[0], Axes::All, true)
        }),
        (REDUCE, "sum axes [-1, 0]", |p| {
            lazulite::sum(&p[0], [-1, 0], false)
        }),
        // No axes: the sum is its input, so only the sine's node is left.
        ("ops::unary::Unary", "sum no axes", |p| {
            lazulite::sum(&p[0].sin()?, Vec::<i32>::new(), false)
        }),
        (REDUCE, "prod axis -1", |p| lazulite::prod(&p[0], -1, false)),
        (REDUCE, "prod all", |p| {
            lazulite::prod(&p[0], Axes::All, false)
        }),
        (REDUCE, "prod axis 0 keepdims", |p| {
            lazulite::prod(&p[0], 0, true)
        }),
        (REDUCE, "max axis 1", |p| lazulite::max(&p[0], 1, false)),
        (REDUCE, "max all keepdims", |p| {
            lazulite::max(&p[0], Axes::All, true)
        }),
        (REDUCE, "min axis 0", |p| lazulite::min(&p[0], 0, true)),
        (REDUCE, "mean", |p| lazulite::mean(&p[0], -1, false)),
        (REDUCE, "var", |p| lazulite::var(&p[0], 0, false, 1)),
        ("ops::softmax::LogSumExp", "logsumexp", |p| {
            lazulite::logsumexp(&p[0], 1, false)
        }),
        ("ops::softmax::Softmax", "softmax", |p| {
            lazulite::softmax(&p[0], -1, false)
        }),
        ("ops::reduce::Median", "median axis 1 (even)", |p| {
            lazulite::median(&p[0], 1, false)
        }),
        ("ops::reduce::Median", "median axis 0 (odd)", |p| {
            lazulite::median(&p[0], 0, true)
        }),
        ("ops::reduce::Median", "median all", |p| {
            lazulite::median(&p[0], Axes::All, false)
        }),
        (ARG_REDUCE, "argmax (int result)", |p| {
            plus_constant(&p[0], |x| lazulite::argmax(x, Some(1), true))
        }),
        (ARG_REDUCE, "argmin (int result)", |p| {
            plus_constant(&p[0], |x| lazulite::argmin(x, None, true))
        }),
        (REDUCE, "all (bool result)", |p| {
            plus_constant(&p[0], |x| lazulite::all(x, 0, true))
        }),
        (REDUCE, "any (bool result)", |p| {
            plus_constant(&p[0], |x| lazulite::any(x, Axes::All, false))
        }),
    ];
    let mut rows = vec![];
    let layouts = layouts_3x4(31, 0.5, 1.5);
    let x = seeded(71, &[2, 3, 4]);
    let strided = lazulite::transpose(&x, &[2, 0, 1]).unwrap();
    for (primitive, name, f) in cases {
        for (layout, input) in &layouts {
            let ties_matter = ["max", "min", "median", "argm"];
            if *layout == "broadcast" && ties_matter.iter().any(|t| name.starts_with(t)) {
                // Repeated values tie: the derivatives (or positions) jump there.
                continue;
            }
            rows.push(
                row(
                    primitive,
                    format!("{name} ({layout})"),
                    vec![input.clone()],
                    f,
                )
                .derivatives(),
            );
        }
        rows.push(batched_three_ways(primitive, name, f, &x, &strided));
    }
    rows
}

/// vmap of a one-input `f` in and out along the front, the back and the middle, and on a
/// strided batch.
fn batched_three_ways(
    primitive: &'static str,
    name: &str,
    f: fn(&[Array]) -> Result<Array>,
    x: &Array,
    strided: &Array,
) -> Row {
    row(primitive, format!("{name} batched"), vec![], f)
        .vmap(vec![x.clone()], vec![Some(0)], 0)
        .vmap(vec![x.clone()], vec![Some(-1)], -1)
        .vmap(vec![x.clone()], vec![Some(1)], 0)
        .vmap(vec![strided.clone()], vec![Some(2)], -1)
}

/// Softmax and logsumexp along every axis of a 3-d array, plain and transposed, batched
/// along each axis; and softmax's vjp differentiated again (its rule is made of ops).
fn softmax_rows() -> Vec<Row> {
    const SOFTMAX: &str = "ops::softmax::Softmax";
    const LOGSUMEXP: &str = "ops::softmax::LogSumExp";
    let x = uniform_array(8, &[3, 4, 5], -2.0, 2.0);
    let transposed = lazulite::transpose(&x, &[1, 2, 0]).unwrap();
    let batch = uniform_array(11, &[3, 4, 5], -3.0, 3.0);
    let mut rows = vec![];
    for axis in [0, 1, -1] {
        let f = move |p: &[Array]| lazulite::softmax(&p[0], axis, false);
        for (layout, input) in [("contiguous", &x), ("transposed", &transposed)] {
            rows.push(
                row(
                    SOFTMAX,
                    format!("softmax axis {axis} ({layout})"),
                    vec![input.clone()],
                    f,
                )
                .derivatives(),
            );
        }
        if axis != 1 {
            let mut batched = row(SOFTMAX, format!("softmax axis {axis} batched"), vec![], f);
            for in_axis in [0, 1, -1] {
                batched = batched
                    .vmap(vec![batch.clone()], vec![Some(in_axis)], 0)
                    .vmap(vec![batch.clone()], vec![Some(in_axis)], -1);
            }
            rows.push(batched);
        }
        for keepdims in [false, true] {
            let input = uniform_array(12, &[3, 4, 5], -2.0, 2.0);
            rows.push(
                row(
                    LOGSUMEXP,
                    format!("logsumexp axis {axis} keepdims={keepdims}"),
                    vec![input.clone()],
                    move |p| lazulite::logsumexp(&p[0], axis, keepdims),
                )
                .derivatives()
                .vmap(vec![input.clone()], vec![Some(0)], 0)
                .vmap(vec![input], vec![Some(-1)], 0),
            );
        }
    }
    let w = seeded(10, &[3, 4]);
    rows.push(
        row(
            SOFTMAX,
            "softmax vjp differentiated",
            vec![uniform_array(9, &[3, 4], -2.0, 2.0)],
            move |p| {
                let (_, g) = vjp(
                    |q| Ok(vec![lazulite::softmax(&q[0], -1, false)?]),
                    p,
                    std::slice::from_ref(&w),
                )?;
                Ok(g[0].clone())
            },
        )
        .derivatives(),
    );
    rows
}

fn prod_with_zeros_rows() -> Vec<Row> {
    type Case = (&'static str, &'static str, fn(&[Array]) -> Result<Array>);
    let cases: Vec<Case> = vec![
        ("ops::reduce::Reduce", "prod axis 1", |p| {
            lazulite::prod(&p[0], 1, false)
        }),
        ("ops::reduce::Reduce", "prod all", |p| {
            lazulite::prod(&p[0], Axes::All, false)
        }),
        ("ops::scan::Scan", "cumprod", |p| {
            lazulite::cumprod(&p[0], Some(1), false, true, None)
        }),
        ("ops::scan::Scan", "cumprod reverse", |p| {
            lazulite::cumprod(&p[0], Some(1), true, true, None)
        }),
        ("ops::scan::Scan", "cumprod exclusive", |p| {
            lazulite::cumprod(&p[0], None, false, false, None)
        }),
        ("ops::scan::Scan", "cumprod reverse exclusive", |p| {
            lazulite::cumprod(&p[0], Some(0), true, false, None)
        }),
    ];
    let one_zero = array(&[2.0, 0.0, 3.0, 0.5, 1.5, -1.0], &[2, 3]);
    let two_zeros = array(&[0.0, 0.0, 3.0, 0.5, 0.0, -1.0], &[2, 3]);
    let mut rows = vec![];
    for (primitive, name, f) in cases {
        for (zeros, x) in [("one zero", &one_zero), ("two zeros", &two_zeros)] {
            rows.push(
                row(primitive, format!("{name} ({zeros})"), vec![x.clone()], f).derivatives(),
            );
        }
    }
    rows
}

fn scan_rows() -> Vec<Row> {
    type ScanFn = fn(&Array, Option<i32>, bool, bool) -> Result<Array>;
    let ops: Vec<(&str, ScanFn)> = vec![
        ("cumsum", |x, a, r, i| lazulite::cumsum(x, a, r, i, None)),
        ("cumprod", |x, a, r, i| lazulite::cumprod(x, a, r, i, None)),
        ("cummax", lazulite::cummax),
        ("cummin", lazulite::cummin),
        ("logcumsumexp", lazulite::logcumsumexp),
    ];
    let layouts: Vec<_> = layouts_3x4(31, 0.5, 1.5)
        .into_iter()
        .filter(|(layout, _)| *layout != "broadcast")
        .collect();
    let x = seeded(71, &[2, 3, 4]);
    let strided = lazulite::transpose(&x, &[2, 0, 1]).unwrap();
    let mut rows = vec![];
    let mut variant = 0;
    for (name, op) in ops {
        for axis in [Some(0), Some(-1), None] {
            for reverse in [false, true] {
                for inclusive in [true, false] {
                    let label =
                        format!("{name} axis={axis:?} reverse={reverse} inclusive={inclusive}");
                    let f = move |p: &[Array]| {
                        let y = op(&p[0], axis, reverse, inclusive)?;
                        // Exclusive cummax/cummin start at -inf/inf: keep the output finite.
                        lazulite::clip(&y, Some((-10.0f64).into()), Some(10.0f64.into()))
                    };
                    for (layout, input) in &layouts {
                        rows.push(
                            row(
                                "ops::scan::Scan",
                                format!("{label} ({layout})"),
                                vec![input.clone()],
                                f,
                            )
                            .derivatives(),
                        );
                    }
                    // Every third variant batched, as many as the vmap rule has paths.
                    if variant % 3 == 0 {
                        rows.push(
                            row("ops::scan::Scan", format!("{label} batched"), vec![], f)
                                .vmap(vec![x.clone()], vec![Some(0)], 0)
                                .vmap(vec![x.clone()], vec![Some(-1)], -1)
                                .vmap(vec![x.clone()], vec![Some(1)], 0)
                                .vmap(vec![strided.clone()], vec![Some(2)], -1),
                        );
                    }
                    variant += 1;
                }
            }
        }
    }
    rows
}

fn sort_rows() -> Vec<Row> {
    type Case = (&'static str, &'static str, fn(&[Array]) -> Result<Array>);
    const SORT: &str = "ops::sort::Sort";
    let cases: Vec<Case> = vec![
        (SORT, "sort last", |p| lazulite::sort(&p[0], Some(-1))),
        (SORT, "sort axis 0", |p| lazulite::sort(&p[0], Some(0))),
        (SORT, "sort flat", |p| lazulite::sort(&p[0], None)),
        (SORT, "partition", |p| {
            lazulite::partition(&p[0], 1, Some(-1))
        }),
        (SORT, "partition flat", |p| {
            lazulite::partition(&p[0], -3, None)
        }),
        (SORT, "topk", |p| lazulite::topk(&p[0], 2, Some(0))),
        (SORT, "argsort (int result)", |p| {
            plus_constant(&p[0], |x| lazulite::argsort(x, Some(0)))
        }),
        (SORT, "argpartition (int result)", |p| {
            plus_constant(&p[0], |x| lazulite::argpartition(x, -1, Some(1)))
        }),
    ];
    let layouts: Vec<_> = layouts_3x4(31, 0.5, 1.5)
        .into_iter()
        .filter(|(layout, _)| *layout != "broadcast")
        .collect();
    let x = seeded(71, &[2, 3, 4]);
    let strided = lazulite::transpose(&x, &[2, 0, 1]).unwrap();
    let mut rows = vec![];
    for (primitive, name, f) in cases {
        for (layout, input) in &layouts {
            rows.push(
                row(
                    primitive,
                    format!("{name} ({layout})"),
                    vec![input.clone()],
                    f,
                )
                .derivatives(),
            );
        }
        rows.push(batched_three_ways(primitive, name, f, &x, &strided));
    }
    // Sorted values far apart on 100k elements: the gather/scatter form of the rules is
    // linear in the size where a one-hot form would need 10^10 elements.
    let n = 100_000;
    let scrambled: Vec<f64> = (0..n).map(|k| 0.01 * ((k * 7919) % n) as f64).collect();
    let large = array(&scrambled, &[n]);
    let large_cases: Vec<Case> = vec![
        (SORT, "sort 100k", |p| lazulite::sort(&p[0], Some(0))),
        (SORT, "partition 100k", |p| {
            lazulite::partition(&p[0], 50_000, Some(0))
        }),
        (SORT, "topk 100k", |p| lazulite::topk(&p[0], 1000, Some(0))),
        ("ops::scan::Scan", "cummax 100k", |p| {
            lazulite::cummax(&p[0], Some(0), false, true)
        }),
        // Inclusive: an exclusive scan's first output is the infinite identity.
        ("ops::scan::Scan", "cummin reverse 100k", |p| {
            lazulite::cummin(&p[0], Some(0), true, true)
        }),
    ];
    for (primitive, name, f) in large_cases {
        rows.push(row(primitive, name, vec![large.clone()], f).derivatives());
    }
    let sorted = array(&[-1.0, -0.2, 0.3, 0.35, 0.9], &[5]);
    rows.push(
        row(
            "ops::sort::SearchSorted",
            "searchsorted (int result)",
            vec![seeded(72, &[2, 3])],
            move |p| plus_constant(&p[0], |x| lazulite::searchsorted(&sorted, x, "left")),
        )
        .derivatives()
        .vmap_own(vec![Some(1)], 0),
    );
    rows
}

fn matmul_rows() -> Vec<Row> {
    let cases: Vec<(&str, Array, Array)> = vec![
        ("matrix", seeded(41, &[3, 4]), seeded(42, &[4, 2])),
        ("vector @ matrix", seeded(43, &[4]), seeded(44, &[4, 2])),
        ("matrix @ vector", seeded(45, &[3, 4]), seeded(46, &[4])),
        ("vector @ vector", seeded(47, &[4]), seeded(48, &[4])),
        ("batched", seeded(49, &[2, 3, 4]), seeded(50, &[2, 4, 5])),
        (
            "broadcast batch",
            seeded(51, &[2, 1, 3, 4]),
            seeded(52, &[5, 4, 2]),
        ),
        (
            "matrix @ batch",
            seeded(53, &[3, 4]),
            seeded(54, &[2, 4, 2]),
        ),
        ("transposed", transposed(55, 4, 3), transposed(56, 2, 4)),
        (
            "sliced",
            lazulite::slice(&seeded(57, &[6, 4]), &[5, 0], &[0, 4], &[-2, 1]).unwrap(),
            lazulite::broadcast_to(&seeded(58, &[1, 2]), &[4, 2]).unwrap(),
        ),
    ];
    let mut rows = vec![];
    for (name, a, b) in cases {
        let out_shape = lazulite::matmul(&a, &b).unwrap().shape().to_vec();
        // c broadcasts along the rows of the product.
        let c = seeded(60, &out_shape[out_shape.len().saturating_sub(1)..]);
        rows.push(
            row(
                "ops::linalg::Matmul",
                format!("matmul {name}"),
                vec![a.clone(), b.clone()],
                |p| lazulite::matmul(&p[0], &p[1]),
            )
            .derivatives(),
        );
        rows.push(
            row(
                "ops::linalg::AddMm",
                format!("addmm {name}"),
                vec![c, a, b],
                |p| lazulite::addmm(&p[0], &p[1], &p[2], 1.5, -0.5),
            )
            .derivatives(),
        );
    }
    rows.push(
        row(
            "ops::linalg::Matmul",
            "einsum",
            vec![seeded(61, &[2, 3]), seeded(62, &[3, 2])],
            |p| lazulite::einsum("ij,jk->ik", &[&p[0], &p[1]]),
        )
        .derivatives(),
    );
    // Repeated subscripts take diagonals through a strided view: its derivative puts the
    // cotangent back on the diagonals, its batching adds a leading axis to the view.
    let diagonals: Vec<(&'static str, Vec<usize>)> = vec![
        ("ii->i", vec![3, 3]),
        ("ii", vec![4, 4]),
        ("iij->ij", vec![3, 3, 2]),
        ("ijij->ij", vec![2, 3, 2, 3]),
        ("jii->ji", vec![2, 3, 3]),
        ("iji->j", vec![3, 2, 3]),
    ];
    for (k, (subscripts, shape)) in diagonals.into_iter().enumerate() {
        let k = k as u64;
        let first = [&[2], &shape[..]].concat();
        let last = [&shape[..], &[2]].concat();
        rows.push(
            row(
                "ops::linalg::einsum::DiagonalView",
                format!("einsum {subscripts}"),
                vec![seeded(70 + k, &shape)],
                move |p| lazulite::einsum(subscripts, &[&p[0]]),
            )
            .derivatives()
            .vmap(vec![seeded(90 + k, &first)], vec![Some(0)], 0)
            .vmap(vec![seeded(110 + k, &last)], vec![Some(-1)], 0),
        );
    }
    let (a, b) = (seeded(81, &[5, 3, 4]), seeded(82, &[4, 5, 2]));
    let matmul = |p: &[Array]| lazulite::matmul(&p[0], &p[1]);
    rows.push(
        row("ops::linalg::Matmul", "matmul batched", vec![], matmul)
            .vmap(vec![a.clone(), b.clone()], vec![Some(0), Some(1)], 0)
            .vmap(
                vec![a.clone(), seeded(83, &[4, 2])],
                vec![Some(0), None],
                -1,
            )
            .vmap(
                vec![seeded(84, &[3, 4]), b.clone()],
                vec![None, Some(-2)],
                1,
            )
            .vmap(
                vec![seeded(85, &[4, 5]), seeded(86, &[4])],
                vec![Some(-1), None],
                0,
            )
            .vmap(
                vec![seeded(87, &[2, 3, 4, 5]), seeded(88, &[4, 2])],
                vec![Some(3), None],
                0,
            ),
    );
    let c = seeded(89, &[3, 2]);
    rows.push(
        row("ops::linalg::AddMm", "addmm batched", vec![], |p| {
            lazulite::addmm(&p[0], &p[1], &p[2], 2.0, 0.5)
        })
        .vmap(
            vec![
                seeded(90, &[5, 3, 2]),
                seeded(91, &[3, 4]),
                seeded(92, &[4, 2]),
            ],
            vec![Some(0), None, None],
            0,
        )
        .vmap(
            vec![c.clone(), a, b.clone()],
            vec![None, Some(0), Some(1)],
            2,
        )
        .vmap(
            vec![c, seeded(93, &[3, 4]), b],
            vec![None, None, Some(1)],
            0,
        ),
    );
    rows
}

/// `gather_mm` with index arrays captured as constants: the operands are differentiated.
fn gathered_product(
    lhs: Option<Vec<u32>>,
    rhs: Option<Vec<u32>>,
    shape: &[usize],
) -> impl Fn(&[Array]) -> Result<Array> + Send + Sync + 'static {
    let index = |v: Option<Vec<u32>>| v.map(|v| Array::from_slice(&v, shape).unwrap());
    let (lhs, rhs) = (index(lhs), index(rhs));
    move |p: &[Array]| lazulite::gather_mm(&p[0], &p[1], lhs.as_ref(), rhs.as_ref())
}

fn gather_mm_rows() -> Vec<Row> {
    const GATHER_MM: &str = "ops::linalg::gather_mm::GatherMm";
    let idx = |v: &[u32], shape: &[usize]| Array::from_slice(v, shape).unwrap();
    let (a, b) = (seeded(11, &[3, 2, 4]), seeded(12, &[4, 4, 3]));
    let (lhs, rhs) = (idx(&[0, 2, 1], &[3]), idx(&[3, 3, 0], &[3]));
    let (a_batch, b_batch) = (seeded(13, &[3, 2, 4, 2]), seeded(14, &[4, 4, 3, 2]));
    let lhs_batch = idx(&[0, 2, 1, 1, 1, 0], &[3, 2]);
    vec![
        // Repeated indices: the cotangents of a shared matrix add up.
        row(
            GATHER_MM,
            "gather_mm both indexed",
            vec![seeded(1, &[3, 2, 4]), seeded(2, &[4, 4, 3])],
            gathered_product(Some(vec![0, 2, 2, 1]), Some(vec![3, 0, 3, 3]), &[2, 2]),
        )
        .derivatives(),
        row(
            GATHER_MM,
            "gather_mm rhs only",
            vec![seeded(3, &[3, 1, 4]), seeded(4, &[2, 4, 5])],
            gathered_product(None, Some(vec![1, 0, 1]), &[3]),
        )
        .derivatives(),
        row(
            GATHER_MM,
            "gather_mm lhs only",
            vec![seeded(5, &[2, 2, 3]), seeded(6, &[3, 3, 2])],
            gathered_product(Some(vec![1, 1, 0]), None, &[3]),
        )
        .derivatives(),
        row(
            GATHER_MM,
            "gather_mm transposed",
            vec![
                transposed(7, 4, 3).reshape(&[3, 1, 4]).unwrap(),
                lazulite::swapaxes(&seeded(8, &[2, 5, 4]), -1, -2).unwrap(),
            ],
            gathered_product(None, Some(vec![1, 0, 1]), &[3]),
        )
        .derivatives(),
        row(GATHER_MM, "gather_mm batched", vec![], |p| {
            lazulite::gather_mm(&p[0], &p[1], Some(&p[2]), Some(&p[3]))
        })
        .vmap(
            vec![a_batch.clone(), b.clone(), lhs.clone(), rhs.clone()],
            vec![Some(3), None, None, None],
            0,
        )
        .vmap(
            vec![a.clone(), b_batch.clone(), lhs.clone(), rhs.clone()],
            vec![None, Some(3), None, None],
            1,
        )
        .vmap(
            vec![a, b, lhs_batch.clone(), rhs.clone()],
            vec![None, None, Some(1), None],
            0,
        )
        .vmap(
            vec![a_batch, b_batch.clone(), lhs_batch, rhs],
            vec![Some(3), Some(3), Some(1), None],
            0,
        ),
        row(
            GATHER_MM,
            "gather_mm default lhs batched",
            vec![],
            gathered_product(None, Some(vec![2, 0]), &[2]),
        )
        .vmap(
            vec![seeded(15, &[2, 1, 4]), b_batch],
            vec![None, Some(3)],
            0,
        ),
    ]
}

fn indexing_rows() -> Vec<Row> {
    const GATHER: &str = "ops::indexing::gather_scatter::Gather";
    const SCATTER: &str = "ops::indexing::gather_scatter::Scatter";
    let x = seeded(1, &[3, 4]);
    let i = ints(&[2, 0, 2, -1], &[4]);
    let j = ints(&[1, 1, 3, 0], &[4]);
    let (i1, j1, i2, j2, i3) = (i.clone(), j.clone(), i.clone(), i.clone(), j.clone());
    let (i4, j4, i5) = (i.clone(), j.clone(), i.clone());
    let mut rows = vec![
        row(GATHER, "gather rows", vec![x.clone()], move |p| {
            index(&p[0], &idx![&i1])
        })
        .derivatives(),
        row(GATHER, "gather pairs", vec![x.clone()], move |p| {
            index(&p[0], &idx![&i2, &j1])
        })
        .derivatives(),
        row(
            GATHER,
            "gather with a slice between",
            vec![x.clone()],
            move |p| index(&p[0], &idx![&j2, 1..;2]),
        )
        .derivatives(),
        row(GATHER, "take", vec![x.clone()], move |p| {
            lazulite::take(&p[0], &i3, Some(1))
        })
        .derivatives(),
        row(GATHER, "boolean mask", vec![x.clone()], |p| {
            index(&p[0], &idx![&lazulite::greater(&p[0], 0.0)?])
        })
        .derivatives(),
        // Dynamic slices are a gather and a scatter.
        row(GATHER, "dynamic_slice", vec![seeded(1, &[3, 4])], |p| {
            lazulite::dynamic_slice(&p[0], &Array::scalar(1i32), &[0], &[2, 4])
        })
        .derivatives(),
        row(
            SCATTER,
            "dynamic_slice_update",
            vec![seeded(1, &[3, 4]), seeded(2, &[2, 2])],
            |p| lazulite::dynamic_slice_update(&p[0], &p[1], &ints(&[1, 2], &[2]), &[0, 1]),
        )
        .derivatives(),
        row(
            SCATTER,
            "scatter assign",
            vec![x.clone(), seeded(2, &[4])],
            move |p| index_put(&p[0], &idx![&i4, &j4], &p[1]),
        )
        .derivatives(),
        row(
            SCATTER,
            "scatter add",
            vec![x.clone(), seeded(3, &[4, 4])],
            move |p| at(&p[0], &idx![&i5]).add(&p[1]),
        )
        .derivatives(),
        row(
            "ops::view::SliceUpdate",
            "basic write",
            vec![x, seeded(4, &[2])],
            |p| index_put(&p[0], &idx![1, ..;-2], &p[1]),
        )
        .derivatives(),
    ];
    let xs = seeded(5, &[2, 3, 4]);
    let is = ints(&[2, 0, -1, 1, 1, 0], &[2, 3]);
    let one = ints(&[1, 0, 1], &[3]);
    let vs = seeded(6, &[2, 3]);
    rows.extend([
        row(GATHER, "gather batched", vec![], |p| {
            index(&p[0], &idx![.., &p[1]])
        })
        .vmap(vec![xs.clone(), is.clone()], vec![Some(0), Some(0)], 0)
        .vmap(vec![xs.clone(), one.clone()], vec![Some(2), None], 1),
        row(GATHER, "gather batched indices", vec![], |p| {
            index(&p[0], &idx![&p[1]])
        })
        .vmap(
            vec![xs.clone(), ints(&[1, 0, -1, 0, 1, 1], &[2, 3])],
            vec![None, Some(0)],
            0,
        ),
        row(SCATTER, "scatter batched", vec![], |p| {
            index_put(&p[0], &idx![&p[1], 2], &p[2])
        })
        .vmap(
            vec![xs.clone(), is.clone(), vs],
            vec![Some(0), Some(0), Some(0)],
            0,
        )
        .vmap(
            vec![xs.clone(), one, seeded(7, &[3, 3])],
            vec![Some(1), None, Some(1)],
            0,
        ),
        row(SCATTER, "scatter add batched indices", vec![], |p| {
            at(&p[0], &idx![.., &p[1]]).add(1.0)
        })
        .vmap(vec![xs, is], vec![None, Some(0)], 0),
    ]);
    rows.extend(product_and_extremum_scatter_rows());
    rows
}

/// The multiplying, dividing, maximum and minimum scatters (`at[].multiply` and so on).
fn product_and_extremum_scatter_rows() -> Vec<Row> {
    const SCATTER: &str = "ops::indexing::gather_scatter::Scatter";
    let rows_index = ints(&[2, 0, 2, -1, 1], &[5]);
    let pairs_i = ints(&[0, 0, 1, 0], &[4]);
    let pairs_j = ints(&[3, 3, 1, 3], &[4]);
    let (x, u) = (
        uniform_array(11, &[3, 4], -2.0, 2.0),
        uniform_array(12, &[5, 4], -2.0, 2.0),
    );
    // Zeros among the updates: row 0 gets one zero (and a nonzero), row 1 two zeros.
    let mut with_zeros = uniform(13, 20, 0.5, 1.5);
    with_zeros[4..8].copy_from_slice(&[0.0, 1.2, 0.0, 0.7]);
    with_zeros[16..20].copy_from_slice(&[0.0, 0.0, 0.9, 0.0]);
    let rows_with_zero = ints(&[2, 0, 0, 1, 1], &[5]);
    let u_zero = array(&with_zeros, &[5, 4]);
    let transposed_x = uniform_array(15, &[4, 3], -2.0, 2.0).t().unwrap();
    let reversed = lazulite::slice(&u, &[4, 0], &[-6, 4], &[-1, 1]).unwrap();
    let (r1, r2, r3, r4, r5) = (
        rows_index.clone(),
        rows_index.clone(),
        rows_index.clone(),
        rows_index.clone(),
        rows_index.clone(),
    );
    let (pi1, pj1, pi2, pj2) = (pairs_i.clone(), pairs_j.clone(), pairs_i, pairs_j);
    let xs = seeded(21, &[2, 3, 4]);
    let us = seeded(22, &[2, 2, 4]);
    let twice_row_2 = ints(&[2, 2], &[2]);
    let (t1, t2, t3) = (twice_row_2.clone(), twice_row_2.clone(), twice_row_2);
    vec![
        row(
            SCATTER,
            "scatter multiply",
            vec![x.clone(), u.clone()],
            move |p| at(&p[0], &idx![&r1]).multiply(&p[1]),
        )
        .derivatives(),
        row(
            SCATTER,
            "scatter multiply with zero updates",
            vec![x.clone(), u_zero.clone()],
            move |p| at(&p[0], &idx![&rows_with_zero]).multiply(&p[1]),
        )
        .derivatives(),
        row(
            SCATTER,
            "scatter multiply pairs, scalar-broadcast update",
            vec![transposed_x.clone(), array(&[1.5], &[1])],
            move |p| at(&p[0], &idx![&pi1, &pj1]).multiply(&p[1]),
        )
        .derivatives(),
        // Divide by the nonzero updates only: reciprocals of zeros are infinite.
        row(
            SCATTER,
            "scatter divide",
            vec![x.clone(), lazulite::add(&u_zero, 0.25).unwrap()],
            move |p| at(&p[0], &idx![&r2]).divide(&p[1]),
        )
        .derivatives(),
        row(
            SCATTER,
            "scatter maximum",
            vec![x.clone(), u.clone()],
            move |p| at(&p[0], &idx![&r3]).maximum(&p[1]),
        )
        .derivatives(),
        row(
            SCATTER,
            "scatter maximum strided",
            vec![transposed_x.clone(), reversed],
            move |p| at(&p[0], &idx![&r4]).maximum(&p[1]),
        )
        .derivatives(),
        row(
            SCATTER,
            "scatter minimum pairs",
            vec![x, seeded(17, &[4])],
            move |p| at(&p[0], &idx![&pi2, &pj2]).minimum(&p[1]),
        )
        .derivatives(),
        row(
            SCATTER,
            "scatter minimum",
            vec![transposed_x, u],
            move |p| at(&p[0], &idx![&r5]).minimum(&p[1]),
        )
        .derivatives(),
        row(SCATTER, "scatter multiply batched", vec![], move |p| {
            at(&p[0], &idx![&t1]).multiply(&p[1])
        })
        .vmap(vec![xs.clone(), us.clone()], vec![Some(0), Some(0)], 0),
        row(SCATTER, "scatter maximum batched", vec![], move |p| {
            at(&p[0], &idx![&t2]).maximum(&p[1])
        })
        .vmap(vec![xs.clone(), us.clone()], vec![Some(0), Some(0)], 0),
        row(SCATTER, "scatter minimum batched", vec![], move |p| {
            at(&p[0], &idx![&t3]).minimum(&p[1])
        })
        .vmap(vec![xs.clone(), us.clone()], vec![Some(0), Some(0)], 0),
        // The gradients themselves batched: their rules are built of gathers and scatters.
        row(
            SCATTER,
            "gradient of scatter multiply batched",
            vec![],
            move |p| scatter_gradient(p, |t, u| t.multiply(u)),
        )
        .vmap(vec![xs.clone(), us.clone()], vec![Some(0), Some(0)], 0),
        row(
            SCATTER,
            "gradient of scatter maximum batched",
            vec![],
            move |p| scatter_gradient(p, |t, u| t.maximum(u)),
        )
        .vmap(vec![xs.clone(), us.clone()], vec![Some(0), Some(0)], 0),
        row(
            SCATTER,
            "gradient of scatter minimum batched",
            vec![],
            move |p| scatter_gradient(p, |t, u| t.minimum(u)),
        )
        .vmap(vec![xs, us], vec![Some(0), Some(0)], 0),
        row("ops::sort::Sort", "gradient of sort batched", vec![], |p| {
            let (_, d) = vjp(
                |q| Ok(vec![lazulite::sort(&q[0], Some(-1))?]),
                p,
                &[array(&[1.0, 2.0, 3.0, 4.0], &[4])],
            )?;
            Ok(d[0].clone())
        })
        .vmap(vec![seeded(23, &[3, 4])], vec![Some(0)], 0),
    ]
}

/// The gradients of `sum(scatter(x, [2, 2], u))` for `x` and `u`, flattened and joined.
fn scatter_gradient(
    p: &[Array],
    scatter: fn(&lazulite::At, &Array) -> Result<Array>,
) -> Result<Array> {
    let rows = ints(&[2, 2], &[2]);
    let (_, d) = vjp(
        |q| {
            Ok(vec![
                scatter(&at(&q[0], &idx![&rows]), &q[1])?.sum(Axes::All, false)?
            ])
        },
        p,
        &[array(&[1.0], &[])],
    )?;
    lazulite::concatenate(
        &[
            lazulite::reshape(&d[0], &[-1])?,
            lazulite::reshape(&d[1], &[-1])?,
        ],
        0,
    )
}

fn random_rows() -> Vec<Row> {
    let keys = lazulite::random::split(&lazulite::random::key(3), 4).unwrap();
    vec![
        // Draws do not depend smoothly on anything: x plus a draw has x's derivative.
        row(
            "ops::random::random_bits::RandomBits",
            "uniform draw added",
            vec![seeded(1, &[2, 3])],
            |p| {
                lazulite::add(
                    &p[0],
                    &lazulite::random::uniform(
                        0.0,
                        1.0,
                        &[2, 3],
                        DType::Float64,
                        Some(&lazulite::random::key(5)),
                    )?,
                )
            },
        )
        .derivatives(),
        row(
            "ops::random::random_bits::RandomBits",
            "bits of a batch of keys",
            vec![],
            |p| lazulite::random::bits(&[2, 3], 4, Some(&p[0])),
        )
        .vmap(vec![keys], vec![Some(0)], 0),
    ]
}

fn linalg_rows() -> Vec<Row> {
    use linalg::NormOrd;
    let eye_times = |n: usize| {
        lazulite::multiply(lazulite::eye(n, None, 0, DType::Float64).unwrap(), n as f64).unwrap()
    };
    let well = |seed: u64, shape: &[usize]| -> Array {
        lazulite::add(seeded(seed, shape), eye_times(shape[shape.len() - 1])).unwrap()
    };
    let symmetric = |seed: u64, shape: &[usize]| -> Array {
        let a = seeded(seed, shape);
        lazulite::add(&a, lazulite::swapaxes(&a, -1, -2).unwrap()).unwrap()
    };
    let spd = |seed: u64, n: usize| -> Array {
        let a = seeded(seed, &[n, n]);
        lazulite::add(
            lazulite::matmul(&a, &lazulite::swapaxes(&a, -1, -2).unwrap()).unwrap(),
            eye_times(n),
        )
        .unwrap()
    };
    let mut rows = vec![
        row(
            "ops::linalg::decompositions::Inverse",
            "inv",
            vec![well(1, &[2, 3, 3])],
            |p| linalg::inv(&p[0]),
        )
        .derivatives(),
        row(
            "ops::linalg::decompositions::Svd",
            "pinv",
            vec![seeded(2, &[4, 3])],
            |p| linalg::pinv(&p[0]),
        )
        .derivatives(),
        row(
            "ops::linalg::decompositions::LuFactor",
            "det",
            vec![well(3, &[3, 3])],
            |p| linalg::det(&p[0]),
        )
        .derivatives(),
        row(
            "ops::linalg::decompositions::Eigh",
            "eigvalsh",
            vec![symmetric(4, &[4, 4])],
            |p| linalg::eigvalsh(&p[0], "U"),
        )
        .derivatives(),
        row(
            "ops::linalg::decompositions::Solve",
            "solve",
            vec![well(5, &[3, 3]), seeded(6, &[2, 3, 2])],
            |p| linalg::solve(&p[0], &p[1]),
        )
        .derivatives(),
        row(
            "ops::linalg::decompositions::Solve",
            "solve vector",
            vec![well(5, &[3, 3]), seeded(7, &[3])],
            |p| linalg::solve(&p[0], &p[1]),
        )
        .derivatives(),
    ];
    for upper in [false, true] {
        rows.extend([
            row(
                "ops::linalg::decompositions::SolveTriangular",
                format!("solve_triangular upper={upper}"),
                vec![well(5, &[3, 3]), seeded(6, &[2, 3, 2])],
                move |p| linalg::solve_triangular(&p[0], &p[1], upper),
            )
            .derivatives(),
            row(
                "ops::linalg::decompositions::SolveTriangular",
                format!("tri_inv upper={upper}"),
                vec![well(5, &[3, 3])],
                move |p| linalg::tri_inv(&p[0], upper),
            )
            .derivatives(),
            row(
                "ops::linalg::Cholesky",
                format!("cholesky upper={upper}"),
                vec![spd(8, 4)],
                move |p| lazulite::cholesky(&p[0], upper),
            )
            .derivatives(),
            row(
                "ops::linalg::decompositions::SolveTriangular",
                format!("cholesky_inv upper={upper}"),
                vec![well(5, &[3, 3])],
                move |p| linalg::cholesky_inv(&p[0], upper),
            )
            .derivatives(),
        ]);
    }
    rows.push(
        row(
            "ops::linalg::decompositions::Eigh",
            "eigh",
            vec![symmetric(9, &[4, 4])],
            |p| {
                let (w, v) = linalg::eigh(&p[0], "L")?;
                // Eigenvectors are defined up to sign: use sign-invariant products.
                let outer = lazulite::matmul(
                    &lazulite::multiply(&v, &lazulite::expand_dims(&w, -2)?)?,
                    &lazulite::swapaxes(&v, -1, -2)?,
                )?;
                weighted_sum(&[w, lazulite::square(&v)?, outer])
            },
        )
        .derivatives(),
    );
    for shape in [[4usize, 4], [5, 3], [3, 5]] {
        rows.push(
            row(
                "ops::linalg::decompositions::Svd",
                format!("svd values {shape:?}"),
                vec![seeded(10, &shape)],
                |p| Ok(linalg::svd(&p[0], false)?.remove(0)),
            )
            .derivatives(),
        );
        let qr_row = row(
            "ops::linalg::decompositions::Qr",
            format!("qr {shape:?}"),
            vec![seeded(11, &shape)],
            |p| {
                let (q, r) = linalg::qr(&p[0])?;
                weighted_sum(&[q, r])
            },
        );
        // Wide matrices: QR's jvp is not implemented (as in MLX); its vjp is.
        rows.push(if shape[0] >= shape[1] {
            qr_row.derivatives()
        } else {
            qr_row.vjp_only().no_rule(Transform::Jvp)
        });
        rows.push(
            row(
                "ops::linalg::decompositions::Svd",
                format!("norm nuc {shape:?}"),
                vec![seeded(12, &shape)],
                |p| linalg::norm(&p[0], Some("nuc".into()), None, false),
            )
            .derivatives(),
        );
    }
    rows.push(
        row(
            "ops::linalg::decompositions::Svd",
            "svd",
            vec![seeded(13, &[4, 4])],
            |p| {
                let parts = linalg::svd(&p[0], true)?;
                // Singular vectors are defined up to a shared sign per pair: use u_i v_iᵀ.
                let (u, s, vt) = (&parts[0], &parts[1], &parts[2]);
                let first = lazulite::matmul(
                    &lazulite::slice(u, &[0, 0], &[4, 1], &[1, 1])?,
                    &lazulite::slice(vt, &[0, 0], &[1, 4], &[1, 1])?,
                )?;
                weighted_sum(&[
                    s.clone(),
                    first,
                    lazulite::square(u)?,
                    lazulite::square(vt)?,
                ])
            },
        )
        .derivatives(),
    );
    for ord in [
        None,
        Some(NormOrd::from(1)),
        Some(3.0.into()),
        Some(f64::INFINITY.into()),
    ] {
        rows.push(
            row(
                "ops::reduce::Reduce",
                format!("vector norm {ord:?}"),
                vec![seeded(14, &[2, 5])],
                move |p| linalg::norm(&p[0], ord.clone(), Some(&[-1]), false),
            )
            .derivatives(),
        );
    }
    rows.push(
        row(
            "ops::binary::Binary",
            "cross",
            vec![seeded(15, &[3, 2]), seeded(16, &[3, 2])],
            |p| linalg::cross(&p[0], &p[1], 0),
        )
        .derivatives(),
    );
    // Batched: a stack of well-conditioned symmetric matrices along the last axis.
    let eight_eye = lazulite::multiply(eye_times(4), 2.0).unwrap();
    let batch = lazulite::add(symmetric(30, &[3, 4, 4]), eight_eye).unwrap();
    let moved = lazulite::moveaxis(&batch, 0, 2).unwrap();
    type Case = (&'static str, &'static str, fn(&[Array]) -> Result<Array>);
    let batched: Vec<Case> = vec![
        ("ops::linalg::decompositions::Inverse", "inv", |p| {
            linalg::inv(&p[0])
        }),
        (
            "ops::linalg::decompositions::SolveTriangular",
            "tri_inv",
            |p| linalg::tri_inv(&p[0], true),
        ),
        ("ops::linalg::decompositions::Eigh", "eigvalsh", |p| {
            linalg::eigvalsh(&p[0], "L")
        }),
        (
            "ops::linalg::decompositions::Eigh",
            "eigh vectors squared",
            |p| lazulite::square(&linalg::eigh(&p[0], "L")?.1),
        ),
        ("ops::linalg::decompositions::Svd", "svd values", |p| {
            Ok(linalg::svd(&p[0], false)?.remove(0))
        }),
        ("ops::linalg::decompositions::Qr", "qr r", |p| {
            Ok(linalg::qr(&p[0])?.1)
        }),
        ("ops::linalg::decompositions::LuFactor", "lu u", |p| {
            Ok(linalg::lu(&p[0])?.2)
        }),
        ("ops::linalg::decompositions::LuFactor", "lu_factor", |p| {
            Ok(linalg::lu_factor(&p[0])?.0)
        }),
        ("ops::linalg::decompositions::LuFactor", "det", |p| {
            linalg::det(&p[0])
        }),
        ("ops::linalg::decompositions::Svd", "pinv", |p| {
            linalg::pinv(&p[0])
        }),
        ("ops::linalg::decompositions::Svd", "norm 2", |p| {
            linalg::norm(&p[0], Some(2.into()), None, false)
        }),
        ("ops::linalg::Cholesky", "cholesky", |p| {
            lazulite::cholesky(&p[0], false)
        }),
    ];
    for (primitive, name, f) in batched {
        rows.push(row(primitive, format!("{name} batched"), vec![], f).vmap(
            vec![moved.clone()],
            vec![Some(2)],
            0,
        ));
    }
    let b = seeded(31, &[4, 3]);
    rows.extend([
        row(
            "ops::linalg::decompositions::Solve",
            "solve batched",
            vec![],
            |p| linalg::solve(&p[0], &p[1]),
        )
        .vmap(vec![batch.clone(), b.clone()], vec![Some(0), Some(1)], 1)
        .vmap(vec![batch.clone(), b.clone()], vec![None, Some(1)], 0),
        row(
            "ops::linalg::decompositions::SolveTriangular",
            "solve_triangular batched",
            vec![],
            |p| linalg::solve_triangular(&p[0], &p[1], false),
        )
        .vmap(vec![batch, b], vec![Some(0), None], 0),
    ]);
    // General eigenvalues: no derivatives (as in MLX), batching by a loop.
    let eig_input = array(&[2.0, 1.0, 0.0, 3.0], &[2, 2]);
    rows.push(
        row(
            "ops::linalg::decompositions::Eig",
            "eigvals",
            vec![eig_input],
            |p| lazulite::real(&linalg::eigvals(&p[0])?),
        )
        .no_rule(Transform::Vjp)
        .no_rule(Transform::Jvp)
        .vmap(vec![seeded(9, &[4, 4, 3])], vec![Some(2)], 0),
    );
    // Complex matrices (the rows' Fourier transforms) the same way.
    rows.push(
        row(
            "ops::linalg::decompositions::Eig",
            "eigvals of complex matrices",
            vec![seeded(11, &[3, 3])],
            |p| {
                let complex = fft::fft(&p[0], None, -1, FftNorm::Backward)?;
                lazulite::real(&linalg::eigvals(&complex)?)
            },
        )
        .no_rule(Transform::Vjp)
        .no_rule(Transform::Jvp)
        .vmap(vec![seeded(10, &[4, 4, 3])], vec![Some(2)], 0),
    );
    rows
}

/// A fixed linear functional of every output, so that each output's cotangent is used.
fn weighted_sum(outputs: &[Array]) -> Result<Array> {
    let mut total = Array::scalar(0.0f64);
    for (i, o) in outputs.iter().enumerate() {
        let w = array(&uniform(40 + i as u64, o.size(), -1.0, 1.0), o.shape()).astype(o.dtype())?;
        total = lazulite::add(
            &total,
            &lazulite::sum(&lazulite::multiply(o, &w)?, Axes::All, false)?,
        )?;
    }
    Ok(total)
}

fn spectral_rows() -> Vec<Row> {
    use crate::conv::{configurations, operands};
    use lazulite::{conv_general, conv_transpose1d, conv_transpose2d, ConvGeneral};
    const CONV: &str = "ops::conv::Convolution";
    let mut rows = vec![];
    for (i, (name, xs, ws, params)) in configurations().into_iter().enumerate() {
        let f = move |a: &[Array]| conv_general(&a[0], &a[1], &params);
        let nd = xs.len() as i32;
        let (mut xb, mut wb) = (xs.clone(), ws.clone());
        xb.insert(1, 3);
        wb.push(3);
        let batched = operands(&xb, &wb, 7 + i as u64);
        let plain = operands(&xs, &ws, 7 + i as u64);
        rows.push(
            row(
                CONV,
                format!("conv {name}"),
                operands(&xs, &ws, 10 * i as u64),
                f,
            )
            .derivatives()
            .vmap(
                vec![batched[0].clone(), plain[1].clone()],
                vec![Some(1), None],
                0,
            )
            .vmap(
                vec![plain[0].clone(), batched[1].clone()],
                vec![None, Some(nd)],
                1,
            )
            .vmap(batched, vec![Some(1), Some(nd)], -1),
        );
    }
    // The weight's cotangent rule differentiated: d/dx of <grad_w sum(conv(x, w)^2), w>.
    let params = ConvGeneral {
        stride: vec![2],
        padding_lo: vec![1],
        padding_hi: vec![0],
        groups: 2,
        ..ConvGeneral::default()
    };
    rows.extend([
        row(
            CONV,
            "conv_transpose2d",
            operands(&[2, 3, 4, 2], &[3, 3, 2, 2], 99),
            |a| conv_transpose2d(&a[0], &a[1], [2, 1], [1, 0], [1, 2], [1, 0], 1),
        )
        .derivatives(),
        row(
            CONV,
            "conv_transpose1d groups",
            operands(&[1, 4, 4], &[2, 3, 2], 98),
            |a| conv_transpose1d(&a[0], &a[1], 2, 1, 1, 1, 2),
        )
        .derivatives(),
        row(
            CONV,
            "conv grad of grad",
            operands(&[2, 7, 4], &[4, 3, 2], 5),
            move |a| {
                let p = params.clone();
                let g = lazulite::grad(move |w: &Array| {
                    let y = conv_general(&a[0], w, &p)?;
                    lazulite::sum(&lazulite::multiply(&y, &y)?, Axes::All, false)
                })(&a[1])?;
                lazulite::multiply(&g, &a[1])
            },
        )
        .derivatives(),
    ]);
    for mode in ["full", "same", "valid"] {
        rows.push(
            row(
                CONV,
                format!("convolve {mode}"),
                vec![seeded(90, &[6]), seeded(91, &[3])],
                move |x| lazulite::convolve(&x[0], &x[1], mode),
            )
            .derivatives()
            .vmap(
                vec![seeded(92, &[2, 6]), seeded(91, &[3])],
                vec![Some(0), None],
                0,
            ),
        );
    }
    // The transforms compute in complex64; their derivatives, linear in exact arithmetic,
    // are checked in fft.rs with perturbations too large for float32 rounding to matter.
    let real = seeded(8, &[3, 4, 6]);
    rows.extend([
        row("ops::fft::Fft", "rfft magnitude", vec![], |p| {
            lazulite::abs(&fft::rfft(&p[0], None, 0, FftNorm::Backward)?)
        })
        .vmap(vec![real.clone()], vec![Some(1)], 0),
        row("ops::fft::Fft", "irfft of rfft", vec![], |p| {
            fft::irfft(
                &fft::rfft(&p[0], None, -1, FftNorm::Ortho)?,
                Some(6),
                -1,
                FftNorm::Ortho,
            )
        })
        .vmap(vec![real], vec![Some(-2)], 0),
    ]);
    rows
}

fn quantized_rows() -> Vec<Row> {
    let w = seeded(1, &[6, 64]).astype(DType::Float32).unwrap();
    let affine = Quantization::affine(32, 4);
    let (w_q, s, b) = lazulite::quantize(&w, affine, None).unwrap();
    let (s, b) = (
        s.astype(DType::Float64).unwrap(),
        b.unwrap().astype(DType::Float64).unwrap(),
    );
    let mut rows = vec![];
    for transpose in [true, false] {
        let x = if transpose {
            seeded(2, &[3, 64])
        } else {
            seeded(3, &[3, 6])
        };
        let packed = w_q.clone();
        rows.push(
            row(
                "ops::quantized::QuantizedMatmul",
                format!("quantized_matmul transpose={transpose}"),
                vec![x, s.clone(), b.clone()],
                move |a| {
                    lazulite::quantized_matmul(
                        &a[0],
                        &packed,
                        &a[1],
                        Some(&a[2]),
                        transpose,
                        affine,
                    )
                },
            )
            .derivatives(),
        );
    }
    let packed = w_q.clone();
    rows.push(
        row(
            "ops::quantized::Dequantize",
            "dequantize",
            vec![s, b],
            move |a| lazulite::dequantize(&packed, &a[0], Some(&a[1]), affine, None, None),
        )
        .derivatives(),
    );
    // Batched over the rows of x, over stacks of packed matrices, and quantizing a stack.
    let group = Quantization::affine(64, 4);
    let ws = seeded(4, &[3, 8, 64]).astype(DType::Float32).unwrap();
    let (ws_q, ws_s, ws_b) = lazulite::quantize(&ws, group, None).unwrap();
    let ws_b = ws_b.unwrap();
    let first = lazulite::index(&ws, &idx![0]).unwrap();
    let (w0_q, w0_s, w0_b) = lazulite::quantize(&first, group, None).unwrap();
    let w0_b = w0_b.unwrap();
    let one_b = w0_b.clone();
    rows.extend([
        row(
            "ops::quantized::QuantizedMatmul",
            "quantized_matmul over x",
            vec![],
            move |a| lazulite::quantized_matmul(&a[0], &w0_q, &w0_s, Some(&w0_b), true, group),
        )
        .vmap(vec![seeded(8, &[2, 5, 64])], vec![Some(1)], 0),
        row(
            "ops::quantized::QuantizedMatmul",
            "quantized_matmul batched",
            vec![],
            move |a| lazulite::quantized_matmul(&a[0], &a[1], &a[2], Some(&a[3]), true, group),
        )
        .vmap(
            vec![
                seeded(5, &[5, 64]),
                ws_q.clone(),
                ws_s.clone(),
                ws_b.clone(),
            ],
            vec![None, Some(0), Some(0), Some(0)],
            1,
        )
        .vmap(
            vec![seeded(6, &[3, 2, 64]), ws_q.clone(), ws_s.clone(), ws_b],
            vec![Some(0), Some(0), Some(0), Some(0)],
            0,
        ),
        row(
            "ops::quantized::Dequantize",
            "dequantize batched",
            vec![],
            move |a| lazulite::dequantize(&a[0], &a[1], Some(&a[2]), group, None, None),
        )
        .vmap(vec![ws_q, ws_s, one_b], vec![Some(0), Some(0), None], 0),
        row(
            "ops::quantized::Quantize",
            "quantize batched",
            vec![],
            move |a| Ok(lazulite::quantize(&a[0], group, None)?.1),
        )
        .vmap(
            vec![seeded(7, &[8, 64, 4]).astype(DType::Float32).unwrap()],
            vec![Some(2)],
            0,
        ),
    ]);
    rows
}

/// MLX's floating-point quantization modes: products with and without a transposed
/// matrix, stacks of packed matrices and their dequantization.
fn quantized_fp_rows() -> Vec<Row> {
    use lazulite::QuantizationMode;
    let w = seeded(31, &[8, 64]);
    let x = seeded(32, &[3, 64]);
    let xs = seeded(33, &[2, 8]);
    let mut rows = vec![];
    for mode in [
        QuantizationMode::Mxfp4,
        QuantizationMode::Mxfp8,
        QuantizationMode::Nvfp4,
    ] {
        let q = Quantization::new(mode);
        let (w_q, s, _) = lazulite::quantize(&w, q, None).unwrap();
        let (w_q2, s2) = (w_q.clone(), s.clone());
        rows.push(
            row(
                "ops::quantized::QuantizedMatmul",
                format!("{mode:?} x @ W.T"),
                vec![x.clone()],
                move |a| lazulite::quantized_matmul(&a[0], &w_q, &s, None, true, q),
            )
            .derivatives()
            .vmap_own(vec![Some(0)], 0),
        );
        rows.push(
            row(
                "ops::quantized::QuantizedMatmul",
                format!("{mode:?} x @ W"),
                vec![xs.clone()],
                move |a| lazulite::quantized_matmul(&a[0], &w_q2, &s2, None, false, q),
            )
            .derivatives()
            .vmap_own(vec![Some(0)], 0),
        );
        let ws = seeded(34, &[4, 8, 64]).astype(DType::Float32).unwrap();
        let (qs, ss, _) = lazulite::quantize(&ws, q, None).unwrap();
        let x32 = x.astype(DType::Float32).unwrap();
        rows.push(
            row(
                "ops::quantized::QuantizedMatmul",
                format!("{mode:?} stacked matrices"),
                vec![],
                move |a| lazulite::quantized_matmul(&x32, &a[0], &a[1], None, true, q),
            )
            .vmap(vec![qs.clone(), ss.clone()], vec![Some(0), Some(0)], 0),
        );
        rows.push(
            row(
                "ops::quantized::Dequantize",
                format!("{mode:?} dequantize stacked"),
                vec![],
                move |a| lazulite::dequantize(&a[0], &a[1], None, q, None, None),
            )
            .vmap(vec![qs, ss], vec![Some(0), Some(0)], 0),
        );
        if mode == QuantizationMode::Mxfp4 {
            continue;
        }
        // The rounding of quantized-input products passes derivatives straight through
        // (MLX's rule, tested against NumPy in the Python suite); batching is checked here.
        let experts = seeded(35, &[3, 8, 64]).astype(DType::Float32).unwrap();
        rows.push(
            row(
                "ops::qqmm::QuantizeDequantize",
                format!("{mode:?} gather_qqmm over x"),
                vec![],
                move |a| lazulite::gather_qqmm(&a[0], &experts, None, None, None, q, None, None),
            )
            .vmap(
                vec![seeded(36, &[3, 2, 4, 64]).astype(DType::Float32).unwrap()],
                vec![Some(1)],
                0,
            ),
        );
    }
    rows
}

fn transform_rows() -> Vec<Row> {
    let x = seeded(11, &[2, 3]);
    let y = seeded(12, &[2, 3]);
    let sin_exp_tanh = |x: &[Array]| Ok(vec![(&x[0].sin()?.exp()? * &x[1]).tanh()?]);
    let compiled = lazulite::compile(sin_exp_tanh);
    let means = lazulite::compile_shapeless(|x: &[Array]| {
        Ok(vec![lazulite::mean(
            &lazulite::multiply(&x[0], &x[1])?,
            -1,
            false,
        )?])
    });
    let rows_of_means = lazulite::compile_shapeless(|x: &[Array]| {
        Ok(vec![lazulite::add(
            &x[0],
            &lazulite::mean(&x[1], 0, true)?,
        )?])
    });
    // The derivative of a reshape with -1, which a shapeless trace records against the
    // reshaped array's shape.
    let reshaped_grads = lazulite::compile_shapeless(|x: &[Array]| {
        let sines =
            |v: &Array| lazulite::sum(&lazulite::reshape(v, &[-1])?.sin()?, None::<i32>, false);
        Ok(vec![lazulite::multiply(
            &lazulite::grad(sines)(&x[0])?,
            &x[0],
        )?])
    });
    let with_rule = lazulite::custom_function(|x: &[Array]| Ok(vec![x[0].sin()?]))
        .vjp(|p, c, _| Ok(vec![lazulite::multiply(&c[0], &p[0].cos()?)?]))
        .jvp(|p, t| Ok(vec![lazulite::multiply(&t[0], &p[0].cos()?)?]));
    let without_rules = lazulite::custom_function(|x: &[Array]| {
        Ok(vec![lazulite::diagonal(
            &lazulite::tile(&x[0].sin()?, &[2, 1])?,
            1,
            0,
            1,
        )?])
    });
    let checkpointed = lazulite::checkpoint(|x: &[Array]| {
        let h = lazulite::concatenate(&[x[0].sin()?, x[0].exp()?], 1)?;
        Ok(vec![lazulite::trace(
            &lazulite::where_(lazulite::greater(&h, 1.0)?, &h.square()?, &h)?,
            0,
            0,
            1,
            None,
        )?])
    });
    let float32 = seeded(13, &[3, 8]).astype(DType::Float32).unwrap();
    let weight = seeded(14, &[8]).astype(DType::Float32).unwrap();
    vec![
        // The leaves the transforms put in front of a function's inputs: every derivative
        // row walks through a tracer, every vmap row starts from stand-ins.
        row(
            "transforms::tracer::Tracer",
            "grad of a product (tracers of tracers)",
            vec![x.clone()],
            |p| {
                lazulite::grad(|x: &Array| {
                    lazulite::sum(&lazulite::multiply(&x.sin()?, x)?, Axes::All, false)
                })(&p[0])
            },
        )
        .derivatives(),
        row(
            "transforms::tracer::VmapInput",
            "exp under vmap",
            vec![],
            |p| p[0].exp(),
        )
        .vmap(vec![seeded(15, &[4, 2])], vec![Some(1)], 0),
        row(
            "transforms::compile::CompileInput",
            "compiled chain",
            vec![x.clone(), y.clone()],
            move |p| Ok(sin_exp_tanh(p)?.remove(0)),
        )
        .compiled(),
        row(
            "export::write::ExportInput",
            "exported chain",
            vec![x.clone(), y.clone()],
            move |p| Ok(sin_exp_tanh(p)?.remove(0)),
        )
        .exported(),
        // Ops lazulite composes but MLX records as primitives of their own record one
        // node while exported; its transforms are the composition's.
        row(
            "ops::exported::ExportedAs",
            "pad exported",
            vec![x.clone()],
            |p| lazulite::pad(&p[0], &[(1, 2), (0, 1)], "constant", 0.5),
        )
        .exported(),
        row(
            "ops::exported::ExportedAs",
            "put_along_axis exported",
            vec![seeded(27, &[3, 4])],
            |p| {
                let slots = ints(&[2, 0, 1, 3, 0, 0], &[3, 2]);
                let values = lazulite::slice(&p[0], &[0, 1], &[3, 3], &[1, 1])?.sin()?;
                lazulite::put_along_axis(&p[0], &slots, &values, Some(1))
            },
        )
        .exported(),
        row(
            "ops::exported::ExportedAs",
            "divmod exported (two outputs)",
            vec![seeded(28, &[3, 4])],
            |p| {
                let (q, r) = lazulite::divmod(&p[0], 0.25)?;
                lazulite::add(&q, &r)
            },
        )
        .exported(),
        row(
            "ops::exported::ExportedAs",
            "take along a later axis exported (three MLX primitives)",
            vec![seeded(29, &[2, 3, 4])],
            |p| lazulite::take(&p[0], &ints(&[2, 0, -1], &[3]), Some(2)),
        )
        .exported(),
        // A compiled function's fused chain: transforms replay its steps.
        row(
            "transforms::compile::Fused",
            "compiled function",
            vec![x.clone(), y.clone()],
            move |p| Ok(compiled.call(p)?.remove(0)),
        )
        .derivatives()
        .vmap_own(vec![Some(1), Some(-1)], 0)
        .vmap(
            vec![seeded(16, &[4, 2, 3]), y.clone()],
            vec![Some(0), None],
            1,
        ),
        // Shapeless traces divide means by a count read from the shape at run time...
        row(
            "ops::reduce::NumberOfElements",
            "shapeless mean",
            vec![x.clone(), y.clone()],
            move |p| Ok(means.call(p)?.remove(0)),
        )
        .derivatives()
        .vmap(vec![seeded(17, &[2, 3, 4]), y], vec![Some(2), None], 0),
        // ...and broadcast against the other operands' shapes.
        row(
            "ops::view::BroadcastLike",
            "shapeless broadcast",
            vec![x.clone(), seeded(18, &[4, 3])],
            move |p| Ok(rows_of_means.call(p)?.remove(0)),
        )
        .derivatives()
        .vmap(
            vec![seeded(19, &[2, 2, 3]), seeded(18, &[4, 3])],
            vec![Some(0), None],
            0,
        ),
        row(
            "ops::view::ReshapeLike",
            "shapeless derivative of a reshape",
            vec![seeded(61, &[2, 3])],
            move |p| Ok(reshaped_grads.call(p)?.remove(0)),
        )
        .derivatives()
        .vmap(vec![seeded(62, &[4, 2, 3])], vec![Some(1)], 0),
        row(
            "transforms::custom::Custom",
            "custom function with rules",
            vec![x.clone()],
            move |p| Ok(with_rule.call(p)?.remove(0)),
        )
        .derivatives()
        .vmap(vec![seeded(20, &[3, 2])], vec![Some(-1)], 0),
        row(
            "transforms::custom::Custom",
            "custom function without rules",
            vec![seeded(21, &[3, 2])],
            move |p| Ok(without_rules.call(p)?.remove(0)),
        )
        .derivatives()
        .vmap(vec![seeded(22, &[4, 3, 2])], vec![Some(0)], 1),
        row(
            "transforms::custom::Custom",
            "checkpoint",
            vec![seeded(23, &[3, 4])],
            move |p| Ok(checkpointed(p)?.remove(0)),
        )
        .derivatives(),
        // A fast kernel is computed in float32 and transformed as its composition.
        row(
            "transforms::custom::Fused",
            "rms_norm",
            vec![float32, weight],
            |p| lazulite::fast::rms_norm(&p[0], Some(&p[1]), 1e-5),
        )
        .derivatives(),
        row(
            "transforms::custom::Fused",
            "rope",
            vec![seeded(26, &[1, 3, 4]).astype(DType::Float32).unwrap()],
            |p| {
                lazulite::fast::rope(
                    &p[0],
                    4,
                    false,
                    lazulite::fast::RopeFrequencies::Base(10000.0),
                    1.0,
                    0,
                )
            },
        )
        .derivatives(),
        row(
            "ops::depends::Depends",
            "depends",
            vec![array(&[0.5, -1.0, 2.0], &[3]), array(&[4.0, 5.0], &[2])],
            |p| {
                let out = lazulite::depends(&[p[0].sin()?], &[p[1].exp()?])?;
                lazulite::multiply(&out[0], &p[0])
            },
        )
        .derivatives()
        .vmap(
            vec![seeded(24, &[2, 3]), array(&[4.0, 5.0], &[2])],
            vec![Some(0), None],
            0,
        )
        .vmap(
            vec![seeded(24, &[2, 3]), seeded(25, &[2, 2])],
            vec![Some(0), Some(1)],
            0,
        ),
    ]
}

/// Sources have no inputs, so no transform reaches their (absent) rules: under a
/// transform they are constants.
fn source_rows() -> Vec<Row> {
    let path = std::env::temp_dir().join(format!("lazulite_rules_{}.npy", std::process::id()));
    lazulite::save(&path, &array(&[0.5, 1.5, -2.0], &[3])).unwrap();
    let load = move || -> Result<Array> {
        match lazulite::load(&path, None, false)? {
            lazulite::Loaded::Array(a) => Ok(a),
            _ => unreachable!("an .npy file holds one array"),
        }
    };
    let x = seeded(1, &[2, 3]);
    let batch = seeded(2, &[4, 2, 3]);
    let (xb, y) = (
        uniform_array(50, &[5, 3, 4], 0.1, 0.9),
        uniform_array(51, &[3, 4], 0.1, 0.9),
    );
    let swapped = lazulite::swapaxes(&xb, 0, 1).unwrap();
    type Case = (&'static str, fn(&[Array]) -> Result<Array>);
    let inside: Vec<Case> = vec![
        ("arange inside", |p| {
            lazulite::add(
                &p[0],
                &lazulite::add(&p[1], &lazulite::arange(0.0, 4.0, 1.0, DType::Float64)?)?,
            )
        }),
        ("eye inside", |p| {
            lazulite::add(
                &lazulite::multiply(&p[0], &p[1])?,
                &lazulite::eye(3, Some(4), 1, DType::Float64)?,
            )
        }),
    ];
    let mut rows: Vec<Row> = inside
        .into_iter()
        .map(|(name, f)| {
            row("ops::creation::Arange", name, vec![], f)
                .vmap(vec![xb.clone(), y.clone()], vec![Some(0), None], 1)
                .vmap(
                    vec![swapped.clone(), xb.clone()],
                    vec![Some(1), Some(0)],
                    -2,
                )
        })
        .collect();
    rows.extend([
        row(
            "ops::creation::Arange",
            "arange added",
            vec![x.clone()],
            |p| lazulite::multiply(&p[0], &lazulite::arange(0.0, 3.0, 1.0, DType::Float64)?),
        )
        .derivatives()
        .vmap(vec![batch.clone()], vec![Some(0)], 1),
        row(
            "ops::creation::Linspace",
            "linspace added",
            vec![x.clone()],
            |p| {
                lazulite::add(
                    &p[0],
                    &lazulite::linspace(0.0, 1.0, 3, true, DType::Float64)?,
                )
            },
        )
        .derivatives()
        .vmap(vec![batch.clone()], vec![Some(0)], 1),
        row("io::Load", "loaded array", vec![x], move |p| {
            lazulite::multiply(&p[0], &load()?)
        })
        .derivatives()
        .vmap(vec![batch], vec![Some(0)], 1),
    ]);
    rows
}

/// Collectives record their primitives only in a group of several processes.
fn distributed_rows() -> Vec<Row> {
    let world = world();
    let (rank, size) = (world.rank() as i64, world.size() as i64);
    let next = (rank + 1) % size;
    let previous = (rank + size - 1) % size;
    let x = seeded(1, &[4, 3]);
    vec![
        row(
            "ops::distributed::AllReduce",
            "all_sum batched",
            vec![],
            |p| distributed::all_sum(&p[0], None),
        )
        .vmap(vec![x.clone()], vec![Some(1)], 0)
        .needs_peers(),
        row(
            "ops::distributed::AllGather",
            "all_gather batched",
            vec![],
            |p| distributed::all_gather(&p[0], None),
        )
        .vmap(vec![x.clone()], vec![Some(0)], 0)
        .needs_peers(),
        row(
            "ops::distributed::SumScatter",
            "sum_scatter",
            vec![x.clone()],
            // One copy per process: the first axis divides by the group's size.
            move |p| {
                distributed::sum_scatter(
                    &lazulite::concatenate(&vec![p[0].clone(); size as usize], 0)?,
                    None,
                )
            },
        )
        .no_rule(Transform::Vjp)
        .vmap(vec![seeded(2, &[4, 3, 2])], vec![Some(2)], 0)
        .needs_peers(),
        row(
            "ops::distributed::Send",
            "send",
            vec![x.clone()],
            move |p| distributed::send(&p[0], next, None),
        )
        .no_rule(Transform::Vjp)
        .no_rule(Transform::Jvp)
        .needs_peers(),
        // Every process sends a constant around the ring and adds what it receives; the
        // send comes first among the sum's inputs, so it is evaluated before the receive.
        row(
            "ops::distributed::Recv",
            "recv added",
            vec![x.clone()],
            move |p| {
                let message = array(&[1.0, 2.0, 3.0], &[3]);
                let sent = distributed::send(&message, next, None)?;
                let after_sending = lazulite::depends(&[p[0].clone()], &[sent])?.remove(0);
                let received = distributed::recv_like(&message, previous, None)?;
                lazulite::add(&after_sending, &received)
            },
        )
        .derivatives()
        .needs_peers(),
    ]
}

fn world() -> Group {
    distributed::init(false, "any").unwrap()
}

fn table() -> Vec<Row> {
    [
        unary_rows(),
        binary_rows(),
        cast_and_select_rows(),
        shape_rows(),
        two_input_shape_rows(),
        view_rows(),
        reduction_rows(),
        softmax_rows(),
        prod_with_zeros_rows(),
        scan_rows(),
        sort_rows(),
        matmul_rows(),
        gather_mm_rows(),
        indexing_rows(),
        random_rows(),
        linalg_rows(),
        spectral_rows(),
        quantized_rows(),
        quantized_fp_rows(),
        transform_rows(),
        source_rows(),
        distributed_rows(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

// Running the checks.

/// Primitive types seen in the graphs a row's function recorded, under every transform
/// its checks ran.
type Seen = Arc<Mutex<BTreeSet<&'static str>>>;

/// `f`, noting the primitive types in the graph of each result.
fn recording(f: &RowFn, seen: &Seen) -> RowFn {
    let (f, seen) = (f.clone(), seen.clone());
    Arc::new(move |p: &[Array]| {
        let y = f(p)?;
        seen.lock().unwrap().extend(primitive_types(&[&y]));
        Ok(y)
    })
}

fn values(a: &Array) -> Vec<f64> {
    a.astype(DType::Float64).unwrap().to_vec::<f64>().unwrap()
}

fn assert_same_values(name: &str, got: &Array, want: &Array) {
    assert_eq!(got.shape(), want.shape(), "{name}: shape");
    let (got, want) = (values(got), values(want));
    for (g, w) in got.iter().zip(&want) {
        assert!(
            (g - w).abs() <= 1e-9 * (1.0 + w.abs()),
            "{name}: {got:?} vs {want:?}"
        );
    }
}

fn run_check(name: &str, f: &RowFn, inputs: &[Array], check: &Check) {
    match check {
        Check::Derivatives => common::check_derivatives(name, f.as_ref(), inputs),
        Check::Vjp => check_vjp(name, f, inputs),
        Check::Vmap {
            inputs,
            in_axes,
            out_axis,
        } => common::check_vmap(name, f.as_ref(), inputs, in_axes.clone(), *out_axis),
        Check::NoRule(transform) => {
            let g = |p: &[Array]| Ok(vec![f(p)?]);
            let result = match transform {
                Transform::Vjp => {
                    let out = f(inputs).unwrap();
                    let ones = lazulite::ones_like(&out).unwrap();
                    vjp(g, inputs, &[ones]).map(|_| ())
                }
                Transform::Jvp => jvp(g, inputs, inputs).map(|_| ()),
            };
            match result {
                Err(e) => assert_eq!(
                    e.kind(),
                    ErrorKind::NotImplemented,
                    "{name}: {transform:?} failed with another error: {e}"
                ),
                Ok(()) => panic!("{name}: {transform:?} has a rule, but the row says it has none"),
            }
        }
        Check::Compiled => {
            let g = f.clone();
            let compiled = lazulite::compile(move |p: &[Array]| Ok(vec![g(p)?]));
            assert_same_values(
                name,
                &compiled.call(inputs).unwrap()[0],
                &f(inputs).unwrap(),
            );
        }
        Check::Exported => {
            let path = std::env::temp_dir().join(format!(
                "lazulite_rules_{}_{}.mlxfn",
                std::process::id(),
                name.replace(' ', "_")
            ));
            let g = f.clone();
            export_function(
                &path,
                move |p: &[Array], _: &Kwargs| Ok(vec![g(p)?]),
                inputs,
                &Kwargs::new(),
            )
            .unwrap();
            let imported = import_function(&path).unwrap();
            let _ = std::fs::remove_file(&path);
            assert_same_values(
                name,
                &imported.call(inputs, &Kwargs::new()).unwrap()[0],
                &f(inputs).unwrap(),
            );
        }
    }
}

/// `<vjp(w), d>` against central differences of `<w, f>` along a random direction `d`.
fn check_vjp(name: &str, f: &RowFn, inputs: &[Array]) {
    let eps = 1e-6;
    let directions: Vec<Vec<f64>> = inputs
        .iter()
        .enumerate()
        .map(|(i, x)| uniform(77 + i as u64, x.size(), -1.0, 1.0))
        .collect();
    let out = f(inputs).unwrap();
    let w = uniform(7, out.size(), -1.0, 1.0);
    let moved = |sign: f64| -> f64 {
        let shifted: Vec<Array> = inputs
            .iter()
            .zip(&directions)
            .map(|(x, d)| {
                let v: Vec<f64> = values(x)
                    .iter()
                    .zip(d)
                    .map(|(a, b)| a + sign * eps * b)
                    .collect();
                array(&v, x.shape())
            })
            .collect();
        common::dot(&f(&shifted).unwrap(), &w)
    };
    let fd = (moved(1.0) - moved(-1.0)) / (2.0 * eps);
    let (_, grads) = vjp(|p| Ok(vec![f(p)?]), inputs, &[array(&w, out.shape())]).unwrap();
    let via_vjp: f64 = grads
        .iter()
        .zip(&directions)
        .map(|(g, d)| common::dot(g, d))
        .sum();
    assert!(
        (via_vjp - fd).abs() < 1e-5 * (1.0 + fd.abs()),
        "{name}: vjp {via_vjp} vs finite differences {fd}"
    );
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    match payload.downcast::<String>() {
        Ok(s) => *s,
        Err(payload) => match payload.downcast::<&str>() {
            Ok(s) => s.to_string(),
            Err(_) => "a panic without a message".to_string(),
        },
    }
}

#[test]
fn every_row_matches_its_oracle() {
    let peers = world().size() > 1;
    let mut failures = vec![];
    let rows = table();
    for r in &rows {
        if r.needs_peers && !peers {
            continue;
        }
        let seen: Seen = Arc::default();
        let f = recording(&r.f, &seen);
        for check in &r.checks {
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                run_check(&r.name, &f, &r.inputs, check)
            }));
            if let Err(payload) = outcome {
                failures.push(format!(
                    "{} [{}]: {}",
                    r.name,
                    r.primitive,
                    panic_message(payload)
                ));
            }
        }
        let expected = format!("lazulite::{}", r.primitive);
        let seen = seen.lock().unwrap();
        if r.checks.is_empty() {
            failures.push(format!("{}: the row has no check", r.name));
        } else if !seen.contains(expected.as_str()) {
            failures.push(format!(
                "{}: names {} but its graphs record only {:?}",
                r.name, r.primitive, seen
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} rows failed:\n{}",
        failures.len(),
        rows.len(),
        failures.join("\n")
    );
}

/// Every `impl Primitive for X` under `src/`, as `type_name` spells `X`: the module path
/// comes from the file's path (`ops/linalg/decompositions.rs` is
/// `ops::linalg::decompositions`, `io/mod.rs` is `io`).
fn primitives_in_sources() -> BTreeSet<String> {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = BTreeSet::new();
    let mut folders = vec![src.clone()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let relative = path.strip_prefix(&src).unwrap().with_extension("");
            let mut module: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
                module.pop();
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for line in text.lines() {
                let Some(rest) = line.trim_start().split("Primitive for ").nth(1) else {
                    continue;
                };
                if !line.trim_start().starts_with("impl") {
                    continue;
                }
                let ty: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                let mut path = module.clone();
                path.push(ty);
                found.insert(path.join("::"));
            }
        }
    }
    found
}

/// The names of the functions an elementwise table lists (its `*_functions!` macro).
macro_rules! function_names {
    ($($name:ident $summary:literal,)*) => {
        [$(stringify!($name)),*]
    };
}

/// The functions of `functions` that no row of `rows` names (by its first word).
fn without_a_row(rows: Vec<Row>, functions: &[&str]) -> Vec<String> {
    let in_rows: BTreeSet<String> = rows
        .iter()
        .filter_map(|r| r.name.split([' ', ',']).next().map(String::from))
        .collect();
    functions
        .iter()
        .filter(|f| !in_rows.contains(**f))
        .map(|f| f.to_string())
        .collect()
}

#[test]
fn the_rows_name_every_elementwise_function() {
    let unary = without_a_row(unary_rows(), &lazulite::unary_functions!(function_names));
    let binary = without_a_row(binary_rows(), &lazulite::binary_functions!(function_names));
    assert!(
        unary.is_empty() && binary.is_empty(),
        "functions without a row: {unary:?} {binary:?}"
    );
}

#[test]
fn the_rows_name_every_primitive() {
    let in_sources = primitives_in_sources();
    let in_rows: BTreeSet<String> = table().iter().map(|r| r.primitive.to_string()).collect();
    let missing: Vec<_> = in_sources.difference(&in_rows).collect();
    let unknown: Vec<_> = in_rows.difference(&in_sources).collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "primitives without a row: {missing:?}; rows naming no primitive in src/: {unknown:?}"
    );
    assert!(in_sources.len() > 50, "found only {in_sources:?}");
}
