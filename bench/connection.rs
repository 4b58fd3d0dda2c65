//! Load bench: JDWP request throughput through the Connection actor against
//! one real JVM, serial (one request at a time) versus pipelined (windows
//! of 4, 8 and 32), all in one run so the ratios compare like with like;
//! and the latency from starting the `jvmscope` process to its reply to
//! `initialize`.
//!
//! Run: `cargo bench --bench connection` (needs a JDK on PATH or
//! JAVA_HOME). Figures go to docs/PERFORMANCE.md.

#[path = "support.rs"]
mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use futures::StreamExt;
use jvmscope::actors::{Engine, EngineConfig, SessionHandle};
use jvmscope::jdwp::virtual_machine::Version;
use jvmscope::model::AttachSpec;

const REQUESTS: usize = 4000;
const ROUNDS: usize = 5;

async fn throughput(session: &SessionHandle, window: usize) -> f64 {
    let conn = session.raw_connection().clone();
    let started = Instant::now();
    if window == 1 {
        for _ in 0..REQUESTS {
            conn.send(&Version).await.expect("Version");
        }
    } else {
        futures::stream::iter(0..REQUESTS)
            .map(|_| conn.send(&Version))
            .buffer_unordered(window)
            .for_each(|r| async move {
                r.expect("Version");
            })
            .await;
    }
    REQUESTS as f64 / started.elapsed().as_secs_f64()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn startup_latency() -> Vec<Duration> {
    let bin = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/release/jvmscope");
    let bin = if bin.exists() {
        bin
    } else {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/debug/jvmscope")
    };
    let mut out = Vec::new();
    for _ in 0..10 {
        let started = Instant::now();
        let mut child = Command::new(&bin)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("jvmscope binary (cargo build --release first)");
        let mut stdin = child.stdin.take().expect("stdin");
        writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"bench","version":"0"}}}}}}"#
        )
        .expect("write");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("read");
        out.push(started.elapsed());
        drop(stdin);
        let _ = child.wait();
    }
    out
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let (mut jvm, port) = support::start_fixture("Ticker", "ticker started", &[]);
    // The runtime the binary runs the engine on (ADR 0014).
    let runtime = jvmscope::actors::runtime::build().expect("runtime");
    runtime.block_on(async {
        let engine = Engine::start(EngineConfig::default()).await.expect("engine");
        let spec = AttachSpec {
            host: "127.0.0.1".into(),
            port,
            timeout: Duration::from_secs(5),
            read_only: false,
            source_roots: vec![],
            class_roots: vec![],
        };
        let session = engine.attach(&spec).await.expect("attach");
        throughput(&session, 32).await; // warm-up
        support::report(&format!(
            "JDWP VirtualMachine.Version round trips, {REQUESTS} per round, median of {ROUNDS} rounds"
        ));
        support::report("| in flight | requests/s | vs serial |\n|---|---|---|");
        let mut serial = 0.0;
        for window in [1usize, 4, 8, 32] {
            let mut rounds = Vec::new();
            for _ in 0..ROUNDS {
                rounds.push(throughput(&session, window).await);
            }
            let m = median(rounds);
            if window == 1 {
                serial = m;
            }
            support::report(&format!("| {window} | {m:.0} | {:.2}x |", m / serial));
        }
        session.disconnect().await.expect("disconnect");
        engine.shutdown().await;
    });
    let _ = jvm.kill();
    let _ = jvm.wait();
    let mut lat = startup_latency();
    lat.sort();
    support::report(&format!(
        "\nprocess start -> initialize reply, 10 runs: min {:.1} ms, median {:.1} ms, max {:.1} ms",
        lat[0].as_secs_f64() * 1e3,
        lat[lat.len() / 2].as_secs_f64() * 1e3,
        lat[lat.len() - 1].as_secs_f64() * 1e3
    ));
}
