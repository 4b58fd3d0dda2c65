//! Stop points against real JVMs through the real binary: line stops
//! (suspending, traced, suspension-free, finally lines, deferred classes and
//! a second classloader, refusals), policy overrides, toggle / update /
//! clear / panic, waiting for events with progress, and a traced hot line
//! under load. Exception, field, method-exit and monitor stops are in
//! `kinds`; conditions and trace expressions in `conditions`; what
//! snapshots carry (folded rethrows, helpful NPE text, captured locals) in
//! `snapshots`; hit counts, thread and instance filters in `filters`;
//! wildcard families and lists in `families`.

mod conditions;
mod counters;
mod families;
mod filters;
mod kinds;
mod overhead;
mod paging;
mod parity;
mod snapshots;

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::java::{Jvm, JvmOpts, line_of};
use crate::support::mcp::{Server, ToolReply};
use crate::support::text::{event_field, number_after, threads};
use crate::support::{poll_until_msg, poll_until_ok};

const WAIT: Duration = Duration::from_secs(20);

fn server() -> Server {
    let server = Server::spawn();
    server.initialize();
    server
}

fn orders(args: Vec<String>) -> Jvm {
    let jvm = Jvm::start(
        "Orders",
        JvmOpts {
            args,
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("orders started", WAIT);
    jvm
}

/// An Orders JVM (no plugins) and a server attached to it.
fn attached_orders() -> (Jvm, Server) {
    let jvm = orders(Vec::new());
    let server = server();
    attach(&server, &jvm);
    (jvm, server)
}

fn attach(server: &Server, jvm: &Jvm) {
    server
        .call("debug_attach", json!({"port": jvm.port()}))
        .expect_ok();
}

fn ok(server: &Server, tool: &str, args: Value) -> ToolReply {
    server.call(tool, args).expect_ok()
}

fn first_id(reply: &ToolReply) -> String {
    reply.json()["outcomes"][0]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no id in {}", reply.text))
        .to_string()
}

fn line(marker: &str) -> u32 {
    line_of("Orders.java", marker)
}

/// Waits until `bp` has at least `n` snapshots; returns them.
fn traces_of(server: &Server, bp: &str, n: usize) -> Vec<Value> {
    poll_until_msg(WAIT, &format!("{n} snapshots of {bp}"), || {
        let r = ok(
            server,
            "debug_get_traces",
            json!({"bp_id": bp, "limit": 500}),
        );
        let t = r.json()["traces"].as_array().cloned().unwrap_or_default();
        (t.len() >= n).then_some(t)
    })
}

fn point(server: &Server, id: &str) -> Value {
    let r = ok(server, "debug_list_stop_points", json!({}));
    r.json()["stop_points"]
        .as_array()
        .and_then(|a| a.iter().find(|p| p["id"] == id).cloned())
        .unwrap_or_else(|| panic!("{id} not listed: {}", r.text))
}

fn local<'a>(trace: &'a Value, name: &str) -> Option<&'a str> {
    trace["locals"]
        .as_array()?
        .iter()
        .find(|l| l["name"] == name)?
        .get("value")?
        .as_str()
}

fn detail<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v["details"]
        .as_array()?
        .iter()
        .find(|d| d["key"] == key)?
        .get("value")?
        .as_str()
}

/// Clears every stop point, then checks that no thread of the JVM stays
/// suspended (a capture in flight finishes within moments; a thread we
/// forgot would stay suspended for ever).
pub(crate) fn assert_all_running(server: &Server) {
    let listing = ok(server, "debug_list_stop_points", json!({}));
    let data = listing.json();
    for f in data["families"].as_array().cloned().unwrap_or_default() {
        ok(
            server,
            "debug_update_stop_point",
            json!({"kind": "clear", "id": f["id"]}),
        );
    }
    for p in data["stop_points"].as_array().cloned().unwrap_or_default() {
        if p["family"].is_null() {
            ok(
                server,
                "debug_update_stop_point",
                json!({"kind": "clear", "id": p["id"]}),
            );
        }
    }
    let held = |server: &Server| {
        let listed = ok(server, "debug_list_threads", json!({}));
        threads(&listed.text)
            .into_iter()
            .filter(|t| t.suspend_count > 0)
            .collect::<Vec<_>>()
    };
    poll_until_ok(Duration::from_secs(5), "no thread left suspended", || {
        let h = held(server);
        if h.is_empty() { Ok(()) } else { Err(h) }
    });
}

