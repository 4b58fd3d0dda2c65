//! Errors the actor layer hands back through reply ports: what went wrong
//! on the wire, on the socket, or with a session, with what the caller needs
//! to act on it.

mod call;
mod eval;

pub use call::{ArgNeed, CallError, MissWhy, ParkMiss, ParkRefusal};
pub use eval::{ExprError, HitFrameError, NotInvocable, Released};

use std::time::Duration;

use thiserror::Error;

use crate::jdwp::{DecodeError, ErrorCode, EventKind, ThreadId};

/// A failed JDWP round trip.
#[derive(Debug, Clone, Error)]
pub enum JdwpError {
    #[error("{command} failed: the JVM answered {code}")]
    Jvm {
        command: &'static str,
        code: ErrorCode,
    },
    #[error("{command} got no reply within {after:?}")]
    Timeout {
        command: &'static str,
        after: Duration,
    },
    #[error("{command} lost its connection: {reason}")]
    Disconnected {
        command: &'static str,
        reason: String,
    },
    #[error("cannot decode the reply to {command}: {source}")]
    Decode {
        command: &'static str,
        source: DecodeError,
    },
    #[error("{command} refused: the session is read-only, so nothing that changes the JVM is sent")]
    ReadOnly { command: &'static str },
    /// An invocation ran past its budget and was cancelled: its thread is
    /// back where it was before the call.
    #[error("{command} ran past its budget of {after:?} and was cancelled ({})", ended.what())]
    Cancelled {
        command: &'static str,
        after: Duration,
        ended: CallEnd,
    },
    /// An invocation ran past its budget and could not be cancelled: its
    /// thread stays inside the call until it returns.
    #[error(
        "{command} ran past its budget of {after:?} and could not be cancelled; its thread stays inside the call until it returns"
    )]
    Overran {
        command: &'static str,
        after: Duration,
    },
}

/// How a cancelled call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallEnd {
    /// The `Error` the cancel threw into it ended it.
    Thrown,
    /// It ended by itself once interrupted (an `InterruptedException`, or
    /// a return).
    Interrupted,
}

impl CallEnd {
    fn what(self) -> &'static str {
        match self {
            CallEnd::Thrown => "an Error thrown into it ended it",
            CallEnd::Interrupted => "it ended once interrupted",
        }
    }
}

impl JdwpError {
    /// The JVM's error code, when the JVM answered with one.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            JdwpError::Jvm { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// True when the connection is gone and the session with it.
    pub fn is_gone(&self) -> bool {
        matches!(self, JdwpError::Disconnected { .. })
            || matches!(self.code(), Some(ErrorCode::VM_DEAD))
    }
}

/// Why attaching to a JVM failed.
#[derive(Debug, Clone, Error)]
pub enum AttachError {
    #[error("session {session} is already attached to {addr}; a JVM takes one debugger at a time")]
    AlreadyAttached { addr: String, session: String },
    #[error("connection refused by {addr}: nothing is listening there")]
    Refused { addr: String },
    /// The port refused us while a connection to it is open: the JDWP
    /// agent stops listening once a debugger is attached.
    #[error(
        "{addr} already has a debugger attached (connected from {peer}); a JVM takes one debugger at a time"
    )]
    OtherDebugger { addr: String, peer: String },
    #[error("could not connect to {addr}: {detail}")]
    Connect { addr: String, detail: String },
    #[error("{addr} is not a JDWP endpoint: {detail}")]
    NotJdwp { addr: String, detail: String },
    #[error("{addr} did not finish attaching: {source}")]
    Setup { addr: String, source: JdwpError },
    #[error("could not start the session: {0}")]
    Spawn(#[from] SpawnError),
}

/// Why an actor of the engine (the Supervisor, a Session) did not start.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SpawnError {
    #[error("the session registry is poisoned")]
    RegistryPoisoned,
    /// The actor runtime refused the spawn or the first call, with its error.
    #[error("{0}")]
    Actor(String),
}

