//! What the driver reads from the machine: memory, the block device's counters, the page
//! cache's dropping, and a description of the machine for reports.

use std::path::{Path, PathBuf};

/// A `/proc/meminfo` field in bytes.
pub fn meminfo(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.split(':').next() == Some(field))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kb| kb * 1024)
}

/// `MemAvailable`, bytes.
pub fn mem_available() -> Option<u64> {
    meminfo("MemAvailable")
}

/// Write back dirty pages and drop the page cache (needs root).
///
/// # Errors
/// Why it could not (e.g. not root): the caller records it and measures from a warm cache.
pub fn drop_caches() -> Result<(), String> {
    // SAFETY: sync(2) takes no arguments and cannot fail.
    unsafe { libc::sync() };
    std::fs::write("/proc/sys/vm/drop_caches", "3\n").map_err(|e| format!("/proc/sys/vm/drop_caches: {e}"))
}

/// The read counter of the block device holding a file (`/sys/dev/block/MAJ:MIN/stat`).
#[derive(Clone, Debug)]
pub struct DiskCounter {
    stat: PathBuf,
}

impl DiskCounter {
    /// The device under `path`, if sysfs shows it (not for tmpfs or overlay files).
    pub fn for_path(path: &Path) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        let dev = std::fs::metadata(path).ok()?.dev();
        let (maj, min) = (libc::major(dev), libc::minor(dev));
        let stat = PathBuf::from(format!("/sys/dev/block/{maj}:{min}/stat"));
        stat.exists().then_some(Self { stat })
    }

    /// Bytes read from the device since boot (sectors read × 512).
    pub fn read_bytes(&self) -> Option<u64> {
        let s = std::fs::read_to_string(&self.stat).ok()?;
        s.split_whitespace().nth(2)?.parse::<u64>().ok().map(|sectors| sectors * 512)
    }

    /// The sysfs file read.
    pub fn path(&self) -> &Path {
        &self.stat
    }
}

/// One line describing the machine: CPU model and count, memory, swap, kernel.
pub fn machine() -> String {
    let cpu = bmoe::engine::telemetry::cpu_model().unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let gib = |b: Option<u64>| b.map_or("?".into(), |b| format!("{:.1}", b as f64 / (1u64 << 30) as f64));
    let kernel = bmoe::engine::telemetry::kernel_release().unwrap_or_default();
    format!(
        "{cpu}, {cores} cores, {} GiB RAM, {} GiB swap, Linux {}",
        gib(meminfo("MemTotal")),
        gib(meminfo("SwapTotal")),
        kernel
    )
}
