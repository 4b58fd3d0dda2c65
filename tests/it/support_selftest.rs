//! Self-tests of the test support: fixture compilation, `Jvm` launching/capture, and the MCP client (against the FakeMcp fixture).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use crate::fake_jdwp::{HANDSHAKE, HEADER_LEN, cmd, command_packet};
use crate::support::java::{self, Jvm, JvmOpts};
use crate::support::mcp::Server;
use crate::support::{free_port, poll_until_msg};

const TIMEOUT: Duration = Duration::from_secs(20);

#[test]
fn fixtures_are_java17_classes_with_local_variable_tables() {
    let dir = java::fixtures();
    for class in [
        "Ticker",
        "Inventory",
        "Inventory$Order",
        "Contended",
        "FakeMcp",
    ] {
        let path = dir.join(format!("{class}.class"));
        let bytes = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("missing compiled fixture {}: {e}", path.display()));
        assert_eq!(
            &bytes[..4],
            &[0xCA, 0xFE, 0xBA, 0xBE],
            "{class} is not a class file"
        );
        assert_eq!(
            u16::from_be_bytes([bytes[6], bytes[7]]),
            61,
            "{class} is not --release 17"
        );
    }
    let inventory = std::fs::read(dir.join("Inventory.class")).expect("Inventory.class");
    let has = |needle: &[u8]| inventory.windows(needle.len()).any(|w| w == needle);
    assert!(
        has(b"LocalVariableTable"),
        "fixtures must be compiled with -g"
    );
    assert!(has(b"LineNumberTable"));
    // Same directory on every call (compiled once per process).
    assert_eq!(java::fixtures(), dir);
}

#[test]
fn line_of_finds_unique_markers() {
    let line_text = |file: &str, marker: &str| {
        let source = std::fs::read_to_string(java::source_path(file)).expect("fixture source");
        let line = java::line_of(file, marker) as usize;
        source.lines().nth(line - 1).unwrap_or_default().to_owned()
    };
    assert!(line_text("Inventory.java", "process-body").contains("int after"));
    assert!(line_text("Inventory.java", "process-entry").contains("int qty"));
    assert!(line_text("Ticker.java", "ticker-started").contains("ticker started"));
    assert!(java::line_of("Contended.java", "increment") > 0);
}

#[test]
#[should_panic(expected = "no `// LINE: process`")]
fn line_of_rejects_marker_prefixes() {
    java::line_of("Inventory.java", "process");
}

#[test]
fn ticker_keeps_running_and_dies_on_kill() {
    let jvm = Jvm::start("Ticker", JvmOpts::default());
    assert!(jvm.port() > 0);
    jvm.wait_for_line("ticker started", TIMEOUT);
    let (first, _) = jvm.wait_for_line_since(0, |l| l.starts_with("tick "), TIMEOUT);
    let (later, _) = jvm.wait_for_line_since(first + 1, |l| l.starts_with("tick "), TIMEOUT);
    assert!(later > first);
    assert!(jvm.is_alive());
    jvm.kill();
    assert!(!jvm.is_alive());
}

#[test]
fn suspended_jvm_runs_main_only_after_resume() {
    let jvm = Jvm::start(
        "Ticker",
        JvmOpts {
            suspend: true,
            ..JvmOpts::default()
        },
    );
    let mut stream = TcpStream::connect(("127.0.0.1", jvm.port())).expect("connect to JDWP");
    stream
        .set_read_timeout(Some(TIMEOUT))
        .expect("read timeout");
    stream.write_all(HANDSHAKE).expect("handshake");
    let mut echo = [0u8; 14];
    stream.read_exact(&mut echo).expect("handshake echo");
    assert_eq!(&echo, HANDSHAKE);
    // The VM announces VMStart (a composite event) and stays suspended.
    let mut header = [0u8; HEADER_LEN];
    stream
        .read_exact(&mut header)
        .expect("VMStart event header");
    assert_eq!((header[9], header[10]), cmd::COMPOSITE_EVENT);
    let len = u32::from_be_bytes([header[0], header[1], header[2], header[3]]) as usize;
    let mut body = vec![0u8; len - HEADER_LEN];
    stream.read_exact(&mut body).expect("VMStart event body");
    assert!(
        !jvm.lines().iter().any(|l| l.contains("ticker started")),
        "main ran while suspended: {:?}",
        jvm.lines()
    );
    stream
        .write_all(&command_packet(1, cmd::RESUME, &[]))
        .expect("send Resume");
    stream.read_exact(&mut header).expect("Resume reply");
    assert_eq!(header[8], 0x80, "expected a reply");
    assert_eq!(
        u16::from_be_bytes([header[9], header[10]]),
        0,
        "Resume failed"
    );
    jvm.wait_for_line("ticker started", TIMEOUT);
    jvm.wait_for_line("tick 2", TIMEOUT);
}

