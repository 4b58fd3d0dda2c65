//! Method calls for the evaluator: the receiver and the arguments are
//! evaluated together, then the invocation is asked of the caller.

use super::{Evaluation, Need, NeedKey, R, Stop, Val};
use crate::expr::ast::{Expr, Ident, Span};

impl Evaluation<'_> {
    /// `target.name(args)`, or `name(args)` on `this` or the frame's class.
    pub(super) fn call(
        &mut self,
        e: &Expr,
        target: Option<&Expr>,
        name: &Ident,
        args: &[Expr],
        scope: u64,
    ) -> R {
        // The receiver and every argument are walked before any failure is
        // reported, so their reads are collected in the same step.
        let t = target.map(|t| self.eval(t, scope));
        let (vals, stop) = self.eval_all(args, scope);
        let t = t.transpose()?;
        if let Some(s) = stop {
            return Err(s);
        }
        if let Some(t) = &t {
            null_check(
                t,
                Span::new(name.span.start.saturating_sub(1), name.span.end),
                &name.name,
            )?;
        }
        self.value(
            NeedKey::of(e, scope, 0),
            Need::Invoke {
                target: t,
                name: name.name.clone(),
                args: vals,
            },
            name.span,
        )
    }
}

impl Evaluation<'_> {
    /// Evaluates every argument, so their reads are collected in the same
    /// step, and answers the values and the first stop.
    fn eval_all(&mut self, args: &[Expr], scope: u64) -> (Vec<Val>, Option<Stop>) {
        let mut vals = Vec::with_capacity(args.len());
        let mut stop = None;
        for a in args {
            match self.eval(a, scope) {
                Ok(v) => vals.push(v),
                Err(s) => {
                    stop.get_or_insert(s);
                }
            }
        }
        (vals, stop)
    }

    /// `new class(args)`: the arguments are evaluated together, then the
    /// construction is asked of the caller like an invocation.
    pub(super) fn new_instance(
        &mut self,
        e: &Expr,
        class: &[Ident],
        args: &[Expr],
        scope: u64,
    ) -> R {
        let (vals, stop) = self.eval_all(args, scope);
        if let Some(s) = stop {
            return Err(s);
        }
        let name = class
            .iter()
            .map(|i| i.name.as_str())
            .collect::<Vec<_>>()
            .join(".");
        self.value(
            NeedKey::of(e, scope, 0),
            Need::New {
                class: name,
                args: vals,
            },
            e.span,
        )
    }
}

fn null_check(t: &Val, span: Span, method: &str) -> Result<(), Stop> {
    match t {
        Val::Null | Val::Object { id: 0, .. } => {
            Err(Stop::at(span, format!("null before `.{method}(…)`")))
        }
        _ => Ok(()),
    }
}
