//! Reading the files a run is given (`--config`, `--receiver-file`, `--shots`,
//! `--velocity`) with bounds: each is opened without blocking (a FIFO with no writer does not
//! hang the run), must be a regular file (not `/dev/zero`, a FIFO, a directory), and is read
//! only up to a limit (text files) or after its `.npy` header's promise has been checked
//! against the file's length and the memory available (models).

use crate::BadInput;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The largest text input read (a config, receiver or shot file): 64 MiB.
pub const TEXT_LIMIT: u64 = 64 << 20;

/// What kind of file `meta` describes, in words, for one that is not a regular file.
fn kind(meta: &std::fs::Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_char_device() {
        "a character device (such as /dev/zero)"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Opens `path` (given as `flag`) for reading without blocking and checks it is a regular
/// file; returns it with its length. Errors are [`BadInput`] naming the flag, the path and
/// the fix.
pub fn open_regular(flag: &str, path: &Path) -> anyhow::Result<(File, u64)> {
    let shown = path.display();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| {
            let what = if e.kind() == std::io::ErrorKind::NotFound {
                "cannot read it: no such file".to_string()
            } else {
                format!("cannot read it ({e})")
            };
            BadInput(format!(
                "{flag} {shown}: {what}; give an existing regular file"
            ))
        })?;
    let meta = file
        .metadata()
        .map_err(|e| BadInput(format!("{flag} {shown}: cannot read it ({e})")))?;
    if !meta.is_file() {
        return Err(BadInput(format!(
            "{flag} {shown}: is {}, not a regular file; give a file saved on disk",
            kind(&meta)
        ))
        .into());
    }
    Ok((file, meta.len()))
}

/// Reads `path` (given as `flag`, holding `what`) as UTF-8 text of at most [`TEXT_LIMIT`]
/// bytes.
pub fn read_text(flag: &str, path: &Path, what: &str) -> anyhow::Result<String> {
    let shown = path.display();
    let (file, len) = open_regular(flag, path)?;
    let too_big = || {
        BadInput(format!(
            "{flag} {shown}: is larger than {} MiB, too large for {what}; give the right file",
            TEXT_LIMIT >> 20
        ))
    };
    if len > TEXT_LIMIT {
        return Err(too_big().into());
    }
    let mut bytes = Vec::new();
    file.take(TEXT_LIMIT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| BadInput(format!("{flag} {shown}: cannot read it ({e})")))?;
    if bytes.len() as u64 > TEXT_LIMIT {
        return Err(too_big().into());
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        BadInput(format!(
            "{flag} {shown}: is not UTF-8 text (line {line}, byte {at} is not valid UTF-8); \
             give {what} saved as UTF-8 text"
        ))
        .into()
    })
}

/// What an `.npy` header promises: the shape and the bytes per value, and where the data
/// starts. `None` when the header cannot be read this simply (the reader then says why).
fn npy_promise(head: &[u8]) -> Option<(Vec<usize>, usize, usize)> {
    let (len_bytes, start): (usize, usize) = match head.get(6)? {
        1 => (2, 10),
        2 | 3 => (4, 12),
        _ => return None,
    };
    let mut le = [0u8; 4];
    le[..len_bytes].copy_from_slice(head.get(8..8 + len_bytes)?);
    let data = start.checked_add(u32::from_le_bytes(le) as usize)?;
    let text = std::str::from_utf8(head.get(start..data)?).ok()?;
    let after = |key: &str| text.split_once(key).map(|(_, rest)| rest);
    let descr = after("'descr':")?.trim_start().strip_prefix('\'')?;
    let size: usize = descr
        .get(2..)?
        .split('\'')
        .next()?
        .parse()
        .ok()
        .filter(|_| descr.as_bytes().get(1) == Some(&b'f'))?;
    let dims = after("'shape':")?.trim_start().strip_prefix('(')?;
    let dims = dims.split(')').next()?;
    let shape = dims
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| d.parse().ok())
        .collect::<Option<Vec<usize>>>()?;
    Some((shape, size, data))
}

/// Checks `--velocity`-like `path` (given as `flag`) before the reader loads it whole: a
/// regular file, starting with the NumPy magic, whose header's shape and value size add up
/// to exactly the file's length, and that fits in the memory available.
pub fn check_npy(flag: &str, path: &Path) -> anyhow::Result<()> {
    let shown = path.display();
    let (file, len) = open_regular(flag, path)?;
    let mut head = Vec::new();
    file.take(1 << 16)
        .read_to_end(&mut head)
        .map_err(|e| BadInput(format!("{flag} {shown}: cannot read it ({e})")))?;
    if !head.starts_with(b"\x93NUMPY") {
        return Err(BadInput(format!(
            "{flag} {shown}: not an .npy file (it does not start with the NumPy magic \
             string); save the array with numpy.save"
        ))
        .into());
    }
    if let Some(avail) = crate::run::available_memory() {
        if len > avail / 2 {
            return Err(BadInput(format!(
                "{flag} {shown}: is {:.1} GiB, more than half the {:.1} GiB of memory \
                 available; use a smaller model",
                len as f64 / (1u64 << 30) as f64,
                avail as f64 / (1u64 << 30) as f64
            ))
            .into());
        }
    }
    if let Some((shape, size, data)) = npy_promise(&head) {
        let want = shape
            .iter()
            .try_fold(size, |n, &d| n.checked_mul(d))
            .and_then(|n| n.checked_add(data));
        if want != Some(len as usize) {
            let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
            return Err(BadInput(format!(
                "{flag} {shown}: its header promises a ({}) array of {size}-byte values \
                 ({} bytes with the header), but the file holds {len} bytes; it is truncated \
                 or not that array: save it again with numpy.save",
                dims.join(", "),
                want.map_or_else(|| "more than can be addressed".into(), |w| w.to_string())
            ))
            .into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_npy_promise_is_read_from_the_header() {
        let dict = b"{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }\n";
        let mut head = b"\x93NUMPY\x01\x00".to_vec();
        head.extend_from_slice(&(dict.len() as u16).to_le_bytes());
        head.extend_from_slice(dict);
        assert_eq!(npy_promise(&head), Some((vec![3, 4], 8, 10 + dict.len())));
        let dict = b"{'descr': '<f4', 'fortran_order': False, 'shape': (7,), }\n";
        let mut head = b"\x93NUMPY\x01\x00".to_vec();
        head.extend_from_slice(&(dict.len() as u16).to_le_bytes());
        head.extend_from_slice(dict);
        assert_eq!(npy_promise(&head), Some((vec![7], 4, 10 + dict.len())));
        assert_eq!(npy_promise(b"\x93NUMPY\x09\x00"), None);
    }
}
