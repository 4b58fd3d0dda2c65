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
mod run;

use super::ast::{BinaryOp, Expr, ExprKind, Ident, Literal, Span, UnaryOp};
use crate::jdwp::Tag;
use arith::{Num, arith, negate, num};
pub use run::run_with;

/// A value during evaluation.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Bool(bool),
    Byte(i8),
    Short(i16),
    Char(u16),
    Int(i32),
    Long(i64),
    Float(f32),
    Double(f64),
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
            Val::Bool(_) => "boolean",
            Val::Byte(_) => "byte",
            Val::Short(_) => "short",
            Val::Char(_) => "char",
            Val::Int(_) => "int",
            Val::Long(_) => "long",
            Val::Float(_) => "float",
            Val::Double(_) => "double",
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
        matches!(self, Need::Invoke { .. })
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

type R = Result<Val, Stop>;

/// One evaluation of a parsed expression.
pub struct Evaluation<'e> {
    root: &'e Expr,
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
            answers: HashMap::new(),
            pending: Vec::new(),
            invoke_pending: false,
            links: Vec::new(),
            asked: 0,
            steps: 0,
        }
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
            Answer::Missing(m) | Answer::Failed(m) => Err(Stop::Error(EvalError::at(span, m))),
        }
    }

    fn link(&mut self, span: Span, value: &Val) {
        self.links.push(Link {
            span,
            value: value.clone(),
        });
    }

    fn eval(&mut self, e: &Expr, scope: u64) -> R {
        let key = |part: u32| NeedKey {
            node: e.id.0,
            scope,
            part,
        };
        match &e.kind {
            ExprKind::Literal(l) => Ok(literal(l)),
            ExprKind::This => {
                let v = self.value(key(0), Need::This, e.span)?;
                self.link(e.span, &v);
                Ok(v)
            }
            ExprKind::Handle(id) => {
                let v = Val::Object {
                    id: *id,
                    tag: Tag::Object,
                };
                self.link(e.span, &v);
                Ok(v)
            }
            ExprKind::PinnedClass { path, loader } => {
                let name = joined(path);
                let v = self.value(
                    key(0),
                    Need::Class {
                        name,
                        loader: Some(*loader),
                    },
                    e.span,
                )?;
                self.link(e.span, &v);
                Ok(v)
            }
            ExprKind::Path(segments) => self.path(e, segments, scope),
            ExprKind::Field { target, name } => {
                let t = self.eval(target, scope)?;
                let v = self.field(key(0), &t, name, target.span)?;
                self.link(e.span, &v);
                Ok(v)
            }
            ExprKind::Call { target, name, args } => {
                let t = target.as_ref().map(|t| self.eval(t, scope));
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
                let t = match t {
                    Some(Ok(v)) => Some(v),
                    Some(Err(s)) => return Err(s),
                    None => None,
                };
                if let Some(s) = stop {
                    return Err(s);
                }
                if let Some(t) = &t {
                    null_check(
                        t,
                        target.as_deref().map(|t| t.span).unwrap_or(e.span),
                        &name.name,
                    )?;
                }
                let v = self.value(
                    key(0),
                    Need::Invoke {
                        target: t,
                        name: name.name.clone(),
                        args: vals,
                    },
                    name.span,
                )?;
                self.link(e.span, &v);
                Ok(v)
            }
            ExprKind::Index { target, index } => {
                let t = self.eval(target, scope);
                let k = self.eval(index, scope)?;
                let t = t?;
                let v = match &t {
                    Val::Many(items) => {
                        let i = as_index(&k, index.span)?;
                        items.get(i).cloned().ok_or_else(|| {
                            Stop::Error(EvalError::at(
                                index.span,
                                format!("index {i} out of range for {} elements", items.len()),
                            ))
                        })?
                    }
                    Val::Null => {
                        return Err(Stop::Error(EvalError::at(
                            target.span,
                            format!("`{}` is null", src_hint(target)),
                        )));
                    }
                    Val::Object { .. } => self.value(
                        key(0),
                        Need::Index {
                            target: t.clone(),
                            key: k,
                        },
                        e.span,
                    )?,
                    other => {
                        return Err(Stop::Error(EvalError::at(
                            target.span,
                            format!("cannot subscript a {}", other.kind()),
                        )));
                    }
                };
                self.link(e.span, &v);
                Ok(v)
            }
            ExprKind::Slice { target, from, to } => {
                let t = self.eval(target, scope);
                let f = match from {
                    Some(f) => Some(self.eval(f, scope).and_then(|v| as_index(&v, f.span))?),
                    None => None,
                };
                let u = match to {
                    Some(u) => Some(self.eval(u, scope).and_then(|v| as_index(&v, u.span))?),
                    None => None,
                };
                let t = t?;
                let v = match &t {
                    Val::Many(items) => {
                        let end = u.unwrap_or(items.len()).min(items.len());
                        let start = f.unwrap_or(0).min(end);
                        Val::Many(items[start..end].to_vec())
                    }
                    Val::Object { .. } => self.value(
                        key(0),
                        Need::Elements {
                            target: t.clone(),
                            from: f.map(|x| x as i64),
                            to: u.map(|x| x as i64),
                        },
                        e.span,
                    )?,
                    other => {
                        return Err(Stop::Error(EvalError::at(
                            target.span,
                            format!("cannot slice a {}", other.kind()),
                        )));
                    }
                };
                self.link(e.span, &v);
                Ok(v)
            }
            ExprKind::Filter { target, predicate } => {
                let t = self.eval(target, scope)?;
                let all = match &t {
                    Val::Many(_) | Val::Entries(_) => t.clone(),
                    Val::Object { .. } => self.value(
                        key(0),
                        Need::Elements {
                            target: t.clone(),
                            from: None,
                            to: None,
                        },
                        e.span,
                    )?,
                    other => {
                        return Err(Stop::Error(EvalError::at(
                            target.span,
                            format!("cannot filter a {}", other.kind()),
                        )));
                    }
                };
                let v = match all {
                    Val::Many(items) => {
                        let mut keep = Vec::new();
                        let mut stop = None;
                        for item in items {
                            match self.predicate(predicate, &item) {
                                Ok(true) => keep.push(item),
                                Ok(false) => {}
                                Err(s) => {
                                    stop.get_or_insert(s);
                                }
                            }
                        }
                        if let Some(s) = stop {
                            return Err(s);
                        }
                        Val::Many(keep)
                    }
                    Val::Entries(entries) => {
                        let mut keep = Vec::new();
                        let mut stop = None;
                        for (k, item) in entries {
                            match self.predicate(predicate, &item) {
                                Ok(true) => keep.push((k, item)),
                                Ok(false) => {}
                                Err(s) => {
                                    stop.get_or_insert(s);
                                }
                            }
                        }
                        if let Some(s) = stop {
                            return Err(s);
                        }
                        Val::Entries(keep)
                    }
                    other => {
                        return Err(Stop::Error(EvalError::at(
                            target.span,
                            format!("cannot filter a {}", other.kind()),
                        )));
                    }
                };
                self.link(e.span, &v);
                Ok(v)
            }
            ExprKind::Unary { op, operand } => {
                let v = self.eval(operand, scope)?;
                let v = self.unbox(operand, scope, v)?;
                match (op, v) {
                    (UnaryOp::Not, Val::Bool(b)) => Ok(Val::Bool(!b)),
                    (UnaryOp::Neg, v) => negate(&v).ok_or_else(|| {
                        Stop::Error(EvalError::at(
                            operand.span,
                            format!("cannot negate a {}", v.kind()),
                        ))
                    }),
                    (UnaryOp::Not, v) => Err(Stop::Error(EvalError::at(
                        operand.span,
                        format!("`!` needs a boolean, found a {}", v.kind()),
                    ))),
                }
            }
            ExprKind::Binary { op, lhs, rhs } => self.binary(e, *op, lhs, rhs, scope),
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
            Val::Bool(b) => Ok(b),
            other => Err(Stop::Error(EvalError::at(
                predicate.span,
                format!("a filter needs a boolean, found a {}", other.kind()),
            ))),
        }
    }

    fn eval_in_item(&mut self, e: &Expr, item: &Val, scope: u64) -> R {
        // The element itself is in scope as `it`, and its fields are bare
        // names. Paths are rewritten on the fly: the first segment is tried
        // as a field of the element.
        if let ExprKind::Path(segments) = &e.kind
            && scope != 0
            && let Some(first) = segments.first()
        {
            if first.name == "it" {
                return self.walk_fields(e, item.clone(), &segments[1..], scope, 1);
            }
            let key = NeedKey {
                node: e.id.0,
                scope,
                part: 9_000,
            };
            match self.ask(
                key,
                Need::Field {
                    target: item.clone(),
                    name: first.name.clone(),
                },
            )? {
                Answer::Value(v) => return self.walk_fields(e, v, &segments[1..], scope, 1),
                Answer::Missing(_) => return self.path(e, segments, 0),
                Answer::Failed(m) => return Err(Stop::Error(EvalError::at(first.span, m))),
            }
        }
        match &e.kind {
            ExprKind::Binary { op, lhs, rhs } => {
                // Re-enter with the element scope on both sides.
                let l = self.eval_in_item(lhs, item, scope);
                match op {
                    BinaryOp::And | BinaryOp::Or => {
                        let l = self.unbox(lhs, scope, l?)?;
                        let Val::Bool(lb) = l else {
                            return Err(Stop::Error(EvalError::at(
                                lhs.span,
                                format!("`&&`/`||` need booleans, found a {}", l.kind()),
                            )));
                        };
                        if (*op == BinaryOp::And && !lb) || (*op == BinaryOp::Or && lb) {
                            return Ok(Val::Bool(lb));
                        }
                        let r = self.eval_in_item(rhs, item, scope)?;
                        let r = self.unbox(rhs, scope, r)?;
                        truthy(&r, rhs.span)
                    }
                    _ => {
                        let r = self.eval_in_item(rhs, item, scope);
                        let (l, r) = (l?, r?);
                        self.combine(e, *op, lhs, l, rhs, r, scope)
                    }
                }
            }
            ExprKind::Unary {
                op: UnaryOp::Not,
                operand,
            } => {
                let v = self.eval_in_item(operand, item, scope)?;
                match self.unbox(operand, scope, v)? {
                    Val::Bool(b) => Ok(Val::Bool(!b)),
                    other => Err(Stop::Error(EvalError::at(
                        operand.span,
                        format!("`!` needs a boolean, found a {}", other.kind()),
                    ))),
                }
            }
            _ => self.eval(e, scope),
        }
    }

    fn path(&mut self, e: &Expr, segments: &[Ident], scope: u64) -> R {
        let Some(first) = segments.first() else {
            return Err(Stop::Error(EvalError::at(e.span, "empty name")));
        };
        let key = |part: u32| NeedKey {
            node: e.id.0,
            scope,
            part,
        };
        match self.ask(
            key(0),
            Need::Name {
                name: first.name.clone(),
            },
        )? {
            Answer::Value(v) => {
                self.link(first.span, &v);
                self.walk_fields(e, v, &segments[1..], scope, 1)
            }
            Answer::Failed(m) => Err(Stop::Error(EvalError::at(first.span, m))),
            Answer::Missing(why) => {
                // Not a name in the frame: the longest… no, the shortest
                // prefix that is a loaded class wins (all asked at once).
                let mut found = None;
                let mut pending = false;
                for n in 1..=segments.len() {
                    let name = joined(&segments[..n]);
                    match self.ask(key(100 + n as u32), Need::Class { name, loader: None }) {
                        Ok(Answer::Value(v)) => {
                            found = Some((n, v));
                            break;
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
                    _ => Err(Stop::Error(EvalError::at(
                        first.span,
                        format!("{why}; and no loaded class is named `{}`", joined(segments)),
                    ))),
                }
            }
        }
    }

    fn walk_fields(
        &mut self,
        e: &Expr,
        mut v: Val,
        rest: &[Ident],
        scope: u64,
        first_part: u32,
    ) -> R {
        for (i, seg) in rest.iter().enumerate() {
            let key = NeedKey {
                node: e.id.0,
                scope,
                part: 1_000 + first_part + i as u32,
            };
            let prev_span = e.span.to(seg.span);
            v = self.field(key, &v, seg, prev_span)?;
            self.link(Span::new(e.span.start, seg.span.end), &v);
        }
        Ok(v)
    }

    fn field(&mut self, key: NeedKey, target: &Val, name: &Ident, target_span: Span) -> R {
        match target {
            Val::Null => Err(Stop::Error(EvalError::at(
                target_span,
                format!("null before `.{}`", name.name),
            ))),
            Val::Many(items) if name.name == "length" || name.name == "size" => {
                Ok(Val::Int(items.len() as i32))
            }
            Val::Entries(items) if name.name == "length" || name.name == "size" => {
                Ok(Val::Int(items.len() as i32))
            }
            Val::Object { .. } | Val::Class { .. } => self.value(
                key,
                Need::Field {
                    target: target.clone(),
                    name: name.name.clone(),
                },
                name.span,
            ),
            other => Err(Stop::Error(EvalError::at(
                name.span,
                format!("a {} has no field `{}`", other.kind(), name.name),
            ))),
        }
    }

    fn unbox(&mut self, e: &Expr, scope: u64, v: Val) -> R {
        match v {
            Val::Object {
                tag: Tag::Object, ..
            } => {
                let key = NeedKey {
                    node: e.id.0,
                    scope,
                    part: 50_000,
                };
                match self.ask(key, Need::Unbox { target: v.clone() })? {
                    Answer::Value(p) => Ok(p),
                    _ => Ok(v),
                }
            }
            other => Ok(other),
        }
    }

    fn text(&mut self, e: &Expr, scope: u64, v: &Val) -> Result<Option<String>, Stop> {
        match v {
            Val::Text(s) => Ok(Some(s.clone())),
            Val::Object {
                tag: Tag::String, ..
            } => {
                let key = NeedKey {
                    node: e.id.0,
                    scope,
                    part: 60_000,
                };
                match self.ask(key, Need::Text { target: v.clone() })? {
                    Answer::Value(Val::Text(s)) => Ok(Some(s)),
                    Answer::Value(_) => Ok(None),
                    Answer::Missing(m) | Answer::Failed(m) => {
                        Err(Stop::Error(EvalError::at(e.span, m)))
                    }
                }
            }
            _ => Ok(None),
        }
    }

    fn binary(&mut self, e: &Expr, op: BinaryOp, lhs: &Expr, rhs: &Expr, scope: u64) -> R {
        match op {
            BinaryOp::And | BinaryOp::Or => {
                let l = self.eval(lhs, scope)?;
                let l = self.unbox(lhs, scope, l)?;
                let Val::Bool(lb) = l else {
                    return Err(Stop::Error(EvalError::at(
                        lhs.span,
                        format!("`&&`/`||` need booleans, found a {}", l.kind()),
                    )));
                };
                if (op == BinaryOp::And && !lb) || (op == BinaryOp::Or && lb) {
                    return Ok(Val::Bool(lb));
                }
                let r = self.eval(rhs, scope)?;
                let r = self.unbox(rhs, scope, r)?;
                truthy(&r, rhs.span)
            }
            _ => {
                // Both sides are read together; an error on the right while
                // the left is pending is not reported yet.
                let l = self.eval(lhs, scope);
                let r = self.eval(rhs, scope);
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
        let err = |m: String| Stop::Error(EvalError::at(e.span, m));
        match op {
            BinaryOp::Eq | BinaryOp::Ne => {
                let same = self.equal(lhs, &l, rhs, &r, scope)?;
                Ok(Val::Bool(if op == BinaryOp::Eq { same } else { !same }))
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
                    return Err(err(format!(
                        "`{}` needs numbers, found a {} and a {}",
                        op.symbol(),
                        l.kind(),
                        r.kind()
                    )));
                };
                arith(op, a, b).map_err(|m| err(m.to_string()))
            }
        }
    }

    fn as_text(&mut self, e: &Expr, scope: u64, v: &Val) -> Result<String, Stop> {
        if let Some(s) = self.text(e, scope, v)? {
            return Ok(s);
        }
        let v = self.unbox(e, scope, v.clone())?;
        Ok(match v {
            Val::Null => "null".into(),
            Val::Bool(b) => b.to_string(),
            Val::Char(c) => char::from_u32(u32::from(c))
                .map(String::from)
                .unwrap_or_default(),
            other => match num(&other) {
                Some(Num::I(i)) => i.to_string(),
                Some(Num::L(l)) => l.to_string(),
                Some(Num::F(f)) => f.to_string(),
                Some(Num::D(d)) => d.to_string(),
                None => {
                    return Err(Stop::Error(EvalError::at(
                        e.span,
                        format!("cannot concatenate a {}", other.kind()),
                    )));
                }
            },
        })
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
            (Val::Bool(a), Val::Bool(b)) => Ok(a == b),
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
                        Ok(Val::Bool(x)) => Ok(x),
                        _ => Ok(false),
                    },
                    _ => match (&lu, &ru) {
                        (Val::Bool(a), Val::Bool(b)) => Ok(a == b),
                        (Val::Object { id: a, .. }, Val::Object { id: b, .. }) => Ok(a == b),
                        _ => Ok(false),
                    },
                }
            }
        }
    }
}

