"""`bmoe serve` against real clients: the `openai` Python client, curl and http.client.

Run by scripts/serve-test.sh (which makes the virtual environment and the model):
    python serve_test.py BMOE MODEL

Every check is an assertion; the first failure ends the run with its message. Texts are
compared with what `bmoe run` prints for the same prompt, template, sampler and seed (its
stdout bytes decoded as the server decodes them: invalid UTF-8 as U+FFFD).
"""

import concurrent.futures
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import openai

BMOE, MODEL = sys.argv[1], sys.argv[2]
CTX = 32768
COMMON = ["-m", MODEL, "-t", "2", "-c", str(CTX)]


def log(msg):
    print(f"serve-test: {msg}", flush=True)


def run_text(prompt, n, seed, temp, chat=False, system=None, extra=()):
    """What `bmoe run` generates (its stdout without the final newline)."""
    a = [BMOE, "run", *COMMON, "-p", prompt, "-n", str(n), "-s", str(seed), "--temp", str(temp), *extra]
    if chat:
        a.append("--chat")
    if system is not None:
        a += ["-sys", system]
    out = subprocess.run(a, capture_output=True, check=True).stdout
    assert out.endswith(b"\n"), out
    return out[:-1].decode("utf-8", errors="replace")


class Server:
    def __init__(self, *extra):
        self.p = subprocess.Popen(
            [BMOE, "serve", *COMMON, "--port", "0", *extra],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.err = []
        deadline = time.time() + 120
        while True:
            line = self.p.stderr.readline()
            assert line, f"the server exited: {''.join(self.err)}"
            self.err.append(line)
            m = re.search(r"listening on http://([\d.]+):(\d+)", line)
            if m:
                self.host, self.port = m.group(1), int(m.group(2))
                break
            assert time.time() < deadline, "the server did not start"
        threading.Thread(target=self._drain, daemon=True).start()
        self.base = f"http://{self.host}:{self.port}"

    def _drain(self):
        for line in self.p.stderr:
            self.err.append(line)

    def client(self, **kw):
        return openai.OpenAI(base_url=self.base + "/v1", api_key=kw.pop("api_key", "none"), max_retries=0, **kw)

    def request(self, method, path, body=None, headers=None, raw=None):
        c = http.client.HTTPConnection(self.host, self.port, timeout=120)
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        h = {"Content-Type": "application/json"}
        h.update(headers or {})
        c.request(method, path, body=data, headers=h)
        r = c.getresponse()
        payload = r.read()
        c.close()
        try:
            return r.status, json.loads(payload), r
        except ValueError:
            return r.status, payload.decode(errors="replace"), r

    def metrics(self):
        s, text, _ = self.request("GET", "/metrics")
        assert s == 200, text
        out = {}
        for line in text.splitlines():
            if line.startswith("#") or not line.strip():
                continue
            name, value = line.rsplit(" ", 1)
            out[name] = out.get(name, 0.0) + float(value)
        return out

    def metric(self, name):
        """The sum of every series of `name` (all label sets)."""
        m = self.metrics()
        return sum(v for k, v in m.items() if k == name or k.startswith(name + "{"))

    def stop(self, sig=signal.SIGTERM):
        self.p.send_signal(sig)
        code = self.p.wait(timeout=60)
        time.sleep(0.2)
        return code, "".join(self.err)


def curl(*args):
    return subprocess.run(["curl", "-sS", *args], capture_output=True, text=True, check=True).stdout


def check_texts(srv):
    """Completions and chat completions, streamed and not, equal `bmoe run`'s text."""
    c = srv.client()
    cases = [("Once upon a time", 24, 5, 0.8), ("The river", 16, 11, 0.0), ("Hello there, how", 20, 3, 1.1)]
    for prompt, n, seed, temp in cases:
        want = run_text(prompt, n, seed, temp)
        r = c.completions.create(model="x", prompt=prompt, max_tokens=n, seed=seed, temperature=temp)
        assert r.choices[0].text == want, (prompt, r.choices[0].text, want)
        assert r.usage.completion_tokens <= n and r.usage.prompt_tokens > 0, r.usage
        got = "".join(
            ch.choices[0].text
            for ch in c.completions.create(
                model="x", prompt=prompt, max_tokens=n, seed=seed, temperature=temp, stream=True
            )
        )
        assert got == want, ("stream", prompt, got, want)
        # curl, the same request.
        j = json.loads(
            curl(srv.base + "/v1/completions", "-H", "Content-Type: application/json", "-d",
                 json.dumps({"prompt": prompt, "max_tokens": n, "seed": seed, "temperature": temp}))
        )
        assert j["choices"][0]["text"] == want, ("curl", j, want)
    log(f"completions: {len(cases)} prompts, plain, streamed and with curl, equal bmoe run's text")

    for user, system, n, seed, temp in [("Why is the sky blue?", None, 20, 7, 0.8), ("Hi", "Be brief.", 12, 2, 0.0)]:
        want = run_text(user, n, seed, temp, chat=True, system=system)
        msgs = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": user}]
        r = c.chat.completions.create(model="x", messages=msgs, max_tokens=n, seed=seed, temperature=temp)
        assert r.choices[0].message.content == want, (user, r.choices[0].message.content, want)
        assert r.choices[0].message.role == "assistant"
        chunks = list(
            c.chat.completions.create(
                model="x", messages=msgs, max_tokens=n, seed=seed, temperature=temp, stream=True,
                stream_options={"include_usage": True},
            )
        )
        got = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
        assert got == want, ("chat stream", got, want)
        assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == r.usage.completion_tokens
        # curl -N: server-sent events as they come.
        sse = curl("-N", srv.base + "/v1/chat/completions", "-H", "Content-Type: application/json", "-d",
                   json.dumps({"messages": msgs, "max_tokens": n, "seed": seed, "temperature": temp, "stream": True}))
        events = [line[6:] for line in sse.splitlines() if line.startswith("data: ")]
        assert events[-1] == "[DONE]", events[-3:]
        got = "".join(json.loads(e)["choices"][0]["delta"].get("content", "") for e in events[:-1])
        assert got == want, ("curl chat stream", got, want)
    log("chat completions: plain, streamed (openai and curl -N) equal bmoe run --chat's text")

    # Stop strings: the text up to the stop string, finish_reason stop.
    want = run_text("Once upon a time", 24, 5, 0.8)
    stop = want[6:9]
    r = c.completions.create(model="x", prompt="Once upon a time", max_tokens=24, seed=5, temperature=0.8, stop=[stop])
    assert r.choices[0].text == want[: want.index(stop)] and r.choices[0].finish_reason == "stop", (r, stop)
    got = "".join(ch.choices[0].text for ch in c.completions.create(
        model="x", prompt="Once upon a time", max_tokens=24, seed=5, temperature=0.8, stop=stop, stream=True))
    assert got == want[: want.index(stop)], (got, stop)
    log(f"stop strings: cut at {stop!r}, plain and streamed")

    # Tokenize and detokenize, /v1/models, /health.
    s, j, _ = srv.request("POST", "/tokenize", {"content": "Hello there", "with_pieces": True})
    assert s == 200 and "".join(t["piece"] for t in j["tokens"]) == "Hello there", j
    s, j2, _ = srv.request("POST", "/detokenize", {"tokens": [t["id"] for t in j["tokens"]]})
    assert s == 200 and j2["content"] == "Hello there", j2
    assert c.models.list().data[0].id == os.path.basename(MODEL)
    s, j, _ = srv.request("GET", "/health")
    assert s == 200 and j["status"] == "ok"
    log("tokenize, detokenize, models, health")


def check_reuse(srv):
    """A second request of the same conversation evaluates only its new tokens."""
    c = srv.client()
    msgs = [{"role": "user", "content": "Tell me about rivers."}]
    r1 = c.chat.completions.create(model="x", messages=msgs, max_tokens=12, seed=1, temperature=0)
    before = srv.metric("bmoe_prompt_tokens_reused_total")
    msgs += [{"role": "assistant", "content": r1.choices[0].message.content}, {"role": "user", "content": "More."}]
    raw = srv.request("POST", "/v1/chat/completions", {"messages": msgs, "max_tokens": 12, "seed": 1, "temperature": 0})
    s, j, _ = raw
    assert s == 200, j
    t = j["timings"]
    total = j["usage"]["prompt_tokens"]
    # Everything but the new turn's text (and the previous reply's last token) was reused.
    assert t["cache_n"] >= r1.usage.prompt_tokens + r1.usage.completion_tokens - 1, (t, r1.usage)
    assert t["prompt_n"] + t["cache_n"] == total and t["prompt_n"] < 40, t
    assert srv.metric("bmoe_prompt_tokens_reused_total") - before == t["cache_n"]
    log(f"prefix reuse: turn 2 evaluated {t['prompt_n']} of {total} prompt tokens ({t['cache_n']} reused)")


def check_bad_input(srv):
    """Each bad input gets its 4xx and an OpenAI error object; the next request succeeds."""
    ok = {"prompt": "Hi", "max_tokens": 4, "seed": 1}
    cases = [
        ("malformed JSON", "/v1/completions", None, b'{"prompt": "Hi", ', 400),
        ("wrong type", "/v1/completions", {"prompt": "Hi", "temperature": "hot"}, None, 400),
        ("missing prompt", "/v1/completions", {"max_tokens": 3}, None, 400),
        ("temperature out of range", "/v1/completions", {"prompt": "Hi", "temperature": -1}, None, 400),
        ("prompt over the context", "/v1/completions", {"prompt": [5] * (CTX + 10), "max_tokens": 1}, None, 400),
        ("max_tokens beyond the context", "/v1/completions", {"prompt": "Hi", "max_tokens": CTX}, None, 400),
        ("a token not in the vocabulary", "/v1/completions", {"prompt": [1, 10**7]}, None, 400),
        ("body over the limit", "/v1/completions", None, b'{"prompt": "' + b"a" * (5 << 20) + b'"}', 413),
        ("not UTF-8", "/v1/completions", None, b'{"prompt": "\xff\xfe"}', 400),
        ("n > 1", "/v1/completions", {"prompt": "Hi", "n": 2}, None, 400),
        ("empty messages", "/v1/chat/completions", {"messages": []}, None, 400),
        ("a message of the wrong shape", "/v1/chat/completions", {"messages": [{"role": 3}]}, None, 400),
        ("no such endpoint", "/v1/embeddings", {"input": "x"}, None, 404),
    ]
    for name, path, body, raw, status in cases:
        s, j, _ = srv.request("POST", path, body, raw=raw)
        assert s == status, (name, s, j)
        assert isinstance(j, dict) and j["error"]["message"] and j["error"]["type"], (name, j)
        s, j, _ = srv.request("POST", "/v1/completions", ok)
        assert s == 200 and j["choices"][0]["text"] is not None, (name, "then", s, j)
    log(f"bad input: {len(cases)} cases answered with their 4xx and an error object, each followed by a good request")


def check_disconnect(srv):
    """A client that goes away mid-stream cancels its generation at the next step."""
    cancelled = srv.metric("bmoe_generations_cancelled_total")
    generated = srv.metric("bmoe_tokens_generated_total")
    c = http.client.HTTPConnection(srv.host, srv.port, timeout=60)
    body = {"prompt": "Once", "max_tokens": CTX - 100, "ignore_eos": True, "stream": True, "seed": 1}
    c.request("POST", "/v1/completions", body=json.dumps(body), headers={"Content-Type": "application/json"})
    r = c.getresponse()
    assert r.status == 200
    got = 0
    while got < 20:
        line = r.fp.readline()
        got += line.startswith(b"data: ")
    c.sock.shutdown(2)
    c.close()
    deadline = time.time() + 30
    while srv.metric("bmoe_generations_cancelled_total") == cancelled:
        assert time.time() < deadline, "the generation was not cancelled"
        time.sleep(0.05)
    n = srv.metric("bmoe_tokens_generated_total") - generated
    assert 20 <= n < CTX - 100, n
    s, j, _ = srv.request("POST", "/v1/completions", {"prompt": "Hi", "max_tokens": 4})
    assert s == 200, j
    log(f"disconnect: the stream's generation stopped after {int(n)} of {CTX - 100} tokens")


def check_load(srv):
    """32 concurrent clients x 4 requests: each answered with its own text or refused 503."""
    prompts = [f"Story number {i}:" for i in range(8)]
    want = {i: run_text(p, 16, 100 + i, 0.7) for i, p in enumerate(prompts)}
    rss0 = srv.metric("bmoe_rss_bytes")
    gen0, pr0, re0 = (srv.metric(m) for m in
                      ("bmoe_tokens_generated_total", "bmoe_prompt_tokens_total", "bmoe_prompt_tokens_reused_total"))
    c = srv.client(timeout=300)

    def one(k):
        i = k % 8
        try:
            r = c.completions.create(model="x", prompt=prompts[i], max_tokens=16, seed=100 + i, temperature=0.7)
        except openai.APIStatusError as e:
            assert e.status_code == 503 and e.response.headers.get("retry-after"), (e.status_code, e.response.text)
            return ("refused", None)
        assert r.choices[0].text == want[i], (k, r.choices[0].text, want[i])
        return ("answered", r.usage)

    t = time.time()
    with concurrent.futures.ThreadPoolExecutor(32) as ex:
        futs = [ex.submit(lambda c0: [one(c0 * 4 + j) for j in range(4)], cl) for cl in range(32)]
        results = [x for f in futs for x in f.result(timeout=600)]
    took = time.time() - t
    answered = [u for kind, u in results if kind == "answered"]
    refused = sum(kind == "refused" for kind, _ in results)
    assert len(results) == 128 and len(answered) + refused == 128
    assert answered, "nothing answered"
    gen = srv.metric("bmoe_tokens_generated_total") - gen0
    prompt = srv.metric("bmoe_prompt_tokens_total") - pr0 + srv.metric("bmoe_prompt_tokens_reused_total") - re0
    assert gen == sum(u.completion_tokens for u in answered), (gen, sum(u.completion_tokens for u in answered))
    assert prompt == sum(u.prompt_tokens for u in answered), (prompt, sum(u.prompt_tokens for u in answered))
    rss1 = srv.metric("bmoe_rss_bytes")
    assert rss1 < rss0 * 1.1 + (16 << 20), (rss0, rss1)
    log(f"load: 32 clients x 4 requests in {took:.1f} s: {len(answered)} answered with their own text, "
        f"{refused} refused 503 with Retry-After, none lost; metrics equal the usage "
        f"({int(gen)} tokens generated); RSS {rss0 / 2**20:.0f} -> {rss1 / 2**20:.0f} MiB")


def check_api_key():
    srv = Server("--api-key", "sekret")
    try:
        s, _, _ = srv.request("GET", "/health")
        assert s == 200
        for h in [{}, {"Authorization": "Bearer wrong"}, {"Authorization": "sekret"}]:
            s, j, _ = srv.request("GET", "/v1/models", headers=h)
            assert s == 401 and j["error"]["type"] == "authentication_error", (h, s, j)
        s, j, _ = srv.request("GET", "/metrics", headers={})
        assert s == 401, s
        r = srv.client(api_key="sekret").completions.create(model="x", prompt="Hi", max_tokens=3)
        assert r.choices[0].text is not None
        try:
            srv.client(api_key="wrong").completions.create(model="x", prompt="Hi", max_tokens=3)
            raise AssertionError("a wrong key was accepted")
        except openai.AuthenticationError:
            pass
    finally:
        code, err = srv.stop()
    assert code == 0, err
    log("api key: 401 without it or with a wrong one (openai.AuthenticationError), /health open")


def check_shutdown(srv):
    """SIGTERM during a stream: the stream ends, the server says so and exits 0."""
    c = http.client.HTTPConnection(srv.host, srv.port, timeout=60)
    body = {"prompt": "Once", "max_tokens": CTX - 100, "ignore_eos": True, "stream": True}
    c.request("POST", "/v1/completions", body=json.dumps(body), headers={"Content-Type": "application/json"})
    r = c.getresponse()
    for _ in range(10):
        r.fp.readline()
    srv.p.send_signal(signal.SIGTERM)
    # The rest, raw (chunk-size lines between the events; each event is one chunk).
    rest = b""
    while True:
        line = r.fp.readline()
        if not line:
            break
        rest += line
        if line.startswith(b"data: [DONE]"):
            break
    rest = rest.decode(errors="replace")
    events = [line[6:] for line in rest.splitlines() if line.startswith("data: ")]
    assert events and events[-1] == "[DONE]", rest[-300:]
    assert json.loads(events[-2])["choices"][0]["finish_reason"] == "cancelled", events[-2]
    code = srv.p.wait(timeout=60)
    time.sleep(0.2)
    err = "".join(srv.err)
    assert code == 0, err
    assert "serve: shutting down" in err and "serve: stopped;" in err, err
    log("shutdown: SIGTERM ended the stream (finish_reason cancelled, [DONE]), exit 0, the last metrics printed")


def main():
    srv = Server("--queue", "8")
    try:
        check_texts(srv)
        check_reuse(srv)
        check_bad_input(srv)
        check_disconnect(srv)
        check_load(srv)
        check_shutdown(srv)
    except BaseException:
        srv.p.kill()
        print("".join(srv.err)[-4000:], file=sys.stderr)
        raise
    check_api_key()
    log("all passed")


main()
