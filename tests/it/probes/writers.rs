//! A write probe in the classes the agent chooses (JDK 17 and Temurin 25):
//! a package-private field that three other classes write, one of them a
//! subclass naming it through itself. `auto` alone leaves such a field to
//! the wire, saying how to choose writers; with `writers`, one probe goes
//! into all three classes in one redefinition, sees every write with its
//! old value, runs its condition in each, and clearing it, or a killed
//! server's successor, gives all three their own bytes back.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::json;

use super::captures::capture;
use super::{WAIT, attach_on, first_id, instrumented, local_i64, server, traces};
use crate::support::java::{Jvm, line_of, temurin25_required};
use crate::support::mcp::Server;

const GAUGE: &str = "ProbeCaptureGauge";
const WRITERS: [&str; 3] = [
    "ProbeCaptureRaiser",
    "ProbeCaptureLowerer",
    "ProbeCaptureSubGauge",
];

/// The change each write made, over the snapshots.
fn deltas(traces: &[serde_json::Value]) -> BTreeSet<i64> {
    traces
        .iter()
        .map(|t| {
            let new = local_i64(t, "newValue").unwrap_or_else(|| panic!("newValue in {t}"));
            let old = local_i64(t, "oldValue").unwrap_or_else(|| panic!("oldValue in {t}"));
            new - old
        })
        .collect()
}

fn every_writer_instrumented(server: &Server) -> Vec<bool> {
    WRITERS.iter().map(|w| instrumented(server, w)).collect()
}

/// Not private: any class may write it, so a probe in the declaring class
/// alone would see nothing. `auto` takes the wire and says how a probe
/// could serve it; `writers` asked of the wire, which sees every write
/// already, is refused.
fn auto_leaves_it_to_the_wire(server: &Server) {
    let wire = server
        .call(
            "debug_set_stop",
            json!({"kind": "field", "class_pattern": GAUGE, "field_name": "level",
                   "trace": true, "trace_max_hits": 2}),
        )
        .expect_ok();
    assert!(
        wire.text.contains("WIRE: no probe") && wire.text.contains("writers"),
        "{}",
        wire.text
    );
    let wire_id = first_id(&wire);
    server
        .call(
            "debug_update_stop_point",
            json!({"kind": "clear", "id": wire_id}),
        )
        .expect_ok();
    // The wire sees every class's writes: writers would mean nothing.
    let wire = server
        .call(
            "debug_set_stop",
            json!({"kind": "field", "class_pattern": GAUGE, "field_name": "level",
                   "writers": WRITERS, "engine": "wire"}),
        )
        .expect_tool_error();
    assert!(wire.text.contains("drop writers"), "{}", wire.text);
}

