//! The sans-IO evaluator. It never talks to a JVM: it walks the tree and,
//! whenever it needs something only the JVM knows (a local, a field, a
//! class, a method call), it stops and hands the caller a list of needs.
//! The caller (the session's driver) does the JDWP reads — all the needs
//! of one step at once, pipelined — and answers them; the evaluator then
//! resumes.
//!
//! Resumption is by replay: each step re-walks the tree from the root with
//! every answer so far cached by (node, scope, part). Answers are never
//! asked twice, so a method in the expression runs exactly once. Reads
//! that do not depend on each other are collected in the same step; an
//! invocation is always asked alone and in source order, and the right side
//! of `&&` / `||` is never looked at before the left side is known.

use std::collections::HashMap;

mod arith;
mod call;
mod convert;
mod filter;
mod names;
mod operators;
mod run;
mod subscript;

use super::ast::{Expr, ExprKind, Literal, NodeId, Span};
use super::compiled::{Binding, Bound, Compiled};
use crate::jdwp::Tag;
use crate::model::Prim;
use names::joined;
pub use run::{run_compiled, run_with};

/// A value during evaluation.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    /// A value of a primitive type.
    Prim(Prim),
    Null,
    /// A string literal that does not exist in the JVM (yet).
    Text(String),
    /// An object in the JVM: its id and JDWP tag (`Tag::String` for a
    /// `java.lang.String`, `Tag::Array` for arrays).
    Object {
        id: u64,
        tag: Tag,
    },
    /// A class, for static members.
    Class {
        id: u64,
        name: String,
    },
    /// Elements of a slice or filter over an array or List.
    Many(Vec<Val>),
    /// Entries of a slice or filter over a Map.
    Entries(Vec<(Val, Val)>),
}

impl Val {
    fn is_string_object(&self) -> bool {
        matches!(
            self,
            Val::Object {
                tag: Tag::String,
                ..
            }
        )
    }

    /// A short name of the kind of value, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Val::Prim(p) => p.kind(),
            Val::Null => "null",
            Val::Text(_) => "string literal",
            Val::Object {
                tag: Tag::String, ..
            } => "String",
            Val::Object {
                tag: Tag::Array, ..
            } => "array",
            Val::Object { .. } => "object",
            Val::Class { .. } => "class",
            Val::Many(_) => "element list",
            Val::Entries(_) => "map entries",
        }
    }
}

/// Something only the JVM can answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Need {
    /// A bare name in the frame: a local, else a field of `this`, else a
    /// static of the frame's class (each walking superclasses).
    Name { name: String },
    /// A loaded class by qualified name, optionally the copy a given class
    /// loader defined.
    Class { name: String, loader: Option<u64> },
    /// `this` of the frame.
    This,
    /// The local `name` of the frame `depth` levels below the current one.
    FrameLocal { depth: u32, name: String },
    /// A field of an object, or a static field of a class; `length` of an
    /// array.
    Field { target: Val, name: String },
    /// A method call. `target` `None` means a method of `this` or a static
    /// of the frame's class.
    Invoke {
        target: Option<Val>,
        name: String,
        args: Vec<Val>,
    },
    /// `new class(args)`: a constructor run on the invoking thread.
    New { class: String, args: Vec<Val> },
    /// `target[key]` on an array, List or Map.
    Index { target: Val, key: Val },
    /// Elements `[from, to)` of an array or List, or all entries of a Map.
    Elements {
        target: Val,
        from: Option<i64>,
        to: Option<i64>,
    },
    /// The characters of a `java.lang.String`.
    Text { target: Val },
    /// The primitive inside a boxed value (`Integer`, `Long`, …); `Missing`
    /// when the object is not a box.
    Unbox { target: Val },
}

impl Need {
    /// True for a need that runs code in the JVM.
    pub fn invokes(&self) -> bool {
        matches!(self, Need::Invoke { .. } | Need::New { .. })
    }
}

/// The caller's answer to a need.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    Value(Val),
    /// No such thing (name, class, field, method); the text says what was
    /// searched.
    Missing(String),
    /// The read or call failed; the text says why.
    Failed(String),
}

