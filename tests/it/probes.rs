//! The probe engine against real JVMs (JDK 17 and Temurin 25): a line
//! probe with a condition compiled into the class records only passing
//! hits; entry, exit and field-write probes record arguments, return
//! values, exceptions, call times and written values; min_duration_ms and
//! group_by percentiles; an update and a reload put a new probe in; the
//! class's running bytecode is the class file's again after clear,
//! disconnect, or (after the server was killed) the next attach, and a
//! killed server's probe switches itself off when its lease lapses; a
//! burst that overflows the ring is counted call for call;
//! read-only refuses `engine: "probe"` and `auto` falls back to the wire
//! saying why; each place a probe cannot go is refused with its reason;
//! and trace expressions that are field paths are read by the probe
//! (`paths.rs`).

pub(crate) mod callees;
mod captures;
mod loader_bytes;
mod paths;
pub(crate) mod stats;
mod timing;
mod writers;

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::java::{Jvm, JvmOpts, fixtures, line_of, temurin25_required};
use crate::support::mcp::{Server, ToolReply};
use crate::support::poll_until_msg;

const WAIT: Duration = Duration::from_secs(30);
const LEDGER: &str = "ProbeLoad$Ledger";

fn load(java_home: Option<std::path::PathBuf>) -> Jvm {
    let jvm = Jvm::start(
        "ProbeLoad",
        JvmOpts {
            args: vec!["2".into()],
            java_home,
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("probe load started", WAIT);
    jvm
}

fn server() -> Server {
    let server = Server::spawn();
    server.initialize();
    server
}

fn attach(server: &Server, jvm: &Jvm, extra: Value) -> ToolReply {
    attach_on(server, jvm.port(), extra)
}

fn attach_on(server: &Server, port: u16, extra: Value) -> ToolReply {
    let mut args = json!({"port": port, "class_roots": [fixtures().display().to_string()]});
    if let (Some(a), Some(e)) = (args.as_object_mut(), extra.as_object()) {
        a.extend(e.clone());
    }
    server.call("debug_attach", args).expect_ok()
}

fn first_id(reply: &ToolReply) -> String {
    reply.json()["outcomes"][0]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no id in {}", reply.text))
        .to_string()
}

fn traces(server: &Server, bp: &str, n: usize) -> Vec<Value> {
    traces_since(server, bp, 0, n)
}

/// At least `n` snapshots of `bp` with a seq above `since` (the newest 500).
fn traces_since(server: &Server, bp: &str, since: u64, n: usize) -> Vec<Value> {
    poll_until_msg(
        WAIT,
        &format!("{n} snapshots of {bp} after #{since}"),
        || {
            let r = server
                .call(
                    "debug_get_traces",
                    json!({"bp_id": bp, "since": since, "limit": 500, "compact": false}),
                )
                .expect_ok();
            let t = r.json()["traces"].as_array().cloned().unwrap_or_default();
            (t.len() >= n).then_some(t)
        },
    )
}

fn local_i64(trace: &Value, name: &str) -> Option<i64> {
    trace["locals"]
        .as_array()?
        .iter()
        .find(|l| l["name"] == name)?
        .get("value")?
        .as_str()?
        .trim_end_matches('L')
        .parse()
        .ok()
}

/// The newest snapshot's seq of a stop point (0: none yet).
fn last_seq(server: &Server, bp: &str) -> u64 {
    server
        .call("debug_get_traces", json!({"bp_id": bp, "limit": 1}))
        .expect_ok()
        .json()["last_seq"]
        .as_u64()
        .unwrap_or(0)
}

/// A snapshot's call time in ns, read back from its `duration` detail
/// ("840 ns", "12.5 µs", "3.204 ms (timed in the JVM)").
fn took_ns(trace: &Value) -> Option<u64> {
    let text = trace["details"]
        .as_array()?
        .iter()
        .find(|d| d["key"] == "duration")?["value"]
        .as_str()?;
    assert!(text.ends_with("(timed in the JVM)"), "{text}");
    let mut words = text.split_whitespace();
    let n: f64 = words.next()?.parse().ok()?;
    let scale = match words.next()? {
        "ns" => 1.0,
        "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        other => panic!("unit {other} in {text}"),
    };
    Some((n * scale) as u64)
}

/// Whether the JVM runs other bytecode for the ledger than its class file.
fn ledger_instrumented(server: &Server) -> bool {
    instrumented(server, LEDGER)
}

/// Whether the JVM runs other bytecode for `class` than its class file
/// under the fixtures.
pub(crate) fn instrumented(server: &Server, class: &str) -> bool {
    let r = server
        .call(
            "debug_check_stale",
            json!({"class_name": class, "class_roots": [fixtures().display().to_string()], "bytecode": true}),
        )
        .expect_ok();
    assert!(r.text.contains("Bytecode:"), "{}", r.text);
    r.text.contains("Bytecode: STALE")
}

/// Clears stop point `id` and checks the Ledger class runs its original
/// bytecode again.
#[track_caller]
fn clear_restores_the_ledger(server: &Server, id: &str) {
    server
        .call(
            "debug_update_stop_point",
            json!({"kind": "clear", "id": id}),
        )
        .expect_ok();
    assert!(!ledger_instrumented(server));
}

fn line_probe(server: &Server, condition: &str) -> (String, ToolReply) {
    let line = line_of("ProbeLoad.java", "probe-line");
    let armed = server
        .call(
            "debug_set_stop",
            json!({"kind": "line",
                "class_pattern": LEDGER, "line": line, "trace": true,
                "condition": condition, "engine": "probe", "trace_max_hits": 0,
            }),
        )
        .expect_ok();
    (first_id(&armed), armed)
}

fn a_line_probe_records_passing_hits_and_clear_restores(java_home: Option<std::path::PathBuf>) {
    let jvm = load(java_home);
    let server = server();
    attach(&server, &jvm, json!({}));
    assert!(!ledger_instrumented(&server), "nothing changed before");
    let (id, armed) = line_probe(&server, "amountCents < 0");
    assert!(armed.text.contains("PROBE:"), "{}", armed.text);
    assert!(ledger_instrumented(&server), "the class runs the probe");
    let got = traces(&server, &id, 5);
    for t in &got {
        let amount = local_i64(t, "amountCents").unwrap_or_else(|| panic!("amountCents in {t}"));
        assert!(amount < 0, "only passing hits are recorded: {t}");
        assert!(local_i64(t, "account").is_some(), "{t}");
    }
    let listed = server.call("debug_list_stop_points", json!({})).expect_ok();
    assert!(listed.text.contains("engine: probe"), "{}", listed.text);
    // The negative charges are about 1 in 10,000: most calls ran the probe
    // without passing, so calls are far more than passes.
    poll_until_msg(WAIT, "many more calls than passes", || {
        let l = server.call("debug_list_stop_points", json!({})).expect_ok();
        let p = l.json()["stop_points"][0].clone();
        let calls = p["probe"]["calls"].as_u64().unwrap_or(0);
        let passed = p["probe"]["passes"].as_u64().unwrap_or(0);
        (calls > 100 * passed.max(1)).then_some(())
    });
    server
        .call(
            "debug_update_stop_point",
            json!({"kind": "clear", "id": id}),
        )
        .expect_ok();
    assert!(
        !ledger_instrumented(&server),
        "clear gives the class its bytes back"
    );
    assert!(jvm.is_alive());
}

#[test]
fn a_line_probe_records_only_passing_hits_and_clear_restores_the_class_jdk17() {
    a_line_probe_records_passing_hits_and_clear_restores(None);
}

#[test]
fn a_line_probe_records_only_passing_hits_and_clear_restores_the_class_temurin25() {
    a_line_probe_records_passing_hits_and_clear_restores(Some(temurin25_required()));
}

fn a_method_exit_probe_times_each_call_and_records_a_throw(java_home: std::path::PathBuf) {
    let jvm = load(Some(java_home));
    let server = server();
    attach(&server, &jvm, json!({}));
    let armed = server
        .call(
            "debug_set_stop",
            json!({"kind": "method_exit", "class_pattern": LEDGER, "method": "settle", "engine": "probe", "trace_max_hits": 0}),
        )
        .expect_ok();
    assert!(armed.text.contains("PROBE:"), "{}", armed.text);
    let id = first_id(&armed);
    let got = traces(&server, &id, 120);
    let durations: Vec<u64> = got.iter().filter_map(took_ns).collect();
    assert_eq!(durations.len(), got.len(), "every call is timed: {got:?}");
    assert!(durations.iter().all(|d| *d > 0), "{durations:?}");
    // Every 50th call sleeps 3 ms.
    assert!(
        durations.iter().any(|d| *d >= 2_000_000),
        "a slow call is seen as slow: {durations:?}"
    );
    // Every 97th call throws: its snapshot has no return value and names
    // the exception; the others return 2n and have none.
    let thrown = |t: &Value| {
        t["locals"]
            .as_array()
            .and_then(|l| l.iter().find(|x| x["name"] == "exception"))
            .and_then(|x| x["value"].as_str())
            .filter(|v| *v != "null")
            .map(str::to_string)
    };
    let threw: Vec<String> = got.iter().filter_map(thrown).collect();
    assert!(
        threw.iter().any(|e| e.contains("IllegalStateException")),
        "a call that threw is recorded with its exception: {threw:?}"
    );
    for t in &got {
        let n = local_i64(t, "n").expect("n is captured");
        if thrown(t).is_none() {
            assert_eq!(local_i64(t, "returnValue"), Some(2 * n), "{t}");
        } else {
            assert_eq!(n % 97, 0, "only every 97th call throws: {t}");
        }
    }
    // Grouped, the calls come with their spread.
    let grouped = server
        .call(
            "debug_get_traces",
            json!({"bp_id": id, "group_by": ["thread"]}),
        )
        .expect_ok();
    let took = &grouped.json()["groups"][0]["took"];
    assert!(
        took["p99_ms"].as_f64() >= took["p50_ms"].as_f64() && took["max_ms"].as_f64() >= Some(2.0),
        "{}",
        grouped.text
    );
    assert!(grouped.text.contains("took p50"), "{}", grouped.text);

    // An update puts a new probe in from the new definition.
    let updated = server
        .call(
            "debug_update_stop_point",
            json!({"id": id, "condition": "n % 2 == 1"}),
        )
        .expect_ok();
    assert!(updated.text.contains("PROBE:"), "{}", updated.text);
    // Snapshots taken before the update have lower seqs than any after it
    // (a drain round in flight may still add one or two).
    let since = last_seq(&server, &id);
    let odd = traces_since(&server, &id, since, 20);
    let evens = odd
        .iter()
        .filter(|t| local_i64(t, "n").is_some_and(|n| n % 2 == 0))
        .count();
    assert!(
        evens <= 2,
        "the new condition holds: {evens} even of {}",
        odd.len()
    );

    clear_restores_the_ledger(&server, &id);
}

/// A burst of calls that overflows a probe's ring: every call the program
/// counted itself is counted as captured or dropped, the drain reads only
/// what the trace log holds (the newest), and the snapshots it passed over
/// still took their sequence numbers.
fn an_overflowing_ring_counts_every_call_as_captured_or_dropped(java_home: std::path::PathBuf) {
    let jvm = Jvm::start(
        "ProbeBurst",
        JvmOpts {
            java_home: Some(java_home),
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("probe burst ready", WAIT);
    let server = server();
    attach(&server, &jvm, json!({}));
    let armed = server
        .call(
            "debug_set_stop",
            json!({"kind": "method_exit", "class_pattern": "ProbeBurst$Tally", "method": "tick",
                   "engine": "probe", "trace_max_hits": 0}),
        )
        .expect_ok();
    assert!(armed.text.contains("PROBE:"), "{}", armed.text);
    let id = first_id(&armed);
    server
        .call(
            "debug_set_value",
            json!({"target": "ProbeBurst.go", "value": "true"}),
        )
        .expect_ok();
    let done = jvm.wait_for_line("probe burst done", WAIT);
    let calls: u64 = done
        .rsplit('=')
        .next()
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("a count in {done:?}"));
    assert_eq!(calls, 2_000_000, "{done}");
    let (captured, drops) = poll_until_msg(WAIT, "captured + dropped == the calls made", || {
        let listed = server.call("debug_list_stop_points", json!({})).expect_ok();
        let p = listed.json()["stop_points"][0].clone();
        let seen = p["probe"]["calls"].as_u64()?;
        let captured = p["captured"].as_u64()?;
        let drops = p["probe"]["drops"].as_u64()?;
        (seen == calls && captured + drops == calls).then_some((captured, drops))
    });
    assert!(
        drops > 0,
        "the burst overflowed the ring: {captured} captured"
    );
    // The ring's first 16,384 records alone are more than the log holds.
    assert!(captured > 16_000, "{captured} captured, {drops} dropped");
    let held = traces(&server, &id, 500);
    assert_eq!(held.len(), 500, "the log holds the newest 500");
    assert!(
        last_seq(&server, &id) >= captured,
        "every captured snapshot took a sequence number"
    );
    server
        .call(
            "debug_update_stop_point",
            json!({"kind": "clear", "id": id}),
        )
        .expect_ok();
    assert!(jvm.is_alive());
}

fn min_duration_keeps_only_slow_calls_and_the_wire_cannot_time_one(java_home: std::path::PathBuf) {
    let jvm = load(Some(java_home));
    let server = server();
    attach(&server, &jvm, json!({}));
    // Every 50th call sleeps 3 ms: only those are kept.
    let slow = server
        .call(
            "debug_set_stop",
            json!({"kind": "method_exit", "class_pattern": LEDGER, "method": "settle", "min_duration_ms": 2, "trace_max_hits": 0}),
        )
        .expect_ok();
    assert!(
        slow.text.contains("PROBE:"),
        "auto picks the probe: {}",
        slow.text
    );
    let slow_id = first_id(&slow);
    // Every kept call took 2 ms. Most are the sleepers; on a loaded
    // machine a call the scheduler took the core from is slow too, and
    // rightly kept.
    let kept = traces(&server, &slow_id, 6);
    for t in &kept {
        assert!(took_ns(t).is_some_and(|d| d >= 2_000_000), "{t}");
    }
    let sleepers = kept
        .iter()
        .filter(|t| local_i64(t, "n").is_some_and(|n| n % 50 == 0))
        .count();
    assert!(sleepers * 2 >= kept.len(), "{sleepers} of {kept:?}");
    // Over the wire a call cannot be timed: refused, not silently ignored.
    let wire = server
        .call(
            "debug_set_stop",
            json!({"kind": "method_exit", "class_pattern": LEDGER, "method": "settle", "min_duration_ms": 2, "engine": "wire"}),
        )
        .expect_tool_error();
    assert!(wire.text.contains("min_duration_ms"), "{}", wire.text);

    clear_restores_the_ledger(&server, &slow_id);
}

fn entry_and_field_write_probes_record_arguments_and_written_values(java_home: std::path::PathBuf) {
    let jvm = load(Some(java_home));
    let server = server();
    attach(&server, &jvm, json!({}));
    let entry = server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": LEDGER, "method": "charge", "trace": true,
                   "condition": "amountCents < 0", "engine": "probe", "trace_max_hits": 0}),
        )
        .expect_ok();
    assert!(entry.text.contains("PROBE:"), "{}", entry.text);
    let entry_id = first_id(&entry);
    let write = server
        .call(
            "debug_set_stop",
            json!({"kind": "field", "class_pattern": LEDGER, "field_name": "count", "trace": true,
                   "condition": "newValue % 1000 == 0", "engine": "probe", "trace_max_hits": 0}),
        )
        .expect_ok();
    assert!(write.text.contains("PROBE:"), "{}", write.text);
    let write_id = first_id(&write);
    for t in traces(&server, &entry_id, 3) {
        assert!(local_i64(&t, "amountCents").is_some_and(|a| a < 0), "{t}");
        assert!(local_i64(&t, "account").is_some(), "{t}");
        assert!(
            t["location"].as_str().is_some_and(|l| l.contains("charge")),
            "{t}"
        );
    }
    for t in traces(&server, &write_id, 3) {
        let v = local_i64(&t, "newValue").unwrap_or_else(|| panic!("newValue in {t}"));
        assert_eq!(v % 1000, 0, "{t}");
    }
    // Both probes sit in one class; clearing one keeps the other working.
    server
        .call(
            "debug_update_stop_point",
            json!({"kind": "clear", "id": entry_id}),
        )
        .expect_ok();
    assert!(ledger_instrumented(&server));
    let since = last_seq(&server, &write_id);
    // Writes keep arriving after the other probe left.
    traces_since(&server, &write_id, since, 3);
    clear_restores_the_ledger(&server, &write_id);
}

