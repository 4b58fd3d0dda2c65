//! Sessions: their ids, life states, the JVM they talk to, and the specs
//! that create them.

use std::path::PathBuf;
use std::time::Duration;

/// Our id for a debug session (`s1`, `s2`, …), never reused in a process.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(pub String);

impl std::fmt::Display for SessionId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The life state of a session as the agent sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionState {
    /// Connected; no thread is held.
    Running,
    /// Connected; `held` of `total` threads are suspended.
    Suspended { held: usize, total: usize },
    /// The connection ended; `reason` says how.
    Dead { reason: String },
    /// The JVM did not answer in time; the session is alive, and what the
    /// JVM is doing is unknown. `reason` names the timeout.
    Unanswered { reason: String },
}

impl SessionState {
    /// The stable label agents match on.
    pub fn label(&self) -> &'static str {
        match self {
            SessionState::Running => "RUNNING",
            SessionState::Suspended { .. } => "SUSPENDED",
            SessionState::Dead { .. } => "DEAD",
            SessionState::Unanswered { .. } => "NOT_ANSWERING",
        }
    }
}

/// What the JVM said about itself when we attached.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VmInfo {
    pub vm_name: String,
    pub vm_version: String,
    pub jdwp_major: i32,
    pub jdwp_minor: i32,
    pub description: String,
}

/// Where an application's sources and class files live on this machine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Roots {
    pub source: Vec<PathBuf>,
    pub class: Vec<PathBuf>,
}

/// How to attach to a JVM that is already running.
#[derive(Debug, Clone)]
pub struct AttachSpec {
    pub host: String,
    pub port: u16,
    pub timeout: Duration,
    pub read_only: bool,
    pub source_roots: Vec<PathBuf>,
    pub class_roots: Vec<PathBuf>,
}

/// What to run when launching a JVM.
#[derive(Debug, Clone)]
pub enum LaunchTarget {
    MainClass {
        main_class: String,
        classpath: String,
    },
    Jar {
        jar: PathBuf,
    },
}

/// How to start a JVM under the debugger.
#[derive(Debug, Clone)]
pub struct LaunchSpec {
    pub target: LaunchTarget,
    pub jvm_args: Vec<String>,
    pub args: Vec<String>,
    pub working_dir: Option<PathBuf>,
    pub java_home: Option<PathBuf>,
    /// Hold the JVM before its first instruction until the agent resumes.
    pub suspend: bool,
    /// Leave the JVM running when the session ends.
    pub detach_on_disconnect: bool,
    pub timeout: Duration,
    pub read_only: bool,
    pub source_roots: Vec<PathBuf>,
    pub class_roots: Vec<PathBuf>,
}

/// What re-checking the JVM found when a disconnect released it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReleaseCheck {
    /// Every one of `total` threads runs.
    AllRun { total: usize },
    /// `still_held` of `total` threads stayed suspended after `resumes`
    /// resumes; Dispose released the rest.
    StillHeld {
        still_held: usize,
        total: usize,
        resumes: u32,
    },
    /// The check itself failed, with the error.
    Unverified(String),
}
