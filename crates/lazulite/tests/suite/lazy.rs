//! Lazy evaluation: the examples of MLX's lazy evaluation guide, translated, and
//! the engine's invariants (iterative graph walks, detaching, errors).

use lazulite::{eval, Array, DType, ErrorKind};

fn vector(values: &[f32]) -> Array {
    Array::from_slice(values, &[values.len()]).unwrap()
}

/// Documented example: "Only Compute What You Use" — `y, _ = fun(x)` never computes `expensive_fun`.
#[test]
fn only_compute_what_you_use() {
    let fun = |x: &Array| {
        let a = x.exp().unwrap();
        let b = (&a * &a).sin().unwrap(); // stands in for expensive_fun
        (a, b)
    };
    let x = vector(&[0.0, 1.0]);
    let (y, unused) = fun(&x);
    eval(&[&y]).unwrap();
    assert!(y.is_evaluated());
    assert!(!unused.is_evaluated());
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![1.0, 1f32.exp()]);
}

/// Documented example: the "When to Evaluate" loop, evaluating every step, against plain arithmetic.
#[test]
fn when_to_evaluate_loop() {
    let mut a = vector(&[1.0, 2.0]);
    let mut b = vector(&[0.5, -1.0]);
    let (mut ea, mut eb) = ([1.0f32, 2.0], [0.5f32, -1.0]);
    for _ in 0..100 {
        a = &a + &b;
        eval(&[&a]).unwrap();
        b = &b * 2.0;
        eval(&[&b]).unwrap();
        for i in 0..2 {
            ea[i] += eb[i];
            eb[i] *= 2.0;
        }
    }
    assert_eq!(a.to_vec::<f32>().unwrap(), ea.to_vec());
    assert_eq!(b.to_vec::<f32>().unwrap(), eb.to_vec());
}

/// Documented example: evaluating several times is a no-op; `item` and printing evaluate implicitly.
#[test]
fn implicit_and_repeated_evaluation() {
    let loss = vector(&[3.0]) * 2.0;
    assert!(!loss.is_evaluated());
    assert_eq!(loss.item::<f32>().unwrap(), 6.0);
    assert!(loss.is_evaluated());
    eval(&[&loss]).unwrap();
    eval(&[&loss, &loss]).unwrap();
    assert_eq!(loss.item::<f32>().unwrap(), 6.0);
    let printed = (vector(&[1.0, 2.5]) + 1.0).to_string();
    assert_eq!(printed, "array([2, 3.5], dtype=float32)");
}

/// Documented example: using a scalar array in control flow evaluates it.
#[test]
fn control_flow_on_array_values() {
    let fun = |x: &Array| {
        let h = x.exp().unwrap();
        let y = lazulite::slice(&(x - 1.0), &[0], &[1], &[1]).unwrap();
        if y.item::<f32>().unwrap() > 0.0 {
            h.sin().unwrap()
        } else {
            h.cos().unwrap()
        }
    };
    // The vectorised kernels are within 2 ulp of std, not bit-identical to it.
    let close = |got: Vec<f32>, expected: Vec<f32>| {
        assert_eq!(got.len(), expected.len());
        for (g, e) in got.into_iter().zip(expected) {
            assert!((g - e).abs() <= 2.0 * f32::EPSILON * e.abs(), "{g} vs {e}");
        }
    };
    close(
        fun(&vector(&[2.0, 3.0])).to_vec::<f32>().unwrap(),
        vec![2f32.exp().sin(), 3f32.exp().sin()],
    );
    close(
        fun(&vector(&[0.0])).to_vec::<f32>().unwrap(),
        vec![1f32.cos()],
    );
}

/// After evaluation a node drops its inputs: the graph behind it is freed.
#[test]
fn evaluation_detaches_the_graph() {
    let x = vector(&[1.0, 2.0]);
    let y = x.exp().unwrap();
    let z = &y + 1.0;
    assert_eq!(Array::id(&x), x.id());
    z.eval().unwrap();
    drop(y);
    // z no longer references y or x: x is held only by us.
    let w = &z * 2.0;
    assert_eq!(
        w.to_vec::<f32>().unwrap(),
        vec![2.0 * (1f32.exp() + 1.0), 2.0 * (2f32.exp() + 1.0)]
    );
}