fn read_only_refuses_a_probe_and_auto_falls_back_to_the_wire(java_home: std::path::PathBuf) {
    let jvm = load(Some(java_home));
    let server = server();
    attach(&server, &jvm, json!({"read_only": true}));
    let line = line_of("ProbeLoad.java", "probe-line");
    let refused = server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": LEDGER, "line": line, "trace": true, "engine": "probe"}),
        )
        .expect_tool_error();
    assert!(refused.text.contains("READ_ONLY"), "{}", refused.text);
    let auto = server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": LEDGER, "line": line, "trace": true, "trace_max_hits": 3}),
        )
        .expect_ok();
    assert!(auto.text.contains("WIRE: no probe"), "{}", auto.text);
    assert!(auto.text.contains("read-only"), "{}", auto.text);
    // Where no probe can go at all, a trace expression only the wire
    // computes goes to the wire under auto, saying why.
    let expr = server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": LEDGER, "line": line, "trace": true,
                   "trace_max_hits": 3, "trace_expr": ["amountCents * 2"]}),
        )
        .expect_ok();
    assert!(
        expr.text.contains("WIRE: no probe") && expr.text.contains("read-only"),
        "{}",
        expr.text
    );
    assert!(!ledger_instrumented(&server));
}

fn disconnect_restores_and_a_killed_server_is_cleaned_up_by_the_next_attach(
    java_home: std::path::PathBuf,
) {
    let jvm = load(Some(java_home));
    // Disconnect.
    let server = server();
    attach(&server, &jvm, json!({}));
    line_probe(&server, "amountCents < 0");
    assert!(ledger_instrumented(&server));
    server.call("debug_disconnect", json!({})).expect_ok();
    let again = self::server();
    attach_on(&again, jvm.listening_port(2, WAIT), json!({}));
    assert!(
        !ledger_instrumented(&again),
        "disconnect restored the class"
    );
    again.call("debug_disconnect", json!({})).expect_ok();

    // SIGKILL: nothing restores on the way out; the next attach does.
    let doomed = self::server();
    attach_on(&doomed, jvm.listening_port(3, WAIT), json!({}));
    line_probe(&doomed, "amountCents < 0");
    assert!(ledger_instrumented(&doomed));
    doomed.kill();
    let next = self::server();
    let reply = attach_on(&next, jvm.listening_port(4, WAIT), json!({}));
    assert!(
        reply.text.contains(&format!("RESTORED: {LEDGER}")),
        "{}",
        reply.text
    );
    assert!(!ledger_instrumented(&next));
    assert!(jvm.is_alive());
}

