//! One composite, handled as a whole. Its events are routed to stop points
//! through the registry's table; a composite carries one suspend policy,
//! and that decides the path:
//!
//! - **NONE**: nothing is held. Suspension-free traces record what the
//!   event carries, inline.
//! - **EVENT_THREAD**: only the hit thread is held. A capture task (at most
//!   `CAPTURE_WINDOW` in flight) filters the hits (method names, monitor
//!   durations, counts, conditions, budgets), reads frames and locals in one
//!   pipelined burst with the resume queued right behind them (the JVM
//!   answers in order, so the reads complete before the thread runs), and
//!   escalates to a VM suspend only for a suspending hit that passed.
//! - **ALL**: every thread is held for a suspending stop point; traces at
//!   the same location are captured and counted as overridden.
//!
//! Every path releases what only we hold: a hit over budget, filtered out,
//! for a cleared request or failing to read is still resumed.
//!
//! A hit flows one way: routed here, filtered by `decide`, planned by
//! `plan` (decisions from data alone), captured by `held`, and written
//! down by `record`; `details` renders what an event itself carries. The
//! types they share are one floor down (`events::hit`, `events::ctx`), so
//! no step imports one that imports it back.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tracing::Instrument;

mod decide;
mod details;
mod guard;
mod held;
mod land;
mod plan;
mod record;
mod stack;

use decide::decide;
use details::event_details;
use held::held;
use plan::Sharing;

use super::ctx::Ctx;
use super::hit::{Decision, Member, detail_len};
use super::log::TraceRecord;
use crate::connection::requests::Known;
use crate::jdwp::{Composite, Event, RequestId, SuspendPolicy, TaggedTypeId, ThreadId};
use crate::model::recent::{DroppedHold, RecentEvent};
use crate::model::stop_point::{LocalsChoice, Target};
use crate::stop_points::StopPointsMsg;
use crate::stop_points::routes::{Lookup, RequestKey, Route, Routes, key_of};

/// Handles one composite.
pub async fn composite(ctx: &Arc<Ctx>, composite: Composite, received: Instant) {
    // The marker requests of a cancel are its own (`jvm::invoke::markers`):
    // taken out before anything records or routes them.
    let claim = ctx.classes.runaways().markers().claim(composite);
    if let Some(thread) = claim.release {
        release(ctx, SuspendPolicy::EventThread, thread).await;
    }
    let Some(composite) = claim.rest else {
        return;
    };
    // So are the steps out of a suspending probe's trap (`land`).
    let Some(composite) = ctx.landings.claim(composite) else {
        return;
    };
    let routes = settled_routes(ctx, &composite).await;
    let policy = composite.suspend_policy;
    let strays = strays(ctx, &routes, &composite).await;
    // Hits of our own that hold at most their thread, which we release
    // ourselves (traces, and stop points checked on the hit thread first)
    // concern nobody else: recording them would flush the session's
    // recent-events log under a storm and tell the Watchdog that the JVM
    // may be frozen, sending it to count suspended threads on every tick.
    // A hit that escalates is recorded then, as the VM suspension it
    // becomes. Everything else is recorded before it is handled.
    // A composite of strays alone is released below and noted as such:
    // telling the ledger it suspended something would be a lie a moment
    // later.
    let recorded =
        !only_our_hits(&routes, &composite) && !only_strays(&routes, &strays, &composite);
    if recorded {
        ctx.session.record_composite(&composite);
    }
    let thread = composite.events.iter().find_map(Event::thread);
    let stray_events: Vec<Event> = composite
        .events
        .iter()
        .filter(|e| strays.contains(&e.request_id()))
        .cloned()
        .collect();
    let mut routed = route(ctx, &routes, &strays, composite.events);
    if routed.releases_strays(policy) {
        release_strays(ctx, policy, thread, stray_events).await;
        return;
    }
    let Some(thread) = thread else {
        return;
    };
    let sharing = Sharing {
        ours_only: routed.foreign == 0,
        recorded,
    };
    if !routed.prepared.is_empty() {
        let held = routed.hands_over_hold(policy);
        let sent = ctx
            .stops
            .actor()
            .send_message(StopPointsMsg::ClassPrepared {
                events: std::mem::take(&mut routed.prepared),
                thread,
                held,
            });
        if held {
            if sent.is_err() {
                release(ctx, policy, thread).await;
            }
            return;
        }
    }
    if routed.members.is_empty() {
        if routed.releases_unrouted(policy) {
            release(ctx, policy, thread).await;
        }
        return;
    }
    if policy == SuspendPolicy::None {
        free(ctx, routed.members, thread, received).await;
        return;
    }
    spawn_capture(ctx, routed.members, thread, policy, sharing, received).await;
}

