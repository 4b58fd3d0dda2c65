//! Resolving a stop point definition into JDWP event requests: the
//! locations of a line in one class copy (every method, every bytecode
//! index of the line), a method's entry, a field's declaring type, the
//! modifiers each kind takes; then setting and clearing requests in
//! pipelined bursts. No registry state here: `ops` decides, this reads
//! and writes the JVM.

use futures::future::join_all;

use crate::connection::ConnectionHandle;
use crate::error::JdwpError;
use crate::jdwp::event_request::{Clear, Set};
use crate::jdwp::{
    ErrorCode, EventKind, FieldId, Location, Modifier, ObjectId, ReferenceTypeId, RequestId,
    SuspendPolicy, TaggedTypeId, ThreadId, TypeTag,
};
use crate::jvm::classes::{ClassCache, MethodInfo, java_name};
use crate::model::stop_point::{
    Filters, MonitorKind, StopPointSpec, Target, jdwp_class_pattern, similar_names,
};

use super::routes::RequestKey;

pub use crate::error::ArmError;

/// One request to set: its kind and the modifiers that place it (filters
/// and the count are added when it is set).
#[derive(Debug, Clone)]
pub struct Planned {
    pub kind: EventKind,
    pub modifiers: Vec<Modifier>,
    pub location: Option<Location>,
}

/// What a definition resolves to on one class copy.
#[derive(Debug, Clone)]
pub struct CopyPlan {
    pub class: ReferenceTypeId,
    pub requests: Vec<Planned>,
    /// Any located method is static (an instance filter would be ignored).
    pub any_static: bool,
    /// The field is static (an instance filter would be ignored).
    pub static_field: bool,
}

impl CopyPlan {
    pub fn locations(&self) -> Vec<Location> {
        self.requests.iter().filter_map(|r| r.location).collect()
    }
}

/// The locations of `line` (or of `method`'s entry) in one class copy.
async fn resolve_line(
    classes: &ClassCache,
    class: TaggedTypeId,
    name: &str,
    method: Option<&str>,
    line: Option<u32>,
) -> Result<(Vec<(Location, MethodInfo)>, bool), ArmError> {
    let methods = classes.methods(class.id).await?;
    let candidates: Vec<&MethodInfo> = methods
        .iter()
        .filter(|m| method.is_none_or(|want| m.name == want))
        .collect();
    if candidates.is_empty() {
        let mut names: Vec<&str> = methods
            .iter()
            .map(|m| m.name.as_str())
            .filter(|n| *n != "<clinit>")
            .collect();
        names.sort_unstable();
        names.dedup();
        let want = method.unwrap_or("");
        let similar = similar_names(want, names.iter().copied());
        return Err(ArmError::NoSuchMethod {
            class: name.to_string(),
            method: want.to_string(),
            similar,
            methods: names.into_iter().map(String::from).collect(),
        });
    }
    let tables = join_all(candidates.iter().map(|m| classes.lines(class.id, m.id))).await;
    let tag = match class.tag {
        TypeTag::Interface => TypeTag::Interface,
        _ => TypeTag::Class,
    };
    let mut found = Vec::new();
    let mut any_static = false;
    let mut code_lines: Vec<i32> = Vec::new();
    for (m, table) in candidates.iter().zip(tables) {
        let table = table?;
        if m.is_native() || m.is_abstract() {
            continue;
        }
        code_lines.extend(table.entries.iter().map(|(_, l)| *l));
        let indexes: Vec<i64> = match line {
            Some(l) => table.indexes_of(l as i32),
            None => vec![table.start.max(0)],
        };
        for index in indexes {
            any_static |= m.is_static();
            found.push((
                Location {
                    type_tag: tag,
                    class: class.id,
                    method: m.id,
                    index: index as u64,
                },
                (*m).clone(),
            ));
        }
    }
    if found.is_empty() {
        return Err(match line {
            Some(l) => no_code(name, method, l, &mut code_lines),
            None => ArmError::NoCode {
                class: name.to_string(),
                method: method.unwrap_or("?").to_string(),
            },
        });
    }
    Ok((found, any_static))
}

/// The refusal of a line that has no code, naming the nearest lines that do.
fn no_code(name: &str, method: Option<&str>, line: u32, lines: &mut Vec<i32>) -> ArmError {
    lines.sort_unstable();
    lines.dedup();
    let l = line as i32;
    let below = lines.iter().rev().find(|x| **x < l).copied();
    let above = lines.iter().find(|x| **x > l).copied();
    let scope = match method {
        Some(m) => format!("{name}.{m}"),
        None => name.to_string(),
    };
    ArmError::NoCodeAtLine {
        scope,
        line,
        has_table: !lines.is_empty(),
        nearest: [below, above].into_iter().flatten().collect(),
    }
}

