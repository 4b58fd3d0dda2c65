//! `jvmscope --http`: the real binary serving MCP over streamable HTTP,
//! spoken to by raw HTTP requests (the refusals) and by the official MCP
//! Python SDK (tests/http/client.py) against real JVMs.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::java::{Captured, Jvm, JvmOpts, line_of};
use crate::support::otlp::{Attr, OtlpReceiver};
use crate::support::otlp_http::TestPki;
use crate::support::poll_until_msg;

const TOKEN: &str = "t0ken-for-the-http-tests";
const START: Duration = Duration::from_secs(20);
const ACCEPT: &str = "application/json, text/event-stream";

/// Variables of the developer's shell that would change what a test sees.
const CLEARED: &[&str] = &[
    "JVMSCOPE_AUTH_TOKEN",
    "JVMSCOPE_AUTH_TOKEN_FILE",
    "JDWP_READONLY",
    "RUST_LOG",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "JVMSCOPE_LOG_FILE",
];

/// The binary serving `--http 127.0.0.1:0`, its URL read from stderr.
struct HttpServer {
    child: Child,
    stderr: Arc<Captured>,
    url: String,
}

impl HttpServer {
    fn start(env: &[(&str, &str)], args: &[&str]) -> HttpServer {
        let (mut child, stderr) = spawn(env, args);
        let url = poll_until_msg(START, "the server's URL on stderr", || {
            if let Ok(Some(status)) = child.try_wait() {
                panic!(
                    "jvmscope --http exited ({status}):\n{}",
                    stderr.lines().join("\n")
                );
            }
            stderr.lines().iter().find_map(|line| {
                line.split_whitespace()
                    .find_map(|w| w.strip_prefix("url="))
                    .map(str::to_string)
            })
        });
        HttpServer { child, stderr, url }
    }

    /// `host:port`.
    fn addr(&self) -> String {
        let rest = self.url.split("://").nth(1).unwrap_or_default();
        rest.trim_end_matches("/mcp").to_string()
    }

    /// SIGTERM, then the exit (the last spans are exported on the way).
    fn stop(mut self) {
        let sent = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill -TERM");
        assert!(sent.success(), "kill -TERM {sent}");
        poll_until_msg(Duration::from_secs(20), "jvmscope to exit", || {
            self.child.try_wait().ok().flatten()
        });
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn spawn(env: &[(&str, &str)], args: &[&str]) -> (Child, Arc<Captured>) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_jvmscope"));
    for name in CLEARED {
        command.env_remove(name);
    }
    let mut child = command
        .args(args)
        .envs(env.iter().copied())
        .env("JVMSCOPE_OVERHEAD_PCT", "off")
        .env("JVMSCOPE_SESSION_OVERHEAD_PCT", "off")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn jvmscope");
    let stderr = Captured::spawn(child.stderr.take().expect("stderr"));
    (child, stderr)
}

fn served(env: &[(&str, &str)]) -> HttpServer {
    let mut all = vec![("JVMSCOPE_AUTH_TOKEN", TOKEN)];
    all.extend_from_slice(env);
    HttpServer::start(&all, &["--http", "127.0.0.1:0"])
}

// ---- raw HTTP ---------------------------------------------------------------------------------

/// One HTTP/1.1 answer.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON: the JSON-RPC message of a JSON body, or the one
    /// answering `id` in an SSE body.
    fn json(&self) -> Value {
        if let Ok(v) = serde_json::from_str(&self.body) {
            return v;
        }
        self.body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .find(|v| v.get("id").is_some_and(|id| !id.is_null()))
            .unwrap_or_else(|| panic!("no JSON-RPC message in {self:?}"))
    }
}

/// A request written on `stream`, read to its end (`Connection: close`).
fn exchange<S: Read + Write>(
    mut stream: S,
    host: &str,
    method: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Answer {
    let mut head = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).expect("write the head");
    // A server that answers before the body is read may close early.
    let _ = stream.write_all(body);
    let _ = stream.flush();
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    parse_answer(&raw)
}

