//! OTLP collectors for the telemetry tests: an in-process gRPC TraceService (the generated `opentelemetry-proto` server on 127.0.0.1:0, optionally over TLS, accepting gzip, optionally refusing the first requests) that keeps every span it receives (`otlp_http` has the HTTP one), and a harness running the real `rotel` collector with the Python span sink in `tests/telemetry/`. Both yield [`CollectedSpan`]s.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{KeyValue, any_value};
use serde_json::Value;

use super::java::lock;
use super::{POLL_INTERVAL, free_port};

/// OTLP `SPAN_KIND_SERVER`.
pub const KIND_SERVER: i32 = 2;
/// OTLP `SPAN_KIND_CLIENT`.
pub const KIND_CLIENT: i32 = 3;
/// OTLP `STATUS_CODE_UNSET`.
pub const STATUS_UNSET: i32 = 0;
/// OTLP `STATUS_CODE_ERROR`.
pub const STATUS_ERROR: i32 = 2;

/// An attribute value with its OTLP type kept.
#[derive(Debug, Clone, PartialEq)]
pub enum Attr {
    Str(String),
    Int(i64),
    Bool(bool),
    Double(f64),
    Other(String),
}

/// One span as a collector received it.
#[derive(Debug, Clone, PartialEq)]
pub struct CollectedSpan {
    /// Lower-case hex.
    pub trace_id: String,
    /// Lower-case hex.
    pub span_id: String,
    /// Lower-case hex; empty for a root span.
    pub parent_span_id: String,
    pub name: String,
    pub kind: i32,
    pub status_code: i32,
    pub attributes: BTreeMap<String, Attr>,
    pub resource: BTreeMap<String, Attr>,
    /// The instrumentation scope's name.
    pub scope: String,
    /// When the span started (ns since the epoch).
    pub start_unix_nano: u64,
    /// The span's events (empty where the collector does not say).
    pub events: Vec<CollectedEvent>,
}

/// One event of a span.
#[derive(Debug, Clone, PartialEq)]
pub struct CollectedEvent {
    pub name: String,
    /// When it happened (ns since the epoch).
    pub time_unix_nano: u64,
    pub attributes: BTreeMap<String, Attr>,
}

impl CollectedSpan {
    /// Whether the span has no parent.
    pub fn is_root(&self) -> bool {
        self.parent_span_id.is_empty() || self.parent_span_id.chars().all(|c| c == '0')
    }

    /// A string attribute, if present and a string.
    pub fn str_attr(&self, key: &str) -> Option<&str> {
        match self.attributes.get(key) {
            Some(Attr::Str(s)) => Some(s),
            _ => None,
        }
    }

    /// An integer attribute, if present and an integer.
    pub fn int_attr(&self, key: &str) -> Option<i64> {
        match self.attributes.get(key) {
            Some(Attr::Int(i)) => Some(*i),
            _ => None,
        }
    }

    /// The resource's `service.name`.
    pub fn service_name(&self) -> Option<&str> {
        match self.resource.get("service.name") {
            Some(Attr::Str(s)) => Some(s),
            _ => None,
        }
    }
}

