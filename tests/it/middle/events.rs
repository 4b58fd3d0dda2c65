//! Event composites from the scripted JVM through Connection →
//! EventDispatch → the session's ledger → the Watchdog: a suspending event
//! for a request that is not ours is recorded and the JVM left held for
//! the agent, until the suspension limit, when the Watchdog clears that
//! request (so its next hit cannot freeze the JVM again) and resumes.

use std::time::Duration;

use jvmscope::jdwp::wire::IdSizes;
use jvmscope::jdwp::{
    Composite, Event, Location, MethodId, ReferenceTypeId, RequestId, SuspendPolicy, ThreadId,
    TypeTag,
};
use jvmscope::model::SessionState;

use super::{attach, config, poll};
use crate::fake_jdwp::{Behaviour, FakeJdwp, cmd, command_packet};

/// A breakpoint hit of request `request` in `thread`, suspending all.
fn breakpoint(request: i32, thread: u64) -> Vec<u8> {
    let composite = Composite {
        suspend_policy: SuspendPolicy::All,
        events: vec![Event::Breakpoint {
            request_id: RequestId(request),
            thread: ThreadId(thread),
            location: Location {
                type_tag: TypeTag::Class,
                class: ReferenceTypeId(0x100),
                method: MethodId(0x200),
                index: 4,
            },
        }],
    };
    command_packet(
        1,
        cmd::COMPOSITE_EVENT,
        &composite.encode_data(IdSizes::HOTSPOT),
    )
}

#[tokio::test]
async fn a_foreign_suspending_event_is_held_then_disarmed_and_resumed() {
    let fake = FakeJdwp::start(Behaviour::Vm {
        threads: vec![1, 2],
        then: vec![],
    });
    let mut cfg = config();
    cfg.suspend_limit = Some(Duration::from_millis(300));
    let (engine, session) = attach(cfg, &fake, false).await;
    let mut bus = session.subscribe();

    fake.inject(&breakpoint(77, 2), true);
    let seen = tokio::time::timeout(super::PATIENCE, bus.recv())
        .await
        .expect("the composite reaches the event bus")
        .expect("bus open");
    assert_eq!(seen.events.len(), 1);
    assert_eq!(session.event_threads().await, [ThreadId(2)]);
    assert!(
        matches!(
            session.state().await,
            SessionState::Suspended { held: 2, total: 2 }
        ),
        "not ours to release: the JVM stays held for the agent"
    );

    let rescue = poll("the watchdog's rescue", async || {
        session.rescues().all.first().cloned()
    })
    .await;
    assert_eq!(rescue.cleared, [RequestId(77)], "{rescue:?}");
    assert_eq!(rescue.still_held, 0);
    // Disarmed before resumed: EventRequest.Clear(BREAKPOINT, 77), then Resume.
    let received = fake.received();
    let clear = received
        .iter()
        .position(|r| r.command() == cmd::EVENT_CLEAR)
        .expect("the request was cleared");
    assert_eq!(
        received[clear].data,
        [[2u8].as_slice(), &77i32.to_be_bytes()].concat()
    );
    let resume = received
        .iter()
        .position(|r| r.command() == cmd::RESUME)
        .expect("resumed");
    assert!(
        clear < resume,
        "cleared first, so resuming cannot re-freeze"
    );
    assert_eq!(fake.suspend_counts(), [(1, 0), (2, 0)]);
    assert!(session.event_threads().await.is_empty());
    assert_eq!(session.state().await, SessionState::Running);
    engine.shutdown().await;
}
