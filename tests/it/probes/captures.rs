//! What a probe's snapshot shows besides the frame's locals, as a wire
//! snapshot does (JDK 17 and Temurin 25): the callers of the hit, an
//! anonymous class's captured variables (so `auto` no longer leaves them
//! to the wire), a field write's old value beside the new one; and a
//! private field its nestmates write, which `auto` leaves to the wire,
//! saying why, and a probe takes once the nestmate is named its writer.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::{WAIT, attach, first_id, local_i64, server, traces};
use crate::support::java::{Jvm, JvmOpts, line_of, temurin25_required};
use crate::support::mcp::Server;

const FILE: &str = "ProbeCapture.java";

pub(super) fn capture(java_home: Option<PathBuf>) -> Jvm {
    let jvm = Jvm::start(
        "ProbeCapture",
        JvmOpts {
            java_home,
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("probe capture started", WAIT);
    jvm
}

fn local_text(trace: &Value, name: &str) -> Option<String> {
    trace["locals"]
        .as_array()?
        .iter()
        .find(|l| l["name"] == name)?
        .get("value")?
        .as_str()
        .map(str::to_string)
}

fn detail<'a>(trace: &'a Value, key: &str) -> Option<&'a str> {
    trace["details"]
        .as_array()?
        .iter()
        .find(|d| d["key"] == key)?["value"]
        .as_str()
}

fn set(server: &Server, args: Value) -> (String, String) {
    let armed = server.call("debug_set_stop", args).expect_ok();
    (first_id(&armed), armed.text)
}

