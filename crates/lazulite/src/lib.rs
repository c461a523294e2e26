//! # lazulite
//!
//! Lazy n-dimensional arrays with composable function transforms and an MLX-compatible
//! API. Operations record a graph; [`eval`] (or reading data) computes only what is
//! needed.
//!
//! ```
//! use lazulite::{Array, DType};
//! let x = Array::from_slice(&[0.0f32, 1.0, 2.0], &[3]).unwrap();
//! let y = (&x * 2.0 + 1.0).exp().unwrap();   // recorded, not computed
//! lazulite::eval(&[&y]).unwrap();             // computed here
//! assert_eq!(y.dtype(), DType::Float32);
//! ```
//!
//! Layers, bottom up: [`dtype`] and [`shape`] → `backend` (buffers, memory, CPU kernels)
//! → `primitive` → [`Array`] and the graph → [`eval`] → ops (one private module per
//! family).
//!
//! The ops live at the crate root, as in `mlx.core` ([`add`], [`matmul`], [`take`], ...),
//! with MLX's namespaces as modules: [`fft`], [`linalg`], [`fast`], [`random`],
//! [`distributed`] and [`export`].

#![deny(missing_docs)]

pub mod dtype;
pub mod element;
pub mod error;
pub mod shape;

mod array;
mod backend;
mod dataflow;
mod eval;
pub mod export;
mod graph_print;
mod io;
mod ops;
mod primitive;
mod print;
mod raw;
mod transforms;

/// The Rust examples of the guide (`docs/*.md`) and of the README, compiled and run as
/// doctests; their printed lines are checked by hidden assertions. Every page with a
/// Rust example is listed (python/tests/test_docs.py checks that).
#[cfg(doctest)]
mod guide {
    #[doc = include_str!("../../../README.md")]
    mod readme {}
    #[doc = include_str!("../../../docs/quickstart.md")]
    mod quickstart {}
    #[doc = include_str!("../../../docs/lazy-evaluation.md")]
    mod lazy_evaluation {}
    #[doc = include_str!("../../../docs/transforms.md")]
    mod transforms {}
    #[doc = include_str!("../../../docs/compile.md")]
    mod compile {}
    #[doc = include_str!("../../../docs/indexing.md")]
    mod indexing {}
    #[doc = include_str!("../../../docs/interop.md")]
    mod interop {}
    #[doc = include_str!("../../../docs/saving-loading.md")]
    mod saving_loading {}
    #[doc = include_str!("../../../docs/dataflow.md")]
    mod dataflow {}
    #[doc = include_str!("../../../docs/export.md")]
    mod export {}
}

pub use array::Array;
pub use backend::memory::{
    clear_cache, get_active_memory, get_cache_memory, get_memory_limit, get_peak_memory,
    reset_peak_memory, set_allocation_limit, set_cache_limit, set_memory_limit, set_wired_limit,
};
pub use backend::op::BinaryOp;
pub use dataflow::placeholder;
pub use dtype::{can_cast, finfo, iinfo, issubdtype, promote_types, Category, DType, FInfo, IInfo};
pub use element::{Complex, Element, Scalar};
pub use error::{Error, ErrorKind, Result};
pub use eval::{async_eval, eval, start_profile, stop_profile, synchronize, KernelTime};
pub use graph_print::{evaluation_counts, export_to_dot, primitive_types, to_dot, to_trace};
pub use io::{
    load, load_bytes, save, save_gguf, save_safetensors, savez, savez_compressed, Loaded,
    MetadataValue,
};
// The ops: functions and their argument types at the root, as in `mlx.core`, and MLX's
// namespaces as modules. `ops/mod.rs` lists them; the op families themselves are private.
pub use ops::*;
pub use ops::{distributed, fast, fft, linalg, random};
pub use print::{get_printoptions, set_printoptions};
pub use raw::{get_array_buffer_size, RawData};
pub use shape::{broadcast_shapes, Axes};
pub use transforms::{
    checkpoint, compile, compile_shapeless, custom_function, grad, jvp, set_compile_enabled,
    value_and_grad, value_and_grad_argnums, value_and_grad_aux, vjp, vmap, Compiled,
    CustomFunction, Tree,
};
