//! NumPy-style indexing: the `Gather` and `Scatter` primitives, [`take`],
//! [`take_along_axis`], [`put_along_axis`], the [`Index`] expression (with the [`idx!`](crate::idx!)
//! macro), [`index`], [`index_put`] and [`at`], and the data-dependent ops on masks
//! ([`nonzero`], [`argwhere`], [`unique`]).
//!
//! Unlike MLX, indices are bounds-checked: a static integer out of range is an
//! `IndexError` when the op is recorded, an out-of-range value inside an index array is
//! an `IndexError` from `eval` (the gather/scatter kernel checks each index as it reads
//! it). Boolean masks are supported; since the shape of `a[mask]` depends on the mask's
//! values, the mask is evaluated when the index is recorded (so this cannot run inside
//! `vmap`, which reports it); `a[mask] = scalar` with a full-shape mask is a lazy `where`.
//!
//! One file per concept: the two primitives and their rules (`gather_scatter`), index
//! expressions (`expression`), indexing along one axis (`take`), windows at a lazy start
//! (`dynamic_slice`), and the ops whose result's size depends on the data
//! (`data_dependent`).

mod data_dependent;
mod dynamic_slice;
mod expression;
mod gather_scatter;
mod take;

pub use data_dependent::{argwhere, nonzero, unique, unique_all, Unique};
pub use dynamic_slice::{dynamic_slice, dynamic_slice_update};
pub(crate) use expression::masked_scatter;
pub use expression::{at, index, index_put, At, Index};
pub(crate) use gather_scatter::{gather, scatter, ScatterMode};
pub(crate) use take::scatter_add_along_axis;
pub use take::{put_along_axis, take, take_along_axis, take_kernel_for_bench};
