//! What a snapshot carries beyond frames and locals, against real JVMs:
//! rethrows of one exception folded into its first report, HotSpot's
//! helpful NullPointerException text from a bounded `getMessage()` (and why
//! it is missing read-only or when nothing is held), the locals an
//! anonymous class captured, trace expressions on method exits and
//! monitor events with the event's value in scope, an `instance_id`
//! object collected while its stop point was disabled, and a class copy
//! kept loaded while a stop point is armed on it.

use serde_json::{Value, json};

use super::{
    WAIT, assert_all_running, attach, attached_orders, detail, first_id, line, local, ok, orders,
    point, server, traces_of,
};
use crate::support::java::{Jvm, JvmOpts, line_of};
use crate::support::mcp::Server;
use crate::support::poll_until_msg;
use crate::support::text::event_field;

fn relay() -> Jvm {
    relay_with(Vec::new())
}

fn relay_with(args: Vec<String>) -> Jvm {
    let jvm = Jvm::start(
        "Relay",
        JvmOpts {
            args,
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("relay started", WAIT);
    jvm
}

fn relay_line(marker: &str) -> u32 {
    line_of("Relay.java", marker)
}

/// Arms a traced exception stop and returns its id.
fn exception_stop(server: &Server, class: &str, extra: Value) -> String {
    let mut args = json!({"kind": "exception", "class_pattern": class, "trace": true});
    if let (Some(a), Some(e)) = (args.as_object_mut(), extra.as_object()) {
        a.extend(e.clone());
    }
    first_id(&ok(server, "debug_set_stop", args))
}

#[test]
fn rethrows_of_one_exception_are_folded_into_its_first_report() {
    let jvm = relay();
    let server = server();
    attach(&server, &jvm);
    let id = exception_stop(
        &server,
        "java.lang.IllegalArgumentException",
        json!({"trace_max_hits": 3, "trace_frames": 1, "trace_locals": "none"}),
    );
    let throw_at = format!("Relay.inner:{}", relay_line("inner-throw"));
    let rethrow_at = format!(
        "at Relay.relay:{} (caught at Relay.loop:",
        relay_line("relay-rethrow")
    );
    // The rethrow follows the first throw within moments: poll until the
    // first two reports carry it.
    let t = poll_until_msg(WAIT, "two reports with their rethrow folded", || {
        let t = traces_of(&server, &id, 2);
        t.iter()
            .take(2)
            .all(|s| detail(s, "rethrown").is_some())
            .then_some(t)
    });
    for s in &t {
        assert_eq!(
            s["location"],
            throw_at.as_str(),
            "never a report of the rethrow: {s}"
        );
    }
    for s in t.iter().take(2) {
        let folded = detail(s, "rethrown").unwrap_or("");
        assert!(
            folded.starts_with("1×: ") && folded.contains(&rethrow_at),
            "{s}"
        );
        assert_eq!(
            detail(s, "catch"),
            Some(format!("Relay.relay:{}", relay_line("relay-rethrow") - 1).as_str()),
            "the first throw is caught by relay's handler: {s}"
        );
    }
    let p = point(&server, &id);
    assert!(p["rethrows_folded"].as_u64().unwrap_or(0) >= 2, "{p}");
    let listing = ok(&server, "debug_list_stop_points", json!({}));
    assert!(
        listing.text.contains("rethrows folded: "),
        "{}",
        listing.text
    );
    // The finally of Orders.place rethrows too: folded the same way. (Both
    // order threads throw at once, so the last report before the budget
    // runs out may lose its rethrow to the disarm: any report will do.)
    let jvm = orders(Vec::new());
    let server = self::server();
    attach(&server, &jvm);
    let id = exception_stop(
        &server,
        "java.lang.IllegalStateException",
        json!({"caught": true, "uncaught": false, "trace_max_hits": 6, "trace_locals": "none"}),
    );
    let place = format!("Orders.place:{}", line("place-throw"));
    let s = poll_until_msg(WAIT, "a throw from place with its finally rethrow", || {
        traces_of(&server, &id, 1)
            .into_iter()
            .find(|s| s["location"] == place.as_str() && detail(s, "rethrown").is_some())
    });
    let folded = detail(&s, "rethrown").unwrap_or("");
    assert!(
        folded.starts_with("1×: at Orders.place:") && folded.contains("(caught at Orders.loop:"),
        "{s}"
    );
    assert_all_running(&server);
}

#[test]
fn a_helpful_npe_message_comes_from_a_bounded_get_message() {
    let jvm = relay();
    let server = server();
    attach(&server, &jvm);
    let id = exception_stop(
        &server,
        "java.lang.NullPointerException",
        json!({"trace_max_hits": 2, "trace_frames": 1, "trace_locals": "none"}),
    );
    for s in traces_of(&server, &id, 2) {
        let m = detail(&s, "message").unwrap_or("");
        assert!(
            m.contains("String.length()") && m.contains("because") && m.contains("is null"),
            "{s}"
        );
        assert!(m.ends_with("(helpful NPE text, from getMessage())"), "{s}");
    }
    // A trace that holds nothing cannot invoke: it says why.
    let free = exception_stop(
        &server,
        "java.lang.NullPointerException",
        json!({"trace_max_hits": 1, "trace_frames": 0, "trace_locals": "none"}),
    );
    let s = &traces_of(&server, &free, 1)[0];
    assert!(
        detail(s, "message").is_some_and(|m| m.contains("holds none")),
        "{s}"
    );
    assert_all_running(&server);
    // Read-only refuses every invocation, so the text is not computed.
    let jvm = relay();
    let server = self::server();
    ok(
        &server,
        "debug_attach",
        json!({"port": jvm.port(), "read_only": true}),
    );
    let id = exception_stop(
        &server,
        "java.lang.NullPointerException",
        json!({"trace_max_hits": 1, "trace_frames": 1, "trace_locals": "none"}),
    );
    let s = &traces_of(&server, &id, 1)[0];
    assert!(
        detail(s, "message").is_some_and(|m| m.contains("read-only")),
        "{s}"
    );
    assert_all_running(&server);
}

#[test]
fn an_anonymous_class_snapshot_shows_the_locals_it_captured() {
    let jvm = relay();
    let server = server();
    attach(&server, &jvm);
    let at = relay_line("anon-run");
    let all = first_id(&ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Relay$1", "line": at, "trace": true, "trace_max_hits": 2}),
    ));
    let only = first_id(&ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Relay$1", "line": at, "trace": true, "trace_max_hits": 2,
               "trace_locals": ["order"]}),
    ));
    for s in traces_of(&server, &all, 2) {
        assert!(
            local(&s, "order").is_some_and(|v| v.starts_with("\"order-")),
            "{s}"
        );
        assert!(local(&s, "out").is_some_and(|v| v.contains("@0x")), "{s}");
    }
    for s in traces_of(&server, &only, 2) {
        assert!(local(&s, "order").is_some(), "{s}");
        assert!(local(&s, "out").is_none(), "{s}");
    }
    assert_all_running(&server);
}

