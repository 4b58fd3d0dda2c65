//! The invocation path of the evaluator: resolving a call's receiver,
//! choosing the overload, converting the arguments to JDWP values, and
//! the bounded invoke round trip with its result. This is the only place
//! an evaluation runs code in the JVM.

use std::sync::atomic::Ordering;

use super::{Driver, INVOKE_BUDGET, to_val};
use crate::error::{CallEnd, JdwpError, NotInvocable};
use crate::expr::eval::{Answer, Val};
use crate::jdwp::class_type::InvokeMethodReply;
use crate::jdwp::object_reference::InvokeMethod;
use crate::jdwp::virtual_machine::CreateString;
use crate::jdwp::{InvokeOptions, ObjectId, ReferenceTypeId, Tag, ThreadId, TypeTag, Value};
use crate::jvm::classes::{MethodInfo, java_name};
use crate::jvm::invoke::bounded;
use crate::model::Prim;

/// A step of the invocation that either goes on with a `T` or stops with
/// the answer to give instead (a refusal or a miss the agent can read).
type Resolved<T> = Result<T, Answer>;

/// Which JDWP command carries the call: an instance method goes to its
/// object, a static one to its class or interface, since JDWP has a
/// separate `InvokeMethod` for each.
enum Via {
    Object(ObjectId),
    Interface,
    Class,
}

/// Parameter signatures of a method signature `(ILjava/lang/String;)V`
/// (none when the signature is garbled).
pub(super) fn param_signatures(sig: &str) -> Vec<String> {
    crate::model::signature::split_method_descriptor(sig)
        .map(|(params, _)| params)
        .unwrap_or_default()
}

