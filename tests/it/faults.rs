//! Fault cases a real JVM cannot produce, against the scripted fake JDWP
//! peer: wrong ports, garbage, truncation, oversized packets, stalls and
//! closes. Each must give a clear error, never a panic or a hang.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::fake_jdwp::{Behaviour, FakeJdwp, FakeOpts, Step};
use crate::support::mcp::{Server, ToolReply};
use crate::support::text::session_id;

/// Requests time out after a second here so stalls are quick to observe.
fn server() -> Server {
    let server = Server::spawn_with_env(&[("JVMSCOPE_REQUEST_TIMEOUT_MS", "1000")]);
    server.initialize();
    server
}

fn attach(server: &Server, port: u16, timeout_ms: u64) -> ToolReply {
    server.call(
        "debug_attach",
        json!({"port": port, "timeout_ms": timeout_ms}),
    )
}

fn assert_no_panic(server: &Server) {
    assert!(server.is_alive(), "server died:\n{}", server.stderr_tail());
    server
        .request("ping", json!({}))
        .expect("still answers ping");
    assert!(
        !server.stderr_tail().contains("panicked"),
        "{}",
        server.stderr_tail()
    );
}

#[test]
fn an_http_server_is_not_a_jdwp_endpoint() {
    let fake = FakeJdwp::start(Behaviour::Http);
    let server = server();
    let reply = attach(&server, fake.port(), 2000).expect_tool_error();
    assert!(reply.text.starts_with("[NOT_JDWP]"), "{}", reply.text);
    assert!(reply.text.contains(&fake.address()), "{}", reply.text);
    assert_no_panic(&server);
}

#[test]
fn a_silent_port_is_not_jdwp_within_the_timeout() {
    let fake = FakeJdwp::start(Behaviour::Silent);
    let server = server();
    let started = Instant::now();
    let reply = attach(&server, fake.port(), 500).expect_tool_error();
    let took = started.elapsed();
    assert!(reply.text.starts_with("[NOT_JDWP]"), "{}", reply.text);
    assert!(took < Duration::from_secs(3), "took {took:?}");
    assert_no_panic(&server);
}

#[test]
fn a_refused_connection_names_host_and_port() {
    // Bound and never listening for the whole test: no other test's
    // server can be handed it meanwhile.
    let refused = crate::support::refused_port();
    let port = refused.port;
    let server = server();
    let reply = attach(&server, port, 1000).expect_tool_error();
    assert!(
        reply.text.starts_with("[CONNECT_REFUSED]"),
        "{}",
        reply.text
    );
    assert!(
        reply.text.contains(&format!("127.0.0.1:{port}")),
        "{}",
        reply.text
    );
}

/// Attaches to a fake whose first command after the attach gets `step`,
/// then makes a tool call that sends one.
fn fault_after_attach(step: Step) -> (FakeJdwp, Server, ToolReply) {
    let fake = FakeJdwp::start(Behaviour::AfterAttach {
        skip: 1, // the attach reply's own thread census
        then: vec![step],
    });
    let server = server();
    let opened = attach(&server, fake.port(), 2000).expect_ok();
    assert!(opened.text.contains("FakeVM"), "{}", opened.text);
    let reply = server.call_with_timeout("debug_list_threads", json!({}), Duration::from_secs(10));
    (fake, server, reply)
}

#[test]
fn garbage_ends_the_session_with_vm_gone() {
    let (_fake, server, reply) = fault_after_attach(Step::Garbage(
        b"\x00\x00\x00\x05this is not jdwp at all".to_vec(),
    ));
    assert!(reply.is_error, "{}", reply.text);
    assert!(reply.text.starts_with("[VM_GONE]"), "{}", reply.text);
    let list = server.call("debug_list_sessions", json!({})).expect_ok();
    assert!(list.text.contains("DEAD"), "{}", list.text);
    assert!(list.text.contains("not JDWP"), "{}", list.text);
    assert_no_panic(&server);
}