/// A chain of a million ops builds, evaluates and is dropped without recursion, and a
/// million-op chain that is never evaluated is dropped without recursion too. (Two
/// elements: one-element ops on computed values are computed when recorded, no chain.)
#[test]
fn million_op_chain() {
    let n = 1_000_000;
    let mut x = vector(&[0.0, 1.0]);
    for _ in 0..n {
        x = &x + 1.0;
    }
    assert!(!x.is_evaluated());
    assert_eq!(x.to_vec::<f32>().unwrap(), [n as f32, n as f32 + 1.0]);
    let mut y = Array::from_slice(&[0i64, 1], &[2]).unwrap();
    for _ in 0..n {
        y = &y + 1;
    }
    drop(y);
}

/// A one-element elementwise op on computed values is computed when recorded (a scalar
/// loop builds no chain); one a placeholder feeds stays a node that follows re-assignment,
/// and a grad still sees the ops on its input.
#[test]
fn one_element_ops_on_computed_values_are_computed_when_recorded() {
    let x = Array::scalar(2.0f32);
    let y = (&x * 3.0).exp().unwrap();
    assert!(y.is_evaluated());
    assert_eq!(y.item::<f32>().unwrap(), 6f32.exp());
    assert!(!(&vector(&[1.0, 2.0]) * 3.0).is_evaluated());
    let p = lazulite::placeholder(&[], DType::Float32).unwrap();
    p.assign(1.0f32).unwrap();
    let q = &p + 1.0;
    assert_eq!(q.item::<f32>().unwrap(), 2.0);
    p.assign(5.0f32).unwrap();
    assert_eq!(q.item::<f32>().unwrap(), 6.0);
    let g = lazulite::grad(|x: &Array| Ok(&(x * x) + 1.0))(&x).unwrap();
    assert_eq!(g.item::<f32>().unwrap(), 4.0);
}

/// Every two-input op on single values (`Value::binary`, what Python's scalar arithmetic
/// runs) gives the value and dtype its kernel gives on 0-d arrays, for every dtype and
/// value pairs with zeros, negatives, fractions, NaN and infinity; it declines exactly
/// where the arrays would need a cast or raise.
#[test]
fn binary_ops_on_values_match_their_kernels() {
    use lazulite::{BinaryOp::*, Operand, Scalar, Value};
    type Function = fn(Operand, Operand) -> lazulite::Result<Array>;
    let table: [(lazulite::BinaryOp, Function); 24] = [
        (Add, |a, b| lazulite::add(a, b)),
        (Subtract, |a, b| lazulite::subtract(a, b)),
        (Multiply, |a, b| lazulite::multiply(a, b)),
        (Divide, |a, b| lazulite::divide(a, b)),
        (FloorDivide, |a, b| lazulite::floor_divide(a, b)),
        (Remainder, |a, b| lazulite::remainder(a, b)),
        (Power, |a, b| lazulite::power(a, b)),
        (Maximum, |a, b| lazulite::maximum(a, b)),
        (Minimum, |a, b| lazulite::minimum(a, b)),
        (Arctan2, |a, b| lazulite::arctan2(a, b)),
        (LogAddExp, |a, b| lazulite::logaddexp(a, b)),
        (Equal, |a, b| lazulite::equal(a, b)),
        (NotEqual, |a, b| lazulite::not_equal(a, b)),
        (Less, |a, b| lazulite::less(a, b)),
        (LessEqual, |a, b| lazulite::less_equal(a, b)),
        (Greater, |a, b| lazulite::greater(a, b)),
        (GreaterEqual, |a, b| lazulite::greater_equal(a, b)),
        (LogicalAnd, |a, b| lazulite::logical_and(a, b)),
        (LogicalOr, |a, b| lazulite::logical_or(a, b)),
        (BitwiseAnd, |a, b| lazulite::bitwise_and(a, b)),
        (BitwiseOr, |a, b| lazulite::bitwise_or(a, b)),
        (BitwiseXor, |a, b| lazulite::bitwise_xor(a, b)),
        (LeftShift, |a, b| lazulite::left_shift(a, b)),
        (RightShift, |a, b| lazulite::right_shift(a, b)),
    ];
    // The ops that compute in another dtype than their inputs' (from the dtype rules):
    // float math on integers and bools, logic on non-bools, shifts of bools (as uint8).
    let casts = |op: lazulite::BinaryOp, dtype: DType| match op {
        Divide | Arctan2 | LogAddExp => !dtype.is_inexact(),
        LogicalAnd | LogicalOr => dtype != DType::Bool,
        LeftShift | RightShift => dtype == DType::Bool,
        _ => false,
    };
    let samples = [
        0.0,
        1.0,
        -1.0,
        2.0,
        3.0,
        -7.0,
        0.5,
        200.0,
        f64::NAN,
        f64::INFINITY,
    ];
    let mut computed = 0;
    for dtype in DType::ALL {
        let values: Vec<Value> = samples
            .iter()
            .map(|&s| Array::from_scalar(Scalar::Float(s), dtype).value().unwrap())
            .collect();
        for (op, function) in table {
            for &a in &values {
                for &b in &values {
                    // The kernel's result on 0-d arrays; `None` where the op raises.
                    let arrays = function(a.to_array().into(), b.to_array().into());
                    let expected = arrays.ok().and_then(|r| r.value());
                    let expected = expected.filter(|_| !casts(op, dtype));
                    let got = Value::binary(op, a, b);
                    assert_eq!(got, expected, "{op:?} {dtype} {a:?} {b:?}");
                    computed += usize::from(got.is_some());
                }
            }
        }
    }
    assert!(computed > 20_000, "{computed}");
    let f32s = (Value::new(1.5f32), Value::new(2.0f32));
    for (op, _) in &table[..17] {
        assert!(Value::binary(*op, f32s.0, f32s.1).is_some(), "{op:?}");
    }
}

