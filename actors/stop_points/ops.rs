//! The registry's operations that talk to the JVM: arming a definition
//! (now, deferred, or as a wildcard family), arming class copies as they
//! load, clearing, toggling, replacing a definition, finishing a stop point
//! that spent itself. Each operation opens an arming window around its
//! `Set`s and publishes the routing table before closing it.

use std::sync::Arc;

use crate::connection::ConnectionHandle;
use crate::jdwp::{ErrorCode, EventKind, Location, Modifier, SuspendPolicy, TaggedTypeId};
use crate::jvm::classes::ClassCache;
use crate::model::stop_point::{ArmNote, FamilyId, MonitorKind, StopPointSpec, StopState, Target};

use super::arm::{
    ArmError, CopyPlan, Planned, check_instance, check_thread, clear_all, filter_modifiers,
    plan_copy, plan_pattern, set_all, similar_loaded, watch_class,
};
use super::registry::{Copy, CountMode, Family, Held, Point, Registry, WatchState};
use super::routes::{RequestKey, RouteTable};
use super::{ArmReport, ClearReport, ToggleReport};

mod family;
mod view;

/// What the operations need from the session.
pub struct Io {
    pub conn: ConnectionHandle,
    pub classes: Arc<ClassCache>,
    pub table: Arc<RouteTable>,
    pub guard: Arc<super::Guard>,
}

/// The registry and its I/O: the StopPoints actor's state.
pub struct Book {
    pub reg: Registry,
    pub io: Io,
    /// Method exits carry return values (JDWP 1.6+); learnt on first use.
    return_values: bool,
}

impl Book {
    pub fn new(io: Io) -> Self {
        Self {
            reg: Registry::default(),
            io,
            return_values: true,
        }
    }

    fn publish(&self) {
        self.io.table.store(self.reg.routes());
    }

    /// Takes a stop point's requests out of force and clears them at the
    /// JVM; returns how many were sent.
    async fn disarm(&mut self, id: &str) -> usize {
        let keys = self.reg.strip(id);
        self.publish();
        clear_all(&self.io.conn, &keys).await;
        keys.len()
    }

    /// Checks the filters name a live thread and object.
    async fn validate(&self, spec: &StopPointSpec) -> Result<(), ArmError> {
        if let Some(t) = spec.filters.thread {
            check_thread(&self.io.conn, t).await?;
        }
        if let Some(i) = spec.filters.instance {
            check_instance(&self.io.conn, i).await?;
        }
        Ok(())
    }

    /// Arms a new stop point (or a family, for a line class with `*`).
    pub async fn arm(
        &mut self,
        spec: StopPointSpec,
        max_classes: usize,
    ) -> Result<ArmReport, ArmError> {
        self.validate(&spec).await?;
        if let Target::Line(l) = &spec.target
            && l.class.contains('*')
        {
            return self.arm_family(spec, max_classes).await;
        }
        let kind = spec.target.kind();
        let id = self.reg.allocate(kind);
        self.reg.insert(Point::new(id.clone(), spec, None));
        match self.arm_point(&id.0).await {
            Ok(notes) => Ok(ArmReport {
                point: self.view(&id.0),
                family: None,
                notes,
            }),
            Err(e) => {
                self.disarm(&id.0).await;
                self.reg.remove(&id.0);
                self.publish();
                Err(e)
            }
        }
    }

    /// Registers a stop point a probe serves: armed, holding no request.
    pub fn adopt(
        &mut self,
        spec: StopPointSpec,
        notes: Vec<ArmNote>,
    ) -> (ArmReport, Arc<super::routes::Stats>) {
        let id = self.reg.allocate(spec.target.kind());
        let mut point = Point::new(id.clone(), spec, None);
        point.state = StopState::Armed;
        point.probe = true;
        let stats = point.stats.clone();
        self.reg.insert(point);
        (
            ArmReport {
                point: self.view(&id.0),
                family: None,
                notes,
            },
            stats,
        )
    }

