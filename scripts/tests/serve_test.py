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
import socket
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


def good(srv, after):
    """The request that must still be answered after a bad one."""
    s, j, _ = srv.request("POST", "/v1/completions", {"prompt": "Hi", "max_tokens": 4, "seed": 1})
    assert s == 200 and j["choices"][0]["text"] is not None, (after, "then", s, j)


CASES = {}


def refused(srv, name, path, body=None, raw=None, status=400, param=None, needle=None, code=None, headers=None):
    """One bad request: its status, an OpenAI error object (naming the field when `param`), then a
    good request answered."""
    s, j, _ = srv.request("POST", path, body, raw=raw, headers=headers)
    assert s == status, (name, s, j)
    assert isinstance(j, dict) and j["error"]["message"] and j["error"]["type"], (name, j)
    if param is not None:
        assert j["error"]["param"] == param, (name, param, j)
    if needle is not None:
        assert needle in j["error"]["message"], (name, needle, j)
    if code is not None:
        assert j["error"]["code"] == code, (name, code, j)
    good(srv, name)
    group = name.split(":")[0]
    CASES[group] = CASES.get(group, 0) + 1


def accepted(srv, name, path, body):
    s, j, _ = srv.request("POST", path, body)
    assert s == 200, (name, s, j)
    good(srv, name)
    group = name.split(":")[0]
    CASES[group] = CASES.get(group, 0) + 1
    return j


NUMERIC = ["max_tokens", "max_completion_tokens", "n_predict", "temperature", "top_p", "top_k", "min_p",
           "typical_p", "seed", "presence_penalty", "frequency_penalty", "repeat_penalty", "repeat_last_n", "n"]
# Negative values that mean something: a random seed, penalties that favour, the whole context.
NEGATIVE_OK = {"seed", "presence_penalty", "frequency_penalty", "repeat_last_n", "n_predict"}


