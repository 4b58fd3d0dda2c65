//! The thread dump: every selected thread's frames, owned monitors and
//! contended monitor, read in pipelined bursts. JDWP reads those only from
//! a suspended thread, so a dump either reads the threads that are already
//! suspended or takes one bounded VM suspension of its own: only the
//! reads that need the threads stopped happen inside it (names, statuses
//! and counts before, class and line resolution after), and it is undone
//! by exactly one `VirtualMachine.Resume` in a task of its own, so a call
//! that is dropped half way still resumes, then verified by reading every
//! suspend count back.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::join_all;
use futures::stream::{FuturesUnordered, StreamExt};

use crate::actors::connection::ConnectionHandle;
use crate::actors::error::{JdwpError, SessionError};
use crate::actors::jvm::classes::{ClassCache, Lines};
use crate::actors::session::SessionHandle;
use crate::jdwp::object_reference::MonitorInfo;
use crate::jdwp::thread_reference::{
    CurrentContendedMonitor, FrameInfo, Frames, IsVirtual, MonitorStackDepth, Name,
    OwnedMonitorsStackDepthInfo, Status, SuspendCount,
};
use crate::jdwp::virtual_machine::{AllThreads, Resume, Suspend};
use crate::jdwp::{ErrorCode, MethodId, ObjectId, ReferenceTypeId, ThreadId, ThreadStatus};
use crate::model::classes::NameFilter;
use crate::model::dump::{DumpThread, Held, Monitor, Stack, WaitKind, Waiting};
use crate::model::threads;

/// What a dump reads.
#[derive(Debug, Clone)]
pub struct DumpSpec {
    /// Take a bounded VM suspension to read every selected thread.
    pub suspend: bool,
    /// The longest the suspension may last.
    pub max_suspend: Duration,
    /// Read frames (false: the lock graph only).
    pub frames: bool,
    /// Frames kept per thread (all are read in one packet either way).
    pub max_frames: Option<usize>,
    /// Only threads suspended before the dump.
    pub only_suspended: bool,
    pub name_filter: NameFilter,
    /// Threads read at most (one of every name family first).
    pub limit: usize,
    /// Threads read at once; 1 reads them one after another.
    pub pipeline: usize,
    /// Keep only threads with a frame in this package (`com.acme.`).
    pub package: Option<String>,
}

impl Default for DumpSpec {
    fn default() -> Self {
        Self {
            suspend: false,
            max_suspend: Duration::from_millis(2000),
            frames: true,
            max_frames: None,
            only_suspended: false,
            name_filter: NameFilter::Any,
            limit: usize::MAX,
            pipeline: DEFAULT_PIPELINE,
            package: None,
        }
    }
}

/// Threads read at once by default: enough to keep the connection's
/// window full, few enough that the resume is never queued behind much.
pub const DEFAULT_PIPELINE: usize = 24;

/// Reports progress: (done, total).
pub type ProgressFn = Arc<dyn Fn(u64, u64) + Send + Sync>;

/// The suspension a dump took, and how it ended.
#[derive(Debug, Clone)]
pub struct VmHold {
    /// From the suspend being sent to the resume being answered.
    pub held: Duration,
    pub bound: Duration,
    /// Threads the bound left unread.
    pub cut: usize,
    /// Every thread is back at its suspend count from before the dump.
    pub verified: bool,
    /// Threads above their earlier count afterwards: (thread, before, after).
    pub still_suspended: Vec<(ThreadId, i32, i32)>,
    /// A suspending event arrived meanwhile (a stop point hit, not us).
    pub new_event: bool,
}

/// A thread dump as read.
#[derive(Debug, Clone)]
pub struct Dump {
    /// The selected threads, in natural name order.
    pub threads: Vec<DumpThread>,
    /// Every live thread's name, by id (owners outside the selection too).
    pub names: HashMap<u64, String>,
    /// Live threads JDWP listed.
    pub live: usize,
    /// Of those, how many the filters matched.
    pub matched: usize,
    /// Name families `limit` left out, with how many of each.
    pub left_out: Vec<(String, usize)>,
    pub hold: Option<VmHold>,
    /// JDWP packets sent on the connection while the dump ran.
    pub packets: u64,
    /// Whether the JVM can tell virtual threads (JDWP 19+).
    pub knows_virtual: bool,
    pub elapsed: Duration,
}

