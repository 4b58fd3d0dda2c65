//! Event tools: the last reportable event (and the buffered ones), waiting
//! for the next one with progress notifications, and trace snapshots.

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Call, Ctx, Effect, Reply, Route, data};
use crate::actors::SessionHandle;
use crate::actors::{Found, HitEvent, SuspendPolicy, TraceQuery, TraceRecord};
use crate::mcp::error::ToolError;
use crate::mcp::render::value;
use crate::model::shown::HitNote;

mod group;
use crate::model::SessionState;

const WAIT_DEFAULT_MS: u64 = 30_000;
const WAIT_MAX_MS: u64 = 600_000;
const PROGRESS_EVERY: Duration = Duration::from_secs(1);
const TRACES_DEFAULT_LIMIT: usize = 50;

/// Arguments of debug_get_last_event.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LastEventParams {
    /// Session id; default: the current session.
    pub session_id: Option<String>,
    /// List this many of the oldest buffered events.
    pub limit: Option<usize>,
    /// Discard what was shown.
    pub drain: Option<bool>,
}

/// Arguments of debug_wait_for_event.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitParams {
    /// Session id; default: the current session.
    pub session_id: Option<String>,
    /// Longest wait, ms; default 30000, max 600000.
    pub timeout_ms: Option<u64>,
    /// Only this stop point or family.
    pub bp_id: Option<String>,
    /// Only events with a seq above this.
    pub since: Option<u64>,
}

/// Arguments of debug_get_traces.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TracesParams {
    /// Session id; default: the current session.
    pub session_id: Option<String>,
    /// Only this stop point's or family's.
    pub bp_id: Option<String>,
    /// Location contains this text.
    pub class_filter: Option<String>,
    /// Page forward from this seq.
    pub since: Option<u64>,
    /// Most shown, default 50; newest unless since.
    pub limit: Option<usize>,
    pub clear: Option<bool>,
    /// Keys to count every match by: locals, trace_expr sources or expr[i], thread, location, caller.
    #[serde(default, deserialize_with = "crate::mcp::tools::args::strings")]
    pub group_by: Option<Vec<String>>,
    /// Groups shown; default 20.
    pub max_groups: Option<usize>,
    /// Drop details repeated from the previous snapshot.
    pub compact: Option<bool>,
}

pub fn routes() -> Vec<Route> {
    vec![
        Route::new(
            "debug_get_last_event",
            "Get the last event",
            "The newest reportable event (a suspending hit or a failed condition): seq, stop, \
             thread, location, what it suspended, details; [pending] counts the rest. limit N \
             lists the N oldest; drain:true discards them.",
            Effect::Read,
            last_event,
        )
            .with_guide(
                "The newest reportable event (a hit that suspended something, or a condition that failed): an \
                  [event] line (seq, stop, kind, thread, class.method:line, what it suspended) and its details \
                  (exception, message, catch site; old → new; returned value; monitor, duration); [pending] counts \
                  the buffered ones; [suspended] is read live. limit N lists the N oldest instead; drain:true \
                  discards what was shown (all, without limit). Traced snapshots are in debug_get_traces. Reads \
                  only.",
            ),
        Route::new(
            "debug_wait_for_event",
            "Wait for the next event",
            "Wait for an event or traced snapshot not shown yet, up to \
             timeout_ms (default 30000); a timeout is an answer. bp_id waits for that stop point \
             or family only. A suspending hit comes with its frame's locals. Suspends nothing.",
            Effect::Read,
            wait,
        )
            .with_guide(
                "Block until an event not shown yet (one already waiting returns at once) or a traced \
                  snapshot arrives, or until timeout_ms (default 30000, max 600000); a timeout is an answer, \
                  not an error. A hit that holds its thread comes with the locals of the top frame, as \
                  debug_get_stack shows them; a snapshot with its own. Each call returns what follows the last one it returned (a cursor per bp_id, \
                  and one without), so no snapshot comes twice; since N starts after seq N instead. Sends \
                  progress notifications about every second while waiting when the call carries a \
                  progressToken; runs as an MCP task for a client that declares the tasks extension (tasks/cancel \
                  or notifications/cancelled ends it). bp_id waits for that stop point (or bpset_ family) only. \
                  Suspends nothing itself.",
            )
            .runs_long_when(|_| true),
        Route::new(
            "debug_get_traces",
            "Get trace snapshots",
            "Trace snapshots, oldest first: seq, stop, thread, location, callers, locals, details \
             (exception, field change, return value, duration). Filter by bp_id, class_filter; \
             since pages forward, else limit keeps the newest. group_by counts every match per \
             key (p50/p99/max of timed calls). clear:true removes what matched.",
            Effect::Read,
            traces,
        )
            .with_guide(
                "Snapshots of traced stop points, oldest first: seq, stop, thread, class.method:line, callers, \
                  locals (plus the val$ captures of an anonymous class), details (exception, rethrows, field \
                  change, returned value, monitor duration). Objects carry @0x… \
                  handles (weak: a collected one reads Vanished). Filter with bp_id, class_filter (text in the \
                  location), since (pages forward from that seq: Next: since= skips nothing); limit (default \
                  50; without since, the newest). The ring \
                  keeps 500 and counts evictions; clear:true removes what matched. group_by [keys] counts every \
                  match per value (first/last seq, one example, p50/p99/max of timed calls; max_groups, default 20); compact:true drops \
                  details repeated from the previous snapshot (never a trace_expr value or the returned one). Reads only.",
            )
        .with_output::<super::data::Traces>(),
    ]
}

