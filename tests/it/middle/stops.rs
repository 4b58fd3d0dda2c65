//! Suspending stop points against the simulated JVM: what requests exist
//! in the JVM after arming, clearing and toggling, and what a hit holds.

use jvmscope::jdwp::SuspendPolicy;
use jvmscope::model::SessionState;
use jvmscope::model::stop_point::{Filters, Mode};

use super::{arm, counts_become, line_stop, point_when, poll, scene};
use crate::sim::model::ids::{MAIN_THREAD, WORKER};

#[tokio::test]
async fn a_suspending_hit_holds_the_jvm_until_resumed() {
    let (engine, session, sim) = scene().await;
    let id = arm(&session, line_stop(12, Mode::Suspend, Filters::default())).await;
    assert_eq!(sim.breakpoints(), [(12, SuspendPolicy::All)]);
    sim.hit(MAIN_THREAD, "demo.Shop", "checkout", 12);
    point_when(&session, &id, "the hit", |v| v.hits == 1).await;
    poll("the held event thread", async || {
        (session.event_threads().await == [jvmscope::actors::ThreadId(MAIN_THREAD)]).then_some(())
    })
    .await;
    assert_eq!(sim.counts(), [(MAIN_THREAD, 1), (WORKER, 1)]);
    assert!(matches!(
        session.state().await,
        SessionState::Suspended { held: 2, total: 2 }
    ));
    session.resume_all().await.expect("resume");
    assert_eq!(sim.counts(), [(MAIN_THREAD, 0), (WORKER, 0)]);
    assert_eq!(sim.jvm().vm_resumes, 1);
    assert_eq!(session.state().await, SessionState::Running);
    engine.shutdown().await;
}

#[tokio::test]
async fn clearing_a_stop_point_removes_its_request_from_the_jvm() {
    let (engine, session, sim) = scene().await;
    let a = arm(&session, line_stop(12, Mode::Suspend, Filters::default())).await;
    let _b = arm(&session, line_stop(13, Mode::Suspend, Filters::default())).await;
    assert_eq!(sim.breakpoints().len(), 2);
    session.clear_stop(&a).await.expect("cleared");
    assert_eq!(
        sim.breakpoints(),
        [(13, SuspendPolicy::All)],
        "only line 13's is left"
    );
    assert!(sim.hit(MAIN_THREAD, "demo.Shop", "checkout", 12).is_empty());
    assert_eq!(sim.counts(), [(MAIN_THREAD, 0), (WORKER, 0)]);
    engine.shutdown().await;
}

#[tokio::test]
async fn a_disabled_stop_point_has_no_request_until_enabled_again() {
    let (engine, session, sim) = scene().await;
    let id = arm(&session, line_stop(12, Mode::Suspend, Filters::default())).await;
    session
        .toggle_stop(&id, Some(false))
        .await
        .expect("disabled");
    assert!(sim.breakpoints().is_empty());
    assert!(sim.hit(WORKER, "demo.Shop", "checkout", 12).is_empty());
    session.toggle_stop(&id, Some(true)).await.expect("enabled");
    assert_eq!(sim.breakpoints().len(), 1);
    assert_eq!(sim.hit(WORKER, "demo.Shop", "checkout", 12).len(), 1);
    point_when(&session, &id, "the hit", |v| v.hits == 1).await;
    engine.shutdown().await;
}

#[tokio::test]
async fn a_thread_filter_is_the_jvms_to_apply() {
    let (engine, session, sim) = scene().await;
    let filters = Filters {
        thread: Some(WORKER),
        ..Filters::default()
    };
    let id = arm(&session, line_stop(12, Mode::Suspend, filters)).await;
    assert!(
        sim.hit(MAIN_THREAD, "demo.Shop", "checkout", 12).is_empty(),
        "filtered by the JVM"
    );
    assert_eq!(sim.hit(WORKER, "demo.Shop", "checkout", 12).len(), 1);
    point_when(&session, &id, "the worker's hit", |v| v.hits == 1).await;
    counts_become(&sim, &[(MAIN_THREAD, 1), (WORKER, 1)]).await;
    engine.shutdown().await;
}

#[tokio::test]
async fn pause_and_resume_move_every_threads_count() {
    let (engine, session, sim) = scene().await;
    session.pause().await.expect("pause");
    assert_eq!(sim.counts(), [(MAIN_THREAD, 1), (WORKER, 1)]);
    let threads = session.threads().await.expect("threads");
    let mut names: Vec<_> = threads.iter().map(|t| t.name.clone()).collect();
    names.sort();
    assert_eq!(names, ["main", "worker"]);
    session.resume_all().await.expect("resume");
    assert_eq!(sim.counts(), [(MAIN_THREAD, 0), (WORKER, 0)]);
    engine.shutdown().await;
}
