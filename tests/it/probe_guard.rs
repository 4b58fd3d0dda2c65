//! A probe is guarded like a wire stop point and leaves nothing behind
//! (JDK 17 and Temurin 25, over MCP): a probe the JVM refuses, on the
//! agent's word or on the overhead guard's switch, leaves no helper that
//! a later attach would "restore" over a reload, and clearing a probe
//! whose class another tool redefined meanwhile leaves that class alone;
//! a condition that keeps
//! throwing in the JVM disables its probe, with the last error listed; a
//! probe that costs the application more than its budget is paused and
//! its class restored; and a probe whose lease lapsed while jvmscope was
//! stopped records again once jvmscope runs, but not while the agent
//! holds a thread.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::java::{Jvm, JvmOpts, fixtures, javac, line_of};
use crate::support::mcp::{Server, ToolReply};
use crate::support::poll_until_msg;

const WAIT: Duration = Duration::from_secs(30);
const REFUSED: &str = "ProbeRefused";
const LEDGER: &str = "ProbeLoad$Ledger";

fn attach(port: u16) -> (Server, ToolReply) {
    let server = Server::spawn();
    server.initialize();
    let reply = server
        .call(
            "debug_attach",
            json!({"port": port, "class_roots": [fixtures().display().to_string()]}),
        )
        .expect_ok();
    (server, reply)
}

fn first_id(reply: &ToolReply) -> String {
    reply.json()["outcomes"][0]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no id in {}", reply.text))
        .to_string()
}

fn listing(server: &Server) -> String {
    server
        .call("debug_list_stop_points", json!({}))
        .expect_ok()
        .text
}

/// ProbeRefused.java with version() answering `version`, compiled into
/// `out` with the debug information `g` asks for.
fn compile(out: &Path, version: &str, g: &str) {
    let src = out.join("src");
    std::fs::create_dir_all(&src).expect("src dir");
    let text = std::fs::read_to_string(crate::support::java::source_path("ProbeRefused.java"))
        .expect("fixture source");
    assert!(text.contains("return \"v1\";"));
    std::fs::write(
        src.join("ProbeRefused.java"),
        text.replace("return \"v1\";", &format!("return \"{version}\";")),
    )
    .expect("write source");
    let status = std::process::Command::new(javac())
        .args([g, "--release", "17", "-encoding", "UTF-8", "-d"])
        .arg(out)
        .arg(src.join("ProbeRefused.java"))
        .status()
        .expect("run javac");
    assert!(status.success());
}

