//! The allocator: 64-byte aligned blocks, a cache of freed blocks bucketed by size class,
//! and the memory counters MLX exposes (`get_active_memory`, ...).
//!
//! Freed blocks are cached because first-touch page faults on fresh large blocks cost more
//! than many kernels do on this kind of machine.

use crate::error::{Error, ErrorKind, Result};
use std::alloc::Layout;
use std::collections::BTreeMap;
use std::ptr::NonNull;
use std::sync::Mutex;

const ALIGN: usize = 64;
const PAGE: usize = 4096;

struct Pool {
    free: BTreeMap<usize, Vec<NonNull<u8>>>,
    cached: usize,
    active: usize,
    peak: usize,
    cache_limit: usize,
    /// MLX's guideline (`None`: the default, a share of physical memory).
    memory_limit: Option<usize>,
    /// A hard cap no allocation may cross (a Rust-side extension; none by default).
    allocation_limit: usize,
}

// SAFETY: the pointers in the cache are owned by the pool alone.
unsafe impl Send for Pool {}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    free: BTreeMap::new(),
    cached: 0,
    active: 0,
    peak: 0,
    cache_limit: usize::MAX,
    memory_limit: None,
    allocation_limit: usize::MAX,
});

/// Bytes of physical memory (MLX's `get_memory_size`), or 0 where it cannot be read.
fn physical_memory() -> usize {
    static SIZE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *SIZE.get_or_init(|| {
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        meminfo
            .lines()
            .find_map(|line| line.strip_prefix("MemTotal:"))
            .and_then(|rest| rest.trim().strip_suffix("kB"))
            .and_then(|kb| kb.trim().parse::<usize>().ok())
            .map_or(0, |kb| kb.saturating_mul(1024))
    })
}

/// MLX's default memory limit on CPU: 80% of physical memory, or 8 GiB if unknown.
fn default_memory_limit() -> usize {
    match physical_memory() {
        0 => 1 << 33,
        bytes => (bytes as f64 * 0.8) as usize,
    }
}

fn pool() -> std::sync::MutexGuard<'static, Pool> {
    // A panic while holding the lock cannot leave the counters inconsistent enough to
    // matter, so a poisoned lock is still used.
    POOL.lock().unwrap_or_else(|e| e.into_inner())
}

/// The capacity actually reserved for a request of `bytes`: powers of two below a page,
/// whole pages above, so that blocks of the same shape share a bucket.
fn size_class(bytes: usize) -> Option<usize> {
    if bytes <= PAGE {
        Some(bytes.max(ALIGN).next_power_of_two())
    } else {
        bytes.checked_add(PAGE - 1).map(|b| b / PAGE * PAGE)
    }
}

/// Allocates at least `bytes` bytes; returns the block and its capacity.
/// Zero bytes gives a dangling, aligned pointer of capacity 0.
pub(crate) fn allocate(bytes: usize) -> Result<(NonNull<u8>, usize)> {
    if bytes == 0 {
        // SAFETY: ALIGN is non-zero; a dangling pointer is never dereferenced for 0 bytes.
        return Ok((unsafe { NonNull::new_unchecked(ALIGN as *mut u8) }, 0));
    }
    let too_big = || {
        Error::new(
            ErrorKind::OutOfMemory,
            format!("[malloc] Unable to allocate {bytes} bytes."),
        )
    };
    let cap = size_class(bytes).ok_or_else(too_big)?;
    // One block larger than the machine's memory can never be backed (with overcommit
    // it would be granted and then kill the process on first touch).
    let physical = physical_memory();
    if physical != 0 && cap > physical {
        return Err(too_big());
    }
    let mut p = pool();
    // Blocks of one cache line (scalars, tiny shapes) are exempt: creating a scalar
    // operand cannot fail, whatever the cap.
    if cap > ALIGN && p.active.saturating_add(cap) > p.allocation_limit {
        clear_locked(&mut p);
        return Err(Error::new(
            ErrorKind::OutOfMemory,
            format!(
                "[malloc] Allocating {bytes} bytes would exceed the allocation limit of {} \
                 bytes ({} bytes in use).",
                p.allocation_limit, p.active
            ),
        ));
    }
    let reused = p.free.get_mut(&cap).and_then(|v| v.pop());
    let ptr = match reused {
        Some(ptr) => {
            p.cached -= cap;
            ptr
        }
        None => {
            // Past the guideline, cached blocks go back to the system before more is
            // taken from it (a cached block of the right size is reused above).
            let limit = p.memory_limit.unwrap_or_else(default_memory_limit);
            if p.active.saturating_add(p.cached).saturating_add(cap) > limit {
                clear_locked(&mut p);
            }
            drop(p);
            let layout = Layout::from_size_align(cap, ALIGN).map_err(|_| too_big())?;
            // SAFETY: layout has non-zero size.
            let raw = unsafe { std::alloc::alloc(layout) };
            let ptr = NonNull::new(raw).ok_or_else(too_big)?;
            p = pool();
            ptr
        }
    };
    p.active += cap;
    p.peak = p.peak.max(p.active);
    Ok((ptr, cap))
}

