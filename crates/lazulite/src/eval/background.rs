//! The evaluation thread behind [`async_eval`](super::async_eval): it computes queued
//! graphs in order while the caller goes on recording the next one, as MLX's stream
//! thread does. In a decode loop the host language records token `n + 1` while token `n`
//! is computed.
//!
//! Nothing waits on this thread for correctness: every node is locked while it runs, so a
//! node the caller needs is computed by whichever thread reaches it first. Waiting is for
//! speed only: reading an array that a queued job was asked for waits for that job rather
//! than computing the same graph alongside it. Graphs that hold a node that must run on the
//! caller's thread (see `Primitive::runs_on_caller`) or that depend on placeholders are
//! left to be evaluated when read.

use super::{run, schedule};
use crate::array::Array;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};

/// The queue shared by callers and the evaluation thread.
struct Queue {
    state: Mutex<QueueState>,
    changed: Condvar,
    /// The process that started the thread: a child made by `fork` has no such thread,
    /// so it neither queues nor waits.
    pid: u32,
}

#[derive(Default)]
struct QueueState {
    /// Jobs not finished yet, oldest (the running one) first.
    jobs: VecDeque<Job>,
    /// The number of the last job queued.
    queued: u64,
    /// The number of the last job finished.
    finished: u64,
}

struct Job {
    number: u64,
    targets: Vec<Array>,
}

/// How many jobs are queued or running: lets `eval` skip the queue's lock when none are.
static UNFINISHED: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Set on the evaluation thread, which never waits for its own jobs.
    static ON_EVALUATION_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, QueueState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The queue once its thread has started (`None` inside if it could not be).
static QUEUE: OnceLock<Option<&'static Queue>> = OnceLock::new();

/// The queue, with its thread started on first use; `None` if the thread cannot be
/// started (then `async_eval` evaluates before returning).
fn queue() -> Option<&'static Queue> {
    let queue = *QUEUE.get_or_init(|| {
        let queue: &'static Queue = Box::leak(Box::new(Queue {
            state: Mutex::default(),
            changed: Condvar::new(),
            pid: std::process::id(),
        }));
        let started = std::thread::Builder::new()
            .name("lazulite-eval".into())
            .spawn(move || work(queue))
            .is_ok();
        if started {
            drain_before_fork();
        }
        started.then_some(queue)
    });
    queue.filter(|q| q.pid == std::process::id())
}

/// Makes `fork` wait until the queue is empty: a child process has no evaluation thread,
/// and a node that thread was computing would stay locked in the child forever.
fn drain_before_fork() {
    #[cfg(unix)]
    {
        extern "C" fn drain() {
            if let Some(Some(queue)) = QUEUE.get() {
                let mut state = queue.lock();
                while state.finished < state.queued {
                    state = queue.changed.wait(state).unwrap_or_else(|e| e.into_inner());
                }
            }
        }
        extern "C" {
            fn pthread_atfork(
                prepare: Option<extern "C" fn()>,
                parent: Option<extern "C" fn()>,
                child: Option<extern "C" fn()>,
            ) -> std::ffi::c_int;
        }
        // SAFETY: registers a handler that takes only this module's lock; failing to
        // register (out of memory) leaves fork as it was.
        unsafe {
            pthread_atfork(Some(drain), None, None);
        }
    }
}

/// Queues `arrays` for the evaluation thread; `false` if there is none (the caller then
/// evaluates them itself).
pub(super) fn submit(arrays: &[&Array]) -> bool {
    let Some(queue) = queue() else {
        return false;
    };
    let mut state = queue.lock();
    state.queued += 1;
    let number = state.queued;
    state.jobs.push_back(Job {
        number,
        targets: arrays.iter().map(|&a| a.clone()).collect(),
    });
    UNFINISHED.fetch_add(1, Ordering::Release);
    drop(state);
    queue.changed.notify_all();
    true
}

/// Waits until every queued job asked for one of `arrays` is finished. Returns at once
/// when nothing is queued or on the evaluation thread itself.
pub(super) fn wait_for(arrays: &[&Array]) {
    if UNFINISHED.load(Ordering::Acquire) == 0 || ON_EVALUATION_THREAD.with(|f| f.get()) {
        return;
    }
    let Some(queue) = queue() else {
        return;
    };
    let mut state = queue.lock();
    let wanted = state
        .jobs
        .iter()
        .filter(|job| {
            job.targets
                .iter()
                .any(|t| arrays.iter().any(|a| Arc::ptr_eq(&t.node, &a.node)))
        })
        .map(|job| job.number)
        .max();
    if let Some(number) = wanted {
        while state.finished < number {
            state = queue.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// The evaluation thread: runs each job in turn.
fn work(queue: &'static Queue) {
    ON_EVALUATION_THREAD.with(|f| f.set(true));
    loop {
        let (number, targets) = {
            let mut state = queue.lock();
            loop {
                if let Some(job) = state.jobs.front() {
                    break (job.number, job.targets.clone());
                }
                state = queue.changed.wait(state).unwrap_or_else(|e| e.into_inner());
            }
        };
        // A kernel's panic is an engine bug; it must not stop the thread, or readers of
        // later jobs would wait forever. The failed node reports itself when read.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| evaluate(&targets)));
        drop(targets);
        let mut state = queue.lock();
        state.jobs.pop_front();
        state.finished = number;
        UNFINISHED.fetch_sub(1, Ordering::Release);
        drop(state);
        queue.changed.notify_all();
    }
}

/// Computes what `targets` need, unless a node must run on the caller's thread or the
/// graph depends on placeholders. An error stops the job; the failed node gives it again
/// when read.
fn evaluate(targets: &[Array]) {
    let targets: Vec<&Array> = targets.iter().collect();
    let (order, stamps) = schedule(&targets);
    let on_caller = order.iter().any(|node| {
        node.lock()
            .op
            .as_ref()
            .is_some_and(|op| op.primitive.runs_on_caller())
    });
    if stamps.is_some() || on_caller {
        return;
    }
    for node in order {
        if run(&node, 0).is_err() {
            return;
        }
    }
}
