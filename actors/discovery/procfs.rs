//! Reading `/proc` and `hsperfdata_<user>` for the JVMs this user runs:
//! command lines, the launcher binary, start times, socket inodes, the
//! kernel's TCP tables. Blocking file reads, run off the async runtime and
//! cut off at a deadline so a machine with hundreds of processes answers
//! in time. Nothing here dials.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::model::jvms::TcpState;
use crate::model::jvms::options::{Lookup, MAX_ARGFILE, OPTION_VARS};
use crate::model::jvms::{JavaCommand, TcpSocket, Unseen, looks_like_java, read_command};

/// Longest command line read (bytes): the rest is cut.
const MAX_CMDLINE: usize = 64 * 1024;
/// Most `fd/` links read for one process when its port must be found.
const MAX_FDS: usize = 4096;
/// `/proc/<pid>/stat` start times are in these ticks per second (Linux
/// `USER_HZ`, fixed by the ABI).
const USER_HZ: f64 = 100.0;

/// One process that looks like a JVM, as read.
#[derive(Debug, Clone)]
pub struct RawJvm {
    pub pid: u32,
    /// Unmasked: never leaves the actor layer.
    pub argv: Vec<String>,
    /// Its options read with its environment and argfiles.
    pub command: JavaCommand,
    /// What could not be read while looking for its options.
    pub unseen: Unseen,
    pub exe: Option<PathBuf>,
    pub uptime: Option<Duration>,
    pub in_proc: bool,
    pub in_perfdata: bool,
    /// Its socket inodes, read when it loads a JDWP agent (its endpoint
    /// is then told by its own listening socket); `None` when unreadable.
    pub sockets: Option<HashSet<u64>>,
}

/// What one scan found.
#[derive(Debug, Default)]
pub struct Scan {
    pub jvms: Vec<RawJvm>,
    /// Processes looked at.
    pub scanned: usize,
    /// The deadline cut the scan short.
    pub cut: bool,
    pub tcp: Vec<TcpSocket>,
}

/// Scans `/proc` (this user's processes only) and the hsperfdata
/// directories, until `deadline`.
pub fn scan(deadline: Instant) -> Scan {
    let mut out = Scan::default();
    let uid = my_uid();
    let me = std::process::id();
    let perf = perfdata_pids(uid);
    let boot_uptime = system_uptime();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return out;
    };
    let mut seen = HashSet::new();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if Instant::now() >= deadline {
            out.cut = true;
            break;
        }
        out.scanned += 1;
        if pid == me {
            continue;
        }
        let dir = entry.path();
        if uid.is_some() && std::fs::metadata(&dir).map(|m| m.uid()).ok() != uid {
            continue;
        }
        let argv = read_cmdline(&dir);
        let in_perfdata = perf.contains(&pid);
        if !in_perfdata && !looks_like_java(&argv) {
            continue;
        }
        seen.insert(pid);
        let (command, unseen) = options_of(&dir, &argv);
        let sockets = command
            .agent
            .is_some()
            .then(|| socket_inodes(pid))
            .flatten();
        out.jvms.push(RawJvm {
            pid,
            command,
            unseen,
            sockets,
            exe: read_exe(&dir),
            uptime: boot_uptime.and_then(|up| uptime_of(&dir, up)),
            in_proc: !argv.is_empty(),
            argv,
            in_perfdata,
        });
    }
    // A perfdata entry whose process we could not read (gone, or /proc
    // hides it): listed, with nothing but its pid, unless it is stale.
    for pid in perf {
        if !seen.contains(&pid) && !out.cut && Path::new(&format!("/proc/{pid}")).exists() {
            out.jvms.push(RawJvm {
                pid,
                argv: Vec::new(),
                command: JavaCommand::parse(&[]),
                unseen: Unseen {
                    environment: true,
                    argfiles: Vec::new(),
                },
                exe: None,
                uptime: None,
                in_proc: false,
                in_perfdata: true,
                sockets: None,
            });
        }
    }
    out.jvms.sort_by_key(|j| j.pid);
    out.tcp = tcp_table();
    out
}

/// The uid this server runs as.
pub fn my_uid() -> Option<u32> {
    std::fs::metadata("/proc/self").map(|m| m.uid()).ok()
}

