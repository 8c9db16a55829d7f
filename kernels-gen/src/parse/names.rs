//! Naming rules: which user names a stencil may use, and why the others cannot be used.

use crate::emit::rust::{LAUNCH_RESERVED, RESERVED};
use crate::ir::ParamKind;
use syn::Ident;

/// could not use.
pub const RUST_KEYWORDS: &[&str] = &[
    "Self", "abstract", "as", "async", "await", "become", "box", "break", "const", "continue",
    "crate", "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if",
    "impl", "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub",
    "ref", "return", "self", "static", "struct", "super", "trait", "true", "try", "type", "typeof",
    "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

/// What a checked name is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The stencil's name (a Rust function, a marker type, a GPU kernel symbol).
    Stencil,
    /// A parameter of the given kind.
    Param(ParamKind),
    /// A `let` local.
    Local,
}

/// Checks a user name for `role`; the error says why the name cannot be used and what to
/// write instead. See the module documentation for the rules.
pub fn check_name(id: &Ident, role: Role) -> syn::Result<()> {
    let name = id.to_string();
    let fail = |why: String| Err(syn::Error::new(id.span(), why));
    if let Some(bare) = name.strip_prefix("r#") {
        return fail(format!(
            "raw identifiers are not supported in stencils: `{name}` is emitted to C and CUDA \
             too; choose a name that is not a keyword, e.g. `{bare}_`"
        ));
    }
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return fail(format!(
            "`{name}`: stencil names are ASCII (letters, digits, `_`), as the C backends need"
        ));
    }
    if name == "_" {
        return fail("`_` cannot name a value; choose a name".to_string());
    }
    if RUST_KEYWORDS.contains(&name.as_str()) {
        return fail(format!(
            "`{name}` is a Rust keyword and cannot be a name; write e.g. `{name}_`"
        ));
    }
    if name.contains("__") {
        return fail(format!(
            "`{name}`: names with `__` are reserved for generated code; use single underscores"
        ));
    }
    let lower = name.to_ascii_lowercase();
    if role == Role::Stencil {
        if name != lower || name.starts_with('_') || name.ends_with('_') {
            return fail(format!(
                "stencil names are snake_case like Rust functions (lowercase, single `_` \
                 between words, none at either end): write `{}`",
                snake_case(&name)
            ));
        }
        return Ok(());
    }
    let first = name.trim_start_matches('_').chars().next();
    if first.is_some_and(|c| c.is_ascii_uppercase()) {
        return fail(format!(
            "`{name}`: names start with a lowercase letter (write `{lower}`): in the generated \
             Rust an uppercase name could mean a constant, unit struct or enum variant in scope \
             (`None`, `Ok`, a stencil's marker type) instead of a new variable"
        ));
    }
    let reserved: Vec<&str> = match role {
        Role::Param(ParamKind::Index) => LAUNCH_RESERVED.to_vec(),
        Role::Param(_) => RESERVED.iter().chain(LAUNCH_RESERVED).copied().collect(),
        _ => RESERVED.to_vec(),
    };
    if reserved.contains(&name.as_str()) {
        return fail(format!(
            "`{name}` is used by the generated code; choose another name (reserved: {})",
            reserved.join(", ")
        ));
    }
    Ok(())
}

/// `FooBar` → `foo_bar`, `foo__bar_` → `foo_bar` (for the hint of a stencil name).
fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for (k, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && k > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out.split('_')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join("_")
}
