//! The suspension ledger: who holds which thread, and why. Exactly one
//! owner keeps it, the Session actor; every other part of the session
//! (event dispatch, the watchdog, late invocations, the handle) asks it by
//! message through the narrow port `actors::link::SessionRef`. The ledger
//! itself is a plain struct with synchronous methods, tested without a
//! runtime.

use std::collections::HashMap;
use std::time::Instant;

use crate::jdwp::{EventKind, RequestId, ThreadId};

pub use crate::link::port::{LedgerMsg, LedgerView};

/// The suspension bookkeeping of one session.
#[derive(Debug, Default)]
pub struct Ledger {
    event_threads: Vec<ThreadId>,
    held: HashMap<ThreadId, (u32, Instant)>,
    maybe_suspended: bool,
    /// The agent paused the VM and no verified resume has undone it.
    paused: bool,
    /// An event of ours suspended every thread (a SuspendPolicy ALL
    /// composite) and no resume has undone it.
    whole_vm: bool,
    /// Something of ours may hold a thread nobody can name (an
    /// undecodable composite, a late return): until the counts are read.
    unaccounted: bool,
    suspended_since: Option<Instant>,
    suspending_requests: Vec<(EventKind, RequestId)>,
    step: Option<RequestId>,
}

impl Ledger {
    /// An event suspended `threads` (on behalf of `requests`), or every
    /// thread when `whole_vm`.
    pub fn suspended(
        &mut self,
        threads: &[ThreadId],
        requests: &[(EventKind, RequestId)],
        whole_vm: bool,
    ) {
        self.note_suspension();
        self.whole_vm |= whole_vm;
        for r in requests {
            if r.1.0 != 0 && !self.suspending_requests.contains(r) {
                self.suspending_requests.push(*r);
            }
        }
        for t in threads {
            self.event_threads.retain(|h| h != t);
            self.event_threads.push(*t);
        }
    }

    /// Something may now be suspended.
    pub fn note_suspension(&mut self) {
        self.maybe_suspended = true;
        self.suspended_since.get_or_insert_with(Instant::now);
    }

    /// The agent paused the whole VM.
    pub fn paused(&mut self) {
        self.paused = true;
        self.note_suspension();
    }

    /// Something may be suspended that no thread or hold of the ledger
    /// names.
    pub fn unaccounted(&mut self) {
        self.unaccounted = true;
        self.note_suspension();
    }

    /// A verified resume undid the VM's suspend depth: an agent pause is
    /// over.
    pub fn vm_resumed(&mut self) {
        self.paused = false;
    }

    /// Whether this session holds anything, by its own records: an event
    /// thread, an agent hold, a pause, or a suspension it could not name.
    /// Not "maybe": a thread a parked call or a capture held and gave
    /// back no longer counts.
    pub fn holds_any(&self) -> bool {
        !self.event_threads.is_empty() || !self.held.is_empty() || self.paused || self.unaccounted
    }

    /// Nothing is suspended any more.
    pub fn all_clear(&mut self) {
        self.maybe_suspended = false;
        self.paused = false;
        self.whole_vm = false;
        self.unaccounted = false;
        self.suspended_since = None;
        self.suspending_requests.clear();
    }

    /// Forgets event suspensions: of one thread, or of all (`None`).
    pub fn forget_event_threads(&mut self, thread: Option<ThreadId>) {
        match thread {
            Some(t) => self.event_threads.retain(|h| *h != t),
            None => {
                self.event_threads.clear();
                self.whole_vm = false;
            }
        }
    }

    /// How many of the JVM's `total` threads this session holds by its
    /// own records: all of them while it holds the whole VM (a pause, a
    /// hit that suspended every thread), else those an event or the
    /// agent holds.
    pub fn threads_held(&self, total: usize) -> usize {
        if self.paused || self.whole_vm {
            return total;
        }
        let mut threads: Vec<ThreadId> = self.held.keys().copied().collect();
        threads.extend(self.event_threads.iter().copied());
        threads.sort_by_key(|t| t.0);
        threads.dedup();
        threads.len()
    }

    /// One more agent-requested suspension of `thread`.
    pub fn hold(&mut self, thread: ThreadId) {
        self.held.entry(thread).or_insert((0, Instant::now())).0 += 1;
    }

    /// One agent-requested resume of `thread`.
    pub fn release(&mut self, thread: ThreadId) {
        if let Some(e) = self.held.get_mut(&thread) {
            e.0 = e.0.saturating_sub(1);
            if e.0 == 0 {
                self.held.remove(&thread);
            }
        }
    }

    /// Forgets every agent hold.
    pub fn release_all(&mut self) {
        self.held.clear();
    }

    /// The requests whose hits suspended something since the last
    /// all-clear, emptied.
    pub fn take_suspending_requests(&mut self) -> Vec<(EventKind, RequestId)> {
        std::mem::take(&mut self.suspending_requests)
    }

    /// Replaces the live step request, returning the one it replaces.
    pub fn replace_step(&mut self, step: Option<RequestId>) -> Option<RequestId> {
        std::mem::replace(&mut self.step, step)
    }