fn a_reload_puts_the_probe_back_into_the_new_code(java_home: std::path::PathBuf) {
    let jvm = load(Some(java_home));
    let server = server();
    attach(&server, &jvm, json!({}));
    let armed = server
        .call(
            "debug_set_stop",
            json!({"kind": "method_exit", "class_pattern": LEDGER, "method": "settle", "trace_max_hits": 0,
                   "trace_locals": "n"}),
        )
        .expect_ok();
    assert!(armed.text.contains("PROBE:"), "{}", armed.text);
    let id = first_id(&armed);
    traces(&server, &id, 3);

    // The same program with settle returning 3n, built as the fixtures are.
    let scratch = crate::code::Scratch::new("probe-reload");
    let out = scratch.path("classes");
    compile_variant(&scratch, &out, "return n * 2;", "return n * 3;");

    let reloaded = server
        .call(
            "debug_reload_class",
            json!({"class_name": LEDGER, "class_roots": [out.display().to_string()]}),
        )
        .expect_ok();
    assert!(
        reloaded.text.contains(&id),
        "names the probe put back: {}",
        reloaded.text
    );
    let since = last_seq(&server, &id);
    let after = traces_since(&server, &id, since, 10);
    let tripled = after
        .iter()
        .filter(|t| {
            let n = local_i64(t, "n");
            n.is_some() && local_i64(t, "returnValue") == n.map(|n| 3 * n)
        })
        .count();
    // A drain round in flight at the reload may still hold old calls.
    assert!(
        tripled >= after.len() - 2,
        "the probe runs in the new code: {after:?}"
    );
    // Clearing gives back the reloaded bytes, not the first build's.
    server
        .call(
            "debug_update_stop_point",
            json!({"kind": "clear", "id": id}),
        )
        .expect_ok();
    let stale = server
        .call(
            "debug_check_stale",
            json!({"class_name": LEDGER, "class_roots": [out.display().to_string()], "bytecode": true}),
        )
        .expect_ok();
    assert!(!stale.text.contains("Bytecode: STALE"), "{}", stale.text);
}