fn callers_and_captured_variables(java_home: Option<PathBuf>) {
    let jvm = capture(java_home);
    let server = server();
    attach(&server, &jvm, json!({}));

    // A line three calls deep lists its callers, nearest first, labelled
    // as the wire labels frames.
    let (deep, text) = set(
        &server,
        json!({"kind": "line", "class_pattern": "ProbeCapture", "line": line_of(FILE, "capture-inner"),
               "trace": true, "trace_frames": 2, "trace_max_hits": 0}),
    );
    assert!(text.contains("PROBE:"), "auto picks the probe: {text}");
    let middle = format!("ProbeCapture.middle:{}", line_of(FILE, "capture-middle"));
    let outer = format!("ProbeCapture.outer:{}", line_of(FILE, "capture-outer"));
    for t in traces(&server, &deep, 5) {
        let callers: Vec<&str> = t["callers"]
            .as_array()
            .map(|c| c.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        assert_eq!(callers, [middle.as_str(), outer.as_str()], "{t}");
        assert!(local_i64(&t, "n").is_some(), "{t}");
    }

    // The anonymous Runnable's captured `tag` and `round` show as locals,
    // their values those of the call that made it.
    let (anon, text) = set(
        &server,
        json!({"kind": "line", "class_pattern": "ProbeCapture$1", "line": line_of(FILE, "capture-anon"),
               "trace": true, "trace_frames": 0, "trace_max_hits": 0}),
    );
    assert!(
        text.contains("PROBE:"),
        "no longer left to the wire: {text}"
    );
    for t in traces(&server, &anon, 5) {
        let round = local_i64(&t, "round").unwrap_or_else(|| panic!("round in {t}"));
        assert_eq!(
            local_text(&t, "tag").as_deref(),
            Some(format!("\"tag-{round}\"").as_str()),
            "{t}"
        );
        assert!(local_text(&t, "this").is_some(), "{t}");
        assert_eq!(t["callers"].as_array().map(Vec::len).unwrap_or(0), 0, "{t}");
    }
    // Only the captured variable asked for, and a condition on another.
    let (only, text) = set(
        &server,
        json!({"kind": "line", "class_pattern": "ProbeCapture$1", "line": line_of(FILE, "capture-anon"),
               "trace": true, "trace_locals": ["tag"], "condition": "round % 2 == 0", "trace_max_hits": 0}),
    );
    assert!(text.contains("PROBE:"), "{text}");
    for t in traces(&server, &only, 3) {
        let tag = local_text(&t, "tag").unwrap_or_else(|| panic!("tag in {t}"));
        let n: i64 = tag
            .trim_matches('"')
            .trim_start_matches("tag-")
            .parse()
            .expect("a round");
        assert_eq!(n % 2, 0, "{t}");
        assert!(local_text(&t, "round").is_none(), "{t}");
    }
    assert!(jvm.is_alive());
}

#[test]
fn a_probe_records_callers_and_an_anonymous_class_s_captured_variables_jdk17() {
    callers_and_captured_variables(None);
}

#[test]
fn a_probe_records_callers_and_an_anonymous_class_s_captured_variables_temurin25() {
    callers_and_captured_variables(Some(temurin25_required()));
}

fn old_values_and_nestmates(java_home: Option<PathBuf>) {
    let jvm = capture(java_home);
    let server = server();
    attach(&server, &jvm, json!({}));

    // `total` grows by 5 a call: every write's old value is 5 less than
    // its new one, shown as the wire shows a change.
    let (total, text) = set(
        &server,
        json!({"kind": "field", "class_pattern": "ProbeCaptureTally", "field_name": "total",
               "trace": true, "trace_max_hits": 0}),
    );
    assert!(text.contains("PROBE:"), "auto picks the probe: {text}");
    for t in traces(&server, &total, 5) {
        let new = local_i64(&t, "newValue").unwrap_or_else(|| panic!("newValue in {t}"));
        let old = local_i64(&t, "oldValue").unwrap_or_else(|| panic!("oldValue in {t}"));
        assert_eq!(new - old, 5, "{t}");
        assert_eq!(detail(&t, "field"), Some("total"), "{t}");
        let change = detail(&t, "change").unwrap_or_else(|| panic!("change in {t}"));
        assert!(change.contains('→'), "{t}");
    }
    // An int field, with a condition on the old value.
    let (count, text) = set(
        &server,
        json!({"kind": "field", "class_pattern": "ProbeCaptureTally", "field_name": "count",
               "trace": true, "condition": "oldValue % 3 == 0", "trace_max_hits": 0}),
    );
    assert!(text.contains("PROBE:"), "{text}");
    for t in traces(&server, &count, 3) {
        let old = local_i64(&t, "oldValue").unwrap_or_else(|| panic!("oldValue in {t}"));
        assert_eq!(old % 3, 0, "{t}");
        assert_eq!(local_i64(&t, "newValue"), Some(old + 1), "{t}");
    }

    // `hits` is private to ProbeCapture but its inner class Bump writes it
    // directly (nest-based access): a probe in ProbeCapture alone would
    // miss those writes, so `auto` takes the wire and says why.
    let (hits, text) = set(
        &server,
        json!({"kind": "field", "class_pattern": "ProbeCapture", "field_name": "hits",
               "trace": true, "trace_max_hits": 3}),
    );
    assert!(
        text.contains("WIRE: no probe")
            && text.contains("nestmates")
            && text.contains("ProbeCapture$Bump"),
        "{text}"
    );
    // The wire sees the nestmate's writes, with their old values.
    let bump = format!(
        "ProbeCapture$Bump.bump:{}",
        line_of(FILE, "capture-nestmate-write")
    );
    for t in traces(&server, &hits, 2) {
        assert!(t["location"].as_str().is_some_and(|l| l == bump), "{t}");
        assert!(detail(&t, "change").is_some_and(|c| c.contains('→')), "{t}");
    }
    server
        .call(
            "debug_update_stop_point",
            json!({"kind": "clear", "id": hits}),
        )
        .expect_ok();
    // Named as the field's writer, the nestmate takes the probe.
    let (nest, text) = set(
        &server,
        json!({"kind": "field", "class_pattern": "ProbeCapture", "field_name": "hits",
               "writers": ["ProbeCapture$Bump"], "trace": true, "trace_max_hits": 0}),
    );
    assert!(text.contains("PROBE:"), "{text}");
    for t in traces(&server, &nest, 3) {
        let new = local_i64(&t, "newValue").unwrap_or_else(|| panic!("newValue in {t}"));
        assert_eq!(local_i64(&t, "oldValue"), Some(new - 1), "{t}");
    }
    assert!(jvm.is_alive());
}

#[test]
fn a_write_probe_records_the_old_value_and_auto_leaves_a_nestmate_written_field_to_the_wire_jdk17()
{
    old_values_and_nestmates(None);
}

#[test]
fn a_write_probe_records_the_old_value_and_auto_leaves_a_nestmate_written_field_to_the_wire_temurin25()
 {
    old_values_and_nestmates(Some(temurin25_required()));
}

/// A write of a static field the helper may read (package-private) is
/// recorded with its old value read by the helper, for a record only: one
/// worker writes `(1 << 48) | n` for n = 0, 1, 2, …, so every old value
/// is the new one less 1 (the first write's is 0).
fn a_static_write_s_old_value(java_home: Option<PathBuf>) {
    let jvm = Jvm::start(
        "ProbeLoadBench",
        JvmOpts {
            java_home,
            args: vec!["1".into(), "50".into(), "named".into()],
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("probe bench ready", WAIT);
    let server = server();
    attach(&server, &jvm, json!({}));
    let (id, text) = set(
        &server,
        json!({"kind": "field", "class_pattern": "ProbeLoadBench$Named", "field_name": "seen",
               "trace": true, "trace_max_hits": 0, "engine": "probe"}),
    );
    assert!(text.contains("PROBE:"), "{text}");
    let read = traces(&server, &id, 50);
    for t in &read {
        let new = local_i64(t, "newValue").unwrap_or_else(|| panic!("newValue in {t}"));
        let old = local_i64(t, "oldValue").unwrap_or_else(|| panic!("oldValue in {t}"));
        assert_eq!(new >> 48, 1, "{t}");
        let expected = if new & ((1 << 48) - 1) == 0 {
            0
        } else {
            new - 1
        };
        assert_eq!(old, expected, "{t}");
    }
    assert!(jvm.is_alive());
}

#[test]
fn a_static_write_probe_reads_the_old_value_for_a_record_only_jdk17() {
    a_static_write_s_old_value(None);
}

#[test]
fn a_static_write_probe_reads_the_old_value_for_a_record_only_temurin25() {
    a_static_write_s_old_value(Some(temurin25_required()));
}
