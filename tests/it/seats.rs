//! Where a call runs when no event holds a thread, on JDK 17 and Temurin
//! 25: a service whose `main` waits for good in `join()` has its call (an
//! evaluation, a probe's set-up) seated on a thread that runs application
//! code, not refused after waiting on `main`; when every thread waits, the
//! refusal names each thread tried and how it was found, and nothing is
//! left suspended.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;

use crate::support::java::{Jvm, JvmOpts, default_java_home, line_of, temurin25_required};
use crate::support::mcp::Server;
use crate::support::poll_until_msg;

const WAIT: Duration = Duration::from_secs(30);

fn joined(java_home: PathBuf, args: &[&str]) -> (Jvm, Server) {
    let jvm = Jvm::start(
        "Joined",
        JvmOpts {
            java_home: Some(java_home),
            args: args.iter().map(|a| a.to_string()).collect(),
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("joined ready", WAIT);
    let server = crate::dump::attached(&jvm);
    (jvm, server)
}

fn seated_on_the_worker(java_home: PathBuf) {
    let (_jvm, server) = joined(java_home, &[]);
    let called = server
        .call(
            "debug_evaluate",
            json!({"expression": "Joined.work(0) >= 0"}),
        )
        .expect_ok();
    assert!(
        called.text.contains("Ran on thread \"joined-worker\"")
            && called.text.contains("parked for the call"),
        "{}",
        called.text
    );
    let line = line_of("Joined.java", "joined-work");
    let armed = server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": "Joined", "line": line,
                   "trace": true, "engine": "probe"}),
        )
        .expect_ok();
    assert!(armed.text.contains("ARMED"), "{}", armed.text);
    assert!(armed.text.contains("PROBE:"), "{}", armed.text);
    let id = armed.json()["outcomes"][0]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    poll_until_msg(WAIT, "a probe hit from the worker", || {
        let r = server
            .call("debug_get_traces", json!({"bp_id": id, "limit": 1}))
            .expect_ok();
        r.text.contains("joined-worker").then_some(())
    });
    crate::dump::assert_none_suspended(&server);
    server.call("debug_disconnect", json!({})).expect_ok();
}

fn refused_naming_each_thread(java_home: PathBuf) {
    let (_jvm, server) = joined(java_home, &["idle"]);
    let refused = server.call("debug_evaluate", json!({"expression": "Joined.work(0)"}));
    let text = &refused.text;
    assert!(
        text.contains("no thread reached a line of application code within "),
        "{text}"
    );
    assert!(text.contains("\"main\" (waiting, "), "{text}");
    assert!(text.contains("\"joined-worker\" (waiting, "), "{text}");
    assert!(text.contains("each runs on as before"), "{text}");
    crate::dump::assert_none_suspended(&server);
}

#[test]
fn a_call_is_seated_on_a_running_thread_when_main_waits_for_good_on_jdk17() {
    seated_on_the_worker(default_java_home());
}

#[test]
fn a_call_is_seated_on_a_running_thread_when_main_waits_for_good_on_temurin25() {
    seated_on_the_worker(temurin25_required());
}

#[test]
fn with_every_thread_waiting_the_refusal_names_each_thread_tried_on_jdk17() {
    refused_naming_each_thread(default_java_home());
}

#[test]
fn with_every_thread_waiting_the_refusal_names_each_thread_tried_on_temurin25() {
    refused_naming_each_thread(temurin25_required());
}
