//! The overhead guard's side of the dispatcher: after a hold ends, the
//! stop points it was charged to are judged against their budgets, and
//! the session against its own. One over budget is paused: disarmed off
//! the dispatch path, its definition and counters kept, and the pause
//! queued for the agent's next reply.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::events::ctx::Ctx;
use crate::events::hit::RouteTarget;
use crate::jdwp::ThreadId;
use crate::model::overhead::{Overspent, Scope, WINDOW};
use crate::stop_points::Paused;

/// Judges the stop points one hold of `held` was charged to.
pub(super) fn judge(ctx: &Ctx, charged: &[Arc<RouteTarget>], held: Duration) {
    if charged.is_empty() {
        return;
    }
    let guard = ctx.stops.guard();
    let now = Instant::now();
    for t in charged {
        let pct = guard.stop_point_pct(t.spec.filters.overhead_pct);
        if let Some(over) = t.stats.over_budget(now, pct) {
            pause(ctx, t, over);
            return;
        }
    }
    // One hold, however many stop points shared it.
    let Some(mut over) = guard.charge(now, held) else {
        return;
    };
    // The session is over: the costliest stop point of this hold goes
    // (one the agent exempted with a budget of 0 is left alone).
    let costliest = charged
        .iter()
        .filter(|t| t.spec.filters.overhead_pct != Some(0))
        .filter_map(|t| Some((t, t.stats.recent_share(now)?)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    if let Some((t, own)) = costliest {
        over.own_share = own;
        if let Some(over) = t.stats.pause(over) {
            pause(ctx, t, over);
        }
    }
}

/// A call made by `t`'s condition or trace expressions could not be
/// cancelled and keeps `thread`: the thread counts in `t`'s cost until the
/// call returns, and `t` is paused as a stop point over any budget would
/// be, since each hit could take one more thread.
pub(super) fn took_thread(ctx: &Ctx, t: &RouteTarget, thread: ThreadId) {
    ctx.classes.runaways().attribute(thread, &t.id.0);
    let pct = ctx
        .stops
        .guard()
        .stop_point_pct(t.spec.filters.overhead_pct);
    if pct == 0 {
        return;
    }
    let over = Overspent {
        scope: Scope::StopPoint,
        share: 1.0,
        own_share: 1.0,
        budget_pct: pct,
        window: WINDOW,
        holds: 1,
    };
    if let Some(over) = t.stats.pause(over) {
        pause(ctx, t, over);
    }
}

fn pause(ctx: &Ctx, t: &RouteTarget, over: Overspent) {
    ctx.stops.guard().paused(
        Paused {
            id: t.id.clone(),
            over,
            switched: None,
        },
        &t.spec,
    );
    let stops = ctx.stops.clone();
    let id = t.id.0.clone();
    tokio::spawn(async move {
        let _ = stops.toggle(&id, Some(false)).await;
    });
}