/// Why starting a JVM under the debugger failed.
#[derive(Debug, Clone, Error)]
pub enum LaunchError {
    #[error("cannot start {program}: {detail}")]
    Spawn { program: String, detail: String },
    #[error("the JVM exited during startup ({status}); last output:\n{output}")]
    DiedDuringStartup {
        status: String,
        output: String,
        /// The session opened for it, now DEAD (none when the JVM died
        /// before its JDWP port opened).
        session: Option<String>,
    },
    #[error("the JVM did not open its JDWP port within {after:?}; last output:\n{output}")]
    NoPort { after: Duration, output: String },
    #[error(transparent)]
    Attach(#[from] AttachError),
}

/// What an operation needed a suspended thread for; it decides the next
/// step an agent is offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadUse {
    /// Reading a stack, locals or evaluating in a frame.
    Read,
    /// Starting a step.
    Step,
    /// Writing a value, forcing a return or popping frames.
    Write,
}

/// Which frame operation a frame error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameAction {
    Return,
    Pop,
}

impl FrameAction {
    fn verb(self) -> &'static str {
        match self {
            FrameAction::Return => "force it to return",
            FrameAction::Pop => "pop through it",
        }
    }
}

/// Why a write cannot go where it was aimed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum NotWritable {
    #[error("local {name} has no slot here")]
    NoSlot { name: String },
    #[error("a {kind} has no fields to set")]
    NoFields { kind: &'static str },
    #[error("{class}.{field} is an instance field; name an object")]
    InstanceFieldWithoutObject { class: String, field: String },
    #[error("cannot set an element of a {kind}")]
    NoElements { kind: &'static str },
    #[error("cannot pass a {kind} to {method}()")]
    Unpassable { kind: &'static str, method: String },
    #[error("not an object")]
    NotAnObject,
    #[error("the top frame's method is unknown")]
    UnknownMethod,
    #[error("set_value writes a local, a field (obj.f, Class.F), or an element (xs[i], m[\"k\"])")]
    UnsupportedTarget,
}

/// Why a session-level operation failed. Each variant carries what the
/// caller needs to act; the MCP layer alone turns them into labels and
/// next steps.
#[derive(Debug, Clone, Error)]
pub enum SessionError {
    #[error("no session {0}")]
    UnknownSession(String),
    #[error("no current session")]
    NoSession,
    /// The session named (or the current one) is a group: this request
    /// acts on one JVM, so one member must be named.
    #[error("{id} is a group of {} sessions", members.len())]
    Group {
        id: String,
        /// Each member's session id and host:port.
        members: Vec<(String, String)>,
    },
    #[error("session {id} is gone: {reason}")]
    Gone {
        id: String,
        reason: String,
        /// For a JVM this session launched: how it exited, if it has.
        exit: Option<String>,
        /// ... and the last lines it printed (stdout and stderr).
        output: Vec<String>,
    },
    #[error(transparent)]
    Jdwp(#[from] JdwpError),
    #[error("the session did not answer: {0}")]
    Unresponsive(String),
    #[error("the session registry is unusable (a thread panicked while holding it)")]
    RegistryPoisoned,
    #[error("there is no thread @{:#x} (it ended, or the id is wrong)", thread.0)]
    NoSuchThread { thread: ThreadId },
    #[error(
        "{action} changes the program, and this session is read-only: refused before anything was sent"
    )]
    ReadOnly { action: &'static str },
    #[error("no thread is suspended")]
    NoThreadSuspended { purpose: ThreadUse },
    #[error("thread @{:#x} is running", thread.0)]
    ThreadRunning {
        thread: ThreadId,
        purpose: ThreadUse,
    },
    #[error("thread @{:#x} {name:?} has finished running (ZOMBIE); it cannot be suspended", thread.0)]
    ThreadFinished { thread: ThreadId, name: String },
    #[error("frame {index} is out of range: thread @{:#x} has {depth} frames (0 is the top)", thread.0)]
    FrameOutOfRange {
        thread: ThreadId,
        index: usize,
        depth: i32,
    },
    #[error(
        "frame {index} is the outermost frame (the thread has {depth}); there is no caller to return to"
    )]
    OutermostFrame { index: usize, depth: usize },
    #[error("no frame {index}")]
    NoFrame { index: usize },
    #[error("{frame} is a native method; JDWP cannot {}", action.verb())]
    NativeFrame { frame: String, action: FrameAction },
    #[error("the JVM refused to {} {frame} (not a Java frame it can leave, or a native frame in between)", match action { FrameAction::Return => "return from", FrameAction::Pop => "pop" })]
    FrameRefused { frame: String, action: FrameAction },
    #[error("cannot store a {value} in a {declared}")]
    TypeMismatch { value: String, declared: String },
    #[error("{frame} returns {returns}")]
    ReturnTypeMismatch { frame: String, returns: String },
    #[error("an array index must be an int")]
    IndexNotInt,
    #[error("{frame} returns {returns}; give the value to return")]
    MissingReturnValue { frame: String, returns: String },
    #[error(transparent)]
    NotWritable(#[from] NotWritable),
    #[error("`{name}` is not a local, a field of this, or a static here")]
    NotInScope { name: String },
    #[error("{class} has no field `{field}`")]
    NoSuchField { class: String, field: String },
    #[error("{}{message}", part.map(|p| format!("{p}: ")).unwrap_or_default())]
    EvalFailed {
        /// Which part of a call failed, e.g. "the value".
        part: Option<&'static str>,
        message: String,
    },
    #[error("thread @{:#x} did not reach another line within {ms} ms (it may be blocked or in a long loop; the step request was cleared and the thread keeps running)", thread.0)]
    StepTimeout { thread: ThreadId, ms: u128 },
    #[error("the event stream ended during the step")]
    StepInterrupted,
    #[error("{0}")]
    Arm(#[from] ArmError),
    #[error(
        "no loaded class is named {class} (a class loads on first use, and a wrong name reads the same)"
    )]
    ClassNotLoaded { class: String },
    #[error("{class} has no copy defined by loader @{loader:#x}; its copies: {}", loaders.iter().map(|l| format!("{class}@{l:#x}")).collect::<Vec<_>>().join(", "))]
    NoSuchCopy {
        class: String,
        loader: u64,
        loaders: Vec<u64>,
    },
    #[error("this JVM does not offer {capability}")]
    Unsupported { capability: &'static str },
    #[error(transparent)]
    Call(#[from] CallError),
    #[error(transparent)]
    Code(#[from] CodeError),
    #[error(transparent)]
    Local(#[from] LocalError),
    #[error("{class} is loaded but has no live instance")]
    NoInstance { class: String },
    #[error("the last heap walk of this kind stopped the world {:.0} ms, over the budget of {} ms: not walked again", last.as_secs_f64() * 1000.0, budget.as_millis())]
    PauseOverBudget { last: Duration, budget: Duration },
}

/// Why a read of a local JVM's process (hsperfdata, `/proc`, its attach
/// socket) failed.
#[derive(Debug, Clone, Error)]
pub enum LocalError {
    #[error("the JVM is at {host}, not on this machine; its process cannot be read from here")]
    NotLocal { host: String },
    #[error("no local process holds the JDWP port {port}")]
    NoProcess { port: u16 },
    #[error(
        "JVM {pid} has no hsperfdata file (started with -XX:-UsePerfData, or under another user or /tmp)"
    )]
    NoPerfData { pid: u32 },
    #[error("JVM {pid}'s hsperfdata: {source}")]
    PerfData {
        pid: u32,
        source: crate::model::perfdata::PerfDataError,
    },
    #[error("process {pid} cannot be read: {detail}")]
    Proc { pid: u32, detail: String },
    #[error("JVM {pid}'s attach socket: {detail}")]
    Attach { pid: u32, detail: String },
    #[error("JVM {pid} refuses attach ({option})")]
    AttachDisabled { pid: u32, option: &'static str },
    #[error(
        "JVM {pid} is suspended by this session, and HotSpot's attach listener is a thread the debugger holds too when it starts while the JVM is suspended"
    )]
    HeldByDebugger { pid: u32 },
    #[error("JVM {pid}'s flight recorder: {detail}")]
    Jfr { pid: u32, detail: String },
    #[error("JVM {pid}'s heap dump: {detail}")]
    HeapDump { pid: u32, detail: String },
}

/// Why a stop point (or one entry of a list) could not be armed, cleared
/// or changed.
#[derive(Debug, Clone, Error)]
pub enum ArmError {
    #[error(transparent)]
    Jdwp(#[from] JdwpError),
    #[error("the stop-point registry has stopped (the session ended)")]
    RegistryGone,
    #[error("internal: {0}")]
    Internal(&'static str),
    #[error("no probe: {0}")]
    Probe(#[from] ProbeRefusal),
    /// No probe, for a stop point only a probe can serve (a method exit
    /// with a minimum duration: the wire has no clock).
    #[error("no probe, and only a probe times a call: {0}")]
    ProbeOnly(ProbeRefusal),
    #[error("there is no stop point {id:?}")]
    UnknownStopPoint { id: String },
    #[error("an update cannot change what a stop point watches")]
    UpdateChangesTarget,
    #[error("{class} has no method {method:?}; {}", method_hint(similar, methods))]
    NoSuchMethod {
        class: String,
        method: String,
        similar: Vec<String>,
        methods: Vec<String>,
    },
    #[error("{class}.{method} has no bytecode to stop in (abstract or native)")]
    NoCode { class: String, method: String },
    #[error("{}", no_code_at_line(scope, *line, *has_table, nearest))]
    NoCodeAtLine {
        scope: String,
        line: u32,
        has_table: bool,
        nearest: Vec<i32>,
    },
    #[error("{}", field_hint(class, field, similar, declared))]
    NoSuchField {
        class: String,
        field: String,
        similar: Vec<String>,
        declared: Vec<String>,
    },
    #[error("no live thread @{thread:#x}")]
    NoSuchThread { thread: u64 },
    #[error("@{object:#x} is not a live object (collected, or never was)")]
    NoSuchObject { object: u64 },
    #[error(
        "{class} is not loaded, so no instance of it exists to filter on and the kind of method cannot be checked"
    )]
    InstanceOnUnloaded { class: String },
    #[error(
        "instance_id on a static method: there is no `this` to match, and HotSpot would accept the filter and then fire for every call"
    )]
    InstanceOnStaticMethod,
    #[error(
        "instance_id on a static field: one copy exists, and HotSpot would accept the filter and then report every write"
    )]
    InstanceOnStaticField,
    #[error("monitor_class {class} is not loaded (ClassOnly needs a loaded type)")]
    MonitorClassNotLoaded { class: String },
    #[error("this JVM does not offer {kind:?} events ({source})")]
    NotSupported { kind: EventKind, source: JdwpError },
    #[error("the JVM refused every request for {class}: {}", reasons.join("; "))]
    AllRefused { class: String, reasons: Vec<String> },
    #[error("{}", unknown_name(name, expression, *column, scope, locals, *has_table))]
    UnknownName {
        name: String,
        expression: String,
        column: usize,
        /// `Class.method:line`.
        scope: String,
        /// The locals in scope there.
        locals: Vec<String>,
        /// The class has a local variable table (compiled with `-g`).
        has_table: bool,
    },
    /// An entry of a list that could not even be turned into a definition.
    #[error("{message}")]
    BadEntry { message: String },
}

