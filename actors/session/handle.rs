//! The one door to a session: every JDWP conversation and every change to
//! who holds which thread goes through a typed `SessionHandle` method. The
//! readers behind it (classes, inspect, the evaluation driver, threads,
//! wildcards) are the session's toolkit and stay inside the actors layer;
//! callers get plain data and typed errors back.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ractor::ActorRef;

use crate::door::step::{self, Landing, StepFilter, StepKind};
use crate::door::{HeldThread, Jvm};
use crate::error::{JdwpError, SessionError};
use crate::events::EventsMsg;
use crate::events::log::HitEvent;
use crate::expr::Expr;
use crate::jdwp::{SuspendPolicy, ThreadId};
use crate::jvm::eval::EvalContext;
use crate::model::shown::Detail;
use crate::session::control::{self, Direction, PauseOutcome, ResumeReport, ThreadChange};
use crate::session::mutate::{self, Written};
use crate::session::{DisconnectReport, SessionInfo, SessionMsg};
use crate::watchdog::WatchdogMsg;

/// A typed handle on a Session: the JVM's narrow context (`Jvm`, which it
/// derefs to) plus what only the Session and its registries answer.
#[derive(Clone)]
pub struct SessionHandle {
    actor: ActorRef<SessionMsg>,
    jvm: Jvm,
    probes: Arc<crate::probes::Probes>,
}

impl std::ops::Deref for SessionHandle {
    type Target = Jvm;

    fn deref(&self) -> &Jvm {
        &self.jvm
    }
}

impl SessionHandle {
    pub(crate) fn new(
        actor: ActorRef<SessionMsg>,
        info: Arc<SessionInfo>,
        (connection, stop_points, classes, log, link, probes): super::Handles,
    ) -> Self {
        Self {
            actor,
            jvm: Jvm::new(info, link, connection, classes, stop_points, log),
            probes,
        }
    }

    /// The JVM's narrow context, for the feature rooms.
    pub fn jvm(&self) -> &Jvm {
        &self.jvm
    }

    /// What this session changed in the JVM's code.
    pub(crate) fn probes(&self) -> &Arc<crate::probes::Probes> {
        &self.probes
    }

    pub fn actor_id(&self) -> ractor::ActorId {
        self.actor.get_id()
    }

    /// Child restarts the supervision policy performed.
    pub async fn restarts(&self) -> u32 {
        ractor::call!(self.actor, SessionMsg::Restarts).unwrap_or(0)
    }

    /// Ends the session, releasing the JVM (see `SessionCore::disconnect`),
    /// and terminates a JVM this session launched unless it was launched to
    /// stay.
    pub async fn disconnect(&self) -> Result<DisconnectReport, SessionError> {
        self.check_alive()?;
        let span = tracing::Span::current();
        let mut report = ractor::call!(self.actor, SessionMsg::Disconnect, span)
            .map_err(|e| SessionError::Unresponsive(e.to_string()))?;
        if let Some(jvm) = &self.jvm.info.launched {
            report.process = Some(if jvm.detach_on_disconnect {
                format!("pid {} left running (detach_on_disconnect)", jvm.pid)
            } else {
                jvm.terminate().await
            });
        }
        Ok(report)
    }

    /// Suspends `thread` once more and records that the agent holds it.
    pub async fn suspend_thread(&self, thread: ThreadId) -> Result<ThreadChange, SessionError> {
        self.check_alive()?;
        control::change_thread(self, thread, Direction::Suspend).await
    }

    /// Resumes `thread` once and records one fewer hold.
    pub async fn resume_thread(&self, thread: ThreadId) -> Result<ThreadChange, SessionError> {
        self.check_alive()?;
        control::change_thread(self, thread, Direction::Resume).await
    }

    /// Suspends the VM unless every thread is already held.
    pub async fn pause(&self) -> Result<PauseOutcome, SessionError> {
        self.check_alive()?;
        control::pause(self).await
    }

    /// Forgets every hold the agent has, returning what it held (the next
    /// verified resume then releases those threads too).
    pub async fn release_agent_holds(&self) -> Vec<HeldThread> {
        let held = self.held_threads().await;
        self.jvm.link.session.release_all();
        held
    }

