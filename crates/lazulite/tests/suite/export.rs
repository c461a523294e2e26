//! Function export and import in MLX's `.mlxfn` format: files written by real MLX 0.32.4
//! (python/tests/mlx_export/, made by tools/mlx_reference/export_functions.py) run here
//! and match MLX's outputs; lazulite's own exports import back to the same values.

use lazulite::export::{export_function, exporter, import_function, import_function_bytes, Kwargs};
use lazulite::*;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../python/tests/mlx_export")
}

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "lazulite_export_{}_{name}.mlxfn",
        std::process::id()
    ))
}

fn close(actual: &Array, expected: &Array, context: &str) {
    crate::common::assert_arrays_close(actual, expected, 1e-4, 1e-4, context);
}

/// Positional inputs and outputs by position, keyword inputs by name.
type SavedCall = (BTreeMap<usize, Array>, Kwargs, BTreeMap<usize, Array>);

/// The calls saved in `<name>.npz`: positional inputs, keyword inputs, MLX's outputs.
fn saved_calls(name: &str) -> Vec<(Vec<Array>, Kwargs, Vec<Array>)> {
    let arrays = load(fixtures().join(format!("{name}.npz")), None, false)
        .unwrap()
        .into_arrays()
        .unwrap();
    let mut calls: BTreeMap<usize, SavedCall> = BTreeMap::new();
    for (key, a) in arrays {
        let (call, rest) = key.strip_prefix("call").unwrap().split_once('_').unwrap();
        let entry = calls.entry(call.parse().unwrap()).or_default();
        if let Some(k) = rest.strip_prefix("kw_") {
            entry.1.insert(k.to_string(), a);
        } else if let Some(i) = rest.strip_prefix("arg") {
            entry.0.insert(i.parse().unwrap(), a);
        } else {
            entry
                .2
                .insert(rest.strip_prefix("out").unwrap().parse().unwrap(), a);
        }
    }
    calls
        .into_values()
        .map(|(a, k, o)| (a.into_values().collect(), k, o.into_values().collect()))
        .collect()
}

fn check_mlx_file(name: &str) {
    let f = import_function(fixtures().join(format!("{name}.mlxfn"))).unwrap();
    for (c, (args, kwargs, expected)) in saved_calls(name).into_iter().enumerate() {
        let outputs = f.call(&args, &kwargs).unwrap();
        assert_eq!(outputs.len(), expected.len(), "{name}");
        for (j, (o, e)) in outputs.iter().zip(&expected).enumerate() {
            close(o, e, &format!("{name} call {c} output {j}"));
        }
    }
}

#[test]
fn mlx_files_run_with_mlx_outputs() {
    for name in [
        "mlp",
        "transformer_block",
        "kwargs_and_constants",
        "integers",
        "quantized_linear",
        "conv2d",
        "signatures",
        "pad_and_stride",
        "windows",
        "spectra",
        "factorizations",
        "searches",
        "experts",
        "window_updates",
        // Transforms inside the function.
        "grad_mlp",
        "vmap_grad",
        "jvp_vjp",
        "compiled",
        // Shapeless files, called at other sizes than they were exported at.
        "shapeless_mlp",
        "shapeless_attention",
        // Gradients (value_and_grad, vmap of grad) in shapeless files at other sizes.
        "shapeless_grad_mlp",
        "shapeless_vmap_grad",
        // The fused primitives MLX records on a GPU and the gradients of its norms there
        // (tools/mlx_reference/gpu_fast_ops.py).
        "gpu_fast_ops",
    ] {
        check_mlx_file(name);
    }
}

