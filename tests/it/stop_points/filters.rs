//! Stop-point filters against real JVMs: hit counts (spent ones, and a
//! count kept here over several locations), a thread filter, and an
//! instance filter with its refusal on a static method.

use serde_json::json;

use super::{
    WAIT, assert_all_running, attached_orders, first_id, line, local, ok, point, traces_of,
};
use crate::support::poll_until_msg;
use crate::support::text::{event_field, threads};

#[test]
fn a_spent_hit_count_is_reported_and_clearing_it_sends_nothing() {
    let (_jvm, server) = attached_orders();
    let armed = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Orders", "line": line("label"), "hit_count": 3}),
    );
    let bp = first_id(&armed);
    let hit = ok(
        &server,
        "debug_wait_for_event",
        json!({"timeout_ms": 15000}),
    );
    assert_eq!(
        event_field(&hit.text, "stop").as_deref(),
        Some(bp.as_str()),
        "{}",
        hit.text
    );
    let p = poll_until_msg(WAIT, "SPENT", || {
        let p = point(&server, &bp);
        (p["state"] == "spent").then_some(p)
    });
    assert_eq!(p["hits"], 1, "the JVM reports only the Nth: {p}");
    ok(&server, "debug_continue", json!({}));
    let cleared = ok(
        &server,
        "debug_update_stop_point",
        json!({"kind": "clear", "id": bp}),
    );
    assert!(
        cleared
            .text
            .starts_with(&format!("Cleared {bp} (0 JDWP requests).")),
        "{}",
        cleared.text
    );
    assert!(
        cleared.text.contains("nothing was sent"),
        "{}",
        cleared.text
    );
    assert_all_running(&server);
}

#[test]
fn a_hit_count_over_several_locations_is_counted_here_holding_one_thread_at_a_time() {
    let (_jvm, server) = attached_orders();
    let armed = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Orders", "line": line("place-finally"), "hit_count": 3}),
    );
    let id = first_id(&armed);
    assert_eq!(
        point(&server, &id)["policy"],
        "EVENTTHREAD",
        "{}",
        armed.text
    );
    assert!(armed.text.contains("counted here"), "{}", armed.text);
    let hit = ok(
        &server,
        "debug_wait_for_event",
        json!({"timeout_ms": 15000}),
    );
    assert_eq!(
        event_field(&hit.text, "suspended").as_deref(),
        Some("all"),
        "{}",
        hit.text
    );
    let p = poll_until_msg(WAIT, "spent", || {
        let p = point(&server, &id);
        (p["state"] == "spent").then_some(p)
    });
    assert_eq!(p["spent_reason"], "hit_count 3 reached", "{p}");
    assert!(p["hits"].as_u64().unwrap_or(0) >= 3, "{p}");
    ok(&server, "debug_continue", json!({}));
    let cleared = ok(
        &server,
        "debug_update_stop_point",
        json!({"kind": "clear", "id": id}),
    );
    assert!(
        cleared
            .text
            .starts_with(&format!("Cleared {id} (0 JDWP requests).")),
        "{}",
        cleared.text
    );
    assert_all_running(&server);
}

#[test]
fn a_thread_filter_keeps_one_thread() {
    let (_jvm, server) = attached_orders();
    let listed = ok(
        &server,
        "debug_list_threads",
        json!({"name_contains": "orders-b"}),
    );
    let b = threads(&listed.text)
        .first()
        .map(|t| t.id.clone())
        .expect("orders-b");
    let armed = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Orders", "line": line("place-add"), "thread_id": b, "trace": true, "trace_max_hits": 8}),
    );
    let t = traces_of(&server, &first_id(&armed), 8);
    assert!(t.iter().all(|s| s["thread_name"] == "orders-b"), "{t:?}");
    let bad = server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": "Orders", "line": line("place-add"), "thread_id": "@0x7fffffff"}),
        )
        .expect_tool_error();
    assert!(
        bad.text.starts_with("[NO_SUCH_THREAD]") || bad.text.starts_with("[JDWP_ERROR]"),
        "{}",
        bad.text
    );
    assert_all_running(&server);
}

#[test]
fn an_instance_filter_narrows_and_is_refused_on_a_static_method() {
    let (_jvm, server) = attached_orders();
    let refused = server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": "Orders", "line": line("label"), "instance_id": "@0x1"}),
        )
        .expect_tool_error();
    // @0x1 is not an object: an instance id is checked before anything else.
    assert!(refused.is_error, "{}", refused.text);
    // Take worker a's Orders from a snapshot of loop's locals.
    let probe = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Orders", "line": line("loop-label"), "trace": true, "trace_max_hits": 10}),
    );
    let probe_id = first_id(&probe);
    let traces = traces_of(&server, &probe_id, 4);
    let of_a = traces
        .iter()
        .find(|t| t["thread_name"] == "orders-a")
        .expect("a snapshot from orders-a");
    let handle = local(of_a, "o")
        .and_then(|v| v.split('@').nth(1))
        .map(|h| format!("@{}", h.trim()))
        .expect("o carries an @0x… handle");
    let on_static = server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": "Orders", "line": line("label"), "instance_id": handle}),
        )
        .expect_tool_error();
    assert!(
        on_static.text.starts_with("[INSTANCE_REFUSED]"),
        "{}",
        on_static.text
    );
    assert!(
        on_static.text.contains("static method"),
        "{}",
        on_static.text
    );
    let narrowed = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Orders", "line": line("place-add"), "instance_id": handle, "trace": true, "trace_max_hits": 12}),
    );
    let bp = first_id(&narrowed);
    let t = traces_of(&server, &bp, 12);
    assert!(
        t.iter().all(|t| t["thread_name"] == "orders-a"),
        "only worker a's object: {t:?}"
    );
    assert_all_running(&server);
}
