//! Cancelling an invocation that ran past its budget, by throwing an
//! `Error` into it (`ThreadReference.Stop`), after making sure the throw
//! lands inside the call.
//!
//! The JDWP agent runs an invocation inside the handler of the event that
//! suspended its thread, and while a thread is handling an event it holds
//! back a `Stop` (and, before JDK 19 or so, an `Interrupt`) until the
//! handler ends — which, for the call's thread, is when the agent's hold
//! is resumed: the `Error` would then hit the application's own code. Any
//! event the thread meets during the call ends "handling" for the agent,
//! so a cancel first sets a one-shot single step on the thread (a marker,
//! `markers.rs`) and interrupts it, and throws only once the step fired:
//! the thread is then running the call's bytecode, and the `Stop` goes to
//! the JVM at once. A thread that runs no bytecode (asleep, waiting,
//! parked) is woken by the interrupt where the agent passes it on; where
//! it holds it back, a thread lent by a one-shot method entry calls
//! `Thread.interrupt()` on it.
//!
//! Afterwards [`settle`] delivers, inside one more small call of ours,
//! whatever the agent still holds back, and clears the interrupt flag, so
//! the thread's own code sees neither.

use std::time::Duration;

use crate::connection::ConnectionHandle;
use crate::error::JdwpError;
use crate::jdwp::event_request::{Clear, Set};
use crate::jdwp::thread_reference::{Interrupt, Resume, Stop, SuspendCount};
use crate::jdwp::{
    EventKind, InvokeOptions, MethodId, Modifier, ObjectId, ReferenceTypeId, StepDepth, StepSize,
    SuspendPolicy, ThreadId,
};
use crate::jvm::classes::ClassCache;
use crate::model::invoking::Uncancelled;

use super::markers::Expecting;
use super::runaways::Runaways;

/// How long a cancel waits for the thread to run bytecode, after the
/// interrupt and again after a lent thread interrupted it.
const RUNS_WITHIN: Duration = Duration::from_millis(200);
/// How long a cancel waits for another thread to enter a method.
const LEND_WITHIN: Duration = Duration::from_millis(300);
/// How long the call may take to end once the `Error` is thrown.
const ENDS_WITHIN: Duration = Duration::from_millis(500);
/// Bound on the small calls a cancel makes itself.
const OWN_CALL_WITHIN: Duration = Duration::from_secs(1);
/// The longest a cancel takes, past the budget.
pub const WITHIN: Duration = Duration::from_millis(2 * 200 + 300 + 500 + 2 * 1000);

/// What a cancel came to.
pub enum Attempt<R> {
    /// The call ended: its reply (the `Error` thrown, or what the call
    /// did once interrupted).
    Ended(Result<R, JdwpError>),
    /// It goes on.
    Left(Uncancelled),
}

/// How the reply race went.
enum Race<R> {
    Ended(Result<R, JdwpError>),
    Runs,
    Quiet,
}

/// Cancels the call on `thread` whose reply is `reply`.
pub async fn cancel<R, F>(classes: &ClassCache, thread: ThreadId, reply: &mut F) -> Attempt<R>
where
    F: Future<Output = Result<R, JdwpError>> + Unpin,
{
    let conn = classes.connection();
    let runaways = classes.runaways();
    let Some(throwable) = runaways.throwable() else {
        return Attempt::Left(Uncancelled::NoThrowable);
    };
    // A thread an event suspended inside the call waits for a resume;
    // throwing into it would end code the agent may be looking at.
    if conn
        .send(&SuspendCount { thread })
        .await
        .is_ok_and(|n| n > 0)
    {
        return Attempt::Left(Uncancelled::HeldInside);
    }
    let mut step = runaways
        .markers()
        .expect(EventKind::SingleStep, Some(thread));
    let request = match conn.send(&step_marker(thread)).await {
        Ok(r) => r,
        Err(e) => return Attempt::Left(Uncancelled::NoMarker(e.to_string())),
    };
    step.bind(request);
    let _ = conn.send(&Interrupt { thread }).await;
    let mut race = race(reply, &mut step).await;
    if matches!(race, Race::Quiet) {
        lend(classes, thread).await;
        race = self::race(reply, &mut step).await;
    }
    let attempt = match race {
        Race::Ended(r) => Attempt::Ended(r),
        Race::Quiet => Attempt::Left(Uncancelled::Unwoken),
        Race::Runs => {
            let _ = conn.send(&Stop { thread, throwable }).await;
            match tokio::time::timeout(ENDS_WITHIN, &mut *reply).await {
                Ok(r) => Attempt::Ended(r),
                Err(_) => Attempt::Left(Uncancelled::Swallowed),
            }
        }
    };
    if !step.done() {
        let _ = conn.send(&clear_step(request)).await;
    }
    attempt
}

