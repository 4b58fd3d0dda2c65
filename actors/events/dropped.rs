//! A composite the decoder refused: its events are lost, but what it
//! suspended is not left held. The policy is its first byte and the thread
//! of an `EventThread` composite is usually readable (`Composite::salvage`);
//! what was released is recorded among the session's recent events.
//!
//! An `EventThread` composite whose thread cannot be read is the hard case:
//! one `VirtualMachine.Resume` lowers every suspended thread's count by one,
//! so it frees exactly the event's thread only when nothing else is
//! suspended. It is sent only when the ledger knows of no suspension and no
//! held capture is in flight; otherwise the suspension is noted so the
//! Watchdog bounds it, because a VM resume would release threads the agent
//! or a capture still holds. (A composite queued behind this one may still
//! lose its hold to that resume; its own release then finds its thread
//! running, which costs a capture, never a frozen JVM.)

use crate::connection::ConnectionHandle;
use crate::jdwp::{Composite, Salvage, SuspendPolicy, ThreadId};
use crate::link::SessionLink;
use crate::model::recent::{DroppedHold, RecentEvent};

/// What to resume for a refused composite, from what could be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    Nothing,
    Thread(ThreadId),
    Vm,
    /// A VM resume, if nothing else is suspended.
    VmIfAlone,
    UnknownPolicy,
}

fn plan(s: Salvage) -> Plan {
    match (s.suspend_policy, s.thread) {
        (None, _) => Plan::UnknownPolicy,
        (Some(SuspendPolicy::None), _) => Plan::Nothing,
        (Some(SuspendPolicy::All), _) => Plan::Vm,
        (Some(SuspendPolicy::EventThread), Some(t)) => Plan::Thread(t),
        (Some(SuspendPolicy::EventThread), None) => Plan::VmIfAlone,
    }
}

/// Releases what the refused composite `data` suspended and records it.
pub async fn release(conn: &ConnectionHandle, session: &SessionLink, data: &[u8], error: String) {
    let salvage = Composite::salvage(data, conn.shared().id_sizes());
    let outcome = match plan(salvage) {
        Plan::Nothing => DroppedHold::Nothing,
        Plan::UnknownPolicy => {
            session.session.note_unaccounted();
            DroppedHold::UnknownPolicy
        }
        Plan::Thread(thread) => resumed(
            conn.send(&crate::jdwp::thread_reference::Resume { thread })
                .await,
            DroppedHold::Thread(thread),
        ),
        Plan::Vm => vm_resume(conn, session).await,
        Plan::VmIfAlone => {
            let view = session.session.view().await;
            let captures = *session.bus.watch_captures().borrow();
            let alone = view.event_threads.is_empty()
                && view.held.is_empty()
                && !view.suspended_by_us
                && captures == 0;
            if alone {
                vm_resume(conn, session).await
            } else {
                session.session.note_unaccounted();
                DroppedHold::LeftToWatchdog
            }
        }
    };
    tracing::warn!(%error, ?outcome, "undecodable event composite");
    session.note_event(RecentEvent::Undecodable {
        error,
        policy: salvage.suspend_policy,
        released: outcome,
    });
}

async fn vm_resume(conn: &ConnectionHandle, session: &SessionLink) -> DroppedHold {
    session.bus.resume_started();
    resumed(
        conn.send(&crate::jdwp::virtual_machine::Resume).await,
        DroppedHold::Vm,
    )
}

fn resumed<T, E: std::fmt::Display>(sent: Result<T, E>, done: DroppedHold) -> DroppedHold {
    match sent {
        Ok(_) => done,
        Err(e) => DroppedHold::ResumeFailed(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_decides_what_is_resumed() {
        let check = |policy: Option<SuspendPolicy>, thread: Option<u64>, expect: Plan| {
            let s = Salvage {
                suspend_policy: policy,
                thread: thread.map(ThreadId),
            };
            assert_eq!(plan(s), expect, "{s:?}");
        };
        check(Some(SuspendPolicy::None), Some(3), Plan::Nothing);
        check(Some(SuspendPolicy::All), None, Plan::Vm);
        check(Some(SuspendPolicy::All), Some(3), Plan::Vm);
        check(
            Some(SuspendPolicy::EventThread),
            Some(3),
            Plan::Thread(ThreadId(3)),
        );
        check(Some(SuspendPolicy::EventThread), None, Plan::VmIfAlone);
        check(None, Some(3), Plan::UnknownPolicy);
    }
}
