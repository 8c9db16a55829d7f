//! Module images checked before they reach a driver: PTX text (CUDA) and AMDGPU code objects
//! (HIP). A driver is given only a pointer, so an image must be complete and of the right
//! kind here: its kernel names are read (for the registry), and what is not loadable is an
//! error naming the problem and the fix. Pure functions of the bytes; no driver calls.

use crate::{Error, Result};

/// A checked image: its kernels and the architecture it targets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Image {
    /// The kernel (entry) names it defines.
    pub(crate) kernels: Vec<String>,
    /// `sm_70` (PTX `.target`) or `gfx90a` (code object), when known.
    pub(crate) arch: String,
}

fn bad(what: &str, problem: impl Into<String>) -> Error {
    Error::invalid(what, "image", Into::<String>::into(problem))
}

#[cfg(feature = "cuda")]
/// A PTX module: text up to optional trailing NULs, with `.version`, `.target` and `.entry`
/// directives. cubin and fatbin images are refused (they contain NUL bytes a PTX reader would
/// stop at).
pub(crate) fn ptx(image: &[u8]) -> Result<Image> {
    const FIX: &str = "ppstencil loads PTX text: compile with nvcc --ptx or clang -S \
                       (kernels_gen::build does)";
    if image.starts_with(b"\x7fELF") {
        return Err(bad("CUDA module", format!("a cubin (ELF), not PTX; {FIX}")));
    }
    if image.starts_with(&0xBA55_ED50u32.to_le_bytes()) {
        return Err(bad("CUDA module", format!("a fatbin, not PTX; {FIX}")));
    }
    let text = image.strip_suffix(b"\0").unwrap_or(image);
    let text = text
        .iter()
        .rposition(|&b| b != 0)
        .map_or(&text[..0], |e| &text[..=e]);
    if text.is_empty() {
        return Err(bad("CUDA module", format!("empty; {FIX}")));
    }
    if text.contains(&0) {
        return Err(bad(
            "CUDA module",
            format!("contains NUL bytes inside: not PTX text; {FIX}"),
        ));
    }
    let text = std::str::from_utf8(text)
        .map_err(|e| bad("CUDA module", format!("not UTF-8 text ({e}); {FIX}")))?;
    if !text.contains(".version") || !text.contains(".target") {
        return Err(bad(
            "CUDA module",
            format!("no .version / .target directive: not PTX; {FIX}"),
        ));
    }
    let arch = text
        .split(".target")
        .nth(1)
        .and_then(|t| {
            t.split(|c: char| c.is_whitespace() || c == ',')
                .find(|w| !w.is_empty())
        })
        .unwrap_or("")
        .to_string();
    let kernels = text
        .split(".entry")
        .skip(1)
        .filter_map(|rest| rest.split('(').next())
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .collect();
    Ok(Image { kernels, arch })
}

#[cfg(feature = "hip")]
/// AMDGPU code-object architectures by `EF_AMDGPU_MACH` (the low byte of `e_flags`).
const GFX: &[(u32, &str)] = &[
    (0x2c, "gfx900"),
    (0x2f, "gfx906"),
    (0x30, "gfx908"),
    (0x3f, "gfx90a"),
    (0x40, "gfx940"),
    (0x4c, "gfx942"),
    (0x36, "gfx1030"),
    (0x41, "gfx1100"),
];

#[cfg(feature = "hip")]
fn u16_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?) as u64)
}
#[cfg(feature = "hip")]
fn u32_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?) as u64)
}
#[cfg(feature = "hip")]
fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

