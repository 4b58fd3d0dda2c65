//! The StopPoints actor: the registry of every stop point under our own
//! ids (`bp_…`, `exc_…`, `watch_…`, `mexit_…`, `mon_…`, families
//! `bpset_…`) and the JDWP requests each holds. Its state is the truth
//! about what this session armed in the JVM; EventDispatch reads the
//! routing table it publishes and tells it when a class loads, a count
//! fires or a budget runs out.
//!
//! The actor is a thin shell: `registry` is the plain state, `arm` resolves
//! definitions into requests, `ops` sequences the two, `routes` is the
//! table shared with EventDispatch.

pub mod arm;
pub mod exprs;
pub mod guard;
pub mod names;
pub mod ops;
pub mod registry;
pub mod routes;

use std::sync::Arc;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};

use crate::connection::ConnectionHandle;
use crate::jdwp::thread_reference::Resume;
use crate::jdwp::{SuspendPolicy, TaggedTypeId, ThreadId};
use crate::jvm::classes::ClassCache;
use crate::model::overhead::{Budgets, Overspent};
use crate::model::stop_point::{ArmNote, StopKind, StopPointId, StopPointSpec, StopState};

pub use arm::ArmError;
pub use guard::{Guard, Handoff, Paused};
use ops::{Book, Io};
pub use registry::{CountMode, WatchState};
pub use routes::{Cost, ProbeCost, RequestKey, RouteTable};

/// One stop point as replies show it.
#[derive(Debug, Clone)]
pub struct PointView {
    pub id: String,
    pub kind: StopKind,
    pub target: String,
    pub spec: StopPointSpec,
    pub state: StopState,
    /// The suspend policy its hit requests are armed with.
    pub policy: SuspendPolicy,
    pub count_mode: Option<CountMode>,
    pub hits: u64,
    /// Snapshots taken, since it was defined.
    pub captured: u64,
    /// Snapshots taken since it was last armed: its trace budget's use.
    pub budget_used: u64,
    pub over_budget: u64,
    pub discarded: u64,
    pub below_threshold: u64,
    /// Rethrows folded into the report of their first throw.
    pub rethrows: u64,
    /// Its `instance_id` object was garbage collected (checked when
    /// listing): re-arming it would fail.
    pub instance_collected: bool,
    pub overridden_hits: u64,
    pub condition_errors: u64,
    pub condition_false: u64,
    /// Conditions that were true.
    pub condition_passed: u64,
    /// The condition's operands as last read on a false evaluation.
    pub last_operands: routes::Operands,
    pub counted: u64,
    /// Suspension-free hits counted but not recorded (EventDispatch lagged).
    pub shed: u64,
    pub last_error: Option<String>,
    /// Paused by the overhead guard (disarmed, definition and counters
    /// kept) until re-armed.
    pub paused: Option<Overspent>,
    /// Its overhead budget, in percent of one thread's time (0 = none).
    pub budget_pct: u32,
    /// Disabled by itself after `CONDITION_ERROR_LIMIT` condition errors in
    /// a row.
    pub stopped_by_errors: bool,
    pub cost: Cost,
    /// Threads its condition or trace expressions left inside a call
    /// that could not be cancelled (each one all of a thread's time).
    pub invoking: usize,
    /// Served by a probe in the class's bytecode: what it measured.
    pub probe: Option<routes::ProbeCost>,
    pub locations: usize,
    pub copies: usize,
    pub loaders: usize,
    pub loader_ids: Vec<u64>,
    /// Copies armed after the arm reply (later class loads).
    pub later: usize,
    /// Its class-load watch is armed.
    pub watching: bool,
    pub family: Option<String>,
    /// Armed suspending stop points at the same location.
    pub overridden_by: Vec<String>,
    pub notes: Vec<ArmNote>,
}

/// A wildcard family as replies show it.
#[derive(Debug, Clone)]
pub struct FamilyView {
    pub id: String,
    pub pattern: String,
    pub method: Option<String>,
    /// (stop point id, class).
    pub members: Vec<(String, String)>,
    pub max_classes: usize,
    pub watch: WatchState,
    pub left_out: usize,
    pub without_method: usize,
    pub joined_later: usize,
}

