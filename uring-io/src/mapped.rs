//! A read-only memory map of a file, for measuring what users run instead of
//! this engine (llama.cpp reads weights through mmap page faults), and a way to
//! drop a file's pages from the page cache so such a measurement hits the disk.

use std::fs::File;
use std::path::Path;
use std::ptr::NonNull;

use crate::error::{Error, OsError, Result};

/// A whole file mapped read-only and shared.
#[derive(Debug)]
pub struct MappedFile {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: a read-only shared mapping: every thread may read it; nothing writes
// through it, and its lifetime is tied to this owner.
unsafe impl Send for MappedFile {}
// SAFETY: as above, reads only.
unsafe impl Sync for MappedFile {}

impl MappedFile {
    /// Maps `path` read-only.
    ///
    /// # Errors
    /// [`Error::Open`] if the file cannot be opened, is empty, or cannot be mapped.
    pub fn open(path: &Path) -> Result<Self> {
        use std::os::fd::AsRawFd;
        let err = |err| Error::Open { path: path.to_path_buf(), err };
        let f = File::open(path).map_err(|e| err(OsError::of(&e)))?;
        let len = f.metadata().map_err(|e| err(OsError::of(&e)))?.len() as usize;
        if len == 0 {
            return Err(err(OsError(libc::EINVAL)));
        }
        // SAFETY: a fresh read-only shared mapping of an open descriptor; the kernel
        // picks the address. Closing the descriptor afterwards keeps the mapping.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, f.as_raw_fd(), 0) };
        if p == libc::MAP_FAILED {
            return Err(err(OsError::of(&std::io::Error::last_os_error())));
        }
        let ptr = NonNull::new(p.cast()).ok_or(err(OsError(libc::ENOMEM)))?;
        Ok(Self { ptr, len })
    }

    /// Length of the mapping.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false (empty files are refused at open).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Reads one byte of every 4 KiB page of `offset..offset+len` (faulting them
    /// in) and returns their sum, so the reads cannot be optimised away.
    ///
    /// # Panics
    /// If the range is not inside the file.
    pub fn touch(&self, offset: usize, len: usize) -> u64 {
        assert!(offset.checked_add(len).is_some_and(|e| e <= self.len), "touch outside the mapping");
        let mut sum = 0u64;
        let mut at = offset;
        while at < offset + len {
            // SAFETY: at < offset + len <= self.len, inside the live mapping; the
            // mapping is read-only so no write can race this read.
            sum += u64::from(unsafe { std::ptr::read_volatile(self.ptr.as_ptr().add(at)) });
            at += 4096;
        }
        sum
    }

    /// Drops `offset..offset+len` from this mapping and from the page cache, so
    /// the next touch of it reads the disk again.
    ///
    /// # Errors
    /// The OS error of `madvise` or `posix_fadvise`.
    ///
    /// # Panics
    /// If the range is not inside the file.
    pub fn evict(&self, file: &File, offset: usize, len: usize) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        assert!(offset.checked_add(len).is_some_and(|e| e <= self.len), "evict outside the mapping");
        let start = offset & !4095;
        let len = len + (offset - start);
        // SAFETY: a page-aligned range inside our own read-only shared mapping;
        // MADV_DONTNEED on it only drops our page-table entries (the next access
        // faults the file page back in), it cannot invalidate memory we hand out.
        if unsafe { libc::madvise(self.ptr.as_ptr().add(start).cast(), len, libc::MADV_DONTNEED) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: fadvise on an open descriptor of the mapped file with an in-file range.
        let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), start as i64, len as i64, libc::POSIX_FADV_DONTNEED) };
        if rc != 0 {
            return Err(std::io::Error::from_raw_os_error(rc));
        }
        Ok(())
    }
}

impl Drop for MappedFile {
    fn drop(&mut self) {
        // SAFETY: exactly the mapping made in `open`, unmapped once.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// Asks the kernel to drop `path`'s clean pages from the page cache
/// (`posix_fadvise(DONTNEED)`), so the next reads through a mapping go to disk.
///
/// # Errors
/// [`Error::Open`] if the file cannot be opened or the advice is refused.
pub fn drop_page_cache(path: &Path) -> Result<()> {
    use std::os::fd::AsRawFd;
    let err = |err| Error::Open { path: path.to_path_buf(), err };
    let f = File::open(path).map_err(|e| err(OsError::of(&e)))?;
    // SAFETY: fadvise on a descriptor we own; offset 0 and length 0 mean the whole file.
    let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc != 0 {
        return Err(err(OsError(rc)));
    }
    Ok(())
}
