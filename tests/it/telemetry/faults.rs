//! JDWP round-trip spans on the failure paths: an error reply, a timeout
//! and a lost connection each end their span with status ERROR and the
//! `jdwp.error` that names what happened, under the tool call that sent them.

use std::time::Duration;

use tracing::Instrument;

use jvmscope::actors::JdwpError;
use jvmscope::actors::testing::dial;
use jvmscope::actors::{ConnectionConfig, testing::Connection};
use jvmscope::jdwp::virtual_machine::Version;
use jvmscope::telemetry::{self, ExportConfig, Protocol, QueueConfig, SamplerChoice};

use super::{ARRIVAL, assert_jdwp_attributes, children_of};
use crate::fake_jdwp::{Behaviour, ERROR_NOT_IMPLEMENTED, FakeJdwp, Step, version_reply};
use crate::support::otlp::{CollectedSpan, OtlpReceiver, STATUS_ERROR, STATUS_UNSET, describe};

/// Four `Version` round trips under one root span, on a connection to
/// `port` whose spans export to `receiver`: answered, refused, stalled,
/// and cut off. Returns what each call returned.
fn four_round_trips(receiver: &OtlpReceiver, port: u16) -> Vec<Result<(), JdwpError>> {
    let config = telemetry::TelemetryConfig {
        log_filter: "off".into(),
        log_file: None,
        service_name: Some("jvmscope-faults".into()),
        export: Some(ExportConfig {
            endpoint: receiver.endpoint(),
            protocol: Protocol::Grpc,
            sampler: SamplerChoice::AlwaysOn,
            queue: QueueConfig {
                scheduled_delay: Duration::from_millis(50),
                ..QueueConfig::default()
            },
        }),
        warnings: Vec::new(),
    };
    // The exporter's task runs on its own runtime; the actors run on a second one whose threads
    // all use the dispatcher built here (not the process-wide one other tests share).
    let export_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let (dispatch, telemetry) = export_rt.block_on(async { telemetry::build(&config) });
    assert!(telemetry.is_exporting());
    let for_threads = dispatch.clone();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .on_thread_start(move || {
            std::mem::forget(tracing::dispatcher::set_default(&for_threads));
        })
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let outcomes = tracing::dispatcher::with_default(&dispatch, || {
        rt.block_on(async {
            let stream = dial("127.0.0.1", port, Duration::from_secs(5))
                .await
                .unwrap_or_else(|e| panic!("dial the fake: {e}"));
            let conn = Connection::spawn_unlinked(stream, ConnectionConfig::new("127.0.0.1", port))
                .await
                .unwrap_or_else(|e| panic!("spawn connection: {e}"));
            let root = tracing::info_span!(
                target: "jvmscope::tests",
                parent: None,
                "mcp.tool",
                "otel.name" = "mcp.tool faults",
                "otel.kind" = "server",
            );
            let outcomes = async {
                vec![
                    conn.send(&Version).await.map(|_| ()),
                    conn.send(&Version).await.map(|_| ()),
                    conn.send_within(&Version, Duration::from_millis(300))
                        .await
                        .map(|_| ()),
                    conn.send(&Version).await.map(|_| ()),
                ]
            }
            .instrument(root)
            .await;
            conn.actor().stop(None);
            outcomes
        })
    });
    export_rt.block_on(telemetry.shutdown());
    outcomes
}

#[test]
fn jdwp_spans_record_error_replies_timeouts_and_disconnects() {
    let receiver = OtlpReceiver::start();
    let fake = FakeJdwp::start(Behaviour::HandshakeThen(vec![
        Step::Reply(version_reply()),
        Step::ReplyError(ERROR_NOT_IMPLEMENTED),
        Step::Stall,
        Step::Close,
    ]));
    let port = fake.port();
    let outcomes = four_round_trips(&receiver, port);
    assert!(outcomes[0].is_ok(), "{outcomes:?}");
    assert!(
        matches!(outcomes[1], Err(JdwpError::Jvm { .. })),
        "{outcomes:?}"
    );
    assert!(
        matches!(outcomes[2], Err(JdwpError::Timeout { .. })),
        "{outcomes:?}"
    );
    assert!(
        matches!(outcomes[3], Err(JdwpError::Disconnected { .. })),
        "{outcomes:?}"
    );

    let spans = receiver.wait_for(ARRIVAL, "four round trips and their root", |spans| {
        spans.len() >= 5
    });
    let all = describe(&spans);
    let root = spans
        .iter()
        .find(|s| s.name == "mcp.tool faults")
        .unwrap_or_else(|| panic!("root span\n{all}"));
    assert_eq!(
        root.service_name(),
        Some("jvmscope-faults"),
        "OTEL_SERVICE_NAME"
    );
    let mut trips: Vec<&CollectedSpan> = children_of(&spans, root);
    assert_eq!(trips.len(), 4, "{all}");
    trips.sort_by_key(|s| s.int_attr("jdwp.id").unwrap_or(i64::MAX));
    for s in &trips {
        assert_eq!(s.name, "jdwp VirtualMachine.Version", "{all}");
        assert_jdwp_attributes(s, port, &all);
    }
    let errors: Vec<(i32, Option<&str>)> = trips
        .iter()
        .map(|s| (s.status_code, s.str_attr("jdwp.error")))
        .collect();
    assert_eq!(
        errors,
        vec![
            (STATUS_UNSET, None),
            (STATUS_ERROR, Some("NOT_IMPLEMENTED")),
            (STATUS_ERROR, Some("TIMEOUT")),
            (STATUS_ERROR, Some("DISCONNECTED")),
        ],
        "{all}"
    );
}
