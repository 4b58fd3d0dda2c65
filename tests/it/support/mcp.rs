//! A blocking MCP client over stdio for tests: spawns the `jvmscope` binary (or any command) and speaks newline-delimited JSON-RPC 2.0 to it.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::java::{Captured, lock};
use super::{POLL_INTERVAL, tail};

/// Default wait for one JSON-RPC response.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The MCP protocol version the tests ask for.
pub const PROTOCOL_VERSION: &str = "2025-06-18";

/// How many trailing stderr characters go into panic messages.
const STDERR_TAIL: usize = 6000;

/// What the reader thread has seen on the server's stdout.
#[derive(Debug, Default)]
struct Inbox {
    /// Responses by `id` (serialized JSON of the id), not yet claimed by a waiter.
    responses: HashMap<String, Value>,
    /// Notifications (messages with `method` and no `id`), in arrival order.
    notifications: Vec<Value>,
    /// Requests the server sent to us (answered automatically).
    requests: Vec<Value>,
    /// Stdout lines that were not JSON.
    garbage: Vec<String>,
    /// Stdout reached EOF.
    closed: bool,
}

#[derive(Debug, Default)]
struct Shared {
    inbox: Mutex<Inbox>,
    changed: Condvar,
}

/// The outcome of a `tools/call` that did not fail at the protocol level.
#[derive(Debug, Clone)]
pub struct ToolReply {
    /// The result's `isError` flag.
    pub is_error: bool,
    /// All `text` content items joined with `\n`.
    pub text: String,
    /// The result's `structuredContent`, if any.
    pub structured: Option<Value>,
    /// The whole `result` object.
    pub raw: Value,
}

impl ToolReply {
    /// Builds a reply from a `tools/call` result object.
    pub fn from_result(result: Value) -> ToolReply {
        let is_error = result
            .get("isError")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let text = result
            .get("content")
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter(|item| item.get("type").and_then(Value::as_str) == Some("text"))
                    .filter_map(|item| item.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default();
        let structured = result.get("structuredContent").cloned();
        ToolReply {
            is_error,
            text,
            structured,
            raw: result,
        }
    }

    /// Panics (showing the text) unless the tool succeeded; returns `self` for chaining.
    #[track_caller]
    pub fn expect_ok(self) -> ToolReply {
        assert!(!self.is_error, "tool call failed (isError): {}", self.text);
        self
    }

    /// Panics (showing the reply) unless the tool reported an error; returns `self` for chaining.
    #[track_caller]
    pub fn expect_tool_error(self) -> ToolReply {
        assert!(
            self.is_error,
            "tool call unexpectedly succeeded: {}",
            self.raw
        );
        self
    }

    /// `structuredContent` if present, else the text parsed as JSON; panics if neither is JSON.
    #[track_caller]
    pub fn json(&self) -> Value {
        if let Some(structured) = &self.structured {
            return structured.clone();
        }
        serde_json::from_str(&self.text)
            .unwrap_or_else(|e| panic!("tool reply is not JSON ({e}): {}", self.text))
    }
}

/// A spawned MCP server on stdio. All methods take `&self`, so one server can be driven from
/// several threads at once. Dropping it kills the process.
#[derive(Debug)]
pub struct Server {
    child: Mutex<Child>,
    pid: u32,
    stdin: Arc<Mutex<Option<ChildStdin>>>,
    shared: Arc<Shared>,
    stderr: Arc<Captured>,
    next_id: AtomicU64,
}

impl Server {
    /// Spawns the `jvmscope` binary (no arguments), inheriting the environment, with
    /// the overhead guard off: whether a traced line passes its budget depends on the
    /// machine's speed, and only `stop_points::overhead` tests the guard (through
    /// [`Server::spawn_guarded`]).
    pub fn spawn() -> Server {
        Server::spawn_with_env(&[
            ("JVMSCOPE_OVERHEAD_PCT", "off"),
            ("JVMSCOPE_SESSION_OVERHEAD_PCT", "off"),
        ])
    }

