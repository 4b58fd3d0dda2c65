//! What a diagnosis asks of one session: the JVM's capabilities, and why a
//! stop point has not fired. Each possible cause is checked against the
//! registry's counters and the JVM's own tables (is the class loaded, by
//! which loaders, does the line have code, is the filtered thread alive,
//! is every thread held); the answer is typed data, worded by the MCP
//! layer.

use crate::error::{ArmError, SessionError};
use crate::jdwp::virtual_machine::CapabilitiesNew;
use crate::jdwp::{TaggedTypeId, ThreadId};
use crate::model::SessionState;
use crate::model::stop_point::{StopState, Target, similar_names};
use crate::stop_points::PointView;
use crate::stop_points::arm::plan_copy;

use crate::code::StopStaleness;

use super::SessionHandle;

/// One reason a stop point stays silent, with what shows it.
#[derive(Debug, Clone)]
pub enum Cause {
    /// The JVM did not answer the check of the stop point's class: nothing
    /// is known of it. `error` names the request that timed out.
    Unanswered {
        error: String,
    },
    /// Deferred: no class loader has loaded the class yet; a class-load
    /// watch arms every copy any loader loads. `similar`: loaded names
    /// that look alike (a typo, another package).
    ClassNotLoaded {
        class: String,
        watching: bool,
        similar: Vec<String>,
    },
    /// The class is loaded (by `loaders` loaders) but the line has no code
    /// in it; `nearest` lines do.
    NoCodeAtLine {
        class: String,
        line: u32,
        nearest: Vec<i32>,
        loaders: usize,
    },
    /// The loaded class refused the definition for another reason.
    NotArmable {
        class: String,
        reason: ArmError,
    },
    /// The condition was evaluated and never held.
    ConditionNeverTrue {
        condition: String,
        evaluated: u64,
        passed: u64,
        /// Operands as last read on a false evaluation.
        operands: crate::stop_points::routes::Operands,
    },
    /// The condition fails to evaluate (and disabled the stop point after
    /// too many failures in a row, when `stopped`).
    ConditionErrors {
        errors: u64,
        last: Option<String>,
        stopped: bool,
    },
    /// Only this thread's hits are reported (filtered in the JVM, so
    /// others are not even counted).
    ThreadFilter {
        thread: u64,
        name: Option<String>,
        alive: bool,
    },
    /// Only hits on this object are reported.
    InstanceFilter {
        object: u64,
        collected: bool,
    },
    /// `hit_count` not reached yet (`counted` is `None` when the JVM
    /// counts, which it does not report).
    HitCountPending {
        target: u32,
        counted: Option<u64>,
    },
    Disabled,
    /// Paused by the overhead guard: its holds took more of the
    /// application's thread time than its budget allows.
    PausedByBudget(crate::model::overhead::Overspent),
    /// Disabled by the watchdog because its hits froze the JVM.
    DisabledByWatchdog,
    Spent(String),
    /// Every thread is suspended: no thread can run to it.
    VmHeld {
        held: usize,
        total: usize,
    },
    /// The loaded class differs from its build under the class roots
    /// (`check_stale`): the line may now be another statement.
    StaleBytecode(StopStaleness),
}

/// The answer to "why did this stop point not fire?".
#[derive(Debug, Clone)]
pub struct StopPointDiagnosis {
    pub point: PointView,
    /// Every cause found, the blocking ones first; empty when nothing
    /// stands in the way (it is armed and waits for a thread to pass).
    pub causes: Vec<Cause>,
}

