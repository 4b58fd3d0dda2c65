//! Which method is slow, without naming it (JDK 17 and Temurin 25): a
//! method-exit stop with `min_duration_ms` and no method times every
//! method of the class in one redefinition, and its snapshots name the
//! slow method and the argument it was slow for; a class pattern is
//! refused with a next step that works; disconnect, and the next attach
//! after a SIGKILL, give every class its own bytecode back.

use std::path::PathBuf;

use serde_json::json;

use super::{WAIT, attach_on, first_id, instrumented, local_i64, server, traces};
use crate::support::java::{Jvm, JvmOpts, temurin25_required};
use crate::support::mcp::Server;

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

/// Every snapshot of `id` names `method` of `class` and an id whose
/// `find` is slow (id % 7 == 3).
#[track_caller]
fn only_slow(server: &Server, id: &str, class: &str, method: &str) {
    for t in traces(server, id, 3) {
        let location = t["location"].as_str().unwrap_or_default();
        assert!(
            location.starts_with(&format!("{class}.{method}:")),
            "the slow method is named: {t}"
        );
        let arg = local_i64(&t, "id")
            .unwrap_or_else(|| panic!("the argument is in the snapshot, named: {t}"));
        assert_eq!(arg % 7, 3, "only the slow inputs: {t}");
    }
}

fn every_method_is_timed_and_the_slow_one_named(java_home: Option<PathBuf>) {
    let jvm = front(java_home);
    let server = server();
    attach_on(&server, jvm.port(), json!({}));
    assert!(!instrumented(&server, STORE) && !instrumented(&server, FRONT));

    // Two calls: arm, then read what was slow.
    let store = time_class(&server, STORE);
    only_slow(&server, &store, STORE, "find");
    let front_id = time_class(&server, FRONT);
    only_slow(&server, &front_id, FRONT, "handle");
    let grouped = server
        .call(
            "debug_get_traces",
            json!({"bp_id": store, "group_by": ["location"]}),
        )
        .expect_ok();
    let groups = grouped.json()["groups"].as_array().cloned().unwrap_or_default();
    assert!(
        !groups.is_empty()
            && groups.iter().all(|g| g.to_string().contains("slow.Store.find:")),
        "grouped by method: {}",
        grouped.text
    );
    assert!(instrumented(&server, STORE) && instrumented(&server, FRONT));

    // A pattern is refused, and its next step is a call that works.
    let pattern = server
        .call(
            "debug_set_stop",
            json!({"kind": "method_exit", "class_pattern": "slow.*", "min_duration_ms": 50, "max_classes": 1}),
        )
        .expect_tool_error();
    assert!(pattern.text.contains("no *"), "{}", pattern.text);

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
    time_class(&doomed, STORE);
    time_class(&doomed, FRONT);
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

#[test]
fn every_method_of_a_class_is_timed_and_the_slow_one_named_with_its_input_jdk17() {
    every_method_is_timed_and_the_slow_one_named(None);
}

#[test]
fn every_method_of_a_class_is_timed_and_the_slow_one_named_with_its_input_temurin25() {
    every_method_is_timed_and_the_slow_one_named(Some(temurin25_required()));
}
