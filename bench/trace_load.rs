//! Load bench: trace capture on a hot, contended line of the TraceLoad
//! fixture (4 busy threads by default), jvmscope against a minimal raw-JDWP
//! client doing the same reads, in one run on one JVM:
//!
//! 1. the fixture alone (its own ops/s);
//! 2. raw client, capturing: a breakpoint at EVENT_THREAD; per hit
//!    `Frames(0, 4)`, `GetValues` of the four locals, `Resume`, one after
//!    the other, hits overlapping; then the string local's contents;
//! 3. jvmscope, capturing: a traced line stop, `trace_frames:3`, all
//!    locals, no budget;
//! 4. raw client, suspension-free: the breakpoint at policy NONE, events
//!    counted;
//! 5. jvmscope, suspension-free: `trace_frames:0`, `trace_locals:none`.
//!
//! Prints a table: rates, each against the raw client, the traced
//! thread's hold per hit (median, p99) and the fixture's throughput.
//! Run: `cargo bench --bench trace_load` (`-- --threads 8 --seconds 10`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};

use jvmscope::actors::{Engine, EngineConfig, SessionHandle};
use jvmscope::jdwp::command::{Command as JdwpCommand, decode_reply, encode_request};
use jvmscope::jdwp::event_request::{Clear, Set};
use jvmscope::jdwp::method::{LineTable, VariableTable};
use jvmscope::jdwp::packet::{CommandPacket, FrameDecoder, Packet};
use jvmscope::jdwp::reference_type::Methods;
use jvmscope::jdwp::stack_frame::{GetValues, SlotRequest};
use jvmscope::jdwp::thread_reference::{Frames, Resume};
use jvmscope::jdwp::virtual_machine::{ClassesBySignature, Dispose, IdSizesCmd};
use jvmscope::jdwp::{
    Composite, Event, EventKind, IdSizes, Location, Modifier, RequestId, SuspendPolicy, Tag,
    ThreadId, TypeTag, Value,
};
use jvmscope::model::AttachSpec;
use jvmscope::model::stop_point::{
    Filters, LineSpec, LocalsChoice, Mode, StopPointSpec, Target, TraceSpec,
};

const FIXTURE: &str = "TraceLoad";

#[allow(clippy::print_stdout)]
fn main() -> Result<()> {
    let mut threads = 4;
    let mut seconds = 5u64;
    let mut phases = "raw-capture,ours-capture,raw-free,ours-free".to_string();
    let mut rounds = 3usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--threads" => threads = args.next().context("--threads N")?.parse()?,
            "--seconds" => seconds = args.next().context("--seconds N")?.parse()?,
            "--phases" => phases = args.next().context("--phases a,b")?,
            "--rounds" => rounds = args.next().context("--rounds N")?.parse()?,
            _ => {} // cargo bench passes --bench
        }
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let report = rt.block_on(run(
        threads,
        Duration::from_secs(seconds),
        &phases,
        rounds.max(1),
    ))?;
    println!("{report}");
    Ok(())
}

