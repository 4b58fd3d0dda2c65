//! An expression compiled once and evaluated many times: parsed and
//! checked when it is armed, with every path that starts at a name an
//! event binds (`exception`, `newValue`, `returnValue`, `monitor`) marked,
//! so each hit hands the evaluator the event's value as a [`Val`] instead
//! of source text to parse again. Pure: nothing here reads a JVM.

use super::ast::{Charset, Expr, ExprKind, NodeId, Parsed};
use super::eval::Val;
use super::parser::ParseError;

/// A name an event puts in scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding {
    /// The exception of an exception stop.
    Exception,
    /// The incoming value of a field write.
    NewValue,
    /// The value a method returns.
    ReturnValue,
    /// The lock of a monitor event.
    Monitor,
}

impl Binding {
    /// Every name an event can bind.
    pub const ALL: [Binding; 4] = [
        Binding::Exception,
        Binding::NewValue,
        Binding::ReturnValue,
        Binding::Monitor,
    ];

    /// The name as an expression writes it.
    pub fn name(self) -> &'static str {
        match self {
            Binding::Exception => "exception",
            Binding::NewValue => "newValue",
            Binding::ReturnValue => "returnValue",
            Binding::Monitor => "monitor",
        }
    }

    fn of(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|b| b.name() == name)
    }
}

/// The value one event binds to one name.
#[derive(Debug, Clone, PartialEq)]
pub struct Bound {
    pub name: Binding,
    pub value: Val,
}

/// A parsed and checked expression, ready to be evaluated any number of
/// times.
#[derive(Debug, Clone, PartialEq)]
pub struct Compiled {
    parsed: Parsed,
    /// The paths whose first segment is a name an event may bind. An event
    /// that binds that name answers it; any other leaves the path to the
    /// frame, as if the name were not special.
    slots: Vec<(NodeId, Binding)>,
}

impl Compiled {
    /// Parses and checks `src` (the errors of [`super::parse_checked`]) and
    /// marks the paths that start at a bindable name. A name after a `.`
    /// (`o.newValue`), inside a literal, or in a call position is not a
    /// path's first segment, so it stays what it is.
    pub fn new(src: &str) -> Result<Self, ParseError> {
        let parsed = super::parse_checked(src)?;
        let mut slots = Vec::new();
        let mut stack = vec![&parsed.expr];
        while let Some(e) = stack.pop() {
            if let ExprKind::Path(segments) = &e.kind
                && let Some(b) = segments.first().and_then(|i| Binding::of(&i.name))
            {
                slots.push((e.id, b));
            }
            e.kind.for_each_child(|c| stack.push(c));
        }
        Ok(Self { parsed, slots })
    }

    /// The source as written.
    pub fn source(&self) -> &str {
        &self.parsed.source
    }

    /// The root of the tree.
    pub fn expr(&self) -> &Expr {
        &self.parsed.expr
    }

    /// The trailing `#charset`, if any.
    pub fn charset(&self) -> Option<Charset> {
        self.parsed.charset
    }

    /// The paths that start at a bindable name.
    pub fn slots(&self) -> &[(NodeId, Binding)] {
        &self.slots
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::eval::{Answer, Need, run_compiled};
    use crate::jdwp::Tag;
    use crate::model::Prim;

    /// Evaluates `src` with `bound` in scope; in the frame, `o` is an
    /// object and every other name is `7`.
    fn check(src: &str, bound: Option<Bound>, expect: Result<Val, &str>) {
        let c = Compiled::new(src).expect("compiles");
        let (got, _, _) = run_compiled(&c, bound.as_ref(), |need| match need {
            Need::Name { name } if name == "o" => Answer::Value(Val::Object {
                id: 3,
                tag: Tag::Object,
            }),
            Need::Name { .. } => Answer::Value(Val::Prim(Prim::Int(7))),
            Need::Field { name, .. } => Answer::Value(Val::Text(format!("field {name}"))),
            other => Answer::Missing(format!("{other:?}")),
        });
        match (got, expect) {
            (Ok(v), Ok(want)) => assert_eq!(v, want, "{src}"),
            (Err(e), Err(want)) => assert!(e.message.contains(want), "{src}: {e:?}"),
            (got, want) => panic!("{src}: {got:?}, wanted {want:?}"),
        }
    }

    fn bound(name: Binding, value: Val) -> Option<Bound> {
        Some(Bound { name, value })
    }

    #[test]
    fn bound_names_read_the_event_value_members_and_literals_do_not() {
        let nv = || bound(Binding::NewValue, Val::Prim(Prim::Int(42)));
        check("newValue > 3", nv(), Ok(Val::Prim(Prim::Bool(true))));
        check(
            "newValue % 2 == 0 && newValue != 7",
            nv(),
            Ok(Val::Prim(Prim::Bool(true))),
        );
        // A member named like a binding is the member.
        check(
            "newValue == 42 && o.newValue == \"field newValue\"",
            nv(),
            Ok(Val::Prim(Prim::Bool(true))),
        );
        check(
            "\"newValue\" == \"newValue\"",
            nv(),
            Ok(Val::Prim(Prim::Bool(true))),
        );
        check("newValueX == 7", nv(), Ok(Val::Prim(Prim::Bool(true))));
        // Without the event binding it, the name is the frame's.
        check("newValue == 7", None, Ok(Val::Prim(Prim::Bool(true))));
        check(
            "newValue == 7",
            bound(Binding::ReturnValue, Val::Prim(Prim::Int(1))),
            Ok(Val::Prim(Prim::Bool(true))),
        );
        let ex = bound(
            Binding::Exception,
            Val::Object {
                id: 0x1f,
                tag: Tag::Object,
            },
        );
        check(
            "exception.code",
            ex.clone(),
            Ok(Val::Text("field code".into())),
        );
        check("exception != null", ex, Ok(Val::Prim(Prim::Bool(true))));
        check(
            "returnValue == null",
            bound(Binding::ReturnValue, Val::Null),
            Ok(Val::Prim(Prim::Bool(true))),
        );
        check(
            "returnValue.x",
            bound(Binding::ReturnValue, Val::Null),
            Err("null before `.x`"),
        );
    }

    #[test]
    fn inside_a_filter_the_binding_comes_before_the_element() {
        let xs = Val::Many(vec![Val::Object {
            id: 9,
            tag: Tag::Object,
        }]);
        let c = Compiled::new("xs[?monitor == null].size").expect("compiles");
        let b = bound(Binding::Monitor, Val::Null);
        let (got, _, _) = run_compiled(&c, b.as_ref(), |need| match need {
            Need::Name { .. } => Answer::Value(xs.clone()),
            other => Answer::Failed(format!("asked {other:?}")),
        });
        assert_eq!(got.map_err(|e| e.message), Ok(Val::Prim(Prim::Int(1))));
    }

    #[test]
    fn only_first_segments_of_paths_are_slots() {
        let c = Compiled::new("exception.cause.exception == monitor && o.monitor == 1")
            .expect("compiles");
        let names: Vec<_> = c.slots().iter().map(|(_, b)| *b).collect();
        assert_eq!(names.len(), 2, "{names:?}");
        assert!(names.contains(&Binding::Exception) && names.contains(&Binding::Monitor));
        assert!(Compiled::new("x >").is_err());
    }
}
