//! A request the JVM never answers fails alone, with the typed timeout,
//! after the configured time; the connection and the session go on.

use std::time::{Duration, Instant};

use jvmscope::actors::{JdwpError, SessionError, ThreadId};
use jvmscope::model::SessionState;

use super::{attach, config};
use crate::fake_jdwp::{Behaviour, FakeJdwp, Step, cmd};

const TIMEOUT: Duration = Duration::from_millis(150);

#[tokio::test]
async fn an_unanswered_request_times_out_typed_and_the_next_one_is_answered() {
    // FrameCount is not modelled: the first is never answered, the second is.
    let fake = FakeJdwp::start(Behaviour::Vm {
        threads: vec![1, 2],
        then: vec![Step::Stall, Step::Reply(3i32.to_be_bytes().to_vec())],
    });
    let mut cfg = config();
    cfg.request_timeout = TIMEOUT;
    let (engine, session) = attach(cfg, &fake, false).await;

    let started = Instant::now();
    let first = session.frame_count(ThreadId(1)).await;
    let took = started.elapsed();
    match first {
        Err(SessionError::Jdwp(JdwpError::Timeout { command, after })) => {
            assert_eq!(command, "ThreadReference.FrameCount");
            assert_eq!(after, TIMEOUT);
        }
        other => panic!("expected the typed timeout, got {other:?}"),
    }
    assert!(took >= TIMEOUT, "failed early, after {took:?}");

    // Same connection, next request: answered, and matched to its own id
    // (the stalled one's id is never answered).
    assert_eq!(session.frame_count(ThreadId(2)).await.expect("answered"), 3);
    assert!(session.check_alive().is_ok(), "a timeout is not a death");
    assert_eq!(session.state().await, SessionState::Running);
    let asked: Vec<_> = fake
        .received()
        .into_iter()
        .filter(|r| r.command() == (11, 7))
        .map(|r| r.id)
        .collect();
    assert_eq!(asked.len(), 2, "each FrameCount written once");
    assert_ne!(asked[0], asked[1]);
    assert_eq!(fake.connections(), 1, "no reconnect");
    engine.shutdown().await;
    fake.wait_for_command(cmd::DISPOSE, super::PATIENCE);
}

/// The window: with one request in flight allowed, a request queued behind
/// a stalled one keeps its own (shorter) deadline and times out in the
/// queue, never written; the stalled one then times out on its own, and
/// the freed slot carries the next request.
#[tokio::test]
async fn a_request_queued_behind_a_stall_times_out_in_the_queue() {
    use jvmscope::jdwp::thread_reference::FrameCount;
    let fake = FakeJdwp::start(Behaviour::Vm {
        threads: vec![1],
        then: vec![Step::Stall, Step::Reply(5i32.to_be_bytes().to_vec())],
    });
    let mut cfg = config();
    cfg.window = 1;
    let (engine, session) = attach(cfg, &fake, false).await;
    let conn = session.raw_connection();
    let ask = FrameCount {
        thread: ThreadId(1),
    };

    let stalled = conn.send_within(&ask, 3 * TIMEOUT);
    let queued = conn.send_within(&ask, TIMEOUT);
    let queued = queued.await;
    assert!(
        matches!(queued, Err(JdwpError::Timeout { after, .. }) if after == TIMEOUT),
        "{queued:?}"
    );
    let written = |f: &FakeJdwp| f.commands().iter().filter(|c| **c == (11, 7)).count();
    assert_eq!(written(&fake), 1, "the queued request was never written");
    let stalled = stalled.await;
    assert!(
        matches!(stalled, Err(JdwpError::Timeout { after, .. }) if after == 3 * TIMEOUT),
        "{stalled:?}"
    );
    // The slot is free: the next request goes out and is answered.
    assert_eq!(conn.send(&ask).await.expect("answered"), 5);
    assert_eq!(written(&fake), 2);
    engine.shutdown().await;
}
