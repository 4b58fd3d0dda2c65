//! What EventDispatch hands to the agent: reportable events (hits that
//! suspended something, and failures worth knowing about) in a bounded
//! queue, and trace snapshots in a bounded ring whose evictions are
//! counted. One sequence numbers both, so `since` works across them.
//! Waiters (`debug_wait_for_event`) are woken on every addition.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::jdwp::{SuspendPolicy, ThreadId};
use crate::lock::lock;
use crate::model::shown::{Detail, HitNote, LocalsGap, Shown};

/// Reportable events kept for `get_last_event`.
pub const EVENT_CAPACITY: usize = 1000;
/// Trace snapshots kept.
pub const TRACE_CAPACITY: usize = 500;

/// A hit (or failure) the agent should hear about.
#[derive(Debug, Clone)]
pub struct HitEvent {
    pub seq: u64,
    pub at: Instant,
    /// The stop point, when one fired.
    pub stop: Option<String>,
    /// `breakpoint`, `exception`, `field-write`, `method-exit`,
    /// `monitor-acquired`, `condition-error`, …
    pub kind: &'static str,
    pub thread: ThreadId,
    pub thread_name: String,
    /// `class.method:line`.
    pub location: String,
    /// Ordered key/value details (exception type and message, catch
    /// location, old → new, return value, duration).
    pub details: Vec<(String, Detail)>,
    /// What the JVM holds for this event.
    pub suspended: SuspendPolicy,
    pub note: Option<HitNote>,
}

/// One trace snapshot.
#[derive(Debug, Clone)]
pub struct TraceRecord {
    pub seq: u64,
    pub at: Instant,
    pub stop: Arc<str>,
    pub thread: ThreadId,
    pub thread_name: Arc<str>,
    pub location: Arc<str>,
    /// Callers, nearest first.
    pub callers: Vec<Arc<str>>,
    /// Locals as read (the names shared with the slots they came from).
    pub locals: Vec<(Arc<str>, Shown)>,
    /// Why locals are missing, when they are.
    pub locals_note: Option<LocalsGap>,
    pub details: Vec<(String, Detail)>,
    /// The hit arrived in a composite that suspended every thread.
    pub overridden: bool,
}

#[derive(Debug, Default)]
struct Inner {
    next_seq: u64,
    events: VecDeque<HitEvent>,
    events_dropped: u64,
    /// Highest event seq shown to the agent.
    reported: u64,
    traces: VecDeque<TraceRecord>,
    /// Per wait scope (a stop id, or "" for every stop): the highest seq a
    /// wait returned, or where its first wait began, so the next wait
    /// returns what follows and never the same snapshot twice.
    cursors: HashMap<String, Cursor>,
    evicted: u64,
    captured_total: u64,
    /// Snapshots the ring evicted, per stop.
    evicted_by: HashMap<Arc<str>, u64>,
    /// The newest runs of snapshots a probe's drain passed over unread:
    /// (stop, first seq, how many).
    passed_over: VecDeque<(Arc<str>, u64, u64)>,
}

/// How many runs of passed-over snapshots are remembered for the skip
/// counts of waits (a probe's drain passes over one run a round at most).
const PASSED_OVER_RUNS: usize = 256;

/// Where a wait scope stands: the seq it returned (or began at), and
/// per stop the evictions so far and the snapshots at or below that seq
/// still in the ring, which the ring evicts before any later one.
#[derive(Debug, Clone, Default)]
struct Cursor {
    seq: u64,
    evicted: HashMap<Arc<str>, u64>,
    older: HashMap<Arc<str>, u64>,
}

impl Inner {
    fn cursor_at(&self, seq: u64) -> Cursor {
        let mut older: HashMap<Arc<str>, u64> = HashMap::new();
        for t in self.traces.iter().take_while(|t| t.seq <= seq) {
            *older.entry(t.stop.clone()).or_default() += 1;
        }
        Cursor {
            seq,
            evicted: self.evicted_by.clone(),
            older,
        }
    }

