//! Long calls as MCP tasks (the `io.modelcontextprotocol/tasks` extension),
//! driven by rmcp's own client, a real MCP client that declares the
//! extension, against the real binary and a real JVM; and the same calls
//! staying plain for a client that does not declare it.

use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig,
    GetTaskParams, Implementation, TaskPayload, TaskStatus,
};
use rmcp::service::{RoleClient, RunningService, ServiceExt};
use serde_json::{Value, json};
use tokio::process::{Child, Command};

use crate::code::{Scratch, dir, edit, started_swap, swap_source};
use crate::support::java::{Jvm, JvmOpts, javac, line_of};
use crate::support::mcp::{Server, ToolReply};
use crate::support::text::threads;

const WAIT: Duration = Duration::from_secs(20);

/// The server as a real client sees it: rmcp's client over the binary's
/// stdio, declaring the tasks extension.
struct Client {
    service: RunningService<RoleClient, ClientConfig>,
    _child: Child,
}

impl Client {
    async fn connect() -> Client {
        Self::connect_with_env(&[]).await
    }

    async fn connect_with_env(env: &[(&str, &str)]) -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_jvmscope"))
            .envs(env.iter().copied())
            .env("JVMSCOPE_OVERHEAD_PCT", "off")
            .env("JVMSCOPE_SESSION_OVERHEAD_PCT", "off")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn jvmscope");
        let stdout = child.stdout.take().expect("stdout");
        let stdin = child.stdin.take().expect("stdin");
        let info = ClientConfig::new(
            ClientCapabilities::builder().enable_tasks().build(),
            Implementation::new("jvmscope-tasks-test", "0"),
        );
        let service = info
            .serve((stdout, stdin))
            .await
            .expect("the MCP handshake");
        Client {
            service,
            _child: child,
        }
    }

    fn params(tool: &str, args: Value) -> CallToolRequestParams {
        let Value::Object(args) = args else {
            panic!("arguments are an object")
        };
        CallToolRequestParams::new(tool.to_string()).with_arguments(args)
    }

    /// A call expected to be answered at once (no task).
    async fn plain(&self, tool: &str, args: Value) -> String {
        match self
            .service
            .call_tool_once(Self::params(tool, args))
            .await
            .expect("tools/call answered")
        {
            CallToolResponse::Complete(r) => {
                let text = text_of(&serde_json::to_value(&r).expect("a result"));
                assert_ne!(r.is_error, Some(true), "{tool}: {text}");
                text
            }
            other => panic!("{tool} should be a plain call, got {other:?}"),
        }
    }

    /// A call expected to become a task; returns its id.
    async fn task(&self, tool: &str, args: Value) -> String {
        match self
            .service
            .call_tool_once(Self::params(tool, args))
            .await
            .expect("tools/call answered")
        {
            CallToolResponse::Task(t) => {
                assert_eq!(t.task.status, TaskStatus::Working, "{t:?}");
                t.task.task_id
            }
            other => panic!("{tool} should run as a task, got {other:?}"),
        }
    }

    async fn get(&self, id: &str) -> rmcp::model::DetailedTask {
        self.service
            .get_task(GetTaskParams::new(id))
            .await
            .expect("tasks/get answered")
            .task
    }

    /// Polls `tasks/get` until `pred` holds (at the interval the server
    /// suggests); panics after `within`.
    async fn until(
        &self,
        id: &str,
        within: Duration,
        what: &str,
        pred: impl Fn(&rmcp::model::DetailedTask) -> bool,
    ) -> rmcp::model::DetailedTask {
        let deadline = Instant::now() + within;
        loop {
            let t = self.get(id).await;
            if pred(&t) {
                return t;
            }
            assert!(Instant::now() < deadline, "{what}: last seen {t:?}");
            let poll = t.task.poll_interval_ms.unwrap_or(200).min(200);
            tokio::time::sleep(Duration::from_millis(poll)).await;
        }
    }
}

