//! The expression tree the parser builds and the evaluator walks. Its
//! canonical printed form (`Display` prints source that parses back to the
//! same tree, spans and ids aside) lives in `ast/display.rs`.

/// Byte offsets into the source; `column()` is the 1-based character column of `start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Span {
    /// Byte offset of the first byte covered.
    pub start: usize,
    /// Byte offset one past the last byte covered.
    pub end: usize,
}

impl Span {
    /// A span from `start` to `end` (byte offsets).
    pub fn new(start: usize, end: usize) -> Self {
        Span { start, end }
    }

    /// The smallest span covering both `self` and `other`.
    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    /// The 1-based character (not byte) column of `start` in `src`.
    ///
    /// Never panics: an offset past the end or inside a multi-byte character
    /// counts the characters that begin before it.
    pub fn column(&self, src: &str) -> usize {
        src.char_indices()
            .take_while(|(i, _)| *i < self.start)
            .count()
            + 1
    }

    /// The source text the span covers, or `""` if it does not fit `src`.
    pub fn text<'s>(&self, src: &'s str) -> &'s str {
        src.get(self.start..self.end).unwrap_or("")
    }
}

/// Unique per node within one parsed expression, assigned in parse order
/// (children before parents, so the root carries the largest id and ids
/// are dense from 0 to `node_count - 1`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct NodeId(pub u32);

/// One node of the expression tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    /// Unique within the parsed expression; a key for per-node side tables.
    pub id: NodeId,
    /// Where the node sits in the source (parentheses around it included).
    pub span: Span,
    /// What the node is.
    pub kind: ExprKind,
}

/// A name as written, with where it was written.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Ident {
    /// The identifier text (a Java identifier; may contain `$` and `_`).
    pub name: String,
    /// Where the identifier sits in the source.
    pub span: Span,
}

/// The shapes an expression node can take.
#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    /// A literal value: number, char, string, boolean or `null`.
    Literal(Literal),
    /// A leading chain of plain identifiers `a.b.c` (one or more). Resolved at evaluation time:
    /// first segment as local / field of this / static / class; or a longer prefix as a qualified class name.
    Path(Vec<Ident>),
    /// The `this` keyword: the receiver of the current frame.
    This,
    /// `frame[N].name` — the local `name` of the frame `N` levels below
    /// the current one (`frame[1]`: its caller). Written with a literal
    /// index; a local named `frame` is read as `(frame)[i]`.
    FrameLocal {
        /// How many frames down from the current one (0: the current).
        depth: u32,
        /// The local's name.
        name: Ident,
    },
    /// `@0x1f` — an object handle.
    Handle(u64),
    /// `a.b.C@0x7a` — a class pinned to the copy loaded by class loader 0x7a.
    PinnedClass {
        /// The class name as written, one identifier per segment.
        path: Vec<Ident>,
        /// The class loader's object id.
        loader: u64,
    },
    /// `target.name` (after a non-path target, e.g. `f().x`, `xs[0].y`, `@0x1.y`, `this.y`).
    Field {
        /// What the field is read from.
        target: Box<Expr>,
        /// The field name.
        name: Ident,
    },
    /// `target.name(args)`, or `name(args)` with `target: None` (a method of `this` or a static of the frame's class).
    Call {
        /// The receiver (an object, or a `Path` naming a class for a static).
        target: Option<Box<Expr>>,
        /// The method name.
        name: Ident,
        /// The arguments, in order.
        args: Vec<Expr>,
    },
    /// `new a.b.C(args)` — runs a constructor of the named class.
    New {
        /// The class name as written, one identifier per segment.
        class: Vec<Ident>,
        /// The constructor arguments, in order.
        args: Vec<Expr>,
    },
    /// `target[index]` — arrays, Lists, Maps (`m["k"]`).
    Index {
        /// The array, List or Map.
        target: Box<Expr>,
        /// The index or key.
        index: Box<Expr>,
    },
    /// `target[from..to]` half-open; either bound may be omitted (`xs[..3]`, `xs[2..]`).
    Slice {
        /// The array or List.
        target: Box<Expr>,
        /// Inclusive lower bound; `None` means 0.
        from: Option<Box<Expr>>,
        /// Exclusive upper bound; `None` means the length.
        to: Option<Box<Expr>>,
    },
    /// `target[?predicate]` — elements for which predicate holds; inside the predicate bare names resolve against the element first.
    Filter {
        /// The array or collection filtered.
        target: Box<Expr>,
        /// Evaluated once per element; must yield a boolean.
        predicate: Box<Expr>,
    },
    /// `!operand` or `-operand`.
    Unary {
        /// Which prefix operator.
        op: UnaryOp,
        /// What it applies to.
        operand: Box<Expr>,
    },
    /// `lhs op rhs`.
    Binary {
        /// Which infix operator.
        op: BinaryOp,
        /// The left operand.
        lhs: Box<Expr>,
        /// The right operand.
        rhs: Box<Expr>,
    },
}

