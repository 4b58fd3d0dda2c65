//! CPU per native thread of a local JVM, from two readings of
//! `/proc/<pid>/task/*/stat`, and each native thread matched to its Java
//! thread. HotSpot names a Java thread's native thread after it, cut to
//! the 15 bytes Linux keeps; the JVM's own threads (GC, JIT compilers,
//! the VM thread) carry names of their own; the launcher's first thread
//! and the thread running `main` are both named `java`. Pure: the lines
//! and names come in, a ranking goes out.

use std::collections::HashMap;

/// Bytes Linux keeps of a thread name.
pub const COMM_BYTES: usize = 15;

/// One task's line of `/proc/<pid>/task/<tid>/stat`, as far as needed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskStat {
    pub tid: u32,
    /// The native name (`comm`).
    pub comm: String,
    /// User and system time, in clock ticks.
    pub ticks: u64,
}

/// Reads a `stat` line: `tid (comm) state … utime stime …`. The name may
/// hold spaces and parentheses, so it runs to the last `)`.
pub fn parse_stat(line: &str) -> Option<TaskStat> {
    let open = line.find('(')?;
    let close = line.rfind(')')?;
    if close < open {
        return None;
    }
    let tid = line[..open].trim().parse().ok()?;
    let comm = line[open + 1..close].to_string();
    let rest: Vec<&str> = line[close + 1..].split_whitespace().collect();
    // Fields 14 and 15 of the line (utime, stime) are 12th and 13th after the name.
    let utime: u64 = rest.get(11)?.parse().ok()?;
    let stime: u64 = rest.get(12)?.parse().ok()?;
    Some(TaskStat {
        tid,
        comm,
        ticks: utime.saturating_add(stime),
    })
}

/// What a native thread is, as far as names tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owner {
    /// Exactly one Java thread has this native name.
    Java(String),
    /// Several Java threads share the cut name; one of them.
    OneOf(Vec<String>),
    /// The thread running `main` (native name `java`, not the process's first thread).
    Main,
    /// A thread of the JVM itself, with what it does.
    Jvm(JvmThread),
    /// The launcher's first thread (waits for `main` to end).
    Launcher,
    /// No Java thread has this name (a native thread of a library, or a
    /// Java thread renamed after it started).
    Unknown,
}

/// The JVM's own threads, by family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JvmThread {
    Gc,
    Compiler,
    Vm,
    Other,
}

/// The native name HotSpot gives a Java thread: its name cut to 15 bytes
/// (a cut through a multi-byte character is read back lossily).
pub fn native_name(java: &str) -> String {
    let b = java.as_bytes();
    String::from_utf8_lossy(&b[..b.len().min(COMM_BYTES)]).into_owned()
}

/// The family of a JVM-internal native thread, by its name.
fn jvm_family(comm: &str) -> JvmThread {
    const GC: &[&str] = &[
        "GC Thread",
        "G1 ",
        "Parallel GC",
        "ZGC",
        "Z ",
        "Shenandoah",
        "Conc",
        "GC ",
    ];
    if GC.iter().any(|p| comm.starts_with(p)) {
        JvmThread::Gc
    } else if comm.contains("CompilerThre") || comm.starts_with("Sweeper") {
        JvmThread::Compiler
    } else if comm.starts_with("VM ") {
        JvmThread::Vm
    } else {
        JvmThread::Other
    }
}

/// Names the JVM gives its own threads, prefix-matched.
fn is_jvm_name(comm: &str) -> bool {
    jvm_family(comm) != JvmThread::Other
        || [
            "Monitor Deflati",
            "Service Thread",
            "VM Periodic Tas",
            "JDWP ",
        ]
        .iter()
        .any(|p| comm.starts_with(p))
}

/// Matches one native thread to its owner among `java_names` (every live
/// Java thread's name). `pid` tells the launcher's thread from `main`.
pub fn owner(task: &TaskStat, pid: u32, java_names: &[String]) -> Owner {
    let matching: Vec<String> = java_names
        .iter()
        .filter(|n| native_name(n) == task.comm)
        .cloned()
        .collect();
    match matching.len() {
        1 => return Owner::Java(matching.into_iter().next().unwrap_or_default()),
        n if n > 1 => return Owner::OneOf(matching),
        _ => {}
    }
    if task.comm == "java" {
        return if task.tid == pid {
            Owner::Launcher
        } else {
            Owner::Main
        };
    }
    if is_jvm_name(&task.comm) {
        Owner::Jvm(jvm_family(&task.comm))
    } else {
        Owner::Unknown
    }
}

