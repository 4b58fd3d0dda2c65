//! Launching JVMs through the real binary: a JVM that dies during start-up
//! is an error, not a SUSPENDED session; a held launch stops with its main
//! class loaded and nothing of it run; a launched JVM's output is read
//! with a cursor, per stream, bounded; an attached session has no output
//! to read.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::java::{Jvm, JvmOpts, fixtures, line_of};
use crate::support::mcp::Server;
use crate::support::poll_until_msg;

fn server() -> Server {
    let server = Server::spawn();
    server.initialize();
    server
}

fn sessions(server: &Server) -> Vec<Value> {
    let reply = server.call("debug_list_sessions", json!({})).expect_ok();
    reply.json()["sessions"]
        .as_array()
        .cloned()
        .expect("sessions array")
}

fn launch(server: &Server, main_class: &str, args: &[&str], suspend: bool) -> u32 {
    server
        .call(
            "debug_launch",
            json!({"main_class": main_class, "classpath": fixtures().display().to_string(),
                   "args": args, "suspend": suspend}),
        )
        .expect_ok();
    let listed = sessions(server);
    listed.last().and_then(|s| s["pid"].as_u64()).expect("pid") as u32
}

fn read_output(server: &Server, args: Value) -> String {
    server.call("debug_read_output", args).expect_ok().text
}

/// The number after `since=` in a read_output reply.
fn next_cursor(text: &str) -> u64 {
    text.rsplit("since=")
        .next()
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no cursor in {text}"))
}

/// Before the fix a held launch of a missing main class answered
/// SUSPENDED, and the agent learnt of the death at its next call.
#[test]
fn launching_a_missing_main_class_fails_with_the_exit_and_the_jvm_own_words() {
    let server = server();
    let reply = server
        .call(
            "debug_launch",
            json!({"main_class": "NoSuchMainClass", "classpath": fixtures().display().to_string()}),
        )
        .expect_tool_error();
    let text = &reply.text;
    assert!(text.starts_with("[LAUNCH_FAILED]"), "{text}");
    assert!(text.contains("exited during startup"), "{text}");
    assert!(text.contains("exit status: 1"), "{text}");
    assert!(
        text.contains("Could not find or load main class NoSuchMainClass"),
        "{text}"
    );
    assert!(!text.contains("SUSPENDED"), "{text}");
    assert!(text.contains("session s1 is DEAD"), "{text}");
    // No half-alive session: it is listed DEAD, with how the JVM ended.
    let listed = sessions(&server);
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["state"], "DEAD", "{listed:?}");
    assert!(!listed[0]["exit"].is_null(), "{listed:?}");
    let pid = listed[0]["pid"].as_u64().expect("pid");
    assert!(!PathBuf::from(format!("/proc/{pid}")).exists());
    // What it printed stays readable.
    let out = read_output(&server, json!({"stream": "stderr"}));
    assert!(out.contains("Could not find or load main class"), "{out}");
}

/// A held launch returns with the main class loaded and none of it run;
/// continue runs main.
#[test]
fn a_held_launch_stops_at_the_loaded_main_class_before_main_runs() {
    let server = server();
    let pid = launch(&server, "Ticker", &[], true);
    assert_eq!(sessions(&server)[0]["state"], "SUSPENDED");
    // The main class is loaded: its methods can be listed, a line stop
    // arms at once instead of being deferred.
    let stop = server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": "Ticker", "line": line_of("Ticker.java", "tick"), "trace": true}),
        )
        .expect_ok();
    assert!(!stop.text.contains("DEFERRED"), "{}", stop.text);
    let out = read_output(&server, json!({}));
    assert!(!out.contains("ticker started"), "main has not run: {out}");
    server.call("debug_continue", json!({})).expect_ok();
    poll_until_msg(Duration::from_secs(10), "main to print", || {
        read_output(&server, json!({}))
            .contains("ticker started")
            .then_some(())
    });
    let bye = server.call("debug_disconnect", json!({})).expect_ok();
    assert!(
        bye.text.contains(&format!("pid {pid} terminated")),
        "{}",
        bye.text
    );
}

/// A launched JVM that exits after running is reported with its exit and
/// last lines in `[VM_GONE]` and in the session list.
#[test]
fn a_launched_jvm_that_exits_is_reported_with_its_exit_and_last_output() {
    let server = server();
    launch(&server, "Chatter", &["5", "3"], true);
    server.call("debug_continue", json!({})).expect_ok();
    let listed = poll_until_msg(Duration::from_secs(10), "the session to be DEAD", || {
        let s = sessions(&server);
        (s[0]["state"] == "DEAD" && !s[0]["exit"].is_null()).then(|| s[0].clone())
    });
    assert!(
        listed["last_output"].to_string().contains("chatter done"),
        "{listed}"
    );
    let gone = server
        .call("debug_list_threads", json!({}))
        .expect_tool_error();
    assert!(gone.text.starts_with("[VM_GONE]"), "{}", gone.text);
    assert!(
        gone.text
            .contains("The launched JVM exited: exit status: 3"),
        "{}",
        gone.text
    );
    assert!(gone.text.contains("chatter done"), "{}", gone.text);
    assert!(gone.text.contains("debug_read_output"), "{}", gone.text);
    let text = server
        .call("debug_list_sessions", json!({}))
        .expect_ok()
        .text;
    assert!(text.contains("the launched JVM exited"), "{text}");
}

