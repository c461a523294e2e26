//! `set_compile_enabled(false)` makes compiled functions run their body on every call.
//! Its own binary: the switch is process-wide.

use lazulite::{compile, set_compile_enabled, Array};

#[test]
fn disabled_compile_runs_the_function() {
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = calls.clone();
    let compiled = compile(move |x: &[Array]| {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(vec![x[0].exp()?])
    });
    set_compile_enabled(false);
    compiled.call(&[Array::scalar(1.0f32)]).unwrap();
    compiled.call(&[Array::scalar(1.0f32)]).unwrap();
    set_compile_enabled(true);
    assert_eq!(calls.load(std::sync::atomic::Ordering::Relaxed), 2);
    assert_eq!(compiled.traces(), 0);
}