impl ArmError {
    /// True when the session is gone, so trying further entries is futile.
    pub fn is_gone(&self) -> bool {
        match self {
            ArmError::Jdwp(e) => e.is_gone(),
            ArmError::RegistryGone => true,
            _ => false,
        }
    }

    /// True when the JVM did not answer or the session is gone: arming
    /// further entries of a list would wait as long again for nothing.
    pub fn stops_a_list(&self) -> bool {
        self.is_gone() || matches!(self, ArmError::Jdwp(JdwpError::Timeout { .. }))
    }
}

fn unknown_name(
    name: &str,
    source: &str,
    column: usize,
    scope: &str,
    locals: &[String],
    has_table: bool,
) -> String {
    let scope_names = if !has_table {
        "its class was compiled without -g, so no local can be read by name; only fields can"
            .to_string()
    } else if locals.is_empty() {
        "no local is in scope there".to_string()
    } else {
        format!("locals in scope there: {}", locals.join(", "))
    };
    format!(
        "`{name}` (column {column} of {source:?}) is no local in scope at {scope} and no field of its class; {scope_names}"
    )
}

fn method_hint(similar: &[String], methods: &[String]) -> String {
    if similar.is_empty() {
        format!("its methods: {}", methods.join(", "))
    } else {
        format!(
            "did you mean {}? (its methods: {})",
            similar.join(", "),
            methods.join(", ")
        )
    }
}

