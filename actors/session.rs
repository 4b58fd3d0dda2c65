//! The Session actor: one per JVM. It owns the four children (Connection,
//! EventDispatch, StopPoints, Watchdog), applies the supervision policy to
//! them, orders state changes (disconnect), and ends as a whole when its
//! JVM goes away. Reads go straight to the Connection through the handle,
//! so they overlap; only state changes pass through this mailbox.

pub mod classes;
pub mod control;
pub mod eval;
mod handle;
pub mod inspect;
pub mod invoke;
pub mod launch;
pub mod mutate;
pub mod render;
pub mod step;
pub mod threads;
pub mod wildcards;

pub use control::{PauseOutcome, ResumeReport, ThreadChange};
pub use handle::{HeldThread, SessionHandle};

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};
use tokio::net::TcpStream;

use crate::actors::connection::{Connection, ConnectionConfig, ConnectionHandle, ConnectionMsg};
use crate::actors::events::{EventDispatch, EventLog, EventsArgs, EventsMsg};
use crate::actors::stop_points::{StopPoints, StopPointsHandle};
use crate::actors::watchdog::{Watchdog, WatchdogArgs, WatchdogMsg};
use crate::jdwp::event_request::ClearAllBreakpoints;
use crate::jdwp::virtual_machine::Dispose;
use crate::jdwp::{Composite, Event, EventKind, RequestId, SuspendPolicy, ThreadId};
use crate::model::{Roots, SessionId, VmInfo};
use classes::ClassCache;
use launch::LaunchedJvm;

/// How many recent events a session remembers for diagnosis.
const RECENT_EVENTS: usize = 64;
/// How many composites a slow event subscriber may fall behind.
const EVENT_SUBSCRIBERS_BACKLOG: usize = 1024;

/// What everyone may read about a session without messaging it.
pub struct SessionShared {
    pub id: SessionId,
    pub host: String,
    pub port: u16,
    pub read_only: bool,
    pub created: Instant,
    pub launched: Option<Arc<LaunchedJvm>>,
    pub roots: Roots,
    vm: OnceLock<VmInfo>,
    dead: Mutex<Option<String>>,
    recent: Mutex<VecDeque<String>>,
    events_seen: AtomicU64,
    /// Sequence number of the last event that suspended something.
    suspending_events: AtomicU64,
    restarts: AtomicU32,
    actor: OnceLock<ActorRef<SessionMsg>>,
    events: tokio::sync::broadcast::Sender<Arc<Composite>>,
    dead_tx: tokio::sync::watch::Sender<bool>,
    /// Threads an event suspended (newest last): the ones methods may be
    /// invoked on. Cleared when they are resumed.
    event_threads: Mutex<Vec<ThreadId>>,
    /// Something may be suspended: set by suspending events, pauses and
    /// thread suspends; cleared when the Watchdog finds nothing held.
    maybe_suspended: std::sync::atomic::AtomicBool,
    /// Requests whose hits suspended something since the last all-clear.
    suspending_requests: Mutex<Vec<(EventKind, RequestId)>>,
    /// Every watchdog rescue, and those not yet shown to the agent.
    rescues: Mutex<Rescues>,
    /// The live step request, if any.
    pub step: step::StepSlot,
    /// Threads the agent holds with debug_suspend_thread: how many times,
    /// since when. `debug_continue` leaves them held.
    held: Mutex<std::collections::HashMap<ThreadId, (u32, Instant)>>,
    /// When something was first suspended since the last all-clear.
    suspended_since: Mutex<Option<Instant>>,
}

/// What one watchdog rescue found and did.
#[derive(Debug, Clone)]
pub struct Rescue {
    /// Threads suspended when the watchdog stepped in, of `total`.
    pub held: usize,
    pub total: usize,
    /// How long the JVM had been suspended.
    pub held_for: Duration,
    /// The limit it passed (`JDWP_WATCHDOG_SECS`).
    pub limit: Duration,
    /// `VirtualMachine.Resume`s sent.
    pub resumes: u32,
    /// Threads still suspended afterwards (0 = verified running).
    pub still_held: usize,
    /// JDWP requests cleared because their hits froze the JVM.
    pub cleared: Vec<RequestId>,
    /// Stop points disabled for the same reason.
    pub disabled: Vec<String>,
}

