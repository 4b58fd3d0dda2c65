//! Why the middle layer passes its durations in as configuration rather
//! than pausing tokio's clock: a paused runtime that waits on a real
//! socket auto-advances to its next timer, so the dial's handshake timeout
//! fires before the scripted JVM (on its own OS thread) has answered.
//! When this test starts failing, the engine has stopped racing real I/O
//! against tokio timers and the middle layer can move to paused time.

use std::time::{Duration, Instant};

use jvmscope::actors::AttachError;
use jvmscope::model::AttachSpec;

use crate::fake_jdwp::{Behaviour, FakeJdwp};

#[tokio::test(start_paused = true)]
async fn a_paused_clock_outruns_the_handshake_of_a_real_socket() {
    let fake = FakeJdwp::start(Behaviour::Vm {
        threads: vec![1],
        then: vec![],
    });
    let engine = jvmscope::actors::Engine::start(super::config())
        .await
        .expect("engine");
    let spec = AttachSpec {
        host: "127.0.0.1".into(),
        port: fake.port(),
        timeout: Duration::from_secs(3600),
        read_only: false,
        source_roots: vec![],
        class_roots: vec![],
    };
    let wall = Instant::now();
    let attached = engine.attach(&spec).await;
    assert!(
        matches!(attached, Err(AttachError::NotJdwp { .. })),
        "an hour's handshake budget passed in virtual time: {:?}",
        attached.map(|s| s.id().clone())
    );
    assert!(
        wall.elapsed() < Duration::from_secs(60),
        "{:?}",
        wall.elapsed()
    );
}
