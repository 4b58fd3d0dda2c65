//! The reads a dump makes while the threads are stopped: the suspension
//! (when asked), every target thread's reads pipelined within the bound,
//! the owners of what the waiting threads wait for, the cycles among them,
//! a full read of any deadlocked thread that was read only for the graph,
//! and the one resume with its verification.
//!
//! A selected thread is read in full (frames, owned monitors, contended
//! monitor); any other readable thread that is blocked or waiting is read
//! only for the wait-for graph (its contended monitor, and its blocker
//! when parked), so that no filter can hide a deadlock.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::join_all;
use futures::stream::{FuturesUnordered, StreamExt};

use super::{DumpSpec, Listed, ProgressFn, VmHold, locks};
use crate::connection::ConnectionHandle;
use crate::error::JdwpError;
use crate::jdwp::object_reference::MonitorInfo;
use crate::jdwp::thread_reference::{
    CurrentContendedMonitor, FrameInfo, Frames, MonitorStackDepth, OwnedMonitorsStackDepthInfo,
    Status, SuspendCount,
};
use crate::jdwp::virtual_machine::{Resume, Suspend};
use crate::jdwp::{FieldId, ObjectId, Tag, TaggedObjectId, ThreadId, ThreadStatus};
use crate::jvm::classes::ClassCache;
use crate::link::EventBus;

/// What the suspended reads of one thread returned.
#[derive(Default)]
pub(super) struct Raw {
    /// Frames and owned monitors were asked for, not only the graph.
    pub full: bool,
    pub frames: Option<Result<Vec<FrameInfo>, JdwpError>>,
    pub owned: Option<Result<Vec<MonitorStackDepth>, JdwpError>>,
    pub contended: Option<ObjectId>,
    /// Status re-read while suspended (for threads waiting on a monitor).
    pub status: Option<ThreadStatus>,
    /// `Thread.parkBlocker` of a thread listed as waiting that waits on no
    /// monitor (a parked thread); `None` when not read or null.
    pub blocker: Option<ObjectId>,
}

/// What the held reads found.
#[derive(Default)]
pub(super) struct Found {
    pub raws: HashMap<ThreadId, Raw>,
    /// Each parked thread's blocker and the thread that owns it
    /// exclusively (`None`: not an ownable synchronizer, or not owned).
    pub owners: HashMap<ObjectId, Option<ThreadId>>,
    /// The deadlock cycles among every thread read.
    pub cycles: Vec<Vec<u64>>,
    /// Target threads the bound left unread.
    pub cut: usize,
}

/// A thread to read, and how much of it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Target {
    pub id: ThreadId,
    /// Frames and owned monitors too, not only the graph.
    pub full: bool,
    /// Listed as waiting: it may be parked, so its blocker is read when it
    /// waits on no monitor.
    pub parked: bool,
}

/// Which threads the held reads take, and how.
#[derive(Debug, Clone)]
pub(super) struct Plan {
    /// The selected threads (full) first, then the graph's.
    pub targets: Vec<Target>,
    /// Read frames (to show them, or to match the package filter).
    pub frames: bool,
    /// `Thread.parkBlocker`, when this JDK has it.
    pub park_blocker: Option<FieldId>,
}

impl Plan {
    /// Every readable selected thread in full, and every other readable
    /// thread that is blocked or waiting for the graph alone.
    pub fn new(
        all: &[Listed],
        selected: &[Listed],
        spec: &DumpSpec,
        park_blocker: Option<FieldId>,
    ) -> Self {
        let readable = |t: &Listed| spec.suspend || t.count > 0;
        let target = |t: &Listed, full: bool| Target {
            id: t.id,
            full,
            parked: t.status == ThreadStatus::Wait,
        };
        let chosen: HashSet<ThreadId> = selected.iter().map(|t| t.id).collect();
        let mut targets: Vec<Target> = selected
            .iter()
            .filter(|t| readable(t))
            .map(|t| target(t, true))
            .collect();
        targets.extend(
            all.iter()
                .filter(|t| readable(t) && !chosen.contains(&t.id))
                .filter(|t| matches!(t.status, ThreadStatus::Monitor | ThreadStatus::Wait))
                .map(|t| target(t, false)),
        );
        Self {
            targets,
            frames: spec.frames || spec.package.is_some(),
            park_blocker,
        }
    }
}

/// What the suspended part needs of the session.
pub(super) struct Held {
    pub conn: ConnectionHandle,
    pub classes: Arc<ClassCache>,
    pub bus: Arc<EventBus>,
}

/// Suspends (when asked), reads the plan's threads within the bound,
/// resumes and verifies.
pub(super) async fn held_reads(
    held: Held,
    all: Vec<Listed>,
    plan: Plan,
    spec: DumpSpec,
    progress: Option<ProgressFn>,
) -> (Result<Found, JdwpError>, Option<VmHold>) {
    let Held { conn, classes, bus } = held;
    if plan.targets.is_empty() {
        return (Ok(Found::default()), None);
    }
    if !spec.suspend {
        let deadline = Instant::now() + Duration::from_secs(3600);
        let found = reads(&conn, &classes, &plan, &spec, deadline, progress.as_ref()).await;
        return (found, None);
    }
    let events_before = bus.suspending_events();
    let t0 = Instant::now();
    if let Err(e) = conn.send(&Suspend).await {
        return (Err(e), None);
    }
    let deadline = t0 + spec.max_suspend;
    let found = reads(&conn, &classes, &plan, &spec, deadline, progress.as_ref()).await;
    let resumed = conn.send(&Resume).await;
    let held = t0.elapsed();
    let (verified, still_suspended) = verify(&conn, &all).await;
    let hold = VmHold {
        held,
        bound: spec.max_suspend,
        cut: found.as_ref().map(|f| f.cut).unwrap_or(0),
        verified: resumed.is_ok() && verified,
        still_suspended,
        new_event: bus.suspending_events() != events_before,
    };
    let found = match resumed {
        Err(e) => Err(e),
        Ok(()) => found,
    };
    (found, Some(hold))
}

