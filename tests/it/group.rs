//! Group sessions against real JVMs (JDK 17 and Temurin 25 in one group)
//! through the real binary: which replica makes a rare bad call, a member
//! killed while the group is armed, bad targets, and what arming a probe
//! on a group of 8 costs against a group of 1.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fake_jdwp::{Behaviour, FakeJdwp};
use crate::support::java::{Jvm, JvmOpts, fixtures, line_of, temurin25_required};
use crate::support::mcp::{Server, ToolReply};

const WAIT: Duration = Duration::from_secs(30);

fn server() -> Server {
    let server = Server::spawn();
    server.initialize();
    server
}

/// A replica running `mode` ("bad", "good", "calm"), on Temurin 25 when `t25`.
fn replica(mode: &str, t25: bool) -> Jvm {
    let jvm = Jvm::start(
        "Replica",
        JvmOpts {
            args: vec![mode.into()],
            java_home: t25.then(temurin25_required),
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("replica ready", WAIT);
    jvm
}

fn target(jvm: &Jvm) -> String {
    format!("127.0.0.1:{}", jvm.port())
}

/// The label a member carries: its host:port and its pid.
fn label(jvm: &Jvm) -> String {
    format!("{} pid {}", target(jvm), jvm.pid())
}

fn attach_group(server: &Server, jvms: &[&Jvm]) -> ToolReply {
    let targets: Vec<String> = jvms.iter().map(|j| target(j)).collect();
    server
        .call("debug_attach", json!({"targets": targets}))
        .expect_ok()
}

/// A member's section of a merged reply: from its `=== … ===` header to
/// the next one.
fn section<'a>(text: &'a str, label: &str) -> &'a str {
    let start = text
        .find(&format!(" {label}"))
        .unwrap_or_else(|| panic!("no section for {label}:\n{text}"));
    let rest = &text[start..];
    let end = rest[1..].find("\n=== ").map_or(rest.len(), |e| e + 1);
    &rest[..end]
}

fn charge_stop(condition: &str) -> Value {
    json!({"kind": "line", "class_pattern": "Replica", "line": line_of("Replica.java", "charge"),
           "trace": true, "condition": condition, "engine": "probe"})
}

/// Three replicas of one hot program, one of which (on Temurin 25) makes a
/// rare bad call: after the group attach, a conditional stop on the group
/// and one get_traces name that call, its locals and its replica, and
/// nothing from the other two.
#[test]
fn group_which_replica_makes_the_bad_call() {
    let good = replica("good", false);
    let bad = replica("bad", true);
    let other = replica("good", false);
    let server = server();
    let opened = attach_group(&server, &[&good, &bad, &other]);
    assert!(
        opened
            .text
            .contains("Attached group g1 (3 members of 3 targets"),
        "{}",
        opened.text
    );
    for jvm in [&good, &bad, &other] {
        assert!(opened.text.contains(&label(jvm)), "{}", opened.text);
    }
    assert!(
        section(&opened.text, &label(&bad)).contains("25"),
        "{}",
        opened.text
    );

    let armed = server
        .call("debug_set_stop", charge_stop("amount < 0"))
        .expect_ok();
    assert!(
        armed.text.contains("3 of 3 members answered"),
        "{}",
        armed.text
    );
    // Two bad calls made after the stop point armed (the fixture prints
    // each once the call returned; they are 200,000 calls apart, so the
    // first has been drained from the probe's ring by the second).
    let since = bad.line_count();
    let (first, _) = bad.wait_for_line_since(since, |l| l.starts_with("bad call"), WAIT);
    bad.wait_for_line_since(first + 1, |l| l.starts_with("bad call"), WAIT);

    let traces = server.call("debug_get_traces", json!({})).expect_ok();
    let text = &traces.text;
    // The sample reply the README shows.
    #[allow(clippy::print_stderr)]
    {
        eprintln!("group get_traces reply:\n{text}");
    }
    let found = section(text, &label(&bad));
    assert!(found.contains("amount=-"), "{text}");
    assert!(found.contains("Replica.charge"), "{text}");
    for jvm in [&good, &other] {
        let quiet = section(text, &label(jvm));
        assert!(!quiet.contains("amount="), "{text}");
    }
    let data = traces.json();
    let rows = data["traces"].as_array().expect("traces");
    assert!(!rows.is_empty(), "{data}");
    assert!(
        rows.iter().all(|t| t["member"]
            .as_str()
            .is_some_and(|m| m.contains(&label(&bad)))),
        "{data}"
    );

    // group_by member counts per member.
    let by = server
        .call("debug_get_traces", json!({"group_by": ["member"]}))
        .expect_ok();
    assert!(
        section(&by.text, &label(&bad)).contains("Replica.charge"),
        "{}",
        by.text
    );

    // Stepping makes no sense across a group: refused naming the members.
    let refused = server
        .call("debug_evaluate", json!({"expression": "1"}))
        .expect_tool_error();
    assert!(refused.text.starts_with("[GROUP]"), "{}", refused.text);
    assert!(refused.text.contains(&target(&bad)), "{}", refused.text);

    let gone = server.call("debug_disconnect", json!({})).expect_ok();
    assert!(
        gone.text.contains("3 of 3 members answered"),
        "{}",
        gone.text
    );
}

