//! Trace captures against the simulated JVM: a traced stop point is one
//! EVENT_THREAD breakpoint request; each hit the sim emits is captured
//! (frames, locals read and valued) and its thread resumed, so the JVM is
//! never left held.

use jvmscope::actors::TraceQuery;
use jvmscope::jdwp::SuspendPolicy;
use jvmscope::model::stop_point::{Filters, LocalsChoice, Mode, TraceSpec};

use super::{arm, counts_become, line_stop, point_when, poll, scene};
use crate::sim::cmd;
use crate::sim::model::ids::{MAIN_THREAD, WORKER};

fn trace(frames: u32, locals: LocalsChoice, max_hits: u32, exprs: &[&str]) -> Mode {
    Mode::Trace(TraceSpec {
        frames,
        locals,
        max_hits,
        exprs: exprs.iter().map(|e| e.to_string()).collect(),
        ..TraceSpec::default()
    })
}

/// Every snapshot of `stop`, oldest first.
async fn snapshots(session: &jvmscope::actors::SessionHandle, stop: &str) -> Vec<String> {
    let view = session
        .traces(&TraceQuery {
            stop: Some(stop.into()),
            limit: 100,
            ..TraceQuery::default()
        })
        .await
        .expect("traces");
    view.shown
        .iter()
        .map(|r| {
            let locals: Vec<String> = r.locals.iter().map(|(n, v)| format!("{n}={v:?}")).collect();
            format!(
                "{} @{} callers={:?} locals=[{}] details={:?}",
                r.thread_name,
                r.location,
                r.callers,
                locals.join(", "),
                r.details
            )
        })
        .collect()
}

#[tokio::test]
async fn a_traced_hit_is_captured_with_its_locals_and_its_thread_resumed() {
    let (engine, session, sim) = scene().await;
    let id = arm(
        &session,
        line_stop(12, trace(2, LocalsChoice::All, 0, &[]), Filters::default()),
    )
    .await;
    assert_eq!(
        sim.breakpoints(),
        [(12, SuspendPolicy::EventThread)],
        "one request, holding only the hit thread"
    );

    assert_eq!(sim.hit(MAIN_THREAD, "demo.Shop", "checkout", 12).len(), 1);
    point_when(&session, &id, "the capture", |v| v.captured == 1).await;
    counts_become(&sim, &[(MAIN_THREAD, 0), (WORKER, 0)]).await;
    insta::assert_debug_snapshot!(snapshots(&session, &id).await);
    assert_eq!(
        sim.jvm().thread_resumes,
        [MAIN_THREAD],
        "the hit thread alone resumed"
    );
    assert_eq!(sim.jvm().vm_resumes, 0);
    assert!(
        sim.jvm().unmodelled.is_empty(),
        "{:?}",
        sim.jvm().unmodelled
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn hits_on_two_threads_are_each_captured_and_each_resumed() {
    let (engine, session, sim) = scene().await;
    let id = arm(
        &session,
        line_stop(
            13,
            trace(1, LocalsChoice::Only(vec!["qty".into()]), 0, &[]),
            Filters::default(),
        ),
    )
    .await;
    sim.hit(MAIN_THREAD, "demo.Shop", "checkout", 13);
    sim.hit(WORKER, "demo.Shop", "checkout", 13);
    point_when(&session, &id, "two captures", |v| v.captured == 2).await;
    counts_become(&sim, &[(MAIN_THREAD, 0), (WORKER, 0)]).await;
    let mut resumed = sim.jvm().thread_resumes.clone();
    resumed.sort_unstable();
    assert_eq!(resumed, [MAIN_THREAD, WORKER]);
    let mut shots = snapshots(&session, &id).await;
    shots.sort();
    insta::assert_debug_snapshot!(shots);
    engine.shutdown().await;
}

#[tokio::test]
async fn a_trace_with_an_expression_records_its_value_at_each_hit() {
    let (engine, session, sim) = scene().await;
    let id = arm(
        &session,
        line_stop(
            12,
            trace(1, LocalsChoice::None, 0, &["qty * 2 + total"]),
            Filters::default(),
        ),
    )
    .await;
    sim.hit(WORKER, "demo.Shop", "checkout", 12);
    point_when(&session, &id, "the capture", |v| v.captured == 1).await;
    counts_become(&sim, &[(MAIN_THREAD, 0), (WORKER, 0)]).await;
    let shots = snapshots(&session, &id).await;
    assert_eq!(shots.len(), 1);
    assert!(shots[0].contains("Long(23)"), "8 * 2 + 7: {}", shots[0]);
    engine.shutdown().await;
}

#[tokio::test]
async fn a_trace_spent_after_its_max_hits_leaves_no_request_in_the_jvm() {
    let (engine, session, sim) = scene().await;
    let id = arm(
        &session,
        line_stop(12, trace(1, LocalsChoice::All, 2, &[]), Filters::default()),
    )
    .await;
    for _ in 0..2 {
        sim.hit(MAIN_THREAD, "demo.Shop", "checkout", 12);
        counts_become(&sim, &[(MAIN_THREAD, 0), (WORKER, 0)]).await;
    }
    point_when(&session, &id, "two captures", |v| v.captured == 2).await;
    poll("the spent request cleared", async || {
        sim.breakpoints().is_empty().then_some(())
    })
    .await;
    assert!(sim.received(cmd::EVENT_CLEAR) >= 1);
    // A third hit finds nothing to report: nothing is suspended.
    assert!(sim.hit(MAIN_THREAD, "demo.Shop", "checkout", 12).is_empty());
    assert_eq!(sim.counts(), [(MAIN_THREAD, 0), (WORKER, 0)]);
    assert_eq!(snapshots(&session, &id).await.len(), 2);
    engine.shutdown().await;
}

#[tokio::test]
async fn a_location_only_trace_suspends_nothing() {
    let (engine, session, sim) = scene().await;
    let id = arm(
        &session,
        line_stop(11, trace(0, LocalsChoice::None, 0, &[]), Filters::default()),
    )
    .await;
    assert_eq!(sim.breakpoints(), [(11, SuspendPolicy::None)]);
    sim.hit(MAIN_THREAD, "demo.Shop", "checkout", 11);
    sim.hit(WORKER, "demo.Shop", "checkout", 11);
    point_when(&session, &id, "two captures", |v| v.captured == 2).await;
    assert_eq!(sim.counts(), [(MAIN_THREAD, 0), (WORKER, 0)]);
    assert!(sim.jvm().thread_resumes.is_empty(), "nothing to resume");
    assert_eq!(sim.received(cmd::FRAMES), 0, "no frame read");
    engine.shutdown().await;
}
