//! Subscripts for the evaluator: `xs[i]` and `m[k]`, and slices
//! `xs[a..b]`; elements already in hand are cut here, JVM objects are
//! asked of the caller.

use super::arith::{Num, num};
use super::names::joined;
use super::{Evaluation, Need, NeedKey, R, Stop, Val};
use crate::expr::ast::{Expr, ExprKind, Span};

impl Evaluation<'_> {
    /// `target[index]`.
    pub(super) fn index(&mut self, e: &Expr, target: &Expr, index: &Expr, scope: u64) -> R {
        let t = self.eval(target, scope);
        let k = self.eval(index, scope)?;
        let t = t?;
        match &t {
            Val::Many(items) => {
                let i = as_index(&k, index.span)?;
                items.get(i).cloned().ok_or_else(|| {
                    Stop::at(
                        index.span,
                        format!("index {i} out of range for {} elements", items.len()),
                    )
                })
            }
            Val::Null => Err(Stop::at(
                target.span,
                format!("`{}` is null", src_hint(target)),
            )),
            Val::Object { .. } => self.value(
                NeedKey::of(e, scope, 0),
                Need::Index {
                    target: t.clone(),
                    key: k,
                },
                e.span,
            ),
            other => Err(Stop::at(
                target.span,
                format!("cannot subscript a {}", other.kind()),
            )),
        }
    }

    /// `target[from..to]`, either bound optional.
    pub(super) fn slice(
        &mut self,
        e: &Expr,
        target: &Expr,
        from: Option<&Expr>,
        to: Option<&Expr>,
        scope: u64,
    ) -> R {
        let t = self.eval(target, scope);
        let f = self.bound(from, scope)?;
        let u = self.bound(to, scope)?;
        let t = t?;
        match &t {
            Val::Many(items) => {
                let end = u.unwrap_or(items.len()).min(items.len());
                let start = f.unwrap_or(0).min(end);
                Ok(Val::Many(items[start..end].to_vec()))
            }
            Val::Object { .. } => self.elements(e, scope, &t, f, u),
            other => Err(Stop::at(
                target.span,
                format!("cannot slice a {}", other.kind()),
            )),
        }
    }

    fn bound(&mut self, bound: Option<&Expr>, scope: u64) -> Result<Option<usize>, Stop> {
        match bound {
            Some(b) => Ok(Some(
                self.eval(b, scope).and_then(|v| as_index(&v, b.span))?,
            )),
            None => Ok(None),
        }
    }

    /// Asks for elements `[from, to)` of a JVM array or List (all of them,
    /// or all entries of a Map, when both bounds are open).
    pub(super) fn elements(
        &mut self,
        e: &Expr,
        scope: u64,
        target: &Val,
        from: Option<usize>,
        to: Option<usize>,
    ) -> R {
        self.value(
            NeedKey::of(e, scope, 0),
            Need::Elements {
                target: target.clone(),
                from: from.map(|x| x as i64),
                to: to.map(|x| x as i64),
            },
            e.span,
        )
    }
}

/// How a null subscript target is named in its error.
fn src_hint(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Path(p) => joined(p),
        _ => "the value".into(),
    }
}

fn as_index(v: &Val, span: Span) -> Result<usize, Stop> {
    match num(v) {
        Some(Num::I(i)) if i >= 0 => Ok(i as usize),
        Some(Num::L(l)) if l >= 0 && l <= i64::from(i32::MAX) => Ok(l as usize),
        _ => Err(Stop::at(
            span,
            format!("an index must be a non-negative int, found a {}", v.kind()),
        )),
    }
}
