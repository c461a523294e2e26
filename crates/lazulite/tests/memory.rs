//! Memory behaviour, in its own test binary because the counters are process-wide.

use lazulite::{get_peak_memory, reset_peak_memory, DType};

/// `x = sin(x)` repeated on a large array keeps at most two buffers alive: each step's
/// input, held by nobody else, donates its buffer to the output.
#[test]
fn repeated_sin_runs_in_constant_memory() {
    let n = 10_000_000;
    let steps = 1000;
    let mut x = lazulite::arange(0.0, n as f64, 1.0, DType::Float32).unwrap();
    x.eval().unwrap();
    let bytes = x.nbytes();
    reset_peak_memory();
    let base = get_peak_memory();
    for _ in 0..steps {
        x = x.sin().unwrap();
    }
    x.eval().unwrap();
    let peak = get_peak_memory() - base + bytes;
    assert!(
        (peak as f64) < 2.5 * bytes as f64,
        "peak {peak} bytes for an array of {bytes} bytes"
    );
    // The values are those of sin applied `steps` times.
    let mut expected = 5.0f32;
    for _ in 0..steps {
        expected = expected.sin();
    }
    let got = x.to_vec::<f32>().unwrap()[5];
    assert!((got - expected).abs() < 1e-5, "{got} vs {expected}");
}