/// A literal value, typed as Java would type it.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// `42`, `0x1F`, `-2147483648`.
    Int(i32),
    /// `42L`, `0x1FL`.
    Long(i64),
    /// `2.0f`, `2f`.
    Float(f32),
    /// `1.5`, `1e3`, `2.0d`.
    Double(f64),
    /// `'a'`, `'\n'`, `'\u0041'` — one UTF-16 code unit, like a Java `char`.
    Char(u16),
    /// `true` / `false`.
    Bool(bool),
    /// `null`.
    Null,
    /// `"text"`, escapes already decoded.
    String(String),
}

/// A prefix operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `!` — boolean negation.
    Not,
    /// `-` — arithmetic negation.
    Neg,
}

/// An infix operator. All are left-associative.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `==` — identity for references, content for two Strings, value for primitives.
    Eq,
    /// `!=`.
    Ne,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
    /// `&&` — short-circuit.
    And,
    /// `||` — short-circuit.
    Or,
    /// `+`.
    Add,
    /// `-`.
    Sub,
    /// `*`.
    Mul,
    /// `/`.
    Div,
    /// `%`.
    Rem,
}

/// How a trailing `#…` asks a byte[]/char[] result to render.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Charset {
    /// `#UTF-8` (also `#utf8`).
    Utf8,
    /// `#ISO-8859-1` (also `#latin1`).
    Latin1,
    /// `#raw` — the elements as numbers.
    Raw,
}

/// A parsed expression: the tree plus the optional trailing charset.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The root of the tree.
    pub expr: Expr,
    /// The trailing `#charset`, if any.
    pub charset: Option<Charset>,
    /// The source the spans point into.
    pub source: String,
    /// How many nodes the tree has; ids run from 0 to `node_count - 1`.
    pub node_count: u32,
}

impl UnaryOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            UnaryOp::Not => "!",
            UnaryOp::Neg => "-",
        }
    }
}

impl BinaryOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::And => "&&",
            BinaryOp::Or => "||",
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
        }
    }

    /// Binding strength, lowest first: `||` 0, `&&` 1, `== !=` 2,
    /// `< <= > >=` 3, `+ -` 4, `* / %` 5.
    pub fn precedence(self) -> u8 {
        match self {
            BinaryOp::Or => 0,
            BinaryOp::And => 1,
            BinaryOp::Eq | BinaryOp::Ne => 2,
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => 3,
            BinaryOp::Add | BinaryOp::Sub => 4,
            BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem => 5,
        }
    }

    /// `< <= > >=`.
    pub fn is_ordering(self) -> bool {
        self.precedence() == 3
    }

    /// `&& ||`.
    pub fn is_logical(self) -> bool {
        matches!(self, BinaryOp::And | BinaryOp::Or)
    }

    /// `+ - * / %`.
    pub fn is_arithmetic(self) -> bool {
        self.precedence() >= 4
    }
}

impl Charset {
    /// The canonical spelling after `#`.
    pub fn name(self) -> &'static str {
        match self {
            Charset::Utf8 => "UTF-8",
            Charset::Latin1 => "ISO-8859-1",
            Charset::Raw => "raw",
        }
    }

    /// Recognises a charset name as written after `#` (case-insensitive):
    /// `UTF-8`/`utf8`, `ISO-8859-1`/`ISO8859-1`/`latin1`/`latin-1`, `raw`.
    pub fn from_name(name: &str) -> Option<Charset> {
        match name.to_ascii_lowercase().as_str() {
            "utf-8" | "utf8" => Some(Charset::Utf8),
            "iso-8859-1" | "iso8859-1" | "iso_8859_1" | "latin1" | "latin-1" => {
                Some(Charset::Latin1)
            }
            "raw" => Some(Charset::Raw),
            _ => None,
        }
    }
}

impl Literal {
    /// Whether this is a numeric literal below zero (`-0.0` included).
    pub fn is_negative_number(&self) -> bool {
        match self {
            Literal::Int(v) => *v < 0,
            Literal::Long(v) => *v < 0,
            Literal::Float(v) => v.is_sign_negative(),
            Literal::Double(v) => v.is_sign_negative(),
            _ => false,
        }
    }

    /// Whether this is an int, long, float or double literal.
    pub fn is_number(&self) -> bool {
        matches!(
            self,
            Literal::Int(_) | Literal::Long(_) | Literal::Float(_) | Literal::Double(_)
        )
    }

