//! The overhead guard of one session: the budgets it applies, the meter of
//! all its stop points' holds together, and the pauses not yet told to the
//! agent. EventDispatch charges it after every hold it ends; the registry
//! pauses (disarms) a stop point it finds over budget; every tool reply
//! takes the untold pauses.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::model::overhead::{Budgets, Meter, Overspent, Scope};
use crate::model::stop_point::{StopPointId, StopPointSpec};

/// A stop point paused by the guard, as the next reply tells it.
#[derive(Debug, Clone, PartialEq)]
pub struct Paused {
    pub id: StopPointId,
    pub over: Overspent,
    /// Instead of staying paused, it was switched from the wire to a probe
    /// whose redefinition paused the JVM this long (µs).
    pub switched: Option<u64>,
}

#[derive(Debug, Default)]
pub struct Guard {
    budgets: Budgets,
    session: Mutex<Meter>,
    untold: Mutex<Vec<Paused>>,
    /// Who decides what a pause becomes (the session, which can switch a
    /// wire stop point to a probe) before it is told, and which pauses it
    /// may make good.
    handoff: Mutex<Option<Handoff>>,
}

/// Where the pauses of stop points a probe might take over go first.
pub struct Handoff {
    pub to: tokio::sync::mpsc::UnboundedSender<Paused>,
    pub takes: Box<dyn Fn(&StopPointSpec) -> bool + Send + Sync>,
}

impl std::fmt::Debug for Handoff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Handoff")
    }
}

impl Guard {
    pub fn new(budgets: Budgets) -> Self {
        Self {
            budgets,
            ..Self::default()
        }
    }

    pub fn budgets(&self) -> Budgets {
        self.budgets
    }

    /// The budget of a stop point that sets `own` (None: the default).
    pub fn stop_point_pct(&self, own: Option<u32>) -> u32 {
        own.unwrap_or(self.budgets.stop_point_pct)
    }

    /// Charges one hold to the session's meter; `Some` when the session is
    /// now over its budget.
    pub fn charge(&self, at: Instant, held: Duration) -> Option<Overspent> {
        let at = super::routes::since_origin(at);
        let mut m = self.session.lock().ok()?;
        m.charge(at, held);
        m.over(at, self.budgets.session_pct, Scope::Session)
    }

    /// The session's share over the window, if it has watched long enough.
    pub fn session_share(&self, now: Instant) -> Option<f64> {
        self.session
            .lock()
            .ok()?
            .share(super::routes::since_origin(now))
    }

    /// A pause to tell the agent in the next reply (once the handoff, if
    /// any, has decided what it becomes). After it the session's meter
    /// restarts: what the paused stop point cost is behind us.
    pub fn paused(&self, p: Paused, spec: &StopPointSpec) {
        if let Ok(mut m) = self.session.lock() {
            m.reset();
        }
        let p = match self.handoff.lock() {
            Ok(h) => match h.as_ref().filter(|h| (h.takes)(spec)) {
                Some(h) => match h.to.send(p) {
                    Ok(()) => return,
                    Err(back) => back.0,
                },
                None => p,
            },
            Err(_) => p,
        };
        self.tell(p);
    }

    /// Queues a pause (or a switch) for the next reply.
    pub fn tell(&self, p: Paused) {
        if let Ok(mut u) = self.untold.lock() {
            u.push(p);
        }
    }

    /// Hands the pauses `handoff` takes to it before they are told.
    pub fn hand_pauses_to(&self, handoff: Handoff) {
        if let Ok(mut h) = self.handoff.lock() {
            *h = Some(handoff);
        }
    }

    /// The pauses not yet told, emptied.
    pub fn take_untold(&self) -> Vec<Paused> {
        self.untold
            .lock()
            .map(|mut u| std::mem::take(&mut *u))
            .unwrap_or_default()
    }
}