fn a_killed_servers_probe_lapses_on_its_own_and_a_read_only_attach_says_so(
    java_home: std::path::PathBuf,
) {
    let jvm = load(Some(java_home));
    let doomed = server();
    attach(&doomed, &jvm, json!({}));
    line_probe(&doomed, "amountCents < 0");
    assert!(ledger_instrumented(&doomed));
    doomed.kill();

    // Read-only: nothing is restored, and the reply says what was found.
    let watcher = server();
    let reply = attach_on(
        &watcher,
        jvm.listening_port(2, WAIT),
        json!({"read_only": true}),
    );
    assert!(
        reply.text.contains(LEDGER) && reply.text.contains("read-only"),
        "{}",
        reply.text
    );
    assert!(ledger_instrumented(&watcher), "read-only changes nothing");
    // The helper's lease was not renewed: it switches the probe off.
    let listed = watcher
        .call("debug_list_classes", json!({"filter": "$$jvmscope$"}))
        .expect_ok();
    let helper = listed
        .text
        .split_whitespace()
        .find(|w| w.contains(&format!("{LEDGER}$$jvmscope$")))
        .unwrap_or_else(|| panic!("the helper class: {}", listed.text))
        .trim_matches(|c: char| !c.is_alphanumeric() && c != '$' && c != '.' && c != '_')
        .to_string();
    poll_until_msg(WAIT, "the lapsed lease to switch the probe off", || {
        let r = watcher
            .call(
                "debug_evaluate",
                json!({"expression": format!("{helper}.live")}),
            )
            .expect_ok();
        r.text.contains("false").then_some(())
    });
    assert!(jvm.is_alive());
}