    /// Snapshots of the stops `in_scope` accepts, after the cursor and
    /// below `upto`, that no wait can return any more: evicted by the ring
    /// or passed over by a probe's drain.
    fn skipped(&self, c: &Cursor, in_scope: &dyn Fn(&str) -> bool, upto: u64) -> u64 {
        let evicted: u64 = self
            .evicted_by
            .iter()
            .filter(|(stop, _)| in_scope(stop))
            .map(|(stop, n)| {
                let before = c.evicted.get(stop).copied().unwrap_or(0)
                    + c.older.get(stop).copied().unwrap_or(0);
                n.saturating_sub(before)
            })
            .sum();
        let passed: u64 = self
            .passed_over
            .iter()
            .filter(|(stop, first, _)| in_scope(stop) && *first > c.seq && *first < upto)
            .map(|(_, _, n)| *n)
            .sum();
        evicted + passed
    }
}

/// Counters of the trace ring.
#[derive(Debug, Clone, Copy, Default)]
pub struct RingStats {
    pub held: usize,
    pub capacity: usize,
    pub evicted: u64,
    pub captured_total: u64,
}

/// The session's event log.
#[derive(Debug)]
pub struct EventLog {
    inner: Mutex<Inner>,
    changed: tokio::sync::watch::Sender<u64>,
    pub created: Instant,
    trace_capacity: usize,
}

impl Default for EventLog {
    fn default() -> Self {
        Self::new(TRACE_CAPACITY)
    }
}

fn set_detail(details: &mut Vec<(String, Detail)>, key: &str, value: Detail) {
    match details.iter_mut().find(|(k, _)| k == key) {
        Some(d) => d.1 = value,
        None => details.push((key.to_string(), value)),
    }
}

impl EventLog {
    pub fn new(trace_capacity: usize) -> Self {
        Self {
            inner: Mutex::new(Inner::default()),
            changed: tokio::sync::watch::channel(0).0,
            created: Instant::now(),
            trace_capacity: trace_capacity.max(1),
        }
    }

    /// Adds a reportable event; returns its sequence number.
    pub fn push_event(&self, mut e: HitEvent) -> u64 {
        let seq = {
            let mut g = lock(&self.inner);
            g.next_seq += 1;
            e.seq = g.next_seq;
            if g.events.len() == EVENT_CAPACITY {
                g.events.pop_front();
                g.events_dropped += 1;
            }
            g.events.push_back(e);
            g.next_seq
        };
        self.wake(seq);
        seq
    }

    /// Adds a trace snapshot, evicting the oldest when the ring is full.
    pub fn push_trace(&self, mut t: TraceRecord) -> u64 {
        let seq = {
            let mut g = lock(&self.inner);
            g.next_seq += 1;
            t.seq = g.next_seq;
            if g.traces.len() >= self.trace_capacity
                && let Some(old) = g.traces.pop_front()
            {
                g.evicted += 1;
                *g.evicted_by.entry(old.stop).or_default() += 1;
            }
            g.traces.push_back(t);
            g.captured_total += 1;
            g.next_seq
        };
        self.wake(seq);
        seq
    }

    /// Counts `n` snapshots captured but never held: a probe's drain
    /// reads only as many of a round's records as the ring can hold, and
    /// the older ones would have been evicted in the same round. They take
    /// sequence numbers and count as captured and evicted, as if pushed.
    pub fn pass_over(&self, stop: &str, n: u64) {
        if n == 0 {
            return;
        }
        let mut g = lock(&self.inner);
        let first = g.next_seq + 1;
        if g.passed_over.len() >= PASSED_OVER_RUNS {
            g.passed_over.pop_front();
        }
        g.passed_over.push_back((stop.into(), first, n));
        g.next_seq += n;
        g.captured_total += n;
        g.evicted += n;
    }

    /// Wakes waiters, if there are any (a trace storm must not pay for a
    /// notification nobody reads).
    fn wake(&self, seq: u64) {
        if self.changed.receiver_count() > 0 {
            self.changed.send_replace(seq);
        }
    }

    /// Sets detail `key` of trace record `seq` (still in the ring) to
    /// `value`: a later fact about a hit already recorded.
    pub fn amend_trace(&self, seq: u64, key: &str, value: Detail) {
        let mut g = lock(&self.inner);
        if let Ok(i) = g.traces.binary_search_by_key(&seq, |t| t.seq) {
            set_detail(&mut g.traces[i].details, key, value);
        }
    }

