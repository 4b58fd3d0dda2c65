//! Reading a Spring application through its own ApplicationContext. The
//! context is found on the heap: `ReferenceType.Instances` of every loaded
//! class that extends `AbstractApplicationContext` (Instances answers
//! exact classes only, so each loaded subclass is asked), preferring an
//! active one. No static holder is assumed, so any Spring application
//! qualifies. Everything else is a call on that context on the seated
//! thread: `isActive()`, `isRunning()` (which throws until refresh has
//! finished), `getBeanDefinitionNames()`/`getType()`, `getBean()`, and the
//! Environment's `getProperty()` with the first property source that
//! `containsProperty()` the key, which is the order Spring resolves in.

use std::time::Duration;

use super::{CallError, Caller, Venue, seat};
use crate::door::Jvm;
use crate::error::SessionError;
use crate::jdwp::class_object_reference::ReflectedType;
use crate::jdwp::reference_type::{ClassObject, Instances};
use crate::jdwp::{ObjectId, Tag, ThreadId, Value};
use crate::model::classes::TypeKind;

const ABSTRACT_CONTEXT: &str = "org.springframework.context.support.AbstractApplicationContext";
/// Beans whose types are read at most (one call each).
const MAX_BEANS: usize = 500;
/// Words that make a key's value a secret.
const SECRET_WORDS: &[&str] = &["password", "secret", "token", "key"];

/// What `debug_spring` asks.
#[derive(Debug, Clone, Default)]
pub struct SpringQuery {
    /// Substring of a bean's name or type; `None` lists no beans.
    pub beans: Option<String>,
    pub keys: Vec<String>,
    pub thread: Option<ThreadId>,
    pub budget: Duration,
}

/// A bean by name and type.
#[derive(Debug, Clone)]
pub struct BeanInfo {
    pub name: String,
    pub type_name: String,
}

/// An Environment key as Spring resolves it.
#[derive(Debug, Clone)]
pub struct EnvKey {
    pub key: String,
    /// `None` when Spring resolves nothing for it.
    pub value: Option<String>,
    /// The property source it came from.
    pub source: Option<String>,
    /// The value was replaced because the key names a secret.
    pub masked: bool,
}

/// The application context as read.
#[derive(Debug, Clone)]
pub struct SpringReport {
    /// `type @0x…` of the context read.
    pub context: String,
    /// Contexts found on the heap.
    pub contexts: usize,
    pub active: bool,
    /// Refresh finished (its lifecycle processor runs).
    pub refreshed: bool,
    /// Why it is not refreshed, when it is not.
    pub not_refreshed: Option<String>,
    pub beans: Vec<BeanInfo>,
    pub bean_count: usize,
    pub keys: Vec<EnvKey>,
    pub thread_name: String,
    pub venue: Venue,
}

impl SpringReport {
    /// Refreshed and active.
    pub fn ready(&self) -> bool {
        self.active && self.refreshed
    }
}

/// Whether a key's value is masked.
pub fn is_secret(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    SECRET_WORDS.iter().any(|w| k.contains(w))
}

/// The application's contexts on the heap, active first.
async fn contexts(caller: &Caller<'_>) -> Result<Vec<ObjectId>, SessionError> {
    let classes = caller.classes();
    let mut found = Vec::new();
    for c in caller.session.loaded_classes().await? {
        if c.kind != TypeKind::Class || !c.name.contains("ApplicationContext") {
            continue;
        }
        for copy in classes.by_name(&c.name).await? {
            let mut is_context = false;
            for t in classes.hierarchy(copy.id).await? {
                is_context |= classes.info(t).await?.name == ABSTRACT_CONTEXT;
            }
            if !is_context {
                continue;
            }
            let objects = caller
                .session
                .connection()
                .send(&Instances {
                    ref_type: copy.id,
                    max_instances: 8,
                })
                .await?;
            found.extend(objects.into_iter().map(|o| o.id));
        }
    }
    let mut active = Vec::new();
    let mut rest = Vec::new();
    for ctx in found {
        match boolean(caller, ctx, "isActive").await {
            Ok(true) => active.push(ctx),
            _ => rest.push(ctx),
        }
    }
    active.extend(rest);
    Ok(active)
}

