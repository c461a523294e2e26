//! Fork-join for kernels in which the calling thread works too.
//!
//! A kernel split into tasks hands them to [`for_each`]: the calling thread starts on them
//! at once while the helper threads (one fewer than the pool's threads) join in as they
//! wake. The tasks are cut into one contiguous run per thread, which that thread works
//! through in order: a kernel that streams memory then reads one long stretch per core,
//! which the hardware prefetches better than interleaved pieces (a 4-bit product of
//! weights streamed from memory by two cores: about 15% faster). A thread whose run is
//! done takes tasks from the back of the run with the most left, so a helper that wakes
//! late or is descheduled delays nothing. When the caller runs out of tasks it waits only
//! for tasks already begun, never for a helper to wake up. Helpers spin briefly after a
//! job before sleeping, so the next kernel of a decode step, a few small ops later, finds
//! them awake; while spinning they yield their core now and then, so that a thread
//! waiting for it (Python recording the next decode step) runs between jobs instead of
//! taking the core in the middle of one. Helpers keep off the calling thread's core
//! ([`placement`]).
//!
//! Why not a rayon parallel iterator: from a thread outside rayon's pool (the thread that
//! evaluates), each such iterator wakes a worker, sleeps until the workers finish, and is
//! woken again: three hand-offs between threads per kernel, each tens of microseconds on
//! a virtual machine, more than a whole few-row product takes. Measured on a 4-bit
//! 2816x1024 product with one bfloat16 row: 88 µs with the workers spinning, 141-153 µs
//! after a millisecond of other work.

use std::any::Any;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

mod placement;
use placement::Placement;

/// How long a helper keeps looking for the next job before it sleeps.
const SPIN: Duration = Duration::from_micros(200);

/// Runs `task(i)` for every `i` in `0..tasks`, each exactly once, on the calling thread
/// and the helper threads. Tasks run in no particular order and must not depend on each
/// other. When another job holds the helpers (a task that itself calls `for_each`, or two
/// threads evaluating at once), the tasks run on the calling thread alone. A panicking
/// task panics here, after every task begun has ended.
pub fn for_each(tasks: usize, task: impl Fn(usize) + Sync) {
    let team = team();
    let serial = tasks < 2 || team.helpers == 0 || tasks > MAX_TASKS;
    if serial || team.busy.swap(true, Ordering::Acquire) {
        (0..tasks).for_each(task);
        return;
    }
    let task: &(dyn Fn(usize) + Sync) = &task;
    // SAFETY: helpers call `task` only for a task they claimed, and `Finish` (dropped
    // before this function returns, also on unwinding) waits for every claimed task to
    // end; a helper that claims nothing never touches it. So no call outlives the borrow.
    let task: &'static (dyn Fn(usize) + Sync) = unsafe { std::mem::transmute(task) };
    let threads = team.helpers + 1;
    let job = Arc::new(Job {
        task,
        runs: (0..threads)
            .map(|t| OwnLine(Run::new(t * tasks / threads, (t + 1) * tasks / threads)))
            .collect(),
        owners: AtomicUsize::new(1),
        active: OwnLine(AtomicUsize::new(0)),
        panic: Mutex::new(None),
    });
    team.publish(Some(job.clone()));
    let finish = Finish { team, job: &job };
    let mut victim = None;
    while let Some(i) = job.claim(Some(0), &mut victim) {
        task(i);
    }
    drop(finish);
    let panic = job.panic.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(payload) = panic {
        std::panic::resume_unwind(payload);
    }
}

/// Most tasks one job splits among threads (a run's ends are packed in one word); more
/// run on the calling thread.
const MAX_TASKS: usize = u32::MAX as usize;

/// The threads that run a job: the calling one and the helpers.
pub fn threads() -> usize {
    team().helpers + 1
}

