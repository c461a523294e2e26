//! `fft::stft` and `fft::istft` against a direct float64 evaluation of their definitions
//! (frames, window, a naive DFT, overlap-add), their round trip, errors, dtypes, and the
//! derivatives and vmap they inherit from the ops they are built of.

use crate::fft::{
    assert_error, check_linear_derivatives, check_vmap, parts, random_complex, random_real,
};
use lazulite::fft::{istft, stft, FftNorm, IstftOptions, StftOptions};
use lazulite::{hanning, reshape, Array, DType, ErrorKind};
use std::f64::consts::PI;

fn values(a: &Array) -> Vec<f64> {
    a.astype(DType::Float64).unwrap().to_vec::<f64>().unwrap()
}

/// The sample at padded position `i` (`half` samples added in front) under `mode`.
fn padded_sample(x: &[f64], i: i64, half: i64, mode: &str) -> f64 {
    let n = x.len() as i64;
    let j = i - half;
    if (0..n).contains(&j) {
        return x[j as usize];
    }
    match mode {
        "constant" => 0.0,
        "edge" => x[j.clamp(0, n - 1) as usize],
        // Mirrored without repeating the edge (one reflection suffices here).
        _ => x[if j < 0 { -j } else { 2 * (n - 1) - j } as usize],
    }
}

/// The window centred in `n_fft` points.
fn centred(window: &[f64], n_fft: usize) -> Vec<f64> {
    let before = (n_fft - window.len()) / 2;
    let mut w = vec![0.0; n_fft];
    w[before..before + window.len()].copy_from_slice(window);
    w
}

/// The STFT of one signal, `(n_freq, n_frames)` (re, im) pairs in row-major order.
fn reference_stft(
    x: &[f64],
    n_fft: usize,
    hop: usize,
    window: &[f64],
    center: bool,
    mode: &str,
    onesided: bool,
) -> (Vec<f64>, [usize; 2]) {
    let half = if center { (n_fft / 2) as i64 } else { 0 };
    let len = x.len() + 2 * half as usize;
    let n_frames = 1 + (len - n_fft) / hop;
    let n_freq = if onesided { n_fft / 2 + 1 } else { n_fft };
    let w = centred(window, n_fft);
    let mut out = vec![0.0; 2 * n_freq * n_frames];
    for t in 0..n_frames {
        for k in 0..n_freq {
            let (mut re, mut im) = (0.0, 0.0);
            for (m, weight) in w.iter().enumerate() {
                let v = weight * padded_sample(x, (t * hop + m) as i64, half, mode);
                let angle = -2.0 * PI * (k * m) as f64 / n_fft as f64;
                re += v * angle.cos();
                im += v * angle.sin();
            }
            let at = 2 * (k * n_frames + t);
            out[at] = re;
            out[at + 1] = im;
        }
    }
    (out, [n_freq, n_frames])
}

fn samples(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| (i as f64 * 0.37).sin() + 0.05 * i as f64)
        .collect()
}

fn assert_close(got: &[f64], want: &[f64], tol: f64, context: &str) {
    assert_eq!(got.len(), want.len(), "{context}: size");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "{context}[{i}]: {g} vs {w}"
        );
    }
}

#[test]
fn stft_matches_its_definition() {
    let x = samples(21);
    let signal = Array::from_slice(&x, &[21]).unwrap();
    let hann: Vec<f64> = values(&hanning(6).unwrap());
    for mode in ["reflect", "constant", "edge"] {
        for center in [true, false] {
            for onesided in [true, false] {
                let options = StftOptions {
                    hop_length: Some(3),
                    window: Some(hanning(6).unwrap()),
                    center,
                    pad_mode: mode.to_string(),
                    onesided: Some(onesided),
                    ..Default::default()
                };
                let got = stft(&signal, 8, &options).unwrap();
                let (want, shape) = reference_stft(&x, 8, 3, &hann, center, mode, onesided);
                let context = format!("{mode} center={center} onesided={onesided}");
                assert_eq!(got.shape(), shape, "{context}");
                assert_eq!(got.dtype(), DType::Complex64, "{context}");
                assert_close(&parts(&got), &want, 1e-5, &context);
            }
        }
    }
}

