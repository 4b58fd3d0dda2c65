//! Discovery of the local JVMs this user runs, and the handshake probe.
//! Each JVM's options are read where the JVM reads them: `/proc/<pid>/
//! cmdline`, the `@argfile`s it names and the option variables of
//! `/proc/<pid>/environ` (`JAVA_TOOL_OPTIONS`, `JDK_JAVA_OPTIONS`,
//! `_JAVA_OPTIONS`); merged with `hsperfdata_<user>` (what `jps` lists,
//! JVMs without JDWP included). Its listening socket is its own, read from
//! its `fd/` links and `/proc/net/tcp`. A listing dials nothing
//! (`model::jvms::plan`); only an explicit probe handshakes a loopback
//! endpoint, never one of a JVM waiting for its debugger, of a JVM whose
//! options could not be read, or of another user. Secrets in argv are
//! masked here, before anything leaves this layer.

mod attach;
mod local;
mod procfs;

pub use procfs::connected_to;

use std::time::{Duration, Instant};

use crate::connection::dial::dial;
use crate::error::{AttachError, LocalError};
use crate::model::cpu::TaskStat;
use crate::model::histogram::{ClassCount, parse_hotspot};
use crate::model::jvms::{
    Detail, JdwpAgent, JdwpState, Launch, Plan, Sight, TcpSocket, TcpState, Verdict,
    is_loopback_host, is_secret_key, mask_argv, plan,
};
use crate::model::perfdata::Vitals;

/// Budgets of one listing.
#[derive(Debug, Clone, Copy)]
pub struct DiscoveryBudget {
    /// Reading `/proc`.
    pub scan: Duration,
    /// The handshake of an explicit probe (connect + 14 bytes each way).
    pub per_probe: Duration,
}

impl Default for DiscoveryBudget {
    fn default() -> Self {
        Self {
            scan: Duration::from_millis(150),
            per_probe: Duration::from_millis(300),
        }
    }
}

/// Where a JVM was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    Proc,
    PerfData,
    Both,
}

/// One local JVM, secrets masked.
#[derive(Debug, Clone)]
pub struct LocalJvm {
    pub pid: u32,
    /// The command line, masked.
    pub argv: Vec<String>,
    pub launch: Launch,
    /// The JDK it runs on, from `/proc/<pid>/exe`.
    pub java_home: Option<String>,
    pub uptime: Option<Duration>,
    /// Its JDWP agent (option values that name secrets masked).
    pub agent: Option<JdwpAgent>,
    /// The TCP port of its JDWP endpoint, when known.
    pub port: Option<u16>,
    pub verdict: Verdict,
    pub seen: Seen,
    /// The session of ours that launched it, if one did.
    pub launched_by: Option<String>,
}

/// The answer to an explicit probe of a loopback endpoint.
#[derive(Debug, Clone)]
pub struct ProbeReport {
    pub host: String,
    pub port: u16,
    pub verdict: Verdict,
    /// The local JVM that listens there, when discovery knows it.
    pub pid: Option<u32>,
    pub took: Duration,
}

/// What one listing found.
#[derive(Debug, Clone)]
pub struct JvmListing {
    pub jvms: Vec<LocalJvm>,
    pub probe: Option<ProbeReport>,
    /// Processes looked at.
    pub scanned: usize,
    /// The scan budget ran out (some processes were not looked at).
    pub cut: bool,
    pub took: Duration,
}

/// One of our live sessions, as discovery matches it.
pub struct Ours {
    pub id: String,
    pub port: u16,
    pub local: bool,
    pub pid: Option<u32>,
}

