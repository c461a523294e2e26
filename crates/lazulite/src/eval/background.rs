//! The evaluation thread behind [`async_eval`](super::async_eval): it computes queued
//! graphs in order while the caller goes on recording the next one, as MLX's stream
//! thread does. In a decode loop the host language records token `n + 1` while token `n`
//! is computed.
//!
//! Reading an array never depends on this thread: every node is locked while it runs, so
//! a node the caller needs is computed by whichever thread reaches it first. Reading an
//! array that a queued job was asked for waits for that job rather than computing the same
//! graph alongside it. Only `fork` waits for the thread (see [`drain_before_fork`]).
//! Graphs that hold a node that must run on the caller's thread (see
//! `Primitive::runs_on_caller`) or that depend on placeholders are never queued.

use super::{run_with_ready_others, schedule, stays_on_caller};
use crate::array::Array;
use crate::error::Error;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
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

/// Set while a `fork` waits for the queue to drain: nothing new is queued meanwhile.
static FORKING: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// Set on the evaluation thread, which never waits for its own jobs.
    static ON_EVALUATION_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, QueueState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits for the next change to the queue.
    fn wait<'a>(&self, state: MutexGuard<'a, QueueState>) -> MutexGuard<'a, QueueState> {
        self.changed.wait(state).unwrap_or_else(|e| e.into_inner())
    }
}

/// The queue once its thread has started (`None` inside if it could not be).
static QUEUE: OnceLock<Option<&'static Queue>> = OnceLock::new();

/// The queue, with its thread started on first use; `None` if the thread cannot be
/// started (then `async_eval` evaluates before returning) and in a forked child.
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

/// Makes `fork` wait until the queue is empty and queue nothing new until it is done: a
/// child process has no evaluation thread, and a node that thread was computing would
/// stay locked in the child forever.
fn drain_before_fork() {
    #[cfg(unix)]
    {
        extern "C" fn prepare() {
            if ON_EVALUATION_THREAD.with(|f| f.get()) {
                return;
            }
            let Some(queue) = queue() else {
                return;
            };
            FORKING.store(true, Ordering::SeqCst);
            let mut state = queue.lock();
            while state.finished < state.queued {
                state = queue.wait(state);
            }
        }
        extern "C" fn parent() {
            FORKING.store(false, Ordering::SeqCst);
        }
        extern "C" {
            fn pthread_atfork(
                prepare: Option<extern "C" fn()>,
                parent: Option<extern "C" fn()>,
                child: Option<extern "C" fn()>,
            ) -> std::ffi::c_int;
        }
        // SAFETY: registers handlers that take this module's lock and wait for the jobs
        // under way; failing to register (out of memory) leaves fork as it was.
        unsafe {
            pthread_atfork(Some(prepare), Some(parent), None);
        }
    }
}

/// Queues `arrays` for the evaluation thread; `false` if there is none or a `fork` is
/// under way (the caller then evaluates them itself).
pub(super) fn submit(arrays: &[&Array]) -> bool {
    let Some(queue) = queue() else {
        return false;
    };
    let mut state = queue.lock();
    if FORKING.load(Ordering::SeqCst) {
        return false;
    }
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
            state = queue.wait(state);
        }
    }
}

/// Waits until every job queued so far is finished. Returns at once when nothing is
/// queued or on the evaluation thread itself.
pub(super) fn wait_all() {
    if UNFINISHED.load(Ordering::Acquire) == 0 || ON_EVALUATION_THREAD.with(|f| f.get()) {
        return;
    }
    let Some(queue) = queue() else {
        return;
    };
    let mut state = queue.lock();
    let last = state.queued;
    while state.finished < last {
        state = queue.wait(state);
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
                state = queue.wait(state);
            }
        };
        evaluate(&targets);
        let mut state = queue.lock();
        let job = state.jobs.pop_front();
        state.finished = number;
        UNFINISHED.fetch_sub(1, Ordering::Release);
        drop(state);
        queue.changed.notify_all();
        // The last handles to a graph may be these: it is freed outside the lock.
        drop((job, targets));
    }
}

/// Computes what `targets` need. An error stops the job; the failed node gives it again
/// when read. Graphs that must run on the caller's thread were not queued, but one that
/// turns up anyway (a node the caller's check passed over while another thread held it)
/// is left to be evaluated when read.
fn evaluate(targets: &[Array]) {
    let targets: Vec<&Array> = targets.iter().collect();
    if stays_on_caller(&targets) {
        return;
    }
    let (order, stamps) = schedule(&targets);
    if stamps.is_some() {
        return;
    }
    for (i, node) in order.iter().enumerate() {
        // A kernel's panic is an engine bug; it must not stop the thread, or readers of
        // later jobs would wait forever. The node keeps the panic as its error.
        let ran = || run_with_ready_others(node, &order[i + 1..]);
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(ran)) {
            Ok(Ok(())) => {}
            Ok(Err(_)) => return,
            Err(_) => {
                node.lock().failed = Some(Error::runtime(
                    "[eval] A kernel panicked while evaluating this array on the evaluation \
                     thread.",
                ));
                return;
            }
        }
    }
}
