//! The registry state: every stop point and family under our ids, the JDWP
//! requests each one holds right now (several per stop point: one per
//! location and class copy, plus a class-prepare watch), and the routing
//! table derived from them. Plain data with synchronous methods; the
//! StopPoints actor does the I/O around them.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::jdwp::{Location, ObjectId, ReferenceTypeId};
use crate::model::stop_point::{
    ArmNote, FamilyId, StopKind, StopPointId, StopPointSpec, StopState,
};

use super::exprs::StopExprs;
use super::routes::{RequestKey, Route, Routes, Stats, Target};

/// A JDWP request a stop point holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    pub key: RequestKey,
    /// The class copy it was armed on (none for pattern requests).
    pub class: Option<ReferenceTypeId>,
    /// It carries a JDWP `Count`: the JVM deletes it once it fires.
    pub jvm_count: bool,
}

/// How a hit count is enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CountMode {
    /// JDWP `Count` on the request: the JVM fires on the Nth hit and
    /// deletes the request (one request only, or one per class copy).
    Jvm(u32),
    /// Counted here across several requests (a line at several
    /// locations); each hit holds only its thread until the Nth.
    Here(u32),
}

/// One loaded copy of a class a stop point is armed on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copy {
    pub class: ReferenceTypeId,
    pub loader: ObjectId,
    pub locations: Vec<Location>,
    /// Armed by the class-load watch after the arm reply.
    pub later: bool,
}

/// One stop point.
#[derive(Debug)]
pub struct Point {
    pub id: StopPointId,
    pub spec: Arc<StopPointSpec>,
    pub state: StopState,
    pub stats: Arc<Stats>,
    pub family: Option<FamilyId>,
    pub requests: Vec<Held>,
    pub watch: Option<RequestKey>,
    pub copies: Vec<Copy>,
    /// A hit count checked here, because several requests share it.
    pub count_here: Option<u32>,
    /// How the hit count is enforced, decided at the first arm.
    pub count_mode: Option<CountMode>,
    /// Warnings and refusals seen while arming, newest last (bounded).
    pub notes: Vec<ArmNote>,
    /// A probe in the class's bytecode serves it (the session installs
    /// and removes it); it holds no JDWP request but, when it suspends,
    /// the breakpoint in its probe's trap.
    pub probe: bool,
    /// Its requests are a suspending probe's trap (see [`Target::trap`]).
    trap: bool,
    target: Arc<Target>,
}

impl Point {
    pub fn new(id: StopPointId, spec: StopPointSpec, family: Option<FamilyId>) -> Self {
        let spec = Arc::new(spec);
        let stats = Arc::new(Stats::default());
        let target = Arc::new(Target {
            name: id.0.as_str().into(),
            id: id.clone(),
            exprs: Arc::new(StopExprs::of(&spec)),
            spec: spec.clone(),
            stats: stats.clone(),
            count_here: None,
            trap: false,
        });
        Self {
            id,
            spec,
            state: StopState::Deferred,
            stats,
            family,
            requests: Vec::new(),
            watch: None,
            copies: Vec::new(),
            count_here: None,
            count_mode: None,
            notes: Vec::new(),
            probe: false,
            trap: false,
            target,
        }
    }

    /// Replaces the definition and/or the hit-count mode; the routes of
    /// its requests must be refreshed (the registry does it).
    fn retarget(&mut self) {
        // The same definition keeps its compiled expressions: a re-arm
        // parses nothing. A trap's condition ran in the JVM already.
        let trap = self.trap;
        let exprs = if trap {
            Arc::new(StopExprs::default())
        } else if Arc::ptr_eq(&self.target.spec, &self.spec) && !self.target.trap {
            self.target.exprs.clone()
        } else {
            Arc::new(StopExprs::of(&self.spec))
        };
        self.target = Arc::new(Target {
            name: self.id.0.as_str().into(),
            id: self.id.clone(),
            exprs,
            spec: self.spec.clone(),
            stats: self.stats.clone(),
            count_here: self.count_here,
            trap,
        });
    }