    /// Sets a probe-served stop point's state (and definition, after an
    /// update); false when there is none.
    pub fn mark(&mut self, id: &str, state: StopState, spec: Option<StopPointSpec>) -> bool {
        match self.reg.point_mut(id) {
            Some(p) if p.probe => {
                if state == StopState::Armed && p.state != StopState::Armed {
                    // Re-armed: the guard watches it afresh.
                    p.stats.restart_guard();
                }
                p.state = state;
                if let Some(spec) = spec {
                    p.spec = Arc::new(spec);
                }
                true
            }
            _ => false,
        }
    }

    /// Hands a wire stop point (paused, its requests cleared) to the probe
    /// the session put in for it: armed, holding no request, its guard
    /// restarted, its counters kept. False when it is gone or still holds
    /// requests.
    pub fn become_probe(&mut self, id: &str, note: ArmNote) -> bool {
        let Some(p) = self.reg.point_mut(id) else {
            return false;
        };
        if !p.requests.is_empty() || p.watch.is_some() || p.family.is_some() {
            return false;
        }
        p.probe = true;
        p.state = StopState::Armed;
        p.stats.restart_guard();
        p.note(note);
        true
    }

    /// Points a suspending probe's stop point at its trap: the breakpoint
    /// in the probe helper's trap method (held at EVENT_THREAD, routed as
    /// a trap), or none (the probe went out). An earlier trap is cleared.
    pub async fn trap(&mut self, id: &str, at: Option<Location>) -> Result<(), ArmError> {
        let Some(p) = self.reg.point_mut(id) else {
            return Err(unknown(id));
        };
        if !p.probe {
            return Err(ArmError::Internal("a trap on a stop point no probe serves"));
        }
        p.set_trap(at.is_some());
        let window = self.io.table.arming();
        let old = self.reg.strip(id);
        self.publish();
        clear_all(&self.io.conn, &old).await;
        let Some(location) = at else {
            return Ok(());
        };
        let planned = Planned {
            kind: EventKind::Breakpoint,
            modifiers: vec![Modifier::LocationOnly { location }],
            location: Some(location),
        };
        let keys = set_all(
            &self.io.conn,
            std::slice::from_ref(&planned),
            SuspendPolicy::EventThread,
            &[],
        )
        .await?;
        let held = keys
            .into_iter()
            .map(|key| Held {
                key,
                class: Some(location.class),
                jvm_count: false,
            })
            .collect();
        self.reg.add_requests(id, held);
        self.publish();
        drop(window);
        Ok(())
    }

    /// Arms a registered stop point from its definition (a new one, or a
    /// re-arm after toggle or update); returns notes for the reply.
    async fn arm_point(&mut self, id: &str) -> Result<Vec<ArmNote>, ArmError> {
        let Some(p) = self.reg.point(id) else {
            return Err(unknown(id));
        };
        let spec = p.spec.clone();
        let watch = p.family.is_none();
        p.stats.reset_budget();
        p.stats.restart_guard();
        match &spec.target {
            Target::Line(_) | Target::Field(_) => self.arm_by_class(id, spec, watch).await,
            Target::Exception(e) if e.class.is_some() => self.arm_by_class(id, spec, watch).await,
            Target::Exception(_) | Target::MethodExit(_) | Target::Monitor(_) => {
                self.arm_pattern(id, spec).await
            }
        }
    }

