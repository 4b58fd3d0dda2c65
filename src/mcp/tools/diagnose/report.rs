//! The diagnosis report's words: the server block, one block per session
//! (connection, capabilities, suspension, stop points, recent events, the
//! last error), and the causes of a silent stop point, each with what to
//! do about it.

use std::fmt::Write;
use std::time::Duration;

use futures::future::join_all;

use super::super::Ctx;
use crate::actors::{Cause, SessionHandle, StopPointDiagnosis};
use crate::mcp::tools::session::describe_state;
use crate::model::SessionState;

/// Stop points and events listed per session.
const LISTED: usize = 8;
/// A session that does not answer within this is reported as such.
const SESSION_BUDGET: Duration = Duration::from_secs(2);

/// Block 1: this server.
pub fn server_block(ctx: &Ctx, started: std::time::Instant) -> String {
    let c = ctx.engine.config();
    let log = std::env::var("JVMSCOPE_LOG_FILE")
        .map(|p| format!("{p} (and stderr)"))
        .unwrap_or_else(|_| "stderr only (JVMSCOPE_LOG_FILE unset)".into());
    let watchdog = c
        .suspend_limit
        .map_or("off".to_string(), |d| format!("{} s", d.as_secs()));
    format!(
        "== this server\njvmscope {} · pid {} · up {} s · {} tools\nconfig: read_only={} \
         watchdog={watchdog} request_timeout={} ms window={} liveness={} ms\nlog: {log}",
        env!("CARGO_PKG_VERSION"),
        std::process::id(),
        started.elapsed().as_secs(),
        super::super::catalogue().len(),
        c.force_read_only,
        c.request_timeout.as_millis(),
        c.window,
        c.watchdog_interval.as_millis(),
    )
}

/// Block 2: every session.
pub async fn sessions_block(ctx: &Ctx) -> String {
    let sessions = ctx.engine.sessions();
    let mut out = String::from("== sessions");
    if sessions.is_empty() {
        out.push_str("\nnone: debug_list_jvms shows what can be attached");
        return out;
    }
    let current = ctx.engine.current();
    let blocks = join_all(sessions.iter().map(session_block)).await;
    for (s, b) in sessions.iter().zip(blocks) {
        let mark = if current.as_ref() == Some(s.id()) {
            " (current)"
        } else {
            ""
        };
        let _ = write!(out, "\n{} {}{mark}: {b}", s.id(), s.address());
    }
    out
}

