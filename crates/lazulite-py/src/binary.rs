//! `mlx.core`'s two-input elementwise functions, generated from the core crate's table of
//! them (`lazulite::binary_functions!`), as `unary.rs` does for one input. Each gets MLX's
//! usual form, `f(a, b, stream=None)` with scalars or arrays, and its docstring from the
//! summary of its Rust doc. Those MLX binds positional-only (`power`, `maximum`,
//! `minimum`, `arctan2`, `logaddexp`, `logical_and`, `logical_or`) are skipped here and
//! bound in `ops.rs`.

use crate::bind;
use crate::convert::{paired, Opd};
use lazulite as lz;

/// Collects the generated lines into one [`bind!`](crate::bind) table, skipping the
/// functions `ops.rs` binds in MLX's other forms.
// The lines of a docstring begin with a space, as `///` lines do (PyO3 removes one).
macro_rules! binary_table {
    ([$($lines:tt)*]) => {
        bind! {
            functions { $($lines)* }
            methods {}
        }
    };
    ([$($lines:tt)*] power $s:literal, $($rest:tt)*) => { binary_table!([$($lines)*] $($rest)*); };
    ([$($lines:tt)*] maximum $s:literal, $($rest:tt)*) => { binary_table!([$($lines)*] $($rest)*); };
    ([$($lines:tt)*] minimum $s:literal, $($rest:tt)*) => { binary_table!([$($lines)*] $($rest)*); };
    ([$($lines:tt)*] arctan2 $s:literal, $($rest:tt)*) => { binary_table!([$($lines)*] $($rest)*); };
    ([$($lines:tt)*] logaddexp $s:literal, $($rest:tt)*) => { binary_table!([$($lines)*] $($rest)*); };
    ([$($lines:tt)*] logical_and $s:literal, $($rest:tt)*) => { binary_table!([$($lines)*] $($rest)*); };
    ([$($lines:tt)*] logical_or $s:literal, $($rest:tt)*) => { binary_table!([$($lines)*] $($rest)*); };
    ([$($lines:tt)*] $name:ident $summary:literal, $($rest:tt)*) => {
        binary_table!([$($lines)*
            #[doc = $summary]
            #[doc = ""]
            #[doc = " Args:"]
            #[doc = "     a (array): Input array or scalar."]
            #[doc = "     b (array): Input array or scalar."]
            #[doc = ""]
            #[doc = " Returns:"]
            #[doc = "     array: The result, element by element, with broadcasting."]
            $name(a: Opd, b: Opd, stream) => paired(a, b, lz::$name);
        ] $($rest)*);
    };
    ($($rest:tt)*) => { binary_table!([] $($rest)*); };
}

lz::binary_functions!(binary_table);