fn unknown_stop(bp: &str) -> ToolError {
    ToolError::new(
        "UNKNOWN_STOP_POINT",
        format!("there is no stop point {bp:?}"),
    )
    .next("debug_list_stop_points shows the ids")
}

fn policy_word(p: SuspendPolicy) -> &'static str {
    match p {
        SuspendPolicy::All => "all",
        SuspendPolicy::EventThread => "thread",
        SuspendPolicy::None => "none",
    }
}

fn ago(at: Instant, now: Instant) -> String {
    format!(
        "{:.1}s ago",
        now.saturating_duration_since(at).as_secs_f64()
    )
}

/// The machine-readable line and the details of one event.
pub fn event_text(e: &HitEvent, now: Instant) -> String {
    let mut s = format!(
        "[event] seq={} stop={} kind={} thread=@{:#x} {:?} at={} suspended={} ({})",
        e.seq,
        e.stop.as_deref().unwrap_or("-"),
        e.kind,
        e.thread.0,
        e.thread_name,
        e.location,
        policy_word(e.suspended),
        ago(e.at, now)
    );
    for (k, v) in &e.details {
        s.push_str(&format!("\n  {k}: {}", value::detail(v)));
    }
    if let Some(n) = e.note.as_ref().map(value::hit_note) {
        s.push_str(&format!("\n  note: {n}"));
    }
    s
}

pub fn event_json(e: &HitEvent) -> Value {
    json!({
        "seq": e.seq,
        "stop": e.stop,
        "kind": e.kind,
        "thread": format!("@{:#x}", e.thread.0),
        "thread_name": e.thread_name,
        "location": e.location,
        "suspended": policy_word(e.suspended),
        "details": e.details.iter().map(|(k, v)| json!({"key": k, "value": value::detail(v)})).collect::<Vec<_>>(),
        "note": e.note.as_ref().map(value::hit_note),
    })
}

pub fn trace_text(t: &TraceRecord, now: Instant) -> String {
    trace_text_after(t, now, None)
}

/// A snapshot; with `previous`, only the details that changed since it.
fn trace_text_after(t: &TraceRecord, now: Instant, previous: Option<&TraceRecord>) -> String {
    let mut s = format!(
        "#{} {} thread=@{:#x} {:?} {}",
        t.seq, t.stop, t.thread.0, t.thread_name, t.location
    );
    for c in &t.callers {
        s.push_str(&format!(" ← {c}"));
    }
    s.push_str(&format!(" ({})", ago(t.at, now)));
    if t.overridden {
        s.push_str(" [VM was suspended: policy overridden]");
    }
    if !t.locals.is_empty() {
        let locals: Vec<String> = t
            .locals
            .iter()
            .map(|(k, v)| format!("{k}={}", value::line(v)))
            .collect();
        s.push_str(&format!("\n  locals: {}", locals.join(", ")));
    }
    if let Some(n) = t.locals_note.as_ref().map(value::locals_gap) {
        s.push_str(&format!("\n  locals: {n}"));
    }
    for (k, v) in group::changed_details(t, previous) {
        s.push_str(&format!("\n  {k}: {}", value::detail(v)));
    }
    s
}

