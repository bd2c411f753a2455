//! Progress bars on long work (the dense weights read at open, a long prompt's prefill,
//! `synth`), drawn with indicatif on stderr only when it is a terminal: a log file gets no
//! `\r` and no bar, only the lines that say what was done.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A bar on stderr, hidden when stderr is not a terminal; drawn only once the work has lasted
/// a moment, so quick work shows nothing.
#[derive(Debug)]
pub struct Bar {
    bar: ProgressBar,
    start: Instant,
    shown: AtomicBool,
}

/// How long work lasts before its bar is drawn.
const DELAY: Duration = Duration::from_millis(300);

const BYTES: &str = "{msg} [{bar:30}] {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}";
const TOKENS: &str = "{msg} [{bar:30}] {pos}/{len} tokens {per_sec} eta {eta}";

impl Bar {
    fn new(msg: &str, template: &str) -> Self {
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
        bar.set_style(ProgressStyle::with_template(template).expect("a valid template").progress_chars("=> "));
        bar.set_message(msg.to_string());
        Self { bar, start: Instant::now(), shown: AtomicBool::new(false) }
    }

    /// Bytes of `msg` (`dense weights`, `synth`).
    pub fn bytes(msg: &str) -> Self {
        Self::new(msg, BYTES)
    }

    /// Tokens of `msg` (`prefill`).
    pub fn tokens(msg: &str) -> Self {
        Self::new(msg, TOKENS)
    }

    /// `done` of `total`.
    pub fn set(&self, done: u64, total: u64) {
        if !self.shown.load(Ordering::Relaxed) && self.start.elapsed() > DELAY && done < total {
            // `stderr` draws nothing when stderr is not a terminal.
            self.bar.set_draw_target(ProgressDrawTarget::stderr_with_hz(10));
            self.shown.store(true, Ordering::Relaxed);
        }
        self.bar.set_length(total);
        self.bar.set_position(done);
        if done >= total {
            self.bar.finish_and_clear();
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}
