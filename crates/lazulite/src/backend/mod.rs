//! Where array data lives and is computed: buffers, the allocator and the CPU kernels.
//! Nothing here knows about arrays, graphs or transforms; a GPU backend would be a
//! sibling of `cpu`.

pub mod buffer;
pub mod cpu;
pub mod memory;
pub mod mpi;
pub mod op;
pub mod tensor;

pub use tensor::{contiguous_strides, Tensor};
