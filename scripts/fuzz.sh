#!/usr/bin/env bash
# Runs the GGUF fuzz target for a bounded time (default 60 s): cargo-fuzz (installed when
# missing) with libFuzzer and AddressSanitizer, on stable through RUSTC_BOOTSTRAP=1 (the
# sanitizer flags are nightly-only). New inputs go to a temporary corpus seeded with
# fuzz/corpus/gguf_index (the tracked seeds are never modified); a crash fails this script and
# its input is in fuzz/artifacts/gguf_index/: copy it to fuzz/regressions/ so that
# engine/tests/fuzz_corpus.rs keeps it as a regression test. Where the toolchain cannot build
# the target, one line says it was skipped and why. Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
if ! command -v cargo-fuzz >/dev/null 2>&1; then
  if ! out=$(cargo install cargo-fuzz --locked 2>&1); then
    echo "fuzz: SKIPPED: cargo-fuzz could not be installed: $(tail -n1 <<<"$out")"
    exit 0
  fi
fi
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
cd fuzz
if ! RUSTC_BOOTSTRAP=1 cargo fuzz build gguf_index >"$corpus/build.log" 2>&1; then
  echo "fuzz: SKIPPED: the fuzz target does not build with this toolchain: $(tail -n1 "$corpus/build.log")"
  exit 0
fi
start=$(date +%s)
RUSTC_BOOTSTRAP=1 cargo fuzz run gguf_index "$corpus" corpus/gguf_index -- -max_total_time="$seconds" \
  -print_final_stats=1 2>"$corpus/run.log" || { tail -n 40 "$corpus/run.log"; exit 1; }
runs=$(grep -o 'Done [0-9]* runs' "$corpus/run.log" | tail -n1)
echo "fuzz: gguf_index: ${runs:-done} in $(( $(date +%s) - start )) s, no crash ($(ls "$corpus" | wc -l) corpus inputs)"
