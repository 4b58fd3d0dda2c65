//! The Session actor: one per JVM. It owns the four children (Connection,
//! EventDispatch, StopPoints, Watchdog), applies the supervision policy to
//! them, orders state changes (disconnect), and ends as a whole when its
//! JVM goes away. Reads go straight to the Connection through the handle,
//! so they overlap; only state changes pass through this mailbox.

pub mod control;
pub mod diagnose;
mod guard;
mod handle;
pub mod ledger;
pub mod mutate;
pub mod reload;
pub mod stack;
pub mod startup;
mod stops;
pub mod traces;

pub use crate::door::HeldThread;
pub use crate::link::port::{LedgerMsg, PortMsg, SessionRef};
pub use crate::link::{EventBus, Lifeline, Rescue, RescueLog, Rescues, SessionInfo, SessionLink};
pub use control::{PauseOutcome, ResumeReport, ThreadChange};
pub use handle::SessionHandle;
pub use ledger::Ledger;

use std::sync::Arc;
use std::time::Duration;

use crate::connection::{Connection, ConnectionConfig, ConnectionHandle, ConnectionMsg, Transport};
use crate::error::SpawnError;
use crate::events::{EventDispatch, EventLog, EventsArgs, EventsMsg};
use crate::jdwp::event_request::ClearAllBreakpoints;
use crate::jdwp::virtual_machine::Dispose;
use crate::jdwp::{Event, EventKind};
use crate::jvm::classes::ClassCache;
use crate::model::session::ReleaseCheck;
use crate::stop_points::{StopPoints, StopPointsHandle};
use crate::watchdog::{Watchdog, WatchdogArgs, WatchdogMsg};
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};

/// How long a session whose launched JVM dropped the connection waits for
/// the process to exit, to report how it ended.
const LAUNCHED_EXIT_WAIT: Duration = Duration::from_secs(2);

/// What a disconnect released.
#[derive(Debug, Clone)]
pub struct DisconnectReport {
    /// Threads that were suspended when the agent disconnected, by
    /// anyone (the JVM's count).
    pub threads_held: usize,
    /// Of those, the threads this session held by its suspend ledger.
    pub held_by_us: usize,
    pub threads_total: usize,
    /// Stop points cleared (their event requests go with Dispose).
    pub stop_points_cleared: usize,
    /// What re-checking the JVM afterwards found.
    pub verification: ReleaseCheck,
    /// Why the final `Dispose` failed, when it did.
    pub dispose_failed: Option<String>,
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
    /// Resume the whole suspend depth and verify it (ordered with every
    /// other change to who holds which thread).
    ResumeAll(
        tracing::Span,
        RpcReplyPort<Result<ResumeReport, crate::error::JdwpError>>,
    ),
    /// A change to the suspension ledger, or a question to it.
    Ledger(LedgerMsg),
    /// Child restarts the supervision policy performed.
    Restarts(RpcReplyPort<u32>),
    /// Test hook: the current EventDispatch and Watchdog, to crash them.
    #[doc(hidden)]
    Children(RpcReplyPort<(ActorRef<EventsMsg>, ActorRef<WatchdogMsg>)>),
}

impl From<PortMsg> for SessionMsg {
    fn from(msg: PortMsg) -> Self {
        match msg {
            PortMsg::Ledger(m) => Self::Ledger(m),
            PortMsg::End(reason) => Self::End(reason),
        }
    }
}

/// Gives a port message back when the Session's mailbox refused it.
impl TryFrom<SessionMsg> for PortMsg {
    type Error = SessionMsg;

    fn try_from(msg: SessionMsg) -> Result<Self, SessionMsg> {
        match msg {
            SessionMsg::Ledger(m) => Ok(Self::Ledger(m)),
            SessionMsg::End(reason) => Ok(Self::End(reason)),
            other => Err(other),
        }
    }
}

/// The handles of a session's children that outsiders use directly.
pub type Handles = (
    ConnectionHandle,
    StopPointsHandle,
    Arc<ClassCache>,
    Arc<EventLog>,
    SessionLink,
    crate::probes::ProbesHandle,
);

/// Arguments of a Session.
pub struct SessionArgs {
    pub stream: Transport,
    pub config: ConnectionConfig,
    pub info: Arc<SessionInfo>,
    pub watchdog_interval: Duration,
    pub suspend_limit: Option<Duration>,
    pub overhead: crate::model::overhead::Budgets,
}

/// The Session actor (configuration only).
pub struct Session;

