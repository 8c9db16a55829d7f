//! Host fields to and from NumPy `.npy` files.
//!
//! [`write_npy`] writes a [`HostField`] of any dimensionality `D` (1, 2 or 3) as a
//! `D`-dimensional, C-order, little-endian array of its element type (`<f4` or `<f8`), shape
//! in the header, readable with `numpy.load`. [`read_npy`] reads a `D`-dimensional C-order
//! float32 or float64 `.npy` file (either byte order) into a `D`-dimensional field (`D` from
//! the requested type) and converts it to the requested element type; a file of another
//! dimensionality is an error naming both. Errors ([`Error::File`]) name the file and the
//! problem.
//!
//! The format is small enough to handle here without a dependency: a magic string, a version,
//! a header length and a Python dict literal such as
//! `{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }`, then the raw data
//! ([format specification](https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html)).
//!
//! ```
//! use ppstencil::{io, HostField, ScalarField};
//! let path = std::env::temp_dir().join(format!("ppstencil-doc-{}.npy", std::process::id()));
//! let f: HostField<f32> = ScalarField::from_fn(2, 3, |z, x| (10 * z + x) as f32)?;
//! io::write_npy(&path, &f)?;
//! let g: HostField<f64> = io::read_npy(&path)?;
//! assert_eq!(g.shape(), [2, 3]);
//! assert_eq!(g[(1, 2)], 12.0);
//! std::fs::remove_file(&path).ok();
//! # Ok::<(), ppstencil::Error>(())
//! ```

use crate::{Error, HostField, Real, Result};
use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::Path;

const MAGIC: &[u8] = b"\x93NUMPY";

fn file_error(path: &Path, problem: impl Into<String>, source: Option<std::io::Error>) -> Error {
    Error::File {
        path: path.display().to_string(),
        problem: problem.into(),
        source,
    }
}

/// The npy type string of `T` (`"<f4"` or `"<f8"`).
fn descr<T: Real>() -> Result<&'static str> {
    match T::NAME {
        "f32" => Ok("<f4"),
        "f64" => Ok("<f8"),
        other => Err(Error::invalid(
            "npy element type",
            other,
            "only f32 and f64 fields can be written",
        )),
    }
}

/// A shape as a Python tuple: `(2, 3)`, `(7,)`.
fn tuple(shape: &[usize]) -> String {
    let parts: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    if shape.len() == 1 {
        format!("({},)", parts[0])
    } else {
        format!("({})", parts.join(", "))
    }
}

