//! Load bench: what span export costs, in two workloads, each with export
//! off and on in the same run.
//!
//! 1. JDWP round-trip throughput through the Connection actor against one
//!    real JVM (the Ticker fixture), with telemetry as the binary runs it:
//!    export off (no endpoint), export configured with `always_off` (what
//!    the layers cost when nothing is recorded), `always_on` (OTLP/gRPC
//!    through `opentelemetry-otlp` to a collector outside the measured
//!    process) and a 10% ratio sampler
//!    (`parentbased_traceidratio`, 0.1). Requests go in groups of 8 under
//!    one root span each (a tool call's shape), 4 groups in flight (32
//!    requests). Besides throughput, each measurement reports the CPU time
//!    jvmscope spent per round trip (all threads, including the export task
//!    and the final flush), which other load on the machine disturbs far
//!    less than wall-clock throughput. A second table gives the CPU cost of
//!    one JDWP span alone, without I/O (a flood far above any real rate:
//!    its `always_on` row overflows the export queue by design, which the
//!    dropped column shows).
//! 2. Trace capture throughput: a traced line stop (3 frames, all locals)
//!    on the hot, contended line of the TraceLoad fixture (4 busy threads,
//!    as in bench/trace_load.rs), captures recorded per second with export
//!    off, `always_on` and the 10% sampler. Each capture is a `jvm.event`
//!    root span with its JDWP round trips below it.
//!
//! Each measurement runs in a fresh child process (so each installs its own
//! global subscriber and the export task shares the runtime with the
//! actors, as in the binary); the modes alternate round by round against
//! the same JVM so drift hits all alike. The collector is an OTLP/gRPC
//! receiver in this (parent) process that counts the spans it receives
//! without decoding them (`JVMSCOPE_BENCH_COLLECTOR=decode`: the
//! generated `opentelemetry-proto` service, decoding everything).
//!
//! Run: `cargo bench --bench telemetry` (`-- --rounds N` for more rounds;
//! needs a JDK on PATH or JAVA_HOME).

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use jvmscope::actors::{Engine, EngineConfig, SessionHandle};
use jvmscope::jdwp::virtual_machine::Version;
use jvmscope::model::AttachSpec;
use jvmscope::model::stop_point::{
    Filters, LineSpec, LocalsChoice, Mode, StopPointSpec, Target, TraceSpec,
};
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

mod support;
use support::report;

/// Round trips per measurement (~0.4 s at full speed: long enough that a
/// scheduler hiccup from other load does not decide a measurement).
const REQUESTS: usize = 40_000;
/// Round trips per root span (one "tool call").
const GROUP: usize = 8;
/// Root spans in flight at once (GROUP × GROUPS_IN_FLIGHT requests).
const GROUPS_IN_FLIGHT: usize = 4;
/// Measurements per mode (`-- --rounds N` changes it).
const ROUNDS: usize = 5;

/// off: no endpoint. unsampled: export configured, `always_off` (what the
/// layers cost with nothing recorded). on: `always_on`. ratio10:
/// `parentbased_traceidratio` 0.1.
const MODES: [&str; 4] = ["off", "unsampled", "on", "ratio10"];
/// The trace capture workload's modes.
const CAPTURE_MODES: [&str; 3] = ["off", "on", "ratio10"];
/// How long one capture measurement counts captures.
const CAPTURE_TIME: Duration = Duration::from_secs(4);
/// Busy threads of the TraceLoad fixture (as bench/trace_load.rs).
const CAPTURE_THREADS: &str = "4";

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

/// The length-delimited fields numbered `want` of the protobuf message
/// `msg` (others are skipped; a malformed message ends the walk).
fn fields(mut msg: &[u8], want: u64) -> Vec<&[u8]> {
    fn varint(b: &mut &[u8]) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let (&byte, rest) = b.split_first()?;
            *b = rest;
            v |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return Some(v);
            }
        }
        None
    }
    let mut out = Vec::new();
    while let Some(key) = varint(&mut msg) {
        let skip = match key & 7 {
            0 => {
                if varint(&mut msg).is_none() {
                    break;
                }
                0
            }
            1 => 8,
            5 => 4,
            2 => match varint(&mut msg) {
                Some(len) if len as usize <= msg.len() => {
                    let (field, rest) = msg.split_at(len as usize);
                    if key >> 3 == want {
                        out.push(field);
                    }
                    msg = rest;
                    0
                }
                _ => break,
            },
            _ => break,
        };
        if skip > msg.len() {
            break;
        }
        msg = &msg[skip..];
    }
    out
}