impl Client {
    /// Waits for the task to end and returns its result's text; panics
    /// unless it completed.
    async fn completed(&self, id: &str, what: &str) -> String {
        let done = self
            .until(id, WAIT, what, |t| t.task.status.is_terminal())
            .await;
        let TaskPayload::Completed { result } = &done.payload else {
            panic!("{what}: the task did not complete: {done:?}")
        };
        text_of(&Value::Object(result.clone()))
    }
}

fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}

fn orders() -> Jvm {
    let jvm = Jvm::start("Orders", JvmOpts::default());
    jvm.wait_for_line("orders started", WAIT);
    jvm
}

/// No thread of the JVM is suspended, as `debug_list_threads` reads them.
fn assert_nothing_suspended(listing: &str) {
    let held: Vec<_> = threads(listing)
        .into_iter()
        .filter(|t| t.suspend_count > 0)
        .collect();
    assert!(
        held.is_empty(),
        "threads left suspended: {held:?}\n{listing}"
    );
}

#[test]
fn a_wait_declared_as_a_task_completes_with_the_hit_and_a_suspending_dump_runs_as_one() {
    let jvm = orders();
    runtime().block_on(async {
        let client = Client::connect().await;
        client
            .plain("debug_attach", json!({"port": jvm.port()}))
            .await;
        // The wait starts before anything can hit: the task is working,
        // and says so in its status message, while other calls go on.
        let wait = client
            .task("debug_wait_for_event", json!({"timeout_ms": 30000}))
            .await;
        let working = client
            .until(&wait, WAIT, "progress in the status message", |t| {
                t.task
                    .status_message
                    .as_deref()
                    .is_some_and(|m| m.starts_with("waiting for an event"))
            })
            .await;
        assert_eq!(working.task.status, TaskStatus::Working);
        let line = line_of("Orders.java", "loop-label");
        let armed = client
            .plain(
                "debug_set_stop",
                json!({"kind": "line", "class_pattern": "Orders", "line": line}),
            )
            .await;
        assert!(armed.contains("ARMED"), "{armed}");
        let hit = client.completed(&wait, "the wait completes").await;
        assert!(hit.starts_with("[event] seq="), "{hit}");
        assert!(hit.contains("stop=bp_1"), "{hit}");
        assert!(hit.contains(&format!("Orders.loop:{line}")), "{hit}");
        // A dump that suspends runs as a task too, and leaves nothing held
        // beyond what the stop point holds.
        let dump = client
            .task("debug_thread_dump", json!({"suspend": true}))
            .await;
        let text = client.completed(&dump, "the dump completes").await;
        assert!(text.contains("orders-a"), "{text}");
        // A call that does not run long stays plain for the same client.
        client
            .plain(
                "debug_update_stop_point",
                json!({"kind": "clear", "id": "bp_1"}),
            )
            .await;
        client.plain("debug_continue", json!({})).await;
        let listing = client.plain("debug_list_threads", json!({})).await;
        assert_nothing_suspended(&listing);
        // So does a heap walk (of a running JVM: its attach listener is a
        // Java thread, which a suspended VM does not run).
        let heap = client
            .task("debug_heap", json!({"kind": "histogram", "top": 3}))
            .await;
        let text = client.completed(&heap, "the histogram completes").await;
        assert!(text.contains("heap walk"), "{text}");
        let _ = client.service.cancel().await;
    });
}

