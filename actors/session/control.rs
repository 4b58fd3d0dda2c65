//! Execution control the agent asks for: the verified resume of the whole
//! suspend depth, counted suspends and resumes of one thread, and the
//! idempotent pause. Each returns what it did as plain data; the words an
//! agent reads are the MCP layer's.

use std::time::Duration;

use crate::actors::connection::ConnectionHandle;
use crate::actors::error::{JdwpError, SessionError};
use crate::actors::session::{EventBus, Ledger, SessionHandle, threads};
use crate::jdwp::ErrorCode;
use crate::jdwp::ThreadId;
use crate::jdwp::thread_reference::{Name, Resume, Status, Suspend, SuspendCount};

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

/// Resumes the whole suspend depth: `VirtualMachine.Resume` until no
/// thread's count is left (bounded), verified by reading the counts back.
/// A count that reappears along with a newer suspending event is a new
/// hit, not a failure.
pub async fn resume_verified(
    conn: &ConnectionHandle,
    ledger: &mut Ledger,
    bus: &EventBus,
) -> Result<ResumeReport, JdwpError> {
    use crate::jdwp::thread_reference::{Resume as ThreadResume, SuspendCount};
    let mut report = ResumeReport::default();
    bus.resume_started();
    let before = bus.suspending_events();
    let held: std::collections::HashMap<ThreadId, u32> = ledger
        .view()
        .held
        .into_iter()
        .map(|(t, n, _)| (t, n))
        .collect();
    // Watched from before the counts are read back, so a capture that
    // ends after they were read is seen.
    let mut captures = bus.watch_captures();
    let mut census = threads::census(conn).await?;
    // From here no thread is suspended by its event any more; forget that
    // before resuming, so a new hit recorded meanwhile is kept.
    ledger.forget_event_threads(None);
    if held.is_empty() {
        // Nothing held means nothing to send: a resume of a running VM is
        // a packet for nothing, and a report that misleads.
        let rounds = census.max_depth.clamp(0, 64);
        for _ in 0..rounds {
            conn.send(&crate::jdwp::virtual_machine::Resume).await?;
            report.resumes += 1;
            census = threads::census(conn).await?;
            if census.held == 0 {
                break;
            }
        }
    } else {
        // Resume thread by thread, leaving each agent-held thread at the
        // count the agent gave it.
        let all = conn.send(&crate::jdwp::virtual_machine::AllThreads).await?;
        let counts = futures::future::join_all(
            all.iter()
                .map(|&thread| conn.send(&SuspendCount { thread })),
        )
        .await;
        let mut resumes = Vec::new();
        for (thread, count) in all.iter().zip(counts) {
            let keep = held.get(thread).copied().unwrap_or(0) as i32;
            if let Ok(n) = count {
                for _ in keep..n {
                    resumes.push(conn.send(&ThreadResume { thread: *thread }));
                }
            }
        }
        report.resumes = resumes.len() as u32;
        for r in futures::future::join_all(resumes).await {
            r?;
        }
        census = threads::census(conn).await?;
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
    ledger.note_suspension();
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
