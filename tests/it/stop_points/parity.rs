//! Stop-point behaviours checked against the reference catalogue:
//! exception and field-watch wildcards over the loaded classes, lists of
//! exception types, fields and method-exit patterns (one id each, per-entry
//! outcomes), a misspelt method-exit method warned about, stop-point ids
//! the event tools refuse or expand (families), what `clear` removed beyond
//! the page shown, readable expression errors, a panic that releases the
//! threads the agent holds, trace_expr changed in place, hit_count with a
//! condition, an exported set re-armed by replaying it, and values cut at
//! capture time.

use serde_json::{Value, json};

use super::*;

#[test]
fn exception_wildcards_and_lists_arm_one_stop_point_per_class() {
    let (_jvm, server) = attached_orders();
    // An exact type, a wildcard over the loaded exception classes (the
    // topmost of a matched hierarchy only) and a wildcard nothing matches.
    let exc = server.call(
        "debug_set_stop",
        json!({"kind": "exception", "class_pattern": ["java.lang.IllegalStateException", "java.lang.*Error", "NoSuch*Thing"],
               "trace": true, "trace_frames": 0}),
    );
    assert!(!exc.is_error, "{}", exc.text);
    // IllegalStateException may not be loaded yet at attach: then it is
    // deferred and arms itself on the first throw.
    assert!(
        exc.text.starts_with("2 armed, 0 deferred, 1 refused")
            || exc.text.starts_with("1 armed, 1 deferred, 1 refused"),
        "{}",
        exc.text
    );
    let outcomes = exc.json()["outcomes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let ids: Vec<&str> = outcomes.iter().filter_map(|o| o["id"].as_str()).collect();
    assert_eq!(ids.len(), 2, "{}", exc.text);
    assert!(ids.iter().all(|i| i.starts_with("exc_")), "{ids:?}");
    assert!(
        outcomes.iter().any(|o| o["entry"] == "java.lang.Error"),
        "{}",
        exc.text
    );
    assert!(
        exc.text
            .contains("java.lang.*Error: 1 loaded exception class armed")
            && exc
                .text
                .contains("more covered as subclasses of a matched one"),
        "{}",
        exc.text
    );
    assert!(
        exc.text.contains(
            "NoSuch*Thing: REFUSED [NO_MATCH] no loaded exception class matches NoSuch*Thing"
        ),
        "{}",
        exc.text
    );
    // A wildcard over unrelated classes is bounded by max_classes.
    let capped = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "exception", "class_pattern": "java.lang.Illegal*", "max_classes": 1, "trace": true, "trace_frames": 0}),
    );
    assert!(
        capped
            .text
            .contains("left out by max_classes 1: java.lang.Illegal"),
        "{}",
        capped.text
    );
    // The IllegalStateException entry fires on its own.
    let ise = outcomes
        .iter()
        .find(|o| o["entry"] == "java.lang.IllegalStateException")
        .and_then(|o| o["id"].as_str())
        .expect("the IllegalStateException outcome")
        .to_string();
    let t = traces_of(&server, &ise, 1);
    assert!(
        detail(&t[0], "exception")
            .is_some_and(|e| e.starts_with("java.lang.IllegalStateException @0x")),
        "{}",
        t[0]
    );

    let exits = server.call(
        "debug_set_stop",
        json!({"kind": "method_exit", "class_pattern": ["Orders", "Ord*ers", "NoSuchClass"], "method": "size", "trace_frames": 0}),
    );
    assert!(!exits.is_error, "{}", exits.text);
    assert!(
        exits.text.starts_with("2 armed, 0 deferred, 1 refused"),
        "{}",
        exits.text
    );
    assert!(
        exits.text.contains("one * at the start or the end"),
        "{}",
        exits.text
    );
    // A method the loaded class does not have is warned about at once.
    let typo = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "method_exit", "class_pattern": "Orders", "method": "sise"}),
    );
    assert!(
        typo.text.contains("WARNING: Orders has no method \"sise\"") && typo.text.contains("size"),
        "{}",
        typo.text
    );
    assert_all_running(&server);
}