async fn session_block(s: &SessionHandle) -> String {
    // Asked together, so a silent JVM costs one timeout, not one per question.
    let (state, caps) = tokio::join!(
        tokio::time::timeout(SESSION_BUDGET, s.state()),
        tokio::time::timeout(SESSION_BUDGET, s.capabilities())
    );
    let state = state.unwrap_or(SessionState::Unanswered {
        reason: "no answer within 2 s".into(),
    });
    let vm = s.vm().unwrap_or_default();
    let mut out = format!(
        "{} · {} {}",
        describe_state(&state),
        vm.vm_name,
        vm.vm_version
    );
    if s.read_only() {
        out.push_str(" · read-only");
    }
    if let SessionState::Dead { reason } = &state {
        if let Some(exit) = s.launched_exit() {
            let _ = write!(out, "\n  launched JVM exited: {exit}");
        }
        for line in s.launched_output(3) {
            let _ = write!(out, "\n  | {line}");
        }
        let _ = write!(out, "\n  last error: {reason}");
        return out;
    }
    match caps {
        Ok(Ok(caps)) => {
            let yes: Vec<&str> = caps.iter().filter(|c| c.1).map(|c| c.0).collect();
            let no: Vec<&str> = caps.iter().filter(|c| !c.1).map(|c| c.0).collect();
            let _ = write!(out, "\n  capabilities: {}", yes.join(" "));
            if !no.is_empty() {
                let _ = write!(out, "; not offered: {}", no.join(" "));
            }
            if caps.iter().any(|c| c.0 == "canWatchFieldAccess" && c.1) {
                out.push_str("\n  (a watch on a hot field can dominate the JVM's CPU)");
            }
        }
        Ok(Err(e)) => {
            let _ = write!(out, "\n  capabilities: unreadable ({e})");
        }
        Err(_) => out.push_str("\n  capabilities: no answer within 2 s"),
    }
    let held = s.held_threads().await;
    if !held.is_empty() {
        let ids: Vec<String> = held.iter().map(|h| format!("@{:#x}", h.thread.0)).collect();
        let _ = write!(out, "\n  held by you: {}", ids.join(", "));
    }
    let listing = s.stop_points().list().await;
    let _ = write!(out, "\n  stop points: {}", listing.points.len());
    for p in listing.points.iter().take(LISTED) {
        let _ = write!(
            out,
            "\n    {} {} {} hits={}",
            p.id,
            p.state.label(),
            p.target,
            p.hits
        );
    }
    let events = s.recent_events();
    let _ = write!(
        out,
        "\n  recent events: {}",
        if events.is_empty() { "none" } else { "" }
    );
    for e in events.iter().rev().take(LISTED).rev() {
        let _ = write!(out, "\n    {}", crate::mcp::render::recent_event(e));
    }
    let last = listing
        .points
        .iter()
        .filter_map(|p| p.last_error.as_ref().map(|e| format!("{}: {e}", p.id)))
        .next_back();
    let _ = write!(out, "\n  last error: {}", last.as_deref().unwrap_or("none"));
    out
}

/// "Why did this stop point not fire?", as text.
pub fn stop_point_text(d: &StopPointDiagnosis) -> String {
    let p = &d.point;
    let mut out = format!(
        "{} {} — {}, {} hit{} reported, armed at {} location{} in {} class cop{}",
        p.id,
        p.target,
        p.state.label(),
        p.hits,
        if p.hits == 1 { "" } else { "s" },
        p.locations,
        if p.locations == 1 { "" } else { "s" },
        p.copies,
        if p.copies == 1 { "y" } else { "ies" },
    );
    if d.causes.is_empty() {
        out.push_str(if p.hits > 0 {
            "\nIt fires: nothing stands in its way. debug_get_traces and debug_get_last_event show its hits."
        } else {
            "\nNothing blocks it: it is armed and no thread has run that code since. Trigger the code path."
        });
    }
    for c in &d.causes {
        out.push_str("\n- ");
        out.push_str(&cause_text(c));
    }
    if !p.notes.is_empty() {
        let notes: Vec<String> = p
            .notes
            .iter()
            .map(super::super::stop_points::arm_note)
            .collect();
        let _ = write!(out, "\nnotes: {}", notes.join("; "));
    }
    out
}

/// A stable word for each cause, for scripts.
pub fn cause_code(c: &Cause) -> &'static str {
    match c {
        Cause::Unanswered { .. } => "NOT_ANSWERING",
        Cause::ClassNotLoaded { .. } => "CLASS_NOT_LOADED",
        Cause::NoCodeAtLine { .. } => "NO_CODE_AT_LINE",
        Cause::NotArmable { .. } => "NOT_ARMABLE",
        Cause::ConditionNeverTrue { .. } => "CONDITION_NEVER_TRUE",
        Cause::ConditionErrors { .. } => "CONDITION_ERRORS",
        Cause::ThreadFilter { .. } => "THREAD_FILTER",
        Cause::InstanceFilter { .. } => "INSTANCE_FILTER",
        Cause::HitCountPending { .. } => "HIT_COUNT_PENDING",
        Cause::Disabled => "DISABLED",
        Cause::PausedByBudget(_) => "PAUSED_BY_OVERHEAD_BUDGET",
        Cause::DisabledByWatchdog => "DISABLED_BY_WATCHDOG",
        Cause::Spent(_) => "SPENT",
        Cause::VmHeld { .. } => "VM_HELD",
        Cause::StaleBytecode(_) => "STALE_BYTECODE",
    }
}

