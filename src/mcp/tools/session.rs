//! Session tools: attach, launch, list, choose the current one, disconnect.

use std::path::PathBuf;
use std::time::Duration;

use futures::future::join_all;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{Call, Ctx, Effect, Reply, Route};
use crate::actors::{LeftoverOutcome, SessionHandle, Startup};
use crate::mcp::error::ToolError;
use crate::model::invoking::Invoking;
use crate::model::session::ReleaseCheck;
use crate::model::{AttachSpec, LaunchSpec, LaunchTarget, SessionState};

const DEFAULT_TIMEOUT_MS: u64 = 5_000;
const DEFAULT_LAUNCH_TIMEOUT_MS: u64 = 20_000;

/// Arguments of debug_attach.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AttachParams {
    /// Host of the JDWP agent; default 127.0.0.1.
    pub host: Option<String>,
    pub port: Option<u16>,
    /// host:port each: a group.
    #[serde(default, deserialize_with = "crate::mcp::tools::args::strings")]
    pub targets: Option<Vec<String>>,
    /// Connect and handshake limit, ms; default 5000.
    pub timeout_ms: Option<u64>,
    /// Refuse every change to the JVM, at the wire.
    pub read_only: Option<bool>,
    #[serde(default, deserialize_with = "crate::mcp::tools::args::strings")]
    pub source_roots: Option<Vec<String>>,
    #[serde(default, deserialize_with = "crate::mcp::tools::args::strings")]
    pub class_roots: Option<Vec<String>>,
}

/// Arguments of debug_launch.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LaunchParams {
    /// Main class (with classpath), or give jar.
    pub main_class: Option<String>,
    /// Classpath for main_class; default ".".
    pub classpath: Option<String>,
    /// Executable jar to run instead of main_class.
    pub jar: Option<String>,
    /// Extra JVM options, e.g. ["-Xmx256m"].
    #[serde(default, deserialize_with = "crate::mcp::tools::args::strings")]
    pub jvm_args: Option<Vec<String>>,
    #[serde(default, deserialize_with = "crate::mcp::tools::args::strings")]
    pub args: Option<Vec<String>>,
    pub working_dir: Option<String>,
    /// JDK; default JAVA_HOME, then PATH.
    pub java_home: Option<String>,
    /// Hold it at its main class until debug_continue; default true.
    pub suspend: Option<bool>,
    /// Leave the JVM running when the session ends.
    pub detach_on_disconnect: Option<bool>,
    /// Wait for the JDWP port, ms; default 20000.
    pub timeout_ms: Option<u64>,
    /// Refuse every mutation at the wire.
    pub read_only: Option<bool>,
    #[serde(default, deserialize_with = "crate::mcp::tools::args::strings")]
    pub source_roots: Option<Vec<String>>,
    #[serde(default, deserialize_with = "crate::mcp::tools::args::strings")]
    pub class_roots: Option<Vec<String>>,
}

/// Arguments of debug_list_sessions.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListSessionsParams {}

/// Arguments naming a session.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionParams {
    /// Session id (s1, s2, …); default: the current session.
    pub session_id: Option<String>,
}

/// Arguments of debug_set_current_session.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetCurrentParams {
    /// Session id to make current.
    pub session_id: String,
}

