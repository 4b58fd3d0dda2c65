//! Conditions and trace expressions against a real JVM: a false condition
//! holds only the hit thread, a true one suspends, and event bindings
//! (`newValue`, `exception`) reach the evaluator.

use serde_json::json;

use super::{
    WAIT, assert_all_running, attached_orders, detail, first_id, line, ok, point, traces_of,
};
use crate::support::java::{Jvm, JvmOpts, line_of};
use crate::support::poll_until_msg;
use crate::support::text::event_field;

#[test]
fn a_false_condition_holds_only_the_hit_thread_and_a_true_one_suspends() {
    let (jvm, server) = attached_orders();
    let armed = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Orders", "line": line("loop-label"), "condition": "i < 0"}),
    );
    let id = first_id(&armed);
    assert_eq!(
        point(&server, &id)["policy"],
        "EVENTTHREAD",
        "{}",
        armed.text
    );
    let p = poll_until_msg(WAIT, "false conditions", || {
        let p = point(&server, &id);
        (p["condition_false"].as_u64().unwrap_or(0) >= 20).then_some(p)
    });
    assert_eq!(p["condition_errors"], 0, "{p}");
    let before = jvm.line_count();
    poll_until_msg(WAIT, "the application to run on", || {
        (jvm.line_count() > before).then_some(())
    });
    let none = ok(&server, "debug_get_last_event", json!({}));
    assert!(none.text.starts_with("No event yet"), "{}", none.text);
    // A condition that holds on some hits escalates to a VM suspend.
    ok(
        &server,
        "debug_update_stop_point",
        json!({"id": id, "condition": "i % 40 == 7 && o.name == \"b\""}),
    );
    let hit = ok(
        &server,
        "debug_wait_for_event",
        json!({"timeout_ms": 15000}),
    );
    let e = |key| event_field(&hit.text, key).unwrap_or_default();
    assert_eq!(e("suspended"), "all", "{}", hit.text);
    assert_eq!(e("thread_name"), "orders-b", "{}", hit.text);
    assert!(
        hit.text.contains("matched on the hit thread"),
        "{}",
        hit.text
    );
    ok(
        &server,
        "debug_update_stop_point",
        json!({"kind": "clear", "id": id}),
    );
    ok(&server, "debug_continue", json!({}));
    // A name no armed location can resolve is refused when arming, with
    // the locals in scope and the column.
    let refused = server.call(
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Orders", "line": line("loop-label"), "condition": "qty > 0 && nosuch > 1"}),
    );
    assert!(refused.is_error, "{}", refused.text);
    assert!(
        refused.text.starts_with("[UNKNOWN_NAME]"),
        "{}",
        refused.text
    );
    for expected in [
        "`nosuch`",
        "column 12",
        "Orders.loop:",
        "locals in scope there:",
        "qty",
        "i",
    ] {
        assert!(
            refused.text.contains(expected),
            "{expected}: {}",
            refused.text
        );
    }
    // A condition that cannot be evaluated is reported, not guessed.
    let bad = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Orders", "line": line("loop-label"), "condition": "o.nosuch > 1"}),
    );
    let bad_id = first_id(&bad);
    let err = ok(
        &server,
        "debug_wait_for_event",
        json!({"timeout_ms": 15000, "bp_id": bad_id}),
    );
    assert_eq!(
        event_field(&err.text, "kind").as_deref(),
        Some("condition-error"),
        "{}",
        err.text
    );
    assert!(err.text.contains("nosuch"), "{}", err.text);
    assert_all_running(&server);
}

#[test]
fn trace_expressions_and_event_bindings_are_evaluated_per_hit() {
    let (_jvm, server) = attached_orders();
    let armed = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Orders", "line": line("loop-label"), "trace": true, "trace_max_hits": 4,
               "trace_locals": "none", "engine": "wire", "trace_expr": ["o.name", "qty > 0", "o.nosuch"]}),
    );
    let t = traces_of(&server, &first_id(&armed), 4);
    for s in &t {
        let name = detail(s, "expr[0] o.name").unwrap_or("");
        assert!(name == "\"a\"" || name == "\"b\"", "{s}");
        assert!(
            matches!(detail(s, "expr[1] qty > 0"), Some("true" | "false")),
            "{s}"
        );
        assert!(
            detail(s, "expr[2] o.nosuch").is_some_and(|e| e.starts_with("error:")),
            "{s}"
        );
    }
    // newValue: the incoming value of a field write.
    let watch = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "field", "class_pattern": "Orders", "field_name": "count", "condition": "newValue % 2 == 0",
               "trace": true, "trace_max_hits": 5, "trace_frames": 0}),
    );
    for s in traces_of(&server, &first_id(&watch), 5) {
        let change = detail(&s, "change").unwrap_or("");
        let new: i64 = change
            .rsplit(' ')
            .next()
            .and_then(|n| n.parse().ok())
            .expect("int");
        assert_eq!(new % 2, 0, "{change}");
    }
    assert_all_running(&server);
}