/// A slice cut into chunks of `chunk` elements (the last may be shorter), `task(i, chunk)`
/// run for each as by [`for_each`].
pub fn for_each_chunk_mut<T: Send>(
    data: &mut [T],
    chunk: usize,
    task: impl Fn(usize, &mut [T]) + Sync,
) {
    let chunk = chunk.max(1);
    let (len, base) = (data.len(), SharedMut(data.as_mut_ptr()));
    for_each(len.div_ceil(chunk), |i| {
        let start = i * chunk;
        let base = &base;
        // SAFETY: chunk `i` lies inside `data`, chunks do not overlap, and each runs once.
        let part =
            unsafe { std::slice::from_raw_parts_mut(base.0.add(start), chunk.min(len - start)) };
        task(i, part)
    });
}

/// A pointer into a slice whose disjoint parts the tasks write.
struct SharedMut<T>(*mut T);

// SAFETY: each task reaches a different part of the slice through it.
unsafe impl<T: Send> Sync for SharedMut<T> {}

/// A value alone on its cache lines (128 bytes: the pair of lines some CPUs fetch
/// together), so that a thread writing it does not take from the others the lines they
/// read: each claim of a task wrote a line the other thread read next, a miss each time
/// (in a decode step's profile the evaluating thread spent 3.4% of its time on two loads
/// of `claim`).
#[repr(align(128))]
struct OwnLine<T>(T);

impl<T> std::ops::Deref for OwnLine<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

/// One call of [`for_each`], as the helpers see it.
struct Job {
    /// Valid while some task is unclaimed (see `for_each`).
    task: &'static (dyn Fn(usize) + Sync),
    /// One run of tasks per thread; the caller owns the first.
    runs: Box<[OwnLine<Run>]>,
    /// The run the next helper to join owns.
    owners: AtomicUsize,
    /// Helpers that may hold a claimed task.
    active: OwnLine<AtomicUsize>,
    /// A helper's panic, raised again on the calling thread.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

impl Job {
    /// A task for the thread that owns run `own` (none for a helper that joined after
    /// every run had an owner): the next of its run, else the last of `victim`, the run
    /// it takes from, which becomes the run with the most left once empty (so a thread
    /// walks one run backwards at a time). `None` when every task is claimed.
    fn claim(&self, own: Option<usize>, victim: &mut Option<usize>) -> Option<usize> {
        if let Some(i) = own.and_then(|r| self.runs[r].claim_front()) {
            return Some(i);
        }
        loop {
            if let Some(i) = victim.and_then(|r| self.runs[r].claim_back()) {
                return Some(i);
            }
            let (r, fullest) = self.runs.iter().enumerate().max_by_key(|(_, r)| r.left())?;
            if fullest.left() == 0 {
                return None;
            }
            *victim = Some(r);
        }
    }

    /// Claims and runs tasks until none is left.
    fn help(&self) {
        let slot = self.owners.fetch_add(1, Ordering::SeqCst);
        let own = (slot < self.runs.len()).then_some(slot);
        let mut victim = None;
        loop {
            // Counted before claiming, so that a caller that saw the last task claimed
            // also sees this helper as possibly running it.
            self.active.fetch_add(1, Ordering::SeqCst);
            let Some(i) = self.claim(own, &mut victim) else {
                self.active.fetch_sub(1, Ordering::Release);
                return;
            };
            let task = self.task;
            if let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| task(i)))
            {
                // Nothing more is claimed: the caller runs what is left, then panics.
                *self.panic.lock().unwrap_or_else(|e| e.into_inner()) = Some(payload);
                self.active.fetch_sub(1, Ordering::Release);
                return;
            }
            self.active.fetch_sub(1, Ordering::Release);
        }
    }

    /// Lets no more tasks be claimed.
    fn close(&self) {
        for run in self.runs.iter() {
            run.close();
        }
    }
}

/// The unclaimed tasks `next..end` of a run, both ends in one word so that the owner
/// (from the front) and the others (from the back) claim each task once.
struct Run(AtomicU64);

impl Run {
    fn new(next: usize, end: usize) -> Run {
        Run(AtomicU64::new(((next as u64) << 32) | end as u64))
    }

    fn left(&self) -> usize {
        let (next, end) = Self::ends(self.0.load(Ordering::SeqCst));
        end.saturating_sub(next)
    }