/// Whether member `session` runs other bytecode for Replica than its class file.
fn instrumented(server: &Server, session: &str) -> bool {
    let r = server
        .call(
            "debug_check_stale",
            json!({"session_id": session, "class_name": "Replica",
                   "class_roots": [fixtures().display().to_string()], "bytecode": true}),
        )
        .expect_ok();
    assert!(r.text.contains("Bytecode:"), "{}", r.text);
    r.text.contains("Bytecode: STALE")
}

/// A member killed with SIGKILL while the group is armed is named as gone
/// in the next reply, which still carries the others' data; disconnect
/// leaves every live member running its original bytecode.
#[test]
fn group_member_killed_is_named_and_disconnect_restores_the_rest() {
    let a = replica("good", false);
    let doomed = replica("good", false);
    let c = replica("good", true);
    let server = server();
    attach_group(&server, &[&a, &doomed, &c]);
    server
        .call("debug_set_stop", charge_stop("amount < -1"))
        .expect_ok();
    for s in ["s1", "s2", "s3"] {
        assert!(instrumented(&server, s), "{s} runs the probe");
    }
    doomed.kill();

    // The member's session learns of the death from its socket, a moment
    // after the kill.
    let listed = crate::support::poll_until_msg(WAIT, "the killed member named gone", || {
        let l = server.call("debug_list_stop_points", json!({})).expect_ok();
        // Meanwhile it is never said to have no stop points.
        let dying = section(&l.text, &label(&doomed));
        assert!(!dying.contains("No stop points"), "{}", l.text);
        l.text.contains("2 of 3 members answered").then_some(l)
    });
    let text = &listed.text;
    let gone = section(text, &label(&doomed));
    assert!(
        gone.contains("FAILED") && gone.contains("[VM_GONE]"),
        "{text}"
    );
    for jvm in [&a, &c] {
        assert!(section(text, &label(jvm)).contains("bp_"), "{text}");
    }
    let fared = listed.json()["group_members"].clone();
    assert_eq!(fared.as_array().map(Vec::len), Some(3), "{fared}");

    let released = server.call("debug_disconnect", json!({})).expect_ok();
    assert!(
        released.text.contains("2 of 3 members answered"),
        "{}",
        released.text
    );
    // Each live member listens again; a fresh session sees its original bytes.
    for jvm in [&a, &c] {
        let again = self::server();
        let port = jvm.listening_port(2, WAIT);
        again
            .call("debug_attach", json!({"port": port}))
            .expect_ok();
        assert!(
            !instrumented(&again, "s1"),
            "disconnect restored {}",
            label(jvm)
        );
        again.call("debug_disconnect", json!({})).expect_ok();
    }
    assert!(a.is_alive() && c.is_alive());
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

/// Bad targets: a duplicate is attached once and said; an unreachable
/// address and a port that is not JDWP are named with their reasons while
/// the group opens with the rest; past 32 targets the group is refused
/// naming the bound.
#[test]
fn group_bad_targets_are_named() {
    let jvm = replica("calm", false);
    let http = FakeJdwp::start(Behaviour::Http);
    let dead = closed_port();
    let server = server();
    let opened = server
        .call(
            "debug_attach",
            json!({"targets": [target(&jvm), format!("localhost:{}", jvm.port()),
                               format!("127.0.0.1:{dead}"), http.address()],
                   "timeout_ms": 2000}),
        )
        .expect_ok();
    let text = &opened.text;
    assert!(text.contains("1 member of 3 targets"), "{text}");
    assert!(
        text.contains(&format!("DUPLICATE localhost:{}", jvm.port())),
        "{text}"
    );
    assert!(
        text.contains(&format!("NOT ATTACHED 127.0.0.1:{dead}: [CONNECT_REFUSED]")),
        "{text}"
    );
    assert!(
        text.contains(&format!("NOT ATTACHED {}: [NOT_JDWP]", http.address())),
        "{text}"
    );
    server.call("debug_disconnect", json!({})).expect_ok();

    let many: Vec<String> = (1..=33).map(|p| format!("127.0.0.1:{p}")).collect();
    let refused = server
        .call("debug_attach", json!({"targets": many}))
        .expect_tool_error();
    assert!(
        refused.text.starts_with("[GROUP_TOO_LARGE]"),
        "{}",
        refused.text
    );
    assert!(refused.text.contains("at most 32"), "{}", refused.text);

    let none = server
        .call(
            "debug_attach",
            json!({"targets": [format!("127.0.0.1:{dead}")]}),
        )
        .expect_tool_error();
    assert!(none.text.contains("CONNECT_REFUSED"), "{}", none.text);
    let garbled = server
        .call("debug_attach", json!({"targets": ["nowhere"]}))
        .expect_tool_error();
    assert!(
        garbled.text.starts_with("[BAD_ARGUMENT]"),
        "{}",
        garbled.text
    );
}

/// Arming a probe on a group of 8 JVMs and on a group of 1, through the
/// binary: every member answers. The time and CPU each took are printed
/// (a debug build; `cargo bench --bench group_arm` measures the release
/// build for docs/PERFORMANCE.md; no timed assertion).
/// Attaches `targets` as a group, arms a probe on it and disconnects; how
/// long the arming call took, and the CPU time it cost the processes
/// `pids` (the JVMs and the server), summed.
fn arm_group(server: &Server, targets: Vec<String>, pids: &[u32]) -> (Duration, Duration) {
    let n = targets.len();
    server
        .call("debug_attach", json!({"targets": targets}))
        .expect_ok();
    let cpu = || pids.iter().map(|p| cpu_time(*p)).sum::<Duration>();
    let (started, cpu0) = (Instant::now(), cpu());
    let armed = server
        .call("debug_set_stop", charge_stop("amount < 0"))
        .expect_ok();
    let took = started.elapsed();
    let spent = cpu().saturating_sub(cpu0);
    assert!(
        armed.text.contains(&format!("{n} of {n} members answered")),
        "{}",
        armed.text
    );
    server.call("debug_disconnect", json!({})).expect_ok();
    (took, spent)
}

/// The CPU time process `pid` has used, all its threads (each thread's
/// `schedstat`, in ns).
fn cpu_time(pid: u32) -> Duration {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("the process's threads");
    let ns: u64 = tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum();
    Duration::from_nanos(ns)
}

#[test]
fn group_of_eight_arms_a_probe() {
    let jvms: Vec<Jvm> = (0..8).map(|_| replica("calm", false)).collect();
    let server = server();
    let mut pids: Vec<u32> = jvms.iter().map(Jvm::pid).collect();
    pids.push(server.pid());
    let one = arm_group(&server, vec![target(&jvms[0])], &[pids[0], server.pid()]);
    // The first JVM was released: it listens again on a new port.
    let again = jvms[0].listening_port(2, WAIT);
    let mut targets = vec![format!("127.0.0.1:{again}")];
    targets.extend(jvms[1..].iter().map(target));
    let eight = arm_group(&server, targets, &pids);
    // The figures docs/PERFORMANCE.md quotes.
    #[allow(clippy::print_stderr)]
    {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        eprintln!(
            "arming a probe: group of 1 {:.0} ms ({:.0} ms of CPU, JVM and server), group of 8 \
             {:.0} ms ({:.0} ms of CPU)",
            ms(one.0),
            ms(one.1),
            ms(eight.0),
            ms(eight.1)
        );
    }
}

/// A group call is one trace: the tool's span, a `group <tool>` span
/// under it, and one `member …` span per member holding that member's
/// JDWP round trips.
#[test]
fn group_call_is_one_trace_with_a_span_per_member() {
    use crate::support::otlp::OtlpReceiver;
    use crate::telemetry::{children_of, descendants_of, server_with, stop};
    let receiver = OtlpReceiver::start();
    let a = replica("calm", false);
    let b = replica("calm", true);
    let endpoint = receiver.endpoint();
    let server = server_with(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
    ]);
    attach_group(&server, &[&a, &b]);
    server.call("debug_thread_dump", json!({})).expect_ok();
    stop(&server, Duration::from_secs(20));
    let spans = receiver.wait_for(Duration::from_secs(20), "the group call's spans", |spans| {
        spans.iter().any(|s| s.name == "group debug_thread_dump")
            && spans
                .iter()
                .filter(|s| s.name.starts_with("member "))
                .count()
                >= 2
    });
    let root = spans
        .iter()
        .find(|s| s.is_root() && s.name == "mcp.tool debug_thread_dump")
        .expect("the tool's root span");
    let group = children_of(&spans, root)
        .into_iter()
        .find(|s| s.name == "group debug_thread_dump")
        .expect("the group span under the tool's");
    let members = children_of(&spans, group);
    assert_eq!(members.len(), 2, "{members:?}");
    for jvm in [&a, &b] {
        let member = members
            .iter()
            .find(|m| m.name.starts_with("member s") && m.name.ends_with(&label(jvm)))
            .unwrap_or_else(|| panic!("no member span for {}: {members:?}", label(jvm)));
        assert!(
            descendants_of(&spans, member)
                .iter()
                .any(|s| s.name.starts_with("jdwp ")),
            "{} has its round trips",
            member.name
        );
    }
}
