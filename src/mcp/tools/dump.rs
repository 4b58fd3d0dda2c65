//! debug_thread_dump: every thread's stack with the monitors and ownable
//! synchronizers it holds and the lock it waits for (worded as `jstack -l`
//! words a parked thread), deadlock cycles first, identical stacks
//! collapsed, and what the dump cost (packets, the milliseconds it held
//! the VM).

use std::collections::HashMap;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Call, Ctx, Effect, Reply, Route};
use crate::actors::{Dump, DumpSpec, VmHold};
use crate::mcp::error::ToolError;
use crate::model::classes::NameFilter;
use crate::model::dump::{DumpThread, Monitor, Stack, WaitKind, Waiting, collapse};

/// Threads a dump reads by default.
const DEFAULT_LIMIT: usize = 100;
/// Frames shown per thread by default.
const DEFAULT_FRAMES: usize = 30;
/// The longest suspension a dump takes by default.
const DEFAULT_MAX_SUSPEND_MS: u64 = 2000;
/// Ids listed for a collapsed entry.
const IDS_SHOWN: usize = 12;

/// Arguments of debug_thread_dump.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThreadDumpParams {
    /// Session id; default: the current session.
    pub session_id: Option<String>,
    /// Hold the VM for the reads (bounded).
    pub suspend: Option<bool>,
    /// Bound on the suspension, ms; default 2000.
    pub max_suspend_ms: Option<u64>,
    /// Only threads already suspended.
    pub only_suspended: Option<bool>,
    /// Locks only, no frames.
    pub monitors_only: Option<bool>,
    /// Thread name: glob (pool-*) or substring.
    pub name_filter: Option<String>,
    /// Keep threads with a frame in this package.
    pub package_filter: Option<String>,
    /// Threads read; default 100.
    pub limit: Option<usize>,
    /// Frames shown per thread; default 30.
    pub max_frames: Option<usize>,
}

pub fn routes() -> Vec<Route> {
    vec![Route::new(
        "debug_thread_dump",
        "Thread dump",
        "Who is blocked on what: each thread's stack, the locks (monitors, j.u.c) it holds and the \
         one it waits for; deadlock cycles first, identical stacks collapsed. JDWP reads only suspended \
         threads: suspend:true holds the VM for the reads (max_suspend_ms) and says for how long.",
        Effect::Read,
        thread_dump,
    )
             .with_guide(
                 "Who is blocked on what: each thread's stack, the monitors it holds and the one it waits for (`← held by \
                   0x<id> \"<name>\"`). A thread parked on a java.util.concurrent lock is named as jstack -l names it \
                   (`parking to wait for <0x…> (a java.util.concurrent.locks.ReentrantLock$NonfairSync)`, with the owning \
                   thread), and the owner lists it as a locked ownable synchronizer. Deadlock cycles, over monitors and \
                   such locks in one graph, are named first; no filter hides a deadlocked thread or its cycle, and \
                   package_filter matches any frame of the stack, shown or not. Threads with identical stacks and locks collapse \
                   into one entry with count and ids. JDWP reads stacks and locks of suspended threads only: suspend:true \
                   freezes the VM just for the reads (max_suspend_ms bound, said loudly when hit; resumed and verified \
                   before the reply); without it only already-suspended threads are read. Reports packets spent and ms \
                   the VM was held. Virtual threads are marked; JDWP lists them only with includevirtualthreads=y.",
             )
             .runs_long_when(|args| super::flag(args, "suspend"))]
}

async fn thread_dump(ctx: Ctx, call: Call<ThreadDumpParams>) -> Reply {
    let p = call.params?;
    let handle = ctx.engine.session(p.session_id.as_deref())?;
    let spec = DumpSpec {
        suspend: p.suspend.unwrap_or(false),
        max_suspend: Duration::from_millis(
            p.max_suspend_ms.unwrap_or(DEFAULT_MAX_SUSPEND_MS).max(1),
        ),
        frames: !p.monitors_only.unwrap_or(false),
        max_frames: Some(p.max_frames.unwrap_or(DEFAULT_FRAMES)),
        only_suspended: p.only_suspended.unwrap_or(false),
        name_filter: NameFilter::parse(p.name_filter.as_deref()),
        limit: p.limit.unwrap_or(DEFAULT_LIMIT).max(1),
        package: p.package_filter.as_deref().map(package_prefix),
        ..DumpSpec::default()
    };
    let suspend = spec.suspend;
    let progress = super::progress_reporter("threads read");
    let dump = tokio::select! {
        d = handle.thread_dump(spec, progress) => d?,
        _ = super::cancelled() => return Err(ToolError::new("CANCELLED", "the dump was cancelled; any suspension it took was undone")),
    };
    let text = render(&dump, &dump.threads, suspend);
    Ok(super::text(text))
}

