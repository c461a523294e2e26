//! Fuzzing the file readers on stable Rust, in CI: every seed of `fuzz/corpus/<target>/`
//! and a fixed set of deterministic mutations of it (bit flips, random bytes,
//! truncations, length fields overwritten with huge values, splices with other seeds,
//! duplicated and inserted chunks) are loaded from memory with metadata and every array
//! is evaluated. Errors are fine; a panic fails the test, and so does any allocation
//! larger than `HUGE` or a heap that grows past `HEAP_LIMIT` while one input is read
//! (a reader that trusted a size in a header). The coverage-guided fuzzers are the
//! cargo-fuzz targets in `fuzz/` (nightly; see docs/fuzzing.md).

use lazulite::export::{import_function_bytes, Kwargs};
use lazulite::{load_bytes, DType, Loaded};
use std::alloc::{GlobalAlloc, Layout, System};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Any single allocation above this is a reader trusting a size from the file.
const HUGE: usize = 1 << 30;
/// Heap growth allowed while reading one input (seeds are a few kB; arrays they can
/// describe within their bytes are small).
const HEAP_LIMIT: usize = 64 << 20;
/// Mutations of each seed.
const MUTATIONS: usize = 4000;
/// Stop early (and say so) rather than run long on a slow machine.
const BUDGET: Duration = Duration::from_secs(15);

/// The system allocator, counting live bytes and their peak, refusing huge requests.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > HUGE {
            eprintln!("io_fuzz: refused an allocation of {} bytes", layout.size());
            return std::ptr::null_mut();
        }
        let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(live, Ordering::Relaxed);
        // SAFETY: forwarded as given.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded as given.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// splitmix64: small, deterministic, good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// A position, biased towards the start where the headers are.
    fn position(&mut self, len: usize) -> usize {
        if self.next().is_multiple_of(2) {
            self.below(len.min(256))
        } else {
            self.below(len)
        }
    }
}

/// Values that break naive size arithmetic.
const HUGE_VALUES: [u64; 8] = [
    u64::MAX,
    u64::MAX / 2,
    1 << 63,
    1 << 40,
    u32::MAX as u64,
    i32::MAX as u64,
    0x8000_0001,
    0,
];

fn mutate(rng: &mut Rng, seed: &[u8], others: &[Vec<u8>]) -> Vec<u8> {
    let mut data = seed.to_vec();
    let rounds = 1 + rng.below(3);
    for _ in 0..rounds {
        if data.is_empty() {
            data.push(rng.next() as u8);
            continue;
        }
        let at = rng.position(data.len());
        match rng.below(8) {
            0 => data[at] ^= 1 << rng.below(8),
            1 => data[at] = rng.next() as u8,
            2 => data.truncate(rng.below(data.len())),
            3 | 4 => {
                let value = HUGE_VALUES[rng.below(HUGE_VALUES.len())];
                let width = [2, 4, 8][rng.below(3)];
                let bytes = value.to_le_bytes();
                for (k, b) in bytes[..width].iter().enumerate() {
                    if let Some(slot) = data.get_mut(at + k) {
                        *slot = *b;
                    }
                }
            }
            5 => {
                let other = &others[rng.below(others.len())];
                let from = rng.below(other.len());
                data.truncate(at);
                data.extend_from_slice(&other[from..]);
            }
            6 => {
                let end = (at + 1 + rng.below(64)).min(data.len());
                let chunk = data[at..end].to_vec();
                data.splice(at..at, chunk);
            }
            _ => {
                let n = 1 + rng.below(16);
                let bytes: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
                data.splice(at..at, bytes);
            }
        }
    }
    data
}

/// Imports `data` as an MLX function file and runs every trace on zeros of its
/// signature; whether all of it worked.
fn import(data: Vec<u8>) -> bool {
    let Ok(f) = import_function_bytes(data) else {
        return false;
    };
    f.signatures().iter().all(|s| {
        let zeros = |(shape, dtype): &(Vec<usize>, DType)| lazulite::zeros(shape, *dtype);
        let Ok(mut inputs) = s.inputs.iter().map(zeros).collect::<Result<Vec<_>, _>>() else {
            return false;
        };
        let kw_values = inputs.split_off(inputs.len() - s.kwarg_keys.len());
        let kwargs: Kwargs = s.kwarg_keys.iter().cloned().zip(kw_values).collect();
        f.call(&inputs, &kwargs)
            .is_ok_and(|outs| outs.iter().all(|a| a.eval().is_ok()))
    })
}

/// Loads `data` as `format` and evaluates every array; whether it loaded.
fn read(data: Vec<u8>, format: &str) -> bool {
    if format == "mlxfn" {
        return import(data);
    }
    let metadata = format == "safetensors" || format == "gguf";
    let arrays = match load_bytes(data, format, metadata) {
        Ok(Loaded::Array(a)) => vec![a],
        Ok(Loaded::Arrays(m)) | Ok(Loaded::WithMetadata(m, _)) => m.into_values().collect(),
        Err(_) => return false,
    };
    arrays.iter().all(|a| a.eval().is_ok())
}

fn seeds(target: &str) -> Vec<Vec<u8>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files.iter().map(|f| std::fs::read(f).unwrap()).collect()
}

fn fuzz(target: &str, format: &str) {
    lazulite::set_allocation_limit(HEAP_LIMIT);
    let seeds = seeds(target);
    assert!(!seeds.is_empty(), "no seeds for {target}");
    let start = Instant::now();
    let budget = BUDGET / 5;
    let mut rng = Rng(0x1a2u64 ^ format.len() as u64);
    let (mut cases, mut loaded) = (0, 0);
    for (i, seed) in seeds.iter().enumerate() {
        assert!(
            read(seed.clone(), format),
            "seed {i} of {target} does not load"
        );
        for m in 0..MUTATIONS {
            if start.elapsed() > budget {
                eprintln!("{target}: time budget reached after {cases} cases");
                return;
            }
            let data = mutate(&mut rng, seed, &seeds);
            let baseline = LIVE.load(Ordering::Relaxed);
            PEAK.store(baseline, Ordering::Relaxed);
            let input = data.clone();
            let outcome = catch_unwind(AssertUnwindSafe(|| read(input, format)));
            let grew = PEAK.load(Ordering::Relaxed).saturating_sub(baseline);
            let Ok(ok) = outcome else {
                let path = std::env::temp_dir().join(format!("io_fuzz_crash_{target}_{i}_{m}"));
                std::fs::write(&path, &data).unwrap();
                panic!(
                    "{target}: reading mutation {m} of seed {i} panicked (input saved to {})",
                    path.display()
                );
            };
            assert!(
                grew <= HEAP_LIMIT + 2 * data.len(),
                "{target}: mutation {m} of seed {i} grew the heap by {grew} bytes"
            );
            cases += 1;
            loaded += ok as usize;
        }
    }
    eprintln!(
        "{target}: {cases} mutated inputs ({loaded} still loaded) in {:?}",
        start.elapsed()
    );
}

/// One test, the formats in turn: the heap counters are process-wide.
#[test]
fn every_reader_survives_mutations() {
    fuzz("load_npy", "npy");
    fuzz("load_npz", "npz");
    fuzz("load_safetensors", "safetensors");
    fuzz("load_gguf", "gguf");
    fuzz("import_function", "mlxfn");
}
