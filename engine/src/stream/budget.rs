//! The expert cache's budget: what was asked (`--cache-mb auto|N|0`), what the machine can
//! give, and how many slots that makes. Pure arithmetic, decided once at open (and again on a
//! resize between generations), table-tested, with checked arithmetic throughout: the inputs
//! come from flags and file fields.
//!
//! `auto` is `MemAvailable − floor − dense bytes − KV bytes`, clamped to the ceiling and to the
//! model's expert bytes (a cache larger than every expert holds nothing more). An explicit size
//! that leaves less than the floor free is refused unless forced. Either is then turned into
//! whole slots, raised to the fewest that work: one layer's top-k (twice that with look-ahead,
//! so a small cache keeps an unpinned slot to read ahead into).

use crate::error::{Error, Result};

const MIB: f64 = (1u64 << 20) as f64;

/// What the user asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheSize {
    /// From free memory (see the module docs).
    Auto,
    /// This many bytes (0: no cache, one layer's experts re-read every token).
    Bytes(u64),
}

impl std::str::FromStr for CacheSize {
    type Err = Error;

    /// `auto`, or a size (`--cache-mb`: see [`parse_size`]).
    fn from_str(s: &str) -> Result<Self> {
        if s.trim().eq_ignore_ascii_case("auto") {
            return Ok(CacheSize::Auto);
        }
        parse_size("--cache-mb", s).map(CacheSize::Bytes)
    }
}

/// A size flag in bytes: a plain number is MiB (`4096`), or a number with a binary unit
/// (`512K`, `4096M`, `2G`, `1T`, also `KiB`, `MiB`, `GiB`, `TiB`, any case; fractions such as
/// `1.5G` are allowed). Checked: a size that does not fit 64 bits is an error, never a wrap.
///
/// # Errors
/// [`Error::Invalid`] naming `flag` and what it expected.
pub fn parse_size(flag: &str, s: &str) -> Result<u64> {
    let t = s.trim();
    let bad = || {
        Error::Invalid(format!(
            "{flag} `{}`: expected a size: MiB (4096), or with a unit (512K, 4096M, 2G, 1T)",
            crate::cache::trace::excerpt(t)
        ))
    };
    let lower = t.to_ascii_lowercase();
    let digits = lower.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &lower[digits.len()..];
    let shift = match unit {
        "" | "m" | "mb" | "mib" => 20,
        "k" | "kb" | "kib" => 10,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        "b" => 0,
        _ => return Err(bad()),
    };
    let digits = digits.trim();
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return Err(bad());
    }
    let too_big = || {
        Error::Invalid(format!("{flag} `{}`: larger than this machine can address", crate::cache::trace::excerpt(t)))
    };
    if let Ok(n) = digits.parse::<u64>() {
        return n.checked_mul(1u64 << shift).ok_or_else(too_big);
    }
    if digits.bytes().all(|c| c.is_ascii_digit()) {
        return Err(too_big());
    }
    let x: f64 = digits.parse().map_err(|_| bad())?;
    let bytes = x * (1u64 << shift) as f64;
    if !bytes.is_finite() || bytes >= u64::MAX as f64 {
        return Err(too_big());
    }
    Ok(bytes as u64)
}

/// What the budget is sized against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Machine {
    /// `MemAvailable` (None: unknown, e.g. no /proc).
    pub mem_available: Option<u64>,
    /// Memory `auto` leaves free, and an explicit size must leave free unless forced.
    pub floor: u64,
    /// Upper bound of `auto` (None: none).
    pub ceiling: Option<u64>,
    /// Accept an explicit size that leaves less than the floor free.
    pub force: bool,
}

/// What else the run will allocate, and what holding every expert takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Needs {
    /// Dense weights (read into anonymous memory or faulted in from the mapping).
    pub dense: u64,
    /// The KV cache and the compute buffers.
    pub kv: u64,
    /// A pool that holds every expert of the model (every entry in its slot, with its
    /// O_DIRECT slack): no budget beyond it holds anything more.
    pub experts: u64,
}