pub fn routes() -> Vec<Route> {
    vec![
        Route::new(
            "debug_attach",
            "Attach to a JVM",
            "Attach to a JVM started with \
             -agentlib:jdwp=transport=dt_socket,server=y,address=PORT, or to each of targets (a \
             group); the session becomes current. Suspends nothing. read_only refuses every change at the wire. A port that is \
             not JDWP says NOT_JDWP.",
            Effect::Changes,
            attach,
        )
            .with_guide(
                "Attach to a running JVM started with -agentlib:jdwp=transport=dt_socket,server=y,address=HOST:PORT. \
                  Suspends nothing; a JVM started with suspend=y stays held until debug_continue. Opens a session \
                  that becomes current. read_only refuses every mutation at the wire. A port that is not JDWP is \
                  reported as NOT_JDWP within timeout_ms. \
                  targets [\"host:port\", …] (at most 32) attaches each concurrently and opens one group session \
                  (g1, …), current: each member is a session of its own, labelled host:port and pid. A target given \
                  twice is attached once; one that does not answer is named with why, and the group opens with the \
                  rest. On a group, debug_set_stop, debug_update_stop_point, debug_panic, debug_list_stop_points, \
                  debug_get_traces (group_by may name member), debug_thread_dump, debug_heap, debug_hot_threads, \
                  debug_profile and debug_disconnect act on every member at once and merge the replies; a member \
                  that fails is named with why while the others answer. Other tools are refused on a group: \
                  session_id names one member.",
            ),
        Route::new(
            "debug_launch",
            "Launch a JVM",
            "Start a JVM (main_class and classpath, or jar) with a JDWP agent on a free loopback \
             port, and attach. suspend (default true) holds it at its main class until \
             debug_continue. Ends with the session unless detach_on_disconnect.",
            Effect::Changes,
            launch,
        )
            .with_guide(
                "Start a JVM (main_class + classpath, or jar) with a JDWP agent on a free loopback port and attach. \
                  suspend (default true) holds it once its main class is loaded, before any of it runs; \
                  debug_continue starts it. Dying during startup is an error with its exit and last lines; \
                  debug_read_output reads its output. Terminated when the session ends unless detach_on_disconnect.",
            ),
        Route::new(
            "debug_list_sessions",
            "List debug sessions",
            "Every session: id, host:port, current, RUNNING, SUSPENDED or DEAD (why), JVM, packets \
             sent, stop points. Read live; suspends nothing.",
            Effect::Read,
            list_sessions,
        )
            .with_guide(
                "Every session: id, host:port, current marker, RUNNING / SUSPENDED (threads held) / DEAD (why), \
                  JVM name and version, JDWP packets sent, stop points. State is read live (one pipelined burst \
                  per JVM); nothing is suspended.",
            )
        .with_output::<super::data::Sessions>(),
        Route::new(
            "debug_set_current_session",
            "Choose the session",
            "Make a session current: tools called without session_id use it.",
            Effect::Idempotent,
            set_current,
        ),
        Route::new(
            "debug_disconnect",
            "Disconnect",
            "End a session: clear every request, resume every thread (JDWP Dispose), check none is \
             left suspended. A launched JVM is terminated unless detach_on_disconnect.",
            Effect::Destructive,
            disconnect,
        )
            .with_guide(
                "End a session: clears every event request and resumes every thread in one step (JDWP Dispose), \
                  re-checks that no thread is left suspended, and reports what was released. A JVM started by \
                  debug_launch is terminated unless launched with detach_on_disconnect.",
            ),
    ]
}

fn roots(given: Option<Vec<String>>, env: &str) -> Vec<PathBuf> {
    match given {
        Some(v) => v.into_iter().map(PathBuf::from).collect(),
        None => std::env::var_os(env)
            .map(|v| std::env::split_paths(&v).collect())
            .unwrap_or_default(),
    }
}

