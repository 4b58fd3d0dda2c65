//! Turns what the held reads found into a dump's plain data, after the
//! resume (none of this needs the threads stopped): frame labels, monitor
//! and blocker classes through the class cache, one request per distinct
//! method, class or object; what each thread waits for and who holds it;
//! the ownable synchronizers each owner holds; and which threads the
//! package filter keeps, matched on every frame read, not only the frames
//! shown.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use futures::future::join_all;

use super::reads::{Found, Raw};
use super::{DumpSpec, Listed, locks};
use crate::door::Jvm;
use crate::jdwp::thread_reference::FrameInfo;
use crate::jdwp::{ErrorCode, MethodId, ObjectId, ReferenceTypeId, ThreadId};
use crate::jvm::classes::{ClassCache, Lines};
use crate::model::dump::{DumpThread, Held, Monitor, Stack, Waiting};

/// The dump threads of `shown`, from what was read of them.
pub(super) async fn resolve(
    session: &Jvm,
    shown: Vec<Listed>,
    found: &Found,
    spec: &DumpSpec,
) -> Vec<DumpThread> {
    let classes = session.classes();
    let raws = &found.raws;
    let keep = spec.max_frames.unwrap_or(usize::MAX);
    let mut methods: HashSet<(ReferenceTypeId, MethodId)> = HashSet::new();
    let mut objects: HashSet<ObjectId> = HashSet::new();
    // Blockers owned by a shown thread are listed under it.
    let shown_ids: HashSet<ThreadId> = shown.iter().map(|t| t.id).collect();
    let mut synchronizers: HashMap<ThreadId, Vec<ObjectId>> = HashMap::new();
    for (object, owner) in &found.owners {
        if let Some(owner) = owner.filter(|o| shown_ids.contains(o)) {
            synchronizers.entry(owner).or_default().push(*object);
            objects.insert(*object);
        }
    }
    for raw in shown.iter().filter_map(|t| raws.get(&t.id)) {
        if let Some(Ok(frames)) = &raw.frames
            && spec.frames
        {
            methods.extend(
                frames
                    .iter()
                    .take(keep)
                    .map(|f| (f.location.class, f.location.method)),
            );
        }
        if let Some(Ok(owned)) = &raw.owned {
            objects.extend(owned.iter().map(|m| m.monitor.id));
        }
        objects.extend(raw.contended);
        objects.extend(raw.blocker);
    }
    let labels = method_labels(classes, methods).await;
    let object_classes = object_classes(classes, objects).await;
    let monitors = locks::monitor_owners(raws);
    let monitor = |object: ObjectId| Monitor {
        object: object.0,
        class: object_classes.get(&object).cloned().unwrap_or_default(),
    };
    let mut out = Vec::with_capacity(shown.len());
    for t in shown {
        let raw = raws.get(&t.id);
        let readable = spec.suspend || t.count > 0;
        let stack = match raw {
            _ if !readable => Stack::Running,
            Some(r) if r.full => stack_of(r, &labels, spec),
            _ => Stack::CutByBound,
        };
        let empty = Raw::default();
        let raw = raw.unwrap_or(&empty);
        let held = match &raw.owned {
            Some(Ok(owned)) => owned
                .iter()
                .map(|m| Held {
                    monitor: monitor(m.monitor.id),
                    frame: usize::try_from(m.stack_depth).ok(),
                })
                .collect(),
            _ => Vec::new(),
        };
        let mut owns: Vec<ObjectId> = synchronizers.remove(&t.id).unwrap_or_default();
        owns.sort();
        let status = raw.status.unwrap_or(t.status);
        let waiting = locks::wait_of(raw, Some(t.status), &monitors, &found.owners).map(
            |(object, kind, owner)| Waiting {
                monitor: monitor(object),
                kind,
                owner: owner.map(|o| o.0),
            },
        );
        out.push(DumpThread {
            id: t.id.0,
            name: t.name,
            status: format!("{status:?}").to_uppercase(),
            suspend_count: t.count,
            is_virtual: t.is_virtual,
            stack,
            held,
            synchronizers: owns.into_iter().map(monitor).collect(),
            waiting,
        });
    }
    out
}

