#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| rocetop_fuzz::config_loader(data));