    /// Arms a stop point on every loaded copy of its class, with a watch
    /// for copies that load later (unless a family watches for it).
    async fn arm_by_class(
        &mut self,
        id: &str,
        spec: Arc<StopPointSpec>,
        watch: bool,
    ) -> Result<Vec<ArmNote>, ArmError> {
        let name = spec.target.class_name().unwrap_or_default().to_string();
        let window = self.io.table.arming();
        let mut notes = Vec::new();
        // The watch goes first: a copy loading between the lookup and the
        // watch would otherwise be missed. It holds the loading thread
        // (EVENT_THREAD) until the new copy is armed, so code that runs
        // right after loading cannot slip past the stop point.
        if watch {
            let key = watch_class(&self.io.conn, &name, SuspendPolicy::EventThread).await?;
            self.reg.set_watch(id, key);
        }
        let copies = match self.io.classes.by_name(&name).await {
            Ok(c) => c,
            Err(e) => {
                self.disarm(id).await;
                return Err(e.into());
            }
        };
        if copies.is_empty() {
            if spec.filters.instance.is_some() {
                self.disarm(id).await;
                return Err(ArmError::InstanceOnUnloaded { class: name });
            }
            if let Some(p) = self.reg.point_mut(id) {
                p.state = StopState::Deferred;
            }
            self.publish();
            drop(window);
            let similar = similar_loaded(&self.io.conn, &name).await;
            notes.push(ArmNote::Deferred {
                class: name.clone(),
            });
            if similar.is_empty() {
                notes.push(ArmNote::NoSimilarClass);
            } else {
                notes.push(ArmNote::SimilarLoaded { names: similar });
            }
            return Ok(notes);
        }
        let mut plans = Vec::new();
        let mut refusals = Vec::new();
        for c in &copies {
            let class = TaggedTypeId {
                tag: c.tag,
                id: c.id,
            };
            match plan_copy(&self.io.classes, &spec, class).await {
                Ok(p) => plans.push(p),
                Err(e) => refusals.push(e),
            }
        }
        if plans.is_empty() {
            self.disarm(id).await;
            return Err(refusals
                .into_iter()
                .next()
                .unwrap_or(ArmError::Internal("nothing to arm")));
        }
        if let Some(e) = instance_refusal(&spec, &plans) {
            self.disarm(id).await;
            return Err(e);
        }
        for r in &refusals {
            notes.push(ArmNote::CopyRefused {
                class: name.clone(),
                why: r.to_string(),
            });
        }
        let total: usize = plans.iter().map(|p| p.requests.len()).sum();
        self.decide_count(id, &spec, total);
        let mut set_any = false;
        for plan in plans {
            match self.install(id, plan, false).await {
                Ok(()) => set_any = true,
                Err(e) if e.is_gone() => return Err(e),
                Err(e) => notes.push(ArmNote::CopyNotArmed { why: e.to_string() }),
            }
        }
        if !set_any {
            self.disarm(id).await;
            let reasons = notes
                .iter()
                .filter_map(|n| match n {
                    ArmNote::CopyRefused { why, .. } | ArmNote::CopyNotArmed { why } => {
                        Some(why.clone())
                    }
                    _ => None,
                })
                .collect();
            return Err(ArmError::AllRefused {
                class: name,
                reasons,
            });
        }
        if let Some(p) = self.reg.point_mut(id) {
            p.state = StopState::Armed;
        }
        self.publish();
        drop(window);
        notes.extend(self.overrides(id));
        Ok(notes)
    }

    /// Decides how a hit count is enforced, once per stop point: by the JVM
    /// when one request carries it, here when several share it.
    fn decide_count(&mut self, id: &str, spec: &Arc<StopPointSpec>, requests: usize) {
        let Some(p) = self.reg.point(id) else {
            return;
        };
        let mode = match (p.count_mode, spec.filters.hit_count) {
            (Some(m), _) => Some(m),
            (None, Some(n)) if requests <= 1 => Some(CountMode::Jvm(n)),
            (None, Some(n)) => Some(CountMode::Here(n)),
            (None, None) => None,
        };
        let here = match mode {
            Some(CountMode::Here(n)) => Some(n),
            _ => None,
        };
        if let Some(p) = self.reg.point_mut(id) {
            p.count_mode = mode;
        }
        self.reg.retarget(id, spec.clone(), here);
    }

    /// Sets the requests of one class copy and records them.
    async fn install(&mut self, id: &str, plan: CopyPlan, later: bool) -> Result<(), ArmError> {
        let Some(p) = self.reg.point(id) else {
            return Err(unknown(id));
        };
        let spec = p.spec.clone();
        let jvm_count = match p.count_mode {
            Some(CountMode::Jvm(n)) => Some(n),
            _ => None,
        };
        let policy = spec.policy(p.count_here.is_some());
        let extra = filter_modifiers(&spec.filters, jvm_count);
        let keys = set_all(&self.io.conn, &plan.requests, policy, &extra).await?;
        let loader = self.io.classes.loader(plan.class).await.unwrap_or_default();
        let held = keys
            .into_iter()
            .map(|key| Held {
                key,
                class: Some(plan.class),
                jvm_count: jvm_count.is_some(),
            })
            .collect();
        self.reg.add_requests(id, held);
        if let Some(p) = self.reg.point_mut(id) {
            p.copies.push(Copy {
                class: plan.class,
                loader,
                locations: plan.locations(),
                later,
            });
            p.state = StopState::Armed;
        }
        Ok(())
    }