/// Returns a block from [`allocate`] to the cache (or to the system past the cache limit).
pub(crate) fn release(ptr: NonNull<u8>, cap: usize) {
    if cap == 0 {
        return;
    }
    let mut p = pool();
    p.active -= cap;
    if p.cached + cap <= p.cache_limit {
        p.cached += cap;
        p.free.entry(cap).or_default().push(ptr);
    } else {
        drop(p);
        free_block(ptr, cap);
    }
}

fn free_block(ptr: NonNull<u8>, cap: usize) {
    // SAFETY: ptr came from `alloc` with this exact layout.
    unsafe { std::alloc::dealloc(ptr.as_ptr(), Layout::from_size_align_unchecked(cap, ALIGN)) }
}

fn clear_locked(p: &mut Pool) {
    for (cap, ptrs) in std::mem::take(&mut p.free) {
        for ptr in ptrs {
            free_block(ptr, cap);
        }
    }
    p.cached = 0;
}

/// Uninitialised room for `len` values of `T` in a block from the cache, returned to it
/// when dropped: kernels' large temporaries come from the same cache as arrays, so they
/// neither pay first-touch page faults on every call nor escape the memory counters.
pub(crate) struct Scratch<T> {
    ptr: NonNull<u8>,
    cap: usize,
    _values: std::marker::PhantomData<T>,
}

impl<T: Copy> Scratch<T> {
    /// Room for `len` values (an `OutOfMemory` error past the allocation limit).
    pub(crate) fn new(len: usize) -> Result<Self> {
        debug_assert!(std::mem::align_of::<T>() <= ALIGN);
        let bytes = len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| {
            Error::new(
                ErrorKind::OutOfMemory,
                format!("[malloc] Unable to allocate {len} scratch values."),
            )
        })?;
        let (ptr, cap) = allocate(bytes)?;
        Ok(Scratch {
            ptr,
            cap,
            _values: std::marker::PhantomData,
        })
    }

    /// The start of the room (64-byte aligned).
    pub(crate) fn as_mut_ptr(&mut self) -> *mut T {
        self.ptr.as_ptr().cast()
    }
}

impl<T> Drop for Scratch<T> {
    fn drop(&mut self) {
        release(self.ptr, self.cap);
    }
}

/// Bytes held by live arrays (MLX: `get_active_memory`).
///
/// ```
/// let before = lazulite::get_active_memory();
/// let a = lazulite::Array::from_slice(&[0.5f32; 1024], &[1024]).unwrap();
/// assert!(lazulite::get_active_memory() >= before + 4096);
/// ```
pub fn get_active_memory() -> usize {
    pool().active
}

/// The largest [`get_active_memory`] seen since start or [`reset_peak_memory`].
///
/// ```
/// let a = lazulite::Array::from_slice(&[0.5f32; 1024], &[1024])?;
/// assert!(lazulite::get_peak_memory() >= lazulite::get_active_memory());
/// assert!(lazulite::get_peak_memory() >= a.nbytes());
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn get_peak_memory() -> usize {
    pool().peak
}

/// Sets the peak counter to the current active memory.
///
/// ```
/// let a = lazulite::Array::from_slice(&[0.5f32; 1024], &[1024])?;
/// drop(a);
/// lazulite::reset_peak_memory();
/// assert_eq!(lazulite::get_peak_memory(), lazulite::get_active_memory());
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn reset_peak_memory() {
    let mut p = pool();
    p.peak = p.active;
}

