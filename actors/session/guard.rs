//! The session's side of the overhead guard, one task per session. It
//! decides what a pause becomes before the agent is told: a wire stop
//! point that a probe can serve is switched to one (`probes/switch.rs`),
//! anything else stays paused. And it charges the cost no hold shows:
//! while a method-exit or field watch is armed over the wire, HotSpot runs
//! every thread interpreted, so each such stop point is charged a share of
//! one thread's time for every second it is armed, and paused (or
//! switched) past its budget like any other. A probe holds no thread but
//! its code runs in every call: each armed probe is charged its sampled
//! cost per call times its calls, and paused (taken out of its class)
//! past its budget.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::SessionHandle;
use super::stops::interprets;
use crate::model::stop_point::{Engine, StopPointId, StopState};
use crate::probes::{probe_site, switch};
use crate::stop_points::{Handoff, Listing, Paused};

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
        let mut calls_seen = HashMap::new();
        loop {
            let got = tokio::time::timeout(TICK, rx.recv()).await;
            if session.check_alive().is_err() {
                break;
            }
            if charged_to.elapsed() >= TICK {
                let now = Instant::now();
                let listing = session.stop_points().list().await;
                charge_interpreted(&session, &listing, now - charged_to).await;
                charge_probes(&session, &listing, &mut calls_seen).await;
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
async fn charge_interpreted(session: &SessionHandle, listing: &Listing, armed: Duration) {
    let points = session.stop_points();
    let guard = points.guard();
    for p in &listing.points {
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

/// Charges each armed probe what its calls since the last tick cost the
/// application's threads (`calls_seen`: each one's calls then), and
/// pauses one over its budget: its class gets its own bytes back.
async fn charge_probes(
    session: &SessionHandle,
    listing: &Listing,
    calls_seen: &mut HashMap<String, u64>,
) {
    let points = session.stop_points();
    for p in &listing.points {
        let Some(cost) = p.probe.filter(|_| p.state == StopState::Armed) else {
            calls_seen.remove(&p.id);
            continue;
        };
        let before = calls_seen.insert(p.id.clone(), cost.calls);
        let (Some(before), Some(ns)) = (before, cost.charged_ns_per_call) else {
            continue;
        };
        let Some(stats) = points.stats(&p.id).await else {
            continue;
        };
        let calls = cost.calls.saturating_sub(before);
        stats.probe_ran(Duration::from_nanos(ns.saturating_mul(calls)));
        if p.budget_pct == 0 {
            continue;
        }
        if let Some(over) = stats.over_budget(Instant::now(), p.budget_pct) {
            let _ = session.toggle_stop(&p.id, Some(false)).await;
            calls_seen.remove(&p.id);
            points.guard().tell(Paused {
                id: StopPointId(p.id.clone()),
                over,
                switched: None,
            });
        }
    }
}
