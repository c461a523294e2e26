//! The lazulite demo: lazy evaluation on a real computation.
//!
//! Run with `bash scripts/demo.sh` (or `cargo run --release --example demo`).

use lazulite::{eval, get_peak_memory, reset_peak_memory, Array, DType, Result};
use std::time::Instant;

fn main() -> Result<()> {
    println!("lazulite demo\n");

    // 1. Lazy evaluation: building the graph computes nothing.
    let x = lazulite::arange(0.0, 1_000_000.0, 1.0, DType::Float32)?;
    let x = lazulite::divide(&x, 1_000_000.0)?;
    let t = Instant::now();
    let y = lazulite::sin(&(&x * std::f64::consts::TAU))?;
    let z = &y * &y + lazulite::cos(&(&x * std::f64::consts::TAU))?.square()?;
    println!(
        "recorded sin²+cos² over 1M points in {:?}; evaluated yet? {}",
        t.elapsed(),
        z.is_evaluated()
    );
    let t = Instant::now();
    eval(&[&z])?;
    let ones = z.to_vec::<f32>()?;
    let worst = ones.iter().map(|v| (v - 1.0).abs()).fold(0.0f32, f32::max);
    println!(
        "evaluated in {:?}; max |sin²+cos²-1| = {worst:e}",
        t.elapsed()
    );

    // 2. Only what is used is computed.
    let used = x.exp()?;
    let unused = used.log()?.sinh()?;
    used.eval()?;
    println!(
        "exp evaluated: {}, the branch nobody asked for: {}",
        used.is_evaluated(),
        unused.is_evaluated()
    );

    // 3. Constant memory: 1000 chained sin on a 4 MB array reuse one buffer.
    let mut a = lazulite::arange(0.0, 1_000_000.0, 1.0, DType::Float32)?;
    a.eval()?;
    reset_peak_memory();
    let base = get_peak_memory();
    let t = Instant::now();
    for _ in 0..1000 {
        a = a.sin()?;
    }
    a.eval()?;
    let extra = get_peak_memory() - base;
    println!(
        "1000 x sin on 1M f32 in {:?}; extra peak memory {:.1} MB for a {:.1} MB array",
        t.elapsed(),
        extra as f64 / 1e6,
        a.nbytes() as f64 / 1e6
    );

    // 4. Printing like MLX.
    let m = Array::from_slice(&[1.0f32, 2.5, -3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    println!("\n{}", m.t()?);
    Ok(())
}