#[test]
fn event_tools_refuse_unknown_ids_and_read_a_family_by_its_id() {
    let (_jvm, server) = attached_orders();
    let started = std::time::Instant::now();
    let wait = server.call(
        "debug_wait_for_event",
        json!({"bp_id": "bp_99", "timeout_ms": 20000}),
    );
    assert!(wait.is_error, "{}", wait.text);
    assert!(
        wait.text.starts_with("[UNKNOWN_STOP_POINT]"),
        "{}",
        wait.text
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "waited for a typo"
    );
    let traces = server.call("debug_get_traces", json!({"bp_id": "bp_99"}));
    assert!(
        traces.text.starts_with("[UNKNOWN_STOP_POINT]"),
        "{}",
        traces.text
    );

    let family = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Ord*", "method": "size", "trace": true, "trace_frames": 0, "trace_locals": "none"}),
    );
    let fid = family.json()["outcomes"][0]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(fid.starts_with("bpset_"), "{}", family.text);
    // Waiting on the family returns a member's snapshot.
    let next = ok(
        &server,
        "debug_wait_for_event",
        json!({"bp_id": fid, "timeout_ms": 20000}),
    );
    // A snapshot ("#seq stop …"), not an event line.
    assert!(
        next.text.starts_with('#') && next.text.contains(" bp_"),
        "{}",
        next.text
    );
    let t = traces_of(&server, &fid, 5);
    assert!(
        t.iter().all(|s| s["location"]
            .as_str()
            .is_some_and(|l| l.starts_with("Orders.size:"))),
        "{t:?}"
    );
    // clear:true removes every match, and says how many were not shown.
    let cleared = ok(
        &server,
        "debug_get_traces",
        json!({"bp_id": fid, "limit": 1, "clear": true}),
    );
    let n = cleared.json()["cleared"].as_u64().unwrap_or(0);
    assert!(n >= 5, "{}", cleared.text);
    assert!(
        cleared.text.contains(&format!(
            "({} of them not shown: older than the limit)",
            n - 1
        )),
        "{}",
        cleared.text
    );
    assert_all_running(&server);
}

#[test]
fn expression_errors_read_as_text_and_a_field_watch_lists_no_locations() {
    let (_jvm, server) = attached_orders();
    let bad = server.call(
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Orders", "line": line("place-add"), "condition": "qty +"}),
    );
    assert!(bad.is_error, "{}", bad.text);
    assert!(
        bad.text.contains(
            "condition does not parse: column 6: expected an expression, found end of input"
        ),
        "{}",
        bad.text
    );
    assert!(!bad.text.contains("ParseError"), "{}", bad.text);
    let bad = server.call(
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Orders", "line": line("place-add"), "trace": true, "trace_expr": ["qty", "count =="]}),
    );
    assert!(
        bad.text.contains("does not parse: column") && !bad.text.contains("ParseError"),
        "{}",
        bad.text
    );
    let watch = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "field", "class_pattern": "Orders", "field_name": "count", "trace": true, "trace_frames": 0}),
    );
    assert!(
        watch.text.contains("ARMED, 1 classloader"),
        "{}",
        watch.text
    );
    assert!(!watch.text.contains("location"), "{}", watch.text);
    assert_all_running(&server);
}

#[test]
fn panic_releases_the_threads_the_agent_holds_and_names_them() {
    let (_jvm, server) = attached_orders();
    let threads = ok(&server, "debug_list_threads", json!({}));
    let id = threads
        .text
        .lines()
        .find(|l| l.contains("\"orders-a\""))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("orders-a in {}", threads.text))
        .to_string();
    ok(
        &server,
        "debug_thread",
        json!({"kind": "suspend", "thread_id": id}),
    );
    ok(
        &server,
        "debug_thread",
        json!({"kind": "suspend", "thread_id": id}),
    );
    ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Orders", "method": "size", "trace": true}),
    );
    let panic = ok(&server, "debug_panic", json!({}));
    assert!(
        panic.text.contains("Released 1 thread debug_thread held:")
            && panic.text.contains("\"orders-a\""),
        "{}",
        panic.text
    );
    // Verified: no thread is left suspended.
    assert!(panic.text.contains("Verified: all"), "{}", panic.text);
    assert!(!panic.text.contains("still suspended"), "{}", panic.text);
    let state = ok(&server, "debug_get_last_event", json!({}));
    assert!(state.text.contains("[suspended] no"), "{}", state.text);
    // orders-a runs again: its next size() exit is seen.
    let exits = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "method_exit", "class_pattern": "Orders", "method": "size", "thread_id": id, "trace_frames": 0}),
    );
    let mexit = first_id(&exits);
    traces_of(&server, &mexit, 1);
    assert_all_running(&server);
}

