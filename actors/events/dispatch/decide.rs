//! The filter every hit goes through before anything is read: the
//! method a method-exit stop names, the pairing and duration of monitor
//! events, `hit_count`, the condition (evaluated on the hit thread, with a
//! `jvm.condition` span), and the trace budget.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tracing::Instrument;
use tracing::field::Empty;

use super::super::capture::Ctx;
use super::super::condition;
use super::super::log::HitEvent;
use super::{Decision, Member, detail_len, finish};
use crate::actors::stop_points::arm::monitor_kind;
use crate::jdwp::{SuspendPolicy, ThreadId};
use crate::model::stop_point::{Mode, Target};

/// Filters one hit: method name, monitor pairing, count, condition,
/// budget.
pub(super) async fn decide(
    ctx: &Ctx,
    m: &Member,
    thread: ThreadId,
    received: Instant,
    can_evaluate: bool,
) -> Decision {
    let t = &m.target;
    let stats = &t.stats;
    let mut extra = Vec::new();
    match &t.spec.target {
        Target::MethodExit(me) => {
            if let (Some(want), Some(loc)) = (&me.method, m.event.location())
                && ctx.method_name(&loc).await.as_deref() != Some(want.as_str())
            {
                stats.discarded.fetch_add(1, Ordering::Relaxed);
                return Decision::Skip;
            }
        }
        Target::Monitor(mon) => {
            let Some(kind) = monitor_kind(m.event.kind()) else {
                return Decision::Skip;
            };
            let key = (t.id.clone(), thread);
            if kind.is_opening() {
                ctx.monitor_opened(key, received);
                if mon.min_duration_ms.is_some() {
                    stats.hit(received);
                    return Decision::Skip;
                }
            } else {
                let started = ctx.monitor_closed(&key);
                let took = started.map(|s| received.saturating_duration_since(s));
                match took {
                    Some(d) => extra.push((
                        "duration".into(),
                        format!(
                            "{} ms (measured here, between the two events)",
                            d.as_millis()
                        ),
                    )),
                    None if mon.pairs(kind) => extra.push((
                        "duration".into(),
                        "not measurable (the opening event was not seen)".into(),
                    )),
                    None => extra.push((
                        "duration".into(),
                        "not measurable (only this half of the pair is armed)".into(),
                    )),
                }
                if let Some(min) = mon.min_duration_ms
                    && took.is_none_or(|d| d < Duration::from_millis(min))
                {
                    stats.hit(received);
                    stats.below_threshold.fetch_add(1, Ordering::Relaxed);
                    return Decision::Skip;
                }
            }
        }
        // A rethrow of an instance already reported is folded into that
        // report: not a hit, never suspended for.
        Target::Exception(_) if ctx.rethrow(&t.id, &m.event).await => {
            stats.rethrows.fetch_add(1, Ordering::Relaxed);
            return Decision::Skip;
        }
        _ => {}
    }
    stats.hit(received);
    if let Some(n) = t.count_here {
        let c = stats.counted.fetch_add(1, Ordering::Relaxed) + 1;
        if c != u64::from(n) {
            return Decision::Skip;
        }
        finish(ctx, t, format!("hit_count {n} reached"));
    }
    if let Some(cond) = &t.spec.filters.condition {
        let outcome = if can_evaluate {
            let span = tracing::info_span!(
                "jvm.condition",
                "otel.name" = "jvm.condition",
                "jvmscope.stop_point" = t.id.0.as_str(),
                "jvm.condition.result" = Empty,
                "otel.status_code" = Empty,
                "otel.status_message" = Empty,
            );
            let outcome = condition::evaluate(ctx, thread, &m.event, cond)
                .instrument(span.clone())
                .await;
            match &outcome {
                Ok(b) => span.record("jvm.condition.result", *b),
                Err(e) => {
                    span.record("otel.status_code", "ERROR");
                    span.record("otel.status_message", e.as_str())
                }
            };
            outcome
        } else {
            Err("the thread was not suspended by this event".into())
        };
        match outcome {
            Ok(true) => {}
            Ok(false) => {
                stats.condition_false.fetch_add(1, Ordering::Relaxed);
                return Decision::Skip;
            }
            Err(e) => {
                stats.condition_errors.fetch_add(1, Ordering::Relaxed);
                stats.note_error(e.clone());
                let loc = match m.event.location() {
                    Some(l) => ctx.label(&l).await.to_string(),
                    None => "?".into(),
                };
                ctx.log.push_event(HitEvent {
                    seq: 0,
                    at: received,
                    stop: Some(t.id.0.clone()),
                    kind: "condition-error",
                    thread,
                    thread_name: ctx.thread_name(thread).await.to_string(),
                    location: loc,
                    details: vec![("condition".into(), cond.clone()), ("error".into(), e)],
                    suspended: SuspendPolicy::None,
                    note: Some(
                        "the hit was not treated as true or false: nothing was suspended".into(),
                    ),
                });
                return Decision::Skip;
            }
        }
    }
    let decision = match &t.spec.mode {
        Mode::Trace(ts) => {
            let (ok, last) = stats.charge(ts.max_hits);
            if last {
                finish(
                    ctx,
                    t,
                    format!("its trace budget of {} captures is used", ts.max_hits),
                );
            }
            if ok {
                Decision::Trace(ts.clone(), extra)
            } else {
                Decision::Skip
            }
        }
        Mode::Suspend => Decision::Report(extra),
    };
    let len = match &decision {
        Decision::Skip => return decision,
        Decision::Trace(ts, _) => detail_len(ts),
        Decision::Report(_) => 200,
    };
    // What the report needs the thread held for (a helpful NPE text).
    ctx.held_exception(&m.event, thread, can_evaluate, len)
        .await;
    decision
}
