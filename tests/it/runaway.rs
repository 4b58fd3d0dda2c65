//! Calls that never return (issue #28): an invocation past its budget is
//! cancelled and its thread runs its own code again; one that cannot be
//! cancelled is named in every reply until it returns, and no reply says
//! that all threads run meanwhile. Against the Runaway fixture, on JDK 17
//! and on Temurin 25 (whose JDWP agent passes an interrupt on at once,
//! where 17's holds it back like a `Stop`).

use std::time::{Duration, Instant};

use jvmscope::actors::EngineConfig;
use jvmscope::mcp::JvmScope;
use serde_json::json;

use crate::support::java::{JvmOpts, line_of, temurin25_required};
use crate::support::poll_async;
use crate::support::rig::{Rig, call, hit, rig_on};

/// debug_evaluate's budget for one call.
const BUDGET: Duration = Duration::from_secs(2);
/// What a cancel may add to it.
const CANCEL: Duration = Duration::from_millis(1500);

#[derive(Clone, Copy, Debug)]
enum Jdk {
    Seventeen,
    TwentyFive,
}

async fn rig(jdk: Jdk) -> Rig {
    let java_home = match jdk {
        Jdk::Seventeen => None,
        Jdk::TwentyFive => Some(temurin25_required()),
    };
    let opts = JvmOpts {
        java_home,
        ..JvmOpts::default()
    };
    rig_on(
        "Runaway",
        "runaway ready",
        opts,
        EngineConfig::default(),
        false,
    )
    .await
}

/// A static long of the fixture, read without invoking anything.
async fn counter(s: &JvmScope, name: &str) -> u64 {
    let (err, text) = call(
        s,
        "debug_evaluate",
        json!({"expression": format!("Runaway.{name}")}),
    )
    .await;
    assert!(!err, "{text}");
    let value = text
        .lines()
        .next()
        .and_then(|l| l.split_once(" = "))
        .map(|(_, v)| v.trim_end_matches('L').to_string())
        .unwrap_or_default();
    value
        .parse()
        .unwrap_or_else(|_| panic!("Runaway.{name} is not a number: {text}"))
}

/// Waits until the runner has passed its own line a few more times.
async fn runs_its_own_code(s: &JvmScope, what: &str) {
    let before = counter(s, "rounds").await;
    poll_async(
        Duration::from_secs(10),
        &format!("the runner's own rounds after {what}"),
        || async { (counter(s, "rounds").await > before + 3).then_some(()) },
    )
    .await;
}

/// Evaluates a call on the runner, held at its line; the reply and how
/// long it took.
async fn evaluate_on_runner(r: &Rig, expression: &str) -> (bool, String, Duration) {
    hit(
        &r.session,
        "Runaway",
        line_of("Runaway.java", "runaway-here"),
    )
    .await;
    let started = Instant::now();
    let (err, text) = call(
        &r.server,
        "debug_evaluate",
        json!({ "expression": expression }),
    )
    .await;
    (err, text, started.elapsed())
}