/// The threads with a frame of a class in `package` (`com.acme.`; a class
/// `Foo` of the unnamed package matches `Foo.`), anywhere on the stack
/// read. Class names come from the cache: one request per class, once a
/// session.
pub(super) async fn in_package(
    classes: &ClassCache,
    raws: &HashMap<ThreadId, Raw>,
    package: &str,
) -> HashSet<ThreadId> {
    let frames = |r: &Raw| match &r.frames {
        Some(Ok(frames)) => Some(frames.clone()),
        _ => None,
    };
    let stacks: Vec<(ThreadId, Vec<FrameInfo>)> = raws
        .iter()
        .filter_map(|(t, r)| Some((*t, frames(r)?)))
        .collect();
    let types: HashSet<ReferenceTypeId> = stacks
        .iter()
        .flat_map(|(_, f)| f.iter().map(|f| f.location.class))
        .collect();
    let names = join_all(types.into_iter().map(|t| async move {
        let name = classes.info(t).await.map(|i| i.name.clone()).ok();
        (t, name)
    }))
    .await;
    let inside: HashSet<ReferenceTypeId> = names
        .into_iter()
        .filter(|(_, n)| {
            n.as_ref()
                .is_some_and(|n| format!("{n}.").starts_with(package))
        })
        .map(|(t, _)| t)
        .collect();
    stacks
        .into_iter()
        .filter(|(_, f)| f.iter().any(|f| inside.contains(&f.location.class)))
        .map(|(t, _)| t)
        .collect()
}

fn stack_of(raw: &Raw, labels: &MethodLabels, spec: &DumpSpec) -> Stack {
    match &raw.frames {
        _ if !spec.frames => Stack::Skipped,
        None => Stack::Skipped,
        Some(Err(e)) if e.code() == Some(ErrorCode::THREAD_NOT_SUSPENDED) => Stack::Running,
        Some(Err(e)) => Stack::Failed(e.to_string()),
        Some(Ok(frames)) => {
            let keep = spec.max_frames.unwrap_or(usize::MAX);
            Stack::Read {
                depth: frames.len(),
                frames: frames
                    .iter()
                    .take(keep)
                    .map(|f| frame_label(f, labels))
                    .collect(),
            }
        }
    }
}

/// What a frame label needs of its method: `class.method`, whether it is
/// native, and its line table.
pub(crate) type MethodLabels =
    HashMap<(ReferenceTypeId, MethodId), (String, bool, Option<Arc<Lines>>)>;

/// `com.acme.Foo.bar:42`, `…:native`, `…:?`.
pub(crate) fn frame_label(f: &FrameInfo, labels: &MethodLabels) -> String {
    use crate::model::label::{CodeLabel, LineAt};
    match labels.get(&(f.location.class, f.location.method)) {
        Some((label, native, lines)) => {
            let line = if *native {
                LineAt::Native
            } else {
                LineAt::known(
                    lines
                        .as_ref()
                        .and_then(|l| l.line_of(f.location.index as i64))
                        .map(i64::from),
                )
            };
            CodeLabel::new(label, None, line).to_string()
        }
        None => {
            let class = format!("?@{:#x}", f.location.class.0);
            CodeLabel::new(&class, None, LineAt::Unknown).to_string()
        }
    }
}

/// `class.method`, whether it is native, and its lines, per distinct method.
pub(crate) async fn method_labels(
    classes: &ClassCache,
    methods: HashSet<(ReferenceTypeId, MethodId)>,
) -> MethodLabels {
    let reads = methods.into_iter().map(|(class, method)| async move {
        let (info, m, lines) = futures::join!(
            classes.info(class),
            classes.method(class, method),
            classes.lines(class, method)
        );
        let name = info.map(|i| i.name.clone()).unwrap_or_else(|_| "?".into());
        let (mname, native) = match m {
            Ok(Some(m)) => (m.name.clone(), m.is_native()),
            _ => ("?".into(), false),
        };
        (
            (class, method),
            (format!("{name}.{mname}"), native, lines.ok()),
        )
    });
    join_all(reads).await.into_iter().collect()
}

/// The class name of every monitor object.
async fn object_classes(
    classes: &ClassCache,
    objects: HashSet<ObjectId>,
) -> HashMap<ObjectId, String> {
    let reads = objects.into_iter().map(|object| async move {
        let name = match classes.type_of(object).await {
            Ok(t) => classes
                .info(t.id)
                .await
                .map(|i| i.name.clone())
                .unwrap_or_default(),
            Err(_) => String::new(),
        };
        (object, name)
    });
    join_all(reads).await.into_iter().collect()
}