/// Identifies one need within an evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NeedKey {
    pub node: u32,
    /// The element a filter predicate is being evaluated against (0 at
    /// top level).
    pub scope: u64,
    pub part: u32,
}

/// An evaluation failure, pointing into the source.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalError {
    pub span: Span,
    pub message: String,
}

impl EvalError {
    fn at(span: Span, message: impl Into<String>) -> Self {
        Self {
            span,
            message: message.into(),
        }
    }

    /// A chain that met a null before `.name` (`at`: the `.` and the
    /// name, where the caret goes): the wire's evaluator and a probe's
    /// field path say it alike.
    pub fn null_before(at: Span, name: &str) -> Self {
        Self::at(at, format!("null before `.{name}`"))
    }

    /// `column N: message`.
    pub fn render(&self, src: &str) -> String {
        format!("column {}: {}", self.span.column(src), self.message)
    }
}

/// One link of a chain as it was evaluated: its source text and value.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    pub span: Span,
    pub value: Val,
}

/// What the caller does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Answer these (in any order; reads may be issued together).
    Needs(Vec<(NeedKey, Need)>),
    /// Finished.
    Done(Result<Val, EvalError>),
}

enum Stop {
    Pending,
    Error(EvalError),
}

impl Stop {
    /// A failure at `span`: the shape nearly every evaluation error takes.
    fn at(span: Span, message: impl Into<String>) -> Self {
        Stop::Error(EvalError::at(span, message))
    }
}

impl NeedKey {
    /// The key of need `part` of node `e`, evaluated in `scope`.
    fn of(e: &Expr, scope: u64, part: u32) -> Self {
        Self {
            node: e.id.0,
            scope,
            part,
        }
    }
}

type R = Result<Val, Stop>;

/// One evaluation of a parsed expression.
pub struct Evaluation<'e> {
    root: &'e Expr,
    /// The paths that start at a name an event may bind.
    slots: &'e [(NodeId, Binding)],
    /// The value this evaluation's event binds, if any.
    bound: Option<&'e Bound>,
    answers: HashMap<NeedKey, Answer>,
    pending: Vec<(NeedKey, Need)>,
    invoke_pending: bool,
    links: Vec<Link>,
    /// Needs answered so far (for the reply's cost line).
    pub asked: usize,
    steps: usize,
}

/// Upper bound on steps, so a driver bug can never loop forever.
const MAX_STEPS: usize = 10_000;

impl<'e> Evaluation<'e> {
    pub fn new(root: &'e Expr) -> Self {
        Self {
            root,
            slots: &[],
            bound: None,
            answers: HashMap::new(),
            pending: Vec::new(),
            invoke_pending: false,
            links: Vec::new(),
            asked: 0,
            steps: 0,
        }
    }

    /// An evaluation of a compiled expression, with the value its event
    /// binds (if any) in scope: a path that starts at the bound name reads
    /// that value instead of asking the frame.
    pub fn compiled(c: &'e Compiled, bound: Option<&'e Bound>) -> Self {
        Self {
            slots: c.slots(),
            bound,
            ..Self::new(c.expr())
        }
    }

    /// The event's value, when `e` is a path that starts at the name it
    /// binds.
    fn bound_at(&self, e: &Expr) -> Option<Val> {
        let b = self.bound?;
        self.slots
            .iter()
            .any(|&(node, name)| node == e.id && name == b.name)
            .then(|| b.value.clone())
    }