fn cause_text(c: &Cause) -> String {
    let code = cause_code(c);
    let words = match c {
        Cause::Unanswered { error } => {
            format!("the JVM did not answer, so whether its class is loaded is unknown: {error}")
        }
        Cause::ClassNotLoaded { class, watching, similar } => {
            let mut s = format!(
                "{class} is not loaded by any class loader yet; {}",
                if *watching {
                    "a class-load watch arms it in every loader that loads it"
                } else {
                    "no class-load watch is armed (re-arm it)"
                }
            );
            if !similar.is_empty() {
                let _ = write!(s, ". Loaded names alike: {}", similar.join(", "));
            }
            s + ". Trigger the code that loads it, or check the name with debug_list_classes"
        }
        Cause::NoCodeAtLine { class, line, nearest, loaders } => {
            let near: Vec<String> = nearest.iter().map(i32::to_string).collect();
            format!(
                "line {line} of {class} has no code (loaded by {loaders} loader{}); nearest lines with code: {}. Clear it and set the stop on one of those",
                if *loaders == 1 { "" } else { "s" },
                if near.is_empty() { "none".into() } else { near.join(", ") }
            )
        }
        Cause::NotArmable { class, reason } => format!(
            "{class} is loaded but refused it: {}",
            crate::mcp::error::ToolError::from(reason.clone()).message
        ),
        Cause::ConditionNeverTrue { condition, evaluated, passed, operands } => {
            let mut s = format!("condition `{condition}` evaluated {evaluated} times, true {passed}");
            if !operands.is_empty() {
                let vals: Vec<String> = operands
                    .iter()
                    .map(|(o, v)| format!("{o} = {}", crate::mcp::render::value::detail(v)))
                    .collect();
                let _ = write!(s, "; last values: {}", vals.join(", "));
            }
            s + ". Loosen the condition (debug_update_stop_point)"
        }
        Cause::ConditionErrors { errors, last, stopped } => format!(
            "the condition failed {errors} times{}{}",
            last.as_ref().map(|l| format!(" (last: {l})")).unwrap_or_default(),
            if *stopped { "; it disabled itself after too many in a row. Fix the condition, then debug_update_stop_point kind toggle" } else { "" }
        ),
        Cause::ThreadFilter { thread, name, alive } => format!(
            "only thread @{thread:#x}{} is watched; hits on every other thread are dropped by the JVM and not counted{}",
            name.as_ref().map(|n| format!(" {n:?}")).unwrap_or_default(),
            if *alive { "" } else { ". That thread has ended: nothing can hit it" }
        ),
        Cause::InstanceFilter { object, collected } => format!(
            "only hits on object @{object:#x} count{}",
            if *collected { "; it was garbage collected, so nothing can hit it" } else { "" }
        ),
        Cause::HitCountPending { target, counted } => match counted {
            Some(n) => format!("hit_count {target}: {n} of {target} hits so far; it fires on hit {target}"),
            None => format!("hit_count {target}: the JVM counts and reports only hit {target}"),
        },
        Cause::Disabled => "it is disabled: debug_update_stop_point kind toggle re-arms it".into(),
        Cause::PausedByBudget(o) => crate::mcp::tools::stop_points::render::paused_text(o),
        Cause::DisabledByWatchdog => "the watchdog disabled it because its hits kept the JVM suspended: fix the cause, then debug_update_stop_point kind toggle".into(),
        Cause::Spent(reason) => format!("it is spent ({reason}): debug_update_stop_point kind toggle re-arms it"),
        Cause::VmHeld { held, total } => format!(
            "{held} of {total} threads are suspended: no thread can run to it. debug_continue lets them go"
        ),
        Cause::StaleBytecode(s) => super::super::code::line_stop_note(s)
            .unwrap_or_else(|| "the loaded bytecode differs from the build".into()),
    };
    format!("[{code}] {words}")
}
