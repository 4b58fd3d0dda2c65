//! The thread a call runs on. JDWP runs methods only on a thread an event
//! suspended. When the agent names none and no event holds one, a thread
//! is parked for the call: the chosen thread (`main` first, else the first
//! application thread) is suspended and single-stepped into its next
//! line of application code, where the step event suspends it — a safe
//! point, since the JVM stops there between two lines. Into, not over:
//! HotSpot never completes a step over that starts in a native frame
//! (`Thread.sleep`, a socket read), while a step into also ends at the
//! entry of the next application method called. After the call it is
//! resumed, as it was running before. A call the agent did not ask for
//! (a probe's lease re-armed) is always made on a parked thread, never on
//! one an event holds for the agent.

use std::time::Duration;

use super::CallError;
use crate::door::Jvm;
use crate::door::step::{self, DEFAULT_EXCLUDES, StepFilter, StepKind};
use crate::error::{ParkRefusal, SessionError};
use crate::jdwp::ThreadId;
use crate::jdwp::ThreadStatus;
use crate::jdwp::thread_reference::{Resume, Status, Suspend, SuspendCount};
use crate::jdwp::virtual_machine::AllThreads;
use crate::jvm::eval::EvalContext;
use crate::jvm::invoke::late_returns;

/// How long a thread may take to reach a line where it can be parked.
const PARK_WITHIN: Duration = Duration::from_secs(3);

/// How long a parked thread whose call timed out is watched for its return.
const LATE_WATCH: Duration = Duration::from_secs(600);
/// How often it is looked at meanwhile.
const LATE_POLL: Duration = Duration::from_millis(50);

/// Threads of the JVM itself, never parked.
const SYSTEM_THREADS: &[&str] = &[
    "Reference Handler",
    "Finalizer",
    "Signal Dispatcher",
    "Common-Cleaner",
    "Attach Listener",
    "Notification Thread",
    "DestroyJavaVM",
];

/// Parked threads whose call ran past its budget and has not returned:
/// (session id, thread). Not parked again until it has, since the return
/// suspends the thread again and only its watcher may resume it.
static LATE: std::sync::Mutex<Vec<(String, ThreadId)>> = std::sync::Mutex::new(Vec::new());

fn late(session: &Jvm, thread: ThreadId) -> bool {
    let key = (session.id().0.clone(), thread);
    LATE.lock().map(|l| l.contains(&key)).unwrap_or(false)
}

fn set_late(session: &Jvm, thread: ThreadId, on: bool) {
    let key = (session.id().0.clone(), thread);
    if let Ok(mut l) = LATE.lock() {
        l.retain(|k| *k != key);
        if on {
            l.push(key);
        }
    }
}

/// How the call's thread was had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Venue {
    /// An event (a stop point, a step) had suspended it.
    EventThread,
    /// Parked for the call by a single step, and resumed after it.
    Parked,
}

/// The thread a call runs on, and what to undo after.
pub(crate) struct Seat {
    pub thread: ThreadId,
    pub name: String,
    pub venue: Venue,
    pub ctx: EvalContext,
}

/// Seats a call on `want` (or a thread of this module's choosing).
pub(crate) async fn take(session: &Jvm, want: Option<ThreadId>) -> Result<Seat, SessionError> {
    let event = held_by_events(session).await;
    let chosen = match want {
        Some(t) => t,
        None => match event.first() {
            Some(&t) => t,
            None => {
                let (chosen, name) = choose(session, &[]).await?;
                return parked(session, chosen, name).await;
            }
        },
    };
    let name = session
        .thread_names(&[chosen])
        .await
        .pop()
        .flatten()
        .unwrap_or_default();
    if event.contains(&chosen) {
        let ctx = crate::door::context::context(session, Some(chosen), 0).await?;
        return Ok(Seat {
            thread: chosen,
            name,
            venue: Venue::EventThread,
            ctx,
        });
    }
    parked(session, chosen, name).await
}

/// Seats a call the agent did not ask for (a probe's lease re-armed) on a
/// thread parked for it, never on one an event holds: that thread is the
/// agent's, and an invocation on it lets the JVM run meanwhile.
pub(crate) async fn take_parked(session: &Jvm) -> Result<Seat, SessionError> {
    let event = session.event_threads().await;
    let (chosen, name) = choose(session, &event).await?;
    parked(session, chosen, name).await
}

/// Parks `chosen` for a call and reads its context.
async fn parked(session: &Jvm, chosen: ThreadId, name: String) -> Result<Seat, SessionError> {
    if late(session, chosen) {
        return Err(CallError::CannotPark {
            reason: ParkRefusal::InLateCall { name },
        }
        .into());
    }
    park(session, chosen, &name).await?;
    let ctx = match crate::door::context::context(session, Some(chosen), 0).await {
        Ok(ctx) => ctx,
        Err(e) => {
            release(session, chosen).await;
            return Err(e);
        }
    };
    Ok(Seat {
        thread: chosen,
        name,
        venue: Venue::Parked,
        // The step event suspended it, so it may invoke.
        ctx: EvalContext {
            invocable: true,
            ..ctx
        },
    })
}

