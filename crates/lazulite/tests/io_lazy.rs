//! Lazy loading of a file larger than the memory allowed: only the tensor used is read.
//! Its own test binary, because it sets the process-wide allocation limit.

use lazulite::{get_active_memory, load, set_allocation_limit, sum};
use std::io::Write;

const MB: u64 = 1 << 20;

/// Resident memory of this process in bytes (Linux), to see which pages were touched.
fn resident() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

#[test]
fn using_one_tensor_of_a_large_file_reads_only_that_tensor() {
    let dir = std::env::temp_dir().join(format!("lazulite_io_lazy_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("big.safetensors");
    // Three 64 MB float32 tensors, written as a sparse file (the data region is never
    // written; it reads as zeros) with one nonzero element in "b".
    let n = 64 * MB / 4;
    let header = format!(
        "{{\"a\":{{\"dtype\":\"F32\",\"shape\":[{n}],\"data_offsets\":[0,{b}]}},\
         \"b\":{{\"dtype\":\"F32\",\"shape\":[{n}],\"data_offsets\":[{b},{c}]}},\
         \"c\":{{\"dtype\":\"F32\",\"shape\":[{n}],\"data_offsets\":[{c},{d}]}}}}",
        b = 64 * MB,
        c = 128 * MB,
        d = 192 * MB
    );
    let header = format!("{header:<width$}", width = header.len().div_ceil(8) * 8);
    let mut file = std::fs::File::create(&path).unwrap();
    file.write_all(&(header.len() as u64).to_le_bytes())
        .unwrap();
    file.write_all(header.as_bytes()).unwrap();
    let data_start = 8 + header.len() as u64;
    file.set_len(data_start + 192 * MB).unwrap();
    use std::io::{Seek, SeekFrom};
    file.seek(SeekFrom::Start(data_start + 64 * MB + 4 * 7))
        .unwrap();
    file.write_all(&2.5f32.to_le_bytes()).unwrap();
    drop(file);

    // Far less than the file: loading and reducing one tensor must fit.
    set_allocation_limit((8 * MB) as usize);
    let before = resident();
    let arrays = load(&path, None, false).unwrap().into_arrays().unwrap();
    let total = sum(&arrays["b"], lazulite::Axes::All, false).unwrap();
    assert_eq!(total.item::<f32>().unwrap(), 2.5);
    assert!(get_active_memory() < (8 * MB) as usize);
    assert!(!arrays["a"].is_evaluated() && !arrays["c"].is_evaluated());
    if let (Some(before), Some(after)) = (before, resident()) {
        // "b" (64 MB) was read; "a" and "c" (128 MB) were not.
        assert!(
            after - before.min(after) < 100 * MB,
            "resident grew by {} MB",
            (after - before) / MB
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
