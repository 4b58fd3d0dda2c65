//! The evaluation driver: runs the sans-IO evaluator (`crate::expr::eval`)
//! against a live JVM. Every step's reads go out together (pipelined); an
//! invocation goes alone, on the event-suspended thread, single-threaded
//! and bounded by a budget. HashMap, LinkedHashMap, ConcurrentHashMap and
//! ArrayList are read by walking their fields, so subscripts on them need
//! no invoke and work on any suspended thread, read-only included.

mod collections;
mod invoke;

use std::sync::Mutex;
use std::time::Duration;

use futures::future::join_all;

use crate::error::{JdwpError, NotInvocable};
use crate::expr::eval::{Answer, EvalError, Evaluation, Link, Need, Step, Val};
use crate::expr::{Bound, Compiled, Expr};
use crate::jdwp::array_reference::Length;
use crate::jdwp::object_reference::GetValues as ObjectValues;
use crate::jdwp::reference_type::GetValues as StaticValues;
use crate::jdwp::string_reference::Value as StringValue;
use crate::jdwp::{ErrorCode, ObjectId, ReferenceTypeId, Tag, ThreadId, Value};
use crate::jvm::classes::ClassCache;
use crate::jvm::inspect::{self, FrameView, Locals};
use crate::model::Prim;
use crate::model::shown::EvalNote;

/// Default bound on one invocation.
pub const INVOKE_BUDGET: Duration = Duration::from_secs(2);
/// Entries a structural map or list walk reads at most.
const MAX_ELEMENTS: usize = 10_000;

/// Where an expression is evaluated.
#[derive(Debug, Clone, Default)]
pub struct EvalContext {
    /// The suspended thread, when there is one.
    pub thread: Option<ThreadId>,
    /// The frame names resolve in.
    pub frame: Option<FrameView>,
    /// `this` of the frame (0 in a static method or without a frame).
    pub this: ObjectId,
    /// The thread was suspended by an event, so methods may be invoked.
    pub invocable: bool,
    /// Why invocation is not possible, when that is known.
    pub not_invocable: Option<NotInvocable>,
    /// Bound on each invocation.
    pub invoke_budget: Option<Duration>,
}

/// A finished evaluation.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub value: Val,
    pub links: Vec<Link>,
    /// How collection links were read, class copies chosen, and so on.
    pub notes: Vec<EvalNote>,
    /// Needs answered (each one JDWP read or call, or a small batch).
    pub reads: usize,
    /// Steps (round trips of batched reads).
    pub steps: usize,
    /// Methods invoked.
    pub invocations: usize,
}

/// A failed evaluation, with the links that were evaluated before it.
#[derive(Debug, Clone)]
pub struct Failure {
    pub error: EvalError,
    pub links: Vec<Link>,
    pub notes: Vec<EvalNote>,
    /// A method call was refused because no event suspended the thread.
    pub needs_event_thread: bool,
    /// A name was asked that only a frame resolves (a local, a field of
    /// `this`, `frame[n].x`), and the context has no frame.
    pub needs_frame: bool,
    /// A method call was refused because the session is read-only.
    pub read_only: bool,
    /// A read got no reply in time: the failure says nothing about the
    /// program, only that the JVM did not answer.
    pub timed_out: bool,
}

struct Driver<'a> {
    classes: &'a ClassCache,
    ctx: &'a EvalContext,
    notes: Mutex<Vec<EvalNote>>,
    invocations: Mutex<usize>,
    refused_invoke: std::sync::atomic::AtomicBool,
    refused_read_only: std::sync::atomic::AtomicBool,
    timed_out: std::sync::atomic::AtomicBool,
    frameless: std::sync::atomic::AtomicBool,
}

/// Evaluates `expr` in `ctx`.
pub async fn evaluate(
    classes: &ClassCache,
    ctx: &EvalContext,
    expr: &Expr,
) -> Result<Outcome, Failure> {
    drive(classes, ctx, Evaluation::new(expr)).await
}

/// Evaluates an expression compiled when it was armed, with the value its
/// event binds (if any) in scope: nothing is parsed here.
pub async fn evaluate_compiled(
    classes: &ClassCache,
    ctx: &EvalContext,
    compiled: &Compiled,
    bound: Option<&Bound>,
) -> Result<Outcome, Failure> {
    drive(classes, ctx, Evaluation::compiled(compiled, bound)).await
}

