//! `ppwave gen`: prints the code generated for the acoustic kernels.

use crate::cli::{GenArgs, GenBackend};
use crate::BadInput;
use ppstencil::launch::StencilInfo;
use std::io::Write;

/// The text `ppwave gen` prints for `args`.
pub fn render(args: &GenArgs) -> anyhow::Result<String> {
    let all = ppstencil::kernels::ALL;
    let chosen: Vec<&StencilInfo> = match &args.stencil {
        None => all.iter().collect(),
        Some(name) => match all.iter().find(|i| i.name == name) {
            Some(info) => vec![info],
            None => {
                let names: Vec<&str> = all.iter().map(|i| i.name).collect();
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
    for info in chosen {
        let body = match args.backend {
            GenBackend::Dsl => info.dsl,
            _ => info.source(backend).ok_or_else(|| {
                let have: Vec<&str> = info.sources.iter().map(|(b, _)| *b).collect();
                anyhow::anyhow!(
                    "no {backend} source is embedded for stencil `{}` in this build \
                     (available: {}, dsl); the {backend} emitter is not part of this build",
                    info.name,
                    have.join(", ")
                )
            })?,
        };
        text.push_str(&format!(
            "// ===== {} ({backend}): radius {}, {} flops/point, {} bytes/point in f32 =====\n",
            info.name,
            info.radius,
            info.flops_per_point,
            info.bytes_per_point(4)
        ));
        text.push_str(body.trim_end());
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