/// Resolves a definition on one loaded class copy.
pub async fn plan_copy(
    classes: &ClassCache,
    spec: &StopPointSpec,
    class: TaggedTypeId,
) -> Result<CopyPlan, ArmError> {
    let info = classes.info(class.id).await?;
    let name = info.name.clone();
    match &spec.target {
        Target::Line(l) => {
            let (found, any_static) =
                resolve_line(classes, class, &name, l.method.as_deref(), l.line).await?;
            super::names::check(classes, class.id, &name, &found, l.line, spec).await?;
            Ok(CopyPlan {
                class: class.id,
                requests: found
                    .into_iter()
                    .map(|(location, _)| Planned {
                        kind: EventKind::Breakpoint,
                        modifiers: vec![Modifier::LocationOnly { location }],
                        location: Some(location),
                    })
                    .collect(),
                any_static,
                static_field: false,
            })
        }
        Target::Exception(e) => Ok(CopyPlan {
            class: class.id,
            requests: vec![Planned {
                kind: EventKind::Exception,
                modifiers: vec![Modifier::ExceptionOnly {
                    exception_or_null: class.id,
                    caught: e.caught,
                    uncaught: e.uncaught,
                }],
                location: None,
            }],
            any_static: false,
            static_field: false,
        }),
        Target::Field(f) => {
            let Some((declaring, field)) = classes.find_field(class.id, &f.field).await? else {
                let fields = classes.fields(class.id).await?;
                let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
                let similar = similar_names(&f.field, names.iter().copied());
                return Err(ArmError::NoSuchField {
                    class: name.clone(),
                    field: f.field.clone(),
                    similar,
                    declared: names.into_iter().map(String::from).collect(),
                });
            };
            let mut requests = Vec::new();
            let placed = |kind| Planned {
                kind,
                modifiers: vec![Modifier::FieldOnly {
                    declaring,
                    field: field.id,
                }],
                location: None,
            };
            if f.modify {
                requests.push(placed(EventKind::FieldModification));
            }
            if f.access {
                requests.push(placed(EventKind::FieldAccess));
            }
            Ok(CopyPlan {
                class: class.id,
                requests,
                any_static: false,
                static_field: field.is_static(),
            })
        }
        Target::MethodExit(_) | Target::Monitor(_) => Err(ArmError::Internal(
            "pattern stop points are not armed per class",
        )),
    }
}

