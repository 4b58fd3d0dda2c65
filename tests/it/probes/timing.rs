//! Which method is slow, without naming it (JDK 17 and Temurin 25): a
//! method-exit stop with `min_duration_ms` and no method times every
//! method of the class in one redefinition, and its snapshots name the
//! slow method and the argument it was slow for; a class pattern does the
//! same for each loaded class it matches, up to `max_classes`; a refusal's
//! next step is a call that works; disconnect, and the next attach after
//! a SIGKILL, give every class its own bytecode back.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::{Value, json};

use super::{WAIT, attach_on, first_id, instrumented, local_i64, server, traces};
use crate::support::java::{Jvm, JvmOpts, temurin25_required};
use crate::support::mcp::Server;
use crate::support::poll_until_msg;

const FRONT: &str = "slow.Front";
const STORE: &str = "slow.Store";

fn front(java_home: Option<PathBuf>) -> Jvm {
    let jvm = Jvm::start(
        FRONT,
        JvmOpts {
            java_home,
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("slow front started", WAIT);
    jvm
}

/// Times every method of `class` (no method named); the stop point's id.
fn time_class(server: &Server, class: &str) -> String {
    let reply = server
        .call(
            "debug_set_stop",
            json!({"kind": "method_exit", "class_pattern": class, "min_duration_ms": 50}),
        )
        .expect_ok();
    assert!(reply.text.contains("PROBE:"), "a probe: {}", reply.text);
    first_id(&reply)
}

/// Whether a snapshot names `class.method` and an id whose `find` is
/// slow (id % 7 == 3); panics on a snapshot of anything else.
#[track_caller]
fn is_slow_call(t: &Value, methods: &[&str]) -> String {
    let location = t["location"].as_str().unwrap_or_default();
    let method = methods
        .iter()
        .find(|m| location.starts_with(&format!("{m}:")))
        .unwrap_or_else(|| panic!("a slow method is named ({methods:?}): {t}"));
    let arg = local_i64(t, "id")
        .unwrap_or_else(|| panic!("the argument is in the snapshot, named and unboxed: {t}"));
    assert_eq!(arg % 7, 3, "only the slow inputs: {t}");
    method.to_string()
}

/// Every snapshot of `id` names `method` of `class` with a slow input.
#[track_caller]
fn only_slow(server: &Server, id: &str, class: &str, method: &str) {
    for t in traces(server, id, 3) {
        is_slow_call(&t, &[&format!("{class}.{method}")]);
    }
}

fn every_method_is_timed_and_the_slow_one_named(java_home: Option<PathBuf>) {
    let jvm = front(java_home);
    let server = server();
    attach_on(&server, jvm.port(), json!({}));
    assert!(!instrumented(&server, STORE) && !instrumented(&server, FRONT));

    // Two calls after attach, no method named: time every method of the
    // package's classes, then read what was slow.
    let armed = server
        .call(
            "debug_set_stop",
            json!({"kind": "method_exit", "class_pattern": "slow.*", "min_duration_ms": 50}),
        )
        .expect_ok();
    assert!(
        armed.text.contains("2 armed") && armed.text.contains("2 loaded classes timed"),
        "{}",
        armed.text
    );
    let seen: BTreeSet<String> = poll_until_msg(WAIT, "a slow find and a slow handle", || {
        let r = server
            .call("debug_get_traces", json!({"limit": 500, "compact": false}))
            .expect_ok();
        let traces = r.json()["traces"].as_array().cloned().unwrap_or_default();
        let seen: BTreeSet<String> = traces
            .iter()
            .map(|t| is_slow_call(t, &["slow.Store.find", "slow.Front.handle"]))
            .collect();
        (seen.len() == 2).then_some(seen)
    });
    assert_eq!(
        seen,
        BTreeSet::from([
            "slow.Front.handle".to_string(),
            "slow.Store.find".to_string()
        ])
    );
    assert!(instrumented(&server, STORE) && instrumented(&server, FRONT));
    for outcome in armed.json()["outcomes"]
        .as_array()
        .cloned()
        .unwrap_or_default()
    {
        let id = outcome["id"].as_str().unwrap_or_default();
        server
            .call(
                "debug_update_stop_point",
                json!({"kind": "clear", "id": id}),
            )
            .expect_ok();
    }
    assert!(!instrumented(&server, STORE) && !instrumented(&server, FRONT));

    // One class, grouped by method.
    let store = time_class(&server, STORE);
    only_slow(&server, &store, STORE, "find");
    let grouped = server
        .call(
            "debug_get_traces",
            json!({"bp_id": store, "group_by": ["location"]}),
        )
        .expect_ok();
    let groups = grouped.json()["groups"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        !groups.is_empty()
            && groups
                .iter()
                .all(|g| g.to_string().contains("slow.Store.find:")),
        "grouped by method: {}",
        grouped.text
    );

    bounds_and_exclusions(&server);
    refusals_name_calls_that_work(&server);

    server.call("debug_disconnect", json!({})).expect_ok();
    let again = self::server();
    attach_on(&again, jvm.listening_port(2, WAIT), json!({}));
    assert!(
        !instrumented(&again, STORE) && !instrumented(&again, FRONT),
        "disconnect restored both classes"
    );
    again.call("debug_disconnect", json!({})).expect_ok();

    // SIGKILL: nothing restores on the way out; the next attach does.
    let doomed = self::server();
    attach_on(&doomed, jvm.listening_port(3, WAIT), json!({}));
    doomed
        .call(
            "debug_set_stop",
            json!({"kind": "method_exit", "class_pattern": "slow.*", "min_duration_ms": 50}),
        )
        .expect_ok();
    assert!(instrumented(&doomed, STORE) && instrumented(&doomed, FRONT));
    doomed.kill();
    let next = self::server();
    let reply = attach_on(&next, jvm.listening_port(4, WAIT), json!({}));
    for class in [STORE, FRONT] {
        assert!(
            reply.text.contains(&format!("RESTORED: {class}")),
            "{}",
            reply.text
        );
    }
    assert!(!instrumented(&next, STORE) && !instrumented(&next, FRONT));
    assert!(jvm.is_alive());
}

/// max_classes bounds a wildcard, and the reply names what it left out;
/// exclude_classes takes classes out of it.
fn bounds_and_exclusions(server: &Server) {
    let bounded = server
        .call(
            "debug_set_stop",
            json!({"kind": "method_exit", "class_pattern": "slow.*", "min_duration_ms": 50,
                   "max_classes": 1}),
        )
        .expect_ok();
    assert!(
        bounded
            .text
            .contains("slow.*: 1 loaded class timed, every method (a wildcard matches only classes loaded now); left out by max_classes 1: slow.Store")
            && bounded.text.contains("slow.Front (every method's exits)"),
        "{}",
        bounded.text
    );
    let excluded = server
        .call(
            "debug_set_stop",
            json!({"kind": "method_exit", "class_pattern": "slow.*", "min_duration_ms": 50,
                   "exclude_classes": ["slow.Front"]}),
        )
        .expect_ok();
    assert!(
        excluded.text.contains("slow.Store (every method's exits)")
            && !excluded.text.contains("left out"),
        "{}",
        excluded.text
    );
}

/// A refusal's next step is a call that works, never another refusal.
fn refusals_name_calls_that_work(server: &Server) {
    let with_method = server
        .call(
            "debug_set_stop",
            json!({"kind": "method_exit", "class_pattern": "slow.*", "method": "find", "min_duration_ms": 50}),
        )
        .expect_tool_error();
    assert!(
        with_method.text.contains("Next:") && with_method.text.contains("omit method"),
        "{}",
        with_method.text
    );
    let wire = server
        .call(
            "debug_set_stop",
            json!({"kind": "method_exit", "class_pattern": "slow.*", "method": "find",
                   "min_duration_ms": 50, "engine": "wire"}),
        )
        .expect_tool_error();
    assert!(
        wire.text.contains("with the pattern and no method"),
        "{}",
        wire.text
    );
    // The first next step, taken (the second, the pattern without a
    // method, is what bounds_and_exclusions arms).
    let one = server
        .call(
            "debug_set_stop",
            json!({"kind": "method_exit", "class_pattern": STORE, "method": "find", "min_duration_ms": 50}),
        )
        .expect_ok();
    assert!(one.text.contains("PROBE:"), "{}", one.text);
}

#[test]
fn every_method_of_a_class_is_timed_and_the_slow_one_named_with_its_input_jdk17() {
    every_method_is_timed_and_the_slow_one_named(None);
}

#[test]
fn every_method_of_a_class_is_timed_and_the_slow_one_named_with_its_input_temurin25() {
    every_method_is_timed_and_the_slow_one_named(Some(temurin25_required()));
}
