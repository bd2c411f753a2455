#!/usr/bin/env bash
# The generic decoder past RAM ([generic] issue): llama.cpp on mmap, the native decoder serial
# and with overlap, and the generic decoder (llama.cpp's graph, the experts streamed in) with
# per-projection pipelining + look-ahead and with pipelining alone, at one fixed budget and at
# `auto`. Each budget is one `bmoe-bench protocol` run: RAM held away (--ram-gb), the page cache
# dropped before every cell, a fio window before every cell and after the last, cells
# interleaved round by round, medians; the load seconds (and llama.cpp's load read for the
# generic cells) are in its prefill table.
# Usage: scripts/bench-generic.sh MODEL [RAM_GB] [ROUNDS] [N] [BUDGETS]
#   MODEL    e.g. models/qwen3-30b-a3b-q4_k_m.gguf (bmoe synth --shape qwen3-30b-a3b -o …)
#   RAM_GB   left to the engine and the page cache (default 8)
#   ROUNDS   default 2;  N: decode tokens per run (default 32);  BUDGETS: default "4000 auto"
# Env: BENCH (the bmoe-bench binary, default target/release/bmoe-bench), OUT (default
# bench-out), CELLS (which of: llama-mmap native-serial native-overlap generic generic-pipeline).
set -euo pipefail
cd "$(dirname "$0")/.."
M=${1:?usage: scripts/bench-generic.sh MODEL [RAM_GB] [ROUNDS] [N] [BUDGETS]}
RAM=${2:-8}
ROUNDS=${3:-2}
N=${4:-32}
BUDGETS=${5:-4000 auto}
BENCH=${BENCH:-target/release/bmoe-bench}
OUT=${OUT:-bench-out}
CELLS=${CELLS:-llama-mmap native-serial native-overlap generic generic-pipeline}
[ -x "$BENCH" ] || { echo "bench-generic: no $BENCH (cargo build --release -p bmoe-cli -p bmoe-bench)" >&2; exit 1; }
[ -f "$M" ] || { echo "bench-generic: no model $M" >&2; exit 1; }
for budget in $BUDGETS; do
  c="--cache-mb $budget"
  [ "$budget" = auto ] || c="$c --force-cache"
  args=()
  for cell in $CELLS; do
    case $cell in
      llama-mmap) args+=(--cell "llama-mmap=--engine llama-plain") ;;
      native-serial) args+=(--cell "native-serial=$c --decoder native --overlap off") ;;
      native-overlap) args+=(--cell "native-overlap=$c --decoder native --overlap full") ;;
      generic) args+=(--cell "generic=$c --decoder generic --overlap full") ;;
      generic-pipeline) args+=(--cell "generic-pipeline=$c --decoder generic --overlap pipeline") ;;
      *) echo "bench-generic: unknown cell $cell" >&2; exit 1 ;;
    esac
  done
  out="$OUT/generic-$(basename "$M" .gguf)-$budget-$(date -u +%Y%m%dT%H%M%S)"
  echo "== bench-generic: budget $budget, $ROUNDS rounds, -n $N, RAM left $RAM GiB -> $out"
  "$BENCH" protocol -m "$M" --ram-gb "$RAM" --rounds "$ROUNDS" -n "$N" --cells none "${args[@]}" \
    --run-args "-t 2" --fio-every-cell 3 --out "$out"
  cat "$out/summary.md"
done
