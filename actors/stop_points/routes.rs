//! The routing table EventDispatch reads on every event: which stop point a
//! JDWP request id belongs to, and the live counters of each stop point.
//! The registry is its only writer; it publishes a new immutable table
//! after every change, so a reader never waits on an arm in progress.
//!
//! Request ids are keyed with their event kind and removed from the table
//! the moment they are cleared; a late event for a cleared request is
//! recognised as "retired" (ours, to be resumed), never routed to whatever
//! reuses the number.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use super::exprs::StopExprs;
use crate::jdwp::{EventKind, RequestId};
use crate::model::overhead::{INTERPRETED_SHARE, Meter, Overspent, Scope};
use crate::model::stop_point::{FamilyId, StopPointId, StopPointSpec};

mod probe;

pub use probe::{ProbeCost, ProbeMeter};

/// How many cleared request ids are remembered as ours.
const RETIRED_MEMORY: usize = 4096;

/// A JDWP event request: its kind and the id the JVM gave it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RequestKey {
    pub kind: EventKind,
    pub id: RequestId,
}

impl RequestKey {
    pub fn new(kind: EventKind, id: RequestId) -> Self {
        Self { kind, id }
    }
}

/// The event kind a request's events carry (`MethodExitWithReturnValue`
/// requests deliver events of the same kind, and so on: JDWP keeps them
/// one to one).
pub fn key_of(event: &crate::jdwp::Event) -> RequestKey {
    RequestKey::new(event.kind(), event.request_id())
}

/// One stop point as EventDispatch needs it: its id, definition (as armed)
/// and counters.
#[derive(Debug)]
pub struct Target {
    pub id: StopPointId,
    /// The id as shared text, for records (no allocation per hit).
    pub name: Arc<str>,
    pub spec: Arc<StopPointSpec>,
    /// `spec`'s condition and trace expressions, compiled when it was.
    pub exprs: Arc<StopExprs>,
    pub stats: Arc<Stats>,
    /// The hit count is checked here (several requests share one count).
    pub count_here: Option<u32>,
    /// Its hits arrive in a suspending probe's trap (a method of the
    /// probe's helper): the condition already passed in the JVM, and the
    /// hit thread steps back out into the probed method before anything
    /// is read or reported.
    pub trap: bool,
}

/// What a request is for: one row of the table.
#[derive(Debug, Clone)]
pub enum Route {
    /// A request whose events are hits. `jvm_count` when it carries a JDWP
    /// `Count`: it fires once and the JVM deletes it.
    Hit {
        target: Arc<Target>,
        jvm_count: bool,
    },
    /// A class-prepare watch: a class the stop point waits for was loaded.
    Watch { point: StopPointId },
    /// A family's class-prepare watch: a class its pattern may match was
    /// loaded.
    FamilyWatch { family: FamilyId },
}

/// An immutable routing table.
#[derive(Debug, Default, Clone)]
pub struct Routes {
    map: HashMap<RequestKey, Route>,
    retired: HashSet<RequestKey>,
    retired_order: VecDeque<RequestKey>,
}

/// What an event's request id means.
#[derive(Debug, Clone)]
pub enum Lookup<'a> {
    Live(&'a Route),
    /// A request of ours that was cleared; its late events are ours to
    /// release.
    Retired,
    /// Not a request of ours.
    Foreign,
}

impl Routes {
    pub fn lookup(&self, key: &RequestKey) -> Lookup<'_> {
        match self.map.get(key) {
            Some(r) => Lookup::Live(r),
            None if self.retired.contains(key) => Lookup::Retired,
            None => Lookup::Foreign,
        }
    }

    pub fn insert(&mut self, key: RequestKey, route: Route) {
        self.retired.remove(&key);
        self.map.insert(key, route);
    }

    /// Removes a live request and remembers it as retired.
    pub fn retire(&mut self, key: &RequestKey) {
        self.map.remove(key);
        if self.retired.insert(*key) {
            self.retired_order.push_back(*key);
            while self.retired_order.len() > RETIRED_MEMORY {
                if let Some(old) = self.retired_order.pop_front() {
                    self.retired.remove(&old);
                }
            }
        }
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn keys(&self) -> impl Iterator<Item = &RequestKey> {
        self.map.keys()
    }
}

