//! The deterministic middle layer: the real actors (Engine → Supervisor →
//! Session → Connection, EventDispatch, StopPoints, Watchdog) against a
//! JVM whose model the test owns, asserting what the actors did to that
//! model (who is suspended, what was resumed, which requests exist), not
//! merely that a call returned.
//!
//! Two peers: `sim` (a simulated JVM: classes with line and variable
//! tables, threads with frames and locals, objects, strings, event
//! requests, breakpoint hits emitted with the policy their request asked
//! for) for stacks, captures, evaluation, conditions, hit counts, the
//! Watchdog and deaths; and the older `fake_jdwp` script (threads and
//! suspend counts on loopback TCP) for the wire-level cases it was built
//! for (`events`, `gone`, `read_only`, `timeouts`, `watchdog`).
//!
//! Transport: the sim is served by a task of the test's own runtime over
//! `tokio::io::duplex`, attached with `Engine::attach_stream` (the same
//! handshake and Connection as a socket; `Transport` carries either).
//!
//! Time: the Connection's request deadlines and the Watchdog's suspension
//! ages and liveness interval read tokio's clock, so under
//! `#[tokio::test(start_paused = true)]` (`clock.rs`) minutes of JVM time
//! pass in milliseconds, exactly; with no real socket in play the paused
//! runtime only jumps ahead when every task waits on a timer. The
//! loopback `fake_jdwp` tests run on the real clock with durations
//! configured in milliseconds (a paused runtime waiting on a real socket
//! auto-advances past its timers, see `paused.rs`). Waits are polls of a
//! condition, never fixed sleeps.

mod capture;
mod clock;
mod conditions;
mod dies;
mod evaluate;
mod events;
mod gone;
mod paused;
mod read_only;
mod read_only_sim;
mod stack;
mod stops;
mod timeouts;
mod watchdog;

use std::time::Duration;

use jvmscope::actors::{Engine, EngineConfig, SessionHandle};
use jvmscope::model::AttachSpec;

use crate::fake_jdwp::FakeJdwp;
use crate::sim::Sim;
use crate::sim::model::Jvm;

/// How long a poll may wait before the test fails: generous for a loaded
/// CI box; a passing test waits milliseconds.
const PATIENCE: Duration = Duration::from_secs(10);

/// An engine whose Watchdog neither probes nor rescues unless a test says
/// so, and whose requests time out only when a test sets it.
fn config() -> EngineConfig {
    EngineConfig {
        watchdog_interval: Duration::from_secs(3600),
        request_timeout: PATIENCE,
        suspend_limit: None,
        ..EngineConfig::default()
    }
}

/// Attaches an engine with `config` to the fake.
async fn attach(config: EngineConfig, fake: &FakeJdwp, read_only: bool) -> (Engine, SessionHandle) {
    let engine = Engine::start(config).await.expect("engine");
    let spec = AttachSpec {
        host: "127.0.0.1".into(),
        port: fake.port(),
        timeout: PATIENCE,
        read_only,
        source_roots: vec![],
        class_roots: vec![],
    };
    let session = engine.attach(&spec).await.expect("attach to the fake");
    (engine, session)
}

/// Awaits `f` until it returns `Some`.
async fn poll<T>(what: &str, f: impl AsyncFnMut() -> Option<T>) -> T {
    crate::support::poll_async(PATIENCE, what, f).await
}

/// Attaches an engine with `config` to a simulated JVM of `jvm`, over an
/// in-process stream.
async fn attach_sim(
    config: EngineConfig,
    jvm: Jvm,
    read_only: bool,
) -> (Engine, SessionHandle, Sim) {
    let (sim, stream) = Sim::start(jvm);
    let engine = Engine::start(config).await.expect("engine");
    let spec = AttachSpec {
        host: "sim".into(),
        port: 5005,
        timeout: PATIENCE,
        read_only,
        source_roots: vec![],
        class_roots: vec![],
    };
    let session = engine
        .attach_stream(&spec, stream)
        .await
        .expect("attach to the simulated JVM");
    (engine, session, sim)
}

/// The scene of `sim::model::scene`, attached with [`config`].
async fn scene() -> (Engine, SessionHandle, Sim) {
    attach_sim(config(), crate::sim::model::scene(), false).await
}

/// A wire line stop on `demo.Shop:line` with this mode and filters.
fn line_stop(
    line: u32,
    mode: jvmscope::model::stop_point::Mode,
    filters: jvmscope::model::stop_point::Filters,
) -> jvmscope::model::stop_point::StopPointSpec {
    use jvmscope::model::stop_point::{Engine as Via, LineSpec, StopPointSpec, Target};
    StopPointSpec {
        target: Target::Line(LineSpec {
            class: "demo.Shop".into(),
            method: None,
            line: Some(line),
        }),
        mode,
        filters,
        engine: Via::Wire,
    }
}

/// Arms `spec` and returns the stop point's id.
async fn arm(session: &SessionHandle, spec: jvmscope::model::stop_point::StopPointSpec) -> String {
    let report = session.arm_stop(spec, 1).await.expect("armed");
    report.point.expect("one stop point").id
}

/// The stop point's view once `done` holds for it.
async fn point_when(
    session: &SessionHandle,
    id: &str,
    what: &str,
    done: impl Fn(&jvmscope::actors::PointView) -> bool,
) -> jvmscope::actors::PointView {
    poll(what, async || {
        session.stop_points().view(id).await.filter(|v| done(v))
    })
    .await
}

/// Waits until the sim's suspend counts are `want`.
async fn counts_become(sim: &Sim, want: &[(u64, i32)]) {
    poll("the suspend counts", async || {
        (sim.counts() == want).then_some(())
    })
    .await;
}
