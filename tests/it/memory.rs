//! Where the memory and the CPU go, against real JVMs (JDK 17 and
//! Temurin 25) through the real binary: a leaking static map found in
//! three calls (two histograms rank the leaking classes first with the
//! fixture's own rate, then the referrer chain names the static field),
//! over both channels; the one spinning thread among idle ones ranked
//! first with its stack in one call; and the vital signs read from
//! hsperfdata matching `jstat -gcutil` and `jcmd Thread.print` on the
//! same JVM, which runs without JDWP.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::json;

use crate::support::java::{Jvm, JvmOpts, default_java_home, temurin25_required};
use crate::support::mcp::Server;
use crate::support::text::number_after;

/// One histogram row as shown: (class, instances, growth per second).
#[derive(Debug)]
struct Row {
    class: String,
    instances: i64,
    bytes: Option<i64>,
    per_sec: Option<f64>,
}

fn rows(text: &str) -> Vec<Row> {
    text.lines()
        .filter(|l| l.starts_with("  "))
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let [instances, bytes, _growth, per, class] = f.as_slice() else {
                return None;
            };
            Some(Row {
                class: class.to_string(),
                instances: instances.parse().ok()?,
                bytes: bytes.parse().ok(),
                per_sec: per.parse().ok(),
            })
        })
        .collect()
}

pub(crate) fn leak(java_home: PathBuf) -> (Jvm, f64) {
    let jvm = Jvm::start(
        "Leak",
        JvmOpts {
            java_home: Some(java_home),
            args: vec!["500".into()],
            ..JvmOpts::default()
        },
    );
    let line = jvm.wait_for_line("leak rate=", Duration::from_secs(20));
    let rate = number_after(&line, "leak rate=").expect("the fixture prints its rate") as f64;
    (jvm, rate)
}

/// Waits until the fixture's map has grown by `entries` since now.
fn wait_for_growth(jvm: &Jvm, entries: u64) {
    let seen = jvm.line_count();
    let start = jvm
        .lines()
        .iter()
        .rev()
        .find_map(|l| number_after(l, "leak size="))
        .unwrap_or(0);
    jvm.wait_for_line_since(
        seen,
        |l| number_after(l, "leak size=").is_some_and(|n| n >= start + entries),
        Duration::from_secs(30),
    );
}

/// The leaking classes lead by growth, each near the fixture's rate.
fn assert_leak_ranked(text: &str, rate: f64) {
    let rows = rows(text);
    // Keys, values, their nodes and the values' arrays all grow at the same rate.
    let top: Vec<&str> = rows.iter().take(4).map(|r| r.class.as_str()).collect();
    for class in ["Leak$Key", "Leak$Payload"] {
        assert!(
            top.contains(&class),
            "{class} not in the top 4 {top:?}:\n{text}"
        );
        let row = rows.iter().find(|r| r.class == class).expect("listed");
        let per = row.per_sec.expect("growth per second shown");
        assert!(
            per > rate * 0.6 && per < rate * 1.4,
            "{class} grows {per}/s, the fixture adds {rate}/s:\n{text}"
        );
        assert!(row.instances > 0, "{text}");
    }
}

/// The leak question in three calls after attach: two histograms, then
/// the holders of one leaked key. Read-only mode allows all three.
fn leak_in_three_calls(java_home: PathBuf) {
    let (jvm, rate) = leak(java_home);
    let server = crate::dump::attached_read_only(&jvm);
    // Every tool call after the attach goes through `ask`, which counts.
    let mut calls = 0;
    let mut ask = |tool: &str, args: serde_json::Value| {
        calls += 1;
        server.call(tool, args).expect_ok()
    };
    let first = ask("debug_heap", json!({"kind": "histogram", "top": 10}));
    assert!(first.text.contains("via attach socket"), "{}", first.text);
    assert!(first.text.contains("at safepoints"), "{}", first.text);
    wait_for_growth(&jvm, rate as u64 * 2);
    let second = ask("debug_heap", json!({"kind": "histogram", "top": 10}));
    assert_leak_ranked(&second.text, rate);
    let key = rows(&second.text)
        .into_iter()
        .find(|r| r.class == "Leak$Key")
        .expect("listed");
    assert!(key.bytes.is_some_and(|b| b > 0), "{}", second.text);
    let holders = ask(
        "debug_heap",
        json!({"kind": "holders", "class_name": "Leak$Key"}),
    );
    assert!(
        holders
            .text
            .contains("Leak.CACHE → HashMap{key} → Leak$Key\n"),
        "{}",
        holders.text
    );
    assert!(holders.text.contains("world stopped"), "{}", holders.text);
    assert_eq!(calls, 3, "the leak question takes three calls after attach");
    crate::dump::assert_none_suspended(&server);
}

