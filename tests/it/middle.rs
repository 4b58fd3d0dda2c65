//! The deterministic middle layer: the real actors (Engine → Supervisor →
//! Session → Connection, EventDispatch, StopPoints, Watchdog) against a
//! scripted JVM (`fake_jdwp`) on loopback, with the durations that matter
//! (request timeout, suspension limit) configured in milliseconds, so each
//! test is a fraction of a second and asserts what the actors did to the
//! JVM's model, not merely that a call returned.
//!
//! Time is passed in as configuration, not through tokio's paused clock:
//! the Connection's deadlines and the Watchdog's ages are read from
//! `std::time::Instant`, which a paused clock does not move, and a paused
//! runtime waiting on the fake's real socket auto-advances past the
//! dial's `tokio::time::timeout` before the handshake arrives (see
//! `paused.rs`). Waits are polls of a condition, never fixed sleeps.

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
