//! Times each unary op on 10M float32 through the public API (record + eval, median of 7
//! runs) and prints milliseconds. `tools/simd/bench_unary_numpy.py` prints NumPy's times
//! for the same ops and inputs. `LAZULITE_SIMD=scalar|avx2|avx512` picks the kernel path.
//!
//! Run with `cargo run --release --example bench_unary`.

use lazulite::{eval, Array, Result};
use std::time::Instant;

const N: usize = 10_000_000;
const RUNS: usize = 7;

type Op = fn(&Array) -> Result<Array>;

/// `N` values uniform in [lo, hi) from a fixed-seed generator.
fn uniform(lo: f32, hi: f32, seed: u64) -> Result<Array> {
    let mut state = seed;
    let data: Vec<f32> = (0..N)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let unit = (state >> 40) as f32 / (1u64 << 24) as f32;
            lo + (hi - lo) * unit
        })
        .collect();
    Array::from_slice(&data, &[N])
}

fn median_ms(op: Op, x: &Array) -> Result<f64> {
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let start = Instant::now();
        let y = op(x)?;
        eval(&[&y])?;
        times.push(start.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[RUNS / 2])
}

fn main() -> Result<()> {
    let wide = uniform(-3.0, 3.0, 1)?;
    let positive = uniform(0.01, 10.0, 2)?;
    let unit = uniform(-0.99, 0.99, 3)?;
    let above_one = uniform(1.0, 10.0, 4)?;
    let ops: [(&str, Op, &Array); 32] = [
        ("exp", lazulite::exp, &wide),
        ("expm1", lazulite::expm1, &wide),
        ("log", lazulite::log, &positive),
        ("log1p", lazulite::log1p, &positive),
        ("log2", lazulite::log2, &positive),
        ("log10", lazulite::log10, &positive),
        ("sin", lazulite::sin, &wide),
        ("cos", lazulite::cos, &wide),
        ("tan", lazulite::tan, &wide),
        ("tanh", lazulite::tanh, &wide),
        ("sinh", lazulite::sinh, &wide),
        ("cosh", lazulite::cosh, &wide),
        ("arctan", lazulite::arctan, &wide),
        ("arcsin", lazulite::arcsin, &unit),
        ("arccos", lazulite::arccos, &unit),
        ("arcsinh", lazulite::arcsinh, &wide),
        ("arccosh", lazulite::arccosh, &above_one),
        ("arctanh", lazulite::arctanh, &unit),
        ("sigmoid", lazulite::sigmoid, &wide),
        ("sqrt", lazulite::sqrt, &positive),
        ("rsqrt", lazulite::rsqrt, &positive),
        ("floor", lazulite::floor, &wide),
        ("ceil", lazulite::ceil, &wide),
        ("round", |a| lazulite::round(a, 0), &wide),
        ("trunc", lazulite::trunc, &wide),
        ("abs", lazulite::abs, &wide),
        ("negative", lazulite::negative, &wide),
        ("square", lazulite::square, &wide),
        ("erf", lazulite::erf, &wide),
        ("erfinv", lazulite::erfinv, &unit),
        ("sign", lazulite::sign, &wide),
        ("reciprocal", lazulite::reciprocal, &positive),
    ];
    println!("unary ops on {N} float32, median of {RUNS} runs");
    for (name, op, x) in ops {
        println!("{name:10} {:8.2} ms", median_ms(op, x)?);
    }
    Ok(())
}
