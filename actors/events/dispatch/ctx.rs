//! What event dispatch and its capture tasks share: the connection, the
//! caches, the stop points and the log. The walk from an event to its
//! snapshot starts here (`dispatch.rs`); the reads it makes are `Ctx`'s
//! methods in `capture.rs`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{OnceCell, Semaphore};

use crate::actors::connection::ConnectionHandle;
use crate::actors::events::capture::{SharedFold, SlotSet, Thrown};
use crate::actors::events::log::EventLog;
use crate::actors::jvm::classes::ClassCache;
use crate::actors::link::SessionLink;
use crate::actors::stop_points::StopPointsHandle;
use crate::jdwp::{FieldId, Location, ObjectId, ReferenceTypeId, ThreadId};
use crate::model::shown::{MessageGap, Shown};
use crate::model::stop_point::StopPointId;

/// Captures in flight at once (each holds one suspended thread).
pub const CAPTURE_WINDOW: usize = 12;

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
    pub(in crate::actors::events) names: Mutex<HashMap<ThreadId, Arc<str>>>,
    pub(in crate::actors::events) labels: Mutex<HashMap<Location, Arc<str>>>,
    /// The slots each traced location reads (`Ctx::slots`).
    pub(in crate::actors::events) slot_sets: Mutex<HashMap<Location, SlotSet>>,
    pub(in crate::actors::events) throwable: OnceCell<Option<(ReferenceTypeId, FieldId)>>,
    /// Opening monitor events, by stop point and thread.
    pub(in crate::actors::events) monitors:
        Mutex<HashMap<(StopPointId, ThreadId), std::time::Instant>>,
    /// The last exception each exception stop reported, by thread.
    pub(in crate::actors::events) thrown: Mutex<HashMap<(StopPointId, ThreadId), Thrown>>,
    /// Folds of exceptions whose report is not written yet, by stop point
    /// and exception: the thread may throw the next one before the report
    /// of this one is written.
    pub(in crate::actors::events) unwritten: Mutex<HashMap<(StopPointId, ObjectId), SharedFold>>,
    /// Held threads on which something was invoked since the last look:
    /// their frame ids read before the invocation are stale.
    pub(in crate::actors::events) invoked: Mutex<std::collections::HashSet<ThreadId>>,
    /// Helpful NPE texts computed while their thread was held, for the
    /// reports that show them (`Err`: why there is none).
    pub(in crate::actors::events) npe_messages: Mutex<HashMap<ObjectId, Result<Shown, MessageGap>>>,
    /// Taken while deciding whether a hit kept for the agent finds the VM
    /// held already (`dispatch/stack.rs`).
    pub agent_stops: tokio::sync::Mutex<()>,
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
            names: Mutex::new(HashMap::new()),
            labels: Mutex::new(HashMap::new()),
            slot_sets: Mutex::new(HashMap::new()),
            throwable: OnceCell::new(),
            monitors: Mutex::new(HashMap::new()),
            thrown: Mutex::new(HashMap::new()),
            unwritten: Mutex::new(HashMap::new()),
            invoked: Mutex::new(std::collections::HashSet::new()),
            npe_messages: Mutex::new(HashMap::new()),
            agent_stops: tokio::sync::Mutex::new(()),
        }
    }
}
