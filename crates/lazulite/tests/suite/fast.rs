//! The fused RMS normalisation and rotary encoding (float32, float16 and bfloat16 inputs)
//! against their compositions of primitives, which float64 inputs take.

use lazulite::fast::{rms_norm, rope, RopeFrequencies};
use lazulite::{allclose, Array, DType};

fn normal(shape: &[usize]) -> Array {
    lazulite::random::normal(shape, DType::Float32, None, None, None).unwrap()
}

fn assert_close(got: &Array, want: &Array, tol: f64, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}");
    let got = got.astype(DType::Float64).unwrap();
    let close = allclose(&got, want, tol, tol, false).unwrap();
    assert!(close.item::<bool>().unwrap(), "{what}");
}

/// The value in `dtype` and, as the reference, its exact float64 copy.
fn pair(a: &Array, dtype: DType) -> (Array, Array) {
    let a = a.astype(dtype).unwrap();
    let exact = a.astype(DType::Float64).unwrap();
    (a, exact)
}

#[test]
fn fused_rms_norm_matches_its_composition() {
    for dtype in [DType::Float32, DType::Float16, DType::BFloat16] {
        let tol = if dtype == DType::Float32 { 1e-5 } else { 1e-2 };
        // Contiguous, transposed (the normalised axis strided) and one long row.
        let square = normal(&[6, 8]);
        for x in [
            normal(&[2, 3, 64]),
            square.transpose(&[1, 0]).unwrap(),
            normal(&[1, 3000]),
        ] {
            let d = x.shape()[x.ndim() - 1];
            let (x, x64) = pair(&x, dtype);
            let (w, w64) = pair(&normal(&[d]), dtype);
            let got = rms_norm(&x, Some(&w), 1e-5).unwrap();
            assert_eq!(got.dtype(), dtype);
            let want = rms_norm(&x64, Some(&w64), 1e-5).unwrap();
            assert_close(&got, &want, tol, &format!("{dtype} {:?}", x.shape()));
            let want = rms_norm(&x64, None, 1e-5).unwrap();
            assert_close(&rms_norm(&x, None, 1e-5).unwrap(), &want, tol, "no weight");
        }
    }
}

#[test]
fn fused_rope_matches_its_composition() {
    let offsets = [
        Array::scalar(5i32),
        Array::from_slice(&[3i32], &[1]).unwrap(),
        Array::from_slice(&[0i32, 7], &[2]).unwrap(),
    ];
    for dtype in [DType::Float32, DType::Float16, DType::BFloat16] {
        let tol = if dtype == DType::Float32 { 1e-4 } else { 3e-2 };
        let x = normal(&[2, 3, 5, 16]);
        // Also a view whose time axis is strided (heads and time swapped).
        let swapped = normal(&[2, 5, 3, 16]).swapaxes(1, 2).unwrap();
        for x in [x, swapped] {
            let (x, x64) = pair(&x, dtype);
            for traditional in [false, true] {
                for dims in [16, 8] {
                    for offset in &offsets {
                        let what = format!("{dtype} traditional={traditional} dims={dims}");
                        let freqs = || RopeFrequencies::Base(10000.0);
                        let got =
                            rope(&x, dims, traditional, freqs(), 0.5, offset.clone()).unwrap();
                        assert_eq!(got.dtype(), dtype);
                        let want = rope(&x64, dims, traditional, freqs(), 0.5, offset.clone());
                        assert_close(&got, &want.unwrap(), tol, &what);
                        let f =
                            lazulite::linspace(1.0, 50.0, dims / 2, true, DType::Float32).unwrap();
                        let given = || RopeFrequencies::Freqs(f.clone());
                        let got =
                            rope(&x, dims, traditional, given(), 1.0, offset.clone()).unwrap();
                        let want = rope(&x64, dims, traditional, given(), 1.0, offset.clone());
                        assert_close(&got, &want.unwrap(), tol, &what);
                    }
                }
            }
        }
    }
}

