//! The overlay table: which pages of llama.cpp's mapping of the model file show our cache's
//! pages instead of the file's, and how to put them back.
//!
//! llama.cpp maps each shard `PROT_READ, MAP_SHARED` and points every tensor at `base +
//! offset`; its `mul_mat_id` reads expert `e` of a stacked tensor at `data + e × nb[2]`. A miss
//! reads the expert's page-aligned window of the file into a slot of a memfd-backed pool, then
//! maps those slot pages over the window (`MAP_FIXED`): no pointer changes, no copy, and a hit
//! costs nothing. What a window shows when no slot is mapped over it is the file, or, in tests,
//! a poison memfd of 0xFF bytes, so that a byte llama.cpp read from anywhere but our slots
//! shows.
//!
//! A window's first and last pages may hold bytes of a neighbour (the next expert's slice,
//! another tensor): both slots then hold the same file bytes there. The table counts who holds
//! each such page, so restoring one window maps a shared page to the other holder's copy, and
//! only a page nobody holds goes back to its backfill. A page not wholly inside an expert tensor
//! (a tensor's edge, shared with dense bytes) always goes back to the file, poison or not.
//!
//! Eviction is lazy ([`Overlay::retire`]): only what must change now is mapped back (a
//! boundary page another overlaid window holds shows that window's copy; a page that also
//! holds dense bytes shows the file). The rest of the window keeps showing its old slot, whatever
//! the slot holds next: nothing reads an expert's window unless the expert is routed, and a
//! routed expert is overlaid first (a hit is overlaid already; a miss gets a slot, a read and an
//! overlay). That halves the mapping calls of a miss that evicts. Such *stale* windows are put
//! back (file or poison) oldest first once more of them are kept than the map budget leaves room
//! for beside the slots' windows.
//!
//! Each overlay splits a mapping in up to three, so overlays cost entries of the kernel's
//! per-process map count (`vm.max_map_count`): [`map_budget`] says how many windows may be
//! overlaid at once with a margin, and the engine sizes its cache under it.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fs::File;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};

use crate::error::{Error, Result};

/// One shard as llama.cpp mapped it.
#[derive(Debug)]
pub struct ShardMap {
    /// The address of file offset 0 (llama.cpp unmapped the head and tail it does not use; the
    /// rest lies at `base + offset`).
    pub base: usize,
    /// Bytes of the file.
    pub len: u64,
    /// Our own read-only descriptor of the file, to map windows back.
    pub file: File,
    /// Page ranges `[first, end)` wholly inside expert tensors: poisoned in tests.
    pub expert_pages: Vec<(u64, u64)>,
}

/// Where a page of an overlaid window comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    /// The pool's memfd at this offset.
    Pool(u64),
    /// The file (at the page's own offset).
    File,
    /// The poison memfd.
    Poison,
    /// Private anonymous memory, writable: a read lands in place (the fallback).
    Anon,
}

/// A window: pages `[first, end)` of one shard.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Window {
    pub shard: usize,
    pub first: u64,
    pub end: u64,
}

/// The overlay table. See the module docs.
#[derive(Debug)]
pub struct Overlay {
    shards: Vec<ShardMap>,
    page: u64,
    /// The 0xFF memfd, as large as the widest expert page range, when poisoning.
    poison: Option<OwnedFd>,
    /// Pool offsets of the copies of a boundary page, by (shard, page): every overlaid
    /// window registers its first and last page.
    holders: HashMap<(usize, u64), Vec<u64>>,
    /// Windows overlaid now.
    overlaid: usize,
    /// Reads land in llama.cpp's mapping itself (anonymous pages claimed over each window)
    /// instead of a pool overlaid onto it: the fallback where there is no memfd.
    in_place: bool,
    /// Windows retired lazily that still show their old slot ([`Self::retire`]), and their
    /// order (oldest first; a window overlaid again leaves the set, its queue entry is skipped).
    stale: HashSet<Window>,
    stale_order: VecDeque<Window>,
    /// The most stale windows kept (the map budget's room beside the slots' windows).
    stale_cap: usize,
    /// Mapping calls made, and their seconds, for telemetry.
    pub calls: u64,
    pub seconds: f64,
}