/// Every kind of call that never returns — a busy loop, a sleep, a wait,
/// a park — is cancelled once its budget is spent; the runner then runs
/// its own code, with no interrupt left behind in it.
async fn each_kind_is_cancelled(jdk: Jdk) {
    let r = rig(jdk).await;
    let s = &r.server;
    for kind in ["spin", "sleep", "await", "park"] {
        let (err, text, took) = evaluate_on_runner(&r, &format!("Runaway.{kind}()")).await;
        assert!(err, "{jdk:?} {kind}: {text}");
        assert!(
            text.contains(&format!(
                "Runaway.{kind}() did not return within 2000 ms, so it was cancelled"
            )) && text.contains("the thread runs its own code again"),
            "{jdk:?} {kind}: {text}"
        );
        assert!(took < BUDGET + CANCEL, "{jdk:?} {kind}: took {took:?}");
        assert!(!text.contains("[INVOKING]"), "{jdk:?} {kind}: {text}");
        let (err, resumed) = call(s, "debug_continue", json!({})).await;
        assert!(!err, "{resumed}");
        assert!(
            resumed.contains("Verified: all"),
            "{jdk:?} {kind}: {resumed}"
        );
        runs_its_own_code(s, kind).await;
        assert_eq!(
            counter(s, "interruptions").await,
            0,
            "{jdk:?} {kind}: an interrupt of the cancel reached the runner's own code"
        );
    }
    let stderr = r.jvm.stderr_lines().join("\n");
    assert!(!stderr.contains("Exception in thread"), "{stderr}");
    r.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_kind_of_call_that_never_returns_is_cancelled_on_jdk17() {
    each_kind_is_cancelled(Jdk::Seventeen).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_kind_of_call_that_never_returns_is_cancelled_on_temurin25() {
    each_kind_is_cancelled(Jdk::TwentyFive).await;
}

/// A call that catches the `Error` thrown into it cannot be cancelled:
/// every reply names its thread, neither debug_continue nor debug_panic
/// says that all threads run, and once the call returns the thread is
/// given back and runs its own code, with no interrupt left behind.
async fn an_uncancellable_call_is_named_until_it_returns(jdk: Jdk) {
    let r = rig(jdk).await;
    let s = &r.server;
    let (err, text, took) = evaluate_on_runner(&r, "Runaway.stubborn(7000)").await;
    assert!(err, "{jdk:?}: {text}");
    assert!(
        text.contains(
            "Runaway.stubborn() did not return within 2000 ms and could not be cancelled"
        ),
        "{jdk:?}: {text}"
    );
    assert!(took < BUDGET + CANCEL, "{jdk:?}: took {took:?}");
    let invoking = "[INVOKING] session s1: thread @";
    assert!(text.contains(invoking), "{jdk:?}: {text}");
    assert!(
        text.contains("\"runner\" is still inside Runaway.stubborn()")
            && text.contains("it caught the Error thrown into it"),
        "{jdk:?}: {text}"
    );
    let (err, resumed) = call(s, "debug_continue", json!({})).await;
    assert!(!err, "{resumed}");
    assert!(!resumed.contains("Verified: all"), "{jdk:?}: {resumed}");
    assert!(
        resumed.contains("still inside a call that could not be cancelled: @")
            && resumed.contains("\"runner\" in Runaway.stubborn()"),
        "{jdk:?}: {resumed}"
    );
    let (_, threads) = call(s, "debug_list_threads", json!({})).await;
    assert!(threads.contains(invoking), "{jdk:?}: {threads}");
    let (err, panicked) = call(s, "debug_panic", json!({})).await;
    assert!(!err, "{panicked}");
    assert!(!panicked.contains("Verified: all"), "{jdk:?}: {panicked}");
    assert!(
        panicked.contains("still inside a call that could not be cancelled"),
        "{jdk:?}: {panicked}"
    );
    // It returns 7 s after it started: the thread is given back.
    poll_async(Duration::from_secs(20), "the call's return", || async {
        let (_, t) = call(s, "debug_list_threads", json!({})).await;
        (!t.contains(invoking)).then_some(())
    })
    .await;
    runs_its_own_code(s, "the late return").await;
    assert_eq!(
        counter(s, "interruptions").await,
        0,
        "{jdk:?}: an interrupt of the cancel reached the runner's own code"
    );
    let (_, resumed) = call(s, "debug_continue", json!({})).await;
    assert!(resumed.contains("all"), "{jdk:?}: {resumed}");
    assert!(!resumed.contains("[INVOKING]"), "{jdk:?}: {resumed}");
    r.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_uncancellable_call_is_named_until_it_returns_on_jdk17() {
    an_uncancellable_call_is_named_until_it_returns(Jdk::Seventeen).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_uncancellable_call_is_named_until_it_returns_on_temurin25() {
    an_uncancellable_call_is_named_until_it_returns(Jdk::TwentyFive).await;
}

/// A disconnect while a call holds a thread says which one stays inside
/// it, not that every thread runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disconnect_names_the_thread_a_call_still_holds() {
    let r = rig(Jdk::Seventeen).await;
    let (err, text, _) = evaluate_on_runner(&r, "Runaway.stubborn(4000)").await;
    assert!(err && text.contains("could not be cancelled"), "{text}");
    let (err, released) = call(&r.server, "debug_disconnect", json!({})).await;
    assert!(!err, "{released}");
    assert!(!released.contains("verified: all"), "{released}");
    assert!(
        released.contains("still inside a call that could not be cancelled: @")
            && released.contains("\"runner\" in Runaway.stubborn()"),
        "{released}"
    );
    r.engine.shutdown().await;
}

/// A condition or trace expression runs at every hit, so one that calls a
/// method is armed only with calls:true, on arming and on an update.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_in_conditions_and_trace_expressions_need_calls_true() {
    let r = rig(Jdk::Seventeen).await;
    let s = &r.server;
    let line = line_of("Runaway.java", "runaway-here");
    let stop = |extra: serde_json::Value| {
        let mut args = json!({"kind": "line", "class_pattern": "Runaway", "line": line});
        for (k, v) in extra.as_object().expect("an object") {
            args[k] = v.clone();
        }
        args
    };
    for refused in [
        json!({"condition": "Runaway.spin() > 0"}),
        json!({"trace": true, "trace_expr": ["n", "new Object()"]}),
    ] {
        let (err, text) = call(s, "debug_set_stop", stop(refused.clone())).await;
        assert!(err, "{refused}: {text}");
        assert!(text.starts_with("[CALLS_NOT_ALLOWED]"), "{text}");
        assert!(text.contains("calls:true"), "{text}");
    }
    let (err, text) = call(
        s,
        "debug_set_stop",
        stop(json!({"trace": true, "condition": "n > 0"})),
    )
    .await;
    assert!(!err, "{text}");
    let id = text
        .split_whitespace()
        .find(|w| w.starts_with("bp_"))
        .expect("an id")
        .trim_matches(|c: char| !c.is_alphanumeric() && c != '_')
        .to_string();
    let (err, text) = call(
        s,
        "debug_update_stop_point",
        json!({"id": id, "condition": "Runaway.park() > 0"}),
    )
    .await;
    assert!(err && text.starts_with("[CALLS_NOT_ALLOWED]"), "{text}");
    let (err, text) = call(
        s,
        "debug_update_stop_point",
        json!({"id": id, "condition": "n > 0 && Runaway.ticks > 0", "calls": true}),
    )
    .await;
    assert!(!err, "{text}");
    let (err, text) = call(
        s,
        "debug_update_stop_point",
        json!({"id": id, "condition": "Runaway.park() > 0"}),
    )
    .await;
    assert!(!err, "calls stay allowed once allowed: {text}");
    r.engine.shutdown().await;
}

/// A trace expression that never returns is cancelled at every hit: the
/// snapshot says so and the runner keeps running its own code.
async fn a_trace_expression_that_never_returns_is_cancelled(jdk: Jdk) {
    let r = rig(jdk).await;
    let s = &r.server;
    let (err, text) = call(
        s,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Runaway",
               "line": line_of("Runaway.java", "runaway-here"), "engine": "wire",
               "trace": true, "trace_frames": 0, "trace_locals": "none", "trace_max_hits": 2,
               "trace_expr": ["Runaway.sleep()"], "calls": true, "max_overhead": 0}),
    )
    .await;
    assert!(!err, "{text}");
    let traces = poll_async(Duration::from_secs(15), "two snapshots", || async {
        let (_, t) = call(s, "debug_get_traces", json!({})).await;
        (t.matches("expr[0]").count() >= 2).then_some(t)
    })
    .await;
    assert_eq!(
        traces
            .matches("Runaway.sleep() did not return within 500 ms, so it was cancelled")
            .count(),
        2,
        "{jdk:?}: {traces}"
    );
    assert!(!traces.contains("[INVOKING]"), "{jdk:?}: {traces}");
    runs_its_own_code(s, "two cancelled trace expressions").await;
    assert_eq!(counter(s, "interruptions").await, 0, "{jdk:?}");
    let (_, panicked) = call(s, "debug_panic", json!({})).await;
    assert!(panicked.contains("Verified: all"), "{jdk:?}: {panicked}");
    r.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trace_expression_that_never_returns_is_cancelled_on_jdk17() {
    a_trace_expression_that_never_returns_is_cancelled(Jdk::Seventeen).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trace_expression_that_never_returns_is_cancelled_on_temurin25() {
    a_trace_expression_that_never_returns_is_cancelled(Jdk::TwentyFive).await;
}

/// A condition whose call cannot be cancelled keeps the hit's thread: the
/// stop point's cost line counts that thread as all of its time, the
/// overhead guard pauses it (each hit could take one more thread), and
/// the thread is named with the stop point until the call returns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_condition_that_takes_its_thread_counts_it_in_the_cost_line() {
    let r = rig(Jdk::TwentyFive).await;
    let s = &r.server;
    let (err, text) = call(
        s,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Runaway",
               "line": line_of("Runaway.java", "runaway-here"), "engine": "wire",
               "condition": "Runaway.stubborn(6000) < 0", "calls": true}),
    )
    .await;
    assert!(!err, "{text}");
    let invoking = poll_async(Duration::from_secs(10), "the taken thread", || async {
        let (_, t) = call(s, "debug_list_threads", json!({})).await;
        t.lines()
            .find(|l| l.starts_with("[INVOKING]"))
            .map(str::to_string)
    })
    .await;
    assert!(
        invoking.contains("\"runner\" is still inside Runaway.stubborn()")
            && invoking.contains("made by stop point bp_1"),
        "{invoking}"
    );
    let (_, listed) = call(s, "debug_list_stop_points", json!({})).await;
    assert!(
        listed.contains("1 thread inside a call of its own that could not be cancelled"),
        "{listed}"
    );
    assert!(listed.contains("PAUSED"), "the guard paused it: {listed}");
    let share = listed
        .split(" of one thread's time")
        .next()
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|p| p.trim_end_matches('%').parse::<f64>().ok())
        .unwrap_or(0.0);
    assert!(
        share >= 100.0,
        "the taken thread counts as all its time: {listed}"
    );
    poll_async(Duration::from_secs(20), "the call's return", || async {
        let (_, t) = call(s, "debug_list_threads", json!({})).await;
        (!t.contains("[INVOKING]")).then_some(())
    })
    .await;
    runs_its_own_code(s, "the condition's late return").await;
    r.engine.shutdown().await;
}