#[test]
fn trace_expressions_on_method_exits_and_monitors_see_the_event() {
    let (_jvm, server) = attached_orders();
    let id = first_id(&ok(
        &server,
        "debug_set_stop",
        json!({"kind": "method_exit", "class_pattern": "Orders", "method": "describe", "trace_max_hits": 3,
               "trace_expr": ["returnValue", "returnValue.length() > 2", "count >= 0"], "calls": true,
               "engine": "wire"}),
    ));
    for s in traces_of(&server, &id, 3) {
        let returned = detail(&s, "returned").unwrap_or("?");
        assert!(
            detail(&s, "expr[0] returnValue").is_some_and(|v| v.ends_with(returned)),
            "{s}"
        );
        assert!(
            local(&s, "this").is_some(),
            "locals read despite the invocations: {s}"
        );
        assert_eq!(
            detail(&s, "expr[1] returnValue.length() > 2"),
            Some("true"),
            "{s}"
        );
        assert_eq!(detail(&s, "expr[2] count >= 0"), Some("true"), "{s}");
    }
    assert_all_running(&server);

    let jvm = Jvm::start(
        "Contended",
        JvmOpts {
            args: vec!["4".into()],
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("contended started", WAIT);
    let server = self::server();
    attach(&server, &jvm);
    let id = first_id(&ok(
        &server,
        "debug_set_stop",
        json!({"kind": "monitor", "trace_max_hits": 20, "trace_frames": 0, "trace_locals": "none",
               "trace_expr": ["monitor", "monitor.toString()"], "calls": true}),
    ));
    let t = traces_of(&server, &id, 20);
    for s in &t {
        assert!(
            detail(s, "expr[0] monitor").is_some_and(|m| m.starts_with("java.lang.Object @0x")),
            "{s}"
        );
    }
    // Blocked (no duration yet): nothing is invoked on a thread entering a
    // monitor. Acquired: the thread holds it and may run toString().
    let blocked = t.iter().find(|s| detail(s, "duration").is_none());
    let acquired = t.iter().find(|s| detail(s, "duration").is_some());
    let (Some(blocked), Some(acquired)) = (blocked, acquired) else {
        panic!("both halves of a pair: {t:?}");
    };
    assert!(
        detail(blocked, "expr[1] monitor.toString()")
            .is_some_and(|e| e.starts_with("error:") && e.contains("blocked entering a monitor")),
        "{blocked}"
    );
    assert!(
        detail(acquired, "expr[1] monitor.toString()")
            .is_some_and(|e| e.contains("java.lang.Object@")),
        "{acquired}"
    );
    assert_all_running(&server);
}

#[test]
fn a_collected_instance_filter_is_reported_and_refuses_to_re_arm() {
    let jvm = relay_with(vec!["gc".into()]);
    let server = server();
    attach(&server, &jvm);
    let at = relay_line("stamp");
    // The handle is taken while the thread is held in stamp(), so the object is alive until the
    // filtered stop point holds it: the loop's System.gc() cannot collect it in between.
    let held = first_id(&ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Relay", "line": at, "hit_count": 1}),
    ));
    let hit = ok(
        &server,
        "debug_wait_for_event",
        json!({"timeout_ms": 15000}),
    );
    let thread = event_field(&hit.text, "thread").unwrap_or_default();
    let this = ok(
        &server,
        "debug_evaluate",
        json!({"expression": "this", "thread_id": thread}),
    );
    let handle = this
        .text
        .split(|c: char| c.is_whitespace() || c == ',' || c == ')')
        .find(|w| w.starts_with("@0x"))
        .unwrap_or_else(|| panic!("a handle for this: {}", this.text))
        .to_string();
    let filtered = first_id(&ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Relay", "line": at, "trace": true, "instance_id": handle}),
    ));
    ok(
        &server,
        "debug_update_stop_point",
        json!({"kind": "clear", "id": held}),
    );
    ok(&server, "debug_continue", json!({}));
    // Armed, the request holds its object; disabled, nothing does.
    ok(
        &server,
        "debug_update_stop_point",
        json!({"kind": "toggle", "id": filtered, "enabled": false}),
    );
    let p = poll_until_msg(WAIT, "the filtered object to be collected", || {
        let p = point(&server, &filtered);
        (p["instance_collected"] == true).then_some(p)
    });
    assert_eq!(p["hits"], 0, "{p}");
    let listing = ok(&server, "debug_list_stop_points", json!({}));
    assert!(
        listing.text.contains("garbage collected"),
        "{}",
        listing.text
    );
    let refused = server
        .call(
            "debug_update_stop_point",
            json!({"kind": "toggle", "id": filtered, "enabled": true}),
        )
        .expect_tool_error();
    assert!(
        refused.text.starts_with("[NO_SUCH_OBJECT]"),
        "{}",
        refused.text
    );
    assert_all_running(&server);
}