async fn attach(ctx: Ctx, call: Call<AttachParams>) -> Reply {
    let (tool, p) = (call.tool, call.params?);
    let spec = |host: String, port: u16| AttachSpec {
        host,
        port,
        timeout: Duration::from_millis(p.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS)),
        read_only: p.read_only.unwrap_or(false),
        source_roots: roots(p.source_roots.clone(), "JDWP_SOURCE_ROOTS"),
        class_roots: roots(p.class_roots.clone(), "JDWP_CLASS_ROOTS"),
    };
    match (&p.targets, p.port) {
        (Some(targets), None) if p.host.is_none() => {
            let specs = targets
                .iter()
                .map(|t| {
                    super::group::target(t)
                        .map(|(host, port)| spec(host, port))
                        .ok_or_else(|| {
                            ToolError::bad_argument(
                                tool,
                                format!("target {t:?} is not host:port (e.g. 127.0.0.1:5005)"),
                            )
                        })
                })
                .collect::<Result<Vec<_>, _>>()?;
            super::group::attach(&ctx, specs).await
        }
        (None, Some(port)) => {
            let host = p.host.clone().unwrap_or_else(|| "127.0.0.1".into());
            let handle = ctx.engine.attach(&spec(host, port)).await?;
            Ok(opened(&handle, "Attached", None, None).await)
        }
        _ => Err(ToolError::bad_argument(
            tool,
            "give port (and host) for one JVM, or targets [\"host:port\", …] for a group",
        )),
    }
}

async fn launch(ctx: Ctx, call: Call<LaunchParams>) -> Reply {
    let (tool, p) = (call.tool, call.params?);
    let target = match (p.main_class, p.jar) {
        (Some(main_class), None) => LaunchTarget::MainClass {
            main_class,
            classpath: p.classpath.unwrap_or_else(|| ".".into()),
        },
        (None, Some(jar)) => LaunchTarget::Jar {
            jar: PathBuf::from(jar),
        },
        _ => {
            return Err(ToolError::bad_argument(
                tool,
                "give exactly one of main_class (with classpath) or jar",
            ));
        }
    };
    let spec = LaunchSpec {
        target,
        jvm_args: p.jvm_args.unwrap_or_default(),
        args: p.args.unwrap_or_default(),
        working_dir: p.working_dir.map(PathBuf::from),
        java_home: p.java_home.map(PathBuf::from),
        suspend: p.suspend.unwrap_or(true),
        detach_on_disconnect: p.detach_on_disconnect.unwrap_or(false),
        timeout: Duration::from_millis(p.timeout_ms.unwrap_or(DEFAULT_LAUNCH_TIMEOUT_MS)),
        read_only: p.read_only.unwrap_or(false),
        source_roots: roots(p.source_roots, "JDWP_SOURCE_ROOTS"),
        class_roots: roots(p.class_roots, "JDWP_CLASS_ROOTS"),
    };
    let (handle, startup) = ctx.engine.launch(&spec).await?;
    let pid = handle.launched_pid();
    let (main, held) = match &spec.target {
        LaunchTarget::MainClass { main_class, .. } => (main_class.as_str(), spec.suspend),
        LaunchTarget::Jar { .. } => ("of the jar (its first class outside the JDK)", spec.suspend),
    };
    let note = match (startup, held) {
        (Startup::MainLoaded, true) => format!(
            "Held: the main class {main} is loaded and none of it has run, not even its static initializer. \
             Next: set stop points now (they arm at once), then debug_continue runs main; \
             debug_read_output shows what it prints"
        ),
        (Startup::MainLoaded, false) => {
            format!(
                "Running: the main class {main} is loaded. debug_read_output shows what it prints"
            )
        }
        (Startup::Slow, true) => format!(
            "Held: the main class {main} was not loaded within timeout_ms; the JVM is paused where it was. \
             debug_list_threads shows where; debug_continue runs it"
        ),
        (Startup::Slow, false) => {
            format!("Running: the main class {main} was not loaded within timeout_ms yet")
        }
    };
    Ok(opened(&handle, "Launched", pid, Some(note)).await)
}

