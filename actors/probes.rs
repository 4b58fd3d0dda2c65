//! Probes: stop points served by the site's own bytecode instead of a JDWP
//! event. The session installs them (a parked thread defines the probe's
//! helper class in the target's loader, then `RedefineClasses` puts the
//! instrumented class in), drains their rings without suspending anything,
//! renews their leases, and puts the original bytes back on clear,
//! disconnect and the next attach. The class-file work is pure and lives in
//! `src/classfile`; this room does the JVM's side of it.
//!
//! The book here is the session's truth about what it changed in the JVM:
//! for each instrumented class its original bytes and the probes in it.

mod arguments;
mod drain;
mod helper;
mod install;
mod leftovers;
mod restore;
mod snapshot;
mod switch;
mod trap;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use drain::spawn_drain;
pub use install::{install, probe_site};
pub use leftovers::{Leftover, restore_leftovers};
pub use restore::{remove, restore_all};
pub use switch::switch;
pub use trap::sync_trap;

use crate::classfile::probe::{ProbeSpec, RecordLayout};
use crate::jdwp::{FieldId, ObjectId, ReferenceTypeId};
use crate::lock::lock;
use crate::model::stop_point::StopPointSpec;
use crate::stop_points::routes::Stats;

/// Records per probe ring (a power of two).
pub const RING: u32 = 16_384;

/// How often the drain reads the rings (and renews the leases).
pub const DRAIN_EVERY: Duration = Duration::from_millis(20);

/// The field ids of one helper class, by the names the class file gives.
#[derive(Debug, Clone, Default)]
pub struct HelperFields {
    pub live: FieldId,
    pub renew: FieldId,
    pub head: FieldId,
    pub tail: FieldId,
    pub passed: FieldId,
    pub seq: FieldId,
    pub prims: FieldId,
    pub refs: FieldId,
    pub times: FieldId,
    pub durs: FieldId,
    pub threads: FieldId,
    pub calls: FieldId,
    pub cost_ns: FieldId,
    pub cost_samples: FieldId,
    pub errors: FieldId,
    pub original: FieldId,
    pub others: FieldId,
    pub restored: FieldId,
    pub throws: FieldId,
    pub hist: FieldId,
}

/// One probe in the JVM.
#[derive(Debug, Clone)]
pub struct Live {
    /// The helper class defined for it.
    pub helper: ReferenceTypeId,
    pub helper_name: String,
    pub fields: HelperFields,
    /// The instrumented class (the helper's loader and package are its).
    pub target: ReferenceTypeId,
    /// The other classes it went into (a write probe's chosen writers).
    pub others: Vec<ReferenceTypeId>,
    pub spec: ProbeSpec,
    pub layout: RecordLayout,
    /// `Class.method:line` (or `Class.method`) for its records.
    pub location: Arc<str>,
    /// Shared with the registry's listing.
    pub stats: Arc<Stats>,
    /// Its stop point's trace settings (`max_hits`, value length).
    pub max_hits: u32,
    pub max_length: usize,
    /// A suspending stop point's probe: its hits reach the agent through
    /// the trap, and its records (which hold nothing) are not traces.
    pub suspends: bool,
    /// What earlier helpers of the same stop point counted (a toggle or an
    /// update installs a new one, whose counters start at zero).
    pub base: Counted,
}

impl Live {
    /// Every class this probe is in.
    pub fn classes(&self) -> impl Iterator<Item = ReferenceTypeId> + '_ {
        std::iter::once(self.target).chain(self.others.iter().copied())
    }

    pub fn covers(&self, class: ReferenceTypeId) -> bool {
        self.classes().any(|c| c == class)
    }
}

/// A stop point's counters as they stood when its current helper went in.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counted {
    pub calls: u64,
    pub drops: u64,
    pub errors: u64,
}

impl Counted {
    pub fn from(stats: &Stats) -> Counted {
        use std::sync::atomic::Ordering::Relaxed;
        Counted {
            calls: stats.probe.calls.load(Relaxed),
            drops: stats.probe.drops.load(Relaxed),
            errors: stats.condition_errors.load(Relaxed),
        }
    }
}

/// A probe-served stop point: its definition, and the probe while armed.
#[derive(Debug, Clone)]
pub struct ProbePoint {
    pub spec: StopPointSpec,
    pub live: Option<Live>,
}

/// A class this session instrumented.
#[derive(Debug, Clone)]
pub struct Instrumented {
    pub name: String,
    pub loader: ObjectId,
    pub original: Arc<Vec<u8>>,
    /// Stop point ids whose probes are in it now.
    pub probes: Vec<String>,
}

#[derive(Debug, Default)]
struct Book {
    points: BTreeMap<String, ProbePoint>,
    classes: BTreeMap<ReferenceTypeId, Instrumented>,
    /// The class file a `debug_reload_class` installed, per class: what
    /// the JVM runs now, which the class roots may not hold.
    reloaded: BTreeMap<ReferenceTypeId, Arc<Vec<u8>>>,
}

/// The session's probes (shared by the handle, the actor and the drain).
#[derive(Debug)]
pub struct Probes {
    book: Mutex<Book>,
    /// Makes helper names unique across jvmscope runs on one JVM.
    nonce: String,
    next: AtomicU32,
    /// What an earlier jvmscope left, restored at attach.
    leftovers: Mutex<Vec<Leftover>>,
}

