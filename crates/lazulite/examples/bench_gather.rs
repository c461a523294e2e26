//! Cost of bounds checking in gather: a 1M-index gather from a 1M float32 array through
//! the public API (`take`, record + eval, indices checked in the kernel) next to plain
//! Rust loops over the same data with and without a bounds check (the kernel's floor).
//! Median of 15 runs, milliseconds.
//!
//! Run with `cargo run --release --example bench_gather`.

use lazulite::{take, Array, Result};
use std::time::Instant;

const N: usize = 1_000_000;
const RUNS: usize = 15;

fn median_ms(mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let start = Instant::now();
        f()?;
        times.push(start.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[RUNS / 2])
}

fn main() -> Result<()> {
    let data: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let mut state = 0x2545F4914F6CDD1Du64;
    let idx: Vec<i32> = (0..N)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % N as u64) as i32
        })
        .collect();
    let a = Array::from_slice(&data, &[N])?;
    let i = Array::from_slice(&idx, &[N])?;
    a.eval()?;
    i.eval()?;

    let api = median_ms(|| take(&a, &i, Some(0))?.eval())?;
    let mut out = vec![0f32; N];
    let unchecked = median_ms(|| {
        for (o, &k) in out.iter_mut().zip(&idx) {
            // SAFETY: every index was generated below N.
            *o = unsafe { *data.get_unchecked(k as usize) };
        }
        std::hint::black_box(&out);
        Ok(())
    })?;
    let checked = median_ms(|| {
        for (o, &k) in out.iter_mut().zip(&idx) {
            let k = if k < 0 { k as i64 + N as i64 } else { k as i64 };
            if !(0..N as i64).contains(&k) {
                return Err(lazulite::Error::index("out of bounds"));
            }
            // SAFETY: checked just above.
            *o = unsafe { *data.get_unchecked(k as usize) };
        }
        std::hint::black_box(&out);
        Ok(())
    })?;
    println!("gather of {N} int32 indices from {N} float32 (median of {RUNS}, ms):");
    println!("  lazulite take (checked in the kernel) {api:8.3}");
    println!("  plain loop, wrap + bounds check       {checked:8.3}");
    println!("  plain loop, no check                  {unchecked:8.3}");
    Ok(())
}
