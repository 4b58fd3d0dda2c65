//! JDK discovery, one-time compilation of the `tests/data/java` fixtures, and [`Jvm`], a running debuggee with captured output.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use super::{POLL_INTERVAL, tail};

/// The panic text for a machine without a usable JDK.
pub const NO_JDK: &str = "JDK not found: install a JDK 17+ (javac, java) — jvm tests never skip";

/// How long [`Jvm::start`] waits for the JDWP agent to announce its port.
pub const PORT_TIMEOUT: Duration = Duration::from_secs(20);

/// Prefix of the line the JDWP agent prints once it listens.
const LISTENING: &str = "Listening for transport dt_socket at address:";

/// `tests/data/java` in the source tree.
pub fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/java")
}

/// The path of a fixture source file, e.g. `source_path("Inventory.java")`.
pub fn source_path(file: &str) -> PathBuf {
    data_dir().join(file)
}

fn is_file(path: &Path) -> bool {
    path.is_file()
}

fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| is_file(candidate))
}

/// The `javac` to use: `$JAVA_HOME/bin/javac` when `JAVA_HOME` is set and has one, else `javac` on `PATH`.
/// Panics with [`NO_JDK`] when neither exists.
pub fn javac() -> PathBuf {
    static JAVAC: OnceLock<PathBuf> = OnceLock::new();
    JAVAC
        .get_or_init(|| {
            let from_home = std::env::var_os("JAVA_HOME")
                .filter(|home| !home.is_empty())
                .map(|home| PathBuf::from(home).join("bin/javac"))
                .filter(|javac| is_file(javac));
            let found = from_home.or_else(|| on_path("javac")).unwrap_or_else(|| {
                panic!(
                    "{NO_JDK} (JAVA_HOME={:?}, no javac on PATH)",
                    std::env::var_os("JAVA_HOME")
                )
            });
            // Resolve /usr/bin/javac -> /usr/lib/jvm/<jdk>/bin/javac so `java()` is the same JDK.
            std::fs::canonicalize(&found).unwrap_or(found)
        })
        .clone()
}

/// The default JDK home: the directory above the `bin/` holding [`javac()`].
pub fn default_java_home() -> PathBuf {
    let javac = javac();
    javac
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| {
            panic!(
                "{NO_JDK} (cannot derive a JDK home from {})",
                javac.display()
            )
        })
}

/// The `java` launcher of `java_home`, or of [`default_java_home()`] when `None`.
pub fn java(java_home: Option<&Path>) -> PathBuf {
    let home = java_home.map_or_else(default_java_home, Path::to_path_buf);
    let java = home.join("bin/java");
    if !is_file(&java) {
        panic!("{NO_JDK} (no launcher at {})", java.display());
    }
    java
}

/// A Temurin 25 JDK home under `/usr/lib/jvm/` (a directory whose name contains `temurin-25`), if installed.
pub fn temurin25() -> Option<PathBuf> {
    let mut homes: Vec<PathBuf> = std::fs::read_dir("/usr/lib/jvm")
        .ok()?
        .filter_map(Result::ok)
        .filter(|entry| entry.file_name().to_string_lossy().contains("temurin-25"))
        .map(|entry| entry.path())
        .filter(|home| is_file(&home.join("bin/java")))
        .collect();
    homes.sort();
    homes.into_iter().next()
}

/// Like [`temurin25`], but panics when it is not installed.
pub fn temurin25_required() -> PathBuf {
    temurin25().unwrap_or_else(|| {
        panic!(
            "Temurin 25 JDK not found under /usr/lib/jvm (a directory named *temurin-25*): \
             install temurin-25-jdk — jvm tests never skip"
        )
    })
}

fn java_sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list fixture dir {}: {e}", dir.display()));
    for entry in entries {
        let path = entry
            .unwrap_or_else(|e| panic!("cannot list fixture dir {}: {e}", dir.display()))
            .path();
        if path.is_dir() {
            java_sources(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "java") {
            out.push(path);
        }
    }
}

/// The class-path directory holding every `tests/data/java/**/*.java` compiled with
/// `javac -g --release 17`. Compiled at most once per test process; the output is cached
/// under cargo's target tmp dir keyed by a hash of the sources and the `javac` path, and
/// published by an atomic rename, so concurrent test threads and processes never race.
pub fn fixtures() -> &'static Path {
    static FIXTURES: OnceLock<PathBuf> = OnceLock::new();
    FIXTURES.get_or_init(compile_fixtures)
}

