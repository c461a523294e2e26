//! What a running trace asks of the ops: `compile` and `export` set these flags, and the
//! ops whose recorded nodes depend on them read them.

use std::cell::Cell;

thread_local! {
    /// Whether a shapeless trace (compile or export) is running on this thread: ops then
    /// record shape-generic nodes where their result depends on their inputs' shapes
    /// (broadcasts against their peers, counts of elements, reshapes with `-1`).
    static SHAPELESS_TRACE: Cell<bool> = const { Cell::new(false) };

    /// Whether a function is being traced for export on this thread: ops that lazulite
    /// composes from others but MLX records as one primitive (`pad`, `put_along_axis`,
    /// ...) then record one node that the file holds as that primitive.
    static EXPORT_TRACE: Cell<bool> = const { Cell::new(false) };
}

/// Whether ops are being recorded for a shapeless compiled or exported function.
pub(crate) fn in_shapeless_trace() -> bool {
    SHAPELESS_TRACE.with(|s| s.get())
}

/// Runs `f` with the shapeless-trace flag set to `on`, restoring it afterwards.
pub(crate) fn with_shapeless_trace<T>(on: bool, f: impl FnOnce() -> T) -> T {
    let before = SHAPELESS_TRACE.with(|s| s.replace(on));
    let out = f();
    SHAPELESS_TRACE.with(|s| s.set(before));
    out
}

/// Whether ops are being recorded for an exported function.
pub(crate) fn in_export_trace() -> bool {
    EXPORT_TRACE.with(|s| s.get())
}

/// Runs `f` with the export-trace flag set, restoring it afterwards.
pub(crate) fn with_export_trace<T>(f: impl FnOnce() -> T) -> T {
    let before = EXPORT_TRACE.with(|s| s.replace(true));
    let out = f();
    EXPORT_TRACE.with(|s| s.set(before));
    out
}