fn where_a_probe_cannot_go_it_is_refused_with_the_reason(java_home: std::path::PathBuf) {
    let jvm = load(Some(java_home));
    let server = server();
    attach(&server, &jvm, json!({}));
    let refused = |tool: &str, args: Value| {
        let mut args = args;
        args["engine"] = json!("probe");
        args["trace"] = json!(true);
        server.call(tool, args).expect_tool_error().text
    };
    let line = line_of("ProbeLoad.java", "probe-line");
    let cases = [
        (
            "a static initialiser",
            refused(
                "debug_set_stop",
                json!({"kind": "line", "class_pattern": "ProbeLoad", "line": line_of("ProbeLoad.java", "probe-clinit")}),
            ),
            "static initialiser",
        ),
        (
            "a local the line does not have",
            refused(
                "debug_set_stop",
                json!({"kind": "line", "class_pattern": LEDGER, "line": line, "trace_locals": "nope"}),
            ),
            "no local \"nope\"",
        ),
        (
            "a condition naming nothing in scope",
            refused(
                "debug_set_stop",
                json!({"kind": "line", "class_pattern": LEDGER, "line": line, "condition": "missing > 1"}),
            ),
            "missing",
        ),
        (
            "a class not loaded",
            refused(
                "debug_set_stop",
                json!({"kind": "line", "class_pattern": "ProbeLoad$Nowhere", "method": "run"}),
            ),
            "not loaded",
        ),
        (
            "a hit count",
            {
                let mut args = json!({"kind": "line", "class_pattern": LEDGER, "line": line, "engine": "probe"});
                args["trace"] = json!(false);
                args["hit_count"] = json!(3);
                server.call("debug_set_stop", args).expect_tool_error().text
            },
            "hit count",
        ),
    ];
    for (what, text, reason) in &cases {
        assert!(text.contains(reason), "{what}: {text}");
    }

    // Class bytes that are not the loaded class's: a build where settle
    // returns 3n, while the JVM runs 2n.
    let scratch = crate::code::Scratch::new("probe-differs");
    let out = scratch.path("classes");
    compile_variant(&scratch, &out, "return n * 2;", "return n * 3;");
    let other = self::server();
    server.call("debug_disconnect", json!({})).expect_ok();
    attach_on_roots(&other, jvm.listening_port(2, WAIT), &out);
    let differs = other
        .call(
            "debug_set_stop",
            json!({"kind": "method_exit", "class_pattern": LEDGER, "method": "settle", "engine": "probe"}),
        )
        .expect_tool_error();
    assert!(
        differs
            .text
            .contains("differs from the loaded class in settle"),
        "{}",
        differs.text
    );
    assert!(jvm.is_alive());
}

