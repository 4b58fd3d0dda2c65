//! Conversions for the evaluator: unboxing a wrapper object to its
//! primitive, reading a String's characters, and the text a value
//! contributes to a string concatenation.

use super::arith::{Num, num};
use super::{Answer, Evaluation, Need, NeedKey, R, Stop, Val};
use crate::expr::ast::Expr;
use crate::jdwp::Tag;
use crate::model::Prim;

impl Evaluation<'_> {
    /// The primitive inside `v` if it is a boxed value, else `v` itself.
    pub(super) fn unbox(&mut self, e: &Expr, scope: u64, v: Val) -> R {
        match v {
            Val::Object {
                tag: Tag::Object, ..
            } => match self.ask(
                NeedKey::of(e, scope, 50_000),
                Need::Unbox { target: v.clone() },
            )? {
                Answer::Value(p) => Ok(p),
                _ => Ok(v),
            },
            other => Ok(other),
        }
    }

    /// The characters of a string literal or a `java.lang.String`; `None`
    /// for anything else.
    pub(super) fn text(&mut self, e: &Expr, scope: u64, v: &Val) -> Result<Option<String>, Stop> {
        match v {
            Val::Text(s) => Ok(Some(s.clone())),
            Val::Object {
                tag: Tag::String, ..
            } => match self.ask(
                NeedKey::of(e, scope, 60_000),
                Need::Text { target: v.clone() },
            )? {
                Answer::Value(Val::Text(s)) => Ok(Some(s)),
                Answer::Value(_) => Ok(None),
                Answer::Missing(m) | Answer::Failed(m) => Err(Stop::at(e.span, m)),
            },
            _ => Ok(None),
        }
    }

    /// What `v` contributes to a string concatenation, as Java prints it.
    pub(super) fn as_text(&mut self, e: &Expr, scope: u64, v: &Val) -> Result<String, Stop> {
        if let Some(s) = self.text(e, scope, v)? {
            return Ok(s);
        }
        let v = self.unbox(e, scope, v.clone())?;
        Ok(match v {
            Val::Null => "null".into(),
            Val::Prim(Prim::Bool(b)) => b.to_string(),
            Val::Prim(Prim::Char(c)) => char::from_u32(u32::from(c))
                .map(String::from)
                .unwrap_or_default(),
            other => match num(&other) {
                Some(Num::I(i)) => i.to_string(),
                Some(Num::L(l)) => l.to_string(),
                Some(Num::F(f)) => f.to_string(),
                Some(Num::D(d)) => d.to_string(),
                None => {
                    return Err(Stop::at(
                        e.span,
                        format!("cannot concatenate a {}", other.kind()),
                    ));
                }
            },
        })
    }
}