impl Default for Probes {
    fn default() -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos() ^ (d.as_secs() as u32))
            .unwrap_or(0);
        Self {
            book: Mutex::new(Book::default()),
            nonce: format!("{:08x}", nanos ^ std::process::id().rotate_left(16)),
            next: AtomicU32::new(1),
            leftovers: Mutex::new(Vec::new()),
        }
    }
}

pub use crate::classfile::probe::HELPER_MARK;

impl Probes {
    /// A fresh helper class name in `class`'s package (internal form).
    pub fn helper_name(&self, class: &str) -> String {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        format!("{}{HELPER_MARK}{}${n}", class.replace('.', "/"), self.nonce)
    }

    pub fn set_leftovers(&self, left: Vec<Leftover>) {
        *lock(&self.leftovers) = left;
    }

    pub fn leftovers(&self) -> Vec<Leftover> {
        lock(&self.leftovers).clone()
    }

    pub fn is_probe(&self, id: &str) -> bool {
        lock(&self.book).points.contains_key(id)
    }

    pub fn point(&self, id: &str) -> Option<ProbePoint> {
        lock(&self.book).points.get(id).cloned()
    }

    /// Moves a probe installed under a provisional id to its stop point's
    /// id, counting into the registry's stats from now on.
    pub fn rename(&self, from: &str, to: &str, stats: Arc<Stats>) {
        let mut b = lock(&self.book);
        let Some(mut p) = b.points.remove(from) else {
            return;
        };
        if let Some(l) = &mut p.live {
            l.stats = stats;
            for class in l.classes() {
                if let Some(c) = b.classes.get_mut(&class) {
                    for id in &mut c.probes {
                        if id == from {
                            *id = to.to_string();
                        }
                    }
                }
            }
        }
        b.points.insert(to.to_string(), p);
    }

    /// Notes the class file a reload installed in `target`.
    pub fn reloaded(&self, target: ReferenceTypeId, bytes: Arc<Vec<u8>>) {
        lock(&self.book).reloaded.insert(target, bytes);
    }

    /// The class file a reload installed in `target`, if one did.
    pub fn reloaded_bytes(&self, target: ReferenceTypeId) -> Option<Arc<Vec<u8>>> {
        lock(&self.book).reloaded.get(&target).cloned()
    }

    /// Every armed probe, for the drain.
    pub fn live(&self) -> Vec<(String, Live)> {
        lock(&self.book)
            .points
            .iter()
            .filter_map(|(id, p)| p.live.clone().map(|l| (id.clone(), l)))
            .collect()
    }

    /// The class `target` as instrumented now, if it is.
    pub fn class(&self, target: ReferenceTypeId) -> Option<Instrumented> {
        lock(&self.book).classes.get(&target).cloned()
    }

    /// The probe specs in `target` now (for re-instrumenting), `except` one.
    pub fn specs_in(&self, target: ReferenceTypeId, except: Option<&str>) -> Vec<ProbeSpec> {
        let b = lock(&self.book);
        let Some(c) = b.classes.get(&target) else {
            return Vec::new();
        };
        c.probes
            .iter()
            .filter(|id| Some(id.as_str()) != except)
            .filter_map(|id| b.points.get(id)?.live.as_ref().map(|l| l.spec.clone()))
            .collect()
    }

    /// Replaces a stop point's definition (an update that went in).
    pub fn respec(&self, id: &str, spec: StopPointSpec) {
        if let Some(p) = lock(&self.book).points.get_mut(id) {
            p.spec = spec;
        }
    }

    /// Records an armed probe (each class's entry created with its
    /// original bytes the first time).
    fn armed(
        &self,
        id: &str,
        spec: StopPointSpec,
        live: Live,
        classes: Vec<(ReferenceTypeId, Instrumented)>,
    ) {
        let mut b = lock(&self.book);
        for (target, class) in classes {
            let entry = b.classes.entry(target).or_insert(Instrumented {
                probes: Vec::new(),
                ..class
            });
            if !entry.probes.iter().any(|p| p == id) {
                entry.probes.push(id.to_string());
            }
        }
        b.points.insert(
            id.to_string(),
            ProbePoint {
                spec,
                live: Some(live),
            },
        );
    }

    /// Takes a probe out of the book (its point kept when `keep`, for a
    /// later re-arm); returns what it was.
    fn disarmed(&self, id: &str, keep: bool) -> Option<Live> {
        let mut b = lock(&self.book);
        let live = if keep {
            b.points.get_mut(id).and_then(|p| p.live.take())
        } else {
            b.points.remove(id).and_then(|p| p.live)
        };
        if let Some(l) = &live {
            for class in l.classes() {
                if let Some(c) = b.classes.get_mut(&class) {
                    c.probes.retain(|p| p != id);
                    if c.probes.is_empty() {
                        b.classes.remove(&class);
                    }
                }
            }
        }
        live
    }

    /// Forgets everything (after a restore on leaving).
    fn forget_all(&self) -> (Vec<Live>, Vec<(ReferenceTypeId, Instrumented)>) {
        let mut b = lock(&self.book);
        let lives = std::mem::take(&mut b.points)
            .into_values()
            .filter_map(|p| p.live)
            .collect();
        let classes = std::mem::take(&mut b.classes).into_iter().collect();
        (lives, classes)
    }
}
