//! Reading snapshots as they come, against a real JVM: `debug_get_traces`
//! paged with `since` walks forward and its `Next: since=` skips nothing;
//! `debug_wait_for_event` hands out each snapshot once, in order, with or
//! without a `bp_id`.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::{WAIT, assert_all_running, attached_orders, first_id, line, ok};
use crate::support::mcp::Server;
use crate::support::poll_until_msg;

/// Snapshots the traced stop point keeps: more than two default pages.
const TRACED: usize = 130;

fn seqs(reply: &Value) -> Vec<u64> {
    reply["traces"]
        .as_array()
        .map(|t| t.iter().filter_map(|s| s["seq"].as_u64()).collect())
        .unwrap_or_default()
}

/// Arms a traced line stop on the order loop (about 100 hits a second).
fn traced_loop(server: &Server, max_hits: usize) -> String {
    let armed = ok(
        server,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Orders", "line": line("loop-label"), "trace": true,
               "trace_max_hits": max_hits, "trace_frames": 0, "trace_locals": "none"}),
    );
    first_id(&armed)
}

#[test]
fn paging_with_since_walks_forward_and_skips_nothing() {
    let (_jvm, server) = attached_orders();
    let id = traced_loop(&server, TRACED);
    let every = poll_until_msg(WAIT, &format!("{TRACED} snapshots of {id}"), || {
        let r = ok(
            &server,
            "debug_get_traces",
            json!({"bp_id": id, "limit": 500}),
        );
        let s = seqs(&r.json());
        (s.len() >= TRACED).then_some(s)
    });
    // Page with the default limit from the start, following each reply's
    // own cursor, as an agent would.
    let mut seen = Vec::new();
    let mut since = 0;
    for _ in 0..TRACED {
        let page = ok(
            &server,
            "debug_get_traces",
            json!({"bp_id": id, "since": since}),
        );
        let data = page.json();
        let got = seqs(&data);
        if got.is_empty() {
            break;
        }
        assert!(
            got.first().is_some_and(|s| *s > since),
            "a page starts above since={since}: {}",
            page.text
        );
        let rest = data["matching"].as_u64().unwrap_or(0) - got.len() as u64;
        if rest > 0 {
            assert!(
                page.text.contains(&format!("shows the {rest} after these")),
                "{}",
                page.text
            );
        }
        since = data["last_seq"]
            .as_u64()
            .expect("a page names its last seq");
        assert!(
            page.text.contains(&format!("Next: since={since}")),
            "{}",
            page.text
        );
        seen.extend(got);
    }
    let unique: BTreeSet<u64> = seen.iter().copied().collect();
    assert_eq!(unique.len(), seen.len(), "no snapshot twice: {seen:?}");
    assert!(
        seen.len() >= every.len() && seen[..every.len()] == every[..],
        "every snapshot seen once, in order: {} paged vs {} held\npaged {seen:?}\nheld {every:?}",
        seen.len(),
        every.len()
    );
    assert_all_running(&server);
}

/// The seq of the snapshot a wait returned ("#seq stop …").
fn waited_seq(server: &Server, args: Value) -> u64 {
    let r = ok(server, "debug_wait_for_event", args);
    r.text
        .strip_prefix('#')
        .and_then(|t| t.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a snapshot, not {}", r.text))
}

/// The seq of the first snapshot of `bp` after `seq`.
fn next_after(server: &Server, bp: &str, seq: u64) -> u64 {
    let r = ok(
        server,
        "debug_get_traces",
        json!({"bp_id": bp, "since": seq, "limit": 1}),
    );
    seqs(&r.json())[0]
}

#[test]
fn waiting_returns_each_traced_snapshot_once_in_order_with_or_without_bp_id() {
    let (_jvm, server) = attached_orders();
    let id = traced_loop(&server, 0);
    let on_bp = json!({"bp_id": id, "timeout_ms": 20000});
    let a = waited_seq(&server, on_bp.clone());
    let b = waited_seq(&server, on_bp.clone());
    assert!(
        b > a,
        "the next snapshot, not the same one again: #{a} then #{b}"
    );
    assert_eq!(b, next_after(&server, &id, a), "nothing skipped after #{a}");
    // Without bp_id traced snapshots wake the wait too (one arrives about
    // every 10 ms), and each call again returns the one after the last.
    let any = json!({"timeout_ms": 20000});
    let c = waited_seq(&server, any.clone());
    let d = waited_seq(&server, any);
    assert!(c > b && d > c, "#{b}, #{c}, #{d}");
    assert_eq!(d, next_after(&server, &id, c), "nothing skipped after #{c}");
    // The bp_id cursor goes on from where it was, not from the others'.
    let e = waited_seq(&server, on_bp);
    assert_eq!(e, next_after(&server, &id, b), "#{e} follows #{b}");
    assert_all_running(&server);
}
