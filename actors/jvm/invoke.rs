//! Bounded method invocation. JDWP cannot cancel an invoke: one that
//! outlives its budget keeps running in the JVM, and when it finally
//! returns HotSpot suspends its thread again — by then whoever invoked it
//! (a trace, a condition, a tool) has given up and released the thread, so
//! that suspension would hold it for good. Every invocation goes through
//! [`bounded`], which answers within the budget and keeps watching the
//! late reply in the background to undo that suspension.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::actors::connection::ConnectionHandle;
use crate::actors::error::JdwpError;
use crate::actors::jvm::classes::ClassCache;
use crate::actors::link::SessionLink;
use crate::actors::lock::lock;
use crate::jdwp::{Command, ThreadId};
use crate::model::recent::{LateOutcome, LateReturn, RecentEvent};

/// How long a late invocation is watched for; past this its window slot
/// is given back and a return after it is left to the Watchdog.
const LATE_WATCH: Duration = Duration::from_secs(600);

/// Late invocations watched at once per session. Each keeps a slot of the
/// Connection's in-flight window (32) until it returns, so threads stuck
/// in invocations must never fill the window and stall the session;
/// beyond this many, an invocation is given up at its budget as before.
const MAX_LATE_WATCHES: usize = 8;

/// Counts the invocation (see [`ClassCache::invocations_on`]), sends
/// `cmd` on `thread` and waits up to `budget` for its
/// reply. Past the budget it answers `Timeout` and watches the reply in
/// the background: when the method returns, the suspension HotSpot
/// restores is undone unless the agent holds the thread.
pub async fn bounded<C: Command>(
    classes: &ClassCache,
    cmd: &C,
    thread: ThreadId,
    budget: Duration,
) -> Result<C::Reply, JdwpError>
where
    C::Reply: Send + 'static,
{
    let conn = classes.connection();
    let session = classes.session();
    classes.note_invocation(thread);
    // JDWP resumes an invoking thread once: held twice over (two events,
    // or an event and the agent), it would never run the method. Bring its
    // count to one for the call and give the holds back afterwards.
    let extra = lift_extra_holds(conn, thread).await?;
    let watches = classes.late_watches().clone();
    let may_watch = watches.load(Ordering::Relaxed) < MAX_LATE_WATCHES;
    let wait = if may_watch {
        LATE_WATCH.max(budget)
    } else {
        budget
    };
    let mut reply = Box::pin(conn.send_within(cmd, wait));
    let started = Instant::now();
    match tokio::time::timeout(budget, &mut reply).await {
        Ok(answer) => {
            restore_holds(conn, thread, extra).await;
            answer
        }
        Err(_) => {
            if may_watch {
                watches.fetch_add(1, Ordering::Relaxed);
                let conn = conn.clone();
                tokio::spawn(async move {
                    // A timeout or a lost connection here means it never
                    // came back while we watched: nothing to undo.
                    let answer = reply.await;
                    watches.fetch_sub(1, Ordering::Relaxed);
                    if let Ok(_) | Err(JdwpError::Jvm { .. } | JdwpError::Decode { .. }) = answer {
                        restore_holds(&conn, thread, extra).await;
                        after_late_return(&conn, session, thread, started.elapsed()).await;
                    }
                });
            } else {
                tracing::warn!(
                    thread = thread.0,
                    "{MAX_LATE_WATCHES} late invocations are already watched; this one is given up at its budget"
                );
            }
            Err(JdwpError::Timeout {
                command: C::NAME,
                after: budget,
            })
        }
    }
}

/// Late returns handled so far, per (session, thread).
static LATE_RETURNS: std::sync::Mutex<Vec<(String, ThreadId, u64)>> =
    std::sync::Mutex::new(Vec::new());