#[test]
fn an_oversized_packet_is_refused_before_allocating() {
    let (_fake, server, reply) = fault_after_attach(Step::Oversized);
    assert!(reply.text.starts_with("[VM_GONE]"), "{}", reply.text);
    let list = server.call("debug_list_sessions", json!({})).expect_ok();
    assert!(list.text.contains("exceeds the maximum"), "{}", list.text);
    assert_no_panic(&server);
}

#[test]
fn a_truncated_reply_times_out_instead_of_hanging() {
    let started = Instant::now();
    let (_fake, server, reply) = fault_after_attach(Step::Truncated);
    assert!(reply.text.starts_with("[TIMEOUT]"), "{}", reply.text);
    assert!(started.elapsed() < Duration::from_secs(8));
    assert_no_panic(&server);
}

#[test]
fn a_stalled_peer_times_out_and_is_declared_dead() {
    let (_fake, server, reply) = fault_after_attach(Step::Stall);
    assert!(reply.text.starts_with("[TIMEOUT]"), "{}", reply.text);
    assert!(reply.text.contains("ThreadReference") || reply.text.contains("VirtualMachine"));
    assert_no_panic(&server);
}

#[test]
fn a_closed_connection_is_vm_gone() {
    let (_fake, server, reply) = fault_after_attach(Step::Close);
    assert!(reply.text.starts_with("[VM_GONE]"), "{}", reply.text);
    assert_no_panic(&server);
}

#[test]
fn four_byte_ids_are_honoured() {
    let fake = FakeJdwp::start_with(Behaviour::Auto { then: vec![] }, FakeOpts { id_size: 4 });
    let server = server();
    attach(&server, fake.port(), 2000).expect_ok();
    let threads = server.call("debug_list_threads", json!({})).expect_ok();
    assert!(threads.text.starts_with("0 threads"), "{}", threads.text);
    assert_no_panic(&server);
}

#[test]
fn a_stalled_jvm_never_delays_calls_on_another_session() {
    use crate::support::java::{Jvm, JvmOpts};
    let healthy = Jvm::start("Ticker", JvmOpts::default());
    // Attach's own commands (the probe engine's capabilities check, the
    // thread list) are answered; the next one stalls.
    let stalled = FakeJdwp::start(Behaviour::AfterAttach {
        skip: 2,
        then: vec![Step::Stall],
    });
    // A long request timeout, so the stalled call stays in flight.
    let server = Server::spawn_with_env(&[("JVMSCOPE_REQUEST_TIMEOUT_MS", "8000")]);
    server.initialize();
    let slow = session_id(&attach(&server, stalled.port(), 2000).expect_ok().text);
    let fast = session_id(
        &server
            .call("debug_attach", json!({"port": healthy.port()}))
            .expect_ok()
            .text,
    );
    std::thread::scope(|scope| {
        let stuck = scope.spawn(|| {
            server.call_with_timeout(
                "debug_list_threads",
                json!({"session_id": slow}),
                Duration::from_secs(20),
            )
        });
        // Wait until the stalled request is really in flight.
        stalled.wait_until("the stalled AllThreads", Duration::from_secs(5), |v| {
            v.received.iter().filter(|r| r.command() == (1, 4)).count() >= 2
        });
        for _ in 0..5 {
            let started = Instant::now();
            let reply = server
                .call("debug_list_threads", json!({"session_id": fast}))
                .expect_ok();
            assert!(reply.text.contains("\"main\""), "{}", reply.text);
            assert!(
                started.elapsed() < Duration::from_secs(1),
                "a call on the healthy JVM took {:?} while the other was stalled",
                started.elapsed()
            );
        }
        assert!(!stuck.is_finished(), "the stalled call is still waiting");
        let stuck = stuck.join().expect("thread");
        assert!(stuck.text.starts_with("[TIMEOUT]"), "{}", stuck.text);
    });
}

