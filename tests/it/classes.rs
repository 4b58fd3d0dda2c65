//! The class tools against a real JVM through the real binary: a listing
//! filtered by prefix, suffix and substring, paged, with class-loader copies
//! counted, and arrays only on request. Nothing is suspended by any of it.

use std::time::Duration;

use serde_json::json;

use crate::support::java::{Jvm, JvmOpts};
use crate::support::mcp::Server;

fn attached(jvm: &Jvm) -> Server {
    let server = Server::spawn();
    server.initialize();
    server
        .call("debug_attach", json!({"port": jvm.port()}))
        .expect_ok();
    server
}

fn names(reply: &serde_json::Value) -> Vec<String> {
    reply["classes"]
        .as_array()
        .expect("classes")
        .iter()
        .map(|c| c["name"].as_str().expect("name").to_string())
        .collect()
}

#[test]
fn list_classes_filters_pages_and_counts_class_loader_copies() {
    let jvm = Jvm::start("TwoLoaders", JvmOpts::default());
    // The fixture prints this only after both loaders have loaded Plugin.
    jvm.wait_for_line("two loaders ready", Duration::from_secs(10));
    let server = attached(&jvm);

    let plugin = server
        .call("debug_list_classes", json!({"filter": "Plugin"}))
        .expect_ok();
    let data = plugin.json();
    assert!(
        names(&data).contains(&"Plugin".to_string()),
        "{}",
        plugin.text
    );
    let copies = data["classes"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["name"] == "Plugin"))
        .map(|c| c["copies"].clone());
    assert_eq!(copies, Some(json!(2)), "{}", plugin.text);
    assert!(plugin.text.contains("Plugin (2 copies"), "{}", plugin.text);
    let loaded = data["loaded"].as_u64().expect("loaded");
    assert!(loaded > 100, "a JVM loads hundreds of classes: {loaded}");

    // A prefix, paged: the second page starts where the first ended.
    let first = server
        .call(
            "debug_list_classes",
            json!({"filter": "java.util.*", "limit": 5}),
        )
        .expect_ok();
    let page1 = names(&first.json());
    assert_eq!(page1.len(), 5, "{}", first.text);
    assert!(
        page1.iter().all(|n| n.starts_with("java.util.")),
        "{page1:?}"
    );
    let matched = first.json()["matched"].as_u64().expect("matched");
    assert!(
        matched > 5 && first.text.contains("offset:5"),
        "{}",
        first.text
    );
    let second = server
        .call(
            "debug_list_classes",
            json!({"filter": "java.util.*", "limit": 5, "offset": 5}),
        )
        .expect_ok();
    let page2 = names(&second.json());
    assert_eq!(page2.len(), 5);
    assert!(page1.last() < page2.first(), "{page1:?} then {page2:?}");

    // A suffix.
    let suffix = server
        .call("debug_list_classes", json!({"filter": "*.HashMap"}))
        .expect_ok();
    assert!(names(&suffix.json()).contains(&"java.util.HashMap".to_string()));
    assert!(
        names(&suffix.json())
            .iter()
            .all(|n| n.ends_with(".HashMap"))
    );

    // Arrays only on request.
    let without = server
        .call(
            "debug_list_classes",
            json!({"filter": "java.lang.String[]"}),
        )
        .expect_ok();
    assert_eq!(without.json()["matched"], 0, "{}", without.text);
    assert!(without.text.contains("None matched"), "{}", without.text);
    let with = server
        .call(
            "debug_list_classes",
            json!({"filter": "java.lang.String[]", "include_arrays": true}),
        )
        .expect_ok();
    assert_eq!(names(&with.json()), vec!["java.lang.String[]".to_string()]);
    assert!(with.json()["loaded"].as_u64() > without.json()["loaded"].as_u64());

    // A misspelt argument is refused, naming the accepted ones.
    let bad = server
        .call("debug_list_classes", json!({"filer": "x"}))
        .expect_tool_error();
    assert!(bad.text.contains("filter"), "{}", bad.text);

    // Nothing was suspended: the JVM still runs every thread.
    let sessions = server.call("debug_list_sessions", json!({})).expect_ok();
    assert_eq!(
        sessions.json()["sessions"][0]["state"],
        "RUNNING",
        "{}",
        sessions.text
    );
}
