//! The local-JVM listing as an agent reads it: one block per JVM (pid,
//! what it runs, its JDK, uptime, the masked command line) and its JDWP
//! endpoint's state with a one-line remedy; the same as JSON.

use crate::mcp::tools::data;

use crate::actors::{JvmListing, LocalJvm, ProbeReport, Seen};
use crate::model::jvms::{Detail, JdwpState, Launch, Origin, Verdict};

/// Longest command line shown, in characters.
const ARGV_CHARS: usize = 240;

/// The stable word of a state.
pub fn state_label(s: JdwpState) -> &'static str {
    match s {
        JdwpState::ConnectedToUs => "CONNECTED_TO_US",
        JdwpState::Listening => "LISTENING",
        JdwpState::WaitingForDebugger => "WAITING_FOR_DEBUGGER",
        JdwpState::Unreachable => "UNREACHABLE",
        JdwpState::NotProbed => "NOT_PROBED",
    }
}

/// What the verdict means and what to do, on one line.
pub fn remedy(v: &Verdict, port: Option<u16>) -> String {
    let p = port.map_or("PORT".to_string(), |p| p.to_string());
    match &v.detail {
        Detail::Ours(id) => format!("session {id} is attached to it: pass session_id {id:?}"),
        Detail::Handshook => format!("answers the handshake, no debugger holds it: debug_attach {{port: {p}}}"),
        Detail::OwnListener => format!("its agent listens, no debugger holds it (read from /proc, not dialled): debug_attach {{port: {p}}}"),
        Detail::Hidden(what) => format!(
            "{what} could not be read, and a JDWP agent may be set there (one waiting for its debugger would be released by a probe): not dialled; its output names the port (\"Listening for transport dt_socket at address: N\")"
        ),
        Detail::EphemeralListener => format!(
            "its agent listens on ephemeral port {p} (not dialled: a probe would move it): debug_attach {{port: {p}}}"
        ),
        Detail::Waiting => format!(
            "suspend=y: its main has not run, it waits for a debugger (not dialled: a probe would release it). debug_attach {{port: {p}}} takes it; it stays held until you resume"
        ),
        Detail::NoAgent => "no JDWP agent: restart it with -agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=127.0.0.1:5005".into(),
        Detail::BadAgent(e) => format!("its JDWP option cannot be read ({e}): fix it and restart"),
        Detail::NotSocket(t) => format!("transport {t:?}: only dt_socket can be attached"),
        Detail::DialsOut(a) => format!("server=n: it connects out to a debugger at {a}; restart it with server=y to attach"),
        Detail::NotLoopback(a) => format!("{a} is not this machine's loopback: never dialled; debug_attach {{host, port}} if you mean to"),
        Detail::PortUnknown { candidates } if candidates.is_empty() => {
            "ephemeral port (address=…:0) and no listening socket: its output names the port (\"Listening for transport dt_socket at address: N\")".into()
        }
        Detail::PortUnknown { candidates } => format!(
            "ephemeral port, several listening sockets ({}); not dialled: its output names the JDWP one",
            join(candidates)
        ),
        Detail::HeldByAnother => "another debugger is connected (a JVM takes one at a time): detach it first".into(),
        Detail::NotListening => format!(
            "nothing listens on {p}: the agent is not up yet, waits for onthrow/onuncaught, or a debugger holds it"
        ),
        Detail::Refused => "connection refused: nothing listens there".into(),
        Detail::NotJdwp(d) => format!("not JDWP: {d}"),
        Detail::Silent(ms) => format!("no connection within {ms} ms"),
        Detail::Failed(e) => format!("probe failed: {e}"),
    }
}

