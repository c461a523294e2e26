//! The public ops, one file per family. Each file holds the family's primitive(s) and
//! the functions that record them; shape and dtype are checked here, when recorded.

pub(crate) mod batching;
pub mod binary;
pub mod cast;
pub mod creation;
pub mod distributed;
pub mod fast;
pub mod fft;
pub mod linalg;
pub mod methods;
pub mod operand;
pub mod operators;
pub(crate) mod random;
pub mod reduce;
pub mod scan;
pub mod shape;
pub(crate) mod shapeless;
pub mod softmax;
pub mod sort;
pub mod ternary;
pub mod unary;
pub mod view;

pub use binary::*;
pub use cast::astype;
pub use creation::*;
pub use linalg::cholesky;
pub use linalg::{
    addmm, block_masked_mm, einsum, einsum_path, gather_mm, inner, kron, matmul, outer,
    segmented_mm, tensordot, vecdot, TensordotAxes,
};
pub use operand::Operand;
pub use reduce::*;
pub use scan::{cummax, cummin, cumprod, cumsum, logcumsumexp};
pub use shape::*;
pub use sort::{argpartition, argsort, diff, partition, searchsorted, sort, topk};
pub use ternary::*;
pub use unary::*;
pub use view::{broadcast_to, reshape, slice, slice_update, transpose};
pub mod indexing;
pub use indexing::{
    argwhere, at, dynamic_slice, dynamic_slice_update, index, index_put, nonzero, put_along_axis,
    take, take_along_axis, unique, At, Index,
};
pub use indexing::{unique_all, Unique};
pub use softmax::{logsumexp, softmax};
pub mod conv;
pub use conv::{
    conv1d, conv2d, conv3d, conv_general, conv_transpose1d, conv_transpose2d, conv_transpose3d,
    ConvGeneral,
};
pub mod composite;
pub use composite::{logical_xor, matrix_transpose, minmax};
mod fp8;
mod hadamard;
pub use fp8::{from_fp8, to_fp8};
pub mod signal;
pub use hadamard::hadamard_transform;
pub use signal::{bartlett, blackman, convolve, hamming, hanning};
pub mod depends;
pub use depends::depends;
pub mod quantized;
pub use quantized::{
    dequantize, gather_qmm, quantize, quantized_matmul, Quantization, QuantizationMode,
};