/// The local JVMs and the state of their JDWP endpoints, our own sessions
/// among them (`ours`); with `probe`, also that loopback endpoint's state.
pub async fn list_jvms(
    ours: Vec<Ours>,
    probe: Option<(String, u16)>,
    budget: DiscoveryBudget,
) -> JvmListing {
    let started = Instant::now();
    let deadline = started + budget.scan;
    let scan = tokio::task::spawn_blocking(move || procfs::scan(deadline))
        .await
        .unwrap_or_default();
    let jvms: Vec<LocalJvm> = scan
        .jvms
        .iter()
        .map(|raw| classify(raw, &scan.tcp, &ours).0)
        .collect();
    let probe = match probe {
        Some((host, port)) => {
            Some(probe_endpoint(host, port, &jvms, &ours, &scan.tcp, budget).await)
        }
        None => None,
    };
    JvmListing {
        jvms,
        probe,
        scanned: scan.scanned,
        cut: scan.cut,
        took: started.elapsed(),
    }
}

/// What the watch behind `notifications/resources/updated` compares from
/// one scan to the next: each local JVM's pid with the state of its JDWP
/// endpoint as far as `/proc` tells it (its listening ports, or the state
/// settled from its argv and sockets). Read without dialling anything, so
/// watching never touches a JVM.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JvmsSnapshot(Vec<(u32, Vec<u16>, Option<JdwpState>)>);