/// The published table: readers take the current `Arc`, the registry
/// swaps in a new one.
///
/// Arming has a window: the JVM can report a hit of a request before the
/// registry has published the route for it (the `Set` reply and the event
/// race to different actors). So the registry opens an arming window before
/// it sends any `Set` and closes it after publishing; a reader that finds an
/// unknown request while a window is open waits for it to close and looks
/// again, instead of mistaking our own event for someone else's and leaving
/// its thread suspended.
#[derive(Debug)]
pub struct RouteTable {
    current: RwLock<Arc<Routes>>,
    arming: tokio::sync::watch::Sender<usize>,
}

impl Default for RouteTable {
    fn default() -> Self {
        Self {
            current: RwLock::new(Arc::new(Routes::default())),
            arming: tokio::sync::watch::channel(0).0,
        }
    }
}

/// An open arming window; closing it (dropping) lets waiting readers look
/// again. Publish before dropping it.
pub struct Arming {
    table: Arc<RouteTable>,
}

impl Drop for Arming {
    fn drop(&mut self) {
        self.table.arming.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl RouteTable {
    pub fn load(&self) -> Arc<Routes> {
        self.current
            .read()
            .map(|g| g.clone())
            .unwrap_or_else(|p| p.into_inner().clone())
    }

    pub fn store(&self, routes: Routes) {
        let routes = Arc::new(routes);
        match self.current.write() {
            Ok(mut g) => *g = routes,
            Err(p) => *p.into_inner() = routes,
        }
    }

    /// Opens an arming window.
    pub fn arming(self: &Arc<Self>) -> Arming {
        self.arming.send_modify(|n| *n += 1);
        Arming {
            table: self.clone(),
        }
    }

    /// True while some arm is between its first `Set` and its publication.
    pub fn is_arming(&self) -> bool {
        *self.arming.borrow() > 0
    }

    /// Waits until no arming window is open.
    pub async fn settled(&self) {
        let mut rx = self.arming.subscribe();
        let _ = rx.wait_for(|n| *n == 0).await;
    }
}

/// Live counters of one stop point, shared by the registry (which lists
/// them) and EventDispatch (which counts). Cumulative across re-arming.
#[derive(Debug, Default)]
pub struct Stats {
    /// Hits the JVM reported (after our method filter; conditions do not
    /// reduce it).
    pub hits: AtomicU64,
    /// One thread's time charged for the JVM running interpreted while it
    /// was armed (a method-exit or field watch over the wire), in ns.
    pub interpreted_nanos: AtomicU64,
    /// Trace records written.
    pub captured: AtomicU64,
    /// Captures charged to `trace_max_hits` since the last arm: what
    /// admits a capture (a charge is taken before the capture is made,
    /// and over-budget tries are counted too). Replies show
    /// [`Stats::budget_used`], the captures made since the last arm.
    pub charged: AtomicU64,
    /// `captured` when the budget last started (the last arm).
    captured_at_arm: AtomicU64,
    /// Hits resumed uncaptured because the budget was used up.
    pub over_budget: AtomicU64,
    /// Method exits of other methods, dropped here.
    pub discarded: AtomicU64,
    /// Monitor pairs shorter than `min_duration_ms`.
    pub below_threshold: AtomicU64,
    /// Rethrows of an exception instance already reported, folded into
    /// its report instead of counted as hits.
    pub rethrows: AtomicU64,
    /// Traced hits that arrived in a composite that suspended every thread.
    pub overridden: AtomicU64,
    /// Hits counted towards a hit count checked here.
    pub counted: AtomicU64,
    /// Conditions that could not be evaluated.
    pub condition_errors: AtomicU64,
    /// Conditions that were false.
    pub condition_false: AtomicU64,
    /// Conditions that were true (the hit went on).
    pub condition_passed: AtomicU64,
    /// Suspension-free hits counted but not recorded because EventDispatch
    /// lagged behind the event stream (nothing was held for them).
    pub shed: AtomicU64,
    /// What a probe measured in the JVM (zero for the wire).
    pub probe: ProbeMeter,
    capture_nanos: AtomicU64,
    capture_count: AtomicU64,
    /// Holds of hits that went no further (a false condition, a hit count
    /// not reached, a budget used up): the thread was held all the same.
    check_nanos: AtomicU64,
    check_count: AtomicU64,
    /// Every hold over the overhead guard's window.
    meter: Mutex<Meter>,
    /// Set when the overhead guard paused it, until it is re-armed.
    paused: Mutex<Option<Overspent>>,
    /// Hold times of snapshots and checks, bucketed (see [`hold_bucket`]).
    holds: [AtomicU64; HOLD_BUCKETS],
    window: Mutex<Window>,
    last_error: Mutex<Option<String>>,
    /// The condition's operands as last read on a false evaluation, and
    /// when (read at most every [`OPERANDS_EVERY`]).
    last_operands: Mutex<Option<(Instant, Operands)>>,
    /// Condition errors in a row, since the last evaluation that worked.
    consecutive_errors: AtomicU64,
    /// Set once the stop point was disabled for failing its condition
    /// [`CONDITION_ERROR_LIMIT`] times in a row.
    stopped_by_errors: std::sync::atomic::AtomicBool,
}

/// `at` as the overhead meters count time: from one origin per process.
pub fn since_origin(at: Instant) -> Duration {
    static ORIGIN: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    at.saturating_duration_since(*ORIGIN.get_or_init(Instant::now))
}

/// Condition errors in a row after which a stop point disables itself: a
/// condition that cannot be evaluated costs every hit a hold and answers
/// nothing.
pub const CONDITION_ERROR_LIMIT: u64 = 20;

/// A condition's operands and their values, as source text and rendering.
pub type Operands = Vec<(String, crate::model::shown::Detail)>;

/// How often a false condition's operands are read back for diagnosis:
/// each read costs the hit a few round trips.
pub const OPERANDS_EVERY: Duration = Duration::from_millis(500);

#[derive(Debug, Default, Clone, Copy)]
struct Window {
    first: Option<Instant>,
    last: Option<Instant>,
}

/// Buckets of the hold-time histogram: the first holds everything under
/// 10 µs, each next one is 1.5 times wider, the last everything above.
pub const HOLD_BUCKETS: usize = 32;
const HOLD_BASE_NANOS: f64 = 10_000.0;
const HOLD_GROWTH: f64 = 1.5;

/// The bucket a hold falls in. Public so that a bench can put exact
/// samples through the same buckets and compare quantiles like with like.
pub fn hold_bucket(d: Duration) -> usize {
    let n = d.as_nanos() as f64;
    if n < HOLD_BASE_NANOS {
        return 0;
    }
    let i = ((n / HOLD_BASE_NANOS).ln() / HOLD_GROWTH.ln()).floor() as usize + 1;
    i.min(HOLD_BUCKETS - 1)
}

/// The upper bound of a bucket.
fn bucket_bound(i: usize) -> Duration {
    Duration::from_nanos((HOLD_BASE_NANOS * HOLD_GROWTH.powi(i as i32)) as u64)
}

/// The upper bound of the bucket below which a share `q` of the counted
/// holds fell (`counts[i]`: holds in bucket `i`, see [`hold_bucket`]).
pub fn bucketed_quantile(counts: &[u64], q: f64) -> Option<Duration> {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return None;
    }
    let want = ((total as f64) * q).ceil().max(1.0) as u64;
    let mut seen = 0;
    for (i, c) in counts.iter().enumerate() {
        seen += c;
        if seen >= want {
            return Some(bucket_bound(i));
        }
    }
    Some(bucket_bound(counts.len().saturating_sub(1)))
}

/// A reading of the cost counters.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cost {
    /// Mean time a thread was held per capture.
    pub mean_capture: Option<Duration>,
    /// Holds for hits that went no further (condition checks and the like),
    /// and their mean.
    pub checks: u64,
    pub mean_check: Option<Duration>,
    /// Mean hold over every held hit, snapshots and checks alike.
    pub mean_hold: Option<Duration>,
    /// Hits per second between the first and the last hit.
    pub rate: Option<f64>,
    /// Hold time (snapshots and checks) over wall time since the first
    /// hit, as a share of one thread's time (summed over concurrent holds,
    /// so it can pass 100%).
    pub busy_share: Option<f64>,
    /// The same share over the overhead guard's window only.
    pub recent_share: Option<f64>,
    /// The wall time `recent_share` was taken over (the window, or less
    /// while the meter is young).
    pub recent_window: Option<Duration>,
    /// Median and 99th percentile hold time (bucket upper bounds, ±25%).
    pub p50: Option<Duration>,
    pub p99: Option<Duration>,
    /// One thread's time charged for running the JVM interpreted.
    pub interpreted: Option<Duration>,
}