fn parse_answer(raw: &[u8]) -> Answer {
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no HTTP answer: {text:?}"));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {head:?}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_string()
    };
    Answer {
        status,
        headers,
        body,
    }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || rest.len() < n {
            out.push_str(&rest[..rest.len().min(n)]);
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

fn post(server: &HttpServer, headers: &[(&str, &str)], body: &[u8]) -> Answer {
    let stream = TcpStream::connect(server.addr()).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    exchange(stream, &server.addr(), "POST", headers, body)
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

fn initialize_body() -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}})
    .to_string()
    .into_bytes()
}

/// A raw MCP session: initialized, its `Mcp-Session-Id` kept.
struct Raw<'a> {
    server: &'a HttpServer,
    session: String,
}

impl<'a> Raw<'a> {
    fn open(server: &'a HttpServer) -> Raw<'a> {
        let auth = bearer(TOKEN);
        let headers = [
            ("Authorization", auth.as_str()),
            ("Content-Type", "application/json"),
            ("Accept", ACCEPT),
        ];
        let init = post(server, &headers, &initialize_body());
        assert_eq!(init.status, 200, "{init:?}");
        let session = init
            .header("mcp-session-id")
            .unwrap_or_else(|| panic!("no session id: {init:?}"))
            .to_string();
        let raw = Raw { server, session };
        let done = raw.send(
            TOKEN,
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        );
        assert_eq!(done.status, 202, "{done:?}");
        raw
    }

    fn send(&self, token: &str, message: &Value) -> Answer {
        let auth = bearer(token);
        let headers = [
            ("Authorization", auth.as_str()),
            ("Content-Type", "application/json"),
            ("Accept", ACCEPT),
            ("Mcp-Session-Id", self.session.as_str()),
            ("MCP-Protocol-Version", "2025-06-18"),
        ];
        post(self.server, &headers, message.to_string().as_bytes())
    }

    fn call(&self, token: &str, tool: &str, args: Value) -> Answer {
        self.send(
            token,
            &json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                    "params": {"name": tool, "arguments": args}}),
        )
    }
}

fn tool_text(answer: &Answer) -> (bool, String) {
    let v = answer.json();
    let result = &v["result"];
    let text = result["content"]
        .as_array()
        .map(|c| {
            c.iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_else(|| panic!("not a tool result: {v}"));
    (result["isError"] == json!(true), text)
}

// ---- the Python SDK ---------------------------------------------------------------------------

/// Runs one scenario of tests/http/client.py; its JSON report.
fn python(server: &HttpServer, scenario: &str, env: &[(&str, String)]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/http/client.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(scenario)
        .env("MCP_URL", &server.url)
        .env("MCP_TOKEN", TOKEN)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap_or_else(|e| {
            panic!("python3 is needed for the HTTP tests ({e}); run `cargo xtask setup`")
        });
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() != Some(3),
        "the MCP Python SDK is missing: run `cargo xtask setup` (pip install mcp)\n{stderr}"
    );
    assert!(
        out.status.success(),
        "client.py {scenario} failed ({}):\n{stderr}\n{stdout}\n--- server ---\n{}",
        out.status,
        server.stderr.lines().join("\n")
    );
    serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("client.py {scenario} printed no JSON ({e}): {stdout}"))
}

fn ok(report: &Value, key: &str) -> String {
    let r = &report[key];
    assert_eq!(r["error"], json!(false), "{key}: {r}");
    r["text"].as_str().unwrap_or_default().to_string()
}

fn refused(report: &Value, key: &str) -> String {
    let r = &report[key];
    assert_eq!(r["error"], json!(true), "{key} must be refused: {r}");
    r["text"].as_str().unwrap_or_default().to_string()
}

fn ticker() -> Jvm {
    Jvm::start("Ticker", JvmOpts::default())
}

// ---- the tests --------------------------------------------------------------------------------

