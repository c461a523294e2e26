#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| lazulite_fuzz::load_bytes(data, "npy"));