    /// Sets detail `key` of buffered event `seq` to `value`.
    pub fn amend_event(&self, seq: u64, key: &str, value: Detail) {
        let mut g = lock(&self.inner);
        if let Ok(i) = g.events.binary_search_by_key(&seq, |e| e.seq) {
            set_detail(&mut g.events[i].details, key, value);
        }
    }

    /// A resume released every thread: buffered events up to `upto` that
    /// the agent has not read, and that said something was suspended, no
    /// longer hold anything. Returns how many were marked.
    pub fn release_unread(&self, upto: u64) -> usize {
        let mut g = lock(&self.inner);
        let reported = g.reported;
        let mut n = 0;
        for e in g.events.iter_mut() {
            if e.seq > reported && e.seq <= upto && e.suspended != SuspendPolicy::None {
                e.suspended = SuspendPolicy::None;
                e.note = Some(HitNote::ReleasedUnread);
                n += 1;
            }
        }
        n
    }

    /// The newest event and how many are buffered (the newest included).
    pub fn last(&self) -> (Option<HitEvent>, usize, u64) {
        let g = lock(&self.inner);
        (g.events.back().cloned(), g.events.len(), g.events_dropped)
    }

    /// The oldest `limit` buffered events, oldest first.
    pub fn oldest(&self, limit: usize) -> Vec<HitEvent> {
        lock(&self.inner)
            .events
            .iter()
            .take(limit)
            .cloned()
            .collect()
    }

    /// Discards the oldest `n` buffered events (all when `None`).
    pub fn drain(&self, n: Option<usize>) -> usize {
        let mut g = lock(&self.inner);
        let n = n.unwrap_or(g.events.len()).min(g.events.len());
        g.events.drain(..n);
        n
    }

    /// Notes that the agent has seen events up to `seq`.
    pub fn mark_reported(&self, seq: u64) {
        let mut g = lock(&self.inner);
        g.reported = g.reported.max(seq);
    }

    pub fn reported(&self) -> u64 {
        lock(&self.inner).reported
    }

    /// Buffered events above `lo` and below `hi` matching `pred` that a
    /// resume released before they were read, oldest first.
    pub fn released_unread(
        &self,
        lo: u64,
        hi: u64,
        pred: &(dyn Fn(&HitEvent) -> bool + Sync),
    ) -> Vec<HitEvent> {
        lock(&self.inner)
            .events
            .iter()
            .filter(|e| e.seq > lo && e.seq < hi && e.note == Some(HitNote::ReleasedUnread))
            .filter(|e| pred(e))
            .cloned()
            .collect()
    }

    /// The newest buffered event the agent has read, if still buffered.
    pub fn last_read(&self) -> Option<HitEvent> {
        let g = lock(&self.inner);
        let seq = g.reported;
        g.events.iter().rev().find(|e| e.seq <= seq).cloned()
    }

    /// The newest buffered event of `thread` that holds it.
    pub fn holding(&self, thread: ThreadId) -> Option<HitEvent> {
        lock(&self.inner)
            .events
            .iter()
            .rev()
            .find(|e| e.thread == thread && e.suspended != SuspendPolicy::None)
            .cloned()
    }

    /// Where a wait of `scope` starts: above `since` when given; else
    /// events not shown yet, and snapshots after the last one a wait of
    /// this scope returned (the first wait: those arriving from now on,
    /// not the whole ring).
    pub fn wait_from(&self, scope: &str, since: Option<u64>) -> WaitFrom {
        let mut g = lock(&self.inner);
        if let Some(s) = since {
            return WaitFrom::above(s);
        }
        let traces = match g.cursors.get(scope) {
            Some(c) => c.seq,
            None => {
                let now = g.next_seq;
                let c = g.cursor_at(now);
                g.cursors.insert(scope.to_string(), c);
                now
            }
        };
        WaitFrom {
            events: g.reported,
            traces,
        }
    }

    /// How many snapshots of the stops `in_scope` accepts a wait of
    /// `scope` passes over below `upto` (the seq it returns; `u64::MAX`
    /// when it returns none): the ring evicted them, or a probe's drain
    /// passed over them, before any wait read them.
    pub fn skipped(&self, scope: &str, in_scope: &dyn Fn(&str) -> bool, upto: u64) -> u64 {
        let g = lock(&self.inner);
        g.cursors
            .get(scope)
            .map_or(0, |c| g.skipped(c, in_scope, upto))
    }

