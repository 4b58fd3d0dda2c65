//! The narrow context every feature room reads the JVM through: the
//! connection, the class cache, what the session is (`SessionInfo`) and
//! what its parts share (`SessionLink`: lifeline, event bus, the ledger's
//! port). A feature takes `&Jvm`, not the session's handle, so it sits
//! below the Session and cannot reach its mailbox; the few questions that
//! need the Session actor (resume all, disconnect) stay on `Jvm`.

pub mod context;
pub mod step;
pub mod wildcards;

use wildcards::{Expanded, WildcardError};

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::connection::ConnectionHandle;
use crate::error::{JdwpError, SessionError};
use crate::events::EventLog;
use crate::expr::{Charset, Expr};
use crate::jdwp::virtual_machine::{IdSizesCmd, Version};
use crate::jdwp::{Composite, ThreadId};
use crate::jvm::classes::ClassCache;
use crate::jvm::eval::{self, EvalContext, Failure, Outcome};
use crate::jvm::inspect::{self, FrameView, Locals};
use crate::jvm::show::{Budget, ValueReader};
use crate::jvm::threads::{self, ThreadInfo};
use crate::link::port::SessionRef;
use crate::link::{Rescue, Rescues, SessionInfo, SessionLink};
use crate::model::classes::LoadedClass;
use crate::model::{Roots, SessionId, SessionState, VmInfo};
use crate::stop_points::StopPointsHandle;

/// One JVM as the feature rooms see it.
#[derive(Clone)]
pub struct Jvm {
    pub(crate) info: Arc<SessionInfo>,
    pub(crate) link: SessionLink,
    pub(crate) connection: ConnectionHandle,
    pub(crate) classes: Arc<ClassCache>,
    pub(crate) stop_points: StopPointsHandle,
    pub(crate) log: Arc<EventLog>,
}

/// A thread the agent holds with a counted suspend.
#[derive(Debug, Clone, Copy)]
pub struct HeldThread {
    pub thread: ThreadId,
    /// Suspends the agent has not yet undone.
    pub count: u32,
    pub since: Instant,
}

impl Jvm {
    pub(crate) fn new(
        info: Arc<SessionInfo>,
        link: SessionLink,
        connection: ConnectionHandle,
        classes: Arc<ClassCache>,
        stop_points: StopPointsHandle,
        log: Arc<EventLog>,
    ) -> Self {
        Self {
            info,
            link,
            connection,
            classes,
            stop_points,
            log,
        }
    }

    pub fn id(&self) -> &SessionId {
        &self.info.id
    }

    /// What the session's parts share: its id, lifeline and event bus,
    /// and the way to its ledger.
    pub(crate) fn link(&self) -> &SessionLink {
        &self.link
    }

    /// The session's description.
    pub(crate) fn info(&self) -> &Arc<SessionInfo> {
        &self.info
    }

    /// The suspension ledger, reached by message.
    pub(crate) fn ledger(&self) -> &SessionRef {
        &self.link.session
    }

    pub(crate) fn connection(&self) -> &ConnectionHandle {
        &self.connection
    }

    /// The session's class cache.
    pub(crate) fn classes(&self) -> &Arc<ClassCache> {
        &self.classes
    }

    // --- what the session is -------------------------------------------

    /// The JVM's host, as attached.
    pub fn host(&self) -> &str {
        &self.info.host
    }

    /// The JVM's JDWP port.
    pub fn port(&self) -> u16 {
        self.info.port
    }

    /// `host:port` of the JVM.
    pub fn address(&self) -> String {
        self.info.address()
    }

    /// The JVM's name and version, once attached.
    pub fn vm(&self) -> Option<VmInfo> {
        self.info.vm().cloned()
    }

    /// Whether mutations are refused at the wire.
    pub fn read_only(&self) -> bool {
        self.info.read_only
    }

    /// The pid of a JVM this session launched.
    pub fn launched_pid(&self) -> Option<u32> {
        self.info.launched.as_ref().map(|l| l.pid)
    }

    /// The last `n` lines a launched JVM printed (empty when attached).
    pub fn launched_output(&self, n: usize) -> Vec<String> {
        self.info
            .launched
            .as_ref()
            .map(|l| l.last_lines(n))
            .unwrap_or_default()
    }