/// Spans in an encoded `ExportTraceServiceRequest`: resource_spans (1) →
/// scope_spans (2) → spans (2), counted without decoding them.
fn count_spans(request: &[u8]) -> u64 {
    fields(request, 1)
        .into_iter()
        .flat_map(|rs| fields(rs, 2))
        .map(|ss| fields(ss, 2).len() as u64)
        .sum()
}

/// One gRPC call on the light collector: read the request, count its
/// spans, answer an empty `ExportTraceServiceResponse` with status OK.
async fn light_call(
    request: http::Request<h2::RecvStream>,
    mut respond: h2::server::SendResponse<bytes::Bytes>,
    count: Arc<AtomicU64>,
) -> Result<(), h2::Error> {
    let mut body = request.into_body();
    let mut message = Vec::new();
    while let Some(chunk) = body.data().await {
        let chunk = chunk?;
        let _ = body.flow_control().release_capacity(chunk.len());
        message.extend_from_slice(&chunk);
    }
    // The gRPC frame: a compression flag and a 4-byte length, then the message.
    count.fetch_add(
        count_spans(message.get(5..).unwrap_or(&[])),
        Ordering::Relaxed,
    );
    let response = http::Response::builder()
        .status(200)
        .header("content-type", "application/grpc")
        .body(())
        .expect("response");
    let mut send = respond.send_response(response, false)?;
    send.send_data(bytes::Bytes::from_static(&[0, 0, 0, 0, 0]), false)?;
    let mut trailers = http::HeaderMap::new();
    trailers.insert("grpc-status", http::HeaderValue::from_static("0"));
    send.send_trailers(trailers)
}

/// Starts an OTLP/gRPC receiver on its own thread; returns its endpoint and
/// span count. By default it only counts the spans it receives (a walk of
/// the protobuf, no decoding), so its CPU — on the same two cores as
/// jvmscope and the JVM — stays small; `JVMSCOPE_BENCH_COLLECTOR=decode`
/// decodes every request into the `opentelemetry-proto` structs instead
/// (what the earlier figures used).
fn start_collector() -> (String, Arc<AtomicU64>) {
    if std::env::var("JVMSCOPE_BENCH_COLLECTOR").as_deref() == Ok("decode") {
        return start_decoding_collector();
    }
    let count = Arc::new(AtomicU64::new(0));
    let (tx, rx) = std::sync::mpsc::channel();
    let counted = count.clone();
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
            while let Ok((socket, _)) = listener.accept().await {
                let count = counted.clone();
                tokio::spawn(async move {
                    // Windows as large as real collectors grow theirs to.
                    let Ok(mut conn) = h2::server::Builder::new()
                        .initial_window_size(1 << 20)
                        .initial_connection_window_size(4 << 20)
                        .handshake::<_, bytes::Bytes>(socket)
                        .await
                    else {
                        return;
                    };
                    while let Some(Ok((request, respond))) = conn.accept().await {
                        tokio::spawn(light_call(request, respond, count.clone()));
                    }
                });
            }
        });
    });
    let addr = rx.recv_timeout(Duration::from_secs(10)).expect("collector");
    (format!("http://{addr}"), count)
}

