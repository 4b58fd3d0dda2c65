//! The probe book as an actor: the session's truth about what it changed
//! in the JVM's code (each probe-served stop point with its live probe,
//! each instrumented class with its original bytes, the class files a
//! reload installed, what an earlier jvmscope left). [`Book`] is the plain
//! state; [`ProbesBook`] is the thin actor around it, a child of the
//! Session; [`ProbesHandle`] is how the arming paths and the drain ask it.
//! Nothing holds a lock across a JDWP round trip: each question is one
//! message, answered with copies.

use std::collections::BTreeMap;
use std::sync::Arc;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};

use super::{HELPER_MARK, Instrumented, Leftover, Live, ProbePoint};
use crate::classfile::probe::ProbeSpec;
use crate::error::{JdwpError, ProbeRefusal};
use crate::jdwp::ReferenceTypeId;
use crate::model::stop_point::StopPointSpec;
use crate::stop_points::routes::Stats;

/// Everything a session forgets when it leaves: the live probes and the
/// classes they were in.
pub type Forgotten = (Vec<Live>, Vec<(ReferenceTypeId, Instrumented)>);

/// The book's state: plain data, synchronous methods.
#[derive(Debug)]
pub struct Book {
    points: BTreeMap<String, ProbePoint>,
    classes: BTreeMap<ReferenceTypeId, Instrumented>,
    /// The class file a `debug_reload_class` installed, per class: what
    /// the JVM runs now, which the class roots may not hold.
    reloaded: BTreeMap<ReferenceTypeId, Arc<Vec<u8>>>,
    /// Makes helper names unique across jvmscope runs on one JVM.
    nonce: String,
    next: u32,
    /// What an earlier jvmscope left, restored at attach.
    leftovers: Vec<Leftover>,
}

impl Book {
    /// An empty book whose helper names carry `nonce`.
    pub fn new(nonce: String) -> Book {
        Book {
            points: BTreeMap::new(),
            classes: BTreeMap::new(),
            reloaded: BTreeMap::new(),
            nonce,
            next: 1,
            leftovers: Vec::new(),
        }
    }

