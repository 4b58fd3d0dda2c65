//! Filters for the evaluator: `xs[?p]` keeps the elements (or map
//! entries) for which the predicate holds, with each element in scope as
//! `it` and its fields as bare names.

use super::{Answer, Evaluation, Need, NeedKey, R, Stop, Val};
use crate::expr::ast::{Expr, ExprKind, UnaryOp};
use crate::model::Prim;

impl Evaluation<'_> {
    /// `target[?predicate]`.
    pub(super) fn filter(&mut self, e: &Expr, target: &Expr, predicate: &Expr, scope: u64) -> R {
        let t = self.eval(target, scope)?;
        let all = match &t {
            Val::Many(_) | Val::Entries(_) => t.clone(),
            Val::Object { .. } => self.elements(e, scope, &t, None, None)?,
            other => return Err(cannot_filter(target, other)),
        };
        match all {
            Val::Many(items) => Ok(Val::Many(self.keep(predicate, items, |item| item)?)),
            Val::Entries(entries) => Ok(Val::Entries(self.keep(
                predicate,
                entries,
                |(_, item)| item,
            )?)),
            other => Err(cannot_filter(target, &other)),
        }
    }

    /// The members for which `predicate` holds on their element. Every
    /// member is tried before a failure is reported, so the reads of all
    /// elements are collected in the same step.
    fn keep<T>(
        &mut self,
        predicate: &Expr,
        members: Vec<T>,
        element: impl Fn(&T) -> &Val,
    ) -> Result<Vec<T>, Stop> {
        let mut keep = Vec::new();
        let mut stop = None;
        for member in members {
            match self.predicate(predicate, element(&member)) {
                Ok(true) => keep.push(member),
                Ok(false) => {}
                Err(s) => {
                    stop.get_or_insert(s);
                }
            }
        }
        match stop {
            Some(s) => Err(s),
            None => Ok(keep),
        }
    }

    /// Evaluates a filter predicate with `item` as the first place bare
    /// names are looked up.
    fn predicate(&mut self, predicate: &Expr, item: &Val) -> Result<bool, Stop> {
        let scope = match item {
            Val::Object { id, .. } => *id,
            // Primitive elements: names resolve in the frame as usual.
            _ => 0,
        };
        let saved = self.links.len();
        let v = self.eval_in_item(predicate, item, scope);
        self.links.truncate(saved);
        match v? {
            Val::Prim(Prim::Bool(b)) => Ok(b),
            other => Err(Stop::at(
                predicate.span,
                format!("a filter needs a boolean, found a {}", other.kind()),
            )),
        }
    }

    fn eval_in_item(&mut self, e: &Expr, item: &Val, scope: u64) -> R {
        // The element itself is in scope as `it`, and its fields are bare
        // names. Paths are rewritten on the fly: the first segment is tried
        // as a field of the element, unless the event binds it.
        if let ExprKind::Path(segments) = &e.kind
            && scope != 0
            && self.bound_at(e).is_none()
            && let Some(first) = segments.first()
        {
            if first.name == "it" {
                return self.walk_fields(e, item.clone(), &segments[1..], scope, 1);
            }
            let need = Need::Field {
                target: item.clone(),
                name: first.name.clone(),
            };
            return match self.ask(NeedKey::of(e, scope, 9_000), need)? {
                Answer::Value(v) => self.walk_fields(e, v, &segments[1..], scope, 1),
                Answer::Missing(_) => self.path(e, segments, 0),
                Answer::Failed(m) => Err(Stop::at(first.span, m)),
            };
        }
        // Operators re-enter with the element scope on their operands;
        // anything else (a call, a subscript, `-`) is evaluated as usual.
        let in_item = |ev: &mut Self, x: &Expr, scope: u64| ev.eval_in_item(x, item, scope);
        match &e.kind {
            ExprKind::Binary { op, lhs, rhs } => self.binary(e, *op, lhs, rhs, scope, in_item),
            ExprKind::Unary {
                op: UnaryOp::Not,
                operand,
            } => self.unary(UnaryOp::Not, operand, scope, in_item),
            _ => self.eval(e, scope),
        }
    }
}

fn cannot_filter(target: &Expr, what: &Val) -> Stop {
    Stop::at(target.span, format!("cannot filter a {}", what.kind()))
}