#[test]
fn http_without_the_right_token_is_401_and_nothing_runs() {
    let jvm = ticker();
    let server = served(&[]);
    let body = initialize_body();
    for auth in [None, Some("Bearer wrong-token"), Some("Basic dDBrZW4=")] {
        let mut headers = vec![("Content-Type", "application/json"), ("Accept", ACCEPT)];
        if let Some(auth) = auth {
            headers.push(("Authorization", auth));
        }
        let a = post(&server, &headers, &body);
        assert_eq!(a.status, 401, "{auth:?}: {a:?}");
        assert!(a.header("www-authenticate").is_some(), "{a:?}");
        assert!(a.header("mcp-session-id").is_none(), "no session: {a:?}");
    }
    // A call inside a real MCP session, with a wrong token: refused
    // before rmcp, so the JVM is not attached ...
    let raw = Raw::open(&server);
    let port = jvm.port().to_string();
    let wrong = raw.call("wrong-token", "debug_attach", json!({"port": jvm.port()}));
    assert_eq!(wrong.status, 401, "{wrong:?}");
    let (err, text) = tool_text(&raw.call(TOKEN, "debug_list_sessions", json!({})));
    assert!(!err && !text.contains(&port), "nothing attached: {text}");
    // ... and the same call with the token attaches it (it was free).
    let (err, text) = tool_text(&raw.call(TOKEN, "debug_attach", json!({"port": jvm.port()})));
    assert!(!err, "{text}");
    assert!(
        !server.stderr.lines().join("\n").contains(TOKEN),
        "the token is never logged"
    );
}

#[test]
fn http_python_sdk_attaches_arms_a_trace_and_reads_it() {
    let jvm = ticker();
    let server = served(&[]);
    let line = line_of("Ticker.java", "tick");
    let report = python(
        &server,
        "trace",
        &[
            ("JVM_PORT", jvm.port().to_string()),
            ("TICK_LINE", line.to_string()),
        ],
    );
    ok(&report, "attach");
    ok(&report, "stop");
    let traces = ok(&report, "traces");
    assert!(
        traces.contains(&format!("Ticker.main:{line}")) && traces.contains("limit="),
        "a snapshot of a hit at Ticker:{line}: {traces}"
    );
}

#[test]
fn http_clients_neither_list_nor_touch_each_others_sessions() {
    let (one, two) = (ticker(), ticker());
    let server = served(&[]);
    let report = python(
        &server,
        "isolation",
        &[
            ("JVM_PORT", one.port().to_string()),
            ("JVM_PORT2", two.port().to_string()),
        ],
    );
    let (sa, sb) = (
        report["sa"].as_str().unwrap_or_default(),
        report["sb"].as_str().unwrap_or_default(),
    );
    assert_ne!(sa, sb);
    let before = ok(&report, "b_list_before");
    assert!(
        !before.contains(sa) && !before.contains(&one.port().to_string()),
        "B lists none of A's: {before}"
    );
    let named = refused(&report, "b_names_a");
    assert!(
        named.contains("UNKNOWN_SESSION") || named.contains(sa),
        "{named}"
    );
    let default = refused(&report, "b_default");
    assert!(!default.contains(sa), "B has no current session: {default}");
    refused(&report, "a_names_b");
    let a_list = ok(&report, "a_list");
    assert!(a_list.contains(sa) && !a_list.contains(sb), "{a_list}");
    let b_list = ok(&report, "b_list");
    assert!(b_list.contains(sb) && !b_list.contains(sa), "{b_list}");
    // A did not disconnect B's session: B still reads from its JVM.
    assert!(!b_list.contains("DEAD"), "{b_list}");
}

