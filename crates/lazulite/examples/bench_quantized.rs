//! Times `quantized_matmul` against a float32 `matmul` with the same weights and against
//! `dequantize` followed by `matmul`, for a vector (token generation) and for batches of
//! rows (prompt processing), and prints median milliseconds, for affine quantization at 4
//! and 8 bits and the floating-point modes; then `x @ W.T` with the weights in float32,
//! bfloat16 and float16.
//!
//! Run with `cargo run --release --example bench_quantized`.

use lazulite::{
    dequantize, eval, matmul, matrix_transpose, quantize, quantized_matmul, random, Array, DType,
    Quantization, QuantizationMode, Result,
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
        "rows", "mode", "quantized", "f32 matmul", "dequant+matmul"
    );
    let modes = [
        Quantization::affine(64, 4),
        Quantization::affine(64, 8),
        Quantization::new(QuantizationMode::Mxfp4),
        Quantization::new(QuantizationMode::Mxfp8),
        Quantization::new(QuantizationMode::Nvfp4),
    ];
    for q in modes {
        let (w_q, s, b) = quantize(&w, q, None)?;
        let b = b.as_ref();
        eval(&[&w_q, &s])?;
        let name = match q.mode {
            QuantizationMode::Affine => format!("a{}", q.bits),
            mode => mode.to_string(),
        };
        let dtype = Some(DType::Float32);
        for m in [1, 4, 16, 128] {
            let x = random::normal(&[m, k], DType::Float32, None, None, None)?;
            eval(&[&x])?;
            let runs = if m >= 128 { 10 } else { 30 };
            let t = median_ms(runs, || quantized_matmul(&x, &w_q, &s, b, true, q))?;
            let f = median_ms(runs, || matmul(&x, &wt))?;
            let d = median_ms(runs, || {
                matmul(
                    &x,
                    &matrix_transpose(&dequantize(&w_q, &s, b, q, None, dtype)?)?,
                )
            })?;
            println!("{m:>6} {name:>5} {t:>12.3} {f:>12.3} {d:>16.3}");
        }
    }
    println!("x @ W.T, W {n}x{k}: ms (median)");
    println!(
        "{:>6} {:>10} {:>10} {:>10}",
        "rows", "float32", "bfloat16", "float16"
    );
    let halves = [
        w.astype(DType::BFloat16)?.t()?,
        w.astype(DType::Float16)?.t()?,
    ];
    for m in [1, 4, 16, 128] {
        let x = random::normal(&[m, k], DType::Float32, None, None, None)?;
        let runs = if m >= 128 { 10 } else { 30 };
        let f = median_ms(runs, || matmul(&x, &wt))?;
        let mut row = format!("{m:>6} {f:>10.3}");
        for wh in &halves {
            let xh = x.astype(wh.dtype())?;
            eval(&[&xh, wh])?;
            row += &format!(" {:>10.3}", median_ms(runs, || matmul(&xh, wh))?);
        }
        println!("{row}");
    }
    Ok(())
}
