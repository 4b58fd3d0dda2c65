//! Sessions against real JVMs through the real binary: attach, list,
//! disconnect (the JVM keeps running), launch held before main, two JVMs
//! at once, a JVM killed mid-session, and the installed Temurin 25.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::java::{Jvm, JvmOpts, fixtures, temurin25_required};
use crate::support::mcp::Server;
use crate::support::poll_until_msg;
use crate::support::text::{number_after, session_id};

fn server() -> Server {
    let server = Server::spawn();
    server.initialize();
    server
}

/// Attaches to `jvm`; its row in debug_list_sessions.
fn attach(server: &Server, jvm: &Jvm) -> Value {
    let reply = server
        .call("debug_attach", json!({"port": jvm.port()}))
        .expect_ok();
    row(server, &session_id(&reply.text))
}

/// The debug_list_sessions row of session `id`.
fn row(server: &Server, id: &str) -> Value {
    sessions(server)
        .into_iter()
        .find(|s| s["session_id"] == id)
        .unwrap_or_else(|| panic!("no session {id} listed"))
}

fn sessions(server: &Server) -> Vec<Value> {
    let reply = server.call("debug_list_sessions", json!({})).expect_ok();
    reply.json()["sessions"]
        .as_array()
        .cloned()
        .expect("sessions array")
}

/// Asserts the program's output advances within a few seconds.
fn assert_output_advances(jvm: &Jvm, what: &str) {
    let before = jvm.line_count();
    poll_until_msg(Duration::from_secs(10), what, || {
        (jvm.line_count() > before + 2).then_some(())
    });
}

#[test]
fn attach_list_and_disconnect_leave_the_jvm_running() {
    let jvm = Jvm::start("Ticker", JvmOpts::default());
    jvm.wait_for_line("ticker started", Duration::from_secs(10));
    let server = server();
    let opened = attach(&server, &jvm);
    assert_eq!(opened["session_id"], "s1");
    assert_eq!(opened["state"], "RUNNING");
    assert!(
        opened["vm_version"]
            .as_str()
            .unwrap_or("")
            .starts_with("17"),
        "{opened}"
    );
    let list = sessions(&server);
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["address"], format!("127.0.0.1:{}", jvm.port()));
    assert_eq!(list[0]["current"], true);
    assert_eq!(list[0]["state"], "RUNNING");
    assert!(list[0]["packets_sent"].as_u64().unwrap_or(0) >= 2);
    assert_eq!(list[0]["stop_points"], 0);
    let threads = server.call("debug_list_threads", json!({})).expect_ok();
    assert!(threads.text.contains("\"main\""), "{}", threads.text);

    let reply = server.call("debug_disconnect", json!({})).expect_ok();
    assert!(
        reply
            .text
            .contains("0 threads were suspended by us; verified: all"),
        "nothing of ours held a thread: {}",
        reply.text
    );
    assert_output_advances(&jvm, "the JVM to keep ticking after disconnect");
    let list = sessions(&server);
    assert_eq!(list[0]["state"], "DEAD");
    let again = server
        .call("debug_list_threads", json!({}))
        .expect_tool_error();
    assert!(again.text.starts_with("[VM_GONE]"), "{}", again.text);
}

#[test]
fn disconnect_while_suspended_releases_every_thread() {
    let jvm = Jvm::start(
        "Ticker",
        JvmOpts {
            suspend: true,
            ..JvmOpts::default()
        },
    );
    let server = server();
    let opened = attach(&server, &jvm);
    assert_eq!(opened["state"], "SUSPENDED", "suspend=y holds the JVM");
    let reply = server.call("debug_disconnect", json!({})).expect_ok();
    // Its VM_START event, held for us under suspend=y, suspended every
    // thread: the reply counts them as ours (the program may start more
    // once released, which the verified count then includes).
    let ours = number_after(&reply.text, "stop points; ").unwrap_or(0);
    let all = number_after(&reply.text, "verified: all ").unwrap_or(0);
    assert!(
        ours >= 1 && ours <= all && reply.text.contains(" suspended by us; verified: all "),
        "{}",
        reply.text
    );
    jvm.wait_for_line("ticker started", Duration::from_secs(10));
    assert_output_advances(&jvm, "ticks after the release");
}