    /// Notes that stop point (or family) `id` was armed when the newest
    /// sequence number was `from`: a wait for it starts there, so its
    /// first snapshot is the first one after arming, not the first one
    /// after the wait began.
    pub fn note_armed(&self, id: &str, from: u64) {
        let mut g = lock(&self.inner);
        let c = g.cursor_at(from);
        g.cursors.insert(id.to_string(), c);
    }

    /// Notes that a wait of `scope` returned `seq`.
    pub fn mark_waited(&self, scope: &str, seq: u64) {
        let mut g = lock(&self.inner);
        if g.cursors.get(scope).is_none_or(|c| c.seq < seq) {
            let c = g.cursor_at(seq);
            g.cursors.insert(scope.to_string(), c);
        }
    }

    /// The newest sequence number handed out.
    pub fn latest_seq(&self) -> u64 {
        lock(&self.inner).next_seq
    }

    /// Trace records matching `pred`, oldest first, at most `limit`
    /// (the newest ones when more match).
    pub fn traces(
        &self,
        pred: impl Fn(&TraceRecord) -> bool,
        limit: usize,
    ) -> (Vec<TraceRecord>, usize) {
        let g = lock(&self.inner);
        let all: Vec<&TraceRecord> = g.traces.iter().filter(|t| pred(t)).collect();
        let total = all.len();
        let skip = total.saturating_sub(limit);
        (all.into_iter().skip(skip).cloned().collect(), total)
    }

    /// Trace records matching `pred`, oldest first, at most `limit` of
    /// the oldest (a page forward from where `pred` starts), and how many
    /// match.
    pub fn traces_oldest(
        &self,
        pred: impl Fn(&TraceRecord) -> bool,
        limit: usize,
    ) -> (Vec<TraceRecord>, usize) {
        let g = lock(&self.inner);
        let mut total = 0;
        let mut page = Vec::new();
        for t in g.traces.iter().filter(|t| pred(t)) {
            total += 1;
            if page.len() < limit {
                page.push(t.clone());
            }
        }
        (page, total)
    }

    /// Removes trace records matching `pred`; returns how many.
    pub fn clear_traces(&self, pred: impl Fn(&TraceRecord) -> bool) -> usize {
        let mut g = lock(&self.inner);
        let before = g.traces.len();
        g.traces.retain(|t| !pred(t));
        before - g.traces.len()
    }

    pub fn ring(&self) -> RingStats {
        let g = lock(&self.inner);
        RingStats {
            held: g.traces.len(),
            capacity: self.trace_capacity,
            evicted: g.evicted,
            captured_total: g.captured_total,
        }
    }

    /// The first event after `from.events` that `pred` accepts, or the
    /// first trace after `from.traces` that `trace_pred` accepts, whichever
    /// came first: a cursor moved to what is returned then skips nothing.
    fn find_after(
        &self,
        from: WaitFrom,
        pred: &(dyn Fn(&HitEvent) -> bool + Sync),
        trace_pred: Option<&(dyn Fn(&TraceRecord) -> bool + Sync)>,
    ) -> Option<Found> {
        let g = lock(&self.inner);
        let event = g.events.iter().find(|e| e.seq > from.events && pred(e));
        let trace =
            trace_pred.and_then(|tp| g.traces.iter().find(|t| t.seq > from.traces && tp(t)));
        match (event, trace) {
            (Some(e), Some(t)) if t.seq < e.seq => Some(Found::Trace(t.clone())),
            (Some(e), _) => Some(Found::Event(e.clone())),
            (None, Some(t)) => Some(Found::Trace(t.clone())),
            (None, None) => None,
        }
    }

