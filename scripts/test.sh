#!/usr/bin/env bash
# The README's test command: installs missing prerequisites, then checks the prerequisite
# detection itself, that vendor/llama-cpp-sys-2 is the registry crate plus patches/, the other
# platforms' builds (cargo check for Android, Windows, macOS), the docs (warnings are errors),
# runs every test of the workspace, the server against real HTTP clients, bmoe on aarch64 Linux
# under qemu-user and the read engine's tests on Windows under wine, the doc tests and the GGUF
# fuzzer. Each part's wall time is printed at the end.
# Extra arguments go to `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."
times=()
# part NAME CMD...: runs CMD under a `== NAME` header and records its wall time.
part() {
  local name=$1 start
  shift
  echo "== $name"
  start=$(date +%s)
  "$@"
  times+=("$(printf '%5d s  %s' $(( $(date +%s) - start )) "$name")")
}
all=$(date +%s)
part "prerequisites (scripts/prereqs.sh --test)" ./scripts/prereqs.sh --test
part "prerequisite detection (libclang as bindgen finds it)" ./scripts/tests/prereqs-libclang.sh
part "vendored llama.cpp is the registry crate plus patches/ (scripts/vendor-llama.sh --check)" \
  ./scripts/vendor-llama.sh --check
part "cross-target checks" ./scripts/cross-check.sh
part "cargo doc --no-deps (warnings are errors)" env RUSTDOCFLAGS=-Dwarnings cargo doc -q --no-deps --workspace
part "cargo test --workspace --all-targets" cargo test --workspace --all-targets "$@"
part "bmoe serve against the openai Python client, curl and http.client" \
  env BMOE=target/debug/bmoe ./scripts/serve-test.sh
part "other platforms run: aarch64 Linux under qemu-user, Windows under wine" ./scripts/cross-run.sh
part "cargo test --doc (the facade's example runs)" cargo test --workspace --doc "$@"
part "fuzzing the GGUF reader for ${BMOE_FUZZ_SECONDS:-60} s" ./scripts/fuzz.sh "${BMOE_FUZZ_SECONDS:-60}"
echo "== test.sh: wall time per part"
printf '%s\n' "${times[@]}"
printf '%5d s  all\n' $(( $(date +%s) - all ))