/// Watchdog rescues of one session.
#[derive(Debug, Default, Clone)]
pub struct Rescues {
    pub all: Vec<Rescue>,
    pub unreported: Vec<Rescue>,
    /// JDWP requests the watchdog cleared.
    pub cleared_requests: Vec<RequestId>,
}

impl SessionShared {
    pub fn new(
        id: SessionId,
        host: &str,
        port: u16,
        read_only: bool,
        launched: Option<Arc<LaunchedJvm>>,
        roots: Roots,
    ) -> Self {
        Self {
            id,
            host: host.to_string(),
            port,
            read_only,
            created: Instant::now(),
            launched,
            roots,
            vm: OnceLock::new(),
            dead: Mutex::new(None),
            recent: Mutex::new(VecDeque::new()),
            events_seen: AtomicU64::new(0),
            suspending_events: AtomicU64::new(0),
            restarts: AtomicU32::new(0),
            actor: OnceLock::new(),
            events: tokio::sync::broadcast::channel(EVENT_SUBSCRIBERS_BACKLOG).0,
            dead_tx: tokio::sync::watch::channel(false).0,
            event_threads: Mutex::new(Vec::new()),
            maybe_suspended: std::sync::atomic::AtomicBool::new(false),
            suspending_requests: Mutex::new(Vec::new()),
            rescues: Mutex::new(Rescues::default()),
            step: step::StepSlot::default(),
            held: Mutex::new(std::collections::HashMap::new()),
            suspended_since: Mutex::new(None),
        }
    }

    pub fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    pub fn vm(&self) -> Option<&VmInfo> {
        self.vm.get()
    }

    /// Why the session ended, or `None` while it lives.
    pub fn dead_reason(&self) -> Option<String> {
        self.dead.lock().ok().and_then(|d| d.clone())
    }

    /// Marks the session dead; the first reason wins.
    pub fn mark_dead(&self, reason: &str) {
        if let Ok(mut d) = self.dead.lock()
            && d.is_none()
        {
            *d = Some(reason.to_string());
        }
        self.dead_tx.send_replace(true);
    }

    /// Resolves once the session is dead.
    pub async fn died(&self) {
        let mut rx = self.dead_tx.subscribe();
        let _ = rx.wait_for(|dead| *dead).await;
    }

    /// Every event composite from now on, decoded (a slow subscriber
    /// misses the oldest ones and is told how many).
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<Arc<Composite>> {
        self.events.subscribe()
    }

    /// Child restarts the supervision policy performed.
    pub fn restarts(&self) -> u32 {
        self.restarts.load(Ordering::Relaxed)
    }

    pub fn events_seen(&self) -> u64 {
        self.events_seen.load(Ordering::Relaxed)
    }

    /// Sequence number of the newest event that suspended threads; a
    /// verifying resume compares it before and after.
    pub fn suspending_events(&self) -> u64 {
        self.suspending_events.load(Ordering::Relaxed)
    }

    pub fn recent_events(&self) -> Vec<String> {
        self.recent
            .lock()
            .map(|r| r.iter().cloned().collect())
            .unwrap_or_default()
    }

    pub fn note_event(&self, line: String) {
        if let Ok(mut r) = self.recent.lock() {
            if r.len() == RECENT_EVENTS {
                r.pop_front();
            }
            r.push_back(line);
        }
    }

