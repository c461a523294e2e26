//! Cost of bounds checking in gather: a 1M-index gather from a 1M float32 array.
//!
//! Prints, from one run: `take` through the public API (record + eval); the gather
//! kernel alone with its bounds check and with the check switched off (through an
//! internal entry point that exists for this bench), and the check's share of the
//! kernel's time; and a plain single-threaded Rust loop over the same data without any
//! check, the floor an unchecked gather cannot beat on one thread. Median of 25 runs,
//! milliseconds; the kernel runs on the rayon pool for outputs this large.
//!
//! Run with `cargo run --release --example bench_gather`.

use lazulite::{take, take_kernel_for_bench, Array, Result};
use std::time::Instant;

const N: usize = 1_000_000;
const RUNS: usize = 25;

fn median_ms(mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    f()?;
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

    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    // Interleaved, so that a change in the machine's load hits every variant alike.
    let mut api = vec![];
    let mut checked = vec![];
    let mut unchecked = vec![];
    let mut plain = vec![];
    let mut out = vec![0f32; N];
    for _ in 0..3 {
        api.push(median_ms(|| take(&a, &i, Some(0))?.eval())?);
        // SAFETY: with the check on, nothing is promised.
        checked.push(median_ms(|| unsafe {
            take_kernel_for_bench(&a, &i, true)
        })?);
        // SAFETY: every index was generated below N.
        unchecked.push(median_ms(|| unsafe {
            take_kernel_for_bench(&a, &i, false)
        })?);
        plain.push(median_ms(|| {
            for (o, &k) in out.iter_mut().zip(&idx) {
                // SAFETY: every index was generated below N.
                *o = unsafe { *data.get_unchecked(k as usize) };
            }
            std::hint::black_box(&out);
            Ok(())
        })?);
    }
    let best = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let (api, checked, unchecked, plain) =
        (best(&api), best(&checked), best(&unchecked), best(&plain));
    let share = (checked - unchecked) / checked * 100.0;
    println!("gather of {N} int32 indices from {N} float32, {threads} threads (ms, median of {RUNS}, best of 3):");
    println!("  lazulite take through the API        {api:8.3}");
    println!("  gather kernel, with bounds check     {checked:8.3}");
    println!("  gather kernel, check switched off    {unchecked:8.3}");
    println!("  bounds check share of the kernel     {share:7.1} %");
    println!("  plain loop, no check, one thread     {plain:8.3}");
    println!(
        "  API take / plain loop                {:8.2}x",
        api / plain
    );
    Ok(())
}
