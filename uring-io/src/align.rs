//! O_DIRECT window arithmetic, as pure functions.
//!
//! Direct I/O reads whole logical blocks at block-aligned file offsets into
//! block-aligned memory. A payload that starts or ends inside a block (GGUF
//! tensor data is only 32-byte aligned) is read as the smallest aligned window
//! that covers it; the payload then starts `delta` bytes into the window. The
//! window may run past the end of the file (the kernel returns a short read
//! there); `need` says how many bytes of the window must arrive for the payload
//! to be complete.

/// The block size of direct reads: offsets, lengths and buffers are multiples of it.
pub const BLOCK: u64 = 4096;

/// The aligned window that covers a payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// File offset of the window (a multiple of the block size).
    pub start: u64,
    /// Bytes to ask the kernel for (a multiple of the block size; may pass EOF).
    pub len: u64,
    /// Where the payload starts inside the window.
    pub delta: u64,
    /// Bytes of the window that must arrive: `delta + payload length`.
    pub need: u64,
}

/// Round `x` down to a multiple of `block` (a power of two).
pub const fn align_down(x: u64, block: u64) -> u64 {
    x & !(block - 1)
}

/// Round `x` up to a multiple of `block` (a power of two); `None` on overflow.
pub const fn align_up(x: u64, block: u64) -> Option<u64> {
    match x.checked_add(block - 1) {
        Some(v) => Some(v & !(block - 1)),
        None => None,
    }
}

/// The `block`-aligned window covering `len` bytes at `offset` of a file of
/// `file_len` bytes. `None` if the payload does not lie inside the file or the
/// arithmetic overflows. An empty payload inside the file has an empty window.
pub fn window(offset: u64, len: u64, file_len: u64, block: u64) -> Option<Window> {
    debug_assert!(block.is_power_of_two());
    let end = offset.checked_add(len)?;
    if end > file_len {
        return None;
    }
    let start = align_down(offset, block);
    let delta = offset - start;
    if len == 0 {
        return Some(Window { start, len: 0, delta, need: delta });
    }
    let wend = align_up(end, block)?;
    Some(Window { start, len: wend - start, delta, need: delta + len })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_table() {
        const B: u64 = 4096;
        // (offset, len, file_len) -> (start, len, delta, need)
        type Row = ((u64, u64, u64), Option<(u64, u64, u64, u64)>);
        let table: &[Row] = &[
            // Already aligned.
            ((0, 4096, 8192), Some((0, 4096, 0, 4096))),
            ((4096, 8192, 16384), Some((4096, 8192, 0, 8192))),
            // Unaligned start, ends inside the same block.
            ((100, 200, 8192), Some((0, 4096, 100, 300))),
            // Unaligned start crossing a block boundary.
            ((4000, 200, 8192), Some((0, 8192, 4000, 4200))),
            // GGUF-like 32-byte aligned tensor in the middle of the file.
            ((12_320, 3 << 20, 64 << 20), Some((12_288, (3 << 20) + 4096, 32, 32 + (3 << 20)))),
            // Last block of a file that does not end on 4 KiB: window passes EOF.
            ((8192, 1000, 9192), Some((8192, 4096, 0, 1000))),
            ((9000, 192, 9192), Some((8192, 4096, 808, 1000))),
            // Whole file of 5000 bytes.
            ((0, 5000, 5000), Some((0, 8192, 0, 5000))),
            // Empty payloads.
            ((4100, 0, 8192), Some((4096, 0, 4, 4))),
            ((0, 0, 0), Some((0, 0, 0, 0))),
            // Out of the file.
            ((9000, 193, 9192), None),
            ((u64::MAX, 2, u64::MAX), None),
        ];
        for &((offset, len, file_len), want) in table {
            let got = window(offset, len, file_len, B).map(|w| (w.start, w.len, w.delta, w.need));
            assert_eq!(got, want, "window({offset}, {len}, {file_len})");
        }
    }

    #[test]
    fn window_invariants() {
        // Exhaustive over a small space: the window covers the payload, is aligned,
        // and `need` never exceeds what the file holds after `start`.
        let b = 512;
        for file_len in [0u64, 1, 511, 512, 513, 2000] {
            for offset in 0..=file_len {
                for len in 0..=(file_len - offset).min(1100) {
                    let w = window(offset, len, file_len, b).unwrap();
                    assert_eq!(w.start % b, 0);
                    assert_eq!(w.len % b, 0);
                    assert_eq!(w.start + w.delta, offset);
                    assert!(w.need <= w.len || len == 0);
                    assert!(w.start + w.need <= file_len);
                    assert!(w.start + w.len < offset + len + b);
                }
            }
        }
    }

    #[test]
    fn rounding() {
        assert_eq!(align_down(4097, 4096), 4096);
        assert_eq!(align_up(4097, 4096), Some(8192));
        assert_eq!(align_up(0, 4096), Some(0));
        assert_eq!(align_up(u64::MAX, 4096), None);
    }
}