fn writers_chosen(java_home: Option<PathBuf>) {
    let jvm = capture(java_home);
    let server = server();
    attach_on(&server, jvm.port(), json!({}));

    auto_leaves_it_to_the_wire(&server);
    // Chosen writers: one probe in all three, every write seen.
    let armed = server
        .call(
            "debug_set_stop",
            json!({"kind": "field", "class_pattern": GAUGE, "field_name": "level",
                   "writers": WRITERS, "trace": true, "trace_max_hits": 0}),
        )
        .expect_ok();
    assert!(armed.text.contains("PROBE:"), "{}", armed.text);
    assert!(
        armed
            .text
            .contains(&format!("level (write in {})", WRITERS.join(", "))),
        "the listing names the classes: {}",
        armed.text
    );
    let all = first_id(&armed);
    assert_eq!(every_writer_instrumented(&server), [true; 3]);
    assert!(
        !instrumented(&server, GAUGE),
        "the declaring class was not chosen"
    );
    let seen = traces(&server, &all, 30);
    assert_eq!(
        deltas(&seen),
        BTreeSet::from([-1, 2, 10]),
        "each writer's writes, with their old values"
    );
    // Each snapshot is located at its write, as the wire locates one,
    // and holds the writer's `this`.
    let sites: BTreeSet<String> = seen
        .iter()
        .map(|t| t["location"].as_str().unwrap_or_default().to_string())
        .collect();
    let at = |class: &str, method: &str, marker: &str| {
        format!("{class}.{method}:{}", line_of("ProbeCapture.java", marker))
    };
    assert_eq!(
        sites,
        BTreeSet::from([
            at("ProbeCaptureRaiser", "raise", "capture-raise"),
            at("ProbeCaptureLowerer", "lower", "capture-lower"),
            at("ProbeCaptureSubGauge", "surge", "capture-surge"),
        ])
    );
    for t in &seen {
        let this = t["locals"]
            .as_array()
            .and_then(|l| l.iter().find(|v| v["name"] == "this"))
            .unwrap_or_else(|| panic!("this in {t}"));
        let location = t["location"].as_str().unwrap_or_default();
        let writer = location.split('.').next().unwrap_or_default();
        assert!(this.to_string().contains(writer), "{t}");
    }
    // A condition runs in every writer's sites.
    let surges = server
        .call(
            "debug_set_stop",
            json!({"kind": "field", "class_pattern": GAUGE, "field_name": "level",
                   "writers": WRITERS, "condition": "newValue - oldValue > 5",
                   "trace": true, "trace_max_hits": 0, "engine": "probe"}),
        )
        .expect_ok();
    let surges = first_id(&surges);
    assert_eq!(deltas(&traces(&server, &surges, 5)), BTreeSet::from([10]));
    // Reading other fields at the sites would read each class's own.
    let refused = server
        .call(
            "debug_set_stop",
            json!({"kind": "field", "class_pattern": GAUGE, "field_name": "level",
                   "writers": WRITERS, "condition": "level > 0 && stop",
                   "trace": true, "engine": "probe"}),
        )
        .expect_tool_error();
    assert!(refused.text.contains("several classes"), "{}", refused.text);
    // A chosen class that never writes it is named.
    let refused = server
        .call(
            "debug_set_stop",
            json!({"kind": "field", "class_pattern": GAUGE, "field_name": "level",
                   "writers": ["ProbeCaptureRaiser", "ProbeCaptureTally"], "trace": true,
                   "engine": "probe"}),
        )
        .expect_tool_error();
    assert!(
        refused
            .text
            .contains("ProbeCaptureTally never writes ProbeCaptureGauge.level"),
        "{}",
        refused.text
    );

    // Clearing one probe keeps the other in all three; clearing the last
    // gives every class its own bytes back.
    server
        .call(
            "debug_update_stop_point",
            json!({"kind": "clear", "id": all}),
        )
        .expect_ok();
    assert_eq!(every_writer_instrumented(&server), [true; 3]);
    server
        .call(
            "debug_update_stop_point",
            json!({"kind": "clear", "id": surges}),
        )
        .expect_ok();
    assert_eq!(every_writer_instrumented(&server), [false; 3]);

    a_killed_server_s_successor_restores_every_writer(&jvm, server);
}

/// A killed server leaves all three instrumented; the next attach
/// restores each from the bytes the helper kept.
fn a_killed_server_s_successor_restores_every_writer(jvm: &Jvm, server: Server) {
    server
        .call(
            "debug_set_stop",
            json!({"kind": "field", "class_pattern": GAUGE, "field_name": "level",
                   "writers": WRITERS, "trace": true, "engine": "probe"}),
        )
        .expect_ok();
    assert_eq!(every_writer_instrumented(&server), [true; 3]);
    server.kill();
    let next = super::server();
    let reply = attach_on(&next, jvm.listening_port(2, WAIT), json!({}));
    for w in WRITERS {
        assert!(
            reply.text.contains(w),
            "{w} restored at attach: {}",
            reply.text
        );
    }
    assert_eq!(every_writer_instrumented(&next), [false; 3]);
    assert!(jvm.is_alive());
}

#[test]
fn a_write_probe_goes_into_the_writers_chosen_and_comes_out_of_all_of_them_jdk17() {
    writers_chosen(None);
}

#[test]
fn a_write_probe_goes_into_the_writers_chosen_and_comes_out_of_all_of_them_temurin25() {
    writers_chosen(Some(temurin25_required()));
}
