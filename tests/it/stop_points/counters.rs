//! One set of counters in every reply: the numbers are read back out of
//! the text an agent reads and checked against each other. Snapshots are
//! the trace budget's use; a probe's passes never outnumber its calls (nor
//! its snapshots its passes); a probe's reply never says it holds a
//! thread, and gives its arming pause as one figure; a wait that skips
//! snapshots says how many.

use serde_json::json;

use super::{WAIT, assert_all_running, attached_orders, first_id, line, ok, point};
use crate::support::java::{Jvm, JvmOpts, line_of};
use crate::support::mcp::Server;
use crate::support::poll_until_msg;
use crate::support::text::number_after;

/// Checks every counter line of a reply: `snapshots: N (budget U/M
/// used)` has N == U ≤ M, and a probe's `C calls…, P passed` has P ≤ C.
/// Returns the snapshots and the probe's calls and passes it read.
pub(crate) fn consistent(text: &str) -> (Vec<u64>, Vec<(u64, u64)>) {
    let mut snapshots = Vec::new();
    let mut probes = Vec::new();
    for l in text.lines() {
        if let Some(n) = number_after(l, "snapshots: ") {
            if let Some(used) = number_after(l, "(budget ") {
                let max = number_after(l, &format!("(budget {used}/")).unwrap_or(0);
                assert_eq!(n, used, "snapshots are the budget's use: {l}\n{text}");
                assert!(used <= max, "{l}\n{text}");
            }
            snapshots.push(n);
        }
        if let Some(at) = l.find("engine: probe; cost: ") {
            let rest = &l[at..];
            let calls_at = rest.find(" calls").unwrap_or(0);
            let calls: u64 = rest[..calls_at]
                .rsplit(' ')
                .next()
                .and_then(|w| w.parse().ok())
                .unwrap_or_else(|| panic!("no calls in {l}"));
            let passed_at = rest.find(" passed").unwrap_or(0);
            let passed: u64 = rest[..passed_at]
                .rsplit(' ')
                .next()
                .and_then(|w| w.parse().ok())
                .unwrap_or_else(|| panic!("no passes in {l}"));
            assert!(passed <= calls, "passed ≤ calls: {l}\n{text}");
            probes.push((calls, passed));
        }
    }
    if text.contains("engine: probe") {
        probe_words(text);
    }
    (snapshots, probes)
}

/// A probe's reply says one thing about it: its trace line holds no
/// thread and reads nothing at a safepoint, and the pause its arming took
/// is the same figure on the engine line and in the arming note.
fn probe_words(text: &str) {
    for l in text
        .lines()
        .filter(|l| l.trim_start().starts_with("trace:"))
    {
        assert!(
            !l.contains("holding only the hit thread") && !l.contains("safepoint"),
            "a probe holds nothing: {l}\n{text}"
        );
    }
    let figure = |key: &str| {
        let at = text.find(key)? + key.len();
        text[at..].split_whitespace().next().map(str::to_string)
    };
    if let (Some(engine), Some(note)) = (figure("armed with a "), figure("redefinition paused it "))
    {
        assert_eq!(engine, note, "one pause, one figure: {text}");
    }
}

#[test]
fn a_traced_wire_stop_counts_its_snapshots_as_its_budget_used_across_a_re_arm() {
    let (_jvm, server) = attached_orders();
    let armed = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Orders", "line": line("label"), "trace": true, "trace_max_hits": 5, "engine": "wire"}),
    );
    consistent(&armed.text);
    let id = first_id(&armed);
    let spent = |server: &Server| {
        poll_until_msg(WAIT, "the budget to spend the stop point", || {
            (point(server, &id)["state"] == "spent").then_some(())
        })
    };
    spent(&server);
    let listing = ok(&server, "debug_list_stop_points", json!({}));
    assert_eq!(consistent(&listing.text).0, vec![5], "{}", listing.text);
    // An update re-arms it with a new budget: the listing counts the new
    // budget's snapshots as its use, and the earlier ones apart.
    let updated = ok(
        &server,
        "debug_update_stop_point",
        json!({"id": id, "trace_max_hits": 5}),
    );
    consistent(&updated.text);
    spent(&server);
    let listing = ok(&server, "debug_list_stop_points", json!({}));
    assert_eq!(consistent(&listing.text).0, vec![5], "{}", listing.text);
    assert!(
        listing
            .text
            .contains(" · 5 more before it was last re-armed"),
        "{}",
        listing.text
    );
    let p = point(&server, &id);
    assert_eq!(
        (p["budget_used"].as_u64(), p["captured"].as_u64()),
        (Some(5), Some(10)),
        "{p}"
    );
    let traces = ok(&server, "debug_get_traces", json!({"bp_id": id}));
    assert_eq!(traces.json()["matching"], 10, "{}", traces.text);
    assert_all_running(&server);
}