/// Every stop point and family.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    pub points: Vec<PointView>,
    pub families: Vec<FamilyView>,
}

/// What arming did.
#[derive(Debug, Clone)]
pub struct ArmReport {
    pub point: Option<PointView>,
    pub family: Option<FamilyView>,
    /// Deferral, suggestions, refused copies, overrides.
    pub notes: Vec<ArmNote>,
}

/// What clearing did.
#[derive(Debug, Clone)]
pub struct ClearReport {
    pub id: String,
    /// JDWP requests cleared (0 for a spent stop point).
    pub requests_cleared: usize,
    /// Family members cleared with it.
    pub members: usize,
    pub note: Option<ArmNote>,
}

/// What a toggle did.
#[derive(Debug, Clone)]
pub struct ToggleReport {
    pub id: String,
    pub enabled: bool,
    pub notes: Vec<ArmNote>,
    pub point: Option<PointView>,
}

/// Messages of StopPoints.
pub enum StopPointsMsg {
    /// Arm a new stop point (a family for a line class with `*`).
    Arm {
        spec: Box<StopPointSpec>,
        max_classes: usize,
        reply: RpcReplyPort<Result<ArmReport, ArmError>>,
    },
    /// Clear a stop point or a family.
    Clear(String, RpcReplyPort<Result<ClearReport, ArmError>>),
    /// Disable or re-arm (`None` flips).
    Toggle(
        String,
        Option<bool>,
        RpcReplyPort<Result<ToggleReport, ArmError>>,
    ),
    /// Replace a definition (same id, counters kept) and re-arm it.
    Update(
        String,
        Box<StopPointSpec>,
        RpcReplyPort<Result<ArmReport, ArmError>>,
    ),
    /// The definition of one stop point.
    Spec(String, RpcReplyPort<Option<StopPointSpec>>),
    /// Clear every stop point and family; answers how many stop points.
    ClearAll(RpcReplyPort<usize>),
    /// How many stop points are registered.
    Count(RpcReplyPort<usize>),
    /// Every stop point and family.
    List(RpcReplyPort<Listing>),
    /// Classes watches wait for were prepared; `held` when the loading
    /// thread is suspended for us and must be resumed once they are armed.
    ClassPrepared {
        events: Vec<(RequestKey, TaggedTypeId, String)>,
        thread: ThreadId,
        held: bool,
    },
    /// A request with a JDWP `Count` fired; the JVM deleted it.
    Fired(RequestKey),
    /// A stop point spent itself (budget used, hit count reached here).
    Finished(StopPointId, String),
    /// Register a stop point a probe serves (installed by the session):
    /// it holds no JDWP request.
    Adopt {
        spec: Box<StopPointSpec>,
        notes: Vec<ArmNote>,
        reply: RpcReplyPort<(ArmReport, Arc<routes::Stats>)>,
    },
    /// Set a probe-served stop point's state (the session changed the
    /// class) and, after an update, its definition; answers whether it
    /// exists.
    Mark {
        id: String,
        state: StopState,
        spec: Option<Box<StopPointSpec>>,
        reply: RpcReplyPort<bool>,
    },
    /// The counters of one stop point.
    Stats(String, RpcReplyPort<Option<Arc<routes::Stats>>>),
    /// Hands a paused wire stop point to the probe put in for it.
    BecomeProbe {
        id: String,
        note: ArmNote,
        reply: RpcReplyPort<bool>,
    },
    /// Sets (or takes out) a suspending probe's trap breakpoint.
    Trap {
        id: String,
        at: Option<crate::jdwp::Location>,
        reply: RpcReplyPort<Result<(), ArmError>>,
    },
}

/// A typed handle on the StopPoints actor, plus the table it publishes.
#[derive(Clone)]
pub struct StopPointsHandle {
    actor: ActorRef<StopPointsMsg>,
    table: Arc<RouteTable>,
    guard: Arc<Guard>,
}

impl StopPointsHandle {
    pub fn actor(&self) -> &ActorRef<StopPointsMsg> {
        &self.actor
    }

    /// The routing table EventDispatch reads.
    pub fn table(&self) -> &Arc<RouteTable> {
        &self.table
    }

    /// The session's overhead guard.
    pub fn guard(&self) -> &Arc<Guard> {
        &self.guard
    }