#[test]
fn a_leak_is_found_in_three_calls_on_jdk17() {
    leak_in_three_calls(default_java_home());
}

#[test]
fn a_leak_is_found_in_three_calls_on_temurin25() {
    leak_in_three_calls(temurin25_required());
}

/// Over JDWP, in one call sampling twice; then the chain from a handle.
fn leak_over_jdwp(java_home: PathBuf) {
    let (jvm, rate) = leak(java_home);
    let server = crate::dump::attached(&jvm);
    let h = server
        .call(
            "debug_heap",
            json!({"kind": "histogram", "channel": "jdwp", "interval_ms": 2000, "top": 10}),
        )
        .expect_ok();
    assert!(h.text.contains("via JDWP InstanceCounts"), "{}", h.text);
    assert!(h.text.contains("two samples in this call"), "{}", h.text);
    assert_leak_ranked(&h.text, rate);
    let listed = server
        .call(
            "debug_heap",
            json!({"kind": "instances", "class_names": ["Leak$Payload"], "max_instances": 1}),
        )
        .expect_ok();
    let handle = listed
        .text
        .split_whitespace()
        .find(|w| w.starts_with("@0x"))
        .expect("a handle")
        .trim_end_matches([',', ';', '.'])
        .to_string();
    let holders = server
        .call("debug_heap", json!({"kind": "holders", "object": handle}))
        .expect_ok();
    assert!(
        holders
            .text
            .starts_with("Leak.CACHE → HashMap{value} → Leak$Payload@0x"),
        "{}",
        holders.text
    );
    // A budget below what the last walk of the channel cost is refused
    // before the world is stopped again.
    let refused = server
        .call(
            "debug_heap",
            json!({"kind": "histogram", "channel": "jdwp", "max_pause_ms": 0}),
        )
        .expect_tool_error();
    assert!(
        refused.text.starts_with("[PAUSE_BUDGET]"),
        "{}",
        refused.text
    );
}

#[test]
fn a_leak_is_found_over_jdwp_on_jdk17() {
    leak_over_jdwp(default_java_home());
}

#[test]
fn a_leak_is_found_over_jdwp_on_temurin25() {
    leak_over_jdwp(temurin25_required());
}

