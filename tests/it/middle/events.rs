//! Event composites from the scripted JVM through Connection →
//! EventDispatch → the session's ledger → the Watchdog. A suspending event
//! of a request nobody in the session has (cleared while its hit was
//! queued) is released at once, as its policy held it. One of a request
//! the session set outside its stop points (a step) is recorded and left
//! held for the agent, until the suspension limit, when the Watchdog clears
//! that request (so its next hit cannot freeze the JVM again) and resumes.

use std::time::Duration;

use jvmscope::actors::{StepFilter, StepKind};
use jvmscope::jdwp::wire::IdSizes;
use jvmscope::jdwp::{
    Composite, Event, Location, MethodId, ReferenceTypeId, RequestId, SuspendPolicy, ThreadId,
    TypeTag,
};
use jvmscope::model::SessionState;
use jvmscope::model::recent::{DroppedHold, RecentEvent};

use super::{attach, config, poll};
use crate::fake_jdwp::{Behaviour, FakeJdwp, Step, cmd, command_packet};

/// Where the scripted events happen.
const AT: Location = Location {
    type_tag: TypeTag::Class,
    class: ReferenceTypeId(0x100),
    method: MethodId(0x200),
    index: 4,
};

/// A composite of one event, as the JVM sends it.
fn composite(policy: SuspendPolicy, event: Event) -> Vec<u8> {
    let data = Composite {
        suspend_policy: policy,
        events: vec![event],
    }
    .encode_data(IdSizes::HOTSPOT);
    command_packet(1, cmd::COMPOSITE_EVENT, &data)
}

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
            location: AT,
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

/// What the session noted of the `nth` stray event.
async fn stray(session: &jvmscope::actors::SessionHandle, nth: usize) -> (RequestId, DroppedHold) {
    poll("the stray event's record", async || {
        session
            .recent_events()
            .into_iter()
            .filter_map(|e| match e {
                RecentEvent::Stray {
                    request, released, ..
                } => Some((request, released)),
                _ => None,
            })
            .nth(nth)
    })
    .await
}

#[tokio::test]
async fn a_suspending_event_nobody_asked_for_is_resumed_at_once() {
    let fake = FakeJdwp::start(Behaviour::Vm {
        threads: vec![1, 2],
        then: vec![],
    });
    let (engine, session) = attach(config(), &fake, false).await;

    // Suspend-all, for a request id this session never set (or cleared
    // while the hit was queued): one VirtualMachine.Resume, at once.
    fake.inject(&breakpoint(77, 2), true);
    assert_eq!(stray(&session, 0).await, (RequestId(77), DroppedHold::Vm));
    fake.wait_for_command(cmd::RESUME, super::PATIENCE);
    assert_eq!(fake.suspend_counts(), [(1, 0), (2, 0)]);

    // Suspend-event-thread: that thread's resume, and nothing else.
    fake.inject_holding(&hit(SuspendPolicy::EventThread, 78, 2, usize::MAX), 2);
    assert_eq!(
        stray(&session, 1).await,
        (RequestId(78), DroppedHold::Thread(ThreadId(2)))
    );
    fake.wait_for_command(cmd::THREAD_RESUME, super::PATIENCE);
    assert_eq!(fake.suspend_counts(), [(1, 0), (2, 0)]);
    assert_eq!(
        fake.commands()
            .iter()
            .filter(|c| **c == cmd::RESUME)
            .count(),
        1,
        "the event thread alone was resumed"
    );

    // Nothing was handed to the agent, and the ledger says what is true.
    assert!(session.event_threads().await.is_empty());
    assert_eq!(session.state().await, SessionState::Running);
    engine.shutdown().await;
}

#[tokio::test]
async fn a_step_landing_is_held_for_the_agent_then_disarmed_and_resumed() {
    // The step's EventRequest.Set is answered with id 77, its frame read
    // with no frames.
    let fake = FakeJdwp::start(Behaviour::Vm {
        threads: vec![1, 2],
        then: vec![
            Step::Reply(77i32.to_be_bytes().to_vec()),
            Step::Reply(0i32.to_be_bytes().to_vec()),
        ],
    });
    let mut cfg = config();
    cfg.suspend_limit = Some(Duration::from_millis(300));
    let (engine, session) = attach(cfg, &fake, false).await;
    // Held by the agent so it can step; the step resumes it.
    session
        .suspend_thread(ThreadId(2))
        .await
        .expect("thread held");

    let stepping = {
        let session = session.clone();
        tokio::spawn(async move {
            session
                .step(
                    ThreadId(2),
                    StepKind::Over,
                    &StepFilter::Exclude(vec![]),
                    super::PATIENCE,
                )
                .await
        })
    };
    poll("the step's resume", async || {
        (fake.suspend_counts() == [(1, 0), (2, 0)] && fake.commands().contains(&cmd::THREAD_RESUME))
            .then_some(())
    })
    .await;
    let mut bus = session.subscribe();
    fake.inject_holding(
        &composite(
            SuspendPolicy::EventThread,
            Event::SingleStep {
                request_id: RequestId(77),
                thread: ThreadId(2),
                location: AT,
            },
        ),
        2,
    );
    let seen = tokio::time::timeout(super::PATIENCE, bus.recv())
        .await
        .expect("the composite reaches the event bus")
        .expect("bus open");
    assert_eq!(seen.events.len(), 1);
    stepping
        .await
        .expect("the step task")
        .expect("the step landed");

    let rescue = poll("the watchdog's rescue", async || {
        session.rescues().all.first().cloned()
    })
    .await;
    assert_eq!(rescue.cleared, [RequestId(77)], "{rescue:?}");
    assert_eq!(rescue.still_held, 0);
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

    // The agent holds the JVM: a VM resume would free it.
    session.pause().await.expect("paused");
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