    /// The Java type name of the literal, for messages (`int`, `String`, `null`…).
    pub fn type_name(&self) -> &'static str {
        match self {
            Literal::Int(_) => "int",
            Literal::Long(_) => "long",
            Literal::Float(_) => "float",
            Literal::Double(_) => "double",
            Literal::Char(_) => "char",
            Literal::Bool(_) => "boolean",
            Literal::Null => "null",
            Literal::String(_) => "String",
        }
    }
}

impl ExprKind {
    /// Calls `f` on each direct child, left to right as written.
    pub fn for_each_child<'a>(&'a self, mut f: impl FnMut(&'a Expr)) {
        match self {
            ExprKind::Literal(_)
            | ExprKind::Path(_)
            | ExprKind::This
            | ExprKind::Handle(_)
            | ExprKind::FrameLocal { .. }
            | ExprKind::PinnedClass { .. } => {}
            ExprKind::Field { target, .. } => f(target),
            ExprKind::Call { target, args, .. } => {
                if let Some(t) = target {
                    f(t);
                }
                args.iter().for_each(f);
            }
            ExprKind::New { args, .. } => args.iter().for_each(f),
            ExprKind::Index { target, index } => {
                f(target);
                f(index);
            }
            ExprKind::Slice { target, from, to } => {
                f(target);
                if let Some(e) = from {
                    f(e);
                }
                if let Some(e) = to {
                    f(e);
                }
            }
            ExprKind::Filter { target, predicate } => {
                f(target);
                f(predicate);
            }
            ExprKind::Unary { operand, .. } => f(operand),
            ExprKind::Binary { lhs, rhs, .. } => {
                f(lhs);
                f(rhs);
            }
        }
    }
}

impl Expr {
    /// The direct children, left to right as written.
    pub fn children(&self) -> Vec<&Expr> {
        let mut out = Vec::new();
        self.kind.for_each_child(|c| out.push(c));
        out
    }

    /// The bare names the expression needs from where it runs: each
    /// one-segment path used as a value (`total`; not `o.total` nor the
    /// receiver of `Math.abs(x)`, which may be a class or a package),
    /// outside filter predicates (where a bare name means the element's
    /// member first). Each name once, in source order.
    pub fn bare_names(&self) -> Vec<&Ident> {
        self.names().0
    }

    /// The caller-frame locals the expression reads (`frame[N].name`),
    /// with their depth, each once, in source order.
    pub fn frame_names(&self) -> Vec<(u32, &Ident)> {
        self.names().1
    }

    /// The methods and constructors the expression calls, each once, in
    /// source order (`getSku()`, `new a.B()`): each runs code in the JVM.
    pub fn calls(&self) -> Vec<String> {
        fn walk(e: &Expr, out: &mut Vec<String>) {
            let call = match &e.kind {
                ExprKind::Call { name, .. } => Some(format!("{}()", name.name)),
                ExprKind::New { class, .. } => Some(format!(
                    "new {}()",
                    class
                        .iter()
                        .map(|i| i.name.as_str())
                        .collect::<Vec<_>>()
                        .join(".")
                )),
                _ => None,
            };
            if let Some(c) = call
                && !out.contains(&c)
            {
                out.push(c);
            }
            e.kind.for_each_child(|c| walk(c, out));
        }
        let mut out = Vec::new();
        walk(self, &mut out);
        out
    }

    fn names(&self) -> (Vec<&Ident>, Vec<(u32, &Ident)>) {
        type Found<'a> = (Vec<&'a Ident>, Vec<(u32, &'a Ident)>);
        fn walk<'a>(e: &'a Expr, out: &mut Found<'a>) {
            match &e.kind {
                ExprKind::Path(p) if p.len() == 1 => {
                    if !out.0.iter().any(|i| i.name == p[0].name) {
                        out.0.push(&p[0]);
                    }
                }
                ExprKind::FrameLocal { depth, name } => {
                    if !out.1.iter().any(|(d, i)| d == depth && i.name == name.name) {
                        out.1.push((*depth, name));
                    }
                }
                ExprKind::Filter { target, .. } => walk(target, out),
                // `Name.m()`: the receiver may be a class.
                ExprKind::Call {
                    target: Some(t),
                    args,
                    ..
                } if matches!(&t.kind, ExprKind::Path(_)) => {
                    args.iter().for_each(|a| walk(a, out));
                }
                other => other.for_each_child(|c| walk(c, out)),
            }
        }
        let mut out = (Vec::new(), Vec::new());
        walk(self, &mut out);
        out
    }
}

mod display;

#[cfg(test)]
mod tests;
