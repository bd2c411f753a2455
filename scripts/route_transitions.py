#!/usr/bin/env python3
"""How well can the next token's routing at a layer be predicted from this token's?

Reads a route_trace v1 file (../shared/traces/README.md) and, for every layer and decode token
t >= 8, ranks the 128 experts by a predictor and reports the precision of its top-k against the
experts actually routed at t+1 (averaged over layers and tokens):

  prev            the experts routed at t
  decay           the decayed use count (gamma 0.95 per token), ties broken towards t's set
  decay+transW    decay + W x the learned transition score
  trans           the learned transition score alone

The transition score of expert b is sum over a routed at t of P(b at t+1 | a at t), learned
online from the tokens before t (no future). docs/cache-policy.md ("Why not half-way") quotes
its output for both traces.

usage: python3 scripts/route_transitions.py TRACE.route.csv
"""
import collections
import sys

GAMMA = 0.95
WARMUP = 8


def main(path):
    lines = open(path).read().splitlines()
    header = next(l for l in lines if "n_layer=" in l)
    fields = dict(kv.split("=", 1) for kv in header.lstrip("# ").split() if "=" in kv)
    n_layer, n_expert = int(fields["n_layer"]), int(fields["n_expert"])
    routed = collections.defaultdict(lambda: collections.defaultdict(set))
    for l in lines:
        if l.startswith("#") or l.startswith("turn"):
            continue
        turn, phase, step, layer, slot, expert = l.split(",")[:6]
        if phase == "1":
            routed[(int(turn), int(step))][int(layer)].add(int(expert))
    tokens = sorted(routed)
    res = collections.defaultdict(list)
    for layer in range(n_layer):
        seq = [routed[t][layer] for t in tokens]
        freq = [0.0] * n_expert
        trans = [[0.0] * n_expert for _ in range(n_expert)]
        seen = [0.0] * n_expert
        for t in range(len(seq) - 1):
            now, nxt = seq[t], seq[t + 1]
            freq = [f * GAMMA for f in freq]
            for e in now:
                freq[e] += 1
            k = len(nxt)

            def precision(score):
                top = sorted(range(n_expert), key=lambda e: -score[e])[:k]
                return len(set(top) & nxt) / k

            if t >= WARMUP:
                tr = [sum(trans[a][e] / (seen[a] + 1) for a in now) for e in range(n_expert)]
                res["prev"].append(len(now & nxt) / k)
                res["decay"].append(precision([freq[e] + (1e-3 if e in now else 0) for e in range(n_expert)]))
                for w in (0.3, 1, 3):
                    res[f"decay+trans{w}"].append(precision([freq[e] + w * tr[e] for e in range(n_expert)]))
                res["trans"].append(precision([tr[e] + 1e-6 * freq[e] for e in range(n_expert)]))
            for a in now:  # learn a -> nxt only once t+1 has been routed
                seen[a] += 1
                for b in nxt:
                    trans[a][b] += 1
    for name, v in res.items():
        print(f"{name:<16} {100 * sum(v) / len(v):5.1f} % precision")


if __name__ == "__main__":
    main(sys.argv[1])
