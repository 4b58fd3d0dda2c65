//! Where a slow call's time went (JDK 17 and Temurin 25): `callees: true`
//! on a method exit times each call the method makes, by call site, and
//! two tool calls (arm, then read the traces) name the slow callee with a
//! share within 10 points of the fixture's truth; a call in a loop is one
//! site with its count, a callee that throws keeps its time and is said to
//! have thrown; grouping keeps the callees; a class without a method, or
//! a method that makes no calls, is refused saying what callees takes;
//! disconnect gives the class its bytecode back.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::{WAIT, attach_on, first_id, instrumented, local_i64, server};
use crate::support::java::{Jvm, JvmOpts, temurin25_required};
use crate::support::poll_until_msg;

const CHECKOUT: &str = "slow.Checkout";
/// The fixture's truth for a slow id: find sleeps 120 ms; the call also
/// sleeps 5 × 4 ms in `price` and 10 ms in `coupon`.
pub(crate) const FIND_SHARE: f64 = 120.0 / (120.0 + 5.0 * 4.0 + 10.0) * 100.0;

/// The value of detail `key` of snapshot `t`.
fn detail(t: &Value, key: &str) -> Option<String> {
    t["details"]
        .as_array()?
        .iter()
        .find(|d| d["key"] == key)
        .and_then(|d| d["value"].as_str())
        .map(str::to_string)
}

/// The share in `(N %)` right after `what` in a callees line.
pub(crate) fn share_of(line: &str, what: &str) -> Option<f64> {
    let part = line.split("; ").find(|p| p.starts_with(what))?;
    let open = part.find('(')?;
    let close = part[open..].find(" %)")?;
    part[open + 1..open + close].parse().ok()
}

fn where_the_time_went(java_home: Option<PathBuf>) {
    let jvm = Jvm::start(
        CHECKOUT,
        JvmOpts {
            java_home,
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("checkout started", WAIT);
    let server = server();
    attach_on(&server, jvm.port(), json!({}));

    // What it takes: one class and one method that makes calls.
    let no_method = server
        .call(
            "debug_set_stop",
            json!({"kind": "method_exit", "class_pattern": CHECKOUT, "callees": true}),
        )
        .expect_tool_error();
    assert!(
        no_method.text.contains("callees takes one class") && no_method.text.contains("one method"),
        "{}",
        no_method.text
    );
    let no_calls = server
        .call(
            "debug_set_stop",
            json!({"kind": "method_exit", "class_pattern": "slow.Store", "method": "size",
                   "callees": true}),
        )
        .expect_tool_error();
    assert!(
        no_calls.text.contains("makes no calls") && no_calls.text.contains("Next:"),
        "{}",
        no_calls.text
    );
    assert!(!instrumented(&server, "slow.Store"));

    // Two calls: arm, then read where the slow calls' time went.
    let armed = server
        .call(
            "debug_set_stop",
            json!({"kind": "method_exit", "class_pattern": CHECKOUT, "method": "checkout",
                   "min_duration_ms": 100, "callees": true}),
        )
        .expect_ok();
    assert!(armed.text.contains("PROBE:"), "{}", armed.text);
    let id = first_id(&armed);
    let (snapshot, text) = poll_until_msg(WAIT, "a slow checkout's callees", || {
        let r = server
            .call(
                "debug_get_traces",
                json!({"bp_id": id, "limit": 5, "compact": false}),
            )
            .expect_ok();
        let t = r.json()["traces"].as_array()?.first()?.clone();
        Some((t, r.text))
    });
    let callees = detail(&snapshot, "callees").unwrap_or_else(|| panic!("callees: {text}"));
    assert_eq!(local_i64(&snapshot, "id").map(|i| i % 7), Some(3), "{text}");
    assert!(
        callees.starts_with("Store.find ") && callees.contains(" at line "),
        "the slow callee leads: {callees}"
    );
    let share = share_of(&callees, "Store.find").unwrap_or_else(|| panic!("{callees}"));
    assert!(
        (share - FIND_SHARE).abs() <= 10.0,
        "share {share} % against the truth {FIND_SHARE:.1} %: {callees}"
    );
    assert!(
        callees.contains("price ×5 "),
        "a loop is one site: {callees}"
    );
    let coupon = callees
        .split("; ")
        .find(|p| p.starts_with("coupon "))
        .unwrap_or_else(|| panic!("{callees}"));
    assert!(
        coupon.ends_with(", threw") && !coupon.starts_with("coupon 0"),
        "a callee that threw keeps its time: {callees}"
    );
    assert!(callees.contains("; own code "), "{callees}");

    // Grouped like any snapshot: each group's example keeps its callees.
    let grouped = server
        .call("debug_get_traces", json!({"bp_id": id, "group_by": ["id"]}))
        .expect_ok();
    assert!(
        grouped.text.contains("callees (mean of ") && grouped.text.contains(": Store.find "),
        "{}",
        grouped.text
    );

    // Disconnect gives the class its own bytecode back.
    assert!(instrumented(&server, CHECKOUT));
    server.call("debug_disconnect", json!({})).expect_ok();
    let again = super::server();
    attach_on(&again, jvm.listening_port(2, WAIT), json!({}));
    assert!(!instrumented(&again, CHECKOUT), "disconnect restored it");
    assert!(jvm.is_alive());
}

#[test]
fn where_a_slow_calls_time_went_names_the_slow_callee_and_its_share_jdk17() {
    where_the_time_went(None);
}

#[test]
fn where_a_slow_calls_time_went_names_the_slow_callee_and_its_share_temurin25() {
    where_the_time_went(Some(temurin25_required()));
}