#[test]
fn stft_defaults_norms_and_batches() {
    // Defaults: hop n_fft / 4, rectangular window, reflect-centred, one-sided.
    let x = samples(16);
    let signal = Array::from_slice(&x, &[16]).unwrap();
    let got = stft(&signal, 8, &StftOptions::default()).unwrap();
    let (want, shape) = reference_stft(&x, 8, 2, &[1.0; 8], true, "reflect", true);
    assert_eq!(got.shape(), shape);
    assert_close(&parts(&got), &want, 1e-5, "defaults");

    // An odd transform, a short rectangular window, every norm.
    for (norm, scale) in [
        (FftNorm::Backward, 1.0),
        (FftNorm::Ortho, 1.0 / 7f64.sqrt()),
        (FftNorm::Forward, 1.0 / 7.0),
    ] {
        let options = StftOptions {
            win_length: Some(4),
            norm,
            ..Default::default()
        };
        let got = stft(&signal, 7, &options).unwrap();
        let (want, _) = reference_stft(&x, 7, 1, &[1.0; 4], true, "reflect", true);
        let want: Vec<f64> = want.iter().map(|v| v * scale).collect();
        assert_close(&parts(&got), &want, 1e-5, &format!("{norm:?}"));
    }

    // Leading axes are batch axes.
    let batch = random_real(3, &[2, 3, 12]);
    let got = stft(&batch, 4, &StftOptions::default()).unwrap();
    assert_eq!(got.shape(), [2, 3, 3, 13]);
    let rows = reshape(&batch, &[6, 12]).unwrap();
    let all = parts(&got);
    for r in 0..6 {
        let row = values(&lazulite::take(&rows, &Array::scalar(r as i32), Some(0)).unwrap());
        let (want, _) = reference_stft(&row, 4, 1, &[1.0; 4], true, "reflect", true);
        assert_close(
            &all[r * want.len()..(r + 1) * want.len()],
            &want,
            1e-5,
            "batch row",
        );
    }

    // Complex input gives the two-sided spectrum by default.
    let z = random_complex(4, &[10]);
    let got = stft(&z, 4, &StftOptions::default()).unwrap();
    assert_eq!(got.shape(), [4, 11]);
}

