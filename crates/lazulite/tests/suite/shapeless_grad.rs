//! Gradients in shapeless `compile` and export: a function that takes derivatives
//! (`value_and_grad`, `vjp`, `jvp`, `vmap` of `grad`) is traced once at one batch size
//! and replayed at others; every result equals the eager transform's at that size.

use crate::common::{array, uniform};
use lazulite::export::{exporter, import_function, Kwargs};
use lazulite::{
    astype, compile_shapeless, expand_dims, flatten, grad, greater, jvp, logsumexp, matmul, max,
    maximum, mean, reshape, softmax, squeeze, sum, take_along_axis, transpose,
    value_and_grad_argnums, vjp, vmap, where_, Array, DType, ErrorKind, Result,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

const FEATURES: usize = 5;
const HIDDEN: usize = 6;
const CLASSES: usize = 3;

fn random(seed: u64, shape: &[usize]) -> Array {
    let n = shape.iter().product();
    array(&uniform(seed, n, -1.0, 1.0), shape)
        .astype(DType::Float32)
        .unwrap()
}

fn labels(seed: u64, batch: usize) -> Array {
    let u = uniform(seed, batch, 0.0, CLASSES as f64);
    let v: Vec<i32> = u
        .iter()
        .map(|&x| (x as i32).min(CLASSES as i32 - 1))
        .collect();
    Array::from_slice(&v, &[batch]).unwrap()
}

fn params() -> Vec<Array> {
    vec![
        random(1, &[FEATURES, HIDDEN]),
        random(2, &[HIDDEN]),
        random(3, &[HIDDEN, CLASSES]),
        random(4, &[CLASSES]),
    ]
}

fn assert_close(actual: &Array, expected: &Array, what: &str) {
    assert_eq!(actual.dtype(), expected.dtype(), "{what}: dtype");
    crate::common::assert_arrays_close(actual, expected, 1e-5, 1e-5, what);
}

/// Logits of a two-layer perceptron with a ReLU.
fn logits(p: &[Array], x: &Array) -> Result<Array> {
    let h = maximum(&(&matmul(x, &p[0])? + &p[1]), 0.0)?;
    Ok(&matmul(&h, &p[2])? + &p[3])
}

/// Mean cross-entropy of the perceptron's logits against integer labels.
fn loss(p: &[Array], x: &Array, y: &Array) -> Result<Array> {
    let z = logits(p, x)?;
    let picked = take_along_axis(&z, &expand_dims(y, -1)?, Some(-1))?;
    let nll = &logsumexp(&z, -1, false)? - &squeeze(&picked, -1)?;
    mean(&nll, None::<i32>, false)
}

/// `[w1, b1, w2, b2, x, y]` -> the loss and its gradient with respect to the weights.
fn loss_and_grad(inputs: &[Array]) -> Result<Vec<Array>> {
    let (x, y) = (inputs[4].clone(), inputs[5].clone());
    let (value, grads) = value_and_grad_argnums(
        |p| Ok(vec![loss(&p[..4], &x, &y)?]),
        &inputs[..4],
        &[0, 1, 2, 3],
    )?;
    Ok(value.into_iter().chain(grads).collect())
}

fn inputs_at(batch: usize) -> Vec<Array> {
    let mut inputs = params();
    inputs.push(random(10 + batch as u64, &[batch, FEATURES]));
    inputs.push(labels(20 + batch as u64, batch));
    inputs
}

/// Compiles `f` shapeless, calls it at every batch size and compares with `f` run
/// eagerly; one trace serves them all.
fn check_compiled(
    what: &str,
    f: fn(&[Array]) -> Result<Vec<Array>>,
    at: impl Fn(usize) -> Vec<Array>,
) {
    let traces = Arc::new(AtomicUsize::new(0));
    let counter = traces.clone();
    let compiled = compile_shapeless(move |x: &[Array]| {
        counter.fetch_add(1, Ordering::Relaxed);
        f(x)
    });
    for batch in [4, 7, 16] {
        let inputs = at(batch);
        let got = compiled
            .call(&inputs)
            .unwrap_or_else(|e| panic!("{what} at batch {batch}: {e}"));
        let want = f(&inputs).unwrap();
        assert_eq!(got.len(), want.len(), "{what}");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_close(g, w, &format!("{what} at batch {batch}, output {i}"));
        }
    }
    assert_eq!(traces.load(Ordering::Relaxed), 1, "{what}: traces");
    assert_eq!(compiled.traces(), 1, "{what}: signatures");
}

