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
//! `decide` is the filter every hit goes through first; `details` renders
//! what an event itself carries.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use futures::future::join_all;
use tracing::Instrument;
use tracing::field::Empty;

mod decide;
mod details;

use decide::decide;
use details::event_details;
pub use details::kind_label;

use super::capture::{Ctx, Slot};
use super::condition;
use super::log::{HitEvent, TraceRecord};
use crate::actors::stop_points::StopPointsMsg;
use crate::actors::stop_points::routes::{Lookup, Route, Target as RouteTarget, key_of};
use crate::jdwp::stack_frame::{GetValues, ThisObject};
use crate::jdwp::{Composite, Event, SuspendPolicy, ThreadId, Value};
use crate::model::stop_point::{LocalsChoice, Target, TraceSpec};

/// Rendered key/value details of a hit.
type Details = Vec<(String, String)>;

/// A hit to snapshot, with its trace settings and details so far.
type Traced = (Member, TraceSpec, Details);

/// One event routed to one stop point.
pub struct Member {
    pub event: Event,
    pub target: Arc<RouteTarget>,
}

/// What a hit comes to once filtered.
enum Decision {
    /// Counted, nothing more (filtered, over budget, condition false).
    Skip,
    /// Snapshot it.
    Trace(TraceSpec, Vec<(String, String)>),
    /// Report it to the agent (a suspending stop point).
    Report(Vec<(String, String)>),
}

