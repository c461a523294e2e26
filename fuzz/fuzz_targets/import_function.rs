#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| lazulite_fuzz::import_function(data));
