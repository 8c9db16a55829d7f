//! Every name the emitters introduce is in their reserved lists, derived from the emitted
//! code of many stencils (the acoustic kernels and a few that use every feature, in 1D, 2D and
//! 3D), not from a
//! copy of the lists:
//!
//! - Rust ([`kernels_gen::emit::rust::RESERVED`], `LAUNCH_RESERVED`): every binding in the
//!   expansion of `stencil!` (function and closure parameters, `let` and `for` patterns) is a
//!   user name, a tap slice (contains `__`, which user names may not), or listed; the parser
//!   refuses the listed names as user names.
//! - C ([`kernels_gen::emit::c::RESERVED`]): every identifier of the CUDA-C and HIP-C text
//!   (comments aside) is a user name written as `name_`, a field's window argument or local
//!   (`name__oz`, `name__i`), a kernel symbol (`NAME_f32`), or listed; no listed name can be
//!   a written user name.

use kernels_gen::emit::{c, dsl, rust};
use kernels_gen::ir::Stencil;
use kernels_gen::parse::parse_str;
use std::collections::BTreeSet;
use std::path::PathBuf;
use syn::visit::Visit;

fn stencils() -> Vec<Stencil> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut all = kernels_gen::build::stencils_in_file(root.join("../runtime/src/kernels.rs"))
        .expect("the acoustic kernels parse");
    all.extend(
        parse_str(
            "/// Several outputs, an inout, lets, functions.
             pub fn many(a: out, b: inout, c: out, p: in, q: in, k: real, w: real) {
                 let t = sqrt(abs(p[0, -1])) * k;
                 let u = max(t, q[1, 0]) - min(w, -t);
                 a[0, 0] = t + d2x(p, 4);
                 b[0, 0] = b[0, 0] * u;
                 c[0, 0] = laplacian(q, 2) + exp(-p[0, 0]) + sin(cos(w));
             }
             fn no_taps(o: out, k: real) { o[0, 0] = k; }
             #[at(jz, jx)] fn point(o: inout, v: real, jz: index, jx: index) { o[0, 0] = o[0, 0] + v; }
             /// 1D and 3D.
             fn heat1(o: out, u: in, r: real) { o[0] = u[0] + r * d2x(u, 2); }
             fn lap3(o: out, p: in) { o[0, 0, 0] = laplacian(p, 4) + d2xz(p, 2); }
             #[at(jz, jy, jx)] fn point3(o: inout, jz: index, jy: index, jx: index) { o[0, 0, 0] = 1.0; }",
        )
        .expect("parses"),
    );
    all
}

fn user_names(s: &Stencil) -> BTreeSet<String> {
    s.params
        .iter()
        .map(|p| p.name.clone())
        .chain(s.locals.iter().cloned())
        .collect()
}

#[derive(Default)]
struct Bindings(BTreeSet<String>);

impl<'ast> Visit<'ast> for Bindings {
    fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
        self.0.insert(p.ident.to_string());
        syn::visit::visit_pat_ident(self, p);
    }
}

#[test]
fn every_binding_of_the_generated_rust_is_a_user_name_a_tap_or_reserved() {
    let mut generated = BTreeSet::new();
    for s in stencils() {
        let tokens = rust::emit_stencil(&s, &dsl::print(&s), &kernels_gen::extra_sources(&s));
        let file: syn::File = syn::parse2(tokens).expect("the expansion parses as Rust");
        let mut b = Bindings::default();
        b.visit_file(&file);
        let users = user_names(&s);
        for name in b.0 {
            if users.contains(&name) || name.contains("__") {
                continue;
            }
            assert!(
                rust::RESERVED.contains(&name.as_str())
                    || rust::LAUNCH_RESERVED.contains(&name.as_str()),
                "stencil `{}`: the generated Rust binds `{name}`, which is not in \
                 emit::rust::RESERVED / LAUNCH_RESERVED",
                s.name
            );
            generated.insert(name);
        }
    }
    // The walk saw the generator's locals (so it can fail), and every reserved name is used.
    for name in rust::RESERVED.iter().chain(rust::LAUNCH_RESERVED) {
        assert!(
            generated.contains(*name),
            "`{name}` is reserved but never generated"
        );
    }
}

#[test]
fn the_parser_refuses_every_reserved_rust_name() {
    for name in rust::RESERVED {
        let e = parse_str(&format!(
            "fn f(o: out) {{ let {name} = 1.0; o[0, 0] = {name}; }}"
        ))
        .expect_err(name)
        .to_string();
        assert!(e.contains("used by the generated code"), "{name}: {e}");
    }
    for name in rust::LAUNCH_RESERVED {
        let e = parse_str(&format!(
            "#[at({name}, ix)] fn f(o: inout, {name}: index, ix: index) {{ o[0, 0] = 1.0; }}"
        ))
        .expect_err(name)
        .to_string();
        assert!(e.contains("used by the generated code"), "{name}: {e}");
    }
}

/// The identifiers of C text, comments and string literals aside.
fn c_identifiers(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let code = match line.find("//") {
            Some(k) => &line[..k],
            None => line,
        };
        // Drop string literals (`extern "C"`, the include paths' quotes).
        let mut clean = String::new();
        let mut in_str = false;
        for ch in code.chars() {
            if ch == '"' {
                in_str = !in_str;
                clean.push(' ');
            } else if !in_str {
                clean.push(ch);
            }
        }
        let mut word = String::new();
        let mut number = false;
        for ch in clean.chars().chain(std::iter::once(' ')) {
            if ch.is_ascii_alphanumeric() || ch == '_' || (number && ch == '.') {
                if word.is_empty() {
                    number = ch.is_ascii_digit();
                }
                word.push(ch);
            } else {
                if !word.is_empty() && !number {
                    out.insert(std::mem::take(&mut word));
                }
                word.clear();
                number = false;
            }
        }
    }
    out
}

#[test]
fn every_identifier_of_the_generated_c_is_a_suffixed_user_name_or_reserved() {
    let mut seen = BTreeSet::new();
    for s in stencils() {
        let mut users: BTreeSet<String> = user_names(&s).iter().map(|n| c::user_name(n)).collect();
        // Each field's window arguments and per-field locals: `p__oz`, ..., `p__i`, `p__plane`.
        let parts = kernels_gen::emit::abi::WINDOW_ARGS
            .iter()
            .chain(&["i", "plane"]);
        for (p, part) in s
            .params
            .iter()
            .flat_map(|p| parts.clone().map(move |x| (p, x)))
        {
            users.insert(kernels_gen::emit::abi::window_arg(&p.name, part));
        }
        // The kernels' own symbols: `NAME_f32`, `NAME_f64` (stencil names never end in `_`).
        for (ty, _) in kernels_gen::emit::abi::ELEMENT_TYPES {
            users.insert(kernels_gen::emit::abi::kernel_symbol(&s.name, ty));
        }
        for d in c::Dialect::ALL {
            for id in c_identifiers(&c::emit(&s, d)) {
                if users.contains(&id) {
                    continue;
                }
                assert!(
                    c::RESERVED.contains(&id.as_str()),
                    "stencil `{}` ({}): the generated C uses `{id}`, which is not in \
                     emit::c::RESERVED",
                    s.name,
                    d.language()
                );
                seen.insert(id);
            }
        }
    }
    for name in c::RESERVED {
        assert!(
            seen.contains(*name),
            "`{name}` is reserved but never generated"
        );
        // A written user name ends in `_` and contains no `__`: it cannot equal this.
        assert!(
            !name.ends_with('_') || name.starts_with("__"),
            "`{name}` could be the C spelling of a user name"
        );
    }
}