fn join(ports: &[u16]) -> String {
    ports
        .iter()
        .map(u16::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn launch(l: &Launch) -> String {
    match l {
        Launch::Class(c) => c.clone(),
        Launch::Jar(j) => format!("-jar {j}"),
        Launch::Module(m) => format!("-m {m}"),
        Launch::Unknown => "?".into(),
    }
}

/// What a JVM runs: its main class, jar or module.
pub fn main_of(j: &crate::actors::LocalJvm) -> String {
    launch(&j.launch)
}

fn uptime(d: Option<std::time::Duration>) -> String {
    let Some(d) = d else { return "?".into() };
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

fn endpoint(j: &LocalJvm) -> String {
    let Some(a) = &j.agent else {
        return "no JDWP".into();
    };
    let addr = a
        .address
        .as_ref()
        .map_or("?".to_string(), |ad| match (&ad.host, j.port) {
            (Some(h), Some(p)) => format!("{h}:{p}"),
            (None, Some(p)) => format!("{p}"),
            (Some(h), None) => format!("{h}:{}", ad.port),
            (None, None) => ad.port.to_string(),
        });
    let from = match &a.origin {
        Origin::CommandLine => String::new(),
        o => format!(" (from {o})"),
    };
    format!(
        "jdwp {addr} server={} suspend={}{from}",
        yn(a.server),
        yn(a.suspend)
    )
}

fn yn(b: bool) -> &'static str {
    if b { "y" } else { "n" }
}

/// The text of one JVM.
pub fn jvm_text(j: &LocalJvm) -> String {
    let mut argv = j.argv.join(" ");
    if argv.chars().count() > ARGV_CHARS {
        argv = argv.chars().take(ARGV_CHARS).collect::<String>() + "…";
    }
    let ours = j
        .launched_by
        .as_ref()
        .map(|s| format!(" · launched by {s}"))
        .unwrap_or_default();
    format!(
        "pid {} {} · {} · up {}{ours}\n  {}: {} — {}\n  argv: {}",
        j.pid,
        launch(&j.launch),
        j.java_home.as_deref().unwrap_or("JDK ?"),
        uptime(j.uptime),
        endpoint(j),
        state_label(j.verdict.state),
        remedy(&j.verdict, j.port),
        if argv.is_empty() {
            "(unreadable; seen in hsperfdata only)".into()
        } else {
            argv
        },
    )
}

/// The probe's answer, on one line.
pub fn probe_text(p: &ProbeReport) -> String {
    let owner = p.pid.map(|pid| format!(" (pid {pid})")).unwrap_or_default();
    format!(
        "probe {}:{}{owner}: {} — {} [{} ms]",
        p.host,
        p.port,
        state_label(p.verdict.state),
        remedy(&p.verdict, Some(p.port)),
        p.took.as_millis()
    )
}

/// The whole listing as text.
pub fn listing_text(l: &JvmListing) -> String {
    let mut out = String::new();
    if let Some(p) = &l.probe {
        out.push_str(&probe_text(p));
        out.push('\n');
    }
    out.push_str(&format!(
        "{} local JVM{} of this user ({} processes read in {} ms{})",
        l.jvms.len(),
        if l.jvms.len() == 1 { "" } else { "s" },
        l.scanned,
        l.took.as_millis(),
        if l.cut {
            "; scan budget spent, some processes not read"
        } else {
            ""
        }
    ));
    for j in &l.jvms {
        out.push('\n');
        out.push_str(&jvm_text(j));
    }
    out
}

/// The listing as data.
pub fn listing_data(l: &JvmListing) -> data::Jvms {
    let jvms = l
        .jvms
        .iter()
        .map(|j| data::JvmRow {
            pid: j.pid,
            main: launch(&j.launch),
            java_home: j.java_home.clone(),
            uptime_s: j.uptime.map(|d| d.as_secs()),
            argv: j.argv.clone(),
            jdwp: j.agent.as_ref().map(|a| data::Agent {
                options: a.options_text(),
                server: a.server,
                suspend: a.suspend,
                port: j.port,
                from: a.origin.to_string(),
            }),
            seen_in: match j.seen {
                Seen::Proc => "proc",
                Seen::PerfData => "hsperfdata",
                Seen::Both => "proc+hsperfdata",
            }
            .into(),
            launched_by: j.launched_by.clone(),
            state: state_label(j.verdict.state).into(),
            remedy: remedy(&j.verdict, j.port),
        })
        .collect();
    data::Jvms {
        jvms,
        probe: l.probe.as_ref().map(|p| data::Probe {
            host: p.host.clone(),
            port: p.port,
            pid: p.pid,
            state: state_label(p.verdict.state).into(),
            remedy: remedy(&p.verdict, Some(p.port)),
            took_ms: p.took.as_millis() as u64,
        }),
        scanned: l.scanned,
        took_ms: l.took.as_millis() as u64,
    }
}
