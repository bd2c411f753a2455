#!/usr/bin/env bash
# Time to first token of a conversation's turns past RAM: kept context (turn 2 and 3 evaluate
# their new tokens) against the whole history evaluated again (--no-kv-reuse), and the first
# token after /load against a cold start of the same history. fio reads the model file right
# before and after (the disk throttles; a figure means something only next to those).
#   scripts/bench-chat.sh [MODEL] [RAM_GB] [N] [CACHE]
# The first turn is a pasted document (about 1700 characters: some 1500 tokens of the synthetic
# byte-level vocabulary); every process streams at the same --cache-mb CACHE.
# Needs release builds of bmoe and bmoe-bench, and root (to drop the page cache).
set -euo pipefail
cd "$(dirname "$0")/.."
BMOE=${BMOE:-target/release/bmoe}
BENCH=${BENCH:-target/release/bmoe-bench}
M=${1:-models/qwen3-30b-a3b-q4_k_m.gguf}
RAM_GB=${2:-8}
N=${3:-16}
CACHE=${4:-4G}
[ -f "$M" ] || "$BMOE" synth --shape qwen3-30b-a3b --quant q4_k_m -o "$M" >&2
OUT=$(mktemp -d)
trap 'exec 3>&- 2>/dev/null || true; rm -rf "$OUT"' EXIT
fio_mib() {
  fio --name=r --filename="$M" --rw=randread --randrepeat=0 --direct=1 --ioengine=io_uring --bs=4M --iodepth=4 \
    --runtime=10 --time_based --readonly --output-format=json 2>/dev/null |
    python3 -c 'import json,sys; print(round(json.load(sys.stdin)["jobs"][0]["read"]["bw"]/1024))'
}
sync; echo 3 >/proc/sys/vm/drop_caches
avail=$(awk '/MemAvailable/ {printf "%.0f", $2 * 1024}' /proc/meminfo)
hold=$(( avail - RAM_GB * 1024 * 1024 * 1024 ))
# The holder keeps its memory until its stdin (fd 3 here) closes.
exec 3> >("$BENCH" hold-ram --bytes "$hold" >"$OUT/hold" 2>&1)
until [ -s "$OUT/hold" ]; do sleep 1; done
mem() { awk '/MemAvailable/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo; }
echo "# $(date -u +%FT%TZ) model=$M ram_gb=$RAM_GB n=$N $(cat "$OUT/hold")"
echo "# MemAvailable now $(mem); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "fio before: $(fio_mib) MiB/s (4 MiB random O_DIRECT reads, depth 4)"
chat() { # label input [flags]
  local label=$1 input=$2; shift 2
  # The last process's pinned pool comes back to the kernel a little after it exits.
  for _ in $(seq 60); do
    [ "$(awk '/MemAvailable/ {print int($2/1048576*10)}' /proc/meminfo)" -ge $(( RAM_GB * 10 - 5 )) ] && break
    sleep 1
  done
  echo "$label: MemAvailable $(mem) before"
  if ! printf '%b' "$input" | "$BMOE" chat -m "$M" -n "$N" -t 2 --temp 0 --ignore-eos --cache-mb "$CACHE" \
    --ubatch 2048 "$@" 2>"$OUT/$label.err" >/dev/null; then
    cat "$OUT/$label.err" >&2
    exit 1
  fi
  grep -E '^(mode|reply|loaded|load): ' "$OUT/$label.err" | sed "s/^/$label: /"
}
DOC=$(python3 -c "import random; random.seed(1); w='the river stone quiet seven north light under paper engine'.split(); print(' '.join(random.choice(w) for _ in range(300))[:1700])")
T1="Summarise this: $DOC\n"; T2='Which part matters most?\n'; T3='And the second?\n'
S1="$OUT/turn1.session"; S2="$OUT/turn2.session"
# Kept context: turns 1-3 in one process, saved after turns 1 and 2.
chat kept "$T1/save $S1\n$T2/save $S2\n$T3"
# The same histories evaluated from scratch in a new process (a cold start: nothing cached).
chat fresh2 "/load $S1\n$T2" --no-kv-reuse
chat fresh3 "/load $S2\n$T3" --no-kv-reuse
# /load: the KV cache and the experts the cache held, then turn 3.
chat loaded3 "/load $S2\n$T3"
echo "fio after: $(fio_mib) MiB/s"