/// The requests of a pattern stop point (method exits, monitors): the JVM
/// matches classes itself, so nothing is resolved here.
pub fn plan_pattern(
    spec: &StopPointSpec,
    return_values: bool,
    monitor_class: Option<ReferenceTypeId>,
) -> Vec<(Planned, Option<MonitorKind>)> {
    match &spec.target {
        Target::MethodExit(m) => {
            let mut modifiers = vec![Modifier::ClassMatch {
                class_pattern: jdwp_class_pattern(&m.class_pattern),
            }];
            modifiers.extend(m.exclude.iter().map(|p| Modifier::ClassExclude {
                class_pattern: p.clone(),
            }));
            let kind = if return_values {
                EventKind::MethodExitWithReturnValue
            } else {
                EventKind::MethodExit
            };
            vec![(
                Planned {
                    kind,
                    modifiers,
                    location: None,
                },
                None,
            )]
        }
        Target::Monitor(m) => m
            .kinds
            .iter()
            .map(|k| {
                let kind = match k {
                    MonitorKind::Blocked => EventKind::MonitorContendedEnter,
                    MonitorKind::Acquired => EventKind::MonitorContendedEntered,
                    MonitorKind::Wait => EventKind::MonitorWait,
                    MonitorKind::Waited => EventKind::MonitorWaited,
                };
                let mut modifiers = Vec::new();
                if let Some(class) = monitor_class
                    && matches!(k, MonitorKind::Wait | MonitorKind::Waited)
                {
                    modifiers.push(Modifier::ClassOnly { class });
                }
                (
                    Planned {
                        kind,
                        modifiers,
                        location: None,
                    },
                    Some(*k),
                )
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The monitor kind an event kind reports.
pub fn monitor_kind(kind: EventKind) -> Option<MonitorKind> {
    Some(match kind {
        EventKind::MonitorContendedEnter => MonitorKind::Blocked,
        EventKind::MonitorContendedEntered => MonitorKind::Acquired,
        EventKind::MonitorWait => MonitorKind::Wait,
        EventKind::MonitorWaited => MonitorKind::Waited,
        _ => return None,
    })
}

/// The thread and instance filters, in the order JDWP applies them; the
/// count goes last so it counts only events that passed the others.
pub fn filter_modifiers(filters: &Filters, jvm_count: Option<u32>) -> Vec<Modifier> {
    let mut out = Vec::new();
    if let Some(t) = filters.thread {
        out.push(Modifier::ThreadOnly {
            thread: ThreadId(t),
        });
    }
    if let Some(i) = filters.instance {
        out.push(Modifier::InstanceOnly {
            instance: ObjectId(i),
        });
    }
    if let Some(n) = jvm_count {
        out.push(Modifier::Count {
            count: n.min(i32::MAX as u32) as i32,
        });
    }
    out
}

/// Sets every planned request in one pipelined burst. On a failure the
/// ones that were set are cleared again and the first error returned.
pub async fn set_all(
    conn: &ConnectionHandle,
    planned: &[Planned],
    policy: SuspendPolicy,
    extra: &[Modifier],
) -> Result<Vec<RequestKey>, JdwpError> {
    let sends: Vec<_> = planned
        .iter()
        .map(|p| {
            let mut modifiers = p.modifiers.clone();
            modifiers.extend(extra.iter().cloned());
            let kind = p.kind;
            let fut = conn.send(&Set {
                event_kind: kind,
                suspend_policy: policy,
                modifiers,
            });
            async move { fut.await.map(|id| RequestKey::new(kind, id)) }
        })
        .collect();
    let results = join_all(sends).await;
    let mut set = Vec::new();
    let mut first_err = None;
    for r in results {
        match r {
            Ok(k) => set.push(k),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    match first_err {
        None => Ok(set),
        Some(e) => {
            clear_all(conn, &set).await;
            Err(e)
        }
    }
}

/// Clears requests in one pipelined burst. An id the JVM no longer knows
/// (a spent count, a class unloaded) is not an error.
pub async fn clear_all(conn: &ConnectionHandle, keys: &[RequestKey]) -> usize {
    let results = join_all(keys.iter().map(|k| {
        conn.send(&Clear {
            event_kind: k.kind,
            request_id: k.id,
        })
    }))
    .await;
    results.iter().filter(|r| r.is_err()).count()
}

/// A class-prepare watch for a class name pattern (exact, or with one `*`
/// at either end).
pub async fn watch_class(
    conn: &ConnectionHandle,
    pattern: &str,
    policy: SuspendPolicy,
) -> Result<RequestKey, JdwpError> {
    let id: RequestId = conn
        .send(&Set {
            event_kind: EventKind::ClassPrepare,
            suspend_policy: policy,
            modifiers: vec![Modifier::ClassMatch {
                class_pattern: pattern.to_string(),
            }],
        })
        .await?;
    Ok(RequestKey::new(EventKind::ClassPrepare, id))
}

/// Every loaded class whose name matches `glob`, with its tag.
pub async fn classes_matching(
    conn: &ConnectionHandle,
    glob: &str,
) -> Result<Vec<(String, TaggedTypeId)>, JdwpError> {
    let all = conn.send(&crate::jdwp::virtual_machine::AllClasses).await?;
    let mut out: Vec<(String, TaggedTypeId)> = all
        .into_iter()
        .filter(|c| c.ref_type.tag != TypeTag::Array && c.signature.starts_with('L'))
        .map(|c| (java_name(&c.signature), c.ref_type))
        .filter(|(name, _)| !is_lambda_form(name))
        .filter(|(name, _)| crate::model::stop_point::glob_matches(glob, name))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// A class the JVM spins for a lambda (`Outer$$Lambda$14/0x…`): it only
/// forwards to the lambda's body in the enclosing class, so families leave
/// it out.
pub fn is_lambda_form(name: &str) -> bool {
    name.contains("$$Lambda")
}

/// Loaded classes with a name like `wanted`, for a deferral reply.
pub async fn similar_loaded(conn: &ConnectionHandle, wanted: &str) -> Vec<String> {
    let Ok(all) = conn.send(&crate::jdwp::virtual_machine::AllClasses).await else {
        return Vec::new();
    };
    let names: Vec<String> = all
        .iter()
        .filter(|c| c.signature.starts_with('L'))
        .map(|c| java_name(&c.signature))
        .collect();
    similar_names(wanted, names.iter().map(String::as_str))
}

/// Checks a thread id names a live thread.
pub async fn check_thread(conn: &ConnectionHandle, thread: u64) -> Result<(), ArmError> {
    match conn
        .send(&crate::jdwp::thread_reference::Name {
            thread: ThreadId(thread),
        })
        .await
    {
        Ok(_) => Ok(()),
        Err(e)
            if matches!(
                e.code(),
                Some(ErrorCode::INVALID_THREAD) | Some(ErrorCode::INVALID_OBJECT)
            ) =>
        {
            Err(ArmError::NoSuchThread { thread })
        }
        Err(e) => Err(e.into()),
    }
}

/// Checks an object id names a live object; returns its type.
pub async fn check_instance(
    conn: &ConnectionHandle,
    object: u64,
) -> Result<ReferenceTypeId, ArmError> {
    match conn
        .send(&crate::jdwp::object_reference::ReferenceType {
            object: ObjectId(object),
        })
        .await
    {
        Ok(t) => Ok(t.id),
        Err(e) if e.code() == Some(ErrorCode::INVALID_OBJECT) => {
            Err(ArmError::NoSuchObject { object })
        }
        Err(e) => Err(e.into()),
    }
}

/// The field id of `java.lang.Throwable.detailMessage`, for reading an
/// exception's message without invoking anything.
pub async fn detail_message_field(classes: &ClassCache) -> Option<(ReferenceTypeId, FieldId)> {
    let throwable = classes
        .by_name("java.lang.Throwable")
        .await
        .ok()?
        .into_iter()
        .next()?;
    let fields = classes.fields(throwable.id).await.ok()?;
    let f = fields.iter().find(|f| f.name == "detailMessage")?;
    Some((throwable.id, f.id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::stop_point::{MethodExitSpec, Mode, MonitorSpec};

    #[test]
    fn nearest_lines_with_code_are_named() {
        let e = no_code("A", None, 10, &mut vec![12, 4, 8, 12, 20]).to_string();
        assert!(e.ends_with("nearest lines with code: 8, 12"), "{e}");
        let e = no_code("A", Some("m"), 99, &mut vec![3, 5]).to_string();
        assert!(e.contains("A.m") && e.ends_with(": 5"), "{e}");
        let e = no_code("A", None, 1, &mut Vec::new()).to_string();
        assert!(e.contains("no line table"), "{e}");
    }

    #[test]
    fn count_goes_last() {
        let f = Filters {
            thread: Some(5),
            instance: Some(6),
            ..Filters::default()
        };
        let m = filter_modifiers(&f, Some(3));
        assert_eq!(
            m.iter().map(Modifier::mod_kind).collect::<Vec<_>>(),
            [3, 11, 1]
        );
    }

    #[test]
    fn pattern_requests() {
        let spec = StopPointSpec {
            engine: crate::model::stop_point::Engine::Wire,
            target: Target::MethodExit(MethodExitSpec {
                class_pattern: "com.*.Repo".into(),
                method: Some("save".into()),
                exclude: vec!["com.gen.*".into()],
                min_duration_ms: None,
                stats: false,
                callees: false,
            }),
            mode: Mode::Suspend,
            filters: Filters::default(),
        };
        let p = plan_pattern(&spec, true, None);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].0.kind, EventKind::MethodExitWithReturnValue);
        assert_eq!(
            p[0].0.modifiers[0],
            Modifier::ClassMatch {
                class_pattern: "com.*".into()
            }
        );
        let spec = StopPointSpec {
            engine: crate::model::stop_point::Engine::Wire,
            target: Target::Monitor(MonitorSpec {
                kinds: vec![MonitorKind::Blocked, MonitorKind::Wait],
                min_duration_ms: None,
                monitor_class: None,
            }),
            mode: Mode::Suspend,
            filters: Filters::default(),
        };
        let p = plan_pattern(&spec, true, Some(ReferenceTypeId(9)));
        assert_eq!(p[0].0.kind, EventKind::MonitorContendedEnter);
        assert!(
            p[0].0.modifiers.is_empty(),
            "ClassOnly only on the wait pair"
        );
        assert_eq!(p[1].0.modifiers.len(), 1);
        assert_eq!(
            monitor_kind(EventKind::MonitorWaited),
            Some(MonitorKind::Waited)
        );
    }
}
