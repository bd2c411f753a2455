//! The requests as the OpenAI API and llama-server define them, and the errors as the OpenAI
//! API returns them: `{"error": {"message", "type", "param", "code"}}` with a 4xx or 5xx.
//! Fields a request carries that bmoe does not use and that do not change the answer are
//! ignored; a field that would change it and that bmoe does not do (`n` > 1, `logprobs`,
//! `tools`, `response_format` JSON, `logit_bias`, …) is a 400 naming it, as is a field of the
//! wrong type or out of range.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use bmoe::engine::llama;
use serde::Deserialize;
use serde_json::{json, Value};

/// An error answer.
#[derive(Debug)]
pub struct ApiError {
    status: u16,
    kind: &'static str,
    message: String,
    param: Option<String>,
    code: Option<&'static str>,
    retry_after: Option<u32>,
}

impl ApiError {
    pub fn new(status: u16, kind: &'static str, message: &str) -> Self {
        Self { status, kind, message: message.to_string(), param: None, code: None, retry_after: None }
    }

    /// A 400 from an engine error (a prompt the tokenizer refuses, …).
    pub fn bad(e: impl std::fmt::Display) -> Self {
        Self::new(400, "invalid_request_error", &format!("{e:#}"))
    }

    pub fn param(mut self, p: impl Into<String>) -> Self {
        self.param = Some(p.into());
        self
    }

    /// A 400 about `field`, naming it.
    pub fn field(field: &str, why: &str) -> Self {
        Self::new(400, "invalid_request_error", &format!("{field}: {why}")).param(field)
    }

    pub fn code(mut self, c: &'static str) -> Self {
        self.code = Some(c);
        self
    }

    pub fn retry_after(mut self, s: u32) -> Self {
        self.retry_after = Some(s);
        self
    }

    /// The JSON object.
    pub fn body(&self) -> Value {
        json!({ "error": { "message": self.message, "type": self.kind, "param": self.param,
                           "code": self.code.map_or(json!(self.status), |c| json!(c)) } })
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut r = (status, Json(self.body())).into_response();
        if let Some(s) = self.retry_after {
            r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(s));
        }
        r
    }
}

/// `stop`: one string or a list.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Stop {
    One(String),
    Many(Vec<String>),
}

impl Stop {
    pub fn into_vec(self) -> Vec<String> {
        match self {
            Stop::One(s) => vec![s],
            Stop::Many(v) => v,
        }
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
pub struct StreamOptions {
    pub include_usage: Option<bool>,
}

/// The longest stop string: the text is searched for each after every token, and a stop string
/// longer than this is no sentence a model ends on.
pub const MAX_STOP_BYTES: usize = 1024;

/// The fields both completion endpoints take.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Common {
    pub max_tokens: Option<u32>,
    /// The older name of `max_tokens` (chat) and llama-server's.
    pub max_completion_tokens: Option<u32>,
    pub n_predict: Option<i64>,
    pub temperature: Option<f32>,
    pub top_p: Option<f32>,
    pub top_k: Option<i32>,
    pub min_p: Option<f32>,
    pub typical_p: Option<f32>,
    pub seed: Option<i64>,
    pub stop: Option<Stop>,
    pub presence_penalty: Option<f32>,
    pub frequency_penalty: Option<f32>,
    pub repeat_penalty: Option<f32>,
    pub repeat_last_n: Option<i32>,
    pub ignore_eos: Option<bool>,
    pub stream: Option<bool>,
    pub stream_options: Option<StreamOptions>,
    pub n: Option<u32>,
    pub best_of: Option<Value>,
    pub logprobs: Option<Value>,
    pub top_logprobs: Option<Value>,
    pub echo: Option<Value>,
    pub suffix: Option<Value>,
    pub tools: Option<Value>,
    pub tool_choice: Option<Value>,
    pub functions: Option<Value>,
    pub function_call: Option<Value>,
    pub response_format: Option<Value>,
    pub logit_bias: Option<Value>,
}

/// A value that asks for nothing: null, false, 0, "", [], {}, "none" or "auto".
fn asks_nothing(v: &Value) -> bool {
    match v {
        Value::Null | Value::Bool(false) => true,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty() || s == "none" || s == "auto",
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Bool(true) => false,
    }
}

impl Common {
    /// Refuse what bmoe does not do and values out of range, naming the field.
    ///
    /// # Errors
    /// A 400 naming the field.
    pub fn check(&self) -> Result<(), ApiError> {
        if self.n.is_some_and(|n| n != 1) {
            return Err(ApiError::field("n", "must be 1 (one choice per request)"));
        }
        // Fields that would change the answer, which bmoe does not do: refused, not ignored.
        let unsupported: [(&str, &Option<Value>, &str); 10] = [
            ("best_of", &self.best_of, "must be 1 (one candidate per request)"),
            ("logprobs", &self.logprobs, "log probabilities are not supported"),
            ("top_logprobs", &self.top_logprobs, "log probabilities are not supported"),
            ("echo", &self.echo, "echoing the prompt is not supported"),
            ("suffix", &self.suffix, "insertion (a suffix) is not supported"),
            ("tools", &self.tools, "tool calls are not supported (no function calling)"),
            ("tool_choice", &self.tool_choice, "tool calls are not supported (no function calling)"),
            ("functions", &self.functions, "function calls are not supported"),
            ("function_call", &self.function_call, "function calls are not supported"),
            ("logit_bias", &self.logit_bias, "logit biases are not supported"),
        ];
        for (name, v, why) in unsupported {
            let one = name == "best_of" && v.as_ref().and_then(Value::as_f64) == Some(1.0);
            if !one && v.as_ref().is_some_and(|v| !asks_nothing(v)) {
                return Err(ApiError::field(name, why));
            }
        }
        if let Some(f) = &self.response_format {
            if !(f.is_null() || f["type"] == "text") {
                return Err(ApiError::field(
                    "response_format",
                    "only {\"type\": \"text\"}: structured output is not supported",
                ));
            }
        }
        for (name, v) in [("max_tokens", self.max_tokens), ("max_completion_tokens", self.max_completion_tokens)] {
            if v == Some(0) {
                return Err(ApiError::field(name, "must be at least 1"));
            }
        }
        if let Some(n) = self.n_predict.filter(|&n| n == 0 || n < -1) {
            return Err(ApiError::field("n_predict", &format!("{n}: at least 1, or -1 for no limit")));
        }
        let floats = [
            ("temperature", self.temperature),
            ("top_p", self.top_p),
            ("min_p", self.min_p),
            ("typical_p", self.typical_p),
            ("presence_penalty", self.presence_penalty),
            ("frequency_penalty", self.frequency_penalty),
            ("repeat_penalty", self.repeat_penalty),
        ];
        for (name, v) in floats {
            if let Some(x) = v.filter(|x| !x.is_finite()) {
                return Err(ApiError::field(name, &format!("{x} is not a finite number (as a 32-bit float)")));
            }
        }
        if let Some(stop) = &self.stop {
            let v = match stop {
                Stop::One(s) => std::slice::from_ref(s),
                Stop::Many(v) => v.as_slice(),
            };
            if v.len() > 4 {
                return Err(ApiError::field("stop", &format!("{} strings: at most 4", v.len())));
            }
            if let Some((i, s)) = v.iter().enumerate().find(|(_, s)| s.len() > MAX_STOP_BYTES) {
                return Err(ApiError::field(
                    &format!("stop[{i}]"),
                    &format!("{} bytes: a stop string is at most {MAX_STOP_BYTES}", s.len()),
                ));
            }
        }
        Ok(())
    }

