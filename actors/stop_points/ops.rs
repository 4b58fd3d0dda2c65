//! The registry's operations that talk to the JVM: arming a definition
//! (now, deferred, or as a wildcard family), arming class copies as they
//! load, clearing, toggling, replacing a definition, finishing a stop point
//! that spent itself. Each operation opens an arming window around its
//! `Set`s and publishes the routing table before closing it.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use crate::actors::connection::ConnectionHandle;
use crate::actors::session::classes::{ClassCache, java_name};
use crate::jdwp::{ErrorCode, EventKind, Modifier, SuspendPolicy, TaggedTypeId, TypeTag};
use crate::model::stop_point::{
    FamilyId, LineSpec, Mode, MonitorKind, StopKind, StopPointSpec, StopState, Target,
    glob_matches, jdwp_class_pattern,
};

use super::arm::{
    ArmError, CopyPlan, Planned, check_instance, check_thread, classes_matching, clear_all,
    filter_modifiers, plan_copy, plan_pattern, set_all, similar_loaded, watch_class,
};
use super::registry::{Copy, CountMode, Family, Held, Point, Registry, WatchState};
use super::routes::{RequestKey, Route, RouteTable, Stats};
use super::{ArmReport, ClearReport, FamilyView, Listing, PointView, ToggleReport};

/// What the operations need from the session.
pub struct Io {
    pub conn: ConnectionHandle,
    pub classes: Arc<ClassCache>,
    pub table: Arc<RouteTable>,
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

