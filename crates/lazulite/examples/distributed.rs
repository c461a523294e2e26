//! Data-parallel gradient descent from Rust: each process takes its share of the batch,
//! the gradients are summed over the processes with `all_sum`, and every process applies
//! the same update. The result is checked against the full batch on one process.
//!
//! ```sh
//! cargo run --example distributed                       # one process
//! cargo build --example distributed
//! mpirun -n 4 target/debug/examples/distributed         # four
//! ```

use lazulite::distributed;
use lazulite::{grad, matmul, mean, square, Array, Axes, DType, Result};

/// The global batch: 64 examples of a noiseless linear map, the same on every process.
fn batch() -> Result<(Array, Array)> {
    let x: Vec<f32> = (0..64 * 3)
        .map(|i| ((i * 37 % 101) as f32 / 50.0) - 1.0)
        .collect();
    let x = Array::from_slice(&x, &[64, 3])?;
    let w_true = Array::from_slice(&[0.5f32, -2.0, 1.5], &[3, 1])?;
    let y = matmul(&x, &w_true)?;
    Ok((x, y))
}

fn loss(w: &Array, x: &Array, y: &Array) -> Result<Array> {
    mean(&square(&(&matmul(x, w)? - y))?, Axes::All, false)
}

/// `steps` of gradient descent on share `rank` of `processes` equal shares of the batch;
/// `average` turns this share's gradient into the mean over the shares.
fn train(
    x: &Array,
    y: &Array,
    (rank, processes): (usize, usize),
    average: impl Fn(&Array) -> Result<Array>,
    steps: usize,
) -> Result<Array> {
    let rows = x.shape()[0] / processes;
    let (start, stop) = ((rank * rows) as i64, ((rank + 1) * rows) as i64);
    let xs = lazulite::slice(x, &[start, 0], &[stop, 3], &[1, 1])?;
    let ys = lazulite::slice(y, &[start, 0], &[stop, 1], &[1, 1])?;
    let mut w = Array::zeros(&[3, 1], DType::Float32)?;
    for _ in 0..steps {
        let g = grad(|w: &Array| loss(w, &xs, &ys))(&w)?;
        w = &w - &(&average(&g)? * 0.3f32);
        w.eval()?;
    }
    Ok(w)
}

fn main() -> Result<()> {
    let group = distributed::init(false, "any")?;
    let (x, y) = batch()?;
    let n = group.size();
    // Each share's loss is a mean over its rows: the mean of the shares' gradients is the
    // full batch's gradient.
    let average = |g: &Array| Ok(&distributed::all_sum(g, Some(&group))? / n as f32);
    let w = train(&x, &y, (group.rank(), n), average, 100)?;
    let reference = train(&x, &y, (0, 1), |g| Ok(g.clone()), 100)?.to_vec::<f32>()?;
    let got = w.to_vec::<f32>()?;
    let worst = got
        .iter()
        .zip(&reference)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    println!(
        "process {} of {}: w = {got:?}, largest difference from one process {worst:e}",
        group.rank(),
        group.size()
    );
    if worst > 1e-5 {
        return Err(lazulite::Error::runtime(format!(
            "data-parallel training diverged from the single-process result by {worst}"
        )));
    }
    Ok(())
}