    /// Routes its hits as a suspending probe's trap (or not), as of its
    /// current definition.
    pub fn set_trap(&mut self, trap: bool) {
        self.trap = trap;
        self.retarget();
    }

    pub fn note(&mut self, note: ArmNote) {
        if self.notes.len() >= 8 {
            self.notes.remove(0);
        }
        self.notes.push(note);
    }

    pub fn locations(&self) -> usize {
        self.copies.iter().map(|c| c.locations.len()).sum()
    }

    /// True when the stop point has a request at `location`.
    pub fn at(&self, location: &Location) -> bool {
        self.copies.iter().any(|c| c.locations.contains(location))
    }
}

/// What a family's class-load watch is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchState {
    /// Armed: matching classes that load later join the family.
    Watching,
    /// Cleared because the family is full; re-armed when a slot frees.
    Parked,
    /// The family is disabled.
    Disabled,
    /// The JVM refused the watch.
    Failed(String),
}

/// A wildcard family: one stop point per matching class, and a watch for
/// matching classes that load later.
#[derive(Debug)]
pub struct Family {
    pub id: FamilyId,
    pub pattern: String,
    /// The members' definition with the pattern as the class.
    pub template: Arc<StopPointSpec>,
    pub max_classes: usize,
    pub members: Vec<StopPointId>,
    pub watch: Option<RequestKey>,
    pub watch_state: WatchState,
    /// Matching classes left out (full, or without the method), counted.
    pub left_out: usize,
    pub without_method: usize,
    pub joined_later: usize,
}

impl Family {
    pub fn is_full(&self) -> bool {
        self.members.len() >= self.max_classes
    }
}

/// The registry.
#[derive(Debug, Default)]
pub struct Registry {
    counters: BTreeMap<StopKind, u32>,
    family_counter: u32,
    points: BTreeMap<(StopKind, u32), Point>,
    families: BTreeMap<u32, Family>,
    routes: Routes,
}

fn key_of(id: &str) -> Option<(StopKind, u32)> {
    StopPointId::parse(id)
}

fn family_key(id: &str) -> Option<u32> {
    id.strip_prefix(FamilyId::PREFIX)?
        .strip_prefix('_')?
        .parse()
        .ok()
}

impl Registry {
    /// A fresh id of `kind`; ids are never reused.
    pub fn allocate(&mut self, kind: StopKind) -> StopPointId {
        let n = self.counters.entry(kind).or_insert(0);
        *n += 1;
        StopPointId::new(kind, *n)
    }

    pub fn allocate_family(&mut self) -> FamilyId {
        self.family_counter += 1;
        FamilyId::new(self.family_counter)
    }

    pub fn insert(&mut self, point: Point) {
        if let Some(k) = key_of(&point.id.0) {
            self.points.insert(k, point);
        }
    }

    pub fn insert_family(&mut self, family: Family) {
        if let Some(k) = family_key(&family.id.0) {
            self.families.insert(k, family);
        }
    }

    pub fn len(&self) -> usize {
        self.points.len()
    }

    pub fn point(&self, id: &str) -> Option<&Point> {
        self.points.get(&key_of(id)?)
    }

    pub fn point_mut(&mut self, id: &str) -> Option<&mut Point> {
        self.points.get_mut(&key_of(id)?)
    }

    pub fn family(&self, id: &str) -> Option<&Family> {
        self.families.get(&family_key(id)?)
    }

    pub fn family_mut(&mut self, id: &str) -> Option<&mut Family> {
        self.families.get_mut(&family_key(id)?)
    }

    pub fn points(&self) -> impl Iterator<Item = &Point> {
        self.points.values()
    }

    pub fn ids(&self) -> Vec<StopPointId> {
        self.points.values().map(|p| p.id.clone()).collect()
    }

    pub fn family_ids(&self) -> Vec<FamilyId> {
        self.families.values().map(|f| f.id.clone()).collect()
    }