/// One line per span (name, ids, status), for assertion messages.
pub fn describe(spans: &[CollectedSpan]) -> String {
    let mut out = String::new();
    for s in spans {
        let _ = writeln!(
            out,
            "{} [{}] trace={} id={} parent={} kind={} status={}",
            s.name,
            s.scope,
            &s.trace_id[..s.trace_id.len().min(8)],
            s.span_id,
            if s.parent_span_id.is_empty() {
                "-"
            } else {
                &s.parent_span_id
            },
            s.kind,
            s.status_code
        );
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn proto_attrs(kvs: &[KeyValue]) -> BTreeMap<String, Attr> {
    kvs.iter()
        .map(|kv| {
            let value = match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                Some(any_value::Value::StringValue(s)) => Attr::Str(s.clone()),
                Some(any_value::Value::IntValue(i)) => Attr::Int(*i),
                Some(any_value::Value::BoolValue(b)) => Attr::Bool(*b),
                Some(any_value::Value::DoubleValue(d)) => Attr::Double(*d),
                other => Attr::Other(format!("{other:?}")),
            };
            (kv.key.clone(), value)
        })
        .collect()
}

pub fn spans_of(request: ExportTraceServiceRequest) -> Vec<CollectedSpan> {
    let mut out = Vec::new();
    for rs in request.resource_spans {
        let resource = rs
            .resource
            .as_ref()
            .map(|r| proto_attrs(&r.attributes))
            .unwrap_or_default();
        for ss in rs.scope_spans {
            let scope = ss
                .scope
                .as_ref()
                .map(|s| s.name.clone())
                .unwrap_or_default();
            for span in ss.spans {
                out.push(CollectedSpan {
                    trace_id: hex(&span.trace_id),
                    span_id: hex(&span.span_id),
                    parent_span_id: hex(&span.parent_span_id),
                    name: span.name.clone(),
                    kind: span.kind,
                    status_code: span.status.as_ref().map_or(STATUS_UNSET, |s| s.code),
                    attributes: proto_attrs(&span.attributes),
                    resource: resource.clone(),
                    scope: scope.clone(),
                    start_unix_nano: span.start_time_unix_nano,
                    events: span
                        .events
                        .iter()
                        .map(|e| CollectedEvent {
                            name: e.name.clone(),
                            time_unix_nano: e.time_unix_nano,
                            attributes: proto_attrs(&e.attributes),
                        })
                        .collect(),
                });
            }
        }
    }
    out
}

/// Calls `fetch` until `done` accepts what it returns, at most `timeout`; panics with `what` and
/// the spans seen so far on timeout.
#[track_caller]
pub fn wait_for_spans(
    timeout: Duration,
    what: &str,
    fetch: impl Fn() -> Vec<CollectedSpan>,
    done: impl Fn(&[CollectedSpan]) -> bool,
) -> Vec<CollectedSpan> {
    let deadline = Instant::now() + timeout;
    loop {
        let spans = fetch();
        if done(&spans) {
            return spans;
        }
        if Instant::now() >= deadline {
            panic!(
                "timed out after {timeout:?} waiting for {what}; {} spans received:\n{}",
                spans.len(),
                describe(&spans)
            );
        }
        std::thread::sleep(POLL_INTERVAL);
    }
}

#[derive(Debug, Default)]
struct Received {
    spans: Mutex<Vec<CollectedSpan>>,
    /// The spans of the requests refused with UNAVAILABLE.
    refused: Mutex<Vec<Vec<CollectedSpan>>>,
    /// Each request's `grpc-encoding` (compression), in order.
    encodings: Mutex<Vec<Option<String>>>,
    requests: AtomicUsize,
}

struct Collector {
    received: Arc<Received>,
    refuse_first: usize,
}

#[tonic::async_trait]
impl TraceService for Collector {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let encoding = request
            .metadata()
            .get("grpc-encoding")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        lock(&self.received.encodings).push(encoding);
        let spans = spans_of(request.into_inner());
        let n = self.received.requests.fetch_add(1, Ordering::SeqCst);
        if n < self.refuse_first {
            lock(&self.received.refused).push(spans);
            return Err(tonic::Status::unavailable("the collector is restarting"));
        }
        lock(&self.received.spans).extend(spans);
        Ok(tonic::Response::new(ExportTraceServiceResponse {
            partial_success: None,
        }))
    }
}

/// How an [`OtlpReceiver`] behaves besides receiving.
#[derive(Debug, Default)]
pub struct GrpcReceiverOpts<'a> {
    /// Serve gRPC over TLS with this PKI's server certificate.
    pub tls: Option<&'a super::otlp_http::TestPki>,
    /// Answer the first this many requests with UNAVAILABLE.
    pub refuse_first: usize,
}

/// A test receiver's server: its own thread and single-threaded runtime,
/// listening on an ephemeral loopback port. Dropping it stops the server
/// and joins the thread.
#[derive(Debug)]
pub struct ReceiverThread {
    addr: SocketAddr,
    tls: bool,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl ReceiverThread {
    /// Binds 127.0.0.1:0 on a new thread and runs `serve(listener, stop)`
    /// there; returns once the port is bound. `what` names the receiver in
    /// panics.
    pub fn spawn<F, Fut>(what: &'static str, tls: bool, serve: F) -> ReceiverThread
    where
        F: FnOnce(tokio::net::TcpListener, tokio::sync::oneshot::Receiver<()>) -> Fut
            + Send
            + 'static,
        Fut: std::future::Future<Output = ()>,
    {
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap_or_else(|e| panic!("{what} runtime: {e}"));
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .unwrap_or_else(|e| panic!("{what} cannot bind: {e}"));
                let addr = listener
                    .local_addr()
                    .unwrap_or_else(|e| panic!("{what} address: {e}"));
                let _ = addr_tx.send(addr);
                serve(listener, stop_rx).await;
            });
        });
        let addr = addr_rx
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|e| panic!("{what} did not start: {e}"));
        ReceiverThread {
            addr,
            tls,
            stop: Some(stop_tx),
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:<port>`; over TLS `https://localhost:<port>` (the
    /// name the certificate is for).
    pub fn endpoint(&self) -> String {
        if self.tls {
            format!("https://localhost:{}", self.addr.port())
        } else {
            format!("http://{}", self.addr)
        }
    }
}

