//! Replies that answer first, on real JVMs through the real binary: a
//! suspending hit comes with its frame's locals, a trace reply stays near
//! a kilobyte per snapshot, an evaluation that calls a method parks a
//! thread for it when none is held (and, when none can be, names
//! debug_invoke and why), and one string is taken where a list of
//! strings is.

use std::time::Duration;

use serde_json::json;

use crate::support::java::{Jvm, JvmOpts, line_of};
use crate::support::mcp::Server;
use crate::support::poll_until_msg;

const WAIT: Duration = Duration::from_secs(20);

fn questions() -> Jvm {
    let jvm = Jvm::start("Questions", JvmOpts::default());
    jvm.wait_for_line("questions ready", WAIT);
    jvm
}

#[test]
fn a_suspending_hit_comes_with_its_frames_locals() {
    let jvm = questions();
    let server = crate::dump::attached(&jvm);
    server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": "Questions", "line": line_of("Questions.java", "city"),
                   "condition": "order.customer.address == null"}),
        )
        .expect_ok();
    let hit = server
        .call("debug_wait_for_event", json!({"timeout_ms": 20000}))
        .expect_ok();
    let text = &hit.text;
    assert!(text.contains("suspended="), "{text}");
    assert!(text.contains("locals of #0 Questions.cityOf"), "{text}");
    assert!(text.contains("requestId = \"req-"), "{text}");
    assert!(text.contains("order = Questions$Order"), "{text}");
    // The locals read right: the held request is one without an address.
    let n: u64 = text
        .split("requestId = \"req-")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(n % 7, 0, "{text}");
    // And the chain names the null link on the held thread.
    let chain = server
        .call(
            "debug_evaluate",
            json!({"kind": "chain", "expression": "order.customer.address.city"}),
        )
        .expect_ok();
    assert!(
        chain.text.contains("First null: `order.customer.address`"),
        "{}",
        chain.text
    );
    server.call("debug_disconnect", json!({})).expect_ok();
    jvm.wait_for_line_since(jvm.line_count(), |l| l.starts_with("billing round"), WAIT);
}

#[test]
fn a_trace_reply_stays_near_a_kilobyte_per_snapshot() {
    let jvm = questions();
    let server = crate::dump::attached(&jvm);
    // Every request, with its callers and all its locals: the defaults.
    let armed = server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": "Questions", "line": line_of("Questions.java", "city"),
                   "trace": true, "engine": "wire"}),
        )
        .expect_ok();
    let id = armed.json()["outcomes"][0]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let reply = poll_until_msg(WAIT, "20 snapshots", || {
        let r = server
            .call("debug_get_traces", json!({"bp_id": id, "limit": 20}))
            .expect_ok();
        (r.json()["traces"].as_array().map_or(0, Vec::len) == 20).then_some(r)
    });
    let bytes = serde_json::to_string(&reply.raw).map_or(0, |s| s.len());
    assert!(bytes <= 20 * 1024, "{bytes} bytes: {}", reply.text);
    server.call("debug_disconnect", json!({})).expect_ok();
}

#[test]
fn an_evaluation_that_calls_a_method_parks_a_thread_when_none_is_held() {
    let jvm = questions();
    let server = crate::dump::attached(&jvm);
    let called = server
        .call(
            "debug_evaluate",
            json!({"expression": "Questions.total(3, 250) + Questions.lookup(\"SKU-1\").length()"}),
        )
        .expect_ok();
    assert!(
        called
            .text
            .starts_with("Questions.total(3, 250) + Questions.lookup(\"SKU-1\").length() = 755"),
        "{}",
        called.text
    );
    assert!(
        called.text.contains("Ran on thread \"main\"")
            && called.text.contains("parked for the call"),
        "{}",
        called.text
    );
    crate::dump::assert_running(&server, &jvm, "billing round");
}

#[test]
fn an_evaluation_that_cannot_park_a_thread_names_debug_invoke_and_why() {
    let jvm = questions();
    let server = crate::dump::attached(&jvm);
    // Every thread held by a pause, none by an event: none can be parked.
    server.call("debug_pause", json!({})).expect_ok();
    let refused = server
        .call(
            "debug_evaluate",
            json!({"expression": "Questions.total(3, 250)"}),
        )
        .expect_tool_error();
    assert!(
        refused.text.starts_with("[EVAL_FAILED]")
            && refused
                .text
                .contains("No thread could be parked for the call")
            && refused.text.contains("debug_invoke"),
        "{}",
        refused.text
    );
    server.call("debug_continue", json!({})).expect_ok();
    crate::dump::assert_running(&server, &jvm, "billing round");
}

#[test]
fn one_class_name_is_taken_where_a_list_of_class_names_is() {
    let (jvm, _) = crate::memory::leak(crate::support::java::default_java_home());
    let server: Server = crate::dump::attached_read_only(&jvm);
    let listed = server
        .call(
            "debug_heap",
            json!({"kind": "instances", "class_names": "Leak$Key", "max_instances": 1}),
        )
        .expect_ok();
    assert!(listed.text.contains("Leak$Key"), "{}", listed.text);
    assert!(listed.text.contains("@0x"), "{}", listed.text);
}