    fn gone() -> ArmError {
        ArmError::RegistryGone
    }

    pub async fn arm(
        &self,
        spec: StopPointSpec,
        max_classes: usize,
    ) -> Result<ArmReport, ArmError> {
        ractor::call!(self.actor, |reply| StopPointsMsg::Arm {
            spec: Box::new(spec),
            max_classes,
            reply,
        })
        .map_err(|_| Self::gone())?
    }

    pub async fn clear(&self, id: &str) -> Result<ClearReport, ArmError> {
        ractor::call!(self.actor, StopPointsMsg::Clear, id.to_string()).map_err(|_| Self::gone())?
    }

    pub async fn toggle(&self, id: &str, enabled: Option<bool>) -> Result<ToggleReport, ArmError> {
        ractor::call!(self.actor, StopPointsMsg::Toggle, id.to_string(), enabled)
            .map_err(|_| Self::gone())?
    }

    pub async fn update(&self, id: &str, spec: StopPointSpec) -> Result<ArmReport, ArmError> {
        ractor::call!(
            self.actor,
            StopPointsMsg::Update,
            id.to_string(),
            Box::new(spec)
        )
        .map_err(|_| Self::gone())?
    }

    pub async fn spec(&self, id: &str) -> Option<StopPointSpec> {
        ractor::call!(self.actor, StopPointsMsg::Spec, id.to_string())
            .ok()
            .flatten()
    }

    pub async fn clear_all(&self) -> usize {
        ractor::call!(self.actor, StopPointsMsg::ClearAll).unwrap_or(0)
    }

    pub async fn count(&self) -> usize {
        ractor::call!(self.actor, StopPointsMsg::Count).unwrap_or(0)
    }

    /// Registers a stop point a probe serves; its counters are the
    /// returned stats, which the probe's drain keeps.
    pub async fn adopt(
        &self,
        spec: StopPointSpec,
        notes: Vec<ArmNote>,
    ) -> Result<(ArmReport, Arc<routes::Stats>), ArmError> {
        ractor::call!(self.actor, |reply| StopPointsMsg::Adopt {
            spec: Box::new(spec),
            notes,
            reply,
        })
        .map_err(|_| Self::gone())
    }

    /// The counters of one stop point (a probe's drain writes into them).
    pub async fn stats(&self, id: &str) -> Option<Arc<routes::Stats>> {
        ractor::call!(self.actor, StopPointsMsg::Stats, id.to_string())
            .ok()
            .flatten()
    }

    /// Sets a probe-served stop point's state.
    pub async fn mark(&self, id: &str, state: StopState) -> bool {
        self.mark_as(id, state, None).await
    }

    /// Sets a probe-served stop point's state and, when given, the
    /// definition its new probe was installed from.
    pub async fn mark_as(&self, id: &str, state: StopState, spec: Option<StopPointSpec>) -> bool {
        ractor::call!(self.actor, |reply| StopPointsMsg::Mark {
            id: id.to_string(),
            state,
            spec: spec.map(Box::new),
            reply,
        })
        .unwrap_or(false)
    }

    /// Hands a paused wire stop point to the probe the session put in for
    /// it (false: it is gone or still armed on the wire).
    pub async fn become_probe(&self, id: &str, note: ArmNote) -> bool {
        ractor::call!(self.actor, |reply| StopPointsMsg::BecomeProbe {
            id: id.to_string(),
            note,
            reply,
        })
        .unwrap_or(false)
    }

    /// Routes a suspending probe's hits from the breakpoint at `at`, its
    /// helper's trap (`None`: the probe is out, the trap goes too).
    pub async fn trap(&self, id: &str, at: Option<crate::jdwp::Location>) -> Result<(), ArmError> {
        ractor::call!(self.actor, |reply| StopPointsMsg::Trap {
            id: id.to_string(),
            at,
            reply,
        })
        .unwrap_or_else(|_| Err(ArmError::Internal("the stop points actor is gone")))
    }

    /// One stop point as the listing shows it.
    pub async fn view(&self, id: &str) -> Option<PointView> {
        self.list().await.points.into_iter().find(|p| p.id == id)
    }

