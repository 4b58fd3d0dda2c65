//! The filter every hit goes through before anything is read: the
//! method a method-exit stop names, the pairing and duration of monitor
//! events, `hit_count`, the condition (evaluated on the hit thread, with a
//! `jvm.condition` span), and the trace budget.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tracing::Instrument;
use tracing::field::Empty;

use crate::error::ConditionError;
use crate::events::condition;
use crate::events::ctx::Ctx;
use crate::events::hit::{Decision, Details, Member, RouteTarget, TraceRef, detail_len, finish};
use crate::events::log::HitEvent;
use crate::jdwp::{SuspendPolicy, ThreadId};
use crate::model::shown::{Detail, HitNote, Unmeasured};
use crate::model::stop_point::{Calls, Mode, MonitorKind, MonitorSpec, Target};
use crate::stop_points::arm::monitor_kind;
use crate::stop_points::exprs::Program;

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
    let mut extra = Vec::new();
    if !passes_target(ctx, m, thread, received, &mut extra).await {
        return Decision::Skip;
    }
    t.stats.hit(received);
    if !reaches_hit_count(ctx, t) {
        return Decision::Skip;
    }
    if let Some(cond) = &t.exprs.condition
        // Boxed, like every rare path of a hit: an evaluation's state is
        // large, and a future carries its largest state in every move.
        && !Box::pin(condition_holds(ctx, m, thread, received, can_evaluate, cond)).await
    {
        return Decision::Skip;
    }
    let decision = by_mode(ctx, t, extra);
    let len = match &decision {
        Decision::Skip => return decision,
        Decision::Trace(ts, _) => detail_len(ts),
        Decision::Report(_) => 200,
    };
    // What the report needs the thread held for (a helpful NPE text).
    if matches!(m.event, crate::jdwp::Event::Exception { .. }) {
        Box::pin(condition::held_exception(
            ctx,
            &m.event,
            thread,
            can_evaluate,
            len,
        ))
        .await;
    }
    decision
}

/// The filters only some targets have: the method a method-exit stop
/// names, monitor pairing and duration, and folded rethrows. False when
/// the hit goes no further (counted as its filter says).
async fn passes_target(
    ctx: &Ctx,
    m: &Member,
    thread: ThreadId,
    received: Instant,
    extra: &mut Details,
) -> bool {
    let t = &m.target;
    let stats = &t.stats;
    match &t.spec.target {
        Target::MethodExit(me) => {
            if let (Some(want), Some(loc)) = (&me.method, m.event.location())
                && ctx.method_name(&loc).await.as_deref() != Some(want.as_str())
            {
                stats.discarded.fetch_add(1, Ordering::Relaxed);
                return false;
            }
            true
        }
        Target::Monitor(mon) => {
            let Some(kind) = monitor_kind(m.event.kind()) else {
                return false;
            };
            passes_monitor(ctx, t, mon, kind, thread, received, extra)
        }
        // A rethrow of an instance already reported is folded into that
        // report: not a hit, never suspended for.
        Target::Exception(_) if ctx.rethrow(&t.id, &m.event).await => {
            stats.rethrows.fetch_add(1, Ordering::Relaxed);
            false
        }
        _ => true,
    }
}

/// Pairs a monitor event with its opening half: an opening event is noted
/// (and reported itself only when no minimum duration is asked for); a
/// closing one reports how long the pair took, and passes only past the
/// minimum.
fn passes_monitor(
    ctx: &Ctx,
    t: &RouteTarget,
    mon: &MonitorSpec,
    kind: MonitorKind,
    thread: ThreadId,
    received: Instant,
    extra: &mut Details,
) -> bool {
    let stats = &t.stats;
    let key = (t.id.clone(), thread);
    if kind.is_opening() {
        ctx.monitor_opened(key, received);
        if mon.min_duration_ms.is_some() {
            stats.hit(received);
            return false;
        }
        return true;
    }
    let started = ctx.monitor_closed(&key);
    let took = started.map(|s| received.saturating_duration_since(s));
    extra.push(duration_detail(took, mon.pairs(kind)));
    if below_minimum(mon.min_duration_ms, took) {
        stats.hit(received);
        stats.below_threshold.fetch_add(1, Ordering::Relaxed);
        return false;
    }
    true
}

/// The `duration` detail of a closing monitor event: how long the pair
/// took, or why that is not known (`pairs`: both halves are armed).
fn duration_detail(took: Option<Duration>, pairs: bool) -> (String, Detail) {
    let d = match took {
        Some(d) => Ok(d.as_millis()),
        None if pairs => Err(Unmeasured::OpeningNotSeen),
        None => Err(Unmeasured::HalfArmed),
    };
    ("duration".into(), Detail::Duration(d))
}

/// Whether a pair that took `took` falls short of a minimum duration in
/// milliseconds; one not measured never reaches it.
fn below_minimum(min_ms: Option<u64>, took: Option<Duration>) -> bool {
    min_ms.is_some_and(|min| took.is_none_or(|d| d < Duration::from_millis(min)))
}

/// Counts a hit toward `hit_count`: true for the one that reaches it
/// (which finishes the stop point), or for every hit when none is set.
fn reaches_hit_count(ctx: &Ctx, t: &RouteTarget) -> bool {
    let Some(n) = t.count_here else {
        return true;
    };
    let c = t.stats.counted.fetch_add(1, Ordering::Relaxed) + 1;
    if c != u64::from(n) {
        return false;
    }
    finish(ctx, t, format!("hit_count {n} reached"));
    true
}