/// Answers `ev`'s needs, a step at a time, until it is done.
async fn drive(
    classes: &ClassCache,
    ctx: &EvalContext,
    mut ev: Evaluation<'_>,
) -> Result<Outcome, Failure> {
    let driver = Driver {
        classes,
        ctx,
        notes: Mutex::new(Vec::new()),
        invocations: Mutex::new(0),
        refused_invoke: std::sync::atomic::AtomicBool::new(false),
        refused_read_only: std::sync::atomic::AtomicBool::new(false),
        timed_out: std::sync::atomic::AtomicBool::new(false),
        frameless: std::sync::atomic::AtomicBool::new(false),
    };
    let mut steps = 0;
    loop {
        steps += 1;
        match ev.step() {
            Step::Done(result) => {
                let notes = driver.take_notes();
                return match result {
                    Ok(value) => Ok(Outcome {
                        value,
                        links: ev.links().to_vec(),
                        notes,
                        reads: ev.asked,
                        steps,
                        invocations: driver.invocations(),
                    }),
                    Err(error) => Err(Failure {
                        error,
                        links: ev.links().to_vec(),
                        notes,
                        needs_event_thread: driver
                            .refused_invoke
                            .load(std::sync::atomic::Ordering::Relaxed),
                        needs_frame: driver.frameless.load(std::sync::atomic::Ordering::Relaxed),
                        read_only: driver
                            .refused_read_only
                            .load(std::sync::atomic::Ordering::Relaxed),
                        timed_out: driver.timed_out.load(std::sync::atomic::Ordering::Relaxed),
                    }),
                };
            }
            Step::Needs(needs) => {
                let answers = join_all(needs.iter().map(|(_, n)| driver.answer(n))).await;
                for ((key, _), answer) in needs.into_iter().zip(answers) {
                    ev.answer(key, answer);
                }
            }
        }
    }
}

/// A JDWP value as an evaluator value.
pub fn to_val(v: &Value) -> Val {
    if let Some(p) = Prim::from_wire(v) {
        return Val::Prim(p);
    }
    match *v {
        Value::Object { tag, id } if id.0 != 0 => Val::Object { id: id.0, tag },
        _ => Val::Null,
    }
}

/// The boxed primitive types, unboxed for arithmetic and rendering.
pub const BOXES: &[&str] = &[
    "java.lang.Integer",
    "java.lang.Long",
    "java.lang.Short",
    "java.lang.Byte",
    "java.lang.Character",
    "java.lang.Boolean",
    "java.lang.Float",
    "java.lang.Double",
];

/// Collections read by walking their fields.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Structural {
    ArrayList,
    HashMap,
    LinkedHashMap,
    ConcurrentHashMap,
}

fn structural(type_name: &str) -> Option<Structural> {
    Some(match type_name {
        "java.util.ArrayList" => Structural::ArrayList,
        "java.util.HashMap" => Structural::HashMap,
        "java.util.LinkedHashMap" => Structural::LinkedHashMap,
        "java.util.concurrent.ConcurrentHashMap" => Structural::ConcurrentHashMap,
        _ => return None,
    })
}

