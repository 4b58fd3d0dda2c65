//! Execution control the agent asks for: the verified resume of the whole
//! suspend depth, counted suspends and resumes of one thread, and the
//! idempotent pause. Each returns what it did as plain data; the words an
//! agent reads are the MCP layer's.

use std::collections::HashMap;
use std::time::Duration;

use crate::connection::ConnectionHandle;
use crate::error::{JdwpError, SessionError};
use crate::jdwp::ErrorCode;
use crate::jdwp::ThreadId;
use crate::jdwp::thread_reference::{Name, Resume, Status, Suspend, SuspendCount};
use crate::jvm::threads::{self, Census};
use crate::session::{EventBus, Ledger, SessionHandle};

/// What a counted suspend or resume of one thread did.
#[derive(Debug, Clone)]
pub struct ThreadChange {
    pub thread: ThreadId,
    pub name: String,
    /// The thread's suspend count afterwards.
    pub count: i32,
}

/// Which way a counted thread change goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Suspend,
    Resume,
}

/// What `debug_pause` found or did.
#[derive(Debug, Clone)]
pub enum PauseOutcome {
    /// Every thread was already held; nothing was sent.
    AlreadyHeld {
        total: usize,
        max_depth: i32,
        /// Threads a stop point's event suspended.
        by_events: usize,
        /// Threads the agent holds.
        by_agent: usize,
        /// How long something has been suspended.
        since: Option<Duration>,
    },
    /// The VM was suspended; `held` of `total` threads are now.
    Paused { held: usize, total: usize },
}

/// What a verified resume did.
#[derive(Debug, Clone, Default)]
pub struct ResumeReport {
    pub resumes: u32,
    /// Threads left suspended because the agent holds them.
    pub kept_held: usize,
    pub total: usize,
    pub still_held: usize,
    pub resuspended_by_event: bool,
}

/// How long a verified resume waits for trace captures in flight to
/// release their threads.
const CAPTURES_SETTLE: Duration = Duration::from_millis(500);

/// What a verified resume sends, decided from the counts it read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResumePlan {
    /// `VirtualMachine.Resume`s: the deepest count, when the agent holds
    /// no thread.
    pub vm_resumes: u32,
    /// `ThreadReference.Resume`s, one per count above what the agent holds.
    pub thread_resumes: Vec<ThreadId>,
}

impl ResumePlan {
    /// The plan for threads at `counts`, the agent holding `held` of them
    /// (thread → holds). Nothing held means nothing to send.
    pub fn new(counts: &[(ThreadId, i32)], held: &HashMap<ThreadId, u32>) -> ResumePlan {
        if held.is_empty() {
            let depth = counts.iter().map(|&(_, n)| n).max().unwrap_or(0);
            return ResumePlan {
                vm_resumes: depth.clamp(0, MAX_RESUMES) as u32,
                thread_resumes: Vec::new(),
            };
        }
        // Thread by thread, leaving each agent-held thread at the count
        // the agent gave it.
        let mut thread_resumes = Vec::new();
        for &(thread, n) in counts {
            let keep = held.get(&thread).copied().unwrap_or(0) as i32;
            for _ in keep..n.min(keep.saturating_add(MAX_RESUMES)) {
                thread_resumes.push(thread);
            }
        }
        ResumePlan {
            vm_resumes: 0,
            thread_resumes,
        }
    }

    /// Nothing to send.
    pub fn is_empty(&self) -> bool {
        self.vm_resumes == 0 && self.thread_resumes.is_empty()
    }

    /// Resumes sent.
    pub fn len(&self) -> usize {
        self.vm_resumes as usize + self.thread_resumes.len()
    }
}

/// The most resumes sent for one thread's depth (or the VM's).
const MAX_RESUMES: i32 = 64;

