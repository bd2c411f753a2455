//! Opening a file for the engine: O_DIRECT where it works, buffered where not,
//! decided once at open by a probe.
//!
//! "Works" means more than "open() accepted the flag": some filesystems accept
//! O_DIRECT and then fail reads with EINVAL, and some FUSE filesystems return
//! wrong bytes. So the probe reads the first block both ways and compares. The
//! outcome (`o_direct` and why) is kept with the file so a run can report it.

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::align::BLOCK;
use crate::error::{Error, OsError, Result};

/// How to open a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenOptions {
    /// Try direct I/O (O_DIRECT, F_NOCACHE, FILE_FLAG_NO_BUFFERING). Default true.
    pub direct: bool,
}

impl Default for OpenOptions {
    fn default() -> Self {
        Self { direct: true }
    }
}

/// An open file: its handle, length and whether reads bypass the page cache.
#[derive(Debug)]
pub struct OpenFile {
    path: PathBuf,
    file: File,
    len: u64,
    o_direct: bool,
    why: String,
}

impl OpenFile {
    /// Opens `path` read-only, probing direct I/O when `opts.direct`.
    ///
    /// # Errors
    /// [`Error::Open`] if the file cannot be opened or measured.
    pub fn open(path: &Path, opts: OpenOptions) -> Result<Self> {
        let open_err = |e: &std::io::Error| Error::Open { path: path.to_path_buf(), err: OsError::of(e) };
        let buffered = File::open(path).map_err(|e| open_err(&e))?;
        let len = buffered.metadata().map_err(|e| open_err(&e))?.len();
        if !opts.direct {
            return Ok(Self::new(path, buffered, len, false, "direct I/O not requested".into()));
        }
        let direct = match open_direct(path) {
            Ok(f) => f,
            Err(e) => {
                let why = format!("direct open refused ({}), using buffered reads", OsError::of(&e));
                return Ok(Self::new(path, buffered, len, false, why));
            }
        };
        match probe(&direct, &buffered, len) {
            Probe::Same => Ok(Self::new(path, direct, len, true, "probe: direct read matches buffered".into())),
            Probe::Empty => Ok(Self::new(path, direct, len, true, "empty file, direct open accepted".into())),
            Probe::Failed(e) => {
                let why = format!("direct read failed in probe ({e}), using buffered reads");
                Ok(Self::new(path, buffered, len, false, why))
            }
            Probe::Differs => {
                let why = "direct read returned different bytes than buffered, using buffered reads".to_string();
                Ok(Self::new(path, buffered, len, false, why))
            }
        }
    }

    fn new(path: &Path, file: File, len: u64, o_direct: bool, why: String) -> Self {
        Self { path: path.to_path_buf(), file, len, o_direct, why }
    }

    /// The path it was opened with.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The handle reads go through.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Length at open.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True for an empty file.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether reads bypass the page cache (and so must be block-aligned).
    pub fn o_direct(&self) -> bool {
        self.o_direct
    }

    /// Why `o_direct` is what it is.
    pub fn o_direct_reason(&self) -> &str {
        &self.why
    }
}

/// Outcome of the direct-vs-buffered probe.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Probe {
    Same,
    Empty,
    Differs,
    Failed(OsError),
}

/// Reads the first block of the file through both handles and compares.
fn probe(direct: &File, buffered: &File, len: u64) -> Probe {
    if len == 0 {
        return Probe::Empty;
    }
    let n = len.min(BLOCK) as usize;
    let Ok(pool) = crate::pool::BufferPool::new(2 * BLOCK as usize) else {
        return Probe::Failed(OsError(libc::ENOMEM));
    };
    // SAFETY: the pool is private to this function; the two halves do not overlap
    // and nothing else can reach them.
    let (a, b) = unsafe { (pool.slice_mut(0, BLOCK as usize), pool.slice_mut(BLOCK as usize, BLOCK as usize)) };
    match (read_full_at(direct, a, 0), read_full_at(buffered, b, 0)) {
        (Ok(na), Ok(nb)) => compare(&a[..na.min(n)], &b[..nb.min(n)], n),
        (Err(e), _) | (_, Err(e)) => Probe::Failed(OsError::of(&e)),
    }
}

/// The decision on the probe's bytes, separate so it can be tested without a lying filesystem.
pub(crate) fn compare(direct: &[u8], buffered: &[u8], want: usize) -> Probe {
    if direct.len() != want || buffered.len() != want {
        return Probe::Failed(OsError(libc::EIO));
    }
    if direct == buffered {
        Probe::Same
    } else {
        Probe::Differs
    }
}

fn read_full_at(f: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match read_at(f, &mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// One positional read (no retry, no continuation).
pub(crate) fn read_at(f: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_at(f, buf, offset)
    }
    #[cfg(windows)]
    {
        std::os::windows::fs::FileExt::seek_read(f, buf, offset)
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn open_direct(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new().read(true).custom_flags(libc::O_DIRECT).open(path)
}

#[cfg(target_os = "macos")]
fn open_direct(path: &Path) -> std::io::Result<File> {
    use std::os::fd::AsRawFd;
    let f = File::open(path)?;
    // SAFETY: fcntl on a descriptor we own; F_NOCACHE takes an int argument.
    if unsafe { libc::fcntl(f.as_raw_fd(), libc::F_NOCACHE, 1) } == -1 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(f)
}

#[cfg(windows)]
fn open_direct(path: &Path) -> std::io::Result<File> {
    use std::os::windows::fs::OpenOptionsExt;
    const FILE_FLAG_NO_BUFFERING: u32 = 0x2000_0000;
    std::fs::OpenOptions::new().read(true).custom_flags(FILE_FLAG_NO_BUFFERING).open(path)
}

#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "macos", windows)))]
fn open_direct(_path: &Path) -> std::io::Result<File> {
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_decisions() {
        let a = [1u8; 100];
        let mut b = a;
        assert_eq!(compare(&a, &b, 100), Probe::Same);
        b[99] = 0;
        assert_eq!(compare(&a, &b, 100), Probe::Differs);
        assert!(matches!(compare(&a[..50], &a, 100), Probe::Failed(_)));
    }

    #[test]
    fn open_regular_and_missing() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, vec![7u8; 5000]).unwrap();
        let f = OpenFile::open(&p, OpenOptions::default()).unwrap();
        assert_eq!(f.len(), 5000);
        assert!(!f.o_direct_reason().is_empty());
        let f = OpenFile::open(&p, OpenOptions { direct: false }).unwrap();
        assert!(!f.o_direct());
        let e = OpenFile::open(&dir.path().join("missing"), OpenOptions::default()).unwrap_err();
        assert!(matches!(e, Error::Open { ref path, .. } if path.ends_with("missing")), "{e}");
    }
}
