//! Load bench: what span export costs. JDWP round-trip throughput through
//! the Connection actor against one real JVM, with telemetry as the binary
//! runs it: export off (no endpoint), export on (`always_on`, OTLP/gRPC to
//! a collector in another process), and export on with a 10% ratio sampler
//! (`parentbased_traceidratio`, 0.1), plus export configured with
//! `always_off` (what the layers cost when nothing is recorded). Requests
//! go in groups of 8 under one root span each (a tool call's shape), 4
//! groups in flight (32 requests). Besides throughput, each measurement
//! reports the CPU time jvmscope spent per round trip (all threads,
//! including the export task and the final flush), which other load on
//! the machine disturbs far less than wall-clock throughput. A second
//! table gives the CPU cost of one JDWP span alone, without I/O.
//!
//! Each measurement runs in a fresh child process (so each installs its own
//! global subscriber and the export task shares the runtime with the
//! actors, as in the binary); the modes alternate round by round against
//! the same JVM so drift hits all alike. The collector is an in-process
//! OTLP/gRPC receiver in this (parent) process.
//!
//! Run: `cargo bench --bench telemetry` (needs a JDK on PATH or JAVA_HOME).

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use jvmscope::actors::{Engine, EngineConfig};
use jvmscope::jdwp::virtual_machine::Version;
use jvmscope::model::AttachSpec;
use jvmscope::telemetry::{
    self, ExportConfig, Protocol, QueueConfig, SamplerChoice, TelemetryConfig,
};
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use tracing::Instrument;

/// Round trips per measurement.
const REQUESTS: usize = 8000;
/// Round trips per root span (one "tool call").
const GROUP: usize = 8;
/// Root spans in flight at once (GROUP × GROUPS_IN_FLIGHT requests).
const GROUPS_IN_FLIGHT: usize = 4;
/// Measurements per mode.
const ROUNDS: usize = 5;

/// off: no endpoint. unsampled: export configured, `always_off` (what the
/// layers cost with nothing recorded). on: `always_on`. ratio10:
/// `parentbased_traceidratio` 0.1.
const MODES: [&str; 4] = ["off", "unsampled", "on", "ratio10"];

fn report(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
}

fn java_home_bin(tool: &str) -> PathBuf {
    std::env::var_os("JAVA_HOME")
        .map(|h| PathBuf::from(h).join("bin").join(tool))
        .filter(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from(tool))
}

/// Compiles the Ticker fixture and starts it with a JDWP agent.
fn start_jvm() -> (std::process::Child, u16) {
    let dir = std::env::temp_dir().join(format!("jvmscope-bench-tel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/java/Ticker.java");
    let status = Command::new(java_home_bin("javac"))
        .args(["-g", "-d"])
        .arg(&dir)
        .arg(&src)
        .status()
        .expect("javac (a JDK is required)");
    assert!(status.success(), "javac failed");
    // A fixed port: after a debugger lets go the agent listens again on the same
    // address, and each measurement attaches anew.
    let free = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let mut child = Command::new(java_home_bin("java"))
        .arg(format!(
            "-agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=127.0.0.1:{free}"
        ))
        .arg("-cp")
        .arg(&dir)
        .arg("Ticker")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("java");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let port = loop {
        let line = lines.next().expect("JVM output").expect("line");
        if let Some(rest) = line.strip_prefix("Listening for transport dt_socket at address:") {
            break rest
                .trim()
                .rsplit(':')
                .next()
                .and_then(|p| p.parse().ok())
                .expect("port");
        }
    };
    std::thread::spawn(move || for _ in lines {});
    (child, port)
}

// ---- the collector (parent process) ----------------------------------------------------------

struct Counter(Arc<AtomicU64>);

#[tonic::async_trait]
impl TraceService for Counter {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let n: usize = request
            .into_inner()
            .resource_spans
            .iter()
            .flat_map(|rs| &rs.scope_spans)
            .map(|ss| ss.spans.len())
            .sum();
        self.0.fetch_add(n as u64, Ordering::Relaxed);
        Ok(tonic::Response::new(ExportTraceServiceResponse {
            partial_success: None,
        }))
    }
}

