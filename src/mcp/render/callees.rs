//! Where a timed call's time went, in one line: its callees by site,
//! slowest first, each with its share of the call, then what no callee
//! accounts for (`own code`).

use crate::model::callees::{CalleeTime, Callees};

/// Sites named one by one; the rest are summed.
const SHOWN: usize = 6;

/// `Store.find 121.0 ms (97 %) at line 41; parse ×20 1.1 ms (1 %) at
/// line 40; own code 2.2 ms`.
pub fn line(c: &Callees) -> String {
    let sites = merged(&c.sites);
    if sites.is_empty() {
        return format!("no call made; own code {}", time(c.total_ns));
    }
    let share = |ns: u64| -> String {
        let pct = (ns as f64 * 100.0 / c.total_ns.max(1) as f64)
            .round()
            .min(100.0);
        if pct >= 1.0 {
            format!(" ({pct} %)")
        } else {
            String::new()
        }
    };
    let mut parts: Vec<String> = sites
        .iter()
        .take(SHOWN)
        .map(|s| {
            let name = if s.site.own {
                s.site.method.clone()
            } else {
                let class = s.site.class.rsplit('.').next().unwrap_or(&s.site.class);
                format!("{class}.{}", s.site.method)
            };
            let count = if s.calls > 1 {
                format!(" ×{}", s.calls)
            } else {
                String::new()
            };
            let at = s
                .site
                .line
                .map(|l| format!(" at line {l}"))
                .unwrap_or_default();
            let threw = if s.threw { ", threw" } else { "" };
            format!("{name}{count} {}{}{at}{threw}", time(s.ns), share(s.ns))
        })
        .collect();
    let rest: Vec<&CalleeTime> = sites.iter().skip(SHOWN).collect();
    if !rest.is_empty() {
        let ns: u64 = rest.iter().map(|s| s.ns).sum();
        parts.push(format!(
            "{} more sites {}{}",
            rest.len(),
            time(ns),
            share(ns)
        ));
    }
    parts.push(format!("own code {}", time(c.own_ns())));
    parts.join("; ")
}

/// The sites that made a call, slowest first, those calling the same
/// method from the same line (a `finally` copied into each way out of a
/// `try`) as one.
fn merged(sites: &[CalleeTime]) -> Vec<CalleeTime> {
    let mut out: Vec<CalleeTime> = Vec::new();
    for s in sites.iter().filter(|s| s.calls > 0) {
        match out.iter_mut().find(|o| o.site == s.site) {
            Some(o) => {
                o.calls += s.calls;
                o.ns += s.ns;
                o.threw |= s.threw;
            }
            None => out.push(s.clone()),
        }
    }
    out.sort_by_key(|s| std::cmp::Reverse(s.ns));
    out
}

/// A span in the unit that reads best, one decimal.
fn time(ns: u64) -> String {
    match ns {
        0..1_000 => format!("{ns} ns"),
        1_000..1_000_000 => format!("{:.1} µs", ns as f64 / 1e3),
        _ => format!("{:.1} ms", ns as f64 / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::callees::CalleeSite;

    fn at(class: &str, method: &str, line: u32, calls: u64, ms: f64) -> CalleeTime {
        CalleeTime {
            site: CalleeSite {
                class: class.into(),
                method: method.into(),
                line: Some(line),
                own: class == "app.Front",
            },
            calls,
            ns: (ms * 1e6) as u64,
            threw: false,
        }
    }

    #[test]
    fn the_slowest_callee_leads_with_its_share_and_a_loop_is_one_site() {
        let c = Callees {
            total_ns: 124_300_000,
            sites: vec![
                at("app.Front", "parse", 40, 1, 1.1),
                at("app.Store", "find", 41, 1, 121.0),
                at("app.Front", "render", 42, 20, 1.0),
                at("app.Store", "close", 43, 0, 0.0),
            ],
        };
        assert_eq!(
            line(&c),
            "Store.find 121.0 ms (97 %) at line 41; parse 1.1 ms (1 %) at line 40; \
             render ×20 1.0 ms (1 %) at line 42; own code 1.2 ms"
        );
    }

    #[test]
    fn copies_of_a_finally_read_as_one_site_and_a_throw_is_said() {
        let mut thrown = at("java.util.List", "add", 9, 1, 2.0);
        thrown.threw = true;
        let c = Callees {
            total_ns: 10_000_000,
            sites: vec![at("java.util.List", "add", 9, 2, 3.0), thrown],
        };
        assert_eq!(
            line(&c),
            "List.add ×3 5.0 ms (50 %) at line 9, threw; own code 5.0 ms"
        );
        let none = Callees {
            total_ns: 2_000,
            sites: vec![at("app.Store", "find", 41, 0, 0.0)],
        };
        assert_eq!(line(&none), "no call made; own code 2.0 µs");
    }
}