/// Exports `f` shapeless at batch 4, imports the file and calls it at other batch sizes,
/// comparing with `f` run eagerly.
fn check_exported(
    what: &str,
    f: fn(&[Array]) -> Result<Vec<Array>>,
    at: impl Fn(usize) -> Vec<Array>,
) {
    let path = std::env::temp_dir().join(format!(
        "lazulite_shapeless_grad_{}_{what}.mlxfn",
        std::process::id()
    ));
    let mut e = exporter(&path, move |x: &[Array], _: &Kwargs| f(x), true, "").unwrap();
    e.call(&at(4), &Kwargs::new())
        .unwrap_or_else(|e| panic!("{what}: export: {e}"));
    e.close();
    let imported = import_function(&path).unwrap();
    for batch in [4, 7, 16] {
        let inputs = at(batch);
        let got = imported
            .call(&inputs, &Kwargs::new())
            .unwrap_or_else(|e| panic!("{what} imported, at batch {batch}: {e}"));
        let want = f(&inputs).unwrap();
        assert_eq!(got.len(), want.len(), "{what}");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_close(
                g,
                w,
                &format!("{what} imported, at batch {batch}, output {i}"),
            );
        }
    }
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn compiled_value_and_grad_of_a_classifier_at_new_batch_sizes() {
    check_compiled("value_and_grad", loss_and_grad, inputs_at);
}

#[test]
fn exported_value_and_grad_of_a_classifier_at_new_batch_sizes() {
    check_exported("value_and_grad", loss_and_grad, inputs_at);
}

/// The gradient of each example's loss, by `vmap` over the batch of `grad`.
fn per_example_grads(inputs: &[Array]) -> Result<Vec<Array>> {
    let p = inputs[..4].to_vec();
    let one = move |xy: &[Array]| {
        let (x, y) = (expand_dims(&xy[0], 0)?, expand_dims(&xy[1], 0)?);
        let g = grad(|w: &Vec<Array>| loss(w, &x, &y));
        g(&p)
    };
    vmap(one, vec![Some(0), Some(0)], vec![Some(0); 4])(&inputs[4..])
}

#[test]
fn per_example_gradients_at_new_batch_sizes() {
    check_compiled("vmap_grad", per_example_grads, inputs_at);
    check_exported("vmap_grad", per_example_grads, inputs_at);
}

/// The loss's derivative along a direction in weight space, and a vector-Jacobian
/// product of the logits with a cotangent of their (batch-sized) shape.
fn forward_and_reverse(inputs: &[Array]) -> Result<Vec<Array>> {
    let (x, y) = (inputs[4].clone(), inputs[5].clone());
    let directions: Vec<Array> = inputs[..4].iter().map(|p| p.sin()).collect::<Result<_>>()?;
    let (_, tangent) = jvp(|p| Ok(vec![loss(p, &x, &y)?]), &inputs[..4], &directions)?;
    let cotangent = logits(&inputs[..4], &x)?.cos()?;
    let (_, pulled) = vjp(|p| Ok(vec![logits(p, &x)?]), &inputs[..4], &[cotangent])?;
    Ok(tangent.into_iter().chain(pulled).collect())
}

#[test]
fn jvp_and_vjp_at_new_batch_sizes() {
    check_compiled("jvp_vjp", forward_and_reverse, inputs_at);
    check_exported("jvp_vjp", forward_and_reverse, inputs_at);
}

