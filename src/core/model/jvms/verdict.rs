//! What can be said about a JVM's JDWP endpoint, and how it was learned.
//! `plan` decides from the JVM's options (command line, argfiles,
//! environment), its own sockets and our own sessions, and a listing
//! never dials: a handshake followed by a close releases a JVM waiting
//! for its debugger (`suspend=y`) into a `main` with no debugger, moves an
//! ephemeral port (`address=…:0`: the agent listens again on a new one,
//! measured here), and prints "Listening for transport…" again in the
//! JVM's log. Only an explicit probe handshakes, and never a JVM whose
//! options discovery could not read.

use super::{JdwpAgent, Unseen};

/// The state of an endpoint, as agents read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JdwpState {
    /// One of our live sessions holds it.
    ConnectedToUs,
    /// It answered the handshake; no debugger holds it.
    Listening,
    /// `suspend=y` and its socket listens: the JVM waits before `main`
    /// (read from argv and `/proc/net/tcp`, not dialled).
    WaitingForDebugger,
    /// Nothing answers the handshake there.
    Unreachable,
    /// Not dialled (no agent, off this host, not TCP, out of budget).
    NotProbed,
}

/// Why an endpoint is in its state: the facts an agent needs to act.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Detail {
    /// The command line loads no JDWP agent.
    NoAgent,
    /// An agent argument that could not be read.
    BadAgent(String),
    /// A transport other than `dt_socket`.
    NotSocket(String),
    /// `server=n`: the JVM dials a debugger itself, at this address.
    DialsOut(String),
    /// The address names another host; we never dial one.
    NotLoopback(String),
    /// `address=…:0` and no (or several) listening socket of its own.
    PortUnknown { candidates: Vec<u16> },
    /// Session `0` of ours is attached there.
    Ours(String),
    /// Its socket listens and it waits for a debugger; not dialled.
    Waiting,
    /// The 14 bytes came back (an explicit probe).
    Handshook,
    /// Its own socket listens on its agent's fixed port; read from
    /// `/proc`, not dialled.
    OwnListener,
    /// No agent was seen, or its socket could not be told apart, and these
    /// could not be read: not dialled, since an agent hiding there may
    /// wait for its debugger.
    Hidden(String),
    /// An ephemeral port (`address=…:0`) this JVM's agent listens on:
    /// not dialled, since after a handshake and close the agent listens
    /// again on a new ephemeral port, and the port it printed goes stale.
    EphemeralListener,
    /// The argv port has no listening socket, and a connection is
    /// established on it: another debugger holds it.
    HeldByAnother,
    /// The argv port has no listening socket.
    NotListening,
    /// The connection was refused.
    Refused,
    /// It accepted the connection but is not JDWP (what it did instead).
    NotJdwp(String),
    /// The connection was not accepted within the per-probe budget (ms).
    Silent(u64),
    /// Another socket error.
    Failed(String),
}

/// An endpoint's state and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub state: JdwpState,
    pub detail: Detail,
}

impl Verdict {
    pub fn new(state: JdwpState, detail: Detail) -> Self {
        Self { state, detail }
    }

    /// The verdict of a handshake attempt that did not succeed.
    pub fn unreachable(detail: Detail) -> Self {
        Self::new(JdwpState::Unreachable, detail)
    }
}

/// What discovery says of one endpoint, and on which port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub port: Option<u16>,
    pub verdict: Verdict,
}

/// What discovery could read of one JVM besides its agent.
#[derive(Debug, Clone, Copy)]
pub struct Sight<'a> {
    /// The loopback-reachable ports it listens on, from its own sockets
    /// (every listener on the agent's port when they are unreadable).
    pub listening: &'a [u16],
    /// Local ports with an established connection.
    pub established: &'a [u16],
    /// Its own sockets could be read: `listening` is its own.
    pub own_sockets: bool,
    /// Where options could hide that could not be read.
    pub unseen: &'a Unseen,
}

