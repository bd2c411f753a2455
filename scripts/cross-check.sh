#!/usr/bin/env bash
# `cargo check` of the crates that build without a C toolchain for the target (the read engine
# and the pure-Rust engine: GGUF reader, index, cache, synth) for the platforms the project
# claims besides this one: Android (io_uring, registered buffers and O_DIRECT compiled in),
# Windows (the pread fallback on unbuffered handles) and macOS (the pread fallback with
# F_NOCACHE). Warnings are errors. A target rustup cannot add is reported as skipped, with the
# reason, on one line; it never passes silently. Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(aarch64-linux-android x86_64-pc-windows-gnu x86_64-apple-darwin)
installed=$(rustup target list --installed 2>/dev/null || true)
checked=0
for t in "${targets[@]}"; do
  if ! grep -qx "$t" <<<"$installed"; then
    if ! out=$(rustup target add "$t" 2>&1); then
      echo "cross-check: SKIPPED $t: rustup could not add the target: $(tail -n1 <<<"$out")"
      continue
    fi
  fi
  start=$(date +%s)
  RUSTFLAGS=-Dwarnings cargo check -q --target "$t" -p bmoe-uring-io -p bmoe-engine --no-default-features
  echo "cross-check: $t: bmoe-uring-io and bmoe-engine (no ffi) check clean in $(( $(date +%s) - start ))s"
  checked=$((checked + 1))
done
echo "cross-check: $checked of ${#targets[@]} targets checked"
