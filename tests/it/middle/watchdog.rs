//! The Watchdog against a modelled JVM: a pause held past the suspension
//! limit is resumed, verified and recorded, within a few of its ticks.

use std::time::{Duration, Instant};

use jvmscope::actors::PauseOutcome;
use jvmscope::model::SessionState;

use super::{attach, config, poll};
use crate::fake_jdwp::{Behaviour, FakeJdwp, cmd};

const LIMIT: Duration = Duration::from_millis(200);

#[tokio::test]
async fn a_pause_held_past_the_limit_is_rescued_and_recorded() {
    let fake = FakeJdwp::start(Behaviour::Vm {
        threads: vec![1, 2, 3],
        then: vec![],
    });
    let mut cfg = config();
    cfg.suspend_limit = Some(LIMIT);
    let (engine, session) = attach(cfg, &fake, false).await;

    let paused_at = Instant::now();
    let outcome = session.pause().await.expect("pause");
    assert!(
        matches!(outcome, PauseOutcome::Paused { held: 3, total: 3 }),
        "{outcome:?}"
    );
    assert_eq!(fake.suspend_counts(), [(1, 1), (2, 1), (3, 1)]);

    let rescue = poll("the watchdog's rescue", async || {
        session.rescues().all.first().cloned()
    })
    .await;
    let rescued_after = paused_at.elapsed();
    assert_eq!((rescue.held, rescue.total), (3, 3));
    assert_eq!(rescue.still_held, 0, "the resume was verified");
    assert_eq!(rescue.resumes, 1, "one VM resume undoes one VM suspend");
    assert_eq!(rescue.limit, LIMIT);
    assert!(rescue.held_for >= LIMIT, "rescued early: {rescue:?}");
    assert!(rescued_after >= LIMIT, "{rescued_after:?}");
    assert!(rescue.cleared.is_empty(), "no event request froze it");

    // The JVM's own view: everything runs, and the rescue is told once.
    assert_eq!(fake.suspend_counts(), [(1, 0), (2, 0), (3, 0)]);
    let resumes = fake
        .commands()
        .iter()
        .filter(|c| **c == cmd::RESUME)
        .count();
    assert_eq!(resumes, 1, "exactly one rescue");
    assert_eq!(session.state().await, SessionState::Running);
    assert_eq!(session.take_unreported_rescues().len(), 1);
    assert!(session.take_unreported_rescues().is_empty());
    engine.shutdown().await;
}

/// A thread the agent holds is held too: the limit applies to any
/// suspension, and the rescue resumes it thread by thread as needed.
#[tokio::test]
async fn an_agent_held_thread_past_the_limit_is_released() {
    let fake = FakeJdwp::start(Behaviour::Vm {
        threads: vec![7, 8],
        then: vec![],
    });
    let mut cfg = config();
    cfg.suspend_limit = Some(LIMIT);
    let (engine, session) = attach(cfg, &fake, false).await;

    session
        .suspend_thread(jvmscope::actors::ThreadId(8))
        .await
        .expect("suspend one thread");
    assert_eq!(fake.suspend_counts(), [(7, 0), (8, 1)]);
    let rescue = poll("the watchdog's rescue", async || {
        session.rescues().all.first().cloned()
    })
    .await;
    assert_eq!((rescue.held, rescue.total, rescue.still_held), (1, 2, 0));
    assert_eq!(fake.suspend_counts(), [(7, 0), (8, 0)]);
    assert!(
        session.held_threads().await.is_empty(),
        "the ledger no longer counts the agent's hold"
    );
    engine.shutdown().await;
}