/// The decoding collector: the generated `opentelemetry-proto` service.
fn start_decoding_collector() -> (String, Arc<AtomicU64>) {
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
            // A request takes its parent span when it is sent: send inside
            // the root, so the round trips are its children (a tool call's
            // shape), not traces of their own.
            let sends: Vec<_> = root.in_scope(|| (0..GROUP).map(|_| conn.send(&Version)).collect());
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

/// Attaches to the fixture on `port`, waiting for its agent to listen
/// again after the previous child let go.
async fn attach(engine: &Engine, port: u16) -> SessionHandle {
    let spec = AttachSpec {
        host: "127.0.0.1".into(),
        port,
        timeout: Duration::from_secs(5),
        read_only: false,
        source_roots: vec![],
        class_roots: vec![],
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match engine.attach(&spec).await {
            Ok(session) => return session,
            // The agent is not listening yet: poll again shortly.
            Err(_) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(50)).await
            }
            Err(e) => panic!("attach: {e}"),
        }
    }
}

/// Runs `measure` in this (child) process with telemetry installed as
/// `mode` and a session attached to the JVM on `port`, then prints its
/// `key=value` words followed by the export counters.
fn in_child(
    mode: &str,
    port: u16,
    endpoint: &str,
    measure: impl AsyncFnOnce(&jvmscope::actors::SessionHandle, &telemetry::Telemetry) -> String,
) {
    // The runtime the binary runs the engine on (ADR 0014).
    let runtime = jvmscope::actors::runtime::build().expect("runtime");
    runtime.block_on(async {
        let (dispatch, telemetry) = telemetry::build(&config_for(mode, endpoint));
        tracing::dispatcher::set_global_default(dispatch).expect("subscriber");
        let engine = Engine::start(EngineConfig::default())
            .await
            .expect("engine");
        let session = attach(&engine, port).await;
        let words = measure(&session, &telemetry).await;
        session.disconnect().await.expect("disconnect");
        engine.shutdown().await;
        let stats = telemetry.export_stats().unwrap_or_default();
        telemetry.shutdown().await;
        report(&format!(
            "{words} exported={} dropped={} failed={}",
            stats.exported, stats.dropped, stats.failed
        ));
    });
}

/// Runs one measurement in this (child) process and prints `rps=… exported=… dropped=…`.
fn child(mode: &str, port: u16, endpoint: &str) {
    in_child(mode, port, endpoint, async |session, telemetry| {
        let conn = session.raw_connection().clone();
        throughput(&conn, REQUESTS / 4).await; // warm-up
        // Export the warm-up's spans, so the collector connection is open.
        let _ = telemetry.flush(Duration::from_secs(10)).await;
        let cpu_before = cpu_ns();
        let rps = throughput(&conn, REQUESTS).await;
        // Spans still queued are exported now, and that CPU counts too.
        let _ = telemetry.flush(Duration::from_secs(10)).await;
        let cpu_us = (cpu_ns() - cpu_before) as f64 / 1e3 / REQUESTS as f64;
        format!("rps={rps:.0} cpu_us={cpu_us:.2}")
    });
}

/// The traced line stop of the capture workload: 3 frames, all locals, no
/// hit budget (bench/trace_load.rs's capture phase).
fn capture_spec(line: u32) -> StopPointSpec {
    StopPointSpec {
        target: Target::Line(LineSpec {
            class: "TraceLoad".into(),
            method: None,
            line: Some(line),
        }),
        mode: Mode::Trace(TraceSpec {
            frames: 3,
            locals: LocalsChoice::All,
            max_hits: 0,
            ..TraceSpec::default()
        }),
        // Full rate: the overhead guard would pause a stop point this costly.
        filters: Filters {
            overhead_pct: Some(0),
            ..Filters::default()
        },
        // The wire engine, measured as such: never a probe.
        engine: jvmscope::model::stop_point::Engine::Wire,
    }
}