/// The route table as of this composite. Read the arming flag before the
/// table: if no arm is open now, any request of ours that could have
/// produced this event is published; while one is, an event the table
/// does not know yet waits for the arm to settle.
async fn settled_routes(ctx: &Ctx, composite: &Composite) -> Arc<Routes> {
    let table = ctx.stops.table().clone();
    let arming = table.is_arming();
    let mut routes = table.load();
    if arming
        && composite
            .events
            .iter()
            .any(|e| matches!(routes.lookup(&key_of(e)), Lookup::Foreign))
    {
        table.settled().await;
        routes = table.load();
    }
    routes
}

/// The request ids of a suspending composite's events that nobody in this
/// session has: no stop point's (live or retired), and no request this
/// connection set and has not cleared (a step, the launcher's start-up
/// watch). Such an event's hold is ours to release, or nobody's.
async fn strays(ctx: &Ctx, routes: &Routes, composite: &Composite) -> Vec<RequestId> {
    let mut strays = Vec::new();
    if composite.suspend_policy == SuspendPolicy::None {
        return strays;
    }
    let book = &ctx.conn.shared().requests;
    for e in &composite.events {
        let id = e.request_id();
        if matches!(routes.lookup(&key_of(e)), Lookup::Foreign)
            && !strays.contains(&id)
            && book.known(id, SET_REPLY_PATIENCE).await == Known::Unknown
        {
            strays.push(id);
        }
    }
    strays
}

/// How long a question about an unknown request id waits for the
/// `EventRequest.Set` replies in flight (the JVM may send a request's
/// first event before its reply): they take milliseconds.
const SET_REPLY_PATIENCE: Duration = Duration::from_secs(2);

/// Whether every event of a composite is a stray or of a cleared stop
/// point, with at least one stray (see `composite`).
fn only_strays(routes: &Routes, strays: &[RequestId], composite: &Composite) -> bool {
    !strays.is_empty()
        && composite.events.iter().all(|e| {
            strays.contains(&e.request_id()) || matches!(routes.lookup(&key_of(e)), Lookup::Retired)
        })
}

/// Whether every event of a composite is a hit of our own holding at
/// most its thread (see `composite` for why those go unrecorded).
fn only_our_hits(routes: &Routes, composite: &Composite) -> bool {
    composite.suspend_policy != SuspendPolicy::All
        && composite
            .events
            .iter()
            .all(|e| matches!(routes.lookup(&key_of(e)), Lookup::Live(Route::Hit { .. })))
}

/// A composite's events, sorted by where the route table sends them.
#[derive(Default)]
struct Routed {
    /// Hits of live stop points.
    members: Vec<Member>,
    /// Class loads a live watch waits for.
    prepared: Vec<(RequestKey, TaggedTypeId, String)>,
    /// Events of requests already cleared.
    retired: usize,
    /// Events of requests another part of this session set (a step, the
    /// launcher's start-up watch): their holds are their owners'.
    foreign: usize,
    /// Events of requests nobody in this session has.
    stray: usize,
}

impl Routed {
    /// Whether the class loads' announcement hands the hold over to the
    /// stop points actor, which releases the thread once it has armed:
    /// only when the composite holds something, and nothing but these
    /// loads (nobody else's request, no hit) needs it held.
    fn hands_over_hold(&self, policy: SuspendPolicy) -> bool {
        policy != SuspendPolicy::None && self.foreign == 0 && self.members.is_empty()
    }

    /// Whether a composite with no hit is released here: it held
    /// something for requests of ours that were cleared since.
    fn releases_unrouted(&self, policy: SuspendPolicy) -> bool {
        self.retired > 0 && self.foreign == 0 && policy != SuspendPolicy::None
    }

    /// Whether a composite is released here as one of strays: it holds
    /// something, and holds it for nobody (no live hit, no class load a
    /// watch waits for, no other owner).
    fn releases_strays(&self, policy: SuspendPolicy) -> bool {
        self.stray > 0
            && self.members.is_empty()
            && self.prepared.is_empty()
            && self.foreign == 0
            && policy != SuspendPolicy::None
    }
}