fn compile_fixtures() -> PathBuf {
    compile_tree(&data_dir(), &[], "jvmscope-java-fixtures")
}

/// Compiles every `*.java` under `dir` against `classpath` into a cached
/// class-path directory under cargo's target tmp dir (`cache` names it),
/// the way [`fixtures()`] does; other files under `dir` (resources such as
/// `META-INF/persistence.xml`) are copied beside the classes.
pub fn compile_tree(dir: &Path, classpath: &[PathBuf], cache: &str) -> PathBuf {
    let javac = javac();
    let mut sources = Vec::new();
    java_sources(dir, &mut sources);
    sources.sort();
    assert!(
        !sources.is_empty(),
        "no Java fixtures under {}",
        dir.display()
    );

    let mut hasher = DefaultHasher::new();
    javac.hash(&mut hasher);
    classpath.hash(&mut hasher);
    let resources = resources(dir);
    for r in &resources {
        r.hash(&mut hasher);
        std::fs::read(r).unwrap_or_default().hash(&mut hasher);
    }
    for source in &sources {
        source.hash(&mut hasher);
        std::fs::read(source)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", source.display()))
            .hash(&mut hasher);
    }
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join(cache);
    let out = root.join(format!("{:016x}", hasher.finish()));
    if out.is_dir() {
        return out;
    }
    std::fs::create_dir_all(&root)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", root.display()));
    let staging = tempfile::Builder::new()
        .prefix("staging-")
        .tempdir_in(&root)
        .unwrap_or_else(|e| panic!("cannot create a staging dir in {}: {e}", root.display()));

    let mut javac_cmd = Command::new(&javac);
    javac_cmd.args(["-g", "--release", "17", "-encoding", "UTF-8", "-d"]);
    javac_cmd.arg(staging.path());
    if !classpath.is_empty() {
        javac_cmd
            .arg("-cp")
            .arg(std::env::join_paths(classpath).expect("class path"));
    }
    for r in &resources {
        let to = staging.path().join(r.strip_prefix(dir).expect("under dir"));
        std::fs::create_dir_all(to.parent().expect("a parent"))
            .and_then(|()| std::fs::copy(r, &to).map(drop))
            .unwrap_or_else(|e| panic!("cannot copy {}: {e}", r.display()));
    }
    let output = javac_cmd
        .args(&sources)
        .output()
        .unwrap_or_else(|e| panic!("{NO_JDK} (cannot run {}: {e})", javac.display()));
    assert!(
        output.status.success(),
        "javac failed ({}) compiling the fixtures:\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );

    // Publish atomically; if another process won the race, its identical output is used.
    let staged = staging.keep();
    if std::fs::rename(&staged, &out).is_err() {
        let _ = std::fs::remove_dir_all(&staged);
        assert!(
            out.is_dir(),
            "cannot publish compiled fixtures to {}",
            out.display()
        );
    }
    out
}

/// The files under `dir` that are not Java sources, sorted.
fn resources(dir: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_none_or(|ext| ext != "java") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, &mut out);
    out.sort();
    out
}

/// The 1-based line of `file` (relative to `tests/data/java`) carrying the comment `// LINE: <marker>`.
/// Panics unless exactly one line carries it.
#[track_caller]
pub fn line_of(file: &str, marker: &str) -> u32 {
    let path = source_path(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("line_of: cannot read {}: {e}", path.display()));
    let tag = format!("// LINE: {marker}");
    let hits: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, line)| {
            line.find(&tag).is_some_and(|at| {
                let rest = &line[at + tag.len()..];
                rest.chars().next().is_none_or(char::is_whitespace)
            })
        })
        .map(|(index, _)| index + 1)
        .collect();
    match hits.as_slice() {
        [line] => u32::try_from(*line).unwrap_or_else(|_| panic!("line {line} too large")),
        [] => panic!("line_of: no `{tag}` in {}", path.display()),
        many => panic!(
            "line_of: `{tag}` appears on several lines {many:?} of {}",
            path.display()
        ),
    }
}