/// The Session's state: its children and how to restart them.
pub struct SessionCore {
    info: Arc<SessionInfo>,
    link: SessionLink,
    /// Who holds which thread, and why: owned here and nowhere else.
    ledger: Ledger,
    restarts: u32,
    connection: ConnectionHandle,
    classes: Arc<ClassCache>,
    events: ActorRef<EventsMsg>,
    stop_points: StopPointsHandle,
    log: Arc<EventLog>,
    /// What this session changed in the JVM's code (the probe book).
    probes: crate::probes::ProbesHandle,
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
    ) -> Result<SessionHandle, SpawnError> {
        let info = args.info.clone();
        let (actor, _) = Actor::spawn_linked(None, Session, args, supervisor)
            .await
            .map_err(|e| SpawnError::Actor(e.to_string()))?;
        let handles = ractor::call!(actor, SessionMsg::Handles)
            .map_err(|e| SpawnError::Actor(e.to_string()))?;
        Ok(SessionHandle::new(actor, info, handles))
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
        let link = SessionLink {
            id: args.info.id.clone(),
            session: SessionRef::new(myself.get_derived()),
            bus: Arc::new(EventBus::default()),
            life: Arc::new(Lifeline::default()),
            rescues: Arc::new(RescueLog::default()),
        };
        let connection = Connection::spawn(args.stream, args.config, myself.get_cell()).await?;
        let classes = Arc::new(ClassCache::new(connection.clone()));
        classes.set_session(link.clone());
        // An unloaded class takes its cached members with it. The event
        // names only a signature, and ids may be reused, so the cache
        // starts over.
        {
            let mut events = link.bus.subscribe();
            let classes = classes.clone();
            let life = link.life.clone();
            tokio::spawn(async move {
                loop {
                    let next = tokio::select! {
                        _ = life.died() => break,
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
        let stop_points = StopPoints::spawn(
            connection.clone(),
            classes.clone(),
            args.overhead,
            myself.get_cell(),
        )
        .await?;
        let probes = crate::probes::ProbesBook::spawn(myself.get_cell()).await?;
        let log = Arc::new(EventLog::default());
        let events_args = EventsArgs {
            connection: connection.clone(),
            session: link.clone(),
            classes: classes.clone(),
            stops: stop_points.clone(),
            log: log.clone(),
        };
        let (events, _) =
            Actor::spawn_linked(None, EventDispatch, events_args.clone(), myself.get_cell())
                .await?;
        connection
            .actor()
            .send_message(ConnectionMsg::SetEventSink(events.get_derived()))?;
        let watchdog_args = WatchdogArgs {
            connection: connection.clone(),
            session: link.clone(),
            interval: args.watchdog_interval,
            probe_timeout: args.watchdog_interval.max(Duration::from_secs(2)),
            max_misses: 2,
            suspend_limit: args.suspend_limit,
            stops: Some(stop_points.clone()),
        };
        let (watchdog, _) =
            Actor::spawn_linked(None, Watchdog, watchdog_args.clone(), myself.get_cell()).await?;
        Ok(SessionCore {
            info: args.info,
            link,
            ledger: Ledger::default(),
            restarts: 0,
            connection,
            classes,
            events,
            stop_points,
            log,
            probes,
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
                    state.link.clone(),
                    state.probes.clone(),
                ));
            }
            SessionMsg::Ledger(msg) => state.ledger.apply(msg),
            SessionMsg::Restarts(reply) => {
                let _ = reply.send(state.restarts);
            }
            SessionMsg::ResumeAll(span, reply) => {
                use tracing::Instrument;
                let report = state.resume_all().instrument(span).await;
                let _ = reply.send(report);
            }
            SessionMsg::Children(reply) => {
                let _ = reply.send((state.events.clone(), state.watchdog.clone()));
            }
            SessionMsg::End(reason) => {
                state.link.life.mark_dead(&reason);
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
            // A launched JVM closes its socket a moment before it exits:
            // wait (bounded) for the exit, so the reason is how it ended
            // rather than "connection reset".
            let exited = match &state.info.launched {
                Some(jvm) => {
                    let (status, _) = jvm.exit_and_output(LAUNCHED_EXIT_WAIT).await;
                    (status != "still running").then_some(status)
                }
                None => None,
            };
            let reason = match exited {
                Some(status) => format!("the JVM exited ({status})"),
                None => failure,
            };
            state.link.life.mark_dead(&reason);
            state.ending = true;
            myself.stop(Some(reason));
        } else if id == state.events.get_id() {
            if state.ending {
                return Ok(());
            }
            // Policy: EventDispatch is restarted; what it records lives in
            // the event bus and the ledger, and the Connection holds composites that
            // arrive meanwhile.
            tracing::warn!(session = %state.info.id, %failure, "restarting EventDispatch");
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
                .send_message(ConnectionMsg::SetEventSink(events.get_derived()))?;
            state.events = events;
            state.restarts += 1;
        } else if id == state.watchdog.get_id() {
            if state.ending {
                return Ok(());
            }
            // Policy: the Watchdog is restarted with the same settings.
            tracing::warn!(session = %state.info.id, %failure, "restarting Watchdog");
            let (watchdog, _) = Actor::spawn_linked(
                None,
                Watchdog,
                state.watchdog_args.clone(),
                myself.get_cell(),
            )
            .await?;
            state.watchdog = watchdog;
            state.restarts += 1;
        } else if id == state.stop_points.actor().get_id() && !state.ending {
            // Policy: a registry we can no longer trust is not restarted.
            // Dispose clears every request it armed and resumes the JVM, and
            // the session ends saying why.
            let reason = format!("the stop-point registry {failure}; the JVM was released");
            let _ = state
                .connection
                .send_within(&Dispose, Duration::from_secs(2))
                .await;
            state.link.life.mark_dead(&reason);
            state.ending = true;
            myself.stop(Some(reason));
        } else if id == state.probes.actor().get_id() && !state.ending {
            // Policy: a lost probe book is not restarted (what it knew of
            // the JVM's code is gone). Each helper in the JVM holds its
            // class's original bytes, so the classes go back as an earlier
            // jvmscope's leftovers would; Dispose releases the JVM, and
            // the session ends saying why.
            let reason = format!("the probe book {failure}; the JVM was released");
            state.ending = true;
            let _ = tokio::time::timeout(
                Duration::from_secs(5),
                crate::probes::restore_leftovers(
                    &state.connection,
                    &state.classes,
                    state.info.read_only,
                ),
            )
            .await;
            let _ = state
                .connection
                .send_within(&Dispose, Duration::from_secs(2))
                .await;
            state.link.life.mark_dead(&reason);
            myself.stop(Some(reason));
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        _: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        state.link.life.mark_dead("the session ended");
        state.connection.actor().stop(None);
        state.events.stop(None);
        state.watchdog.stop(None);
        state.stop_points.actor().stop(None);
        state.probes.actor().stop(None);
        if let Some(jvm) = &state.info.launched
            && !jvm.detach_on_disconnect
        {
            jvm.terminate().await;
        }
        Ok(())
    }
}

impl SessionCore {
    /// Clears a pending step (it would fire as soon as threads run), then
    /// resumes the whole suspend depth and verifies it.
    async fn resume_all(&mut self) -> Result<ResumeReport, crate::error::JdwpError> {
        if let Some(step) = self.ledger.replace_step(None) {
            let _ = self
                .connection
                .send(&crate::jdwp::event_request::Clear {
                    event_kind: EventKind::SingleStep,
                    request_id: step,
                })
                .await;
        }
        control::resume_verified(&self.connection, &mut self.ledger, &self.link.bus).await
    }

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
        // Every class a probe changed gets its own bytes back.
        let _ = tokio::time::timeout(
            Duration::from_secs(5),
            crate::probes::restore_all(&self.connection, &self.classes, &self.probes),
        )
        .await;
        let cleared_all = self
            .connection
            .send_within(&ClearAllBreakpoints, Duration::from_secs(2))
            .await;
        if let Err(e @ crate::error::JdwpError::Timeout { .. }) = cleared_all {
            // A JVM that does not answer would leave every later step to
            // its own timeout. Closing the socket, which ending the session
            // does, makes its agent clear every request and resume every
            // thread whenever it runs again.
            self.ledger.release_all();
            self.link.life.mark_dead("disconnected by the agent");
            return DisconnectReport {
                threads_held: 0,
                held_by_us: 0,
                threads_total: 0,
                stop_points_cleared: cleared.unwrap_or(0),
                verification: ReleaseCheck::Unverified(format!(
                    "{e}; the socket is closed, so its JDWP agent releases every thread and clears every request when it runs again"
                )),
                dispose_failed: None,
                process: None,
            };
        }
        let (threads_held, threads_total) =
            match crate::jvm::threads::census(&self.connection).await {
                Ok(census) => (census.held, census.total),
                Err(_) => (0, 0),
            };
        let held_by_us = self.ledger.threads_held(threads_total);
        // Leaving: threads the agent held are released too.
        self.ledger.release_all();
        let verification = match control::resume_verified(
            &self.connection,
            &mut self.ledger,
            &self.link.bus,
        )
        .await
        {
            Ok(r) if r.still_held == 0 => ReleaseCheck::AllRun { total: r.total },
            Ok(r) => ReleaseCheck::StillHeld {
                still_held: r.still_held,
                total: r.total,
                resumes: r.resumes,
            },
            Err(e) => ReleaseCheck::Unverified(e.to_string()),
        };
        let dispose_failed = self
            .connection
            .send_within(&Dispose, Duration::from_secs(5))
            .await
            .err()
            .map(|e| e.to_string());
        let report = DisconnectReport {
            threads_held,
            held_by_us,
            threads_total,
            stop_points_cleared: cleared.unwrap_or(0),
            verification,
            dispose_failed,
            process: None,
        };
        self.link.life.mark_dead("disconnected by the agent");
        report
    }
}