/// The budget decided, before slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    pub bytes: u64,
    /// Sized by `auto`.
    pub auto: bool,
    /// An explicit size above what holding every expert takes, capped to that: the size asked.
    pub capped_from: Option<u64>,
}

/// Decide the budget.
///
/// # Errors
/// [`Error::Invalid`] when `auto` cannot know the free memory, or an explicit size leaves less
/// than the floor free and is not forced.
pub fn resolve(size: CacheSize, m: Machine, needs: Needs) -> Result<Budget> {
    let reserved = m.floor.saturating_add(needs.dense).saturating_add(needs.kv);
    match size {
        CacheSize::Auto => {
            let avail = m.mem_available.ok_or_else(|| {
                Error::Invalid("--cache-mb auto needs /proc/meminfo (MemAvailable); give --cache-mb N".into())
            })?;
            let mut b = avail.saturating_sub(reserved);
            if let Some(c) = m.ceiling {
                b = b.min(c);
            }
            Ok(Budget { bytes: b.min(needs.experts), auto: true, capped_from: None })
        }
        CacheSize::Bytes(asked) => {
            // Capped first: a budget above every expert's bytes takes only those.
            let b = asked.min(needs.experts);
            if let Some(avail) = m.mem_available {
                if b > avail.saturating_sub(reserved) && !m.force {
                    return Err(Error::Invalid(format!(
                        "--cache-mb {} would leave less than --cache-floor-mb {} MiB free (MemAvailable {:.0} MiB, \
                         dense {:.0} MiB, KV {:.0} MiB){}; pass --force-cache to use it anyway",
                        asked >> 20,
                        m.floor >> 20,
                        avail as f64 / MIB,
                        needs.dense as f64 / MIB,
                        needs.kv as f64 / MIB,
                        if asked > b {
                            format!(
                                " (--cache-mb {} is capped to what every expert takes, {:.1} MiB)",
                                asked >> 20,
                                b as f64 / MIB
                            )
                        } else {
                            String::new()
                        }
                    )));
                }
            }
            Ok(Budget { bytes: b, auto: false, capped_from: (asked > b).then_some(asked) })
        }
    }
}

/// Slots a budget buys: `(slots, raised)`, raised to `floor` slots when fewer.
pub fn slots(budget: u64, slot_bytes: usize, floor: usize) -> (usize, bool) {
    let wanted = usize::try_from(budget / slot_bytes.max(1) as u64).unwrap_or(usize::MAX);
    (wanted.max(floor), wanted < floor)
}

/// The fewest slots that work: one layer's top-`k`; with look-ahead, the next layer's too.
pub fn floor_slots(k: usize, lookahead: bool) -> usize {
    if lookahead {
        2 * k
    } else {
        k
    }
}