    /// Spawns the `jvmscope` binary with the overhead guard's default budgets.
    pub fn spawn_guarded() -> Server {
        let mut command = Command::new(env!("CARGO_BIN_EXE_jvmscope"));
        command
            .env_remove("JVMSCOPE_OVERHEAD_PCT")
            .env_remove("JVMSCOPE_SESSION_OVERHEAD_PCT");
        Server::spawn_command(command)
    }

    /// Spawns the `jvmscope` binary with extra environment variables on top of the inherited ones.
    pub fn spawn_with_env(env: &[(&str, &str)]) -> Server {
        let mut command = Command::new(env!("CARGO_BIN_EXE_jvmscope"));
        command.envs(env.iter().copied());
        Server::spawn_command(command)
    }

    /// Spawns an arbitrary command as the MCP server (its stdio is replaced by pipes).
    pub fn spawn_command(mut command: Command) -> Server {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot spawn MCP server {command:?}: {e}"));
        let stdin = Arc::new(Mutex::new(Some(child.stdin.take().expect("piped stdin"))));
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = Captured::spawn(child.stderr.take().expect("piped stderr"));
        let shared = Arc::new(Shared::default());
        spawn_reader(stdout, Arc::clone(&shared), Arc::clone(&stdin));
        let pid = child.id();
        Server {
            child: Mutex::new(child),
            pid,
            stdin,
            shared,
            stderr,
            next_id: AtomicU64::new(1),
        }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Performs the MCP handshake (`initialize`, then `notifications/initialized`); returns the
    /// `initialize` result. Panics if the server answers with an error.
    #[track_caller]
    pub fn initialize(&self) -> Value {
        let params = json!({
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": { "name": "jvmscope-tests", "version": "0" },
        });
        let result = self
            .request("initialize", params)
            .unwrap_or_else(|e| panic!("initialize failed: {e}\n{}", self.diagnostics()));
        self.notify("notifications/initialized", Value::Null);
        result
    }

    /// Sends a request and waits [`DEFAULT_TIMEOUT`] for its response: `Ok(result)` or `Err(error object)`.
    #[track_caller]
    pub fn request(&self, method: &str, params: Value) -> Result<Value, Value> {
        self.request_with_timeout(method, params, DEFAULT_TIMEOUT)
    }

    /// Like [`Server::request`] with an explicit timeout. Panics on timeout or if the server exits.
    #[track_caller]
    pub fn request_with_timeout(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, Value> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut message = json!({ "jsonrpc": "2.0", "id": id, "method": method });
        if !params.is_null() {
            message["params"] = params;
        }
        self.send(&message);
        let response = self.wait_response(&json!(id), timeout, method);
        match response.get("error") {
            Some(error) => Err(error.clone()),
            None => Ok(response.get("result").cloned().unwrap_or(Value::Null)),
        }
    }

    /// Sends a notification (no response expected). `Value::Null` params are omitted.
    #[track_caller]
    pub fn notify(&self, method: &str, params: Value) {
        let mut message = json!({ "jsonrpc": "2.0", "method": method });
        if !params.is_null() {
            message["params"] = params;
        }
        self.send(&message);
    }

    /// Writes one JSON message as a line. Panics if stdin is closed or broken.
    #[track_caller]
    pub fn send(&self, message: &Value) {
        if let Err(e) = self.send_raw(&message.to_string()) {
            panic!(
                "cannot write to the MCP server ({e}): {message}\n{}",
                self.diagnostics()
            );
        }
    }

    /// Writes `line` plus `\n` verbatim (for malformed-input tests).
    pub fn send_raw(&self, line: &str) -> std::io::Result<()> {
        self.send_raw_bytes(line.as_bytes())
    }

    /// Writes `line` plus `\n` verbatim, UTF-8 or not.
    pub fn send_raw_bytes(&self, line: &[u8]) -> std::io::Result<()> {
        let mut stdin = lock(&self.stdin);
        let pipe = stdin.as_mut().ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::BrokenPipe, "stdin already closed")
        })?;
        pipe.write_all(line)?;
        pipe.write_all(b"\n")?;
        pipe.flush()
    }

    /// Waits for the response carrying `id` (any JSON value, e.g. `json!(null)` for parse errors)
    /// and returns the whole response message.
    #[track_caller]
    pub fn wait_response(&self, id: &Value, timeout: Duration, what: &str) -> Value {
        let key = id.to_string();
        let deadline = Instant::now() + timeout;
        let mut inbox = lock(&self.shared.inbox);
        loop {
            if let Some(response) = inbox.responses.remove(&key) {
                return response;
            }
            if inbox.closed {
                drop(inbox);
                panic!(
                    "MCP server closed stdout while `{what}` (id {key}) awaited its response\n{}",
                    self.diagnostics()
                );
            }
            let now = Instant::now();
            if now >= deadline {
                drop(inbox);
                panic!(
                    "no response to `{what}` (id {key}) within {timeout:?}\n{}",
                    self.diagnostics()
                );
            }
            inbox = self
                .shared
                .changed
                .wait_timeout(inbox, deadline - now)
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0;
        }
    }

    /// `tools/call` with [`DEFAULT_TIMEOUT`]; panics on a JSON-RPC protocol error.
    #[track_caller]
    pub fn call(&self, tool: &str, args: Value) -> ToolReply {
        self.call_with_timeout(tool, args, DEFAULT_TIMEOUT)
    }

    /// `tools/call` with an explicit timeout; panics on a JSON-RPC protocol error.
    #[track_caller]
    pub fn call_with_timeout(&self, tool: &str, args: Value, timeout: Duration) -> ToolReply {
        match self.call_raw_with_timeout(tool, args.clone(), timeout) {
            Ok(result) => ToolReply::from_result(result),
            Err(error) => panic!(
                "tools/call `{tool}` {args} failed at the protocol level: {error}\n--- server stderr ---\n{}",
                self.stderr_tail()
            ),
        }
    }

    /// `tools/call` returning the raw `result` or JSON-RPC `error` object.
    #[track_caller]
    pub fn call_raw(&self, tool: &str, args: Value) -> Result<Value, Value> {
        self.call_raw_with_timeout(tool, args, DEFAULT_TIMEOUT)
    }

    /// [`Server::call_raw`] with an explicit timeout.
    #[track_caller]
    pub fn call_raw_with_timeout(
        &self,
        tool: &str,
        args: Value,
        timeout: Duration,
    ) -> Result<Value, Value> {
        self.request_with_timeout(
            "tools/call",
            json!({ "name": tool, "arguments": args }),
            timeout,
        )
    }

    /// All tools from `tools/list`, following `nextCursor` pages.
    #[track_caller]
    pub fn tools(&self) -> Vec<Value> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let params = cursor
                .as_ref()
                .map_or(json!({}), |c| json!({ "cursor": c }));
            let page = self
                .request("tools/list", params)
                .unwrap_or_else(|e| panic!("tools/list failed: {e}\n{}", self.diagnostics()));
            if let Some(items) = page.get("tools").and_then(Value::as_array) {
                tools.extend(items.iter().cloned());
            }
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) if !next.is_empty() => cursor = Some(next.to_owned()),
                _ => return tools,
            }
        }
    }

    /// Every notification received so far, in order.
    pub fn notifications(&self) -> Vec<Value> {
        lock(&self.shared.inbox).notifications.clone()
    }

    /// Waits for a notification satisfying `pred` (already received ones count); returns it.
    #[track_caller]
    pub fn wait_for_notification(&self, pred: impl Fn(&Value) -> bool, timeout: Duration) -> Value {
        let deadline = Instant::now() + timeout;
        let mut inbox = lock(&self.shared.inbox);
        loop {
            if let Some(found) = inbox.notifications.iter().find(|n| pred(n)) {
                return found.clone();
            }
            let now = Instant::now();
            if inbox.closed || now >= deadline {
                let seen = inbox.notifications.clone();
                drop(inbox);
                panic!(
                    "no matching notification within {timeout:?}; received: {seen:?}\n{}",
                    self.diagnostics()
                );
            }
            inbox = self
                .shared
                .changed
                .wait_timeout(inbox, deadline - now)
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0;
        }
    }

    /// Requests the server sent to the client (each was answered automatically: `ping` with `{}`,
    /// anything else with "method not found").
    pub fn server_requests(&self) -> Vec<Value> {
        lock(&self.shared.inbox).requests.clone()
    }

    /// Stdout lines that were not valid JSON (a well-behaved server writes none).
    pub fn stdout_garbage(&self) -> Vec<String> {
        lock(&self.shared.inbox).garbage.clone()
    }

    /// The last few thousand characters of the server's stderr.
    pub fn stderr_tail(&self) -> String {
        tail(&self.stderr.lines().join("\n"), STDERR_TAIL)
    }

    /// All stderr lines so far.
    pub fn stderr_lines(&self) -> Vec<String> {
        self.stderr.lines().clone()
    }

    /// Closes the server's stdin (the MCP way to ask it to shut down).
    pub fn close_stdin(&self) {
        lock(&self.stdin).take();
    }

    /// Waits up to `timeout` for the process to exit; `None` if it is still running.
    pub fn wait_exit(&self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Ok(Some(status)) = lock(&self.child).try_wait() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(POLL_INTERVAL);
        }
    }

    /// Whether the process is still running.
    pub fn is_alive(&self) -> bool {
        matches!(lock(&self.child).try_wait(), Ok(None))
    }

    /// Kills the process (SIGKILL) and reaps it. Idempotent.
    pub fn kill(&self) {
        let mut child = lock(&self.child);
        if matches!(child.try_wait(), Ok(None)) {
            let _ = child.kill();
        }
        let _ = child.wait();
    }

    /// Exit status (if exited) and the stderr tail, for panic messages. If the process has
    /// exited, first waits (briefly) for stderr to be fully read.
    pub fn diagnostics(&self) -> String {
        let status = lock(&self.child).try_wait().ok().flatten();
        if status.is_some() {
            let deadline = Instant::now() + Duration::from_secs(2);
            while !self.stderr.is_closed() && Instant::now() < deadline {
                std::thread::sleep(POLL_INTERVAL);
            }
        }
        let state = match status {
            Some(status) => format!("server exited: {status}"),
            None => "server still running".to_owned(),
        };
        format!("{state}\n--- server stderr ---\n{}", self.stderr_tail())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

fn spawn_reader(stdout: ChildStdout, shared: Arc<Shared>, stdin: Arc<Mutex<Option<ChildStdin>>>) {
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match reader.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let line = String::from_utf8_lossy(&buf);
                    let line = line.trim();
                    if line.is_empty() {
                        continue;
                    }
                    match serde_json::from_str::<Value>(line) {
                        Ok(Value::Array(batch)) => {
                            for message in batch {
                                route(message, &shared, &stdin);
                            }
                        }
                        Ok(message) => route(message, &shared, &stdin),
                        Err(_) => lock(&shared.inbox).garbage.push(line.to_owned()),
                    }
                    shared.changed.notify_all();
                }
            }
        }
        lock(&shared.inbox).closed = true;
        shared.changed.notify_all();
    });
}

fn route(message: Value, shared: &Shared, stdin: &Mutex<Option<ChildStdin>>) {
    let method = message
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let id = message.get("id").cloned();
    match (method, id) {
        (Some(method), Some(id)) => {
            let reply = if method == "ping" {
                json!({ "jsonrpc": "2.0", "id": id, "result": {} })
            } else {
                json!({
                    "jsonrpc": "2.0",
                    "id": id,
                    "error": { "code": -32601, "message": format!("test client does not handle {method}") },
                })
            };
            if let Some(pipe) = lock(stdin).as_mut() {
                let _ = pipe
                    .write_all(format!("{reply}\n").as_bytes())
                    .and_then(|()| pipe.flush());
            }
            lock(&shared.inbox).requests.push(message);
        }
        (Some(_), None) => lock(&shared.inbox).notifications.push(message),
        (None, Some(id)) => {
            lock(&shared.inbox)
                .responses
                .insert(id.to_string(), message);
        }
        (None, None) => lock(&shared.inbox).garbage.push(message.to_string()),
    }
}
