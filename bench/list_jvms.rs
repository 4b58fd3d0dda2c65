//! Discovery bench: `Engine::list_jvms` (the whole of debug_list_jvms but
//! the rendering) on this machine as it is, and again with a few fixture
//! JVMs of each kind running (listening on a fixed port, so one handshake
//! each; waiting with suspend=y; no JDWP). Prints the processes read, the
//! JVMs found and the median, p90 and max wall time over the rounds.
//! Run: `cargo bench --bench list_jvms` (`-- --rounds 50 --jvms 3`).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use jvmscope::actors::{DiscoveryBudget, Engine, EngineConfig};

struct Args {
    rounds: usize,
    jvms: usize,
}

fn args() -> Args {
    let mut a = Args {
        rounds: 50,
        jvms: 3,
    };
    let argv: Vec<String> = std::env::args().collect();
    for w in argv.windows(2) {
        match w[0].as_str() {
            "--rounds" => a.rounds = w[1].parse().unwrap_or(a.rounds),
            "--jvms" => a.jvms = w[1].parse().unwrap_or(a.jvms),
            _ => {}
        }
    }
    a
}

/// Compiles the Ticker fixture into a temp dir.
fn compile() -> Result<tempfile::TempDir> {
    let dir = tempfile::Builder::new()
        .prefix("list-jvms-bench-")
        .tempdir()?;
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/java/Ticker.java");
    let ok = Command::new("javac")
        .arg("-d")
        .arg(dir.path())
        .arg(&src)
        .status()
        .context("javac")?
        .success();
    if !ok {
        bail!("javac failed on {}", src.display());
    }
    Ok(dir)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(0)
}

fn start(cp: &std::path::Path, agent: Option<String>) -> Result<Child> {
    let mut c = Command::new("java");
    if let Some(a) = agent {
        c.arg(a);
    }
    Ok(c.arg("-cp")
        .arg(cp)
        .arg("Ticker")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?)
}

#[allow(clippy::print_stdout)]
async fn rounds(engine: &Engine, n: usize, label: &str) {
    let mut times = Vec::with_capacity(n);
    let mut last = None;
    for _ in 0..n {
        let t = Instant::now();
        let l = engine.list_jvms(None, DiscoveryBudget::default()).await;
        times.push(t.elapsed());
        last = Some(l);
    }
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let l = last.expect("at least one round");
    println!(
        "{label:<28} processes={:<5} jvms={:<3} median={:.2} ms p90={:.2} ms max={:.2} ms",
        l.scanned,
        l.jvms.len(),
        ms(times[n / 2]),
        ms(times[n * 9 / 10]),
        ms(times[n - 1])
    );
}

#[tokio::main]
async fn main() -> Result<()> {
    let a = args();
    let engine = Engine::start(EngineConfig::default())
        .await
        .map_err(anyhow::Error::msg)?;
    rounds(&engine, a.rounds, "machine as it is").await;
    let classes = compile()?;
    let mut children = Vec::new();
    for _ in 0..a.jvms {
        let port = free_port();
        let fixed = format!(
            "-agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=127.0.0.1:{port}"
        );
        children.push(start(classes.path(), Some(fixed))?);
        let waiting =
            "-agentlib:jdwp=transport=dt_socket,server=y,suspend=y,address=127.0.0.1:0".to_string();
        children.push(start(classes.path(), Some(waiting))?);
        children.push(start(classes.path(), None)?);
    }
    // Let them reach their listening sockets.
    tokio::time::sleep(Duration::from_secs(2)).await;
    rounds(&engine, a.rounds, &format!("+{} fixture JVMs", 3 * a.jvms)).await;
    for mut c in children {
        let _ = c.kill();
        let _ = c.wait();
    }
    Ok(())
}
