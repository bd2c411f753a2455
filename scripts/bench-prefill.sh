#!/usr/bin/env bash
# Streamed prefill past RAM: llama.cpp on mmap vs serial vs pipelined without and with the
# prefill's read-ahead, with the prefill's lower bound, one bmoe-bench protocol run per prompt
# length (docs/benchmarks.md, "Prefill"). fio runs before every cell and after the last, and
# each run's bound takes the mean of the fio windows on either side of it (the disk here
# throttles and recovers within minutes).
#
#   scripts/bench-prefill.sh MODEL [RAM_GB] [WORDS:SEED...]
#
# WORDS:SEED: a prompt of WORDS random words from a 15-word list (Python's random, seeded);
# the default 23:6, 90:5 and 371:8 are the prompts of 128, 501 and 2048 tokens measured in the
# docs (bmoe synth's byte-level tokenizer). Env: ROUNDS (2), FIO_S (seconds of each fio
# window, 3), FIO_RW (read: sequential, as a prefill reads each layer's union in expert order;
# or randread), CELLS (the cells, default all four: llama-mmap serial pipelined read-ahead; also
# read-ahead-ub512, the last in passes of 512 tokens).
set -euo pipefail
model=${1:?model}
ram=${2:-8}
shift $(( $# >= 2 ? 2 : 1 ))
lengths=("${@:-23:6 90:5 371:8}")
bin=${BMOE_BENCH:-target/release/bmoe-bench}
rounds=${ROUNDS:-2}
cells=${CELLS:-llama-mmap serial pipelined read-ahead}
args=(--cells none)
for c in $cells; do
  case $c in
    llama-mmap) args+=(--cell "llama-mmap=--engine llama-plain") ;;
    serial) args+=(--cell "serial=--overlap off") ;;
    pipelined) args+=(--cell "pipelined=--overlap pipeline") ;;
    read-ahead) args+=(--cell "read-ahead=--overlap full") ;;
    read-ahead-ub512) args+=(--cell "read-ahead-ub512=--overlap full --ubatch 512") ;;
    *) echo "unknown cell $c" >&2; exit 2 ;;
  esac
done
for spec in ${lengths[@]}; do
  words=${spec%%:*} seed=${spec#*:}
  prompt=$(python3 -c "
import random; random.seed($seed); w='model expert route token cache flash read layer weight stream disk memory batch prompt answer'.split()
print(' '.join(random.choice(w) for _ in range($words)))")
  "$bin" protocol -m "$model" --ram-gb "$ram" "${args[@]}" --rounds "$rounds" -n 4 --temp 0 -p "$prompt" \
    --fio-seconds "${FIO_S:-3}" --fio-every-cell "${FIO_S:-3}" --fio-rw "${FIO_RW:-read}" \
    --out "bench-out/prefill-$words-words-$(date +%s)"
done