fn a_refused_probe_leaves_nothing_a_later_attach_restores(java_home: PathBuf) {
    let jvm = Jvm::start(
        REFUSED,
        JvmOpts {
            java_home: Some(java_home),
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("probe refused started", WAIT);
    // The class roots hold the class the JVM runs, marked as using preview
    // features (minor version 0xFFFF), which a JVM run without
    // --enable-preview refuses: its code matches, so a probe is planned
    // on it, its helper is defined, and the JVM refuses the redefinition.
    let scratch = crate::code::Scratch::new("probe-refused");
    let roots = scratch.path("roots");
    std::fs::create_dir_all(&roots).expect("roots");
    let mut bytes = std::fs::read(fixtures().join("ProbeRefused.class")).expect("class file");
    bytes[4..6].copy_from_slice(&0xFFFFu16.to_be_bytes());
    std::fs::write(roots.join("ProbeRefused.class"), bytes).expect("write class");
    let server = Server::spawn();
    server.initialize();
    server
        .call(
            "debug_attach",
            json!({"port": jvm.port(), "class_roots": [roots.display().to_string()]}),
        )
        .expect_ok();
    let line = line_of("ProbeRefused.java", "after-catch");
    // Asked for a probe: the JVM's verifier refuses the instrumented class.
    let refused = server.call(
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": REFUSED, "line": line, "trace": true,
               "engine": "probe"}),
    );
    assert!(refused.is_error, "{}", refused.text);
    assert!(refused.text.contains("the JVM refused"), "{}", refused.text);
    // On the wire, the guard pauses it and tries a probe, which the JVM
    // refuses again: it stays paused.
    let wire = server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": REFUSED, "line": line, "trace": true,
                   "condition": "n > 0", "trace_max_hits": 0, "max_overhead": 1}),
        )
        .expect_ok();
    let id = first_id(&wire);
    let paused = poll_until_msg(WAIT, "the guard to pause the wire stop point", || {
        let l = listing(&server);
        l.contains("PAUSED").then_some(l)
    });
    assert!(!paused.contains("engine: probe"), "{paused}");
    server
        .call(
            "debug_update_stop_point",
            json!({"kind": "clear", "id": id}),
        )
        .expect_ok();

    // The fix goes in; the session leaves cleanly.
    let out = scratch.path("classes");
    compile(&out, "v2", "-g");
    let since = jvm.line_count();
    server
        .call(
            "debug_reload_class",
            json!({"class_name": REFUSED, "class_roots": [out.display().to_string()]}),
        )
        .expect_ok();
    jvm.wait_for_line_since(since, |l| l.starts_with("v2 "), WAIT);
    server.call("debug_disconnect", json!({})).expect_ok();

    // The next jvmscope finds no trace of either probe, and v2 keeps
    // running.
    let (again, reply) = attach(jvm.listening_port(2, WAIT));
    assert!(!reply.text.contains(REFUSED), "{}", reply.text);
    let since = jvm.line_count();
    let (at, _) = jvm.wait_for_line_since(since, |l| l.starts_with("v2 "), WAIT);
    let after: Vec<String> = jvm.lines().into_iter().skip(at).collect();
    assert!(
        after.iter().all(|l| !l.starts_with("v1 ")),
        "v1 came back: {after:?}"
    );
    again.call("debug_disconnect", json!({})).expect_ok();
    assert!(jvm.is_alive());
}

/// Another debugger's redefinition: `bytes` for ProbeRefused, sent over a
/// JDWP connection of the test's own, which then leaves.
fn redefine_behind_our_back(port: u16, bytes: Vec<u8>) {
    use jvmscope::actors::ConnectionConfig;
    use jvmscope::actors::testing::{Connection, dial};
    use jvmscope::jdwp::virtual_machine::{ClassDef, ClassesBySignature, Dispose, RedefineClasses};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let stream = dial("127.0.0.1", port, WAIT).await.expect("dial");
        let conn = Connection::spawn_unlinked(stream, ConnectionConfig::new("127.0.0.1", port))
            .await
            .expect("connection");
        let found = conn
            .send(&ClassesBySignature {
                signature: format!("L{REFUSED};"),
            })
            .await
            .expect("the class");
        let class = found.first().expect("loaded").ref_type.id;
        conn.send(&RedefineClasses {
            classes: vec![ClassDef {
                ref_type: class,
                classfile: bytes,
            }],
        })
        .await
        .expect("redefine");
        conn.send(&Dispose).await.expect("dispose");
    });
}

/// ProbeRefused running v1, a session attached to it, and a probe armed
/// on its line after the empty catch (the stop point's id).
fn v1_probed(java_home: PathBuf) -> (Jvm, Server, String) {
    let jvm = Jvm::start(
        REFUSED,
        JvmOpts {
            java_home: Some(java_home),
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("probe refused started", WAIT);
    let (server, _) = attach(jvm.port());
    let armed = server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": REFUSED,
                   "line": line_of("ProbeRefused.java", "after-catch"), "engine": "probe"}),
        )
        .expect_ok();
    assert!(armed.text.contains("PROBE:"), "{}", armed.text);
    let id = first_id(&armed);
    (jvm, server, id)
}

