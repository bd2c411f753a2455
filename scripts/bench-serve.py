#!/usr/bin/env python3
"""Time to first token and decode tok/s through `bmoe serve` against `bmoe run`, same model,
prompt, sampler and knobs, interleaved round by round; medians and ratios.

    scripts/bench-serve.py MODEL [ROUNDS] [N] [-- extra bmoe flags]

`bmoe run --repeat 2` measures its second generation (the expert cache warm, as the server's
is); each round's prompt starts with its own word so that the server reuses no prefix. The
server's figures are taken by the client (first streamed chunk; the chunks after it) and from
the server's own `timings`.
"""

import http.client
import json
import re
import statistics
import subprocess
import sys
import time

args = sys.argv[1:]
extra = args[args.index("--") + 1:] if "--" in args else []
args = args[: args.index("--")] if "--" in args else args
MODEL = args[0]
ROUNDS = int(args[1]) if len(args) > 1 else 5
N = int(args[2]) if len(args) > 2 else 128
BMOE = "target/release/bmoe"
common = ["-m", MODEL, "-t", "2", *extra]
words = "river stone quiet seven north light under paper engine garden".split()


def prompt(r):
    return f"{words[r % len(words)].capitalize()} is the first word of this round's prompt, and the rest"


def run_cli(r):
    e = subprocess.run([BMOE, "run", *common, "-p", prompt(r), "-n", str(N), "--temp", "0", "--ignore-eos",
                        "--repeat", "2"], capture_output=True, text=True, errors="replace", check=True).stderr
    pre = re.search(r"prefill: (\d+) tokens in ([\d.]+) s", e)
    gen = re.search(r"generation: (\d+) tokens, ([\d.]+) s/token", e)
    return float(pre.group(2)), 1 / float(gen.group(2))


srv = subprocess.Popen([BMOE, "serve", *common, "--port", "0"], stderr=subprocess.PIPE, text=True)
port = None
for line in srv.stderr:
    m = re.search(r"listening on http://[\d.]+:(\d+)", line)
    if m:
        port = int(m.group(1))
        break
    if line.startswith("mode:"):
        print("#", line.strip())


def run_srv(r):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    body = {"prompt": prompt(r), "max_tokens": N, "temperature": 0, "ignore_eos": True, "stream": True,
            "stream_options": {"include_usage": True}}
    t0 = time.perf_counter()
    c.request("POST", "/v1/completions", body=json.dumps(body), headers={"Content-Type": "application/json"})
    resp = c.getresponse()
    first = last = None
    timings = None
    for line in resp:
        if not line.startswith(b"data: "):
            continue
        if line.startswith(b"data: [DONE]"):
            break
        j = json.loads(line[6:])
        if j.get("timings"):
            timings = j["timings"]
        elif j["choices"] and j["choices"][0]["text"]:
            now = time.perf_counter()
            first = first or now
            last = now
    c.close()
    # The client's decode rate spans the chunks after the first (some tokens are held back
    # while a UTF-8 character is incomplete, so it is per server token count).
    n = timings["predicted_n"]
    return first - t0, (n - 1) / (last - first), timings["prompt_ms"] / 1e3, timings["predicted_per_second"]


rows = []
try:
    run_srv(99)  # the server's first request warms its cache, as run's --repeat does
    for r in range(ROUNDS):
        cli = run_cli(r)
        s = run_srv(r)
        rows.append((*cli, *s))
        print(f"round {r}: run prefill {cli[0]:.3f} s {cli[1]:.2f} tok/s | serve first token {s[0]:.3f} s "
              f"(prefill {s[2]:.3f} s) {s[1]:.2f} tok/s client, {s[3]:.2f} tok/s server", flush=True)
finally:
    srv.terminate()
    srv.wait()
med = [statistics.median(c) for c in zip(*rows)]
# run's first token is sampled from its prefill's logits: its time to first token is the prefill.
print(f"median: bmoe run: first token {med[0]:.3f} s, {med[1]:.2f} tok/s; bmoe serve: first token {med[2]:.3f} s "
      f"at the client ({med[4]:.3f} s of it prefill), {med[3]:.2f} tok/s at the client, {med[5]:.2f} tok/s in the server")
print(f"ratios serve/run: first token {med[2] / med[0]:.3f}x (prefill {med[4] / med[0]:.3f}x), "
      f"decode time per token {med[1] / med[3]:.3f}x (client) {med[1] / med[5]:.3f}x (server)")