#[test]
fn an_armed_stop_point_keeps_its_class_copy_loaded() {
    let dir = tempfile::tempdir().expect("tempdir");
    let jvm = Jvm::start(
        "Reloads",
        JvmOpts {
            args: vec![dir.path().display().to_string()],
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("reloads started", WAIT);
    // Unwatched, a dropped copy unloads.
    std::fs::write(dir.path().join("load-1"), b"").expect("trigger");
    jvm.wait_for_line("plugin 1 unloaded", WAIT);
    let server = server();
    attach(&server, &jvm);
    let bp = first_id(&ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "OrdersPlugin", "line": line_of("OrdersPlugin.java", "plugin-run"),
               "trace": true, "trace_max_hits": 0, "trace_frames": 0, "trace_locals": "none"}),
    ));
    // HotSpot keeps a class copy loaded while a request of ours names it,
    // so the registry never holds a copy that is gone: nothing to drop on
    // a class unload. Disconnecting releases it.
    std::fs::write(dir.path().join("load-2"), b"").expect("trigger");
    jvm.wait_for_line("plugin 2 kept", WAIT);
    let p = point(&server, &bp);
    assert_eq!(
        (p["hits"].as_u64(), p["classloaders"].as_u64()),
        (Some(30), Some(1)),
        "{p}"
    );
    ok(&server, "debug_disconnect", json!({}));
    jvm.wait_for_line("plugin 2 unloaded", WAIT);
}