fn trace_data(t: &TraceRecord) -> data::Trace {
    data::Trace {
        seq: t.seq,
        stop: t.stop.to_string(),
        thread: format!("@{:#x}", t.thread.0),
        thread_name: t.thread_name.to_string(),
        location: t.location.to_string(),
        callers: t.callers.iter().map(|c| c.to_string()).collect(),
        locals: t
            .locals
            .iter()
            .map(|(k, v)| data::Local {
                name: k.to_string(),
                value: value::line(v),
            })
            .collect(),
        locals_note: t.locals_note.as_ref().map(value::locals_gap),
        details: t
            .details
            .iter()
            .map(|(k, v)| data::Detail {
                key: k.clone(),
                value: value::detail(v),
            })
            .collect(),
        overridden: t.overridden,
    }
}

/// The live `[suspended]` line.
async fn suspended_line(handle: &SessionHandle) -> (String, Value) {
    match handle.state().await {
        SessionState::Suspended { held, total } => (
            format!(
                "[suspended] yes: {held} of {total} threads held (debug_continue resumes them)"
            ),
            json!({"suspended": true, "threads_held": held, "threads_total": total}),
        ),
        SessionState::Running => match handle.invoking().len() {
            0 => (
                "[suspended] no: every thread runs".into(),
                json!({"suspended": false, "threads_held": 0}),
            ),
            n => (
                format!(
                    "[suspended] no, but {} inside a call that could not be cancelled ([INVOKING])",
                    crate::mcp::render::plural(n, "thread")
                ),
                json!({"suspended": false, "threads_held": 0}),
            ),
        },
        SessionState::Dead { reason } => (
            format!("[suspended] unknown: the session is gone ({reason})"),
            json!({"suspended": null}),
        ),
        SessionState::Unanswered { reason } => (
            format!("[suspended] unknown: the JVM does not answer ({reason})"),
            json!({"suspended": null}),
        ),
    }
}

async fn last_event(ctx: Ctx, call: Call<LastEventParams>) -> Reply {
    let p = call.params?;
    let handle = ctx.live(p.session_id.as_deref())?;
    let log = handle.events();
    let now = Instant::now();
    let (last, pending, dropped) = log.last();
    let mut text;
    let mut data = json!({});
    let shown: Vec<HitEvent> = match p.limit {
        Some(n) => log.oldest(n.max(1)),
        None => last.into_iter().collect(),
    };
    if shown.is_empty() {
        text = "No event yet. Stop points report here when a hit suspends something; traced ones go to debug_get_traces.".to_string();
    } else {
        text = shown
            .iter()
            .map(|e| event_text(e, now))
            .collect::<Vec<_>>()
            .join("\n");
        if let Some(max) = shown.iter().map(|e| e.seq).max() {
            log.mark_reported(max);
        }
    }
    data["events"] = json!(shown.iter().map(event_json).collect::<Vec<_>>());
    let drained = if p.drain == Some(true) {
        log.drain(p.limit.map(|_| shown.len()))
    } else {
        0
    };
    let left = pending - drained;
    text.push_str(&format!(
        "\n[pending] {left} buffered{}",
        if drained > 0 {
            format!(" ({drained} drained)")
        } else if p.limit.is_none() && left > 1 {
            " (the one shown included; limit N reads the oldest first, drain:true discards them)"
                .to_string()
        } else if p.limit.is_none() && left == 1 && !shown.is_empty() {
            " (the one shown)".to_string()
        } else {
            String::new()
        }
    ));
    if dropped > 0 {
        text.push_str(&format!(
            " ({dropped} older ones dropped: the buffer is full)"
        ));
    }
    data["pending"] = json!(left);
    let (line, susp) = suspended_line(&handle).await;
    text.push_str(&format!("\n{line}"));
    data["state"] = susp;
    Ok(super::text(text))
}