/// Compiles ProbeLoad.java with `from` replaced by `to` into `out`, as the
/// fixtures are built.
fn compile_variant(scratch: &crate::code::Scratch, out: &std::path::Path, from: &str, to: &str) {
    let src = scratch.path("src");
    std::fs::create_dir_all(&src).expect("src dir");
    std::fs::create_dir_all(out).expect("out dir");
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/java/ProbeLoad.java"),
    )
    .expect("fixture source");
    assert!(text.contains(from), "{from}");
    std::fs::write(src.join("ProbeLoad.java"), text.replace(from, to)).expect("write source");
    let status = std::process::Command::new(crate::support::java::javac())
        .args(["-g", "--release", "17", "-encoding", "UTF-8", "-d"])
        .arg(out)
        .arg(src.join("ProbeLoad.java"))
        .status()
        .expect("run javac");
    assert!(status.success());
}

fn attach_on_roots(server: &Server, port: u16, roots: &std::path::Path) -> ToolReply {
    server
        .call(
            "debug_attach",
            json!({"port": port, "class_roots": [roots.display().to_string()]}),
        )
        .expect_ok()
}

crate::support::on_both_jdks! {
    a_method_exit_probe_times_each_call_and_records_a_throw: a_method_exit_probe_times_each_call_and_records_a_throw_jdk17,
        a_method_exit_probe_times_each_call_and_records_a_throw_temurin25;
    an_overflowing_ring_counts_every_call_as_captured_or_dropped: an_overflowing_ring_counts_every_call_as_captured_or_dropped_jdk17,
        an_overflowing_ring_counts_every_call_as_captured_or_dropped_temurin25;
    min_duration_keeps_only_slow_calls_and_the_wire_cannot_time_one: min_duration_keeps_only_slow_calls_and_the_wire_cannot_time_one_jdk17,
        min_duration_keeps_only_slow_calls_and_the_wire_cannot_time_one_temurin25;
    entry_and_field_write_probes_record_arguments_and_written_values: entry_and_field_write_probes_record_arguments_and_written_values_jdk17,
        entry_and_field_write_probes_record_arguments_and_written_values_temurin25;
    read_only_refuses_a_probe_and_auto_falls_back_to_the_wire: read_only_refuses_a_probe_and_auto_falls_back_to_the_wire_jdk17,
        read_only_refuses_a_probe_and_auto_falls_back_to_the_wire_temurin25;
    disconnect_restores_and_a_killed_server_is_cleaned_up_by_the_next_attach: disconnect_restores_and_a_killed_server_is_cleaned_up_by_the_next_attach_jdk17,
        disconnect_restores_and_a_killed_server_is_cleaned_up_by_the_next_attach_temurin25;
    a_reload_puts_the_probe_back_into_the_new_code: a_reload_puts_the_probe_back_into_the_new_code_jdk17,
        a_reload_puts_the_probe_back_into_the_new_code_temurin25;
    a_killed_servers_probe_lapses_on_its_own_and_a_read_only_attach_says_so: a_killed_servers_probe_lapses_on_its_own_and_a_read_only_attach_says_so_jdk17,
        a_killed_servers_probe_lapses_on_its_own_and_a_read_only_attach_says_so_temurin25;
    where_a_probe_cannot_go_it_is_refused_with_the_reason: where_a_probe_cannot_go_it_is_refused_with_the_reason_jdk17,
        where_a_probe_cannot_go_it_is_refused_with_the_reason_temurin25;
}