/// Sorts a composite's events by route, telling the stop points actor of
/// each fired request the JVM counted (and so deleted).
fn route(ctx: &Ctx, routes: &Routes, strays: &[RequestId], events: Vec<Event>) -> Routed {
    let mut routed = Routed::default();
    for event in events {
        let key = key_of(&event);
        match routes.lookup(&key) {
            Lookup::Live(Route::Hit { target, jvm_count }) => {
                if *jvm_count {
                    ctx.conn.shared().requests.spent(key.id);
                    let _ = ctx.stops.actor().send_message(StopPointsMsg::Fired(key));
                }
                routed.members.push(Member {
                    event,
                    target: target.clone(),
                });
            }
            Lookup::Live(Route::Watch { .. } | Route::FamilyWatch { .. }) => {
                if let Event::ClassPrepare {
                    ref_type,
                    signature,
                    ..
                } = event
                {
                    routed.prepared.push((key, ref_type, signature));
                }
            }
            Lookup::Retired => routed.retired += 1,
            Lookup::Foreign if strays.contains(&key.id) => routed.stray += 1,
            Lookup::Foreign => routed.foreign += 1,
        }
    }
    routed
}

/// Hands held hits to a capture task. A bounded window of captures is in
/// flight: when it is full this waits, and the JVM's threads wait at their
/// hits (backpressure), never lost.
async fn spawn_capture(
    ctx: &Arc<Ctx>,
    members: Vec<Member>,
    thread: ThreadId,
    policy: SuspendPolicy,
    sharing: Sharing,
    received: Instant,
) {
    // Counted until the thread is released: a verified resume awaits it.
    let in_flight = ctx.session.bus.capture_started();
    let Ok(permit) = ctx.window.clone().acquire_owned().await else {
        release(ctx, policy, thread).await;
        return;
    };
    // The frames most hits need are asked for now, before the capture task
    // is even scheduled: the round trip overlaps the hand-over.
    let early = early_frames(&members).map(|n| (n, ctx.frames_request(thread, n)));
    let ctx = ctx.clone();
    // The capture stays inside the composite's root span, so its round
    // trips (and the release) are children of `jvm.event …`, which also
    // carries what the capture found: one span per hit, not two (a traced
    // hot line makes thousands a second).
    let span = tracing::Span::current();
    if !span.is_disabled() {
        span.record("jvmscope.stop_points", stop_ids(&members));
    }
    // Boxed: tokio moves a spawned future several times, and each move
    // copies the whole of its largest state.
    tokio::spawn(
        Box::pin(async move {
            held(&ctx, thread, policy, members, sharing, received, early).await;
            drop(permit);
            drop(in_flight);
        })
        .instrument(span),
    );
}

/// The stop point ids of a composite's members, for span attributes.
fn stop_ids(members: &[Member]) -> String {
    let mut ids: Vec<&str> = members.iter().map(|m| m.target.id.0.as_str()).collect();
    ids.dedup();
    ids.join(",")
}

/// Frames a capture will read (callers plus the hit frame), if any.
fn early_frames(members: &[Member]) -> Option<usize> {
    members
        .iter()
        .filter_map(|m| m.target.spec.trace())
        .filter(|t| t.frames > 0 || t.locals != LocalsChoice::None || !t.exprs.is_empty())
        .map(|t| t.frames as usize + 1)
        .max()
}

/// Releases what a composite suspended.
async fn release(ctx: &Ctx, policy: SuspendPolicy, thread: ThreadId) {
    match policy {
        SuspendPolicy::None => {}
        SuspendPolicy::EventThread => {
            let _ = ctx
                .conn
                .send(&crate::jdwp::thread_reference::Resume { thread })
                .await;
        }
        SuspendPolicy::All => {
            let _ = ctx.conn.send(&crate::jdwp::virtual_machine::Resume).await;
        }
    }
}

