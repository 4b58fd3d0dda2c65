//! A probe's side of a stop point's counters: what its drain last read
//! from the helper in the JVM (calls, passes, drops, sampled cost, lease
//! lapses), and how the guard judges a probe like a wire stop point: the
//! errors of its condition in a row, and the threads' time its calls took.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::{CONDITION_ERROR_LIMIT, Stats, since_origin};

/// A probe's own counters, as its drain last read them from the JVM.
#[derive(Debug, Default)]
pub struct ProbeMeter {
    /// Calls into the probe (the site ran).
    pub calls: AtomicU64,
    /// Calls that passed its filters (all of them when it has none), read
    /// with `calls` in one reading, just before it.
    pub passes: AtomicU64,
    /// Passing hits the JVM's ring had no room for.
    pub drops: AtomicU64,
    /// Nanoseconds measured over `cost_samples` sampled calls.
    pub cost_ns: AtomicU64,
    pub cost_samples: AtomicU64,
    /// Of `cost_ns`, the time the samples' clock reads took.
    pub clock_ns: AtomicU64,
    /// How long the redefinition that armed it took, in microseconds.
    pub pause_us: AtomicU64,
    /// The lease lapsed (the probe turned itself off) and was renewed.
    pub lapses: AtomicU64,
    /// Its lease lapsed and running its helper's `init` again failed: the
    /// probe is off until a re-arm succeeds.
    pub lease_off: std::sync::atomic::AtomicBool,
    /// Its lease lapsed while the session held a thread or the VM for the
    /// agent: the re-arm waits until nothing is held.
    pub lease_waits: std::sync::atomic::AtomicBool,
    /// Drain rounds that failed (the JVM refused a read): their records
    /// stay in the ring for the next round, or are counted as drops.
    pub drain_failures: AtomicU64,
    /// A statistics probe's readings (empty for any other).
    pub latency: Mutex<crate::model::latency::Latency>,
}

/// A probe's cost, as listings show it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProbeCost {
    pub calls: u64,
    pub passes: u64,
    pub drops: u64,
    /// Sampled nanoseconds per call, less the clock's own read; `None`
    /// before the first sample.
    pub ns_per_call: Option<u64>,
    /// The same with the clock's read kept in: what the overhead guard
    /// charges, a margin for what a sample cannot see (the site's own
    /// code, the fences a hot path meets).
    pub charged_ns_per_call: Option<u64>,
    pub pause_us: u64,
    pub lapses: u64,
    pub lease_off: bool,
    pub lease_waits: bool,
    pub drain_failures: u64,
    /// A statistics probe's figures, once read.
    pub latency: Option<crate::model::latency::LatencyView>,
}

impl ProbeMeter {
    pub fn cost(&self) -> ProbeCost {
        let samples = self.cost_samples.load(Ordering::Relaxed);
        ProbeCost {
            calls: self.calls.load(Ordering::Relaxed),
            passes: self.passes.load(Ordering::Relaxed),
            drops: self.drops.load(Ordering::Relaxed),
            ns_per_call: (samples > 0).then(|| {
                self.cost_ns
                    .load(Ordering::Relaxed)
                    .saturating_sub(self.clock_ns.load(Ordering::Relaxed))
                    / samples
            }),
            charged_ns_per_call: (samples > 0)
                .then(|| self.cost_ns.load(Ordering::Relaxed) / samples),
            pause_us: self.pause_us.load(Ordering::Relaxed),
            lapses: self.lapses.load(Ordering::Relaxed),
            lease_off: self.lease_off.load(Ordering::Relaxed),
            lease_waits: self.lease_waits.load(Ordering::Relaxed),
            drain_failures: self.drain_failures.load(Ordering::Relaxed),
            latency: self.latency.lock().ok().and_then(|l| l.view()),
        }
    }
}

impl Stats {
    /// Charges `ran` of the application's threads' time spent in its
    /// probe (sampled cost per call times the calls): a probe holds no
    /// thread, but each call runs its code.
    pub fn probe_ran(&self, ran: Duration) {
        if !ran.is_zero()
            && let Ok(mut m) = self.meter.lock()
        {
            m.charge(since_origin(Instant::now()), ran);
        }
    }

    /// A probe's condition failed `errors` more times in the JVM over
    /// `calls` more calls: true exactly once, when the errors of rounds in
    /// which nearly every call failed (90%: the helper's error count is
    /// not atomic) make [`CONDITION_ERROR_LIMIT`] in a row. A round in
    /// which more evaluated ends the run.
    pub fn probe_condition_failed(&self, errors: u64, calls: u64) -> bool {
        if errors == 0 || errors.saturating_mul(10) < calls.saturating_mul(9) {
            self.consecutive_errors.store(0, Ordering::Relaxed);
            return false;
        }
        let n = self.consecutive_errors.fetch_add(errors, Ordering::Relaxed) + errors;
        n >= CONDITION_ERROR_LIMIT && !self.stopped_by_errors.swap(true, Ordering::Relaxed)
    }
}