#[test]
fn a_suspending_line_stop_reports_the_hit_and_resumes() {
    let (_jvm, server) = attached_orders();
    let armed = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Orders", "line": line("loop-label")}),
    );
    let bp = first_id(&armed);
    assert_eq!(bp, "bp_1");
    assert!(armed.text.contains("ARMED"), "{}", armed.text);
    assert!(armed.text.contains("Hits: 0"), "{}", armed.text);
    let hit = server.call("debug_wait_for_event", json!({"timeout_ms": 15000}));
    let hit = hit.expect_ok();
    let e = |key| event_field(&hit.text, key).unwrap_or_default();
    assert_eq!(e("stop"), "bp_1", "{}", hit.text);
    assert_eq!(e("kind"), "breakpoint");
    assert_eq!(e("suspended"), "all");
    assert_eq!(
        e("at"),
        format!("Orders.loop:{}", line("loop-label")),
        "{}",
        hit.text
    );
    assert!(hit.text.starts_with("[event] seq="), "{}", hit.text);
    assert!(hit.text.contains("[suspended] yes"), "{}", hit.text);
    let last = ok(&server, "debug_get_last_event", json!({}));
    assert!(last.text.contains("stop=bp_1"), "{}", last.text);
    assert!(last.text.contains("[pending]"), "{}", last.text);
    let listed = point(&server, &bp);
    assert!(listed["hits"].as_u64().unwrap_or(0) >= 1, "{listed}");
    ok(
        &server,
        "debug_update_stop_point",
        json!({"kind": "clear", "id": bp}),
    );
    ok(&server, "debug_continue", json!({}));
    let drained = ok(
        &server,
        "debug_get_last_event",
        json!({"limit": 5, "drain": true}),
    );
    assert!(drained.text.contains("drained"), "{}", drained.text);
    let after = ok(&server, "debug_get_last_event", json!({}));
    assert_eq!(
        number_after(&after.text, "\n[pending] "),
        Some(0),
        "{}",
        after.text
    );
    assert_all_running(&server);
}

#[test]
fn a_finally_line_is_armed_on_both_paths_and_traced_without_freezing() {
    let (_jvm, server) = attached_orders();
    let armed = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Orders", "line": line("place-finally"), "trace": true, "trace_max_hits": 40}),
    );
    assert!(armed.text.contains("2 locations"), "{}", armed.text);
    let bp = first_id(&armed);
    assert_eq!(point(&server, &bp)["locations"], 2);
    let traces = traces_of(&server, &bp, 40);
    let qtys: Vec<&str> = traces.iter().filter_map(|t| local(t, "qty")).collect();
    assert!(qtys.contains(&"-1"), "exception path seen: {qtys:?}");
    assert!(
        qtys.iter().any(|q| *q != "-1"),
        "normal path seen: {qtys:?}"
    );
    let t = &traces[0];
    assert_eq!(
        t["location"],
        format!("Orders.place:{}", line("place-finally"))
    );
    assert!(
        t["callers"][0]
            .as_str()
            .unwrap_or("")
            .starts_with("Orders.loop:"),
        "{t}"
    );
    let p = poll_until_msg(WAIT, "the budget to spend the stop point", || {
        let p = point(&server, &bp);
        (p["state"] == "spent").then_some(p)
    });
    assert_eq!(p["captured"], 40, "{p}");
    assert!(p["mean_capture_ms"].as_f64().is_some(), "{p}");
    let listing = ok(&server, "debug_list_stop_points", json!({}));
    assert!(listing.text.contains("ms per hit"), "{}", listing.text);
    assert!(
        listing.text.contains("trace budget of 40"),
        "{}",
        listing.text
    );
    assert_all_running(&server);
}

