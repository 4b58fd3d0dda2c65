//! Overhead bench: what a stop point whose condition is never true costs a
//! request path, and what the overhead guard gives back. The HotPath
//! fixture serves a paced ~15,000 calls/s on 4 threads and prints its own
//! throughput; one run, one JVM, one engine:
//!
//! 1. before: nothing armed;
//! 2. armed, guard off (`max_overhead` 0): the never-true condition
//!    `cents == 12345` on the hot line, checked on every call;
//! 3. re-armed with the default budget: the time until the guard pauses
//!    it, then the throughput after the pause.
//!
//! Prints calls/s for each phase against "before", the stop point's cost
//! line (mean hold per check, share of one thread's time) and the pause.
//! Run: `cargo bench --bench overhead` (`-- --seconds 4`).

#[path = "support.rs"]
mod support;

use std::process::Child;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use jvmscope::actors::{PointView, SessionHandle};
use jvmscope::model::stop_point::{Filters, LineSpec, Mode, StopPointSpec, Target};

const FIXTURE: &str = "HotPath";

/// The fixture's own counter, as it prints it: (when read here, total calls).
type Samples = Arc<Mutex<Vec<(Instant, u64)>>>;

#[allow(clippy::print_stdout)]
fn main() {
    let mut seconds = 4u64;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--seconds" => seconds = args.next().and_then(|s| s.parse().ok()).unwrap_or(4),
            "--bench" => {}
            other => panic!("unknown argument {other} (accepted: --seconds N)"),
        }
    }
    // The runtime the binary runs the engine on (ADR 0014).
    let rt = jvmscope::actors::runtime::build().expect("runtime");
    let (mut jvm, port, samples) = start();
    rt.block_on(run(port, &samples, Duration::from_secs(seconds)));
    let _ = jvm.kill();
    let _ = jvm.wait();
}

async fn run(port: u16, samples: &Samples, d: Duration) {
    let (_engine, session) = support::attached(port, None).await;
    let line = support::marked_line(FIXTURE, "// LINE: hot");
    // Let the JIT settle before the baseline.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let before = rate(samples, d).await;
    support::report(&format!("before:                 {before:>8.0} calls/s"));

    let unguarded = arm(&session, line, Some(0)).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let armed = rate(samples, d).await;
    let p = view(&session, &unguarded).await;
    support::report(&format!(
        "armed, guard off:       {armed:>8.0} calls/s  {:>5.1}% of before  {}",
        100.0 * armed / before,
        cost(&p)
    ));
    let _ = session.stop_points().clear(&unguarded).await;
    tokio::time::sleep(Duration::from_secs(1)).await;

    let armed_at = Instant::now();
    let guarded = arm(&session, line, None).await;
    let paused = loop {
        let p = view(&session, &guarded).await;
        if let Some(o) = p.paused {
            break (armed_at.elapsed(), o, p);
        }
        if armed_at.elapsed() > Duration::from_secs(60) {
            panic!(
                "the guard did not pause the stop point within 60 s: {}",
                cost(&p)
            );
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let (took, over, p) = paused;
    support::report(&format!(
        "default budget ({}%):    paused {:.2} s after arming, at {:.0}% of one thread's time \
         over the last {} s ({} holds)  {}",
        p.budget_pct,
        took.as_secs_f64(),
        over.share * 100.0,
        over.window.as_secs(),
        over.holds,
        cost(&p)
    ));
    // "Within a few seconds": the first full second after the pause, then
    // the steady state.
    let first = rate(samples, Duration::from_secs(1)).await;
    let after = rate(samples, d).await;
    support::report(&format!(
        "after the pause:        {first:>8.0} calls/s in its first second ({:.1}% of before), \
         {after:.0} calls/s after that ({:.1}%)",
        100.0 * first / before,
        100.0 * after / before
    ));
    let _ = session.stop_points().clear_all().await;
}

async fn arm(session: &SessionHandle, line: u32, budget: Option<u32>) -> String {
    let spec = StopPointSpec {
        target: Target::Line(LineSpec {
            class: FIXTURE.into(),
            method: None,
            line: Some(line),
        }),
        mode: Mode::Suspend,
        filters: Filters {
            condition: Some("cents == 12345".into()),
            overhead_pct: budget,
            ..Filters::default()
        },
        // The wire engine, measured as such: never a probe.
        engine: jvmscope::model::stop_point::Engine::Wire,
    };
    let r = session
        .stop_points()
        .arm(spec, 1)
        .await
        .unwrap_or_else(|e| panic!("arm: {e}"));
    r.point.expect("a stop point").id
}

async fn view(session: &SessionHandle, id: &str) -> PointView {
    let l = session.stop_points().list().await;
    l.points
        .into_iter()
        .find(|p| p.id == id)
        .unwrap_or_else(|| panic!("{id} is not listed"))
}

fn cost(p: &PointView) -> String {
    let c = &p.cost;
    format!(
        "[{} checks, mean hold {:.3} ms, p99 ≤{:.2} ms, {:.0}% of one thread's time]",
        c.checks,
        c.mean_check.unwrap_or_default().as_secs_f64() * 1e3,
        c.p99.unwrap_or_default().as_secs_f64() * 1e3,
        c.busy_share.unwrap_or_default() * 100.0
    )
}

/// The fixture's calls/s over the next `d`, from its own counter.
async fn rate(samples: &Samples, d: Duration) -> f64 {
    let last = |s: &Samples| s.lock().ok().and_then(|v| v.last().copied());
    // Start at a fresh sample, end at the first one past `d`.
    let first = fresh(samples).await;
    let end = first.0 + d;
    let mut lastseen = first;
    while lastseen.0 < end {
        tokio::time::sleep(Duration::from_millis(50)).await;
        if let Some(s) = last(samples) {
            lastseen = s;
        }
    }
    (lastseen.1 - first.1) as f64 / lastseen.0.duration_since(first.0).as_secs_f64()
}

/// The next sample the fixture prints.
async fn fresh(samples: &Samples) -> (Instant, u64) {
    let since = Instant::now();
    loop {
        if let Some(s) = samples
            .lock()
            .ok()
            .and_then(|v| v.iter().find(|(at, _)| *at > since).copied())
        {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Compiles and starts the fixture; its "hot rate" lines feed `Samples`.
fn start() -> (Child, u16, Samples) {
    let samples: Samples = Arc::default();
    let feed = samples.clone();
    let (child, port) =
        support::start_fixture_feeding(None, FIXTURE, "hot ready", &[], 0, move |line| {
            let total = line
                .strip_prefix("hot rate ")
                .and_then(|r| r.rsplit(' ').next())
                .and_then(|t| t.parse().ok());
            if let (Some(t), Ok(mut s)) = (total, feed.lock()) {
                s.push((Instant::now(), t));
            }
        });
    (child, port, samples)
}