/// Starts an OTLP/gRPC receiver on its own thread; returns its endpoint and span count.
fn start_collector() -> (String, Arc<AtomicU64>) {
    let count = Arc::new(AtomicU64::new(0));
    let (tx, rx) = std::sync::mpsc::channel();
    let service = Counter(count.clone());
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("collector runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            tx.send(listener.local_addr().expect("addr")).expect("send");
            let incoming = tonic::transport::server::TcpIncoming::from(listener);
            let _ = tonic::transport::Server::builder()
                .add_service(TraceServiceServer::new(service))
                .serve_with_incoming(incoming)
                .await;
        });
    });
    let addr = rx.recv_timeout(Duration::from_secs(10)).expect("collector");
    (format!("http://{addr}"), count)
}

// ---- one measurement (child process) ---------------------------------------------------------

/// CPU time this process has used so far, all threads, in nanoseconds
/// (Linux `schedstat`); robust to other load on the machine, unlike
/// wall-clock throughput.
fn cpu_ns() -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

async fn throughput(conn: &jvmscope::actors::ConnectionHandle, requests: usize) -> f64 {
    let started = Instant::now();
    futures::stream::iter(0..requests / GROUP)
        .map(|_| {
            let root = tracing::info_span!(
                target: "jvmscope::bench",
                parent: None,
                "mcp.tool",
                "otel.name" = "mcp.tool bench",
                "otel.kind" = "server",
            );
            let sends: Vec<_> = (0..GROUP).map(|_| conn.send(&Version)).collect();
            async move {
                for r in futures::future::join_all(sends).await {
                    r.expect("Version");
                }
            }
            .instrument(root)
        })
        .buffer_unordered(GROUPS_IN_FLIGHT)
        .for_each(|()| async {})
        .await;
    requests as f64 / started.elapsed().as_secs_f64()
}

/// Runs one measurement in this (child) process and prints `rps=… exported=… dropped=…`.
fn child(mode: &str, port: u16, endpoint: &str) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let (dispatch, telemetry) = telemetry::build(&config_for(mode, endpoint));
        tracing::dispatcher::set_global_default(dispatch).expect("subscriber");
        let engine = Engine::start(EngineConfig::default())
            .await
            .expect("engine");
        let spec = AttachSpec {
            host: "127.0.0.1".into(),
            port,
            timeout: Duration::from_secs(5),
            read_only: false,
            source_roots: vec![],
            class_roots: vec![],
        };
        // The JDWP agent listens again a moment after the previous child let go.
        let deadline = Instant::now() + Duration::from_secs(20);
        let session = loop {
            match engine.attach(&spec).await {
                Ok(session) => break session,
                Err(e) if Instant::now() < deadline => {
                    let _ = e;
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(e) => panic!("attach: {e}"),
            }
        };
        let conn = session.connection().clone();
        throughput(&conn, REQUESTS / 4).await; // warm-up
        // Export the warm-up's spans, so the collector connection is open.
        let _ = telemetry.flush(Duration::from_secs(10)).await;
        let cpu_before = cpu_ns();
        let rps = throughput(&conn, REQUESTS).await;
        // Spans still queued are exported now, and that CPU counts too.
        let _ = telemetry.flush(Duration::from_secs(10)).await;
        let cpu_us = (cpu_ns() - cpu_before) as f64 / 1e3 / REQUESTS as f64;
        session.disconnect().await.expect("disconnect");
        engine.shutdown().await;
        let stats = telemetry.export_stats().unwrap_or_default();
        telemetry.shutdown().await;
        report(&format!(
            "rps={rps:.0} cpu_us={cpu_us:.2} exported={} dropped={} failed={}",
            stats.exported, stats.dropped, stats.failed
        ));
    });
}

/// Spans per span-cost measurement.
const SPANS: usize = 200_000;

