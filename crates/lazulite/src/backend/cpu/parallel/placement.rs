//! Keeps the helper threads off the core of the thread that hands them a job.
//!
//! Linux wakes a sleeping thread on the waker's core when the other cores look busy, and
//! on a virtual machine a core that has idled for a few milliseconds looks busy (its
//! virtual CPU was descheduled by the host). A helper woken after such a pause then shares
//! the caller's core, the two take turns on it, and only the load balancer separates them,
//! milliseconds later: an MLP training step took 5 ms instead of 2.2 after 20 ms of
//! idling, every product in it running at one core's speed. Excluding the caller's core
//! from the helpers' affinity before waking them makes the kernel place them elsewhere.
//! The mask changes only when the caller is seen on another core than last time, which
//! costs one `sched_getcpu` a job otherwise. With more helpers than other cores (more
//! threads asked for than there are cores) the masks are left alone.

#[cfg(target_os = "linux")]
pub(super) use linux::Placement;

#[cfg(not(target_os = "linux"))]
pub(super) use other::Placement;

#[cfg(target_os = "linux")]
mod linux {
    use std::sync::atomic::{AtomicI32, Ordering};
    use std::sync::Mutex;

    /// The helpers' thread ids and the cores they may use.
    pub(in crate::backend::cpu::parallel) struct Placement {
        /// The cores the process could use when the helpers started.
        allowed: libc::cpu_set_t,
        pub(super) helpers: Mutex<Vec<libc::pid_t>>,
        /// The process the helpers belong to: a child made by `fork` has none of them
        /// (the ids it holds are its parent's threads).
        pid: libc::pid_t,
        /// The core the helpers were last kept off, -1 for none.
        avoided: AtomicI32,
    }

    impl Placement {
        pub(in crate::backend::cpu::parallel) fn new() -> Placement {
            // SAFETY: an all-zero cpu_set_t is an empty set; `sched_getaffinity` writes at
            // most `size_of::<cpu_set_t>()` bytes into it.
            let mut allowed: libc::cpu_set_t = unsafe { std::mem::zeroed() };
            let read = unsafe {
                libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut allowed)
            };
            if read != 0 {
                // Unknown: leave the helpers where the kernel puts them.
                allowed = unsafe { std::mem::zeroed() };
            }
            Placement {
                allowed,
                helpers: Mutex::new(Vec::new()),
                pid: unsafe { libc::getpid() },
                avoided: AtomicI32::new(-1),
            }
        }

        /// Called by each helper as it starts.
        pub(in crate::backend::cpu::parallel) fn register_helper(&self) {
            // The system call rather than glibc's wrapper, which older glibc lacks.
            // SAFETY: gettid takes no arguments and cannot fail.
            let tid = unsafe { libc::syscall(libc::SYS_gettid) } as libc::pid_t;
            self.helpers
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(tid);
            // Jobs may have been offered before this helper started: the next one sets
            // its mask too.
            self.avoided.store(-1, Ordering::Relaxed);
        }

        /// Before a job is offered: moves the helpers off the calling thread's core if
        /// that is not the core they already avoid.
        pub(in crate::backend::cpu::parallel) fn avoid_caller(&self) {
            // SAFETY: sched_getcpu has no preconditions; it returns -1 on failure.
            let cpu = unsafe { libc::sched_getcpu() };
            if cpu < 0
                || cpu as usize >= libc::CPU_SETSIZE as usize
                || cpu == self.avoided.load(Ordering::Relaxed)
            {
                return;
            }
            self.avoided.store(cpu, Ordering::Relaxed);
            if unsafe { libc::getpid() } != self.pid {
                return;
            }
            let mut mask = self.allowed;
            // SAFETY: `cpu` is below CPU_SETSIZE, and `mask` is a plain value.
            unsafe { libc::CPU_CLR(cpu as usize, &mut mask) };
            let helpers = self.helpers.lock().unwrap_or_else(|e| e.into_inner());
            // More helpers than other cores (more threads asked for than there are
            // cores): the kernel spreads them better over all of them.
            if (unsafe { libc::CPU_COUNT(&mask) } as usize) < helpers.len().max(1) {
                return;
            }
            for &tid in helpers.iter() {
                // A failure (a cpuset that changed under us) leaves that helper where it
                // is, which is only slower.
                // SAFETY: `mask` is a valid cpu_set_t of the size passed.
                unsafe {
                    libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &mask)
                };
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod other {
    /// Elsewhere the helpers stay where the system puts them.
    pub(in crate::backend::cpu::parallel) struct Placement;

    impl Placement {
        pub(in crate::backend::cpu::parallel) fn new() -> Placement {
            Placement
        }

        pub(in crate::backend::cpu::parallel) fn register_helper(&self) {}

        pub(in crate::backend::cpu::parallel) fn avoid_caller(&self) {}
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::Placement;
    use std::sync::mpsc;

    fn affinity(tid: libc::pid_t) -> libc::cpu_set_t {
        // SAFETY: as in `Placement::new`.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        let read = unsafe {
            libc::sched_getaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &mut set)
        };
        assert_eq!(read, 0);
        set
    }

    fn set_affinity(tid: libc::pid_t, set: &libc::cpu_set_t) {
        // SAFETY: `set` is a valid cpu_set_t of the size passed.
        let done =
            unsafe { libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), set) };
        assert_eq!(done, 0);
    }

    #[test]
    fn helpers_leave_the_callers_core_and_keep_the_others() {
        let placement = &Placement::new();
        let (started, wait_started) = mpsc::channel();
        let (release, wait_release) = mpsc::channel::<()>();
        std::thread::scope(|s| {
            s.spawn(move || {
                placement.register_helper();
                started.send(()).unwrap();
                wait_release.recv().unwrap();
            });
            wait_started.recv().unwrap();
            let helper = placement.helpers.lock().unwrap()[0];
            let before = affinity(0);
            // Hold the calling thread on one core, the first it may use.
            let core = (0..libc::CPU_SETSIZE as usize)
                .find(|&c| unsafe { libc::CPU_ISSET(c, &before) })
                .unwrap();
            let mut one: libc::cpu_set_t = unsafe { std::mem::zeroed() };
            unsafe { libc::CPU_SET(core, &mut one) };
            set_affinity(0, &one);
            placement.avoid_caller();
            let after = affinity(helper);
            set_affinity(0, &before);
            release.send(()).unwrap();
            let others = (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| c != core && unsafe { libc::CPU_ISSET(c, &before) })
                .count();
            if others == 0 {
                // One core: nowhere else to go, the helper keeps it.
                assert!(unsafe { libc::CPU_ISSET(core, &after) });
            } else {
                assert!(!unsafe { libc::CPU_ISSET(core, &after) });
                assert_eq!(unsafe { libc::CPU_COUNT(&after) } as usize, others);
            }
        });
    }
}