    fn ends(word: u64) -> (usize, usize) {
        ((word >> 32) as usize, (word & u64::from(u32::MAX)) as usize)
    }

    /// Leaves no task to claim.
    fn close(&self) {
        self.0.store(0, Ordering::SeqCst);
    }

    fn claim_front(&self) -> Option<usize> {
        self.claim(|next, end| (next, Run::new(next + 1, end)))
    }

    fn claim_back(&self) -> Option<usize> {
        self.claim(|next, end| (end - 1, Run::new(next, end - 1)))
    }

    /// Moves one end as `step` says (the task claimed and the run left), unless the run
    /// is empty.
    fn claim(&self, step: impl Fn(usize, usize) -> (usize, Run)) -> Option<usize> {
        let mut word = self.0.load(Ordering::SeqCst);
        loop {
            let (next, end) = Self::ends(word);
            if next >= end {
                return None;
            }
            let (task, left) = step(next, end);
            match self.0.compare_exchange_weak(
                word,
                left.0.into_inner(),
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => return Some(task),
                Err(now) => word = now,
            }
        }
    }
}

/// Ends a job on the calling thread: no new claims, then a wait for the claimed tasks.
struct Finish<'a> {
    team: &'static Team,
    job: &'a Job,
}

impl Drop for Finish<'_> {
    fn drop(&mut self) {
        // Claims after this fail, also on unwinding from a caller's task.
        self.job.close();
        self.team.publish(None);
        let mut spins = 0u32;
        while self.job.active.load(Ordering::SeqCst) != 0 {
            spins += 1;
            if spins < 1 << 12 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        self.team.busy.store(false, Ordering::Release);
    }
}

/// The helper threads and the job they are offered.
struct Team {
    helpers: usize,
    /// Whether a caller holds the helpers.
    busy: AtomicBool,
    current: Mutex<Option<Arc<Job>>>,
    /// Bumped on each published job: what spinning helpers watch.
    generation: AtomicU64,
    sleeping: AtomicUsize,
    bed: Mutex<()>,
    wake: Condvar,
    placement: Placement,
}

impl Team {
    fn publish(&self, job: Option<Arc<Job>>) {
        let offered = job.is_some();
        *self.current.lock().unwrap_or_else(|e| e.into_inner()) = job;
        if offered {
            self.placement.avoid_caller();
            self.generation.fetch_add(1, Ordering::SeqCst);
            if self.sleeping.load(Ordering::SeqCst) > 0 {
                let _bed = self.bed.lock().unwrap_or_else(|e| e.into_inner());
                self.wake.notify_all();
            }
        }
    }

    /// A helper's life: wait for a job (spinning, then asleep), help with it, repeat.
    fn serve(&self) {
        self.placement.register_helper();
        let mut seen = self.generation.load(Ordering::SeqCst);
        loop {
            let start = Instant::now();
            let mut polls = 0u32;
            while self.generation.load(Ordering::SeqCst) == seen {
                polls += 1;
                if !polls.is_multiple_of(256) {
                    std::hint::spin_loop();
                    continue;
                }
                if start.elapsed() > SPIN {
                    let mut bed = self.bed.lock().unwrap_or_else(|e| e.into_inner());
                    self.sleeping.fetch_add(1, Ordering::SeqCst);
                    while self.generation.load(Ordering::SeqCst) == seen {
                        bed = self.wake.wait(bed).unwrap_or_else(|e| e.into_inner());
                    }
                    self.sleeping.fetch_sub(1, Ordering::SeqCst);
                    break;
                }
                // A thread waiting for this core (the host language recording the next
                // step) runs now rather than when the next job needs the helper.
                std::thread::yield_now();
            }
            seen = self.generation.load(Ordering::SeqCst);
            let job = self
                .current
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            if let Some(job) = job {
                job.help();
            }
        }
    }
}