#[test]
fn errors_are_typed_and_leave_arrays_intact() {
    let a = Array::zeros(&[2, 3], DType::Float32).unwrap();
    let b = Array::zeros(&[4], DType::Float32).unwrap();
    let err = lazulite::add(&a, &b).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Value);
    assert_eq!(
        err.message(),
        "[broadcast_shapes] Shapes (2,3) and (4) cannot be broadcast.",
        "MLX's message"
    );
    assert_eq!(a.shape(), &[2, 3]);
    assert_eq!(a.to_vec::<f32>().unwrap(), vec![0.0; 6]);
    let u8s = Array::from_slice(&[1u8, 2], &[2]).unwrap();
    assert_eq!(
        lazulite::add(&u8s, 300).unwrap_err().kind(),
        ErrorKind::Value
    );
    assert_eq!(
        lazulite::negative(&Array::scalar(true)).unwrap_err().kind(),
        ErrorKind::Value
    );
    assert_eq!(
        lazulite::bitwise_and(&a, &a).unwrap_err().kind(),
        ErrorKind::Runtime
    );
}

#[test]
fn arrays_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Array>();
    let a = vector(&[1.0, 2.0]);
    let b = &a * 3.0;
    let handle = std::thread::spawn(move || b.to_vec::<f32>().unwrap());
    assert_eq!(handle.join().unwrap(), vec![3.0, 6.0]);
}

#[test]
fn a_failed_evaluation_fails_the_same_way_again() {
    // The first run hands the gather its inputs; a second evaluation (of the array or
    // of something built on it) reports the first error, not the missing inputs.
    let a = vector(&[1.0, 2.0, 3.0]);
    let indices = Array::from_slice(&[5i32], &[1]).unwrap();
    let picked = lazulite::take(&a, &indices, Some(0)).unwrap();
    drop(a);
    drop(indices);
    let later = &picked + 1.0;
    for result in [eval(&[&picked]), eval(&[&picked]), eval(&[&later])] {
        let e = result.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Index, "{}", e.message());
    }
}

/// `async_eval` in a decode-style loop: each step is queued while the previous one may
/// still be computing, and earlier steps are read after later ones were queued.
#[test]
fn async_evaluation_gives_what_eval_gives() {
    let mut x = vector(&[0.5, -1.0, 2.0]);
    let mut expected = [0.5f32, -1.0, 2.0];
    let mut history = Vec::new();
    for step in 0..200 {
        x = &(&x * 0.5) + step as f32;
        lazulite::async_eval(&[&x]).unwrap();
        for e in &mut expected {
            *e = *e * 0.5 + step as f32;
        }
        history.push((x.clone(), expected));
        if step % 7 == 3 {
            let (earlier, values) = &history[step / 2];
            assert_eq!(earlier.to_vec::<f32>().unwrap(), values);
        }
    }
    for (array, values) in &history {
        assert_eq!(array.to_vec::<f32>().unwrap(), values);
    }
}

