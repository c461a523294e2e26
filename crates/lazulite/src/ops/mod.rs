//! The public ops, one file per family. Each file holds the family's primitive(s) and
//! the functions that record them; shape and dtype are checked here, when recorded.

pub mod binary;
pub mod cast;
pub mod creation;
pub mod methods;
pub mod operand;
pub mod operators;
pub(crate) mod random;
pub mod unary;
pub mod view;

pub use binary::*;
pub use cast::astype;
pub use creation::*;
pub use operand::Operand;
pub use unary::*;
pub use view::{broadcast_to, reshape, slice, slice_update, transpose};
