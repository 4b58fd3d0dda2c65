//! Errors the actor layer hands back through reply ports: what went wrong
//! on the wire, on the socket, or with a session, with what the caller needs
//! to act on it.

use std::time::Duration;

use thiserror::Error;

use crate::jdwp::{DecodeError, ErrorCode};

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
    #[error("connection refused by {addr}: nothing is listening there")]
    Refused { addr: String },
    #[error("could not connect to {addr}: {detail}")]
    Connect { addr: String, detail: String },
    #[error("{addr} is not a JDWP endpoint: {detail}")]
    NotJdwp { addr: String, detail: String },
    #[error("{addr} did not finish attaching: {source}")]
    Setup { addr: String, source: JdwpError },
    #[error("could not start the session: {0}")]
    Spawn(String),
}

/// Why starting a JVM under the debugger failed.
#[derive(Debug, Clone, Error)]
pub enum LaunchError {
    #[error("cannot start {program}: {detail}")]
    Spawn { program: String, detail: String },
    #[error("the JVM exited during startup ({status}); last output:\n{output}")]
    DiedDuringStartup { status: String, output: String },
    #[error("the JVM did not open its JDWP port within {after:?}; last output:\n{output}")]
    NoPort { after: Duration, output: String },
    #[error(transparent)]
    Attach(#[from] AttachError),
}

/// Why a session-level operation failed.
#[derive(Debug, Clone, Error)]
pub enum SessionError {
    #[error("no session {0}")]
    UnknownSession(String),
    #[error("no current session")]
    NoSession,
    #[error("session {id} is gone: {reason}")]
    Gone { id: String, reason: String },
    #[error(transparent)]
    Jdwp(#[from] JdwpError),
    #[error("{0}")]
    Invalid(String),
}
