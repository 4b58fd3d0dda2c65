//! Which code leaks pool connections, asked as a new user would: the
//! service (`pool.Service`) borrows from a pool of 32, one path never
//! gives its connection back, and a reaper reclaims what was abandoned.
//! Time every method of the pool, then count its calls by method and
//! caller: the leaking caller takes more than it gives back.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;

use super::{Asker, attached, left_clean};
use crate::support::java::{Jvm, JvmOpts};

const WAIT: Duration = Duration::from_secs(20);

/// The calls of each `(method, caller)` group in a grouped listing's
/// lines (`  location=pool.Pool.acquire:28 caller=pool.Service.report:26 …
/// 41 snapshots …`), keyed by the method's name and the caller's
/// `Class.method`.
fn calls_by_caller(text: &str) -> HashMap<(String, String), u64> {
    let mut out = HashMap::new();
    for line in text.lines() {
        let field = |key: &str| {
            let at = line.find(key)? + key.len();
            line[at..].split_whitespace().next().map(str::to_string)
        };
        let (Some(location), Some(caller)) = (field("location="), field("caller=")) else {
            continue;
        };
        let method = |at: &str| at.split(':').next().unwrap_or(at).to_string();
        let count = line
            .split_whitespace()
            .collect::<Vec<_>>()
            .windows(2)
            .find(|w| w[1].starts_with("snapshot"))
            .and_then(|w| w[0].replace(',', "").parse::<u64>().ok());
        if let Some(n) = count {
            *out.entry((method(&location), method(&caller))).or_default() += n;
        }
    }
    out
}

/// Which code takes pool connections and never gives them back: one
/// class-wide timing of `pool.Pool`, then its snapshots grouped by
/// location and caller, read after a second of traffic.
pub(super) fn leaked_connection(java_home: PathBuf) {
    let jvm = Jvm::start(
        "pool.Service",
        JvmOpts {
            java_home: Some(java_home),
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("pool service started", WAIT);
    let server = attached(&jvm, json!({}));
    let mut q = Asker::new(&server);
    q.ask(
        "debug_set_stop",
        json!({"kind": "method_exit", "class_pattern": "pool.Pool", "min_duration_ms": 0}),
    );
    // A second of traffic: the reaper reports once a second.
    let at = jvm.line_count();
    let reclaimed = |l: &str| l.starts_with("pool: ");
    let at = jvm.wait_for_line_since(at, reclaimed, WAIT).0 + 1;
    jvm.wait_for_line_since(at, reclaimed, WAIT);
    let grouped = q.ask(
        "debug_get_traces",
        json!({"group_by": ["location", "caller"]}),
    );
    let text = &grouped.text;
    let calls = calls_by_caller(text);
    let of = |method: &str, caller: &str| {
        calls
            .get(&(
                format!("pool.Pool.{method}"),
                format!("pool.Service.{caller}"),
            ))
            .copied()
            .unwrap_or(0)
    };
    let (report_took, report_gave) = (of("acquire", "report"), of("release", "report"));
    let (orders_took, orders_gave) = (of("acquire", "orders"), of("release", "orders"));
    // One report in five never releases; at the ends of the sample a
    // worker may be between its acquire and its release.
    assert!(
        report_took >= 20 && report_took >= report_gave + 4 && report_gave * 10 >= report_took * 6,
        "report takes {report_took} and gives back {report_gave}: {text}"
    );
    assert!(
        orders_took >= 20 && orders_took.abs_diff(orders_gave) <= 2,
        "orders takes {orders_took} and gives back {orders_gave}: {text}"
    );
    q.done("leaked_connection");
    crate::dump::assert_none_suspended(&server);
    left_clean(&jvm, server, &["pool.Pool"]);
}
