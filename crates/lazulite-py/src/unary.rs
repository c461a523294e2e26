//! `mlx.core`'s one-input elementwise functions, generated from the core crate's table of
//! them (`lazulite::unary_functions!`): a function added there is bound here without a
//! line of its own. Each gets MLX's usual form, `f(a, /, *, stream=None)`, and its
//! docstring from the summary of its Rust doc. The few that MLX binds in another form
//! (the predicates, `bitwise_invert`, `conjugate`) are skipped here and bound in `ops.rs`.

use crate::bind;
use crate::convert::Arr;
use lazulite as lz;

/// Collects the generated lines into one [`bind!`](crate::bind) table, skipping the
/// functions `ops.rs` binds in MLX's other forms.
// The lines of a docstring begin with a space, as `///` lines do (PyO3 removes one).
macro_rules! unary_table {
    ([$($lines:tt)*]) => {
        bind! {
            functions { $($lines)* }
            methods {}
        }
    };
    ([$($lines:tt)*] isnan $s:literal, $($rest:tt)*) => { unary_table!([$($lines)*] $($rest)*); };
    ([$($lines:tt)*] isinf $s:literal, $($rest:tt)*) => { unary_table!([$($lines)*] $($rest)*); };
    ([$($lines:tt)*] isposinf $s:literal, $($rest:tt)*) => { unary_table!([$($lines)*] $($rest)*); };
    ([$($lines:tt)*] isneginf $s:literal, $($rest:tt)*) => { unary_table!([$($lines)*] $($rest)*); };
    ([$($lines:tt)*] isfinite $s:literal, $($rest:tt)*) => { unary_table!([$($lines)*] $($rest)*); };
    ([$($lines:tt)*] bitwise_invert $s:literal, $($rest:tt)*) => { unary_table!([$($lines)*] $($rest)*); };
    ([$($lines:tt)*] conjugate $s:literal, $($rest:tt)*) => { unary_table!([$($lines)*] $($rest)*); };
    ([$($lines:tt)*] $name:ident $summary:literal, $($rest:tt)*) => {
        unary_table!([$($lines)*
            #[doc = $summary]
            #[doc = ""]
            #[doc = " Args:"]
            #[doc = "     a (array): Input array."]
            #[doc = ""]
            #[doc = " Returns:"]
            #[doc = "     array: The result, element by element."]
            $name(a: Arr, /, *, stream) => lz::$name(&a.0);
        ] $($rest)*);
    };
    ($($rest:tt)*) => { unary_table!([] $($rest)*); };
}

lz::unary_functions!(unary_table);