#[test]
fn read_output_follows_a_launched_jvm_with_a_cursor_and_per_stream() {
    let server = server();
    launch(&server, "Chatter", &["30"], false);
    poll_until_msg(Duration::from_secs(10), "the first ticks", || {
        read_output(&server, json!({"tail": 3}))
            .contains("chatter tick 2")
            .then_some(())
    });
    // Everything so far, numbered and tagged; the long line is cut.
    let all = read_output(&server, json!({"tail": 500}));
    assert!(all.contains("out| chatter out 1\n"), "{all}");
    assert!(all.contains("out| chatter out 30\n"), "{all}");
    assert!(all.contains("err| chatter err 20\n"), "{all}");
    assert!(all.contains("[+5904 bytes not kept]"), "{all}");
    assert!(all.contains("(running)"), "{all}");
    // One stream only.
    let err = read_output(&server, json!({"stream": "stderr", "tail": 500}));
    let err_lines: Vec<&str> = err.lines().filter(|l| l.contains("| ")).collect();
    assert_eq!(err_lines.len(), 3, "{err}");
    assert!(
        err_lines.iter().all(|l| l.contains("err| chatter err ")),
        "{err}"
    );
    // The tail, with what it left out.
    let tail = read_output(&server, json!({"tail": 2}));
    assert_eq!(
        tail.lines().filter(|l| l.contains("| ")).count(),
        2,
        "{tail}"
    );
    assert!(tail.contains("Not shown:"), "{tail}");
    // Following: only lines after the cursor, never one twice.
    let cursor = next_cursor(&tail);
    let newer = poll_until_msg(Duration::from_secs(10), "new lines", || {
        let t = read_output(&server, json!({"since": cursor}));
        t.contains("chatter tick").then_some(t)
    });
    let numbers: Vec<u64> = newer
        .lines()
        .filter(|l| l.contains("| "))
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect();
    assert!(!numbers.is_empty(), "{newer}");
    assert!(numbers.iter().all(|n| *n > cursor), "{cursor}: {newer}");
    assert!(!newer.contains("Dropped:"), "{newer}");
}

#[test]
fn read_output_says_what_the_bounded_buffer_dropped_after_the_jvm_exited() {
    let server = server();
    launch(&server, "Chatter", &["2500", "7"], false);
    let read = poll_until_msg(Duration::from_secs(15), "the JVM to exit", || {
        let t = read_output(&server, json!({"tail": 500}));
        t.contains("exited: exit status: 7").then_some(t)
    });
    // 2,500 stdout lines, 250 stderr lines, the long line, the agent's
    // banner and "chatter done": the buffer keeps the last 2,000.
    let written: u64 = read
        .split(" lines written")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{read}"));
    assert!(written >= 2753, "{read}");
    assert!(read.contains("chatter done"), "{read}");
    assert!(
        read.contains("Not shown: 1500 older matching lines"),
        "{read}"
    );
    assert!(
        read.contains(&format!(
            "Dropped: {} lines before line {} are gone",
            written - 2000,
            written - 1999
        )),
        "{read}"
    );
    // A cursor inside what was dropped says so.
    let late = read_output(&server, json!({"since": 10, "tail": 1}));
    assert!(
        late.contains(&format!("Dropped: {} lines", written - 2000 - 10)),
        "{late}"
    );
}

#[test]
fn read_output_of_an_attached_session_says_it_was_not_launched() {
    let jvm = Jvm::start("Ticker", JvmOpts::default());
    let server = server();
    server
        .call("debug_attach", json!({"port": jvm.port()}))
        .expect_ok();
    let reply = server
        .call("debug_read_output", json!({}))
        .expect_tool_error();
    assert!(reply.text.starts_with("[NOT_LAUNCHED]"), "{}", reply.text);
    assert!(
        reply.text.contains("attached, not launched"),
        "{}",
        reply.text
    );
    for bad in [json!({"tail": 0}), json!({"stream": "stdin"})] {
        let reply = server.call("debug_read_output", bad);
        assert!(reply.text.starts_with("[BAD_ARGUMENT]"), "{}", reply.text);
    }
}

