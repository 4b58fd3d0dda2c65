//! The floor every actor reads the JVM through: the per-session class
//! cache, frames and locals, values read for display, the evaluator's
//! driver, bounded invocation and the thread census. It owns no actor and
//! imports none; it talks to the JVM through a `ConnectionHandle` and to
//! the session's suspension ledger only through the narrow port in
//! `actors::link`.

pub mod classes;
pub mod eval;
pub mod inspect;
pub mod invoke;
pub mod show;
pub mod threads;
