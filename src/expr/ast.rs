//! The expression tree the parser builds and the evaluator walks, and its
//! canonical printed form (`Display` prints source that parses back to the
//! same tree, spans and ids aside).

use std::fmt::{self, Write as _};

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
            | ExprKind::PinnedClass { .. } => {}
            ExprKind::Field { target, .. } => f(target),
            ExprKind::Call { target, args, .. } => {
                if let Some(t) = target {
                    f(t);
                }
                args.iter().for_each(f);
            }
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

    /// Whether this node is a (possibly folded negative) numeric literal.
    fn is_number_literal(&self) -> bool {
        matches!(&self.kind, ExprKind::Literal(l) if l.is_number())
    }

    /// Writes `self` as the target of a postfix form. `field` is set for
    /// `.name` (not a call), where a `Path` target needs parentheses or it
    /// would re-parse as a longer path.
    fn fmt_target(&self, f: &mut fmt::Formatter<'_>, field: bool) -> fmt::Result {
        let parens = match &self.kind {
            ExprKind::Binary { .. } | ExprKind::Unary { .. } => true,
            ExprKind::Literal(l) => l.is_negative_number(),
            ExprKind::Path(_) => field,
            _ => false,
        };
        if parens {
            write!(f, "({self})")
        } else {
            write!(f, "{self}")
        }
    }

    /// Writes `self` as an operand of a binary operator of precedence
    /// `parent`; `right` marks the right operand (left-associativity).
    fn fmt_operand(&self, f: &mut fmt::Formatter<'_>, parent: u8, right: bool) -> fmt::Result {
        let parens = match &self.kind {
            ExprKind::Binary { op, .. } => {
                let p = op.precedence();
                p < parent || (right && p == parent)
            }
            _ => false,
        };
        if parens {
            write!(f, "({self})")
        } else {
            write!(f, "{self}")
        }
    }
}

fn fmt_path(f: &mut fmt::Formatter<'_>, path: &[Ident]) -> fmt::Result {
    for (i, id) in path.iter().enumerate() {
        if i > 0 {
            f.write_char('.')?;
        }
        f.write_str(&id.name)?;
    }
    Ok(())
}

impl fmt::Display for Ident {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

impl fmt::Display for UnaryOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

impl fmt::Display for BinaryOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

impl fmt::Display for Charset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Writes one UTF-16 code unit as it would appear inside quotes `q`.
fn fmt_unit(f: &mut fmt::Formatter<'_>, unit: u16, q: char) -> fmt::Result {
    match char::from_u32(u32::from(unit)) {
        Some(c) => fmt_char(f, c, q),
        None => write!(f, "\\u{unit:04x}"),
    }
}

/// Writes one character as it would appear inside quotes `q`.
fn fmt_char(f: &mut fmt::Formatter<'_>, c: char, q: char) -> fmt::Result {
    match c {
        '\\' => f.write_str("\\\\"),
        '\n' => f.write_str("\\n"),
        '\t' => f.write_str("\\t"),
        '\r' => f.write_str("\\r"),
        '\u{8}' => f.write_str("\\b"),
        '\u{c}' => f.write_str("\\f"),
        c if c == q => write!(f, "\\{c}"),
        c if c.is_control() => {
            let mut buf = [0u16; 2];
            for unit in c.encode_utf16(&mut buf) {
                write!(f, "\\u{:04x}", *unit)?;
            }
            Ok(())
        }
        c => f.write_char(c),
    }
}

impl fmt::Display for Literal {
    /// Java source for the literal. Non-finite floating-point values have no
    /// literal; they print as the division that produces them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Int(v) => write!(f, "{v}"),
            Literal::Long(v) => write!(f, "{v}L"),
            Literal::Float(v) if v.is_nan() => f.write_str("(0.0f / 0.0f)"),
            Literal::Float(v) if v.is_infinite() => {
                write!(f, "({}1.0f / 0.0f)", if *v < 0.0 { "-" } else { "" })
            }
            Literal::Float(v) => write!(f, "{v:?}f"),
            Literal::Double(v) if v.is_nan() => f.write_str("(0.0 / 0.0)"),
            Literal::Double(v) if v.is_infinite() => {
                write!(f, "({}1.0 / 0.0)", if *v < 0.0 { "-" } else { "" })
            }
            Literal::Double(v) => write!(f, "{v:?}"),
            Literal::Char(c) => {
                f.write_char('\'')?;
                fmt_unit(f, *c, '\'')?;
                f.write_char('\'')
            }
            Literal::Bool(b) => write!(f, "{b}"),
            Literal::Null => f.write_str("null"),
            Literal::String(s) => {
                f.write_char('"')?;
                for c in s.chars() {
                    fmt_char(f, c, '"')?;
                }
                f.write_char('"')
            }
        }
    }
}