#[test]
fn disconnect_counts_the_threads_our_stop_point_suspended() {
    let jvm = Jvm::start("Ticker", JvmOpts::default());
    jvm.wait_for_line("ticker started", Duration::from_secs(10));
    let server = server();
    attach(&server, &jvm);
    let line = crate::support::java::line_of("Ticker.java", "tick");
    server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": "Ticker", "line": line}),
        )
        .expect_ok();
    let hit = server
        .call("debug_wait_for_event", json!({"timeout_ms": 10_000}))
        .expect_ok();
    assert!(hit.text.contains("Ticker"), "{}", hit.text);
    let reply = server.call("debug_disconnect", json!({})).expect_ok();
    // The stop point suspended the whole VM: every thread was ours to
    // release, and the reply counts them so.
    let ours = number_after(&reply.text, "stop points; ").unwrap_or(0);
    let all = number_after(&reply.text, "verified: all ").unwrap_or(0);
    assert!(
        ours >= 2
            && ours <= all
            && reply
                .text
                .contains(" threads were suspended by us; verified: all "),
        "{}",
        reply.text
    );
    assert_output_advances(&jvm, "ticks after the release");
}

#[test]
fn launch_holds_main_until_continue() {
    let server = server();
    let reply = server
        .call(
            "debug_launch",
            json!({"main_class": "Ticker", "classpath": fixtures().display().to_string()}),
        )
        .expect_ok();
    assert!(reply.text.contains("\nState: SUSPENDED"), "{}", reply.text);
    let pid = number_after(&reply.text, "\nProcess: pid ")
        .unwrap_or_else(|| panic!("no pid: {}", reply.text)) as u32;
    assert_eq!(row(&server, &session_id(&reply.text))["pid"], pid);
    // main has not run: every thread is held from before the first instruction.
    let threads = server.call("debug_list_threads", json!({})).expect_ok();
    assert!(threads.text.contains("suspended"), "{}", threads.text);
    let sessions = sessions(&server);
    assert_eq!(sessions[0]["state"], "SUSPENDED");
    let cont = server.call("debug_continue", json!({})).expect_ok();
    assert!(cont.text.contains("Verified: all"), "{}", cont.text);
    poll_until_msg(Duration::from_secs(10), "RUNNING after continue", || {
        (sessions_state(&server) == "RUNNING").then_some(())
    });
    let bye = server.call("debug_disconnect", json!({})).expect_ok();
    assert!(
        bye.text.contains(&format!("pid {pid} terminated")),
        "{}",
        bye.text
    );
    poll_until_msg(Duration::from_secs(10), "the launched JVM to exit", || {
        (!PathBuf::from(format!("/proc/{pid}")).exists()).then_some(())
    });
}