/// Resumes the whole suspend depth and verifies it by reading the counts
/// back. Every resume goes out at once, the read-back of each thread's
/// count queued right behind them on the same connection (the JVM answers
/// in order): the counts, the resumes and their check cost three round
/// trips. A count that reappears along with a newer suspending event is a
/// new hit, not a failure.
pub async fn resume_verified(
    conn: &ConnectionHandle,
    ledger: &mut Ledger,
    bus: &EventBus,
) -> Result<ResumeReport, JdwpError> {
    use crate::jdwp::thread_reference::Resume as ThreadResume;
    use crate::jdwp::virtual_machine::{AllThreads, Resume as VmResume};
    let mut report = ResumeReport::default();
    bus.resume_started();
    let before = bus.suspending_events();
    let held: HashMap<ThreadId, u32> = ledger
        .view()
        .held
        .into_iter()
        .map(|(t, n, _)| (t, n))
        .collect();
    // Watched from before the counts are read back, so a capture that
    // ends after they were read is seen.
    let mut captures = bus.watch_captures();
    let counts = threads::counts(conn).await?;
    let mut census = Census::of(&counts);
    // From here no thread is suspended by its event any more; forget that
    // before resuming, so a new hit recorded meanwhile is kept.
    ledger.forget_event_threads(None);
    let plan = ResumePlan::new(&counts, &held);
    if !plan.is_empty() {
        let vm: Vec<_> = (0..plan.vm_resumes).map(|_| conn.send(&VmResume)).collect();
        let one: Vec<_> = plan
            .thread_resumes
            .iter()
            .map(|&thread| conn.send(&ThreadResume { thread }))
            .collect();
        // The check, queued behind the resumes: the counts of the threads
        // known, and the thread list, for threads started meanwhile.
        let known: Vec<ThreadId> = counts.iter().map(|&(t, _)| t).collect();
        let back: Vec<_> = known
            .iter()
            .map(|&thread| conn.send(&SuspendCount { thread }))
            .collect();
        let all = conn.send(&AllThreads);
        report.resumes = plan.len() as u32;
        for r in futures::future::join_all(vm).await {
            r?;
        }
        for r in futures::future::join_all(one).await {
            r?;
        }
        let mut after = threads::counts_from(&known, back).await?;
        let all = all.await?;
        after.retain(|(t, _)| all.contains(t));
        let born: Vec<ThreadId> = all.iter().copied().filter(|t| !known.contains(t)).collect();
        if !born.is_empty() {
            let requests = born
                .iter()
                .map(|&thread| conn.send(&SuspendCount { thread }))
                .collect();
            after.extend(threads::counts_from(&born, requests).await?);
        }
        census = Census::of(&after);
        // A hit already on its way when the resume went out re-suspends
        // the VM at once, and the read-back right behind the resume can
        // see it before EventDispatch has released it: read the counts
        // again, as one census after the resume always did.
        if census.held > held.len() {
            census = threads::census(conn).await?;
        }
    }
    // A thread can be held for a moment by a trace capture in flight (it
    // resumes itself when its snapshot is taken): while captures are in
    // flight, each one's end is awaited and the counts read again, up to
    // a bound, before anything is called a failure.
    let deadline = tokio::time::Instant::now() + CAPTURES_SETTLE;
    while census.held > held.len() && tokio::time::Instant::now() < deadline {
        // A capture that ended since the counts were read: read them again.
        let ended = captures.has_changed().unwrap_or(false);
        let in_flight = *captures.borrow_and_update();
        if !ended {
            if in_flight == 0 {
                break;
            }
            match tokio::time::timeout_at(deadline, captures.changed()).await {
                Ok(Ok(())) => {}
                _ => break,
            }
        }
        census = threads::census(conn).await?;
    }
    let still_held_by_us = held.len();
    // Read, not guessed: the counts say what still holds. The VM's depth
    // was resumed, so an agent pause is over; nothing held at all is an
    // all-clear.
    ledger.vm_resumed();
    if census.held == 0 {
        ledger.all_clear();
    }
    report.total = census.total;
    report.still_held = census.held.saturating_sub(still_held_by_us);
    report.kept_held = still_held_by_us;
    report.resuspended_by_event = report.still_held > 0 && bus.suspending_events() != before;
    Ok(report)
}

