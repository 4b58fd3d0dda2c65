//! Tool latency on an idle JVM, through the real tool layer (the
//! in-process server, as an MCP client's call reaches it, rendering
//! included): the Ticker fixture hits a suspending line stop every 50 ms;
//! for each hit, timed one after the other, `debug_get_stack` of 3 frames
//! (typed locals), `debug_evaluate` of a local, `debug_evaluate` of a
//! method call (one invocation on the held thread), and `debug_continue`
//! (verified by the suspend counts read back). Then `debug_launch` until
//! the session is attached, against the JVM's own start-up: `java` run on
//! the same class without an agent, until main prints its first line.
//! Alternating, in one run. Median and best of each, and the share of the
//! CPU the hypervisor took meanwhile (steal time: on this VM it reaches a
//! third for minutes, and every figure grows with it).
//!
//! Run: `cargo bench --bench latency` (`-- --samples N`, `--jdk 25` or
//! `--java HOME`).

#[path = "support.rs"]
mod support;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use jvmscope::mcp::JvmScope;
use serde_json::json;
use support::text;

/// Calls a tool that must succeed; the time it took.
async fn timed(server: &JvmScope, tool: &str, args: serde_json::Value) -> Duration {
    let t = Instant::now();
    let r = server.call(tool, args).await;
    let d = t.elapsed();
    assert!(r.is_error != Some(true), "{tool}: {}", text(&r));
    d
}

struct Stats {
    label: &'static str,
    times: Vec<Duration>,
}

impl Stats {
    fn new(label: &'static str) -> Self {
        Self {
            label,
            times: Vec::new(),
        }
    }

    fn row(&self) -> String {
        let mut t = self.times.clone();
        t.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        format!(
            "| {} | {:.2} ms | {:.2} ms | {:.2} ms | {} |",
            self.label,
            ms(t[t.len() / 2]),
            ms(t[0]),
            ms(t[t.len() - 1]),
            t.len()
        )
    }

    fn median(&self) -> Duration {
        let mut t = self.times.clone();
        t.sort();
        t[t.len() / 2]
    }
}

/// The three calls on a held JVM, once per hit.
async fn held_calls(port: u16, samples: usize) -> Vec<Stats> {
    let (engine, _session) = support::attached(port, None).await;
    let server = JvmScope::new(engine.clone());
    // `LINE: tick` is also the start of `LINE: ticker-started`.
    let line = support::marked_line("Ticker", "\"tick \" + ticks");
    let r = server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": "Ticker", "line": line}),
        )
        .await;
    assert!(r.is_error != Some(true), "{}", text(&r));
    let mut stack = Stats::new("`debug_get_stack`, 3 frames, typed locals");
    let mut eval = Stats::new("`debug_evaluate` of a local (`limit`)");
    let mut invoke = Stats::new("`debug_evaluate` of a call (`Math.abs(limit)`)");
    let mut cont = Stats::new("`debug_continue` (verified)");
    // One warm-up hit fills the caches.
    for i in 0..=samples {
        let r = server
            .call("debug_wait_for_event", json!({"timeout_ms": 5000}))
            .await;
        assert!(r.is_error != Some(true), "{}", text(&r));
        let s = timed(&server, "debug_get_stack", json!({"max_frames": 3})).await;
        let e = timed(&server, "debug_evaluate", json!({"expression": "limit"})).await;
        let v = timed(
            &server,
            "debug_evaluate",
            json!({"expression": "Math.abs(limit)"}),
        )
        .await;
        let c = timed(&server, "debug_continue", json!({})).await;
        if i > 0 {
            stack.times.push(s);
            eval.times.push(e);
            invoke.times.push(v);
            cont.times.push(c);
        }
    }
    let _ = server.call("debug_disconnect", json!({})).await;
    engine.shutdown().await;
    vec![stack, eval, invoke, cont]
}

