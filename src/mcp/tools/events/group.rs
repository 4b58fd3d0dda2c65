//! Traces at a glance: snapshots grouped by the values of one or more
//! keys (a local, a trace expression, `thread`, `location`, `caller`: the
//! nearest caller frame), each group
//! with its count, first and last sequence numbers and one example; and
//! the compact view that leaves out what repeats from one snapshot to the
//! next.

use std::collections::HashMap;

use crate::actors::TraceRecord;
use crate::mcp::render::value;
use crate::model::callees::Callees;
use crate::model::shown::Detail;

/// Distinct groups shown by default.
pub const DEFAULT_GROUPS: usize = 20;
/// Most groups kept while counting; past it, snapshots are counted as cut.
const MAX_DISTINCT: usize = 1_000;

/// The value a snapshot has for `key`, as the agent reads it; `None` when
/// the snapshot carries no such key.
pub fn key_value(t: &TraceRecord, key: &str) -> Option<String> {
    match key {
        "thread" => return Some(t.thread_name.to_string()),
        "location" => return Some(t.location.to_string()),
        "stop" => return Some(t.stop.to_string()),
        // Who made the call: the nearest caller frame, when it was taken.
        "caller" => return t.callers.first().map(|c| c.to_string()),
        _ => {}
    }
    if let Some((_, v)) = t.locals.iter().find(|(n, _)| &**n == key) {
        return Some(value::key(v));
    }
    // A wire exit reports its value as the detail `returned`, a probe's as
    // the column `returnValue` (the name conditions use): either name
    // groups both.
    let key = match key {
        "returnValue" => "returned",
        other => other,
    };
    if key == "returned"
        && let Some((_, v)) = t.locals.iter().find(|(n, _)| &**n == "returnValue")
    {
        return Some(value::key(v));
    }
    // A trace expression reads as `expr[i] <source>`: either part names it.
    t.details
        .iter()
        .find(|(k, _)| {
            k == key
                || k.strip_prefix("expr[")
                    .and_then(|r| r.split_once("] "))
                    .is_some_and(|(i, src)| src == key || format!("expr[{i}]") == key)
        })
        .map(|(_, d)| match d {
            Detail::Value(v) => value::key(v),
            other => value::detail(other),
        })
}

/// How long a snapshot's call (or monitor pair) took, in ns: a probe's
/// timing in the JVM, or a pair measured here.
pub fn took_ns(t: &TraceRecord) -> Option<u64> {
    t.details.iter().find_map(|(_, d)| match d {
        Detail::CallTime(ns) => Some(*ns),
        Detail::Duration(Ok(ms)) => {
            Some(u64::try_from(*ms).unwrap_or(u64::MAX / 1_000_000) * 1_000_000)
        }
        _ => None,
    })
}

/// The spread of a group's durations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spread {
    /// Snapshots that carried a duration.
    pub timed: usize,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
}

impl Spread {
    /// Nearest-rank percentiles of `ns` (sorted here); `None` when empty.
    pub fn of(mut ns: Vec<u64>) -> Option<Spread> {
        if ns.is_empty() {
            return None;
        }
        ns.sort_unstable();
        let rank = |p: usize| ns[(ns.len() * p).div_ceil(100).clamp(1, ns.len()) - 1];
        Some(Spread {
            timed: ns.len(),
            p50_ns: rank(50),
            p99_ns: rank(99),
            max_ns: ns[ns.len() - 1],
        })
    }
}

/// One group of snapshots.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// The key values, in the order the keys were given.
    pub values: Vec<String>,
    pub count: usize,
    pub first_seq: u64,
    pub last_seq: u64,
    /// The durations its snapshots carry (method timing, monitor pairs).
    pub spread: Option<Spread>,
    /// Where its calls' time went, the mean over the snapshots that
    /// timed their callees, and how many did.
    pub callees: Option<(usize, Callees)>,
}

/// Snapshots grouped by keys, biggest groups first (ties: the earliest).
pub struct Grouping {
    pub groups: Vec<Group>,
    pub distinct: usize,
    /// Snapshots in groups past the shown ones (or past the counting cap).
    pub left_out: usize,
    /// Snapshots with none of the keys.
    pub without_keys: usize,
    /// Counting stopped making new groups at the cap.
    pub saturated: bool,
}

