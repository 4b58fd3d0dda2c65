//! The canonical printed form of the tree: `Display` prints source that
//! parses back to the same tree (spans and ids aside), with only the
//! parentheses precedence needs.

use std::fmt::{self, Write as _};

use super::{BinaryOp, Charset, Expr, ExprKind, Ident, Literal, Parsed, UnaryOp};

impl Expr {
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
            ExprKind::FrameLocal { depth, name } => write!(f, "frame[{depth}].{name}"),
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
            ExprKind::New { class, args } => {
                f.write_str("new ")?;
                fmt_path(f, class)?;
                f.write_char('(')?;
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
