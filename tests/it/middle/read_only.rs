//! Read-only sessions refuse what changes the JVM before a byte of it is
//! written, while reads go on over the same connection.

use jvmscope::actors::{EngineConfig, JdwpError, SessionError};

use super::{attach, config};
use crate::fake_jdwp::{Behaviour, FakeJdwp, Received, cmd};

/// `(set, cmd)` of ObjectReference.SetValues and ThreadReference.Stop.
const SET_VALUES: (u8, u8) = (9, 3);
const STOP: (u8, u8) = (11, 10);

async fn refuses_mutations(cfg: EngineConfig, read_only_attach: bool) {
    let fake = FakeJdwp::start(Behaviour::Vm {
        threads: vec![1],
        then: vec![],
    });
    let (engine, session) = attach(cfg, &fake, read_only_attach).await;
    assert!(session.read_only());
    assert!(matches!(
        session.ensure_writable("invoke a method"),
        Err(SessionError::ReadOnly { .. })
    ));
    let conn = session.raw_connection();
    let before = fake.received().len();
    for (set, command) in [SET_VALUES, STOP] {
        let refused = conn.raw(set, command, "mutation", vec![0; 16], None).await;
        assert!(
            matches!(refused, Err(JdwpError::ReadOnly { .. })),
            "{refused:?}"
        );
    }
    // A read written after the refusals arrives first: they never reached
    // the socket (one writer, in order), and the connection still works.
    let version = conn
        .send(&jvmscope::jdwp::virtual_machine::Version)
        .await
        .expect("reads go on");
    assert_eq!(version.vm_name, "FakeVM");
    let after: Vec<(u8, u8)> = fake.received()[before..]
        .iter()
        .map(Received::command)
        .collect();
    assert_eq!(after, [cmd::VERSION], "only the read was written");
    engine.shutdown().await;
}

#[tokio::test]
async fn a_read_only_attach_refuses_mutations_before_the_wire() {
    refuses_mutations(config(), true).await;
}

#[tokio::test]
async fn the_engine_wide_read_only_switch_overrides_a_writable_attach() {
    let mut cfg = config();
    cfg.force_read_only = true;
    refuses_mutations(cfg, false).await;
}
