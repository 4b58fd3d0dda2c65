//! The overhead guard's pause, made good where it can be: a wire stop
//! point the guard pauses is switched to a probe when one can serve it
//! (`engine: "auto"`, a site a probe takes, a session that may change
//! code). The probe keeps the stop point's id, definition and counters;
//! its condition then runs in the JVM, and the hits the wire paid a
//! round trip for cost the application nanoseconds. The agent is told
//! which it became: paused, or switched.

use std::time::Duration;

use tokio::sync::mpsc;

use super::{install, probe_site, remove, sync_trap};
use crate::actors::session::SessionHandle;
use crate::actors::stop_points::{Handoff, Paused};
use crate::model::stop_point::{ArmNote, Engine};

/// How often the switcher looks whether its session still lives.
const ALIVE_EVERY: Duration = Duration::from_secs(1);

/// Takes the guard's pauses for this session from now on.
pub fn spawn_switcher(session: SessionHandle) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let read_only = session.read_only();
    session.stop_points().guard().hand_pauses_to(Handoff {
        to: tx,
        takes: Box::new(move |spec| {
            !read_only && spec.engine == Engine::Auto && probe_site(spec).is_ok()
        }),
    });
    tokio::spawn(async move {
        loop {
            let paused = match tokio::time::timeout(ALIVE_EVERY, rx.recv()).await {
                Ok(Some(p)) => p,
                Ok(None) => break,
                Err(_) if session.check_alive().is_err() => break,
                Err(_) => continue,
            };
            let told = match switch(&session, &paused).await {
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

/// Switches a paused wire stop point to a probe; the redefinition's pause
/// (µs) when it went in, `None` when it stays paused.
async fn switch(session: &SessionHandle, paused: &Paused) -> Option<u64> {
    let id = paused.id.0.as_str();
    if session.read_only() || session.probes().is_probe(id) {
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
    let installed = match install(session, session.probes(), id, &view.spec, stats).await {
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
    if !adopted || sync_trap(session, id).await.is_err() {
        let _ = remove(
            session.connection(),
            session.classes(),
            session.probes(),
            id,
            false,
        )
        .await;
        let _ = points.toggle(id, Some(false)).await;
        return None;
    }
    Some(pause_us)
}
