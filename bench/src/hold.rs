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

/// The least `--ram-gb` leaves available: below it the engine, the page cache and the rest of
/// the system would be starved by the helper's locked memory (the OOM killer's choice then).
pub const MIN_KEEP_BYTES: u64 = 1 << 30;

/// What the helper holds so that about `keep_gib` GiB stay available, out of `mem_available`
/// bytes: checked, since a NaN, an infinity, zero or a negative number all convert to a `keep`
/// of 0 and would lock every available byte, and a `keep` of more than is available holds
/// nothing and limits nothing.
///
/// # Errors
/// What is wrong with `--ram-gb`, in words for the command line.
pub fn hold_bytes(keep_gib: f64, mem_available: u64) -> Result<u64, String> {
    const GIB: f64 = (1u64 << 30) as f64;
    if !keep_gib.is_finite() || keep_gib <= 0.0 {
        return Err(format!("--ram-gb {keep_gib}: expected a positive number of GiB to leave available"));
    }
    let keep = keep_gib * GIB;
    if keep < MIN_KEEP_BYTES as f64 {
        return Err(format!(
            "--ram-gb {keep_gib}: leaves less than {} GiB available, too little for the engine and the system; \
             give at least {}",
            MIN_KEEP_BYTES as f64 / GIB,
            MIN_KEEP_BYTES as f64 / GIB
        ));
    }
    if keep >= mem_available as f64 {
        return Err(format!(
            "--ram-gb {keep_gib}: MemAvailable is {:.1} GiB, so there is nothing to hold and RAM would not be \
             limited; give less, or leave --ram-gb out",
            mem_available as f64 / GIB
        ));
    }
    Ok(mem_available - keep as u64)
}

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

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    /// Issue 44, defect 7: `--ram-gb` values that would lock everything or hold nothing.
    #[test]
    fn ram_gb_is_checked_before_anything_is_held() {
        assert_eq!(hold_bytes(8.0, 20 * GIB), Ok(12 * GIB));
        assert_eq!(hold_bytes(1.5, 4 * GIB), Ok(4 * GIB - 3 * GIB / 2));
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0, -1.0] {
            let e = hold_bytes(bad, 20 * GIB).unwrap_err();
            assert!(e.contains("expected a positive number of GiB"), "{bad}: {e}");
        }
        let e = hold_bytes(0.5, 20 * GIB).unwrap_err();
        assert!(e.contains("leaves less than 1 GiB available"), "{e}");
        for over in [20.0, 1000.0] {
            let e = hold_bytes(over, 20 * GIB).unwrap_err();
            assert!(e.contains("MemAvailable is 20.0 GiB, so there is nothing to hold"), "{over}: {e}");
        }
    }
}
