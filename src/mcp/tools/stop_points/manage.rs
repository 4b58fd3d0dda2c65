//! The tools that manage stop points once set: list, clear, toggle and
//! update one, and panic (clear everything and resume).

use super::args::{
    Common, IdParams, ListParams, ToggleParams, UpdateParams, expressions, id_arg,
    mode_and_filters, refuse, with_exprs,
};
use super::render::{self, describe_point};
use super::{count_with_condition, export};
use crate::actors::SessionHandle;
use crate::mcp::error::ToolError;
use crate::mcp::tools::data::StopPoints;
use crate::mcp::tools::kinds::Kind;
use crate::mcp::tools::session::SessionParams;
use crate::mcp::tools::{self, Call, Ctx, Effect, Reply, Route};
use crate::model::stop_point::{Mode, StopPointSpec, Target, TraceSpec};

/// The declarations of the tools that manage stop points.
pub(super) fn manage_routes() -> Vec<Route> {
    vec![
        Route::new(
            "debug_list_stop_points",
            "List stop points",
            "Every stop point and family: id, target, state (armed, deferred, disabled, spent and \
             why), hits, and for traced ones the snapshots against their budget and their cost \
             (hold per hit, share of a thread, PAUSED past max_overhead; a probe's ns per call). \
             export:true gives the calls that re-arm the set.",
            Effect::Read,
            list,
        )
            .with_guide(
                "Every stop point and family: id, target, state (armed, deferred, disabled, spent and why; \
                  watching for later classes or not), suspend policy, locations, classloaders, and Hits: N always \
                  (0 included). Traced ones add snapshots against the budget and hits over it; each held hit's \
                  cost (hold per hit for snapshots and condition checks, p99, hits/s, share of one thread's time \
                  against the overhead budget; PAUSED once past it); one sharing a location \
                  with a suspending stop point is marked SUSPEND POLICY OVERRIDDEN (it freezes the VM too). Method \
                  exits show exits discarded; families their members, max_classes and watch state. export:true \
                  returns the set as the debug_set_stop calls that re-arm it (thread and instance filters dropped, \
                  named). Reads only.",
            )
        .with_output::<StopPoints>(),
        {
            let tool = "debug_update_stop_point";
            Route::by_kind_or_first(
                tool,
                "Change a stop point",
                "Change a stop point or family by id. kind settings (default): trace settings, \
                 filters or condition, keeping id and counters ([], 0 or \"\" removes one). kind \
                 toggle: disable (definition kept) or re-arm; enabled omitted flips. kind clear: \
                 remove it.",
                Effect::Changes,
                vec![
                    Kind::new(
                        "settings",
                        Route::new(tool, "", "", Effect::Changes, update).with_guide(
                "Change a stop point's trace settings or filters, keeping its id and counters: trace, \
                  trace_frames, trace_locals, trace_max_hits, trace_max_length, trace_expr ([] removes), hit_count (0 removes), thread_id, \
                  instance_id and condition (\"\" removes). It is re-armed with the new definition and a fresh budget; a \
                  disabled one stays disabled.",
                        ),
                    ),
                    Kind::new(
                        "toggle",
                        Route::new(tool, "", "", Effect::Idempotent, toggle).with_guide(
                "Disable a stop point or family (its JDWP requests are cleared; the definition and counters are \
                  kept) or re-arm it; enabled true/false, omitted flips. Re-arming a spent stop point starts a \
                  fresh hit_count and trace budget.",
                        ),
                    ),
                    Kind::new(
                        "clear",
                        Route::new(tool, "", "", Effect::Changes, clear).with_guide(
                "Clear a stop point (bp_, exc_, watch_, mexit_, mon_) or a whole family (bpset_: every member and \
                  its class-load watch). A spent stop point is removed without sending anything: the JVM already \
                  deleted its request. Clearing a family member frees a slot, so a full family watches for new \
                  classes again.",
                        ),
                    ),
                ],
            )
        },
        Route::new(
            "debug_panic",
            "Panic",
            "Safety: clear every stop point, then resume every thread until no suspend count is \
             left, verified per thread. For a JVM that seems frozen by the debugger.",
            Effect::Destructive,
            panic,
        )
            .with_guide(
                "Safety: clear every stop point and family, then resume every thread until no suspend count is \
                  left (threads debug_thread holds included, named), verified by reading each thread's count back. Use it when the JVM seems frozen by the \
                  debugger.",
            ),
    ]
}

async fn list(ctx: Ctx, call: Call<ListParams>) -> Reply {
    let p = call.params?;
    let handle = ctx.live(p.session_id.as_deref())?;
    let Some(listing) = handle.stop_points().try_list().await else {
        return Err(handle.not_answering("the stop-point registry").await.into());
    };
    if p.export == Some(true) {
        let (text, calls) = export::export(&listing);
        let data = StopPoints {
            export: Some(calls),
            ..StopPoints::default()
        };
        return Ok(tools::data(text, &data));
    }
    let ring = handle.events().ring();
    let (text, data) = render::listing(&listing, &ring);
    Ok(tools::data(text, &data))
}