impl Driver<'_> {
    fn note(&self, n: EvalNote) {
        if let Ok(mut notes) = self.notes.lock()
            && !notes.contains(&n)
        {
            notes.push(n);
        }
    }

    fn take_notes(&self) -> Vec<EvalNote> {
        self.notes
            .lock()
            .map(|mut n| std::mem::take(&mut *n))
            .unwrap_or_default()
    }

    /// ` (why)` when the context says why nothing is held, else nothing.
    fn why_not(&self) -> String {
        self.ctx
            .not_invocable
            .as_ref()
            .map(|w| format!(" ({w})"))
            .unwrap_or_default()
    }

    fn invocations(&self) -> usize {
        self.invocations.lock().map(|n| *n).unwrap_or(0)
    }

    async fn answer(&self, need: &Need) -> Answer {
        let result = match need {
            Need::Name { name } => self.name(name).await,
            Need::Class { name, loader } => self.class(name, *loader).await,
            Need::This => Ok(match self.ctx.this.0 {
                0 => {
                    Answer::Missing("there is no `this` here (a static method, or no frame)".into())
                }
                id => Answer::Value(Val::Object {
                    id,
                    tag: Tag::Object,
                }),
            }),
            Need::Field { target, name } => self.field(target, name).await,
            Need::FrameLocal { depth, name } => self.frame_local(*depth, name).await,
            Need::Text { target } => self.text(target).await,
            Need::Unbox { target } => self.unbox(target).await,
            Need::Index { target, key } => self.index(target, key).await,
            Need::Elements { target, from, to } => self.elements(target, *from, *to).await,
            Need::Invoke { target, name, args } => self.invoke(target.as_ref(), name, args).await,
            Need::New { class, args } => self.construct(class, args).await,
        };
        result.unwrap_or_else(|e| {
            match e {
                JdwpError::ReadOnly { .. } => self
                    .refused_read_only
                    .store(true, std::sync::atomic::Ordering::Relaxed),
                JdwpError::Timeout { .. } => self
                    .timed_out
                    .store(true, std::sync::atomic::Ordering::Relaxed),
                _ => {}
            }
            Answer::Failed(explain(&e))
        })
    }

    async fn type_of(&self, id: u64) -> Result<(ReferenceTypeId, String), JdwpError> {
        let t = self.classes.type_of(ObjectId(id)).await?;
        let info = self.classes.info(t.id).await?;
        Ok((t.id, info.name.clone()))
    }

    async fn name(&self, name: &str) -> Result<Answer, JdwpError> {
        let (Some(thread), Some(frame)) = (self.ctx.thread, self.ctx.frame.as_ref()) else {
            self.frameless
                .store(true, std::sync::atomic::Ordering::Relaxed);
            return Ok(Answer::Missing(format!(
                "`{name}` is not a loaded class, and names of locals and fields need a frame{}",
                self.why_not()
            )));
        };
        if let Locals::Known(locals) =
            inspect::locals(self.classes, thread, frame, Some(&[name.to_string()])).await?
            && let Some(l) = locals.first()
        {
            return Ok(Answer::Value(to_val(&l.value)));
        }
        if self.ctx.this.0 != 0 {
            let (ty, _) = self.type_of(self.ctx.this.0).await?;
            if let Some((decl, f)) = self.classes.find_field(ty, name).await? {
                return self
                    .read_field(Some(self.ctx.this), decl, f.id, f.is_static())
                    .await;
            }
        }
        if let Some((decl, f)) = self.classes.find_field(frame.class.id, name).await?
            && f.is_static()
        {
            return self.read_field(None, decl, f.id, true).await;
        }
        Ok(Answer::Missing(format!(
            "`{name}` is not a local, a field of this, or a static of {}",
            frame.class.name
        )))
    }

    /// The local `name` of the frame `depth` below the context's frame.
    async fn frame_local(&self, depth: u32, name: &str) -> Result<Answer, JdwpError> {
        let (Some(thread), Some(frame)) = (self.ctx.thread, self.ctx.frame.as_ref()) else {
            self.frameless
                .store(true, std::sync::atomic::Ordering::Relaxed);
            return Ok(Answer::Missing(format!(
                "`frame[{depth}].{name}` needs a frame{}",
                self.why_not()
            )));
        };
        let index = frame.index + depth as usize;
        let caller = if depth == 0 {
            Some(frame.clone())
        } else {
            inspect::frames(self.classes, thread, index, Some(1))
                .await?
                .into_iter()
                .next()
        };
        let Some(caller) = caller else {
            return Ok(Answer::Missing(format!(
                "the thread has no frame {index} (`frame[{depth}]`)"
            )));
        };
        match inspect::locals(self.classes, thread, &caller, Some(&[name.to_string()])).await? {
            Locals::Known(locals) => match locals.first() {
                Some(l) => Ok(Answer::Value(to_val(&l.value))),
                None => {
                    let live = match inspect::locals(self.classes, thread, &caller, None).await? {
                        Locals::Known(all) => all
                            .iter()
                            .map(|l| l.name.clone())
                            .collect::<Vec<_>>()
                            .join(", "),
                        _ => String::new(),
                    };
                    Ok(Answer::Missing(format!(
                        "`{name}` is not a local of frame[{depth}] ({}; locals: {live})",
                        caller.label()
                    )))
                }
            },
            _ => Ok(Answer::Missing(format!(
                "frame[{depth}] ({}) has no variable table (compiled without -g)",
                caller.label()
            ))),
        }
    }

    async fn read_field(
        &self,
        object: Option<ObjectId>,
        decl: ReferenceTypeId,
        field: crate::jdwp::FieldId,
        is_static: bool,
    ) -> Result<Answer, JdwpError> {
        let conn = self.classes.connection();
        let values = match (is_static, object) {
            (false, Some(object)) => {
                conn.send(&ObjectValues {
                    object,
                    fields: vec![field],
                })
                .await?
            }
            _ => {
                conn.send(&StaticValues {
                    ref_type: decl,
                    fields: vec![field],
                })
                .await?
            }
        };
        Ok(values
            .first()
            .map(|v| Answer::Value(to_val(v)))
            .unwrap_or_else(|| Answer::Failed("the JVM returned no value".into())))
    }

    async fn class(&self, name: &str, loader: Option<u64>) -> Result<Answer, JdwpError> {
        // Try `a.b.C`, then the nested forms `a.b$C`.
        let mut candidates = vec![name.to_string()];
        let mut nested = name.to_string();
        while let Some(dot) = nested.rfind('.') {
            nested.replace_range(dot..=dot, "$");
            candidates.push(nested.clone());
        }
        // As in Java source, `java.lang` is always imported: `Math`,
        // `Integer`, `String` resolve without their package (last, so a
        // class of the same simple name in the default package wins).
        if !name.contains('.') {
            candidates.push(format!("java.lang.{name}"));
        }
        // Every form is asked at once; the first that names a class wins.
        let found = join_all(candidates.iter().map(|c| self.classes.by_name(c))).await;
        for (candidate, copies) in candidates.into_iter().zip(found) {
            let mut copies = copies?;
            if copies.is_empty() {
                continue;
            }
            if let Some(loader) = loader {
                let loaders = join_all(copies.iter().map(|c| self.classes.loader(c.id))).await;
                let keep: Vec<_> = copies
                    .iter()
                    .zip(loaders)
                    .filter(|(_, l)| l.as_ref().is_ok_and(|l| l.0 == loader))
                    .map(|(c, _)| c.clone())
                    .collect();
                if keep.is_empty() {
                    return Ok(Answer::Missing(format!(
                        "no copy of {candidate} was loaded by class loader @{loader:#x}"
                    )));
                }
                copies = keep;
            } else if copies.len() > 1 {
                let first_loader = self.classes.loader(copies[0].id).await?;
                self.note(EvalNote::SeveralLoaders {
                    class: candidate.to_string(),
                    copies: copies.len(),
                    loader: first_loader.0,
                });
            }
            let c = &copies[0];
            return Ok(Answer::Value(Val::Class {
                id: c.id.0,
                name: c.name.clone(),
            }));
        }
        Ok(Answer::Missing(format!("no loaded class is named {name}")))
    }

    async fn field(&self, target: &Val, name: &str) -> Result<Answer, JdwpError> {
        match target {
            Val::Object {
                id,
                tag: Tag::Array,
            } if name == "length" => {
                let n = self
                    .classes
                    .connection()
                    .send(&Length {
                        array: ObjectId(*id),
                    })
                    .await?;
                Ok(Answer::Value(Val::Prim(Prim::Int(n))))
            }
            Val::Object { id, .. } => {
                let (ty, ty_name) = self.type_of(*id).await?;
                if name == "length" && ty_name.ends_with("[]") {
                    let n = self
                        .classes
                        .connection()
                        .send(&Length {
                            array: ObjectId(*id),
                        })
                        .await?;
                    return Ok(Answer::Value(Val::Prim(Prim::Int(n))));
                }
                match self.classes.find_field(ty, name).await? {
                    Some((decl, f)) => {
                        self.read_field(Some(ObjectId(*id)), decl, f.id, f.is_static())
                            .await
                    }
                    None => Ok(Answer::Missing(format!("{ty_name} has no field `{name}`"))),
                }
            }
            Val::Class {
                id,
                name: class_name,
            } => {
                let ty = ReferenceTypeId(*id);
                match self.classes.find_field(ty, name).await? {
                    Some((decl, f)) if f.is_static() => {
                        self.read_field(None, decl, f.id, true).await
                    }
                    Some(_) => Ok(Answer::Missing(format!(
                        "`{name}` is an instance field of {class_name}; it needs an object"
                    ))),
                    None => {
                        // Another copy of the class (another class loader)
                        // may have it: a redeploy leaves the old one first.
                        let copies = self.classes.by_name(class_name).await?;
                        for (i, copy) in copies.iter().enumerate() {
                            if copy.id == ty {
                                continue;
                            }
                            if let Some((decl, f)) = self.classes.find_field(copy.id, name).await?
                                && f.is_static()
                            {
                                let loader = self.classes.loader(copy.id).await?;
                                self.note(EvalNote::FromOtherCopy {
                                    class: class_name.to_string(),
                                    member: name.to_string(),
                                    copy: i + 1,
                                    copies: copies.len(),
                                    loader: loader.0,
                                });
                                return self.read_field(None, decl, f.id, true).await;
                            }
                        }
                        Ok(Answer::Missing(format!(
                            "{class_name} has no static field `{name}` (searched {} loaded cop{})",
                            copies.len().max(1),
                            if copies.len() > 1 { "ies" } else { "y" }
                        )))
                    }
                }
            }
            other => Ok(Answer::Missing(format!(
                "a {} has no field `{name}`",
                other.kind()
            ))),
        }
    }

    async fn text(&self, target: &Val) -> Result<Answer, JdwpError> {
        match target {
            Val::Object { id, .. } => Ok(Answer::Value(Val::Text(
                self.classes
                    .connection()
                    .send(&StringValue {
                        string_object: ObjectId(*id),
                    })
                    .await?,
            ))),
            Val::Text(s) => Ok(Answer::Value(Val::Text(s.clone()))),
            _ => Ok(Answer::Missing("not a string".into())),
        }
    }

    async fn unbox(&self, target: &Val) -> Result<Answer, JdwpError> {
        let Val::Object { id, .. } = target else {
            return Ok(Answer::Missing("not an object".into()));
        };
        let (ty, name) = self.type_of(*id).await?;
        if !BOXES.contains(&name.as_str()) {
            return Ok(Answer::Missing(format!("{name} is not a box")));
        }
        match self.classes.find_field(ty, "value").await? {
            Some((decl, f)) => {
                self.read_field(Some(ObjectId(*id)), decl, f.id, false)
                    .await
            }
            None => Ok(Answer::Missing(format!("{name} has no value field"))),
        }
    }

    async fn index(&self, target: &Val, key: &Val) -> Result<Answer, JdwpError> {
        let Val::Object { id, tag } = target else {
            return Ok(Answer::Missing(format!(
                "cannot subscript a {}",
                target.kind()
            )));
        };
        let (_, ty) = self.type_of(*id).await?;
        if *tag == Tag::Array || ty.ends_with("[]") {
            let Some(i) = index_of(key) else {
                return Ok(Answer::Missing("an array index must be an int".into()));
            };
            let vals = self.array(*id, i, Some(i + 1)).await?;
            return Ok(match vals.into_iter().next() {
                Some(v) => Answer::Value(v),
                None => Answer::Missing(format!("index {i} is out of range")),
            });
        }
        match structural(&ty) {
            Some(Structural::ArrayList) => {
                let Some(i) = index_of(key) else {
                    return Ok(Answer::Missing("a List index must be an int".into()));
                };
                self.note(EvalNote::WalkedList {
                    class: ty.to_string(),
                });
                let vals = self.array_list(*id, i, Some(i + 1)).await?;
                Ok(match vals.into_iter().next() {
                    Some(v) => Answer::Value(v),
                    None => Answer::Missing(format!("index {i} is out of range for the list")),
                })
            }
            Some(kind) => {
                self.note(EvalNote::WalkedMap {
                    class: ty.to_string(),
                });
                let entries = self.map_entries(*id, kind).await?;
                let keys = join_all(entries.iter().map(|(k, _)| self.key_matches(key, k))).await;
                for ((_, v), hit) in entries.iter().zip(keys) {
                    if hit? {
                        return Ok(Answer::Value(v.clone()));
                    }
                }
                Ok(Answer::Value(Val::Null))
            }
            None => {
                self.note(EvalNote::CalledGet {
                    class: ty.to_string(),
                });
                self.invoke(Some(target), "get", std::slice::from_ref(key))
                    .await
            }
        }
    }

    async fn elements(
        &self,
        target: &Val,
        from: Option<i64>,
        to: Option<i64>,
    ) -> Result<Answer, JdwpError> {
        let Val::Object { id, tag } = target else {
            return Ok(Answer::Missing(format!("cannot list a {}", target.kind())));
        };
        let (_, ty) = self.type_of(*id).await?;
        if *tag == Tag::Array || ty.ends_with("[]") {
            return Ok(Answer::Value(Val::Many(
                self.array(*id, from.unwrap_or(0), to).await?,
            )));
        }
        match structural(&ty) {
            Some(Structural::ArrayList) => {
                self.note(EvalNote::WalkedList {
                    class: ty.to_string(),
                });
                Ok(Answer::Value(Val::Many(
                    self.array_list(*id, from.unwrap_or(0), to).await?,
                )))
            }
            Some(kind) => {
                self.note(EvalNote::WalkedMap {
                    class: ty.to_string(),
                });
                let all = self.map_entries(*id, kind).await?;
                let end = to
                    .map(|t| t.max(0) as usize)
                    .unwrap_or(all.len())
                    .min(all.len());
                let start = from.map(|f| f.max(0) as usize).unwrap_or(0).min(end);
                Ok(Answer::Value(Val::Entries(all[start..end].to_vec())))
            }
            None => {
                self.note(EvalNote::CalledToArray {
                    class: ty.to_string(),
                });
                match self.invoke(Some(target), "toArray", &[]).await? {
                    Answer::Value(Val::Object { id: arr, .. }) => Ok(Answer::Value(Val::Many(
                        self.array(arr, from.unwrap_or(0), to).await?,
                    ))),
                    other => Ok(other),
                }
            }
        }
    }
}

