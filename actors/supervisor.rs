//! The Supervisor actor: root of the tree. It spawns one Session per JVM,
//! watches them, and keeps the registry of sessions (live and dead) that
//! tools read without messaging anyone. Each session is also entered in
//! the registry of the scope that asked for it (one MCP client over
//! HTTP): a scope lists, names and makes current only its own sessions,
//! while the supervisor's registry holds every one.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use crate::connection::{ConnectionConfig, Transport};
use crate::error::SpawnError;
use crate::group::{Group, GroupMember};
use crate::launch::LaunchedJvm;
use crate::model::SessionId;
use crate::session::{Session, SessionArgs, SessionHandle, SessionInfo};
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};

/// Sessions by id, plus which one is current: the supervisor's (every
/// session, ids allocated here) or one scope's (its own sessions).
#[derive(Default)]
pub struct Registry {
    sessions: BTreeMap<u64, SessionHandle>,
    /// Where the current session is a group, its id (`g1`, …).
    current: Option<SessionId>,
    next: u64,
    /// The groups opened in this scope, by number.
    groups: BTreeMap<u64, Group>,
    next_group: u64,
}

impl Registry {
    fn allocate(&mut self) -> (u64, SessionId) {
        self.next += 1;
        (self.next, SessionId(format!("s{}", self.next)))
    }

    pub fn all(&self) -> Vec<SessionHandle> {
        self.sessions.values().cloned().collect()
    }

    pub fn get(&self, id: &str) -> Option<SessionHandle> {
        self.sessions.values().find(|s| s.id().0 == id).cloned()
    }

    pub fn current(&self) -> Option<SessionId> {
        self.current.clone()
    }

    pub fn set_current(&mut self, id: SessionId) {
        self.current = Some(id);
    }

    /// Enters a group of `members` under a new id; it becomes current.
    pub fn add_group(&mut self, members: Vec<GroupMember>) -> Group {
        self.next_group += 1;
        let id = SessionId(format!("g{}", self.next_group));
        let group = Group {
            id: id.clone(),
            members,
        };
        self.groups.insert(self.next_group, group.clone());
        self.current = Some(id);
        group
    }

    pub fn group(&self, id: &str) -> Option<Group> {
        self.groups.values().find(|g| g.id.0 == id).cloned()
    }

    pub fn groups(&self) -> Vec<Group> {
        self.groups.values().cloned().collect()
    }

    /// Forgets a group; it stops being current.
    pub fn end_group(&mut self, id: &SessionId) {
        self.groups.retain(|_, g| &g.id != id);
        if self.current.as_ref() == Some(id) {
            self.current = None;
        }
    }
}

/// What a new session is made from.
pub struct NewSession {
    pub stream: Transport,
    pub config: ConnectionConfig,
    pub launched: Option<Arc<LaunchedJvm>>,
    pub roots: crate::model::Roots,
    pub watchdog_interval: Duration,
    pub suspend_limit: Option<Duration>,
    pub overhead: crate::model::overhead::Budgets,
    /// The registry of the scope that asked: the session is entered there
    /// too, and becomes that scope's current session.
    pub scope: Arc<RwLock<Registry>>,
}

/// Messages of the Supervisor.
pub enum SupervisorMsg {
    /// Spawn a Session for a handshaken connection; it becomes its
    /// scope's current session.
    Spawn(
        Box<NewSession>,
        RpcReplyPort<Result<SessionHandle, SpawnError>>,
    ),
}

/// The Supervisor actor (configuration only).
pub struct Supervisor;

impl Actor for Supervisor {
    type Msg = SupervisorMsg;
    type State = Arc<RwLock<Registry>>;
    type Arguments = Arc<RwLock<Registry>>;

    async fn pre_start(
        &self,
        _: ActorRef<Self::Msg>,
        registry: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(registry)
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        registry: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            SupervisorMsg::Spawn(new, reply) => {
                let (key, id) = match registry.write() {
                    Ok(mut r) => r.allocate(),
                    Err(_) => {
                        let _ = reply.send(Err(SpawnError::RegistryPoisoned));
                        return Ok(());
                    }
                };
                let NewSession {
                    stream,
                    config,
                    launched,
                    roots,
                    watchdog_interval,
                    suspend_limit,
                    overhead,
                    scope,
                } = *new;
                let info = Arc::new(SessionInfo::new(
                    id.clone(),
                    &config.host,
                    config.port,
                    config.read_only,
                    launched,
                    roots,
                ));
                let args = SessionArgs {
                    stream,
                    config,
                    info,
                    watchdog_interval,
                    suspend_limit,
                    overhead,
                };
                let result = Session::spawn(args, myself.get_cell()).await;
                if let (Ok(handle), Ok(mut r)) = (&result, registry.write()) {
                    r.sessions.insert(key, handle.clone());
                    if Arc::ptr_eq(registry, &scope) {
                        r.set_current(id.clone());
                    }
                }
                if let Ok(handle) = &result
                    && !Arc::ptr_eq(registry, &scope)
                    && let Ok(mut s) = scope.write()
                {
                    s.sessions.insert(key, handle.clone());
                    s.set_current(id);
                }
                let _ = reply.send(result);
            }
        }
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        _: ActorRef<Self::Msg>,
        event: SupervisionEvent,
        registry: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        // Policy: a Session that ends or fails is marked DEAD and kept for
        // listing; no other session is touched and nothing is restarted
        // (re-attaching is the agent's decision).
        let (cell, reason) = match event {
            SupervisionEvent::ActorTerminated(cell, _, reason) => {
                (cell, reason.unwrap_or_else(|| "the session ended".into()))
            }
            SupervisionEvent::ActorFailed(cell, err) => {
                (cell, format!("the session failed internally: {err}"))
            }
            _ => return Ok(()),
        };
        if let Ok(r) = registry.read()
            && let Some(s) = r.sessions.values().find(|s| s.actor_id() == cell.get_id())
        {
            s.link().life.mark_dead(&reason);
            tracing::info!(session = %s.id(), %reason, "session ended");
        }
        Ok(())
    }
}
