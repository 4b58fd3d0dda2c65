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
use jvmscope::model::recent::{DroppedHold, RecentEvent};

use super::{attach, config, poll};
use crate::fake_jdwp::{Behaviour, FakeJdwp, cmd, command_packet};

/// A breakpoint hit of request `request` in `thread`, suspending all.
fn breakpoint(request: i32, thread: u64) -> Vec<u8> {
    hit(SuspendPolicy::All, request, thread, usize::MAX)
}

/// A breakpoint hit's composite cut after `keep` bytes of its data.
fn hit(policy: SuspendPolicy, request: i32, thread: u64, keep: usize) -> Vec<u8> {
    let composite = Composite {
        suspend_policy: policy,
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
    let data = composite.encode_data(IdSizes::HOTSPOT);
    command_packet(1, cmd::COMPOSITE_EVENT, &data[..keep.min(data.len())])
}

/// Bytes of a breakpoint composite up to its thread id (policy, count,
/// kind, request id, 8-byte thread): cut past it, the thread is readable.
const THROUGH_THREAD: usize = 1 + 4 + 1 + 4 + 8;

/// What the session recorded of the first refused composite.
async fn dropped(session: &jvmscope::actors::SessionHandle, nth: usize) -> DroppedHold {
    poll("the refused composite's record", async || {
        session
            .recent_events()
            .into_iter()
            .filter_map(|e| match e {
                RecentEvent::Undecodable { released, .. } => Some(released),
                _ => None,
            })
            .nth(nth)
    })
    .await
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

#[tokio::test]
async fn an_undecodable_composite_releases_what_its_policy_suspended() {
    let fake = FakeJdwp::start(Behaviour::Vm {
        threads: vec![1, 2],
        then: vec![],
    });
    let (engine, session) = attach(config(), &fake, false).await;

    fake.inject(&hit(SuspendPolicy::All, 5, 2, THROUGH_THREAD + 3), true);
    assert_eq!(dropped(&session, 0).await, DroppedHold::Vm);
    assert_eq!(fake.suspend_counts(), [(1, 0), (2, 0)]);

    fake.inject_holding(
        &hit(SuspendPolicy::EventThread, 5, 2, THROUGH_THREAD + 3),
        2,
    );
    assert_eq!(dropped(&session, 1).await, DroppedHold::Thread(ThreadId(2)));
    assert_eq!(fake.suspend_counts(), [(1, 0), (2, 0)]);
    assert_eq!(
        fake.commands()
            .iter()
            .filter(|c| **c == cmd::RESUME)
            .count(),
        1,
        "the event thread alone was resumed"
    );
    assert_eq!(session.state().await, SessionState::Running);
    engine.shutdown().await;
}

#[tokio::test]
async fn an_unreadable_event_thread_is_released_by_the_vm_only_when_nothing_else_is_held() {
    let fake = FakeJdwp::start(Behaviour::Vm {
        threads: vec![1, 2],
        then: vec![],
    });
    let (engine, session) = attach(config(), &fake, false).await;
    let cut = hit(SuspendPolicy::EventThread, 5, 2, THROUGH_THREAD - 3);

    fake.inject_holding(&cut, 2);
    assert_eq!(dropped(&session, 0).await, DroppedHold::Vm);
    assert_eq!(fake.suspend_counts(), [(1, 0), (2, 0)]);

    // A foreign suspend-all hit the agent holds: a VM resume would free it.
    fake.inject(&breakpoint(77, 1), true);
    poll("the held hit", async || {
        (!session.event_threads().await.is_empty()).then_some(())
    })
    .await;
    fake.inject_holding(&cut, 2);
    assert_eq!(dropped(&session, 1).await, DroppedHold::LeftToWatchdog);
    assert_eq!(fake.suspend_counts(), [(1, 1), (2, 2)]);
    assert_eq!(
        fake.commands()
            .iter()
            .filter(|c| **c == cmd::RESUME)
            .count(),
        1
    );
    engine.shutdown().await;
}