/// How to launch a [`Jvm`].
#[derive(Debug, Clone, Default)]
pub struct JvmOpts {
    /// `suspend=y`: the VM waits for a debugger before running `main`.
    pub suspend: bool,
    /// The JDK to run; [`default_java_home()`] when `None`.
    pub java_home: Option<PathBuf>,
    /// Program arguments after the main class.
    pub args: Vec<String>,
    /// Extra JVM options placed before `-cp` (e.g. `-Xmx64m`).
    pub jvm_args: Vec<String>,
    /// Extra JDWP agent options appended to `-agentlib:jdwp=…` (e.g. `,includevirtualthreads=y`).
    pub agent_options: String,
    /// No JDWP agent of ours: the JVM is ready at its first stdout line and
    /// [`Jvm::port`] is 0 (an agent may still come with `jvm_args`).
    pub no_jdwp: bool,
    /// The class path; [`fixtures()`] when `None`.
    pub classpath: Option<PathBuf>,
    /// Environment variables set for the JVM (e.g. `JAVA_TOOL_OPTIONS`).
    pub env: Vec<(String, String)>,
}

/// Lines read from one child stream by a background thread.
#[derive(Debug, Default)]
pub(crate) struct Captured {
    lines: Mutex<Vec<String>>,
    closed: AtomicBool,
}

impl Captured {
    /// Starts a thread that appends every line of `stream` (lossy UTF-8, without the line end).
    pub(crate) fn spawn(stream: impl Read + Send + 'static) -> Arc<Captured> {
        let captured = Arc::new(Captured::default());
        let sink = Arc::clone(&captured);
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stream);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match reader.read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let line = String::from_utf8_lossy(&buf);
                        let line = line.trim_end_matches(['\n', '\r']).to_owned();
                        lock(&sink.lines).push(line);
                    }
                }
            }
            sink.closed.store(true, Ordering::SeqCst);
        });
        captured
    }

    pub(crate) fn lines(&self) -> MutexGuard<'_, Vec<String>> {
        lock(&self.lines)
    }

    /// Whether the stream reached EOF (or failed).
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A running debuggee JVM listening for a JDWP debugger on 127.0.0.1. Dropping it kills the process.
#[derive(Debug)]
pub struct Jvm {
    child: Mutex<Child>,
    pid: u32,
    port: u16,
    stdout: Arc<Captured>,
    stderr: Arc<Captured>,
    main_class: String,
}

impl Jvm {
    /// Launches `main_class` from [`fixtures()`] (or `opts.classpath`) with the JDWP agent on an ephemeral port and waits
    /// (at most [`PORT_TIMEOUT`]) until the agent prints its port. Panics with all output so far on failure.
    pub fn start(main_class: &str, opts: JvmOpts) -> Jvm {
        let java = java(opts.java_home.as_deref());
        let suspend = if opts.suspend { "y" } else { "n" };
        let mut command = Command::new(&java);
        if !opts.no_jdwp {
            command.arg(format!(
                "-agentlib:jdwp=transport=dt_socket,server=y,suspend={suspend},address=127.0.0.1:0{}",
                opts.agent_options
            ));
        }
        command
            .args(&opts.jvm_args)
            .arg("-cp")
            .arg(opts.classpath.as_deref().unwrap_or(fixtures()))
            .arg(main_class)
            .args(&opts.args)
            .envs(opts.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("{NO_JDK} (cannot run {}: {e})", java.display()));
        let stdout = Captured::spawn(child.stdout.take().expect("piped stdout"));
        let stderr = Captured::spawn(child.stderr.take().expect("piped stderr"));
        let pid = child.id();
        let mut jvm = Jvm {
            child: Mutex::new(child),
            pid,
            port: 0,
            stdout,
            stderr,
            main_class: main_class.to_owned(),
        };
        if opts.no_jdwp {
            jvm.wait_for_line_matching(|_| true, PORT_TIMEOUT);
        } else {
            jvm.port = jvm.await_port(&command);
        }
        jvm
    }

    fn await_port(&self, command: &Command) -> u16 {
        let deadline = Instant::now() + PORT_TIMEOUT;
        loop {
            let announced = self.stdout.lines().iter().find_map(|line| {
                line.strip_prefix(LISTENING)
                    .map(|rest| rest.trim().to_owned())
            });
            if let Some(port) = announced {
                return port.parse().unwrap_or_else(|e| {
                    panic!("bad JDWP port {port:?} ({e}); {}", self.describe(command))
                });
            }
            if !self.is_alive() && self.stdout.is_closed() && self.stderr.is_closed() {
                panic!(
                    "JVM exited before announcing its JDWP port; {}",
                    self.describe(command)
                );
            }
            if Instant::now() >= deadline {
                panic!(
                    "no `{LISTENING} <port>` line within {PORT_TIMEOUT:?}; {}",
                    self.describe(command)
                );
            }
            std::thread::sleep(POLL_INTERVAL);
        }
    }

