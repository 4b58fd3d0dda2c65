//! What a held capture leaves once the thread runs again (unless it was
//! escalated or the VM is held): each trace's record and each report's
//! event, rendered at leisure from what was read while it was held.

use std::sync::Arc;

use futures::future::join_all;

use super::details::{event_details, kind_label};
use super::plan::{Hold, Snapshot, keeps_captured, report_suspension};
use crate::events::ctx::Slot;
use crate::events::hit::{Details, Hit, Reported, Traced, detail_len};
use crate::events::log::{HitEvent, TraceRecord};
use crate::jdwp::{SuspendPolicy, Value};
use crate::model::shown::{HitNote, Shown};
use crate::model::stop_point::{LocalsChoice, TraceSpec};

/// What every record of one capture shares, read once after the release.
struct Common {
    thread_name: Arc<str>,
    /// The callers' labels, nearest first.
    callers: Vec<Arc<str>>,
    /// The values of the captured fields, in their order.
    captured_values: Vec<Value>,
}

impl Hit<'_> {
    /// Records every trace and reports every report of one capture.
    pub(super) async fn record(
        &self,
        traces: Vec<Traced>,
        reports: Vec<Reported>,
        hold: Hold,
        mut cap: Snapshot,
    ) {
        let ctx = self.ctx;
        let captured_values = match cap.this {
            Some(this) => ctx.captured_values(this, &cap.captured).await,
            None => Vec::new(),
        };
        let thread_name = ctx.thread_name(self.thread).await;
        let deepest = traces.iter().map(|(_, t, _)| t.frames).max().unwrap_or(0);
        let callers = match ctx.cached_labels(cap.callers(deepest).map(|f| &f.location)) {
            Some(labels) => labels,
            None => join_all(cap.callers(deepest).map(|f| ctx.label(&f.location))).await,
        };
        let common = Common {
            thread_name,
            callers,
            captured_values,
        };
        let mut field_values = std::mem::take(&mut cap.field_values).into_iter();
        let mut exprs = std::mem::take(&mut cap.exprs).into_iter();
        for trace in traces {
            let old = field_values.next().flatten();
            let exprs = exprs.next().unwrap_or_default();
            self.trace(&cap, &common, trace, old, exprs).await;
        }
        for report in reports {
            let old = field_values.next().flatten();
            self.report(&cap, &common, hold, report, old).await;
        }
    }

    /// Records one trace.
    async fn trace(
        &self,
        cap: &Snapshot,
        common: &Common,
        (m, ts, mut extra): Traced,
        old: Option<Value>,
        exprs: Details,
    ) {
        let ctx = self.ctx;
        let len = detail_len(&ts);
        extra.extend(event_details(ctx, &m.event, old, len).await);
        extra.extend(exprs);
        let locals = self.locals(cap, common, &ts).await;
        let location = match m.event.location() {
            Some(l) => ctx.label(&l).await,
            None => "?".into(),
        };
        ctx.push_trace(
            &m.target.id,
            &m.event,
            TraceRecord {
                seq: 0,
                at: self.received,
                stop: m.target.name.clone(),
                thread: self.thread,
                thread_name: common.thread_name.clone(),
                location,
                callers: common
                    .callers
                    .iter()
                    .take(ts.frames as usize)
                    .cloned()
                    .collect(),
                locals,
                locals_note: if ts.locals == LocalsChoice::None {
                    None
                } else {
                    cap.locals_note.clone()
                },
                details: extra,
                overridden: self.policy == SuspendPolicy::All,
            },
        );
        m.target.stats.captured_in(cap.held_for);
        if let Some(e) = &cap.release_error {
            m.target.stats.note_error(format!("resume failed: {e}"));
        }
    }

    /// The locals one trace shows, rendered: those of the held frame, then
    /// those an anonymous or local class captured.
    async fn locals(
        &self,
        cap: &Snapshot,
        common: &Common,
        ts: &TraceSpec,
    ) -> Vec<(Arc<str>, Shown)> {
        let ctx = self.ctx;
        let keep: Vec<(&Slot, Value)> = cap.kept_locals(&ts.locals);
        let rendered = ctx
            .show_all(
                &keep.iter().map(|(_, v)| *v).collect::<Vec<_>>(),
                ts.max_length,
            )
            .await;
        let mut locals: Vec<(Arc<str>, Shown)> = keep
            .iter()
            .zip(rendered)
            .map(|((s, _), r)| (s.name.clone(), r))
            .collect();
        let outer: Vec<(&String, Value)> = cap
            .captured
            .iter()
            .map(|(n, _)| n)
            .zip(common.captured_values.iter().copied())
            .filter(|(n, _)| keeps_captured(&ts.locals, n))
            .collect();
        let shown = ctx
            .show_all(
                &outer.iter().map(|(_, v)| *v).collect::<Vec<_>>(),
                ts.max_length,
            )
            .await;
        locals.extend(
            outer
                .iter()
                .zip(shown)
                .map(|((n, _), r)| (Arc::from(n.as_str()), r)),
        );
        locals
    }

    /// Reports one hit to the agent, saying what stayed suspended.
    async fn report(
        &self,
        cap: &Snapshot,
        common: &Common,
        hold: Hold,
        (m, mut extra): Reported,
        old: Option<Value>,
    ) {
        let ctx = self.ctx;
        extra.extend(event_details(ctx, &m.event, old, 200).await);
        let location = match m.event.location() {
            Some(l) => ctx.label(&l).await.to_string(),
            None => "?".into(),
        };
        let (mut suspended, mut note) =
            report_suspension(self.policy, hold, cap.release_error.as_deref(), cap.stacked);
        // A resume that began after the hit arrived (the agent continued
        // while this report was being written) released it: its thread
        // may be held again by a later hit, even at the same line, but no
        // longer by this event, so nothing may be invoked on it for this.
        let released = cap.released
            || (hold == Hold::Keep
                && self.policy == SuspendPolicy::EventThread
                && ctx.session.bus.resumed_since(self.received));
        if m.target.trap && note == Some(HitNote::Escalated) {
            note = Some(HitNote::EscalatedFromProbe);
        }
        if suspended != SuspendPolicy::None && released {
            suspended = SuspendPolicy::None;
            note = Some(HitNote::ReleasedUnread);
        }
        ctx.push_event(
            &m.target.id,
            &m.event,
            HitEvent {
                seq: 0,
                at: self.received,
                stop: Some(m.target.id.0.clone()),
                kind: kind_label(&m.event),
                thread: self.thread,
                thread_name: common.thread_name.to_string(),
                location,
                details: extra,
                suspended,
                note,
            },
        );
    }
}
