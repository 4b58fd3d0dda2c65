//! The actor layer: everything that does I/O or holds per-JVM state.
//! Outsiders use the typed handles re-exported here (`Engine`,
//! `SessionHandle`, `ConnectionHandle`), never raw messages.
//!
//! # The tree
//!
//! ```text
//! Supervisor
//! └─ Session (one per JVM)
//!    ├─ Connection     socket owner: one reader task, one writer task
//!    ├─ EventDispatch  routes events to stop points; conditions, traces
//!    │                 (a bounded window of capture tasks), the event log
//!    ├─ StopPoints     the registry of stop points under our ids
//!    ├─ ProbesBook     what probes changed in the JVM's code
//!    └─ Watchdog       ticks: liveness (long suspensions later)
//! ```
//!
//! # Supervision policy
//!
//! - **Connection ends** (socket closed, garbage, write failure): the
//!   Session marks itself DEAD with the reason and stops as a whole; every
//!   request in flight fails with `Disconnected`. A JVM the session
//!   launched is terminated unless it was launched with
//!   `detach_on_disconnect`. No other session is touched.
//! - **EventDispatch fails** (a panic): the Session restarts it with the
//!   same arguments and points the Connection at the new one. Nothing is
//!   lost: the suspension ledger lives in the Session actor and the event
//!   counters on its event bus, and the
//!   Connection keeps composites that arrive while no EventDispatch exists
//!   and hands them to the successor (a dropped suspending event would be a
//!   thread nobody resumes). Capture tasks in flight outlive the crash and
//!   still resume their threads; the event log and the stop points' routing
//!   table are shared, so nothing recorded is lost.
//! - **Watchdog fails**: restarted with the same settings.
//! - **StopPoints fails**: not restarted — a registry we cannot trust is
//!   worse than none. The Session sends `VirtualMachine.Dispose` (which
//!   clears every request it armed and resumes every thread) and ends,
//!   saying why.
//! - **ProbesBook fails**: not restarted — which classes this session
//!   changed, and their original bytes, went with it. Each helper in the
//!   JVM holds its class's original bytes, so the Session gives the
//!   classes back as it would a killed jvmscope's leftovers (bounded),
//!   sends `Dispose` and ends, saying why. Probes it could not restore
//!   switch themselves off when their lease lapses (2 s).
//! - **Session ends or fails**: the Supervisor marks it DEAD and keeps it
//!   for listing; nothing is restarted (re-attaching is the agent's call).
//!
//! # Backpressure
//!
//! ractor mailboxes are unbounded, so bounds are explicit: the Connection
//! keeps at most `window` requests in flight and queues the rest (each
//! with its deadline); event composites are never dropped.

// The floors below, under the names every room uses for them.
use jvmscope_core::{classfile, expr, model};
use jvmscope_jdwp as jdwp;
use jvmscope_telemetry as telemetry;

mod calls;
mod code;
mod connection;
mod discovery;
mod door;
mod dumps;
mod error;
mod events;
mod group;
mod jvm;
mod launch;
mod link;
mod lock;
mod memory;
mod probes;
mod profile;
pub mod runtime;
mod session;
mod stop_points;
mod supervisor;
mod watchdog;

use std::sync::{Arc, RwLock};
use std::time::Duration;

use ractor::{Actor, ActorRef};

use crate::model::perfdata::{Rates, Vitals};