#[test]
fn http_bad_bodies_get_the_http_and_json_rpc_errors() {
    let server = served(&[]);
    let auth = bearer(TOKEN);
    let headers = [
        ("Authorization", auth.as_str()),
        ("Content-Type", "application/json"),
        ("Accept", ACCEPT),
    ];
    // Over 4 MiB: 413, whether the length is declared or not.
    let mut big = br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":""#.to_vec();
    big.resize(4 * 1024 * 1024 + 100, b'a');
    big.extend_from_slice(br#""}}"#);
    let a = post(&server, &headers, &big);
    assert_eq!(a.status, 413, "{a:?}");
    assert_eq!(a.json()["error"]["code"], json!(-32600), "{a:?}");
    // Not JSON: 400 with the JSON-RPC parse error.
    let a = post(&server, &headers, b"{\"jsonrpc\": \"2.0\", \"id\": 4, oops");
    assert_eq!(a.status, 400, "{a:?}");
    let v = a.json();
    assert_eq!(v["error"]["code"], json!(-32700), "{v}");
    assert_eq!(v["id"], Value::Null, "{v}");
    // JSON rmcp cannot read (a lone surrogate): the id a lenient read finds.
    let a = post(
        &server,
        &headers,
        br#"{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":"\ud800"}}"#,
    );
    assert_eq!(a.status, 400, "{a:?}");
    let v = a.json();
    assert_eq!(v["error"]["code"], json!(-32700), "{v}");
    assert_eq!(v["id"], json!(5), "the id a lenient read finds: {v}");
    // JSON that is no JSON-RPC message: 400, invalid request.
    let a = post(&server, &headers, b"[1, 2]");
    assert_eq!(a.status, 400, "{a:?}");
    assert_eq!(a.json()["error"]["code"], json!(-32600), "{a:?}");
    // An unknown session: 404 with a JSON-RPC error, and no tool ran.
    let mut with_session = headers.to_vec();
    with_session.push(("Mcp-Session-Id", "no-such-session"));
    let call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                      "params": {"name": "debug_list_sessions", "arguments": {}}});
    let a = post(&server, &with_session, call.to_string().as_bytes());
    assert_eq!(a.status, 404, "{a:?}");
    assert_eq!(a.json()["error"]["code"], json!(-32600), "{a:?}");
}

#[test]
fn http_refuses_to_start_without_a_token() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let empty = dir.path().join("empty");
    std::fs::write(&empty, "\n").expect("write");
    let missing = dir.path().join("missing");
    let empty = empty.to_string_lossy().into_owned();
    let missing = missing.to_string_lossy().into_owned();
    for (env, says) in [
        (vec![], "JVMSCOPE_AUTH_TOKEN"),
        (vec![("JVMSCOPE_AUTH_TOKEN", "")], "empty"),
        (vec![("JVMSCOPE_AUTH_TOKEN_FILE", empty.as_str())], "empty"),
        (
            vec![("JVMSCOPE_AUTH_TOKEN_FILE", missing.as_str())],
            "missing",
        ),
    ] {
        let (mut child, stderr) = spawn(&env, &["--http", "127.0.0.1:0"]);
        let status = poll_until_msg(START, "jvmscope to refuse", || {
            child.try_wait().ok().flatten()
        });
        let text = stderr_when_closed(&stderr);
        assert!(!status.success(), "{env:?}: {status} {text}");
        assert!(text.contains(says), "{env:?} says {says:?}: {text}");
        assert!(!text.contains("serving MCP"), "{text}");
    }
}

fn stderr_when_closed(stderr: &Captured) -> String {
    poll_until_msg(START, "stderr to close", || {
        stderr.is_closed().then_some(())
    });
    stderr.lines().join("\n")
}

#[test]
fn https_with_a_self_signed_certificate_answers_with_the_token() {
    let pki = TestPki::generate();
    let dir = tempfile::tempdir().expect("a temp dir");
    let (cert, key, token) = (
        dir.path().join("cert.pem"),
        dir.path().join("key.pem"),
        dir.path().join("token"),
    );
    std::fs::write(&cert, &pki.server_pem).expect("cert");
    std::fs::write(&key, &pki.server_key_pem).expect("key");
    std::fs::write(&token, format!("{TOKEN}\n")).expect("token");
    let server = HttpServer::start(
        &[("JVMSCOPE_AUTH_TOKEN_FILE", &token.to_string_lossy())],
        &[
            "--http",
            "127.0.0.1:0",
            "--tls-cert",
            &cert.to_string_lossy(),
            "--tls-key",
            &key.to_string_lossy(),
        ],
    );
    assert!(server.url.starts_with("https://"), "{}", server.url);
    let port = server
        .addr()
        .rsplit(':')
        .next()
        .unwrap_or_default()
        .to_string();
    let host = format!("localhost:{port}");
    let auth = bearer(TOKEN);
    let with = [
        ("Authorization", auth.as_str()),
        ("Content-Type", "application/json"),
        ("Accept", ACCEPT),
    ];
    let a = exchange(tls(&pki, &server), &host, "POST", &with, &initialize_body());
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.json()["result"]["serverInfo"]["name"], json!("jvmscope"));
    let a = exchange(
        tls(&pki, &server),
        &host,
        "POST",
        &with[1..],
        &initialize_body(),
    );
    assert_eq!(a.status, 401, "{a:?}");
}

