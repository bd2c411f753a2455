//! The buffer pool: one block-aligned allocation of a size fixed at creation,
//! addressed by `(offset, len)`, and registered with io_uring in chunks of at
//! most 1 GiB (the kernel's limit per registered buffer).
//!
//! The pool is deliberately dumb memory: it does not track who owns which
//! range. Ownership lives in the [`ReadEngine`](crate::ReadEngine), which refuses
//! a read into a range a read in flight owns and drains every completion before
//! it lets go of the pool. Registration can be refused (memlock limits); the
//! pool then keeps working with plain reads and records why in
//! [`Registration`], so a run can say so instead of silently being slower.

use std::ptr::NonNull;
use std::sync::Mutex;

use crate::align::BLOCK;
use crate::error::{Error, OsError, Result};

/// The largest buffer io_uring registers in one iovec.
pub const CHUNK: usize = 1 << 30;

/// Whether (and how) the pool is registered with an io_uring instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Registration {
    /// No io_uring backend has tried (the pread backend never registers).
    NotAttempted,
    /// Registered as `chunks` fixed buffers; reads use `READ_FIXED`.
    Registered { chunks: usize },
    /// The kernel refused; reads use plain `READ` into the same memory.
    Refused { reason: String },
}

/// One block-aligned allocation, fixed in size, shared by the engine and its caller.
#[derive(Debug)]
pub struct BufferPool {
    ptr: NonNull<u8>,
    size: usize,
    registration: Mutex<Registration>,
}

// SAFETY: the pool is a plain region of memory with a stable address; it holds
// no thread-affine state. Who may touch which bytes at what time is governed by
// the engine (range ownership) and by the `unsafe` slice accessors' contracts,
// not by the thread that happens to hold the pool.
unsafe impl Send for BufferPool {}
// SAFETY: as above; shared references only hand out raw pointers or slices
// behind `unsafe` accessors whose callers promise the absence of writers.
unsafe impl Sync for BufferPool {}

impl BufferPool {
    /// A zero-filled pool of `size` bytes, rounded up to a whole number of blocks.
    ///
    /// # Errors
    /// [`Error::PoolAlloc`] if the memory cannot be mapped; [`Error::PoolRange`] for a zero size.
    pub fn new(size: usize) -> Result<Self> {
        let size = crate::align::align_up(size as u64, BLOCK)
            .and_then(|s| usize::try_from(s).ok())
            .filter(|&s| s > 0)
            .ok_or(Error::PoolRange { offset: 0, len: size, size: 0 })?;
        let ptr = sys_alloc(size).map_err(|err| Error::PoolAlloc { bytes: size, err })?;
        Ok(Self { ptr, size, registration: Mutex::new(Registration::NotAttempted) })
    }

    /// Bytes in the pool.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Base address (block-aligned).
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Checks that `offset..offset+len` lies inside the pool.
    ///
    /// # Errors
    /// [`Error::PoolRange`] otherwise.
    pub fn check(&self, offset: usize, len: usize) -> Result<()> {
        match offset.checked_add(len) {
            Some(end) if end <= self.size => Ok(()),
            _ => Err(Error::PoolRange { offset, len, size: self.size }),
        }
    }

    /// Address of `offset` after checking that `offset..offset+len` is in the pool.
    ///
    /// # Errors
    /// [`Error::PoolRange`] if the range is not inside the pool.
    pub fn ptr_at(&self, offset: usize, len: usize) -> Result<*mut u8> {
        self.check(offset, len)?;
        // SAFETY: offset <= size (checked above), so the result stays inside (or one
        // past the end of) the single allocation.
        Ok(unsafe { self.ptr.as_ptr().add(offset) })
    }

    /// The bytes at `offset..offset+len`.
    ///
    /// # Safety
    /// No read may be in flight into any part of the range, and none may be
    /// started, for as long as the returned slice lives.
    ///
    /// # Panics
    /// If the range is outside the pool.
    pub unsafe fn slice(&self, offset: usize, len: usize) -> &[u8] {
        let p = self.ptr_at(offset, len).expect("pool range");
        // SAFETY: in bounds (checked); the caller guarantees no concurrent writer.
        unsafe { std::slice::from_raw_parts(p, len) }
    }