#[test]
fn imported_functions_differentiate_and_batch() {
    let f = import_function(fixtures().join("mlp.mlxfn")).unwrap();
    let (args, _, _) = saved_calls("mlp").remove(0);
    // The imported graph is made of lazulite ops: grad and vmap apply.
    let loss = |x: &Array| {
        sum(
            &f.call(std::slice::from_ref(x), &Kwargs::new())?[0].square()?,
            None::<i32>,
            false,
        )
    };
    let g = grad(loss)(&args[0]).unwrap();
    let h = 1e-3f32;
    let x = args[0].to_vec::<f32>().unwrap();
    let gv = g.to_vec::<f32>().unwrap();
    for i in [0, 5, 17] {
        let mut up = x.clone();
        up[i] += h;
        let mut down = x.clone();
        down[i] -= h;
        let at = |v: Vec<f32>| {
            loss(&Array::from_slice(&v, &[3, 8]).unwrap())
                .unwrap()
                .item::<f32>()
                .unwrap()
        };
        let fd = (at(up) - at(down)) / (2.0 * h);
        assert!((fd - gv[i]).abs() < 2e-3, "element {i}: {fd} vs {}", gv[i]);
    }
}

/// Exports `f` at `example`, imports it and checks it against `f` on `run`.
fn round_trip(name: &str, f: fn(&[Array]) -> Result<Vec<Array>>, example: &[Array], run: &[Array]) {
    let path = temp(name);
    export_function(
        &path,
        move |a: &[Array], _: &Kwargs| f(a),
        example,
        &Kwargs::new(),
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    let g = import_function(&path).unwrap();
    let got = g
        .call(run, &Kwargs::new())
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let want = f(run).unwrap();
    assert_eq!(got.len(), want.len());
    for (j, (a, b)) in got.iter().zip(&want).enumerate() {
        assert_eq!(a.dtype(), b.dtype(), "{name} output {j}");
        close(a, b, &format!("{name} output {j}"));
    }
    std::fs::remove_file(&path).ok();
}

fn floats(seed: u64, shape: &[usize]) -> Array {
    random::normal(shape, DType::Float32, None, None, Some(&random::key(seed))).unwrap()
}

fn ints(seed: u64, shape: &[usize]) -> Array {
    random::randint(0, 9, shape, DType::Int32, Some(&random::key(seed))).unwrap()
}

#[test]
fn elementwise_round_trip() {
    let (x, y) = (floats(1, &[3, 4]), floats(2, &[3, 4]));
    round_trip(
        "unary",
        |a| {
            let x = &a[0];
            let p = abs(x)?;
            Ok(vec![
                sin(x)?,
                cos(x)?,
                tan(x)?,
                tanh(x)?,
                sinh(x)?,
                cosh(x)?,
                exp(x)?,
                expm1(x)?,
                log(&p)?,
                log2(&p)?,
                log10(&p)?,
                log1p(&p)?,
                sqrt(&p)?,
                rsqrt(&add(&p, 1.0)?)?,
                sigmoid(x)?,
                erf(x)?,
                floor(x)?,
                ceil(x)?,
                round(x, 0)?,
                sign(x)?,
                square(x)?,
                negative(x)?,
                arctan(x)?,
                arcsinh(x)?,
                reciprocal(x)?,
                isnan(x)?,
                isinf(x)?,
                isfinite(x)?,
                trunc(x)?,
                stop_gradient(x)?,
            ])
        },
        std::slice::from_ref(&x),
        std::slice::from_ref(&y),
    );
    round_trip(
        "binary",
        |a| {
            let (x, y) = (&a[0], &a[1]);
            Ok(vec![
                add(x, y)?,
                subtract(x, y)?,
                multiply(x, y)?,
                divide(x, y)?,
                maximum(x, y)?,
                minimum(x, y)?,
                power(&abs(x)?, y)?,
                arctan2(x, y)?,
                logaddexp(x, y)?,
                floor_divide(x, y)?,
                remainder(x, y)?,
                equal(x, y)?,
                not_equal(x, y)?,
                less(x, y)?,
                less_equal(x, y)?,
                greater(x, y)?,
                greater_equal(x, y)?,
                logical_and(&greater(x, 0.0)?, &less(y, 0.0)?)?,
                add(x, 2.5)?,
                multiply(
                    x,
                    &reshape(&arange(0.0, 4.0, 1.0, DType::Float32)?, &[1, 4])?,
                )?,
            ])
        },
        &[x.clone(), y.clone()],
        &[y.clone(), x.clone()],
    );
    round_trip(
        "integer",
        |a| {
            let (i, j) = (&a[0], &a[1]);
            Ok(vec![
                bitwise_and(i, j)?,
                bitwise_or(i, j)?,
                bitwise_xor(i, j)?,
                left_shift(i, 2)?,
                right_shift(i, 1)?,
                floor_divide(i, &add(j, 1)?)?,
                remainder(i, &add(j, 1)?)?,
                astype(i, DType::Float16)?,
                where_(&greater(i, j)?, i, j)?,
            ])
        },
        &[ints(3, &[2, 5]), ints(4, &[2, 5])],
        &[ints(5, &[2, 5]), ints(6, &[2, 5])],
    );
}

#[test]
fn shape_reduction_and_linalg_round_trip() {
    let (x, y) = (floats(7, &[2, 3, 4]), floats(8, &[2, 3, 4]));
    round_trip(
        "shapes",
        |a| {
            let x = &a[0];
            Ok(vec![
                transpose(x, &[2, 0, 1])?,
                reshape(x, &[6, 4])?,
                broadcast_to(&sum(x, 0, true)?, &[5, 3, 4])?,
                slice(x, &[1, 2, 0], &[2, -4, 4], &[1, -1, 2])?,
                flatten(x, 0, 1)?,
                expand_dims(x, 1)?,
                squeeze(&sum(x, 1, true)?, 1)?,
                concatenate(&[x.clone(), x.clone()], 2)?,
                slice_update(
                    x,
                    &ones(&[2, 1, 2], DType::Float32)?,
                    &[0, 1, 0],
                    &[2, 2, 4],
                    &[1, 1, 2],
                )?,
            ])
        },
        std::slice::from_ref(&x),
        std::slice::from_ref(&y),
    );
    round_trip(
        "reductions",
        |a| {
            let x = &a[0];
            Ok(vec![
                sum(x, vec![0, 2], false)?,
                prod(x, 1, true)?,
                max(x, None::<i32>, false)?,
                min(x, 2, false)?,
                mean(x, 1, false)?,
                all(&greater(x, -3.0)?, 0, false)?,
                any(&greater(x, 1.0)?, vec![1, 2], true)?,
                argmax(x, Some(1), false)?,
                argmin(x, Some(2), true)?,
                softmax(x, 1, false)?,
                softmax(x, -1, true)?,
                logsumexp(x, 0, false)?,
                logsumexp(x, 2, true)?,
                var(x, 2, false, 0)?,
                cumsum(x, Some(1), false, true, None)?,
                cummax(x, Some(2), true, true)?,
                sort(x, Some(1))?,
                argsort(x, Some(2))?,
                sum(&ones(&[3], DType::Bool)?, 0, false)?,
            ])
        },
        std::slice::from_ref(&x),
        std::slice::from_ref(&y),
    );
    round_trip(
        "linalg",
        |a| {
            let (m, n) = (&a[0], &a[1]);
            let nt = transpose(n, &[0, 2, 1])?;
            Ok(vec![
                matmul(m, &nt)?,
                matmul(&reshape(m, &[6, 4])?, &ones(&[4], DType::Float32)?)?,
                addmm(
                    &ones(&[3], DType::Float32)?,
                    &reshape(m, &[6, 4])?,
                    &ones(&[4, 3], DType::Float32)?,
                    2.0,
                    0.5,
                )?,
            ])
        },
        &[x.clone(), y.clone()],
        &[y.clone(), x.clone()],
    );
}

#[test]
fn indexing_and_fused_round_trip() {
    let (x, y) = (floats(9, &[4, 6]), floats(10, &[4, 6]));
    round_trip(
        "indexing",
        |a| {
            let x = &a[0];
            let idx = Array::from_slice(&[3i32, 0, 2], &[3]).unwrap();
            Ok(vec![
                take(x, &idx, Some(0))?,
                take(x, &idx, Some(1))?,
                take_along_axis(x, &argsort(x, Some(1))?, Some(1))?,
                at(x, &[Index::from(idx.clone())]).add(1.0)?,
                at(x, &[Index::from(idx.clone())]).maximum(0.5)?,
                index(x, &[Index::from(idx.clone()), Index::from(1i64)])?,
            ])
        },
        std::slice::from_ref(&x),
        std::slice::from_ref(&y),
    );
    round_trip(
        "fast",
        |a| {
            let x = &a[0];
            let w = Array::from_slice(&[1.0f32, 0.5, 2.0, 1.0, 0.25, 1.5], &[6]).unwrap();
            Ok(vec![
                fast::rms_norm(x, Some(&w), 1e-5)?,
                fast::layer_norm(x, Some(&w), None, 1e-5)?,
            ])
        },
        std::slice::from_ref(&x),
        std::slice::from_ref(&y),
    );
}

/// `sum(sin(x) * x)`, the function the transform tests differentiate.
fn sin_times_x(x: &Array) -> Result<Array> {
    sum(&multiply(&sin(x)?, x)?, None::<i32>, false)
}

#[test]
fn transforms_inside_round_trip() {
    let (w, x) = (floats(11, &[3, 2]), floats(12, &[4, 3]));
    let (w2, x2) = (floats(13, &[3, 2]), floats(14, &[4, 3]));
    // The file holds the backward pass as MLX primitives: the tracers in front of the
    // differentiated inputs leave nothing behind.
    round_trip(
        "grad",
        |a| Ok(vec![grad(sin_times_x)(&a[0])?]),
        std::slice::from_ref(&x),
        std::slice::from_ref(&x2),
    );
    round_trip(
        "value_and_grad",
        |a| {
            let loss = |p: &Vec<Array>| {
                let h = tanh(&add(&matmul(&p[2], &p[0])?, &p[1])?)?;
                mean(&square(&h)?, None::<i32>, false)
            };
            let bias = Array::from_slice(&[0.5f32, -0.5], &[2])?;
            let (value, grads) = value_and_grad(loss)(&vec![a[0].clone(), bias, a[1].clone()])?;
            Ok(vec![
                value,
                grads[0].clone(),
                grads[1].clone(),
                grads[2].clone(),
            ])
        },
        &[w.clone(), x.clone()],
        &[w2.clone(), x2.clone()],
    );
    round_trip(
        "vjp_and_jvp",
        |a| {
            let f = |p: &[Array]| {
                Ok(vec![
                    multiply(&sin(&p[0])?, &exp(&p[1])?)?,
                    cumsum(&p[0], Some(0), false, true, None)?,
                ])
            };
            let (_, cotangents) = vjp(f, &a[..2], &[a[2].clone(), a[2].clone()])?;
            let (_, tangents) = jvp(f, &a[..2], &[a[2].clone(), a[0].clone()])?;
            Ok([cotangents, tangents].concat())
        },
        &[floats(15, &[5]), floats(16, &[5]), floats(17, &[5])],
        &[floats(18, &[5]), floats(19, &[5]), floats(20, &[5])],
    );
    round_trip(
        "vmap_of_grad_and_grad_of_grad",
        |a| {
            let per_row = vmap(
                |r| Ok(vec![grad(sin_times_x)(&r[0])?]),
                vec![Some(0)],
                vec![Some(0)],
            );
            let second = grad(|x: &Array| sum(&grad(sin_times_x)(x)?, None::<i32>, false));
            Ok(vec![per_row(&a[..1])?.remove(0), second(&a[0])?])
        },
        std::slice::from_ref(&x),
        std::slice::from_ref(&x2),
    );
    round_trip(
        "compile",
        |a| {
            // The fused steps are written as the primitives they run.
            let f = compile(|x: &[Array]| Ok(vec![multiply(&tanh(&x[0])?, &add(&x[0], 1.0)?)?]));
            let y = f.call(&a[..1])?.remove(0);
            let g = grad(move |x: &Array| {
                sum(&f.call(std::slice::from_ref(x))?[0], None::<i32>, false)
            });
            Ok(vec![y, g(&a[0])?])
        },
        std::slice::from_ref(&x),
        std::slice::from_ref(&x2),
    );
    round_trip(
        "custom_vjp_and_stop_gradient",
        |a| {
            // exp with its gradient scaled by 3: the file holds the rule's computation.
            let f = custom_function(|x: &[Array]| Ok(vec![exp(&x[0])?])).vjp(
                |_, cotangents, outputs| {
                    Ok(vec![multiply(
                        &multiply(&cotangents[0], &outputs[0])?,
                        3.0,
                    )?])
                },
            );
            let loss = move |x: &Array| {
                let y = f.call(std::slice::from_ref(x))?.remove(0);
                sum(&multiply(&y, &stop_gradient(x)?)?, None::<i32>, false)
            };
            Ok(vec![grad(loss)(&a[0])?])
        },
        std::slice::from_ref(&x),
        std::slice::from_ref(&x2),
    );
}

#[test]
fn gradient_export_writes_mlx_backward_pass() {
    use lazulite::export::{export_to_callback, ExportEvent};
    // The primitives real MLX 0.32.4 writes for the gradient of sum(sin(x) * x), besides
    // the first cotangent of ones (MLX expands a scalar 1, lazulite fills one).
    let mut names = vec![];
    let record = |event| {
        if let ExportEvent::Primitive { name, .. } = event {
            names.push(name);
        }
        Ok(())
    };
    let g = |a: &[Array], _: &Kwargs| Ok(vec![grad(sin_times_x)(&a[0])?]);
    export_to_callback(record, g, &[floats(21, &[2])], &Kwargs::new(), false).unwrap();
    let mut computed: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|n| !matches!(*n, "Full" | "Reshape" | "ExpandDims" | "Broadcast"))
        .collect();
    computed.sort_unstable();
    assert_eq!(
        computed,
        ["Add", "Cos", "Multiply", "Multiply", "Multiply", "Sin"]
    );
}

