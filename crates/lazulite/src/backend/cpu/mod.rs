//! CPU kernels, one file per kind of computation.

pub mod binary;
pub mod cholesky;
pub mod conv;
pub mod copy;
pub mod dense;
pub mod eig;
pub mod eigh;
pub mod elementwise;
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
