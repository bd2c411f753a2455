#!/usr/bin/env bash
# docs/scale-out.md's measurement of `--rpc`: the Qwen3-30B-A3B synthetic with the real routing
# replayed (--route-replay of the trace, which also gives --placement-trace its counts), decoded
# on 1, 2 and 3 hosts (this one, the coordinator, plus 0, 1 or 2 `bmoe rpc-server`s), each
# process in its own memory cgroup (an expert host: its share of the experts + 25 %; the
# coordinator: its dense part, KV cache and --cache-mb), first over loopback, then with every
# expert host in its own network namespace behind a veth pair shaped to LINK Gbit/s (tbf) and,
# where the kernel has netem, a one-way delay of DELAY_US. Each row is set against `bmoe replay
# --hosts` for the same trace, placement, hosts, budget and link, at the round trip the script
# measures on that path (a TCP echo). The script creates and removes its namespaces, veth pairs
# and cgroups itself (needs root). Run it alone on the machine: every other process is noise.
#
# Usage: scripts/bench-rpc.sh [MODEL] [TRACE]
#   MODEL  default models/qwen3-30b-a3b-q4_k_m.gguf (synthesized when missing: ~17 GB)
#   TRACE  default ../shared/traces/qwen3-30b-a3b.route.csv
# Env: BMOE (default target/release/bmoe), HOSTS ("1 2 3"), LINKS ("1 10", Gbit/s; empty:
#   loopback only), LOOPBACK (1: the loopback rows too), DELAY_US (50: 100 µs round trip, netem
#   only), N (128 decode tokens), ROUNDS (3, medians), T (threads per process, 1), BUDGET_MB
#   (the coordinator's expert cache and every host's budget in the simulation, 2000), PLACEMENT
#   (popularity), DISK_MIBPS (992) and MS_PER_MIB (0.0829): the simulation's flash rate and
#   compute cost (docs/scale-out.md, "Inputs"), TIMEOUT_MS (--rpc-timeout-ms, 30000).
set -euo pipefail
cd "$(dirname "$0")/.."
BMOE=$(realpath "${BMOE:-target/release/bmoe}")
M=${1:-models/qwen3-30b-a3b-q4_k_m.gguf}
TRACE=${2:-../shared/traces/qwen3-30b-a3b.route.csv}
HOSTS=${HOSTS:-1 2 3}
LINKS=${LINKS-1 10}
LOOPBACK=${LOOPBACK:-1}
DELAY_US=${DELAY_US:-50}
N=${N:-128}
ROUNDS=${ROUNDS:-3}
T=${T:-1}
BUDGET_MB=${BUDGET_MB:-2000}
PLACEMENT=${PLACEMENT:-popularity}
DISK_MIBPS=${DISK_MIBPS:-992}
MS_PER_MIB=${MS_PER_MIB:-0.0829}
TIMEOUT_MS=${TIMEOUT_MS:-30000}
PORT=50052
[ "$(id -u)" -eq 0 ] || { echo "bench-rpc: needs root (namespaces, veth, tc, cgroups)" >&2; exit 1; }
mkdir -p models
[ -f "$M" ] || "$BMOE" synth --shape qwen3-30b-a3b --quant q4_k_m --seed 1 -o "$M" >&2
[ -f "$TRACE" ] || { echo "bench-rpc: no trace $TRACE" >&2; exit 1; }
M=$(realpath "$M"); TRACE=$(realpath "$TRACE")
# The trace's top-k (the Qwen3-30B-A3B trace was recorded at 6 of the model's 8): the run routes
# as many, so the replayed ids fill every routing.
TRACE_K=$(sed -n '1,3p' "$TRACE" | grep -o 'n_expert_used=[0-9]*' | cut -d= -f2)
[ -n "$TRACE_K" ] || { echo "bench-rpc: $TRACE has no n_expert_used in its header" >&2; exit 1; }
INFO=$("$BMOE" inspect "$M" --json)
jq() { python3 -c "import json,sys; j=json.loads(sys.argv[1]); print($2)" "$1"; }
N_EMBD=$(jq "$INFO" "j['n_embd']")
EXPERT_MB=$(jq "$INFO" "j['expert_bytes'] // 2**20")
DENSE_MB=$(jq "$INFO" "j['dense_bytes'] // 2**20")

# Memory cgroups: v2 where the memory controller is on, else v1's memory hierarchy.
if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers; then
  CG=/sys/fs/cgroup; CG_LIMIT=memory.max
elif [ -d /sys/fs/cgroup/memory ]; then
  CG=/sys/fs/cgroup/memory; CG_LIMIT=memory.limit_in_bytes
else
  echo "bench-rpc: no memory cgroup controller: the hosts' RAM cannot be limited" >&2; exit 1
fi
NETEM=0
if ip link add bmrpc-probe type veth peer name bmrpc-probe2 2>/dev/null; then
  tc qdisc add dev bmrpc-probe root netem delay 1us 2>/dev/null && NETEM=1
  ip link del bmrpc-probe 2>/dev/null || true
fi

