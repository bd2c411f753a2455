#!/usr/bin/env bash
# Speculative decoding and the lossy knobs past RAM (docs/speculative.md, "Must show"): one
# bmoe-bench protocol run with every cell interleaved round by round against the lossless best
# cell (`plain`: overlap full, auto budget), fio before and after; then the quality figures of
# the lossy knobs (bmoe-bench quality, teacher-forced against the lossless run, at the budget the
# plain cell's auto chose), on the model's own routing and on a replayed real trace; then the
# tables.
#
#   scripts/bench-speculative.sh MODEL [RAM_GB]
#
# Cells: plain; drafts replayed from the plain run's own tokens (bmoe run --tokens-out, the
# same prompt, -n and sampler: acceptance 100 %) with each drafted token corrupted with
# probability 1 − A/100 for A in ACCEPT, at --draft N for N in DRAFTS, every draft verified
# (--draft-skip off) and under the skip rule (…-skip: --draft-skip on); --drop-cold-experts F
# for F in DROPS; --n-expert-used K for K in KS (the lossy knob dropping competes with);
# --route-ahead L for L in AHEAD. The text of every lossless cell is checked against plain's.
#
# Env: BIN (the folder of bmoe and bmoe-bench, target/release), OUT (bench-out/speculative-<time>),
# ROUNDS (2), N (tokens per run, 128), THREADS (2), TEMP (1), SEED (1), PROMPT, CTX (512),
# DRAFTS ("1 3 5"), ACCEPT ("100 80 60 40 20"), DROPS ("0.25 0.5 0.75 1.0"), KS ("6 4"),
# AHEAD ("1 2"), FIO_S (seconds of fio at each end, 10; 0: none), QUALITY_N (decode positions
# compared, 128), TRACE (a route_trace v1 for the replayed quality and drop cells,
# ../shared/traces/qwen3-30b-a3b.route.csv; "" to skip), TRACE_K (its top-k, 6),
# REPLAY_PROTOCOL (1: a second protocol run under the trace: plain, the drop cells, and drafting
# at --draft N for N in REPLAY_DRAFTS ("3"), every A of REPLAY_ACCEPT (ACCEPT), skip rule off,
# and on for every A of REPLAY_SKIP_ACCEPT (SKIP_ACCEPT)), REPLAY_OVERLAP (that run's
# --overlap, pipeline: under --route-replay the look-ahead predicts this random model's router,
# not the trace's routing, so its reads are wasted: docs/speculative.md §7.1), SKIP_ACCEPT (the
# acceptances that also get a skip-rule cell, ACCEPT; "" for none), TABLES_ONLY (1: only the tables, again, from an OUT
# already run). DROPS, KS and AHEAD set empty ("") run none of their cells.
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:?model}
ram=${2:-}
bin=${BIN:-target/release}
out=${OUT:-bench-out/speculative-$(date +%s)}
rounds=${ROUNDS:-2}
n=${N:-128}
threads=${THREADS:-2}
temp=${TEMP:-1}
seed=${SEED:-1}
ctx=${CTX:-512}
prompt=${PROMPT:-Mixture-of-experts models route each token to a few experts, so}
drafts=${DRAFTS:-1 3 5}
accept=${ACCEPT:-100 80 60 40 20}
drops=${DROPS-0.25 0.5 0.75 1.0}
ks=${KS-6 4}
ahead=${AHEAD-1 2}
fio_s=${FIO_S:-10}
quality_n=${QUALITY_N:-128}
trace=${TRACE-../shared/traces/qwen3-30b-a3b.route.csv}
trace_k=${TRACE_K:-6}
replay_protocol=${REPLAY_PROTOCOL:-1}
replay_drafts=${REPLAY_DRAFTS:-3}
replay_accept=${REPLAY_ACCEPT:-$accept}
skip_accept=${SKIP_ACCEPT-$accept}
replay_skip_accept=${REPLAY_SKIP_ACCEPT-$skip_accept}
replay_overlap=${REPLAY_OVERLAP:-pipeline}
mkdir -p "$out"
out=$(cd "$out" && pwd)
ram_args=()
[ -n "$ram" ] && ram_args=(--ram-gb "$ram")
common=(-p "$prompt" -n "$n" --temp "$temp" --seed "$seed" --ignore-eos -t "$threads" -c "$ctx")
# The corruption probability of a nominal acceptance A %: 1 − A/100.
corrupt_of() { python3 -c "print(round(1 - $1 / 100, 4))"; }

