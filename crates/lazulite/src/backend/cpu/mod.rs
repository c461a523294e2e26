//! CPU kernels, one file per kind of computation.

pub mod binary;
pub mod elementwise;
pub mod math;
pub mod matmul;
pub mod strided;
pub mod unary;
