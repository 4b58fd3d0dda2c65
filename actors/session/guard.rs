//! The session's side of the overhead guard, one task per session. It
//! decides what a pause becomes before the agent is told: a wire stop
//! point that a probe can serve is switched to one (`probes/switch.rs`),
//! anything else stays paused. And it charges the cost no hold shows:
//! while a method-exit or field watch is armed over the wire, HotSpot runs
//! every thread interpreted, so each such stop point is charged a share of
//! one thread's time for every second it is armed, and paused (or
//! switched) past its budget like any other.

use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::SessionHandle;
use super::stops::interprets;
use crate::model::stop_point::{Engine, StopPointId, StopState};
use crate::probes::{probe_site, switch};
use crate::stop_points::{Handoff, Paused};

/// How often the interpreted cost is charged (and the session's life
/// looked at).
const TICK: Duration = Duration::from_secs(1);

/// Takes the guard's pauses for this session from now on, and charges
/// interpretation every [`TICK`].
pub fn spawn_guard(session: SessionHandle) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let read_only = session.read_only();
    session.stop_points().guard().hand_pauses_to(Handoff {
        to: tx,
        takes: Box::new(move |spec| {
            !read_only && spec.engine == Engine::Auto && probe_site(spec).is_ok()
        }),
    });
    tokio::spawn(async move {
        let mut charged_to = Instant::now();
        loop {
            let got = tokio::time::timeout(TICK, rx.recv()).await;
            if session.check_alive().is_err() {
                break;
            }
            if charged_to.elapsed() >= TICK {
                let now = Instant::now();
                charge_interpreted(&session, now - charged_to).await;
                charged_to = now;
            }
            let paused = match got {
                Ok(Some(p)) => p,
                Ok(None) => break,
                Err(_) => continue,
            };
            let told = match switch(&session, session.probes(), &paused).await {
                Some(pause_us) => Paused {
                    switched: Some(pause_us),
                    ..paused
                },
                None => paused,
            };
            session.stop_points().guard().tell(told);
        }
    });
}

/// Charges each wire method-exit or field watch armed now for `armed` of
/// interpreted running, and pauses one over its budget.
async fn charge_interpreted(session: &SessionHandle, armed: Duration) {
    let points = session.stop_points();
    let listing = points.list().await;
    let guard = points.guard();
    for p in listing.points {
        if p.state != StopState::Armed || p.probe.is_some() || !interprets(&p.spec.target) {
            continue;
        }
        let Some(stats) = points.stats(&p.id).await else {
            continue;
        };
        stats.interpreted_for(armed);
        if p.budget_pct == 0 {
            continue;
        }
        if let Some(over) = stats.over_budget(Instant::now(), p.budget_pct) {
            guard.paused(
                Paused {
                    id: StopPointId(p.id.clone()),
                    over,
                    switched: None,
                },
                &p.spec,
            );
            let _ = points.toggle(&p.id, Some(false)).await;
        }
    }
}
