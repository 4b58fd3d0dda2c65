//! Load bench of the probe engine: what a probe compiled into a hot method
//! costs the application, against the unprobed program in the same run.
//!
//! The ProbeLoadBench fixture (tests/data/java) runs N worker threads (4
//! by default) calling one hot method as fast as they can, and prints its
//! own throughput every 100 ms. Two shapes (`--shape`):
//! - `named` (the default), the shape of issue #41's hidden check:
//!   `Named.step`, about a microsecond of integer mixing, writes the
//!   static field `Named.seen` that every thread shares and returns a
//!   value that names the call, `(id << 48) | n`; a phase waits 2.5 s
//!   after arming or clearing, lasts 2.4 s, and its rate is the median of
//!   the program's 100 ms ticks. The bench checks that every value a
//!   traced exit or write recorded names a call of the thread that made
//!   it, in the order the thread made them.
//! - `meter`, wave 3's shape: `Meter.step`, half a microsecond, writing
//!   an instance field of the thread's own object; 1.5 s to settle, 2 s
//!   phases, calls over time.
//! - `calls`: `named`'s timing, its mixing done in a call (`Calls.mix`)
//!   and followed by a second call, for the `callees` kind.
//!
//! One JVM, one jvmscope session; each round alternates the
//! unprobed program with, in turn:
//!
//! 1. a line probe whose condition is never true (`n < 0`);
//! 2. a line probe capturing the line's 3 primitive locals on every call
//!    (snapshots/s; then the workers are paused and the probe's counters
//!    must add up: captured + dropped == calls, as nothing is filtered);
//! 3. a method-exit probe on `step` and a field-write probe on
//!    `Meter.last`, each recording every call;
//! 4. the wire engine's method-exit and field-write stops on the same
//!    sites (suspension-free traces, the cheapest the wire has).
//!
//! Each probed phase is compared with the mean of the unprobed phases
//! right before and after it; the table gives the median over rounds.
//! Arming a capture probe is timed to the first snapshot in the session's
//! listing. Last, a child process (this binary, `--hold-probe`) attaches,
//! arms the capture probe and is killed with SIGKILL: the bench times how
//! long the program takes to be back at >= 95% of its throughput without a
//! debugger (the helper's lease lapses within 2 s), and the next attach
//! restores the class.
//!
//! Run: `cargo bench --bench probe_load` (`-- --shape named|meter|calls`,
//! `--rounds N`, `--seconds S` per measurement, `--settle S`, `--threads
//! N`, `--work N` rounds of the hot method's loop, `--java PATH` / `--jdk
//! N`, `--only KIND,...` for some of the stop points: `never`,
//! `never-callers`, `capture`, `callers`, `exit`, `field`,
//! `exit-default`, `field-default`, `wire-exit`, `wire-field`, #40's
//! `stats`, `class-timing` and `callees` (`--shape calls`), and
//! `profile-jfr` and `profile-jdwp`, which arm nothing but record a CPU
//! profile of the whole JVM across the phase (`debug_profile`); `--list`
//! names them. `never-callers` and `callers` are `never` and `capture`
//! asking for 3 caller frames a record; the SIGKILL measurement runs when
//! `capture` is among them).

#[path = "probe_load/kill.rs"]
mod kill;
#[path = "probe_load/probe.rs"]
mod probe;
#[path = "probe_load/profile.rs"]
mod profile;
#[path = "probe_load/report.rs"]
mod report;
#[path = "support.rs"]
mod support;
#[path = "probe_load/values.rs"]
mod values;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use probe::{Probe, Shape};
use report::{load, render, say};

use jvmscope::actors::{Engine, EngineConfig, PointView, SessionHandle};
use jvmscope::model::AttachSpec;
use kill::{hold_probe, kill_child};
use values::{Checked, check_values};

