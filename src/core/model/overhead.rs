//! The overhead guard: how much of the application's thread time the
//! holds of a stop point (its condition checks and snapshots) may take,
//! measured over a sliding window of wall time.
//!
//! A share is "of one thread's time": holds of 0.2 s over one second are
//! 20%, whether one thread was held for all of it or four for a quarter
//! each, so it can pass 100% when several threads are held at once.
//! A budget of 0 turns the guard off. Plain data and arithmetic: the
//! dispatcher feeds the meters, the registry pauses what is over. Times
//! are offsets from an origin the caller keeps (it reads the clock; this
//! does not).

use std::time::Duration;

/// The share of one thread's time a wire method-exit or field watch is
/// charged while armed: HotSpot then runs every thread interpreted
/// (issue #27 measured −97 % and −98 % of a hot program's throughput),
/// which no hold shows. A floor: one busy thread, several times slower.
pub const INTERPRETED_SHARE: f64 = 0.9;
/// The default budget of one stop point, in percent of one thread's time.
pub const DEFAULT_STOP_POINT_PCT: u32 = 20;
/// The default budget of a whole session (all its stop points together).
pub const DEFAULT_SESSION_PCT: u32 = 50;
/// The largest budget accepted: a hundred threads held all the time.
pub const MAX_PCT: u32 = 10_000;

/// The window a share is measured over.
pub const WINDOW: Duration = Duration::from_secs(2);
/// How long a meter must have watched before it may judge: a few slow
/// first hits (a class's first breakpoint runs interpreted) are no trend.
pub const MIN_OBSERVED: Duration = Duration::from_secs(1);
const BUCKETS: usize = 20;
const BUCKET: Duration = Duration::from_millis(100);

/// The budgets a session applies, read from the environment at start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budgets {
    /// Each stop point's default (a stop point may set its own).
    pub stop_point_pct: u32,
    /// All of a session's stop points together.
    pub session_pct: u32,
}

impl Default for Budgets {
    fn default() -> Self {
        Self {
            stop_point_pct: DEFAULT_STOP_POINT_PCT,
            session_pct: DEFAULT_SESSION_PCT,
        }
    }
}

impl Budgets {
    /// Parses a budget setting: a percentage (`10`, `12.5%` rounds down),
    /// or `off` / `0` for no guard. `None` when it is not one.
    pub fn parse_pct(text: &str) -> Option<u32> {
        let t = text.trim().trim_end_matches('%').trim();
        if t.eq_ignore_ascii_case("off") || t.eq_ignore_ascii_case("none") {
            return Some(0);
        }
        let v: f64 = t.parse().ok()?;
        (v.is_finite() && v >= 0.0 && v <= f64::from(MAX_PCT)).then_some(v as u32)
    }
}

/// Whose budget was exceeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    StopPoint,
    /// The session's: this stop point took the largest share of it.
    Session,
}

/// A budget exceeded: what was measured against what was allowed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Overspent {
    pub scope: Scope,
    /// The measured share over the window (0.25 = 25% of one thread).
    pub share: f64,
    /// The stop point's own share, when the session's budget was exceeded.
    pub own_share: f64,
    pub budget_pct: u32,
    pub window: Duration,
    /// Holds charged in the window.
    pub holds: u64,
}

/// Hold time over a sliding window, in buckets of [`BUCKET`].
#[derive(Debug, Clone, Default)]
pub struct Meter {
    /// When the meter started watching (its first charge since a reset).
    start: Option<Duration>,
    /// The absolute number of the newest bucket, counted from `start`.
    head: u64,
    nanos: [u64; BUCKETS],
    holds: [u64; BUCKETS],
}

impl Meter {
    /// Charges a hold of `held` that ended at `at`.
    pub fn charge(&mut self, at: Duration, held: Duration) {
        let start = *self.start.get_or_insert(at);
        let n = at.saturating_sub(start).as_nanos() / BUCKET.as_nanos();
        self.advance(n as u64);
        let i = (self.head % BUCKETS as u64) as usize;
        self.nanos[i] = self.nanos[i].saturating_add(held.as_nanos() as u64);
        self.holds[i] += 1;
    }

    /// Moves the head to bucket `n`, emptying the buckets it passes.
    fn advance(&mut self, n: u64) {
        if n <= self.head {
            return;
        }
        let steps = (n - self.head).min(BUCKETS as u64);
        for k in 1..=steps {
            let i = ((self.head + k) % BUCKETS as u64) as usize;
            self.nanos[i] = 0;
            self.holds[i] = 0;
        }
        self.head = n;
    }

    /// The buckets still inside the window at `now`, as (nanos, holds).
    fn in_window(&self, now: Duration) -> (u64, u64) {
        let Some(start) = self.start else {
            return (0, 0);
        };
        let now_n = (now.saturating_sub(start).as_nanos() / BUCKET.as_nanos()) as u64;
        let oldest = now_n.saturating_sub(BUCKETS as u64 - 1);
        let mut sum = (0u64, 0u64);
        for n in oldest.max(self.head.saturating_sub(BUCKETS as u64 - 1))..=self.head {
            if n < oldest {
                continue;
            }
            let i = (n % BUCKETS as u64) as usize;
            sum.0 = sum.0.saturating_add(self.nanos[i]);
            sum.1 += self.holds[i];
        }
        sum
    }

