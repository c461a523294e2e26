//! The lazulite demo: lazy evaluation, gradients, vectorisation and dataflow on real
//! computations.
//!
//! Run with `bash scripts/demo.sh` (or `cargo run --release --example demo`).

use lazulite::{
    compile, eval, get_peak_memory, grad, placeholder, random, reset_peak_memory, to_trace,
    value_and_grad, vmap, Array, Axes, DType, Result,
};
use std::collections::BTreeMap;
use std::time::Instant;

fn section(title: &str) {
    println!("\n== {title}");
}

fn chain_eager(x: &Array) -> Result<Array> {
    let y = (x + x).log()?.sin()?.negative()?.cos()?.abs()?.sinh()?;
    lazulite::round(&y, 0)?.arctan()
}

fn main() -> Result<()> {
    println!("lazulite demo");

    section("Lazy evaluation: build a graph, compute only what is used");
    let x = lazulite::linspace(0.0, std::f64::consts::TAU, 1_000_000, true, DType::Float32)?;
    let t = Instant::now();
    let identity = lazulite::add(&x.sin()?.square()?, &x.cos()?.square()?)?;
    let unused = identity.exp()?.log()?.sinh()?;
    println!(
        "recorded sin²+cos² over 1M points in {:?}; evaluated? {}",
        t.elapsed(),
        identity.is_evaluated()
    );
    let t = Instant::now();
    let worst = lazulite::max(&lazulite::abs(&(&identity - 1.0))?, Axes::All, false)?;
    println!(
        "max |sin²+cos²-1| = {:e} (computed in {:?}); the branch nobody asked for evaluated? {}",
        worst.item::<f32>()?,
        t.elapsed(),
        unused.is_evaluated()
    );

    section("Gradients: fit a linear model with value_and_grad");
    let key = random::key(0);
    let keys = random::split(&key, 3)?;
    let k = |i: i64| lazulite::slice(&keys, &[i, 0], &[i + 1, 2], &[1, 1])?.reshape(&[2]);
    let features = random::normal(&[512, 3], DType::Float32, None, None, Some(&k(0)?))?;
    let true_w = Array::from_slice(&[2.0f32, -3.0, 0.5], &[3, 1])?;
    let noise = random::normal(
        &[512, 1],
        DType::Float32,
        None,
        Some(0.01.into()),
        Some(&k(1)?),
    )?;
    let targets = lazulite::add(&lazulite::matmul(&features, &true_w)?, &noise)?;
    let loss_fn = |p: &BTreeMap<String, Array>| -> Result<Array> {
        let pred = lazulite::add(&lazulite::matmul(&features, &p["w"])?, &p["b"])?;
        lazulite::mean(
            &lazulite::square(&lazulite::subtract(&pred, &targets)?)?,
            Axes::All,
            false,
        )
    };
    let step = value_and_grad(loss_fn);
    let mut params = BTreeMap::from([
        ("w".to_string(), lazulite::zeros(&[3, 1], DType::Float32)?),
        ("b".to_string(), lazulite::zeros(&[1], DType::Float32)?),
    ]);
    let t = Instant::now();
    for i in 0..200 {
        let (loss, grads) = step(&params)?;
        for (name, g) in &grads {
            let p = params.get_mut(name).expect("same keys");
            *p = lazulite::subtract(&*p, &(g * 0.1))?;
        }
        let leaves: Vec<&Array> = params.values().chain(std::iter::once(&loss)).collect();
        eval(&leaves)?;
        if i % 50 == 0 || i == 199 {
            println!("step {i:3}: loss {:.6}", loss.item::<f32>()?);
        }
    }
    println!(
        "learned w = {:?} (true [2, -3, 0.5]) in {:?}",
        params["w"].to_vec::<f32>()?,
        t.elapsed()
    );

    section("Higher-order derivatives compose: d²/dx² tanh and Newton's method");
    let d2 = grad(grad(|x: &Array| x.tanh()));
    let at = Array::scalar(0.5f64);
    let exact = -2.0 * 0.5f64.tanh() * (1.0 - 0.5f64.tanh().powi(2));
    println!(
        "d²tanh/dx²(0.5) = {:.12} (exact {exact:.12})",
        d2(&at)?.item::<f64>()?
    );
    // Newton's method for cos(x) = x using grad.
    let f = |x: &Array| lazulite::subtract(&x.cos()?, x);
    let df = grad(move |x: &Array| f(x));
    let mut root = Array::scalar(1.0f64);
    for _ in 0..6 {
        root = lazulite::subtract(&root, &lazulite::divide(&f(&root)?, &df(&root)?)?)?;
    }
    println!("fixed point of cos: {:.15}", root.item::<f64>()?);

    section("vmap: per-example gradients without a loop");
    let per_example_loss = |p: &[Array]| -> Result<Vec<Array>> {
        // p = [w, x_i, y_i]; loss_i = (x_i · w - y_i)^2
        let pred = lazulite::sum(&lazulite::multiply(&p[1], &p[0])?, Axes::All, false)?;
        Ok(vec![lazulite::square(&lazulite::subtract(&pred, &p[2])?)?])
    };
    let grad_w = move |p: &[Array]| -> Result<Vec<Array>> {
        let (_, g) = lazulite::value_and_grad_argnums(per_example_loss, p, &[0])?;
        Ok(g)
    };
    let per_example = vmap(grad_w, vec![None, Some(0), Some(0)], vec![Some(0)]);
    let w = Array::from_slice(&[1.0f32, 1.0, 1.0], &[3])?;
    let y = lazulite::reshape(&targets, &[-1])?;
    let t = Instant::now();
    let batched = per_example(&[w.clone(), features.clone(), y.clone()])?;
    eval(&[&batched[0]])?;
    let vmapped_time = t.elapsed();
    let t = Instant::now();
    let mut looped = Vec::new();
    for i in 0..512i64 {
        let xi = lazulite::slice(&features, &[i, 0], &[i + 1, 3], &[1, 1])?.reshape(&[3])?;
        let yi = lazulite::slice(&y, &[i], &[i + 1], &[1])?.reshape(&[])?;
        looped.push(grad_w(&[w.clone(), xi, yi])?.remove(0));
    }
    let looped = lazulite::stack(&looped, 0)?;
    eval(&[&looped])?;
    let loop_time = t.elapsed();
    println!(
        "per-example gradients {:?}: vmap {:?} vs Python-style loop {:?}; equal: {}",
        batched[0].shape(),
        vmapped_time,
        loop_time,
        lazulite::allclose(&batched[0], &looped, 1e-5, 1e-6, false)?.item::<bool>()?
    );

    section("Dataflow (Owl): placeholders, incremental re-evaluation, graph printing");
    let a = placeholder(&[1000, 1000], DType::Float64)?;
    let b = placeholder(&[], DType::Float64)?;
    let reduced = a.sin()?.cos()?.abs()?.log()?.sum(Axes::All, false)?;
    let c = lazulite::add(&b, &lazulite::multiply(&a, &reduced)?)?;
    drop(reduced);
    a.assign(&random::uniform(
        0.0,
        1.0,
        &[1000, 1000],
        DType::Float64,
        Some(&k(2)?),
    )?)?;
    b.assign(5.0)?;
    let t = Instant::now();
    c.eval()?;
    let full = t.elapsed();
    b.assign(6.0)?;
    let t = Instant::now();
    c.eval()?;
    let incremental = t.elapsed();
    println!("full evaluation {full:?}; after changing b only {incremental:?}");
    println!(
        "{}",
        to_trace(&[&c])
            .lines()
            .take(3)
            .collect::<Vec<_>>()
            .join("\n")
    );

    section("Constant memory: 1000 chained sin on a 4 MB array");
    let mut s = lazulite::arange(0.0, 1_000_000.0, 1.0, DType::Float32)?;
    s.eval()?;
    reset_peak_memory();
    let base = get_peak_memory();
    let t = Instant::now();
    for _ in 0..1000 {
        s = s.sin()?;
    }
    s.eval()?;
    println!(
        "done in {:?}; extra peak memory {:.1} MB for a {:.1} MB array",
        t.elapsed(),
        (get_peak_memory() - base) as f64 / 1e6,
        s.nbytes() as f64 / 1e6
    );

    section("compile: trace once, fuse the elementwise chain, replay");
    let chain = compile(|x: &[Array]| Ok(vec![chain_eager(&x[0])?]));
    let x = random::uniform(0.1, 3.0, &[4_000_000], DType::Float32, None)?;
    x.eval()?;
    let time = |run: &dyn Fn() -> Result<Array>| -> Result<(f64, Array)> {
        let mut best = f64::INFINITY;
        let mut last = None;
        for _ in 0..5 {
            let t = Instant::now();
            let y = run()?;
            y.eval()?;
            best = best.min(t.elapsed().as_secs_f64() * 1e3);
            last = Some(y);
        }
        Ok((best, last.expect("ran")))
    };
    let (eager_ms, eager) = time(&|| chain_eager(&x))?;
    let (compiled_ms, compiled) = time(&|| Ok(chain.call(std::slice::from_ref(&x))?.remove(0)))?;
    let same = lazulite::array_equal(&eager, &compiled, false)?.item::<bool>()?;
    println!(
        "atan(round(sinh(|cos(-sin(log(x+x)))|))) on 4M f32: eager {eager_ms:.1} ms, compiled \
         {compiled_ms:.1} ms ({} trace, results equal: {same})",
        chain.traces()
    );

    section("Printing like MLX");
    let m = Array::from_slice(&[1.0f32, 2.5, -3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    println!("{}", m.t()?);
    println!("{}", lazulite::arange(0.0, 10000.0, 1.0, DType::Int32)?);
    Ok(())
}