/// Releases a composite held for nobody, at once and as its policy held
/// it (one `VirtualMachine.Resume` for ALL, its thread's resume for
/// EVENT_THREAD), and notes each stray event with what was released.
async fn release_strays(
    ctx: &Ctx,
    policy: SuspendPolicy,
    thread: Option<ThreadId>,
    events: Vec<Event>,
) {
    let released = match (policy, thread) {
        (SuspendPolicy::None, _) => DroppedHold::Nothing,
        (SuspendPolicy::All, _) => {
            ctx.session.bus.resume_started();
            resumed(
                ctx.conn.send(&crate::jdwp::virtual_machine::Resume).await,
                DroppedHold::Vm,
            )
        }
        (SuspendPolicy::EventThread, Some(thread)) => resumed(
            ctx.conn
                .send(&crate::jdwp::thread_reference::Resume { thread })
                .await,
            DroppedHold::Thread(thread),
        ),
        // An EVENT_THREAD event without a thread holds nothing JDWP
        // could name; the Watchdog bounds whatever it is.
        (SuspendPolicy::EventThread, None) => {
            ctx.session.session.note_unaccounted();
            DroppedHold::LeftToWatchdog
        }
    };
    for event in events {
        tracing::warn!(
            kind = ?event.kind(),
            request = event.request_id().0,
            ?policy,
            ?released,
            "released an event no request of this session asked for"
        );
        ctx.session.note_event(RecentEvent::Stray {
            kind: event.kind(),
            request: event.request_id(),
            thread: event.thread(),
            suspend: policy,
            released: released.clone(),
        });
    }
}

fn resumed<T, E: std::fmt::Display>(sent: Result<T, E>, done: DroppedHold) -> DroppedHold {
    match sent {
        Ok(_) => done,
        Err(e) => DroppedHold::ResumeFailed(e.to_string()),
    }
}

/// How far behind the event stream EventDispatch may fall before it stops
/// recording suspension-free hits (it still counts them): nothing is held
/// for them, so shedding them costs no thread, and it lets the backlog
/// drain instead of growing.
const SHED_AFTER: Duration = Duration::from_millis(500);

/// The NONE path: nothing is held, so nothing is read that needs a
/// suspended thread; the record is what the event carries.
async fn free(ctx: &Ctx, members: Vec<Member>, thread: ThreadId, received: Instant) {
    let lagging = received.elapsed() > SHED_AFTER;
    for m in members {
        let t = &m.target;
        if lagging && t.count_here.is_none() && !matches!(t.spec.target, Target::Monitor(_)) {
            t.stats.hit(received);
            t.stats.shed.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        let Decision::Trace(ts, mut extra) = decide(ctx, &m, thread, received, false).await else {
            continue;
        };
        extra.extend(event_details(ctx, &m.event, None, detail_len(&ts)).await);
        let location = match m.event.location() {
            Some(l) => ctx.label(&l).await,
            None => "?".into(),
        };
        let thread_name = ctx.thread_name(thread).await;
        ctx.push_trace(
            &m.target.id,
            &m.event,
            TraceRecord {
                seq: 0,
                at: received,
                stop: m.target.name.clone(),
                thread,
                thread_name,
                location,
                callers: Vec::new(),
                locals: Vec::new(),
                locals_note: None,
                details: extra,
                overridden: false,
            },
        );
        m.target.stats.captured_in(Duration::ZERO);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_loads_take_the_hold_only_when_nothing_else_needs_it() {
        let alone = Routed::default();
        assert!(alone.hands_over_hold(SuspendPolicy::EventThread));
        assert!(alone.hands_over_hold(SuspendPolicy::All));
        assert!(!alone.hands_over_hold(SuspendPolicy::None));
        let shared = Routed {
            foreign: 1,
            ..Routed::default()
        };
        assert!(!shared.hands_over_hold(SuspendPolicy::EventThread));
    }

    #[test]
    fn cleared_requests_are_released_unless_shared() {
        let cleared = Routed {
            retired: 2,
            ..Routed::default()
        };
        assert!(cleared.releases_unrouted(SuspendPolicy::EventThread));
        assert!(!cleared.releases_unrouted(SuspendPolicy::None));
        assert!(!Routed::default().releases_unrouted(SuspendPolicy::All));
        let shared = Routed {
            retired: 1,
            foreign: 1,
            ..Routed::default()
        };
        assert!(!shared.releases_unrouted(SuspendPolicy::All));
    }

    #[test]
    fn strays_are_released_unless_someone_else_needs_the_hold() {
        let strays = Routed {
            stray: 1,
            retired: 1,
            ..Routed::default()
        };
        assert!(strays.releases_strays(SuspendPolicy::All));
        assert!(strays.releases_strays(SuspendPolicy::EventThread));
        assert!(!strays.releases_strays(SuspendPolicy::None));
        let stepping = Routed {
            stray: 1,
            foreign: 1,
            ..Routed::default()
        };
        assert!(!stepping.releases_strays(SuspendPolicy::All));
        assert!(!Routed::default().releases_strays(SuspendPolicy::All));
    }
}
