//! Telemetry: the span tree a session exports (to an in-process OTLP
//! receiver and to the real rotel collector over gRPC and HTTP), span
//! status on JDWP errors, timeouts and disconnects, silence without an
//! endpoint, a dead or stalled collector costing tool calls nothing, flush
//! on stdin close and SIGTERM, and the rotating log file. `export` has TLS, gzip and retry.

mod export;
mod faults;

use std::collections::BTreeSet;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::java::{Jvm, JvmOpts, line_of};
use crate::support::mcp::Server;
use crate::support::otlp::{
    Attr, CollectedSpan, KIND_CLIENT, KIND_SERVER, OtlpReceiver, Rotel, STATUS_ERROR, STATUS_UNSET,
    describe, rotel_binary,
};
use crate::support::poll_until_msg;

/// How long spans may take to arrive after the server exits.
const ARRIVAL: Duration = Duration::from_secs(20);

/// Every variable that could turn export on, removed from the child's environment so a
/// developer's shell cannot change what a test sees.
const OTEL_VARS: &[&str] = &[
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    "OTEL_SERVICE_NAME",
    "OTEL_RESOURCE_ATTRIBUTES",
    "OTEL_TRACES_SAMPLER",
    "OTEL_TRACES_SAMPLER_ARG",
    "OTEL_SDK_DISABLED",
    "OTEL_TRACES_EXPORTER",
    "OTEL_EXPORTER_OTLP_CERTIFICATE",
    "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE",
    "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE",
    "OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE",
    "OTEL_EXPORTER_OTLP_CLIENT_KEY",
    "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY",
    "OTEL_EXPORTER_OTLP_COMPRESSION",
    "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION",
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    "OTEL_EXPORTER_OTLP_TIMEOUT",
    "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
    "OTEL_EXPORTER_OTLP_INSECURE",
    "OTEL_EXPORTER_OTLP_TRACES_INSECURE",
    "OTEL_BSP_MAX_QUEUE_SIZE",
    "OTEL_BSP_SCHEDULE_DELAY",
    "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
    "OTEL_BSP_EXPORT_TIMEOUT",
    "RUST_LOG",
    "JVMSCOPE_LOG_FILE",
];

/// Spawns the real binary with a clean OTel environment plus `env`, and initializes MCP.
pub(crate) fn server_with(env: &[(&str, &str)]) -> Server {
    let mut command = Command::new(env!("CARGO_BIN_EXE_jvmscope"));
    for var in OTEL_VARS {
        command.env_remove(var);
    }
    command.envs(env.iter().copied());
    let server = Server::spawn_command(command);
    server.initialize();
    server
}

/// Closes stdin (the MCP way to stop) and waits for a clean exit.
#[track_caller]
pub(crate) fn stop(server: &Server, within: Duration) -> Duration {
    let started = Instant::now();
    server.close_stdin();
    let status = server.wait_exit(within).unwrap_or_else(|| {
        panic!(
            "server still running {within:?} after stdin closed\n{}",
            server.diagnostics()
        )
    });
    assert!(status.success(), "exit {status}\n{}", server.diagnostics());
    started.elapsed()
}

// ---- the investigation and its tree -----------------------------------------------------------

/// One tool call of the scripted investigation and the JDWP commands it must cost (at least).
struct Call {
    tool: &'static str,
    args: serde_json::Value,
    jdwp: &'static [&'static str],
}