/// A loss through the shape ops, reductions and selections a model uses besides those of
/// the classifier: transposes, squeezes and new axes, max and softmax reductions, `where`,
/// casts, and broadcasting in both directions.
fn assorted(x: &Array, w: &Array) -> Result<Array> {
    let a = matmul(
        &transpose(x, &[1, 0])?,
        &matmul(x, &transpose(w, &[1, 0])?)?,
    )?;
    let flat = expand_dims(&(x * &sum(w, None::<i32>, false)?), -1)?;
    let peak = max(&(x * &x.square()?), -1, true)?;
    let spread = sum(&expand_dims(&squeeze(&peak, -1)?, 0)?, None::<i32>, false)?;
    let shifted = &softmax(&(x - &peak), -1, false)? * &spread;
    let gated = where_(&greater(x, 0.0)?, &shifted, &astype(x, DType::Float16)?)?;
    let batched = matmul(&expand_dims(x, 1)?, &expand_dims(w, 0)?)?;
    Ok(
        &(&sum(&a, None::<i32>, false)? + &mean(&flat.square()?, None::<i32>, false)?)
            + &(&sum(&gated, None::<i32>, false)? + &mean(&batched.tanh()?, None::<i32>, false)?),
    )
}

fn assorted_grads(inputs: &[Array]) -> Result<Vec<Array>> {
    let (value, grads) =
        value_and_grad_argnums(|p| Ok(vec![assorted(&p[0], &p[1])?]), inputs, &[0, 1])?;
    Ok(value.into_iter().chain(grads).collect())
}

fn assorted_at(batch: usize) -> Vec<Array> {
    vec![random(30 + batch as u64, &[batch, 4]), random(31, &[4, 4])]
}

#[test]
fn gradients_of_shape_ops_and_reductions_at_new_sizes() {
    check_compiled("assorted", assorted_grads, assorted_at);
    check_exported("assorted", assorted_grads, assorted_at);
}

/// A loss through a reshape with `-1` and a flatten of the batch axis.
fn reshaped_loss(inputs: &[Array]) -> Result<Vec<Array>> {
    let loss = |p: &[Array]| {
        let (x, w) = (&p[0], &p[1]);
        let column = reshape(&(x * &sum(w, None::<i32>, false)?), &[-1, 1])?;
        let flat = flatten(&matmul(x, w)?.tanh()?, 0, 1)?;
        Ok(vec![
            &sum(&column.square()?, None::<i32>, false)? + &sum(&flat, None::<i32>, false)?,
        ])
    };
    let (value, grads) = value_and_grad_argnums(loss, inputs, &[0, 1])?;
    Ok(value.into_iter().chain(grads).collect())
}

#[test]
fn gradients_through_inferred_reshapes_replay_when_compiled() {
    check_compiled("reshaped", reshaped_loss, assorted_at);
    // MLX's file format has no reshape to another array's shape: the derivative of a
    // reshape with -1 is written as MLX writes it, a reshape to the traced sizes, so the
    // file runs at those sizes only (as MLX's own export of it does).
    let path = std::env::temp_dir().join(format!(
        "lazulite_shapeless_grad_{}_reshaped.mlxfn",
        std::process::id()
    ));
    let mut e = exporter(&path, |x: &[Array], _: &Kwargs| reshaped_loss(x), true, "").unwrap();
    e.call(&assorted_at(4), &Kwargs::new()).unwrap();
    e.close();
    let imported = import_function(&path).unwrap();
    let at4 = assorted_at(4);
    let got = imported.call(&at4, &Kwargs::new()).unwrap();
    for (g, w) in got.iter().zip(&reshaped_loss(&at4).unwrap()) {
        assert_close(g, w, "reshaped imported at batch 4");
    }
    let err = imported.call(&assorted_at(7), &Kwargs::new()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Value);
    assert!(
        err.message()
            .starts_with("[reshape] Cannot reshape array of size 28"),
        "{}",
        err.message()
    );
    std::fs::remove_file(&path).unwrap();
}