/// A TLS connection to the server, trusting the test CA only.
fn tls(
    pki: &TestPki,
    server: &HttpServer,
) -> rustls::StreamOwned<rustls::ClientConnection, TcpStream> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(pki.ca_pem.as_bytes()) {
        roots.add(cert.expect("the CA")).expect("a root");
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from("localhost").expect("a name");
    let conn = rustls::ClientConnection::new(Arc::new(config), name).expect("a TLS client");
    let tcp = TcpStream::connect(server.addr()).expect("connect");
    tcp.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    rustls::StreamOwned::new(conn, tcp)
}

#[test]
fn http_is_read_only_unless_jdwp_readonly_is_0_and_mutations_are_audited() {
    // Two JVMs: an ephemeral agent listens on another port once its
    // first debugger has gone.
    let (shared, jvm) = (ticker(), ticker());
    let port = [("JVM_PORT", jvm.port().to_string())];
    // The default over HTTP: read-only.
    let server = served(&[]);
    let report = python(
        &server,
        "mutate",
        &[("JVM_PORT", shared.port().to_string())],
    );
    ok(&report, "attach");
    let set = refused(&report, "set");
    assert!(set.starts_with("[READ_ONLY]"), "{set}");
    drop(server);
    // JDWP_READONLY=0, set on purpose: the write is done, and audited as
    // an event of the call's span.
    let receiver = OtlpReceiver::start();
    let endpoint = receiver.endpoint();
    let server = served(&[
        ("JDWP_READONLY", "0"),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
    ]);
    let report = python(&server, "mutate", &port);
    ok(&report, "attach");
    ok(&report, "set");
    server.stop();
    let audited = |name: &str| {
        let name = name.to_string();
        move |spans: &[crate::support::otlp::CollectedSpan]| {
            spans.iter().any(|s| {
                s.name == format!("mcp.tool {name}")
                    && s.events.iter().any(|e| e.name == "jvmscope.audit")
            })
        }
    };
    let spans = receiver.wait_for(Duration::from_secs(20), "the audited set", |spans| {
        audited("debug_set_value")(spans) && audited("debug_attach")(spans)
    });
    let set = spans
        .iter()
        .find(|s| s.name == "mcp.tool debug_set_value")
        .expect("the set's span");
    let event = set
        .events
        .iter()
        .find(|e| e.name == "jvmscope.audit")
        .expect("the audit event");
    let attr = |k: &str| match event.attributes.get(k) {
        Some(Attr::Str(s)) => s.clone(),
        other => panic!("{k}: {other:?} in {event:?}"),
    };
    assert_eq!(attr("mcp.tool.name"), "debug_set_value");
    assert_eq!(attr("jvmscope.session"), "s1", "{event:?}");
    assert_eq!(attr("jvmscope.jvm"), format!("127.0.0.1:{}", jvm.port()));
    assert_eq!(attr("jvmscope.audit.outcome"), "done");
    assert!(event.time_unix_nano > 0);
    assert!(
        matches!(event.attributes.get("jvmscope.audit.unix_ms"), Some(Attr::Int(ms)) if *ms > 0),
        "{event:?}"
    );
    // A read is not audited; the token is nowhere in what was exported.
    let reads: Vec<_> = spans
        .iter()
        .filter(|s| s.name == "mcp.tool debug_list_sessions")
        .collect();
    assert!(!reads.is_empty(), "the read's span arrived");
    assert!(reads.iter().all(|s| s.events.is_empty()), "{reads:?}");
    assert!(
        !format!("{spans:?}").contains(TOKEN),
        "the token is not exported"
    );
}
