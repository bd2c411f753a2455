#!/usr/bin/env bash
# Expert compute per MiB of expert weights, for `bmoe replay --hosts --expert-ms-per-mib`
# (docs/scale-out.md): resident decode (our decoder, --moe-stream off) of one model at top-1 and
# at its own top-k, alternating, ROUNDS times, sampled so that the routed experts come from RAM
# rather than the CPU cache. Everything but the routed experts is the same in both runs, so the
# difference of their median compute per token, over the bytes of the experts it adds
# (Σ_layers (k - 1) × entry bytes), is what one MiB of experts costs. The median of the rounds'
# differences is printed, with every round's.
# Usage: scripts/expert-compute.sh [MODEL] [ROUNDS] [THREADS] [N]
# With no MODEL it synthesizes models/bench-small-q4_k_m.gguf. Env: BMOE (the binary).
set -euo pipefail
cd "$(dirname "$0")/.."
BMOE=${BMOE:-target/release/bmoe}
M=${1:-models/bench-small-q4_k_m.gguf}
ROUNDS=${2:-5}
T=${3:-2}
N=${4:-128}
mkdir -p models
[ -f "$M" ] || "$BMOE" synth --shape small --quant q4_k_m --seed 1 -o "$M" >&2
INFO=$("$BMOE" inspect "$M" --json)
K=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['n_expert_used'])" "$INFO")
DIR=$(mktemp -d)
echo "# $(date -u +%FT%TZ) model=$M rounds=$ROUNDS threads=$T n=$N top-1 vs top-$K load=$(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
  for k in 1 "$K"; do
    "$BMOE" run -m "$M" -p "The engine reads only the experts each token routes to" -n "$N" -t "$T" \
      --temp 0.8 --seed 11 --moe-stream off --n-expert-used "$k" --csv "$DIR/k$k-r$r.csv" > /dev/null 2>&1
  done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$DIR" "$ROUNDS" "$K" "$INFO" <<'EOF'
import csv, json, statistics, sys
d, rounds, k, info = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4])
def median_compute(path):
    rows = [l for l in open(path) if not l.startswith('#')]
    return statistics.median(float(r['compute_ms']) for r in csv.DictReader(rows) if r['phase'] == 'decode')
mib = (k - 1) * sum(info['entry_bytes']) / 2**20
deltas = []
for r in range(1, rounds + 1):
    lo, hi = median_compute(f'{d}/k1-r{r}.csv'), median_compute(f'{d}/k{k}-r{r}.csv')
    deltas.append(hi - lo)
    print(f'round {r}: top-1 {lo:.3f} ms, top-{k} {hi:.3f} ms per token: {hi - lo:.3f} ms for {mib:.3f} MiB = {(hi - lo) / mib:.4f} ms/MiB')
m = statistics.median(deltas)
print(f'expert compute: {m / mib:.4f} ms/MiB (median of {rounds} rounds; {m:.3f} ms per {mib:.3f} MiB of experts)')
EOF
rm -r "$DIR"