async fn clear(ctx: Ctx, call: Call<IdParams>) -> Reply {
    let p = call.params?;
    let handle = ctx.live(p.session_id.as_deref())?;
    let r = handle
        .clear_stop(p.id.trim())
        .await
        .map_err(ToolError::from)?;
    let mut text = if r.members > 0 {
        format!(
            "Cleared {} and its {} members ({} JDWP requests).",
            r.id, r.members, r.requests_cleared
        )
    } else {
        format!("Cleared {} ({} JDWP requests).", r.id, r.requests_cleared)
    };
    let note = r.note.as_ref().map(render::arm_note);
    if let Some(n) = &note {
        text.push_str(&format!("\nNote: {n}"));
    }
    Ok(tools::text(text))
}

async fn toggle(ctx: Ctx, call: Call<ToggleParams>) -> Reply {
    let p = call.params?;
    let handle = ctx.live(p.session_id.as_deref())?;
    let r = handle
        .toggle_stop(p.id.trim(), p.enabled)
        .await
        .map_err(ToolError::from)?;
    let mut text = format!(
        "{} {}.",
        r.id,
        if r.enabled { "enabled" } else { "disabled" }
    );
    if let Some(pv) = &r.point {
        text.push_str(&format!("\n{}", describe_point(pv, false)));
    }
    let notes = render::arm_notes(&r.notes);
    for n in &notes {
        text.push_str(&format!("\nNote: {n}"));
    }
    Ok(tools::text(text))
}

async fn update(ctx: Ctx, call: Call<UpdateParams>) -> Reply {
    let (tool, p) = (call.tool, call.params?);
    let handle = ctx.live(p.session_id.as_deref())?;
    let Some(mut spec) = handle.stop_points().spec(p.id.trim()).await else {
        return Err(refuse(
            "UNKNOWN_STOP_POINT",
            format!("there is no stop point {:?}", p.id),
            "debug_list_stop_points shows the ids (a family is changed member by member)",
        ));
    };
    let mut notes = Vec::new();
    spec.mode = updated_mode(tool, &p, &spec, &mut notes)?;
    update_trace_exprs(tool, &p, &mut spec.mode, &mut notes)?;
    update_filters(tool, &p, &mut spec)?;
    if p.calls.is_some() {
        spec.filters.calls = super::args::calls_arg(p.calls);
    }
    super::args::calls_allowed(&spec.filters, &spec.mode)?;
    count_with_condition(&spec.filters, &mut notes);
    let r = handle
        .update_stop(p.id.trim(), spec)
        .await
        .map_err(ToolError::from)?;
    let mut text = format!("Updated {}.", p.id.trim());
    if let Some(pv) = &r.point {
        text.push_str(&format!("\n{}", describe_point(pv, false)));
    }
    let theirs = render::arm_notes(&r.notes);
    for n in notes.iter().chain(theirs.iter()) {
        text.push_str(&format!("\n  {n}"));
    }
    Ok(tools::text(text))
}

/// The stop point's mode after the update: traced or suspending as
/// `trace` says (unchanged when omitted), with the trace settings given
/// replacing the current ones one by one.
fn updated_mode(
    tool: &str,
    p: &UpdateParams,
    spec: &StopPointSpec,
    notes: &mut Vec<String>,
) -> Result<Mode, ToolError> {
    let trace_args = p.trace_frames.is_some()
        || p.trace_locals.is_some()
        || p.trace_max_hits.is_some()
        || p.trace_max_length.is_some();
    let mut t = match (&spec.mode, p.trace) {
        (_, Some(false)) => None,
        (Mode::Trace(t), _) => Some(t.clone()),
        (Mode::Suspend, Some(true)) => Some(TraceSpec::default()),
        (Mode::Suspend, None) => None,
    };
    if trace_args && t.is_none() {
        return Err(ToolError::bad_argument(
            tool,
            "trace settings need a traced stop point (pass trace:true)",
        ));
    }
    if let Some(t) = &mut t {
        update_trace_settings(tool, p, t, notes)?;
    }
    if let (Target::MethodExit(_) | Target::Monitor(_), None) = (&spec.target, &t)
        && p.trace == Some(false)
    {
        return Err(refuse(
            "REFUSED",
            "method-exit and monitor stops stay traced through an update",
            "clear it and arm a suspending one with the set tool (which checks what makes that safe)",
        ));
    }
    Ok(match t {
        Some(t) => Mode::Trace(t),
        None => Mode::Suspend,
    })
}

/// Replaces the trace settings that were given, checked and defaulted the
/// way the set tools check them.
fn update_trace_settings(
    tool: &str,
    p: &UpdateParams,
    t: &mut TraceSpec,
    notes: &mut Vec<String>,
) -> Result<(), ToolError> {
    let common = Common {
        hit_count: None,
        thread_id: None,
        trace: Some(true),
        trace_frames: p.trace_frames,
        trace_locals: p.trace_locals.clone(),
        trace_max_hits: p.trace_max_hits,
        trace_max_length: p.trace_max_length,
        max_overhead: None,
        calls: None,
        engine: None,
    };
    let (Mode::Trace(fresh), _) = mode_and_filters(tool, &common, true, notes)? else {
        return Err(ToolError::new("INTERNAL", "trace settings"));
    };
    if p.trace_frames.is_some() {
        t.frames = fresh.frames;
    }
    if p.trace_locals.is_some() {
        t.locals = fresh.locals;
    }
    if p.trace_max_hits.is_some() {
        t.max_hits = fresh.max_hits;
    }
    if p.trace_max_length.is_some() {
        t.max_length = fresh.max_length;
    }
    Ok(())
}