    fn describe(&self, command: &Command) -> String {
        format!(
            "command: {command:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.lines().join("\n"),
            self.stderr_lines().join("\n")
        )
    }

    /// The JDWP port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The OS process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The main class this JVM runs.
    pub fn main_class(&self) -> &str {
        &self.main_class
    }

    /// Every stdout line so far (including the agent's `Listening ...` line).
    pub fn lines(&self) -> Vec<String> {
        self.stdout.lines().clone()
    }

    /// The port the agent listens on for the `nth` debugger (1-based). Started
    /// with port 0, the agent listens again on a new port once the last
    /// debugger has gone; this waits until it announces it.
    #[track_caller]
    pub fn listening_port(&self, nth: usize, timeout: Duration) -> u16 {
        super::poll_until_msg(timeout, &format!("listener #{nth}"), || {
            self.lines()
                .iter()
                .filter(|l| l.starts_with("Listening for transport dt_socket at address:"))
                .nth(nth.saturating_sub(1))
                .and_then(|l| l.rsplit(':').next()?.trim().parse().ok())
        })
    }

    /// Every stderr line so far.
    pub fn stderr_lines(&self) -> Vec<String> {
        self.stderr.lines().clone()
    }

    /// How many stdout lines were captured so far.
    pub fn line_count(&self) -> usize {
        self.stdout.lines().len()
    }

    /// Waits for a stdout line containing `needle`; returns it. Panics with the captured output on timeout.
    #[track_caller]
    pub fn wait_for_line(&self, needle: &str, timeout: Duration) -> String {
        self.wait_for_line_since(0, |line| line.contains(needle), timeout)
            .1
    }

    /// Waits for a stdout line satisfying `pred`; returns it.
    #[track_caller]
    pub fn wait_for_line_matching(&self, pred: impl Fn(&str) -> bool, timeout: Duration) -> String {
        self.wait_for_line_since(0, pred, timeout).1
    }

    /// Waits for a stdout line with index `>= since` satisfying `pred`; returns `(index, line)`.
    /// Use with [`Jvm::line_count`] to wait for output produced after some point.
    #[track_caller]
    pub fn wait_for_line_since(
        &self,
        since: usize,
        pred: impl Fn(&str) -> bool,
        timeout: Duration,
    ) -> (usize, String) {
        let deadline = Instant::now() + timeout;
        loop {
            let found = self
                .stdout
                .lines()
                .iter()
                .enumerate()
                .skip(since)
                .find(|(_, line)| pred(line))
                .map(|(index, line)| (index, line.clone()));
            if let Some(found) = found {
                return found;
            }
            if Instant::now() >= deadline {
                panic!(
                    "no matching stdout line (from index {since}) of {} within {timeout:?}; alive: {}\n\
                     --- stdout ---\n{}\n--- stderr ---\n{}",
                    self.main_class,
                    self.is_alive(),
                    tail(&self.lines().join("\n"), 4000),
                    tail(&self.stderr_lines().join("\n"), 4000)
                );
            }
            std::thread::sleep(POLL_INTERVAL);
        }
    }

    /// Whether the process is still running.
    pub fn is_alive(&self) -> bool {
        matches!(lock(&self.child).try_wait(), Ok(None))
    }

    /// The exit status, if the process has exited.
    pub fn exit_status(&self) -> Option<ExitStatus> {
        lock(&self.child).try_wait().ok().flatten()
    }

    /// Waits up to `timeout` for the process to exit on its own.
    pub fn wait_exit(&self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.exit_status() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(POLL_INTERVAL);
        }
    }

    /// Kills the process (SIGKILL) and reaps it. Idempotent.
    pub fn kill(&self) {
        let mut child = lock(&self.child);
        if matches!(child.try_wait(), Ok(None)) {
            let _ = child.kill();
        }
        let _ = child.wait();
    }
}

impl Drop for Jvm {
    fn drop(&mut self) {
        self.kill();
    }
}