PIDS=()
NSS=()
CGS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  PIDS=()
  for ns in "${NSS[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  NSS=()
  for c in "${CGS[@]}"; do rmdir "$c" 2>/dev/null || true; done
  CGS=()
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 141' PIPE HUP

# cgroup NAME MB: a memory cgroup limited to MB; its path in CGPATH (not printed: a command
# substitution's subshell would not record it for the cleanup).
cgroup() {
  CGPATH=$CG/$1
  mkdir -p "$CGPATH"
  echo $(( $2 << 20 )) > "$CGPATH/$CG_LIMIT"
  CGS+=("$CGPATH")
}

# netns I GBPS: namespace bmrpc-I joined to this one by a veth pair 10.77.I.1 ↔ 10.77.I.2,
# both ends shaped to GBPS (and delayed by DELAY_US each way, with netem).
netns() {
  local i=$1 gbps=$2 ns=bmrpc-$1
  ip netns add "$ns"; NSS+=("$ns")
  ip link add "bmrc$i" type veth peer name "bmrh$i"
  ip link set "bmrh$i" netns "$ns"
  ip addr add "10.77.$i.1/24" dev "bmrc$i"; ip link set "bmrc$i" up
  ip -n "$ns" addr add "10.77.$i.2/24" dev "bmrh$i"; ip -n "$ns" link set "bmrh$i" up; ip -n "$ns" link set lo up
  # tbf's bucket: at least one 64 KiB GSO segment and one jiffy of the rate.
  local burst=$(( gbps * 125000 / 100 > 262144 ? gbps * 125000 / 100 : 262144 ))
  for dev in "bmrc$i" "ip netns exec $ns bmrh$i"; do
    local d=${dev##* } pre=${dev% *}; [ "$pre" = "$dev" ] && pre=""
    if [ "$NETEM" = 1 ]; then
      $pre tc qdisc add dev "$d" root netem delay "${DELAY_US}us" rate "${gbps}gbit" limit 100000
    else
      $pre tc qdisc add dev "$d" root tbf rate "${gbps}gbit" burst "$burst" latency 50ms
    fi
  done
}

# wait_port IP PORT: until something listens there.
wait_port() {
  for _ in $(seq 400); do
    timeout 1 bash -c "</dev/tcp/$1/$2" 2>/dev/null && return 0
    sleep 0.05
  done
  echo "bench-rpc: nothing listens on $1:$2" >&2; return 1
}

# rtt_us NS IP: median TCP round trip of 64 bytes from here to a python echo in NS (or here).
rtt_us() {
  local pre=() ; [ -n "$1" ] && pre=(ip netns exec "$1")
  "${pre[@]}" python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((sys.argv[1], 50099)); s.listen(4)
while True:
    c, _ = s.accept(); c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    while (d := c.recv(64)): c.sendall(d)
    c.close()' "$2" &
  local echo=$!
  wait_port "$2" 50099 || true
  python3 -c '
import socket, sys, time, statistics
c = socket.create_connection((sys.argv[1], 50099)); c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
ts = []
for _ in range(300):
    t = time.perf_counter(); c.sendall(b"x" * 64); n = 0
    while n < 64: n += len(c.recv(64 - n))
    ts.append(time.perf_counter() - t)
print(f"{statistics.median(ts[50:]) * 1e6:.0f}")' "$2"
  kill "$echo" 2>/dev/null || true; wait "$echo" 2>/dev/null || true
}

# server I IP NS MB: an rpc-server for host I on IP, in namespace NS (or here), in a cgroup of MB.
server() {
  cgroup "bmrpc-host$1" "$4"
  local pre=() ; [ -n "$3" ] && pre=(ip netns exec "$3")
  # Into the cgroup before the namespace: `ip netns exec` remounts /sys, cgroups and all.
  sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' \
    sh "$CGPATH" "${pre[@]}" "$BMOE" rpc-server --host "$2" --port "$PORT" -t "$T" >/dev/null 2>&1 &
  PIDS+=($!)
  wait_port "$2" "$PORT"
}

PROMPT="The history of the river valley begins with the first settlers"
OUT=$(mktemp)
echo "# $(date -u +%FT%TZ) $(uname -r) $(nproc) cpus; model=$M trace=$TRACE n=$N rounds=$ROUNDS threads=$T budget=${BUDGET_MB}MiB placement=$PLACEMENT experts=${EXPERT_MB}MiB dense=${DENSE_MB}MiB netem=$NETEM load=$(cut -d' ' -f1-3 /proc/loadavg) MemAvailable=$(awk '/MemAvailable/{print $2" kB"}' /proc/meminfo)"
[ "$NETEM" = 1 ] || echo "# this kernel has no netem (CONFIG_NET_SCH_NETEM): the links are shaped in rate only (tbf); the round trip is the path's own, measured"

# row NET GBPS HOSTS: ROUNDS runs of one configuration, then the simulation's row for it.
row() {
  local net=$1 gbps=$2 h=$3 endpoints=() rtt
  local share=$(( EXPERT_MB / h * 5 / 4 + 512 ))
  if [ "$h" -gt 1 ]; then
    for i in $(seq $(( h - 1 ))); do
      if [ "$net" = loopback ]; then
        PORT=$(( 50052 + i )); server "$i" 127.0.0.1 "" "$share"; endpoints+=("127.0.0.1:$PORT")
      else
        PORT=50052; netns "$i" "$gbps"; server "$i" "10.77.$i.2" "bmrpc-$i" "$share"; endpoints+=("10.77.$i.2:$PORT")
      fi
    done
    if [ "$net" = loopback ]; then rtt=$(rtt_us "" 127.0.0.1); else rtt=$(rtt_us bmrpc-1 10.77.1.2); fi
  else
    rtt=0
  fi
  local rpc=()
  [ "$h" -gt 1 ] && rpc=(--rpc "$(IFS=,; echo "${endpoints[*]}")" --placement "$PLACEMENT" --placement-trace "$TRACE" --rpc-timeout-ms "$TIMEOUT_MS")
  cgroup bmrpc-coord $(( DENSE_MB + BUDGET_MB + 2048 )); local coord=$CGPATH
  for r in $(seq "$ROUNDS"); do
    sh -c 'echo $$ > "$1/cgroup.procs"; shift; exec "$@"' sh "$coord" \
      "$BMOE" run -m "$M" -p "$PROMPT" -n "$N" -t "$T" --temp 0.8 --seed "$r" --ignore-eos -c 1024 \
      --route-replay "$TRACE" --n-expert-used "$TRACE_K" --cache-mb "$BUDGET_MB" --json "${rpc[@]}" 2>"$OUT.err" | tail -1 |
      python3 -c '
import json, sys
j = json.load(sys.stdin); hosts = j.get("rpc_hosts") or []
lost = [h["host"] for h in hosts if not h["up"]]
print(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], j["s/tok"] * 1e3, j["tok/s"],
      sum(h["wait_ms/tok"] or 0 for h in hosts), sum(h["sent_MiB/tok"] or 0 for h in hosts),
      sum(h["received_MiB/tok"] or 0 for h in hosts), max([h["round_trips/tok"] or 0 for h in hosts] or [0]),
      j.get("read_MiB", 0) / max(j["tokens"] - 1, 1), ",".join(lost) or "-")' "$net" "$gbps" "$h" "$rtt" >>"$OUT" ||
      { echo "bench-rpc: run failed ($net $gbps Gbit/s, $h hosts):"; cat "$OUT.err"; exit 1; } >&2
  done
  # The simulation of the same configuration (the link of a loopback row: 100 Gbit/s).
  local sim_gbps=$gbps; [ "$net" = loopback ] && sim_gbps=100
  "$BMOE" replay "$TRACE" --hosts "$h" --link-gbps "$sim_gbps" --rtt-us "$([ "$rtt" = 0 ] && echo 100 || echo "$rtt")" \
    --n-embd "$N_EMBD" --disk-mibps "$DISK_MIBPS" --expert-ms-per-mib "$MS_PER_MIB" --budget-mb "$BUDGET_MB" \
    --placement "$PLACEMENT" --json 2>/dev/null | python3 -c '
import json, sys
j = json.loads(sys.stdin.readline())
print("sim", sys.argv[1], sys.argv[2], sys.argv[3], j["bound_ms"], j["serial_ms"], j["net_ms"], j["host_ms"],
      j["act_exact_mib_per_token"], j["round_trips_per_token"], j["flash_mib_per_token"])' "$net" "$gbps" "$h" >>"$OUT"
  cleanup
}

