//! Calling the application: a method chosen by name and declared
//! parameter types, its arguments built from typed values (`args.rs`), run
//! on a thread an event suspended or on one this module parks for the
//! call (`seat.rs`), single-threaded by default and bounded by a budget
//! whose late return is undone as evaluate's are (`invoke::bounded`). The
//! Spring (`spring.rs`) and JPA (`jpa.rs`) readers are built on the same
//! [`Caller`].

mod args;
mod jpa;
mod parked;
mod resolve;
pub(crate) mod seat;
pub(crate) mod spring;

use std::sync::Mutex;
use std::time::{Duration, Instant};

pub use crate::error::CallError;
pub use jpa::{NamedQuery, QueryRows};
pub use parked::ParkedOn;
pub use seat::Venue;
pub use spring::{BeanInfo, EnvKey, SpringReport};

use crate::door::Jvm;
use crate::error::{JdwpError, SessionError};
use crate::expr::eval::Val;
use crate::jdwp::class_type::InvokeMethodReply;
use crate::jdwp::object_reference::{DisableCollection, EnableCollection};
use crate::jdwp::{InvokeOptions, ObjectId, ReferenceTypeId, Tag, ThreadId, TypeTag, Value};
use crate::jvm::classes::{ClassCache, MethodInfo, java_name};
use crate::jvm::eval::{EvalContext, to_val};
use crate::jvm::invoke::bounded;
use crate::jvm::show::Budget;
use crate::model::shown::{Shown, Tree};
use crate::model::signature::{JType, method_types};

/// A typed argument, as the agent wrote it (JSON maps onto it one to one).
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
    /// `@0x…`: an object already in the JVM.
    Handle(u64),
    List(Vec<Arg>),
    Map(Vec<(String, Arg)>),
}

impl Arg {
    /// What was given, for a mismatch.
    pub fn kind(&self) -> &'static str {
        match self {
            Arg::Null => "null",
            Arg::Bool(_) => "a boolean",
            Arg::Int(_) => "a whole number",
            Arg::Float(_) => "a number",
            Arg::Text(_) => "a string",
            Arg::Handle(_) => "an @0x… handle",
            Arg::List(_) => "a JSON array",
            Arg::Map(_) => "a JSON object",
        }
    }
}

/// What a call is made on.
#[derive(Debug, Clone, PartialEq)]
pub enum CallTarget {
    /// A class by name: its static methods.
    Class(String),
    /// An object by handle.
    Object(u64),
    /// A Spring bean by name, or by type (a class name).
    Bean {
        name: Option<String>,
        type_name: Option<String>,
    },
}

/// A call to make.
#[derive(Debug, Clone)]
pub struct CallSpec {
    pub target: CallTarget,
    pub method: String,
    /// Declared parameter types (`java.lang.String`, `int`, simple names
    /// accepted) choosing among overloads.
    pub param_types: Option<Vec<String>>,
    pub args: Vec<Arg>,
    /// The thread to run on; default: one an event suspended, else one parked.
    pub thread: Option<ThreadId>,
    pub budget: Duration,
    /// Let the other threads run during the call (default: only this one).
    pub all_threads: bool,
    /// Budgets of the result's views.
    pub views: Budget,
}

/// One parameter of a method, for the argument template.
#[derive(Debug, Clone)]
pub struct Param {
    /// From the variable table, else `arg0`, `arg1`, ….
    pub name: String,
    pub ty: JType,
    /// The constants, when the type is an enum.
    pub enum_constants: Vec<String>,
}

/// A resolved method and what it takes.
#[derive(Debug, Clone)]
pub struct MethodShape {
    pub class: String,
    /// `quote(java.lang.String, int, java.util.Map<…>)`.
    pub declaration: String,
    pub is_static: bool,
    pub params: Vec<Param>,
    pub returns: JType,
}

/// A finished call.
#[derive(Debug, Clone)]
pub struct CallOutcome {
    pub method: MethodShape,
    pub thread: ThreadId,
    pub thread_name: String,
    pub venue: Venue,
    pub value: Val,
    /// The JVM type of an object result.
    pub value_type: Option<String>,
    /// `toString()` of an object result (invoked while the thread was still ours).
    pub to_string: Option<String>,
    /// The result in one line (nothing invoked).
    pub shown: Shown,
    /// The field tree (fields read, nothing invoked).
    pub tree: Tree,
    pub took: Duration,
    /// The Spring context a bean came from: its type and id.
    pub bean_context: Option<(String, u64)>,
}