impl Overlay {
    /// A table over `shards` with pages of `page` bytes; with `poison`, every page wholly
    /// inside an expert tensor is mapped to 0xFF bytes now, and restored to them after.
    ///
    /// # Errors
    /// [`Error::Provider`] if the poison memfd cannot be made or mapped.
    pub fn new(shards: Vec<ShardMap>, page: u64, poison: bool) -> Result<Self> {
        let mut o = Self {
            shards,
            page,
            poison: None,
            holders: HashMap::new(),
            overlaid: 0,
            in_place: false,
            stale: HashSet::new(),
            stale_order: VecDeque::new(),
            stale_cap: usize::MAX,
            calls: 0,
            seconds: 0.0,
        };
        if poison {
            let widest = o.shards.iter().flat_map(|s| &s.expert_pages).map(|&(a, b)| b - a).max().unwrap_or(0);
            if widest > 0 {
                o.poison = Some(poison_memfd(widest * page)?);
                for s in 0..o.shards.len() {
                    for (a, b) in o.shards[s].expert_pages.clone() {
                        o.map(s, a, b, Source::Poison)?;
                    }
                }
            }
        }
        Ok(o)
    }

    /// Reads land in place from now on ([`Self::claim`] instead of [`Self::overlay`]).
    pub fn set_in_place(&mut self, on: bool) {
        self.in_place = on;
    }

    /// Keep at most `n` stale windows ([`Self::retire`]).
    pub fn set_stale_cap(&mut self, n: usize) {
        self.stale_cap = n;
    }

    /// Windows retired lazily that still show their old slot.
    pub fn stale(&self) -> usize {
        self.stale.len()
    }

    /// Whether reads land in place.
    pub fn in_place(&self) -> bool {
        self.in_place
    }

    /// The address of pages `[first, ..)` of `shard` in llama.cpp's mapping.
    pub fn address(&self, shard: usize, first: u64) -> usize {
        self.shards[shard].base + (first * self.page) as usize
    }

    /// Bytes of a page.
    pub fn page(&self) -> u64 {
        self.page
    }

    /// Windows overlaid now.
    pub fn overlaid(&self) -> usize {
        self.overlaid
    }

    /// The shards.
    pub fn shards(&self) -> &[ShardMap] {
        &self.shards
    }

    /// The page-aligned window around file bytes `[offset, offset + len)` of `shard`.
    pub fn window(&self, shard: usize, offset: u64, len: u64) -> Window {
        Window { shard, first: offset / self.page, end: (offset + len).div_ceil(self.page) }
    }

    /// Show the pool's pages at `pool_off..` (holding the file bytes of `w`, read from the
    /// window's first page on) in place of the window.
    ///
    /// # Errors
    /// [`Error::Provider`] if the kernel refuses the mapping (the window then still shows what
    /// it showed before).
    pub fn overlay(&mut self, pool: BorrowedFd<'_>, w: Window, pool_off: u64) -> Result<()> {
        self.map_fd(w.shard, w.first, w.end, Some(pool), Source::Pool(pool_off))?;
        self.stale.remove(&w);
        for p in [w.first, w.end - 1] {
            let copy = pool_off + (p - w.first) * self.page;
            let h = self.holders.entry((w.shard, p)).or_default();
            if !h.contains(&copy) {
                h.push(copy);
            }
        }
        self.overlaid += 1;
        Ok(())
    }

    /// In place: make window `w` private writable memory where no other window holds it and
    /// the page lies wholly inside expert tensors, so a read of its file bytes can land at its
    /// own address; `owner` names the window in the table (any value unique to it). Returns the
    /// pages claimed, `[first, end)`: the ones to read (a page another window holds has its
    /// bytes already, or is being read by it; an edge page with dense bytes shows the file).
    ///
    /// # Errors
    /// [`Error::Provider`] if the kernel refuses the mapping.
    pub fn claim(&mut self, w: Window, owner: u64) -> Result<(u64, u64)> {
        let held = |o: &Self, p: u64| o.holders.get(&(w.shard, p)).is_some_and(|h| !h.is_empty());
        // Only pages wholly inside expert tensors: a window's edge page that holds dense bytes
        // too stays the file's (its bytes are the file's either way), so that no dense tensor
        // ever shows a claimed page before its read lands (the next layer's router and norms
        // are computed while look-ahead reads that layer's experts; a shared expert may compute
        // while its layer's routed experts read).
        let inside = self.shards[w.shard].expert_pages.iter().find(|&&(x, y)| x < w.end && w.first < y);
        let (mut a, mut b) = inside.map_or((w.first, w.first), |&(x, y)| (w.first.max(x), w.end.min(y)));
        if a == w.first && a < b && held(self, a) {
            a += 1;
        }
        if b == w.end && b > a && held(self, b - 1) {
            b -= 1;
        }
        if a < b {
            self.map(w.shard, a, b, Source::Anon)?;
        }
        for p in [w.first, w.end - 1] {
            let h = self.holders.entry((w.shard, p)).or_default();
            if !h.contains(&owner) {
                h.push(owner);
            }
        }
        self.overlaid += 1;
        Ok((a, b.max(a)))
    }

