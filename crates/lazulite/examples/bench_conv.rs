//! conv2d timings (N=8, 64x64x64 -> 64 channels, 3x3, padding 1): forward, and the
//! gradient with respect to input and weight. Run:
//! `cargo run --release -p lazulite --example bench_conv`.

use lazulite::{conv2d, grad, random, sum, Array, Axes, Result};
use std::time::Instant;

fn median_ms(runs: usize, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    f()?;
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        f()?;
        times.push(start.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[runs / 2])
}

fn main() -> Result<()> {
    let f32 = lazulite::DType::Float32;
    let x = random::uniform(-1.0, 1.0, &[8, 64, 64, 64], f32, Some(&random::key(1)))?;
    let w = random::uniform(-0.1, 0.1, &[64, 3, 3, 64], f32, Some(&random::key(2)))?;
    lazulite::eval(&[&x, &w])?;
    let forward = median_ms(5, || conv2d(&x, &w, [1, 1], [1, 1], [1, 1], 1)?.eval())?;
    println!("conv2d forward: {forward:.1} ms");
    let loss = |p: &Vec<Array>| {
        let y = conv2d(&p[0], &p[1], [1, 1], [1, 1], [1, 1], 1)?;
        sum(&(&y * &y), Axes::All, false)
    };
    let g = grad(loss);
    let params = vec![x.clone(), w.clone()];
    let backward = median_ms(3, || {
        let gs = g(&params)?;
        lazulite::eval(&gs.iter().collect::<Vec<_>>())
    })?;
    println!("conv2d grad (x, w): {backward:.1} ms");
    Ok(())
}