    pub fn record_composite(&self, composite: &Composite) {
        self.events_seen
            .fetch_add(composite.events.len() as u64, Ordering::Relaxed);
        if composite.suspend_policy != SuspendPolicy::None {
            self.suspending_events.fetch_add(1, Ordering::Relaxed);
            self.note_suspension();
            if let Ok(mut reqs) = self.suspending_requests.lock() {
                for e in &composite.events {
                    let entry = (e.kind(), e.request_id());
                    if entry.1.0 != 0 && !reqs.contains(&entry) {
                        reqs.push(entry);
                    }
                }
            }
            if let Ok(mut held) = self.event_threads.lock() {
                for t in composite.events.iter().filter_map(Event::thread) {
                    held.retain(|h| *h != t);
                    held.push(t);
                }
            }
        }
        for event in &composite.events {
            self.note_event(format!(
                "{} (suspend {:?})",
                crate::actors::events::describe(event),
                composite.suspend_policy
            ));
        }
        let _ = self.events.send(Arc::new(composite.clone()));
    }

    /// Something may now be suspended (the Watchdog starts watching).
    pub fn note_suspension(&self) {
        self.maybe_suspended.store(true, Ordering::Relaxed);
        if let Ok(mut since) = self.suspended_since.lock()
            && since.is_none()
        {
            *since = Some(Instant::now());
        }
    }

    /// How long something has been suspended, if it is.
    pub fn suspended_for(&self) -> Option<Duration> {
        self.suspended_since
            .lock()
            .ok()
            .and_then(|s| s.map(|at| at.elapsed()))
    }

    pub fn maybe_suspended(&self) -> bool {
        self.maybe_suspended.load(Ordering::Relaxed)
    }

    /// Nothing is suspended any more.
    pub fn all_clear(&self) {
        self.maybe_suspended.store(false, Ordering::Relaxed);
        if let Ok(mut since) = self.suspended_since.lock() {
            *since = None;
        }
        if let Ok(mut reqs) = self.suspending_requests.lock() {
            reqs.clear();
        }
    }

    /// The requests whose hits suspended something since the last
    /// all-clear, emptied.
    pub fn take_suspending_requests(&self) -> Vec<(EventKind, RequestId)> {
        self.suspending_requests
            .lock()
            .map(|mut r| std::mem::take(&mut *r))
            .unwrap_or_default()
    }

    /// Records a watchdog rescue.
    pub fn record_rescue(&self, rescue: Rescue, cleared: Vec<RequestId>) {
        if let Ok(mut r) = self.rescues.lock() {
            r.all.push(rescue.clone());
            r.unreported.push(rescue);
            r.cleared_requests.extend(cleared);
        }
    }

