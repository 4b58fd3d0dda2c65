//! A session's recent events as typed entries: what the JVM sent, what
//! could not be decoded, and what a late-returning invocation left behind.
//! The actors record them; the MCP layer words them (`mcp::render`).

use crate::jdwp::{EventKind, Location, RequestId, SuspendPolicy, ThreadId};

/// One entry of a session's recent events, kept for diagnosis.
#[derive(Debug, Clone, PartialEq)]
pub enum RecentEvent {
    /// An event the JVM sent, with the suspend policy of its composite.
    Event {
        kind: EventKind,
        request: RequestId,
        thread: Option<ThreadId>,
        at: Option<Location>,
        suspend: SuspendPolicy,
    },
    /// An event composite the decoder refused: the decoder's error, its
    /// suspend policy if readable, and what was released of its hold.
    Undecodable {
        error: String,
        policy: Option<SuspendPolicy>,
        released: DroppedHold,
    },
    /// A suspending event of a request nobody in this session has (one
    /// cleared while its hit was queued): released at once, as its
    /// composite's policy held it, never handed to the agent.
    Stray {
        kind: EventKind,
        request: RequestId,
        thread: Option<ThreadId>,
        suspend: SuspendPolicy,
        released: DroppedHold,
    },
    /// A method invoked past its budget returned after all.
    LateReturn(LateReturn),
}

/// What became of the threads a refused composite suspended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DroppedHold {
    /// It suspended nothing.
    Nothing,
    /// Its thread was resumed.
    Thread(ThreadId),
    /// The VM was resumed once.
    Vm,
    /// Its thread could not be read and other threads are held, which a VM
    /// resume would release too: the Watchdog bounds the hold.
    LeftToWatchdog,
    /// Its first byte is no suspend policy: the Watchdog bounds any hold.
    UnknownPolicy,
    /// The resume failed, with the error.
    ResumeFailed(String),
}

/// A method invoked on `thread` returned `after_ms` after it started, past
/// its budget: HotSpot suspended the thread again, and `outcome` says
/// what became of that suspension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LateReturn {
    pub thread: ThreadId,
    pub after_ms: u128,
    pub outcome: LateOutcome,
}

/// What became of the suspension a late return left behind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LateOutcome {
    /// The agent holds the thread, so it stays held.
    AgentHolds,
    /// The JVM is stopped for the agent: the next resume clears it.
    LeftToResume,
    /// HotSpot had suspended it again, and it was resumed.
    Resumed,
    /// Resuming it failed, with the error.
    ResumeFailed(String),
    /// The thread was not suspended.
    Runs,
    /// Its suspend count could not be read, with the error.
    Unreadable(String),
}
