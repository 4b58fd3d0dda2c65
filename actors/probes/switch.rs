//! The overhead guard's pause, made good where it can be: a wire stop
//! point the guard pauses is switched to a probe when one can serve it
//! (`engine: "auto"`, a site a probe takes, a session that may change
//! code). The probe keeps the stop point's id, definition and counters;
//! its condition then runs in the JVM, and the hits the wire paid a
//! round trip for cost the application nanoseconds. The agent is told
//! which it became: paused, or switched.

use super::{ProbesHandle, install, probe_site, remove, sync_trap};
use crate::door::Jvm;
use crate::model::stop_point::{ArmNote, Engine};
use crate::stop_points::Paused;

/// Switches a paused wire stop point to a probe; the redefinition's pause
/// (µs) when it went in, `None` when it stays paused.
pub async fn switch(session: &Jvm, probes: &ProbesHandle, paused: &Paused) -> Option<u64> {
    let id = paused.id.0.as_str();
    if session.read_only() || probes.is_probe(id).await {
        return None;
    }
    let points = session.stop_points();
    let view = points.view(id).await?;
    if view.spec.engine != Engine::Auto || view.probe.is_some() {
        return None;
    }
    probe_site(&view.spec).ok()?;
    // The dispatcher's disarm may still be on its way: the wire's
    // requests go before the probe comes in.
    points.toggle(id, Some(false)).await.ok()?;
    let stats = points.stats(id).await?;
    let installed = match install(session, probes, id, &view.spec, stats).await {
        Ok(i) => i,
        Err(e) => {
            tracing::info!(stop_point = id, error = %e, "a paused stop point stays paused: no probe");
            return None;
        }
    };
    let pause_us = installed.pause.as_micros() as u64;
    let adopted = points
        .become_probe(id, ArmNote::SwitchedByGuard { pause_us })
        .await;
    if !adopted || sync_trap(session, probes, id).await.is_err() {
        let _ = remove(session.connection(), session.classes(), probes, id, false).await;
        let _ = points.toggle(id, Some(false)).await;
        return None;
    }
    Some(pause_us)
}
