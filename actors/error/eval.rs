//! Why an expression could not be evaluated where it was asked, or could
//! not run methods there: typed, carrying ids and names. The words an
//! agent reads about what to do next are chosen in `src/mcp`.

use crate::expr::ParseError;
use crate::expr::eval::EvalError;
use crate::jdwp::ThreadId;

use super::JdwpError;

/// Why methods cannot be invoked where an expression is evaluated (JDWP
/// invokes only on a thread an event suspended).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotInvocable {
    /// No thread is held by an event. `released` is the event the agent
    /// read last, when it had held its thread: a resume released it.
    #[error("{}", nothing_held(released.as_ref()))]
    NothingHeld { released: Option<Released> },
    /// The thread was suspended by the agent (a thread suspend or a
    /// pause), not by an event.
    #[error("thread @{:#x} was suspended by the agent (a thread suspend or a pause), not by an event", thread.0)]
    SuspendedByAgent { thread: ThreadId },
    /// The stop point whose hit this is was armed without allowing calls.
    #[error(
        "this stop point was armed without allowing calls, so it runs none of the application's code"
    )]
    CallsRefused,
    /// The hit thread is blocked entering a monitor.
    #[error("the thread is blocked entering a monitor, where running code can wedge it")]
    BlockedOnMonitor,
}

/// The event the agent read last, which no longer holds its thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Released {
    pub seq: u64,
    pub thread_name: String,
}

fn nothing_held(released: Option<&Released>) -> String {
    match released {
        Some(e) => format!(
            "no thread is held by an event: the event read last (seq={} on \"{}\") no longer holds its thread, a resume released it",
            e.seq, e.thread_name
        ),
        None => "no thread is suspended by an event".into(),
    }
}

/// Why a hit could not be evaluated in: its top frame was not read.
#[derive(Debug, Clone, thiserror::Error)]
pub enum HitFrameError {
    #[error("reading the hit frame failed: {0}")]
    Frames(JdwpError),
    #[error("the hit thread has no frame")]
    NoFrame,
    /// Its class, method or `this` could not be read.
    #[error(transparent)]
    Jdwp(#[from] JdwpError),
}

/// Why a condition or trace expression gave no value at a hit.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ExprError {
    /// The expression did not compile when it was armed.
    #[error("{0}")]
    Refused(ParseError),
    /// The hit's frame could not be read.
    #[error(transparent)]
    Frame(#[from] HitFrameError),
    /// The evaluation failed at a point of its source.
    #[error("{}", error.render(expression))]
    Eval {
        error: EvalError,
        expression: String,
    },
}