/// The threads the ledger says events hold, less any that is running
/// after all (a class load's thread that the stop points released once
/// they had armed the new class: the ledger is forgotten then).
async fn held_by_events(session: &Jvm) -> Vec<ThreadId> {
    let mut held = Vec::new();
    for t in session.event_threads().await {
        let count = session.connection().send(&SuspendCount { thread: t }).await;
        match count {
            Ok(n) if n > 0 => held.push(t),
            Ok(_) => session.ledger().forget_event_threads(Some(t)),
            Err(_) => {}
        }
    }
    held
}

impl Seat {
    /// Ends a call made from this seat: lets the caller's objects be
    /// collected and gives the thread back as [`Seat::give_back`] does.
    pub async fn end<T>(
        &self,
        session: &Jvm,
        caller: &super::Caller<'_>,
        result: &Result<T, SessionError>,
    ) {
        caller.release().await;
        let timed_out = matches!(result, Err(SessionError::Call(CallError::Timeout { .. })));
        self.give_back(session, timed_out).await;
    }

    /// Gives a parked thread back: resumed now, or, when the call timed
    /// out and still runs, once it returns (the JVM suspends the thread
    /// again then, and nobody else holds it).
    pub async fn give_back(&self, session: &Jvm, timed_out: bool) {
        if self.venue != Venue::Parked {
            return;
        }
        if !timed_out {
            release(session, self.thread).await;
            return;
        }
        session.ledger().forget_event_threads(Some(self.thread));
        set_late(session, self.thread, true);
        let (session, thread) = (session.clone(), self.thread);
        let before = late_returns(&session.id().0, thread);
        tokio::spawn(async move {
            let started = std::time::Instant::now();
            while started.elapsed() < LATE_WATCH && session.check_alive().is_ok() {
                tokio::time::sleep(LATE_POLL).await;
                if late_returns(&session.id().0, thread) == before {
                    continue;
                }
                // Returned: resumed already, unless it was left to a resume.
                if let Ok(n) = session.connection().send(&SuspendCount { thread }).await
                    && n > 0
                {
                    release(&session, thread).await;
                }
                break;
            }
            set_late(&session, thread, false);
        });
    }
}

async fn release(session: &Jvm, thread: ThreadId) {
    session.ledger().forget_event_threads(Some(thread));
    let _ = session.connection().send(&Resume { thread }).await;
}

/// `main` when it is alive, else the first thread by name that is not
/// the JVM's own; never one of `taken`. Every thread's name is read (one
/// pipelined burst), then the status of candidates in that order until
/// one runs (one read, as a rule): a JVM of hundreds of threads is not
/// asked for every status and suspend count to pick one.
async fn choose(session: &Jvm, taken: &[ThreadId]) -> Result<(ThreadId, String), SessionError> {
    let conn = session.connection();
    let all = conn
        .send(&AllThreads)
        .await
        .map_err(|e| session.map_err(e))?;
    let names = session.thread_names(&all).await;
    let mut candidates: Vec<(ThreadId, String)> = all
        .into_iter()
        .zip(names)
        .filter_map(|(t, n)| Some((t, n?)))
        .filter(|(t, n)| !SYSTEM_THREADS.contains(&n.as_str()) && !taken.contains(t))
        .collect();
    candidates.sort_by(|a, b| (a.1 != "main").cmp(&(b.1 != "main")).then(a.1.cmp(&b.1)));
    for (thread, name) in candidates {
        let status = conn.send(&Status { thread }).await;
        if status.is_ok_and(|s| {
            !matches!(
                s.thread_status,
                ThreadStatus::Zombie | ThreadStatus::NotStarted
            )
        }) {
            return Ok((thread, name));
        }
    }
    Err(CallError::CannotPark {
        reason: ParkRefusal::NoApplicationThread,
    }
    .into())
}

/// Suspends `thread` and steps it into its next line of application code.
async fn park(session: &Jvm, thread: ThreadId, name: &str) -> Result<(), SessionError> {
    let conn = session.connection();
    let count = conn
        .send(&SuspendCount { thread })
        .await
        .map_err(|e| session.map_err(e))?;
    if count > 0 {
        return Err(CallError::AgentHeld {
            thread,
            name: name.into(),
        }
        .into());
    }
    conn.send(&Suspend { thread })
        .await
        .map_err(|e| session.map_err(e))?;
    let filter = StepFilter::Exclude(DEFAULT_EXCLUDES.iter().map(|s| s.to_string()).collect());
    match step::step(session, thread, StepKind::Into, &filter, PARK_WITHIN).await {
        Ok(_) => Ok(()),
        Err(SessionError::StepTimeout { ms, .. }) => Err(CallError::CannotPark {
            reason: ParkRefusal::NoLineReached {
                name: name.into(),
                ms,
            },
        }
        .into()),
        Err(e) => Err(e),
    }
}
