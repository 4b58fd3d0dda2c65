//! Starting a JVM under the debugger: the command line, the JDWP port it
//! picked, its captured output (a bounded ring of numbered lines, each
//! tagged with its stream), and terminating it when the session ends or,
//! unless it was launched to stay, when the server dies (`tether.rs`).
//! Letting it run to its main class is the session's
//! (`session/startup.rs`): that needs a live session.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

mod tether;

use crate::error::LaunchError;
use crate::model::{LaunchSpec, LaunchTarget};

/// Lines of output kept per launched JVM (both streams together).
pub const OUTPUT_LINES: usize = 2000;
/// Bytes kept of one line; the rest of a longer line is counted, not kept.
/// With `OUTPUT_LINES` this bounds the ring at 8 MB per JVM.
pub const LINE_BYTES: usize = 4096;
/// The line the JDWP agent prints once it listens.
const LISTENING: &str = "Listening for transport dt_socket at address:";

/// Which of a launched JVM's streams a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputStream {
    Stdout,
    Stderr,
}

/// One line a launched JVM wrote.
#[derive(Debug, Clone)]
pub struct OutputLine {
    /// 1 for the first line the JVM wrote, counting both streams.
    pub number: u64,
    pub stream: OutputStream,
    pub text: String,
    /// Bytes of the line beyond `LINE_BYTES`, not kept.
    pub cut: usize,
}

/// Which lines to read.
#[derive(Debug, Clone, Copy, Default)]
pub struct OutputQuery {
    /// Only lines numbered above this.
    pub since: Option<u64>,
    /// At most this many, the newest.
    pub tail: usize,
    /// One stream, or both.
    pub stream: Option<OutputStream>,
}

/// What a read of the ring found.
#[derive(Debug, Clone)]
pub struct OutputSlice {
    /// The lines, oldest first.
    pub lines: Vec<OutputLine>,
    /// Lines written so far (the number of the newest).
    pub written: u64,
    /// The number of the oldest line still kept (`written + 1` when none).
    pub first_kept: u64,
    /// Lines that matched but were left out by `tail`.
    pub not_shown: usize,
    /// Lines after `since` (or from the start) that the ring dropped
    /// before they were read.
    pub dropped: u64,
    /// Whether both streams reached their end.
    pub ended: bool,
}

/// The ring of kept lines.
#[derive(Default)]
struct Ring {
    lines: VecDeque<OutputLine>,
    written: u64,
}

impl Ring {
    fn push(&mut self, stream: OutputStream, text: String, cut: usize) {
        self.written += 1;
        if self.lines.len() == OUTPUT_LINES {
            self.lines.pop_front();
        }
        self.lines.push_back(OutputLine {
            number: self.written,
            stream,
            text,
            cut,
        });
    }

    fn first_kept(&self) -> u64 {
        self.lines
            .front()
            .map(|l| l.number)
            .unwrap_or(self.written + 1)
    }

    fn read(&self, q: &OutputQuery) -> (Vec<OutputLine>, usize, u64) {
        let since = q.since.unwrap_or(0);
        let matching: Vec<&OutputLine> = self
            .lines
            .iter()
            .filter(|l| l.number > since && q.stream.is_none_or(|s| s == l.stream))
            .collect();
        let shown = matching.len().min(q.tail);
        let not_shown = matching.len() - shown;
        let lines = matching[not_shown..].iter().map(|l| (*l).clone()).collect();
        let dropped = self.first_kept().saturating_sub(since + 1);
        (lines, not_shown, dropped)
    }
}

/// A JVM this server started.
pub struct LaunchedJvm {
    pub pid: u32,
    pub detach_on_disconnect: bool,
    /// The command line, secrets masked: what a report may show.
    pub command_line: String,
    child: tokio::sync::Mutex<Option<Child>>,
    exit: Mutex<Option<String>>,
    /// What terminating it did, for a second caller.
    terminated: Mutex<Option<String>>,
    output: Arc<Mutex<Ring>>,
    /// How many of stdout and stderr reached their end.
    streams_closed: Arc<tokio::sync::watch::Sender<u8>>,
}