fn no_code_at_line(scope: &str, line: u32, has_table: bool, nearest: &[i32]) -> String {
    if !has_table {
        format!("{scope} has no line table (compiled without -g:lines?)")
    } else if nearest.is_empty() {
        format!("line {line} of {scope} has no code")
    } else {
        let near: Vec<String> = nearest.iter().map(|l| l.to_string()).collect();
        format!(
            "line {line} of {scope} has no code; nearest lines with code: {}",
            near.join(", ")
        )
    }
}

fn field_hint(class: &str, field: &str, similar: &[String], declared: &[String]) -> String {
    let mut msg = format!("{class} has no field {field:?}");
    if !similar.is_empty() {
        msg.push_str(&format!("; did you mean {}?", similar.join(", ")));
    }
    if !declared.is_empty() {
        msg.push_str(&format!(" (declared: {})", declared.join(", ")));
    }
    msg
}

/// Why a probe cannot serve a stop point. With `engine: "auto"` the wire
/// takes it and the reply says why; with `engine: "probe"` it is refused.
#[derive(Debug, Clone, Error)]
pub enum ProbeRefusal {
    #[error("{action} changes the class's code, and this session is read-only")]
    ReadOnly { action: &'static str },
    #[error("a probe serves {what}; this stop point is {shape}")]
    Shape {
        what: &'static str,
        shape: &'static str,
    },
    /// A method exit on a class pattern with a method named: a probe
    /// goes into one class (with no method, set_stop expands the pattern).
    #[error("a probe goes into one class, not a pattern like {pattern}")]
    Pattern { pattern: String },
    #[error("{class} is not loaded yet (the wire defers until it loads)")]
    NotLoaded { class: String },
    #[error("{class} is loaded by {copies} class loaders (a probe instruments one copy)")]
    SeveralCopies { class: String, copies: usize },
    #[error(
        "{class} is loaded by another class loader than {first}, so it cannot call the helper class a probe defines beside {first}; probe them one at a time"
    )]
    OtherLoader { class: String, first: String },
    #[error(
        "{class} is in another module than {first}, and whether it may read the helper class a probe defines beside {first} is not checked (a call it may not make would throw into the application); probe them one at a time"
    )]
    OtherModule { class: String, first: String },
    #[error("{class} is loaded by the bootstrap loader, where no helper class can be defined")]
    BootLoader { class: String },
    #[error("this JVM cannot redefine classes (canRedefineClasses is false)")]
    CannotRedefine,
    #[error("the bytes of {class} are not at hand: {why}")]
    NoBytes { class: String, why: String },
    #[error("the class file found for {class} differs from the loaded class in {method}")]
    BytesDiffer { class: String, method: String },
    #[error("{class} has {count} methods named {method:?} (a probe needs one)")]
    Overloaded {
        class: String,
        method: String,
        count: usize,
    },
    #[error("{class} has no method {method:?}")]
    NoMethod { class: String, method: String },
    #[error("{class} has no code at line {line}")]
    NoLine { class: String, line: u32 },
    #[error("{0}")]
    Site(#[from] crate::classfile::probe::Refusal),
    #[error("the condition does not parse: {message}")]
    Condition { message: String },
    #[error("defining the probe's helper class failed: {exception}{}", message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Define {
        exception: String,
        message: Option<String>,
    },
    #[error("the JVM refused the instrumented {class}: {name} ({code}); nothing changed")]
    Redefine {
        class: String,
        code: u16,
        name: &'static str,
    },
    #[error("no thread could run the helper's set-up: {0}")]
    NoThread(String),
    #[error(
        "{class} changed since its probe went in (its code no longer calls the probe): it keeps what it runs now"
    )]
    ChangedSince { class: String },
    #[error("the suspending probe's trap could not be set, so the probe was taken out again: {0}")]
    Trap(String),
    #[error(transparent)]
    Jdwp(#[from] JdwpError),
}

