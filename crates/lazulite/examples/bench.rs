//! The Rust side of the side-by-side benchmark (`bench/compare.py` is the Python side):
//! times the same workloads through the public API, record + eval, and prints the median
//! in milliseconds. It also times the per-op overhead of recording and evaluating a tiny
//! op (the target is at most 2 us).
//!
//! Run with `cargo run --release --example bench` (`-- FILTER` runs the workloads whose
//! name contains FILTER).

use lazulite::{eval, Array, DType, Result};
use std::time::Instant;

const N: usize = 10_000_000;

/// `n` values uniform in [lo, hi) from a fixed-seed generator.
fn uniform(n: usize, lo: f32, hi: f32, seed: u64) -> Vec<f32> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let unit = (state >> 40) as f32 / (1u64 << 24) as f32;
            lo + (hi - lo) * unit
        })
        .collect()
}

fn array(n: usize, shape: &[usize], lo: f32, hi: f32, seed: u64) -> Result<Array> {
    Array::from_slice(&uniform(n, lo, hi, seed), shape)
}

/// Median milliseconds of `runs` calls of `work` (each records and evaluates), after
/// one warm-up call, and the mean CPU time of this thread per call (the kernel clock ticks
/// coarsely, so a mean over the runs, not a median). With `RAYON_NUM_THREADS=1` all the
/// work runs on this thread, so that column is the kernel's cost even when a busy machine
/// inflates wall time. `BENCH_RUNS` overrides the number of runs.
fn median_ms(runs: usize, mut work: impl FnMut() -> Result<Array>) -> Result<(f64, f64)> {
    let runs = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(runs)
        .max(1);
    eval(&[&work()?])?;
    let mut wall = Vec::with_capacity(runs);
    let cpu_start = thread_cpu_ns().unwrap_or(0);
    for _ in 0..runs {
        let start = Instant::now();
        let y = work()?;
        eval(&[&y])?;
        wall.push(start.elapsed().as_secs_f64() * 1e3);
    }
    let cpu = thread_cpu_ns().unwrap_or(0).saturating_sub(cpu_start) as f64 / 1e6;
    wall.sort_by(f64::total_cmp);
    Ok((wall[runs / 2], cpu / runs as f64))
}

struct Bench {
    filter: Option<String>,
}

impl Bench {
    fn run(&self, name: &str, runs: usize, work: impl FnMut() -> Result<Array>) -> Result<()> {
        if self
            .filter
            .as_ref()
            .is_some_and(|f| !name.contains(f.as_str()))
        {
            return Ok(());
        }
        let (wall, cpu) = median_ms(runs, work)?;
        println!("{name:32} {wall:10.3} ms {cpu:10.3} ms");
        Ok(())
    }
}

type Unary = fn(&Array) -> Result<Array>;