    /// Waits up to `limit` for an event (or, with `trace_pred`, a trace)
    /// newer than `from`. `tick` is called about every `every` while
    /// waiting (progress notifications).
    pub async fn wait_after(
        &self,
        from: WaitFrom,
        pred: &(dyn Fn(&HitEvent) -> bool + Sync),
        trace_pred: Option<&(dyn Fn(&TraceRecord) -> bool + Sync)>,
        limit: Duration,
        every: Duration,
        tick: &mut (dyn FnMut(Duration) + Send),
    ) -> Option<Found> {
        let start = Instant::now();
        let deadline = start + limit;
        let mut rx = self.changed.subscribe();
        loop {
            rx.borrow_and_update();
            if let Some(found) = self.find_after(from, pred, trace_pred) {
                return Some(found);
            }
            let now = Instant::now();
            if now >= deadline {
                return None;
            }
            let step = every.min(deadline - now);
            match tokio::time::timeout(step, rx.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) => return None,
                Err(_) => tick(start.elapsed()),
            }
        }
    }
}

/// The sequence numbers a wait starts above, one for events and one for
/// trace snapshots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitFrom {
    pub events: u64,
    pub traces: u64,
}

impl WaitFrom {
    /// Both above `seq`.
    pub fn above(seq: u64) -> Self {
        Self {
            events: seq,
            traces: seq,
        }
    }
}

