//! The held path: one thread (EVENT_THREAD) or the VM (ALL) is suspended
//! for a composite. Its hits are filtered, what they need is read while the
//! thread is held (the reads queued in order, the release right behind
//! them), and the hold is then released, escalated or kept.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use futures::future::join_all;

use super::super::capture::{Ctx, FramesReply, Slot};
use super::super::condition;
use super::plan::{Hold, Reads};
use super::stack::{self, Ended};
use super::{Decision, Details, Member, RouteTarget, Traced, decide, detail_len, guard};
use crate::jdwp::stack_frame::{GetValues, ThisObject};
use crate::jdwp::{Composite, Event, FieldId, FrameInfo, ObjectId, SuspendPolicy, ThreadId, Value};
use crate::model::shown::{Detail, LocalsGap};
use crate::model::stop_point::LocalsChoice;

/// One held composite's context, shared by every step of its capture.
pub(super) struct Hit<'a> {
    pub ctx: &'a Ctx,
    pub thread: ThreadId,
    pub policy: SuspendPolicy,
    pub received: Instant,
}

/// A hit reported to the agent, with its details so far.
pub(super) type Reported = (Member, Details);

/// The stop points whose hits went no further (filtered after the thread
/// was held): their holds are charged as checks.
type Checked = Vec<Arc<RouteTarget>>;

/// What a capture read while the thread was held, and how ending the hold
/// went.
pub(super) struct Captured {
    pub frames: Vec<FrameInfo>,
    pub slots: Vec<Slot>,
    /// The values of `slots`, in their order.
    pub values: Vec<Value>,
    pub locals_note: Option<LocalsGap>,
    /// The locals an anonymous or local class captured (`val$x` fields).
    pub captured: Vec<(String, FieldId)>,
    /// The held frame's `this`, when captured fields are to be read of it.
    pub this: Option<ObjectId>,
    /// Old field values: one per trace, then one per report.
    pub field_values: Vec<Option<Value>>,
    /// Trace expression results: one per trace, or none when no trace has
    /// expressions.
    pub exprs: Vec<Details>,
    pub release_error: Option<String>,
    /// The VM was held for the agent already: this hit's own suspension
    /// was undone.
    pub stacked: bool,
    /// A resume after the hit arrived released it.
    pub released: bool,
    pub held_for: Duration,
}

/// The held path: one thread (EVENT_THREAD) or the VM (ALL) is
/// suspended for this composite.
pub(super) async fn held(
    ctx: &Ctx,
    thread: ThreadId,
    policy: SuspendPolicy,
    members: Vec<Member>,
    ours_only: bool,
    received: Instant,
    early: Option<(usize, FramesReply)>,
) {
    let hit = Hit {
        ctx,
        thread,
        policy,
        received,
    };
    let (traces, reports, checked) = hit.sort(members).await;
    let hold = Hold::after(policy, ours_only, !reports.is_empty());
    let captured = hit.capture(&traces, &reports, hold, early).await;
    hit.tell_session(&reports, hold, &captured);
    let held_for = captured.held_for;
    let mut charged: Vec<Arc<RouteTarget>> =
        traces.iter().map(|(m, _, _)| m.target.clone()).collect();
    hit.record(traces, reports, hold, captured).await;
    // The hits that went no further held their thread all the same.
    for t in &checked {
        t.stats.checked_in(held_for);
    }
    charged.extend(checked);
    guard::judge(ctx, &charged, held_for);
}

