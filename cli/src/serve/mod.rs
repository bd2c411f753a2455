//! `bmoe serve`: an OpenAI-compatible HTTP server (axum on tokio) over one engine, loaded once
//! and kept warm: the expert cache and the KV cache of the last conversation survive between
//! requests. Endpoints as llama-server and the OpenAI API define them: `GET /health`,
//! `GET /v1/models`, `POST /v1/completions`, `POST /v1/chat/completions` (`stream: true` as
//! server-sent events), `POST /tokenize`, `POST /detokenize`, `GET /metrics` (Prometheus text,
//! from the `metrics` facade the engine publishes to). Requests queue FIFO for the decode
//! worker ([`worker`]); a full queue answers 503 with `Retry-After`.

mod api;
mod worker;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap};
use axum::middleware::Next;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use bmoe::engine::llama;
use bmoe::engine::session::CancelToken;
use futures_util::stream::{self, Stream};
use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::guard::Signals;
use api::{ApiError, ChatRequest, CompletionRequest, Prompt};
use worker::{Done, Event, Job, Shared};

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub run: crate::run::Args,
    /// Address to listen on (loopback by default: put a proxy in front to expose it).
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// Requests waiting for the decode worker beyond the one running; more get 503.
    #[arg(long, default_value_t = 16)]
    queue: usize,
    /// Require `Authorization: Bearer KEY` on every endpoint but /health (env BMOE_API_KEY).
    #[arg(long, env = "BMOE_API_KEY", hide_env_values = true)]
    api_key: Option<String>,
    /// Largest request body (bytes, or with a unit: 512K, 4M).
    #[arg(long, default_value = "4M")]
    max_body: String,
    /// The model's id in /v1/models and the replies [default: the file's name].
    #[arg(long)]
    alias: Option<String>,
}

/// What every handler shares.
struct App {
    jobs: std::sync::mpsc::SyncSender<Job>,
    shared: Arc<worker::Shared>,
    lm: Arc<llama::Model>,
    template: Option<crate::chat::Template>,
    /// The sampler of the command line: a request's fields override it.
    sampling: llama::Sampling,
    no_think: bool,
    ignore_eos: bool,
    n_ctx: usize,
    /// The command line's -n (`usize::MAX` for none): a request without `max_tokens`.
    n_predict: usize,
    model_id: String,
    created: u64,
    api_key: Option<String>,
    max_body: usize,
    next_id: AtomicU64,
    seeds: AtomicU64,
    closing: AtomicBool,
}

type AppRef = Arc<App>;

/// The longest `--queue`.
const MAX_QUEUE: usize = 4096;

