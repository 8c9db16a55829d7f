//! The one intermediate representation between the `stencil!` front end and every emitter.
//!
//! A [`Stencil`] is a validated, backend-neutral description of one kernel: which fields it
//! reads and writes, which scalars it takes, the statements it runs at every point of its
//! domain, and everything derived from them (radius, compulsory bytes and flops per point).
//! Emitters never look at tokens; they only read this IR.

/// How a kernel may touch a field parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Read at any constant offset, never written.
    In,
    /// Written at offset zero, never read.
    Out,
    /// Written at offset zero and read only at offset zero (its old value), so parallel
    /// backends cannot race on it.
    InOut,
}

impl Access {
    /// The keyword used in the DSL (`in`, `out`, `inout`).
    pub fn keyword(self) -> &'static str {
        match self {
            Access::In => "in",
            Access::Out => "out",
            Access::InOut => "inout",
        }
    }

    /// Whether the kernel writes fields with this access.
    pub fn is_written(self) -> bool {
        matches!(self, Access::Out | Access::InOut)
    }
}

/// What kind of value a parameter is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// A field of the element type, of the stencil's dimensionality (`p: in`, `pxx: out`,
    /// `u: inout`).
    Field(Access),
    /// A read-only *profile*: a field that varies along one axis only (`ax: in(x)`, `az:
    /// in(z)`), the same at every point with the same coordinate along that axis; read at
    /// offset 0 along the other axes (`ax[0, 1]`). Holds the axis as `0 = z, 1 = y, 2 = x`.
    /// The runtime passes it as a field whose shape is 1 along every other axis (a damping
    /// profile per column or per depth), so it costs no memory traffic per point. It is
    /// launched among the inputs, in declaration order.
    Profile(usize),
    /// A scalar of the element type, the same at every point (`dtdh2: real`).
    Real,
    /// A grid index (`iz: index`), used only to place a point domain (`#[at(iz, ix)]`).
    Index,
}

/// One parameter of a stencil, in declaration order.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// The name as written by the user.
    pub name: String,
    /// Field, real scalar or index.
    pub kind: ParamKind,
}

/// Where a stencil runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Domain {
    /// Every point at least [`Stencil::radius`] (the largest offset over all axes) away from
    /// each border of every axis the stencil has: rows and columns `r..n-r` in 2D. With radius
    /// 0 this is every point of the grid. ([`Stencil::radii`] gives the extent per axis.)
    Interior,
    /// The single point named by one `index` parameter per axis, outermost first:
    /// `#[at(ix)]` (1D), `#[at(iz, ix)]` (2D), `#[at(iz, iy, ix)]` (3D). Holds the parameter
    /// indices.
    Point(Vec<usize>),
}

/// Binary arithmetic operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
}

impl BinOp {
    /// The operator as written in Rust and C.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
        }
    }

    /// Binding strength: larger binds tighter.
    pub fn precedence(self) -> u8 {
        match self {
            BinOp::Add | BinOp::Sub => 1,
            BinOp::Mul | BinOp::Div => 2,
        }
    }

    /// Whether `operand` needs parentheses when printed under this operator in infix form
    /// (Rust, C and the DSL share the rule): when it binds looser, and on the right also when
    /// it binds equally, so the IR's grouping (`a - (b - c)`, `a + (b + c)`) and therefore its
    /// rounding are kept exactly.
    pub fn needs_parens(self, operand: &Expr, right: bool) -> bool {
        let (p, q) = (self.precedence(), operand.precedence());
        q < p || (right && q == p)
    }

    /// Evaluates the operator on two constants (used for constant folding, in f64).
    pub fn eval(self, a: f64, b: f64) -> f64 {
        match self {
            BinOp::Add => a + b,
            BinOp::Sub => a - b,
            BinOp::Mul => a * b,
            BinOp::Div => a / b,
        }
    }
}

/// The functions the DSL knows. Each maps to a method of the runtime's `Real` trait and to a
/// C math function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    /// Square root.
    Sqrt,
    /// Absolute value.
    Abs,
    /// Exponential.
    Exp,
    /// Sine.
    Sin,
    /// Cosine.
    Cos,
    /// Smaller of two values.
    Min,
    /// Larger of two values.
    Max,
}

