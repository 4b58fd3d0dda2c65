//! Marker requests: one-shot event requests a cancel sets for itself — a
//! single step that says the invoking thread runs bytecode again, a
//! method entry that lends it another thread. Their events are nobody
//! else's business: EventDispatch hands every composite here first
//! ([`Markers::claim`]), before anything records or routes it, so a marker
//! never shows up as a hit, a recent event or a thread held by an event.
//!
//! An event can arrive before the `Set` that asked for it has its reply
//! (the JVM's event and reply packets are not ordered), so a waiter
//! matches by kind and thread until it learns its request id. A waiter
//! given up on stays behind as an orphan for a while: an event of its
//! request already on its way is still claimed, and a thread it holds is
//! handed back to be resumed rather than left suspended.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use crate::jdwp::{Composite, Event, EventKind, RequestId, SuspendPolicy, ThreadId};
use crate::lock::lock;

/// How long an orphaned marker still claims the events of its request.
const ORPHAN_FOR: Duration = Duration::from_secs(60);
/// Orphans kept at most.
const MAX_ORPHANS: usize = 32;

/// A marker's event, as its waiter receives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marked {
    pub thread: ThreadId,
    /// The composite suspended the thread for this marker alone: whoever
    /// receives it must resume it.
    pub held: bool,
}

/// What [`Markers::claim`] leaves of a composite.
#[derive(Debug, Default)]
pub struct Claim {
    /// The events that are not markers, in their composite (`None`: all
    /// were).
    pub rest: Option<Composite>,
    /// A thread an orphaned marker's event suspended, to be resumed.
    pub release: Option<ThreadId>,
}

struct Waiter {
    key: u64,
    kind: EventKind,
    thread: Option<ThreadId>,
    request: Option<RequestId>,
    tx: Option<oneshot::Sender<Marked>>,
    /// Given up on at this instant: an orphan.
    orphaned: Option<Instant>,
}

impl Waiter {
    fn matches(&self, e: &Event) -> bool {
        e.kind() == self.kind
            && match self.request {
                Some(r) => e.request_id() == r,
                None => {
                    self.orphaned.is_none() && self.thread.is_none_or(|t| e.thread() == Some(t))
                }
            }
    }
}

/// The marker requests of one session.
#[derive(Default)]
pub struct Markers {
    /// Waiters and orphans: zero means every composite passes untouched.
    live: AtomicUsize,
    next: AtomicUsize,
    waiters: Mutex<Vec<Waiter>>,
}

/// A marker awaited: bind its request id once known, then await its
/// event. Dropping it orphans the marker.
pub struct Expecting {
    markers: Arc<Markers>,
    key: u64,
    rx: Option<oneshot::Receiver<Marked>>,
    fired: bool,
}

impl Markers {
    /// Awaits the next event of `kind` (on `thread`, when given), before
    /// the request that asks for it is sent.
    pub fn expect(self: &Arc<Self>, kind: EventKind, thread: Option<ThreadId>) -> Expecting {
        let key = self.next.fetch_add(1, Ordering::Relaxed) as u64;
        let (tx, rx) = oneshot::channel();
        let mut w = lock(&self.waiters);
        w.push(Waiter {
            key,
            kind,
            thread,
            request: None,
            tx: Some(tx),
            orphaned: None,
        });
        self.live.store(w.len(), Ordering::Release);
        Expecting {
            markers: self.clone(),
            key,
            rx: Some(rx),
            fired: false,
        }
    }

    /// Takes the marker events out of `composite`. Cheap when no marker
    /// is armed: one atomic load.
    pub fn claim(&self, composite: Composite) -> Claim {
        if self.live.load(Ordering::Acquire) == 0 {
            return Claim {
                rest: Some(composite),
                release: None,
            };
        }
        let mut w = lock(&self.waiters);
        let now = Instant::now();
        w.retain(|x| {
            x.orphaned
                .is_none_or(|at| now.duration_since(at) < ORPHAN_FOR)
        });
        let Composite {
            suspend_policy,
            events,
        } = composite;
        let mut rest = Vec::with_capacity(events.len());
        let mut claimed = Vec::new();
        for e in events {
            match w.iter().position(|x| x.matches(&e)) {
                Some(i) => claimed.push((i, e)),
                None => rest.push(e),
            }
        }
        // The thread is ours to resume only when no other event of the
        // composite needs it held (a hit's capture resumes it otherwise).
        let held = rest.is_empty() && suspend_policy != SuspendPolicy::None;
        let mut release = None;
        for (i, e) in claimed {
            let Some(thread) = e.thread() else { continue };
            let marked = Marked { thread, held };
            let delivered = match w[i].tx.take() {
                Some(tx) => tx.send(marked).is_ok(),
                None => false,
            };
            if !delivered && held {
                release = Some(thread);
            }
        }
        self.live.store(w.len(), Ordering::Release);
        Claim {
            rest: (!rest.is_empty()).then_some(Composite {
                suspend_policy,
                events: rest,
            }),
            release,
        }
    }

    fn bind(&self, key: u64, request: RequestId) {
        if let Some(x) = lock(&self.waiters).iter_mut().find(|x| x.key == key) {
            x.request = Some(request);
        }
    }

