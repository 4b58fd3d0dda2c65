//! The drain's arithmetic, kept pure: which of a round's published
//! records it reads (only as many as the trace log can hold, the newest;
//! the older ones would be evicted by the same round, so they are counted
//! as captured and evicted without a read), and how soon a probe's next
//! round comes (slower while its ring overflows anyway, back to the
//! quickest once it keeps up).

use std::time::Duration;

/// The slowest a probe is drained while its ring overflows. With a ring
/// of 16,384 records that is still 160k records a second, and the lease
/// (2 s) is renewed twenty times over.
pub const SLOWEST: Duration = Duration::from_millis(100);

/// What one round does with the `ready` records published from `tail`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Take {
    /// Counted as captured: all of them, or what the trace budget has
    /// left. The rest are past the budget and only consumed.
    pub captured: u64,
    /// Record number of the first record read: the newest `read` of the
    /// captured ones.
    pub from: u64,
    /// Records read and turned into snapshots.
    pub read: u64,
    /// Captured but not read: the log would have evicted them in this
    /// same round.
    pub passed: u64,
}

/// The round's take: `remaining` is what the trace budget has left
/// (`None`: no budget), `keep` how many snapshots the log holds.
pub fn take(tail: u64, ready: u64, remaining: Option<u64>, keep: u64) -> Take {
    let captured = remaining.map_or(ready, |r| ready.min(r));
    let read = captured.min(keep.max(1));
    Take {
        captured,
        from: tail + captured - read,
        read,
        passed: captured - read,
    }
}

/// How often one probe is drained.
#[derive(Debug, Clone, Copy)]
pub struct Pace {
    pub period: Duration,
    quickest: Duration,
}

impl Pace {
    pub fn new(quickest: Duration) -> Pace {
        Pace {
            period: quickest,
            quickest,
        }
    }

    /// After a round that found `pending` records claimed in a ring of
    /// `cap`: a full ring (the calls since were dropped) doubles the
    /// period up to [`SLOWEST`]; less than half full goes back to the
    /// quickest; in between the period stays.
    pub fn after(&mut self, pending: u64, cap: u64) -> Duration {
        if pending >= cap {
            self.period = (self.period * 2).min(SLOWEST.max(self.quickest));
        } else if pending < cap / 2 {
            self.period = self.quickest;
        }
        self.period
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_round_reads_only_what_the_log_can_hold_the_newest() {
        let t = take(100, 2000, None, 500);
        assert_eq!(
            t,
            Take {
                captured: 2000,
                from: 1600,
                read: 500,
                passed: 1500
            }
        );
        // Under the log's size: everything is read.
        let t = take(7, 30, None, 500);
        assert_eq!((t.from, t.read, t.passed), (7, 30, 0));
    }

    #[test]
    fn a_budget_keeps_the_first_records_and_reads_the_newest_of_them() {
        let t = take(0, 2000, Some(800), 500);
        assert_eq!((t.captured, t.from, t.read, t.passed), (800, 300, 500, 300));
        let t = take(0, 2000, Some(0), 500);
        assert_eq!((t.captured, t.read, t.passed), (0, 0, 0));
    }

    #[test]
    fn an_overflowing_ring_slows_its_drain_and_a_quiet_one_speeds_it_up() {
        let q = Duration::from_millis(20);
        let mut p = Pace::new(q);
        assert_eq!(p.after(16_384, 16_384), q * 2);
        assert_eq!(p.after(16_384, 16_384), q * 4);
        assert_eq!(p.after(16_384, 16_384), SLOWEST);
        assert_eq!(p.after(20_000, 16_384), SLOWEST);
        // Between half and full: unchanged.
        assert_eq!(p.after(9_000, 16_384), SLOWEST);
        assert_eq!(p.after(100, 16_384), q);
    }

    proptest! {
        /// Every published record is consumed once, and each consumed one
        /// is read, passed over, or past the budget: nothing is counted
        /// twice or lost; what is read is the newest captured.
        #[test]
        fn every_record_is_read_passed_over_or_past_the_budget(
            tail in 0u64..1 << 40,
            ready in 0u64..100_000,
            remaining in proptest::option::of(0u64..200_000),
            keep in 0u64..5_000,
        ) {
            let t = take(tail, ready, remaining, keep);
            prop_assert!(t.captured <= ready);
            prop_assert_eq!(t.read + t.passed, t.captured);
            prop_assert!(t.read <= keep.max(1));
            prop_assert_eq!(t.from + t.read, tail + t.captured);
            prop_assert!(t.from >= tail);
            if let Some(r) = remaining {
                prop_assert_eq!(t.captured, ready.min(r));
            } else {
                prop_assert_eq!(t.captured, ready);
            }
        }
    }
}
