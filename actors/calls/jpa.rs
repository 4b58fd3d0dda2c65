//! Running a JPA named query through the application's own EntityManager:
//! `createNamedQuery(name)`, `setFlushMode(FlushModeType.COMMIT)` so the
//! query does not push the persistence context's pending changes to the
//! database first (unless the agent allows the flush), `setParameter` per
//! parameter, `setMaxResults(fetch)`, `getResultList()`. The rows are read
//! by their fields only: nothing is invoked on an entity, so no lazy
//! association is fetched.
//!
//! The EntityManager is the one the agent names (an expression: a static
//! field, `this.em`, an `@0x…` handle), else the first object among the
//! seated frame's locals, `this`'s fields and its class's statics whose
//! class implements `javax.persistence.EntityManager` or
//! `jakarta.persistence.EntityManager`. The heap is not searched: Instances
//! answers exact classes, never an interface.

use std::time::Duration;

use super::args::build;
use super::{Arg, CallError, Caller, Venue, seat};
use crate::door::Jvm;
use crate::error::SessionError;
use crate::expr::Expr;
use crate::expr::eval::Val;
use crate::jdwp::reference_type::{GetValues as StaticValues, Interfaces};
use crate::jdwp::{ObjectId, ReferenceTypeId, ThreadId, Value};
use crate::jvm::eval::{self, EvalContext};
use crate::jvm::inspect::{self, Locals};
use crate::jvm::show::Budget;
use crate::model::shown::Tree;
use crate::model::signature::JType;

const MANAGERS: &[&str] = &[
    "javax.persistence.EntityManager",
    "jakarta.persistence.EntityManager",
];

/// A named query to run.
#[derive(Debug, Clone)]
pub struct NamedQuery {
    pub name: String,
    /// Parameters by name, in order.
    pub parameters: Vec<(String, Arg)>,
    /// Rows rendered at most; also what the JVM builds (`setMaxResults`).
    pub max_rows: usize,
    /// The EntityManager, as an expression; default: found in the frame.
    pub entity_manager: Option<Expr>,
    /// Let the provider flush pending changes first (a write).
    pub allow_flush: bool,
    pub thread: Option<ThreadId>,
    pub budget: Duration,
    pub views: Budget,
}

/// What a named query returned.
#[derive(Debug, Clone)]
pub struct QueryRows {
    /// `type @0x…` of the EntityManager used, and how it was found.
    pub entity_manager: String,
    /// Rows the JVM returned (at most `max_rows`: setMaxResults caps it).
    pub count: usize,
    pub max_rows: usize,
    /// Each row as a field tree (fields read, nothing invoked).
    pub rows: Vec<Tree>,
    /// Each parameter with the Java type it was bound as.
    pub bound: Vec<(String, String)>,
    /// The flush mode the query ran with (`COMMIT`, or `AUTO` when allowed).
    pub flush: &'static str,
    pub thread_name: String,
    pub venue: Venue,
}

/// Whether `ty` (or a superclass, or an interface of either) is an EntityManager.
async fn is_manager(caller: &Caller<'_>, ty: ReferenceTypeId) -> Result<bool, SessionError> {
    let classes = caller.classes();
    let mut todo = classes.hierarchy(ty).await?;
    let mut seen = Vec::new();
    while let Some(t) = todo.pop() {
        if seen.contains(&t) || seen.len() > 256 {
            continue;
        }
        seen.push(t);
        if MANAGERS.contains(&classes.info(t).await?.name.as_str()) {
            return Ok(true);
        }
        let more = caller
            .session
            .connection()
            .send(&Interfaces { ref_type: t })
            .await?;
        todo.extend(more);
    }
    Ok(false)
}

/// The first EntityManager among `values`.
async fn first_manager(
    caller: &Caller<'_>,
    values: Vec<(String, Value)>,
) -> Result<Option<(ObjectId, String)>, SessionError> {
    for (label, v) in values {
        if let Some(o) = Caller::object(&v) {
            let ty = caller.classes().type_of(o).await?.id;
            if is_manager(caller, ty).await? {
                return Ok(Some((o, label)));
            }
        }
    }
    Ok(None)
}