    /// Put window `w` (overlaid from pool offset `pool_off`, or claimed by owner `pool_off` in
    /// place) back: its pages that another
    /// overlaid window holds show that window's copy, the others their backfill (the file, or
    /// the poison for pages wholly inside an expert tensor when poisoning).
    ///
    /// # Errors
    /// [`Error::Provider`] if the kernel refuses a mapping.
    pub fn restore(&mut self, pool: Option<BorrowedFd<'_>>, w: Window, pool_off: u64) -> Result<()> {
        let mut keep = [None, None];
        for (i, p) in [w.first, w.end - 1].into_iter().enumerate() {
            let copy = pool_off + (p - w.first) * self.page;
            if let Some(h) = self.holders.get_mut(&(w.shard, p)) {
                h.retain(|&c| c != copy);
                match h.first() {
                    Some(&other) => keep[i] = Some(other),
                    None => drop(self.holders.remove(&(w.shard, p))),
                }
            }
        }
        self.overlaid = self.overlaid.saturating_sub(1);
        let (mut a, mut b) = (w.first, w.end);
        // A page another window still holds shows its copy; in place it stays as it is, its
        // bytes read again from the file (the other window skipped the page, counting on this
        // window's read of it, which may have been cancelled before it landed).
        if let Some(other) = keep[0] {
            match self.in_place {
                false => self.map_fd(w.shard, a, a + 1, pool, Source::Pool(other))?,
                true => self.reread(w.shard, a)?,
            }
            a += 1;
        }
        if let (Some(other), true) = (keep[1], b > a) {
            match self.in_place {
                false => self.map_fd(w.shard, b - 1, b, pool, Source::Pool(other))?,
                true => self.reread(w.shard, b - 1)?,
            }
            b -= 1;
        }
        self.backfill(w.shard, a, b)
    }

    /// Retire window `w` (overlaid from pool offset `pool_off`; its slot is about to be reused):
    /// its boundary pages that another overlaid window holds show that window's copy, a boundary
    /// page that also holds dense bytes shows the file, and the rest stays as it is, a stale
    /// window (see the module docs), until the cap on stale windows puts the oldest back.
    ///
    /// # Errors
    /// [`Error::Provider`] if the kernel refuses a mapping.
    pub fn retire(&mut self, pool: BorrowedFd<'_>, w: Window, pool_off: u64) -> Result<()> {
        let mut keep = [None, None];
        for (i, p) in [w.first, w.end - 1].into_iter().enumerate() {
            let copy = pool_off + (p - w.first) * self.page;
            if let Some(h) = self.holders.get_mut(&(w.shard, p)) {
                h.retain(|&c| c != copy);
                match h.first() {
                    Some(&other) => keep[i] = Some(other),
                    None => drop(self.holders.remove(&(w.shard, p))),
                }
            }
        }
        self.overlaid = self.overlaid.saturating_sub(1);
        let edges =
            if w.end - 1 > w.first { vec![(w.first, keep[0]), (w.end - 1, keep[1])] } else { vec![(w.first, keep[0])] };
        for (p, other) in edges {
            match other {
                Some(other) => self.map_fd(w.shard, p, p + 1, Some(pool), Source::Pool(other))?,
                None if !self.inside_experts(w.shard, p) => self.map(w.shard, p, p + 1, Source::File)?,
                None => {}
            }
        }
        if self.stale.insert(w) {
            self.stale_order.push_back(w);
        }
        while self.stale.len() > self.stale_cap {
            let Some(old) = self.stale_order.pop_front() else { break };
            if self.stale.remove(&old) {
                self.put_back(old)?;
            }
        }
        // The queue holds the windows overlaid again too (skipped when they come up): keep it
        // from growing past what it tracks.
        if self.stale_order.len() > 2 * self.stale.len() + 1024 {
            let stale = &self.stale;
            self.stale_order.retain(|w| stale.contains(w));
        }
        Ok(())
    }

