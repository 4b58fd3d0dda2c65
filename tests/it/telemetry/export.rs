//! What `opentelemetry-otlp` brings to the shipped binary's export: TLS to a collector whose
//! certificate is signed by a CA given in `OTEL_EXPORTER_OTLP_CERTIFICATE` (HTTP and gRPC),
//! gzip (`OTEL_EXPORTER_OTLP_COMPRESSION`), and retry with back-off, so a collector that
//! refuses while it restarts still gets every span.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::json;

use super::{ARRIVAL, Call, children_of, held_jvm, investigate, roots_of, server_with, stop};
use crate::support::otlp::{CollectedSpan, GrpcReceiverOpts, OtlpReceiver, describe};
use crate::support::otlp_http::{HttpReceiver, HttpReceiverOpts, TestPki};

/// attach → list threads → disconnect, against a JVM held at start: the
/// investigation's own calls, cut short.
fn short_session(port: u16) -> Vec<Call> {
    super::investigation(port)
        .into_iter()
        .filter(|c| {
            matches!(
                c.tool,
                "debug_attach" | "debug_list_threads" | "debug_disconnect"
            )
        })
        .collect()
}

/// True once every call's root has arrived with its expected JDWP children.
fn arrived(spans: &[CollectedSpan], calls: &[Call]) -> bool {
    roots_of(spans, calls).is_some_and(|roots| {
        calls.iter().zip(roots).all(|(call, root)| {
            let names: BTreeSet<String> = children_of(spans, root)
                .iter()
                .map(|s| s.name.clone())
                .collect();
            call.jdwp
                .iter()
                .all(|m| names.contains(&format!("jdwp {m}")))
        })
    })
}

/// The PKI's CA certificate written to a file, as `OTEL_EXPORTER_OTLP_CERTIFICATE` names it.
fn ca_file(pki: &TestPki) -> tempfile::NamedTempFile {
    let file = tempfile::Builder::new()
        .prefix("jvmscope-test-ca-")
        .suffix(".pem")
        .tempfile()
        .unwrap_or_else(|e| panic!("CA file: {e}"));
    std::fs::write(file.path(), &pki.ca_pem).unwrap_or_else(|e| panic!("write CA file: {e}"));
    file
}

#[test]
fn an_https_collector_trusting_the_given_certificate_receives_the_spans() {
    let pki = TestPki::generate();
    let ca = ca_file(&pki);
    let ca_path = ca.path().display().to_string();
    let receiver = HttpReceiver::start(HttpReceiverOpts {
        tls: Some(&pki),
        ..HttpReceiverOpts::default()
    });
    let endpoint = receiver.endpoint();
    assert!(endpoint.starts_with("https://"), "{endpoint}");
    let jvm = held_jvm();
    let server = server_with(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
        ("OTEL_EXPORTER_OTLP_CERTIFICATE", ca_path.as_str()),
    ]);
    let calls = short_session(jvm.port());
    investigate(&server, &calls);
    stop(&server, Duration::from_secs(20));
    let spans = receiver.wait_for(ARRIVAL, "the session's spans over HTTPS", |spans| {
        arrived(spans, &calls)
    });
    assert!(
        receiver.handshake_failures().is_empty(),
        "{:?}",
        receiver.handshake_failures()
    );
    for request in receiver.requests() {
        assert_eq!(request.path, "/v1/traces");
        assert_eq!(
            request.content_type.as_deref(),
            Some("application/x-protobuf")
        );
    }
    assert!(
        !server.stderr_tail().contains("export failed"),
        "{}\n{}",
        server.stderr_tail(),
        describe(&spans)
    );
}

#[test]
fn without_the_certificate_the_https_collector_is_not_trusted() {
    let pki = TestPki::generate();
    let receiver = HttpReceiver::start(HttpReceiverOpts {
        tls: Some(&pki),
        ..HttpReceiverOpts::default()
    });
    let endpoint = receiver.endpoint();
    let server = server_with(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
        ("OTEL_BSP_SCHEDULE_DELAY", "50"),
    ]);
    server.call("debug_list_sessions", json!({})).expect_ok();
    crate::support::poll_until_msg(ARRIVAL, "a refused TLS handshake", || {
        (!receiver.handshake_failures().is_empty()).then_some(())
    });
    stop(&server, Duration::from_secs(20));
    assert!(receiver.requests().is_empty(), "{:?}", receiver.requests());
    assert!(
        server.stderr_tail().contains("OTLP export failed"),
        "{}",
        server.stderr_tail()
    );
}

#[test]
fn a_grpc_collector_over_tls_trusting_the_given_certificate_receives_the_spans() {
    let pki = TestPki::generate();
    let ca = ca_file(&pki);
    let ca_path = ca.path().display().to_string();
    let receiver = OtlpReceiver::start_with(GrpcReceiverOpts {
        tls: Some(&pki),
        ..GrpcReceiverOpts::default()
    });
    let endpoint = receiver.endpoint();
    assert!(endpoint.starts_with("https://"), "{endpoint}");
    let server = server_with(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", ca_path.as_str()),
    ]);
    for _ in 0..3 {
        server.call("debug_list_sessions", json!({})).expect_ok();
    }
    stop(&server, Duration::from_secs(20));
    let spans = receiver.wait_for(ARRIVAL, "three tool spans over gRPC/TLS", |spans| {
        spans
            .iter()
            .filter(|s| s.name == "mcp.tool debug_list_sessions")
            .count()
            == 3
    });
    assert!(
        !server.stderr_tail().contains("export failed"),
        "{}\n{}",
        server.stderr_tail(),
        describe(&spans)
    );
}

