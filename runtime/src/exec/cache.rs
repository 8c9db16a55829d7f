//! Cache sizes of the host (read once from Linux sysfs, or given by `PPSTENCIL_LLC`), which
//! size rayon's tasks, the temporal blocking's wavefront, and decide whether generated row
//! loops prefetch and stream. Nothing here runs kernels.

use std::sync::OnceLock;

/// The environment variable that sets the last-level cache size, in bytes with an optional
/// `K`, `M` or `G` suffix (`32M`): for a host whose sysfs reports a cache the process does
/// not get (a virtual machine's slice of a large shared L3), and for measurements.
pub const LLC_ENV: &str = "PPSTENCIL_LLC";

/// The typical last-level cache (32 MiB) assumed where sysfs cannot be read, or reports an
/// implausible one (see [`MAX_LLC_PER_CPU`]).
pub const TYPICAL_LLC: usize = 32 << 20;

/// The most last-level cache that one CPU sharing it is credited with. No shipped processor
/// has more than 12 MiB of L3 per core (AMD's stacked-cache parts); more per CPU than this is
/// a hypervisor passing the host's whole cache to a guest that gets a slice of it, and
/// [`TYPICAL_LLC`] is used instead. On a 2-vCPU KVM guest on an Intel Xeon whose sysfs said
/// 480 MiB shared by its 2 CPUs, `auto` took the paper grid's fields (134 MiB) to be served
/// from that cache and left them unblocked, 1.3-1.5 x slower than blocked
/// (`docs/design/0010-cache-size-detection.md`).
pub const MAX_LLC_PER_CPU: usize = 32 << 20;

/// Where [`CacheSizes::llc`] comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LlcSource {
    /// Read from sysfs.
    Sysfs,
    /// Given by [`LLC_ENV`].
    Environment,
    /// Sysfs reported `reported` bytes shared by `cpus` CPUs, more than [`MAX_LLC_PER_CPU`]
    /// each: [`TYPICAL_LLC`] is used instead.
    Implausible {
        /// The size sysfs reported, in bytes.
        reported: usize,
        /// The CPUs sysfs said share it.
        cpus: usize,
    },
    /// Not readable: [`TYPICAL_LLC`] is assumed.
    Typical,
}

impl std::fmt::Display for LlcSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LlcSource::Sysfs => write!(f, "read from sysfs"),
            LlcSource::Environment => write!(f, "set by {LLC_ENV}"),
            LlcSource::Implausible { reported, cpus } => write!(
                f,
                "typical size assumed: sysfs reports {} MiB shared by {cpus} CPU(s), more per CPU \
                 than any processor has (a virtual machine shown its host's cache); set {LLC_ENV} \
                 to override",
                reported >> 20
            ),
            LlcSource::Typical => write!(f, "typical size assumed: sysfs not readable"),
        }
    }
}

/// Cache sizes of the host, in bytes, read from Linux sysfs (`/sys/devices/system/cpu/cpu0/
/// cache`); typical values (48 KiB, 1 MiB, [`TYPICAL_LLC`]) where they cannot be read. The
/// last-level cache can be set with [`LLC_ENV`] and is checked against
/// [`MAX_LLC_PER_CPU`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheSizes {
    /// Level-1 data cache of one core.
    pub l1d: usize,
    /// Level-2 cache of one core.
    pub l2: usize,
    /// Last-level cache (shared).
    pub llc: usize,
    /// Whether the sizes were read from the system (`false`: the typical values above).
    pub detected: bool,
    /// Where `llc` comes from.
    pub llc_source: LlcSource,
}

/// The host's cache sizes, read once (see [`CacheSizes`]). An [`LLC_ENV`] that is not a size
/// is reported on stderr once and ignored here; the solver's `prepare` and `ppwave bench`
/// refuse it
/// ([`llc_from_env`]).
pub fn cache_sizes() -> CacheSizes {
    static SIZES: OnceLock<CacheSizes> = OnceLock::new();
    *SIZES.get_or_init(|| {
        let sysfs = read_sysfs(std::path::Path::new("/sys/devices/system/cpu/cpu0/cache"));
        match llc_from_env() {
            Ok(Some(llc)) => CacheSizes {
                llc,
                llc_source: LlcSource::Environment,
                ..sysfs
            },
            Ok(None) => sysfs,
            Err(why) => {
                eprintln!(
                    "ppstencil: {why}; using {} bytes ({})",
                    sysfs.llc, sysfs.llc_source
                );
                sysfs
            }
        }
    })
}

