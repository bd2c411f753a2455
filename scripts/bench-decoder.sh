#!/usr/bin/env bash
# Our decoder against llama.cpp on mmap, resident, side by side in one run: alternates
# `bmoe run --engine bmoe`, `--engine llama` (plain llama.cpp as a user runs it, with its
# repacked weight layouts) and `--engine llama-plain` (llama.cpp without them: the same ggml
# kernels ours runs), ROUNDS times, and prints medians and ratios of prefill and decode tok/s
# (docs/benchmarks.md quotes its output). Usage:
#   scripts/bench-decoder.sh [MODEL] [ROUNDS] [THREADS] [N_PREDICT] [PROMPT_WORDS]
# With no MODEL it synthesizes models/bench-small-q4_k_m.gguf. Env: BMOE (the binary).
set -euo pipefail
cd "$(dirname "$0")/.."
BMOE=${BMOE:-target/release/bmoe}
M=${1:-models/bench-small-q4_k_m.gguf}
ROUNDS=${2:-5}
T=${3:-2}
N=${4:-64}
WORDS=${5:-200}
mkdir -p models
[ -f "$M" ] || "$BMOE" synth --shape small --quant q4_k_m --seed 1 -o "$M" >&2
PROMPT=$(python3 -c "import random; random.seed(1); print(' '.join(random.choice(['the','river','stone','quiet','seven','north','light','under','paper','engine']) for _ in range($WORDS)))")
OUT=$(mktemp)
echo "# $(date -u +%FT%TZ) $(uname -r) model=$M rounds=$ROUNDS threads=$T n=$N load=$(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
  for e in bmoe llama llama-plain; do
    extra=(); [ "$e" = bmoe ] && extra=(--moe-stream off)
    line=$("$BMOE" run -m "$M" -p "$PROMPT" -n "$N" -t "$T" --temp 0 --ignore-eos --engine "$e" "${extra[@]}" 2>&1 >/dev/null |
      python3 -c '
import re,sys
s=sys.stdin.read()
p=re.search(r"prefill: (\d+) tokens in [\d.]+ s, ([\d.]+) tok/s", s)
g=re.search(r"generation: (\d+) tokens, [\d.]+ s/token, ([\d.]+) tok/s", s)
print(p.group(1), p.group(2), g.group(1), g.group(2))')
    echo "$e $line" | tee -a "$OUT"
  done
done
python3 - "$OUT" <<'PY'
import sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
med = {}
for e in ("bmoe", "llama", "llama-plain"):
    r = [x for x in rows if x[0] == e]
    med[e] = (st.median(float(x[2]) for x in r), st.median(float(x[4]) for x in r))
    print(f"{e:12s} prefill {med[e][0]:8.1f} tok/s ({r[0][1]} tokens)  decode {med[e][1]:7.2f} tok/s ({r[0][3]} tokens)  medians of {len(r)}")
for ref in ("llama", "llama-plain"):
    print(f"bmoe / {ref:11s} prefill {med['bmoe'][0] / med[ref][0]:.3f}  decode {med['bmoe'][1] / med[ref][1]:.3f}")
PY
rm -f "$OUT"
