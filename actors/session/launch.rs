//! Starting a JVM under the debugger: the command line, the JDWP port it
//! picked, its captured output, and terminating it when the session ends.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::actors::error::LaunchError;
use crate::model::{LaunchSpec, LaunchTarget};

/// Lines of output kept per launched JVM.
const OUTPUT_LINES: usize = 2000;
/// The line the JDWP agent prints once it listens.
const LISTENING: &str = "Listening for transport dt_socket at address:";

/// A JVM this server started.
pub struct LaunchedJvm {
    pub pid: u32,
    pub detach_on_disconnect: bool,
    pub command_line: String,
    child: tokio::sync::Mutex<Option<Child>>,
    exit: Mutex<Option<String>>,
    /// What terminating it did, for a second caller.
    terminated: Mutex<Option<String>>,
    output: Arc<Mutex<VecDeque<String>>>,
    /// How many of stdout and stderr reached their end.
    streams_closed: Arc<tokio::sync::watch::Sender<u8>>,
}

impl LaunchedJvm {
    /// The last `n` lines the JVM wrote (stdout and stderr interleaved, in
    /// arrival order).
    pub fn last_lines(&self, n: usize) -> Vec<String> {
        self.output
            .lock()
            .map(|o| o.iter().rev().take(n).rev().cloned().collect())
            .unwrap_or_default()
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
    let mut child = cmd.spawn().map_err(|e| LaunchError::Spawn {
        program: java.display().to_string(),
        detail: e.to_string(),
    })?;
    let pid = child.id().unwrap_or(0);
    let output = Arc::new(Mutex::new(VecDeque::new()));
    let (port_tx, mut port_rx) = tokio::sync::mpsc::unbounded_channel::<u16>();
    let streams_closed = Arc::new(tokio::sync::watch::channel(0u8).0);
    if let Some(stdout) = child.stdout.take() {
        let closed = streams_closed.clone();
        tokio::spawn(collect(
            stdout,
            output.clone(),
            Some(port_tx.clone()),
            closed,
        ));
    }
    if let Some(stderr) = child.stderr.take() {
        let closed = streams_closed.clone();
        tokio::spawn(collect(stderr, output.clone(), Some(port_tx), closed));
    }
    let jvm = Arc::new(LaunchedJvm {
        pid,
        detach_on_disconnect: spec.detach_on_disconnect,
        command_line: format!("{} {}", java.display(), args.join(" ")),
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

async fn collect<R: tokio::io::AsyncRead + Unpin>(
    stream: R,
    output: Arc<Mutex<VecDeque<String>>>,
    port_tx: Option<tokio::sync::mpsc::UnboundedSender<u16>>,
    closed: Arc<tokio::sync::watch::Sender<u8>>,
) {
    let mut lines = BufReader::new(stream).lines();
    let mut port_tx = port_tx;
    while let Ok(Some(line)) = lines.next_line().await {
        if let Some(tx) = &port_tx
            && let Some(rest) = line.split(LISTENING).nth(1)
            && let Some(port) = rest.trim().rsplit(':').next().and_then(|p| p.parse().ok())
        {
            let _ = tx.send(port);
            port_tx = None;
        }
        if let Ok(mut o) = output.lock() {
            if o.len() == OUTPUT_LINES {
                o.pop_front();
            }
            o.push_back(line);
        }
    }
    closed.send_modify(|n| *n += 1);
}