#[test]
fn bad_lines_are_refused_and_unknown_classes_deferred_with_suggestions() {
    let (_jvm, server) = attached_orders();
    // The line of `int count = 0;` declares a field: no code in any method.
    let blank = line("place-throw") - 4;
    let refused = server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": "Orders", "line": blank}),
        )
        .expect_tool_error();
    assert!(
        refused.text.starts_with("[NO_CODE_AT_LINE]"),
        "{}",
        refused.text
    );
    assert!(
        refused.text.contains("nearest lines with code"),
        "{}",
        refused.text
    );
    let deferred = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Ordrs", "line": 10}),
    );
    assert_eq!(deferred.json()["outcomes"][0]["state"], "deferred");
    assert!(deferred.text.contains("DEFERRED"), "{}", deferred.text);
    assert!(
        deferred.text.contains("Orders"),
        "names the similar class: {}",
        deferred.text
    );
    let no_method = server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": "Orders", "method": "plaice"}),
        )
        .expect_tool_error();
    assert!(
        no_method.text.contains("did you mean place"),
        "{}",
        no_method.text
    );
    let wildcard_line = server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": "Ord*", "line": 10}),
        )
        .expect_tool_error();
    assert!(
        wildcard_line.text.contains("refuses line"),
        "{}",
        wildcard_line.text
    );
}

#[test]
fn a_class_loaded_later_and_again_by_a_second_loader_arms_into_one_id() {
    let dir = tempfile::tempdir().expect("tempdir");
    let jvm = orders(vec![dir.path().display().to_string()]);
    let server = server();
    attach(&server, &jvm);
    let armed = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "OrdersPlugin", "line": line_of("OrdersPlugin.java", "plugin-run"), "trace": true, "trace_max_hits": 0, "trace_frames": 1}),
    );
    assert_eq!(
        armed.json()["outcomes"][0]["state"],
        "deferred",
        "{}",
        armed.text
    );
    let bp = first_id(&armed);
    std::fs::write(dir.path().join("load-1"), b"").expect("trigger");
    jvm.wait_for_line("plugin 1 loaded", WAIT);
    let t = traces_of(&server, &bp, 1);
    assert_eq!(t[0]["thread_name"], "plugin-1");
    let p = point(&server, &bp);
    assert_eq!(
        (p["state"].as_str(), p["classloaders"].as_u64()),
        (Some("armed"), Some(1)),
        "{p}"
    );
    std::fs::write(dir.path().join("load-2"), b"").expect("trigger");
    jvm.wait_for_line("plugin 2 loaded", WAIT);
    poll_until_msg(WAIT, "a snapshot from the second copy", || {
        let r = ok(
            &server,
            "debug_get_traces",
            json!({"bp_id": bp, "limit": 500}),
        );
        r.json()["traces"]
            .as_array()
            .is_some_and(|a| a.iter().any(|t| t["thread_name"] == "plugin-2"))
            .then_some(())
    });
    let p = point(&server, &bp);
    assert_eq!(p["classloaders"], 2, "{p}");
    assert_eq!(p["copies_loaded_later"], 2, "{p}");
    assert_eq!(p["watching"], true);
    let listing = ok(&server, "debug_list_stop_points", json!({}));
    assert_eq!(
        listing.json()["stop_points"].as_array().map(Vec::len),
        Some(1)
    );
    ok(
        &server,
        "debug_update_stop_point",
        json!({"kind": "clear", "id": bp}),
    );
    assert_all_running(&server);
}

#[test]
fn a_suspending_stop_at_a_traced_location_is_reported_as_overriding_it() {
    let (_jvm, server) = attached_orders();
    let at = line("place-add");
    let trace = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Orders", "line": at, "trace": true, "trace_max_hits": 0}),
    );
    let trace_id = first_id(&trace);
    let suspending = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Orders", "line": at}),
    );
    assert!(suspending.text.contains("OVERRIDE"), "{}", suspending.text);
    assert!(suspending.text.contains(&trace_id), "{}", suspending.text);
    let listing = ok(&server, "debug_list_stop_points", json!({}));
    assert!(
        listing.text.contains("SUSPEND POLICY OVERRIDDEN"),
        "{}",
        listing.text
    );
    ok(
        &server,
        "debug_wait_for_event",
        json!({"timeout_ms": 15000}),
    );
    poll_until_msg(WAIT, "a hit counted as overridden", || {
        (point(&server, &trace_id)["overridden_hits"]
            .as_u64()
            .unwrap_or(0)
            > 0)
        .then_some(())
    });
    let panic = ok(&server, "debug_panic", json!({}));
    assert!(panic.text.contains("Verified: all"), "{}", panic.text);
    assert!(
        panic.text.starts_with("PANIC: cleared 2 stop points;"),
        "{}",
        panic.text
    );
    assert_all_running(&server);
}

