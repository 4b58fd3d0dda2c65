//! Late returns: an invocation that could not be cancelled keeps running
//! in the JVM, and when it finally returns HotSpot suspends its thread
//! again — by then whoever invoked it (a trace, a condition, a tool) has
//! given up and released the thread, so that suspension would hold it for
//! good. The reply is watched in the background: when it comes, what the
//! JDWP agent still holds back is delivered inside a call of ours
//! (`cancel::settle`), the thread is no longer named as taken, and the
//! suspension is undone unless the agent holds the thread.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::connection::ConnectionHandle;
use crate::error::JdwpError;
use crate::jdwp::{MethodId, ReferenceTypeId, ThreadId};
use crate::link::SessionLink;
use crate::lock::lock;
use crate::model::recent::{LateOutcome, LateReturn, RecentEvent};

use super::runaways::Runaways;

/// What a late watch needs once the call returns.
pub(super) struct Watch {
    pub conn: ConnectionHandle,
    pub session: Option<SessionLink>,
    pub runaways: Arc<Runaways>,
    pub watches: Arc<AtomicUsize>,
    /// `Thread.interrupted()`, for the settling call.
    pub interrupted: Option<(ReferenceTypeId, MethodId)>,
    pub thread: ThreadId,
    /// Holds lifted for the call, to be given back.
    pub extra: u32,
    pub started: Instant,
}

impl Watch {
    /// Awaits `reply` in the background (the caller counted the watch).
    pub fn spawn<R: Send + 'static>(
        self,
        reply: impl Future<Output = Result<R, JdwpError>> + Send + 'static,
    ) {
        tokio::spawn(async move {
            // A timeout or a lost connection here means it never came
            // back while we watched: nothing to undo.
            let answer = reply.await;
            self.watches.fetch_sub(1, Ordering::Relaxed);
            if let Ok(_) | Err(JdwpError::Jvm { .. } | JdwpError::Decode { .. }) = answer {
                super::cancel::settle(&self.conn, &self.runaways, self.interrupted, self.thread)
                    .await;
                self.runaways.give_back(self.thread);
                super::restore_holds(&self.conn, self.thread, self.extra).await;
                after_late_return(
                    &self.conn,
                    self.session,
                    self.thread,
                    self.started.elapsed(),
                )
                .await;
            }
        });
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
        if view.suspended_by_us {
            // The JVM is stopped for the agent: the next verified resume
            // clears this thread too; the Watchdog watches meanwhile.
            s.session.note_unaccounted();
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