impl Func {
    /// Every known function, for error messages and lookups.
    pub const ALL: [Func; 7] = [
        Func::Sqrt,
        Func::Abs,
        Func::Exp,
        Func::Sin,
        Func::Cos,
        Func::Min,
        Func::Max,
    ];

    /// The DSL name (also the `Real` method name).
    pub fn name(self) -> &'static str {
        match self {
            Func::Sqrt => "sqrt",
            Func::Abs => "abs",
            Func::Exp => "exp",
            Func::Sin => "sin",
            Func::Cos => "cos",
            Func::Min => "min",
            Func::Max => "max",
        }
    }

    /// Number of arguments.
    pub fn arity(self) -> usize {
        match self {
            Func::Min | Func::Max => 2,
            _ => 1,
        }
    }

    /// Looks a function up by its DSL name.
    pub fn from_name(name: &str) -> Option<Func> {
        Func::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Evaluates on constants (constant folding).
    pub fn eval(self, args: &[f64]) -> f64 {
        match self {
            Func::Sqrt => args[0].sqrt(),
            Func::Abs => args[0].abs(),
            Func::Exp => args[0].exp(),
            Func::Sin => args[0].sin(),
            Func::Cos => args[0].cos(),
            Func::Min => args[0].min(args[1]),
            Func::Max => args[0].max(args[1]),
        }
    }
}

/// An expression evaluated at every point of the domain.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A numeric constant (already folded, in f64; emitted in the element type).
    Lit(f64),
    /// A `real` parameter, by parameter index.
    Scalar(usize),
    /// A `let` local, by its index in [`Stencil::locals`].
    Local(usize),
    /// A field read at a constant offset relative to the current point.
    Read {
        /// Parameter index of the field.
        field: usize,
        /// Offset per dimension, outermost first: `[dx]` in 1D, `[dz, dx]` in 2D,
        /// `[dz, dy, dx]` in 3D (always [`Stencil::dims`] entries; [`axes`] maps them to z, y, x).
        offset: Vec<i32>,
    },
    /// Negation.
    Neg(Box<Expr>),
    /// A binary operation.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// A call to a known function.
    Call(Func, Vec<Expr>),
}

/// Dropping walks the tree with a loop: a sum of 100,000 terms (a left-nested chain that
/// deep) is freed without deep recursion.
impl Drop for Expr {
    fn drop(&mut self) {
        fn take_children(e: &mut Expr, stack: &mut Vec<Expr>) {
            match e {
                Expr::Neg(a) => stack.push(std::mem::replace(&mut **a, Expr::Lit(0.0))),
                Expr::Binary(_, a, b) => {
                    stack.push(std::mem::replace(&mut **a, Expr::Lit(0.0)));
                    stack.push(std::mem::replace(&mut **b, Expr::Lit(0.0)));
                }
                Expr::Call(_, args) => stack.append(args),
                Expr::Lit(_) | Expr::Scalar(_) | Expr::Local(_) | Expr::Read { .. } => {}
            }
        }
        let mut stack = Vec::new();
        take_children(self, &mut stack);
        while let Some(mut e) = stack.pop() {
            take_children(&mut e, &mut stack);
        }
    }
}

impl Expr {
    /// Visits every sub-expression, parents before children, left before right. Iterative:
    /// long chains such as a sum of 10,000 terms need no stack depth.
    pub fn walk(&self, f: &mut impl FnMut(&Expr)) {
        let mut stack = vec![self];
        while let Some(e) = stack.pop() {
            f(e);
            match e {
                Expr::Neg(a) => stack.push(a),
                Expr::Binary(_, a, b) => {
                    stack.push(b);
                    stack.push(a);
                }
                Expr::Call(_, args) => stack.extend(args.iter().rev()),
                Expr::Lit(_) | Expr::Scalar(_) | Expr::Local(_) | Expr::Read { .. } => {}
            }
        }
    }

    /// Binding strength of the top node in infix form: 1 for `+ -`, 2 for `* /`, 3 for a
    /// negation or a negative constant, 4 for atoms (reads, scalars, locals, calls, other
    /// constants). Emitters parenthesise an operand of lower strength than its context.
    pub fn precedence(&self) -> u8 {
        match self {
            Expr::Binary(op, ..) => op.precedence(),
            Expr::Neg(_) => 3,
            Expr::Lit(v) if v.is_sign_negative() => 3,
            _ => 4,
        }
    }

