//! Tool errors as the agent sees them: one line starting with a stable
//! `[LABEL]`, what went wrong, and the next step. Everything an agent can
//! fix is a tool result with `isError`, never a protocol error (clients
//! hide protocol error text from the model).

use rmcp::model::{CallToolResult, ContentBlock};

use crate::actors::{
    ArgNeed, ArmError, AttachError, CallError, CodeError, JdwpError, LaunchError, SessionError,
    ThreadUse,
};
use crate::actors::{LocalError, ProbeRefusal};
use crate::classfile::probe::Refusal;
use crate::mcp::render::change_line;

/// A failure to report to the agent.
#[derive(Debug, Clone)]
pub struct ToolError {
    pub label: &'static str,
    pub message: String,
    pub next: Option<String>,
}

impl ToolError {
    pub fn new(label: &'static str, message: impl Into<String>) -> Self {
        Self {
            label,
            message: message.into(),
            next: None,
        }
    }

    pub fn next(mut self, next: impl Into<String>) -> Self {
        self.next = Some(next.into());
        self
    }

    pub fn bad_argument(tool: &str, detail: impl std::fmt::Display) -> Self {
        Self::new("BAD_ARGUMENT", format!("{tool}: {detail}"))
    }

    /// The transport-loss envelope, `[VM_GONE] <tool>: …`: the reason is
    /// the deepest one known (the socket's, the JVM's exit), the next step
    /// is a diagnosis or a re-attach.
    pub fn vm_gone(reason: impl std::fmt::Display) -> Self {
        ToolError::new(
            "VM_GONE",
            format!("the JVM is no longer reachable ({reason})"),
        )
        .next(REATTACH)
    }

    /// Names the tool in a `[VM_GONE]` envelope (every tool's error goes
    /// through here, so the family is one).
    pub fn in_tool(mut self, tool: &str) -> Self {
        if self.label == "VM_GONE" && !self.message.starts_with(tool) {
            self.message = format!("{tool}: {}", self.message);
        }
        self
    }

    /// The text of the reply.
    pub fn text(&self) -> String {
        match &self.next {
            Some(next) => format!("[{}] {}\nNext: {}", self.label, self.message, next),
            None => format!("[{}] {}", self.label, self.message),
        }
    }

    pub fn into_result(self) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text(self.text())])
    }
}

/// What to do after a JVM did not answer in time.
pub const TIMEOUT_NEXT: &str = "the JVM may be busy or wedged; debug_list_sessions shows its state";

/// What to do about a read-only refusal.
pub const READ_ONLY_NEXT: &str = "attach a new session without read_only (a server started with \
     JDWP_READONLY set, or over HTTP without JDWP_READONLY=0, stays read-only)";

const REATTACH: &str = "debug_diagnose shows what is left; debug_attach {host, port} re-attaches to a JVM listening again (debug_list_jvms finds it), or debug_launch starts one";

