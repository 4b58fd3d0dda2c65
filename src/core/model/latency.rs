//! A statistics probe's figures as plain data: the cumulative counters
//! read from the JVM (calls and throws exact, a log-bucket latency
//! histogram), kept as a short history so a listing shows both the
//! figures since arming and those of the last window. Pure: the reader
//! passes the time of each reading in.

use std::collections::VecDeque;

/// Buckets of the histogram: bucket `b` holds `[2^b, 2^(b+1))` ns.
pub const BUCKETS: usize = 64;

/// The window a listing's recent figures cover, in milliseconds.
pub const WINDOW_MS: u64 = 10_000;

/// One reading of the JVM's cumulative counters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    /// When it was read, in ms of the reader's clock.
    pub at_ms: u64,
    pub calls: u64,
    pub throws: u64,
    pub buckets: [u64; BUCKETS],
    pub sum_ns: u64,
    pub max_ns: u64,
}

impl Reading {
    /// Folds a histogram's stripes (each `BUCKETS` counts, the sum, the
    /// longest) into one reading.
    pub fn from_stripes(at_ms: u64, calls: u64, throws: u64, longs: &[i64]) -> Reading {
        let mut r = Reading {
            at_ms,
            calls,
            throws,
            buckets: [0; BUCKETS],
            sum_ns: 0,
            max_ns: 0,
        };
        for stripe in longs.chunks_exact(BUCKETS + 2) {
            for (b, n) in r.buckets.iter_mut().zip(stripe) {
                *b = b.wrapping_add((*n).max(0) as u64);
            }
            r.sum_ns = r.sum_ns.wrapping_add(stripe[BUCKETS].max(0) as u64);
            r.max_ns = r.max_ns.max(stripe[BUCKETS + 1].max(0) as u64);
        }
        r
    }
}

/// What a listing shows for one span of time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Figures {
    /// The span, in ms.
    pub span_ms: u64,
    pub calls: u64,
    pub throws: u64,
    /// The calls timed: the histogram's count (a random sample of the
    /// calls, see the probe's `STATS_SAMPLE`).
    pub timed: u64,
    pub mean_ns: Option<u64>,
    pub p50_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    /// Exact since arming; for a window, the top of its highest bucket.
    pub max_ns: Option<u64>,
}

/// The figures since arming and, once a reading is old enough, for the
/// last window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LatencyView {
    pub since_arming: Figures,
    pub window: Option<Figures>,
}

/// The readings of one statistics probe, newest last, kept back to one
/// window before the newest.
#[derive(Debug, Clone, Default)]
pub struct Latency {
    armed_ms: Option<u64>,
    readings: VecDeque<Reading>,
}

impl Latency {
    /// Starts counting from `at_ms` (the probe was armed then).
    pub fn armed(at_ms: u64) -> Latency {
        Latency {
            armed_ms: Some(at_ms),
            readings: VecDeque::new(),
        }
    }

    /// Adds a reading, dropping those no longer needed for the window.
    pub fn read(&mut self, r: Reading) {
        let now = r.at_ms;
        self.readings.push_back(r);
        while self.readings.len() > 2
            && self
                .readings
                .get(1)
                .is_some_and(|next| now.saturating_sub(next.at_ms) >= WINDOW_MS)
        {
            self.readings.pop_front();
        }
    }

    /// The figures, or `None` before the first reading.
    pub fn view(&self) -> Option<LatencyView> {
        let last = self.readings.back()?;
        let since = self.armed_ms.unwrap_or(last.at_ms);
        let since_arming = figures(last, None, last.at_ms.saturating_sub(since));
        let first = self.readings.front()?;
        let window = (last.at_ms.saturating_sub(first.at_ms) >= WINDOW_MS)
            .then(|| figures(last, Some(first), last.at_ms - first.at_ms));
        Some(LatencyView {
            since_arming,
            window,
        })
    }
}