fn sessions_state(server: &Server) -> String {
    sessions(server)[0]["state"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

#[test]
fn launch_reports_a_jvm_that_dies_during_startup() {
    let server = server();
    let reply = server
        .call(
            "debug_launch",
            json!({"main_class": "NoSuchMainClass", "classpath": fixtures().display().to_string(), "suspend": false}),
        )
        .expect_tool_error();
    assert!(reply.text.starts_with("[LAUNCH_FAILED]"), "{}", reply.text);
    assert!(
        reply.text.contains("NoSuchMainClass"),
        "carries the JVM's last lines: {}",
        reply.text
    );
}

#[test]
fn two_jvms_at_once_and_one_killed() {
    let a = Jvm::start("Ticker", JvmOpts::default());
    let b = Jvm::start("Ticker", JvmOpts::default());
    let server = server();
    let sa = attach(&server, &a)["session_id"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let sb = attach(&server, &b)["session_id"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert_ne!(sa, sb);
    for id in [&sa, &sb] {
        server
            .call("debug_list_threads", json!({"session_id": id}))
            .expect_ok();
    }
    a.kill();
    let killed_at = Instant::now();
    let gone = poll_until_msg(Duration::from_secs(2), "VM_GONE after kill", || {
        let r = server.call("debug_list_threads", json!({"session_id": sa}));
        (r.is_error && r.text.starts_with("[VM_GONE]")).then_some(r)
    });
    assert!(killed_at.elapsed() < Duration::from_secs(2));
    assert!(
        gone.text.contains("debug_attach"),
        "names how to re-attach: {}",
        gone.text
    );
    let list = sessions(&server);
    let state_of = |id: &str| {
        list.iter()
            .find(|s| s["session_id"] == id)
            .map(|s| s["state"].as_str().unwrap_or("").to_string())
    };
    assert_eq!(state_of(&sa).as_deref(), Some("DEAD"));
    assert_eq!(state_of(&sb).as_deref(), Some("RUNNING"));
    server
        .call("debug_list_threads", json!({"session_id": sb}))
        .expect_ok();
    let current = server
        .call("debug_set_current_session", json!({"session_id": sb}))
        .expect_ok();
    assert!(current.text.contains(&sb), "{}", current.text);
    server.call("debug_disconnect", json!({})).expect_ok();
    assert_output_advances(&b, "the surviving JVM to keep running");
}

#[test]
fn temurin_25_attach_and_release() {
    let home = temurin25_required();
    let jvm = Jvm::start(
        "Ticker",
        JvmOpts {
            java_home: Some(home),
            suspend: true,
            ..JvmOpts::default()
        },
    );
    let server = server();
    let opened = attach(&server, &jvm);
    assert!(
        opened["vm_version"]
            .as_str()
            .unwrap_or("")
            .starts_with("25"),
        "{opened}"
    );
    assert_eq!(opened["state"], "SUSPENDED");
    server.call("debug_continue", json!({})).expect_ok();
    jvm.wait_for_line("ticker started", Duration::from_secs(10));
    server.call("debug_disconnect", json!({})).expect_ok();
    assert_output_advances(&jvm, "Temurin 25 to keep running");
}

#[test]
fn shutting_the_server_down_releases_a_held_jvm() {
    let jvm = Jvm::start(
        "Ticker",
        JvmOpts {
            suspend: true,
            ..JvmOpts::default()
        },
    );
    let server = server();
    attach(&server, &jvm);
    server.close_stdin();
    server
        .wait_exit(Duration::from_secs(15))
        .expect("server exits");
    jvm.wait_for_line("ticker started", Duration::from_secs(10));
    assert_output_advances(&jvm, "the JVM released at server exit");
}

#[test]
fn attaching_again_to_a_port_we_hold_names_the_session_that_holds_it() {
    let jvm = Jvm::start("Ticker", JvmOpts::default());
    jvm.wait_for_line("ticker started", Duration::from_secs(10));
    let server = server();
    attach(&server, &jvm);
    for host in ["127.0.0.1", "localhost"] {
        let again = server
            .call("debug_attach", json!({"host": host, "port": jvm.port()}))
            .expect_tool_error();
        assert!(
            again.text.starts_with("[ALREADY_ATTACHED]"),
            "{}",
            again.text
        );
        assert!(again.text.contains("session s1"), "{}", again.text);
        assert!(
            !again.text.contains("nothing is listening"),
            "{}",
            again.text
        );
    }
    // The first session is untouched and still the only one.
    assert_eq!(sessions(&server).len(), 1);
    assert_output_advances(&jvm, "the JVM to keep running");
}

#[test]
fn continue_on_a_running_jvm_says_nothing_was_held_and_sends_no_resume() {
    let jvm = Jvm::start("Ticker", JvmOpts::default());
    jvm.wait_for_line("ticker started", Duration::from_secs(10));
    let server = server();
    attach(&server, &jvm);
    let reply = server.call("debug_continue", json!({})).expect_ok();
    assert!(
        reply.text.starts_with("Nothing was suspended"),
        "{}",
        reply.text
    );
    assert!(reply.text.contains("nothing was sent"), "{}", reply.text);
    assert_output_advances(&jvm, "the JVM to keep running");
}

#[test]
fn a_jvm_that_already_has_a_debugger_is_refused_with_that_reason() {
    let jvm = Jvm::start("Ticker", JvmOpts::default());
    jvm.wait_for_line("ticker started", Duration::from_secs(10));
    // Another debugger: a raw JDWP client that completes the handshake
    // and stays connected. The agent stops listening while it is there.
    let mut other = std::net::TcpStream::connect(("127.0.0.1", jvm.port())).expect("connect");
    std::io::Write::write_all(&mut other, b"JDWP-Handshake").expect("handshake");
    let mut back = [0u8; 14];
    std::io::Read::read_exact(&mut other, &mut back).expect("handshake reply");
    assert_eq!(&back, b"JDWP-Handshake");
    let peer_port = other.local_addr().expect("local addr").port();
    let server = server();
    let refused = server
        .call(
            "debug_attach",
            json!({"host": "127.0.0.1", "port": jvm.port()}),
        )
        .expect_tool_error();
    assert!(
        refused.text.starts_with("[DEBUGGER_ATTACHED]"),
        "{}",
        refused.text
    );
    assert!(
        refused.text.contains(&format!(":{peer_port}")),
        "names the other debugger's end: {}",
        refused.text
    );
    assert!(
        !refused.text.contains("nothing is listening"),
        "{}",
        refused.text
    );
    assert!(sessions(&server).is_empty());
    drop(other);
    assert_output_advances(&jvm, "the JVM to keep running");
}