impl Drop for ReceiverThread {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// An OTLP/gRPC trace receiver on 127.0.0.1 (its own thread and runtime). Dropping it stops it.
#[derive(Debug)]
pub struct OtlpReceiver {
    server: ReceiverThread,
    received: Arc<Received>,
}

impl OtlpReceiver {
    /// Starts the receiver on an ephemeral port; returns once it accepts connections.
    pub fn start() -> OtlpReceiver {
        Self::start_with(GrpcReceiverOpts::default())
    }

    /// [`OtlpReceiver::start`], over TLS or refusing the first requests as `opts` says. It
    /// accepts gzip-compressed requests.
    pub fn start_with(opts: GrpcReceiverOpts<'_>) -> OtlpReceiver {
        let received = Arc::new(Received::default());
        let collector = Collector {
            received: received.clone(),
            refuse_first: opts.refuse_first,
        };
        let tls = opts.tls.map(|pki| {
            tonic::transport::ServerTlsConfig::new().identity(tonic::transport::Identity::from_pem(
                &pki.server_pem,
                &pki.server_key_pem,
            ))
        });
        let server = ReceiverThread::spawn(
            "OTLP receiver",
            tls.is_some(),
            |listener, stop| async move {
                let incoming = tonic::transport::server::TcpIncoming::from(listener);
                let mut server = tonic::transport::Server::builder();
                if let Some(tls) = tls {
                    server = server
                        .tls_config(tls)
                        .unwrap_or_else(|e| panic!("OTLP receiver TLS: {e}"));
                }
                let service = TraceServiceServer::new(collector)
                    .accept_compressed(tonic::codec::CompressionEncoding::Gzip);
                let _ = server
                    .add_service(service)
                    .serve_with_incoming_shutdown(incoming, async {
                        let _ = stop.await;
                    })
                    .await;
            },
        );
        OtlpReceiver { server, received }
    }

    /// `http://127.0.0.1:<port>`, the value for `OTEL_EXPORTER_OTLP_ENDPOINT`; over TLS
    /// `https://localhost:<port>` (the name the certificate is for).
    pub fn endpoint(&self) -> String {
        self.server.endpoint()
    }

    /// The spans of each request refused with UNAVAILABLE, in order.
    pub fn refused(&self) -> Vec<Vec<CollectedSpan>> {
        lock(&self.received.refused).clone()
    }

    /// Each request's `grpc-encoding`, in order.
    pub fn encodings(&self) -> Vec<Option<String>> {
        lock(&self.received.encodings).clone()
    }

    /// Every span received so far.
    pub fn spans(&self) -> Vec<CollectedSpan> {
        lock(&self.received.spans).clone()
    }

    /// Export requests received so far.
    pub fn requests(&self) -> usize {
        self.received.requests.load(Ordering::SeqCst)
    }

    /// Waits until `done` accepts the spans received so far.
    #[track_caller]
    pub fn wait_for(
        &self,
        timeout: Duration,
        what: &str,
        done: impl Fn(&[CollectedSpan]) -> bool,
    ) -> Vec<CollectedSpan> {
        wait_for_spans(timeout, what, || self.spans(), done)
    }
}

// ---- rotel ------------------------------------------------------------------------------------

/// The Python span sink rotel runs.
pub fn span_sink_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/telemetry/span_sink.py")
}

/// The rotel collector binary: `$ROTEL`, else `rotel` or `rotel-agent` on `PATH`.
pub fn rotel_binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("ROTEL").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .flat_map(|dir| [dir.join("rotel"), dir.join("rotel-agent")])
            .find(|candidate| candidate.is_file())
    });
    // `pip install rotel` puts the agent inside the Python package, not on PATH.
    on_path.or_else(|| {
        let out = Command::new("python3")
            .args([
                "-c",
                "import os, rotel; print(os.path.join(os.path.dirname(rotel.__file__), 'rotel-agent'))",
            ])
            .output()
            .ok()?;
        let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        (out.status.success() && path.is_file()).then_some(path)
    })
}

/// A running rotel collector on two ephemeral loopback ports (OTLP gRPC and HTTP), with the span
/// sink writing every received span to a file. Dropping it kills the process.
#[derive(Debug)]
pub struct Rotel {
    child: Child,
    grpc: u16,
    http: u16,
    dir: tempfile::TempDir,
}