    /// The request's token limit: `max_tokens`, else `max_completion_tokens`, else
    /// llama-server's `n_predict` (-1: none).
    pub fn limit(&self) -> Option<u32> {
        self.max_tokens.or(self.max_completion_tokens).or(match self.n_predict {
            Some(n) if n >= 0 => Some(u32::try_from(n).unwrap_or(u32::MAX)),
            _ => None,
        })
    }

    /// The sampler: the command line's, with this request's fields (`repeat_last_n` -1, or
    /// beyond the context, is the context).
    ///
    /// # Errors
    /// A 400 for a value out of range.
    pub fn sampling(&self, app: &super::App) -> Result<llama::Sampling, ApiError> {
        let mut s = app.sampling;
        s.seed = match self.seed {
            Some(x) if x >= 0 => x as u32,
            _ => app.next_seed(),
        };
        s.temp = self.temperature.unwrap_or(s.temp);
        s.top_p = self.top_p.unwrap_or(s.top_p);
        s.top_k = self.top_k.unwrap_or(s.top_k);
        s.min_p = self.min_p.unwrap_or(s.min_p);
        s.typ_p = self.typical_p.unwrap_or(s.typ_p);
        s.presence_penalty = self.presence_penalty.unwrap_or(s.presence_penalty);
        s.frequency_penalty = self.frequency_penalty.unwrap_or(s.frequency_penalty);
        s.repeat_penalty = self.repeat_penalty.unwrap_or(s.repeat_penalty);
        let ctx = i32::try_from(app.n_ctx).unwrap_or(i32::MAX);
        s.repeat_last_n = match self.repeat_last_n {
            Some(-1) => ctx,
            Some(n) => n.min(ctx),
            None => s.repeat_last_n,
        };
        s.check().map_err(|e| ApiError::new(400, "invalid_request_error", &e))?;
        Ok(s)
    }
}

/// `prompt`: a string, a list of one string, or token ids.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Prompt {
    Text(String),
    Texts(Vec<String>),
    Tokens(Vec<i32>),
}

/// `/v1/completions`' own field (the rest is [`Common`], read from the same object).
#[derive(Clone, Debug, Deserialize)]
pub struct CompletionRequest {
    pub prompt: Prompt,
}

/// A message's `content`: a string, or a list of parts of which the text ones are used.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Content {
    Text(String),
    Parts(Vec<Part>),
    None(()),
}

#[derive(Clone, Debug, Deserialize)]
pub struct Part {
    #[serde(rename = "type")]
    pub kind: String,
    pub text: Option<String>,
}

impl Content {
    /// The text.
    ///
    /// # Errors
    /// A part that is not text.
    pub fn text(&self) -> Result<String, String> {
        match self {
            Content::Text(t) => Ok(t.clone()),
            Content::None(()) => Ok(String::new()),
            Content::Parts(p) => p
                .iter()
                .map(|p| match (p.kind.as_str(), &p.text) {
                    ("text", Some(t)) => Ok(t.as_str()),
                    (k, _) => Err(format!("a part of type {k:?}: only text is supported")),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(|v| v.concat()),
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
pub struct Message {
    pub role: String,
    #[serde(default = "no_content")]
    pub content: Content,
}

fn no_content() -> Content {
    Content::None(())
}

/// `/v1/chat/completions`' own field (the rest is [`Common`], read from the same object).
#[derive(Clone, Debug, Deserialize)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct TokenizeRequest {
    pub content: String,
    pub add_special: Option<bool>,
    pub with_pieces: Option<bool>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct DetokenizeRequest {
    pub tokens: Vec<i64>,
}
