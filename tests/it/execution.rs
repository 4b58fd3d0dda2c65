//! Execution control and safety against the Execution fixture: verified
//! continue, idempotent pause, counted thread suspends, the three step
//! kinds with and without filters, set_value on every target kind,
//! force_return and pop_frame observed by the program, the watchdog
//! rescue, read-only refusals, and disconnects that leave the JVM running.

use std::time::Duration;

use serde_json::json;

use jvmscope::actors::EngineConfig;

use crate::support::java::{Jvm, line_of};
use crate::support::poll_until_msg;
use crate::support::rig::{Rig, arm, call, hit, rig_with};

async fn rig() -> Rig {
    rig_with(
        "Execution",
        "execution ready",
        EngineConfig::default(),
        false,
    )
    .await
}

fn line(marker: &str) -> u32 {
    line_of("Execution.java", marker)
}

fn tid(t: jvmscope::jdwp::ThreadId) -> String {
    format!("@{:#x}", t.0)
}

/// Waits for an output line containing `needle` after line `start`.
fn expect_output(jvm: &Jvm, start: usize, needle: &str) -> String {
    let (_, l) = jvm.wait_for_line_since(start, |l| l.contains(needle), Duration::from_secs(10));
    l
}

fn assert_runs(jvm: &Jvm) {
    let before = jvm.line_count();
    poll_until_msg(
        Duration::from_secs(10),
        "the program to keep printing",
        || (jvm.line_count() > before + 3).then_some(()),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_over_into_and_out_land_on_the_expected_lines() {
    let r = rig().await;
    let s = &r.server;
    let t = hit(&r.session, "Execution", line("step-start")).await;
    let (err, text) = call(
        s,
        "debug_step",
        json!({"kind": "over", "thread_id": tid(t)}),
    )
    .await;
    assert!(!err, "{text}");
    assert!(
        text.contains(&format!("Execution.stepTarget:{}", line("step-call"))),
        "{text}"
    );
    assert!(text.contains("skipping java.*"), "names the filter: {text}");
    // The landing is the last event, with a sequence number of its own.
    let (_, last) = call(s, "debug_get_last_event", json!({})).await;
    assert!(last.contains("kind=step"), "{last}");
    assert!(
        last.contains(&format!("Execution.stepTarget:{}", line("step-call"))),
        "{last}"
    );
    let seq = |t: &str| -> u64 {
        t.split("seq=")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no seq in {t}"))
    };
    let first_seq = seq(&last);
    let (_, text) = call(s, "debug_step", json!({"kind": "into", })).await;
    let (_, last) = call(s, "debug_get_last_event", json!({})).await;
    assert!(
        last.contains(&format!("Execution.helper:{}", line("helper-body")))
            && seq(&last) > first_seq,
        "the second landing is newer: {last}"
    );
    assert!(
        text.contains(&format!("Execution.helper:{}", line("helper-body"))),
        "{text}"
    );
    let (_, text) = call(s, "debug_step", json!({"kind": "out", })).await;
    assert!(text.contains("Execution.stepTarget:"), "{text}");
    let (_, text) = call(s, "debug_step", json!({"kind": "over", })).await;
    assert!(
        text.contains(&format!("Execution.stepTarget:{}", line("step-next"))),
        "{text}"
    );
    call(s, "debug_continue", json!({})).await;

    // Into a JDK call: skipped by default, entered with no filter.
    let t = hit(&r.session, "Execution", line("print-compute")).await;
    let (_, text) = call(
        s,
        "debug_step",
        json!({"kind": "into", "thread_id": tid(t)}),
    )
    .await;
    assert!(text.contains("Execution.main:"), "java.* skipped: {text}");
    call(s, "debug_continue", json!({})).await;
    let t = hit(&r.session, "Execution", line("print-compute")).await;
    let (_, text) = call(
        s,
        "debug_step",
        json!({"kind": "into", "thread_id": tid(t), "exclude_classes": []}),
    )
    .await;
    assert!(!text.contains("Execution.main:"), "entered the JDK: {text}");
    assert!(text.contains("no class filter"), "{text}");
    call(s, "debug_continue", json!({})).await;
    let t = hit(&r.session, "Execution", line("step-call")).await;
    let (_, text) = call(
        s,
        "debug_step",
        json!({"kind": "into", "thread_id": tid(t), "only_classes": ["Execution"]}),
    )
    .await;
    assert!(text.contains("Execution.helper:"), "{text}");
    assert!(text.contains("stopping only in Execution"), "{text}");
    call(s, "debug_continue", json!({})).await;
    assert_runs(&r.jvm);
    r.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_value_on_every_target_kind() {
    let r = rig().await;
    let s = &r.server;
    hit(&r.session, "Execution", line("step-start")).await;
    let set = |target: &str, value: &str| json!({"target": target, "value": value});
    let (err, text) = call(s, "debug_set_value", set("a", "100")).await;
    assert!(!err, "{text}");
    assert!(text.starts_with("Set local a (int): "), "{text}");
    let (_, text) = call(s, "debug_evaluate", json!({"expression": "a"})).await;
    assert!(text.starts_with("a = 100"), "{text}");
    let (err, text) = call(s, "debug_set_value", set("limit", "9")).await;
    assert!(
        !err && text.contains("static field Execution.limit (int): 5 → 9"),
        "{text}"
    );
    let (err, text) = call(s, "debug_set_value", set("this.name", "\"changed\"")).await;
    assert!(!err && text.contains("\"exec\" → \"changed\""), "{text}");
    let (err, text) = call(s, "debug_set_value", set("Execution.arr[1]", "42")).await;
    assert!(!err && text.contains("2 → 42"), "{text}");
    let (err, text) = call(s, "debug_set_value", set("Execution.list[0]", "\"z\"")).await;
    assert!(!err, "List element via set(): {text}");
    let (err, text) = call(s, "debug_set_value", set("a", "\"text\"")).await;
    assert!(err && text.starts_with("[TYPE_MISMATCH]"), "{text}");
    assert!(
        text.contains("string literal") && text.contains("int"),
        "names both types: {text}"
    );
    let mark = r.jvm.line_count();
    call(s, "debug_continue", json!({})).await;
    let printed = expect_output(&r.jvm, mark, "limit 9");
    assert!(printed.contains("arr1 42"), "{printed}");
    assert!(printed.contains("name changed"), "{printed}");
    assert!(printed.contains("list0 z"), "{printed}");
    assert!(printed.contains("r 203"), "a=100 flowed through: {printed}");
    r.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn force_return_and_pop_frame_are_observed_by_the_program() {
    let r = rig().await;
    let s = &r.server;
    hit(&r.session, "Execution", line("compute-return")).await;
    let (err, text) = call(s, "debug_force_return", json!({"value": "41"})).await;
    assert!(!err, "{text}");
    let mark = r.jvm.line_count();
    call(s, "debug_continue", json!({})).await;
    expect_output(&r.jvm, mark, "compute 41");

    let t = hit(&r.session, "Execution", line("counted-return")).await;
    let (_, before) = call(
        s,
        "debug_evaluate",
        json!({"expression": "Execution.popCount"}),
    )
    .await;
    let count: i32 = before
        .split(" = ")
        .nth(1)
        .and_then(|v| v.lines().next())
        .and_then(|v| v.trim().parse().ok())
        .expect("popCount");
    let (err, text) = call(s, "debug_pop_frame", json!({"thread_id": tid(t)})).await;
    assert!(!err, "{text}");
    assert!(text.contains("Popped 1 frame: Execution.counted"), "{text}");
    let mark = r.jvm.line_count();
    call(s, "debug_continue", json!({})).await;
    // counted() ran twice for one call: the printed count skipped one.
    expect_output(
        &r.jvm,
        mark,
        &format!("counted {} popCount {}", count + 1, count + 1),
    );
    let (err, text) = call(
        s,
        "debug_pop_frame",
        json!({"thread_id": tid(t), "frame_index": 99}),
    )
    .await;
    assert!(err, "{text}");
    r.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn suspends_are_counted_and_continue_verifies() {
    let r = rig().await;
    let s = &r.server;
    let t = hit(&r.session, "Execution", line("step-start")).await;
    let (_, text) = call(s, "debug_pause", json!({})).await;
    assert!(text.starts_with("Paused"), "{text}");
    let (_, text) = call(s, "debug_pause", json!({})).await;
    assert!(text.starts_with("Already suspended"), "idempotent: {text}");
    let (err, text) = call(s, "debug_continue", json!({})).await;
    assert!(!err && text.contains("Verified: all"), "{text}");
    assert_runs(&r.jvm);

    let main = tid(t);
    call(
        s,
        "debug_thread",
        json!({"kind": "suspend", "thread_id": main}),
    )
    .await;
    let (_, text) = call(
        s,
        "debug_thread",
        json!({"kind": "suspend", "thread_id": main}),
    )
    .await;
    assert!(text.contains("suspend count now 2"), "{text}");
    let (_, text) = call(
        s,
        "debug_thread",
        json!({"kind": "resume", "thread_id": main}),
    )
    .await;
    assert!(
        text.contains("count now 1") && text.contains("still suspended"),
        "{text}"
    );
    let (_, text) = call(
        s,
        "debug_thread",
        json!({"kind": "resume", "thread_id": main}),
    )
    .await;
    assert!(text.contains("count now 0"), "{text}");
    let (err, text) = call(
        s,
        "debug_thread",
        json!({"kind": "suspend", "thread_id": "@0x7fffff01"}),
    )
    .await;
    assert!(err && text.starts_with("[NO_THREAD]"), "{text}");
    assert_runs(&r.jvm);
    r.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watchdog_rescues_a_forgotten_suspension() {
    let config = EngineConfig {
        suspend_limit: Some(Duration::from_secs(3)),
        ..EngineConfig::default()
    };
    let r = rig_with("Execution", "execution ready", config, false).await;
    let mut events = r.session.subscribe();
    // A suspending breakpoint that fires every round, left alone.
    let request = arm(&r.session, "Execution", line("main-call"), false).await;
    let hit_at = loop {
        let c = events.recv().await.expect("events");
        if c.events.iter().any(|e| e.request_id() == request) {
            break std::time::Instant::now();
        }
    };
    let held = r.jvm.line_count();
    poll_until_msg(
        Duration::from_secs(8),
        "the watchdog to resume the JVM",
        || (r.jvm.line_count() > held + 2).then_some(()),
    );
    // The limit is a duration, so time is what is asserted: not before
    // 3 s, and within two watchdog ticks of it (with slack for the host).
    let took = hit_at.elapsed();
    assert!(
        took >= Duration::from_secs(3) && took < Duration::from_secs(6),
        "rescued after {took:?}"
    );
    let (_, text) = call(&r.server, "debug_list_sessions", json!({})).await;
    assert!(
        text.contains("[WATCHDOG]"),
        "reported in the next reply: {text}"
    );
    assert!(text.contains("disabled the 1 event request"), "{text}");
    // Disabled: the stop point does not freeze the JVM again.
    assert_runs(&r.jvm);
    assert_eq!(r.session.rescues().all.len(), 1);
    r.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_refuses_every_mutation_and_keeps_reads() {
    let r = rig_with(
        "Execution",
        "execution ready",
        EngineConfig::default(),
        true,
    )
    .await;
    let s = &r.server;
    // Read-only is what blocks, and it is said first: even with no thread
    // suspended, a write is a read-only refusal, not a missing thread.
    for (tool, args) in [
        (
            "debug_set_value",
            json!({"target": "Execution.limit", "value": "1"}),
        ),
        ("debug_set_value", json!({"target": "a", "value": "1"})),
        ("debug_pop_frame", json!({})),
        // An invocation is refused as read-only, not for want of a thread.
        ("debug_evaluate", json!({"expression": "String.valueOf(2)"})),
    ] {
        let (err, text) = call(s, tool, args.clone()).await;
        assert!(
            err && text.starts_with("[READ_ONLY]"),
            "{tool} {args}: {text}"
        );
    }
    let (_, text) = call(
        s,
        "debug_evaluate",
        json!({"kind": "chain", "expression": "String.valueOf(2).length()"}),
    )
    .await;
    assert!(
        text.contains("runs code in the JVM, and this session is read-only"),
        "the chain stops on read-only: {text}"
    );
    hit(&r.session, "Execution", line("step-start")).await;
    let (err, text) = call(s, "debug_evaluate", json!({"expression": "helper(2)"})).await;
    assert!(
        err && text.starts_with("[READ_ONLY]"),
        "an invoking evaluate: {text}"
    );
    for (tool, args) in [
        ("debug_set_value", json!({"target": "a", "value": "1"})),
        ("debug_set_value", json!({"target": "limit", "value": "1"})),
        ("debug_force_return", json!({"value": "1"})),
        ("debug_pop_frame", json!({})),
        ("debug_evaluate", json!({"expression": "helper(2)"})),
    ] {
        let (err, text) = call(s, tool, args.clone()).await;
        assert!(err, "{tool} {args}: {text}");
        assert!(text.contains("read-only"), "{tool} {args}: {text}");
    }
    let (err, text) = call(
        s,
        "debug_evaluate",
        json!({"expression": "a + Execution.limit"}),
    )
    .await;
    assert!(!err, "{text}");
    let (err, text) = call(
        s,
        "debug_evaluate",
        json!({"expression": "Execution.map[\"k\"]"}),
    )
    .await;
    assert!(
        !err && text.contains("= 1"),
        "structural reads work read-only: {text}"
    );
    let (err, text) = call(s, "debug_get_stack", json!({"max_frames": 2})).await;
    assert!(!err, "{text}");
    call(s, "debug_continue", json!({})).await;
    r.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disconnect_while_stopped_and_while_a_thread_is_held() {
    let r = rig().await;
    let s = &r.server;
    let t = hit(&r.session, "Execution", line("step-start")).await;
    call(
        s,
        "debug_thread",
        json!({"kind": "suspend", "thread_id": tid(t)}),
    )
    .await;
    let (err, text) = call(s, "debug_disconnect", json!({})).await;
    assert!(!err, "{text}");
    assert!(text.contains("verified: all"), "{text}");
    assert_runs(&r.jvm);
    r.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_leaves_the_threads_you_hold_and_says_so() {
    let r = rig().await;
    let s = &r.server;
    let (_, threads) = call(
        s,
        "debug_list_threads",
        json!({"name_contains": "Finalizer"}),
    )
    .await;
    let fin = threads
        .lines()
        .find(|l| l.contains("\"Finalizer\""))
        .and_then(|l| l.split_whitespace().next())
        .expect("Finalizer thread")
        .to_string();
    call(
        s,
        "debug_thread",
        json!({"kind": "suspend", "thread_id": fin}),
    )
    .await;
    hit(&r.session, "Execution", line("step-start")).await;
    let (err, text) = call(s, "debug_continue", json!({})).await;
    assert!(!err, "{text}");
    assert!(text.contains("Still held by you"), "{text}");
    assert!(text.contains(&fin), "{text}");
    assert_runs(&r.jvm);
    let (_, threads) = call(
        s,
        "debug_list_threads",
        json!({"name_contains": "Finalizer"}),
    )
    .await;
    assert!(
        threads.contains("suspended x1 (held by you x1"),
        "{threads}"
    );
    let (_, sessions) = call(s, "debug_list_sessions", json!({})).await;
    assert!(sessions.contains("held_by_you=["), "{sessions}");
    let (_, text) = call(
        s,
        "debug_thread",
        json!({"kind": "resume", "thread_id": fin}),
    )
    .await;
    assert!(text.contains("count now 0"), "{text}");
    r.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hot_suspend_all_breakpoint_is_not_reported_as_a_failed_resume() {
    use jvmscope::jdwp::event_request::{Clear, Set};
    use jvmscope::jdwp::{EventKind, Modifier, SuspendPolicy};
    let r = rig().await;
    let s = &r.server;
    let location =
        crate::support::rig::location(&r.session, "Execution", line("helper-body")).await;
    let mut events = r.session.subscribe();
    let request = r
        .session
        .raw_connection()
        .send(&Set {
            event_kind: EventKind::Breakpoint,
            suspend_policy: SuspendPolicy::All,
            modifiers: vec![Modifier::LocationOnly { location }],
        })
        .await
        .expect("arm");
    for _ in 0..5 {
        loop {
            let c = events.recv().await.expect("events");
            if c.events.iter().any(|e| e.request_id() == request) {
                break;
            }
        }
        let (err, text) = call(s, "debug_continue", json!({})).await;
        assert!(!err, "{text}");
        assert!(
            !text.contains("WARNING"),
            "a new hit is not a failed resume: {text}"
        );
    }
    r.session
        .raw_connection()
        .send(&Clear {
            event_kind: EventKind::Breakpoint,
            request_id: request,
        })
        .await
        .expect("clear");
    call(s, "debug_continue", json!({})).await;
    assert_runs(&r.jvm);
    r.engine.shutdown().await;
}

/// The same rescue through the shipped binary, configured the way users
/// configure it: `JDWP_WATCHDOG_SECS=3`.
#[test]
fn jdwp_watchdog_secs_bounds_a_suspending_hit_through_the_binary() {
    use crate::support::java::JvmOpts;
    use crate::support::mcp::Server;
    let jvm = Jvm::start("Execution", JvmOpts::default());
    jvm.wait_for_line("execution ready", Duration::from_secs(10));
    let server = Server::spawn_with_env(&[("JDWP_WATCHDOG_SECS", "3")]);
    server.initialize();
    server
        .call("debug_attach", json!({"port": jvm.port()}))
        .expect_ok();
    let armed = server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": "Execution", "line": line("main-call")}),
        )
        .expect_ok();
    assert!(armed.text.contains("bp_"), "{}", armed.text);
    // The hit holds the main thread from the moment it is reported.
    let hit = server
        .call("debug_wait_for_event", json!({"timeout_ms": 10000}))
        .expect_ok();
    let frozen = std::time::Instant::now();
    assert!(!hit.text.starts_with("No event"), "{}", hit.text);
    let held = jvm.line_count();
    poll_until_msg(Duration::from_secs(8), "the watchdog rescue", || {
        (jvm.line_count() > held + 2).then_some(())
    });
    assert!(
        frozen.elapsed() < Duration::from_secs(7),
        "rescued after {:?}",
        frozen.elapsed()
    );
    let next = server.call("debug_list_sessions", json!({}));
    assert!(next.text.contains("[WATCHDOG]"), "{}", next.text);
    assert!(next.text.contains("now DISABLED"), "{}", next.text);
    let listing = server.call("debug_list_stop_points", json!({})).expect_ok();
    assert!(
        listing.text.to_lowercase().contains("disabled"),
        "{}",
        listing.text
    );
    assert_runs(&jvm);
}

/// Read-only refuses an invocation hidden in a stop point's condition too,
/// and says so as a condition error rather than treating it as true/false.
#[test]
fn read_only_refuses_an_invoking_condition() {
    use crate::support::java::JvmOpts;
    let jvm = Jvm::start("Execution", JvmOpts::default());
    jvm.wait_for_line("execution ready", Duration::from_secs(10));
    let server = crate::dump::attached_read_only(&jvm);
    server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": "Execution", "line": line("step-start"), "condition": "helper(2) == 4", "calls": true}),
        )
        .expect_ok();
    let event = poll_until_msg(Duration::from_secs(10), "a condition error", || {
        let r = server.call("debug_get_last_event", json!({}));
        r.text.contains("condition-error").then_some(r.text)
    });
    assert!(event.contains("read-only"), "{event}");
    assert_runs(&jvm);
}

/// Sends `sig` (`-STOP`, `-CONT`) to a process.
#[track_caller]
fn kill(sig: &str, pid: u32) {
    let ok = std::process::Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "kill {sig} {pid}");
}

/// A JVM frozen by SIGSTOP while one of its threads is held by a hit: a
/// stack read with no thread_id names the timeout that blocks it, never
/// "no thread is suspended".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_jvm_is_reported_as_a_timeout_not_as_no_thread() {
    let config = EngineConfig {
        request_timeout: Duration::from_millis(800),
        // The watchdog must not end the session while the JVM is frozen.
        watchdog_interval: Duration::from_secs(60),
        ..EngineConfig::default()
    };
    let r = rig_with("Execution", "execution ready", config, false).await;
    hit(&r.session, "Execution", line("main-call")).await;
    let signal = |sig: &str| kill(sig, r.jvm.pid());
    signal("-STOP");
    let started = std::time::Instant::now();
    let (err, text) = call(&r.server, "debug_get_stack", json!({})).await;
    signal("-CONT");
    assert!(err, "{text}");
    assert!(
        text.starts_with("[TIMEOUT]") || text.starts_with("[VM_GONE]"),
        "names what blocks: {text}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    call(&r.server, "debug_continue", json!({})).await;
    assert_runs(&r.jvm);
    r.engine.shutdown().await;
}

/// A field reached from a static needs no thread: ClassType.SetValues and
/// ObjectReference.SetValues take none. Only a local needs a frame.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_static_field_is_written_with_no_thread_suspended() {
    let r = rig().await;
    let s = &r.server;
    let (err, text) = call(
        s,
        "debug_set_value",
        json!({"target": "Execution.limit", "value": "7"}),
    )
    .await;
    assert!(!err, "{text}");
    assert!(text.contains("5 → 7"), "reports what it displaced: {text}");
    let (_, text) = call(
        s,
        "debug_evaluate",
        json!({"expression": "Execution.limit"}),
    )
    .await;
    assert!(text.starts_with("Execution.limit = 7"), "{text}");
    let (err, text) = call(
        s,
        "debug_set_value",
        json!({"target": "Execution.arr[0]", "value": "9"}),
    )
    .await;
    assert!(!err, "an element reached from a static: {text}");
    // A bare name is a local or a field of a frame: that needs a thread.
    let (err, text) = call(
        s,
        "debug_set_value",
        json!({"target": "limit", "value": "1"}),
    )
    .await;
    assert!(err && text.starts_with("[NO_THREAD]"), "{text}");
    call(
        s,
        "debug_set_value",
        json!({"target": "Execution.limit", "value": "5"}),
    )
    .await;
    call(
        s,
        "debug_set_value",
        json!({"target": "Execution.arr[0]", "value": "1"}),
    )
    .await;
    assert_runs(&r.jvm);
    r.engine.shutdown().await;
}

/// Before the fix, on a JVM that did not answer, debug_evaluate said the
/// class "is not a loaded class" and debug_list_sessions said DEAD while
/// the session was alive: a timeout must never read as a fact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_jvm_is_a_timeout_in_evaluate_and_the_session_list() {
    let config = EngineConfig {
        request_timeout: Duration::from_millis(800),
        watchdog_interval: Duration::from_secs(60),
        ..EngineConfig::default()
    };
    let r = rig_with("Execution", "execution ready", config, false).await;
    // A stop point on a class never loaded: deferred.
    let (_, armed) = call(
        &r.server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "NeverLoaded", "line": 3}),
    )
    .await;
    let bp = armed
        .split_whitespace()
        .find(|w| w.starts_with("bp"))
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_string())
        .unwrap_or_else(|| panic!("no stop point id in {armed}"));
    let signal = |sig: &str| kill(sig, r.jvm.pid());
    signal("-STOP");
    let (_, evaluated) = call(
        &r.server,
        "debug_evaluate",
        json!({"expression": "java.util.Collections.EMPTY_LIST"}),
    )
    .await;
    let (_, listed) = call(&r.server, "debug_list_sessions", json!({})).await;
    let (_, diagnosed) = call(&r.server, "debug_diagnose", json!({"stop_point": bp})).await;
    signal("-CONT");
    assert!(evaluated.contains("got no reply within"), "{evaluated}");
    assert!(!evaluated.contains("not a loaded class"), "{evaluated}");
    assert!(!listed.contains("DEAD"), "{listed}");
    assert!(listed.contains("NOT_ANSWERING"), "{listed}");
    assert!(!diagnosed.contains("CLASS_NOT_LOADED"), "{diagnosed}");
    assert!(diagnosed.contains("did not answer"), "{diagnosed}");
    let (_, evaluated) = call(
        &r.server,
        "debug_evaluate",
        json!({"expression": "Execution.limit"}),
    )
    .await;
    assert!(evaluated.starts_with("Execution.limit = "), "{evaluated}");
    r.engine.shutdown().await;
}