/// The figures of `last` less `before`.
fn figures(last: &Reading, before: Option<&Reading>, span_ms: u64) -> Figures {
    let mut buckets = last.buckets;
    let (mut calls, mut throws, mut sum) = (last.calls, last.throws, last.sum_ns);
    if let Some(b) = before {
        for (x, y) in buckets.iter_mut().zip(&b.buckets) {
            *x = x.saturating_sub(*y);
        }
        calls = calls.saturating_sub(b.calls);
        throws = throws.saturating_sub(b.throws);
        sum = sum.saturating_sub(b.sum_ns);
    }
    let counted: u64 = buckets.iter().sum();
    let max_ns = match before {
        None => (counted > 0).then_some(last.max_ns),
        Some(_) => buckets
            .iter()
            .rposition(|n| *n > 0)
            .map(|b| upper(b).min(last.max_ns)),
    };
    Figures {
        span_ms,
        calls,
        throws,
        timed: counted,
        mean_ns: (counted > 0).then(|| sum / counted),
        p50_ns: quantile(&buckets, counted, 0.50),
        p99_ns: quantile(&buckets, counted, 0.99),
        max_ns,
    }
}

/// The top of bucket `b`.
fn upper(b: usize) -> u64 {
    if b + 1 >= BUCKETS {
        u64::MAX
    } else {
        (1u64 << (b + 1)) - 1
    }
}

/// The `q` quantile, interpolated inside its bucket.
fn quantile(buckets: &[u64; BUCKETS], counted: u64, q: f64) -> Option<u64> {
    if counted == 0 {
        return None;
    }
    let rank = ((counted as f64) * q).ceil().max(1.0) as u64;
    let mut seen = 0u64;
    for (b, n) in buckets.iter().enumerate() {
        if *n == 0 {
            continue;
        }
        if seen + n >= rank {
            let low = if b == 0 { 0.0 } else { (1u64 << b) as f64 };
            let high = upper(b) as f64 + 1.0;
            let at = (rank - seen) as f64 / *n as f64;
            return Some(((low + (high - low) * at) as u64).min(upper(b)));
        }
        seen += n;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(at_ms: u64, calls: u64, durations: &[u64]) -> Reading {
        let mut stripe = vec![0i64; BUCKETS + 2];
        for d in durations {
            let b = 63 - (d | 1).leading_zeros() as usize;
            stripe[b] += 1;
            stripe[BUCKETS] += *d as i64;
            stripe[BUCKETS + 1] = stripe[BUCKETS + 1].max(*d as i64);
        }
        // A second, empty stripe folds in as nothing.
        stripe.extend(vec![0i64; BUCKETS + 2]);
        Reading::from_stripes(at_ms, calls, 1, &stripe)
    }

    #[test]
    fn figures_since_arming_and_for_the_window() {
        let mut l = Latency::armed(0);
        assert_eq!(l.view(), None);
        let fast: Vec<u64> = vec![1_000; 99];
        let mut first = fast.clone();
        first.push(1_000_000);
        l.read(reading(1_000, 100, &first));
        let v = l.view().expect("a view");
        assert_eq!(v.since_arming.calls, 100);
        assert_eq!(v.since_arming.max_ns, Some(1_000_000));
        let p50 = v.since_arming.p50_ns.expect("p50");
        assert!((512..1024).contains(&p50), "{p50}");
        let p99 = v.since_arming.p99_ns.expect("p99");
        assert!((512..1024).contains(&p99), "{p99}");
        assert_eq!(v.window, None, "no reading a window old yet");
        let mut both = first.clone();
        both.extend(vec![4_000; 100]);
        l.read(reading(1_000 + WINDOW_MS, 200, &both));
        let w = l.view().expect("a view").window.expect("a window");
        assert_eq!((w.calls, w.span_ms), (100, WINDOW_MS));
        assert_eq!(w.mean_ns, Some(4_000));
        assert_eq!(w.max_ns, Some(4_095), "the top of the highest bucket");
    }

    #[test]
    fn old_readings_go_but_one_a_window_old_stays() {
        let mut l = Latency::armed(0);
        for t in 0..100 {
            l.read(reading(t * 500, t, &[]));
        }
        assert!(l.readings.len() <= (WINDOW_MS / 500) as usize + 2);
        let w = l.view().expect("a view").window.expect("a window");
        assert!(w.span_ms >= WINDOW_MS, "{w:?}");
    }
}