/// Runs methods on one thread for one request: bounded calls, strings and
/// objects it created kept from collection until it is done.
pub(crate) struct Caller<'a> {
    pub session: &'a Jvm,
    pub thread: ThreadId,
    pub budget: Duration,
    pub options: InvokeOptions,
    pinned: Mutex<Vec<ObjectId>>,
    /// The class whose loader loads a class not loaded yet.
    home: Mutex<Option<ReferenceTypeId>>,
}

impl<'a> Caller<'a> {
    pub fn new(session: &'a Jvm, thread: ThreadId, budget: Duration, all: bool) -> Self {
        let options = if all {
            InvokeOptions(0)
        } else {
            InvokeOptions::INVOKE_SINGLE_THREADED
        };
        Self {
            session,
            thread,
            budget,
            options,
            pinned: Mutex::new(Vec::new()),
            home: Mutex::new(None),
        }
    }

    pub fn classes(&self) -> &ClassCache {
        self.session.classes()
    }

    /// Keeps `object` from collection until [`Caller::release`].
    pub async fn pin(&self, object: ObjectId) -> Result<(), JdwpError> {
        if object.0 == 0 {
            return Ok(());
        }
        self.session
            .connection()
            .send(&DisableCollection { object })
            .await?;
        if let Ok(mut p) = self.pinned.lock() {
            p.push(object);
        }
        Ok(())
    }

    /// Lets everything pinned be collected again.
    pub async fn release(&self) {
        let pinned = self
            .pinned
            .lock()
            .map(|mut p| std::mem::take(&mut *p))
            .unwrap_or_default();
        let conn = self.session.connection();
        futures::future::join_all(
            pinned
                .into_iter()
                .map(|object| conn.send(&EnableCollection { object })),
        )
        .await;
    }

    /// A new `java.lang.String`, pinned.
    pub async fn string(&self, s: &str) -> Result<Value, JdwpError> {
        let id = self
            .session
            .connection()
            .send(&crate::jdwp::virtual_machine::CreateString { utf: s.into() })
            .await?;
        self.pin(id).await?;
        Ok(Value::Object {
            tag: Tag::String,
            id,
        })
    }

    /// The text of a `String` value (`None` for null or a non-string).
    pub async fn text(&self, v: &Value) -> Result<Option<String>, JdwpError> {
        match v {
            Value::Object { id, .. } if id.0 != 0 => {
                let t = self.classes().type_of(*id).await?;
                if self.classes().info(t.id).await?.name != "java.lang.String" {
                    return Ok(None);
                }
                let s = self
                    .session
                    .connection()
                    .send(&crate::jdwp::string_reference::Value { string_object: *id })
                    .await?;
                Ok(Some(s))
            }
            _ => Ok(None),
        }
    }

    /// Classes not loaded yet are loaded by `home`'s class loader.
    pub fn set_home(&self, class: ReferenceTypeId) {
        if let Ok(mut h) = self.home.lock() {
            *h = Some(class);
        }
    }

    /// The loaded class `name` (the first copy); one not loaded yet is
    /// loaded (`Class.forName`) by the class loader of the call's target.
    pub async fn class(&self, name: &str) -> Result<ReferenceTypeId, SessionError> {
        let copies = self.classes().by_name(name).await?;
        if let Some(c) = copies.first() {
            return Ok(c.id);
        }
        let home = self.home.lock().ok().and_then(|h| *h);
        match home {
            Some(home) if !name.ends_with("[]") => self.load(name, home).await,
            _ => Err(CallError::NotLoaded { class: name.into() }.into()),
        }
    }

    async fn load(
        &self,
        name: &str,
        home: ReferenceTypeId,
    ) -> Result<ReferenceTypeId, SessionError> {
        let loader = self.classes().loader(home).await?;
        let class = self
            .classes()
            .by_name("java.lang.Class")
            .await?
            .first()
            .map(|c| c.id)
            .ok_or_else(|| CallError::NotLoaded {
                class: "java.lang.Class".into(),
            })?;
        let (decl, for_name) = self
            .find(
                class,
                "forName",
                "(Ljava/lang/String;ZLjava/lang/ClassLoader;)Ljava/lang/Class;",
            )
            .await?;
        let n = self.string(name).await?;
        let loader = Value::Object {
            tag: Tag::ClassLoader,
            id: loader,
        };
        let found = self
            .call(None, decl, &for_name, vec![n, Value::Boolean(true), loader])
            .await
            .map_err(|_| CallError::NotLoaded { class: name.into() })?;
        let object = Self::object(&found).ok_or(CallError::NotLoaded { class: name.into() })?;
        let t = self
            .session
            .connection()
            .send(&crate::jdwp::class_object_reference::ReflectedType {
                class_object: object,
            })
            .await?;
        Ok(t.id)
    }