    pub fn view(&self) -> LedgerView {
        LedgerView {
            event_threads: self.event_threads.clone(),
            held: self.held.iter().map(|(t, (n, at))| (*t, *n, *at)).collect(),
            maybe_suspended: self.maybe_suspended,
            suspended_by_us: self.holds_any(),
            suspended_for: self.suspended_since.map(|at| at.elapsed()),
        }
    }
}

impl Ledger {
    /// Applies one message (the Session actor's `handle` calls this).
    pub fn apply(&mut self, msg: LedgerMsg) {
        match msg {
            LedgerMsg::Suspended {
                threads,
                requests,
                whole_vm,
            } => self.suspended(&threads, &requests, whole_vm),
            LedgerMsg::NoteSuspension => self.note_suspension(),
            LedgerMsg::Paused => self.paused(),
            LedgerMsg::Unaccounted => self.unaccounted(),
            LedgerMsg::AllClear => self.all_clear(),
            LedgerMsg::Forget(t) => self.forget_event_threads(t),
            LedgerMsg::Hold(t) => self.hold(t),
            LedgerMsg::Release(t) => self.release(t),
            LedgerMsg::ReleaseAll => self.release_all(),
            LedgerMsg::View(reply) => {
                let _ = reply.send(self.view());
            }
            LedgerMsg::TakeSuspendingRequests(reply) => {
                let _ = reply.send(self.take_suspending_requests());
            }
            LedgerMsg::ReplaceStep(step, reply) => {
                let _ = reply.send(self.replace_step(step));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_thread_is_recorded_once_newest_last_and_forgotten() {
        let mut l = Ledger::default();
        let (a, b) = (ThreadId(1), ThreadId(2));
        let req = (EventKind::Breakpoint, RequestId(7));
        l.suspended(
            &[a, b],
            &[req, req, (EventKind::Breakpoint, RequestId(0))],
            false,
        );
        l.suspended(&[a], &[], false);
        let v = l.view();
        assert_eq!(v.event_threads, vec![b, a]);
        assert!(v.maybe_suspended && v.suspended_for.is_some());
        assert_eq!(l.take_suspending_requests(), vec![req]);
        l.forget_event_threads(Some(b));
        assert_eq!(l.view().event_threads, vec![a]);
        l.forget_event_threads(None);
        assert!(l.view().event_threads.is_empty());
    }

    #[test]
    fn agent_holds_are_counted_and_released_one_at_a_time() {
        let mut l = Ledger::default();
        let t = ThreadId(3);
        l.hold(t);
        l.hold(t);
        l.release(t);
        assert_eq!(l.view().held.first().map(|h| h.1), Some(1));
        l.release(t);
        assert!(l.view().held.is_empty());
        l.hold(t);
        l.release_all();
        assert!(l.view().held.is_empty());
    }

    #[test]
    fn all_clear_forgets_the_suspension_but_not_the_holds() {
        let mut l = Ledger::default();
        l.hold(ThreadId(4));
        l.suspended(&[], &[(EventKind::Breakpoint, RequestId(9))], false);
        l.all_clear();
        let v = l.view();
        assert!(!v.maybe_suspended && v.suspended_for.is_none());
        assert!(l.take_suspending_requests().is_empty());
        assert_eq!(v.held.len(), 1);
    }

    #[test]
    fn a_thread_given_back_leaves_nothing_held_by_us() {
        let mut l = Ledger::default();
        let t = ThreadId(5);
        // A parked call: its step event holds the thread, then it is
        // given back. The watchdog may still look ("maybe"), but this
        // session holds nothing.
        l.suspended(&[t], &[(EventKind::SingleStep, RequestId(3))], false);
        assert!(l.view().suspended_by_us);
        l.forget_event_threads(Some(t));
        let v = l.view();
        assert!(v.maybe_suspended && !v.suspended_by_us);
        // A pause holds until a verified resume undoes it.
        l.paused();
        assert!(l.view().suspended_by_us);
        l.vm_resumed();
        assert!(!l.view().suspended_by_us);
        l.unaccounted();
        assert!(l.view().suspended_by_us);
        l.all_clear();
        assert!(!l.view().suspended_by_us);
    }

    #[test]
    fn the_threads_held_by_us_are_counted_from_the_records() {
        let mut l = Ledger::default();
        assert_eq!(l.threads_held(10), 0);
        let (a, b) = (ThreadId(1), ThreadId(2));
        l.suspended(&[a], &[], false);
        l.hold(a);
        l.hold(b);
        assert_eq!(l.threads_held(10), 2, "a thread held twice is one thread");
        // A hit that suspended every thread holds them all, until resumed.
        l.suspended(&[b], &[], true);
        assert_eq!(l.threads_held(10), 10);
        l.forget_event_threads(None);
        l.release_all();
        assert_eq!(l.threads_held(10), 0);
        l.paused();
        assert_eq!(l.threads_held(7), 7);
        l.all_clear();
        assert_eq!(l.threads_held(7), 0);
    }

    #[test]
    fn the_step_slot_holds_one_request() {
        let mut l = Ledger::default();
        assert_eq!(l.replace_step(Some(RequestId(5))), None);
        assert_eq!(l.replace_step(None), Some(RequestId(5)));
    }
}
