//! Who holds an instance, answered from one heap dump: HotSpot writes the
//! dump through its attach socket (`GC.heap_dump -all`, no collection
//! first, so the pause is the writing alone) into a uniquely named file
//! under the JVM's own `java.io.tmpdir`, and jvmscope reads it outside the
//! JVM (`model::hprof`, `model::holders::from_dump`). One stop of the world
//! however long the chain, where JDWP needs a heap walk per hop. The file
//! is removed however the call ends: the work runs in a task of its own
//! that a cancelled call does not stop, which reads nothing once nobody
//! waits and removes the file when it ends.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use crate::discovery;
use crate::error::LocalError;
use crate::model::holders::from_dump::{DumpHolders, holders_in_dump};
use crate::model::hprof::Dump;

/// How long HotSpot may take to write the dump.
const DUMP_LIMIT: Duration = Duration::from_secs(120);
/// How long a small attach command may take.
const COMMAND_LIMIT: Duration = Duration::from_secs(30);

/// Names dump files uniquely within this server.
static SEQUENCE: AtomicU64 = AtomicU64::new(1);

/// What the dump cost and where it was.
#[derive(Debug, Clone)]
pub struct DumpRun {
    pub file: PathBuf,
    /// The dump's size.
    pub bytes: u64,
    /// How long the attach command took (an upper bound of the pause).
    pub wall: Duration,
    /// Safepoint time the JVM counted meanwhile (its perfdata).
    pub safepoint: Option<Duration>,
    /// The time the JVM itself reports for writing the dump.
    pub jvm_reported: Option<Duration>,
    /// How long jvmscope took to read the dump (our CPU, not the JVM's).
    pub read_took: Duration,
    /// Whether the file is gone.
    pub removed: bool,
}

impl DumpRun {
    /// The stop of the world the dump caused, stated high: the larger of
    /// the safepoint time (which leaves out the wait for threads to reach
    /// it) and the JVM's own report (which includes that wait), else the
    /// request's time.
    pub fn pause(&self) -> Duration {
        match (self.safepoint, self.jvm_reported) {
            (None, None) => self.wall,
            (s, r) => s.unwrap_or_default().max(r.unwrap_or_default()),
        }
    }
}

/// Dumps the heap of JVM `pid` and finds the chain to the nearest
/// instance of `class`; `None` when the dump holds no instance.
pub async fn holders_by_dump(
    pid: u32,
    class: String,
) -> Result<(Option<DumpHolders>, DumpRun), LocalError> {
    let (tx, rx) = oneshot::channel();
    tokio::spawn(async move {
        let answer = dump_and_read(pid, class, &tx).await;
        let _ = tx.send(answer);
    });
    rx.await.unwrap_or_else(|_| {
        Err(LocalError::HeapDump {
            pid,
            detail: "the dump task ended without an answer".into(),
        })
    })
}

/// Removes the dump file when dropped, whatever happened before.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

type Answer = Result<(Option<DumpHolders>, DumpRun), LocalError>;

async fn dump_and_read(pid: u32, class: String, waiting: &oneshot::Sender<Answer>) -> Answer {
    let fail = move |detail: String| LocalError::HeapDump { pid, detail };
    let (dir, version) = jvm_props(pid).await;
    // From JDK 21 HotSpot writes a dump with several threads into
    // segments that it then merges after the pause, while the program runs
    // again: on a small machine that merge competes with the program for
    // a core, so one writer it is.
    let parallel = if version >= 21 { " -parallel=1" } else { "" };
    let file = dir.join(format!(
        "jvmscope-heap-{}-{pid}-{}.hprof",
        std::process::id(),
        SEQUENCE.fetch_add(1, Ordering::Relaxed)
    ));
    let scratch = Scratch(file.clone());
    let before = discovery::safepoint_secs(pid).await;
    let started = Instant::now();
    let said = discovery::jcmd(
        pid,
        format!("GC.heap_dump -all{parallel} {}", quoted(&file)),
        DUMP_LIMIT,
    )
    .await?;
    let wall = started.elapsed();
    let safepoint = match (before, discovery::safepoint_secs(pid).await) {
        (Some(b), Some(a)) => Some(Duration::from_secs_f64((a - b).max(0.0))),
        _ => None,
    };
    if !said.contains("Heap dump file created") {
        return Err(fail(format!("GC.heap_dump: {}", said.trim())));
    }
    if waiting.is_closed() {
        return Err(fail("cancelled; the dump was removed unread".into()));
    }
    let read_started = Instant::now();
    let path = file.clone();
    let (done, result) = oneshot::channel();
    std::thread::Builder::new()
        .name("jvmscope-dump-reader".into())
        .spawn(move || {
            lower_priority();
            let _ = done.send(read_dump(pid, &path, &class));
        })
        .map_err(|e| fail(format!("no reader thread: {e}")))?;
    let read = result
        .await
        .map_err(|_| fail("the reader thread ended without an answer".into()))??;
    let read_took = read_started.elapsed();
    drop(scratch);
    let (found, bytes) = read;
    Ok((
        found,
        DumpRun {
            removed: !file.exists(),
            file,
            bytes,
            wall,
            safepoint,
            jvm_reported: reported_secs(&said),
            read_took,
        },
    ))
}