    /// Walks the tree with what is known; returns the next needs or the
    /// result.
    pub fn step(&mut self) -> Step {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Step::Done(Err(EvalError::at(
                self.root.span,
                "evaluation did not converge",
            )));
        }
        self.pending.clear();
        self.invoke_pending = false;
        self.links.clear();
        let root = self.root;
        match self.eval(root, 0) {
            Ok(v) => Step::Done(Ok(v)),
            Err(Stop::Error(e)) => Step::Done(Err(e)),
            Err(Stop::Pending) => {
                let mut needs = std::mem::take(&mut self.pending);
                needs.dedup_by(|a, b| a.0 == b.0);
                Step::Needs(needs)
            }
        }
    }

    /// Records the answer to one need.
    pub fn answer(&mut self, key: NeedKey, answer: Answer) {
        self.asked += 1;
        self.answers.insert(key, answer);
    }

    /// The chain links evaluated in the last step, in order.
    pub fn links(&self) -> &[Link] {
        &self.links
    }

    fn ask(&mut self, key: NeedKey, need: Need) -> Result<Answer, Stop> {
        if let Some(a) = self.answers.get(&key) {
            return Ok(a.clone());
        }
        if self.invoke_pending {
            return Err(Stop::Pending);
        }
        if need.invokes() {
            // An invocation goes alone, after everything before it.
            if !self.pending.is_empty() {
                return Err(Stop::Pending);
            }
            self.invoke_pending = true;
        }
        self.pending.push((key, need));
        Err(Stop::Pending)
    }

    fn value(&mut self, key: NeedKey, need: Need, span: Span) -> R {
        match self.ask(key, need)? {
            Answer::Value(v) => Ok(v),
            Answer::Missing(m) | Answer::Failed(m) => Err(Stop::at(span, m)),
        }
    }

    fn link(&mut self, span: Span, value: &Val) {
        self.links.push(Link {
            span,
            value: value.clone(),
        });
    }

    /// Evaluates one node. Each kind has its own function; the kinds that
    /// yield a link of the chain (a leaf object, a member, a call, a
    /// subscript) are recorded here, once, after they succeed.
    fn eval(&mut self, e: &Expr, scope: u64) -> R {
        let v = match &e.kind {
            ExprKind::Literal(l) => return Ok(literal(l)),
            ExprKind::Path(segments) => return self.path(e, segments, scope),
            ExprKind::Unary { op, operand } => return self.unary(*op, operand, scope, Self::eval),
            ExprKind::Binary { op, lhs, rhs } => {
                return self.binary(e, *op, lhs, rhs, scope, Self::eval);
            }
            ExprKind::This => self.value(NeedKey::of(e, scope, 0), Need::This, e.span)?,
            ExprKind::FrameLocal { depth, name } => self.value(
                NeedKey::of(e, scope, 0),
                Need::FrameLocal {
                    depth: *depth,
                    name: name.name.clone(),
                },
                e.span,
            )?,
            ExprKind::Handle(id) => Val::Object {
                id: *id,
                tag: Tag::Object,
            },
            ExprKind::PinnedClass { path, loader } => self.value(
                NeedKey::of(e, scope, 0),
                Need::Class {
                    name: joined(path),
                    loader: Some(*loader),
                },
                e.span,
            )?,
            ExprKind::Field { target, name } => {
                let t = self.eval(target, scope)?;
                self.field(NeedKey::of(e, scope, 0), &t, name)?
            }
            ExprKind::Call { target, name, args } => {
                self.call(e, target.as_deref(), name, args, scope)?
            }
            ExprKind::New { class, args } => self.new_instance(e, class, args, scope)?,
            ExprKind::Index { target, index } => self.index(e, target, index, scope)?,
            ExprKind::Slice { target, from, to } => {
                self.slice(e, target, from.as_deref(), to.as_deref(), scope)?
            }
            ExprKind::Filter { target, predicate } => self.filter(e, target, predicate, scope)?,
        };
        self.link(e.span, &v);
        Ok(v)
    }
}

fn literal(l: &Literal) -> Val {
    match l {
        Literal::Int(v) => Val::Prim(Prim::Int(*v)),
        Literal::Long(v) => Val::Prim(Prim::Long(*v)),
        Literal::Float(v) => Val::Prim(Prim::Float(*v)),
        Literal::Double(v) => Val::Prim(Prim::Double(*v)),
        Literal::Char(v) => Val::Prim(Prim::Char(*v)),
        Literal::Bool(v) => Val::Prim(Prim::Bool(*v)),
        Literal::Null => Val::Null,
        Literal::String(s) => Val::Text(s.clone()),
    }
}

#[cfg(test)]
mod tests;