/// The last-level cache size [`LLC_ENV`] sets: `None` where it is unset or empty, an
/// [`Error::InvalidParameter`](crate::Error::InvalidParameter) naming the value and the form
/// expected where it is not a positive size.
pub fn llc_from_env() -> crate::Result<Option<usize>> {
    std::env::var_os(LLC_ENV).map_or(Ok(None), |value| parse_llc(&value.to_string_lossy()))
}

/// [`llc_from_env`] of the value `text`.
fn parse_llc(text: &str) -> crate::Result<Option<usize>> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    match parse_size(text.trim()) {
        Some(bytes) if bytes > 0 => Ok(Some(bytes)),
        _ => Err(crate::Error::invalid(
            LLC_ENV,
            format!("{text:?}"),
            format!(
                "give the last-level cache as a positive number of bytes with an optional K, M \
                 or G suffix (e.g. {LLC_ENV}=32M), or unset it to use the detected size"
            ),
        )),
    }
}

/// The sizes under `dir` (sysfs' cache directory of one CPU), with the last-level cache
/// checked against [`MAX_LLC_PER_CPU`].
fn read_sysfs(dir: &std::path::Path) -> CacheSizes {
    let mut sizes = CacheSizes {
        l1d: 48 << 10,
        l2: 1 << 20,
        llc: TYPICAL_LLC,
        detected: false,
        llc_source: LlcSource::Typical,
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return sizes;
    };
    let read = |p: std::path::PathBuf| std::fs::read_to_string(p).ok();
    // The largest level-3 or level-4 cache and the CPUs that share it.
    let mut llc: Option<(usize, usize)> = None;
    for entry in entries.flatten() {
        let path = entry.path();
        let (Some(level), Some(kind), Some(size)) = (
            read(path.join("level")),
            read(path.join("type")),
            read(path.join("size")),
        ) else {
            continue;
        };
        let Some(bytes) = parse_size(size.trim()) else {
            continue;
        };
        match (level.trim(), kind.trim()) {
            ("1", "Data") => sizes.l1d = bytes,
            ("2", "Unified" | "Data") => sizes.l2 = bytes,
            ("3" | "4", "Unified") if llc.is_none_or(|(b, _)| bytes > b) => {
                let cpus = read(path.join("shared_cpu_list"))
                    .and_then(|list| count_cpus(list.trim()))
                    .unwrap_or(1);
                llc = Some((bytes, cpus));
            }
            _ => continue,
        }
        sizes.detected = true;
    }
    if let Some((reported, cpus)) = llc {
        if reported / cpus.max(1) > MAX_LLC_PER_CPU {
            sizes.llc_source = LlcSource::Implausible { reported, cpus };
        } else {
            sizes.llc = reported;
            sizes.llc_source = LlcSource::Sysfs;
        }
    }
    sizes
}

/// The number of CPUs in a sysfs CPU list such as `0-1`, `0,2-5`; `None` if it is not one.
fn count_cpus(list: &str) -> Option<usize> {
    list.split(',').try_fold(0, |n, part| {
        let (lo, hi) = match part.split_once('-') {
            Some((lo, hi)) => (lo.trim().parse::<usize>().ok()?, hi.trim().parse().ok()?),
            None => {
                let cpu = part.trim().parse::<usize>().ok()?;
                (cpu, cpu)
            }
        };
        (lo <= hi).then(|| n + hi - lo + 1)
    })
}