    /// Arms a stop point the JVM matches by itself: method exits and
    /// monitors (a class pattern or none), and exceptions of any type.
    async fn arm_pattern(
        &mut self,
        id: &str,
        spec: Arc<StopPointSpec>,
    ) -> Result<Vec<ArmNote>, ArmError> {
        let mut notes = Vec::new();
        let monitor_class = match &spec.target {
            Target::Monitor(m) => match &m.monitor_class {
                Some(name) => match self.io.classes.by_name(name).await?.first() {
                    Some(c) => Some(c.id),
                    None => {
                        return Err(ArmError::MonitorClassNotLoaded {
                            class: name.clone(),
                        });
                    }
                },
                None => None,
            },
            _ => None,
        };
        let planned: Vec<(Planned, Option<MonitorKind>)> = match &spec.target {
            Target::Exception(e) => vec![(
                Planned {
                    kind: EventKind::Exception,
                    modifiers: vec![Modifier::ExceptionOnly {
                        exception_or_null: Default::default(),
                        caught: e.caught,
                        uncaught: e.uncaught,
                    }],
                    location: None,
                },
                None,
            )],
            _ => plan_pattern(&spec, self.return_values, monitor_class),
        };
        self.decide_count(id, &spec, planned.len());
        let Some(p) = self.reg.point(id) else {
            return Err(unknown(id));
        };
        let jvm_count = match p.count_mode {
            Some(CountMode::Jvm(n)) => Some(n),
            _ => None,
        };
        let base_policy = spec.policy(p.count_here.is_some());
        let extra = filter_modifiers(&spec.filters, jvm_count);
        let window = self.io.table.arming();
        let mut held = Vec::new();
        for (plan, monitor) in planned {
            // With a minimum duration the opening event of a pair is pure
            // timestamping: nothing is read, so nothing is held.
            let policy = match (&spec.target, monitor) {
                (Target::Monitor(m), Some(k)) if k.is_opening() && m.min_duration_ms.is_some() => {
                    SuspendPolicy::None
                }
                _ => base_policy,
            };
            let mut result =
                set_all(&self.io.conn, std::slice::from_ref(&plan), policy, &extra).await;
            if let Err(e) = &result
                && plan.kind == EventKind::MethodExitWithReturnValue
                && matches!(
                    e.code(),
                    Some(ErrorCode::INVALID_EVENT_TYPE) | Some(ErrorCode::NOT_IMPLEMENTED)
                )
            {
                self.return_values = false;
                notes.push(ArmNote::NoReturnValues);
                let plain = Planned {
                    kind: EventKind::MethodExit,
                    ..plan.clone()
                };
                result = set_all(&self.io.conn, std::slice::from_ref(&plain), policy, &extra).await;
            }
            match result {
                Ok(keys) => held.extend(keys.into_iter().map(|key| Held {
                    key,
                    class: None,
                    jvm_count: jvm_count.is_some(),
                })),
                Err(e) => {
                    let keys: Vec<RequestKey> = held.iter().map(|h: &Held| h.key).collect();
                    self.reg.retire(&keys);
                    self.publish();
                    clear_all(&self.io.conn, &keys).await;
                    return Err(if e.code() == Some(ErrorCode::NOT_IMPLEMENTED) {
                        ArmError::NotSupported {
                            kind: plan.kind,
                            source: e,
                        }
                    } else {
                        ArmError::from(e)
                    });
                }
            }
        }
        self.reg.add_requests(id, held);
        if let Some(p) = self.reg.point_mut(id) {
            p.state = StopState::Armed;
        }
        self.publish();
        drop(window);
        Ok(notes)
    }
    /// Clears a stop point or a family.
    pub async fn clear(&mut self, id: &str) -> Result<ClearReport, ArmError> {
        if let Some(f) = self.reg.family(id) {
            let members = f.members.len();
            let Some((_, keys)) = self.reg.remove_family(id) else {
                return Err(unknown(id));
            };
            self.publish();
            clear_all(&self.io.conn, &keys).await;
            return Ok(ClearReport {
                id: id.to_string(),
                requests_cleared: keys.len(),
                members,
                note: None,
            });
        }
        let Some((point, keys)) = self.reg.remove(id) else {
            return Err(unknown(id));
        };
        self.publish();
        clear_all(&self.io.conn, &keys).await;
        let mut note = match &point.state {
            StopState::Spent(_) if keys.is_empty() => Some(ArmNote::WasSpent),
            _ => None,
        };
        if let Some(fid) = &point.family
            && self
                .reg
                .family(&fid.0)
                .is_some_and(|f| f.watch_state == WatchState::Parked && !f.is_full())
        {
            let window = self.io.table.arming();
            let mut notes = Vec::new();
            self.family_watch(fid, &mut notes).await;
            self.publish();
            drop(window);
            note = Some(ArmNote::SlotFreed {
                family: fid.0.clone(),
            });
        }
        Ok(ClearReport {
            id: id.to_string(),
            requests_cleared: keys.len(),
            members: 0,
            note,
        })
    }