/// One native thread's share of a core over the interval.
#[derive(Debug, Clone, PartialEq)]
pub struct HotThread {
    pub tid: u32,
    pub comm: String,
    pub owner: Owner,
    /// Percent of one core.
    pub cpu_pct: f64,
}

/// Ranks the threads seen in both readings by CPU over `secs` seconds
/// (`hz` ticks a second), busiest first; threads born in between count
/// from zero.
pub fn rank(
    before: &[TaskStat],
    after: &[TaskStat],
    secs: f64,
    hz: f64,
    pid: u32,
    java_names: &[String],
) -> Vec<HotThread> {
    let then: HashMap<u32, u64> = before.iter().map(|t| (t.tid, t.ticks)).collect();
    let mut out: Vec<HotThread> = after
        .iter()
        .map(|t| {
            let used = t
                .ticks
                .saturating_sub(then.get(&t.tid).copied().unwrap_or(0));
            let pct = if secs > 0.0 && hz > 0.0 {
                100.0 * used as f64 / hz / secs
            } else {
                0.0
            };
            HotThread {
                tid: t.tid,
                comm: t.comm.clone(),
                owner: owner(t, pid, java_names),
                cpu_pct: pct,
            }
        })
        .collect();
    out.sort_by(|a, b| b.cpu_pct.total_cmp(&a.cpu_pct).then(a.tid.cmp(&b.tid)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn stat(tid: u32, comm: &str, ticks: u64) -> TaskStat {
        TaskStat {
            tid,
            comm: comm.into(),
            ticks,
        }
    }

    #[test]
    fn stat_lines_read_with_odd_names() {
        let line = "31949 (busy (x) wo) R 31917 31917 1 0 -1 4194368 50 0 0 0 150 25 0 0 20 0 24 0";
        assert_eq!(parse_stat(line), Some(stat(31949, "busy (x) wo", 175)));
        assert_eq!(parse_stat("garbage"), None);
        assert_eq!(parse_stat("1 (a) R 1"), None);
    }

    #[test]
    fn native_threads_find_their_java_threads() {
        let names: Vec<String> = [
            "busy-spinner-worker",
            "pool-1-thread-1",
            "pool-1-thread-10",
            "main",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let check = |tid, comm: &str, expect: Owner| {
            assert_eq!(owner(&stat(tid, comm, 0), 100, &names), expect, "{comm}");
        };
        check(
            7,
            "busy-spinner-wo",
            Owner::Java("busy-spinner-worker".into()),
        );
        check(
            8,
            "pool-1-thread-1",
            Owner::OneOf(vec!["pool-1-thread-1".into(), "pool-1-thread-10".into()]),
        );
        check(100, "java", Owner::Launcher);
        check(101, "java", Owner::Main);
        check(9, "GC Thread#0", Owner::Jvm(JvmThread::Gc));
        check(10, "C2 CompilerThre", Owner::Jvm(JvmThread::Compiler));
        check(11, "VM Thread", Owner::Jvm(JvmThread::Vm));
        check(12, "G1 Refine#0", Owner::Jvm(JvmThread::Gc));
        check(13, "libfoo-io", Owner::Unknown);
    }

    #[test]
    fn ranking_is_by_cpu_over_the_interval() {
        let before = [stat(1, "a", 100), stat(2, "b", 50)];
        let after = [stat(1, "a", 110), stat(2, "b", 150), stat(3, "c", 20)];
        let r = rank(&before, &after, 1.0, 100.0, 1, &[]);
        let got: Vec<(u32, f64)> = r.iter().map(|h| (h.tid, h.cpu_pct)).collect();
        assert_eq!(got, vec![(2, 100.0), (3, 20.0), (1, 10.0)]);
    }

    proptest! {
        #[test]
        fn any_line_parses_without_panic(line in ".{0,200}") {
            let _ = parse_stat(&line);
            let _ = native_name(&line);
        }
    }
}