/// A CPU fixture started on `java_home`, ready, and a server attached to it.
fn cpu_fixture(main: &str, ready: &str, java_home: PathBuf) -> (Jvm, Server) {
    let jvm = Jvm::start(
        main,
        JvmOpts {
            java_home: Some(java_home),
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line(ready, Duration::from_secs(20));
    let server = crate::dump::attached(&jvm);
    (jvm, server)
}

/// The CPU question in one call: the spinner first, with its stack.
fn spinner_first(java_home: PathBuf) {
    let (_jvm, server) = cpu_fixture("Spinner", "spinner ready", java_home);
    // The CPU question, which thread and doing what, is this one call.
    let hot = server
        .call("debug_hot_threads", json!({"interval_ms": 1000, "top": 3}))
        .expect_ok();
    let first = hot.text.lines().nth(1).unwrap_or_default();
    assert!(first.starts_with("1. "), "{}", hot.text);
    assert!(first.contains("\"busy-spinner-worker\""), "{}", hot.text);
    assert!(first.contains("[busy-spinner-wo, tid "), "{}", hot.text);
    assert!(
        first.contains("stack samples while it was busy"),
        "{}",
        hot.text
    );
    let pct: f64 = first[3..]
        .split('%')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("a percentage");
    // Two shared cores: the spinner gets what the machine leaves it.
    assert!(pct > 5.0, "{}", hot.text);
    assert!(hot.text.contains("     Spinner.burn:"), "{}", hot.text);
    crate::dump::assert_none_suspended(&server);
}

#[test]
fn the_spinning_thread_ranks_first_on_jdk17() {
    spinner_first(default_java_home());
}

#[test]
fn the_spinning_thread_ranks_first_on_temurin25() {
    spinner_first(temurin25_required());
}

/// A thread that burns in bursts and waits between them is shown where it
/// burns: its stack is sampled while it is busy, not read once at the end
/// of the interval, when it is as likely to wait on its queue.
fn bursts_are_seen_where_they_burn(java_home: PathBuf) {
    let (_jvm, server) = cpu_fixture("Bursty", "bursty ready", java_home);
    let hot = server
        .call("debug_hot_threads", json!({"interval_ms": 2000, "top": 2}))
        .expect_ok();
    // The worker uses over half a core; the JIT may still rank above it
    // right after start-up on a loaded machine, so its row is looked up.
    let lines: Vec<&str> = hot.text.lines().collect();
    let row = lines
        .iter()
        .position(|l| l.contains("\"bursty-worker\""))
        .unwrap_or_else(|| panic!("no worker row: {}", hot.text));
    assert!(
        lines[row].contains("stack samples while it was busy"),
        "{}",
        hot.text
    );
    let stack: Vec<&str> = lines[row + 1..]
        .iter()
        .copied()
        .take_while(|l| l.starts_with("     "))
        .collect();
    assert!(
        stack.first().is_some_and(|f| f.contains("Bursty.crunch:")),
        "{}",
        hot.text
    );
    crate::dump::assert_none_suspended(&server);
}

#[test]
fn a_bursty_thread_is_seen_where_it_burns_on_jdk17() {
    bursts_are_seen_where_they_burn(default_java_home());
}

#[test]
fn a_bursty_thread_is_seen_where_it_burns_on_temurin25() {
    bursts_are_seen_where_they_burn(temurin25_required());
}

/// Runs a JDK tool and returns its stdout.
fn jdk_tool(java_home: &Path, tool: &str, args: &[&str]) -> String {
    let out = Command::new(java_home.join("bin").join(tool))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {tool}: {e}"));
    assert!(
        out.status.success(),
        "{tool}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A figure after `label ` in the vital-signs block of one pid.
fn figure(block: &str, label: &str) -> f64 {
    let at = block
        .find(label)
        .unwrap_or_else(|| panic!("no {label:?} in\n{block}"))
        + label.len();
    block[at..]
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no number after {label:?} in\n{block}"))
}

/// Java threads as `jcmd Thread.print` lists them, without the ones the
/// JVM hides from Java (they are not in `Thread.getAllStackTraces` and not
/// counted live either).
fn visible_threads(dump: &str) -> f64 {
    const HIDDEN: &[&str] = &[
        "CompilerThread",
        "\"Service Thread\"",
        "\"Monitor Deflation Thread\"",
        "\"Sweeper thread\"",
    ];
    dump.lines()
        .filter(|l| l.starts_with('"') && l.contains("\" #"))
        .filter(|l| !HIDDEN.iter().any(|h| l.contains(h)))
        .count() as f64
}

/// The `jdwp://vitals` block of one pid.
fn vitals_block(server: &Server, pid: &str) -> String {
    let read = server
        .request("resources/read", json!({"uri": "jdwp://vitals"}))
        .expect("jdwp://vitals reads");
    let text = read["contents"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    text.split("\npid ")
        .find(|b| b.starts_with(&format!("{pid} ")))
        .unwrap_or_else(|| panic!("no block for {pid}:\n{text}"))
        .to_string()
}

/// The vital signs of a JVM without JDWP, allocating enough to collect,
/// match jstat and jcmd read at the same moment.
fn vitals_match(java_home: PathBuf) {
    let jvm = Jvm::start(
        "Leak",
        JvmOpts {
            java_home: Some(java_home.clone()),
            no_jdwp: true,
            args: vec!["20000".into()],
            jvm_args: vec!["-Xmx256m".into(), "-Xmn8m".into()],
            ..JvmOpts::default()
        },
    );
    wait_for_growth(&jvm, 40_000);
    let pid = jvm.pid().to_string();
    let server = Server::spawn();
    server.initialize();
    let dump = jdk_tool(&java_home, "jcmd", &[&pid, "Thread.print"]);
    // Early on jstat may print `-` for a space whose counters are not
    // published yet: it is ready once every column compared has a figure.
    let gcutil = crate::support::poll_until_msg(
        Duration::from_secs(30),
        "jstat to give every figure",
        || {
            let g = jdk_tool(&java_home, "jstat", &["-gcutil", &pid]);
            let head: Vec<&str> = g
                .lines()
                .next()
                .unwrap_or_default()
                .split_whitespace()
                .collect();
            let row: Vec<&str> = g
                .lines()
                .nth(1)
                .unwrap_or_default()
                .split_whitespace()
                .collect();
            let ready = ["O", "M", "CCS"].iter().all(|c| {
                head.iter()
                    .position(|h| h == c)
                    .and_then(|i| row.get(i))
                    .is_some_and(|v| *v != "-")
            });
            ready.then_some(g)
        },
    );
    let block = vitals_block(&server, &pid);
    assert_eq!(
        figure(&block, "threads "),
        visible_threads(&dump),
        "{block}\n{dump}"
    );
    let header: Vec<&str> = gcutil
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    let values: Vec<&str> = gcutil
        .lines()
        .nth(1)
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    let jstat = |col: &str| -> f64 {
        let i = header
            .iter()
            .position(|h| *h == col)
            .unwrap_or_else(|| panic!("{gcutil}"));
        values[i].parse().unwrap_or(0.0)
    };
    assert!(
        jstat("YGC") > 0.0,
        "the fixture should have collected by now:\n{gcutil}"
    );
    for (col, label) in [("O", " O "), ("M", "(M "), ("CCS", "(CCS ")] {
        let ours = figure(&block, label);
        assert!(
            (ours - jstat(col)).abs() < 3.0,
            "{col}: {ours} vs jstat\n{gcutil}\n{block}"
        );
    }
    // A collection may land between jstat's reading and ours.
    let young = figure(&block, "GC: G1 young collection pauses ");
    assert!((young - jstat("YGC")).abs() <= 1.0, "{gcutil}\n{block}");
    // A later reading gives rates.
    let rated = crate::support::poll_until(Duration::from_secs(10), || {
        let b = vitals_block(&server, &pid);
        b.contains("per s over the last").then_some(b)
    });
    assert!(figure(&rated, "heap ") > 0.0, "{rated}");
}

#[test]
fn vital_signs_match_jstat_and_jcmd_on_jdk17() {
    vitals_match(default_java_home());
}

#[test]
fn vital_signs_match_jstat_and_jcmd_on_temurin25() {
    vitals_match(temurin25_required());
}

/// This machine's first address that is not loopback (`hostname -I`).
fn outward_address() -> String {
    let out = Command::new("hostname")
        .arg("-I")
        .output()
        .expect("hostname -I runs");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .find(|a| !a.contains(':') && !a.starts_with("127."))
        .expect("a non-loopback IPv4 address to reach the JVM as a remote one")
        .to_string()
}

/// A JVM reached through a non-loopback address counts as remote: the CPU
/// question is refused with the reason, and the histogram says why it
/// counted over JDWP.
#[test]
fn a_remote_jvm_gets_local_only_answers() {
    let port = crate::support::free_port();
    let jvm = Jvm::start(
        "Spinner",
        JvmOpts {
            no_jdwp: true,
            jvm_args: vec![format!(
                "-agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=*:{port}"
            )],
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("spinner ready", Duration::from_secs(20));
    let server = Server::spawn();
    server.initialize();
    server
        .call(
            "debug_attach",
            json!({"host": outward_address(), "port": port}),
        )
        .expect_ok();
    let hot = server
        .call("debug_hot_threads", json!({"interval_ms": 100}))
        .expect_tool_error();
    assert!(hot.text.starts_with("[LOCAL_JVMS_ONLY]"), "{}", hot.text);
    assert!(hot.text.contains("not on this machine"), "{}", hot.text);
    let h = server
        .call(
            "debug_heap",
            json!({"kind": "histogram", "package": "Spinner"}),
        )
        .expect_ok();
    assert!(h.text.contains("via JDWP InstanceCounts"), "{}", h.text);
    assert!(
        h.text.contains("Attach socket not used: the JVM is at "),
        "{}",
        h.text
    );
    assert!(h.text.contains("(request time)"), "{}", h.text);
}

/// A histogram asked while this session holds the JVM (a pause, a
/// suspending stop): HotSpot's attach listener, started by the first
/// attach, would be held as well, and the walk would wait out its
/// two-minute timeout. The automatic channel counts over JDWP instead,
/// at once, and says why.
fn histogram_of_a_paused_jvm(java_home: PathBuf) {
    let (jvm, _) = leak(java_home);
    let server = crate::dump::attached(&jvm);
    server.call("debug_pause", json!({})).expect_ok();
    let h = server
        .call_with_timeout(
            "debug_heap",
            json!({"kind": "histogram", "top": 5}),
            Duration::from_secs(60),
        )
        .expect_ok();
    assert!(h.text.contains("via JDWP InstanceCounts"), "{}", h.text);
    assert!(
        h.text.contains("Attach socket not used:") && h.text.contains("suspended by this session"),
        "{}",
        h.text
    );
    assert!(rows(&h.text).iter().any(|r| r.instances > 0), "{}", h.text);
    server.call("debug_continue", json!({})).expect_ok();
}

#[test]
fn a_paused_jvm_is_counted_over_jdwp_at_once_on_jdk17() {
    histogram_of_a_paused_jvm(default_java_home());
}

#[test]
fn a_paused_jvm_is_counted_over_jdwp_at_once_on_temurin25() {
    histogram_of_a_paused_jvm(temurin25_required());
}

/// Arming a probe parks a thread for a moment (the helper class is
/// defined by a call, which needs a thread an event suspended) and gives
/// it back. Nothing is held by this session afterwards, so the histogram
/// right after goes through the attach socket and claims no suspension.
fn histogram_right_after_a_probe(java_home: PathBuf) {
    let (jvm, _) = leak(java_home);
    let server = Server::spawn();
    server.initialize();
    server
        .call(
            "debug_attach",
            json!({"port": jvm.port(),
                   "class_roots": [crate::support::java::fixtures().display().to_string()]}),
        )
        .expect_ok();
    let armed = server
        .call(
            "debug_set_stop",
            json!({"kind": "method_exit", "class_pattern": "Leak$Key", "method": "hashCode",
                   "engine": "probe", "trace_max_hits": 0}),
        )
        .expect_ok();
    assert!(armed.text.contains("PROBE:"), "{}", armed.text);
    let h = server
        .call_with_timeout(
            "debug_heap",
            json!({"kind": "histogram", "top": 5}),
            Duration::from_secs(60),
        )
        .expect_ok();
    assert!(h.text.contains("via attach socket"), "{}", h.text);
    assert!(!h.text.contains("suspended by this session"), "{}", h.text);
    crate::dump::assert_none_suspended(&server);
}

#[test]
fn a_histogram_right_after_a_probe_takes_the_attach_socket_on_jdk17() {
    histogram_right_after_a_probe(default_java_home());
}

#[test]
fn a_histogram_right_after_a_probe_takes_the_attach_socket_on_temurin25() {
    histogram_right_after_a_probe(temurin25_required());
}

/// The fixture's own count of work: (its clock in ms, lookups so far).
fn work(line: &str) -> Option<(u64, u64)> {
    Some((number_after(line, "work t=")?, number_after(line, " n=")?))
}

/// The fixture's lookups per ms between two of its work lines.
fn rate(from: (u64, u64), to: (u64, u64)) -> f64 {
    (to.1 - from.1) as f64 / (to.0 - from.0).max(1) as f64
}

/// Dump files of this JVM left in the scratch directory (the JVM's tmpdir).
fn dumps_left(jvm: &Jvm) -> Vec<PathBuf> {
    let mark = format!("-{}-", jvm.pid());
    std::fs::read_dir(std::env::temp_dir())
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| {
                    let name = p.file_name().unwrap_or_default().to_string_lossy();
                    name.starts_with("jvmscope-heap-") && name.contains(&mark)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Serialises the tests that measure a program's throughput around a dump.
static BIG_MAP: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A 200k-entry static map: who holds one of its entries, in one call,
/// from one heap dump whose pause the reply states, while the program runs
/// on; the dump is removed. The pause and the program's throughput during
/// the call are printed for docs/PERFORMANCE.md.
fn holders_of_a_big_map(java_home: PathBuf) {
    // One at a time: two such calls at once would each count the other's
    // dump and reading against the program they measure.
    let _alone = BIG_MAP
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let jvm = Jvm::start(
        "BigCache",
        JvmOpts {
            java_home: Some(java_home),
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("bigcache ready entries=200000", Duration::from_secs(60));
    let server = crate::dump::attached(&jvm);
    // A steady rate first: 20 windows of 100 ms after the attach.
    let seen = jvm.line_count();
    crate::support::poll_until(Duration::from_secs(30), || {
        let windows = jvm.lines()[seen..]
            .iter()
            .filter(|l| work(l).is_some())
            .count();
        (windows >= 20).then_some(())
    });
    let before_call = jvm.line_count();
    let reply = server
        .call_with_timeout(
            "debug_heap",
            json!({"kind": "holders", "class_name": "BigCache$Entry", "max_pause_ms": 500}),
            Duration::from_secs(120),
        )
        .expect_ok();
    let after_call = jvm.line_count();
    let (_, closing) =
        jvm.wait_for_line_since(after_call, |l| work(l).is_some(), Duration::from_secs(10));
    let text = &reply.text;
    assert!(
        text.contains("\nBigCache.ENTRIES → HashMap{value} → BigCache$Entry\n"),
        "{text}"
    );
    let hops = text
        .lines()
        .find_map(|l| l.strip_prefix("Hop by hop: "))
        .unwrap_or_else(|| panic!("no hops: {text}"));
    assert!(
        hops.starts_with("static BigCache.ENTRIES → HashMap.table → [")
            && hops.ends_with("] → HashMap$Node.value → BigCache$Entry"),
        "{text}"
    );
    assert!(
        text.contains("Path taken: one heap dump through the attach socket"),
        "{text}"
    );
    assert!(text.contains("the dump file is removed."), "{text}");
    let pause = text
        .split("world stopped ")
        .nth(1)
        .and_then(|t| t.split(" ms (").next())
        .and_then(|n| n.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("no safepoint time: {text}"));
    // The pause is stated; how long it is depends on the machine, so it is
    // measured and printed (docs/PERFORMANCE.md), not asserted: a test is
    // never a timing.
    assert!(pause > 0.0, "{text}");
    assert!(dumps_left(&jvm).is_empty(), "{:?}", dumps_left(&jvm));
    // The program's own throughput: the window of the call (its last line
    // before, its first line after) against as long a window before it
    // (a second at least).
    let lines = jvm.lines();
    let start = lines[..before_call]
        .iter()
        .rev()
        .find_map(|l| work(l))
        .expect("a work line before the call");
    let end = work(&closing).expect("a work line after the call");
    let earlier = lines[..before_call]
        .iter()
        .rev()
        .filter_map(|l| work(l))
        .find(|w| w.0 + (end.0 - start.0).max(1000) <= start.0)
        .or_else(|| lines.iter().find_map(|l| work(l)))
        .expect("work lines before the call");
    let (during, usual) = (rate(start, end), rate(earlier, start));
    // The program ran on during the call (nothing held it); its share of
    // the usual rate is a figure of the machine, printed below.
    assert!(during > 0.0, "no work during the call; {text}");
    // The figures, for docs/PERFORMANCE.md (shown with --nocapture).
    #[allow(clippy::print_stderr)]
    {
        eprintln!(
            "big map holders: pause {pause} ms; throughput {during:.1}/ms during against {usual:.1}/ms before ({:.0} %) over {} ms",
            100.0 * during / usual,
            end.0 - start.0
        );
    }
    crate::dump::assert_none_suspended(&server);
}

#[test]
fn who_holds_an_entry_of_a_200k_map_in_one_dump_on_jdk17() {
    holders_of_a_big_map(default_java_home());
}

#[test]
fn who_holds_an_entry_of_a_200k_map_in_one_dump_on_temurin25() {
    holders_of_a_big_map(temurin25_required());
}

/// A holders call cancelled while the JVM writes its dump leaves no file:
/// the dump is removed unread once written, and a later call still works.
#[test]
fn a_cancelled_heap_dump_leaves_no_file() {
    let jvm = Jvm::start("BigCache", JvmOpts::default());
    jvm.wait_for_line("bigcache ready", Duration::from_secs(60));
    let server = crate::dump::attached(&jvm);
    let id = json!("holders-to-cancel");
    server.send(&json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "debug_heap", "arguments": {"kind": "holders", "class_name": "BigCache$Entry"}},
    }));
    server.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "the user moved on"}),
    );
    // HotSpot runs one dump at a time: this one ends after the first.
    let again = server
        .call_with_timeout(
            "debug_heap",
            json!({"kind": "holders", "class_name": "BigCache$Entry"}),
            Duration::from_secs(120),
        )
        .expect_ok();
    assert!(
        again.text.contains("the dump file is removed."),
        "{}",
        again.text
    );
    crate::support::poll_until(Duration::from_secs(20), || {
        dumps_left(&jvm).is_empty().then_some(())
    });
}
