#!/usr/bin/env bash
# The README's test command: installs missing prerequisites, then runs every
# test of the workspace. Extra arguments go to `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/prereqs.sh
cargo test --workspace --all-targets "$@"