/// One thread as listed before anything is suspended.
#[derive(Debug, Clone)]
struct Listed {
    id: ThreadId,
    name: String,
    status: ThreadStatus,
    count: i32,
    is_virtual: bool,
}

/// What the suspended read of one thread returned.
#[derive(Default)]
struct Raw {
    frames: Option<Result<Vec<FrameInfo>, JdwpError>>,
    owned: Option<Result<Vec<MonitorStackDepth>, JdwpError>>,
    contended: Option<ObjectId>,
    /// Status re-read while suspended (for threads waiting on a monitor).
    status: Option<ThreadStatus>,
}

impl SessionHandle {
    /// Every selected thread's stack and locks (see the module).
    pub async fn thread_dump(
        &self,
        spec: DumpSpec,
        progress: Option<ProgressFn>,
    ) -> Result<Dump, SessionError> {
        dump(self, spec, progress).await
    }

    /// Whether `thread` is a virtual thread (false before JDWP 19, or
    /// when the JVM does not answer).
    pub async fn thread_is_virtual(&self, thread: ThreadId) -> bool {
        if self.vm().is_none_or(|v| v.jdwp_major < 19) {
            return false;
        }
        self.connection()
            .send(&IsVirtual { thread })
            .await
            .unwrap_or(false)
    }
}

/// Reads a dump.
async fn dump(
    session: &SessionHandle,
    spec: DumpSpec,
    progress: Option<ProgressFn>,
) -> Result<Dump, SessionError> {
    session.check_alive()?;
    let started = Instant::now();
    let packets_before = session.packets_sent();
    let conn = session.connection().clone();
    let knows_virtual = session.vm().is_some_and(|v| v.jdwp_major >= 19);
    let all = list(&conn, knows_virtual)
        .await
        .map_err(|e| session.map_err(e))?;
    let matching: Vec<&Listed> = all
        .iter()
        .filter(|t| spec.name_filter.matches(&t.name))
        .filter(|t| !spec.only_suspended || t.count > 0)
        .collect();
    let names: Vec<&str> = matching.iter().map(|t| t.name.as_str()).collect();
    let (picked, left_out) = threads::pick(&names, spec.limit.max(1));
    let selected: Vec<Listed> = picked.iter().map(|&i| matching[i].clone()).collect();

    // The suspended part runs in a task of its own: dropping this call
    // must never leave the VM suspended.
    let bus_events = session.link().bus.clone();
    let task = tokio::spawn(held_reads(
        conn.clone(),
        all.clone(),
        selected.clone(),
        spec.clone(),
        progress.clone(),
        bus_events,
    ));
    let (raws, hold) = task
        .await
        .map_err(|e| SessionError::Unresponsive(e.to_string()))?;
    let raws = raws.map_err(|e| session.map_err(e))?;

    let mut threads = resolve(session, selected, raws, &spec).await;
    if let Some(pkg) = &spec.package {
        threads.retain(|t| match &t.stack {
            Stack::Read { frames, .. } => frames.iter().any(|f| f.starts_with(pkg.as_str())),
            _ => false,
        });
    }
    Ok(Dump {
        threads,
        names: all.iter().map(|t| (t.id.0, t.name.clone())).collect(),
        live: all.len(),
        matched: matching.len(),
        left_out,
        hold,
        packets: session.packets_sent().saturating_sub(packets_before),
        knows_virtual,
        elapsed: started.elapsed(),
    })
}