/// The fixture, compiled and running with a JDWP agent.
struct Fixture {
    child: Child,
    /// Every port the agent announced: it listens again, on a new ephemeral
    /// port, after each debugger detaches.
    ports: Arc<Mutex<Vec<u16>>>,
    used: AtomicU32,
    ops: Arc<Mutex<Vec<(Instant, u64)>>>,
    _classes: tempfile::TempDir,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Fixture {
    fn start(threads: usize) -> Result<Fixture> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let source = root.join("tests/data/java").join(format!("{FIXTURE}.java"));
        let home = std::env::var_os("JAVA_HOME").map(PathBuf::from);
        let tool = |name: &str| match &home {
            Some(h) if h.join("bin").join(name).is_file() => h.join("bin").join(name),
            _ => PathBuf::from(name),
        };
        let classes = tempfile::tempdir()?;
        let status = Command::new(tool("javac"))
            .args(["-g", "--release", "17", "-d"])
            .arg(classes.path())
            .arg(&source)
            .status()
            .context("javac (a JDK 17+ is needed)")?;
        if !status.success() {
            bail!("javac failed on {}", source.display());
        }
        let mut child = Command::new(tool("java"))
            .arg("-agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=127.0.0.1:0")
            .arg("-cp")
            .arg(classes.path())
            .arg(FIXTURE)
            .arg(threads.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("java")?;
        let stdout = child.stdout.take().context("stdout")?;
        let ops = Arc::new(Mutex::new(Vec::new()));
        let ports = Arc::new(Mutex::new(Vec::new()));
        let announced = ports.clone();
        let sink = ops.clone();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                if let Some(p) = line.strip_prefix("Listening for transport dt_socket at address:")
                {
                    if let (Ok(p), Ok(mut v)) = (p.trim().parse::<u16>(), announced.lock()) {
                        v.push(p);
                    }
                } else if let Some(n) = line.strip_prefix("ops/s ")
                    && let (Ok(n), Ok(mut v)) = (n.trim().parse(), sink.lock())
                {
                    v.push((Instant::now(), n));
                }
            }
        });
        Ok(Fixture {
            child,
            ports,
            used: AtomicU32::new(0),
            ops,
            _classes: classes,
        })
    }

    /// The port of the next attach (waits for the agent to listen again).
    async fn port(&self) -> Result<u16> {
        let want = self.used.fetch_add(1, Ordering::Relaxed) as usize + 1;
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(p) = self
                .ports
                .lock()
                .ok()
                .and_then(|v| (v.len() >= want).then(|| v[want - 1]))
            {
                return Ok(p);
            }
            if Instant::now() > deadline {
                bail!("the JDWP agent did not listen again");
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Mean ops/s reported between two instants.
    fn ops_between(&self, from: Instant, to: Instant) -> Option<f64> {
        let v = self.ops.lock().ok()?;
        let inside: Vec<u64> = v
            .iter()
            .filter(|(t, _)| *t > from + Duration::from_millis(900) && *t <= to)
            .map(|(_, n)| *n)
            .collect();
        (!inside.is_empty()).then(|| inside.iter().sum::<u64>() as f64 / inside.len() as f64)
    }

    fn hot_line() -> Result<u32> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let text =
            std::fs::read_to_string(root.join("tests/data/java").join(format!("{FIXTURE}.java")))?;
        text.lines()
            .position(|l| l.contains("// LINE: hot"))
            .map(|i| i as u32 + 1)
            .context("no // LINE: hot marker")
    }
}

/// CPU time this process has used (user + system), from /proc.
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which is in parentheses).
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 here.
    let ticks = f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0);
    Duration::from_millis(ticks * 10)
}

/// One phase's figures.
#[derive(Default, Clone)]
struct Phase {
    name: &'static str,
    /// Debugger CPU per hit (this process), µs.
    cpu_per_hit: Option<f64>,
    rate: f64,
    p50: Option<Duration>,
    p99: Option<Duration>,
    app_ops: Option<f64>,
}

/// The median run of a phase, with the spread of its rates.
fn median(mut runs: Vec<Phase>) -> (Phase, f64, f64) {
    runs.sort_by(|a, b| a.rate.total_cmp(&b.rate));
    let lo = runs.first().map(|p| p.rate).unwrap_or(0.0);
    let hi = runs.last().map(|p| p.rate).unwrap_or(0.0);
    let mid = runs.get(runs.len() / 2).cloned().unwrap_or_default();
    (mid, lo, hi)
}

async fn run(threads: usize, d: Duration, phases: &str, rounds: usize) -> Result<String> {
    let fixture = Fixture::start(threads)?;
    let line = Fixture::hot_line()?;
    // Warm up, then the fixture alone.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let t0 = Instant::now();
    tokio::time::sleep(d).await;
    let alone = Phase {
        name: "fixture alone",
        app_ops: fixture.ops_between(t0, Instant::now()),
        ..Phase::default()
    };
    let on = |p: &str| phases.split(',').any(|x| x.trim() == p);
    // Rounds interleave the clients, so a machine that gets busier (other
    // builds share these two cores) weighs on both alike.
    let mut results: [Vec<Phase>; 4] = Default::default();
    for _ in 0..rounds {
        if on("raw-capture") {
            results[0].push(raw_phase(&fixture, line, SuspendPolicy::EventThread, d).await?);
        }
        if on("ours-capture") {
            results[1].push(jvmscope_phase(&fixture, line, false, d).await?);
        }
        if on("raw-free") {
            results[2].push(raw_phase(&fixture, line, SuspendPolicy::None, d).await?);
        }
        if on("ours-free") {
            results[3].push(jvmscope_phase(&fixture, line, true, d).await?);
        }
    }
    let [raw_capture, ours_capture, raw_free, ours_free] = results.map(median_or_skipped);

    let ms = |d: Option<Duration>| match d {
        Some(d) => format!("{:.3}", d.as_secs_f64() * 1e3),
        None => "-".into(),
    };
    let mut out = format!(
        "trace_load: {threads} busy threads on {FIXTURE}:{line}, {}s per phase, median of {rounds} \
         interleaved rounds\n\n\
         | phase | hits/s (median) | range | vs raw | hold p50 ms | hold p99 ms | debugger CPU µs/hit | fixture ops/s |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|\n",
        d.as_secs()
    );
    let row = |(p, lo, hi): &(Phase, f64, f64), base: Option<&(Phase, f64, f64)>| {
        format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
            p.name,
            if p.rate > 0.0 {
                format!("{:.0}", p.rate)
            } else {
                "-".into()
            },
            if *hi > 0.0 {
                format!("{lo:.0}–{hi:.0}")
            } else {
                "-".into()
            },
            match base {
                Some((b, _, _)) if b.rate > 0.0 && p.rate > 0.0 => {
                    format!("{:.0}%", 100.0 * p.rate / b.rate)
                }
                _ => "-".into(),
            },
            ms(p.p50),
            ms(p.p99),
            p.cpu_per_hit
                .map(|c| format!("{c:.1}"))
                .unwrap_or_else(|| "-".into()),
            p.app_ops
                .map(|o| format!("{o:.0}"))
                .unwrap_or_else(|| "-".into()),
        )
    };
    out.push_str(&row(&(alone, 0.0, 0.0), None));
    out.push_str(&row(&raw_capture, None));
    out.push_str(&row(&ours_capture, Some(&raw_capture)));
    out.push_str(&row(&raw_free, None));
    out.push_str(&row(&ours_free, Some(&raw_free)));
    out.push_str(
        "\nhits/s: snapshots recorded (capture) or events counted (NONE) per second. hold: from \
         the event's arrival at the debugger to the resume's reply (jvmscope: histogram bucket \
         bounds, ±25%).\n",
    );
    Ok(out)
}