/// Handles one composite.
pub async fn composite(ctx: &Arc<Ctx>, composite: Composite, received: Instant) {
    let table = ctx.stops.table().clone();
    // Read the arming flag before the table: if no arm is open now, any
    // request of ours that could have produced this event is published.
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
    let policy = composite.suspend_policy;
    // Hits of our own that hold at most their thread, which we release
    // ourselves (traces, and stop points checked on the hit thread first)
    // concern nobody else: recording them would flush the session's
    // recent-events log under a storm and tell the Watchdog that the JVM
    // may be frozen, sending it to count suspended threads on every tick.
    // A hit that escalates is recorded then, as the VM suspension it
    // becomes. Everything else is recorded before it is handled.
    let only_our_hits = policy != SuspendPolicy::All
        && composite
            .events
            .iter()
            .all(|e| matches!(routes.lookup(&key_of(e)), Lookup::Live(Route::Hit { .. })));
    if !only_our_hits {
        ctx.session.record_composite(&composite);
    }
    let thread = composite.events.iter().find_map(Event::thread);
    let mut members = Vec::new();
    let mut prepared = Vec::new();
    let mut retired = 0usize;
    let mut foreign = 0usize;
    for event in composite.events {
        let key = key_of(&event);
        match routes.lookup(&key) {
            Lookup::Live(Route::Hit { target, jvm_count }) => {
                if *jvm_count {
                    let _ = ctx.stops.actor().send_message(StopPointsMsg::Fired(key));
                }
                members.push(Member {
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
                    prepared.push((key, ref_type, signature));
                }
            }
            Lookup::Retired => retired += 1,
            Lookup::Foreign => foreign += 1,
        }
    }
    let Some(thread) = thread else {
        return;
    };
    let ours_only = foreign == 0;
    if !prepared.is_empty() {
        let held = policy != SuspendPolicy::None && ours_only && members.is_empty();
        let sent = ctx
            .stops
            .actor()
            .send_message(StopPointsMsg::ClassPrepared {
                events: prepared,
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
    if members.is_empty() {
        if retired > 0 && ours_only && policy != SuspendPolicy::None {
            release(ctx, policy, thread).await;
        }
        return;
    }
    if policy == SuspendPolicy::None {
        free(ctx, members, thread, received).await;
        return;
    }
    // A bounded window of captures in flight: when it is full this waits,
    // and the JVM's threads wait at their hits (backpressure), never lost.
    let Ok(permit) = ctx.window.clone().acquire_owned().await else {
        release(ctx, policy, thread).await;
        return;
    };
    // The frames most hits need are asked for now, before the capture task
    // is even scheduled: the round trip overlaps the hand-over.
    let early = early_frames(&members).map(|n| (n, ctx.frames_request(thread, n)));
    let ctx = ctx.clone();
    // The capture stays inside the composite's root span, so its round
    // trips (and the release) are children of `jvm.event …`.
    let span = tracing::info_span!(
        "jvm.capture",
        "otel.name" = "jvm.capture",
        "jvmscope.stop_points" = Empty,
        "jvm.capture.traces" = Empty,
        "jvm.capture.reports" = Empty,
    );
    if !span.is_disabled() {
        span.record("jvmscope.stop_points", stop_ids(&members));
    }
    tokio::spawn(
        async move {
            held(&ctx, thread, policy, members, ours_only, received, early).await;
            drop(permit);
        }
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

fn finish(ctx: &Ctx, target: &RouteTarget, reason: String) {
    let _ = ctx
        .stops
        .actor()
        .send_message(StopPointsMsg::Finished(target.id.clone(), reason));
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

fn detail_len(ts: &TraceSpec) -> usize {
    ts.max_length.max(200)
}

/// What the union of several members' locals choices reads.
fn union(choices: &[&LocalsChoice]) -> LocalsChoice {
    if choices.iter().any(|c| **c == LocalsChoice::All) {
        return LocalsChoice::All;
    }
    let mut names: Vec<String> = choices
        .iter()
        .filter_map(|c| match c {
            LocalsChoice::Only(n) => Some(n.clone()),
            _ => None,
        })
        .flatten()
        .collect();
    names.sort();
    names.dedup();
    if names.is_empty() {
        LocalsChoice::None
    } else {
        LocalsChoice::Only(names)
    }
}

/// The held path: one thread (EVENT_THREAD) or the VM (ALL) is
/// suspended for this composite.
async fn held(
    ctx: &Ctx,
    thread: ThreadId,
    policy: SuspendPolicy,
    members: Vec<Member>,
    ours_only: bool,
    received: Instant,
    early: Option<(usize, super::capture::FramesReply)>,
) {
    let mut traces: Vec<Traced> = Vec::new();
    let mut reports: Vec<(Member, Details)> = Vec::new();
    for m in members {
        match decide(ctx, &m, thread, received, true).await {
            Decision::Skip => {}
            Decision::Trace(ts, extra) => traces.push((m, ts, extra)),
            Decision::Report(extra) => reports.push((m, extra)),
        }
    }
    let span = tracing::Span::current();
    span.record("jvm.capture.traces", traces.len() as u64);
    span.record("jvm.capture.reports", reports.len() as u64);
    let overridden = policy == SuspendPolicy::All;
    if overridden {
        for (m, _, _) in &traces {
            m.target.stats.overridden.fetch_add(1, Ordering::Relaxed);
        }
    }
    // What to read while the thread is held.
    let callers = traces.iter().map(|(_, t, _)| t.frames).max().unwrap_or(0) as usize;
    let choices: Vec<&LocalsChoice> = traces.iter().map(|(_, t, _)| &t.locals).collect();
    let wanted = union(&choices);
    let need_frames = callers > 0 || wanted != LocalsChoice::None;
    let escalate = policy == SuspendPolicy::EventThread && !reports.is_empty();

    // Code run by a condition or for a helpful NPE text let the thread
    // run: the frames asked for early are stale then.
    let invoked = ctx.take_invoked(thread);
    let frames = match early {
        Some((n, reply)) if need_frames && n > callers && !invoked => {
            ctx.frames_from(thread, n, reply).await
        }
        _ if need_frames => ctx.frames(thread, callers + 1).await,
        _ => Ok(Vec::new()),
    };
    let frames = match frames {
        Ok(f) => f,
        Err(e) => {
            for (m, _, _) in &traces {
                m.target
                    .stats
                    .note_error(format!("reading frames failed: {e}"));
            }
            Vec::new()
        }
    };
    let mut slots: Vec<Slot> = Vec::new();
    let mut locals_note = None;
    if wanted != LocalsChoice::None
        && let Some(top) = frames.first()
    {
        match ctx.slots(&top.location, &wanted).await {
            Some(s) => slots = s,
            None => {
                locals_note = Some("no local variable table (compiled without -g?)".to_string())
            }
        }
    }
    // An anonymous or local class keeps the locals it captured in `val$x`
    // fields of its `this`, which only the held frame names.
    let captured = match frames.first() {
        Some(top) if wanted != LocalsChoice::None => ctx.captured_fields(top.location.class).await,
        _ => Vec::new(),
    };
    // The reads that need the thread held, queued in order; the release
    // goes right behind them.
    let values = (!slots.is_empty())
        .then(|| frames.first())
        .flatten()
        .map(|top| {
            ctx.conn.send(&GetValues {
                thread,
                frame: top.frame_id,
                slots: slots.iter().map(|s| s.request).collect(),
            })
        });
    let field_reads: Vec<_> = traces
        .iter()
        .map(|(m, _, _)| &m.event)
        .chain(reports.iter().map(|(m, _)| &m.event))
        .map(|e| match e {
            Event::FieldModification {
                ref_type,
                field,
                object,
                ..
            }
            | Event::FieldAccess {
                ref_type,
                field,
                object,
                ..
            } => Some(ctx.field_value(object.id, ref_type.id, *field)),
            _ => None,
        })
        .collect();
    let this = (!captured.is_empty())
        .then(|| frames.first())
        .flatten()
        .map(|top| {
            ctx.conn.send(&ThisObject {
                thread,
                frame: top.frame_id,
            })
        });
    // Trace expressions read the held frame (and may invoke on the hit
    // thread): evaluated before anything releases it, after the frame's own
    // reads are queued (an invocation makes its frame ids stale).
    let mut expr_results: Vec<Details> = Vec::with_capacity(traces.len());
    if traces.iter().any(|(_, t, _)| !t.exprs.is_empty()) {
        let ectx = condition::hit_context(ctx, thread, frames.first()).await;
        for (m, t, _) in &traces {
            expr_results.push(match &ectx {
                _ if t.exprs.is_empty() => Vec::new(),
                Ok(e) => condition::expressions(ctx, e, &m.event, &t.exprs, detail_len(t)).await,
                Err(err) => t
                    .exprs
                    .iter()
                    .enumerate()
                    .map(|(i, x)| (format!("expr[{i}] {x}"), format!("error: {err}")))
                    .collect(),
            });
        }
    }
    let mut expr_results = expr_results.into_iter();
    // What they invoked concerns no later hit.
    ctx.take_invoked(thread);
    let conn = &ctx.conn;
    let releasing = async {
        if escalate {
            let suspend = conn.send(&crate::jdwp::virtual_machine::Suspend);
            let resume = conn.send(&crate::jdwp::thread_reference::Resume { thread });
            let (s, r) = futures::join!(suspend, resume);
            s.map_err(|e| e.to_string())
                .and(r.map_err(|e| e.to_string()))
                .err()
        } else if !ours_only || (policy == SuspendPolicy::All && !reports.is_empty()) {
            None
        } else {
            match policy {
                SuspendPolicy::EventThread => conn
                    .send(&crate::jdwp::thread_reference::Resume { thread })
                    .await
                    .err()
                    .map(|e| e.to_string()),
                SuspendPolicy::All => conn
                    .send(&crate::jdwp::virtual_machine::Resume)
                    .await
                    .err()
                    .map(|e| e.to_string()),
                SuspendPolicy::None => None,
            }
        }
    };
    let values = async {
        match values {
            Some(v) => Some(v.await),
            None => None,
        }
    };
    let fields = join_all(field_reads.into_iter().map(|f| async move {
        match f {
            Some(f) => f.await,
            None => None,
        }
    }));
    let this = async {
        match this {
            Some(t) => t.await.ok().map(|o| o.id),
            None => None,
        }
    };
    let (values, field_values, this, release_error) =
        futures::join!(values, fields, this, releasing);
    let held_for = received.elapsed();
    if escalate && release_error.is_none() {
        // Now the VM is suspended for the agent: the session (and its
        // Watchdog) learn of it as of an event that suspended everything.
        ctx.session.record_composite(&Composite {
            suspend_policy: SuspendPolicy::All,
            events: reports.iter().map(|(m, _)| m.event.clone()).collect(),
        });
    }
    let released = !escalate && ours_only && (policy != SuspendPolicy::All || reports.is_empty());
    if released {
        // No longer a thread an event holds: nothing may be evaluated on it.
        ctx.session.forget_event_threads(Some(thread));
    }

    // The thread runs again (unless it was escalated or the VM is held):
    // render at leisure.
    let values: Vec<Value> = match values {
        Some(Ok(v)) => v,
        Some(Err(e)) => {
            locals_note = Some(format!("locals unreadable: {e}"));
            Vec::new()
        }
        None => Vec::new(),
    };
    let captured_values = match this {
        Some(this) => ctx.captured_values(this, &captured).await,
        None => Vec::new(),
    };
    let name = ctx.thread_name(thread).await;
    let caller_labels = join_all(frames.iter().skip(1).map(|f| ctx.label(&f.location))).await;
    let mut field_values = field_values.into_iter();
    for (m, ts, mut extra) in traces {
        let old = field_values.next().flatten();
        let len = detail_len(&ts);
        extra.extend(event_details(ctx, &m.event, old, len).await);
        extra.extend(expr_results.next().unwrap_or_default());
        let keep: Vec<(&Slot, &Value)> = slots
            .iter()
            .zip(values.iter())
            .filter(|(s, _)| match &ts.locals {
                LocalsChoice::All => true,
                LocalsChoice::None => false,
                LocalsChoice::Only(n) => n.contains(&s.name),
            })
            .collect();
        let rendered = ctx
            .render_all(
                &keep.iter().map(|(_, v)| **v).collect::<Vec<_>>(),
                ts.max_length,
            )
            .await;
        let mut locals: Vec<(String, String)> = keep
            .iter()
            .zip(rendered)
            .map(|((s, _), r)| (s.name.clone(), r))
            .collect();
        let outer: Vec<(&String, Value)> = captured
            .iter()
            .map(|(n, _)| n)
            .zip(captured_values.iter().copied())
            .filter(|(n, _)| match &ts.locals {
                LocalsChoice::All => true,
                LocalsChoice::None => false,
                LocalsChoice::Only(names) => names
                    .iter()
                    .any(|w| w == *n || w.strip_prefix("val$") == Some(n.as_str())),
            })
            .collect();
        let shown = ctx
            .render_all(
                &outer.iter().map(|(_, v)| *v).collect::<Vec<_>>(),
                ts.max_length,
            )
            .await;
        locals.extend(outer.iter().zip(shown).map(|((n, _), r)| ((*n).clone(), r)));
        let location = match m.event.location() {
            Some(l) => ctx.label(&l).await,
            None => "?".into(),
        };
        ctx.push_trace(
            &m.target.id,
            &m.event,
            TraceRecord {
                seq: 0,
                at: received,
                stop: m.target.name.clone(),
                thread,
                thread_name: name.clone(),
                location,
                callers: caller_labels
                    .iter()
                    .take(ts.frames as usize)
                    .cloned()
                    .collect(),
                locals,
                locals_note: if ts.locals == LocalsChoice::None {
                    None
                } else {
                    locals_note.clone()
                },
                details: extra,
                overridden,
            },
        );
        m.target.stats.captured_in(held_for);
        if let Some(e) = &release_error {
            m.target.stats.note_error(format!("resume failed: {e}"));
        }
    }
    for (m, mut extra) in reports {
        let old = field_values.next().flatten();
        extra.extend(event_details(ctx, &m.event, old, 200).await);
        let location = match m.event.location() {
            Some(l) => ctx.label(&l).await.to_string(),
            None => "?".into(),
        };
        let (suspended, note) = match (&release_error, escalate) {
            (Some(e), true) => (
                SuspendPolicy::None,
                Some(format!(
                    "the stop point matched, but suspending the VM failed ({e}); the application may still be running"
                )),
            ),
            (None, true) => (
                SuspendPolicy::All,
                Some("matched on the hit thread, then the VM was suspended: other threads ran for one round trip".into()),
            ),
            _ => (policy, None),
        };
        ctx.push_event(
            &m.target.id,
            &m.event,
            HitEvent {
                seq: 0,
                at: received,
                stop: Some(m.target.id.0.clone()),
                kind: kind_label(&m.event),
                thread,
                thread_name: name.to_string(),
                location,
                details: extra,
                suspended,
                note,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locals_choices_union() {
        let all = LocalsChoice::All;
        let none = LocalsChoice::None;
        let a = LocalsChoice::Only(vec!["a".into()]);
        let b = LocalsChoice::Only(vec!["b".into(), "a".into()]);
        assert_eq!(union(&[&none, &none]), LocalsChoice::None);
        assert_eq!(union(&[&a, &all]), LocalsChoice::All);
        assert_eq!(
            union(&[&a, &b, &none]),
            LocalsChoice::Only(vec!["a".into(), "b".into()])
        );
        assert_eq!(union(&[]), LocalsChoice::None);
    }
}