/// `com.acme.*` or `com.acme` → `com.acme.`.
fn package_prefix(raw: &str) -> String {
    let p = raw.trim().trim_end_matches('*').trim_end_matches('.');
    format!("{p}.")
}

/// The reply text: the header, deadlocks, every entry, the cost.
fn render(dump: &Dump, threads: &[DumpThread], suspend: bool) -> String {
    let mut out = format!(
        "Thread dump: {} thread{} shown of {} live",
        threads.len(),
        if threads.len() == 1 { "" } else { "s" },
        dump.live
    );
    let mut why = Vec::new();
    if dump.matched != dump.live {
        why.push(format!("{} matched the filters", dump.matched));
    }
    if dump.exempt > 0 {
        why.push(format!("{} deadlocked shown past the filters", dump.exempt));
    }
    if !why.is_empty() {
        out.push_str(&format!(" ({})", why.join("; ")));
    }
    let groups = collapse(threads);
    if groups.len() < threads.len() {
        out.push_str(&format!(
            ", in {} entries (identical stacks collapsed)",
            groups.len()
        ));
    }
    out.push('.');
    for (i, cycle) in dump.deadlocks.iter().enumerate() {
        out.push_str(&format!(
            "\nDEADLOCK {}: {}",
            i + 1,
            cycle_line(cycle, dump)
        ));
    }
    let running = threads.iter().filter(|t| t.stack == Stack::Running).count();
    for g in &groups {
        out.push('\n');
        entry(&mut out, g, threads, &dump.names);
    }
    out.push_str(&format!(
        "\n\nCost: {} JDWP packets, {} ms",
        dump.packets,
        dump.elapsed.as_millis()
    ));
    match &dump.hold {
        Some(h) => hold_line(&mut out, h),
        None if running > 0 && !suspend => out.push_str(&format!(
            "; nothing suspended. {running} running thread(s) are unreadable: JDWP reads stacks and locks \
             only of suspended threads; pass suspend:true for a bounded freeze, resumed before the reply."
        )),
        None => out.push_str("; nothing suspended (only already-suspended threads were read)."),
    }
    if !dump.left_out.is_empty() {
        let groups: Vec<String> = dump
            .left_out
            .iter()
            .take(5)
            .map(|(f, n)| format!("{f} ×{n}"))
            .collect();
        out.push_str(&format!(
            "\nNot read (limit): {}; raise limit or narrow with name_filter.",
            groups.join(", ")
        ));
    }
    if let Some(note) = virtual_note(dump.knows_virtual, threads.iter().any(|t| t.is_virtual)) {
        out.push('\n');
        out.push_str(note);
    }
    out
}

/// `"a" @0x1 waits for java.lang.Object@0x10 held by "b" @0x2 → …`.
fn cycle_line(cycle: &[u64], dump: &Dump) -> String {
    let name = |id: u64| dump.names.get(&id).cloned().unwrap_or_default();
    let mut parts = Vec::new();
    for (i, id) in cycle.iter().enumerate() {
        let next = cycle[(i + 1) % cycle.len()];
        let lock = dump
            .threads
            .iter()
            .find(|t| t.id == *id)
            .and_then(|t| t.waiting.as_ref())
            .map(|w| lock_name(&w.monitor))
            .unwrap_or_default();
        parts.push(format!(
            "{:?} @{id:#x} waits for {lock} held by {:?} @{next:#x}",
            name(*id),
            name(next)
        ));
    }
    format!("{} threads in a cycle: {}", cycle.len(), parts.join("; "))
}