// The facade: the handles, what their methods return, and their errors.
// Nothing else of this layer is reachable from outside it.
/// JDWP vocabulary the handles speak in.
pub use crate::jdwp::{SuspendPolicy, ThreadId};
pub use calls::spring::{SpringQuery, is_secret};
pub use calls::{
    Arg, BeanInfo, CallError, CallOutcome, CallSpec, CallTarget, EnvKey, MethodShape, NamedQuery,
    Param, ParkedOn, QueryRows, SpringReport, Venue,
};
pub use code::members::{InstanceReport, InstanceRow, Member, MemberSet, Members, TypeMembers};
pub use code::{
    CompileReport, Installed, Pinned, RedefineCaps, ReloadQuery, ReloadView, SourceCheck,
    SourceQuery, SourceText, SourceView, StaleView, StopStaleness, ThreadInClass,
};
pub use connection::{ConnectionConfig, ConnectionHandle, Transport};
pub use discovery::{DiscoveryBudget, JvmListing, JvmsSnapshot, LocalJvm, ProbeReport, Seen};
pub use door::context::{Depth, FrameWindow, HeldFrames};
pub use door::step::{DEFAULT_EXCLUDES, Landing, StepFilter, StepKind};
pub use door::wildcards::{Expanded, WildcardError};
pub use dumps::{DEFAULT_PIPELINE, Dump, DumpSpec, ProgressFn, VmHold};
pub use error::{
    ArgNeed, ArmError, AttachError, FrameAction, JavacError, JdwpError, LaunchError, NotInvocable,
    NotWritable, ProbeRefusal, Released, SessionError, SpawnError, ThreadUse,
};
pub use error::{CodeError, LocalError};
pub use events::condition::AVAILABLE as CONDITIONS_AVAILABLE;
pub use events::log::{EventLog, Found, HitEvent, RingStats, TraceRecord};
pub use group::{Group, GroupError, GroupMember, GroupOpened, MAX_MEMBERS as MAX_GROUP_MEMBERS};
pub use jvm::eval::{EvalContext, Failure, Outcome, explain, to_val};
pub use jvm::inspect::{FrameView, LocalView, Locals, declared_type};
pub use jvm::show::{Budget, ValueReader};
pub use jvm::threads::{Census, ThreadInfo};
pub use launch::{
    LINE_BYTES as OUTPUT_LINE_BYTES, OUTPUT_LINES, OutputLine, OutputQuery, OutputSlice,
    OutputStream,
};
pub use lock::lock;
pub use memory::heap::{Channel, ChannelChoice, HistogramSpec, HistogramView, Walk};
pub use memory::holders::{DumpRun, HolderTarget, HoldersSpec, HoldersView, Via, WhyJdwp};
pub use memory::hot::{HotRow, HotSpec, HotView};
pub use probes::{Leftover, LeftoverOutcome};
pub use profile::{
    JDWP_PERIOD, JFR_PERIOD, JdwpRun, JfrRun, ProfileSpec, ProfileView, SELF_STOP_MARGIN, Sampler,
    SamplerChoice,
};
pub use session::diagnose::{Capabilities, Cause, StopPointDiagnosis};
pub use session::mutate::Written;
pub use session::stack::{FrameLocals, ShownLocal, ShownValue, StackFrame, StackQuery, StackView};
pub use session::startup::Startup;
pub use session::traces::{TraceQuery, TracesView};
pub use session::{
    DisconnectReport, HeldThread, PauseOutcome, Rescue, Rescues, ResumeReport, SessionHandle,
    ThreadChange,
};
pub use stop_points::routes::CONDITION_ERROR_LIMIT;
pub use stop_points::{
    ArmReport, ClearReport, CountMode, FamilyView, Listing, Paused, PointView, ProbeCost,
    StopPointsHandle, ToggleReport, WatchState,
};

/// Internals the integration tests and benches drive directly (crash an
/// actor, dial a fake peer, read a raw census). Not for the MCP layer; the
/// tidy test keeps it out.
#[doc(hidden)]
pub mod testing {
    pub use super::connection::dial::dial;
    pub use super::connection::{Connection, ConnectionMsg};
    pub use super::events::EventsMsg;
    pub use super::jvm::classes::ClassCache;
    pub use super::jvm::threads;
    pub use super::probes::ProbesMsg;
    pub use super::stop_points::routes::{HOLD_BUCKETS, bucketed_quantile, hold_bucket};
    pub use super::watchdog::WatchdogMsg;
}

use supervisor::{NewSession, Registry, Supervisor, SupervisorMsg};