#[test]
fn shapeless_vmap_of_grad_broadcasts_per_example() {
    // Under vmap, a shapeless trace broadcasts the gradient's first cotangent against the
    // batched input only: the nodes after it see an unbatched input.
    let f = |a: &[Array]| {
        vmap(
            |r| Ok(vec![grad(sin_times_x)(&r[0])?]),
            vec![Some(0)],
            vec![Some(0)],
        )(a)
    };
    let compiled = compile_shapeless(f);
    for rows in [4, 6] {
        let x = floats(22 + rows as u64, &[rows, 3]);
        let got = compiled.call(std::slice::from_ref(&x)).unwrap();
        let want = f(std::slice::from_ref(&x)).unwrap();
        close(&got[0], &want[0], &format!("{rows} rows"));
    }
}

#[test]
fn slices_record_the_stop_given() {
    use lazulite::export::{export_to_callback, ExportEvent, MlxState};
    // (start, stop, step) given, and what MLX 0.32.4 records for them on 10 elements: the
    // start wrapped and clamped, the stop as given, a single element one step past it.
    let cases: [([i64; 3], [i32; 3]); 5] = [
        ([1, 100, 1], [1, 100, 1]),
        ([0, -1, 1], [0, -1, 1]),
        ([8, 6, -5], [8, 7, -1]),
        ([0, -11, -1], [0, 1, 1]),
        ([-20, -11, -1], [-10, -11, -1]),
    ];
    let f = move |a: &[Array], _: &Kwargs| {
        cases
            .iter()
            .map(|([b, e, k], _)| multiply(&slice(&a[0], &[*b], &[*e], &[*k])?, 2.0))
            .collect()
    };
    let mut recorded = vec![];
    let record = |event| {
        if let ExportEvent::Primitive {
            name, arguments, ..
        } = event
        {
            if name == "Slice" {
                recorded.push(arguments);
            }
        }
        Ok(())
    };
    let x = Array::from_slice(&[0.0f32, 1., 2., 3., 4., 5., 6., 7., 8., 9.], &[10]).unwrap();
    export_to_callback(record, f, std::slice::from_ref(&x), &Kwargs::new(), false).unwrap();
    let expected: Vec<Vec<MlxState>> = cases
        .iter()
        .map(|(_, m)| m.iter().map(|&v| MlxState::Shape(vec![v])).collect())
        .collect();
    assert_eq!(recorded, expected);
    // Read back, each slice takes the elements it took: the empty one's start, left of
    // the front, does not wrap.
    let path = temp("slice_stops");
    export_function(&path, f, std::slice::from_ref(&x), &Kwargs::new()).unwrap();
    let y = add(&x, 1.0).unwrap();
    let got = import_function(&path)
        .unwrap()
        .call(std::slice::from_ref(&y), &Kwargs::new())
        .unwrap();
    for (g, w) in got
        .iter()
        .zip(f(std::slice::from_ref(&y), &Kwargs::new()).unwrap())
    {
        close(g, &w, "slice");
    }
    assert_eq!(got[4].shape(), &[0usize]);
    std::fs::remove_file(&path).ok();
}