pub fn run(args: ServeArgs) -> anyhow::Result<()> {
    let run = &args.run;
    run.check_sampling()?;
    run.warn_cpu_irrelevant();
    let model_path = run.model.clone().context("-m MODEL is required")?;
    llama::set_verbose(run.verbose);
    let max_body = usize::try_from(bmoe::engine::stream::budget::parse_size("--max-body", &args.max_body)?)
        .context("--max-body")?;
    if max_body == 0 {
        anyhow::bail!("--max-body {}: a request needs at least a byte", args.max_body);
    }
    if !(1..=MAX_QUEUE).contains(&args.queue) {
        anyhow::bail!(
            "--queue {}: 1 to {MAX_QUEUE} requests may wait (the queue is allocated whole, and a request waiting \
             behind thousands of others has timed out at its client long before)",
            args.queue
        );
    }
    // Ctrl-C and SIGTERM: a graceful shutdown (a second one ends the process at once).
    let signals = Signals::install(CancelToken::default()).context("installing the signal handlers")?;
    let engine = crate::run::open(run, &model_path, &signals)?;
    eprintln!("{}", engine.report().load_line());
    let lm = engine.tokenizer().clone();
    let template = match crate::chat::Template::new(&lm, run.chat_template.as_deref()) {
        Ok(t) => Some(t),
        Err(e) if run.chat_template.is_none() => {
            eprintln!("warning: /v1/chat/completions answers 400: {e:#}");
            None
        }
        Err(e) => return Err(e),
    };
    let recorder = metrics_exporter_prometheus::PrometheusBuilder::new()
        .set_buckets(&[0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0])?
        .build_recorder();
    let prometheus = recorder.handle();
    metrics::set_global_recorder(recorder).context("installing the metrics recorder")?;
    if let Some(h) = engine.rpc() {
        crate::rpc::publish(&h.snapshot());
    }
    let n_ctx = engine.report().n_ctx as usize;
    let (tx, rx) = std::sync::mpsc::sync_channel::<Job>(args.queue);
    let shared = Arc::new(Shared {
        queued: AtomicUsize::new(0),
        closing: AtomicBool::new(false),
        running: std::sync::Mutex::new(None),
    });
    let worker = {
        let shared = shared.clone();
        std::thread::Builder::new().name("bmoe-decode".into()).spawn(move || worker::run(engine, rx, shared))?
    };
    let app = Arc::new(App {
        jobs: tx,
        shared: shared.clone(),
        lm,
        template,
        sampling: run.sampling(),
        no_think: run.no_think,
        ignore_eos: run.ignore_eos,
        n_ctx,
        n_predict: run.n_tokens(usize::MAX),
        model_id: args.alias.clone().unwrap_or_else(|| bmoe::engine::engine::model_name(&model_path)),
        created: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()),
        api_key: args.api_key.clone(),
        max_body,
        next_id: AtomicU64::new(1),
        seeds: AtomicU64::new(u64::from(run.sampling().seed)),
        closing: AtomicBool::new(false),
    });
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let addr: SocketAddr = format!("{}:{}", args.host, args.port)
        .parse()
        .or_else(|_| {
            use std::net::ToSocketAddrs as _;
            (args.host.as_str(), args.port).to_socket_addrs()?.next().context("no address")
        })
        .with_context(|| format!("--host {} --port {}", args.host, args.port))?;
    let served = rt.block_on(serve(app.clone(), addr, prometheus.clone(), signals.clone()));
    // Shutdown: the queue is closed (the worker answers what is left 503 and stops).
    shared.closing.store(true, Ordering::SeqCst);
    if let Some(c) = shared.running.lock().expect("not poisoned").as_ref() {
        c.cancel();
    }
    drop(app);
    let _ = worker.join();
    rt.shutdown_timeout(Duration::from_secs(2));
    served?;
    // The last figures, as a scrape would see them.
    let text = prometheus.render();
    // The sum over every series of `name` (each label set).
    let pick = |name: &str| {
        let sum: f64 = text
            .lines()
            .filter(|l| l.strip_prefix(name).is_some_and(|r| r.starts_with([' ', '{'])))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum();
        sum.to_string()
    };
    eprintln!(
        "serve: stopped; {} requests, {} tokens generated, {} prompt tokens evaluated and {} reused, {} generations cancelled",
        pick("bmoe_requests_total"),
        pick("bmoe_tokens_generated_total"),
        pick("bmoe_prompt_tokens_total"),
        pick("bmoe_prompt_tokens_reused_total"),
        pick("bmoe_generations_cancelled_total"),
    );
    Ok(())
}

async fn serve(
    app: AppRef,
    addr: SocketAddr,
    prometheus: metrics_exporter_prometheus::PrometheusHandle,
    signals: Signals,
) -> anyhow::Result<()> {
    let metrics_route = {
        let p = prometheus.clone();
        get(move || {
            let p = p.clone();
            async move {
                metrics::gauge!("bmoe_rss_bytes").set(rss_bytes() as f64);
                ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], p.render())
            }
        })
    };
    let router = Router::new()
        .route("/health", get(health))
        .route("/v1/health", get(health))
        .route("/v1/models", get(models))
        .route("/v1/completions", post(completions))
        .route("/completions", post(completions))
        .route("/v1/chat/completions", post(chat_completions))
        .route("/chat/completions", post(chat_completions))
        .route("/tokenize", post(tokenize))
        .route("/detokenize", post(detokenize))
        .route("/metrics", metrics_route)
        .fallback(|| async { ApiError::new(404, "not_found_error", "no such endpoint").into_response() })
        .layer(axum::middleware::from_fn_with_state(app.clone(), guard))
        .with_state(app.clone());
    let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| format!("listening on {addr}"))?;
    eprintln!("serve: listening on http://{} (model {})", listener.local_addr()?, app.model_id);
    let shutdown = {
        let app = app.clone();
        async move {
            while !signals.cancel.is_cancelled() {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            eprintln!("serve: shutting down (stop accepting; the generation in progress is cancelled)");
            app.closing.store(true, Ordering::SeqCst);
            app.shared.closing.store(true, Ordering::SeqCst);
            if let Some(c) = app.shared.running.lock().expect("not poisoned").as_ref() {
                c.cancel();
            }
        }
    };
    axum::serve(listener, router).with_graceful_shutdown(shutdown).await?;
    Ok(())
}