/// A Connection actor on one end of a loopback socket, and the other end
/// for the test to play the JVM (no handshake: the actor starts after it),
/// with `timeout` per request when given.
async fn raw_connection(
    timeout: Option<Duration>,
) -> (jvmscope::actors::ConnectionHandle, tokio::net::TcpStream) {
    use jvmscope::actors::ConnectionConfig;
    use jvmscope::actors::testing::Connection;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("bind: {e}"));
    let port = listener.local_addr().expect("address").port();
    let ours = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    let (peer, _) = listener.accept().await.expect("accept");
    let mut config = ConnectionConfig::new("127.0.0.1", port);
    if let Some(t) = timeout {
        config.request_timeout = t;
    }
    let conn = Connection::spawn_unlinked(ours, config)
        .await
        .unwrap_or_else(|e| panic!("spawn connection: {e}"));
    (conn, peer)
}

/// A runtime on this thread alone, for the tests that play the JVM.
fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"))
}

/// A request as the peer read it.
struct Request {
    id: u32,
    command: (u8, u8),
    body: Vec<u8>,
}

/// Reads `n` whole requests off the peer's end, in the order they came.
async fn read_requests(peer: &mut tokio::net::TcpStream, n: usize) -> Vec<Request> {
    use tokio::io::AsyncReadExt;
    let mut got = Vec::new();
    let mut buf = vec![0u8; 4096];
    let mut out = Vec::new();
    while out.len() < n {
        let read = tokio::time::timeout(Duration::from_secs(5), peer.read(&mut buf))
            .await
            .expect("the requests arrive")
            .expect("read");
        assert!(read > 0, "the connection closed early");
        got.extend_from_slice(&buf[..read]);
        while got.len() >= 11 {
            let len = u32::from_be_bytes([got[0], got[1], got[2], got[3]]) as usize;
            if got.len() < len {
                break;
            }
            let packet: Vec<u8> = got.drain(..len).collect();
            out.push(Request {
                id: u32::from_be_bytes([packet[4], packet[5], packet[6], packet[7]]),
                command: (packet[9], packet[10]),
                body: packet[11..].to_vec(),
            });
        }
    }
    out
}

/// A burst's commands (a capture's reads and the resume behind them)
/// reach the JVM in the order they were added, and each typed reply
/// reaches its own future, answered in any order. A burst on a
/// connection that has ended says why, for every command of it.
#[test]
fn a_burst_goes_out_in_order_and_each_reply_reaches_its_command() {
    use jvmscope::actors::JdwpError;
    use jvmscope::jdwp::ThreadId;
    use jvmscope::jdwp::thread_reference::{Name, Resume};
    use tokio::io::AsyncWriteExt;

    current_thread().block_on(async {
        let (conn, mut peer) = raw_connection(None).await;
        let (name, first, second) = {
            let mut burst = conn.burst();
            let name = burst.send(&Name {
                thread: ThreadId(7),
            });
            let first = burst.send(&Resume {
                thread: ThreadId(7),
            });
            let second = burst.send(&Resume {
                thread: ThreadId(8),
            });
            (name, first, second)
        };
        let requests = read_requests(&mut peer, 3).await;
        let seen: Vec<((u8, u8), u64)> = requests
            .iter()
            .map(|r| {
                let thread = u64::from_be_bytes(r.body[..8].try_into().expect("a thread id"));
                (r.command, thread)
            })
            .collect();
        assert_eq!(seen, [((11, 1), 7), ((11, 3), 7), ((11, 3), 8)]);
        // Answered last to first, in one write.
        let mut answer = Vec::new();
        for r in requests.iter().rev() {
            let data: &[u8] = if r.command == (11, 1) {
                b"\0\0\0\x06worker"
            } else {
                b""
            };
            answer.extend(crate::fake_jdwp::reply_packet(r.id, 0, data));
        }
        peer.write_all(&answer).await.expect("write the replies");
        let (name, first, second) = tokio::time::timeout(Duration::from_secs(5), async {
            futures::join!(name, first, second)
        })
        .await
        .expect("every command is answered");
        assert_eq!(name.expect("the name"), "worker");
        first.expect("the first resume");
        second.expect("the second resume");
        // The JVM goes away: a burst sent after that fails, saying why.
        drop(peer);
        let ended = tokio::time::timeout(Duration::from_secs(5), async {
            loop {
                if conn.shared().end_reason().is_some() {
                    break;
                }
                tokio::task::yield_now().await;
            }
        })
        .await;
        assert!(ended.is_ok(), "the connection notices the peer left");
        let late = conn.burst().send(&Resume {
            thread: ThreadId(7),
        });
        match late.await {
            Err(JdwpError::Disconnected { command, reason }) => {
                assert_eq!(command, "ThreadReference.Resume");
                assert!(reason.contains("closed"), "{reason}");
            }
            other => panic!("expected a disconnect, got {other:?}"),
        }
    });
}