def check_edges(srv):
    """The server's edges: each refused with its status and an error object naming the field (or
    answered correctly), each followed by a good request that is answered."""
    cmpl, chat = "/v1/completions", "/v1/chat/completions"
    base = {"prompt": "Hi", "max_tokens": 4, "seed": 1}
    # Bodies that are not UTF-8: inside a string, and bare bytes.
    refused(srv, "utf8:string", cmpl, raw=b'{"prompt": "\xff\xfe"}', needle="not UTF-8")
    refused(srv, "utf8:bare", cmpl, raw=b"\xff\xfe\x00\x81garbage", needle="not UTF-8")
    refused(srv, "utf8:chat", chat, raw=b'{"messages": [{"role": "user", "content": "\xc3"}]}', needle="not UTF-8")
    refused(srv, "json:not an object", cmpl, [1, 2, 3])
    # Every numeric field as a string, a negative, NaN and 1e308.
    for f in NUMERIC:
        refused(srv, f"numeric:{f}=string", cmpl, {**base, f: "12"}, param=f)
        raw = json.dumps({**base, f: 1}).replace(f'"{f}": 1', f'"{f}": NaN').encode()
        refused(srv, f"numeric:{f}=NaN", cmpl, raw=raw, needle="NaN and Infinity are not JSON numbers")
        huge = json.dumps({**base, f: 1}).replace(f'"{f}": 1', f'"{f}": 1e308').encode()
        refused(srv, f"numeric:{f}=1e308", cmpl, raw=huge, param=f)
        body = {**base, f: -1}
        if f == "n_predict":
            body.pop("max_tokens")
            body["n_predict"] = -2
        if f in NEGATIVE_OK and f != "n_predict":
            accepted(srv, f"numeric:{f}=-1", cmpl, body)
        else:
            # The sampler's ranges name the field in the message; the types in `param` too.
            sampler = f in ("temperature", "top_p", "top_k", "min_p", "typical_p", "repeat_penalty")
            refused(srv, f"numeric:{f}=-1", cmpl, body, param=None if sampler else f, needle=f)
    # max_tokens 0, -1, 1e9: refused (the last naming the context).
    refused(srv, "max_tokens:0", cmpl, {**base, "max_tokens": 0}, param="max_tokens", needle="at least 1")
    refused(srv, "max_tokens:-1", cmpl, {**base, "max_tokens": -1}, param="max_tokens")
    refused(srv, "max_tokens:1e9", cmpl, {**base, "max_tokens": 10**9}, param="max_tokens",
            code="context_length_exceeded")
    refused(srv, "max_tokens:chat 1e9", chat, {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 10**9},
            code="context_length_exceeded")
    # What bmoe does not do, named; what asks for nothing, answered.
    for name, extra in [("n", {"n": 2}), ("best_of", {"best_of": 3}), ("logprobs", {"logprobs": True}),
                        ("logprobs", {"logprobs": 5}), ("top_logprobs", {"top_logprobs": 3}), ("echo", {"echo": True}),
                        ("suffix", {"suffix": "end"}),
                        ("tools", {"tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]}),
                        ("tool_choice", {"tool_choice": "required"}), ("functions", {"functions": [{"name": "f"}]}),
                        ("function_call", {"function_call": {"name": "f"}}),
                        ("response_format", {"response_format": {"type": "json_object"}}),
                        ("logit_bias", {"logit_bias": {"5": 100}})]:
        refused(srv, f"unsupported:{name}", cmpl, {**base, **extra}, param=name)
        refused(srv, f"unsupported:chat {name}", chat,
                {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, **extra}, param=name)
    accepted(srv, "unsupported:asks nothing", chat, {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4,
             "n": 1, "best_of": 1, "logprobs": False, "tools": [], "tool_choice": "none",
             "response_format": {"type": "text"}, "logit_bias": {}, "echo": False})
    # Messages: empty, unknown roles, a content of the wrong shape; the developer role is the system's.
    refused(srv, "messages:empty", chat, {"messages": []}, param="messages")
    refused(srv, "messages:unknown role", chat, {"messages": [{"role": "wizard", "content": "Hi"}]},
            param="messages[0].role", needle='"wizard"')
    refused(srv, "messages:tool role", chat, {"messages": [{"role": "user", "content": "Hi"},
                                                           {"role": "tool", "content": "42"}]},
            param="messages[1].role")
    refused(srv, "messages:role not a string", chat, {"messages": [{"role": 3}]}, param="messages[0].role")
    refused(srv, "messages:not a list", chat, {"messages": "Hi"}, param="messages")
    j = accepted(srv, "messages:developer", chat, {"messages": [{"role": "developer", "content": "Be brief."},
                                                                {"role": "user", "content": "Hi"}],
                                                   "max_tokens": 12, "seed": 2, "temperature": 0})
    want = run_text("Hi", 12, 2, 0.0, chat=True, system="Be brief.")
    assert j["choices"][0]["message"]["content"] == want, (j, want)
    # Stop strings: more than 4, 10 KB long; 4 of 1 KiB are taken.
    refused(srv, "stop:5 entries", cmpl, {**base, "stop": ["a", "b", "c", "d", "e"]}, param="stop")
    refused(srv, "stop:10 KB", cmpl, {**base, "stop": ["x" * 10240]}, param="stop[0]", needle="10240 bytes")
    refused(srv, "stop:10 KB in a list", chat, {"messages": [{"role": "user", "content": "Hi"}],
                                                 "stop": ["a", "y" * 10240]}, param="stop[1]")
    accepted(srv, "stop:4 of 1 KiB", cmpl, {**base, "stop": ["z" * 1024] * 4})
    # Prompts longer than the context: tokens, text, a chat message.
    refused(srv, "context:tokens", cmpl, {"prompt": [5] * (CTX + 10), "max_tokens": 1}, code="context_length_exceeded")
    refused(srv, "context:text", cmpl, {"prompt": "ab" * CTX}, code="context_length_exceeded")
    refused(srv, "context:chat", chat, {"messages": [{"role": "user", "content": "ab" * CTX}]},
            code="context_length_exceeded")
    total = sum(CASES.values())
    log("edges: " + ", ".join(f"{k} {v}" for k, v in CASES.items()) +
        f": {total} cases, each followed by a good request that was answered")
    return total


def send_big(srv, chunked, declared=None, total=64 << 20):
    """A body of `total` bytes (or `declared` in Content-Length) sent while a reader waits for the
    answer; the status and how many bytes went out before the server answered or stopped reading."""
    sock = socket.create_connection((srv.host, srv.port), timeout=60)
    head = "POST /v1/completions HTTP/1.1\r\nHost: bmoe\r\nContent-Type: application/json\r\n"
    head += "Transfer-Encoding: chunked\r\n" if chunked else f"Content-Length: {declared or total}\r\n"
    sock.sendall((head + "\r\n").encode())
    got, done = bytearray(), threading.Event()

    def reader():
        try:
            while b"\r\n\r\n" not in got:
                b = sock.recv(65536)
                if not b:
                    break
                got.extend(b)
        except OSError:
            pass
        done.set()

    threading.Thread(target=reader, daemon=True).start()
    piece = b'{"prompt": "' + b"a" * ((1 << 20) - 12)
    sent = 0
    while sent < total and not done.is_set():
        data = b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece
        try:
            sock.sendall(data)
        except OSError:
            break
        sent += len(piece)
    assert done.wait(60), "no answer to an oversized body"
    sock.close()
    status = int(got.split(b" ", 2)[1]) if got.startswith(b"HTTP/1.1 ") else None
    return status, sent


def check_body_limit(srv):
    """Bodies past --max-body (4 MiB): a Content-Length far over it is answered 413 at once (the
    client is still sending); a chunked body is kept to the limit and the rest read and dropped
    (64 MiB at most); neither is buffered past the limit (the RSS stays)."""
    rss0 = srv.metric("bmoe_rss_bytes")
    status, sent = send_big(srv, chunked=False, declared=2 << 30, total=64 << 20)
    assert status == 413 and sent < 64 << 20, (status, sent)
    good(srv, "declared 2 GiB")
    status, sent_chunked = send_big(srv, chunked=True)
    assert status == 413, status
    good(srv, "chunked 64 MiB")
    rss1 = srv.metric("bmoe_rss_bytes")
    assert rss1 < rss0 + (24 << 20), (rss0, rss1)
    assert sent_chunked < 64 << 20 or rss1 < rss0 + (24 << 20), "the whole chunked body was read and kept"
    log(f"body limit: 2 GiB declared answered 413 after {sent >> 20} MiB sent; a chunked body answered 413 after "
        f"{sent_chunked >> 20} MiB sent; RSS {rss0 / 2**20:.0f} -> {rss1 / 2**20:.0f} MiB; each followed by a good request")
    return 2


def check_disconnect_queued(srv):
    """Two streams: the first client goes away mid-stream while the second waits behind it; the
    second gets its own whole answer."""
    want = run_text("The river", 24, 7, 0.8)
    cancelled = srv.metric("bmoe_generations_cancelled_total")
    a = http.client.HTTPConnection(srv.host, srv.port, timeout=60)
    body = {"prompt": "Once", "max_tokens": CTX - 100, "ignore_eos": True, "stream": True, "seed": 1}
    a.request("POST", "/v1/completions", body=json.dumps(body), headers={"Content-Type": "application/json"})
    ra = a.getresponse()
    assert ra.status == 200
    got = 0
    while got < 5:
        got += ra.fp.readline().startswith(b"data: ")
    result = {}

    def second():
        c = srv.client(timeout=120)
        chunks = list(c.completions.create(model="x", prompt="The river", max_tokens=24, seed=7, temperature=0.8,
                                           stream=True))
        result["text"] = "".join(ch.choices[0].text for ch in chunks)
        result["finish"] = chunks[-1].choices[0].finish_reason

    t = threading.Thread(target=second)
    t.start()
    deadline = time.time() + 30
    while srv.metric("bmoe_queue_depth") < 1:
        assert time.time() < deadline, "the second request was not queued"
        time.sleep(0.02)
    for _ in range(5):
        ra.fp.readline()
    a.sock.shutdown(socket.SHUT_RDWR)
    a.close()
    t.join(120)
    assert not t.is_alive(), "the second stream did not finish"
    assert result.get("text") == want and result["finish"] == "length", (result, want)
    assert srv.metric("bmoe_generations_cancelled_total") == cancelled + 1
    log("two streams, the first client gone mid-stream: the second got its whole answer (equal to bmoe run's)")
    return 1


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
    cases = 0
    try:
        s, _, _ = srv.request("GET", "/health")
        assert s == 200

        def answered(h):
            s, j, _ = srv.request("POST", "/v1/completions", {"prompt": "Hi", "max_tokens": 3}, headers=h)
            assert s == 200, (h, s, j)

        key = {"Authorization": "Bearer sekret"}
        for h in [{}, {"Authorization": "Bearer wrong"}, {"Authorization": "sekret"}, {"Authorization": "Bearer"},
                  {"Authorization": "Basic sekret"}, {"Authorization": "Bearer sekreT"},
                  {"Authorization": "Bearer sekret2"}]:
            s, j, _ = srv.request("GET", "/v1/models", headers=h)
            assert s == 401 and j["error"]["type"] == "authentication_error", (h, s, j)
            answered(key)
            cases += 1
        # A key in the query string is refused, even the right one, even beside the header.
        for q, h in [("?api_key=sekret", {}), ("?key=sekret", {}), ("?api_key=sekret", key)]:
            s, j, _ = srv.request("GET", "/v1/models" + q, headers=h)
            assert s == 401 and "in the URL" in j["error"]["message"], (q, h, s, j)
            answered(key)
            cases += 1
        s, _, _ = srv.request("GET", "/health?api_key=x")
        assert s == 200
        # The header's name and the scheme in any case, spaces around the key.
        for h in [{"authorization": "Bearer sekret"}, {"AUTHORIZATION": "bearer sekret"},
                  {"Authorization": "BEARER   sekret "}]:
            answered(h)
            cases += 1
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
    log(f"api key: {cases} cases: 401 without it, with a wrong one (openai.AuthenticationError) or in the URL; "
        "the header's name and scheme in any case; /health open; each followed by a good request")
    return cases


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
        edges = check_edges(srv)
        edges += check_body_limit(srv)
        check_disconnect(srv)
        edges += check_disconnect_queued(srv)
        check_load(srv)
        check_shutdown(srv)
    except BaseException:
        srv.p.kill()
        print("".join(srv.err)[-4000:], file=sys.stderr)
        raise
    edges += check_api_key()
    log(f"edges: {edges} cases in all")
    log("all passed")


main()