#[test]
fn update_replaces_trace_expressions_in_place_and_count_with_condition_is_explained() {
    let (_jvm, server) = attached_orders();
    // Suspension-free at first: thread and location only.
    let armed = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Orders", "line": line("place-add"), "trace": true,
               "trace_frames": 0, "trace_locals": "none", "trace_max_hits": 0}),
    );
    let bp = first_id(&armed);
    let updated = ok(
        &server,
        "debug_update_stop_point",
        json!({"id": bp, "trace_expr": ["qty", "qty > 1", "before", "this.name", "c"]}),
    );
    assert!(
        updated
            .text
            .contains("trace_expr keeps the first 4; dropped: c"),
        "{}",
        updated.text
    );
    let since = ok(&server, "debug_get_traces", json!({"bp_id": bp})).json()["last_seq"]
        .as_u64()
        .unwrap_or(0);
    let with_exprs = poll_until_msg(WAIT, "a snapshot with trace_expr", || {
        let r = ok(
            &server,
            "debug_get_traces",
            json!({"bp_id": bp, "since": since}),
        );
        r.json()["traces"].as_array().and_then(|t| {
            t.iter()
                .find(|s| detail(s, "expr[0] qty").is_some())
                .cloned()
        })
    });
    assert!(
        matches!(
            detail(&with_exprs, "expr[1] qty > 1"),
            Some("true" | "false")
        ),
        "{with_exprs}"
    );
    // [] removes them again; a suspending stop point cannot take any.
    let cleared = ok(
        &server,
        "debug_update_stop_point",
        json!({"id": bp, "trace_expr": []}),
    );
    assert!(!cleared.text.contains("expr"), "{}", cleared.text);
    let refused = server.call(
        "debug_update_stop_point",
        json!({"id": bp, "trace": false, "trace_expr": ["qty"]}),
    );
    assert!(
        refused.is_error
            && refused
                .text
                .contains("trace_expr needs a traced stop point"),
        "{}",
        refused.text
    );
    // hit_count counts hits, not matches: the arm reply says so.
    let counted = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Orders", "method": "size", "trace": true,
               "hit_count": 3, "condition": "count > 0"}),
    );
    assert!(
        counted.text.contains("hit_count counts hits, not matches"),
        "{}",
        counted.text
    );
    // Spent on its 3rd hit, whatever the condition answered.
    let counted = first_id(&counted);
    poll_until_msg(WAIT, "the counted stop point spent", || {
        (point(&server, &counted)["state"] == "spent").then_some(())
    });
    let listing = ok(&server, "debug_list_stop_points", json!({}));
    assert!(
        listing.text.contains(&format!(
            "{counted} line Orders.size (entry) — SPENT: hit_count reached"
        )),
        "{}",
        listing.text
    );
    // The pending count says it includes the event shown (waited for by
    // its id: a wait without one also returns the traced snapshots).
    let thrown = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "exception", "class_pattern": "java.lang.IllegalStateException", "hit_count": 1}),
    );
    ok(
        &server,
        "debug_wait_for_event",
        json!({"bp_id": first_id(&thrown), "timeout_ms": 15000}),
    );
    let last = ok(&server, "debug_get_last_event", json!({}));
    assert!(
        last.text.contains("[pending] 1 buffered (the one shown)"),
        "{}",
        last.text
    );
    ok(&server, "debug_continue", json!({}));
    assert_all_running(&server);
}