/// Reads the dump and finds the chain, with the dump's size.
fn read_dump(pid: u32, path: &Path, class: &str) -> Result<(Option<DumpHolders>, u64), LocalError> {
    let fail = |detail: String| LocalError::HeapDump { pid, detail };
    let bytes = std::fs::read(path).map_err(|e| fail(format!("{}: {e}", path.display())))?;
    let dump = Dump::parse(&bytes).map_err(|e| fail(e.to_string()))?;
    Ok((holders_in_dump(&dump, class), bytes.len() as u64))
}

/// Reading a dump is a second or so of a core: this thread yields it to
/// the JVM (and to anything else on the machine) whenever they want it.
#[cfg(target_os = "linux")]
#[expect(
    unsafe_code,
    reason = "setpriority and gettid take and return plain integers; they touch no memory of ours"
)]
fn lower_priority() {
    // SAFETY: see the reason above. A failure leaves the priority as it was.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, 10);
    }
}

#[cfg(not(target_os = "linux"))]
fn lower_priority() {}

/// A path as one argument of a diagnostic command.
fn quoted(path: &Path) -> String {
    let p = path.display().to_string();
    if p.contains(char::is_whitespace) {
        format!("\"{p}\"")
    } else {
        p
    }
}

/// The JVM's `java.io.tmpdir` (it can write there), else ours; and its
/// Java feature version (0 when unknown).
async fn jvm_props(pid: u32) -> (PathBuf, u32) {
    let props = discovery::jcmd(pid, "VM.system_properties".into(), COMMAND_LIMIT)
        .await
        .unwrap_or_default();
    let dir = tmpdir_of(&props)
        .filter(|d| d.is_dir())
        .unwrap_or_else(std::env::temp_dir);
    let version = props
        .lines()
        .find_map(|l| l.strip_prefix("java.specification.version="))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    (dir, version)
}

/// `java.io.tmpdir` in `VM.system_properties` output (properties-file
/// escapes: `\:`, `\\`).
fn tmpdir_of(props: &str) -> Option<PathBuf> {
    let raw = props
        .lines()
        .find_map(|l| l.strip_prefix("java.io.tmpdir="))?
        .trim_end();
    let mut out = String::new();
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        out.push(if c == '\\' { chars.next()? } else { c });
    }
    (!out.is_empty()).then(|| PathBuf::from(out))
}

/// The time in `Heap dump file created [N bytes in 0.071 secs]`.
fn reported_secs(said: &str) -> Option<Duration> {
    let secs: f64 = said
        .split(" in ")
        .nth(1)?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Duration::try_from_secs_f64(secs).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_jvms_report_and_tmpdir_are_read() {
        assert_eq!(
            reported_secs(
                "Dumping heap to /tmp/x ...\nHeap dump file created [48002180 bytes in 0.169 secs]"
            ),
            Some(Duration::from_millis(169))
        );
        assert_eq!(reported_secs("Unable to create /x: File exists"), None);
        let props = "#Fri\njava.home=/usr\njava.io.tmpdir=/var/tmp\\:x\nuser.dir=/w\n";
        assert_eq!(tmpdir_of(props), Some(PathBuf::from("/var/tmp:x")));
        assert_eq!(quoted(Path::new("/a b/c")), "\"/a b/c\"");
    }
}