const FIXTURE: &str = "ProbeLoadBench";
/// The hot line's primitive locals.
const LOCALS: [&str; 3] = ["id", "n", "mixed"];
/// Never true: `n` counts up from 0.
const NEVER: &str = "n < 0";

/// Command-line settings.
struct Settings {
    shape: Shape,
    rounds: usize,
    measure: Duration,
    /// Left after arming or clearing before a measurement (the JIT
    /// compiles the redefined method again).
    settle: Duration,
    threads: usize,
    work: u32,
    java: Option<PathBuf>,
    /// Every line the fixture prints, and the bench's own steps, each
    /// with its time since the fixture started (for profiles:
    /// `-XX:+PrintCompilation` through `JAVA_TOOL_OPTIONS`).
    jvm_log: Option<PathBuf>,
    probes: Vec<Probe>,
}

#[allow(clippy::print_stdout)]
fn main() -> Result<()> {
    let mut s = Settings {
        shape: Shape::NAMED,
        rounds: 3,
        measure: Shape::NAMED.measure,
        settle: Shape::NAMED.settle,
        threads: 4,
        work: Shape::NAMED.work,
        java: None,
        jvm_log: None,
        probes: Probe::ALL.to_vec(),
    };
    let (mut measure, mut settle, mut work, mut only) = (None, None, None, false);
    let secs = |v: Option<String>, what: &str| -> Result<Duration> {
        Ok(Duration::from_secs_f64(
            v.with_context(|| format!("{what} S"))?.parse()?,
        ))
    };
    let mut hold: Option<(u16, PathBuf, u32)> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--rounds" => s.rounds = args.next().context("--rounds N")?.parse()?,
            "--shape" => s.shape = Shape::parse(&args.next().context("--shape NAME")?)?,
            "--seconds" => measure = Some(secs(args.next(), "--seconds")?),
            "--settle" => settle = Some(secs(args.next(), "--settle")?),
            "--threads" => s.threads = args.next().context("--threads N")?.parse()?,
            "--work" => work = Some(args.next().context("--work N")?.parse()?),
            "--java" => s.java = Some(PathBuf::from(args.next().context("--java PATH")?)),
            "--jvm-log" => s.jvm_log = Some(PathBuf::from(args.next().context("--jvm-log FILE")?)),
            "--jdk" => {
                let v = args.next().context("--jdk N")?;
                s.java = Some(PathBuf::from(format!("/usr/lib/jvm/temurin-{v}-jdk-amd64")))
            }
            // The child of the kill measurement.
            "--hold-probe" => {
                let port = args
                    .next()
                    .context("--hold-probe PORT ROOT LINE")?
                    .parse()?;
                let root = PathBuf::from(args.next().context("ROOT")?);
                let line = args.next().context("LINE")?.parse()?;
                hold = Some((port, root, line));
            }
            "--only" => {
                let v = args.next().context("--only NAME,...")?;
                s.probes = v.split(',').map(Probe::parse).collect::<Result<_>>()?;
                only = true;
            }
            "--bench" => {}
            "--list" => return Ok(()),
            other => bail!(
                "unknown argument {other:?} (accepted: --shape named|meter|calls, --rounds N, \
                 --seconds S, --settle S, --threads N, --work N, --java PATH, --jdk N, --jvm-log \
                 FILE, --only NAME,...)"
            ),
        }
    }
    // Only `Calls.step` makes calls for the callees kind to time.
    if s.shape.name != Shape::CALLS.name {
        if only && s.probes.contains(&Probe::Callees) {
            bail!("--only callees needs --shape calls: only Calls.step makes calls");
        }
        s.probes.retain(|p| *p != Probe::Callees);
    }
    s.measure = measure.unwrap_or(s.shape.measure);
    s.settle = settle.unwrap_or(s.shape.settle);
    s.work = work.unwrap_or(s.shape.work);
    let rt = jvmscope::actors::runtime::build()?;
    if let Some((port, root, line)) = hold {
        return rt.block_on(hold_probe(port, root, line, s.shape));
    }
    let report = rt.block_on(run(&s))?;
    println!("{report}");
    Ok(())
}

