//! Prints a stencil back as DSL text (folded constants shown as decimals). Used for the
//! metadata embedded in each generated stencil and by `ppwave gen`; parsing the printed text
//! gives back the same IR.

use super::infix::{self, CallStyle, Syntax};
use crate::ir::{Domain, Expr, Func, ParamKind, Stencil, Stmt, AXIS_NAMES};

/// The DSL spelling: user names as written, reads as `p[0, -1]`, calls as `sqrt(x)`.
struct Dsl<'a>(&'a Stencil);

impl Syntax for Dsl<'_> {
    fn lit(&self, out: &mut String, v: f64) {
        out.push_str(&infix::decimal(v, true));
    }
    fn scalar(&self, out: &mut String, param: usize) {
        out.push_str(&self.0.params[param].name);
    }
    fn local(&self, out: &mut String, local: usize) {
        out.push_str(&self.0.locals[local]);
    }
    fn read(&self, out: &mut String, field: usize, offset: &[i32]) {
        let o: Vec<String> = offset.iter().map(|v| v.to_string()).collect();
        out.push_str(&format!("{}[{}]", self.0.params[field].name, o.join(", ")));
    }
    fn func(&self, f: Func) -> String {
        f.name().to_string()
    }
    fn call_style(&self) -> CallStyle {
        CallStyle::Function
    }
}

/// Renders an expression with minimal parentheses.
pub fn expr(s: &Stencil, e: &Expr) -> String {
    infix::to_string(&Dsl(s), e)
}

/// The stencil as DSL source.
pub fn print(s: &Stencil) -> String {
    let mut out = String::new();
    for d in &s.doc {
        out.push_str(&format!("///{d}\n"));
    }
    if let Domain::Point(idx) = &s.domain {
        let names: Vec<&str> = idx.iter().map(|&p| s.params[p].name.as_str()).collect();
        out.push_str(&format!("#[at({})]\n", names.join(", ")));
    }
    let params: Vec<String> = s
        .params
        .iter()
        .map(|p| {
            let kind = match p.kind {
                ParamKind::Field(a) => a.keyword().to_string(),
                ParamKind::Profile(axis) => format!("in({})", AXIS_NAMES[axis]),
                ParamKind::Real => "real".to_string(),
                ParamKind::Index => "index".to_string(),
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
                vec!["0"; s.dims].join(", "),
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

    #[test]
    fn one_and_three_dimensional_stencils_round_trip() {
        let src = "#[at(iz, iy, ix)] fn a(u: inout, k: real, iz: index, iy: index, ix: index) {
                u[0, 0, 0] = u[0, 0, 0] * k;
            }
            fn b(o: out, p: in) { o[0, 0, 0] = laplacian(p, 4) + d2xz(p, 2) - d1y(p, 2); }
            #[at(ix)] fn c(u: inout, ix: index) { u[0] = 1.0; }
            fn d(o: out, p: in) { o[0] = d1x(p, 4) + p[-3]; }";
        for first in parse_str(src).expect("parses") {
            let printed = super::print(&first);
            let second = parse_str(&printed).expect("printed text parses").remove(0);
            assert_eq!(first, second, "{printed}");
        }
        let a = super::print(&parse_str(src).expect("parses")[0]);
        assert!(a.starts_with("#[at(iz, iy, ix)]\n"), "{a}");
        assert!(a.contains("u[0, 0, 0] = u[0, 0, 0] * k;"), "{a}");
    }
}