impl ProbeRefusal {
    /// A trace expression the probe cannot compute (not the site or the
    /// JVM refusing the probe).
    pub fn is_trace_expr(&self) -> bool {
        matches!(
            self,
            ProbeRefusal::Site(crate::classfile::probe::Refusal::TraceExpr { .. })
        )
    }
}

/// Why a class could not be checked against its build or swapped.
#[derive(Debug, Clone, Error)]
pub enum CodeError {
    #[error("{selector:?} is not a class name, or Name@0x<loader id>")]
    BadSelector { selector: String },
    #[error("{class} is not loaded (a class loads on first use)")]
    NotLoaded { class: String },
    #[error("no copy of {class} was loaded by class loader @{loader:#x}; its copies are loaded by {}", loaders.iter().map(|l| format!("@{l:#x}")).collect::<Vec<_>>().join(", "))]
    NoCopyForLoader {
        class: String,
        loader: u64,
        loaders: Vec<u64>,
    },
    #[error("no class root is configured, so there is no .class of {class} to read")]
    NoClassRoot { class: String },
    #[error("no {} under the class roots (looked at {})", crate::model::classfile::class_file_rel(class).display(), searched.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    ClassFileMissing {
        class: String,
        searched: Vec<std::path::PathBuf>,
    },
    #[error("cannot read {}: {error}", path.display())]
    Unreadable {
        path: std::path::PathBuf,
        error: String,
    },
    #[error("{} is not a readable class file: {error}", path.display())]
    BadClassFile {
        path: std::path::PathBuf,
        error: String,
    },
    #[error("{} holds {found}, not {expected}", path.display())]
    WrongClass {
        path: std::path::PathBuf,
        expected: String,
        found: String,
    },
    #[error("this JVM cannot redefine classes (canRedefineClasses is false)")]
    CannotRedefine,
    #[error("the JVM refused to redefine {class}: {name} ({code}); nothing changed")]
    Refused {
        class: String,
        code: u16,
        name: &'static str,
        /// The restriction the refusal names, if it is one of the six.
        restriction: Option<crate::model::stale::Restriction>,
        /// What the comparison finds that trips it (empty: not foreseeable
        /// from the class files alone).
        changes: Vec<crate::model::stale::Change>,
    },
    #[error("cancelled while javac ran: javac was stopped and nothing was sent to the JVM")]
    CompileCancelled,
    #[error("cannot compile: {detail}")]
    CompilerFailed { detail: JavacError },
    #[error("javac failed; nothing was reloaded:\n{diagnostics}")]
    CompileFailed {
        command: String,
        diagnostics: String,
    },
    #[error("the class root {} is not a directory javac can write to", root.display())]
    NoWritableRoot { root: std::path::PathBuf },
    #[error("{} is not read: {why}", path.display())]
    NotASource {
        path: std::path::PathBuf,
        why: SourceRefusal,
    },
    #[error("{} does not compile, so there is nothing to compare it with:\n{diagnostics}", file.display())]
    SourceDoesNotCompile {
        file: std::path::PathBuf,
        diagnostics: String,
    },
    #[error("no javac runs in a read-only session, so the source is not compiled for a comparison")]
    ReadOnlyCompile,
}

