//! The thread a call runs on. JDWP runs methods only on a thread an event
//! suspended. When the agent names none and no event holds one, a thread
//! is parked for the call: a chosen thread (`main` first while it runs or
//! sleeps, else the other application threads, running ones first, each
//! given half a second) is suspended and single-stepped into its next
//! line of application code, where the step event suspends it — a safe
//! point, since the JVM stops there between two lines. Into, not over:
//! HotSpot never completes a step over that starts in a native frame
//! (`Thread.sleep`, a socket read), while a step into also ends at the
//! entry of the next application method called. After the call it is
//! resumed, as it was running before. A call the agent did not ask for
//! (a probe's lease re-armed) is always made on a parked thread, never on
//! one an event holds for the agent.

use std::time::{Duration, Instant};

use super::CallError;
use crate::door::Jvm;
use crate::door::step::{self, DEFAULT_EXCLUDES, StepFilter, StepKind};
use crate::error::{MissWhy, ParkMiss, ParkRefusal, SessionError};
use crate::jdwp::ThreadId;
use crate::jdwp::ThreadStatus;
use crate::jdwp::thread_reference::{Resume, Status, Suspend, SuspendCount};
use crate::jdwp::virtual_machine::AllThreads;
use crate::jvm::eval::EvalContext;
use crate::jvm::invoke::late_returns;

/// How long the threads tried for a call may take, all together, to reach
/// a line where one can be parked.
const PARK_WITHIN: Duration = Duration::from_secs(3);
/// How long `main` may take, when it runs or sleeps, before the others are
/// tried: a service's `main` often sleeps a second between rounds.
const MAIN_TRY: Duration = Duration::from_secs(2);
/// How long each other thread may take before the next is tried (the last
/// has what is left).
const PARK_TRY: Duration = Duration::from_millis(500);
/// Threads whose status is read when `main` cannot serve.
const MAX_CANDIDATES: usize = 64;

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
            None => return park_any(session, &[], false).await,
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
/// agent's, and an invocation on it lets the JVM run meanwhile. Only
/// `main` (or the first thread) is tried, as before a fall-back existed:
/// held by the agent, it refuses, and the re-arm waits for a later round.
pub(crate) async fn take_parked(session: &Jvm) -> Result<Seat, SessionError> {
    let event = session.event_threads().await;
    park_any(session, &event, true).await
}

/// Parks `chosen`, the thread the agent named, for a call and reads its
/// context.
async fn parked(session: &Jvm, chosen: ThreadId, name: String) -> Result<Seat, SessionError> {
    if late(session, chosen) {
        return Err(CallError::CannotPark {
            reason: ParkRefusal::InLateCall { name },
        }
        .into());
    }
    park(session, chosen, &name, PARK_WITHIN).await?;
    seated_on(session, chosen, name).await
}

/// The seat of `chosen`, parked: its context read, or the thread released
/// when that fails.
async fn seated_on(session: &Jvm, chosen: ThreadId, name: String) -> Result<Seat, SessionError> {
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

/// Parks a thread of this module's choosing, never one of `taken`:
/// `main` first while it runs or sleeps (up to `MAIN_TRY`), then the other
/// application threads, those running first, then those sleeping, then
/// those waiting (`main` first among them), each up to `PARK_TRY` and the
/// last what is left of `PARK_WITHIN`, to reach a line of application
/// code. A service whose `main` waits for good (a `join`, a latch) is
/// served by a thread that runs. Statuses are read for `main` alone when
/// it serves, as a rule. A `background` call (one the agent did not ask
/// for) tries `main` alone.
async fn park_any(
    session: &Jvm,
    taken: &[ThreadId],
    background: bool,
) -> Result<Seat, SessionError> {
    let candidates = candidates(session, taken).await?;
    let started = Instant::now();
    let deadline = started + PARK_WITHIN;
    let mut tried = Tried::default();
    let Some(((first, first_name), rest)) = candidates.split_first() else {
        return Err(CallError::CannotPark {
            reason: ParkRefusal::NoApplicationThread,
        }
        .into());
    };
    // A call the agent did not ask for tries `main` (or the first thread)
    // alone, and waits while the agent holds it.
    if background {
        let status = status_of(session, *first).await;
        return match try_park(
            session,
            (*first, first_name, status),
            PARK_WITHIN,
            &mut tried,
            true,
        )
        .await?
        {
            Some(seat) => Ok(seat),
            None => Err(CallError::CannotPark {
                reason: ParkRefusal::NoLineReached {
                    tried: tried.misses,
                    ms: started.elapsed().as_millis(),
                },
            }
            .into()),
        };
    }
    let first_status = status_of(session, *first).await;
    let first_serves = matches!(
        first_status,
        Some(ThreadStatus::Running | ThreadStatus::Sleeping)
    );
    if first_serves
        && let Some(seat) = try_park(
            session,
            (*first, first_name, first_status),
            MAIN_TRY.min(deadline.saturating_duration_since(Instant::now())),
            &mut tried,
            false,
        )
        .await?
    {
        return Ok(seat);
    }
    let statuses = futures::future::join_all(
        rest.iter()
            .take(MAX_CANDIDATES)
            .map(|(t, _)| status_of(session, *t)),
    )
    .await;
    let mut order: Vec<(ThreadId, &str, Option<ThreadStatus>)> = Vec::new();
    if !first_serves {
        order.push((*first, first_name, first_status));
    }
    order.extend(
        rest.iter()
            .zip(statuses)
            .map(|((t, n), s)| (*t, n.as_str(), s)),
    );
    order.retain(|(_, _, s)| !matches!(s, Some(ThreadStatus::Zombie | ThreadStatus::NotStarted)));
    order.sort_by_key(|(_, _, s)| match s {
        Some(ThreadStatus::Running) => 0,
        Some(ThreadStatus::Sleeping) => 1,
        _ => 2,
    });
    let last = order.len().saturating_sub(1);
    for (i, candidate) in order.into_iter().enumerate() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        let within = if i == last { left } else { PARK_TRY.min(left) };
        if let Some(seat) = try_park(session, candidate, within, &mut tried, false).await? {
            return Ok(seat);
        }
    }
    // Held by the agent, every one of them (a pause): that is what blocks.
    if let Some((thread, name)) = tried
        .held
        .filter(|_| tried.misses.len() == tried.held_count)
    {
        return Err(CallError::AgentHeld { thread, name }.into());
    }
    Err(CallError::CannotPark {
        reason: match tried.misses.is_empty() {
            true => ParkRefusal::NoApplicationThread,
            false => ParkRefusal::NoLineReached {
                tried: tried.misses,
                ms: started.elapsed().as_millis(),
            },
        },
    }
    .into())
}

