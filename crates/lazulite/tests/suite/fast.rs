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