    /// Runs `method` (declared by `decl`) on `object`, or statically.
    pub async fn call(
        &self,
        object: Option<ObjectId>,
        decl: ReferenceTypeId,
        method: &MethodInfo,
        args: Vec<Value>,
    ) -> Result<Value, SessionError> {
        let label = format!("{}.{}", self.classes().info(decl).await?.name, method.name);
        let (thread, options) = (self.thread, self.options);
        let reply = match object {
            Some(object) if !method.is_static() => {
                let cmd = crate::jdwp::object_reference::InvokeMethod {
                    object,
                    thread,
                    class: decl,
                    method: method.id,
                    arguments: args,
                    options,
                };
                bounded(self.classes(), &cmd, thread, self.budget).await
            }
            _ if self.classes().info(decl).await?.tag == TypeTag::Interface => {
                let cmd = crate::jdwp::interface_type::InvokeMethod {
                    interface: decl,
                    thread,
                    method: method.id,
                    arguments: args,
                    options,
                };
                bounded(self.classes(), &cmd, thread, self.budget).await
            }
            _ => {
                let cmd = crate::jdwp::class_type::InvokeMethod {
                    class: decl,
                    thread,
                    method: method.id,
                    arguments: args,
                    options,
                };
                bounded(self.classes(), &cmd, thread, self.budget).await
            }
        };
        self.returned(reply, &label).await
    }

    /// Runs the constructor `ctor` of `class`.
    pub async fn construct(
        &self,
        class: ReferenceTypeId,
        ctor: &MethodInfo,
        args: Vec<Value>,
    ) -> Result<ObjectId, SessionError> {
        let label = format!("new {}", self.classes().info(class).await?.name);
        let cmd = crate::jdwp::class_type::NewInstance {
            class,
            thread: self.thread,
            method: ctor.id,
            arguments: args,
            options: self.options,
        };
        let reply = bounded(self.classes(), &cmd, self.thread, self.budget)
            .await
            .map(|r| InvokeMethodReply {
                return_value: Value::Object {
                    tag: r.new_object.tag,
                    id: r.new_object.id,
                },
                exception: r.exception,
            });
        match self.returned(reply, &label).await? {
            Value::Object { id, .. } => {
                self.pin(id).await?;
                Ok(id)
            }
            _ => Ok(ObjectId(0)),
        }
    }

    /// The return value, or the timeout or the exception as an error.
    async fn returned(
        &self,
        reply: Result<InvokeMethodReply, JdwpError>,
        label: &str,
    ) -> Result<Value, SessionError> {
        let reply = match reply {
            Ok(r) => r,
            Err(JdwpError::Overran { .. }) => {
                return Err(CallError::Timeout {
                    method: label.into(),
                    ms: self.budget.as_millis(),
                }
                .into());
            }
            Err(JdwpError::Cancelled { ended, .. }) => {
                return Err(CallError::Cancelled {
                    method: label.into(),
                    ms: self.budget.as_millis(),
                    ended,
                }
                .into());
            }
            Err(e) => return Err(self.session.map_err(e)),
        };
        let ex = reply.exception.id;
        if ex.0 != 0 {
            let t = self.classes().type_of(ex).await?;
            let exception = self.classes().info(t.id).await?.name.clone();
            let message = self.message_of(ex).await;
            return Err(CallError::Threw {
                method: label.into(),
                exception,
                message,
                handle: ex.0,
            }
            .into());
        }
        Ok(reply.return_value)
    }

    /// `getMessage()` of a thrown exception, when it has one.
    async fn message_of(&self, ex: ObjectId) -> Option<String> {
        let v = Box::pin(self.call_named(ex, "getMessage", "()Ljava/lang/String;", Vec::new()))
            .await
            .ok()?;
        self.text(&v).await.ok().flatten()
    }

    /// Calls the method `name` with JNI signature `sig` found on `object`'s
    /// class or a superclass.
    pub async fn call_named(
        &self,
        object: ObjectId,
        name: &str,
        sig: &str,
        args: Vec<Value>,
    ) -> Result<Value, SessionError> {
        let ty = self.classes().type_of(object).await?.id;
        let (decl, m) = self.find(ty, name, sig).await?;
        self.call(Some(object), decl, &m, args).await
    }

