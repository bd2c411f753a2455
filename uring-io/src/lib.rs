//! The read engine: files, byte ranges, a fixed pool of aligned buffers and
//! completions. It knows nothing about models.
//!
//! The `[uring-io]` issue fills this crate in (buffer pool, ring, backends).
