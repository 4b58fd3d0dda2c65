//! Discovery and diagnosis against real JVMs through the real binary: the
//! local JVMs each in their state (one listening, one waiting for its
//! debugger — which must still be waiting afterwards — one without JDWP,
//! one of ours, one whose argv names another host), secrets masked, the
//! probe at a port that is not JDWP, the three-block report, resources
//! and prompts over stdio, the causes of a silent stop point, and a JVM
//! killed during a long call. Tests run in parallel with others that start
//! JVMs, so every assertion is about this test's own pids.

mod options;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::java::{Jvm, JvmOpts, line_of};
use crate::support::mcp::Server;
use crate::support::poll_until_msg;

const WAIT: Duration = Duration::from_secs(15);

fn server() -> Server {
    let server = Server::spawn();
    server.initialize();
    server
}

/// The listed JVM with this pid.
fn by_pid(listing: &Value, pid: u32) -> Value {
    listing["jvms"]
        .as_array()
        .and_then(|js| js.iter().find(|j| j["pid"] == pid))
        .cloned()
        .unwrap_or_else(|| panic!("pid {pid} not listed: {listing}"))
}

/// One JVM of each kind discovery tells apart.
struct Kinds {
    listening: Jvm,
    waiting: Jvm,
    plain: Jvm,
    remote: Jvm,
    fixed: Jvm,
    ours: Jvm,
}

fn one_jvm_of_each_kind() -> Kinds {
    let listening = Jvm::start(
        "Ticker",
        JvmOpts {
            jvm_args: vec!["-Dapi.token=s3cret".into()],
            ..JvmOpts::default()
        },
    );
    let waiting = Jvm::start(
        "Ticker",
        JvmOpts {
            suspend: true,
            ..JvmOpts::default()
        },
    );
    let plain = Jvm::start(
        "Ticker",
        JvmOpts {
            no_jdwp: true,
            ..JvmOpts::default()
        },
    );
    // Its agent waits for an exception that never comes, so it names a
    // remote address without ever binding it.
    let remote = Jvm::start(
        "Ticker",
        JvmOpts {
            no_jdwp: true,
            jvm_args: vec![
                "-agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=192.0.2.1:5005,onthrow=java.lang.NoSuchFieldError,launch=/bin/true".into(),
            ],
            ..JvmOpts::default()
        },
    );
    // A fixed port: its own listening socket tells it listens.
    let fixed_port = crate::support::free_port();
    let fixed = Jvm::start(
        "Ticker",
        JvmOpts {
            no_jdwp: true,
            jvm_args: vec![format!(
                "-agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=127.0.0.1:{fixed_port}"
            )],
            ..JvmOpts::default()
        },
    );
    let ours = Jvm::start("Ticker", JvmOpts::default());
    Kinds {
        listening,
        waiting,
        plain,
        remote,
        fixed,
        ours,
    }
}

#[test]
fn each_local_jvm_is_listed_in_its_state_and_a_waiting_one_keeps_waiting() {
    let k = one_jvm_of_each_kind();
    let server = server();
    server
        .call("debug_attach", json!({"port": k.ours.port()}))
        .expect_ok();

    let reply = server.call("debug_list_jvms", json!({})).expect_ok();
    let listing = reply.json();
    let state = |jvm: &Jvm| by_pid(&listing, jvm.pid())["state"].clone();
    assert_eq!(state(&k.listening), "LISTENING", "{}", reply.text);
    assert_eq!(state(&k.waiting), "WAITING_FOR_DEBUGGER", "{}", reply.text);
    assert_eq!(state(&k.plain), "NOT_PROBED", "{}", reply.text);
    assert_eq!(state(&k.ours), "CONNECTED_TO_US", "{}", reply.text);
    let fixed = by_pid(&listing, k.fixed.pid());
    assert_eq!(fixed["state"], "LISTENING", "{}", reply.text);
    assert!(
        fixed["remedy"]
            .as_str()
            .unwrap_or("")
            .contains("not dialled"),
        "{fixed}"
    );
    let far = by_pid(&listing, k.remote.pid());
    assert_eq!(far["state"], "NOT_PROBED", "{far}");
    assert!(
        far["remedy"]
            .as_str()
            .unwrap_or("")
            .contains("never dialled"),
        "{far}"
    );
    assert_eq!(
        by_pid(&listing, k.listening.pid())["jdwp"]["port"],
        k.listening.port(),
        "{}",
        reply.text
    );
    assert!(by_pid(&listing, k.plain.pid())["jdwp"].is_null());
    assert_eq!(by_pid(&listing, k.plain.pid())["main"], "Ticker");
    let home = by_pid(&listing, k.plain.pid())["java_home"].clone();
    assert!(home.as_str().is_some_and(|h| !h.is_empty()), "{home}");

    // Secrets never leave the server, in text or data.
    assert!(!reply.text.contains("s3cret"), "{}", reply.text);
    assert!(!listing.to_string().contains("s3cret"));
    assert!(reply.text.contains("-Dapi.token=****"), "{}", reply.text);

    // Asked explicitly, the waiting JVM's port is still not dialled.
    let probe = server
        .call(
            "debug_list_jvms",
            json!({"probe": format!("127.0.0.1:{}", k.waiting.port())}),
        )
        .expect_ok();
    assert_eq!(
        probe.json()["probe"]["state"],
        "WAITING_FOR_DEBUGGER",
        "{}",
        probe.text
    );
    let report = server.call("debug_diagnose", json!({})).expect_ok();
    for block in [
        "== this server",
        "== sessions",
        "== local JVMs",
        "s1 127.0.0.1:",
    ] {
        assert!(
            report.text.contains(block),
            "{block} missing:\n{}",
            report.text
        );
    }
    assert!(!report.text.contains("s3cret"));

    // Still waiting: its main has not run, and it takes a debugger.
    assert!(k.waiting.is_alive());
    assert!(
        !k.waiting
            .lines()
            .iter()
            .any(|l| l.contains("ticker started")),
        "discovery released the waiting JVM: {:?}",
        k.waiting.lines()
    );
    server
        .call("debug_attach", json!({"port": k.waiting.port()}))
        .expect_ok();
    assert!(
        !k.waiting
            .lines()
            .iter()
            .any(|l| l.contains("ticker started"))
    );
}

