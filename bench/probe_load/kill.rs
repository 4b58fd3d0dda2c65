//! The SIGKILL measurement of the probe bench: a child jvmscope (this
//! binary, `--hold-probe`) arms the capture probe and is killed; the
//! program's way back is timed and the next attach must restore the class.

use std::io::BufRead;
use std::io::BufReader;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};

use jvmscope::actors::{Engine, EngineConfig, LeftoverOutcome};
use jvmscope::model::AttachSpec;

use super::probe::{Probe, Shape};
use super::{Fixture, Settings, arm, attach_spec, measure, support};

/// The kill measurement's figures.
pub struct Kill {
    /// The program with no debugger, before the child attached.
    pub detached: f64,
    /// While the child held the capture probe.
    pub held: f64,
    /// From SIGKILL to the end of the first of three windows in a row
    /// whose mean is at least 95% of `detached`.
    pub back: Option<Duration>,
    /// Calls/s in 250 ms steps after the kill, against `detached`.
    pub steps: Vec<f64>,
    /// After the next attach restored the class.
    pub restored: Vec<String>,
    pub after: f64,
}

/// The child of the kill measurement: attach, arm the capture probe, say
/// so, and wait to be killed.
pub async fn hold_probe(port: u16, root: PathBuf, hot: u32, shape: Shape) -> Result<()> {
    let engine = Engine::start(EngineConfig::default())
        .await
        .map_err(|e| anyhow!(e))?;
    let session = engine
        .attach(&AttachSpec {
            host: "127.0.0.1".into(),
            port,
            timeout: Duration::from_secs(10),
            read_only: false,
            source_roots: Vec::new(),
            class_roots: vec![root],
        })
        .await?;
    let (id, _) = arm(&session, &shape, Probe::Capture, hot).await?;
    support::report(&format!("armed {id}"));
    loop {
        tokio::time::sleep(Duration::from_secs(3600)).await;
    }
}

/// Starts a child jvmscope holding the capture probe, kills it with
/// SIGKILL, and times the program's way back.
pub async fn kill_child(fixture: &Fixture, hot: u32, s: &Settings) -> Result<Kill> {
    tokio::time::sleep(s.settle).await;
    let detached = measure(fixture, None, s.measure).await?.rate;
    let port = fixture.port().await?;
    let mut child = Command::new(std::env::current_exe()?)
        .arg("--shape")
        .arg(s.shape.name)
        .arg("--hold-probe")
        .arg(port.to_string())
        .arg(fixture.classes.path())
        .arg(hot.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("the child jvmscope")?;
    let out = child.stdout.take().context("the child's stdout")?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if line.starts_with("armed") {
                let _ = tx.send(());
            }
        }
    });
    let armed = tokio::task::spawn_blocking(move || rx.recv_timeout(Duration::from_secs(60)))
        .await?
        .is_ok();
    if !armed {
        let _ = child.kill();
        let _ = child.wait();
        bail!("the child jvmscope did not arm its probe");
    }
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let held = measure(fixture, None, Duration::from_secs(1)).await?.rate;
    let killed = Instant::now();
    child.kill()?; // SIGKILL
    let _ = child.wait();
    tokio::time::sleep(Duration::from_secs(5)).await;
    let windows = fixture.timeline(killed);
    let floor = 0.95 * detached;
    let back = windows.windows(3).find_map(|w| {
        let mean = w.iter().map(|(_, r)| r).sum::<f64>() / 3.0;
        (mean >= floor).then(|| Duration::from_secs_f64(w[0].0))
    });
    let steps = (0..16)
        .map(|k| {
            let (lo, hi) = (k as f64 * 0.25, (k + 1) as f64 * 0.25);
            let inside: Vec<f64> = windows
                .iter()
                .filter(|(t, _)| *t > lo && *t <= hi)
                .map(|(_, r)| *r)
                .collect();
            inside.iter().sum::<f64>() / inside.len().max(1) as f64 / detached
        })
        .collect();
    // The next attach gives the class its bytes back.
    let engine = Engine::start(EngineConfig::default())
        .await
        .map_err(|e| anyhow!(e))?;
    let session = engine
        .attach(&attach_spec(fixture.port().await?, fixture))
        .await?;
    let restored = session
        .restored_at_attach()
        .await
        .into_iter()
        .map(|l| match l.outcome {
            LeftoverOutcome::Restored => l.class,
            LeftoverOutcome::ChangedSince => format!("{} (left alone: changed since)", l.class),
            LeftoverOutcome::Failed(why) => format!("{} (failed: {why})", l.class),
        })
        .collect();
    tokio::time::sleep(s.settle).await;
    let after = measure(fixture, None, s.measure).await?.rate;
    let _ = session.disconnect().await;
    engine.shutdown().await;
    Ok(Kill {
        detached,
        held,
        back,
        steps,
        restored,
        after,
    })
}