impl LaunchedJvm {
    /// The last `n` lines the JVM wrote (stdout and stderr interleaved, in
    /// arrival order).
    pub fn last_lines(&self, n: usize) -> Vec<String> {
        self.output
            .lock()
            .map(|o| {
                o.lines
                    .iter()
                    .rev()
                    .take(n)
                    .rev()
                    .map(|l| l.text.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The kept lines `q` asks for.
    pub fn read_output(&self, q: &OutputQuery) -> OutputSlice {
        let ended = *self.streams_closed.borrow() >= 2;
        match self.output.lock() {
            Ok(ring) => {
                let (lines, not_shown, dropped) = ring.read(q);
                OutputSlice {
                    lines,
                    written: ring.written,
                    first_kept: ring.first_kept(),
                    not_shown,
                    dropped,
                    ended,
                }
            }
            Err(_) => OutputSlice {
                lines: Vec::new(),
                written: 0,
                first_kept: 1,
                not_shown: 0,
                dropped: 0,
                ended,
            },
        }
    }

    /// How the process ended, once it has.
    pub fn exit_status(&self) -> Option<String> {
        if let Ok(mut guard) = self.child.try_lock()
            && let Some(child) = guard.as_mut()
            && let Ok(Some(status)) = child.try_wait()
        {
            let text = status.to_string();
            if let Ok(mut e) = self.exit.lock() {
                *e = Some(text.clone());
            }
            *guard = None;
            return Some(text);
        }
        self.exit.lock().ok().and_then(|e| e.clone())
    }

    /// Waits (bounded) for the process to exit and its output to be read to
    /// the end; returns the exit status and the last lines.
    pub async fn exit_and_output(&self, limit: Duration) -> (String, String) {
        let deadline = tokio::time::Instant::now() + limit;
        let status = {
            let mut guard = self.child.lock().await;
            match guard.as_mut() {
                Some(child) => match tokio::time::timeout_at(deadline, child.wait()).await {
                    Ok(Ok(status)) => status.to_string(),
                    _ => "still running".to_string(),
                },
                None => self
                    .exit
                    .lock()
                    .ok()
                    .and_then(|e| e.clone())
                    .unwrap_or_else(|| "ended".into()),
            }
        };
        let mut closed = self.streams_closed.subscribe();
        let _ = tokio::time::timeout_at(deadline, closed.wait_for(|n| *n >= 2)).await;
        (status, self.last_lines(30).join("\n"))
    }

    /// Kills the process (if it still runs) and reaps it. Idempotent.
    pub async fn terminate(&self) -> String {
        let mut guard = self.child.lock().await;
        if let Some(mut child) = guard.take() {
            // The exit kept is the process's own status; the text returned
            // says what terminating it did.
            let (exit, said) = match child.try_wait() {
                Ok(Some(status)) => (
                    status.to_string(),
                    format!("pid {} had already exited ({status})", self.pid),
                ),
                _ => {
                    let _ = child.start_kill();
                    match tokio::time::timeout(Duration::from_secs(5), child.wait()).await {
                        Ok(Ok(status)) => (
                            format!("terminated by jvmscope ({status})"),
                            format!("pid {} terminated", self.pid),
                        ),
                        _ => (
                            "sent SIGKILL by jvmscope".to_string(),
                            format!("pid {} was sent SIGKILL", self.pid),
                        ),
                    }
                }
            };
            if let Ok(mut e) = self.exit.lock() {
                *e = Some(exit);
            }
            if let Ok(mut t) = self.terminated.lock() {
                *t = Some(said.clone());
            }
            said
        } else {
            let exit = self.exit.lock().ok().and_then(|e| e.clone());
            self.terminated
                .lock()
                .ok()
                .and_then(|e| e.clone())
                .or_else(|| exit.map(|e| format!("pid {} had already exited ({e})", self.pid)))
                .unwrap_or_else(|| format!("pid {} already ended", self.pid))
        }
    }
}

/// The `java` executable to run.
fn java_binary(java_home: &Option<PathBuf>) -> PathBuf {
    if let Some(home) = java_home {
        return home.join("bin").join("java");
    }
    if let Some(home) = std::env::var_os("JAVA_HOME") {
        return PathBuf::from(home).join("bin").join("java");
    }
    PathBuf::from("java")
}

/// Starts the JVM with a JDWP agent on a loopback port it picks itself and
/// waits until the agent listens. Returns the process and the port.
pub async fn start(spec: &LaunchSpec) -> Result<(Arc<LaunchedJvm>, u16), LaunchError> {
    let java = java_binary(&spec.java_home);
    let agent = format!(
        "-agentlib:jdwp=transport=dt_socket,server=y,suspend={},address=127.0.0.1:0",
        if spec.suspend { "y" } else { "n" }
    );
    let mut args: Vec<String> = vec![agent];
    args.extend(spec.jvm_args.iter().cloned());
    match &spec.target {
        LaunchTarget::MainClass {
            main_class,
            classpath,
        } => {
            args.push("-cp".into());
            args.push(classpath.clone());
            args.push(main_class.clone());
        }
        LaunchTarget::Jar { jar } => {
            args.push("-jar".into());
            args.push(jar.display().to_string());
        }
    }
    args.extend(spec.args.iter().cloned());
    let mut cmd = Command::new(&java);
    cmd.args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(dir) = &spec.working_dir {
        cmd.current_dir(dir);
    }
    let spawned = tether::spawn(cmd, spec.detach_on_disconnect).await;
    let mut child = spawned.map_err(|e| LaunchError::Spawn {
        program: java.display().to_string(),
        detail: e.to_string(),
    })?;
    let pid = child.id().unwrap_or(0);
    let output = Arc::new(Mutex::new(Ring::default()));
    let (port_tx, mut port_rx) = tokio::sync::mpsc::unbounded_channel::<u16>();
    let streams_closed = Arc::new(tokio::sync::watch::channel(0u8).0);
    if let Some(stdout) = child.stdout.take() {
        let closed = streams_closed.clone();
        let sink = Sink {
            stream: OutputStream::Stdout,
            ring: output.clone(),
            port_tx: Some(port_tx.clone()),
        };
        tokio::spawn(collect(stdout, sink, closed));
    }
    if let Some(stderr) = child.stderr.take() {
        let closed = streams_closed.clone();
        let sink = Sink {
            stream: OutputStream::Stderr,
            ring: output.clone(),
            port_tx: Some(port_tx),
        };
        tokio::spawn(collect(stderr, sink, closed));
    }
    let jvm = Arc::new(LaunchedJvm {
        pid,
        detach_on_disconnect: spec.detach_on_disconnect,
        command_line: format!(
            "{} {}",
            java.display(),
            crate::model::jvms::mask_argv(&args).join(" ")
        ),
        child: tokio::sync::Mutex::new(Some(child)),
        exit: Mutex::new(None),
        terminated: Mutex::new(None),
        output,
        streams_closed,
    });
    let deadline = tokio::time::Instant::now() + spec.timeout;
    tokio::select! {
        port = port_rx.recv() => match port {
            Some(port) => Ok((jvm, port)),
            None => {
                // Both streams closed: the process is ending.
                let status = wait_exit(&jvm).await;
                Err(LaunchError::DiedDuringStartup {
                    status,
                    output: jvm.last_lines(30).join("\n"),
                    session: None,
                })
            }
        },
        _ = tokio::time::sleep_until(deadline) => {
            let output = jvm.last_lines(30).join("\n");
            jvm.terminate().await;
            Err(LaunchError::NoPort { after: spec.timeout, output })
        }
    }
}

async fn wait_exit(jvm: &LaunchedJvm) -> String {
    let mut guard = jvm.child.lock().await;
    match guard.as_mut() {
        Some(child) => match tokio::time::timeout(Duration::from_secs(5), child.wait()).await {
            Ok(Ok(status)) => status.to_string(),
            _ => "still running but its output closed".into(),
        },
        None => "ended".into(),
    }
}

/// Where one stream's lines go.
struct Sink {
    stream: OutputStream,
    ring: Arc<Mutex<Ring>>,
    /// Until the agent has said where it listens.
    port_tx: Option<tokio::sync::mpsc::UnboundedSender<u16>>,
}

impl Sink {
    fn line(&mut self, bytes: &mut Vec<u8>, cut: &mut usize) {
        if bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
        let text = String::from_utf8_lossy(bytes).into_owned();
        bytes.clear();
        if let Some(tx) = &self.port_tx
            && let Some(rest) = text.split(LISTENING).nth(1)
            && let Some(port) = rest.trim().rsplit(':').next().and_then(|p| p.parse().ok())
        {
            let _ = tx.send(port);
            self.port_tx = None;
        }
        if let Ok(mut ring) = self.ring.lock() {
            ring.push(self.stream, text, std::mem::take(cut));
        }
    }
}

/// Reads one stream line by line into the ring. A line longer than
/// `LINE_BYTES` keeps its start; the rest is counted and skipped, so a
/// program that never writes a newline cannot grow this without bound.
async fn collect<R: tokio::io::AsyncRead + Unpin>(
    stream: R,
    mut sink: Sink,
    closed: Arc<tokio::sync::watch::Sender<u8>>,
) {
    let mut reader = BufReader::new(stream);
    let mut line = Vec::new();
    let mut cut = 0usize;
    loop {
        let buf = match reader.fill_buf().await {
            Ok(buf) if !buf.is_empty() => buf,
            _ => break,
        };
        let (taken, ends) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        let chunk = &buf[..taken - usize::from(ends)];
        let room = LINE_BYTES.saturating_sub(line.len()).min(chunk.len());
        line.extend_from_slice(&chunk[..room]);
        cut += chunk.len() - room;
        reader.consume(taken);
        if ends {
            sink.line(&mut line, &mut cut);
        }
    }
    if !line.is_empty() || cut > 0 {
        sink.line(&mut line, &mut cut);
    }
    closed.send_modify(|n| *n += 1);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring_of(n: u64) -> Ring {
        let mut ring = Ring::default();
        for i in 1..=n {
            let stream = if i % 3 == 0 {
                OutputStream::Stderr
            } else {
                OutputStream::Stdout
            };
            ring.push(stream, format!("line {i}"), 0);
        }
        ring
    }

    fn numbers(lines: &[OutputLine]) -> Vec<u64> {
        lines.iter().map(|l| l.number).collect()
    }

    #[test]
    fn a_read_takes_the_newest_lines_after_the_cursor_of_the_streams_asked() {
        let ring = ring_of(10);
        let q = |since, tail, stream| OutputQuery {
            since,
            tail,
            stream,
        };
        let (lines, not_shown, dropped) = ring.read(&q(None, 3, None));
        assert_eq!(
            (numbers(&lines), not_shown, dropped),
            (vec![8, 9, 10], 7, 0)
        );
        let (lines, not_shown, _) = ring.read(&q(Some(7), 50, None));
        assert_eq!((numbers(&lines), not_shown), (vec![8, 9, 10], 0));
        let (lines, _, _) = ring.read(&q(None, 50, Some(OutputStream::Stderr)));
        assert_eq!(numbers(&lines), vec![3, 6, 9]);
        let (lines, not_shown, _) = ring.read(&q(Some(10), 50, None));
        assert!(lines.is_empty() && not_shown == 0);
    }

    #[test]
    fn the_ring_keeps_the_last_lines_and_counts_what_it_dropped() {
        let ring = ring_of(OUTPUT_LINES as u64 + 25);
        assert_eq!(ring.lines.len(), OUTPUT_LINES);
        assert_eq!(ring.first_kept(), 26);
        let all = OutputQuery {
            since: None,
            tail: 1,
            stream: None,
        };
        assert_eq!(ring.read(&all).2, 25);
        let late = OutputQuery {
            since: Some(5),
            ..all
        };
        assert_eq!(ring.read(&late).2, 20);
        let current = OutputQuery {
            since: Some(30),
            ..all
        };
        assert_eq!(ring.read(&current).2, 0);
    }

    #[tokio::test]
    async fn a_long_line_keeps_its_start_and_a_last_line_without_newline_is_kept() {
        let mut input = vec![b'x'; LINE_BYTES + 100];
        input.extend_from_slice(b"\r\nshort\nno end");
        let ring = Arc::new(Mutex::new(Ring::default()));
        let closed = Arc::new(tokio::sync::watch::channel(0u8).0);
        let sink = Sink {
            stream: OutputStream::Stderr,
            ring: ring.clone(),
            port_tx: None,
        };
        collect(&input[..], sink, closed.clone()).await;
        let ring = ring.lock().expect("ring");
        let lines: Vec<(usize, usize, &str)> = ring
            .lines
            .iter()
            .map(|l| (l.text.len(), l.cut, &l.text[..l.text.len().min(5)]))
            .collect();
        // The cut counts the bytes of the line beyond the limit, the \r
        // included (it was never seen at the end of what was kept).
        assert_eq!(
            lines,
            vec![(LINE_BYTES, 101, "xxxxx"), (5, 0, "short"), (6, 0, "no en")]
        );
        assert_eq!(*closed.borrow(), 1);
    }

    #[tokio::test]
    async fn the_agent_banner_gives_the_port() {
        let ring = Arc::new(Mutex::new(Ring::default()));
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let sink = Sink {
            stream: OutputStream::Stdout,
            ring,
            port_tx: Some(tx),
        };
        let closed = Arc::new(tokio::sync::watch::channel(0u8).0);
        let text = b"Listening for transport dt_socket at address: 40123\nhello\n";
        collect(&text[..], sink, closed).await;
        assert_eq!(rx.recv().await, Some(40123));
    }
}
