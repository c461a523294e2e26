//! The ops, one file per family of primitives. Each file holds the family's primitive(s)
//! and the functions that record them; shape and dtype are checked here, when recorded.
//!
//! The families are private: this file re-exports their public functions and argument
//! types, and the crate root re-exports this file, so every op has one public path
//! (`lazulite::add`, not also `lazulite::binary::add`). MLX's namespaces are the public
//! modules (`lazulite::fft`, `lazulite::linalg`, ...), as `mx.fft` is in Python.

/// Writes an exported macro, `$name!(callback)`, that invokes `callback!` with the given
/// `function "summary",` pairs. The elementwise tables list their functions with it, so
/// that a binding to another language generates one entry per function from the table.
/// `$d` is a `$`, for the metavariable of the macro written.
macro_rules! function_list {
    ($(#[$doc:meta])* $name:ident ($d:tt) $($function:ident $summary:literal)*) => {
        $(#[$doc])*
        #[macro_export]
        macro_rules! $name {
            ($d callback:ident) => { $d callback! { $($function $summary,)* } };
        }
    };
}

// MLX's namespaces.
pub mod distributed;
pub mod fast;
pub mod fft;
pub mod linalg;
pub mod random;

// Families the layers above the ops (transforms, export, io, dataflow) reach into for
// crate-internal helpers.
pub(crate) mod batching;
pub(crate) mod indexing;
pub(crate) mod operand;
pub(crate) mod trace;
pub(crate) mod view;

mod binary;
mod cast;
mod composite;
mod conv;
mod creation;
mod depends;
mod eager;
mod exported;
mod fp8;
mod hadamard;
mod methods;
mod operators;
mod qqmm;
mod quantized;
mod reduce;
mod scan;
mod shape;
mod signal;
mod softmax;
mod sort;
mod ternary;
mod unary;
mod value;

pub use binary::*;
pub use cast::astype;
pub use composite::{logical_xor, matrix_transpose, minmax};
pub use conv::{
    conv1d, conv2d, conv3d, conv_general, conv_transpose1d, conv_transpose2d, conv_transpose3d,
    ConvGeneral,
};
pub use creation::*;
pub use depends::depends;
pub(crate) use depends::{passed_through_export, passed_through_jvp, passed_through_vjp};
pub use fp8::{from_fp8, to_fp8};
pub use hadamard::hadamard_transform;
pub use indexing::{
    argwhere, at, dynamic_slice, dynamic_slice_update, index, index_put, nonzero, put_along_axis,
    take, take_along_axis, take_kernel_for_bench, unique, unique_all, At, Index, Unique,
};
pub use linalg::{
    addmm, block_masked_mm, cholesky, einsum, einsum_path, gather_mm, inner, kron, matmul, outer,
    segmented_mm, tensordot, vecdot, TensordotAxes,
};
pub use operand::Operand;
pub use qqmm::{gather_qqmm, qqmm};
pub use quantized::{
    dequantize, gather_qmm, quantize, quantized_matmul, Quantization, QuantizationMode,
};
pub use reduce::*;
pub use scan::{cummax, cummin, cumprod, cumsum, logcumsumexp};
pub use shape::*;
pub use signal::{bartlett, blackman, convolve, hamming, hanning};
pub use softmax::{logsumexp, softmax};
pub use sort::{argpartition, argsort, diff, partition, searchsorted, sort, topk};
pub use ternary::*;
pub use unary::*;
pub use value::Value;
pub use view::{broadcast_to, reshape, slice, slice_update, transpose};