/// A tiny HTTP server: answers 400 to whatever it is sent.
fn http_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let mut buf = [0u8; 64];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
        }
    });
    port
}

#[test]
fn a_probe_reads_not_jdwp_at_an_http_port_and_never_dials_another_host() {
    let server = server();
    let port = http_server();
    let started = Instant::now();
    let reply = server
        .call(
            "debug_list_jvms",
            json!({"probe": format!("127.0.0.1:{port}")}),
        )
        .expect_ok();
    let probe = reply.json()["probe"].clone();
    assert_eq!(probe["state"], "UNREACHABLE", "{}", reply.text);
    assert!(
        probe["remedy"].as_str().unwrap_or("").contains("not JDWP"),
        "{probe}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );

    // A silent listener: the handshake gets nothing back within its budget.
    let silent = TcpListener::bind("127.0.0.1:0").expect("bind");
    let silent_port = silent.local_addr().expect("addr").port();
    let reply = server
        .call("debug_list_jvms", json!({"probe": silent_port.to_string()}))
        .expect_ok();
    assert_eq!(
        reply.json()["probe"]["state"],
        "UNREACHABLE",
        "{}",
        reply.text
    );
    assert!(
        reply.json()["probe"]["took_ms"]
            .as_u64()
            .unwrap_or(u64::MAX)
            < 2000
    );

    let reply = server
        .call("debug_list_jvms", json!({"probe": "192.0.2.1:5005"}))
        .expect_ok();
    let probe = reply.json()["probe"].clone();
    assert_eq!(probe["state"], "NOT_PROBED", "{}", reply.text);
    assert!(
        probe["took_ms"].as_u64().unwrap_or(u64::MAX) < 50,
        "{probe}"
    );
    let bad = server.call("debug_list_jvms", json!({"probe": "nope"}));
    assert!(bad.text.starts_with("[BAD_ARGUMENT]"), "{}", bad.text);
}

#[test]
fn resources_prompts_and_instructions_over_stdio() {
    let server = Server::spawn();
    let init = server.initialize();
    let instructions = init["instructions"].as_str().unwrap_or("");
    assert!(instructions.contains("debug_list_jvms"), "{init}");
    assert!(
        init["capabilities"]["resources"]["subscribe"] == true,
        "{init}"
    );

    let list = server
        .request("resources/list", json!({}))
        .expect("resources/list");
    let uris: Vec<&str> = list["resources"]
        .as_array()
        .map(|r| r.iter().filter_map(|x| x["uri"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(
        uris,
        vec![
            "jdwp://jvms",
            "jdwp://diagnose",
            "jdwp://vitals",
            "jdwp://guide"
        ],
        "{list}"
    );
    let read = |uri: &str| {
        let r = server
            .request("resources/read", json!({"uri": uri}))
            .unwrap_or_else(|e| panic!("{uri}: {e}"));
        r["contents"][0]["text"].as_str().unwrap_or("").to_string()
    };
    assert!(read("jdwp://jvms").contains("local JVM"));
    let report = read("jdwp://diagnose");
    for block in ["== this server", "== sessions\nnone", "== local JVMs"] {
        assert!(report.contains(block), "{block}:\n{report}");
    }
    assert!(
        server
            .request("resources/read", json!({"uri": "jdwp://nope"}))
            .is_err()
    );
    // A tool's guide holds what its description has no room for, and its arguments.
    let guide = read("jdwp://guide/debug_set_stop");
    assert!(
        guide.starts_with("## `debug_set_stop`") && guide.contains("| `kind` |"),
        "{guide}"
    );
    assert!(read("jdwp://guide").contains("## `debug_attach`"));
    assert!(
        server
            .request("resources/read", json!({"uri": "jdwp://guide/debug_nope"}))
            .is_err()
    );

    let prompts = server
        .request("prompts/list", json!({}))
        .expect("prompts/list");
    assert_eq!(prompts["prompts"][0]["name"], "investigate", "{prompts}");
    let got = server
        .request(
            "prompts/get",
            json!({"name": "investigate", "arguments": {"problem": "slow orders", "port": "5005"}}),
        )
        .expect("prompts/get");
    let text = got["messages"][0]["content"]["text"].as_str().unwrap_or("");
    assert!(
        text.contains("slow orders") && text.contains("port: 5005"),
        "{got}"
    );
    assert!(
        server
            .request("prompts/get", json!({"name": "nope"}))
            .is_err()
    );

    // A subscriber hears of a new session.
    server
        .request("resources/subscribe", json!({"uri": "jdwp://diagnose"}))
        .expect("subscribe");
    let jvm = Jvm::start("Ticker", JvmOpts::default());
    server
        .call("debug_attach", json!({"port": jvm.port()}))
        .expect_ok();
    server.wait_for_notification(
        |n| {
            n["method"] == "notifications/resources/updated"
                && n["params"]["uri"] == "jdwp://diagnose"
        },
        Duration::from_secs(5),
    );
}

fn causes(server: &Server, id: &str) -> (Vec<String>, String) {
    let r = server
        .call("debug_diagnose", json!({"stop_point": id}))
        .expect_ok();
    // Each cause is a line "- [CODE] why".
    let causes = r
        .text
        .lines()
        .filter_map(|l| l.strip_prefix("- ["))
        .filter_map(|l| l.split_once(']').map(|(code, _)| code.to_string()))
        .collect();
    (causes, r.text)
}

fn set(server: &Server, args: Value) -> String {
    let mut args = args;
    args["kind"] = json!("line");
    let r = server.call("debug_set_stop", args).expect_ok();
    // The reply starts with the new stop point's id.
    r.text
        .split_whitespace()
        .next()
        .filter(|id| id.starts_with("bp_"))
        .unwrap_or_else(|| panic!("no id: {}", r.text))
        .to_string()
}

#[test]
fn a_silent_stop_point_is_explained_by_its_cause() {
    let trigger = tempfile::Builder::new()
        .prefix("discover-and-diagnose-")
        .tempdir()
        .expect("tempdir");
    let flag = trigger.path().join("load-late");
    let jvm = Jvm::start(
        "Silent",
        JvmOpts {
            args: vec![flag.display().to_string()],
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("silent ready", WAIT);
    let server = server();
    server
        .call("debug_attach", json!({"port": jvm.port()}))
        .expect_ok();
    let never = set(
        &server,
        json!({"class_pattern": "SilentNever", "line": line_of("Silent.java", "never-code"), "trace": true}),
    );
    let late = set(
        &server,
        json!({"class_pattern": "SilentLate", "line": line_of("Silent.java", "late-comment"), "trace": true}),
    );
    let step = line_of("Silent.java", "step-body");
    let cond = set(
        &server,
        json!({"class_pattern": "Silent", "line": step, "trace": true, "condition": "n < 0"}),
    );
    let threads = server.call("debug_list_threads", json!({})).expect_ok();
    let main_id = crate::support::text::threads(&threads.text)
        .into_iter()
        .find(|t| t.name == "main")
        .map(|t| t.id)
        .unwrap_or_else(|| panic!("no main thread: {}", threads.text));
    let filtered = set(
        &server,
        json!({"class_pattern": "Silent", "line": step, "trace": true, "thread_id": main_id}),
    );

    let (c, text) = causes(&server, &never);
    assert_eq!(c, vec!["CLASS_NOT_LOADED"], "{text}");
    let (c, text) = causes(&server, &filtered);
    assert_eq!(c, vec!["THREAD_FILTER"], "{text}");
    assert!(text.contains("\"main\""), "{text}");
    let text = poll_until_msg(WAIT, "the condition to be evaluated", || {
        let (c, text) = causes(&server, &cond);
        (c == vec!["CONDITION_NEVER_TRUE"] && text.contains("last values: n = ")).then_some(text)
    });
    assert!(text.contains("true 0"), "{text}");

    std::fs::write(&flag, b"go").expect("trigger");
    jvm.wait_for_line("late loaded", WAIT);
    let (c, text) = causes(&server, &late);
    assert_eq!(c, vec!["NO_CODE_AT_LINE"], "{text}");
    let code = line_of("Silent.java", "late-code");
    assert!(
        text.contains(&code.to_string()),
        "nearest line {code}: {text}"
    );
    let unknown = server.call("debug_diagnose", json!({"stop_point": "bp_999"}));
    assert!(
        unknown.text.starts_with("[UNKNOWN_STOP_POINT]"),
        "{}",
        unknown.text
    );
}

#[test]
fn a_jvm_killed_during_a_long_call_is_vm_gone_within_two_seconds() {
    let jvm = Jvm::start("Ticker", JvmOpts::default());
    jvm.wait_for_line("tick", WAIT);
    let server = std::sync::Arc::new(server());
    server
        .call("debug_attach", json!({"port": jvm.port()}))
        .expect_ok();
    let waiter = {
        let server = server.clone();
        std::thread::spawn(move || {
            server.call_with_timeout(
                "debug_wait_for_event",
                json!({"timeout_ms": 60000}),
                Duration::from_secs(30),
            )
        })
    };
    // The wait is in progress once the server has it; give it the JVM's
    // next tick to be sure it is parked on the event stream.
    let since = jvm.line_count();
    jvm.wait_for_line_since(since, |l| l.starts_with("tick"), WAIT);
    let killed = Instant::now();
    jvm.kill();
    let reply = waiter.join().expect("waiter");
    assert!(
        killed.elapsed() < Duration::from_secs(2),
        "{:?}",
        killed.elapsed()
    );
    assert!(
        reply.text.starts_with("[VM_GONE] debug_wait_for_event: "),
        "{}",
        reply.text
    );
    assert!(reply.text.contains("debug_diagnose"), "{}", reply.text);
}

#[test]
fn a_stop_point_on_stale_bytecode_says_so() {
    use crate::code::{Scratch, attached, build, dir, moved_line, started_swap, swap_source};
    let scratch = Scratch::new("diagnose");
    let moved = build(&scratch, "moved", &moved_line(&swap_source()), &["-g"]);
    let jvm = started_swap(JvmOpts::default());
    let server = attached(&jvm, json!({"class_roots": [dir(&moved)]}));
    let line = line_of("Swap.java", "swap-compute");
    let id = set(
        &server,
        json!({"class_pattern": "Swap", "line": line, "trace": true}),
    );
    let (c, text) = causes(&server, &id);
    assert!(c.contains(&"STALE_BYTECODE".to_string()), "{text}");
    assert!(text.contains("line tables differ"), "{text}");
}

/// `notifications/resources/updated` for `jdwp://jvms` when a JVM outside
/// our sessions starts and when it stops (before, only our own sessions'
/// changes were noticed).
#[test]
fn a_subscriber_hears_when_a_jvm_outside_our_sessions_starts_and_stops() {
    let server = server();
    server
        .request("resources/subscribe", json!({"uri": "jdwp://jvms"}))
        .expect("subscribe");
    let updates = || {
        server
            .notifications()
            .iter()
            .filter(|n| {
                n["method"] == "notifications/resources/updated"
                    && n["params"]["uri"] == "jdwp://jvms"
            })
            .count()
    };
    let listed = |pid: u32| {
        let r = server
            .request("resources/read", json!({"uri": "jdwp://jvms"}))
            .expect("read jdwp://jvms");
        r["contents"][0]["text"]
            .as_str()
            .unwrap_or("")
            .lines()
            .any(|l| l.starts_with(&format!("pid {pid} ")))
    };
    let before = updates();
    let plain = Jvm::start(
        "Ticker",
        JvmOpts {
            no_jdwp: true,
            ..JvmOpts::default()
        },
    );
    let pid = plain.pid();
    // Other tests start JVMs too: the update must come, and what it
    // announces must include this JVM.
    poll_until_msg(WAIT, "an update listing the new JVM", || {
        (updates() > before && listed(pid)).then_some(())
    });
    let before = updates();
    plain.kill();
    poll_until_msg(WAIT, "an update once the JVM is gone", || {
        (updates() > before && !listed(pid)).then_some(())
    });
}

/// Each secret shape on a real command line, and a part of what it must
/// read as once masked.
const SECRET_ARGS: &[(&str, &str, &str)] = &[
    (
        "-Ddb.url=jdbc:postgresql://app:pg-S3cr3t@db:5432/orders",
        "pg-S3cr3t",
        "jdbc:postgresql://app:****@db",
    ),
    (
        "-Dmongo.uri=mongodb://root:mongo-S3cr3t@mongo:27017/admin",
        "mongo-S3cr3t",
        "mongodb://root:****@mongo",
    ),
    (
        "-Dpg=postgres://u:postgres-S3cr3t@h/db",
        "postgres-S3cr3t",
        "postgres://u:****@h",
    ),
    (
        "-Drepo=https://alice:https-S3cr3t@git.example.com/r.git",
        "https-S3cr3t",
        "https://alice:****@git",
    ),
    ("-Dpwd=pwd-S3cr3t", "pwd-S3cr3t", "-Dpwd=****"),
    ("-DAPI_KEY=k1,key2-S3cr3t", "key2-S3cr3t", "-DAPI_KEY=****"),
    (
        "-Dssl.private.key=key-S3cr3t",
        "key-S3cr3t",
        "-Dssl.private.key=****",
    ),
    (
        "-Dssl.passphrase=phrase-S3cr3t",
        "phrase-S3cr3t",
        "-Dssl.passphrase=****",
    ),
    (
        "-Dauth.header=Bearer bearer-S3cr3t",
        "bearer-S3cr3t",
        "-Dauth.header=Bearer ****",
    ),
];

#[test]
fn secrets_of_every_shape_are_masked_in_listings_reports_and_resources() {
    let jvm = Jvm::start(
        "Ticker",
        JvmOpts {
            jvm_args: SECRET_ARGS.iter().map(|(a, _, _)| a.to_string()).collect(),
            ..JvmOpts::default()
        },
    );
    let server = server();
    let listed = server.call("debug_list_jvms", json!({})).expect_ok();
    let data = by_pid(&listed.json(), jvm.pid()).to_string();
    let report = server.call("debug_diagnose", json!({})).expect_ok();
    let resources: Vec<String> = ["jdwp://jvms", "jdwp://diagnose"]
        .iter()
        .map(|uri| {
            server
                .request("resources/read", json!({"uri": uri}))
                .unwrap_or_else(|e| panic!("{uri}: {e}"))
                .to_string()
        })
        .collect();
    let mut seen = vec![
        ("debug_list_jvms text", listed.text.clone()),
        ("debug_list_jvms data", data),
        ("debug_diagnose", report.text.clone()),
    ];
    seen.extend(
        ["jdwp://jvms", "jdwp://diagnose"]
            .into_iter()
            .zip(resources),
    );
    for (arg, secret, masked) in SECRET_ARGS {
        for (place, text) in &seen {
            assert!(!text.contains(secret), "{arg} leaks in {place}:\n{text}");
        }
        // The text cuts a long command line; the data has all of it.
        assert!(seen[1].1.contains(masked), "{arg} reads as {masked}");
    }
}

/// Before the fix a JVM listening on 127.0.0.2 or `[::1]` was "nothing
/// listens there": discovery dialled 127.0.0.1 at its port, and so did a
/// probe of 127.0.0.2:P.
#[test]
fn a_jvm_listening_on_another_loopback_address_is_dialled_there() {
    let on = |host: &str| {
        let port = crate::support::free_port();
        let jvm = Jvm::start(
            "Ticker",
            JvmOpts {
                no_jdwp: true,
                jvm_args: vec![format!(
                    "-agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address={host}:{port}"
                )],
                ..JvmOpts::default()
            },
        );
        (jvm, port)
    };
    let (v4, v4_port) = on("127.0.0.2");
    let (v6, v6_port) = on("[::1]");
    let server = server();
    let reply = server.call("debug_list_jvms", json!({})).expect_ok();
    let listing = reply.json();
    for jvm in [&v4, &v6] {
        assert_eq!(
            by_pid(&listing, jvm.pid())["state"],
            "LISTENING",
            "{}",
            reply.text
        );
    }
    // Asked explicitly, each is dialled at the address it is bound to.
    for probe in [format!("127.0.0.2:{v4_port}"), format!("[::1]:{v6_port}")] {
        crate::support::poll_until_msg(WAIT, &format!("a probe of {probe} to handshake"), || {
            let reply = server
                .call("debug_list_jvms", json!({"probe": probe}))
                .expect_ok();
            (reply.json()["probe"]["state"] == "LISTENING").then_some(())
        });
    }
}