/// Engine-wide settings, read once from the environment.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// `JDWP_READONLY`: every session is read-only, whatever attach says.
    pub force_read_only: bool,
    /// How often each session's Watchdog probes liveness.
    pub watchdog_interval: Duration,
    /// Requests in flight per connection.
    pub window: usize,
    /// Per-request timeout.
    pub request_timeout: Duration,
    /// `JDWP_WATCHDOG_SECS`: longest a suspension may last (`None` = off).
    pub suspend_limit: Option<Duration>,
    /// `JVMSCOPE_OVERHEAD_PCT` and `JVMSCOPE_SESSION_OVERHEAD_PCT`: the
    /// overhead guard's budgets (percent of one thread's time, 0 = off).
    pub overhead: crate::model::overhead::Budgets,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            force_read_only: false,
            watchdog_interval: Duration::from_secs(5),
            window: connection::DEFAULT_WINDOW,
            request_timeout: connection::DEFAULT_REQUEST_TIMEOUT,
            suspend_limit: Some(Duration::from_secs(120)),
            overhead: crate::model::overhead::Budgets::default(),
        }
    }
}

impl EngineConfig {
    /// Reads `JDWP_READONLY`, `JDWP_WATCHDOG_SECS`,
    /// `JVMSCOPE_REQUEST_TIMEOUT_MS`, `JVMSCOPE_LIVENESS_MS`,
    /// `JVMSCOPE_OVERHEAD_PCT` and `JVMSCOPE_SESSION_OVERHEAD_PCT` (a value
    /// that does not parse keeps the default).
    pub fn from_env() -> Self {
        Self::from_env_read_only_unless_set(false)
    }

    /// As [`EngineConfig::from_env`], with every session read-only when
    /// `JDWP_READONLY` is not set at all and `unset` is true (the HTTP
    /// transport's default); a value that is set decides either way.
    pub fn from_env_read_only_unless_set(unset: bool) -> Self {
        let millis = |name: &str| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.parse::<u64>().ok())
                .map(Duration::from_millis)
        };
        let defaults = Self::default();
        Self {
            force_read_only: read_only(std::env::var("JDWP_READONLY").ok().as_deref(), unset),
            request_timeout: millis("JVMSCOPE_REQUEST_TIMEOUT_MS")
                .unwrap_or(defaults.request_timeout),
            watchdog_interval: millis("JVMSCOPE_LIVENESS_MS").unwrap_or(defaults.watchdog_interval),
            suspend_limit: watchdog::WatchdogArgs::limit_from_env(),
            overhead: overhead_from_env(defaults.overhead),
            ..defaults
        }
    }
}

/// Whether `JDWP_READONLY` (its value, `None` when unset) makes every
/// session read-only; `unset` is the answer when it is not set.
pub fn read_only(value: Option<&str>, unset: bool) -> bool {
    match value {
        None => unset,
        Some(v) => matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        ),
    }
}

fn overhead_from_env(d: crate::model::overhead::Budgets) -> crate::model::overhead::Budgets {
    use crate::model::overhead::Budgets;
    let pct = |name: &str| {
        std::env::var(name)
            .ok()
            .and_then(|v| Budgets::parse_pct(&v))
    };
    Budgets {
        stop_point_pct: pct("JVMSCOPE_OVERHEAD_PCT").unwrap_or(d.stop_point_pct),
        session_pct: pct("JVMSCOPE_SESSION_OVERHEAD_PCT").unwrap_or(d.session_pct),
    }
}

/// The running actor system: the root of every session. An engine sees
/// the sessions of its registry: the engine [`Engine::start`] returns sees
/// every one; a [`Engine::scope`] of it shares the actors and sees only
/// the sessions opened through that scope.
#[derive(Clone)]
pub struct Engine {
    supervisor: ActorRef<SupervisorMsg>,
    /// The sessions this engine lists, names and makes current.
    registry: Arc<RwLock<Registry>>,
    config: EngineConfig,
    /// Each local JVM's last vital signs read, for rates on the next read.
    vitals_seen: Arc<std::sync::Mutex<std::collections::HashMap<u32, Vitals>>>,
}

impl Engine {
    /// Starts the Supervisor.
    pub async fn start(config: EngineConfig) -> Result<Engine, SpawnError> {
        let registry = Arc::new(RwLock::new(Registry::default()));
        let (supervisor, _) = Actor::spawn(None, Supervisor, registry.clone())
            .await
            .map_err(|e| SpawnError::Actor(e.to_string()))?;
        Ok(Engine {
            supervisor,
            registry,
            config,
            vitals_seen: Arc::default(),
        })
    }