/// A jar whose manifest names `main` (built with the JDK's `jar` tool
/// from the compiled fixtures), under a temp dir of this test.
fn jar_with_main(name: &str, main: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("jvmscope-launch-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let jar = dir.join(format!("{name}.jar"));
    let tool = crate::support::java::default_java_home().join("bin/jar");
    let status = std::process::Command::new(&tool)
        .arg("--create")
        .arg("--file")
        .arg(&jar)
        .arg("--main-class")
        .arg(main)
        .arg("-C")
        .arg(fixtures())
        .arg("Ticker.class")
        .status()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", tool.display()));
    assert!(status.success(), "jar failed");
    jar
}

/// A jar has no main class named in the call: the launch holds at the
/// first class outside the JDK, and a jar whose main class is missing
/// fails like a missing main class does.
#[test]
fn a_held_jar_launch_stops_at_its_main_class_and_a_broken_jar_fails() {
    let server = server();
    let good = jar_with_main("good", "Ticker");
    let reply = server
        .call("debug_launch", json!({"jar": good.display().to_string()}))
        .expect_ok();
    assert!(
        reply.text.contains("Held: the main class"),
        "{}",
        reply.text
    );
    assert_eq!(sessions(&server)[0]["state"], "SUSPENDED");
    let stop = server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": "Ticker", "line": line_of("Ticker.java", "tick"), "trace": true}),
        )
        .expect_ok();
    assert!(!stop.text.contains("DEFERRED"), "loaded: {}", stop.text);
    assert!(
        !read_output(&server, json!({})).contains("ticker started"),
        "main has not run"
    );
    server.call("debug_continue", json!({})).expect_ok();
    poll_until_msg(Duration::from_secs(10), "main to print", || {
        read_output(&server, json!({}))
            .contains("ticker started")
            .then_some(())
    });
    server.call("debug_disconnect", json!({})).expect_ok();

    let broken = jar_with_main("broken", "NoSuchMain");
    let failed = server
        .call("debug_launch", json!({"jar": broken.display().to_string()}))
        .expect_tool_error();
    assert!(
        failed.text.starts_with("[LAUNCH_FAILED]"),
        "{}",
        failed.text
    );
    assert!(failed.text.contains("exit status: 1"), "{}", failed.text);
    assert!(failed.text.contains("NoSuchMain"), "{}", failed.text);
    let _ = std::fs::remove_dir_all(good.parent().unwrap_or(&good));
}

/// A launch's secret arguments, masked in every reply, are in no log line
/// either, however verbose `RUST_LOG` is, and the report masks the
/// command line it shows.
#[test]
fn verbose_logs_and_the_report_never_carry_a_masked_launch_secret() {
    const SECRETS: [&str; 2] = ["launch-S3cr3t", "launch-T0ken"];
    let server = Server::spawn_with_env(&[("RUST_LOG", "trace")]);
    server.initialize();
    server
        .call(
            "debug_launch",
            json!({"main_class": "Ticker", "classpath": fixtures().display().to_string(),
                   "jvm_args": ["-Ddb.password=launch-S3cr3t", "-Dauth.header=Bearer launch-T0ken"],
                   "suspend": false}),
        )
        .expect_ok();
    let report = server
        .call("debug_export_investigation", json!({}))
        .expect_ok();
    assert!(
        report.text.contains("-Ddb.password=****") && report.text.contains("Bearer ****"),
        "{}",
        report.text
    );
    server.call("debug_disconnect", json!({})).expect_ok();
    let logs = server.stderr_lines().join("\n");
    assert!(!logs.is_empty(), "RUST_LOG=trace logs something");
    for secret in SECRETS {
        assert!(!report.text.contains(secret), "{secret}: {}", report.text);
        assert!(!logs.contains(secret), "{secret} in the logs");
    }
}

/// Whether `pid` runs: its `/proc` entry exists and is not a zombie
/// waiting for a reaper.
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X")
    })
}

/// Before the fix a launched JVM ran on, orphaned, after its server was
/// killed with SIGKILL; one launched to stay still does.
#[test]
fn a_launched_jvm_dies_with_its_killed_server_unless_launched_to_stay() {
    let server = server();
    let tied = launch(&server, "Ticker", &[], false);
    server
        .call(
            "debug_launch",
            json!({"main_class": "Ticker", "classpath": fixtures().display().to_string(),
                   "suspend": false, "detach_on_disconnect": true}),
        )
        .expect_ok();
    let stays = sessions(&server)
        .last()
        .and_then(|s| s["pid"].as_u64())
        .expect("pid") as u32;
    let _reap = KillOnDrop([tied, stays]);
    assert!(running(tied) && running(stays));
    server.kill();
    poll_until_msg(
        Duration::from_secs(10),
        "the JVM to die with its server",
        || (!running(tied)).then_some(()),
    );
    assert!(running(stays), "a JVM launched to stay outlives its server");
}

/// Kills the JVMs a test left, whatever it asserted.
struct KillOnDrop([u32; 2]);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        for pid in self.0.iter().filter(|p| running(**p)) {
            let _ = std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status();
        }
    }
}