/// `java` on Ticker without an agent, until main's first line.
fn jvm_start(home: &Option<PathBuf>, classes: &std::path::Path) -> Duration {
    let t = Instant::now();
    let mut child = Command::new(java(home))
        .arg("-cp")
        .arg(classes)
        .arg("Ticker")
        .arg("1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("java");
    let out = child.stdout.take().expect("stdout");
    let started = BufReader::new(out)
        .lines()
        .map_while(Result::ok)
        .any(|l| l.contains("ticker started"));
    let d = t.elapsed();
    assert!(started, "Ticker did not start");
    let _ = child.kill();
    let _ = child.wait();
    d
}

fn java(home: &Option<PathBuf>) -> PathBuf {
    match home {
        Some(h) => h.join("bin/java"),
        None => support::jdk("java"),
    }
}

/// `debug_launch` of Ticker (held before main) until attached.
async fn launch(server: &JvmScope, home: &Option<PathBuf>, classes: &std::path::Path) -> Duration {
    let mut args = json!({"main_class": "Ticker", "classpath": classes.display().to_string()});
    if let Some(h) = home {
        args["java_home"] = json!(h.display().to_string());
    }
    let d = timed(server, "debug_launch", args).await;
    let _ = server.call("debug_disconnect", json!({})).await;
    d
}

fn main() {
    let mut samples = 20usize;
    let mut home: Option<PathBuf> = std::env::var_os("JAVA_HOME").map(PathBuf::from);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--list" => return,
            "--samples" => samples = args.next().and_then(|s| s.parse().ok()).unwrap_or(20),
            "--java" => home = args.next().map(PathBuf::from),
            "--jdk" => {
                home = args
                    .next()
                    .map(|v| PathBuf::from(format!("/usr/lib/jvm/temurin-{v}-jdk-amd64")))
            }
            "--bench" => {} // cargo bench passes it
            other => panic!(
                "unknown argument {other:?} (accepted: --samples N, --jdk N, --java HOME, --list)"
            ),
        }
    }
    // The runtime the binary runs the engine on (ADR 0014).
    let rt = jvmscope::actors::runtime::build().expect("runtime");
    let (mut jvm, port) =
        support::start_fixture_in(home.as_deref(), "Ticker", "ticker started", &[], 0);
    let ticks = support::cpu_ticks();
    let held = rt.block_on(held_calls(port, samples.max(15)));
    let held_steal = support::steal_share(ticks, support::cpu_ticks());
    let _ = jvm.kill();
    let _ = jvm.wait();
    // The classes start_fixture compiled.
    let classes = support::classes_dir("Ticker");
    let mut started = Stats::new("`java Ticker` until main runs (no agent)");
    let mut launched = Stats::new("`debug_launch` until attached (held before main)");
    let ticks = support::cpu_ticks();
    rt.block_on(async {
        let engine = jvmscope::actors::Engine::start(jvmscope::actors::EngineConfig::default())
            .await
            .expect("engine");
        let server = JvmScope::new(engine.clone());
        // One of each to warm the page cache, then alternating.
        jvm_start(&home, &classes);
        launch(&server, &home, &classes).await;
        for _ in 0..7 {
            started.times.push(jvm_start(&home, &classes));
            launched.times.push(launch(&server, &home, &classes).await);
        }
        engine.shutdown().await;
    });
    let launch_steal = support::steal_share(ticks, support::cpu_ticks());
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    support::report(&format!(
        "latency: {} samples per call on an idle Ticker JVM; load average {}",
        samples.max(15),
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    ));
    support::report("| step | median | best | worst | samples |");
    support::report("|---|---:|---:|---:|---:|");
    for s in held.iter().chain([&started, &launched]) {
        support::report(&s.row());
    }
    let (a, b) = (started.median(), launched.median());
    support::report(&format!(
        "launch: {:.1} ms median against the JVM's own {:.1} ms start-up; ours: {:.1} ms ({:.0}%)",
        b.as_secs_f64() * 1e3,
        a.as_secs_f64() * 1e3,
        (b.as_secs_f64() - a.as_secs_f64()) * 1e3,
        100.0 * (b.as_secs_f64() - a.as_secs_f64()) / b.as_secs_f64()
    ));
    support::report(&format!(
        "steal: the hypervisor took {:.0}% of the CPU during the held calls, {:.0}% during the launches{}",
        held_steal * 100.0,
        launch_steal * 100.0,
        if held_steal.max(launch_steal) > 0.10 {
            " (over 10%: these figures measure the host as much as jvmscope)"
        } else {
            ""
        }
    ));
}