    /// A nonce from the clock and the process id.
    fn fresh_nonce() -> String {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos() ^ (d.as_secs() as u32))
            .unwrap_or(0);
        format!("{:08x}", nanos ^ std::process::id().rotate_left(16))
    }

    /// A fresh helper class name in `class`'s package (internal form).
    pub fn helper_name(&mut self, class: &str) -> String {
        let n = self.next;
        self.next = self.next.wrapping_add(1);
        format!("{}{HELPER_MARK}{}${n}", class.replace('.', "/"), self.nonce)
    }

    pub fn set_leftovers(&mut self, left: Vec<Leftover>) {
        self.leftovers = left;
    }

    pub fn leftovers(&self) -> Vec<Leftover> {
        self.leftovers.clone()
    }

    pub fn is_probe(&self, id: &str) -> bool {
        self.points.contains_key(id)
    }

    pub fn point(&self, id: &str) -> Option<ProbePoint> {
        self.points.get(id).cloned()
    }

    /// Moves a probe installed under a provisional id to its stop point's
    /// id, counting into the registry's stats from now on.
    pub fn rename(&mut self, from: &str, to: &str, stats: Arc<Stats>) {
        let Some(mut p) = self.points.remove(from) else {
            return;
        };
        if let Some(l) = &mut p.live {
            l.stats = stats;
            for class in l.classes() {
                if let Some(c) = self.classes.get_mut(&class) {
                    for id in &mut c.probes {
                        if id == from {
                            *id = to.to_string();
                        }
                    }
                }
            }
        }
        self.points.insert(to.to_string(), p);
    }

    /// Notes the class file a reload installed in `target`.
    pub fn reloaded(&mut self, target: ReferenceTypeId, bytes: Arc<Vec<u8>>) {
        self.reloaded.insert(target, bytes);
    }

    /// The class file a reload installed in `target`, if one did.
    pub fn reloaded_bytes(&self, target: ReferenceTypeId) -> Option<Arc<Vec<u8>>> {
        self.reloaded.get(&target).cloned()
    }

    /// Every armed probe, for the drain.
    pub fn live(&self) -> Vec<(String, Live)> {
        self.points
            .iter()
            .filter_map(|(id, p)| p.live.clone().map(|l| (id.clone(), l)))
            .collect()
    }

    /// The class `target` as instrumented now, if it is.
    pub fn class(&self, target: ReferenceTypeId) -> Option<Instrumented> {
        self.classes.get(&target).cloned()
    }

    /// The probe specs in `target` now (for re-instrumenting), `except` one.
    pub fn specs_in(&self, target: ReferenceTypeId, except: Option<&str>) -> Vec<ProbeSpec> {
        let Some(c) = self.classes.get(&target) else {
            return Vec::new();
        };
        c.probes
            .iter()
            .filter(|id| Some(id.as_str()) != except)
            .filter_map(|id| self.points.get(id)?.live.as_ref().map(|l| l.spec.clone()))
            .collect()
    }

    /// Replaces a stop point's definition (an update that went in).
    pub fn respec(&mut self, id: &str, spec: StopPointSpec) {
        if let Some(p) = self.points.get_mut(id) {
            p.spec = spec;
        }
    }

    /// Records an armed probe (each class's entry created with its
    /// original bytes the first time).
    pub fn armed(
        &mut self,
        id: &str,
        spec: StopPointSpec,
        live: Live,
        classes: Vec<(ReferenceTypeId, Instrumented)>,
    ) {
        for (target, class) in classes {
            let entry = self.classes.entry(target).or_insert(Instrumented {
                probes: Vec::new(),
                ..class
            });
            if !entry.probes.iter().any(|p| p == id) {
                entry.probes.push(id.to_string());
            }
        }
        self.points.insert(
            id.to_string(),
            ProbePoint {
                spec,
                live: Some(live),
            },
        );
    }

    /// Takes a probe out of the book (its point kept when `keep`, for a
    /// later re-arm); returns what it was.
    pub fn disarmed(&mut self, id: &str, keep: bool) -> Option<Live> {
        let live = if keep {
            self.points.get_mut(id).and_then(|p| p.live.take())
        } else {
            self.points.remove(id).and_then(|p| p.live)
        };
        if let Some(l) = &live {
            for class in l.classes() {
                if let Some(c) = self.classes.get_mut(&class) {
                    c.probes.retain(|p| p != id);
                    if c.probes.is_empty() {
                        self.classes.remove(&class);
                    }
                }
            }
        }
        live
    }

    /// Forgets every probe and class (after a restore on leaving).
    pub fn forget_all(&mut self) -> Forgotten {
        let lives = std::mem::take(&mut self.points)
            .into_values()
            .filter_map(|p| p.live)
            .collect();
        let classes = std::mem::take(&mut self.classes).into_iter().collect();
        (lives, classes)
    }

    /// Applies one message (`Crash` is the actor's to act on).
    fn apply(&mut self, msg: ProbesMsg) {
        match msg {
            ProbesMsg::Crash => {}
            ProbesMsg::HelperName(class, reply) => {
                let _ = reply.send(self.helper_name(&class));
            }
            ProbesMsg::SetLeftovers(left) => self.set_leftovers(left),
            ProbesMsg::Leftovers(reply) => {
                let _ = reply.send(self.leftovers());
            }
            ProbesMsg::Point(id, reply) => {
                let _ = reply.send(self.point(&id));
            }
            ProbesMsg::IsProbe(id, reply) => {
                let _ = reply.send(self.is_probe(&id));
            }
            ProbesMsg::Rename {
                from,
                to,
                stats,
                reply,
            } => {
                self.rename(&from, &to, stats);
                let _ = reply.send(());
            }
            ProbesMsg::Reloaded(target, bytes, reply) => {
                self.reloaded(target, bytes);
                let _ = reply.send(());
            }
            ProbesMsg::ReloadedBytes(target, reply) => {
                let _ = reply.send(self.reloaded_bytes(target));
            }
            ProbesMsg::Live(reply) => {
                let _ = reply.send(self.live());
            }
            ProbesMsg::Class(target, reply) => {
                let _ = reply.send(self.class(target));
            }
            ProbesMsg::SpecsIn {
                target,
                except,
                reply,
            } => {
                let _ = reply.send(self.specs_in(target, except.as_deref()));
            }
            ProbesMsg::Respec(id, spec, reply) => {
                self.respec(&id, *spec);
                let _ = reply.send(());
            }
            ProbesMsg::Armed {
                id,
                spec,
                live,
                classes,
                reply,
            } => {
                self.armed(&id, *spec, *live, classes);
                let _ = reply.send(());
            }
            ProbesMsg::Disarmed { id, keep, reply } => {
                let _ = reply.send(self.disarmed(&id, keep));
            }
            ProbesMsg::ForgetAll(reply) => {
                let _ = reply.send(self.forget_all());
            }
        }
    }
}