/// Grouping a traced line by a local gives the true count of each value:
/// the fixture prints its own counts of the calls it made.
#[test]
fn traces_grouped_by_a_local_count_what_the_program_counted() {
    let jvm = Jvm::start("Burst", JvmOpts::default());
    jvm.wait_for_line("burst ready", WAIT);
    let server = server();
    attach(&server, &jvm);
    let armed = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Burst", "line": line_of("Burst.java", "priced"),
               "trace": true, "trace_frames": 0, "trace_locals": "qty,sku",
               "trace_expr": ["qty * 7"], "engine": "wire"}),
    );
    let id = first_id(&armed);
    ok(
        &server,
        "debug_set_value",
        json!({"target": "Burst.go", "value": "true"}),
    );
    let done = jvm.wait_for_line("burst done", WAIT);
    let printed: Vec<(String, usize)> = done
        .split_whitespace()
        .filter_map(|w| w.strip_prefix("qty"))
        .filter_map(|w| w.split_once('='))
        .map(|(q, n)| (q.to_string(), n.parse().unwrap_or(usize::MAX)))
        .collect();
    assert_eq!(printed.len(), 3, "{done}");
    traces_of(&server, &id, 60);
    let grouped = ok(
        &server,
        "debug_get_traces",
        // One key may be given as a plain string.
        json!({"bp_id": id, "group_by": "qty", "limit": 1}),
    );
    let groups = grouped.json()["groups"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for (qty, n) in &printed {
        let g = groups
            .iter()
            .find(|g| g["values"]["qty"] == qty.as_str())
            .unwrap_or_else(|| panic!("no group for qty={qty}: {}", grouped.text));
        assert_eq!(g["count"].as_u64(), Some(*n as u64), "{}", grouped.text);
    }
    assert!(
        grouped.text.contains("3 groups over 60 snapshots"),
        "{}",
        grouped.text
    );
    // The header counts what was grouped (all 60), not the page limit.
    assert!(
        grouped
            .text
            .starts_with("60 snapshots matching, all grouped"),
        "{}",
        grouped.text
    );
    // Each example shows what its trace expression recorded (its key's
    // value is on the group's line above it).
    let mut qty = None;
    let mut examples = 0;
    for l in grouped.text.lines().map(str::trim_start) {
        if let Some(rest) = l.strip_prefix("qty=") {
            qty = rest.split(':').next().and_then(|n| n.parse::<i64>().ok());
        } else if l.starts_with("e.g. #") {
            let q = qty.unwrap_or_else(|| panic!("no group line: {}", grouped.text));
            assert!(
                l.contains(&format!("expr[0] qty * 7={}", q * 7)),
                "{}",
                grouped.text
            );
            examples += 1;
        }
    }
    assert_eq!(examples, 3, "{}", grouped.text);
    // Two keys, one of them a trace expression named by its source.
    let both = ok(
        &server,
        "debug_get_traces",
        json!({"bp_id": id, "group_by": ["sku", "qty * 7"], "max_groups": 2}),
    );
    let groups = both.json()["groups"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(groups.len(), 2, "{}", both.text);
    assert_eq!(both.json()["distinct"], 3, "{}", both.text);
    let smallest = printed.iter().map(|(_, n)| *n).min().unwrap_or(0);
    assert!(
        both.text
            .contains(&format!("{smallest} more snapshots in 1 smaller group")),
        "{}",
        both.text
    );
    let sku = groups[0]["values"]["sku"].as_str().unwrap_or("");
    let seven = groups[0]["values"]["qty * 7"].as_str().unwrap_or("");
    let q: i64 = sku
        .trim_matches('"')
        .trim_start_matches("sku-")
        .parse()
        .unwrap_or(-1);
    assert_eq!(seven, (q * 7).to_string(), "{}", both.text);
    // Compact never leaves out a value a trace expression was asked for,
    // even one equal to the previous snapshot's.
    let lines = |compact: bool| {
        let r = ok(
            &server,
            "debug_get_traces",
            json!({"bp_id": id, "limit": 60, "compact": compact}),
        );
        r.text.matches("expr[0] qty * 7:").count()
    };
    let (full, compact) = (lines(false), lines(true));
    assert_eq!((full, compact), (60, 60));
    assert_all_running(&server);
}

/// Enum constants and boxed numbers group and print by value: `GARDEN`,
/// not a handle per object, and `1000` whichever Integer holds it.
fn enums_and_boxes_group_by_value(java_home: Option<std::path::PathBuf>) {
    let jvm = Jvm::start(
        "Kinds",
        JvmOpts {
            java_home,
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("kinds started", WAIT);
    let server = server();
    attach(&server, &jvm);
    let id = first_id(&ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Kinds", "line": line_of("Kinds.java", "handle"),
               "trace": true, "trace_max_hits": 12}),
    ));
    traces_of(&server, &id, 12);
    let grouped = ok(
        &server,
        "debug_get_traces",
        json!({"bp_id": id, "group_by": ["kind", "qty"]}),
    );
    let text = &grouped.text;
    assert!(text.contains("Grouped by kind, qty: 6 groups"), "{text}");
    for kind in ["GARDEN", "KITCHEN", "TOOLS"] {
        for qty in ["1000", "1001"] {
            assert!(text.contains(&format!("kind={kind} qty={qty}:")), "{text}");
        }
    }
    // A snapshot prints the constant by name, with its type, and the
    // number by value.
    let plain = ok(
        &server,
        "debug_get_traces",
        json!({"bp_id": id, "limit": 3}),
    );
    assert!(
        plain.text.contains("GARDEN (Kinds$Kind @"),
        "{}",
        plain.text
    );
    assert!(
        plain.text.contains("TOOLS (Kinds$Kind$1 @"),
        "{}",
        plain.text
    );
    assert!(plain.text.contains("1000 (Integer @"), "{}", plain.text);
}

#[test]
fn enums_and_boxed_numbers_group_by_value() {
    enums_and_boxes_group_by_value(None);
}

#[test]
fn enums_and_boxed_numbers_group_by_value_on_temurin25() {
    enums_and_boxes_group_by_value(Some(crate::support::java::temurin25_required()));
}