    /// Disables or re-arms a stop point or a family; `None` flips.
    pub async fn toggle(
        &mut self,
        id: &str,
        enabled: Option<bool>,
    ) -> Result<ToggleReport, ArmError> {
        if let Some(f) = self.reg.family(id) {
            let is_on = f.watch_state != WatchState::Disabled;
            let want = enabled.unwrap_or(!is_on);
            let members = f.members.clone();
            let mut notes = Vec::new();
            if want {
                for m in &members {
                    if let Some(p) = self.reg.point_mut(&m.0) {
                        p.state = StopState::Deferred;
                    }
                    if let Err(e) = self.arm_point(&m.0).await {
                        notes.push(ArmNote::MemberNotArmed {
                            member: m.0.clone(),
                            why: e.to_string(),
                        });
                    }
                }
                if self.reg.family(id).is_some_and(Family::is_full) {
                    if let Some(f) = self.reg.family_mut(id) {
                        f.watch_state = WatchState::Parked;
                    }
                    notes.push(ArmNote::FamilyFull);
                } else {
                    let window = self.io.table.arming();
                    let fid = FamilyId(id.to_string());
                    self.family_watch(&fid, &mut notes).await;
                    self.publish();
                    drop(window);
                }
            } else {
                for m in &members {
                    self.disarm(&m.0).await;
                    if let Some(p) = self.reg.point_mut(&m.0) {
                        p.state = StopState::Disabled;
                    }
                }
                if let Some(old) = self.reg.set_family_watch(id, None, WatchState::Disabled) {
                    self.publish();
                    clear_all(&self.io.conn, &[old]).await;
                }
            }
            return Ok(ToggleReport {
                id: id.to_string(),
                enabled: want,
                notes,
                point: None,
            });
        }
        let Some(p) = self.reg.point(id) else {
            return Err(unknown(id));
        };
        let is_on = !matches!(p.state, StopState::Disabled | StopState::Spent(_));
        let want = enabled.unwrap_or(!is_on);
        let mut notes = Vec::new();
        if want && !is_on {
            // A filter's object may have been collected while nothing held it.
            let spec = p.spec.clone();
            self.validate(&spec).await?;
            if let Some(p) = self.reg.point_mut(id) {
                p.state = StopState::Deferred;
            }
            match self.arm_point(id).await {
                Ok(n) => notes = n,
                Err(e) => {
                    self.disarm(id).await;
                    if let Some(p) = self.reg.point_mut(id) {
                        p.state = StopState::Disabled;
                    }
                    return Err(e);
                }
            }
        } else if !want && is_on {
            self.disarm(id).await;
            if let Some(p) = self.reg.point_mut(id) {
                p.state = StopState::Disabled;
            }
        } else if want {
            notes.push(ArmNote::AlreadyArmed);
        } else {
            notes.push(ArmNote::AlreadyDisabled);
        }
        Ok(ToggleReport {
            id: id.to_string(),
            enabled: want,
            notes,
            point: self.view(id),
        })
    }