/// Every live thread's name, status, suspend count and (JDWP 19+) whether
/// it is virtual, in one pipelined burst. Threads that ended between the
/// reads are left out.
async fn list(conn: &ConnectionHandle, knows_virtual: bool) -> Result<Vec<Listed>, JdwpError> {
    let ids = conn.send(&AllThreads).await?;
    let reads = ids.iter().map(|&thread| {
        let name = conn.send(&Name { thread });
        let status = conn.send(&Status { thread });
        let count = conn.send(&SuspendCount { thread });
        let virt = knows_virtual.then(|| conn.send(&IsVirtual { thread }));
        async move {
            let virt = match virt {
                Some(v) => v.await.unwrap_or(false),
                None => false,
            };
            (thread, name.await, status.await, count.await, virt)
        }
    });
    let mut out = Vec::new();
    for (id, name, status, count, is_virtual) in join_all(reads).await {
        for e in [name.as_ref().err(), count.as_ref().err()]
            .into_iter()
            .flatten()
        {
            if e.is_gone() {
                return Err(e.clone());
            }
        }
        let (Ok(name), Ok(status), Ok(count)) = (name, status, count) else {
            continue;
        };
        out.push(Listed {
            id,
            name,
            status: status.thread_status,
            count,
            is_virtual,
        });
    }
    Ok(out)
}

/// Suspends (when asked), reads the selected threads within the bound,
/// resumes and verifies. Returns the raw reads by thread.
async fn held_reads(
    conn: ConnectionHandle,
    all: Vec<Listed>,
    selected: Vec<Listed>,
    spec: DumpSpec,
    progress: Option<ProgressFn>,
    bus: Arc<crate::actors::session::EventBus>,
) -> (Result<HashMap<ThreadId, Raw>, JdwpError>, Option<VmHold>) {
    let readable: Vec<ThreadId> = selected
        .iter()
        .filter(|t| spec.suspend || t.count > 0)
        .map(|t| t.id)
        .collect();
    if readable.is_empty() {
        return (Ok(HashMap::new()), None);
    }
    if !spec.suspend {
        let deadline = Instant::now() + Duration::from_secs(3600);
        let reads = read_threads(&conn, &readable, &spec, deadline, progress.as_ref()).await;
        return (reads.map(|(r, _)| r), None);
    }
    let events_before = bus.suspending_events();
    let t0 = Instant::now();
    if let Err(e) = conn.send(&Suspend).await {
        return (Err(e), None);
    }
    let deadline = t0 + spec.max_suspend;
    let reads = read_threads(&conn, &readable, &spec, deadline, progress.as_ref()).await;
    let resumed = conn.send(&Resume).await;
    let held = t0.elapsed();
    let (verified, still_suspended) = verify(&conn, &all).await;
    let hold = VmHold {
        held,
        bound: spec.max_suspend,
        cut: reads.as_ref().map(|(_, cut)| *cut).unwrap_or(0),
        verified: resumed.is_ok() && verified,
        still_suspended,
        new_event: bus.suspending_events() != events_before,
    };
    let reads = match resumed {
        Err(e) => Err(e),
        Ok(()) => reads.map(|(r, _)| r),
    };
    (reads, Some(hold))
}