/// Everything read while the threads stand still: the plan's threads,
/// the owners of what they wait for, the cycles, and a full read of every
/// deadlocked thread read only for the graph. Stops at `deadline`.
async fn reads(
    conn: &ConnectionHandle,
    classes: &ClassCache,
    plan: &Plan,
    spec: &DumpSpec,
    deadline: Instant,
    progress: Option<&ProgressFn>,
) -> Result<Found, JdwpError> {
    let (mut raws, cut) = read_threads(conn, &plan.targets, plan, spec, deadline, progress).await?;
    let mut owners = HashMap::new();
    if Instant::now() < deadline {
        let blockers: HashSet<ObjectId> = raws.values().filter_map(|r| r.blocker).collect();
        let both = async {
            let (_, found) = futures::join!(
                owners_and_status(conn, &mut raws),
                locks::owners(conn, classes, blockers)
            );
            found
        };
        if let Ok(found) = tokio::time::timeout_at(deadline.into(), both).await {
            owners = found;
        }
    }
    let cycles = locks::cycles(&raws, &owners);
    let partial: Vec<Target> = cycles
        .iter()
        .flatten()
        .map(|&id| ThreadId(id))
        .filter(|id| raws.get(id).is_none_or(|r| !r.full))
        .map(|id| Target {
            id,
            full: true,
            parked: false,
        })
        .collect();
    if !partial.is_empty() && Instant::now() < deadline {
        let (more, _) = read_threads(conn, &partial, plan, spec, deadline, None).await?;
        for (id, raw) in more {
            let old = raws.entry(id).or_default();
            // What the graph read found stays: the status re-read and the
            // blocker were not asked again.
            old.full = true;
            old.frames = raw.frames;
            old.owned = merge_owned(old.owned.take(), raw.owned);
        }
    }
    Ok(Found {
        raws,
        owners,
        cycles,
        cut,
    })
}

/// The owned monitors a full read found, keeping any that only
/// `MonitorInfo` named when the read failed.
fn merge_owned(
    before: Option<Result<Vec<MonitorStackDepth>, JdwpError>>,
    read: Option<Result<Vec<MonitorStackDepth>, JdwpError>>,
) -> Option<Result<Vec<MonitorStackDepth>, JdwpError>> {
    match read {
        Some(Ok(list)) => Some(Ok(list)),
        _ => before,
    }
}

/// Reads `targets`, `spec.pipeline` threads at a time, until `deadline`.
/// Returns the reads and how many threads the deadline cut.
async fn read_threads(
    conn: &ConnectionHandle,
    targets: &[Target],
    plan: &Plan,
    spec: &DumpSpec,
    deadline: Instant,
    progress: Option<&ProgressFn>,
) -> Result<(HashMap<ThreadId, Raw>, usize), JdwpError> {
    let one = |t: Target| read_one(conn.clone(), t, plan.frames, plan.park_blocker);
    let mut out: HashMap<ThreadId, Raw> = HashMap::new();
    let mut next = targets.iter();
    let mut running = FuturesUnordered::new();
    for &t in next.by_ref().take(spec.pipeline.max(1)) {
        running.push(one(t));
    }
    // Progress counts the selected threads, the ones the reply shows.
    let total = targets.iter().filter(|t| t.full).count() as u64;
    let mut done = 0u64;
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
        if raw.full {
            done += 1;
            if let Some(p) = progress
                && (done.is_multiple_of(25) || done == total)
            {
                p(done, total);
            }
        }
        out.insert(thread, raw);
        if Instant::now() < deadline
            && let Some(&t) = next.next()
        {
            running.push(one(t));
        }
    }
    let cut = targets.len() - out.len();
    Ok((out, cut))
}

/// One thread's reads: the frames and owned monitors of a full read; the
/// contended monitor; and for a thread listed as waiting that waits on no
/// monitor, its `Thread.parkBlocker`. A thread read only for the graph
/// that is listed as waiting is asked its blocker alone: in
/// `Object.wait()` it is no edge of the graph, and its blocker is null.
async fn read_one(
    conn: ConnectionHandle,
    t: Target,
    frames: bool,
    park_blocker: Option<FieldId>,
) -> (ThreadId, Raw) {
    let thread = t.id;
    let f = (t.full && frames).then(|| conn.send(&Frames::all(thread)));
    let owned = t
        .full
        .then(|| conn.send(&OwnedMonitorsStackDepthInfo { thread }));
    let contended = (t.full || !t.parked).then(|| conn.send(&CurrentContendedMonitor { thread }));
    let contended = match contended {
        Some(c) => c.await.ok().map(|c| c.id).filter(|id| id.0 != 0),
        None => None,
    };
    let blocker = match (park_blocker, t.parked && contended.is_none()) {
        (Some(field), true) => locks::blocker(&conn, thread, field).await,
        _ => None,
    };
    let raw = Raw {
        full: t.full,
        frames: match f {
            Some(f) => Some(f.await),
            None => None,
        },
        owned: match owned {
            Some(o) => Some(o.await),
            None => None,
        },
        contended,
        status: None,
        blocker,
    };
    (thread, raw)
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
    // monitor of that thread (with an unknown frame), read or not.
    for (object, info) in unknown.iter().zip(infos) {
        let Ok(info) = info else { continue };
        if info.owner.0 == 0 {
            continue;
        }
        let held = MonitorStackDepth {
            monitor: TaggedObjectId {
                tag: Tag::Object,
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