/// The EntityManager of the frame (see the module doc).
async fn find_manager(
    caller: &Caller<'_>,
    ctx: &EvalContext,
) -> Result<(ObjectId, String), SessionError> {
    let classes = caller.classes();
    let Some(frame) = &ctx.frame else {
        return Err(CallError::NoEntityManager {
            searched: "the thread has no frame to search".into(),
        }
        .into());
    };
    if let Locals::Known(locals) = inspect::locals(classes, caller.thread, frame, None).await? {
        let labelled: Vec<(String, Value)> = locals
            .into_iter()
            .map(|l| (format!("local {}", l.name), l.value))
            .collect();
        let found = first_manager(caller, labelled).await?;
        if let Some(m) = found {
            return Ok(m);
        }
    }
    if ctx.this.0 != 0 {
        let ty = classes.type_of(ctx.this).await?.id;
        for t in classes.hierarchy(ty).await? {
            let fields: Vec<_> = classes
                .fields(t)
                .await?
                .iter()
                .filter(|f| !f.is_static() && f.signature.starts_with('L'))
                .cloned()
                .collect();
            let values = caller
                .session
                .connection()
                .send(&crate::jdwp::object_reference::GetValues {
                    object: ctx.this,
                    fields: fields.iter().map(|f| f.id).collect(),
                })
                .await?;
            let labelled: Vec<(String, Value)> = fields
                .iter()
                .map(|f| format!("this.{}", f.name))
                .zip(values)
                .collect();
            if let Some(m) = first_manager(caller, labelled).await? {
                return Ok(m);
            }
        }
    }
    let statics: Vec<_> = classes
        .fields(frame.class.id)
        .await?
        .iter()
        .filter(|f| f.is_static() && f.signature.starts_with('L'))
        .cloned()
        .collect();
    let values = caller
        .session
        .connection()
        .send(&StaticValues {
            ref_type: frame.class.id,
            fields: statics.iter().map(|f| f.id).collect(),
        })
        .await?;
    let labelled: Vec<(String, Value)> = statics
        .iter()
        .map(|f| format!("{}.{}", frame.class.name, f.name))
        .zip(values)
        .collect();
    if let Some(m) = first_manager(caller, labelled).await? {
        return Ok(m);
    }
    Err(CallError::NoEntityManager {
        searched: format!(
            "none among the locals of {}, the fields of this, or the statics of {}",
            frame.label(),
            frame.class.name
        ),
    }
    .into())
}

impl Jvm {
    /// Runs a JPA named query (see the module doc).
    pub async fn run_named_query(&self, q: &NamedQuery) -> Result<QueryRows, SessionError> {
        self.ensure_writable("run a JPA query")?;
        self.check_alive()?;
        let seat = seat::take(self, q.thread).await?;
        let caller = Caller::new(self, seat.thread, q.budget, false);
        let result = self.query_on(&caller, &seat.ctx, q).await;
        seat.end(self, &caller, &result).await;
        let mut rows = result?;
        rows.thread_name = seat.name.clone();
        rows.venue = seat.venue;
        Ok(rows)
    }