/// A JVM that stops reading fills the socket. The Connection hands the
/// write that blocks to a helper task, so its mailbox keeps answering and
/// its timer keeps expiring requests; once the peer reads again, every
/// byte it was sent arrives, a request sent meanwhile included.
#[test]
fn a_peer_that_stops_reading_stalls_no_mailbox() {
    use jvmscope::actors::JdwpError;
    use tokio::io::AsyncReadExt;

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    rt.block_on(async {
        let (conn, mut peer) = raw_connection(Some(Duration::from_millis(1000))).await;
        // 64 requests of 1 MiB: far more than loopback socket buffers hold,
        // and the peer reads none of it.
        let sends: Vec<_> = (0..64)
            .map(|_| conn.raw(1, 1, "VirtualMachine.Version", vec![0u8; 1 << 20], None))
            .collect();
        // 32 MiB (the window's worth) are queued on a socket that holds a
        // few: the mailbox answers all the same.
        tokio::time::timeout(Duration::from_secs(5), conn.stats())
            .await
            .expect("the mailbox answers while the socket is full")
            .expect("stats");
        let outcomes =
            tokio::time::timeout(Duration::from_secs(10), futures::future::join_all(sends))
                .await
                .expect("overdue requests expire while the socket is full");
        for o in &outcomes {
            assert!(matches!(o, Err(JdwpError::Timeout { .. })), "{o:?}");
        }
        // A request sent while the write is still blocked waits its turn.
        let late = conn.raw(1, 1, "VirtualMachine.Version", b"late".to_vec(), None);
        // Handled in mailbox order: once stats answer, the late request
        // is encoded and counted.
        conn.stats().await.expect("stats");
        let sent = conn.shared().bytes_sent();
        let (mut total, mut got) = (0u64, Vec::<u8>::new());
        let mut buf = vec![0u8; 1 << 20];
        let deadline = Instant::now() + Duration::from_secs(20);
        while total < sent {
            assert!(
                Instant::now() < deadline,
                "{total} of {sent} bytes arrived once the peer read again"
            );
            let n = tokio::time::timeout(Duration::from_secs(5), peer.read(&mut buf))
                .await
                .expect("bytes keep coming")
                .expect("read");
            assert!(n > 0, "the connection closed early");
            total += n as u64;
            // Only the tail is kept: the late request is the last packet.
            got.extend_from_slice(&buf[..n]);
            if got.len() > (4 << 20) {
                got.drain(..got.len() - 64);
            }
        }
        assert!(got.ends_with(b"late"), "the late request was written last");
        drop(late);
    });
}

