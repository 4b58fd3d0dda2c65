//! The thread dump: every selected thread's frames, owned monitors and the
//! lock it waits for, and the deadlock cycles of the one wait-for graph
//! whose edges are monitors and `java.util.concurrent` locks alike. JDWP
//! reads those only from a suspended thread, so a dump either reads the
//! threads that are already suspended or takes one bounded VM suspension
//! of its own: only the reads that need the threads stopped happen inside
//! it (names, statuses and counts before, class and line resolution
//! after), and it is undone by exactly one `VirtualMachine.Resume` in a
//! task of its own, so a call that is dropped half way still resumes, then
//! verified by reading every suspend count back (ADR 0008).
//!
//! The filters choose what is shown, never what the deadlock search sees:
//! every readable thread that waits is read for the graph (`reads.rs`,
//! `locks.rs`), and a thread on a cycle is shown whatever the filters.
//! What the reads found is turned into plain data in `resolve.rs`.

mod locks;
mod reads;
mod resolve;

pub(crate) use resolve::{frame_label, method_labels};

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::join_all;

use crate::connection::ConnectionHandle;
use crate::door::Jvm;
use crate::error::{JdwpError, SessionError};
use crate::jdwp::thread_reference::{IsVirtual, Name, Status, SuspendCount};
use crate::jdwp::virtual_machine::AllThreads;
use crate::jdwp::{ThreadId, ThreadStatus};
use crate::model::classes::NameFilter;
use crate::model::dump::DumpThread;
use crate::model::threads;

/// What a dump reads.
#[derive(Debug, Clone)]
pub struct DumpSpec {
    /// Take a bounded VM suspension to read every selected thread.
    pub suspend: bool,
    /// The longest the suspension may last.
    pub max_suspend: Duration,
    /// Show frames (false: the lock graph only).
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
    /// Keep only threads with a frame of a class in this package
    /// (`com.acme.`), anywhere on the stack; frames are read for it even
    /// when they are not shown.
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
    /// The threads shown: those the filters kept and every deadlocked
    /// one, in natural name order.
    pub threads: Vec<DumpThread>,
    /// The deadlock cycles among every thread read, each a list of thread
    /// ids (see `model::dump::deadlocks`); every one of them is in
    /// `threads`.
    pub deadlocks: Vec<Vec<u64>>,
    /// Of `threads`, how many are shown only because they are deadlocked
    /// (the filters left them out).
    pub exempt: usize,
    /// Every live thread's name, by id (owners outside the selection too).
    pub names: HashMap<u64, String>,
    /// Live threads JDWP listed.
    pub live: usize,
    /// Of those, how many the name and suspension filters matched.
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

impl Jvm {
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
    session: &Jvm,
    spec: DumpSpec,
    progress: Option<ProgressFn>,
) -> Result<Dump, SessionError> {
    session.check_alive()?;
    let started = Instant::now();
    let packets_before = session.packets_sent();
    let conn = session.connection().clone();
    let classes = session.classes().clone();
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
    let plan = reads::Plan::new(&all, &selected, &spec, locks::park_blocker(&classes).await);

    // The suspended part runs in a task of its own: dropping this call
    // must never leave the VM suspended.
    let task = tokio::spawn(reads::held_reads(
        reads::Held {
            conn: conn.clone(),
            classes: classes.clone(),
            bus: session.link().bus.clone(),
        },
        all.clone(),
        plan,
        spec.clone(),
        progress.clone(),
    ));
    let (found, hold) = task
        .await
        .map_err(|e| SessionError::Unresponsive(e.to_string()))?;
    let found = found.map_err(|e| session.map_err(e))?;

    let (shown, exempt) = shown(session, &all, selected, &found, &spec).await;
    let threads = resolve::resolve(session, shown, &found, &spec).await;
    Ok(Dump {
        threads,
        deadlocks: found.cycles.clone(),
        exempt,
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

/// The threads shown, in natural name order: the selected ones the
/// package filter keeps, and every deadlocked thread whatever the filters;
/// with how many are shown only because they are deadlocked.
async fn shown(
    session: &Jvm,
    all: &[Listed],
    selected: Vec<Listed>,
    found: &reads::Found,
    spec: &DumpSpec,
) -> (Vec<Listed>, usize) {
    let deadlocked: HashSet<u64> = found.cycles.iter().flatten().copied().collect();
    let in_package = match &spec.package {
        Some(pkg) => Some(resolve::in_package(session.classes(), &found.raws, pkg).await),
        None => None,
    };
    let kept = |t: &Listed| in_package.as_ref().is_none_or(|p| p.contains(&t.id));
    let mut shown: Vec<Listed> = Vec::with_capacity(selected.len());
    let mut exempt = 0;
    let selected_ids: HashSet<ThreadId> = selected.iter().map(|t| t.id).collect();
    for t in selected {
        if kept(&t) {
            shown.push(t);
        } else if deadlocked.contains(&t.id.0) {
            exempt += 1;
            shown.push(t);
        }
    }
    for t in all {
        if deadlocked.contains(&t.id.0) && !selected_ids.contains(&t.id) {
            exempt += 1;
            shown.push(t.clone());
        }
    }
    shown.sort_by(|a, b| threads::natural_cmp(&a.name, &b.name));
    (shown, exempt)
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
