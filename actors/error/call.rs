//! Why a call into the application could not be made or did not return:
//! typed, carrying data; `src/mcp/error.rs` chooses the labels.

use crate::jdwp::ThreadId;

/// A failed call into the application (invoke, Spring, JPA).
#[derive(Debug, Clone, thiserror::Error)]
pub enum CallError {
    #[error(
        "{class} has no method {method}{}",
        listed(" (its overloads: ", overloads)
    )]
    NoSuchMethod {
        class: String,
        method: String,
        overloads: Vec<String>,
    },
    #[error("{class}.{method} is ambiguous for these arguments: {}", candidates.join(" | "))]
    Ambiguous {
        class: String,
        method: String,
        candidates: Vec<String>,
    },
    #[error(
        "argument {index} ({declared}) cannot be built from {given}{}",
        arg_fact(needs)
    )]
    Argument {
        index: usize,
        declared: String,
        given: &'static str,
        /// What the declared type takes that the argument was not.
        needs: Option<ArgNeed>,
    },
    #[error("{class} is not loaded in the JVM (a class loads on first use)")]
    NotLoaded { class: String },
    #[error("{method} is an instance method; the target is a class")]
    NeedsInstance { method: String },
    #[error("no thread could be parked for the call: {reason}")]
    CannotPark { reason: ParkRefusal },
    #[error("thread @{:#x} {name:?} is suspended by the agent, not by an event; JDWP invokes only on event-suspended threads", thread.0)]
    AgentHeld { thread: ThreadId, name: String },
    #[error("{method} threw {exception} @{handle:#x}{}", message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Threw {
        method: String,
        exception: String,
        message: Option<String>,
        handle: u64,
    },
    #[error(
        "{method} did not return within {ms} ms and could not be cancelled; its thread stays inside the call until it returns, and its late return is undone when it comes"
    )]
    Timeout { method: String, ms: u128 },
    #[error(
        "{method} did not return within {ms} ms, so it was cancelled ({}); its thread runs its own code again",
        match ended { crate::error::CallEnd::Thrown => "an Error thrown into it ended it", crate::error::CallEnd::Interrupted => "it ended once interrupted" }
    )]
    Cancelled {
        method: String,
        ms: u128,
        ended: crate::error::CallEnd,
    },
    #[error(
        "no Spring ApplicationContext is alive in the JVM (searched the heap for instances of every loaded AbstractApplicationContext subclass)"
    )]
    NoSpringContext,
    #[error(
        "the Spring context has no bean {wanted}{}",
        listed(" (beans: ", known)
    )]
    NoBean { wanted: String, known: Vec<String> },
    #[error("no EntityManager found: {searched}")]
    NoEntityManager { searched: String },
    #[error("{what} is not a {expected}")]
    WrongKind {
        what: String,
        expected: &'static str,
    },
}

/// Why no thread could be parked for a call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParkRefusal {
    #[error(
        "thread {name:?} is still running a call that ran past its budget; it is resumed when that call returns"
    )]
    InLateCall { name: String },
    #[error("the JVM has no application thread")]
    NoApplicationThread,
    #[error(
        "no thread reached a line of application code within {ms} ms: {}; each runs on as before",
        some_of(tried)
    )]
    NoLineReached { tried: Vec<ParkMiss>, ms: u128 },
}

/// A thread tried for a call that could not be parked on, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParkMiss {
    pub name: String,
    pub why: MissWhy,
}

/// Why a thread tried for a call did not serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MissWhy {
    /// It reached no line of application code within `ms`, found in this
    /// state (`None`: unread).
    NoLine {
        status: Option<crate::jdwp::ThreadStatus>,
        ms: u128,
    },
    /// The agent had suspended it.
    AgentHeld,
    /// A call that ran past its budget still has it.
    LateCall,
    /// Another refusal about this one thread (it ended meanwhile).
    Refused(String),
}

impl std::fmt::Display for ParkMiss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::jdwp::ThreadStatus as S;
        let name = &self.name;
        match &self.why {
            MissWhy::NoLine { status, ms } => {
                let state = match status {
                    Some(S::Running) => "running, in code it does not leave",
                    Some(S::Sleeping) => "sleeping",
                    Some(S::Monitor) => "blocked on a monitor",
                    Some(S::Wait) => "waiting",
                    _ => "state unknown",
                };
                write!(f, "{name:?} ({state}, {ms} ms)")
            }
            MissWhy::AgentHeld => write!(f, "{name:?} (suspended by the agent)"),
            MissWhy::LateCall => write!(f, "{name:?} (still in a call past its budget)"),
            MissWhy::Refused(why) => write!(f, "{name:?} ({why})"),
        }
    }
}

/// The first eight of `items`, and how many more.
fn some_of<T: std::fmt::Display>(items: &[T]) -> String {
    let shown = items
        .iter()
        .take(8)
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    match items.len().saturating_sub(8) {
        0 => shown,
        more => format!("{shown}, … {more} more"),
    }
}

fn listed(prefix: &str, items: &[String]) -> String {
    if items.is_empty() {
        return String::new();
    }
    let shown: Vec<&str> = items.iter().take(12).map(String::as_str).collect();
    let more = items.len().saturating_sub(shown.len());
    let more = if more > 0 {
        format!(", … {more} more")
    } else {
        String::new()
    };
    format!("{prefix}{}{more})", shown.join(", "))
}

/// What a declared parameter type takes that an argument was not: the
/// MCP layer says how to build it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgNeed {
    /// An object of `class`: the text named no constant of a loaded enum.
    EnumOrObject { class: String },
    /// An object of `class`, which no literal argument builds.
    Object { class: String },
}

/// The fact an unbuildable argument's message states about its type.
fn arg_fact(needs: &Option<ArgNeed>) -> String {
    match needs {
        Some(ArgNeed::EnumOrObject { class }) => {
            format!(": {class} is not a loaded enum with that constant")
        }
        _ => String::new(),
    }
}
