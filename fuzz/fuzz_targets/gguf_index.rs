//! Fuzzes the GGUF header parser and the model index on arbitrary bytes: neither may panic,
//! abort or allocate without bound, and whatever they accept must be self-consistent (the checks
//! are `bmoe_engine::gguf::fuzz_check`, which the corpus regression test also runs).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| bmoe_engine::gguf::fuzz_check(data));
