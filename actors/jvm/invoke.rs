//! Bounded method invocation. Every invocation goes through [`bounded`],
//! which answers within the budget. One that outlives it is cancelled
//! (`cancel.rs`: an `Error` thrown into the call, after an interrupt wakes
//! a thread that sleeps, waits or parks) and its thread runs its own code
//! again. One that cannot be cancelled (it catches the `Error`, or nothing
//! wakes it) keeps its thread: the thread is named as taken until the
//! call returns (`runaways.rs`), and its late return is watched so the
//! suspension HotSpot restores then is undone (`late.rs`).

pub mod cancel;
mod late;
pub mod markers;
pub mod runaways;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::connection::ConnectionHandle;
use crate::error::{CallEnd, JdwpError};
use crate::jdwp::class_type::{InvokeMethodReply, NewInstanceReply};
use crate::jdwp::{Command, MethodId, ObjectId, ReferenceTypeId, ThreadId};
use crate::jvm::classes::ClassCache;

pub use late::late_returns;

/// How long a late invocation is watched for; past this its window slot
/// is given back and a return after it is left to the Watchdog.
const LATE_WATCH: Duration = Duration::from_secs(600);

/// Late invocations watched at once per session. Each keeps a slot of the
/// Connection's in-flight window (32) until it returns, so threads stuck
/// in invocations must never fill the window and stall the session;
/// beyond this many, an invocation is given up at its budget as before.
const MAX_LATE_WATCHES: usize = 8;

/// A command that runs a method in the JVM: what it calls, and the
/// exception its reply carries.
pub trait Invocation: Command {
    /// The class and method called.
    fn target(&self) -> (ReferenceTypeId, MethodId);
    /// The exception the call threw (0 when it returned).
    fn thrown(reply: &Self::Reply) -> ObjectId;
}

macro_rules! invocation {
    ($($cmd:ty => $class:ident, $reply:ty;)*) => {$(
        impl Invocation for $cmd {
            fn target(&self) -> (ReferenceTypeId, MethodId) {
                (self.$class, self.method)
            }
            fn thrown(reply: &$reply) -> ObjectId {
                reply.exception.id
            }
        }
    )*};
}

invocation! {
    crate::jdwp::class_type::InvokeMethod => class, InvokeMethodReply;
    crate::jdwp::class_type::NewInstance => class, NewInstanceReply;
    crate::jdwp::interface_type::InvokeMethod => interface, InvokeMethodReply;
    crate::jdwp::object_reference::InvokeMethod => class, InvokeMethodReply;
}

/// Counts the invocation (see [`ClassCache::invocations_on`]), sends
/// `cmd` on `thread` and waits up to `budget` for its reply. Past the
/// budget the call is cancelled (`Cancelled`), or, when it cannot be, its
/// thread is recorded as taken and its reply watched in the background
/// (`Overran`).
pub async fn bounded<C: Invocation>(
    classes: &ClassCache,
    cmd: &C,
    thread: ThreadId,
    budget: Duration,
) -> Result<C::Reply, JdwpError>
where
    C::Reply: Send + 'static,
{
    let conn = classes.connection();
    classes.note_invocation(thread);
    // JDWP resumes an invoking thread once: held twice over (two events,
    // or an event and the agent), it would never run the method. Bring its
    // count to one for the call and give the holds back afterwards.
    let extra = lift_extra_holds(conn, thread).await?;
    let runaways = classes.runaways().clone();
    runaways.prepare(classes, thread).await;
    let watches = classes.late_watches().clone();
    let may_watch = watches.load(Ordering::Relaxed) < MAX_LATE_WATCHES;
    let wait = if may_watch {
        LATE_WATCH.max(budget + cancel::WITHIN)
    } else {
        budget + cancel::WITHIN
    };
    let mut reply = Box::pin(conn.send_within(cmd, wait));
    let started = Instant::now();
    if let Ok(answer) = tokio::time::timeout(budget, &mut reply).await {
        restore_holds(conn, thread, extra).await;
        return answer;
    }
    let interrupted = cancel::interrupted_method(classes).await;
    let why = match cancel::cancel(classes, thread, &mut reply).await {
        cancel::Attempt::Ended(answer) => {
            cancel::settle(conn, &runaways, interrupted, thread).await;
            restore_holds(conn, thread, extra).await;
            let ended = match answer? {
                r if Some(C::thrown(&r)) == runaways.throwable() => CallEnd::Thrown,
                _ => CallEnd::Interrupted,
            };
            return Err(JdwpError::Cancelled {
                command: C::NAME,
                after: budget,
                ended,
            });
        }
        cancel::Attempt::Left(why) => why,
    };
    runaways
        .take(classes, thread, cmd.target(), started, why)
        .await;
    if may_watch {
        watches.fetch_add(1, Ordering::Relaxed);
        late::Watch {
            conn: conn.clone(),
            session: classes.session(),
            runaways,
            watches,
            interrupted,
            thread,
            extra,
            started,
        }
        .spawn(reply);
    } else {
        tracing::warn!(
            thread = thread.0,
            "{MAX_LATE_WATCHES} late invocations are already watched; this one is given up at its budget"
        );
    }
    Err(JdwpError::Overran {
        command: C::NAME,
        after: budget,
    })
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
pub(super) async fn restore_holds(conn: &ConnectionHandle, thread: ThreadId, extra: u32) {
    use crate::jdwp::thread_reference::Suspend;
    let suspends = (0..extra).map(|_| conn.send(&Suspend { thread }));
    for r in futures::future::join_all(suspends).await {
        if let Err(e) = r {
            tracing::warn!(thread = thread.0, error = %e, "a hold lifted for an invocation could not be restored");
        }
    }
}