/// attach → list threads → arm a trace and a line stop → continue → wait for the hit → read the
/// stack → continue → disconnect, against a Ticker JVM held at start (`suspend=y`). The trace
/// fires once on `ticker-started` (a JVM-initiated capture), the line stop once on `tick`.
fn investigation(port: u16) -> Vec<Call> {
    vec![
        Call {
            tool: "debug_attach",
            args: json!({ "port": port }),
            jdwp: &["VirtualMachine.Version", "VirtualMachine.IDSizes"],
        },
        Call {
            tool: "debug_list_threads",
            args: json!({}),
            jdwp: &[
                "VirtualMachine.AllThreads",
                "ThreadReference.Name",
                "ThreadReference.SuspendCount",
            ],
        },
        Call {
            tool: "debug_set_stop",
            args: json!({
                "kind": "line",
                "class_pattern": "Ticker",
                "line": line_of("Ticker.java", "ticker-started"),
                "trace": true,
                "trace_max_hits": 1,
            }),
            // Ticker is not loaded yet: the stop is deferred on a ClassPrepare request, and
            // armed later under the `jvm.event ClassPrepare` trace.
            jdwp: &["VirtualMachine.ClassesBySignature", "EventRequest.Set"],
        },
        Call {
            tool: "debug_set_stop",
            args: json!({
                "kind": "line",
                "class_pattern": "Ticker",
                "line": line_of("Ticker.java", "tick"),
                "hit_count": 1,
            }),
            jdwp: &["EventRequest.Set"],
        },
        Call {
            tool: "debug_continue",
            args: json!({}),
            jdwp: &["VirtualMachine.AllThreads", "VirtualMachine.Resume"],
        },
        Call {
            tool: "debug_wait_for_event",
            // The line stop's hit, not the traced one's snapshot.
            args: json!({ "bp_id": "bp_2", "timeout_ms": 15000 }),
            jdwp: &[],
        },
        Call {
            tool: "debug_get_stack",
            args: json!({}),
            jdwp: &["ThreadReference.Frames", "StackFrame.GetValues"],
        },
        Call {
            tool: "debug_continue",
            args: json!({}),
            jdwp: &["VirtualMachine.Resume"],
        },
        Call {
            tool: "debug_disconnect",
            args: json!({}),
            jdwp: &["EventRequest.ClearAllBreakpoints", "VirtualMachine.Dispose"],
        },
    ]
}

/// Runs the investigation on `server` against `jvm`.
fn investigate(server: &Server, calls: &[Call]) {
    for call in calls {
        server.call(call.tool, call.args.clone()).expect_ok();
    }
}

/// The root span of each call, in call order: the k-th call of a tool is the k-th root of that
/// tool's name by start time. `None` until every call's root has arrived.
fn roots_of<'a>(spans: &'a [CollectedSpan], calls: &[Call]) -> Option<Vec<&'a CollectedSpan>> {
    let mut seen: std::collections::BTreeMap<&str, usize> = Default::default();
    calls
        .iter()
        .map(|call| {
            let name = format!("mcp.tool {}", call.tool);
            let mut roots: Vec<&CollectedSpan> = spans
                .iter()
                .filter(|s| s.is_root() && s.name == name)
                .collect();
            roots.sort_by_key(|s| s.start_unix_nano);
            let k = seen.entry(call.tool).or_default();
            *k += 1;
            roots.get(*k - 1).copied()
        })
        .collect()
}

pub(crate) fn children_of<'a>(
    spans: &'a [CollectedSpan],
    parent: &CollectedSpan,
) -> Vec<&'a CollectedSpan> {
    spans
        .iter()
        .filter(|s| s.parent_span_id == parent.span_id && s.trace_id == parent.trace_id)
        .collect()
}

/// Every span below `root`, at any depth.
pub(crate) fn descendants_of<'a>(
    spans: &'a [CollectedSpan],
    root: &CollectedSpan,
) -> Vec<&'a CollectedSpan> {
    let mut out = Vec::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for child in children_of(spans, parent) {
            out.push(child);
            frontier.push(child);
        }
    }
    out
}

/// The JDWP round trips a capture costs: the frames, the locals of the hit frame, and the
/// thread's release.
const CAPTURE_JDWP: &[&str] = &[
    "ThreadReference.Frames",
    "StackFrame.GetValues",
    "ThreadReference.Resume",
];

/// The JVM-initiated trace of the traced hit: a `jvm.event Breakpoint` root that carries the
/// capture's attributes and holds its round trips (one span per hit, not two).
fn capture_trace(spans: &[CollectedSpan]) -> Option<(&CollectedSpan, Vec<&CollectedSpan>)> {
    spans
        .iter()
        .filter(|s| {
            s.is_root()
                && s.name == "jvm.event Breakpoint"
                && s.int_attr("jvm.capture.traces") == Some(1)
        })
        .find_map(|root| {
            let jdwp = children_of(spans, root);
            CAPTURE_JDWP
                .iter()
                .all(|m| jdwp.iter().any(|c| c.name == format!("jdwp {m}")))
                .then_some((root, jdwp))
        })
}