fn median_or_skipped(runs: Vec<Phase>) -> (Phase, f64, f64) {
    if runs.is_empty() {
        (
            Phase {
                name: "(skipped)",
                ..Phase::default()
            },
            0.0,
            0.0,
        )
    } else {
        median(runs)
    }
}

fn hot_spec(line: u32, free: bool) -> StopPointSpec {
    let trace = if free {
        TraceSpec {
            frames: 0,
            locals: LocalsChoice::None,
            max_hits: 0,
            ..TraceSpec::default()
        }
    } else {
        TraceSpec {
            frames: 3,
            locals: LocalsChoice::All,
            max_hits: 0,
            ..TraceSpec::default()
        }
    };
    StopPointSpec {
        target: Target::Line(LineSpec {
            class: FIXTURE.into(),
            method: None,
            line: Some(line),
        }),
        mode: Mode::Trace(trace),
        // The bench measures capture at full rate: the overhead guard,
        // which would pause a stop point this costly, is off.
        filters: Filters {
            overhead_pct: Some(0),
            ..Filters::default()
        },
    }
}

async fn jvmscope_phase(fixture: &Fixture, line: u32, free: bool, d: Duration) -> Result<Phase> {
    let engine = Engine::start(EngineConfig::default())
        .await
        .map_err(|e| anyhow!(e))?;
    let spec = AttachSpec {
        host: "127.0.0.1".into(),
        port: fixture.port().await?,
        timeout: Duration::from_secs(10),
        read_only: false,
        source_roots: Vec::new(),
        class_roots: Vec::new(),
    };
    let handle: SessionHandle = engine.attach(&spec).await?;
    let report = handle
        .stop_points()
        .arm(hot_spec(line, free), 1)
        .await
        .map_err(|e| anyhow!("{e}"))?;
    let id = report.point.context("a stop point")?.id;
    let count = |l: &jvmscope::actors::Listing| {
        l.points
            .iter()
            .find(|p| p.id == id)
            .map(|p| p.captured)
            .unwrap_or(0)
    };
    // Let the first hits fill the caches, then measure.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = count(&handle.stop_points().list().await);
    let t0 = Instant::now();
    let c0 = cpu_time();
    tokio::time::sleep(d).await;
    let listing = handle.stop_points().list().await;
    let t1 = Instant::now();
    let c1 = cpu_time();
    let after = count(&listing);
    let cost = listing
        .points
        .iter()
        .find(|p| p.id == id)
        .map(|p| p.cost)
        .unwrap_or_default();
    let _ = handle.stop_points().clear(&id).await;
    let _ = handle.disconnect().await;
    engine.shutdown().await;
    Ok(Phase {
        name: if free {
            "jvmscope, suspension-free"
        } else {
            "jvmscope, capture"
        },
        rate: (after - before) as f64 / t1.duration_since(t0).as_secs_f64(),
        cpu_per_hit: (after > before)
            .then(|| (c1 - c0).as_secs_f64() * 1e6 / (after - before) as f64),
        p50: if free { None } else { cost.p50 },
        p99: if free { None } else { cost.p99 },
        app_ops: fixture.ops_between(t0, t1),
    })
}

