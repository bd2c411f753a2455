#!/usr/bin/env bash
# Two bmoe binaries' streamed prefill past RAM, interleaved, between two fio runs
# (docs/benchmarks.md, "Prefill": before and after pipelining every group).
#
#   scripts/bench-prefill-ab.sh MODEL BMOE_A BMOE_B [CACHE_MB] [ROUNDS] [RAM_GB]
set -euo pipefail
model=${1:?model} a=${2:?binary A} b=${3:?binary B}
cache=${4:-200} rounds=${5:-2} ram=${6:-8}
prompt=$(python3 -c "
import random; random.seed(6); w='model expert route token cache flash read layer weight stream disk memory batch prompt answer'.split()
print(' '.join(random.choice(w) for _ in range(23)))")
fio_ref() {
  fio --name=r --filename="$model" --rw=randread --bs=864k --iodepth=4 --direct=1 --ioengine=io_uring \
    --runtime=10 --time_based --readonly 2>/dev/null | grep "READ:"
}
fio_ref
avail=$(awk '/MemAvailable/ {print $2*1024}' /proc/meminfo)
hold=$(awk -v a="$avail" -v r="$ram" 'BEGIN{printf "%.0f", a - r*1024^3}')
exec 3> >(target/release/bmoe-bench hold-ram --bytes "$hold")
sleep 20
grep MemAvailable /proc/meminfo
for r in $(seq "$rounds"); do
  for bin in "$a" "$b"; do
    "$bin" run -m "$model" -t 2 -p "$prompt" -n 2 --temp 0 --cache-mb "$cache" --overlap full 2>&1 >/dev/null \
      | grep -E "^(prefill|moe-prefill)" | sed "s|^|$bin round $r: |"
  done
done
exec 3>&-
sleep 5
fio_ref