/// `synchronize` returns once every queued graph is computed: two jobs of a few hundred
/// kernels over a large array, neither read before it.
#[test]
fn synchronize_waits_for_every_queued_job() {
    let start = lazulite::random::normal(&[1 << 20], DType::Float32, None, None, None).unwrap();
    eval(&[&start]).unwrap();
    let mut jobs = Vec::new();
    for _ in 0..2 {
        let mut x = start.clone();
        for _ in 0..150 {
            x = x.sin().unwrap();
        }
        lazulite::async_eval(&[&x]).unwrap();
        jobs.push(x);
    }
    lazulite::synchronize();
    for x in &jobs {
        assert!(x.is_evaluated());
    }
}

#[test]
fn async_evaluation_errors_surface_when_read() {
    let a = vector(&[1.0, 2.0, 3.0]);
    let indices = Array::from_slice(&[5i32], &[1]).unwrap();
    let picked = lazulite::take(&a, &indices, Some(0)).unwrap();
    let later = &picked + 1.0;
    lazulite::async_eval(&[&later]).unwrap();
    assert_eq!(eval(&[&later]).unwrap_err().kind(), ErrorKind::Index);
    assert_eq!(picked.to_vec::<f32>().unwrap_err().kind(), ErrorKind::Index);
    let fine = &a * 2.0;
    lazulite::async_eval(&[&fine]).unwrap();
    assert_eq!(fine.to_vec::<f32>().unwrap(), vec![2.0, 4.0, 6.0]);
}

/// A custom function's forward may call back into a host language that only the caller's
/// thread can enter: `async_eval` computes such graphs on the caller's thread.
#[test]
fn async_evaluation_runs_custom_functions_on_the_caller() {
    use std::sync::{Arc, Mutex};
    let threads = Arc::new(Mutex::new(Vec::new()));
    let seen = threads.clone();
    let f = lazulite::custom_function(move |x: &[Array]| {
        seen.lock().unwrap().push(std::thread::current().id());
        Ok(vec![x[0].square()?])
    });
    let compiled = lazulite::compile(move |x: &[Array]| f.call(x));
    let x = vector(&[1.0, 2.0]);
    compiled.call(std::slice::from_ref(&x)).unwrap();
    for _ in 0..3 {
        let y = compiled.call(std::slice::from_ref(&x)).unwrap();
        lazulite::async_eval(&[&y[0]]).unwrap();
        assert!(y[0].is_evaluated(), "computed before async_eval returned");
        assert_eq!(y[0].to_vec::<f32>().unwrap(), vec![1.0, 4.0]);
    }
    let me = std::thread::current().id();
    let threads = threads.lock().unwrap();
    assert!(threads.len() > 1, "the forward ran {} times", threads.len());
    assert!(threads.iter().all(|t| *t == me));
}

/// A kernel profile counts every kernel evaluation runs between `start_profile` and
/// `stop_profile`, on the calling thread and the `async_eval` thread, under the
/// primitive's name and its output shapes, and nothing after it stops.
#[test]
fn a_profile_counts_each_kernel_by_primitive_and_shape() {
    use lazulite::{start_profile, stop_profile, DType};
    // Shapes no other test evaluates, as the profile sees every thread's kernels.
    let a = Array::from_slice(&[0.5f32; 7 * 13], &[7, 13]).unwrap();
    let b = Array::from_slice(&[0.25f32; 13 * 5], &[13, 5]).unwrap();
    start_profile();
    let product = a.matmul(&b).unwrap();
    let sums: Vec<Array> = (0..3).map(|i| &product + f64::from(i)).collect();
    eval(&sums.iter().collect::<Vec<_>>()).unwrap();
    let queued = &product * 2.0;
    lazulite::async_eval(&[&queued]).unwrap();
    eval(&[&queued]).unwrap();
    let rows = stop_profile();
    let after = &product - 1.0;
    eval(&[&after]).unwrap();

    let calls = |name: &str| {
        rows.iter()
            .filter(|r| r.primitive == name && r.outputs == [(vec![7, 5], DType::Float32)])
            .map(|r| r.calls)
            .sum::<u64>()
    };
    assert_eq!(
        (
            calls("matmul"),
            calls("add"),
            calls("multiply"),
            calls("subtract")
        ),
        (1, 3, 1, 0)
    );
    assert!(rows.windows(2).all(|w| w[0].time >= w[1].time));
    assert!(stop_profile().is_empty());
}
