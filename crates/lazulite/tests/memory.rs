//! Memory behaviour, in its own test binary because the counters are process-wide.

use lazulite::{get_peak_memory, reset_peak_memory, DType};
use std::sync::Mutex;

/// The counters are shared by the tests, which therefore run one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// `x = sin(x)` repeated on a large array keeps at most two buffers alive: each step's
/// input, held by nobody else, donates its buffer to the output.
#[test]
fn repeated_sin_runs_in_constant_memory() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
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

/// A compiled elementwise function applied as `x = f(x)` writes its result into `x`'s
/// buffer when nothing else holds `x` (MLX donates such inputs too).
#[test]
fn compiled_function_reuses_a_donated_input() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let n = 10_000_000;
    let f = lazulite::compile(|x: &[lazulite::Array]| Ok(vec![&(&x[0] * 3.0) + 1.0]));
    let mut x = lazulite::arange(0.0, n as f64, 1.0, DType::Float32).unwrap();
    x.eval().unwrap();
    let bytes = x.nbytes();
    let held = lazulite::get_active_memory();
    reset_peak_memory();
    for _ in 0..3 {
        x = f.call(&[x]).unwrap().remove(0);
        x.eval().unwrap();
    }
    let extra = get_peak_memory() - held;
    assert!(
        (extra as f64) < 0.1 * bytes as f64,
        "{extra} bytes beyond the input's {bytes}"
    );
    let expected = ((5.0f32 * 3.0 + 1.0) * 3.0 + 1.0) * 3.0 + 1.0;
    assert_eq!(x.to_vec::<f32>().unwrap()[5], expected);

    // An input still held elsewhere is left as it was.
    let y = lazulite::arange(0.0, n as f64, 1.0, DType::Float32).unwrap();
    y.eval().unwrap();
    let z = f.call(std::slice::from_ref(&y)).unwrap().remove(0);
    z.eval().unwrap();
    assert_eq!(y.to_vec::<f32>().unwrap()[5], 5.0);
    assert_eq!(z.to_vec::<f32>().unwrap()[5], 16.0);
}
