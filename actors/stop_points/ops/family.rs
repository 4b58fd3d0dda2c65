//! Wildcard line families and classes loaded later: arming a family over
//! the loaded classes its glob matches, its class-load watch (parked when
//! full), adding members, and arming each new copy a watch reports.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::jdwp::{SuspendPolicy, TaggedTypeId};
use crate::jvm::classes::java_name;
use crate::model::stop_point::{
    ArmNote, FamilyId, LineSpec, StopKind, StopPointSpec, StopState, Target, glob_matches,
    jdwp_class_pattern,
};

use super::super::ArmReport;
use super::super::arm::{ArmError, classes_matching, clear_all, plan_copy, watch_class};
use super::super::registry::{Family, Point, WatchState};
use super::super::routes::{RequestKey, Route};
use super::{Book, instance_refusal, unknown};

impl Book {
    /// Arms a wildcard line family: one stop point per loaded class the
    /// glob matches (up to `max_classes`), and a watch for later ones.
    pub(super) async fn arm_family(
        &mut self,
        spec: StopPointSpec,
        max_classes: usize,
    ) -> Result<ArmReport, ArmError> {
        let Target::Line(l) = &spec.target else {
            return Err(ArmError::Internal("families are line stops"));
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
                if e.is_gone() {
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
            notes.push(ArmNote::NoMatchYet {
                glob: glob.to_string(),
                method: l.method.clone().unwrap_or_else(|| "?".into()),
            });
        }
        Ok(ArmReport {
            point: None,
            family,
            notes,
        })
    }

    /// (Re-)sets a family's class-load watch.
    pub(super) async fn family_watch(&mut self, fid: &FamilyId, notes: &mut Vec<ArmNote>) {
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
                notes.push(ArmNote::WatchRefused { why: e.to_string() });
                self.reg
                    .set_family_watch(&fid.0, None, WatchState::Failed(e.to_string()));
            }
        }
    }

    /// Parks a full family's watch: it costs an event per class load and
    /// could only refuse.
    pub(super) async fn park_if_full(&mut self, fid: &str) {
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
    pub(super) async fn add_member(
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
            return Err(first_err.unwrap_or(ArmError::Internal("no copy")));
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

    pub(super) async fn arm_copy(&mut self, id: &str, class: TaggedTypeId) {
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
                    p.note(ArmNote::LateCopyNotArmed { why: e.to_string() });
                }
                return;
            }
        };
        if let Some(e) = instance_refusal(&spec, std::slice::from_ref(&plan)) {
            if let Some(p) = self.reg.point_mut(id) {
                p.note(ArmNote::LateCopyRefused { why: e.to_string() });
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
            p.note(ArmNote::LateCopyNotArmed { why: e.to_string() });
        }
    }

    pub(super) async fn family_class(&mut self, fid: &FamilyId, class: TaggedTypeId, name: &str) {
        let Some(f) = self.reg.family(&fid.0) else {
            return;
        };
        if !glob_matches(&f.pattern, name)
            || super::super::arm::is_lambda_form(name)
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
}
