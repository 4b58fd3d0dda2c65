//! What arming a probe costs on a group of JVMs against one JVM (#42's
//! cost: a group of 8 in at most 2× the time of one), through the real
//! tool layer (the in-process server of a release build, fan-out and
//! rendering included): N `Replica` JVMs (`calm`: a call every 50 µs or
//! so) on fixed ports; each round attaches one JVM as a group of 1, arms
//! a line probe on `Replica.charge` with a condition, and disconnects
//! (which restores the class); then the same on the group of all N. The
//! JVM of the group of 1 turns in round-robin, so each arm is a first in
//! its attach. Besides the wall time of the `debug_set_stop` call, the
//! CPU time it cost: the JVMs' (every thread's `schedstat`) and this
//! process's, split, since on two cores a group is bound by the CPU its
//! members' redefinitions take.
//!
//! Each round ends with the floor (`group_arm_floor.rs`): the least a
//! probe needs, sent by the simplest raw client to one JVM and then to
//! all of them, so the group's ratio can be read against the host's.
//!
//! Run: `cargo bench --bench group_arm` (`-- --jvms N`, `--rounds N`,
//! `--jdk 25`, `--load hot` for the fixture's full pace: bursts of 2,000
//! calls, up to a million a second).

#[path = "support.rs"]
mod support;

#[path = "group_arm_floor.rs"]
mod floor;

use std::collections::HashMap;
use std::process::Child;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use jvmscope::mcp::JvmScope;
use serde_json::json;
use support::text;

/// The CPU time process `pid` has used, every thread (ns precision).
fn cpu_of(pid: u32) -> Duration {
    cpu_by_thread(pid).into_values().sum()
}

/// The CPU time each thread of process `pid` has used, by the thread's
/// name (HotSpot names a Java thread's native thread after it, cut to 15
/// bytes; threads of one name are summed).
fn cpu_by_thread(pid: u32) -> HashMap<String, Duration> {
    let mut out: HashMap<String, Duration> = HashMap::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for t in tasks.flatten() {
        let name = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        let ns = std::fs::read_to_string(t.path().join("schedstat"))
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
            .unwrap_or(0);
        *out.entry(name.trim().to_string()).or_default() += Duration::from_nanos(ns);
    }
    out
}

/// One arming: wall time, the JVMs' CPU, ours.
#[derive(Clone, Default)]
struct Arm {
    wall: Duration,
    jvms: Duration,
    ours: Duration,
    /// The attach before the arm: its wall time and jvmscope's CPU.
    attach: Duration,
    attach_ours: Duration,
    /// The JVMs' CPU by thread name.
    by: Vec<(String, Duration)>,
}

/// A fixture JVM: its port, its pid, and how many times its JDWP agent
/// said it listens (again, after each debugger lets go).
struct Replica {
    port: u16,
    pid: u32,
    listens: Arc<AtomicUsize>,
}