    /// The method `name` `sig` of `ty` or its superclasses, nearest first:
    /// each class's methods are read only when the ones below it lack it.
    pub async fn find(
        &self,
        ty: ReferenceTypeId,
        name: &str,
        sig: &str,
    ) -> Result<(ReferenceTypeId, MethodInfo), SessionError> {
        let mut at = Some(ty);
        let mut climbed = 0;
        while let Some(t) = at {
            if let Some(m) = self
                .classes()
                .methods(t)
                .await?
                .iter()
                .find(|m| m.name == name && m.signature == sig)
            {
                return Ok((t, m.clone()));
            }
            climbed += 1;
            at = match climbed > 64 {
                true => None,
                false => self.classes().superclass(t).await?,
            };
        }
        Err(CallError::NoSuchMethod {
            class: self.classes().info(ty).await?.name.clone(),
            method: format!("{name}{sig}"),
            overloads: Vec::new(),
        }
        .into())
    }

    /// The method `name` `sig` of the JDK class `class` (`java.lang.ClassLoader`),
    /// which every instance of it answers, overridden or not: found on the
    /// class that declares it rather than by climbing from an object's own
    /// class through loaders' and streams' private hierarchies.
    pub async fn find_declared(
        &self,
        class: &str,
        name: &str,
        sig: &str,
    ) -> Result<(ReferenceTypeId, MethodInfo), SessionError> {
        let Some(ty) = self.classes().by_name(class).await?.first().map(|c| c.id) else {
            return Err(CallError::NoSuchMethod {
                class: class.to_string(),
                method: format!("{name}{sig}"),
                overloads: Vec::new(),
            }
            .into());
        };
        self.find(ty, name, sig).await
    }

    /// The object of a value, `None` for null.
    pub fn object(v: &Value) -> Option<ObjectId> {
        match v {
            Value::Object { id, .. } if id.0 != 0 => Some(*id),
            _ => None,
        }
    }

    /// The elements of an `Object[]` (or any reference array).
    pub async fn elements(&self, array: ObjectId, max: usize) -> Result<Vec<Value>, JdwpError> {
        let conn = self.session.connection();
        let len = conn
            .send(&crate::jdwp::array_reference::Length { array })
            .await?;
        let n = usize::try_from(len).unwrap_or(0).min(max);
        if n == 0 {
            return Ok(Vec::new());
        }
        let region = conn
            .send(&crate::jdwp::array_reference::GetValues {
                array,
                first_index: 0,
                length: i32::try_from(n).unwrap_or(i32::MAX),
            })
            .await?;
        Ok(region.values)
    }
}

/// A call's shape, value, `toString()`, views and the bean's context.
type Viewed = (
    MethodShape,
    Val,
    Option<String>,
    (Shown, Tree),
    Option<(String, u64)>,
);

impl Jvm {
    /// Calls a method of the application (see the module doc): resolves
    /// the target and the overload, builds the arguments, runs the call on
    /// an event-suspended or parked thread and reads the result's views
    /// before the thread is given back.
    pub async fn invoke(&self, spec: &CallSpec) -> Result<CallOutcome, SessionError> {
        self.ensure_writable("invoke a method")?;
        self.check_alive()?;
        let seat = seat::take(self, spec.thread).await?;
        let caller = Caller::new(self, seat.thread, spec.budget, spec.all_threads);
        let started = Instant::now();
        let result = self.invoke_on(&caller, &seat.ctx, spec).await;
        seat.end(self, &caller, &result).await;
        let (method, value, to_string, (shown, tree), bean_context) = result?;
        let value_type = match &value {
            Val::Object { id, .. } if *id != 0 => {
                let t = self.classes().type_of(ObjectId(*id)).await.ok();
                match t {
                    Some(t) => self.classes().info(t.id).await.ok().map(|i| i.name.clone()),
                    None => None,
                }
            }
            _ => None,
        };
        Ok(CallOutcome {
            method,
            thread: seat.thread,
            thread_name: seat.name.clone(),
            venue: seat.venue,
            value,
            value_type,
            to_string,
            shown,
            tree,
            took: started.elapsed(),
            bean_context,
        })
    }