async fn wait(ctx: Ctx, call: Call<WaitParams>) -> Reply {
    let p = call.params?;
    let handle = ctx.live(p.session_id.as_deref())?;
    let log = handle.events().clone();
    let limit = Duration::from_millis(p.timeout_ms.unwrap_or(WAIT_DEFAULT_MS).min(WAIT_MAX_MS));
    // A misspelt or cleared id would wait out the whole timeout for nothing.
    let scope = p.bp_id.as_deref().map(str::trim).unwrap_or_default();
    let ids = match p.bp_id.as_deref().map(str::trim) {
        Some(b) => Some(handle.stop_ids(b).await.ok_or_else(|| unknown_stop(b))?),
        None => None,
    };
    let ids2 = ids.clone();
    let ids3 = ids.clone();
    let stop_in_scope = move |stop: &str| {
        ids3.as_ref()
            .is_none_or(|ids| ids.iter().any(|i| i == stop))
    };
    let in_scope = move |e: &HitEvent| {
        ids.as_ref().is_none_or(|ids| {
            e.stop
                .as_deref()
                .is_some_and(|s| ids.iter().any(|i| i == s))
        })
    };
    // Waiting for what comes next, a hit that a resume released before it
    // was read is passed over (and named): nothing can be read or invoked
    // on its thread for it. Paging with `since` shows every one.
    let skip_released = p.since.is_none();
    let pred =
        |e: &HitEvent| in_scope(e) && !(skip_released && e.note == Some(HitNote::ReleasedUnread));
    let trace_pred = move |t: &TraceRecord| {
        ids2.as_ref()
            .is_none_or(|ids| ids.iter().any(|i| **i == *t.stop))
    };
    let from = log.wait_from(scope, p.since);
    let progress = super::progress();
    let total_ms = limit.as_millis() as f64;
    let mut tick = move |elapsed: Duration| {
        if let Some(pr) = &progress {
            pr.report(
                elapsed.as_millis() as f64,
                Some(total_ms),
                format!(
                    "waiting for an event: {:.0}s of {:.0}s",
                    elapsed.as_secs_f64(),
                    total_ms / 1e3
                ),
            );
        }
    };
    let found = tokio::select! {
        f = log.wait_after(from, &pred, Some(&trace_pred), limit, PROGRESS_EVERY, &mut tick) => f,
        _ = handle.died() => None,
        _ = super::cancelled() => return Err(ToolError::new("CANCELLED", "the wait was cancelled; it changed nothing in the JVM")),
    };
    let now = Instant::now();
    match found {
        Some(Found::Event(e)) => {
            let passed = log.released_unread(from.events, e.seq, &in_scope);
            log.mark_reported(e.seq);
            log.mark_waited(scope, e.seq);
            let (line, _) = suspended_line(&handle).await;
            let mut text = event_text(&e, now);
            text.push_str(&held_locals(&handle, &e).await);
            text.push_str(&passed_over(&passed));
            if handle.thread_is_virtual(e.thread).await {
                text.push_str("\n  thread: a virtual thread (stops and reads work on it as on a platform thread)");
            }
            let text = format!("{text}\n{line}");
            Ok(super::text(text))
        }
        Some(Found::Trace(t)) => {
            let skipped = match p.since {
                None => log.skipped(scope, &stop_in_scope, t.seq),
                Some(_) => 0,
            };
            log.mark_waited(scope, t.seq);
            let mut text = trace_text(&t, now);
            text.push_str(&skipped_note(skipped, log.ring().capacity));
            Ok(super::text(text))
        }
        None => {
            handle.check_alive()?;
            let (line, _) = suspended_line(&handle).await;
            let skipped = match p.since {
                None => log.skipped(scope, &stop_in_scope, u64::MAX),
                Some(_) => 0,
            };
            let budget = match &p.bp_id {
                Some(b) => budget_note(&handle, b.trim()).await,
                None => String::new(),
            };
            Ok(super::text(format!(
                "No event within {} ms{}.{}{budget}\n{line}",
                limit.as_millis(),
                p.bp_id
                    .as_deref()
                    .map(|b| format!(" for {b}"))
                    .unwrap_or_default(),
                skipped_note(skipped, log.ring().capacity)
            )))
        }
    }
}

/// The snapshots a wait passed over without returning them.
fn skipped_note(skipped: u64, capacity: usize) -> String {
    match skipped {
        0 => String::new(),
        n => format!(
            "\n  skipped {}: the trace ring (the newest {capacity} of all stop points) \
             dropped them before a wait read them",
            crate::mcp::render::plural(n as usize, "earlier snapshot")
        ),
    }
}

/// Why a wait for `bp` finds no snapshot: its trace budget is used, and
/// the hits since were resumed uncaptured.
async fn budget_note(handle: &SessionHandle, bp: &str) -> String {
    let Some(p) = handle.stop_points().view(bp).await else {
        return String::new();
    };
    match &p.spec.mode {
        crate::model::stop_point::Mode::Trace(t)
            if t.max_hits > 0 && p.budget_used >= u64::from(t.max_hits) =>
        {
            format!(
                "\n  {bp}'s trace budget is used ({}/{} snapshots): {} hits since were not captured",
                p.budget_used, t.max_hits, p.over_budget
            )
        }
        _ => String::new(),
    }
}

