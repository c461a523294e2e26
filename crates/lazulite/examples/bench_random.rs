//! Times 10M uniform float32 numbers (and the raw bits under them) from one key.
//! Compare with NumPy: `np.random.default_rng().random(10_000_000, dtype=np.float32)`.
//!
//! Run: `cargo run --release --example bench_random`

use lazulite::{random, DType};
use std::time::Instant;

const N: usize = 10_000_000;
const RUNS: usize = 10;

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
    println!("10M uint32 bits      {bits:8.2} ms");
    println!("10M uniform float32  {uniform:8.2} ms");
    println!("10M normal float32   {normal:8.2} ms  (of which erfinv {erfinv:.2} ms)");
    Ok(())
}