/// Runs one trace capture measurement in this (child) process and prints
/// `hits=… cpu_us=… exported=… dropped=…`.
fn capture_child(mode: &str, port: u16, endpoint: &str) {
    in_child(mode, port, endpoint, async |session, telemetry| {
        let line = support::marked_line("TraceLoad", "// LINE: hot");
        let armed = session
            .stop_points()
            .arm(capture_spec(line), 1)
            .await
            .unwrap_or_else(|e| panic!("arm: {e}"));
        let id = armed.point.expect("a stop point").id;
        let captured = |l: &jvmscope::actors::Listing| {
            l.points
                .iter()
                .find(|p| p.id == id)
                .map(|p| p.captured)
                .unwrap_or(0)
        };
        // Warm up: the first hits fill the caches and open the collector
        // connection.
        tokio::time::sleep(Duration::from_millis(700)).await;
        let _ = telemetry.flush(Duration::from_secs(10)).await;
        let before = captured(&session.stop_points().list().await);
        let cpu_before = cpu_ns();
        let started = Instant::now();
        tokio::time::sleep(CAPTURE_TIME).await;
        let after = captured(&session.stop_points().list().await);
        let elapsed = started.elapsed();
        let _ = session.stop_points().clear(&id).await;
        // Spans still queued are exported now, and that CPU counts too.
        let _ = telemetry.flush(Duration::from_secs(10)).await;
        let hits = after.saturating_sub(before);
        let cpu_us = (cpu_ns() - cpu_before) as f64 / 1e3 / hits.max(1) as f64;
        format!(
            "hits={:.0} cpu_us={cpu_us:.1}",
            hits as f64 / elapsed.as_secs_f64()
        )
    });
}

/// Spans per span-cost measurement.
const SPANS: usize = 200_000;

/// The JDWP span exactly as the Connection opens, fills and closes it, under
/// a root span per `GROUP`; no I/O. Returns nanoseconds per JDWP span.
fn span_cost_loop() -> f64 {
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
            let mut span = telemetry::RoundTrip::open(
                &root,
                &telemetry::RoundTripStart {
                    method: "VirtualMachine.Version",
                    service: "VirtualMachine",
                    host: "127.0.0.1",
                    port: 5005,
                    request_bytes: 11,
                },
            );
            span.sent(id);
            span.replied(3, 120);
            drop(span);
        }
    }
    started.elapsed().as_nanos() as f64 / SPANS as f64
}

/// Measures [`span_cost_loop`] in this (child) process and prints `ns=…`.
fn span_cost_child(mode: &str, endpoint: &str) {
    // The runtime the binary runs the engine on (ADR 0014).
    let runtime = jvmscope::actors::runtime::build().expect("runtime");
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
    exported: u64,
    dropped: u64,
}

impl Results {
    fn add(&mut self, line: &str, rate: &str) {
        self.rps.push(field(line, rate));
        self.cpu.push(field(line, "cpu_us="));
        self.exported += field(line, "exported=") as u64;
        self.dropped += field(line, "dropped=") as u64;
    }
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

fn label(mode: &str) -> &'static str {
    match mode {
        "off" => "off (no endpoint)",
        "unsampled" => "export on, always_off (layers only)",
        "on" => "export on, always_on, OTLP/gRPC",
        _ => "export on, parentbased_traceidratio 0.1",
    }
}

/// One row per mode: the median rate and CPU, each against `off` (the
/// first row).
fn table(modes: &[&str], results: &[Results], rate: &str, cpu: &str) {
    report(&format!(
        "| telemetry | {rate} (median) | range | throughput cost vs off (median of rounds) | jvmscope CPU µs per \
         {cpu} | CPU cost vs off | spans exported | spans dropped |\n\
         |---|---|---|---|---|---|---|---|"
    ));
    // Each cost is the median of per-round ratios: a round's measurements
    // run back to back, so load from elsewhere weighs on them alike.
    let ratio =
        |xs: &[f64], base: &[f64]| median(xs.iter().zip(base).map(|(x, b)| x / b).collect());
    for (mode, r) in modes.iter().zip(results) {
        let m = median(r.rps.clone());
        let lo = r.rps.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = r.rps.iter().copied().fold(0.0, f64::max);
        let cpu = median(r.cpu.clone());
        report(&format!(
            "| {} | {m:.0} | {lo:.0}–{hi:.0} | {:.1}% | {cpu:.2} | {:+.1}% | {} | {} |",
            label(mode),
            (1.0 - ratio(&r.rps, &results[0].rps)) * 100.0,
            (ratio(&r.cpu, &results[0].cpu) - 1.0) * 100.0,
            r.exported,
            r.dropped
        ));
    }
}

