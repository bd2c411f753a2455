//! The fuzz corpus and every input that ever crashed the fuzz target, as a regression test: each
//! goes through the fuzz target's own checks (`gguf::fuzz_check`) on every test run, so a fixed
//! crash stays fixed.

use std::path::Path;

#[test]
fn every_corpus_and_regression_input_passes_the_fuzz_checks() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
    let mut n = 0;
    for dir in ["corpus/gguf_index", "regressions"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else { continue };
        for e in entries {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "md") {
                continue;
            }
            let data = std::fs::read(&p).unwrap();
            bmoe_engine::gguf::fuzz_check(&data);
            n += 1;
        }
    }
    assert!(n >= 4, "the seed corpus is there ({n} inputs)");
}