#[test]
fn a_field_watch_wildcard_arms_the_loaded_classes_declaring_the_field() {
    let (_jvm, server) = attached_orders();
    let armed = server.call(
        "debug_set_stop",
        json!({"kind": "field", "class_pattern": ["Ord*", "NoSuch*"], "field_name": "count",
               "trace": true, "trace_frames": 0, "trace_max_hits": 3}),
    );
    assert!(
        armed.text.starts_with("1 armed, 0 deferred, 1 refused"),
        "{}",
        armed.text
    );
    assert!(
        armed
            .text
            .contains("Ord*: 1 loaded class declaring count watched"),
        "{}",
        armed.text
    );
    assert!(
        armed.text.contains("NoSuch*: REFUSED [NO_MATCH]"),
        "{}",
        armed.text
    );
    let outcomes = armed.json()["outcomes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let watch = outcomes
        .iter()
        .find(|o| o["entry"] == "Orders")
        .and_then(|o| o["id"].as_str())
        .unwrap_or_else(|| panic!("Orders watched: {}", armed.text))
        .to_string();
    assert!(watch.starts_with("watch_"), "{watch}");
    let t = traces_of(&server, &watch, 1);
    assert!(
        detail(&t[0], "change").is_some_and(|c| c.contains(" → ")),
        "{}",
        t[0]
    );
    let none = server.call(
        "debug_set_stop",
        json!({"kind": "field", "class_pattern": "Ord*", "field_name": "nosuch"}),
    );
    assert!(
        none.is_error
            && none
                .text
                .contains("no loaded class matching Ord* declares a field \"nosuch\""),
        "{}",
        none.text
    );
    assert_all_running(&server);
}

#[test]
fn an_exported_set_re_arms_by_replaying_its_calls() {
    let (_jvm, server) = attached_orders();
    let threads = ok(&server, "debug_list_threads", json!({}));
    let orders_a = threads
        .text
        .lines()
        .find(|l| l.contains("\"orders-a\""))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("orders-a in {}", threads.text))
        .to_string();
    let line_stop = first_id(&ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Orders", "line": line("place-add"), "trace": true,
               "trace_max_hits": 5000, "trace_expr": ["qty"], "thread_id": orders_a}),
    ));
    ok(
        &server,
        "debug_set_stop",
        json!({"kind": "exception", "class_pattern": "java.lang.IllegalStateException", "condition": "qty < 0", "uncaught": false,
               "trace": true, "trace_frames": 0}),
    );
    let exits = first_id(&ok(
        &server,
        "debug_set_stop",
        json!({"kind": "method_exit", "class_pattern": "Orders", "method": "describe", "trace_frames": 0}),
    ));
    ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Ord*", "method": "size", "trace": true, "trace_frames": 0, "trace_locals": "none"}),
    );
    ok(
        &server,
        "debug_update_stop_point",
        json!({"kind": "toggle", "id": exits, "enabled": false}),
    );
    traces_of(&server, &line_stop, 2);
    let exported = ok(&server, "debug_list_stop_points", json!({"export": true}));
    let calls = exported.json()["export"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    // The family is one call; its member is not repeated.
    assert_eq!(calls.len(), 4, "{}", exported.text);
    assert!(exported.text.contains("```json"), "{}", exported.text);
    assert!(
        exported.text.contains(&format!(
            "{line_stop}: dropped thread_id (an id of this JVM only)"
        )),
        "{}",
        exported.text
    );
    let line_call = calls
        .iter()
        .find(|c| c["from"] == line_stop.as_str())
        .expect("the line stop exported");
    let left = line_call["args"]["trace_max_hits"].as_u64().unwrap_or(0);
    assert!((1..=4998).contains(&left), "the budget left: {line_call}");
    assert_eq!(line_call["args"]["trace_expr"], json!(["qty"]));
    assert!(line_call["args"].get("thread_id").is_none(), "{line_call}");
    let disabled = calls
        .iter()
        .find(|c| c["from"] == exits.as_str())
        .expect("the method exit exported");
    assert_eq!(disabled["state"], "disabled", "{disabled}");
    assert!(
        calls.iter().any(|c| c["args"]["class_pattern"] == "Ord*"
            && c["args"]["method"] == "size"
            && c["args"]["max_classes"] == 20),
        "{}",
        exported.text
    );
    // Cleared, then armed again from the set alone.
    ok(&server, "debug_panic", json!({}));
    for c in calls.iter().filter(|c| c["state"].is_null()) {
        let tool = c["tool"].as_str().unwrap_or_default();
        ok(&server, tool, c["args"].clone());
    }
    let again = ok(&server, "debug_list_stop_points", json!({"export": true}));
    let again = again.json()["export"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(again.len(), 3, "{again:?}");
    for c in &again {
        let before = calls
            .iter()
            .find(|b| {
                b["tool"] == c["tool"]
                    && b["args"]["kind"] == c["args"]["kind"]
                    && b["args"]["class_pattern"] == c["args"]["class_pattern"]
            })
            .unwrap_or_else(|| panic!("{c} was not in the export"));
        // The same definition; only the budget moves on as hits land.
        let without_budget = |v: &Value| {
            let mut v = v.clone();
            if let Some(o) = v.as_object_mut() {
                o.remove("trace_max_hits");
            }
            v
        };
        assert_eq!(
            without_budget(&before["args"]),
            without_budget(&c["args"]),
            "re-armed as exported"
        );
    }
    assert_all_running(&server);
}

#[test]
fn captured_values_are_cut_at_capture_time_and_the_ceiling_is_reported() {
    let (_jvm, server) = attached_orders();
    let armed = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "method_exit", "class_pattern": "Orders", "method": "label", "trace_frames": 0,
               "trace_locals": "s", "trace_max_length": 4, "trace_max_hits": 2}),
    );
    for t in traces_of(&server, &first_id(&armed), 2) {
        // A local keeps trace_max_length characters and says how many it cut.
        assert!(
            local(&t, "s").is_some_and(|s| s.starts_with("\"orde…(+") && s.ends_with(" chars)")),
            "{t}"
        );
        // The returned value keeps at least 200.
        assert!(
            detail(&t, "returned").is_some_and(|r| r.starts_with("\"order-") && !r.contains('…')),
            "{t}"
        );
    }
    let clamped = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Orders", "method": "size", "trace": true, "trace_max_length": 9000}),
    );
    assert!(
        clamped
            .text
            .contains("trace_max_length 9000 clamped to 4000"),
        "{}",
        clamped.text
    );
    assert_all_running(&server);
}
