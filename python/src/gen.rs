//! `ppstencil.gen`: the code generated for stencils, as `ppwave gen` prints it: the built-in
//! acoustic kernels (their sources embedded in the library), or the stencils of a DSL text
//! parsed now by kernels-gen, the front end of `stencil!`.

use crate::errors::bad;
use kernels_gen::emit::{c, dsl, rust};
use kernels_gen::ir::Stencil;
use pyo3::prelude::*;

/// The backends `gen` knows, as `ppwave gen --backend` names them.
const BACKENDS: [&str; 5] = ["serial", "rayon", "cuda", "hip", "dsl"];

/// One stencil as `ppwave gen` shows it.
struct Entry {
    name: String,
    radius: usize,
    flops: usize,
    bytes: usize,
    body: String,
}

/// The built-in kernels (acoustic, then the adjoint's), their sources as embedded in the
/// library.
fn builtin(backend: &str) -> PyResult<Vec<Entry>> {
    ppstencil::kernels::builtin()
        .map(|info| {
            let body = match backend {
                "dsl" => info.dsl,
                _ => info.source(backend).ok_or_else(|| {
                    let have: Vec<&str> = info.sources.iter().map(|(b, _)| *b).collect();
                    crate::errors::Error::new_err(format!(
                        "no {backend} source is embedded for stencil `{}` in this build \
                         (available: {}, dsl); the {backend} emitter is not part of this build",
                        info.name,
                        have.join(", ")
                    ))
                })?,
            };
            Ok(Entry {
                name: info.name.to_string(),
                radius: info.radius,
                flops: info.flops_per_point,
                bytes: info.bytes_per_point::<f32>(),
                body: body.to_string(),
            })
        })
        .collect()
}

/// The stencils of `text`: a Rust source with `stencil! { ... }` invocations (as
/// `ppwave gen --file` reads), or the DSL alone (what goes between the braces).
fn parse(text: &str) -> PyResult<Vec<Stencil>> {
    let stencils = if text.contains("stencil!") {
        kernels_gen::build::stencils_in_source(text).map_err(bad)?
    } else {
        kernels_gen::parse_str(text).map_err(|e| {
            let at = e.span().start();
            bad(format!(
                "line {}, column {}: invalid stencil: {e}",
                at.line,
                at.column + 1
            ))
        })?
    };
    if stencils.is_empty() {
        return Err(bad(
            "no stencil found: give the DSL (`fn name(out: out, p: in) { out[0, 0] = ...; }`) or \
             a Rust source with `stencil! { ... }`",
        ));
    }
    Ok(stencils)
}

/// The stencils of `text`, generated now for `backend`.
fn from_text(text: &str, backend: &str) -> PyResult<Vec<Entry>> {
    Ok(parse(text)?
        .iter()
        .map(|s| Entry {
            name: s.name.clone(),
            radius: s.radius(),
            flops: s.flops_per_point(),
            bytes: s.bytes_per_point(4),
            body: match backend {
                "serial" | "rayon" => rust::host_source(s, backend),
                "cuda" => c::emit(s, c::Dialect::Cuda),
                "hip" => c::emit(s, c::Dialect::Hip),
                _ => dsl::print(s),
            },
        })
        .collect())
}

/// The source code generated for stencils, as ``ppwave gen`` prints it (the same text).
///
/// Parameters
/// ----------
/// dsl : str or None
///     Stencil DSL text, e.g. ``"fn heat(u2: out, u: in, a: real) { u2[0, 0] = ...; }"``,
///     or a Rust source holding ``stencil! { ... }`` invocations (what
///     ``ppwave gen --file`` reads). ``None``: the library's built-in acoustic kernels.
/// backend : str
///     ``"serial"`` or ``"rayon"`` (Rust), ``"cuda"`` (CUDA-C), ``"hip"`` (HIP-C) or
///     ``"dsl"`` (the stencil printed back as DSL).
/// stencil : str or None
///     Only the stencil of this name.
///
/// Returns
/// -------
/// str
///     For each stencil a header line (name, backend, radius, flops and bytes per point)
///     and its source.
///
/// Raises
/// ------
/// ValueError
///     An unknown backend or stencil name, or DSL text that does not parse (the message
///     gives the line and column and says what to write instead).
#[pyfunction]
#[pyo3(signature = (dsl=None, backend="serial", stencil=None))]
pub fn gen(dsl: Option<&str>, backend: &str, stencil: Option<&str>) -> PyResult<String> {
    if !BACKENDS.contains(&backend) {
        return Err(bad(format!(
            "invalid backend = {backend:?}: use one of {}",
            BACKENDS.join(", ")
        )));
    }
    let all = match dsl {
        Some(text) => from_text(text, backend)?,
        None => builtin(backend)?,
    };
    let chosen: Vec<&Entry> = match stencil {
        None => all.iter().collect(),
        Some(name) => match all.iter().find(|e| e.name == name) {
            Some(entry) => vec![entry],
            None => {
                let names: Vec<&str> = all.iter().map(|e| e.name.as_str()).collect();
                return Err(bad(format!(
                    "unknown stencil `{name}`; valid names: {}",
                    names.join(", ")
                )));
            }
        },
    };
    let mut text = String::new();
    for e in chosen {
        text.push_str(&format!(
            "// ===== {} ({backend}): radius {}, {} flops/point, {} bytes/point in f32 =====\n",
            e.name, e.radius, e.flops, e.bytes
        ));
        text.push_str(e.body.trim_end());
        text.push_str("\n\n");
    }
    Ok(text)
}

/// The names of the stencils of a DSL text (or of the built-in kernels), in order.
#[pyfunction]
#[pyo3(signature = (dsl=None))]
pub fn stencil_names(dsl: Option<&str>) -> PyResult<Vec<String>> {
    Ok(match dsl {
        Some(text) => parse(text)?.into_iter().map(|s| s.name).collect(),
        None => ppstencil::kernels::builtin()
            .map(|i| i.name.to_string())
            .collect(),
    })
}