#[test]
fn a_suspension_free_trace_holds_nothing_and_toggles_and_updates_in_place() {
    let (_jvm, server) = attached_orders();
    let armed = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Orders", "line": line("label"), "trace": true, "trace_frames": 0, "trace_locals": "none", "trace_max_hits": 0}),
    );
    assert!(armed.text.contains("without suspending"), "{}", armed.text);
    let id = first_id(&armed);
    assert_eq!(point(&server, &id)["policy"], "NONE");
    traces_of(&server, &id, 5);
    let off = ok(
        &server,
        "debug_update_stop_point",
        json!({"kind": "toggle", "id": id, "enabled": false}),
    );
    assert!(
        off.text.starts_with(&format!("{id} disabled.")),
        "{}",
        off.text
    );
    assert_eq!(point(&server, &id)["state"], "disabled", "{}", off.text);
    let hits = point(&server, &id)["hits"].as_u64().unwrap_or(0);
    let on = ok(
        &server,
        "debug_update_stop_point",
        json!({"kind": "toggle", "id": id}),
    );
    assert!(
        on.text.starts_with(&format!("{id} enabled.")),
        "{}",
        on.text
    );
    assert_eq!(point(&server, &id)["state"], "armed", "{}", on.text);
    let updated = ok(
        &server,
        "debug_update_stop_point",
        json!({"id": id, "trace_frames": 2, "trace_locals": ["n"], "trace_max_hits": 3}),
    );
    assert_eq!(
        point(&server, &id)["policy"],
        "EVENTTHREAD",
        "{}",
        updated.text
    );
    poll_until_msg(WAIT, "the updated budget to spend it", || {
        (point(&server, &id)["state"] == "spent").then_some(())
    });
    let p = point(&server, &id);
    assert!(
        p["hits"].as_u64().unwrap_or(0) > hits,
        "counters kept across re-arming: {p}"
    );
    let t = ok(
        &server,
        "debug_get_traces",
        json!({"bp_id": id, "limit": 3}),
    );
    let last = &t.json()["traces"][2];
    assert!(local(last, "n").is_some(), "{last}");
    assert_eq!(last["callers"].as_array().map(Vec::len), Some(2), "{last}");
    assert_all_running(&server);
}

#[test]
fn waiting_for_an_event_sends_progress_and_times_out_as_an_answer() {
    let (_jvm, server) = attached_orders();
    let result = server
        .request(
            "tools/call",
            json!({
                "name": "debug_wait_for_event",
                "arguments": {"timeout_ms": 2500},
                "_meta": {"progressToken": "wait-1"}
            }),
        )
        .expect("answered");
    let reply = ToolReply::from_result(result);
    assert!(!reply.is_error, "{}", reply.text);
    assert!(
        reply.text.starts_with("No event within 2500 ms"),
        "{}",
        reply.text
    );
    let progress = server.wait_for_notification(
        |n| n["method"] == "notifications/progress" && n["params"]["progressToken"] == "wait-1",
        Duration::from_secs(5),
    );
    assert!(
        progress["params"]["progress"].as_f64().unwrap_or(0.0) > 0.0,
        "{progress}"
    );
}

#[test]
fn disconnect_clears_every_stop_point_and_the_jvm_runs_on() {
    let (jvm, server) = attached_orders();
    ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Orders", "line": line("place-add"), "trace": true, "trace_max_hits": 0}),
    );
    ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Orders", "line": line("loop-label")}),
    );
    ok(
        &server,
        "debug_wait_for_event",
        json!({"timeout_ms": 15000}),
    );
    let bye = ok(&server, "debug_disconnect", json!({}));
    assert!(
        bye.text.contains(": cleared 2 stop points; "),
        "{}",
        bye.text
    );
    let before = jvm.line_count();
    poll_until_msg(WAIT, "ticks after disconnect", || {
        (jvm.line_count() > before + 1).then_some(())
    });
}

/// How many hits of the traced line the hammering lasts (about ten
/// seconds' worth on a busy two-core host).
const HAMMER_HITS: u64 = 5_000;

