//! The middle layer on tokio's paused clock: the Connection's deadlines
//! and the Watchdog's ages read tokio's clock, and the simulated JVM talks
//! over an in-process stream served by the test's own runtime, so minutes
//! of JVM time (a request timeout, a suspension limit, unanswered liveness
//! probes) pass in milliseconds of wall time, and exactly.

use std::time::{Duration, Instant};

use jvmscope::actors::{JdwpError, PauseOutcome, SessionError, ThreadId};
use jvmscope::model::SessionState;
use jvmscope::model::stop_point::{Filters, Mode, StopState};

use super::{arm, attach_sim, config, line_stop, point_when, poll};
use crate::sim::model::ids::{MAIN_THREAD, WORKER};
use crate::sim::model::scene;
use crate::sim::{Fault, cmd};

/// Wall time a paused test may take: virtual minutes must not cost real ones.
const WALL: Duration = Duration::from_secs(5);

#[tokio::test(start_paused = true)]
async fn a_stalled_request_times_out_after_its_virtual_half_minute() {
    let timeout = Duration::from_secs(30);
    let mut cfg = config();
    cfg.request_timeout = timeout;
    let (engine, session, sim) = attach_sim(cfg, scene(), false).await;
    session
        .suspend_thread(ThreadId(MAIN_THREAD))
        .await
        .expect("suspend");
    sim.fault(cmd::FRAME_COUNT, Fault::Stall);

    let (wall, virtual_start) = (Instant::now(), tokio::time::Instant::now());
    let stalled = session.frame_count(ThreadId(MAIN_THREAD)).await;
    let took = virtual_start.elapsed();
    match stalled {
        Err(SessionError::Jdwp(JdwpError::Timeout { command, after })) => {
            assert_eq!(command, "ThreadReference.FrameCount");
            assert_eq!(after, timeout);
        }
        other => panic!("expected the typed timeout, got {other:?}"),
    }
    assert!(took >= timeout, "failed early, after {took:?}");
    assert!(
        took < timeout + Duration::from_secs(1),
        "the deadline is kept: {took:?}"
    );
    assert!(wall.elapsed() < WALL, "{:?}", wall.elapsed());
    // The connection goes on: the next request is answered.
    assert_eq!(session.threads().await.expect("answered").len(), 2);
    assert_eq!(sim.received(cmd::FRAME_COUNT), 1, "written once");
    assert!(session.check_alive().is_ok());
    engine.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_held_breakpoint_hit_is_rescued_after_two_virtual_minutes() {
    let limit = Duration::from_secs(120);
    let mut cfg = config();
    cfg.suspend_limit = Some(limit);
    let (engine, session, sim) = attach_sim(cfg, scene(), false).await;
    let id = arm(&session, line_stop(12, Mode::Suspend, Filters::default())).await;

    let (wall, virtual_start) = (Instant::now(), tokio::time::Instant::now());
    sim.hit(WORKER, "demo.Shop", "checkout", 12);
    let rescue = poll("the watchdog's rescue", async || {
        session.rescues().all.first().cloned()
    })
    .await;
    assert!(
        virtual_start.elapsed() >= limit,
        "{:?}",
        virtual_start.elapsed()
    );
    assert!(rescue.held_for >= limit, "{rescue:?}");
    assert!(
        rescue.held_for < limit + Duration::from_secs(2),
        "{rescue:?}"
    );
    assert!(wall.elapsed() < WALL, "{:?}", wall.elapsed());
    assert_eq!((rescue.held, rescue.total, rescue.still_held), (2, 2, 0));
    assert_eq!(rescue.disabled, [id.as_str()]);
    // The JVM's model: its request is gone before it ran again.
    assert!(
        sim.breakpoints().is_empty(),
        "the stop point's request cleared"
    );
    assert_eq!(sim.counts(), [(MAIN_THREAD, 0), (WORKER, 0)]);
    assert!(sim.jvm().vm_resumes >= 1);
    let v = point_when(&session, &id, "disabled", |v| {
        v.state == StopState::Disabled
    })
    .await;
    assert_eq!(v.hits, 1);
    assert_eq!(session.state().await, SessionState::Running);
    engine.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_pause_within_its_limit_is_left_alone_and_one_past_it_rescued() {
    let limit = Duration::from_secs(60);
    let mut cfg = config();
    cfg.suspend_limit = Some(limit);
    let (engine, session, sim) = attach_sim(cfg, scene(), false).await;
    let outcome = session.pause().await.expect("pause");
    assert!(
        matches!(outcome, PauseOutcome::Paused { held: 2, total: 2 }),
        "{outcome:?}"
    );
    tokio::time::sleep(limit - Duration::from_secs(5)).await;
    assert!(session.rescues().all.is_empty(), "within the limit");
    assert_eq!(sim.counts(), [(MAIN_THREAD, 1), (WORKER, 1)]);
    let rescue = poll("the rescue", async || {
        session.rescues().all.first().cloned()
    })
    .await;
    assert!(rescue.held_for >= limit, "{rescue:?}");
    assert_eq!(rescue.resumes, 1);
    assert_eq!(sim.counts(), [(MAIN_THREAD, 0), (WORKER, 0)]);
    engine.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_jvm_that_stops_answering_probes_is_ended_by_liveness() {
    let interval = Duration::from_secs(30);
    let mut cfg = config();
    cfg.watchdog_interval = interval;
    let (engine, session, sim) = attach_sim(cfg, scene(), false).await;
    let wall = Instant::now();
    // Answered probes keep it alive.
    tokio::time::sleep(3 * interval).await;
    assert!(session.dead_reason().is_none());
    assert!(
        sim.received(cmd::VERSION) >= 3,
        "probed: {}",
        sim.received(cmd::VERSION)
    );
    sim.fault(cmd::VERSION, Fault::Stall);
    let reason = poll("the session to end", async || session.dead_reason()).await;
    assert!(reason.contains("stopped answering"), "{reason}");
    assert!(wall.elapsed() < WALL, "{:?}", wall.elapsed());
    assert!(matches!(session.state().await, SessionState::Dead { .. }));
    engine.shutdown().await;
}