/// `MemAvailable` from /proc/meminfo, bytes.
pub fn mem_available() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok()?.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;
    const M: Machine = Machine { mem_available: Some(16 * GIB), floor: 1536 << 20, ceiling: None, force: false };
    const N: Needs = Needs { dense: GIB, kv: GIB / 2, experts: 100 * GIB };

    #[test]
    fn auto_is_free_memory_less_floor_dense_and_kv_clamped() {
        let b = resolve(CacheSize::Auto, M, N).unwrap();
        assert_eq!(b, Budget { bytes: 16 * GIB - (1536 << 20) - GIB - GIB / 2, auto: true, capped_from: None });
        let b = resolve(CacheSize::Auto, Machine { ceiling: Some(2 * GIB), ..M }, N).unwrap();
        assert_eq!(b.bytes, 2 * GIB);
        let b = resolve(CacheSize::Auto, M, Needs { experts: GIB, ..N }).unwrap();
        assert_eq!(b.bytes, GIB, "never more than every expert");
        let b = resolve(CacheSize::Auto, Machine { mem_available: Some(GIB), ..M }, N).unwrap();
        assert_eq!(b.bytes, 0, "nothing free");
        assert!(resolve(CacheSize::Auto, Machine { mem_available: None, ..M }, N).is_err());
    }

    #[test]
    fn an_explicit_size_must_leave_the_floor_unless_forced() {
        assert_eq!(
            resolve(CacheSize::Bytes(4 * GIB), M, N).unwrap(),
            Budget { bytes: 4 * GIB, auto: false, capped_from: None }
        );
        // Above what holding every expert takes: capped to it.
        let b = resolve(CacheSize::Bytes(4 * GIB), M, Needs { experts: GIB, ..N }).unwrap();
        assert_eq!(b, Budget { bytes: GIB, auto: false, capped_from: Some(4 * GIB) });
        let e = resolve(CacheSize::Bytes(15 * GIB), M, N).unwrap_err().to_string();
        assert!(e.starts_with("--cache-mb 15360 would leave less than --cache-floor-mb 1536 MiB free"), "{e}");
        assert!(resolve(CacheSize::Bytes(15 * GIB), Machine { force: true, ..M }, N).is_ok());
        assert!(resolve(CacheSize::Bytes(15 * GIB), Machine { mem_available: None, ..M }, N).is_ok());
        // Capped first, then checked: a size above a small model's experts takes only those,
        // which fit (the check once ran on the size asked and refused it).
        let small = Needs { experts: 7 << 20, ..N };
        let b = resolve(CacheSize::Bytes(30_000 << 20), M, small).unwrap();
        assert_eq!(b, Budget { bytes: 7 << 20, auto: false, capped_from: Some(30_000 << 20) });
        // Capped, and even so too big: refused, saying it was capped.
        let tight = Machine { mem_available: Some((1536 << 20) + GIB + GIB / 2 + (5 << 20)), ..M };
        let e = resolve(CacheSize::Bytes(30_000 << 20), tight, small).unwrap_err().to_string();
        assert!(e.contains("--cache-mb 30000 is capped to what every expert takes, 7.0 MiB"), "{e}");
    }

    #[test]
    fn slots_are_whole_and_raised_to_the_floor() {
        assert_eq!(slots(10 << 20, 1 << 20, 4), (10, false));
        assert_eq!(slots((10 << 20) - 1, 1 << 20, 4), (9, false));
        assert_eq!(slots(0, 1 << 20, 4), (4, true));
        assert_eq!(slots(3 << 20, 1 << 20, 4), (4, true));
        assert_eq!(floor_slots(6, true), 12);
        assert_eq!("auto".parse::<CacheSize>().unwrap(), CacheSize::Auto);
        assert_eq!(" 77 ".parse::<CacheSize>().unwrap(), CacheSize::Bytes(77 << 20));
        assert!("7x".parse::<CacheSize>().is_err());
    }

    #[test]
    fn sizes_take_units_and_never_wrap() {
        let p = |s| parse_size("--cache-mb", s);
        assert_eq!(p("4096").unwrap(), 4096 << 20);
        assert_eq!(p("4096M").unwrap(), 4096 << 20);
        assert_eq!(p("2G").unwrap(), 2 << 30);
        assert_eq!(p("2gib").unwrap(), 2 << 30);
        assert_eq!(p("512K").unwrap(), 512 << 10);
        assert_eq!(p("1.5G").unwrap(), 3 << 29);
        assert_eq!(p("0").unwrap(), 0);
        // 2^44 MiB is 2^64 bytes: an error, not 0 (the wrap the old parser did).
        assert!(p("17592186044416").unwrap_err().to_string().contains("larger than"));
        assert!(p("17592186044421").is_err());
        assert!(p("99999999999999999999G").is_err());
        for bad in ["", "G", "1.2.3G", "-1", "12Q", "1e3"] {
            assert!(p(bad).is_err(), "{bad}");
        }
        let long = "9".repeat(5000) + "\u{7}";
        let e = p(&long).unwrap_err().to_string();
        assert!(e.len() < 300 && !e.contains('\u{7}'), "the message echoes an excerpt: {e}");
    }
}