/// Eight threads hammer a traced line for 5,000 hits: every hit is
/// resumed, nothing is left suspended, and the counters agree.
#[test]
fn eight_threads_hammering_a_traced_line_are_never_left_suspended() {
    let jvm = Jvm::start(
        "Contended",
        JvmOpts {
            args: vec!["8".into()],
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("contended started", WAIT);
    let server = server();
    attach(&server, &jvm);
    let armed = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Contended", "line": line_of("Contended.java", "increment"), "trace": true, "trace_max_hits": 0}),
    );
    let id = first_id(&armed);
    // A count of hits, not a time: a slow host hammers as long as it takes.
    poll_until_ok(Duration::from_secs(120), "5,000 traced hits", || {
        let p = point(&server, &id);
        if p["hits"].as_u64().unwrap_or(0) >= HAMMER_HITS {
            Ok(())
        } else {
            Err(p)
        }
    });
    ok(
        &server,
        "debug_update_stop_point",
        json!({"kind": "toggle", "id": id, "enabled": false}),
    );
    // Captures in flight finish; then every count is final: two readings in
    // a row agree, and the books balance.
    let mut last = Value::Null;
    let p = poll_until_ok(WAIT, "the counts to settle and balance", || {
        let p = point(&server, &id);
        let n = |key: &str| p[key].as_u64().unwrap_or(0);
        let settled = p["hits"] == last["hits"] && p["captured"] == last["captured"];
        let balanced = n("hits") == n("captured") + n("over_budget");
        last = p.clone();
        if settled && balanced { Ok(p) } else { Err(p) }
    });
    let hits = p["hits"].as_u64().unwrap_or(0);
    let captured = p["captured"].as_u64().unwrap_or(0);
    assert!(hits >= HAMMER_HITS, "a hot line: {p}");
    assert_eq!(
        hits,
        captured + p["over_budget"].as_u64().unwrap_or(0),
        "{p}"
    );
    let listing = ok(&server, "debug_list_stop_points", json!({}));
    let ring = &listing.json()["ring"];
    let held = ring["held"].as_u64().unwrap_or(0);
    let evicted = ring["evicted"].as_u64().unwrap_or(0);
    assert_eq!(held + evicted, captured, "ring {ring} vs {p}");
    assert_all_running(&server);
    let before = jvm.line_count();
    poll_until_msg(WAIT, "the application to run on", || {
        (jvm.line_count() > before + 1).then_some(())
    });
}

/// Waits for a traced stop point return its snapshots in order from the
/// first one after arming, even when the first wait begins after several
/// were taken.
fn waits_ascend_from_the_first_snapshot(java_home: Option<std::path::PathBuf>) {
    let jvm = Jvm::start(
        "Orders",
        JvmOpts {
            java_home,
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("orders started", WAIT);
    let server = server();
    attach(&server, &jvm);
    let armed = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Orders", "line": line("label"), "trace": true, "trace_max_hits": 0}),
    );
    let id = first_id(&armed);
    let first = traces_of(&server, &id, 3)[0]["seq"]
        .as_u64()
        .unwrap_or_else(|| panic!("a seq in the first snapshot of {id}"));
    let mut seen = Vec::new();
    for _ in 0..4 {
        let w = ok(
            &server,
            "debug_wait_for_event",
            json!({"bp_id": id, "timeout_ms": 10000}),
        );
        let seq = w
            .text
            .strip_prefix('#')
            .and_then(|t| t.split_whitespace().next())
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or_else(|| panic!("a snapshot number in {}", w.text));
        seen.push(seq);
    }
    assert_eq!(
        seen[0], first,
        "the first wait returns the first snapshot: {seen:?}"
    );
    assert!(
        seen.windows(2).all(|w| w[0] < w[1]),
        "snapshots ascend: {seen:?}"
    );
    ok(&server, "debug_disconnect", json!({}));
}

#[test]
fn waits_ascend_from_the_first_snapshot_after_arming_on_jdk17() {
    waits_ascend_from_the_first_snapshot(None);
}

#[test]
fn waits_ascend_from_the_first_snapshot_after_arming_on_temurin25() {
    waits_ascend_from_the_first_snapshot(Some(crate::support::java::temurin25_required()));
}