/// What the probe book is told and asked.
pub enum ProbesMsg {
    /// Name a new helper class in this class's package.
    HelperName(String, RpcReplyPort<String>),
    /// Remember what an earlier jvmscope left (restored at attach).
    SetLeftovers(Vec<Leftover>),
    /// What an earlier jvmscope left.
    Leftovers(RpcReplyPort<Vec<Leftover>>),
    /// A probe-served stop point, armed or not.
    Point(String, RpcReplyPort<Option<ProbePoint>>),
    /// Whether a stop point is served by a probe.
    IsProbe(String, RpcReplyPort<bool>),
    /// Move a probe from its provisional id to its stop point's id, with
    /// the registry's counters.
    Rename {
        from: String,
        to: String,
        stats: Arc<Stats>,
        reply: RpcReplyPort<()>,
    },
    /// Note the class file a reload installed in a class.
    Reloaded(ReferenceTypeId, Arc<Vec<u8>>, RpcReplyPort<()>),
    /// The class file a reload installed in a class.
    ReloadedBytes(ReferenceTypeId, RpcReplyPort<Option<Arc<Vec<u8>>>>),
    /// Every armed probe (one question per drain round).
    Live(RpcReplyPort<Vec<(String, Live)>>),
    /// A class as this session instrumented it.
    Class(ReferenceTypeId, RpcReplyPort<Option<Instrumented>>),
    /// The probe specs in a class, but for one stop point's.
    SpecsIn {
        target: ReferenceTypeId,
        except: Option<String>,
        reply: RpcReplyPort<Vec<ProbeSpec>>,
    },
    /// Replace a stop point's definition.
    Respec(String, Box<StopPointSpec>, RpcReplyPort<()>),
    /// Record a probe that went in, and the classes it went into.
    Armed {
        id: String,
        spec: Box<StopPointSpec>,
        live: Box<Live>,
        classes: Vec<(ReferenceTypeId, Instrumented)>,
        reply: RpcReplyPort<()>,
    },
    /// Take a probe out of the book (its definition kept when `keep`).
    Disarmed {
        id: String,
        keep: bool,
        reply: RpcReplyPort<Option<Live>>,
    },
    /// Forget every probe and class, handing them back for the restore.
    ForgetAll(RpcReplyPort<Forgotten>),
    /// Test hook: fail, as a bug would.
    Crash,
}

/// The probe book actor (no configuration).
pub struct ProbesBook;

impl ProbesBook {
    /// Spawns the book linked to `supervisor` (the Session).
    pub async fn spawn(supervisor: ractor::ActorCell) -> Result<ProbesHandle, ractor::SpawnErr> {
        let (actor, _) = Actor::spawn_linked(None, ProbesBook, (), supervisor).await?;
        Ok(ProbesHandle { actor })
    }
}

impl Actor for ProbesBook {
    type Msg = ProbesMsg;
    type State = Book;
    type Arguments = ();

    async fn pre_start(
        &self,
        _: ActorRef<Self::Msg>,
        _: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(Book::new(Book::fresh_nonce()))
    }