fn a_leftover_whose_class_changed_since_is_left_alone(java_home: PathBuf) {
    let (jvm, doomed, _) = v1_probed(java_home);
    // Killed: the probe stays in, its helper holding v1.
    doomed.kill();

    // Another tool puts v2 in meanwhile.
    let scratch = crate::code::Scratch::new("probe-changed");
    let out = scratch.path("classes");
    compile(&out, "v2", "-g");
    let since = jvm.line_count();
    redefine_behind_our_back(
        jvm.listening_port(2, WAIT),
        std::fs::read(out.join("ProbeRefused.class")).expect("v2"),
    );
    jvm.wait_for_line_since(since, |l| l.starts_with("v2 "), WAIT);

    // The next jvmscope leaves v2 alone and says why.
    let (next, reply) = attach(jvm.listening_port(3, WAIT));
    assert!(
        reply.text.contains(&format!("LEFT ALONE: {REFUSED}")),
        "{}",
        reply.text
    );
    assert!(!reply.text.contains("RESTORED"), "{}", reply.text);
    let since = jvm.line_count();
    let (at, _) = jvm.wait_for_line_since(since, |l| l.starts_with("v2 "), WAIT);
    let after: Vec<String> = jvm.lines().into_iter().skip(at).collect();
    assert!(
        after.iter().all(|l| !l.starts_with("v1 ")),
        "v1 came back: {after:?}"
    );
    next.call("debug_disconnect", json!({})).expect_ok();
}

/// A jar holding the `RedefineAgent` fixture as its agent, built in
/// `dir` with the `jar` of `java_home`.
fn agent_jar(java_home: &Path, dir: &Path) -> PathBuf {
    let manifest = dir.join("agent.mf");
    std::fs::write(
        &manifest,
        "Agent-Class: RedefineAgent\nCan-Redefine-Classes: true\n",
    )
    .expect("manifest");
    let jar = dir.join("agent.jar");
    let status = std::process::Command::new(java_home.join("bin/jar"))
        .arg("cfm")
        .args([&jar, &manifest])
        .arg("-C")
        .arg(fixtures())
        .arg("RedefineAgent.class")
        .status()
        .expect("run jar");
    assert!(status.success());
    jar
}

/// A probe is cleared after a tool inside the JVM (a Java agent, loaded
/// through the attach socket while jvmscope stays attached) redefined its
/// class: the clear leaves the class as it runs and says so, rather than
/// putting back the bytes from before.
fn a_cleared_probe_leaves_a_class_changed_since_alone(java_home: PathBuf) {
    let (jvm, server, id) = v1_probed(java_home.clone());

    let scratch = crate::code::Scratch::new("probe-agent");
    let out = scratch.path("classes");
    compile(&out, "v2", "-g");
    let jar = agent_jar(&java_home, &scratch.path(""));
    let since = jvm.line_count();
    let loaded = std::process::Command::new(java_home.join("bin/jcmd"))
        .arg(jvm.pid().to_string())
        .arg("JVMTI.agent_load")
        .arg(&jar)
        .arg(format!(
            "{REFUSED},{}",
            out.join("ProbeRefused.class").display()
        ))
        .output()
        .expect("run jcmd");
    assert!(loaded.status.success(), "{loaded:?}");
    jvm.wait_for_line_since(since, |l| l == "redefined by agent ProbeRefused", WAIT);
    jvm.wait_for_line_since(since, |l| l.starts_with("v2 "), WAIT);

    let cleared = server
        .call(
            "debug_update_stop_point",
            json!({"kind": "clear", "id": id}),
        )
        .expect_ok();
    assert!(
        cleared.text.contains(&format!("LEFT ALONE: {REFUSED}")),
        "{}",
        cleared.text
    );
    let since = jvm.line_count();
    let (at, _) = jvm.wait_for_line_since(since, |l| l.starts_with("v2 "), WAIT);
    let (more, _) = jvm.wait_for_line_since(at + 1, |l| l.starts_with("v2 "), WAIT);
    let after: Vec<String> = jvm
        .lines()
        .into_iter()
        .skip(at)
        .take(more + 1 - at)
        .collect();
    assert!(
        after.iter().all(|l| !l.starts_with("v1 ")),
        "v1 came back: {after:?}"
    );
    server.call("debug_disconnect", json!({})).expect_ok();
}

