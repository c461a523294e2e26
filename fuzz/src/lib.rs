//! What every fuzz target does: write the input as a file of one format, load it with
//! its metadata where the format has some, and evaluate every array. Errors are fine;
//! a panic, an abort or an out-of-memory is a bug.

use lazulite::{load, Loaded};
use std::path::PathBuf;

/// One file per process and format, rewritten for each input.
fn scratch(ext: &str) -> PathBuf {
    std::env::temp_dir().join(format!("lazulite_fuzz_{}.{ext}", std::process::id()))
}

pub fn load_bytes(data: &[u8], ext: &str) {
    // Loaded arrays are capped well below the fuzzer's RSS limit: a reader that trusts a
    // size from the header fails here instead of being killed.
    lazulite::set_allocation_limit(256 << 20);
    let path = scratch(ext);
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let metadata = ext == "safetensors" || ext == "gguf";
    let arrays = match load(&path, None, metadata) {
        Ok(Loaded::Array(a)) => vec![a],
        Ok(Loaded::Arrays(m)) | Ok(Loaded::WithMetadata(m, _)) => m.into_values().collect(),
        Err(_) => return,
    };
    for a in &arrays {
        let _ = a.eval();
    }
}

/// Imports an MLX function file from `data` and runs each of its traces on zeros of its
/// signature.
pub fn import_function(data: &[u8]) {
    lazulite::set_allocation_limit(256 << 20);
    let Ok(f) = lazulite::export::import_function_bytes(data.to_vec()) else {
        return;
    };
    for s in f.signatures() {
        let Ok(mut inputs) = s
            .inputs
            .iter()
            .map(|(shape, dtype)| lazulite::zeros(shape, *dtype))
            .collect::<Result<Vec<_>, _>>()
        else {
            return;
        };
        let values = inputs.split_off(inputs.len() - s.kwarg_keys.len());
        let kwargs = s.kwarg_keys.iter().cloned().zip(values).collect();
        if let Ok(outputs) = f.call(&inputs, &kwargs) {
            for a in &outputs {
                let _ = a.eval();
            }
        }
    }
}