#[test]
fn exporter_signatures_metadata_and_errors() {
    let path = temp("signatures");
    let f = |a: &[Array], k: &Kwargs| {
        let mut y = a[0].clone();
        for v in a[1..].iter().chain(k.values()) {
            y = multiply(&y, v)?;
        }
        Ok(vec![y])
    };
    let mut e = exporter(&path, f, false, "config").unwrap();
    let one = Array::scalar(2.0f32);
    let mut kw = Kwargs::new();
    kw.insert("b".into(), Array::scalar(3.0f32));
    kw.insert("a".into(), Array::scalar(5.0f32));
    e.call(std::slice::from_ref(&one), &Kwargs::new()).unwrap();
    e.call(std::slice::from_ref(&one), &kw).unwrap();
    let twice = e
        .call(&[Array::scalar(7.0f32)], &Kwargs::new())
        .unwrap_err();
    assert_eq!(twice.kind(), ErrorKind::Runtime);
    assert!(twice.message().contains("twice with the same signature"));
    e.close();
    assert!(e.call(&[Array::scalar(1i32)], &Kwargs::new()).is_err());

    let g = import_function(&path).unwrap();
    assert_eq!(g.metadata(), "config");
    assert_eq!(
        g.call(&[Array::scalar(4.0f32)], &Kwargs::new()).unwrap()[0]
            .item::<f32>()
            .unwrap(),
        4.0
    );
    assert_eq!(
        g.call(&[Array::scalar(4.0f32)], &kw).unwrap()[0]
            .item::<f32>()
            .unwrap(),
        60.0
    );
    let err = g.call(&[Array::scalar(4i32)], &Kwargs::new()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Value);
    assert!(
        err.message()
            .contains("1. Function with 1 positional inputs and 0 keyword inputs"),
        "{}",
        err.message()
    );
    std::fs::remove_file(&path).ok();
}

