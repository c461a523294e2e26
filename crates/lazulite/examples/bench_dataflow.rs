//! Dataflow benchmarks (Owl's lazy-evaluation chapter):
//!
//! 1. Incremental computation: `c = a |> sin |> cos |> abs |> log |> sum |> mul_scalar a
//!    |> scalar_add b` over placeholders, `a` 1000x1000 float64. A full evaluation (after
//!    assigning `a`) against a re-evaluation after assigning a new `b`, medians of 15.
//! 2. Constant memory: `sin` applied `ITERATIONS` times to a `ROWS`x`COLS` float32 array,
//!    recorded as one lazy chain and evaluated once. Prints the time, the peak of
//!    lazulite's buffer memory during the evaluation next to what was live before it
//!    (each `sin` reuses its input's buffer, so the peak does not grow with the length),
//!    and the process RSS before recording, after recording (the graph's own
//!    cost, per node) and after the evaluation.
//!
//! Run with `cargo run --release --example bench_dataflow -- [ITERATIONS] [ROWS] [COLS]`
//! (default: Owl's one million `sin` on 1000x1000; that is 10^12 sines, minutes of CPU).

use lazulite::{
    get_active_memory, get_peak_memory, placeholder, reset_peak_memory, Array, Axes, DType, Result,
};
use std::time::{Duration, Instant};

const RUNS: usize = 15;

fn median(mut f: impl FnMut() -> Result<()>) -> Result<Duration> {
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let start = Instant::now();
        f()?;
        times.push(start.elapsed());
    }
    times.sort();
    Ok(times[RUNS / 2])
}

/// A field of /proc/self/status in bytes (`VmRSS`, `VmHWM`), 0 where unavailable.
fn proc_status_bytes(field: &str) -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status.lines().find_map(|line| {
                let kb = line.strip_prefix(field)?.strip_prefix(':')?;
                kb.trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<usize>()
                    .ok()
            })
        })
        .map_or(0, |kb| kb * 1024)
}

fn mb(bytes: usize) -> f64 {
    bytes as f64 / 1e6
}

fn incremental() -> Result<()> {
    let a = placeholder(&[1000, 1000], DType::Float64)?;
    let b = placeholder(&[], DType::Float64)?;
    let c = {
        let s = a.sin()?.cos()?.abs()?.log()?.sum(Axes::All, false)?;
        lazulite::add(&b, &lazulite::multiply(&a, &s)?)?
    };
    let values: Vec<f64> = (0..1_000_000)
        .map(|i| 0.5 + (i % 997) as f64 / 400.0)
        .collect();
    let value_a = Array::from_slice(&values, &[1000, 1000])?;
    value_a.eval()?;
    a.assign(&value_a)?;
    b.assign(5.0)?;
    c.eval()?;
    let full = median(|| {
        a.assign(&value_a)?;
        c.eval()
    })?;
    let mut value_b = 5.0;
    let before = lazulite::evaluation_counts(&[&c]);
    let again = median(|| {
        value_b = 11.0 - value_b;
        b.assign(value_b)?;
        c.eval()
    })?;
    let rerun: Vec<String> = before
        .iter()
        .zip(lazulite::evaluation_counts(&[&c]))
        .filter(|((_, old), (_, new))| old != new)
        .map(|((name, _), _)| name.clone())
        .collect();
    println!("incremental (Owl), a: 1000x1000 float64, median of {RUNS}");
    println!(
        "  full evaluation            {:>10.3} ms",
        full.as_secs_f64() * 1e3
    );
    println!(
        "  after assigning a new b    {:>10.3} ms (reruns {})",
        again.as_secs_f64() * 1e3,
        rerun.join(", ")
    );
    println!(
        "  ratio                      {:>10.1}x (target 20x)",
        full.as_secs_f64() / again.as_secs_f64()
    );
    Ok(())
}

fn long_chain(iterations: usize, rows: usize, cols: usize) -> Result<()> {
    let x = lazulite::random::uniform(-1.0, 1.0, &[rows, cols], DType::Float32, None)?;
    x.eval()?;
    let array_bytes = x.nbytes();
    let rss_start = proc_status_bytes("VmRSS");
    let start = Instant::now();
    let mut y = x;
    for _ in 0..iterations {
        y = y.sin()?;
    }
    let recorded = start.elapsed();
    let rss_recorded = proc_status_bytes("VmRSS");
    reset_peak_memory();
    let live = get_active_memory();
    let start = Instant::now();
    y.eval()?;
    let evaluated = start.elapsed();
    let peak = get_peak_memory().saturating_sub(live);
    let checksum = y.sum(Axes::All, false)?.item::<f32>()?;
    println!("constant memory (Owl): sin x {iterations} on {rows}x{cols} float32");
    println!(
        "  record {:.3} s, evaluate {:.3} s ({:.3} us per sin); sum(y) = {checksum}",
        recorded.as_secs_f64(),
        evaluated.as_secs_f64(),
        evaluated.as_secs_f64() * 1e6 / iterations as f64
    );
    println!(
        "  array {:.1} MB; lazulite buffer memory: {:.1} MB live before evaluating, peak {:.1} MB \
         ({:.1}x the array, {:.1} MB above live)",
        mb(array_bytes),
        mb(live),
        mb(live + peak),
        (live + peak) as f64 / array_bytes as f64,
        mb(peak)
    );
    println!(
        "  RSS {:.1} MB before recording, {:.1} MB after ({:.0} bytes per node), {:.1} MB \
         after evaluating; high-water mark {:.1} MB",
        mb(rss_start),
        mb(rss_recorded),
        rss_recorded.saturating_sub(rss_start) as f64 / iterations.max(1) as f64,
        mb(proc_status_bytes("VmRSS")),
        mb(proc_status_bytes("VmHWM"))
    );
    Ok(())
}

fn main() -> Result<()> {
    let arg = |i: usize, default: usize| {
        std::env::args().nth(i).map_or(default, |s| {
            s.parse().expect("arguments: ITERATIONS ROWS COLS")
        })
    };
    incremental()?;
    long_chain(arg(1, 1_000_000), arg(2, 1000), arg(3, 1000))
}
