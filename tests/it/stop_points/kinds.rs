//! Exception, field, method-exit and monitor stops against real JVMs:
//! what each kind reports, and what each refuses where HotSpot would lie.

use serde_json::{Value, json};

use super::{
    WAIT, assert_all_running, attach, attached_orders, detail, first_id, line, local, ok, point,
    server, traces_of,
};
use crate::support::java::{Jvm, JvmOpts};

#[test]
fn exception_stops_report_type_message_and_catch_site() {
    let (_jvm, server) = attached_orders();
    // A superclass matches its subclasses.
    let caught = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "exception", "class_pattern": "java.lang.RuntimeException", "uncaught": false, "trace": true, "trace_max_hits": 3}),
    );
    let exc = first_id(&caught);
    assert!(exc.starts_with("exc_"), "{exc}");
    let t = traces_of(&server, &exc, 3);
    let throw_at = format!("Orders.place:{}", line("place-throw"));
    let e = t
        .iter()
        .find(|s| s["location"] == throw_at.as_str())
        .unwrap_or_else(|| panic!("a throw from {throw_at}: {t:?}"));
    assert!(
        detail(e, "exception")
            .is_some_and(|x| x.starts_with("java.lang.IllegalStateException @0x")),
        "{e}"
    );
    assert_eq!(detail(e, "message"), Some("\"negative qty -1\""), "{e}");
    // The first handler is the finally of place (a catch-any that rethrows).
    assert_eq!(
        detail(e, "catch"),
        Some(format!("Orders.place:{}", line("place-finally")).as_str()),
        "{e}"
    );
    let uncaught = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "exception", "class_pattern": "java.lang.IllegalStateException", "caught": false, "trace": true, "trace_max_hits": 1}),
    );
    let t = traces_of(&server, &first_id(&uncaught), 1);
    assert_eq!(detail(&t[0], "catch"), Some("uncaught"), "{}", t[0]);
    assert!(
        t[0]["thread_name"]
            .as_str()
            .unwrap_or("")
            .starts_with("doomed-")
    );
    assert_all_running(&server);
}

#[test]
fn field_stops_report_old_and_new_values() {
    let (_jvm, server) = attached_orders();
    // `count` has one writer per object, so old → new is exact: count = before + qty.
    let watch = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "field", "class_pattern": "Orders", "field_name": "count", "trace": true, "trace_max_hits": 5}),
    );
    let id = first_id(&watch);
    assert!(id.starts_with("watch_"), "{id}");
    let t = traces_of(&server, &id, 5);
    for s in &t {
        let change = detail(s, "change").unwrap_or("");
        let (old, new) = change.split_once(" → ").expect("old → new");
        let (old, new): (i64, i64) = (old.parse().expect("int"), new.parse().expect("int"));
        assert!((1..=3).contains(&(new - old)), "{change}");
        assert_eq!(local(s, "before"), Some(old.to_string().as_str()), "{s}");
    }
    let object = detail(&t[0], "object")
        .expect("an instance field names its object")
        .to_string();
    let refused = server
        .call(
            "debug_set_stop",
            json!({"kind": "field", "class_pattern": "Orders", "field_name": "total", "instance_id": object}),
        )
        .expect_tool_error();
    assert!(
        refused.text.starts_with("[INSTANCE_REFUSED]"),
        "{}",
        refused.text
    );
    assert!(refused.text.contains("static field"), "{}", refused.text);
    let missing = server
        .call(
            "debug_set_stop",
            json!({"kind": "field", "class_pattern": "Orders", "field_name": "totl"}),
        )
        .expect_tool_error();
    assert!(
        missing.text.starts_with("[NO_SUCH_FIELD]"),
        "{}",
        missing.text
    );
    assert!(missing.text.contains("total"), "{}", missing.text);
    assert_all_running(&server);
}

#[test]
fn method_exit_stops_report_returns_and_count_discarded_exits() {
    let (_jvm, server) = attached_orders();
    let armed = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "method_exit", "class_pattern": "Orders", "method": "describe", "trace_max_hits": 6}),
    );
    let id = first_id(&armed);
    assert!(id.starts_with("mexit_"), "{id}");
    let t = traces_of(&server, &id, 6);
    for s in &t {
        let returned = detail(s, "returned").unwrap_or("");
        assert!(
            returned.starts_with("\"a:") || returned.starts_with("\"b:"),
            "{s}"
        );
    }
    let p = point(&server, &id);
    assert!(p["exits_discarded"].as_u64().unwrap_or(0) > 0, "{p}");
    let listing = ok(&server, "debug_list_stop_points", json!({}));
    assert!(
        listing.text.contains("exits discarded:"),
        "{}",
        listing.text
    );
    let refused = server
        .call(
            "debug_set_stop",
            json!({"kind": "method_exit", "class_pattern": "Orders", "method": "size", "hit_count": 2}),
        )
        .expect_tool_error();
    assert!(
        refused.text.contains("hit_count with method"),
        "{}",
        refused.text
    );
    let refused = server
        .call(
            "debug_set_stop",
            json!({"kind": "method_exit", "class_pattern": "Ord*", "trace": false}),
        )
        .expect_tool_error();
    assert!(refused.text.starts_with("[REFUSED]"), "{}", refused.text);
    assert_all_running(&server);
}

#[test]
fn monitor_stops_measure_contention_without_suspending() {
    let jvm = Jvm::start(
        "Contended",
        JvmOpts {
            args: vec!["4".into()],
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("contended started", WAIT);
    let server = server();
    attach(&server, &jvm);
    let refused = server
        .call(
            "debug_set_stop",
            json!({"kind": "monitor", "events": ["blocked"], "min_duration_ms": 5}),
        )
        .expect_tool_error();
    assert!(refused.text.contains("both halves"), "{}", refused.text);
    let armed = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "monitor", "trace_max_hits": 20, "trace_frames": 1}),
    );
    let id = first_id(&armed);
    assert!(id.starts_with("mon_"), "{id}");
    let t = traces_of(&server, &id, 20);
    let acquired: Vec<&Value> = t
        .iter()
        .filter(|s| detail(s, "duration").is_some_and(|d| d.contains("measured here")))
        .collect();
    assert!(!acquired.is_empty(), "a measured pair: {t:?}");
    assert!(
        t.iter()
            .any(|s| detail(s, "monitor").is_some_and(|m| m.starts_with("java.lang.Object @0x"))),
        "{t:?}"
    );
    ok(
        &server,
        "debug_update_stop_point",
        json!({"kind": "clear", "id": id}),
    );
    assert_all_running(&server);
}