/// The top frame's locals of the thread a suspending hit holds, so the
/// hit answers without a debug_get_stack; nothing when it holds none.
async fn held_locals(handle: &SessionHandle, e: &HitEvent) -> String {
    if e.suspended == SuspendPolicy::None {
        return String::new();
    }
    let query = crate::actors::StackQuery {
        thread: Some(e.thread),
        max_frames: 1,
        package_filter: None,
        expand: false,
        budget: super::args::view_budget(None, None),
    };
    match handle.stack(&query).await {
        Ok(view) => view.frames.first().map_or_else(String::new, |f| {
            let lines = super::inspect::locals_lines(&f.locals, "    ");
            if lines.is_empty() {
                lines
            } else {
                format!("\n  locals of #0 {}:{lines}", f.frame.label())
            }
        }),
        Err(_) => String::new(),
    }
}

/// The hits a wait passed over because a resume released them before
/// they were read.
fn passed_over(passed: &[HitEvent]) -> String {
    if passed.is_empty() {
        return String::new();
    }
    let named: Vec<String> = passed
        .iter()
        .take(3)
        .map(|e| format!("seq={} \"{}\"", e.seq, e.thread_name))
        .collect();
    format!(
        "\n  passed over {} earlier hit{} that a resume released before {} read ({}{}): since={} lists them",
        passed.len(),
        if passed.len() == 1 { "" } else { "s" },
        if passed.len() == 1 {
            "it was"
        } else {
            "they were"
        },
        named.join(", "),
        if passed.len() > 3 { ", …" } else { "" },
        passed[0].seq - 1
    )
}

/// The grouped view of `all` (every matching snapshot, oldest first).
fn grouped(all: &[TraceRecord], keys: &[String], max: usize) -> (String, data::Grouped) {
    let g = group::group(all, keys, max);
    let key = keys.join(", ");
    let mut text = format!(
        "\nGrouped by {key}: {} group{} over {}",
        g.distinct,
        if g.distinct == 1 { "" } else { "s" },
        crate::mcp::render::plural(all.len() - g.without_keys, "snapshot")
    );
    let mut groups = Vec::new();
    for gr in &g.groups {
        let example = all.iter().find(|t| t.seq == gr.first_seq);
        let shown: Vec<String> = keys
            .iter()
            .zip(&gr.values)
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        text.push_str(&format!(
            "\n  {}: {} (#{}..#{})",
            shown.join(" "),
            crate::mcp::render::plural(gr.count, "snapshot"),
            gr.first_seq,
            gr.last_seq
        ));
        if let Some(s) = &gr.spread {
            text.push_str(&format!(
                "; took p50 {}, p99 {}, max {}{}",
                value::nanos(s.p50_ns),
                value::nanos(s.p99_ns),
                value::nanos(s.max_ns),
                if s.timed < gr.count {
                    format!(" ({} timed)", s.timed)
                } else {
                    String::new()
                }
            ));
        }
        if let Some((n, c)) = &gr.callees {
            let line = crate::mcp::render::callees::line(c);
            text.push_str(&format!("\n    callees (mean of {n}): {line}"));
        }
        if let Some(e) = example {
            // Its locals, then the values its trace expressions (and the
            // return) recorded: what the agent asked each snapshot for.
            // A key's value is on the group's line already.
            let values: Vec<String> = e
                .locals
                .iter()
                .filter(|(k, _)| !keys.iter().any(|key| **k == **key))
                .map(|(k, v)| format!("{k}={}", value::line(v)))
                .chain(
                    e.details
                        .iter()
                        .filter(|(k, _)| group::asked_for(k))
                        .map(|(k, d)| format!("{k}={}", value::detail(d))),
                )
                .collect();
            text.push_str(&format!(
                "\n    e.g. #{} {:?} {}",
                e.seq,
                e.thread_name,
                values.join(", ")
            ));
        }
        groups.push(data::TraceGroup {
            values: keys
                .iter()
                .zip(&gr.values)
                .map(|(k, v)| (k.clone(), serde_json::Value::from(v.as_str())))
                .collect(),
            count: gr.count,
            first_seq: gr.first_seq,
            last_seq: gr.last_seq,
            took: gr.spread.map(|s| data::Took {
                timed: s.timed,
                p50_ms: s.p50_ns as f64 / 1e6,
                p99_ms: s.p99_ns as f64 / 1e6,
                max_ms: s.max_ns as f64 / 1e6,
            }),
            example: example.map(trace_data),
        });
    }
    if g.left_out > 0 {
        text.push_str(&format!(
            "\n  … {} more snapshots in {} smaller group{} (raise max_groups){}",
            g.left_out,
            g.distinct.saturating_sub(g.groups.len()),
            if g.distinct.saturating_sub(g.groups.len()) == 1 {
                ""
            } else {
                "s"
            },
            if g.saturated {
                "; counting stopped making groups at 1000 distinct values"
            } else {
                ""
            }
        ));
    }
    if g.without_keys > 0 {
        text.push_str(&format!(
            "\n  {} snapshots carry none of these keys (not a local, trace_expr, thread or location of theirs)",
            g.without_keys
        ));
    }
    for why in group::missing(all, keys) {
        text.push_str(&format!("\n  {why}"));
    }
    let data = data::Grouped {
        group_by: keys.to_vec(),
        groups,
        distinct: g.distinct,
        left_out: g.left_out,
        without_keys: g.without_keys,
    };
    (text, data)
}