/// True once every call's root and its expected JDWP children, and the capture's trace, have
/// arrived.
fn tree_complete(spans: &[CollectedSpan], calls: &[Call]) -> bool {
    let Some(roots) = roots_of(spans, calls) else {
        return false;
    };
    capture_trace(spans).is_some()
        && calls.iter().zip(roots).all(|(call, root)| {
            let names: BTreeSet<String> = children_of(spans, root)
                .iter()
                .map(|s| s.name.clone())
                .collect();
            call.jdwp
                .iter()
                .all(|m| names.contains(&format!("jdwp {m}")))
        })
}

/// Checks the tree: one root per tool call, the JDWP round trips as its children with the RPC
/// attributes (integers as integers), the JVM-initiated capture as a root of its own with its
/// round trips below it, and nothing but our own spans.
#[track_caller]
fn assert_tree(spans: &[CollectedSpan], calls: &[Call], jvm_port: u16) {
    let all = describe(spans);
    for s in spans {
        assert!(
            s.name.starts_with("mcp.tool ")
                || s.name.starts_with("jdwp ")
                || s.name.starts_with("jvm.event ")
                || s.name == "jvm.condition"
                || s.name.starts_with("watchdog "),
            "only our spans are exported (no ractor/rmcp lifetime spans); found {:?}\n{all}",
            s.name
        );
        assert_eq!(s.scope, "jvmscope", "{all}");
        assert_eq!(
            s.service_name(),
            Some("jvmscope"),
            "default service name\n{all}"
        );
    }
    let roots = roots_of(spans, calls).unwrap_or_else(|| panic!("a root per call\n{all}"));
    for (call, root) in calls.iter().zip(&roots) {
        let name = format!("mcp.tool {}", call.tool);
        assert_eq!(root.kind, KIND_SERVER, "{all}");
        assert_eq!(root.str_attr("mcp.tool.name"), Some(call.tool), "{all}");
        assert_eq!(root.status_code, STATUS_UNSET, "{name} succeeded\n{all}");
        let children = children_of(spans, root);
        for m in call.jdwp {
            assert!(
                children.iter().any(|c| c.name == format!("jdwp {m}")),
                "{name} has a `jdwp {m}` child\n{all}"
            );
        }
        for child in &children {
            assert!(child.name.starts_with("jdwp "), "{all}");
        }
    }
    let tool_spans = spans
        .iter()
        .filter(|s| s.name.starts_with("mcp.tool "))
        .count();
    assert_eq!(tool_spans, calls.len(), "one span per tool call\n{all}");
    let tool_traces: BTreeSet<&str> = roots.iter().map(|s| s.trace_id.as_str()).collect();
    assert_eq!(
        tool_traces.len(),
        calls.len(),
        "one trace per tool call\n{all}"
    );
    // The traced hit: JVM-initiated, so a root of its own, not inside any tool call's trace.
    let (event, jdwp) =
        capture_trace(spans).unwrap_or_else(|| panic!("the capture's trace\n{all}"));
    assert!(!tool_traces.contains(event.trace_id.as_str()), "{all}");
    assert_eq!(
        event.str_attr("jvm.event.kinds"),
        Some("Breakpoint"),
        "{all}"
    );
    assert_eq!(event.int_attr("jvm.event.count"), Some(1), "{all}");
    assert_eq!(
        event.str_attr("jdwp.suspend_policy"),
        Some("EventThread"),
        "a trace holds only its thread\n{all}"
    );
    assert!(event.int_attr("jvm.thread.id").is_some(), "{all}");
    assert!(
        event
            .str_attr("jvmscope.stop_points")
            .is_some_and(|s| s.starts_with("bp_")),
        "{all}"
    );
    for s in &jdwp {
        assert!(s.name.starts_with("jdwp "), "{all}");
    }
    // The deferred stops are armed when the class loads: JVM-initiated, under its own root.
    let prepare = spans
        .iter()
        .find(|s| s.is_root() && s.name == "jvm.event ClassPrepare")
        .unwrap_or_else(|| panic!("the class load's trace\n{all}"));
    let armed: Vec<_> = children_of(spans, prepare)
        .into_iter()
        .filter(|s| s.name == "jdwp EventRequest.Set")
        .collect();
    assert_eq!(armed.len(), 2, "both deferred stops armed on load\n{all}");
    // Nothing of the capture leaks outside its trace.
    let below = descendants_of(spans, event);
    assert!(below.len() >= CAPTURE_JDWP.len(), "{all}");
    for s in spans.iter().filter(|s| s.name.starts_with("jdwp ")) {
        assert_jdwp_attributes(s, jvm_port, &all);
    }
}

