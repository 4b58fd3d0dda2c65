//! The event requests this connection set and has not cleared: the one
//! answer to "did anybody in this session ask for this event?". Every
//! part of the session that sets a request (stop points, steps, the
//! launcher's start-up watch, cancels) does it through this connection,
//! so the book is kept where the packets pass (`wire.rs`), not by each
//! owner. EventDispatch asks it about an event no stop point owns: one
//! this book does not know either was set by nobody alive (a request
//! cleared while its hit was queued), and its hold is ours to release.
//!
//! A request's id is known only when its reply arrives, and the JVM may
//! send the request's first event before that reply. So the book counts
//! the `EventRequest.Set`s sent and answered, and a question about an
//! unknown id waits until every Set sent before it was asked is answered.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::watch;

use crate::jdwp::{Command, RequestId, event_request};
use crate::lock::lock;

/// `EventKind::Breakpoint`'s byte, which `ClearAllBreakpoints` clears.
const BREAKPOINT: u8 = 2;

/// What the book says of one request id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Known {
    /// This connection set it and has not cleared it (or it is the JVM's
    /// own, id 0: VM start and death).
    Live,
    /// Nobody in this session has it: set by no one, or already cleared.
    Unknown,
}

/// The live requests of one connection.
#[derive(Debug)]
pub struct RequestBook {
    /// Request id → the event kind it was set for.
    live: Mutex<HashMap<i32, u8>>,
    /// `EventRequest.Set`s written so far.
    sets_sent: Mutex<u64>,
    /// `EventRequest.Set`s answered so far (or failed), watched by
    /// whoever waits for a reply to land.
    sets_done: watch::Sender<u64>,
}

impl Default for RequestBook {
    fn default() -> Self {
        Self {
            live: Mutex::default(),
            sets_sent: Mutex::default(),
            sets_done: watch::Sender::new(0),
        }
    }
}

/// What a command does to the book, read when it is submitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Effect {
    /// Not a request command.
    None,
    /// A Set of this event kind: its id comes with the reply.
    Set(u8),
}

impl RequestBook {
    /// Notes a command on its way out: a Set is counted, a Clear and a
    /// ClearAllBreakpoints forget their requests at once (an event of
    /// theirs still queued in the JVM is nobody's any more).
    pub(super) fn submitted(&self, command_set: u8, command: u8, data: &[u8]) -> Effect {
        if command_set != event_request::Set::SET {
            return Effect::None;
        }
        match command {
            event_request::Set::ID => {
                *lock(&self.sets_sent) += 1;
                Effect::Set(data.first().copied().unwrap_or(0))
            }
            event_request::Clear::ID => {
                if let Some(id) = data.get(1..5).and_then(|b| <[u8; 4]>::try_from(b).ok()) {
                    lock(&self.live).remove(&i32::from_be_bytes(id));
                }
                Effect::None
            }
            event_request::ClearAllBreakpoints::ID => {
                lock(&self.live).retain(|_, kind| *kind != BREAKPOINT);
                Effect::None
            }
            _ => Effect::None,
        }
    }

    /// Notes a Set's answer: its reply data begins with the new id; a
    /// refused or failed Set set nothing.
    pub(super) fn answered(&self, kind: u8, reply: Option<&[u8]>) {
        if let Some(id) = reply
            .and_then(|d| d.get(..4))
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
        {
            lock(&self.live).insert(i32::from_be_bytes(id), kind);
        }
        self.sets_done.send_modify(|n| *n += 1);
    }

    /// A request the JVM deleted itself (its Count ran out).
    pub fn spent(&self, id: RequestId) {
        lock(&self.live).remove(&id.0);
    }

    /// What the book says of `id` now, without waiting.
    pub fn known_now(&self, id: RequestId) -> Known {
        if id.0 == 0 || lock(&self.live).contains_key(&id.0) {
            Known::Live
        } else {
            Known::Unknown
        }
    }

    /// What the book says of `id` once every Set sent so far is answered
    /// (its reply may trail the event), waiting at most `patience`; past
    /// that, the answer of the moment.
    pub async fn known(&self, id: RequestId, patience: Duration) -> Known {
        if self.known_now(id) == Known::Live {
            return Known::Live;
        }
        let sent = *lock(&self.sets_sent);
        let mut done = self.sets_done.subscribe();
        let _ = tokio::time::timeout(patience, done.wait_for(|d| *d >= sent)).await;
        self.known_now(id)
    }

    /// How many requests are live (for tests and diagnostics).
    pub fn len(&self) -> usize {
        lock(&self.live).len()
    }

    /// Whether no request is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SET: (u8, u8) = (event_request::Set::SET, event_request::Set::ID);
    const CLEAR: (u8, u8) = (event_request::Clear::SET, event_request::Clear::ID);
    const CLEAR_ALL: (u8, u8) = (
        event_request::ClearAllBreakpoints::SET,
        event_request::ClearAllBreakpoints::ID,
    );

    fn set(book: &RequestBook, kind: u8, id: i32) {
        let Effect::Set(k) = book.submitted(SET.0, SET.1, &[kind, 2, 0]) else {
            panic!("a Set is a Set");
        };
        book.answered(k, Some(&id.to_be_bytes()));
    }

    #[test]
    fn a_set_is_known_from_its_reply_until_it_is_cleared() {
        let book = RequestBook::default();
        assert_eq!(book.known_now(RequestId(7)), Known::Unknown);
        assert_eq!(book.known_now(RequestId(0)), Known::Live, "the JVM's own");
        set(&book, BREAKPOINT, 7);
        set(&book, 8, 9);
        assert_eq!(book.known_now(RequestId(7)), Known::Live);
        book.submitted(CLEAR.0, CLEAR.1, &[BREAKPOINT, 0, 0, 0, 7]);
        assert_eq!(book.known_now(RequestId(7)), Known::Unknown);
        set(&book, BREAKPOINT, 10);
        book.submitted(CLEAR_ALL.0, CLEAR_ALL.1, &[]);
        assert_eq!(book.known_now(RequestId(10)), Known::Unknown);
        assert_eq!(
            book.known_now(RequestId(9)),
            Known::Live,
            "not a breakpoint"
        );
        book.spent(RequestId(9));
        assert!(book.is_empty());
    }

    #[test]
    fn a_refused_set_and_other_commands_leave_nothing() {
        let book = RequestBook::default();
        assert_eq!(book.submitted(1, 1, &[]), Effect::None);
        let Effect::Set(k) = book.submitted(SET.0, SET.1, &[BREAKPOINT]) else {
            panic!("a Set is a Set");
        };
        book.answered(k, None);
        book.answered(k, Some(&[0, 1]));
        assert!(book.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn an_unknown_id_waits_for_the_sets_in_flight() {
        let book = std::sync::Arc::new(RequestBook::default());
        let Effect::Set(k) = book.submitted(SET.0, SET.1, &[BREAKPOINT]) else {
            panic!("a Set is a Set");
        };
        let asked = {
            let book = book.clone();
            tokio::spawn(async move { book.known(RequestId(5), Duration::from_secs(5)).await })
        };
        tokio::task::yield_now().await;
        book.answered(k, Some(&5i32.to_be_bytes()));
        assert_eq!(asked.await.ok(), Some(Known::Live));
        // Nothing in flight: an unknown id is answered at once.
        assert_eq!(
            book.known(RequestId(6), Duration::from_secs(5)).await,
            Known::Unknown
        );
    }
}
