//! The questions about time (#40), asked as a new user would, through the
//! real binary against real JVMs: which method is slow and for which
//! input with no method named, where a slow call's time went, how a
//! method is doing (calls, throws, latency), and which code burns the
//! CPU. Each prints its `QUESTION` line and holds its budget of calls.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;

use super::{Asker, attached, int_after, left_clean};
use crate::support::java::{Jvm, JvmOpts};
use crate::support::poll_until_msg;

const WAIT: Duration = Duration::from_secs(20);

fn started(main: &str, ready: &str, java_home: PathBuf, args: Vec<String>) -> Jvm {
    let jvm = Jvm::start(
        main,
        JvmOpts {
            java_home: Some(java_home),
            args,
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line(ready, WAIT);
    jvm
}

/// Which method is slow, and for which input, with no method named:
/// time every method of the package's classes, then wait for the first
/// slow call. The fixture's `Store.find` (and so `Front.handle`) is slow
/// for the ids with `id % 7 == 3`.
pub(super) fn slow_method_unnamed(java_home: PathBuf) {
    let jvm = started("slow.Front", "slow front started", java_home, Vec::new());
    let server = attached(&jvm, json!({}));
    let mut q = Asker::new(&server);
    q.ask(
        "debug_set_stop",
        json!({"kind": "method_exit", "class_pattern": "slow.*", "min_duration_ms": 50}),
    );
    let first = q.ask("debug_wait_for_event", json!({"timeout_ms": 20000}));
    let text = &first.text;
    assert!(
        text.contains("slow.Store.find") || text.contains("slow.Front.handle"),
        "the slow method is named: {text}"
    );
    let id = int_after(text, "id=").unwrap_or_else(|| panic!("its input: {text}"));
    assert_eq!(id % 7, 3, "a slow input: {text}");
    assert!(text.contains("duration: "), "its time: {text}");
    q.done("slow_method_unnamed");
    left_clean(&jvm, server, &["slow.Front", "slow.Store"]);
}

/// Where a slow call's time went: time each call `checkout` makes, kept
/// past a threshold only the slow ids reach, then wait for one.
pub(super) fn where_time_went(java_home: PathBuf) {
    use crate::probes::callees::{FIND_SHARE, share_of};
    let jvm = started("slow.Checkout", "checkout started", java_home, Vec::new());
    let server = attached(&jvm, json!({}));
    let mut q = Asker::new(&server);
    q.ask(
        "debug_set_stop",
        json!({"kind": "method_exit", "class_pattern": "slow.Checkout", "method": "checkout",
               "min_duration_ms": 100, "callees": true}),
    );
    let first = q.ask("debug_wait_for_event", json!({"timeout_ms": 20000}));
    let text = &first.text;
    let line = text
        .lines()
        .find(|l| l.contains("Store.find ") && l.contains(" %)"))
        .unwrap_or_else(|| panic!("the callees: {text}"));
    let at = line.find("Store.find").unwrap_or_default();
    let share = share_of(&line[at..], "Store.find").unwrap_or_else(|| panic!("{line}"));
    assert!(
        (share - FIND_SHARE).abs() <= 10.0,
        "share {share} % against the truth {FIND_SHARE:.1} %: {text}"
    );
    q.done("where_time_went");
    left_clean(&jvm, server, &["slow.Checkout"]);
}

/// How a method called ~1,000 times a second is doing: its statistics,
/// then the listing, whose calls and throws match the program's own.
pub(super) fn method_stats(java_home: PathBuf) {
    use crate::probes::stats::since_arming;
    let go = std::env::temp_dir().join(format!(
        "jvmscope-question-stats-{}-{}",
        std::process::id(),
        java_home.display().to_string().len()
    ));
    let _ = std::fs::remove_file(&go);
    let jvm = started(
        "stats.Counted",
        "counted ready",
        java_home,
        vec![go.display().to_string()],
    );
    let server = attached(&jvm, json!({}));
    let mut q = Asker::new(&server);
    q.ask(
        "debug_set_stop",
        json!({"kind": "method_exit", "class_pattern": "stats.Counted", "method": "work",
               "stats": true}),
    );
    std::fs::write(&go, b"go").expect("the go file");
    let done = jvm.wait_for_line("burst done", WAIT);
    let _ = std::fs::remove_file(&go);
    let own = |key: &str| int_after(&done, key).unwrap_or_else(|| panic!("{key} in {done}"));
    let (calls, throws) = (own("calls=") as u64, own("throws=") as u64);
    // The drain reads the JVM's counters every 500 ms: the question is
    // asked once they hold the whole burst.
    poll_until_msg(WAIT, "the burst drained", || {
        let text = server
            .call("debug_list_stop_points", json!({}))
            .expect_ok()
            .text;
        since_arming(&text).filter(|(c, _, _)| *c >= calls)
    });
    let listing = q.ask("debug_list_stop_points", json!({}));
    let (c, t, _) = since_arming(&listing.text).expect("the since-arming line");
    let within = |seen: u64, own: u64| seen.abs_diff(own) * 20 <= own;
    assert!(
        within(c, calls) && within(t, throws),
        "{c} calls and {t} throws against the program's {calls} and {throws}: {}",
        listing.text
    );
    for figure in ["mean ", "p99 ", "max "] {
        assert!(listing.text.contains(figure), "{figure}: {}", listing.text);
    }
    q.done("method_stats");
    left_clean(&jvm, server, &["stats.Counted"]);
}

/// Which code burns the CPU: one profile names the burning method among
/// the top three by self samples, and its flame graph names it too.
pub(super) fn cpu_burner(java_home: PathBuf) {
    use crate::profile::{read_resource, top_self, uri_after};
    let jvm = started("Burner", "burner ready", java_home, Vec::new());
    let server = attached(&jvm, json!({}));
    let mut q = Asker::new(&server);
    let reply = q.ask("debug_profile", json!({"duration_ms": 2000}));
    let text = &reply.text;
    let top = top_self(text);
    assert!(
        top.iter().take(3).any(|m| m == "Burner.spin"),
        "{top:?}\n{text}"
    );
    let (mime, svg) = read_resource(&server, &uri_after(text, "Flame graph: "));
    assert_eq!(mime, "image/svg+xml");
    assert!(svg.contains("Burner.spin"), "the SVG names the hot method");
    q.done("cpu_burner");
    left_clean(&jvm, server, &[]);
}