impl Driver<'_> {
    /// Calls `name(args)` on `target` (or on the frame when there is no
    /// target): one invocation, single-threaded, bounded by the budget.
    pub(super) async fn invoke(
        &self,
        target: Option<&Val>,
        name: &str,
        args: &[Val],
    ) -> Result<Answer, JdwpError> {
        let thread = match self.invoke_thread(name) {
            Ok(thread) => thread,
            Err(refusal) => return Ok(refusal),
        };
        let (object, class) = match self.receiver(target, name).await? {
            Ok(receiver) => receiver,
            Err(miss) => return Ok(miss),
        };
        let (best, seen_names) = self.overload(class, object, name, args).await?;
        let class_name = self.classes.info(class).await?.name.clone();
        let Some((decl, method)) = best else {
            return Ok(no_overload(&class_name, name, args, seen_names));
        };
        let values = self.arguments(args).await?;
        let budget = self.ctx.invoke_budget.unwrap_or(INVOKE_BUDGET);
        if let Ok(mut n) = self.invocations.lock() {
            *n += 1;
        }
        let via = self.via(object, decl, &method).await?;
        let reply = self
            .round_trip(thread, via, decl, &method, values, budget)
            .await;
        self.result(reply, &class_name, name, budget).await
    }

    /// `new class(args)`: the constructor of `class` whose parameters fit
    /// best, run by `ClassType.NewInstance` on the invoking thread within
    /// the same budget as a call.
    pub(super) async fn construct(&self, class: &str, args: &[Val]) -> Result<Answer, JdwpError> {
        let thread = match self.invoke_thread(&format!("new {class}")) {
            Ok(thread) => thread,
            Err(refusal) => return Ok(refusal),
        };
        let id = match self.class(class, None).await? {
            Answer::Value(Val::Class { id, .. }) => ReferenceTypeId(id),
            Answer::Value(_) => return Ok(Answer::Missing(format!("{class} is not a class"))),
            other => match self.load_class(class).await? {
                Some(id) => id,
                None => return Ok(other),
            },
        };
        let info = self.classes.info(id).await?;
        if info.tag != TypeTag::Class {
            return Ok(Answer::Missing(format!("{} is not a class", info.name)));
        }
        let mut best: Option<(u32, MethodInfo)> = None;
        let mut seen = 0;
        for m in self.classes.methods(id).await?.iter() {
            if m.name != "<init>" {
                continue;
            }
            seen += 1;
            let params = param_signatures(&m.signature);
            if params.len() != args.len() {
                continue;
            }
            if let Some(score) = self.score(&params, args).await
                && best.as_ref().is_none_or(|(s, _)| score > *s)
            {
                best = Some((score, m.clone()));
            }
        }
        let Some((_, ctor)) = best else {
            return Ok(no_overload(&info.name, "<init>", args, seen));
        };
        let arguments = self.arguments(args).await?;
        let budget = self.ctx.invoke_budget.unwrap_or(INVOKE_BUDGET);
        if let Ok(mut n) = self.invocations.lock() {
            *n += 1;
        }
        let cmd = crate::jdwp::class_type::NewInstance {
            class: id,
            thread,
            method: ctor.id,
            arguments,
            options: InvokeOptions::INVOKE_SINGLE_THREADED,
        };
        let reply = bounded(self.classes, &cmd, thread, budget).await;
        let reply = reply.map(|r| InvokeMethodReply {
            return_value: Value::Object {
                tag: r.new_object.tag,
                id: r.new_object.id,
            },
            exception: r.exception,
        });
        self.result(reply, &info.name, "<init>", budget).await
    }

    /// Loads `class` (not loaded yet: a class loads on first use) through
    /// the class loader of the frame's class, by `Class.forName`.
    async fn load_class(&self, class: &str) -> Result<Option<ReferenceTypeId>, JdwpError> {
        let Some(frame) = &self.ctx.frame else {
            return Ok(None);
        };
        let loader = self.classes.loader(frame.class.id).await?;
        let Answer::Value(holder @ Val::Class { .. }) = self.class("java.lang.Class", None).await?
        else {
            return Ok(None);
        };
        let args = [
            Val::Text(class.to_string()),
            Val::Prim(Prim::Bool(true)),
            Val::Object {
                id: loader.0,
                tag: Tag::ClassLoader,
            },
        ];
        let Answer::Value(Val::Object { id, .. }) =
            Box::pin(self.invoke(Some(&holder), "forName", &args)).await?
        else {
            return Ok(None);
        };
        let t = self
            .classes
            .connection()
            .send(&crate::jdwp::class_object_reference::ReflectedType {
                class_object: ObjectId(id),
            })
            .await?;
        Ok(Some(t.id))
    }

    /// The thread to invoke on, or the refusal when no event suspended
    /// one: JDWP runs methods only on such a thread.
    fn invoke_thread(&self, name: &str) -> Resolved<ThreadId> {
        // Read-only is what blocks a call whatever the thread: say that
        // first, not that a thread is missing.
        if self.classes.connection().shared().read_only {
            self.refused_read_only.store(true, Ordering::Relaxed);
            return Err(Answer::Failed(format!(
                "calling {name}() runs code in the JVM, and this session is read-only"
            )));
        }
        let Some(thread) = self.ctx.thread.filter(|_| self.ctx.invocable) else {
            let none = NotInvocable::NothingHeld { released: None };
            let why = self.ctx.not_invocable.as_ref().unwrap_or(&none);
            self.refused_invoke.store(true, Ordering::Relaxed);
            return Err(Answer::Failed(format!(
                "calling {name}() runs code in the JVM, which JDWP allows only on a thread suspended by an event; {why}; \
                 fields, locals and HashMap/LinkedHashMap/ConcurrentHashMap/ArrayList subscripts need no invoke"
            )));
        };
        Ok(thread)
    }

    /// Resolves the receiver: an object, a class, or the frame (its
    /// `this`, or its class in a static method). Answers the object, if
    /// any, and the class whose methods are searched.
    async fn receiver(
        &self,
        target: Option<&Val>,
        name: &str,
    ) -> Result<Resolved<(Option<ObjectId>, ReferenceTypeId)>, JdwpError> {
        Ok(Ok(match target {
            Some(Val::Object { id, .. }) => {
                let (ty, _) = self.type_of(*id).await?;
                (Some(ObjectId(*id)), ty)
            }
            Some(Val::Class { id, .. }) => (None, ReferenceTypeId(*id)),
            Some(other) => {
                return Ok(Err(Answer::Missing(format!(
                    "a {} has no methods",
                    other.kind()
                ))));
            }
            None => match (self.ctx.this.0, &self.ctx.frame) {
                (0, Some(f)) => (None, f.class.id),
                (this, Some(_)) => {
                    let (ty, _) = self.type_of(this).await?;
                    (Some(self.ctx.this), ty)
                }
                (_, None) => {
                    return Ok(Err(Answer::Missing(format!(
                        "{name}() needs a frame or a receiver"
                    ))));
                }
            },
        }))
    }

    /// Chooses the overload: among methods of the same name and arity in
    /// the class and its supers, the one whose parameters fit the
    /// arguments best (the first found wins a tie). Without an object only
    /// static methods qualify. Also answers how many methods had the name,
    /// so a miss can say whether the name or the arguments were wrong.
    async fn overload(
        &self,
        class: ReferenceTypeId,
        object: Option<ObjectId>,
        name: &str,
        args: &[Val],
    ) -> Result<(Option<(ReferenceTypeId, MethodInfo)>, usize), JdwpError> {
        let mut best: Option<(u32, ReferenceTypeId, MethodInfo)> = None;
        let mut seen_names = 0;
        for t in self.classes.hierarchy(class).await? {
            for m in self.classes.methods(t).await?.iter() {
                if m.name != name {
                    continue;
                }
                seen_names += 1;
                let params = param_signatures(&m.signature);
                if params.len() != args.len() || (object.is_none() && !m.is_static()) {
                    continue;
                }
                if let Some(score) = self.score(&params, args).await
                    && best.as_ref().is_none_or(|(s, _, _)| score > *s)
                {
                    best = Some((score, t, m.clone()));
                }
            }
        }
        Ok((best.map(|(_, decl, method)| (decl, method)), seen_names))
    }

    /// The summed fit of `args` to `params`, or `None` when one of them
    /// does not fit at all.
    async fn score(&self, params: &[String], args: &[Val]) -> Option<u32> {
        let mut score = 0;
        for (p, a) in params.iter().zip(args) {
            score += self.fit(p, a).await?;
        }
        Some(score)
    }

    /// Builds the arguments as JDWP values, in order (text becomes a new
    /// string in the JVM).
    async fn arguments(&self, args: &[Val]) -> Result<Vec<Value>, JdwpError> {
        let mut values = Vec::with_capacity(args.len());
        for a in args {
            values.push(self.to_value(a).await?);
        }
        Ok(values)
    }

    /// Which command carries the call. A static method is looked up in its
    /// declaring type to tell an interface from a class.
    async fn via(
        &self,
        object: Option<ObjectId>,
        decl: ReferenceTypeId,
        method: &MethodInfo,
    ) -> Result<Via, JdwpError> {
        Ok(match object {
            Some(object) if !method.is_static() => Via::Object(object),
            _ => {
                if self.classes.info(decl).await?.tag == TypeTag::Interface {
                    Via::Interface
                } else {
                    Via::Class
                }
            }
        })
    }

    /// The invoke round trip, single-threaded and bounded by `budget`.
    async fn round_trip(
        &self,
        thread: ThreadId,
        via: Via,
        decl: ReferenceTypeId,
        method: &MethodInfo,
        arguments: Vec<Value>,
        budget: std::time::Duration,
    ) -> Result<InvokeMethodReply, JdwpError> {
        let options = InvokeOptions::INVOKE_SINGLE_THREADED;
        match via {
            Via::Object(object) => {
                let cmd = InvokeMethod {
                    object,
                    thread,
                    class: decl,
                    method: method.id,
                    arguments,
                    options,
                };
                bounded(self.classes, &cmd, thread, budget).await
            }
            Via::Interface => {
                let cmd = crate::jdwp::interface_type::InvokeMethod {
                    interface: decl,
                    thread,
                    method: method.id,
                    arguments,
                    options,
                };
                bounded(self.classes, &cmd, thread, budget).await
            }
            Via::Class => {
                let cmd = crate::jdwp::class_type::InvokeMethod {
                    class: decl,
                    thread,
                    method: method.id,
                    arguments,
                    options,
                };
                bounded(self.classes, &cmd, thread, budget).await
            }
        }
    }

    /// The invocation's result as an answer: the return value, or a
    /// failure naming the timeout or the thrown exception.
    async fn result(
        &self,
        reply: Result<InvokeMethodReply, JdwpError>,
        class_name: &str,
        name: &str,
        budget: std::time::Duration,
    ) -> Result<Answer, JdwpError> {
        let reply = match reply {
            Ok(r) => r,
            Err(JdwpError::Cancelled { ended, .. }) => {
                let how = match ended {
                    CallEnd::Thrown => "an Error thrown into it ended it",
                    CallEnd::Interrupted => "it ended once interrupted",
                };
                return Ok(Answer::Failed(format!(
                    "{class_name}.{name}() did not return within {} ms, so it was cancelled ({how}); the thread runs its own code again",
                    budget.as_millis()
                )));
            }
            Err(JdwpError::Overran { .. }) => {
                return Ok(Answer::Failed(format!(
                    "{class_name}.{name}() did not return within {} ms and could not be cancelled; the thread stays inside the call until it returns",
                    budget.as_millis()
                )));
            }
            Err(e) => return Err(e),
        };
        if reply.exception.id.0 != 0 {
            let (_, ex) = self.type_of(reply.exception.id.0).await?;
            return Ok(Answer::Failed(format!(
                "{class_name}.{name}() threw {ex} @{:#x}",
                reply.exception.id.0
            )));
        }
        Ok(Answer::Value(to_val(&reply.return_value)))
    }

    async fn to_value(&self, v: &Val) -> Result<Value, JdwpError> {
        Ok(match v {
            Val::Prim(p) => Value::from(*p),
            Val::Null => Value::Object {
                tag: Tag::Object,
                id: ObjectId(0),
            },
            Val::Text(s) => {
                let id = self
                    .classes
                    .connection()
                    .send(&CreateString { utf: s.clone() })
                    .await?;
                Value::Object {
                    tag: Tag::String,
                    id,
                }
            }
            Val::Object { id, tag } => Value::Object {
                tag: *tag,
                id: ObjectId(*id),
            },
            Val::Class { id, .. } => {
                let obj = self
                    .classes
                    .connection()
                    .send(&crate::jdwp::reference_type::ClassObject {
                        ref_type: ReferenceTypeId(*id),
                    })
                    .await?;
                Value::Object {
                    tag: Tag::ClassObject,
                    id: obj,
                }
            }
            Val::Many(_) | Val::Entries(_) => Value::Object {
                tag: Tag::Object,
                id: ObjectId(0),
            },
        })
    }

    /// How well `arg` fits a parameter of JNI type `param`; `None` when it
    /// does not.
    async fn fit(&self, param: &str, arg: &Val) -> Option<u32> {
        let p = param.as_bytes().first().copied().unwrap_or(b'V');
        match arg {
            Val::Prim(Prim::Int(_) | Prim::Short(_) | Prim::Byte(_) | Prim::Char(_)) => match p {
                b'I' => Some(3),
                b'J' => Some(2),
                b'F' | b'D' => Some(1),
                b'S' | b'B' | b'C' => Some(1),
                _ => None,
            },
            Val::Prim(Prim::Long(_)) => match p {
                b'J' => Some(3),
                b'F' | b'D' => Some(1),
                _ => None,
            },
            Val::Prim(Prim::Float(_)) => match p {
                b'F' => Some(3),
                b'D' => Some(2),
                _ => None,
            },
            Val::Prim(Prim::Double(_)) => (p == b'D').then_some(3),
            Val::Prim(Prim::Bool(_)) => (p == b'Z').then_some(3),
            Val::Null => matches!(p, b'L' | b'[').then_some(1),
            Val::Text(_)
            | Val::Object {
                tag: Tag::String, ..
            } => match param {
                "Ljava/lang/String;" => Some(3),
                "Ljava/lang/CharSequence;" | "Ljava/lang/Object;" => Some(1),
                _ => None,
            },
            Val::Object { id, .. } => {
                if p != b'L' && p != b'[' {
                    return None;
                }
                let wanted = java_name(param);
                if wanted == "java.lang.Object" {
                    return Some(1);
                }
                // Walk the runtime type's superclasses for an exact match;
                // an interface parameter is accepted with a low score.
                let (ty, _) = self.type_of(*id).await.ok()?;
                let chain = self.classes.hierarchy(ty).await.ok()?;
                for t in chain {
                    if self.classes.info(t).await.ok()?.name == wanted {
                        return Some(3);
                    }
                }
                Some(0)
            }
            Val::Class { .. } => (param == "Ljava/lang/Class;").then_some(3),
            Val::Many(_) | Val::Entries(_) => None,
        }
    }
}

/// The miss when no overload was chosen: no method of the name at all, or
/// none whose parameters take these arguments.
fn no_overload(class_name: &str, name: &str, args: &[Val], seen_names: usize) -> Answer {
    Answer::Missing(if seen_names == 0 {
        format!("{class_name} has no method {name}()")
    } else {
        format!(
            "no overload of {class_name}.{name} takes ({})",
            args.iter().map(Val::kind).collect::<Vec<_>>().join(", ")
        )
    })
}
