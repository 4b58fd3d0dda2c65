//! A thread still inside a method call of ours that ran past its budget
//! and could not be cancelled: until the call returns the thread runs
//! nothing of its own, so every reply names it and no count of running
//! threads includes it. The floor under the actors keeps the list; the
//! MCP layer words it.

use crate::jdwp::ThreadId;

/// One thread a call still holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invoking {
    pub thread: ThreadId,
    /// The thread's name, as read when the cancel gave up.
    pub name: String,
    /// The method called, `Class.method`.
    pub method: String,
    /// Since the call started.
    pub for_ms: u128,
    pub why: Uncancelled,
    /// The stop point whose condition or trace expression made the call,
    /// when one did.
    pub by: Option<String>,
}

/// Why a cancel could not end the call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Uncancelled {
    /// The `Error` thrown into the call was caught there, and the call
    /// went on.
    Swallowed,
    /// The thread ran no bytecode: it is blocked where neither the
    /// interrupt nor a thread lent to interrupt it reached it.
    Unwoken,
    /// An event suspended the thread inside the call (a stop point in the
    /// code it calls): it waits for a resume, not for a cancel.
    HeldInside,
    /// No `Error` to throw could be made before the call.
    NoThrowable,
    /// The single-step request that tells when the thread runs bytecode
    /// was refused, with the error.
    NoMarker(String),
}
