//! CPU kernels, one file per kind of computation.

pub mod binary;
pub mod cholesky;
pub mod conv;
pub mod copy;
pub(crate) mod cx;
pub mod dense;
pub mod eig;
pub mod eigh;
pub mod elementwise;
pub mod fast;
pub mod fft;
pub mod indexing;
pub mod lu;
pub mod math;
pub mod matmul;
pub mod qr;
pub mod quantized;
pub mod random;
pub mod reduce;
pub mod scan;
pub mod shape;
pub mod simd;
pub mod softmax;
pub mod sort;
pub mod strided;
pub mod svd;
pub mod ternary;
pub mod unary;

/// Runs `work` on a thread of the pool and returns its result: there, kernels that split
/// their work keep a share of it instead of handing it all over and sleeping. On the
/// calling thread when that is a thread of the pool already, or the pool has one thread.
pub fn on_pool<R: Send>(work: impl FnOnce() -> R + Send) -> R {
    if rayon::current_thread_index().is_some() || rayon::current_num_threads() < 2 {
        return work();
    }
    // `scope` runs its body on a thread of the pool, the caller waiting for it.
    rayon::scope(|_| work())
}
