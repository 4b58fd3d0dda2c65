//! The door for stop points when the engine matters: arming picks the
//! probe or the wire (and says why), clearing and toggling take a probe
//! out of the class as well as out of the registry. Wire-only work goes
//! straight to the registry's handle.

use crate::error::ProbeRefusal;
use crate::model::stop_point::{ArmNote, Engine, StopPointSpec, StopState, Target};
use crate::probes::{self, probe_site};
use crate::session::SessionHandle;
use crate::stop_points::{ArmError, ArmReport, ClearReport, ToggleReport};

impl SessionHandle {
    /// Right after attach: gives back what an earlier jvmscope left
    /// instrumented (unless read-only), then starts draining this
    /// session's probes.
    pub async fn start_probes(&self) {
        // Only a JVM that can redefine classes can have been instrumented:
        // one capabilities request spares the class scan everywhere else.
        let can_redefine = self
            .connection()
            .send(&crate::jdwp::virtual_machine::CapabilitiesNew)
            .await
            .is_ok_and(|c| c.can_redefine_classes);
        if can_redefine {
            let left =
                probes::restore_leftovers(self.connection(), self.classes(), self.read_only())
                    .await;
            self.probes().set_leftovers(left);
        }
        probes::spawn_drain(self.jvm().clone(), self.probes().clone());
        super::guard::spawn_guard(self.clone());
    }

    /// Classes an earlier jvmscope had instrumented, restored at attach.
    pub async fn restored_at_attach(&self) -> Vec<probes::Leftover> {
        self.probes().leftovers().await
    }

    /// Arms `spec` with the engine it asks for: `probe` or refused,
    /// `wire`, or `auto` (a probe where one can go, else the wire with a
    /// note saying why).
    pub async fn arm_stop(
        &self,
        spec: StopPointSpec,
        max_classes: usize,
    ) -> Result<ArmReport, ArmError> {
        let from = self.events().latest_seq();
        let report = self.arm_by_engine(spec, max_classes).await?;
        for id in report
            .point
            .iter()
            .map(|p| &p.id)
            .chain(report.family.iter().map(|f| &f.id))
        {
            self.events().note_armed(id, from);
        }
        Ok(report)
    }

    /// Arms on the wire or as a probe, as `spec.engine` and the site allow.
    async fn arm_by_engine(
        &self,
        spec: StopPointSpec,
        max_classes: usize,
    ) -> Result<ArmReport, ArmError> {
        if spec.engine == Engine::Wire || (spec.engine == Engine::Auto && wire_suits(&spec)) {
            return self.arm_wire(spec, max_classes, Vec::new()).await;
        }
        // Read-only first: where no probe can go at all, an expression
        // only the wire computes is the wire's.
        let fits = if self.read_only() {
            Err(ProbeRefusal::ReadOnly { action: "a probe" })
        } else {
            probe_site(&spec).map(|_| ())
        };
        let why = match fits {
            Ok(()) => match self.arm_probe(&spec).await {
                Ok(report) => return Ok(report),
                Err(e) => e,
            },
            Err(e) => e,
        };
        // A trace expression a probe cannot compute is the agent's to
        // rephrase, or to ask the wire for by name: `auto` does not leave
        // it to the wire, whose holds a hot path would pay for.
        if why.is_trace_expr() {
            return Err(ArmError::Probe(why));
        }
        if only_a_probe_can(&spec.target) {
            return Err(ArmError::ProbeOnly(why));
        }
        if spec.engine == Engine::Probe {
            return Err(ArmError::Probe(why));
        }
        let mut notes = vec![ArmNote::WireChosen {
            why: why.to_string(),
        }];
        if interprets(&spec.target) {
            notes.push(ArmNote::RunsInterpreted);
        }
        self.arm_wire(spec, max_classes, notes).await
    }

    async fn arm_wire(
        &self,
        spec: StopPointSpec,
        max_classes: usize,
        mut notes: Vec<ArmNote>,
    ) -> Result<ArmReport, ArmError> {
        if notes.is_empty() && spec.engine == Engine::Wire && interprets(&spec.target) {
            notes.push(ArmNote::RunsInterpreted);
        }
        let mut report = self.stop_points().arm(spec, max_classes).await?;
        notes.append(&mut report.notes);
        report.notes = notes;
        Ok(report)
    }