/// Decides an endpoint's state from the JVM's options and sockets alone:
/// nothing is dialled, so a listing never shows in the JVM's log and never
/// releases a JVM that waits for its debugger. `ours`: the id of our live
/// session on a port, if any.
pub fn plan(
    agent: Result<Option<&JdwpAgent>, &str>,
    sight: Sight<'_>,
    ours: impl Fn(u16) -> Option<String>,
) -> Plan {
    let settled = |port, state, detail| Plan {
        port,
        verdict: Verdict::new(state, detail),
    };
    let Sight {
        listening,
        established,
        ..
    } = sight;
    let agent = match agent {
        Err(e) => return settled(None, JdwpState::NotProbed, Detail::BadAgent(e.into())),
        Ok(None) if !sight.unseen.is_empty() => {
            return settled(
                None,
                JdwpState::NotProbed,
                Detail::Hidden(sight.unseen.to_string()),
            );
        }
        Ok(None) => return settled(None, JdwpState::NotProbed, Detail::NoAgent),
        Ok(Some(a)) => a,
    };
    let addr_text = agent
        .address
        .as_ref()
        .map(|a| match &a.host {
            Some(h) => format!("{h}:{}", a.port),
            None => a.port.to_string(),
        })
        .unwrap_or_default();
    if !agent.is_socket() {
        let t = agent.transport.clone().unwrap_or_default();
        return settled(None, JdwpState::NotProbed, Detail::NotSocket(t));
    }
    if !agent.server {
        return settled(None, JdwpState::NotProbed, Detail::DialsOut(addr_text));
    }
    if agent.address.as_ref().is_some_and(|a| !a.is_local()) {
        return settled(None, JdwpState::NotProbed, Detail::NotLoopback(addr_text));
    }
    let argv_port = agent.address.as_ref().map_or(0, |a| a.port);
    if argv_port == 0 {
        // An ephemeral port: once we are attached the agent stops
        // listening, so our session shows as an established connection.
        let mut mine = established.iter().chain(listening);
        if let Some((p, id)) = mine.find_map(|p| ours(*p).map(|id| (*p, id))) {
            return settled(Some(p), JdwpState::ConnectedToUs, Detail::Ours(id));
        }
    }
    let port = if argv_port != 0 {
        argv_port
    } else {
        match listening {
            [one] => *one,
            _ => {
                return settled(
                    None,
                    JdwpState::NotProbed,
                    Detail::PortUnknown {
                        candidates: listening.to_vec(),
                    },
                );
            }
        }
    };
    if let Some(id) = ours(port) {
        return settled(Some(port), JdwpState::ConnectedToUs, Detail::Ours(id));
    }
    if !listening.contains(&port) {
        let detail = if established.contains(&port) {
            Detail::HeldByAnother
        } else {
            Detail::NotListening
        };
        return settled(Some(port), JdwpState::Unreachable, detail);
    }
    if agent.suspend {
        return settled(Some(port), JdwpState::WaitingForDebugger, Detail::Waiting);
    }
    if argv_port == 0 {
        return settled(Some(port), JdwpState::Listening, Detail::EphemeralListener);
    }
    if !sight.own_sockets {
        // Another process may hold the port: only its own socket says the
        // agent listens, and a handshake would show in the JVM's log.
        return settled(
            Some(port),
            JdwpState::NotProbed,
            Detail::Hidden("its sockets".into()),
        );
    }
    settled(Some(port), JdwpState::Listening, Detail::OwnListener)
}

#[cfg(test)]
mod tests {
    use super::super::AgentSyntax;
    use super::*;

    fn agent(opts: &str) -> JdwpAgent {
        JdwpAgent::parse(AgentSyntax::Agentlib, opts).expect(opts)
    }

    fn none(_: u16) -> Option<String> {
        None
    }

    fn state(p: &Plan) -> Option<JdwpState> {
        Some(p.verdict.state)
    }

    static SEEN: Unseen = Unseen {
        environment: false,
        argfiles: Vec::new(),
    };

    /// What discovery read when every file was readable.
    fn sees<'a>(listening: &'a [u16], established: &'a [u16]) -> Sight<'a> {
        Sight {
            listening,
            established,
            own_sockets: true,
            unseen: &SEEN,
        }
    }