for h in $HOSTS; do
  [ "$LOOPBACK" = 1 ] && row loopback 0 "$h"
  if [ "$h" -gt 1 ]; then for g in $LINKS; do row netns "$g" "$h"; done; fi
done

python3 - "$OUT" "$DENSE_MB" <<'PY'
import sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
runs = [r for r in rows if r[0] != "sim"]
sims = {tuple(r[1:4]): r[4:] for r in rows if r[0] == "sim"}
print("| link | hosts | RTT µs (measured) | ms/token (median) | tok/s | wait ms/token | MiB/token out / in | round trips/token | flash MiB/token | lost | sim bound ms | sim serial ms | sim net ms | sim host ms | sim MiB/token | sim round trips/token | sim flash MiB/token |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
seen = []
for r in runs:
    k = tuple(r[0:3])
    if k not in seen:
        seen.append(k)
for k in seen:
    rs = [r for r in runs if tuple(r[0:3]) == k]
    med = lambda i: st.median(float(r[i]) for r in rs)
    s = sims.get(k, ["-"] * 7)
    link = "loopback" if k[0] == "loopback" else f"{k[1]} Gbit/s"
    lost = ",".join(sorted({r[11] for r in rs} - {"-"})) or "none"
    print(f"| {link} | {k[2]} | {rs[0][3]} | {med(4):.1f} | {med(5):.2f} | {med(6):.2f} | {med(7):.3f} / {med(8):.3f} | {med(9):.1f} | {med(10):.1f} | {lost} | "
          + " | ".join(s[:7]) + " |")
print(f"(the simulation leaves out the dense part, ~{sys.argv[2]} MiB of layer weights per token on the coordinator: its bound is for the experts and the network only)")
PY
rm -f "$OUT" "$OUT.err"