    /// The routing table as it stands.
    pub fn routes(&self) -> Routes {
        self.routes.clone()
    }

    /// Records hit requests of a stop point (and routes them).
    pub fn add_requests(&mut self, id: &str, held: Vec<Held>) {
        let Some(p) = self.points.get_mut(&match key_of(id) {
            Some(k) => k,
            None => return,
        }) else {
            return;
        };
        for h in held {
            self.routes.insert(
                h.key,
                Route::Hit {
                    target: p.target.clone(),
                    jvm_count: h.jvm_count,
                },
            );
            p.requests.push(h);
        }
    }

    /// Records a stop point's class-prepare watch.
    pub fn set_watch(&mut self, id: &str, key: RequestKey) {
        if let Some(p) = self.point_mut(id) {
            p.watch = Some(key);
            let point = p.id.clone();
            self.routes.insert(key, Route::Watch { point });
        }
    }

    /// Records (or, with `None`, forgets) a family's watch; returns the old
    /// one, to be cleared at the JVM.
    pub fn set_family_watch(
        &mut self,
        id: &str,
        key: Option<RequestKey>,
        state: WatchState,
    ) -> Option<RequestKey> {
        let family = self.family_mut(id)?;
        let old = std::mem::replace(&mut family.watch, key);
        family.watch_state = state;
        let fid = family.id.clone();
        if let Some(o) = old {
            self.routes.retire(&o);
        }
        if let Some(k) = key {
            self.routes.insert(k, Route::FamilyWatch { family: fid });
        }
        old
    }

    /// Sets a new definition and/or hit-count mode and re-routes the
    /// requests it holds to it.
    pub fn retarget(&mut self, id: &str, spec: Arc<StopPointSpec>, count_here: Option<u32>) {
        let Some(p) = self.point_mut(id) else {
            return;
        };
        p.spec = spec;
        p.count_here = count_here;
        p.retarget();
        let target = p.target.clone();
        let held: Vec<Held> = p.requests.clone();
        for h in held {
            self.routes.insert(
                h.key,
                Route::Hit {
                    target: target.clone(),
                    jvm_count: h.jvm_count,
                },
            );
        }
    }

    /// Takes every request of a stop point (hits and watch) out of force:
    /// they stop routing and are remembered as retired. Returns the ones
    /// still to be cleared at the JVM.
    pub fn strip(&mut self, id: &str) -> Vec<RequestKey> {
        let Some(p) = self.point_mut(id) else {
            return Vec::new();
        };
        let mut keys: Vec<RequestKey> = p.requests.drain(..).map(|h| h.key).collect();
        keys.extend(p.watch.take());
        p.copies.clear();
        for k in &keys {
            self.routes.retire(k);
        }
        keys
    }

    /// Removes a stop point; returns it with the requests to clear.
    pub fn remove(&mut self, id: &str) -> Option<(Point, Vec<RequestKey>)> {
        let keys = self.strip(id);
        let point = self.points.remove(&key_of(id)?)?;
        if let Some(fid) = &point.family
            && let Some(f) = self.family_mut(&fid.0)
        {
            f.members.retain(|m| *m != point.id);
        }
        Some((point, keys))
    }

    /// Removes a family and its members; returns the requests to clear.
    pub fn remove_family(&mut self, id: &str) -> Option<(Family, Vec<RequestKey>)> {
        let watch = self.set_family_watch(id, None, WatchState::Disabled);
        let family = self.families.remove(&family_key(id)?)?;
        let mut keys: Vec<RequestKey> = watch.into_iter().collect();
        for m in &family.members {
            keys.extend(self.strip(&m.0));
            if let Some(k) = key_of(&m.0) {
                self.points.remove(&k);
            }
        }
        Some((family, keys))
    }