#[cfg(feature = "hip")]
/// An AMDGPU code object (ELF64, `e_machine` 224): every size its headers declare must lie
/// inside `image`; kernels are the `NAME.kd` symbols.
pub(crate) fn code_object(image: &[u8]) -> Result<Image> {
    const FIX: &str = "pass the bytes of a whole code object (kernels_gen::build writes them)";
    let what = "HIP code object";
    if image.len() < 64 || !image.starts_with(b"\x7fELF") || image[4] != 2 || image[5] != 1 {
        return Err(bad(
            what,
            format!("{} bytes, not a 64-bit ELF file; {FIX}", image.len()),
        ));
    }
    let truncated = |need: u64| {
        bad(
            what,
            format!(
                "truncated: its headers declare {need} bytes, the image has {}; {FIX}",
                image.len()
            ),
        )
    };
    let get = |f: fn(&[u8], usize) -> Option<u64>, at: u64| {
        usize::try_from(at)
            .ok()
            .and_then(|at| f(image, at))
            .ok_or_else(|| truncated(at + 8))
    };
    if get(u16_at, 18)? != 224 {
        return Err(bad(
            what,
            format!("not for an AMD GPU (e_machine is not 224); {FIX}"),
        ));
    }
    let mach = get(u32_at, 48)? as u32 & 0xff;
    let arch = GFX.iter().find(|(m, _)| *m == mach).map_or_else(
        || format!("gfx (EF_AMDGPU_MACH {mach:#x})"),
        |(_, n)| n.to_string(),
    );
    let (phoff, shoff) = (get(u64_at, 32)?, get(u64_at, 40)?);
    let (phentsize, phnum) = (get(u16_at, 54)?, get(u16_at, 56)?);
    let (shentsize, shnum) = (get(u16_at, 58)?, get(u16_at, 60)?);
    let end = (phoff + phentsize * phnum).max(shoff + shentsize * shnum);
    if end > image.len() as u64 {
        return Err(truncated(end));
    }
    let sec = |k: u64| shoff + k * shentsize;
    let mut kernels = Vec::new();
    for k in 0..shnum {
        let (ty, off, size) = (
            get(u32_at, sec(k) + 4)?,
            get(u64_at, sec(k) + 24)?,
            get(u64_at, sec(k) + 32)?,
        );
        if ty != 8 && off + size > image.len() as u64 {
            return Err(truncated(off + size));
        }
        if ty != 2 && ty != 11 {
            continue; // only SHT_SYMTAB / SHT_DYNSYM
        }
        let strtab = get(u64_at, sec(get(u32_at, sec(k) + 40)?) + 24)?;
        for s in (0..size / 24).map(|s| off + s * 24) {
            let start = (strtab + get(u32_at, s)?) as usize;
            let name = image[start.min(image.len())..]
                .split(|&b| b == 0)
                .next()
                .unwrap_or_default();
            if let Some(n) = name.strip_suffix(b".kd") {
                let n = String::from_utf8_lossy(n).into_owned();
                if !kernels.contains(&n) {
                    kernels.push(n);
                }
            }
        }
    }
    Ok(Image { kernels, arch })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "cuda")]
    const PTX: &str = "//\n.version 6.0\n.target sm_70\n.address_size 64\n\n\
        .visible .entry a_f32(\n\t.param .u64 a_f32_param_0\n)\n{\n\tret;\n}\n\
        .visible .entry b_f64(\n\t.param .f64 b_f64_param_0\n)\n{\n\tret;\n}\n";

    #[cfg(feature = "cuda")]
    #[test]
    fn ptx_names_entries_and_target() {
        let img = ptx(PTX.as_bytes()).expect("ptx");
        assert_eq!(img.kernels, ["a_f32", "b_f64"]);
        assert_eq!(img.arch, "sm_70");
        let mut with_nul = PTX.as_bytes().to_vec();
        with_nul.push(0);
        assert_eq!(ptx(&with_nul).expect("NUL-terminated"), img);
    }

    #[cfg(feature = "cuda")]
    #[test]
    fn ptx_refuses_binaries_and_junk() {
        for (img, says) in [
            (&b"\x7fELF\x02\x01\x01\0\0\0"[..], "cubin"),
            (&[0x50, 0xed, 0x55, 0xba, 1, 0, 0x10, 0][..], "fatbin"),
            (&b""[..], "empty"),
            (&b".version 6.0\0.target sm_70"[..], "NUL"),
            (&b"hello"[..], ".version"),
        ] {
            let e = ptx(img).expect_err("refused").to_string();
            assert!(e.contains(says) && e.contains("PTX"), "{e}");
        }
    }

    #[cfg(feature = "hip")]
    #[test]
    fn code_object_refuses_short_and_foreign_images() {
        let e = code_object(&[]).expect_err("empty").to_string();
        assert!(e.contains("0 bytes, not a 64-bit ELF"), "{e}");
        let mut elf = vec![0u8; 64];
        elf[..6].copy_from_slice(b"\x7fELF\x02\x01");
        elf[18] = 62; // x86-64
        assert!(code_object(&elf)
            .expect_err("x86")
            .to_string()
            .contains("224"));
        elf[18] = 224;
        elf[40..48].copy_from_slice(&4096u64.to_le_bytes()); // section headers at 4096
        elf[58] = 64;
        elf[60] = 3;
        let e = code_object(&elf).expect_err("truncated").to_string();
        assert!(
            e.contains("truncated: its headers declare 4288 bytes, the image has 64"),
            "{e}"
        );
    }
}