/// Groups `traces` (oldest first) by `keys`, keeping the `max` biggest.
pub fn group(traces: &[TraceRecord], keys: &[String], max: usize) -> Grouping {
    let mut index: HashMap<Vec<String>, usize> = HashMap::new();
    let mut groups: Vec<Group> = Vec::new();
    let mut took: Vec<Vec<u64>> = Vec::new();
    let (mut without_keys, mut other, mut saturated) = (0, 0, false);
    for t in traces {
        let values: Vec<Option<String>> = keys.iter().map(|k| key_value(t, k)).collect();
        if values.iter().all(Option::is_none) {
            without_keys += 1;
            continue;
        }
        let values: Vec<String> = values
            .into_iter()
            .map(|v| v.unwrap_or_else(|| "(absent)".into()))
            .collect();
        match index.get(&values) {
            Some(&i) => {
                groups[i].count += 1;
                groups[i].last_seq = t.seq;
                took[i].extend(took_ns(t));
                add_callees(&mut groups[i].callees, t);
            }
            None if groups.len() >= MAX_DISTINCT => {
                saturated = true;
                other += 1;
            }
            None => {
                index.insert(values.clone(), groups.len());
                took.push(took_ns(t).into_iter().collect());
                let mut g = Group {
                    values,
                    count: 1,
                    first_seq: t.seq,
                    last_seq: t.seq,
                    spread: None,
                    callees: None,
                };
                add_callees(&mut g.callees, t);
                groups.push(g);
            }
        }
    }
    for (g, ns) in groups.iter_mut().zip(took) {
        g.spread = Spread::of(ns);
        if let Some((n, c)) = &mut g.callees {
            mean(c, *n as u64);
        }
    }
    groups.sort_by(|a, b| b.count.cmp(&a.count).then(a.first_seq.cmp(&b.first_seq)));
    let distinct = groups.len();
    let left_out = groups.iter().skip(max).map(|g| g.count).sum::<usize>() + other;
    groups.truncate(max);
    Grouping {
        groups,
        distinct,
        left_out,
        without_keys,
        saturated,
    }
}

/// Adds `t`'s callees, if it timed them, to a group's sums.
fn add_callees(sums: &mut Option<(usize, Callees)>, t: &TraceRecord) {
    let Some(c) = t.details.iter().find_map(|(_, d)| match d {
        Detail::Callees(c) => Some(c),
        _ => None,
    }) else {
        return;
    };
    let Some((n, acc)) = sums else {
        *sums = Some((1, c.clone()));
        return;
    };
    *n += 1;
    acc.total_ns += c.total_ns;
    for s in &c.sites {
        match acc.sites.iter_mut().find(|a| a.site == s.site) {
            Some(a) => {
                a.ns += s.ns;
                a.calls += s.calls;
                a.threw |= s.threw;
            }
            None => acc.sites.push(s.clone()),
        }
    }
}

/// Sums over `n` calls as one call's mean (a count rounded).
fn mean(c: &mut Callees, n: u64) {
    let n = n.max(1);
    c.total_ns /= n;
    for s in &mut c.sites {
        s.ns /= n;
        s.calls = (s.calls + n / 2) / n;
    }
}

/// The details of `t` that differ from those of the snapshot before it of
/// the same stop point: what a compact listing shows. A value the agent
/// asked for (a trace expression's, the returned one) is always shown:
/// a row without it would lose its category.
pub fn changed_details<'a>(
    t: &'a TraceRecord,
    previous: Option<&TraceRecord>,
) -> Vec<&'a (String, Detail)> {
    t.details
        .iter()
        .filter(|d| {
            asked_for(&d.0) || previous.is_none_or(|p| p.stop != t.stop || !p.details.contains(d))
        })
        .collect()
}

/// A detail that carries a value asked for: a trace expression's or the
/// method's return.
pub fn asked_for(key: &str) -> bool {
    key.starts_with("expr[") || key == "returned"
}

/// Most names listed when saying which keys the snapshots carry.
const MAX_CARRIED: usize = 12;

/// For each key no snapshot of `all` carries, why, as a line: the keys
/// they carry instead, and for a field path, that it is captured only
/// when asked for at arming. Empty when every key is carried somewhere
/// (or there is nothing to group).
pub fn missing(all: &[TraceRecord], keys: &[String]) -> Vec<String> {
    let absent: Vec<&String> = keys
        .iter()
        .filter(|k| !all.iter().any(|t| key_value(t, k).is_some()))
        .collect();
    if absent.is_empty() || all.is_empty() {
        return Vec::new();
    }
    let mut locals: Vec<&str> = Vec::new();
    let mut exprs: Vec<&str> = Vec::new();
    for t in all {
        for (n, _) in &t.locals {
            if !locals.contains(&&**n) {
                locals.push(n);
            }
        }
        for (k, _) in t.details.iter().filter(|(k, _)| asked_for(k)) {
            if !exprs.contains(&k.as_str()) {
                exprs.push(k);
            }
        }
    }
    let list = |names: &[&str]| {
        let mut l = names
            .iter()
            .take(MAX_CARRIED)
            .copied()
            .collect::<Vec<_>>()
            .join(", ");
        if names.len() > MAX_CARRIED {
            l.push_str(", …");
        }
        l
    };
    let mut carried = Vec::new();
    if !locals.is_empty() {
        carried.push(format!("locals {}", list(&locals)));
    }
    if !exprs.is_empty() {
        carried.push(format!("recorded values {}", list(&exprs)));
    }
    carried.push("thread, location, stop".to_string());
    absent
        .into_iter()
        .map(|k| {
            let mut line = format!(
                "No snapshot carries {k}. They carry: {}.",
                carried.join("; ")
            );
            if is_path(k) {
                line.push_str(&format!(
                    " A field path is recorded only when asked for at arming: trace_expr: [{k:?}] \
                     (debug_set_stop, or debug_update_stop_point on the stop point); later hits carry it."
                ));
            }
            line
        })
        .collect()
}

