//! Loads a 1 GB `.safetensors` file (16 float32 tensors of 64 MB) and first-uses one
//! tensor (its sum): time and peak memory. `tools/io/bench_load.py` does the same with
//! `safetensors.numpy.load_file` (and with lazy `safe_open`) on the same file.
//!
//! Run with `cargo run --release --example bench_load [path]`; the file is created at
//! `path` (default `/tmp/lazulite_bench_1g.safetensors`) when missing. Each number is one
//! run in a fresh process; run it twice for warm page-cache numbers.

use lazulite::{arange, get_peak_memory, load, save_safetensors, sum, Axes, DType, Result};
use std::time::Instant;

const TENSORS: usize = 16;
const ELEMENTS: usize = 16 << 20; // 64 MB of float32

/// Peak resident memory of this process in MB (Linux `VmHWM`).
fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn main() -> Result<()> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "/tmp/lazulite_bench_1g.safetensors".into());
    if !std::path::Path::new(&path).exists() {
        let started = Instant::now();
        let tensors = (0..TENSORS)
            .map(|i| {
                let t = arange(i as f64, (i + ELEMENTS) as f64, 1.0, DType::Float32)?;
                Ok((format!("t{i:02}"), t))
            })
            .collect::<Result<Vec<_>>>()?;
        save_safetensors(&path, tensors, None)?;
        println!(
            "wrote {path} in {:.2} s (run again for a fresh process)",
            started.elapsed().as_secs_f64()
        );
        return Ok(());
    }
    let rss_before = peak_rss_mb();
    let started = Instant::now();
    let arrays = load(&path, None, false)?.into_arrays()?;
    let loaded = started.elapsed();
    let total = sum(&arrays["t03"], Axes::All, false)?.item::<f64>()?;
    let used = started.elapsed();
    println!(
        "lazulite load: {:.3} ms; load + sum of one 64 MB tensor: {:.1} ms (sum {total:.6e}); \
         peak RSS {:.0} MB (process start {:.0} MB); lazulite peak allocations {:.1} MB",
        loaded.as_secs_f64() * 1e3,
        used.as_secs_f64() * 1e3,
        peak_rss_mb(),
        rss_before,
        get_peak_memory() as f64 / (1 << 20) as f64,
    );
    Ok(())
}