    /// Replaces a stop point's definition (same id, counters kept) and
    /// re-arms it unless it is disabled.
    pub async fn update(&mut self, id: &str, spec: StopPointSpec) -> Result<ArmReport, ArmError> {
        self.validate(&spec).await?;
        let Some(p) = self.reg.point(id) else {
            return Err(unknown(id));
        };
        if p.spec.target.kind() != spec.target.kind() {
            return Err(ArmError::UpdateChangesTarget);
        }
        // A stop point the overhead guard paused is re-armed by an update
        // (a raised budget, a cheaper condition); one the agent disabled
        // stays disabled.
        let disabled = p.state == StopState::Disabled && p.stats.paused().is_none();
        self.disarm(id).await;
        self.reg.retarget(id, Arc::new(spec), None);
        // The old definition's condition errors do not speak for the new one.
        if let Some(p) = self.reg.point(id) {
            p.stats.forget_errors();
        }
        if let Some(p) = self.reg.point_mut(id) {
            p.count_mode = None;
            p.state = if disabled {
                StopState::Disabled
            } else {
                StopState::Deferred
            };
        }
        let notes = if disabled {
            vec![ArmNote::AppliesWhenReArmed]
        } else {
            match self.arm_point(id).await {
                Ok(n) => n,
                Err(e) => {
                    self.disarm(id).await;
                    if let Some(p) = self.reg.point_mut(id) {
                        p.state = StopState::Disabled;
                    }
                    return Err(e);
                }
            }
        };
        Ok(ArmReport {
            point: self.view(id),
            family: None,
            notes,
        })
    }

    /// A stop point spent itself (budget used, hit count reached here).
    pub async fn finish(&mut self, id: &str, reason: String) {
        let Some(p) = self.reg.point(id) else {
            return;
        };
        if matches!(p.state, StopState::Disabled | StopState::Spent(_)) {
            return;
        }
        self.disarm(id).await;
        if let Some(p) = self.reg.point_mut(id) {
            p.state = StopState::Spent(reason);
        }
    }

    /// A request with a JDWP `Count` fired; the JVM deleted it.
    pub async fn fired(&mut self, key: RequestKey) {
        let reason = "hit_count reached (the JVM deleted its request)".to_string();
        if let Some((_, rest)) = self.reg.fired(&key, reason) {
            self.publish();
            clear_all(&self.io.conn, &rest).await;
        }
    }

    /// Clears every stop point and family; returns how many stop points.
    pub async fn clear_everything(&mut self) -> usize {
        let n = self.reg.len();
        let keys = self.reg.clear_all();
        self.publish();
        clear_all(&self.io.conn, &keys).await;
        n
    }
}

fn unknown(id: &str) -> ArmError {
    ArmError::UnknownStopPoint { id: id.to_string() }
}

/// Refuses an instance filter where HotSpot would accept and ignore it.
fn instance_refusal(spec: &StopPointSpec, plans: &[CopyPlan]) -> Option<ArmError> {
    spec.filters.instance?;
    if plans.iter().any(|p| p.any_static) {
        return Some(ArmError::InstanceOnStaticMethod);
    }
    if plans.iter().any(|p| p.static_field) {
        return Some(ArmError::InstanceOnStaticField);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::stop_point::{ExceptionSpec, Filters, Mode, TraceSpec};

    #[test]
    fn instance_filters_are_refused_where_hotspot_ignores_them() {
        let spec = StopPointSpec {
            engine: crate::model::stop_point::Engine::Wire,
            target: Target::Exception(ExceptionSpec {
                class: Some("E".into()),
                caught: true,
                uncaught: true,
            }),
            mode: Mode::Trace(TraceSpec::default()),
            filters: Filters {
                instance: Some(5),
                ..Filters::default()
            },
        };
        let plan = |any_static, static_field| CopyPlan {
            class: Default::default(),
            requests: Vec::new(),
            any_static,
            static_field,
        };
        assert!(instance_refusal(&spec, &[plan(false, false)]).is_none());
        let e = instance_refusal(&spec, &[plan(true, false)]).expect("refused");
        assert!(e.to_string().contains("static method"));
        let e = instance_refusal(&spec, &[plan(false, true)]).expect("refused");
        assert!(e.to_string().contains("static field"));
        let unfiltered = StopPointSpec {
            engine: crate::model::stop_point::Engine::Wire,
            filters: Filters::default(),
            ..spec
        };
        assert!(instance_refusal(&unfiltered, &[plan(true, true)]).is_none());
    }
}