if [ "${TABLES_ONLY:-0}" != 1 ]; then
# 1. The plain run's tokens: the drafts of the replay cells (its own output, so acceptance 100 %).
echo "bench-speculative: the plain run's tokens -> $out/plain.tokens" >&2
"$bin/bmoe" run -m "$model" "${common[@]}" --tokens-out "$out/plain.tokens" > "$out/plain-tokens.txt" 2> "$out/plain-tokens.log"

# The plain run above used an auto budget of most of the machine; its memory goes back to the
# system over seconds after it exits. The protocol sizes its RAM holder from MemAvailable once,
# so wait until MemAvailable stops growing (at most 60 s).
prev=0
for _ in $(seq 60); do
  now=$(awk '/MemAvailable/{print $2}' /proc/meminfo)
  [ "$now" -le $(( prev + 65536 )) ] && break
  prev=$now
  sleep 1
done

# 2. One protocol run, every cell interleaved.
cells=(--cell "plain=")
for d in $drafts; do
  for a in $accept; do
    p=$(corrupt_of "$a")
    cells+=(--cell "d$d-a$a=--draft-replay $out/plain.tokens --draft $d --draft-corrupt $p --draft-skip off")
  done
done
for d in $drafts; do
  for a in $skip_accept; do
    p=$(corrupt_of "$a")
    cells+=(--cell "d$d-a$a-skip=--draft-replay $out/plain.tokens --draft $d --draft-corrupt $p --draft-skip on")
  done
done
for f in $drops; do cells+=(--cell "drop-$f=--drop-cold-experts $f"); done
for k in $ks; do cells+=(--cell "k$k=--n-expert-used $k"); done
for l in $ahead; do cells+=(--cell "ahead-$l=--route-ahead $l"); done
echo "bench-speculative: protocol, ${#cells[@]} cell flags, $rounds rounds" >&2
"$bin/bmoe-bench" protocol -m "$model" "${ram_args[@]}" --cells none "${cells[@]}" --rounds "$rounds" -n "$n" \
  --temp "$temp" --seed "$seed" -p "$prompt" --run-args "-t $threads -c $ctx" --fio-seconds "$fio_s" \
  --bmoe "$bin/bmoe" --out "$out/protocol" > /dev/null

# The budget the plain cell's auto chose (its median): the quality runs use it, explicit.
budget=$(python3 - "$out/protocol/cells" <<'PY'
import glob, statistics, sys
v = []
for f in glob.glob(sys.argv[1] + "/plain-r*.csv"):
    last = open(f).read().strip().splitlines()[-1]
    kv = dict(x.split("=", 1) for x in last.split()[2:])
    if kv.get("cache_budget_MiB", "unmeasured") != "unmeasured":
        v.append(float(kv["cache_budget_MiB"]))
print(int(statistics.median(v)) if v else "auto")
PY
)

