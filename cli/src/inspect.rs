//! `bmoe inspect`: what the streamer will see in a model: shape, dense and expert bytes,
//! entry size per layer, worst-case token cycle, types by tensor kind, shards.

use std::path::PathBuf;

use anyhow::Context as _;
use bmoe::engine::model::ModelIndex;
use serde_json::json;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The model (the first shard of a split model).
    model: PathBuf,
    /// One JSON object on stdout instead of text.
    #[arg(long)]
    json: bool,
    /// Also report the token cycle at this top-k (default: the model's own k).
    #[arg(long)]
    k: Option<u32>,
}

const MIB: f64 = (1u64 << 20) as f64;

pub fn run(args: Args) -> anyhow::Result<()> {
    let idx = match ModelIndex::open(&args.model) {
        Ok(i) => i,
        // No native recipe: what the generic decoder streams of it.
        Err(e) if e.not_streamable() => return generic(&args, e),
        Err(e) => return Err(e).with_context(|| format!("indexing {}", args.model.display())),
    };
    let shape = idx.shape();
    let k = shape.n_expert_used;
    let entries = idx.entry_bytes();
    let widest = idx.widest_layer();
    let types: serde_json::Map<String, serde_json::Value> = idx
        .types_by_kind()
        .into_iter()
        .map(|(kind, tys)| {
            (kind, json!(tys.into_iter().map(|(t, n)| (t.to_string(), json!(n))).collect::<serde_json::Map<_, _>>()))
        })
        .collect();
    let mut out = json!({
        "arch": idx.arch.name,
        "n_layer": shape.n_layer,
        "n_moe_layer": idx.layers.len(),
        "n_expert": shape.n_expert,
        "n_expert_used": k,
        "n_embd": shape.n_embd,
        "n_ff_exp": shape.n_ff_exp,
        "file_bytes": idx.file.file_bytes(),
        "dense_bytes": idx.dense_bytes(),
        "expert_bytes": idx.expert_bytes(),
        "entry_bytes": entries,
        "params_total": idx.n_params(),
        "params_active": idx.active_params(k),
        "params_embedding": idx.embedding_params(),
        "cycle_bytes": idx.cycle_bytes(k),
        "cycle_mib": idx.cycle_bytes(k) as f64 / MIB,
        "widest_layer": widest.map(|l| l.layer),
        "widest_entry_bytes": widest.map(|l| l.entry_bytes()),
        "types": types,
        "shards": idx.file.shards.iter().map(|s| json!({"path": s.path.display().to_string(), "bytes": s.header.file_len, "tensors": s.header.tensors.len()})).collect::<Vec<_>>(),
    });
    if let Some(kk) = args.k {
        out["cycle_k"] = json!(kk);
        out["cycle_mib_at_k"] = json!(idx.cycle_bytes(kk) as f64 / MIB);
    }
    if args.json {
        println!("{out}");
        return Ok(());
    }
    println!("model:   {}", args.model.display());
    println!(
        "arch:    {}  layers {} ({} MoE)  experts {}  top-k {}  n_embd {}  expert ffn {}",
        idx.arch.name,
        shape.n_layer,
        idx.layers.len(),
        shape.n_expert,
        k,
        shape.n_embd,
        shape.n_ff_exp
    );
    println!(
        "bytes:   file {} ({:.2} GB)  dense {} ({:.1} MiB)  experts {} ({:.1} MiB)",
        idx.file.file_bytes(),
        idx.file.file_bytes() as f64 / 1e9,
        idx.dense_bytes(),
        idx.dense_bytes() as f64 / MIB,
        idx.expert_bytes(),
        idx.expert_bytes() as f64 / MIB
    );
    println!(
        "params:  {:.3} B total, {:.3} B active per token (dense + top-{k} experts; {:.3} B without the \
         input embedding)",
        idx.n_params() as f64 / 1e9,
        idx.active_params(k) as f64 / 1e9,
        (idx.active_params(k) - idx.embedding_params()) as f64 / 1e9
    );
    let mut sizes: Vec<(u64, usize)> = Vec::new();
    for &e in &entries {
        match sizes.iter_mut().find(|(s, _)| *s == e) {
            Some((_, n)) => *n += 1,
            None => sizes.push((e, 1)),
        }
    }
    let sizes: Vec<String> = sizes.iter().map(|(s, n)| format!("{n} layers × {s} B")).collect();
    println!("entry:   {}", sizes.join(", "));
    if let Some(w) = widest {
        println!("widest:  layer {} ({} B per entry)", w.layer, w.entry_bytes());
    }
    println!("cycle:   {:.1} MiB at k={k} (Σ layers min(k, n_expert) × entry)", idx.cycle_bytes(k) as f64 / MIB);
    if let Some(kk) = args.k {
        println!("cycle:   {:.1} MiB at k={kk}", idx.cycle_bytes(kk) as f64 / MIB);
    }
    println!("types:");
    for (kind, tys) in idx.types_by_kind() {
        let t: Vec<String> = tys.iter().map(|(t, n)| format!("{t} ×{n}")).collect();
        println!("  {kind:<28} {}", t.join(", "));
    }
    println!("shards:  {}", idx.file.shards.len());
    for s in &idx.file.shards {
        println!("  {} ({} bytes, {} tensors)", s.path.display(), s.header.file_len, s.header.tensors.len());
    }
    Ok(())
}

