//! debug_thread_dump against real JVMs through the real binary: a
//! two-thread deadlock is named as a cycle, a pool parked at one site is
//! one entry, 300 deep threads all come back, virtual threads are marked
//! (Temurin 25, includevirtualthreads=y), and after every dump the fixture
//! keeps running with no thread left suspended.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::java::{Jvm, JvmOpts, line_of, temurin25_required};
use crate::support::mcp::Server;

/// A server attached to `jvm`.
pub fn attached(jvm: &Jvm) -> Server {
    let server = Server::spawn();
    server.initialize();
    server
        .call("debug_attach", json!({"port": jvm.port()}))
        .expect_ok();
    server
}

/// Every thread's suspend count is 0, and the fixture still prints.
pub fn assert_running(server: &Server, jvm: &Jvm, tick: &str) {
    assert_none_suspended(server);
    let seen = jvm.line_count();
    jvm.wait_for_line_since(seen, |l| l.starts_with(tick), Duration::from_secs(10));
}

fn wedged(args: &[&str]) -> Jvm {
    let jvm = Jvm::start(
        "Wedged",
        JvmOpts {
            args: args.iter().map(|a| a.to_string()).collect(),
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("wedged ready", Duration::from_secs(20));
    jvm
}

#[test]
fn a_dump_names_the_deadlock_and_collapses_the_parked_pool() {
    let jvm = wedged(&["50"]);
    let server = attached(&jvm);

    // Without a suspension nothing running is readable, and it says why.
    let plain = server.call("debug_thread_dump", json!({})).expect_ok();
    assert!(plain.text.contains("pass suspend:true"), "{}", plain.text);
    assert_eq!(plain.json()["deadlocks"], json!([]), "{}", plain.text);

    let dump = server
        .call("debug_thread_dump", json!({"suspend": true}))
        .expect_ok();
    let data = dump.json();
    let text = &dump.text;
    // The cycle is named first, both ways round.
    let first_entry = text.find("\n\n").expect("entries");
    let cycle = text.find("DEADLOCK 1: 2 threads in a cycle").expect(text);
    assert!(cycle < first_entry, "{text}");
    assert!(text.contains("\"lock-a-taker\""), "{text}");
    assert_eq!(
        data["deadlocks"].as_array().map(Vec::len),
        Some(1),
        "{text}"
    );
    assert_eq!(
        data["deadlocks"][0].as_array().map(Vec::len),
        Some(2),
        "{text}"
    );
    // Each taker waits to lock what the other holds, named.
    let second = line_of("Wedged.java", "second lock");
    assert!(text.contains(&format!("at Wedged.take:{second}")), "{text}");
    assert!(
        text.contains("waiting to lock java.lang.Object@0x"),
        "{text}"
    );
    assert!(text.contains("← held by 0x"), "{text}");
    assert!(text.contains("- locked java.lang.Object@0x"), "{text}");
    for name in ["lock-a-taker", "lock-b-taker"] {
        let e = entry(&data, name);
        assert_eq!(e["waiting"]["kind"], "enter", "{e}");
        let owner = e["waiting"]["owner"].as_str().expect("owner");
        let other = if name == "lock-a-taker" {
            "lock-b-taker"
        } else {
            "lock-a-taker"
        };
        assert_eq!(entry(&data, other)["ids"][0], owner, "{text}");
    }
    // The 50 parked workers are one entry, with every id.
    let pool = entry(&data, "pool-worker-1");
    assert_eq!(pool["count"], 50, "{text}");
    assert_eq!(pool["ids"].as_array().map(Vec::len), Some(50));
    assert!(text.contains("×50 \"pool-worker-#\" WAIT"), "{text}");
    let park = line_of("Wedged.java", "park");
    assert!(text.contains(&format!("at Wedged.park:{park}")), "{text}");
    // The cost is stated, and the suspension undone and verified.
    assert!(data["packets"].as_u64().unwrap_or(0) > 50, "{text}");
    assert!(data["held_ms"].as_f64().is_some(), "{text}");
    assert_eq!(data["resume_verified"], true, "{text}");
    assert!(text.contains("the VM was held"), "{text}");
    assert_running(&server, &jvm, "tick");

    // monitors_only: the lock graph without frames, the cycle still named.
    let locks = server
        .call(
            "debug_thread_dump",
            json!({"suspend": true, "monitors_only": true, "name_filter": "lock-*"}),
        )
        .expect_ok();
    assert_eq!(locks.json()["shown"], 2, "{}", locks.text);
    assert_eq!(
        locks.json()["deadlocks"].as_array().map(Vec::len),
        Some(1),
        "{}",
        locks.text
    );
    assert!(!locks.text.contains("\n  at "), "{}", locks.text);
    // A bound too small to read anything says so loudly, and still resumes.
    let cut = server
        .call(
            "debug_thread_dump",
            json!({"suspend": true, "max_suspend_ms": 1, "limit": 1000}),
        )
        .expect_ok();
    if cut.json()["cut"].as_u64().unwrap_or(0) > 0 {
        assert!(cut.text.contains("CUT SHORT"), "{}", cut.text);
    }
    assert_eq!(cut.json()["resume_verified"], true, "{}", cut.text);
    // package_filter and limit narrow the dump.
    let limited = server
        .call(
            "debug_thread_dump",
            json!({"suspend": true, "limit": 3, "max_frames": 2}),
        )
        .expect_ok();
    assert_eq!(limited.json()["shown"], 3, "{}", limited.text);
    assert!(
        limited.text.contains("Not read (limit)"),
        "{}",
        limited.text
    );
    let pkg = server
        .call(
            "debug_thread_dump",
            json!({"suspend": true, "package_filter": "java.util.concurrent"}),
        )
        .expect_ok();
    assert!(
        pkg.json()["shown"].as_u64().unwrap_or(0) >= 50,
        "{}",
        pkg.text
    );
    assert!(!pkg.text.contains("lock-a-taker"), "{}", pkg.text);
    assert_running(&server, &jvm, "tick");
}

fn entry<'a>(data: &'a Value, name: &str) -> &'a Value {
    data["entries"]
        .as_array()
        .and_then(|es| {
            es.iter().find(|e| {
                e["names"]
                    .as_array()
                    .is_some_and(|ns| ns.iter().any(|n| n == name))
            })
        })
        .unwrap_or_else(|| panic!("no entry for {name}: {data}"))
}