#[test]
fn fused_ops_differentiate_and_batch_as_their_composition() {
    // Gradients and vmap of the fused nodes go through the composition: compare them with
    // the float64 (composed) path.
    let x = normal(&[3, 8]);
    let w = normal(&[8]);
    let loss = |x: &Array, w: &Array| {
        let y = rms_norm(x, Some(w), 1e-5)?;
        let y = rope(
            &y.reshape(&[1, 3, 8])?,
            8,
            false,
            RopeFrequencies::Base(100.0),
            1.0,
            2,
        )?;
        lazulite::sum(&y.square()?, lazulite::Axes::All, false)
    };
    let grads = |x: &Array, w: &Array| {
        let f = |args: &[Array]| Ok(vec![loss(&args[0], &args[1])?]);
        lazulite::value_and_grad_argnums(f, &[x.clone(), w.clone()], &[0, 1])
            .unwrap()
            .1
    };
    let got = grads(&x, &w);
    let want = grads(
        &x.astype(DType::Float64).unwrap(),
        &w.astype(DType::Float64).unwrap(),
    );
    for (g, e) in got.iter().zip(&want) {
        assert_close(g, e, 1e-4, "gradient");
    }
    let batched = lazulite::vmap(
        |args: &[Array]| Ok(vec![rms_norm(&args[0], Some(&args[1]), 1e-5)?]),
        vec![Some(0), None],
        vec![Some(0)],
    );
    let xs = normal(&[4, 3, 8]);
    let got = batched(&[xs.clone(), w.clone()]).unwrap().remove(0);
    let want = rms_norm(
        &xs.astype(DType::Float64).unwrap(),
        Some(&w.astype(DType::Float64).unwrap()),
        1e-5,
    );
    assert_close(&got, &want.unwrap(), 1e-5, "vmap");
}

/// Hand-computed gated delta steps: two value heads share one key head, one value head
/// gates per key feature, the second example skips its middle step.
#[test]
fn gated_delta_update_steps_by_hand() {
    use lazulite::fast::gated_delta_update;
    let f = |v: &[f64], shape: &[usize]| Array::from_slice(v, shape).unwrap();
    // B=2, T=3, Hk=1, Dk=2; keys e0, e1, e0 for both examples, q = (1, 1).
    let k = f(
        &[1., 0., 0., 1., 1., 0., 1., 0., 0., 1., 1., 0.],
        &[2, 3, 1, 2],
    );
    let q = lazulite::ones(&[2, 3, 1, 2], DType::Float64).unwrap();
    // Hv=1, Dv=1: values 2, 3, 5.
    let v = f(&[2., 3., 5., 2., 3., 5.], &[2, 3, 1, 1]);
    let gamma = f(&[1., 0.5, 1., 1., 0.5, 1.], &[2, 3, 1]);
    let beta = f(&[1., 1., 0.5, 1., 1., 0.5], &[2, 3, 1]);
    let mask = Array::from_slice(&[true, true, true, true, false, true], &[2, 3]).unwrap();
    let (out, state) = gated_delta_update(&q, &k, &v, &gamma, &beta, None, Some(&mask)).unwrap();
    assert_eq!(out.dtype(), DType::Float64);
    assert_eq!(state.dtype(), DType::Float64);
    // Example 0: S=(2,0) o=2; S=(1,0)+(0,3) o=4; S=(1,3)+0.5*(5-1)*e0=(3,3) o=6.
    // Example 1: S=(2,0) o=2; skipped: S kept, o=0; S=(2,0)+0.5*(5-2)*e0=(3.5,0) o=3.5.
    assert_eq!(out.to_vec::<f64>().unwrap(), vec![2., 4., 6., 2., 0., 3.5]);
    assert_eq!(state.to_vec::<f64>().unwrap(), vec![3., 3., 3.5, 0.]);

    // Per-feature gates and a given state: S=(1,1) decays to (0.5, 0.25); with beta 0 the
    // state is only decayed and read out: o = 0.75.
    let one = |shape: &[usize]| lazulite::ones(shape, DType::Float32).unwrap();
    let gamma = Array::from_slice(&[0.5f32, 0.25], &[1, 1, 1, 2]).unwrap();
    let beta = lazulite::zeros(&[1, 1, 1], DType::Float32).unwrap();
    let s0 = one(&[1, 1, 1, 2]);
    let (out, state) = gated_delta_update(
        &one(&[1, 1, 1, 2]),
        &one(&[1, 1, 1, 2]),
        &one(&[1, 1, 1, 1]),
        &gamma,
        &beta,
        Some(&s0),
        None,
    )
    .unwrap();
    assert_eq!(out.to_vec::<f32>().unwrap(), vec![0.75]);
    assert_eq!(state.to_vec::<f32>().unwrap(), vec![0.5, 0.25]);
}

