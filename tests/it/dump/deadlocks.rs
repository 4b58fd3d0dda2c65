//! Deadlocks in debug_thread_dump, against the `knots.Knots` fixture on
//! JDK 17 and Temurin 25: a thread parked on a `java.util.concurrent` lock
//! is named the way `jstack -l` names it (the synchronizer it parks for
//! and the thread that owns it), one wait-for graph holds monitor and
//! ReentrantLock edges alike (a cycle of each, and one mixing both), and
//! no filter (package_filter, monitors_only, max_frames, name_filter,
//! limit) hides a deadlocked thread or its DEADLOCK line.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;

use super::{RESUMED, assert_running, attached, shown};
use crate::support::java::{Jvm, JvmOpts, default_java_home, line_of, temurin25_required};
use crate::support::mcp::Server;
use crate::support::text::{DumpEntry, dump_entries, dump_entry};

const FIXTURE: &str = "knots/Knots.java";
/// The synchronizer a `new ReentrantLock()` parks its waiters on.
const RL_SYNC: &str = "java.util.concurrent.locks.ReentrantLock$NonfairSync";
/// The synchronizer a `new ReentrantReadWriteLock()` parks its waiters on.
const RW_SYNC: &str = "java.util.concurrent.locks.ReentrantReadWriteLock$NonfairSync";
/// The six threads in the fixture's three cycles.
const DEADLOCKED: [&str; 6] = [
    "rl-a",
    "rl-b",
    "mon-a",
    "mon-b",
    "mix-monitor-first",
    "mix-lock-first",
];

/// The fixture on `java_home`, every waiting thread queued and parked.
fn knots(java_home: PathBuf) -> Jvm {
    let jvm = Jvm::start(
        "knots.Knots",
        JvmOpts {
            java_home: Some(java_home),
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("knots ready", Duration::from_secs(20));
    jvm
}

fn both_jdks() -> [PathBuf; 2] {
    [default_java_home(), temurin25_required()]
}

fn dump(server: &Server, args: serde_json::Value) -> String {
    server.call("debug_thread_dump", args).expect_ok().text
}

/// The DEADLOCK line naming both threads (there must be exactly one).
fn cycle_of<'a>(text: &'a str, a: &str, b: &str) -> &'a str {
    let found: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("DEADLOCK "))
        .filter(|l| l.contains(&format!("{a:?} @")) && l.contains(&format!("{b:?} @")))
        .collect();
    assert_eq!(found.len(), 1, "one cycle of {a} and {b}: {text}");
    found[0]
}

/// The `<0x…>` a parked thread's entry says it parks for.
fn blocker_of(e: &DumpEntry) -> String {
    let line = e
        .block
        .lines()
        .find(|l| l.starts_with("  parking to wait for <0x"))
        .unwrap_or_else(|| panic!("parked: {}", e.block));
    let rest = line.trim_start_matches("  parking to wait for ");
    rest[..=rest.find('>').expect("<0x…>")].to_string()
}

/// `waiter` parks for a `sync` that `owner` holds, and `owner`'s entry
/// lists that synchronizer as one it owns.
fn assert_parked_on(entries: &[DumpEntry], waiter: &str, sync: &str, owner: &str) {
    let e = dump_entry(entries, waiter);
    let owner_id = dump_entry(entries, owner).first_id().expect("an id");
    let blocker = blocker_of(e);
    assert!(
        e.block.contains(&format!(
            "parking to wait for {blocker} (a {sync}) ← held by {} {owner:?}",
            owner_id.trim_start_matches('@')
        )),
        "{waiter} parks for a {sync} that {owner} holds: {}",
        e.block
    );
    let o = dump_entry(entries, owner);
    assert!(
        o.block
            .contains(&format!("locked ownable synchronizer {blocker} (a {sync})")),
        "{owner} owns {blocker}: {}",
        o.block
    );
}

/// `waiter` is blocked entering a monitor that `owner` holds.
fn assert_blocked_on(entries: &[DumpEntry], waiter: &str, owner: &str) {
    let e = dump_entry(entries, waiter);
    let owner_id = dump_entry(entries, owner).first_id().expect("an id");
    assert!(
        e.block.contains("\n  waiting to lock java.lang.Object@0x")
            && e.block.contains(&format!(
                "← held by {} {owner:?}",
                owner_id.trim_start_matches('@')
            )),
        "{waiter} waits to enter a monitor {owner} holds: {}",
        e.block
    );
}

/// What every dump of the fixture shows whatever its filters: exactly
/// the three cycles, each with the kind of lock it is made of, and each
/// deadlocked thread with what it waits for and who holds it.
fn assert_three_cycles(text: &str) {
    let lines = text.lines().filter(|l| l.starts_with("DEADLOCK ")).count();
    assert_eq!(lines, 3, "three cycles: {text}");
    let rl = cycle_of(text, "rl-a", "rl-b");
    assert!(
        rl.contains("2 threads in a cycle") && rl.matches(RL_SYNC).count() == 2,
        "{rl}"
    );
    let mon = cycle_of(text, "mon-a", "mon-b");
    assert!(
        mon.matches("java.lang.Object@0x").count() == 2 && !mon.contains("ReentrantLock"),
        "{mon}"
    );
    let mix = cycle_of(text, "mix-monitor-first", "mix-lock-first");
    assert!(
        mix.matches(RL_SYNC).count() == 1 && mix.matches("java.lang.Object@0x").count() == 1,
        "one edge of each kind: {mix}"
    );
    for name in ["lock-waiter", "rw-reader", "lock-holder"] {
        assert!(!cycle_line(text, name), "{name} is in no cycle: {text}");
    }
    let entries = dump_entries(text);
    assert_parked_on(&entries, "rl-a", RL_SYNC, "rl-b");
    assert_parked_on(&entries, "rl-b", RL_SYNC, "rl-a");
    assert_blocked_on(&entries, "mon-a", "mon-b");
    assert_blocked_on(&entries, "mon-b", "mon-a");
    assert_parked_on(&entries, "mix-monitor-first", RL_SYNC, "mix-lock-first");
    assert_blocked_on(&entries, "mix-lock-first", "mix-monitor-first");
}

