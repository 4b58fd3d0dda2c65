//! A profile recorded by the JVM's own flight recorder, driven through the
//! attach socket as `jcmd` drives it: `JFR.start` with the `profile`
//! settings and a duration a little past the one asked for (so the
//! recording ends by itself even if jvmscope dies mid-way), a wait,
//! `JFR.stop` writing the file into a scratch directory of ours,
//! `JFR.check` to see that nothing of ours is left recording, then the
//! JDK's `jfr print` of that JVM's own home read as it streams
//! (`decode`). The scratch directory goes when the call ends, however it
//! ends.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use super::decode::{self, DecodeError};
use crate::discovery;
use crate::error::LocalError;
use crate::model::profile::Profile;

/// How long one attach command may take (JFR's first start in a JVM loads
/// and initialises the recorder: about a second).
const COMMAND_LIMIT: Duration = Duration::from_secs(30);
/// How far past the asked duration the recording is told to end by itself.
pub const SELF_STOP_MARGIN: Duration = Duration::from_secs(10);

/// Names recordings uniquely within this server.
static SEQUENCE: AtomicU64 = AtomicU64::new(1);

/// What the flight recorder run did.
#[derive(Debug, Clone)]
pub struct JfrRun {
    /// The recording's name in the JVM (`jvmscope-<our pid>-<n>`).
    pub recording: String,
    /// The `jfr` tool that read the file.
    pub tool: PathBuf,
    /// Execution samples read from the file.
    pub samples_read: u64,
    /// How long reading the file took (our CPU, not the JVM's).
    pub read_took: Duration,
    /// The scratch file the JVM wrote, and whether it is gone.
    pub file: PathBuf,
    pub file_removed: bool,
    /// `JFR.check` still listed our recording afterwards (`None`: the
    /// check itself failed).
    pub left_running: Option<bool>,
}

/// Records `duration` of the JVM `pid` and reads its execution samples.
/// `stop` resolving (its sender dropped: the call was cancelled) ends the
/// recording early, discarded.
pub async fn record(
    pid: u32,
    duration: Duration,
    mut stop: oneshot::Receiver<()>,
) -> Result<(Profile, JfrRun), LocalError> {
    let fail = |detail: String| LocalError::Jfr { pid, detail };
    let home = discovery::java_home(pid)
        .ok_or_else(|| fail("its Java home is not readable from /proc/<pid>/exe".into()))?;
    let tool = home.join("bin").join("jfr");
    if !tool.is_file() {
        return Err(fail(format!(
            "{} has no bin/jfr to read a recording with (a JRE?)",
            home.display()
        )));
    }
    let dir = tempfile::Builder::new()
        .prefix("jvmscope-profile-")
        .tempdir()
        .map_err(|e| fail(format!("no scratch directory: {e}")))?;
    let file = dir.path().join("profile.jfr");
    let recording = format!(
        "jvmscope-{}-{}",
        std::process::id(),
        SEQUENCE.fetch_add(1, Ordering::Relaxed)
    );
    let started = discovery::jcmd(
        pid,
        format!(
            "JFR.start name={recording} settings=profile duration={}ms filename={}",
            (duration + SELF_STOP_MARGIN).as_millis(),
            file.display()
        ),
        COMMAND_LIMIT,
    )
    .await?;
    if !started.contains("Started recording") {
        return Err(fail(format!("JFR.start: {}", started.trim())));
    }
    let cancelled = tokio::select! {
        () = tokio::time::sleep(duration) => false,
        _ = &mut stop => true,
    };
    let stop_line = if cancelled {
        format!("JFR.stop name={recording}")
    } else {
        format!("JFR.stop name={recording} filename={}", file.display())
    };
    let stopped = discovery::jcmd(pid, stop_line, COMMAND_LIMIT).await;
    let check = discovery::jcmd(pid, format!("JFR.check name={recording}"), COMMAND_LIMIT).await;
    let left_running = check
        .ok()
        .map(|t| t.contains(&format!("name={recording} ")));
    if cancelled {
        return Err(fail(
            "cancelled; the recording was stopped and discarded".into(),
        ));
    }
    let stopped = stopped?;
    if !stopped.contains("Stopped recording") {
        return Err(fail(format!("JFR.stop: {}", stopped.trim())));
    }
    // A cancel that comes while the file is read ends the read.
    let halt = Arc::new(AtomicBool::new(false));
    let flag = halt.clone();
    let watcher = tokio::spawn(async move {
        if stop.await.is_err() {
            flag.store(true, Ordering::Relaxed);
        }
    });
    let read_started = Instant::now();
    let (tool_used, path) = (tool.clone(), file.clone());
    let read = tokio::task::spawn_blocking(move || read_file(&tool_used, &path, &halt))
        .await
        .unwrap_or_else(|e| Err(ReadError::Reader(e.to_string())));
    watcher.abort();
    let read_took = read_started.elapsed();
    let dir_path = dir.path().to_path_buf();
    drop(dir);
    let file_removed = !file.exists() && !dir_path.exists();
    let (profile, samples_read) = read.map_err(|e| fail(e.to_string()))?;
    Ok((
        profile,
        JfrRun {
            recording,
            tool,
            samples_read,
            read_took,
            file,
            file_removed,
            left_running,
        },
    ))
}

/// Why the recording's samples could not be read.
#[derive(Debug, thiserror::Error)]
enum ReadError {
    #[error("scratch file: {0}")]
    Scratch(std::io::Error),
    #[error("cannot run {tool}: {source}")]
    Spawn {
        tool: PathBuf,
        source: std::io::Error,
    },
    #[error("jfr print: {0}")]
    Wait(std::io::Error),
    #[error("jfr print exited {status}: {said}")]
    Exited {
        status: std::process::ExitStatus,
        said: String,
    },
    #[error("cancelled while the recording was read")]
    Cancelled,
    #[error("jfr print's output could not be read ({detail}); it said: {said}")]
    Unreadable { detail: String, said: String },
    #[error("the reader failed: {0}")]
    Reader(String),
}

/// Runs `jfr print` over the recording and reads its samples.
fn read_file(tool: &Path, file: &Path, halt: &AtomicBool) -> Result<(Profile, u64), ReadError> {
    let errors = file.with_extension("stderr");
    let stderr = std::fs::File::create(&errors).map_err(ReadError::Scratch)?;
    let mut child = Command::new(tool)
        .args(["print", "--stack-depth", "64"])
        .args(["--events", "jdk.ExecutionSample"])
        .arg(file)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(stderr))
        .spawn()
        .map_err(|source| ReadError::Spawn {
            tool: tool.to_path_buf(),
            source,
        })?;
    let mut profile = Profile::default();
    let decoded = match child.stdout.take() {
        Some(out) => decode::read_samples(out, &mut profile, &mut || !halt.load(Ordering::Relaxed)),
        None => Err(DecodeError::Read("no output".into())),
    };
    if decoded.is_err() {
        let _ = child.kill();
    }
    let status = child.wait().map_err(ReadError::Wait)?;
    let said = std::fs::read_to_string(&errors)
        .unwrap_or_default()
        .trim()
        .to_string();
    match decoded {
        Ok(n) if status.success() => Ok((profile, n)),
        Ok(_) => Err(ReadError::Exited { status, said }),
        Err(DecodeError::Stopped) => Err(ReadError::Cancelled),
        Err(DecodeError::Read(detail)) => Err(ReadError::Unreadable { detail, said }),
    }
}