/// A condition that cannot be evaluated would hold every hit and answer
/// nothing: after 20 errors in a row the stop point disables itself, says
/// so with its last error, and costs nothing more; an update starts over.
#[test]
fn a_condition_that_keeps_failing_disables_its_stop_point() {
    let (jvm, server) = attached_orders();
    let armed = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Orders", "line": line("loop-label"), "trace": true,
               "trace_max_hits": 1, "condition": "o.nosuchvar > 1"}),
    );
    let id = first_id(&armed);
    let p = poll_until_msg(WAIT, "the stop point to disable itself", || {
        let p = point(&server, &id);
        (p["stopped_by_errors"] == true && p["state"] == "disabled").then_some(p)
    });
    let errors = p["condition_errors"].as_u64().unwrap_or(0);
    assert!(errors >= 20, "{p}");
    assert!(p["last_error"].to_string().contains("nosuchvar"), "{p}");
    let listing = ok(&server, "debug_list_stop_points", json!({}));
    assert!(
        listing
            .text
            .contains("DISABLED by itself after 20 condition errors"),
        "{}",
        listing.text
    );
    // Disabled means disarmed: the program runs on and no error is added
    // (a hit already on its way when the request was cleared may still
    // count one, so the count is taken once the program has run on).
    let before = jvm.line_count();
    poll_until_msg(WAIT, "the application to run on", || {
        (jvm.line_count() > before + 2).then_some(())
    });
    let settled = point(&server, &id)["condition_errors"].clone();
    assert!(settled.as_u64().unwrap_or(0) >= errors, "{settled}");
    let before = jvm.line_count();
    poll_until_msg(WAIT, "the application to run on", || {
        (jvm.line_count() > before + 2).then_some(())
    });
    assert_eq!(point(&server, &id)["condition_errors"], settled);
    // A new condition replaces the old errors.
    ok(
        &server,
        "debug_update_stop_point",
        json!({"id": id, "condition": "i < 0"}),
    );
    let p = point(&server, &id);
    assert!(
        p["last_error"].is_null() && p["stopped_by_errors"] == false,
        "{p}"
    );
    assert_all_running(&server);
}

/// Two threads pass a suspend-all conditional line at the same moment,
/// round after round: the VM stays suspended once per agent stop (a
/// second escalation is undone), so a getter invoked on the reported
/// thread runs every time.
#[test]
fn a_second_suspend_all_hit_does_not_stack_and_invokes_still_run() {
    let jvm = Jvm::start("Stacked", JvmOpts::default());
    jvm.wait_for_line("lanes ready", WAIT);
    let server = super::server();
    super::attach(&server, &jvm);
    let args = json!({"kind": "line", "class_pattern": "Stacked", "line": line_of("Stacked.java", "together"),
                      "condition": "o.id % 2 == 0"});
    let id = first_id(&ok(&server, "debug_set_stop", args));
    for round in 0..20 {
        // A hit the last continue released before it was read says so;
        // the next one holds its thread.
        let hit = poll_until_msg(WAIT, "a hit that holds its thread", || {
            let hit = ok(
                &server,
                "debug_wait_for_event",
                json!({"timeout_ms": 15000, "bp_id": id}),
            );
            if event_field(&hit.text, "suspended").as_deref() == Some("all") {
                return Some(hit);
            }
            assert!(hit.text.contains("released by a resume"), "{}", hit.text);
            None
        });
        // Whatever passed with it, the VM is held once.
        poll_until_msg(WAIT, "every suspend count back to one", || {
            let t = ok(&server, "debug_list_threads", json!({})).text;
            (!t.contains("suspended x2") && !t.contains("suspended x3")).then_some(())
        });
        let thread = event_field(&hit.text, "thread").unwrap_or_default();
        let got = server.call(
            "debug_evaluate",
            json!({"expression": "o.getCustomer()", "thread_id": thread}),
        );
        assert!(
            !got.is_error && got.text.contains("\"customer-"),
            "round {round}: {}\n{}",
            got.text,
            hit.text
        );
        ok(&server, "debug_continue", json!({}));
    }
    ok(
        &server,
        "debug_update_stop_point",
        json!({"kind": "clear", "id": id}),
    );
    ok(&server, "debug_continue", json!({}));
    assert_all_running(&server);
}

