//! The held path: one thread (EVENT_THREAD) or the VM (ALL) is suspended
//! for a composite. Its hits are filtered, what they need is read while the
//! thread is held (the reads queued in order, the release right behind
//! them), and the hold is then released, escalated or kept.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use futures::future::{Either, join_all};

use super::decide::decide;
use super::guard;
use super::land::land;
use super::plan::{CapturePlan, Hold, Read, Reads, Sharing, Snapshot};
use super::stack::{self, Ended};
use crate::connection::burst::Burst;
use crate::error::JdwpError;
use crate::events::condition;
use crate::events::ctx::{Ctx, FramesReply, Slot};
use crate::events::hit::{
    Decision, Details, Hit, Member, Reported, RouteTarget, Traced, detail_len,
};
use crate::jdwp::stack_frame::{GetValues, ThisObject};
use crate::jdwp::{Composite, FrameInfo, SuspendPolicy, ThreadId};
use crate::model::shown::{Detail, LocalsGap};
use crate::model::stop_point::{Calls, LocalsChoice};

/// The stop points whose hits went no further (filtered after the thread
/// was held): their holds are charged as checks.
type Checked = Vec<Arc<RouteTarget>>;

/// The held path: one thread (EVENT_THREAD) or the VM (ALL) is
/// suspended for this composite.
pub(super) async fn held(
    ctx: &Ctx,
    thread: ThreadId,
    policy: SuspendPolicy,
    members: Vec<Member>,
    sharing: Sharing,
    received: Instant,
    early: Option<(usize, FramesReply)>,
) {
    // A suspending probe's hit first steps out of the probe's helper.
    let Some(landed) = land(ctx, thread, members).await else {
        return;
    };
    let hit = Hit {
        ctx,
        thread,
        policy,
        received,
        recorded: sharing.recorded,
    };
    let (mut traces, mut reports, checked) = hit.sort(landed.members).await;
    if !landed.carried.is_empty() {
        let trapped = traces.iter_mut().filter(|(m, _, _)| m.target.trap);
        for (_, _, extra) in trapped {
            extra.extend(landed.carried.iter().cloned());
        }
        for (_, extra) in reports.iter_mut().filter(|(m, _)| m.target.trap) {
            extra.extend(landed.carried.iter().cloned());
        }
    }
    let plan = {
        let t: Vec<_> = traces.iter().map(|(m, t, _)| (&**t, &m.event)).collect();
        let r: Vec<_> = reports.iter().map(|(m, _)| &m.event).collect();
        CapturePlan::new(&t, &r, policy, sharing.ours_only)
    };
    let snapshot = hit.capture(&plan, &traces, early).await;
    hit.tell_session(&reports, plan.hold, &snapshot);
    // Per composite: what every member that was held costs its thread.
    let held_for = snapshot.held_for;
    let mut charged: Vec<Arc<RouteTarget>> =
        traces.iter().map(|(m, _, _)| m.target.clone()).collect();
    let hold = plan.hold;
    drop(plan);
    hit.record(traces, reports, hold, snapshot).await;
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

    /// Drives the plan: reads what the hits need while the thread is
    /// held, in the order the plan lists, and ends the hold right behind
    /// those reads.
    async fn capture(
        &self,
        plan: &CapturePlan<'_>,
        traces: &[Traced],
        early: Option<(usize, FramesReply)>,
    ) -> Snapshot {
        let (ctx, thread) = (self.ctx, self.thread);
        let frames = self.frames(&plan.reads, early, traces).await;
        let (slots, locals_note) = self.top_slots(&frames, &plan.reads.wanted).await;
        // An anonymous or local class keeps the locals it captured in `val$x`
        // fields of its `this`, which only the held frame names.
        let captured = match frames.first() {
            Some(top) if plan.wants_captured(Some(top)) => {
                ctx.captured_fields(top.location.class).await
            }
            _ => Vec::new(),
        };
        let mut values = None;
        let mut olds = Vec::new();
        let mut this = None;
        let mut exprs = Vec::new();
        let mut hold = plan.hold;
        // Each read is queued as it is met, into one burst to the
        // Connection; the end of the hold goes last, in the same burst.
        let mut burst = ctx.conn.burst();
        for read in plan.burst(frames.first(), &slots, !captured.is_empty()) {
            match read {
                Read::Values { frame, slots } => {
                    values = Some(burst.send(&GetValues {
                        thread,
                        frame,
                        slots,
                    }));
                }
                Read::OldValues(reads) => {
                    olds = reads
                        .into_iter()
                        .map(|r| r.map(|r| ctx.field_value(r.object, r.declaring, r.field)))
                        .collect();
                }
                Read::This { frame } => this = Some(burst.send(&ThisObject { thread, frame })),
                Read::Exprs => {
                    // The frame's reads go out before anything is invoked.
                    burst.submit();
                    exprs = Box::pin(self.expressions(traces, frames.first())).await;
                }
                Read::End(h) => hold = h,
            }
        }
        let release = self.queue_release(hold, &mut burst);
        drop(burst);
        // What they invoked concerns no later hit.
        ctx.take_invoked(thread);
        let this = async { maybe(this).await.and_then(|t| t.ok()).map(|o| o.id) };
        // Old field values are read at field watches only.
        let olds = async {
            if olds.is_empty() {
                Vec::new()
            } else {
                join_all(olds.into_iter().map(maybe)).await
            }
        };
        let (values, field_values, this, ended) =
            futures::join!(maybe(values), olds, this, self.end(hold, release));
        let mut snapshot = Snapshot {
            frames,
            slots,
            locals_note,
            captured,
            this,
            field_values: field_values.into_iter().map(Option::flatten).collect(),
            exprs,
            release_error: ended.error,
            stacked: ended.stacked,
            released: ended.released,
            held_for: self.received.elapsed(),
            ..Snapshot::default()
        };
        snapshot.values_read(values);
        snapshot
    }

    /// The frames the traces show: those asked for early while they still
    /// serve, else read now. A failure is noted on every trace and leaves
    /// none.
    async fn frames(
        &self,
        reads: &Reads<'_>,
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
    ) -> (Arc<[Slot]>, Option<LocalsGap>) {
        if *wanted != LocalsChoice::None
            && let Some(top) = frames.first()
        {
            match self.ctx.slots(&top.location, wanted).await {
                Some(s) => return (s, None),
                None => return (Arc::default(), Some(LocalsGap::NoVariableTable)),
            }
        }
        (Arc::default(), None)
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
        let allowed = |m: &Member| m.target.spec.filters.calls == Calls::Allowed;
        let calls = if traces.iter().any(|(m, _, _)| allowed(m)) {
            Calls::Allowed
        } else {
            Calls::Refused
        };
        let ectx = condition::hit_context(ctx, self.thread, top, calls).await;
        let runaways = ctx.classes.runaways();
        for (m, t, _) in traces {
            results.push(match &ectx {
                _ if t.exprs.is_empty() => Vec::new(),
                Ok(e) => {
                    let exprs = &m.target.exprs.trace;
                    let refused;
                    let e = if calls == Calls::Allowed && !allowed(m) {
                        refused = condition::refusing_calls(e);
                        &refused
                    } else {
                        e
                    };
                    let taken = runaways.is_taken(self.thread);
                    let shown =
                        condition::expressions(ctx, e, &m.event, exprs, detail_len(t)).await;
                    if !taken && runaways.is_taken(self.thread) {
                        guard::took_thread(ctx, &m.target, self.thread);
                    }
                    shown
                }
                Err(err) => t
                    .exprs
                    .iter()
                    .enumerate()
                    .map(|(i, x)| (format!("expr[{i}] {x}"), Detail::Failed(err.to_string())))
                    .collect(),
            });
        }
        results
    }

    /// Ends the hold as decided (a release was queued with the reads):
    /// what failed doing so, if anything, and whether the VM was held for
    /// the agent already.
    async fn end(
        &self,
        hold: Hold,
        release: Option<impl Future<Output = Result<(), JdwpError>>>,
    ) -> Ended {
        match hold {
            Hold::Escalate => Box::pin(stack::escalate(self.ctx, self.thread, self.received)).await,
            Hold::Keep if self.policy == SuspendPolicy::All => {
                Box::pin(stack::keep_all(self.ctx, self.thread, self.received)).await
            }
            Hold::Keep => Ended::default(),
            Hold::Release => Ended {
                error: match release {
                    Some(r) => r.await.err().map(|e| e.to_string()),
                    None => None,
                },
                ..Ended::default()
            },
        }
    }

    /// Queues the release of what this composite suspended behind the
    /// reads, when the hold ends that way.
    fn queue_release(
        &self,
        hold: Hold,
        burst: &mut Burst<'_>,
    ) -> Option<impl Future<Output = Result<(), JdwpError>> + Send + 'static> {
        if hold != Hold::Release {
            return None;
        }
        let thread = self.thread;
        match self.policy {
            SuspendPolicy::EventThread => Some(Either::Left(
                burst.send(&crate::jdwp::thread_reference::Resume { thread }),
            )),
            SuspendPolicy::All => Some(Either::Right(
                burst.send(&crate::jdwp::virtual_machine::Resume),
            )),
            SuspendPolicy::None => None,
        }
    }

    /// Tells the session how the hold ended: a VM now suspended for the
    /// agent, or a thread no event holds any more.
    fn tell_session(&self, reports: &[Reported], hold: Hold, captured: &Snapshot) {
        let (ctx, thread) = (self.ctx, self.thread);
        if hold.escalates() && captured.release_error.is_none() && !captured.released {
            // Now the VM is suspended for the agent: the session (and its
            // Watchdog) learn of it as of an event that suspended everything.
            ctx.session.record_composite(&Composite {
                suspend_policy: SuspendPolicy::All,
                events: reports.iter().map(|(m, _)| m.event.clone()).collect(),
            });
        }
        // Only a composite the ledger was told of (or escalated) is
        // forgotten: a trace's hit of our own concerns no one else.
        if (hold == Hold::Release || captured.released) && (self.recorded || hold.escalates()) {
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