/// The request's gate: the API key (all but /health), the count and latency by endpoint
/// and status.
async fn guard(State(app): State<AppRef>, req: Request, next: Next) -> Response {
    let path = req.uri().path().to_string();
    let t = Instant::now();
    let endpoint = match path.as_str() {
        "/health" | "/v1/health" | "/v1/models" | "/metrics" | "/tokenize" | "/detokenize" => path.clone(),
        "/v1/completions" | "/completions" => "/v1/completions".into(),
        "/v1/chat/completions" | "/chat/completions" => "/v1/chat/completions".into(),
        _ => "other".into(),
    };
    // A declared body over the limit is refused before the handler runs, and never kept.
    let declared = req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.trim().parse::<u64>().ok());
    let key_in_url = req.uri().query().is_some_and(|q| {
        q.split('&').any(|kv| matches!(kv.split('=').next(), Some("api_key" | "api-key" | "key" | "access_token")))
    });
    let resp = if declared.is_some_and(|n| n > app.max_body as u64) {
        // Most clients send the whole body before they read the answer: what is declared is
        // read and dropped (up to DRAIN bytes), so that they read the 413 rather than a reset.
        if declared.is_some_and(|n| n <= DRAIN) {
            drain(req.into_body(), DRAIN).await;
        }
        too_large(app.max_body).into_response()
    } else {
        match &app.api_key {
            Some(_) if key_in_url && !path.ends_with("/health") => ApiError::new(
                401,
                "authentication_error",
                "an API key in the URL is refused (URLs end up in logs and histories): send it as Authorization: \
             Bearer KEY",
            )
            .into_response(),
            Some(key) if !path.ends_with("/health") && !authorized(req.headers(), key) => ApiError::new(
                401,
                "authentication_error",
                "a valid API key is required: Authorization: Bearer KEY (see --api-key)",
            )
            .into_response(),
            _ => next.run(req).await,
        }
    };
    let status = resp.status().as_u16().to_string();
    metrics::counter!("bmoe_requests_total", "endpoint" => endpoint.clone(), "status" => status).increment(1);
    metrics::histogram!("bmoe_request_duration_seconds", "endpoint" => endpoint).record(t.elapsed().as_secs_f64());
    resp
}

/// `Authorization: Bearer KEY`: the header's name and the scheme in any case (RFC 9110 makes
/// both case-insensitive), spaces around the key ignored.
fn authorized(h: &HeaderMap, key: &str) -> bool {
    let Some(v) = h.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()) else { return false };
    let Some((scheme, given)) = v.trim().split_once(' ') else { return false };
    if !scheme.eq_ignore_ascii_case("bearer") {
        return false;
    }
    let given = given.trim();
    // Compared in constant time.
    given.len() == key.len() && given.bytes().zip(key.bytes()).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

async fn health(State(app): State<AppRef>) -> Response {
    if app.closing.load(Ordering::SeqCst) {
        return ApiError::new(503, "unavailable_error", "shutting down").into_response();
    }
    Json(json!({ "status": "ok" })).into_response()
}

async fn models(State(app): State<AppRef>) -> Json<Value> {
    Json(json!({
        "object": "list",
        "data": [{ "id": app.model_id, "object": "model", "created": app.created, "owned_by": "bmoe",
                   "meta": { "n_ctx": app.n_ctx, "n_vocab": app.lm.n_vocab() } }],
    }))
}

