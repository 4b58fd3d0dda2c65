//! The vocabulary of one hit, shared by every step of its walk (route,
//! decide, plan, capture, record): a hit routed to its stop point, what
//! filtering made of it, the details read so far, and a held composite's
//! context. Below all of them: it imports none of the steps, so the walk
//! only ever goes down into it.

use std::sync::Arc;
use std::time::Instant;

use super::ctx::Ctx;
use crate::jdwp::{Event, SuspendPolicy, ThreadId};
use crate::model::shown::Detail;
use crate::model::stop_point::{LocalsChoice, StopPointSpec, TraceSpec};
use crate::stop_points::StopPointsMsg;
pub(in crate::events) use crate::stop_points::routes::Target as RouteTarget;

/// Key/value details of a hit, as read.
pub(in crate::events) type Details = Vec<(String, Detail)>;

/// A hit to snapshot, with its trace settings and details so far.
pub(in crate::events) type Traced = (Member, TraceRef, Details);

/// A trace stop point's settings, read from its spec (shared, not copied
/// for every hit).
#[derive(Clone)]
pub(in crate::events) struct TraceRef(Arc<StopPointSpec>);

impl TraceRef {
    /// `None` unless the spec is a trace's.
    pub(in crate::events) fn of(spec: &Arc<StopPointSpec>) -> Option<Self> {
        spec.trace().map(|_| Self(spec.clone()))
    }
}

impl std::ops::Deref for TraceRef {
    type Target = TraceSpec;

    fn deref(&self) -> &TraceSpec {
        // `of` only wraps a trace's spec; the fallback is never reached.
        const NO_TRACE: &TraceSpec = &TraceSpec {
            frames: 0,
            locals: LocalsChoice::None,
            max_hits: 0,
            max_length: 0,
            exprs: Vec::new(),
        };
        self.0.trace().unwrap_or(NO_TRACE)
    }
}

/// One event routed to one stop point.
pub(in crate::events) struct Member {
    pub event: Event,
    pub target: Arc<RouteTarget>,
}

/// What a hit comes to once filtered.
pub(in crate::events) enum Decision {
    /// Counted, nothing more (filtered, over budget, condition false).
    Skip,
    /// Snapshot it.
    Trace(TraceRef, Details),
    /// Report it to the agent (a suspending stop point).
    Report(Details),
}

/// One held composite's context, shared by every step of its capture.
pub(in crate::events) struct Hit<'a> {
    pub ctx: &'a Ctx,
    pub thread: ThreadId,
    pub policy: SuspendPolicy,
    pub received: Instant,
    /// The ledger was told of the composite.
    pub recorded: bool,
}

/// A hit reported to the agent, with its details so far.
pub(in crate::events) type Reported = (Member, Details);

/// Tells the registry the stop point is done (budget used, count reached).
pub(in crate::events) fn finish(ctx: &Ctx, target: &RouteTarget, reason: String) {
    let _ = ctx
        .stops
        .actor()
        .send_message(StopPointsMsg::Finished(target.id.clone(), reason));
}

/// Characters kept per captured value of a trace.
pub(in crate::events) fn detail_len(ts: &TraceSpec) -> usize {
    ts.max_length.max(200)
}