#[test]
fn a_cancelled_wait_task_ends_cancelled_and_leaves_the_jvm_as_it_was() {
    let jvm = orders();
    runtime().block_on(async {
        let client = Client::connect().await;
        client
            .plain("debug_attach", json!({"port": jvm.port()}))
            .await;
        let before = client.plain("debug_list_stop_points", json!({})).await;
        let wait = client
            .task("debug_wait_for_event", json!({"timeout_ms": 600000}))
            .await;
        assert_eq!(client.get(&wait).await.task.status, TaskStatus::Working);
        let asked = Instant::now();
        client
            .service
            .cancel_task(CancelTaskParams::new(&wait))
            .await
            .expect("tasks/cancel answered");
        let done = client
            .until(&wait, WAIT, "the task ends cancelled", |t| {
                t.task.status.is_terminal()
            })
            .await;
        assert_eq!(done.task.status, TaskStatus::Cancelled, "{done:?}");
        assert!(
            asked.elapsed() < Duration::from_secs(5),
            "a cancel ends the wait at once, not at its timeout ({:?})",
            asked.elapsed()
        );
        let said = done.task.status_message.unwrap_or_default();
        assert!(said.starts_with("[CANCELLED]"), "{said}");
        // The JVM is as it was: nothing suspended, the same stop points,
        // and it runs on.
        let listing = client.plain("debug_list_threads", json!({})).await;
        assert_nothing_suspended(&listing);
        let after = client.plain("debug_list_stop_points", json!({})).await;
        assert_eq!(before, after);
        let ticks = jvm.line_count();
        jvm.wait_for_line_since(ticks, |l| l.starts_with("orders tick"), WAIT);
        let _ = client.service.cancel().await;
    });
}