/// The reply to attach and launch.
pub(super) async fn opened(
    handle: &SessionHandle,
    verb: &str,
    pid: Option<u32>,
    startup: Option<String>,
) -> rmcp::model::CallToolResult {
    let vm = handle.vm().unwrap_or_default();
    let state = handle.state().await;
    let mut out = format!(
        "{verb} session {} to {}: {} {} (JDWP {}.{})",
        handle.id(),
        handle.address(),
        vm.vm_name,
        vm.vm_version,
        vm.jdwp_major,
        vm.jdwp_minor
    );
    if let Some(pid) = pid {
        out.push_str(&format!("\nProcess: pid {pid}"));
    }
    out.push_str(&format!("\nState: {}", describe_state(&state)));
    if handle.read_only() {
        out.push_str("\nRead-only: every mutation is refused at the wire");
    }
    for left in handle.restored_at_attach().await {
        match left.outcome {
            LeftoverOutcome::Restored => out.push_str(&format!(
                "\nRESTORED: {} was left instrumented by an earlier jvmscope; its original bytes are back",
                left.class
            )),
            LeftoverOutcome::ChangedSince => out.push_str(&format!(
                "\nLEFT ALONE: {} carries an earlier jvmscope's probe helper, but its code changed since (a reload or another tool) and no longer calls it: it keeps what it runs now",
                left.class
            )),
            LeftoverOutcome::Failed(why) => out.push_str(&format!(
                "\nWARNING: {} was left instrumented by an earlier jvmscope and could not be restored: {why} (its probe is switched off)",
                left.class
            )),
        }
    }
    if let Some(startup) = startup {
        out.push('\n');
        out.push_str(&startup);
    } else if matches!(state, SessionState::Suspended { .. }) {
        out.push_str("\nNext: debug_continue runs it; debug_list_threads shows who is held");
    }
    super::text(out)
}

/// What re-checking the JVM found after a disconnect released it.
fn release_check(check: &ReleaseCheck, invoking: &[Invoking]) -> String {
    match check {
        ReleaseCheck::AllRun { total } => format!(
            "verified: {}",
            crate::mcp::render::threads_run(*total, invoking, false)
        ),
        ReleaseCheck::StillHeld {
            still_held,
            total,
            resumes,
        } => format!(
            "WARNING: {still_held} of {total} threads were still suspended after {resumes} resumes; Dispose released the rest"
        ),
        ReleaseCheck::Unverified(e) => format!("could not verify before releasing ({e})"),
    }
}

pub fn describe_state(state: &SessionState) -> String {
    match state {
        SessionState::Running => "RUNNING".into(),
        SessionState::Suspended { held, total } => {
            format!("SUSPENDED ({held} of {total} threads held)")
        }
        SessionState::Dead { reason } => format!("DEAD ({reason})"),
        SessionState::Unanswered { reason } => {
            format!("NOT_ANSWERING ({reason}; the session is alive, its state unknown)")
        }
    }
}

/// How many of a dead launched JVM's last lines the session list shows.
const LISTED_OUTPUT_LINES: usize = 5;