    async fn query_on(
        &self,
        caller: &Caller<'_>,
        ctx: &EvalContext,
        q: &NamedQuery,
    ) -> Result<QueryRows, SessionError> {
        let (em, found) = match &q.entity_manager {
            Some(expr) => match eval::evaluate(self.classes(), ctx, expr).await {
                Ok(out) => match out.value {
                    Val::Object { id, .. } if id != 0 => (ObjectId(id), format!("{expr}")),
                    other => {
                        return Err(CallError::WrongKind {
                            what: format!("{expr} ({})", other.kind()),
                            expected: "EntityManager",
                        }
                        .into());
                    }
                },
                Err(f) => {
                    return Err(SessionError::EvalFailed {
                        part: Some("entity_manager"),
                        message: f.error.message,
                    });
                }
            },
            None => find_manager(caller, ctx).await?,
        };
        let ty = self.classes().type_of(em).await?.id;
        let em_type = self.classes().info(ty).await?.name.clone();
        if !is_manager(caller, ty).await? {
            return Err(CallError::WrongKind {
                what: format!("{em_type} @{:#x}", em.0),
                expected: "javax/jakarta.persistence.EntityManager",
            }
            .into());
        }
        let pkg = if em_type.starts_with("jakarta.") || self.uses_jakarta(caller).await {
            "jakarta/persistence"
        } else {
            "javax/persistence"
        };
        let name = caller.string(&q.name).await?;
        let query = caller
            .call_named(
                em,
                "createNamedQuery",
                &format!("(Ljava/lang/String;)L{pkg}/Query;"),
                vec![name],
            )
            .await?;
        let query = Caller::object(&query).ok_or(CallError::WrongKind {
            what: "createNamedQuery's result (null)".into(),
            expected: "Query",
        })?;
        caller.pin(query).await?;
        let flush = if q.allow_flush { "AUTO" } else { "COMMIT" };
        if !q.allow_flush {
            self.flush_on_commit(caller, query, pkg).await?;
        }
        let bound = self.bind(caller, query, pkg, &q.parameters).await?;
        let max = i32::try_from(q.max_rows.max(1)).unwrap_or(i32::MAX);
        caller
            .call_named(
                query,
                "setMaxResults",
                &format!("(I)L{pkg}/Query;"),
                vec![Value::Int(max)],
            )
            .await?;
        let list = caller
            .call_named(query, "getResultList", "()Ljava/util/List;", Vec::new())
            .await?;
        let list = Caller::object(&list).ok_or(CallError::WrongKind {
            what: "getResultList's result (null)".into(),
            expected: "List",
        })?;
        caller.pin(list).await?;
        let array = caller
            .call_named(list, "toArray", "()[Ljava/lang/Object;", Vec::new())
            .await?;
        let elements = match Caller::object(&array) {
            Some(a) => caller.elements(a, q.max_rows.max(1)).await?,
            None => Vec::new(),
        };
        let quiet = EvalContext {
            invocable: false,
            ..ctx.clone()
        };
        let renderer = self.value_reader(&quiet, q.views, None);
        let mut rows = Vec::with_capacity(elements.len());
        for v in &elements {
            rows.push(renderer.tree(&eval::to_val(v)).await);
        }
        Ok(QueryRows {
            entity_manager: format!("{em_type} @{:#x} ({found})", em.0),
            count: elements.len(),
            max_rows: q.max_rows,
            rows,
            bound,
            flush,
            thread_name: String::new(),
            venue: Venue::EventThread,
        })
    }

    /// `query.setFlushMode(FlushModeType.COMMIT)`.
    async fn flush_on_commit(
        &self,
        caller: &Caller<'_>,
        query: ObjectId,
        pkg: &str,
    ) -> Result<(), SessionError> {
        let mode_class = caller
            .class(&format!("{}.FlushModeType", pkg.replace('/', ".")))
            .await?;
        let fields = self.classes().fields(mode_class).await?;
        let commit = fields
            .iter()
            .find(|f| f.name == "COMMIT")
            .ok_or(CallError::NotLoaded {
                class: "FlushModeType.COMMIT".into(),
            })?;
        let mode = self
            .connection()
            .send(&StaticValues {
                ref_type: mode_class,
                fields: vec![commit.id],
            })
            .await?;
        caller
            .call_named(
                query,
                "setFlushMode",
                &format!("(L{pkg}/FlushModeType;)L{pkg}/Query;"),
                mode,
            )
            .await?;
        Ok(())
    }

    /// Binds each parameter by name; answers the Java type each was bound as.
    async fn bind(
        &self,
        caller: &Caller<'_>,
        query: ObjectId,
        pkg: &str,
        parameters: &[(String, Arg)],
    ) -> Result<Vec<(String, String)>, SessionError> {
        let mut bound = Vec::new();
        for (i, (pname, arg)) in parameters.iter().enumerate() {
            let v = build(caller, i, arg, &JType::object()).await?;
            let java = match Caller::object(&v) {
                Some(o) => {
                    let t = self.classes().type_of(o).await?.id;
                    self.classes().info(t).await?.name.clone()
                }
                None => "null".into(),
            };
            let n = caller.string(pname).await?;
            caller
                .call_named(
                    query,
                    "setParameter",
                    &format!("(Ljava/lang/String;Ljava/lang/Object;)L{pkg}/Query;"),
                    vec![n, v],
                )
                .await?;
            bound.push((pname.clone(), java));
        }
        Ok(bound)
    }

    /// Whether the JVM has the jakarta persistence API and not the javax one.
    async fn uses_jakarta(&self, caller: &Caller<'_>) -> bool {
        let javax = caller.classes().by_name(MANAGERS[0]).await;
        matches!(javax, Ok(v) if v.is_empty())
    }
}
