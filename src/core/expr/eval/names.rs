//! Name resolution for the evaluator: a leading path (`a.b.c`) tried as a
//! name in the frame and then as a loaded class, the fields that follow
//! it, and reading one field of a value.

use super::{Answer, EvalError, Evaluation, Need, NeedKey, R, Stop, Val};
use crate::expr::ast::{Expr, Ident, Span};
use crate::model::Prim;

/// The most dotted parts a class name is looked up with (packages and
/// nested classes together); no class name of real code comes near it.
pub const MAX_CLASS_NAME_PARTS: usize = 16;

impl Evaluation<'_> {
    pub(super) fn path(&mut self, e: &Expr, segments: &[Ident], scope: u64) -> R {
        let Some(first) = segments.first() else {
            return Err(Stop::at(e.span, "empty name"));
        };
        if let Some(v) = self.bound_at(e) {
            self.link(first.span, &v);
            return self.walk_fields(e, v, &segments[1..], scope, 1);
        }
        match self.ask(
            NeedKey::of(e, scope, 0),
            Need::Name {
                name: first.name.clone(),
            },
        )? {
            Answer::Value(v) => {
                self.link(first.span, &v);
                self.walk_fields(e, v, &segments[1..], scope, 1)
            }
            Answer::Failed(m) => Err(Stop::at(first.span, m)),
            Answer::Missing(why) => self.class_path(e, segments, scope, &why),
        }
    }

    /// The path is not a name in the frame: the shortest prefix that is a
    /// loaded class wins, and every prefix is asked at once so the lookup
    /// costs one round trip. Only the first [`MAX_CLASS_NAME_PARTS`]
    /// prefixes are asked: each is several lookups (its nested forms), so
    /// a long chain would otherwise cost the square of its length.
    fn class_path(&mut self, e: &Expr, segments: &[Ident], scope: u64, why: &str) -> R {
        let mut found = None;
        let mut pending = false;
        for n in 1..=segments.len().min(MAX_CLASS_NAME_PARTS) {
            let name = joined(&segments[..n]);
            let key = NeedKey::of(e, scope, 100 + n as u32);
            match self.ask(key, Need::Class { name, loader: None }) {
                Ok(Answer::Value(v)) => {
                    found = Some((n, v));
                    break;
                }
                // A lookup that failed (a timeout, a lost connection) says
                // nothing about whether the class is loaded: report it
                // rather than read it as "no such class".
                Ok(Answer::Failed(m)) if !pending => {
                    return Err(Stop::at(segments[0].span, m));
                }
                Ok(_) => {}
                Err(Stop::Pending) => pending = true,
                Err(s) => return Err(s),
            }
        }
        match found {
            Some((n, v)) if !pending => {
                let span = segments[0].span.to(segments[n - 1].span);
                self.link(span, &v);
                self.walk_fields(e, v, &segments[n..], scope, 1 + n as u32)
            }
            _ if pending => Err(Stop::Pending),
            _ if segments.len() > MAX_CLASS_NAME_PARTS => Err(Stop::at(
                segments[0].span,
                format!(
                    "{why}; and no loaded class is named by its first {MAX_CLASS_NAME_PARTS} parts or fewer (`{}.…`, {} parts in all)",
                    joined(&segments[..3]),
                    segments.len()
                ),
            )),
            _ => Err(Stop::at(
                segments[0].span,
                format!("{why}; and no loaded class is named `{}`", joined(segments)),
            )),
        }
    }

    pub(super) fn walk_fields(
        &mut self,
        e: &Expr,
        mut v: Val,
        rest: &[Ident],
        scope: u64,
        first_part: u32,
    ) -> R {
        for (i, seg) in rest.iter().enumerate() {
            let key = NeedKey::of(e, scope, 1_000 + first_part + i as u32);
            v = self.field(key, &v, seg)?;
            self.link(Span::new(e.span.start, seg.span.end), &v);
        }
        Ok(v)
    }

    pub(super) fn field(&mut self, key: NeedKey, target: &Val, name: &Ident) -> R {
        match target {
            // The caret goes under the `.name` the null stopped, not under
            // the start of the chain.
            Val::Null => Err(Stop::Error(EvalError::null_before(
                Span::new(name.span.start.saturating_sub(1), name.span.end),
                &name.name,
            ))),
            Val::Many(items) if name.name == "length" || name.name == "size" => {
                Ok(Val::Prim(Prim::Int(items.len() as i32)))
            }
            Val::Entries(items) if name.name == "length" || name.name == "size" => {
                Ok(Val::Prim(Prim::Int(items.len() as i32)))
            }
            Val::Object { .. } | Val::Class { .. } => self.value(
                key,
                Need::Field {
                    target: target.clone(),
                    name: name.name.clone(),
                },
                name.span,
            ),
            other => Err(Stop::at(
                name.span,
                format!("a {} has no field `{}`", other.kind(), name.name),
            )),
        }
    }
}

/// A path's segments as one dotted name.
pub(super) fn joined(path: &[Ident]) -> String {
    path.iter()
        .map(|i| i.name.as_str())
        .collect::<Vec<_>>()
        .join(".")
}
