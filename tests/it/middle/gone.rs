//! A JVM that closes the socket in the middle of a call: the call, and
//! every call in flight with it, fails with the one recognisable "gone"
//! error, the session is DEAD with the reason, and later calls say the
//! same without writing anything.

use jvmscope::actors::{SessionError, ThreadId};
use jvmscope::model::SessionState;

use super::{attach, config, poll};
use crate::fake_jdwp::{Behaviour, FakeJdwp, Step};

#[tokio::test]
async fn a_jvm_closing_mid_call_is_gone_and_the_session_dead() {
    // The first FrameCount stalls, the second closes the socket.
    let fake = FakeJdwp::start(Behaviour::Vm {
        threads: vec![1],
        then: vec![Step::Stall, Step::Close],
    });
    let (engine, session) = attach(config(), &fake, false).await;

    let (first, second) = futures::join!(
        session.frame_count(ThreadId(1)),
        session.frame_count(ThreadId(1))
    );
    for outcome in [first, second] {
        match outcome {
            Err(SessionError::Gone { .. }) => {}
            other => panic!("expected Gone for every call in flight, got {other:?}"),
        }
    }
    let reason = poll("the session to die", async || session.dead_reason()).await;
    assert!(reason.contains("closed"), "{reason}");
    assert!(
        matches!(session.state().await, SessionState::Dead { .. }),
        "the session reads DEAD"
    );
    let listed = engine.session(Some(&session.id().0)).expect("still listed");
    assert!(
        listed.dead_reason().is_some(),
        "the registry keeps it, dead"
    );

    // A later call is refused up front, with the same error and no packet.
    let before = fake.received().len();
    let later = session.threads().await;
    assert!(
        matches!(&later, Err(SessionError::Gone { reason: r, .. }) if *r == reason),
        "{later:?}"
    );
    assert_eq!(fake.received().len(), before, "nothing written after death");
    engine.shutdown().await;
}