impl JvmsSnapshot {
    /// How many JVMs it saw.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A cheap reading of the local JVMs for change detection: one `/proc`
/// and hsperfdata scan within `scan`, no handshake. `None` when the
/// budget cut the scan short (a partial set would read as a change).
pub async fn jvms_snapshot(ours: Vec<Ours>, scan: Duration) -> Option<JvmsSnapshot> {
    let deadline = Instant::now() + scan;
    let scan = tokio::task::spawn_blocking(move || procfs::scan(deadline))
        .await
        .ok()?;
    if scan.cut {
        return None;
    }
    let mut seen: Vec<(u32, Vec<u16>, Option<JdwpState>)> = scan
        .jvms
        .iter()
        .map(|raw| {
            let (jvm, hosts) = classify(raw, &scan.tcp, &ours);
            let mut ports: Vec<u16> = jvm.port.into_iter().collect();
            ports.extend(hosts.iter().map(|(p, _)| *p));
            ports.sort_unstable();
            ports.dedup();
            (jvm.pid, ports, Some(jvm.verdict.state))
        })
        .collect();
    seen.sort_unstable_by_key(|e| e.0);
    Some(JvmsSnapshot(seen))
}

/// Reads one JVM's options and sockets and says what its endpoint is;
/// with the address each of its listening ports is bound to.
fn classify(
    raw: &procfs::RawJvm,
    tcp: &[TcpSocket],
    ours: &[Ours],
) -> (LocalJvm, Vec<(u16, String)>) {
    let cmd = raw.command.clone();
    let launched_by = ours
        .iter()
        .find(|o| raw.pid != 0 && o.pid == Some(raw.pid))
        .map(|o| o.id.clone());
    let argv_port = cmd
        .agent
        .as_ref()
        .and_then(|a| a.address.as_ref())
        .map(|a| a.port);
    // An ephemeral port is found among the JVM's own sockets; a fixed one
    // by the port alone.
    let mine = |s: &&TcpSocket| match (&raw.sockets, argv_port) {
        (Some(inodes), _) => inodes.contains(&s.inode),
        (None, Some(p)) => s.local_port == p,
        (None, None) => false,
    };
    let sockets = |state: TcpState| {
        tcp.iter()
            .filter(move |s| s.state == state && s.local.reachable_on_loopback())
            .filter(mine)
    };
    let ports = |state: TcpState| -> Vec<u16> {
        let mut v: Vec<u16> = sockets(state).map(|s| s.local_port).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    // Where each listening port is dialled: the address it is bound to.
    let hosts: Vec<(u16, String)> = sockets(TcpState::Listen)
        .map(|s| (s.local_port, s.local.dial_host()))
        .collect();
    let listening = ports(TcpState::Listen);
    let established = ports(TcpState::Established);
    let agent_result = match (&cmd.agent, &cmd.agent_error) {
        (_, Some(e)) => Err(e.as_str()),
        (a, None) => Ok(a.as_ref()),
    };
    let sight = Sight {
        listening: &listening,
        established: &established,
        own_sockets: raw.sockets.is_some(),
        unseen: &raw.unseen,
    };
    let mut plan = plan(agent_result, sight, |p| {
        ours.iter()
            .find(|o| o.local && o.port == p)
            .map(|o| o.id.clone())
    });
    if let Some(id) = &launched_by {
        let port = ours.iter().find(|o| &o.id == id).map(|o| o.port);
        plan = Plan {
            port,
            verdict: Verdict::new(JdwpState::ConnectedToUs, Detail::Ours(id.clone())),
        };
    }
    let jvm = LocalJvm {
        pid: raw.pid,
        argv: mask_argv(&raw.argv),
        launch: cmd.launch.clone(),
        java_home: raw.exe.as_deref().and_then(procfs::java_home),
        uptime: raw.uptime,
        agent: cmd.agent.map(mask_agent),
        port: plan.port,
        verdict: plan.verdict,
        seen: match (raw.in_proc, raw.in_perfdata) {
            (true, true) => Seen::Both,
            (false, true) => Seen::PerfData,
            _ => Seen::Proc,
        },
        launched_by,
    };
    (jvm, hosts)
}

fn mask_agent(mut a: JdwpAgent) -> JdwpAgent {
    for (k, v) in &mut a.options {
        if is_secret_key(k) {
            *v = crate::model::jvms::MASK.to_string();
        }
    }
    a
}

/// One handshake on a loopback endpoint; the connection is closed at once.
async fn handshake(host: &str, port: u16, limit: Duration) -> Verdict {
    match dial(host, port, limit).await {
        Ok(stream) => {
            drop(stream);
            Verdict::new(JdwpState::Listening, Detail::Handshook)
        }
        Err(AttachError::Refused { .. }) => Verdict::unreachable(Detail::Refused),
        Err(AttachError::NotJdwp { detail, .. }) => Verdict::unreachable(Detail::NotJdwp(detail)),
        Err(AttachError::Connect { detail, .. }) if detail.starts_with("no answer") => {
            Verdict::unreachable(Detail::Silent(limit.as_millis() as u64))
        }
        Err(e) => Verdict::unreachable(Detail::Failed(e.to_string())),
    }
}

/// An explicit probe: loopback only; a port of ours, of a JVM waiting for
/// its debugger, of a JVM whose options could not be read or of another
/// user's process is answered without dialling.
async fn probe_endpoint(
    host: String,
    port: u16,
    jvms: &[LocalJvm],
    ours: &[Ours],
    tcp: &[TcpSocket],
    budget: DiscoveryBudget,
) -> ProbeReport {
    let me = procfs::my_uid();
    let strangers = tcp
        .iter()
        .find(|s| s.state == TcpState::Listen && s.local_port == port && Some(s.uid) != me);
    let started = Instant::now();
    let known = jvms.iter().find(|j| {
        j.port == Some(port)
            || matches!(&j.verdict.detail, Detail::PortUnknown { candidates } if candidates.contains(&port))
    });
    let verdict = if !is_loopback_host(&host) {
        Verdict::new(
            JdwpState::NotProbed,
            Detail::NotLoopback(format!("{host}:{port}")),
        )
    } else if let Some(o) = ours.iter().find(|o| o.local && o.port == port) {
        Verdict::new(JdwpState::ConnectedToUs, Detail::Ours(o.id.clone()))
    } else if let Some(j) = known.filter(|j| {
        j.agent.as_ref().is_some_and(|a| a.suspend)
            || matches!(
                j.verdict.state,
                JdwpState::ConnectedToUs | JdwpState::WaitingForDebugger
            )
            || matches!(j.verdict.detail, Detail::Hidden(_))
    }) {
        // Never dial what may be a JVM waiting for its debugger: what
        // discovery read from its options and sockets is the answer.
        j.verdict.clone()
    } else if let Some(s) = strangers.filter(|_| known.is_none()) {
        Verdict::new(
            JdwpState::NotProbed,
            Detail::Hidden(format!(
                "the options of the process of uid {} that listens there",
                s.uid
            )),
        )
    } else {
        // The host named, which is loopback: `[::1]` is dialled as `::1`.
        let dial_host = host.trim_start_matches('[').trim_end_matches(']');
        let dial_host = if dial_host.is_empty() || dial_host == "*" {
            "127.0.0.1"
        } else {
            dial_host
        };
        let limit = budget.per_probe;
        handshake(dial_host, port, limit).await
    };
    ProbeReport {
        host,
        port,
        verdict,
        pid: known.map(|j| j.pid),
        took: started.elapsed(),
    }
}

/// Runs a blocking read of a local process off the runtime.
async fn blocking<T: Send + 'static>(
    pid: u32,
    f: impl FnOnce() -> Result<T, LocalError> + Send + 'static,
) -> Result<T, LocalError> {
    tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| {
        Err(LocalError::Proc {
            pid,
            detail: format!("the reader failed: {e}"),
        })
    })
}