/// The body as JSON: 413 beyond --max-body (nothing is kept past it: a larger Content-Length is
/// refused by the guard before the handler runs), 400 for bytes that are not UTF-8 or not JSON.
async fn json_body(app: &App, body: Body) -> Result<Value, ApiError> {
    use futures_util::StreamExt as _;
    let mut stream = body.into_data_stream();
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk
            .map_err(|e| ApiError::new(400, "invalid_request_error", &format!("reading the request body: {e}")))?;
        if bytes.len() + chunk.len() > app.max_body {
            // Nothing more is kept; what the client still sends is read and dropped (up to
            // DRAIN), so that it reads the 413.
            drain_stream(&mut stream, DRAIN.saturating_sub(bytes.len() as u64)).await;
            return Err(too_large(app.max_body));
        }
        bytes.extend_from_slice(&chunk);
    }
    if let Err(e) = std::str::from_utf8(&bytes) {
        return Err(ApiError::new(
            400,
            "invalid_request_error",
            &format!("the request body is not UTF-8 (an invalid byte at offset {})", e.valid_up_to()),
        ));
    }
    serde_json::from_slice(&bytes).map_err(|e| {
        let hint = if [&b"NaN"[..], b"Infinity"].iter().any(|w| bytes.windows(w.len()).any(|x| x == *w)) {
            " (NaN and Infinity are not JSON numbers)"
        } else {
            ""
        };
        ApiError::new(400, "invalid_request_error", &format!("the request body is not JSON: {e}{hint}"))
    })
}

/// The most of an oversized body read (and dropped) before the 413 is sent; past it the
/// connection is closed.
const DRAIN: u64 = 64 << 20;

/// Read and drop up to `most` bytes of `body`, for at most 30 s.
async fn drain(body: Body, most: u64) {
    drain_stream(&mut body.into_data_stream(), most).await;
}

async fn drain_stream(s: &mut axum::body::BodyDataStream, most: u64) {
    use futures_util::StreamExt as _;
    let go = async {
        let mut n = 0u64;
        while let Some(Ok(c)) = s.next().await {
            n += c.len() as u64;
            if n >= most {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(30), go).await;
}

fn too_large(max: usize) -> ApiError {
    ApiError::new(413, "invalid_request_error", &format!("the request body is over {max} bytes (--max-body)"))
}

/// `v` as a `T`: a 400 naming the field that does not fit (`max_tokens: invalid value: integer
/// -1, expected u32`).
fn parse<T: serde::de::DeserializeOwned>(v: &Value) -> Result<T, ApiError> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let path = e.path().to_string();
        let why = e.into_inner().to_string();
        match path.as_str() {
            "." => ApiError::new(400, "invalid_request_error", &format!("the request body: {why}")),
            p => ApiError::field(p, &why),
        }
    })
}

/// The body as a `T` (see [`json_body`] and [`parse`]).
async fn body<T: serde::de::DeserializeOwned>(app: &App, b: Body) -> Result<T, ApiError> {
    parse(&json_body(app, b).await?)
}

async fn tokenize(State(app): State<AppRef>, b: Body) -> Result<Json<Value>, ApiError> {
    let r: api::TokenizeRequest = body(&app, b).await?;
    let toks = app.lm.tokenize(&r.content, r.add_special.unwrap_or(false)).map_err(ApiError::bad)?;
    Ok(Json(match r.with_pieces.unwrap_or(false) {
        false => json!({ "tokens": toks }),
        true => {
            json!({ "tokens": toks.iter().map(|&t| json!({ "id": t, "piece": app.lm.token_text(t) })).collect::<Vec<_>>() })
        }
    }))
}

async fn detokenize(State(app): State<AppRef>, b: Body) -> Result<Json<Value>, ApiError> {
    let r: api::DetokenizeRequest = body(&app, b).await?;
    let n = app.lm.n_vocab() as i64;
    if let Some(bad) = r.tokens.iter().find(|&&t| t < 0 || t >= n) {
        return Err(ApiError::new(
            400,
            "invalid_request_error",
            &format!("token {bad} is not in the vocabulary of {n}"),
        ));
    }
    let bytes: Vec<u8> = r.tokens.iter().flat_map(|&t| app.lm.piece(t as i32)).collect();
    Ok(Json(json!({ "content": String::from_utf8_lossy(&bytes) })))
}

/// Cancels its request's generation when dropped armed: the handler (or its stream) went
/// away because the client did.
struct CancelOnDrop(CancelToken, bool);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if self.1 {
            self.0.cancel();
        }
    }
}

/// A queued request: its events, and the guard that cancels it.
struct Queued {
    rx: mpsc::UnboundedReceiver<Event>,
    guard: CancelOnDrop,
    id: String,
}

