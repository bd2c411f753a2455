#!/usr/bin/env bash
# The README's test command: installs missing prerequisites, then checks the prerequisite
# detection itself, the other platforms' builds (cargo check for Android, Windows, macOS), the
# docs (warnings are errors), runs every test of the workspace and the server against real
# HTTP clients. Extra arguments go to
# `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/prereqs.sh --test
echo "== prerequisite detection (libclang as bindgen finds it)"
./scripts/tests/prereqs-libclang.sh
echo "== cross-target checks"
./scripts/cross-check.sh
echo "== cargo doc --no-deps (warnings are errors)"
RUSTDOCFLAGS=-Dwarnings cargo doc -q --no-deps --workspace
echo "== cargo test --workspace --all-targets"
cargo test --workspace --all-targets "$@"
echo "== bmoe serve against the openai Python client, curl and http.client"
BMOE=target/debug/bmoe ./scripts/serve-test.sh
echo "== cargo test --doc (the facade's example runs)"
cargo test --workspace --doc "$@"
echo "== fuzzing the GGUF reader for ${BMOE_FUZZ_SECONDS:-60} s"
./scripts/fuzz.sh "${BMOE_FUZZ_SECONDS:-60}"
