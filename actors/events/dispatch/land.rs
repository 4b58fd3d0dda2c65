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
//!
//! An exit probe's trap is called with the method's result still in the
//! helper's frames: before stepping out, the value returned (or the
//! exception thrown) is read from the helper's `exit` (`threw`) frame, so
//! the hit reports it as a wire method-exit stop does.

use std::time::Duration;

use crate::events::ctx::Ctx;
use crate::events::hit::{Details, Member};
use crate::jdwp::event_request::{Clear, Set};
use crate::jdwp::stack_frame::{GetValues, SlotRequest};
use crate::jdwp::thread_reference::Resume;
use crate::jdwp::{
    Event, EventKind, Location, Modifier, StepDepth, StepSize, SuspendPolicy, Tag, TaggedObjectId,
    ThreadId, Value,
};
use crate::model::stop_point::Target;

/// Frames between the trap and the probed method: the trap, the
/// helper's record method and its entry point.
const HELPER_FRAMES: usize = 3;

/// How long one step out may take. The thread runs a few helper
/// instructions, unless the VM is suspended meanwhile (another stop held
/// for the agent): then the landing waits, and past this the step is
/// given up and the thread runs on, its hit lost rather than held.
const STEP_WAIT: Duration = Duration::from_secs(30);

/// The members of a composite once its trap's thread has landed, and
/// what the trap's hits carry beyond their event (an exit probe's thrown
/// exception).
pub(super) struct Landed {
    pub members: Vec<Member>,
    pub carried: Details,
}

/// How an exit probe's call ended, read from the helper's frames.
enum Ended {
    Returned(Value),
    Threw(TaggedObjectId),
}

/// Steps a trap's hit thread out into the probed method and gives the
/// members the location it landed at. `None` when it could not land (the
/// thread died, the JVM went, the step timed out): the thread is not held
/// by this hit any more, and there is nothing to report.
pub(super) async fn land(ctx: &Ctx, thread: ThreadId, members: Vec<Member>) -> Option<Landed> {
    let Some(helper) = members
        .iter()
        .find(|m| m.target.trap)
        .and_then(|m| m.event.location())
        .map(|l| l.class)
    else {
        return Some(Landed {
            members,
            carried: Vec::new(),
        });
    };
    let exits = members
        .iter()
        .any(|m| m.target.trap && matches!(m.target.spec.target, Target::MethodExit(_)));
    let ended = if exits {
        exit_of(ctx, thread).await
    } else {
        None
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
    let mut carried = Vec::new();
    if let Some(Ended::Threw(exception)) = &ended {
        let (ty, message) = ctx.exception(*exception, 200).await;
        carried.push(("threw".to_string(), ty));
        carried.extend(message.map(|m| ("message".to_string(), m)));
    }
    let members = members
        .into_iter()
        .map(|m| Member {
            event: match m.event {
                Event::Breakpoint { request_id, .. } if m.target.trap => {
                    landed_event(request_id, thread, at, &m, ended.as_ref())
                }
                other => other,
            },
            target: m.target,
        })
        .collect();
    Some(Landed { members, carried })
}

/// The event a trap's hit is reported as, at the landing location: an
/// exit probe's is a method exit (with the value returned, when it
/// returned), any other a breakpoint.
fn landed_event(
    request_id: crate::jdwp::RequestId,
    thread: ThreadId,
    location: Location,
    m: &Member,
    ended: Option<&Ended>,
) -> Event {
    if !matches!(m.target.spec.target, Target::MethodExit(_)) {
        return Event::Breakpoint {
            request_id,
            thread,
            location,
        };
    }
    match ended {
        Some(Ended::Returned(value)) => Event::MethodExitWithReturnValue {
            request_id,
            thread,
            location,
            value: *value,
        },
        _ => Event::MethodExit {
            request_id,
            thread,
            location,
        },
    }
}

/// How the probed call ended, read while the thread is still in the
/// trap: the helper's `exit(value, t0, …)` or `threw(exception, t0, …)`
/// frame holds it in slot 0 (the helper's methods are static). `None`
/// when it cannot be read; the hit is still reported, without it.
async fn exit_of(ctx: &Ctx, thread: ThreadId) -> Option<Ended> {
    let frames = ctx.frames(thread, HELPER_FRAMES + 1).await.ok()?;
    let (entry, probed) = (frames.get(HELPER_FRAMES - 1)?, frames.get(HELPER_FRAMES)?);
    let classes = &ctx.classes;
    let name = classes
        .method(entry.location.class, entry.location.method)
        .await
        .ok()??
        .name;
    let read = |sig_byte: Tag| GetValues {
        thread,
        frame: entry.frame_id,
        slots: vec![SlotRequest { slot: 0, sig_byte }],
    };
    match name.as_str() {
        "threw" => {
            let values = ctx.conn.send(&read(Tag::Object)).await.ok()?;
            match values.first()? {
                Value::Object { tag, id } if id.0 != 0 => {
                    Some(Ended::Threw(TaggedObjectId { tag: *tag, id: *id }))
                }
                _ => None,
            }
        }
        "exit" => {
            let signature = classes
                .method(probed.location.class, probed.location.method)
                .await
                .ok()??
                .signature;
            let returns = signature.rsplit(')').next()?;
            if returns == "V" {
                return Some(Ended::Returned(Value::Void));
            }
            let values = ctx
                .conn
                .send(&read(Tag::from_signature(returns)))
                .await
                .ok()?;
            values.into_iter().next().map(Ended::Returned)
        }
        _ => None,
    }
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