async fn list_sessions(ctx: Ctx, call: Call<ListSessionsParams>) -> Reply {
    call.params?;
    let sessions = ctx.engine.sessions();
    if sessions.is_empty() {
        return Ok(super::data(
            "No sessions. debug_attach {host, port} or debug_launch {main_class, classpath} opens one.",
            &super::data::Sessions {
                sessions: Vec::new(),
            },
        ));
    }
    let current = ctx.engine.current();
    let rows = join_all(sessions.iter().map(|s| async move {
        let state = tokio::time::timeout(Duration::from_secs(3), s.state())
            .await
            .unwrap_or(SessionState::Unanswered {
                reason: "no answer within 3 s".into(),
            });
        let stop_points = if s.check_alive().is_ok() {
            s.stop_point_count().await
        } else {
            0
        };
        (s, state, stop_points)
    }))
    .await;
    let mut lines = super::group::listed(&ctx, current.as_ref());
    let mut data = Vec::new();
    for (s, state, stop_points) in rows {
        let is_current = current.as_ref() == Some(s.id());
        let vm = s.vm().unwrap_or_default();
        let packets = s.packets_sent();
        let held: Vec<String> = s
            .held_threads()
            .await
            .iter()
            .map(|h| {
                format!(
                    "@{:#x} x{} {:.0}s",
                    h.thread.0,
                    h.count,
                    h.since.elapsed().as_secs_f64()
                )
            })
            .collect();
        lines.push(format!(
            "{} {} {} {} | {} {} | packets={} stop_points={}{}{}{}",
            if is_current { "*" } else { " " },
            s.id(),
            s.address(),
            describe_state(&state),
            vm.vm_name,
            vm.vm_version,
            packets,
            stop_points,
            s.launched_pid()
                .map(|pid| format!(" pid={pid}"))
                .unwrap_or_default(),
            if s.read_only() { " read-only" } else { "" },
            if held.is_empty() {
                String::new()
            } else {
                format!(" held_by_you=[{}]", held.join(", "))
            }
        ));
        // A launched JVM that ended: how, and what it said last.
        let dead = matches!(state, SessionState::Dead { .. });
        let exit = if dead { s.launched_exit() } else { None };
        let output = if dead {
            s.launched_output(LISTED_OUTPUT_LINES)
        } else {
            Vec::new()
        };
        if let Some(exit) = &exit {
            lines.push(format!("    the launched JVM exited: {exit}"));
        }
        if let Some(note) = super::code::installed_note(s) {
            lines.push(format!("    {note}"));
        }
        for line in &output {
            lines.push(format!("    | {line}"));
        }
        data.push(super::data::SessionRow {
            session_id: s.id().0.clone(),
            address: s.address().to_string(),
            current: is_current,
            state: state.label().into(),
            detail: describe_state(&state),
            vm_name: vm.vm_name,
            vm_version: vm.vm_version,
            packets_sent: packets,
            stop_points,
            read_only: s.read_only(),
            pid: s.launched_pid(),
            held_threads: held,
            exit,
            last_output: output,
            installed_classes: s
                .installed_classes()
                .iter()
                .map(|i| i.name.clone())
                .collect(),
        });
    }
    Ok(super::data(
        lines.join("\n"),
        &super::data::Sessions { sessions: data },
    ))
}

async fn set_current(ctx: Ctx, call: Call<SetCurrentParams>) -> Reply {
    let p = call.params?;
    if let Some(group) = ctx.engine.set_current_group(&p.session_id) {
        return Ok(super::text(format!(
            "Current session: group {} ({})",
            group.id,
            super::group::members_line(&group)
        )));
    }
    let handle = ctx.engine.set_current(&p.session_id)?;
    let mut out = format!("Current session: {} ({})", handle.id(), handle.address());
    if let Some(reason) = handle.dead_reason() {
        out.push_str(&format!("\nNote: it is DEAD ({reason})"));
    }
    Ok(super::text(out))
}

async fn disconnect(ctx: Ctx, call: Call<SessionParams>) -> Reply {
    let p = call.params?;
    let handle = ctx.engine.session(p.session_id.as_deref())?;
    // Threads a call of ours holds stay inside it after the release.
    let invoking = handle.invoking();
    let report = handle.disconnect().await?;
    // Who held what, by our own ledger; the JVM's count of every
    // suspended thread only where others held more.
    let by_us = match report.held_by_us {
        1 => "1 thread was".to_string(),
        n => format!("{n} threads were"),
    };
    let others = if report.threads_held > report.held_by_us {
        format!(" ({} were suspended in all)", report.threads_held)
    } else {
        String::new()
    };
    let mut out = format!(
        "Disconnected session {} ({}): cleared {} stop points; {by_us} suspended by us{others}; {}",
        handle.id(),
        handle.address(),
        report.stop_points_cleared,
        release_check(&report.verification, &invoking)
    );
    if let Some(e) = &report.dispose_failed {
        out.push_str(&format!("; Dispose failed: {e}"));
    }
    if let Some(process) = &report.process {
        out.push_str(&format!("\nProcess: {process}"));
    }
    if let Some(note) = super::code::installed_note(&handle) {
        out.push_str(&format!("\n{note}"));
    }
    Ok(super::text(out))
}