/// The context to read: the first active one.
async fn context(caller: &Caller<'_>) -> Result<(ObjectId, usize), SessionError> {
    let all = contexts(caller).await?;
    match all.first() {
        Some(&c) => {
            caller.pin(c).await?;
            Ok((c, all.len()))
        }
        None => Err(CallError::NoSpringContext.into()),
    }
}

async fn boolean(caller: &Caller<'_>, object: ObjectId, name: &str) -> Result<bool, SessionError> {
    match caller.call_named(object, name, "()Z", Vec::new()).await? {
        Value::Boolean(b) => Ok(b),
        _ => Ok(false),
    }
}

async fn call_object(
    caller: &Caller<'_>,
    object: ObjectId,
    name: &str,
    sig: &str,
    args: Vec<Value>,
) -> Result<Option<ObjectId>, SessionError> {
    let v = caller.call_named(object, name, sig, args).await?;
    let o = Caller::object(&v);
    if let Some(o) = o {
        caller.pin(o).await?;
    }
    Ok(o)
}

/// The bean names of the context.
async fn bean_names(caller: &Caller<'_>, ctx: ObjectId) -> Result<Vec<String>, SessionError> {
    let Some(array) = call_object(
        caller,
        ctx,
        "getBeanDefinitionNames",
        "()[Ljava/lang/String;",
        Vec::new(),
    )
    .await?
    else {
        return Ok(Vec::new());
    };
    let mut names = Vec::new();
    for v in caller.elements(array, MAX_BEANS).await? {
        if let Some(s) = caller.text(&v).await? {
            names.push(s);
        }
    }
    Ok(names)
}

/// A bean by name or by type, with the type and id of its context.
pub(super) async fn bean(
    caller: &Caller<'_>,
    name: Option<&str>,
    type_name: Option<&str>,
) -> Result<(ObjectId, (String, u64)), SessionError> {
    let (ctx, _) = context(caller).await?;
    let ty = caller.classes().type_of(ctx).await?;
    let ctx_name = caller.classes().info(ty.id).await?.name.clone();
    let result = match (name, type_name) {
        (Some(n), _) => {
            let s = caller.string(n).await?;
            call_object(
                caller,
                ctx,
                "getBean",
                "(Ljava/lang/String;)Ljava/lang/Object;",
                vec![s],
            )
            .await
        }
        (None, Some(t)) => {
            let class = caller.class(t).await?;
            let object = caller
                .session
                .connection()
                .send(&ClassObject { ref_type: class })
                .await?;
            let arg = Value::Object {
                tag: Tag::ClassObject,
                id: object,
            };
            call_object(
                caller,
                ctx,
                "getBean",
                "(Ljava/lang/Class;)Ljava/lang/Object;",
                vec![arg],
            )
            .await
        }
        (None, None) => Ok(None),
    };
    let wanted = name
        .map(|n| format!("named {n:?}"))
        .or_else(|| type_name.map(|t| format!("of type {t}")))
        .unwrap_or_else(|| "(no name or type given)".into());
    match result {
        Ok(Some(bean)) => Ok((bean, (ctx_name, ctx.0))),
        Ok(None) | Err(SessionError::Call(CallError::Threw { .. })) => Err(CallError::NoBean {
            wanted,
            known: bean_names(caller, ctx).await.unwrap_or_default(),
        }
        .into()),
        Err(e) => Err(e),
    }
}

/// How Spring resolves `key`: its value and the first source holding it.
async fn resolve_key(
    caller: &Caller<'_>,
    env: ObjectId,
    sources: &[(String, ObjectId)],
    key: &str,
) -> Result<EnvKey, SessionError> {
    let k = caller.string(key).await?;
    let v = caller
        .call_named(
            env,
            "getProperty",
            "(Ljava/lang/String;)Ljava/lang/String;",
            vec![k],
        )
        .await?;
    let value = caller.text(&v).await?;
    let mut source = None;
    if value.is_some() {
        for (name, ps) in sources {
            let has = caller
                .call_named(*ps, "containsProperty", "(Ljava/lang/String;)Z", vec![k])
                .await?;
            if has == Value::Boolean(true) {
                source = Some(name.clone());
                break;
            }
        }
    }
    let masked = value.is_some() && is_secret(key);
    Ok(EnvKey {
        key: key.into(),
        value: if masked { Some("******".into()) } else { value },
        source,
        masked,
    })
}