/// The helpers, started on first use: one fewer than rayon's threads (which follow
/// `RAYON_NUM_THREADS`, else the cores), the calling thread being the other.
fn team() -> &'static Team {
    static TEAM: OnceLock<&'static Team> = OnceLock::new();
    TEAM.get_or_init(|| {
        let team: &'static Team = Box::leak(Box::new(Team {
            helpers: rayon::current_num_threads().saturating_sub(1),
            busy: AtomicBool::new(false),
            current: Mutex::new(None),
            generation: AtomicU64::new(0),
            sleeping: AtomicUsize::new(0),
            bed: Mutex::new(()),
            wake: Condvar::new(),
            placement: Placement::new(),
        }));
        let mut started = 0;
        for n in 0..team.helpers {
            let spawned = std::thread::Builder::new()
                .name(format!("lazulite-helper-{n}"))
                .spawn(move || team.serve());
            started += usize::from(spawned.is_ok());
        }
        // Threads that could not start leave fewer helpers; with none, every job runs on
        // its calling thread.
        if started == 0 {
            team.busy.store(true, Ordering::Release);
        }
        team
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_task_runs_once() {
        for tasks in [0, 1, 2, 3, 17, 1000] {
            let counts: Vec<AtomicUsize> = (0..tasks).map(|_| AtomicUsize::new(0)).collect();
            for_each(tasks, |i| {
                counts[i].fetch_add(1, Ordering::Relaxed);
            });
            assert!(
                counts.iter().all(|c| c.load(Ordering::Relaxed) == 1),
                "{tasks} tasks"
            );
        }
    }

    #[test]
    fn each_thread_works_through_a_contiguous_run() {
        // Every thread's tasks, in the order it ran them: its own run forwards, then
        // other runs backwards one at a time, so it jumps at most once per run.
        let order: Mutex<Vec<(std::thread::ThreadId, usize)>> = Mutex::new(Vec::new());
        for_each(200, |i| {
            std::thread::sleep(Duration::from_micros(20));
            order.lock().unwrap().push((std::thread::current().id(), i));
        });
        let order = order.into_inner().unwrap();
        let mut seen: Vec<usize> = order.iter().map(|&(_, i)| i).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..200).collect::<Vec<_>>());
        let ids: std::collections::HashSet<_> = order.iter().map(|&(t, _)| t).collect();
        for id in ids {
            let tasks: Vec<usize> = order.iter().filter(|o| o.0 == id).map(|o| o.1).collect();
            let jumps = tasks
                .windows(2)
                .filter(|w| w[0].abs_diff(w[1]) != 1)
                .count();
            assert!(jumps <= threads(), "{tasks:?}");
        }
    }

    #[test]
    fn chunks_cover_the_slice() {
        let mut v = vec![usize::MAX; 10];
        for_each_chunk_mut(&mut v, 3, |i, chunk| chunk.fill(i));
        assert_eq!(v, [0, 0, 0, 1, 1, 1, 2, 2, 2, 3]);
    }

    #[test]
    fn nested_and_concurrent_jobs_complete() {
        let total = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    for _ in 0..50 {
                        for_each(8, |_| {
                            for_each(4, |j| {
                                total.fetch_add(j, Ordering::Relaxed);
                            })
                        });
                    }
                });
            }
        });
        assert_eq!(total.into_inner(), 3 * 50 * 8 * 6);
    }

    #[test]
    fn a_panicking_task_panics_the_caller_after_the_others_end() {
        let ran = AtomicUsize::new(0);
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            for_each(64, |i| {
                if i == 5 {
                    panic!("task 5");
                }
                std::thread::sleep(Duration::from_micros(50));
                ran.fetch_add(1, Ordering::SeqCst);
            })
        }));
        assert!(caught.is_err());
        let after = ran.load(Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(
            ran.load(Ordering::SeqCst),
            after,
            "a task ran after the call returned"
        );
        // The helpers serve the next job.
        let sum = AtomicUsize::new(0);
        for_each(100, |i| {
            sum.fetch_add(i, Ordering::Relaxed);
        });
        assert_eq!(sum.into_inner(), 4950);
    }
}