    /// A request with a JDWP `Count` fired: the JVM has deleted it. Marks
    /// its stop point spent and returns it with its other requests, which
    /// are still to be cleared at the JVM.
    pub fn fired(
        &mut self,
        key: &RequestKey,
        reason: String,
    ) -> Option<(StopPointId, Vec<RequestKey>)> {
        let id = self
            .points
            .values()
            .find(|p| p.requests.iter().any(|h| h.key == *key))?
            .id
            .clone();
        let p = self.point_mut(&id.0)?;
        p.requests.retain(|h| h.key != *key);
        p.state = StopState::Spent(reason);
        self.routes.retire(key);
        let rest = self.strip(&id.0);
        Some((id, rest))
    }

    /// Marks requests that were set but are not kept (a failed arm) as
    /// retired: their late events are ours to release.
    pub fn retire(&mut self, keys: &[RequestKey]) {
        for k in keys {
            self.routes.retire(k);
        }
    }

    /// Every request this registry holds, for a panic or a disconnect.
    pub fn all_keys(&self) -> Vec<RequestKey> {
        let mut keys: Vec<RequestKey> = Vec::new();
        for p in self.points.values() {
            keys.extend(p.requests.iter().map(|h| h.key));
            keys.extend(p.watch);
        }
        for f in self.families.values() {
            keys.extend(f.watch);
        }
        keys
    }

    /// Forgets everything; returns every request to clear.
    pub fn clear_all(&mut self) -> Vec<RequestKey> {
        let keys = self.all_keys();
        for k in &keys {
            self.routes.retire(k);
        }
        self.points.clear();
        self.families.clear();
        keys
    }

    /// The stop points whose class-prepare watch is `key`.
    pub fn watcher(&self, key: &RequestKey) -> Option<Route> {
        match self.routes.lookup(key) {
            super::routes::Lookup::Live(r) => Some(r.clone()),
            _ => None,
        }
    }