/// Replies the JVM writes together, in one read of the socket and in any
/// order, each reach the request they answer, by packet id; a reply to a
/// request no one waits for is dropped without disturbing the others, and
/// the connection goes on.
#[test]
fn replies_read_together_each_reach_their_own_request() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    current_thread().block_on(async {
        let (conn, mut peer) = raw_connection(None).await;
        let bodies: [&[u8]; 3] = [b"first", b"second", b"third"];
        let sends: Vec<_> = bodies
            .iter()
            .map(|b| conn.raw(1, 1, "VirtualMachine.Version", b.to_vec(), None))
            .collect();
        // Read the three requests, and learn their packet ids.
        let ids: Vec<(u32, Vec<u8>)> = read_requests(&mut peer, 3)
            .await
            .into_iter()
            .map(|r| (r.id, r.body))
            .collect();
        let mut buf = vec![0u8; 4096];
        // Answer in reverse, with a stray reply among them, in one write.
        let mut answer = Vec::new();
        for (i, (id, body)) in ids.iter().enumerate().rev() {
            let mut data = b"re:".to_vec();
            data.extend_from_slice(body);
            answer.extend(crate::fake_jdwp::reply_packet(*id, 0, &data));
            if i == 1 {
                answer.extend(crate::fake_jdwp::reply_packet(0x7fff_fff0, 0, b"stray"));
            }
        }
        peer.write_all(&answer).await.expect("write the replies");
        let replies =
            tokio::time::timeout(Duration::from_secs(5), futures::future::join_all(sends))
                .await
                .expect("every request is answered");
        for (body, reply) in bodies.iter().zip(replies) {
            let data = reply.unwrap_or_else(|e| panic!("reply to {body:?}: {e}"));
            assert_eq!(data, [b"re:".as_slice(), body].concat());
        }
        // The connection goes on: a later request is answered too.
        let later = conn.raw(1, 1, "VirtualMachine.Version", b"later".to_vec(), None);
        let n = tokio::time::timeout(Duration::from_secs(5), peer.read(&mut buf))
            .await
            .expect("the later request arrives")
            .expect("read");
        assert!(n >= 11, "a whole header");
        let id = u32::from_be_bytes([buf[4], buf[5], buf[6], buf[7]]);
        peer.write_all(&crate::fake_jdwp::reply_packet(id, 0, b"ok"))
            .await
            .expect("write");
        let data = tokio::time::timeout(Duration::from_secs(5), later)
            .await
            .expect("answered")
            .expect("reply");
        assert_eq!(data, b"ok");
    });
}

/// Before the fix a call waiting on a JVM that stopped answering was
/// answered only when the peer closed its socket (197 s with a silent
/// peer), if the liveness check ended the session first: the Session's
/// end killed the Connection, which failed nothing and kept reading. It is
/// answered `[VM_GONE]` when the session ends, and the socket is closed.
#[test]
fn a_call_waiting_when_the_liveness_check_ends_the_session_is_answered_vm_gone() {
    let fake = FakeJdwp::start(Behaviour::AfterAttach {
        skip: 2, // the attach's capabilities and its thread census
        then: vec![Step::Stall],
    });
    // The request timeout outlasts the liveness check (2 misses of 2 s).
    let server = Server::spawn_with_env(&[
        ("JVMSCOPE_REQUEST_TIMEOUT_MS", "60000"),
        ("JVMSCOPE_LIVENESS_MS", "1000"),
    ]);
    server.initialize();
    attach(&server, fake.port(), 2000).expect_ok();
    let reply = server.call_with_timeout("debug_list_threads", json!({}), Duration::from_secs(30));
    assert!(reply.text.starts_with("[VM_GONE]"), "{}", reply.text);
    assert!(reply.text.contains("stopped answering"), "{}", reply.text);
    fake.wait_until(
        "jvmscope to close its socket",
        Duration::from_secs(10),
        |v| v.closed >= 1,
    );
    assert_no_panic(&server);
}

/// Before the fix a disconnect from a JVM that had stopped answering took
/// each of its steps' timeouts in turn (9 s with a 1 s request timeout)
/// and then said "released 0 of 0 threads". It gives up at the first
/// silence and says nothing could be verified.
#[test]
fn a_disconnect_from_a_silent_jvm_gives_up_at_the_first_silence() {
    let (_fake, server, reply) = fault_after_attach(Step::Stall);
    assert!(reply.text.starts_with("[TIMEOUT]"), "{}", reply.text);
    let started = Instant::now();
    let bye = server.call("debug_disconnect", json!({})).expect_ok();
    let took = started.elapsed();
    assert!(bye.text.contains("could not verify"), "{}", bye.text);
    assert!(bye.text.contains("socket is closed"), "{}", bye.text);
    assert!(took < Duration::from_secs(5), "{took:?}: {}", bye.text);
    assert_no_panic(&server);
}

