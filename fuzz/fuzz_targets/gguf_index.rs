//! Fuzzes the GGUF header parser and the model index on arbitrary bytes: neither may panic,
//! abort or allocate without bound, and whatever they accept must be self-consistent.
#![no_main]

use bmoe_engine::gguf::{self, GgufModel};
use bmoe_engine::model::ModelIndex;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(header) = gguf::parse(data, data.len() as u64) else { return };
    for t in &header.tensors {
        // The reader's promise: every tensor lies inside the file.
        assert!(t.offset >= header.data_offset);
        assert!(u128::from(t.offset) + u128::from(t.size) <= data.len() as u128);
    }
    let Ok(idx) = ModelIndex::new(GgufModel::single("fuzz.gguf".into(), header)) else { return };
    // The index's promise: every expert range lies inside its tensor, hence the file.
    for layer in &idx.layers {
        for e in 0..layer.n_expert {
            for (_, r) in layer.ranges(e) {
                assert!(u128::from(r.offset) + u128::from(r.len) <= data.len() as u128);
            }
        }
    }
    let _ = (idx.dense_bytes(), idx.expert_bytes(), idx.cycle_bytes(8), idx.widest_layer(), idx.types_by_kind());
});