    /// The member of a family armed on class `name`, if any.
    pub fn member_for(&self, family: &str, name: &str) -> Option<StopPointId> {
        let f = self.family(family)?;
        f.members
            .iter()
            .find(|m| {
                self.point(&m.0).is_some_and(|p| {
                    matches!(&p.spec.target, crate::model::stop_point::Target::Line(l) if l.class == name)
                })
            })
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jdwp::{EventKind, RequestId};
    use crate::model::stop_point::{Filters, LineSpec, Mode, Target as Tgt};
    use crate::stop_points::routes::Lookup;

    fn spec(class: &str, line: u32) -> StopPointSpec {
        StopPointSpec {
            engine: crate::model::stop_point::Engine::Wire,
            target: Tgt::Line(LineSpec {
                class: class.into(),
                method: None,
                line: Some(line),
            }),
            mode: Mode::Suspend,
            filters: Filters::default(),
        }
    }

    fn bp(n: i32) -> RequestKey {
        RequestKey::new(EventKind::Breakpoint, RequestId(n))
    }

    fn held(n: i32, jvm_count: bool) -> Held {
        Held {
            key: bp(n),
            class: Some(ReferenceTypeId(7)),
            jvm_count,
        }
    }

    #[test]
    fn ids_are_per_kind_and_never_reused() {
        let mut r = Registry::default();
        let a = r.allocate(StopKind::Line);
        let b = r.allocate(StopKind::Exception);
        let c = r.allocate(StopKind::Line);
        assert_eq!(
            (a.0.as_str(), b.0.as_str(), c.0.as_str()),
            ("bp_1", "exc_1", "bp_2")
        );
        r.insert(Point::new(a.clone(), spec("A", 1), None));
        assert!(r.remove(&a.0).is_some());
        assert_eq!(r.allocate(StopKind::Line).0, "bp_3");
        assert_eq!(r.allocate_family().0, "bpset_1");
    }

    #[test]
    fn requests_route_and_retire() {
        let mut r = Registry::default();
        let id = r.allocate(StopKind::Line);
        r.insert(Point::new(id.clone(), spec("A", 1), None));
        r.add_requests(&id.0, vec![held(10, false), held(11, false)]);
        let watch = RequestKey::new(EventKind::ClassPrepare, RequestId(12));
        r.set_watch(&id.0, watch);
        let routes = r.routes();
        assert!(matches!(
            routes.lookup(&bp(10)),
            Lookup::Live(Route::Hit { .. })
        ));
        assert!(matches!(
            routes.lookup(&watch),
            Lookup::Live(Route::Watch { .. })
        ));
        let cleared = r.strip(&id.0);
        assert_eq!(cleared.len(), 3);
        let routes = r.routes();
        assert!(matches!(routes.lookup(&bp(10)), Lookup::Retired));
        assert!(matches!(routes.lookup(&bp(99)), Lookup::Foreign));
        // A reused number is routed to its new owner, never to the old one.
        let id2 = r.allocate(StopKind::Line);
        r.insert(Point::new(id2.clone(), spec("B", 2), None));
        r.add_requests(&id2.0, vec![held(10, false)]);
        match r.routes().lookup(&bp(10)) {
            Lookup::Live(Route::Hit { target, .. }) => assert_eq!(target.id, id2),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_fired_count_spends_the_stop_point_and_sends_nothing_for_itself() {
        let mut r = Registry::default();
        let id = r.allocate(StopKind::Line);
        r.insert(Point::new(id.clone(), spec("A", 1), None));
        r.add_requests(&id.0, vec![held(20, true), held(21, true)]);
        let (who, rest) = r
            .fired(&bp(20), "hit_count 3 reached".into())
            .expect("ours");
        assert_eq!(who, id);
        assert_eq!(rest, vec![bp(21)], "only the other copy is cleared");
        let p = r.point(&id.0).expect("kept");
        assert_eq!(p.state.label(), "spent");
        assert!(
            r.strip(&id.0).is_empty(),
            "clearing a spent one sends nothing"
        );
    }

    #[test]
    fn retargeting_keeps_counters_and_routes() {
        let mut r = Registry::default();
        let id = r.allocate(StopKind::Line);
        r.insert(Point::new(id.clone(), spec("A", 1), None));
        r.add_requests(&id.0, vec![held(30, false)]);
        let stats = r.point(&id.0).expect("p").stats.clone();
        stats.hit(std::time::Instant::now());
        r.retarget(&id.0, Arc::new(spec("A", 1)), Some(3));
        match r.routes().lookup(&bp(30)) {
            Lookup::Live(Route::Hit { target, .. }) => {
                assert_eq!(target.count_here, Some(3));
                assert_eq!(Stats::get(&target.stats.hits), 1);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn families_hold_members_and_a_watch() {
        let mut r = Registry::default();
        let fid = r.allocate_family();
        r.insert_family(Family {
            id: fid.clone(),
            pattern: "com.*".into(),
            template: Arc::new(spec("com.*", 0)),
            max_classes: 1,
            members: Vec::new(),
            watch: None,
            watch_state: WatchState::Watching,
            left_out: 0,
            without_method: 0,
            joined_later: 0,
        });
        let watch = RequestKey::new(EventKind::ClassPrepare, RequestId(40));
        assert_eq!(
            r.set_family_watch(&fid.0, Some(watch), WatchState::Watching),
            None
        );
        let id = r.allocate(StopKind::Line);
        r.insert(Point::new(id.clone(), spec("com.A", 1), Some(fid.clone())));
        if let Some(f) = r.family_mut(&fid.0) {
            f.members.push(id.clone());
        }
        r.add_requests(&id.0, vec![held(41, false)]);
        assert!(r.family(&fid.0).expect("f").is_full());
        assert_eq!(r.member_for(&fid.0, "com.A"), Some(id.clone()));
        assert_eq!(r.all_keys().len(), 2);
        let (_, keys) = r.remove_family(&fid.0).expect("removed");
        assert_eq!(keys, vec![watch, bp(41)]);
        assert!(r.points().next().is_none());
        assert!(matches!(r.routes().lookup(&watch), Lookup::Retired));
    }
}