fn load(java_home: Option<PathBuf>) -> Jvm {
    let jvm = Jvm::start(
        "ProbeLoad",
        JvmOpts {
            args: vec!["2".into()],
            java_home,
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("probe load started", WAIT);
    jvm
}

fn line_probe(server: &Server, extra: Value) -> String {
    let mut args = json!({"kind": "line", "class_pattern": LEDGER,
        "line": line_of("ProbeLoad.java", "probe-line"), "trace": true,
        "engine": "probe", "trace_max_hits": 0});
    if let (Some(a), Some(e)) = (args.as_object_mut(), extra.as_object()) {
        a.extend(e.clone());
    }
    let armed = server.call("debug_set_stop", args).expect_ok();
    assert!(armed.text.contains("PROBE:"), "{}", armed.text);
    first_id(&armed)
}

fn a_probe_condition_that_keeps_failing_disables_the_probe(java_home: PathBuf) {
    let jvm = load(Some(java_home));
    let (server, _) = attach(jvm.port());
    line_probe(
        &server,
        json!({"condition": "amountCents / 0 > 1", "max_overhead": 0}),
    );
    let l = poll_until_msg(WAIT, "the failing probe to disable itself", || {
        let l = listing(&server);
        l.contains("DISABLED by itself").then_some(l)
    });
    assert!(
        l.contains("last error: java.lang.ArithmeticException"),
        "{l}"
    );
    // The calls that threw were sampled for their cost like any other.
    assert!(!crate::probes::instrumented(&server, LEDGER), "{l}");
}

fn a_costly_probe_is_paused_by_the_overhead_guard(java_home: PathBuf) {
    let jvm = load(Some(java_home));
    let (server, _) = attach(jvm.port());
    line_probe(&server, json!({"max_overhead": 1}));
    let l = poll_until_msg(WAIT, "the guard to pause the probe", || {
        let l = listing(&server);
        l.contains("PAUSED (overhead budget)").then_some(l)
    });
    assert!(
        l.contains("PAUSED by the overhead guard: its holds took"),
        "{l}"
    );
    assert!(!crate::probes::instrumented(&server, LEDGER), "{l}");
}

/// The sequence number of stop point `id`'s newest snapshot (0 for none).
fn last_seq(server: &Server, id: &str) -> u64 {
    server
        .call("debug_get_traces", json!({"bp_id": id, "limit": 1}))
        .expect_ok()
        .json()["last_seq"]
        .as_u64()
        .unwrap_or(0)
}

/// Sends `sig` (`-STOP`, `-CONT`) to the jvmscope process of `server`.
fn signal(server: &Server, sig: &str) {
    let status = std::process::Command::new("kill")
        .args([sig, &server.pid().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
}

/// ProbeLoad with a traced line probe on its rare bad call (no overhead
/// budget), once the probe has recorded a first hit: the JVM, the server
/// and the stop point's id.
fn probe_hit(java_home: PathBuf) -> (Jvm, Server, String) {
    let jvm = load(Some(java_home));
    let (server, _) = attach(jvm.port());
    let id = line_probe(
        &server,
        json!({"condition": "amountCents < 0", "max_overhead": 0}),
    );
    poll_until_msg(WAIT, "a first hit", || {
        (last_seq(&server, &id) > 0).then_some(())
    });
    (jvm, server, id)
}

fn a_probe_whose_lease_lapsed_records_again(java_home: PathBuf) {
    let (_jvm, server, id) = probe_hit(java_home);
    let seq = |server: &Server| last_seq(server, &id);
    let signal = |sig: &str| signal(&server, sig);
    signal("-STOP");
    // The lease is wall time with nobody to ask while jvmscope is stopped:
    // past its 2 s the helper switches the probe off.
    std::thread::sleep(Duration::from_secs(4));
    signal("-CONT");
    let l = poll_until_msg(WAIT, "the drain to see the lapse", || {
        let l = listing(&server);
        l.contains("its lease lapsed").then_some(l)
    });
    let before = seq(&server);
    poll_until_msg(WAIT, "hits after the lapse", || {
        (seq(&server) > before).then_some(())
    });
    let l2 = listing(&server);
    assert!(!l2.contains("PAUSED"), "{l}\n{l2}");
}

/// A lease that lapses while the agent holds a thread is not re-armed
/// until nothing is held: re-arming runs the helper's `init` as an
/// invocation, which lets the JVM run and, on a thread an event holds,
/// would outlast a resume the agent sends meanwhile. The listing says the
/// probe waits and why; once the thread is resumed the probe records
/// again.
fn a_lapsed_lease_waits_while_a_thread_is_held(java_home: PathBuf) {
    let (_jvm, server, id) = probe_hit(java_home);
    let seq = |server: &Server| last_seq(server, &id);
    let listed = server
        .call("debug_list_threads", json!({"limit": 1000}))
        .expect_ok();
    let main = crate::support::text::threads(&listed.text)
        .into_iter()
        .find(|t| t.name == "main")
        .unwrap_or_else(|| panic!("main: {}", listed.text))
        .id;
    let thread = |kind: &str| {
        server
            .call("debug_thread", json!({"kind": kind, "thread_id": main}))
            .expect_ok()
    };
    thread("suspend");
    let signal = |sig: &str| signal(&server, sig);
    signal("-STOP");
    std::thread::sleep(Duration::from_secs(4));
    signal("-CONT");
    let l = poll_until_msg(WAIT, "the drain to see the lapse", || {
        let l = listing(&server);
        l.contains("its lease lapsed").then_some(l)
    });
    assert!(
        l.contains("PAUSED (lease lapsed)") && l.contains("once this session holds no thread"),
        "{l}"
    );
    thread("resume");
    let before = seq(&server);
    poll_until_msg(WAIT, "hits once nothing is held", || {
        (seq(&server) > before).then_some(())
    });
    let l2 = listing(&server);
    assert!(!l2.contains("PAUSED"), "{l}\n{l2}");
}

crate::support::on_both_jdks! {
    a_lapsed_lease_waits_while_a_thread_is_held: a_lapsed_lease_waits_while_a_thread_is_held_jdk17,
        a_lapsed_lease_waits_while_a_thread_is_held_temurin25;
    a_refused_probe_leaves_nothing_a_later_attach_restores: a_refused_probe_leaves_nothing_a_later_attach_restores_jdk17,
        a_refused_probe_leaves_nothing_a_later_attach_restores_temurin25;
    a_leftover_whose_class_changed_since_is_left_alone: a_leftover_whose_class_changed_since_is_left_alone_jdk17,
        a_leftover_whose_class_changed_since_is_left_alone_temurin25;
    a_probe_condition_that_keeps_failing_disables_the_probe: a_probe_condition_that_keeps_failing_disables_the_probe_jdk17,
        a_probe_condition_that_keeps_failing_disables_the_probe_temurin25;
    a_costly_probe_is_paused_by_the_overhead_guard: a_costly_probe_is_paused_by_the_overhead_guard_jdk17,
        a_costly_probe_is_paused_by_the_overhead_guard_temurin25;
    a_probe_whose_lease_lapsed_records_again: a_probe_whose_lease_lapsed_records_again_jdk17,
        a_probe_whose_lease_lapsed_records_again_temurin25;
    a_cleared_probe_leaves_a_class_changed_since_alone: a_cleared_probe_leaves_a_class_changed_since_alone_jdk17,
        a_cleared_probe_leaves_a_class_changed_since_alone_temurin25;
}