fn env_port() -> u16 {
    std::env::var("JVMSCOPE_BENCH_PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .expect("JVMSCOPE_BENCH_PORT")
}

fn main() {
    let endpoint = || std::env::var("JVMSCOPE_BENCH_ENDPOINT").expect("JVMSCOPE_BENCH_ENDPOINT");
    if let Ok(mode) = std::env::var("JVMSCOPE_BENCH_SPAN_COST") {
        span_cost_child(&mode, &endpoint());
        return;
    }
    if let Ok(mode) = std::env::var("JVMSCOPE_BENCH_MODE") {
        child(&mode, env_port(), &endpoint());
        return;
    }
    if let Ok(mode) = std::env::var("JVMSCOPE_BENCH_CAPTURE") {
        capture_child(&mode, env_port(), &endpoint());
        return;
    }
    // `cargo bench` passes --bench; `cargo test --benches` does not: nothing to do then.
    let args: Vec<String> = std::env::args().collect();
    if !args.iter().any(|a| a == "--bench") {
        return;
    }
    let rounds = args
        .iter()
        .position(|a| a == "--rounds")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(ROUNDS)
        .max(1);
    let (endpoint, received) = start_collector();
    let exe = std::env::current_exe().expect("current exe");
    // One child per measurement; `key=value` words on its result line.
    let run = |var: &str, mode: &str, port: u16, key: &str| -> String {
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

    // Round trips (and the span cost) against the Ticker.
    let (mut jvm, port) =
        support::start_fixture_on("Ticker", "ticker started", &[], support::free_port());
    let mut trips: Vec<Results> = MODES.iter().map(|_| Results::default()).collect();
    let mut spans: Vec<Results> = MODES.iter().map(|_| Results::default()).collect();
    for _round in 0..rounds {
        for (i, mode) in MODES.iter().enumerate() {
            trips[i].add(&run("JVMSCOPE_BENCH_MODE", mode, port, "rps="), "rps=");
            spans[i].add(&run("JVMSCOPE_BENCH_SPAN_COST", mode, port, "ns="), "ns=");
        }
    }
    let _ = jvm.kill();
    let _ = jvm.wait();

    // Trace captures on TraceLoad's hot line (the Ticker is gone: the busy
    // fixture has the machine to itself).
    let (mut jvm, port) = support::start_fixture_on(
        "TraceLoad",
        "trace load started",
        &[CAPTURE_THREADS],
        support::free_port(),
    );
    let mut captures: Vec<Results> = CAPTURE_MODES.iter().map(|_| Results::default()).collect();
    for _round in 0..rounds {
        for (i, mode) in CAPTURE_MODES.iter().enumerate() {
            captures[i].add(&run("JVMSCOPE_BENCH_CAPTURE", mode, port, "hits="), "hits=");
        }
    }
    let _ = jvm.kill();
    let _ = jvm.wait();

    report(&format!(
        "JDWP VirtualMachine.Version round trips against a real JVM, {REQUESTS} per measurement \
         in root spans of {GROUP}, {} in flight; median of {rounds} alternating rounds",
        GROUP * GROUPS_IN_FLIGHT
    ));
    table(&MODES, &trips, "requests/s", "round trip");
    report(&format!(
        "\nTrace capture on TraceLoad's hot line ({CAPTURE_THREADS} busy threads; 3 frames, all \
         locals), {}s per measurement; median of {rounds} alternating rounds",
        CAPTURE_TIME.as_secs()
    ));
    table(&CAPTURE_MODES, &captures, "captures/s", "capture");
    report(&format!(
        "\nCPU per JDWP span (opened, filled and closed as the Connection does, no I/O), \
         {SPANS} spans per measurement; median of {rounds}"
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
        "\nspans received by the collector ({}): {}",
        if std::env::var("JVMSCOPE_BENCH_COLLECTOR").as_deref() == Ok("decode") {
            "decoding every request"
        } else {
            "counting spans only"
        },
        received.load(Ordering::Relaxed)
    ));
}