/// Parses cache sizes such as sysfs' `48K`, `1024K`, `32M` (units in either case, `KiB`,
/// `MiB`, `GiB` too); `None` for anything else or a size beyond `usize`.
fn parse_size(text: &str) -> Option<usize> {
    let (digits, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => text.split_at(i),
        None => (text, ""),
    };
    let n: usize = digits.parse().ok()?;
    let scale = match unit.trim().to_ascii_uppercase().as_str() {
        "" => 1,
        "K" | "KIB" => 1 << 10,
        "M" | "MIB" => 1 << 20,
        "G" | "GIB" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysfs_sizes_parse() {
        assert_eq!(parse_size("48K"), Some(48 * 1024));
        assert_eq!(parse_size("32M"), Some(32 * 1024 * 1024));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("12X"), None);
    }

    #[test]
    fn sizes_beyond_usize_and_other_units_are_refused() {
        assert_eq!(parse_size("32m"), Some(32 << 20));
        assert_eq!(parse_size("2GiB"), Some(2 << 30));
        assert_eq!(parse_size("99999999999999999999K"), None);
        assert_eq!(parse_size(&format!("{}G", usize::MAX / 2)), None);
        assert_eq!(parse_size("32 MB"), None);
        assert_eq!(parse_size("-1M"), None);
        assert_eq!(parse_size("1.5M"), None);
    }

    #[test]
    fn llc_override_takes_sizes_and_names_the_fix_otherwise() {
        assert_eq!(parse_llc("32M").ok(), Some(Some(32 << 20)));
        assert_eq!(parse_llc(" 8192K ").ok(), Some(Some(8 << 20)));
        assert_eq!(parse_llc("").ok(), Some(None));
        for bad in [
            "0",
            "0M",
            "lots",
            "32MB",
            "-4M",
            "1e6",
            "99999999999999999999",
        ] {
            let why = parse_llc(bad).expect_err(bad).to_string();
            assert!(
                why.contains(&format!("{LLC_ENV} = \"{bad}\"")),
                "{bad}: {why}"
            );
            assert!(why.contains("e.g. PPSTENCIL_LLC=32M"), "{bad}: {why}");
        }
    }

    #[test]
    fn cpu_lists_count() {
        assert_eq!(count_cpus("0"), Some(1));
        assert_eq!(count_cpus("0-1"), Some(2));
        assert_eq!(count_cpus("0,2-5,8"), Some(6));
        assert_eq!(count_cpus("3-1"), None);
        assert_eq!(count_cpus("a"), None);
        assert_eq!(count_cpus(""), None);
    }

    /// A sysfs cache directory with `(level, type, size, shared_cpu_list)` entries.
    fn fake_sysfs(name: &str, caches: &[(&str, &str, &str, &str)]) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("ppstencil-cache-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (i, (level, kind, size, shared)) in caches.iter().enumerate() {
            let index = dir.join(format!("index{i}"));
            std::fs::create_dir_all(&index).unwrap();
            for (file, text) in [("level", level), ("type", kind), ("size", size)] {
                std::fs::write(index.join(file), format!("{text}\n")).unwrap();
            }
            if !shared.is_empty() {
                std::fs::write(index.join("shared_cpu_list"), format!("{shared}\n")).unwrap();
            }
        }
        dir
    }

    #[test]
    fn sysfs_llc_is_taken_when_plausible_and_replaced_when_not() {
        let l12 = [("1", "Data", "48K", "0"), ("2", "Unified", "2048K", "0")];
        let with = |llc: (&'static str, &'static str, &'static str, &'static str)| {
            let mut v = l12.to_vec();
            v.push(("1", "Instruction", "64K", "0"));
            v.push(llc);
            v
        };
        // A 2-core slice of an EPYC: 32 MiB shared by 2 CPUs.
        let dir = fake_sysfs("epyc", &with(("3", "Unified", "32768K", "0-1")));
        let c = read_sysfs(&dir);
        assert_eq!((c.l1d, c.l2, c.llc), (48 << 10, 2 << 20, 32 << 20));
        assert_eq!(c.llc_source, LlcSource::Sysfs);
        assert!(c.detected);
        // 480 MiB shared by 2 vCPUs (the KVM guest of MAX_LLC_PER_CPU's doc): replaced.
        let dir = fake_sysfs("kvm", &with(("3", "Unified", "491520K", "0-1")));
        let c = read_sysfs(&dir);
        assert_eq!(c.llc, TYPICAL_LLC);
        assert_eq!(
            c.llc_source,
            LlcSource::Implausible {
                reported: 480 << 20,
                cpus: 2
            }
        );
        assert!(c
            .llc_source
            .to_string()
            .contains("480 MiB shared by 2 CPU(s)"));
        assert_eq!(c.l2, 2 << 20, "the other levels are still read");
        // The same cache shared by 64 CPUs is 7.5 MiB each: plausible.
        let dir = fake_sysfs("big", &with(("3", "Unified", "491520K", "0-63")));
        assert_eq!(read_sysfs(&dir).llc, 480 << 20);
        // No shared_cpu_list: one CPU assumed.
        let dir = fake_sysfs("noshare", &with(("3", "Unified", "16M", "")));
        assert_eq!(read_sysfs(&dir).llc, 16 << 20);
        // No level 3: the typical size.
        let dir = fake_sysfs("nol3", &l12);
        let c = read_sysfs(&dir);
        assert_eq!(
            (c.llc, c.llc_source, c.l2),
            (TYPICAL_LLC, LlcSource::Typical, 2 << 20)
        );
        // Not there at all.
        let c = read_sysfs(&dir.join("missing"));
        assert_eq!((c.llc, c.detected), (TYPICAL_LLC, false));
        for name in ["epyc", "kvm", "big", "noshare", "nol3"] {
            let _ = std::fs::remove_dir_all(fake_sysfs(name, &[]));
        }
    }

    #[test]
    fn cache_sizes_are_ordered() {
        let c = cache_sizes();
        assert!(c.l1d > 0 && c.l1d <= c.l2 && c.l2 <= c.llc, "{c:?}");
    }
}