/// The Environment's property sources in resolution order, by name.
async fn property_sources(
    caller: &Caller<'_>,
    env: ObjectId,
) -> Result<Vec<(String, ObjectId)>, SessionError> {
    let Some(sources) = call_object(
        caller,
        env,
        "getPropertySources",
        "()Lorg/springframework/core/env/MutablePropertySources;",
        Vec::new(),
    )
    .await?
    else {
        return Ok(Vec::new());
    };
    let Some(it) = call_object(
        caller,
        sources,
        "iterator",
        "()Ljava/util/Iterator;",
        Vec::new(),
    )
    .await?
    else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    while out.len() < 64 && boolean(caller, it, "hasNext").await? {
        let Some(ps) = call_object(caller, it, "next", "()Ljava/lang/Object;", Vec::new()).await?
        else {
            continue;
        };
        let name = caller
            .call_named(ps, "getName", "()Ljava/lang/String;", Vec::new())
            .await?;
        out.push((caller.text(&name).await?.unwrap_or_default(), ps));
    }
    Ok(out)
}

impl Jvm {
    /// Reads the application's Spring context (see the module doc).
    pub async fn spring(&self, q: &SpringQuery) -> Result<SpringReport, SessionError> {
        self.ensure_writable("invoke Spring's ApplicationContext")?;
        self.check_alive()?;
        let seat = seat::take(self, q.thread).await?;
        let caller = Caller::new(self, seat.thread, q.budget, false);
        let result = self.spring_on(&caller, q).await;
        seat.end(self, &caller, &result).await;
        let mut report = result?;
        report.thread_name = seat.name.clone();
        report.venue = seat.venue;
        Ok(report)
    }

    async fn spring_on(
        &self,
        caller: &Caller<'_>,
        q: &SpringQuery,
    ) -> Result<SpringReport, SessionError> {
        let (ctx, contexts) = context(caller).await?;
        let ty = self.classes().type_of(ctx).await?;
        let ctx_name = self.classes().info(ty.id).await?.name.clone();
        let active = boolean(caller, ctx, "isActive").await?;
        let (refreshed, not_refreshed) = match boolean(caller, ctx, "isRunning").await {
            Ok(r) => (
                r,
                (!r).then(|| "its lifecycle processor is not running".to_string()),
            ),
            Err(SessionError::Call(CallError::Threw { message, .. })) => (
                false,
                Some(message.unwrap_or_else(|| "refresh has not finished".into())),
            ),
            Err(e) => return Err(e),
        };
        let mut beans = Vec::new();
        let mut bean_count = 0;
        if let Some(filter) = &q.beans {
            let names = bean_names(caller, ctx).await?;
            bean_count = names.len();
            let f = filter.to_ascii_lowercase();
            for name in names {
                let s = caller.string(&name).await?;
                let class = call_object(
                    caller,
                    ctx,
                    "getType",
                    "(Ljava/lang/String;)Ljava/lang/Class;",
                    vec![s],
                )
                .await?;
                let type_name = match class {
                    Some(c) => {
                        let t = self
                            .connection()
                            .send(&ReflectedType { class_object: c })
                            .await?;
                        self.classes().info(t.id).await?.name.clone()
                    }
                    None => "?".into(),
                };
                let hit = f.is_empty()
                    || name.to_ascii_lowercase().contains(&f)
                    || type_name.to_ascii_lowercase().contains(&f);
                if hit {
                    beans.push(BeanInfo { name, type_name });
                }
            }
        }
        let mut keys = Vec::new();
        if !q.keys.is_empty() {
            let env = call_object(
                caller,
                ctx,
                "getEnvironment",
                "()Lorg/springframework/core/env/ConfigurableEnvironment;",
                Vec::new(),
            )
            .await?
            .ok_or(CallError::NoSpringContext)?;
            let sources = property_sources(caller, env).await?;
            for key in &q.keys {
                keys.push(resolve_key(caller, env, &sources, key).await?);
            }
        }
        Ok(SpringReport {
            context: format!("{ctx_name} @{:#x}", ctx.0),
            contexts,
            active,
            refreshed,
            not_refreshed,
            beans,
            bean_count,
            keys,
            thread_name: String::new(),
            venue: Venue::EventThread,
        })
    }
}
