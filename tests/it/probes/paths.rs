//! Field paths a probe reads for its trace expressions (JDK 17 and
//! Temurin 25): `o.kind` recorded in the JVM and grouped by the enum's
//! constant name with the engine still the probe; a null link shown as
//! the wire's evaluator shows it; a field a superclass declares, a
//! package-private field of another class of the package, the probed
//! class's own private field on the way; paths from the returned and the
//! written value; what a probe cannot read (a
//! private field of another class, a method call, arithmetic) refused
//! with its reason and column under `auto` and `probe`, nothing left
//! instrumented, and served by `engine: "wire"` when asked for; and a
//! grouping that finds no snapshot carrying its key saying why.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::{Value, json};

use super::{WAIT, attach, first_id, instrumented, server, traces};
use crate::support::java::{Jvm, JvmOpts, line_of, temurin25_required};
use crate::support::mcp::Server;
use crate::support::poll_until_msg;

const FILE: &str = "ProbePaths.java";

fn start(java_home: Option<PathBuf>) -> Jvm {
    let jvm = Jvm::start(
        "ProbePaths",
        JvmOpts {
            java_home,
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("probe paths started", WAIT);
    jvm
}

fn detail<'a>(trace: &'a Value, key: &str) -> Option<&'a str> {
    trace["details"]
        .as_array()?
        .iter()
        .find(|d| d["key"] == key)?["value"]
        .as_str()
}

fn place(extra: Value) -> Value {
    let mut args = json!({"kind": "line", "class_pattern": "ProbePaths",
                          "line": line_of(FILE, "paths-place"), "trace": true});
    if let (Some(a), Some(e)) = (args.as_object_mut(), extra.as_object()) {
        a.extend(e.clone());
    }
    args
}

