//! Shared by the load benches: compile a Java fixture from tests/data/java
//! and start it under a JDWP agent on a loopback port, print a line,
//! read how much of the CPU the hypervisor took (steal time), and read a
//! tool reply's text.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// A JDK tool: `$JAVA_HOME/bin/<tool>`, else on PATH.
pub fn jdk(tool: &str) -> PathBuf {
    std::env::var_os("JAVA_HOME")
        .map(|h| PathBuf::from(h).join("bin").join(tool))
        .filter(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from(tool))
}

/// Compiles `tests/data/java/<class>.java` (with `-g`, release 17) into
/// `dir` with `javac`; `Err` says why it did not.
pub fn compile_fixture(javac: &Path, class: &str, dir: &Path) -> Result<(), String> {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/java")
        .join(format!("{class}.java"));
    let status = Command::new(javac)
        .args(["-g", "--release", "17", "-d"])
        .arg(dir)
        .arg(&src)
        .status()
        .map_err(|e| format!("javac (a JDK 17+ is needed): {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("javac failed on {}", src.display()))
    }
}

/// The first line `java -version` prints (empty when it cannot run).
pub fn java_version(java: &Path) -> String {
    Command::new(java)
        .arg("-version")
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .next()
                .map(str::to_string)
        })
        .unwrap_or_default()
}

/// Prints one line of results.
pub fn report(line: &str) {
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}

/// Compiles `tests/data/java/<class>.java` (with `-g`) and runs it with a
/// JDWP agent; returns the process and its JDWP port once `ready` (a
/// substring of a line) was printed. Later output is drained.
pub fn start_fixture(class: &str, ready: &str, args: &[&str]) -> (Child, u16) {
    start_fixture_on(class, ready, args, 0)
}

/// As [`start_fixture`], on a fixed JDWP `port` (0: any). On a fixed port
/// the agent listens again on the same address after each debugger lets
/// go, so a bench can attach anew, process after process.
pub fn start_fixture_on(class: &str, ready: &str, args: &[&str], port: u16) -> (Child, u16) {
    start_fixture_in(None, class, ready, args, port)
}

/// The directory [`start_fixture`] compiles `class` into.
pub fn classes_dir(class: &str) -> PathBuf {
    std::env::temp_dir().join(format!("jvmscope-bench-{class}-{}", std::process::id()))
}

/// As [`start_fixture_on`], with the JDK at `home` (else [`jdk`]'s).
pub fn start_fixture_in(
    home: Option<&std::path::Path>,
    class: &str,
    ready: &str,
    args: &[&str],
    port: u16,
) -> (Child, u16) {
    start_fixture_feeding(home, class, ready, args, port, |_| {})
}

/// As [`start_fixture_in`]; every line the fixture prints after `ready`
/// goes to `feed` (on a thread of its own).
pub fn start_fixture_feeding(
    home: Option<&std::path::Path>,
    class: &str,
    ready: &str,
    args: &[&str],
    port: u16,
    feed: impl FnMut(String) + Send + 'static,
) -> (Child, u16) {
    start_fixture_with(home, class, ready, &[], args, port, feed)
}

/// As [`start_fixture_feeding`], with JVM options (`-Xmx1g`) before the
/// class path.
pub fn start_fixture_with(
    home: Option<&std::path::Path>,
    class: &str,
    ready: &str,
    jvm_args: &[&str],
    args: &[&str],
    port: u16,
    mut feed: impl FnMut(String) + Send + 'static,
) -> (Child, u16) {
    let tool = |t: &str| match home {
        Some(h) => h.join("bin").join(t),
        None => jdk(t),
    };
    let dir = classes_dir(class);
    std::fs::create_dir_all(&dir).expect("temp dir");
    if let Err(e) = compile_fixture(&tool("javac"), class, &dir) {
        panic!("{e}");
    }
    let mut child = Command::new(tool("java"))
        .arg(format!(
            "-agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=127.0.0.1:{port}"
        ))
        .args(jvm_args)
        .arg("-cp")
        .arg(&dir)
        .arg(class)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("java");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut port = 0;
    for line in lines.by_ref() {
        let line = line.expect("line");
        if let Some(rest) = line.strip_prefix("Listening for transport dt_socket at address:") {
            port = rest
                .trim()
                .rsplit(':')
                .next()
                .and_then(|p| p.parse().ok())
                .expect("port");
        }
        if line.contains(ready) {
            break;
        }
    }
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            feed(line);
        }
    });
    (child, port)
}