# 3. Quality: teacher-forced against the lossless run at that budget.
qcells=()
for f in $drops; do qcells+=(--cell "drop-$f=--drop-cold-experts $f"); done
for k in $ks; do qcells+=(--cell "k$k=--n-expert-used $k"); done
for l in $ahead; do qcells+=(--cell "ahead-$l=--route-ahead $l"); done
if [ ${#qcells[@]} -gt 0 ]; then
  echo "bench-speculative: quality at --cache-mb $budget" >&2
  "$bin/bmoe-bench" quality -m "$model" -n "$quality_n" -c "$ctx" --run-args "-t $threads --cache-mb $budget" \
    "${qcells[@]}" --json "$out/quality.jsonl" > "$out/quality.md"
fi
if [ -n "$trace" ] && [ -f "$trace" ]; then
  rcells=()
  for f in $drops; do rcells+=(--cell "drop-$f=--drop-cold-experts $f"); done
  if [ ${#rcells[@]} -gt 0 ]; then
    echo "bench-speculative: quality on the replayed trace $trace" >&2
    "$bin/bmoe-bench" quality -m "$model" -n "$quality_n" -c "$ctx" \
      --run-args "-t $threads --cache-mb $budget --route-replay $trace --n-expert-used $trace_k" \
      "${rcells[@]}" --json "$out/quality-replay.jsonl" > "$out/quality-replay.md"
  fi
  if [ "$replay_protocol" = 1 ]; then
    # Drafting under the trace: each verify pass's rows route as the trace's consecutive decode
    # steps, so its union of experts is real text's (the drafts: this run's own tokens).
    "$bin/bmoe" run -m "$model" "${common[@]}" --route-replay "$trace" --n-expert-used "$trace_k" \
      --tokens-out "$out/replay.tokens" > "$out/replay-tokens.txt" 2> "$out/replay-tokens.log"
    pcells=(--cell "plain=")
    for f in $drops; do pcells+=(--cell "drop-$f=--drop-cold-experts $f"); done
    for d in $replay_drafts; do
      for a in $replay_accept; do
        p=$(corrupt_of "$a")
        pcells+=(--cell "d$d-a$a=--draft-replay $out/replay.tokens --draft $d --draft-corrupt $p --draft-skip off")
      done
      for a in $replay_skip_accept; do
        p=$(corrupt_of "$a")
        pcells+=(--cell "d$d-a$a-skip=--draft-replay $out/replay.tokens --draft $d --draft-corrupt $p --draft-skip on")
      done
    done
    echo "bench-speculative: protocol under the replayed trace" >&2
    "$bin/bmoe-bench" protocol -m "$model" "${ram_args[@]}" --cells none "${pcells[@]}" --rounds "$rounds" -n "$n" \
      --temp "$temp" --seed "$seed" -p "$prompt" \
      --run-args "-t $threads -c $ctx --route-replay $trace --n-expert-used $trace_k --overlap $replay_overlap" --fio-seconds "$fio_s" \
      --bmoe "$bin/bmoe" --out "$out/protocol-replay" > /dev/null
  fi
fi

fi

# 4. The tables.
python3 - "$out" "$drafts" "$accept" "$drops" "$ks" "$ahead" "$*" "$replay_drafts" "$replay_accept" "$skip_accept" "$replay_skip_accept" "$replay_overlap" <<'PY' | tee "$out/speculative.md"
import glob, json, os, re, statistics, sys
out, drafts, accept, drops, ks, ahead, argv, rdrafts, raccept, saccept, rsaccept, roverlap = sys.argv[1:13]
rdrafts = rdrafts.split()
raccept, saccept, rsaccept = [int(a) for a in raccept.split()], {int(a) for a in saccept.split()}, {int(a) for a in rsaccept.split()}
drafts, accept = drafts.split(), [int(a) for a in accept.split()]
drops, ks, ahead = drops.split(), ks.split(), ahead.split()

def runs(folder, cell):
    """Each round's summary (key=value of the CSV's last line) and text."""
    rs = []
    for f in sorted(glob.glob(f"{folder}/cells/{cell}-r*.csv")):
        last = open(f).read().strip().splitlines()[-1]
        if not last.startswith("# summary "):
            continue
        kv = {}
        for x in last[len("# summary "):].split():
            k, v = x.split("=", 1)
            kv[k] = None if v == "unmeasured" else json.loads(v) if v[0] in "[{\"" else float(v) if re.match(r"^-?[\d.eE+-]+$", v) else v
        txt = f[:-4] + ".txt"
        kv["_text"] = open(txt, "rb").read() if os.path.exists(txt) else None
        kv["_round"] = int(f.rsplit("-r", 1)[1][:-4])
        rs.append(kv)
    return rs

def med(rs, key):
    v = [r[key] for r in rs if isinstance(r.get(key), (int, float))]
    return statistics.median(v) if v else None

def mib_tok(rs):
    v = [r["read_MiB"] / max(r["tokens"] - 1, 1) for r in rs if isinstance(r.get("read_MiB"), (int, float))]
    return statistics.median(v) if v else None

f = lambda x, d=2: "–" if x is None else f"{x:.{d}f}"
P = f"{out}/protocol"
plain = runs(P, "plain")
base = med(plain, "tok/s")
def same_text(rs, ref):
    pairs = [(r["_text"], q["_text"]) for r in rs for q in ref if q["_round"] == r["_round"]]
    return "–" if not pairs else "yes" if all(a == b for a, b in pairs) else "NO"

summary = open(f"{P}/summary.md").read() if os.path.exists(f"{P}/summary.md") else ""
fio = re.search(r"disk reference: (.*)", summary)
print(f"### Speculative decoding and the lossy knobs: `scripts/bench-speculative.sh {argv}`\n")
for line in summary.splitlines()[2:7]:
    print(line)
print(f"- {fio.group(0) if fio else 'disk reference: none (fio not run)'}\n")
print(f"plain (the lossless best cell: overlap on, auto budget): {f(base, 3)} tok/s, {f(mib_tok(plain), 1)} MiB/token\n")

def drafting(folder, ref, ds, title, accept, saccept):
    base = med(ref, "tok/s")
    print(title + "\n")
    print("| --draft | A (nominal) % | skip rule | acceptance % | tokens / verify pass | verify passes / plain steps | tok/s | × plain | MiB/token | MiB per token of the verify passes | text = plain |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    cross = {}
    for d in ds:
        for skip in ("off", "on"):
            pts = []
            for a in (accept if skip == "off" else sorted(saccept, reverse=True)):
                rs = runs(folder, f"d{d}-a{a}" + ("-skip" if skip == "on" else ""))
                t = med(rs, "tok/s")
                x = t / base if t and base else None
                acc = med(rs, "spec_acceptance_pct")
                if x is not None:
                    pts.append((acc if acc is not None else float(a), x))
                vp, ps = med(rs, "spec_verify_passes"), med(rs, "spec_plain_steps")
                print(f"| {d} | {a} | {skip} | {f(acc, 1)} | {f(med(rs, 'spec_tokens_per_pass'))} | {f(vp, 0)} / {f(ps, 0)} | {f(t, 3)} | {f(x, 3)} | {f(mib_tok(rs), 1)} | {f(med(rs, 'spec_verify_MiB_per_token'), 1)} | {same_text(rs, ref)} |")
            # Break-even: where × plain crosses 1, linear between the measured points by acceptance.
            pts.sort()
            be = None
            for (a0, x0), (a1, x1) in zip(pts, pts[1:]):
                if (x0 - 1) * (x1 - 1) <= 0 and a1 != a0:
                    be = a0 + (1 - x0) * (a1 - a0) / (x1 - x0)
                    break
            if be is None and pts:
                be = "below the lowest measured" if all(x >= 1 for _, x in pts) else "above the highest measured" if all(x < 1 for _, x in pts) else None
            cross[(d, skip)] = (be, min((x for _, x in pts), default=None))
    print()
    print("Break-even acceptance (× plain = 1) and the lowest × plain over the acceptances, per --draft:\n")
    print("| --draft | skip rule | break-even acceptance % | lowest × plain |")
    print("|---|---|---|---|")
    for d in ds:
        for skip in ("off", "on"):
            be, lo = cross[(d, skip)]
            print(f"| {d} | {skip} | {f(be, 1) if isinstance(be, float) else (be or '–')} | {f(lo, 3)} |")
    print()

drafting(P, plain, drafts, "Drafting at a known acceptance (drafts replayed from the plain run's own tokens, each corrupted with probability 1 − A):", accept, saccept)

def quality(path):
    q = {}
    if os.path.exists(path):
        for l in open(path):
            if l.strip():
                r = json.loads(l)
                q[r["cell"]] = r
    return q

q = quality(f"{out}/quality.jsonl")
if drops or ks or ahead:
    print("Lossy knobs (speed in the same protocol run; quality teacher-forced on a fixed sequence against the lossless run at the plain cell's budget):\n")
    print("| cell | drop % (speed run) | router weight dropped % | reads avoided MiB/token | route-ahead mismatch % | tok/s | × plain | MiB/token | top-1 agree % | mean KL | drop % (quality run) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in [f"drop-{x}" for x in drops] + [f"k{x}" for x in ks] + [f"ahead-{x}" for x in ahead]:
        rs = runs(P, name)
        t = med(rs, "tok/s")
        av = [r["drop_reads_avoided_MiB"] / max(r["tokens"] - 1, 1) for r in rs if isinstance(r.get("drop_reads_avoided_MiB"), (int, float))]
        qq = q.get(name, {})
        print(f"| {name} | {f(med(rs, 'drop_pct'), 1)} | {f(med(rs, 'drop_weight_discarded_pct'), 2)} | {f(statistics.median(av) if av else None, 1)} | {f(med(rs, 'route_ahead_mismatch_pct'), 1)} | {f(t, 3)} | {f(t / base if t and base else None, 3)} | {f(mib_tok(rs), 1)} | {f(qq.get('top1_pct'), 1)} | {f(qq.get('mean_kl'), 5)} | {f(qq.get('drop_pct'), 1)} |")
    print()
qr = quality(f"{out}/quality-replay.jsonl")
if qr or os.path.isdir(f"{out}/protocol-replay/cells"):
    R = f"{out}/protocol-replay"
    rplain = runs(R, "plain")
    rbase = med(rplain, "tok/s")
    print(f"On the replayed real trace (every cell and the reference decode with its routing and weights; the speed run with `--overlap {roverlap}`):\n")
    print("| cell | drop % (speed run) | reads avoided MiB/token | tok/s | × plain | MiB/token | top-1 agree % | mean KL | drop % (quality run) |")
    print("|---|---|---|---|---|---|---|---|---|")
    print(f"| plain | – | – | {f(rbase, 3)} | 1.000 | {f(mib_tok(rplain), 1)} | 100.0 | 0.00000 | – |")
    for name in [f"drop-{x}" for x in drops]:
        rs = runs(R, name)
        t = med(rs, "tok/s")
        av = [r["drop_reads_avoided_MiB"] / max(r["tokens"] - 1, 1) for r in rs if isinstance(r.get("drop_reads_avoided_MiB"), (int, float))]
        qq = qr.get(name, {})
        print(f"| {name} | {f(med(rs, 'drop_pct'), 1)} | {f(statistics.median(av) if av else None, 1)} | {f(t, 3)} | {f(t / rbase if t and rbase else None, 3)} | {f(mib_tok(rs), 1)} | {f(qq.get('top1_pct'), 1)} | {f(qq.get('mean_kl'), 5)} | {f(qq.get('drop_pct'), 1)} |")
    print()
    if glob.glob(f"{R}/cells/d*-a*"):
        drafting(R, rplain, rdrafts, "Drafting under the replayed trace (each verify pass's rows route as the trace's consecutive decode steps: real text's union of experts; drafts: the replayed run's own tokens):", raccept, rsaccept)
flags = re.search(r"\nFlags and notes:\n(.*?)\n\n", summary, re.S)
if flags:
    print("Protocol flags and notes:\n")
    print(flags.group(1))
    print()
raw = [f"{P}/summary.md"] + [p for p in (f"{out}/quality.md", f"{out}/quality-replay.md", f"{out}/protocol-replay/summary.md") if os.path.exists(p)]
print("Raw: " + ", ".join(raw))
PY
