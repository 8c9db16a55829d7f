//! Prints a stencil back as DSL text (folded constants shown as decimals). Used for the
//! metadata embedded in each generated stencil and by `ppwave gen`; parsing the printed text
//! gives back the same IR.

use crate::ir::{Domain, Expr, ParamKind, Stencil, Stmt};

fn lit(v: f64) -> String {
    let s = format!("{v:?}");
    if s.contains('.') || s.contains('e') || s.contains("inf") || s.contains("NaN") {
        s
    } else {
        format!("{s}.0")
    }
}

/// Renders an expression with minimal parentheses.
pub fn expr(s: &Stencil, e: &Expr) -> String {
    let wrap = |e: &Expr, w: bool| {
        let t = expr(s, e);
        if w {
            format!("({t})")
        } else {
            t
        }
    };
    match e {
        Expr::Lit(v) => lit(*v),
        Expr::Scalar(p) => s.params[*p].name.clone(),
        Expr::Local(l) => s.locals[*l].clone(),
        Expr::Read { field, offset } => {
            let o: Vec<String> = offset.iter().map(|v| v.to_string()).collect();
            format!("{}[{}]", s.params[*field].name, o.join(", "))
        }
        Expr::Neg(a) => format!("-{}", wrap(a, !a.is_atom())),
        Expr::Binary(op, a, b) => {
            // Floating-point `+` and `*` are not associative: keep the IR's grouping.
            let (l, r) = (op.needs_parens(a, false), op.needs_parens(b, true));
            format!("{} {} {}", wrap(a, l), op.symbol(), wrap(b, r))
        }
        Expr::Call(f, args) => {
            let a: Vec<String> = args.iter().map(|x| expr(s, x)).collect();
            format!("{}({})", f.name(), a.join(", "))
        }
    }
}

/// The stencil as DSL source.
pub fn print(s: &Stencil) -> String {
    let mut out = String::new();
    for d in &s.doc {
        out.push_str(&format!("///{d}\n"));
    }
    if let Domain::Point { z, x } = s.domain {
        out.push_str(&format!(
            "#[at({}, {})]\n",
            s.params[z].name, s.params[x].name
        ));
    }
    let params: Vec<String> = s
        .params
        .iter()
        .map(|p| {
            let kind = match p.kind {
                ParamKind::Field(a) => a.keyword(),
                ParamKind::Real => "real",
                ParamKind::Index => "index",
            };
            format!("{}: {kind}", p.name)
        })
        .collect();
    let vis = if s.public { "pub " } else { "" };
    out.push_str(&format!("{vis}fn {}({}) {{\n", s.name, params.join(", ")));
    for st in &s.body {
        match st {
            Stmt::Let { local, value } => out.push_str(&format!(
                "    let {} = {};\n",
                s.locals[*local],
                expr(s, value)
            )),
            Stmt::Assign { field, value } => out.push_str(&format!(
                "    {}[{}] = {};\n",
                s.params[*field].name,
                vec!["0"; s.ndim].join(", "),
                expr(s, value)
            )),
        }
    }
    out.push_str("}\n");
    out
}

#[cfg(test)]
mod tests {
    use crate::parse::parse_str;

    #[test]
    fn printing_round_trips_through_the_parser() {
        let src = "/// doc\n#[at(iz, ix)] pub fn a(o: out, u: inout, p: in, k: real, iz: index, ix: index) {
            let t = -(p[0,1] - p[0,-1]) / (2.0 * k);
            o[0,0] = max(t, 0.5) - -p[1,0] * (k - 1.0 / 3.0);
            u[0,0] = u[0,0] * sqrt(k);
        }";
        let first = parse_str(src).expect("parses").remove(0);
        let printed = super::print(&first);
        let second = parse_str(&printed).expect("printed text parses").remove(0);
        assert_eq!(first, second, "{printed}");
        assert!(
            printed.contains("let t = -(p[0, 1] - p[0, -1]) / (2.0 * k);"),
            "{printed}"
        );
    }
}
