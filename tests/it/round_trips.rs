//! Round-trip levels of the hot tools on a held JVM, proved without a
//! clock: a proxy between the engine and the JVM withholds each level's
//! replies until every command of that level has arrived (see
//! `support::levels`), so a command that waited for an earlier reply of
//! its own level would hang the call. Each call is made once cold (class
//! caches fill), then gated and checked warm.

use std::time::Duration;

use serde_json::json;

use jvmscope::actors::{Engine, EngineConfig, SessionHandle};
use jvmscope::jdwp::array_reference::Length;
use jvmscope::jdwp::stack_frame::GetValues;
use jvmscope::jdwp::thread_reference::{FrameCount, Frames, SuspendCount};
use jvmscope::jdwp::virtual_machine::{AllThreads, Resume};
use jvmscope::mcp::JvmScope;
use jvmscope::model::AttachSpec;

use crate::support::java::{Jvm, JvmOpts, line_of};
use crate::support::levels::{LevelProxy, cmd};
use crate::support::rig::call;

/// A gated call: fails instead of hanging when a level never fills.
async fn gated(
    proxy: &LevelProxy,
    server: &JvmScope,
    levels: &[usize],
    tool: &str,
    args: serde_json::Value,
) -> (String, Vec<Vec<(u8, u8)>>) {
    proxy.gate(levels);
    let r = tokio::time::timeout(Duration::from_secs(20), call(server, tool, args)).await;
    let seen = proxy.levels();
    let (is_error, text) = r.unwrap_or_else(|_| {
        panic!("{tool}: a level never filled (commands sent one after another): {seen:?}")
    });
    // A level that never fills shows up as the JVM's reply timing out.
    assert!(!is_error, "{tool}: {text}\ncommands by level: {seen:?}");
    (text, seen)
}

/// Ticker held at its `tick` line behind a [`LevelProxy`], every tool
/// called once cold.
async fn held_ticker() -> (Jvm, LevelProxy, Engine, SessionHandle, JvmScope) {
    let jvm = Jvm::start("Ticker", JvmOpts::default());
    jvm.wait_for_line("ticker started", Duration::from_secs(10));
    let proxy = LevelProxy::start(jvm.port());
    // No watchdog traffic (its census of a held VM) while a level is gated.
    let config = EngineConfig {
        watchdog_interval: Duration::from_secs(3600),
        suspend_limit: None,
        ..EngineConfig::default()
    };
    let engine = Engine::start(config).await.expect("engine");
    let session = engine
        .attach(&AttachSpec {
            host: "127.0.0.1".into(),
            port: proxy.port(),
            timeout: Duration::from_secs(5),
            read_only: false,
            source_roots: vec![],
            class_roots: vec![],
        })
        .await
        .expect("attach");
    let server = JvmScope::new(engine.clone());
    let line = line_of("Ticker.java", "tick");
    let (err, text) = call(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Ticker", "line": line}),
    )
    .await;
    assert!(!err, "{text}");
    let (err, text) = call(
        &server,
        "debug_wait_for_event",
        json!({"timeout_ms": 10000}),
    )
    .await;
    assert!(!err, "{text}");
    // Cold: the class, method, line and variable tables and the type of
    // `args` are read once and cached.
    for (tool, args) in [
        ("debug_get_stack", json!({"max_frames": 3})),
        ("debug_get_stack", json!({"max_frames": 1})),
        ("debug_evaluate", json!({"expression": "limit"})),
    ] {
        let (err, text) = call(&server, tool, args).await;
        assert!(!err, "{tool}: {text}");
    }

    (jvm, proxy, engine, session, server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn held_thread_tools_pipeline_their_round_trips() {
    let (_jvm, proxy, engine, session, server) = held_ticker().await;
    // The thread's count, its top frame and the depth go together; then
    // the frame's locals; then the length of `args`.
    let (text, seen) = gated(
        &proxy,
        &server,
        &[3, 1, 1],
        "debug_get_stack",
        json!({"max_frames": 1}),
    )
    .await;
    assert!(text.contains("1 of 1 frames"), "{text}");
    assert!(text.contains("Ticker.main"), "{text}");
    assert_eq!(
        seen,
        vec![
            vec![cmd::<SuspendCount>(), cmd::<Frames>(), cmd::<FrameCount>()],
            vec![cmd::<GetValues>()],
            vec![cmd::<Length>()],
        ]
    );

    // A window past the end of a shallow stack is asked for again, as deep
    // as the depth read in the first burst says.
    let (text, seen) = gated(
        &proxy,
        &server,
        &[3, 1, 1, 1],
        "debug_get_stack",
        json!({"max_frames": 3}),
    )
    .await;
    assert!(text.contains("1 of 1 frames"), "{text}");
    assert_eq!(
        seen,
        vec![
            vec![cmd::<SuspendCount>(), cmd::<Frames>(), cmd::<FrameCount>()],
            vec![cmd::<Frames>()],
            vec![cmd::<GetValues>()],
            vec![cmd::<Length>()],
        ]
    );

    // A local of a static frame: the count and the frame together, then
    // the slot (no `this` to read).
    let (text, seen) = gated(
        &proxy,
        &server,
        &[2, 1],
        "debug_evaluate",
        json!({"expression": "limit"}),
    )
    .await;
    assert!(text.starts_with("limit = "), "{text}");
    assert_eq!(
        seen,
        vec![
            vec![cmd::<SuspendCount>(), cmd::<Frames>()],
            vec![cmd::<GetValues>()],
        ]
    );

    // The census, then the resume with every known thread's count and the
    // thread list queued right behind it.
    let threads = session
        .raw_connection()
        .send(&AllThreads)
        .await
        .expect("threads")
        .len();
    let (text, seen) = gated(
        &proxy,
        &server,
        &[1, threads, threads + 2],
        "debug_continue",
        json!({}),
    )
    .await;
    assert!(text.contains("(1 resume sent)"), "{text}");
    let mut burst = vec![cmd::<Resume>()];
    burst.extend(std::iter::repeat_n(cmd::<SuspendCount>(), threads));
    burst.push(cmd::<AllThreads>());
    assert_eq!(
        seen,
        vec![
            vec![cmd::<AllThreads>()],
            vec![cmd::<SuspendCount>(); threads],
            burst,
        ]
    );

    let _ = call(&server, "debug_disconnect", json!({})).await;
    engine.shutdown().await;
}
