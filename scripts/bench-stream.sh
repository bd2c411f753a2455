#!/usr/bin/env bash
# The streaming issue's three measurements, side by side in one run, ROUNDS times, medians:
#  1. warm cache holding every expert: streamed decode tok/s against resident (our decoder,
#     --moe-stream off) and llama.cpp on mmap;
#  2. cache off (--cache-mb 0): the read rate while decode waits for reads, against fio
#     random reads of one expert projection's size at the same lanes with O_DIRECT;
#  3. max RSS of a streamed run against budget + dense + KV cache.
# Usage: scripts/bench-stream.sh [MODEL] [ROUNDS] [THREADS] [N]
# With no MODEL it synthesizes models/bench-small-q4_k_m.gguf. Env: BMOE (the binary).
set -euo pipefail
cd "$(dirname "$0")/.."
BMOE=${BMOE:-target/release/bmoe}
M=${1:-models/bench-small-q4_k_m.gguf}
ROUNDS=${2:-5}
T=${3:-2}
N=${4:-64}
LANES=4
mkdir -p models
[ -f "$M" ] || "$BMOE" synth --shape small --quant q4_k_m --seed 1 -o "$M" >&2
INFO=$("$BMOE" inspect "$M" --json)
ALL_MB=$(python3 -c "import json,sys; j=json.loads(sys.argv[1]); print(j['expert_bytes'] * 3 // 2 // 2**20 + 16)" "$INFO")
# One expert projection (gate of layer 0): the size of each read in decode.
BS=$(python3 -c "import json,sys; j=json.loads(sys.argv[1]); print(min(j['entry_bytes']) // 3 // 4096 * 4096)" "$INFO")
# A prompt long enough that prefill routes every expert of every layer (warms the cache).
PROMPT=$(python3 -c "import random; random.seed(2); print(' '.join(random.choice(['the','river','stone','quiet','seven','north','light','under','paper','engine']) for _ in range(120)))")
OUT=$(mktemp)
echo "# $(date -u +%FT%TZ) $(uname -r) model=$M rounds=$ROUNDS threads=$T n=$N lanes=$LANES read=${BS}B load=$(cut -d' ' -f1-3 /proc/loadavg) MemAvailable=$(awk '/MemAvailable/{print $2" kB"}' /proc/meminfo)"
run() { # label, args...
  local label=$1; shift
  "$BMOE" run -m "$M" -p "$PROMPT" -n "$N" -t "$T" --temp 0.8 --seed 3 --ignore-eos --json "$@" 2>/dev/null | tail -1 |
    python3 -c 'import json,sys; j=json.load(sys.stdin); print(sys.argv[1], j["tok/s"], j.get("read_MiB/s"), j["max_rss_MiB"], j.get("cache_budget_MiB"))' "$label" | tee -a "$OUT"
}
for r in $(seq "$ROUNDS"); do
  run streamed-all --cache-mb "$ALL_MB" --io-threads "$LANES"
  run resident --moe-stream off
  run llama --engine llama
  run cache-off --cache-mb 0 --io-threads "$LANES"
  fio --name=r --filename="$M" --rw=randread --randrepeat=0 --direct=1 --ioengine=io_uring --bs="$BS" \
      --iodepth="$LANES" --runtime=5 --time_based --output-format=json 2>/dev/null |
    python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]["read"]; print("fio", j["bw"]/1024)' | tee -a "$OUT"
done
python3 - "$OUT" "$INFO" "$N" <<'PY'
import json, sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
info, n = json.loads(sys.argv[2]), int(sys.argv[3])
med = lambda label, col: st.median(float(r[col]) for r in rows if r[0] == label)
s, res, ll = med("streamed-all", 1), med("resident", 1), med("llama", 1)
print(f"1. decode tok/s (medians): streamed, cache holding every expert {s:.2f}; resident {res:.2f}; llama.cpp on mmap {ll:.2f}")
print(f"   streamed / resident = {s / res:.3f}; streamed / llama.cpp = {s / ll:.3f}")
rate, fio = med("cache-off", 2), med("fio", 1)
print(f"2. cache off: read rate while decode waits {rate:.0f} MiB/s; fio same size and depth {fio:.0f} MiB/s; ratio {rate / fio:.3f}")
kv = 2 * 2 * 4096 * 4 * 64 * info["n_layer"]  # F16 K and V at the default -c 4096 (small: 4 KV heads × 64)
for label in ("streamed-all", "cache-off"):
    r = [x for x in rows if x[0] == label]
    rss, budget = max(float(x[3]) for x in r), float(r[0][4])
    bound = budget + info["dense_bytes"] / 2**20 + kv / 2**20
    print(f"3. {label}: max RSS {rss:.0f} MiB; budget {budget:.0f} + dense {info['dense_bytes'] / 2**20:.0f} + KV {kv / 2**20:.0f} = {bound:.0f} MiB; ratio {rss / bound:.3f} (limit 1.10)")
PY
rm -f "$OUT"
