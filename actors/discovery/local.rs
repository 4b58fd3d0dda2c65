//! Reading one local JVM's process without a debugger: its `hsperfdata`
//! counters (vital signs, and the safepoint time a pause cost), the CPU
//! time of each of its native threads, and which process holds a JDWP
//! port. Blocking file reads, run off the async runtime. Nothing here
//! writes to the JVM or signals it (the attach socket is `attach.rs`).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::LocalError;
use crate::model::cpu::{TaskStat, parse_stat};
use crate::model::jvms::TcpState;
use crate::model::perfdata::{Vitals, decode};

/// Threads read at most from `/proc/<pid>/task`.
const MAX_TASKS: usize = 10_000;
/// Largest perfdata file read (HotSpot's default is 32 KB; the flag
/// `PerfDataMemorySize` can raise it).
const MAX_PERFDATA: u64 = 16 * 1024 * 1024;

/// Where a JVM's perfdata file is: `hsperfdata_<user>/<pid>` in `/tmp`
/// or the temporary directory this server was given.
fn perfdata_path(pid: u32) -> Option<PathBuf> {
    let mut bases = vec![PathBuf::from("/tmp")];
    let tmp = std::env::temp_dir();
    if tmp != Path::new("/tmp") {
        bases.push(tmp);
    }
    for base in bases {
        let Ok(entries) = std::fs::read_dir(&base) else {
            continue;
        };
        for e in entries.flatten() {
            if !e.file_name().to_string_lossy().starts_with("hsperfdata_") {
                continue;
            }
            let file = e.path().join(pid.to_string());
            if file.is_file() {
                return Some(file);
            }
        }
    }
    None
}

/// One reading of a JVM's vital signs.
pub fn vitals(pid: u32) -> Result<Vitals, LocalError> {
    let path = perfdata_path(pid).ok_or(LocalError::NoPerfData { pid })?;
    let bytes = read_bounded(&path, MAX_PERFDATA).map_err(|e| LocalError::Proc {
        pid,
        detail: format!("{}: {e}", path.display()),
    })?;
    let counters = decode(&bytes).map_err(|source| LocalError::PerfData { pid, source })?;
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0);
    Ok(Vitals::from(&counters, now_ms))
}

/// Seconds the JVM has spent at safepoints, when its perfdata says.
pub fn safepoint_secs(pid: u32) -> Option<f64> {
    vitals(pid).ok().map(|v| v.safepoint_secs)
}

fn read_bounded(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut out = Vec::new();
    std::fs::File::open(path)?.take(max).read_to_end(&mut out)?;
    Ok(out)
}

/// Every native thread of `pid` with its CPU ticks so far.
pub fn tasks(pid: u32) -> Result<Vec<TaskStat>, LocalError> {
    let dir = format!("/proc/{pid}/task");
    let entries = std::fs::read_dir(&dir).map_err(|e| LocalError::Proc {
        pid,
        detail: format!("{dir}: {e}"),
    })?;
    Ok(entries
        .flatten()
        .take(MAX_TASKS)
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter_map(|line| parse_stat(&line))
        .collect())
}

/// The process that holds loopback TCP port `port` (its JDWP endpoint,
/// listening or connected to us). Our own process holds the other end of
/// such a connection and is never the answer.
pub fn pid_of_port(port: u16) -> Option<u32> {
    pids_of_ports(&[port]).remove(&port)
}

/// The process holding each of `ports`, as [`pid_of_port`] finds it, from
/// one scan: the socket table it read (each read of `/proc/net/tcp` walks
/// the kernel's whole connection hash, milliseconds on a large host) and
/// the sockets it found for each JVM with an agent. A group of eight
/// replicas is one scan, not eight. Ports no process holds are left out.
pub fn pids_of_ports(ports: &[u16]) -> HashMap<u16, u32> {
    let scan = super::procfs::scan(std::time::Instant::now() + Duration::from_millis(500));
    let me = std::process::id();
    let mut found = HashMap::new();
    for &port in ports {
        let inodes: HashSet<u64> = scan
            .tcp
            .iter()
            .filter(|s| s.local_port == port)
            .filter(|s| matches!(s.state, TcpState::Listen | TcpState::Established))
            .map(|s| s.inode)
            .collect();
        if inodes.is_empty() {
            continue;
        }
        let holder = scan.jvms.iter().filter(|j| j.pid != me).find(|j| {
            let sockets = j
                .sockets
                .clone()
                .or_else(|| super::procfs::socket_inodes(j.pid));
            sockets.is_some_and(|s| !s.is_disjoint(&inodes))
        });
        if let Some(j) = holder {
            found.insert(port, j.pid);
        }
    }
    found
}

/// The JVM's command line (to see whether attach is switched off).
pub fn argv(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            b.split(|c| *c == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The directory the JVM runs in.
pub fn cwd(pid: u32) -> Option<PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/cwd")).ok()
}
