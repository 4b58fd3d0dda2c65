//! debug_profile against real JVMs (JDK 17 and Temurin 25) through the
//! real binary: one thread burning CPU in `Burner.spin` while others idle
//! is named among the top three methods by self samples, by the flight
//! recorder (its flame graph an SVG that names it, no recording of ours
//! left running, the scratch file gone) and by the JDWP sampler (which
//! states its hold); a recording whose jvmscope dies by SIGKILL ends by
//! itself; a duration over the bound and a misspelt argument are refused
//! before anything runs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::json;

use crate::support::java::{Jvm, JvmOpts, default_java_home, temurin25_required};
use crate::support::mcp::Server;

fn burner(java_home: &Path) -> Jvm {
    let jvm = Jvm::start(
        "Burner",
        JvmOpts {
            java_home: Some(java_home.to_path_buf()),
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("burner ready", Duration::from_secs(20));
    jvm
}

/// The methods of the "by self" table, in order.
pub(crate) fn top_self(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| !l.starts_with("Top methods by self"))
        .skip(2)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().nth(2).map(str::to_string))
        .collect()
}

/// The URI after `label` in the reply.
pub(crate) fn uri_after(text: &str, label: &str) -> String {
    let at = text
        .find(label)
        .unwrap_or_else(|| panic!("no {label}: {text}"));
    text[at + label.len()..]
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string()
}

pub(crate) fn read_resource(server: &Server, uri: &str) -> (String, String) {
    let r = server
        .request("resources/read", json!({"uri": uri}))
        .unwrap_or_else(|e| panic!("{uri}: {e}"));
    let c = &r["contents"][0];
    (
        c["mimeType"].as_str().unwrap_or_default().to_string(),
        c["text"].as_str().unwrap_or_default().to_string(),
    )
}