#[test]
fn an_evaluation_the_jvm_does_not_answer_is_a_timeout_not_a_fact_about_the_program() {
    let (_fake, server, reply) = fault_after_attach(Step::Stall);
    assert!(reply.text.starts_with("[TIMEOUT]"), "{}", reply.text);
    let eval = server.call_with_timeout(
        "debug_evaluate",
        json!({"expression": "Target.count"}),
        Duration::from_secs(10),
    );
    assert!(eval.is_error, "{}", eval.text);
    assert!(eval.text.starts_with("[TIMEOUT]"), "{}", eval.text);
    assert!(eval.text.contains("no reply within"), "{}", eval.text);
    assert!(!eval.text.contains("not a loaded class"), "{}", eval.text);
    assert_no_panic(&server);
}

#[test]
fn a_class_list_on_a_silent_jvm_stops_at_the_first_silence() {
    let (fake, server, reply) = fault_after_attach(Step::Stall);
    assert!(reply.text.starts_with("[TIMEOUT]"), "{}", reply.text);
    let sent_before = fake.commands().len();
    let armed = server.call_with_timeout(
        "debug_set_stop",
        json!({"kind": "exception",
               "class_pattern": ["a.OneError", "b.TwoError", "c.ThreeError", "d.FourError"]}),
        Duration::from_secs(10),
    );
    assert!(armed.is_error, "nothing armed: {}", armed.text);
    assert!(
        armed
            .text
            .starts_with("0 armed, 0 deferred, 1 refused, 3 skipped"),
        "{}",
        armed.text
    );
    assert!(
        armed.text.contains("a.OneError: REFUSED [TIMEOUT]"),
        "{}",
        armed.text
    );
    for later in ["b.TwoError", "c.ThreeError", "d.FourError"] {
        assert!(
            armed
                .text
                .contains(&format!("{later}: SKIPPED, not tried after a.OneError")),
            "{}",
            armed.text
        );
    }
    let data = armed.structured.as_ref().expect("structured outcomes");
    let states: Vec<&str> = data["outcomes"]
        .as_array()
        .expect("outcomes")
        .iter()
        .map(|o| o["state"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(states, ["refused", "skipped", "skipped", "skipped"]);
    // Only the first entry reached the wire (the liveness check's
    // VirtualMachine.Version aside): its first command, which went unanswered.
    let arming: Vec<_> = fake.commands()[sent_before..]
        .iter()
        .copied()
        .filter(|c| *c != (1, 1))
        .collect();
    assert_eq!(arming.len(), 1, "{arming:?}");
    assert_no_panic(&server);
}

#[test]
fn a_diagnosis_of_a_silent_jvm_waits_one_timeout_not_one_per_question() {
    let (_fake, server, reply) = fault_after_attach(Step::Stall);
    assert!(reply.text.starts_with("[TIMEOUT]"), "{}", reply.text);
    let started = Instant::now();
    let report = server.call_with_timeout("debug_diagnose", json!({}), Duration::from_secs(10));
    let took = started.elapsed();
    assert!(!report.is_error, "{}", report.text);
    assert!(report.text.contains("NOT_ANSWERING"), "{}", report.text);
    assert!(
        report.text.contains(
            "capabilities: unreadable (VirtualMachine.CapabilitiesNew got no reply within 1s)"
        ),
        "{}",
        report.text
    );
    // Two questions each waiting the 1 s timeout in turn take 2 s or more.
    assert!(
        took < Duration::from_millis(1900),
        "{took:?}\n{}",
        report.text
    );
    assert_no_panic(&server);
}