impl Stats {
    /// Counts a hit that arrived at `at`.
    pub fn hit(&self, at: Instant) {
        self.hits.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut w) = self.window.lock() {
            if w.first.is_none() {
                w.first = Some(at);
            }
            w.last = Some(at);
        }
    }

    /// Charges one capture to a budget of `max` (0 = none); false when the
    /// budget is already used up. The second value is true for the capture
    /// that used the last unit.
    pub fn charge(&self, max: u32) -> (bool, bool) {
        if max == 0 {
            self.charged.fetch_add(1, Ordering::Relaxed);
            return (true, false);
        }
        let n = self.charged.fetch_add(1, Ordering::Relaxed) + 1;
        if n <= u64::from(max) {
            (true, n == u64::from(max))
        } else {
            self.over_budget.fetch_add(1, Ordering::Relaxed);
            (false, false)
        }
    }

    /// Charges `armed` of wall time during which HotSpot ran every thread
    /// interpreted for it: [`INTERPRETED_SHARE`] of one thread's time (a
    /// floor: one busy application thread, several times slower, and no
    /// hold to show for it).
    pub fn interpreted_for(&self, armed: Duration) {
        let d = armed.mul_f64(INTERPRETED_SHARE);
        self.interpreted_nanos
            .fetch_add(d.as_nanos() as u64, Ordering::Relaxed);
        if !d.is_zero()
            && let Ok(mut m) = self.meter.lock()
        {
            m.charge(since_origin(Instant::now()), d);
        }
    }

    /// Records how long a thread was held for one capture.
    pub fn captured_in(&self, held: Duration) {
        self.captured.fetch_add(1, Ordering::Relaxed);
        self.capture_nanos
            .fetch_add(held.as_nanos() as u64, Ordering::Relaxed);
        self.capture_count.fetch_add(1, Ordering::Relaxed);
        self.held(held);
    }

    /// Records how long a thread was held for a hit that went no further:
    /// its condition was false or failed, its count was not reached, its
    /// budget was used up.
    pub fn checked_in(&self, held: Duration) {
        self.check_nanos
            .fetch_add(held.as_nanos() as u64, Ordering::Relaxed);
        self.check_count.fetch_add(1, Ordering::Relaxed);
        self.held(held);
    }

    fn held(&self, held: Duration) {
        self.holds[hold_bucket(held)].fetch_add(1, Ordering::Relaxed);
        if !held.is_zero()
            && let Ok(mut m) = self.meter.lock()
        {
            m.charge(since_origin(Instant::now()), held);
        }
    }

    /// `Some`, once, when the holds over the guard's window are past
    /// `budget_pct`: the caller pauses the stop point.
    pub fn over_budget(&self, now: Instant, budget_pct: u32) -> Option<Overspent> {
        let over = self
            .meter
            .lock()
            .ok()?
            .over(since_origin(now), budget_pct, Scope::StopPoint)?;
        self.pause(over)
    }

    /// The share of one thread's time held over the guard's window.
    pub fn recent_share(&self, now: Instant) -> Option<f64> {
        self.meter.lock().ok()?.share(since_origin(now))
    }

    /// Marks it paused by the guard; `None` when it already was (so a
    /// pause is acted on once).
    pub fn pause(&self, over: Overspent) -> Option<Overspent> {
        let mut p = self.paused.lock().ok()?;
        if p.is_some() {
            return None;
        }
        *p = Some(over);
        Some(over)
    }

    /// The guard's pause, while it lasts.
    pub fn paused(&self) -> Option<Overspent> {
        self.paused.lock().ok().and_then(|p| *p)
    }

    /// Re-armed: a new window, and no pause.
    pub fn restart_guard(&self) {
        if let Ok(mut m) = self.meter.lock() {
            m.reset();
        }
        if let Ok(mut p) = self.paused.lock() {
            *p = None;
        }
    }

    /// The hold time below which a share `q` of captures fell.
    pub fn hold_quantile(&self, q: f64) -> Option<Duration> {
        let counts: Vec<u64> = self
            .holds
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect();
        bucketed_quantile(&counts, q)
    }

    pub fn note_error(&self, e: String) {
        if let Ok(mut l) = self.last_error.lock() {
            *l = Some(e);
        }
    }

    /// A condition failed to evaluate; true exactly once, when this makes
    /// [`CONDITION_ERROR_LIMIT`] in a row (the caller disables the stop
    /// point).
    pub fn condition_failed(&self, e: String) -> bool {
        self.condition_errors.fetch_add(1, Ordering::Relaxed);
        self.note_error(e);
        let n = self.consecutive_errors.fetch_add(1, Ordering::Relaxed) + 1;
        if n >= CONDITION_ERROR_LIMIT {
            return !self.stopped_by_errors.swap(true, Ordering::Relaxed);
        }
        false
    }

    /// A condition evaluated (true or false): the run of errors ends.
    pub fn condition_evaluated(&self) {
        self.consecutive_errors.store(0, Ordering::Relaxed);
    }

    /// Whether the stop point disabled itself for failing its condition.
    pub fn stopped_by_errors(&self) -> bool {
        self.stopped_by_errors.load(Ordering::Relaxed)
    }

    /// A new definition: the old condition's errors are history.
    pub fn forget_errors(&self) {
        if let Ok(mut l) = self.last_error.lock() {
            *l = None;
        }
        self.consecutive_errors.store(0, Ordering::Relaxed);
        self.stopped_by_errors.store(false, Ordering::Relaxed);
    }

    /// Whether a false evaluation at `now` should read the operands.
    pub fn operands_due(&self, now: Instant) -> bool {
        self.last_operands.lock().is_ok_and(|l| {
            l.as_ref()
                .is_none_or(|(at, _)| now.saturating_duration_since(*at) >= OPERANDS_EVERY)
        })
    }

    /// Records the operands of a false evaluation.
    pub fn note_operands(&self, at: Instant, values: Operands) {
        if let Ok(mut l) = self.last_operands.lock() {
            *l = Some((at, values));
        }
    }

    /// The operands of the last false evaluation read back.
    pub fn last_operands(&self) -> Operands {
        self.last_operands
            .lock()
            .ok()
            .and_then(|l| l.as_ref().map(|(_, v)| v.clone()))
            .unwrap_or_default()
    }

    pub fn last_error(&self) -> Option<String> {
        self.last_error.lock().ok().and_then(|l| l.clone())
    }

    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }

    /// The cost readings, as of `now`.
    pub fn cost(&self, now: Instant) -> Cost {
        let captures = self.capture_count.load(Ordering::Relaxed);
        let capture_nanos = self.capture_nanos.load(Ordering::Relaxed);
        let mean_capture = (captures > 0).then(|| Duration::from_nanos(capture_nanos / captures));
        let checks = self.check_count.load(Ordering::Relaxed);
        let check_nanos = self.check_nanos.load(Ordering::Relaxed);
        let mean_check = (checks > 0).then(|| Duration::from_nanos(check_nanos / checks));
        let n = captures + checks;
        let nanos = capture_nanos + check_nanos;
        let mean_hold = (n > 0).then(|| Duration::from_nanos(nanos / n));
        let w = self.window.lock().map(|w| *w).unwrap_or_default();
        let hits = self.hits.load(Ordering::Relaxed);
        let rate = match (w.first, w.last) {
            (Some(f), Some(l)) if hits > 1 && l > f => {
                Some((hits - 1) as f64 / l.duration_since(f).as_secs_f64())
            }
            _ => None,
        };
        let busy_share = w.first.and_then(|f| {
            let wall = now.duration_since(f).as_secs_f64();
            (wall > 0.0 && n > 0).then(|| nanos as f64 / 1e9 / wall)
        });
        Cost {
            mean_capture,
            checks,
            mean_check,
            mean_hold,
            rate,
            busy_share,
            recent_share: self.recent_share(now),
            recent_window: self
                .meter
                .lock()
                .ok()
                .and_then(|m| m.observed(since_origin(now))),
            p50: self.hold_quantile(0.5),
            p99: self.hold_quantile(0.99),
            interpreted: match self.interpreted_nanos.load(Ordering::Relaxed) {
                0 => None,
                n => Some(Duration::from_nanos(n)),
            },
        }
    }

    /// Starts a new budget (a re-arm).
    pub fn reset_budget(&self) {
        self.charged.store(0, Ordering::Relaxed);
        self.counted.store(0, Ordering::Relaxed);
        self.captured_at_arm
            .store(self.captured.load(Ordering::Relaxed), Ordering::Relaxed);
    }

    /// The snapshots taken since the budget last started: the budget's
    /// use, one count with the snapshots it admitted (a wire capture and
    /// a probe's drain both count here, after the record is written).
    pub fn budget_used(&self) -> u64 {
        self.captured
            .load(Ordering::Relaxed)
            .saturating_sub(self.captured_at_arm.load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retired_requests_are_remembered_and_bounded() {
        let mut r = Routes::default();
        let k = RequestKey::new(EventKind::Breakpoint, RequestId(1));
        assert!(matches!(r.lookup(&k), Lookup::Foreign));
        r.retire(&k);
        assert!(matches!(r.lookup(&k), Lookup::Retired));
        for i in 2..(RETIRED_MEMORY as i32 + 10) {
            r.retire(&RequestKey::new(EventKind::Breakpoint, RequestId(i)));
        }
        assert!(matches!(r.lookup(&k), Lookup::Foreign));
        assert!(r.retired.len() <= RETIRED_MEMORY);
    }

    #[test]
    fn budgets_charge_and_report_the_last_unit() {
        let s = Stats::default();
        assert_eq!(s.charge(2), (true, false));
        assert_eq!(s.charge(2), (true, true));
        assert_eq!(s.charge(2), (false, false));
        assert_eq!(Stats::get(&s.over_budget), 1);
        s.reset_budget();
        assert_eq!(s.charge(2), (true, false));
        assert_eq!(s.charge(0), (true, false));
    }

    #[test]
    fn the_budget_used_is_the_snapshots_taken_since_the_last_arm() {
        let s = Stats::default();
        for _ in 0..19 {
            s.captured_in(Duration::ZERO);
        }
        assert_eq!(s.budget_used(), 19);
        // A re-arm starts a new budget: the earlier snapshots stay counted
        // in `captured`, and none of them is charged to the new one.
        s.reset_budget();
        assert_eq!((Stats::get(&s.captured), s.budget_used()), (19, 0));
        s.captured_in(Duration::ZERO);
        assert_eq!((Stats::get(&s.captured), s.budget_used()), (20, 1));
    }

    #[test]
    fn cost_needs_two_hits_for_a_rate() {
        let s = Stats::default();
        let t0 = Instant::now();
        s.hit(t0);
        assert!(s.cost(t0).rate.is_none());
        s.hit(t0 + Duration::from_millis(500));
        s.captured_in(Duration::from_micros(300));
        let c = s.cost(t0 + Duration::from_secs(1));
        assert!((c.rate.unwrap_or(0.0) - 2.0).abs() < 1e-6);
        assert_eq!(c.mean_capture, Some(Duration::from_micros(300)));
        let p50 = c.p50.unwrap_or_default();
        assert!(
            p50 >= Duration::from_micros(300) && p50 < Duration::from_micros(460),
            "{p50:?}"
        );
    }

    #[test]
    fn checks_count_in_the_cost_and_a_pause_is_acted_on_once() {
        let s = Stats::default();
        let t0 = Instant::now();
        s.hit(t0);
        s.captured_in(Duration::from_millis(3));
        s.checked_in(Duration::from_millis(1));
        s.checked_in(Duration::from_millis(2));
        let c = s.cost(t0 + Duration::from_secs(1));
        assert_eq!(c.checks, 2);
        assert_eq!(c.mean_check, Some(Duration::from_micros(1500)));
        assert_eq!(c.mean_hold, Some(Duration::from_millis(2)));
        assert_eq!(c.mean_capture, Some(Duration::from_millis(3)));
        let over = Overspent {
            scope: Scope::StopPoint,
            share: 0.5,
            own_share: 0.5,
            budget_pct: 20,
            window: Duration::from_secs(2),
            holds: 3,
        };
        assert_eq!(s.pause(over), Some(over));
        assert_eq!(s.pause(over), None);
        assert_eq!(s.paused(), Some(over));
        s.restart_guard();
        assert_eq!(s.paused(), None);
        assert_eq!(s.recent_share(Instant::now()), None);
    }

    #[test]
    fn hold_buckets_cover_microseconds_to_seconds() {
        assert_eq!(hold_bucket(Duration::from_micros(5)), 0);
        assert_eq!(hold_bucket(Duration::from_micros(12)), 1);
        assert_eq!(hold_bucket(Duration::from_secs(100)), HOLD_BUCKETS - 1);
        for i in 1..HOLD_BUCKETS - 1 {
            let inside = bucket_bound(i) - Duration::from_nanos(1);
            assert_eq!(hold_bucket(inside), i, "{i}");
        }
    }
}
