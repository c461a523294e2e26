//! Times 10M uniform and normal float32 numbers (and the raw bits under them) from one
//! key, then NumPy's `default_rng` doing the same (`random` and `standard_normal` in
//! float32) when a Python with NumPy is given in `LAZULITE_BENCH_PYTHON`.
//!
//! Run: `LAZULITE_BENCH_PYTHON=python3 cargo run --release --example bench_random`

use lazulite::{random, DType};
use std::time::Instant;

const N: usize = 10_000_000;
const RUNS: usize = 10;

/// The same draws with NumPy's default generator, best of 10 runs each.
const NUMPY_BENCH: &str = r#"
import timeit
import numpy as np
rng = np.random.default_rng(0)
n = 10_000_000
for name, f in [("uniform", lambda: rng.random(n, dtype=np.float32)),
                ("normal", lambda: rng.standard_normal(n, dtype=np.float32))]:
    f()
    ms = min(timeit.repeat(f, number=1, repeat=10)) * 1e3
    print(f"NumPy 10M {name:8s} float32 {ms:8.2f} ms")
"#;

/// Best wall time of `RUNS` runs of `f`, in milliseconds.
fn best_ms(mut f: impl FnMut()) -> f64 {
    f();
    (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() -> lazulite::Result<()> {
    let key = random::key(0);
    let bits = best_ms(|| {
        random::bits(&[N], 4, Some(&key)).unwrap().eval().unwrap();
    });
    let uniform = best_ms(|| {
        random::uniform(0.0, 1.0, &[N], DType::Float32, Some(&key))
            .unwrap()
            .eval()
            .unwrap();
    });
    let normal = best_ms(|| {
        random::normal(&[N], DType::Float32, None, None, Some(&key))
            .unwrap()
            .eval()
            .unwrap();
    });
    // normal = erfinv of a uniform draw: how much of its time is the erfinv kernel.
    let u = random::uniform(-0.5, 0.5, &[N], DType::Float32, Some(&key))?;
    u.eval()?;
    let erfinv = best_ms(|| {
        lazulite::erfinv(&u).unwrap().eval().unwrap();
    });
    // The other steps of normal: the draw on (-1, 1) and the final scaling.
    let wide = best_ms(|| {
        random::uniform(-1.0, 1.0, &[N], DType::Float32, Some(&key))
            .unwrap()
            .eval()
            .unwrap();
    });
    let scale = best_ms(|| {
        lazulite::multiply(&u, 1.5).unwrap().eval().unwrap();
    });
    println!("10M uint32 bits      {bits:8.2} ms");
    println!("10M uniform float32  {uniform:8.2} ms");
    println!("10M normal float32   {normal:8.2} ms  (steps: uniform on (-1, 1) {wide:.2} ms, erfinv {erfinv:.2} ms, scaling {scale:.2} ms)");
    if let Ok(python) = std::env::var("LAZULITE_BENCH_PYTHON") {
        let status = std::process::Command::new(python)
            .args(["-c", NUMPY_BENCH])
            .status();
        if let Err(e) = status {
            eprintln!("could not run NumPy: {e}");
        }
    }
    Ok(())
}