#[track_caller]
fn assert_jdwp_attributes(s: &CollectedSpan, port: u16, all: &str) {
    let method = s.name.trim_start_matches("jdwp ");
    assert_eq!(s.kind, KIND_CLIENT, "{}\n{all}", s.name);
    assert_eq!(s.str_attr("rpc.system"), Some("jdwp"), "{all}");
    assert_eq!(s.str_attr("rpc.method"), Some(method), "{all}");
    assert_eq!(s.str_attr("rpc.service"), method.split('.').next(), "{all}");
    assert_eq!(s.str_attr("server.address"), Some("127.0.0.1"), "{all}");
    assert_eq!(
        s.attributes.get("server.port"),
        Some(&Attr::Int(i64::from(port))),
        "server.port is exported as an integer\n{all}"
    );
    assert!(
        s.int_attr("jdwp.request_bytes").is_some_and(|n| n >= 11),
        "{:?}\n{all}",
        s.attributes
    );
    let error = s.str_attr("jdwp.error");
    if s.status_code == STATUS_ERROR {
        assert!(error.is_some(), "an ERROR span names its error\n{all}");
    } else {
        assert_eq!(error, None, "{all}");
        assert!(
            s.int_attr("jdwp.id").is_some_and(|id| id > 0),
            "jdwp.id is an integer: {:?}\n{all}",
            s.attributes.get("jdwp.id")
        );
        assert!(
            s.int_attr("jdwp.reply_bytes").is_some_and(|n| n >= 11),
            "{all}"
        );
        assert!(s.int_attr("jdwp.queued_us").is_some(), "{all}");
    }
}

fn held_jvm() -> Jvm {
    Jvm::start(
        "Ticker",
        JvmOpts {
            suspend: true,
            ..JvmOpts::default()
        },
    )
}

#[test]
fn a_session_exports_one_trace_per_tool_call_with_its_jdwp_round_trips() {
    let receiver = OtlpReceiver::start();
    let jvm = held_jvm();
    let endpoint = receiver.endpoint();
    // The default 5 s batch delay stays: the spans arrive because closing stdin flushes them.
    let server = server_with(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
    ]);
    let calls = investigation(jvm.port());
    investigate(&server, &calls);
    stop(&server, Duration::from_secs(20));
    let spans = receiver.wait_for(ARRIVAL, "the investigation's span tree", |spans| {
        tree_complete(spans, &calls)
    });
    assert_tree(&spans, &calls, jvm.port());
    assert!(
        !server
            .stderr_tail()
            .to_lowercase()
            .contains("export failed"),
        "{}",
        server.stderr_tail()
    );
}

// ---- the real collector -----------------------------------------------------------------------

/// rotel; a missing one fails the test, which never skips.
fn rotel_agent() -> std::path::PathBuf {
    rotel_binary().unwrap_or_else(|| {
        panic!(
            "rotel is not installed: `cargo xtask setup` installs it (pip install \
             rotel==0.0.1a15), or point ROTEL at its rotel-agent — the end-to-end telemetry \
             check never skips"
        )
    })
}