fn jcmd(java_home: &Path, pid: u32, command: &str) -> String {
    let out = Command::new(java_home.join("bin").join("jcmd"))
        .args([&pid.to_string(), command])
        .output()
        .expect("jcmd runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn assert_spin_on_top(text: &str) {
    let top = top_self(text);
    assert!(
        top.iter().take(3).any(|m| m == "Burner.spin"),
        "{top:?}\n{text}"
    );
}

fn jfr_profile(java_home: PathBuf) {
    let jvm = burner(&java_home);
    let server = crate::dump::attached_read_only(&jvm);
    let reply = server
        .call_with_timeout(
            "debug_profile",
            json!({"duration_ms": 2000}),
            Duration::from_secs(90),
        )
        .expect_ok();
    let text = &reply.text;
    assert!(text.contains(" via JFR (jdk.ExecutionSample"), "{text}");
    assert!(
        text.contains("Read-only session: profiling is allowed"),
        "{text}"
    );
    assert_spin_on_top(text);
    assert!(text.contains("\"burner-1\"  mostly "), "{text}");
    // Nothing of ours records any more, and the scratch file is gone.
    assert!(text.contains("JFR.check lists it no more"), "{text}");
    let file = uri_after(text, "scratch file ");
    assert!(file.ends_with(".jfr"), "{text}");
    assert!(!Path::new(&file).exists(), "{file} still exists");
    let check = jcmd(&java_home, jvm.pid(), "JFR.check");
    assert!(!check.contains("jvmscope-"), "{check}");
    // The flame graph and the collapsed stacks are resources.
    let flame = uri_after(text, "Flame graph: ");
    let (mime, svg) = read_resource(&server, &flame);
    assert_eq!(mime, "image/svg+xml");
    assert!(svg.contains("<svg"), "{}", &svg[..svg.len().min(300)]);
    assert!(svg.contains("Burner.spin"), "the SVG names the hot method");
    let collapsed = uri_after(text, "collapsed stacks: ");
    let (mime, folded) = read_resource(&server, &collapsed);
    assert_eq!(mime, "text/plain");
    assert!(
        folded
            .lines()
            .any(|l| l.contains(";Burner.spin ") || l.starts_with("Burner.spin ")),
        "{folded}"
    );
    crate::dump::assert_none_suspended(&server);
}

#[test]
fn jfr_names_the_burning_method_on_jdk17() {
    jfr_profile(default_java_home());
}

#[test]
fn jfr_names_the_burning_method_on_temurin25() {
    jfr_profile(temurin25_required());
}

fn jdwp_profile(java_home: PathBuf) {
    let jvm = burner(&java_home);
    let server = crate::dump::attached(&jvm);
    let reply = server
        .call_with_timeout(
            "debug_profile",
            json!({"duration_ms": 2000, "channel": "jdwp"}),
            Duration::from_secs(60),
        )
        .expect_ok();
    let text = &reply.text;
    assert!(text.contains(" via JDWP: every 20 ms ("), "{text}");
    assert!(text.contains(" mean, "), "{text}");
    assert!(text.contains("safepoint-biased"), "{text}");
    assert_spin_on_top(text);
    crate::dump::assert_running(&server, &jvm, "rate=");
}

#[test]
fn jdwp_sampling_names_the_burning_method_on_jdk17() {
    jdwp_profile(default_java_home());
}

#[test]
fn jdwp_sampling_names_the_burning_method_on_temurin25() {
    jdwp_profile(temurin25_required());
}

/// jvmscope killed with SIGKILL while the flight recorder records: the
/// recording was started with a duration, so it ends by itself (the asked
/// duration plus the margin), and the next attach finds every thread
/// running.
fn killed_mid_profile(java_home: PathBuf) {
    use crate::support::poll_until_msg;
    let jvm = burner(&java_home);
    // The server's scratch files go to a directory of this test's own,
    // where the recording's file appears once the JVM ends it.
    let scratch = crate::code::Scratch::new("profile-killed");
    let tmp = scratch.path("tmp");
    std::fs::create_dir_all(&tmp).expect("tmp dir");
    let server = Server::spawn_with_env(&[("TMPDIR", &tmp.display().to_string())]);
    server.initialize();
    server
        .call("debug_attach", json!({"port": jvm.port()}))
        .expect_ok();
    server.send(
        &json!({"jsonrpc": "2.0", "id": 9001, "method": "tools/call",
        "params": {"name": "debug_profile", "arguments": {"duration_ms": 1000}}}),
    );
    let ours = |c: &str| c.contains("jvmscope-");
    poll_until_msg(Duration::from_secs(20), "our recording, running", || {
        let check = jcmd(&java_home, jvm.pid(), "JFR.check");
        ours(&check).then_some(())
    });
    server.kill();
    // 1 s asked plus the self-stop margin, and time for the JVM to stop it
    // and write its file.
    let limit =
        Duration::from_secs(1) + jvmscope::actors::SELF_STOP_MARGIN + Duration::from_secs(10);
    let written = || {
        std::fs::read_dir(&tmp).ok()?.flatten().find_map(|d| {
            let f = d.path().join("profile.jfr");
            std::fs::metadata(&f)
                .is_ok_and(|m| m.len() > 0)
                .then_some(f)
        })
    };
    poll_until_msg(limit, "the recording to end by itself", written);
    let check = jcmd(&java_home, jvm.pid(), "JFR.check");
    assert!(!ours(&check), "{check}");
    let next = Server::spawn();
    next.initialize();
    let port = jvm.listening_port(2, Duration::from_secs(20));
    next.call("debug_attach", json!({"port": port})).expect_ok();
    crate::dump::assert_none_suspended(&next);
    assert!(jvm.is_alive());
}

#[test]
fn a_recording_ends_by_itself_after_a_sigkill_on_jdk17() {
    killed_mid_profile(default_java_home());
}

#[test]
fn a_recording_ends_by_itself_after_a_sigkill_on_temurin25() {
    killed_mid_profile(temurin25_required());
}

/// Bad input is refused before any session is looked for.
#[test]
fn a_profile_over_the_bound_or_misspelt_is_refused() {
    let server = Server::spawn();
    server.initialize();
    let long = server
        .call("debug_profile", json!({"duration_ms": 120_001}))
        .expect_tool_error();
    assert!(long.text.contains("at most 120 s"), "{}", long.text);
    assert!(long.text.contains("120000"), "{}", long.text);
    let misspelt = server
        .call("debug_profile", json!({"duration": 1000}))
        .expect_tool_error();
    assert!(misspelt.text.contains("duration"), "{}", misspelt.text);
    let channel = server
        .call(
            "debug_profile",
            json!({"duration_ms": 1000, "channel": "perf"}),
        )
        .expect_tool_error();
    assert!(
        channel.text.contains("auto, jfr or jdwp"),
        "{}",
        channel.text
    );
}
