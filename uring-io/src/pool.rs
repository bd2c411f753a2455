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
//!
//! The memory is anonymous by default. [`BufferPool::new_shared`] (Linux, Android) backs it
//! with a memfd instead, so that a caller can map a slot's pages elsewhere too (the generic
//! decoder overlays them onto llama.cpp's mapping of the model file): the same physical
//! pages, committed once, seen at two addresses.

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
    /// The memfd behind the memory ([`BufferPool::new_shared`]); closed on drop, after unmap.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    memfd: Option<std::os::fd::OwnedFd>,
    /// The memory is someone else's ([`BufferPool::borrowed`]): not freed on drop.
    borrowed: bool,
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
        let size = Self::rounded(size)?;
        let ptr = sys_alloc(size).map_err(|err| Error::PoolAlloc { bytes: size, err })?;
        Ok(Self {
            ptr,
            size,
            registration: Mutex::new(Registration::NotAttempted),
            #[cfg(any(target_os = "linux", target_os = "android"))]
            memfd: None,
            borrowed: false,
        })
    }

    /// A pool over memory the caller owns: `size` bytes at `ptr` (block-aligned), never
    /// freed by the pool. Reads land there in place; it must not be registered (pass
    /// `register: false` to the engine), since registering pins every page of it.
    ///
    /// # Safety
    /// `ptr..ptr + size` must stay mapped for as long as the pool lives, and every range a read
    /// is submitted into must be writable memory nobody else writes or frees while the read is
    /// in flight.
    ///
    /// # Errors
    /// [`Error::PoolRange`] for a null, unaligned or empty range.
    pub unsafe fn borrowed(ptr: *mut u8, size: usize) -> Result<Self> {
        let bad = Error::PoolRange { offset: ptr as usize, len: size, size: 0 };
        let ptr = NonNull::new(ptr).ok_or(bad)?;
        if ptr.as_ptr() as usize % BLOCK as usize != 0 || size == 0 {
            return Err(Error::PoolRange { offset: ptr.as_ptr() as usize, len: size, size: 0 });
        }
        Ok(Self {
            ptr,
            size,
            registration: Mutex::new(Registration::NotAttempted),
            #[cfg(any(target_os = "linux", target_os = "android"))]
            memfd: None,
            borrowed: true,
        })
    }

    fn rounded(size: usize) -> Result<usize> {
        crate::align::align_up(size as u64, BLOCK)
            .and_then(|s| usize::try_from(s).ok())
            .filter(|&s| s > 0)
            .ok_or(Error::PoolRange { offset: 0, len: size, size: 0 })
    }

    /// A zero-filled pool of `size` bytes (rounded up to whole blocks) backed by a memfd, every
    /// page committed now (written once), so that no read or mapping later faults one in: see
    /// [`Self::memfd`]. `name` labels the memfd in `/proc/PID/fd` and `/proc/PID/maps`.
    ///
    /// # Errors
    /// [`Error::PoolAlloc`] if the kernel has no memfd (`memfd_create` refused), cannot size
    /// it, or cannot map it.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub fn new_shared(size: usize, name: &str) -> Result<Self> {
        use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
        let size = Self::rounded(size)?;
        let fail = |err: std::io::Error| Error::PoolAlloc { bytes: size, err: OsError::of(&err) };
        let cname = std::ffi::CString::new(name).unwrap_or_default();
        // SAFETY: a NUL-terminated name and flags; the kernel returns a new descriptor or -1.
        let fd = unsafe { libc::memfd_create(cname.as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(fail(std::io::Error::last_os_error()));
        }
        // SAFETY: fd is a descriptor we just created and nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let len = libc::off_t::try_from(size).map_err(|_| Error::PoolRange { offset: 0, len: size, size: 0 })?;
        // SAFETY: sizing our own memfd.
        if unsafe { libc::ftruncate(fd.as_raw_fd(), len) } != 0 {
            return Err(fail(std::io::Error::last_os_error()));
        }
        // SAFETY: a shared mapping of our memfd with no address hint; no existing memory is
        // affected. MAP_POPULATE commits the pages now, once.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(fail(std::io::Error::last_os_error()));
        }
        let ptr = NonNull::new(p.cast::<u8>()).ok_or(Error::PoolAlloc { bytes: size, err: OsError(libc::ENOMEM) })?;
        // MAP_POPULATE of a shared mapping only maps pages; a write allocates them. One byte
        // per page makes every page real (and zero) before any read lands or any overlay maps it.
        let page = page_size();
        for off in (0..size).step_by(page) {
            // SAFETY: off < size, inside the mapping we just made and nobody else uses yet.
            unsafe { ptr.as_ptr().add(off).write_volatile(0) };
        }
        Ok(Self { ptr, size, registration: Mutex::new(Registration::NotAttempted), memfd: Some(fd), borrowed: false })
    }

    /// The memfd behind the pool's memory, if it was made by [`Self::new_shared`]: pool offset
    /// `o` is memfd offset `o`.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub fn memfd(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        use std::os::fd::AsFd;
        self.memfd.as_ref().map(|f| f.as_fd())
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
        if !self.borrowed {
            sys_free(self.ptr, self.size);
        }
    }
}

/// The memory page size (4 KiB on x86-64; 4, 16 or 64 KiB on aarch64).
#[cfg(unix)]
pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(p).ok().filter(|&p| p.is_power_of_two()).unwrap_or(4096)
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

    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn a_shared_pool_is_its_memfd() {
        use std::os::fd::AsRawFd;
        let p = BufferPool::new_shared(3 * 4096 + 1, "bmoe-test").unwrap();
        assert_eq!(p.size(), 4 * 4096);
        assert!(BufferPool::new(4096).unwrap().memfd().is_none());
        // SAFETY: no read is in flight into the pool; nothing else uses it.
        unsafe { p.slice_mut(4096, 4096) }.fill(0xAB);
        let mut got = [0u8; 8];
        // SAFETY: reading 8 bytes of our own memfd at offset 4096 into a local buffer.
        let n = unsafe { libc::pread(p.memfd().unwrap().as_raw_fd(), got.as_mut_ptr().cast(), 8, 4096) };
        assert_eq!(n, 8);
        assert_eq!(got, [0xAB; 8], "the pool's bytes are the memfd's");
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