#[test]
fn the_shipped_binary_exports_to_a_real_collector_over_grpc_and_http() {
    let rotel = Rotel::start(&rotel_agent());
    for (protocol, endpoint) in [
        ("grpc", rotel.grpc_endpoint()),
        ("http/protobuf", rotel.http_endpoint()),
    ] {
        let jvm = held_jvm();
        let before: BTreeSet<String> = rotel.spans().into_iter().map(|s| s.trace_id).collect();
        let server = server_with(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", protocol),
        ]);
        let calls = investigation(jvm.port());
        investigate(&server, &calls);
        stop(&server, Duration::from_secs(20));
        let fresh = |spans: &[CollectedSpan]| -> Vec<CollectedSpan> {
            spans
                .iter()
                .filter(|s| !before.contains(&s.trace_id))
                .cloned()
                .collect()
        };
        let spans = rotel.wait_for(
            ARRIVAL,
            &format!("the span tree over {protocol}"),
            |spans| tree_complete(&fresh(spans), &calls),
        );
        let spans = fresh(&spans);
        // Only this run's JVM: a previous run's stragglers are in other traces.
        let ours: BTreeSet<String> = spans
            .iter()
            .filter(|s| {
                s.name.starts_with("mcp.tool ")
                    || s.attributes.get("server.port") == Some(&Attr::Int(i64::from(jvm.port())))
            })
            .map(|s| s.trace_id.clone())
            .collect();
        let spans: Vec<CollectedSpan> = spans
            .into_iter()
            .filter(|s| ours.contains(&s.trace_id))
            .collect();
        assert_tree(&spans, &calls, jvm.port());
    }
}

// ---- silence, dead collectors, shutdown -------------------------------------------------------

#[test]
fn without_an_endpoint_nothing_is_exported_and_nothing_is_said() {
    let receiver = OtlpReceiver::start();
    // Everything but an endpoint: still no export, and not a word about it.
    let server = server_with(&[
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ("OTEL_SERVICE_NAME", "quiet"),
        ("OTEL_TRACES_SAMPLER", "always_on"),
    ]);
    for _ in 0..3 {
        server.call("debug_list_sessions", json!({})).expect_ok();
    }
    stop(&server, Duration::from_secs(10));
    let stderr = server.stderr_lines().join("\n");
    for word in ["otel", "opentelemetry", "otlp", "exporter", "collector"] {
        assert!(
            !stderr.to_lowercase().contains(word),
            "stderr mentions {word:?}:\n{stderr}"
        );
    }
    assert_eq!(receiver.requests(), 0);
    assert!(
        server.stdout_garbage().is_empty(),
        "{:?}",
        server.stdout_garbage()
    );
}

#[test]
fn a_refused_collector_is_logged_once_and_costs_calls_nothing() {
    // Held for the whole test: no other test's collector can take it.
    let refused = crate::support::refused_port();
    let dead = format!("http://127.0.0.1:{}", refused.port);
    let server = server_with(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", dead.as_str()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ("OTEL_BSP_SCHEDULE_DELAY", "20"),
    ]);
    let mut slowest = Duration::ZERO;
    let started = Instant::now();
    // Keep calling while several exports fail. The span is time, not a
    // count: a refused batch is retried with back-off inside the exporter,
    // and nothing outside the process sees how many batches failed until
    // it exits, so there is no condition to poll for.
    let mut calls = 0;
    while calls < 40 || started.elapsed() < Duration::from_secs(3) {
        let t = Instant::now();
        server.call("debug_list_sessions", json!({})).expect_ok();
        slowest = slowest.max(t.elapsed());
        calls += 1;
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(slowest < Duration::from_secs(1), "slowest call {slowest:?}");
    poll_until_msg(Duration::from_secs(10), "the export failure line", || {
        server
            .stderr_lines()
            .iter()
            .any(|l| l.contains("OTLP export failed"))
            .then_some(())
    });
    stop(&server, Duration::from_secs(15));
    let failures: Vec<String> = server
        .stderr_lines()
        .into_iter()
        .filter(|l| l.to_lowercase().contains("export failed") || l.contains("opentelemetry"))
        .collect();
    assert_eq!(
        failures.len(),
        1,
        "logged once, not per span or batch:\n{}",
        server.stderr_tail()
    );
}