    async fn handle(
        &self,
        _: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            ProbesMsg::Crash => panic!("the probe book's crash requested by a test"),
            other => state.apply(other),
        }
        Ok(())
    }
}

/// The session's probe book, as the arming paths and the drain ask it.
/// Once the book is gone (the session ending) every question answers
/// "nothing": no probe, no class, nothing to restore.
#[derive(Clone)]
pub struct ProbesHandle {
    actor: ActorRef<ProbesMsg>,
}

impl std::fmt::Debug for ProbesHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProbesHandle")
            .field("actor", &self.actor.get_id())
            .finish()
    }
}

impl ProbesHandle {
    pub fn actor(&self) -> &ActorRef<ProbesMsg> {
        &self.actor
    }

    /// What a change asked of a book that is gone answers.
    fn gone() -> ProbeRefusal {
        ProbeRefusal::Jdwp(JdwpError::Disconnected {
            command: "the probe book",
            reason: "the session's probe book is gone".into(),
        })
    }

    /// A fresh helper class name in `class`'s package (internal form).
    pub async fn helper_name(&self, class: &str) -> Result<String, ProbeRefusal> {
        ractor::call!(self.actor, ProbesMsg::HelperName, class.to_string())
            .map_err(|_| Self::gone())
    }

    pub fn set_leftovers(&self, left: Vec<Leftover>) {
        let _ = self.actor.cast(ProbesMsg::SetLeftovers(left));
    }

    pub async fn leftovers(&self) -> Vec<Leftover> {
        ractor::call!(self.actor, ProbesMsg::Leftovers).unwrap_or_default()
    }

    pub async fn is_probe(&self, id: &str) -> bool {
        ractor::call!(self.actor, ProbesMsg::IsProbe, id.to_string()).unwrap_or(false)
    }

    pub async fn point(&self, id: &str) -> Option<ProbePoint> {
        ractor::call!(self.actor, ProbesMsg::Point, id.to_string())
            .ok()
            .flatten()
    }

    /// See [`Book::rename`].
    pub async fn rename(&self, from: &str, to: &str, stats: Arc<Stats>) {
        let _ = ractor::call!(self.actor, |reply| ProbesMsg::Rename {
            from: from.to_string(),
            to: to.to_string(),
            stats,
            reply,
        });
    }

    pub async fn reloaded(&self, target: ReferenceTypeId, bytes: Arc<Vec<u8>>) {
        let _ = ractor::call!(self.actor, ProbesMsg::Reloaded, target, bytes);
    }

    pub async fn reloaded_bytes(&self, target: ReferenceTypeId) -> Option<Arc<Vec<u8>>> {
        ractor::call!(self.actor, ProbesMsg::ReloadedBytes, target)
            .ok()
            .flatten()
    }

    pub async fn live(&self) -> Vec<(String, Live)> {
        ractor::call!(self.actor, ProbesMsg::Live).unwrap_or_default()
    }

    pub async fn class(&self, target: ReferenceTypeId) -> Option<Instrumented> {
        ractor::call!(self.actor, ProbesMsg::Class, target)
            .ok()
            .flatten()
    }

    pub async fn specs_in(&self, target: ReferenceTypeId, except: Option<&str>) -> Vec<ProbeSpec> {
        ractor::call!(self.actor, |reply| ProbesMsg::SpecsIn {
            target,
            except: except.map(str::to_string),
            reply,
        })
        .unwrap_or_default()
    }

    pub async fn respec(&self, id: &str, spec: StopPointSpec) {
        let _ = ractor::call!(
            self.actor,
            ProbesMsg::Respec,
            id.to_string(),
            Box::new(spec)
        );
    }

    pub async fn armed(
        &self,
        id: &str,
        spec: StopPointSpec,
        live: Live,
        classes: Vec<(ReferenceTypeId, Instrumented)>,
    ) -> Result<(), ProbeRefusal> {
        ractor::call!(self.actor, |reply| ProbesMsg::Armed {
            id: id.to_string(),
            spec: Box::new(spec),
            live: Box::new(live),
            classes,
            reply,
        })
        .map_err(|_| Self::gone())
    }