/// Pids named by this user's `hsperfdata_<user>` directories (what `jps`
/// lists).
fn perfdata_pids(uid: Option<u32>) -> HashSet<u32> {
    let mut pids = HashSet::new();
    let tmp = std::env::temp_dir();
    let mut dirs: Vec<PathBuf> = vec![PathBuf::from("/tmp")];
    if tmp != Path::new("/tmp") {
        dirs.push(tmp);
    }
    for base in dirs {
        let Ok(entries) = std::fs::read_dir(&base) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let mine = e.metadata().map(|m| Some(m.uid()) == uid).unwrap_or(false);
            if !name.to_string_lossy().starts_with("hsperfdata_") || !mine {
                continue;
            }
            if let Ok(files) = std::fs::read_dir(e.path()) {
                pids.extend(
                    files
                        .flatten()
                        .filter_map(|f| f.file_name().to_str()?.parse::<u32>().ok()),
                );
            }
        }
    }
    pids
}

fn read_cmdline(dir: &Path) -> Vec<String> {
    let Ok(bytes) = std::fs::read(dir.join("cmdline")) else {
        return Vec::new();
    };
    let bytes = &bytes[..bytes.len().min(MAX_CMDLINE)];
    bytes
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

/// A JVM's options with what its environment and argfiles add. Argfile
/// paths are relative to the process's working directory.
fn options_of(dir: &Path, argv: &[String]) -> (JavaCommand, Unseen) {
    let env = read_option_vars(dir);
    let lookup = |name: &str| {
        env.as_ref()
            .ok()
            .and_then(|e| e.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
    };
    let cwd = dir.join("cwd");
    let mut argfile = |path: &str| {
        let path = Path::new(path);
        let full = if path.is_absolute() {
            path.to_path_buf()
        } else {
            cwd.join(path)
        };
        let file = std::fs::File::open(full).ok()?;
        if file.metadata().ok()?.len() > MAX_ARGFILE {
            return None;
        }
        std::io::read_to_string(file).ok()
    };
    let env_view: Option<Lookup<'_>> = env.is_ok().then_some(&lookup);
    read_command(argv, env_view, &mut argfile)
}

/// The option-carrying variables of a process's environment; `Err` when
/// the environment cannot be read.
fn read_option_vars(dir: &Path) -> Result<Vec<(String, String)>, ()> {
    let bytes = std::fs::read(dir.join("environ")).map_err(|_| ())?;
    Ok(bytes
        .split(|b| *b == 0)
        .filter_map(|kv| {
            let kv = String::from_utf8_lossy(kv);
            let (k, v) = kv.split_once('=')?;
            OPTION_VARS
                .contains(&k)
                .then(|| (k.to_string(), v.to_string()))
        })
        .collect())
}

fn read_exe(dir: &Path) -> Option<PathBuf> {
    let link = std::fs::read_link(dir.join("exe")).ok()?;
    let text = link.to_string_lossy();
    Some(PathBuf::from(text.trim_end_matches(" (deleted)")))
}

/// Seconds since boot.
fn system_uptime() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/uptime").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// How long a process has run: its start time (field 22 of `stat`, after
/// the parenthesised name, which may itself hold spaces).
fn uptime_of(dir: &Path, boot_uptime: f64) -> Option<Duration> {
    let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
    let after = stat.rsplit_once(')')?.1;
    let ticks: f64 = after.split_whitespace().nth(19)?.parse().ok()?;
    let secs = boot_uptime - ticks / USER_HZ;
    (secs >= 0.0).then(|| Duration::from_secs_f64(secs))
}

/// The socket inodes a process holds; `None` when its `fd/` cannot be
/// read.
pub(super) fn socket_inodes(pid: u32) -> Option<HashSet<u64>> {
    let mut out = HashSet::new();
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
    for fd in fds.flatten().take(MAX_FDS) {
        if let Ok(link) = std::fs::read_link(fd.path())
            && let Some(inode) = link
                .to_str()
                .and_then(|l| l.strip_prefix("socket:["))
                .and_then(|l| l.strip_suffix(']'))
                .and_then(|l| l.parse().ok())
        {
            out.insert(inode);
        }
    }
    Some(out)
}

/// The peer of an open connection to local `port` (`ip:port`), when one
/// is open: a JDWP agent that refuses a dial while such a connection
/// exists has a debugger attached.
pub fn connected_to(port: u16) -> Option<String> {
    tcp_table()
        .into_iter()
        .find(|s| s.state == TcpState::Established && s.local_port == port)
        .map(|s| format!("{}:{}", s.remote.dial_host(), s.remote_port))
}

/// Every socket of `/proc/net/tcp` and `/proc/net/tcp6`.
fn tcp_table() -> Vec<TcpSocket> {
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .flat_map(|t| t.lines().filter_map(TcpSocket::parse).collect::<Vec<_>>())
        .collect()
}

/// The JDK a launcher binary belongs to: `<home>/bin/java` → `<home>`.
pub fn java_home(exe: &Path) -> Option<String> {
    let bin = exe.parent()?;
    (bin.file_name()? == "bin").then(|| bin.parent().map(|h| h.display().to_string()))?
}
