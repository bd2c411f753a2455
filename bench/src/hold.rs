//! `--ram-gb N`: a helper process holds the rest of RAM (anonymous memory, locked with
//! `mlock`) so that the engine and the page cache have about N GiB, for the whole run.
//!
//! The helper is this binary run as `bmoe-bench hold-ram --bytes B`: it maps, touches and
//! locks B bytes, prints one line saying so, then waits for its stdin to close. It dies with
//! its parent (`PR_SET_PDEATHSIG`) and with the terminal's Ctrl-C (same process group), so the
//! memory comes back also when the driver is interrupted.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// The helper's side: hold `bytes` until stdin closes.
///
/// # Errors
/// If the memory cannot be mapped.
pub fn serve(bytes: u64) -> std::io::Result<()> {
    // SAFETY: prctl with PR_SET_PDEATHSIG and a signal number has no memory effects.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) };
    let len = bytes as usize;
    let locked = if len == 0 {
        true
    } else {
        // SAFETY: a fresh private anonymous mapping; nothing else refers to it.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        // Touch every page (MAP_POPULATE may be partial under pressure), then lock them.
        let page = 4096;
        for off in (0..len).step_by(page) {
            // SAFETY: off < len, inside the mapping, which is writable.
            unsafe { (p as *mut u8).add(off).write_volatile(1) };
        }
        // SAFETY: the range is the mapping made above.
        unsafe { libc::mlock(p, len) == 0 }
    };
    let mut out = std::io::stdout().lock();
    writeln!(out, "held {bytes} locked={locked}")?;
    out.flush()?;
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
    Ok(())
}

/// The driver's side: a running helper.
#[derive(Debug)]
pub struct RamHold {
    child: Child,
    /// Bytes held.
    pub bytes: u64,
    /// Whether `mlock` succeeded (without it, the pages are still touched; with no swap they
    /// cannot be reclaimed either).
    pub locked: bool,
}

impl RamHold {
    /// Start `exe hold-ram --bytes B` and wait until it holds the memory.
    ///
    /// # Errors
    /// If the helper cannot start or fails before holding.
    pub fn start(exe: &Path, bytes: u64) -> std::io::Result<Self> {
        let mut child = Command::new(exe)
            .args(["hold-ram", "--bytes", &bytes.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped")).read_line(&mut line)?;
        let Some(rest) = line.trim().strip_prefix(&format!("held {bytes} locked=")) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::other(format!("the RAM holder failed (said {:?})", line.trim())));
        };
        Ok(Self { locked: rest == "true", child, bytes })
    }

    /// Whether the helper still holds its memory (it may have been killed, e.g. by the OOM
    /// killer, which would make later cells run with more RAM than asked).
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// The helper's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for RamHold {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
