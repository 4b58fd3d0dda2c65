//! Conditions and hit counts against the simulated JVM: a conditional
//! stop point holds only the hit thread while its condition is read from
//! the frame; true suspends the JVM, false resumes the thread, an error is
//! counted (and after a run of them the stop point disables itself); a
//! hit count is the JVM's to apply on a single request.

use jvmscope::actors::{CONDITION_ERROR_LIMIT, CountMode};
use jvmscope::jdwp::SuspendPolicy;
use jvmscope::jdwp::event_request::Modifier;
use jvmscope::model::stop_point::{Filters, Mode, StopState};

use super::{arm, counts_become, line_stop, point_when, poll, scene};
use crate::sim::model::ids::{MAIN_THREAD, WORKER};

fn when(condition: &str) -> Filters {
    Filters {
        condition: Some(condition.into()),
        ..Filters::default()
    }
}

#[tokio::test]
async fn a_true_condition_suspends_the_jvm() {
    let (engine, session, sim) = scene().await;
    let id = arm(&session, line_stop(12, Mode::Suspend, when("qty > 5"))).await;
    assert_eq!(sim.breakpoints(), [(12, SuspendPolicy::EventThread)]);
    sim.hit(WORKER, "demo.Shop", "checkout", 12); // qty is 8
    let v = point_when(&session, &id, "the passing hit", |v| {
        v.condition_passed == 1
    })
    .await;
    assert_eq!(v.condition_false, 0);
    // Escalated: the VM suspended, the hit thread's own event count undone.
    counts_become(&sim, &[(MAIN_THREAD, 1), (WORKER, 1)]).await;
    assert_eq!(sim.received(crate::sim::cmd::SUSPEND), 1);
    assert_eq!(sim.jvm().thread_resumes, [WORKER]);
    assert_eq!(
        session.event_threads().await,
        [jvmscope::actors::ThreadId(WORKER)],
        "held for the agent"
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn a_false_condition_resumes_the_hit_thread() {
    let (engine, session, sim) = scene().await;
    let id = arm(&session, line_stop(12, Mode::Suspend, when("qty > 5"))).await;
    sim.hit(MAIN_THREAD, "demo.Shop", "checkout", 12); // qty is 3
    point_when(&session, &id, "the false hit", |v| v.condition_false == 1).await;
    counts_become(&sim, &[(MAIN_THREAD, 0), (WORKER, 0)]).await;
    assert_eq!(sim.jvm().thread_resumes, [MAIN_THREAD]);
    assert_eq!(sim.received(crate::sim::cmd::SUSPEND), 0, "never escalated");
    assert!(session.event_threads().await.is_empty());
    engine.shutdown().await;
}

#[tokio::test]
async fn a_condition_on_fields_and_strings_is_read_from_the_frame() {
    let (engine, session, sim) = scene().await;
    let id = arm(
        &session,
        line_stop(
            12,
            Mode::Suspend,
            when("order.customer == \"ada\" && this.count == 7"),
        ),
    )
    .await;
    sim.hit(MAIN_THREAD, "demo.Shop", "checkout", 12);
    point_when(&session, &id, "the passing hit", |v| {
        v.condition_passed == 1
    })
    .await;
    counts_become(&sim, &[(MAIN_THREAD, 1), (WORKER, 1)]).await;
    engine.shutdown().await;
}

#[tokio::test]
async fn a_condition_naming_no_local_is_refused_before_any_request() {
    let (engine, session, sim) = scene().await;
    let refused = session
        .arm_stop(line_stop(12, Mode::Suspend, when("nosuch > 1")), 1)
        .await;
    let e = refused.expect_err("an unknown name");
    assert!(format!("{e:?}").contains("nosuch"), "{e:?}");
    assert!(sim.breakpoints().is_empty(), "nothing set in the JVM");
    assert_eq!(session.stop_point_count().await, 0);
    engine.shutdown().await;
}

#[tokio::test]
async fn an_erroring_condition_is_counted_and_disables_the_stop_point_after_a_run() {
    let (engine, session, sim) = scene().await;
    // qty is 3 on the main thread: a division by zero at every hit.
    let id = arm(
        &session,
        line_stop(12, Mode::Suspend, when("10 / (qty - 3) > 1")),
    )
    .await;
    for n in 1..=CONDITION_ERROR_LIMIT {
        sim.hit(MAIN_THREAD, "demo.Shop", "checkout", 12);
        let v = point_when(&session, &id, "the error", |v| v.condition_errors == n).await;
        assert!(v.last_error.is_some(), "{v:?}");
        counts_become(&sim, &[(MAIN_THREAD, 0), (WORKER, 0)]).await;
    }
    let v = point_when(&session, &id, "disabled by errors", |v| {
        v.state == StopState::Disabled
    })
    .await;
    assert_eq!((v.condition_passed, v.condition_false), (0, 0));
    poll("its request gone", async || {
        sim.breakpoints().is_empty().then_some(())
    })
    .await;
    assert_eq!(sim.received(crate::sim::cmd::SUSPEND), 0, "never escalated");
    engine.shutdown().await;
}

#[tokio::test]
async fn a_hit_count_is_applied_by_the_jvm_on_its_one_request() {
    let (engine, session, sim) = scene().await;
    let filters = Filters {
        hit_count: Some(3),
        ..Filters::default()
    };
    let id = arm(&session, line_stop(12, Mode::Suspend, filters)).await;
    let request = sim.jvm().requests_of(jvmscope::jdwp::EventKind::Breakpoint)[0].clone();
    assert!(
        request.modifiers.contains(&Modifier::Count { count: 3 }),
        "{request:?}"
    );
    assert!(sim.hit(MAIN_THREAD, "demo.Shop", "checkout", 12).is_empty());
    assert!(sim.hit(MAIN_THREAD, "demo.Shop", "checkout", 12).is_empty());
    assert_eq!(sim.hit(MAIN_THREAD, "demo.Shop", "checkout", 12).len(), 1);
    let v = point_when(&session, &id, "the third hit", |v| v.hits == 1).await;
    assert_eq!(v.count_mode, Some(CountMode::Jvm(3)));
    counts_become(&sim, &[(MAIN_THREAD, 1), (WORKER, 1)]).await;
    assert!(
        sim.hit(MAIN_THREAD, "demo.Shop", "checkout", 12).is_empty(),
        "spent"
    );
    engine.shutdown().await;
}
