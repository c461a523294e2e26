//! Times sort and argsort of float32 lines (one long line, and batches of rows) through
//! the public API, record + eval, and prints the medians of the wall time and of the CPU
//! time of all the process's threads (on a shared machine the wall time also counts the
//! time spent waiting for a core) in milliseconds.
//!
//! Run with `cargo run --release --example bench_sort` (`-- RUNS` sets the number of
//! timed runs per line, 15 by default).

use lazulite::{eval, Array, Result};
use std::time::Instant;

/// `n` values uniform in [-3, 3) from a fixed-seed generator.
fn uniform(n: usize, seed: u64) -> Vec<f32> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            -3.0 + 6.0 * ((state >> 40) as f32 / (1u64 << 24) as f32)
        })
        .collect()
}

/// Nanoseconds the process's threads have run, from /proc (0 where unavailable).
fn process_cpu_ns() -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .filter_map(|task| {
            let stat = std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok()?;
            stat.split_whitespace().next()?.parse::<u64>().ok()
        })
        .sum()
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Median wall and CPU milliseconds of `runs` calls of `work`, after one warm-up call.
fn median_ms(runs: usize, work: impl Fn() -> Result<Array>) -> Result<(f64, f64)> {
    eval(&[&work()?])?;
    let (mut wall, mut cpu) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    for _ in 0..runs {
        let (start, start_cpu) = (Instant::now(), process_cpu_ns());
        let y = work()?;
        eval(&[&y])?;
        wall.push(start.elapsed().as_secs_f64() * 1e3);
        cpu.push(process_cpu_ns().saturating_sub(start_cpu) as f64 / 1e6);
    }
    Ok((median(wall), median(cpu)))
}

fn main() -> Result<()> {
    let runs = std::env::args()
        .nth(1)
        .and_then(|r| r.parse().ok())
        .unwrap_or(15);
    println!("lazulite (Rust), median ms of {runs} runs: wall (CPU)");
    for (rows, cols) in [(1, 1_000_000), (1, 100_000), (1000, 1000), (100_000, 10)] {
        let x = Array::from_slice(&uniform(rows * cols, 9), &[rows, cols])?;
        let (sort, sort_cpu) = median_ms(runs, || lazulite::sort(&x, Some(-1)))?;
        let (argsort, argsort_cpu) = median_ms(runs, || lazulite::argsort(&x, Some(-1)))?;
        println!(
            "{rows:>7} x {cols:<8} sort {sort:8.3} ({sort_cpu:8.3})   \
             argsort {argsort:8.3} ({argsort_cpu:8.3})"
        );
    }
    Ok(())
}