/// Whether `key` reads as a field path (`li.category`, `this.cfg.mode`).
fn is_path(key: &str) -> bool {
    key.contains('.')
        && key.split('.').all(|part| {
            part.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
                && part
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
        })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Instant;

    use super::*;
    use crate::actors::ThreadId;
    use crate::model::Prim;
    use crate::model::shown::{Scalar, Shown};

    fn snap(seq: u64, qty: i32, total: i64) -> TraceRecord {
        TraceRecord {
            seq,
            at: Instant::now(),
            stop: Arc::from("bp_1"),
            thread: ThreadId(1),
            thread_name: Arc::from("main"),
            location: Arc::from("Shop.price:12"),
            callers: Vec::new(),
            locals: vec![("qty".into(), Shown::Scalar(Scalar::Prim(Prim::Int(qty))))],
            locals_note: None,
            details: vec![(
                "expr[0] qty * 3".into(),
                Detail::Value(Shown::Scalar(Scalar::Prim(Prim::Long(total)))),
            )],
            overridden: false,
        }
    }

    #[test]
    fn groups_count_every_snapshot_and_keep_the_biggest() {
        let t: Vec<TraceRecord> = (1..=10).map(|i| snap(i, (i % 3) as i32, 0)).collect();
        let g = group(&t, &["qty".to_string()], 2);
        assert_eq!(g.distinct, 3);
        assert_eq!(g.groups[0].values, vec!["1".to_string()]);
        assert_eq!((g.groups[0].count, g.groups[0].first_seq), (4, 1));
        assert_eq!(g.groups[0].last_seq, 10);
        let shown: usize = g.groups.iter().map(|g| g.count).sum();
        assert_eq!(shown + g.left_out, 10);
    }

    #[test]
    fn a_key_no_snapshot_carries_is_explained_with_the_keys_they_do() {
        let t = vec![snap(1, 2, 6), snap(2, 3, 9)];
        let why = missing(&t, &["li.category".to_string(), "qty".to_string()]);
        assert_eq!(why.len(), 1, "{why:?}");
        assert!(
            why[0].starts_with("No snapshot carries li.category."),
            "{why:?}"
        );
        assert!(why[0].contains("locals qty"), "{why:?}");
        assert!(
            why[0].contains("recorded values expr[0] qty * 3"),
            "{why:?}"
        );
        assert!(why[0].contains("trace_expr: [\"li.category\"]"), "{why:?}");
        let plain = missing(&t, &["nosuch".to_string()]);
        assert!(!plain[0].contains("trace_expr"), "{plain:?}");
        assert!(missing(&t, &["qty".to_string()]).is_empty());
        assert!(missing(&[], &["li.category".to_string()]).is_empty());
    }

    #[test]
    fn calls_group_by_their_nearest_caller_and_one_without_callers_lacks_the_key() {
        let from = |seq: u64, caller: &str| {
            let mut t = snap(seq, 1, 0);
            t.callers = vec![Arc::from(caller), Arc::from("Main.run:3")];
            t
        };
        let all = vec![
            from(1, "Shop.order:20"),
            from(2, "Shop.report:31"),
            from(3, "Shop.order:20"),
            snap(4, 1, 0),
        ];
        let g = group(&all, &["location".to_string(), "caller".to_string()], 5);
        let by: Vec<(&[String], usize)> = g
            .groups
            .iter()
            .map(|g| (g.values.as_slice(), g.count))
            .collect();
        let key = |c: &str| vec!["Shop.price:12".to_string(), c.to_string()];
        assert_eq!(by[0], (key("Shop.order:20").as_slice(), 2));
        assert_eq!(by[1], (key("Shop.report:31").as_slice(), 1));
        assert_eq!(by[2], (key("(absent)").as_slice(), 1));
        assert_eq!(key_value(&snap(5, 1, 0), "caller"), None);
    }

    #[test]
    fn an_expression_is_named_by_its_source_or_its_index() {
        let t = snap(1, 2, 6);
        assert_eq!(key_value(&t, "qty * 3").as_deref(), Some("6L"));
        assert_eq!(key_value(&t, "expr[0]").as_deref(), Some("6L"));
        assert_eq!(key_value(&t, "nosuch"), None);
        let g = group(&[t], &["nosuch".to_string()], 5);
        assert_eq!((g.groups.len(), g.without_keys), (0, 1));
    }

    #[test]
    fn a_return_value_groups_by_either_name_over_the_wire_or_from_a_probe() {
        let seven = || Shown::Scalar(Scalar::Prim(Prim::Int(7)));
        let mut wire = snap(1, 2, 6);
        wire.details = vec![("returned".into(), Detail::Value(seven()))];
        let mut probe = snap(2, 2, 6);
        probe.locals.push(("returnValue".into(), seven()));
        for key in ["returnValue", "returned"] {
            assert_eq!(key_value(&wire, key).as_deref(), Some("7"), "{key}");
            assert_eq!(key_value(&probe, key).as_deref(), Some("7"), "{key}");
        }
    }

    #[test]
    fn a_group_of_timed_calls_has_nearest_rank_percentiles() {
        let timed = |seq: u64, ns: u64| {
            let mut t = snap(seq, 1, 0);
            t.details = vec![("duration".into(), Detail::CallTime(ns))];
            t
        };
        let mut all: Vec<TraceRecord> = (1..=100).map(|i| timed(i, i * 1_000)).collect();
        all.push(snap(101, 1, 0));
        let g = group(&all, &["qty".to_string()], 5);
        let s = g.groups[0].spread.expect("timed");
        assert_eq!(g.groups[0].count, 101);
        assert_eq!(
            (s.timed, s.p50_ns, s.p99_ns, s.max_ns),
            (100, 50_000, 99_000, 100_000)
        );
        assert_eq!(
            Spread::of(vec![7]).map(|s| (s.p50_ns, s.p99_ns)),
            Some((7, 7))
        );
        assert_eq!(Spread::of(Vec::new()), None);
        let untimed = group(&[snap(1, 2, 0)], &["qty".to_string()], 5);
        assert_eq!(untimed.groups[0].spread, None);
    }

    #[test]
    fn compact_leaves_out_details_that_repeat_but_never_an_asked_value() {
        let caught = |seq, qty| {
            let mut t = snap(seq, qty, 3);
            t.details.push((
                "message".into(),
                Detail::Value(Shown::Scalar(Scalar::Prim(Prim::Int(1)))),
            ));
            t
        };
        let (a, b) = (caught(1, 1), caught(2, 2));
        let kept: Vec<&str> = changed_details(&b, Some(&a))
            .iter()
            .map(|d| d.0.as_str())
            .collect();
        assert_eq!(kept, vec!["expr[0] qty * 3"]);
        assert_eq!(changed_details(&b, None).len(), 2);
    }

    #[test]
    fn a_group_of_timed_calls_keeps_the_mean_of_their_callees() {
        use crate::model::callees::{CalleeSite, CalleeTime};
        let with = |seq: u64, find_ms: u64, loops: u64| {
            let mut t = snap(seq, 1, 0);
            let site = |method: &str| CalleeSite {
                class: "app.Store".into(),
                method: method.into(),
                line: Some(4),
                own: false,
            };
            t.details = vec![(
                "callees".into(),
                Detail::Callees(Callees {
                    total_ns: (find_ms + 10) * 1_000_000,
                    sites: vec![
                        CalleeTime {
                            site: site("find"),
                            calls: 1,
                            ns: find_ms * 1_000_000,
                            threw: false,
                        },
                        CalleeTime {
                            site: site("price"),
                            calls: loops,
                            ns: 10_000_000,
                            threw: seq == 2,
                        },
                    ],
                }),
            )];
            t
        };
        let g = group(
            &[with(1, 100, 4), with(2, 200, 6), snap(3, 1, 0)],
            &["qty".into()],
            5,
        );
        let (n, c) = g.groups[0].callees.clone().expect("callees");
        assert_eq!((n, c.total_ns), (2, 160_000_000));
        let find = &c.sites[0];
        assert_eq!((find.calls, find.ns, find.threw), (1, 150_000_000, false));
        let price = &c.sites[1];
        assert_eq!((price.calls, price.ns, price.threw), (5, 10_000_000, true));
        let untimed = group(&[snap(1, 2, 0)], &["qty".to_string()], 5);
        assert_eq!(untimed.groups[0].callees, None);
    }
}