    async fn arm_probe(&self, spec: &StopPointSpec) -> Result<ArmReport, ProbeRefusal> {
        // The id comes from the registry; the probe is installed first and
        // the point adopted only when it is in, so a refusal leaves nothing.
        let stats = std::sync::Arc::new(crate::stop_points::routes::Stats::default());
        let pending = format!(
            "{}{}",
            probes::PENDING,
            self.probes().helper_name("p").await?
        );
        let installed = probes::install(self, self.probes(), &pending, spec, stats.clone()).await?;
        let notes = vec![ArmNote::ProbeArmed {
            pause_us: installed.pause.as_micros() as u64,
            suspends: suspends(spec),
        }];
        let (report, registry_stats) = match self.stop_points().adopt(spec.clone(), notes).await {
            Ok(r) => r,
            Err(_) => {
                let _ = probes::remove(
                    self.connection(),
                    self.classes(),
                    self.probes(),
                    &pending,
                    false,
                )
                .await;
                return Err(ProbeRefusal::NoThread("the session is ending".into()));
            }
        };
        let mut report = report;
        // The view was taken at adoption, before the pause was known.
        if let Some(c) = report.point.as_mut().and_then(|p| p.probe.as_mut()) {
            c.pause_us = installed.pause.as_micros() as u64;
        }
        let id = report
            .point
            .as_ref()
            .map(|p| p.id.clone())
            .unwrap_or_default();
        registry_stats.probe.pause_us.store(
            stats
                .probe
                .pause_us
                .load(std::sync::atomic::Ordering::Relaxed),
            std::sync::atomic::Ordering::Relaxed,
        );
        self.probes().rename(&pending, &id, registry_stats).await;
        if let Err(e) = probes::sync_trap(self, self.probes(), &id).await {
            // A suspending probe without its trap would never stop: out.
            let _ = self.clear_stop(&id).await;
            return Err(ProbeRefusal::Trap(e.to_string()));
        }
        Ok(report)
    }

    /// Clears a stop point or a family; a probe leaves its class first.
    pub async fn clear_stop(&self, id: &str) -> Result<ClearReport, ArmError> {
        let mut left = None;
        if self.probes().is_probe(id).await {
            let removed =
                probes::remove(self.connection(), self.classes(), self.probes(), id, false).await?;
            left = left_alone(removed);
        }
        let mut report = self.stop_points().clear(id).await?;
        if left.is_some() {
            report.note = left;
        }
        Ok(report)
    }

    /// Clears every stop point, probes first.
    pub async fn clear_all_stops(&self) -> usize {
        probes::restore_all(self.connection(), self.classes(), self.probes()).await;
        self.stop_points().clear_all().await
    }

    /// Disables or re-arms (`None` flips). A probe is taken out of its
    /// class when disabled and put back (a fresh helper) when re-armed.
    pub async fn toggle_stop(
        &self,
        id: &str,
        enabled: Option<bool>,
    ) -> Result<ToggleReport, ArmError> {
        let Some(point) = self.probes().point(id).await else {
            return self.stop_points().toggle(id, enabled).await;
        };
        let is_on = point.live.is_some();
        let want = enabled.unwrap_or(!is_on);
        let mut notes = Vec::new();
        if want && !is_on {
            let registry_stats = self
                .stop_points()
                .stats(id)
                .await
                .ok_or_else(|| ArmError::UnknownStopPoint { id: id.to_string() })?;
            let installed =
                probes::install(self, self.probes(), id, &point.spec, registry_stats).await?;
            notes.push(ArmNote::ProbeArmed {
                pause_us: installed.pause.as_micros() as u64,
                suspends: suspends(&point.spec),
            });
            self.stop_points().mark(id, StopState::Armed).await;
            probes::sync_trap(self, self.probes(), id).await?;
        } else if !want && is_on {
            let removed =
                probes::remove(self.connection(), self.classes(), self.probes(), id, true).await?;
            notes.extend(left_alone(removed));
            self.stop_points().mark(id, StopState::Disabled).await;
            probes::sync_trap(self, self.probes(), id).await?;
        }
        let point = self.stop_points().view(id).await;
        Ok(ToggleReport {
            id: id.to_string(),
            enabled: want,
            notes,
            point,
        })
    }
}

