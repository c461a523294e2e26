//! Kernel timing: between [`start_profile`] and [`stop_profile`], evaluation times every
//! kernel it runs and adds the time to one row per primitive and output shapes, on every
//! thread (the evaluation thread of `async_eval` too). Off, it costs one atomic load per
//! node evaluated.

use crate::dtype::DType;
use crate::primitive::OutputSpec;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Time spent in the kernels of one primitive for one set of output shapes and dtypes,
/// summed over the calls a profile saw.
///
/// ```
/// use lazulite::{eval, start_profile, stop_profile, Array};
/// let a = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
/// start_profile();
/// eval(&[&(&a + 1.0)]).unwrap();
/// let rows = stop_profile();
/// let add = rows.iter().find(|r| r.primitive == "add").unwrap();
/// assert_eq!((add.calls, add.outputs[0].0.as_slice()), (1, &[3][..]));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct KernelTime {
    /// The primitive's name, as graph printing shows it (`"matmul"`, `"add"`, ...).
    pub primitive: &'static str,
    /// The shape and dtype of each output.
    pub outputs: Vec<(Vec<usize>, DType)>,
    /// How many times the kernel ran.
    pub calls: u64,
    /// Total time in the kernel.
    pub time: Duration,
}

type Key = (&'static str, Vec<(Vec<usize>, DType)>);

static ON: AtomicBool = AtomicBool::new(false);
static ROWS: Mutex<Option<HashMap<Key, (u64, Duration)>>> = Mutex::new(None);

/// Starts timing each kernel evaluation runs, from an empty table (rows of an earlier
/// profile not stopped are dropped).
///
/// ```
/// use lazulite::{eval, start_profile, stop_profile, Array};
/// let a = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
/// start_profile();
/// eval(&[&a.matmul(&a).unwrap()]).unwrap();
/// assert_eq!(stop_profile()[0].primitive, "matmul");
/// ```
pub fn start_profile() {
    *rows() = Some(HashMap::new());
    ON.store(true, Ordering::Release);
}

/// Stops timing and returns what was timed since [`start_profile`], the row with the most
/// time first; empty if no profile ran.
///
/// ```
/// use lazulite::{eval, start_profile, stop_profile, Array};
/// let a = Array::from_slice(&[1.0f32, -2.0], &[2]).unwrap();
/// start_profile();
/// eval(&[&lazulite::abs(&a).unwrap()]).unwrap();
/// let rows = stop_profile();
/// assert_eq!(rows.len(), 1);
/// assert!(stop_profile().is_empty());
/// ```
pub fn stop_profile() -> Vec<KernelTime> {
    ON.store(false, Ordering::Release);
    let table = rows().take().unwrap_or_default();
    let mut out: Vec<KernelTime> = table
        .into_iter()
        .map(|((primitive, outputs), (calls, time))| KernelTime {
            primitive,
            outputs,
            calls,
            time,
        })
        .collect();
    out.sort_by_key(|row| std::cmp::Reverse(row.time));
    out
}

/// When a profile runs, the moment a kernel starts.
pub(super) fn timer() -> Option<Instant> {
    ON.load(Ordering::Relaxed).then(Instant::now)
}

/// Adds a kernel's `time` to its row.
pub(super) fn record(primitive: &'static str, outputs: &[OutputSpec], time: Duration) {
    let key = (
        primitive,
        outputs.iter().map(|o| (o.shape.clone(), o.dtype)).collect(),
    );
    // A profile stopped while this kernel ran has no table: the time is dropped.
    if let Some(table) = rows().as_mut() {
        let row = table.entry(key).or_insert((0, Duration::ZERO));
        row.0 += 1;
        row.1 += time;
    }
}

fn rows() -> std::sync::MutexGuard<'static, Option<HashMap<Key, (u64, Duration)>>> {
    ROWS.lock().unwrap_or_else(|e| e.into_inner())
}
