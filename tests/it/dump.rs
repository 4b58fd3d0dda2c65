//! debug_thread_dump against real JVMs through the real binary: a
//! two-thread deadlock is named as a cycle, a pool parked at one site is
//! one entry, 300 deep threads all come back, virtual threads are marked
//! (Temurin 25, includevirtualthreads=y), and after every dump the fixture
//! keeps running with no thread left suspended. Deadlocks on
//! `java.util.concurrent` locks, and filters that must not hide one, are in
//! `dump/deadlocks.rs`.

mod deadlocks;

use std::time::Duration;

use serde_json::json;

use crate::support::java::{Jvm, JvmOpts, line_of, temurin25_required};
use crate::support::mcp::Server;
use crate::support::text::{dump_entries, dump_entry, number_after, threads};

/// What a dump that suspended says once every count is back.
const RESUMED: &str = "resumed, and every suspend count is back where it was";

/// The "N threads shown" of a dump's first line.
fn shown(text: &str) -> u64 {
    number_after(text, "Thread dump: ").unwrap_or_else(|| panic!("no count: {text}"))
}

/// A server attached to `jvm`.
pub fn attached(jvm: &Jvm) -> Server {
    attached_with(jvm, json!({}))
}

/// A server attached to `jvm` read-only.
pub fn attached_read_only(jvm: &Jvm) -> Server {
    attached_with(jvm, json!({"read_only": true}))
}

fn attached_with(jvm: &Jvm, extra: serde_json::Value) -> Server {
    let server = Server::spawn();
    server.initialize();
    let mut args = json!({"port": jvm.port()});
    if let (Some(a), Some(e)) = (args.as_object_mut(), extra.as_object()) {
        a.extend(e.clone());
    }
    server.call("debug_attach", args).expect_ok();
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
    assert!(!plain.text.contains("DEADLOCK"), "{}", plain.text);

    let dump = server
        .call("debug_thread_dump", json!({"suspend": true}))
        .expect_ok();
    let text = &dump.text;
    let entries = dump_entries(text);
    // The cycle is named first, both ways round.
    let first_entry = text.find("\n\n").expect("entries");
    let cycle = text.find("DEADLOCK 1: 2 threads in a cycle").expect(text);
    assert!(cycle < first_entry, "{text}");
    assert!(text.contains("\"lock-a-taker\""), "{text}");
    // One cycle, of two threads.
    assert!(!text.contains("DEADLOCK 2:"), "{text}");
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
        let e = dump_entry(&entries, name);
        let other = if name == "lock-a-taker" {
            "lock-b-taker"
        } else {
            "lock-a-taker"
        };
        let owner = dump_entry(&entries, other).first_id().expect("an id");
        let owner = owner.trim_start_matches('@');
        assert!(
            e.block.contains("\n  waiting to lock ")
                && e.block.contains(&format!("← held by {owner} {other:?}")),
            "{name} waits to enter a monitor {other} holds: {}",
            e.block
        );
    }
    // The 50 parked workers are one entry, with every id.
    let pool = entries
        .iter()
        .find(|e| e.header.starts_with("×50 \"pool-worker-#\" WAIT"))
        .unwrap_or_else(|| panic!("one entry for the pool: {text}"));
    assert_eq!(pool.count, 50, "{text}");
    assert!(
        pool.header.contains("50 threads with an identical stack"),
        "{}",
        pool.header
    );
    // Parked on a latch: its sync is named, and nobody owns it.
    assert!(
        pool.block.contains("\n  parking to wait for <0x")
            && pool
                .block
                .contains("(a java.util.concurrent.CountDownLatch$Sync)\n")
            && !pool.block.contains("← held by"),
        "{}",
        pool.block
    );
    let park = line_of("Wedged.java", "park");
    assert!(text.contains(&format!("at Wedged.park:{park}")), "{text}");
    // The cost is stated, and the suspension undone and verified.
    assert!(
        number_after(text, "Cost: ").unwrap_or(0) > 50,
        "packets: {text}"
    );
    assert!(number_after(text, "the VM was held ").is_some(), "{text}");
    assert!(text.contains(RESUMED), "{text}");
    assert_running(&server, &jvm, "tick");
    narrowed_dumps_of_wedged(&server);
    assert_running(&server, &jvm, "tick");
}