    /// The same actors with a session table of its own: sessions opened
    /// through the scope are listed, named and made current only there
    /// (and in the engine that started the tree, which releases them at
    /// shutdown). One MCP client over HTTP gets one scope.
    pub fn scope(&self) -> Engine {
        Engine {
            registry: Arc::new(RwLock::new(Registry::default())),
            ..self.clone()
        }
    }

    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// The local JVMs and the state of their JDWP endpoints; with `probe`,
    /// also that loopback endpoint's state.
    pub async fn list_jvms(
        &self,
        probe: Option<(String, u16)>,
        budget: DiscoveryBudget,
    ) -> JvmListing {
        discovery::list_jvms(self.ours(), probe, budget).await
    }

    /// A cheap reading of the local JVMs for change detection: one `/proc`
    /// and hsperfdata scan within `scan`, no handshake. `None` when the
    /// budget cut the scan short.
    pub async fn jvms_snapshot(&self, scan: Duration) -> Option<JvmsSnapshot> {
        discovery::jvms_snapshot(self.ours(), scan).await
    }

    /// A local JVM's vital signs from its hsperfdata (nothing attaches, so
    /// a JVM without JDWP answers too), with the rates since the previous
    /// reading of the same JVM when there was one; with `interval`, read
    /// twice that far apart.
    pub async fn vitals(
        &self,
        pid: u32,
        interval: Option<Duration>,
    ) -> Result<(Vitals, Option<Rates>), LocalError> {
        let mut earlier = match interval {
            Some(wait) => {
                let first = discovery::vitals(pid).await?;
                tokio::time::sleep(wait).await;
                Some(first)
            }
            None => None,
        };
        let now = discovery::vitals(pid).await?;
        let mut seen = lock::lock(&self.vitals_seen);
        if earlier.is_none() {
            earlier = seen.get(&pid).cloned();
        }
        seen.insert(pid, now.clone());
        let rates = earlier.and_then(|e| now.rates_since(&e));
        Ok((now, rates))
    }

    /// The live sessions, as discovery matches them.
    fn ours(&self) -> Vec<discovery::Ours> {
        self.sessions()
            .into_iter()
            .filter(|s| s.check_alive().is_ok())
            .map(|s| discovery::Ours {
                id: s.id().to_string(),
                port: s.port(),
                local: crate::model::jvms::is_loopback_host(s.host()),
                pid: s.launched_pid(),
            })
            .collect()
    }

    /// Attaches to a JVM listening for a debugger.
    pub async fn attach(
        &self,
        spec: &crate::model::AttachSpec,
    ) -> Result<SessionHandle, AttachError> {
        let roots = crate::model::Roots {
            source: spec.source_roots.clone(),
            class: spec.class_roots.clone(),
        };
        self.open(
            &spec.host,
            spec.port,
            spec.timeout,
            spec.read_only,
            None,
            roots,
        )
        .await
    }

    /// Starts a JVM under the debugger and attaches to it. The JVM always
    /// starts held at VM_START, before the launcher has even looked for
    /// its main class; it is then let run until that class is prepared
    /// (`session::startup::run_to_main`), held there when the agent asked
    /// for a held JVM. A JVM that dies on the way (a missing main class, a
    /// bad option) is reported with its exit and last output, its session
    /// left DEAD and the previous current session restored, instead of a
    /// session that reads SUSPENDED and dies at the agent's next call.
    pub async fn launch(
        &self,
        spec: &crate::model::LaunchSpec,
    ) -> Result<(SessionHandle, Startup), LaunchError> {
        let held = crate::model::LaunchSpec {
            suspend: true,
            ..spec.clone()
        };
        let previous = self.current();
        let (jvm, port) = launch::start(&held).await?;
        let roots = crate::model::Roots {
            source: spec.source_roots.clone(),
            class: spec.class_roots.clone(),
        };
        let handle = match self
            .open(
                "127.0.0.1",
                port,
                spec.timeout,
                spec.read_only,
                Some(jvm.clone()),
                roots,
            )
            .await
        {
            Ok(handle) => handle,
            Err(e) => {
                jvm.terminate().await;
                return Err(e.into());
            }
        };
        let failure = match session::startup::run_to_main(&handle, spec).await {
            Ok(startup) => return Ok((handle, startup)),
            Err(failure) => failure,
        };
        let (status, output) = jvm.exit_and_output(Duration::from_secs(5)).await;
        jvm.terminate().await;
        handle
            .link()
            .request_end("the launched JVM exited during startup".into());
        if let Some(previous) = previous
            && let Ok(mut r) = self.registry.write()
        {
            r.set_current(previous);
        }
        let status = match failure {
            session::startup::StartupFailure::Died => status,
            session::startup::StartupFailure::Failed(reason) => format!("{status}; {reason}"),
        };
        Err(LaunchError::DiedDuringStartup {
            status,
            output,
            session: Some(handle.id().to_string()),
        })
    }