/// Check the prompt against the context and queue it.
fn enqueue(
    app: &App,
    text: Option<String>,
    tokens: Vec<i32>,
    common: &api::Common,
    kind: &str,
) -> Result<Queued, ApiError> {
    if app.closing.load(Ordering::SeqCst) {
        return Err(ApiError::new(503, "unavailable_error", "the server is shutting down"));
    }
    if tokens.is_empty() {
        return Err(ApiError::new(400, "invalid_request_error", "the prompt is empty"));
    }
    let n_vocab = app.lm.n_vocab() as i32;
    if let Some(t) = tokens.iter().find(|&&t| t < 0 || t >= n_vocab) {
        return Err(ApiError::new(
            400,
            "invalid_request_error",
            &format!("prompt token {t} is not in the vocabulary of {n_vocab}"),
        ));
    }
    if tokens.len() >= app.n_ctx {
        return Err(ApiError::new(
            400,
            "invalid_request_error",
            &format!(
                "the prompt is {} tokens; the context holds {} (-c), with room for one generated",
                tokens.len(),
                app.n_ctx
            ),
        )
        .code("context_length_exceeded"));
    }
    let n_predict = match common.limit() {
        Some(n) if tokens.len() + n as usize > app.n_ctx => {
            return Err(ApiError::new(
                400,
                "invalid_request_error",
                &format!(
                    "max_tokens {n} and the prompt's {} tokens exceed the context of {} (-c)",
                    tokens.len(),
                    app.n_ctx
                ),
            )
            .param("max_tokens")
            .code("context_length_exceeded"))
        }
        Some(n) => n as usize,
        None => app.n_predict,
    };
    let sampling = common.sampling(app)?;
    let cancel = CancelToken::default();
    let (etx, rx) = mpsc::unbounded_channel();
    let job = Job {
        text,
        tokens,
        n_predict,
        sampling,
        stop: common.stop.clone().map(api::Stop::into_vec).unwrap_or_default(),
        ignore_eos: common.ignore_eos.unwrap_or(app.ignore_eos),
        cancel: cancel.clone(),
        events: etx,
        queued_at: Instant::now(),
    };
    app.shared.queued.fetch_add(1, Ordering::SeqCst);
    if let Err(e) = app.jobs.try_send(job) {
        app.shared.queued.fetch_sub(1, Ordering::SeqCst);
        return Err(match e {
            std::sync::mpsc::TrySendError::Full(_) => ApiError::new(
                503,
                "unavailable_error",
                &format!(
                    "the queue is full ({} waiting, --queue): retry later",
                    app.shared.queued.load(Ordering::SeqCst)
                ),
            )
            .retry_after(1),
            std::sync::mpsc::TrySendError::Disconnected(_) => {
                ApiError::new(503, "unavailable_error", "the decode worker has stopped")
            }
        });
    }
    metrics::gauge!("bmoe_queue_depth").set(app.shared.queued.load(Ordering::SeqCst) as f64);
    let id = format!("{kind}-{}", app.next_id.fetch_add(1, Ordering::SeqCst));
    Ok(Queued { rx, guard: CancelOnDrop(cancel, true), id })
}

fn usage(d: &Done) -> Value {
    json!({
        "prompt_tokens": d.prompt_total,
        "completion_tokens": d.completion_tokens,
        "total_tokens": d.prompt_total + d.completion_tokens,
        "prompt_tokens_details": { "cached_tokens": d.reused_tokens },
    })
}

/// llama-server's `timings`: `cache_n` prompt tokens reused, `prompt_n` evaluated.
fn timings(d: &Done) -> Value {
    json!({
        "cache_n": d.reused_tokens,
        "prompt_n": d.prompt_tokens,
        "prompt_ms": d.prompt_ms,
        "prompt_per_second": d.prompt_tokens as f64 / (d.prompt_ms / 1e3).max(1e-9),
        "predicted_n": d.completion_tokens,
        "predicted_ms": d.predicted_ms,
        "predicted_per_second": if d.completion_tokens > 1 { json!((d.completion_tokens - 1) as f64 / (d.predicted_ms / 1e3).max(1e-9)) } else { Value::Null },
        "queued_ms": d.queued_ms,
    })
}

/// Wait for the whole text.
async fn collect(mut q: Queued) -> Result<(String, Done, Queued), ApiError> {
    let mut text = String::new();
    while let Some(ev) = q.rx.recv().await {
        match ev {
            Event::Text(t) => text.push_str(&t),
            Event::Done(d) => {
                q.guard.1 = false;
                return Ok((text, d, q));
            }
            Event::Failed { status, message } => {
                q.guard.1 = false;
                return Err(ApiError::new(
                    status,
                    if status == 503 { "unavailable_error" } else { "server_error" },
                    &message,
                ));
            }
        }
    }
    q.guard.1 = false;
    Err(ApiError::new(500, "server_error", "the decode worker stopped"))
}

