//! Wildcard families and lists against real JVMs: one outcome per entry,
//! a family taking classes loaded later up to max_classes, and a cleared
//! member freeing a slot.

use serde_json::{Value, json};

use super::{WAIT, assert_all_running, attach, attached_orders, ok, orders, server, traces_of};
use crate::support::mcp::Server;
use crate::support::poll_until_msg;

/// Family `id` as debug_list_stop_points lists it.
fn family(server: &Server, id: &str) -> Value {
    let l = ok(server, "debug_list_stop_points", json!({}));
    l.json()["families"]
        .as_array()
        .and_then(|fs| fs.iter().find(|f| f["id"] == id).cloned())
        .unwrap_or_else(|| panic!("{id} not listed: {}", l.text))
}

#[test]
fn a_full_family_parks_its_watch_and_a_cleared_member_frees_a_slot() {
    let dir = tempfile::tempdir().expect("tempdir");
    let jvm = orders(vec![dir.path().display().to_string()]);
    let server = server();
    attach(&server, &jvm);
    // Orders has no `run`; OrdersPlugin (not loaded yet) has.
    let armed = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Orders*", "method": "run", "max_classes": 1, "trace": true, "trace_frames": 0, "trace_locals": "none"}),
    );
    let fid = armed.json()["outcomes"][0]["id"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let family = family(&server, &fid);
    assert_eq!(
        family["members"].as_array().map(Vec::len),
        Some(0),
        "{}",
        armed.text
    );
    assert_eq!(family["watch"], "watching");
    std::fs::write(dir.path().join("load-1"), b"").expect("trigger");
    let f = poll_until_msg(WAIT, "the plugin to join the family", || {
        let l = ok(&server, "debug_list_stop_points", json!({}));
        let f = l.json()["families"][0].clone();
        (f["members"].as_array().map(Vec::len) == Some(1)).then_some(f)
    });
    assert_eq!(f["members"][0]["class"], "OrdersPlugin", "{f}");
    assert_eq!(f["joined_later"], 1, "{f}");
    assert_eq!(f["watch"], "parked", "full at max_classes 1: {f}");
    let member = f["members"][0]["id"].as_str().unwrap_or("").to_string();
    traces_of(&server, &member, 2);
    let cleared = ok(
        &server,
        "debug_update_stop_point",
        json!({"kind": "clear", "id": member}),
    );
    assert!(
        cleared
            .text
            .contains("watches for new matching classes again"),
        "{}",
        cleared.text
    );
    let l = ok(&server, "debug_list_stop_points", json!({}));
    assert_eq!(l.json()["families"][0]["watch"], "watching", "{}", l.text);
    ok(
        &server,
        "debug_update_stop_point",
        json!({"kind": "clear", "id": fid}),
    );
    assert_all_running(&server);
}

#[test]
fn wildcard_families_and_lists_report_each_entry() {
    let (_jvm, server) = attached_orders();
    let listed = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": ["Orders", "NoSuchClass", "Ord*"], "method": "size", "trace": true, "trace_frames": 0, "trace_locals": "none"}),
    );
    assert!(
        listed.text.starts_with("2 armed, 1 deferred, 0 refused"),
        "{}",
        listed.text
    );
    let outcomes = listed.json()["outcomes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let fid = outcomes
        .iter()
        .find(|o| o["entry"] == "Ord*")
        .and_then(|o| o["id"].as_str())
        .expect("a family outcome")
        .to_string();
    assert!(fid.starts_with("bpset_"), "{}", listed.text);
    let family = family(&server, &fid);
    assert_eq!(family["members"][0]["class"], "Orders", "{family}");
    assert_eq!(family["watch"], "watching");
    let member = family["members"][0]["id"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let t = traces_of(&server, &member, 3);
    assert_eq!(
        t[0]["location"]
            .as_str()
            .map(|l| l.starts_with("Orders.size:")),
        Some(true)
    );
    let toggled = ok(
        &server,
        "debug_update_stop_point",
        json!({"kind": "toggle", "id": fid}),
    );
    assert!(
        toggled.text.starts_with(&format!("{fid} disabled.")),
        "{}",
        toggled.text
    );
    let listing = ok(&server, "debug_list_stop_points", json!({}));
    assert!(listing.text.contains("DISABLED"), "{}", listing.text);
    let cleared = ok(
        &server,
        "debug_update_stop_point",
        json!({"kind": "clear", "id": fid}),
    );
    assert!(
        cleared
            .text
            .starts_with(&format!("Cleared {fid} and its 1 members")),
        "{}",
        cleared.text
    );
    assert_all_running(&server);
}