    /// Whether this expression prints as a single token group (no operator at the top):
    /// the operand of a negation or the receiver of a method call needs parentheses otherwise.
    pub fn is_atom(&self) -> bool {
        self.precedence() == 4
    }

    /// Floating-point operations this expression costs per evaluation: one per `+ - * /`,
    /// per negation of a non-constant and per function call.
    pub fn flops(&self) -> usize {
        let mut n = 0;
        self.walk(&mut |e| match e {
            Expr::Binary(..) | Expr::Neg(_) | Expr::Call(..) => n += 1,
            _ => {}
        });
        n
    }
}

/// One statement of a stencil body.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `let name = value;` defines local number `local`.
    Let {
        /// Index into [`Stencil::locals`].
        local: usize,
        /// Its value.
        value: Expr,
    },
    /// `field[0, 0] = value;` writes an output field at the current point.
    Assign {
        /// Parameter index of the written field.
        field: usize,
        /// The value written.
        value: Expr,
    },
}

/// A validated stencil: the unit every emitter consumes.
#[derive(Clone, Debug, PartialEq)]
pub struct Stencil {
    /// Function name (snake case), e.g. `fd_pxx`.
    pub name: String,
    /// Whether the generated items are `pub`.
    pub public: bool,
    /// Doc-comment lines given by the user.
    pub doc: Vec<String>,
    /// Parameters in declaration order.
    pub params: Vec<Param>,
    /// Names of `let` locals, by index.
    pub locals: Vec<String>,
    /// The statements, in order.
    pub body: Vec<Stmt>,
    /// Where it runs.
    pub domain: Domain,
    /// Number of grid dimensions, 1 to 3: every read and write has this many offsets.
    pub dims: usize,
}

/// Names of the three axes, outermost (slowest) first. Every field is stored row-major with
/// x contiguous; which axes a stencil of each dimensionality uses is [`axes`].
pub const AXIS_NAMES: [&str; 3] = ["z", "y", "x"];

/// The axes (0 = z, 1 = y, 2 = x) of a `dims`-dimensional stencil's offsets, outermost first:
/// 1D `[x]`, 2D `[z, x]`, 3D `[z, y, x]`. The runtime stores every field as
/// `[nz, ny, nx]` with absent axes of size 1.
pub fn axes(dims: usize) -> &'static [usize] {
    match dims {
        1 => &[2],
        2 => &[0, 2],
        _ => &[0, 1, 2],
    }
}

/// An offset of a `offset.len()`-dimensional stencil as `[dz, dy, dx]`, absent axes 0.
pub fn zyx(offset: &[i32]) -> [i32; 3] {
    let mut o = [0; 3];
    for (&a, &v) in axes(offset.len()).iter().zip(offset) {
        o[a] = v;
    }
    o
}

/// One distinct field access `(field, offset)` of a stencil.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tap {
    /// Parameter index of the field.
    pub field: usize,
    /// Offset per dimension.
    pub offset: Vec<i32>,
}

impl Stencil {
    /// The type name generated for this stencil: `fd_pxx` → `FdPxx`.
    pub fn type_name(&self) -> String {
        self.name
            .split('_')
            .filter(|s| !s.is_empty())
            .map(|s| {
                let mut c = s.chars();
                match c.next() {
                    Some(first) => first.to_uppercase().chain(c).collect::<String>(),
                    None => String::new(),
                }
            })
            .collect()
    }

    /// Parameter indices of fields with the given access, in declaration order.
    pub fn fields_with(&self, pred: impl Fn(Access) -> bool) -> Vec<usize> {
        self.params
            .iter()
            .enumerate()
            .filter_map(|(i, p)| match p.kind {
                ParamKind::Field(a) if pred(a) => Some(i),
                _ => None,
            })
            .collect()
    }

    /// Written fields (`out` and `inout`), in declaration order: the launch order of outputs.
    pub fn outputs(&self) -> Vec<usize> {
        self.fields_with(Access::is_written)
    }

    /// Read-only fields (`in` and profiles, `in(x)`), in declaration order: the launch order
    /// of inputs.
    pub fn inputs(&self) -> Vec<usize> {
        (0..self.params.len())
            .filter(|&i| {
                matches!(
                    self.params[i].kind,
                    ParamKind::Field(Access::In) | ParamKind::Profile(_)
                )
            })
            .collect()
    }

