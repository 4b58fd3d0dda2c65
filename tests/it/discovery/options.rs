//! A JVM's options are read where the JVM reads them: a JDWP agent set in
//! `JAVA_TOOL_OPTIONS`, `JDK_JAVA_OPTIONS` or an `@argfile` is listed as
//! such, and one that waits for its debugger is never released by a
//! listing or a probe. A listing dials nothing, so it never shows in the
//! JVM's log.

use serde_json::json;

use super::{WAIT, by_pid, server};
use crate::support::java::{Jvm, JvmOpts};

const LISTENING: &str = "Listening for transport dt_socket at address";

fn waiting_agent(port: u16) -> String {
    format!("-agentlib:jdwp=transport=dt_socket,server=y,suspend=y,address=127.0.0.1:{port}")
}

/// Before the fix each of these was "no JDWP agent", and an explicit probe
/// handshook it, which released it into its `main`.
#[test]
fn an_agent_from_the_environment_or_an_argfile_is_seen_and_a_waiting_one_keeps_waiting() {
    let dir = tempfile::tempdir().expect("temp dir");
    let argfile = dir.path().join("jvm.opts");
    let file_port = crate::support::free_port();
    std::fs::write(
        &argfile,
        format!(
            "# options of the service\n-Xss1m\n\"{}\"\n",
            waiting_agent(file_port)
        ),
    )
    .expect("argfile");
    let start = |env: Option<&str>, jvm_args: Vec<String>| {
        let port = crate::support::free_port();
        let jvm = Jvm::start(
            "Ticker",
            JvmOpts {
                no_jdwp: true,
                jvm_args,
                env: env
                    .map(|var| vec![(var.to_string(), format!("-Xss1m {}", waiting_agent(port)))])
                    .unwrap_or_default(),
                ..JvmOpts::default()
            },
        );
        (jvm, port)
    };
    let jvms = [
        (
            start(Some("JAVA_TOOL_OPTIONS"), vec![]),
            "JAVA_TOOL_OPTIONS".to_string(),
        ),
        (
            start(Some("JDK_JAVA_OPTIONS"), vec![]),
            "JDK_JAVA_OPTIONS".to_string(),
        ),
        (
            (
                start(None, vec![format!("@{}", argfile.display())]).0,
                file_port,
            ),
            format!("@{}", argfile.display()),
        ),
    ];
    let server = server();
    let reply = server.call("debug_list_jvms", json!({})).expect_ok();
    for ((jvm, port), from) in &jvms {
        let row = by_pid(&reply.json(), jvm.pid());
        assert_eq!(row["state"], "WAITING_FOR_DEBUGGER", "{from}: {row}");
        assert_eq!(row["jdwp"]["from"], from.as_str(), "{row}");
        assert_eq!(row["jdwp"]["port"], *port, "{row}");
        assert!(
            reply.text.contains(&format!("(from {from})")),
            "{}",
            reply.text
        );
        let probe = server
            .call(
                "debug_list_jvms",
                json!({"probe": format!("127.0.0.1:{port}")}),
            )
            .expect_ok();
        assert_eq!(
            probe.json()["probe"]["state"],
            "WAITING_FOR_DEBUGGER",
            "{}",
            probe.text
        );
        assert_eq!(probe.json()["probe"]["pid"], jvm.pid(), "{}", probe.text);
    }
    // Still waiting: a debugger takes each, and its main has not run.
    for ((jvm, port), from) in &jvms {
        server
            .call("debug_attach", json!({"port": port}))
            .expect_ok();
        assert!(
            !jvm.lines().iter().any(|l| l.contains("ticker started")),
            "{from}: discovery released the waiting JVM: {:?}",
            jvm.lines()
        );
    }
}

/// Before the fix every listing handshook every JVM listening on a fixed
/// port, and its agent printed "Listening for transport…" again each time.
#[test]
fn a_listing_dials_nothing_so_the_jvm_log_stays_quiet() {
    let port = crate::support::free_port();
    let jvm = Jvm::start(
        "Ticker",
        JvmOpts {
            no_jdwp: true,
            jvm_args: vec![format!(
                "-agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=127.0.0.1:{port}"
            )],
            ..JvmOpts::default()
        },
    );
    let announced = || {
        jvm.lines()
            .iter()
            .filter(|l| l.starts_with(LISTENING))
            .count()
    };
    assert_eq!(announced(), 1);
    let server = server();
    for _ in 0..3 {
        let reply = server.call("debug_list_jvms", json!({})).expect_ok();
        assert_eq!(
            by_pid(&reply.json(), jvm.pid())["state"],
            "LISTENING",
            "{}",
            reply.text
        );
    }
    // An explicit probe does handshake: the agent announces itself once
    // more. It serves one connection at a time, so the listings' own
    // announcements, had they dialled, would all be printed before it.
    let probe = server
        .call(
            "debug_list_jvms",
            json!({"probe": format!("127.0.0.1:{port}")}),
        )
        .expect_ok();
    assert_eq!(
        probe.json()["probe"]["state"],
        "LISTENING",
        "{}",
        probe.text
    );
    crate::support::poll_until_msg(WAIT, "the agent to listen again after the probe", || {
        (announced() >= 2).then_some(())
    });
    assert_eq!(announced(), 2, "{:?}", jvm.lines());
}