impl fmt::Display for Expr {
    /// Canonical source: parses back to the same tree (spans and ids aside),
    /// with only the parentheses precedence needs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ExprKind::Literal(l) => write!(f, "{l}"),
            ExprKind::Path(path) => fmt_path(f, path),
            ExprKind::This => f.write_str("this"),
            ExprKind::Handle(h) => write!(f, "@0x{h:x}"),
            ExprKind::PinnedClass { path, loader } => {
                fmt_path(f, path)?;
                write!(f, "@0x{loader:x}")
            }
            ExprKind::Field { target, name } => {
                target.fmt_target(f, true)?;
                write!(f, ".{name}")
            }
            ExprKind::Call { target, name, args } => {
                if let Some(t) = target {
                    t.fmt_target(f, false)?;
                    f.write_char('.')?;
                }
                write!(f, "{name}(")?;
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{a}")?;
                }
                f.write_char(')')
            }
            ExprKind::Index { target, index } => {
                target.fmt_target(f, false)?;
                write!(f, "[{index}]")
            }
            ExprKind::Slice { target, from, to } => {
                target.fmt_target(f, false)?;
                f.write_char('[')?;
                if let Some(e) = from {
                    write!(f, "{e}")?;
                }
                f.write_str("..")?;
                if let Some(e) = to {
                    write!(f, "{e}")?;
                }
                f.write_char(']')
            }
            ExprKind::Filter { target, predicate } => {
                target.fmt_target(f, false)?;
                write!(f, "[?{predicate}]")
            }
            ExprKind::Unary { op, operand } => {
                f.write_str(op.symbol())?;
                let parens =
                    operand.is_number_literal() || matches!(operand.kind, ExprKind::Binary { .. });
                if parens {
                    write!(f, "({operand})")
                } else {
                    write!(f, "{operand}")
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let p = op.precedence();
                lhs.fmt_operand(f, p, false)?;
                write!(f, " {op} ")?;
                rhs.fmt_operand(f, p, true)
            }
        }
    }
}