/// The JVM's optional capabilities, by their JDWP names.
pub type Capabilities = Vec<(&'static str, bool)>;

impl SessionHandle {
    /// `VirtualMachine.CapabilitiesNew`, as (name, offered) pairs.
    pub async fn capabilities(&self) -> Result<Capabilities, SessionError> {
        let c = self
            .connection()
            .send(&CapabilitiesNew)
            .await
            .map_err(|e| self.map_err(e))?;
        Ok(vec![
            ("canWatchFieldModification", c.can_watch_field_modification),
            ("canWatchFieldAccess", c.can_watch_field_access),
            ("canGetBytecodes", c.can_get_bytecodes),
            ("canGetOwnedMonitorInfo", c.can_get_owned_monitor_info),
            ("canGetMonitorInfo", c.can_get_monitor_info),
            ("canRedefineClasses", c.can_redefine_classes),
            ("canPopFrames", c.can_pop_frames),
            ("canUseInstanceFilters", c.can_use_instance_filters),
            ("canRequestMonitorEvents", c.can_request_monitor_events),
            ("canGetInstanceInfo", c.can_get_instance_info),
            ("canForceEarlyReturn", c.can_force_early_return),
        ])
    }

    /// Checks every reason stop point `id` may stay silent.
    pub async fn diagnose_stop_point(&self, id: &str) -> Result<StopPointDiagnosis, SessionError> {
        self.check_alive()?;
        let listing = self.stop_points().list().await;
        let Some(point) = listing.points.into_iter().find(|p| p.id == id) else {
            return Err(ArmError::UnknownStopPoint { id: id.to_string() }.into());
        };
        let mut causes = Vec::new();
        match &point.state {
            StopState::Disabled
                if self
                    .rescues()
                    .all
                    .iter()
                    .any(|r| r.disabled.iter().any(|d| d == id)) =>
            {
                causes.push(Cause::DisabledByWatchdog)
            }
            StopState::Disabled if point.paused.is_some() => {
                causes.extend(point.paused.map(Cause::PausedByBudget))
            }
            StopState::Disabled if !point.stopped_by_errors => causes.push(Cause::Disabled),
            StopState::Spent(reason) => causes.push(Cause::Spent(reason.clone())),
            _ => {}
        }
        if point.locations == 0 {
            causes.extend(self.unarmed_class(&point).await);
        }
        causes.extend(self.stale_bytecode(&point).await);
        causes.extend(condition_causes(&point));
        if let Some(thread) = point.spec.filters.thread {
            let threads = self.threads().await.unwrap_or_default();
            let found = threads.iter().find(|t| t.id == ThreadId(thread));
            causes.push(Cause::ThreadFilter {
                thread,
                name: found.map(|t| t.name.clone()),
                alive: found.is_some(),
            });
        }
        if let Some(object) = point.spec.filters.instance {
            causes.push(Cause::InstanceFilter {
                object,
                collected: point.instance_collected,
            });
        }
        if let Some(target) = point.spec.filters.hit_count
            && !matches!(point.state, StopState::Spent(_))
        {
            let counted = match point.count_mode {
                Some(crate::stop_points::CountMode::Jvm(_)) => None,
                _ => Some(point.counted),
            };
            causes.push(Cause::HitCountPending { target, counted });
        }
        if let SessionState::Suspended { held, total } = self.state().await
            && held == total
            && total > 0
        {
            causes.push(Cause::VmHeld { held, total });
        }
        Ok(StopPointDiagnosis { point, causes })
    }

    /// Why a stop point with no location is not armed: its class is not
    /// loaded, or the loaded class refuses it (a line without code).
    async fn unarmed_class(&self, point: &PointView) -> Vec<Cause> {
        let Some(class) = point.spec.target.class_name().map(str::to_string) else {
            return Vec::new();
        };
        let copies = match self.classes().by_name(&class).await {
            Ok(copies) => copies,
            // A timeout or a lost connection is not "not loaded".
            Err(e) => {
                return vec![Cause::Unanswered {
                    error: e.to_string(),
                }];
            }
        };
        if copies.is_empty() {
            let loaded = self.loaded_classes().await.unwrap_or_default();
            let similar = similar_names(&class, loaded.iter().map(|c| c.name.as_str()));
            return vec![Cause::ClassNotLoaded {
                class,
                watching: point.watching,
                similar,
            }];
        }
        let loaders = copies.len();
        for copy in &copies {
            let tagged = TaggedTypeId {
                tag: copy.tag,
                id: copy.id,
            };
            match plan_copy(self.classes(), &point.spec, tagged).await {
                Ok(_) => {}
                Err(ArmError::NoCodeAtLine { line, nearest, .. }) => {
                    return vec![Cause::NoCodeAtLine {
                        class,
                        line,
                        nearest,
                        loaders,
                    }];
                }
                Err(e) => {
                    return vec![Cause::NotArmable { class, reason: e }];
                }
            }
        }
        Vec::new()
    }

    /// A line stop on a loaded class whose line tables or structure
    /// differ from its build under the session's class roots.
    async fn stale_bytecode(&self, point: &PointView) -> Option<Cause> {
        let Target::Line(line) = &point.spec.target else {
            return None;
        };
        if point.locations == 0 || line.class.contains('*') {
            return None;
        }
        match self.line_stop_staleness(&line.class).await {
            s @ StopStaleness::Checked { .. } if !is_clean(&s) => Some(Cause::StaleBytecode(s)),
            _ => None,
        }
    }
}

fn is_clean(s: &StopStaleness) -> bool {
    match s {
        StopStaleness::Checked { comparison, .. } => comparison.clean(),
        _ => true,
    }
}

/// What the condition's counters say.
fn condition_causes(point: &PointView) -> Vec<Cause> {
    let Some(condition) = &point.spec.filters.condition else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let evaluated = point.condition_false + point.condition_passed;
    if point.condition_passed == 0 && point.condition_false > 0 {
        out.push(Cause::ConditionNeverTrue {
            condition: condition.clone(),
            evaluated,
            passed: 0,
            operands: point.last_operands.clone(),
        });
    }
    if point.condition_errors > 0 {
        out.push(Cause::ConditionErrors {
            errors: point.condition_errors,
            last: point.last_error.clone(),
            stopped: point.stopped_by_errors,
        });
    }
    out
}