/// The JDWP span exactly as the Connection opens, fills and closes it, under
/// a root span per `GROUP`; no I/O. Returns nanoseconds per JDWP span.
fn span_cost_loop() -> f64 {
    use tracing::field::Empty;
    let started = Instant::now();
    for _ in 0..SPANS / GROUP {
        let root = tracing::info_span!(
            target: "jvmscope::bench",
            parent: None,
            "mcp.tool",
            "otel.name" = "mcp.tool bench",
            "otel.kind" = "server",
        );
        for id in 0..GROUP as u32 {
            let name = "VirtualMachine.Version";
            let span = tracing::info_span!(
                target: "jvmscope::actors::connection",
                parent: &root,
                "jdwp",
                "otel.name" = %format_args!("jdwp {name}"),
                "otel.kind" = "client",
                "otel.status_code" = Empty,
                "rpc.system" = "jdwp",
                "rpc.service" = "VirtualMachine",
                "rpc.method" = name,
                "server.address" = %"127.0.0.1",
                "server.port" = 5005u16,
                "jdwp.id" = Empty,
                "jdwp.request_bytes" = 11u64,
                "jdwp.reply_bytes" = Empty,
                "jdwp.error" = Empty,
                "jdwp.queued_us" = Empty,
            );
            span.record("jdwp.id", id);
            span.record("jdwp.queued_us", 3u64);
            span.record("jdwp.reply_bytes", 120u64);
            drop(span);
        }
    }
    started.elapsed().as_nanos() as f64 / SPANS as f64
}

/// Measures [`span_cost_loop`] in this (child) process and prints `ns=…`.
fn span_cost_child(mode: &str, endpoint: &str) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let (dispatch, telemetry) = telemetry::build(&config_for(mode, endpoint));
        tracing::dispatcher::set_global_default(dispatch).expect("subscriber");
        span_cost_loop(); // warm-up
        let ns = tokio::task::spawn_blocking(span_cost_loop)
            .await
            .expect("loop");
        let stats = telemetry.export_stats().unwrap_or_default();
        telemetry.shutdown().await;
        report(&format!(
            "ns={ns:.0} exported={} dropped={} failed={}",
            stats.exported, stats.dropped, stats.failed
        ));
    });
}

fn config_for(mode: &str, endpoint: &str) -> TelemetryConfig {
    let sampler = match mode {
        "on" => Some(SamplerChoice::AlwaysOn),
        "ratio10" => Some(SamplerChoice::ParentBasedTraceIdRatio(0.1)),
        "unsampled" => Some(SamplerChoice::AlwaysOff),
        _ => None,
    };
    TelemetryConfig {
        log_filter: telemetry::config::DEFAULT_LOG_FILTER.to_string(),
        log_file: None,
        service_name: Some("jvmscope-bench".into()),
        export: sampler.map(|sampler| ExportConfig {
            endpoint: endpoint.to_string(),
            // JVMSCOPE_BENCH_PROTOCOL=http/protobuf (with an HTTP endpoint,
            // e.g. rotel's) measures the other transport.
            protocol: match std::env::var("JVMSCOPE_BENCH_PROTOCOL").as_deref() {
                Ok("http/protobuf") => Protocol::HttpProtobuf,
                _ => Protocol::Grpc,
            },
            sampler,
            queue: QueueConfig::default(),
        }),
        warnings: Vec::new(),
    }
}

// ---- the driver ------------------------------------------------------------------------------

#[derive(Default)]
struct Results {
    rps: Vec<f64>,
    cpu: Vec<f64>,
    dropped: u64,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn field(line: &str, key: &str) -> f64 {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(key))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
}