#[test]
fn gated_delta_update_dtypes_and_grouped_heads() {
    use lazulite::fast::gated_delta_update;
    let q = normal(&[1, 2, 2, 4]).astype(DType::Float16).unwrap();
    let k = normal(&[1, 2, 2, 4]).astype(DType::Float16).unwrap();
    let v = normal(&[1, 2, 6, 3]);
    let gamma = lazulite::full(&[1, 2, 6], 0.9f32, None).unwrap();
    let beta = lazulite::full(&[1, 2, 6], 0.5f32, None).unwrap();
    let (out, state) = gated_delta_update(&q, &k, &v, &gamma, &beta, None, None).unwrap();
    assert_eq!(out.shape(), &[1, 2, 6, 3]);
    assert_eq!(out.dtype(), DType::Float16);
    assert_eq!(state.shape(), &[1, 6, 3, 4]);
    assert_eq!(state.dtype(), DType::Float32);
    // Value heads 0..3 use key head 0 and 3..6 key head 1: with the same values, the
    // heads of a group agree.
    let v = lazulite::broadcast_to(&normal(&[1, 2, 1, 3]), &[1, 2, 6, 3]).unwrap();
    let (out, _) = gated_delta_update(&q, &k, &v, &gamma, &beta, None, None).unwrap();
    let out = out.astype(DType::Float32).unwrap().to_vec::<f32>().unwrap();
    for t in 0..2 {
        let head = |h: usize| &out[(t * 6 + h) * 3..(t * 6 + h + 1) * 3];
        assert_eq!(head(0), head(2));
        assert_eq!(head(3), head(5));
    }
}

#[test]
fn gated_delta_update_rejects_bad_shapes_with_typed_errors() {
    use lazulite::fast::gated_delta_update;
    use lazulite::ErrorKind;
    let q = normal(&[2, 3, 2, 4]);
    let v = normal(&[2, 3, 2, 5]);
    let g = normal(&[2, 3, 2]);
    let kind = |r: lazulite::Result<(Array, Array)>| r.expect_err("an error").kind();
    let run = |q: &Array, k: &Array, v: &Array, g: &Array, b: &Array, m: Option<&Array>| {
        gated_delta_update(q, k, v, g, b, None, m)
    };
    let q3 = normal(&[2, 3, 4]);
    assert_eq!(kind(run(&q3, &q, &v, &g, &g, None)), ErrorKind::Index);
    assert_eq!(kind(run(&q, &q, &q3, &g, &g, None)), ErrorKind::Index);
    let short = normal(&[2, 2, 2, 4]);
    assert_eq!(kind(run(&q, &short, &v, &g, &g, None)), ErrorKind::Value);
    let scalar = Array::from_slice(&[0.5f32], &[]).unwrap();
    assert_eq!(kind(run(&q, &q, &v, &g, &scalar, None)), ErrorKind::Index);
    let wrong_heads = normal(&[2, 3, 3]);
    assert_eq!(
        kind(run(&q, &q, &v, &wrong_heads, &g, None)),
        ErrorKind::Value
    );
    let flat_mask = Array::from_slice(&[true, false], &[2]).unwrap();
    assert_eq!(
        kind(run(&q, &q, &v, &g, &g, Some(&flat_mask))),
        ErrorKind::Index
    );
    let no_heads = normal(&[2, 3, 0, 4]);
    assert_eq!(
        kind(run(&no_heads, &no_heads, &v, &g, &g, None)),
        ErrorKind::Value
    );
    let none = |x: &Array| {
        let mut shape = x.shape().to_vec();
        shape[1] = 0;
        lazulite::zeros(&shape, DType::Float32).unwrap()
    };
    let err = run(&none(&q), &none(&q), &none(&v), &none(&g), &none(&g), None).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Value);
    assert_eq!(err.message(), "[stack] No arrays provided for stacking");
}