    /// The axis (`0 = z, 1 = y, 2 = x`) parameter `param` varies along when it is a profile
    /// (`in(x)`), `None` for every other parameter.
    pub fn profile_axis(&self, param: usize) -> Option<usize> {
        match self.params[param].kind {
            ParamKind::Profile(axis) => Some(axis),
            _ => None,
        }
    }

    /// Parameter indices of `real` scalars, in declaration order.
    pub fn reals(&self) -> Vec<usize> {
        self.kinds(ParamKind::Real)
    }

    /// Parameter indices of `index` parameters, in declaration order.
    pub fn indices(&self) -> Vec<usize> {
        self.kinds(ParamKind::Index)
    }

    fn kinds(&self, kind: ParamKind) -> Vec<usize> {
        (0..self.params.len())
            .filter(|&i| self.params[i].kind == kind)
            .collect()
    }

    /// Every distinct field read, sorted by field then offset.
    pub fn taps(&self) -> Vec<Tap> {
        let mut taps = Vec::new();
        for stmt in &self.body {
            let value = match stmt {
                Stmt::Let { value, .. } | Stmt::Assign { value, .. } => value,
            };
            value.walk(&mut |e| {
                if let Expr::Read { field, offset } = e {
                    taps.push(Tap {
                        field: *field,
                        offset: offset.clone(),
                    });
                }
            });
        }
        taps.sort();
        taps.dedup();
        taps
    }

    /// The stencil radius: the largest |offset| over all reads and dimensions. The interior
    /// domain keeps this many cells away from every border.
    pub fn radius(&self) -> usize {
        self.taps()
            .iter()
            .flat_map(|t| t.offset.iter())
            .map(|o| o.unsigned_abs() as usize)
            .max()
            .unwrap_or(0)
    }

    /// The halo a distributed field needs per dimension: the largest |offset| in that dimension.
    pub fn halo(&self) -> Vec<usize> {
        let taps = self.taps();
        (0..self.dims)
            .map(|d| {
                taps.iter()
                    .map(|t| t.offset[d].unsigned_abs() as usize)
                    .max()
                    .unwrap_or(0)
            })
            .collect()
    }

    /// The largest |offset| per axis as `[rz, ry, rx]` (absent axes 0): the halo per axis, and
    /// the z extent the host backends size their y-blocks from.
    pub fn radii(&self) -> [usize; 3] {
        let mut r = [0; 3];
        for (&a, h) in axes(self.dims).iter().zip(self.halo()) {
            r[a] = h;
        }
        r
    }

    /// Number of distinct fields read per point (an `inout` field read at `[0, 0]` counts;
    /// a profile does not: it is one value per row or column, read from the cache).
    pub fn fields_read(&self) -> usize {
        let mut fields: Vec<usize> = self
            .taps()
            .into_iter()
            .map(|t| t.field)
            .filter(|&f| self.profile_axis(f).is_none())
            .collect();
        fields.dedup();
        fields.len()
    }

    /// Number of fields written per point.
    pub fn fields_written(&self) -> usize {
        self.outputs().len()
    }

    /// Compulsory memory traffic per point, in bytes, for an element of `elem_size` bytes:
    /// every field read once plus every field written once (perfect cache reuse between
    /// neighbouring points, no write-allocate). This is the roofline model's byte count.
    pub fn bytes_per_point(&self, elem_size: usize) -> usize {
        (self.fields_read() + self.fields_written()) * elem_size
    }

    /// Floating-point operations per point (see [`Expr::flops`]).
    pub fn flops_per_point(&self) -> usize {
        self.body
            .iter()
            .map(|s| match s {
                Stmt::Let { value, .. } | Stmt::Assign { value, .. } => value.flops(),
            })
            .sum()
    }

    /// Arithmetic intensity (flops per compulsory byte) for an element of `elem_size` bytes.
    pub fn arithmetic_intensity(&self, elem_size: usize) -> f64 {
        let bytes = self.bytes_per_point(elem_size);
        if bytes == 0 {
            0.0
        } else {
            self.flops_per_point() as f64 / bytes as f64
        }
    }
}