/// `inspect` of a model only the generic decoder (llama.cpp's graph) runs: the experts found by
/// their tensor names.
fn generic(args: &Args, native: bmoe::engine::model::Error) -> anyhow::Result<()> {
    use bmoe::engine::generic::index::GenericIndex;
    let file =
        bmoe::engine::gguf::open_model(&args.model).with_context(|| format!("reading {}", args.model.display()))?;
    let idx = GenericIndex::new(file)
        .with_context(|| format!("indexing {} (no native decoder either: {native})", args.model.display()))?;
    let k = idx.n_expert_used;
    let entries: Vec<u64> = idx.layers.iter().map(|l| l.entry_bytes()).collect();
    let projections: Vec<serde_json::Value> = idx
        .layers
        .iter()
        .map(|l| {
            json!(l
                .tensors
                .iter()
                .map(|t| (t.proj.name().to_string(), json!(t.bytes_per_expert)))
                .collect::<serde_json::Map<_, _>>())
        })
        .collect();
    let mut types: std::collections::BTreeMap<String, std::collections::BTreeMap<&str, u32>> = Default::default();
    for t in &idx.file.tensors {
        *types
            .entry(bmoe::engine::model::tensor_kind(&t.name).to_string())
            .or_default()
            .entry(t.ty.name())
            .or_default() += 1;
    }
    let out = json!({
        "arch": idx.arch,
        "decoder": "generic",
        "n_layer": idx.n_layer(),
        "n_moe_layer": idx.layers.len(),
        "n_expert": idx.n_expert,
        "n_expert_used": k,
        "file_bytes": idx.file.file_bytes(),
        "dense_bytes": idx.dense_bytes(),
        "expert_bytes": idx.expert_bytes(),
        "entry_bytes": entries,
        "projection_bytes": projections,
        "params_total": idx.n_params(),
        "params_nextn": idx.nextn_params(),
        "params_active": idx.active_params(k),
        "cycle_bytes": idx.cycle_bytes(k),
        "cycle_mib": idx.cycle_bytes(k) as f64 / MIB,
        "cycle_mib_at_k": args.k.map(|kk| idx.cycle_bytes(kk) as f64 / MIB),
        "types": types,
        "shards": idx.file.shards.iter().map(|s| json!({"path": s.path.display().to_string(), "bytes": s.header.file_len, "tensors": s.header.tensors.len()})).collect::<Vec<_>>(),
    });
    if args.json {
        println!("{out}");
        return Ok(());
    }
    println!("model:   {}", args.model.display());
    println!(
        "arch:    {} (generic decoder: llama.cpp's graph)  layers {} ({} MoE)  experts {}  top-k {k}",
        idx.arch,
        idx.n_layer().map_or("?".into(), |n| n.to_string()),
        idx.layers.len(),
        idx.n_expert
    );
    println!(
        "bytes:   file {} ({:.2} GB)  dense {} ({:.1} MiB)  experts {} ({:.1} MiB)",
        idx.file.file_bytes(),
        idx.file.file_bytes() as f64 / 1e9,
        idx.dense_bytes(),
        idx.dense_bytes() as f64 / MIB,
        idx.expert_bytes(),
        idx.expert_bytes() as f64 / MIB
    );
    let nextn = match idx.nextn_params() {
        0 => String::new(),
        n => format!(
            " ({:.3} B of them in the {} NextN/MTP block(s), which a decode does not read)",
            n as f64 / 1e9,
            idx.file.metadata().get_u64(&format!("{}.nextn_predict_layers", idx.arch)).unwrap_or(0)
        ),
    };
    println!(
        "params:  {:.3} B total{nextn}, {:.3} B active per token (dense + top-{k} experts)",
        idx.n_params() as f64 / 1e9,
        idx.active_params(k) as f64 / 1e9
    );
    let mut sizes: Vec<(String, usize)> = Vec::new();
    for l in &idx.layers {
        let parts: Vec<String> =
            l.tensors.iter().map(|t| format!("{} {}", t.proj.name(), t.bytes_per_expert)).collect();
        let e = format!("{} B ({})", l.entry_bytes(), parts.join(", "));
        match sizes.iter_mut().find(|(s, _)| *s == e) {
            Some((_, n)) => *n += 1,
            None => sizes.push((e, 1)),
        }
    }
    let sizes: Vec<String> = sizes.iter().map(|(s, n)| format!("{n} layers × {s}")).collect();
    println!("entry:   {}", sizes.join("; "));
    println!("cycle:   {:.1} MiB at k={k} (Σ layers min(k, n_expert) × entry)", idx.cycle_bytes(k) as f64 / MIB);
    if let Some(kk) = args.k {
        println!("cycle:   {:.1} MiB at k={kk}", idx.cycle_bytes(kk) as f64 / MIB);
    }
    println!("types:");
    for (kind, tys) in types {
        let t: Vec<String> = tys.iter().map(|(t, n)| format!("{t} ×{n}")).collect();
        println!("  {kind:<28} {}", t.join(", "));
    }
    println!("shards:  {}", idx.file.shards.len());
    for s in &idx.file.shards {
        println!("  {} ({} bytes, {} tensors)", s.path.display(), s.header.file_len, s.header.tensors.len());
    }
    Ok(())
}