/// Before the fix, when two threads passed a suspend-all conditional line
/// at once, an evaluation without thread_id failed about one time in six
/// ("names of locals and fields need a frame") or read the other thread's
/// frame: the wait had returned a hit a resume had already released, and
/// the evaluation took whichever event still held a thread. Now the wait
/// passes over released hits, and an evaluation without thread_id runs in
/// the thread of the hit just read.
#[test]
fn an_evaluation_without_a_thread_reads_the_hit_just_waited_for() {
    let jvm = Jvm::start("Stacked", JvmOpts::default());
    jvm.wait_for_line("lanes ready", WAIT);
    let server = super::server();
    super::attach(&server, &jvm);
    let args = json!({"kind": "line", "class_pattern": "Stacked", "line": line_of("Stacked.java", "together"),
                      "condition": "o.id % 2 == 0"});
    let id = first_id(&ok(&server, "debug_set_stop", args));
    for round in 0..12 {
        let hit = ok(
            &server,
            "debug_wait_for_event",
            json!({"timeout_ms": 15000, "bp_id": id}),
        );
        assert_eq!(
            event_field(&hit.text, "suspended").as_deref(),
            Some("all"),
            "{}",
            hit.text
        );
        let lane = event_field(&hit.text, "thread").unwrap_or_default();
        let got = server.call("debug_evaluate", json!({"expression": "o.id"}));
        assert!(!got.is_error, "round {round}: {}\n{}", got.text, hit.text);
        // lane-N carries id N.
        let want = format!(
            "o.id = {}",
            hit.text
                .split("\"lane-")
                .nth(1)
                .and_then(|r| r.get(..1))
                .unwrap_or("?")
        );
        assert!(
            got.text.starts_with(&want),
            "round {round} ({lane}): {}\n{}",
            got.text,
            hit.text
        );
        ok(&server, "debug_continue", json!({}));
    }
    ok(
        &server,
        "debug_update_stop_point",
        json!({"kind": "clear", "id": id}),
    );
    ok(&server, "debug_continue", json!({}));
    assert_all_running(&server);
}

/// `frame[1].x` reads a caller's local on every hit: label(n) is called
/// by loop(o) as label(i), so `frame[1].i == n` holds on each snapshot.
/// A caller's missing local fails that expression with the caller's
/// locals; `frame[0].x` is checked like a bare name when arming.
#[test]
fn trace_expressions_read_a_caller_frames_locals() {
    let (_jvm, server) = attached_orders();
    let refused = server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": "Orders", "line": line("label"), "trace": true,
                   "engine": "wire", "trace_expr": ["frame[0].nosuch"]}),
        )
        .expect_tool_error();
    assert!(refused.text.contains("frame[0].nosuch"), "{}", refused.text);
    let armed = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Orders", "line": line("label"), "trace": true, "trace_max_hits": 6,
               "trace_locals": "none", "engine": "wire",
               "trace_expr": ["frame[1].i == n", "frame[1].o.name", "frame[1].nosuch", "frame[0].n == n"]}),
    );
    for s in traces_of(&server, &first_id(&armed), 6) {
        assert_eq!(detail(&s, "expr[0] frame[1].i == n"), Some("true"), "{s}");
        let name = detail(&s, "expr[1] frame[1].o.name").unwrap_or("");
        assert!(name == "\"a\"" || name == "\"b\"", "{s}");
        let missing = detail(&s, "expr[2] frame[1].nosuch").unwrap_or("");
        assert!(
            missing.starts_with("error:") && missing.contains("qty"),
            "names the caller's locals: {s}"
        );
        assert_eq!(detail(&s, "expr[3] frame[0].n == n"), Some("true"), "{s}");
    }
    assert_all_running(&server);
}
