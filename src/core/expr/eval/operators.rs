//! Operators for the evaluator: `!` and `-`, the short-circuit `&&` and
//! `||`, Java's `==`, string concatenation and arithmetic.
//!
//! `unary` and `binary` take the function that evaluates their operands,
//! so a filter predicate can walk them with the element in scope while the
//! rules themselves are written once.

use super::arith::{arith, negate, num};
use super::{Evaluation, R, Stop, Val};
use crate::expr::ast::{BinaryOp, Expr, Span, UnaryOp};
use crate::model::Prim;

impl Evaluation<'_> {
    pub(super) fn unary(
        &mut self,
        op: UnaryOp,
        operand: &Expr,
        scope: u64,
        mut sub: impl FnMut(&mut Self, &Expr, u64) -> R,
    ) -> R {
        let v = sub(self, operand, scope)?;
        let v = self.unbox(operand, scope, v)?;
        match (op, v) {
            (UnaryOp::Not, Val::Prim(Prim::Bool(b))) => Ok(Val::Prim(Prim::Bool(!b))),
            (UnaryOp::Neg, v) => negate(&v)
                .ok_or_else(|| Stop::at(operand.span, format!("cannot negate a {}", v.kind()))),
            (UnaryOp::Not, v) => Err(Stop::at(
                operand.span,
                format!("`!` needs a boolean, found a {}", v.kind()),
            )),
        }
    }

    pub(super) fn binary(
        &mut self,
        e: &Expr,
        op: BinaryOp,
        lhs: &Expr,
        rhs: &Expr,
        scope: u64,
        mut sub: impl FnMut(&mut Self, &Expr, u64) -> R,
    ) -> R {
        match op {
            BinaryOp::And | BinaryOp::Or => {
                let l = sub(self, lhs, scope)?;
                let lb = boolean(&self.unbox(lhs, scope, l)?, lhs.span)?;
                if (op == BinaryOp::And && !lb) || (op == BinaryOp::Or && lb) {
                    return Ok(Val::Prim(Prim::Bool(lb)));
                }
                let r = sub(self, rhs, scope)?;
                boolean(&self.unbox(rhs, scope, r)?, rhs.span).map(|b| Val::Prim(Prim::Bool(b)))
            }
            _ => {
                // Both sides are read together; an error on the right while
                // the left is pending is not reported yet.
                let l = sub(self, lhs, scope);
                let r = sub(self, rhs, scope);
                let l = l?;
                let r = r?;
                self.combine(e, op, lhs, l, rhs, r, scope)
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn combine(
        &mut self,
        e: &Expr,
        op: BinaryOp,
        lhs: &Expr,
        l: Val,
        rhs: &Expr,
        r: Val,
        scope: u64,
    ) -> R {
        match op {
            BinaryOp::Eq | BinaryOp::Ne => {
                let same = self.equal(lhs, &l, rhs, &r, scope)?;
                Ok(Val::Prim(Prim::Bool(if op == BinaryOp::Eq {
                    same
                } else {
                    !same
                })))
            }
            BinaryOp::Add
                if matches!(l, Val::Text(_))
                    || matches!(r, Val::Text(_))
                    || l.is_string_object()
                    || r.is_string_object() =>
            {
                let ls = self.as_text(lhs, scope, &l)?;
                let rs = self.as_text(rhs, scope, &r)?;
                Ok(Val::Text(format!("{ls}{rs}")))
            }
            _ => {
                let l = self.unbox(lhs, scope, l)?;
                let r = self.unbox(rhs, scope, r)?;
                let (Some(a), Some(b)) = (num(&l), num(&r)) else {
                    return Err(Stop::at(
                        e.span,
                        format!(
                            "`{}` needs numbers, found a {} and a {}",
                            op.symbol(),
                            l.kind(),
                            r.kind()
                        ),
                    ));
                };
                arith(op, a, b).map_err(|m| Stop::at(e.span, m.to_string()))
            }
        }
    }

    /// Java's `==`: identity for references, content for two strings,
    /// value for primitives (with promotion and unboxing).
    fn equal(
        &mut self,
        lhs: &Expr,
        l: &Val,
        rhs: &Expr,
        r: &Val,
        scope: u64,
    ) -> Result<bool, Stop> {
        match (l, r) {
            (Val::Null, Val::Null) => Ok(true),
            (Val::Null, Val::Object { id, .. }) | (Val::Object { id, .. }, Val::Null) => {
                Ok(*id == 0)
            }
            (Val::Null, _) | (_, Val::Null) => Ok(false),
            (Val::Prim(Prim::Bool(a)), Val::Prim(Prim::Bool(b))) => Ok(a == b),
            _ if (matches!(l, Val::Text(_)) || l.is_string_object())
                && (matches!(r, Val::Text(_)) || r.is_string_object()) =>
            {
                if let (Val::Object { id: a, .. }, Val::Object { id: b, .. }) = (l, r)
                    && a == b
                {
                    return Ok(true);
                }
                let a = self.text(lhs, scope, l)?;
                let b = self.text(rhs, scope, r)?;
                Ok(a == b)
            }
            (Val::Object { id: a, .. }, Val::Object { id: b, .. }) if a == b => Ok(true),
            (Val::Class { id: a, .. }, Val::Class { id: b, .. }) => Ok(a == b),
            _ => {
                let lu = self.unbox(lhs, scope, l.clone())?;
                let ru = self.unbox(rhs, scope, r.clone())?;
                match (num(&lu), num(&ru)) {
                    (Some(a), Some(b)) => match arith(BinaryOp::Eq, a, b) {
                        Ok(Val::Prim(Prim::Bool(x))) => Ok(x),
                        _ => Ok(false),
                    },
                    _ => match (&lu, &ru) {
                        (Val::Prim(Prim::Bool(a)), Val::Prim(Prim::Bool(b))) => Ok(a == b),
                        (Val::Object { id: a, .. }, Val::Object { id: b, .. }) => Ok(a == b),
                        _ => Ok(false),
                    },
                }
            }
        }
    }
}

/// An operand of `&&` or `||`, which must be a boolean.
fn boolean(v: &Val, span: Span) -> Result<bool, Stop> {
    match v {
        Val::Prim(Prim::Bool(b)) => Ok(*b),
        other => Err(Stop::at(
            span,
            format!("`&&`/`||` need booleans, found a {}", other.kind()),
        )),
    }
}