/// Waits for the call to end or the thread to run bytecode.
async fn race<R, F>(reply: &mut F, step: &mut Expecting) -> Race<R>
where
    F: Future<Output = Result<R, JdwpError>> + Unpin,
{
    tokio::select! {
        r = &mut *reply => Race::Ended(r),
        fired = step.fired(RUNS_WITHIN) => match fired {
            Some(_) => Race::Runs,
            None => Race::Quiet,
        },
    }
}

/// Interrupts `thread` from another one: a one-shot method entry suspends
/// the next thread to enter a method, `thread.interrupt()` is invoked on
/// that one, and it is resumed. Nothing happens when no thread enters a
/// method in time, or the one that did is held for something else too.
async fn lend(classes: &ClassCache, thread: ThreadId) {
    let conn = classes.connection();
    let Some((class, interrupt)) = thread_method(classes, "interrupt", "()V").await else {
        return;
    };
    let mut entry = classes
        .runaways()
        .markers()
        .expect(EventKind::MethodEntry, None);
    let Ok(request) = conn
        .send(&Set {
            event_kind: EventKind::MethodEntry,
            suspend_policy: SuspendPolicy::EventThread,
            modifiers: vec![Modifier::Count { count: 1 }],
        })
        .await
    else {
        return;
    };
    entry.bind(request);
    let Some(lent) = entry.fired(LEND_WITHIN).await else {
        // Cleared; an event already on its way is claimed as an orphan's
        // and its thread resumed.
        let _ = conn
            .send(&Clear {
                event_kind: EventKind::MethodEntry,
                request_id: request,
            })
            .await;
        return;
    };
    if !lent.held {
        return;
    }
    if lent.thread != thread {
        let call = crate::jdwp::object_reference::InvokeMethod {
            object: ObjectId(thread.0),
            thread: lent.thread,
            class,
            method: interrupt,
            arguments: Vec::new(),
            options: InvokeOptions::INVOKE_SINGLE_THREADED,
        };
        if let Err(e) = conn.send_within(&call, OWN_CALL_WITHIN).await {
            tracing::warn!(thread = lent.thread.0, error = %e, "a lent thread could not interrupt a runaway call");
        }
    }
    let _ = conn
        .send(&Resume {
            thread: lent.thread,
        })
        .await;
}

/// `Thread.interrupted()`, which [`settle`] calls.
pub async fn interrupted_method(classes: &ClassCache) -> Option<(ReferenceTypeId, MethodId)> {
    thread_method(classes, "interrupted", "()Z").await
}

/// Delivers, inside a call of ours on `thread` (suspended by its event
/// again), an interrupt or a `Stop` the JDWP agent still holds back, and
/// clears the interrupt flag: `Thread.interrupted()` with a single step
/// armed, so the agent's pending work runs inside it.
pub async fn settle(
    conn: &ConnectionHandle,
    runaways: &Runaways,
    interrupted: Option<(ReferenceTypeId, MethodId)>,
    thread: ThreadId,
) {
    let Some((class, interrupted)) = interrupted else {
        return;
    };
    let mut step = runaways
        .markers()
        .expect(EventKind::SingleStep, Some(thread));
    let request = conn.send(&step_marker(thread)).await.ok();
    if let Some(r) = request {
        step.bind(r);
    }
    let call = crate::jdwp::class_type::InvokeMethod {
        class,
        thread,
        method: interrupted,
        arguments: Vec::new(),
        options: InvokeOptions::INVOKE_SINGLE_THREADED,
    };
    // A held-back `Stop` ends the first call with the `Error`; the next
    // one clears the flag.
    for _ in 0..3 {
        match conn.send_within(&call, OWN_CALL_WITHIN).await {
            Ok(r) if r.exception.id.0 != 0 => continue,
            _ => break,
        }
    }
    if let Some(r) = request
        && !step.done()
    {
        let _ = conn.send(&clear_step(r)).await;
    }
}

/// A one-shot single step on `thread` that suspends nothing.
fn step_marker(thread: ThreadId) -> Set {
    Set {
        event_kind: EventKind::SingleStep,
        suspend_policy: SuspendPolicy::None,
        modifiers: vec![
            Modifier::Count { count: 1 },
            Modifier::Step {
                thread,
                size: StepSize::Min,
                depth: StepDepth::Into,
            },
        ],
    }
}

fn clear_step(request: crate::jdwp::RequestId) -> Clear {
    Clear {
        event_kind: EventKind::SingleStep,
        request_id: request,
    }
}

/// A method of `java.lang.Thread` by name and signature.
async fn thread_method(
    classes: &ClassCache,
    name: &str,
    sig: &str,
) -> Option<(ReferenceTypeId, MethodId)> {
    let class = classes.by_name("java.lang.Thread").await.ok()?.first()?.id;
    let m = classes
        .methods(class)
        .await
        .ok()?
        .iter()
        .find(|m| m.name == name && m.signature == sig)?
        .id;
    Some((class, m))
}