    fn orphan(&self, key: u64) {
        let mut w = lock(&self.waiters);
        match w.iter().position(|x| x.key == key) {
            // Without a request id nothing of its own can come any more.
            Some(i) if w[i].request.is_none() => {
                w.remove(i);
            }
            Some(i) => {
                w[i].orphaned = Some(Instant::now());
                w[i].tx = None;
            }
            None => {}
        }
        let orphans = w.iter().filter(|x| x.orphaned.is_some()).count();
        if orphans > MAX_ORPHANS
            && let Some(i) = w.iter().position(|x| x.orphaned.is_some())
        {
            w.remove(i);
        }
        self.live.store(w.len(), Ordering::Release);
    }
}

impl Expecting {
    /// The request the marker's event will carry.
    pub fn bind(&self, request: RequestId) {
        self.markers.bind(self.key, request);
    }

    /// The marker's event, or `None` past `within` (or when it was taken
    /// already).
    pub async fn fired(&mut self, within: Duration) -> Option<Marked> {
        let rx = self.rx.as_mut()?;
        match tokio::time::timeout(within, rx).await {
            Ok(Ok(m)) => {
                self.rx = None;
                self.fired = true;
                Some(m)
            }
            _ => None,
        }
    }

    /// Whether the event came, before or now (without waiting): a marker
    /// that did not is cleared at the JVM.
    pub fn done(&mut self) -> bool {
        if let Some(rx) = self.rx.as_mut()
            && rx.try_recv().is_ok()
        {
            self.rx = None;
            self.fired = true;
        }
        self.fired
    }
}

impl Drop for Expecting {
    fn drop(&mut self) {
        self.markers.orphan(self.key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jdwp::{Location, MethodId, ReferenceTypeId, TypeTag};

    fn at() -> Location {
        Location {
            type_tag: TypeTag::Class,
            class: ReferenceTypeId(1),
            method: MethodId(2),
            index: 0,
        }
    }

    fn step(request: i32, thread: u64) -> Event {
        Event::SingleStep {
            request_id: RequestId(request),
            thread: ThreadId(thread),
            location: at(),
        }
    }

    fn entry(request: i32, thread: u64) -> Event {
        Event::MethodEntry {
            request_id: RequestId(request),
            thread: ThreadId(thread),
            location: at(),
        }
    }

    fn composite(policy: SuspendPolicy, events: Vec<Event>) -> Composite {
        Composite {
            suspend_policy: policy,
            events,
        }
    }

    #[test]
    fn nothing_armed_passes_everything() {
        let m = Arc::new(Markers::default());
        let c = m.claim(composite(SuspendPolicy::None, vec![step(1, 7)]));
        assert_eq!(c.rest.map(|r| r.events.len()), Some(1));
        assert_eq!(c.release, None);
    }

    #[tokio::test]
    async fn a_step_is_claimed_by_thread_before_its_id_is_known() {
        let m = Arc::new(Markers::default());
        let mut wait = m.expect(EventKind::SingleStep, Some(ThreadId(7)));
        // Another thread's step is not ours.
        let other = m.claim(composite(SuspendPolicy::None, vec![step(3, 8)]));
        assert!(other.rest.is_some());
        let c = m.claim(composite(SuspendPolicy::None, vec![step(3, 7)]));
        assert!(c.rest.is_none());
        let got = wait.fired(Duration::from_millis(10)).await;
        assert_eq!(
            got,
            Some(Marked {
                thread: ThreadId(7),
                held: false
            })
        );
    }

    #[tokio::test]
    async fn a_lent_thread_is_ours_to_resume_only_when_nothing_else_holds_it() {
        let m = Arc::new(Markers::default());
        let mut wait = m.expect(EventKind::MethodEntry, None);
        wait.bind(RequestId(5));
        let bp = Event::Breakpoint {
            request_id: RequestId(9),
            thread: ThreadId(4),
            location: at(),
        };
        let c = m.claim(composite(SuspendPolicy::EventThread, vec![entry(5, 4), bp]));
        assert_eq!(c.rest.map(|r| r.events.len()), Some(1));
        let got = wait.fired(Duration::from_millis(10)).await;
        assert_eq!(got.map(|g| g.held), Some(false));
    }

    #[test]
    fn an_orphan_still_claims_its_request_and_hands_its_thread_back() {
        let m = Arc::new(Markers::default());
        let wait = m.expect(EventKind::MethodEntry, None);
        wait.bind(RequestId(5));
        drop(wait);
        let c = m.claim(composite(SuspendPolicy::EventThread, vec![entry(5, 4)]));
        assert!(c.rest.is_none());
        assert_eq!(c.release, Some(ThreadId(4)));
        // Another request's entry is not claimed.
        let c = m.claim(composite(SuspendPolicy::EventThread, vec![entry(6, 4)]));
        assert!(c.rest.is_some());
    }

    #[test]
    fn an_unbound_waiter_leaves_nothing_behind() {
        let m = Arc::new(Markers::default());
        drop(m.expect(EventKind::SingleStep, Some(ThreadId(7))));
        assert_eq!(m.live.load(Ordering::Relaxed), 0);
    }
}
