//! The supervision policy, exercised by crashing actors of a live session
//! (through the library's handles, against a real JVM).

use std::time::Duration;

use jvmscope::actors::testing::EventsMsg;
use jvmscope::actors::testing::WatchdogMsg;
use jvmscope::actors::testing::threads;
use jvmscope::actors::{Engine, EngineConfig, SessionHandle};
use jvmscope::model::AttachSpec;

use crate::support::java::{Jvm, JvmOpts};

async fn attach(engine: &Engine, jvm: &Jvm) -> SessionHandle {
    let spec = AttachSpec {
        host: "127.0.0.1".into(),
        port: jvm.port(),
        timeout: Duration::from_secs(5),
        read_only: false,
        source_roots: vec![],
        class_roots: vec![],
    };
    engine.attach(&spec).await.expect("attach")
}

async fn poll<T>(what: &str, f: impl AsyncFnMut() -> Option<T>) -> T {
    crate::support::poll_async(Duration::from_secs(10), what, f).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_event_dispatch_is_restarted_and_the_session_lives() {
    let jvm = Jvm::start("Ticker", JvmOpts::default());
    let engine = Engine::start(EngineConfig::default())
        .await
        .expect("engine");
    let session = attach(&engine, &jvm).await;
    let (events, _) = session.children().await.expect("children");
    events.send_message(EventsMsg::Crash).expect("send");
    let restarted = poll("a new EventDispatch", async || {
        let (now, _) = session.children().await?;
        (now.get_id() != events.get_id()).then_some(now)
    })
    .await;
    assert_eq!(session.restarts().await, 1);
    assert!(session.check_alive().is_ok());
    let list = threads::list(session.raw_connection())
        .await
        .expect("still talks to the JVM");
    assert!(list.iter().any(|t| t.name == "main"));
    drop(restarted);
    session.disconnect().await.expect("disconnect");
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_watchdog_is_restarted_and_the_session_lives() {
    let jvm = Jvm::start("Ticker", JvmOpts::default());
    let engine = Engine::start(EngineConfig::default())
        .await
        .expect("engine");
    let session = attach(&engine, &jvm).await;
    let (_, watchdog) = session.children().await.expect("children");
    watchdog.send_message(WatchdogMsg::Crash).expect("send");
    poll("a new Watchdog", async || {
        let (_, now) = session.children().await?;
        (now.get_id() != watchdog.get_id()).then_some(())
    })
    .await;
    assert_eq!(session.restarts().await, 1);
    assert!(threads::census(session.raw_connection()).await.is_ok());
    session.disconnect().await.expect("disconnect");
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn losing_one_connection_ends_only_that_session() {
    let a = Jvm::start("Ticker", JvmOpts::default());
    let b = Jvm::start("Ticker", JvmOpts::default());
    let engine = Engine::start(EngineConfig::default())
        .await
        .expect("engine");
    let sa = attach(&engine, &a).await;
    let sb = attach(&engine, &b).await;
    a.kill();
    let reason = poll("session a to die", async || sa.dead_reason()).await;
    assert!(reason.contains("closed"), "{reason}");
    assert!(sb.check_alive().is_ok());
    assert!(threads::census(sb.raw_connection()).await.is_ok());
    let err = threads::census(sa.raw_connection())
        .await
        .expect_err("a is gone");
    assert!(err.is_gone(), "{err}");
    sb.disconnect().await.expect("disconnect b");
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_probe_book_ends_the_session_and_gives_its_classes_back() {
    use jvmscope::actors::testing::ProbesMsg;
    use jvmscope::model::stop_point::{Engine as Via, LineSpec, Mode, StopPointSpec, Target};
    let jvm = Jvm::start("Ticker", JvmOpts::default());
    let engine = Engine::start(EngineConfig::default())
        .await
        .expect("engine");
    let session = attach(&engine, &jvm).await;
    let spec = StopPointSpec {
        target: Target::Line(LineSpec {
            class: "Ticker".into(),
            method: None,
            line: Some(crate::support::java::line_of("Ticker.java", "tick")),
        }),
        mode: Mode::Trace(Default::default()),
        filters: Default::default(),
        engine: Via::Probe,
    };
    let report = session.arm_stop(spec, 1).await.expect("a probe goes in");
    let point = report.point.expect("one stop point");
    assert!(point.probe.is_some(), "served by a probe: {point:?}");
    session
        .probe_book()
        .send_message(ProbesMsg::Crash)
        .expect("send");
    let reason = poll("the session to end", async || session.dead_reason()).await;
    assert!(reason.contains("probe book"), "{reason}");
    // The JVM listens again once the lost session's socket is closed, on
    // a new port (its agent was started on port 0). Had the class not been
    // given back, that attach would find the helper unrestored and give it
    // back itself.
    let spec = AttachSpec {
        host: "127.0.0.1".into(),
        port: jvm.listening_port(2, Duration::from_secs(10)),
        timeout: Duration::from_secs(5),
        read_only: false,
        source_roots: vec![],
        class_roots: vec![],
    };
    let again = engine
        .attach(&spec)
        .await
        .expect("the JVM takes a debugger again");
    assert_eq!(again.restored_at_attach().await, Vec::new());
    let printed = jvm.line_count();
    poll("the JVM to keep ticking", async || {
        (jvm.line_count() > printed).then_some(())
    })
    .await;
    again.disconnect().await.expect("disconnect");
    engine.shutdown().await;
}