/// Whether a DEADLOCK line names `name`.
fn cycle_line(text: &str, name: &str) -> bool {
    text.lines()
        .any(|l| l.starts_with("DEADLOCK ") && l.contains(&format!("{name:?} @")))
}

fn a_reentrantlock_cycle_and_a_monitor_cycle_in_one_dump(java_home: PathBuf) {
    let jvm = knots(java_home);
    let server = attached(&jvm);
    let text = dump(&server, json!({"suspend": true}));
    assert_three_cycles(&text);
    let entries = dump_entries(&text);
    // Parked on a lock nobody in a cycle holds: owner named, no cycle.
    assert_parked_on(&entries, "lock-waiter", RL_SYNC, "lock-holder");
    assert_parked_on(&entries, "rw-reader", RW_SYNC, "lock-holder");
    // The stacks say where each one waits.
    let second = line_of(FIXTURE, "second lock()");
    assert!(
        dump_entry(&entries, "rl-a")
            .block
            .contains(&format!("at knots.Knots.locks:{second}")),
        "{text}"
    );
    let mix = line_of(FIXTURE, "mix monitor");
    assert!(
        dump_entry(&entries, "mix-lock-first")
            .block
            .contains(&format!("at knots.Knots.lockThenMonitor:{mix}")),
        "{text}"
    );
    assert!(text.contains(RESUMED), "{text}");
    assert_running(&server, &jvm, "tick");
}

#[test]
fn a_reentrantlock_cycle_and_a_monitor_cycle_are_named_in_one_dump_on_jdk17() {
    a_reentrantlock_cycle_and_a_monitor_cycle_in_one_dump(default_java_home());
}

#[test]
fn a_reentrantlock_cycle_and_a_monitor_cycle_are_named_in_one_dump_on_temurin25() {
    a_reentrantlock_cycle_and_a_monitor_cycle_in_one_dump(temurin25_required());
}

#[test]
fn package_filter_with_monitors_only_still_shows_the_deadlocks() {
    for home in both_jdks() {
        let jvm = knots(home);
        let server = attached(&jvm);
        let text = dump(
            &server,
            json!({"suspend": true, "monitors_only": true, "package_filter": "java.util.concurrent"}),
        );
        assert_three_cycles(&text);
        assert!(!text.contains("\n  at "), "no frames: {text}");
        // The filter still works: parked in j.u.c is kept, asleep is not,
        // and the three deadlocked threads without a j.u.c frame are
        // shown past it, and said to be.
        let entries = dump_entries(&text);
        dump_entry(&entries, "lock-waiter");
        assert!(
            !entries
                .iter()
                .any(|e| e.header.starts_with("\"lock-holder\" @")),
            "{text}"
        );
        assert!(
            text.contains("3 deadlocked shown past the filters"),
            "{text}"
        );
        assert!(text.contains(RESUMED), "{text}");
        assert_running(&server, &jvm, "tick");
    }
}

#[test]
fn package_filter_with_max_frames_3_still_shows_the_deadlocks() {
    for home in both_jdks() {
        let jvm = knots(home);
        let server = attached(&jvm);
        let text = dump(
            &server,
            json!({"suspend": true, "package_filter": "knots", "max_frames": 3}),
        );
        assert_three_cycles(&text);
        let entries = dump_entries(&text);
        // Parked in ReentrantLock.lock(), the fixture's frame lies below
        // the three shown; the package is matched on the whole stack.
        for name in ["rl-a", "lock-waiter", "rw-reader"] {
            let e = dump_entry(&entries, name);
            assert_eq!(e.frames(), 3, "{}", e.block);
            assert!(e.block.contains("more frames (max_frames)"), "{}", e.block);
            assert!(!e.block.contains("at knots."), "{}", e.block);
        }
        assert!(!text.contains("shown past the filters"), "{text}");
        assert!(text.contains(RESUMED), "{text}");
        assert_running(&server, &jvm, "tick");
    }
}

#[test]
fn a_name_filter_and_limit_still_show_the_deadlocked_threads() {
    for home in both_jdks() {
        let jvm = knots(home);
        let server = attached(&jvm);
        let text = dump(
            &server,
            json!({"suspend": true, "name_filter": "lock-*", "limit": 1}),
        );
        assert_three_cycles(&text);
        assert_eq!(shown(&text), 7, "{text}");
        assert!(
            text.contains("6 deadlocked shown past the filters"),
            "{text}"
        );
        assert!(text.contains("Not read (limit)"), "{text}");
        let entries = dump_entries(&text);
        for name in DEADLOCKED {
            assert!(dump_entry(&entries, name).frames() > 0, "{text}");
        }
        assert!(text.contains(RESUMED), "{text}");
        assert_running(&server, &jvm, "tick");
    }
}
