#!/usr/bin/env bash
# The README's main-job command: installs missing prerequisites, builds bmoe in
# release mode and runs it. Arguments, if any, are passed to `bmoe`. With none it prints
# the build stamp and the ggml self-check, synthesizes a small qwen3moe model into models/
# (once), shows its index, streams it with a cache of a third of its expert bytes (the
# telemetry goes to stderr), runs it resident, and says whether the two texts are identical.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/prereqs.sh
cargo build --release -p bmoe-cli
bin=target/release/bmoe
if [ $# -gt 0 ]; then
  exec "$bin" "$@"
fi
"$bin" --version
"$bin" selfcheck
mkdir -p models
model=models/demo-small-q4_k_m.gguf
[ -f "$model" ] || "$bin" synth --shape small --quant q4_k_m --seed 1 -o "$model"
"$bin" inspect "$model"
# Stream it with an expert cache of a third of its expert bytes, then run it resident, with
# the same sampler and seed (sampling, because greedy decoding of random weights keeps
# routing to the same few experts), and compare the two texts byte for byte.
budget=$("$bin" inspect "$model" --json | python3 -c 'import json,sys; print(max(1, json.load(sys.stdin)["expert_bytes"] // 3 // 2**20))')
prompt="The engine reads only the experts each token routes to"
tmp=$(mktemp -d)
echo "== streamed, --cache-mb $budget =="
"$bin" run -m "$model" -p "$prompt" -n 48 --temp 0.8 --seed 7 --cache-mb "$budget" | tee "$tmp/streamed.txt"
echo "== resident (--moe-stream off) =="
"$bin" run -m "$model" -p "$prompt" -n 48 --temp 0.8 --seed 7 --moe-stream off | tee "$tmp/resident.txt"
if cmp -s "$tmp/streamed.txt" "$tmp/resident.txt"; then
  echo "streamed output == resident output: identical ($(wc -c <"$tmp/streamed.txt") bytes)"
else
  echo "streamed output and resident output DIFFER" >&2
  exit 1
fi