/// The events as server-sent events: `chunk(text, finish_reason)` makes each data object; the
/// usage goes in the last chunk when `usage` makes one; then `[DONE]`.
/// The chunk with the usage and timings after the last one (`stream_options.include_usage`):
/// the stream's object name, model and creation time.
struct UsageChunk {
    object: &'static str,
    model: String,
    created: u64,
}

fn sse(
    q: Queued,
    first: Option<Value>,
    chunk: impl Fn(&str, &str, Option<&str>) -> Value + Send + Sync + 'static,
    usage_chunk: Option<UsageChunk>,
) -> Sse<impl Stream<Item = Result<SseEvent, std::convert::Infallible>>> {
    enum St {
        First(Queued, Option<Value>),
        Body(Queued),
        Last(Vec<SseEvent>),
    }
    let (chunk, usage_chunk) = (Arc::new(chunk), Arc::new(usage_chunk));
    let s = stream::unfold(St::First(q, first), move |st| {
        let (chunk, usage_chunk) = (chunk.clone(), usage_chunk.clone());
        let out = async move {
            match st {
                St::First(q, Some(v)) => Some((SseEvent::default().data(v.to_string()), St::Body(q))),
                St::First(q, None) | St::Body(q) => {
                    let mut q = q;
                    match q.rx.recv().await {
                        Some(Event::Text(t)) => {
                            let v = chunk(&q.id, &t, None);
                            Some((SseEvent::default().data(v.to_string()), St::Body(q)))
                        }
                        Some(Event::Done(d)) => {
                            q.guard.1 = false;
                            let mut rest = Vec::new();
                            if let Some(u) = usage_chunk.as_ref() {
                                let v = json!({ "id": q.id, "object": u.object, "created": u.created, "model": u.model,
                                                "choices": [], "usage": usage(&d), "timings": timings(&d) });
                                rest.push(SseEvent::default().data(v.to_string()));
                            }
                            rest.push(SseEvent::default().data("[DONE]"));
                            let v = chunk(&q.id, "", Some(d.finish_reason));
                            Some((SseEvent::default().data(v.to_string()), St::Last(rest)))
                        }
                        Some(Event::Failed { status, message }) => {
                            q.guard.1 = false;
                            let e = ApiError::new(status, "server_error", &message);
                            Some((SseEvent::default().data(e.body().to_string()), St::Last(vec![])))
                        }
                        None => None,
                    }
                }
                St::Last(mut rest) => {
                    if rest.is_empty() {
                        None
                    } else {
                        let e = rest.remove(0);
                        Some((e, St::Last(rest)))
                    }
                }
            }
        };
        out
    });
    Sse::new(futures_util::StreamExt::map(s, Ok)).keep_alive(KeepAlive::new().interval(Duration::from_secs(5)))
}

async fn completions(State(app): State<AppRef>, b: Body) -> Result<Response, ApiError> {
    let v = json_body(&app, b).await?;
    let (r, common): (CompletionRequest, api::Common) = (parse(&v)?, parse(&v)?);
    common.check()?;
    let (text, tokens) = match &r.prompt {
        Prompt::Text(t) => (Some(t.clone()), app.lm.tokenize(t, true).map_err(ApiError::bad)?),
        Prompt::Texts(v) if v.len() == 1 => (Some(v[0].clone()), app.lm.tokenize(&v[0], true).map_err(ApiError::bad)?),
        Prompt::Texts(_) => {
            return Err(ApiError::new(
                400,
                "invalid_request_error",
                "one prompt per request (a list of prompts is not supported)",
            )
            .param("prompt"))
        }
        Prompt::Tokens(t) => (None, t.clone()),
    };
    let q = enqueue(&app, text, tokens, &common, "cmpl")?;
    let (model, created) = (app.model_id.clone(), unix_now());
    if common.stream.unwrap_or(false) {
        let include_usage = common.stream_options.as_ref().and_then(|o| o.include_usage).unwrap_or(false);
        let u = include_usage.then(|| UsageChunk { object: "text_completion", model: model.clone(), created });
        return Ok(sse(
            q,
            None,
            move |id, text, finish| {
                json!({ "id": id, "object": "text_completion", "created": created, "model": model,
                        "choices": [{ "text": text, "index": 0, "logprobs": null, "finish_reason": finish }] })
            },
            u,
        )
        .into_response());
    }
    let (text, d, q) = collect(q).await?;
    Ok(Json(json!({
        "id": q.id, "object": "text_completion", "created": created, "model": model,
        "choices": [{ "text": text, "index": 0, "logprobs": null, "finish_reason": d.finish_reason }],
        "usage": usage(&d), "timings": timings(&d),
    }))
    .into_response())
}