/// A free loopback port (for [`start_fixture_on`]).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// A fixture compiled into a scratch directory and started by `java` with
/// a JDWP agent on an ephemeral loopback port (announced on its stdout),
/// its stdin and stdout piped: the child, the classes (kept alive as long
/// as the child runs) and the JVM's version line.
pub fn spawn_agent_fixture(
    tool: impl Fn(&str) -> PathBuf,
    class: &str,
    args: &[String],
) -> Result<(Child, tempfile::TempDir, String), String> {
    let classes = tempfile::tempdir().map_err(|e| e.to_string())?;
    compile_fixture(&tool("javac"), class, classes.path())?;
    let version = java_version(&tool("java"));
    let child = Command::new(tool("java"))
        .arg("-agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=127.0.0.1:0")
        .arg("-cp")
        .arg(classes.path())
        .arg(class)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("java: {e}"))?;
    Ok((child, classes, version))
}

/// The port a fixture's JDWP agent announced for the `want`-th attach (it
/// listens again, on a new port, after each debugger detaches), waiting
/// for it at most 20 s. `ports` fills as the fixture's output is read.
pub async fn announced_port(
    ports: &std::sync::Mutex<Vec<u16>>,
    want: usize,
) -> Result<u16, String> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        if let Some(p) = ports
            .lock()
            .ok()
            .and_then(|v| v.get(want.saturating_sub(1)).copied())
        {
            return Ok(p);
        }
        if std::time::Instant::now() > deadline {
            return Err("the JDWP agent did not listen again".into());
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// The 1-based line of `tests/data/java/<class>.java` holding `marker`.
pub fn marked_line(class: &str, marker: &str) -> u32 {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/java")
        .join(format!("{class}.java"));
    std::fs::read_to_string(&path)
        .expect("fixture source")
        .lines()
        .position(|l| l.contains(marker))
        .map(|i| i as u32 + 1)
        .unwrap_or_else(|| panic!("no {marker:?} in {}", path.display()))
}

/// An engine (in-flight `window`, or the default; no suspension limit)
/// attached to a JVM listening on 127.0.0.1:`port`.
pub async fn attached(
    port: u16,
    window: Option<usize>,
) -> (jvmscope::actors::Engine, jvmscope::actors::SessionHandle) {
    use jvmscope::actors::{Engine, EngineConfig};
    let defaults = EngineConfig::default();
    let engine = Engine::start(EngineConfig {
        window: window.unwrap_or(defaults.window),
        suspend_limit: None,
        ..defaults
    })
    .await
    .expect("engine");
    let session = engine
        .attach(&jvmscope::model::AttachSpec {
            host: "127.0.0.1".into(),
            port,
            timeout: std::time::Duration::from_secs(5),
            read_only: false,
            source_roots: vec![],
            class_roots: vec![],
        })
        .await
        .expect("attach");
    (engine, session)
}

/// The machine's CPU ticks so far, as (stolen by the hypervisor, all),
/// from the `cpu` line of /proc/stat.
pub fn cpu_ticks() -> (u64, u64) {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let f: Vec<u64> = stat
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    // user nice system idle iowait irq softirq steal (guest time is
    // counted in user already).
    (f.get(7).copied().unwrap_or(0), f.iter().take(8).sum())
}

/// The share of the machine's CPU time the hypervisor took between two
/// readings of [`cpu_ticks`].
pub fn steal_share(from: (u64, u64), to: (u64, u64)) -> f64 {
    let all = to.1.saturating_sub(from.1);
    if all == 0 {
        return 0.0;
    }
    to.0.saturating_sub(from.0) as f64 / all as f64
}

/// The text of a tool's reply, its parts joined by newlines.
pub fn text(r: &rmcp::model::CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}
