//! The overhead guard on a real JVM: a stop point whose condition is never
//! true, on a request path served at ~15,000 calls/s, holds a thread on
//! every call. Its cost line counts those holds, and the guard pauses it
//! (disarmed, kept) once they pass its budget, telling the agent once, in
//! the next reply. The session's own budget does the same when the stop
//! point's is off.

use serde_json::{Value, json};

use super::{WAIT, assert_all_running, first_id, ok, point};
use crate::support::java::{Jvm, JvmOpts, line_of};
use crate::support::mcp::Server;
use crate::support::poll_until_msg;

fn hot_path() -> Jvm {
    let jvm = Jvm::start("HotPath", JvmOpts::default());
    jvm.wait_for_line("hot ready", WAIT);
    jvm
}

fn attached(server: &Server, jvm: &Jvm) {
    server.initialize();
    ok(server, "debug_attach", json!({"port": jvm.port()}));
}

/// Arms the never-true condition on the hot line, over the wire (under
/// `auto` a probe would serve it, and the guard would have nothing to do).
fn arm_never_true(server: &Server) -> String {
    let line = line_of("HotPath.java", "hot");
    first_id(&ok(
        server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "HotPath", "line": line, "condition": "cents == 12345", "engine": "wire"}),
    ))
}

/// Polls the listing until the guard has paused `id`; returns the stop
/// point's data and every notice the polling replies carried.
fn until_paused(server: &Server, id: &str) -> (Value, Vec<String>) {
    let mut notices = Vec::new();
    let p = poll_until_msg(WAIT, "the overhead guard to pause the stop point", || {
        let r = ok(server, "debug_list_stop_points", json!({}));
        notices.extend(
            r.text
                .lines()
                .filter(|l| l.starts_with("[OVERHEAD]"))
                .map(str::to_string),
        );
        let p = r.json()["stop_points"]
            .as_array()
            .and_then(|a| a.iter().find(|p| p["id"] == id).cloned())?;
        (p["state"] == "disabled" && !p["paused"].is_null()).then_some(p)
    });
    (p, notices)
}

/// Waits for the fixture to print `n` more throughput lines.
fn fixture_runs_on(jvm: &Jvm, n: usize) {
    let before = jvm.line_count();
    poll_until_msg(WAIT, "the fixture to print its throughput", || {
        (jvm.line_count() >= before + n).then_some(())
    });
}

#[test]
fn a_never_true_condition_on_a_hot_path_is_paused_by_the_overhead_guard() {
    let jvm = hot_path();
    let server = Server::spawn_guarded();
    attached(&server, &jvm);
    let id = arm_never_true(&server);
    let (p, notices) = until_paused(&server, &id);
    // Every hit held a thread for a check, and the cost line counts them.
    let checks = p["checks"].as_u64().unwrap_or(0);
    assert!(
        checks > 100 && p["condition_false"].as_u64() >= Some(checks),
        "{p}"
    );
    assert!(p["mean_check_ms"].as_f64().unwrap_or(0.0) > 0.0, "{p}");
    assert_eq!(p["overhead_budget_pct"], 20, "{p}");
    let paused = &p["paused"];
    assert_eq!(paused["scope"], "stop_point", "{p}");
    assert!(paused["share"].as_f64().unwrap_or(0.0) > 0.20, "{p}");
    // The agent was told once, with the figure and the way back.
    assert_eq!(notices.len(), 1, "{notices:?}");
    let notice = &notices[0];
    assert!(
        notice.contains(&id)
            && notice.contains("budget 20%")
            && notice.contains("debug_update_stop_point kind toggle")
            && notice.contains("max_overhead"),
        "{notice}"
    );
    assert_eq!(
        notice
            .matches(" of one thread's time over the last ")
            .count(),
        1,
        "one figure, with its window: {notice}"
    );
    let listing = ok(&server, "debug_list_stop_points", json!({}));
    assert!(!listing.text.contains("[OVERHEAD]"), "{}", listing.text);
    // The listing gives the same one figure, the one that paused it, and
    // no later share beside it.
    assert_eq!(
        listing.text.matches(" of one thread's time").count(),
        1,
        "{}",
        listing.text
    );
    let figure = |t: &str| {
        t.split(" of one thread's time")
            .next()
            .and_then(|l| l.rsplit(' ').next())
            .map(str::to_string)
    };
    assert_eq!(figure(&listing.text), figure(notice), "{}", listing.text);
    assert!(
        p["hold_share"].is_null() && p["recent_hold_share"].is_null(),
        "{p}"
    );
    // Nor a lifetime mean hold and rate, whose product is another share.
    assert!(
        !listing.text.contains("hits/s") && !listing.text.contains("ms per hit"),
        "{}",
        listing.text
    );
    assert!(
        p["hits_per_second"].is_null() && p["mean_hold_ms"].is_null(),
        "{p}"
    );
    assert!(
        listing.text.contains("PAUSED (overhead budget)")
            && listing.text.contains("checks")
            && listing.text.contains("of one thread's time"),
        "{}",
        listing.text
    );
    // Paused means disarmed: the program runs on and no hit is added
    // (once the hits posted before the disarm are handled).
    fixture_runs_on(&jvm, 2);
    let hits = point(&server, &id)["hits"].as_u64();
    fixture_runs_on(&jvm, 2);
    assert_eq!(point(&server, &id)["hits"].as_u64(), hits);
    let why = ok(&server, "debug_diagnose", json!({"stop_point": id}));
    assert!(
        why.text.contains("PAUSED_BY_OVERHEAD_BUDGET"),
        "{}",
        why.text
    );
    // With its budget off, an update re-arms it, and it stays armed past
    // the window the guard needs.
    ok(
        &server,
        "debug_update_stop_point",
        json!({"id": id, "max_overhead": 0}),
    );
    let armed = point(&server, &id);
    assert!(
        armed["state"] == "armed" && armed["paused"].is_null(),
        "{armed}"
    );
    assert_eq!(armed["overhead_budget_pct"], 0, "{armed}");
    fixture_runs_on(&jvm, 5);
    let still = point(&server, &id);
    assert!(
        still["state"] == "armed" && still["hits"].as_u64() > hits,
        "{still}"
    );
    assert_all_running(&server);
}

#[test]
fn the_session_budget_pauses_the_costliest_stop_point() {
    let jvm = hot_path();
    let server = Server::spawn_with_env(&[
        ("JVMSCOPE_OVERHEAD_PCT", "off"),
        ("JVMSCOPE_SESSION_OVERHEAD_PCT", "5"),
    ]);
    attached(&server, &jvm);
    let id = arm_never_true(&server);
    let (p, notices) = until_paused(&server, &id);
    assert_eq!(p["overhead_budget_pct"], 0, "{p}");
    let paused = &p["paused"];
    assert!(
        paused["scope"] == "session" && paused["budget_pct"] == 5,
        "{p}"
    );
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].contains("JVMSCOPE_SESSION_OVERHEAD_PCT"),
        "{}",
        notices[0]
    );
    // A toggle re-arms it as it was.
    ok(
        &server,
        "debug_update_stop_point",
        json!({"kind": "toggle", "id": id, "enabled": true}),
    );
    let armed = point(&server, &id);
    assert!(
        armed["state"] == "armed" && armed["paused"].is_null(),
        "{armed}"
    );
    assert_all_running(&server);
}