/// Why a path is not taken as a source file: only files with a source
/// extension under the source roots are read, or given to javac.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SourceRefusal {
    #[error("no source root is configured")]
    NoRoots,
    #[error("no such file")]
    Missing,
    #[error("it is not under a source root")]
    OutsideRoots,
    #[error("it is not a source file (.java, .kt, .scala, .groovy, .jsp)")]
    NotSource,
}

/// Why a stop point's condition gave no answer at a hit.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ConditionError {
    #[error("the thread was not suspended by this event")]
    NotSuspended,
    #[error("the condition gave a {kind}, not a boolean")]
    NotBoolean { kind: &'static str },
    /// Reading the frame or evaluating the expression failed.
    #[error(transparent)]
    Eval(#[from] ExprError),
}

/// Why `javac` could not be run to an end (its diagnostics are not this:
/// a compilation that fails is `CodeError::CompileFailed`).
#[derive(Debug, Clone, thiserror::Error)]
pub enum JavacError {
    /// The classpath holds a path the platform cannot join.
    #[error("{0}")]
    Classpath(String),
    #[error("cannot run {}: {error}", javac.display())]
    Run {
        javac: std::path::PathBuf,
        error: String,
    },
    #[error("{} ran past {limit:?}", javac.display())]
    Timeout {
        javac: std::path::PathBuf,
        limit: std::time::Duration,
    },
}
