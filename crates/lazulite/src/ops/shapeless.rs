//! Whether ops are being recorded for a shapeless trace: `compile` and `export` set it,
//! the ops whose nodes depend on their inputs' shapes read it.

thread_local! {
    /// Whether a shapeless trace (compile or export) is running on this thread: ops then
    /// record shape-generic nodes where their result depends on their inputs' shapes
    /// (broadcasts against their peers, counts of elements, reshapes with `-1`).
    static SHAPELESS_TRACE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
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