impl Hit<'_> {
    /// Filters the members into traces and reports, noting the counts on
    /// the capture span; under ALL every trace is overridden by the VM
    /// suspension.
    async fn sort(&self, members: Vec<Member>) -> (Vec<Traced>, Vec<Reported>, Checked) {
        let mut traces: Vec<Traced> = Vec::new();
        let mut reports: Vec<Reported> = Vec::new();
        let mut checked: Checked = Vec::new();
        for m in members {
            match decide(self.ctx, &m, self.thread, self.received, true).await {
                Decision::Skip => checked.push(m.target),
                Decision::Trace(ts, extra) => traces.push((m, ts, extra)),
                Decision::Report(extra) => reports.push((m, extra)),
            }
        }
        let span = tracing::Span::current();
        span.record("jvm.capture.traces", traces.len() as u64);
        span.record("jvm.capture.reports", reports.len() as u64);
        if self.policy == SuspendPolicy::All {
            for (m, _, _) in &traces {
                m.target.stats.overridden.fetch_add(1, Ordering::Relaxed);
            }
        }
        (traces, reports, checked)
    }

    /// Reads what the hits need while the thread is held, then ends the
    /// hold right behind those reads.
    async fn capture(
        &self,
        traces: &[Traced],
        reports: &[Reported],
        hold: Hold,
        early: Option<(usize, FramesReply)>,
    ) -> Captured {
        let (ctx, thread) = (self.ctx, self.thread);
        let reads = Reads::of(traces.iter().map(|(_, t, _)| t));
        let frames = self.frames(&reads, early, traces).await;
        let (slots, mut locals_note) = self.top_slots(&frames, &reads.wanted).await;
        // An anonymous or local class keeps the locals it captured in `val$x`
        // fields of its `this`, which only the held frame names.
        let captured = match frames.first() {
            Some(top) if reads.wanted != LocalsChoice::None => {
                ctx.captured_fields(top.location.class).await
            }
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
            .map(|e| old_value(ctx, e))
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
        let exprs = self.expressions(traces, frames.first()).await;
        // What they invoked concerns no later hit.
        ctx.take_invoked(thread);
        let this = async { maybe(this).await.and_then(|t| t.ok()).map(|o| o.id) };
        let (values, field_values, this, ended) = futures::join!(
            maybe(values),
            join_all(field_reads.into_iter().map(maybe)),
            this,
            self.end(hold)
        );
        let field_values = field_values.into_iter().map(Option::flatten).collect();
        let held_for = self.received.elapsed();
        let values: Vec<Value> = match values {
            Some(Ok(v)) => v,
            Some(Err(e)) => {
                locals_note = Some(LocalsGap::Unreadable(e.to_string()));
                Vec::new()
            }
            None => Vec::new(),
        };
        Captured {
            frames,
            slots,
            values,
            locals_note,
            captured,
            this,
            field_values,
            exprs,
            release_error: ended.error,
            stacked: ended.stacked,
            released: ended.released,
            held_for,
        }
    }

    /// The frames the traces show: those asked for early while they still
    /// serve, else read now. A failure is noted on every trace and leaves
    /// none.
    async fn frames(
        &self,
        reads: &Reads,
        early: Option<(usize, FramesReply)>,
        traces: &[Traced],
    ) -> Vec<FrameInfo> {
        let (ctx, thread) = (self.ctx, self.thread);
        // Code run by a condition or for a helpful NPE text let the thread
        // run: the frames asked for early are stale then.
        let invoked = ctx.take_invoked(thread);
        let frames = match early {
            Some((n, reply)) if reads.early_serves(n, invoked) => {
                ctx.frames_from(thread, n, reply).await
            }
            _ if reads.need_frames => ctx.frames(thread, reads.callers + 1).await,
            _ => Ok(Vec::new()),
        };
        match frames {
            Ok(f) => f,
            Err(e) => {
                for (m, _, _) in traces {
                    m.target
                        .stats
                        .note_error(format!("reading frames failed: {e}"));
                }
                Vec::new()
            }
        }
    }

    /// The wanted locals live in the held frame, or a note on why there
    /// are none to read.
    async fn top_slots(
        &self,
        frames: &[FrameInfo],
        wanted: &LocalsChoice,
    ) -> (Vec<Slot>, Option<LocalsGap>) {
        if *wanted != LocalsChoice::None
            && let Some(top) = frames.first()
        {
            match self.ctx.slots(&top.location, wanted).await {
                Some(s) => return (s, None),
                None => return (Vec::new(), Some(LocalsGap::NoVariableTable)),
            }
        }
        (Vec::new(), None)
    }

    /// Trace expressions read the held frame (and may invoke on the hit
    /// thread): evaluated before anything releases it, after the frame's
    /// own reads are queued (an invocation makes its frame ids stale).
    async fn expressions(&self, traces: &[Traced], top: Option<&FrameInfo>) -> Vec<Details> {
        let ctx = self.ctx;
        let mut results: Vec<Details> = Vec::with_capacity(traces.len());
        if !traces.iter().any(|(_, t, _)| !t.exprs.is_empty()) {
            return results;
        }
        let ectx = condition::hit_context(ctx, self.thread, top).await;
        for (m, t, _) in traces {
            results.push(match &ectx {
                _ if t.exprs.is_empty() => Vec::new(),
                Ok(e) => condition::expressions(ctx, e, &m.event, &t.exprs, detail_len(t)).await,
                Err(err) => t
                    .exprs
                    .iter()
                    .enumerate()
                    .map(|(i, x)| (format!("expr[{i}] {x}"), Detail::Failed(err.clone())))
                    .collect(),
            });
        }
        results
    }

    /// Ends the hold as decided: what failed doing so, if anything, and
    /// whether the VM was held for the agent already.
    async fn end(&self, hold: Hold) -> Ended {
        match hold {
            Hold::Escalate => stack::escalate(self.ctx, self.thread, self.received).await,
            Hold::Keep if self.policy == SuspendPolicy::All => {
                stack::keep_all(self.ctx, self.thread, self.received).await
            }
            Hold::Keep => Ended::default(),
            Hold::Release => Ended {
                error: self.release().await,
                ..Ended::default()
            },
        }
    }

    /// Releases what this composite suspended.
    async fn release(&self) -> Option<String> {
        let (conn, thread) = (&self.ctx.conn, self.thread);
        match self.policy {
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

    /// Tells the session how the hold ended: a VM now suspended for the
    /// agent, or a thread no event holds any more.
    fn tell_session(&self, reports: &[Reported], hold: Hold, captured: &Captured) {
        let (ctx, thread) = (self.ctx, self.thread);
        if hold.escalates() && captured.release_error.is_none() && !captured.released {
            // Now the VM is suspended for the agent: the session (and its
            // Watchdog) learn of it as of an event that suspended everything.
            ctx.session.record_composite(&Composite {
                suspend_policy: SuspendPolicy::All,
                events: reports.iter().map(|(m, _)| m.event.clone()).collect(),
            });
        }
        if hold == Hold::Release || captured.released {
            // No longer a thread an event holds: nothing may be evaluated on it.
            ctx.session.forget_event_threads(Some(thread));
        }
    }
}

/// Awaits a read that may not have been queued.
async fn maybe<F: Future>(read: Option<F>) -> Option<F::Output> {
    match read {
        Some(f) => Some(f.await),
        None => None,
    }
}

/// The read of a watched field's current value (the old value at a
/// write), queued now; `None` for an event that names no field.
fn old_value(
    ctx: &Ctx,
    e: &Event,
) -> Option<impl Future<Output = Option<Value>> + Send + 'static + use<>> {
    match e {
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
    }
}
