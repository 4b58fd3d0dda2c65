//! The traces view: the snapshots a `debug_get_traces` question selects,
//! with the ring's counters and what a clear removed, answered in one
//! call. A family's id stands for its members; a cleared stop point's
//! snapshots stay readable under its own id.

use crate::error::{ArmError, SessionError};
use crate::events::log::{RingStats, TraceRecord};
use crate::session::SessionHandle;

/// Which snapshots to read.
#[derive(Debug, Clone, Default)]
pub struct TraceQuery {
    /// A stop point or family id.
    pub stop: Option<String>,
    /// Only snapshots after this sequence number; given, the page is the
    /// oldest `limit` of them (paging forward), else the newest `limit`.
    pub since: Option<u64>,
    /// Only snapshots whose location contains this.
    pub class_filter: Option<String>,
    /// At most this many: the oldest after `since`, or the newest.
    pub limit: usize,
    /// Also every match, not only the newest `limit` (for grouping).
    pub all: bool,
    /// Remove every match from the ring after reading.
    pub clear: bool,
}

/// What a trace read found.
#[derive(Debug, Clone)]
pub struct TracesView {
    /// The page of matches (see `TraceQuery::since`), oldest first.
    pub shown: Vec<TraceRecord>,
    /// How many matched.
    pub matching: usize,
    /// Every match, when the query asked for all.
    pub all: Option<Vec<TraceRecord>>,
    pub ring: RingStats,
    /// Matches removed by `clear`.
    pub cleared: usize,
}

/// The stop-point ids `bp` stands for: itself, or a family's members and
/// the family id; `None` when no such stop point exists.
pub async fn stop_ids(session: &SessionHandle, bp: &str) -> Option<Vec<String>> {
    let listing = session.stop_points().list().await;
    if let Some(f) = listing.families.iter().find(|f| f.id == bp) {
        let mut ids: Vec<String> = f.members.iter().map(|(id, _)| id.clone()).collect();
        ids.push(f.id.clone());
        return Some(ids);
    }
    listing
        .points
        .iter()
        .any(|p| p.id == bp)
        .then(|| vec![bp.to_string()])
}

/// Reads the snapshots `q` selects; `UnknownStopPoint` when it names a
/// stop point that neither exists nor left snapshots behind.
pub async fn traces(session: &SessionHandle, q: &TraceQuery) -> Result<TracesView, SessionError> {
    session.check_alive()?;
    let log = session.events();
    let stop = q.stop.as_deref().map(str::trim);
    let known = match stop {
        Some(b) => stop_ids(session, b).await,
        None => None,
    };
    let ids = stop.map(|b| known.clone().unwrap_or_else(|| vec![b.to_string()]));
    let pred = |t: &TraceRecord| {
        t.seq > q.since.unwrap_or(0)
            && ids
                .as_ref()
                .is_none_or(|ids| ids.iter().any(|i| **i == *t.stop))
            && q.class_filter
                .as_ref()
                .is_none_or(|c| t.location.contains(c.as_str()))
    };
    // Paging from `since` must go forward: the newest page above it would
    // make the next `since` skip everything between.
    let (shown, matching) = match q.since {
        Some(_) => log.traces_oldest(pred, q.limit.max(1)),
        None => log.traces(pred, q.limit.max(1)),
    };
    if let Some(b) = stop
        && matching == 0
        && known.is_none()
    {
        return Err(ArmError::UnknownStopPoint { id: b.to_string() }.into());
    }
    let all = q.all.then(|| log.traces(pred, usize::MAX).0);
    let ring = log.ring();
    let cleared = if q.clear { log.clear_traces(pred) } else { 0 };
    Ok(TracesView {
        shown,
        matching,
        all,
        ring,
        cleared,
    })
}