    /// A stale window back to its backfill (poison inside expert tensors when poisoning, the
    /// file elsewhere), but for a boundary page an overlaid window holds now.
    fn put_back(&mut self, w: Window) -> Result<()> {
        let held = |o: &Self, p: u64| o.holders.get(&(w.shard, p)).is_some_and(|h| !h.is_empty());
        let (mut a, mut b) = (w.first, w.end);
        if held(self, a) {
            a += 1;
        }
        if b > a && held(self, b - 1) {
            b -= 1;
        }
        self.backfill(w.shard, a, b)
    }

    /// Whether page `p` of `shard` lies wholly inside expert tensors.
    fn inside_experts(&self, shard: usize, p: u64) -> bool {
        self.shards[shard].expert_pages.iter().any(|&(x, y)| x <= p && p < y)
    }

    /// In place: page `p` of `shard`, claimed (private writable memory) and held by a window,
    /// filled with its file bytes now. A page not wholly inside expert tensors is never
    /// claimed: it shows the file already.
    fn reread(&mut self, shard: usize, p: u64) -> Result<()> {
        use std::os::unix::fs::FileExt as _;
        if !self.inside_experts(shard, p) {
            return Ok(());
        }
        let s = &self.shards[shard];
        let at = p * self.page;
        let len = self.page.min(s.len.saturating_sub(at)) as usize;
        // SAFETY: page p lies inside llama.cpp's mapping of this shard and, wholly inside an
        // expert tensor and held by a window, was claimed as private writable memory; nothing
        // computes on it while the table changes (the seam's contract), and a read still in
        // flight into it writes the same file bytes.
        let dst = unsafe { std::slice::from_raw_parts_mut((s.base + at as usize) as *mut u8, len) };
        s.file
            .read_exact_at(dst, at)
            .map_err(|e| Error::Provider(format!("reading page {p} of shard {shard} again (in place): {e}")))
    }

    /// Pages `[a, b)` of `shard` back to what nobody's window shows: poison inside expert
    /// tensors when poisoning, the file elsewhere.
    fn backfill(&mut self, shard: usize, mut a: u64, b: u64) -> Result<()> {
        if self.poison.is_none() {
            return if a < b { self.map(shard, a, b, Source::File) } else { Ok(()) };
        }
        while a < b {
            let inside = self.shards[shard].expert_pages.iter().copied().find(|&(x, y)| x <= a && a < y);
            let (end, src) = match inside {
                Some((_, y)) => (y.min(b), Source::Poison),
                None => {
                    let next = self.shards[shard].expert_pages.iter().map(|&(x, _)| x).filter(|&x| x > a).min();
                    (next.unwrap_or(b).min(b), Source::File)
                }
            };
            self.map(shard, a, end, src)?;
            a = end;
        }
        Ok(())
    }

    fn map(&mut self, shard: usize, a: u64, b: u64, src: Source) -> Result<()> {
        self.map_fd(shard, a, b, None, src)
    }

    /// Map pages `[a, b)` of `shard`'s mapping from `src`.
    fn map_fd(&mut self, shard: usize, a: u64, b: u64, pool: Option<BorrowedFd<'_>>, src: Source) -> Result<()> {
        let t = std::time::Instant::now();
        let s = &self.shards[shard];
        let (fd, off, populate) = match src {
            Source::Pool(off) => (pool.expect("a pool source comes with its fd").as_raw_fd(), off, true),
            Source::Anon => (-1, 0, false),
            Source::File => (s.file.as_raw_fd(), a * self.page, false),
            Source::Poison => {
                let (first, _) = s.expert_pages.iter().copied().find(|&(x, y)| x <= a && a < y).unwrap_or((a, b));
                (self.poison.as_ref().expect("poisoning").as_raw_fd(), (a - first) * self.page, false)
            }
        };
        let addr = s.base + (a * self.page) as usize;
        let len = ((b - a) * self.page) as usize;
        let (prot, flags) = match src {
            Source::Anon => {
                (libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED)
            }
            _ => (libc::PROT_READ, libc::MAP_SHARED | libc::MAP_FIXED | if populate { libc::MAP_POPULATE } else { 0 }),
        };
        // SAFETY: [addr, addr + len) lies inside llama.cpp's read-only mapping of this shard
        // (pages of the file's own extent at base + offset), which lives as long as the model
        // this table belongs to; replacing its pages with a shared mapping of the same bytes
        // (the file's, a slot's copy of them), of the poison, or with fresh memory a read fills
        // before anything computes on it changes no pointer. Nothing computes on these pages
        // while the table changes them: the seam only maps between graph segments, and never
        // pages of an expert the running segment reads.
        let p = unsafe { libc::mmap(addr as *mut libc::c_void, len, prot, flags, fd, off as libc::off_t) };
        self.calls += 1;
        self.seconds += t.elapsed().as_secs_f64();
        if p == libc::MAP_FAILED {
            let err = std::io::Error::last_os_error();
            return Err(Error::Provider(format!(
                "mapping {len} bytes over file offset {} of shard {shard}: {err}{}",
                a * self.page,
                if err.raw_os_error() == Some(libc::ENOMEM) {
                    format!(" (the process may be at vm.max_map_count: {} windows overlaid)", self.overlaid)
                } else {
                    String::new()
                }
            )));
        }
        Ok(())
    }
}