/// Bytes held in the cache of freed blocks.
///
/// ```
/// let before = lazulite::get_cache_memory();
/// let a = lazulite::Array::from_slice(&[0.5f32; 1024], &[1024])?;
/// drop(a); // its block is kept for the next array of that size
/// assert!(lazulite::get_cache_memory() >= before + 4096);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn get_cache_memory() -> usize {
    pool().cached
}

/// Sets how many freed bytes may be cached; returns the previous limit.
/// Shrinking below the current cache frees the cache.
///
/// ```
/// let old = lazulite::set_cache_limit(0); // no caching: freed blocks go back at once
/// drop(lazulite::Array::from_slice(&[0.5f32; 1024], &[1024])?);
/// assert_eq!(lazulite::get_cache_memory(), 0);
/// assert_eq!(lazulite::set_cache_limit(old), 0);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn set_cache_limit(limit: usize) -> usize {
    let mut p = pool();
    let old = std::mem::replace(&mut p.cache_limit, limit);
    if p.cached > limit {
        clear_locked(&mut p);
    }
    old
}

/// Sets the memory limit and returns the previous one. As in MLX it is a guideline, not a
/// cap: past it, freed blocks held in the cache go back to the system before new memory is
/// taken, and allocations still succeed while the system grants them (for a hard cap see
/// [`set_allocation_limit`]). The default is MLX's: 80% of physical memory.
///
/// ```
/// let old = lazulite::set_memory_limit(1);
/// let y = lazulite::sin(&lazulite::Array::scalar(1.0f32)).unwrap();
/// assert!((y.item::<f32>().unwrap() - 1f32.sin()).abs() < 1e-6);
/// assert_eq!(lazulite::set_memory_limit(old), 1);
/// ```
pub fn set_memory_limit(limit: usize) -> usize {
    let mut p = pool();
    let old = p.memory_limit.unwrap_or_else(default_memory_limit);
    p.memory_limit = Some(limit);
    old
}

/// The memory limit (see [`set_memory_limit`]).
///
/// ```
/// let old = lazulite::set_memory_limit(1 << 40);
/// assert_eq!(lazulite::get_memory_limit(), 1 << 40);
/// lazulite::set_memory_limit(old);
/// ```
pub fn get_memory_limit() -> usize {
    pool().memory_limit.unwrap_or_else(default_memory_limit)
}

/// Sets a hard cap on the bytes live arrays and kernel temporaries may hold, and returns
/// the previous cap (`usize::MAX`, none, by default). An allocation that would cross it
/// fails with an [`ErrorKind::OutOfMemory`] error from `eval`, leaving every array intact:
/// a service can bound what untrusted inputs make it allocate. MLX has no such cap.
///
/// ```
/// let old = lazulite::set_allocation_limit(1 << 20);
/// let big = lazulite::zeros(&[1 << 20], lazulite::DType::Float32).unwrap();
/// let err = lazulite::add(&big, 1.0f32).unwrap().eval().unwrap_err();
/// assert_eq!(err.kind(), lazulite::ErrorKind::OutOfMemory);
/// lazulite::set_allocation_limit(old);
/// ```
pub fn set_allocation_limit(limit: usize) -> usize {
    std::mem::replace(&mut pool().allocation_limit, limit)
}

/// MLX's wired limit: bytes a Metal GPU keeps resident, on macOS. lazulite's buffers are
/// ordinary memory, so, like MLX without Metal, it ignores `limit` and returns 0 (the
/// "previous limit", which is always the default).
///
/// ```
/// assert_eq!(lazulite::set_wired_limit(1 << 20), 0);
/// ```
pub fn set_wired_limit(limit: usize) -> usize {
    let _ = limit;
    0
}

/// Frees every cached block.
///
/// ```
/// drop(lazulite::Array::from_slice(&[0.5f32; 1024], &[1024])?);
/// lazulite::clear_cache();
/// assert_eq!(lazulite::get_cache_memory(), 0);
/// # Ok::<(), lazulite::Error>(())
/// ```
pub fn clear_cache() {
    clear_locked(&mut pool());
}