    pub async fn list(&self) -> Listing {
        ractor::call!(self.actor, StopPointsMsg::List).unwrap_or_default()
    }

    /// The listing, or `None` when the registry no longer answers (its
    /// session is ending): an empty listing would say "no stop points".
    pub async fn try_list(&self) -> Option<Listing> {
        ractor::call!(self.actor, StopPointsMsg::List).ok()
    }
}

/// What the StopPoints actor starts from.
pub struct StopPointsArgs {
    pub connection: ConnectionHandle,
    pub classes: Arc<ClassCache>,
    pub table: Arc<RouteTable>,
    pub guard: Arc<Guard>,
}

/// The StopPoints actor (configuration only).
pub struct StopPoints;

impl StopPoints {
    /// Spawns the registry linked to `supervisor`.
    pub async fn spawn(
        connection: ConnectionHandle,
        classes: Arc<ClassCache>,
        budgets: Budgets,
        supervisor: ractor::ActorCell,
    ) -> Result<StopPointsHandle, ractor::SpawnErr> {
        let table = Arc::new(RouteTable::default());
        let guard = Arc::new(Guard::new(budgets));
        let args = StopPointsArgs {
            connection,
            classes,
            table: table.clone(),
            guard: guard.clone(),
        };
        let (actor, _) = Actor::spawn_linked(None, StopPoints, args, supervisor).await?;
        Ok(StopPointsHandle {
            actor,
            table,
            guard,
        })
    }
}

impl Actor for StopPoints {
    type Msg = StopPointsMsg;
    type State = Book;
    type Arguments = StopPointsArgs;

    async fn pre_start(
        &self,
        _: ActorRef<Self::Msg>,
        args: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(Book::new(Io {
            conn: args.connection,
            classes: args.classes,
            table: args.table,
            guard: args.guard,
        }))
    }

    async fn handle(
        &self,
        _: ActorRef<Self::Msg>,
        message: Self::Msg,
        book: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            StopPointsMsg::Arm {
                spec,
                max_classes,
                reply,
            } => {
                let _ = reply.send(book.arm(*spec, max_classes).await);
            }
            StopPointsMsg::Clear(id, reply) => {
                let _ = reply.send(book.clear(&id).await);
            }
            StopPointsMsg::Toggle(id, enabled, reply) => {
                let _ = reply.send(book.toggle(&id, enabled).await);
            }
            StopPointsMsg::Update(id, spec, reply) => {
                let _ = reply.send(book.update(&id, *spec).await);
            }
            StopPointsMsg::Spec(id, reply) => {
                let _ = reply.send(book.spec(&id));
            }
            StopPointsMsg::ClearAll(reply) => {
                let _ = reply.send(book.clear_everything().await);
            }
            StopPointsMsg::Count(reply) => {
                let _ = reply.send(book.reg.len());
            }
            StopPointsMsg::List(reply) => {
                let mut listing = book.listing();
                book.mark_collected(&mut listing).await;
                let _ = reply.send(listing);
            }
            StopPointsMsg::ClassPrepared {
                events,
                thread,
                held,
            } => {
                book.class_prepared(events).await;
                // Whatever arming did, the loading thread is released: a
                // thread held for us and never resumed is a hung request.
                if held {
                    let _ = book.io.conn.send(&Resume { thread }).await;
                }
            }
            StopPointsMsg::Fired(key) => book.fired(key).await,
            StopPointsMsg::Finished(id, reason) => book.finish(&id.0, reason).await,
            StopPointsMsg::Adopt { spec, notes, reply } => {
                let _ = reply.send(book.adopt(*spec, notes));
            }
            StopPointsMsg::Stats(id, reply) => {
                let _ = reply.send(book.reg.point(&id).map(|p| p.stats.clone()));
            }
            StopPointsMsg::Mark {
                id,
                state,
                spec,
                reply,
            } => {
                let _ = reply.send(book.mark(&id, state, spec.map(|s| *s)));
            }
            StopPointsMsg::BecomeProbe { id, note, reply } => {
                let _ = reply.send(book.become_probe(&id, note));
            }
            StopPointsMsg::Trap { id, at, reply } => {
                let _ = reply.send(book.trap(&id, at).await);
            }
        }
        Ok(())
    }
}
