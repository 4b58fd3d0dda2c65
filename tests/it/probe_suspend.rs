//! Suspending probes against real JVMs (JDK 17 and Temurin 25): a
//! suspending stop point with a condition on a hot line is served by a
//! probe under `auto`, so the condition runs in the JVM and only a passing
//! hit reaches the wire. The agent then finds the hit thread stopped in the
//! probed method itself: its frame on top, at the probed line, with the
//! locals the condition saw. Resuming lets the program run on, and
//! clearing puts the class's own bytecode back.

use std::time::Duration;

use serde_json::json;

use crate::support::java::{Jvm, JvmOpts, fixtures, line_of, temurin25_required};
use crate::support::mcp::Server;
use crate::support::poll_until_msg;
use crate::support::text::event_field;

const WAIT: Duration = Duration::from_secs(30);
const LEDGER: &str = "ProbeLoad$Ledger";

fn attached(java_home: Option<std::path::PathBuf>) -> (Jvm, Server) {
    let jvm = Jvm::start(
        "ProbeLoad",
        JvmOpts {
            args: vec!["2".into()],
            java_home,
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("probe load started", WAIT);
    let server = Server::spawn();
    server.initialize();
    server
        .call(
            "debug_attach",
            json!({"port": jvm.port(), "class_roots": [fixtures().display().to_string()]}),
        )
        .expect_ok();
    (jvm, server)
}

/// The listing's text for stop point `id` (its header and detail lines).
/// The number just before `after` in a listing (0 when there is none).
fn count_before(p: &str, after: &str) -> u64 {
    let Some(at) = p.find(after) else {
        return 0;
    };
    p[..at]
        .rsplit(|c: char| !c.is_ascii_digit())
        .find(|w| !w.is_empty())
        .and_then(|w| w.parse().ok())
        .unwrap_or(0)
}

fn point(server: &Server, id: &str) -> String {
    let r = server.call("debug_list_stop_points", json!({})).expect_ok();
    let mut lines = r
        .text
        .lines()
        .skip_while(|l| !l.starts_with(&format!("{id} ")));
    let head = lines
        .next()
        .unwrap_or_else(|| panic!("no {id} in {}", r.text));
    std::iter::once(head)
        .chain(lines.take_while(|l| l.starts_with(' ')))
        .collect::<Vec<_>>()
        .join("\n")
}

fn a_suspending_probe_stops_in_the_probed_method(java_home: Option<std::path::PathBuf>) {
    let (jvm, server) = attached(java_home);
    let line = line_of("ProbeLoad.java", "probe-line");
    let armed = server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": LEDGER, "line": line,
                "condition": "amountCents < 0"}),
        )
        .expect_ok();
    let id = armed.json()["outcomes"][0]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no id in {}", armed.text))
        .to_string();
    assert!(armed.text.contains("PROBE: "), "{}", armed.text);
    assert!(
        armed.text.contains("condition runs in the JVM"),
        "{}",
        armed.text
    );
    assert!(crate::probes::instrumented(&server, LEDGER));

    let hit = server
        .call("debug_wait_for_event", json!({"timeout_ms": 20000}))
        .expect_ok();
    let e = |key| event_field(&hit.text, key).unwrap_or_default();
    assert_eq!(e("suspended"), "all", "{}", hit.text);
    assert!(
        hit.text.contains("matched in the JVM by the probe"),
        "{}",
        hit.text
    );
    assert!(e("thread_name").starts_with("charger-"), "{}", hit.text);
    assert!(
        hit.text.contains(&format!("Ledger.charge:{line}")),
        "the hit is at the probed line: {}",
        hit.text
    );
    assert!(!hit.text.contains("$$jvmscope$"), "{}", hit.text);
    // The probed method's own frame is on top, with the condition's local.
    let stack = server
        .call("debug_get_stack", json!({"max_frames": 3}))
        .expect_ok();
    let top = stack
        .text
        .lines()
        .find(|l| l.starts_with("#0 "))
        .unwrap_or_else(|| panic!("no top frame: {}", stack.text));
    assert_eq!(
        top,
        format!("#0 ProbeLoad$Ledger.charge:{line}"),
        "{}",
        stack.text
    );
    assert!(!stack.text.contains("$$jvmscope$"), "{}", stack.text);
    let amount = server
        .call("debug_evaluate", json!({"expression": "amountCents"}))
        .expect_ok();
    let value: i64 = amount
        .text
        .split_whitespace()
        .find_map(|w| {
            w.trim_matches(|c: char| !c.is_ascii_digit() && c != '-')
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no number in {}", amount.text));
    assert!(value < 0, "the condition held at the hit: {}", amount.text);

    // Only passing hits reach the wire: the condition, true about once in
    // 10,000 calls of a thread, ran in the JVM for every call.
    // The listing's counts come from the drain's rounds: the passing
    // record can be counted a moment before the calls are read.
    let p = poll_until_msg(WAIT, "the passing hit and the calls counted", || {
        let p = point(&server, &id);
        let counted = count_before(&p, " passed") > 0 && count_before(&p, " calls") >= 1000;
        counted.then_some(p)
    });
    let (calls, passed) = (count_before(&p, " calls"), count_before(&p, " passed"));
    assert!(p.contains("engine: probe"), "{p}");
    assert!(
        passed * 100 <= calls,
        "{calls} calls ran the condition in the JVM, {passed} passed: {p}"
    );

    server.call("debug_continue", json!({})).expect_ok();
    // The next negative charge stops again.
    let again = server
        .call("debug_wait_for_event", json!({"timeout_ms": 20000}))
        .expect_ok();
    assert!(
        again.text.contains(&format!("Ledger.charge:{line}")),
        "{}",
        again.text
    );
    server
        .call(
            "debug_update_stop_point",
            json!({"kind": "clear", "id": id}),
        )
        .expect_ok();
    server.call("debug_continue", json!({})).expect_ok();
    assert!(!crate::probes::instrumented(&server, LEDGER));
    crate::stop_points::assert_all_running(&server);
    drop(jvm);
}

#[test]
fn a_suspending_probe_stops_in_the_probed_method_jdk17() {
    a_suspending_probe_stops_in_the_probed_method(None);
}

#[test]
fn a_suspending_probe_stops_in_the_probed_method_temurin25() {
    a_suspending_probe_stops_in_the_probed_method(Some(temurin25_required()));
}

/// A suspending method-exit probe whose condition reads the returned
/// value: the thread stops in `settle` itself, before its return, with
/// the argument that produced the value, and the event carries the value;
/// one whose condition asks for a throw reports the exception.
fn a_suspending_exit_probe_stops_before_the_return(java_home: Option<std::path::PathBuf>) {
    let (jvm, server) = attached(java_home);
    let armed = server
        .call(
            "debug_set_stop",
            json!({"kind": "method_exit", "class_pattern": LEDGER, "method": "settle",
                "trace": false, "condition": "returnValue % 10 == 4"}),
        )
        .expect_ok();
    assert!(
        armed.text.contains("condition runs in the JVM"),
        "{}",
        armed.text
    );
    assert!(!armed.text.contains("interpreted"), "{}", armed.text);
    let hit = server
        .call("debug_wait_for_event", json!({"timeout_ms": 20000}))
        .expect_ok();
    let at = event_field(&hit.text, "at").unwrap_or_default();
    assert!(at.starts_with("ProbeLoad$Ledger.settle:"), "{}", hit.text);
    assert_eq!(
        event_field(&hit.text, "thread_name").as_deref(),
        Some("settler"),
        "{}",
        hit.text
    );
    let n = server
        .call("debug_evaluate", json!({"expression": "n % 5"}))
        .expect_ok();
    assert!(
        n.text.split_whitespace().any(|w| w == "2"),
        "settle(n) returned 2n with 2n % 10 == 4: {}",
        n.text
    );
    // The event is the method's exit and carries what it returned, as a
    // wire method-exit stop's does: 2n, read before the thread left the
    // probe's helper.
    assert_eq!(
        event_field(&hit.text, "kind").as_deref(),
        Some("method-exit"),
        "{}",
        hit.text
    );
    let returned: i64 = hit
        .text
        .lines()
        .find_map(|l| l.trim().strip_prefix("returned: "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no returned value: {}", hit.text));
    let doubled = server
        .call("debug_evaluate", json!({"expression": "2 * n"}))
        .expect_ok();
    assert!(
        returned % 10 == 4
            && doubled
                .text
                .split_whitespace()
                .any(|w| w == returned.to_string()),
        "returned {returned}, 2n: {}",
        doubled.text
    );
    server
        .call(
            "debug_update_stop_point",
            json!({"kind": "clear", "id": armed.json()["outcomes"][0]["id"]}),
        )
        .expect_ok();
    server.call("debug_continue", json!({})).expect_ok();
    a_throw_stops_with_its_exception(&server);
    server.call("debug_continue", json!({})).expect_ok();
    crate::stop_points::assert_all_running(&server);
    drop(jvm);
}

/// A call that throws (every 97th) stops on its way out, and the event
/// names the exception, read from the probe's helper before landing.
fn a_throw_stops_with_its_exception(server: &Server) {
    let armed = server
        .call(
            "debug_set_stop",
            json!({"kind": "method_exit", "class_pattern": LEDGER, "method": "settle",
                "trace": false, "condition": "exception != null"}),
        )
        .expect_ok();
    assert!(
        armed.text.contains("condition runs in the JVM"),
        "{}",
        armed.text
    );
    let hit = server
        .call("debug_wait_for_event", json!({"timeout_ms": 20000}))
        .expect_ok();
    assert_eq!(
        event_field(&hit.text, "kind").as_deref(),
        Some("method-exit"),
        "{}",
        hit.text
    );
    let detail = |key: &str| {
        hit.text
            .lines()
            .find_map(|l| l.trim().strip_prefix(key).map(str::to_string))
            .unwrap_or_else(|| panic!("no {key} in {}", hit.text))
    };
    assert!(
        detail("threw: ").contains("IllegalStateException"),
        "{}",
        hit.text
    );
    // The message is the fixture's "settle n", thrown when n % 97 == 0.
    let message = detail("message: ");
    let n: i64 = message
        .trim_matches('"')
        .strip_prefix("settle ")
        .and_then(|n| n.trim_matches('"').parse().ok())
        .unwrap_or_else(|| panic!("message: {}", hit.text));
    assert_eq!(n % 97, 0, "{}", hit.text);
    // The thread waits in the probe's handler, past the original code:
    // the method's arguments are still readable there.
    let read = server
        .call("debug_evaluate", json!({"expression": "n"}))
        .expect_ok();
    assert!(
        read.text.split_whitespace().any(|w| w == n.to_string()),
        "n = {n} at the throw's landing: {}",
        read.text
    );
    server
        .call(
            "debug_update_stop_point",
            json!({"kind": "clear", "id": armed.json()["outcomes"][0]["id"]}),
        )
        .expect_ok();
}

#[test]
fn a_suspending_exit_probe_stops_before_the_return_jdk17() {
    a_suspending_exit_probe_stops_before_the_return(None);
}

#[test]
fn a_suspending_exit_probe_stops_before_the_return_temurin25() {
    a_suspending_exit_probe_stops_before_the_return(Some(temurin25_required()));
}