fn truthy(v: &Val, span: Span) -> R {
    match v {
        Val::Bool(b) => Ok(Val::Bool(*b)),
        other => Err(Stop::Error(EvalError::at(
            span,
            format!("`&&`/`||` need booleans, found a {}", other.kind()),
        ))),
    }
}

fn null_check(t: &Val, span: Span, method: &str) -> Result<(), Stop> {
    match t {
        Val::Null | Val::Object { id: 0, .. } => Err(Stop::Error(EvalError::at(
            span,
            format!("null before `.{method}(…)`"),
        ))),
        _ => Ok(()),
    }
}

fn joined(path: &[Ident]) -> String {
    path.iter()
        .map(|i| i.name.as_str())
        .collect::<Vec<_>>()
        .join(".")
}

fn src_hint(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Path(p) => joined(p),
        _ => "the value".into(),
    }
}

fn literal(l: &Literal) -> Val {
    match l {
        Literal::Int(v) => Val::Int(*v),
        Literal::Long(v) => Val::Long(*v),
        Literal::Float(v) => Val::Float(*v),
        Literal::Double(v) => Val::Double(*v),
        Literal::Char(v) => Val::Char(*v),
        Literal::Bool(v) => Val::Bool(*v),
        Literal::Null => Val::Null,
        Literal::String(s) => Val::Text(s.clone()),
    }
}

fn as_index(v: &Val, span: Span) -> Result<usize, Stop> {
    match num(v) {
        Some(Num::I(i)) if i >= 0 => Ok(i as usize),
        Some(Num::L(l)) if l >= 0 && l <= i64::from(i32::MAX) => Ok(l as usize),
        _ => Err(Stop::Error(EvalError::at(
            span,
            format!("an index must be a non-negative int, found a {}", v.kind()),
        ))),
    }
}

#[cfg(test)]
mod tests;