/// A local JVM's vital signs, from its hsperfdata (nothing attaches).
pub async fn vitals(pid: u32) -> Result<Vitals, LocalError> {
    blocking(pid, move || local::vitals(pid)).await
}

/// Seconds a local JVM has spent at safepoints so far (its perfdata).
pub async fn safepoint_secs(pid: u32) -> Option<f64> {
    blocking(pid, move || Ok(local::safepoint_secs(pid)))
        .await
        .ok()
        .flatten()
}

/// Every native thread of a local JVM with its CPU ticks so far.
pub async fn tasks(pid: u32) -> Result<Vec<TaskStat>, LocalError> {
    blocking(pid, move || local::tasks(pid)).await
}

/// The local process that holds a loopback JDWP port.
pub async fn pid_of_port(port: u16) -> Option<u32> {
    tokio::task::spawn_blocking(move || local::pid_of_port(port))
        .await
        .ok()
        .flatten()
}

/// The local process holding each of `ports`, from one `/proc` scan.
pub async fn pids_of_ports(ports: Vec<u16>) -> std::collections::HashMap<u16, u32> {
    tokio::task::spawn_blocking(move || local::pids_of_ports(&ports))
        .await
        .unwrap_or_default()
}

/// HotSpot's own class histogram through the attach socket (`inspectheap`,
/// what `jmap -histo` asks): live objects only (a full collection first)
/// or every object on the heap.
pub async fn hotspot_histogram(
    pid: u32,
    live: bool,
    limit: Duration,
) -> Result<Vec<ClassCount>, LocalError> {
    blocking(pid, move || {
        let text = attach::execute(
            pid,
            "inspectheap",
            &[if live { "-live" } else { "-all" }],
            limit,
        )?;
        Ok(parse_hotspot(&text))
    })
    .await
}

/// Runs one diagnostic command through the attach socket, as `jcmd <pid>
/// <line>` does (`JFR.start …`, `JFR.check`), and returns its output.
/// HotSpot answers a command that failed with its message and status 0,
/// so the caller reads the text.
pub async fn jcmd(pid: u32, line: String, limit: Duration) -> Result<String, LocalError> {
    blocking(pid, move || attach::execute(pid, "jcmd", &[&line], limit)).await
}

/// The Java home a local JVM runs from, from `/proc/<pid>/exe`.
pub fn java_home(pid: u32) -> Option<std::path::PathBuf> {
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?;
    let exe = exe.to_string_lossy();
    procfs::java_home(std::path::Path::new(exe.trim_end_matches(" (deleted)")))
        .map(std::path::PathBuf::from)
}
