#!/usr/bin/env bash
# Streamed prefill past RAM: serial vs pipelined vs llama.cpp on mmap, with the prefill's lower
# bound, one bmoe-bench protocol run per prompt length (docs/benchmarks.md, "Prefill").
#
#   scripts/bench-prefill.sh MODEL [RAM_GB] [WORDS:SEED...]
#
# WORDS:SEED: a prompt of WORDS random words from a 15-word list (Python's random, seeded);
# the default 23:6 and 90:5 are the prompts of 128 and 501 tokens measured in the docs (bmoe
# synth's byte-level tokenizer).
set -euo pipefail
model=${1:?model}
ram=${2:-8}
shift $(( $# >= 2 ? 2 : 1 ))
lengths=("${@:-23:6 90:5}")
bin=${BMOE_BENCH:-target/release/bmoe-bench}
for spec in ${lengths[@]}; do
  words=${spec%%:*} seed=${spec#*:}
  prompt=$(python3 -c "
import random; random.seed($seed); w='model expert route token cache flash read layer weight stream disk memory batch prompt answer'.split()
print(' '.join(random.choice(w) for _ in range($words)))")
  "$bin" protocol -m "$model" --ram-gb "$ram" --cells llama-mmap --cell "serial=--overlap off" \
    --cell "pipelined=--overlap full" --rounds 2 -n 4 --temp 0 -p "$prompt" \
    --out "bench-out/prefill-$words-words-$(date +%s)"
done
