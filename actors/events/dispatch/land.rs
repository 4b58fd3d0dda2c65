//! A suspending probe's hit arrives in its trap: a breakpoint in an empty
//! method of the probe's helper, which the helper calls only for a hit
//! whose condition passed in the JVM. Before anything is read or reported
//! the hit thread steps back out (trap, the helper's record method, its
//! entry point) into the probed method, so the agent finds the thread
//! where the stop point is, with the method's own frame on top and its
//! locals as they were at the site.
//!
//! Each step out is a one-shot JDWP step request on that thread alone;
//! its event is claimed here before anything routes or records it, so
//! nobody else sees the steps.

use std::time::Duration;

use crate::actors::events::ctx::Ctx;
use crate::actors::events::hit::Member;
use crate::jdwp::event_request::{Clear, Set};
use crate::jdwp::thread_reference::Resume;
use crate::jdwp::{
    Event, EventKind, Location, Modifier, StepDepth, StepSize, SuspendPolicy, ThreadId,
};

/// Frames between the trap and the probed method: the trap, the
/// helper's record method and its entry point.
const HELPER_FRAMES: usize = 3;

/// How long one step out may take. The thread runs a few helper
/// instructions, unless the VM is suspended meanwhile (another stop held
/// for the agent): then the landing waits, and past this the step is
/// given up and the thread runs on, its hit lost rather than held.
const STEP_WAIT: Duration = Duration::from_secs(30);

/// Steps a trap's hit thread out into the probed method and gives the
/// members the location it landed at. `None` when it could not land (the
/// thread died, the JVM went, the step timed out): the thread is not held
/// by this hit any more, and there is nothing to report.
pub(super) async fn land(ctx: &Ctx, thread: ThreadId, members: Vec<Member>) -> Option<Vec<Member>> {
    let Some(helper) = members
        .iter()
        .find(|m| m.target.trap)
        .and_then(|m| m.event.location())
        .map(|l| l.class)
    else {
        return Some(members);
    };
    let mut at = None;
    for _ in 0..HELPER_FRAMES + 1 {
        let landed = step_out(ctx, thread).await?;
        if landed.class != helper {
            at = Some(landed);
            break;
        }
    }
    let at = at?;
    Some(
        members
            .into_iter()
            .map(|m| Member {
                event: match m.event {
                    Event::Breakpoint { request_id, .. } if m.target.trap => Event::Breakpoint {
                        request_id,
                        thread,
                        location: at,
                    },
                    other => other,
                },
                target: m.target,
            })
            .collect(),
    )
}

/// One step out of the top frame of a held thread: where it landed (held
/// again by the step's event).
async fn step_out(ctx: &Ctx, thread: ThreadId) -> Option<Location> {
    let request = ctx
        .conn
        .send(&Set {
            event_kind: EventKind::SingleStep,
            suspend_policy: SuspendPolicy::EventThread,
            modifiers: vec![
                Modifier::Step {
                    thread,
                    size: StepSize::Min,
                    depth: StepDepth::Out,
                },
                Modifier::Count { count: 1 },
            ],
        })
        .await
        .ok()?;
    let landed = ctx.landings.expect(request);
    let resumed = ctx.conn.send(&Resume { thread }).await;
    let at = match resumed {
        Ok(()) => tokio::time::timeout(STEP_WAIT, landed)
            .await
            .ok()
            .and_then(Result::ok),
        Err(_) => None,
    };
    if at.is_none() {
        ctx.landings.forget(request);
        let _ = ctx
            .conn
            .send(&Clear {
                event_kind: EventKind::SingleStep,
                request_id: request,
            })
            .await;
    }
    at
}
