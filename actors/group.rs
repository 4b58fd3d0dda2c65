//! Group sessions: several JVMs (replicas of one service) attached
//! together under one id. A group is a name for its members, nothing more:
//! each member is a session of its own under the Supervisor (its own actor
//! tree), so a member that fails fails alone. The group is kept in the
//! registry of the scope that opened it; what a tool does across the
//! members is the MCP layer's business.

use std::time::Duration;

use crate::model::{AttachSpec, SessionId};
use crate::session::SessionHandle;
use crate::{AttachError, Engine};

/// The most members one group may have: each holds a connection, a small
/// actor tree and its share of every fan-out.
pub const MAX_MEMBERS: usize = 32;

/// One member of a group: its session and, for a local JVM, its pid.
#[derive(Clone)]
pub struct GroupMember {
    pub session: SessionHandle,
    pub pid: Option<u32>,
}

/// A group: its id and its members, in the order they were asked for.
#[derive(Clone)]
pub struct Group {
    pub id: SessionId,
    pub members: Vec<GroupMember>,
}

/// What opening a group did: the group (its members are the targets that
/// answered), the targets that did not (each with why), and the targets
/// given more than once (attached once).
pub struct GroupOpened {
    pub group: Group,
    pub failed: Vec<(String, AttachError)>,
    pub duplicates: Vec<String>,
}

/// Why a group was not opened.
#[derive(Debug, Clone, thiserror::Error)]
pub enum GroupError {
    #[error("a group takes at most {max} targets; {given} were given")]
    TooMany { given: usize, max: usize },
    #[error("a group needs at least one target")]
    Empty,
    #[error("no target of the group could be attached")]
    NoneAttached { failed: Vec<(String, AttachError)> },
}

/// The targets once each (loopback names are one host), and the ones
/// given again.
pub fn dedupe(specs: Vec<AttachSpec>) -> (Vec<AttachSpec>, Vec<String>) {
    let mut kept: Vec<AttachSpec> = Vec::new();
    let mut again = Vec::new();
    for spec in specs {
        if kept
            .iter()
            .any(|k| k.port == spec.port && crate::same_host(&k.host, &spec.host))
        {
            again.push(format!("{}:{}", spec.host, spec.port));
        } else {
            kept.push(spec);
        }
    }
    (kept, again)
}

impl Engine {
    /// Attaches every target concurrently and opens a group of those that
    /// answered, which becomes the current session of this engine's scope.
    pub async fn attach_group(&self, specs: Vec<AttachSpec>) -> Result<GroupOpened, GroupError> {
        if specs.is_empty() {
            return Err(GroupError::Empty);
        }
        if specs.len() > MAX_MEMBERS {
            return Err(GroupError::TooMany {
                given: specs.len(),
                max: MAX_MEMBERS,
            });
        }
        let (targets, duplicates) = dedupe(specs);
        let attached = futures::future::join_all(targets.iter().map(|spec| async move {
            let addr = format!("{}:{}", spec.host, spec.port);
            self.attach(spec).await.map_err(|e| (addr, e))
        }))
        .await;
        // Members on this host that jvmscope did not launch are labelled
        // with the pid holding their port: one `/proc` scan for them all.
        let local: Vec<u16> = targets
            .iter()
            .zip(&attached)
            .filter(|(spec, a)| {
                crate::model::jvms::is_loopback_host(&spec.host)
                    && a.as_ref().is_ok_and(|s| s.launched_pid().is_none())
            })
            .map(|(spec, _)| spec.port)
            .collect();
        let pids = local_pids(local).await;
        let mut members = Vec::new();
        let mut failed = Vec::new();
        for (spec, a) in targets.iter().zip(attached) {
            match a {
                Ok(session) => {
                    let pid = session
                        .launched_pid()
                        .or_else(|| pids.get(&spec.port).copied());
                    members.push(GroupMember { session, pid });
                }
                Err(f) => failed.push(f),
            }
        }
        if members.is_empty() {
            return Err(GroupError::NoneAttached { failed });
        }
        let group = self.add_group(members);
        Ok(GroupOpened {
            group,
            failed,
            duplicates,
        })
    }

    /// The group `id` names, or the current session when it is a group
    /// and `id` is `None`; `None` when that is a single session (or
    /// nothing).
    pub fn group(&self, id: Option<&str>) -> Option<Group> {
        let r = self.registry.read().ok()?;
        match id {
            Some(id) => r.group(id),
            None => r.current().and_then(|c| r.group(&c.0)),
        }
    }

    /// Every open group of this scope.
    pub fn groups(&self) -> Vec<Group> {
        self.registry.read().map(|r| r.groups()).unwrap_or_default()
    }

    /// Forgets group `id` (its members stay sessions of their own); it
    /// stops being current.
    pub fn end_group(&self, id: &SessionId) {
        if let Ok(mut r) = self.registry.write() {
            r.end_group(id);
        }
    }
}

/// The pids of the local processes holding `ports`, read within a second
/// (a group labels its members with them).
async fn local_pids(ports: Vec<u16>) -> std::collections::HashMap<u16, u32> {
    if ports.is_empty() {
        return Default::default();
    }
    tokio::time::timeout(
        Duration::from_secs(1),
        crate::discovery::pids_of_ports(ports),
    )
    .await
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(host: &str, port: u16) -> AttachSpec {
        AttachSpec {
            host: host.into(),
            port,
            timeout: Duration::from_secs(1),
            read_only: false,
            source_roots: Vec::new(),
            class_roots: Vec::new(),
        }
    }

    #[test]
    fn a_target_given_twice_is_kept_once_and_named() {
        let (kept, again) = dedupe(vec![
            spec("127.0.0.1", 5005),
            spec("localhost", 5005),
            spec("127.0.0.1", 5006),
            spec("127.0.0.1", 5005),
        ]);
        let ports: Vec<u16> = kept.iter().map(|s| s.port).collect();
        assert_eq!(ports, [5005, 5006]);
        assert_eq!(again, ["localhost:5005", "127.0.0.1:5005"]);
    }
}