/// Whether the condition holds for this hit. False and an error both
/// stop the hit; an error is also logged as an event of its own.
async fn condition_holds(
    ctx: &Ctx,
    m: &Member,
    thread: ThreadId,
    received: Instant,
    can_evaluate: bool,
    cond: &Program,
) -> bool {
    let stats = &m.target.stats;
    match evaluate(ctx, m, thread, can_evaluate, cond).await {
        Ok(true) => {
            stats.condition_evaluated();
            stats.condition_passed.fetch_add(1, Ordering::Relaxed);
            true
        }
        Ok(false) => {
            stats.condition_evaluated();
            stats.condition_false.fetch_add(1, Ordering::Relaxed);
            read_operands(ctx, m, thread).await;
            false
        }
        Err(e) => {
            if stats.condition_failed(e.to_string()) {
                // Off the dispatch path: the registry disarms it while hits
                // keep being handled (and resumed) here.
                let stops = ctx.stops.clone();
                let id = m.target.id.0.clone();
                tokio::spawn(async move {
                    let _ = stops.toggle(&id, Some(false)).await;
                });
            }
            condition_error(ctx, m, thread, received, cond, e).await;
            false
        }
    }
}

/// Reads back the operands of a false condition (no method calls, at most
/// every `OPERANDS_EVERY`), so a diagnosis can show why it never holds.
async fn read_operands(ctx: &Ctx, m: &Member, thread: ThreadId) {
    let stats = &m.target.stats;
    let now = Instant::now();
    if !stats.operands_due(now) {
        return;
    }
    let operands = &m.target.exprs.operands;
    if operands.is_empty() {
        return;
    }
    let Ok(ectx) = condition::hit_context(ctx, thread, None, Calls::Refused).await else {
        return;
    };
    let ectx = crate::jvm::eval::EvalContext {
        invocable: false,
        ..ectx
    };
    let values = condition::expressions(ctx, &ectx, &m.event, operands, OPERAND_LEN).await;
    let named = operands
        .iter()
        .zip(values)
        .map(|(o, (_, v))| (o.source().to_string(), v))
        .collect();
    stats.note_operands(now, named);
}

/// Longest operand value kept for a diagnosis.
const OPERAND_LEN: usize = 80;

/// Evaluates the condition on the hit thread, in a `jvm.condition` span;
/// a thread this event did not suspend cannot evaluate anything.
async fn evaluate(
    ctx: &Ctx,
    m: &Member,
    thread: ThreadId,
    can_evaluate: bool,
    cond: &Program,
) -> Result<bool, ConditionError> {
    if !can_evaluate {
        return Err(ConditionError::NotSuspended);
    }
    let span = tracing::info_span!(
        "jvm.condition",
        "otel.name" = "jvm.condition",
        "jvmscope.stop_point" = m.target.id.0.as_str(),
        "jvm.condition.result" = Empty,
        "otel.status_code" = Empty,
        "otel.status_message" = Empty,
    );
    let taken = ctx.classes.runaways().is_taken(thread);
    let outcome = condition::evaluate(ctx, thread, &m.event, cond, m.target.spec.filters.calls)
        .instrument(span.clone())
        .await;
    if !taken && ctx.classes.runaways().is_taken(thread) {
        super::guard::took_thread(ctx, &m.target, thread);
    }
    match &outcome {
        Ok(b) => span.record("jvm.condition.result", *b),
        Err(e) => {
            span.record("otel.status_code", "ERROR");
            span.record("otel.status_message", e.to_string())
        }
    };
    outcome
}

/// Logs a condition that failed to evaluate, as an event of its own.
async fn condition_error(
    ctx: &Ctx,
    m: &Member,
    thread: ThreadId,
    received: Instant,
    cond: &Program,
    e: ConditionError,
) {
    let loc = match m.event.location() {
        Some(l) => ctx.label(&l).await.to_string(),
        None => "?".into(),
    };
    ctx.log.push_event(HitEvent {
        seq: 0,
        at: received,
        stop: Some(m.target.id.0.clone()),
        kind: "condition-error",
        thread,
        thread_name: ctx.thread_name(thread).await.to_string(),
        location: loc,
        details: vec![
            ("condition".into(), Detail::Text(cond.source().to_string())),
            ("error".into(), Detail::Text(e.to_string())),
        ],
        suspended: SuspendPolicy::None,
        note: Some(HitNote::Undecided),
    });
}

/// What the stop point's mode makes of a hit that passed: a trace charged
/// to its budget (finishing the stop point on the last one), or a report.
fn by_mode(ctx: &Ctx, t: &RouteTarget, extra: Details) -> Decision {
    match &t.spec.mode {
        Mode::Trace(ts) => {
            let (ok, last) = t.stats.charge(ts.max_hits);
            if last {
                finish(
                    ctx,
                    t,
                    format!("its trace budget of {} captures is used", ts.max_hits),
                );
            }
            match TraceRef::of(&t.spec) {
                Some(ts) if ok => Decision::Trace(ts, extra),
                _ => Decision::Skip,
            }
        }
        Mode::Suspend => Decision::Report(extra),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_say_why_they_are_missing() {
        let (key, d) = duration_detail(Some(Duration::from_millis(42)), true);
        assert_eq!(key, "duration");
        assert_eq!(d, Detail::Duration(Ok(42)));
        assert_eq!(
            duration_detail(None, true).1,
            Detail::Duration(Err(Unmeasured::OpeningNotSeen))
        );
        assert_eq!(
            duration_detail(None, false).1,
            Detail::Duration(Err(Unmeasured::HalfArmed))
        );
    }

    #[test]
    fn minimum_durations_filter_short_and_unmeasured_pairs() {
        let ms = Duration::from_millis;
        assert!(!below_minimum(None, None));
        assert!(!below_minimum(None, Some(ms(1))));
        assert!(below_minimum(Some(10), None));
        assert!(below_minimum(Some(10), Some(ms(9))));
        assert!(!below_minimum(Some(10), Some(ms(10))));
    }
}
