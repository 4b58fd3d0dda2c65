//! tokio's paused clock and a real socket: the dial's handshake budget is
//! a `tokio::time::timeout`, so against a port that never answers an
//! hour's budget runs out in milliseconds of wall time. A paused runtime
//! that waits on a real socket counts as idle and jumps to its next
//! timer, so a scripted JVM on its own thread races that jump: the paused
//! tests past the dial therefore use the simulated JVM over an in-process
//! stream (`clock.rs`), whose deadlines and ages follow tokio's clock.

use std::time::{Duration, Instant};

use jvmscope::actors::AttachError;
use jvmscope::model::AttachSpec;

use crate::fake_jdwp::{Behaviour, FakeJdwp};

const HOUR: Duration = Duration::from_secs(3600);

#[tokio::test(start_paused = true)]
async fn an_hour_of_handshake_budget_on_a_silent_port_passes_in_virtual_time() {
    let fake = FakeJdwp::start(Behaviour::Silent);
    let engine = jvmscope::actors::Engine::start(super::config())
        .await
        .expect("engine");
    let spec = AttachSpec {
        host: "127.0.0.1".into(),
        port: fake.port(),
        timeout: HOUR,
        read_only: false,
        source_roots: vec![],
        class_roots: vec![],
    };
    let wall = Instant::now();
    let virtual_start = tokio::time::Instant::now();
    let attached = engine.attach(&spec).await;
    match attached {
        Err(AttachError::NotJdwp { addr, detail }) => {
            assert_eq!(addr, fake.address());
            assert!(detail.contains("3600000 ms"), "{detail}");
        }
        other => panic!("expected NOT_JDWP, got {:?}", other.map(|s| s.id().clone())),
    }
    assert!(virtual_start.elapsed() >= HOUR, "the budget ran in full");
    assert!(
        wall.elapsed() < Duration::from_secs(60),
        "{:?}",
        wall.elapsed()
    );
    fake.wait_until("the dial to have connected", super::PATIENCE, |v| {
        v.connections == 1
    });
    assert!(engine.sessions().is_empty(), "no session for a failed dial");
}