/// The raw protocol: `notifications/cancelled` naming the request that
/// created a task cancels the task; a client that did not declare the
/// extension gets the same call answered plainly, and `tasks/get` refused.
#[test]
fn cancelling_the_creating_request_cancels_its_task_and_undeclared_clients_get_plain_calls() {
    let jvm = orders();
    let server = Server::spawn();
    let init = server
        .request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
                "clientInfo": {"name": "raw", "version": "0"},
            }),
        )
        .expect("initialize");
    assert!(
        init["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"].is_object(),
        "the server advertises the extension: {init}"
    );
    server.notify("notifications/initialized", Value::Null);
    server
        .call("debug_attach", json!({"port": jvm.port()}))
        .expect_ok();
    let id = json!("wait-to-cancel");
    server.send(&json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "debug_wait_for_event", "arguments": {"timeout_ms": 600000}},
    }));
    let created = server.wait_response(&id, WAIT, "the task handle");
    let task = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task handle: {created}"))
        .to_string();
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    server.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "the user moved on"}),
    );
    let deadline = Instant::now() + WAIT;
    let ended = loop {
        let t = server
            .request("tasks/get", json!({"taskId": task}))
            .expect("tasks/get");
        if t["status"] != "working" {
            break t;
        }
        assert!(Instant::now() < deadline, "still working: {t}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(ended["status"], "cancelled", "{ended}");

    // Without the extension: the same call is answered plainly.
    let other = orders();
    let plain = Server::spawn();
    plain.initialize();
    plain
        .call("debug_attach", json!({"port": other.port()}))
        .expect_ok();
    let reply: ToolReply = plain
        .call("debug_wait_for_event", json!({"timeout_ms": 200}))
        .expect_ok();
    assert!(
        reply.text.starts_with("No event within 200 ms"),
        "{}",
        reply.text
    );
    let refused = plain
        .request("tasks/get", json!({"taskId": task}))
        .expect_err("tasks/get needs the extension");
    assert_eq!(refused["code"], -32021, "{refused}");
}

/// A JDK whose javac waits at a gate (a file) before running the real
/// one: the test knows javac is running, and cancels the reload there.
fn gated_jdk(scratch: &Scratch) -> (std::path::PathBuf, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let gate = scratch.path("gate");
    let bin = scratch.path("jdk/bin");
    std::fs::create_dir_all(&gate).expect("gate dir");
    std::fs::create_dir_all(&bin).expect("bin dir");
    let script = format!(
        "#!/bin/sh\ntouch '{g}/started'\nwhile [ ! -f '{g}/open' ]; do sleep 0.02; done\nexec '{javac}' \"$@\"\n",
        g = gate.display(),
        javac = javac().display()
    );
    let path = bin.join("javac");
    std::fs::write(&path, script).expect("javac script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    (scratch.path("jdk"), gate)
}

#[test]
fn a_reload_cancelled_while_javac_runs_sends_nothing_and_one_left_alone_installs_the_fix() {
    let scratch = Scratch::new("task-reload");
    let out = scratch.path("classes");
    std::fs::create_dir_all(&out).expect("out");
    let src = scratch.path("Swap.java");
    std::fs::write(&src, edit(&swap_source(), "x * 2", "x * 5")).expect("write");
    let (jdk, gate) = gated_jdk(&scratch);
    let jvm = started_swap(JvmOpts::default());
    runtime().block_on(async {
        let client = Client::connect_with_env(&[("JAVA_HOME", &dir(&jdk))]).await;
        client
            .plain(
                "debug_attach",
                json!({"port": jvm.port(), "class_roots": [dir(&out)], "source_roots": [dir(&scratch.0)]}),
            )
            .await;
        let reload = json!({"class_name": "Swap", "compile": true, "sources": [dir(&src)]});
        let first = client.task("debug_reload_class", reload.clone()).await;
        let deadline = Instant::now() + WAIT;
        while !gate.join("started").exists() {
            assert!(Instant::now() < deadline, "javac never started");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let t = client.get(&first).await;
        assert_eq!(t.task.status, TaskStatus::Working, "{t:?}");
        assert_eq!(
            t.task.status_message.as_deref(),
            Some("compiling with javac"),
            "{t:?}"
        );
        client
            .service
            .cancel_task(CancelTaskParams::new(&first))
            .await
            .expect("tasks/cancel answered");
        let done = client
            .until(&first, WAIT, "the reload ends", |t| t.task.status.is_terminal())
            .await;
        assert_eq!(done.task.status, TaskStatus::Cancelled, "{done:?}");
        let said = done.task.status_message.unwrap_or_default();
        assert!(said.contains("nothing was sent to the JVM"), "{said}");
        // Nothing was built and the JVM runs the old code.
        assert!(!out.join("Swap.class").exists(), "javac was stopped");
        let since = jvm.line_count();
        let (_, line) = jvm.wait_for_line_since(since, |l| l.starts_with("swap "), WAIT);
        assert_eq!(line, "swap v1 14 h");
        // The same reload, left to run, installs the edit.
        std::fs::write(gate.join("open"), b"").expect("open the gate");
        let second = client.task("debug_reload_class", reload).await;
        let text = client.completed(&second, "the reload completes").await;
        assert!(text.contains("Reloaded Swap"), "{text}");
        let since = jvm.line_count();
        jvm.wait_for_line_since(since, |l| l == "swap v1 35 h", WAIT);
        let _ = client.service.cancel().await;
    });
}

#[test]
fn a_fan_out_across_a_group_runs_as_a_task_whose_progress_counts_the_members() {
    let (a, b) = (orders(), orders());
    runtime().block_on(async {
        let client = Client::connect().await;
        let targets = [a.port(), b.port()].map(|p| format!("127.0.0.1:{p}"));
        let opened = client
            .plain("debug_attach", json!({ "targets": targets }))
            .await;
        assert!(
            opened.contains(&targets[0]) && opened.contains(&targets[1]),
            "{opened}"
        );
        // Arming on every member is real work in each JVM: a task, whose
        // status ends counting both members.
        let line = line_of("Orders.java", "loop-label");
        let arm = client
            .task(
                "debug_set_stop",
                json!({"kind": "line", "class_pattern": "Orders", "line": line, "trace": true}),
            )
            .await;
        let armed = client.completed(&arm, "arming on the group").await;
        for t in &targets {
            assert!(armed.contains(t.as_str()), "each member labelled: {armed}");
        }
        assert_eq!(armed.matches("ARMED").count(), 2, "{armed}");
        let done = client.get(&arm).await;
        assert_eq!(
            done.task.status_message.as_deref(),
            Some("2 of 2 members answered"),
            "{done:?}"
        );
        // A read of what each session already holds stays a plain call.
        let listed = client.plain("debug_list_stop_points", json!({})).await;
        assert!(listed.contains(&targets[1]), "{listed}");
        // Leaving restores every member, as a task too.
        let left = client.task("debug_disconnect", json!({})).await;
        let text = client.completed(&left, "disconnecting the group").await;
        for t in &targets {
            assert!(text.contains(t.as_str()), "{text}");
        }
        let _ = client.service.cancel().await;
    });
}