    /// Reads a launched JVM's kept output (`None` when the session
    /// attached: its output goes wherever the JVM's own streams go). Works
    /// after the JVM ended, too.
    pub fn read_output(
        &self,
        query: &crate::launch::OutputQuery,
    ) -> Option<crate::launch::OutputSlice> {
        self.info.launched.as_ref().map(|l| l.read_output(query))
    }

    /// The command line of a JVM this session launched.
    pub fn launched_command_line(&self) -> Option<String> {
        self.info.launched.as_ref().map(|l| l.command_line.clone())
    }

    /// When the session was opened.
    pub fn created(&self) -> Instant {
        self.info.created
    }

    /// The source and class roots in force: those given at attach or
    /// launch, the source roots replaced by the last ones a call named.
    pub fn roots(&self) -> Roots {
        self.info.roots()
    }

    /// Why the session ended, or `None` while it lives.
    pub fn dead_reason(&self) -> Option<String> {
        self.link.life.dead_reason()
    }

    /// Resolves once the session is dead.
    pub async fn died(&self) {
        self.link.life.died().await
    }

    /// The error for a part of the session that stopped answering: that
    /// it is gone, with why, once its death is known (waited for a
    /// moment: the connection's reader may not have seen it yet), else
    /// that it did not answer `what`.
    pub async fn not_answering(&self, what: &str) -> SessionError {
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), self.died()).await;
        match self.dead_reason() {
            Some(reason) => self.gone(reason),
            None => SessionError::Unresponsive(what.to_string()),
        }
    }

    /// The last events, one line each, for diagnosis.
    pub fn recent_events(&self) -> Vec<crate::model::recent::RecentEvent> {
        self.link.bus.recent_events()
    }

    /// JDWP packets sent on this session's connection.
    pub fn packets_sent(&self) -> u64 {
        self.connection.shared().packets_sent()
    }

    /// Every event composite from now on, decoded.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<Arc<Composite>> {
        self.link.bus.subscribe()
    }

    /// Every watchdog rescue so far.
    pub fn rescues(&self) -> Rescues {
        self.link.rescues.all()
    }

    /// Rescues the agent has not been told about yet, emptied.
    pub fn take_unreported_rescues(&self) -> Vec<Rescue> {
        self.link.rescues.take_unreported()
    }

    /// Threads still inside a call of ours that ran past its budget and
    /// could not be cancelled, longest first.
    pub fn invoking(&self) -> Vec<crate::model::invoking::Invoking> {
        self.classes.runaways().list()
    }

    /// Refuses `action` (a mutation) up front when the session is
    /// read-only, before any other check or any packet.
    pub fn ensure_writable(&self, action: &'static str) -> Result<(), SessionError> {
        if self.info.read_only {
            Err(SessionError::ReadOnly { action })
        } else {
            Ok(())
        }
    }

    /// How many of a launched JVM's last lines a `Gone` carries.
    const GONE_OUTPUT_LINES: usize = 10;

    /// The session's end, with a launched JVM's exit and last output.
    fn gone(&self, reason: String) -> SessionError {
        let launched = self.info.launched.as_ref();
        SessionError::Gone {
            id: self.info.id.0.clone(),
            reason,
            exit: launched.and_then(|l| l.exit_status()),
            output: launched
                .map(|l| l.last_lines(Self::GONE_OUTPUT_LINES))
                .unwrap_or_default(),
        }
    }

    /// How a launched JVM exited, once it has (`None` while it runs, or
    /// when the session attached).
    pub fn launched_exit(&self) -> Option<String> {
        self.info.launched.as_ref().and_then(|l| l.exit_status())
    }

    /// Fails with `Gone` once the session has ended.
    pub fn check_alive(&self) -> Result<(), SessionError> {
        match self.link.life.dead_reason() {
            Some(reason) => Err(self.gone(reason)),
            None => Ok(()),
        }
    }

    /// Maps a JDWP failure to `Gone` when it means the JVM went away.
    pub fn map_err(&self, e: JdwpError) -> SessionError {
        if e.is_gone() {
            let reason = self
                .link
                .life
                .dead_reason()
                .unwrap_or_else(|| e.to_string());
            self.gone(reason)
        } else {
            SessionError::Jdwp(e)
        }
    }

    /// Asks the JVM who it is and how wide its ids are. Runs once, right
    /// after the handshake.
    pub async fn initialize(&self, limit: Duration) -> Result<(), JdwpError> {
        let version = self.connection.send_within(&Version, limit).await?;
        let sizes = self.connection.send_within(&IdSizesCmd, limit).await?;
        self.connection.shared().set_id_sizes(sizes);
        self.info.set_vm(VmInfo {
            vm_name: version.vm_name,
            vm_version: version.vm_version,
            jdwp_major: version.jdwp_major,
            jdwp_minor: version.jdwp_minor,
            description: version.description,
        });
        Ok(())
    }

    /// The session's state, read live from the JVM (suspend counts of every
    /// thread, asked in one pipelined burst).
    pub async fn state(&self) -> SessionState {
        if let Some(reason) = self.link.life.dead_reason() {
            return SessionState::Dead { reason };
        }
        match threads::census(&self.connection).await {
            Ok(c) if c.held > 0 => SessionState::Suspended {
                held: c.held,
                total: c.total,
            },
            Ok(_) => SessionState::Running,
            Err(e) => match self.link.life.dead_reason() {
                Some(reason) => SessionState::Dead { reason },
                // A timeout says nothing about the program: the session is
                // alive until the Watchdog's liveness check ends it.
                None if matches!(e, JdwpError::Timeout { .. }) => SessionState::Unanswered {
                    reason: e.to_string(),
                },
                None => SessionState::Dead {
                    reason: e.to_string(),
                },
            },
        }
    }

    // --- threads -------------------------------------------------------

    /// Every live thread with its name, status and suspend count.
    pub async fn threads(&self) -> Result<Vec<ThreadInfo>, SessionError> {
        self.check_alive()?;
        let mut list = threads::list(&self.connection)
            .await
            .map_err(|e| self.map_err(e))?;
        if self.vm().is_some_and(|v| v.jdwp_major >= 19) {
            threads::mark_virtual(&self.connection, &mut list).await;
        }
        Ok(list)
    }

    /// The threads the agent holds, with how often and since when.
    pub async fn held_threads(&self) -> Vec<HeldThread> {
        self.link
            .session
            .view()
            .await
            .held
            .into_iter()
            .map(|(thread, count, since)| HeldThread {
                thread,
                count,
                since,
            })
            .collect()
    }

    /// Threads a stop point's event suspended, newest last.
    pub async fn event_threads(&self) -> Vec<ThreadId> {
        self.link.session.view().await.event_threads
    }

    /// The names of `threads` (`None` where a name cannot be read).
    pub async fn thread_names(&self, threads: &[ThreadId]) -> Vec<Option<String>> {
        let names = futures::future::join_all(threads.iter().map(|&thread| {
            self.connection
                .send(&crate::jdwp::thread_reference::Name { thread })
        }))
        .await;
        names.into_iter().map(Result::ok).collect()
    }

    /// Evaluates `expr` in `ctx`, answering the evaluator's reads with
    /// pipelined JDWP requests.
    pub async fn evaluate(&self, ctx: &EvalContext, expr: &Expr) -> Result<Outcome, Failure> {
        eval::evaluate(&self.classes, ctx, expr).await
    }

    /// Values for one line each, invoking nothing: primitives and strings
    /// inline, objects with their runtime type (the reads go out together).
    pub async fn show_values(
        &self,
        values: &[crate::jdwp::Value],
        max_len: usize,
    ) -> Vec<crate::model::shown::Shown> {
        futures::future::join_all(
            values
                .iter()
                .map(|v| inspect::show(&self.classes, v, max_len)),
        )
        .await
    }

    /// A reader of values for display in `ctx` (it may call `toString()`
    /// only where `ctx` allows invoking).
    pub fn value_reader<'a>(
        &'a self,
        ctx: &'a EvalContext,
        budget: Budget,
        charset: Option<Charset>,
    ) -> ValueReader<'a> {
        ValueReader {
            classes: &self.classes,
            ctx,
            budget,
            charset,
        }
    }

    /// Up to `max` frames of `thread`, from the top.
    pub async fn frames(
        &self,
        thread: ThreadId,
        max: usize,
    ) -> Result<Vec<FrameView>, SessionError> {
        inspect::frames(&self.classes, thread, 0, Some(max))
            .await
            .map_err(|e| self.map_err(e))
    }

    /// How many frames `thread` has.
    pub async fn frame_count(&self, thread: ThreadId) -> Result<i32, SessionError> {
        self.connection
            .send(&crate::jdwp::thread_reference::FrameCount { thread })
            .await
            .map_err(|e| self.map_err(e))
    }

    /// The locals of one frame.
    pub async fn locals(&self, thread: ThreadId, frame: &FrameView) -> Result<Locals, JdwpError> {
        inspect::locals(&self.classes, thread, frame, None).await
    }

    /// Test and bench hook: the raw connection, to send JDWP directly.
    /// The MCP layer never uses it (the tidy test checks).
    #[doc(hidden)]
    pub fn raw_connection(&self) -> &ConnectionHandle {
        &self.connection
    }

    /// Test hook: the class cache.
    #[doc(hidden)]
    pub fn class_cache(&self) -> &Arc<ClassCache> {
        &self.classes
    }

    /// Stop points the overhead guard paused since the last call, emptied.
    pub fn take_untold_pauses(&self) -> Vec<crate::stop_points::Paused> {
        self.stop_points.guard().take_untold()
    }

    /// The overhead guard's budgets, and the session's share of one
    /// thread's time over the guard's window (once it has watched a while).
    pub fn overhead(&self) -> (crate::model::overhead::Budgets, Option<f64>) {
        let g = self.stop_points.guard();
        (g.budgets(), g.session_share(Instant::now()))
    }

    /// Number of registered stop points.
    pub async fn stop_point_count(&self) -> usize {
        self.stop_points.count().await
    }

    /// The stop-point registry.
    pub fn stop_points(&self) -> &StopPointsHandle {
        &self.stop_points
    }

    /// Reportable events and trace snapshots.
    pub fn events(&self) -> &Arc<EventLog> {
        &self.log
    }

    // --- frames, values, evaluation ------------------------------------

    /// Where an expression is evaluated: `thread` (default: the newest one
    /// an event suspended), its frame `frame`, `this`, and whether methods
    /// may be invoked there.
    pub async fn eval_context(
        &self,
        thread: Option<ThreadId>,
        frame: usize,
    ) -> Result<EvalContext, SessionError> {
        context::context(self, thread, frame).await
    }

    /// The named thread (or the newest one an event suspended and still
    /// held) with `window` of its frames, read in one burst; `None` when no
    /// thread is named and none is held by an event.
    pub async fn held_frames(
        &self,
        thread: Option<ThreadId>,
        window: crate::door::context::FrameWindow,
    ) -> Result<Option<crate::door::context::HeldFrames>, SessionError> {
        context::held_frames(self, thread, window).await
    }

    // --- classes -------------------------------------------------------

    /// The loaded exception classes an exception wildcard covers.
    pub async fn expand_exceptions(
        &self,
        glob: &str,
        max_classes: usize,
    ) -> Result<Expanded, WildcardError> {
        wildcards::exception_classes(self, glob, max_classes).await
    }

    /// The loaded classes matching `glob` but none of `exclude`, up to
    /// `max_classes`.
    pub async fn expand_classes(
        &self,
        glob: &str,
        exclude: &[String],
        max_classes: usize,
    ) -> Result<Expanded, WildcardError> {
        wildcards::loaded_classes_matching(self, glob, exclude, max_classes).await
    }

    /// The loaded classes matching `glob` that declare `field`.
    pub async fn expand_field_watch(
        &self,
        glob: &str,
        field: &str,
        max_classes: usize,
    ) -> Result<Expanded, WildcardError> {
        wildcards::field_classes(self, glob, field, max_classes).await
    }

    /// Every type the JVM has loaded, by name, with its copies.
    pub async fn loaded_classes(&self) -> Result<Vec<LoadedClass>, SessionError> {
        self.check_alive()?;
        wildcards::loaded_classes(self)
            .await
            .map_err(|e| self.map_err(e))
    }

    /// The methods of a loaded `class` when none is named `method`.
    pub async fn missing_method(&self, class: &str, method: &str) -> Option<Vec<String>> {
        wildcards::missing_method(self, class, method).await
    }

    /// Refuses, naming the capability, a JVM that cannot count instances
    /// (every heap walk needs `canGetInstanceInfo`).
    pub(crate) async fn require_instance_info(&self) -> Result<(), SessionError> {
        let caps = self
            .connection()
            .send(&crate::jdwp::virtual_machine::CapabilitiesNew)
            .await
            .map_err(|e| self.map_err(e))?;
        if caps.can_get_instance_info {
            Ok(())
        } else {
            Err(SessionError::Unsupported {
                capability: "canGetInstanceInfo",
            })
        }
    }
}