#[test]
fn a_stalled_collector_drops_and_counts_spans_and_never_delays_calls_or_exit() {
    // Accepts connections and never answers: every export hangs.
    let listener =
        std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
    let port = listener
        .local_addr()
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("{e}"));
    let _hold = std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    let endpoint = format!("http://127.0.0.1:{port}");
    let server = server_with(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
        ("OTEL_BSP_MAX_QUEUE_SIZE", "2"),
        ("OTEL_BSP_SCHEDULE_DELAY", "20"),
    ]);
    let mut slowest = Duration::ZERO;
    for _ in 0..30 {
        let t = Instant::now();
        server.call("debug_list_sessions", json!({})).expect_ok();
        slowest = slowest.max(t.elapsed());
    }
    assert!(slowest < Duration::from_secs(1), "slowest call {slowest:?}");
    let took = stop(&server, Duration::from_secs(15));
    assert!(
        took < Duration::from_secs(8),
        "exit is bounded (flush gives up after 3 s), took {took:?}\n{}",
        server.stderr_tail()
    );
    let stderr = server.stderr_lines().join("\n");
    let lost = stderr
        .lines()
        .find(|l| l.contains("spans lost"))
        .unwrap_or_else(|| panic!("the dropped count is logged at exit:\n{stderr}"));
    let dropped = lost
        .split_whitespace()
        .find_map(|w| w.strip_prefix("dropped="))
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or(0);
    assert!(dropped > 0, "{lost}");
}

#[test]
fn sigterm_flushes_the_last_spans() {
    let receiver = OtlpReceiver::start();
    let endpoint = receiver.endpoint();
    let server = server_with(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        // Far longer than the test: only the shutdown flush can deliver the span.
        ("OTEL_BSP_SCHEDULE_DELAY", "600000"),
    ]);
    server.call("debug_list_sessions", json!({})).expect_ok();
    let status = Command::new("kill")
        .args(["-TERM", &server.pid().to_string()])
        .status()
        .unwrap_or_else(|e| panic!("kill: {e}"));
    assert!(status.success());
    // The flush happens before main returns; whether the process then exits promptly is the
    // composition root's business (stdin's blocking read), so only the spans are awaited here.
    let spans = receiver.wait_for(ARRIVAL, "the flushed tool span", |spans| {
        spans
            .iter()
            .any(|s| s.name == "mcp.tool debug_list_sessions")
    });
    assert_eq!(
        spans.iter().filter(|s| s.is_root()).count(),
        1,
        "{}",
        describe(&spans)
    );
    poll_until_msg(Duration::from_secs(10), "the SIGTERM line", || {
        server
            .stderr_lines()
            .iter()
            .any(|l| l.contains("SIGTERM"))
            .then_some(())
    });
}

#[test]
fn the_log_file_rotates_by_size_and_stdout_stays_clean() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let log = dir.path().join("logs/jvmscope.log");
    let log_str = log.display().to_string();
    let server = server_with(&[
        ("JVMSCOPE_LOG_FILE", log_str.as_str()),
        ("JVMSCOPE_LOG_MAX_BYTES", "2000"),
        ("RUST_LOG", "debug"),
    ]);
    // Each line that is not JSON logs one DEBUG line of ours (rmcp's
    // DEBUG lines, which carry payloads, are never logged).
    for _ in 0..60 {
        server.send_raw("not json").expect("write");
    }
    server.request("ping", json!({})).expect("ping answered");
    stop(&server, Duration::from_secs(10));
    let rotated = dir.path().join("logs/jvmscope.log.1");
    assert!(
        rotated.exists(),
        "rotated at 2000 bytes: {}",
        server.stderr_tail()
    );
    for path in [&log, &rotated] {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        // Within the limit, unless a single record is larger than the limit by itself.
        assert!(
            !text.is_empty() && (text.len() <= 2000 || text.lines().count() == 1),
            "{} is {} bytes in {} lines",
            path.display(),
            text.len(),
            text.lines().count()
        );
    }
    assert!(
        !dir.path().join("logs/jvmscope.log.4").exists(),
        "only a few are kept"
    );
    assert!(
        server.stdout_garbage().is_empty(),
        "{:?}",
        server.stdout_garbage()
    );
}