/// Requests waiting for their reply, by packet id.
type Pending = Arc<Mutex<HashMap<u32, oneshot::Sender<(u16, Vec<u8>)>>>>;

/// A minimal JDWP client: one reader, one writer, replies matched by id.
struct Raw {
    sizes: IdSizes,
    next: AtomicU32,
    pending: Pending,
    out: mpsc::UnboundedSender<Vec<u8>>,
}

impl Raw {
    async fn connect(port: u16) -> Result<(Arc<Raw>, mpsc::UnboundedReceiver<Vec<u8>>)> {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await?;
        stream.set_nodelay(true)?;
        stream.write_all(b"JDWP-Handshake").await?;
        let mut hs = [0u8; 14];
        stream.read_exact(&mut hs).await?;
        if &hs != b"JDWP-Handshake" {
            bail!("no JDWP handshake");
        }
        let (mut rd, mut wr) = stream.into_split();
        let (out, mut out_rx) = mpsc::unbounded_channel::<Vec<u8>>();
        tokio::spawn(async move {
            while let Some(b) = out_rx.recv().await {
                if wr.write_all(&b).await.is_err() {
                    return;
                }
            }
        });
        let pending: Pending = Arc::new(Mutex::new(HashMap::new()));
        let (ev_tx, ev_rx) = mpsc::unbounded_channel();
        let p2 = pending.clone();
        tokio::spawn(async move {
            let mut dec = FrameDecoder::new(64 * 1024 * 1024);
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                let n = match rd.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                dec.push(&buf[..n]);
                while let Ok(Some(packet)) = dec.next_packet() {
                    match packet {
                        Packet::Reply(r) => {
                            let tx = p2.lock().ok().and_then(|mut m| m.remove(&r.id));
                            if let Some(tx) = tx {
                                let _ = tx.send((r.error_code, r.data));
                            }
                        }
                        Packet::Command(c) => {
                            let _ = ev_tx.send(c.data);
                        }
                    }
                }
            }
        });
        let mut raw = Raw {
            sizes: IdSizes::HOTSPOT,
            next: AtomicU32::new(1),
            pending,
            out,
        };
        raw.sizes = raw.send(&IdSizesCmd).await?;
        Ok((Arc::new(raw), ev_rx))
    }

    fn send<C: JdwpCommand>(&self, cmd: &C) -> impl Future<Output = Result<C::Reply>> + use<C> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        if let Ok(mut m) = self.pending.lock() {
            m.insert(id, tx);
        }
        let packet = CommandPacket {
            id,
            command_set: C::SET,
            command: C::ID,
            data: encode_request(cmd, self.sizes),
        }
        .encode();
        let sent = self.out.send(packet);
        let sizes = self.sizes;
        async move {
            sent.map_err(|_| anyhow!("connection closed"))?;
            let (code, data) = rx.await?;
            if code != 0 {
                bail!("{} failed: error {code}", C::NAME);
            }
            decode_reply::<C>(&data, sizes).map_err(|e| anyhow!("{}: {e:?}", C::NAME))
        }
    }
}

/// The hot location and the slots of its locals.
async fn resolve(raw: &Raw, line: u32) -> Result<(Location, Vec<SlotRequest>)> {
    let class = raw
        .send(&ClassesBySignature {
            signature: format!("L{FIXTURE};"),
        })
        .await?
        .into_iter()
        .next()
        .context("the fixture class is not loaded")?
        .ref_type
        .id;
    for m in raw.send(&Methods { ref_type: class }).await? {
        let Ok(table) = raw
            .send(&LineTable {
                ref_type: class,
                method: m.method_id,
            })
            .await
        else {
            continue;
        };
        let Some(entry) = table.lines.iter().find(|e| e.line_number == line as i32) else {
            continue;
        };
        let index = entry.line_code_index;
        let vars = raw
            .send(&VariableTable {
                ref_type: class,
                method: m.method_id,
            })
            .await?;
        let slots = vars
            .slots
            .iter()
            .filter(|v| index >= v.code_index && index < v.code_index + i64::from(v.length))
            .map(|v| SlotRequest {
                slot: v.slot,
                sig_byte: Tag::from_signature(&v.signature),
            })
            .collect();
        return Ok((
            Location {
                type_tag: TypeTag::Class,
                class,
                method: m.method_id,
                index: index as u64,
            },
            slots,
        ));
    }
    bail!("no code at line {line}")
}

