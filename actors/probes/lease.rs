//! A probe whose lease lapsed: its helper switched itself off because no
//! renewal came for the lease's length (this jvmscope was stopped, or too
//! slow). When the drain finds it off while the book still has it armed,
//! the helper's `init` runs again and the probe records again; when that
//! fails, the meter says the probe is off, and the next round tries again.

use std::sync::atomic::Ordering;

use super::helper::rearm;
use super::{Live, ProbesHandle};
use crate::door::Jvm;

/// Re-arms the probe of stop point `id` found off by its lease.
pub(super) async fn lapsed(session: &Jvm, probes: &ProbesHandle, id: &str, probe: &Live) {
    // Taken out or replaced meanwhile: nothing to re-arm.
    let current = probes.point(id).await.and_then(|p| p.live);
    if current.is_none_or(|l| l.helper != probe.helper) {
        return;
    }
    let off = &probe.stats.probe.lease_off;
    match rearm(session, probe.helper).await {
        Ok(()) => off.store(false, Ordering::Relaxed),
        Err(e) => {
            off.store(true, Ordering::Relaxed);
            tracing::warn!(probe = %id, error = %e, "a probe whose lease lapsed could not be re-armed");
        }
    }
}