async fn traces(ctx: Ctx, call: Call<TracesParams>) -> Reply {
    let p = call.params?;
    let handle = ctx.engine.session(p.session_id.as_deref())?;
    let keys = p.group_by.as_ref().filter(|k| !k.is_empty());
    let query = TraceQuery {
        stop: p.bp_id.clone(),
        since: p.since,
        class_filter: p.class_filter.clone(),
        limit: p.limit.unwrap_or(TRACES_DEFAULT_LIMIT).max(1),
        all: keys.is_some(),
        clear: p.clear == Some(true) && keys.is_none(),
    };
    let view = handle.traces(&query).await?;
    let (shown, total, ring, cleared) = (&view.shown, view.matching, &view.ring, view.cleared);
    let now = Instant::now();
    let grouping_all = keys.and(view.all.as_ref());
    let mut text = format!(
        "{}{} (ring {}/{}, {} evicted)",
        crate::mcp::render::plural(grouping_all.map_or(shown.len(), Vec::len), "snapshot"),
        if grouping_all.is_some() {
            " matching, all grouped".to_string()
        } else if total > shown.len() && p.since.is_some() {
            format!(" of {total} matching (the oldest; Next pages on)")
        } else if total > shown.len() {
            format!(" of {total} matching (the newest; since=0 pages from the oldest)")
        } else {
            String::new()
        },
        ring.held,
        ring.capacity,
        ring.evicted
    );
    if shown.is_empty() && ring.captured_total == 0 {
        text.push_str(
            "\nNothing captured yet: a traced stop point (trace:true) snapshots its hits here.",
        );
    }
    if let (Some(keys), Some(all)) = (keys, &view.all) {
        let max = p.max_groups.unwrap_or(group::DEFAULT_GROUPS).max(1);
        let (lines, grouping) = grouped(all, keys, max);
        text.push_str(&lines);
        let data = data::Traces {
            traces: Vec::new(),
            matching: all.len(),
            last_seq: None,
            ring: data::Ring::of(ring),
            cleared: 0,
            grouped: Some(grouping),
        };
        return Ok(super::data(text, &data));
    }
    let compact = p.compact == Some(true);
    for (i, t) in shown.iter().enumerate() {
        let previous = shown[..i].iter().rev().find(|q| q.stop == t.stop);
        text.push('\n');
        text.push_str(&trace_text_after(t, now, previous.filter(|_| compact)));
    }
    let last_seq = shown.iter().map(|t| t.seq).max();
    let rest = total.saturating_sub(shown.len());
    match last_seq {
        Some(s) if p.since.is_some() && rest > 0 => {
            text.push_str(&format!("\nNext: since={s} shows the {rest} after these"));
        }
        Some(s) => text.push_str(&format!("\nNext: since={s} returns only newer snapshots")),
        None => {}
    }
    if cleared > 0 {
        // clear removes every match, not only the page shown: say so.
        let unseen = cleared.saturating_sub(shown.len());
        text.push_str(&format!(
            "\nCleared {cleared} snapshots{}.",
            if unseen > 0 {
                let side = if p.since.is_some() { "newer" } else { "older" };
                format!(" ({unseen} of them not shown: {side} than the limit)")
            } else {
                String::new()
            }
        ));
    }
    let data = data::Traces {
        traces: shown.iter().map(trace_data).collect(),
        matching: total,
        last_seq,
        ring: data::Ring::of(ring),
        cleared,
        grouped: None,
    };
    Ok(super::data(text, &data))
}
