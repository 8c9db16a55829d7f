//! `ppwave gen`: prints the code generated for the acoustic kernels, or for the stencils of a
//! user's Rust file (`--file`).

use crate::cli::{GenArgs, GenBackend};
use crate::BadInput;
use ppstencil::launch::StencilInfo;
use std::io::Write;

/// One stencil as `ppwave gen` shows it.
struct Entry {
    name: String,
    radius: usize,
    flops: usize,
    bytes: usize,
    body: String,
}

/// The built-in acoustic kernels, then the adjoint's: the sources embedded in their metadata.
fn builtin(backend: GenBackend) -> anyhow::Result<Vec<Entry>> {
    let name = backend.name();
    ppstencil::kernels::builtin()
        .map(|info: &StencilInfo| {
            let body = match backend {
                GenBackend::Dsl => info.dsl,
                _ => info.source(name).ok_or_else(|| {
                    let have: Vec<&str> = info.sources.iter().map(|(b, _)| *b).collect();
                    anyhow::anyhow!(
                        "no {name} source is embedded for stencil `{}` in this build \
                         (available: {}, dsl); the {name} emitter is not part of this build",
                        info.name,
                        have.join(", ")
                    )
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

/// The stencils of a user's Rust file, generated now by kernels-gen.
fn from_file(path: &std::path::Path, backend: GenBackend) -> anyhow::Result<Vec<Entry>> {
    use kernels_gen::emit::{c, dsl, rust};
    let shown = path.display();
    if !path.is_file() {
        let what = if path.is_dir() {
            "is a directory"
        } else if path.exists() {
            "is not a regular file"
        } else {
            "no such file"
        };
        return Err(BadInput(format!(
            "--file {shown}: {what}; give a Rust file (.rs) containing `stencil! {{ ... }}`"
        ))
        .into());
    }
    let stencils =
        kernels_gen::build::stencils_in_file(path).map_err(|e| BadInput(format!("--file {e}")))?;
    if stencils.is_empty() {
        return Err(BadInput(format!(
            "--file {shown}: no `stencil! {{ ... }}` invocation found (at the top level or in inline modules)"
        ))
        .into());
    }
    Ok(stencils
        .iter()
        .map(|s| Entry {
            name: s.name.clone(),
            radius: s.radius(),
            flops: s.flops_per_point(),
            bytes: s.bytes_per_point(4),
            body: match backend {
                GenBackend::Serial => rust::host_source(s, "serial"),
                GenBackend::Rayon => rust::host_source(s, "rayon"),
                GenBackend::Cuda => c::emit(s, c::Dialect::Cuda),
                GenBackend::Hip => c::emit(s, c::Dialect::Hip),
                GenBackend::Dsl => dsl::print(s),
            },
        })
        .collect())
}

/// The text `ppwave gen` prints for `args`.
pub fn render(args: &GenArgs) -> anyhow::Result<String> {
    let all = match &args.file {
        Some(path) => from_file(path, args.backend)?,
        None => builtin(args.backend)?,
    };
    let chosen: Vec<&Entry> = match &args.stencil {
        None => all.iter().collect(),
        Some(name) => match all.iter().find(|e| &e.name == name) {
            Some(entry) => vec![entry],
            None => {
                let names: Vec<&str> = all.iter().map(|e| e.name.as_str()).collect();
                return Err(BadInput(format!(
                    "unknown stencil `{name}`; valid names: {}",
                    names.join(", ")
                ))
                .into());
            }
        },
    };
    let backend = args.backend.name();
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

/// Prints [`render`]'s text on stdout (a closed pipe, as in `ppwave gen | head`, is not an
/// error).
pub fn gen(args: &GenArgs) -> anyhow::Result<()> {
    let text = render(args)?;
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}
