//! f32 matrix product throughput (GFLOP/s) at 512, 1024 and 2048, contiguous and with a
//! transposed first operand. Not a test; run in release mode:
//!
//! ```sh
//! cargo run --release --example bench_matmul
//! ```

use lazulite::{matmul, Array};
use std::time::Instant;

fn random_matrix(n: usize, seed: u64) -> Array {
    let mut state = seed;
    let data: Vec<f32> = (0..n * n)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        })
        .collect();
    Array::from_slice(&data, &[n, n]).expect("square matrix")
}

/// Best time of `reps` products, after one warm-up product.
fn best_seconds(a: &Array, b: &Array, reps: usize) -> f64 {
    matmul(a, b).and_then(|p| p.eval()).expect("warm-up");
    (0..reps)
        .map(|_| {
            let start = Instant::now();
            matmul(a, b).and_then(|p| p.eval()).expect("product");
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    println!("{:>6} {:>12} {:>16}", "n", "GFLOP/s", "GFLOP/s (a.T)");
    for n in [512, 1024, 2048] {
        let (a, b) = (random_matrix(n, 1), random_matrix(n, 2));
        let at = a.t().expect("transpose");
        let reps = if n == 2048 { 5 } else { 10 };
        let flops = 2.0 * (n as f64).powi(3);
        let plain = flops / best_seconds(&a, &b, reps) / 1e9;
        let transposed = flops / best_seconds(&at, &b, reps) / 1e9;
        println!("{n:>6} {plain:>12.1} {transposed:>16.1}");
    }
}
