//! The integration tests, one module per area, linked into one test binary: a binary per
//! file linked the whole library dozens of times, which cost CI most of its disk and much
//! of its time. Tests that change process-wide state (the memory counters and limit, the
//! compile switch, print options) keep their own binaries beside this folder.

mod common;

mod cholesky;
mod compile;
mod compile_shapeless;
mod composite;
mod conv;
mod dataflow;
mod distributed;
mod eig;
mod elementwise;
mod elementwise_paths;
mod export;
mod fast;
mod fft;
mod indexing;
mod io;
mod lazy;
mod linalg;
mod linalg_factor;
mod promotion;
mod quantized;
mod quantized_fp;
mod random;
mod raw;
mod reduce;
mod reduce_kernels;
mod rules;
mod scan_sort;
mod shape;
mod shapeless_grad;
mod signal;
mod simd_unary;
mod softmax;
mod sort_kernels;
mod stft;
mod transforms;