/// The complete header (magic, version 1.0, length, dict, padding) for an array of `shape`.
fn header(descr: &str, shape: &[usize]) -> Vec<u8> {
    let dict = format!(
        "{{'descr': '{descr}', 'fortran_order': False, 'shape': {}, }}",
        tuple(shape)
    );
    // magic (6) + version (2) + header length (2) + dict + padding + '\n', a multiple of 64.
    let unpadded = MAGIC.len() + 4 + dict.len() + 1;
    let total = unpadded.div_ceil(64) * 64;
    let hlen = total - MAGIC.len() - 4;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    // The dict of a shape of at most 3 axes is far below 65535 bytes: version 1.0 always fits.
    out.extend_from_slice(&(hlen as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out.resize(total - 1, b' ');
    out.push(b'\n');
    out
}

/// Writes `field` to `path` as a `D`-dimensional C-order little-endian `.npy` array of its
/// element type (float32 for `HostField<f32, D>`, float64 for `HostField<f64, D>`), replacing
/// any existing file.
pub fn write_npy<T: Real, const D: usize>(
    path: impl AsRef<Path>,
    field: &HostField<T, D>,
) -> Result<()> {
    let path = path.as_ref();
    let descr = descr::<T>()?;
    let io_err = |what: &str, e| file_error(path, what.to_string(), Some(e));
    let file = File::create(path).map_err(|e| io_err("cannot create the file", e))?;
    let mut w = BufWriter::new(file);
    w.write_all(&header(descr, &field.shape()))
        .map_err(|e| io_err("cannot write the npy header", e))?;
    let mut bytes = Vec::with_capacity(field.nx() * 8);
    for row in field.as_slice().chunks(field.nx()) {
        bytes.clear();
        for &v in row {
            if descr == "<f4" {
                bytes.extend_from_slice(&(v.to_f64() as f32).to_le_bytes());
            } else {
                bytes.extend_from_slice(&v.to_f64().to_le_bytes());
            }
        }
        w.write_all(&bytes)
            .map_err(|e| io_err("cannot write the data", e))?;
    }
    w.flush().map_err(|e| io_err("cannot write the data", e))?;
    Ok(())
}

/// What the header of an npy file says.
#[derive(Debug, PartialEq)]
struct Header {
    little_endian: bool,
    itemsize: usize,
    shape: Vec<usize>,
}

/// A value of the header dict: a string, a boolean or a tuple of integers.
#[derive(Debug, PartialEq)]
enum Value {
    Str(String),
    Bool(bool),
    Tuple(Vec<usize>),
}

/// Parses the Python dict literal of an npy header; `Err` holds the problem.
fn parse_dict(text: &str) -> std::result::Result<Vec<(String, Value)>, String> {
    let mut chars = text.trim().chars().peekable();
    let skip_ws = |c: &mut std::iter::Peekable<std::str::Chars>| {
        while c.peek().is_some_and(|ch| ch.is_whitespace()) {
            c.next();
        }
    };
    let expect = |c: &mut std::iter::Peekable<std::str::Chars>, want: char| {
        skip_ws(c);
        match c.next() {
            Some(ch) if ch == want => Ok(()),
            other => Err(format!("expected `{want}`, found {other:?}")),
        }
    };
    let string = |c: &mut std::iter::Peekable<std::str::Chars>| {
        skip_ws(c);
        let quote = match c.next() {
            Some(q @ ('\'' | '"')) => q,
            other => return Err(format!("expected a quoted string, found {other:?}")),
        };
        let mut s = String::new();
        for ch in c.by_ref() {
            if ch == quote {
                return Ok(s);
            }
            s.push(ch);
        }
        Err("unterminated string".to_string())
    };
    expect(&mut chars, '{')?;
    let mut entries = Vec::new();
    loop {
        skip_ws(&mut chars);
        if chars.peek() == Some(&'}') {
            break;
        }
        let key = string(&mut chars)?;
        expect(&mut chars, ':')?;
        skip_ws(&mut chars);
        let value = match chars.peek() {
            Some('\'' | '"') => Value::Str(string(&mut chars)?),
            Some('(') => {
                chars.next();
                let mut inner = String::new();
                for ch in chars.by_ref() {
                    if ch == ')' {
                        break;
                    }
                    inner.push(ch);
                }
                let dims = inner
                    .split(',')
                    .map(str::trim)
                    .filter(|d| !d.is_empty())
                    .map(|d| {
                        d.trim_end_matches('L')
                            .parse::<usize>()
                            .map_err(|_| format!("bad dimension `{d}` in the shape"))
                    })
                    .collect::<std::result::Result<Vec<_>, _>>()?;
                Value::Tuple(dims)
            }
            _ => {
                let word: String =
                    std::iter::from_fn(|| chars.next_if(|ch| ch.is_alphanumeric() || *ch == '_'))
                        .collect();
                match word.as_str() {
                    "True" => Value::Bool(true),
                    "False" => Value::Bool(false),
                    _ => return Err(format!("unexpected value `{word}` for key `{key}`")),
                }
            }
        };
        entries.push((key, value));
        skip_ws(&mut chars);
        match chars.next() {
            Some(',') => {}
            Some('}') => break,
            other => return Err(format!("expected `,` or `}}`, found {other:?}")),
        }
    }
    Ok(entries)
}

/// Interprets the header dict; `Err` holds the problem.
fn parse_header(text: &str) -> std::result::Result<Header, String> {
    let entries = parse_dict(text).map_err(|e| format!("malformed npy header ({e})"))?;
    let get = |k: &str| entries.iter().find(|(key, _)| key == k).map(|(_, v)| v);
    let descr = match get("descr") {
        Some(Value::Str(d)) => d.as_str(),
        _ => return Err("the npy header has no 'descr' string".to_string()),
    };
    let (little_endian, itemsize) = match descr {
        "<f4" | "=f4" => (true, 4),
        "<f8" | "=f8" => (true, 8),
        ">f4" => (false, 4),
        ">f8" => (false, 8),
        other => {
            return Err(format!(
                "not a float array: dtype '{other}'; only float32 ('<f4') and float64 ('<f8') \
                 are supported (convert with arr.astype(numpy.float32))"
            ))
        }
    };
    match get("fortran_order") {
        Some(Value::Bool(false)) => {}
        Some(Value::Bool(true)) => {
            return Err(
                "the array is in Fortran (column-major) order; save a C-order array \
                 (numpy.save(path, numpy.ascontiguousarray(arr)))"
                    .to_string(),
            )
        }
        _ => return Err("the npy header has no 'fortran_order' boolean".to_string()),
    }
    let shape = match get("shape") {
        Some(Value::Tuple(s)) => s.clone(),
        _ => return Err("the npy header has no 'shape' tuple".to_string()),
    };
    Ok(Header {
        little_endian,
        itemsize,
        shape,
    })
}

/// Reads a `D`-dimensional C-order float32 or float64 `.npy` file into a host field of
/// element type `T` (float64 data read into `f32` is rounded to nearest).
///
/// Errors name the file and the problem: missing or unreadable, not an npy file, not
/// `D`-dimensional, not a float array, Fortran order, or fewer data bytes than the shape needs.
pub fn read_npy<T: Real, const D: usize>(path: impl AsRef<Path>) -> Result<HostField<T, D>> {
    let path = path.as_ref();
    let mut file = File::open(path).map_err(|e| {
        let what = if e.kind() == std::io::ErrorKind::NotFound {
            "no such file"
        } else {
            "cannot open the file"
        };
        file_error(path, what, Some(e))
    })?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| file_error(path, "cannot read the file", Some(e)))?;
    let not_npy = || {
        file_error(
            path,
            "not an .npy file (it does not start with the NumPy magic string \\x93NUMPY)",
            None,
        )
    };
    if bytes.len() < MAGIC.len() + 2 || &bytes[..MAGIC.len()] != MAGIC {
        return Err(not_npy());
    }
    let major = bytes[MAGIC.len()];
    let (len_bytes, start) = match major {
        1 => (2, MAGIC.len() + 4),
        2 | 3 => (4, MAGIC.len() + 6),
        v => {
            return Err(file_error(
                path,
                format!("unsupported npy format version {v} (1, 2 and 3 are supported)"),
                None,
            ))
        }
    };
    if bytes.len() < start {
        return Err(not_npy());
    }
    let mut len_le = [0u8; 4];
    len_le[..len_bytes].copy_from_slice(&bytes[MAGIC.len() + 2..start]);
    let hlen = u32::from_le_bytes(len_le) as usize;
    let data_start = start
        .checked_add(hlen)
        .filter(|&end| end <= bytes.len())
        .ok_or_else(|| file_error(path, "truncated npy header", None))?;
    let text = std::str::from_utf8(&bytes[start..data_start])
        .map_err(|_| file_error(path, "the npy header is not text", None))?;
    let h = parse_header(text).map_err(|problem| file_error(path, problem, None))?;
    let shown = tuple(&h.shape);
    let Ok(shape) = <[usize; D]>::try_from(h.shape.as_slice()) else {
        let n = h.shape.len();
        return Err(file_error(
            path,
            format!(
                "not a {D}D array: shape {shown} has {n} dimension{}; a {D}D field is {}",
                if n == 1 { "" } else { "s" },
                ["(n,)", "(nz, nx)", "(nz, ny, nx)"][D.clamp(1, 3) - 1]
            ),
            None,
        ));
    };
    let count = shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .ok_or_else(|| file_error(path, format!("shape {shown} is too large"), None))?;
    if count == 0 {
        return Err(file_error(
            path,
            format!("empty array of shape {shown}; a field needs at least one point"),
            None,
        ));
    }
    let data = &bytes[data_start..];
    let need = count.saturating_mul(h.itemsize);
    if data.len() != need {
        return Err(file_error(
            path,
            format!(
                "shape {shown} needs {need} data bytes but the file has {}",
                data.len()
            ),
            None,
        ));
    }
    let values: Vec<T> = data
        .chunks_exact(h.itemsize)
        .map(|c| {
            let v = match (h.itemsize, h.little_endian) {
                (4, true) => f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64,
                (4, false) => f32::from_be_bytes([c[0], c[1], c[2], c[3]]) as f64,
                (_, true) => f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]),
                (_, false) => f64::from_be_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]),
            };
            T::lit(v)
        })
        .collect();
    HostField::from_vec_shape(shape, values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ScalarField;
    use std::path::PathBuf;

    fn tmp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ppstencil-io-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        dir.join(name)
    }

    /// An npy file assembled by hand from the format specification.
    fn hand_made(dict: &str, data: &[u8]) -> Vec<u8> {
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend_from_slice(&(dict.len() as u16 + 1).to_le_bytes());
        b.extend_from_slice(dict.as_bytes());
        b.push(b'\n');
        b.extend_from_slice(data);
        b
    }

    fn read_err(name: &str, bytes: &[u8]) -> String {
        let p = tmp(name);
        std::fs::write(&p, bytes).expect("write");
        let e = read_npy::<f32, 2>(&p).expect_err("must fail").to_string();
        assert!(e.contains(name), "`{e}` should name the file");
        e
    }

    #[test]
    fn written_file_matches_the_format_byte_for_byte() {
        let f: HostField<f32> =
            ScalarField::from_vec(2, 3, vec![1.0, -2.0, 0.5, 3.0, 4.0, 5.0]).expect("field");
        let p = tmp("layout.npy");
        write_npy(&p, &f).expect("write");
        let b = std::fs::read(&p).expect("read");
        assert_eq!(&b[..8], b"\x93NUMPY\x01\x00");
        let hlen = u16::from_le_bytes([b[8], b[9]]) as usize;
        assert_eq!((10 + hlen) % 64, 0, "data must start 64-byte aligned");
        let text = std::str::from_utf8(&b[10..10 + hlen]).expect("utf8");
        assert!(text.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"));
        assert!(text.ends_with('\n'));
        assert_eq!(b.len(), 10 + hlen + 6 * 4);
        assert_eq!(&b[10 + hlen + 4..10 + hlen + 8], &(-2.0f32).to_le_bytes());
        assert_eq!(&b[b.len() - 4..], &5.0f32.to_le_bytes());
    }

    #[test]
    fn one_and_three_dimensional_fields_round_trip_with_their_shape() {
        let f = HostField::<f32, 3>::from_shape_fn([2, 3, 4], |[z, y, x]| {
            (100 * z + 10 * y + x) as f32
        })
        .expect("field");
        let p = tmp("three.npy");
        write_npy(&p, &f).expect("write");
        let b = std::fs::read(&p).expect("read");
        let hlen = u16::from_le_bytes([b[8], b[9]]) as usize;
        let text = std::str::from_utf8(&b[10..10 + hlen]).expect("utf8");
        assert!(text.contains("'shape': (2, 3, 4), }"), "{text}");
        let g: HostField<f64, 3> = read_npy(&p).expect("read 3D");
        assert_eq!(
            (g.shape(), g[(1, 2, 3)], g[[0, 1, 2]]),
            ([2, 3, 4], 123.0, 12.0)
        );
        // A 3D file is not a 2D field, and the error says both.
        let e = read_npy::<f32, 2>(&p).expect_err("3D as 2D").to_string();
        assert!(
            e.contains("not a 2D array: shape (2, 3, 4) has 3 dimensions"),
            "{e}"
        );
        let u = HostField::<f64, 1>::from_shape_fn([5], |[i]| i as f64 * 0.5).expect("field");
        let p1 = tmp("one.npy");
        write_npy(&p1, &u).expect("write");
        let b = std::fs::read(&p1).expect("read");
        let hlen = u16::from_le_bytes([b[8], b[9]]) as usize;
        assert!(std::str::from_utf8(&b[10..10 + hlen])
            .expect("utf8")
            .contains("'shape': (5,), }"));
        let v: HostField<f64, 1> = read_npy(&p1).expect("read 1D");
        assert_eq!((v.shape(), v[4], v[(3,)]), ([5], 2.0, 1.5));
        let e = read_npy::<f32, 3>(&p1).expect_err("1D as 3D").to_string();
        assert!(
            e.contains("not a 3D array: shape (5,) has 1 dimension"),
            "{e}"
        );
    }

    #[test]
    fn round_trips_and_converts_between_f32_and_f64() {
        let f: HostField<f64> =
            ScalarField::from_fn(3, 5, |z, x| 0.1 * z as f64 - 1e-3 * x as f64).expect("field");
        let p = tmp("round.npy");
        write_npy(&p, &f).expect("write");
        let same: HostField<f64> = read_npy(&p).expect("read f64");
        assert_eq!(same.as_slice(), f.as_slice());
        let narrowed: HostField<f32> = read_npy(&p).expect("read as f32");
        let expect: Vec<f32> = f.as_slice().iter().map(|&v| v as f32).collect();
        assert_eq!(narrowed.as_slice(), expect.as_slice());
        let p32 = tmp("round32.npy");
        write_npy(&p32, &narrowed).expect("write f32");
        let widened: HostField<f64> = read_npy(&p32).expect("read f32 as f64");
        let expect: Vec<f64> = expect.iter().map(|&v| v as f64).collect();
        assert_eq!(widened.as_slice(), expect.as_slice());
    }

    #[test]
    fn reads_numpy_variants_big_endian_and_version_2() {
        let data: Vec<u8> = [1.5f64, -2.0]
            .iter()
            .flat_map(|v| v.to_be_bytes())
            .collect();
        let p = tmp("be.npy");
        let dict = "{'descr': '>f8', 'fortran_order': False, 'shape': (1, 2), }";
        std::fs::write(&p, hand_made(dict, &data)).expect("write");
        let f: HostField<f64> = read_npy(&p).expect("big-endian f8");
        assert_eq!(f.as_slice(), &[1.5, -2.0]);

        let mut v2 = b"\x93NUMPY\x02\x00".to_vec();
        let dict = "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2, 1)}\n";
        v2.extend_from_slice(&(dict.len() as u32).to_le_bytes());
        v2.extend_from_slice(dict.as_bytes());
        v2.extend(3.0f32.to_le_bytes().into_iter().chain(4.0f32.to_le_bytes()));
        let p = tmp("v2.npy");
        std::fs::write(&p, v2).expect("write");
        let f: HostField<f32> = read_npy(&p).expect("version 2");
        assert_eq!((f.shape(), f.as_slice()), ([2, 1], &[3.0f32, 4.0][..]));
    }

    #[test]
    fn errors_name_the_file_and_the_problem() {
        let missing = tmp("does-not-exist.npy");
        let e = read_npy::<f32, 2>(&missing)
            .expect_err("missing")
            .to_string();
        assert!(
            e.contains("does-not-exist.npy") && e.contains("no such file"),
            "{e}"
        );

        let e = read_err("text.npy", b"nz,nx\n1,2\n");
        assert!(e.contains("not an .npy file"), "{e}");

        let f4 = 1.0f32.to_le_bytes().repeat(6);
        let e = read_err(
            "one_d.npy",
            &hand_made(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }",
                &f4,
            ),
        );
        assert!(e.contains("not a 2D array") && e.contains("(6,)"), "{e}");

        let e = read_err(
            "three_d.npy",
            &hand_made(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 3), }",
                &f4,
            ),
        );
        assert!(
            e.contains("not a 2D array") && e.contains("3 dimensions"),
            "{e}"
        );

        let e = read_err(
            "ints.npy",
            &hand_made(
                "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }",
                &f4,
            ),
        );
        assert!(e.contains("not a float array") && e.contains("<i4"), "{e}");

        let e = read_err(
            "fortran.npy",
            &hand_made(
                "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
                &f4,
            ),
        );
        assert!(e.contains("Fortran"), "{e}");

        let e = read_err(
            "short.npy",
            &hand_made(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }",
                &f4,
            ),
        );
        assert!(e.contains("needs 32 data bytes but the file has 24"), "{e}");

        let e = read_err("garbled.npy", &hand_made("{'descr' '<f4'}", &f4));
        assert!(e.contains("malformed npy header"), "{e}");
    }

    #[test]
    fn write_to_a_missing_directory_names_the_file() {
        let f: HostField<f32> = ScalarField::new(5, 5).expect("field");
        let p = tmp("no-such-dir").join("x.npy");
        let e = write_npy(&p, &f).expect_err("must fail");
        assert!(e.to_string().contains("x.npy") && e.to_string().contains("cannot create"));
        assert!(
            std::error::Error::source(&e).is_some(),
            "the OS error is the source"
        );
    }
}
