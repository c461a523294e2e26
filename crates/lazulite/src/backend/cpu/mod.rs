//! CPU kernels, one file per kind of computation.

pub mod binary;
pub mod copy;
pub mod elementwise;
pub mod math;
pub mod random;
pub mod strided;
pub mod unary;