/// Suspends or resumes `thread` once and records the agent's hold.
pub async fn change_thread(
    session: &SessionHandle,
    thread: ThreadId,
    direction: Direction,
) -> Result<ThreadChange, SessionError> {
    let conn = session.connection();
    let status = conn.send(&Status { thread }).await.map_err(|e| {
        if matches!(
            e.code(),
            Some(ErrorCode::INVALID_OBJECT) | Some(ErrorCode::INVALID_THREAD)
        ) {
            SessionError::NoSuchThread { thread }
        } else {
            session.map_err(e)
        }
    })?;
    let name = conn.send(&Name { thread }).await.unwrap_or_default();
    if format!("{:?}", status.thread_status).eq_ignore_ascii_case("zombie") {
        return Err(SessionError::ThreadFinished { thread, name });
    }
    let ledger = session.ledger();
    match direction {
        Direction::Suspend => {
            ledger.note_suspension();
            conn.send(&Suspend { thread })
                .await
                .map_err(|e| session.map_err(e))?;
            ledger.hold(thread);
        }
        Direction::Resume => {
            conn.send(&Resume { thread })
                .await
                .map_err(|e| session.map_err(e))?;
            ledger.release(thread);
        }
    }
    let count = conn
        .send(&SuspendCount { thread })
        .await
        .map_err(|e| session.map_err(e))?;
    if count == 0 {
        ledger.forget_event_threads(Some(thread));
    }
    Ok(ThreadChange {
        thread,
        name,
        count,
    })
}

/// Suspends the whole VM unless every thread is already held.
pub async fn pause(session: &SessionHandle) -> Result<PauseOutcome, SessionError> {
    let conn = session.connection();
    let before = threads::census(conn)
        .await
        .map_err(|e| session.map_err(e))?;
    let ledger = session.ledger();
    if before.total > 0 && before.held == before.total {
        let view = ledger.view().await;
        return Ok(PauseOutcome::AlreadyHeld {
            total: before.total,
            max_depth: before.max_depth,
            by_events: view.event_threads.len(),
            by_agent: view.held.len(),
            since: view.suspended_for,
        });
    }
    ledger.paused();
    conn.send(&crate::jdwp::virtual_machine::Suspend)
        .await
        .map_err(|e| session.map_err(e))?;
    let after = threads::census(conn)
        .await
        .map_err(|e| session.map_err(e))?;
    Ok(PauseOutcome::Paused {
        held: after.held,
        total: after.total,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(counts: &[(u64, i32)], held: &[(u64, u32)], vm: u32, threads: &[u64]) {
        let counts: Vec<_> = counts.iter().map(|&(t, n)| (ThreadId(t), n)).collect();
        let held: HashMap<_, _> = held.iter().map(|&(t, n)| (ThreadId(t), n)).collect();
        let plan = ResumePlan::new(&counts, &held);
        assert_eq!(
            plan,
            ResumePlan {
                vm_resumes: vm,
                thread_resumes: threads.iter().map(|&t| ThreadId(t)).collect(),
            },
            "counts {counts:?}, held {held:?}"
        );
    }

    #[test]
    fn resumes_are_planned_from_the_counts_read_once() {
        // Nothing suspended: nothing sent.
        check(&[(1, 0), (2, 0)], &[], 0, &[]);
        check(&[], &[], 0, &[]);
        // One stop: one VM resume. Two stacked composites: two, sent together.
        check(&[(1, 1), (2, 1)], &[], 1, &[]);
        check(&[(1, 2), (2, 2), (3, 0)], &[], 2, &[]);
        // A runaway depth is bounded.
        check(&[(1, 1000)], &[], 64, &[]);
        // The agent holds thread 2 once: it keeps that count, the rest of
        // every depth goes thread by thread.
        check(&[(1, 2), (2, 2), (3, 0)], &[(2, 1)], 0, &[1, 1, 2]);
        // Held, and nothing else suspended: nothing sent.
        check(&[(1, 0), (2, 1)], &[(2, 1)], 0, &[]);
        // An agent hold deeper than the count left (resumed behind our
        // back) sends nothing for that thread.
        check(&[(2, 1)], &[(2, 3)], 0, &[]);
    }
}