    /// Resumes the whole suspend depth and verifies every thread runs.
    /// Events buffered before it and not read yet no longer hold their
    /// threads, and say so.
    pub async fn resume_all(&self) -> Result<ResumeReport, SessionError> {
        self.jvm.link.bus.resume_started();
        let upto = self.events().latest_seq();
        let report = self.resume_all_raw().await.map_err(|e| self.map_err(e))?;
        self.events().release_unread(upto);
        Ok(report)
    }

    /// `resume_all` with the bare JDWP failure, for the actors' own use.
    pub(crate) async fn resume_all_raw(&self) -> Result<ResumeReport, JdwpError> {
        let span = tracing::Span::current();
        ractor::call!(self.actor, SessionMsg::ResumeAll, span).unwrap_or_else(|e| {
            Err(JdwpError::Disconnected {
                command: "VirtualMachine.Resume",
                reason: format!("the session did not answer: {e}"),
            })
        })
    }

    /// Steps `thread` and waits (up to `timeout`) for it to land.
    pub async fn step(
        &self,
        thread: ThreadId,
        kind: StepKind,
        filter: &StepFilter,
        timeout: Duration,
    ) -> Result<Landing, SessionError> {
        self.check_alive()?;
        let landing = step::step(self, thread, kind, filter, timeout).await?;
        // The landing is an event like a hit: it gets a sequence number and
        // becomes the last event.
        let thread_name = self
            .thread_names(&[thread])
            .await
            .pop()
            .flatten()
            .unwrap_or_default();
        self.log.push_event(HitEvent {
            seq: 0,
            at: Instant::now(),
            stop: None,
            kind: "step",
            thread,
            thread_name,
            location: landing
                .frame
                .as_ref()
                .map(|f| f.label())
                .unwrap_or_else(|| "an unknown location".into()),
            details: vec![("step".into(), Detail::Text(kind.word().into()))],
            suspended: SuspendPolicy::EventThread,
            note: None,
        });
        Ok(landing)
    }

    /// The snapshots a trace query selects, with the ring's counters.
    pub async fn traces(
        &self,
        q: &crate::session::traces::TraceQuery,
    ) -> Result<crate::session::traces::TracesView, SessionError> {
        crate::session::traces::traces(self, q).await
    }

    /// The stop-point ids `bp` stands for (a family's members and itself);
    /// `None` when no such stop point exists.
    pub async fn stop_ids(&self, bp: &str) -> Option<Vec<String>> {
        crate::session::traces::stop_ids(self, bp).await
    }

    /// A suspended thread's frames with their locals valued, in one call.
    pub async fn stack(
        &self,
        q: &crate::session::stack::StackQuery,
    ) -> Result<crate::session::stack::StackView, SessionError> {
        crate::session::stack::stack(self, q).await
    }

    /// Stores `value` into `target` (a local, a field, a static, an element).
    pub async fn set_value(
        &self,
        ctx: &EvalContext,
        target: &Expr,
        value: &Expr,
    ) -> Result<Written, SessionError> {
        mutate::set_value(self, ctx, target, value).await
    }

    /// Makes the top frame's method return `value` (none for void) now.
    pub async fn force_return(
        &self,
        ctx: &EvalContext,
        value: Option<&Expr>,
    ) -> Result<(String, crate::expr::eval::Val), SessionError> {
        mutate::force_return(self, ctx, value).await
    }

    /// Pops frames 0..=`index` of `thread`; returns the frames popped.
    pub async fn pop_frame(
        &self,
        thread: ThreadId,
        index: usize,
    ) -> Result<Vec<String>, SessionError> {
        mutate::pop_frame(self, thread, index).await
    }

    /// Test hook: the current EventDispatch and Watchdog.
    #[doc(hidden)]
    pub async fn children(&self) -> Option<(ActorRef<EventsMsg>, ActorRef<WatchdogMsg>)> {
        ractor::call!(self.actor, SessionMsg::Children).ok()
    }
}
