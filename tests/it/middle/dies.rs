//! A simulated JVM that dies: in the middle of a stack read, or while a
//! hit holds it. The call fails with the one "gone" error, the session is
//! DEAD with the reason, and later calls say so without writing a byte.

use jvmscope::actors::{SessionError, StackQuery, ThreadId};
use jvmscope::model::SessionState;
use jvmscope::model::stop_point::{Filters, Mode};

use super::{arm, line_stop, point_when, poll, scene};
use crate::sim::model::ids::{MAIN_THREAD, WORKER};
use crate::sim::{Fault, cmd};

#[tokio::test]
async fn a_jvm_dying_mid_stack_read_fails_it_gone_and_the_session_dead() {
    let (engine, session, sim) = scene().await;
    session
        .suspend_thread(ThreadId(MAIN_THREAD))
        .await
        .expect("suspend");
    sim.fault(cmd::FRAMES, Fault::Die);
    let read = session
        .stack(&StackQuery {
            thread: Some(ThreadId(MAIN_THREAD)),
            max_frames: 5,
            package_filter: None,
            expand: false,
            budget: Default::default(),
        })
        .await;
    assert!(matches!(read, Err(SessionError::Gone { .. })), "{read:?}");
    let reason = poll("the session to die", async || session.dead_reason()).await;
    assert!(reason.contains("closed"), "{reason}");
    assert!(matches!(session.state().await, SessionState::Dead { .. }));
    let before = sim.jvm().received.len();
    let later = session.eval_context(Some(ThreadId(MAIN_THREAD)), 0).await;
    assert!(
        matches!(&later, Err(SessionError::Gone { reason: r, .. }) if *r == reason),
        "{later:?}"
    );
    assert_eq!(
        sim.jvm().received.len(),
        before,
        "nothing written after death"
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn a_jvm_killed_while_a_hit_holds_it_ends_the_session() {
    let (engine, session, sim) = scene().await;
    let id = arm(&session, line_stop(12, Mode::Suspend, Filters::default())).await;
    sim.hit(MAIN_THREAD, "demo.Shop", "checkout", 12);
    point_when(&session, &id, "the hit", |v| v.hits == 1).await;
    assert_eq!(sim.counts(), [(MAIN_THREAD, 1), (WORKER, 1)]);
    sim.kill();
    poll("the session to die", async || session.dead_reason()).await;
    let before = sim.jvm().received.len();
    let resumed = session.resume_all().await;
    assert!(
        matches!(resumed, Err(SessionError::Gone { .. })),
        "{resumed:?}"
    );
    assert_eq!(sim.jvm().received.len(), before);
    let listed = engine.session(Some(&session.id().0)).expect("still listed");
    assert!(
        listed.dead_reason().is_some(),
        "the registry keeps it, dead"
    );
    engine.shutdown().await;
}