impl fmt::Display for Parsed {
    /// The canonical expression, then `#charset` if one was given.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.expr)?;
        if let Some(c) = self.charset {
            write!(f, "#{c}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::parse;
    use proptest::prelude::*;

    /// The tree with every span zeroed and every id 0, for comparing shapes.
    fn strip(e: &Expr) -> Expr {
        let ident = |i: &Ident| Ident {
            name: i.name.clone(),
            span: Span::default(),
        };
        let bx = |e: &Expr| Box::new(strip(e));
        let kind = match &e.kind {
            ExprKind::Literal(l) => ExprKind::Literal(l.clone()),
            ExprKind::Path(p) => ExprKind::Path(p.iter().map(ident).collect()),
            ExprKind::This => ExprKind::This,
            ExprKind::Handle(h) => ExprKind::Handle(*h),
            ExprKind::PinnedClass { path, loader } => ExprKind::PinnedClass {
                path: path.iter().map(ident).collect(),
                loader: *loader,
            },
            ExprKind::Field { target, name } => ExprKind::Field {
                target: bx(target),
                name: ident(name),
            },
            ExprKind::Call { target, name, args } => ExprKind::Call {
                target: target.as_deref().map(bx),
                name: ident(name),
                args: args.iter().map(strip).collect(),
            },
            ExprKind::Index { target, index } => ExprKind::Index {
                target: bx(target),
                index: bx(index),
            },
            ExprKind::Slice { target, from, to } => ExprKind::Slice {
                target: bx(target),
                from: from.as_deref().map(bx),
                to: to.as_deref().map(bx),
            },
            ExprKind::Filter { target, predicate } => ExprKind::Filter {
                target: bx(target),
                predicate: bx(predicate),
            },
            ExprKind::Unary { op, operand } => ExprKind::Unary {
                op: *op,
                operand: bx(operand),
            },
            ExprKind::Binary { op, lhs, rhs } => ExprKind::Binary {
                op: *op,
                lhs: bx(lhs),
                rhs: bx(rhs),
            },
        };
        node(kind)
    }

    fn node(kind: ExprKind) -> Expr {
        Expr {
            id: NodeId(0),
            span: Span::default(),
            kind,
        }
    }

    /// Parses `src` and prints it back canonically.
    fn check(src: &str, expect: &str) {
        let p = parse(src).unwrap_or_else(|e| panic!("{src:?}: {e}"));
        assert_eq!(p.to_string(), expect, "printing {src:?}");
        let again = parse(expect).unwrap_or_else(|e| panic!("{expect:?}: {e}"));
        assert_eq!(strip(&again.expr), strip(&p.expr), "{src:?}");
        assert_eq!(again.charset, p.charset);
    }

    #[test]
    fn canonical_printing() {
        for (src, want) in [
            ("a.b.c", "a.b.c"),
            ("  a . b ( 1 ,2 )", "a.b(1, 2)"),
            ("(a || b) && c", "(a || b) && c"),
            ("a || b && c", "a || b && c"),
            ("((a || b)) || c", "a || b || c"),
            ("a || (b || c)", "a || (b || c)"),
            ("a - (b - c)", "a - (b - c)"),
            ("(a - b) - c", "a - b - c"),
            ("(a + b) * c", "(a + b) * c"),
            ("a * -b", "a * -b"),
            ("a - -5", "a - -5"),
            ("!(a == b)", "!(a == b)"),
            ("-(5)", "-(5)"),
            ("-5", "-5"),
            ("-5.abs()", "-5.abs()"),
            ("(-5).abs()", "(-5).abs()"),
            ("(-x).y", "(-x).y"),
            ("(a).b", "(a).b"),
            ("(a.b).c()", "a.b.c()"),
            ("(a + b).c[0]", "(a + b).c[0]"),
            ("xs[ 2 .. 5 ]", "xs[2..5]"),
            ("xs[..3]", "xs[..3]"),
            ("xs[2..]", "xs[2..]"),
            ("xs[ ? qty>3 ]", "xs[?qty > 3]"),
            ("m[\"k\"]", "m[\"k\"]"),
            ("@0X1F.name", "@0x1f.name"),
            ("a.B@0x7A.c", "a.B@0x7a.c"),
            ("bytes #utf8", "bytes#UTF-8"),
            ("bytes#latin1", "bytes#ISO-8859-1"),
            ("bytes#RAW", "bytes#raw"),
            ("0x1F", "31"),
            ("0xFFFFFFFF", "-1"),
            ("1e3", "1000.0"),
            ("2.50f", "2.5f"),
            ("2d", "2.0"),
            ("7l", "7L"),
            ("'\\u0041'", "'A'"),
            ("'\\''", "'\\''"),
            ("'\"'", "'\"'"),
            ("'\\uD800'", "'\\ud800'"),
            ("'\\0'", "'\\u0000'"),
            ("\"a\\u0001\\tb'\\\"\"", "\"a\\u0001\\tb'\\\"\""),
            ("this.x", "this.x"),
            ("f()", "f()"),
        ] {
            check(src, want);
        }
    }

    #[test]
    fn non_finite_literals_print_as_the_division_that_makes_them() {
        assert_eq!(Literal::Double(f64::NAN).to_string(), "(0.0 / 0.0)");
        assert_eq!(
            Literal::Double(f64::NEG_INFINITY).to_string(),
            "(-1.0 / 0.0)"
        );
        assert_eq!(Literal::Float(f32::INFINITY).to_string(), "(1.0f / 0.0f)");
    }

    #[test]
    fn children_and_spans() {
        let p = parse("f(a, b[1..2])").unwrap_or_else(|e| panic!("{e}"));
        let kids: Vec<String> = p.expr.children().iter().map(|c| c.to_string()).collect();
        assert_eq!(kids, ["a", "b[1..2]"]);
        assert_eq!(Span::new(3, 4).column("ä.ö"), 3);
        assert_eq!(
            Span::new(2, 4).column("ä.ö"),
            2,
            "mid-character offsets do not panic"
        );
        assert_eq!(Span::new(99, 100).column("ab"), 3);
        assert_eq!(Span::new(99, 100).text("ab"), "");
    }

    /// The tallest tree the parser accepts can be printed, debug-printed,
    /// cloned and compared on a small stack.
    #[test]
    fn walking_the_tallest_tree_fits_a_512k_stack() {
        use crate::expr::MAX_TREE_HEIGHT;
        for link in [".b()", " + a", "[0]", ".x"] {
            let links = usize::from(MAX_TREE_HEIGHT) - 1;
            let src = format!("(a){}", link.repeat(links));
            let p = parse(&src).unwrap_or_else(|e| panic!("{link:?}: {e}"));
            let worker = std::thread::Builder::new()
                .stack_size(512 * 1024)
                .spawn(move || {
                    let printed = p.to_string();
                    let debugged = format!("{p:#?}");
                    let copy = p.clone();
                    (printed.len(), !debugged.is_empty(), copy == p)
                });
            let (len, debugged, equal) = worker
                .unwrap_or_else(|e| panic!("spawn: {e}"))
                .join()
                .unwrap_or_else(|_| panic!("{link:?}: overflowed or panicked"));
            assert!(len > 0 && debugged && equal);
        }
    }

    fn ident() -> impl Strategy<Value = Ident> {
        "[a-zA-Zé_$][a-zA-Z0-9_$]{0,5}"
            .prop_filter("keyword", |s| {
                !matches!(s.as_str(), "this" | "true" | "false" | "null")
            })
            .prop_map(|name| Ident {
                name,
                span: Span::default(),
            })
    }

    fn literal() -> impl Strategy<Value = Literal> {
        prop_oneof![
            any::<i32>().prop_map(Literal::Int),
            any::<i64>().prop_map(Literal::Long),
            any::<f32>()
                .prop_filter("finite", |v| v.is_finite())
                .prop_map(Literal::Float),
            any::<f64>()
                .prop_filter("finite", |v| v.is_finite())
                .prop_map(Literal::Double),
            any::<u16>().prop_map(Literal::Char),
            any::<bool>().prop_map(Literal::Bool),
            Just(Literal::Null),
            prop::collection::vec(any::<char>(), 0..8)
                .prop_map(|cs| Literal::String(cs.into_iter().collect())),
        ]
    }

    fn leaf() -> impl Strategy<Value = Expr> {
        prop_oneof![
            literal().prop_map(|l| node(ExprKind::Literal(l))),
            prop::collection::vec(ident(), 1..4).prop_map(|p| node(ExprKind::Path(p))),
            Just(node(ExprKind::This)),
            any::<u64>().prop_map(|h| node(ExprKind::Handle(h))),
            (prop::collection::vec(ident(), 1..3), any::<u64>())
                .prop_map(|(path, loader)| node(ExprKind::PinnedClass { path, loader })),
        ]
    }

    fn binary_op() -> impl Strategy<Value = BinaryOp> {
        prop::sample::select(vec![
            BinaryOp::Eq,
            BinaryOp::Ne,
            BinaryOp::Lt,
            BinaryOp::Le,
            BinaryOp::Gt,
            BinaryOp::Ge,
            BinaryOp::And,
            BinaryOp::Or,
            BinaryOp::Add,
            BinaryOp::Sub,
            BinaryOp::Mul,
            BinaryOp::Div,
            BinaryOp::Rem,
        ])
    }

    fn expr() -> impl Strategy<Value = Expr> {
        leaf().prop_recursive(6, 48, 4, |inner| {
            let bx = |e: Expr| Box::new(e);
            prop_oneof![
                (inner.clone(), ident()).prop_map(move |(t, name)| node(ExprKind::Field {
                    target: bx(t),
                    name
                })),
                (
                    prop::option::of(inner.clone()),
                    ident(),
                    prop::collection::vec(inner.clone(), 0..3)
                )
                    .prop_map(move |(t, name, args)| node(ExprKind::Call {
                        target: t.map(bx),
                        name,
                        args
                    })),
                (inner.clone(), inner.clone()).prop_map(move |(t, i)| node(ExprKind::Index {
                    target: bx(t),
                    index: bx(i)
                })),
                (
                    inner.clone(),
                    prop::option::of(inner.clone()),
                    prop::option::of(inner.clone())
                )
                    .prop_map(move |(t, from, to)| node(ExprKind::Slice {
                        target: bx(t),
                        from: from.map(bx),
                        to: to.map(bx)
                    })),
                (inner.clone(), inner.clone()).prop_map(move |(t, p)| node(ExprKind::Filter {
                    target: bx(t),
                    predicate: bx(p)
                })),
                (
                    prop::sample::select(vec![UnaryOp::Not, UnaryOp::Neg]),
                    inner.clone()
                )
                    .prop_map(move |(op, e)| node(ExprKind::Unary { op, operand: bx(e) })),
                (binary_op(), inner.clone(), inner).prop_map(move |(op, l, r)| node(
                    ExprKind::Binary {
                        op,
                        lhs: bx(l),
                        rhs: bx(r)
                    }
                )),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        #[test]
        fn printing_then_parsing_gives_the_same_tree(
            e in expr(),
            charset in prop::option::of(prop::sample::select(vec![
                Charset::Utf8, Charset::Latin1, Charset::Raw,
            ])),
        ) {
            let original = Parsed {
                expr: e,
                charset,
                source: String::new(),
                node_count: 0,
            };
            let printed = original.to_string();
            let parsed = parse(&printed);
            prop_assert!(parsed.is_ok(), "{:?} does not parse: {:?}", printed, parsed);
            if let Ok(p) = parsed {
                prop_assert_eq!(strip(&p.expr), strip(&original.expr), "via {:?}", printed);
                prop_assert_eq!(p.charset, charset);
                prop_assert_eq!(p.to_string(), printed);
            }
        }
    }
}