    /// The share of one thread's time held over the window (or since the
    /// meter started, if that is shorter); `None` before it has watched
    /// for [`MIN_OBSERVED`].
    pub fn share(&self, now: Duration) -> Option<f64> {
        let wall = self.observed(now)?.as_secs_f64();
        Some(self.in_window(now).0 as f64 / 1e9 / wall)
    }

    /// The wall time a share at `now` is taken over: the window, or less
    /// while the meter is young; `None` before [`MIN_OBSERVED`].
    pub fn observed(&self, now: Duration) -> Option<Duration> {
        let watched = now.saturating_sub(self.start?);
        (watched >= MIN_OBSERVED).then(|| watched.min(WINDOW))
    }

    /// Holds charged in the window.
    pub fn holds(&self, now: Duration) -> u64 {
        self.in_window(now).1
    }

    /// `Some` when the share at `now` is over `budget_pct` (0 = no guard).
    pub fn over(&self, now: Duration, budget_pct: u32, scope: Scope) -> Option<Overspent> {
        if budget_pct == 0 {
            return None;
        }
        let share = self.share(now)?;
        let window = self.observed(now)?;
        (share * 100.0 > f64::from(budget_pct)).then(|| Overspent {
            scope,
            share,
            own_share: share,
            budget_pct,
            window,
            holds: self.holds(now),
        })
    }

    /// Forgets everything: a re-armed stop point starts a new window.
    pub fn reset(&mut self) {
        *self = Self::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_meter_judges_only_after_watching_a_while() {
        let t0 = Duration::from_secs(7);
        let mut m = Meter::default();
        m.charge(t0, ms(500));
        assert_eq!(m.share(t0 + ms(500)), None);
        let s = m.share(t0 + ms(1000)).unwrap_or_default();
        assert!((s - 0.5).abs() < 1e-9, "{s}");
        let over = m.over(t0 + ms(1000), 40, Scope::StopPoint);
        // The figure names the wall time it was taken over: one second here.
        assert_eq!(over.map(|o| o.window), Some(ms(1000)));
        assert_eq!(
            m.over(t0 + ms(1500), 20, Scope::StopPoint)
                .map(|o| o.window),
            Some(ms(1500))
        );
        assert!(m.over(t0 + ms(1000), 60, Scope::StopPoint).is_none());
        assert!(m.over(t0 + ms(1000), 0, Scope::StopPoint).is_none());
    }

    #[test]
    fn old_holds_leave_the_window() {
        let t0 = Duration::from_secs(7);
        let mut m = Meter::default();
        m.charge(t0, ms(300));
        for k in 1..=30 {
            m.charge(t0 + ms(100 * k), ms(1));
        }
        // At 3 s the first charge is a second out of the window: 20 holds
        // of 1 ms are left in the last 2 s.
        let now = t0 + ms(3000);
        assert_eq!(m.holds(now), 20);
        let s = m.share(now).unwrap_or_default();
        assert!((s - 0.010).abs() < 1e-9, "{s}");
        // Long after, nothing is left.
        assert_eq!(m.share(t0 + ms(60_000)), Some(0.0));
    }

    #[test]
    fn concurrent_holds_can_pass_one_thread() {
        let t0 = Duration::from_secs(7);
        let mut m = Meter::default();
        for k in 0..20 {
            for _ in 0..4 {
                m.charge(t0 + ms(100 * k), ms(90));
            }
        }
        let s = m.share(t0 + ms(1999)).unwrap_or_default();
        assert!(s > 3.5 && s < 3.7, "{s}");
        let o = m.over(t0 + ms(1999), 100, Scope::Session);
        assert_eq!(o.map(|o| o.holds), Some(80));
    }

    #[test]
    fn a_late_charge_lands_in_the_current_bucket() {
        let t0 = Duration::from_secs(7);
        let mut m = Meter::default();
        m.charge(t0 + ms(1500), ms(10));
        // A hold that ended earlier than the newest one still counts.
        m.charge(t0 + ms(1200), ms(10));
        assert_eq!(m.holds(t0 + ms(2600)), 2);
    }

    #[test]
    fn budgets_parse_percentages_and_off() {
        assert_eq!(Budgets::parse_pct("10"), Some(10));
        assert_eq!(Budgets::parse_pct(" 12.5% "), Some(12));
        assert_eq!(Budgets::parse_pct("off"), Some(0));
        assert_eq!(Budgets::parse_pct("0"), Some(0));
        assert_eq!(Budgets::parse_pct("-3"), None);
        assert_eq!(Budgets::parse_pct("lots"), None);
        assert_eq!(Budgets::parse_pct("20000"), None);
    }
}