/// Reads frames, owned monitors and the contended monitor of `threads`,
/// `spec.pipeline` threads at a time, until `deadline`; then the owners of
/// the contended monitors nobody read owns, and the status of the threads
/// waiting. Returns the reads and how many threads the deadline cut.
async fn read_threads(
    conn: &ConnectionHandle,
    threads: &[ThreadId],
    spec: &DumpSpec,
    deadline: Instant,
    progress: Option<&ProgressFn>,
) -> Result<(HashMap<ThreadId, Raw>, usize), JdwpError> {
    let one = |thread: ThreadId| {
        let conn = conn.clone();
        let frames = spec.frames;
        async move {
            let f = frames.then(|| conn.send(&Frames::all(thread)));
            let owned = conn.send(&OwnedMonitorsStackDepthInfo { thread });
            let contended = conn.send(&CurrentContendedMonitor { thread });
            let raw = Raw {
                frames: match f {
                    Some(f) => Some(f.await),
                    None => None,
                },
                owned: Some(owned.await),
                contended: contended.await.ok().map(|c| c.id).filter(|id| id.0 != 0),
                status: None,
            };
            (thread, raw)
        }
    };
    let mut out: HashMap<ThreadId, Raw> = HashMap::new();
    let mut next = threads.iter();
    let mut running = FuturesUnordered::new();
    for &t in next.by_ref().take(spec.pipeline.max(1)) {
        running.push(one(t));
    }
    let total = threads.len() as u64;
    loop {
        let step = tokio::time::timeout_at(deadline.into(), running.next()).await;
        let Ok(Some((thread, raw))) = step else {
            break;
        };
        if let Some(Err(e)) = &raw.frames
            && e.is_gone()
        {
            return Err(e.clone());
        }
        out.insert(thread, raw);
        if let Some(p) = progress
            && (out.len().is_multiple_of(25) || out.len() as u64 == total)
        {
            p(out.len() as u64, total);
        }
        if Instant::now() < deadline
            && let Some(&t) = next.next()
        {
            running.push(one(t));
        }
    }
    let cut = threads.len() - out.len();
    if Instant::now() < deadline {
        let _ = tokio::time::timeout_at(deadline.into(), owners_and_status(conn, &mut out)).await;
    }
    Ok((out, cut))
}

/// For every contended monitor: who owns it (from the owned monitors read,
/// else `ObjectReference.MonitorInfo`), and the waiting thread's status
/// (blocked entering, or in `Object.wait()`), in one burst.
async fn owners_and_status(conn: &ConnectionHandle, raws: &mut HashMap<ThreadId, Raw>) {
    let owned: HashSet<ObjectId> = raws
        .values()
        .filter_map(|r| r.owned.as_ref()?.as_ref().ok())
        .flatten()
        .map(|m| m.monitor.id)
        .collect();
    let waiting: Vec<(ThreadId, ObjectId)> = raws
        .iter()
        .filter_map(|(t, r)| Some((*t, r.contended?)))
        .collect();
    let unknown: HashSet<ObjectId> = waiting
        .iter()
        .map(|(_, m)| *m)
        .filter(|m| !owned.contains(m))
        .collect();
    let statuses = join_all(
        waiting
            .iter()
            .map(|&(thread, _)| conn.send(&Status { thread })),
    );
    let infos = join_all(
        unknown
            .iter()
            .map(|&object| conn.send(&MonitorInfo { object })),
    );
    let (statuses, infos) = futures::join!(statuses, infos);
    for ((thread, _), status) in waiting.iter().zip(statuses) {
        if let (Some(raw), Ok(s)) = (raws.get_mut(thread), status) {
            raw.status = Some(s.thread_status);
        }
    }
    // Owners found only through MonitorInfo are recorded as a held
    // monitor of that thread (with an unknown frame) when it was read.
    for (object, info) in unknown.iter().zip(infos) {
        let Ok(info) = info else { continue };
        if info.owner.0 == 0 {
            continue;
        }
        let held = MonitorStackDepth {
            monitor: crate::jdwp::TaggedObjectId {
                tag: crate::jdwp::Tag::Object,
                id: *object,
            },
            stack_depth: -1,
        };
        if let Ok(list) = raws
            .entry(info.owner)
            .or_default()
            .owned
            .get_or_insert(Ok(Vec::new()))
        {
            list.push(held);
        }
    }
}

/// Reads every thread's suspend count back and compares it with the count
/// before the dump; a thread that ended meanwhile is fine.
async fn verify(conn: &ConnectionHandle, all: &[Listed]) -> (bool, Vec<(ThreadId, i32, i32)>) {
    let counts = join_all(
        all.iter()
            .map(|t| conn.send(&SuspendCount { thread: t.id })),
    )
    .await;
    let mut above = Vec::new();
    for (t, count) in all.iter().zip(counts) {
        match count {
            Ok(n) if n > t.count => above.push((t.id, t.count, n)),
            Ok(_) => {}
            Err(e) if e.is_gone() => return (false, above),
            Err(_) => {}
        }
    }
    (above.is_empty(), above)
}

