//! The overhead guard hands a costly wire stop point to a probe (JDK 17
//! and Temurin 25): a traced line with a condition, set before its class
//! loaded, goes over the wire (a probe needs the loaded class); once the
//! class runs hot, every hit holds its thread for the condition, the guard
//! would pause it, and a probe takes it over instead: same id, same
//! definition, the condition now in the JVM, snapshots still arriving,
//! and the agent told so. Clearing it puts the class's bytecode back. And
//! a wire method-exit watch, which holds nothing but makes HotSpot run
//! every thread interpreted, is charged for that and paused past its budget.

use std::time::Duration;

use serde_json::json;

use crate::support::java::{Jvm, JvmOpts, fixtures, line_of, temurin25_required};
use crate::support::mcp::Server;
use crate::support::poll_until_msg;

const WAIT: Duration = Duration::from_secs(30);
const WORK: &str = "LateHot$Work";

fn the_guard_hands_a_costly_wire_stop_point_to_a_probe(java_home: Option<std::path::PathBuf>) {
    let dir = tempfile::Builder::new()
        .prefix("late-hot-")
        .tempdir()
        .expect("tempdir");
    let flag = dir.path().join("go");
    let jvm = Jvm::start(
        "LateHot",
        JvmOpts {
            args: vec![flag.display().to_string()],
            java_home,
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("late hot waiting", WAIT);
    let server = Server::spawn();
    server.initialize();
    server
        .call(
            "debug_attach",
            json!({"port": jvm.port(), "class_roots": [fixtures().display().to_string()]}),
        )
        .expect_ok();
    let line = line_of("LateHot.java", "late-hot-step");
    let armed = server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": WORK, "line": line, "trace": true,
                "condition": "n % 1000 == 0", "trace_max_hits": 0, "max_overhead": 5}),
        )
        .expect_ok();
    let id = armed.json()["outcomes"][0]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no id in {}", armed.text))
        .to_string();
    assert!(armed.text.contains("DEFERRED"), "{}", armed.text);
    assert!(armed.text.contains("WIRE: no probe"), "{}", armed.text);

    std::fs::write(&flag, b"").expect("trigger");
    jvm.wait_for_line("late hot started", WAIT);
    // Every hit holds its thread for the condition: the guard steps in,
    // and a probe takes the stop point over. Whichever reply comes first
    // tells it.
    let mut told = String::new();
    let listing = poll_until_msg(WAIT, "the stop point served by a probe", || {
        let r = server.call("debug_list_stop_points", json!({})).expect_ok();
        if let Some(l) = r.text.lines().find(|l| l.starts_with("[OVERHEAD]")) {
            told = l.to_string();
        }
        (r.text.contains("engine: probe") && !told.is_empty()).then_some(r.text)
    });
    assert!(told.contains(&format!("stop point {id} ")), "{told}");
    assert!(told.contains("SWITCHED TO A PROBE"), "{told}");
    assert!(
        listing.contains("switched it to a probe"),
        "the listing keeps the note: {listing}"
    );
    assert!(!listing.contains("PAUSED"), "{listing}");
    assert!(crate::probes::instrumented(&server, WORK));

    // Snapshots keep coming, from the probe, each one passing the condition.
    let since = server
        .call("debug_get_traces", json!({"bp_id": id, "limit": 1}))
        .expect_ok()
        .json()["last_seq"]
        .as_u64()
        .unwrap_or(0);
    let fresh = poll_until_msg(WAIT, "snapshots from the probe", || {
        let r = server
            .call(
                "debug_get_traces",
                json!({"bp_id": id, "since": since, "limit": 50, "compact": false}),
            )
            .expect_ok();
        let t = r.json()["traces"].as_array().cloned().unwrap_or_default();
        (t.len() >= 5).then_some(t)
    });
    for t in &fresh {
        let n: i64 = t["locals"]
            .as_array()
            .and_then(|ls| ls.iter().find(|l| l["name"] == "n"))
            .and_then(|l| l["value"].as_str())
            .and_then(|v| v.trim_end_matches('L').parse().ok())
            .unwrap_or_else(|| panic!("no n in {t}"));
        assert_eq!(n % 1000, 0, "{t}");
    }

    server
        .call(
            "debug_update_stop_point",
            json!({"kind": "clear", "id": id}),
        )
        .expect_ok();
    assert!(!crate::probes::instrumented(&server, WORK));
    crate::stop_points::assert_all_running(&server);
}

#[test]
fn the_guard_hands_a_costly_wire_stop_point_to_a_probe_jdk17() {
    the_guard_hands_a_costly_wire_stop_point_to_a_probe(None);
}

#[test]
fn the_guard_hands_a_costly_wire_stop_point_to_a_probe_temurin25() {
    the_guard_hands_a_costly_wire_stop_point_to_a_probe(Some(temurin25_required()));
}

/// A method-exit watch over the wire holds nothing, but HotSpot runs every
/// thread interpreted while it is armed: the guard charges that cost and
/// pauses it past its budget, even when no call ever returns through it.
fn interpretation_is_charged_to_a_wire_exit_watch(java_home: Option<std::path::PathBuf>) {
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
        .call("debug_attach", json!({"port": jvm.port()}))
        .expect_ok();
    // A class whose methods never return (main and its loops): no event,
    // no hold.
    let armed = server
        .call(
            "debug_set_stop",
            json!({"kind": "method_exit", "class_pattern": "ProbeLoad", "method": "main",
                "engine": "wire", "max_overhead": 30}),
        )
        .expect_ok();
    assert!(armed.text.contains("interpreted"), "{}", armed.text);
    let id = armed.json()["outcomes"][0]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no id in {}", armed.text))
        .to_string();
    let mut told = String::new();
    let listing = poll_until_msg(WAIT, "the guard to pause the exit watch", || {
        let r = server.call("debug_list_stop_points", json!({})).expect_ok();
        if let Some(l) = r.text.lines().find(|l| l.starts_with("[OVERHEAD]")) {
            told = l.to_string();
        }
        (r.text.contains("PAUSED (overhead budget)") && !told.is_empty()).then_some(r.text)
    });
    assert!(told.contains(&format!("stop point {id} PAUSED")), "{told}");
    assert!(
        listing.contains("HotSpot runs every thread interpreted while this is armed"),
        "{listing}"
    );
    assert!(listing.contains("Hits: 0"), "{listing}");
    crate::stop_points::assert_all_running(&server);
}

#[test]
fn interpretation_is_charged_to_a_wire_exit_watch_jdk17() {
    interpretation_is_charged_to_a_wire_exit_watch(None);
}

#[test]
fn interpretation_is_charged_to_a_wire_exit_watch_temurin25() {
    interpretation_is_charged_to_a_wire_exit_watch(Some(temurin25_required()));
}