    /// Rescues so far.
    pub fn rescues(&self) -> Rescues {
        self.rescues.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// Rescues the agent has not been told about yet, emptied.
    pub fn take_unreported_rescues(&self) -> Vec<Rescue> {
        self.rescues
            .lock()
            .map(|mut r| std::mem::take(&mut r.unreported))
            .unwrap_or_default()
    }

    /// Records one more agent-requested suspension of `thread`.
    pub fn hold(&self, thread: ThreadId) {
        if let Ok(mut h) = self.held.lock() {
            let e = h.entry(thread).or_insert((0, Instant::now()));
            e.0 += 1;
        }
    }

    /// Records one agent-requested resume of `thread`.
    pub fn release(&self, thread: ThreadId) {
        if let Ok(mut h) = self.held.lock()
            && let Some(e) = h.get_mut(&thread)
        {
            e.0 = e.0.saturating_sub(1);
            if e.0 == 0 {
                h.remove(&thread);
            }
        }
    }

    /// Threads the agent holds: (thread, count, since).
    pub fn held_threads(&self) -> Vec<(ThreadId, u32, Instant)> {
        self.held
            .lock()
            .map(|h| h.iter().map(|(t, (n, at))| (*t, *n, *at)).collect())
            .unwrap_or_default()
    }

    /// Forgets every agent-held thread (after a rescue or a release).
    pub fn release_all(&self) {
        if let Ok(mut h) = self.held.lock() {
            h.clear();
        }
    }

    /// Threads suspended by an event, newest last.
    pub fn event_threads(&self) -> Vec<ThreadId> {
        self.event_threads
            .lock()
            .map(|t| t.clone())
            .unwrap_or_default()
    }

    /// Records that a thread was suspended by an event (a stop point
    /// handled outside the composite path, or a step landing).
    pub fn note_event_thread(&self, thread: ThreadId) {
        if let Ok(mut held) = self.event_threads.lock() {
            held.retain(|h| *h != thread);
            held.push(thread);
        }
    }

    /// Forgets event suspensions: of one thread, or of all (`None`), after
    /// a resume.
    pub fn forget_event_threads(&self, thread: Option<ThreadId>) {
        if let Ok(mut held) = self.event_threads.lock() {
            match thread {
                Some(t) => held.retain(|h| *h != t),
                None => held.clear(),
            }
        }
    }

    /// Asks the Session to end with `reason` (used by the Watchdog).
    pub fn request_end(&self, reason: String) {
        if let Some(actor) = self.actor.get() {
            let _ = actor.send_message(SessionMsg::End(reason));
        }
    }
}

/// What a disconnect released.
#[derive(Debug, Clone, Default)]
pub struct DisconnectReport {
    /// Threads that were suspended when the agent disconnected.
    pub threads_held: usize,
    pub threads_total: usize,
    /// Stop points cleared (their event requests go with Dispose).
    pub stop_points_cleared: usize,
    /// What re-checking the JVM afterwards found.
    pub verification: String,
    /// What happened to a JVM this session launched.
    pub process: Option<String>,
}

/// Messages of the Session actor.
pub enum SessionMsg {
    /// Clear every request, resume every thread (one `Dispose`), end the
    /// session and report what was released.
    /// Carries the caller's span, so the release's JDWP round trips show
    /// under the tool call that asked for it.
    Disconnect(tracing::Span, RpcReplyPort<DisconnectReport>),
    /// End the session with this reason (the JVM stopped answering).
    End(String),
    /// The handles of the children outsiders talk to directly.
    Handles(RpcReplyPort<Handles>),
    /// Test hook: the current EventDispatch and Watchdog, to crash them.
    #[doc(hidden)]
    Children(RpcReplyPort<(ActorRef<EventsMsg>, ActorRef<WatchdogMsg>)>),
}

/// The handles of a session's children that outsiders use directly.
pub type Handles = (
    ConnectionHandle,
    StopPointsHandle,
    Arc<ClassCache>,
    Arc<EventLog>,
);

/// Arguments of a Session.
pub struct SessionArgs {
    pub stream: TcpStream,
    pub config: ConnectionConfig,
    pub shared: Arc<SessionShared>,
    pub watchdog_interval: Duration,
    pub suspend_limit: Option<Duration>,
}

/// The Session actor (configuration only).
pub struct Session;

/// The Session's state: its children and how to restart them.
pub struct SessionCore {
    shared: Arc<SessionShared>,
    connection: ConnectionHandle,
    classes: Arc<ClassCache>,
    events: ActorRef<EventsMsg>,
    stop_points: StopPointsHandle,
    log: Arc<EventLog>,
    watchdog: ActorRef<WatchdogMsg>,
    watchdog_args: WatchdogArgs,
    events_args: EventsArgs,
    ending: bool,
}

impl Session {
    /// Spawns a Session (and its children) linked to `supervisor`.
    pub async fn spawn(
        args: SessionArgs,
        supervisor: ractor::ActorCell,
    ) -> Result<SessionHandle, String> {
        let shared = args.shared.clone();
        let (actor, _) = Actor::spawn_linked(None, Session, args, supervisor)
            .await
            .map_err(|e| e.to_string())?;
        let handles = ractor::call!(actor, SessionMsg::Handles).map_err(|e| e.to_string())?;
        Ok(SessionHandle::new(actor, shared, handles))
    }
}

impl Actor for Session {
    type Msg = SessionMsg;
    type State = SessionCore;
    type Arguments = SessionArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        args: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        let _ = args.shared.actor.set(myself.clone());
        let connection = Connection::spawn(args.stream, args.config, myself.get_cell()).await?;
        let classes = Arc::new(ClassCache::new(connection.clone()));
        classes.set_session(Arc::downgrade(&args.shared));
        // An unloaded class takes its cached members with it. The event
        // names only a signature, and ids may be reused, so the cache
        // starts over.
        {
            let mut events = args.shared.subscribe();
            let classes = classes.clone();
            let shared = args.shared.clone();
            tokio::spawn(async move {
                loop {
                    let next = tokio::select! {
                        _ = shared.died() => break,
                        next = events.recv() => next,
                    };
                    match next {
                        Ok(c) => {
                            if c.events
                                .iter()
                                .any(|e| matches!(e, Event::ClassUnload { .. }))
                            {
                                classes.clear();
                            }
                        }
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => classes.clear(),
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                    }
                }
            });
        }
        let stop_points =
            StopPoints::spawn(connection.clone(), classes.clone(), myself.get_cell()).await?;
        let log = Arc::new(EventLog::default());
        let events_args = EventsArgs {
            connection: connection.clone(),
            session: args.shared.clone(),
            classes: classes.clone(),
            stops: stop_points.clone(),
            log: log.clone(),
        };
        let (events, _) =
            Actor::spawn_linked(None, EventDispatch, events_args.clone(), myself.get_cell())
                .await?;
        connection
            .actor()
            .send_message(ConnectionMsg::SetEventSink(events.clone()))?;
        let watchdog_args = WatchdogArgs {
            connection: connection.clone(),
            session: args.shared.clone(),
            interval: args.watchdog_interval,
            probe_timeout: args.watchdog_interval.max(Duration::from_secs(2)),
            max_misses: 2,
            suspend_limit: args.suspend_limit,
            stops: Some(stop_points.clone()),
        };
        let (watchdog, _) =
            Actor::spawn_linked(None, Watchdog, watchdog_args.clone(), myself.get_cell()).await?;
        Ok(SessionCore {
            shared: args.shared,
            connection,
            classes,
            events,
            stop_points,
            log,
            watchdog,
            watchdog_args,
            events_args,
            ending: false,
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            SessionMsg::Handles(reply) => {
                let _ = reply.send((
                    state.connection.clone(),
                    state.stop_points.clone(),
                    state.classes.clone(),
                    state.log.clone(),
                ));
            }
            SessionMsg::Children(reply) => {
                let _ = reply.send((state.events.clone(), state.watchdog.clone()));
            }
            SessionMsg::End(reason) => {
                state.shared.mark_dead(&reason);
                state.ending = true;
                myself.stop(Some(reason));
            }
            SessionMsg::Disconnect(span, reply) => {
                let report = {
                    use tracing::Instrument;
                    state.disconnect().instrument(span).await
                };
                state.ending = true;
                let _ = reply.send(report);
                myself.stop(Some("disconnected by the agent".into()));
            }
        }
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        myself: ActorRef<Self::Msg>,
        event: SupervisionEvent,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let (cell, failure) = match &event {
            SupervisionEvent::ActorTerminated(cell, _, reason) => (
                cell.clone(),
                reason.clone().unwrap_or_else(|| "stopped".into()),
            ),
            SupervisionEvent::ActorFailed(cell, err) => (cell.clone(), format!("failed: {err}")),
            _ => return Ok(()),
        };
        let id = cell.get_id();
        if id == state.connection.actor().get_id() {
            // Policy: losing the connection ends the session, cleanly.
            let reason = match state.shared.launched.as_ref().and_then(|l| l.exit_status()) {
                Some(status) => format!("the JVM exited ({status})"),
                None => failure,
            };
            state.shared.mark_dead(&reason);
            state.ending = true;
            myself.stop(Some(reason));
        } else if id == state.events.get_id() {
            if state.ending {
                return Ok(());
            }
            // Policy: EventDispatch is restarted; what it records lives in
            // the shared block, and the Connection holds composites that
            // arrive meanwhile.
            tracing::warn!(session = %state.shared.id, %failure, "restarting EventDispatch");
            let (events, _) = Actor::spawn_linked(
                None,
                EventDispatch,
                state.events_args.clone(),
                myself.get_cell(),
            )
            .await?;
            state
                .connection
                .actor()
                .send_message(ConnectionMsg::SetEventSink(events.clone()))?;
            state.events = events;
            state.shared.restarts.fetch_add(1, Ordering::Relaxed);
        } else if id == state.watchdog.get_id() {
            if state.ending {
                return Ok(());
            }
            // Policy: the Watchdog is restarted with the same settings.
            tracing::warn!(session = %state.shared.id, %failure, "restarting Watchdog");
            let (watchdog, _) = Actor::spawn_linked(
                None,
                Watchdog,
                state.watchdog_args.clone(),
                myself.get_cell(),
            )
            .await?;
            state.watchdog = watchdog;
            state.shared.restarts.fetch_add(1, Ordering::Relaxed);
        } else if id == state.stop_points.actor().get_id() && !state.ending {
            // Policy: a registry we can no longer trust is not restarted.
            // Dispose clears every request it armed and resumes the JVM, and
            // the session ends saying why.
            let reason = format!("the stop-point registry {failure}; the JVM was released");
            let _ = state
                .connection
                .send_within(&Dispose, Duration::from_secs(2))
                .await;
            state.shared.mark_dead(&reason);
            state.ending = true;
            myself.stop(Some(reason));
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        _: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        state.shared.mark_dead("the session ended");
        state.connection.actor().stop(None);
        state.events.stop(None);
        state.watchdog.stop(None);
        state.stop_points.actor().stop(None);
        if let Some(jvm) = &state.shared.launched
            && !jvm.detach_on_disconnect
        {
            jvm.terminate().await;
        }
        Ok(())
    }
}

impl SessionCore {
    /// Releases the JVM: no new event can suspend anything (breakpoints
    /// cleared), every suspend count is resumed and verified on the live
    /// connection, then `Dispose` clears whatever else this session armed
    /// and resumes any thread-level suspension left, in one step.
    async fn disconnect(&mut self) -> DisconnectReport {
        // Every request this session armed is cleared first (a traced line
        // would otherwise re-suspend a thread between the resume and
        // Dispose), bounded so a wedged registry cannot hold the JVM.
        let cleared =
            tokio::time::timeout(Duration::from_secs(5), self.stop_points.clear_all()).await;
        let mut report = DisconnectReport {
            stop_points_cleared: cleared.unwrap_or(0),
            ..DisconnectReport::default()
        };
        let _ = self
            .connection
            .send_within(&ClearAllBreakpoints, Duration::from_secs(2))
            .await;
        if let Ok(census) = threads::census(&self.connection).await {
            report.threads_held = census.held;
            report.threads_total = census.total;
        }
        // Leaving: threads the agent held are released too.
        self.shared.release_all();
        report.verification = match control::resume_verified(&self.connection, &self.shared).await {
            Ok(r) if r.still_held == 0 => {
                format!("verified: all {} threads run", r.total)
            }
            Ok(r) => format!(
                "WARNING: {} of {} threads were still suspended after {} resumes; Dispose released the rest",
                r.still_held, r.total, r.resumes
            ),
            Err(e) => format!("could not verify before releasing ({e})"),
        };
        if let Err(e) = self
            .connection
            .send_within(&Dispose, Duration::from_secs(5))
            .await
        {
            report
                .verification
                .push_str(&format!("; Dispose failed: {e}"));
        }
        self.shared.mark_dead("disconnected by the agent");
        report
    }
}
