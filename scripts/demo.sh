#!/usr/bin/env bash
# The README's main-job command: installs missing prerequisites, builds bmoe in
# release mode and runs it. Arguments, if any, are passed to `bmoe`; with none it
# prints the build stamp and runs the ggml self-check.
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
