//! Cache sizes of the host (read once from Linux sysfs), which size rayon's tasks and decide
//! whether generated row loops prefetch and stream. Nothing here runs kernels.

use std::sync::OnceLock;

/// Cache sizes of the host, in bytes, read from Linux sysfs (`/sys/devices/system/cpu/cpu0/
/// cache`); typical values (48 KiB, 1 MiB, 32 MiB) where they cannot be read.
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
}

/// The host's cache sizes, read once (see [`CacheSizes`]).
pub fn cache_sizes() -> CacheSizes {
    static SIZES: OnceLock<CacheSizes> = OnceLock::new();
    *SIZES.get_or_init(read_cache_sizes)
}

fn read_cache_sizes() -> CacheSizes {
    let mut sizes = CacheSizes {
        l1d: 48 << 10,
        l2: 1 << 20,
        llc: 32 << 20,
        detected: false,
    };
    let dir = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return sizes;
    };
    let read = |p: std::path::PathBuf| std::fs::read_to_string(p).ok();
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
            ("3" | "4", "Unified") => sizes.llc = sizes.llc.max(bytes),
            _ => continue,
        }
        sizes.detected = true;
    }
    sizes
}

/// Parses sysfs cache sizes such as `48K`, `1024K`, `32M`.
fn parse_size(text: &str) -> Option<usize> {
    let (digits, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => text.split_at(i),
        None => (text, ""),
    };
    let n: usize = digits.parse().ok()?;
    let scale = match unit.trim() {
        "" => 1,
        "K" | "KiB" => 1 << 10,
        "M" | "MiB" => 1 << 20,
        "G" | "GiB" => 1 << 30,
        _ => return None,
    };
    Some(n * scale)
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
    fn cache_sizes_are_ordered() {
        let c = cache_sizes();
        assert!(c.l1d > 0 && c.l1d <= c.l2 && c.l2 <= c.llc, "{c:?}");
    }
}