/// monitors_only, a bound too small, limit and package_filter on the
/// Wedged fixture: each narrows the dump, none hides the deadlocked pair.
fn narrowed_dumps_of_wedged(server: &Server) {
    // monitors_only: the lock graph without frames, the cycle still named.
    let locks = server
        .call(
            "debug_thread_dump",
            json!({"suspend": true, "monitors_only": true, "name_filter": "lock-*"}),
        )
        .expect_ok();
    assert_eq!(shown(&locks.text), 2, "{}", locks.text);
    assert!(
        locks.text.contains("DEADLOCK 1: 2 threads in a cycle")
            && !locks.text.contains("DEADLOCK 2:"),
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
    if cut
        .text
        .contains("(NOT READ: the max_suspend_ms bound ran out first)")
    {
        assert!(cut.text.contains("CUT SHORT"), "{}", cut.text);
    }
    assert!(cut.text.contains(RESUMED), "{}", cut.text);
    // package_filter and limit narrow the dump, but never hide the
    // deadlocked pair.
    let limited = server
        .call(
            "debug_thread_dump",
            json!({"suspend": true, "limit": 3, "max_frames": 2}),
        )
        .expect_ok();
    assert_eq!(shown(&limited.text), 5, "{}", limited.text);
    assert!(
        limited.text.contains("2 deadlocked shown past the filters")
            && limited.text.contains("DEADLOCK 1: 2 threads in a cycle"),
        "{}",
        limited.text
    );
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
    assert!(shown(&pkg.text) >= 50, "{}", pkg.text);
    assert!(!pkg.text.contains("\"main\" @"), "{}", pkg.text);
    let pkg_entries = dump_entries(&pkg.text);
    dump_entry(&pkg_entries, "lock-a-taker");
    assert!(
        pkg.text.contains("2 deadlocked shown past the filters"),
        "{}",
        pkg.text
    );
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
    // The 300 the filter matched, and the deadlocked pair past it.
    assert_eq!(shown(&dump.text), 302, "{}", dump.text);
    assert!(
        dump.text.contains("2 deadlocked shown past the filters"),
        "{}",
        dump.text
    );
    let entries = dump_entries(&dump.text);
    let read: u64 = entries
        .iter()
        .filter(|e| e.header.contains("\"deep-") && e.frames() > 0)
        .map(|e| e.count)
        .sum();
    assert_eq!(read, 300, "{}", dump.text);
    // Every frame of a deep stack is there (none cut by max_frames).
    let deep = entries
        .iter()
        .find(|e| e.header.contains("\"deep-"))
        .unwrap_or_else(|| panic!("a deep entry: {}", dump.text));
    assert!(deep.frames() >= 20, "{}", deep.block);
    assert!(
        !deep.block.contains("more frames (max_frames)"),
        "{}",
        deep.block
    );
    assert!(dump.text.contains(RESUMED), "{}", dump.text);

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
    let threads_reply = server.call("debug_list_threads", json!({})).expect_ok();
    let threads_text = &threads_reply.text;
    let virtuals = threads(&threads_reply.text)
        .iter()
        .filter(|t| t.is_virtual)
        .count();
    assert!(virtuals >= 3, "{threads_text}");
    assert!(threads_text.contains("(virtual)"), "{threads_text}");
    assert!(
        threads_text.contains("includevirtualthreads=y"),
        "{threads_text}"
    );

    let dump = server
        .call("debug_thread_dump", json!({"suspend": true}))
        .expect_ok();
    let marked: u64 = dump_entries(&dump.text)
        .iter()
        .filter(|e| e.is_virtual())
        .map(|e| e.count)
        .sum();
    assert!(marked >= 3, "{}", dump.text);
    assert!(dump.text.contains("(virtual)"), "{}", dump.text);
    assert!(dump.text.contains(RESUMED), "{}", dump.text);

    let line = line_of("VirtualPark.java", "hit");
    server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": "VirtualPark", "line": line}),
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
        .call(
            "debug_update_stop_point",
            json!({"kind": "clear", "id": id}),
        )
        .expect_ok();
    server.call("debug_continue", json!({})).expect_ok();
    assert_none_suspended(&server);
}

/// No thread has a suspend count left.
pub fn assert_none_suspended(server: &Server) {
    let listed = server
        .call("debug_list_threads", json!({"limit": 1000}))
        .expect_ok();
    let rows = threads(&listed.text);
    assert!(!rows.is_empty(), "{}", listed.text);
    let held: Vec<_> = rows.iter().filter(|t| t.suspend_count != 0).collect();
    assert!(held.is_empty(), "left suspended: {held:?}");
}