fn hot_path() -> Jvm {
    let jvm = Jvm::start("HotPath", JvmOpts::default());
    jvm.wait_for_line("hot ready", WAIT);
    jvm
}

fn attached(jvm: &Jvm) -> Server {
    let server = Server::spawn();
    server.initialize();
    ok(&server, "debug_attach", json!({"port": jvm.port()}));
    server
}

#[test]
fn a_probe_whose_condition_passes_sometimes_never_shows_more_passes_than_calls() {
    let jvm = hot_path();
    let server = attached(&jvm);
    let armed = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "HotPath", "line": line_of("HotPath.java", "hot"), "condition": "cents < 500", "trace": true, "trace_max_hits": 0, "trace_frames": 0, "trace_locals": ["cents"], "engine": "probe"}),
    );
    consistent(&armed.text);
    let id = first_id(&armed);
    // From the first drain rounds on: every listing, read as it comes,
    // agrees with itself, until the JVM has counted many calls.
    let mut readings = 0;
    poll_until_msg(WAIT, "the probe to count calls and passes", || {
        let listing = ok(&server, "debug_list_stop_points", json!({}));
        let (snapshots, probes) = consistent(&listing.text);
        let p = point(&server, &id);
        let (calls, passes) = (
            p["probe"]["calls"].as_u64()?,
            p["probe"]["passes"].as_u64()?,
        );
        assert!(passes <= calls, "{p}");
        readings += 1;
        let (&(c, passed), &s) = (probes.first()?, snapshots.first()?);
        assert!(s <= passed, "snapshots ≤ passed: {}", listing.text);
        (c > 20_000 && passed > 0 && passed < c && readings > 5).then_some(())
    });
    assert_all_running(&server);
}

#[test]
fn a_wait_says_how_many_snapshots_the_ring_evicted_before_it_read_them() {
    let jvm = hot_path();
    let server = attached(&jvm);
    let armed = ok(
        &server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "HotPath", "line": line_of("HotPath.java", "hot"), "trace": true, "trace_max_hits": 0, "trace_frames": 0, "trace_locals": "none", "engine": "probe"}),
    );
    let id = first_id(&armed);
    let first = ok(
        &server,
        "debug_wait_for_event",
        json!({"bp_id": id, "timeout_ms": 10_000}),
    );
    assert!(first.text.starts_with('#'), "{}", first.text);
    // The ring holds 500 snapshots of every stop point; at ~15,000 hits/s
    // it turns over many times before the next wait.
    poll_until_msg(WAIT, "the ring to turn over", || {
        let t = ok(
            &server,
            "debug_get_traces",
            json!({"bp_id": id, "limit": 1}),
        );
        (t.json()["ring"]["evicted"].as_u64()? > 2_000).then_some(())
    });
    let next = ok(
        &server,
        "debug_wait_for_event",
        json!({"bp_id": id, "timeout_ms": 10_000}),
    );
    let skipped = number_after(&next.text, "skipped ").unwrap_or(0);
    assert!(
        skipped > 1_000 && next.text.contains("the trace ring"),
        "{}",
        next.text
    );
    let seq = |t: &str| number_after(t, "#").unwrap_or(0);
    assert!(
        seq(&next.text) > seq(&first.text) + skipped,
        "{}\n{}",
        first.text,
        next.text
    );
    assert_all_running(&server);
}