    pub async fn disarmed(&self, id: &str, keep: bool) -> Option<Live> {
        ractor::call!(self.actor, |reply| ProbesMsg::Disarmed {
            id: id.to_string(),
            keep,
            reply,
        })
        .ok()
        .flatten()
    }

    pub async fn forget_all(&self) -> Forgotten {
        ractor::call!(self.actor, ProbesMsg::ForgetAll).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::classfile::probe::{ProbeSpec, RecordLayout, Site};
    use crate::jdwp::ObjectId;
    use crate::model::stop_point::{Filters, LineSpec, Mode, Target};
    use crate::probes::{Counted, HelperFields};

    const A: ReferenceTypeId = ReferenceTypeId(10);
    const B: ReferenceTypeId = ReferenceTypeId(11);

    fn spec(line: u32) -> StopPointSpec {
        StopPointSpec {
            engine: crate::model::stop_point::Engine::Probe,
            target: Target::Line(LineSpec {
                class: "app.A".into(),
                method: None,
                line: Some(line),
            }),
            mode: Mode::Trace(Default::default()),
            filters: Filters::default(),
        }
    }

    fn probe(helper: &str, line: u32) -> ProbeSpec {
        ProbeSpec {
            helper: helper.into(),
            method: None,
            site: Site::Line { line },
            locals: None,
            only_condition: false,
            condition: None,
            min_duration_ns: 0,
            ring_capacity: 16,
            callers: 0,
            stats: false,
            callees: false,
            paths: Vec::new(),
        }
    }

    fn live(helper: u64, line: u32, others: Vec<ReferenceTypeId>) -> Live {
        Live {
            helper: ReferenceTypeId(helper),
            helper_name: format!("H{helper}"),
            fields: HelperFields::default(),
            target: A,
            others,
            spec: probe(&format!("H{helper}"), line),
            layout: RecordLayout::default(),
            location: Arc::from("app.A.run:7"),
            stats: Arc::new(Stats::default()),
            max_hits: 100,
            max_length: 80,
            suspends: false,
            base: Counted::default(),
        }
    }

    fn class(name: &str, bytes: &[u8]) -> Instrumented {
        Instrumented {
            name: name.into(),
            loader: ObjectId(1),
            original: Arc::new(bytes.to_vec()),
            probes: vec!["ignored".into()],
        }
    }

    fn arm(book: &mut Book, id: &str, helper: u64, line: u32, classes: &[ReferenceTypeId]) {
        let (first, rest) = classes.split_first().expect("a class");
        assert_eq!(*first, A);
        let l = live(helper, line, rest.to_vec());
        let cs = classes
            .iter()
            .map(|c| (*c, class(&format!("c{}", c.0), &[c.0 as u8])))
            .collect();
        book.armed(id, spec(line), l, cs);
    }

    #[test]
    fn helper_names_are_unique_and_marked_ours() {
        let mut book = Book::new("cafe0001".into());
        let a = book.helper_name("app.pkg.Work");
        let b = book.helper_name("app.pkg.Work");
        assert_ne!(a, b);
        assert!(a.starts_with("app/pkg/Work"), "{a}");
        assert!(a.contains(HELPER_MARK) && a.contains("cafe0001"), "{a}");
    }

    #[test]
    fn arming_records_the_class_once_with_its_first_original() {
        let mut book = Book::new("n".into());
        arm(&mut book, "p1", 100, 7, &[A]);
        arm(&mut book, "p2", 101, 9, &[A]);
        let c = book.class(A).expect("instrumented");
        // The first arm's bytes stay: a second probe does not replace them.
        assert_eq!(c.original.as_slice(), &[10]);
        assert_eq!(c.probes, vec!["p1".to_string(), "p2".to_string()]);
        assert!(book.is_probe("p1") && book.is_probe("p2"));
        assert_eq!(book.live().len(), 2);
        let lines: Vec<_> = book
            .specs_in(A, Some("p1"))
            .into_iter()
            .map(|s| s.site)
            .collect();
        assert_eq!(lines, vec![Site::Line { line: 9 }]);
        assert_eq!(book.specs_in(A, None).len(), 2);
        assert!(book.specs_in(B, None).is_empty());
    }

    #[test]
    fn rename_moves_the_probe_its_classes_and_its_counters() {
        let mut book = Book::new("n".into());
        arm(&mut book, "pending-1", 100, 7, &[A, B]);
        let stats = Arc::new(Stats::default());
        book.rename("pending-1", "bp_1", stats.clone());
        assert!(!book.is_probe("pending-1"));
        let p = book.point("bp_1").expect("renamed");
        assert!(Arc::ptr_eq(&p.live.expect("armed").stats, &stats));
        for c in [A, B] {
            assert_eq!(book.class(c).expect("in").probes, vec!["bp_1".to_string()]);
        }
        // An unknown id changes nothing.
        book.rename("nope", "bp_2", stats);
        assert!(!book.is_probe("bp_2"));
    }

    #[test]
    fn disarming_keeps_the_definition_when_asked_and_drops_empty_classes() {
        let mut book = Book::new("n".into());
        arm(&mut book, "p1", 100, 7, &[A, B]);
        arm(&mut book, "p2", 101, 9, &[A]);
        let gone = book.disarmed("p1", true).expect("was armed");
        assert_eq!(gone.helper, ReferenceTypeId(100));
        // Kept, not armed: the drain no longer sees it.
        let kept = book.point("p1").expect("kept");
        assert!(kept.live.is_none());
        assert_eq!(book.live().len(), 1);
        // B held only p1; A still holds p2.
        assert!(book.class(B).is_none());
        assert_eq!(book.class(A).expect("in").probes, vec!["p2".to_string()]);
        // A second disarm of a kept point has nothing to take.
        assert!(book.disarmed("p1", false).is_none());
        assert!(!book.is_probe("p1"));
        assert!(book.disarmed("p2", false).is_some());
        assert!(book.class(A).is_none());
    }

    #[test]
    fn respec_replaces_only_a_known_definition() {
        let mut book = Book::new("n".into());
        arm(&mut book, "p1", 100, 7, &[A]);
        book.respec("p1", spec(12));
        let p = book.point("p1").expect("known");
        assert!(matches!(&p.spec.target, Target::Line(l) if l.line == Some(12)));
        book.respec("other", spec(3));
        assert!(book.point("other").is_none());
    }

    #[test]
    fn forget_all_hands_back_every_probe_and_class_and_empties_the_book() {
        let mut book = Book::new("n".into());
        arm(&mut book, "p1", 100, 7, &[A, B]);
        arm(&mut book, "p2", 101, 9, &[A]);
        book.disarmed("p2", true);
        let (lives, classes) = book.forget_all();
        // The kept, unarmed one has no probe in the JVM to switch off.
        assert_eq!(lives.len(), 1);
        let mut names: Vec<_> = classes.iter().map(|(_, c)| c.name.clone()).collect();
        names.sort();
        assert_eq!(names, vec!["c10".to_string(), "c11".to_string()]);
        assert!(book.live().is_empty() && book.class(A).is_none() && !book.is_probe("p2"));
        let (lives, classes) = book.forget_all();
        assert!(lives.is_empty() && classes.is_empty());
    }

    #[test]
    fn reloaded_bytes_and_leftovers_are_kept() {
        let mut book = Book::new("n".into());
        assert!(book.reloaded_bytes(A).is_none());
        book.reloaded(A, Arc::new(vec![1, 2]));
        book.reloaded(A, Arc::new(vec![3]));
        assert_eq!(book.reloaded_bytes(A).expect("kept").as_slice(), &[3]);
        let left = vec![Leftover {
            class: "app.Old".into(),
            outcome: super::super::LeftoverOutcome::Restored,
        }];
        book.set_leftovers(left.clone());
        assert_eq!(book.leftovers(), left);
    }
}