    /// Arms a registered stop point from its definition (a new one, or a
    /// re-arm after toggle or update); returns notes for the reply.
    async fn arm_point(&mut self, id: &str) -> Result<Vec<String>, ArmError> {
        let Some(p) = self.reg.point(id) else {
            return Err(unknown(id));
        };
        let spec = p.spec.clone();
        let watch = p.family.is_none();
        p.stats.reset_budget();
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
    ) -> Result<Vec<String>, ArmError> {
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
                return Err(ArmError::new(
                    "INSTANCE_REFUSED",
                    format!(
                        "{name} is not loaded, so no instance of it exists to filter on and the \
                         kind of method cannot be checked"
                    ),
                )
                .next("arm without instance_id, or after the class has loaded"));
            }
            if let Some(p) = self.reg.point_mut(id) {
                p.state = StopState::Deferred;
            }
            self.publish();
            drop(window);
            let similar = similar_loaded(&self.io.conn, &name).await;
            notes.push(format!(
                "DEFERRED: {name} is not loaded yet; it arms itself when the class loads."
            ));
            if similar.is_empty() {
                notes.push(
                    "No loaded class has a similar name; check the spelling (nested classes are Outer$Inner)."
                        .to_string(),
                );
            } else {
                notes.push(format!(
                    "Loaded classes with a similar name: {} (a misspelt name would wait forever).",
                    similar.join(", ")
                ));
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
                .unwrap_or_else(|| ArmError::new("INTERNAL", "nothing to arm")));
        }
        if let Some(e) = instance_refusal(&spec, &plans) {
            self.disarm(id).await;
            return Err(e);
        }
        for r in &refusals {
            notes.push(format!("one copy of {name} refused: {}", r.message));
        }
        let total: usize = plans.iter().map(|p| p.requests.len()).sum();
        self.decide_count(id, &spec, total);
        let mut set_any = false;
        for plan in plans {
            match self.install(id, plan, false).await {
                Ok(()) => set_any = true,
                Err(e) if e.label == "VM_GONE" => return Err(e),
                Err(e) => notes.push(format!("a copy could not be armed: {}", e.message)),
            }
        }
        if !set_any {
            self.disarm(id).await;
            return Err(ArmError::new(
                "ARM_FAILED",
                format!(
                    "the JVM refused every request for {name}: {}",
                    notes.join("; ")
                ),
            ));
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
    ) -> Result<Vec<String>, ArmError> {
        let mut notes = Vec::new();
        let monitor_class = match &spec.target {
            Target::Monitor(m) => {
                match &m.monitor_class {
                    Some(name) => match self.io.classes.by_name(name).await?.first() {
                        Some(c) => Some(c.id),
                        None => {
                            return Err(ArmError::new(
                            "NOT_LOADED",
                            format!("monitor_class {name} is not loaded (ClassOnly needs a loaded type)"),
                        )
                        .next("arm without monitor_class, or once the class is loaded"));
                        }
                    },
                    None => None,
                }
            }
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
                notes.push("this JVM cannot report return values (JDWP < 1.6): exits only".into());
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
                    let mut err = ArmError::from(e.clone());
                    if e.code() == Some(ErrorCode::NOT_IMPLEMENTED) {
                        err = ArmError::new(
                            "NOT_SUPPORTED",
                            format!("this JVM does not offer {:?} events ({e})", plan.kind),
                        )
                        .next("use debug_thread_dump to see who holds which monitor");
                    }
                    return Err(err);
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

    /// Arms a wildcard line family: one stop point per loaded class the
    /// glob matches (up to `max_classes`), and a watch for later ones.
    async fn arm_family(
        &mut self,
        spec: StopPointSpec,
        max_classes: usize,
    ) -> Result<ArmReport, ArmError> {
        let Target::Line(l) = &spec.target else {
            return Err(ArmError::new("INTERNAL", "families are line stops"));
        };
        let glob = l.class.clone();
        let fid = self.reg.allocate_family();
        self.reg.insert_family(Family {
            id: fid.clone(),
            pattern: glob.clone(),
            template: Arc::new(spec.clone()),
            max_classes: max_classes.max(1),
            members: Vec::new(),
            watch: None,
            watch_state: WatchState::Parked,
            left_out: 0,
            without_method: 0,
            joined_later: 0,
        });
        let window = self.io.table.arming();
        let mut notes = Vec::new();
        self.family_watch(&fid, &mut notes).await;
        let matching = match classes_matching(&self.io.conn, &glob).await {
            Ok(m) => m,
            Err(e) => {
                if let Some((_, keys)) = self.reg.remove_family(&fid.0) {
                    self.publish();
                    clear_all(&self.io.conn, &keys).await;
                }
                return Err(e.into());
            }
        };
        let mut by_name: BTreeMap<String, Vec<TaggedTypeId>> = BTreeMap::new();
        for (name, t) in matching {
            by_name.entry(name).or_default().push(t);
        }
        for (name, copies) in by_name {
            if self.reg.family(&fid.0).is_some_and(Family::is_full) {
                if let Some(f) = self.reg.family_mut(&fid.0) {
                    f.left_out += 1;
                }
                continue;
            }
            if let Err(e) = self.add_member(&fid, &name, &copies, false).await {
                if e.label == "VM_GONE" {
                    return Err(e);
                }
                if let Some(f) = self.reg.family_mut(&fid.0) {
                    f.without_method += 1;
                }
            }
        }
        self.park_if_full(&fid.0).await;
        self.publish();
        drop(window);
        let family = self.family_view(&fid.0);
        if family.as_ref().is_some_and(|f| f.members.is_empty()) {
            notes.push(format!(
                "No loaded class matching {glob} has a method {:?} yet; the family watches for classes that load later.",
                l.method.as_deref().unwrap_or("?")
            ));
        }
        Ok(ArmReport {
            point: None,
            family,
            notes,
        })
    }

    /// (Re-)sets a family's class-load watch.
    async fn family_watch(&mut self, fid: &FamilyId, notes: &mut Vec<String>) {
        let Some(f) = self.reg.family(&fid.0) else {
            return;
        };
        let pattern = jdwp_class_pattern(&f.pattern);
        // A watch on every class load would hold every loading thread;
        // a pattern JDWP cannot narrow is watched without suspending.
        let policy = if pattern == "*" {
            SuspendPolicy::None
        } else {
            SuspendPolicy::EventThread
        };
        match watch_class(&self.io.conn, &pattern, policy).await {
            Ok(key) => {
                self.reg
                    .set_family_watch(&fid.0, Some(key), WatchState::Watching);
            }
            Err(e) => {
                notes.push(format!("the class-load watch was refused: {e}"));
                self.reg
                    .set_family_watch(&fid.0, None, WatchState::Failed(e.to_string()));
            }
        }
    }

    /// Parks a full family's watch: it costs an event per class load and
    /// could only refuse.
    async fn park_if_full(&mut self, fid: &str) {
        if !self
            .reg
            .family(fid)
            .is_some_and(|f| f.is_full() && f.watch.is_some())
        {
            return;
        }
        if let Some(old) = self.reg.set_family_watch(fid, None, WatchState::Parked) {
            self.publish();
            clear_all(&self.io.conn, &[old]).await;
        }
    }

    /// Adds one class (all its copies) to a family.
    async fn add_member(
        &mut self,
        fid: &FamilyId,
        name: &str,
        copies: &[TaggedTypeId],
        later: bool,
    ) -> Result<(), ArmError> {
        let Some(f) = self.reg.family(&fid.0) else {
            return Err(unknown(&fid.0));
        };
        let mut spec = (*f.template).clone();
        if let Target::Line(l) = &mut spec.target {
            *l = LineSpec {
                class: name.to_string(),
                ..l.clone()
            };
        }
        let mut plans = Vec::new();
        let mut first_err = None;
        for c in copies {
            match plan_copy(&self.io.classes, &spec, *c).await {
                Ok(p) => plans.push(p),
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        if plans.is_empty() {
            return Err(first_err.unwrap_or_else(|| ArmError::new("INTERNAL", "no copy")));
        }
        if let Some(e) = instance_refusal(&spec, &plans) {
            return Err(e);
        }
        let id = self.reg.allocate(StopKind::Line);
        self.reg
            .insert(Point::new(id.clone(), spec, Some(fid.clone())));
        if let Some(f) = self.reg.family_mut(&fid.0) {
            f.members.push(id.clone());
            if later {
                f.joined_later += 1;
            }
        }
        let spec = self.reg.point(&id.0).map(|p| p.spec.clone());
        if let Some(spec) = spec {
            let total = plans.iter().map(|p| p.requests.len()).sum();
            self.decide_count(&id.0, &spec, total);
        }
        for plan in plans {
            self.install(&id.0, plan, later).await?;
        }
        Ok(())
    }

    /// Classes that watches wait for were prepared: arms each new copy.
    /// The caller resumes the loading thread afterwards.
    pub async fn class_prepared(&mut self, events: Vec<(RequestKey, TaggedTypeId, String)>) {
        let window = self.io.table.arming();
        for (key, class, signature) in events {
            match self.reg.watcher(&key) {
                Some(Route::Watch { point }) => self.arm_copy(&point.0, class).await,
                Some(Route::FamilyWatch { family }) => {
                    self.family_class(&family, class, &java_name(&signature))
                        .await
                }
                _ => {}
            }
        }
        self.publish();
        drop(window);
    }

    async fn arm_copy(&mut self, id: &str, class: TaggedTypeId) {
        let Some(p) = self.reg.point(id) else {
            return;
        };
        if matches!(p.state, StopState::Disabled | StopState::Spent(_))
            || p.copies.iter().any(|c| c.class == class.id)
        {
            return;
        }
        let spec = p.spec.clone();
        let plan = match plan_copy(&self.io.classes, &spec, class).await {
            Ok(plan) => plan,
            Err(e) => {
                if let Some(p) = self.reg.point_mut(id) {
                    p.note(format!("a copy loaded later was not armed: {}", e.message));
                }
                return;
            }
        };
        if let Some(e) = instance_refusal(&spec, std::slice::from_ref(&plan)) {
            if let Some(p) = self.reg.point_mut(id) {
                p.note(e.message);
            }
            return;
        }
        let first = self.reg.point(id).is_some_and(|p| p.count_mode.is_none());
        if first {
            let n = plan.requests.len();
            self.decide_count(id, &spec, n);
        }
        // Every copy a watch reports was loaded after the arm reply.
        if let Err(e) = self.install(id, plan, true).await
            && let Some(p) = self.reg.point_mut(id)
        {
            p.note(format!("a copy loaded later was not armed: {}", e.message));
        }
    }

    async fn family_class(&mut self, fid: &FamilyId, class: TaggedTypeId, name: &str) {
        let Some(f) = self.reg.family(&fid.0) else {
            return;
        };
        if !glob_matches(&f.pattern, name)
            || super::arm::is_lambda_form(name)
            || f.watch_state != WatchState::Watching
        {
            return;
        }
        if let Some(member) = self.reg.member_for(&fid.0, name) {
            self.arm_copy(&member.0, class).await;
            return;
        }
        if f.is_full() {
            if let Some(f) = self.reg.family_mut(&fid.0) {
                f.left_out += 1;
            }
        } else if self.add_member(fid, name, &[class], true).await.is_err()
            && let Some(f) = self.reg.family_mut(&fid.0)
        {
            f.without_method += 1;
        }
        self.park_if_full(&fid.0).await;
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
            StopState::Spent(_) if keys.is_empty() => Some(
                "it was spent: the JVM had already deleted its request, so nothing was sent".into(),
            ),
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
            note = Some(format!(
                "a slot of {fid} freed: it watches for new matching classes again"
            ));
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
                        notes.push(format!("{m}: {}", e.message));
                    }
                }
                if self.reg.family(id).is_some_and(Family::is_full) {
                    if let Some(f) = self.reg.family_mut(id) {
                        f.watch_state = WatchState::Parked;
                    }
                    notes.push("the family is full, so its class-load watch stays parked".into());
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
            notes.push("it was already armed".into());
        } else {
            notes.push("it was already disabled".into());
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
            return Err(ArmError::new(
                "BAD_ARGUMENT",
                "an update cannot change what a stop point watches",
            ));
        }
        let disabled = p.state == StopState::Disabled;
        self.disarm(id).await;
        self.reg.retarget(id, Arc::new(spec), None);
        if let Some(p) = self.reg.point_mut(id) {
            p.count_mode = None;
            p.state = if disabled {
                StopState::Disabled
            } else {
                StopState::Deferred
            };
        }
        let notes = if disabled {
            vec!["it is disabled; the new definition applies when it is re-armed".into()]
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

    /// Notes about suspend policies that override traces at the same
    /// locations as `id`.
    fn overrides(&self, id: &str) -> Vec<String> {
        let Some(me) = self.reg.point(id) else {
            return Vec::new();
        };
        let mine_suspends = suspends_all(me);
        let mut out = Vec::new();
        for other in self.reg.points() {
            if other.id == me.id || other.state != StopState::Armed {
                continue;
            }
            let shared = me
                .copies
                .iter()
                .flat_map(|c| c.locations.iter())
                .any(|l| other.at(l));
            if !shared {
                continue;
            }
            if mine_suspends && other.spec.trace().is_some() {
                out.push(format!(
                    "OVERRIDE: {} traces this location; a composite carries one suspend policy, so \
                     its hits now suspend the whole VM too (until {} is cleared).",
                    other.id, me.id
                ));
            } else if me.spec.trace().is_some() && suspends_all(other) {
                out.push(format!(
                    "OVERRIDE: {} suspends the VM at this location, so hits of this trace will \
                     suspend the VM too, not just snapshot.",
                    other.id
                ));
            }
        }
        out
    }

    /// The listing.
    pub fn listing(&self) -> Listing {
        Listing {
            points: self
                .reg
                .ids()
                .iter()
                .filter_map(|id| self.view(&id.0))
                .collect(),
            families: self
                .reg
                .family_ids()
                .iter()
                .filter_map(|f| self.family_view(&f.0))
                .collect(),
        }
    }

    /// One stop point as listings show it.
    pub fn view(&self, id: &str) -> Option<PointView> {
        let p = self.reg.point(id)?;
        let now = Instant::now();
        let overridden_by: Vec<String> = if p.spec.trace().is_some() && p.state == StopState::Armed
        {
            self.reg
                .points()
                .filter(|o| o.id != p.id && o.state == StopState::Armed && suspends_all(o))
                .filter(|o| {
                    p.copies
                        .iter()
                        .flat_map(|c| c.locations.iter())
                        .any(|l| o.at(l))
                })
                .map(|o| o.id.0.clone())
                .collect()
        } else {
            Vec::new()
        };
        let mut loaders: Vec<_> = p.copies.iter().map(|c| c.loader).collect();
        loaders.sort();
        loaders.dedup();
        Some(PointView {
            id: p.id.0.clone(),
            kind: p.spec.target.kind(),
            target: p.spec.target.describe(),
            spec: (*p.spec).clone(),
            state: p.state.clone(),
            policy: p.spec.policy(p.count_here.is_some()),
            count_mode: p.count_mode,
            hits: Stats::get(&p.stats.hits),
            captured: Stats::get(&p.stats.captured),
            charged: Stats::get(&p.stats.charged),
            over_budget: Stats::get(&p.stats.over_budget),
            discarded: Stats::get(&p.stats.discarded),
            below_threshold: Stats::get(&p.stats.below_threshold),
            overridden_hits: Stats::get(&p.stats.overridden),
            condition_errors: Stats::get(&p.stats.condition_errors),
            condition_false: Stats::get(&p.stats.condition_false),
            counted: Stats::get(&p.stats.counted),
            shed: Stats::get(&p.stats.shed),
            last_error: p.stats.last_error(),
            cost: p.stats.cost(now),
            locations: p.locations(),
            copies: p.copies.len(),
            loaders: loaders.len(),
            loader_ids: loaders.iter().map(|l| l.0).collect(),
            later: p.copies.iter().filter(|c| c.later).count(),
            watching: p.watch.is_some(),
            family: p.family.as_ref().map(|f| f.0.clone()),
            overridden_by,
            notes: p.notes.clone(),
        })
    }

    pub fn family_view(&self, id: &str) -> Option<FamilyView> {
        let f = self.reg.family(id)?;
        Some(FamilyView {
            id: f.id.0.clone(),
            pattern: f.pattern.clone(),
            method: match &f.template.target {
                Target::Line(l) => l.method.clone(),
                _ => None,
            },
            members: f
                .members
                .iter()
                .map(|m| {
                    let class = self
                        .reg
                        .point(&m.0)
                        .and_then(|p| p.spec.target.class_name().map(String::from))
                        .unwrap_or_default();
                    (m.0.clone(), class)
                })
                .collect(),
            max_classes: f.max_classes,
            watch: f.watch_state.clone(),
            left_out: f.left_out,
            without_method: f.without_method,
            joined_later: f.joined_later,
        })
    }

    /// The definition of a stop point.
    pub fn spec(&self, id: &str) -> Option<StopPointSpec> {
        self.reg.point(id).map(|p| (*p.spec).clone())
    }
}

fn suspends_all(p: &Point) -> bool {
    p.state == StopState::Armed
        && matches!(p.spec.mode, Mode::Suspend)
        && p.spec.policy(p.count_here.is_some()) == SuspendPolicy::All
}

fn unknown(id: &str) -> ArmError {
    ArmError::new(
        "UNKNOWN_STOP_POINT",
        format!("there is no stop point {id:?}"),
    )
    .next("debug_list_stop_points shows the ids")
}

/// Refuses an instance filter where HotSpot would accept and ignore it.
fn instance_refusal(spec: &StopPointSpec, plans: &[CopyPlan]) -> Option<ArmError> {
    spec.filters.instance?;
    if plans.iter().any(|p| p.any_static) {
        return Some(
            ArmError::new(
                "INSTANCE_REFUSED",
                "instance_id on a static method: there is no `this` to match, and HotSpot would \
                 accept the filter and then fire for every call",
            )
            .next("use a condition, or stop in an instance method"),
        );
    }
    if plans.iter().any(|p| p.static_field) {
        return Some(
            ArmError::new(
                "INSTANCE_REFUSED",
                "instance_id on a static field: one copy exists, and HotSpot would accept the \
                 filter and then report every write",
            )
            .next("watch the static field without instance_id"),
        );
    }
    None
}

/// Tags a type the way a location needs.
pub fn location_tag(tag: TypeTag) -> TypeTag {
    match tag {
        TypeTag::Interface => TypeTag::Interface,
        _ => TypeTag::Class,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::stop_point::{ExceptionSpec, Filters, TraceSpec};

    #[test]
    fn instance_filters_are_refused_where_hotspot_ignores_them() {
        let spec = StopPointSpec {
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
        assert!(e.message.contains("static method"));
        let e = instance_refusal(&spec, &[plan(false, true)]).expect("refused");
        assert!(e.message.contains("static field"));
        let unfiltered = StopPointSpec {
            filters: Filters::default(),
            ..spec
        };
        assert!(instance_refusal(&unfiltered, &[plan(true, true)]).is_none());
    }
}