/// How many invocations on `thread` of session `session` returned past
/// their budget and were dealt with (resumed, or left to the agent's hold
/// or the next resume): a caller that gave one up waits for this to move.
pub fn late_returns(session: &str, thread: ThreadId) -> u64 {
    let l = lock(&LATE_RETURNS);
    l.iter()
        .find(|(s, t, _)| s == session && *t == thread)
        .map_or(0, |(_, _, n)| *n)
}

fn count_late_return(session: Option<&SessionLink>, thread: ThreadId) {
    let Some(s) = session else { return };
    let mut l = lock(&LATE_RETURNS);
    match l
        .iter_mut()
        .find(|(id, t, _)| *id == s.id.0 && *t == thread)
    {
        Some((_, _, n)) => *n += 1,
        None => {
            if l.len() >= 4096 {
                l.clear();
            }
            l.push((s.id.0.clone(), thread, 1));
        }
    }
}

/// Resumes `thread` down to a suspend count of one; how many holds were
/// lifted.
async fn lift_extra_holds(conn: &ConnectionHandle, thread: ThreadId) -> Result<u32, JdwpError> {
    use crate::jdwp::thread_reference::{Resume, SuspendCount};
    let count = conn.send(&SuspendCount { thread }).await?;
    let extra = u32::try_from(count.saturating_sub(1)).unwrap_or(0);
    let resumes = (0..extra).map(|_| conn.send(&Resume { thread }));
    for r in futures::future::join_all(resumes).await {
        r?;
    }
    Ok(extra)
}

/// Gives back the holds [`lift_extra_holds`] lifted.
async fn restore_holds(conn: &ConnectionHandle, thread: ThreadId, extra: u32) {
    use crate::jdwp::thread_reference::Suspend;
    let suspends = (0..extra).map(|_| conn.send(&Suspend { thread }));
    for r in futures::future::join_all(suspends).await {
        if let Err(e) = r {
            tracing::warn!(thread = thread.0, error = %e, "a hold lifted for an invocation could not be restored");
        }
    }
}

/// The method invoked on `thread` returned `after` its start, past its
/// budget: HotSpot has suspended the thread again.
async fn after_late_return(
    conn: &ConnectionHandle,
    session: Option<SessionLink>,
    thread: ThreadId,
    after: Duration,
) {
    handle_late_return(conn, session.as_ref(), thread, after).await;
    count_late_return(session.as_ref(), thread);
}

async fn handle_late_return(
    conn: &ConnectionHandle,
    session: Option<&SessionLink>,
    thread: ThreadId,
    after: Duration,
) {
    let late = |outcome| {
        RecentEvent::LateReturn(LateReturn {
            thread,
            after_ms: after.as_millis(),
            outcome,
        })
    };
    if let Some(s) = session {
        let view = s.session.view().await;
        let event_threads = view.event_threads;
        let agent_holds =
            view.held.iter().any(|(t, _, _)| *t == thread) || event_threads.contains(&thread);
        if agent_holds {
            s.note_event(late(LateOutcome::AgentHolds));
            return;
        }
        if !event_threads.is_empty() || view.maybe_suspended {
            // The JVM is stopped for the agent: the next verified resume
            // clears this thread too; the Watchdog watches meanwhile.
            s.session.note_suspension();
            s.note_event(late(LateOutcome::LeftToResume));
            return;
        }
    }
    let count = conn
        .send(&crate::jdwp::thread_reference::SuspendCount { thread })
        .await;
    let outcome = match count {
        Ok(n) if n > 0 => {
            match conn
                .send(&crate::jdwp::thread_reference::Resume { thread })
                .await
            {
                Ok(()) => LateOutcome::Resumed,
                Err(e) => LateOutcome::ResumeFailed(e.to_string()),
            }
        }
        Ok(_) => LateOutcome::Runs,
        Err(e) => LateOutcome::Unreadable(e.to_string()),
    };
    tracing::info!(
        thread = thread.0,
        after_ms = after.as_millis() as u64,
        ?outcome,
        "late invocation"
    );
    if let Some(s) = session {
        s.note_event(late(outcome));
    }
}
