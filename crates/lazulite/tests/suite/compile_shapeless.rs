//! Shapeless `compile` and export: one trace replayed at new input sizes, each node's
//! shape inferred again by its primitive's rule; results equal the eager function's, and
//! what MLX refuses in shapeless mode is refused with MLX's message.

use crate::common::{array, uniform};
use lazulite::export::{exporter, import_function, Kwargs};
use lazulite::{
    compile, compile_shapeless, grad, matmul, maximum, mean, reshape, slice, softmax, sum, var,
    Array, ErrorKind, Result,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn random(seed: u64, shape: &[usize]) -> Array {
    let n = shape.iter().product();
    array(&uniform(seed, n, -2.0, 2.0), shape)
}

fn assert_close(actual: &Array, expected: &Array, what: &str) {
    assert_eq!(actual.shape(), expected.shape(), "{what}: shape");
    assert_eq!(actual.dtype(), expected.dtype(), "{what}: dtype");
    let a = actual.to_vec::<f64>().unwrap();
    let e = expected.to_vec::<f64>().unwrap();
    for (i, (x, y)) in a.iter().zip(&e).enumerate() {
        assert!(
            (x - y).abs() <= 1e-10 * (1.0 + y.abs()),
            "{what}: element {i}: {x} vs {y}"
        );
    }
}

/// A function of reductions, means, broadcasting between inputs, an inferred reshape
/// and a batched matrix product.
fn model(x: &[Array]) -> Result<Vec<Array>> {
    let (a, b, bias) = (&x[0], &x[1], &x[2]);
    let h = maximum(&(&matmul(a, b)? + bias), 0.0)?;
    let centred = &h - &mean(&h, -1, true)?;
    let spread = var(&h, vec![0, 1], false, 1)?;
    let rows = reshape(&softmax(&centred, -1, false)?, &[-1])?;
    Ok(vec![rows, sum(&h, -1, false)?, spread])
}

#[test]
fn one_trace_serves_many_shapes() {
    let traces = Arc::new(AtomicUsize::new(0));
    let counter = traces.clone();
    let f = compile_shapeless(move |x: &[Array]| {
        counter.fetch_add(1, Ordering::Relaxed);
        model(x)
    });
    assert!(f.is_shapeless() && !compile(model).is_shapeless());
    for (seed, (batch, m, k, n)) in [(2, 3, 4, 5), (1, 7, 2, 3), (4, 1, 6, 8)]
        .into_iter()
        .enumerate()
    {
        let seed = seed as u64 * 3;
        let inputs = [
            random(seed, &[batch, m, k]),
            random(seed + 1, &[k, n]),
            random(seed + 2, &[n]),
        ];
        let got = f.call(&inputs).unwrap();
        let expected = model(&inputs).unwrap();
        for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
            assert_close(g, e, &format!("shape {batch}x{m}x{k}, output {i}"));
        }
    }
    assert_eq!(traces.load(Ordering::Relaxed), 1);
    assert_eq!(f.traces(), 1);
    // Another number of dimensions traces again, as in MLX.
    f.call(&[random(9, &[3, 4]), random(10, &[4, 2]), random(11, &[2])])
        .unwrap();
    assert_eq!(traces.load(Ordering::Relaxed), 2);
}

#[test]
fn sizes_fixed_while_tracing_give_mlx_errors() {
    let fixed = compile_shapeless(|x: &[Array]| Ok(vec![reshape(&x[0], &[6])?]));
    assert_eq!(fixed.call(&[random(1, &[3, 2])]).unwrap()[0].shape(), &[6]);
    let err = fixed.call(&[random(1, &[4, 5])]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Value);
    assert_eq!(
        err.message(),
        "[reshape] Cannot reshape array of size 20 into shape (6)."
    );

    let sliced = compile_shapeless(|x: &[Array]| Ok(vec![slice(&x[0], &[1], &[3], &[1])?]));
    let err = sliced.call(&[random(2, &[4])]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Value);
    assert_eq!(
        err.message(),
        "[Primitive::output_shapes] Slice cannot infer output shapes."
    );

    let captured = random(3, &[3]);
    let broadcast = compile_shapeless(move |x: &[Array]| Ok(vec![&x[0] + &captured]));
    assert_eq!(
        broadcast.call(&[random(4, &[5, 3])]).unwrap()[0].shape(),
        &[5, 3]
    );
    let err = broadcast.call(&[random(4, &[4, 5])]).unwrap_err();
    assert_eq!(
        err.message(),
        "[broadcast_shapes] Shapes (4,5) and (3) cannot be broadcast."
    );
}

#[test]
fn gradients_through_a_shapeless_replay() {
    let f = Arc::new(compile_shapeless(|x: &[Array]| {
        Ok(vec![mean(
            &matmul(&x[0], &x[1])?.square()?,
            None::<i32>,
            false,
        )?])
    }));
    let w = random(5, &[3, 2]);
    for rows in [4, 9] {
        let x = random(6 + rows as u64, &[rows, 3]);
        let compiled = {
            let (f, x) = (f.clone(), x.clone());
            grad(move |w: &Array| Ok(f.call(&[x.clone(), w.clone()])?.remove(0)))(&w).unwrap()
        };
        let eager =
            grad(|w: &Array| mean(&matmul(&x, w)?.square()?, None::<i32>, false))(&w).unwrap();
        assert_close(&compiled, &eager, &format!("{rows} rows"));
    }
}

#[test]
fn shapeless_export_imports_at_new_shapes() {
    let path =
        std::env::temp_dir().join(format!("lazulite_shapeless_{}.mlxfn", std::process::id()));
    let f = |x: &[Array], _: &Kwargs| model(x);
    let mut e = exporter(&path, f, true, "").unwrap();
    e.call(
        &[random(1, &[2, 3, 4]), random(2, &[4, 5]), random(3, &[5])],
        &Kwargs::new(),
    )
    .unwrap();
    // Same dimension counts and dtypes: the same signature for a shapeless exporter.
    assert!(e
        .call(
            &[random(1, &[1, 2, 2]), random(2, &[2, 3]), random(3, &[3])],
            &Kwargs::new()
        )
        .is_err());
    let imported = import_function(&path).unwrap();
    let inputs = [random(4, &[3, 6, 2]), random(5, &[2, 7]), random(6, &[7])];
    let got = imported.call(&inputs, &Kwargs::new()).unwrap();
    for (i, (g, e)) in got.iter().zip(&model(&inputs).unwrap()).enumerate() {
        assert_close(g, e, &format!("output {i}"));
    }
    // Another number of dimensions is not a signature of the file.
    let err = imported
        .call(
            &[random(4, &[6, 2]), random(5, &[2, 7]), random(6, &[7])],
            &Kwargs::new(),
        )
        .unwrap_err();
    assert!(err.message().contains("No imported function found"));
    std::fs::remove_file(&path).unwrap();
}