impl Rotel {
    /// Starts `binary` and waits (at most 20 s) until both ports accept connections.
    pub fn start(binary: &Path) -> Rotel {
        let dir = tempfile::Builder::new()
            .prefix("jvmscope-rotel-")
            .tempdir()
            .unwrap_or_else(|e| panic!("rotel temp dir: {e}"));
        let grpc = free_port();
        let http = free_port();
        let sink = dir.path().join("spans.jsonl");
        let mut command = Command::new(binary);
        command
            .arg("start")
            .arg("--otlp-grpc-endpoint")
            .arg(format!("127.0.0.1:{grpc}"))
            .arg("--otlp-http-endpoint")
            .arg(format!("127.0.0.1:{http}"))
            .args(["--exporter", "blackhole"])
            .arg("--otlp-with-trace-processor")
            .arg(span_sink_script())
            .arg("--pid-file")
            .arg(dir.path().join("rotel.pid"))
            .arg("--log-file")
            .arg(dir.path().join("rotel.log"))
            .env("JVMSCOPE_SPAN_SINK", &sink)
            .stdin(Stdio::null())
            .stdout(Stdio::from(
                std::fs::File::create(dir.path().join("stdout.log"))
                    .unwrap_or_else(|e| panic!("rotel stdout file: {e}")),
            ))
            .stderr(Stdio::from(
                std::fs::File::create(dir.path().join("stderr.log"))
                    .unwrap_or_else(|e| panic!("rotel stderr file: {e}")),
            ));
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start rotel {}: {e}", binary.display()));
        let mut rotel = Rotel {
            child,
            grpc,
            http,
            dir,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let up = |port: u16| TcpStream::connect(("127.0.0.1", port)).is_ok();
            if up(grpc) && up(http) {
                return rotel;
            }
            if let Ok(Some(status)) = rotel.child.try_wait() {
                panic!("rotel exited early ({status}):\n{}", rotel.output());
            }
            if Instant::now() >= deadline {
                panic!("rotel did not listen within 20 s:\n{}", rotel.output());
            }
            std::thread::sleep(POLL_INTERVAL);
        }
    }

    /// `http://127.0.0.1:<grpc port>`.
    pub fn grpc_endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.grpc)
    }

    /// `http://127.0.0.1:<http port>` (the exporter appends `/v1/traces`).
    pub fn http_endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.http)
    }

    /// rotel's stdout, stderr and log file, for panic messages.
    pub fn output(&self) -> String {
        ["stdout.log", "stderr.log", "rotel.log"]
            .iter()
            .map(|name| {
                let text = std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default();
                format!("--- rotel {name} ---\n{}", super::tail(&text, 4000))
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Every span the sink wrote so far.
    pub fn spans(&self) -> Vec<CollectedSpan> {
        let text = std::fs::read_to_string(self.dir.path().join("spans.jsonl")).unwrap_or_default();
        // The sink may be writing a line as we read: only whole lines count.
        let whole = text.rfind('\n').map_or("", |end| &text[..=end]);
        whole
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| {
                let v: Value = serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("span sink wrote bad JSON ({e}): {line}"));
                CollectedSpan {
                    trace_id: v["trace_id"].as_str().unwrap_or_default().to_owned(),
                    span_id: v["span_id"].as_str().unwrap_or_default().to_owned(),
                    parent_span_id: v["parent_span_id"].as_str().unwrap_or_default().to_owned(),
                    name: v["name"].as_str().unwrap_or_default().to_owned(),
                    kind: v["kind"].as_i64().unwrap_or(-1) as i32,
                    status_code: v["status_code"].as_i64().unwrap_or(-1) as i32,
                    attributes: json_attrs(&v["attributes"]),
                    resource: json_attrs(&v["resource"]),
                    scope: v["scope"].as_str().unwrap_or_default().to_owned(),
                    start_unix_nano: v["start_time_unix_nano"].as_u64().unwrap_or_default(),
                    events: Vec::new(),
                }
            })
            .collect()
    }

    /// Waits until `done` accepts the spans the sink wrote so far.
    #[track_caller]
    pub fn wait_for(
        &self,
        timeout: Duration,
        what: &str,
        done: impl Fn(&[CollectedSpan]) -> bool,
    ) -> Vec<CollectedSpan> {
        let deadline = Instant::now() + timeout;
        loop {
            let spans = self.spans();
            if done(&spans) {
                return spans;
            }
            if Instant::now() >= deadline {
                panic!(
                    "timed out after {timeout:?} waiting for {what}; {} spans in the sink:\n{}\n{}",
                    spans.len(),
                    describe(&spans),
                    self.output()
                );
            }
            std::thread::sleep(POLL_INTERVAL);
        }
    }
}

impl Drop for Rotel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn json_attrs(list: &Value) -> BTreeMap<String, Attr> {
    list.as_array()
        .map(|items| {
            items
                .iter()
                .map(|item| {
                    let key = item["key"].as_str().unwrap_or_default().to_owned();
                    let value = &item["value"];
                    let attr = match item["type"].as_str() {
                        Some("string") => Attr::Str(value.as_str().unwrap_or_default().to_owned()),
                        Some("int") => Attr::Int(value.as_i64().unwrap_or_default()),
                        Some("bool") => Attr::Bool(value.as_bool().unwrap_or_default()),
                        Some("double") => Attr::Double(value.as_f64().unwrap_or_default()),
                        _ => Attr::Other(value.to_string()),
                    };
                    (key, attr)
                })
                .collect()
        })
        .unwrap_or_default()
}