    /// Attaches over a stream already connected to a JVM's JDWP agent
    /// (an in-process transport, such as a test's simulated JVM on
    /// `tokio::io::duplex`): the handshake is exchanged on it within
    /// `spec.timeout`, and `spec.host`/`spec.port` only name the session.
    pub async fn attach_stream<S>(
        &self,
        spec: &crate::model::AttachSpec,
        mut stream: S,
    ) -> Result<SessionHandle, AttachError>
    where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        let addr = format!("{}:{}", spec.host, spec.port);
        connection::dial::handshake(&mut stream, &addr, spec.timeout, spec.timeout).await?;
        let roots = crate::model::Roots {
            source: spec.source_roots.clone(),
            class: spec.class_roots.clone(),
        };
        let opened = Opened {
            host: &spec.host,
            port: spec.port,
            timeout: spec.timeout,
            read_only: spec.read_only,
        };
        self.start_session(opened, Transport::new(stream), None, roots)
            .await
    }

    async fn open(
        &self,
        host: &str,
        port: u16,
        timeout: Duration,
        read_only: bool,
        launched: Option<Arc<launch::LaunchedJvm>>,
        roots: crate::model::Roots,
    ) -> Result<SessionHandle, AttachError> {
        // A JVM takes one debugger: dialling a port we already hold would
        // read as "nothing listening" or "not JDWP", so say who holds it.
        if let Some(held) = self
            .sessions()
            .into_iter()
            .find(|s| s.check_alive().is_ok() && s.port() == port && same_host(s.host(), host))
        {
            return Err(AttachError::AlreadyAttached {
                addr: format!("{host}:{port}"),
                session: held.id().to_string(),
            });
        }
        let stream = match connection::dial::dial(host, port, timeout).await {
            // A local agent refuses a second debugger: say so, not
            // "nothing is listening", when a connection to it is open.
            Err(AttachError::Refused { addr }) if same_host(host, "127.0.0.1") => {
                return Err(match discovery::connected_to(port) {
                    Some(peer) => AttachError::OtherDebugger { addr, peer },
                    None => AttachError::Refused { addr },
                });
            }
            other => other?,
        };
        let opened = Opened {
            host,
            port,
            timeout,
            read_only,
        };
        self.start_session(opened, stream.into(), launched, roots)
            .await
    }

    /// A session over a handshaken stream: spawned, initialized, its
    /// probes started.
    async fn start_session(
        &self,
        opened: Opened<'_>,
        stream: Transport,
        launched: Option<Arc<launch::LaunchedJvm>>,
        roots: crate::model::Roots,
    ) -> Result<SessionHandle, AttachError> {
        let Opened {
            host,
            port,
            timeout,
            read_only,
        } = opened;
        let mut config = ConnectionConfig::new(host, port);
        config.read_only = read_only || self.config.force_read_only;
        config.window = self.config.window;
        config.request_timeout = self.config.request_timeout;
        let new = NewSession {
            stream,
            config,
            launched,
            roots,
            watchdog_interval: self.config.watchdog_interval,
            suspend_limit: self.config.suspend_limit,
            overhead: self.config.overhead,
            scope: self.registry.clone(),
        };
        let handle = ractor::call!(self.supervisor, SupervisorMsg::Spawn, Box::new(new))
            .map_err(|e| SpawnError::Actor(e.to_string()))??;
        if let Err(source) = handle.initialize(timeout).await {
            handle
                .link()
                .request_end(format!("attach failed: {source}"));
            return Err(AttachError::Setup {
                addr: format!("{host}:{port}"),
                source,
            });
        }
        handle.start_probes().await;
        Ok(handle)
    }

    /// Every session, live and dead, in creation order.
    pub fn sessions(&self) -> Vec<SessionHandle> {
        self.registry.read().map(|r| r.all()).unwrap_or_default()
    }

    /// The session named, or the current one.
    /// A group is refused naming its members: a tool that acts across a
    /// group asks [`Engine::group`] first.
    pub fn session(&self, id: Option<&str>) -> Result<SessionHandle, SessionError> {
        let r = self
            .registry
            .read()
            .map_err(|_| SessionError::RegistryPoisoned)?;
        let group = id
            .map(str::to_string)
            .or_else(|| r.current().map(|c| c.0))
            .and_then(|g| r.group(&g));
        if let Some(g) = group {
            return Err(SessionError::Group {
                id: g.id.0,
                members: g
                    .members
                    .iter()
                    .map(|m| (m.session.id().0.clone(), m.session.address().to_string()))
                    .collect(),
            });
        }
        match id {
            Some(id) => r
                .get(id)
                .ok_or_else(|| SessionError::UnknownSession(id.to_string())),
            None => r
                .current()
                .and_then(|c| r.get(&c.0))
                .ok_or(SessionError::NoSession),
        }
    }

    /// The current session's id.
    pub fn current(&self) -> Option<crate::model::SessionId> {
        self.registry.read().ok().and_then(|r| r.current())
    }

    /// Makes `id` the session tools use when they name none (a group is
    /// made current by [`Engine::set_current_group`]).
    pub fn set_current(&self, id: &str) -> Result<SessionHandle, SessionError> {
        let handle = self.session(Some(id))?;
        if let Ok(mut r) = self.registry.write() {
            r.set_current(handle.id().clone());
        }
        Ok(handle)
    }

    /// Makes group `id` current; `None` when there is no such group.
    pub fn set_current_group(&self, id: &str) -> Option<Group> {
        let mut r = self.registry.write().ok()?;
        let group = r.group(id)?;
        r.set_current(group.id.clone());
        Some(group)
    }

    /// Enters a group of `members` in this scope; it becomes current.
    fn add_group(&self, members: Vec<GroupMember>) -> Group {
        match self.registry.write() {
            Ok(mut r) => r.add_group(members),
            // A poisoned table still answers with the group it could not keep.
            Err(_) => Group {
                id: crate::model::SessionId("g0".into()),
                members,
            },
        }
    }

    /// Releases every live session this engine sees (as `disconnect`
    /// does), leaving the tree running; used when one MCP client of
    /// several goes away.
    pub async fn release(&self) {
        let live: Vec<_> = self
            .sessions()
            .into_iter()
            .filter(|s| s.check_alive().is_ok())
            .collect();
        futures::future::join_all(live.iter().map(|s| s.disconnect())).await;
    }

    /// Releases every live session and stops the tree; used when the MCP
    /// client goes away (called on the engine [`Engine::start`] returned,
    /// which sees every session).
    pub async fn shutdown(&self) {
        self.release().await;
        self.supervisor.stop(None);
    }
}

/// Where a session's stream came from, and how it was asked for.
struct Opened<'a> {
    host: &'a str,
    port: u16,
    timeout: Duration,
    read_only: bool,
}

/// Whether two host names are the same endpoint: loopback names are one.
pub(crate) fn same_host(a: &str, b: &str) -> bool {
    let loopback = |h: &str| matches!(h, "127.0.0.1" | "localhost" | "::1" | "[::1]");
    a.eq_ignore_ascii_case(b) || (loopback(a) && loopback(b))
}

#[cfg(test)]
mod tests {
    use super::read_only;

    #[test]
    fn jdwp_readonly_decides_when_set_and_the_transport_when_not() {
        assert!(!read_only(None, false), "stdio: writable unless asked");
        assert!(read_only(None, true), "HTTP: read-only unless asked");
        for on in ["1", "true", "YES", " on "] {
            assert!(read_only(Some(on), false), "{on:?}");
            assert!(read_only(Some(on), true), "{on:?}");
        }
        for off in ["0", "false", "no", "off", ""] {
            assert!(!read_only(Some(off), true), "{off:?} relaxes HTTP");
            assert!(!read_only(Some(off), false), "{off:?}");
        }
    }
}