#[test]
fn gated_delta_update_differentiates_and_batches() {
    use lazulite::fast::gated_delta_update;
    let f64s = |shape: &[usize]| normal(shape).astype(DType::Float64).unwrap();
    let (q, k, v) = (
        f64s(&[1, 3, 1, 2]),
        f64s(&[1, 3, 1, 2]),
        f64s(&[1, 3, 2, 2]),
    );
    let sigmoid = |x: Array| lazulite::sigmoid(&x).unwrap();
    let (g, b) = (sigmoid(f64s(&[1, 3, 2])), sigmoid(f64s(&[1, 3, 2])));
    let loss = |beta: &Array| -> lazulite::Result<Array> {
        let (out, state) = gated_delta_update(&q, &k, &v, &g, beta, None, None)?;
        lazulite::add(
            &lazulite::sum(&out.square()?, lazulite::Axes::All, false)?,
            &lazulite::sum(&state, lazulite::Axes::All, false)?,
        )
    };
    let grad = lazulite::value_and_grad_argnums(
        |args: &[Array]| Ok(vec![loss(&args[0])?]),
        std::slice::from_ref(&b),
        &[0],
    )
    .unwrap()
    .1
    .remove(0)
    .to_vec::<f64>()
    .unwrap();
    // Central differences, one entry of beta at a time.
    let base = b.to_vec::<f64>().unwrap();
    for (i, g_i) in grad.iter().enumerate() {
        let at = |d: f64| {
            let mut x = base.clone();
            x[i] += d;
            loss(&Array::from_slice(&x, &[1, 3, 2]).unwrap())
                .unwrap()
                .item::<f64>()
                .unwrap()
        };
        let fd = (at(1e-6) - at(-1e-6)) / 2e-6;
        assert!(
            (fd - g_i).abs() < 1e-6 * (1.0 + fd.abs()),
            "{i}: {fd} vs {g_i}"
        );
    }

    // vmap over a leading axis of q against one call per example.
    let qs = normal(&[3, 1, 3, 1, 2]);
    let (k, v, g, b) = (
        k.astype(DType::Float32).unwrap(),
        v.astype(DType::Float32).unwrap(),
        g.astype(DType::Float32).unwrap(),
        b.astype(DType::Float32).unwrap(),
    );
    let batched = lazulite::vmap(
        |args: &[Array]| {
            let (o, s) = gated_delta_update(&args[0], &k, &v, &g, &b, None, None)?;
            Ok(vec![o, s])
        },
        vec![Some(0)],
        vec![Some(0), Some(0)],
    );
    let got = batched(std::slice::from_ref(&qs)).unwrap();
    for i in 0..3i32 {
        let index = Array::from_slice(&[i], &[]).unwrap();
        let q_i = lazulite::take(&qs, &index, Some(0)).unwrap();
        let (o, s) = gated_delta_update(&q_i, &k, &v, &g, &b, None, None).unwrap();
        let o_b = lazulite::take(&got[0], &index, Some(0)).unwrap();
        let s_b = lazulite::take(&got[1], &index, Some(0)).unwrap();
        assert_close(
            &o_b,
            &o.astype(DType::Float64).unwrap(),
            1e-5,
            "vmap output",
        );
        assert_close(&s_b, &s.astype(DType::Float64).unwrap(), 1e-5, "vmap state");
    }
}
