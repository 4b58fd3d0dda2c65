//! Statistics only (JDK 17 and Temurin 25): `stats: true` on a method
//! exit keeps no snapshot; the JVM counts calls and throws and keeps a
//! latency histogram of about one call in eight, and the listing's
//! counts match the program's own;
//! a class pattern or a missing method is refused naming what it takes;
//! disconnect, and the next attach after a SIGKILL, restore the class.

use std::path::PathBuf;

use serde_json::json;

use super::{WAIT, attach_on, first_id, instrumented, server};
use crate::support::java::{Jvm, JvmOpts, temurin25_required};
use crate::support::poll_until_msg;

/// `N`, `M` and `T` in "... N calls, M throws, T timed" of the listing's
/// since-arming line.
pub(crate) fn since_arming(listing: &str) -> Option<(u64, u64, u64)> {
    let line = listing
        .lines()
        .find(|l| l.trim_start().starts_with("stats since arming"))?;
    let after = line.split("): ").nth(1)?;
    let mut words = after.split_whitespace();
    let mut next = || -> Option<u64> {
        let n = words.next()?.parse().ok()?;
        words.next();
        Some(n)
    };
    Some((next()?, next()?, next()?))
}

/// A number after `key=` in `line`.
fn count(line: &str, key: &str) -> u64 {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(key))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{key} in {line}"))
}

fn stats_match_the_programs_own_counts(java_home: Option<PathBuf>) {
    let go = std::env::temp_dir().join(format!(
        "jvmscope-stats-{}-{}",
        std::process::id(),
        java_home.is_some()
    ));
    let _ = std::fs::remove_file(&go);
    let jvm = Jvm::start(
        "stats.Counted",
        JvmOpts {
            java_home,
            args: vec![go.display().to_string()],
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("counted ready", WAIT);
    let server = server();
    attach_on(&server, jvm.port(), json!({}));

    // What it takes: one class and one method.
    for args in [
        json!({"kind": "method_exit", "class_pattern": "stats.Counted", "stats": true}),
        json!({"kind": "method_exit", "class_pattern": "stats.*", "method": "work", "stats": true}),
    ] {
        let refused = server.call("debug_set_stop", args).expect_tool_error();
        assert!(
            refused.text.contains("one class") && refused.text.contains("one method"),
            "{}",
            refused.text
        );
    }

    let armed = server
        .call(
            "debug_set_stop",
            json!({"kind": "method_exit", "class_pattern": "stats.Counted", "method": "work", "stats": true}),
        )
        .expect_ok();
    assert!(armed.text.contains("PROBE:"), "{}", armed.text);
    let id = first_id(&armed);
    std::fs::write(&go, b"go").expect("the go file");
    let done = jvm.wait_for_line("burst done", WAIT);
    let _ = std::fs::remove_file(&go);
    let (calls, throws) = (count(&done, "calls="), count(&done, "throws="));
    let within = |seen: u64, own: u64| seen.abs_diff(own) * 20 <= own;
    let listing = poll_until_msg(WAIT, "the listing's counts", || {
        let text = server
            .call("debug_list_stop_points", json!({}))
            .expect_ok()
            .text;
        let (c, t, _) = since_arming(&text)?;
        (within(c, calls) && within(t, throws)).then_some(text)
    });
    assert!(
        listing.contains("p50 ") && listing.contains("p99 ") && listing.contains("an estimate"),
        "{listing}"
    );
    // About one call in eight is timed, drawn at random: 375 of 3,000
    // expected, with a standard deviation of 18.
    let (_, _, timed) = since_arming(&listing).expect("the since-arming line");
    assert!(
        (calls / 16..=calls / 5).contains(&timed),
        "{timed} of {calls} calls timed: {listing}"
    );
    let traces = server
        .call("debug_get_traces", json!({"bp_id": id}))
        .expect_ok();
    assert_eq!(
        traces.json()["traces"].as_array().map_or(0, Vec::len),
        0,
        "statistics keep no snapshot: {}",
        traces.text
    );

    // Disconnect gives the class its own bytecode back.
    assert!(instrumented(&server, "stats.Counted"));
    server.call("debug_disconnect", json!({})).expect_ok();
    let again = super::server();
    attach_on(&again, jvm.listening_port(2, WAIT), json!({}));
    assert!(
        !instrumented(&again, "stats.Counted"),
        "disconnect restored it"
    );
    again.call("debug_disconnect", json!({})).expect_ok();

    // SIGKILL: nothing restores on the way out; the next attach does.
    let doomed = super::server();
    attach_on(&doomed, jvm.listening_port(3, WAIT), json!({}));
    doomed
        .call(
            "debug_set_stop",
            json!({"kind": "method_exit", "class_pattern": "stats.Counted", "method": "work", "stats": true}),
        )
        .expect_ok();
    assert!(instrumented(&doomed, "stats.Counted"));
    doomed.kill();
    let next = super::server();
    let reply = attach_on(&next, jvm.listening_port(4, WAIT), json!({}));
    assert!(
        reply.text.contains("RESTORED: stats.Counted"),
        "{}",
        reply.text
    );
    assert!(!instrumented(&next, "stats.Counted") && jvm.is_alive());
}

#[test]
fn statistics_match_the_programs_own_counts_of_calls_and_throws_jdk17() {
    stats_match_the_programs_own_counts(None);
}

#[test]
fn statistics_match_the_programs_own_counts_of_calls_and_throws_temurin25() {
    stats_match_the_programs_own_counts(Some(temurin25_required()));
}