/// The groups of `bp`'s snapshots by `key`: each value and its count.
fn groups(server: &Server, bp: &str, key: &str) -> Vec<(String, u64)> {
    let r = server
        .call("debug_get_traces", json!({"bp_id": bp, "group_by": [key]}))
        .expect_ok();
    r.json()["groups"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|g| {
            (
                g["values"][key].as_str().unwrap_or_default().to_string(),
                g["count"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

fn paths_recorded_by_the_probe(java_home: Option<PathBuf>) {
    let jvm = start(java_home);
    let server = server();
    attach(&server, &jvm, json!({}));
    let armed = server
        .call(
            "debug_set_stop",
            place(json!({"trace_max_hits": 0, "trace_locals": "none",
                         "trace_expr": ["o.kind", "li.item.category", "o.region", "this.cfg.mode"]})),
        )
        .expect_ok();
    let bp = first_id(&armed);
    assert!(
        armed.text.contains("PROBE:"),
        "auto picks the probe: {}",
        armed.text
    );
    assert!(instrumented(&server, "ProbePaths"));

    // Every snapshot carries each path as the wire names a trace
    // expression; one item in four is null, shown where the chain stopped.
    let kinds = ["GARDEN", "KITCHEN", "TOOLS"];
    let mut nulls = 0;
    for t in traces(&server, &bp, 40) {
        let kind = detail(&t, "expr[0] o.kind").unwrap_or_else(|| panic!("o.kind in {t}"));
        assert!(kinds.iter().any(|k| kind.contains(k)), "{t}");
        match detail(&t, "expr[1] li.item.category") {
            Some("\"tools\"" | "\"garden\"") => {}
            Some(null) if null.contains("column 8: null before `.category`") => nulls += 1,
            other => panic!("li.item.category is {other:?} in {t}"),
        }
        assert_eq!(detail(&t, "expr[2] o.region"), Some("7"), "{t}");
        assert_eq!(detail(&t, "expr[3] this.cfg.mode"), Some("\"fast\""), "{t}");
    }
    assert!(nulls > 0, "one item in four is null");

    // The acceptance line: grouped by the enum's constant name, by its
    // source or its index, with the engine still the probe.
    for key in ["o.kind", "expr[0]"] {
        let by_kind = poll_until_msg(WAIT, "three kinds", || {
            let g = groups(&server, &bp, key);
            (g.len() == 3).then_some(g)
        });
        let names: BTreeSet<&str> = by_kind.iter().map(|(v, _)| v.as_str()).collect();
        assert_eq!(names, kinds.into_iter().collect(), "{by_kind:?}");
        assert!(by_kind.iter().all(|(_, n)| *n > 0), "{by_kind:?}");
    }
    let listed = server.call("debug_list_stop_points", json!({})).expect_ok();
    assert!(
        listed.text.contains(&bp) && listed.text.contains("engine: probe"),
        "still a probe: {}",
        listed.text
    );
    assert!(instrumented(&server, "ProbePaths"));

    // Paths from a value the site binds, by probes beside the first in
    // the same class: the order returned, and the order written.
    let bound = [
        (
            json!({"kind": "method_exit", "class_pattern": "ProbePaths", "method": "make",
                   "trace_max_hits": 0, "trace_expr": ["returnValue.kind"]}),
            "expr[0] returnValue.kind",
        ),
        (
            json!({"kind": "field", "class_pattern": "ProbePaths", "field_name": "last", "trace": true,
                   "trace_max_hits": 0, "trace_expr": ["newValue.kind", "this.cfg.mode"]}),
            "expr[0] newValue.kind",
        ),
    ];
    for (args, key) in bound {
        let armed = server.call("debug_set_stop", args).expect_ok();
        assert!(armed.text.contains("PROBE:"), "{}", armed.text);
        for t in traces(&server, &first_id(&armed), 5) {
            let kind = detail(&t, key).unwrap_or_else(|| panic!("{key} in {t}"));
            assert!(kinds.iter().any(|k| kind.contains(k)), "{t}");
        }
    }
    assert!(jvm.is_alive());
}

#[test]
fn a_probe_traced_with_field_paths_groups_by_enum_name_and_shows_null_links_jdk17() {
    paths_recorded_by_the_probe(None);
}

#[test]
fn a_probe_traced_with_field_paths_groups_by_enum_name_and_shows_null_links_temurin25() {
    paths_recorded_by_the_probe(Some(temurin25_required()));
}

fn refused_paths_and_the_wire(java_home: Option<PathBuf>) {
    let jvm = start(java_home);
    let server = server();
    attach(&server, &jvm, json!({}));

    // What a probe cannot read is refused with its reason and column,
    // under `auto` as under `probe`, and nothing goes into the class.
    let cases = [
        (
            json!({"trace_expr": ["o.secret"]}),
            "trace_expr[0] o.secret column 3",
            "PathsOrder.secret is private",
        ),
        (
            json!({"trace_expr": ["o.kind", "o.secret()"], "engine": "probe", "calls": true}),
            "trace_expr[1] o.secret() column 3",
            "method call",
        ),
        (
            json!({"trace_expr": ["o.qty * 2"], "engine": "auto"}),
            "trace_expr[0] o.qty * 2 column 1",
            "arithmetic",
        ),
    ];
    for (args, at, why) in cases {
        let r = server
            .call("debug_set_stop", place(args))
            .expect_tool_error();
        assert!(r.text.contains("PROBE_REFUSED"), "{}", r.text);
        assert!(r.text.contains(at) && r.text.contains(why), "{}", r.text);
        assert!(r.text.contains("engine \"wire\""), "{}", r.text);
        assert!(!instrumented(&server, "ProbePaths"), "{}", r.text);
    }
    let listed = server.call("debug_list_stop_points", json!({})).expect_ok();
    assert!(
        !listed.text.contains("bp_"),
        "nothing armed: {}",
        listed.text
    );

    // Asked for by name, the wire reads it.
    let armed = server
        .call(
            "debug_set_stop",
            place(json!({"trace_expr": ["o.secret"], "engine": "wire", "trace_max_hits": 3})),
        )
        .expect_ok();
    let wire = first_id(&armed);
    assert!(!armed.text.contains("PROBE:"), "{}", armed.text);
    for t in traces(&server, &wire, 3) {
        assert_eq!(detail(&t, "expr[0] o.secret"), Some("\"hidden\""), "{t}");
    }
    server
        .call(
            "debug_update_stop_point",
            json!({"kind": "clear", "id": wire}),
        )
        .expect_ok();

    // A probe without the path: grouping by it says why none carries it.
    let armed = server
        .call("debug_set_stop", place(json!({"trace_max_hits": 0})))
        .expect_ok();
    let bp = first_id(&armed);
    assert!(armed.text.contains("PROBE:"), "{}", armed.text);
    traces(&server, &bp, 5);
    let r = server
        .call(
            "debug_get_traces",
            json!({"bp_id": bp, "group_by": ["li.category"]}),
        )
        .expect_ok();
    assert!(
        r.text.contains("No snapshot carries li.category.")
            && r.text.contains("locals ")
            && r.text.contains(" li")
            && r.text.contains("trace_expr: [\"li.category\"]"),
        "{}",
        r.text
    );
    assert!(jvm.is_alive());
}

#[test]
fn a_path_a_probe_cannot_read_is_refused_with_its_column_and_served_by_the_wire_on_request_jdk17() {
    refused_paths_and_the_wire(None);
}

#[test]
fn a_path_a_probe_cannot_read_is_refused_with_its_column_and_served_by_the_wire_on_request_temurin25()
 {
    refused_paths_and_the_wire(Some(temurin25_required()));
}