#[test]
fn unexportable_and_malformed_give_errors() {
    let path = temp("bad");
    let err = export_function(
        &path,
        |a: &[Array], _: &Kwargs| Ok(vec![bitwise_invert(&a[0])?]),
        &[Array::scalar(1i32)],
        &Kwargs::new(),
    )
    .unwrap_err();
    assert!(
        err.message().contains("bitwise_invert"),
        "{}",
        err.message()
    );
    let err = export_function(
        &path,
        // MLX writes no primitive for an LU-based solve either.
        |a: &[Array], _: &Kwargs| Ok(vec![linalg::solve(&a[0], &a[0])?]),
        &[eye(2, None, 0, DType::Float32).unwrap()],
        &Kwargs::new(),
    )
    .unwrap_err();
    assert!(
        err.message().contains("cannot be exported"),
        "{}",
        err.message()
    );

    let good = std::fs::read(fixtures().join("mlp.mlxfn")).unwrap();
    for cut in [0, 5, 20, 100, good.len() / 2, good.len() - 1] {
        let err = import_function_bytes(good[..cut].to_vec())
            .err()
            .expect("truncated file");
        assert_eq!(err.kind(), ErrorKind::Io, "cut at {cut}: {}", err.message());
    }
    let mut renamed = good.clone();
    let at = renamed.windows(6).position(|w| w == b"Matmul").unwrap();
    renamed[at..at + 6].copy_from_slice(b"Nomatm");
    let err = import_function_bytes(renamed).err().unwrap();
    assert!(
        err.message()
            .contains("Unable to deserialize primitive Nomatm"),
        "{}",
        err.message()
    );
    assert_eq!(
        import_function(temp("missing")).err().unwrap().kind(),
        ErrorKind::NotFound
    );
}