/// Turns the raw reads into dump threads: frame labels and monitor classes
/// resolved through the class cache (after the resume: none of this needs
/// the threads stopped), one request per distinct method or object.
async fn resolve(
    session: &SessionHandle,
    selected: Vec<Listed>,
    mut raws: HashMap<ThreadId, Raw>,
    spec: &DumpSpec,
) -> Vec<DumpThread> {
    let classes = session.classes();
    let mut methods: HashSet<(ReferenceTypeId, MethodId)> = HashSet::new();
    let mut objects: HashSet<ObjectId> = HashSet::new();
    for raw in raws.values() {
        if let Some(Ok(frames)) = &raw.frames {
            let keep = spec.max_frames.unwrap_or(usize::MAX);
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
    }
    let labels = method_labels(classes, methods).await;
    let object_classes = object_classes(classes, objects).await;
    let owner_of: HashMap<ObjectId, ThreadId> = raws
        .iter()
        .filter_map(|(t, r)| Some((*t, r.owned.as_ref()?.as_ref().ok()?)))
        .flat_map(|(t, owned)| owned.iter().map(move |m| (m.monitor.id, t)))
        .collect();
    let monitor = |object: ObjectId| Monitor {
        object: object.0,
        class: object_classes.get(&object).cloned().unwrap_or_default(),
    };
    let mut out = Vec::with_capacity(selected.len());
    for t in selected {
        let raw = raws.remove(&t.id);
        let readable = spec.suspend || t.count > 0;
        let stack = match (&raw, readable) {
            (_, false) => Stack::Running,
            (None, true) => Stack::CutByBound,
            (Some(r), true) => stack_of(r, &labels, spec),
        };
        let raw = raw.unwrap_or_default();
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
        let status = raw.status.unwrap_or(t.status);
        let waiting = raw.contended.map(|object| Waiting {
            monitor: monitor(object),
            kind: if status == ThreadStatus::Wait {
                WaitKind::Wait
            } else {
                WaitKind::Enter
            },
            owner: owner_of.get(&object).map(|o| o.0),
        });
        out.push(DumpThread {
            id: t.id.0,
            name: t.name,
            status: format!("{status:?}").to_uppercase(),
            suspend_count: t.count,
            is_virtual: t.is_virtual,
            stack,
            held,
            waiting,
        });
    }
    out
}

fn stack_of(raw: &Raw, labels: &MethodLabels, spec: &DumpSpec) -> Stack {
    match &raw.frames {
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
pub(in crate::actors::session) type MethodLabels =
    HashMap<(ReferenceTypeId, MethodId), (String, bool, Option<Arc<Lines>>)>;

/// `com.acme.Foo.bar:42`, `…:native`, `…:?`.
pub(in crate::actors::session) fn frame_label(f: &FrameInfo, labels: &MethodLabels) -> String {
    match labels.get(&(f.location.class, f.location.method)) {
        Some((label, true, _)) => format!("{label}:native"),
        Some((label, false, lines)) => {
            match lines
                .as_ref()
                .and_then(|l| l.line_of(f.location.index as i64))
            {
                Some(line) => format!("{label}:{line}"),
                None => format!("{label}:?"),
            }
        }
        None => format!("?@{:#x}:?", f.location.class.0),
    }
}

/// `class.method`, whether it is native, and its lines, per distinct method.
pub(in crate::actors::session) async fn method_labels(
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

/// Marks the virtual threads of a thread list (one pipelined
/// `ThreadReference.IsVirtual` each; a refusal reads as not virtual).
pub async fn mark_virtual(
    conn: &ConnectionHandle,
    threads: &mut [crate::actors::jvm::threads::ThreadInfo],
) {
    let answers = join_all(
        threads
            .iter()
            .map(|t| conn.send(&IsVirtual { thread: t.id })),
    )
    .await;
    for (t, v) in threads.iter_mut().zip(answers) {
        t.is_virtual = v.unwrap_or(false);
    }
}
