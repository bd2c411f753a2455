//! `arch::llama_moe::LLAMA_MOE_ARCHS` is what the vendored llama.cpp says: derived again from
//! its source in the cargo registry (the version Cargo.lock pins), it must be the same list. A
//! machine without that source (a vendored or offline build) skips with a printed reason.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use bmoe_engine::arch::llama_moe::{ENCODERS, LLAMA_MOE_ARCHS};

/// The llama.cpp source directory of the `llama-cpp-sys-2` version Cargo.lock pins.
fn vendored_llama_cpp() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?;
    let lock = std::fs::read_to_string(root.join("Cargo.lock")).ok()?;
    let at = lock.find("name = \"llama-cpp-sys-2\"")?;
    let version = lock[at..].lines().nth(1)?.strip_prefix("version = \"")?.strip_suffix('"')?.to_string();
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
    let registry = std::fs::read_dir(home.join("registry/src")).ok()?;
    registry
        .flatten()
        .map(|d| d.path().join(format!("llama-cpp-sys-2-{version}/llama.cpp")))
        .find(|p| p.join("src/llama-model.cpp").is_file())
}

/// `(LLM_ARCH_X, llama_model_y)` of every case of `llama_model_mapping`.
fn mapping(model_cpp: &str) -> Vec<(String, String)> {
    let body = &model_cpp[model_cpp.find("llama_model_mapping(").expect("llama_model_mapping")..];
    let body = &body[..body.find("\n}\n").expect("its end")];
    body.split("case ")
        .skip(1)
        .filter_map(|c| {
            let arch = c.split(':').next()?.trim().to_string();
            let class = c.split("return new ").nth(1)?.split('(').next()?.trim().to_string();
            Some((arch, class))
        })
        .collect()
}

/// `LLM_ARCH_X` → its `general.architecture` name, from `{ LLM_ARCH_X, "name" },` lines.
fn arch_name(arch_cpp: &str, arch: &str) -> Option<String> {
    arch_cpp.lines().find_map(|l| {
        let l = l.trim().strip_prefix('{')?.trim();
        let rest = l.strip_prefix(arch)?.trim_start().strip_prefix(',')?.trim_start().strip_prefix('"')?;
        Some(rest.split('"').next()?.to_string())
    })
}

#[test]
fn the_table_is_what_the_vendored_llama_cpp_says() {
    let Some(src) = vendored_llama_cpp() else {
        eprintln!("skipped: the vendored llama.cpp source is not in this machine's cargo registry");
        return;
    };
    let model_cpp = std::fs::read_to_string(src.join("src/llama-model.cpp")).unwrap();
    let arch_cpp = std::fs::read_to_string(src.join("src/llama-arch.cpp")).unwrap();
    let models: Vec<String> = std::fs::read_dir(src.join("src/models"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "cpp"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    let experts = ["FFN_GATE_EXPS", "FFN_UP_EXPS", "FFN_DOWN_EXPS", "FFN_GATE_UP_EXPS"];
    let mut derived = BTreeSet::new();
    let cases = mapping(&model_cpp);
    assert!(cases.len() > 100, "only {} architectures parsed from llama_model_mapping", cases.len());
    for (arch, class) in cases {
        let loader = format!("{class}::load_arch_tensors");
        let moe = models.iter().filter(|m| m.contains(&loader)).any(|m| {
            experts.iter().any(|x| {
                let t = format!("LLM_TENSOR_{x}");
                m.match_indices(&t)
                    .any(|(i, _)| !m[i + t.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_'))
            })
        });
        if moe {
            derived.insert(arch_name(&arch_cpp, &arch).unwrap_or_else(|| panic!("no name for {arch}")));
        }
    }
    let table: BTreeSet<String> = LLAMA_MOE_ARCHS.iter().chain(ENCODERS).map(|s| s.to_string()).collect();
    let missing: Vec<&String> = derived.difference(&table).collect();
    let extra: Vec<&String> = table.difference(&derived).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "arch::llama_moe is out of date with {}: add {missing:?}, remove {extra:?}",
        src.display()
    );
    let mut sorted = LLAMA_MOE_ARCHS.to_vec();
    sorted.sort_unstable();
    assert_eq!(sorted, LLAMA_MOE_ARCHS, "keep the table sorted");
}