#[test]
fn gzip_compression_compresses_the_export_over_http_and_grpc() {
    // HTTP: the header is there and the body is gzip (the receiver decodes it).
    let receiver = HttpReceiver::start(HttpReceiverOpts::default());
    let endpoint = receiver.endpoint();
    let server = server_with(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
        ("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip"),
    ]);
    for _ in 0..20 {
        server.call("debug_list_sessions", json!({})).expect_ok();
    }
    stop(&server, Duration::from_secs(20));
    receiver.wait_for(ARRIVAL, "twenty tool spans, gzipped", |spans| {
        spans
            .iter()
            .filter(|s| s.name == "mcp.tool debug_list_sessions")
            .count()
            == 20
    });
    let requests = receiver.requests();
    assert!(!requests.is_empty());
    for request in &requests {
        assert_eq!(
            request.content_encoding.as_deref(),
            Some("gzip"),
            "{requests:?}"
        );
        // gzip's magic number opens the body on the wire.
        assert!(request.wire_bytes > 2, "{requests:?}");
    }

    // gRPC: the message is sent with grpc-encoding gzip.
    let receiver = OtlpReceiver::start();
    let endpoint = receiver.endpoint();
    let server = server_with(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "gzip"),
    ]);
    server.call("debug_list_sessions", json!({})).expect_ok();
    stop(&server, Duration::from_secs(20));
    receiver.wait_for(ARRIVAL, "the tool span over gRPC, gzipped", |spans| {
        spans
            .iter()
            .any(|s| s.name == "mcp.tool debug_list_sessions")
    });
    let encodings = receiver.encodings();
    assert!(!encodings.is_empty());
    assert!(
        encodings.iter().all(|e| e.as_deref() == Some("gzip")),
        "{encodings:?}"
    );
}

/// The spans of the first call's trace in `spans`, by span id.
fn trace_of(spans: &[CollectedSpan], root: &CollectedSpan) -> BTreeSet<String> {
    spans
        .iter()
        .filter(|s| s.trace_id == root.trace_id)
        .map(|s| s.span_id.clone())
        .collect()
}

/// Reads what a receiver got so far.
type Fetch<'a, T> = Box<dyn Fn() -> Vec<T> + 'a>;

#[test]
fn a_collector_that_refuses_twice_still_receives_every_span_of_the_first_tool_call() {
    for protocol in ["http/protobuf", "grpc"] {
        let http;
        let grpc;
        let (endpoint, accepted, refused): (String, Fetch<'_, _>, Fetch<'_, _>) =
            if protocol == "grpc" {
                grpc = OtlpReceiver::start_with(GrpcReceiverOpts {
                    refuse_first: 2,
                    ..GrpcReceiverOpts::default()
                });
                (
                    grpc.endpoint(),
                    Box::new(|| grpc.spans()),
                    Box::new(|| grpc.refused()),
                )
            } else {
                http = HttpReceiver::start(HttpReceiverOpts {
                    refuse_first: 2,
                    ..HttpReceiverOpts::default()
                });
                (
                    http.endpoint(),
                    Box::new(|| http.spans()),
                    Box::new(|| {
                        http.requests()
                            .into_iter()
                            .filter(|r| r.status == 503)
                            .map(|r| r.spans)
                            .collect()
                    }),
                )
            };
        let jvm = held_jvm();
        let server = server_with(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", protocol),
            // Export while the session runs, not only at exit.
            ("OTEL_BSP_SCHEDULE_DELAY", "100"),
        ]);
        let calls = short_session(jvm.port());
        investigate(&server, &calls[..1]);
        // The first call's spans arrive through the retries, before the server stops.
        let spans = crate::support::otlp::wait_for_spans(
            ARRIVAL,
            &format!("the first tool call's spans over {protocol}, after two refusals"),
            &accepted,
            |spans| arrived(spans, &calls[..1]),
        );
        investigate(&server, &calls[1..]);
        stop(&server, Duration::from_secs(20));
        let refused = refused();
        assert_eq!(refused.len(), 2, "{protocol}: two requests refused");
        let all = describe(&spans);
        let root = roots_of(&spans, &calls[..1]).unwrap_or_else(|| panic!("{all}"))[0];
        // What was refused is what was retried: every span of the first call's trace in the
        // refused requests was accepted later.
        let got = trace_of(&spans, root);
        for attempt in &refused {
            let sent = trace_of(attempt, root);
            assert!(
                sent.contains(&root.span_id),
                "{protocol}: the refused request carried the first call\n{}",
                describe(attempt)
            );
            assert!(
                sent.is_subset(&got),
                "{protocol}: refused {sent:?}, accepted {got:?}\n{all}"
            );
        }
        assert!(
            !server.stderr_tail().contains("export failed"),
            "{protocol}: retried, so no export failed\n{}",
            server.stderr_tail()
        );
    }
}