/// The threads [`park_any`] tried and why each did not serve; the first
/// the agent held, and how many it held.
#[derive(Default)]
struct Tried {
    misses: Vec<ParkMiss>,
    held: Option<(ThreadId, String)>,
    held_count: usize,
}

/// One attempt of [`park_any`]: the seat of `thread` once parked, or
/// `None` with why not noted in `tried` (it reached no line in time, the
/// agent holds it, or a late call has it). A dead connection ends the
/// search.
async fn try_park(
    session: &Jvm,
    (thread, name, status): (ThreadId, &str, Option<ThreadStatus>),
    within: Duration,
    tried: &mut Tried,
    background: bool,
) -> Result<Option<Seat>, SessionError> {
    let miss = |why| ParkMiss {
        name: name.to_string(),
        why,
    };
    if late(session, thread) {
        tried.misses.push(miss(MissWhy::LateCall));
        return Ok(None);
    }
    match park(session, thread, name, within).await {
        Ok(()) => seated_on(session, thread, name.to_string()).await.map(Some),
        // A call the agent did not ask for waits while the agent holds a
        // thread: its invocation would let that thread run, and a resume
        // the agent sent meanwhile would be undone when it ends.
        Err(e @ SessionError::Call(CallError::AgentHeld { .. })) if background => Err(e),
        Err(SessionError::Call(CallError::AgentHeld { thread, name })) => {
            tried.misses.push(miss(MissWhy::AgentHeld));
            tried.held_count += 1;
            tried.held.get_or_insert((thread, name));
            Ok(None)
        }
        Err(SessionError::Call(CallError::CannotPark { .. })) => {
            tried.misses.push(miss(MissWhy::NoLine {
                status,
                ms: within.as_millis(),
            }));
            Ok(None)
        }
        // A thread that ended meanwhile, or any other refusal about this
        // one thread, is passed over; a connection that is gone ends it.
        Err(e) if session.check_alive().is_ok() => {
            tried.misses.push(miss(MissWhy::Refused(e.to_string())));
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// A thread's status, `None` when it cannot be read.
async fn status_of(session: &Jvm, thread: ThreadId) -> Option<ThreadStatus> {
    session
        .connection()
        .send(&Status { thread })
        .await
        .ok()
        .map(|s| s.thread_status)
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

/// The threads a call may be parked on: every thread but the JVM's own
/// and `taken`, `main` first, then by name. Every thread's name is read
/// in one pipelined burst.
async fn candidates(
    session: &Jvm,
    taken: &[ThreadId],
) -> Result<Vec<(ThreadId, String)>, SessionError> {
    let all = session
        .connection()
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
    Ok(candidates)
}

/// Suspends `thread` and steps it into its next line of application code
/// within `within`.
async fn park(
    session: &Jvm,
    thread: ThreadId,
    name: &str,
    within: Duration,
) -> Result<(), SessionError> {
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
    match step::step(session, thread, StepKind::Into, &filter, within).await {
        Ok(_) => Ok(()),
        Err(SessionError::StepTimeout { ms, .. }) => Err(CallError::CannotPark {
            reason: ParkRefusal::NoLineReached {
                tried: vec![ParkMiss {
                    name: name.into(),
                    why: MissWhy::NoLine { status: None, ms },
                }],
                ms,
            },
        }
        .into()),
        Err(e) => Err(e),
    }
}
