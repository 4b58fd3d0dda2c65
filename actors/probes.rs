//! Probes: stop points served by the site's own bytecode instead of a JDWP
//! event. The session installs them (a parked thread defines the probe's
//! helper class in the target's loader, then `RedefineClasses` puts the
//! instrumented class in), drains their rings without suspending anything,
//! renews their leases, and puts the original bytes back on clear,
//! disconnect and the next attach. The class-file work is pure and lives in
//! `src/classfile`; this room does the JVM's side of it.
//!
//! The book (`book.rs`) is the session's truth about what it changed in
//! the JVM: for each instrumented class its original bytes and the probes
//! in it. It is the state of the `ProbesBook` actor, a child of the
//! Session; the drain and the arming paths ask it through `ProbesHandle`.

mod arguments;
mod book;
mod drain;
mod helper;
mod install;
mod lease;
mod leftovers;
mod paths;
mod restore;
mod snapshot;
mod switch;
mod trap;

use std::sync::Arc;
use std::time::Duration;

pub use book::{ProbesBook, ProbesHandle, ProbesMsg};
pub use drain::spawn_drain;
pub use install::{install, probe_site};
pub use leftovers::{Leftover, LeftoverOutcome, restore_leftovers};
pub use restore::{Removed, remove, restore_all};
pub use switch::switch;
pub use trap::sync_trap;

use crate::classfile::probe::{ProbeSpec, RecordLayout};
use crate::jdwp::{FieldId, ObjectId, ReferenceTypeId};
use crate::model::stop_point::StopPointSpec;
use crate::stop_points::routes::Stats;

/// Records per probe ring (a power of two).
pub const RING: u32 = 16_384;

/// How the id of a probe installed before its stop point is adopted
/// begins. The drain leaves such a probe alone: its records wait in the
/// ring for the stop point's id, so none is logged under this name, and
/// none is read twice (a round under this name would free the slots it
/// read, and the first round under the adopted id would read them again,
/// emptied).
pub const PENDING: &str = "pending-";

/// How often the drain reads the rings (and renews the leases).
pub const DRAIN_EVERY: Duration = Duration::from_millis(20);

/// The field ids of one helper class, by the names the class file gives.
#[derive(Debug, Clone, Default)]
pub struct HelperFields {
    pub live: FieldId,
    pub renew: FieldId,
    pub head: FieldId,
    pub tail: FieldId,
    pub counts: FieldId,
    pub over: FieldId,
    pub seq: FieldId,
    pub prims: FieldId,
    pub refs: FieldId,
    pub times: FieldId,
    pub durs: FieldId,
    pub threads: FieldId,
    pub who: FieldId,
    pub stripe_threads: FieldId,
    pub cost_ns: FieldId,
    pub cost_samples: FieldId,
    pub cost_clock: FieldId,
    pub errors: FieldId,
    pub last_error: FieldId,
    pub original: FieldId,
    pub others: FieldId,
    pub restored: FieldId,
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
    /// The stop point's hits, the wire's included (a guard's switch).
    pub hits: u64,
    pub calls: u64,
    pub passes: u64,
    pub drops: u64,
    pub errors: u64,
}

impl Counted {
    pub fn from(stats: &Stats) -> Counted {
        use std::sync::atomic::Ordering::Relaxed;
        Counted {
            hits: stats.hits.load(Relaxed),
            calls: stats.probe.calls.load(Relaxed),
            passes: stats.probe.passes.load(Relaxed),
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

pub use crate::classfile::probe::HELPER_MARK;
