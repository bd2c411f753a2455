#!/usr/bin/env bash
# The README's test command: installs missing prerequisites, then checks the prerequisite
# detection itself, the other platforms' builds (cargo check for Android, Windows, macOS), the
# docs (warnings are errors), and runs every test of the workspace. Extra arguments go to
# `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/prereqs.sh
echo "== prerequisite detection (libclang as bindgen finds it)"
./scripts/tests/prereqs-libclang.sh
echo "== cross-target checks"
./scripts/cross-check.sh
echo "== cargo doc --no-deps (warnings are errors)"
RUSTDOCFLAGS=-Dwarnings cargo doc -q --no-deps --workspace
echo "== cargo test --workspace --all-targets"
cargo test --workspace --all-targets "$@"
echo "== cargo test --doc (the facade's example runs)"
cargo test --workspace --doc "$@"
echo "== fuzzing the GGUF reader for ${BMOE_FUZZ_SECONDS:-60} s"
./scripts/fuzz.sh "${BMOE_FUZZ_SECONDS:-60}"