    /// The bytes at `offset..offset+len`, writable.
    ///
    /// # Safety
    /// As [`slice`](Self::slice), and no other slice of the range may be alive.
    ///
    /// # Panics
    /// If the range is outside the pool.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn slice_mut(&self, offset: usize, len: usize) -> &mut [u8] {
        let p = self.ptr_at(offset, len).expect("pool range");
        // SAFETY: in bounds (checked); the caller guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(p, len) }
    }

    /// The registered chunk that wholly contains `offset..offset+len`, if any.
    pub fn chunk_of(&self, offset: usize, len: usize) -> Option<u16> {
        let first = offset / CHUNK;
        let last = (offset + len.max(1) - 1) / CHUNK;
        (first == last).then(|| u16::try_from(first).ok()).flatten()
    }

    /// The chunks as iovecs, in index order, each at most [`CHUNK`] bytes.
    #[cfg(unix)]
    pub fn iovecs(&self) -> Vec<libc::iovec> {
        (0..self.size.div_ceil(CHUNK))
            .map(|i| {
                let off = i * CHUNK;
                libc::iovec {
                    // SAFETY: off < size, inside the allocation.
                    iov_base: unsafe { self.ptr.as_ptr().add(off) }.cast(),
                    iov_len: CHUNK.min(self.size - off),
                }
            })
            .collect()
    }

    /// Whether the pool is registered, and if not why.
    pub fn registration(&self) -> Registration {
        self.registration.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// True when reads into the pool can use `READ_FIXED`.
    pub fn is_registered(&self) -> bool {
        matches!(self.registration(), Registration::Registered { .. })
    }

    /// Recorded by the io_uring backend, the only one that registers.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub(crate) fn set_registration(&self, r: Registration) {
        *self.registration.lock().unwrap_or_else(|e| e.into_inner()) = r;
    }
}

impl Drop for BufferPool {
    fn drop(&mut self) {
        // Every engine holding this pool keeps an `Arc` to it and drains its reads
        // before dropping that `Arc`, so nothing can still be writing here.
        sys_free(self.ptr, self.size);
    }
}

#[cfg(unix)]
fn sys_alloc(size: usize) -> std::result::Result<NonNull<u8>, OsError> {
    // SAFETY: an anonymous private mapping with no address hint; the kernel picks a
    // page-aligned address. No existing memory is affected.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(OsError::of(&std::io::Error::last_os_error()));
    }
    NonNull::new(p.cast()).ok_or(OsError(libc::ENOMEM))
}

#[cfg(unix)]
fn sys_free(ptr: NonNull<u8>, size: usize) {
    // SAFETY: ptr/size are exactly what mmap returned in sys_alloc, and the
    // mapping is unmapped once (here, from Drop).
    unsafe { libc::munmap(ptr.as_ptr().cast(), size) };
}

#[cfg(not(unix))]
fn layout(size: usize) -> std::alloc::Layout {
    std::alloc::Layout::from_size_align(size, BLOCK as usize).expect("pool layout")
}

#[cfg(not(unix))]
fn sys_alloc(size: usize) -> std::result::Result<NonNull<u8>, OsError> {
    // SAFETY: layout has a non-zero size (checked by the caller).
    let p = unsafe { std::alloc::alloc_zeroed(layout(size)) };
    NonNull::new(p).ok_or(OsError(12))
}

#[cfg(not(unix))]
fn sys_free(ptr: NonNull<u8>, size: usize) {
    // SAFETY: allocated in sys_alloc with the same layout, freed once.
    unsafe { std::alloc::dealloc(ptr.as_ptr(), layout(size)) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_bounded() {
        let p = BufferPool::new(10_000).unwrap();
        assert_eq!(p.size(), 12_288);
        assert_eq!(p.as_ptr() as usize % BLOCK as usize, 0);
        assert!(p.check(12_288, 0).is_ok());
        assert!(p.check(12_000, 289).is_err());
        assert!(p.check(usize::MAX, 2).is_err());
        assert!(BufferPool::new(0).is_err());
        assert_eq!(p.registration(), Registration::NotAttempted);
    }

    #[test]
    fn chunks() {
        let p = BufferPool::new(4096).unwrap();
        assert_eq!(p.chunk_of(0, 4096), Some(0));
        assert_eq!(p.chunk_of(CHUNK - 4096, 4096), Some(0));
        assert_eq!(p.chunk_of(CHUNK - 4096, 8192), None);
        assert_eq!(p.chunk_of(CHUNK, 1), Some(1));
        // iovecs exist for io_uring's registration only (unix).
        #[cfg(unix)]
        assert_eq!(p.iovecs().len(), 1);
    }
}