impl From<SessionError> for ToolError {
    fn from(e: SessionError) -> Self {
        let text = e.to_string();
        match e {
            SessionError::NoSession => ToolError::new("NO_SESSION", "no session is open")
                .next("debug_attach {host, port} or debug_launch {main_class, classpath}"),
            SessionError::Group { id, members } => ToolError::new(
                "GROUP",
                format!(
                    "{id} is a group; this tool acts on one JVM, not across a group"
                ),
            )
            .next(format!(
                "pick a member with session_id: {}",
                members
                    .iter()
                    .map(|(s, addr)| format!("{s} ({addr})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            SessionError::UnknownSession(id) => {
                ToolError::new("UNKNOWN_SESSION", format!("there is no session {id:?}"))
                    .next("debug_list_sessions shows the session ids")
            }
            SessionError::Gone {
                id,
                reason,
                exit,
                output,
            } => {
                let mut message = ToolError::vm_gone(format!("session {id}: {reason}")).message;
                if let Some(exit) = exit {
                    message.push_str(&format!(
                        "\nThe launched JVM exited: {exit} (debug_read_output {{session_id: \"{id}\"}} reads all it kept of its output)"
                    ));
                }
                if !output.is_empty() {
                    message.push_str("\nIts last output:");
                    for line in &output {
                        message.push_str(&format!("\n  {line}"));
                    }
                }
                ToolError::new("VM_GONE", message).next(REATTACH)
            }
            SessionError::Jdwp(e) => e.into(),
            SessionError::Arm(e) => e.into(),
            SessionError::Call(e) => e.into(),
            SessionError::Unresponsive(_) | SessionError::RegistryPoisoned => {
                ToolError::new("INTERNAL", text)
            }
            SessionError::ReadOnly { .. } => ToolError::new("READ_ONLY", text).next(READ_ONLY_NEXT),
            SessionError::NoSuchThread { .. } => ToolError::new("NO_THREAD", text)
                .next("debug_list_threads lists the live threads"),
            SessionError::NoThreadSuspended { purpose } => {
                ToolError::new("NO_THREAD", text).next(match purpose {
                    ThreadUse::Read => {
                        "pass thread_id of a thread held by debug_thread, or arm a suspending stop point and wait for its hit"
                    }
                    ThreadUse::Step => {
                        "pass thread_id of a suspended thread (debug_list_threads), or arm a suspending stop point and wait for its hit"
                    }
                    ThreadUse::Write => {
                        "pass thread_id of a suspended thread, or hit a suspending stop point"
                    }
                })
            }
            SessionError::ThreadRunning { purpose, .. } => {
                ToolError::new("THREAD_RUNNING", text).next(match purpose {
                    ThreadUse::Step => {
                        "a step starts from a suspended thread: a stop point hit, or debug_thread"
                    }
                    ThreadUse::Read | ThreadUse::Write => {
                        "suspend it with debug_thread, or hit a suspending stop point"
                    }
                })
            }
            SessionError::ThreadFinished { .. } => ToolError::new("THREAD_FINISHED", text),
            SessionError::FrameOutOfRange { .. }
            | SessionError::OutermostFrame { .. }
            | SessionError::NoFrame { .. } => ToolError::new("BAD_FRAME", text)
                .next("debug_get_stack shows the frames and their indexes"),
            SessionError::NativeFrame { .. } | SessionError::FrameRefused { .. } => {
                ToolError::new("OPAQUE_FRAME", text)
            }
            SessionError::TypeMismatch { .. }
            | SessionError::ReturnTypeMismatch { .. }
            | SessionError::IndexNotInt => ToolError::new("TYPE_MISMATCH", text),
            SessionError::MissingReturnValue { .. } => ToolError::new("BAD_ARGUMENT", text),
            SessionError::NotWritable(_) => ToolError::new("NOT_WRITABLE", text),
            SessionError::NotInScope { .. } | SessionError::NoSuchField { .. } => {
                ToolError::new("NO_TARGET", text)
            }
            SessionError::EvalFailed { .. } => ToolError::new("EVAL_FAILED", text),
            SessionError::StepTimeout { .. } => ToolError::new("STEP_TIMEOUT", text),
            SessionError::StepInterrupted => ToolError::vm_gone(text),
            SessionError::ClassNotLoaded { .. } => ToolError::new("NOT_LOADED", text)
                .next("debug_list_classes shows what is loaded (filter by a part of the name)"),
            SessionError::NoSuchCopy { .. } => ToolError::new("NO_SUCH_COPY", text)
                .next("pin one of the copies named above, or drop the @loader suffix"),
            SessionError::Unsupported { .. } => ToolError::new("NOT_SUPPORTED", text),
            SessionError::Code(e) => e.into(),
            SessionError::Local(e) => e.into(),
            SessionError::PauseOverBudget { .. } => ToolError::new("PAUSE_BUDGET", text)
                .next("raise max_pause_ms to accept that pause, or pass channel:\"attach\" for a local JVM"),
            SessionError::NoInstance { .. } => ToolError::new("NO_INSTANCE", text)
                .next("debug_heap kind histogram shows which classes have instances"),
        }
    }
}

impl From<LocalError> for ToolError {
    fn from(e: LocalError) -> Self {
        let text = e.to_string();
        match e {
            LocalError::NotLocal { .. } | LocalError::NoProcess { .. } => {
                ToolError::new("LOCAL_JVMS_ONLY", text).next(
                    "run jvmscope on the JVM's machine; debug_heap kind histogram and debug_heap kind holders work over JDWP from anywhere",
                )
            }
            LocalError::NoPerfData { .. } | LocalError::PerfData { .. } => {
                ToolError::new("NO_PERFDATA", text)
                    .next("debug_list_jvms shows which JVMs expose hsperfdata")
            }
            LocalError::Proc { .. } => ToolError::new("PROCESS_UNREADABLE", text),
            LocalError::Attach { .. }
            | LocalError::AttachDisabled { .. }
            | LocalError::HeapDump { .. } => {
                ToolError::new("ATTACH_FAILED", text).next("pass channel:\"jdwp\" to count over JDWP instead")
            }
            LocalError::HeldByDebugger { .. } => ToolError::new("ATTACH_FAILED", text)
                .next("debug_continue first, or pass channel:\"jdwp\" to count over JDWP"),
            LocalError::Jfr { .. } => ToolError::new("JFR_FAILED", text)
                .next("pass channel:\"jdwp\" to sample over JDWP instead"),
        }
    }
}

/// How to pass an argument no literal builds: as an object built by an
/// expression, by its handle.
fn arg_advice(needs: Option<&ArgNeed>) -> String {
    let build = |class: &str| {
        format!("build the object with an expression (new {class}(…)) and pass its @0x… handle")
    };
    match needs {
        Some(ArgNeed::EnumOrObject { class }) => format!("; {}", build(class)),
        Some(ArgNeed::Object { class }) => format!(": {}", build(class)),
        None => String::new(),
    }
}

impl From<CallError> for ToolError {
    fn from(e: CallError) -> Self {
        let text = e.to_string();
        match e {
            CallError::NoSuchMethod { .. } => ToolError::new("NO_SUCH_METHOD", text)
                .next("debug_invoke with template:true lists the overloads and what each takes"),
            CallError::Ambiguous { .. } => ToolError::new("AMBIGUOUS_OVERLOAD", text)
                .next("pass param_types with the declared types of the one to call"),
            CallError::Argument { needs, .. } => {
                ToolError::new("BAD_ARGUMENT", text + &arg_advice(needs.as_ref()))
                    .next("debug_invoke with template:true shows what each parameter takes")
            }
            CallError::NeedsInstance { .. } => ToolError::new("BAD_ARGUMENT", text)
                .next("pass object (an @0x… handle) or bean instead of class"),
            CallError::NotLoaded { .. } => ToolError::new("NOT_LOADED", text)
                .next("trigger the code that uses it, or check the name with debug_list_classes"),
            CallError::CannotPark { .. } | CallError::AgentHeld { .. } => {
                ToolError::new("NO_THREAD", text).next(
                    "arm a suspending stop point where the code passes and call again while it holds the thread, or pass thread_id of another thread",
                )
            }
            CallError::Threw { .. } => ToolError::new("INVOKE_THREW", text),
            CallError::Timeout { .. } => ToolError::new("INVOKE_TIMEOUT", text)
                .next("raise timeout_ms, or set all_threads:true if the method waits on another thread"),
            CallError::Cancelled { .. } => ToolError::new("INVOKE_CANCELLED", text)
                .next("raise timeout_ms, or set all_threads:true if the method waits on another thread"),
            CallError::NoSpringContext => ToolError::new("NO_SPRING", text)
                .next("wait until the application has created its context, then call again"),
            CallError::NoBean { .. } => ToolError::new("NO_BEAN", text)
                .next("debug_spring with beans:\"\" lists the beans by name and type"),
            CallError::NoEntityManager { .. } => ToolError::new("NO_TARGET", text)
                .next("pass entity_manager: an expression (Repo.em, this.em) or an @0x… handle"),
            CallError::WrongKind { .. } => ToolError::new("NO_TARGET", text),
        }
    }
}

impl From<ArmError> for ToolError {
    fn from(e: ArmError) -> Self {
        let text = e.to_string();
        match e {
            ArmError::Jdwp(j) => j.into(),
            ArmError::RegistryGone => ToolError::vm_gone(text),
            ArmError::Internal(_) => ToolError::new("INTERNAL", text),
            ArmError::UnknownStopPoint { .. } => ToolError::new("UNKNOWN_STOP_POINT", text)
                .next("debug_list_stop_points shows the ids"),
            ArmError::UpdateChangesTarget => ToolError::new("BAD_ARGUMENT", text),
            ArmError::NoSuchMethod { .. } => {
                ToolError::new("NO_SUCH_METHOD", text).next("pass one of the methods listed above")
            }
            ArmError::NoCode { .. } => ToolError::new("NO_CODE", text)
                .next("stop in an implementation: a concrete class, or a wildcard family of them"),
            ArmError::UnknownName { .. } => ToolError::new("UNKNOWN_NAME", text).next(
                "use one of the names above (debug_get_stack on a hit lists the locals), or read a field through this.",
            ),
            ArmError::NoCodeAtLine { .. } => ToolError::new("NO_CODE_AT_LINE", text)
                .next("pick a line with code (a blank line, comment or declaration has none)"),
            ArmError::NoSuchField { .. } => ToolError::new("NO_SUCH_FIELD", text)
                .next("pass one of the fields declared above, on the class that declares it"),
            ArmError::NoSuchThread { .. } => {
                ToolError::new("NO_SUCH_THREAD", text).next("debug_list_threads shows thread ids")
            }
            ArmError::NoSuchObject { .. } => ToolError::new("NO_SUCH_OBJECT", text)
                .next("take a handle from a fresh reply (a trace, a stack view)"),
            ArmError::InstanceOnUnloaded { .. } => ToolError::new("INSTANCE_REFUSED", text)
                .next("arm without instance_id, or after the class has loaded"),
            ArmError::InstanceOnStaticMethod => ToolError::new("INSTANCE_REFUSED", text)
                .next("use a condition, or stop in an instance method"),
            ArmError::InstanceOnStaticField => ToolError::new("INSTANCE_REFUSED", text)
                .next("watch the static field without instance_id"),
            ArmError::MonitorClassNotLoaded { .. } => ToolError::new("NOT_LOADED", text)
                .next("arm without monitor_class, or once the class is loaded"),
            ArmError::NotSupported { .. } => ToolError::new("NOT_SUPPORTED", text).next(
                "debug_list_threads shows which threads are blocked; debug_get_stack shows where",
            ),
            ArmError::AllRefused { .. } => ToolError::new("ARM_FAILED", text),
            ArmError::BadEntry { .. } => ToolError::new("BAD_ARGUMENT", text),
            ArmError::Probe(ProbeRefusal::ReadOnly { .. }) => ToolError::new("READ_ONLY", text)
                .next("engine \"auto\" or \"wire\" watches it without changing the class"),
            ArmError::Probe(ProbeRefusal::Jdwp(j)) => j.clone().into(),
            ArmError::Probe(ProbeRefusal::Site(Refusal::TraceExpr { .. })) => {
                ToolError::new("PROBE_REFUSED", text).next(
                    "a probe records a local, this, or a field path from one (fields it may read); engine \"wire\" evaluates any expression, holding each hit's thread (the overhead guard may pause it on a hot path)",
                )
            }
            ArmError::Probe(_) => ToolError::new("PROBE_REFUSED", text)
                .next("engine \"wire\" (or \"auto\") watches it over JDWP instead"),
            ArmError::ProbeOnly(ProbeRefusal::Jdwp(j)) => j.clone().into(),
            ArmError::ProbeOnly(ProbeRefusal::Pattern { .. }) => {
                ToolError::new("PROBE_REFUSED", text).next(
                    "name one class, or omit method: every method of each loaded class the pattern matches is timed (up to max_classes)",
                )
            }
            ArmError::ProbeOnly(ProbeRefusal::Site(
                Refusal::NoCalls { .. },
            )) => ToolError::new("PROBE_REFUSED", text).next(
                "the same stop point without callees times the whole call; callees on a method it calls shows where that one's time goes",
            ),
            ArmError::ProbeOnly(_) => ToolError::new("PROBE_REFUSED", text).next(
                "the same stop point without min_duration_ms or stats (engine \"wire\") reports every exit over JDWP, untimed",
            ),
        }
    }
}

impl From<JdwpError> for ToolError {
    fn from(e: JdwpError) -> Self {
        match &e {
            JdwpError::Disconnected { command, reason } => {
                ToolError::vm_gone(format!("{reason}; during {command}"))
            }
            JdwpError::Timeout { .. } => {
                ToolError::new("TIMEOUT", e.to_string()).next(TIMEOUT_NEXT)
            }
            JdwpError::ReadOnly { .. } => {
                ToolError::new("READ_ONLY", e.to_string()).next(READ_ONLY_NEXT)
            }
            JdwpError::Cancelled { .. } => ToolError::new("INVOKE_CANCELLED", e.to_string()),
            JdwpError::Overran { .. } => ToolError::new("INVOKE_TIMEOUT", e.to_string()),
            _ if e.is_gone() => ToolError::vm_gone(&e),
            _ => ToolError::new("JDWP_ERROR", e.to_string()),
        }
    }
}

impl From<AttachError> for ToolError {
    fn from(e: AttachError) -> Self {
        match &e {
            AttachError::Refused { .. } => ToolError::new("CONNECT_REFUSED", e.to_string()).next(
                "start the JVM with -agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=127.0.0.1:PORT, or use debug_launch",
            ),
            AttachError::OtherDebugger { .. } => ToolError::new("DEBUGGER_ATTACHED", e.to_string())
                .next("detach the other debugger (an IDE, jdb, another jvmscope) first: the JDWP agent takes one connection at a time"),
            AttachError::NotJdwp { .. } => ToolError::new("NOT_JDWP", e.to_string())
                .next("check the port: it must be the one the JDWP agent printed (\"Listening for transport dt_socket at address: …\")"),
            AttachError::Connect { .. } => ToolError::new("CONNECT_FAILED", e.to_string()),
            AttachError::Setup { .. } => ToolError::new("ATTACH_FAILED", e.to_string()),
            AttachError::Spawn(_) => ToolError::new("INTERNAL", e.to_string()),
            AttachError::AlreadyAttached { session, .. } => {
                ToolError::new("ALREADY_ATTACHED", e.to_string()).next(format!(
                    "use session_id {session:?} (debug_set_current_session makes it current), or debug_disconnect it first"
                ))
            }
        }
    }
}

impl From<LaunchError> for ToolError {
    fn from(e: LaunchError) -> Self {
        match e {
            LaunchError::Attach(a) => a.into(),
            LaunchError::DiedDuringStartup {
                session: Some(ref id),
                ..
            } => ToolError::new("LAUNCH_FAILED", e.to_string()).next(format!(
                "session {id} is DEAD and holds nothing; check main_class, classpath and jvm_args against the output above, then debug_launch again"
            )),
            other => ToolError::new("LAUNCH_FAILED", other.to_string())
                .next("check the command against the output above, then debug_launch again"),
        }
    }
}

/// Where class roots come from, for the next steps below.
const CLASS_ROOTS_NEXT: &str = "pass class_roots:[\"<dir where javac writes>\"] or class_file, or set them on debug_attach / JDWP_CLASS_ROOTS; without a build, debug_check_stale with source:true compiles the source roots' file now and compares that";

impl From<CodeError> for ToolError {
    fn from(e: CodeError) -> Self {
        let text = e.to_string();
        match e {
            CodeError::BadSelector { .. } => ToolError::new("BAD_ARGUMENT", text),
            CodeError::NotLoaded { .. } => ToolError::new("NOT_LOADED", text)
                .next("run the code path that uses it; debug_list_classes shows what is loaded"),
            CodeError::NoCopyForLoader { .. } => ToolError::new("NO_SUCH_COPY", text)
                .next("pin one of the loaders listed, as Name@0x<loader>"),
            CodeError::NoClassRoot { .. } => ToolError::new("NO_CLASS_ROOT", text).next(CLASS_ROOTS_NEXT),
            CodeError::ClassFileMissing { .. } => ToolError::new("NO_CLASS_FILE", text)
                .next("a root is where the package tree starts (build/classes, target/classes); compile first or fix class_roots"),
            CodeError::Unreadable { .. } | CodeError::BadClassFile { .. } => {
                ToolError::new("BAD_CLASS_FILE", text)
            }
            CodeError::WrongClass { .. } => ToolError::new("BAD_CLASS_FILE", text)
                .next("give the .class compiled from this class's source"),
            CodeError::CannotRedefine => ToolError::new("NOT_SUPPORTED", text)
                .next("redeploy or restart the JVM with the new build"),
            CodeError::Refused {
                restriction,
                ref changes,
                ..
            } => {
                let mut message = text.clone();
                match restriction {
                    Some(_) if !changes.is_empty() => {
                        message.push_str("\nForeseeable: debug_check_stale predicts it from the class files:");
                        for c in changes {
                            message.push_str(&format!("\n  {}", change_line(c)));
                        }
                    }
                    Some(_) => message.push_str(
                        "\nNot foreseen by the class-file comparison (another member or a JVM without that support)",
                    ),
                    None => message.push_str(
                        "\nNot one of the structural restrictions debug_check_stale forecasts (verifier, version or state of the JVM)",
                    ),
                }
                let next = if restriction.is_some() {
                    "HotSpot swaps method bodies only: undo the structural change, or redeploy/restart"
                } else {
                    "check the build (javac version, class file version) and try again"
                };
                ToolError::new("REDEFINE_REFUSED", message).next(next)
            }
            CodeError::CompileCancelled => ToolError::new("CANCELLED", text),
            CodeError::CompilerFailed { .. } => ToolError::new("COMPILE_FAILED", text)
                .next("set JAVA_HOME to a JDK, or put javac on the server's PATH"),
            CodeError::CompileFailed { .. } => ToolError::new("COMPILE_FAILED", text)
                .next("fix the errors above and call again with compile:true"),
            CodeError::NoWritableRoot { .. } => ToolError::new("NO_CLASS_ROOT", text).next(CLASS_ROOTS_NEXT),
            CodeError::SourceDoesNotCompile { .. } => ToolError::new("COMPILE_FAILED", text)
                .next("fix the source, or compare with the build (without source:true)"),
            CodeError::ReadOnlyCompile => ToolError::new("READ_ONLY", text)
                .next("compare with the build (without source:true)"),
            CodeError::NotASource { .. } => ToolError::new("NOT_A_SOURCE", text)
                .next("name a source file under the source roots (source_roots on debug_attach, or JDWP_SOURCE_ROOTS)"),
        }
    }
}
