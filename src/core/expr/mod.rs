//! The expression language agents type into conditions, `trace_expr`,
//! `evaluate` and `set_value`: a pure front end (lexer, parser, static
//! checker) producing an [`Expr`] tree for the evaluator.
//!
//! ```text
//! order.items[0].getSku()        m["k"]        xs[2..5]      xs[?qty > 3]
//! count >= 10 && !done           bytes#UTF-8   @0x1f.name
//! com.acme.Cache@0x7a.INSTANCE.size()
//! ```
//!
//! Precedence, lowest first: `||`, `&&`, `== !=`, `< <= > >=`, `+ -`,
//! `* / %`, prefix `! -`, postfix `.name`, `.name(args)`, `[i]`, `[a..b]`,
//! `[?p]`. A leading run of identifiers is one [`ExprKind::Path`], resolved
//! at evaluation time; a trailing `#charset` picks how a byte[]/char[]
//! renders. Nothing here does I/O, and [`parse`] never panics.

pub mod ast;
pub mod check;
pub mod compiled;
pub mod eval;
mod lexer;
pub mod operands;
pub mod parser;

pub use ast::{BinaryOp, Charset, Expr, ExprKind, Ident, Literal, NodeId, Parsed, Span, UnaryOp};
pub use check::{check, check_all};
pub use compiled::{Binding, Bound, Compiled};
pub use parser::{MAX_NESTING, MAX_SOURCE_CHARS, MAX_TREE_HEIGHT, ParseError, parse};

/// [`parse`], then [`check`]: the one call most callers want.
pub fn parse_checked(src: &str) -> Result<Parsed, ParseError> {
    let parsed = parse(src)?;
    check(&parsed)?;
    Ok(parsed)
}