/// One entry: a thread, or a group of threads with an identical stack.
fn entry(out: &mut String, group: &[usize], threads: &[DumpThread], names: &HashMap<u64, String>) {
    let t = &threads[group[0]];
    let marks = format!(
        "{}{}",
        if t.is_virtual { " (virtual)" } else { "" },
        if t.suspend_count > 0 {
            format!(" suspended x{}", t.suspend_count)
        } else {
            String::new()
        }
    );
    if group.len() == 1 {
        out.push_str(&format!("\n{:?} @{:#x} {}{marks}", t.name, t.id, t.status));
    } else {
        let ids: Vec<String> = group
            .iter()
            .take(IDS_SHOWN)
            .map(|&i| format!("@{:#x}", threads[i].id))
            .collect();
        let more = group.len().saturating_sub(IDS_SHOWN);
        out.push_str(&format!(
            "\n×{} {:?} {}{marks} — {} threads with an identical stack: {}{}",
            group.len(),
            crate::model::threads::family(&t.name),
            t.status,
            group.len(),
            ids.join(" "),
            if more > 0 {
                format!(" … +{more}")
            } else {
                String::new()
            }
        ));
    }
    if let Some(w) = &t.waiting {
        waiting_line(out, w, names);
    }
    match &t.stack {
        Stack::Read { frames, depth } => {
            for (i, f) in frames.iter().enumerate() {
                out.push_str(&format!("\n  at {f}"));
                for h in t.held.iter().filter(|h| h.frame == Some(i)) {
                    out.push_str(&format!(
                        "\n    - locked {}@{:#x}",
                        h.monitor.class, h.monitor.object
                    ));
                }
            }
            if *depth > frames.len() {
                out.push_str(&format!(
                    "\n  … {} more frames (max_frames)",
                    depth - frames.len()
                ));
            }
        }
        Stack::Skipped => {}
        Stack::Running => {
            out.push_str("\n  (running: stack and locks unreadable without a suspension)")
        }
        Stack::CutByBound => out.push_str("\n  (NOT READ: the max_suspend_ms bound ran out first)"),
        Stack::Failed(why) => out.push_str(&format!("\n  (unreadable: {why})")),
    }
    let shown_at_frames = |h: &&crate::model::dump::Held| match (&t.stack, h.frame) {
        (Stack::Read { frames, .. }, Some(f)) => f < frames.len(),
        _ => false,
    };
    let other: Vec<String> = t
        .held
        .iter()
        .filter(|h| !shown_at_frames(h))
        .map(|h| format!("{}@{:#x}", h.monitor.class, h.monitor.object))
        .collect();
    if !other.is_empty() {
        out.push_str(&format!("\n  holds {}", other.join(", ")));
    }
    for s in &t.synchronizers {
        out.push_str(&format!(
            "\n  locked ownable synchronizer <{:#x}> (a {})",
            s.object, s.class
        ));
    }
}

/// `java.lang.Object@0x1f`.
fn lock_name(m: &Monitor) -> String {
    format!("{}@{:#x}", m.class, m.object)
}

/// What a thread waits for and who holds it; a parked thread as `jstack
/// -l` words it (`parking to wait for <0x…> (a …ReentrantLock$NonfairSync)`).
fn waiting_line(out: &mut String, w: &Waiting, names: &HashMap<u64, String>) {
    let what = match w.kind {
        WaitKind::Enter => format!("waiting to lock {}", lock_name(&w.monitor)),
        WaitKind::Wait => format!("in Object.wait() on {}", lock_name(&w.monitor)),
        WaitKind::Park => format!(
            "parking to wait for <{:#x}> (a {})",
            w.monitor.object, w.monitor.class
        ),
    };
    let owner = match w.owner {
        Some(o) => format!(
            " ← held by 0x{o:x} {:?}",
            names.get(&o).cloned().unwrap_or_default()
        ),
        None => String::new(),
    };
    out.push_str(&format!("\n  {what}{owner}"));
}

/// What the suspension did, loudly when it was cut or not undone.
fn hold_line(out: &mut String, h: &VmHold) {
    out.push_str(&format!(
        "; the VM was held {} ms (suspend:true, bound {} ms)",
        h.held.as_millis(),
        h.bound.as_millis()
    ));
    if h.cut > 0 {
        out.push_str(&format!(
            ".\nCUT SHORT: the {} ms bound ran out with {} thread(s) unread; raise max_suspend_ms, lower limit, or use monitors_only",
            h.bound.as_millis(),
            h.cut
        ));
    }
    if h.verified {
        out.push_str("; resumed, and every suspend count is back where it was.");
    } else if h.new_event {
        out.push_str(&format!(
            "; resumed, but {} thread(s) are suspended again by a stop point hit meanwhile (debug_get_last_event).",
            h.still_suspended.len()
        ));
    } else {
        let ids: Vec<String> = h
            .still_suspended
            .iter()
            .map(|(t, b, a)| format!("@{:#x} {b}→{a}", t.0))
            .collect();
        out.push_str(&format!(
            "; RESUME NOT VERIFIED: suspend counts above what they were: {}. debug_continue resumes everything.",
            ids.join(", ")
        ));
    }
}

/// What JDWP says about virtual threads, when it matters.
pub fn virtual_note(knows_virtual: bool, any_virtual: bool) -> Option<&'static str> {
    match (knows_virtual, any_virtual) {
        (false, _) => None,
        (true, true) => Some(
            "Virtual threads are marked (virtual). JDWP lists them only because the agent runs with \
             includevirtualthreads=y; unmounted ones have no carrier.",
        ),
        (true, false) => Some(
            "No virtual thread listed: JDWP lists virtual threads only when the agent runs with \
             includevirtualthreads=y.",
        ),
    }
}