/// Replaces the trace expressions when `trace_expr` is given (`[]`
/// removes them); they need a traced stop point.
fn update_trace_exprs(
    tool: &str,
    p: &UpdateParams,
    mode: &mut Mode,
    notes: &mut Vec<String>,
) -> Result<(), ToolError> {
    let Some(exprs) = &p.trace_expr else {
        return Ok(());
    };
    if !matches!(mode, Mode::Trace(_)) {
        return Err(ToolError::bad_argument(
            tool,
            "trace_expr needs a traced stop point (pass trace:true)",
        ));
    }
    expressions(tool, &None, &Some(exprs.clone()))?;
    if let Mode::Trace(t) = mode {
        t.exprs.clear();
    }
    with_exprs(tool, mode, &Some(exprs.clone()), notes)
}

/// Applies the filter changes: hit_count (0 removes), thread_id,
/// instance_id and condition (`""` removes each).
fn update_filters(tool: &str, p: &UpdateParams, spec: &mut StopPointSpec) -> Result<(), ToolError> {
    match p.hit_count {
        Some(0) => spec.filters.hit_count = None,
        Some(n) => spec.filters.hit_count = Some(n),
        None => {}
    }
    match p.thread_id.as_deref() {
        Some("") => spec.filters.thread = None,
        Some(_) => spec.filters.thread = id_arg(tool, "thread_id", &p.thread_id)?,
        None => {}
    }
    match p.instance_id.as_deref() {
        Some("") => spec.filters.instance = None,
        Some(_) => spec.filters.instance = id_arg(tool, "instance_id", &p.instance_id)?,
        None => {}
    }
    if p.max_overhead.is_some() {
        spec.filters.overhead_pct = super::args::overhead_arg(tool, p.max_overhead)?;
    }
    match p.condition.as_deref() {
        Some("") => spec.filters.condition = None,
        Some(c) => {
            if matches!(spec.target, Target::Monitor(_)) {
                return Err(refuse(
                    "REFUSED",
                    "monitor stops take no condition: a thread blocked on a monitor must not run code for us",
                    "use min_duration_ms or thread_id",
                ));
            }
            expressions(tool, &p.condition, &None)?;
            spec.filters.condition = Some(c.to_string());
        }
        None => {}
    }
    Ok(())
}

async fn panic(ctx: Ctx, call: Call<SessionParams>) -> Reply {
    let p = call.params?;
    let handle = ctx.live(p.session_id.as_deref())?;
    let cleared = handle.clear_all_stops().await;
    // A panic releases the threads debug_thread holds too: resuming
    // around them would report "all threads run" over a held one.
    let held = released_names(&handle).await;
    let report = handle.resume_all().await?;
    let mut text = format!(
        "PANIC: cleared {cleared} stop points; {} resume{} sent.",
        report.resumes,
        if report.resumes == 1 { "" } else { "s" }
    );
    if !held.is_empty() {
        text.push_str(&format!(
            "\nReleased {} thread{} debug_thread held: {}.",
            held.len(),
            if held.len() == 1 { "" } else { "s" },
            held.join(", ")
        ));
    }
    if report.still_held == 0 {
        text.push_str(&format!(
            "\nVerified: {}.",
            crate::mcp::render::threads_run(report.total, &handle.invoking(), false)
        ));
    } else if report.resuspended_by_event {
        text.push_str(&format!(
            "\nWARNING: {} threads were suspended again by an event that is not a stop point of ours (a step or another debugger's request); debug_list_threads shows them.",
            report.still_held
        ));
    } else {
        text.push_str(&format!(
            "\nWARNING: {} of {} threads are still suspended after {} resumes; debug_disconnect releases everything.",
            report.still_held, report.total, report.resumes
        ));
    }
    if let Some(note) = crate::mcp::tools::code::installed_note(&handle) {
        text.push_str(&format!("\n{note}"));
    }
    Ok(tools::text(text))
}

/// Releases the threads the agent holds with debug_thread and
/// names them, as `@0x… "name"` (the id alone when the name cannot be
/// read).
async fn released_names(handle: &SessionHandle) -> Vec<String> {
    let held = handle.release_agent_holds().await;
    let threads: Vec<_> = held.iter().map(|h| h.thread).collect();
    let names = handle.thread_names(&threads).await;
    threads
        .iter()
        .zip(names)
        .map(|(t, name)| match name {
            Some(n) => format!("@0x{:x} {n:?}", t.0),
            None => format!("@0x{:x}", t.0),
        })
        .collect()
}