async fn chat_completions(State(app): State<AppRef>, b: Body) -> Result<Response, ApiError> {
    let v = json_body(&app, b).await?;
    let (r, common): (ChatRequest, api::Common) = (parse(&v)?, parse(&v)?);
    common.check()?;
    let tmpl = app.template.as_ref().ok_or_else(|| {
        ApiError::new(
            400,
            "invalid_request_error",
            "the model has no chat template: start the server with --chat-template",
        )
    })?;
    if r.messages.is_empty() {
        return Err(ApiError::new(400, "invalid_request_error", "messages is empty").param("messages"));
    }
    let no_think = app.no_think;
    let mut msgs = Vec::with_capacity(r.messages.len());
    for (i, m) in r.messages.iter().enumerate() {
        let content = m
            .content
            .text()
            .map_err(|e| ApiError::new(400, "invalid_request_error", &format!("messages[{i}].content: {e}")))?;
        // The template engine takes C strings: a NUL (a model may write one) as U+FFFD.
        let content = content.replace('\0', "\u{fffd}");
        let content =
            if m.role == "user" && i + 1 == r.messages.len() { tmpl.user(&content, no_think) } else { content };
        // OpenAI's newer name of the system message; tool results have no tools to answer.
        let role = match m.role.as_str() {
            "system" | "developer" => "system",
            "user" => "user",
            "assistant" => "assistant",
            other => {
                return Err(ApiError::field(
                    &format!("messages[{i}].role"),
                    &format!("{other:?} is not a role bmoe takes (system, developer, user, assistant)"),
                ))
            }
        };
        msgs.push((role.to_string(), content));
    }
    let text = tmpl.render(&msgs, true, no_think).map_err(ApiError::bad)?;
    let tokens = app.lm.tokenize(&text, true).map_err(ApiError::bad)?;
    let q = enqueue(&app, Some(text), tokens, &common, "chatcmpl")?;
    let (model, created) = (app.model_id.clone(), unix_now());
    if common.stream.unwrap_or(false) {
        let include_usage = common.stream_options.as_ref().and_then(|o| o.include_usage).unwrap_or(false);
        let m1 = model.clone();
        let u = include_usage.then(|| UsageChunk { object: "chat.completion.chunk", model: model.clone(), created });
        let first = json!({ "id": q.id, "object": "chat.completion.chunk", "created": created, "model": model,
                            "choices": [{ "index": 0, "delta": { "role": "assistant", "content": "" }, "logprobs": null, "finish_reason": null }] });
        return Ok(sse(
            q,
            Some(first),
            move |id, text, finish| {
                let delta = if finish.is_some() { json!({}) } else { json!({ "content": text }) };
                json!({ "id": id, "object": "chat.completion.chunk", "created": created, "model": m1,
                        "choices": [{ "index": 0, "delta": delta, "logprobs": null, "finish_reason": finish }] })
            },
            u,
        )
        .into_response());
    }
    let (text, d, q) = collect(q).await?;
    Ok(Json(json!({
        "id": q.id, "object": "chat.completion", "created": created, "model": model,
        "choices": [{ "index": 0, "message": { "role": "assistant", "content": text }, "logprobs": null,
                      "finish_reason": d.finish_reason }],
        "usage": usage(&d), "timings": timings(&d),
    }))
    .into_response())
}

fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// The resident set now (`/proc/self/statm`), bytes; 0 where it cannot be read.
fn rss_bytes() -> u64 {
    let pages = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1).and_then(|p| p.parse::<u64>().ok()))
        .unwrap_or(0);
    // SAFETY: sysconf has no memory effects.
    pages * unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(0) as u64
}

impl App {
    /// A seed for a request that gives none: a new one each time, from the command line's.
    fn next_seed(&self) -> u32 {
        let s = self.seeds.fetch_add(0x9e37_79b9, Ordering::SeqCst);
        (s ^ (s >> 16)) as u32
    }
}