#[test]
fn a_full_dump_of_300_deep_threads_returns_them_all() {
    let jvm = wedged(&["0", "300", "20"]);
    let server = attached(&jvm);
    let dump = server
        .call_with_timeout(
            "debug_thread_dump",
            json!({"suspend": true, "name_filter": "deep-*", "limit": 1000, "max_frames": 1000}),
            Duration::from_secs(60),
        )
        .expect_ok();
    let data = dump.json();
    assert_eq!(data["shown"], 300, "{}", dump.text);
    let read: u64 = data["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| e["stack"] == "read")
        .map(|e| e["count"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(read, 300, "{}", dump.text);
    let deep = entry(&data, "deep-1");
    assert!(deep["depth"].as_u64().unwrap_or(0) >= 20, "{deep}");
    assert_eq!(
        deep["frames"].as_array().map(Vec::len),
        deep["depth"].as_u64().map(|d| d as usize)
    );
    assert_eq!(data["resume_verified"], true, "{}", dump.text);

    // A call that asks for progress hears how far the reads are.
    let result = server
        .request_with_timeout(
            "tools/call",
            json!({
                "name": "debug_thread_dump",
                "arguments": {"suspend": true, "name_filter": "deep-*", "limit": 1000, "monitors_only": true},
                "_meta": {"progressToken": "dump-1"},
            }),
            Duration::from_secs(60),
        )
        .expect("tools/call");
    assert_eq!(result["isError"], false, "{result}");
    let note = server.wait_for_notification(
        |n| n["method"] == "notifications/progress" && n["params"]["progressToken"] == "dump-1",
        Duration::from_secs(10),
    );
    assert_eq!(note["params"]["total"].as_f64(), Some(300.0), "{note}");
    assert!(
        note["params"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("threads read")),
        "{note}"
    );
    assert_running(&server, &jvm, "tick");
}

#[test]
fn virtual_threads_are_marked_and_a_stop_on_one_says_so() {
    let home = temurin25_required();
    let jvm = Jvm::start(
        "VirtualPark",
        JvmOpts {
            java_home: Some(home),
            agent_options: ",includevirtualthreads=y".into(),
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("virtual ready", Duration::from_secs(20));
    let server = attached(&jvm);
    let threads = server.call("debug_list_threads", json!({})).expect_ok();
    let virtuals = threads.json()["threads"]
        .as_array()
        .map(|ts| ts.iter().filter(|t| t["virtual"] == true).count())
        .unwrap_or(0);
    assert!(virtuals >= 3, "{}", threads.text);
    assert!(threads.text.contains("(virtual)"), "{}", threads.text);
    assert!(
        threads.text.contains("includevirtualthreads=y"),
        "{}",
        threads.text
    );

    let dump = server
        .call("debug_thread_dump", json!({"suspend": true}))
        .expect_ok();
    let marked = dump.json()["entries"]
        .as_array()
        .map(|es| {
            es.iter()
                .filter(|e| e["virtual"] == true)
                .map(|e| e["count"].as_u64().unwrap_or(0))
                .sum::<u64>()
        })
        .unwrap_or(0);
    assert!(marked >= 3, "{}", dump.text);
    assert!(dump.text.contains("(virtual)"), "{}", dump.text);
    assert_eq!(dump.json()["resume_verified"], true, "{}", dump.text);

    let line = line_of("VirtualPark.java", "hit");
    server
        .call(
            "debug_set_line_stop",
            json!({"class_pattern": "VirtualPark", "line": line}),
        )
        .expect_ok();
    let hit = server
        .call("debug_wait_for_event", json!({"timeout_ms": 15000}))
        .expect_ok();
    assert!(
        hit.text.contains(&format!("VirtualPark.hit:{line}")),
        "{}",
        hit.text
    );
    assert!(hit.text.contains("virtual thread"), "{}", hit.text);
    let stack = server.call("debug_get_stack", json!({})).expect_ok();
    assert!(stack.text.contains("VirtualPark.hit"), "{}", stack.text);
    let listed = server.call("debug_list_stop_points", json!({})).expect_ok();
    let id = listed.json()["stop_points"][0]["id"].clone();
    server
        .call("debug_clear_stop_point", json!({"id": id}))
        .expect_ok();
    server.call("debug_continue", json!({})).expect_ok();
    assert_none_suspended(&server);
}

/// No thread has a suspend count left.
pub fn assert_none_suspended(server: &Server) {
    let threads = server
        .call("debug_list_threads", json!({"limit": 1000}))
        .expect_ok();
    let data = threads.json();
    let held: Vec<&Value> = data["threads"]
        .as_array()
        .map(|ts| {
            ts.iter()
                .filter(|t| t["suspend_count"].as_i64() != Some(0))
                .collect()
        })
        .unwrap_or_default();
    assert!(held.is_empty(), "left suspended: {held:?}");
}