impl SessionHandle {
    /// Changes a stop point's definition in place. A probe is taken out
    /// and put back from the new definition (the old one again when the
    /// new one cannot go in, and the error says why).
    pub async fn update_stop(&self, id: &str, spec: StopPointSpec) -> Result<ArmReport, ArmError> {
        let Some(point) = self.probes().point(id).await else {
            return self.stop_points().update(id, spec).await;
        };
        let stats = self
            .stop_points()
            .stats(id)
            .await
            .ok_or_else(|| ArmError::UnknownStopPoint { id: id.to_string() })?;
        let spent = self
            .stop_points()
            .view(id)
            .await
            .is_some_and(|p| matches!(p.state, StopState::Spent(_)));
        // Like the wire's update: a spent one starts again with a fresh
        // budget; a disabled one stays disabled.
        let was_on = point.live.is_some();
        let rearm = was_on || spent;
        let mut spec = spec;
        spec.engine = point.spec.engine;
        let mut left = None;
        if was_on {
            let removed =
                probes::remove(self.connection(), self.classes(), self.probes(), id, true).await?;
            left = left_alone(removed);
        }
        let fits = probe_site(&spec);
        let installed = match fits {
            Ok(_) if rearm => probes::install(self, self.probes(), id, &spec, stats.clone())
                .await
                .map(Some),
            Ok(_) => Ok(None),
            Err(e) => Err(e),
        };
        let mut notes = match installed {
            Ok(done) => {
                self.probes().respec(id, spec.clone()).await;
                done.map(|i| {
                    vec![ArmNote::ProbeArmed {
                        pause_us: i.pause.as_micros() as u64,
                        suspends: suspends(&spec),
                    }]
                })
                .unwrap_or_default()
            }
            Err(why) => {
                if was_on {
                    // Put the old probe back so a refused update loses nothing.
                    let back = probes::install(self, self.probes(), id, &point.spec, stats).await;
                    if back.is_err() {
                        self.stop_points().mark(id, StopState::Disabled).await;
                    }
                }
                return Err(ArmError::Probe(why));
            }
        };
        let state = if rearm {
            StopState::Armed
        } else {
            StopState::Disabled
        };
        notes.extend(left);
        self.stop_points().mark_as(id, state, Some(spec)).await;
        probes::sync_trap(self, self.probes(), id).await?;
        let point = self.stop_points().view(id).await;
        Ok(ArmReport {
            point,
            family: None,
            notes,
        })
    }
}

/// The note for a probe taken out of classes that changed since it went
/// in, which were left as they run.
fn left_alone(removed: probes::Removed) -> Option<ArmNote> {
    (!removed.left_alone.is_empty()).then(|| ArmNote::LeftAlone {
        class: removed.left_alone.join(", "),
    })
}

/// A suspending stop point with no condition on a line or an entry: it
/// stops at the first hit, so a probe would only add a redefinition; the
/// wire's breakpoint serves it (`auto`). With a condition, only passing
/// hits should reach the wire; at an exit or a field write, the wire would
/// run every thread interpreted: a probe serves those.
fn wire_suits(spec: &StopPointSpec) -> bool {
    suspends(spec) && spec.filters.condition.is_none() && !interprets(&spec.target)
}

fn suspends(spec: &StopPointSpec) -> bool {
    matches!(spec.mode, crate::model::stop_point::Mode::Suspend)
}

/// What the wire cannot serve at all: timing a call needs the probe's
/// clock, so `auto` refuses rather than arm a wire stop point that
/// ignores the minimum.
fn only_a_probe_can(target: &Target) -> bool {
    matches!(target, Target::MethodExit(m) if m.min_duration_ms.is_some() || m.stats || m.callees)
}

/// Over the wire, HotSpot runs every thread interpreted while these are
/// armed (JVMTI method-exit and field-watch events).
pub(super) fn interprets(target: &Target) -> bool {
    matches!(target, Target::MethodExit(_) | Target::Field(_))
}
