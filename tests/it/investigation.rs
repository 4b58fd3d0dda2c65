//! Keeping an investigation through the real binary against a real JVM:
//! the Markdown report of a session, a stop-point set exported, the
//! session ended, a new one attached and the set re-armed so its traces
//! fire again; and read-only sessions refusing every call into the
//! application and every mutation.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::java::{Jvm, JvmOpts, line_of};
use crate::support::mcp::Server;
use crate::support::poll_until;

const WAIT: Duration = Duration::from_secs(20);

fn orders() -> Jvm {
    let jvm = Jvm::start("Orders", JvmOpts::default());
    jvm.wait_for_line("orders started", WAIT);
    jvm
}

fn attach(server: &Server, jvm: &Jvm, read_only: bool) -> String {
    let r = server
        .call(
            "debug_attach",
            json!({"port": jvm.port(), "read_only": read_only}),
        )
        .expect_ok();
    crate::support::text::session_id(&r.text)
}

/// Polls until the stop point `bp` has at least `n` snapshots.
fn snapshots(server: &Server, bp: &str, n: usize) -> Value {
    poll_until(WAIT, || {
        let t = server
            .call("debug_get_traces", json!({"bp_id": bp, "limit": 50}))
            .expect_ok();
        let d = t.json();
        (d["traces"].as_array().map_or(0, Vec::len) >= n).then_some(d)
    })
}

#[test]
fn an_exported_set_re_armed_on_a_new_session_fires_again_and_the_report_says_it_is_not_redacted() {
    let jvm = orders();
    let server = Server::spawn();
    server.initialize();
    attach(&server, &jvm, false);
    let line = line_of("Orders.java", "place-add");
    let armed = server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": "Orders", "line": line, "trace": true,
                   "trace_max_hits": 0, "trace_expr": ["qty"]}),
        )
        .expect_ok();
    let bp = armed.json()["outcomes"][0]["id"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| panic!("{}", armed.text));
    snapshots(&server, &bp, 2);

    let report = server
        .call("debug_export_investigation", json!({}))
        .expect_ok();
    let md = &report.text;
    let first_para = md.split("\n\n").nth(1).unwrap_or("");
    assert!(first_para.contains("NOT redacted"), "{md}");
    assert!(md.contains("## Stop points") && md.contains(&bp), "{md}");
    assert!(md.contains("Hits:"), "{md}");
    assert!(
        md.contains("## Trace snapshots") && md.contains("qty"),
        "{md}"
    );
    assert!(
        md.contains("```json") && md.contains("debug_set_stop"),
        "{md}"
    );

    let exported = server
        .call("debug_list_stop_points", json!({"export": true}))
        .expect_ok();
    server.call("debug_disconnect", json!({})).expect_ok();

    // A new session on the same JVM (its agent listens again once the
    // last debugger has gone): the set comes back verbatim.
    // The agent was started with port 0, so it listens on a new one.
    let port = jvm.listening_port(2, WAIT);
    server
        .call("debug_attach", json!({"port": port}))
        .expect_ok();
    let rearmed = server
        .call("debug_arm_stop_points", json!({"set": exported.text}))
        .expect_ok();
    assert!(
        rearmed
            .text
            .starts_with("1 armed, 0 deferred, 0 refused, 0 skipped"),
        "{}",
        rearmed.text
    );
    let id = rearmed.json()["outcomes"][0]["id"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| panic!("{}", rearmed.text));
    let d = snapshots(&server, &id, 2);
    assert!(d["traces"][0].to_string().contains("qty"), "{d}");

    // Only the arming tools may be named; nothing else in the set runs.
    let bad = server
        .call(
            "debug_arm_stop_points",
            json!({"set": [{"tool": "debug_disconnect", "args": {}}]}),
        )
        .expect_tool_error();
    assert!(bad.text.contains("not an arming tool"), "{}", bad.text);
}

#[test]
fn read_only_refuses_every_call_into_the_application_and_every_mutation() {
    let jvm = orders();
    let server = Server::spawn();
    server.initialize();
    attach(&server, &jvm, true);
    let calls = [
        (
            "debug_invoke",
            json!({"class": "Orders", "method": "label", "args": [1]}),
        ),
        (
            "debug_invoke",
            json!({"class": "Orders", "method": "label", "template": true}),
        ),
        ("debug_spring", json!({"keys": ["a"]})),
        ("debug_run_named_query", json!({"name": "X.y"})),
        ("debug_arm_stop_points", json!({"set": []})),
        (
            "debug_set_value",
            json!({"target": "Orders.total", "value": "new Object()"}),
        ),
    ];
    for (tool, args) in calls {
        let r = server.call(tool, args).expect_tool_error();
        assert!(r.text.starts_with("[READ_ONLY]"), "{tool}: {}", r.text);
    }
    // The report is a read: it still works.
    let report = server
        .call("debug_export_investigation", json!({}))
        .expect_ok();
    assert!(report.text.contains("read-only: true"), "{}", report.text);
}