async fn raw_phase(
    fixture: &Fixture,
    line: u32,
    policy: SuspendPolicy,
    d: Duration,
) -> Result<Phase> {
    let (raw, events) = Raw::connect(fixture.port().await?).await?;
    let (location, slots) = resolve(&raw, line).await?;
    let request: RequestId = raw
        .send(&Set {
            event_kind: EventKind::Breakpoint,
            suspend_policy: policy,
            modifiers: vec![Modifier::LocationOnly { location }],
        })
        .await?;
    let tally = Arc::new(Tally::default());
    let handler = tokio::spawn(handle_events(
        raw.clone(),
        events,
        Arc::new(slots),
        tally.clone(),
    ));
    tokio::time::sleep(Duration::from_millis(500)).await;
    tally.measuring.store(true, Ordering::Relaxed);
    let t0 = Instant::now();
    let c0 = cpu_time();
    tokio::time::sleep(d).await;
    tally.measuring.store(false, Ordering::Relaxed);
    let t1 = Instant::now();
    let c1 = cpu_time();
    let n = tally.done.load(Ordering::Relaxed);
    let _ = raw
        .send(&Clear {
            event_kind: EventKind::Breakpoint,
            request_id: request,
        })
        .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let _ = raw.send(&Dispose).await;
    handler.abort();
    let mut h = tally.holds.lock().map(|h| h.clone()).unwrap_or_default();
    h.sort();
    let q = |f: f64| (!h.is_empty()).then(|| h[((h.len() as f64 * f) as usize).min(h.len() - 1)]);
    Ok(Phase {
        name: if policy == SuspendPolicy::None {
            "raw client, NONE policy"
        } else {
            "raw client, capture"
        },
        rate: n as f64 / t1.duration_since(t0).as_secs_f64(),
        cpu_per_hit: (n > 0).then(|| (c1 - c0).as_secs_f64() * 1e6 / n as f64),
        p50: q(0.5),
        p99: q(0.99),
        app_ops: fixture.ops_between(t0, t1),
    })
}

/// What the raw client's hits add up to while a phase measures.
#[derive(Default)]
struct Tally {
    /// Hits handled (captured, or counted under policy NONE).
    done: AtomicU64,
    /// How long each captured hit held its thread.
    holds: Mutex<Vec<Duration>>,
    /// Set for the measured window only, so warm-up hits are not counted.
    measuring: AtomicBool,
}

/// The raw client's event loop: a hit under policy NONE is only counted;
/// a suspending hit is captured in its own task.
async fn handle_events(
    raw: Arc<Raw>,
    mut events: mpsc::UnboundedReceiver<Vec<u8>>,
    slots: Arc<Vec<SlotRequest>>,
    tally: Arc<Tally>,
) {
    let sizes = raw.sizes;
    while let Some(data) = events.recv().await {
        let received = Instant::now();
        let Ok(composite) = Composite::decode_data(&data, sizes) else {
            continue;
        };
        for e in composite.events {
            let Event::Breakpoint { thread, .. } = e else {
                continue;
            };
            if composite.suspend_policy == SuspendPolicy::None {
                if tally.measuring.load(Ordering::Relaxed) {
                    tally.done.fetch_add(1, Ordering::Relaxed);
                }
                continue;
            }
            // Hits overlap; each capture's reads go one after another.
            tokio::spawn(capture(
                raw.clone(),
                thread,
                slots.clone(),
                received,
                tally.clone(),
            ));
        }
    }
}

/// One suspending hit, as a minimal debugger would take it: the top
/// frames, the locals, resume, then the string local's contents.
async fn capture(
    raw: Arc<Raw>,
    thread: ThreadId,
    slots: Arc<Vec<SlotRequest>>,
    received: Instant,
    tally: Arc<Tally>,
) {
    let frames = raw
        .send(&Frames {
            thread,
            start_frame: 0,
            length: 4,
        })
        .await;
    let values = match frames.as_ref().ok().and_then(|f| f.first()) {
        Some(top) => raw
            .send(&GetValues {
                thread,
                frame: top.frame_id,
                slots: slots.to_vec(),
            })
            .await
            .ok(),
        None => None,
    };
    let _ = raw.send(&Resume { thread }).await;
    let held = received.elapsed();
    for v in values.unwrap_or_default() {
        if let Value::Object {
            tag: Tag::String,
            id,
        } = v
        {
            let _ = raw
                .send(&jvmscope::jdwp::string_reference::Value { string_object: id })
                .await;
        }
    }
    if tally.measuring.load(Ordering::Relaxed) {
        tally.done.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut h) = tally.holds.lock() {
            h.push(held);
        }
    }
}
