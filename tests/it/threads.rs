//! The thread list against a real JVM through the real binary: names sort
//! as numbers, and a cut list shows every name family before a second
//! thread of any, naming what it left out.

use std::time::Duration;

use serde_json::json;

use crate::support::java::{Jvm, JvmOpts};
use crate::support::mcp::Server;
use crate::support::text::threads;

#[test]
fn threads_sort_naturally_and_a_cut_list_covers_every_family_first() {
    let jvm = Jvm::start(
        "TraceLoad",
        JvmOpts {
            args: vec!["12".into()],
            ..JvmOpts::default()
        },
    );
    // The rate line is printed once the workers run.
    jvm.wait_for_line("ops/s", Duration::from_secs(10));
    let server = Server::spawn();
    server.initialize();
    server
        .call("debug_attach", json!({"port": jvm.port()}))
        .expect_ok();

    let loads = server
        .call("debug_list_threads", json!({"name_contains": "load-"}))
        .expect_ok();
    let names: Vec<String> = threads(&loads.text).into_iter().map(|t| t.name).collect();
    let want: Vec<String> = (1..=12).map(|i| format!("load-{i}")).collect();
    assert_eq!(names, want, "2 before 10: {}", loads.text);

    let cut = server
        .call("debug_list_threads", json!({"limit": 3}))
        .expect_ok();
    let shown = threads(&cut.text).len();
    assert_eq!(shown, 3, "{}", cut.text);
    let loads_shown = cut.text.lines().filter(|l| l.contains("\"load-")).count();
    assert!(
        loads_shown <= 1,
        "one of a family before a second: {}",
        cut.text
    );
    assert!(
        cut.text.contains("load-# ×"),
        "names the group left out: {}",
        cut.text
    );
}