#[test]
fn temurin25_runs_the_fixtures() {
    let home = java::temurin25_required();
    let jvm = Jvm::start(
        "Ticker",
        JvmOpts {
            java_home: Some(home),
            args: vec!["3".into()],
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("ticker done", TIMEOUT);
    let status = jvm.wait_exit(TIMEOUT).expect("Ticker 3 exits by itself");
    assert!(status.success(), "{status}");
}

#[test]
fn inventory_runs_named_workers_to_completion() {
    let jvm = Jvm::start(
        "Inventory",
        JvmOpts {
            args: vec!["30".into()],
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("inventory done", TIMEOUT);
    let lines = jvm.lines();
    for expected in [
        "inventory started",
        "worker-1 started",
        "worker-2 started",
        "worker-1 iteration 25",
    ] {
        assert!(
            lines.iter().any(|l| l == expected),
            "no {expected:?} in {lines:?}"
        );
    }
    assert!(
        lines.iter().any(|l| l == "worker-1 finished, rejected 3"),
        "{lines:?}"
    );
    assert!(jvm.wait_exit(TIMEOUT).is_some_and(|s| s.success()));
}

#[test]
fn contended_reports_throughput() {
    let jvm = Jvm::start(
        "Contended",
        JvmOpts {
            args: vec!["2".into(), "1".into()],
            ..JvmOpts::default()
        },
    );
    let line = jvm.wait_for_line_matching(|l| l.starts_with("ops/s "), TIMEOUT);
    let ops: u64 = line["ops/s ".len()..]
        .parse()
        .unwrap_or_else(|e| panic!("{line:?}: {e}"));
    assert!(ops > 0, "{line}");
    jvm.wait_for_line("contended done", TIMEOUT);
}

#[test]
fn free_port_is_bindable() {
    let port = free_port();
    std::net::TcpListener::bind(("127.0.0.1", port)).expect("free port can be bound again");
}

fn fake_mcp() -> Server {
    let mut command = Command::new(java::java(None));
    command.arg("-cp").arg(java::fixtures()).arg("FakeMcp");
    Server::spawn_command(command)
}

#[test]
fn mcp_client_handshake_tools_and_notifications() {
    let server = fake_mcp();
    let init = server.initialize();
    assert_eq!(init["serverInfo"]["name"], "fake-mcp");
    let note = server.wait_for_notification(|n| n["method"] == "notifications/message", TIMEOUT);
    assert_eq!(note["params"]["data"], "hello");
    poll_until_msg(TIMEOUT, "the non-JSON line", || {
        (server.stdout_garbage() == ["not json"]).then_some(())
    });
    let names: Vec<Value> = server.tools().iter().map(|t| t["name"].clone()).collect();
    assert_eq!(names, vec![json!("echo"), json!("fail")]);

    let echo = server.call("echo", json!({})).expect_ok();
    assert_eq!(echo.text, "echo\ndone");
    assert_eq!(echo.json(), json!({ "ok": true }));
    let fail = server.call("fail", json!({})).expect_tool_error();
    assert_eq!(fail.text, "it failed");
    let unknown = server
        .call_raw("nope", json!({}))
        .expect_err("protocol error");
    assert_eq!(unknown["code"], -32602);
    let missing = server
        .request("no/such", Value::Null)
        .expect_err("method not found");
    assert_eq!(missing["code"], -32601);

    // A server-to-client ping is answered by the client.
    let pong = server.request("ping-me", json!({})).expect("ping-me");
    assert_eq!(pong, json!({ "pong": true }));
    assert_eq!(server.server_requests().len(), 1);

    poll_until_msg(TIMEOUT, "stderr line", || {
        server
            .stderr_tail()
            .contains("fake-mcp: initialized")
            .then_some(())
    });
    server.close_stdin();
    let status = server.wait_exit(TIMEOUT).expect("exits on stdin EOF");
    assert!(status.success(), "{status}");
}

#[test]
fn mcp_client_routes_concurrent_calls() {
    let server = fake_mcp();
    server.initialize();
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..10 {
                    assert_eq!(
                        server.call("echo", json!({})).expect_ok().text,
                        "echo\ndone"
                    );
                }
            });
        }
    });
}

#[test]
fn mcp_client_sees_exit_status_and_stderr() {
    let server = fake_mcp();
    server.initialize();
    server.notify("exit", Value::Null);
    let status = server.wait_exit(TIMEOUT).expect("exit");
    assert_eq!(status.code(), Some(3));
    assert!(
        server.diagnostics().contains("fake-mcp: exiting"),
        "{}",
        server.diagnostics()
    );
}

#[test]
#[should_panic(expected = "no response to `tools/call`")]
fn mcp_client_times_out_loudly() {
    let server = fake_mcp();
    server.initialize();
    server.call_with_timeout("silent", json!({}), Duration::from_millis(300));
}

#[test]
#[should_panic(expected = "closed stdout")]
fn mcp_client_panics_when_server_dies_mid_request() {
    let server = fake_mcp();
    server.initialize();
    server.request("exit", Value::Null).ok();
}
