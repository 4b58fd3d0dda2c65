//! The narrow port through which a session's children reach the Session
//! actor without importing it: the suspension ledger's messages and the
//! request to end the session. It is a ractor `DerivedActorRef`, so a
//! child can send exactly these messages and nothing else of the Session's.

use std::time::{Duration, Instant};

use ractor::{DerivedActorRef, RpcReplyPort};

use crate::jdwp::{EventKind, RequestId, ThreadId};

/// What the ledger knows, at one moment, for a caller to decide on.
#[derive(Debug, Clone, Default)]
pub struct LedgerView {
    /// Threads an event suspended, newest last: the ones methods may be
    /// invoked on.
    pub event_threads: Vec<ThreadId>,
    /// Threads the agent holds: (thread, count, since).
    pub held: Vec<(ThreadId, u32, Instant)>,
    /// Something may be suspended (the Watchdog watches).
    pub maybe_suspended: bool,
    /// This session holds something by its own records (an event thread,
    /// an agent hold, a pause, a suspension it could not name): what
    /// "suspended by this session" means.
    pub suspended_by_us: bool,
    /// How long something has been suspended, if it is.
    pub suspended_for: Option<Duration>,
}

/// A change to the ledger, or a question to it.
pub enum LedgerMsg {
    Suspended {
        threads: Vec<ThreadId>,
        requests: Vec<(EventKind, RequestId)>,
        /// The composite suspended every thread (SuspendPolicy ALL).
        whole_vm: bool,
    },
    NoteSuspension,
    /// The agent paused the whole VM.
    Paused,
    /// Something may hold a thread no record names.
    Unaccounted,
    AllClear,
    Forget(Option<ThreadId>),
    Hold(ThreadId),
    Release(ThreadId),
    ReleaseAll,
    View(RpcReplyPort<LedgerView>),
    TakeSuspendingRequests(RpcReplyPort<Vec<(EventKind, RequestId)>>),
    ReplaceStep(Option<RequestId>, RpcReplyPort<Option<RequestId>>),
}

/// What a child may tell or ask the Session actor.
pub enum PortMsg {
    /// A change to the suspension ledger, or a question to it.
    Ledger(LedgerMsg),
    /// End the session with this reason.
    End(String),
}

/// What the session's children and helpers hold instead of the session:
/// a typed way to tell the Session actor what happened and to ask its
/// ledger. Changes are sent without waiting (their order from one sender
/// is kept); questions wait for the answer, and get an empty one if the
/// session has ended.
#[derive(Clone)]
pub struct SessionRef(DerivedActorRef<PortMsg>);

impl SessionRef {
    pub fn new(port: DerivedActorRef<PortMsg>) -> Self {
        Self(port)
    }

    fn tell(&self, msg: LedgerMsg) {
        let _ = self.0.send_message(PortMsg::Ledger(msg));
    }

    /// Asks the ledger a question; `None` once the session has ended.
    async fn ask<T>(&self, msg: impl FnOnce(RpcReplyPort<T>) -> LedgerMsg) -> Option<T> {
        let (tx, rx) = ractor::concurrency::oneshot();
        self.0.send_message(PortMsg::Ledger(msg(tx.into()))).ok()?;
        rx.await.ok()
    }

    /// An event suspended `threads` (every thread when `whole_vm`) for
    /// `requests`.
    pub fn suspended(
        &self,
        threads: Vec<ThreadId>,
        requests: Vec<(EventKind, RequestId)>,
        whole_vm: bool,
    ) {
        self.tell(LedgerMsg::Suspended {
            threads,
            requests,
            whole_vm,
        });
    }

    pub fn note_suspension(&self) {
        self.tell(LedgerMsg::NoteSuspension);
    }

    pub fn all_clear(&self) {
        self.tell(LedgerMsg::AllClear);
    }

    /// The agent paused the whole VM.
    pub fn paused(&self) {
        self.tell(LedgerMsg::Paused);
    }

    /// Something may hold a thread that no record of the ledger names.
    pub fn note_unaccounted(&self) {
        self.tell(LedgerMsg::Unaccounted);
    }

    pub fn forget_event_threads(&self, thread: Option<ThreadId>) {
        self.tell(LedgerMsg::Forget(thread));
    }

    pub fn hold(&self, thread: ThreadId) {
        self.tell(LedgerMsg::Hold(thread));
    }

    pub fn release(&self, thread: ThreadId) {
        self.tell(LedgerMsg::Release(thread));
    }

    pub fn release_all(&self) {
        self.tell(LedgerMsg::ReleaseAll);
    }

    /// Asks the Session to end with `reason`.
    pub fn end(&self, reason: String) {
        let _ = self.0.send_message(PortMsg::End(reason));
    }

    pub async fn view(&self) -> LedgerView {
        self.ask(LedgerMsg::View).await.unwrap_or_default()
    }

    pub async fn take_suspending_requests(&self) -> Vec<(EventKind, RequestId)> {
        self.ask(LedgerMsg::TakeSuspendingRequests)
            .await
            .unwrap_or_default()
    }

    pub async fn replace_step(&self, step: Option<RequestId>) -> Option<RequestId> {
        self.ask(|r| LedgerMsg::ReplaceStep(step, r))
            .await
            .flatten()
    }
}
