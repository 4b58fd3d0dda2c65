//! What event dispatch and its capture tasks share: the connection, the
//! caches, the stop points and the log, and what it remembers across hits
//! (`Memo`, one plain struct behind one lock, taken for a step at a time).
//! The lowest floor of `events/` but one: of its neighbours it imports only
//! `landings`, which imports none. The
//! walk from an event to its snapshot starts at `dispatch.rs`; the reads it
//! makes are `Ctx`'s methods in `capture.rs`.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use tokio::sync::{OnceCell, Semaphore};

use crate::connection::ConnectionHandle;
use crate::error::JdwpError;
use crate::events::landings::Landings;
use crate::events::log::EventLog;
use crate::jdwp::stack_frame::SlotRequest;
use crate::jdwp::{FieldId, FrameInfo, Location, ObjectId, ReferenceTypeId, ThreadId};
use crate::jvm::classes::{ClassCache, Variables};
use crate::link::SessionLink;
use crate::model::shown::{Detail, MessageGap, Shown};
use crate::model::stop_point::{LocalsChoice, StopPointId};
use crate::stop_points::StopPointsHandle;

/// Captures in flight at once (each holds one suspended thread).
pub const CAPTURE_WINDOW: usize = 12;

/// The last exception a stop point reported on a thread.
pub(in crate::events) struct Thrown {
    pub(in crate::events) exception: ObjectId,
    /// Where the JVM said it would be caught: a rethrow of the instance
    /// comes from that handler.
    pub(in crate::events) catch: Option<Location>,
}

/// Rethrows folded into one exception's report.
#[derive(Debug, Default)]
pub(in crate::events) struct Fold {
    /// The report, once written; later rethrows amend it.
    pub(in crate::events) record: Option<Record>,
    pub(in crate::events) sites: Vec<String>,
    pub(in crate::events) count: u64,
}

#[derive(Debug, Clone, Copy)]
pub(in crate::events) enum Record {
    Trace(u64),
    Event(u64),
}

impl Fold {
    pub(in crate::events) fn detail(&self) -> Detail {
        Detail::Rethrown {
            count: self.count,
            sites: self.sites.clone(),
        }
    }
}

/// What dispatch remembers across hits, behind the one lock of `Ctx`.
/// Every field is a bounded cache or a per-thread note: each method
/// that touches it takes the lock for one step and never across an await.
#[derive(Default)]
pub(in crate::events) struct Memo {
    pub(in crate::events) labels: HashMap<Location, Arc<str>>,
    /// The slots each traced location reads (`Ctx::slots`).
    pub(in crate::events) slot_sets: HashMap<Location, SlotSet>,
    /// Opening monitor events, by stop point and thread.
    pub(in crate::events) monitors: HashMap<(StopPointId, ThreadId), std::time::Instant>,
    /// The last exception each exception stop reported, by thread.
    pub(in crate::events) thrown: HashMap<(StopPointId, ThreadId), Thrown>,
    /// The rethrows folded into each reported exception, by stop point and
    /// exception: the thread may throw the next one before the report of
    /// this one is written, so a fold outlives its `thrown` entry.
    pub(in crate::events) folds: HashMap<(StopPointId, ObjectId), Fold>,
    /// Held threads on which something was invoked since the last look:
    /// their frame ids read before the invocation are stale.
    pub(in crate::events) invoked: HashSet<ThreadId>,
    /// Helpful NPE texts computed while their thread was held, for the
    /// reports that show them (`Err`: why there is none).
    pub(in crate::events) npe_messages: HashMap<ObjectId, Result<Shown, MessageGap>>,
}

/// Inserts into a cache that is emptied when it reaches `cap` entries
/// (threads, locations and exceptions come and go; the map must not grow
/// for ever, and a miss only costs a read).
pub(in crate::events) fn remember<K: std::hash::Hash + Eq, V>(
    map: &mut HashMap<K, V>,
    cap: usize,
    key: K,
    value: V,
) {
    if map.len() >= cap {
        map.clear();
    }
    map.insert(key, value);
}

/// A `Frames` request in flight.
pub type FramesReply =
    std::pin::Pin<Box<dyn Future<Output = Result<Vec<FrameInfo>, JdwpError>> + Send>>;

/// A local chosen for capture: its name, declared signature and slot.
#[derive(Debug, Clone)]
pub struct Slot {
    pub name: Arc<str>,
    pub request: SlotRequest,
}

/// The slots a locals choice reads at one location, worked out once per
/// variable table (a redefinition brings a new table, and a new set).
pub(in crate::events) struct SlotSet {
    pub(in crate::events) vars: Arc<Variables>,
    pub(in crate::events) choice: LocalsChoice,
    pub(in crate::events) slots: Arc<[Slot]>,
}

/// Everything a capture needs, shared by EventDispatch and its capture
/// tasks.
pub struct Ctx {
    pub conn: ConnectionHandle,
    pub classes: Arc<ClassCache>,
    pub session: SessionLink,
    pub stops: StopPointsHandle,
    pub log: Arc<EventLog>,
    /// Bounds the captures in flight.
    pub window: Arc<Semaphore>,
    pub(in crate::events) throwable: OnceCell<Option<(ReferenceTypeId, FieldId)>>,
    /// What dispatch remembers across hits, under one lock.
    pub(in crate::events) memo: Mutex<Memo>,
    /// Taken while deciding whether a hit kept for the agent finds the VM
    /// held already (`dispatch/stack.rs`).
    pub agent_stops: tokio::sync::Mutex<()>,
    /// Steps out of a suspending probe's trap, awaiting their events.
    pub(in crate::events) landings: Landings,
}

impl Ctx {
    pub fn new(
        conn: ConnectionHandle,
        classes: Arc<ClassCache>,
        session: SessionLink,
        stops: StopPointsHandle,
        log: Arc<EventLog>,
    ) -> Self {
        Self {
            conn,
            classes,
            session,
            stops,
            log,
            window: Arc::new(Semaphore::new(CAPTURE_WINDOW)),
            throwable: OnceCell::new(),
            memo: Mutex::new(Memo::default()),
            agent_stops: tokio::sync::Mutex::new(()),
            landings: Landings::default(),
        }
    }
}