    #[test]
    fn a_waiting_jvm_is_never_dialled() {
        let a = agent("transport=dt_socket,server=y,address=127.0.0.1:0");
        let p = plan(Ok(Some(&a)), sees(&[40001], &[]), none);
        assert_eq!(state(&p), Some(JdwpState::WaitingForDebugger));
        let a = agent("transport=dt_socket,server=y,suspend=y,address=*:5005");
        assert_eq!(
            state(&plan(Ok(Some(&a)), sees(&[5005], &[]), none)),
            Some(JdwpState::WaitingForDebugger)
        );
        // Several listeners and suspend=y: still not dialled.
        let a = agent("transport=dt_socket,server=y,address=0");
        assert_eq!(
            state(&plan(Ok(Some(&a)), sees(&[1, 2], &[]), none)),
            Some(JdwpState::NotProbed)
        );
    }

    #[test]
    fn only_running_loopback_listeners_are_dialled() {
        let a = agent("transport=dt_socket,server=y,suspend=n,address=127.0.0.1:5005");
        // A fixed port is read from the JVM's own socket, never dialled.
        assert_eq!(
            plan(Ok(Some(&a)), sees(&[5005], &[]), none),
            Plan {
                port: Some(5005),
                verdict: Verdict::new(JdwpState::Listening, Detail::OwnListener)
            }
        );
        let blind = Sight {
            own_sockets: false,
            ..sees(&[5005], &[])
        };
        assert_eq!(
            plan(Ok(Some(&a)), blind, none).verdict.detail,
            Detail::Hidden("its sockets".into())
        );
        // No agent seen, and the environment unreadable: it may hide there.
        let hidden = Unseen {
            environment: true,
            argfiles: vec!["opts".into()],
        };
        let p = plan(
            Ok(None),
            Sight {
                unseen: &hidden,
                ..sees(&[], &[])
            },
            none,
        );
        assert_eq!(
            p.verdict,
            Verdict::new(
                JdwpState::NotProbed,
                Detail::Hidden("its environment, @opts".into())
            )
        );
        // An ephemeral port moves after a handshake: read, not dialled.
        let a = agent("transport=dt_socket,server=y,suspend=n,address=127.0.0.1:0");
        assert_eq!(
            plan(Ok(Some(&a)), sees(&[40001], &[]), none),
            Plan {
                port: Some(40001),
                verdict: Verdict::new(JdwpState::Listening, Detail::EphemeralListener)
            }
        );
        assert_eq!(
            state(&plan(Ok(Some(&a)), sees(&[7, 8], &[]), none)),
            Some(JdwpState::NotProbed)
        );
        let remote = agent("transport=dt_socket,server=y,suspend=n,address=192.0.2.1:5005");
        assert_eq!(
            state(&plan(Ok(Some(&remote)), sees(&[5005], &[]), none)),
            Some(JdwpState::NotProbed)
        );
        let client = agent("transport=dt_socket,server=n,address=localhost:5005");
        assert_eq!(
            state(&plan(Ok(Some(&client)), sees(&[], &[]), none)),
            Some(JdwpState::NotProbed)
        );
        assert_eq!(
            state(&plan(Ok(None), sees(&[], &[]), none)),
            Some(JdwpState::NotProbed)
        );
        assert_eq!(
            state(&plan(Err("bad"), sees(&[], &[]), none)),
            Some(JdwpState::NotProbed)
        );
    }

    #[test]
    fn ours_and_held_ports_are_recognised() {
        let a = agent("transport=dt_socket,server=y,suspend=n,address=5005");
        let ours = |p: u16| (p == 5005).then(|| "s1".to_string());
        assert_eq!(
            state(&plan(Ok(Some(&a)), sees(&[], &[5005]), ours)),
            Some(JdwpState::ConnectedToUs)
        );
        let eph = agent("transport=dt_socket,server=y,suspend=y,address=127.0.0.1:0");
        assert_eq!(
            state(&plan(Ok(Some(&eph)), sees(&[], &[5005]), ours)),
            Some(JdwpState::ConnectedToUs)
        );
        let p = plan(Ok(Some(&a)), sees(&[], &[5005]), none);
        assert_eq!(
            p,
            Plan {
                port: Some(5005),
                verdict: Verdict::unreachable(Detail::HeldByAnother)
            }
        );
        let p = plan(Ok(Some(&a)), sees(&[], &[]), none);
        assert_eq!(state(&p), Some(JdwpState::Unreachable));
    }
}
