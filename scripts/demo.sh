#!/usr/bin/env bash
# The README's main-job command: installs missing prerequisites, builds bmoe in
# release mode and runs it. Arguments, if any, are passed to `bmoe`. With none it
# shows what this build does so far: the build stamp, the ggml self-check, a small
# synthetic qwen3moe model written into models/ and its index (`bmoe inspect`),
# and the read engine on that file (`bmoe iobench`, io_uring with O_DIRECT).
# Streaming a model (the engine's main job) replaces this once it lands.
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
"$bin" iobench --file "$model" --block 1M --lanes 4 --backend auto --seconds 3