fn index_of(key: &Val) -> Option<i64> {
    match *key {
        Val::Prim(Prim::Int(i)) => Some(i64::from(i)),
        Val::Prim(Prim::Long(l)) => Some(l),
        Val::Prim(Prim::Short(s)) => Some(i64::from(s)),
        Val::Prim(Prim::Byte(b)) => Some(i64::from(b)),
        _ => None,
    }
}

fn prim_eq(a: &Val, b: &Val) -> bool {
    let n = |v: &Val| -> Option<f64> {
        Some(match *v {
            Val::Prim(Prim::Int(x)) => f64::from(x),
            Val::Prim(Prim::Long(x)) => x as f64,
            Val::Prim(Prim::Short(x)) => f64::from(x),
            Val::Prim(Prim::Byte(x)) => f64::from(x),
            Val::Prim(Prim::Char(x)) => f64::from(x),
            Val::Prim(Prim::Float(x)) => f64::from(x),
            Val::Prim(Prim::Double(x)) => x,
            _ => return None,
        })
    };
    match (a, b) {
        (Val::Prim(Prim::Bool(x)), Val::Prim(Prim::Bool(y))) => x == y,
        _ => match (n(a), n(b)) {
            (Some(x), Some(y)) => x == y,
            _ => false,
        },
    }
}

/// A JDWP failure as the fact behind it (the object was collected, the
/// frame is gone), for an evaluation's error text.
pub fn explain(e: &JdwpError) -> String {
    match e.code() {
        Some(ErrorCode::INVALID_OBJECT) => {
            "the object vanished (collected by the JVM; handles are weak references)".into()
        }
        Some(ErrorCode::THREAD_NOT_SUSPENDED) => {
            "the thread is running: neither a thread suspend nor a stop point holds it".into()
        }
        Some(ErrorCode::INVALID_FRAMEID) => {
            "the frame is gone: its thread resumed since it was read".into()
        }
        Some(ErrorCode::INVALID_THREAD) => {
            "the thread is not suspended by an event, so the JVM refuses to invoke on it".into()
        }
        Some(ErrorCode::ALREADY_INVOKING) => {
            "the thread is still running an earlier invocation that outlived its budget".into()
        }
        _ => e.to_string(),
    }
}