    /// The call itself, on a seated thread; answers the shape, the value,
    /// its `toString()`, its field tree and notes.
    async fn invoke_on(
        &self,
        caller: &Caller<'_>,
        ctx: &EvalContext,
        spec: &CallSpec,
    ) -> Result<Viewed, SessionError> {
        let mut bean_context = None;
        let (object, class) = self
            .call_target(caller, &spec.target, &mut bean_context)
            .await?;
        caller.set_home(class);
        let (decl, method, shape) = resolve::choose(
            caller,
            class,
            object.is_some(),
            &spec.method,
            spec.param_types.as_deref(),
            &spec.args,
        )
        .await?;
        let mut values = Vec::with_capacity(spec.args.len());
        for (i, (arg, p)) in spec.args.iter().zip(&shape.params).enumerate() {
            values.push(args::build(caller, i, arg, &p.ty).await?);
        }
        let v = caller.call(object, decl, &method, values).await?;
        let value = to_val(&v);
        if let Some(id) = Caller::object(&v) {
            caller.pin(id).await?;
        }
        let to_string = match &v {
            Value::Object { id, .. } if id.0 != 0 => {
                match caller
                    .call_named(*id, "toString", "()Ljava/lang/String;", Vec::new())
                    .await
                {
                    Ok(s) => caller.text(&s).await?,
                    Err(e) => Some(format!("toString() failed: {e}")),
                }
            }
            _ => None,
        };
        let quiet = EvalContext {
            invocable: false,
            ..ctx.clone()
        };
        let reader = self.value_reader(&quiet, spec.views, None);
        let views = (reader.line(&value).await, reader.tree(&value).await);
        Ok((shape, value, to_string, views, bean_context))
    }

    /// The object (if any) and class a call is made on.
    async fn call_target(
        &self,
        caller: &Caller<'_>,
        target: &CallTarget,
        bean_context: &mut Option<(String, u64)>,
    ) -> Result<(Option<ObjectId>, ReferenceTypeId), SessionError> {
        Ok(match target {
            CallTarget::Class(name) => (None, caller.class(name).await?),
            CallTarget::Object(id) => {
                let t = self.classes().type_of(ObjectId(*id)).await?;
                (Some(ObjectId(*id)), t.id)
            }
            CallTarget::Bean { name, type_name } => {
                let (bean, context) =
                    spring::bean(caller, name.as_deref(), type_name.as_deref()).await?;
                *bean_context = Some(context);
                let t = self.classes().type_of(bean).await?;
                (Some(bean), t.id)
            }
        })
    }

    /// The methods named `method` of the target with their parameters, for
    /// an argument template; reads only (no thread is needed).
    pub async fn method_shapes(
        &self,
        target: &CallTarget,
        method: &str,
    ) -> Result<Vec<MethodShape>, SessionError> {
        self.ensure_writable("invoke a method")?;
        self.check_alive()?;
        let class = match target {
            CallTarget::Class(name) => {
                let copies = self.classes().by_name(name).await?;
                copies
                    .first()
                    .map(|c| c.id)
                    .ok_or_else(|| CallError::NotLoaded {
                        class: name.clone(),
                    })?
            }
            CallTarget::Object(id) => self.classes().type_of(ObjectId(*id)).await?.id,
            CallTarget::Bean {
                type_name: Some(t), ..
            } => {
                let copies = self.classes().by_name(t).await?;
                copies
                    .first()
                    .map(|c| c.id)
                    .ok_or_else(|| CallError::NotLoaded { class: t.clone() })?
            }
            CallTarget::Bean { .. } => {
                // A bean by name needs the context, so a thread to ask it on.
                let seat = seat::take(self, None).await?;
                let caller = Caller::new(self, seat.thread, Duration::from_secs(2), false);
                let found = spring::bean(&caller, bean_name(target), None).await;
                let ty = match &found {
                    Ok((bean, _)) => self.classes().type_of(*bean).await.map(|t| t.id),
                    Err(_) => Ok(ReferenceTypeId(0)),
                };
                seat.end(self, &caller, &found).await;
                found?;
                ty?
            }
        };
        resolve::shapes(self.classes(), class, method).await
    }
}

fn bean_name(target: &CallTarget) -> Option<&str> {
    match target {
        CallTarget::Bean { name, .. } => name.as_deref(),
        _ => None,
    }
}

/// The parameter and return types of `m`, generic when the class file has
/// a generic signature.
pub(crate) fn types_of(m: &MethodInfo) -> (Vec<JType>, JType) {
    let erased = method_types(&m.signature).unwrap_or((Vec::new(), JType::Prim('V')));
    match method_types(&m.generic) {
        Some((params, ret)) if params.len() == erased.0.len() => (params, ret),
        _ => erased,
    }
}

/// `name(java.lang.String, int)`.
pub(crate) fn declaration(name: &str, params: &[JType]) -> String {
    format!(
        "{name}({})",
        params
            .iter()
            .map(JType::java)
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// `java.lang.String` for a JNI signature (re-exported for the readers).
pub(crate) fn erased_name(t: &JType) -> String {
    java_name(&t.jni())
}
