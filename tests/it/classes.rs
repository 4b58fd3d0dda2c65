//! The class tools against a real JVM through the real binary: a listing
//! filtered by prefix, suffix and substring, paged, with class-loader copies
//! counted, and arrays only on request. Nothing is suspended by any of it.

use std::time::Duration;

use serde_json::json;

use crate::support::java::{Jvm, JvmOpts};
use crate::support::mcp::Server;
use crate::support::text::number_after;

fn attached(jvm: &Jvm) -> Server {
    let server = Server::spawn();
    server.initialize();
    server
        .call("debug_attach", json!({"port": jvm.port()}))
        .expect_ok();
    server
}

/// The class names a page shows, one a line after the count line.
fn names(text: &str) -> Vec<String> {
    text.lines()
        .skip(1)
        .filter(|l| !l.starts_with('…') && !l.starts_with("None matched"))
        .map(|l| l.split(" (").next().unwrap_or(l).to_string())
        .collect()
}

/// "M of L loaded classes": (matched, loaded).
fn counts(text: &str) -> (u64, u64) {
    let matched = number_after(text, "").unwrap_or_else(|| panic!("no count: {text}"));
    let loaded = number_after(text, " of ").unwrap_or_else(|| panic!("no count: {text}"));
    (matched, loaded)
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
    assert!(
        names(&plugin.text).contains(&"Plugin".to_string()),
        "{}",
        plugin.text
    );
    assert!(
        plugin
            .text
            .lines()
            .any(|l| l == "Plugin (2 copies: one per class loader)"),
        "{}",
        plugin.text
    );
    let (_, loaded) = counts(&plugin.text);
    assert!(loaded > 100, "a JVM loads hundreds of classes: {loaded}");

    // A prefix, paged: the second page starts where the first ended.
    let first = server
        .call(
            "debug_list_classes",
            json!({"filter": "java.util.*", "limit": 5}),
        )
        .expect_ok();
    let page1 = names(&first.text);
    assert_eq!(page1.len(), 5, "{}", first.text);
    assert!(
        page1.iter().all(|n| n.starts_with("java.util.")),
        "{page1:?}"
    );
    let (matched, _) = counts(&first.text);
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
    let page2 = names(&second.text);
    assert_eq!(page2.len(), 5);
    assert!(page1.last() < page2.first(), "{page1:?} then {page2:?}");

    // A suffix.
    let suffix = server
        .call("debug_list_classes", json!({"filter": "*.HashMap"}))
        .expect_ok();
    assert!(names(&suffix.text).contains(&"java.util.HashMap".to_string()));
    assert!(names(&suffix.text).iter().all(|n| n.ends_with(".HashMap")));

    // Arrays only on request.
    let without = server
        .call(
            "debug_list_classes",
            json!({"filter": "java.lang.String[]"}),
        )
        .expect_ok();
    assert_eq!(counts(&without.text).0, 0, "{}", without.text);
    assert!(without.text.contains("None matched"), "{}", without.text);
    let with = server
        .call(
            "debug_list_classes",
            json!({"filter": "java.lang.String[]", "include_arrays": true}),
        )
        .expect_ok();
    assert_eq!(names(&with.text), vec!["java.lang.String[]".to_string()]);
    assert!(counts(&with.text).1 > counts(&without.text).1);

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
