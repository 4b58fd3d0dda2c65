//! Tool errors as the agent sees them: one line starting with a stable
//! `[LABEL]`, what went wrong, and the next step. Everything an agent can
//! fix is a tool result with `isError`, never a protocol error (clients
//! hide protocol error text from the model).

use rmcp::model::{CallToolResult, ContentBlock};

use crate::actors::{AttachError, JdwpError, LaunchError, SessionError};

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

const REATTACH: &str = "debug_attach {host, port} to a JVM listening again, or debug_launch to start one; debug_list_sessions shows what is live";

impl From<SessionError> for ToolError {
    fn from(e: SessionError) -> Self {
        match e {
            SessionError::NoSession => ToolError::new("NO_SESSION", "no session is open")
                .next("debug_attach {host, port} or debug_launch {main_class, classpath}"),
            SessionError::UnknownSession(id) => {
                ToolError::new("UNKNOWN_SESSION", format!("there is no session {id:?}"))
                    .next("debug_list_sessions shows the session ids")
            }
            SessionError::Gone { id, reason } => {
                ToolError::new("VM_GONE", format!("session {id} is gone: {reason}")).next(REATTACH)
            }
            SessionError::Jdwp(e) => e.into(),
            SessionError::Invalid(m) => ToolError::new("INVALID", m),
        }
    }
}

impl From<JdwpError> for ToolError {
    fn from(e: JdwpError) -> Self {
        match &e {
            JdwpError::Disconnected { .. } => ToolError::new("VM_GONE", e.to_string()).next(REATTACH),
            JdwpError::Timeout { .. } => ToolError::new("TIMEOUT", e.to_string())
                .next("the JVM may be busy or wedged; debug_list_sessions shows its state"),
            JdwpError::ReadOnly { .. } => ToolError::new("READ_ONLY", e.to_string()).next(
                "attach a new session without read_only (JDWP_READONLY set on the server cannot be relaxed)",
            ),
            JdwpError::Jvm { code, .. } if *code == crate::jdwp::ErrorCode::VM_DEAD => {
                ToolError::new("VM_GONE", e.to_string()).next(REATTACH)
            }
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
            AttachError::NotJdwp { .. } => ToolError::new("NOT_JDWP", e.to_string())
                .next("check the port: it must be the one the JDWP agent printed (\"Listening for transport dt_socket at address: …\")"),
            AttachError::Connect { .. } => ToolError::new("CONNECT_FAILED", e.to_string()),
            AttachError::Setup { .. } => ToolError::new("ATTACH_FAILED", e.to_string()),
            AttachError::Spawn(_) => ToolError::new("INTERNAL", e.to_string()),
        }
    }
}

impl From<LaunchError> for ToolError {
    fn from(e: LaunchError) -> Self {
        match e {
            LaunchError::Attach(a) => a.into(),
            other => ToolError::new("LAUNCH_FAILED", other.to_string()),
        }
    }
}
