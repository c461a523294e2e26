//! Times `quantized_matmul` against a float32 `matmul` with the same weights and against
//! `dequantize` followed by `matmul`, for a vector (token generation) and for batches of
//! rows (prompt processing), and prints median milliseconds.
//!
//! Run with `cargo run --release --example bench_quantized`.

use lazulite::{
    dequantize, eval, matmul, matrix_transpose, quantize, quantized_matmul, random, Array, DType,
    Result,
};
use std::time::Instant;

fn median_ms(runs: usize, mut work: impl FnMut() -> Result<Array>) -> Result<f64> {
    eval(&[&work()?])?;
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            let out = work()?;
            eval(&[&out])?;
            Ok(start.elapsed().as_secs_f64() * 1e3)
        })
        .collect::<Result<_>>()?;
    times.sort_by(|a, b| a.total_cmp(b));
    Ok(times[times.len() / 2])
}

fn main() -> Result<()> {
    let (n, k) = (4096, 4096);
    let w = random::normal(&[n, k], DType::Float32, None, None, None)?;
    let wt = matrix_transpose(&w)?;
    eval(&[&w])?;
    println!("W {n}x{k}: ms (median)");
    println!(
        "{:>6} {:>5} {:>12} {:>12} {:>16}",
        "rows", "bits", "quantized", "f32 matmul", "dequant+matmul"
    );
    for bits in [4, 8] {
        let (w_q, s, b) = quantize(&w, 64, bits)?;
        eval(&[&w_q, &s, &b])?;
        for m in [1, 4, 16, 128] {
            let x = random::normal(&[m, k], DType::Float32, None, None, None)?;
            eval(&[&x])?;
            let runs = if m >= 128 { 10 } else { 30 };
            let q = median_ms(runs, || quantized_matmul(&x, &w_q, &s, &b, true, 64, bits))?;
            let f = median_ms(runs, || matmul(&x, &wt))?;
            let d = median_ms(runs, || {
                matmul(
                    &x,
                    &matrix_transpose(&dequantize(&w_q, &s, &b, 64, bits, None)?)?,
                )
            })?;
            println!("{m:>6} {bits:>5} {q:>12.3} {f:>12.3} {d:>16.3}");
        }
    }
    Ok(())
}
