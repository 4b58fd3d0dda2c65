//! A probe whose lease lapsed: its helper switched itself off because no
//! renewal came for the lease's length (this jvmscope was stopped, or too
//! slow). When the drain finds it off while the book still has it armed,
//! the helper's `init` runs again and the probe records again; when that
//! fails, the meter says the probe is off, and the next round tries again.
//!
//! `init` runs as an invocation, on a thread borrowed for it. While this
//! session holds a thread or the VM for the agent, the re-arm waits: the
//! borrowed thread would be the agent's own hit thread, and an
//! invocation lets the JVM run for its length, so a resume the agent sent
//! meanwhile would be undone when the invocation ends (JDWP puts the
//! thread's suspensions back), leaving a thread held that nobody holds.

use std::sync::atomic::Ordering;

use super::helper::rearm;
use super::{Live, ProbesHandle};
use crate::door::Jvm;

/// Re-arms the probe of stop point `id` found off by its lease. Returns
/// `false` when it must be tried again: this session holds something for
/// the agent, so nothing was done.
pub(super) async fn lapsed(session: &Jvm, probes: &ProbesHandle, id: &str, probe: &Live) -> bool {
    // Taken out or replaced meanwhile: nothing to re-arm.
    let current = probes.point(id).await.and_then(|p| p.live);
    if current.is_none_or(|l| l.helper != probe.helper) {
        return true;
    }
    let (off, waits) = (&probe.stats.probe.lease_off, &probe.stats.probe.lease_waits);
    let held = session.link().session.view().await.suspended_by_us;
    waits.store(held, Ordering::Relaxed);
    if held {
        off.store(true, Ordering::Relaxed);
        return false;
    }
    match rearm(session, probe.helper).await {
        Ok(()) => off.store(false, Ordering::Relaxed),
        Err(e) => {
            off.store(true, Ordering::Relaxed);
            tracing::warn!(probe = %id, error = %e, "a probe whose lease lapsed could not be re-armed");
        }
    }
    true
}