/// This thread's CPU time in nanoseconds (Linux), which a busy shared machine does not
/// inflate the way it inflates wall time.
fn thread_cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn main() -> Result<()> {
    let bench = Bench {
        filter: std::env::args().nth(1),
    };
    println!("lazulite (Rust): median wall ms, mean CPU ms of this thread");

    for n in [512, 1024, 2048] {
        let runs = if n == 2048 { 3 } else { 7 };
        for dtype in [
            DType::Float32,
            DType::Float16,
            DType::BFloat16,
            DType::Float64,
        ] {
            let a = lazulite::astype(&array(n * n, &[n, n], -1.0, 1.0, 1)?, dtype)?;
            let b = lazulite::astype(&array(n * n, &[n, n], -1.0, 1.0, 2)?, dtype)?;
            eval(&[&a, &b])?;
            bench.run(&format!("matmul {dtype} {n}"), runs, || {
                lazulite::matmul(&a, &b)
            })?;
        }
    }

    let wide = array(N, &[N], -3.0, 3.0, 3)?;
    let positive = array(N, &[N], 0.01, 10.0, 4)?;
    let unit = array(N, &[N], -0.99, 0.99, 5)?;
    let unary: [(&str, Unary, &Array); 26] = [
        ("abs", lazulite::abs, &wide),
        ("negative", lazulite::negative, &wide),
        ("square", lazulite::square, &wide),
        ("sqrt", lazulite::sqrt, &positive),
        ("rsqrt", lazulite::rsqrt, &positive),
        ("exp", lazulite::exp, &wide),
        ("expm1", lazulite::expm1, &wide),
        ("log", lazulite::log, &positive),
        ("log1p", lazulite::log1p, &positive),
        ("log2", lazulite::log2, &positive),
        ("log10", lazulite::log10, &positive),
        ("sin", lazulite::sin, &wide),
        ("cos", lazulite::cos, &wide),
        ("tan", lazulite::tan, &wide),
        ("arcsin", lazulite::arcsin, &unit),
        ("arccos", lazulite::arccos, &unit),
        ("arctan", lazulite::arctan, &wide),
        ("sinh", lazulite::sinh, &wide),
        ("cosh", lazulite::cosh, &wide),
        ("tanh", lazulite::tanh, &wide),
        ("sigmoid", lazulite::sigmoid, &wide),
        ("erf", lazulite::erf, &wide),
        ("floor", lazulite::floor, &wide),
        ("ceil", lazulite::ceil, &wide),
        ("round", |a| lazulite::round(a, 0), &wide),
        ("trunc", lazulite::trunc, &wide),
    ];
    for (name, op, x) in unary {
        bench.run(&format!("{name} 10M f32"), 7, || op(x))?;
    }

    let m = 4096;
    let square = array(m * m, &[m, m], -3.0, 3.0, 6)?;
    let row = array(m, &[1, m], -3.0, 3.0, 7)?;
    let column = array(m, &[m, 1], 0.5, 3.0, 8)?;
    bench.run("add 10M f32", 7, || lazulite::add(&wide, &positive))?;
    bench.run("multiply 10M f32", 7, || {
        lazulite::multiply(&wide, &positive)
    })?;
    bench.run("divide 10M f32", 7, || lazulite::divide(&wide, &positive))?;
    bench.run("maximum 10M f32", 7, || lazulite::maximum(&wide, &positive))?;
    bench.run("subtract 10M f32", 7, || {
        lazulite::subtract(&wide, &positive)
    })?;
    bench.run("minimum 10M f32", 7, || lazulite::minimum(&wide, &positive))?;
    bench.run("less 10M f32", 7, || lazulite::less(&wide, &positive))?;
    bench.run("equal 10M f32", 7, || lazulite::equal(&wide, &positive))?;
    let f64_a = lazulite::astype(
        &array(1_000_000, &[1000, 1000], -1.0, 1.0, 10)?,
        DType::Float64,
    )?;
    let f64_b = lazulite::astype(
        &array(1_000_000, &[1000, 1000], -1.0, 1.0, 11)?,
        DType::Float64,
    )?;
    eval(&[&f64_a, &f64_b])?;
    bench.run("multiply f64 1000^2", 7, || {
        lazulite::multiply(&f64_a, &f64_b)
    })?;
    bench.run("add f64 1000^2", 7, || lazulite::add(&f64_a, &f64_b))?;
    bench.run("add 4096^2 + row", 7, || lazulite::add(&square, &row))?;
    bench.run("multiply 4096^2 * column", 7, || {
        lazulite::multiply(&square, &column)
    })?;
    bench.run("add scalar 10M f32", 7, || lazulite::add(&wide, 1.0))?;
    bench.run("astype 10M f32->f16", 7, || {
        lazulite::astype(&wide, DType::Float16)
    })?;
    bench.run("astype 10M f32->i32", 7, || {
        lazulite::astype(&wide, DType::Int32)
    })?;
    bench.run("astype 10M f32->f64", 7, || {
        lazulite::astype(&wide, DType::Float64)
    })?;
    let wide_f16 = lazulite::astype(&wide, DType::Float16)?;
    eval(&[&wide_f16])?;
    bench.run("astype 10M f16->f32", 7, || {
        lazulite::astype(&wide_f16, DType::Float32)
    })?;

    bench.run("sum 10M", 7, || lazulite::sum(&wide, 0, false))?;
    bench.run("max 10M", 7, || lazulite::max(&wide, 0, false))?;
    bench.run("argmax 10M", 7, || lazulite::argmax(&wide, Some(0), false))?;
    for axis in [0, 1] {
        bench.run(&format!("sum 4096^2 axis {axis}"), 7, || {
            lazulite::sum(&square, axis, false)
        })?;
        bench.run(&format!("max 4096^2 axis {axis}"), 7, || {
            lazulite::max(&square, axis, false)
        })?;
        bench.run(&format!("argmax 4096^2 axis {axis}"), 7, || {
            lazulite::argmax(&square, Some(axis), false)
        })?;
    }
    bench.run("softmax rows 4096^2", 7, || {
        lazulite::softmax(&square, -1, false)
    })?;
    bench.run("logsumexp rows 4096^2", 7, || {
        lazulite::logsumexp(&square, -1, false)
    })?;
    bench.run("chain 10M f32", 7, || {
        let y = lazulite::log(&lazulite::add(&positive, &positive)?)?;
        let y = lazulite::cos(&lazulite::negative(&lazulite::sin(&y)?)?)?;
        let y = lazulite::sinh(&lazulite::abs(&y)?)?;
        lazulite::arctan(&lazulite::round(&y, 0)?)
    })?;
    let chain = lazulite::compile(|x: &[Array]| {
        let y = lazulite::log(&lazulite::add(&x[0], &x[0])?)?;
        let y = lazulite::cos(&lazulite::negative(&lazulite::sin(&y)?)?)?;
        let y = lazulite::sinh(&lazulite::abs(&y)?)?;
        Ok(vec![lazulite::arctan(&lazulite::round(&y, 0)?)?])
    });
    bench.run("chain 10M f32 compiled", 7, || {
        Ok(chain.call(std::slice::from_ref(&positive))?.remove(0))
    })?;
    bench.run("transpose + add 4096^2", 7, || {
        lazulite::add(&lazulite::transpose(&square, &[1, 0])?, &square)
    })?;
    bench.run("copy transpose 4096^2", 7, || {
        lazulite::contiguous(&lazulite::transpose(&square, &[1, 0])?, false)
    })?;
    bench.run("cumsum 10M", 7, || {
        lazulite::cumsum(&wide, Some(0), false, true, None)
    })?;
    for axis in [0, 1] {
        bench.run(&format!("cumsum 4096^2 axis {axis}"), 7, || {
            lazulite::cumsum(&square, Some(axis), false, true, None)
        })?;
    }
    let million = array(1_000_000, &[1_000_000], -3.0, 3.0, 9)?;
    bench.run("sort 1M", 7, || lazulite::sort(&million, Some(0)))?;
    bench.run("argsort 1M", 7, || lazulite::argsort(&million, Some(0)))?;

    let scalar = Array::from_slice(&[1.0f32], &[])?;
    bench.run("10000 chained scalar adds", 5, || {
        let mut y = scalar.clone();
        for _ in 0..10_000 {
            y = lazulite::add(&y, 1.0)?;
        }
        Ok(y)
    })?;
    if bench
        .filter
        .as_ref()
        .is_none_or(|f| "per-op overhead".contains(f.as_str()))
    {
        let calls = 100_000;
        let mut wall = Vec::new();
        let mut cpu = Vec::new();
        for _ in 0..5 {
            let (start, start_cpu) = (Instant::now(), thread_cpu_ns());
            for _ in 0..calls {
                let y = lazulite::add(&scalar, 1.0)?;
                eval(&[&y])?;
            }
            wall.push(start.elapsed().as_secs_f64() * 1e6 / calls as f64);
            if let (Some(a), Some(b)) = (start_cpu, thread_cpu_ns()) {
                cpu.push((b - a) as f64 / 1e3 / calls as f64);
            }
        }
        wall.sort_by(f64::total_cmp);
        cpu.sort_by(f64::total_cmp);
        println!("{:32} {:10.3} us", "per-op overhead (x + 1, eval)", wall[2]);
        if let Some(cpu) = cpu.get(2) {
            println!("{:32} {:10.3} us", "  the same in CPU time", cpu);
        }
    }
    Ok(())
}