/// The fixture, compiled and running under a JDWP agent.
struct Fixture {
    child: Child,
    stdin: Mutex<ChildStdin>,
    /// Every port the agent announced (it listens anew after a detach).
    ports: Arc<Mutex<Vec<u16>>>,
    used: AtomicU32,
    /// (when read here, calls, window length) for each window printed.
    windows: Arc<Mutex<Vec<(Instant, u64, Duration)>>>,
    version: String,
    classes: tempfile::TempDir,
    median_ticks: bool,
    log: Option<Log>,
}

/// The fixture's lines and the bench's steps, timed from the start.
#[derive(Clone)]
struct Log {
    file: Arc<Mutex<std::fs::File>>,
    start: Instant,
}

impl Log {
    fn line(&self, text: &str) {
        if let Ok(mut f) = self.file.lock() {
            let _ = writeln!(f, "{:.3} {text}", self.start.elapsed().as_secs_f64());
        }
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Fixture {
    fn start(s: &Settings) -> Result<Fixture> {
        let tool = |name: &str| match &s.java {
            Some(h) if h.join("bin").join(name).is_file() => h.join("bin").join(name),
            Some(h) if h.is_file() => h.with_file_name(name),
            _ => support::jdk(name),
        };
        let args = [
            s.threads.to_string(),
            s.work.to_string(),
            s.shape.arg.to_string(),
        ];
        let (mut child, classes, version) =
            support::spawn_agent_fixture(tool, FIXTURE, &args).map_err(anyhow::Error::msg)?;
        let stdin = child.stdin.take().context("stdin")?;
        let stdout = child.stdout.take().context("stdout")?;
        let ports = Arc::new(Mutex::new(Vec::new()));
        let windows = Arc::new(Mutex::new(Vec::new()));
        let (announced, sink) = (ports.clone(), windows.clone());
        let log = match &s.jvm_log {
            Some(path) => Some(Log {
                file: Arc::new(Mutex::new(std::fs::File::create(path)?)),
                start: Instant::now(),
            }),
            None => None,
        };
        let echo = log.clone();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(log) = &echo {
                    log.line(&line);
                }
                if let Some(p) = line.strip_prefix("Listening for transport dt_socket at address:")
                {
                    if let (Ok(p), Ok(mut v)) = (p.trim().parse::<u16>(), announced.lock()) {
                        v.push(p);
                    }
                } else if let Some(w) = line.strip_prefix("w ") {
                    let mut f = w.split_whitespace().map(|x| x.parse::<u64>());
                    if let (Some(Ok(n)), Some(Ok(ns)), Ok(mut v)) =
                        (f.next(), f.next(), sink.lock())
                    {
                        v.push((Instant::now(), n, Duration::from_nanos(ns)));
                    }
                } else if line.contains("probe bench ready") {
                    let _ = ready_tx.send(());
                }
            }
        });
        ready_rx
            .recv_timeout(Duration::from_secs(30))
            .context("the fixture did not start")?;
        Ok(Fixture {
            child,
            stdin: Mutex::new(stdin),
            ports,
            used: AtomicU32::new(0),
            windows,
            version,
            classes,
            median_ticks: s.shape.median_ticks,
            log,
        })
    }

    /// The port of the next attach (waits for the agent to listen again).
    async fn port(&self) -> Result<u16> {
        let want = self.used.fetch_add(1, Ordering::Relaxed) as usize + 1;
        support::announced_port(&self.ports, want)
            .await
            .map_err(anyhow::Error::msg)
    }

    /// Calls/s over the windows that began at `from` or later and were
    /// printed by `to`: their median, or their calls over their time.
    fn rate(&self, from: Instant, to: Instant) -> Option<f64> {
        let v = self.windows.lock().ok()?;
        let inside = v
            .iter()
            .filter(|(at, _, len)| *at <= to && at.checked_sub(*len).is_some_and(|s| s >= from));
        if self.median_ticks {
            let mut ticks: Vec<f64> = inside
                .map(|(_, c, len)| *c as f64 / len.as_secs_f64().max(1e-9))
                .collect();
            ticks.sort_by(f64::total_cmp);
            return ticks.get(ticks.len() / 2).copied();
        }
        let (n, t) = inside.fold((0u64, Duration::ZERO), |(n, t), (_, c, len)| {
            (n + c, t + *len)
        });
        (!t.is_zero()).then(|| n as f64 / t.as_secs_f64())
    }

    /// The windows printed after `from`: (seconds after `from` at its end,
    /// calls/s in it).
    fn timeline(&self, from: Instant) -> Vec<(f64, f64)> {
        self.windows
            .lock()
            .map(|v| {
                v.iter()
                    .filter(|(at, _, _)| *at > from)
                    .map(|(at, n, len)| {
                        (
                            at.duration_since(from).as_secs_f64(),
                            *n as f64 / len.as_secs_f64().max(1e-9),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Notes a step of the bench in the log.
    fn mark(&self, step: &str) {
        if let Some(log) = &self.log {
            log.line(&format!("# {step}"));
        }
    }

    fn tell(&self, command: &str) -> Result<()> {
        let mut stdin = self.stdin.lock().map_err(|_| anyhow!("stdin poisoned"))?;
        writeln!(stdin, "{command}")?;
        stdin.flush()?;
        Ok(())
    }

    /// Waits until a whole window passed with no call (the workers are
    /// parked).
    async fn quiet(&self) -> Result<()> {
        let since = Instant::now();
        loop {
            tokio::time::sleep(Duration::from_millis(50)).await;
            let idle = self
                .windows
                .lock()
                .map(|v| {
                    v.iter()
                        .rev()
                        .take_while(|(at, _, _)| *at > since)
                        .any(|(_, n, _)| *n == 0)
                })
                .unwrap_or(false);
            if idle {
                return Ok(());
            }
            if since.elapsed() > Duration::from_secs(10) {
                bail!("the workers did not pause");
            }
        }
    }

    /// The JVM's CPU time so far (user + system).
    fn cpu(&self) -> Duration {
        proc_cpu(&format!("/proc/{}/stat", self.child.id()))
    }
}

/// User + system time of a process, from its `stat` (10 ms ticks).
fn proc_cpu(path: &str) -> Duration {
    let stat = std::fs::read_to_string(path).unwrap_or_default();
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    let ticks = f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0);
    Duration::from_millis(ticks * 10)
}

/// One measured phase.
#[derive(Clone, Default)]
struct Phase {
    /// The fixture's calls/s.
    rate: f64,
    /// Snapshots the stop point recorded per second.
    snapshots: f64,
    /// Share of one core this process (jvmscope) used.
    ours_cpu: f64,
    /// Cores the JVM used.
    jvm_cpu: f64,
    /// The probe's sampled cost per call.
    ns_per_call: Option<u64>,
    steal: f64,
}

/// Arming a capture probe, timed.
#[derive(Clone, Copy)]
struct Arming {
    /// The arm call.
    call: Duration,
    /// From the arm call to the first snapshot in the listing.
    first: Option<Duration>,
    /// The redefinition's pause, as the probe reported it.
    pause: Duration,
}

/// A recording probe's counters with the workers parked.
#[derive(Clone, Copy)]
struct Tally {
    probe: Probe,
    calls: u64,
    captured: u64,
    drops: u64,
}

/// Measures the fixture and this session over the next `d`.
async fn measure(
    fixture: &Fixture,
    session: Option<(&SessionHandle, &str)>,
    d: Duration,
) -> Result<Phase> {
    let captured = |v: &Option<PointView>| v.as_ref().map_or(0, |p| p.captured);
    let view0 = match session {
        Some((h, id)) => view(h, id).await,
        None => None,
    };
    fixture.mark("window begins");
    let (t0, c0, j0, s0) = (
        Instant::now(),
        own_cpu(),
        fixture.cpu(),
        support::cpu_ticks(),
    );
    tokio::time::sleep(d).await;
    fixture.mark("window ends");
    let (t1, c1, j1, s1) = (
        Instant::now(),
        own_cpu(),
        fixture.cpu(),
        support::cpu_ticks(),
    );
    let view1 = match session {
        Some((h, id)) => view(h, id).await,
        None => None,
    };
    let secs = t1.duration_since(t0).as_secs_f64();
    Ok(Phase {
        rate: fixture
            .rate(t0, t1)
            .context("the fixture printed no window")?,
        snapshots: captured(&view1).saturating_sub(captured(&view0)) as f64 / secs,
        ours_cpu: (c1 - c0).as_secs_f64() / secs,
        jvm_cpu: (j1 - j0).as_secs_f64() / secs,
        ns_per_call: view1.and_then(|p| p.probe).and_then(|p| p.ns_per_call),
        steal: support::steal_share(s0, s1),
    })
}

fn own_cpu() -> Duration {
    proc_cpu("/proc/self/stat")
}

async fn view(h: &SessionHandle, id: &str) -> Option<PointView> {
    h.stop_points()
        .list()
        .await
        .points
        .into_iter()
        .find(|p| p.id == id)
}

/// Arms `probe`; its id and, for a capture, how long the first snapshot
/// took.
async fn arm(h: &SessionHandle, shape: &Shape, probe: Probe, hot: u32) -> Result<(String, Arming)> {
    let start = Instant::now();
    let report = h
        .arm_stop(
            probe
                .spec(shape, hot)
                .context("a profile arms no stop point")?,
            1,
        )
        .await
        .map_err(|e| anyhow!("arming {}: {e}", probe.name()))?;
    let call = start.elapsed();
    let id = report.point.context("a stop point")?.id;
    let mut first = None;
    if probe.records() {
        while start.elapsed() < Duration::from_secs(5) {
            if view(h, &id).await.is_some_and(|p| p.captured > 0) {
                first = Some(start.elapsed());
                break;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
    let pause = view(h, &id)
        .await
        .and_then(|p| p.probe)
        .map(|p| Duration::from_micros(p.pause_us))
        .unwrap_or_default();
    Ok((id, Arming { call, first, pause }))
}

/// With the workers parked, the probe's counters once they stop moving
/// (the drain reads the JVM's call counter every 500 ms).
async fn settled_counts(
    fixture: &Fixture,
    h: &SessionHandle,
    id: &str,
    probe: Probe,
) -> Result<Tally> {
    fixture.tell("pause")?;
    fixture.quiet().await?;
    let read = |p: &PointView| {
        p.probe.map(|c| Tally {
            probe,
            calls: c.calls,
            captured: p.captured,
            drops: c.drops,
        })
    };
    let mut last: Option<(u64, u64, u64)> = None;
    let mut tally = None;
    for _ in 0..12 {
        tokio::time::sleep(Duration::from_millis(700)).await;
        let now = view(h, id).await.as_ref().and_then(read);
        let key = now.map(|t| (t.calls, t.captured, t.drops));
        if key.is_some() && key == last {
            tally = now;
            break;
        }
        last = key;
    }
    fixture.tell("resume")?;
    tally.context("the probe's counters did not settle")
}

async fn run(s: &Settings) -> Result<String> {
    let fixture = Fixture::start(s)?;
    let hot = support::marked_line(FIXTURE, s.shape.hot);
    let l0 = load();
    // The JIT settles, then the program alone.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let alone = measure(&fixture, None, s.measure).await?;
    let engine = Engine::start(EngineConfig::default())
        .await
        .map_err(|e| anyhow!(e))?;
    let session = engine
        .attach(&attach_spec(fixture.port().await?, &fixture))
        .await?;
    tokio::time::sleep(s.settle).await;
    let mut bases = vec![measure(&fixture, None, s.measure).await?];
    let mut runs: Vec<Vec<(Probe, Phase)>> = Vec::new();
    let mut armings: Vec<Arming> = Vec::new();
    let mut tallies: Vec<Tally> = Vec::new();
    let mut checks: Vec<(Probe, Checked)> = Vec::new();
    let mut profiles: Vec<String> = Vec::new();
    for round in 0..s.rounds {
        let mut phases = Vec::new();
        for probe in s.probes.iter().copied() {
            if let Some(sampler) = probe.sampler() {
                let (p, base) = profile::phase(
                    &fixture,
                    &session,
                    s,
                    sampler,
                    (probe, round),
                    &mut profiles,
                )
                .await?;
                phases.push((probe, p));
                bases.push(base);
                continue;
            }
            fixture.mark(&format!("arming {}", probe.name()));
            let (id, arming) = arm(&session, &s.shape, probe, hot).await?;
            fixture.mark(&format!("armed {id}"));
            if probe == Probe::Capture {
                armings.push(arming);
            }
            tokio::time::sleep(s.settle.saturating_sub(arming.call)).await;
            let p = measure(&fixture, Some((&session, &id)), s.measure).await?;
            say(&format!(
                "round {}: {}: {:.0} calls/s, the JVM on {:.2} cores, {:.0} snapshots/s, jvmscope \
                 {:.0}% of a core, steal {:.0}%",
                round + 1,
                probe.name(),
                p.rate,
                p.jvm_cpu,
                p.snapshots,
                p.ours_cpu * 100.0,
                p.steal * 100.0
            ));
            if s.shape.named && probe.records_values() {
                let c = check_values(&session, &id).await?;
                say(&format!(
                    "  values: {} snapshots read, {} name a call of their thread in order, {} do \
                     not",
                    c.read, c.right, c.wrong
                ));
                checks.push((probe, c));
            }
            if probe.records() {
                let t = settled_counts(&fixture, &session, &id, probe).await?;
                say(&format!(
                    "  counters, workers parked: {} calls, {} captured + {} dropped = {}",
                    t.calls,
                    t.captured,
                    t.drops,
                    t.captured + t.drops
                ));
                tallies.push(t);
            }
            phases.push((probe, p));
            fixture.mark(&format!("clearing {id}"));
            session
                .clear_stop(&id)
                .await
                .map_err(|e| anyhow!("clearing {}: {e}", probe.name()))?;
            tokio::time::sleep(s.settle).await;
            let base = measure(&fixture, None, s.measure).await?;
            say(&format!(
                "round {}: unprobed: {:.0} calls/s, the JVM on {:.2} cores",
                round + 1,
                base.rate,
                base.jvm_cpu
            ));
            bases.push(base);
        }
        runs.push(phases);
    }
    let _ = session.disconnect().await;
    engine.shutdown().await;
    let kill = match s.probes.contains(&Probe::Capture) {
        true => Some(kill_child(&fixture, hot, s).await?),
        false => None,
    };
    let mut out = render(
        s,
        &fixture,
        hot,
        &l0,
        &alone,
        &bases,
        &runs,
        &armings,
        &tallies,
        &checks,
        kill.as_ref(),
    );
    if !profiles.is_empty() {
        out.push_str("\nwhat each profile said it cost and found:\n");
        out.push_str(&profiles.join("\n"));
        out.push('\n');
    }
    Ok(out)
}

fn attach_spec(port: u16, fixture: &Fixture) -> AttachSpec {
    AttachSpec {
        host: "127.0.0.1".into(),
        port,
        timeout: Duration::from_secs(10),
        read_only: false,
        source_roots: Vec::new(),
        class_roots: vec![fixture.classes.path().to_path_buf()],
    }
}