/// Waits until each of `jvms` listens again after a disconnect, `before`
/// being their counts at the attach.
async fn listening_again(jvms: &[Replica], before: &[usize]) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while jvms
        .iter()
        .zip(before)
        .any(|(j, b)| j.listens.load(Ordering::SeqCst) <= *b)
    {
        assert!(Instant::now() < deadline, "a JVM did not listen again");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// Attaches `jvms` as a group, arms the probe and disconnects, then
/// waits until each listens again.
async fn arm(server: &JvmScope, jvms: &[Replica], line: u32) -> Arm {
    let ports: Vec<u16> = jvms.iter().map(|j| j.port).collect();
    let pids: Vec<u32> = jvms.iter().map(|j| j.pid).collect();
    let before: Vec<usize> = jvms
        .iter()
        .map(|j| j.listens.load(Ordering::SeqCst))
        .collect();
    let targets: Vec<String> = ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
    let (a0, at) = (cpu_of(std::process::id()), Instant::now());
    let r = server
        .call("debug_attach", json!({"targets": targets}))
        .await;
    assert!(r.is_error != Some(true), "{}", text(&r));
    let (attach, attach_ours) = (at.elapsed(), cpu_of(std::process::id()).saturating_sub(a0));
    let jvm_cpu = || pids.iter().map(|p| cpu_of(*p)).sum::<Duration>();
    let threads = || {
        let mut all: HashMap<String, Duration> = HashMap::new();
        for p in &pids {
            for (k, v) in cpu_by_thread(*p) {
                *all.entry(k).or_default() += v;
            }
        }
        all
    };
    let by0 = threads();
    let (j0, o0, t0) = (jvm_cpu(), cpu_of(std::process::id()), Instant::now());
    let r = server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": "Replica", "line": line,
                   "trace": true, "condition": "amount < 0", "engine": "probe"}),
        )
        .await;
    let wall = t0.elapsed();
    let (j1, o1) = (jvm_cpu(), cpu_of(std::process::id()));
    let by: Vec<(String, Duration)> = threads()
        .into_iter()
        .map(|(k, v)| {
            let d = v.saturating_sub(by0.get(&k).copied().unwrap_or_default());
            (k, d)
        })
        .filter(|(_, d)| !d.is_zero())
        .collect();
    let all = format!("{n} of {n} members answered", n = jvms.len());
    assert!(text(&r).contains(&all), "{}", text(&r));
    let r = server.call("debug_disconnect", json!({})).await;
    assert!(r.is_error != Some(true), "{}", text(&r));
    listening_again(jvms, &before).await;
    Arm {
        wall,
        jvms: j1.saturating_sub(j0),
        ours: o1.saturating_sub(o0),
        attach,
        attach_ours,
        by,
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn row(what: &str, arms: &[Arm]) -> String {
    let m = |f: fn(&Arm) -> Duration| median(arms.iter().map(f).collect());
    format!(
        "| {what} | {} | {} | {} | {} |",
        ms(m(|a| a.wall)),
        ms(arms.iter().map(|a| a.wall).min().unwrap_or_default()),
        ms(m(|a| a.jvms)),
        ms(m(|a| a.ours)),
    )
}

/// The JVMs' CPU per arm by thread name, the mean over `arms`: the
/// biggest `top`, as `name ms`.
fn by_thread(arms: &[Arm], top: usize) -> String {
    let mut sum: HashMap<&str, Duration> = HashMap::new();
    for a in arms {
        for (k, v) in &a.by {
            *sum.entry(k.as_str()).or_default() += *v;
        }
    }
    let n = u32::try_from(arms.len().max(1)).unwrap_or(u32::MAX);
    let mut rows: Vec<(&str, Duration)> = sum.into_iter().map(|(k, v)| (k, v / n)).collect();
    rows.sort_by_key(|r| std::cmp::Reverse(r.1));
    rows.iter()
        .take(top)
        .map(|(k, v)| format!("{k} {}", ms(*v)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The bench's arguments: how many JVMs, how many rounds, which JDK,
/// which load.
struct Options {
    jvms: usize,
    rounds: usize,
    home: Option<std::path::PathBuf>,
    load: String,
}

fn options() -> Options {
    let mut args = std::env::args().skip(1);
    let (mut jvms, mut rounds, mut home) = (8usize, 5usize, None);
    let mut load = "calm".to_string();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--jvms" => jvms = args.next().and_then(|v| v.parse().ok()).expect("--jvms N"),
            "--rounds" => {
                rounds = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--rounds N")
            }
            "--jdk" => {
                let v = args.next().expect("--jdk N");
                home = Some(std::path::PathBuf::from(format!(
                    "/usr/lib/jvm/temurin-{v}-jdk-amd64"
                )));
            }
            "--load" => {
                load = args.next().expect("--load calm|hot");
                assert!(load == "calm" || load == "hot", "--load calm|hot");
            }
            "--bench" => {}
            other => panic!(
                "unknown argument {other:?} (accepted: --jvms N, --rounds N, --jdk N, --load calm|hot)"
            ),
        }
    }
    Options {
        jvms,
        rounds,
        home,
        load,
    }
}

fn main() {
    let Options {
        jvms,
        rounds,
        home,
        load,
    } = options();
    let mut children: Vec<Child> = Vec::new();
    let mut replicas = Vec::new();
    for _ in 0..jvms {
        let listens = Arc::new(AtomicUsize::new(0));
        let counter = listens.clone();
        let (child, port) = support::start_fixture_feeding(
            home.as_deref(),
            "Replica",
            "replica ready",
            &[if load == "hot" { "hot" } else { "calm" }],
            support::free_port(),
            move |l| {
                if l.starts_with("Listening for transport") {
                    counter.fetch_add(1, Ordering::SeqCst);
                }
            },
        );
        replicas.push(Replica {
            port,
            pid: child.id(),
            listens,
        });
        children.push(child);
    }
    let line = support::marked_line("Replica", "// LINE: charge");
    let rt = jvmscope::actors::runtime::build().expect("runtime");
    let (ones, groups) = rt.block_on(async {
        let engine = jvmscope::actors::Engine::start(jvmscope::actors::EngineConfig::default())
            .await
            .expect("engine");
        let server = JvmScope::new(engine.clone());
        // One warm-up of each, so no round pays this process's first use.
        arm(&server, &replicas[..1], line).await;
        arm(&server, &replicas, line).await;
        let (mut ones, mut groups) = (Vec::new(), Vec::new());
        for r in 0..rounds {
            let k = (r + 1) % jvms;
            ones.push(arm(&server, &replicas[k..=k], line).await);
            groups.push(arm(&server, &replicas, line).await);
        }
        engine.shutdown().await;
        (ones, groups)
    });
    // The floor, once jvmscope has let every JVM go: the same rounds with
    // the simplest raw client.
    let bytes = Arc::new(
        std::fs::read(support::classes_dir("Replica").join("Replica.class"))
            .expect("Replica.class"),
    );
    let (mut floor_one, mut floor_group) = (Vec::new(), Vec::new());
    let ports: Vec<u16> = replicas.iter().map(|r| r.port).collect();
    for r in 0..rounds {
        for (jvms, out) in [
            (r % jvms..=r % jvms, &mut floor_one),
            (0..=jvms - 1, &mut floor_group),
        ] {
            let before: Vec<usize> = replicas
                .iter()
                .map(|j| j.listens.load(Ordering::SeqCst))
                .collect();
            out.push(floor::run(&ports[jvms.clone()], "Replica", &bytes));
            rt.block_on(listening_again(&replicas[jvms.clone()], &before[jvms]));
        }
    }
    let floor_row = |what: &str, f: fn(&(Duration, Duration)) -> Duration| {
        let one = median(floor_one.iter().map(f).collect());
        let group = median(floor_group.iter().map(f).collect());
        format!(
            "| {what} | {} | {} | {:.1}× |",
            ms(one),
            ms(group),
            group.as_secs_f64() / one.as_secs_f64().max(1e-9)
        )
    };
    for mut c in children {
        let _ = c.kill();
        let _ = c.wait();
    }
    let one = median(ones.iter().map(|a| a.wall).collect());
    let group = median(groups.iter().map(|a| a.wall).collect());
    support::report(&format!(
        "group_arm: {jvms} {load} Replica JVMs, {rounds} rounds, {} cores\n\n\
         | arming a line probe | wall (median) | best | JVMs' CPU | jvmscope's CPU |\n\
         |---|---:|---:|---:|---:|\n{}\n{}\n\n\
         group of {jvms} against one: **{:.1}×** the wall time (goal ≤ 2×)\n\n\
         the attach before it (median wall, jvmscope's CPU): one JVM {} ({}), group of {jvms} {} ({})\n\n\
         the JVMs' CPU per arm by thread, mean: one JVM: {}; group of {jvms}: {}\n\n\
         the floor, a raw blocking client per JVM (median wall):\n\n\
         | the least a probe needs | one JVM | group of {jvms} | ratio |\n\
         |---|---:|---:|---:|\n{}\n{}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        row("one JVM", &ones),
        row(&format!("group of {jvms}"), &groups),
        group.as_secs_f64() / one.as_secs_f64().max(1e-9),
        ms(median(ones.iter().map(|a| a.attach).collect())),
        ms(median(ones.iter().map(|a| a.attach_ours).collect())),
        ms(median(groups.iter().map(|a| a.attach).collect())),
        ms(median(groups.iter().map(|a| a.attach_ours).collect())),
        by_thread(&ones, 8),
        by_thread(&groups, 8),
        floor_row("100 round trips, one after another", |f| f.0),
        floor_row("one redefinition", |f| f.1),
    ));
}
