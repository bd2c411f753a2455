#!/usr/bin/env bash
# Alternates fio and `bmoe iobench` on one file, several rounds, and prints the
# medians and ratios (docs/io.md quotes its output). Usage:
#   scripts/iobench-vs-fio.sh [FILE] [ROUNDS] [SECONDS]
# Env: BMOE (path to the binary, default target/release/bmoe).
set -euo pipefail
F=${1:-models/io.bin}
ROUNDS=${2:-3}
SECS=${3:-10}
BMOE=${BMOE:-target/release/bmoe}
OUT=$(mktemp -d)
[ -f "$F" ] || "$BMOE" iobench --file "$F" --create-gib 8 --seconds 0.1 --block 3M >/dev/null

fio_mib() { # bs depth
  fio --name=r --filename="$F" --rw=randread --randrepeat=0 --direct=1 --ioengine=io_uring --bs="$1" --iodepth="$2" \
      --runtime="$SECS" --time_based --output-format=json 2>/dev/null |
    python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]["read"]; print(j["bw"]/1024, j["iops"], j["clat_ns"]["percentile"]["50.000000"]/1e3, j["clat_ns"]["percentile"]["99.000000"]/1e3)'
}
bmoe_mib() { # block lanes backend
  "$BMOE" iobench --file "$F" --block "$1" --lanes "$2" --backend "$3" --pattern random --seconds "$SECS" --seed "$RANDOM" --json |
    python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["mib_s"], j["iops"], j["p50_us"], j["p99_us"])'
}

echo "# $(date -u +%FT%TZ) $(uname -r) file=$F rounds=$ROUNDS seconds=$SECS load=$(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
  for cfg in "3M 4" "256K 8"; do
    set -- $cfg
    echo "fio $1 $2 $(fio_mib "$1" "$2")" | tee -a "$OUT/all"
    echo "uring $1 $2 $(bmoe_mib "$1" "$2" uring)" | tee -a "$OUT/all"
    echo "pread $1 $2 $(bmoe_mib "$1" "$2" pread)" | tee -a "$OUT/all"
  done
  echo "# round $r done, load=$(cut -d' ' -f1-3 /proc/loadavg)"
done
python3 - "$OUT/all" <<'PY'
import sys, statistics as st, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    k, bs, lanes, mib, iops, p50, p99 = line.split()
    rows[(bs, lanes, k)].append((float(mib), float(iops), float(p50), float(p99)))
print("| config | engine | MiB/s (runs) | median MiB/s | median IOPS | p50 us | p99 us | vs fio |")
print("|---|---|---|---|---|---|---|---|")
for bs, lanes in [("3M", "4"), ("256K", "8")]:
    fio = st.median(m for m, *_ in rows[(bs, lanes, "fio")])
    for k in ["fio", "uring", "pread"]:
        v = rows[(bs, lanes, k)]
        med = st.median(m for m, *_ in v)
        runs = ", ".join(f"{m:.0f}" for m, *_ in v)
        print(f"| {bs} x {lanes} | {k} | {runs} | {med:.0f} | {st.median(i for _, i, *_ in v):.0f} | "
              f"{st.median(p for *_, p, _ in v):.0f} | {st.median(p for *_, p in v):.0f} | {med / fio:.3f} |")
PY
