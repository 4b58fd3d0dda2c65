//! The step requests whose landing a capture task awaits (a suspending
//! probe's hit thread stepping out of the probe's helper, see
//! `dispatch/land.rs`): their events are claimed before anything routes
//! or records them, so nobody else sees the steps.

use std::collections::HashMap;
use std::sync::Mutex;

use tokio::sync::oneshot;

use crate::jdwp::{Composite, Event, Location, RequestId};
use crate::lock::lock;

/// Step requests whose landing a capture task awaits.
#[derive(Default)]
pub struct Landings {
    waiting: Mutex<HashMap<RequestId, oneshot::Sender<Location>>>,
}

impl Landings {
    /// Takes the landings out of a composite (handing each to its task);
    /// the rest, if anything is left.
    pub fn claim(&self, composite: Composite) -> Option<Composite> {
        let is_step = |e: &Event| matches!(e, Event::SingleStep { .. });
        if !composite.events.iter().any(is_step) {
            return Some(composite);
        }
        let mut waiting = lock(&self.waiting);
        let Composite {
            suspend_policy,
            events,
        } = composite;
        let mut rest = Vec::with_capacity(events.len());
        for e in events {
            match &e {
                Event::SingleStep {
                    request_id,
                    location,
                    ..
                } if waiting.contains_key(request_id) => {
                    if let Some(tx) = waiting.remove(request_id) {
                        let _ = tx.send(*location);
                    }
                }
                _ => rest.push(e),
            }
        }
        (!rest.is_empty()).then_some(Composite {
            suspend_policy,
            events: rest,
        })
    }

    pub(in crate::events) fn expect(&self, request: RequestId) -> oneshot::Receiver<Location> {
        let (tx, rx) = oneshot::channel();
        lock(&self.waiting).insert(request, tx);
        rx
    }

    pub(in crate::events) fn forget(&self, request: RequestId) {
        lock(&self.waiting).remove(&request);
    }
}