fn main() {
    if let Ok(mode) = std::env::var("JVMSCOPE_BENCH_SPAN_COST") {
        let endpoint = std::env::var("JVMSCOPE_BENCH_ENDPOINT").expect("JVMSCOPE_BENCH_ENDPOINT");
        span_cost_child(&mode, &endpoint);
        return;
    }
    if let Ok(mode) = std::env::var("JVMSCOPE_BENCH_MODE") {
        let port = std::env::var("JVMSCOPE_BENCH_PORT")
            .ok()
            .and_then(|p| p.parse().ok())
            .expect("JVMSCOPE_BENCH_PORT");
        let endpoint = std::env::var("JVMSCOPE_BENCH_ENDPOINT").expect("JVMSCOPE_BENCH_ENDPOINT");
        child(&mode, port, &endpoint);
        return;
    }
    // `cargo bench` passes --bench; `cargo test --benches` does not: nothing to do then.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let (mut jvm, port) = start_jvm();
    let (endpoint, received) = start_collector();
    let exe = std::env::current_exe().expect("current exe");
    // One child per measurement; `key=value` words on its result line.
    let run = |var: &str, mode: &str, key: &str| -> String {
        let out = Command::new(&exe)
            .env(var, mode)
            .env("JVMSCOPE_BENCH_PORT", port.to_string())
            .env("JVMSCOPE_BENCH_ENDPOINT", &endpoint)
            .stderr(Stdio::inherit())
            .output()
            .expect("child");
        assert!(out.status.success(), "child {var}={mode} failed");
        let text = String::from_utf8_lossy(&out.stdout);
        text.lines()
            .find(|l| l.starts_with(key))
            .unwrap_or_else(|| panic!("child {var}={mode} printed no result: {text}"))
            .to_string()
    };
    let mut trips: Vec<Results> = MODES.iter().map(|_| Results::default()).collect();
    let mut spans: Vec<Results> = MODES.iter().map(|_| Results::default()).collect();
    for _round in 0..ROUNDS {
        for (i, mode) in MODES.iter().enumerate() {
            let line = run("JVMSCOPE_BENCH_MODE", mode, "rps=");
            trips[i].rps.push(field(&line, "rps="));
            trips[i].cpu.push(field(&line, "cpu_us="));
            trips[i].dropped += field(&line, "dropped=") as u64;
            let line = run("JVMSCOPE_BENCH_SPAN_COST", mode, "ns=");
            spans[i].rps.push(field(&line, "ns="));
            spans[i].dropped += field(&line, "dropped=") as u64;
        }
    }
    let _ = jvm.kill();
    let _ = jvm.wait();

    let label = |mode: &str| match mode {
        "off" => "off (no endpoint)",
        "unsampled" => "export on, always_off (layers only)",
        "on" => "export on, always_on, OTLP/gRPC",
        _ => "export on, parentbased_traceidratio 0.1",
    };
    report(&format!(
        "JDWP VirtualMachine.Version round trips against a real JVM, {REQUESTS} per measurement \
         in root spans of {GROUP}, {} in flight; median of {ROUNDS} alternating rounds",
        GROUP * GROUPS_IN_FLIGHT
    ));
    report(
        "| telemetry | requests/s | throughput cost vs off | jvmscope CPU µs per round trip | \
         CPU cost vs off | spans dropped |\n|---|---|---|---|---|---|",
    );
    let off = median(trips[0].rps.clone());
    let off_cpu = median(trips[0].cpu.clone());
    for (mode, r) in MODES.iter().zip(&trips) {
        let m = median(r.rps.clone());
        let cpu = median(r.cpu.clone());
        report(&format!(
            "| {} | {m:.0} | {:.1}% | {cpu:.2} | {:+.1}% | {} |",
            label(mode),
            (off - m) / off * 100.0,
            (cpu - off_cpu) / off_cpu * 100.0,
            r.dropped
        ));
    }
    report(&format!(
        "\nCPU per JDWP span (opened, filled and closed as the Connection does, no I/O), \
         {SPANS} spans per measurement; median of {ROUNDS}"
    ));
    report("| telemetry | ns per span | added vs off | spans dropped |\n|---|---|---|---|");
    let off = median(spans[0].rps.clone());
    for (mode, r) in MODES.iter().zip(&spans) {
        let m = median(r.rps.clone());
        report(&format!(
            "| {} | {m:.0} | {:+.0} ns | {} |",
            label(mode),
            m - off,
            r.dropped
        ));
    }
    report(&format!(
        "\nspans received by the collector: {}",
        received.load(Ordering::Relaxed)
    ));
}
