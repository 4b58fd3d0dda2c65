//! The operands of a condition worth showing when it keeps being false:
//! the non-literal sides of its comparisons (through `&&`, `||` and `!`),
//! in source order, without duplicates. An operand that calls a method is
//! left out, since showing it would run the method again. Pure.

use super::ast::{Expr, ExprKind, UnaryOp};
use super::parse;

/// At most this many operands are shown.
pub const MAX_OPERANDS: usize = 4;

/// The source text of each operand of `condition` worth reading back.
pub fn operands(condition: &str) -> Vec<String> {
    match parse(condition) {
        Ok(parsed) => of(&parsed.expr, &parsed.source),
        Err(_) => Vec::new(),
    }
}

/// [`operands`] of a tree parsed already from `src`.
pub fn of(expr: &Expr, src: &str) -> Vec<String> {
    let mut out = Vec::new();
    walk(expr, src, &mut out);
    out.truncate(MAX_OPERANDS);
    out
}

fn walk(e: &Expr, src: &str, out: &mut Vec<String>) {
    match &e.kind {
        ExprKind::Binary { op, lhs, rhs }
            if op.is_logical() || matches!(op.precedence(), 2 | 3) =>
        {
            if op.is_logical() {
                walk(lhs, src, out);
                walk(rhs, src, out);
            } else {
                take(lhs, src, out);
                take(rhs, src, out);
            }
        }
        ExprKind::Unary {
            op: UnaryOp::Not,
            operand,
        } => walk(operand, src, out),
        _ => take(e, src, out),
    }
}

fn take(e: &Expr, src: &str, out: &mut Vec<String>) {
    if matches!(e.kind, ExprKind::Literal(_)) || calls(e) {
        return;
    }
    let text = e.span.text(src).trim().to_string();
    if !text.is_empty() && !out.contains(&text) {
        out.push(text);
    }
}

/// Whether evaluating `e` would invoke a method.
fn calls(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Call { .. } => true,
        ExprKind::Field { target, .. } => calls(target),
        ExprKind::Index { target, index } => calls(target) || calls(index),
        ExprKind::Slice { target, from, to } => {
            calls(target) || from.as_deref().is_some_and(calls) || to.as_deref().is_some_and(calls)
        }
        // A filter over a collection may call get(); leave it out.
        ExprKind::Filter { .. } => true,
        ExprKind::Unary { operand, .. } => calls(operand),
        ExprKind::Binary { lhs, rhs, .. } => calls(lhs) || calls(rhs),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparison_sides_without_literals_or_calls() {
        assert_eq!(operands("count > 10"), vec!["count"]);
        assert_eq!(
            operands("order.qty >= limit && !(name == \"x\") || o.size() > 2"),
            vec!["order.qty", "limit", "name"]
        );
        assert_eq!(operands("a + b == c[i]"), vec!["a + b", "c[i]"]);
        assert_eq!(operands("done"), vec!["done"]);
        assert!(operands("((").is_empty());
        assert_eq!(operands("a == 1 && a == 2"), vec!["a"]);
    }
}
