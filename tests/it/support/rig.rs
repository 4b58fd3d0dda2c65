//! An in-process rig for tool tests that need an event-suspended thread:
//! a fixture JVM, an engine attached to it, the real tool layer
//! (`JvmScope::call`), and a one-shot breakpoint armed through the session
//! API.

use std::time::Duration;

use serde_json::Value;

use jvmscope::actors::{Engine, EngineConfig, SessionHandle};
use jvmscope::jdwp::event_request::Set;
use jvmscope::jdwp::{
    Event, EventKind, Location, Modifier, RequestId, SuspendPolicy, ThreadId, TypeTag,
};
use jvmscope::mcp::JvmScope;
use jvmscope::model::AttachSpec;

use super::java::{Jvm, JvmOpts};

pub struct Rig {
    pub jvm: Jvm,
    pub engine: Engine,
    pub server: JvmScope,
    pub session: SessionHandle,
}

/// Starts `main_class`, waits for `ready`, attaches with `config`.
pub async fn rig_with(main_class: &str, ready: &str, config: EngineConfig, read_only: bool) -> Rig {
    rig_on(main_class, ready, JvmOpts::default(), config, read_only).await
}

/// [`rig_with`] on a JVM started with `opts` (another JDK, say).
pub async fn rig_on(
    main_class: &str,
    ready: &str,
    opts: JvmOpts,
    config: EngineConfig,
    read_only: bool,
) -> Rig {
    let jvm = Jvm::start(main_class, opts);
    jvm.wait_for_line(ready, Duration::from_secs(10));
    let engine = Engine::start(config).await.expect("engine");
    let session = engine
        .attach(&AttachSpec {
            host: "127.0.0.1".into(),
            port: jvm.port(),
            timeout: Duration::from_secs(5),
            read_only,
            source_roots: vec![],
            class_roots: vec![],
        })
        .await
        .expect("attach");
    let server = JvmScope::new(engine.clone());
    Rig {
        jvm,
        engine,
        server,
        session,
    }
}

/// The location of the first code index of `line` in `class`.
pub async fn location(session: &SessionHandle, class: &str, line: u32) -> Location {
    let classes = session.class_cache();
    let copies = classes.by_name(class).await.expect("class lookup");
    let c = copies.first().expect("class loaded").clone();
    for m in classes.methods(c.id).await.expect("methods").iter() {
        let lines = classes.lines(c.id, m.id).await.expect("lines");
        if let Some(index) = lines.indexes_of(line as i32).first() {
            return Location {
                type_tag: TypeTag::Class,
                class: c.id,
                method: m.id,
                index: *index as u64,
            };
        }
    }
    panic!("{class}:{line} has no code");
}

/// Arms a breakpoint (suspending the event thread; one-shot when `once`).
pub async fn arm(session: &SessionHandle, class: &str, line: u32, once: bool) -> RequestId {
    let location = location(session, class, line).await;
    let mut modifiers = vec![Modifier::LocationOnly { location }];
    if once {
        modifiers.insert(0, Modifier::Count { count: 1 });
    }
    session
        .raw_connection()
        .send(&Set {
            event_kind: EventKind::Breakpoint,
            suspend_policy: SuspendPolicy::EventThread,
            modifiers,
        })
        .await
        .expect("arm")
}

/// Arms a one-shot breakpoint on `line` of `class` and waits for its hit.
pub async fn hit(session: &SessionHandle, class: &str, line: u32) -> ThreadId {
    let mut events = session.subscribe();
    let request = arm(session, class, line, true).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let composite = tokio::time::timeout_at(deadline, events.recv())
            .await
            .expect("breakpoint hit in time")
            .expect("event stream");
        for e in &composite.events {
            if let Event::Breakpoint {
                request_id, thread, ..
            } = e
                && *request_id == request
            {
                return *thread;
            }
        }
    }
}

/// Calls a tool in-process; returns (is_error, text).
pub async fn call(server: &JvmScope, tool: &str, args: Value) -> (bool, String) {
    let r = server.call(tool, args).await;
    let text = r
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n");
    (r.is_error == Some(true), text)
}