/// A memfd of `len` bytes of 0xFF.
fn poison_memfd(len: u64) -> Result<OwnedFd> {
    use std::io::Write as _;
    use std::os::fd::FromRawFd;
    let bad = |e: std::io::Error| Error::Provider(format!("the poison memfd: {e}"));
    // SAFETY: a static NUL-terminated name; the kernel returns a new descriptor or -1.
    let fd = unsafe { libc::memfd_create(c"bmoe-poison".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(bad(std::io::Error::last_os_error()));
    }
    // SAFETY: fd is ours alone; File takes ownership and closes it.
    let mut f = unsafe { File::from_raw_fd(fd) };
    let chunk = vec![0xFFu8; 1 << 20];
    let mut left = len;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        f.write_all(&chunk[..n]).map_err(bad)?;
        left -= n as u64;
    }
    Ok(OwnedFd::from(f))
}

/// The process's mappings now (lines of `/proc/self/maps`) and the kernel's limit
/// (`vm.max_map_count`), if readable.
pub fn map_counts() -> Option<(usize, usize)> {
    let now = std::fs::read_to_string("/proc/self/maps").ok()?.lines().count();
    let max = std::fs::read_to_string("/proc/sys/vm/max_map_count").ok()?.trim().parse().ok()?;
    Some((now, max))
}

/// How many windows may be overlaid at once: each splits a mapping into three (two more
/// entries), with a margin of a quarter of the room (at least 1024 entries) left for the
/// allocator, threads and llama.cpp. `None` where the counts are not readable.
pub fn map_budget() -> Option<usize> {
    let (now, max) = map_counts()?;
    let room = max.saturating_sub(now);
    Some(room.saturating_sub((room / 4).max(1024)) / 2)
}

/// Every mapping of `file` in this process, by (device, inode) as `/proc/self/maps` lists them:
/// `(start address, address of file offset 0)`.
///
/// # Errors
/// [`Error::Provider`] if the maps cannot be read.
pub fn file_mappings(file: &File) -> Result<Vec<(usize, usize)>> {
    use std::os::unix::fs::MetadataExt as _;
    let m = file.metadata().map_err(|e| Error::Provider(format!("the model file's metadata: {e}")))?;
    let maps = std::fs::read_to_string("/proc/self/maps")
        .map_err(|e| Error::Provider(format!("reading /proc/self/maps: {e}")))?;
    let mut out = Vec::new();
    for line in maps.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 5 {
            continue;
        }
        let Some((dev_hi, dev_lo)) = f[3].split_once(':') else { continue };
        let (Ok(major), Ok(minor), Ok(inode)) =
            (u64::from_str_radix(dev_hi, 16), u64::from_str_radix(dev_lo, 16), f[4].parse::<u64>())
        else {
            continue;
        };
        if inode != m.ino() || libc::makedev(major as u32, minor as u32) != m.dev() {
            continue;
        }
        let (Some((start, _)), Ok(pgoff)) = (f[0].split_once('-'), u64::from_str_radix(f[2], 16)) else { continue };
        let Ok(start) = usize::from_str_radix(start, 16) else { continue };
        out.push((start, start.wrapping_sub(pgoff as usize)));
    }
    Ok(out)
}

/// The address of file offset 0 of the mapping of `file` made since `before` (its
/// [`file_mappings`] then): the one llama.cpp's load made.
///
/// # Errors
/// [`Error::Provider`] if the maps cannot be read, or the new mappings disagree.
pub fn new_mapping_base(file: &File, before: &[(usize, usize)]) -> Result<Option<usize>> {
    let mut base = None;
    for (start, b) in file_mappings(file)? {
        if before.iter().any(|&(s, _)| s == start) {
            continue;
        }
        match base {
            None => base = Some(b),
            Some(x) if x == b => {}
            Some(_) => return Err(Error::Provider("llama.cpp mapped the model file at two places".into())),
        }
    }
    Ok(base)
}
