//! The process's guards around a run: Ctrl-C and SIGTERM stop a generation between steps (the
//! second Ctrl-C kills at once), `SIGBUS` from a model file truncated under its mapping is
//! reported with the file's name instead of killing the process silently, and ggml's abort
//! handler is kept from printing a debugger backtrace on stdout. Also the exit code of a run
//! that was interrupted.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bmoe::engine::session::CancelToken;

/// A run that ended because of a signal: the summary was printed and the outputs written;
/// `main` exits with this code and no further message.
#[derive(Debug)]
pub struct Exit(pub u8);

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "interrupted (exit {})", self.0)
    }
}

impl std::error::Error for Exit {}

/// What the signal handlers set.
#[derive(Clone, Debug)]
pub struct Signals {
    /// Set by SIGINT and SIGTERM: the engine's cancel flag.
    pub cancel: CancelToken,
    term: Arc<AtomicBool>,
}

impl Signals {
    /// Route SIGINT and SIGTERM to `cancel` (a second one of either terminates at once).
    ///
    /// # Errors
    /// The OS's, when a handler cannot be installed.
    pub fn install(cancel: CancelToken) -> std::io::Result<Self> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let flag = cancel.flag();
        let term = Arc::new(AtomicBool::new(false));
        for sig in [SIGINT, SIGTERM] {
            // Registered first, so it sees the flag as it was before this signal set it.
            signal_hook::flag::register_conditional_default(sig, flag.clone())?;
            signal_hook::flag::register(sig, flag.clone())?;
        }
        signal_hook::flag::register(SIGTERM, term.clone())?;
        Ok(Self { cancel, term })
    }

    /// The exit code of a run these signals stopped: 130 for Ctrl-C, 143 for SIGTERM.
    pub fn exit_code(&self) -> u8 {
        if self.term.load(Ordering::SeqCst) {
            143
        } else {
            130
        }
    }
}

/// Install the process-wide guards: the SIGBUS report and ggml's quiet abort.
pub fn install_fault_guards() {
    // ggml's abort handler attaches gdb and prints a backtrace to stdout, which corrupts the
    // generated text and `--json`; this makes it print only its message (to stderr).
    // SAFETY: called first thing in main, before any other thread exists.
    unsafe { std::env::set_var("GGML_NO_BACKTRACE", "1") };
    // SAFETY: a plain sigaction with an SA_SIGINFO handler that only calls async-signal-safe
    // functions (atomic loads, write, _exit).
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_sigbus as *const () as usize;
        sa.sa_flags = libc::SA_SIGINFO;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGBUS, &sa, std::ptr::null_mut());
    }
}

extern "C" fn on_sigbus(_sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    let write = |b: &[u8]| {
        // SAFETY: write(2) on stderr with a live buffer; async-signal-safe.
        unsafe { libc::write(2, b.as_ptr().cast(), b.len()) };
    };
    // SAFETY: the kernel passes a valid siginfo for an SA_SIGINFO handler.
    let addr = unsafe { (*info).si_addr() } as usize;
    write(b"\nbmoe: error: ");
    match bmoe::engine::dense::guard::mapped_file_at(addr) {
        Some(name) => {
            write(b"the model file ");
            write(name);
            write(b" was truncated or became unreadable while it was mapped (SIGBUS reading it)");
        }
        None => {
            write(b"a memory-mapped file (the model, read by llama.cpp) was truncated or became unreadable (SIGBUS)")
        }
    }
    write(b": the run cannot continue; the text above is what was generated\n");
    // SAFETY: _exit is async-signal-safe; nothing else may run after a fault like this.
    unsafe { libc::_exit(1) };
}