#[test]
fn istft_inverts_stft() {
    let x = samples(40);
    let signal = Array::from_slice(&x, &[40])
        .unwrap()
        .astype(DType::Float32)
        .unwrap();
    // n_fft, hop, window, one-sided, norm.
    type Case = (i64, Option<i64>, Option<Array>, bool, FftNorm);
    let cases: Vec<Case> = vec![
        (16, None, None, true, FftNorm::Backward),
        (
            16,
            Some(4),
            Some(hanning(16).unwrap()),
            true,
            FftNorm::Backward,
        ),
        (
            15,
            Some(5),
            Some(hanning(12).unwrap()),
            true,
            FftNorm::Ortho,
        ),
        (8, Some(8), None, false, FftNorm::Forward),
    ];
    for (n_fft, hop, window, onesided, norm) in cases {
        let context = format!("n_fft={n_fft} hop={hop:?} onesided={onesided}");
        let spec = stft(
            &signal,
            n_fft,
            &StftOptions {
                hop_length: hop,
                window: window.clone(),
                norm,
                onesided: Some(onesided),
                ..Default::default()
            },
        )
        .unwrap();
        let back = istft(
            &spec,
            &IstftOptions {
                n_fft: Some(n_fft),
                hop_length: hop,
                window,
                norm,
                onesided: Some(onesided),
                length: Some(40),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(back.dtype(), DType::Float32, "{context}");
        assert_close(&values(&back), &x, 1e-4, &context);
    }
}

#[test]
fn istft_lengths_and_dtypes() {
    let spec = random_complex(5, &[5, 6]);
    // n_fft 8, hop 2: 8 + 5 * 2 samples, less 4 at each end.
    let full = istft(&spec, &IstftOptions::default()).unwrap();
    assert_eq!(full.shape(), [10]);
    let uncentred = istft(
        &spec,
        &IstftOptions {
            center: false,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(uncentred.shape(), [18]);
    assert_close(
        &values(&full),
        &values(&uncentred)[4..14],
        1e-6,
        "centred slice",
    );
    for (length, expected) in [(3, 3), (14, 14), (25, 25), (0, 0), (-2, 0)] {
        let options = IstftOptions {
            length: Some(length),
            ..Default::default()
        };
        let out = istft(&spec, &options).unwrap();
        assert_eq!(out.shape(), [expected], "length {length}");
        let v = values(&out);
        let kept = expected.min(14);
        assert_close(
            &v[..kept],
            &values(&uncentred)[4..4 + kept],
            1e-6,
            "trimmed",
        );
        assert!(v[kept..].iter().all(|&s| s == 0.0), "zero-padded");
    }
    let wide = Array::ones(&[8], DType::Float64).unwrap();
    let options = IstftOptions {
        window: Some(wide),
        ..Default::default()
    };
    assert_eq!(istft(&spec, &options).unwrap().dtype(), DType::Float64);
    let batch = random_complex(6, &[2, 3, 5, 6]);
    assert_eq!(
        istft(&batch, &IstftOptions::default()).unwrap().shape(),
        [2, 3, 10]
    );
    let hop_past_frame = IstftOptions {
        n_fft: Some(4),
        hop_length: Some(7),
        ..Default::default()
    };
    assert_eq!(istft(&spec, &hop_past_frame).unwrap().shape(), [35]);
}

#[test]
fn derivatives_and_vmap_come_from_the_ops() {
    let x = random_real(7, &[3, 20]);
    let windowed = |x: &Array| {
        let options = StftOptions {
            hop_length: Some(3),
            window: Some(hanning(7).unwrap()),
            ..Default::default()
        };
        stft(x, 8, &options)
    };
    check_linear_derivatives("stft", &windowed, &x);
    let two_sided = |x: &Array| {
        let options = StftOptions {
            onesided: Some(false),
            pad_mode: "edge".to_string(),
            ..Default::default()
        };
        stft(x, 6, &options)
    };
    check_linear_derivatives("stft two-sided", &two_sided, &x);
    check_vmap("stft", &windowed, &x, 0);

    let z = random_complex(8, &[2, 5, 6]);
    let inverse = |z: &Array| {
        let options = IstftOptions {
            hop_length: Some(3),
            window: Some(hanning(8).unwrap()),
            ..Default::default()
        };
        istft(z, &options)
    };
    check_linear_derivatives("istft", &inverse, &z);
    check_vmap("istft", &inverse, &z, 0);
}

#[test]
fn errors_name_the_operation() {
    let x = random_real(9, &[20]);
    let s = StftOptions::default();
    let value = ErrorKind::Value;
    assert_error(stft(&x, 0, &s), value, "[stft] n_fft must be positive.");
    assert_error(
        stft(&Array::scalar(1.0f32), 8, &s),
        value,
        "at least one dimension",
    );
    assert_error(
        stft(&x, 3, &s),
        value,
        "[stft] hop_length must be positive.",
    );
    let with = |f: &dyn Fn(&mut StftOptions)| {
        let mut o = StftOptions::default();
        f(&mut o);
        stft(&x, 8, &o)
    };
    assert_error(
        with(&|o| o.hop_length = Some(-1)),
        value,
        "hop_length must be positive",
    );
    assert_error(
        with(&|o| o.win_length = Some(9)),
        value,
        "window length must not exceed n_fft",
    );
    assert_error(
        with(&|o| o.win_length = Some(-1)),
        value,
        "Negative dimensions",
    );
    assert_error(
        with(&|o| o.window = Some(Array::ones(&[2, 4], DType::Float32).unwrap())),
        value,
        "window must be a one-dimensional array",
    );
    assert_error(
        with(&|o| o.pad_mode = "wrap".to_string()),
        value,
        "Invalid padding mode (wrap)",
    );
    let uncentred = StftOptions {
        center: false,
        ..Default::default()
    };
    assert_error(
        stft(&random_real(1, &[5]), 8, &uncentred),
        value,
        "[stft] Input is too short for the given n_fft.",
    );
    assert_error(
        stft(&random_real(1, &[0]), 8, &s),
        value,
        "Cannot infer the shape",
    );

    let z = random_complex(10, &[5, 4]);
    let i = IstftOptions::default();
    assert_error(
        istft(&random_complex(1, &[5]), &i),
        value,
        "at least two dimensions",
    );
    assert_error(
        istft(&random_complex(1, &[1, 4]), &i),
        value,
        "[istft] n_fft must be positive.",
    );
    let with = |f: &dyn Fn(&mut IstftOptions)| {
        let mut o = IstftOptions::default();
        f(&mut o);
        istft(&z, &o)
    };
    assert_error(
        with(&|o| o.hop_length = Some(0)),
        value,
        "[istft] hop_length must be positive.",
    );
    assert_error(
        with(&|o| o.window = Some(Array::ones(&[9], DType::Float32).unwrap())),
        value,
        "[istft] window length",
    );
    assert_error(
        istft(&random_complex(1, &[5, 0]), &i),
        value,
        "Cannot infer the shape",
    );
    let huge = IstftOptions {
        hop_length: Some(i64::MAX),
        ..Default::default()
    };
    assert!(istft(&z, &huge).is_err());
}