/// What a wait found.
#[derive(Debug, Clone)]
pub enum Found {
    Event(HitEvent),
    Trace(TraceRecord),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: &'static str) -> HitEvent {
        HitEvent {
            seq: 0,
            at: Instant::now(),
            stop: Some("bp_1".into()),
            kind,
            thread: ThreadId(1),
            thread_name: "main".into(),
            location: "A.m:1".into(),
            details: Vec::new(),
            suspended: SuspendPolicy::All,
            note: None,
        }
    }

    fn trace(stop: &str) -> TraceRecord {
        TraceRecord {
            seq: 0,
            at: Instant::now(),
            stop: stop.into(),
            thread: ThreadId(1),
            thread_name: "t".into(),
            location: "A.m:1".into(),
            callers: Vec::new(),
            locals: Vec::new(),
            locals_note: None,
            details: Vec::new(),
            overridden: false,
        }
    }

    #[test]
    fn events_queue_oldest_first_and_drain() {
        let log = EventLog::new(3);
        log.push_event(event("breakpoint"));
        let s2 = log.push_event(event("exception"));
        let (last, pending, _) = log.last();
        assert_eq!(last.map(|e| e.seq), Some(s2));
        assert_eq!(pending, 2);
        assert_eq!(log.oldest(1)[0].kind, "breakpoint");
        assert_eq!(log.drain(Some(1)), 1);
        assert_eq!(log.oldest(5)[0].kind, "exception");
        assert_eq!(log.drain(None), 1);
        assert_eq!(log.last().1, 0);
    }

    #[test]
    fn snapshots_passed_over_count_as_captured_and_evicted() {
        let log = EventLog::new(2);
        log.push_trace(trace("bp_1"));
        log.pass_over("bp_1", 5);
        let s = log.push_trace(trace("bp_1"));
        let r = log.ring();
        assert_eq!((r.held, r.evicted, r.captured_total), (2, 5, 7));
        // The passed-over ones took sequence numbers: the next is 7.
        assert_eq!(s, 7);
    }

    #[test]
    fn waits_for_a_stop_point_start_at_its_arming_and_ascend() {
        let log = EventLog::new(8);
        log.push_trace(trace("bp_0"));
        log.note_armed("bp_1", log.latest_seq());
        let first = log.push_trace(trace("bp_1"));
        let second = log.push_trace(trace("bp_1"));
        // The wait begins after both: it still starts at the first.
        let from = log.wait_from("bp_1", None);
        let pred = |t: &TraceRecord| &*t.stop == "bp_1";
        let never = |_: &HitEvent| false;
        let Some(Found::Trace(t)) = log.find_after(from, &never, Some(&pred)) else {
            panic!("the first snapshot after arming");
        };
        assert_eq!(t.seq, first);
        log.mark_waited("bp_1", t.seq);
        let from = log.wait_from("bp_1", None);
        let Some(Found::Trace(t)) = log.find_after(from, &never, Some(&pred)) else {
            panic!("the next snapshot");
        };
        assert_eq!(t.seq, second);
    }

    #[test]
    fn a_wait_counts_the_snapshots_it_skips_and_no_others() {
        let log = EventLog::new(4);
        let never = |_: &HitEvent| false;
        let pred = |t: &TraceRecord| &*t.stop == "bp_1";
        let in_scope = |s: &str| s == "bp_1";
        // Two older snapshots sit in the ring when bp_1 is armed.
        log.push_trace(trace("bp_1"));
        log.push_trace(trace("bp_2"));
        log.note_armed("bp_1", log.latest_seq());
        let first = log.push_trace(trace("bp_1"));
        let from = log.wait_from("bp_1", None);
        let Some(Found::Trace(t)) = log.find_after(from, &never, Some(&pred)) else {
            panic!("the first snapshot after arming");
        };
        assert_eq!(t.seq, first);
        assert_eq!(log.skipped("bp_1", &in_scope, t.seq), 0);
        log.mark_waited("bp_1", t.seq);
        // Six more of bp_1 in a ring of four: the older ring entries go
        // first (not skips), then two of the new ones do.
        let mut seqs = Vec::new();
        for _ in 0..6 {
            seqs.push(log.push_trace(trace("bp_1")));
        }
        let from = log.wait_from("bp_1", None);
        let Some(Found::Trace(t)) = log.find_after(from, &never, Some(&pred)) else {
            panic!("the oldest snapshot still held");
        };
        assert_eq!(t.seq, seqs[2]);
        assert_eq!(log.skipped("bp_1", &in_scope, t.seq), 2);
        assert_eq!(log.skipped("bp_2", &|s| s == "bp_2", u64::MAX), 0);
        log.mark_waited("bp_1", t.seq);
        // A drain's pass-over is a skip of the next wait, not of this one.
        log.pass_over("bp_1", 3);
        let after = log.push_trace(trace("bp_1"));
        assert_eq!(log.skipped("bp_1", &in_scope, seqs[3]), 0);
        assert_eq!(log.skipped("bp_1", &in_scope, after), 3);
    }

    #[test]
    fn the_ring_evicts_and_counts() {
        let log = EventLog::new(2);
        for stop in ["bp_1", "bp_2", "bp_1"] {
            log.push_trace(trace(stop));
        }
        let r = log.ring();
        assert_eq!((r.held, r.evicted, r.captured_total), (2, 1, 3));
        let (only, total) = log.traces(|t| &*t.stop == "bp_1", 10);
        assert_eq!((only.len(), total), (1, 1));
        assert_eq!(log.clear_traces(|_| true), 2);
    }

    #[test]
    fn amending_sets_or_replaces_a_detail_of_a_kept_record() {
        let log = EventLog::new(2);
        let first = log.push_trace(trace("exc_1"));
        let second = log.push_trace(trace("exc_1"));
        log.amend_trace(second, "rethrown", Detail::Text("1×".into()));
        log.amend_trace(second, "rethrown", Detail::Text("2×".into()));
        // Evicted: amending it changes nothing.
        log.push_trace(trace("exc_1"));
        log.amend_trace(first, "rethrown", Detail::Text("lost".into()));
        let (kept, _) = log.traces(|_| true, 10);
        assert_eq!(
            kept[0].details,
            vec![("rethrown".to_string(), Detail::Text("2×".into()))]
        );
        assert!(kept[1].details.is_empty());
        let e = log.push_event(event("exception"));
        log.amend_event(e, "rethrown", Detail::Text("1×".into()));
        assert_eq!(log.oldest(1)[0].details.len(), 1);
    }

    #[tokio::test]
    async fn waiters_wake_on_new_events() {
        let log = std::sync::Arc::new(EventLog::new(4));
        let before = log.latest_seq();
        let l2 = log.clone();
        let pushed = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            l2.push_event(event("breakpoint"));
        });
        let mut ticks = 0;
        let found = log
            .wait_after(
                WaitFrom::above(before),
                &|_| true,
                None,
                Duration::from_secs(5),
                Duration::from_millis(5),
                &mut |_| ticks += 1,
            )
            .await;
        assert!(matches!(found, Some(Found::Event(_))));
        let _ = pushed.await;
        let none = log
            .wait_after(
                WaitFrom::above(log.latest_seq()),
                &|_| true,
                None,
                Duration::from_millis(30),
                Duration::from_millis(10),
                &mut |_| {},
            )
            .await;
        assert!(none.is_none());
    }
}