#[test]
fn callback_events_follow_mlx_simplification_and_naming() {
    use lazulite::export::{exporter_to_callback, ExportEvent, MlxState};
    use std::sync::{Arc, Mutex};
    let events = Arc::new(Mutex::new(vec![]));
    let sink = events.clone();
    let w = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    // exp(x) twice is one Exp; the two scalars 0 are one constant and one Broadcast. The
    // first trace's events are those real MLX 0.32.4 sends for the same function.
    let f = move |a: &[Array], _: &Kwargs| {
        let e = add(&exp(&a[0])?, &exp(&a[0])?)?;
        Ok(vec![
            maximum(&multiply(&e, &w)?, 0.0)?,
            minimum(&a[0], 0.0)?,
        ])
    };
    let record = move |event| {
        sink.lock().unwrap().push(event);
        Ok(())
    };
    let mut e = exporter_to_callback(record, f, false);
    e.call(
        &[Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap()],
        &Kwargs::new(),
    )
    .unwrap();
    e.call(&[Array::scalar(1.0f32)], &Kwargs::new()).unwrap();
    let events = events.lock().unwrap();
    let constants: Vec<Vec<String>> = events
        .iter()
        .filter_map(|e| match e {
            ExportEvent::Constants(c) => Some(c.iter().map(|(name, _)| name.clone()).collect()),
            _ => None,
        })
        .collect();
    // The captured array is listed by the first trace only; each trace makes its own 0.
    assert_eq!(constants, vec![vec!["D", "E"], vec!["D"]]);
    let first: Vec<(String, Vec<String>, Vec<MlxState>)> = events[..events.len() / 2]
        .iter()
        .filter_map(|e| match e {
            ExportEvent::Primitive {
                name,
                inputs,
                arguments,
                ..
            } => Some((
                name.clone(),
                inputs.iter().map(|a| a.name.clone()).collect(),
                arguments.clone(),
            )),
            _ => None,
        })
        .collect();
    let expected = [
        ("Exp", vec!["A"], vec![]),
        ("Add", vec!["F", "F"], vec![]),
        ("Multiply", vec!["G", "D"], vec![]),
        ("Broadcast", vec!["E"], vec![MlxState::Shape(vec![2])]),
        ("Maximum", vec!["H", "I"], vec![]),
        ("Minimum", vec!["A", "I"], vec![]),
    ];
    assert_eq!(first.len(), expected.len(), "{first:?}");
    for ((name, inputs, state), (n, i, s)) in first.iter().zip(&expected) {
        assert_eq!(
            (name.as_str(), inputs, state),
            (*n, &i.iter().map(|x| x.to_string()).collect::<Vec<_>>(), s)
        );
    }
}
